"""NumPy's ufuncs gpujit writes in Python (square, reciprocal, conjugate, signbit, spacing,
logaddexp, logaddexp2, float_power, gcd, lcm, ldexp) in kernels, on scalars and arrays of
several dtypes, against NumPy on random inputs; outputs poisoned before each launch."""
import numpy as np
import pytest

import gpujit as gpu

rng = np.random.default_rng()
N = 24


def inputs(dtype, n=N, lo=-6, hi=6):
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return (rng.uniform(lo, hi, n) + 1j * rng.uniform(lo, hi, n)).astype(dt)
    if dt.kind == "f":
        return rng.uniform(lo, hi, n).astype(dt)
    if dt.kind == "u":
        return rng.integers(0, hi, n).astype(dt)
    return rng.integers(lo, hi, n).astype(dt)


def check(ufunc, *xs, rtol=1e-6):
    want = ufunc(*xs)
    # scalars: out[i] = np.<name>(x[i], ...)
    args = ", ".join("x%d" % i for i in range(len(xs)))
    items = ", ".join("x%d[i]" % i for i in range(len(xs)))
    ns = {"np": np}
    exec("def k(out, %s):\n    for i in range(out.size):\n        out[i] = np.%s(%s)\n" % (args, ufunc.__name__, items), ns)
    out = np.full(want.shape, 77 if want.dtype.kind in "iub" else np.nan, want.dtype)
    gpu.jit(ns["k"])[1, 1](out, *xs)
    np.testing.assert_allclose(out, want, rtol=rtol)
    # arrays: np.<name>(x, ..., out)
    exec("def a(out, %s):\n    np.%s(%s, out)\n" % (args, ufunc.__name__, args), ns)
    out = np.full(want.shape, 77 if want.dtype.kind in "iub" else np.nan, want.dtype)
    gpu.jit(ns["a"])[1, 1](out, *xs)
    np.testing.assert_allclose(out, want, rtol=rtol)


def scalar_type(ufunc, *dtypes):
    """The type the kernel gives np.<name>(x, ...) of scalars of these dtypes."""
    args = ", ".join("x%d" % i for i in range(len(dtypes)))
    ns = {"np": np}
    exec("def k(%s):\n    r = np.%s(%s)\n" % (args, ufunc.__name__, args), ns)
    k = gpu.jit("void(%s)" % ", ".join(np.dtype(d).name for d in dtypes))(ns["k"])
    line = [ln.split() for ln in k.inspect_types_text().splitlines() if ln.split()[2:3] == ["r"]][0]
    return line[-1]


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16, np.int64, np.float32, np.float64, np.complex64,
                                   np.complex128])
@pytest.mark.parametrize("ufunc", [np.square, np.conjugate], ids=lambda u: u.__name__)
def test_square_conjugate(ufunc, dtype):
    check(ufunc, inputs(dtype))
    assert scalar_type(ufunc, dtype) == np.dtype(ufunc(inputs(dtype)).dtype).name


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64, np.complex128])
def test_reciprocal(dtype):
    x = inputs(dtype)
    if x.dtype.kind in "iu":
        x[x == 0] = 1  # NumPy's integer 1/0 is undefined
    else:
        x[np.abs(x) < 0.1] = 0.5
    check(np.reciprocal, x)


@pytest.mark.parametrize("dtype", [np.int16, np.int64, np.float32, np.float64])
def test_signbit(dtype):
    x = inputs(dtype)
    if x.dtype.kind == "f":
        x[:4] = [-0.0, 0.0, -np.inf, np.nan]
    check(np.signbit, x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_spacing(dtype):
    x = inputs(dtype, lo=-1e6, hi=1e6)
    x[:5] = [0.0, -0.0, -1.0, np.inf, np.nan]
    check(np.spacing, x, rtol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("ufunc", [np.logaddexp, np.logaddexp2], ids=lambda u: u.__name__)
def test_logaddexp(ufunc, dtype):
    a, b = inputs(dtype, lo=-30, hi=30), inputs(dtype, lo=-30, hi=30)
    a[:3] = b[:3]  # the x == y case
    check(ufunc, a, b, rtol=1e-6 if np.dtype(dtype) == np.float32 else 1e-14)
    assert scalar_type(ufunc, dtype, dtype) == ufunc(a, b).dtype.name or dtype == np.int32


def test_float_power():
    a = inputs(np.float32, lo=0.1, hi=4)
    b = inputs(np.int64, lo=-3, hi=4)
    check(np.float_power, a, b, rtol=1e-14)
    check(np.float_power, inputs(np.complex128, lo=-2, hi=2), inputs(np.complex128, lo=-2, hi=2), rtol=1e-12)


@pytest.mark.parametrize("ufunc", [np.gcd, np.lcm], ids=lambda u: u.__name__)
def test_gcd_lcm(ufunc):
    a = rng.integers(-1000, 1000, N).astype(np.int64)
    b = rng.integers(-1000, 1000, N).astype(np.int32)
    a[:2] = 0
    b[1:3] = 0
    check(ufunc, a, b)
    check(ufunc, a.astype(np.int16), b.astype(np.int8))


def test_ldexp():
    x = inputs(np.float32)
    n = rng.integers(-10, 10, N).astype(np.int32)
    check(np.ldexp, x, n, rtol=0)
    check(np.ldexp, inputs(np.float64), n.astype(np.int64), rtol=0)


def test_types_numpy_has_no_loop_for():
    @gpu.jit
    def k(out, x):
        out[0] = np.gcd(x, x)

    with pytest.raises(gpu.TypingError, match=r"numpy.gcd\(\) does not take \(float64, float64\)"):
        k[1, 1](np.zeros(1), 1.5)
