"""Complex numbers: complex64/complex128 arrays and scalars, arithmetic, abs/conjugate/real/imag,
complex(), numba's promotion, and cmath -- against NumPy and CPython's cmath on random inputs.
Outputs start as NaN+NaNj so an unwritten element fails. complex128 results are compared at
rtol 1e-12 (gpujit follows CPython's formulas; only FMA contraction and libm may differ by an
ulp or two); complex64 at 1e-5. The PTX of every kernel goes through ptxas (conftest)."""
import cmath
import math

import numpy as np
import pytest

import gpujit as gpu
from conftest import launch1d

G_COMPLEX = 1.5 - 2j


def cpoisoned(shape, dtype):
    return np.full(shape, complex(np.nan, np.nan), dtype)


def crandom(rng, n, dtype=np.complex128, scale=3.0):
    return (rng.uniform(-scale, scale, n) + 1j * rng.uniform(-scale, scale, n)).astype(dtype)


def assert_close(got, want, rtol):
    got, want = np.asarray(got, np.complex128), np.asarray(want, np.complex128)
    assert got.shape == want.shape
    assert not np.isnan(got).any(), "unwritten (NaN) outputs"
    # relative to the magnitude: a tiny part of a large result is not held to its own digits
    err = np.abs(got - want) / np.maximum(np.abs(want), 1e-300)
    assert (err <= rtol).all(), (got[err > rtol][:5], want[err > rtol][:5])


RTOL = {np.complex64: 1e-5, np.complex128: 1e-12}


# == arithmetic ====================================================================================
@gpu.jit
def k_arith(out, a, b):
    i = gpu.grid(1)
    if i < a.shape[0]:
        z = a[i]
        w = b[i]
        out[i, 0] = z + w
        out[i, 1] = z - w
        out[i, 2] = z * w
        out[i, 3] = z / w
        out[i, 4] = -z
        out[i, 5] = +z
        out[i, 6] = z.conjugate()
        out[i, 7] = abs(z)
        out[i, 8] = z.real
        out[i, 9] = z.imag
        out[i, 10] = complex(z.imag, z.real)
        out[i, 11] = z == w
        out[i, 12] = z != w
        out[i, 13] = z == z


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_arithmetic(rng, dt):
    n = 200
    a, b = crandom(rng, n, dt), crandom(rng, n, dt)
    b[:3] = a[:3]
    out = cpoisoned((n, 14), dt)
    launch1d(k_arith, n, out, a, b)
    want = np.stack([a + b, a - b, a * b, a / b, -a, a, np.conj(a), np.abs(a), a.real, a.imag,
                     a.imag + 1j * a.real, a == b, a != b, np.ones(n)], axis=1).astype(dt)
    assert_close(out, want, RTOL[dt])


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_abs_real_imag_into_float_arrays(rng, dt):
    @gpu.jit
    def k(out, a):
        i = gpu.grid(1)
        if i < a.size:
            out[i, 0] = abs(a[i])
            out[i, 1] = a[i].real
            out[i, 2] = a[i].imag
    n = 100
    a = crandom(rng, n, dt)
    ft = np.float32 if dt == np.complex64 else np.float64
    out = np.full((n, 3), np.nan, ft)
    launch1d(k, n, out, a)
    np.testing.assert_allclose(out, np.stack([np.abs(a), a.real, a.imag], axis=1), rtol=RTOL[dt])


@gpu.jit
def k_pow(out, a, b):
    i = gpu.grid(1)
    if i < a.size:
        z = a[i]
        out[i, 0] = z ** 2
        out[i, 1] = z ** 3
        out[i, 2] = z ** -2
        out[i, 3] = z ** 0
        out[i, 4] = z ** b[i]
        out[i, 5] = z ** 0.5


