"""float16 (NumPy's half): arrays and scalars as kernel arguments, arithmetic,
comparisons, casts and promotion, checked bit for bit against NumPy's float16."""
import operator

import numpy as np
import pytest

import gpujit as gpu
from gpujit import types
from conftest import launch1d, poisoned


def halves(rng, n, lo=-100.0, hi=100.0):
    """Random float16 values, with a few special ones (zeros, subnormals, the extremes)."""
    edge = np.array([0.0, -0.0, 1.0, -1.0, 6.1e-5, -6.0e-8, 65504.0, -65504.0, 0.5, 2048.0], np.float16)
    return np.concatenate([edge, rng.uniform(lo, hi, n).astype(np.float16)])


def same_bits(got, want):
    """Equal as float16 bit patterns (any NaN matches any NaN)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    nan = np.isnan(got) & np.isnan(want)
    bad = (got.view(np.uint16) != want.view(np.uint16)) & ~nan
    assert not bad.any(), list(zip(got[bad][:5], want[bad][:5]))


def test_types_exported():
    assert gpu.float16 is gpu.f2 is types.float16 is types.f2
    assert np.dtype(gpu.float16) == np.float16
    assert gpu.float16(1.5) == np.float16(1.5) and type(gpu.float16(1.5)) is np.float16
    assert str(gpu.float16[::1]) == "float16[::1]"


BINOPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod]


@pytest.mark.parametrize("op", BINOPS, ids=lambda o: o.__name__)
def test_binary_bit_exact(rng, op):
    @gpu.jit
    def k(out, a, b):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = op(a[i], b[i])
    a, b = halves(rng, 500), halves(rng, 500, -8.0, 8.0)
    b[b == 0] = np.float16(0.25)
    out = poisoned(a.size, np.float16)
    launch1d(k, a.size, out, a, b)
    with np.errstate(all="ignore"):
        same_bits(out, op(a, b))


@pytest.mark.parametrize("op", [operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge],
                         ids=lambda o: o.__name__)
def test_compare(rng, op):
    @gpu.jit("void(b1[:], f2[:], f2[:])")
    def k(out, a, b):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = op(a[i], b[i])
    a = halves(rng, 300, -4, 4)
    b = a.copy()
    b[::2] = halves(rng, 300, -4, 4)[::2]
    a[3] = np.nan
    out = poisoned(a.size, np.bool_)
    launch1d(k, a.size, out, a, b)
    np.testing.assert_array_equal(out, op(a, b))


def test_scalar_args_and_unary(rng):
    @gpu.jit("void(f2[:], f2, f2)")
    def k(out, x, y):
        out[0] = x + y
        out[1] = -x
        out[2] = abs(y)
        out[3] = x * y
        out[4] = x ** 2
        out[5] = x ** y
        out[6] = 1 if x else 0
    for _ in range(20):
        x, y = np.float16(rng.uniform(0.1, 9)), np.float16(rng.uniform(-3, 3))
        out = poisoned(7, np.float16)
        k[1, 1](out, x, y)
        want = np.array([x + y, -x, abs(y), x * y, x * x, x ** y, 1], np.float16)
        same_bits(out, want)


def test_python_float_rounds_once(rng):
    """A Python float passed to a float16 parameter rounds once, to nearest even, as np.float16()."""
    @gpu.jit("void(f2[:], f2)")
    def k(out, x):
        out[0] = x
    vals = list(rng.uniform(-70000, 70000, 200)) + list(rng.uniform(-1e-4, 1e-4, 200)) + [
        1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11, 2.0 ** -25, 2.0 ** -25 * 1.0000001, 2.0 ** -24 * 1.5, 65520.0,
        65519.99, 1e300, float("inf"), -0.0]
    for v in vals:
        out = poisoned(1, np.float16)
        k[1, 1](out, v)
        with np.errstate(over="ignore"):
            same_bits(out, np.array([v]).astype(np.float16))


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                np.uint64, np.float32, np.float64])
def test_casts(rng, dt):
    @gpu.jit
    def to_half(out, x):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = np.float16(x[i])

    @gpu.jit
    def from_half(out, x):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = x[i]
    kind = np.dtype(dt).kind
    if kind == "f":
        src = rng.uniform(-70000, 70000, 300).astype(dt)
        src[:3] = [2.0 ** -25 * 1.25, 1.0 + 2.0 ** -11, 65519.0]
        if dt == np.float64:
            # just off the halfway points between float16 neighbours: rounding through
            # float32 with round-to-nearest would land on the halfway point and round wrongly
            h = halves(rng, 100, -1000, 1000)
            with np.errstate(over="ignore"):
                half_ulp = np.spacing(h).astype(np.float64) / 2
            near = np.concatenate([h + half_ulp * (1 + 2.0 ** -40), h + half_ulp * (1 - 2.0 ** -40),
                                   h - half_ulp * (1 + 2.0 ** -40), h + half_ulp])
            src = np.concatenate([src, near])
    else:
        info = np.iinfo(dt)
        src = rng.integers(max(info.min, -70000), min(info.max, 70000), 300, endpoint=True).astype(dt)
    out = poisoned(src.size, np.float16)
    launch1d(to_half, src.size, out, src)
    with np.errstate(all="ignore"):
        same_bits(out, src.astype(np.float16))
    h = halves(rng, 300, -100, 100) if kind != "u" else np.abs(halves(rng, 300, 0, 250))
    if kind == "i" or kind == "u":
        info = np.iinfo(dt)
        h = h[(h.astype(np.float64) >= info.min) & (h.astype(np.float64) <= info.max)]
    back = poisoned(h.size, dt)
    launch1d(from_half, h.size, back, h)
    np.testing.assert_array_equal(back, h.astype(dt))


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.int32, np.int64, np.float32, np.float64])
def test_promotion(rng, dt):
    """float16 with another type gives NumPy's result_type (float16 + int8 -> float16, + int16 -> float32)."""
    @gpu.jit
    def k(out, a, b):
        out[0] = a + b
        out[1] = a * b
    a = np.float16(rng.uniform(0, 1))
    b = (np.array([rng.uniform(0, 100)])).astype(dt)[0]
    res = np.result_type(np.float16, dt)
    out = poisoned(2, res)
    k[1, 1](out, a, b)
    np.testing.assert_array_equal(out, np.array([a + b, a * b], res))
    ptx = gpu.compile_ptx(k.py_func, "void(%s[:], float16, %s)" % (res.name, np.dtype(dt).name))[0]
    if res == np.float16:
        assert "add.f16" in ptx or "fma.rn.f16" in ptx


