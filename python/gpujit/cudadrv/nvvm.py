"""numba.cuda.cudadrv.nvvm under gpujit, as far as it applies: gpujit does not
use NVIDIA's NVVM library; LLVM's NVPTX back end, built into gpujit, turns
kernels into PTX. So NVVM is always "available", and the compute
capabilities it supports are the ones gpujit compiles for."""
from .. import _core

__all__ = ["is_available", "get_supported_ccs", "NvvmError", "NvvmSupportError"]


class NvvmError(Exception):
    """numba's NVVM compilation error; gpujit raises its CompileError instead."""


class NvvmSupportError(ImportError):
    """numba's missing-NVVM error; never raised by gpujit, which needs no NVVM."""


def is_available():
    """True: gpujit's PTX code generator is part of gpujit."""
    return True


def get_supported_ccs():
    """The compute capabilities gpujit compiles PTX for, as (major, minor) tuples."""
    return _core.supported_ccs()
