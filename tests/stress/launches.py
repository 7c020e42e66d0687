"""Launch a small kernel many times and sample the process's memory (and, on
the GPU, device memory): gpujit must not grow per launch.

    PYTHONPATH=python python3 tests/stress/launches.py [--count 1000000] [--target cpu|cuda]

Prints samples and exits non-zero if resident memory grew by more than
--max-growth-mb after the warm-up (device memory: any growth). Free device memory is the
whole GPU's: with other processes on the same GPU (the test suite under pytest-xdist) it is
only printed (--device-shared); scripts/gpu.sh's stress step runs alone and checks it.
"""
import argparse
import os
import sys
import time

import numpy as np


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=1_000_000)
    ap.add_argument("--target")
    ap.add_argument("--max-growth-mb", type=float, default=8.0)
    ap.add_argument("--device-shared", action="store_true",
                    help="other processes use the GPU: report device memory, do not judge it")
    args = ap.parse_args(argv)
    if args.target:
        os.environ["GPUJIT_TARGET"] = args.target
    import gpujit as gpu

    @gpu.jit
    def bump(a, b, c):
        i = gpu.grid(1)
        if i < a.size:
            a[i] += b[i] * c

    n = 64
    host = np.zeros(n)
    da, db = gpu.to_device(host), gpu.to_device(np.ones(n))
    for _ in range(1000):                     # warm-up: compile, load, caches
        bump[1, 64](da, db, 1.0)
    gpu.synchronize()
    free0 = gpu.mem_get_info()[0] if gpu.current_target() == "cuda" else None
    base = rss_mb()
    t0 = time.perf_counter()
    step = max(args.count // 10, 1)
    for k in range(args.count):
        bump[1, 64](da, db, 1.0)
        if (k + 1) % step == 0:
            gpu.synchronize()
            print("%9d launches  rss %.1f MB (+%.2f)" % (k + 1, rss_mb(), rss_mb() - base), flush=True)
    gpu.synchronize()
    dt = time.perf_counter() - t0
    got = da.copy_to_host()
    assert (got == 1000 + args.count).all(), got[:4]
    growth = rss_mb() - base
    print("target %s: %d launches in %.1f s (%.2f us each), rss growth %.2f MB" % (
        gpu.current_target(), args.count, dt, 1e6 * dt / args.count, growth))
    if free0 is not None:
        free1 = gpu.mem_get_info()[0]
        print("device free memory change: %+d bytes" % (free1 - free0))
        if free1 < free0 and not args.device_shared:
            return 1
    return 0 if growth <= args.max_growth_mb else 1


if __name__ == "__main__":
    sys.exit(main())
