"""Barrier kernels as loops over the threads between barriers on the CPU
target (docs/cpu-backend.md, "Threads of a block"): a kernel whose only
block-wide operation is syncthreads() in its own body runs each stretch of
code between two barriers as one loop over the block's threads. Results
(threads that returned take no part in later barriers), bounds checks and the per-thread values kept
across barriers must be as under the other schemes; each kernel here checks
that it really got this scheme (the compiled module names it)."""
import re

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


def scheme(kernel):
    """The scheme the CPU target ran the kernel's (last compiled) threads under."""
    ir = kernel.inspect_llvm(list(kernel.inspect_llvm())[-1])  # the current (cpu) target's
    m = re.search(r'!gpujit\.cpu_threads = !\{(![0-9]+)\}', ir)
    return re.search(re.escape(m.group(1)) + r' = !\{!"([a-z-]+)"\}', ir).group(1)


@gpu.jit
def tree_sum(x, out):
    # a barrier in a loop whose bound every thread shares (s), a divergent if inside
    sh = gpu.shared.array(256, gpu.float64)
    tid = gpu.threadIdx.x
    i = gpu.grid(1)
    sh[tid] = x[i] if i < x.size else 0.0
    gpu.syncthreads()
    s = gpu.blockDim.x // 2
    while s > 0:
        if tid < s:
            sh[tid] += sh[tid + s]
        gpu.syncthreads()
        s //= 2
    if tid == 0:
        out[gpu.blockIdx.x] = sh[0]


def test_a_uniform_loop_ends_every_thread_alike(rng):
    # tree_sum's last round leaves the loop for the return in every thread at once (s is
    # the same for all): no thread can part from the others, so the kernel has no slower
    # loop for threads that did, which would keep its values per thread
    x = rng.standard_normal(1000)
    out = poisoned(4, np.float64)
    tree_sum[4, 256](x, out)
    np.testing.assert_allclose(out, np.concatenate([x, np.zeros(24)]).reshape(4, 256).sum(axis=1), rtol=1e-12)
    assert scheme(tree_sum) == "regions" and not divergent_region(tree_sum)


@pytest.mark.parametrize("tpb", [1, 2, 8, 64, 128, 256])
@pytest.mark.parametrize("boundscheck", [True, False])
def test_barriers_in_a_loop(rng, tpb, boundscheck):
    k = gpu.jit(tree_sum.py_func, boundscheck=boundscheck)
    n = int(rng.integers(1, 5000))
    x = rng.random(n)
    nb = (n + tpb - 1) // tpb
    out = poisoned(nb, np.float64)
    k[nb, tpb](x, out)
    ref = np.add.reduceat(np.concatenate([x, np.zeros(nb * tpb - n)]), np.arange(0, nb * tpb, tpb))
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    assert scheme(k) == "regions"


@gpu.jit
def smooth(a, out, steps):
    # a per-thread value carried around a loop with two barriers; shared memory reused every step
    sh = gpu.shared.array(130, gpu.float32)
    t = gpu.threadIdx.x
    n = gpu.blockDim.x
    v = a[gpu.grid(1)]
    acc = gpu.float32(0.0)
    for k in range(steps):
        sh[t + 1] = v
        if t == 0:
            sh[0] = v
        if t == n - 1:
            sh[n + 1] = v
        gpu.syncthreads()
        v = (sh[t] + sh[t + 1] + sh[t + 2]) / gpu.float32(3.0)
        acc += v * (k + 1)
        gpu.syncthreads()
    out[gpu.grid(1)] = acc


