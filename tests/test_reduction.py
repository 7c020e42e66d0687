"""gpujit.Reduce, gpujit.typing.typeof and gpujit.kernels.transpose against NumPy."""
import numpy as np
import pytest

import gpujit as gpu
from gpujit import types
from gpujit.kernels.transpose import transpose
from gpujit.typing.typeof import typeof

rng = np.random.default_rng()
sum_reduce = gpu.Reduce(lambda a, b: a + b)


@pytest.mark.parametrize("n", [1, 15, 127, 128, 129, 1025, 34567, 200003])
def test_sum(n):
    x = rng.integers(-1000, 1000, n).astype(np.int64)
    assert sum_reduce(x) == x.sum()
    assert sum_reduce(gpu.to_device(x)) == x.sum()


@pytest.mark.parametrize("step", [2, 3])
def test_strided_views_and_more_elements_than_threads(step):
    # more elements than the first pass has threads (each folds several), read through a
    # strided view of a device array, which takes the kernel compiled for any stride
    x = rng.integers(-1000, 1000, 700001 * step).astype(np.int64)
    d = gpu.to_device(x)
    assert sum_reduce(d[::step]) == x[::step].sum()
    assert sum_reduce(x[1::step]) == x[1::step].sum()
    assert gpu.Reduce(lambda a, b: min(a, b))(d[::step], init=0) == min(0, x[::step].min())


def test_max_prod_init_size_res():
    x = rng.random(3717)
    assert gpu.reduce(lambda a, b: max(a, b))(x, init=0) == x.max()
    y = rng.random(64) + 0.5
    np.testing.assert_allclose(gpu.Reduce(lambda a, b: a * b)(y, init=1), y.prod())
    assert sum_reduce(x, init=3) == pytest.approx(x.sum() + 3)
    assert sum_reduce(x, size=100) == pytest.approx(x[:100].sum())
    res = gpu.to_device(np.full(2, np.nan))
    assert sum_reduce(x, res=res) is None
    assert res.copy_to_host()[0] == pytest.approx(x.sum())
    assert np.isnan(res.copy_to_host()[1])


class ProtocolStream:
    """A stream known only by the CUDA stream protocol, as other libraries' streams are."""

    def __init__(self, stream):
        self._stream = stream

    def __cuda_stream__(self):
        return (0, self._stream.handle)


def test_streams_of_every_kind():
    x = rng.integers(-1000, 1000, 5001).astype(np.int64)
    s = gpu.stream()
    for stream in (0, None, s, s.handle, ProtocolStream(s)):
        res = gpu.to_device(np.full(1, -7, np.int64))
        assert sum_reduce(x, stream=stream) == x.sum()
        assert sum_reduce(gpu.to_device(x, stream=stream), stream=stream) == x.sum()
        add = gpu.vectorize(["int64(int64, int64)"])(lambda a, b: a + b)
        np.testing.assert_array_equal(add(x, x, stream=stream), 2 * x)
        assert sum_reduce(x, res=res, stream=stream) is None
        s.synchronize()
        assert res.copy_to_host()[0] == x.sum()
    with pytest.raises(TypeError, match="stream"):
        sum_reduce(x, stream="s")


def test_init_folds_into_the_first_blocks_value(rng):
    """init is folded into the value of the block holding element 0, before the blocks' values
    combine, as numba folds it: a product that overflows when init comes last does not here.
    Element 300 lies outside block 0 for any block size up to 300 (the grid has several blocks)."""
    x = rng.uniform(0.999, 1.001, 4096)
    x[0] = x[300] = 1e300
    got = gpu.Reduce(lambda a, b: a * b)(x, init=1e-300)
    assert np.isfinite(got)
    np.testing.assert_allclose(got, 1e300 * np.prod(np.delete(x, [0, 300])), rtol=1e-9)
    # the sum's init counts once, whatever the grid
    y = rng.standard_normal(10000)
    np.testing.assert_allclose(sum_reduce(y, init=7.5), y.sum() + 7.5, rtol=1e-12)


def test_empty_and_dtype():
    assert sum_reduce(np.zeros(0), init=5) == 5
    r = sum_reduce(np.arange(100, dtype=np.int32))
    assert r == 4950 and r.dtype == np.int32
    with pytest.raises(TypeError, match="1-D"):
        sum_reduce(np.zeros((2, 2)))


def test_typeof():
    assert typeof(1.0) == types.float64 and typeof(3) == types.int64 and typeof(True) == types.boolean
    assert typeof(np.uint16(1)) == types.uint16 and typeof(1j) == types.complex128
    assert typeof(np.zeros((2, 3), np.float32)) == types.Array(types.float32, 2, "C")
    assert typeof(np.zeros((2, 3)).T) == types.Array(types.float64, 2, "F")
    assert typeof(np.zeros((4, 4))[:, ::2]) == types.Array(types.float64, 2, "A")
    assert typeof((1, 2)) == types.UniTuple(types.int64, 2)
    assert typeof((1, 2.0)) == types.Tuple([types.int64, types.float64])
    assert typeof(gpu.to_device(np.zeros(3, np.int8))) == types.Array(types.int8, 1, "C")
    assert gpu.typeof(np.float32(1)) == types.float32
    with pytest.raises(ValueError):
        typeof(object())


@pytest.mark.parametrize("rows, cols, dtype", [(5, 6, np.float64), (33, 17, np.complex128), (16, 16, np.bool_),
                                               (100, 3, np.int32)])
def test_transpose(rows, cols, dtype):
    x = (rng.random((cols, rows)) * 100).astype(dtype)
    y = gpu.to_device(np.zeros((rows, cols), dtype))
    assert transpose(gpu.to_device(x), y) is y
    np.testing.assert_array_equal(y.copy_to_host(), x.T)
    np.testing.assert_array_equal(transpose(x).copy_to_host(), x.T)
    with pytest.raises(ValueError):
        transpose(x, gpu.to_device(np.zeros((rows + 1, cols), dtype)))
