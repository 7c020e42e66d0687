"""Scaling over the GPUs of one host, in one process: an N-body acceleration step with the
bodies split between devices, one Python thread per GPU (each selects its device, the
current device being per thread), against the same step on one GPU.

    PYTHONPATH=python python3 benchmarks/multigpu_bench.py [--n BODIES] [--ways auto|1|K] [--json OUT.json]

Method: every device holds all positions; device d computes the accelerations of its
contiguous share of the bodies. A step is timed from the start of the launches to the end of
every device's synchronise (threads start together at a barrier); median of repeats after a
warm-up. The result is checked against a float64 NumPy reference on a sample of bodies.

The launch shape: with one thread per body (`--ways 1`, lang_bench's N-body kernel), D devices
each run 1/D of the threads one device runs, so at a size that just fills one GPU each of D runs
at 1/D of its occupancy, and the kernel's inner loop, bound by latency, slows down per thread.
`--ways K` gives each body K threads, each summing over 1/K of the bodies (a second grid
dimension), and a small second kernel adds the K partial sums: D devices with K = D run as
many threads each as one device runs alone. `auto` (the default) uses K = the number of devices
of each run (K = 1 on one GPU: the one-GPU figure is lang_bench's kernel, unchanged).
"""
import argparse
import json
import math
import os
import statistics
import sys
import threading
import time

import numpy as np

import gpujit as gpu
from gpujit import float32

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lang_bench  # noqa: E402

TILE = 128          # lang_bench's tile (its N-body kernel's block size)
EPS2 = 0.01
# lang_bench's N-body step: body i (i < the grid's size) against all bodies of pos. Device d
# is given the positions rotated so that its share of bodies comes first.
nbody = gpu.jit(lang_bench.SIGS["nbody"])(lang_bench.load(gpu, np.float32)["nbody"])


@gpu.jit("void(float32[:, ::1], float32[:, :, ::1])")
def nbody_split(pos, part):
    """lang_bench's step with each body's sum split over the grid's second dimension: block row
    w sums over the w-th of gridDim.y equal runs of bodies into part[w]."""
    sx = gpu.shared.array(TILE, float32)
    sy = gpu.shared.array(TILE, float32)
    sz = gpu.shared.array(TILE, float32)
    i = gpu.blockIdx.x * gpu.blockDim.x + gpu.threadIdx.x
    w = gpu.blockIdx.y
    per = pos.shape[0] // gpu.gridDim.y
    xi = pos[i, 0]
    yi = pos[i, 1]
    zi = pos[i, 2]
    ax = float32(0.0)
    ay = float32(0.0)
    az = float32(0.0)
    for start in range(w * per, w * per + per, TILE):
        t = gpu.threadIdx.x
        sx[t] = pos[start + t, 0]
        sy[t] = pos[start + t, 1]
        sz[t] = pos[start + t, 2]
        gpu.syncthreads()
        for k in range(TILE):
            dx = sx[k] - xi
            dy = sy[k] - yi
            dz = sz[k] - zi
            r2 = dx * dx + dy * dy + dz * dz + float32(EPS2)
            inv = float32(1.0) / math.sqrt(r2)
            inv3 = inv * inv * inv
            ax += dx * inv3
            ay += dy * inv3
            az += dz * inv3
        gpu.syncthreads()
    part[w, i, 0] = ax
    part[w, i, 1] = ay
    part[w, i, 2] = az


@gpu.jit("void(float32[:, :, ::1], float32[:, ::1])")
def fold(part, acc):
    """acc = the sum of the partial accelerations over part's first axis."""
    i = gpu.grid(1)
    if i < acc.shape[0] * 3:
        r = i // 3
        c = i - r * 3
        s = float32(0.0)
        for w in range(part.shape[0]):
            s += part[w, r, c]
        acc[r, c] = s


def reference(pos, rows):
    p = pos.astype(np.float64)
    d = p[None, :, :] - p[rows, None, :]
    r2 = (d * d).sum(axis=2) + EPS2
    return (d / r2[:, :, None] ** 1.5).sum(axis=1)


