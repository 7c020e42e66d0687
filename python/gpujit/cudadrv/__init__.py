"""The driver-facing Python API: devices, the target choice, streams, events.

Thin wrappers over gpujit._core (runtime/driver.c, stream.c, module.c); the
driver is loaded on first use, never at import, so importing gpujit works on
machines without a GPU.

Target choice: ``GPUJIT_TARGET=cpu|cuda`` forces one; otherwise 'cuda' when a
driver and a device exist, else 'cpu'. ``set_target`` changes it at run time.
"""
import os

from .. import _core
from .._core import CudaError, Event, LaunchError, Stream

__all__ = [
    "CudaError", "LaunchError", "Stream", "Event", "is_available", "detect",
    "current_target", "set_target", "driver_version", "get_current_device",
    "list_devices", "select_device", "synchronize", "stream", "default_stream",
    "external_stream", "event", "reset", "mem_get_info", "kernel_attributes",
    "max_potential_block",
]


def is_available():
    """True if a CUDA driver and at least one device exist (never raises)."""
    return _core.is_available()


def current_target():
    """'cuda' or 'cpu': where launches run and device arrays live."""
    return _core.get_target()


def set_target(name):
    """Choose 'cuda' or 'cpu' for the whole process; None returns to the
    automatic choice. Arrays already made keep the target they were made on."""
    _core.set_target(name)


def driver_version():
    """The CUDA driver's version as (major, minor), e.g. (13, 0)."""
    v = _core.driver_version()
    return (v // 1000, (v % 1000) // 10)


class Device:
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

    # numba spells these as upper-case attributes
    @property
    def MULTIPROCESSOR_COUNT(self):
        return self.multiprocessor_count

    def __repr__(self):
        major, minor = self.compute_capability
        return f"<CUDA device {self.id} '{self.name}' cc {major}.{minor}>"


class CpuDevice:
    """What get_current_device() returns on the cpu target."""

    def __init__(self):
        self.id = 0
        self.name = _cpu_name()
        self.compute_capability = (0, 0)
        self.multiprocessor_count = os.cpu_count() or 1
        try:
            self.total_memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            self.total_memory = 0
        self.max_threads_per_block = 1024
        self.max_block_dim = (1024, 1024, 64)
        self.max_grid_dim = (2147483647, 65535, 65535)
        self.warp_size = 1
        self.target = "cpu"

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
    """Every CUDA device (empty without a driver)."""
    return [Device(_core.device_info(i)) for i in range(_core.device_count())]


def select_device(device_id):
    """Make CUDA device `device_id` current for the process; returns it."""
    _core.select_device(int(device_id))
    return Device(_core.device_info(int(device_id)))


def detect():
    """Print the CUDA devices found; True if there is at least one."""
    if not _core.is_available():
        try:
            _core.driver_version()
            reason = "no CUDA device found"
        except CudaError as e:
            reason = str(e)
        print(f"No CUDA devices: {reason}")
        print(f"gpujit will use the cpu target (GPUJIT_TARGET={os.environ.get('GPUJIT_TARGET', '')!r})")
        return False
    devs = list_devices()
    major, minor = driver_version()
    print(f"Found {len(devs)} CUDA device{'s' if len(devs) != 1 else ''} (driver {major}.{minor})")
    for d in devs:
        cc = "%d.%d" % d.compute_capability
        print(f"id {d.id:2d} {d.name!r:>30} compute capability: {cc}  "
              f"SMs: {d.multiprocessor_count}  memory: {d.total_memory / 2**30:.1f} GiB  "
              f"pci bus: {d.pci_bus_id}")
    print(f"current target: {_core.get_target()}")
    return True


def synchronize():
    """Wait for all work on the current device (a no-op on the cpu target)."""
    _core.synchronize()


def stream():
    """A new stream on the current device (inert on the cpu target)."""
    return Stream()


def default_stream():
    """The legacy default stream (handle 0)."""
    return Stream(0)


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
    const_bytes) of a CompiledKernel on the current device."""
    return _core.kernel_attributes(compiled)


def max_potential_block(compiled, dynamic_smem=0):
    """(min_grid, block) giving full occupancy (cuOccupancyMaxPotentialBlockSize)."""
    return _core.max_potential_block(compiled, dynamic_smem)
