"""activemask() in divergent code: the mask names exactly the lanes of the warp
that execute that point together -- on the CPU target, where a warp's lanes
run one after another, as on a GPU. Each kernel's masks are compared with the
masks computed here in Python from the same conditions (per warp of 32
consecutive threads; a partial last warp has fewer lanes)."""
import numpy as np
import pytest

import gpujit as gpu
from conftest import assert_same, poisoned

SENTINEL = -1


def masks(cond, nthreads):
    """cond: bool array [nthreads] (a lane runs the point) -> the mask each such lane
    should see (SENTINEL for the others)."""
    out = np.full(nthreads, SENTINEL, np.int64)
    for w in range(0, nthreads, 32):
        c = cond[w:w + 32]
        m = int(sum(1 << l for l in range(len(c)) if c[l]))
        out[w:w + 32][c] = m
    return out


def launch(kernel, nthreads, *args, block=None):
    block = block or nthreads
    kernel[(nthreads + block - 1) // block, block](*args)


@gpu.jit
def k_even_odd(out):
    i = gpu.grid(1)
    if i % 2 == 0:
        out[i, 0] = gpu.activemask()
    else:
        out[i, 1] = gpu.activemask()
    out[i, 2] = gpu.activemask()  # after the if: the lanes are together again


@pytest.mark.parametrize("nthreads", [64, 45])
def test_even_odd_both_branches(nthreads):
    out = np.full((nthreads, 3), SENTINEL, np.int64)
    launch(k_even_odd, nthreads, out)
    t = np.arange(nthreads)
    assert_same(out[:, 0], masks(t % 2 == 0, nthreads))
    assert_same(out[:, 1], masks(t % 2 == 1, nthreads))
    assert_same(out[:, 2], masks(np.ones(nthreads, bool), nthreads))
    if nthreads == 64:
        assert out[0, 0] == 0x55555555 and out[1, 1] == 0xAAAAAAAA and out[0, 2] == 0xFFFFFFFF


@gpu.jit
def k_first_k(out, k):
    i = gpu.grid(1)
    if gpu.laneid < k[i // 32]:
        out[i] = gpu.activemask()


def test_first_k_lanes(rng):
    n = 128
    k = rng.integers(0, 33, n // 32)
    k[0] = 1
    out = np.full(n, SENTINEL, np.int64)
    launch(k_first_k, n, out, k, block=64)
    lane = np.arange(n) % 32
    assert_same(out, masks(lane < np.repeat(k, 32), n))


@gpu.jit
def k_nested(out, a, b):
    i = gpu.grid(1)
    if a[i]:
        if b[i]:
            out[i, 0] = gpu.activemask()
        else:
            out[i, 1] = gpu.activemask()
        out[i, 2] = gpu.activemask()
    elif b[i] or i % 3 == 0:
        out[i, 3] = gpu.activemask()
    out[i, 4] = gpu.activemask()


def test_nested_ifs_and_short_circuit(rng):
    n = 96
    a = rng.random(n) < 0.5
    b = rng.random(n) < 0.5
    out = np.full((n, 5), SENTINEL, np.int64)
    launch(k_nested, n, out, a, b)
    t = np.arange(n)
    assert_same(out[:, 0], masks(a & b, n))
    assert_same(out[:, 1], masks(a & ~b, n))
    assert_same(out[:, 2], masks(a, n))
    assert_same(out[:, 3], masks(~a & (b | (t % 3 == 0)), n))
    assert_same(out[:, 4], masks(np.ones(n, bool), n))


@gpu.jit
def k_loop(out, trips, after):
    i = gpu.grid(1)
    for j in range(trips[i]):
        out[i, j] = gpu.activemask()
    after[i] = gpu.activemask()


def test_loop_with_lane_dependent_trip_count(rng):
    n, maxtrip = 64, 12
    trips = rng.integers(0, maxtrip + 1, n)
    out = np.full((n, maxtrip), SENTINEL, np.int64)
    after = poisoned(n, np.int64)
    launch(k_loop, n, out, trips, after)
    for j in range(maxtrip):
        assert_same(out[:, j], masks(trips > j, n))
    assert_same(after, masks(np.ones(n, bool), n))


@gpu.jit
def k_loop_parity(out):
    i = gpu.grid(1)
    lane = gpu.laneid
    for j in range(4):
        if (j + lane) % 2 == 0:
            out[i, j] = gpu.activemask()


def test_loop_iterations_are_told_apart():
    # lane 0 runs the point at j = 0 and 2, lane 1 at j = 1 and 3: never together
    n = 64
    out = np.full((n, 4), SENTINEL, np.int64)
    launch(k_loop_parity, n, out)
    lane = np.arange(n) % 32
    for j in range(4):
        assert_same(out[:, j], masks((j + lane) % 2 == 0, n))


@gpu.jit
def k_while_break(out, stop, nested):
    i = gpu.grid(1)
    j = 0
    while True:
        if j == stop[i]:
            break
        for k in range(nested[i]):
            if k == j:
                out[i, j, 1] = gpu.activemask()
        out[i, j, 0] = gpu.activemask()
        j += 1


def test_while_break_and_nested_loop(rng):
    n, maxj = 64, 6
    stop = rng.integers(0, maxj + 1, n)
    nested = rng.integers(0, maxj + 1, n)
    out = np.full((n, maxj, 2), SENTINEL, np.int64)
    launch(k_while_break, n, out, stop, nested)
    for j in range(maxj):
        assert_same(out[:, j, 0], masks(stop > j, n))
        assert_same(out[:, j, 1], masks((stop > j) & (nested > j), n))


@gpu.jit
def k_ballot_active(out, pred):
    i = gpu.grid(1)
    if i % 4 != 1:
        m = gpu.activemask()
        out[i, 0] = m
        out[i, 1] = gpu.ballot_sync(m, pred[i])
        out[i, 2] = gpu.shfl_sync(m, i, 0)


def test_activemask_feeds_other_warp_ops(rng):
    n = 64
    pred = rng.random(n) < 0.5
    out = np.full((n, 3), SENTINEL, np.int64)
    launch(k_ballot_active, n, out, pred)
    t = np.arange(n)
    act = t % 4 != 1
    assert_same(out[:, 0], masks(act, n))
    bal = masks(act & pred, n)
    want = np.full(n, SENTINEL, np.int64)
    for w in range(0, n, 32):
        m = int(bal[w:w + 32][(act & pred)[w:w + 32]][0]) if (act & pred)[w:w + 32].any() else 0
        want[w:w + 32][act[w:w + 32]] = m
    assert_same(out[:, 1], want)
    src = np.where(act, (t // 32) * 32, SENTINEL)
    assert_same(out[:, 2], src)


def active_here():
    return gpu.activemask()


def active_in_loop(n):
    m = 0
    for j in range(n):
        m = gpu.activemask()
    return m


@gpu.jit
def k_device(out, trips):
    i = gpu.grid(1)
    if i % 2 == 0:
        out[i, 0] = active_here()
    else:
        out[i, 1] = active_here()   # the same function from another call site
    out[i, 2] = active_in_loop(trips[i])
    if i % 3 == 0:
        out[i, 3] = active_here()


def test_inside_device_functions(rng):
    n = 64
    trips = rng.integers(1, 6, n)
    out = np.full((n, 4), SENTINEL, np.int64)
    launch(k_device, n, out, trips)
    t = np.arange(n)
    assert_same(out[:, 0], masks(t % 2 == 0, n))
    assert_same(out[:, 1], masks(t % 2 == 1, n))
    # the last iteration of each lane: the lanes whose trip count is at least as long
    want = np.empty(n, np.int64)
    for i in range(n):
        w = i // 32 * 32
        want[i] = sum(1 << (l - w) for l in range(w, w + 32) if trips[l] >= trips[i])
    assert_same(out[:, 2], want)
    assert_same(out[:, 3], masks(t % 3 == 0, n))


@gpu.jit
def k_then_barrier(out, sh_out):
    sh = gpu.shared.array(64, gpu.int64)
    t = gpu.threadIdx.x
    sh[t] = t
    if t % 32 < 10:
        out[t] = gpu.activemask()   # the other lanes wait at the barrier meanwhile
    gpu.syncthreads()
    sh_out[t] = sh[63 - t]


def test_activemask_before_a_barrier_others_reached():
    out = np.full(64, SENTINEL, np.int64)
    sh_out = poisoned(64, np.int64)
    k_then_barrier[1, 64](out, sh_out)
    assert_same(out, masks(np.arange(64) % 32 < 10, 64))
    assert_same(sh_out, np.arange(63, -1, -1))