def test_half_array_2d_and_scalar_return(rng):
    @gpu.jit(device=True)
    def twice(x):
        return x * np.float16(2)

    @gpu.jit
    def k(out, a):
        i, j = gpu.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            out[i, j] = twice(a[i, j]) + types.float16(0.5)
    a = rng.uniform(-10, 10, (7, 9)).astype(np.float16)
    out = poisoned(a.shape, np.float16)
    k[(1, 1), (8, 16)](out, a)
    same_bits(out, a * np.float16(2) + np.float16(0.5))


def test_device_array_and_dlpack():
    d = gpu.to_device(np.arange(6, dtype=np.float16))
    assert d.dtype == np.float16
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(6, dtype=np.float16))


# -- gpu.fp16.*: against NumPy's float16 (each computed in float32 and rounded once) ------------
FP16_BINARY = {"hadd": np.add, "hsub": np.subtract, "hmul": np.multiply, "hdiv": np.divide, "hmax": np.fmax,
               "hmin": np.fmin}
FP16_UNARY = {"hneg": np.negative, "habs": np.abs, "hceil": np.ceil, "hfloor": np.floor, "htrunc": np.trunc,
              "hrint": np.rint, "hsqrt": np.sqrt, "hrcp": np.reciprocal, "hexp": np.exp, "hexp2": np.exp2,
              "hexp10": lambda x: np.power(np.float32(10), x.astype(np.float32)).astype(np.float16),
              "hlog": np.log, "hlog2": np.log2, "hlog10": np.log10, "hsin": np.sin, "hcos": np.cos,
              "htanh": np.tanh, "htanh_approx": np.tanh,
              "hrsqrt": lambda x: (np.float32(1) / np.sqrt(x.astype(np.float32))).astype(np.float16)}