def multiple(ndev, ways):
    """Body counts must be a multiple of this for `ndev` devices split `ways` ways."""
    return TILE * max(ndev, 1) * max(ways, 1)


class Share:
    """Device k's part of an N-body step over `ndev` devices, on the current device: all the
    positions (rotated so that its share comes first), its share's accelerations and, when
    each body's sum is split `ways` ways, the partial sums."""

    def __init__(self, pos, k, ndev, ways):
        n = pos.shape[0]
        if n % multiple(ndev, ways):
            raise ValueError("%d bodies is not a multiple of %d" % (n, multiple(ndev, ways)))
        self.share, self.ways = n // ndev, ways
        self.first = k * self.share
        self.pos = gpu.to_device(np.roll(pos, -self.first, axis=0))
        self.acc = gpu.to_device(np.full((self.share, 3), np.nan, np.float32))   # poisoned: check() sees a miss
        self.part = gpu.device_array((ways, self.share, 3), np.float32) if ways > 1 else None

    def launch(self):
        if self.ways == 1:
            nbody[self.share // TILE, TILE](self.pos, self.acc)
        else:
            nbody_split[(self.share // TILE, self.ways), TILE](self.pos, self.part)
            fold[(3 * self.share + 255) // 256, 256](self.part, self.acc)


def check(pos, shares):
    """The accelerations of every share, put together, against the reference on a sample."""
    n = pos.shape[0]
    rows = np.arange(0, n, max(n // 64, 1))
    got = np.concatenate([s.acc.copy_to_host() for s in shares])
    np.testing.assert_allclose(got[rows], reference(pos, rows), rtol=2e-3, atol=1e-2)


def step_time(devices, pos, reps, ways=1):
    state = {}
    for k, d in enumerate(devices):
        with gpu.gpus[d]:
            state[d] = Share(pos, k, len(devices), ways)
    barrier = threading.Barrier(len(devices) + 1)
    times = {d: [] for d in devices}   # per device, (start, end) of each step

    def work(d):
        gpu.select_device(d)
        for _ in range(reps + 1):
            barrier.wait()
            t0 = time.perf_counter()
            state[d].launch()
            gpu.synchronize()
            times[d].append((t0, time.perf_counter()))
            barrier.wait()
    ths = [threading.Thread(target=work, args=(d,)) for d in devices]
    for t in ths:
        t.start()
    steps = []
    for _ in range(reps + 1):
        barrier.wait()   # the devices start
        barrier.wait()   # every device is done: a step is the first start to the last end
        steps.append(max(times[d][-1][1] for d in devices) - min(times[d][-1][0] for d in devices))
    for t in ths:
        t.join()
    check(pos, [state[d] for d in devices])
    return statistics.median(steps[1:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 17)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--ways", default="auto", help="threads per body: auto (= the devices of each run) or a number")
    ap.add_argument("--json")
    args = ap.parse_args()
    ndev = len(gpu.gpus)
    fixed = None if args.ways == "auto" else int(args.ways)
    n = args.n - args.n % multiple(ndev, fixed or ndev)
    pos = np.random.default_rng(1).random((n, 3), dtype=np.float32)
    print("N-body step, %d bodies, %d device(s): %s; threads per body: %s" % (
        n, ndev, gpu.get_current_device().name, args.ways if fixed else "the devices of each run"))
    results = {}
    for k in range(1, ndev + 1):
        ways = fixed or k
        t = step_time(list(range(k)), pos, args.reps, ways)
        results[k] = t
        print("  %d GPU%s  %8.3f ms/step  %.2fx  (%d thread%s per body)" % (
            k, "s" if k > 1 else " ", t * 1e3, results[1] / t, ways, "s" if ways > 1 else ""), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": n, "ways": args.ways, "seconds_per_step": results}, f, indent=1)


if __name__ == "__main__":
    main()
