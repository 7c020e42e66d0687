"""gpujit.typeof (numba's typeof): the gpujit.types object of a value; arrays by layout."""
import numpy as np
import pytest

import gpujit as gpu
from gpujit import types


@pytest.mark.parametrize("make,layout", [
    (lambda a: a, "C"),
    (lambda a: np.asfortranarray(a), "F"),
    (lambda a: a[:, ::2], "A"),
    (lambda a: a[:1], "C"),          # one row: C- and F-contiguous, C first
])
def test_array_layouts(make, layout, rng):
    a = make(rng.standard_normal((3, 4)).astype(np.float32))
    assert gpu.typeof(a) == types.Array(types.float32, 2, layout)


def test_scalars_and_tuples():
    assert gpu.typeof(1.5) == types.float64
    assert gpu.typeof(np.int32(3)) == types.int32
    assert gpu.typeof((1, 2)) == types.UniTuple(types.int64, 2)
    with pytest.raises(ValueError):
        gpu.typeof(object())
