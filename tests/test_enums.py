"""Enum members in kernels: IntEnum members are ints of their class, so int constants (as in
Python, they compare and compute as their values); other Enum members named in the code are
compile-time objects whose comparisons Python settles, with their `.value`."""
import enum

import numpy as np
import pytest

import gpujit as gpu


class Status(enum.IntEnum):
    ok = 2
    missing = 404
    failed = 500


class Shape(enum.IntEnum):
    circle = 2
    square = 500


def test_members_compare_and_compute():
    def f(x, out):
        if x > Status.failed:
            out[0] = x - Status.missing
        else:
            out[0] = x + Shape.circle
        out[1] = Status.ok == Shape.circle
        out[2] = gpu.int16(Status.failed) + x
    k = gpu.jit(f)
    for x in np.random.default_rng().integers(0, 1000, 6):
        got = np.full(3, -7, np.int64)
        want = np.zeros(3, np.int64)
        f(int(x), want)
        k[1, 1](int(x), got)
        np.testing.assert_array_equal(got, want)


def test_vectorize_with_members():
    uf = gpu.vectorize(["int64(int64)"])(lambda x: Status.failed if x != Status.missing else Status.ok)
    x = np.array([2, 404, 500, 404, 7])
    np.testing.assert_array_equal(uf(x), [500, 2, 500, 2, 500])


def test_members_by_name():
    def f(x, out):
        out[0] = Status["missing"]
        out[1] = x == Status["ok"]
        out[2] = x + Shape["square"]
        out[3] = Status["failed"] is Status.failed
    k = gpu.jit(f)
    for x in [2, *np.random.default_rng().integers(0, 1000, 4)]:
        got = np.full(4, -7, np.int64)
        want = np.zeros(4, np.int64)
        f(int(x), want)
        k[1, 1](int(x), got)
        np.testing.assert_array_equal(got, want)


def test_unknown_member_name_is_an_error():
    @gpu.jit
    def k(out):
        out[0] = Status["nope"]

    import pytest
    with pytest.raises(gpu.TypingError, match="has no member .nope."):
        k[1, 1](np.zeros(1, np.int64))


class Color(enum.Enum):
    red = 1
    green = 2
    blue = 3
    crimson = 1      # an alias: the same member as red


class Taste(enum.Enum):
    sweet = 1
    sour = (2, 3.5)


def test_plain_enum_members_compare_as_in_python():
    def f(out, x):
        out[0] = Color.red == Color.green
        out[1] = Color["red"] == Color.red
        out[2] = Color.crimson is Color.red
        out[3] = Color.red != Taste.sweet           # equal values, other classes
        out[4] = Color.blue is not Color["blue"]
        out[5] = Color.green.value + x
        out[6] = Taste.sour.value[1] * x

    k = gpu.jit(f)
    x = int(np.random.default_rng().integers(-100, 100))
    got = np.full(7, -1.0)
    want = np.zeros(7)
    f(want, x)
    k[1, 1](got, x)
    np.testing.assert_array_equal(got, want)


def test_plain_enum_members_are_not_ordered():
    def f(out):
        out[0] = Color.red < Color.green

    with pytest.raises(gpu.TypingError, match="Enum members are not ordered"):
        gpu.jit(f)[1, 1](np.zeros(1))
