"""NumPy ufuncs on arrays inside kernels (np.sin(x, out), np.add(a, b, out)), against
NumPy's own ufuncs with broadcasting; outputs poisoned before each launch."""
import numpy as np
import pytest

import gpujit as gpu

rng = np.random.default_rng()


def kernel_for(ufunc):
    """A one-thread kernel calling np.<ufunc>(inputs..., out)."""
    args = ", ".join("a%d" % i for i in range(ufunc.nin + 1))
    ns = {"np": np}
    exec("def k(%s):\n    np.%s(%s)\n" % (args, ufunc.__name__, args), ns)
    return gpu.jit(ns["k"])


def poisoned(shape, dtype):
    out = np.empty(shape, dtype)
    out[...] = 77 if np.dtype(dtype).kind in "iub" else np.nan
    return out


@pytest.mark.parametrize("ufunc", [np.sin, np.sqrt, np.exp, np.negative, np.floor, np.log10])
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 2)])
def test_unary(ufunc, shape):
    x = rng.random(shape) + 0.5
    out = poisoned(shape, np.float64)
    kernel_for(ufunc)[1, 1](x, out)
    np.testing.assert_allclose(out, ufunc(x), rtol=1e-14)


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.arctan2, np.hypot, np.greater, np.equal,
                                   np.logical_and])
def test_binary_broadcast(ufunc):
    a = rng.random((4, 5))
    b = rng.random(5)
    dt = ufunc(a, b).dtype
    out = poisoned((4, 5), dt)
    kernel_for(ufunc)[1, 1](a, b, out)
    np.testing.assert_allclose(out, ufunc(a, b), rtol=1e-14)
    col = rng.random((4, 1))
    out = poisoned((4, 5), dt)
    kernel_for(ufunc)[1, 1](col, a, out)
    np.testing.assert_allclose(out, ufunc(col, a), rtol=1e-14)


def test_scalar_inputs_and_ints():
    out = poisoned(1, np.bool_)
    kernel_for(np.less)[1, 1](np.int64(-1), np.uint64(0), out)
    assert out[0] == np.less(np.int64(-1), np.uint64(0))
    x = rng.integers(-50, 50, 9).astype(np.int32)
    out = poisoned(9, np.int32)
    kernel_for(np.bitwise_xor)[1, 1](x, np.int32(5), out)
    np.testing.assert_array_equal(out, x ^ 5)
    out = poisoned(1, np.float32)
    kernel_for(np.cos)[1, 1](np.float32(0.5), out)
    assert out[0] == pytest.approx(np.cos(np.float32(0.5)), rel=1e-6)


def test_errors():
    @gpu.jit
    def no_out(a):
        np.sin(a)
    with pytest.raises(gpu.TypingError, match=r"test_lang_ufunc_arrays.py:\d+: np.sin\(\) on an array needs an output array"):
        no_out[1, 1](np.zeros(3))

    @gpu.jit
    def too_wide(a, o):
        np.sin(a, o)
    with pytest.raises(gpu.TypingError, match="more than the output's"):
        too_wide[1, 1](np.zeros((2, 2)), np.zeros(2))


@pytest.mark.parametrize("ufunc", [np.less, np.less_equal, np.greater, np.greater_equal, np.maximum, np.minimum,
                                   np.fmax, np.fmin])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_ordering(ufunc, dtype):
    """NumPy orders complex numbers lexicographically; NaNs as its min/max do."""
    re = rng.integers(0, 3, 40).astype(np.float64)
    a = (re + 1j * rng.integers(0, 3, 40)).astype(dtype)
    b = (rng.permutation(re) + 1j * rng.integers(0, 3, 40)).astype(dtype)
    a[:2] = complex(np.nan, 1.0)
    b[3] = complex(2.0, np.nan)
    with np.errstate(invalid="ignore"):
        want = ufunc(a, b)
    out = poisoned(40, want.dtype)
    kernel_for(ufunc)[1, 1](a, b, out)
    np.testing.assert_array_equal(out, want)


@gpu.jit
def k_add_overlapping(a):
    np.add(a[1:], a[:-1], a[1:])


def test_an_output_that_overlaps_an_input_computes_in_place(rng):
    # numba's answer, documented: element by element in index order (NumPy copies the input
    # first)
    a = rng.standard_normal(50)
    want = np.cumsum(a)
    k_add_overlapping[1, 1](a)
    np.testing.assert_allclose(a, want, rtol=1e-12)
