"""Nested functions in kernels and device functions: a `def` in the body becomes a
device function specialised on its captured constants, called directly or passed to
another device function; captured variables that are not single constants, and
nonlocal assignments, are errors that name the line."""
import numpy as np
import pytest

import gpujit as gpu

OFFSET = 123


@gpu.jit(device=True)
def apply(func, a):
    return func(a)


def reference(x, y):
    scale = 10
    bias = 12

    def weighted(a, b, c, d1=123, d2=456):
        z = 4
        return d1 + d2 + z + bias + a + b + c

    def shifted(z):
        def seven():
            return 7

        return scale + z + OFFSET + seven()

    return (apply.py_func(shifted, x), weighted(1, y, 5, 91, 53), weighted(1, 2, y),
            weighted(x, y, 3), scale * bias)


def test_nested_functions_match_python(rng):
    @gpu.jit
    def k(xs, ys, out):
        i = gpu.grid(1)
        if i < xs.size:
            x = xs[i]
            y = ys[i]
            scale = 10
            bias = 12

            def weighted(a, b, c, d1=123, d2=456):
                z = 4
                return d1 + d2 + z + bias + a + b + c

            def shifted(z):
                def seven():
                    return 7

                return scale + z + OFFSET + seven()

            out[i, 0] = apply(shifted, x)
            out[i, 1] = weighted(1, y, 5, 91, 53)
            out[i, 2] = weighted(1, 2, y)
            out[i, 3] = weighted(x, y, 3)
            out[i, 4] = scale * bias

    n = 200
    xs = rng.integers(-1000, 1000, n)
    ys = rng.integers(-1000, 1000, n)
    out = np.full((n, 5), -987654321, dtype=np.int64)
    k[(n + 63) // 64, 64](xs, ys, out)
    want = np.array([reference(int(x), int(y)) for x, y in zip(xs, ys)])
    np.testing.assert_array_equal(out, want)


def test_nested_function_in_device_function(rng):
    @gpu.jit(device=True)
    def poly(x):
        c = 3.5

        def term(v):
            return c * v * v

        sq = lambda v: v * v  # noqa: E731
        return term(x) + term(x + 1.0) + sq(x)

    @gpu.jit
    def k(x, out):
        i = gpu.grid(1)
        if i < x.size:
            out[i] = poly(x[i])

    x = rng.standard_normal(100)
    out = np.full(100, np.nan)
    k[2, 64](x, out)
    np.testing.assert_allclose(out, 3.5 * x * x + 3.5 * (x + 1) ** 2 + x * x, rtol=1e-14)


def test_capturing_a_variable_assigned_twice_is_an_error():
    def impl(c, out):
        if c:
            x = 3
        else:
            x = 6

        def inner(y):
            return y + x

        out[0] = inner(1)

    with pytest.raises(gpu.TypingError, match=r"test_closures.py:\d+: Cannot capture a constant value for variable 'x'"):
        gpu.jit("void(int64, int64[:])")(impl)


def test_capturing_a_non_constant_is_an_error():
    def impl(c, out):
        def inner(y):
            return y + c

        out[0] = inner(1)

    with pytest.raises(gpu.TypingError, match="Cannot capture the non-constant value associated with variable 'c'"):
        gpu.jit("void(int64, int64[:])")(impl)


def test_nonlocal_assignment_is_an_error():
    def impl(out):
        n = 1

        def bump():
            nonlocal n
            n = 2

        bump()
        out[0] = n

    with pytest.raises(gpu.UnsupportedError, match=r"test_closures.py:\d+: .*nonlocal"):
        gpu.jit("void(int64[:])")(impl)


@gpu.jit(device=True)
def call_with(func, *args):
    return func(*args)


@gpu.jit(device=True)
def digits(a, b, c=3, d=4):
    return a * 1000 + b * 100 + c * 10 + d


def test_star_args_and_keywords_in_device_functions(rng):
    @gpu.jit
    def k(xs, out):
        i = gpu.grid(1)
        if i < xs.size:
            x = xs[i]
            out[i, 0] = digits(1, 2, d=x)
            out[i, 1] = digits(b=x, a=1)
            out[i, 2] = digits(1, 2, 5, d=x)
            out[i, 3] = digits(1, c=x, b=2)
            out[i, 4] = call_with(digits, x, 2)
            out[i, 5] = call_with(digits, 1, x, 5, 6)
            out[i, 6] = call_with(digits, 1, x, 5)

    xs = rng.integers(0, 10, 64)
    out = np.full((64, 7), -1, dtype=np.int64)
    k[1, 64](xs, out)
    want = [[digits.py_func(1, 2, d=x), digits.py_func(b=x, a=1), digits.py_func(1, 2, 5, d=x),
             digits.py_func(1, c=x, b=2), call_with.py_func(digits.py_func, x, 2),
             call_with.py_func(digits.py_func, 1, x, 5, 6), call_with.py_func(digits.py_func, 1, x, 5)]
            for x in xs.tolist()]
    np.testing.assert_array_equal(out, want)


def test_bad_keywords_are_errors():
    def unknown(out):
        out[0] = digits(1, 2, e=3)

    def twice(out):
        out[0] = digits(1, 2, a=3)

    def missing(out):
        out[0] = digits(1, d=3)

    for fn, msg in ((unknown, "unexpected keyword argument 'e'"), (twice, "multiple values for argument 'a'"),
                    (missing, "missing argument 2")):
        with pytest.raises(gpu.TypingError, match=r"test_closures.py:\d+: .*" + msg):
            gpu.jit("void(int64[:])")(fn)


@gpu.jit(device=True)
def total(*xs):
    if len(xs) == 1:
        s = xs[0]
    elif len(xs) >= 2:
        s = xs[0] + xs[1]
    else:
        s = -1
    return s


def test_len_of_star_args_prunes_other_lengths(rng):
    @gpu.jit
    def k(a, out):
        i = gpu.grid(1)
        if i < a.size:
            out[i, 0] = total(a[i])
            out[i, 1] = total(a[i], 3)
            out[i, 2] = total()

    a = rng.integers(-50, 50, 40)
    out = np.full((40, 3), 999, dtype=np.int64)
    k[1, 64](a, out)
    np.testing.assert_array_equal(out, [[total.py_func(x), total.py_func(x, 3), total.py_func()] for x in a.tolist()])
