"""`a.dtype` in kernels: a compile-time value, the array's scalar type, usable
wherever a dtype is (shared.array, local.array) and callable as that type's
cast (as np.float32(x) is). Checked against NumPy on fresh random data; outputs
poisoned first."""
import numpy as np
import pytest

import gpujit as gpu
from conftest import poisoned


@gpu.jit
def k_scratch(a, out):
    sm = gpu.shared.array(16, dtype=a.dtype)
    lm = gpu.local.array(4, a.dtype)
    i = gpu.threadIdx.x
    sm[i] = a[i]
    gpu.syncthreads()
    for j in range(4):
        lm[j] = sm[(i + j) % 16]
    out[i] = lm[0] + lm[1] + lm[2] + lm[3]


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int16, np.int64, np.uint8])
def test_dtype_for_scratch_arrays(rng, dt):
    a = rng.integers(0, 60, 16).astype(dt)
    out = poisoned(16, dt)
    k_scratch[1, 16](a, out)
    idx = (np.arange(16)[:, None] + np.arange(4)[None, :]) % 16
    # the sums wrap in the element type, as NumPy's do
    ref = a[idx[:, 0]] + a[idx[:, 1]] + a[idx[:, 2]] + a[idx[:, 3]]
    assert np.array_equal(out, ref)


@gpu.jit
def k_cast(a, x, out):
    out[0] = a.dtype(x)


@pytest.mark.parametrize("dt", [np.float32, np.int32, np.float64])
def test_dtype_as_cast(rng, dt):
    x = float(rng.uniform(-100, 100))
    out = poisoned(1, np.float64)
    k_cast[1, 1](np.zeros(1, dt), x, out)
    assert out[0] == float(dt(x)) if dt != np.int32 else out[0] == int(x)


def test_record_array_dtype_is_refused():
    rec = np.dtype([("a", np.int32), ("b", np.float64)])

    @gpu.jit
    def k(r):
        s = gpu.local.array(2, r.dtype)
        s[0] = r[0]

    with pytest.raises(gpu.UnsupportedError, match="dtype"):
        k[1, 1](np.zeros(2, rec))
