"""Pickling Python functions by value, for objects that hold one (ufuncs made by
gpujit.vectorize): a function defined in a test or inside another function
cannot be pickled by reference, as pickle does, so its code object is
marshalled with the globals it names, its defaults and its closure's values.
Modules are pickled by name; other functions it refers to, by reference
where they can be imported, else by value too.
"""
import builtins
import importlib
import io
import marshal
import pickle
import sys
import types

__all__ = ["dumps_function", "loads_function"]


def _names(code):
    """Every global name a code object (and the code objects nested in it) may read."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _names(c)
    return names


def _importable(func):
    mod = sys.modules.get(getattr(func, "__module__", None) or "")
    obj = mod
    for part in getattr(func, "__qualname__", "").split("."):
        obj = getattr(obj, part, None)
    return obj is func


def _module(name):
    return importlib.import_module(name)


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, types.ModuleType):
            return _module, (obj.__name__,)
        if isinstance(obj, types.FunctionType) and not _importable(obj):
            return _rebuild_function, _function_state(obj)
        return NotImplemented


def _function_state(func):
    glbls = func.__globals__
    captured = {n: glbls[n] for n in _names(func.__code__) if n in glbls}
    closure = tuple(c.cell_contents for c in func.__closure__) if func.__closure__ else None
    return (marshal.dumps(func.__code__), func.__module__, func.__name__, func.__qualname__, captured,
            func.__defaults__, func.__kwdefaults__, closure)


def _rebuild_function(code, module, name, qualname, captured, defaults, kwdefaults, closure):
    glbls = {"__builtins__": builtins, "__name__": module}
    glbls.update(captured)
    cells = tuple(types.CellType(v) for v in closure) if closure is not None else None
    f = types.FunctionType(marshal.loads(code), glbls, name, defaults, cells)
    f.__qualname__ = qualname
    f.__kwdefaults__ = kwdefaults
    f.__module__ = module
    return f


def dumps_function(func):
    """func pickled by value (bytes)."""
    buf = io.BytesIO()
    _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(func)
    return buf.getvalue()


def loads_function(data):
    return pickle.loads(data)
