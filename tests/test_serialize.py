"""Pickling what gpujit makes, for other processes (multiprocessing, Dask): kernels and device
functions by reference where importable, else by value (code, globals, closures, eager
signatures, options); launch configurations; device arrays (by their contents); streams and
events refuse. Also fork and spawn: a forked child keeps working on the CPU target."""
import multiprocessing as mp
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import gpujit as gpu

SCALE = 3


@gpu.jit(device=True)
def top_inner(a):
    return a * SCALE


@gpu.jit
def top_kernel(r, x):
    i = gpu.grid(1)
    if i < r.size:
        r[i] = top_inner(x[i])


def roundtrip(obj):
    return pickle.loads(pickle.dumps(obj))


def test_module_level_pickles_by_reference():
    assert roundtrip(top_kernel) is top_kernel
    assert roundtrip(top_inner) is top_inner


def make_local(offset):
    @gpu.jit(device=True)
    def inner(a):
        return a + offset

    @gpu.jit("void(float64[::1], float64[::1])", fastmath=False, lineinfo=True)
    def local(r, x):
        i = gpu.grid(1)
        if i < r.size:
            r[i] = inner(x[i]) * SCALE
    return local


def test_local_kernel_pickles_by_value():
    rng = np.random.default_rng()
    k = make_local(rng.integers(1, 100))
    x = rng.standard_normal(50)
    want = np.full_like(x, np.nan)
    k[1, 64](want, x)
    k2 = roundtrip(k)
    assert k2 is not k
    assert k2.signatures == k.signatures and k2.lineinfo
    got = np.full_like(x, np.nan)
    k2[1, 64](got, x)
    np.testing.assert_array_equal(got, want)
    k3 = roundtrip(k2)                              # pickled again after a round trip
    got[:] = np.nan
    k3[1, 64](got, x)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError):                  # the eager signature came along
        k3[1, 64](np.zeros(3, np.int32), np.zeros(3, np.int32))


def test_recursive_and_nested_functions():
    def helper(v):                                  # a plain local function the kernel calls
        return v * 2

    @gpu.jit(device=True)
    def tri(n):
        if n <= 0:
            return 0
        return n + tri(n - 1)

    @gpu.jit
    def k(r, n):
        r[0] = helper(tri(n))

    k2 = roundtrip(k)
    n = int(np.random.default_rng().integers(1, 30))
    r = np.full(1, -1, np.int64)
    k2[1, 1](r, n)
    assert r[0] == n * (n + 1)


def test_device_function_by_value():
    @gpu.jit(device=True)
    def f(a, b):
        return a - b
    f2 = roundtrip(f)
    assert f2 is not f and f2(7, 2) == 5


def test_launch_config_pickles_and_callbacks():
    rng = np.random.default_rng()
    cfg = top_kernel[5, (8, 2), 0, 16]
    cfg2 = roundtrip(cfg)
    assert (cfg2.griddim, cfg2.blockdim, cfg2.sharedmem) == ((5, 1, 1), (8, 2, 1), 16)
    assert cfg2.dispatcher is top_kernel

    seen = []
    cfg.pre_launch_callbacks.append(lambda kernel, config: seen.append((kernel, config)))
    x = rng.standard_normal(40)
    r = np.full_like(x, np.nan)
    cfg(r, x)
    np.testing.assert_array_equal(r, x * SCALE)
    assert len(seen) == 1 and seen[0][1] is cfg and seen[0][0] is not None
    with pytest.raises(pickle.PicklingError, match="pre-launch callbacks"):
        pickle.dumps(cfg)

    def refuse(kernel, config):
        raise RuntimeError("not now")
    cfg.pre_launch_callbacks.append(refuse)
    r[:] = np.nan
    with pytest.raises(RuntimeError, match="not now"):
        cfg(r, x)
    assert np.isnan(r).all()                        # the launch did not happen


