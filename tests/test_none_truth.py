"""None is false in a condition (`if cond:` with cond a global or closure None), as in
Python and numba."""
import numpy as np

import gpujit as gpu
from conftest import launch1d, poisoned, random_array

FLAG = None


def test_none_is_false(rng):
    cond = None

    @gpu.jit("void(float32[::1], float32[::1])")
    def k(out, x):
        i = gpu.grid(1)
        if i < x.size:
            s = gpu.shared.array(shape=(1,), dtype=gpu.float32)
            out[i] = x[i]
            if cond:
                s[0] = x[i]
                out[i] = s[0] + 1
            if not FLAG:
                out[i] = out[i] * 2
            out[i] = out[i] + (1 if None else 3)
            while None:
                out[i] = 0
    x = random_array(rng, 40, np.float32)
    out = poisoned(40, np.float32)
    launch1d(k, 40, out, x)
    np.testing.assert_array_equal(out, x * np.float32(2) + np.float32(3))