def test_pow_against_cpython(rng):
    n = 100
    a, b = crandom(rng, n), crandom(rng, n, scale=2.0)
    out = cpoisoned((n, 6), np.complex128)
    launch1d(k_pow, n, out, a, b)
    want = [[complex(z) ** 2, complex(z) ** 3, complex(z) ** -2, complex(z) ** 0, complex(z) ** complex(w),
             complex(z) ** 0.5] for z, w in zip(a, b)]
    assert_close(out, np.array(want), 1e-12)


@gpu.jit
def k_mixed(out, c, f, i64, f32):
    out[0] = c + f
    out[1] = f * c
    out[2] = c - i64
    out[3] = i64 / c
    out[4] = c * f32
    out[5] = 2 * c + 1.5
    out[6] = 1j * f
    out[7] = G_COMPLEX
    out[8] = complex(f)
    out[9] = complex()
    out[10] = complex(i64, f32)
    out[11] = c * 2j


def test_mixed_with_ints_and_floats():
    out = cpoisoned(12, np.complex128)
    c = 1.25 - 0.5j
    k_mixed[1, 1](out, c, 3.0, 7, np.float32(0.5))
    want = [c + 3.0, 3.0 * c, c - 7, 7 / c, c * 0.5, 2 * c + 1.5, 3j, G_COMPLEX, 3 + 0j, 0j, 7 + 0.5j, c * 2j]
    assert_close(out, np.array(want), 1e-15)


# == arrays and scalars as arguments ===============================================================
@gpu.jit
def k_2d(out, a, s):
    i, j = gpu.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[i, j] = a[i, j] * s + a[i, j].conjugate()


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_2d_and_strided(rng, dt):
    a = crandom(rng, 12 * 10, dt).reshape(12, 10)
    for arr in (a, a[::2, ::3], a.T):
        out = cpoisoned(arr.shape, dt)
        s = dt(0.5 + 2j)
        k_2d[(2, 2), (8, 8)](out, arr, s)
        assert_close(out, arr * s + np.conj(arr), RTOL[dt])


@gpu.jit
def k_scalar(out, z, x):
    out[0] = z
    out[1] = z * x


@pytest.mark.parametrize("z", [3 - 4j, np.complex64(1.5 + 2j), np.complex128(-2 + 0.25j)])
def test_complex_scalar_arguments(z):
    out = cpoisoned(2, np.complex128)
    k_scalar[1, 1](out, z, 2.0)
    assert_close(out, np.array([complex(z), complex(z) * 2]), 1e-15)
    sig = [s for s in k_scalar.signatures if "complex" in s.split(",")[1]]
    want = "complex64" if isinstance(z, np.complex64) else "complex128"
    assert any(s.split(",")[1].strip() == want for s in sig), k_scalar.signatures


def test_eager_signature_converts_reals_to_complex():
    @gpu.jit("void(complex64[::1], complex64, complex128)")
    def k(out, a, b):
        out[0] = a
        out[1] = b

    out = cpoisoned(2, np.complex64)
    k[1, 1](out, 3, 2.5)
    assert out.tolist() == [3 + 0j, 2.5 + 0j]
    with pytest.raises(TypeError):
        k[1, 1](out, 3, np.zeros(2, np.complex128))


def test_device_array_of_complex(rng):
    a = crandom(rng, 50)
    d = gpu.to_device(a)
    assert d.dtype == np.complex128
    out = gpu.device_array(50, np.complex128)
    launch1d(k_2d_1d, 50, out, d)
    assert_close(out.copy_to_host(), a * (1 - 1j), 1e-15)
    np.testing.assert_array_equal(d.copy_to_host(), a)
    assert gpu.device_array(3, gpu.complex64).dtype == np.complex64


@gpu.jit
def k_2d_1d(out, a):
    i = gpu.grid(1)
    if i < a.size:
        out[i] = a[i] * (1 - 1j)


@gpu.jit(device=True)
def rotate(z, k):
    return z * 1j ** k


@gpu.jit
def k_device_fn(out, a):
    i = gpu.grid(1)
    if i < a.size:
        out[i] = rotate(a[i], 3)


