"""Thread indexing, shared and local memory, barriers and atomics: the CUDA
parts of the language, run on the CPU backend (which must honour
syncthreads and atomics across the threads of a block)."""
import numpy as np
import pytest

import gpujit as gpu
from conftest import assert_same, poisoned

TILE = 16


@gpu.jit
def k_thread_ids(out):
    tx, ty, tz = gpu.threadIdx.x, gpu.threadIdx.y, gpu.threadIdx.z
    bx, by, bz = gpu.blockIdx.x, gpu.blockIdx.y, gpu.blockIdx.z
    x = bx * gpu.blockDim.x + tx
    y = by * gpu.blockDim.y + ty
    z = bz * gpu.blockDim.z + tz
    gx, gy, gz = gpu.grid(3)
    sx, sy, sz = gpu.gridsize(3)
    if x < out.shape[0] and y < out.shape[1] and z < out.shape[2]:
        out[x, y, z, 0] = tx + 10 * ty + 100 * tz
        out[x, y, z, 1] = bx + 10 * by + 100 * bz
        out[x, y, z, 2] = gpu.blockDim.x + 10 * gpu.blockDim.y + 100 * gpu.blockDim.z
        out[x, y, z, 3] = gpu.gridDim.x + 10 * gpu.gridDim.y + 100 * gpu.gridDim.z
        out[x, y, z, 4] = (gx == x) + 2 * (gy == y) + 4 * (gz == z)
        out[x, y, z, 5] = sx + 1000 * sy + 1000000 * sz


