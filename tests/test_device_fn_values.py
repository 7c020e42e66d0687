"""Compile-time values as device-function arguments: intrinsics (atomics, math,
min/max), device and plain Python functions, dtypes (NumPy types, np.dtype
instances, gpujit's names, strings) and constants a callee needs at compile
time (shapes, branch flags). Each is part of the callee's specialisation, as
in numba.cuda; a run-time value where one is needed is an error at its line."""
import inspect
import math

import numpy as np
import pytest

import gpujit as gpu
from conftest import assert_same, poisoned, random_array


def _line_of(func, marker):
    lines, start = inspect.getsourcelines(func)
    return start + next(i for i, l in enumerate(lines) if marker in l)


# ---- intrinsics passed as values ----------------------------------------------------------

@gpu.jit(device=True)
def bump(op, arr, i, v):
    return op(arr, i, v)


def test_atomic_ops_passed_to_a_device_function(rng):
    @gpu.jit
    def k(keys, vals, hist, hi, lo):
        i = gpu.grid(1)
        if i < keys.size:
            bump(gpu.atomic.add, hist, keys[i], 1)
            bump(gpu.atomic.max, hi, keys[i], vals[i])
            bump(gpu.atomic.min, lo, keys[i], vals[i])

    n, nbins = 3000, 17
    keys = rng.integers(0, nbins, n).astype(np.int64)
    vals = random_array(rng, n, np.int32, -1000, 1000)
    hist = np.zeros(nbins, np.uint32)
    hi = np.full(nbins, np.iinfo(np.int32).min, np.int32)
    lo = np.full(nbins, np.iinfo(np.int32).max, np.int32)
    k[(n + 127) // 128, 128](keys, vals, hist, hi, lo)
    want_hist = np.bincount(keys, minlength=nbins).astype(np.uint32)
    want_hi = np.full(nbins, np.iinfo(np.int32).min, np.int32)
    want_lo = np.full(nbins, np.iinfo(np.int32).max, np.int32)
    np.maximum.at(want_hi, keys, vals)
    np.minimum.at(want_lo, keys, vals)
    assert_same(hist, want_hist)
    assert_same(hi, want_hi)
    assert_same(lo, want_lo)


def test_atomic_returns_old_value_through_a_passed_op(rng):
    @gpu.jit
    def k(counter, got):
        i = gpu.grid(1)
        if i < got.size:
            got[i] = bump(gpu.atomic.add, counter, 0, 1)

    n = 500
    counter = np.zeros(1, np.int64)
    got = poisoned(n, np.int64)
    k[(n + 63) // 64, 64](counter, got)
    assert counter[0] == n
    assert_same(np.sort(got), np.arange(n, dtype=np.int64))


@gpu.jit(device=True)
def apply1(f, x):
    return f(x)


@gpu.jit(device=True)
def apply2(g, a, b):
    return g(a, b)


def test_math_and_builtins_passed_as_values(rng):
    @gpu.jit
    def k(x, y, s, mn, mx):
        i = gpu.grid(1)
        if i < x.size:
            s[i] = apply1(math.sin, x[i])
            mn[i] = apply2(min, x[i], y[i])
            mx[i] = apply2(max, x[i], y[i])

    n = 300
    x, y = random_array(rng, n, np.float64), random_array(rng, n, np.float64)
    s, mn, mx = poisoned(n, np.float64), poisoned(n, np.float64), poisoned(n, np.float64)
    k[(n + 63) // 64, 64](x, y, s, mn, mx)
    assert_same(s, np.sin(x))
    assert_same(mn, np.minimum(x, y))
    assert_same(mx, np.maximum(x, y))


# ---- functions passed as values -----------------------------------------------------------

@gpu.jit(device=True)
def cube(v):
    return v * v * v


def halve_plus_one(v):  # a plain Python function
    return v / 2 + 1


def test_device_and_python_functions_passed_as_values(rng):
    @gpu.jit
    def k(x, a, b):
        i = gpu.grid(1)
        if i < x.size:
            a[i] = apply1(cube, x[i])
            b[i] = apply1(halve_plus_one, x[i])

    n = 200
    x = random_array(rng, n, np.float64)
    a, b = poisoned(n, np.float64), poisoned(n, np.float64)
    k[(n + 63) // 64, 64](x, a, b)
    assert_same(a, x * x * x)
    assert_same(b, x / 2 + 1)


def test_two_functions_of_one_name_stay_apart(rng):
    def make(c):
        def f(v):
            return v + c
        return f

    plus3, times2 = make(3.0), (lambda v: v * 2.0)
    plus3.__qualname__ = times2.__qualname__ = "f"

    @gpu.jit
    def k(x, a, b):
        i = gpu.grid(1)
        if i < x.size:
            a[i] = apply1(plus3, x[i])
            b[i] = apply1(times2, x[i])

    n = 100
    x = random_array(rng, n, np.float64)
    a, b = poisoned(n, np.float64), poisoned(n, np.float64)
    k[(n + 63) // 64, 64](x, a, b)
    assert_same(a, x + 3.0)
    assert_same(b, x * 2.0)


# ---- dtypes and shapes passed as values ---------------------------------------------------

@gpu.jit(device=True)
def reverse_block(x, out, dt, n):
    s = gpu.shared.array(n, dt)
    t = gpu.threadIdx.x
    i = gpu.grid(1)
    s[t] = x[i]
    gpu.syncthreads()
    out[i] = s[n - 1 - t]


@pytest.mark.parametrize("dt", [np.float32, np.dtype("f4"), gpu.float32], ids=["np.float32", "np.dtype", "gpu.float32"])
def test_shared_array_of_a_passed_dtype(rng, dt):
    @gpu.jit
    def k(x, out):
        reverse_block(x, out, dt, 64)

    x = random_array(rng, 64 * 5, np.float64)
    out = poisoned(x.size, np.float64)
    k[5, 64](x, out)
    want = x.astype(np.float32).astype(np.float64).reshape(5, 64)[:, ::-1].ravel()
    assert_same(out, want)


def test_shared_array_of_a_dtype_named_by_a_string_constant(rng):
    @gpu.jit
    def k(x, out):
        reverse_block(x, out, "int16", 32)

    x = random_array(rng, 64, np.int64, -30000, 30000)
    out = poisoned(64, np.int64)
    k[2, 32](x, out)
    assert_same(out, x.reshape(2, 32)[:, ::-1].ravel())


def test_one_callee_two_literal_shapes(rng):
    @gpu.jit
    def k(x, a, b):
        if gpu.blockDim.x == 32:
            reverse_block(x, a, np.int32, 32)
        else:
            reverse_block(x, b, np.int16, 64)

    x = random_array(rng, 128, np.int64, -30000, 30000)
    a, b = poisoned(128, np.int64), poisoned(128, np.int64)
    k[4, 32](x, a, b)
    k[2, 64](x, a, b)
    assert_same(a, x.reshape(4, 32)[:, ::-1].ravel())
    assert_same(b, x.reshape(2, 64)[:, ::-1].ravel())


@gpu.jit(device=True)
def tile_op(ary, op, dt, shape, inc):
    tx, ty = gpu.threadIdx.x, gpu.threadIdx.y
    s = gpu.shared.array(shape, dt)
    s[tx, ty] = ary[tx, ty]
    gpu.syncthreads()
    op(s, (shape[0] - 1 - tx, ty), inc)
    gpu.syncthreads()
    ary[tx, ty] = s[tx, ty]


@gpu.jit(device=True)
def tile_outer(ary, op, dt, shape, inc):
    tile_op(ary, op, dt, shape, inc)  # passed on: two levels deep


def test_nested_passing_two_levels_deep(rng):
    @gpu.jit
    def k(u, f):
        if gpu.blockIdx.x == 0:
            tile_outer(u, gpu.atomic.xor, np.uint32, (4, 8), 0x5A5A)
        else:
            tile_outer(f, gpu.atomic.sub, np.float64, (4, 8), 0.25)

    u = random_array(rng, (4, 8), np.uint32)
    f = random_array(rng, (4, 8), np.float64)
    wu, wf = u ^ np.uint32(0x5A5A), f - 0.25
    k[2, (4, 8)](u, f)
    assert_same(u, wu)
    assert_same(f, wf)


# ---- branches on literal arguments --------------------------------------------------------

@gpu.jit(device=True)
def pick(x, i, scaled):
    j = i
    if scaled:
        j = i * 1.5  # a float index: only typed where scaled is true
    return x[j]


def test_branch_on_a_literal_argument_is_pruned(rng):
    @gpu.jit
    def k(x, out):
        i = gpu.grid(1)
        if i < x.size:
            out[i] = pick(x, i, False)

    x = random_array(rng, 100, np.float32)
    out = poisoned(100, np.float32)
    k[2, 64](x, out)
    assert_same(out, x)

    @gpu.jit
    def k_runtime(x, out, flag):
        i = gpu.grid(1)
        if i < x.size:
            out[i] = pick(x, i, flag)

    with pytest.raises(gpu.TypingError, match="integer"):
        k_runtime[1, 1](x, out, False)


@gpu.jit(device=True)
def wrap_index(a, idx, wrap):
    if wrap:
        idx = (idx[0] % 4, idx[1] % 8)  # widens the tuple's items to int64
    gpu.atomic.add(a, idx, 1)


def test_tuple_variable_widened_by_a_later_assignment(rng):
    @gpu.jit
    def k(a, wrap):
        wrap_index(a, (gpu.threadIdx.x, gpu.threadIdx.y), wrap)

    a = random_array(rng, (4, 8), np.uint32, 0, 1000)
    want = a + 2
    k[1, (4, 8)](a, True)
    k[1, (4, 8)](a, False)
    assert_same(a, want)


# ---- in the kernel itself -----------------------------------------------------------------

F4 = np.dtype("f4")


def test_locals_hold_functions_dtypes_and_namespaces(rng):
    @gpu.jit
    def k(x, hist, out):
        op = gpu.atomic.add
        dt = F4
        tid = gpu.threadIdx
        s = gpu.shared.array(64, dt)
        s[tid.x] = x[tid.x]
        gpu.syncthreads()
        out[tid.x] = s[63 - tid.x]
        op(hist, tid.x % 4, 1)

    x = random_array(rng, 64, np.float32)
    hist = np.zeros(4, np.int32)
    out = poisoned(64, np.float32)
    k[1, 64](x, hist, out)
    assert_same(out, x[::-1])
    assert_same(hist, np.full(4, 16, np.int32))


# ---- errors -------------------------------------------------------------------------------

@gpu.jit(device=True)
def scratch(x, n):
    s = gpu.shared.array(n, np.float32)  # <- shape
    s[0] = x[0]
    return s[0]


def test_runtime_value_for_a_shape_is_an_error():
    @gpu.jit
    def k(x, n):
        x[0] = scratch(x, n)

    with pytest.raises(gpu.TypingError) as e:
        k[1, 1](np.zeros(4, np.float32), 4)
    msg = str(e.value)
    assert "%s:%d:" % (__file__, _line_of(scratch, "# <- shape")) in msg
    assert "run-time value for 'n'" in msg


def test_runtime_value_after_a_literal_one_is_an_error():
    @gpu.jit
    def k(x, n):
        x[0] = scratch(x, 4)
        x[1] = scratch(x, n)  # <- runtime

    with pytest.raises(gpu.TypingError) as e:
        k[1, 1](np.zeros(4, np.float32), 4)
    msg = str(e.value)
    assert "%s:%d:" % (__file__, _line_of(k.py_func, "# <- runtime")) in msg
    assert "argument 2 of scratch() must be a compile-time constant" in msg
    assert "%s:%d" % (__file__, _line_of(scratch, "# <- shape")) in msg


@gpu.jit(device=True)
def call_it(op, arr):
    op(arr, 0, 1)  # <- call


def test_runtime_value_where_a_function_is_called_is_an_error():
    @gpu.jit
    def k(arr, v):
        call_it(v, arr)

    with pytest.raises(gpu.TypingError) as e:
        k[1, 1](np.zeros(1, np.int32), 1.5)
    msg = str(e.value)
    assert "%s:%d:" % (__file__, _line_of(call_it, "# <- call")) in msg
    assert "cannot call a value of type float64" in msg


def test_a_global_array_passed_with_a_function(rng):
    # a closure's NumPy array is a constant array in the kernel; len() is passed as a value
    table = rng.uniform(-1, 1, int(rng.integers(3, 40)))

    @gpu.jit
    def k(out):
        out[0] = apply1(len, table)

    out = np.full(1, np.nan)
    k[1, 1](out)
    assert out[0] == table.size
