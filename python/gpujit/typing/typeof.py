"""numba's typeof: the gpujit.types object of a Python value, as a kernel
argument would be typed.

    typeof(1.0) is float64; typeof(np.int32(1)) is int32;
    typeof(np.zeros((2, 3), np.float32)) == Array(float32, 2, 'C');
    typeof((1, 2)) == UniTuple(int64, 2)

(gpujit.typing.typeof_string gives the same type as the signature string the
launcher uses.)
"""
import enum

import numpy as np

from .. import types
from ..np.numpy_support import from_dtype
from . import contiguous_as

__all__ = ["typeof", "Purpose"]


class Purpose(enum.Enum):
    """What the value is typed for (numba's argument); both give the same type here."""
    argument = 1
    constant = 2


def _dtype_type(dtype, value):
    try:
        return from_dtype(dtype)
    except NotImplementedError:
        raise ValueError("cannot determine the gpujit type of %r: dtype %s has no gpujit type"
                         % (type(value), np.dtype(dtype))) from None


def _layout(shape, strides, itemsize):
    if contiguous_as(shape, strides, itemsize, "C"):
        return "C"
    return "F" if contiguous_as(shape, strides, itemsize, "F") else "A"


def _array(value, dtype, shape, strides, readonly):
    if len(shape) == 0:
        raise ValueError("cannot determine the gpujit type of a 0-dimensional array (gpujit arrays have at least "
                         "one dimension)")
    dt = np.dtype(dtype)
    return types.Array(_dtype_type(dt, value), len(shape), _layout(tuple(shape), strides, dt.itemsize),
                       readonly=readonly)


def typeof(val, purpose=Purpose.argument):
    """The gpujit.types type of `val` (what a launch compiles for); ValueError where it
    has none. purpose: numba's Purpose (argument or constant); accepted, the type is the
    same."""
    if isinstance(val, (bool, np.bool_)):
        return types.boolean
    if isinstance(val, int):
        return types.int64
    if isinstance(val, float):
        return types.float64
    if isinstance(val, complex):
        return types.complex128
    if val is None:
        return types.none
    if isinstance(val, np.generic):
        return _dtype_type(val.dtype, val)
    if isinstance(val, np.ndarray):
        return _array(val, val.dtype, val.shape, val.strides, not val.flags.writeable)
    if isinstance(val, tuple):
        return types.Tuple([typeof(v, purpose) for v in val])
    try:
        cai = val.__cuda_array_interface__
    except Exception:
        cai = None
    if cai is not None:
        strides = cai.get("strides")
        return _array(val, np.dtype(cai["typestr"]), tuple(cai["shape"]), tuple(strides) if strides else None,
                      bool(cai["data"][1]))
    if hasattr(val, "shape") and hasattr(val, "dtype") and hasattr(val, "strides"):   # a cpu-target device array
        return _array(val, val.dtype, tuple(val.shape), tuple(val.strides), bool(getattr(val, "readonly", False)))
    raise ValueError("cannot determine the gpujit type of %r" % (type(val),))
