"""Tuples as kernel arguments: heterogeneous and nested tuples of numbers,
arrays and records, flattened into parameters by the one kernel layout
(gj_layout) and reassembled in the kernel. Checked against the same
computation in NumPy on fresh random data; outputs poisoned first."""
import numpy as np
import pytest

import gpujit as gpu
from conftest import poisoned


@gpu.jit
def k_mixed(t, out):
    i = gpu.grid(1)
    if i < out.size:
        n, x, (a, b) = t
        out[i] = n * x + a[i] + b[i % b.size]


def test_heterogeneous_nested_tuple(rng):
    a = rng.standard_normal(50)
    b = rng.integers(-9, 9, 7).astype(np.int32)
    n, x = int(rng.integers(1, 9)), float(rng.standard_normal())
    out = poisoned(50, np.float64)
    k_mixed[1, 64]((n, x, (a, b)), out)
    # the GPU may fuse n * x + a[i] into one fma (one rounding): equal to a few ulps
    np.testing.assert_allclose(out, n * x + a + b[np.arange(50) % 7], rtol=1e-14, atol=1e-14)


@gpu.jit
def k_uni(t, out):
    out[0] = t[0] + t[1] + t[2]
    out[1] = len(t)


@pytest.mark.parametrize("t", [(1, 2, 3), (1.5, 2.5, -1.0), (np.float32(1.5), np.float32(2), np.float32(3))])
def test_uniform_tuple_of_numbers(t):
    out = poisoned(2, np.float64)
    k_uni[1, 1](t, out)
    assert out[0] == sum(float(v) for v in t) and out[1] == 3


@gpu.jit
def k_write_through(t):
    i = gpu.grid(1)
    if i < t[0].size:
        t[0][i] = t[1][i] * 2


def test_arrays_in_a_tuple_are_written(rng):
    src = rng.standard_normal(20)
    dst = poisoned(20, np.float64)
    k_write_through[1, 32]((dst, src))
    assert np.array_equal(dst, src * 2)


def test_tuple_structure_is_part_of_the_key():
    @gpu.jit
    def k(t, out):
        out[0] = len(t)

    out = poisoned(1, np.int64)
    k[1, 1]((1, (2, 3)), out)
    assert out[0] == 2
    k[1, 1](((1, 2), 3, 4), out)
    assert out[0] == 3
    k[1, 1]((), out)
    assert out[0] == 0


def test_eager_tuple_signature():
    @gpu.jit("void(Tuple(int64, float64), float64[::1])")
    def k(t, out):
        out[0] = t[0] - t[1]

    out = poisoned(1, np.float64)
    k[1, 1]((5, 0.5), out)
    assert out[0] == 4.5
    with pytest.raises(TypeError):
        k[1, 1]((5, 0.5, 1), out)


def test_read_only_array_in_a_tuple_is_refused():
    a = np.zeros(4)
    a.flags.writeable = False
    with pytest.raises(ValueError, match="argument 1: a read-only array"):
        k_write_through[1, 4]((a, np.ones(4)))


def test_nesting_limit():
    t = 1
    for _ in range(40):
        t = (t,)
    with pytest.raises(TypeError, match="nested too deeply"):
        k_uni[1, 1](t, np.zeros(2))


# -- namedtuples ----------------------------------------------------------------------------------
from collections import namedtuple  # noqa: E402

Point = namedtuple("Point", ("x", "y", "r"))
Other = namedtuple("Other", ("r", "y", "x"))   # the same item types, other names


@gpu.jit
def k_fields(p, out):
    out[0] = p.x
    out[1] = p.y
    out[2] = p.r
    out[3] = p[0]


def test_namedtuple_fields(rng):
    x, y = (int(v) for v in rng.integers(-50, 50, 2))
    p = Point(x, y, float(rng.standard_normal()))
    out = poisoned(4, np.float64)
    k_fields[1, 1](p, out)
    assert list(out) == [p.x, p.y, p.r, p.x]
    # another class with the same item types is another specialisation, by name
    q = Other(p.x, p.y, p.r)
    k_fields[1, 1](q, out)
    assert list(out) == [q.x, q.y, q.r, q.r]


def test_namedtuple_unknown_field():
    @gpu.jit
    def k(p, out):
        out[0] = p.z

    with pytest.raises(gpu.TypingError, match="has no attribute 'z'"):
        k[1, 1](Point(1, 2, 3.0), np.zeros(1))


# -- the layout -----------------------------------------------------------------------------------
def test_tuple_and_record_parameters():
    """A tuple's items are flattened in order under its argument; a record is its address."""
    from gpujit.np.numpy_support import from_dtype
    rec = from_dtype(np.dtype([("a", np.float64), ("b", np.int32)], align=True))
    sig = "void(Tuple(int32, UniTuple(float64[::1] x 2)), %s, complex64)" % rec

    def k(t, r, z):
        t[1][0][0] = r.a + t[0] + z.real

    for target in ("cpu", "cuda"):
        ck = gpu.jit(k, boundscheck=False).compile(sig, target=target, cc=(9, 0))
        assert [(p[0], p[1]) for p in ck.params] == [
            ("value", 0), ("data", 0), ("shape", 0), ("stride", 0), ("data", 0), ("shape", 0), ("stride", 0),
            ("data", 1), ("real", 2), ("imag", 2)]
        assert [a[0] for a in ck.args] == [3, 2, 0]
