"""Early returns and barriers on the CPU target: a thread that returned takes no part in the
block's later barriers, as on the GPU, so the threads left go on together. Under each scheme a
barrier kernel may run (loops over threads between barriers, fibers, interleaved threads),
checked against NumPy on fresh inputs; syncthreads_count/and/or count only the threads that
reach them; also for a kernel loaded from the on-disk cache."""
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpujit as gpu

from conftest import poisoned

pytestmark = pytest.mark.skipif(gpu.current_target() != "cpu", reason="the CPU target's barrier schemes")

HERE = os.path.abspath(__file__)


def scheme(kernel):
    """The scheme the CPU target ran the kernel's (last compiled) threads under."""
    ir = kernel.inspect_llvm(list(kernel.inspect_llvm())[-1])
    m = re.search(r'!gpujit\.cpu_threads = !\{(![0-9]+)\}', ir)
    return re.search(re.escape(m.group(1)) + r' = !\{!"([a-z-]+)"\}', ir).group(1)


SWAP = """def {name}(a, out, n):
    sh = gpu.shared.array(64, np.float64)
    t = gpu.threadIdx.x
    if t >= n:
        return
    sh[t] = a[gpu.blockIdx.x, t]
    gpu.syncthreads()
    v = sh[n - 1 - t] * 2.0
    gpu.syncthreads()
    sh[t] = v + 1.0
    gpu.syncthreads()
    out[gpu.blockIdx.x, t] = sh[(t + 1) % n]{tail}
"""


def swap_kernel(name, tail=""):
    ns = {"gpu": gpu, "np": np}
    exec(compile(SWAP.format(name=name, tail=tail), "<%s>" % name, "exec"), ns)
    return gpu.jit(ns[name])


swap_regions = swap_kernel("swap_regions")
swap_fibers = swap_kernel("swap_fibers", " + gpu.activemask() * 0")  # a warp operation: threads run as fibers


def many_barriers():
    """More barriers than the loops over threads take: interleaved threads."""
    src = ["def swap_interleaved(a, out, n):",
           "    sh = gpu.shared.array(64, np.float64)",
           "    t = gpu.threadIdx.x",
           "    if t >= n:",
           "        return",
           "    sh[t] = a[gpu.blockIdx.x, t]"]
    for _ in range(31):
        src += ["    gpu.syncthreads()", "    v = sh[n - 1 - t] + 1.0", "    gpu.syncthreads()", "    sh[t] = v"]
    src += ["    out[gpu.blockIdx.x, t] = sh[t]"]
    ns = {"gpu": gpu, "np": np}
    exec(compile("\n".join(src), "<swap_interleaved>", "exec"), ns)
    return gpu.jit(ns["swap_interleaved"])


swap_interleaved = many_barriers()


def want_swap(a, n):
    v = a[:, :n][:, ::-1] * 2.0 + 1.0
    return np.roll(v, -1, axis=1)


def want_interleaved(a, n):
    w = a[:, :n].copy()
    for _ in range(31):
        w = w[:, ::-1] + 1.0
    return w


@pytest.mark.parametrize("kernel, want, name", [(swap_regions, want_swap, "regions"),
                                                (swap_fibers, want_swap, "fibers"),
                                                (swap_interleaved, want_interleaved, "interleaved-barriers")])
@pytest.mark.parametrize("n", [1, 5, 33, 64])
def test_returned_threads_leave_later_barriers(rng, kernel, want, name, n):
    a = rng.standard_normal((3, 64))
    out = poisoned((3, 64), np.float64)
    kernel[3, 64](a, out, n)
    np.testing.assert_array_equal(out[:, :n], want(a, n))
    assert np.isnan(out[:, n:]).all()   # the returned threads wrote nothing
    assert scheme(kernel) == name


