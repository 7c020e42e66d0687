"""One step of an all-pairs N-body simulation (softened gravity), positions
tiled through shared memory.

    python3 examples/nbody.py
"""
import math

import numpy as np

import gpujit as gpu

TILE = 128
EPS2 = 1e-3


@gpu.jit
def accelerations(pos, mass, acc):
    sx = gpu.shared.array(TILE, gpu.float64)
    sy = gpu.shared.array(TILE, gpu.float64)
    sz = gpu.shared.array(TILE, gpu.float64)
    sm = gpu.shared.array(TILE, gpu.float64)
    i = gpu.grid(1)
    n = pos.shape[0]
    xi = pos[i, 0] if i < n else 0.0
    yi = pos[i, 1] if i < n else 0.0
    zi = pos[i, 2] if i < n else 0.0
    ax = 0.0
    ay = 0.0
    az = 0.0
    for start in range(0, n, TILE):
        j = start + gpu.threadIdx.x
        sx[gpu.threadIdx.x] = pos[j, 0] if j < n else 0.0
        sy[gpu.threadIdx.x] = pos[j, 1] if j < n else 0.0
        sz[gpu.threadIdx.x] = pos[j, 2] if j < n else 0.0
        sm[gpu.threadIdx.x] = mass[j] if j < n else 0.0
        gpu.syncthreads()
        for k in range(TILE):
            dx = sx[k] - xi
            dy = sy[k] - yi
            dz = sz[k] - zi
            r2 = dx * dx + dy * dy + dz * dz + EPS2
            inv = sm[k] / (r2 * math.sqrt(r2))
            ax += dx * inv
            ay += dy * inv
            az += dz * inv
        gpu.syncthreads()
    if i < n:
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az


def main(n=2000):
    rng = np.random.default_rng()
    pos = rng.standard_normal((n, 3))
    mass = rng.random(n)
    acc = np.full((n, 3), np.nan)
    accelerations[(n + TILE - 1) // TILE, TILE](pos, mass, acc)
    d = pos[None, :, :] - pos[:, None, :]
    r2 = (d ** 2).sum(-1) + EPS2
    want = (d * (mass[None, :] / (r2 * np.sqrt(r2)))[:, :, None]).sum(1)
    np.testing.assert_allclose(acc, want, rtol=1e-9, atol=1e-9)
    print("n-body accelerations of %d bodies on the %s target: OK" % (n, gpu.current_target()))


if __name__ == "__main__":
    main()
