"""`is` and `is not` in kernels and device functions, with numba's semantics:
values of different types are never the same, None is None, numbers and bools
of one type compare by value; a device function's parameter that the caller
gives None (an omitted argument with a None default, or None itself) prunes
the branch its `is None` test does not take, so that branch may use the
parameter as a number. Checked against the same Python functions run by
CPython on fresh random inputs; outputs poisoned first."""
import numpy as np
import pytest

import gpujit as gpu
from conftest import poisoned


def scale(x, y=None):
    if y is None:
        return x * 2
    return x + y


def offset(x, y=None):
    if y is not None:
        return x - y
    return x * 3.0


def pick(x, y=None, z=None):
    r = x
    if z is None:
        r = r + 1
    if None is not y:
        r = r * y
    return r


d_scale, d_offset, d_pick = (gpu.jit(device=True)(f) for f in (scale, offset, pick))


@gpu.jit
def k_optional(out, a, b, f):
    out[0] = d_scale(a)
    out[1] = d_scale(a, b)
    out[2] = d_offset(f)
    out[3] = d_offset(f, b)
    out[4] = d_scale(a, None)
    out[5] = d_pick(a)
    out[6] = d_pick(a, b)
    out[7] = d_pick(a, b, 1)
    out[8] = d_pick(a, None, f)


def test_none_defaults(rng):
    a, b = (int(v) for v in rng.integers(-100, 100, 2))
    f = float(rng.standard_normal())
    out = poisoned(9, np.float64)
    k_optional[1, 1](out, a, b, f)
    ref = [scale(a), scale(a, b), offset(f), offset(f, b), scale(a, None), pick(a), pick(a, b),
           pick(a, b, 1), pick(a, None, f)]
    assert np.allclose(out, ref, rtol=0, atol=1e-12)


@gpu.jit
def k_is(out, p, q, a, x):
    out[0] = p is True
    out[1] = p is not False
    out[2] = p is q
    out[3] = a is None
    out[4] = a is not None
    out[5] = x is a            # int64 and float64: never the same
    out[6] = a is a
    if p is True:
        out[7] = 1
    else:
        out[7] = 2


@pytest.mark.parametrize("p,q", [(True, True), (True, False), (False, True), (False, False)])
def test_is_values(rng, p, q):
    a = int(rng.choice([7, int(rng.integers(-50, 50))]))
    x = float(a)
    out = poisoned(8, np.int64)
    k_is[1, 1](out, p, q, a, x)
    ref = [p is True, p is not False, p == q, False, True, False, True, 1 if p else 2]
    assert list(out) == [int(v) for v in ref]


def test_is_on_arrays_is_an_error():
    @gpu.jit
    def k(a, b):
        a[0] = a is b

    with pytest.raises(gpu.TypingError, match="'is' compares numbers, bools and None"):
        k[1, 1](np.zeros(2), np.zeros(2))
