"""Control flow and the bytecode constructs behind it: if/elif/else, while
(and while/else, for/else), every range form incl. negative steps, break,
continue, early return, chained comparisons, and/or in value context,
conditional expressions, tuple packing/unpacking. Each kernel is checked
against the same function run by CPython."""
import numpy as np
import pytest

import gpujit as gpu
from conftest import assert_same, launch1d, poisoned


def run_vs_python(kernel, *inputs, out_dtype=np.int64):
    """Launch kernel(out, *inputs) over len(inputs[0]) threads; compare with
    kernel.py_func run by CPython, one thread at a time (threads don't interact here)."""
    n = len(inputs[0])
    out = poisoned(n, out_dtype)
    launch1d(kernel, n, out, *inputs)
    want = poisoned(n, out_dtype)
    for i in range(n):
        _python_thread(kernel.py_func, i, want, *inputs)
    assert_same(out, want)
    return out


class _FakeGpu:
    """Enough of gpujit for CPython to run a 1-D kernel body as one thread."""

    def __init__(self, i):
        self.i = i

    def grid(self, n):
        return self.i


def _python_thread(fn, i, *args):
    import types
    g = dict(fn.__globals__)
    g["gpu"] = _FakeGpu(i)
    types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)(*args)


@gpu.jit
def k_if_chain(out, a):
    i = gpu.grid(1)
    if i >= out.size:
        return
    x = a[i]
    if x < -50:
        r = 1
    elif x < 0:
        r = 2
    elif x == 0:
        r = 3
    elif x > 90:
        r = 4
    else:
        r = 5
    if x % 2 == 0:
        r += 10
    out[i] = r


def test_if_elif_else(rng):
    a = rng.integers(-100, 100, 300)
    a[:3] = [0, -50, 91]
    run_vs_python(k_if_chain, a)


@gpu.jit
def k_while(out, a):
    i = gpu.grid(1)
    if i < out.size:
        n = a[i]
        steps = 0
        while n != 1 and steps < 1000:  # Collatz
            if n % 2 == 0:
                n //= 2
            else:
                n = 3 * n + 1
            steps += 1
        out[i] = steps


def test_while_loop(rng):
    run_vs_python(k_while, rng.integers(1, 10000, 200))


@gpu.jit
def k_while_else(out, a):
    i = gpu.grid(1)
    if i < out.size:
        n = a[i]
        k = 2
        r = 0
        while k * k <= n:
            if n % k == 0:
                r = k  # smallest factor
                break
            k += 1
        else:
            r = -1  # prime
        out[i] = r


def test_while_else(rng):
    run_vs_python(k_while_else, rng.integers(2, 5000, 200))


@gpu.jit
def k_for_else(out, a):
    i = gpu.grid(1)
    if i < out.size:
        n = a[i]
        r = -1
        for k in range(2, n):
            if k * k > n:
                break
            if n % k == 0:
                r = k
                break
        else:
            r = -2
        out[i] = r


def test_for_else(rng):
    a = rng.integers(0, 3000, 200)
    a[:4] = [0, 1, 2, 3]
    run_vs_python(k_for_else, a)


@gpu.jit
def k_ranges(out, a, b, s):
    i = gpu.grid(1)
    if i < out.size:
        acc = 0
        for k in range(a[i]):
            acc += k
        for k in range(a[i], b[i]):
            acc = acc * 3 + k
            acc %= 1000000007
        for k in range(a[i], b[i], s[i]):
            acc = acc * 7 + k
            acc %= 1000000007
        for k in range(b[i], a[i], -s[i]):
            acc = acc * 5 - k
            acc %= 1000000007
        out[i] = acc


def test_range_forms(rng):
    a = rng.integers(-20, 20, 300)
    b = rng.integers(-20, 20, 300)
    s = rng.integers(1, 6, 300)
    run_vs_python(k_ranges, a, b, s)


@gpu.jit
def k_range_neg_step(out, start, stop, step):
    i = gpu.grid(1)
    if i < out.size:
        c = 0
        last = 12345
        for k in range(start[i], stop[i], step[i]):
            c += 1
            last = k
        out[i] = c * 100000 + last


def test_range_any_sign_step(rng):
    start = rng.integers(-30, 30, 400)
    stop = rng.integers(-30, 30, 400)
    step = rng.integers(1, 7, 400) * rng.choice([-1, 1], 400)
    start[:4] = [10, 0, 5, -5]
    stop[:4] = [0, 10, 5, -5]
    step[:4] = [-1, -3, -1, 1]
    run_vs_python(k_range_neg_step, start, stop, step)