def test_device_function_takes_and_returns_complex(rng):
    a = crandom(rng, 10)
    out = cpoisoned(10, np.complex128)
    launch1d(k_device_fn, 10, out, a)
    assert_close(out, a * -1j, 1e-15)


@gpu.jit
def k_local_shared(out, a):
    t = gpu.threadIdx.x
    loc = gpu.local.array(2, gpu.complex128)
    sh = gpu.shared.array(32, "complex64")
    loc[0] = a[t]
    loc[1] = loc[0] * 1j
    sh[t] = loc[1]
    gpu.syncthreads()
    out[t] = sh[31 - t] + loc[0]


def test_local_and_shared_complex_arrays(rng):
    a = crandom(rng, 32)
    out = cpoisoned(32, np.complex128)
    k_local_shared[1, 32](out, a)
    want = (a * 1j).astype(np.complex64)[::-1] + a
    assert_close(out, want, 1e-6)


def test_types_exported():
    assert np.dtype(gpu.complex64) == np.complex64 and np.dtype(gpu.complex128) == np.complex128
    assert type(gpu.complex64(1.5)) is np.complex64

    @gpu.jit
    def k(out, x):
        out[0] = gpu.complex64(x)
        out[1] = np.complex128(x)
    out = cpoisoned(2, np.complex128)
    k[1, 1](out, 1.5)
    assert out.tolist() == [1.5, 1.5]


