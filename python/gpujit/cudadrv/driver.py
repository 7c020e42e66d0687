"""numba.cuda.cudadrv.driver under gpujit: the driver's exceptions, the
memory-transfer functions numba exposes there (device_memset,
host_to_device, device_to_host, device_to_device, device_memory_size) and a
small `driver` object.

The transfer functions take what numba's take: device arrays, gpujit
Allocations (memory from current_context().memalloc / memhostalloc) and,
for pinned or mapped host memory, NumPy arrays (their host address is also
their device address: the driver maps pinned memory at the same address
under unified addressing). On the cpu target every one of them is host
memory and the copies are memcpy.
"""
import contextlib
import ctypes

import numpy as np

from .. import _core
from .._core import CudaError, Event
from . import Stream
from ..devicearray import _sync

__all__ = [
    "CudaAPIError", "CudaSupportError", "CudaDriverError", "LinkerError", "driver", "Stream", "Event",
    "device_memset", "host_to_device", "device_to_host", "device_to_device", "device_memory_size",
    "device_pointer", "host_pointer", "is_device_memory",
    "AutoFreePointer", "BaseCUDAMemoryManager", "GetIpcHandleMixin", "HostOnlyCUDAMemoryManager", "MappedMemory",
    "MemoryInfo", "MemoryPointer", "PinnedMemory", "set_memory_manager", "profile_start", "profile_stop",
    "profiling", "get_version",
]


class CudaAPIError(CudaError):
    """A driver call failed: `code` is its CUresult."""

    def __init__(self, code, msg):
        self.code = code
        self.msg = msg
        super().__init__(code, msg)

    def __str__(self):
        return "[%s] %s" % (self.code, self.msg)


class CudaSupportError(ImportError):
    """No usable CUDA driver."""


CudaDriverError = _core.CudaDriverError  # the driver is unusable here (forked after CUDA was initialised)


class LinkerError(RuntimeError):
    pass


