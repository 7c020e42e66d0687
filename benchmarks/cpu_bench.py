"""CPU-backend benchmarks, side by side in one run:

1. gpujit's CPU backend vs numba-cuda's CUDA simulator (NUMBA_ENABLE_CUDASIM=1,
   run in a subprocess so that the env var is set before numba.cuda is
   imported) on the shared kernels of benchmarks/kernels.py: saxpy over
   100,003 elements, the 128-thread block_sum (shared memory + atomic.add)
   over 70,001 elements, the 16x16 tiled matmul at 96x96.
2. saxpy over 2**24 float32 on gpujit's CPU backend (one thread per element,
   and a grid-stride loop under several launches) vs a plain C loop compiled
   here with gcc -O2 -march=native (and NumPy's a*x+y, for reference).
3. The cost of the CPU target's bounds checks (on by default there): the
   kernels of 1. and 2. with checks and with @jit(boundscheck=False), timed
   alternately in the same run. Sections 1 and 2 time the default (checked).
4. The barrier kernels (block_sum, matmul) of 3. against their algorithms
   written as C loops over the threads of each phase (gcc -O2 -march=native,
   one thread).
5. The cost of the race detector: the kernels of 3. with @jit(racecheck=True)
   and without, timed alternately in the same run (bounds checks on in both).

    PYTHONPATH=python python3 benchmarks/cpu_bench.py [--json OUT.json]
        [--repeat N] [--sim-full] [--no-sim] [--only-boundscheck] [--only-racecheck] [--cpu-time]
        [--plot OUT.png]

Method. Every result is checked against NumPy before it is timed. Times are
wall clock (time.perf_counter; clock_gettime(CLOCK_MONOTONIC) in the C
program) of one whole launch (CPU launches are synchronous), best of N after
a warm-up launch (so compilation is not counted). With --cpu-time gpujit runs
on one thread and every time (gpujit, C, NumPy) is the running thread's CPU
time instead (CLOCK_THREAD_CPUTIME_ID): a per-core comparison that other
work on a shared machine disturbs much less than the wall clock.

The simulator runs each CUDA thread as a Python thread and takes minutes on
the full problems, so it is timed on a *reduced* problem: the same arrays and
sizes, but only the first k blocks of the grid are launched (each thread does
exactly the work it does in the full launch), and the time is scaled linearly
by the number of threads (full grid / launched). Linearity is checked by
timing two block counts, k and 2k: their seconds-per-thread are printed and
should agree. --sim-full also runs the full problems on the simulator (about
3 minutes) to compare the estimate with the real thing.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kernels  # noqa: E402

# The problems: kernel -> (size, threads per block)
SAXPY_N, SAXPY_TPB = 100_003, 256
BSUM_N, BSUM_TPB = 70_001, 128
MM_N, MM_TPB = 96, 16
# Simulator: launched block counts (k, 2k) per kernel
SIM_BLOCKS = {"saxpy": (16, 32), "block_sum": (8, 16), "matmul": (3, 6)}
BIG_N = 1 << 24
CLOCK = time.perf_counter  # --cpu-time: time.thread_time, on a busy machine


def cdiv(a, b):
    return (a + b - 1) // b


def grids():
    """The full launch of each kernel: (grid, block, threads)."""
    g = cdiv(MM_N, MM_TPB)
    return {
        "saxpy": ((cdiv(SAXPY_N, SAXPY_TPB),), (SAXPY_TPB,), cdiv(SAXPY_N, SAXPY_TPB) * SAXPY_TPB),
        "block_sum": ((cdiv(BSUM_N, BSUM_TPB),), (BSUM_TPB,), cdiv(BSUM_N, BSUM_TPB) * BSUM_TPB),
        "matmul": ((g, g), (MM_TPB, MM_TPB), g * g * MM_TPB * MM_TPB),
    }


def inputs(seed=1):
    r = np.random.default_rng(seed)
    return {
        "x": r.random(SAXPY_N, dtype=np.float32), "y": r.random(SAXPY_N, dtype=np.float32),
        "bx": r.random(BSUM_N, dtype=np.float32),
        "A": r.random((MM_N, MM_N), dtype=np.float32), "B": r.random((MM_N, MM_N), dtype=np.float32),
    }


A_SCALAR = np.float32(2.5)


def check(name, ok, detail=""):
    if not ok:
        raise SystemExit("RESULT CHECK FAILED: %s %s" % (name, detail))


def check_saxpy(out, x, y, upto=None):
    upto = len(x) if upto is None else upto
    ref = A_SCALAR.astype(np.float64) * x[:upto] + y[:upto]
    # a*x+y may be contracted into one FMA: allow an ulp or two against NumPy's
    err = np.max(np.abs(out[:upto] - ref) / np.maximum(np.abs(ref), 1e-30))
    check("saxpy", err < 4e-7, "max rel err %g" % err)


def check_bsum(total, x, upto=None):
    upto = len(x) if upto is None else upto
    ref = x[:upto].astype(np.float64).sum()
    check("block_sum", abs(total - ref) <= 1e-5 * ref, "%r vs %r" % (total, ref))


def check_mm(C, A, B, rows=None, cols=None):
    rows = C.shape[0] if rows is None else rows
    cols = C.shape[1] if cols is None else cols
    ref = A.astype(np.float64) @ B.astype(np.float64)
    ok = np.allclose(C[:rows, :cols], ref[:rows, :cols], rtol=1e-5, atol=1e-5)
    check("matmul", ok, "max abs err %g" % np.max(np.abs(C[:rows, :cols] - ref[:rows, :cols])))


def best_of(fn, n, setup=None):
    """Best wall-clock seconds of n calls of fn (after one warm-up call)."""
    if setup:
        setup()
    fn()
    best = float("inf")
    for _ in range(n):
        if setup:
            setup()
        t0 = CLOCK()
        fn()
        best = min(best, CLOCK() - t0)
    return best


# ---- the simulator, in a subprocess -------------------------------------------------------------

def sim_worker(args):
    """Runs in the child with NUMBA_ENABLE_CUDASIM=1; prints one JSON object."""
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    import numba
    from numba import cuda
    if "simulator" not in cuda.jit.__module__:
        raise SystemExit("numba.cuda is not the simulator (NUMBA_ENABLE_CUDASIM unset?)")
    try:
        import numba_cuda
        ncv = getattr(numba_cuda, "__version__", "?")
    except ImportError:
        ncv = None
    k = {name: cuda.jit(f) for name, f in kernels.load(cuda, numba.float32).items()}
    d = inputs()
    full = grids()
    res = {"numba": numba.__version__, "numba_cuda": ncv, "kernels": {}}

    def run(name, nblocks):
        """One launch of the first nblocks blocks; checks the part computed. -> threads."""
        grid, block, _ = full[name]
        if name == "saxpy":
            out = np.zeros(SAXPY_N, np.float32)
            k["saxpy"][nblocks, block](out, A_SCALAR, d["x"], d["y"])
            check_saxpy(out, d["x"], d["y"], min(SAXPY_N, nblocks * SAXPY_TPB))
            return nblocks * SAXPY_TPB
        if name == "block_sum":
            total = np.zeros(1, np.float32)
            k["block_sum"][nblocks, block](d["bx"], total)
            check_bsum(float(total[0]), d["bx"], min(BSUM_N, nblocks * BSUM_TPB))
            return nblocks * BSUM_TPB
        # matmul: the first nblocks blocks of the grid's first row (x fastest)
        gx = grid[0]
        g = (min(nblocks, gx), cdiv(nblocks, gx))
        check("sim matmul grid", g[0] * g[1] == nblocks)
        C = np.zeros((MM_N, MM_N), np.float32)
        k["matmul"][g, block](d["A"], d["B"], C)
        check_mm(C, d["A"], d["B"], rows=min(MM_N, g[1] * MM_TPB), cols=min(MM_N, g[0] * MM_TPB))
        return nblocks * MM_TPB * MM_TPB

    for name in ("saxpy", "block_sum", "matmul"):
        run(name, 1)  # warm-up: the simulator's first launch of a kernel costs more
        r = {"full_threads": full[name][2], "points": []}
        for nb in SIM_BLOCKS[name]:
            best, threads = float("inf"), 0
            for _ in range(args.sim_repeat):
                t0 = time.perf_counter()
                threads = run(name, nb)
                best = min(best, time.perf_counter() - t0)
            r["points"].append({"blocks": nb, "threads": threads, "seconds": best})
        if args.sim_full:
            t0 = time.perf_counter()
            run(name, int(np.prod(full[name][0])))
            r["full_measured_s"] = time.perf_counter() - t0
        res["kernels"][name] = r
        print("sim %s done" % name, file=sys.stderr, flush=True)
    print(json.dumps(res))


def run_simulator(args):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    cmd = [sys.executable, os.path.abspath(__file__), "--sim-worker", "--sim-repeat", str(args.sim_repeat)]
    if args.sim_full:
        cmd.append("--sim-full")
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SystemExit("simulator subprocess failed (rc %d)" % p.returncode)
    return json.loads(p.stdout.strip().splitlines()[-1])


# ---- gpujit ------------------------------------------------------------------------------------

def gpujit_shared_kernels(gpu, args):
    k = {name: gpu.jit(f) for name, f in kernels.load(gpu).items()}
    d = inputs()
    full = grids()
    out = {}

    # saxpy
    o = np.zeros(SAXPY_N, np.float32)
    g, b, _ = full["saxpy"]
    launch = lambda: k["saxpy"][g, b](o, A_SCALAR, d["x"], d["y"])  # noqa: E731
    launch()
    check_saxpy(o, d["x"], d["y"])
    out["saxpy"] = best_of(launch, args.repeat)

    # block_sum: total is zeroed before every launch, outside the timed region
    total = np.zeros(1, np.float32)
    g, b, _ = full["block_sum"]
    zero = lambda: total.fill(0)  # noqa: E731
    launch = lambda: k["block_sum"][g, b](d["bx"], total)  # noqa: E731
    zero()
    launch()
    check_bsum(float(total[0]), d["bx"])
    out["block_sum"] = best_of(launch, args.repeat, setup=zero)

    # matmul
    C = np.zeros((MM_N, MM_N), np.float32)
    g, b, _ = full["matmul"]
    launch = lambda: k["matmul"][g, b](d["A"], d["B"], C)  # noqa: E731
    launch()
    check_mm(C, d["A"], d["B"])
    out["matmul"] = best_of(launch, args.repeat)
    return out


C_SAXPY = r'''
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static clockid_t clk = CLOCK_MONOTONIC;
static double now(void) { struct timespec t; clock_gettime(clk, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
__attribute__((noinline)) static void saxpy(float *restrict out, float a, const float *restrict x,
                                            const float *restrict y, long n) {
    for (long i = 0; i < n; i++) out[i] = a * x[i] + y[i];
}
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    int reps = atoi(argv[2]);
    if (argc > 3) clk = CLOCK_THREAD_CPUTIME_ID;
    float a = 2.5f;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *out = malloc(n * sizeof *out);
    for (long i = 0; i < n; i++) { x[i] = (float)(i % 1000) * 1e-3f; y[i] = (float)(i % 777) * 1e-2f; out[i] = 0; }
    saxpy(out, a, x, y, n); /* warm-up, and the pages of out are touched */
    double best = 1e9;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        saxpy(out, a, x, y, n);
        double t = now() - t0;
        if (t < best) best = t;
    }
    for (long i = 0; i < n; i++) {
        float ref = a * x[i] + y[i];
        float d = out[i] - ref;
        if (d > 1e-5f * ref || -d > 1e-5f * ref) { printf("BAD %ld\n", i); return 1; }
    }
    printf("%.9f\n", best);
    return 0;
}
'''

C_FLAGS = ["-O2", "-march=native"]

# The barrier kernels' algorithms as a C programmer would write them for one
# core: block_sum's 128-element tree reduction per block, matmul's 16x16
# shared tiles, each phase between two barriers a loop over the threads.
C_BARRIER = r'''
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <math.h>
static clockid_t clk = CLOCK_MONOTONIC;
static double now(void) { struct timespec t; clock_gettime(clk, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
#define TPB 128
__attribute__((noinline)) static float block_sum(const float *restrict x, long n) {
    float total = 0;
    for (long b = 0; b < (n + TPB - 1) / TPB; b++) {
        float sh[TPB];
        for (int t = 0; t < TPB; t++) { long i = b * TPB + t; sh[t] = i < n ? x[i] : 0.0f; }
        for (int s = TPB / 2; s > 0; s /= 2)
            for (int t = 0; t < s; t++) sh[t] += sh[t + s];
        total += sh[0];
    }
    return total;
}
#define T 16
__attribute__((noinline)) static void matmul(const float *restrict A, const float *restrict B, float *restrict C, int n) {
    int g = (n + T - 1) / T;
    for (int by = 0; by < g; by++)
        for (int bx = 0; bx < g; bx++) {
            float sA[T][T], sB[T][T], tmp[T][T] = {{0}};
            for (int i = 0; i < g; i++) {
                for (int ty = 0; ty < T; ty++)
                    for (int tx = 0; tx < T; tx++) {
                        int y = by * T + ty, x = bx * T + tx;
                        sA[ty][tx] = y < n && tx + i * T < n ? A[y * n + tx + i * T] : 0.0f;
                        sB[ty][tx] = x < n && ty + i * T < n ? B[(ty + i * T) * n + x] : 0.0f;
                    }
                for (int ty = 0; ty < T; ty++)
                    for (int tx = 0; tx < T; tx++) {
                        float acc = tmp[ty][tx];
                        for (int j = 0; j < T; j++) acc += sA[ty][j] * sB[j][tx];
                        tmp[ty][tx] = acc;
                    }
            }
            for (int ty = 0; ty < T; ty++)
                for (int tx = 0; tx < T; tx++) {
                    int y = by * T + ty, x = bx * T + tx;
                    if (y < n && x < n) C[y * n + x] = tmp[ty][tx];
                }
        }
}
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    int m = atoi(argv[2]), reps = atoi(argv[3]);
    if (argc > 4) clk = CLOCK_THREAD_CPUTIME_ID;
    float *x = malloc(n * sizeof *x), *A = malloc(m * m * sizeof *A), *B = malloc(m * m * sizeof *B),
          *C = malloc(m * m * sizeof *C);
    double ref = 0;
    for (long i = 0; i < n; i++) ref += x[i] = (float)(i % 1000) * 1e-3f;
    for (int i = 0; i < m * m; i++) A[i] = (float)(i % 13) * 0.1f, B[i] = (float)(i % 7) * 0.2f;
    double best[2] = {1e9, 1e9};
    volatile float sink = 0;
    for (int r = 0; r < reps + 1; r++) {
        double t0 = now();
        float s = block_sum(x, n);
        double t1 = now();
        matmul(A, B, C, m);
        double t2 = now();
        sink = s;
        if (fabs(s - ref) > 1e-5 * ref) { printf("BAD block_sum\n"); return 1; }
        if (r && t1 - t0 < best[0]) best[0] = t1 - t0;
        if (r && t2 - t1 < best[1]) best[1] = t2 - t1;
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            double acc = 0;
            for (int k = 0; k < m; k++) acc += (double)A[i * m + k] * B[k * m + j];
            if (fabs(C[i * m + j] - acc) > 1e-3 * (1 + fabs(acc))) { printf("BAD matmul\n"); return 1; }
        }
    (void)sink;
    printf("%.9f %.9f\n", best[0], best[1]);
    return 0;
}
'''


def run_c(source, name, args):
    """stdout of C `source` compiled with C_FLAGS and run with `args` (plus "cpu-time" under
    --cpu-time), and the compiler's version line."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if not cc:
        raise SystemExit("no C compiler for the C baseline")
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, name + ".c"), os.path.join(tmp, name)
        with open(src, "w") as f:
            f.write(source)
        subprocess.run([cc, *C_FLAGS, "-o", exe, src, "-lm"], check=True)
        cmd = [exe, *(str(a) for a in args)] + (["cpu-time"] if CLOCK is time.thread_time else [])
        p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True)
    version = subprocess.run([cc, "--version"], stdout=subprocess.PIPE, text=True).stdout.splitlines()[0]
    return p.stdout, version


