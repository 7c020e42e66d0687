"""numba's type objects, for signatures: gpujit.types.float32, float32[:, ::1],
void(float32[::1], int32), Array(float32, 2, 'C'), UniTuple(int64, 2), ...

Each type's str() is its spelling in a signature string, which the compiler's
one parser reads (src/types.c), so a signature object and a string cannot mean
different things. The scalar types also stand in for NumPy's scalar types:
np.dtype() reads their .dtype, a kernel uses them as casts and dtypes (the
compiler knows them by their NumPy name, see intrinsics.registry()), and
called on a value outside a kernel they cast it, as numba's do.
"""
import numpy as np

__all__ = ["Type", "Number", "Boolean", "Integer", "Float", "Complex", "NoneType", "Array", "UniTuple", "Tuple",
           "Record", "NestedArray", "CPointer", "Signature", "signature",
           "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intp", "uintp", "intc",
           "uintc", "boolean", "bool_", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float32", "float64", "complex64", "complex128", "byte", "char", "uchar",
           "short", "ushort", "int_", "uint", "long_", "ulong", "longlong", "ulonglong", "float_", "double",
           "void", "none", "voidptr", "b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"]


class Type:
    """A type of a kernel's argument or result, named by its signature spelling."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, Type) and type(self) is type(other) and self.name == other.name

    def __hash__(self):
        return hash((type(self).__name__, self.name))

    def __call__(self, *args):
        """restype(argtypes...): the signature of a function returning this type."""
        for a in args:
            if not isinstance(a, Type):
                raise TypeError("%s(...) makes a signature of types, not of %r" % (self, a))
        return Signature(self, args)

    def __getitem__(self, dims):
        raise TypeError("%s cannot be an array's element type (only numbers can)" % self)


class Number(Type):
    """A scalar: bool, intN, uintN, floatN, complexN."""

    def __init__(self, name, dtype):
        super().__init__(name)
        self.dtype = np.dtype(dtype)      # np.dtype(gpujit.float32) == np.dtype('float32')
        self.bitwidth = self.dtype.itemsize * 8

    def __call__(self, *args):
        if len(args) == 1 and not isinstance(args[0], Type):
            return self.dtype.type(args[0])   # a cast, as in a kernel
        return super().__call__(*args)

    def __getitem__(self, dims):
        """float32[:], float32[:, ::1] (C order), int32[::1, :] (F order)."""
        if not isinstance(dims, tuple):
            dims = (dims,)
        if not dims:
            raise TypeError("%s[]: an array needs at least one dimension" % self)
        steps = []
        for d in dims:
            if not isinstance(d, slice) or d.start is not None or d.stop is not None or d.step not in (None, 1):
                raise TypeError("%s[...]: each dimension is ':' or '::1', not %r" % (self, d))
            steps.append(d.step)
        ndim = len(steps)
        if steps.count(1) == 0:
            layout = "A"
        elif steps.count(1) == 1 and steps[-1] == 1:
            layout = "C"
        elif steps.count(1) == 1 and steps[0] == 1:
            layout = "F"
        else:
            raise TypeError("%s[...]: '::1' goes on the last dimension (C order) or the first (F order)" % self)
        return Array(self, ndim, layout)


class Boolean(Number):
    pass


class Integer(Number):
    @property
    def signed(self):
        return self.dtype.kind == "i"


class Float(Number):
    pass


class MlFloat(Float):
    """A float NumPy has no dtype of: ml_dtypes' (bfloat16), imported only when its dtype
    is asked for."""

    def __init__(self, name, bits):
        Type.__init__(self, name)
        self.bitwidth = bits

    @property
    def dtype(self):
        from .typing import np_dtype
        return np_dtype(self.name)


class Complex(Number):
    @property
    def underlying_float(self):
        return float32 if self.dtype == np.complex64 else float64


class NoneType(Type):
    """void / none: what a kernel returns."""


class Array(Type):
    """Array(dtype, ndim, layout): layout 'C' (C-contiguous), 'F' or 'A' (any strides)."""

    def __init__(self, dtype, ndim, layout="A", readonly=False):
        if not isinstance(dtype, (Number, Record)):
            raise TypeError("Array(): the element type must be a number type such as float32 or a Record, "
                            "not %r" % (dtype,))
        if not isinstance(ndim, int) or ndim < 0:
            raise TypeError("Array(): ndim must be a non-negative int, not %r" % (ndim,))
        if layout not in ("C", "F", "A"):
            raise TypeError("Array(): layout must be 'C', 'F' or 'A', not %r" % (layout,))
        if ndim == 1 and layout == "F":
            layout = "C"   # one dimension: F order is C order
        self.dtype, self.ndim, self.layout, self.readonly = dtype, ndim, layout, readonly
        if ndim == 0:   # no subscript spelling has no dimensions: numba's printed form
            self.layout = "C"
            super().__init__("array(%s, 0d, C)" % (dtype,))
            return
        dims = [":"] * ndim
        if layout == "C":
            dims[-1] = "::1"
        elif layout == "F":
            dims[0] = "::1"
        super().__init__("%s[%s]" % (dtype, ", ".join(dims)))

    def __eq__(self, other):
        return isinstance(other, Array) and self.name == other.name

    def __hash__(self):
        return hash(("Array", self.name))

    def copy(self, dtype=None, ndim=None, layout=None):
        return Array(dtype or self.dtype, ndim or self.ndim, layout or self.layout)


class UniTuple(Type):
    """UniTuple(dtype, count): a tuple of count items of one type."""

    def __init__(self, dtype, count):
        if not isinstance(dtype, Type) or isinstance(dtype, NoneType):
            raise TypeError("UniTuple(): the item type must be a type, not %r" % (dtype,))
        self.dtype, self.count = dtype, int(count)
        self.types = (dtype,) * self.count
        super().__init__("UniTuple(%s x %d)" % (dtype, self.count))

    def __eq__(self, other):
        return isinstance(other, (UniTuple, Tuple)) and self.name == other.name

    def __hash__(self):
        return hash(("Tuple", self.name))

    def __len__(self):
        return self.count

    def __iter__(self):
        return iter(self.types)


class Tuple(Type):
    """Tuple([types]): a tuple of items of different types (a UniTuple if they are all one type)."""

    def __new__(cls, types):
        types = tuple(types)
        if types and all(t == types[0] for t in types):
            return UniTuple(types[0], len(types))
        return super().__new__(cls)

    def __init__(self, types):
        types = tuple(types)
        for t in types:
            if not isinstance(t, Type) or isinstance(t, NoneType):
                raise TypeError("Tuple(): the item types must be types, not %r" % (t,))
        self.types = types
        self.count = len(types)
        super().__init__("Tuple(%s)" % ", ".join(str(t) for t in types))

    __eq__ = UniTuple.__eq__
    __hash__ = UniTuple.__hash__

    def __len__(self):
        return self.count

    def __iter__(self):
        return iter(self.types)


class NestedArray(Type):
    """NestedArray(dtype, shape): an array field of a record (NumPy's ('u1', (4,)))."""

    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, tuple(int(n) for n in shape)
        self.ndim = len(self.shape)
        super().__init__("nestedarray(%s, %r)" % (dtype, self.shape))


class Record(Type):
    """Record(fields, size, aligned): an element of a NumPy structured dtype
    (gpujit.np.numpy_support.from_dtype makes one). fields: (name, type, offset)
    triples, each type a number, a Record or a NestedArray. rec[:] is an array of them."""

    def __init__(self, fields, size, aligned, dtype=None):
        self.fields = {}
        parts = []
        for name, t, offset in fields:
            if not name.isidentifier():
                raise TypeError("Record(): field name %r is not an identifier" % (name,))
            if not isinstance(t, (Number, Record, NestedArray)):
                raise TypeError("Record(): field %r is %r; fields are numbers, records and nested arrays" % (name, t))
            self.fields[name] = (t, int(offset))
            parts.append("%s[type=%s;offset=%d]" % (name, t, offset))
        if not parts:
            raise TypeError("Record(): a record needs at least one field")
        self.size, self.aligned = int(size), bool(aligned)
        self._dtype = dtype
        super().__init__("Record(%s;%d;%s)" % (",".join(parts), self.size, self.aligned))

    @property
    def dtype(self):
        """The NumPy structured dtype (np.dtype(rec) is it)."""
        if self._dtype is None:
            def npdt(t):
                if isinstance(t, NestedArray):
                    return (npdt(t.dtype), t.shape)
                return t.dtype
            self._dtype = np.dtype({"names": list(self.fields), "formats": [npdt(t) for t, _ in self.fields.values()],
                                    "offsets": [o for _, o in self.fields.values()], "itemsize": self.size,
                                    "aligned": self.aligned})
        return self._dtype

    @property
    def bitwidth(self):
        return self.size * 8

    def typeof(self, name):
        """The type of field `name`."""
        return self.fields[name][0]

    def offset(self, name):
        return self.fields[name][1]

    @property
    def members(self):
        return [(k, t) for k, (t, _) in self.fields.items()]

    __getitem__ = Number.__getitem__


class CPointer(Type):
    """CPointer(dtype): a raw pointer to numbers (spelled 'int32*'), or void (voidptr,
    'void*'). A kernel takes one as an integer, the address (a device array's
    __cuda_array_interface__['data'][0]); p[i] loads and stores the i-th number from it,
    unchecked."""

    def __init__(self, dtype):
        self.dtype = dtype
        super().__init__("void*" if isinstance(dtype, NoneType) else "%s*" % dtype)


class Signature(str):
    """A function's type: return_type(args...); return_type None where it is left
    to the compiler (a tuple of argument types: jit((float32[:], int32))). It is also
    the string of its signature spelling ('float32(float32, float32)'), so that numba's
    CPU APIs, which read signature strings, take it too: numba.vectorize([float32(float32,
    float32)]) and numba.njit(float64(float64[:])) with gpujit's types."""

    def __new__(cls, return_type, args):
        if return_type is not None and not isinstance(return_type, Type):
            raise TypeError("a signature's return type must be a type, not %r" % (return_type,))
        args = tuple(args)
        ret = "" if return_type is None else "void" if isinstance(return_type, NoneType) else str(return_type)
        self = super().__new__(cls, "%s(%s)" % (ret, ", ".join(str(a) for a in args)))
        self.return_type = return_type
        self.args = args
        return self

    def __str__(self):
        return str.__str__(self)

    def __repr__(self):
        return "<signature %s>" % self

    def __eq__(self, other):
        return isinstance(other, Signature) and (self.return_type, self.args) == (other.return_type, other.args)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((self.return_type, self.args))

    def __reduce__(self):
        return (Signature, (self.return_type, self.args))


def signature(return_type, *args):
    return Signature(return_type, args)


none = void = NoneType("none")
voidptr = CPointer(none)
boolean = bool_ = b1 = Boolean("bool", np.bool_)
int8 = i1 = char = Integer("int8", np.int8)
int16 = i2 = short = Integer("int16", np.int16)
int32 = i4 = intc = Integer("int32", np.int32)
int64 = i8 = intp = int_ = long_ = longlong = Integer("int64", np.int64)
uint8 = u1 = byte = uchar = Integer("uint8", np.uint8)
uint16 = u2 = ushort = Integer("uint16", np.uint16)
uint32 = u4 = uintc = Integer("uint32", np.uint32)
uint64 = u8 = uintp = uint = ulong = ulonglong = Integer("uint64", np.uint64)
float16 = f2 = half = Float("float16", np.float16)
bfloat16 = MlFloat("bfloat16", 16)
float8_e4m3fn = MlFloat("float8_e4m3fn", 8)   # CUDA's __nv_fp8_e4m3: no inf, NaN S.1111.111
float8_e5m2 = MlFloat("float8_e5m2", 8)       # CUDA's __nv_fp8_e5m2
float32 = f4 = float_ = Float("float32", np.float32)
float64 = f8 = double = Float("float64", np.float64)
complex64 = c8 = Complex("complex64", np.complex64)
complex128 = c16 = Complex("complex128", np.complex128)

# The scalar types, by the NumPy name the compiler knows each by (src/intrinsics.c).
NUMBERS = {"numpy.bool": boolean, "numpy.int8": int8, "numpy.int16": int16, "numpy.int32": int32,
           "numpy.int64": int64, "numpy.uint8": uint8, "numpy.uint16": uint16, "numpy.uint32": uint32,
           "numpy.uint64": uint64, "numpy.float16": float16, "ml_dtypes.bfloat16": bfloat16,
           "ml_dtypes.float8_e4m3fn": float8_e4m3fn, "ml_dtypes.float8_e5m2": float8_e5m2, "numpy.float32": float32, "numpy.float64": float64,
           "numpy.complex64": complex64, "numpy.complex128": complex128}

# numba's sets of scalar types by kind (`ty in types.signed_domain`).
signed_domain = frozenset([int8, int16, int32, int64])
unsigned_domain = frozenset([uint8, uint16, uint32, uint64])
integer_domain = signed_domain | unsigned_domain
real_domain = frozenset([float32, float64])
complex_domain = frozenset([complex64, complex128])
number_domain = integer_domain | real_domain | complex_domain
