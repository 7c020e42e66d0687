"""Whole-array reductions in kernels: np.sum, prod, min, max, mean, var, std, all, any, argmin,
argmax, count_nonzero, the nan* family, and the array methods (a.sum() ...), on fresh random
arrays of several dtypes, ranks and layouts (C-contiguous, reversed and strided views, 0-d),
with NaNs planted in the float ones, against NumPy. Each thread reduces its own row of a batch,
so the loop runs on many inputs at once; outputs start poisoned. Integer and boolean results,
min/max/arg* and counts must be exact; float sums follow the element order (numba's), so they
are compared closely rather than bit for bit with NumPy's pairwise sums."""
import warnings

import numpy as np
import pytest

import gpujit as gpu
from conftest import launch1d

FUNCS = ["sum", "prod", "min", "max", "mean", "var", "std", "all", "any", "argmin", "argmax",
         "count_nonzero", "nansum", "nanprod", "nanmin", "nanmax", "nanmean", "nanvar", "nanstd"]
METHODS = ["sum", "prod", "min", "max", "mean", "var", "std", "all", "any", "argmin", "argmax"]
EXACT = {"min", "max", "all", "any", "argmin", "argmax", "count_nonzero", "nanmin", "nanmax"}


REAL_ONLY = {"min", "max", "argmin", "argmax", "nanmin", "nanmax"}


def make_kernel(exprs):
    """A kernel whose thread i stores exprs[k] (of the view a = x[i]) into out[i, k]."""
    ns = {"np": np, "gpu": gpu}
    body = "".join("        out[i, %d] = %s\n" % (k, e) for k, e in enumerate(exprs))
    exec("def k(out, x):\n"
         "    i = gpu.grid(1)\n"
         "    if i < out.shape[0]:\n"
         "        a = x[i]\n" + body, ns)
    return gpu.jit(ns["k"])


def batch(rng, dtype, shape):
    """A batch of 32 arrays (axis 0), each of `shape`."""
    full = (32,) + shape
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x = rng.uniform(-4, 4, full).astype(dt)
        x[rng.random(full) < 0.15] = np.nan
        x[5] = np.nan  # one all-NaN array
        x[6] = rng.uniform(-4, 4, shape)  # and one without
    elif dt.kind == "c":
        x = (rng.uniform(-2, 2, full) + 1j * rng.uniform(-2, 2, full)).astype(dt)
    elif dt.kind == "b":
        x = rng.random(full) < 0.7
        x[3] = True
    else:
        x = rng.integers(-3 if dt.kind == "i" else 0, 4, full).astype(dt)
        x[7] = 1
        x[8, ...] = 100 if dt.itemsize == 1 and dt.kind == "i" else 200  # sums past the element type
    return x


def views(x):
    """The batch itself and views of other layouts, each still of 32 arrays."""
    yield x
    if x.ndim >= 3:
        yield x[:, ::-1, ::2]
        yield np.swapaxes(x, -1, -2)


def reference(name, x):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.array([getattr(np, name)(a) for a in x])


def check(name, got, want, dtype):
    what = "%s of %s" % (name, np.dtype(dtype))
    if name in EXACT or np.dtype(dtype).kind in "biu" and name in ("sum", "prod", "nansum", "nanprod"):
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=what)
        return
    rtol = 2e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True, err_msg=what)


def run(exprs, names, x, dtype, out_dtype):
    out = np.full((len(x), len(exprs)), 99, out_dtype)
    launch1d(make_kernel(exprs), len(x), out, x)
    for k, name in enumerate(names):
        check(name, out[:, k], reference(name, x), dtype)


@pytest.mark.parametrize("dtype,shape", [(np.float64, (7,)), (np.float64, (3, 5)), (np.float32, (3, 5)),
                                         (np.int8, (3, 5)), (np.uint8, (7,)), (np.bool_, (3, 5)),
                                         (np.complex128, (3, 5))])
def test_numpy_functions(rng, dtype, shape):
    names = [n for n in FUNCS if np.dtype(dtype).kind != "c" or n not in REAL_ONLY]
    out_dtype = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    for x in views(batch(rng, dtype, shape)):
        run(["np.%s(a)" % n for n in names], names, x, dtype, out_dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.int16])
def test_methods(rng, dtype):
    for x in views(batch(rng, dtype, (4, 6))):
        run(["a.%s()" % n for n in METHODS], METHODS, x, dtype, np.float64)


def test_result_types(rng):
    """numba's result types: int sums in int64 (uint64 unsigned) whatever the element width,
    means of ints in float64, float32 kept, var of complex real."""
    x = np.array([100, 100, 100], np.int8)
    out = np.zeros(3, np.int64)

    @gpu.jit
    def k(out, x, u, f, z, outf, outz):
        out[0] = np.sum(x)
        out[1] = np.sum(u) - 100000  # uint64 - int64: float64 by numba's promotion
        out[2] = np.prod(x) // 1000
        outf[0] = np.mean(x)
        outf[1] = np.mean(f) - np.float32(0.1)  # float32 arithmetic
        outf[2] = np.var(z)
        outz[0] = np.mean(z)
    outf = np.zeros(3)
    outz = np.zeros(1, np.complex128)
    f = np.full(3, 0.1, np.float32)
    z = np.array([1 + 1j, 3 - 1j])
    k[1, 1](out, x, np.full(3, 50000, np.uint16), f, z, outf, outz)
    assert out.tolist() == [300, 50000, 1000]
    assert outf[0] == 100.0
    assert outf[1] == np.float32(np.float32(np.float32(np.float32(0.1) + np.float32(0.1)) + np.float32(0.1))
                                 / np.float32(3)) - np.float32(0.1)
    assert outf[2] == np.var(z)
    assert outz[0] == np.mean(z)


def test_empty_min_debug_raises():
    @gpu.jit(debug=True)
    def k(out, x):
        out[0] = np.min(x)
    out = np.zeros(1)
    k[1, 1](out, np.ones(3))
    assert out[0] == 1
    with pytest.raises(ValueError, match="zero-size array to reduction operation min"):
        k[1, 1](out, np.ones(0))


def test_empty_without_debug():
    @gpu.jit
    def k(out, x):
        out[0] = np.min(x)
        out[1] = np.max(x)
        out[2] = np.sum(x)
        out[3] = np.mean(x)
        out[4] = np.nanmin(x)
    out = np.zeros(5)
    k[1, 1](out, np.ones(0))
    assert out[0] == np.inf and out[1] == -np.inf and out[2] == 0
    assert np.isnan(out[3]) and np.isnan(out[4])


@pytest.mark.parametrize("expr,err", [
    ("np.sum(x, 0)", gpu.UnsupportedError),
    ("np.sum(x[0, 0])", gpu.TypingError),
    ("x.sum(0)", gpu.TypingError),
    ("np.max(z)", gpu.UnsupportedError),
])
def test_bad_calls(expr, err):
    ns = {"np": np}
    exec("def k(out, x, z):\n    out[0] = %s\n" % expr, ns)
    k = gpu.jit(ns["k"])
    with pytest.raises(err, match="test_reductions|<string>"):
        k[1, 1](np.zeros(1), np.ones((2, 2)), np.ones(2, np.complex128))
