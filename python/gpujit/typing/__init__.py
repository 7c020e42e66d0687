"""Kernel argument types: numba-style type strings for Python values, and the
matching of launch arguments to a kernel's eager signatures.

typeof_string(np.zeros(3, np.float32)) == 'float32[::1]'; a non-contiguous view gives
'float32[:]'. The strings are what signatures and the compiler use; every
signature, in whatever spelling, is read by the compiler's own parser
(_core.parse_signature), so launching and compiling agree on what it means.
"""
import functools

import numpy as np

from .. import _core
from ..types import Type, Signature, signature  # noqa: F401  (numba.cuda.typing.signature)
from ..numba_interop import from_numba as _from_numba

_CODES = dict(_core.dtype_codes)  # 'float32' -> its GjDtype code (runtime/devicearray.c owns the table)
# The kernel dtypes NumPy itself lacks: ml_dtypes' (imported only when one is used).
_ML_DTYPES = ("bfloat16", "float8_e4m3fn", "float8_e5m2")


def np_dtype(name):
    """The NumPy dtype of a kernel dtype's name ('float32', 'bfloat16')."""
    if name in _ML_DTYPES:
        import ml_dtypes
        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


def scalar_dtype_name(dt):
    """The kernel name of a scalar dtype in native byte order, or None."""
    if dt.kind in "biufc" or (dt.kind == "V" and dt.fields is None and dt.name in _ML_DTYPES):
        if dt.isnative or dt.itemsize == 1:
            return dt.name if dt.name in _CODES else None
    return None


def dtype_name(dtype):
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError("unsupported dtype %r" % (dtype,)) from None
    if dt.fields is not None:
        return _record_name(dt)
    name = scalar_dtype_name(dt)
    if name is None:
        raise TypeError("unsupported dtype %s: kernels take bool, int8-int64, uint8-uint64, float16, bfloat16, "
                        "float32, float64, complex64 and complex128 in native byte order" % dt)
    return name


@functools.lru_cache(maxsize=256)
def _record_name(dt):
    from ..np.numpy_support import from_dtype
    try:
        return str(from_dtype(dt))
    except NotImplementedError as e:
        raise TypeError(str(e)) from None


def array_type(dtype, ndim, c_contiguous):
    if ndim == 0:   # no subscript spelling has no dimensions: numba's printed form
        return "array(%s, 0d, C)" % dtype_name(dtype)
    dims = [":"] * ndim
    if c_contiguous:
        dims[-1] = "::1"
    return "%s[%s]" % (dtype_name(dtype), ", ".join(dims))


def contiguous_as(shape, strides, itemsize, order):
    """Are these strides C- (order 'C') or Fortran- (order 'F') contiguous for shape?
    (None: no strides given, C-contiguous.) Axes of length 1 do not count."""
    if strides is None:
        return order == "C" or sum(n != 1 for n in shape) <= 1
    dims = zip(shape, strides) if order == "F" else zip(reversed(shape), reversed(strides))
    expect = itemsize
    for n, s in dims:
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


def _is_c_contiguous(shape, strides, itemsize):
    return contiguous_as(shape, strides, itemsize, "C")


def typeof_string(value, position=None):
    """The kernel type string of one launch argument. (typing.typeof, a module of its own,
    is numba's typeof: type objects.)"""
    where = "" if position is None else " (argument %d)" % (position + 1)  # 1-based, as the launcher
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, complex):
        return "complex128"
    if isinstance(value, tuple):
        # a tuple (a namedtuple too) of kernel arguments: its items' parameters, in order
        items = [typeof_string(v, position) for v in value]
        fields = getattr(type(value), "_fields", None)
        if fields is not None and type(value) is not tuple:
            return "NamedTuple(%s)" % ", ".join([type(value).__name__] +
                                                 ["%s=%s" % (f, t) for f, t in zip(fields, items)])
        if items and all(t == items[0] for t in items):
            return "UniTuple(%s x %d)" % (items[0], len(items))
        return "Tuple(%s)" % ", ".join(items)
    if isinstance(value, np.void) and value.dtype.fields is not None:
        return dtype_name(value.dtype)   # a record, passed by reference
    if isinstance(value, np.generic):
        return dtype_name(value.dtype)
    if isinstance(value, np.ndarray):
        return array_type(value.dtype, value.ndim, value.flags.c_contiguous)
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        dt = _cai_record(cai)
        if dt is None and str(cai.get("typestr", ""))[1:2] == "V" and hasattr(value, "__dlpack__"):
            return _dlpack_type(value)   # raw bytes in the CAI (PyTorch's bfloat16): DLPack names the type
        dt = np.dtype(cai["typestr"]) if dt is None else dt
        shape = tuple(cai["shape"])
        return array_type(dt, len(shape), _is_c_contiguous(shape, cai.get("strides"), dt.itemsize))
    if hasattr(value, "shape") and hasattr(value, "dtype") and hasattr(value, "strides"):
        return array_type(value.dtype, len(value.shape),
                          _is_c_contiguous(tuple(value.shape), tuple(value.strides), np.dtype(value.dtype).itemsize))
    if hasattr(value, "__dlpack__"):
        try:
            return typeof_string(np.from_dlpack(value), position)
        except (BufferError, TypeError, RuntimeError):   # NumPy takes no bfloat16 (DLPack's kDLBfloat)
            return _dlpack_type(value)
    raise TypeError("unsupported kernel argument of type %s%s" % (type(value).__name__, where))


def _cai_record(cai):
    """The record dtype a __cuda_array_interface__'s `descr` names (its typestr, "|V16", has
    no fields), or None where it names none."""
    descr = cai.get("descr")
    if not descr or not any(isinstance(f, (tuple, list)) and f and f[0] for f in descr):
        return None
    dt = np.lib.format.descr_to_dtype([tuple(f) for f in descr])   # "" entries are padding
    return dt if dt.itemsize == np.dtype(cai["typestr"]).itemsize else None


