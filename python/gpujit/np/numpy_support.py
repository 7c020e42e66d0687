"""Conversions between NumPy dtypes and gpujit's type objects, under numba's names:
from_dtype(np.dtype('float32')) is gpujit.float32, as_dtype(gpujit.float32) is
np.dtype('float32')."""
import numpy as np

from .. import types

numpy_version = tuple(int(p) for p in np.__version__.split(".")[:2])


def from_dtype(dtype):
    """The gpujit type of a NumPy dtype (or of anything np.dtype() accepts)."""
    dt = np.dtype(dtype)
    t = types.NUMBERS.get("numpy." + dt.name)
    if t is None or dt.byteorder not in "=|":
        raise NotImplementedError("dtype %s has no gpujit type" % (dt,))
    return t


def as_dtype(t):
    """The NumPy dtype of a gpujit scalar type."""
    if isinstance(t, np.dtype):
        return t
    if isinstance(t, types.Number):
        return t.dtype
    raise NotImplementedError("%r has no NumPy dtype" % (t,))
