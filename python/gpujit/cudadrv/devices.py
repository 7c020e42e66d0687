"""numba.cuda.cudadrv.devices under gpujit: the current context, the device
list, and require_context, numba's decorator for functions that need a
context (gpujit makes one on first use of a device, so it only checks that
the target can be reached)."""
import functools

from . import current_context, gpus, reset  # noqa: F401
from .. import _core

__all__ = ["get_context", "require_context", "gpus", "reset"]


def require_context(fn):
    """A decorator: `fn` wrapped so that, when called, it first makes sure the current
    device's context exists (the driver is loaded and the device selected on the cuda
    target)."""
    @functools.wraps(fn)
    def _require_cuda_context(*args, **kws):
        if _core.get_target() != "cpu":
            _core.current_device()
        return fn(*args, **kws)
    return _require_cuda_context


def get_context(devnum=None):
    """The context of device `devnum` (the current device when None)."""
    return current_context(devnum)