def c_barrier_kernels(reps):
    """(block_sum, matmul) seconds of C_BARRIER, best of reps."""
    out, _ = run_c(C_BARRIER, "barrier", (BSUM_N, MM_N, reps))
    bs, mm = (float(v) for v in out.split())
    return bs, mm


def c_saxpy(n, reps):
    out, version = run_c(C_SAXPY, "saxpy", (n, reps))
    return float(out.strip()), version


def gpujit_big_saxpy(gpu, args, ncores):
    @gpu.jit
    def saxpy_gridstride(out, a, x, y):
        i = gpu.grid(1)
        s = gpu.gridsize(1)
        n = out.size
        while i < n:
            out[i] = a * x[i] + y[i]
            i += s

    saxpy = gpu.jit(kernels.load(gpu)["saxpy"])
    r = np.random.default_rng(2)
    x = r.random(BIG_N, dtype=np.float32)
    y = r.random(BIG_N, dtype=np.float32)
    o = np.zeros(BIG_N, np.float32)
    rows = []

    def one(label, kern, grid, block, reps):
        o.fill(0)
        kern[grid, block](o, A_SCALAR, x, y)
        check_saxpy(o, x, y)
        t = best_of(lambda: kern[grid, block](o, A_SCALAR, x, y), reps)
        rows.append({"kernel": label, "grid": grid, "block": block, "seconds": t})

    one("one thread per element", saxpy, cdiv(BIG_N, 256), 256, args.repeat)
    one("grid-stride", saxpy_gridstride, 4 * ncores, 256, max(3, args.repeat // 3))
    one("grid-stride", saxpy_gridstride, 4 * ncores, 1, args.repeat)
    one("grid-stride", saxpy_gridstride, ncores, 1, args.repeat)
    return rows


def gpujit_boundscheck(gpu, args, ncores):
    """Each kernel with bounds checks (the CPU default) and without, its two
    variants timed in alternation (best of N each), so that both see the same
    load."""
    rows = gpujit_variants(gpu, args, ncores, "boundscheck")
    return [{"kernel": r["kernel"], "checked_s": r["on_s"], "unchecked_s": r["off_s"], "cost": r["cost"]}
            for r in rows]


def gpujit_racecheck(gpu, args, ncores):
    """Each kernel with @jit(racecheck=True) and without (bounds checks on in
    both, the CPU default), timed in alternation as gpujit_boundscheck does;
    the two 2^24 saxpys best of fewer runs (the detector takes seconds there)."""
    return gpujit_variants(gpu, args, ncores, "racecheck", big_repeat=max(2, args.repeat // 5))


def gpujit_variants(gpu, args, ncores, option, big_repeat=None):
    """Each kernel compiled with `option`=True and =False, timed in
    alternation (best of N each): [{kernel, on_s, off_s, cost}]."""
    src = kernels.load(gpu)

    def gridstride(out, a, x, y):
        i = gpu.grid(1)
        s = gpu.gridsize(1)
        n = out.size
        while i < n:
            out[i] = a * x[i] + y[i]
            i += s

    d = inputs()
    full = grids()
    r = np.random.default_rng(2)
    bx, by = r.random(BIG_N, dtype=np.float32), r.random(BIG_N, dtype=np.float32)
    bo = np.zeros(BIG_N, np.float32)
    o = np.zeros(SAXPY_N, np.float32)
    total = np.zeros(1, np.float32)
    C = np.zeros((MM_N, MM_N), np.float32)
    cases = [
        ("saxpy n=%d" % SAXPY_N, src["saxpy"], full["saxpy"][:2], (o, A_SCALAR, d["x"], d["y"]),
         lambda: check_saxpy(o, d["x"], d["y"]), None),
        ("block_sum n=%d" % BSUM_N, src["block_sum"], full["block_sum"][:2], (d["bx"], total),
         lambda: check_bsum(float(total[0]), d["bx"]), lambda: total.fill(0)),
        ("matmul %dx%d" % (MM_N, MM_N), src["matmul"], full["matmul"][:2], (d["A"], d["B"], C),
         lambda: check_mm(C, d["A"], d["B"]), None),
        ("saxpy 2^24, thread/element", src["saxpy"], ((cdiv(BIG_N, 256),), (256,)), (bo, A_SCALAR, bx, by),
         lambda: check_saxpy(bo, bx, by), None),
        ("saxpy 2^24, grid-stride", gridstride, ((ncores,), (1,)), (bo, A_SCALAR, bx, by),
         lambda: check_saxpy(bo, bx, by), None),
    ]
    rows = []
    for label, f, (g, b), kargs, verify, setup in cases:
        times = {}
        launches = {}
        for on in (True, False):
            k = gpu.jit(f, **{option: on})
            launches[on] = (lambda k=k: k[g, b](*kargs))
            if setup:
                setup()
            launches[on]()
            verify()
            times[on] = float("inf")
        reps = big_repeat if big_repeat and "2^24" in label else args.repeat
        for _ in range(reps):
            for on in (True, False):
                if setup:
                    setup()
                t0 = CLOCK()
                launches[on]()
                times[on] = min(times[on], CLOCK() - t0)
        rows.append({"kernel": label, "on_s": times[True], "off_s": times[False], "cost": times[True] / times[False] - 1})
    return rows


def numpy_saxpy(reps):
    r = np.random.default_rng(3)
    x = r.random(BIG_N, dtype=np.float32)
    y = r.random(BIG_N, dtype=np.float32)
    o = np.empty_like(x)

    def f():
        np.multiply(A_SCALAR, x, out=o)
        np.add(o, y, out=o)
    return best_of(f, reps)


def machine():
    model = platform.processor() or "?"
    try:
        for line in subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "affinity": len(os.sched_getaffinity(0)),
            "python": platform.python_version(), "numpy": np.__version__,
            "loadavg_at_start": os.getloadavg()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--repeat", type=int, default=20, help="best of N for gpujit and C (default 20)")
    ap.add_argument("--sim-repeat", type=int, default=2, help="best of N for the simulator (default 2)")
    ap.add_argument("--sim-full", action="store_true", help="also run the full problems on the simulator")
    ap.add_argument("--no-sim", action="store_true", help="skip the simulator")
    ap.add_argument("--plot", help="draw the kernels' times over C's (sections 2 and 4) into this PNG")
    ap.add_argument("--only-boundscheck", action="store_true", help="run only 3., the bounds checks' cost")
    ap.add_argument("--only-racecheck", action="store_true", help="run only 5., the race detector's cost")
    ap.add_argument("--cpu-time", action="store_true",
                    help="gpujit on one thread (GPUJIT_CPU_THREADS=1), everything timed by the running "
                         "thread's CPU time: steadier than wall clock where other work shares the cores "
                         "(the simulator stays on wall clock)")
    ap.add_argument("--sim-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.sim_worker:
        return sim_worker(args)

    os.environ.setdefault("GPUJIT_TARGET", "cpu")
    if args.cpu_time:
        global CLOCK
        os.environ["GPUJIT_CPU_THREADS"] = "1"
        CLOCK = time.thread_time
    import gpujit as gpu
    check("target", gpu.current_target() == "cpu", "gpujit target is %r" % gpu.current_target())
    ncores = len(os.sched_getaffinity(0))
    info = machine()
    stamp = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    print("gpujit CPU backend benchmarks, %s" % stamp)
    print("machine: %s, %d cores (affinity %d), load average at start %.2f %.2f %.2f"
          % (info["cpu"], info["cores"], info["affinity"], *info["loadavg_at_start"]))
    print("method: best of %d (simulator: best of %d), results checked against NumPy first\n"
          % (args.repeat, args.sim_repeat), flush=True)

    results = {"date": stamp, "machine": info, "repeat": args.repeat, "sim_repeat": args.sim_repeat}
    if args.only_racecheck:
        return racecheck_section(gpu, args, ncores, results)
    if not args.only_boundscheck:
        one_and_two(gpu, args, ncores, results)
    bc = gpujit_boundscheck(gpu, args, ncores)
    print("\n3. bounds checks on the CPU target: default (checked) vs @jit(boundscheck=False), same run%s"
          % (" (1 thread, CPU time)" if args.cpu_time else ""))
    hdr = "%-30s %12s %12s %8s" % ("kernel", "checked", "unchecked", "cost")
    print(hdr)
    print("-" * len(hdr))
    for r in bc:
        print("%-30s %9.3f ms %9.3f ms %+7.1f%%" % (r["kernel"], r["checked_s"] * 1e3, r["unchecked_s"] * 1e3,
                                                  100 * r["cost"]))
    results["boundscheck"] = bc
    cb, cm = c_barrier_kernels(args.repeat)
    print("\n4. barrier kernels vs C of the same algorithm (%s, one thread), same run" % " ".join(C_FLAGS))
    hdr = "%-30s %12s %12s %12s %10s %10s" % ("kernel", "checked", "unchecked", "C", "vs C", "unch. vs C")
    print(hdr)
    print("-" * len(hdr))
    rows4 = []
    for name, c_s in (("block_sum n=%d" % BSUM_N, cb), ("matmul %dx%d" % (MM_N, MM_N), cm)):
        r = next(r for r in bc if r["kernel"] == name)
        rows4.append({"kernel": name, "checked_s": r["checked_s"], "unchecked_s": r["unchecked_s"], "c_s": c_s})
        print("%-30s %9.3f ms %9.3f ms %9.3f ms %9.1fx %9.1fx" % (
            name, r["checked_s"] * 1e3, r["unchecked_s"] * 1e3, c_s * 1e3, r["checked_s"] / c_s,
            r["unchecked_s"] / c_s))
    results["barrier_vs_c"] = rows4
    results["boundscheck_clock"] = "thread_time, 1 thread" if args.cpu_time else "perf_counter"
    if not args.only_boundscheck:
        racecheck_section(gpu, args, ncores, results)
        return
    finish(args, results)


def racecheck_section(gpu, args, ncores, results):
    rc = gpujit_racecheck(gpu, args, ncores)
    print("\n5. the race detector on the CPU target: @jit(racecheck=True) vs off, same run%s"
          % (" (1 thread, CPU time)" if args.cpu_time else ""))
    hdr = "%-30s %12s %12s %8s" % ("kernel", "racecheck", "off", "slowdown")
    print(hdr)
    print("-" * len(hdr))
    for r in rc:
        print("%-30s %9.3f ms %9.3f ms %7.1fx" % (r["kernel"], r["on_s"] * 1e3, r["off_s"] * 1e3, r["on_s"] / r["off_s"]))
    results["racecheck"] = rc
    results["racecheck_clock"] = "thread_time, 1 thread" if args.cpu_time else "perf_counter"
    finish(args, results)


def finish(args, results):
    results["loadavg_at_end"] = os.getloadavg()
    print("load average at end %.2f %.2f %.2f" % results["loadavg_at_end"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
        print("wrote", args.json)
    if args.plot and "barrier_vs_c" in results:
        plot_vs_c(results, args.plot)


def plot_vs_c(results, path):
    """Each kernel's time over the C loop's, checked and unchecked: sections 2 and 4."""
    groups, checked, unchecked = [], [], []
    for r in results.get("vs_c", {}).get("gpujit", []):
        groups.append("saxpy 2^24\n%s\n[%d, %d]" % (r["kernel"].replace("one thread per element", "thread/elem"),
                                                     r["grid"], r["block"]))
        checked.append(r["vs_c"])
        unchecked.append(None)
    for r in results["barrier_vs_c"]:
        groups.append(r["kernel"].replace(" ", "\n", 1))
        checked.append(r["checked_s"] / r["c_s"])
        unchecked.append(r["unchecked_s"] / r["c_s"])
    kernels.bar_plot(path, groups, {"gpujit, bounds checks on": checked, "gpujit, boundscheck=False": unchecked},
                     "CPU target vs C of the same algorithm, one thread (time / C's time; lower is better), %s"
                     % results["date"][:10], "time / C", ref=1.0)


def one_and_two(gpu, args, ncores, results):
    # 1. vs the simulator
    gj = gpujit_shared_kernels(gpu, args)
    results["gpujit_cpu_s"] = gj
    sim = None if args.no_sim else run_simulator(args)
    full = grids()
    labels = {"saxpy": "saxpy n=%d" % SAXPY_N, "block_sum": "block_sum n=%d" % BSUM_N,
              "matmul": "matmul %dx%d" % (MM_N, MM_N)}
    rows1 = []
    if sim:
        results["simulator"] = sim
        print("1. gpujit CPU backend vs numba-cuda %s CUDA simulator (numba %s)"
              % (sim["numba_cuda"], sim["numba"]))
        print("   simulator timed on the first k and 2k blocks, scaled linearly to the full grid")
        hdr = "%-20s %8s %10s %16s %14s %12s %11s" % (
            "kernel", "threads", "gpujit", "sim s/thread", "sim full (est)", "sim full", "speed-up")
        print(hdr)
        print("-" * len(hdr))
    else:
        print("1. gpujit CPU backend (simulator skipped)")
    for name in ("saxpy", "block_sum", "matmul"):
        row = {"kernel": name, "threads": full[name][2], "gpujit_s": gj[name]}
        if sim:
            s = sim["kernels"][name]
            p1, p2 = s["points"]
            per1, per2 = p1["seconds"] / p1["threads"], p2["seconds"] / p2["threads"]
            est = per2 * s["full_threads"]
            row.update(sim_per_thread_s=[per1, per2], sim_threads=[p1["threads"], p2["threads"]],
                       sim_full_est_s=est, linearity=per2 / per1, speedup=est / gj[name])
            if "full_measured_s" in s:
                row["sim_full_measured_s"] = s["full_measured_s"]
                row["speedup_vs_measured"] = s["full_measured_s"] / gj[name]
            meas = "%10.1f s" % s["full_measured_s"] if "full_measured_s" in s else "%12s" % "-"
            print("%-20s %8d %7.3f ms %7.1f/%-5.1f us %12.1f s %s %10.0fx" % (
                labels[name], row["threads"], gj[name] * 1e3, per1 * 1e6, per2 * 1e6, est, meas,
                row["speedup"]))
        else:
            print("%-20s %8d %7.3f ms" % (labels[name], row["threads"], gj[name] * 1e3))
        rows1.append(row)
    results["vs_simulator"] = rows1
    if sim:
        worst = min(r["speedup"] for r in rows1)
        print("   (sim s/thread: at k / 2k blocks; linearity = ratio of the two, %s)"
              % ", ".join("%s %.2f" % (r["kernel"], r["linearity"]) for r in rows1))
        print("   target gpujit >= 1000x the simulator: %s (smallest speed-up %.0fx)\n"
              % ("MET" if worst >= 1000 else "NOT MET", worst))
        results["target_vs_simulator_met"] = worst >= 1000

    # 2. vs C
    c_s, cc_version = c_saxpy(BIG_N, args.repeat)
    np_s = numpy_saxpy(args.repeat)
    big = gpujit_big_saxpy(gpu, args, ncores)
    gbytes = 3 * 4 * BIG_N / 1e9
    print("2. saxpy over 2^24 float32: gpujit CPU backend (%s) vs a C loop (%s %s, one thread)"
          % ("1 thread, CPU time" if CLOCK is time.thread_time else "%d cores" % ncores,
             cc_version, " ".join(C_FLAGS)))
    hdr = "%-34s %14s %10s %8s %9s" % ("", "launch", "time", "GB/s", "vs C")
    print(hdr)
    print("-" * len(hdr))
    print("%-34s %14s %7.2f ms %8.1f %8.2fx" % ("C loop", "-", c_s * 1e3, gbytes / c_s, 1.0))
    print("%-34s %14s %7.2f ms %8.1f %8.2fx" % ("NumPy a*x+y", "-", np_s * 1e3, gbytes / np_s, np_s / c_s))
    for r in big:
        r["vs_c"] = r["seconds"] / c_s
        print("%-34s %14s %7.2f ms %8.1f %8.2fx" % (
            "gpujit " + r["kernel"], "[%d, %d]" % (r["grid"], r["block"]), r["seconds"] * 1e3,
            gbytes / r["seconds"], r["vs_c"]))
    gs = [r for r in big if r["kernel"] == "grid-stride"]
    best_gs = min(gs, key=lambda r: r["seconds"])
    suggested = gs[0]
    print("   target grid-stride within 3x of C: launch [%d, %d] %s (%.2fx); best launch [%d, %d] %s (%.2fx)"
          % (suggested["grid"], suggested["block"], "MET" if suggested["vs_c"] <= 3 else "NOT MET",
             suggested["vs_c"], best_gs["grid"], best_gs["block"],
             "MET" if best_gs["vs_c"] <= 3 else "NOT MET", best_gs["vs_c"]))
    results["vs_c"] = {"n": BIG_N, "c_s": c_s, "c_compiler": cc_version, "c_flags": C_FLAGS,
                       "numpy_s": np_s, "gpujit": big,
                       "target_met_suggested_launch": suggested["vs_c"] <= 3,
                       "target_met_best_launch": best_gs["vs_c"] <= 3}


if __name__ == "__main__":
    main()
