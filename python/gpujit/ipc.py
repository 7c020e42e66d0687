"""CUDA IPC, as numba.cuda's: device memory shared with another process.

    h = d.get_ipc_handle()            # a device array's handle, picklable
    # in another process (multiprocessing, spawn):
    with h as arr:                    # the same memory, mapped here
        ...
    with gpujit.open_ipc_array(h.handle.reserved, shape, dtype) as arr: ...

current_context().get_ipc_handle(memory) gives the IpcHandle of an Allocation, a device
array's gpu_data or another library's array (__cuda_array_interface__): `size` bytes at
`offset` into the allocation its 64-byte `handle` names (the driver's handle names whole
allocations: runtime/ipc.c). Opening maps the allocation (cuIpcOpenMemHandle) in the
opening process only, not the one that made the handle; close() unmaps it. The cpu
target's memory is the host's: IPC raises NotImplementedError there."""
import contextlib

import numpy as np

from . import _core

__all__ = ["IpcMemHandle", "IpcHandle", "IpcArrayHandle", "open_ipc_array"]

_HANDLE_SIZE = 64


class IpcMemHandle:
    """The driver's handle of an allocation (CUipcMemHandle): its 64 bytes are `reserved`."""
    __slots__ = ("reserved",)

    def __init__(self, reserved):
        data = bytes(reserved)
        if len(data) > _HANDLE_SIZE:
            raise ValueError("an IPC handle is %d bytes, not %d" % (_HANDLE_SIZE, len(data)))
        self.reserved = data.ljust(_HANDLE_SIZE, b"\0")   # a C char array drops trailing NULs

    def __eq__(self, other):
        return isinstance(other, IpcMemHandle) and other.reserved == self.reserved

    def __hash__(self):
        return hash(self.reserved)

    def __reduce__(self):
        return (IpcMemHandle, (self.reserved,))

    def __repr__(self):
        return "<IpcMemHandle %s...>" % self.reserved[:8].hex()


def _span(memory):
    """(device address, bytes) of the memory a handle is asked for."""
    from .cudadrv.emm import MemoryPointer
    from .devicearray import _extent
    if isinstance(memory, _core.DeviceArrayBase):
        if memory._target != "cuda":
            raise NotImplementedError("CUDA IPC shares GPU memory; this array is on the cpu target (host memory)")
        lo, hi = memory._extent()
        return memory._ptr + lo, hi - lo
    if isinstance(memory, _core.Allocation):
        if memory.kind != "device":
            raise NotImplementedError("CUDA IPC shares device memory, not %s memory" % memory.kind)
        return memory.ptr, memory.size
    if isinstance(memory, MemoryPointer):
        return memory.ptr, memory.size
    cai = getattr(memory, "__cuda_array_interface__", None)
    if cai is None:
        raise TypeError("get_ipc_handle() takes device memory (an Allocation, a device array, its gpu_data or an "
                        "object with __cuda_array_interface__), not %s" % type(memory).__name__)
    itemsize = np.dtype(cai["typestr"]).itemsize
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    if strides is None:
        strides, step = [], itemsize
        for n in reversed(shape):
            strides.insert(0, step)
            step *= max(n, 1)
    lo, hi = _extent(shape, tuple(strides), itemsize)
    return cai["data"][0] + lo, hi - lo


def _source_device():
    from .cudadrv import get_current_device
    return get_current_device().pci_bus_id


def ipc_handle(memory):
    """The IpcHandle of `memory` (see the module's doc)."""
    ptr, size = _span(memory)
    handle, base, _ = _core.ipc_get_handle(ptr)
    return IpcHandle(memory, IpcMemHandle(handle), size, _source_device(), offset=ptr - base)


def _rebuild_handle(reserved, size, source_info, offset):
    return IpcHandle(None, IpcMemHandle(reserved), size, source_info, offset)


