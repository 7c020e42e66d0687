"""Compute capabilities with numba's architecture-specific suffix: cc=(9, 0, 'a') compiles
for sm_90a (PTX ISA 8.0); other suffixes and other ccs with one are a ValueError."""
import os
import subprocess
import tempfile

import numpy as np
import pytest

import gpujit as gpu
from conftest import PTXAS


def test_sm_90a():
    def k(out, x):
        i = gpu.grid(1)
        if i < x.size:
            out[i] = x[i] * np.float32(2)
    ptx, resty = gpu.compile_ptx(k, "void(float32[::1], float32[::1])", cc=(9, 0, "a"))
    assert ".target sm_90a" in ptx and ".version 8.0" in ptx
    plain, _ = gpu.compile_ptx(k, "void(float32[::1], float32[::1])", cc=(9, 0))
    assert ".target sm_90\n" in plain and ".version 7.8" in plain
    if PTXAS:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "k.ptx")
            with open(path, "w") as f:
                f.write(ptx)
            r = subprocess.run([PTXAS, "-arch=sm_90a", "-o", os.devnull, path], capture_output=True, text=True)
            assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("cc,message", [
    ((10, 0, "a"), r"\(10, 0, 'a'\) is not supported: .* sm_90a, \(9, 0, 'a'\), only"),
    ((9, 0, "f"), r"\(9, 0, 'f'\) is not supported"),
    ((8, 6, "a"), r"\(8, 6, 'a'\) is not supported"),
    ((9, 0, 1), r"cc must be a \(major, minor\) pair of ints .* not \(9, 0, 1\)"),
    ((9, 0, "ab"), r"not \(9, 0, 'ab'\)"),
    ((9, 0, "a", 1), r"not \(9, 0, 'a', 1\)"),
])
def test_bad_suffixes(cc, message):
    with pytest.raises(ValueError, match=message):
        gpu.compile_ptx(lambda: None, (), cc=cc)
