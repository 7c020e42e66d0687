"""The driver-facing Python API: devices, the target choice, streams, events,
and numba's names for them (current_context(), gpus, legacy and per-thread
default streams); numba's submodules driver, devicearray and nvrtc load on first use.

Thin wrappers over gpujit._core (runtime/driver.c, stream.c, module.c); the
driver is loaded on first use, never at import, so importing gpujit works on
machines without a GPU.

Target choice: ``GPUJIT_TARGET=cpu|cuda`` forces one; otherwise 'cuda' when a
driver and a device exist, else 'cpu'. ``set_target`` changes it at run time.
"""
import collections
import contextlib
import importlib
import os

from .. import _core
from .._core import CudaError, Event, LaunchError


class Stream(_core.Stream):
    """A CUDA stream: Stream() creates one, Stream(handle) wraps the CUstream `handle` (numba's
    cuda.cudadrv.driver.Stream). A Python class over the C type, so code and tests can
    patch its methods (numba's tests patch synchronize to count the syncs)."""
    __slots__ = ()

__all__ = [
    "CudaError", "LaunchError", "Stream", "Event", "is_available", "detect",
    "current_target", "set_target", "driver_version", "get_current_device",
    "list_devices", "select_device", "synchronize", "stream", "default_stream",
    "external_stream", "event", "reset", "mem_get_info", "kernel_attributes",
    "max_potential_block", "legacy_default_stream", "per_thread_default_stream", "current_context",
    "get_current_context", "gpus", "close", "defer_cleanup", "is_supported_version", "pinned",
    "is_float16_supported", "is_bfloat16_supported", "is_fp8_supported", "event_elapsed_time",
]


