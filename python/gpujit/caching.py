"""The on-disk cache of @jit(cache=True) kernels, as numba's.

Each function has an index file, `<module>.<qualname>-<line>.py<ver>.gpujit.nbi` (numba's name
for its CPU cache's index, with `.gpujit` added: the two caches of one function do not touch each
other's files), listing its cached
specialisations, and one data file per specialisation, `<...>.<key hash>.nbc`, holding the
compiled kernel (the GPU's PTX; the CPU's optimised LLVM bitcode, which a load hands to the JIT,
skipping everything before code generation). A GPU kernel's file also holds its machine code (a
cubin, made by the driver's linker where the kernel was compiled or first loaded on a GPU),
tagged with the compute capability and the CUDA driver version that made it: a process whose
device and driver match the tag loads the cubin without compiling; another compiles the PTX
and stores its own cubin in the file. The files live in the directory given by
$GPUJIT_CACHE_DIR (or $NUMBA_CACHE_DIR), else in `__pycache__` beside the source file when
that can be written, else in a per-user directory (~/.cache/gpujit, or $XDG_CACHE_HOME).

An entry is found by its key: the signature, the target and compute capability (and, for the
CPU target, the host CPU and its features), the compile options, and a fingerprint of the code:
the function's bytecode, constants, names and lines, the values of the globals, closure
variables and defaults it reads (gpujit compiles them in as constants, so a changed value is a
different kernel; numba leaves globals out of its key), and the same of every device function
and plain function it calls, transitively, with the typing functions of their @overloads. A
module it reads is keyed by each of its attributes that the code names (`helpers.SCALE`,
`helpers.dev`), an Enum by its members' values; Python's, gpujit's, NumPy's and numba's modules
by their name and version, with the @overloads of their functions that the code names. A value
that cannot be fingerprinted (an object that does not pickle) makes the kernel uncacheable in
that process (compiled, not written, with a NumbaWarning). The whole index is dropped when the
source file changes (its modification time or size, as numba checks) or when another build
wrote it: another gpujit version or compiler library (or Python files, in a source checkout),
Python, NumPy, LLVM or libdevice.

Many processes may share one directory (multiprocessing or Dask workers): files are written
to a temporary name and renamed, so a reader never sees half of one; each data file carries its
key's hash and a checksum of its contents, so a truncated, corrupt or foreign file is a miss
(compiled again and rewritten), never a crash or a wrong kernel. A process that misses takes a
per-function lock while it compiles and writes, and looks again once it has it: processes
starting at once compile each kernel once and the others load it. The lock is a file in a
directory only this user may use (the per-user cache's locks/, mode 0700; the cache directory
itself where that cannot be had), named by the index's path, never followed through a link and
used only when it is this user's: the cache directory holds the kernels' files alone, as
numba's does.

Loading an entry runs what its files hold (they are pickles; a CPU kernel is native code, linked
as it is; the checksums catch damage, not tampering), so a cache directory that another user
could write is refused with a NumbaWarning, as is a $GPUJIT_CACHE_DIR that cannot be used; the
next place is used instead.

A kernel that compiles in a captured device array's address cannot be cached
(pickle.PicklingError), nor can a function whose source file is unknown (RuntimeError).
"""
import collections
import contextlib
import enum
import inspect
import os
import pickle
import stat
import struct
import _thread   # not threading, nor tempfile at the top: each costs milliseconds of a fresh process's start
import sys
import time
import types

import numpy as np

from . import _core
from .numba_interop import counterpart, is_numba_object
from .serialize import _names   # every global name a code object may read

def _digest(data=b""):
    """The cache's hash (files' checksums, keys, names): BLAKE3, 32 bytes, from the extension (a
    hash module of CPython's would be one more library for a fresh process to load)."""
    return _core.Digest(data)


__all__ = ["FunctionCache", "CacheStats", "process_stats"]

_MAGIC = b"gpujit-cache-1"
_LOCK_WAIT_S = 300.0        # a lock holder that takes longer (a hung compile) is not waited for


