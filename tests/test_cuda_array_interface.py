"""The CUDA Array Interface's consumer side (as_cuda_array, from_cuda_array_interface,
is_cuda_array, the launcher's stream synchronisation) and what goes with it: the
CUDA_ARRAY_INTERFACE_SYNC setting, a device array's default stream, external streams, the
deallocation count. On the cpu target device arrays are host memory, so the interface is
refused there; the tests marked `cuda` run where a GPU is the target."""
import importlib
from unittest import mock

import numpy as np
import pytest

import gpujit
from gpujit import _core
from gpujit import devicearray as da

cuda_only = pytest.mark.skipif(gpujit.current_target() != "cuda", reason="the interface describes GPU memory")
cpu_only = pytest.mark.skipif(gpujit.current_target() != "cpu", reason="checks the cpu target's refusal")


class Foreign:
    """Another library's array, seen only through its interface."""

    def __init__(self, arr):
        self._arr = arr
        self.__cuda_array_interface__ = arr.__cuda_array_interface__


def test_config_default_and_environment(monkeypatch):
    from gpujit import config
    assert config.CUDA_ARRAY_INTERFACE_SYNC == 1
    monkeypatch.setenv("NUMBA_CUDA_ARRAY_INTERFACE_SYNC", "0")
    try:
        assert importlib.reload(config).CUDA_ARRAY_INTERFACE_SYNC == 0
        monkeypatch.setenv("GPUJIT_CUDA_ARRAY_INTERFACE_SYNC", "1")
        assert importlib.reload(config).CUDA_ARRAY_INTERFACE_SYNC == 1
    finally:
        monkeypatch.delenv("NUMBA_CUDA_ARRAY_INTERFACE_SYNC")
        monkeypatch.delenv("GPUJIT_CUDA_ARRAY_INTERFACE_SYNC")
        importlib.reload(config)


def test_default_stream_is_zero():
    d = gpujit.device_array(4)
    assert d.stream == 0 and d[1:].stream == 0 and d.bind(0).stream == 0
    s = gpujit.stream()
    assert d.bind(s).stream is s
    assert gpujit.device_array(4, stream=s).stream is s


def test_is_cuda_array_of_host_arrays():
    assert not gpujit.is_cuda_array(np.arange(3))
    assert not gpujit.is_cuda_array(3)


def test_masked_interface_refused():
    desc = {"shape": (3,), "typestr": "<f8", "data": (0, False), "version": 3, "strides": None,
            "stream": None, "mask": object()}
    with pytest.raises(NotImplementedError, match="Masked arrays are not supported"):
        gpujit.from_cuda_array_interface(desc)


def test_interface_must_be_a_dict():
    with pytest.raises(TypeError, match="is a dict"):
        gpujit.from_cuda_array_interface([("shape", (3,))])
    with pytest.raises(TypeError, match="doesn't implement the cuda array interface"):
        gpujit.as_cuda_array(np.arange(3))


@cpu_only
def test_cpu_target_refuses_the_interface():
    desc = {"shape": (3,), "typestr": "<f8", "data": (0, False), "version": 3, "strides": None, "stream": None}
    with pytest.raises(NotImplementedError, match="cpu target"):
        gpujit.from_cuda_array_interface(desc)
    with pytest.raises(AttributeError, match="cuda target"):
        gpujit.to_device(np.arange(3)).__cuda_array_interface__
    # mapped memory is a plain host array there
    assert not gpujit.is_cuda_array(gpujit.mapped_array(4))


def test_sync_hook_follows_the_setting():
    from gpujit import config
    with mock.patch.object(gpujit.cudadrv.Stream, "synchronize", return_value=None) as sync:
        da._cai_sync(0x1234)
        assert sync.call_count == 1
        old = config.CUDA_ARRAY_INTERFACE_SYNC
        config.CUDA_ARRAY_INTERFACE_SYNC = 0
        try:
            da._cai_sync(0x1234)
        finally:
            config.CUDA_ARRAY_INTERFACE_SYNC = old
        assert sync.call_count == 1


def test_streams_say_whether_external():
    assert not gpujit.default_stream().external
    if gpujit.current_target() == "cuda":
        s = gpujit.stream()
        assert not s.external
        assert gpujit.external_stream(s.handle).external