class IpcHandle:
    """`size` bytes at `offset` into the allocation `handle` (an IpcMemHandle) names, made on
    the device `source_info` names (its PCI bus id). `base` is the memory it was made from,
    None once pickled: only another process opens it."""

    def __init__(self, base, handle, size, source_info=None, offset=0):
        self.base = base
        self.handle = handle if isinstance(handle, IpcMemHandle) else IpcMemHandle(getattr(handle, "reserved", handle))
        self.size, self.source_info, self.offset = int(size), source_info, int(offset)
        self._mapped = None    # the allocation's address here while open

    def __reduce__(self):
        return (_rebuild_handle, (self.handle.reserved, self.size, self.source_info, self.offset))

    def __repr__(self):
        return "<IpcHandle of %d bytes at offset %d%s>" % (self.size, self.offset, ", open" if self._mapped else "")

    def _open(self):
        if self._mapped is not None:
            raise ValueError("IpcHandle is already opened")
        if self.base is not None:
            raise ValueError("opening IpcHandle from original process")
        self._mapped = _core.ipc_open(self.handle.reserved)
        return self._mapped + self.offset

    def open(self, context=None):
        """Map the memory into this process (on the current device): a uint8 device array of
        its `size` bytes (what gpujit's copy functions take where numba gives a pointer)."""
        return self._array(self._open(), (self.size,), None, np.uint8)

    def open_staged(self, context=None):
        """numba copies through the host when the memory is on another device; the driver
        maps it for any device here (peer access is enabled as needed), so this is open()."""
        return self.open(context)

    def open_array(self, context, shape, dtype, strides=None, first=0):
        """Map the memory: a device array of `shape`, `dtype` and `strides` (C-contiguous
        when None) over it, its element 0 `first` bytes in."""
        return self._array(self._open() + first, shape, strides, dtype)

    def _array(self, ptr, shape, strides, dtype):
        from .devicearray import DeviceArray, _dtype_code, _shape_tuple
        v = DeviceArray.__new__(DeviceArray)
        _core.DeviceArrayBase.__init__(v, _shape_tuple(shape), None if strides is None else tuple(strides),
                                       _dtype_code(dtype), self, ptr, target="cuda",
                                       device=_core.current_device())
        return v

    def close(self):
        """Unmap the memory open() mapped (arrays over it must not be used after)."""
        if self._mapped is None:
            raise ValueError("IpcHandle not opened")
        mapped, self._mapped = self._mapped, None
        _core.ipc_close(mapped)


class IpcArrayHandle:
    """A device array's IPC handle (DeviceArray.get_ipc_handle()): `with h as arr:` opens
    the same array in another process and closes it after; open() / close() do it by hand."""

    def __init__(self, ipc_handle, array_desc, first=0):
        self._ipc_handle, self._array_desc, self._first = ipc_handle, dict(array_desc), first

    def open(self):
        d = self._array_desc
        return self._ipc_handle.open_array(None, d["shape"], d["dtype"], d.get("strides"), self._first)

    def close(self):
        self._ipc_handle.close()

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<IpcArrayHandle %s>" % self._array_desc


def array_ipc_handle(arr):
    """DeviceArray.get_ipc_handle()."""
    lo, _ = arr._extent()
    return IpcArrayHandle(ipc_handle(arr), dict(shape=arr.shape, strides=arr.strides, dtype=arr.dtype), first=-lo)


@contextlib.contextmanager
def open_ipc_array(handle, shape, dtype, strides=None, offset=0):
    """numba.cuda.open_ipc_array: the device array of `shape` and `dtype` (C-contiguous,
    or `strides`) in another process's allocation, `handle` being its 64 handle bytes (an
    IpcHandle's handle.reserved) or an IpcMemHandle, `offset` bytes in; closed when the
    block ends."""
    dtype = np.dtype(dtype)
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    size = int(np.prod(shape)) * dtype.itemsize
    ipch = IpcHandle(None, handle if isinstance(handle, IpcMemHandle) else IpcMemHandle(handle), size, offset=offset)
    arr = ipch.open_array(None, shape, dtype, strides)
    try:
        yield arr
    finally:
        ipch.close()
