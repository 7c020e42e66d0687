"""numba.cuda.cudadrv.error: the exceptions of the CUDA driver layer. CudaDriverError is
what a process forked after CUDA was initialised gets at its first CUDA call."""
from .driver import CudaAPIError, CudaDriverError, CudaSupportError, LinkerError  # noqa: F401
from .nvrtc import CCSupportError, NvrtcError  # noqa: F401

__all__ = ["CudaAPIError", "CudaDriverError", "CudaSupportError", "LinkerError", "NvrtcError", "CCSupportError",
           "CudaRuntimeError"]


class CudaRuntimeError(RuntimeError):
    """An error from the CUDA runtime API (gpujit calls only the driver API)."""
