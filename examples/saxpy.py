"""saxpy: out = a * x + y, one thread per element.

Run:  python3 examples/saxpy.py   (on the GPU if there is one, else on the CPU backend)
PTX:  python3 -m gpujit ptx examples/saxpy.py
"""
import numpy as np

import gpujit as gpu


@gpu.jit("void(float32[::1], float32, float32[::1], float32[::1])")
def saxpy(out, a, x, y):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def main(n=1_000_003):
    rng = np.random.default_rng()
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    a = np.float32(rng.standard_normal())
    out = np.full(n, np.nan, dtype=np.float32)
    threads = 256
    blocks = (n + threads - 1) // threads
    d_out = gpu.to_device(out)
    saxpy[blocks, threads](d_out, a, gpu.to_device(x), gpu.to_device(y))
    got = d_out.copy_to_host()
    want = a * x + y
    # FMA contraction on the GPU rounds once where NumPy rounds twice
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    print("saxpy: %d elements on the %s target: OK (max abs error %.2e)" % (
        n, gpu.current_target(), float(np.max(np.abs(got - want)))))


if __name__ == "__main__":
    main()