def __getattr__(name):
    # numba.cuda.cudadrv's submodules, imported on first use
    if name in ("driver", "devicearray", "nvrtc", "devices"):
        return importlib.import_module(__name__ + "." + name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_available():
    """True if a CUDA driver and at least one device exist, or where the cpu target was
    chosen (cpu_chosen()): there, as under numba's simulator, the CPU is the device that
    code asking is_available() is about to use (never raises)."""
    return _core.is_available() or cpu_chosen()


_cpu_chosen = False   # set_target('cpu') was called: the cpu target is the user's choice
_chosen_by = None     # what set the target in this process ("set_target('cpu')"), for detect()


def cpu_chosen():
    """True where the cpu target is the user's choice rather than the fallback for a
    machine without a GPU: GPUJIT_TARGET=cpu, set_target('cpu'), or NUMBA_ENABLE_CUDASIM=1
    in the place mode (gpujit._place). There the CPU is a device as numba's simulator's
    is: is_available() is True and list_devices(), gpus, get_current_device() and
    detect() give the one CpuDevice."""
    if _core.get_target() != "cpu":
        return False
    return _cpu_chosen or os.environ.get("GPUJIT_TARGET", "").strip() == "cpu"


def current_target():
    """'cuda' or 'cpu': where launches run and device arrays live."""
    return _core.get_target()


def set_target(name):
    """Choose the target `name`, 'cuda' or 'cpu', for the whole process; None returns to
    the automatic choice. Arrays already made keep the target they were made on."""
    global _cpu_chosen, _chosen_by
    _core.set_target(name)
    _cpu_chosen = name == "cpu"
    _chosen_by = None if name is None else "set_target(%r)" % (name,)


def driver_version():
    """The CUDA driver's version as (major, minor), e.g. (13, 0)."""
    v = _core.driver_version()
    return (v // 1000, (v % 1000) // 10)


class _UpperCaseAttributes:
    """numba's Device attributes in upper case (dev.MAX_THREADS_PER_BLOCK, dev.WARP_SIZE,
    CUDA's CU_DEVICE_ATTRIBUTE_* names less the prefix): those of _UPPER read the lower-case
    property they name, the rest come from the class's _EXTRA table."""

    _EXTRA = {}

    def __getattr__(self, name):
        field = _UPPER.get(name)
        if field is not None:
            value = getattr(self, field[0])
            return value if field[1] is None else value[field[1]]
        if name in self._EXTRA:
            value = self._EXTRA[name]
            return value(self) if callable(value) else value
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(_UPPER) | set(self._EXTRA))


# upper-case name -> (lower-case attribute, index into it or None)
_UPPER = {
    "MAX_THREADS_PER_BLOCK": ("max_threads_per_block", None), "WARP_SIZE": ("warp_size", None),
    "MULTIPROCESSOR_COUNT": ("multiprocessor_count", None),
    "MAX_SHARED_MEMORY_PER_BLOCK": ("max_shared_memory_per_block", None),
    "COMPUTE_CAPABILITY_MAJOR": ("compute_capability", 0), "COMPUTE_CAPABILITY_MINOR": ("compute_capability", 1),
    "MAX_BLOCK_DIM_X": ("max_block_dim", 0), "MAX_BLOCK_DIM_Y": ("max_block_dim", 1),
    "MAX_BLOCK_DIM_Z": ("max_block_dim", 2), "MAX_GRID_DIM_X": ("max_grid_dim", 0),
    "MAX_GRID_DIM_Y": ("max_grid_dim", 1), "MAX_GRID_DIM_Z": ("max_grid_dim", 2),
}


class Device(_UpperCaseAttributes):
    """A CUDA device's properties, read once."""

    def __init__(self, info):
        self.id = info["id"]
        self.name = info["name"]
        self.compute_capability = tuple(info["compute_capability"])
        self.multiprocessor_count = info["multiprocessor_count"]
        self.total_memory = info["total_memory"]
        self.pci_bus_id = info["pci_bus_id"]
        self.max_threads_per_block = info["max_threads_per_block"]
        self.max_block_dim = tuple(info["max_block_dim"])
        self.max_grid_dim = tuple(info["max_grid_dim"])
        self.max_shared_memory_per_block = info["max_shared_memory_per_block"]
        self.warp_size = info["warp_size"]
        self.target = "cuda"

    def __repr__(self):
        major, minor = self.compute_capability
        return f"<CUDA device {self.id} '{self.name}' cc {major}.{minor}>"


class CpuDevice(_UpperCaseAttributes):
    """The cpu target as a device: what get_current_device() returns there, and the one
    entry of list_devices() and gpus where the cpu target was chosen. Its limits are
    those the cpu target enforces: blocks of up to 1024 threads, 48 KiB of static shared
    memory, warps of 32 lanes (gpujit.warpsize in a kernel), compute capability 9.0's features."""

    _EXTRA = {
        "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 48 * 1024, "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 48 * 1024,
        "TOTAL_CONSTANT_MEMORY": 64 * 1024, "MAX_REGISTERS_PER_BLOCK": 65536,
        "MAX_THREADS_PER_MULTI_PROCESSOR": 1024, "UNIFIED_ADDRESSING": 1, "MANAGED_MEMORY": 1,
        "CAN_MAP_HOST_MEMORY": 1, "INTEGRATED": 1, "CONCURRENT_KERNELS": 0, "COOPERATIVE_LAUNCH": 1,
        "ASYNC_ENGINE_COUNT": 0, "ECC_ENABLED": 0, "COMPUTE_MODE": 0, "KERNEL_EXEC_TIMEOUT": 0,
        "PCI_BUS_ID": 0, "PCI_DEVICE_ID": 0, "PCI_DOMAIN_ID": 0, "TCC_DRIVER": 0,
    }

    def __init__(self):
        self.id = 0
        self.name = _cpu_name()
        # the features the CPU target implements are those of compute capability 9.0, the cc
        # it compiles PTX for (inspect_ptx, compile_ptx_for_current_device)
        self.compute_capability = (9, 0)
        self.multiprocessor_count = os.cpu_count() or 1
        try:
            self.total_memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            self.total_memory = 0
        self.max_threads_per_block = 1024
        self.max_block_dim = (1024, 1024, 64)
        self.max_grid_dim = (2147483647, 65535, 65535)
        self.max_shared_memory_per_block = 48 * 1024
        self.warp_size = 32   # the warp intrinsics' lanes (laneid, shfl_sync, ballot_sync), as on a GPU
        self.pci_bus_id = "0000:00:00.0"
        self.uuid = "CPU-00000000-0000-0000-0000-000000000000"
        self.target = "cpu"

    def __eq__(self, other):
        return isinstance(other, CpuDevice)

    def __hash__(self):
        return hash(CpuDevice)

    def __repr__(self):
        return f"<CPU target '{self.name}', {self.multiprocessor_count} cores>"


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


def get_current_device():
    """The device launches go to: a Device on the cuda target, a CpuDevice on cpu."""
    if _core.get_target() == "cpu":
        return CpuDevice()
    return Device(_core.device_info(_core.current_device()))


def list_devices():
    """Every CUDA device (empty without a driver); where the cpu target was chosen
    (cpu_chosen()), the one CpuDevice."""
    return [CpuDevice()] if cpu_chosen() else cuda_devices()


def cuda_devices():
    """Every CUDA device, whatever the target (empty without a driver)."""
    return [Device(_core.device_info(i)) for i in range(_core.device_count())]


def select_device(device_id):
    """Make CUDA device `device_id` current for the process; returns it. On the
    cpu target the one device is 0, the host."""
    if _core.get_target() == "cpu":
        if int(device_id) != 0:
            raise ValueError(f"device {device_id} does not exist: the cpu target has one device, 0")
        return CpuDevice()
    _core.select_device(int(device_id))
    return Device(_core.device_info(int(device_id)))


def _target_reason():
    """Why the target is what it is: what set it in this process (set_target(), the place
    mode's NUMBA_ENABLE_CUDASIM=1), else GPUJIT_TARGET's value, or that it is unset."""
    if _chosen_by:
        return _chosen_by
    env = os.environ.get("GPUJIT_TARGET")
    return "GPUJIT_TARGET=%r" % env if env else "GPUJIT_TARGET unset"


def detect():
    """Print the CUDA devices found, and on the cpu target the one device gpus lists (the
    host); True if there is at least one CUDA device. Where the cpu target was chosen
    (cpu_chosen()), print the CpuDevice and return True, as numba's simulator does."""
    if cpu_chosen():
        d = CpuDevice()
        print("Found 1 CUDA devices (the cpu target, chosen: %s)" % _target_reason())
        cc = "%d.%d" % d.compute_capability
        print(f"id {d.id:2d} {d.name!r:>30} compute capability: {cc}  cores: {d.multiprocessor_count}  "
              f"warp size: {d.warp_size}")
        print("current target: cpu")
        return True
    if not _core.is_available():
        try:
            _core.driver_version()
            reason = "no CUDA device found"
        except CudaError as e:
            reason = str(e)
        print(f"Found 0 CUDA devices: {reason}")
        target = _core.get_target()
        print(f"gpujit will use the {target} target ({_target_reason()})")
        if target == "cpu":
            d = CpuDevice()
            print(f"id {d.id:2d} {d.name!r:>30} the host, gpus[0] on the cpu target: "
                  f"{_core.cpu_settings()['threads']} threads run blocks")
        return False
    devs = list_devices()
    major, minor = driver_version()
    print(f"Found {len(devs)} CUDA devices (driver {major}.{minor})")
    for d in devs:
        cc = "%d.%d" % d.compute_capability
        print(f"id {d.id:2d} {d.name!r:>30} compute capability: {cc}  "
              f"SMs: {d.multiprocessor_count}  memory: {d.total_memory / 2**30:.1f} GiB  "
              f"pci bus: {d.pci_bus_id}")
    print(f"current target: {_core.get_target()} ({_target_reason()})")
    return True


def synchronize():
    """Wait for all work on the current device (a no-op on the cpu target)."""
    _core.synchronize()


def stream():
    """A new stream on the current device (inert on the cpu target)."""
    return Stream()


def default_stream():
    """The default stream: the legacy default stream (handle 0)."""
    return Stream(0)


def legacy_default_stream():
    """The legacy default stream (handle 0): synchronises with every blocking stream."""
    return Stream(0)


def per_thread_default_stream():
    """The calling thread's default stream (CU_STREAM_PER_THREAD, handle 2)."""
    return Stream(0) if _core.get_target() == "cpu" else Stream(2)


def external_stream(handle):
    """Wrap a stream handle made by another library (e.g. torch's cuda_stream); not owned."""
    return Stream(int(handle))


def event(timing=True):
    """A new event; elapsed_time needs timing=True."""
    return Event(timing=timing)


def reset():
    """Reset the current device's primary context: all memory, modules, streams
    and events on it (also other libraries' in this process) are destroyed.
    Best effort recovery after a sticky error; see docs/runtime.md."""
    _core.reset()


def mem_get_info():
    """(free, total) bytes of the current device."""
    return _core.mem_get_info()


def kernel_attributes(compiled):
    """dict(regs_per_thread, max_threads_per_block, shared_bytes, local_bytes,
    const_bytes) of a CompiledKernel on the current device: kernel.overloads[sig], or
    the kernel itself where it has one compiled signature."""
    from ..dispatcher import _as_compiled
    return _core.kernel_attributes(_as_compiled(compiled))


def max_potential_block(compiled, dynamic_smem=0):
    """(min_grid, block) giving full occupancy (cuOccupancyMaxPotentialBlockSize) to
    `compiled` (a CompiledKernel, kernel.overloads[sig] or a kernel of one compiled
    signature) launched with `dynamic_smem` bytes of dynamic shared memory per block."""
    from ..dispatcher import _as_compiled
    return _core.max_potential_block(_as_compiled(compiled), dynamic_smem)


def is_supported_version():
    """True unless a CUDA driver is present that is too old for gpujit's PTX
    (ISA 7.8 needs a CUDA 12.0 driver). No toolkit is needed, and without a
    driver the cpu target needs none."""
    if _core.get_target() == "cpu" or not _core.is_available():
        return True
    return driver_version() >= (12, 0)


# ---- contexts: numba's Context API over gpujit's primary contexts ----

MemoryInfo = collections.namedtuple("MemoryInfo", ["free", "total"])


class _Deallocations:
    """numba's queue of frees deferred while kernels may still use the memory.
    gpujit frees an allocation when its last reference goes (cuMemFree waits
    for the device itself), so nothing is ever pending: count is 0, and len()
    is how many allocations were freed since the last clear() (what numba's
    queue would have held)."""

    count = 0

    def __init__(self):
        self._base = _core.frees()

    def __len__(self):
        return _core.frees() - self._base

    def clear(self):
        self._base = _core.frees()

    @contextlib.contextmanager
    def disable(self):
        yield


class Context:
    """The context launches and allocations of the current device use: the
    device's primary context on the cuda target, the host on the cpu target."""

    def __init__(self):
        self.device = get_current_device()
        self.deallocations = _Deallocations()

    def __repr__(self):
        return f"<gpujit context of {self.device!r}>"

    def __eq__(self, other):
        return isinstance(other, Context) and (self.device.id, self.device.target) == (
            other.device.id, other.device.target)

    def __hash__(self):
        return hash((self.device.id, self.device.target))

    @property
    def memory_manager(self):
        """The memory manager this device allocates through: the plugin set with
        set_memory_manager, else gpujit's own, which has numba's deallocations queue."""
        from . import emm
        mm = emm.manager()
        if mm is None:
            mm = emm._OwnManager(context=self)
            mm.deallocations = self.deallocations
        return mm

    @staticmethod
    def _plugin():
        """The memory manager plugin in use, or None (gpujit allocates itself)."""
        from . import emm
        return emm.manager()

    @memory_manager.setter
    def memory_manager(self, mm):
        from . import emm
        emm.set_manager(mm)

    def get_memory_info(self):
        """MemoryInfo(free, total) in bytes (the host's on the cpu target)."""
        mm = self._plugin()
        if mm is not None:
            return mm.get_memory_info()
        if _core.get_target() == "cpu":
            total = self.device.total_memory
            try:
                free = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
            except (ValueError, OSError, AttributeError):
                free = total
            return MemoryInfo(free, total)
        return MemoryInfo(*_core.mem_get_info())

    def memalloc(self, bytesize):
        """`bytesize` bytes of device memory (an Allocation; freed with its last reference)."""
        mm = self._plugin()
        if mm is not None:
            return mm.memalloc(int(bytesize))
        return _core.alloc(int(bytesize))

    def memhostalloc(self, bytesize, mapped=False, portable=False, wc=False):
        """`bytesize` bytes of page-locked host memory (a buffer: np.ndarray(buffer=...)).
        Under unified addressing it is mapped, at the same address, for every device."""
        mm = self._plugin()
        if mm is not None:
            return mm.memhostalloc(int(bytesize), mapped, portable, wc)
        if _core.get_target() == "cpu":
            return _core.alloc(int(bytesize))
        return _core.alloc(int(bytesize), pinned=True)

    def mempin(self, owner, pointer, size, mapped=False):
        """Page-lock `size` bytes of host memory at `pointer` that `owner` holds (mapped:
        also reachable from kernels): a MappedMemory or PinnedMemory, unpinned when collected."""
        from . import emm
        mm = self._plugin() or emm._OwnManager(context=self)
        return mm.mempin(owner, pointer, size, mapped)

    def synchronize(self):
        _core.synchronize()

    def reset(self):
        """Free everything in the context: gpujit.reset() on the cuda target
        (arrays made before become unusable); nothing to do on the cpu target,
        whose memory belongs to its Python objects."""
        mm = self._plugin()
        if mm is not None:
            mm.reset()
        if _core.get_target() != "cpu":
            _core.reset()

    def get_ipc_handle(self, memory):
        """The picklable IPC handle of device memory (an Allocation, a device array's
        gpu_data, another library's array) for another process to open (gpujit.ipc)."""
        from ..ipc import ipc_handle
        return ipc_handle(memory)

    def can_access_peer(self, peer_device):
        return _core.get_target() != "cpu" and int(peer_device) == self.device.id


def current_context(devnum=None):
    """The current device's Context (of device `devnum` after selecting it)."""
    if devnum is not None:
        select_device(devnum)
    return Context()


get_current_context = current_context


def close():
    """numba's release of the context: here, waiting for all work to finish.
    Primary contexts are kept for the life of the process (other libraries
    share them); gpujit.reset() is the way to destroy one."""
    if _core.get_target() != "cpu" and _core.is_available():
        _core.synchronize()


@contextlib.contextmanager
def defer_cleanup():
    """numba's pause of deferred frees; gpujit defers none (see _Deallocations)."""
    yield


@contextlib.contextmanager
def pinned(*arys):
    """`with pinned(*arys):` numba pins the arrays' host memory for the block, to speed up copies;
    gpujit's copies from pageable memory are correct as they are, so this
    changes nothing."""
    yield


class _Gpu:
    """One entry of gpus: `with gpus[i]:` makes device i current for the block."""

    def __init__(self, id):
        self.id = id

    def __getattr__(self, name):
        return getattr(list_devices()[self.id] if _core.get_target() != "cpu" else CpuDevice(), name)

    def __enter__(self):
        self._prev = _core.current_device() if _core.get_target() != "cpu" else None
        if self._prev is not None and self._prev != self.id:
            _core.select_device(self.id)
        return self

    def __exit__(self, *exc):
        if self._prev is not None and self._prev != self.id:
            _core.select_device(self._prev)

    def __repr__(self):
        return f"<gpujit gpu {self.id}>"


class _GpuList:
    """cuda.gpus: the devices, indexable and iterable; on the cpu target the
    one device is the host (as numba's simulator has one device)."""

    def _count(self):
        return 1 if _core.get_target() == "cpu" else _core.device_count()

    def __len__(self):
        return self._count()

    def __getitem__(self, i):
        n = self._count()
        if isinstance(i, slice):
            return [_Gpu(j) for j in range(n)[i]]
        i = int(i)
        if not -n <= i < n:
            raise IndexError(f"device {i} out of range: there {'is' if n == 1 else 'are'} {n}")
        return _Gpu(i % n)

    def __iter__(self):
        return (self[i] for i in range(self._count()))

    @property
    def current(self):
        return _Gpu(0 if _core.get_target() == "cpu" else _core.current_device())

    def __repr__(self):
        return f"<gpujit gpus: {self._count()}>"


gpus = _GpuList()


def is_float16_supported():
    """float16 works in kernels on both targets (native f16 on the GPU, exact emulation on the CPU)."""
    return True


def is_bfloat16_supported():
    """bfloat16 works in kernels on both targets (native bf16 instructions on sm_80 and up,
    exact emulation on the CPU)."""
    return True


def is_fp8_supported():
    """The fp8 storage types (gpujit.fp8) work in kernels on both targets (cvt.rn.satfinite
    on sm_89 and up, exact emulation elsewhere)."""
    return True


def event_elapsed_time(evtstart, evtend):
    """Milliseconds from the recorded event `evtstart` to the recorded event `evtend`
    (numba's cuda.event_elapsed_time)."""
    return evtstart.elapsed_time(evtend)
