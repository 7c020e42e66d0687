"""Matrix multiply with 16x16 shared-memory tiles (numba.cuda's classic example).

    python3 examples/matmul.py      # GPU if present, else the CPU backend; checks itself
"""
import numpy as np

import gpujit as gpu

TPB = 16


@gpu.jit
def matmul(A, B, C):
    sA = gpu.shared.array(shape=(TPB, TPB), dtype=gpu.float32)
    sB = gpu.shared.array(shape=(TPB, TPB), dtype=gpu.float32)
    x, y = gpu.grid(2)  # x: column, y: row, so neighbouring threads read neighbouring words
    tx = gpu.threadIdx.x
    ty = gpu.threadIdx.y
    acc = gpu.float32(0.0)
    for t in range((A.shape[1] + TPB - 1) // TPB):
        sA[ty, tx] = A[y, tx + t * TPB] if y < A.shape[0] and tx + t * TPB < A.shape[1] else 0.0
        sB[ty, tx] = B[ty + t * TPB, x] if x < B.shape[1] and ty + t * TPB < B.shape[0] else 0.0
        gpu.syncthreads()
        for k in range(TPB):
            acc += sA[ty, k] * sB[k, tx]
        gpu.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = acc


def main(n=300, m=200, p=250):
    rng = np.random.default_rng()
    A = rng.standard_normal((n, m), dtype=np.float32)
    B = rng.standard_normal((m, p), dtype=np.float32)
    C = np.full((n, p), np.nan, dtype=np.float32)
    grid = ((p + TPB - 1) // TPB, (n + TPB - 1) // TPB)
    matmul[grid, (TPB, TPB)](A, B, C)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-3)
    print("matmul %dx%d @ %dx%d on the %s target: OK" % (n, m, m, p, gpu.current_target()))


if __name__ == "__main__":
    main()
