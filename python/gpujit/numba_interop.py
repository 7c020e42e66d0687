"""numba's own objects as gpujit's input, where the user's code imported numba.

numba's type objects (numba.float32, numba.types.int32, numba.float32[:, ::1],
numba.types.Array(...), record types) and signatures (numba.void(numba.float32[:]))
are taken wherever gpujit takes its own (signatures of jit, vectorize, compile_ptx,
declare_device); in kernels, numba's types are casts and dtypes, and a numba.njit /
numba.jit function called from a kernel is compiled from its Python function as a
device function, with its own signatures where it was given them (numba-cuda does the same).

This module never imports numba: each function here is reached only with an object
numba made, so numba is already in sys.modules (is_numba_object() reads an object's
class's module, which costs no import).
"""
import sys

__all__ = ["is_numba_object", "to_gpujit_type", "to_gpujit_signature", "from_numba", "counterpart"]


def is_numba_object(o):
    """True if numba's package (not gpujit in numba.cuda's place) made o's class."""
    if "numba" not in sys.modules:
        return False
    mod = getattr(type(o), "__module__", None) or ""
    return mod == "numba" or (mod.startswith("numba.") and not mod.startswith("numba.cuda"))


def _numba_types():
    return sys.modules["numba"].core.types


def to_gpujit_type(t):
    """gpujit's type for one of numba's type objects (TypeError where gpujit has none)."""
    from . import types as gt
    nt = _numba_types()
    if isinstance(t, nt.Boolean):
        return gt.boolean
    if isinstance(t, (nt.Integer, nt.Float, nt.Complex)):
        found = getattr(gt, t.name, None)
        if isinstance(found, gt.Number):
            return found
    elif isinstance(t, nt.NoneType):
        return gt.none
    elif isinstance(t, nt.Record):
        from .np.numpy_support import from_dtype
        return from_dtype(t.dtype)
    elif isinstance(t, nt.NestedArray):
        return gt.NestedArray(to_gpujit_type(t.dtype), t.shape)
    elif isinstance(t, nt.Array):
        return gt.Array(to_gpujit_type(t.dtype), t.ndim, t.layout, readonly=not t.mutable)
    elif isinstance(t, nt.UniTuple):
        return gt.UniTuple(to_gpujit_type(t.dtype), t.count)
    elif isinstance(t, nt.BaseTuple):
        return gt.Tuple([to_gpujit_type(x) for x in t.types])
    elif isinstance(t, nt.CPointer):
        return gt.CPointer(to_gpujit_type(t.dtype))
    elif isinstance(t, nt.RawPointer):
        return gt.voidptr
    raise TypeError("numba's type %s (%s) has no gpujit counterpart: kernels take numbers, arrays of "
                    "numbers and records, tuples of them and pointers" % (t, type(t).__name__))


def to_gpujit_signature(sig):
    """gpujit's Signature for numba's (numba.void(numba.float32[:]))."""
    from . import types as gt
    ret = sig.return_type
    return gt.Signature(None if ret is None else to_gpujit_type(ret), [to_gpujit_type(a) for a in sig.args])


def from_numba(sig):
    """A signature or type with numba's objects in it, in gpujit's objects; anything else as it is.
    Takes numba's Signature, a numba type, and tuples and lists holding them."""
    if "numba" not in sys.modules:
        return sig
    if isinstance(sig, (tuple, list)):
        conv = [from_numba(s) for s in sig]
        if all(a is b for a, b in zip(conv, sig)):
            return sig
        return type(sig)(conv)
    if not is_numba_object(sig):
        return sig
    numba = sys.modules["numba"]
    if isinstance(sig, numba.core.typing.Signature):
        return to_gpujit_signature(sig)
    if isinstance(sig, numba.core.types.Type):
        return to_gpujit_type(sig)
    return sig


# counterpart() results by id of numba's object, kept with it: the compiler borrows
# them for as long as the process lives (numba's type objects live as long; a dispatcher
# held here is not freed, one entry for each that kernels called)
_COUNTERPARTS = {}


def counterpart(o):
    """What a kernel reading numba's object o (a global, a closure cell, a module attribute)
    uses instead: gpujit's type for numba's type, a device function for a numba.njit /
    numba.jit dispatcher; None where there is none. Called by the compiler (src/pyvalue.c)."""
    hit = _COUNTERPARTS.get(id(o))
    if hit is not None and hit[0] is o:
        return hit[1]
    numba = sys.modules.get("numba")
    if numba is None:
        return None
    value = None
    if isinstance(o, numba.core.types.Type):
        try:
            value = to_gpujit_type(o)
        except TypeError:
            return None
    elif isinstance(getattr(o, "py_func", None), type(counterpart)) and hasattr(o, "nopython_signatures"):
        from .dispatcher import DeviceFunction
        # signatures given to numba.jit(sig) fix the types (numba then compiles no others)
        sigs = None
        if not getattr(o, "_can_compile", True):
            sigs = [to_gpujit_signature(s) for s in o.nopython_signatures] or None
        value = DeviceFunction(o.py_func, sigs)
    if value is not None:
        _COUNTERPARTS[id(o)] = (o, value)
    return value


def to_numba_type(t):
    """numba's type for one of gpujit's (the reverse of to_gpujit_type)."""
    from . import types as gt
    nt = _numba_types()
    if isinstance(t, gt.Boolean):
        return nt.boolean
    if isinstance(t, gt.Number):
        return getattr(nt, t.name)
    if isinstance(t, gt.NoneType):
        return nt.none
    if isinstance(t, gt.Record):
        return sys.modules["numba"].from_dtype(t.dtype)
    if isinstance(t, gt.Array):
        return nt.Array(to_numba_type(t.dtype), t.ndim, t.layout, readonly=t.readonly)
    if isinstance(t, gt.UniTuple):
        return nt.UniTuple(to_numba_type(t.dtype), t.count)
    if isinstance(t, gt.Tuple):
        return nt.Tuple([to_numba_type(x) for x in t.types])
    if isinstance(t, gt.CPointer):
        return nt.voidptr if isinstance(t.dtype, gt.NoneType) else nt.CPointer(to_numba_type(t.dtype))
    raise TypeError("gpujit's type %s has no numba counterpart" % (t,))


# how many of numba's registered globals sync_overloads() has read
_overloads_read = 0
# the targets whose numba @overloads apply to kernels, as in numba-cuda
_KERNEL_TARGETS = ("cuda", "generic", "gpu")


def _typer(template):
    """A gpujit overload typer calling numba's overload function with numba's types."""
    def typer(*argtypes):
        return template._overload_func(*[to_numba_type(t) for t in argtypes])
    typer.__qualname__ = getattr(template._overload_func, "__qualname__", "overload")
    return typer


def sync_overloads():
    """numba.extending.overload(func, target='cuda') (or 'generic'): registered with gpujit's
    overload too, so that a kernel calling func runs the implementation numba's overload
    function gives for the argument types (numba's, converted). Called by the compiler
    (src/pyvalue.c) where a kernel reads a Python function and numba's typing is loaded;
    reads only what numba registered since the last call."""
    global _overloads_read
    templates = sys.modules.get("numba.core.typing.templates")
    if templates is None:
        return
    registered = templates.builtin_registry.globals
    new, _overloads_read = registered[_overloads_read:], len(registered)
    from .extending import overload
    for func, fnty in new:
        if not hasattr(func, "__code__"):
            continue
        for template in getattr(fnty, "templates", ()):
            target = (getattr(template, "metadata", None) or {}).get("target")
            if hasattr(template, "_overload_func") and target in _KERNEL_TARGETS:
                overload(func)(_typer(template))
