"""numba.cuda.cudadrv.devices under gpujit: the devices and their contexts by numba's
names (get_context(), gpus, reset()), over gpujit.cudadrv's."""
from . import current_context, gpus, reset  # noqa: F401

__all__ = ["get_context", "gpus", "reset"]


def get_context(devnum=None):
    """The context of device `devnum` (the current device when None)."""
    return current_context(devnum)
