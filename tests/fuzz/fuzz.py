#!/usr/bin/env python3
"""Differential fuzzer: random kernels (gen.py) run by gpujit and by CPython (shim.py).

    python3 tests/fuzz/fuzz.py --seed S --count N [--target cpu|cuda] [--keep DIR] [--jobs J]
                               [--time-limit SEC] [--no-branchy-calls]
    python3 tests/fuzz/fuzz.py --seed S --only K [--reduce]   # one program, verbosely (and shrink it)
    python3 tests/fuzz/fuzz.py --source FILE... [--reduce]    # re-check saved reproducers

Program K of seed S is fully determined by (S, K): its source by gen.generate("S-K"), its
inputs by a NumPy generator seeded from the same string. Programs run in worker
subprocesses (each handles a contiguous slice, in process, announcing each program before
running it), so a segfault or a hang in the compiler or the CPU backend is reported as a
crash of that program and the worker restarts after it. `--target cuda` without a GPU
only compiles to PTX.

Outcomes: ok; mismatch (output differs from CPython's); reject (gpujit raised on a valid
program); crash (worker died: signal/abort); hang (no progress for --hang-timeout s);
generror (CPython itself failed: a generator bug, not gpujit's). A kernel that starts with
gen.CHECKED_MARK runs with bounds checks; where CPython raises IndexError it must raise
IndexError too (ok, outputs not compared), and where it does not raise, neither may it.

Comparison: output columns holding ints are compared exactly (int64 outputs bit for bit;
float64 outputs hold ints < 2**20, exactly representable). Float columns use
|got - want| <= ATOL + RTOL * |want| with RTOL = 1e-9 and ATOL = 1e-6 (see FLOAT_TOL).
Kernels' float mul/add carry LLVM's `contract` flag (FMA where CPython rounds twice) and
libm's pow() is not always correctly rounded, so the two sides may differ by an ULP; the
generator keeps programs well-conditioned so such an ULP cannot grow (products are kept
out of FMAs with gen.unfuse(), squares are x*x, magnitudes are reduced by exact powers of
two), and what is left sits far inside the tolerance. GPU-only: pow(x, 0.5) is ~1 ULP off
sqrt on the device, also inside it.
"""
import argparse
import json
import linecache
import math
import os
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402
import shim  # noqa: E402

FLOAT_TOL = dict(rtol=1e-9, atol=1e-6)
INT_SENTINEL = -0x5A5A5A5A


def generate(pid):
    # GJ_FUZZ_BRANCHY=0 (--no-branchy-calls): keep x-if-c-else-y / and / or / chained
    # comparisons out of call arguments, which gpujit rejected before 0e1aca6
    return gen.generate(pid, branchy_calls=os.environ.get("GJ_FUZZ_BRANCHY", "1") == "1")


def program_id(seed, k):
    return "%d-%d" % (seed, k)


# -- one program ----------------------------------------------------------------------------------
RECORD = np.dtype([("x", np.int32), ("y", np.float64)], align=True)   # gpujit refuses unaligned fields


def make_inputs(prog):
    """(out, a, b) for a program: out poisoned, a integers (maybe strided), b multiples of 1/8;
    then, for a program with prog.nr, r (records of an int32 and a multiple of 1/8) and t (a
    tuple of an int, a multiple of 1/8 and an int)."""
    rng = np.random.default_rng([abs(hash_str(prog.seed)), 7])
    n = prog.blocks * prog.threads
    out = np.full((n, prog.ncols), INT_SENTINEL, np.dtype(prog.out_dtype))
    lo = -prog.a_bound if prog.a_dtype.startswith("int") else 0
    a_full = rng.integers(lo, prog.a_bound, prog.na * prog.a_stride, dtype=np.int64, endpoint=True)
    a = a_full.astype(prog.a_dtype)[::prog.a_stride]
    b = (rng.integers(-512, 512, prog.nb, endpoint=True) / 8.0).astype(prog.b_dtype)
    if not prog.nr:
        return out, a, b
    r = np.empty(prog.nr, RECORD)
    r["x"] = rng.integers(-gen.R_BOUND, gen.R_BOUND, prog.nr, endpoint=True)
    r["y"] = rng.integers(-512, 512, prog.nr, endpoint=True) / 8.0
    t = (int(rng.integers(-gen.R_BOUND, gen.R_BOUND)), float(rng.integers(-512, 512)) / 8.0,
         int(rng.integers(-gen.R_BOUND, gen.R_BOUND)))
    return out, a, b, r, t


