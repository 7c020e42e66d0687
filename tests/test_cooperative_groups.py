"""Cooperative groups: cg.this_grid().sync() (a barrier of the whole grid: the
launch is cooperative, every block resident at once) and
cg.this_thread_block().sync(). On the CPU backend a cooperative launch runs all
its blocks' threads as fibers together; a grid barrier that some block can never
reach is an error, not a hang. The PTX of each kernel goes through ptxas
(conftest), where the grid barrier is an arrival counter in a module global."""
import numpy as np
import pytest

import gpujit as gpu
from conftest import assert_same, poisoned
from gpujit import int32, float64

CPU_MAX_COOP_THREADS = 16384
ON_GPU = gpu.current_target() == "cuda"


def sequential_rows(M):
    # each row reads the previous row's mirrored column, written by another
    # block: without the grid barrier a block runs ahead of the others
    col = gpu.grid(1)
    g = gpu.cg.this_grid()
    rows, cols = M.shape[0], M.shape[1]
    for row in range(1, rows):
        M[row, col] = M[row - 1, cols - col - 1] * 3 + row
        g.sync()


def sequential_rows_ref(first, rows):
    M = np.empty((rows, first.size), first.dtype)
    M[0] = first
    for r in range(1, rows):
        M[r] = M[r - 1][::-1] * 3 + r
    return M


@pytest.mark.parametrize("blocks,threads", [(1, 64), (8, 32), (16, 8), (5, 96)])
def test_sequential_rows(rng, blocks, threads):
    cols, rows = blocks * threads, 24
    M = poisoned((rows, cols), np.int64)
    M[0] = rng.integers(-1000, 1000, cols)
    want = sequential_rows_ref(M[0].copy(), rows)
    k = gpu.jit(sequential_rows)
    k[blocks, threads](M)
    assert_same(M, want)


def test_sequential_rows_eager_signature(rng):
    sig = (int32[:, ::1],)
    k = gpu.jit(sig)(sequential_rows)
    ov = k.overloads[sig]
    assert ov.cooperative
    blocks, threads = 32, 32
    assert ov.max_cooperative_grid_blocks(threads) >= blocks
    M = poisoned((16, blocks * threads), np.int32)
    M[0] = rng.integers(-100, 100, blocks * threads)
    want = sequential_rows_ref(M[0].copy(), 16)
    k[blocks, threads](M)
    assert_same(M, want)


@gpu.jit
def k_heat(a, b, steps, coef):
    # threads past the end return first: the grid barrier waits only for the live ones
    i = gpu.grid(1)
    n = a.size
    if i >= n:
        return
    g = gpu.cg.this_grid()
    for s in range(steps):
        if s % 2 == 0:
            src, dst = a, b
        else:
            src, dst = b, a
        left = src[i - 1] if i > 0 else 0.0
        right = src[i + 1] if i < n - 1 else 0.0
        dst[i] = src[i] + coef * (left - 2 * src[i] + right)
        g.sync()


