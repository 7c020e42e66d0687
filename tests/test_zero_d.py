"""0-d arrays (shape ()) as kernel arguments, host and device, and in
signatures (numba's spelling array(float64, 0d, C)): a[()] reads and writes
the one element; .shape, .size and .ndim are those of NumPy. Checked against
NumPy on fresh random values; outputs poisoned first."""
import numpy as np
import pytest

import gpujit as gpu
from conftest import poisoned


@gpu.jit
def k_axpy0(r, a, x, y):
    r[()] = a[()] * x[()] + y[()]
    r[()] += 1


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.int64])
def test_read_write_host(rng, dt):
    a, x, y = (np.asarray(rng.integers(-50, 50), dtype=dt) for _ in range(3))
    r = np.full((), 77, dt)
    k_axpy0[1, 1](r, a, x, y)
    assert r.shape == () and r[()] == a * x + y + 1


def test_read_write_device(rng):
    a, x, y = (np.asarray(rng.standard_normal()) for _ in range(3))
    r = gpu.to_device(np.full((), np.nan))
    k_axpy0[1, 1](r, gpu.to_device(a), gpu.to_device(x), y)
    assert r.shape == ()
    # a * x + y may be one fma (one rounding) in the kernel: equal to a few ulps
    np.testing.assert_allclose(r.copy_to_host()[()], a * x + y + 1, rtol=1e-14, atol=1e-14)


@gpu.jit
def k_attrs(a, out):
    out[0] = a.size
    out[1] = a.ndim
    out[2] = len(a.shape)
    out[3] = a[()] > 0


def test_attributes(rng):
    out = poisoned(4, np.int64)
    v = rng.standard_normal()
    k_attrs[1, 1](np.asarray(v), out)
    assert list(out) == [1, 0, 0, v > 0]


@gpu.jit("void(array(float64, 0d, C), array(int32, 0d, C))")
def k_sig(r, n):
    r[()] = n[()] * 0.5


def test_signature(rng):
    n = np.asarray(rng.integers(-1000, 1000), np.int32)
    r = np.full((), np.nan)
    k_sig[1, 1](r, n)
    assert r[()] == n * 0.5
    assert gpu.typing.typeof_string(r) == "array(float64, 0d, C)"
    assert str(gpu.types.Array(gpu.types.float64, 0, "C")) == "array(float64, 0d, C)"


def test_captured_device_array(rng):
    if gpu.current_target() != "cpu":
        pytest.skip("the cpu target's device arrays")
    v = rng.standard_normal()
    d = gpu.to_device(np.asarray(v))

    @gpu.jit
    def k(out):
        out[0] = d[()] * 2

    out = poisoned(1, np.float64)
    k[1, 1](out)
    import conftest
    conftest._pending.clear()   # a kernel that captured a cpu-target array has no PTX
    assert out[0] == v * 2


SCALE0 = np.asarray(np.random.default_rng().standard_normal())


@gpu.jit
def k_global0(x, out):
    out[0] = x[0] * SCALE0[()]


def test_global_numpy_array(rng):
    x = rng.standard_normal(1)
    out = poisoned(1, np.float64)
    k_global0[1, 1](x, out)
    assert out[0] == x[0] * SCALE0


@gpu.jit
def k_index0(a, m, i, j, out):
    out[0] = a[i]              # a 0-d integer array indexes as its element
    a[j] = -1.0
    row = m[i]                 # and picks a row as an int does
    out[1] = row[j[()]] + m[i, j]


def test_zero_d_integer_index(rng):
    a = rng.standard_normal(9)
    m = rng.standard_normal((9, 4))
    i = np.asarray(rng.integers(-9, 9), np.int32)
    j = np.asarray(rng.integers(0, 4), np.int64)
    ref0, ref1 = a[int(i)], 2 * m[int(i), int(j)]
    want_a = a.copy()
    want_a[int(j)] = -1.0
    out = poisoned(2, np.float64)
    k_index0[1, 1](a, m, i, j, out)
    assert out[0] == ref0 and out[1] == ref1
    assert np.array_equal(a, want_a)
