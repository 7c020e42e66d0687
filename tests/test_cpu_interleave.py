"""Interleaved threads on the CPU target (docs/cpu-backend.md, "Threads of a
block"): a barrier-free kernel with loops runs its block's threads
round-robin, a few iterations at a time, and a kernel whose only block-wide
operation is syncthreads() in its own body runs them round-robin from barrier
to barrier, both as LLVM coroutines instead of one after another or on
fibers. The results, the bounds
checks and later launches must be as before."""
import numpy as np
import pytest

import gpujit as gpu
from gpujit import _core

from conftest import poisoned


@pytest.fixture(autouse=True)
def cpu_target():
    _core.set_target("cpu")
    yield
    _core.set_target(None)


@gpu.jit
def saxpy_gridstride(out, a, x, y):
    i = gpu.grid(1)
    s = gpu.gridsize(1)
    while i < out.size:
        out[i] = a * x[i] + y[i]
        i += s


@pytest.mark.parametrize("grid,block", [(8, 256), (3, 7), (1, 1), (1, 1024), (5, 64), (64, 32)])
def test_grid_stride_launch_shapes(rng, grid, block):
    n = int(rng.integers(1, 50_000))
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = poisoned(n, np.float32)
    saxpy_gridstride[grid, block](out, np.float32(1.5), x, y)
    np.testing.assert_allclose(out, np.float32(1.5) * x + y, rtol=1e-6)


@gpu.jit
def stride_3d(out):
    # a grid-stride loop over a linear id from 3-D blocks in a 2-D grid
    t = gpu.threadIdx.x + gpu.blockDim.x * (gpu.threadIdx.y + gpu.blockDim.y * gpu.threadIdx.z)
    b = gpu.blockIdx.x + gpu.gridDim.x * gpu.blockIdx.y
    nt = gpu.blockDim.x * gpu.blockDim.y * gpu.blockDim.z
    i = b * nt + t
    s = nt * gpu.gridDim.x * gpu.gridDim.y
    while i < out.size:
        out[i] = i * 3 + 1
        i += s


def test_grid_stride_3d_blocks(rng):
    n = int(rng.integers(1000, 20_000))
    out = poisoned(n, np.int64)
    stride_3d[(3, 2), (4, 3, 5)](out)
    assert (out == np.arange(n) * 3 + 1).all()


@gpu.jit
def collatz(out, a):
    # nested loops with trip counts that differ from thread to thread
    i = gpu.grid(1)
    if i < a.size:
        x = a[i]
        steps = 0
        while x != 1:
            x = x // 2 if x % 2 == 0 else 3 * x + 1
            steps += 1
        total = 0
        for j in range(steps):
            for k in range(j % 5):
                total += k
        out[i] = steps * 1000 + total


def test_divergent_nested_loops(rng):
    a = rng.integers(1, 5000, 333)
    out = poisoned(333, np.int64)
    collatz[6, 64](out, a)
    want = []
    for x in map(int, a):
        steps = 0
        while x != 1:
            x = x // 2 if x % 2 == 0 else 3 * x + 1
            steps += 1
        want.append(steps * 1000 + sum(k for j in range(steps) for k in range(j % 5)))
    assert out.tolist() == want


@gpu.jit
def ticket_order(order, counter, iters):
    t = gpu.threadIdx.x
    for k in range(iters):
        order[t, k] = gpu.atomic.add(counter, 0, 1)


def test_threads_of_a_block_interleave():
    """Thread 1 starts before thread 0 has finished its loop: the block's
    threads take turns instead of running one after another."""
    nt, iters = 8, 4000
    order = poisoned((nt, iters), np.int64)
    counter = np.zeros(1, np.int64)
    ticket_order[1, nt](order, counter, iters)
    assert sorted(order.ravel().tolist()) == list(range(nt * iters))
    for t in range(nt):
        assert (np.diff(order[t]) > 0).all()
    assert order[1, 0] < order[0, -1]


