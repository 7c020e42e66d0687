"""Pickling Python functions by value, for the objects that hold one (kernels, device
functions, ufuncs): a function defined in __main__, in a notebook, in a test or inside
another function cannot be pickled by reference, as pickle does, so its code object is
marshalled with the globals it names, its defaults and its closure's values, as
cloudpickle does. Modules are pickled by name; other functions it refers to, by
reference where another process can import them, else by value too.

A function is rebuilt in two steps (an empty function, then its globals, closure and
defaults), so one that refers to itself, directly or through a kernel or a device
function, pickles once and comes back as one object. Kernels and device functions met
inside one pickle are pickled by value too (Dispatcher.__reduce__ and
DeviceFunction.__reduce__ use this module for what cannot go by reference).
"""
import builtins
import importlib
import io
import marshal
import pickle
import sys
import types

__all__ = ["dumps_function", "loads_function", "dumps", "importable"]


def _names(code):
    """Every global name a code object (and the code objects nested in it) may read."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _names(c)
    return names


def _lookup(module, qualname):
    obj = sys.modules.get(module or "")
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj


def importable(obj, module, qualname):
    """Whether another process finds `obj` by importing `module` and reading `qualname`:
    __main__ (a script, a notebook) is another module there, and a function defined inside
    another one (<locals>) has no name to read."""
    if not module or module in ("__main__", "__mp_main__") or "<locals>" in qualname:
        return False
    return _lookup(module, qualname) is obj


def _module(name):
    return importlib.import_module(name)


def _make_function(code, module, name, qualname, ncells):
    """An empty function of `code`: its globals, closure and defaults come after it
    (_fill_function), so that they may refer to it."""
    glbls = {"__builtins__": builtins, "__name__": module}
    cells = tuple(types.CellType() for _ in range(ncells)) if ncells else None
    f = types.FunctionType(marshal.loads(code), glbls, name, None, cells)
    f.__qualname__ = qualname
    f.__module__ = module
    return f


def _fill_function(f, state):
    captured, defaults, kwdefaults, closure, fdict = state
    f.__globals__.update(captured)
    f.__defaults__ = defaults
    f.__kwdefaults__ = kwdefaults
    for cell, value in zip(f.__closure__ or (), closure or ()):
        if value is not _EMPTY:
            cell.cell_contents = value
    f.__dict__.update(fdict)
    return f


class _Empty:
    """An empty closure cell (a variable the outer function had not assigned yet)."""

    def __reduce__(self):
        return "_EMPTY"


_EMPTY = _Empty()


def _function_reduce(func):
    glbls = func.__globals__
    captured = {n: glbls[n] for n in _names(func.__code__) if n in glbls}
    closure = None
    if func.__closure__:
        closure = []
        for c in func.__closure__:
            try:
                closure.append(c.cell_contents)
            except ValueError:
                closure.append(_EMPTY)
        closure = tuple(closure)
    ncells = len(func.__closure__) if func.__closure__ else 0
    args = (marshal.dumps(func.__code__), func.__module__, func.__name__, func.__qualname__, ncells)
    state = (captured, func.__defaults__, func.__kwdefaults__, closure, dict(func.__dict__))
    return (_make_function, args, state, None, None, _fill_function)


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, types.ModuleType):
            return _module, (obj.__name__,)
        if isinstance(obj, types.FunctionType):
            if importable(obj, obj.__module__, obj.__qualname__):
                return NotImplemented
            return _function_reduce(obj)
        by_value = getattr(type(obj), "_reduce_by_value", None)
        if by_value is not None and not importable(obj, getattr(obj, "__module__", None),
                                                   getattr(obj, "__qualname__", "")):
            return by_value(obj)
        return NotImplemented


def dumps(obj):
    """obj pickled with every function it holds that another process cannot import
    pickled by value (bytes; pickle.loads reads them)."""
    buf = io.BytesIO()
    _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()


def dumps_function(func):
    """func pickled by value (bytes)."""
    return dumps(func)


def loads_function(data):
    return pickle.loads(data)
