"""The runtime on the cpu target, with no compiler involved: device arrays
(host memory there), copies, slicing, DLPack, streams and events as no-ops,
the target switch, and launch configurations rejected before any compile."""
import gc

import numpy as np
import pytest

from conftest import DTYPES, random_array  # noqa: E402
import gpujit
from gpujit import _core, cudadrv
from gpujit import devicearray as da


@pytest.fixture(autouse=True)
def cpu_target():
    _core.set_target("cpu")
    yield
    _core.set_target(None)


def test_target_choice():
    assert cudadrv.current_target() == "cpu"
    _core.set_target("cuda")
    assert _core.get_target() == "cuda"
    _core.set_target("cpu")
    with pytest.raises(ValueError, match="'cuda', 'cpu' or None"):
        _core.set_target("gpu")
    assert _core.get_target() == "cpu"


def test_auto_target_matches_availability():
    _core.set_target(None)
    import os
    forced = os.environ.get("GPUJIT_TARGET")
    expect = forced or ("cuda" if _core.is_available() else "cpu")
    assert _core.get_target() == expect


def test_no_driver_is_clean():
    if _core.is_available():
        pytest.skip("a CUDA driver is present")
    # True only where the cpu target was chosen (GPUJIT_TARGET=cpu): the simulator's answer
    assert cudadrv.is_available() is cudadrv.cpu_chosen()
    with pytest.raises(gpujit.CudaError) as info:
        _core.driver_version()
    assert "CUDA" in str(info.value)
    assert isinstance(info.value, RuntimeError)
    _core.set_target("cuda")  # forcing cuda without a GPU fails at first use, clearly
    with pytest.raises(gpujit.CudaError):
        da.device_array(4)
    assert cudadrv.detect() is False


def test_cpu_device():
    dev = cudadrv.get_current_device()
    assert dev.compute_capability == (9, 0)   # the cc whose features the CPU target implements
    assert dev.multiprocessor_count >= 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip(rng, dtype):
    for shape in [(0,), (1,), (257,), (13, 7), (3, 4, 5)]:
        h = random_array(rng, shape, dtype)
        d = da.to_device(h)
        assert d.shape == h.shape and d.dtype == h.dtype and d.size == h.size
        assert d.nbytes == h.nbytes and d.ndim == h.ndim
        assert h.size == 0 or d.strides == h.strides
        assert d.target == "cpu" and d.is_c_contiguous()
        out = d.copy_to_host()
        assert out.dtype == h.dtype
        np.testing.assert_array_equal(out, h)
        into = np.empty_like(h)
        assert d.copy_to_host(into) is into
        np.testing.assert_array_equal(into, h)


def test_unsupported_dtypes():
    for dt in [np.longdouble, object, "U3", ">f8", ">c16"]:
        with pytest.raises(TypeError, match="unsupported dtype"):
            da.device_array(3, dtype=dt)


def test_device_array_like_and_copy_to_device(rng):
    h = random_array(rng, (5, 6), np.float32)
    d = da.device_array_like(h)
    assert d.shape == h.shape and d.dtype == np.float32
    d.copy_to_device(h)
    np.testing.assert_array_equal(d.copy_to_host(), h)
    d2 = da.device_array_like(d)
    d2.copy_to_device(d)  # device to device
    np.testing.assert_array_equal(d2.copy_to_host(), h)
    with pytest.raises(ValueError):
        d.copy_to_device(np.zeros((6, 5), np.float32))


def test_slicing_views_share_memory(rng):
    h = random_array(rng, (9, 11), np.int32)
    d = da.to_device(h)
    for idx in [np.s_[2:7], np.s_[:, 3], np.s_[::2, ::-3], np.s_[-1], np.s_[1:8:3, 10:2:-2],
                np.s_[..., 4], np.s_[None, 3:5], np.s_[5:5]]:
        v = d[idx]
        np.testing.assert_array_equal(v.copy_to_host(), h[idx])
        assert v.shape == h[idx].shape
    v = d[1:8:3, 10:2:-2]
    assert not v.is_c_contiguous()
    new = random_array(rng, v.shape, np.int32)
    with pytest.raises(ValueError, match="non-contiguous buffer"):
        v.copy_to_device(new)  # one memcpy cannot write a strided view (numba's rule)
    v[...] = new  # setitem scatters into it
    h[1:8:3, 10:2:-2] = new
    np.testing.assert_array_equal(d.copy_to_host(), h)
    d[0, :] = 42
    h[0, :] = 42
    np.testing.assert_array_equal(d.copy_to_host(), h)


