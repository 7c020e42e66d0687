"""The on-disk cache of @jit(cache=True) kernels, as numba's.

Each function has an index file, `<module>.<qualname>-<line>.py<ver>.nbi`, listing its cached
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
the function's bytecode and constants, the values of the globals and closure variables it reads
(gpujit compiles them in as constants, so a changed value is a different kernel; numba leaves
globals out of its key), and the same of every device function and plain function it calls,
transitively. A value that cannot be fingerprinted (an object that does not pickle) makes the
kernel uncacheable in that process (compiled, not written). The whole index is dropped when
the source file changes (its modification time or size, as numba checks) or when another
build wrote it: another gpujit version or compiler library, Python, LLVM or libdevice.

Many processes may share one directory (multiprocessing or Dask workers): files are written
to a temporary name and renamed, so a reader never sees half of one; each data file carries its
key's hash and a checksum of its contents, so a truncated, corrupt or foreign file is a miss
(compiled again and rewritten), never a crash or a wrong kernel. A process that misses takes a
per-function lock (a file in the temporary directory, never in the cache directory) while it
compiles and writes, and looks again once it has it: processes starting at once compile each
kernel once and the others load it.

A kernel that compiles in a captured device array's address cannot be cached
(pickle.PicklingError), nor can a function whose source file is unknown (RuntimeError).
"""
import collections
import contextlib
import inspect
import os
import pickle
import _thread   # not threading, nor tempfile at the top: each costs milliseconds of a fresh process's start
import sys
import time
import types

import numpy as np

from . import _core
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


def _build_id():
    """What makes cached kernels of one build unusable by another: gpujit's version, the
    compiler's shared library (the ABI structs are stored as bytes), Python's and LLVM's
    versions, and the libdevice file GPU kernels link (by its path, size and modification time)."""
    try:
        st = os.stat(_core.__file__)
        lib = (st.st_size, st.st_mtime_ns)
    except (OSError, AttributeError):
        lib = None
    env = _core.cache_environment()
    from . import __version__
    return ("gpujit", __version__, lib, sys.version_info[:2], env["llvm"], _file_stamp(env["libdevice"]))


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


