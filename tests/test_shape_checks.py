"""Run-time checks of lengths where the checks are on (the CPU target's default,
debug=True or boundscheck=True): a slice assigned from an array of another
length, an in-kernel ufunc whose operands do not broadcast onto its output and a
range() whose step is zero raise ValueError with numba's and NumPy's messages,
naming the kernel and the line. A source axis of length 1 repeats its element,
as numba broadcasts it. With the checks off the kernel stays inside its arrays."""
import inspect

import numpy as np
import pytest

import gpujit as gpu
from conftest import PTXAS, assemble_ptx, assert_same, poisoned

cpu_only = pytest.mark.skipif(gpu.current_target() != "cpu", reason="the CPU target's default checks")


def where(fn, marker):
    lines, start = inspect.getsourcelines(fn)
    line = start + next(k for k, l in enumerate(lines) if marker in l)
    return "(kernel '%s', %s:%d)" % (fn.__name__, __file__, line)


# -- a[i:j] = b --------------------------------------------------------------------------------
def k_assign(out, a, n):
    out[0:n] = a  # <- assign


def k_assign2(out, a):
    out[1:4, :] = a  # <- assign2


k_assign_default = gpu.jit(k_assign)
k_assign_debug = gpu.jit(debug=True)(k_assign)
k_assign_unchecked = gpu.jit(boundscheck=False)(k_assign)


@cpu_only
@pytest.mark.parametrize("kernel", [k_assign_default, k_assign_debug])
def test_slice_assignment_of_another_length_raises(rng, kernel):
    out = poisoned(12, np.float64)
    with pytest.raises(ValueError) as e:
        kernel[1, 1](out, rng.standard_normal(3), 10)
    assert "cannot assign slice of shape (10,) from input of shape (3,)" in str(e.value)
    assert where(k_assign, "# <- assign") in str(e.value)
    with pytest.raises(ValueError, match=r"slice of shape \(2,\) from input of shape \(3,\)"):
        kernel[1, 1](out, rng.standard_normal(3), 2)


@pytest.mark.parametrize("kernel", [k_assign_default, k_assign_debug, k_assign_unchecked])
def test_slice_assignment_of_the_same_length_or_one(rng, kernel):
    a = rng.standard_normal(10)
    out = poisoned(12, np.float64)
    kernel[1, 1](out, a, 10)
    assert_same(out[:10], a)
    assert np.isnan(out[10:]).all()
    one = rng.standard_normal(1)
    out = poisoned(12, np.float64)
    kernel[1, 1](out, one, 7)  # numba broadcasts a source of length 1
    assert_same(out[:7], np.repeat(one, 7))
    assert np.isnan(out[7:]).all()


def test_unchecked_slice_assignment_stays_inside_both_arrays(rng):
    # without the checks nothing is reported: the shorter length is copied
    buf = poisoned(16, np.float64)
    a = rng.standard_normal(3)
    k_assign_unchecked[1, 1](buf[:12], a, 10)
    assert_same(buf[:3], a)
    assert np.isnan(buf[3:]).all()


@cpu_only
def test_two_dimensional_slice_assignment(rng):
    k = gpu.jit(k_assign2)
    out = poisoned((5, 4), np.float64)
    a = rng.standard_normal((3, 4))
    k[1, 1](out, a)
    assert_same(out[1:4], a)
    row = rng.standard_normal((1, 4))  # an axis of length 1 repeats
    out = poisoned((5, 4), np.float64)
    k[1, 1](out, row)
    assert_same(out[1:4], np.repeat(row, 3, axis=0))
    with pytest.raises(ValueError) as e:
        k[1, 1](out, rng.standard_normal((3, 3)))
    assert "axis 1 of the slice has length 4, the input's 3" in str(e.value)
    assert where(k_assign2, "# <- assign2") in str(e.value)


# -- ufuncs ------------------------------------------------------------------------------------
@gpu.jit
def k_sin(a, out):
    np.sin(a, out)  # <- sin


@gpu.jit
def k_add(a, b, out):
    np.add(a, b, out)  # <- add


@cpu_only
def test_ufunc_operands_that_do_not_broadcast_raise(rng):
    out = poisoned(10, np.float64)
    with pytest.raises(ValueError) as e:
        np.sin(rng.standard_normal(3), out)  # NumPy refuses it too
    with pytest.raises(ValueError) as e:
        k_sin[1, 1](rng.standard_normal(3), out)
    assert "input 1 has length 3 where the output's axis 0 has 10" in str(e.value)
    assert where(k_sin.py_func, "# <- sin") in str(e.value)
    out6 = poisoned(6, np.float64)
    with pytest.raises(ValueError) as e:
        k_add[1, 1](rng.standard_normal(6), rng.standard_normal(4), out6)
    assert "input 2 has length 4 where the output's axis 0 has 6" in str(e.value)
    with pytest.raises(ValueError):  # an output shorter than its input
        k_sin[1, 1](rng.standard_normal(10), poisoned(3, np.float64))


@cpu_only
def test_ufunc_operands_that_broadcast(rng):
    a, b = rng.standard_normal((4, 5)), rng.standard_normal(5)
    out = poisoned((4, 5), np.float64)
    k_add[1, 1](a, b, out)
    assert_same(out, a + b)
    c = rng.standard_normal((4, 1))
    out = poisoned((4, 5), np.float64)
    k_add[1, 1](a, c, out)
    assert_same(out, a + c)
    with pytest.raises(ValueError, match="input 2 has length 4 where the output's axis 1 has 5"):
        k_add[1, 1](a, rng.standard_normal(4), out)


# -- range(start, stop, 0) ---------------------------------------------------------------------
def k_range(out, s):
    n = 0
    for i in range(0, 10, s):  # <- range
        n += i
    out[0] = n


@cpu_only
@pytest.mark.parametrize("debug", [False, True])
def test_range_with_a_zero_step_raises(debug):
    k = gpu.jit(debug=debug)(k_range)
    out = poisoned(1, np.int64)
    for s in (3, -1, 20):
        k[1, 1](out, s)
        assert out[0] == sum(range(0, 10, s))
    with pytest.raises(ValueError) as e:
        k[1, 1](out, 0)
    assert "range() arg 3 must not be zero" in str(e.value)
    assert where(k_range, "# <- range") in str(e.value)


def k_range_const(out):
    for i in range(0, 10, 0):  # <- const
        out[0] = i


def test_range_with_a_constant_zero_step_is_a_typing_error():
    with pytest.raises(gpu.TypingError) as e:
        gpu.compile_ptx(k_range_const, "void(int64[::1])")
    assert "range() arg 3 must not be zero" in str(e.value)
    assert where(k_range_const, "# <- const").split(", ")[1][:-1] in str(e.value)


def test_checks_assemble_for_the_gpu():
    # boundscheck=True puts the same checks in the PTX
    texts = []
    for f, sig in ((k_assign, "void(float64[::1], float64[::1], int64)"),
                   (k_range, "void(int64[::1], int64)"),
                   (k_add.py_func, "void(float64[::1], float64[::1], float64[::1])")):
        ptx, _ = gpu.compile_ptx(f, sig, boundscheck=True)
        assert "atom.global.cas" in ptx  # the record of a failed check
        texts.append((f.__name__, ptx))
    if PTXAS:
        assemble_ptx(texts)
