"""Arithmetic semantics: kernels against CPython itself (ints wrap to 64 bits),
NumPy for floats, and numba.cuda's type promotion rules."""
import math
import operator

import numpy as np
import pytest

import gpujit as gpu
from conftest import assert_same, launch1d, poisoned, random_array

I64_MIN, I64_MAX = -2**63, 2**63 - 1
EDGE_I64 = [0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100, I64_MAX, I64_MIN, I64_MAX - 1, I64_MIN + 1,
            2**31, -2**31, 2**32 + 5, -(2**40) - 3]


def wrap64(v):
    return (v + 2**63) % 2**64 - 2**63


def int_operands(rng, n=256, nonzero_b=True):
    """Pairs of int64 mixing edge values with random ones of all magnitudes."""
    edge = np.array(EDGE_I64, np.int64)
    a = np.concatenate([np.repeat(edge, len(edge)), random_array(rng, n, np.int64),
                        rng.integers(-1000, 1000, n)]).astype(np.int64)
    b = np.concatenate([np.tile(edge, len(edge)), random_array(rng, n, np.int64),
                        rng.integers(-50, 50, n)]).astype(np.int64)
    if nonzero_b:
        b[b == 0] = 3
    return a, b


# -- binary int64 ops, one kernel each -------------------------------------------------------------
@gpu.jit
def k_add(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@gpu.jit
def k_sub(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a[i] - b[i]


@gpu.jit
def k_mul(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a[i] * b[i]


@gpu.jit
def k_floordiv(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a[i] // b[i]


@gpu.jit
def k_mod(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a[i] % b[i]


@gpu.jit
def k_and(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a[i] & b[i]


@gpu.jit
def k_or(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a[i] | b[i]


@gpu.jit
def k_xor(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a[i] ^ b[i]


@gpu.jit
def k_lshift(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a[i] << b[i]


@gpu.jit
def k_rshift(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a[i] >> b[i]


@gpu.jit
def k_truediv(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a[i] / b[i]


@gpu.jit
def k_pow(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a[i] ** b[i]


INT_OPS = [
    (k_add, operator.add), (k_sub, operator.sub), (k_mul, operator.mul),
    (k_floordiv, operator.floordiv), (k_mod, operator.mod),
    (k_and, operator.and_), (k_or, operator.or_), (k_xor, operator.xor),
]


@pytest.mark.parametrize("kernel,op", INT_OPS, ids=[k.__name__ for k, _ in INT_OPS])
def test_int64_binary_ops_match_cpython(rng, kernel, op):
    a, b = int_operands(rng)
    out = poisoned(a.size, np.int64)
    launch1d(kernel, a.size, out, a, b)
    want = [wrap64(op(int(x), int(y))) for x, y in zip(a, b)]
    assert out.tolist() == want


def test_floordiv_mod_signs_match_cpython():
    vals = [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (-6, 3), (0, -5), (1, I64_MIN), (-1, I64_MIN),
            (I64_MIN, 2), (I64_MIN, -2), (I64_MAX, -1), (I64_MAX, I64_MIN)]
    a = np.array([x for x, _ in vals], np.int64)
    b = np.array([y for _, y in vals], np.int64)
    q, r = poisoned(a.size, np.int64), poisoned(a.size, np.int64)
    launch1d(k_floordiv, a.size, q, a, b)
    launch1d(k_mod, a.size, r, a, b)
    assert q.tolist() == [x // y for x, y in vals]
    assert r.tolist() == [x % y for x, y in vals]


def test_int64_min_floordiv_minus_one_wraps():
    # CPython gives 2**63, which wraps to int64 min in 64 bits (as NumPy); x % -1 is 0.
    a = np.array([I64_MIN, I64_MIN], np.int64)
    b = np.array([-1, -1], np.int64)
    q, r = poisoned(2, np.int64), poisoned(2, np.int64)
    launch1d(k_floordiv, 2, q, a, b)
    launch1d(k_mod, 2, r, a, b)
    assert q.tolist() == [I64_MIN, I64_MIN]
    assert r.tolist() == [0, 0]


def test_int_division_by_zero_gives_zero_like_numpy():
    a = np.array([5, -5, 0, I64_MAX, I64_MIN], np.int64)
    b = np.zeros(5, np.int64)
    q, r = poisoned(5, np.int64), poisoned(5, np.int64)
    launch1d(k_floordiv, 5, q, a, b)
    launch1d(k_mod, 5, r, a, b)
    assert q.tolist() == [0] * 5
    assert r.tolist() == [0] * 5


def test_int_truediv_by_zero_gives_inf_nan():
    a = np.array([5, -5, 0], np.int64)
    b = np.zeros(3, np.int64)
    out = poisoned(3, np.float64)
    launch1d(k_truediv, 3, out, a, b)
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2])


def test_int_truediv_gives_float64(rng):
    a, b = int_operands(rng)
    out = poisoned(a.size, np.float64)
    launch1d(k_truediv, a.size, out, a, b)
    # CPython's int/int is correctly rounded; the kernel converts each to double first
    want = np.array([float(x) / float(y) for x, y in zip(a, b)])
    assert_same(out, want)
    small = np.abs(a) < 2**53
    small &= np.abs(b) < 2**53
    assert out[small].tolist() == [int(x) / int(y) for x, y in zip(a[small], b[small])]


def test_shifts_match_cpython(rng):
    a, _ = int_operands(rng)
    s = rng.integers(0, 64, a.size).astype(np.int64)
    s[:5] = [0, 1, 31, 32, 63]
    out = poisoned(a.size, np.int64)
    launch1d(k_lshift, a.size, out, a, s)
    assert out.tolist() == [wrap64(int(x) << int(y)) for x, y in zip(a, s)]
    launch1d(k_rshift, a.size, out, a, s)
    assert out.tolist() == [int(x) >> int(y) for x, y in zip(a, s)]


def test_negative_shift_counts_count_as_the_whole_width(rng):
    # numba's answer, documented (CPython raises ValueError: negative shift count)
    a, _ = int_operands(rng)
    a[:2] = [5, -5]
    s = rng.integers(-2**62, 0, a.size).astype(np.int64)
    s[:4] = [-1, -1, -64, -2**63]
    out = poisoned(a.size, np.int64)
    launch1d(k_lshift, a.size, out, a, s)
    assert out.tolist() == [0] * a.size
    launch1d(k_rshift, a.size, out, a, s)
    assert out.tolist() == [-1 if x < 0 else 0 for x in a]


def test_int_pow_matches_cpython(rng):
    a = np.concatenate([rng.integers(-20, 20, 200), [0, 1, -1, 2, -2, 3]]).astype(np.int64)
    b = np.concatenate([rng.integers(0, 14, 200), [0, 0, 63, 62, 63, 39]]).astype(np.int64)
    out = poisoned(a.size, np.int64)
    launch1d(k_pow, a.size, out, a, b)
    assert out.tolist() == [wrap64(int(x) ** int(y)) for x, y in zip(a, b)]


# -- float ops -----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel,op", [(k_add, operator.add), (k_sub, operator.sub), (k_mul, operator.mul),
                                       (k_truediv, operator.truediv)],
                         ids=["add", "sub", "mul", "truediv"])
def test_float_ops_match_numpy(rng, dtype, kernel, op):
    a = random_array(rng, 300, dtype, -100, 100)
    b = random_array(rng, 300, dtype, -100, 100)
    out = poisoned(300, dtype)
    launch1d(kernel, 300, out, a, b)
    assert_same(out, op(a, b))
    assert out.dtype == dtype


def test_float_floordiv_mod_match_cpython(rng):
    a = np.concatenate([rng.uniform(-100, 100, 200), [7.5, -7.5, 7.5, -7.5, 0.0, -0.0, 6.0, -6.0]])
    b = np.concatenate([rng.uniform(-10, 10, 200), [2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 3.0, -3.0]])
    q, r = poisoned(a.size, np.float64), poisoned(a.size, np.float64)
    launch1d(k_floordiv, a.size, q, a, b)
    launch1d(k_mod, a.size, r, a, b)
    want_q = [float(x) // float(y) for x, y in zip(a, b)]
    want_r = [float(x) % float(y) for x, y in zip(a, b)]
    np.testing.assert_allclose(q, want_q, rtol=1e-15, atol=0)
    np.testing.assert_allclose(r, want_r, rtol=1e-12, atol=1e-12)
    # the sign of a float remainder follows the divisor, as in Python
    nz = np.array(want_r) != 0
    assert (np.sign(r[nz]) == np.sign(b[nz])).all()


def test_float_mod_is_exact_for_large_quotients(rng):
    # CPython's % is exact (fmod); LLVM's frem on NVPTX is a - trunc(a / b) * b, wrong once the
    # quotient passes 2**53 -- kernels call fmod (libdevice / libm) instead
    a = np.concatenate([rng.uniform(-1, 1, 100) * 10.0 ** rng.integers(15, 300, 100),
                        [1e300, -1e300, 1e22, 5e15 + 1, 2.0 ** 60 + 3 * 2.0 ** 8]])
    b = np.concatenate([rng.uniform(0.5, 10, 100) * rng.choice([-1, 1], 100), [3.0, 3.0, 7.0, 0.1, 7.0]])
    r = poisoned(a.size, np.float64)
    launch1d(k_mod, a.size, r, a, b)
    want = np.array([float(x) % float(y) for x, y in zip(a.tolist(), b.tolist())])
    assert r.tobytes() == want.tobytes(), np.nonzero(r != want)


def test_float_mod_ptx_calls_exact_fmod():
    ptx = gpu.compile_ptx(k_mod, "void(float64[::1], float64[::1], float64[::1])")[0]
    assert "cvt.rzi.f64.f64" not in ptx      # not frem's a - trunc(a / b) * b


def test_float_division_by_zero_gives_inf_nan():
    a = np.array([1.0, -1.0, 0.0], np.float64)
    b = np.zeros(3)
    out = poisoned(3, np.float64)
    launch1d(k_truediv, 3, out, a, b)
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2])


def test_float_pow_matches_cpython(rng):
    a = rng.uniform(0.01, 10, 200)
    b = rng.uniform(-4, 4, 200)
    out = poisoned(200, np.float64)
    launch1d(k_pow, 200, out, a, b)
    np.testing.assert_allclose(out, [float(x) ** float(y) for x, y in zip(a, b)], rtol=1e-14)


# -- unary ops -----------------------------------------------------------------------------
@gpu.jit
def k_unary(neg, pos, inv, nt, a):
    i = gpu.grid(1)
    if i < a.size:
        x = a[i]
        neg[i] = -x
        pos[i] = +x
        inv[i] = ~x
        nt[i] = not x


def test_unary_ops_int64(rng):
    a, _ = int_operands(rng, nonzero_b=False)
    a[:3] = [0, I64_MIN, I64_MAX]
    neg, pos, inv = (poisoned(a.size, np.int64) for _ in range(3))
    nt = np.zeros(a.size, np.bool_)
    nt[:] = a != 0  # the opposite of the answer
    launch1d(k_unary, a.size, neg, pos, inv, nt, a)
    assert neg.tolist() == [wrap64(-int(x)) for x in a]
    assert pos.tolist() == a.tolist()
    assert inv.tolist() == [~int(x) for x in a]
    assert nt.tolist() == [not x for x in a]


@gpu.jit
def k_unary_float(neg, pos, nt, a):
    i = gpu.grid(1)
    if i < a.size:
        neg[i] = -a[i]
        pos[i] = +a[i]
        nt[i] = not a[i]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_ops_float(rng, dtype):
    a = random_array(rng, 100, dtype)
    a[:2] = [0.0, -0.0]
    neg, pos = poisoned(100, dtype), poisoned(100, dtype)
    nt = np.zeros(100, np.bool_)
    launch1d(k_unary_float, 100, neg, pos, nt, a)
    assert_same(neg, -a)
    assert_same(pos, a)
    assert nt.tolist() == [not x for x in a]
    assert np.signbit(neg[0]) and not np.signbit(neg[1])


# -- augmented assignment --------------------------------------------------------------------
@gpu.jit
def k_augassign(out, a, b):
    i = gpu.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        r = x
        r += y
        r *= 3
        r -= x
        r //= y
        r %= 1000003
        r <<= 2
        r >>= 1
        r |= 5
        r &= 0xFFFFFF
        r ^= y
        out[i] = r
        out[i] += 1


def test_augmented_assignment(rng):
    a = rng.integers(-10**6, 10**6, 300).astype(np.int64)
    b = rng.integers(1, 1000, 300).astype(np.int64) * rng.choice([-1, 1], 300)
    out = poisoned(300, np.int64)
    launch1d(k_augassign, 300, out, a, b)

    def ref(x, y):
        r = x
        r += y
        r *= 3
        r -= x
        r //= y
        r %= 1000003
        r <<= 2
        r >>= 1
        r |= 5
        r &= 0xFFFFFF
        r ^= y
        return r + 1
    assert out.tolist() == [ref(int(x), int(y)) for x, y in zip(a, b)]


# -- comparisons --------------------------------------------------------------------------------
@gpu.jit
def k_compare(out, a, b):
    i = gpu.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[i, 0] = x < y
        out[i, 1] = x <= y
        out[i, 2] = x == y
        out[i, 3] = x != y
        out[i, 4] = x > y
        out[i, 5] = x >= y


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint32, np.uint64, np.float32, np.float64])
def test_comparisons(rng, dtype):
    a = random_array(rng, 200, dtype) if np.dtype(dtype).kind != "f" else rng.integers(-5, 5, 200).astype(dtype)
    b = a.copy()
    b[::2] = random_array(rng, 100, dtype) if np.dtype(dtype).kind != "f" else rng.integers(-5, 5, 100).astype(dtype)
    if np.dtype(dtype).kind == "f":
        a[0] = np.nan
    out = np.zeros((200, 6), np.bool_)
    out[:] = True
    launch1d(k_compare, 200, out, a, b)
    want = np.stack([a < b, a <= b, a == b, a != b, a > b, a >= b], axis=1)
    assert_same(out, want)


@gpu.jit
def k_mixed_sign_compare(out, a, b):
    i = gpu.grid(1)
    if i < a.size:
        out[i] = a[i] < b[i]


def test_signed_unsigned_comparison_is_mathematical():
    # numba compares int64 with uint64 after promoting both to float64; -1 < 2**64-1 holds
    a = np.array([-1, 0, 5, -(2**62)], np.int64)
    b = np.array([2**64 - 1, 0, 3, 1], np.uint64)
    out = np.zeros(4, np.bool_)
    launch1d(k_mixed_sign_compare, 4, out, a, b)
    assert out.tolist() == [True, False, False, True]


# -- numba.cuda promotion rules, observed through values ----------------------------------------------
@gpu.jit
def k_add_into(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


def test_int32_plus_int32_is_int64():
    a = np.array([2**31 - 1, -2**31], np.int32)
    b = np.array([1, -1], np.int32)
    out = poisoned(2, np.int64)
    launch1d(k_add_into, 2, out, a, b)
    assert out.tolist() == [2**31, -2**31 - 1]


def test_float32_plus_float32_stays_float32():
    a = np.array([1.0, 16777216.0], np.float32)
    b = np.array([1e-8, 1.0], np.float32)
    out = poisoned(2, np.float64)
    launch1d(k_add_into, 2, out, a, b)
    assert out.tolist() == [1.0, 16777216.0]  # rounded in float32, then widened


def test_float32_plus_int64_is_float64():
    a = np.array([0.5, 1.0], np.float32)
    b = np.array([2**40 + 1, 2**30 + 1], np.int64)
    out = poisoned(2, np.float64)
    launch1d(k_add_into, 2, out, a, b)
    assert out.tolist() == [2**40 + 1.5, 2**30 + 2.0]


def test_float32_plus_int16_is_float32():
    a = np.array([16777216.0], np.float32)
    b = np.array([1], np.int16)
    out = poisoned(1, np.float64)
    launch1d(k_add_into, 1, out, a, b)
    assert out.tolist() == [16777216.0]  # float32 can't hold 2**24 + 1


def test_int64_plus_uint64_is_float64():
    a = np.array([-1, 2**53], np.int64)
    b = np.array([2**64 - 1, 1], np.uint64)
    out = poisoned(2, np.float64)
    launch1d(k_add_into, 2, out, a, b)
    assert out.tolist() == [float(2**64 - 1) - 1.0, float(2**53)]


@gpu.jit
def k_types(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        r = a[i] + b[i]
        out[i] = r


@pytest.mark.parametrize("ta,tb,want", [
    ("int32", "int32", "int64"), ("float32", "float32", "float32"), ("int64", "uint64", "float64"),
    ("float32", "int64", "float64"), ("float32", "int16", "float32"), ("uint8", "uint8", "uint64"),
    ("int8", "uint8", "int64"), ("bool", "bool", "int64"), ("float64", "float32", "float64"),
])
def test_promotion_in_inspect_types(ta, tb, want):
    sig = "void(float64[::1], %s[::1], %s[::1])" % (ta, tb)
    text = k_types.inspect_types_text(sig)
    types = dict(line.split()[-2:] for line in text.splitlines() if line.strip().startswith("line"))
    assert types["r"] == want, text


@gpu.jit
def k_scalar_args(out, x, y, z):
    out[0] = x + 1
    out[1] = y * 2
    out[2] = z + 0


def test_scalar_argument_types():
    out = poisoned(3, np.float64)
    k_scalar_args[1, 1](out, 41, 1.25, True)
    assert out.tolist() == [42.0, 2.5, 1.0]
    assert "void(float64[::1], int64, float64, bool)" in k_scalar_args.signatures
    k_scalar_args[1, 1](out, np.int8(127), np.float32(0.1), np.uint16(7))
    assert "void(float64[::1], int8, float32, uint16)" in k_scalar_args.signatures
    assert out[0] == 128.0  # int8 + int64 literal: int64, no int8 wrap
    assert out[1] == float(np.float32(0.1) * np.float32(2))
    assert out[2] == 7.0


@gpu.jit
def k_small_int_wrap(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a[i] * b[i]


def test_store_truncates_to_element_type(rng):
    a = random_array(rng, 100, np.int32)
    b = random_array(rng, 100, np.int32)
    out = poisoned(100, np.int16)
    launch1d(k_small_int_wrap, 100, out, a, b)
    assert_same(out, (a.astype(np.int64) * b.astype(np.int64)).astype(np.int16))


def test_float_to_int_store_truncates_toward_zero(rng):
    a = rng.uniform(-1000, 1000, 100)
    b = np.ones(100)
    out = poisoned(100, np.int32)
    launch1d(k_small_int_wrap, 100, out, a, b)
    assert out.tolist() == [math.trunc(x) for x in a]
