"""CUDA's vector types, under numba.cuda's names: gpu.float32x3(1.0, 2.0, 3.0),
gpu.int32x4(...), ... and their C aliases (gpu.float3, gpu.double2, gpu.short4,
gpu.uint1, ...). In a kernel a constructor takes numbers and smaller vectors,
as many items as the type holds in all (float32x4(float32x2(a, b), c, d)), and
the value's items are .x, .y, .z and .w. Loaded on first use (gpujit's
__getattr__), as numba.cuda.vector_types."""
import numpy as np

from . import types as _types
from .intrinsics import _KernelOnly, add_paths

_BASES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64")
_MEMBERS = ("x", "y", "z", "w")
# C's names for the bases, sized as NumPy sizes the C types on this host
_C_NAMES = {
    "char": "int%d" % (np.dtype(np.byte).itemsize * 8), "short": "int%d" % (np.dtype(np.short).itemsize * 8),
    "int": "int%d" % (np.dtype(np.intc).itemsize * 8), "long": "int%d" % (np.dtype(np.int_).itemsize * 8),
    "longlong": "int%d" % (np.dtype(np.longlong).itemsize * 8),
    "uchar": "uint%d" % (np.dtype(np.ubyte).itemsize * 8), "ushort": "uint%d" % (np.dtype(np.ushort).itemsize * 8),
    "uint": "uint%d" % (np.dtype(np.uintc).itemsize * 8), "ulong": "uint%d" % (np.dtype(np.uint).itemsize * 8),
    "ulonglong": "uint%d" % (np.dtype(np.ulonglong).itemsize * 8),
    "float": "float%d" % (np.dtype(np.single).itemsize * 8), "double": "float%d" % (np.dtype(np.double).itemsize * 8),
}


class VectorConstructor(_KernelOnly):
    """The constructor of one vector type, used in kernels: float32x3(x, y, z)."""

    def __init__(self, name, base, n):
        super().__init__("gpujit." + name, "%s(%s): a vector of %d %s" % (name, ", ".join(_MEMBERS[:n]), n, base))
        self.__name__ = name
        self.aliases = []


class VectorType:
    """A vector type: its name, base_type (a gpujit scalar type), attr_names,
    num_elements and user_facing_object (the constructor kernels call)."""

    def __init__(self, name, base_type, attr_names, user_facing_object):
        self.name = name
        self.base_type = base_type
        self.attr_names = attr_names
        self.user_facing_object = user_facing_object

    @property
    def num_elements(self):
        return len(self.attr_names)

    def __repr__(self):
        return self.name


vector_types = {}
for _base in _BASES:
    for _n in (1, 2, 3, 4):
        _name = "%sx%d" % (_base, _n)
        vector_types[_name] = VectorType(_name, getattr(_types, _base), _MEMBERS[:_n],
                                         VectorConstructor(_name, _base, _n))
for _alias, _base in _C_NAMES.items():
    for _n in (1, 2, 3, 4):
        vector_types["%sx%d" % (_base, _n)].user_facing_object.aliases.append("%s%d" % (_alias, _n))

# every name kernels may use: the types' own and their aliases
constructors = {}
for _vt in vector_types.values():
    constructors[_vt.name] = _vt.user_facing_object
    for _alias in _vt.user_facing_object.aliases:
        constructors[_alias] = _vt.user_facing_object
add_paths(constructors.values())
