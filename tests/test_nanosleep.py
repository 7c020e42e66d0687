"""gpu.nanosleep(ns): nanosleep.u32 in the PTX (a constant and a variable duration); on the
CPU target the kernel runs, sleeping nothing, and the rest of it is unchanged."""
import numpy as np
import pytest

import gpujit as gpu
from gpujit import uint32
from conftest import poisoned


def use_nanosleep(x):
    gpu.nanosleep(32)
    gpu.nanosleep(x)


def test_ptx_has_both_sleeps():
    ptx, resty = gpu.compile_ptx(use_nanosleep, (uint32,))
    assert sum("nanosleep.u32" in line for line in ptx.splitlines()) == 2
    assert resty == gpu.void


def test_kernel_runs_around_the_sleep(rng):
    @gpu.jit
    def k(out, x, ns):
        i = gpu.grid(1)
        if i < out.size:
            gpu.nanosleep(ns)
            out[i] = x[i] * 2 + 1
            gpu.nanosleep(np.uint32(i))

    x = rng.integers(-1000, 1000, 300).astype(np.int64)
    out = poisoned(300, np.int64)
    k[5, 64](out, x, 100)
    np.testing.assert_array_equal(out, x * 2 + 1)


def test_errors():
    def bad(x):
        gpu.nanosleep(x)   # <- float

    with pytest.raises(gpu.TypingError, match="nanosleep\\(ns\\) takes one integer"):
        gpu.compile_ptx(bad, "void(float32)")
    with pytest.raises(gpu.UnsupportedError, match="compute capability 7.0"):
        gpu.compile_ptx(use_nanosleep, (uint32,), cc=(6, 1))
    with pytest.raises(RuntimeError, match="only be called from a kernel|can only"):
        gpu.nanosleep(3)   # only in kernels
