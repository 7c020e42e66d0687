"""Array arguments: every dtype, 1-3 dimensions, C-contiguous and strided
(non-contiguous) views, negative indices, .shape/.size/.ndim/len."""
import numpy as np
import pytest

import gpujit as gpu
from conftest import assert_same, launch1d, poisoned, random_array

ALL_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
              np.float32, np.float64]


@gpu.jit
def k_copy1(out, a):
    i = gpu.grid(1)
    if i < a.size:
        out[i] = a[i]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_copy_every_dtype(rng, dtype):
    a = random_array(rng, 333, dtype)
    out = poisoned(333, dtype)
    if np.dtype(dtype) == np.bool_:
        out[:] = ~a
    launch1d(k_copy1, 333, out, a)
    assert_same(out, a)
    assert out.dtype == dtype


@gpu.jit
def k_scale_add(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a[i] * 2 + b[i]


# (not uint64: uint64 * 2 is uint64 * int64 -> float64 under numba's rules)
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                   np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_arith_every_dtype_wraps_on_store(rng, dtype):
    a = random_array(rng, 200, dtype)
    b = random_array(rng, 200, dtype)
    out = poisoned(200, dtype)
    launch1d(k_scale_add, 200, out, a, b)
    if np.dtype(dtype).kind == "f":
        assert_same(out, a * dtype(2) + b)
    else:
        wide = np.uint64 if np.dtype(dtype).kind == "u" else np.int64
        with np.errstate(over="ignore"):
            assert_same(out, (a.astype(wide) * wide(2) + b.astype(wide)).astype(dtype))


@gpu.jit
def k_uint64_ops(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = (a[i] + b[i]) * (a[i] - b[i]) ^ (a[i] // (b[i] | a[i])) % b[i]


def test_uint64_arithmetic_wraps(rng):
    a = random_array(rng, 300, np.uint64)
    b = random_array(rng, 300, np.uint64)
    b[b == 0] = 5
    out = poisoned(300, np.uint64)
    launch1d(k_uint64_ops, 300, out, a, b)
    m = 2**64
    want = [(((x + y) * (x - y)) % m) ^ ((x // (y | x)) % y) for x, y in zip(map(int, a), map(int, b))]
    assert out.tolist() == want


@gpu.jit
def k_2d(out, a):
    i, j = gpu.grid(2)
    h, w = a.shape
    if i < h and j < w:
        out[i, j] = a[i, j] * 10 + i - j


@gpu.jit
def k_3d(out, a):
    i, j, k = gpu.grid(3)
    if i < a.shape[0] and j < a.shape[1] and k < a.shape[2]:
        out[i, j, k] = a[i, j, k] + i * 100 + j * 10 + k


def test_2d_grid(rng):
    a = rng.standard_normal((37, 53))
    out = poisoned(a.shape, np.float64)
    k_2d[(5, 7), (8, 8)](out, a)
    ii, jj = np.indices(a.shape)
    assert_same(out, a * 10 + ii - jj, atol=1e-12)  # a*10+i may be one FMA: cancellation


def test_3d_grid(rng):
    a = rng.integers(-1000, 1000, (9, 13, 6))
    out = poisoned(a.shape, np.int64)
    k_3d[(3, 4, 2), (4, 4, 4)](out, a)
    ii, jj, kk = np.indices(a.shape)
    assert_same(out, a + ii * 100 + jj * 10 + kk)


def test_strided_views(rng):
    base = rng.standard_normal((40, 60))
    src = base[3:37:2, ::-3]            # non-contiguous, negative stride
    big = poisoned((80, 70), np.float64)
    dst = big[::4, 5:5 + src.shape[1]][:src.shape[0]]  # strided output view
    assert not src.flags.c_contiguous and not dst.flags.c_contiguous
    k_2d[(3, 3), (8, 8)](dst, src)
    ii, jj = np.indices(src.shape)
    assert_same(dst, src * 10 + ii - jj, atol=1e-12)
    assert "void(float64[:, :], float64[:, :])" in k_2d.signatures
    # elements outside the view were not touched
    mask = np.ones(big.shape, bool)
    mask[::4, 5:5 + src.shape[1]][:src.shape[0]] = False
    assert np.isnan(big[mask]).all()


def test_strided_1d_and_fortran_order(rng):
    a = rng.integers(-100, 100, 500)[::-7]
    out = poisoned(a.size * 3, np.int64)[::3]
    launch1d(k_copy1, a.size, out, a)
    assert_same(out, a)
    f = np.asfortranarray(rng.standard_normal((17, 9)))
    o = poisoned((17, 9), np.float64)
    k_2d[(3, 2), (8, 8)](o, f)
    ii, jj = np.indices(f.shape)
    assert_same(o, f * 10 + ii - jj, atol=1e-12)


def test_transposed_3d_view(rng):
    a = rng.integers(-1000, 1000, (6, 13, 9)).transpose(2, 1, 0)
    out = poisoned(a.shape, np.int64)
    k_3d[(3, 4, 2), (4, 4, 4)](out, a)
    ii, jj, kk = np.indices(a.shape)
    assert_same(out, a + ii * 100 + jj * 10 + kk)


@gpu.jit
def k_props(out, a, b, c):
    out[0] = a.size
    out[1] = a.ndim
    out[2] = len(a)
    out[3] = a.shape[0]
    out[4] = b.size
    out[5] = b.ndim
    out[6] = len(b)
    out[7] = b.shape[1]
    out[8] = c.ndim
    out[9] = c.shape[2]
    out[10] = c.size
    out[11] = len(c)
    out[12] = b.shape[-1]
    out[13] = c.shape[-3]


def test_shape_size_ndim_len(rng):
    a = np.zeros(int(rng.integers(1, 50)))
    b = np.zeros((int(rng.integers(1, 9)), int(rng.integers(1, 9))), np.int32)[:, ::2]
    c = np.zeros((2, 3, int(rng.integers(1, 9))), np.uint8)
    out = poisoned(14, np.int64)
    k_props[1, 1](out, a, b, c)
    assert out.tolist() == [a.size, 1, len(a), a.shape[0], b.size, 2, len(b), b.shape[1], 3, c.shape[2],
                            c.size, len(c), b.shape[-1], c.shape[-3]]


@gpu.jit
def k_negative_index(out, a, m):
    i = gpu.grid(1)
    if i < a.size:
        out[-1 - i] = a[i]            # reverse through negative indices
    if i == 0:
        m[-1, -2] = a[-1]
        m[0, -1] = a[-a.size]


def test_negative_indices(rng):
    a = rng.integers(-100, 100, 77)
    out = poisoned(77, np.int64)
    m = poisoned((3, 4), np.int64)
    launch1d(k_negative_index, 77, out, a, m)
    assert_same(out, a[::-1])
    assert m[2, 2] == a[-1] and m[0, 3] == a[0]


@gpu.jit
def k_negative_index_3d(out, a):
    i = gpu.grid(1)
    if i < 1:
        out[0] = a[-1, -1, -1]
        out[1] = a[-2, 0, -3]
        out[2] = a[0, -1, 1]


def test_negative_indices_3d(rng):
    a = rng.integers(-100, 100, (4, 5, 6))[:, ::2, 1:]
    out = poisoned(3, np.int64)
    k_negative_index_3d[1, 1](out, a)
    assert out.tolist() == [a[-1, -1, -1], a[-2, 0, -3], a[0, -1, 1]]


@gpu.jit
def k_bool_arrays(out, a, b):
    i = gpu.grid(1)
    if i < a.size:
        out[i] = a[i] and not b[i]


def test_bool_arrays(rng):
    a = rng.integers(0, 2, 100).astype(bool)
    b = rng.integers(0, 2, 100).astype(bool)
    out = ~(a & ~b)
    launch1d(k_bool_arrays, 100, out, a, b)
    assert_same(out, a & ~b)


@gpu.jit
def k_rowsum(out, a):
    i = gpu.grid(1)
    if i < a.shape[0]:
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j]
        out[i] = s


def test_rowsum_float32_2d(rng):
    a = rng.standard_normal((100, 33)).astype(np.float32)
    out = poisoned(100, np.float32)
    launch1d(k_rowsum, 100, out, a)
    assert_same(out, a.sum(axis=1), rtol=1e-5, atol=1e-5)


@gpu.jit
def k_inplace(a, b):
    i, j = gpu.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        a[i, j] += b[i, j]
        a[i, j] *= 2


def test_inplace_augmented_subscript(rng):
    a = rng.integers(-100, 100, (20, 30)).astype(np.int32)
    b = rng.integers(-100, 100, (20, 30)).astype(np.int32)
    want = (a + b) * 2
    k_inplace[(3, 4), (8, 8)](a, b)
    assert_same(a, want)


def test_numpy_scalar_args_keep_type():
    out = poisoned(1, np.float32)

    @gpu.jit
    def k(out, x):
        out[0] = x * x

    k[1, 1](out, np.float32(3.0))
    k[1, 1](out, 3)
    k[1, 1](out, 3.0)
    assert out[0] == 9.0
    assert set(k.signatures) == {"void(float32[::1], float32)", "void(float32[::1], int64)",
                                 "void(float32[::1], float64)"}


def test_empty_array_launch():
    out = np.zeros(0)
    launch1d(k_copy1, 0, out, np.zeros(0))


@gpu.jit
def k_tuple_variable_index(m):
    ij = gpu.grid(2)
    if ij[0] < m.shape[0] and ij[1] < m.shape[1]:
        m[ij] = ij[0] * 10 + ij[1]
        shape = m.shape
        m[ij] += shape[1] * 1000


def test_tuple_variable_as_index():
    m = poisoned((5, 7), np.int64)
    k_tuple_variable_index[(2, 2), (4, 4)](m)
    i, j = np.indices(m.shape)
    assert_same(m, i * 10 + j + 7000)