def hash_str(s):
    """A stable hash of a string (Python's hash() is salted per process)."""
    h = 1469598103934665603
    for ch in s.encode():
        h = ((h ^ ch) * 1099511628211) & ((1 << 63) - 1)
    return h


def code_of(prog):
    filename = "<fuzz %s>" % prog.seed
    # so that tracebacks and gpujit's diagnostics can show the source line
    linecache.cache[filename] = (len(prog.source), None, prog.source.splitlines(True), filename)
    return compile(prog.source, filename, "exec")


def run_reference(prog, code, out, a, b, *extra):
    """Run the kernel's body in CPython once per thread, writing into out (in place)."""
    ra, rb, rout = shim.RefArray(a), shim.RefArray(b), shim.RefArray(out)
    extra = (shim.RefArray(extra[0]), extra[1]) if extra else ()
    for bid in range(prog.blocks):
        block = shim.Block(prog.threads, prog.barrier)
        if not prog.barrier:
            g = {"math": math, "gpu": shim.Shim(block, prog.threads, prog.blocks)}
            exec(code, g)
            fn = g["kern"]
            for tid in range(prog.threads):
                g["gpu"].set_thread(tid, bid)
                fn(rout, ra, rb, *extra)
            continue
        # barrier programs: one Python thread per kernel thread, each with its own shim
        import threading
        errors = []

        def body(tid):
            try:
                g = {"math": math, "gpu": shim.Shim(block, prog.threads, prog.blocks)}
                g["gpu"].set_thread(tid, bid)
                exec(code, g)
                g["kern"](rout, ra, rb, *extra)
            except BaseException as e:  # noqa: BLE001 -- reported by the caller
                errors.append(e)
                block.barrier.abort()
        ths = [threading.Thread(target=body, args=(t,)) for t in range(prog.threads)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        if errors:
            raise errors[0]


def run_gpujit(prog, code, out, a, b, *extra, target):
    import gpujit
    g = {"math": math, "gpu": gpujit}
    exec(code, g)
    # the operands of gen.int_leaf_checked are safe only with bounds checks (the CPU default)
    k = gpujit.jit(g["kern"], boundscheck=True) if gen.CHECKED_MARK in prog.source else gpujit.jit(g["kern"])
    if target == "cuda" and not gpujit.is_available():
        # no device: compile-only (PTX), which still exercises the front end and NVPTX
        gpujit.compile_ptx(g["kern"], gpujit.typing.signature_of((out, a, b) + extra))
        return False
    k[prog.blocks, prog.threads](out, a, b, *extra)
    return True


def compare(prog, got, want):
    """None if equal, else a short description of the first differences."""
    bad = []
    for col in range(prog.ncols):
        g, w = got[:, col], want[:, col]
        if col in prog.float_cols:
            diff = np.abs(g - w)
            ok = (diff <= FLOAT_TOL["atol"] + FLOAT_TOL["rtol"] * np.abs(w)) | (g == w)
        else:
            ok = g == w
        for row in np.nonzero(~ok)[0][:3]:
            bad.append("out[%d, %d]: gpujit %r, CPython %r" % (row, col, g[row].item(), w[row].item()))
    return "; ".join(bad) if bad else None


def check(seed, k, target="cpu"):
    """Run program k of seed; returns a result dict (status + details)."""
    pid = program_id(seed, k)
    res = check_program(generate(pid), target)
    res.update(k=k, id=pid)
    return res


def check_program(prog, target="cpu"):
    res = {"status": "ok", "checked": gen.CHECKED_MARK in prog.source}
    try:
        code = code_of(prog)
    except SyntaxError as e:
        res.update(status="generror", detail=str(e))
        return res
    out, a, b, *extra = make_inputs(prog)
    want = out.copy()
    raised = None  # CPython's IndexError, where a bounds-checked kernel must raise it too
    try:
        run_reference(prog, code, want, a.copy(), b.copy(), *[e.copy() if hasattr(e, "copy") else e for e in extra])
    except BaseException as e:  # noqa: BLE001
        raised = e
    if raised is not None and not (isinstance(raised, IndexError) and gen.CHECKED_MARK in prog.source):
        res.update(status="generror", detail="".join(traceback.format_exception_only(type(raised), raised)).strip())
        return res
    got = out.copy()
    try:
        ran = run_gpujit(prog, code, got, a, b, *extra, target=target)
    except IndexError as e:
        if raised is None:
            res.update(status="reject", detail="IndexError: %s" % str(e)[:2000])
        res["raised"] = True
        return res  # both raised IndexError: outputs are not compared
    except Exception as e:  # noqa: BLE001 -- any exception on a valid program is a finding
        res.update(status="reject", detail="%s: %s" % (type(e).__name__, str(e)[:2000]))
        return res
    if raised is not None:
        if ran:
            res.update(status="mismatch", detail="CPython raised %s: %s; gpujit did not" % (type(raised).__name__, raised))
        return res
    if ran:
        diff = compare(prog, got, want)
        if diff:
            res.update(status="mismatch", detail=diff)
    return res


def reduce(prog, target="cpu"):
    """Greedy statement deletion: drop each line (with the block it opens) while the program
    still fails the same way (same status; for mismatches, some mismatch). Returns the
    smallest program found."""
    import dataclasses
    want = check_program(prog, target)["status"]
    lines = prog.source.splitlines()
    changed = True
    while changed:
        changed = False
        k = 1
        while k < len(lines):
            ind = len(lines[k]) - len(lines[k].lstrip())
            end = k + 1
            while end < len(lines) and len(lines[end]) - len(lines[end].lstrip()) > ind:
                end += 1
            for cand in (lines[:k] + lines[end:], lines[:k] + [" " * ind + "pass"] + lines[end:]):
                if cand == lines:
                    continue
                trial = dataclasses.replace(prog, source="\n".join(cand) + "\n")
                if check_program(trial, target)["status"] == want:
                    lines, changed = cand, True
                    break
            else:
                k += 1
    return dataclasses.replace(prog, source="\n".join(lines) + "\n")


def load_reproducer(path):
    """The Program of a saved reproducer (--keep file), so that a finding can be re-run after
    the generator has changed: its header names the program id (which seeds the inputs) and
    the launch line the shapes and dtypes."""
    import re
    text = open(path).read()
    pid = re.search(r"program (\d+-\d+)", text).group(1)
    m = re.search(r"launch: kern\[(\d+), (\d+)\]\(out, a, b\); out (\w+) \((\d+), (\d+)\); "
                  r"a (\w+)\[(\d+)\] stride (\d+) \|a\|<=(\d+); b (\w+)\[(\d+)\](?:; float cols \[([\d, ]*)\])?"
                  r"(?:; r record\[(\d+)\], t tuple)?", text)
    blocks, threads, out_dtype, _, ncols, a_dtype, na, stride, a_bound, b_dtype, nb, cols, nr = m.groups()
    ncols = int(ncols)
    if cols is None:     # older files: every column of a float64 output compared with tolerance
        float_cols = list(range(ncols)) if out_dtype == "float64" else []
    else:
        float_cols = [int(c) for c in cols.split(",") if c.strip()]
    source = text[text.index("def kern("):]
    return gen.Program(seed=pid, source=source, blocks=int(blocks), threads=int(threads), ncols=ncols,
                       out_dtype=out_dtype, float_cols=float_cols, na=int(na), nb=int(nb), a_bound=int(a_bound),
                       a_stride=int(stride), a_dtype=a_dtype, b_dtype=b_dtype, barrier="syncthreads" in source,
                       nr=int(nr or 0))


def reproducer(seed, k, res):
    prog = generate(program_id(seed, k))
    return ("=== %s: program %s (python3 tests/fuzz/fuzz.py --seed %d --only %d)\n%s\n"
            "launch: kern[%d, %d](out, a, b); out %s %s; a %s[%d] stride %d |a|<=%d; b %s[%d]; float cols %s%s\n%s"
            % (res["status"].upper(), res["id"], seed, k, res.get("detail", ""), prog.blocks, prog.threads,
               prog.out_dtype, (prog.blocks * prog.threads, prog.ncols), prog.a_dtype, prog.na, prog.a_stride,
               prog.a_bound, prog.b_dtype, prog.nb, prog.float_cols,
               "; r record[%d], t tuple" % prog.nr if prog.nr else "", prog.source))


# -- worker process -----------------------------------------------------------------------------------
def worker(seed, start, stop, target, deadline=None):
    """Announce each program before running it, so the parent can name the one that crashed."""
    import warnings
    warnings.simplefilter("ignore")
    for k in range(start, stop):
        if deadline and time.time() > deadline:
            break
        print(json.dumps({"start": k}), flush=True)
        print(json.dumps(check(seed, k, target)), flush=True)


def run_slice(seed, start, stop, target, hang_timeout, on_result, deadline=None):
    """Run programs [start, stop) in worker subprocesses, restarting after each crash/hang;
    with a deadline (time.time() value), start no program after it."""
    k = start
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(HERE, "..", "..", "python")] +
                                        [p for p in [env.get("PYTHONPATH")] if p])
    while k < stop and not (deadline and time.time() > deadline):
        # stderr goes to a file: a pipe that nobody reads while waiting on stdout would fill
        # (64 KiB) and stop the worker mid-write, which would then look like a hang
        errf = tempfile.TemporaryFile(mode="w+")
        p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", "--seed", str(seed),
                              "--start", str(k), "--stop", str(stop), "--target", target] +
                             (["--deadline", repr(deadline)] if deadline else []),
                             stdout=subprocess.PIPE, stderr=errf, text=True, env=env)
        current = None
        import selectors
        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        hung = False
        while True:
            if not sel.select(timeout=hang_timeout):
                hung = True
                p.kill()
                break
            line = p.stdout.readline()
            if not line:
                break
            msg = json.loads(line)
            if "start" in msg:
                current = msg["start"]
            else:
                on_result(msg)
                current = None
                k = msg["k"] + 1
        p.wait()
        p.stdout.close()
        errf.seek(0)
        err = errf.read()
        errf.close()
        if current is not None or hung or p.returncode != 0:
            where = current if current is not None else k
            status = "hang" if hung else "crash"
            on_result({"k": where, "id": program_id(seed, where), "status": status,
                       "detail": "worker exit %s; stderr tail:\n%s" % (p.returncode, err[-3000:])})
            k = where + 1