def _writable(path):
    """The directory exists (made if need be) and this process may create files in it
    (access() also sees a read-only mount); asked, not tried: a probe file cost a file
    creation and removal in every process's first load."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK | os.X_OK)


def _mangled(dirname):
    """A directory's absolute path as one name (the per-user cache keeps every tree's files apart)."""
    drive, path = os.path.splitdrive(os.path.abspath(dirname))
    return (drive.replace(":", "") + path).strip(os.sep).replace(os.sep, "_") or "root"


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
    """Where kernels defined in notebook cells are cached: $GPUJIT_CACHE_DIR/ipython (or
    $NUMBA_CACHE_DIR's), else the per-user cache's ipython/."""
    roots = [os.environ.get(var) for var in ("GPUJIT_CACHE_DIR", "NUMBA_CACHE_DIR")]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    for root in [os.path.abspath(r) for r in roots if r] + [os.path.join(base, "gpujit")]:
        path = os.path.join(root, "ipython")
        if _writable(path):
            return path
    raise RuntimeError("cannot cache a kernel of a notebook cell: no writable cache directory (set GPUJIT_CACHE_DIR)")


def _cache_dir(source):
    src_dir = os.path.dirname(source)
    for var in ("GPUJIT_CACHE_DIR", "NUMBA_CACHE_DIR"):
        root = os.environ.get(var)
        if root:
            path = os.path.join(os.path.abspath(root), _mangled(src_dir))
            if _writable(path):
                return path
    path = os.path.join(src_dir, "__pycache__")
    if _writable(path):
        return path
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(base, "gpujit", _mangled(src_dir))
    if _writable(path):
        return path
    raise RuntimeError("cannot cache %s: no writable cache directory for %s (set GPUJIT_CACHE_DIR)"
                       % (source, src_dir))


# ---- the code's fingerprint ------------------------------------------------------------------

class _Unkeyable(Exception):
    """A value the kernel reads has no fingerprint that another process would compute too."""


def _code(h, code):
    h.update(b"code")
    h.update(code.co_code)
    h.update(repr(code.co_names).encode())
    h.update(repr((code.co_argcount, code.co_kwonlyargcount, code.co_flags, code.co_varnames)).encode())
    for c in code.co_consts:          # nested code objects by content, never by their repr's address
        if isinstance(c, types.CodeType):
            _code(h, c)
        else:
            h.update(("%s:%r;" % (type(c).__name__, c)).encode())


def _function(h, f, seen):
    if id(f) in seen:                 # recursion: named, not followed again
        h.update(("recursive %s;" % f.__qualname__).encode())
        return
    seen.add(id(f))
    _code(h, f.__code__)
    glbls = f.__globals__
    for name in sorted(_names(f.__code__)):
        if name in glbls:
            h.update(("global %s=" % name).encode())
            _value(h, glbls[name], seen)
    for cell in f.__closure__ or ():
        h.update(b"cell=")
        try:
            value = cell.cell_contents
        except ValueError:            # an empty cell
            h.update(b"<empty>")
            continue
        _value(h, value, seen)
    h.update(b"defaults=")
    _value(h, f.__defaults__, seen)


def _value(h, v, seen):
    if isinstance(v, types.ModuleType):
        h.update(("module %s;" % v.__name__).encode())
    elif isinstance(v, types.FunctionType):
        h.update(b"function ")
        _function(h, v, seen)
    elif getattr(v, "__gpujit_device__", False) and isinstance(getattr(v, "py_func", None), types.FunctionType):
        # a kernel or device function called from the kernel: compiled into it, with its options
        h.update(("%s %r;" % (type(v).__name__, sorted(getattr(v, "_options", {}).items(), key=repr))).encode())
        h.update(repr(getattr(v, "signatures", None) if type(v).__name__ == "DeviceFunction" else None).encode())
        _function(h, v.py_func, seen)
    elif isinstance(v, (bool, int, float, complex, str, bytes, type(None))):
        h.update(("%s:%r;" % (type(v).__name__, v)).encode())
    elif isinstance(v, (tuple, list)):
        h.update(("%s(%d)" % (type(v).__name__, len(v))).encode())
        for x in v:
            _value(h, x, seen)
    elif isinstance(v, np.ndarray) and v.dtype.kind not in "OV":
        h.update(("ndarray %s %r;" % (v.dtype.str, v.shape)).encode())
        h.update(np.ascontiguousarray(v).tobytes())
    else:
        try:
            data = pickle.dumps(v, protocol=4)
        except Exception:
            raise _Unkeyable(type(v).__qualname__) from None
        h.update(b"pickle ")
        h.update(data)


def fingerprint(py_func):
    """The hash of what the kernel compiled from `py_func` depends on in Python (see above);
    None where some value it reads cannot be fingerprinted."""
    h = _digest()
    try:
        _function(h, py_func, set())
    except (_Unkeyable, RecursionError):
        return None
    return h.hexdigest()


# ---- locking ---------------------------------------------------------------------------------

_held = _thread._local()


@contextlib.contextmanager
def _interprocess_lock(name):
    """An exclusive lock shared by the processes of this machine, by name; where locks are not
    available (or a holder takes too long), the block runs without one: the files stay intact
    either way, a kernel may only be compiled twice."""
    held = getattr(_held, "names", None)
    if held is None:
        held = _held.names = set()
    try:
        import fcntl
    except ImportError:
        fcntl = None
    fd = None
    if fcntl is not None and name not in held:
        import tempfile
        lockdir = os.path.join(tempfile.gettempdir(), "gpujit-cache-locks-%s" % getattr(os, "getuid", lambda: 0)())
        try:
            os.makedirs(lockdir, exist_ok=True)
            fd = os.open(os.path.join(lockdir, name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
            deadline = time.monotonic() + _LOCK_WAIT_S
            while True:
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
        held.add(name)
    try:
        yield
    finally:
        if fd is not None:
            held.discard(name)
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
        self._name = "%s.%s-%d.py%d%d" % (modname, qual, py_func.__code__.co_firstlineno, *sys.version_info[:2])
        self._dir = _notebook_cache_dir() if self._cell is not None else _cache_dir(self._source)
        self._lock = _thread.allocate_lock()
        self.stats = CacheStats(self._dir)

    @property
    def index_path(self):
        return os.path.join(self._dir, self._name + ".nbi")

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
        fp = fingerprint(self._py_func)
        if fp is None:
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
            with _interprocess_lock(_digest(self.index_path.encode()).hexdigest()[:32]):
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
