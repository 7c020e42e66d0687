"""Test-only `numba` for the compatibility yardstick (tests/compat/run.py).

numba-cuda's tests say `from numba import cuda, float32, types, ...`. Here
`numba.cuda` is gpujit (see cuda/__init__.py), and the top-level type names
are gpujit's own objects where gpujit has them. Every other name is left
missing on purpose, so a test that needs it fails: that failure is what the
yardstick measures. numba itself is never imported.
"""
import sys as _sys

# An installed numba-cuda puts a finder on sys.meta_path (its _numba_cuda_redirector.pth)
# that sends `numba.cuda` to its own package, which imports the real numba. Here numba.cuda
# is gpujit.
_sys.meta_path[:] = [f for f in _sys.meta_path if type(f).__module__ != "_numba_cuda_redirector"]

import gpujit as _gpujit  # noqa: E402

try:
    from gpujit import types  # noqa: F401  (only where gpujit has one)
except ImportError:
    pass

# numba's top-level type names; each is bound only where gpujit defines it.
_TYPE_NAMES = (
    "boolean", "bool_", "byte", "char", "uchar", "short", "ushort", "int_", "uint", "long_", "ulong",
    "longlong", "ulonglong", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "intc", "uintc", "intp", "uintp", "ssize_t", "size_t", "float16", "float32", "float64", "float_",
    "double", "complex64", "complex128", "void", "none", "optional", "b1", "i1", "i2", "i4", "i8",
    "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16",
)


def _bind_types():
    sources = [_gpujit] + ([globals()["types"]] if "types" in globals() else [])
    for name in _TYPE_NAMES:
        for src in sources:
            if hasattr(src, name):
                globals()[name] = getattr(src, name)
                break


_bind_types()

# numba's top-level functions and modules that numba.cuda code uses with target='cuda' or
# for CUDA types (vectorize, guvectorize, typeof, errors): bound to gpujit's where it has them.
for _name in ("vectorize", "guvectorize", "typeof", "errors"):
    if hasattr(_gpujit, _name):
        globals()[_name] = getattr(_gpujit, _name)
if "errors" in globals():
    _sys.modules[__name__ + ".errors"] = errors  # noqa: F821
