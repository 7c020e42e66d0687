"""Conversions between NumPy dtypes and gpujit's type objects, under numba's names:
from_dtype(np.dtype('float32')) is gpujit.float32, as_dtype(gpujit.float32) is
np.dtype('float32')."""
import numpy as np

from .. import types

numpy_version = tuple(int(p) for p in np.__version__.split(".")[:2])


def from_dtype(dtype):
    """The gpujit type of a NumPy dtype (or of anything np.dtype() accepts): a
    number type, or a types.Record for a structured dtype (nested records and
    array fields, aligned or packed)."""
    dt = np.dtype(dtype)
    if dt.fields is not None:
        return _record(dt)
    t = types.NUMBERS.get("numpy." + dt.name) or types.NUMBERS.get("ml_dtypes." + dt.name)
    if t is None or dt.byteorder not in "=|":
        raise NotImplementedError("dtype %s has no gpujit type" % (dt,))
    return t


def _record(dt):
    fields = []
    for name in dt.names:
        fdt, offset = dt.fields[name][:2]
        if fdt.subdtype is not None:
            base, shape = fdt.subdtype
            ft = types.NestedArray(from_dtype(base), shape)
        else:
            ft = from_dtype(fdt)
        fields.append((name, ft, offset))
    try:
        return types.Record(fields, dt.itemsize, dt.isalignedstruct, dt)
    except TypeError as e:
        raise NotImplementedError("dtype %s has no gpujit type: %s" % (dt, e)) from None


def as_dtype(t):
    """The NumPy dtype of a gpujit scalar type."""
    if isinstance(t, np.dtype):
        return t
    if isinstance(t, (types.Number, types.Record)):
        return t.dtype
    raise NotImplementedError("%r has no NumPy dtype" % (t,))


class _PointerView:
    """carray/farray(ptr, shape, dtype): an array view of a raw pointer, in C or
    Fortran order. They need pointer (CPointer) kernel arguments, which gpujit
    does not take, so they exist for imports and fail clearly when used."""

    def __init__(self, name):
        self.__name__ = name

    def __repr__(self):
        return "<gpujit %s (unsupported: gpujit has no pointer arguments)>" % self.__name__

    def __call__(self, *args, **kwargs):
        raise NotImplementedError("%s() needs pointer (CPointer) arguments, which gpujit does not support"
                                  % self.__name__)


carray = _PointerView("carray")
farray = _PointerView("farray")
