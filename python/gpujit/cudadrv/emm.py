"""numba's External Memory Management (EMM) plugin interface, and the
page-locking of host memory others own (mempin, cuda.mapped).

A plugin is a class (set_memory_manager(cls), or a module named by
$NUMBA_CUDA_MEMORY_MANAGER / $GPUJIT_CUDA_MEMORY_MANAGER whose
_numba_memory_manager is that class) or an instance set on a context
(current_context().memory_manager = obj). Once set, gpujit takes every
device array's memory from its memalloc, pinned and mapped host arrays' from
its memhostalloc, pinned host memory from its mempin, and asks it for
get_memory_info and reset, on both targets: on the cpu target a plugin's
memory must be host memory (kernels read it in place). One plugin instance
per (target, device), made with context= that device's Context and
initialize()d before its first allocation.

MemoryPointer and its kinds hold the address as an int and call the finalizer
when collected; they need no driver, so a plugin can be written and tested
without a GPU.
"""
import abc
import contextlib
import ctypes
import importlib
import os
import weakref

import numpy as np

from .. import _core
from . import Context, MemoryInfo, current_context

__all__ = ["BaseCUDAMemoryManager", "HostOnlyCUDAMemoryManager", "GetIpcHandleMixin", "MemoryPointer",
           "AutoFreePointer", "MappedMemory", "PinnedMemory", "MemoryInfo", "set_memory_manager", "mapped"]

EMM_INTERFACE_VERSION = 1


def _address(pointer):
    """An int from what numba's pointers accept: an int, ctypes.c_void_p / c_uint64, or
    an object with __int__ (cuda-python's CUdeviceptr)."""
    if isinstance(pointer, ctypes._SimpleCData):
        return int(pointer.value or 0)
    return int(pointer or 0)


class MemoryPointer:
    """Memory a plugin owns: `size` bytes at `pointer` (an int or a ctypes pointer) in
    `context`; `owner` is kept alive with it; `finalizer` is called once, when the object
    is collected (or at free())."""

    __cuda_memory__ = True

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        self.context = context
        self.device_pointer = _address(pointer)
        self.size = size
        self.handle = self.device_pointer
        self.is_managed = finalizer is not None
        self.refct = 1
        self._owner = owner
        if finalizer is not None:
            self._finalizer = weakref.finalize(self, finalizer)

    @property
    def ptr(self):
        """The address device arrays use (gpujit's Allocation spells it so)."""
        return self.device_pointer

    def __eq__(self, other):
        """The same bytes (a device array's gpu_data is made anew at each access)."""
        return isinstance(other, MemoryPointer) and (other.device_pointer, other.size) == (self.device_pointer,
                                                                                          self.size)

    def __hash__(self):
        return hash((self.device_pointer, self.size))

    @property
    def owner(self):
        return self if self._owner is None else self._owner

    @property
    def device_pointer_value(self):
        return self.device_pointer or None

    @property
    def device_ctypes_pointer(self):
        return ctypes.c_void_p(self.device_pointer)

    def own(self):
        return self

    def free(self):
        """Release the memory now (the finalizer runs)."""
        if self.is_managed:
            if not self._finalizer.alive:
                raise RuntimeError("Freeing dead memory")
            self._finalizer()

    def memset(self, byte, count=None, stream=0):
        from .driver import device_memset
        device_memset(self, byte, self.size if count is None else count, stream=stream)

    def view(self, start, stop=None):
        size = (self.size if stop is None else stop) - start
        if size < 0:
            raise RuntimeError("size cannot be negative")
        if not self.device_pointer:
            if size:
                raise RuntimeError("non-empty slice into empty slice")
            return self
        return MemoryPointer(self.context, self.device_pointer + start, size, owner=self.owner)

    def __repr__(self):
        return "<%s 0x%x, %d bytes>" % (type(self).__name__, self.device_pointer, self.size)


