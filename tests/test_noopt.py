"""opt=False (numba's -O0): no LLVM optimisation, so locals stay in memory (the PTX
has a local depot), and no floating-point contraction into FMAs, on both targets;
the results are the same as with optimisation, and x * y + z is rounded twice, as
NumPy rounds it."""
import math

import numpy as np
import pytest

import gpujit as gpu
from conftest import assemble_ptx, poisoned, random_array
from gpujit.types import float64, void


def store_one(x):
    x[0] = 1


def mul_add(x, y, z):
    return x * y + z


def test_locals_stay_in_memory_without_optimisation():
    sig = void(float64[::1])
    for opt, depot in ((True, False), (False, True)):
        eager = gpu.jit(sig, opt=opt)(store_one)
        ptx = eager.inspect_asm(sig)
        assemble_ptx([("store_one opt=%s" % opt, ptx)])
        assert ("__local_depot0" in ptx) == depot
        assert ("__local_depot0" in gpu.compile_ptx(store_one, sig, opt=opt)[0]) == depot
        lazy = gpu.jit(opt=opt)(store_one)
        x = poisoned(1, np.float64)
        lazy[1, 1](x)
        assert x[0] == 1
        (ptx,) = lazy.inspect_asm().values()
        assert ("__local_depot0" in ptx) == depot


def test_no_fma_contraction_without_optimisation():
    sig = (float64, float64, float64)
    assert "fma.rn.f64" in gpu.jit(sig, device=True)(mul_add).inspect_asm(sig)
    ptx = gpu.jit(sig, device=True, opt=False)(mul_add).inspect_asm(sig)
    assert "fma.rn.f64" not in ptx and "mul.rn.f64" in ptx and "add.rn.f64" in ptx
    assert "fma.rn" not in gpu.jit(device=True, opt=False)(mul_add).compile_device(sig).ptx


def body(x, y, out, hist):
    i = gpu.grid(1)
    sm = gpu.shared.array(64, dtype=np.float64)
    loc = gpu.local.array(4, dtype=np.float64)
    t = gpu.threadIdx.x
    if i < x.size:
        sm[t] = x[i] * y[i] + 0.5  # two roundings without optimisation
        for k in range(4):
            loc[k] = math.sin(x[i] * k)
    gpu.syncthreads()
    if i < x.size:
        other = sm[(t + 1) % gpu.blockDim.x] if (gpu.blockIdx.x * gpu.blockDim.x + (t + 1) % gpu.blockDim.x) < x.size \
            else 0.0
        out[i, 0] = sm[t]
        out[i, 1] = other
        out[i, 2] = loc[0] + loc[1] + loc[2] + loc[3]
        gpu.atomic.add(hist, int(x[i] * 8), 1)


def test_results_match_the_optimised_kernel(rng):
    n = int(rng.integers(100, 300))
    x = random_array(rng, n, np.float64)
    x = np.abs(x) / (np.abs(x).max() + 1)  # in [0, 1): histogram bins 0..7
    y = random_array(rng, n, np.float64)
    fused = gpu.jit(body)
    plain = gpu.jit(opt=False)(body)
    results = []
    for k in (fused, plain):
        out = poisoned((n, 3), np.float64)
        hist = np.zeros(8, np.int64)
        k[(n + 63) // 64, 64](x, y, out, hist)
        results.append((out, hist))
    (o1, h1), (o2, h2) = results
    want = x * y + 0.5  # NumPy rounds the product, then the sum
    np.testing.assert_array_equal(o2[:, 0], want)  # exactly: no FMA
    assert np.all(np.abs(o1[:, 0] - want) <= 2.0 ** -52 * (np.abs(x * y) + 0.5))  # an FMA's one rounding may differ
    idx = np.arange(n)
    nxt = (idx // 64) * 64 + (idx % 64 + 1) % 64
    np.testing.assert_array_equal(o2[:, 1], np.where(nxt < n, want[np.minimum(nxt, n - 1)], 0.0))
    np.testing.assert_allclose(o2[:, 2], sum(np.sin(x * k) for k in range(4)), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(o1[:, 2], o2[:, 2], rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(h1, np.bincount((x * 8).astype(int), minlength=8))
    np.testing.assert_array_equal(h2, h1)


@pytest.mark.parametrize("opt", [True, False])
def test_opt_false_is_its_own_kernel(opt):
    # two kernels of one function, compiled with and without optimisation, each keep theirs
    a, b = gpu.jit(opt=opt)(store_one), gpu.jit(opt=not opt)(store_one)
    sig = void(float64[::1])
    assert ("__local_depot0" in a.inspect_asm(sig)) != ("__local_depot0" in b.inspect_asm(sig))