def run(seed, start, count, target="cpu", jobs=1, keep=None, hang_timeout=120, quiet=False, out=sys.stdout,
        time_limit=None):
    """Run programs [start, start+count) of seed over `jobs` workers (each a contiguous
    slice); returns the tally dict. With time_limit (s), stop starting programs after it."""
    deadline = time.time() + time_limit if time_limit else None
    import threading
    stop = start + count
    tally = {"ok": 0, "mismatch": 0, "reject": 0, "crash": 0, "hang": 0, "generror": 0,
             "checked": 0, "raised": 0}  # ok programs with gen.int_leaf_checked's operands; those that raised
    findings = []
    lock = threading.Lock()
    t0 = time.time()

    def on_result(res):
        with lock:
            tally[res["status"]] += 1
            if res["status"] == "ok" and res.get("checked"):
                tally["checked"] += 1
                tally["raised"] += bool(res.get("raised"))
            if res["status"] != "ok":
                text = reproducer(seed, res["k"], res)
                findings.append(res)
                if not quiet:
                    print(text, file=out, flush=True)
                if keep:
                    os.makedirs(keep, exist_ok=True)
                    with open(os.path.join(keep, "%s-%s.txt" % (res["status"], res["id"])), "w") as f:
                        f.write(text)

    edges = [start + count * j // jobs for j in range(jobs + 1)]
    ths = [threading.Thread(target=run_slice,
                            args=(seed, edges[j], edges[j + 1], target, hang_timeout, on_result, deadline))
           for j in range(jobs) if edges[j + 1] > edges[j]]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    tally["seconds"] = round(time.time() - t0, 1)
    tally["findings"] = findings
    tally["run"] = sum(tally[s] for s in ("ok", "mismatch", "reject", "crash", "hang", "generror"))
    print("fuzz seed %d programs %d..%d (%d slices) target %s: %d run, %d ok (%d bounds-checked, %d of them "
          "raising IndexError on both sides), %d mismatch, %d reject, %d crash, %d hang, %d generror in %.1fs"
          % (seed, start, stop - 1, len(ths), target, tally["run"], tally["ok"], tally["checked"], tally["raised"],
             tally["mismatch"], tally["reject"], tally["crash"], tally["hang"], tally["generror"], tally["seconds"]),
          file=out, flush=True)
    return tally


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--stop", type=int)
    ap.add_argument("--target", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--keep", help="directory to write each finding's reproducer into")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--only", type=int, help="run one program in process and show everything")
    ap.add_argument("--reduce", action="store_true", help="with --only/--source: shrink a failing program")
    ap.add_argument("--source", nargs="+", help="re-check saved reproducer files (from --keep)")
    ap.add_argument("--hang-timeout", type=float, default=120)
    ap.add_argument("--time-limit", type=float, help="start no program after this many seconds")
    ap.add_argument("--deadline", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--no-branchy-calls", action="store_true",
                    help="keep branching expressions out of call arguments (for builds before 0e1aca6)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.no_branchy_calls:
        os.environ["GJ_FUZZ_BRANCHY"] = "0"      # inherited by the workers
    # for the in-process modes below and the workers: 'cpu' must mean the CPU backend on a
    # GPU machine too
    os.environ["GPUJIT_TARGET"] = args.target
    if args.worker:
        return worker(args.seed, args.start, args.stop, args.target, args.deadline)
    if args.source:
        bad = 0
        for path in args.source:
            prog = load_reproducer(path)
            res = check_program(prog, args.target)
            print("%s: %s %s" % (path, res["status"], res.get("detail", "")[:500]))
            if res["status"] != "ok":
                bad += 1
                if args.reduce:
                    small = reduce(prog, args.target)
                    print("=== reduced (%s):\n%s" % (check_program(small, args.target), small.source))
        return 1 if bad else 0
    if args.only is not None:
        prog = generate(program_id(args.seed, args.only))
        print(prog.source)
        res = check(args.seed, args.only, args.target)
        print(reproducer(args.seed, args.only, res) if res["status"] != "ok" else "ok")
        if args.reduce and res["status"] != "ok":
            small = reduce(prog, args.target)
            print("=== reduced (%s):\n%s%s" % (check_program(small, args.target), small.source,
                                             "launch as above"))
        return 0 if res["status"] == "ok" else 1
    tally = run(args.seed, args.start, args.count, args.target, args.jobs, args.keep, args.hang_timeout,
                time_limit=args.time_limit)
    bad = sum(tally[s] for s in ("mismatch", "reject", "crash", "hang", "generror"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