def test_deallocations_count_frees():
    ctx = gpujit.current_context()
    deallocs = ctx.memory_manager.deallocations
    deallocs.clear()
    assert len(deallocs) == 0
    d = gpujit.to_device(np.arange(100))
    v = d[10:]
    del d
    assert len(deallocs) == 0      # the view keeps the memory
    np.testing.assert_array_equal(v.copy_to_host(), np.arange(10, 100))
    del v
    assert len(deallocs) == 1
    deallocs.clear()
    assert len(deallocs) == 0 and deallocs.count == 0


# ---- the cuda target ----

@cuda_only
def test_as_cuda_array_views_the_same_memory(rng):
    h = rng.standard_normal(10)
    d = gpujit.to_device(h)
    w = gpujit.as_cuda_array(Foreign(d))
    assert w.device_ctypes_pointer.value == d.device_ctypes_pointer.value
    np.testing.assert_array_equal(w.copy_to_host(), h)
    assert w.stream == 0


@cuda_only
def test_consumed_stream_is_external_and_waited_for():
    s = gpujit.stream()
    f = Foreign(gpujit.device_array(10, stream=s))
    with mock.patch.object(gpujit.cudadrv.Stream, "synchronize", return_value=None) as sync:
        w = gpujit.as_cuda_array(f)
    sync.assert_called_once_with()
    assert w.stream.external and int(w.stream.handle) == int(s.handle)
    with mock.patch.object(gpujit.cudadrv.Stream, "synchronize", return_value=None) as sync:
        gpujit.as_cuda_array(f, sync=False)
        gpujit.as_cuda_array(Foreign(gpujit.device_array(10)))
    sync.assert_not_called()
    bad = dict(f.__cuda_array_interface__, stream=0)
    with pytest.raises(ValueError, match="None or a nonzero int"):
        gpujit.from_cuda_array_interface(bad)


@cuda_only
def test_launch_waits_for_each_producer_stream():
    @gpujit.jit
    def f(x, y):
        pass

    a = Foreign(gpujit.device_array(10, stream=gpujit.stream()))
    b = Foreign(gpujit.device_array(10, stream=gpujit.stream()))
    with mock.patch.object(gpujit.cudadrv.Stream, "synchronize", return_value=None) as sync:
        f[1, 1](a, b)
    assert sync.call_count == 2
    from gpujit import config
    config.CUDA_ARRAY_INTERFACE_SYNC = 0
    try:
        with mock.patch.object(gpujit.cudadrv.Stream, "synchronize", return_value=None) as sync:
            f[1, 1](a, b)
        sync.assert_not_called()
    finally:
        config.CUDA_ARRAY_INTERFACE_SYNC = 1


@cuda_only
def test_mapped_and_managed_arrays_export_the_interface():
    s = gpujit.stream()
    for make in (gpujit.mapped_array, gpujit.managed_array):
        assert make(10).__cuda_array_interface__["stream"] is None
        m = make(10, stream=s)
        cai = m.__cuda_array_interface__
        assert cai["stream"] == int(s.handle) and cai["data"][0] == m.ctypes.data


@cuda_only
def test_ufuncs_take_foreign_outputs(rng):
    @gpujit.vectorize(["f8(f8, f8)"], target="cuda")
    def vadd(a, b):
        return a + b

    h = rng.standard_normal(10)
    out = Foreign(gpujit.device_array(10))
    got = vadd(h, 6.0, out=out)
    np.testing.assert_array_equal(got.copy_to_host(), h + 6.0)
    assert got.device_ctypes_pointer.value == out._arr.device_ctypes_pointer.value


def test_frees_counts_host_allocations():
    before = _core.frees()
    a = _core.alloc(64)
    del a
    assert _core.frees() == before + 1


def test_mapped_array_views_export_and_results_do_not():
    # the class alone (on the cuda target mapped_array makes it over pinned memory)
    h = np.arange(12.0)
    m = h.view(da.MappedArray)
    start = h.__array_interface__["data"][0]
    m._cai_span, m._cai_stream = (start, start + h.nbytes), None
    v = m[3:].reshape(3, 3)
    cai = v.__cuda_array_interface__
    assert cai["data"] == (start + 24, False) and cai["shape"] == (3, 3) and cai["strides"] is None
    assert m[::2].__cuda_array_interface__["strides"] == (16,)
    assert gpujit.is_cuda_array(m) and not gpujit.is_cuda_array(m * 2)
