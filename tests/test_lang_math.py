"""math.* functions and gpu.fma/cbrt/popc/clz/ffs/brev on random inputs, against Python's
math and NumPy. The CPU backend calls the C library's libm (the one CPython's math uses), so
float64 results are compared tightly; float32 calls the `f` variants (sinf...), which glibc
and libdevice keep within a few ulp: compared at rtol 2e-6 (~16 ulp of float32) plus an atol
of 1e-6 for results near zero. The PTX of every kernel goes through ptxas (conftest)."""
import math

import numpy as np
import pytest

import gpujit as gpu
from conftest import assert_same, launch1d, make_binary, make_unary, poisoned

# name: (low, high) of the random inputs, inside the function's domain
UNARY = {
    "sin": (-10, 10), "cos": (-10, 10), "tan": (-1.5, 1.5), "asin": (-1, 1), "acos": (-1, 1),
    "atan": (-10, 10), "sinh": (-5, 5), "cosh": (-5, 5), "tanh": (-5, 5), "asinh": (-10, 10),
    "acosh": (1, 10), "atanh": (-0.99, 0.99), "exp": (-10, 10), "exp2": (-10, 10),
    "expm1": (-5, 5), "log": (0.01, 100), "log2": (0.01, 100), "log10": (0.01, 100),
    "log1p": (-0.9, 10), "erf": (-3, 3), "erfc": (-3, 3), "gamma": (0.1, 8), "lgamma": (0.1, 8),
    "cbrt": (-10, 10), "sqrt": (0, 100), "fabs": (-10, 10),
}
BINARY = {"pow": ((0.1, 10), (-3, 3)), "atan2": ((-10, 10), (-10, 10)), "hypot": ((-10, 10), (-10, 10)),
          "fmod": ((-10, 10), (0.5, 5)), "copysign": ((-10, 10), (-10, 10))}


# CPython computes these itself rather than calling libm: a few ulp apart
OWN_IMPL = {"gamma", "lgamma", "erf", "erfc"}


