"""saxpy over a Dask array, one chunk per task (map_blocks), on a dask.distributed cluster:
one worker process per GPU (each sees only its own through CUDA_VISIBLE_DEVICES), or two on
the CPU target where there is no GPU. The workers share one on-disk cache directory, so the
kernel is compiled once, by whichever worker gets there first; the others load it.

Run:  python3 examples/dask_saxpy.py [n] [chunk]      (needs dask and distributed from PyPI)
The result is checked against NumPy; the last line reports each worker's compilations.
"""
import os
import sys
import tempfile

import numpy as np

import gpujit as gpu


@gpu.jit(cache=True)
def saxpy(out, a, x, y):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def saxpy_block(x, y, a):
    """One chunk: the kernel on this worker's device (host arrays are copied in and out)."""
    out = np.empty_like(x)
    threads = 256
    saxpy[(x.size + threads - 1) // threads, threads](out, a, x, y)
    return out


def cache_report():
    """What this worker did with the on-disk cache: (compiled, loaded, written) kernels."""
    from gpujit.caching import process_stats
    s = process_stats()
    return (sum(s.cache_misses.values()), sum(s.cache_hits.values()), sum(s.cache_writes.values()))


def make_cluster(ngpus):
    from distributed import LocalCluster, Nanny, Scheduler, SpecCluster
    if not ngpus:
        return LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = visible.split(",") if visible else [str(i) for i in range(ngpus)]
    workers = {i: {"cls": Nanny, "options": {"nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": ids[i]}}}
               for i in range(ngpus)}
    return SpecCluster(scheduler={"cls": Scheduler, "options": {"dashboard_address": None}}, workers=workers)


def main(n=2_000_003, chunk=250_000):
    # a cache directory of the run's own unless the user named one; removed at the end
    if "GPUJIT_CACHE_DIR" in os.environ:
        return run(n, chunk)
    with tempfile.TemporaryDirectory(prefix="gpujit-dask-cache-") as d:
        os.environ["GPUJIT_CACHE_DIR"] = d
        try:
            return run(n, chunk)
        finally:
            del os.environ["GPUJIT_CACHE_DIR"]


def run(n, chunk):
    import dask.array as da
    from distributed import Client

    # workers are started with 'spawn' (distributed's default): nothing CUDA crosses a fork
    ngpus = len(gpu.gpus) if gpu.current_target() == "cuda" else 0
    if not ngpus:
        os.environ.setdefault("GPUJIT_TARGET", "cpu")
    seed = int(np.random.default_rng().integers(2**31))
    a = np.float32(np.random.default_rng(seed).standard_normal())
    with make_cluster(ngpus) as cluster, Client(cluster) as client:
        rs = da.random.RandomState(seed)     # the inputs are made on the workers, chunk by chunk
        dx = rs.standard_normal(n, chunks=chunk).astype(np.float32)
        dy = rs.standard_normal(n, chunks=chunk).astype(np.float32)
        got, x, y = da.compute(da.map_blocks(saxpy_block, dx, dy, a, dtype=np.float32), dx, dy)
        report = client.run(cache_report)
    want = a * x + y
    # FMA contraction may round once where NumPy rounds twice
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    compiled = sum(r[0] for r in report.values())
    print("dask saxpy: %d elements in %d chunks on %d %s worker(s): OK" % (
        n, -(-n // chunk), len(report), "GPU" if ngpus else "cpu-target"))
    print("cache (compiled, loaded, written) per worker: %s; compiled %d time(s) in all; cache %s" % (
        sorted(report.values()), compiled, os.environ["GPUJIT_CACHE_DIR"]))
    return got, report


if __name__ == "__main__":
    main(*(int(v) for v in sys.argv[1:3]))
