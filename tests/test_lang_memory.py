"""Dynamic shared memory (gpu.shared.array(0, dtype), sized by the launch's 4th config
value) and constant memory (gpu.const.array_like). PTX goes through ptxas (conftest)."""
import numpy as np
import pytest

import gpujit as gpu
from conftest import assert_same, poisoned


@gpu.jit
def k_dynamic(out, sizes, x):
    stat = gpu.shared.array(3, gpu.int8)       # static arrays come first
    dyn = gpu.shared.array(0, gpu.float32)
    alias = gpu.shared.array(0, gpu.int32)     # the same memory, as CUDA's extern __shared__
    t = gpu.threadIdx.x
    i = gpu.grid(1)
    if t == 0:
        stat[0] = 1
        sizes[gpu.blockIdx.x, 0] = dyn.shape[0]
        sizes[gpu.blockIdx.x, 1] = alias.size
        sizes[gpu.blockIdx.x, 2] = len(dyn)
    dyn[t] = x[i]
    gpu.syncthreads()
    out[i, 0] = dyn[gpu.blockDim.x - 1 - t]    # reverse through shared memory
    out[i, 1] = alias[t]                       # the float's bits
    out[i, 2] = stat[0]


@pytest.mark.parametrize("extra", [0, 6])
def test_dynamic_shared(rng, extra):
    blocks, threads = 5, 64
    x = rng.random(blocks * threads).astype(np.float32)
    out = poisoned((blocks * threads, 3), np.float64)
    sizes = poisoned((blocks, 3), np.int64)
    nbytes = threads * 4 + extra
    k_dynamic[blocks, threads, 0, nbytes](out, sizes, x)
    assert (sizes == nbytes // 4).all()
    assert_same(out[:, 0], x.reshape(blocks, threads)[:, ::-1].ravel().astype(np.float64))
    assert_same(out[:, 1], x.view(np.int32).astype(np.float64))
    assert (out[:, 2] == 1).all()


def test_dynamic_shared_ptx():
    def f(out):
        a = gpu.shared.array(0, gpu.float64)
        b = gpu.shared.array((0,), gpu.int32)
        b[1] = 7
        out[0] = a.size + b.size + int(a[0])
    ptx, _ = gpu.compile_ptx(f, "void(int64[::1])")
    assert ".extern .shared .align 16 .b8 __gj_dynamic_shared[]" in ptx
    assert "%dynamic_smem_size" in ptx


TABLE = np.arange(24, dtype=np.float64).reshape(4, 6) * 0.5
LUT = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int32)


@gpu.jit
def k_const(out):
    t = gpu.const.array_like(TABLE)
    lut = gpu.const.array_like(LUT)
    i = gpu.grid(1)
    if i < 24:
        out[i] = t[i // 6, i % 6] + lut[i % 8] + t.shape[1] * 1000


def test_const_array_like():
    out = poisoned(24, np.float64)
    k_const[1, 32](out)
    i = np.arange(24)
    assert_same(out, TABLE.ravel() + LUT[i % 8] + 6000)
    ptx = k_const.inspect_ptx(k_const.signatures[0])
    assert ".const .align 16 .b8" in ptx


def test_shape_from_a_local_constant(rng):
    # a local assigned once from a constant is a compile-time constant, as in numba
    @gpu.jit
    def k(out, x):
        n = 48
        m = 12
        s = gpu.shared.array(n, gpu.float64)
        loc = gpu.local.array(m, gpu.int32)
        dims = 1
        i = gpu.grid(dims)
        s[i] = x[i] * 2.0
        loc[i % m] = i
        gpu.syncthreads()
        out[i] = s[n - 1 - i] + loc[i % m]

    x = rng.random(48)
    out = poisoned(48, np.float64)
    k[1, 48](out, x)
    np.testing.assert_array_equal(out, x[::-1] * 2.0 + np.arange(48))


def test_shape_from_a_reassigned_local_is_an_error():
    def k(out):
        n = 4
        if out[0] > 0:
            n = 8
        s = gpu.shared.array(n, gpu.float64)
        out[0] = s[0]

    with pytest.raises(gpu.TypingError, match="compile-time constant"):
        gpu.compile_ptx(k, "void(float64[::1])")