def test_range_float_arguments(rng):
    """range() over floats: each truncated toward zero, as numba-cuda converts it (to int32
    beside 32-bit ints, to int64 beside a 64-bit one); NaN counts as 0."""
    start = rng.uniform(-30, 30, 400)
    stop = rng.uniform(-30, 30, 400)
    step = rng.uniform(1, 7, 400) * rng.choice([-1, 1], 400)
    start[:3], stop[:3], step[:3] = [0.0, -2.5, 0.5], [5.7, np.nan, 3.9], [1.0, 1.0, 1.5]
    out = poisoned(400, np.int64)
    k_range_neg_step[4, 128](out, start, stop, step)
    expect = []
    for a, b, c in zip(start, stop, step):
        r = range(int(a), 0 if b != b else int(b), int(c))
        expect.append(len(r) * 100000 + (r[-1] if len(r) else 12345))
    np.testing.assert_array_equal(out, expect)
    # a float beside int64 and int32 arguments
    for ints in (np.int64, np.int32):
        lo = rng.integers(-20, 0, 50).astype(ints)
        hi = rng.uniform(0, 20, 50)
        st = rng.integers(1, 4, 50).astype(ints)
        out = poisoned(50, np.int64)
        k_range_neg_step[1, 64](out, lo, hi, st)
        expect = [len(r) * 100000 + (r[-1] if len(r) else 12345)
                  for r in (range(int(a), int(b), int(c)) for a, b, c in zip(lo, hi, st))]
        np.testing.assert_array_equal(out, expect)


@gpu.jit
def k_const_neg_range(out):
    i = gpu.grid(1)
    if i < 1:
        acc = 0
        for k in range(10, -10, -3):
            acc = acc * 2 + k
        for k in range(5, 5, -1):
            acc += 1000
        out[0] = acc


def test_constant_negative_range():
    out = poisoned(1, np.int64)
    k_const_neg_range[1, 1](out)
    acc = 0
    for k in range(10, -10, -3):
        acc = acc * 2 + k
    assert out[0] == acc


@gpu.jit
def k_nested_break_continue(out, a):
    i = gpu.grid(1)
    if i < out.size:
        n = a[i]
        acc = 0
        for x in range(n):
            if x % 3 == 0:
                continue
            for y in range(x):
                if y > 5:
                    break
                if (x + y) % 2 == 0:
                    continue
                acc += x * y
            else:
                acc += 1
            if acc > 5000:
                break
        j = 0
        while True:
            j += 1
            if j % 2 == 0:
                continue
            if j > n:
                break
            acc += j
        out[i] = acc


def test_nested_loops_break_continue(rng):
    run_vs_python(k_nested_break_continue, rng.integers(0, 60, 200))


@gpu.jit
def k_early_return(out, a):
    i = gpu.grid(1)
    if i >= out.size:
        return
    out[i] = 0
    for k in range(100):
        if k == a[i]:
            out[i] = k * 2
            return
        if k * 3 > a[i] + 50:
            out[i] = -k
            return
    out[i] = 999


def test_early_return(rng):
    run_vs_python(k_early_return, rng.integers(-10, 200, 300))


@gpu.jit
def k_chained(out, a, b, c):
    i = gpu.grid(1)
    if i < out.size:
        r = 0
        if a[i] < b[i] < c[i]:
            r += 1
        if a[i] <= b[i] == c[i]:
            r += 2
        if 0 <= a[i] < 5 <= c[i] != b[i]:
            r += 4
        t = a[i] < b[i] > c[i]  # chained comparison as a value
        if t:
            r += 8
        out[i] = r


def test_chained_comparisons(rng):
    a, b, c = (rng.integers(-3, 8, 400) for _ in range(3))
    run_vs_python(k_chained, a, b, c)