def smooth_ref(a, tpb, steps):
    out = np.empty_like(a)
    for b in range(a.size // tpb):
        v = a[b * tpb:(b + 1) * tpb].copy()
        acc = np.zeros(tpb, np.float32)
        for k in range(steps):
            p = np.concatenate([v[:1], v, v[-1:]])
            v = ((p[:-2] + p[1:-1]) + p[2:]) / np.float32(3.0)
            acc += v * np.float32(k + 1)
        out[b * tpb:(b + 1) * tpb] = acc
    return out


@pytest.mark.parametrize("tpb", [1, 5, 32, 128])
def test_values_across_barriers_in_a_loop(rng, tpb):
    steps = int(rng.integers(0, 6))
    a = rng.random(tpb * 3, dtype=np.float32)
    out = poisoned(a.size, np.float32)
    smooth[3, tpb](a, out, steps)
    np.testing.assert_allclose(out, smooth_ref(a, tpb, steps), rtol=1e-5)
    assert scheme(smooth) == "regions"


@gpu.jit
def branchy(x, out, flip):
    # barriers in both arms of an if whose condition every thread shares
    sh = gpu.shared.array(64, gpu.int64)
    t = gpu.threadIdx.x
    if flip:
        sh[t] = x[t] * 2
        gpu.syncthreads()
        out[t] = sh[63 - t]
    else:
        sh[t] = x[t] + 1
        gpu.syncthreads()
        out[t] = sh[(t + 1) % 64]


@gpu.jit
def two_sites(out, x):
    # threads wait at two different syncthreads() calls: one barrier, as bar.sync 0
    sh = gpu.shared.array(64, gpu.int64)
    t = gpu.threadIdx.x
    sh[t] = x[t]
    if t % 3 == 0:
        gpu.syncthreads()
        v = sh[63 - t] * 10
    else:
        gpu.syncthreads()
        v = sh[63 - t] - 1
    gpu.syncthreads()
    sh[t] = v
    gpu.syncthreads()
    out[t] = sh[(t + 5) % 64]


def test_barriers_in_if_else(rng):
    x = rng.integers(-1000, 1000, 64)
    for flip in (True, False):
        out = poisoned(64, np.int64)
        branchy[1, 64](x, out, flip)
        np.testing.assert_array_equal(out, x[::-1] * 2 if flip else np.roll(x + 1, -1))
    assert scheme(branchy) == "regions"
    out = poisoned(64, np.int64)
    two_sites[1, 64](out, x)
    t = np.arange(64)
    v = np.where(t % 3 == 0, x[63 - t] * 10, x[63 - t] - 1)
    np.testing.assert_array_equal(out, v[(t + 5) % 64])
    assert scheme(two_sites) == "regions"


@gpu.jit
def early_return(out):
    t = gpu.threadIdx.x
    if t >= 10:
        return
    gpu.syncthreads()
    out[t] = 1


@gpu.jit
def uneven_loop(out, trips):
    t = gpu.threadIdx.x
    n = trips - 1 if t == 5 else trips
    for k in range(n):
        gpu.syncthreads()
    out[t] = n


@gpu.jit
def split_then_return(out):
    # two barrier sites reached together, then some threads return while others wait
    t = gpu.threadIdx.x
    if t % 2 == 0:
        gpu.syncthreads()
    else:
        gpu.syncthreads()
    if t < 3:
        return
    gpu.syncthreads()
    out[t] = 2


def divergent_region(kernel):
    """Whether the kernel's loops over threads have the slower loop for threads that part."""
    return "!gpujit.cpu_divergent_region" in kernel.inspect_llvm(list(kernel.inspect_llvm())[-1])


def test_returned_threads_take_no_part_in_later_barriers():
    t = np.arange(32)
    for kernel, args, want in ((early_return, (), np.where(t < 10, 1, -1)),
                               (uneven_loop, (3,), np.where(t == 5, 2, 3)),
                               (split_then_return, (), np.where(t < 3, -1, 2))):
        out = np.full((2, 32), -1, np.int64)
        for b in range(2):
            kernel[1, 32](out[b], *args)
        np.testing.assert_array_equal(out, [want, want])
        assert scheme(kernel) == "regions" and divergent_region(kernel)
    out = poisoned(7, np.int64)
    uneven_loop[1, 5](out, 4)  # thread 5 does not exist
    assert (out[:5] == 4).all()


@gpu.jit
def local_across(x, out):
    # a local array filled before the barriers, read after them
    a = gpu.local.array(8, gpu.float32)
    sh = gpu.shared.array(32, gpu.float32)
    t = gpu.threadIdx.x
    for j in range(8):
        a[j] = x[t] * (j + 1)
    sh[t] = a[t % 8]
    gpu.syncthreads()
    s = gpu.float32(0.0)
    for j in range(8):
        s += a[j]
    gpu.syncthreads()
    out[t] = s + sh[31 - t]


def test_local_arrays_across_barriers(rng):
    x = rng.random(32, dtype=np.float32)
    out = poisoned(32, np.float32)
    local_across[1, 32](x, out)
    t = np.arange(32)
    ref = x * np.float32(36) + x[31 - t] * ((31 - t) % 8 + 1).astype(np.float32)
    np.testing.assert_allclose(out, ref, rtol=1e-5)
    assert scheme(local_across) == "regions"


@gpu.jit
def rotate_3d(a, out):
    # 3-D blocks: the linear thread id orders threads x fastest
    sh = gpu.shared.array(240, gpu.int32)
    tx, ty, tz = gpu.threadIdx.x, gpu.threadIdx.y, gpu.threadIdx.z
    nx, ny, nz = gpu.blockDim.x, gpu.blockDim.y, gpu.blockDim.z
    lin = tx + nx * (ty + ny * tz)
    base = gpu.blockIdx.x * nx * ny * nz
    sh[lin] = a[base + lin] + tz * 1000
    gpu.syncthreads()
    out[base + lin] = sh[nx * ny * nz - 1 - lin]


@pytest.mark.parametrize("block", [(4, 3, 5), (1, 1, 7), (16, 2, 1), (3, 1, 2)])
def test_3d_blocks(rng, block):
    nt = block[0] * block[1] * block[2]
    a = rng.integers(0, 1000, nt * 4).astype(np.int32)
    out = poisoned(a.size, np.int32)
    rotate_3d[4, block](a, out)
    lin = np.arange(nt)
    tz = lin // (block[0] * block[1])
    for b in range(4):
        v = a[b * nt:(b + 1) * nt] + tz * 1000
        np.testing.assert_array_equal(out[b * nt:(b + 1) * nt], v[::-1])
    assert scheme(rotate_3d) == "regions"


@gpu.jit
def oob_in_region(out, x, k):
    sh = gpu.shared.array(32, gpu.float32)
    t = gpu.threadIdx.x
    sh[t] = x[t]
    gpu.syncthreads()
    for j in range(3):
        out[t * 3 + j + k] = sh[31 - t] + j
    gpu.syncthreads()


def test_index_error_inside_a_region(rng):
    x = rng.random(32, dtype=np.float32)
    out = np.zeros(96, np.float32)
    with pytest.raises(IndexError, match=r"index 96 is out of bounds for axis 0 with size 96 .*oob_in_region"):
        oob_in_region[1, 32](out, x, 1)
    out = poisoned(96, np.float32)
    oob_in_region[1, 32](out, x, 0)
    np.testing.assert_allclose(out, (x[::-1][:, None] + np.arange(3, dtype=np.float32)).ravel())
    assert scheme(oob_in_region) == "regions"


@gpu.jit
def print_phases(n):
    t = gpu.threadIdx.x
    print(t, 0)
    gpu.syncthreads()
    print(t, n)


def test_printing_follows_the_barriers(capfd):
    print_phases[1, 3](7)
    out = [line for line in capfd.readouterr().out.split("\n") if line]
    assert out == ["0 0", "1 0", "2 0", "0 7", "1 7", "2 7"]
    assert scheme(print_phases) == "regions"


@gpu.jit
def count_barrier(out):
    t = gpu.threadIdx.x
    out[t] = gpu.syncthreads_count(t % 3 == 0)


@gpu.jit
def warp_and_barrier(out):
    t = gpu.threadIdx.x
    gpu.syncthreads()
    out[t] = gpu.shfl_down_sync(0xFFFFFFFF, t, 1)


@gpu.jit
def big_local(out, idx):
    a = gpu.local.array(5000, gpu.float32)
    t = gpu.threadIdx.x
    for i in range(5000):
        a[i] = i + t
    gpu.syncthreads()
    out[t] = a[idx[t]]


def test_what_does_not_fit_runs_as_before():
    out = poisoned(32, np.int32)
    count_barrier[1, 32](out)
    assert (out == 11).all() and scheme(count_barrier) == "fibers"
    out = poisoned(32, np.int32)
    warp_and_barrier[1, 32](out)
    assert (out[:31] == np.arange(1, 32)).all() and scheme(warp_and_barrier) == "fibers"
    idx = np.arange(32, dtype=np.int64) * 100
    out = poisoned(32, np.float32)
    big_local[1, 32](out, idx)  # 20 KB a thread: over the regions' limit
    np.testing.assert_array_equal(out, idx + np.arange(32))
    assert scheme(big_local) == "fibers"


@gpu.jit
def tiles(A, B, C):
    sA = gpu.shared.array((8, 8), gpu.float64)
    sB = gpu.shared.array((8, 8), gpu.float64)
    x, y = gpu.grid(2)
    tx, ty = gpu.threadIdx.x, gpu.threadIdx.y
    acc = 0.0
    for i in range((A.shape[1] + 7) // 8):
        sA[ty, tx] = A[y, tx + i * 8] if y < A.shape[0] and tx + i * 8 < A.shape[1] else 0.0
        sB[ty, tx] = B[ty + i * 8, x] if x < B.shape[1] and ty + i * 8 < B.shape[0] else 0.0
        gpu.syncthreads()
        for j in range(8):
            acc += sA[ty, j] * sB[j, tx]
        gpu.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = acc


def test_tiled_matmul(rng):
    m, k, n = (int(v) for v in rng.integers(1, 40, 3))
    A, B = rng.random((m, k)), rng.random((k, n))
    C = poisoned((m, n), np.float64)
    tiles[((n + 7) // 8, (m + 7) // 8), (8, 8)](A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-12)
    assert scheme(tiles) == "regions"


@gpu.jit(device=True)
def scratch_sum(v, k):
    # a local array of a device function: one per call, even inlined into a loop over threads
    a = gpu.local.array(4, gpu.float32)
    for j in range(4):
        a[j] = v * (j + 1)
    return a[k % 4] + a[(k + 1) % 4]


@gpu.jit
def calls_device(x, out, k):
    sh = gpu.shared.array(64, gpu.float32)
    t = gpu.threadIdx.x
    sh[t] = x[t]
    gpu.syncthreads()
    out[t] = scratch_sum(sh[63 - t], t + k)


@pytest.mark.parametrize("boundscheck", [True, False])
def test_device_function_locals_per_thread(rng, boundscheck):
    k = gpu.jit(calls_device.py_func, boundscheck=boundscheck)
    x = rng.random(64, dtype=np.float32)
    out = poisoned(64, np.float32)
    shift = int(rng.integers(0, 4))
    k[1, 64](x, out, shift)
    t = np.arange(64)
    v = x[63 - t]
    ref = v * ((t + shift) % 4 + 1).astype(np.float32) + v * ((t + shift + 1) % 4 + 1).astype(np.float32)
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    assert scheme(k) == "regions"


@gpu.jit
def gather_2d(out, idx, x):
    # several threads index out of bounds in one region: the first in linear order is reported
    sh = gpu.shared.array(64, gpu.float32)
    t = gpu.threadIdx.x + gpu.blockDim.x * gpu.threadIdx.y
    sh[t] = x[t]
    gpu.syncthreads()
    v = sh[63 - t]
    out[idx[t]] = v


def test_first_failing_thread_is_reported(rng):
    x = rng.random(64, dtype=np.float32)
    idx = rng.permutation(64).astype(np.int64)
    bad = np.sort(rng.choice(np.arange(1, 64), 3, replace=False))
    idx[bad] = 64 + bad  # out of range, each a different index
    out = np.zeros(64, np.float32)
    with pytest.raises(IndexError, match=r"index %d is out of bounds for axis 0 with size 64" % (64 + bad[0])):
        gather_2d[1, (8, 8)](out, idx, x)
    idx[bad] = bad
    out = poisoned(64, np.float32)
    good = rng.permutation(64).astype(np.int64)
    gather_2d[1, (8, 8)](out, good, x)
    ref = np.empty(64, np.float32)
    ref[good] = x[::-1]
    np.testing.assert_array_equal(out, ref)
    assert scheme(gather_2d) == "regions"


@gpu.jit
def mixed_state(out, limit, stop):
    # values kept across barriers in the ways a kernel keeps them: updated by some threads
    # only (u), alike by all (k, w), from shared memory (the while condition), with a break
    sh = gpu.shared.array(1, gpu.int64)
    t = gpu.threadIdx.x
    if t == 0:
        sh[0] = 0
    u = t
    w = limit * 2
    gpu.syncthreads()
    while sh[0] < limit:
        gpu.syncthreads()
        if t % 3 == 1:
            u += 5
        w -= 1
        gpu.syncthreads()
        if t == 0:
            sh[0] += 1
        gpu.syncthreads()
    k = 0
    for k in range(10):
        gpu.syncthreads()
        u += k
        if k == stop:
            break
    out[t] = u * 1000 + w * 10 + k


def test_values_of_every_kind_across_barriers(rng):
    nt = int(rng.integers(1, 100))
    limit, stop = int(rng.integers(0, 6)), int(rng.integers(0, 12))
    out = poisoned(nt, np.int64)
    mixed_state[1, nt](out, limit, stop)
    t = np.arange(nt)
    u = t + np.where(t % 3 == 1, 5 * limit, 0)
    last = min(stop, 9)
    u = u + sum(range(last + 1))
    w = 2 * limit - limit
    np.testing.assert_array_equal(out, u * 1000 + w * 10 + last)
    assert scheme(mixed_state) == "regions"
