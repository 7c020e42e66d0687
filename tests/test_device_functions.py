"""Device functions: @gpu.jit(device=True) and plain Python functions called
from kernels, specialised by argument types, returning scalars, tuples or
nothing, taking arrays, recursing; errors point into the callee."""
import math

import numpy as np
import pytest

import gpujit as gpu


@gpu.jit(device=True)
def polar(x, y):
    return math.sqrt(x * x + y * y), math.copysign(1.0, y)


def plain_clamp(v, lo, hi):
    return lo if v < lo else hi if v > hi else v


@gpu.jit(device=True)
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@gpu.jit(device=True)
def put(arr, i, v):
    arr[i] = v


@gpu.jit(device=True)
def twice(v):
    return v + v


@gpu.jit(device=True)
def block_total(x):
    sh = gpu.shared.array(64, gpu.float64)
    t = gpu.threadIdx.x
    i = gpu.grid(1)
    sh[t] = x[i] if i < x.size else 0.0
    gpu.syncthreads()
    s = 0.0
    for k in range(64):
        s += sh[k]
    gpu.syncthreads()
    return s


def test_tuples_plain_functions_and_array_arguments(rng):
    @gpu.jit
    def k(x, y, r, sign, c):
        i = gpu.grid(1)
        if i < x.size:
            rr, s = polar(x[i], y[i])
            r[i] = rr
            put(sign, i, s)
            c[i] = plain_clamp(x[i], -0.5, 0.5)

    n = 1000
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    r, sign, c = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    k[(n + 127) // 128, 128](x, y, r, sign, c)
    np.testing.assert_allclose(r, np.hypot(x, y), rtol=1e-15)
    np.testing.assert_array_equal(sign, np.copysign(1.0, y))
    np.testing.assert_array_equal(c, np.clip(x, -0.5, 0.5))


def test_specialised_per_argument_types(rng):
    @gpu.jit
    def k(a, b, outi, outf):
        i = gpu.grid(1)
        if i < a.size:
            outi[i] = twice(a[i])      # int32 -> twice(int32)
            outf[i] = twice(b[i])      # float32 -> twice(float32)

    n = 300
    a = rng.integers(-1000, 1000, n, dtype=np.int32)
    b = rng.standard_normal(n).astype(np.float32)
    outi, outf = np.full(n, -7, np.int64), np.full(n, np.nan, np.float32)
    k[3, 128](a, b, outi, outf)
    np.testing.assert_array_equal(outi, 2 * a.astype(np.int64))
    np.testing.assert_array_equal(outf, b + b)
    types = k.inspect_types_text()
    assert "outi" in types


def test_recursion(rng):
    @gpu.jit
    def k(n, out):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = fib(n[i])

    n = rng.integers(0, 16, 200)
    out = np.full(200, -1, np.int64)
    k[2, 128](n, out)
    want = [0, 1]
    while len(want) < 20:
        want.append(want[-1] + want[-2])
    np.testing.assert_array_equal(out, [want[v] for v in n])


def test_shared_memory_and_barriers_inside(rng):
    @gpu.jit
    def k(x, out):
        s = block_total(x)
        if gpu.threadIdx.x == 0:
            out[gpu.blockIdx.x] = s

    x = rng.standard_normal(64 * 5)
    out = np.full(5, np.nan)
    k[5, 64](x, out)
    np.testing.assert_allclose(out, x.reshape(5, 64).sum(1), rtol=1e-12)


def test_device_function_is_not_launchable():
    with pytest.raises(TypeError, match="device function"):
        twice[1, 1](3)
    assert twice(21) == 42  # plain Python when called from Python


def _line_of(func, marker):
    import inspect
    lines, start = inspect.getsourcelines(func)
    return start + next(i for i, l in enumerate(lines) if marker in l)


def bad_callee(a):
    return [a]  # <- list


def test_errors_point_into_the_callee():
    @gpu.jit
    def k(out):
        out[0] = bad_callee(1)

    with pytest.raises(gpu.UnsupportedError) as e:
        k[1, 1](np.zeros(1))
    assert "%s:%d:" % (__file__, _line_of(bad_callee, "# <- list")) in str(e.value)


def test_wrong_argument_count_and_keywords():
    @gpu.jit
    def k(out):
        out[0] = twice(1, 2)  # <- count

    with pytest.raises(gpu.TypingError, match="takes 1 argument "):
        k[1, 1](np.zeros(1))

    @gpu.jit
    def k2(out):
        out[0] = twice(w=1)

    with pytest.raises(gpu.TypingError, match="unexpected keyword argument .w."):
        k2[1, 1](np.zeros(1))


def test_return_type_conflict():
    def f(x):
        if x > 0:
            return 1
        return None

    @gpu.jit
    def k(out):
        out[0] = f(1)

    with pytest.raises(gpu.TypingError, match="returns"):
        k[1, 1](np.zeros(1))


def test_endless_recursion_is_an_error():
    def forever(n):
        return forever(n + 1)

    @gpu.jit
    def k(out):
        out[0] = forever(1)

    with pytest.raises(gpu.TypingError, match="return type"):
        k[1, 1](np.zeros(1))
