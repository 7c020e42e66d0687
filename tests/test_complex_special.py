"""cmath with infinite and NaN parts (and signed zeros beside them): every function of one
complex argument, and rect(r, phi), against CPython's cmath on inputs whose parts are drawn
from each class (-inf, negative, -0.0, +0.0, positive, +inf, NaN) with fresh random finite
values. Inputs on which CPython raises (a domain error) are left out. Outputs start as a
sentinel, since NaN is a valid answer. NaNs, infinities and the signs of zeros must match
exactly, finite parts closely; complex64 is checked against CPython on the rounded input."""
import cmath
import itertools
import math
import sys

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


POWERS = (-4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 7, 16)


@gpu.jit
def k_int_powers(z, out):
    i = gpu.grid(1)
    if i < z.size:
        x = z[i]
        out[i, 0] = x ** -4
        out[i, 1] = x ** -3
        out[i, 2] = x ** -2
        out[i, 3] = x ** -1
        out[i, 4] = x ** 0
        out[i, 5] = x ** 1
        out[i, 6] = x ** 2
        out[i, 7] = x ** 3
        out[i, 8] = x ** 4
        out[i, 9] = x ** 5
        out[i, 10] = x ** 7
        out[i, 11] = x ** 16


def finite_power(z, n):
    try:
        p = z ** n
    except OverflowError:
        return False
    return math.isfinite(p.real) and math.isfinite(p.imag)


def test_integral_powers_at_special_values(rng):
    """z ** n for a constant integer n multiplies as CPython's c_powi does, 1 * z first and
    no fused multiply-add, so the result is CPython's to the bit: (infj) ** 2 is (nan+nanj). Where CPython raises OverflowError (an
    infinite part in the result) or ZeroDivisionError (0 ** -n) nothing is compared: the
    kernel gives what the products give."""
    parts = class_samples(rng) + [1e200, -1e200, 1e-200]
    z = np.array([complex(re, im) for re, im in itertools.product(parts, parts)], np.complex128)
    out = np.full((z.size, len(POWERS)), SENTINEL, np.complex128)
    launch1d(k_int_powers, z.size, z, out)
    checked = 0
    for i, x in enumerate(z):
        for j, n in enumerate(POWERS):
            try:
                w = complex(x) ** n
            except (OverflowError, ZeroDivisionError):
                w = None
            if w is None:
                assert out[i, j] != SENTINEL
                continue
            if n < 0 and sys.version_info >= (3, 14) and not finite_power(complex(x), -n):
                # 3.14's complex division recovers infinities (C99's Annex G): 1 / z ** n where
                # z ** n is infinite is a zero there, a NaN in 3.11-3.13 and in kernels (language.md)
                continue
            g = complex(out[i, j])
            what = "(%r) ** %d: got %r, CPython %r" % (complex(x), n, g, w)
            # CPython's arithmetic operation by operation: the same bits, signs of zeros too
            check_part(g.real, w.real, 0.0, what)
            check_part(g.imag, w.imag, 0.0, what)
            checked += 1
    # (3.14+: less the negative powers left out above)
    assert checked > z.size * len(POWERS) * (2 if sys.version_info < (3, 14) else 1) // 3
    # the reported cases, each NaN in both parts in CPython
    z2 = np.array([1j * math.inf, complex(1, math.inf), complex(math.inf, 1), 1e200 + 1e200j], np.complex128)
    out2 = np.full((z2.size, len(POWERS)), SENTINEL, np.complex128)
    launch1d(k_int_powers, z2.size, z2, out2)
    for x, got in zip(z2, out2[:, POWERS.index(2)]):
        try:
            w = complex(x) ** 2
        except OverflowError:   # CPython 3.14+ raises where 3.11-3.13 give NaNs
            w = complex(math.nan, math.nan)
        assert math.isnan(w.real) and math.isnan(w.imag)
        assert math.isnan(got.real) and math.isnan(got.imag), (x, got)