def check(got, want, dtype, name=""):
    if dtype == np.float32:
        assert_same(got, want.astype(np.float32), rtol=2e-6, atol=1e-6)
    else:
        assert_same(got, want, rtol=1e-13 if name in OWN_IMPL else 1e-15, atol=1e-14 if name in OWN_IMPL else 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(rng, name, dtype):
    lo, hi = UNARY[name]
    x = rng.uniform(lo, hi, 300).astype(dtype)
    out = poisoned(x.shape, dtype)
    launch1d(make_unary(getattr(math, name)), x.size, out, x)
    want = np.array([getattr(math, name)(float(v)) for v in x])
    check(out, want, dtype, name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(rng, name, dtype):
    (lo1, hi1), (lo2, hi2) = BINARY[name]
    x = rng.uniform(lo1, hi1, 300).astype(dtype)
    y = (rng.uniform(lo2, hi2, 300) * (rng.choice([-1, 1], 300) if name == "fmod" else 1)).astype(dtype)
    out = poisoned(x.shape, dtype)
    launch1d(make_binary(getattr(math, name)), x.size, out, x, y)
    want = np.array([getattr(math, name)(float(a), float(b)) for a, b in zip(x, y)])
    check(out, want, dtype)


def test_int_arguments_give_float64(rng):
    x = rng.integers(1, 50, 100)
    out = poisoned(x.shape, np.float64)
    launch1d(make_unary(math.log), x.size, out, x)
    assert_same(out, np.log(x.astype(np.float64)))


@gpu.jit
def k_classify(out, x):
    i = gpu.grid(1)
    if i < x.size:
        out[i, 0] = math.isnan(x[i])
        out[i, 1] = math.isinf(x[i])
        out[i, 2] = math.isfinite(x[i])
        out[i, 3] = math.trunc(x[i]) if math.isfinite(x[i]) else 0
        out[i, 4] = math.isfinite(i) + 2 * math.isnan(i) + 4 * math.isinf(i)  # ints: finite


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_isnan_isinf_isfinite_trunc(rng, dtype):
    x = rng.uniform(-1e6, 1e6, 200).astype(dtype)
    x[rng.choice(200, 40, replace=False)] = rng.choice([np.nan, np.inf, -np.inf], 40)
    out = poisoned((200, 5), np.int64)
    launch1d(k_classify, 200, out, x)
    assert_same(out[:, 0], np.isnan(x))
    assert_same(out[:, 1], np.isinf(x))
    assert_same(out[:, 2], np.isfinite(x))
    assert_same(out[:, 3], np.where(np.isfinite(x), np.trunc(np.nan_to_num(x)), 0).astype(np.int64))
    assert (out[:, 4] == 1).all()


@gpu.jit
def k_angles(out, x):
    i = gpu.grid(1)
    if i < x.size:
        out[i, 0] = math.radians(x[i])
        out[i, 1] = math.degrees(x[i])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_radians_degrees(rng, dtype):
    x = rng.uniform(-400, 400, 100).astype(dtype)
    out = poisoned((100, 2), dtype)
    launch1d(k_angles, 100, out, x)
    want = np.array([[math.radians(float(v)), math.degrees(float(v))] for v in x])
    check(out, want, dtype)


def test_fastmath_picks_libdevice_fast_variants_for_float32():
    def f(out, x):
        i = gpu.grid(1)
        out[i] = math.sin(x[i]) + math.exp(x[i]) + math.log(x[i]) + x[i] ** x[i]
    sig = "void(float32[::1], float32[::1])"
    exact, _ = gpu.compile_ptx(f, sig)
    assert "sin.approx" not in exact
    fast, _ = gpu.compile_ptx(f, sig, fastmath=True)   # __nv_fast_sinf, __nv_fast_expf, ...
    assert "sin.approx" in fast and "ex2.approx" in fast and "lg2.approx" in fast
    exact64, _ = gpu.compile_ptx(f, "void(float64[::1], float64[::1])", fastmath=True)
    assert "sin.approx" not in exact64                  # float64 has no fast variants


def test_sqrt_stays_exact_under_fastmath_off():
    def f(out, x):
        out[0] = math.sqrt(x[0])
    ptx, _ = gpu.compile_ptx(f, "void(float32[::1], float32[::1])")
    assert "sqrt.rn.f32" in ptx and "sqrt.approx" not in ptx


@gpu.jit
def k_fma_cbrt(out, a, b, c):
    i = gpu.grid(1)
    if i < a.size:
        out[i, 0] = gpu.fma(a[i], b[i], c[i])
        out[i, 1] = gpu.cbrt(a[i])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fma_cbrt(rng, dtype):
    a, b, c = (rng.uniform(-10, 10, 200).astype(dtype) for _ in range(3))
    out = poisoned((200, 2), dtype)
    launch1d(k_fma_cbrt, 200, out, a, b, c)
    # fma rounds once: exact against a float64 product for float32 (the product fits in 48 bits)
    if dtype == np.float32:
        assert_same(out[:, 0], (a.astype(np.float64) * b + c).astype(np.float32), rtol=0)
    else:
        assert_same(out[:, 0], a * b + c, rtol=1e-14, atol=1e-13)
    check(out[:, 1], np.cbrt(a.astype(np.float64)), dtype)


@gpu.jit
def k_bit_types(out, x32, x64, u8):
    out[0] = gpu.popc(x32[0])     # int32
    out[1] = gpu.ffs(x64[0])      # uint32
    out[2] = gpu.brev(x32[0])     # uint32
    out[3] = gpu.brev(x64[0])     # uint64
    out[4] = gpu.clz(u8[0])       # uint8: counts within 8 bits
    out[5] = gpu.popc(u8[0])


def test_bit_widths():
    out = poisoned(6, np.int64)
    k_bit_types[1, 1](out, np.array([-1], np.int32), np.array([1 << 40], np.int64), np.array([3], np.uint8))
    assert_same(out, np.array([32, 41, 0xFFFFFFFF, 1 << 23, 6, 2], np.int64))


@gpu.jit
def k_bits(out, x):
    i = gpu.grid(1)
    if i < x.size:
        out[i, 0] = gpu.popc(x[i])
        out[i, 1] = gpu.clz(x[i])
        out[i, 2] = gpu.ffs(x[i])
        out[i, 3] = gpu.brev(x[i])


def ref_bits(v, bits):
    u = int(v) & ((1 << bits) - 1)
    popc = bin(u).count("1")
    clz = bits - u.bit_length()
    ffs = (u & -u).bit_length()
    bw = 64 if bits == 64 else 32
    brev = int(format(u & ((1 << bw) - 1), "0%db" % bw)[::-1], 2)
    return popc, clz, ffs, brev


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_popc_clz_ffs_brev(rng, dtype):
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, 200, dtype=dtype, endpoint=True)
    x[:3] = [0, 1, info.max]
    out = poisoned((200, 4), np.uint64)
    launch1d(k_bits, 200, out, x)
    bits = np.dtype(dtype).itemsize * 8
    want = np.array([ref_bits(v, bits) for v in x], dtype=np.uint64)
    assert_same(out, want)


def test_math_errors():
    def two(out, x):
        out[0] = math.sin(x[0], x[0])
    with pytest.raises(gpu.TypingError, match="takes one number"):
        gpu.compile_ptx(two, "void(float64[::1], float64[::1])")

    def bits_of_float(out, x):
        out[0] = gpu.popc(x[0])
    with pytest.raises(gpu.TypingError, match="takes one integer"):
        gpu.compile_ptx(bits_of_float, "void(float64[::1], float64[::1])")