def test_thread_block_grid_indices():
    block, grid = (4, 3, 2), (3, 2, 5)
    shape = (block[0] * grid[0] - 1, block[1] * grid[1], block[2] * grid[2] - 3)
    out = poisoned(shape + (6,), np.int64)
    k_thread_ids[grid, block](out)
    x, y, z = np.indices(shape)
    assert_same(out[..., 0], x % 4 + 10 * (y % 3) + 100 * (z % 2))
    assert_same(out[..., 1], x // 4 + 10 * (y // 3) + 100 * (z // 2))
    assert (out[..., 2] == 4 + 30 + 200).all()
    assert (out[..., 3] == 3 + 20 + 500).all()
    assert (out[..., 4] == 7).all()
    assert (out[..., 5] == 12 + 1000 * 6 + 1000000 * 10).all()


@gpu.jit
def k_grid1(out, size):
    i = gpu.grid(1)
    n = gpu.gridsize(1)
    if i < out.shape[0]:
        out[i, 0] = i
        out[i, 1] = n
        out[i, 2] = gpu.laneid
        out[i, 3] = gpu.warpsize
        out[i, 4] = size


def test_grid1_gridsize1_laneid_warpsize():
    out = poisoned((300, 5), np.int64)
    k_grid1[5, 64](out, 300)
    idx = np.arange(300)
    assert_same(out[:, 0], idx)
    assert (out[:, 1] == 320).all()
    assert_same(out[:, 2], idx % 64 % 32)
    assert (out[:, 3] == 32).all()


@gpu.jit
def k_grid2_stride(out):
    x, y = gpu.grid(2)
    sx, sy = gpu.gridsize(2)
    for i in range(x, out.shape[0], sx):   # grid-stride loops
        for j in range(y, out.shape[1], sy):
            out[i, j] = i * 1000 + j


def test_grid_stride_loop_2d():
    out = poisoned((50, 70), np.int64)
    k_grid2_stride[(2, 3), (4, 8)](out)
    i, j = np.indices(out.shape)
    assert_same(out, i * 1000 + j)


@gpu.jit
def k_index_types(out):
    out[0] = gpu.threadIdx.x
    i = gpu.grid(1)
    t = gpu.threadIdx.x


def test_index_types():
    text = k_index_types.inspect_types_text("void(int64[::1])")
    types = dict(line.split()[-2:] for line in text.splitlines() if line.strip().startswith("line"))
    assert types["i"] == "int64"
    assert types["t"] == "int32"


# -- shared memory -------------------------------------------------------------------------------
@gpu.jit
def matmul_shared(C, A, B):
    sA = gpu.shared.array(shape=(TILE, TILE), dtype=gpu.float32)
    sB = gpu.shared.array(shape=(TILE, TILE), dtype=gpu.float32)
    x, y = gpu.grid(2)
    tx = gpu.threadIdx.x
    ty = gpu.threadIdx.y
    bpg = gpu.gridDim.x
    tmp = gpu.float32(0.0)
    for i in range(bpg):
        sA[tx, ty] = 0
        sB[tx, ty] = 0
        if x < A.shape[0] and (ty + i * TILE) < A.shape[1]:
            sA[tx, ty] = A[x, ty + i * TILE]
        if y < B.shape[1] and (tx + i * TILE) < B.shape[0]:
            sB[tx, ty] = B[tx + i * TILE, y]
        gpu.syncthreads()
        for j in range(TILE):
            tmp += sA[tx, j] * sB[j, ty]
        gpu.syncthreads()
    if x < C.shape[0] and y < C.shape[1]:
        C[x, y] = tmp


def test_tiled_matmul_16x16(rng):
    n = 16 * 5 - 3  # not a multiple of the tile: exercises the guards
    A = rng.standard_normal((n, n)).astype(np.float32)
    B = rng.standard_normal((n, n)).astype(np.float32)
    C = poisoned((n, n), np.float32)
    blocks = (n + TILE - 1) // TILE
    matmul_shared[(blocks, blocks), (TILE, TILE)](C, A, B)
    want = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_allclose(C, want, rtol=1e-4, atol=1e-4)


def test_tiled_matmul_ptx_uses_shared_and_barrier():
    ptx = matmul_shared.inspect_ptx("void(float32[:, ::1], float32[:, ::1], float32[:, ::1])")
    assert ".shared" in ptx and "bar.sync" in ptx


@gpu.jit
def block_reduce(total, a):
    buf = gpu.shared.array(128, gpu.int64)
    tid = gpu.threadIdx.x
    i = gpu.grid(1)
    buf[tid] = a[i] if i < a.size else 0
    gpu.syncthreads()
    s = 64
    while s > 0:
        if tid < s:
            buf[tid] += buf[tid + s]
        gpu.syncthreads()
        s //= 2
    if tid == 0:
        gpu.atomic.add(total, 0, buf[0])


def test_block_reduction_with_atomic_add_exact(rng):
    n = int(rng.integers(10000, 20000))
    a = rng.integers(-2**40, 2**40, n)
    total = np.zeros(1, np.int64)
    block_reduce[(n + 127) // 128, 128](total, a)
    assert int(total[0]) == sum(int(v) for v in a)


@gpu.jit
def k_shared_int32_reduce(total, a):
    buf = gpu.shared.array(shape=128, dtype=np.int32)
    tid = gpu.threadIdx.x
    i = gpu.grid(1)
    buf[tid] = 0
    if i < a.size:
        buf[tid] = a[i]
    gpu.syncthreads()
    s = gpu.blockDim.x // 2
    while s > 0:
        if tid < s:
            buf[tid] = buf[tid] + buf[tid + s]
        gpu.syncthreads()
        s >>= 1
    if tid == 0:
        gpu.atomic.add(total, 0, buf[0])


def test_block_reduction_int32(rng):
    a = rng.integers(-1000, 1000, 5000).astype(np.int32)
    total = np.zeros(1, np.int32)
    k_shared_int32_reduce[(5000 + 127) // 128, 128](total, a)
    assert int(total[0]) == int(a.astype(np.int64).sum())


@gpu.jit
def k_shared_reverse(out, a):
    s = gpu.shared.array(64, gpu.float64)
    t = gpu.threadIdx.x
    i = gpu.grid(1)
    s[t] = a[i]
    gpu.syncthreads()
    out[i] = s[63 - t]


def test_shared_block_reverse(rng):
    a = rng.standard_normal(64 * 7)
    out = poisoned(a.size, np.float64)
    k_shared_reverse[7, 64](out, a)
    assert_same(out, a.reshape(7, 64)[:, ::-1].ravel())


@gpu.jit
def k_shared_3d(out):
    s = gpu.shared.array((2, 3, 4), gpu.int16)
    t = gpu.threadIdx.x
    if t < 24:
        s[t // 12, (t // 4) % 3, t % 4] = t * 3
    gpu.syncthreads()
    if t == 0:
        for i in range(2):
            for j in range(3):
                for k in range(4):
                    out[i, j, k] = s[i, j, k] + s.shape[0] * 1000 + s.size * 10000


def test_shared_3d():
    out = poisoned((2, 3, 4), np.int64)
    k_shared_3d[1, 32](out)
    assert_same(out, np.arange(24).reshape(2, 3, 4) * 3 + 2000 + 240000)


# -- local memory ------------------------------------------------------------------------------------
@gpu.jit
def k_local_sort(out, a):
    i = gpu.grid(1)
    if i < a.shape[0]:
        buf = gpu.local.array(8, gpu.int32)
        for k in range(8):
            buf[k] = a[i, k]
        for k in range(1, 8):  # insertion sort
            v = buf[k]
            j = k - 1
            while j >= 0 and buf[j] > v:
                buf[j + 1] = buf[j]
                j -= 1
            buf[j + 1] = v
        for k in range(8):
            out[i, k] = buf[k]


def test_local_array_sort(rng):
    a = rng.integers(-100, 100, (200, 8)).astype(np.int32)
    out = poisoned(a.shape, np.int32)
    k_local_sort[4, 64](out, a)
    assert_same(out, np.sort(a, axis=1))


@gpu.jit
def k_local_2d(out):
    i = gpu.grid(1)
    if i < out.size:
        m = gpu.local.array((3, 3), dtype=gpu.float64)
        for r in range(3):
            for c in range(3):
                m[r, c] = i * r + c
        out[i] = m[2, 2] + m[1, 0] - m[-1, -3]


def test_local_array_2d():
    out = poisoned(100, np.float64)
    k_local_2d[2, 64](out)
    i = np.arange(100)
    assert_same(out, (2 * i + 2) + i - 2 * i)


# -- atomics ---------------------------------------------------------------------------------------
@gpu.jit
def k_histogram(hist, a):
    i = gpu.grid(1)
    if i < a.size:
        gpu.atomic.add(hist, a[i], 1)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_atomic_add_histogram(rng, dtype):
    a = rng.integers(0, 17, 20000)
    hist = np.zeros(17, dtype)
    k_histogram[(20000 + 255) // 256, 256](hist, a)
    assert_same(hist, np.bincount(a, minlength=17).astype(dtype))


@gpu.jit
def k_atomic_old(olds, counter):
    i = gpu.grid(1)
    if i < olds.size:
        olds[i] = gpu.atomic.add(counter, 0, 1)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_atomic_add_returns_old_value(dtype):
    n = 1000
    olds = poisoned(n, dtype)
    counter = np.zeros(1, dtype)
    k_atomic_old[(n + 127) // 128, 128](olds, counter)
    assert counter[0] == n
    assert sorted(olds.tolist()) == list(range(n))  # every old value seen exactly once


@gpu.jit
def k_atomic_2d(out, a):
    i, j = gpu.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        gpu.atomic.add(out, (i % 2, j % 3), a[i, j])


def test_atomic_add_2d_tuple_index(rng):
    a = rng.integers(-1000, 1000, (30, 40)).astype(np.int64)
    out = np.zeros((2, 3), np.int64)
    k_atomic_2d[(4, 5), (8, 8)](out, a)
    want = np.zeros((2, 3), np.int64)
    for i in range(30):
        for j in range(40):
            want[i % 2, j % 3] += a[i, j]
    assert_same(out, want)


@gpu.jit
def k_atomic_float_sum(total, a):
    i = gpu.grid(1)
    if i < a.size:
        gpu.atomic.add(total, 0, a[i])


def test_atomic_add_float64_sum(rng):
    a = rng.integers(-1000, 1000, 4096).astype(np.float64) / 8  # exactly summable
    total = np.zeros(1)
    k_atomic_float_sum[16, 256](total, a)
    assert total[0] == a.sum()


@gpu.jit
def k_syncthreads_phases(out):
    s = gpu.shared.array(256, gpu.int32)
    t = gpu.threadIdx.x
    s[t] = t
    for phase in range(5):
        gpu.syncthreads()
        v = s[(t + 1) % 256]
        gpu.syncthreads()
        s[t] = v
    gpu.syncthreads()
    out[gpu.blockIdx.x, t] = s[t]


def test_syncthreads_in_loop():
    out = poisoned((3, 256), np.int32)
    k_syncthreads_phases[3, 256](out)
    assert_same(out, np.tile((np.arange(256) + 5) % 256, (3, 1)).astype(np.int32))


def test_selp_selects_without_branch(rng):
    @gpu.jit("void(int64[::1], float64[::1], int64[::1], float64[::1])")
    def k(out, fout, x, y):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = gpu.selp(x[i] % 3 == 0, x[i], 13)
            fout[i] = gpu.selp(y[i], y[i] * 2.0, -1.0)
    x = rng.integers(-100, 100, 300)
    y = rng.uniform(-1, 1, 300)
    y[::7] = 0
    out, fout = poisoned(300, np.int64), poisoned(300, np.float64)
    k[5, 64](out, fout, x, y)
    np.testing.assert_array_equal(out, np.where(x % 3 == 0, x, 13))
    np.testing.assert_array_equal(fout, np.where(y != 0, y * 2.0, -1.0))
    ptx = k.inspect_ptx("void(int64[::1], float64[::1], int64[::1], float64[::1])")
    assert ptx.count("selp.") >= 2

    def bad(out):
        out[0] = gpu.selp(True, out, 1)
    with pytest.raises(gpu.TypingError, match=r"selp\(predicate, a, b\)"):
        gpu.jit("void(int64[::1])")(bad)


def test_lto_accepted_and_lto_ptx_is_the_ptx():
    def k(out, a):
        out[0] = -a
    kern = gpu.jit("void(f2[:], f2)", lto=True)(k)
    ptx = kern.inspect_lto_ptx((gpu.f2[:], gpu.f2))
    assert "neg.f16" in ptx and ptx == kern.inspect_ptx("void(f2[:], f2)")
    from gpujit.typing import signature
    assert signature(gpu.void, gpu.f2[:], gpu.f2) == gpu.void(gpu.f2[:], gpu.f2)
