"""Tensor-core GEMM: C = A @ B, float16 in, float32 out, with wmma fragments (mma.sync) fed by
cp.async copies into double-buffered shared memory.

A block computes a 128x128 tile of C with 8 warps, each a 64x32 part as 4x2 fragments of
16x16. The K dimension goes by 32: while the warps multiply one pair of shared tiles, the
block's copies of the next pair are in flight (cp_async.wait_group(1) waits for all but the
newest group).

    python3 examples/tc_gemm.py      # GPU if present, else the CPU backend; checks itself
"""
import numpy as np

import gpujit as gpu
from gpujit import cp_async, wmma

BM, BN, BK = 128, 128, 32  # the block's tile of C, and the step along K
PAD = 8                   # float16s after each shared row: rows stay 16-byte aligned, banks differ
THREADS = 256
SA_W, SB_W = BK + PAD, BN + PAD


@gpu.jit
def tc_gemm(A, B, C):
    sA = gpu.shared.array((2, BM, SA_W), np.float16)
    sB = gpu.shared.array((2, BK, SB_W), np.float16)
    tid = gpu.threadIdx.x
    warp = tid // 32
    wm = (warp // 4) * 64  # the warp's part of the block's tile: 64 rows, 32 columns
    wn = (warp % 4) * 32
    m0 = gpu.blockIdx.y * BM
    n0 = gpu.blockIdx.x * BN
    c00 = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32)
    c01 = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32)
    c10 = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32)
    c11 = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32)
    c20 = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32)
    c21 = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32)
    c30 = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32)
    c31 = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32)
    wmma.fill_fragment(c00, 0)
    wmma.fill_fragment(c01, 0)
    wmma.fill_fragment(c10, 0)
    wmma.fill_fragment(c11, 0)
    wmma.fill_fragment(c20, 0)
    wmma.fill_fragment(c21, 0)
    wmma.fill_fragment(c30, 0)
    wmma.fill_fragment(c31, 0)
    fa = wmma.fragment(wmma.matrix_a, 16, 16, 16, np.float16, wmma.row_major)
    fb0 = wmma.fragment(wmma.matrix_b, 16, 16, 16, np.float16, wmma.row_major)
    fb1 = wmma.fragment(wmma.matrix_b, 16, 16, 16, np.float16, wmma.row_major)
    ntiles = A.shape[1] // BK

    # tile 0 into buffer 0: each thread copies two 16-byte pieces of A's tile and two of B's
    for p in range(2):
        q = tid + p * THREADS
        ra, ca = q // (BK // 8), (q % (BK // 8)) * 8
        cp_async.copy(sA, (0, ra, ca), A, (m0 + ra, ca), 16)
        rb, cb = q // (BN // 8), (q % (BN // 8)) * 8
        cp_async.copy(sB, (0, rb, cb), B, (rb, n0 + cb), 16)
    cp_async.commit_group()

    for t in range(ntiles):
        buf = t % 2
        if t + 1 < ntiles:  # the next tiles into the other buffer, while this one is used
            k1 = (t + 1) * BK
            for p in range(2):
                q = tid + p * THREADS
                ra, ca = q // (BK // 8), (q % (BK // 8)) * 8
                cp_async.copy(sA, (1 - buf, ra, ca), A, (m0 + ra, k1 + ca), 16)
                rb, cb = q // (BN // 8), (q % (BN // 8)) * 8
                cp_async.copy(sB, (1 - buf, rb, cb), B, (k1 + rb, n0 + cb), 16)
            cp_async.commit_group()
            cp_async.wait_group(1)
        else:
            cp_async.wait_group(0)
        gpu.syncthreads()
        for kk in range(0, BK, 16):
            wmma.load_matrix_sync(fb0, sB[buf, kk:kk + 16, wn:wn + 16])
            wmma.load_matrix_sync(fb1, sB[buf, kk:kk + 16, wn + 16:wn + 32])
            wmma.load_matrix_sync(fa, sA[buf, wm:wm + 16, kk:kk + 16])
            wmma.mma_sync(c00, fa, fb0, c00)
            wmma.mma_sync(c01, fa, fb1, c01)
            wmma.load_matrix_sync(fa, sA[buf, wm + 16:wm + 32, kk:kk + 16])
            wmma.mma_sync(c10, fa, fb0, c10)
            wmma.mma_sync(c11, fa, fb1, c11)
            wmma.load_matrix_sync(fa, sA[buf, wm + 32:wm + 48, kk:kk + 16])
            wmma.mma_sync(c20, fa, fb0, c20)
            wmma.mma_sync(c21, fa, fb1, c21)
            wmma.load_matrix_sync(fa, sA[buf, wm + 48:wm + 64, kk:kk + 16])
            wmma.mma_sync(c30, fa, fb0, c30)
            wmma.mma_sync(c31, fa, fb1, c31)
        gpu.syncthreads()  # everyone is done with buf before it is refilled

    i, j = m0 + wm, n0 + wn
    wmma.store_matrix_sync(C[i:i + 16, j:j + 16], c00, wmma.mem_row_major)
    wmma.store_matrix_sync(C[i:i + 16, j + 16:j + 32], c01, wmma.mem_row_major)
    wmma.store_matrix_sync(C[i + 16:i + 32, j:j + 16], c10, wmma.mem_row_major)
    wmma.store_matrix_sync(C[i + 16:i + 32, j + 16:j + 32], c11, wmma.mem_row_major)
    wmma.store_matrix_sync(C[i + 32:i + 48, j:j + 16], c20, wmma.mem_row_major)
    wmma.store_matrix_sync(C[i + 32:i + 48, j + 16:j + 32], c21, wmma.mem_row_major)
    wmma.store_matrix_sync(C[i + 48:i + 64, j:j + 16], c30, wmma.mem_row_major)
    wmma.store_matrix_sync(C[i + 48:i + 64, j + 16:j + 32], c31, wmma.mem_row_major)


def launch(A, B, C):
    """C = A @ B; M and N multiples of 128, K of 32, all C-contiguous."""
    (M, K), (K2, N) = A.shape, B.shape
    if K != K2 or C.shape != (M, N) or M % BM or N % BN or K % BK:
        raise ValueError("tc_gemm: shapes (%d, %d) @ (%d, %d) -> %s: M, N must be multiples of 128, K of 32"
                         % (M, K, K2, N, C.shape))
    tc_gemm[(N // BN, M // BM), THREADS](A, B, C)


def reference(A, B):
    """The CPU target's rule: each product exact in float32, summed in float32 in order of k."""
    acc = np.zeros((A.shape[0], B.shape[1]), np.float32)
    A32, B32 = A.astype(np.float32), B.astype(np.float32)
    for k in range(A.shape[1]):
        acc += A32[:, k:k + 1] * B32[k:k + 1, :]
    return acc


def main(m=128, n=128, k=96):
    rng = np.random.default_rng()
    A = rng.standard_normal((m, k)).astype(np.float16)
    B = rng.standard_normal((k, n)).astype(np.float16)
    C = np.full((m, n), np.nan, np.float32)
    launch(A, B, C)
    if gpu.current_target() == "cpu":
        np.testing.assert_array_equal(C, reference(A, B))
    np.testing.assert_allclose(C, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-3, atol=1e-3 * np.sqrt(k))
    print("tc_gemm %dx%d @ %dx%d (float16 -> float32) on the %s target: OK" % (m, k, k, n, gpu.current_target()))


if __name__ == "__main__":
    main()
