"""numba.cuda.cudadrv.devicearray under gpujit: numba's names for device
arrays and their helpers, over gpujit.devicearray's classes.

DeviceNDArray is gpujit's DeviceArray (one class for every dimension count,
0-d included). The helpers take NumPy arrays and device arrays alike.
"""
import numpy as np

from .. import _core
from .. import devicearray as _da
from ..devicearray import DeviceArray, auto_device, errmsg_contiguous_buffer, to_device

__all__ = [
    "DeviceNDArray", "DeviceNDArrayBase", "is_cuda_ndarray", "require_cuda_ndarray",
    "verify_cuda_ndarray_interface", "auto_device", "from_array_like", "array_core",
    "is_contiguous", "sentry_contiguous", "check_array_compatibility", "errmsg_contiguous_buffer",
]

DeviceNDArray = DeviceNDArrayBase = DeviceArray


def __getattr__(name):
    # record device arrays, where gpujit.devicearray defines them
    if name in ("DeviceRecord", "from_record_like") and hasattr(_da, name):
        return getattr(_da, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_cuda_ndarray(obj):
    """True for a device array (numba's __cuda_ndarray__ marker)."""
    return getattr(obj, "__cuda_ndarray__", False)


def require_cuda_ndarray(obj):
    if not is_cuda_ndarray(obj):
        raise ValueError("require an cuda ndarray object")


def verify_cuda_ndarray_interface(obj):
    """Raise unless obj is a device array with shape, strides, dtype and size of the right types."""
    require_cuda_ndarray(obj)
    for attr, typ in (("shape", tuple), ("strides", tuple), ("dtype", np.dtype), ("size", int)):
        if not hasattr(obj, attr):
            raise AttributeError(attr)
        if not isinstance(getattr(obj, attr), typ):
            raise AttributeError(f"{attr} must be of type {typ}")


def from_array_like(ary, stream=0, gpu_data=None):
    """An uninitialised device array with ary's shape, strides and dtype."""
    return DeviceArray(ary.shape, ary.strides, ary.dtype, stream=stream, gpu_data=gpu_data)


def array_core(ary):
    """The view of ary without its broadcast (stride 0) dimensions: the elements
    actually stored."""
    if not ary.strides or not ary.size:
        return ary
    if isinstance(ary, _core.DeviceArrayBase):
        keep = [i for i, s in enumerate(ary.strides) if s != 0]
        return ary._view([ary.shape[i] for i in keep], [ary.strides[i] for i in keep], ary._ptr)
    return ary[tuple(0 if s == 0 else slice(None) for s in ary.strides)]


def is_contiguous(ary):
    """True if ary is C-contiguous, leaving out broadcast and length-1 dimensions."""
    size = ary.dtype.itemsize
    for n, s in zip(reversed(ary.shape), reversed(ary.strides)):
        if n > 1 and s != 0:
            if s != size:
                return False
            size *= n
    return True


def sentry_contiguous(ary):
    """Raise ValueError unless ary's elements are one C- or F-contiguous block."""
    if not _da._is_contiguous_core(ary.shape, ary.strides, ary.dtype.itemsize):
        raise ValueError(errmsg_contiguous_buffer)


def check_array_compatibility(ary1, ary2):
    """Raise unless the two arrays have one dtype, shape and (for a non-empty
    copy) strides, leaving out length-1 dimensions."""
    if ary1.dtype != ary2.dtype:
        raise TypeError(f"incompatible dtype: {ary1.dtype} vs. {ary2.dtype}")
    sq1 = [(n, s) for n, s in zip(ary1.shape, ary1.strides) if n != 1]
    sq2 = [(n, s) for n, s in zip(ary2.shape, ary2.strides) if n != 1]
    if [n for n, _ in sq1] != [n for n, _ in sq2]:
        raise ValueError(f"incompatible shape: {ary1.shape} vs. {ary2.shape}")
    if ary1.size and [s for _, s in sq1] != [s for _, s in sq2]:
        raise ValueError(f"incompatible strides: {ary1.strides} vs. {ary2.strides}")