def _dlpack_type(value):
    """The kernel type of a DLPack producer, read from its DLTensor (the capsule it makes is
    dropped unused, which frees it)."""
    import ctypes

    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                    ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                    ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                    ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]
    cap = value.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    t = DLTensor.from_address(get(cap, b"dltensor"))   # a DLManagedTensor starts with its DLTensor
    name = _core.dlpack_dtypes.get((t.code, t.bits)) if t.lanes == 1 else None
    if name is None:
        raise TypeError("unsupported DLPack dtype (code %d, %d bits, %d lanes)" % (t.code, t.bits, t.lanes))
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = None if not t.strides else tuple(t.strides[i] * t.bits // 8 for i in range(t.ndim))
    return array_type(np_dtype(name), t.ndim, _is_c_contiguous(shape, strides, t.bits // 8))


def signature_of(args):
    return "void(%s)" % ", ".join(typeof_string(a, i) for i, a in enumerate(args))


# -- signatures --------------------------------------------------------------------------------
def signature_string(sig):
    """The string of one signature in any of numba's spellings: 'void(float32[::1], int32)',
    void(float32[::1], int32) (types called) or a tuple of argument types (float32[::1], int32),
    in gpujit's type objects or numba's (numba_interop)."""
    sig = _from_numba(sig)
    if isinstance(sig, str):
        return sig.strip()
    if isinstance(sig, Signature):
        return str(sig)
    if isinstance(sig, tuple) and all(isinstance(t, Type) for t in sig):
        return str(Signature(None, sig))
    raise TypeError("a signature is a string such as 'void(float32[::1], int32)', types called as "
                    "void(float32[::1], int32) or a tuple of argument types, not %r" % (sig,))


def signature_list(sigs):
    """The strings of jit()'s signatures argument: one signature in any spelling, or a list
    of them; None for none (the kernel compiles for the types of each launch)."""
    if sigs is None:
        return None
    sigs = _from_numba(sigs)
    if isinstance(sigs, (str, Signature)) or (isinstance(sigs, tuple) and all(isinstance(t, Type) for t in sigs)):
        return [signature_string(sigs)]
    if isinstance(sigs, (list, tuple)):
        return [signature_string(s) for s in sigs] or None
    raise TypeError("jit() takes a function, a signature or a list of signatures, not %s" % type(sigs).__name__)


@functools.lru_cache(maxsize=1024)
def parse_signature(sig):
    """(restype, [argtype]) of a signature string, each type (name, kind, dtype, ndim, layout)."""
    return _core.parse_signature(sig)


def _kind_bits(name):
    if name in _ML_DTYPES:   # ml_dtypes' floats, without importing it
        return "f", 16 if name == "bfloat16" else 8
    dt = np.dtype("bool" if name == "bool" else name)
    return dt.kind, dt.itemsize * 8


def _conversion_cost(have, want):
    """1 for a promotion (a wider type of the same kind), 2 for another conversion that keeps
    the value (numba's 'safe': bool to a number, an int to float64 or to a float32 from at most
    16 bits, to a wider signed int from unsigned, a real to a complex), 3 for one that may lose
    it. As numba, any int converts safely to float64."""
    (hk, hb), (wk, wb) = _kind_bits(have), _kind_bits(want)
    if hk == wk and wb >= hb and hk != "b":
        return 1
    if hk == "b" and wk != "b":
        return 2
    if wk == "c" and hk != "c":
        return 3 if _conversion_cost(have, "float%d" % (wb // 2)) == 3 else 2
    if wk == "f" and hk in "iu":
        return 2 if wb == 64 or hb <= 16 else 3
    if wk == "i" and hk == "u" and wb > hb:
        return 2
    return 3


def _scalar_cost(have, want):
    if have == want:
        return 0
    hk, wk = _kind_bits(have)[0], _kind_bits(want)[0]
    # What the launcher converts (runtime/launch.c, check_kernel and put_scalar): ints and
    # bools to ints and floats, floats to floats, anything to a complex; no complex to a real
    # and no float to an int.
    if not (wk == "c" or (hk in "biu" and wk in "iuf") or (hk == "f" and wk == "f")):
        return None
    return _conversion_cost(have, want)


def match_cost(want, have):
    """How far arguments of types `have` are from a kernel's `want` (parsed argument lists):
    0 exact, more for each conversion (2 for one that may lose information), None if they
    cannot be passed. Arrays match in dtype and ndim; a C-contiguous ('::1') parameter takes
    only C-contiguous arrays, layout 'A' takes any. A pointer takes an integer (its address)."""
    if len(want) != len(have):
        return None
    cost = 0
    for (wname, wkind, wdt, wnd, wlay), (hname, hkind, hdt, hnd, hlay) in zip(want, have):
        if wkind == "tuple" or hkind == "tuple":
            if wname != hname:  # tuples match exactly, item for item
                return None
        elif wkind == "pointer":  # numba's CPointer: the address, an integer
            if hkind != "scalar" or _kind_bits(hdt)[0] not in "iu":
                return None
        elif wkind == "record" or hkind == "record":
            if (wkind, wdt) != (hkind, hdt):
                return None
        elif wkind == "array" and hkind == "array":
            if wdt != hdt or wnd != hnd or (wlay == "C" and hlay != "C"):
                return None
            cost += wlay != hlay
        elif wkind == "scalar" and hkind == "scalar":
            c = _scalar_cost(hdt, wdt)
            if c is None:
                return None
            cost += c
        else:
            return None
    return cost