@gpu.jit
def k_and_or_values(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        x = a[i]
        y = b[i]
        r = x and y      # value of the and, not a bool
        s = x or y
        t = (x > 0 and y) or -1
        u = not (x or y)
        v = x > 0 or y > 0 and x < y
        out[i] = r * 1000003 + s * 1009 + t * 31 + u * 7 + v


def test_and_or_in_value_context(rng):
    a = rng.integers(-3, 4, 400)
    b = rng.integers(-3, 4, 400)
    run_vs_python(k_and_or_values, a, b)


@gpu.jit
def k_short_circuit(out, a, idx):
    i = gpu.grid(1)
    if i < out.size:
        j = idx[i]
        # the index is only valid when the first test holds: the load must not happen otherwise
        if j >= 0 and a[j] > 0:
            out[i] = 1
        elif j < 0 or a[j] < -1000000:
            out[i] = 2
        else:
            out[i] = 3


def test_short_circuit_guards_loads(rng):
    a = rng.integers(-10, 10, 50)
    idx = rng.integers(-(10**12), 50, 300)
    run_vs_python(k_short_circuit, a, idx)


@gpu.jit
def k_ternary(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        x = a[i]
        out[i] = x if x > b[i] else (b[i] if b[i] > 0 else -x * 2)


def test_conditional_expression(rng):
    run_vs_python(k_ternary, rng.integers(-50, 50, 300), rng.integers(-50, 50, 300))


@gpu.jit
def k_ternary_mixed(out, a, f):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a[i] if a[i] > 0 else f[i]  # int64 vs float64: unified to float64


def test_conditional_expression_unifies_types(rng):
    a = rng.integers(-50, 50, 300)
    f = rng.uniform(-1, 1, 300)
    run_vs_python(k_ternary_mixed, a, f, out_dtype=np.float64)


@gpu.jit
def k_swap(out, a, b):
    i = gpu.grid(1)
    if i < out.size:
        x = a[i]
        y = b[i]
        x, y = y, x
        p, q, r = y, x, y - x
        p, q, r = r, p, q
        t = (p, q)
        m, n = t
        out[i] = x * 1000000 + y * 1000 + p + 7 * q - 3 * r + 11 * m + 13 * n


def test_tuple_packing_and_swap(rng):
    run_vs_python(k_swap, rng.integers(-500, 500, 300), rng.integers(-500, 500, 300))


@gpu.jit
def k_fib(out, a):
    i = gpu.grid(1)
    if i < out.size:
        x, y = 0, 1
        for _ in range(a[i]):
            x, y = y, x + y
        out[i] = x


def test_fibonacci_tuple_assignment(rng):
    run_vs_python(k_fib, rng.integers(0, 90, 200))


@gpu.jit
def k_float_loop(out, a):
    i = gpu.grid(1)
    if i < out.size:
        x = a[i]
        s = 0.0
        k = 1
        while k < 50:
            s += x / k
            k += 1
        out[i] = s


def test_float_accumulator_in_loop(rng):
    run_vs_python(k_float_loop, rng.uniform(-5, 5, 100), out_dtype=np.float64)


@gpu.jit
def k_bool_locals(out, a):
    i = gpu.grid(1)
    if i < out.size:
        flag = False
        for k in range(a[i]):
            if k == 7:
                flag = True
        neg = not flag
        out[i] = 2 if flag else (3 if neg else 4)


def test_bool_locals(rng):
    run_vs_python(k_bool_locals, rng.integers(0, 15, 100))


@gpu.jit
def k_var_type_by_branch(out, a):
    i = gpu.grid(1)
    if i < out.size:
        x = 1          # int64 here ...
        if a[i] > 0:
            x = 2.5    # ... float64 here: unified to float64
        out[i] = x


def test_local_unified_across_branches(rng):
    run_vs_python(k_var_type_by_branch, rng.integers(-5, 5, 100), out_dtype=np.float64)


@gpu.jit
def k_deep_nest(out, n):
    i = gpu.grid(1)
    if i < out.size:
        acc = 0
        for a in range(n[i]):
            for b in range(a):
                for c in range(b, a):
                    if (a + b + c) % 3 == 0:
                        continue
                    acc += a * b - c
        out[i] = acc


def test_triple_nested_loops(rng):
    run_vs_python(k_deep_nest, rng.integers(0, 20, 64))


def test_range_near_int64_limits():
    """range() runs by a trip count fixed up front, as CPython's does: steps that would
    overflow int64 past the end still stop (a naive `i += step; i < stop` wraps)."""
    @gpu.jit
    def k(out, a, b, s):
        c = 0
        last = 0
        for i in range(a, b, s):
            c += 1
            last = i
        out[0] = c
        out[1] = last

    big = 2**63 - 1
    out = np.zeros(2, np.int64)
    for a, b, s in [(big - 10, big, 4), (-big - 1, -big + 5, 2), (big - 5, -big - 1, -(2**62)),
                    (0, big, 2**62), (10, 0, -3), (5, 0, 1)]:
        k[1, 1](out, a, b, s)
        want = list(range(a, b, s))
        assert out[0] == len(want) and (not want or out[1] == want[-1]), (a, b, s, out)
    checked = k if gpu.current_target() == "cpu" else gpu.jit(k.py_func, boundscheck=True)  # the checks' default
    with pytest.raises(ValueError, match=r"range\(\) arg 3 must not be zero"):
        checked[1, 1](out, 3, 10, 0)
