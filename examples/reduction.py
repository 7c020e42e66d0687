"""Block + grid reduction: each block sums 256 elements in shared memory with a
tree of barriers, then one thread adds the block's sum atomically.

    python3 examples/reduction.py
"""
import numpy as np

import gpujit as gpu

TPB = 256


@gpu.jit
def block_sum(x, total):
    sh = gpu.shared.array(TPB, gpu.int64)
    tid = gpu.threadIdx.x
    i = gpu.grid(1)
    acc = 0
    while i < x.size:                  # grid-stride: any grid covers any n
        acc += x[i]
        i += gpu.gridsize(1)
    sh[tid] = acc
    gpu.syncthreads()
    s = TPB // 2
    while s > 0:
        if tid < s:
            sh[tid] += sh[tid + s]
        gpu.syncthreads()
        s //= 2
    if tid == 0:
        gpu.atomic.add(total, 0, sh[0])


def main(n=1_000_003):
    rng = np.random.default_rng()
    x = rng.integers(-1000, 1000, n, dtype=np.int64)
    total = np.zeros(1, np.int64)
    block_sum[64, TPB](x, total)
    assert total[0] == x.sum(), (total[0], x.sum())
    print("reduction of %d int64 on the %s target: %d, exact: OK" % (n, gpu.current_target(), total[0]))


if __name__ == "__main__":
    main()
