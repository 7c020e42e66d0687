"""gpujit inside Dask (examples/dask_saxpy.py): a dask array computed chunk by chunk with a
gpujit kernel on a dask.distributed cluster of worker processes, checked against NumPy; the
workers share one on-disk cache directory and the kernel is compiled once in all. Skipped
where dask or distributed is not installed."""
import os
import re
import subprocess
import sys

import pytest

import gpujit as gpu

pytest.importorskip("dask.array")
pytest.importorskip("distributed")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "dask_saxpy.py")


def test_dask_saxpy_compiles_once(tmp_path):
    env = dict(os.environ, GPUJIT_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(gpu.__file__)),
                                           os.environ.get("PYTHONPATH", "")]))
    # run as a script: the kernel is in __main__, so it reaches the workers by value
    p = subprocess.run([sys.executable, EXAMPLE, "200003", "25000"], capture_output=True, text=True, env=env,
                       timeout=600, cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr[-3000:]
    assert re.search(r"dask saxpy: 200003 elements in 9 chunks on \d+ \S+ worker\(s\): OK", p.stdout), p.stdout
    assert "compiled 1 time(s) in all" in p.stdout, p.stdout
    nbc = [f for _, _, fs in os.walk(tmp_path / "cache") for f in fs if f.endswith(".nbc")]
    assert len(nbc) == 1


def test_dask_saxpy_leaves_no_cache_dir(tmp_path):
    """Without GPUJIT_CACHE_DIR the example makes a cache directory of its own and removes it."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "GPUJIT_CACHE_DIR"}
    env.update(TMPDIR=str(tmp), PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(gpu.__file__)),
                                                            os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, EXAMPLE, "20011", "5000"], capture_output=True, text=True, env=env,
                       timeout=600, cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr[-3000:]
    assert "compiled 1 time(s) in all" in p.stdout, p.stdout
    assert "already in use" not in p.stderr, p.stderr
    assert [f for f in os.listdir(tmp) if f.startswith("gpujit-dask-cache-")] == []


def test_dask_nbody_benchmark_smoke(tmp_path):
    """benchmarks/dask_bench.py at a tiny size: the step through Dask on one and two workers
    and in one process, each checked against NumPy inside the benchmark."""
    bench = os.path.join(os.path.dirname(__file__), "..", "benchmarks", "dask_bench.py")
    env = dict(os.environ, GPUJIT_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(gpu.__file__)),
                                           os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, bench, "--n", "512", "--reps", "2", "--json", str(tmp_path / "r.json")],
                       capture_output=True, text=True, env=env, timeout=600, cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr[-3000:]
    # a worker per GPU, two at most; two CPU-target workers where there is no GPU
    workers = ["1", "2"] if gpu.current_target() == "cpu" or len(gpu.gpus) > 1 else ["1"]
    for w in workers:
        assert re.search(r"dask +%s workers? .* ms/step" % w, p.stdout), p.stdout
    import json
    r = json.loads((tmp_path / "r.json").read_text())
    assert r["n"] == 512 and set(r["dask_seconds_per_step"]) == set(workers)
