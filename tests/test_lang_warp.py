"""Block and warp synchronisation: syncthreads_count/and/or, syncwarp, fences, shuffles,
votes, match, activemask, lanemask_lt. On the CPU backend each thread is a fiber and the
lanes of a warp (32 consecutive linear thread ids) meet in the runtime; the PTX of each
kernel goes through ptxas (conftest)."""
import numpy as np
import pytest

import gpujit as gpu
from conftest import assert_same, poisoned

FULL = 0xFFFFFFFF


@gpu.jit
def k_sync_reduce(out, pred):
    i = gpu.grid(1)
    p = pred[i]
    c = gpu.syncthreads_count(p)
    a = gpu.syncthreads_and(p)
    o = gpu.syncthreads_or(p)
    out[i, 0] = c
    out[i, 1] = a
    out[i, 2] = o


@pytest.mark.parametrize("density", [0.0, 0.5, 1.0])
def test_syncthreads_count_and_or(rng, density):
    blocks, threads = 6, 96
    pred = (rng.random(blocks * threads) < density).astype(np.int32)
    pred[:threads] = rng.integers(0, 2, threads)   # block 0 always mixed
    out = poisoned((blocks * threads, 3), np.int32)
    k_sync_reduce[blocks, threads](out, pred)
    per = pred.reshape(blocks, threads)
    want = np.stack([per.sum(1), per.all(1), per.any(1)], axis=1).astype(np.int32)
    assert_same(out, np.repeat(want, threads, axis=0))


@gpu.jit
def k_syncwarp_fence(out, x):
    sh = gpu.shared.array(64, gpu.float64)
    t = gpu.threadIdx.x
    sh[t] = x[gpu.grid(1)]
    gpu.threadfence_block()
    gpu.syncwarp()
    gpu.syncwarp(FULL)
    gpu.threadfence()
    gpu.threadfence_system()
    lane = t % 32
    out[gpu.grid(1)] = sh[t - lane + 31 - lane]     # reverse within the warp


def test_syncwarp_and_fences(rng):
    x = rng.random(256)
    out = poisoned(256, np.float64)
    k_syncwarp_fence[4, 64](out, x)
    assert_same(out, x.reshape(-1, 32)[:, ::-1].ravel())


@gpu.jit
def k_warp_sum(out, x):
    i = gpu.grid(1)
    v = x[i]
    d = 16
    while d > 0:
        v += gpu.shfl_down_sync(FULL, v, d)
        d //= 2
    if gpu.laneid == 0:
        out[i // 32] = v


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.float32, np.float64])
def test_shfl_down_reduction(rng, dtype):
    x = (rng.integers(-1000, 1000, 512) if np.dtype(dtype).kind != "u" else rng.integers(0, 1 << 20, 512)).astype(dtype)
    out = poisoned(16, dtype)
    k_warp_sum[4, 128](out, x)
    assert_same(out, x.reshape(16, 32).sum(1, dtype=dtype))


@gpu.jit
def k_shuffles(out, x, src):
    i = gpu.grid(1)
    v = x[i]
    out[i, 0] = gpu.shfl_sync(FULL, v, src[i // 32])
    out[i, 1] = gpu.shfl_up_sync(FULL, v, 3)
    out[i, 2] = gpu.shfl_down_sync(FULL, v, 5)
    out[i, 3] = gpu.shfl_xor_sync(FULL, v, 6)
    s = v                                       # butterfly all-reduce: every lane gets the sum
    m = 1
    while m < 32:
        s += gpu.shfl_xor_sync(FULL, s, m)
        m *= 2
    out[i, 4] = s
    p = v                                       # inclusive scan with shfl_up
    d = 1
    while d < 32:
        y = gpu.shfl_up_sync(FULL, p, d)
        if gpu.laneid >= d:
            p += y
        d *= 2
    out[i, 5] = p


@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.int32, np.float32])
def test_shfl_variants(rng, dtype):
    x = rng.integers(-1 << 20, 1 << 20, 256).astype(dtype)
    src = rng.integers(0, 32, 8).astype(np.int32)
    out = poisoned((256, 6), dtype)
    k_shuffles[2, 128](out, x, src)
    w = x.reshape(8, 32)
    lane = np.arange(32)
    assert_same(out[:, 0], w[np.arange(8)[:, None], src[:, None] + 0 * lane].ravel())
    assert_same(out[:, 1], w[:, np.where(lane >= 3, lane - 3, lane)].ravel())
    assert_same(out[:, 2], w[:, np.where(lane + 5 < 32, lane + 5, lane)].ravel())
    assert_same(out[:, 3], w[:, lane ^ 6].ravel())
    assert_same(out[:, 4], np.repeat(w.sum(1, dtype=dtype), 32))
    assert_same(out[:, 5], np.cumsum(w, axis=1, dtype=dtype).ravel())


@gpu.jit
def k_votes(out, pred, vals):
    i = gpu.grid(1)
    p = pred[i]
    out[i, 0] = gpu.ballot_sync(FULL, p)
    out[i, 1] = gpu.all_sync(FULL, p)
    out[i, 2] = gpu.any_sync(FULL, p)
    out[i, 3] = gpu.eq_sync(FULL, p)
    out[i, 4] = gpu.match_any_sync(FULL, vals[i])
    m, ok = gpu.match_all_sync(FULL, vals[i])
    out[i, 5] = m
    out[i, 6] = ok
    out[i, 7] = gpu.activemask()
    out[i, 8] = gpu.lanemask_lt()
    # a partial mask: only the lanes it names may take part (PTX: undefined otherwise)
    out[i, 9] = gpu.ballot_sync(0x0000FFFF, p) if gpu.laneid < 16 else 0