def test_device_array_pickles_its_contents():
    rng = np.random.default_rng()
    host = rng.standard_normal((6, 5))
    d = gpu.to_device(host)
    d2 = roundtrip(d)
    assert isinstance(d2, type(d)) and d2.gpu_data is not d.gpu_data
    np.testing.assert_array_equal(d2.copy_to_host(), host)
    v = roundtrip(d[1::2, ::-2])                    # a strided view: its elements
    np.testing.assert_array_equal(v.copy_to_host(), host[1::2, ::-2])


def test_stream_and_event_refuse():
    for obj in (gpu.stream(), gpu.event()):
        with pytest.raises(TypeError, match="cannot pickle a (Stream|Event)"):
            pickle.dumps(obj)


def test_gpus_slice():
    assert [g.id for g in gpu.gpus[:]] == list(range(len(gpu.gpus)))
    assert gpu.gpus[1:] == [] or all(g.id >= 1 for g in gpu.gpus[1:])


MAIN_SCRIPT = '''
import concurrent.futures, multiprocessing as mp, sys
import numpy as np
import gpujit as gpu

K = {k}


@gpu.jit(device=True)
def inner(a):
    return a * K


@gpu.jit
def kern(r, x):
    i = gpu.grid(1)
    if i < r.size:
        r[i] = inner(x[i]) + 1


def work(k, x):
    r = np.full_like(x, np.nan)
    k[1, 64](r, x)
    return r


if __name__ == "__main__":
    x = np.random.default_rng().integers(-1000, 1000, 33).astype(np.float64)  # exact, fused or not
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=mp.get_context("spawn")) as ex:
        got = ex.submit(work, kern, x).result()
    print("OK" if np.array_equal(got, x * K + 1) else "WRONG %r" % (got,))
'''


def test_main_module_kernel_goes_by_value_to_spawned_workers(tmp_path):
    # the worker's __main__ is not the script's: the kernel and its device function travel by value
    k = int(np.random.default_rng().integers(2, 50))
    script = tmp_path / "main_kernel.py"
    script.write_text(MAIN_SCRIPT.format(k=k))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(gpu.__file__)),
                                                        os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == "OK"


def _fork_child(conn):
    try:
        x = np.arange(10.0)
        r = np.full_like(x, np.nan)
        top_kernel[1, 16](r, x)
        conn.send(r.tolist())
    except BaseException as e:       # reported, not raised: the parent checks
        conn.send(repr(e))


@pytest.mark.skipif(gpu.current_target() != "cpu", reason="the cpu target's fork behaviour")
def test_cpu_target_survives_fork():
    # the CPU target's worker pool is rebuilt in a forked child (only the GPU refuses forks)
    x = np.arange(10.0)
    r = np.zeros_like(x)
    top_kernel[1, 16](r, x)          # the pool and the kernel exist before the fork
    ctx = mp.get_context("fork")
    a, b = ctx.Pipe()
    p = ctx.Process(target=_fork_child, args=(b,))
    p.start()
    assert a.poll(120)
    got = a.recv()
    p.join(60)
    assert got == (x * SCALE).tolist()


def test_cudadrv_error_module():
    from gpujit.cudadrv.error import CudaDriverError, CudaSupportError
    assert issubclass(CudaDriverError, gpu.CudaError) and issubclass(CudaSupportError, ImportError)
    e = roundtrip(CudaDriverError("CUDA initialized before forking"))    # as from a worker process
    assert type(e) is CudaDriverError and "before forking" in str(e)


def test_cloudpickle_ships_tasks_that_launch_local_kernels():
    # what Dask and Ray do with a task: cloudpickle it, with the kernel among its globals/closure
    cloudpickle = pytest.importorskip("cloudpickle")
    rng = np.random.default_rng()
    c = float(rng.integers(1, 100))

    @gpu.jit(device=True)
    def inner(v):
        return v + c

    @gpu.jit
    def k(r, x):
        i = gpu.grid(1)
        if i < r.size:
            r[i] = inner(x[i])

    def task(x):
        r = np.full_like(x, np.nan)
        k[1, 64](r, x)
        return r

    x = rng.standard_normal(40)
    np.testing.assert_array_equal(pickle.loads(cloudpickle.dumps(task))(x), x + c)