def test_integer_index_gives_value():
    d = da.to_device(np.arange(10, dtype=np.float32))
    x = d[3]
    assert x == 3.0 and np.ndim(x) == 0 and x.dtype == np.float32
    assert d[-1] == 9.0
    with pytest.raises(IndexError):
        d[10]
    with pytest.raises(TypeError, match="basic indexing"):
        d[np.array([1, 2])]
    assert len(d) == 10


def test_reshape_transpose(rng):
    h = random_array(rng, (4, 6), np.float64)
    d = da.to_device(h)
    np.testing.assert_array_equal(d.reshape(3, 8).copy_to_host(), h.reshape(3, 8))
    np.testing.assert_array_equal(d.reshape(-1).copy_to_host(), h.ravel())
    np.testing.assert_array_equal(d.T.copy_to_host(), h.T)
    np.testing.assert_array_equal(d.T.reshape(24).copy_to_host(), h.T.ravel())  # a copy, C-contiguous
    with pytest.raises(NotImplementedError):
        d[:, ::2].reshape(12)


def test_views_keep_memory_alive(rng):
    h = random_array(rng, 100, np.int64)
    v = da.to_device(h)[10:20]
    gc.collect()
    np.testing.assert_array_equal(v.copy_to_host(), h[10:20])


def test_interop_cpu(rng):
    h = random_array(rng, (4, 5), np.float32)
    d = da.to_device(h)
    assert d.__dlpack_device__() == (1, 0)
    assert not hasattr(d, "__cuda_array_interface__")
    n = np.from_dlpack(d)  # shares memory
    np.testing.assert_array_equal(n, h)
    n[1, 2] = -7
    assert d[1, 2] == -7
    t = np.from_dlpack(d[:, ::2])
    np.testing.assert_array_equal(t, d.copy_to_host()[:, ::2])


def test_pinned_array_cpu():
    p = da.pinned_array((3, 4), np.int16)
    assert isinstance(p, np.ndarray) and p.shape == (3, 4) and p.dtype == np.int16


def test_streams_and_events_are_inert():
    s = cudadrv.stream()
    assert int(s) == 0 and s.query() is True
    s.synchronize()
    cudadrv.default_stream().synchronize()
    cudadrv.synchronize()
    e1, e2 = cudadrv.event(), cudadrv.event()
    e1.record(s)
    e2.record(s)
    e2.synchronize()
    assert e2.query() is True
    assert e1.elapsed_time(e2) >= 0.0
    with pytest.raises(ValueError):
        cudadrv.event(timing=False).elapsed_time(e2)
    d = da.to_device(np.arange(4.0), stream=s)
    np.testing.assert_array_equal(d.copy_to_host(stream=s), np.arange(4.0))


class NeverCompiles(_core.DispatcherBase):
    __name__ = "never"

    def _specialize(self, args):
        raise AssertionError("bad launches must be rejected before compiling")


@pytest.mark.parametrize("cfg, exc", [
    ((0, 32), ValueError), ((1, 0), ValueError), ((-3, 32), ValueError),
    ((1, 2048), ValueError), ((1, (32, 33)), ValueError), ((1, (1, 1, 65)), ValueError),
    (((1, 70000), 1), ValueError), ((1, (1, 2, 3, 4)), ValueError), (("8", 32), TypeError),
    ((1.5, 32), TypeError), ((1,), ValueError), ((1, 32, 0, -1), ValueError),
    ((1, 32, "s"), TypeError),
])
def test_bad_launch_config(cfg, exc):
    k = NeverCompiles()
    with pytest.raises(exc):
        k[cfg](da.device_array(4))


def test_launch_config_required():
    k = NeverCompiles()
    with pytest.raises(TypeError, match=r"launch configuration missing: kernel\[griddim, blockdim\]"):
        k(1, 2)
    cfg = k[(2, 3), 4, 0, 128]
    assert cfg.griddim == (2, 3, 1) and cfg.blockdim == (4, 1, 1) and cfg.sharedmem == 128


def test_unsupported_argument_rejected_before_compile():
    k = NeverCompiles()
    with pytest.raises(TypeError, match="argument 1: unsupported type"):
        k[1, 1](object())
    with pytest.raises(TypeError, match="unsupported dtype"):
        k[1, 1](np.zeros(3, np.longdouble))