def test_heat_equation_partial_last_block(rng):
    n, steps, coef = 301, 40, 0.25
    x = rng.random(n)
    a, b = x.copy(), poisoned(n, np.float64)
    k_heat[(n + 63) // 64, 64](a, b, steps, coef)
    want_a, want_b = x.copy(), np.empty(n)
    for s in range(steps):
        src, dst = (want_a, want_b) if s % 2 == 0 else (want_b, want_a)
        p = np.concatenate([[0.0], src, [0.0]])
        dst[:] = src + coef * (p[:-2] - 2 * src + p[2:])
    assert_same(a, want_a, rtol=1e-12)
    assert_same(b, want_b, rtol=1e-12)


@gpu.jit
def k_grid_sum(out, x, partial):
    # per-block partial sums in shared memory, then every block reads all of
    # them after the grid barrier: each block's shared memory is its own
    sh = gpu.shared.array(128, float64)
    t = gpu.threadIdx.x
    b = gpu.blockIdx.x
    sh[t] = x[gpu.grid(1)]
    gpu.cg.this_thread_block().sync()
    if t == 0:
        s = 0.0
        for j in range(gpu.blockDim.x):
            s += sh[j]
        partial[b] = s
    gpu.cg.this_grid().sync()
    total = 0.0
    for j in range(gpu.gridDim.x):
        total += partial[j]
    out[gpu.grid(1)] = total + sh[t]


def test_grid_reduction_and_per_block_shared(rng):
    blocks, threads = 12, 128
    x = rng.random(blocks * threads)
    out, partial = poisoned(x.size, np.float64), poisoned(blocks, np.float64)
    k_grid_sum[blocks, threads](out, x, partial)
    assert_same(partial, x.reshape(blocks, threads).sum(1), rtol=1e-12)
    assert_same(out, x.reshape(blocks, threads).sum(1).sum() + x, rtol=1e-12)


@gpu.jit
def k_grid_3d(out, x):
    # a 3-D grid of 3-D blocks: step 1 writes, step 2 reads another block's value
    g = gpu.cg.this_grid()
    i, j, k = gpu.grid(3)
    out[i, j, k] = x[i, j, k] * 2
    g.sync()
    ni, nj, nk = out.shape
    x[i, j, k] = out[ni - 1 - i, nj - 1 - j, nk - 1 - k] + 1


def test_grid_sync_3d(rng):
    x = rng.integers(-50, 50, (8, 6, 4)).astype(np.int32)
    orig = x.copy()
    out = poisoned(x.shape, np.int32)
    k_grid_3d[(2, 3, 2), (4, 2, 2)](out, x)
    assert_same(out, orig * 2)
    assert_same(x, (orig * 2)[::-1, ::-1, ::-1] + 1)


@gpu.jit(device=True)
def barrier_then_read(g, a, i):
    g.sync()
    return a[a.size - 1 - i]


@gpu.jit
def k_device_fn(out, a):
    i = gpu.grid(1)
    g = gpu.cg.this_grid()
    a[i] = a[i] + i
    out[i] = barrier_then_read(g, a, i)


def test_grid_sync_in_device_function(rng):
    a = rng.integers(0, 1000, 256).astype(np.int64)
    orig = a.copy()
    out = poisoned(256, np.int64)
    k_device_fn[8, 32](out, a)
    assert_same(out, (orig + np.arange(256))[::-1])


@gpu.jit
def k_warp_after_grid(out, x):
    i = gpu.grid(1)
    g = gpu.cg.this_grid()
    x[i] += 1
    g.sync()
    # a shuffle and a block reduction between grid barriers
    v = gpu.shfl_xor_sync(0xFFFFFFFF, x[x.size - 1 - i], 1)
    c = gpu.syncthreads_count(v % 2)
    g.sync()
    out[i, 0] = v
    out[i, 1] = c


def test_warp_and_block_ops_in_cooperative_launch(rng):
    blocks, threads = 4, 64
    n = blocks * threads
    x = rng.integers(0, 100, n).astype(np.int32)
    after = x + 1
    out = poisoned((n, 2), np.int32)
    k_warp_after_grid[blocks, threads](out, x)
    rev = after[::-1]
    v = rev[np.arange(n) ^ 1]
    assert_same(out[:, 0], v)
    assert_same(out[:, 1], np.repeat((v.reshape(blocks, threads) % 2).sum(1), threads))


@gpu.jit
def k_block_group(out, x):
    sh = gpu.shared.array(64, int32)
    t = gpu.threadIdx.x
    sh[t] = x[gpu.grid(1)]
    gpu.cg.this_thread_block().sync()
    out[gpu.grid(1)] = sh[gpu.blockDim.x - 1 - t]


def test_thread_block_sync(rng):
    x = rng.integers(-1000, 1000, 6 * 64).astype(np.int32)
    out = poisoned(x.size, np.int32)
    k_block_group[6, 64](out, x)
    assert_same(out, x.reshape(6, 64)[:, ::-1].ravel())
    (ov,) = k_block_group.overloads.values()
    assert not ov.cooperative


@gpu.jit
def k_this_grid_only(a):
    gpu.cg.this_grid()
    a[0] = 1.0


@gpu.jit
def k_plain(a):
    a[0] = gpu.grid(1)


def test_cooperative_flag():
    a = np.full(1, np.nan)
    k_this_grid_only[1, 1](a)
    assert a[0] == 1.0
    for sig, ov in k_this_grid_only.overloads.items():
        assert ov.cooperative
        assert k_this_grid_only.overloads[sig] is ov
    k_plain[1, 1](a)
    assert a[0] == 0.0
    assert [ov.cooperative for ov in k_plain.overloads.values()] == [False]


def test_max_cooperative_grid_blocks():
    k = gpu.jit((int32[:, ::1],))(sequential_rows)
    ov = k.overloads[(int32[:, ::1],)]
    if ON_GPU:  # the occupancy limit: blocks per SM times SMs
        assert ov.max_cooperative_grid_blocks(256) > 0
        assert ov.max_cooperative_grid_blocks(32) >= ov.max_cooperative_grid_blocks(256)
    else:  # every thread a fiber, resident at once
        assert ov.max_cooperative_grid_blocks(256) == CPU_MAX_COOP_THREADS // 256
        assert ov.max_cooperative_grid_blocks(1) == CPU_MAX_COOP_THREADS
    assert ov.max_cooperative_grid_blocks((16, 16)) == ov.max_cooperative_grid_blocks(256)
    assert ov.max_cooperative_grid_blocks((16, 4, 4)) == ov.max_cooperative_grid_blocks(256)
    for bad in (0, -3, (4, 0), (1, 2, 3, 4), 2.5):
        with pytest.raises(ValueError):
            ov.max_cooperative_grid_blocks(bad)
    with pytest.raises(KeyError):
        k.overloads[(gpu.float32[:, ::1],)]


def test_too_large_cooperative_grid_raises():
    k = gpu.jit((int32[:, ::1],))(sequential_rows)
    mb = k.overloads[(int32[:, ::1],)].max_cooperative_grid_blocks(64)
    M = np.zeros((2, (mb + 1) * 64), np.int32)
    # as the driver: CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE
    with pytest.raises(gpu.CudaError if ON_GPU else gpu.LaunchError, match="(?i)cooperative.launch.too.large"):
        k[mb + 1, 64](M)
    M = np.zeros((3, mb * 64), np.int32)
    k[mb, 64](M)  # the limit itself launches
    assert (M[1] == 1).all() and (M[2] == 3 * 1 + 2).all()


@gpu.jit
def k_block_skips_grid_sync(a):
    if gpu.blockIdx.x != 1:
        gpu.cg.this_grid().sync()
    a[gpu.grid(1)] = 1


@gpu.jit
def k_leader_skips_grid_sync(a):
    g = gpu.cg.this_grid()
    if gpu.threadIdx.x == 0:
        return
    g.sync()
    a[gpu.grid(1)] = 1


@gpu.jit
def k_mixed_barriers(a):
    g = gpu.cg.this_grid()
    if gpu.threadIdx.x < 16:
        g.sync()
    else:
        gpu.syncthreads()
    a[gpu.grid(1)] = 1


@pytest.mark.skipif(ON_GPU, reason="a real GPU hangs here (as CUDA C would); the CPU backend detects it")
@pytest.mark.parametrize("kernel,msg", [
    (k_block_skips_grid_sync, "a block returned while other blocks wait at grid.sync"),
    (k_leader_skips_grid_sync, "thread 0 of a block returned"),
    (k_mixed_barriers, "others at syncthreads"),
])
def test_grid_barrier_deadlock_is_an_error(kernel, msg):
    a = np.zeros(4 * 32, np.int32)
    with pytest.raises(gpu.LaunchError, match=msg):
        kernel[4, 32](a)
    # the executor is usable afterwards
    b = poisoned(4, np.float64)
    k_heat[1, 4](np.zeros(4), b, 2, 0.5)
    assert (b == 0).all()


def test_all_blocks_return_without_sync_is_fine():
    @gpu.jit
    def k(a):
        g = gpu.cg.this_grid()
        if a.size < 0:
            g.sync()
        a[gpu.grid(1)] = gpu.blockIdx.x

    a = poisoned(4 * 8, np.int32)
    k[4, 8](a)
    assert_same(a, np.repeat(np.arange(4, dtype=np.int32), 8))


def test_cg_outside_kernel_raises():
    with pytest.raises(RuntimeError, match="inside a @gpujit.jit kernel"):
        gpu.cg.this_grid()
    with pytest.raises(RuntimeError, match="inside a @gpujit.jit kernel"):
        gpu.cg.this_thread_block()


def test_cg_misuse_is_a_typing_error():
    def bad_args(a):
        gpu.cg.this_grid(1)

    def bad_attr(a):
        gpu.cg.this_grid().size()

    with pytest.raises(gpu.TypingError, match="takes no arguments"):
        gpu.compile_ptx(bad_args, "void(int32[::1])")
    with pytest.raises(gpu.UnsupportedError):
        gpu.compile_ptx(bad_attr, "void(int32[::1])")


def test_ptx_grid_barrier():
    ptx, _ = gpu.compile_ptx(sequential_rows, (int32[:, ::1],))
    assert ".visible .global .align 8 .u64 gpujit_grid_sync;" in ptx
    assert "atom.global.add.u64" in ptx
    assert ptx.count("membar.gl") >= 2
    assert ptx.count("bar.sync") >= 2
    assert "ld.volatile.global.u64" in ptx


def test_ptx_grid_barrier_kept_with_libdevice():
    def k(a):
        g = gpu.cg.this_grid()
        a[0] = np.float64(np.sin(a[1]))
        g.sync()

    import numpy  # noqa: F401  (np.sin in the kernel)
    ptx, _ = gpu.compile_ptx(k, "void(float64[::1])")
    assert ".visible .global .align 8 .u64 gpujit_grid_sync;" in ptx


def test_typing_signature_is_numbas():
    from gpujit.typing import signature
    s = signature(gpu.types.CPointer(int32))
    assert str(s) == str(gpu.types.signature(gpu.types.CPointer(int32)))
