"""Compile time of gpujit.compile_ptx vs numba.cuda.compile_ptx, warm process,
median of 20, same Python functions (benchmarks/kernels.py and lang_bench.py: saxpy, the
16x16 tiled matmul, Black-Scholes with its math calls, the N-body step); then the same
compiles from 1 and from N threads at once (LLVM's work runs with the GIL released).

    PYTHONPATH=python python3 benchmarks/compile_time.py [--cpu-time] [--plot OUT.png]

--cpu-time: the medians are the calling thread's CPU time rather than wall time, for a
machine shared with other work (the compile runs on the calling thread, LLVM included; the
threaded figures stay wall time).
"""
import os
import platform
import statistics
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import kernels  # noqa: E402
import lang_bench  # noqa: E402

import gpujit  # noqa: E402


CPU_TIME = "--cpu-time" in sys.argv[1:]
PLOT = sys.argv[sys.argv.index("--plot") + 1] if "--plot" in sys.argv[1:-1] else None
clock = time.thread_time if CPU_TIME else time.perf_counter


def median_ms(fn, n=20):
    fn()  # warm: imports, LLVM initialisation, first-use caches
    ts = []
    for _ in range(n):
        t0 = clock()
        fn()
        ts.append((clock() - t0) * 1e3)
    return statistics.median(ts)


def main():
    rows = []
    g = dict(kernels.load(gpujit), **lang_bench.load(gpujit, np.float32))
    sigs = dict(kernels.SIGS, **lang_bench.SIGS)
    cuda, nb_f32 = kernels.numba_cuda()
    nb = dict(kernels.load(cuda, nb_f32), **lang_bench.load(cuda, nb_f32)) if cuda else None
    names = ("saxpy", "matmul", "black_scholes", "nbody")
    for name in names:
        sig = sigs[name]
        t_gj = median_ms(lambda: gpujit.compile_ptx(g[name], sig, cc=(9, 0)))
        t_nb = None
        if nb:
            try:
                t_nb = median_ms(lambda: cuda.compile_ptx(nb[name], sig, cc=(9, 0)))
            except Exception as e:  # no NVVM here
                print("numba-cuda compile_ptx failed: %s" % str(e).splitlines()[0], file=sys.stderr)
        rows.append((name, t_gj, t_nb))
    print("compile_ptx, warm process, median of 20 (ms%s) on %s, Python %s" % (
        ", thread CPU time" if CPU_TIME else "", platform.node() or "?", platform.python_version()))
    print("%-14s %10s %12s %8s" % ("kernel", "gpujit", "numba-cuda", "ratio"))
    for name, a, b in rows:
        print("%-14s %10.3f %12s %8s" % (name, a, "%.3f" % b if b else "-", "%.0fx" % (b / a) if b else "-"))
    if PLOT:
        kernels.bar_plot(PLOT, [r[0] for r in rows],
                         {"gpujit": [r[1] for r in rows], "numba-cuda": [r[2] for r in rows]},
                         "compile_ptx, warm process, median of 20, %s, %s" % (
                             "thread CPU time" if CPU_TIME else "wall time", time.strftime("%Y-%m-%d")),
                         "ms (log scale)", log=True)
    # the same 4 compiles x 4, from one thread, then split over threads
    jobs = [(g[name], sigs[name]) for name in names] * 4
    ncpu = os.cpu_count() or 1
    for nthreads in sorted({1, 2, min(ncpu, 8)}):
        t0 = time.perf_counter()
        parts = [jobs[k::nthreads] for k in range(nthreads)]
        ths = [threading.Thread(target=lambda p=p: [gpujit.compile_ptx(f, s, cc=(9, 0)) for f, s in p])
               for p in parts]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        print("%d compiles from %d thread%s: %.1f ms" % (len(jobs), nthreads, "" if nthreads == 1 else "s",
                                                          (time.perf_counter() - t0) * 1e3))


if __name__ == "__main__":
    main()
