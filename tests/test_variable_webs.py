"""A name reused for unrelated values gets a variable per web of assignments
(the assignments that reach common uses), so each use sees its own type, as
numba's SSA form gives it; assignments that meet at a use still unify."""
import numpy as np
import pytest

import gpujit as gpu
from conftest import poisoned


def test_reused_name_keeps_each_type():
    @gpu.jit
    def k(out, big):
        x = big              # int64: exact
        out[0] = x
        x = 0.5              # a float64 from here on, without widening the int64 above
        out[1] = x * 4
    out = poisoned(2, np.int64)
    k[1, 1](out, 2 ** 62 + 1)
    np.testing.assert_array_equal(out, [2 ** 62 + 1, 2])


def test_loop_variable_over_tuples_of_other_types(rng):
    @gpu.jit
    def k(out, a):
        j = 0
        for v in (a[0], a[1]):                 # float64
            out[j] = v
            j += 1
        for v in ((a[2], a[3]), (a[4], a[5])):  # UniTuple(float64, 2)
            out[j] = v[0] + v[1]
            j += 1
        for v in (gpu.float32x3(a[0], a[1], a[2]), gpu.float32x3(a[3], a[4], a[5])):
            out[j] = v.z
            j += 1
    a = rng.uniform(-5, 5, 6)
    out = poisoned(6, np.float64)
    k[1, 1](out, a)
    f = a.astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(out, [a[0], a[1], a[2] + a[3], a[4] + a[5], f[2], f[5]], rtol=1e-15)


def test_argument_rebound_after_its_last_use():
    @gpu.jit
    def k(out, n):
        out[0] = n
        n = (1.5, 2.5)   # another type once the argument is dead
        out[1] = n[0] + n[1]
    out = poisoned(2, np.float64)
    k[1, 1](out, 7)
    np.testing.assert_array_equal(out, [7, 4])


def test_assignments_meeting_at_a_use_unify_or_conflict():
    @gpu.jit
    def widen(out, n):
        x = 1
        if n > 0:
            x = 0.25
        out[0] = x       # both reach: one variable, int64 and float64 unify to float64
    out = poisoned(2, np.float64)
    widen[1, 1](out, 1)
    widen[1, 1](out[1:], 0)
    np.testing.assert_array_equal(out, [0.25, 1.0])

    def conflict(out, n):
        x = out
        if n > 0:
            x = (1, 2)
        out[0] = x[0]
    with pytest.raises(gpu.TypingError, match="variable 'x' is UniTuple"):
        gpu.jit("void(int64[::1], int64)")(conflict)
