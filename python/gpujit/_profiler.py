"""GPUJIT_PROFILE=1: where the time goes, as `nvprof --print-summary` shows it. At exit the
process prints, on stderr, a table of the kernels launched: per kernel and signature its
launches, the time spent compiling it (or loading it from the cache), and the total and mean
time of its launches. On the CPU target a launch's time is the wall-clock time of the launch
(the grid runs before the launch returns); on the GPU it is the time between two CUDA events
recorded on the launch's stream around it, read at exit, so that profiling adds no waits.
profile_start() and profile_stop() delimit what is counted: the first profile_start() drops
what came before it, profile_stop() pauses until the next profile_start().

Imported by `import gpujit`; it does nothing unless GPUJIT_PROFILE is set to a yes value."""
import atexit
import os
import sys
import time

from . import _core

_VAR = "GPUJIT_PROFILE"


class _Row:
    __slots__ = ("name", "sig", "target", "calls", "compile_s", "run_s", "pending")

    def __init__(self, name, sig, target):
        self.name, self.sig, self.target = name, sig, target
        self.calls, self.compile_s, self.run_s = 0, 0.0, 0.0
        self.pending = []  # the GPU's (start, end) events, read at exit


_rows = {}
_recording = False
_started = False  # profile_start() was called: what came before it is dropped


def _row(disp, sig, target):
    key = (id(disp), str(sig), target)
    row = _rows.get(key)
    if row is None:
        row = _rows[key] = _Row(getattr(disp, "__qualname__", getattr(disp, "__name__", "?")), str(sig), target)
        _keep.append(disp)  # the key's id stays unique
    return row


_keep = []  # the dispatchers profiled: alive until exit, so that their ids name them


def _launch_hook(disp, kernel, stream):
    """Before a launch (runtime/launch.c): what to call after it."""
    if not _recording:
        return _nothing
    target = _core.get_target()
    row = _row(disp, kernel.signature, target)
    row.calls += 1
    if target == "cuda":
        from .cudadrv import Event, Stream
        s = Stream(stream) if stream else 0
        start, end = Event(), Event()
        start.record(s)

        def after():
            end.record(s)
            row.pending.append((start, end))
        return after
    t0 = time.perf_counter()

    def after():
        row.run_s += time.perf_counter() - t0
    return after


def _nothing():
    return None


def compiled(disp, key, seconds):
    """Dispatcher._build took `seconds` to compile (or load) the specialisation of `key`."""
    if _recording:
        _row(disp, key[0], key[1]).compile_s += seconds


def start():
    """profile_start(): count from here; the first call drops what was counted before it."""
    global _recording, _started
    if _active and not _started:
        _rows.clear()
        _started = True
    _recording = _active


def stop():
    """profile_stop(): pause counting until the next start()."""
    global _recording
    _recording = False


def table():
    """The summary's lines: one per kernel and signature, the longest total first."""
    rows = list(_rows.values())
    for r in rows:
        for a, b in r.pending:
            try:
                b.synchronize()
                r.run_s += a.elapsed_time(b) / 1e3
            except Exception:
                pass
        r.pending = []
    rows.sort(key=lambda r: -r.run_s)
    head = ("kernel", "signature", "target", "calls", "compile s", "total ms", "mean ms")
    body = [(r.name, r.sig, r.target, str(r.calls), "%.3f" % r.compile_s, "%.3f" % (r.run_s * 1e3),
             "%.3f" % (r.run_s * 1e3 / r.calls) if r.calls else "-") for r in rows]
    width = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
    fmt = "  ".join("%%-%ds" % w if i < 3 else "%%%ds" % w for i, w in enumerate(width))
    return ["gpujit profile (%s): %d kernel specialisations" % (_VAR, len(rows)), fmt % head] + [fmt % x for x in body]


def _report():
    if _rows:
        sys.stdout.flush()
        print("\n".join(table()), file=sys.stderr)


def _enabled():
    value = os.environ.get(_VAR, "")
    if not value.strip():
        return False
    from .config import parse_flag
    try:
        return bool(parse_flag(_VAR, value))
    except ValueError as e:  # said once here; `python -m gpujit info` and check_environment() say it too
        print("gpujit: %s; profiling is off" % e, file=sys.stderr)
        return False


_active = _enabled()
if _active:
    _recording = True
    _core.DispatcherBase._set_profile_hook(_launch_hook)
    atexit.register(_report)
