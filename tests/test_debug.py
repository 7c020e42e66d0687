"""debug=True: every array index is checked; an out-of-range access makes the
launch raise IndexError naming the kernel and the Python file:line, the
access itself goes nowhere harmful, and in-range kernels give the same
results as without checks."""
import inspect

import numpy as np
import pytest

import gpujit as gpu


def line_of(fn, marker):
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, l in enumerate(lines) if marker in l)


@gpu.jit(debug=True)
def shifted_copy(src, dst, shift):
    i = gpu.grid(1)
    if i < dst.size:
        dst[i] = src[i + shift]  # <- read


def test_in_range_is_unchanged(rng):
    src = rng.standard_normal(1000)
    dst = np.full(900, np.nan)
    shifted_copy[8, 128](src, dst, 100)
    np.testing.assert_array_equal(dst, src[100:])


def test_out_of_range_read_raises_with_location(rng):
    src = rng.standard_normal(100)
    dst = np.full(100, np.nan)
    with pytest.raises(IndexError) as e:
        shifted_copy[1, 128](src, dst, 1)
    msg = str(e.value)
    assert "out of bounds for axis 0 with size 100" in msg
    assert "shifted_copy" in msg
    assert "%s:%d" % (__file__, line_of(shifted_copy.py_func, "# <- read")) in msg
    # the launch after an error starts clean
    shifted_copy[1, 128](src, dst, 0)
    np.testing.assert_array_equal(dst, src)


@gpu.jit(debug=True)
def write_2d(a, i, j):
    a[i, j] = 1.0  # <- write


def test_out_of_range_write_2d_and_negative():
    a = np.zeros((3, 4))
    write_2d[1, 1](a, -1, -4)          # negative indices count from the end
    assert a[2, 0] == 1.0
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 1 with size 4"):
        write_2d[1, 1](a, 0, 4)
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 0 with size 3"):
        write_2d[1, 1](a, -4, 0)
    assert a.sum() == 1.0              # the bad writes went nowhere


def helper(arr, i):
    return arr[i]  # <- helper


def test_error_inside_a_device_function_and_shared_arrays():
    @gpu.jit(debug=True)
    def k(x, out):
        sh = gpu.shared.array(4, gpu.float64)
        t = gpu.threadIdx.x
        sh[t] = x[t]
        gpu.syncthreads()
        out[t] = helper(sh, t + 1)

    x = np.arange(4.0)
    out = np.full(4, np.nan)
    with pytest.raises(IndexError) as e:
        k[1, 4](x, out)
    assert "%s:%d" % (__file__, line_of(helper, "# <- helper")) in str(e.value)
    np.testing.assert_array_equal(out[:3], [1.0, 2.0, 3.0])


def test_ptx_assembles_with_checks():
    ptx = shifted_copy.inspect_ptx("void(float64[::1], float64[::1], int64)")
    assert "atom.global.cas.b64" in ptx or "atom.cas.b64" in ptx
