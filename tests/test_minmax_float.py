"""min/max of exactly two floats are numba.cuda's fmin/fmax (PTX min/max: a NaN loses), in
the promoted type; with more arguments, ints, or a tuple they keep Python's compare (the
first of equals; a NaN first stays). inspect_asm() without a signature gives the PTX of every
signature launched so far, on either target."""
import numpy as np
import pytest

import gpujit as gpu
from conftest import launch1d


def make_two():
    @gpu.jit
    def k_two(out, a, b):
        i = gpu.grid(1)
        if i < a.size:
            out[i, 0] = max(a[i], b[i])
            out[i, 1] = min(a[i], b[i])
    return k_two


@gpu.jit
def k_three(out, a, b):
    i = gpu.grid(1)
    if i < a.size:
        out[i, 0] = max(a[i], b[i], a[i])
        out[i, 1] = min((a[i], b[i]))


def inputs(rng, n, da, db):
    a = rng.uniform(-5, 5, n).astype(da)
    b = rng.uniform(-5, 5, n).astype(db)
    a[:n // 4] = np.nan
    b[n // 8: n // 2] = np.nan
    return a, b


@pytest.mark.parametrize("da,db", [(np.float32, np.float32), (np.float32, np.float64),
                                   (np.float64, np.float32), (np.float64, np.float64)])
def test_two_floats_fmax(rng, da, db):
    a, b = inputs(rng, 256, da, db)
    rt = np.result_type(da, db)
    out = np.full((a.size, 2), 7.5, rt)
    k_two = make_two()
    launch1d(k_two, a.size, out, a, b)
    np.testing.assert_array_equal(out[:, 0], np.fmax(a.astype(rt), b.astype(rt)))
    np.testing.assert_array_equal(out[:, 1], np.fmin(a.astype(rt), b.astype(rt)))
    ptx = next(iter(k_two.inspect_asm().values()))
    assert ("max.f%d" % (8 * np.dtype(rt).itemsize)) in ptx


def test_more_args_keep_python_semantics(rng):
    a, b = inputs(rng, 256, np.float64, np.float64)
    out = np.full((a.size, 2), 7.5)
    launch1d(k_three, a.size, out, a, b)
    want = np.array([[max(x, y, x), min((x, y))] for x, y in zip(a.tolist(), b.tolist())])
    np.testing.assert_array_equal(out, want)


def test_inspect_asm_uncompiled():
    @gpu.jit
    def k(x):
        x[0] = max(x[0], x[1])
    with pytest.raises(ValueError):
        k.inspect_asm()