FP16_EXACT = {"hneg", "habs", "hceil", "hfloor", "htrunc", "hrint", "hsqrt", "hrcp"}
FP16_CMP = {"heq": np.equal, "hgt": np.greater, "hge": np.greater_equal, "hlt": np.less, "hle": np.less_equal,
            "hne": lambda a, b: (a != b) & ~np.isnan(a) & ~np.isnan(b)}


@pytest.mark.parametrize("name", sorted(FP16_BINARY) + sorted(FP16_CMP))
def test_fp16_binary(rng, name):
    fn = getattr(gpu.fp16, name)

    @gpu.jit
    def k(out, a, b):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = fn(a[i], b[i])
    a, b = halves(rng, 300, -50, 50), halves(rng, 300, -6, 6)
    b[b == 0] = np.float16(3)
    a[5], b[6], a[7], b[7] = np.nan, np.nan, np.nan, np.nan
    b[9] = a[9]
    ref = {**FP16_BINARY, **FP16_CMP}[name]
    out = poisoned(a.size, np.bool_ if name in FP16_CMP else np.float16)
    launch1d(k, a.size, out, a, b)
    with np.errstate(all="ignore"):
        want = ref(a, b)
    if name in FP16_CMP:
        np.testing.assert_array_equal(out, want)
    else:
        same_bits(out, want)


@pytest.mark.parametrize("name", sorted(FP16_UNARY))
def test_fp16_unary(rng, name):
    fn = getattr(gpu.fp16, name)

    @gpu.jit("void(f2[::1], f2[::1])")
    def k(out, x):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = fn(x[i])
    lo, hi = {"hexp": (-9, 9), "hexp2": (-14, 14), "hexp10": (-4, 4)}.get(name, (-100, 100))
    x = halves(rng, 300, lo, hi)
    if name.startswith(("hlog", "hsqrt", "hrsqrt")):
        x = np.abs(x)
    out = poisoned(x.size, np.float16)
    launch1d(k, x.size, out, x)
    with np.errstate(all="ignore"):
        want = FP16_UNARY[name](x)
    if name in FP16_EXACT:
        same_bits(out, want)
    else:
        # float32 libm results (the C library's, or libdevice's) may differ from NumPy's own
        # float32 code by an ulp, and so, rarely, round to the neighbouring float16
        assert not (np.isnan(out) ^ np.isnan(want)).any()
        ok = ~np.isnan(want)
        got, want = out[ok].astype(np.float64), want[ok]
        with np.errstate(invalid="ignore"):
            assert ((got == want) | (np.abs(got - want) <= np.spacing(np.abs(want)))).all()


def test_fp16_fma_rounds_once(rng):
    @gpu.jit
    def k(out, a, b, c):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = gpu.fp16.hfma(a[i], b[i], c[i])
    a, b, c = halves(rng, 2000, -300, 300), halves(rng, 2000, -300, 300), halves(rng, 2000, -3000, 3000)
    out = poisoned(a.size, np.float16)
    launch1d(k, a.size, out, a, b, c)
    exact = a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)  # exact: 22 + 11 bits
    with np.errstate(over="ignore"):
        same_bits(out, exact.astype(np.float16))


def test_fp16_takes_other_numbers_and_checks_arity():
    @gpu.jit("void(f2[:], f2)")
    def k(out, x):
        out[0] = gpu.fp16.hmul(x, 2)
        out[1] = gpu.fp16.hadd(x, 2.5)
    out = poisoned(2, np.float16)
    k[1, 1](out, np.float16(321))
    same_bits(out, np.array([642, 323.5], np.float16))

    def bad(out, x):
        out[0] = gpu.fp16.hadd(x)
    with pytest.raises(gpu.TypingError, match=r"hadd\(\) takes 2 float16 arguments, got 1"):
        gpu.jit("void(f2[:], f2)")(bad)
    with pytest.raises(RuntimeError):
        gpu.fp16.hadd(1, 2)


