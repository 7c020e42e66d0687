"""gpujit.misc.special.literal_unroll (numba.cuda's name): a loop over literal_unroll(t) is the
loop over the tuple t; outside a kernel it returns t. A tuple of mixed types raises."""
import numpy as np
import pytest

import gpujit as gpu
from gpujit.misc.special import literal_unroll


def test_loop_over_tuple(rng):
    x = rng.uniform(-1, 1, 3)

    @gpu.jit
    def k(out, a, b, c):
        i = 0
        for v in literal_unroll((a, b, c)):
            out[i] = v * 2
            i += 1
    out = np.full(3, np.nan)
    k[1, 1](out, *x)
    np.testing.assert_array_equal(out, x * 2)


def test_outside_kernel():
    t = (1, 2.5, "x")
    assert literal_unroll(t) is t


def test_mixed_types_raise():
    @gpu.jit
    def k(out, a):
        i = 0
        for v in literal_unroll((a, a[::2])):
            out[i] = v[0]
            i += 1
    with pytest.raises(gpu.TypingError, match="mixed types"):
        k[1, 1](np.zeros(2), np.ones(4))


def _arrays(rng):
    m = rng.uniform(-1, 1, (3, 4))
    return (rng.uniform(-1, 1, 5), m, m[::-1, ::2], rng.uniform(-1, 1, (2, 3, 2))[:, ::-1])


def test_closure_tuple_of_arrays_unrolled(rng):
    cases = _arrays(rng)

    @gpu.jit
    def k(out):
        i = 0
        for a in literal_unroll(cases):
            out[i] = a.sum()
            out[i + 4] = np.any(a)
            i += 1
    out = np.full(8, np.nan)
    k[1, 1](out)
    want = [a.sum() for a in cases] + [np.any(a) for a in cases]
    np.testing.assert_allclose(out, want, rtol=1e-12)


GLOBAL_CASES = (np.arange(6.0).reshape(2, 3), np.arange(4, dtype=np.int32)[::-1], np.arange(12.0).reshape(2, 2, 3)[:, 1])


def test_global_tuple_of_arrays_without_literal_unroll(rng):
    s = rng.uniform(1, 2)

    @gpu.jit
    def k(out, s):
        i = 0
        for x in GLOBAL_CASES:
            out[i] = np.sum(x) * s
            i += 1
    out = np.full(3, np.nan)
    k[1, 1](out, s)
    np.testing.assert_allclose(out, [np.sum(x) * s for x in GLOBAL_CASES], rtol=1e-12)


def test_item_of_a_tuple_of_arrays(rng):
    cases = _arrays(rng)

    @gpu.jit
    def k(out):
        out[0] = cases[1][2, 3]
        out[1] = cases[2][0, 1]
        out[2] = cases[3][1, 0, 1]
    out = np.full(3, np.nan)
    k[1, 1](out)
    np.testing.assert_array_equal(out, [cases[1][2, 3], cases[2][0, 1], cases[3][1, 0, 1]])


def test_break_and_continue_in_unrolled_loop(rng):
    cases = _arrays(rng)
    stop = int(rng.integers(1, 4))

    @gpu.jit
    def k(out, stop):
        i = 0
        for a in literal_unroll(cases):
            if i == stop:
                break
            i += 1
            if i == 1:
                continue
            out[i] = a.max()
        out[0] = i
    out = np.full(5, np.nan)
    k[1, 1](out, stop)
    want = np.full(5, np.nan)
    for i, a in enumerate(cases[:stop]):
        if i + 1 != 1:
            want[i + 1] = a.max()
    want[0] = stop
    np.testing.assert_array_equal(out, want)


def test_nested_loops_in_unrolled_body(rng):
    cases = _arrays(rng)[:2]
    n = int(rng.integers(2, 5))

    @gpu.jit
    def k(out, n):
        i = 0
        for a in cases:
            acc = 0.0
            for j in range(n):
                for b in literal_unroll(cases):
                    acc += b.min() * j
            out[i] = acc + a.size
            i += 1
    out = np.full(2, np.nan)
    k[1, 1](out, n)
    mins = sum(b.min() for b in cases)
    np.testing.assert_allclose(out, [mins * sum(range(n)) + a.size for a in cases], rtol=1e-12)


def test_tuple_of_arrays_and_numbers(rng):
    a, x = rng.uniform(-1, 1, 4), float(rng.uniform(-1, 1))
    mixed = (a, x, (a[::-1], 3))

    @gpu.jit
    def k(out):
        out[0] = mixed[0][1] + mixed[1]
        out[1] = mixed[2][0][0] * mixed[2][1]
    out = np.full(2, np.nan)
    k[1, 1](out)
    np.testing.assert_array_equal(out, [a[1] + x, a[-1] * 3])
