"""gpujit.vectorize: ufuncs from scalar functions, against NumPy's own ufuncs and
np.vectorize on fresh random inputs (outputs poisoned before each run)."""
import math
import pickle
import warnings

import numpy as np
import pytest

import gpujit as gpu
from gpujit import float32, float64, int32, uint32

rng = np.random.default_rng()

SIGS = [int32(int32, int32), float32(float32, float32), float64(float64, float64)]


@gpu.vectorize(SIGS)
def vadd(a, b):
    return a + b


def poisoned(shape, dtype):
    out = np.empty(shape, dtype)
    out[...] = 77 if np.dtype(dtype).kind in "iub" else np.nan
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
@pytest.mark.parametrize("n", [1, 31, 1025])
def test_1d_host(dtype, n):
    a = (rng.random(n) * 100).astype(dtype)
    b = (rng.random(n) * 100).astype(dtype)
    got = vadd(a, b)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, a + b)


def test_unit_stride_and_strided_views_of_the_same_data():
    # contiguous arguments take a kernel indexing at unit stride, strided views the general
    # one: both give NumPy's answer, into a strided out= as well
    a = rng.random(4000)
    b = rng.random(4000)
    da, db = gpu.to_device(a), gpu.to_device(b)
    out = gpu.to_device(np.full(8000, np.nan))
    np.testing.assert_array_equal(vadd(da, db).copy_to_host(), a + b)
    vadd(da[::2], db[1::2], out=out[::4])
    got = out.copy_to_host()
    np.testing.assert_array_equal(got[::4], a[::2] + b[1::2])
    assert np.isnan(got[1::4]).all()


@pytest.mark.parametrize("nd", [2, 3, 5])
@pytest.mark.parametrize("order", ["C", "F"])
def test_nd_mixed_orders(nd, order):
    a = rng.random((3,) * nd)
    b = np.array(rng.random((3,) * nd).T, order=order)
    np.testing.assert_array_equal(vadd(a, b), a + b)


def test_broadcasting_host_and_device():
    a = rng.standard_normal((20, 3, 1))
    b = a.transpose(2, 1, 0)
    np.testing.assert_array_equal(vadd(a, b), a + b)
    got = vadd(gpu.to_device(a), gpu.to_device(b))
    assert isinstance(got, gpu.DeviceArray)
    np.testing.assert_array_equal(got.copy_to_host(), a + b)


def test_scalars():
    x = rng.random(10)
    got = vadd(1.5, gpu.to_device(x))
    np.testing.assert_array_equal(got.copy_to_host(), x + 1.5)
    # scalars alone: a host array of one element, as numba returns, on every call (the
    # second call of a kind once came back as a device array)
    a, b = rng.random(2)
    for _ in range(3):
        r = vadd(a, b)
        assert type(r) is np.ndarray and r.shape == (1,) and r[0] == a + b
    # exact scalar types choose the loop: two int32 scalars give int32
    r = vadd(np.int32(3), np.int32(4))
    assert r.shape == (1,) and r[0] == 7 and r.dtype == np.int32
    # a scalar is an array of one element: broadcast with arrays it changes no shape
    x2 = rng.random((3, 4))
    np.testing.assert_array_equal(vadd(x2, 0.5), x2 + 0.5)
    # 0-d arrays alone: a scalar (NumPy's 0-d result)
    assert vadd(np.array(1.25), np.array(2.5)) == 3.75


def test_out_host_and_device():
    a = rng.random(12).astype(np.float32)
    out = poisoned(12, np.float32)
    assert vadd(a, a, out=out) is out
    np.testing.assert_array_equal(out, a + a)
    x = np.arange(10, dtype=np.int32).reshape(2, 5)
    dx = gpu.to_device(x)
    vadd(dx, dx, out=dx)
    np.testing.assert_array_equal(dx.copy_to_host(), x + x)


def test_out_strided_device_view():
    x = rng.random((6, 8))
    d = gpu.to_device(np.full((6, 8), np.nan))
    view = d[:, ::2]
    vadd(x[:, ::2], 1.0, out=view)
    host = d.copy_to_host()
    np.testing.assert_array_equal(host[:, ::2], x[:, ::2] + 1.0)
    assert np.isnan(host[:, 1::2]).all()


def test_stream():
    s = gpu.stream()
    x = rng.random(1000)
    dx = gpu.to_device(x, s)
    np.testing.assert_array_equal(vadd(dx, dx, stream=s).copy_to_host(stream=s), x + x)


def test_tuples_as_arrays():
    np.testing.assert_array_equal(vadd((1.0, 2.0, 3.0), (4.0, 5.0, 6.0)), [5.0, 7.0, 9.0])


@pytest.mark.parametrize("n", [1, 2, 7, 8, 1025])
def test_reduce(n):
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    got = vadd.reduce(x)
    assert got == x.sum() and got.dtype == np.int32
    dx = gpu.to_device(x)
    assert vadd.reduce(dx) == x.sum()
    np.testing.assert_array_equal(dx.copy_to_host(), x)   # the input is not overwritten


def test_reduce_errors():
    with pytest.raises(TypeError, match="empty"):
        vadd.reduce(np.zeros(0, np.int32))
    with pytest.raises(TypeError, match="1-D"):
        vadd.reduce(np.zeros((2, 2), np.int32))