class _Driver:
    """numba's driver object: whether a driver is there and what it reports."""

    @property
    def is_available(self):
        return _core.is_available()

    def get_device_count(self):
        return _core.device_count()

    def get_version(self):
        v = _core.driver_version()
        return (v // 1000, (v % 1000) // 10)

    def __repr__(self):
        return "<gpujit CUDA driver%s>" % ("" if _core.is_available() else " (none found)")


driver = _Driver()


def _have_nvjitlink():
    """gpujit links its kernels without nvJitLink."""
    return False


def _is_memory_pointer(obj):
    """A memory manager plugin's memory (cudadrv/emm.py's MemoryPointer and kinds)."""
    return getattr(obj, "__cuda_memory__", False) and hasattr(obj, "device_pointer")


def is_device_memory(obj):
    """True for device arrays, gpujit Allocations and MemoryPointers (a view's gpu_data, a
    memory manager's memory)."""
    return isinstance(obj, (_core.DeviceArrayBase, _core.Allocation)) or _is_memory_pointer(obj)


def _memory(obj):
    """(address, bytes spanned, host-accessible?, target) of a memory-like object."""
    if isinstance(obj, _core.DeviceArrayBase):
        lo, hi = obj._extent()
        alloc = obj._owner if isinstance(obj._owner, _core.Allocation) else None
        host = obj._target == "cpu" or (alloc is not None and alloc.kind != "device")
        return obj._ptr + lo, hi - lo, host, obj._target
    if isinstance(obj, _core.Allocation):
        return obj.ptr, obj.size, obj.kind != "device", "cpu" if obj.kind == "host" else "cuda"
    if _is_memory_pointer(obj):
        alloc = getattr(obj, "owner", None)
        if isinstance(alloc, _core.Allocation):   # a device array's gpu_data
            return int(obj.device_pointer), obj.size, alloc.kind != "device", "cpu" if alloc.kind == "host" else "cuda"
        target = _core.get_target()
        return int(obj.device_pointer), obj.size, target == "cpu" or hasattr(obj, "host_pointer"), target
    a = np.asarray(obj)
    return a.ctypes.data, a.nbytes, True, _core.get_target()


def device_pointer(obj):
    """The device address of a device array, Allocation or mapped NumPy array."""
    return _memory(obj)[0]


def host_pointer(obj, readonly=False):
    """The host address of a NumPy array or other buffer."""
    a = np.asarray(obj) if not isinstance(obj, _core.Allocation) else obj
    return a.ptr if isinstance(a, _core.Allocation) else a.ctypes.data


def device_memory_size(obj):
    """Bytes the device memory of obj spans."""
    return _memory(obj)[1]


def _device_bytes(obj, size):
    """A uint8 device-array view of obj's first `size` bytes, to copy through."""
    ptr, n, _, target = _memory(obj)
    if size > n:
        raise ValueError("%d bytes asked for, but the memory holds %d" % (size, n))
    owner = obj if isinstance(obj, _core.Allocation) or _is_memory_pointer(obj) else getattr(obj, "_owner", obj)
    v = _core.DeviceArrayBase.__new__(_core.DeviceArrayBase)
    _core.DeviceArrayBase.__init__(v, (size,), None, dict(_core.dtype_codes)["uint8"], owner, ptr,
                                   target=target)
    return v


def _host_bytes(ary, size):
    m = memoryview(ary).cast("B") if not isinstance(ary, np.ndarray) else np.asarray(ary).reshape(-1).view(np.uint8)
    return m[:size]


def device_memset(dst, val, size, stream=0):
    """Set `size` bytes of dst to the byte `val`."""
    ptr, n, host, _ = _memory(dst)
    if size > n:
        raise ValueError("%d bytes asked for, but the memory holds %d" % (size, n))
    if host:
        _sync(stream)  # work queued before on the stream comes first
        ctypes.memset(ptr, val & 0xFF, size)
        return
    buf = np.full(size, val & 0xFF, dtype=np.uint8)
    _device_bytes(dst, size)._htod(0, buf, stream)
    _sync(stream)  # `buf` is a temporary


def host_to_device(dst, src, size, stream=0):
    """Copy `size` bytes from host buffer src to device memory dst."""
    _device_bytes(dst, size)._htod(0, _host_bytes(src, size), stream)


def device_to_host(dst, src, size, stream=0):
    """Copy `size` bytes from device memory src into host buffer dst."""
    _device_bytes(src, size)._dtoh(0, _host_bytes(dst, size), stream)


def device_to_device(dst, src, size, stream=0):
    """Copy `size` bytes between device memories."""
    _device_bytes(dst, size)._dtod(0, _device_bytes(src, size), 0, size, stream)


# numba's External Memory Management names live in this module too
from .emm import (AutoFreePointer, BaseCUDAMemoryManager, GetIpcHandleMixin, HostOnlyCUDAMemoryManager,  # noqa: E402
                  MappedMemory, MemoryInfo, MemoryPointer, PinnedMemory, set_memory_manager)


def profile_start():
    """Start the profiler's collection in the current context (cuProfilerStart; nothing on the
    cpu target). With GPUJIT_PROFILE set, gpujit's own summary counts from here (the first call
    drops what came before it)."""
    from .. import _profiler as profiler
    profiler.start()
    _core.profiler(True)


def profile_stop():
    """Stop the profiler's collection in the current context (cuProfilerStop), and with
    GPUJIT_PROFILE set, gpujit's own summary's until the next profile_start()."""
    from .. import _profiler as profiler
    profiler.stop()
    _core.profiler(False)


@contextlib.contextmanager
def profiling():
    """profile_start() on entry, profile_stop() on exit."""
    profile_start()
    try:
        yield
    finally:
        profile_stop()


def get_version():
    """The driver's CUDA version, (major, minor)."""
    return driver.get_version()
