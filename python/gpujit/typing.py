"""Kernel argument types: numba-style type strings for Python values.

typeof(np.zeros(3, np.float32)) == 'float32[::1]'; a non-contiguous view gives
'float32[:]'. The strings are what signatures and the compiler use.
"""
import numpy as np

_DTYPES = {
    np.dtype(np.bool_): "bool", np.dtype(np.int8): "int8", np.dtype(np.int16): "int16",
    np.dtype(np.int32): "int32", np.dtype(np.int64): "int64", np.dtype(np.uint8): "uint8",
    np.dtype(np.uint16): "uint16", np.dtype(np.uint32): "uint32", np.dtype(np.uint64): "uint64",
    np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
    np.dtype(np.complex64): "complex64", np.dtype(np.complex128): "complex128",
}


def dtype_name(dtype):
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError("unsupported dtype %r" % (dtype,)) from None
    name = _DTYPES.get(dt.newbyteorder("=") if dt.byteorder not in "=|" else dt)
    if name is None or (dt.byteorder not in "=|"):
        raise TypeError("unsupported dtype %s: kernels take bool, int8-int64, uint8-uint64, float32, "
                        "float64, complex64 and complex128 in native byte order" % dt)
    return name


def array_type(dtype, ndim, c_contiguous):
    if ndim < 1:
        raise TypeError("0-dimensional arrays are not supported as kernel arguments")
    dims = [":"] * ndim
    if c_contiguous:
        dims[-1] = "::1"
    return "%s[%s]" % (dtype_name(dtype), ", ".join(dims))


def _is_c_contiguous(shape, strides, itemsize):
    if strides is None:
        return True
    expect = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


def typeof(value, position=None):
    """The kernel type string of one launch argument."""
    where = "" if position is None else " (argument %d)" % (position + 1)  # 1-based, as the launcher
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, complex):
        return "complex128"
    if isinstance(value, np.generic):
        return dtype_name(value.dtype)
    if isinstance(value, np.ndarray):
        return array_type(value.dtype, value.ndim, value.flags.c_contiguous)
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        dt = np.dtype(cai["typestr"])
        shape = tuple(cai["shape"])
        return array_type(dt, len(shape), _is_c_contiguous(shape, cai.get("strides"), dt.itemsize))
    if hasattr(value, "shape") and hasattr(value, "dtype") and hasattr(value, "strides"):
        return array_type(value.dtype, len(value.shape),
                          _is_c_contiguous(tuple(value.shape), tuple(value.strides), np.dtype(value.dtype).itemsize))
    if hasattr(value, "__dlpack__"):
        return typeof(np.from_dlpack(value), position)
    raise TypeError("unsupported kernel argument of type %s%s" % (type(value).__name__, where))


def signature_of(args):
    return "void(%s)" % ", ".join(typeof(a, i) for i, a in enumerate(args))
