"""The per-call caches of gpujit.vectorize (a device-array call repeats the decisions of the
previous call with the same dtypes, shapes, strides and scalar types) and of gpujit.reduce
(one launch; scratch kept per device, stream and thread): repeated and interleaved calls
against NumPy on fresh random inputs, outputs poisoned before each run."""
import threading

import numpy as np
import pytest

import gpujit as gpu
from gpujit import float32, float64, int32, int64

rng = np.random.default_rng()


def poison(d):
    host = np.empty(d.shape, d.dtype)
    host[...] = 77 if d.dtype.kind in "iub" else np.nan
    d.copy_to_device(host)
    return d


def make_axpy():
    @gpu.vectorize([float32(float32, float32, float32), float64(float64, float64, float64),
                    int64(int64, int64, int64)])
    def axpy(a, x, y):
        return a * x + y
    return axpy


def test_vectorize_repeated_calls_do_not_mix_dtypes_shapes_or_strides():
    axpy = make_axpy()
    cases = []
    for dt in (np.float32, np.float64, np.int64):
        for n in (1, 7, 300):
            x = (rng.random(2 * n) * 100).astype(dt)
            y = (rng.random(2 * n) * 100).astype(dt)
            cases.append((dt, gpu.to_device(x), gpu.to_device(y), x, y))
            cases.append((dt, gpu.to_device(x)[::2], gpu.to_device(y)[1::2], x[::2], y[1::2]))
    for _ in range(3):      # the first round fills the cache, the others run from it
        for dt, dx, dy, x, y in cases:
            a = dt(3)
            got = axpy(a, dx, dy)
            assert got.dtype == dt and got.shape == x[:len(dx)].shape
            np.testing.assert_allclose(got.copy_to_host(), a * x[:len(dx)] + y[:len(dy)], rtol=1e-6)
            out = poison(gpu.device_array(len(dx), dt))
            assert axpy(a, dx, dy, out=out) is out
            np.testing.assert_allclose(out.copy_to_host(), a * x[:len(dx)] + y[:len(dy)], rtol=1e-6)


def test_vectorize_scalar_types_keep_their_casts():
    @gpu.vectorize
    def f(a, x):
        return a * x
    x = rng.random(50)
    dx = gpu.to_device(x)
    for _ in range(2):
        for a in (2, 2.5, np.float32(2.5), True, np.int8(-3)):
            want = np.asarray(a) * x
            got = f(a, dx).copy_to_host()
            assert got.dtype == want.dtype, (a, got.dtype, want.dtype)
            np.testing.assert_allclose(got, want)
    with pytest.raises((TypeError, OverflowError, ValueError)):
        f(1 << 70, dx)      # beyond int64: the full path refuses it, every time
    with pytest.raises((TypeError, OverflowError, ValueError)):
        f(1 << 70, dx)


@pytest.mark.parametrize("order", ["C", "F"])
def test_vectorize_nd_contiguous_repeated(order):
    axpy = make_axpy()
    x = np.asarray(rng.random((6, 5, 4)), order=order)
    y = np.asarray(rng.random((6, 5, 4)), order=order)
    dx, dy = gpu.to_device(x), gpu.to_device(y)
    for _ in range(3):
        out = poison(gpu.device_array(x.shape, np.float64, order=order))
        axpy(0.5, dx, dy, out=out)
        np.testing.assert_allclose(out.copy_to_host(), 0.5 * x + y)
        np.testing.assert_allclose(axpy(0.5, dx, dy).copy_to_host(), 0.5 * x + y)
    # a strided 3-D view of the same shape takes the general kernel, every time
    big = rng.random((6, 5, 8))
    view = gpu.to_device(big)[:, :, ::2]
    for _ in range(2):
        np.testing.assert_allclose(axpy(2.0, view, dy).copy_to_host(), 2.0 * big[:, :, ::2] + y)


def test_vectorize_broadcasting_and_streams_repeated():
    axpy = make_axpy()
    x = rng.random((4, 3))
    y = rng.random(3)
    dx, dy = gpu.to_device(x), gpu.to_device(y)
    s = gpu.stream()
    for _ in range(3):
        np.testing.assert_allclose(axpy(2.0, dx, dy).copy_to_host(), 2.0 * x + y)
        got = axpy(2.0, dy, dy, stream=s)
        np.testing.assert_allclose(got.copy_to_host(stream=s), 3.0 * y)
        np.testing.assert_allclose(axpy(2.0, x, y), 2.0 * x + y)   # host arrays in: a host array out
        assert axpy(1.0, dy[:1], dy[:1]).shape == (1,)


def test_vectorize_cache_is_bounded(monkeypatch):
    from gpujit import vectorizers
    monkeypatch.setattr(vectorizers, "_PLANS_KEPT", 4)
    axpy = make_axpy()
    for n in range(1, 20):
        x = rng.random(n)
        np.testing.assert_allclose(axpy(1.0, gpu.to_device(x), gpu.to_device(x)).copy_to_host(), 2 * x)
    assert len(axpy._plans) <= 4


