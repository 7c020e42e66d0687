"""A compile-and-launch loop for leak checking (scripts/leaks.sh runs it under
valgrind): compiles fresh kernels (distinct closure constants, device
functions, shared memory, a compile error) and launches each on the CPU
backend, then drops everything."""
import gc
import sys

import numpy as np

import gpujit as gpu


def helper(v, k):
    return v * k + 1


def make(k):
    @gpu.jit
    def kern(out, x):
        sh = gpu.shared.array(32, gpu.float64)
        t = gpu.threadIdx.x
        i = gpu.grid(1)
        sh[t] = x[i] if i < x.size else 0.0
        gpu.syncthreads()
        if i < x.size:
            out[i] = helper(sh[t], k)
    return kern


def bad(out):
    out[0] = [1]


def main(n):
    for k in range(n):
        x = np.arange(100.0)
        out = np.zeros(100)
        make(k)[4, 32](out, x)
        assert out[5] == 5.0 * k + 1
        try:
            gpu.jit(bad)[1, 1](out)
        except gpu.UnsupportedError:
            pass
    gc.collect()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
