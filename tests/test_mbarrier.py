"""gpu.mbarrier: split arrive/wait barriers in shared memory. On the CPU target a wait that finds
its phase incomplete lets the block's other threads run, so spinning on it works; PTX assembled
by ptxas for sm_80 (init, arrive, test_wait) and sm_90 (transaction counts, try_wait)."""
import numpy as np
import pytest

import gpujit as gpu
from gpujit import mbarrier
from test_wmma import assemble

RNG = np.random.default_rng()


@gpu.jit
def handoff(src, out, phases):
    """Warp 1 produces two rounds of data; warp 0 waits on the barrier for each (parity 0,
    then 1) and consumes it."""
    bars = gpu.shared.array(2, np.uint64)
    data = gpu.shared.array(32, np.float32)
    tid = gpu.threadIdx.x
    if tid == 0:
        mbarrier.init(bars, 0, 32)  # warp 1's arrivals
        mbarrier.init(bars, 1, 32)  # warp 0's: data consumed
    gpu.syncthreads()
    for r in range(2):
        if tid >= 32:
            if r:
                while not mbarrier.try_wait_parity(bars, 1, 0):
                    pass
            data[tid - 32] = src[r, tid - 32]
            mbarrier.arrive(bars, 0)
        else:
            n = 0
            while not mbarrier.test_wait_parity(bars, 0, r):
                n += 1
            out[r, tid] = data[31 - tid]
            if r == 0:
                mbarrier.arrive(bars, 1)
            phases[r, tid] = n > 0 or r == 1  # the CPU target ran warp 0 first: it had to wait


def test_handoff_between_warps():
    src = RNG.standard_normal((2, 32)).astype(np.float32)
    out = np.full((2, 32), np.nan, np.float32)
    phases = np.zeros((2, 32), np.bool_)
    handoff[1, 64](src, out, phases)
    np.testing.assert_array_equal(out, src[:, ::-1])
    assert phases.all()
    sig = "void(float32[:, ::1], float32[:, ::1], bool[:, ::1])"
    ptx = gpu.compiler.compile_ptx(handoff.py_func, sig, cc=(9, 0))[0]
    assert "mbarrier.try_wait.parity.shared::cta.b64" in ptx and "mbarrier.test_wait.parity.shared.b64" in ptx
    assemble(ptx, "sm_90")


@gpu.jit
def tokens_and_tx(out, nbytes):
    """A phase that waits for 4 arrivals and nbytes of transactions, completed in two parts."""
    bars = gpu.shared.array(1, np.int64)
    tid = gpu.threadIdx.x
    if tid == 0:
        mbarrier.init(bars, 0, 4)
    gpu.syncthreads()
    if tid == 0:
        tok = mbarrier.arrive_expect_tx(bars, 0, nbytes)
    else:
        tok = mbarrier.arrive(bars, 0)
    out[tid, 0] = mbarrier.test_wait(bars, 0, tok)  # tx pending: not complete
    gpu.syncthreads()
    if tid == 1:
        mbarrier.complete_tx(bars, 0, nbytes // 2)
    gpu.syncthreads()
    out[tid, 1] = mbarrier.test_wait(bars, 0, tok)
    gpu.syncthreads()
    if tid == 2:
        mbarrier.complete_tx(bars, 0, nbytes - nbytes // 2)
    gpu.syncthreads()
    out[tid, 2] = mbarrier.try_wait(bars, 0, tok)
    out[tid, 3] = mbarrier.test_wait_parity(bars, 0, 0)


def test_arrivals_and_transactions():
    out = np.full((4, 4), 7, np.int32)
    tokens_and_tx[1, 4](out, 1000)
    np.testing.assert_array_equal(out, [[0, 0, 1, 1]] * 4)
    ptx = gpu.compiler.compile_ptx(tokens_and_tx.py_func, "void(int32[:, ::1], int64)", cc=(9, 0))[0]
    assert "mbarrier.arrive.expect_tx.shared::cta.b64" in ptx and "mbarrier.complete_tx" in ptx
    assemble(ptx, "sm_90")


@gpu.jit
def sm80_ops(out):
    bars = gpu.shared.array(1, np.uint64)
    if gpu.threadIdx.x == 0:
        mbarrier.init(bars, 0, gpu.blockDim.x)
    gpu.syncthreads()
    tok = mbarrier.arrive(bars, 0)
    while not mbarrier.test_wait(bars, 0, tok):
        pass
    out[gpu.threadIdx.x] = 1


def test_sm80_subset():
    out = np.zeros(96, np.int32)
    sm80_ops[1, 96](out)
    assert (out == 1).all()
    ptx = gpu.compiler.compile_ptx(sm80_ops.py_func, "void(int32[::1])", cc=(8, 0))[0]
    assert "mbarrier.init.shared.b64" in ptx and "mbarrier.test_wait.shared.b64" in ptx
    assemble(ptx, "sm_80")


@gpu.jit
def never_completes(out):
    bars = gpu.shared.array(1, np.uint64)
    if gpu.threadIdx.x == 0:
        mbarrier.init(bars, 0, 64)  # more arrivals than the block has threads
    gpu.syncthreads()
    tok = mbarrier.arrive(bars, 0)
    while not mbarrier.try_wait(bars, 0, tok):
        pass
    out[0] = 1


@pytest.mark.skipif(gpu.current_target() != "cpu", reason="the CPU target finds the wait that never ends; a GPU spins")
def test_a_wait_that_never_completes_is_an_error():
    with pytest.raises(Exception, match=r"mbarrier wait: the threads of a block have waited on mbarriers"):
        never_completes[1, 32](np.zeros(1, np.int32))


def test_needs_sm90_for_transactions():
    def kern(x):
        bars = gpu.shared.array(1, np.uint64)
        mbarrier.expect_tx(bars, 0, 16)
    with pytest.raises(gpu.UnsupportedError, match=r"expect_tx needs compute capability 9.0 or newer"):
        gpu.compiler.compile_ptx(kern, "void(float32[::1])", cc=(8, 0))


@pytest.mark.parametrize("body, match", [
    ("mbarrier.init(x, 0, 1)", r"the barriers are a shared array of int64 or uint64"),
    ("b = gpu.shared.array(1, np.int32); mbarrier.arrive(b, 0)", r"shared array of int64 or uint64, not int32"),
    ("b = gpu.shared.array(1, np.int64); mbarrier.arrive(b, 0, 1)", r"takes 2 arguments"),
    ("b = gpu.shared.array(1, np.int64); mbarrier.test_wait(b, 0, 1.5)", r"last argument must be an integer"),
])
def test_misuse_is_a_typing_error(body, match):
    ns = {"mbarrier": mbarrier, "np": np, "gpu": gpu}
    exec("def kern(x):\n    " + body.replace("; ", "\n    ") + "\n", ns)
    with pytest.raises(gpu.TypingError, match=match):
        gpu.jit(ns["kern"])[1, 32](np.zeros(16, np.float32))
