"""The barrier rule's LaunchError says where: the file:line of the syncthreads() the waiting
threads reached, which threads returned instead, and (where the threads run as fibers or
interleaved) the first thread of each group and how many there are; also for a kernel loaded
from the on-disk cache."""
import inspect
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpujit as gpu

pytestmark = pytest.mark.skipif(gpu.current_target() != "cpu", reason="the CPU target's barrier rule and its report")

HERE = os.path.abspath(__file__)


def line_of(fn, text):
    src, first = inspect.getsourcelines(fn.py_func)
    return first + next(i for i, ln in enumerate(src) if text in ln)


@gpu.jit
def early_return(out):  # loops over threads between barriers
    t = gpu.threadIdx.x
    if t < 2:
        return
    gpu.syncthreads()  # the barrier
    out[t] = 1


@gpu.jit
def with_warp_op(out):  # a warp operation: threads run as fibers
    t = gpu.threadIdx.x
    if t >= 5:
        return
    gpu.syncthreads()  # the barrier
    out[t] = gpu.shfl_sync(0xffffffff, t, 0)


def test_regions_name_the_barrier_and_the_returned():
    out = np.full(32, -1, np.int64)
    with pytest.raises(gpu.LaunchError) as info:
        early_return[2, 32](out)
    msg = str(info.value)
    where = "%s:%d" % (HERE, line_of(early_return, "# the barrier"))
    # both blocks diverge alike; blocks run in parallel, so either may be the one reported
    assert re.match(r"kernel 'early_return': syncthreads\(\): not every thread of block \([01], 0, 0\) reached the "
                    r"same barrier: ", msg), msg
    assert "reached the syncthreads() at %s" % where in msg and "returned" in msg, msg


def test_fibers_name_the_threads():
    out = np.full(32, -1, np.int64)
    with pytest.raises(gpu.LaunchError) as info:
        with_warp_op[1, 32](out)
    msg = str(info.value)
    where = "%s:%d" % (HERE, line_of(with_warp_op, "# the barrier"))
    assert "5 threads, the first (0, 0, 0), reached the syncthreads() at %s" % where in msg, msg
    assert "27 threads, the first (5, 0, 0), returned" in msg, msg


@pytest.mark.parametrize("block", [(4, 3, 1), (2, 2, 2)])
def test_the_block_and_threads_in_more_dimensions(block):
    @gpu.jit
    def k(out):
        t = gpu.threadIdx.y
        if t == 1:
            return
        gpu.syncthreads()
        out[0] = gpu.shfl_sync(0xffffffff, t, 0)

    with pytest.raises(gpu.LaunchError) as info:
        k[(1, 2), block](np.zeros(1, np.int64))
    msg = str(info.value)
    nx, ny, nz = block
    returned = nx * nz  # the threads with y == 1
    assert "block (0, 0, 0)" in msg or "block (0, 1, 0)" in msg, msg
    assert re.search(r"%d threads, the first \(0, 1, 0\), returned" % returned, msg), msg


def test_cached_kernel_keeps_the_barrier_lines(tmp_path):
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
            out[t] = gpu.shfl_sync(0xffffffff, t, 0)

        try:
            k[1, 32](np.zeros(32, np.int64))
        except gpu.LaunchError as e:
            print(sum(k.stats.cache_hits.values()), e)
    '''))
    env = dict(os.environ, GPUJIT_TARGET="cpu", GPUJIT_CACHE_DIR=str(tmp_path / "cache"))
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(gpu.__file__)) + os.pathsep + env.get("PYTHONPATH", "")
    runs = [subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
        assert "reached the syncthreads() at %s:10" % script in r.stdout, r.stdout
        assert "thread (7, 0, 0) returned" in r.stdout, r.stdout
    assert runs[0].stdout.split()[0] == "0" and runs[1].stdout.split()[0] == "1"  # the second from the cache
