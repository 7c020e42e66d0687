"""Mandelbrot set: iteration counts over a grid of the complex plane.

    python3 examples/mandelbrot.py
"""
import numpy as np

import gpujit as gpu


@gpu.jit
def mandel(img, x0, y0, dx, dy, max_iter):
    x, y = gpu.grid(2)
    h, w = img.shape
    if y >= h or x >= w:
        return
    cr = x0 + x * dx
    ci = y0 + y * dy
    zr = 0.0
    zi = 0.0
    n = 0
    while n < max_iter and zr * zr + zi * zi <= 4.0:
        zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
        n += 1
    img[y, x] = n


def reference(h, w, x0, y0, dx, dy, max_iter):
    c = (x0 + np.arange(w) * dx)[None, :] + 1j * (y0 + np.arange(h) * dy)[:, None]
    z = np.zeros_like(c)
    out = np.zeros(c.shape, np.int32)
    alive = np.ones(c.shape, bool)
    for _ in range(max_iter):
        alive &= (z.real * z.real + z.imag * z.imag) <= 4.0
        z[alive] = z[alive] * z[alive] + c[alive]
        out += alive
    return out


def main(h=200, w=300, max_iter=100):
    img = np.full((h, w), -1, np.int32)
    args = (-2.0, -1.0, 3.0 / w, 2.0 / h, max_iter)
    mandel[((w + 15) // 16, (h + 15) // 16), (16, 16)](img, *args)
    want = reference(h, w, *args)
    # the FMA-contracted update may flip a point exactly on the escape boundary
    assert np.mean(img != want) < 1e-3, np.mean(img != want)
    print("mandelbrot %dx%d on the %s target: OK (%.1f%% of points in the set)" % (
        h, w, gpu.current_target(), 100.0 * np.mean(img == max_iter)))


if __name__ == "__main__":
    main()