def test_vectorize_low_occupancy_warning_from_the_cache(monkeypatch):
    from gpujit import config
    from gpujit.errors import NumbaPerformanceWarning
    axpy = make_axpy()
    d = gpu.to_device(rng.random(10))
    monkeypatch.setattr(config, "CUDA_LOW_OCCUPANCY_WARNINGS", 1)
    for _ in range(2):
        with pytest.warns(NumbaPerformanceWarning, match="Grid size 1 "):
            axpy(1.0, d, d)


# -- reduce -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint64, np.float16, np.float32, np.float64,
                                   np.complex128])
def test_reduce_sum_dtypes(dtype):
    r = gpu.reduce(lambda a, b: a + b)
    for n in (1, 2, 63, 64, 65, 1000, 40000):
        x = (rng.random(n) * (1 / n if dtype == np.float16 else 4)).astype(dtype)
        want = x.sum(dtype=dtype)
        got = r(gpu.to_device(x))
        assert np.dtype(type(got)) == np.dtype(dtype)
        if np.dtype(dtype).kind in "iu":
            assert got == want
        else:
            tol = 2e-2 if dtype == np.float16 else 1e-5
            np.testing.assert_allclose(got, x.astype(np.complex128).sum(), rtol=tol)


def test_reduce_bool_and_max():
    anyr = gpu.reduce(lambda a, b: a or b)
    for n in (1, 100, 5000):
        x = np.zeros(n, np.bool_)
        assert anyr(x) == False  # noqa: E712
        x[rng.integers(n)] = True
        assert anyr(x) == True  # noqa: E712
    maxr = gpu.reduce(lambda a, b: max(a, b))
    x = rng.integers(-10**9, 10**9, 123457)
    assert maxr(x, init=-10**18) == x.max()


@pytest.mark.parametrize("n", [1, 255, 256, 257, 4096, 100003, 1 << 20])
def test_reduce_counts_init_once(n):
    # each element counted once and init once, whatever the number of blocks: exact in ints
    r = gpu.reduce(lambda a, b: a + b)
    x = rng.integers(-50, 50, n)
    d = gpu.to_device(x)
    assert r(d, init=7) == x.sum() + 7
    res = poison(gpu.device_array(3, np.int64))
    assert r(d, res=res, init=-1) is None
    host = res.copy_to_host()
    assert host[0] == x.sum() - 1 and (host[1:] == 77).all()


def test_reduce_alternating_sizes_dtypes_and_streams():
    # the ticket counter and partial results are reused: every call must leave them clean
    r = gpu.reduce(lambda a, b: a + b)
    streams = [0, gpu.stream(), gpu.stream()]
    arrays = [rng.integers(0, 1000, n) for n in (5, 300000, 1, 70000, 2049)]
    floats = [rng.random(n).astype(np.float32) for n in (17, 123456)]
    for k in range(12):
        s = streams[k % 3]
        x = arrays[k % len(arrays)]
        assert r(gpu.to_device(x), stream=s) == x.sum()
        f = floats[k % 2]
        np.testing.assert_allclose(r(f, stream=s), f.astype(np.float64).sum(), rtol=1e-5)
        res = poison(gpu.device_array(1, np.int64))
        r(gpu.to_device(x)[::3], res=res, stream=s)
        assert res.copy_to_host(stream=s)[0] == x[::3].sum()


def test_reduce_from_threads():
    r = gpu.reduce(lambda a, b: a + b)
    data = [rng.integers(0, 1 << 20, 20000 + 977 * i) for i in range(4)]
    errors = []

    def work(x):
        d = gpu.to_device(x)
        for _ in range(15):
            got = r(d)
            if got != x.sum():
                errors.append((got, x.sum()))
    threads = [threading.Thread(target=work, args=(x,)) for x in data]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_reduce_res_of_another_dtype_and_strided_res():
    r = gpu.reduce(lambda a, b: a + b)
    x = rng.integers(0, 100, 999).astype(np.int32)
    res = poison(gpu.device_array(4, np.int32))[::2]
    r(x, res=res)
    assert res.copy_to_host()[0] == x.sum() and res.copy_to_host()[1] == 77


def test_reduce_device_function_and_errors():
    @gpu.jit(device=True)
    def mul(a, b):
        return a * b
    y = rng.random(300) + 0.5
    np.testing.assert_allclose(gpu.reduce(mul)(y, init=1), y.prod(), rtol=1e-9)
    assert gpu.reduce(mul)(y) == 0      # init=0 is combined too (numba's default)
    with pytest.raises(TypeError, match="res="):
        gpu.reduce(mul)(y, res=np.zeros(1))
    with pytest.raises(TypeError, match="1-D"):
        gpu.reduce(mul)(gpu.to_device(np.zeros((2, 2))))


def test_ufunc_reduce_is_one_reduction_without_init():
    @gpu.vectorize([float64(float64, float64), int32(int32, int32)])
    def vmax(a, b):
        return max(a, b)
    for n in (1, 2, 65, 3000, 100001):
        x = rng.random(2 * n) - 2.0        # all negative: an init of 0 would show
        assert vmax.reduce(x[:n]) == x[:n].max()
        d = gpu.to_device(x)
        assert vmax.reduce(d[::2]) == x[::2].max()
        assert vmax.reduce(x[:n].astype(np.int32) - 5) == (x[:n].astype(np.int32) - 5).max()
    assert not vmax._plans      # the reduction does not go through calls of the ufunc
