"""Shared helpers for gpujit's compiler tests.

Kernels run on the CPU backend here (no GPU needed). Every kernel a test
compiles for the CPU is also compiled to PTX for each signature it was
launched with, and that PTX is assembled by `ptxas -arch=sm_90` (one ptxas
process per new kernel signature, a test's run concurrently) -- so each launch test
doubles as a check that the NVPTX path produces valid PTX. Without ptxas on
PATH that part is skipped.
"""
import os
import shutil
import subprocess
import tempfile

# The IR verifier (src/verify.c) checks every kernel the suite compiles. The compiler reads
# GPUJIT_DEBUG per compilation; "verify" alone turns on no dumps. A value already set is left
# alone, so GPUJIT_DEBUG=ir etc. still work (add verify to keep the checks).
os.environ.setdefault("GPUJIT_DEBUG", "verify")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import gpujit as gpu  # noqa: E402
from gpujit.dispatcher import Dispatcher
from gpujit.typing import signature_string

PTXAS = shutil.which("ptxas")

# -- recording what tests compile ----------------------------------------------------------
_seen = set()      # (code object, signature) already checked by ptxas, session-wide
_pending = []      # (dispatcher, signature) compiled for the CPU during the current test
_orig_compile = Dispatcher.compile


def _recording_compile(self, sig, target=None, cc=None):
    sig = signature_string(sig)  # types and tuples of types too
    k = _orig_compile(self, sig, target, cc)
    if (target or gpu.current_target()) != "cuda":
        key = (self.py_func.__code__, sig.strip())
        if key not in _seen:
            _seen.add(key)
            _pending.append((self, sig.strip()))
    return k


Dispatcher.compile = _recording_compile

# -- GPUJIT_PTX_SNAPSHOT=DIR: every PTX the suite makes, for scripts/ptx_snapshot.py ------------
_SNAPSHOT = os.environ.get("GPUJIT_PTX_SNAPSHOT")
if _SNAPSHOT:
    import hashlib
    import json
    import re
    _orig_core_compile = gpu._core.compile
    _snap_file = open(os.path.join(_SNAPSHOT, "ptx-%d.jsonl" % os.getpid()), "a")

    def _consts(code):
        return tuple(_consts(k) if hasattr(k, "co_code") else k for k in code.co_consts)

    def _snapshot_compile(code, globals_, closure, sig, **kw):
        k = _orig_core_compile(code, globals_, closure, sig, **kw)
        if kw.get("target") == "cuda":
            cells = []
            for cell in closure or ():
                try:
                    cells.append(repr(cell.cell_contents)[:80])
                except ValueError:  # an empty cell
                    cells.append("<empty>")
            # keyed by what the code is, not where it stands: a test file edited above a kernel
            # moves it without changing it
            what = hashlib.sha256(repr((code.co_code, _consts(code), code.co_names)).encode()).hexdigest()[:16]
            opts = {n: v for n, v in kw.items() if n != "keep_llvm"}
            opts.setdefault("boundscheck", bool(opts.get("debug")))  # an option older records lack
            key = "%s %s#%s %s %s %s" % (os.path.basename(code.co_filename), code.co_name, what, sig,
                                        sorted(opts.items()), cells)
            # the checkout's path appears in lineinfo's .file directives
            # and NVPTX numbers call sequences with a process-wide counter
            ptx = re.sub(r"callseq \d+", "callseq N", k.ptx.replace(os.getcwd(), "<checkout>"))
            _snap_file.write(json.dumps({"key": key, "sha": hashlib.sha256(ptx.encode()).hexdigest(),
                                         "ptx": ptx}) + "\n")
            _snap_file.flush()
        return k

    gpu._core.compile = _snapshot_compile


