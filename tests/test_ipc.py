"""CUDA IPC (gpujit.ipc): handles of device memory, pickled to another process and opened
there. The handle objects, their pickling and their checks run on either target; the
cpu target refuses IPC itself (its device arrays are host memory). Sharing memory with
a spawned process runs where a GPU is the target."""
import concurrent.futures
import multiprocessing as mp
import os
import pickle

import numpy as np
import pytest

import gpujit
from gpujit import _core, ipc
from gpujit.cudadrv.emm import MemoryPointer

on_gpu = gpujit.current_target() == "cuda"
cuda_only = pytest.mark.skipif(not on_gpu, reason="shares GPU memory between processes")
cpu_only = pytest.mark.skipif(on_gpu, reason="checks the cpu target's refusal")


def test_mem_handle_bytes():
    h = ipc.IpcMemHandle(b"\x01\x02")
    assert h.reserved == b"\x01\x02" + b"\0" * 62 and len(h.reserved) == 64
    assert h == ipc.IpcMemHandle(h.reserved) and pickle.loads(pickle.dumps(h)) == h
    with pytest.raises(ValueError, match="64 bytes"):
        ipc.IpcMemHandle(bytes(65))


def test_handle_pickles_without_its_memory():
    owner = object()
    h = ipc.IpcHandle(owner, bytes(range(64)), 80, "0000:01:00.0", offset=24)
    r = pickle.loads(pickle.dumps(h))
    assert r.base is None and h.base is owner
    assert (r.handle.reserved, r.size, r.source_info, r.offset) == (bytes(range(64)), 80, "0000:01:00.0", 24)
    with pytest.raises(ValueError, match="opening IpcHandle from original process"):
        h.open()
    with pytest.raises(ValueError, match="IpcHandle not opened"):
        r.close()
    a = pickle.loads(pickle.dumps(ipc.IpcArrayHandle(r, dict(shape=(3,), strides=(8,), dtype=np.dtype("f8")))))
    assert a._array_desc["shape"] == (3,) and a._ipc_handle.size == 80


def test_gpu_data_is_the_allocation_or_a_pointer_into_it():
    d = gpujit.to_device(np.arange(10, dtype=np.int64))
    assert isinstance(d.gpu_data, _core.Allocation) and d.view(np.uint64).gpu_data is d.gpu_data
    p = d[3:8].gpu_data
    assert isinstance(p, MemoryPointer) and p.ptr == d._ptr + 24 and p.size == 40 and p.owner is d.gpu_data
    assert p == d[3:8].gpu_data and p != d[3:].gpu_data
    assert d[::-1].gpu_data is d.gpu_data
    # the driver's copies and DeviceArray(gpu_data=...) take it
    host = np.zeros(5, np.int64)
    gpujit.cudadrv.driver.device_to_host(host, p, 40)
    np.testing.assert_array_equal(host, np.arange(3, 8))
    v = gpujit.DeviceArray((5,), None, np.int64, gpu_data=p)
    np.testing.assert_array_equal(v.copy_to_host(), np.arange(3, 8))
    assert gpujit.cudadrv.driver.is_device_memory(p)


def test_devices_module():
    assert gpujit.devices.get_context() == gpujit.current_context()
    assert len(gpujit.devices.gpus) >= 1


@cpu_only
def test_cpu_target_refuses_ipc():
    d = gpujit.to_device(np.arange(4))
    with pytest.raises(NotImplementedError, match="cpu target"):
        d.get_ipc_handle()
    with pytest.raises(NotImplementedError, match="not host memory"):
        gpujit.current_context().get_ipc_handle(d.gpu_data)
    with pytest.raises(NotImplementedError, match="cpu target"):
        with gpujit.open_ipc_array(bytes(64), 4, np.int64):
            pass
    with pytest.raises(NotImplementedError, match="cpu target"):
        _core.ipc_get_handle(d._ptr)


def test_bad_memory_is_a_type_error():
    with pytest.raises(TypeError, match="get_ipc_handle.. takes device memory"):
        gpujit.current_context().get_ipc_handle(np.arange(3))


# ---- on a GPU: another process opens the memory ----

def _child_open_array(handle_bytes, size):
    with gpujit.open_ipc_array(handle_bytes, shape=size // 8, dtype=np.int64) as d:
        return os.getpid(), d.copy_to_host()


def _child_with(arr_handle):
    with arr_handle as d:
        got = d.copy_to_host()
        try:
            with arr_handle:
                pass
        except ValueError as e:
            again = str(e)
    return os.getpid(), got, again


def _child_open(handle):
    d = handle.open_array(gpujit.current_context(), shape=handle.size // 8, dtype=np.int64)
    got = d.copy_to_host()
    handle.close()
    return os.getpid(), got


@pytest.fixture(scope="module")
def pool():
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as exe:
        yield exe


class _Foreign:
    def __init__(self, arr):
        self._arr = arr
        self.__cuda_array_interface__ = arr.__cuda_array_interface__


@cuda_only
def test_other_process_reads_the_memory(pool, rng):
    h = rng.integers(-10**9, 10**9, 10)
    d = gpujit.to_device(h)
    ch = gpujit.current_context().get_ipc_handle(d.gpu_data)
    pid, got = pool.submit(_child_open_array, ch.handle.reserved, ch.size).result(timeout=60)
    assert pid != os.getpid()
    np.testing.assert_array_equal(got, h)
    for index in (slice(3, None), slice(3, 8), slice(None, 8), slice(None, None, -1)):
        for foreign in (False, True):
            view = d[index]
            if foreign and index.step is None:
                view = gpujit.as_cuda_array(_Foreign(view))
            expect = view.copy_to_host()
            _, got, again = pool.submit(_child_with, view.get_ipc_handle()).result(timeout=60)
            np.testing.assert_array_equal(got, expect)
            assert again == "IpcHandle is already opened"
            if index.step is None:
                ch = gpujit.current_context().get_ipc_handle(view.gpu_data)
                _, got = pool.submit(_child_open, pickle.loads(pickle.dumps(ch))).result(timeout=60)
                np.testing.assert_array_equal(got, expect)
