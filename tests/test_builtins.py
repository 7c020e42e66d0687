"""Builtins (abs, min, max, int, float, bool, len), casts (gpu.float32(x),
np.int32(x), ...), math functions, and globals / closure variables /
module aliases folded as constants."""
import math
import math as m

import numpy as np
import pytest

import gpujit as gpu
from conftest import assert_same, launch1d, poisoned, random_array

SCALE = 3
OFFSET = 0.25
FLAG = True
PAIR = (7, -2)
NESTED = ((1, 2), 3.5)
BIG = 2**62


@gpu.jit
def k_abs_min_max(out, a, b):
    i = gpu.grid(1)
    if i < a.size:
        out[i, 0] = abs(a[i])
        out[i, 1] = min(a[i], b[i])
        out[i, 2] = max(a[i], b[i])
        out[i, 3] = min(a[i], b[i], 0)
        out[i, 4] = max(a[i], b[i], 0)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_abs_min_max(rng, dtype):
    a = random_array(rng, 200, dtype, -100, 100)
    b = random_array(rng, 200, dtype, -100, 100)
    out = poisoned((200, 5), dtype)
    launch1d(k_abs_min_max, 200, out, a, b)
    want = np.array([[abs(x), min(x, y), max(x, y), min(x, y, 0), max(x, y, 0)] for x, y in zip(a, b)], dtype)
    assert_same(out, want)


@gpu.jit
def k_conversions(out, f, n):
    i = gpu.grid(1)
    if i < f.size:
        out[i, 0] = int(f[i])
        out[i, 1] = float(n[i]) / 3
        out[i, 2] = bool(n[i])
        out[i, 3] = bool(f[i])
        out[i, 4] = int(True) + int(n[i] > 0)
        out[i, 5] = float(f[i] > 0)


def test_int_float_bool_conversions(rng):
    f = rng.uniform(-100, 100, 200)
    f[:2] = [0.0, -0.9]
    n = rng.integers(-5, 5, 200)
    out = poisoned((200, 6), np.float64)
    launch1d(k_conversions, 200, out, f, n)
    want = [[int(x), float(y) / 3, bool(y), bool(x), 1 + int(y > 0), float(x > 0)] for x, y in zip(f, n)]
    assert_same(out, np.array(want, np.float64))


@gpu.jit
def k_casts(out32, outi, a):
    i = gpu.grid(1)
    if i < a.size:
        x = gpu.float32(a[i])
        out32[i] = x * gpu.float32(3.0)
        outi[i, 0] = gpu.int32(a[i] * 1000)
        outi[i, 1] = np.int8(gpu.int64(a[i] * 100))
        outi[i, 2] = gpu.uint8(300)
        outi[i, 3] = np.int64(np.float64(a[i]) * 7)


def test_casts(rng):
    a = rng.uniform(-5, 5, 200)
    out32 = poisoned(200, np.float32)
    outi = poisoned((200, 4), np.int64)
    launch1d(k_casts, 200, out32, outi, a)
    assert_same(out32, a.astype(np.float32) * np.float32(3.0))
    assert outi[:, 0].tolist() == [int(x * 1000) for x in a]
    assert outi[:, 1].tolist() == [np.int64(int(x * 100)).astype(np.int8) for x in a]
    assert (outi[:, 2] == 300 % 256).all()
    assert outi[:, 3].tolist() == [int(x * 7) for x in a]


@gpu.jit
def k_cast_types(out, a):
    x = gpu.float32(a[0])
    y = np.int16(a[0])
    z = gpu.uint32(a[0])
    w = np.float64(a[0])
    out[0] = x + y + z + w


def test_cast_types():
    text = k_cast_types.inspect_types_text("void(float64[::1], int64[::1])")
    types = dict(line.split()[-2:] for line in text.splitlines() if line.strip().startswith("line"))
    assert (types["x"], types["y"], types["z"], types["w"]) == ("float32", "int16", "uint32", "float64")


@gpu.jit
def k_math(out, a, b):
    i = gpu.grid(1)
    if i < a.size:
        x = a[i]
        out[i, 0] = math.sqrt(abs(x))
        out[i, 1] = math.fabs(x)
        out[i, 2] = math.floor(x)
        out[i, 3] = math.ceil(x)
        out[i, 4] = math.copysign(b[i], x)
        out[i, 5] = m.sqrt(x * x + 1.0)   # module alias


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_math_functions(rng, dtype):
    a = random_array(rng, 200, dtype, -50, 50)
    a[:3] = [-0.0, 2.5, -2.5]
    b = random_array(rng, 200, dtype, -50, 50)
    out = poisoned((200, 6), np.float64)
    launch1d(k_math, 200, out, a, b)
    want = np.array([[math.sqrt(abs(x)), math.fabs(x), math.floor(x), math.ceil(x), math.copysign(y, x),
                      math.sqrt(x * x + 1.0)] for x, y in zip(a.astype(np.float64), b.astype(np.float64))])
    rtol = 1e-6 if dtype == np.float32 else 1e-15
    assert_same(out, want, rtol=rtol)


@gpu.jit
def k_floor_int(out, a):
    i = gpu.grid(1)
    if i < a.size:
        out[i] = math.floor(a[i]) // 2 + math.ceil(a[i]) % 3  # floor/ceil give ints, as in Python


