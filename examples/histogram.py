"""Histogram with atomics: shared-memory bins per block, merged into global bins.

    python3 examples/histogram.py
"""
import numpy as np

import gpujit as gpu

NBINS = 64


@gpu.jit
def histogram(x, lo, hi, bins):
    local_bins = gpu.shared.array(NBINS, gpu.int32)
    tid = gpu.threadIdx.x
    if tid < NBINS:
        local_bins[tid] = 0
    gpu.syncthreads()
    i = gpu.grid(1)
    while i < x.size:
        v = x[i]
        if lo <= v < hi:
            b = int((v - lo) / (hi - lo) * NBINS)
            gpu.atomic.add(local_bins, min(b, NBINS - 1), 1)
        i += gpu.gridsize(1)
    gpu.syncthreads()
    if tid < NBINS:
        gpu.atomic.add(bins, tid, local_bins[tid])


def main(n=2_000_000):
    rng = np.random.default_rng()
    x = rng.standard_normal(n)
    bins = np.zeros(NBINS, np.int32)
    histogram[128, 256](x, -3.0, 3.0, bins)
    inside = x[(x >= -3.0) & (x < 3.0)]
    want = np.minimum(((inside + 3.0) / 6.0 * NBINS).astype(np.int64), NBINS - 1)
    np.testing.assert_array_equal(bins, np.bincount(want, minlength=NBINS))
    print("histogram of %d samples into %d bins on the %s target: OK" % (n, NBINS, gpu.current_target()))


if __name__ == "__main__":
    main()