class AutoFreePointer(MemoryPointer):
    """A MemoryPointer freed when its last reference goes (numba's reference count
    starts at 0 for it; in Python the object's own lifetime is that count)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.refct -= 1


class MappedMemory(AutoFreePointer):
    """Host memory mapped into the device's address space: `size` bytes at `pointer` in
    `context` (kept as `host_pointer`, for the host) and `device_pointer` for kernels
    (default: the same address, as under unified addressing); `owner` is kept alive with
    it; `finalizer` is called once, when the object is collected."""

    def __init__(self, context, pointer, size, owner=None, finalizer=None, device_pointer=None):
        self.owned = owner
        self.host_pointer = _address(pointer)
        super().__init__(context, self.host_pointer if device_pointer is None else device_pointer, size,
                         finalizer=finalizer)
        self.handle = self.host_pointer


class PinnedMemory:
    """Page-locked host memory that is not mapped: only host code reaches it. `size` bytes
    at `pointer` in `context`; `owner` is kept alive with it; `finalizer` is called once,
    when the object is collected."""

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        self.context = context
        self.owned = owner
        self.size = size
        self.host_pointer = _address(pointer)
        self.handle = self.host_pointer
        self.is_managed = finalizer is not None
        if finalizer is not None:
            weakref.finalize(self, finalizer)

    def own(self):
        return self


class BaseCUDAMemoryManager(abc.ABC):
    """The plugin interface: a subclass allocates device memory (memalloc), pinned host
    memory (memhostalloc, mempin) and reports on it; interface_version is 1. gpujit makes
    the plugin with the keyword `context` (required: RuntimeError without it); other args
    and kwargs are the subclass's own."""

    def __init__(self, *args, **kwargs):
        if "context" not in kwargs:
            raise RuntimeError("Memory manager requires a context")
        self.context = kwargs.pop("context")

    @abc.abstractmethod
    def memalloc(self, size):
        """`size` bytes of device memory: a MemoryPointer."""

    @abc.abstractmethod
    def memhostalloc(self, size, mapped, portable, wc):
        """`size` bytes of pinned host memory: MappedMemory if mapped, else PinnedMemory."""

    @abc.abstractmethod
    def mempin(self, owner, pointer, size, mapped):
        """Page-lock `size` bytes at `pointer` that `owner` holds: MappedMemory or PinnedMemory."""

    @abc.abstractmethod
    def initialize(self):
        """Called once, before the first allocation."""

    @abc.abstractmethod
    def get_ipc_handle(self, memory):
        """An IPC handle for a MemoryPointer."""

    @abc.abstractmethod
    def get_memory_info(self):
        """MemoryInfo(free, total) in bytes."""

    @abc.abstractmethod
    def reset(self):
        """Free everything allocated in the context."""

    @abc.abstractmethod
    def defer_cleanup(self):
        """A context manager during which no memory is freed."""

    @property
    @abc.abstractmethod
    def interface_version(self):
        """1 for this version of the interface."""


class HostOnlyCUDAMemoryManager(BaseCUDAMemoryManager):
    """A plugin base that does the host side itself: a subclass writes memalloc,
    initialize, get_ipc_handle, get_memory_info and interface_version, and calls
    super().reset() / super().defer_cleanup() from its own. args and kwargs as
    BaseCUDAMemoryManager's (the keyword `context` required)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.allocations = {}

    def memhostalloc(self, size, mapped=False, portable=False, wc=False):
        alloc = _core.alloc(int(size), pinned=_core.get_target() != "cpu")
        ctx = self.context
        if mapped:
            # page-locked memory is mapped for every device under unified addressing
            mem = MappedMemory(ctx, alloc.ptr, size, owner=alloc)
        else:
            mem = PinnedMemory(ctx, alloc.ptr, size, owner=alloc)
        return mem

    def mempin(self, owner, pointer, size, mapped=False):
        host = _address(pointer)
        dev = _core.host_register(host, int(size), bool(mapped))
        unregister = _unregister_finalizer(host, size)
        if mapped:
            mem = MappedMemory(self.context, host, size, owner=owner, finalizer=unregister, device_pointer=dev)
            self.allocations[host] = weakref.ref(mem)
            return mem
        return PinnedMemory(self.context, host, size, owner=owner, finalizer=unregister)

    def reset(self):
        self.allocations.clear()

    @contextlib.contextmanager
    def defer_cleanup(self):
        yield


def _unregister_finalizer(host, size):
    target = _core.get_target()

    def finalize():
        if size and target == _core.get_target():
            try:
                _core.host_unregister(host)
            except Exception:  # the context may have been reset meanwhile
                pass
    return finalize


class GetIpcHandleMixin:
    """A default get_ipc_handle() for plugins: gpujit's IPC handles for the memory."""

    def get_ipc_handle(self, memory):
        from .. import get_ipc_handle  # IPC lives with the GPU runtime; absent until it exists
        return get_ipc_handle(memory)


class _OwnManager(HostOnlyCUDAMemoryManager):
    """gpujit's own allocation, for what a context does with no plugin set (mempin)."""

    def memalloc(self, size):
        return _core.alloc(int(size))

    def initialize(self):
        pass

    def get_ipc_handle(self, memory):
        return GetIpcHandleMixin.get_ipc_handle(self, memory)

    def get_memory_info(self):
        raise NotImplementedError

    @property
    def interface_version(self):
        return EMM_INTERFACE_VERSION


