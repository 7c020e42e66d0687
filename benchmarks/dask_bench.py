"""The N-body step through dask.distributed on 1 and 2 GPUs (one worker process per GPU, each
seeing only its own through CUDA_VISIBLE_DEVICES), against the same step in one process with
one Python thread per GPU (multigpu_bench.py). Where there is no GPU, the workers use the CPU
target (a smoke test of the code: its figures mean nothing about GPUs).

    PYTHONPATH=python python3 benchmarks/dask_bench.py [--n BODIES] [--reps R] [--ways auto|K] [--batch B] [--json OUT]

Method: each worker builds its share of the step once (multigpu_bench.Share: all positions on
its device, its contiguous share of the bodies to compute) and keeps it; a Dask step is one
task per worker, pinned to it, that launches the step (B steps with --batch B) and
synchronises, timed at the client from the submission of the tasks to the gather of their
completions (so it includes Dask's scheduling round trip, shared by B steps); 'kernel' is the
slowest worker's time inside its task. Both are per step. Median
of R steps after a warm-up. The accelerations are fetched from the workers and checked
against a float64 NumPy reference on a sample of bodies. Needs dask and distributed.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _gpujit_path():
    import gpujit
    return os.path.dirname(os.path.dirname(gpujit.__file__))


# ---- on the workers (multigpu_bench is imported there by name: the workers' path has HERE) ----

def _setup(n, k, ndev, ways, seed):
    """This worker's share k of ndev, kept on the worker; returns its device's name."""
    import gpujit as gpu
    from distributed import get_worker
    import multigpu_bench as mb
    pos = np.random.default_rng(seed).random((n, 3), dtype=np.float32)
    get_worker().gpujit_nbody = mb.Share(pos, k, ndev, ways)
    gpu.synchronize()
    return gpu.get_current_device().name


def _step(batch):
    """`batch` steps of this worker's share; the seconds they took inside the task."""
    import gpujit as gpu
    from distributed import get_worker
    share = get_worker().gpujit_nbody
    t0 = time.perf_counter()
    for _ in range(batch):
        share.launch()
    gpu.synchronize()
    return time.perf_counter() - t0


def _result():
    from distributed import get_worker
    share = get_worker().gpujit_nbody
    share.acc_host = share.acc.copy_to_host()
    del share.pos, share.part
    return share.acc_host


# ---- the client -----------------------------------------------------------------------------

def make_cluster(ngpus, env):
    """One single-threaded worker process per GPU, or two CPU-target workers without a GPU."""
    from distributed import LocalCluster, Nanny, Scheduler, SpecCluster
    if not ngpus:
        return LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = visible.split(",") if visible else [str(i) for i in range(ngpus)]
    workers = {i: {"cls": Nanny, "options": {"nthreads": 1, "env": dict(env, CUDA_VISIBLE_DEVICES=ids[i])}}
               for i in range(ngpus)}
    return SpecCluster(scheduler={"cls": Scheduler, "options": {"dashboard_address": None}}, workers=workers)


def dask_step_time(client, addrs, n, reps, ways, seed, batch=1):
    """Median seconds per step (at the client) and of the slowest task's own time, over the
    workers `addrs` (share k on addrs[k]); checks the result."""
    import multigpu_bench as mb
    ndev = len(addrs)
    names = client.gather([client.submit(_setup, n, k, ndev, ways, seed, workers=[a], pure=False)
                           for k, a in enumerate(addrs)])
    steps, inside = [], []
    for _ in range(reps + 1):
        t0 = time.perf_counter()
        ts = client.gather([client.submit(_step, batch, workers=[a], pure=False) for a in addrs])
        steps.append((time.perf_counter() - t0) / batch)
        inside.append(max(ts) / batch)
    accs = client.gather([client.submit(_result, workers=[a], pure=False) for a in addrs])
    pos = np.random.default_rng(seed).random((n, 3), dtype=np.float32)
    rows = np.arange(0, n, max(n // 64, 1))
    np.testing.assert_allclose(np.concatenate(accs)[rows], mb.reference(pos, rows), rtol=2e-3, atol=1e-2)
    return statistics.median(steps[1:]), statistics.median(inside[1:]), names[0]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 18)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--ways", default="auto", help="threads per body: auto (= the devices of each run) or a number")
    ap.add_argument("--batch", type=int, default=1, help="steps per Dask task (its round trip shared by them)")
    ap.add_argument("--json")
    args = ap.parse_args(argv)

    import gpujit as gpu
    ngpus = min(len(gpu.gpus), 2) if gpu.current_target() == "cuda" else 0
    env = {"PYTHONPATH": os.pathsep.join([HERE, _gpujit_path(), os.environ.get("PYTHONPATH", "")])}
    os.environ["PYTHONPATH"] = env["PYTHONPATH"]      # LocalCluster's workers inherit it
    if not ngpus:
        os.environ.setdefault("GPUJIT_TARGET", "cpu")
        env["GPUJIT_TARGET"] = os.environ["GPUJIT_TARGET"]
    import multigpu_bench as mb
    fixed = None if args.ways == "auto" else int(args.ways)
    nmax = ngpus or 2     # workers: one per GPU (two at most), or two CPU-target ones
    n = args.n - args.n % mb.multiple(nmax, fixed or nmax)
    seed = 1
    kind = "GPU" if ngpus else "cpu-target"
    results = {"n": n, "ways": args.ways, "batch": args.batch, "target": gpu.current_target()}
    print("N-body step, %d bodies, through Dask (one %s worker per device) and in one process (one thread "
          "per device); threads per body: %s; %d step%s per Dask task" % (
              n, kind, args.ways if fixed else "the devices of each run", args.batch, "s" if args.batch > 1 else ""),
          flush=True)

    # one process, one thread per device (the devices this process sees)
    pos = np.random.default_rng(seed).random((n, 3), dtype=np.float32)
    threads = {}
    for k in range(1, min(len(gpu.gpus), nmax) + 1):
        threads[k] = mb.step_time(list(range(k)), pos, args.reps, fixed or k)
        print("  threads  %d device%s  %9.3f ms/step  %.2fx" % (k, "s" if k > 1 else " ", threads[k] * 1e3,
                                                              threads[1] / threads[k]), flush=True)
    results["threads_seconds_per_step"] = threads

    from distributed import Client
    with make_cluster(ngpus, env) as cluster, Client(cluster) as client:
        client.wait_for_workers(nmax)
        info = client.scheduler_info()["workers"]
        addrs = sorted(info, key=lambda a: str(info[a]["name"]))
        dask, kernel = {}, {}
        for k in range(1, nmax + 1):
            dask[k], kernel[k], name = dask_step_time(client, addrs[:k], n, args.reps, fixed or k, seed, args.batch)
            print("  dask     %d worker%s  %9.3f ms/step  %.2fx   (kernel %.3f ms/step inside the tasks, "
                  "Dask's round trip %.3f ms; %s)" % (k, "s" if k > 1 else " ", dask[k] * 1e3, dask[1] / dask[k],
                                                     kernel[k] * 1e3, (dask[k] - kernel[k]) * 1e3, name), flush=True)
    results["dask_seconds_per_step"] = dask
    results["dask_kernel_seconds_per_step"] = kernel
    print("dask N-body: %s" % json.dumps({"n": n, "batch": args.batch, "dask_speedup": round(dask[1] / dask[nmax], 3),
                                         "threads_speedup": round(threads[1] / threads[max(threads)], 3)}))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return results


if __name__ == "__main__":
    main()