MATH_HALF = ["sin", "cos", "ceil", "floor", "sqrt", "log", "log2", "log10", "exp", "exp2", "fabs", "trunc"]


@pytest.mark.parametrize("name", MATH_HALF)
def test_math_keeps_float16(rng, name):
    """numba.cuda's float16 overloads of math functions: float16 in, float16 out, computed
    in float32 and rounded once (math.floor/ceil/trunc of a float16 stay float16)."""
    import math
    fn = getattr(math, name)

    @gpu.jit
    def k(out, x):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = fn(x[i]) + np.float16(0)   # a float16 + float16 stays float16 only if fn's result is one
    x = halves(rng, 200, 0.01, 10) if name.startswith(("log", "sqrt")) else halves(rng, 200, -10, 10)
    if name.startswith(("log", "sqrt")):
        x = np.abs(x)
    out = poisoned(x.size, np.float16)
    launch1d(k, x.size, out, x)
    ref = {"fabs": np.fabs, "ceil": np.ceil, "floor": np.floor, "trunc": np.trunc}.get(name, getattr(np, name))
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float32)).astype(np.float16)
    ok = ~np.isnan(want)
    got, want = out[ok].astype(np.float64), want[ok]
    with np.errstate(invalid="ignore"):
        assert ((got == want) | (np.abs(got - want) <= np.spacing(np.abs(want)))).all()
    ptx = gpu.compile_ptx(k.py_func, "void(float16[::1], float16[::1])")[0]
    assert "cvt.f64.f16" not in ptx and "cvt.rn.f16.f64" not in ptx    # no detour through float64


def test_native_ptx_spelling_and_values(rng):
    """abs, 8-bit integer -> float16 and add/sub/mul are single f16 instructions on the GPU
    (abs.f16, cvt.rn.f16.s8, add.f16, ...) and give NumPy's float16 results bit for bit."""
    @gpu.jit
    def k(out, x, i8, u8):
        i = gpu.grid(1)
        if i < x.size:
            out[0, i] = abs(x[i])
            out[1, i] = gpu.fp16.habs(x[i])
            out[2, i] = np.float16(i8[i]) * np.float16(0.5)
            out[3, i] = np.float16(u8[i]) - x[i]
            out[4, i] = x[i] + np.float16(i8[i])
    x = halves(rng, 246)
    i8 = np.arange(-128, 128).astype(np.int8)
    u8 = np.arange(256).astype(np.uint8)
    rng.shuffle(i8)
    out = poisoned((5, 256), np.float16)
    launch1d(k, 256, out, x, i8, u8)
    half = np.float16(0.5)
    same_bits(out[0], np.abs(x))
    same_bits(out[1], np.abs(x))
    same_bits(out[2], i8.astype(np.float16) * half)
    same_bits(out[3], u8.astype(np.float16) - x)
    same_bits(out[4], x + i8.astype(np.float16))
    ptx = gpu.compile_ptx(k.py_func, "void(float16[:, ::1], float16[::1], int8[::1], uint8[::1])")[0]
    for s in ("abs.f16", "cvt.rn.f16.s8", "cvt.rn.f16.u8", "sub.f16", "add.f16", "mul.f16"):
        assert s in ptx, s


def test_mul_feeding_add_keeps_rounding(rng):
    """A half multiply whose product feeds an add stays mul.rn.f16: ptxas may fuse an
    unrounded mul.f16 with an add.f16 into one fma, which would round once, not twice."""
    @gpu.jit
    def k(out, a, b, c):
        i = gpu.grid(1)
        if i < a.size:
            out[i] = gpu.fp16.hadd(gpu.fp16.hmul(a[i], b[i]), c[i])
    a, b, c = (halves(rng, 90, -10, 10) for _ in range(3))
    out = poisoned(a.size, np.float16)
    launch1d(k, a.size, out, a, b, c)
    with np.errstate(over="ignore"):
        same_bits(out, a * b + c)
    ptx = gpu.compile_ptx(k.py_func, "void(float16[::1], float16[::1], float16[::1], float16[::1])")[0]
    assert "mul.rn.f16" in ptx and "mul.f16" not in ptx and "fma" not in ptx