# The plugin class set_memory_manager chose (None: gpujit's own), and the instances
# made or set per (target, device).
_plugin = None
_instances = {}


def _key():
    t = _core.get_target()
    return (t, 0 if t == "cpu" else _core.current_device())


def _activate():
    from .. import devicearray
    devicearray._memory_manager_set = (_plugin is not None or bool(_instances)
                                       or (not _env_checked and env_plugin_named() is not None))


def set_memory_manager(mm_plugin):
    """Use the plugin class `mm_plugin` for all memory from now on; RuntimeError if its
    interface_version is not 1. Memory allocated before stays where it is."""
    global _plugin
    iv = mm_plugin(context=None).interface_version
    if iv != EMM_INTERFACE_VERSION:
        raise RuntimeError("EMM Plugin interface has version %d - version %d required"
                           % (iv, EMM_INTERFACE_VERSION))
    _plugin = mm_plugin
    _instances.clear()
    _activate()


ENV_VARS = ("NUMBA_CUDA_MEMORY_MANAGER", "GPUJIT_CUDA_MEMORY_MANAGER")
_env_checked = False


def env_plugin_named():
    return next((os.environ[v] for v in ENV_VARS if os.environ.get(v, "default") != "default"), None)


def _plugin_from_env():
    """numba's way to set a plugin without code: a module's _numba_memory_manager."""
    global _env_checked
    _env_checked = True
    name = env_plugin_named()
    if name is None:
        return
    try:
        set_memory_manager(importlib.import_module(name)._numba_memory_manager)
    except Exception as e:
        raise RuntimeError("Failed to use memory manager from %s: %s" % (name, e)) from e


def manager(create=True):
    """The current device's plugin instance, or None when gpujit allocates itself."""
    if not _env_checked and _plugin is None:
        _plugin_from_env()
    key = _key()
    mm = _instances.get(key)
    if mm is None and create and _plugin is not None:
        mm = _plugin(context=current_context())
        mm.initialize()
        _instances[key] = mm
    return mm


def set_manager(mm):
    """current_context().memory_manager = mm: the instance the current device uses."""
    if mm is not None and getattr(mm, "interface_version", None) != EMM_INTERFACE_VERSION:
        raise RuntimeError("EMM Plugin interface version must be %d" % EMM_INTERFACE_VERSION)
    if mm is None:
        _instances.pop(_key(), None)
    else:
        _instances[_key()] = mm
    _activate()


def alloc(nbytes, pinned=False):
    """What gpujit's arrays allocate through when a plugin is set: an object with `ptr`
    (device memory) or a writable buffer (pinned host memory) over the plugin's memory."""
    mm = manager()
    if mm is None:
        return _core.alloc(int(nbytes), pinned=pinned)
    if not pinned:
        return mm.memalloc(int(nbytes))
    mem = mm.memhostalloc(int(nbytes), mapped=True, portable=False, wc=False)
    buf = (ctypes.c_char * max(int(nbytes), 1)).from_address(mem.host_pointer)
    buf._mem = mem  # the buffer keeps the plugin's memory alive
    return buf


def _host_extent(ary):
    a = np.asarray(ary)
    if not a.flags["C_CONTIGUOUS"] and not a.flags["F_CONTIGUOUS"]:
        raise ValueError("mapped() needs contiguous arrays")
    return a, a.ctypes.data, a.nbytes


@contextlib.contextmanager
def mapped(*arylist, stream=0):
    """`with mapped(*arylist, stream=0) as d:` page-locks and maps the host arrays of arylist
    for the block: yields device arrays (one array for one argument, a list for several),
    whose copies default to `stream`, that kernels read and write in place, with no copies.
    On the cpu target they are device arrays over the same host memory."""
    from ..devicearray import DeviceArray
    ctx = current_context()
    pinned, devarys = [], []
    try:
        for ary in arylist:
            a, host, size = _host_extent(ary)
            pm = ctx.mempin(a, host, size, mapped=True)
            pinned.append(pm)
            devarys.append(DeviceArray(a.shape, a.strides, a.dtype, stream=stream, gpu_data=pm))
        yield devarys[0] if len(devarys) == 1 else devarys
    finally:
        # the names bound by `with ... as` outlive the block: unmap now, not when collected
        for pm in pinned:
            fin = getattr(pm, "_finalizer", None)
            if fin is not None and fin.alive:
                fin()