@gpu.jit
def stride_overrun(out, n):
    i = gpu.grid(1)
    while i < n:
        out[i] = 1.0
        i += gpu.gridsize(1)


def test_bounds_check_in_interleaved_loop():
    out = np.zeros(1000, np.float32)
    with pytest.raises(IndexError, match="out of bounds"):
        stride_overrun[4, 64](out, 1001)
    out[:] = 0
    stride_overrun[4, 64](out, 1000)
    assert (out == 1).all()


@gpu.jit
def block_sum(x, total):
    sh = gpu.shared.array(256, gpu.float32)
    tid = gpu.threadIdx.x
    i = gpu.grid(1)
    sh[tid] = x[i] if i < x.size else gpu.float32(0.0)
    gpu.syncthreads()
    s = gpu.blockDim.x // 2
    while s > 0:
        if tid < s:
            sh[tid] += sh[tid + s]
        gpu.syncthreads()
        s //= 2
    if tid == 0:
        gpu.atomic.add(total, 0, sh[0])


@pytest.mark.parametrize("tpb", [1, 2, 64, 256])
def test_barrier_reduction(rng, tpb):
    n = int(rng.integers(1, 40_000))
    x = rng.random(n, dtype=np.float32)
    total = np.zeros(1, np.float32)
    block_sum[(n + tpb - 1) // tpb, tpb](x, total)
    assert abs(float(total[0]) - x.astype(np.float64).sum()) <= 1e-4 * n


@gpu.jit
def transpose_tile(out, a):
    # 2-D blocks, a shared tile written and read across threads
    tile = gpu.shared.array((8, 9), gpu.int64)
    tx, ty = gpu.threadIdx.x, gpu.threadIdx.y
    x = gpu.blockIdx.x * 8 + tx
    y = gpu.blockIdx.y * 8 + ty
    if y < a.shape[0] and x < a.shape[1]:
        tile[ty, tx] = a[y, x]
    gpu.syncthreads()
    x2 = gpu.blockIdx.y * 8 + tx
    y2 = gpu.blockIdx.x * 8 + ty
    if y2 < out.shape[0] and x2 < out.shape[1]:
        out[y2, x2] = tile[tx, ty]


def test_barrier_2d_blocks(rng):
    a = rng.integers(-1000, 1000, (37, 21))
    out = poisoned((21, 37), np.int64)
    transpose_tile[(3, 5), (8, 8)](out, a)
    assert (out == a.T).all()


@gpu.jit
def two_sites(out):
    # syncthreads() at two places in the code is one barrier, as bar.sync 0
    sh = gpu.shared.array(64, gpu.int32)
    t = gpu.threadIdx.x
    sh[t] = t * 7
    if t % 2 == 0:
        gpu.syncthreads()
    else:
        gpu.syncthreads()
    out[t] = sh[(t + 1) % 64]


def test_two_barrier_sites_are_one_barrier():
    out = poisoned(64, np.int32)
    two_sites[1, 64](out)
    assert (out == (np.arange(1, 65) % 64) * 7).all()


@gpu.jit
def oob_after_barrier(out, k):
    sh = gpu.shared.array(32, gpu.float32)
    t = gpu.threadIdx.x
    sh[t] = 1.0
    gpu.syncthreads()
    out[t + k] = sh[31 - t]


def test_bounds_check_after_barrier():
    out = np.zeros(32, np.float32)
    with pytest.raises(IndexError, match="out of bounds"):
        oob_after_barrier[1, 32](out, 1)
    oob_after_barrier[1, 32](out, 0)
    assert (out == 1).all()


@gpu.jit
def print_in_loop(n):
    t = gpu.threadIdx.x
    for k in range(n):
        print(t, k)


def test_printing_kernels_keep_thread_order(capfd):
    """Kernels that print are not interleaved: each thread's lines stay together."""
    print_in_loop[1, 3](2)
    out = capfd.readouterr().out.split("\n")
    assert [line for line in out if line] == ["0 0", "0 1", "1 0", "1 1", "2 0", "2 1"]
