"""Compile time of gpujit.compile_ptx vs numba.cuda.compile_ptx, warm process,
median of 20, same Python functions (benchmarks/kernels.py).

    PYTHONPATH=python python3 benchmarks/compile_time.py
"""
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import kernels  # noqa: E402

import gpujit  # noqa: E402


def median_ms(fn, n=20):
    fn()  # warm: imports, LLVM initialisation, first-use caches
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def main():
    rows = []
    g = kernels.load(gpujit)
    cuda, nb_f32 = kernels.numba_cuda()
    nb = kernels.load(cuda, nb_f32) if cuda else None
    for name in ("saxpy", "matmul"):
        sig = kernels.SIGS[name]
        t_gj = median_ms(lambda: gpujit.compile_ptx(g[name], sig, cc=(9, 0)))
        t_nb = None
        if nb:
            try:
                t_nb = median_ms(lambda: cuda.compile_ptx(nb[name], sig, cc=(9, 0)))
            except Exception as e:  # no NVVM here
                print("numba-cuda compile_ptx failed: %s" % str(e).splitlines()[0], file=sys.stderr)
        rows.append((name, t_gj, t_nb))
    print("compile_ptx, warm process, median of 20 (ms) on %s, Python %s" % (
        platform.node() or "?", platform.python_version()))
    print("%-8s %10s %12s %8s" % ("kernel", "gpujit", "numba-cuda", "ratio"))
    for name, a, b in rows:
        print("%-8s %10.3f %12s %8s" % (name, a, "%.3f" % b if b else "-", "%.0fx" % (b / a) if b else "-"))


if __name__ == "__main__":
    main()
