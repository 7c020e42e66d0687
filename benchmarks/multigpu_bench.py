"""Scaling over the GPUs of one host, in one process: an N-body acceleration step with the
bodies split between devices, one Python thread per GPU (each selects its device, the
current device being per thread), against the same step on one GPU.

    PYTHONPATH=python python3 benchmarks/multigpu_bench.py [--n BODIES] [--json OUT.json]

Method: every device holds all positions; device d computes the accelerations of its
contiguous share of the bodies, with lang_bench's N-body kernel. A step is timed from the
start of the launches to the end of every device's synchronise (threads start together at
a barrier); median of repeats after a warm-up. The result is checked against a float64 NumPy reference on a sample of bodies.
"""
import argparse
import json
import os
import statistics
import sys
import threading
import time

import numpy as np

import gpujit as gpu

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lang_bench  # noqa: E402

TILE = 128          # lang_bench's tile (its N-body kernel's block size)
EPS2 = 0.01
# lang_bench's N-body step: body i (i < the grid's size) against all bodies of pos. Device d
# is given the positions rotated so that its share of bodies comes first.
nbody = gpu.jit(lang_bench.SIGS["nbody"])(lang_bench.load(gpu, np.float32)["nbody"])


def reference(pos, rows):
    p = pos.astype(np.float64)
    d = p[None, :, :] - p[rows, None, :]
    r2 = (d * d).sum(axis=2) + EPS2
    return (d / r2[:, :, None] ** 1.5).sum(axis=1)


def step_time(devices, pos, reps):
    n = pos.shape[0]
    share = n // len(devices)
    state = {}
    for k, d in enumerate(devices):
        with gpu.gpus[d]:
            state[d] = (gpu.to_device(np.roll(pos, -k * share, axis=0)), gpu.device_array((share, 3), np.float32))
    barrier = threading.Barrier(len(devices) + 1)
    times = {d: [] for d in devices}

    def work(d):
        gpu.select_device(d)
        dpos, dacc = state[d]
        for _ in range(reps + 1):
            barrier.wait()
            nbody[share // TILE, TILE](dpos, dacc)
            gpu.synchronize()
            times[d].append(time.perf_counter())
            barrier.wait()
    ths = [threading.Thread(target=work, args=(d,)) for d in devices]
    for t in ths:
        t.start()
    steps = []
    for _ in range(reps + 1):
        barrier.wait()
        t0 = time.perf_counter()
        barrier.wait()
        steps.append(max(times[d][-1] for d in devices) - t0)
    for t in ths:
        t.join()
    rows = np.arange(0, n, n // 64)
    got = np.concatenate([state[d][1].copy_to_host() for d in devices])
    np.testing.assert_allclose(got[rows], reference(pos, rows), rtol=2e-3, atol=1e-2)
    return statistics.median(steps[1:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 17)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--json")
    args = ap.parse_args()
    ndev = len(gpu.gpus)
    n = args.n - args.n % (TILE * max(ndev, 1))
    pos = np.random.default_rng(1).random((n, 3), dtype=np.float32)
    print("N-body step, %d bodies, %d device(s): %s" % (n, ndev, gpu.get_current_device().name))
    results = {}
    for k in range(1, ndev + 1):
        t = step_time(list(range(k)), pos, args.reps)
        results[k] = t
        print("  %d GPU%s  %8.3f ms/step  %.2fx" % (k, "s" if k > 1 else " ", t * 1e3, results[1] / t), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": n, "seconds_per_step": results}, f, indent=1)


if __name__ == "__main__":
    main()
