"""cmath with infinite and NaN parts (and signed zeros beside them): every function of one
complex argument, and rect(r, phi), against CPython's cmath on inputs whose parts are drawn
from each class (-inf, negative, -0.0, +0.0, positive, +inf, NaN) with fresh random finite
values. Inputs on which CPython raises (a domain error) are left out. Outputs start as a
sentinel, since NaN is a valid answer. NaNs, infinities and the signs of zeros must match
exactly, finite parts closely; complex64 is checked against CPython on the rounded input."""
import cmath
import itertools
import math

import numpy as np
import pytest

import gpujit as gpu
from conftest import launch1d, make_binary, make_unary

SENTINEL = complex(12345.0, -54321.0)
UNARY = ["sqrt", "exp", "log", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh",
         "asin", "acos", "atan", "asinh", "acosh", "atanh"]
KERNELS = {name: make_unary(getattr(cmath, name)) for name in UNARY}
K_RECT = make_binary(cmath.rect)


def class_samples(rng):
    """One value per class; the finite non-zero ones random."""
    return [-math.inf, -float(rng.uniform(0.1, 3.0)), -0.0, 0.0, float(rng.uniform(0.1, 3.0)),
            math.inf, math.nan]


def expected(f, args):
    try:
        return f(*args)
    except (ValueError, OverflowError):
        return None


def check_part(got, want, rtol, what):
    if math.isnan(want):
        assert math.isnan(got), what
    elif math.isinf(want) or want == 0.0:
        assert got == want and math.copysign(1, got) == math.copysign(1, want), what
    else:
        assert abs(got - want) <= rtol * abs(want) + 1e-300, what


def check(got, inputs, f, dtype):
    rtol = 1e-5 if dtype == np.complex64 else 1e-12
    checked = 0
    for g, args in zip(got, inputs):
        w = expected(f, args)
        if w is None:
            continue
        what = "%s%r: got %r, CPython %r" % (f.__name__, args, complex(g), w)
        check_part(float(g.real), w.real, rtol, what)
        check_part(float(g.imag), w.imag, rtol, what)
        checked += 1
    assert checked > len(inputs) // 3


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("name", UNARY)
def test_unary_special(rng, name, dtype):
    s = class_samples(rng)
    pairs = [(x, y) for x, y in itertools.product(s, s) if not (math.isfinite(x) and math.isfinite(y))]
    z = np.array([complex(x, y) for x, y in pairs], dtype=dtype)
    out = np.full(z.shape, SENTINEL, dtype)
    launch1d(KERNELS[name], z.size, out, z)
    f = getattr(cmath, name)
    check(out, [(complex(v),) for v in z], f, dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rect_special(rng, dtype):
    s = class_samples(rng)
    pairs = [(x, y) for x, y in itertools.product(s, s) if not (math.isfinite(x) and math.isfinite(y))]
    r = np.array([p[0] for p in pairs], dtype)
    phi = np.array([p[1] for p in pairs], dtype)
    cdt = np.complex128 if dtype == np.float64 else np.complex64
    out = np.full(r.shape, SENTINEL, cdt)
    launch1d(K_RECT, r.size, out, r, phi)
    check(out, [(float(a), float(b)) for a, b in zip(r, phi)], cmath.rect, cdt)


@pytest.mark.parametrize("name", ["exp", "sinh", "cosh", "tanh"])
def test_infinite_real_part_signs(rng, name):
    """An infinite real part with a finite non-zero imaginary part: CPython computes the signs
    from cos and sin of the imaginary part (no table), in every quadrant."""
    ims = rng.uniform(-6.0, 6.0, 40)
    z = np.array([complex(re, im) for re in (math.inf, -math.inf) for im in ims])
    out = np.full(z.shape, SENTINEL, np.complex128)
    launch1d(KERNELS[name], z.size, out, z)
    check(out, [(complex(v),) for v in z], getattr(cmath, name), np.complex128)


def test_finite_inputs_unchanged(rng):
    """The special-value path leaves finite inputs to the formulas."""
    z = (rng.uniform(-3, 3, 64) + 1j * rng.uniform(-3, 3, 64))
    for name in UNARY:
        out = np.full(z.shape, SENTINEL, np.complex128)
        launch1d(KERNELS[name], z.size, out, z)
        check(out, [(complex(v),) for v in z], getattr(cmath, name), np.complex128)