def test_no_matching_loop():
    with pytest.raises(TypeError, match="No matching version"):
        vadd(np.zeros(3, np.int16), np.zeros(3, np.int16))


def test_lazy_dispatch_on_types():
    @gpu.vectorize
    def mul(a, b):
        return a * b
    for dt in (np.int16, np.float32, np.complex128):
        a = (rng.random(9) * 10).astype(dt)
        got = mul(a, a)
        np.testing.assert_array_equal(got, a * a)
    # numba's typing: float32 * int64 (a Python int) is float64
    assert mul(np.arange(3, dtype=np.float32), 2).dtype == np.float64


def test_device_function_and_math():
    @gpu.jit(device=True)
    def cu(x, y, z):
        return x ** y / z

    def f(x, y, z):
        return cu(x, y, z)
    uf = gpu.vectorize([float32(float32, float32, float32)])(f)
    x, y = rng.random(50).astype(np.float32), rng.random(50).astype(np.float32)
    z = rng.random(50).astype(np.float32) + 0.1
    np.testing.assert_allclose(uf(x, y, z), x ** y / z, rtol=1e-5)


def sinc(x):
    if x == 0.0:
        return 1.0
    return math.sin(x * math.pi) / (math.pi * x)


def scaled(x, scale):
    return scale * x


def test_against_np_vectorize():
    uf = gpu.vectorize(["float64(float64)", "float32(float32)"])(sinc)
    a = rng.random(100) * 10
    np.testing.assert_allclose(uf(a), np.vectorize(sinc)(a), rtol=1e-12)
    us = gpu.vectorize(["float64(float64, uint32)"])(scaled)
    np.testing.assert_array_equal(us(a, np.uint32(3)), a * 3)


def test_complex():
    uf = gpu.vectorize(["complex128(complex128)"])(lambda a: a * a + 1.0)
    a = rng.random(7) + 1j * rng.random(7)
    np.testing.assert_allclose(uf(a), a * a + 1.0)


def test_options():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        gpu.vectorize([float32(float32)], nopython=True)(lambda x: x)
    assert any("redundant" in str(m.message) for m in w)
    with pytest.raises(KeyError, match="Unrecognized options"):
        gpu.vectorize([float32(float32)], nonexistent=2)
    with pytest.raises(ValueError, match="Unsupported target"):
        gpu.vectorize([float32(float32)], target="parallel")
    with pytest.raises(TypeError, match="scalars"):
        gpu.vectorize(["float32(float32[:])"])(lambda x: x)


def test_attributes_and_pickle():
    assert vadd.__name__ == "vadd" and vadd.nin == 2 and vadd.nout == 1
    assert vadd.types == ["ii->i", "ff->f", "dd->d"]
    again = pickle.loads(pickle.dumps(vadd))
    x = rng.random(5)
    np.testing.assert_array_equal(again(x, x), x + x)


def test_compile_error_names_the_function():
    def bad(x):
        return x.nonexistent_attribute
    uf = gpu.vectorize(["float32(float32)"])(bad)
    with pytest.raises(gpu.CompileError, match="test_vectorize.py"):
        uf(np.zeros(3, np.float32))


def test_unsigned_and_bool():
    us = gpu.vectorize([uint32(uint32, uint32)])(lambda a, b: a ^ b)
    a = rng.integers(0, 2**32, 40, dtype=np.uint32)
    b = rng.integers(0, 2**32, 40, dtype=np.uint32)
    np.testing.assert_array_equal(us(a, b), a ^ b)
    gt = gpu.vectorize(["bool(float64, float64)"])(lambda a, b: a > b)
    x, y = rng.random(30), rng.random(30)
    np.testing.assert_array_equal(gt(x, y), x > y)


def test_empty():
    got = vadd(np.zeros(0), np.zeros(0))
    assert got.shape == (0,)


def test_pickle_local_function_with_globals_and_closure():
    k = 3.0

    def f(x):
        return math.sqrt(x) * k
    uf = gpu.vectorize(["float64(float64)"])(f)
    again = pickle.loads(pickle.dumps(pickle.loads(pickle.dumps(uf))))
    x = rng.random(9)
    np.testing.assert_allclose(again(x), np.sqrt(x) * 3.0)


def test_bad_inputs():
    @gpu.jit
    def kern(a):
        pass
    with pytest.raises(TypeError, match="kernel"):
        gpu.vectorize(["float32(float32)"])(kern)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        vadd(np.zeros(3))
    with pytest.raises(ValueError, match="broadcast"):
        vadd(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="out= has shape"):
        vadd(np.zeros(3), np.zeros(3), out=np.zeros(4))
    with pytest.raises(TypeError, match="unexpected keyword"):
        vadd(np.zeros(3), np.zeros(3), where=True)
    with pytest.raises(ValueError, match="Invalid identity"):
        gpu.vectorize(["float32(float32)"], identity=5)(lambda x: x)
    with pytest.raises(ValueError, match="gufunc layout"):
        gpu.guvectorize(["void(float32[:], float32[:])"], "(n)(n)")(lambda x, y: None)
