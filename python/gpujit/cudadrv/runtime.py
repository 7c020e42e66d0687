"""numba.cuda.runtime under gpujit. gpujit needs no CUDA runtime library
(cudart): it loads PTX through the driver. The versions reported are the
CUDA version the driver implements, which is what sets the PTX the kernels
may use."""
from .. import _core

__all__ = ["Runtime", "runtime", "get_version"]

# The oldest CUDA whose driver loads gpujit's PTX (ISA 7.8, CUDA 12.0)
_OLDEST = (12, 0)


class Runtime:
    """numba's cuda.runtime object."""

    def get_version(self):
        """The CUDA version, (major, minor), of the driver; CudaSupportError without one."""
        from .driver import CudaSupportError
        if not _core.is_available():
            try:
                _core.driver_version()
            except Exception as e:
                raise CudaSupportError(str(e)) from None
        v = _core.driver_version()
        return (v // 1000, (v % 1000) // 10)

    @property
    def supported_versions(self):
        """The CUDA versions gpujit is tested with: 12.x and 13.x."""
        return tuple((12, m) for m in range(10)) + tuple((13, m) for m in range(3))

    def is_supported_version(self):
        """True when the driver's CUDA is new enough for gpujit's PTX."""
        return self.get_version() >= _OLDEST

    def __repr__(self):
        return "<gpujit CUDA runtime (the driver's)>"


runtime = Runtime()


def get_version():
    return runtime.get_version()
