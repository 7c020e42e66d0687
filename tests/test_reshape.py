"""a.reshape(...) in kernels: a C-contiguous view with the new shape (ints, a tuple of ints,
one -1), of arguments, views and local arrays, against NumPy's reshape on fresh random data;
outputs start poisoned. A size that does not match raises ValueError and a non-contiguous
source NotImplementedError (numba's messages) under debug=True."""
import numpy as np
import pytest

import gpujit as gpu


@gpu.jit
def k_2d(arr, n, got):
    y = arr.reshape((n, -1))
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            got[i, j] = y[i, j]


@gpu.jit
def k_3d(arr, a, b, got):
    y = arr.reshape(a, b, -1)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            for k in range(y.shape[2]):
                got[i, j, k] = y[i, j, k]


@gpu.jit
def k_flat(arr, got):
    y = arr.reshape(arr.size)
    for i in range(y.shape[0]):
        got[i] = y[i]


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex64])
def test_reshape_2d(rng, dtype):
    for n, m in [(4, 6), (1, 24), (24, 1), (3, 8)]:
        arr = (rng.uniform(-5, 5, 24) * 3).astype(dtype)
        got = np.full((n, m), 77, dtype)
        k_2d[1, 1](arr, n, got)
        np.testing.assert_array_equal(got, arr.reshape(n, m))


def test_reshape_3d_from_2d_and_views(rng):
    src = rng.uniform(-1, 1, (6, 10))
    for arr in (src, src[1:4], src[::1, :].T.copy()):
        a, b = 2, arr.size // 2 // 5
        want = arr.reshape(a, b, -1)
        got = np.full(want.shape, np.nan)
        k_3d[1, 1](arr, a, b, got)
        np.testing.assert_array_equal(got, want)


def test_reshape_flat(rng):
    arr = rng.integers(-100, 100, (3, 4, 5))
    got = np.full(60, 777, arr.dtype)
    k_flat[1, 1](arr, got)
    np.testing.assert_array_equal(got, arr.ravel())
    got = np.full(4, 777, arr.dtype)
    k_flat[1, 1](arr[1:2, 2:3, :4], got)  # strided, but only its last axis is longer than 1
    np.testing.assert_array_equal(got, arr[1, 2, :4])


def test_reshape_local_array(rng):
    @gpu.jit
    def k(x, out):
        t = gpu.local.array(12, np.float64)
        for i in range(12):
            t[i] = x[i] * 2
        m = t.reshape(3, 4)
        for i in range(3):
            for j in range(4):
                out[i, j] = m[i, j]
    x = rng.uniform(size=12)
    out = np.full((3, 4), np.nan)
    k[1, 1](x, out)
    np.testing.assert_array_equal(out, (x * 2).reshape(3, 4))


def test_reshape_errors():
    @gpu.jit(debug=True)
    def k(arr, n, got):
        y = arr.reshape(n, 3)
        got[0] = y[0, 0]
    got = np.zeros(1)
    with pytest.raises(ValueError, match="total size of new array must be unchanged"):
        k[1, 1](np.arange(24.0), 5, got)
    with pytest.raises(NotImplementedError, match="incompatible shape for array"):
        # a strided view on the device (a strided host array reaches a GPU as a packed copy)
        k[1, 1](gpu.to_device(np.arange(48.0))[::2], 8, got)
    k[1, 1](np.arange(24.0) + 1, 8, got)
    assert got[0] == 1


@pytest.mark.parametrize("expr", ["a.reshape()", "a.reshape(2.0, 3)", "a.reshape((2, True))", "a.reshape(())"])
def test_reshape_bad_arguments(expr):
    ns = {}
    exec("def k(a, out):\n    y = %s\n    out[0] = 1\n" % expr, ns)
    with pytest.raises(gpu.TypingError, match="reshape"):
        gpu.jit(ns["k"])[1, 1](np.zeros(6), np.zeros(1))
