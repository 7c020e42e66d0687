"""a.view(dtype) in kernels: the same bytes as another element type, against NumPy's view on
fresh random data (same size, smaller and larger itemsizes, slices of a byte buffer, 2-D);
outputs start poisoned. A last axis that is not contiguous, or whose bytes do not divide
into the new itemsize, raises NumPy's ValueError under debug=True."""
import numpy as np
import pytest

import gpujit as gpu


@gpu.jit
def k_bytes_to_i32(buf, start, stop, out):
    v = buf[start:stop].view(np.int32)
    for i in range(v.size):
        out[i] = v[i]


def test_bytes_to_int32(rng):
    buf = rng.integers(0, 256, 256, dtype=np.uint8)
    for start in range(0, 240, 4):
        stop = start + 4 * int(rng.integers(1, 4))
        want = buf[start:stop].view(np.int32)
        out = np.full(want.size, 7, np.int32)
        k_bytes_to_i32[1, 1](buf, start, stop, out)
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("src,dst", [(np.float64, np.int64), (np.float32, np.uint8), (np.int16, np.float64),
                                     (np.complex128, np.float64), (np.float64, np.complex64)])
def test_view_2d(rng, src, dst):
    @gpu.jit
    def k(a, out):
        v = a.view(dst)
        for i in range(v.shape[0]):
            for j in range(v.shape[1]):
                out[i, j] = v[i, j]
    a = rng.integers(0, 2 ** 16, (3, 8)).astype(np.uint16).view(np.uint8).copy().view(src)
    want = a.view(dst)
    out = np.zeros(want.shape, dst)
    out.view(np.uint8)[...] = 0xAB
    k[1, 1](a, out)
    np.testing.assert_array_equal(out.view(np.uint8), want.view(np.uint8))


def test_view_errors():
    @gpu.jit(debug=True)
    def k(a, out):
        v = a.view(np.int64)
        out[0] = v[0]
    out = np.zeros(1, np.int64)
    with pytest.raises(ValueError, match="last axis must be contiguous"):
        # a strided view on the device (a strided host array reaches a GPU as a packed copy)
        k[1, 1](gpu.to_device(np.arange(16, dtype=np.int32))[::2], out)
    with pytest.raises(ValueError, match="divisor of the total size"):
        k[1, 1](np.arange(3, dtype=np.int32), out)
    k[1, 1](np.arange(4, dtype=np.int32), out)
    assert out[0] == np.arange(4, dtype=np.int32).view(np.int64)[0]


def test_view_bad_dtype():
    @gpu.jit
    def k(a, out):
        out[0] = a.view(3)[0]
    with pytest.raises(gpu.TypingError, match="dtype"):
        k[1, 1](np.zeros(2), np.zeros(1))
