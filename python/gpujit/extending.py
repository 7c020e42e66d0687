"""Extending what kernels can call, as numba.cuda.extending: register_jitable (one
function for Python and kernels) and overload (a kernel's implementation of a Python
function, chosen by its argument types at compile time).

numba's lower-level extension API (typing templates, data models, lowering functions) is
not here: it generates numba's own IR and LLVM through numba's classes. `intrinsic` and the
data-model registrations (`typeof_impl`, `type_callable`, `register_model`,
`make_attribute_wrapper`, `core_models`) are present so that code defining an extension
imports; a kernel that uses what they register is refused clearly at compile time."""
import threading

from . import compiler

__all__ = ["register_jitable", "overload", "intrinsic", "typeof_impl", "type_callable", "register_model",
           "make_attribute_wrapper", "core_models", "models"]


def register_jitable(*args, **kwargs):
    """@register_jitable or @register_jitable(options): the function runs as Python when
    called from Python and is compiled into a kernel that calls it (as any Python function
    a kernel calls is); returned unchanged."""
    if len(args) == 1 and not kwargs and callable(args[0]):
        return args[0]

    def wrap(fn):
        return fn
    return wrap


class _Overloads:
    """The overloads of one Python function: typing functions tried in the order they were
    registered; the first to return an implementation for the argument types wins. The
    compiler calls this with the argument types' names; each answer is cached."""

    def __init__(self, func):
        self.func = func
        self.typers = []
        self.cache = {}
        self.lock = threading.Lock()

    def __call__(self, names):
        with self.lock:
            impl = self.cache.get(names)
            if impl is None:
                impl = self.cache[names] = self._resolve(names)
            return impl

    def _resolve(self, names):
        argtypes = [compiler._type_of_name(n) for n in names]
        for typer in self.typers:
            impl = typer(*argtypes)
            if impl is None:
                continue
            impl = getattr(impl, "py_func", impl)   # a @jit function: its Python function
            if not hasattr(impl, "__code__"):
                raise TypeError("the overload %s gave %r, not a Python function" % (typer.__qualname__, impl))
            return impl
        raise TypeError("no overload of %s() accepts (%s)" % (getattr(self.func, "__qualname__", self.func),
                                                             ", ".join(names)))


def overload(func, jit_options=None, strict=True, inline="never", prefer_literal=False, **kwargs):
    """@overload(func): the decorated typing function is called, at compile time, with the
    gpujit.types of the arguments of each call of `func` in a kernel, and returns the Python
    function the kernel runs for those types (or None: not for these types). Calls of func
    from Python are unchanged. `func` must be a Python function (gpujit compiles its own
    builtins)."""
    if not hasattr(func, "__code__") or not hasattr(func, "__dict__"):
        raise TypeError("overload() takes a Python function, not %r: gpujit overloads Python functions only"
                        % (func,))

    def decorate(typer):
        ov = func.__dict__.get("__gpujit_overload__")
        if ov is None:
            ov = func.__gpujit_overload__ = _Overloads(func)
        with ov.lock:
            ov.typers.append(typer)
            ov.cache.clear()
        return typer
    return decorate


class _Intrinsic:
    """A function decorated with numba's @intrinsic: kept so the module defining it
    imports; a kernel calling it is refused at compile time (naming the call's file:line),
    and calling it from Python is a TypeError."""

    def __init__(self, fn):
        self._defn = fn
        self.__name__ = self.__qualname__ = getattr(fn, "__qualname__", repr(fn))
        self.__gpujit_unsupported__ = ("%s() is a numba @intrinsic, whose body generates LLVM IR through "
                                       "llvmlite; gpujit does not use llvmlite or numba's code generator: write "
                                       "the function in Python (or with @overload)" % self.__name__)

    def __call__(self, *args, **kwargs):
        raise TypeError(self.__gpujit_unsupported__)

    def __repr__(self):
        return "<unsupported numba intrinsic %s>" % self.__name__


def intrinsic(*args, **kwargs):
    """numba's @intrinsic and @intrinsic(prefer_literal=...): not supported (see
    _Intrinsic): the decorated function can be defined but not called."""
    if len(args) == 1 and not kwargs and callable(args[0]):
        return _Intrinsic(args[0])
    return _Intrinsic


_DATA_MODEL = ("is registered through numba's data-model extension API (typeof_impl, type_callable, "
               "register_model, lowering functions), whose implementations generate LLVM IR through numba's "
               "code generator; gpujit does not run them: use a NumPy record dtype or a tuple instead")


def _refuse_in_kernels(obj, how):
    """Marks a registered Python class so that a kernel naming it is refused with the reason."""
    if isinstance(obj, type):
        try:
            obj.__gpujit_unsupported__ = "%s %s" % (obj.__qualname__, how)
        except TypeError:   # a builtin or extension type: nothing to mark
            pass
    return obj


class _Registry:
    """numba's `typeof_impl`: `@typeof_impl.register(cls)` records a typing function for
    instances of cls; gpujit records it and refuses cls in kernels (see _DATA_MODEL)."""

    def __init__(self):
        self.functions = {}

    def register(self, cls):
        def decorate(fn):
            self.functions[cls] = fn
            _refuse_in_kernels(cls, _DATA_MODEL)
            return fn
        return decorate


typeof_impl = _Registry()


def type_callable(func):
    """numba's @type_callable(func): records the typing of calls of func; gpujit refuses
    func in kernels (see _DATA_MODEL)."""
    _refuse_in_kernels(func, _DATA_MODEL)

    def decorate(typer):
        return typer
    return decorate


def register_model(fe_type_class):
    """numba's @register_model(TypeClass): returns the model class unchanged; the type
    class has no layout that gpujit knows, so kernels cannot hold its values."""
    def decorate(model):
        return model
    return decorate


def make_attribute_wrapper(typeclass, struct_attr, python_attr):
    """numba's make_attribute_wrapper: nothing to record (the type is refused in kernels)."""


class _Model:
    """Base of numba's data-model classes, kept only so subclasses can be defined."""

    def __init__(self, dmm=None, fe_type=None, *args, **kwargs):
        self.fe_type = fe_type


class core_models:
    """numba's data-model classes (numba.core.datamodel.models), as bases for user models."""
    DataModel = _Model
    StructModel = _Model
    PrimitiveModel = _Model
    OpaqueModel = _Model
    PointerModel = _Model
    ProxyModel = _Model


models = core_models
