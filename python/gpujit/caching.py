"""The on-disk cache of @jit(cache=True) kernels, as numba's.

Each function has an index file, `<module>.<qualname>-<line>.py<ver>.nbi`, listing its cached
specialisations, and one data file per specialisation, `<...>.<n>.nbc`, holding the compiled
kernel (the GPU's PTX; the CPU's optimised LLVM bitcode, which a load hands to the JIT,
skipping everything before code generation). The files live in the directory given by
$NUMBA_CACHE_DIR (or $GPUJIT_CACHE_DIR), else in `__pycache__` beside the source file when
that can be written, else in a per-user directory (~/.cache/gpujit, or $XDG_CACHE_HOME).

An entry is found by the signature, the target and compute capability, the compile options,
the function's bytecode and the values of its closure variables. The whole index is dropped
when the source file changes (its modification time or size, as numba checks) or when another
gpujit build wrote it. Globals the function reads are not part of the key (numba's rule too):
after changing one at run time, call `kernel.recompile()`.

A kernel that compiles in a captured device array's address cannot be cached
(pickle.PicklingError), nor can a function whose source file is unknown (RuntimeError).
"""
import collections
import hashlib
import inspect
import os
import pickle
import sys
import tempfile
import threading

from . import _core

__all__ = ["FunctionCache", "CacheStats"]


def _build_id():
    """What makes cached kernels of one gpujit build unusable by another: its version and
    the compiler's shared library (the ABI structs are stored as bytes)."""
    try:
        st = os.stat(_core.__file__)
        lib = (st.st_size, st.st_mtime_ns)
    except (OSError, AttributeError):
        lib = None
    from . import __version__
    return ("gpujit", __version__, lib, sys.version_info[:2])


_BUILD = None


class CacheStats:
    """cache_hits and cache_misses per signature (collections.Counter), and where the files are."""

    def __init__(self, cache_path=None):
        self.cache_path = cache_path
        self.cache_hits = collections.Counter()
        self.cache_misses = collections.Counter()

    def __repr__(self):
        return "CacheStats(hits=%d, misses=%d, path=%r)" % (sum(self.cache_hits.values()),
                                                              sum(self.cache_misses.values()), self.cache_path)


def _writable(path):
    try:
        os.makedirs(path, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path, prefix=".gpujit-probe-")
        os.close(fd)
        os.unlink(tmp)
        return True
    except OSError:
        return False


def _mangled(dirname):
    """A directory's absolute path as one name (the per-user cache keeps every tree's files apart)."""
    drive, path = os.path.splitdrive(os.path.abspath(dirname))
    return (drive.replace(":", "") + path).strip(os.sep).replace(os.sep, "_") or "root"


def _cache_dir(source):
    src_dir = os.path.dirname(source)
    for var in ("NUMBA_CACHE_DIR", "GPUJIT_CACHE_DIR"):
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
    raise RuntimeError("cannot cache %s: no writable cache directory for %s (set NUMBA_CACHE_DIR)"
                       % (source, src_dir))


def _closure_hash(py_func):
    """The closure variables' values, hashed: closures of one function keep separate entries."""
    cells = py_func.__closure__ or ()
    h = hashlib.sha256()
    for cell in cells:
        try:
            value = cell.cell_contents
        except ValueError:       # an empty cell
            h.update(b"<empty>")
            continue
        try:
            h.update(pickle.dumps(value, protocol=4))
        except Exception:        # not picklable: keyed by identity, so never found by another process
            h.update(("%s@%x" % (type(value).__qualname__, id(value))).encode())
    return h.hexdigest()


def _code_hash(code):
    h = hashlib.sha256(code.co_code)
    h.update(repr(code.co_consts).encode())
    h.update(repr(code.co_names).encode())
    return h.hexdigest()


class FunctionCache:
    """The cache files of one Python function."""

    def __init__(self, py_func):
        try:
            source = inspect.getsourcefile(py_func) or inspect.getfile(py_func)
        except TypeError:
            source = None
        if not source or not os.path.isfile(source):
            raise RuntimeError("cannot cache function %r: no locator available for file %r (caching needs "
                               "the function's source file)" % (py_func.__qualname__,
                                                                getattr(py_func.__code__, "co_filename", None)))
        self._py_func = py_func
        self._source = os.path.abspath(source)
        modname = os.path.splitext(os.path.basename(source))[0]
        qual = py_func.__qualname__.replace("<locals>", "locals").replace("<lambda>", "lambda")
        qual = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in qual)
        self._name = "%s.%s-%d.py%d%d" % (modname, qual, py_func.__code__.co_firstlineno, *sys.version_info[:2])
        self._dir = _cache_dir(self._source)
        self._lock = threading.Lock()
        self.stats = CacheStats(self._dir)

    @property
    def index_path(self):
        return os.path.join(self._dir, self._name + ".nbi")

    def _stamp(self):
        st = os.stat(self._source)
        return (st.st_mtime, st.st_size)

    def _read_index(self):
        global _BUILD
        if _BUILD is None:
            _BUILD = _build_id()
        try:
            with open(self.index_path, "rb") as f:
                stamp, build, entries = pickle.load(f)
        except (OSError, EOFError, ValueError, TypeError, pickle.UnpicklingError, AttributeError, ImportError):
            return {}
        if stamp != self._stamp() or build != _BUILD:
            return {}            # the source changed, or another build wrote it: start again
        return entries

    def _write(self, path, obj):
        fd, tmp = tempfile.mkstemp(dir=self._dir, prefix=".gpujit-tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump(obj, f, protocol=4)
            os.replace(tmp, path)    # atomic: another process never reads half a file
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def key(self, sig, target, cc, options):
        return (sig, target, tuple(cc), tuple(sorted(options.items())), _code_hash(self._py_func.__code__),
                _closure_hash(self._py_func))

    def load(self, key, name, sig):
        """The cached kernel of `key`, loaded, or None."""
        with self._lock:
            entry = self._read_index().get(key)
            if entry is None:
                return None
            try:
                with open(os.path.join(self._dir, entry), "rb") as f:
                    state = pickle.load(f)
                return _core.kernel_from_state(state, name, sig)
            except (OSError, EOFError, ValueError, TypeError, pickle.UnpicklingError, AttributeError,
                    ImportError):
                return None      # a damaged or foreign entry: compile again (and overwrite it)

    def save(self, key, kernel):
        try:
            state = _core.kernel_state(kernel)
        except ValueError as e:
            raise pickle.PicklingError("cannot cache %s: %s; global device arrays cannot be cached"
                                       % (self._py_func.__qualname__, e)) from None
        with self._lock:
            entries = self._read_index()
            entry = entries.get(key)
            if entry is None:
                used = set(entries.values())
                n = 1
                while "%s.%d.nbc" % (self._name, n) in used:
                    n += 1
                entry = "%s.%d.nbc" % (self._name, n)
            try:
                self._write(os.path.join(self._dir, entry), state)
                entries[key] = entry
                self._write(self.index_path, (self._stamp(), _BUILD, entries))
            except OSError:
                pass             # a cache that cannot be written is only slower
