"""gpujit in numba.cuda's place: `import numba.cuda`, `from numba import cuda` and every
`numba.cuda.X` module a project imports resolve to gpujit, while numba itself (its CPU JIT,
types, errors) stays numba's own, whether or not numba-cuda is installed.

Switched on by GPUJIT_AS_NUMBA_CUDA=1 (the gpujit_numba_cuda.pth hook installed with the
package calls install() at interpreter start where the variable is set to other than '' or 0,
and otherwise imports nothing) or by gpujit.install_as_numba_cuda() (a notebook, before its first `numba.cuda` import).
With NUMBA_ENABLE_CUDASIM=1 as well it chooses the cpu target, so that set-ups written for
numba's simulator get its contract (docs/porting.md, "The simulator's contract").

`numba.cuda` is a module of its own: each name is gpujit's (numba.cuda.jit is gpujit.jit),
except numba's type names (numba.cuda.float32, numba.cuda.void, ...), which are numba's own
objects, as in numba-cuda (gpujit takes them: gpujit.numba_interop). `numba.cuda.X.Y` is the
module gpujit.X.Y itself; numba.cuda.testing is gpujit._place_testing (numba-cuda's test
helpers). A numba.cuda module gpujit has no counterpart for is a ModuleNotFoundError naming it.
"""
import importlib
import importlib.abc
import importlib.util
import os
import sys
import types as _pytypes

__all__ = ["install", "installed"]

NAME = "numba.cuda"

# numba.cuda.<name> -> the gpujit module that stands for it, where the names differ
_RENAMED = {"testing": "gpujit._place_testing"}

# numba's type names that numba.cuda re-exports: numba's own objects in the place mode
_TYPE_NAMES = (
    "boolean", "bool_", "byte", "char", "uchar", "short", "ushort", "int_", "uint", "long_", "ulong",
    "longlong", "ulonglong", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "intc", "uintc", "intp", "uintp", "float16", "float32", "float64", "float_", "double",
    "complex64", "complex128", "void", "none", "b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8",
    "f2", "f4", "f8", "c8", "c16",
)


def _env_on(name):
    return os.environ.get(name, "").strip() not in ("", "0")


class _NumbaCuda(_pytypes.ModuleType):
    """numba.cuda: gpujit's names, numba's type objects."""

    def __getattr__(self, name):
        import gpujit
        try:
            value = getattr(gpujit, name)
        except AttributeError:
            # a submodule not imported yet (numba.cuda.random, numba.cuda.testing)
            if name.startswith("_"):
                raise AttributeError(f"module 'numba.cuda' has no attribute {name!r}") from None
            try:
                value = importlib.import_module(NAME + "." + name)
            except ImportError:
                raise AttributeError(f"module 'numba.cuda' (gpujit) has no attribute {name!r}") from None
        if isinstance(value, _pytypes.ModuleType):
            value = sys.modules.get(NAME + "." + name, value)
        setattr(self, name, value)
        return value

    def __dir__(self):
        import gpujit
        return sorted(set(dir(gpujit)) | set(self.__dict__))


def _make_numba_cuda(spec):
    import gpujit
    mod = _NumbaCuda(NAME, gpujit.__doc__)
    mod.__spec__ = spec
    mod.__loader__ = spec.loader
    mod.__path__ = []          # a package: its submodules come from _Finder alone
    mod.__file__ = gpujit.__file__
    mod.HAS_NUMBA = True       # numba-cuda's flag: base numba is installed (it is what imports numba.cuda)
    mod.implementation = gpujit.implementation
    numba = sys.modules.get("numba")
    ntypes = getattr(numba, "types", None) if numba is not None else None
    for name in _TYPE_NAMES:
        value = getattr(ntypes, name, None) if ntypes is not None else None
        if value is None:
            value = getattr(gpujit, name, None)
        if value is not None:
            setattr(mod, name, value)
    return mod


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds numba.cuda and numba.cuda.* before numba's own finders (and numba-cuda's)."""

    def find_spec(self, fullname, path, target=None):
        if fullname == NAME:
            return importlib.util.spec_from_loader(fullname, self, origin="gpujit", is_package=True)
        if not fullname.startswith(NAME + "."):
            return None
        target_name = self._target(fullname[len(NAME) + 1:])
        try:
            found = importlib.util.find_spec(target_name)
        except (ImportError, ValueError):
            found = None
        if found is None:
            return None   # ModuleNotFoundError: No module named 'numba.cuda.X'
        return importlib.util.spec_from_loader(fullname, self, is_package=found.submodule_search_locations is not None)

    @staticmethod
    def _target(rest):
        if rest in _RENAMED:
            return _RENAMED[rest]
        return "gpujit." + rest

    def create_module(self, spec):
        if spec.name == NAME:
            return _make_numba_cuda(spec)
        # the gpujit module itself, under a second name (one module object, one state)
        module = importlib.import_module(self._target(spec.name[len(NAME) + 1:]))
        spec.loader_state = module.__spec__   # the import system sets __spec__; exec_module puts it back
        return module

    def exec_module(self, module):
        own = getattr(module.__spec__, "loader_state", None)
        if own is not None and module.__spec__.name != module.__name__:
            module.__spec__ = own


_finder = None


def installed():
    """True where numba.cuda resolves to gpujit in this process."""
    return _finder is not None and _finder in sys.meta_path


def install(cudasim=None):
    """Put gpujit in numba.cuda's place for this process: from now on `import numba.cuda`,
    `from numba import cuda` and `import numba.cuda.X` give gpujit. numba.cuda modules
    imported before (numba's own or numba-cuda's) are dropped from sys.modules, so that later
    imports see gpujit; objects a program already took from them stay what they were.
    cudasim: choose the cpu target (the simulator's contract); None reads NUMBA_ENABLE_CUDASIM.
    Returns the numba.cuda module where numba is imported, else None (it is made at the first
    `import numba.cuda`)."""
    global _finder
    if cudasim is None:
        cudasim = _env_on("NUMBA_ENABLE_CUDASIM")
    # numba-cuda's own redirection of numba.cuda (its _numba_cuda_redirector.pth) steps aside
    sys.meta_path[:] = [f for f in sys.meta_path
                        if type(f).__module__ != "_numba_cuda_redirector" and not isinstance(f, _Finder)]
    _finder = _Finder()
    sys.meta_path.insert(0, _finder)
    for name in [m for m in sys.modules if m == NAME or m.startswith(NAME + ".")]:
        if not isinstance(sys.modules[name], _NumbaCuda) and not getattr(sys.modules[name], "__name__", "").startswith("gpujit"):
            del sys.modules[name]
    numba = sys.modules.get("numba")
    if numba is not None and not isinstance(numba.__dict__.get("cuda"), _NumbaCuda):
        numba.__dict__.pop("cuda", None)
    if cudasim:
        from . import cudadrv
        cudadrv.set_target("cpu")
        cudadrv._chosen_by = "NUMBA_ENABLE_CUDASIM=1, gpujit in numba.cuda's place"
    return importlib.import_module(NAME) if numba is not None else None
