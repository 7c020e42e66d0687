"""In, Out and InOut (numba.cuda.args) around a launch: In copies a host array to
the kernel only (its writes never reach the host array), Out copies it back only,
InOut both (a plain host array's way); launch extensions' prepare_args sees each
argument. Checked against NumPy on fresh random data; outputs poisoned first."""
import numpy as np
import pytest

import gpujit as gpu
from gpujit.args import ArgHint, In, InOut, Out, wrap_arg
from conftest import poisoned


@gpu.jit
def k_twice(src, dst):
    i = gpu.grid(1)
    if i < dst.size:
        dst[i] = src[i] * 2
        src[i] = -1


def test_in_keeps_host_array(rng):
    a = rng.standard_normal(40)
    keep = a.copy()
    out = poisoned(40, np.float64)
    k_twice[1, 64](In(a), out)
    assert np.array_equal(a, keep)            # the kernel's writes stayed on its copy
    assert np.array_equal(out, keep * 2)      # but it read the host's values


def test_inout_and_plain_copy_back(rng):
    for wrap in (InOut, lambda x: x, gpu.InOut):
        a = rng.standard_normal(40)
        out = poisoned(40, np.float64)
        ref = a * 2
        k_twice[1, 64](wrap(a), Out(out))
        assert np.array_equal(out, ref)
        assert np.all(a == -1)


@gpu.jit
def k_fill(dst, v):
    i = gpu.grid(1)
    if i < dst.size:
        dst[i] = v + i


def test_out_copies_back(rng):
    v = float(rng.standard_normal())
    out = poisoned(33, np.float64)
    k_fill[1, 64](gpu.Out(out), v)
    assert np.array_equal(out, v + np.arange(33))


REC = np.dtype([("a", np.int32), ("b", np.float64)], align=True)


@gpu.jit
def k_rec(r, v):
    r[0]["b"] = v


@pytest.mark.parametrize("wrap,copied", [(In, False), (InOut, True), (Out, True)])
def test_record_arrays(rng, wrap, copied):
    v = float(rng.standard_normal())
    r = np.zeros(1, REC)
    r[0]["b"] = 1.5
    k_rec[1, 1](wrap(r), v)
    assert r[0]["b"] == (v if copied else 1.5)


def test_device_array_passes_through(rng):
    a = rng.standard_normal(20)
    d = gpu.to_device(a)
    out = poisoned(20, np.float64)
    k_twice[1, 32](In(d), out)                # a device array is the kernel's own memory
    assert np.array_equal(out, a * 2)
    assert np.all(d.copy_to_host() == -1)


def test_wrap_arg():
    a = np.zeros(3)
    assert isinstance(wrap_arg(a), InOut) and wrap_arg(a).value is a
    assert isinstance(wrap_arg(a, default=In), In)
    h = Out(a)
    assert wrap_arg(h) is h
    assert isinstance(h, ArgHint)
    assert gpu.args.In is In


def test_extension_prepare_args(rng):
    seen = []

    class DefaultIn:
        def prepare_args(self, ty, val, **kwargs):
            seen.append((str(ty), sorted(kwargs)))
            return ty, wrap_arg(val, default=In)

    @gpu.jit
    def k(src, dst):
        i = gpu.grid(1)
        if i < dst.size:
            dst[i] = src[i] + 1
            src[i] = 0

    k.extensions.append(DefaultIn())
    a = rng.standard_normal(10)
    keep = a.copy()
    out = poisoned(10, np.float64)
    k[1, 16](a, InOut(out))
    assert np.array_equal(a, keep)            # the extension made it In
    assert np.array_equal(out, keep + 1)      # an explicit hint is kept
    assert len(seen) == 2 and seen[0][1] == ["retr", "stream"]
    assert seen[0][0] == seen[1][0] == "float64[::1]"