def assemble_ptx(named_ptx):
    """Run ptxas on several PTX texts [(label, ptx)], one process each, all at once (ptxas
    given several files links them as one program, so they can't share a call). Raises
    AssertionError naming each label whose PTX ptxas rejects."""
    if not PTXAS or not named_ptx:
        return
    with tempfile.TemporaryDirectory(prefix="gj-ptx-") as d:
        procs = []
        for n, (label, ptx) in enumerate(named_ptx):
            path = os.path.join(d, "k%d.ptx" % n)
            with open(path, "w") as f:
                f.write(ptx)
            procs.append((label, subprocess.Popen([PTXAS, "-arch=sm_90", "-o", os.devnull, path],
                                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
        errors = []
        for label, p in procs:
            out, _ = p.communicate(timeout=120)
            if p.returncode != 0:
                errors.append("%s:\n%s" % (label, out[-3000:]))
        if errors:
            raise AssertionError("ptxas rejected the PTX of " + "\n".join(errors))


def pytest_configure(config):
    # numba's performance warnings are on by default; on a GPU every small launch of the suite
    # would give one. Tests of them record them under their own filters (pytest.warns, "always").
    for message in ("Grid size", "Host array used in CUDA kernel"):
        config.addinivalue_line("filterwarnings", "ignore:%s:gpujit.errors.NumbaPerformanceWarning" % message)


@pytest.fixture(autouse=True)
def _performance_warning_settings():
    """Puts back gpujit.config's launcher settings a test changed (assigning the occupancy
    setting also makes the CPU target warn, for the rest of the process)."""
    from gpujit import config
    saved = [(n, getattr(config, n)) for n in config._LAUNCHER_SETTINGS]
    yield
    for n, v in saved:
        if getattr(config, n) is not v:
            setattr(config, n, v)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    del _pending[:]
    result = yield  # the test body; a failure there propagates and skips the PTX check
    pending, _pending[:] = list(_pending), []
    if PTXAS and pending:
        assemble_ptx([("%s %s" % (d.__name__, sig), d.inspect_ptx(sig)) for d, sig in pending])
    return result


# -- launching and comparing -----------------------------------------------------------------
@pytest.fixture
def rng():
    """A fresh, unseeded generator: every run tests new inputs (the seed is printed on failure)."""
    seed = np.random.SeedSequence().entropy
    print("rng seed:", seed)
    return np.random.default_rng(seed)


DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float32, np.float64]

INT_SENTINEL = -0x5A5A5A5A


def poisoned(shape, dtype):
    """An output array filled with NaN (floats) or a sentinel (ints, bools: their max / True),
    so an element the kernel forgets to write cannot pass by accident."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return np.full(shape, np.nan, dt)
    if dt.kind == "b":
        return np.ones(shape, dt)
    if dt.kind == "i":
        return np.full(shape, max(np.iinfo(dt).min, INT_SENTINEL) if dt.itemsize >= 4 else np.iinfo(dt).min, dt)
    return np.full(shape, np.iinfo(dt).max, dt)


def blocks_for(n, threads=64):
    return (max(n, 1) + threads - 1) // threads


def launch1d(kernel, n, *args, threads=64):
    """Launch `kernel` over n threads in 1-D."""
    kernel[blocks_for(n, threads), threads](*args)


def make_unary(f):
    """A kernel computing out[i] = f(x[i]) (f a math function, a builtin, a NumPy scalar function)."""
    @gpu.jit
    def k(out, x):
        i = gpu.grid(1)
        if i < x.size:
            out[i] = f(x[i])
    return k


def make_binary(f):
    """A kernel computing out[i] = f(x[i], y[i])."""
    @gpu.jit
    def k(out, x, y):
        i = gpu.grid(1)
        if i < x.size:
            out[i] = f(x[i], y[i])
    return k


def random_array(rng, shape, dtype, lo=None, hi=None):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        lo = -10.0 if lo is None else lo
        hi = 10.0 if hi is None else hi
        return rng.uniform(lo, hi, shape).astype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    info = np.iinfo(dt)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return rng.integers(lo, hi, shape, dtype=dt, endpoint=True)


def assert_same(got, want, rtol=None, atol=0.0):
    """Exact equality for ints/bools (and dtype), tight tolerance for floats."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype.kind == "f":
        if rtol is None:
            rtol = 1e-6 if got.dtype == np.float32 else 1e-13
        assert not np.isnan(got).any() or np.array_equal(np.isnan(got), np.isnan(want)), "unwritten (NaN) outputs"
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.fixture(autouse=True, scope="session")
def _cpu_target():
    assert gpu.current_target() in ("cpu", "cuda")
    yield