def _file_stamp(path):
    """A file by its path, size and modification time (as the source file is checked): reading
    and hashing libdevice's 500 KB took most of a millisecond of every process's first load."""
    try:
        st = os.stat(path)
        return (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    except (OSError, TypeError):
        return None


def _package_stamp():
    """In a source checkout (python/gpujit beside meson.build), gpujit's Python files by name,
    size and modification time: the compiler calls into some of them (typing, the ufunc loops,
    the overload protocol), and a checkout edited in place keeps its version and its compiled
    library. (A few tenths of a millisecond, once per process; an installed gpujit has none:
    installing it again rewrites its library, which the build is keyed by.)"""
    top = os.path.dirname(os.path.abspath(__file__))
    if not os.path.isfile(os.path.join(top, os.pardir, os.pardir, "meson.build")):
        return None
    parts, dirs = [], [""]
    while dirs:
        rel = dirs.pop()
        try:
            with os.scandir(os.path.join(top, rel)) as it:
                for e in it:
                    if e.name.endswith(".py"):
                        st = e.stat()
                        parts.append("%s/%s %d %d;" % (rel, e.name, st.st_size, st.st_mtime_ns))
                    elif e.name != "__pycache__" and e.is_dir(follow_symlinks=False):
                        dirs.append(os.path.join(rel, e.name))
        except OSError:
            continue
    return _digest("".join(sorted(parts)).encode()).hexdigest()


def _build_id():
    """What makes cached kernels of one build unusable by another: gpujit's version, its Python
    files and the compiler's shared library (the ABI structs are stored as bytes), Python's,
    NumPy's and LLVM's versions, and the libdevice file GPU kernels link (by its path, size and
    modification time)."""
    try:
        st = os.stat(_core.__file__)
        lib = (st.st_size, st.st_mtime_ns)
    except (OSError, AttributeError):
        lib = None
    env = _core.cache_environment()
    from . import __version__
    return ("gpujit", __version__, _package_stamp(), lib, sys.version_info[:2], np.__version__, env["llvm"],
            _file_stamp(env["libdevice"]))


_BUILD = None
_HOST = None


def _build():
    global _BUILD
    if _BUILD is None:
        _BUILD = _build_id()
    # the set of GPU passes after O3 (GPUJIT_PTX_PASSES) changes the code a source compiles to
    return _BUILD + (os.environ.get("GPUJIT_PTX_PASSES"),)


def _host():
    """The CPU target's code is for this host's CPU: in its keys."""
    global _HOST
    if _HOST is None:
        env = _core.cache_environment()
        _HOST = _digest(("%s %s" % (env["host_cpu"], env["host_features"])).encode()).hexdigest()[:16]
    return _HOST


class CacheStats:
    """cache_hits and cache_misses per signature (collections.Counter), and where the files are.
    A miss is a compilation; cache_writes counts the entries this process wrote. On a GPU,
    cubin_hits counts the kernels loaded from their stored machine code (no compilation by the
    driver) and cubin_writes the machine code this process stored."""

    def __init__(self, cache_path=None):
        self.cache_path = cache_path
        self.cache_hits = collections.Counter()
        self.cache_misses = collections.Counter()
        self.cache_writes = collections.Counter()
        self.cubin_hits = collections.Counter()
        self.cubin_writes = collections.Counter()

    def __repr__(self):
        return "CacheStats(hits=%d, misses=%d, path=%r)" % (sum(self.cache_hits.values()),
                                                              sum(self.cache_misses.values()), self.cache_path)


_PROCESS = CacheStats()


def process_stats():
    """This process's cache_hits, cache_misses and cache_writes over every cached kernel, by
    signature (what a multiprocessing or Dask worker reports: did it compile, or load?)."""
    return _PROCESS


_DRIVER = None


def cubin_tag(target, cc):
    """What a cubin for a kernel of `target` and compute capability `cc` is specific to, in
    this process: (cc, the CUDA driver's version) when the current device is of that compute
    capability; None where no cubin is made or loaded (the CPU target, no GPU, another device)."""
    global _DRIVER
    if target != "cuda":
        return None
    try:
        if not _core.is_available():
            return None
        if tuple(_core.device_info(_core.current_device())["compute_capability"]) != tuple(cc):
            return None
        if _DRIVER is None:
            _DRIVER = _core.driver_version()
    except Exception:    # a driver that fails here fails the launch too, which reports it
        return None
    return (tuple(cc), _DRIVER)


def _uid():
    return os.getuid() if hasattr(os, "getuid") else None


def _dir_problem(path, make=True, owned=True, also=None):
    """Why this user's cache files cannot live in the directory `path` (made if need be; with
    make=False, one that does not exist yet is judged by the directory it would be made in), or
    None. Writability is asked, not tried (access() also sees a read-only mount): a probe file
    cost a file creation and removal in every process's first load. A directory that another
    user owns is refused although it is writable, as ssh refuses such a directory for its keys:
    whoever can write the cache directory can run code in this process (an index is a pickle,
    a CPU kernel native code). `also` is another user trusted with it: the owner of the source
    file beside a __pycache__, who may change the code this process runs anyway."""
    if make:
        try:
            os.makedirs(path, exist_ok=True)
        except FileExistsError:
            return "it is not a directory"
        except OSError as e:
            return "it cannot be made (%s)" % (e.strerror or e)
    elif not os.path.lexists(path):
        parent = os.path.dirname(path)
        while parent != os.path.dirname(parent) and not os.path.lexists(parent):
            parent = os.path.dirname(parent)
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
            return "it does not exist and cannot be made"
        return None
    uid = _uid()
    try:
        lst = os.lstat(path)
        if stat.S_ISLNK(lst.st_mode) and uid is not None and lst.st_uid not in (uid, 0, also):
            return "it is a link that another user (uid %d) made" % lst.st_uid
        st = os.stat(path)
    except OSError as e:
        return "it cannot be read (%s)" % (e.strerror or e)
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if not os.access(path, os.W_OK | os.X_OK):
        return "it is not writable"
    if owned and uid is not None and st.st_uid not in (uid, also):
        return ("it belongs to another user (uid %d, this process's is %d), who could put code in it "
                "that this process would run" % (st.st_uid, uid))
    return None


def _root_problem(root, make=True):
    """Why the cache root `root` ($GPUJIT_CACHE_DIR) cannot hold this user's cache directories,
    or None: each is made in it (and checked), but another user who may rename what is in it
    could put their own directory in its place: its owner, where that is another user than this
    one or root, or anyone where it is writable by others and not sticky (unlike /tmp)."""
    problem = _dir_problem(root, make, owned=False)
    if problem is not None or not os.path.exists(root):
        return problem
    st = os.stat(root)
    uid = _uid()
    if uid is None or st.st_uid == uid:
        return None
    if st.st_uid != 0:
        return ("it belongs to another user (uid %d, this process's is %d), who could replace what is in it"
                % (st.st_uid, uid))
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        return "other users may write it and replace what is in it (it is not sticky)"
    return None


_WARNED = set()


def _warn(text):
    """A NumbaWarning, shown at the first frame outside gpujit (the jit() or the launch)."""
    import warnings
    from .errors import NumbaWarning
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    f, level = sys._getframe(1), 2
    while f is not None and f.f_code.co_filename.startswith(here):
        f, level = f.f_back, level + 1
    warnings.warn(text, NumbaWarning, stacklevel=level)


def _warn_dir(what, path, problem, chosen):
    if (what, path, problem) in _WARNED:
        return
    _WARNED.add((what, path, problem))
    _warn("the cache (cache=True) does not use %s%s: %s; it uses %s" % (what, path, problem, chosen))


def _mangled(dirname):
    """A directory's absolute path as one name (the per-user cache keeps every tree's files apart)."""
    drive, path = os.path.splitdrive(os.path.abspath(dirname))
    return (drive.replace(":", "") + path).strip(os.sep).replace(os.sep, "_") or "root"


def _user_cache():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gpujit")


def _notebook_cell(filename):
    """The source text of the notebook cell `filename` names, or None: IPython (and Jupyter's
    kernel) compiles each cell under a name that is no file ("<ipython-input-3-...>", or
    ".../ipykernel_<pid>/<hash>.py") and keeps its text in linecache, which is what numba's
    IPython locator reads too."""
    if not filename or os.path.isfile(filename):
        return None
    base = os.path.basename(filename)
    if not (filename.startswith("<ipython-input-") or os.path.basename(os.path.dirname(filename)).startswith(
            "ipykernel_") and base.endswith(".py")):
        return None
    import linecache
    lines = linecache.getlines(filename)
    return "".join(lines) if lines else None


def _notebook_cache_dir():
    """Where kernels defined in notebook cells are cached: ipython/ in the cache root files would
    use ($GPUJIT_CACHE_DIR's, $NUMBA_CACHE_DIR's, else the per-user cache), checked as any cache
    directory is."""
    for var in ("GPUJIT_CACHE_DIR", "NUMBA_CACHE_DIR"):
        root = os.environ.get(var)
        if root:
            root = os.path.abspath(root)
            path = os.path.join(root, "ipython")
            if _root_problem(root) is None and _dir_problem(path) is None:
                return path
    path = os.path.join(_user_cache(), "ipython")
    if _dir_problem(path) is None:
        return path
    raise RuntimeError("cannot cache a kernel of a notebook cell: no writable cache directory of this user's "
                       "(set GPUJIT_CACHE_DIR)")


def _cache_dir(source):
    """The directory of `source`'s cache files: $GPUJIT_CACHE_DIR's (or $NUMBA_CACHE_DIR's), else
    __pycache__ beside it, else the per-user one. One that cannot be used is passed over, with a
    NumbaWarning where it was asked for (an environment variable) or is another user's."""
    src_dir = os.path.dirname(source)
    refused = []
    for var in ("GPUJIT_CACHE_DIR", "NUMBA_CACHE_DIR"):
        root = os.environ.get(var)
        if root:
            root = os.path.abspath(root)
            path = os.path.join(root, _mangled(src_dir))
            problem = _root_problem(root)
            if problem is None:
                problem = _dir_problem(path)
                if problem is None:
                    for what, where, why in refused:
                        _warn_dir(what, where, why, path)
                    return path
                refused.append(("$%s's directory " % var, path, problem))
            else:
                refused.append(("$%s=" % var, root, problem))
    pycache = os.path.join(src_dir, "__pycache__")
    user = os.path.join(_user_cache(), _mangled(src_dir))
    try:
        source_owner = os.stat(source).st_uid
    except OSError:
        source_owner = None
    for path, also in ((pycache, source_owner), (user, None)):
        problem = _dir_problem(path, also=also)
        if problem is None:
            for what, where, why in refused:
                _warn_dir(what, where, why, path)
            return path
        if problem.startswith("it belongs"):
            refused.append(("", path, problem))
    for what, where, why in refused:
        _warn_dir(what, where, why, "none: the kernel is not cached")
    raise RuntimeError("cannot cache %s: no writable cache directory of this user's for %s (set GPUJIT_CACHE_DIR)"
                       % (source, src_dir))


def cache_location():
    """Where cache=True puts its files, in words (`python -m gpujit info`): $GPUJIT_CACHE_DIR or
    $NUMBA_CACHE_DIR as it is used, or, where neither is set or usable, the directories chosen
    per source file, saying why a variable that is set is not used. Nothing is made."""
    ignored = []
    for var in ("GPUJIT_CACHE_DIR", "NUMBA_CACHE_DIR"):
        root = os.environ.get(var)
        if root:
            root = os.path.abspath(root)
            problem = _root_problem(root, make=False)
            if problem is None:
                return "$%s=%s" % (var, root) + "".join("; %s" % i for i in ignored)
            ignored.append("$%s=%s is not used: %s" % (var, root, problem))
    return "__pycache__ beside each source file (else %s)" % _user_cache() + "".join("; %s" % i for i in ignored)


# ---- the code's fingerprint ------------------------------------------------------------------

class _Unkeyable(Exception):
    """A value the kernel reads has no fingerprint that another process would compute too."""


# Modules keyed by their name alone: Python's own (Python's version is in the build) and
# gpujit's (the build); NumPy and numba by their version too. What a kernel reads from any
# other module is in the key, value by value.
_BY_NAME = frozenset(getattr(sys, "stdlib_module_names", ())) | {"builtins", "gpujit"}
_BY_VERSION = frozenset({"numpy", "numba"})


def _scalar(h, v):
    """A number, string, bytes or None; a float by its bits (repr() gives a NaN of either sign
    and any payload as 'nan', and the compiler keeps them)."""
    if isinstance(v, float):
        h.update(("%s:%s;" % (type(v).__name__, struct.pack("<d", v).hex())).encode())
    elif isinstance(v, complex):
        h.update(("%s:%s;" % (type(v).__name__, struct.pack("<dd", v.real, v.imag).hex())).encode())
    else:
        h.update(("%s:%r;" % (type(v).__name__, v)).encode())


def _const(h, c):
    if isinstance(c, types.CodeType):     # nested code objects by content, never by their repr's address
        _code(h, c)
    elif isinstance(c, tuple):
        h.update(("tuple(%d)" % len(c)).encode())
        for x in c:
            _const(h, x)
    elif isinstance(c, frozenset):       # `x in {...}`: a set's order changes with the hash seed
        h.update(("frozenset(%d)" % len(c)).encode())
        for r in sorted(repr(x) for x in c):
            h.update(r.encode() + b";")
    else:
        _scalar(h, c)


def _code(h, code):
    h.update(b"code")
    h.update(code.co_code)
    h.update(repr(code.co_names).encode())
    # the names, file and lines are compiled in too (error messages, lineinfo, debug), and the
    # exception table decides where a raise goes
    h.update(repr((code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags,
                   code.co_varnames, code.co_freevars, code.co_cellvars, code.co_name, code.co_filename,
                   code.co_firstlineno)).encode())
    h.update(getattr(code, "co_linetable", b""))
    h.update(getattr(code, "co_exceptiontable", b""))
    for c in code.co_consts:
        _const(h, c)


def _function(h, f, seen):
    if id(f) in seen:                 # recursion: named, not followed again
        h.update(("recursive %s;" % f.__qualname__).encode())
        return
    seen.add(id(f))
    _code(h, f.__code__)
    names = frozenset(_names(f.__code__))
    glbls = f.__globals__
    for name in sorted(names):
        if name in glbls:
            h.update(("global %s=" % name).encode())
            _value(h, glbls[name], seen, names, "global '%s' of %s" % (name, f.__qualname__))
    for var, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
        h.update(b"cell=")
        try:
            value = cell.cell_contents
        except ValueError:            # an empty cell
            h.update(b"<empty>")
            continue
        _value(h, value, seen, names, "closure variable '%s' of %s" % (var, f.__qualname__))
    h.update(b"defaults=")
    _value(h, f.__defaults__, seen, names, "the defaults of %s" % f.__qualname__)
    h.update(b"kwdefaults=")
    _value(h, f.__kwdefaults__, seen, names, "the defaults of %s" % f.__qualname__)
    _overloads(h, f, seen, names)


def _overloads(h, f, seen, names):
    """gpujit.extending.overload: a kernel's call of f runs what one of these typing functions
    returns, wherever they were defined."""
    overloads = f.__dict__.get("__gpujit_overload__")
    if overloads is not None:
        h.update(b"overloads=")
        typers = getattr(overloads, "typers", None)
        for t in (list(typers) if typers is not None else [overloads]):
            _value(h, t, seen, names, "an overload of %s" % f.__qualname__)


def _module(h, m, seen, names, where):
    """A module by its name; one of the project's by the value of each of its attributes that
    the reading code names (`helpers.SCALE`, `helpers.dev`): a superset of what it reads,
    which the compiler resolves at compile time."""
    name = m.__name__
    h.update(("module %s;" % name).encode())
    top = name.partition(".")[0]
    library = top in _BY_NAME or top in _BY_VERSION
    if top in _BY_VERSION:
        h.update(("version %s;" % getattr(sys.modules.get(top), "__version__", None)).encode())
    mark = ("module", id(m), names)
    if mark in seen:
        return
    seen.add(mark)
    attrs = m.__dict__
    if library:
        # a library's own code is in its version; what the project adds to it is not: the
        # @overloads of its functions (np.linalg.norm's, say), in its modules the code names
        for attr in sorted(names):
            v = attrs.get(attr)
            if isinstance(v, types.ModuleType):
                _module(h, v, seen, names, "%s.%s" % (name, attr))
            elif isinstance(v, types.FunctionType) and "__gpujit_overload__" in v.__dict__:
                h.update(("overloaded %s=" % attr).encode())
                _overloads(h, v, seen, names)
        return
    for attr in sorted(names):
        if attr in attrs:
            v = attrs[attr]
        elif "__getattr__" in attrs:   # a module's own __getattr__ (PEP 562), as the compiler sees it
            try:
                v = getattr(m, attr)
            except Exception:
                continue
        else:
            continue
        h.update(("attr %s=" % attr).encode())
        _value(h, v, seen, names, "%s.%s" % (name, attr))


def _enum_class(h, cls, seen, names, where):
    """An Enum by its bases and its members' names and values (the compiler compiles them in)."""
    h.update(("enum %s.%s%r;" % (cls.__module__, cls.__qualname__,
                                 [b.__qualname__ for b in cls.__mro__])).encode())
    if id(cls) in seen:
        return
    seen.add(id(cls))
    for n, member in cls.__members__.items():
        h.update(("member %s=" % n).encode())
        _value(h, member.value, seen, names, "%s.%s" % (where, n))


def _value(h, v, seen, names, where):
    """`where` names the value in the warning that says why a kernel is not cached."""
    if is_numba_object(v):   # numba's types and njit functions: what the compiler uses for them
        v = counterpart(v) or v
    if isinstance(v, types.ModuleType):
        _module(h, v, seen, names, where)
    elif isinstance(v, enum.Enum):
        h.update(("enum member %s;" % v.name).encode())
        _enum_class(h, type(v), seen, names, where)
    elif isinstance(v, type) and issubclass(v, enum.Enum):
        _enum_class(h, v, seen, names, where)
    elif isinstance(v, types.FunctionType):
        h.update(b"function ")
        _function(h, v, seen)
    elif getattr(v, "__gpujit_device__", False) and isinstance(getattr(v, "py_func", None), types.FunctionType):
        # a kernel or device function called from the kernel: compiled into it, with its options
        h.update(("%s %r;" % (type(v).__name__, sorted(getattr(v, "_options", {}).items(), key=repr))).encode())
        h.update(repr(getattr(v, "signatures", None) if type(v).__name__ == "DeviceFunction" else None).encode())
        _function(h, v.py_func, seen)
    elif isinstance(v, (bool, int, float, complex, str, bytes, type(None))):
        _scalar(h, v)
    elif isinstance(v, (tuple, list)):
        h.update(("%s(%d)" % (type(v).__name__, len(v))).encode())
        for x in v:
            _value(h, x, seen, names, where)
    elif type(v) is dict:
        h.update(("dict(%d)" % len(v)).encode())
        for k, x in v.items():
            _value(h, k, seen, names, where)
            _value(h, x, seen, names, where)
    elif isinstance(v, (set, frozenset)):      # in an order that does not depend on the hash seed
        parts = []
        for x in v:
            sub = _digest()
            _value(sub, x, set(seen), names, where)
            parts.append(sub.digest())
        h.update(("%s(%d)" % (type(v).__name__, len(v))).encode())
        for p in sorted(parts):
            h.update(p)
    elif isinstance(v, np.ndarray) and v.dtype.kind not in "OV":
        h.update(("ndarray %s %r;" % (v.dtype.str, v.shape)).encode())
        h.update(np.ascontiguousarray(v).tobytes())
    else:
        try:
            data = pickle.dumps(v, protocol=4)
        except Exception:
            raise _Unkeyable("%s (a %s, which does not pickle)" % (where, type(v).__qualname__)) from None
        h.update(b"pickle ")
        h.update(data)


def _fingerprint(py_func):
    """(fingerprint, None), or (None, why) where some value it reads cannot be fingerprinted."""
    h = _digest()
    try:
        _function(h, py_func, set())
    except _Unkeyable as e:
        return None, str(e)
    except RecursionError:
        return None, "a value it reads is nested too deeply"
    return h.hexdigest(), None


def fingerprint(py_func):
    """The hash of what the kernel compiled from `py_func` depends on in Python (see above);
    None where some value it reads cannot be fingerprinted."""
    return _fingerprint(py_func)[0]


# ---- locking ---------------------------------------------------------------------------------

_held = _thread._local()


_LOCKS = []


def _lock_dir():
    """This user's private directory of lock files, made on first use: the per-user cache's
    locks/, mode 0700, owned by this user and no link; None where it cannot be had."""
    if _LOCKS:
        return _LOCKS[0]
    path = os.path.join(_user_cache(), "locks")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != _uid():
            path = None
        elif st.st_mode & 0o077:
            os.chmod(path, 0o700)
    except OSError:
        path = None
    _LOCKS.append(path)
    return path


def _open_lock(path):
    """The lock file at `path`, opened (made if need be), or None: a link is never followed (the
    file a link names would be made, or locked, as this user), and a file that is not a regular
    file of this user's is not used (another user holding it would stall each compile)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o600)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != _uid():
        os.close(fd)
        return None
    return fd


@contextlib.contextmanager
def _interprocess_lock(path):
    """An exclusive lock shared by the processes of this machine: flock() on the file `path`, in
    the cache directory (which no other user may write: _dir_problem). Yields whether it is
    held: where locks are not available (or the file is refused, or a holder takes too long), the
    block runs without one: the files stay intact either way, a kernel may only be compiled twice."""
    held = getattr(_held, "names", None)
    if held is None:
        held = _held.names = set()
    try:
        import fcntl
    except ImportError:
        fcntl = None
    fd = None
    if fcntl is not None and path not in held:
        try:
            fd = _open_lock(path)
            deadline = time.monotonic() + _LOCK_WAIT_S
            while fd is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        os.close(fd)
                        fd = None
                        break
                    time.sleep(0.02)
        except OSError:
            if fd is not None:
                os.close(fd)
            fd = None
    if fd is not None:
        held.add(path)
    try:
        yield fd is not None
    finally:
        if fd is not None:
            held.discard(path)
            os.close(fd)      # releases the lock


# ---- the files -------------------------------------------------------------------------------

class FunctionCache:
    """The cache files of one Python function."""

    def __init__(self, py_func):
        filename = getattr(py_func.__code__, "co_filename", None)
        self._cell = _notebook_cell(filename)  # a notebook cell's text: stands for the file
        try:
            source = inspect.getsourcefile(py_func) or inspect.getfile(py_func)
        except TypeError:
            source = None
        if self._cell is None and (not source or not os.path.isfile(source)):
            raise RuntimeError("cannot cache function %r: no locator available for file %r (caching needs "
                               "the function's source file, or a notebook cell)" % (py_func.__qualname__, filename))
        self._py_func = py_func
        self._source = filename if self._cell is not None else os.path.abspath(source)
        modname = os.path.splitext(os.path.basename(self._source.strip("<>")))[0]
        modname = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in modname)
        qual = py_func.__qualname__.replace("<locals>", "locals").replace("<lambda>", "lambda")
        qual = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in qual)
        # numba's name with `.gpujit` added: numba's CPU cache of the same function (@njit(cache=True))
        # keeps its own files beside these, neither overwriting nor removing the other's
        self._name = "%s.%s-%d.py%d%d.gpujit" % (modname, qual, py_func.__code__.co_firstlineno,
                                                 *sys.version_info[:2])
        self._dir = _notebook_cache_dir() if self._cell is not None else _cache_dir(self._source)
        self._lock = _thread.allocate_lock()
        self._warned = False
        self.stats = CacheStats(self._dir)

    @property
    def index_path(self):
        return os.path.join(self._dir, self._name + ".nbi")

    @property
    def lock_path(self):
        locks = _lock_dir()
        if locks is None:
            return os.path.join(self._dir, self._name + ".lock")
        return os.path.join(locks, _digest(self.index_path.encode()).hexdigest()[:32] + ".lock")

    def _stamp(self):
        if self._cell is not None:  # a cell has no file: its text, as it is now
            import linecache
            return ("cell", _digest("".join(linecache.getlines(self._source)).encode()).hexdigest())
        st = os.stat(self._source)
        return (st.st_mtime, st.st_size)

    def _read_index(self):
        try:
            with open(self.index_path, "rb") as f:
                stamp, build, entries = pickle.load(f)
        except Exception:         # missing, truncated, corrupt or foreign: start again
            return {}
        if stamp != self._stamp() or build != _build() or not isinstance(entries, dict):
            return {}            # the source changed, or another build wrote it: start again
        return entries

    def _write(self, path, data):
        import tempfile
        fd, tmp = tempfile.mkstemp(dir=self._dir, prefix=".gpujit-tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)    # atomic: another process never reads half a file
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def key(self, sig, target, cc, options):
        """The entry's key, or None where the kernel cannot be cached (see fingerprint())."""
        fp, why = _fingerprint(self._py_func)
        if fp is None:
            if not self._warned:
                self._warned = True
                _warn("cannot cache %s: %s has no fingerprint, so the cache could not tell a changed "
                      "value from this one; it is compiled and not written to the cache"
                      % (self._py_func.__qualname__, why))
            return None
        return (sig, target, tuple(cc), _host() if target == "cpu" else None,
                tuple(sorted(options.items(), key=repr)), fp)

    @staticmethod
    def _key_hash(key):
        return _digest(repr(key).encode()).hexdigest()

    def _data_name(self, key):
        return "%s.%s.nbc" % (self._name, self._key_hash(key)[:20])

    def _read_entry(self, key):
        """The state of `key`'s kernel as stored, or None (missing, damaged, another key's)."""
        entry = self._read_index().get(key)
        if entry is None:
            return None
        try:
            with open(os.path.join(self._dir, entry), "rb") as f:
                blob = f.read()
            magic, key_hash, digest, payload = pickle.loads(blob)
            if (magic != _MAGIC or key_hash != self._key_hash(key)
                    or _digest(payload).hexdigest() != digest):
                return None      # damaged, or another key's: compile again (and overwrite it)
            state = pickle.loads(payload)
            return state if isinstance(state, dict) else None
        except Exception:
            return None

    def _load(self, key, name, sig):
        state = self._read_entry(key)
        if state is None:
            return None
        cubin = state.pop("cubin", None)
        try:
            k = _core.kernel_from_state(dict(state), name, sig)
        except Exception:
            return None
        tag = cubin_tag(key[1], key[2])
        if tag is None:
            return k
        if isinstance(cubin, tuple) and len(cubin) == 2 and cubin[0] == tag and isinstance(cubin[1], bytes):
            try:
                _core.module_load_cubin(k, cubin[1])
                self.stats.cubin_hits[sig] += 1
                _PROCESS.cubin_hits[sig] += 1
                return k
            except Exception:
                pass             # refused by the driver: compiled from the PTX below, and rewritten
        # stored without machine code for this device and driver: made now (the launch would
        # compile the PTX anyway) and added to the file for the next process
        image = self._cubin(k)
        if image is not None:
            self._save(key, state, (tag, image), sig)
        return k

    @staticmethod
    def _cubin(kernel):
        """The kernel's cubin for the current device, now loaded there; None where the driver
        cannot make one (its error comes again, and is reported, at the launch)."""
        try:
            return _core.module_cubin(kernel)
        except Exception:
            return None

    def load(self, key, name, sig):
        """The cached kernel of `key`, loaded, or None."""
        if key is None:
            return None
        with self._lock:
            return self._load(key, name, sig)

    def load_or_compile(self, key, name, sig, compile_fn, use_cache=True):
        """The kernel of `key`: loaded, else compiled by compile_fn() and written. While one
        process compiles, the others wait for it and then load its kernel."""
        if key is None:
            self.stats.cache_misses[sig] += 1
            _PROCESS.cache_misses[sig] += 1
            return compile_fn()
        k = self.load(key, name, sig) if use_cache else None
        if k is None:
            with _interprocess_lock(self.lock_path):
                k = self.load(key, name, sig) if use_cache else None
                if k is None:
                    k = compile_fn()
                    self.stats.cache_misses[sig] += 1
                    _PROCESS.cache_misses[sig] += 1
                    tag = cubin_tag(key[1], key[2])
                    image = self._cubin(k) if tag is not None else None
                    self.save(key, k, (tag, image) if image is not None else None)
                    return k
        self.stats.cache_hits[sig] += 1
        _PROCESS.cache_hits[sig] += 1
        return k

    def save(self, key, kernel, cubin=None):
        """Writes `key`'s entry: the kernel and, when given, its machine code as (tag, bytes)."""
        if key is None:
            return
        try:
            state = _core.kernel_state(kernel)
        except ValueError as e:
            raise pickle.PicklingError("cannot cache %s: %s; global device arrays cannot be cached"
                                       % (self._py_func.__qualname__, e)) from None
        with self._lock:
            self._save(key, state, cubin)

    def _save(self, key, state, cubin, sig=None):
        """save() of a kernel's state, with self._lock held. With `sig`, an entry that was read
        is rewritten (as it was read) with its new machine code: counted as a cubin write, not
        an entry's."""
        if cubin is not None:
            state["cubin"] = cubin
        payload = pickle.dumps(state, protocol=4)
        blob = pickle.dumps((_MAGIC, self._key_hash(key), _digest(payload).hexdigest(), payload),
                            protocol=4)
        entries = self._read_index()
        entry = self._data_name(key)
        try:
            self._write(os.path.join(self._dir, entry), blob)
            if sig is None or entries.get(key) != entry:
                entries[key] = entry
                self._write(self.index_path, pickle.dumps((self._stamp(), _build(), entries), protocol=4))
            if sig is None:
                self.stats.cache_writes[key[0]] += 1
                _PROCESS.cache_writes[key[0]] += 1
                self._drop_stale(set(entries.values()))
            if cubin is not None:
                self.stats.cubin_writes[key[0]] += 1
                _PROCESS.cubin_writes[key[0]] += 1
        except OSError:
            pass             # a cache that cannot be written is only slower

    def _drop_stale(self, keep):
        """Data files of this function that its index no longer lists (written for an older
        source or build) are removed, so the directory does not grow with each edit."""
        prefix = self._name + "."
        try:
            names = os.listdir(self._dir)
        except OSError:
            return
        for f in names:
            if f.startswith(prefix) and f.endswith(".nbc") and f not in keep:
                try:
                    os.unlink(os.path.join(self._dir, f))
                except OSError:
                    pass
