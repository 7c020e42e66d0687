"""gpu.ldca/ldcg/ldcs/ldlu/ldcv and gpu.stcg/stcs/stwb/stwt: loads and stores of a global
array's element with a PTX cache operator (plain ones on the CPU target)."""
import numpy as np
import pytest

import gpujit as gpu

LOADS = [(gpu.ldca, "ca"), (gpu.ldcg, "cg"), (gpu.ldcs, "cs"), (gpu.ldlu, "lu"), (gpu.ldcv, "cv")]
STORES = [(gpu.stcg, "cg"), (gpu.stcs, "cs"), (gpu.stwb, "wb"), (gpu.stwt, "wt")]
DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]


def _random(shape, dt):
    rng = np.random.default_rng()
    if np.dtype(dt).kind == "f":
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)


def _sig(x):
    dims = ", ".join([":"] * (x.ndim - 1) + ["::1"])
    return "void(%s[%s], %s[%s])" % (x.dtype.name, dims, x.dtype.name, dims)


@pytest.mark.parametrize("op,mod", LOADS, ids=[m for _, m in LOADS])
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_loads(op, mod, dt):
    def f(r, x):
        i = gpu.grid(1)
        if i < r.size:
            r[i] = op(x, i)

    k = gpu.jit(f)
    x = _random(300, dt)
    r = np.zeros_like(x)
    r[:] = 7
    k[3, 128](r, x)
    np.testing.assert_array_equal(r, x)
    assert "ld.global.%s.b%d " % (mod, x.itemsize * 8) in k.inspect_asm(_sig(x))


@pytest.mark.parametrize("op,mod", STORES, ids=[m for _, m in STORES])
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_stores_2d(op, mod, dt):
    def f(r, x):
        i, j = gpu.grid(2)
        if i < x.shape[0] and j < x.shape[1]:
            op(r, (i, j), x[i, j])

    k = gpu.jit(f)
    x = _random((9, 13), dt)
    r = np.zeros_like(x)
    r[:] = 7
    k[(2, 2), (8, 8)](r, x)
    np.testing.assert_array_equal(r, x)
    assert "st.global.%s.b%d " % (mod, x.itemsize * 8) in k.inspect_asm(_sig(x))


def test_load_2d_and_store_converts_the_value():
    @gpu.jit
    def f(r, x):
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                gpu.stcs(r, (i, j), gpu.ldcg(x, (i, j)) * 2)   # int64 * 2 stored into float32

    x = _random((4, 5), np.int16).astype(np.int64)
    r = np.full(x.shape, np.nan, np.float32)
    f[1, 1](r, x)
    np.testing.assert_array_equal(r, (x * 2).astype(np.float32))


@pytest.mark.parametrize("body,sig,msg", [
    ("gpu.ldcs(x, 1.0)", "void(float32[::1])", "float64 is not a valid index"),
    ("gpu.ldcs(x, (1, 2))", "void(float32[::1])", "Expected 1 indices, got 2"),
    ("gpu.ldcs(x, 1)", "void(float32[:, ::1])", "Expected 2 indices, got a scalar"),
    ("gpu.ldcs(x, (1,))", "void(float32[:, ::1])", "Expected 2 indices, got 1"),
    ("gpu.ldcs(x, 0)", "void(complex64[::1])", "ldcs requires array of integer or float type"),
    ("gpu.stwt(x, 0)", "void(float32[::1])", r"stwt\(array, index, value\) takes 3 arguments"),
    ("gpu.ldca(gpu.shared.array(4, gpu.float32), 0)", "void(float32[::1])", "needs an array in global memory"),
])
def test_bad_uses_are_typing_errors(body, sig, msg):
    ns = {"gpu": gpu}
    exec("def k(x):\n    %s\n" % body, ns)
    with pytest.raises(gpu.TypingError, match=msg):
        gpu.compile_ptx(ns["k"], sig)


def test_outside_a_kernel():
    with pytest.raises(RuntimeError, match="inside a @gpujit.jit kernel"):
        gpu.ldcg(np.zeros(3), 0)