def test_votes_match(rng):
    n = 8 * 32
    pred = (rng.random(n) < 0.5).astype(np.int32)
    pred[32:64] = 1                      # warp 1: all true
    pred[64:96] = 0                      # warp 2: all false
    vals = rng.integers(0, 4, n).astype(np.float64)
    vals[96:128] = 2.5                   # warp 3: all equal
    out = poisoned((n, 10), np.int64)
    k_votes[2, 128](out, pred, vals)
    p = pred.reshape(8, 32).astype(np.uint64)
    ballot = (p << np.arange(32, dtype=np.uint64)).sum(1).astype(np.int64)
    assert_same(out[:, 0], np.repeat(ballot, 32))
    assert_same(out[:, 1], np.repeat(p.all(1), 32).astype(np.int64))
    assert_same(out[:, 2], np.repeat(p.any(1), 32).astype(np.int64))
    assert_same(out[:, 3], np.repeat(p.all(1) | ~p.any(1), 32).astype(np.int64))
    v = vals.reshape(8, 32)
    same = v[:, :, None] == v[:, None, :]                       # [warp, lane, other]
    match_any = (same * (1 << np.arange(32, dtype=np.int64))).sum(2)
    assert_same(out[:, 4], match_any.ravel())
    alleq = (v == v[:, :1]).all(1)
    assert_same(out[:, 5], np.repeat(np.where(alleq, FULL, 0), 32))
    assert_same(out[:, 6], np.repeat(alleq, 32).astype(np.int64))
    assert (out[:, 7] == FULL).all()
    assert_same(out[:, 8], np.tile((1 << np.arange(32)) - 1, 8))
    # ballot over a half mask, taken by the lanes the mask names
    half = out[:, 9].reshape(8, 32)
    assert_same(half[:, :16].ravel(), np.repeat(ballot & 0xFFFF, 16))
    assert (half[:, 16:] == 0).all()


@gpu.jit
def k_partial(out, x):
    i = gpu.grid(1)
    if gpu.laneid >= 16:
        return                            # half of each warp exits
    v = x[i]
    m = 1
    while m < 16:                         # the others all-reduce among themselves
        v += gpu.shfl_xor_sync(0xFFFF, v, m)
        m *= 2
    out[i] = v
    out[i + 16] = gpu.activemask()


def test_exited_lanes_do_not_hang(rng):
    x = rng.integers(0, 100, 64).astype(np.int64)
    out = poisoned(64, np.int64)
    k_partial[1, 64](out, x)
    w = x.reshape(2, 2, 16)[:, 0]
    assert_same(out.reshape(2, 2, 16)[:, 0], np.repeat(w.sum(1), 16).reshape(2, 16))


@gpu.jit
def k_partial_warp(out, x):
    i = gpu.grid(1)
    m = gpu.activemask()          # a partial warp names only its lanes, as CUDA requires
    out[i, 0] = gpu.shfl_down_sync(m, x[i], 1)
    out[i, 1] = m


def test_block_not_multiple_of_32(rng):
    x = rng.integers(0, 100, 40).astype(np.int64)
    out = poisoned((40, 2), np.int64)
    k_partial_warp[1, 40](out, x)
    assert_same(out[:32, 0], np.append(x[1:32], x[31]))
    # lanes 8..31 of warp 1 do not exist: lane 7's source is undefined on a GPU
    assert_same(out[32:39, 0], x[33:40])
    assert (out[:32, 1] == FULL).all() and (out[32:, 1] == 0xFF).all()


@gpu.jit
def k_warp_deadlock(out):
    if gpu.laneid < 16:
        gpu.syncthreads()
    else:
        out[0] = gpu.shfl_sync(FULL, 1, 0)


@pytest.mark.skipif(gpu.current_target() == "cuda",
                    reason="a real GPU deadlocks here (as CUDA C would); the CPU backend detects it")
def test_warp_deadlock_is_an_error():
    with pytest.raises(gpu.LaunchError, match="warp-level operation"):
        k_warp_deadlock[1, 32](np.zeros(1, np.int64))


def test_warp_errors():
    def bad_value(a):
        a[0] = gpu.shfl_sync(FULL, gpu.int16(1), 0)
    with pytest.raises(gpu.TypingError, match="32- or 64-bit integer or float"):
        gpu.compile_ptx(bad_value, "void(int64[::1])")

    def bad_args(a):
        a[0] = gpu.ballot_sync(True)
    with pytest.raises(gpu.TypingError, match=r"ballot_sync\(mask, predicate\) takes 2 arguments"):
        gpu.compile_ptx(bad_args, "void(int64[::1])")


@pytest.mark.parametrize("sig,msg", [("void(float32[:], int32[:], int32[:])", "Mask type must be an integer"),
                                     ("void(boolean[:], int32[:], int32[:])", "Mask type must be an integer"),
                                     ("void(int32[:], float64[:], int32[:])",
                                      "Predicate must be an integer or boolean")])
def test_vote_operand_types(sig, msg):
    def k(mask, pred, out):
        i = gpu.grid(1)
        if i < out.shape[0]:
            out[i] = gpu.all_sync(mask[i], pred[i])

    with pytest.raises(gpu.TypingError, match=msg):
        gpu.compile_ptx(k, sig)
