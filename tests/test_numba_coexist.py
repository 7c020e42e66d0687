"""gpujit and numba (whose llvmlite carries its own LLVM) in one process, imported in either order:
each compiles and runs its own functions, interleaved, and gets the right answers. A wheel links
LLVM statically with its symbols hidden, so neither LLVM binds to the other's symbols. Each order
runs in a fresh interpreter; skipped where numba is not installed."""
import importlib.util
import os
import subprocess
import sys

import pytest

import gpujit as gpu

CHILD = r"""
import sys
if sys.argv[1] == "numba-first":
    import numba
    import gpujit as gpu
else:
    import gpujit as gpu
    import numba
import math
import numpy as np

assert gpu.current_target() == "cpu", gpu.current_target()
rng = np.random.default_rng(int(sys.argv[2]))


@numba.njit
def sum_sq(x):
    s = 0.0
    for v in x:
        s += v * v
    return s


@numba.njit
def sines(x):
    return np.sin(x) * 2.0


@gpu.jit
def square(out, x):
    i = gpu.grid(1)
    if i < x.size:
        out[i] = x[i] * x[i]


@gpu.jit
def sine(out, x):
    i = gpu.grid(1)
    if i < x.size:
        out[i] = math.sin(x[i]) * 3.0


x = rng.uniform(-4, 4, 1000)
out = np.full_like(x, np.nan)
square[(x.size + 127) // 128, 128](out, x)              # gpujit first
assert np.array_equal(out, x * x), "gpujit kernel"
assert math.isclose(sum_sq(x), float((x * x).sum()), rel_tol=1e-12), "numba function"
out = np.full_like(x, np.nan)
sine[(x.size + 127) // 128, 128](out, x)                # gpujit again, after numba compiled
np.testing.assert_allclose(out, np.sin(x) * 3.0, rtol=1e-12)
np.testing.assert_allclose(sines(x), np.sin(x) * 2.0, rtol=1e-12)   # numba again
print("ok", numba.__version__)
"""


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba is not installed")
@pytest.mark.parametrize("order", ["numba-first", "gpujit-first"])
def test_numba_and_gpujit_in_one_process(order):
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(gpu.__file__)))
    env = dict(os.environ, GPUJIT_TARGET="cpu")
    env["PYTHONPATH"] = os.pathsep.join([pkg_root] + [p for p in [env.get("PYTHONPATH")] if p])
    seed = int.from_bytes(os.urandom(4), "little")
    p = subprocess.run([sys.executable, "-c", CHILD, order, str(seed)], env=env, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0 and p.stdout.startswith("ok"), \
        "exit %d (seed %d):\n%s\n%s" % (p.returncode, seed, p.stdout[-3000:], p.stderr[-3000:])