@gpu.jit
def uneven_loop(a, out, n):
    # the threads return one after another from a loop with a barrier in it
    sh = gpu.shared.array(32, np.float64)
    t = gpu.threadIdx.x
    sh[t] = a[t]
    acc = 0.0
    for k in range(n):
        if t < k:
            return
        gpu.syncthreads()
        acc += sh[31 - t]
        gpu.syncthreads()
        sh[t] = acc
    out[t] = acc


def test_threads_return_one_by_one_from_a_barrier_loop(rng):
    n = 6
    a = rng.standard_normal(32)
    out = poisoned(32, np.float64)
    uneven_loop[1, 32](a, out, n)
    sh, acc, left = a.copy(), np.zeros(32), np.ones(32, bool)
    for k in range(n):
        left &= np.arange(32) >= k
        acc = np.where(left, acc + sh[::-1], acc)
        sh = np.where(left, acc, sh)
    np.testing.assert_allclose(out[left], acc[left], rtol=1e-12)
    assert np.isnan(out[~left]).all()
    assert scheme(uneven_loop) == "regions"


@gpu.jit
def votes(out, n):
    t = gpu.threadIdx.x
    if t >= n:
        return
    out[t, 0] = gpu.syncthreads_count(t % 3 == 0)
    out[t, 1] = gpu.syncthreads_and(t < 40)
    out[t, 2] = gpu.syncthreads_or(t == 1)


@pytest.mark.parametrize("n", [1, 5, 40, 64])
def test_barrier_reductions_count_only_live_threads(n):
    out = np.full((64, 3), -1, np.int32)
    votes[1, 64](out, n)
    assert (out[:n, 0] == len(range(0, n, 3))).all(), out[:n, 0]
    assert (out[:n, 1] == int(n <= 40)).all(), out[:n, 1]
    assert (out[:n, 2] == int(n > 1)).all(), out[:n, 2]
    assert (out[n:] == -1).all()


@pytest.mark.parametrize("block", [(4, 3, 1), (2, 2, 2)])
def test_the_block_in_more_dimensions(rng, block):
    @gpu.jit
    def k(a, out):  # the threads with y == 1 return; the others read their mirror in x
        sh = gpu.shared.array(12, np.float64)
        x, y, z = gpu.threadIdx.x, gpu.threadIdx.y, gpu.threadIdx.z
        if y == 1:
            return
        row = (z * gpu.blockDim.y + y) * gpu.blockDim.x
        sh[row + x] = a[row + x]
        gpu.syncthreads()
        out[row + x] = sh[row + gpu.blockDim.x - 1 - x] + gpu.shfl_sync(gpu.activemask(), 0.0, 0)

    nx, ny, nz = block
    a = rng.standard_normal(nx * ny * nz)
    out = poisoned(nx * ny * nz, np.float64)
    k[1, block](a, out)
    want = a.reshape(nz, ny, nx)[:, :, ::-1].copy()
    want[:, 1, :] = np.nan
    np.testing.assert_array_equal(out, want.reshape(-1))


def test_cached_kernel_same_results(tmp_path):
    script = tmp_path / "cached.py"
    script.write_text(textwrap.dedent('''
        import numpy as np
        import gpujit as gpu

        @gpu.jit(cache=True)
        def k(out):
            t = gpu.threadIdx.x
            if t == 7:
                return
            gpu.syncthreads()
            out[t] = gpu.shfl_sync(gpu.activemask(), t, 0) + 100

        out = np.full(32, -1, np.int64)
        k[1, 32](out)
        print(sum(k.stats.cache_hits.values()), ",".join(map(str, out)))
    '''))
    env = dict(os.environ, GPUJIT_TARGET="cpu", GPUJIT_CACHE_DIR=str(tmp_path / "cache"))
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(gpu.__file__)) + os.pathsep + env.get("PYTHONPATH", "")
    runs = [subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    want = ",".join(str(-1 if t == 7 else 100) for t in range(32))
    for r in runs:
        assert r.returncode == 0, r.stderr
        assert r.stdout.split()[1] == want, r.stdout
    assert runs[0].stdout.split()[0] == "0" and runs[1].stdout.split()[0] == "1"  # the second from the cache
