"""A 2-D 5-point stencil (one Jacobi step of the heat equation) on an image.

    python3 examples/stencil.py
"""
import numpy as np

import gpujit as gpu


@gpu.jit
def jacobi(src, dst, alpha):
    x, y = gpu.grid(2)
    h, w = src.shape
    if 0 < y < h - 1 and 0 < x < w - 1:
        dst[y, x] = src[y, x] + alpha * (src[y - 1, x] + src[y + 1, x] + src[y, x - 1] + src[y, x + 1]
                                         - 4.0 * src[y, x])
    elif y < h and x < w:
        dst[y, x] = src[y, x]


def main(h=513, w=771, steps=10):
    rng = np.random.default_rng()
    img = rng.random((h, w))
    a, b = gpu.to_device(img), gpu.device_array_like(img)
    grid = ((w + 15) // 16, (h + 15) // 16)
    for _ in range(steps):
        jacobi[grid, (16, 16)](a, b, 0.2)
        a, b = b, a
    want = img.copy()
    for _ in range(steps):
        nxt = want.copy()
        nxt[1:-1, 1:-1] = want[1:-1, 1:-1] + 0.2 * (want[:-2, 1:-1] + want[2:, 1:-1] + want[1:-1, :-2]
                                                      + want[1:-1, 2:] - 4.0 * want[1:-1, 1:-1])
        want = nxt
    np.testing.assert_allclose(a.copy_to_host(), want, rtol=1e-12, atol=1e-12)
    print("stencil %dx%d, %d steps on the %s target: OK" % (h, w, steps, gpu.current_target()))


if __name__ == "__main__":
    main()
