"""raise and assert in kernels and device functions, as numba.cuda has them:
the thread that raises stops there; with debug=True the launch then raises the
same exception class on the host, its first argument prefixed as numba's is
("In function 'f', file F, line N, tid=[x, y, z] ctaid=[x, y, z]: "), and division by zero and an out-of-range tuple index
raise ZeroDivisionError / IndexError with CPython's messages. Without debug,
nothing is reported."""
import inspect

import numpy as np
import pytest

import gpujit as gpu


def line_of(fn, marker):
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, l in enumerate(lines) if marker in l)


def where(kernel, marker):
    return "%s:%d" % (__file__, line_of(kernel.py_func, marker))


def prefix(fn, marker, tid="0, 0, 0", ctaid="0, 0, 0"):
    """numba's prefix of a raising thread's exception message."""
    return "In function %r, file %s, line %d, tid=[%s] ctaid=[%s]" % (fn.__name__, __file__, line_of(fn, marker),
                                                                       tid, ctaid)


def stop_at(out, vals, limit):
    i = gpu.grid(1)
    if i < out.size:
        if vals[i] > limit:
            raise ValueError("value above the limit", 7)  # <- raise
        out[i] = vals[i] * 2


stop_at_debug = gpu.jit(debug=True)(stop_at)
stop_at_plain = gpu.jit(boundscheck=False)(stop_at)  # the CPU target checks by default


def test_no_raise_runs_normally(rng):
    vals = rng.standard_normal(300)
    out = np.full(300, np.nan)
    stop_at_debug[3, 128](out, vals, 10.0)
    np.testing.assert_array_equal(out, vals * 2)


def test_raise_reports_class_args_and_location(rng):
    vals = rng.standard_normal(300)
    out = np.full(300, np.nan)
    with pytest.raises(ValueError) as e:
        stop_at_debug[3, 128](out, vals, 0.5)
    assert len(e.value.args) == 2 and e.value.args[1] == 7
    head = "In function 'stop_at', file %s, line %d, tid=[" % (__file__, line_of(stop_at, "# <- raise"))
    assert e.value.args[0].startswith(head) and e.value.args[0].endswith(": value above the limit")
    # the threads that raised stopped before their store; the others finished
    raised = vals > 0.5
    assert np.isnan(out[raised]).all()
    np.testing.assert_array_equal(out[~raised], vals[~raised] * 2)


def test_raise_without_debug_stops_the_thread_silently(rng):
    vals = rng.standard_normal(300)
    out = np.full(300, np.nan)
    stop_at_plain[3, 128](out, vals, 0.5)
    raised = vals > 0.5
    assert np.isnan(out[raised]).all()
    np.testing.assert_array_equal(out[~raised], vals[~raised] * 2)


@gpu.jit(debug=True)
def raise_class(out, n):
    out[0] = 1
    if n > 0:
        raise KeyError  # <- class
    out[1] = 1


def test_raise_class_without_arguments():
    out = np.zeros(2)
    raise_class[1, 1](out, 0)
    np.testing.assert_array_equal(out, [1, 1])
    out = np.zeros(2)
    with pytest.raises(KeyError) as e:
        raise_class[1, 1](out, 5)
    assert e.value.args == (prefix(raise_class.py_func, "# <- class"),)
    np.testing.assert_array_equal(out, [1, 0])


@gpu.jit(device=True)
def checked_half(x):
    if x < 0:
        raise ArithmeticError("negative input")  # <- device
    return x / 2


@gpu.jit(device=True)
def via_another(x):
    return checked_half(x) + 1


def halves(out, vals):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = via_another(vals[i])


halves_debug = gpu.jit(debug=True)(halves)
halves_plain = gpu.jit(boundscheck=False)(halves)


@pytest.mark.parametrize("debug", [True, False])
def test_raise_in_device_function_stops_the_caller(rng, debug):
    vals = rng.standard_normal(200)
    out = np.full(200, np.nan)
    neg = vals < 0
    if debug:
        with pytest.raises(ArithmeticError) as e:
            halves_debug[2, 128](out, vals)
        # the function named is the one that raised
        head = "In function 'checked_half', file %s, line %d, tid=[" % (__file__, line_of(checked_half.py_func,
                                                                                          "# <- device"))
        assert len(e.value.args) == 1 and e.value.args[0].startswith(head)
        assert e.value.args[0].endswith(": negative input")
    else:
        halves_plain[2, 128](out, vals)
    assert np.isnan(out[neg]).all()
    np.testing.assert_array_equal(out[~neg], vals[~neg] / 2 + 1)


# pytest rewrites the assert statements of test modules: this kernel is made
# from source text instead.
ASSERTED_SRC = """
def asserted(out, vals):
    i = gpu.grid(1)
    if i < out.size:
        assert vals[i] < 0.5, "too big"
        assert vals[i] > -0.5
        out[i] = vals[i]
"""
_ns = {"gpu": gpu}
exec(compile(ASSERTED_SRC, "<asserted>", "exec"), _ns)
asserted = gpu.jit(debug=True)(_ns["asserted"])