# == promotion =====================================================================================
@gpu.jit
def k_types(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        r = a[i] + b[i]
        out[i] = r


@pytest.mark.parametrize("ta,tb,want", [
    ("float32", "complex64", "complex64"), ("float64", "complex64", "complex128"),
    ("int64", "complex64", "complex128"), ("int16", "complex64", "complex64"),
    ("complex64", "complex128", "complex128"), ("bool", "complex64", "complex128"),
    ("uint8", "complex128", "complex128"), ("complex64", "complex64", "complex64"),
])
def test_promotion_in_inspect_types(ta, tb, want):
    sig = "void(complex128[::1], %s[::1], %s[::1])" % (ta, tb)
    text = k_types.inspect_types_text(sig)
    types = dict(line.split()[-2:] for line in text.splitlines() if line.strip().startswith("line"))
    assert types["r"] == want, text


def test_complex_builtin_is_complex128():
    @gpu.jit
    def k(out, x):
        z = complex(x, x)
        out[0] = z
    text = k.inspect_types_text("void(complex64[::1], float32)")
    assert "z                complex128" in text, text


# == cmath =========================================================================================
# name: input scale; each keeps inputs off the branch cuts' special values
CMATH = {"sqrt": 5, "exp": 3, "log": 5, "log10": 5, "sin": 3, "cos": 3, "tan": 1.5, "sinh": 3,
         "cosh": 3, "tanh": 3, "asin": 2, "acos": 2, "atan": 2, "asinh": 3, "acosh": 3, "atanh": 2}


def make_cmath(f):
    @gpu.jit
    def k(out, a):
        i = gpu.grid(1)
        if i < a.size:
            out[i] = f(a[i])
    return k


CMATH_KERNELS = {name: make_cmath(getattr(cmath, name)) for name in CMATH}


@pytest.mark.parametrize("name", sorted(CMATH))
def test_cmath_against_cpython(rng, name):
    n = 300
    a = crandom(rng, n, scale=CMATH[name])
    a[:4] = [0.5 + 0j, -0.75 + 0j, 0.25j, 1.1 - 0.3j]
    out = cpoisoned(n, np.complex128)
    launch1d(CMATH_KERNELS[name], n, out, a)
    f = getattr(cmath, name)
    assert_close(out, np.array([f(complex(z)) for z in a]), 1e-12)


@pytest.mark.parametrize("name", ["sqrt", "exp", "log", "sin", "atanh"])
def test_cmath_complex64(rng, name):
    n = 100
    a = crandom(rng, n, np.complex64, scale=min(CMATH[name], 2))
    out = cpoisoned(n, np.complex64)
    launch1d(CMATH_KERNELS[name], n, out, a)
    f = getattr(cmath, name)
    assert_close(out, np.array([f(complex(z)) for z in a]), 1e-5)


def test_cmath_of_reals():
    @gpu.jit
    def k(out, x):
        out[0] = cmath.sqrt(x)
        out[1] = cmath.log(x)
        out[2] = cmath.exp(x)
    out = cpoisoned(3, np.complex128)
    k[1, 1](out, -4.0)
    assert_close(out, np.array([cmath.sqrt(-4.0), cmath.log(-4.0), cmath.exp(-4.0)]), 1e-15)


@gpu.jit
def k_cmath_misc(fout, bout, cout, a, b):
    i = gpu.grid(1)
    if i < a.size:
        z = a[i]
        fout[i, 0] = cmath.phase(z)
        r, phi = cmath.polar(z)
        fout[i, 1] = r
        fout[i, 2] = phi
        cout[i, 0] = cmath.rect(r, phi)
        cout[i, 1] = cmath.log(z, b[i])
        cout[i, 2] = cmath.log(z, 10)
        bout[i, 0] = cmath.isnan(z)
        bout[i, 1] = cmath.isinf(z)
        bout[i, 2] = cmath.isfinite(z)


def test_phase_polar_rect_log_base_and_classes(rng):
    n = 64
    a = crandom(rng, n)
    b = crandom(rng, n) + 4
    a[:5] = [complex(np.nan, 1), complex(1, np.inf), complex(-np.inf, 0), 0j, -1 + 0j]
    fout = np.full((n, 3), np.nan)
    bout = np.zeros((n, 3), np.bool_)
    cout = cpoisoned((n, 3), np.complex128)
    launch1d(k_cmath_misc, n, fout, bout, cout, a, b)
    zs = [complex(z) for z in a]
    np.testing.assert_array_equal(bout, [[cmath.isnan(z), cmath.isinf(z), cmath.isfinite(z)] for z in zs])
    ok = slice(5, None)  # ordinary values
    np.testing.assert_allclose(fout[ok, 0], [cmath.phase(z) for z in zs[5:]], rtol=1e-14)
    np.testing.assert_allclose(fout[ok, 1:], [cmath.polar(z) for z in zs[5:]], rtol=1e-14)
    assert fout[4, 0] == math.pi and fout[3, 0] == 0.0
    assert_close(cout[ok, 0], a[ok], 1e-14)
    assert_close(cout[ok, 1], np.array([cmath.log(z, complex(w)) for z, w in zip(zs[5:], b[5:])]), 1e-12)
    assert_close(cout[ok, 2], np.array([cmath.log(z, 10) for z in zs[5:]]), 1e-12)


# == errors ========================================================================================
def k_order(out, a, b):
    out[0] = a[0] < b[0]


def k_store_into_float(out, a, b):
    out[0] = a[0]


def k_floordiv(out, a, b):
    out[0] = a[0] // b[0]


def k_float_of_complex(out, a, b):
    out[0] = float(a[0])


def k_math_of_complex(out, a, b):
    out[0] = math.sqrt(a[0])


@pytest.mark.parametrize("fn,msg", [
    (k_order, "not ordered"), (k_store_into_float, "cannot store complex128 into an array of float64"),
    (k_floordiv, "unsupported operand types for //"), (k_float_of_complex, "cannot convert complex128"),
    (k_math_of_complex, "takes one number"),
])
def test_typing_errors(fn, msg):
    with pytest.raises(gpu.TypingError, match=msg):
        gpu.compile_ptx(fn, "void(float64[::1], complex128[::1], complex128[::1])")


def test_ptx_of_complex_scalars_and_arrays():
    def k(out, a, z):
        out[0] = a[0] * z + abs(z)
    ptx, _ = gpu.compile_ptx(k, "void(complex64[::1], complex64[::1], complex64)")
    assert ".param .f32" in ptx  # a complex scalar is passed as two parameters, re and im
