"""Device functions: a tuple variable unified wider than a value stored in it."""
import numpy as np

import gpujit as gpu
from conftest import random_array, assert_same


@gpu.jit(device=True)
def wrap_index(a, idx, wrap):
    if wrap:
        idx = (idx[0] % 4, idx[1] % 8)  # widens the tuple's items to int64
    gpu.atomic.add(a, idx, 1)


def test_tuple_variable_widened_by_a_later_assignment(rng):
    @gpu.jit
    def k(a, wrap):
        wrap_index(a, (gpu.threadIdx.x, gpu.threadIdx.y), wrap)

    a = random_array(rng, (4, 8), np.uint32, 0, 1000)
    want = a + 2
    k[1, (4, 8)](a, True)
    k[1, (4, 8)](a, False)
    assert_same(a, want)