def test_assert_with_debug(rng):
    vals = rng.uniform(-0.4, 0.4, 100)
    out = np.full(100, np.nan)
    asserted[1, 128](out, vals)
    np.testing.assert_array_equal(out, vals)
    vals[rng.integers(100)] = 0.9
    with pytest.raises(AssertionError) as e:
        asserted[1, 128](out, vals)
    assert len(e.value.args) == 1 and e.value.args[0].endswith(": too big")
    assert e.value.args[0].startswith("In function 'asserted', file <asserted>, line 5, tid=[")
    vals[:] = rng.uniform(-0.4, 0.4, 100)
    vals[rng.integers(100)] = -0.9
    with pytest.raises(AssertionError) as e:
        asserted[1, 128](out, vals)
    assert len(e.value.args) == 1 and "In function 'asserted', file <asserted>, line 6, tid=[" in e.value.args[0]


def test_assert_without_debug_is_not_reported(rng):
    k = gpu.jit(asserted.py_func, boundscheck=False)
    vals = rng.uniform(-0.4, 0.4, 100)
    bad = rng.integers(100)
    vals[bad] = 0.9
    out = np.full(100, np.nan)
    k[1, 128](out, vals)
    assert np.isnan(out[bad])
    ok = np.arange(100) != bad
    np.testing.assert_array_equal(out[ok], vals[ok])


def divide(r, x, y):
    r[0] = y[0] / x[0]  # <- div
    r[1] = y[0]


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_zero_division_with_debug(dtype):
    k = gpu.jit(debug=True)(divide)
    r = np.zeros(2)
    with pytest.raises(ZeroDivisionError) as e:
        k[1, 1](r, np.zeros(1, dtype), np.ones(1, dtype))
    msg = "float division by zero" if dtype == np.float64 else "division by zero"
    assert str(e.value).startswith(msg + " (")
    assert where(k, "# <- div") in str(e.value)
    np.testing.assert_array_equal(r, [0, 0])


def test_zero_division_without_debug_goes_on():
    k = gpu.jit(divide, boundscheck=False)
    r = np.zeros(2)
    k[1, 1](r, np.zeros(1), np.ones(1))
    assert np.isinf(r[0]) and r[1] == 1


@gpu.jit(debug=True)
def int_floordiv_mod(out, a, b):
    i = gpu.grid(1)
    if i < out.shape[0]:
        out[i, 0] = a[i] // b[i]
        out[i, 1] = a[i] % b[i]


def test_integer_floordiv_and_mod_by_zero(rng):
    a = rng.integers(-100, 100, 64)
    b = rng.integers(1, 9, 64) * rng.choice([-1, 1], 64)
    out = np.zeros((64, 2), np.int64)
    int_floordiv_mod[1, 64](out, a, b)
    np.testing.assert_array_equal(out[:, 0], a // b)
    np.testing.assert_array_equal(out[:, 1], a % b)
    b[rng.integers(64)] = 0
    with pytest.raises(ZeroDivisionError, match="integer division or modulo by zero"):
        int_floordiv_mod[1, 64](out, a, b)


@gpu.jit(debug=True)
def tuple_index(out, a, k):
    out[0] = a.shape[k]  # <- tuple


def test_tuple_index_out_of_range(rng):
    a = np.zeros((3, 5, 7))
    out = np.zeros(1, np.int64)
    for k in (0, 1, 2, -1, -3):
        tuple_index[1, 1](out, a, k)
        assert out[0] == a.shape[k]
    for k in (3, -4, 100):
        with pytest.raises(IndexError) as e:
            tuple_index[1, 1](out, a, k)
        assert str(e.value).startswith("tuple index out of range")
        assert where(tuple_index, "# <- tuple") in str(e.value)


def test_raise_with_variable_arguments_is_a_compile_error():
    def k(out, n):
        raise ValueError(n)

    with pytest.raises(gpu.UnsupportedError, match="constant arguments"):
        gpu.jit(k)[1, 1](np.zeros(1), 1)


def test_raise_through_recursion(rng):
    def halves(n):
        if n < 0:
            raise ValueError("negative")
        if n <= 1:
            return n
        return halves(n - 2)

    def via(n):
        return halves(n)

    def parity(out, vals):
        i = gpu.grid(1)
        if i < vals.size:
            out[i] = 2  # stays 2 where halves() raised
            out[i] = via(vals[i])

    vals = rng.integers(-3, 9, 64)
    vals[0] = -1
    for debug in (False, True):
        out = np.full(64, -1, np.int64)
        k = gpu.jit(debug=debug, boundscheck=debug)(parity)
        if debug:
            with pytest.raises(ValueError, match="negative"):
                k[1, 64](out, vals)
        else:
            k[1, 64](out, vals)
        np.testing.assert_array_equal(out, np.where(vals < 0, 2, vals % 2))


@gpu.jit(debug=True)
def one_thread_raises(bx, tx, ty):
    if gpu.blockIdx.x == bx and gpu.threadIdx.x == tx and gpu.threadIdx.y == ty:
        raise RuntimeError("this one")


def test_the_note_names_the_raising_thread(rng):
    bx, tx, ty = int(rng.integers(0, 3)), int(rng.integers(0, 8)), int(rng.integers(0, 4))
    with pytest.raises(RuntimeError) as e:
        one_thread_raises[(3, 1), (8, 4)](bx, tx, ty)
    assert e.value.args == ("In function 'one_thread_raises', file %s, line %d, tid=[%d, %d, 0] ctaid=[%d, 0, 0]: "
                            "this one" % (__file__, line_of(one_thread_raises.py_func, "RuntimeError("), tx, ty, bx),)
