"""gpujit.misc.special.literal_unroll (numba.cuda's name): a loop over literal_unroll(t) is the
loop over the tuple t; outside a kernel it returns t. A tuple of mixed types raises."""
import numpy as np
import pytest

import gpujit as gpu
from gpujit.misc.special import literal_unroll


def test_loop_over_tuple(rng):
    x = rng.uniform(-1, 1, 3)

    @gpu.jit
    def k(out, a, b, c):
        i = 0
        for v in literal_unroll((a, b, c)):
            out[i] = v * 2
            i += 1
    out = np.full(3, np.nan)
    k[1, 1](out, *x)
    np.testing.assert_array_equal(out, x * 2)


def test_outside_kernel():
    t = (1, 2.5, "x")
    assert literal_unroll(t) is t


def test_mixed_types_raise():
    @gpu.jit
    def k(out, a):
        i = 0
        for v in literal_unroll((a, a[::2])):
            out[i] = v[0]
            i += 1
    with pytest.raises(gpu.TypingError, match="mixed types"):
        k[1, 1](np.zeros(2), np.ones(4))