def test_floor_ceil_return_ints(rng):
    a = rng.uniform(-100, 100, 200)
    out = poisoned(200, np.int64)
    launch1d(k_floor_int, 200, out, a)
    assert out.tolist() == [math.floor(x) // 2 + math.ceil(x) % 3 for x in a]


@gpu.jit
def k_globals(out, a):
    i = gpu.grid(1)
    if i < a.size:
        p, q = PAIR
        r = a[i] * SCALE + OFFSET
        if FLAG:
            r += p * 10 + q
        r += NESTED[0][1] + NESTED[1] + PAIR[-1]
        out[i] = r + (BIG > 0)


def test_globals_are_constants(rng):
    a = rng.uniform(-10, 10, 100)
    out = poisoned(100, np.float64)
    launch1d(k_globals, 100, out, a)
    assert_same(out, a * 3 + 0.25 + 68 + 2 + 3.5 - 2 + 1, atol=1e-12)


def make_closure_kernel(scale, shift, use_shift, shape):
    @gpu.jit
    def k(out, a):
        i = gpu.grid(1)
        if i < a.size:
            v = a[i] * scale
            if use_shift:
                v += shift
            out[i] = v + shape[0] - shape[1]
    return k


def test_closure_variables_are_constants(rng):
    a = rng.integers(-100, 100, 100)
    out = poisoned(100, np.int64)
    k1 = make_closure_kernel(5, 7, True, (3, 4))
    k2 = make_closure_kernel(-2, 7, False, (10, 1))
    launch1d(k1, 100, out, a)
    assert_same(out, a * 5 + 7 - 1)
    launch1d(k2, 100, out, a)
    assert_same(out, a * -2 + 9)


def test_closure_shared_array_shape():
    n = 32

    @gpu.jit
    def k(out):
        s = gpu.shared.array(n, gpu.float32)
        t = gpu.threadIdx.x
        s[t] = t * 2
        gpu.syncthreads()
        out[t] = s[n - 1 - t]

    out = poisoned(n, np.float32)
    k[1, n](out)
    assert_same(out, (np.arange(n)[::-1] * 2).astype(np.float32))


@gpu.jit
def k_len_loop(out, a):
    i = gpu.grid(1)
    if i < 1:
        s = 0
        for k in range(len(a)):
            s += a[k]
        out[0] = s


def test_len_in_range(rng):
    a = rng.integers(-100, 100, int(rng.integers(1, 300)))
    out = poisoned(1, np.int64)
    k_len_loop[1, 1](out, a)
    assert out[0] == a.sum()


@gpu.jit
def k_kw_intrinsics(out):
    s = gpu.shared.array(dtype=gpu.int32, shape=(4,))
    t = gpu.threadIdx.x
    s[t] = t
    gpu.syncthreads()
    out[t] = gpu.atomic.add(s, 0, 0) + s[3]


def test_keyword_arguments_to_intrinsics():
    out = poisoned(4, np.int32)
    k_kw_intrinsics[1, 4](out)
    assert (out == 3).all()


@gpu.jit(boundscheck=False)
def k_kw_shape_after_dtype(out):
    s = gpu.local.array(dtype=gpu.int32, shape=(5,))
    for j in range(5):
        s[j] = j + 1
    out[0] = s[-1] + s.shape[0] * 10


def test_shape_keyword_after_dtype_keyword():
    out = poisoned(1, np.int32)
    k_kw_shape_after_dtype[1, 1](out)
    assert out[0] == 5 + 50


from math import sqrt as imported_sqrt  # noqa: E402


@gpu.jit
def k_imported_function(out, a):
    i = gpu.grid(1)
    if i < a.size:
        x = a[i]
        out[i] = imported_sqrt(x) + math.pi + x ** 2 + x ** 0.5 + 2 ** x


def test_imported_function_constants_and_pow(rng):
    a = rng.uniform(0, 10, 100)
    out = poisoned(100, np.float64)
    launch1d(k_imported_function, 100, out, a)
    assert_same(out, np.array([math.sqrt(x) + math.pi + x ** 2 + x ** 0.5 + 2 ** x for x in a]), rtol=1e-14)


@gpu.jit
def k_range_int32_bounds(out):
    i = gpu.grid(1)
    if i < out.size:
        s = 0
        for k in range(gpu.threadIdx.x, 100, gpu.blockDim.x):  # int32 bounds, int64 accumulator
            s += k
        out[i] = s * 1000 + k


def test_range_with_int32_bounds():
    out = poisoned(64, np.int64)
    k_range_int32_bounds[2, 32](out)
    want = []
    for i in range(64):
        t = i % 32
        ks = list(range(t, 100, 32))
        want.append(sum(ks) * 1000 + ks[-1])
    assert out.tolist() == want


def test_tuple_of_a_tuple_and_of_a_vector():
    @gpu.jit
    def k(out, a):
        t = tuple((a[0], a[1], a[2]))
        e = tuple()
        v = tuple(gpu.float64x2(a[3], a[4]))
        out[0] = t[0] + t[1] + t[2] + len(e)
        out[1] = v[0] - v[1]
    a = np.array([1.0, 2.0, 4.0, 10.0, 3.0])
    out = np.full(2, np.nan)
    k[1, 1](out, a)
    np.testing.assert_array_equal(out, [7.0, 7.0])
