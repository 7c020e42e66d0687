"""gpu.cp_async: asynchronous global-to-shared copies with commit and wait groups. On the CPU
target a copy lands at the wait that covers it (checked here: reads before the wait see the old
contents); its PTX is assembled by ptxas for sm_80 and sm_90."""
import numpy as np
import pytest

import gpujit as gpu
from gpujit import cp_async
from test_wmma import assemble

RNG = np.random.default_rng()


@gpu.jit
def staged(src, out, seen):
    """Two groups of 16-byte copies (8 float16 each): after wait_group(1) the first has landed
    and the second, on the CPU target, has not."""
    sh = gpu.shared.array(512, np.float16)
    i = gpu.threadIdx.x
    for j in range(16):
        sh[i * 16 + j] = -1
    gpu.syncthreads()
    cp_async.copy(sh, i * 8, src, i * 8, 16)
    cp_async.commit_group()
    cp_async.copy(sh, 256 + i * 8, src, 256 + i * 8, 16)
    cp_async.commit_group()
    cp_async.wait_group(1)
    seen[i] = sh[256 + i * 8]
    gpu.syncthreads()
    out[i] = sh[(31 - i) * 8]
    cp_async.wait_all()
    gpu.syncthreads()
    out[32 + i] = sh[256 + (31 - i) * 8 + 7]


def test_groups_land_at_their_waits():
    src = RNG.standard_normal(512).astype(np.float16)
    out = np.full(64, np.nan, np.float16)
    seen = np.full(32, np.nan, np.float16)
    staged[1, 32](src, out, seen)
    np.testing.assert_array_equal(out[:32], src[:256:8][::-1])
    np.testing.assert_array_equal(out[32:], src[256 + 7::8][::-1])
    if gpu.current_target() == "cpu":   # a GPU may land a pending group before its wait
        np.testing.assert_array_equal(seen, -1)  # the pending group had not landed
    sig = "void(float16[::1], float16[::1], float16[::1])"
    for cc, arch in (((8, 0), "sm_80"), ((9, 0), "sm_90")):
        ptx = gpu.compiler.compile_ptx(staged.py_func, sig, cc=cc)[0]
        assert "cp.async.cg.shared.global" in ptx and "cp.async.wait_group 1;" in ptx
        assert "cp.async.wait_all;" in ptx and ptx.count("cp.async.commit_group;") == 2
        assemble(ptx, arch)


@gpu.jit
def many(src, out, nbytes4):
    """More copies pending than the CPU target's queue holds (64): the oldest land early."""
    sh = gpu.shared.array((2, 100), np.int32)
    for j in range(100):
        cp_async.copy(sh, (gpu.threadIdx.x, j), src, (gpu.threadIdx.x, 99 - j), 4)
    cp_async.wait_all()
    for j in range(100):
        out[gpu.threadIdx.x, j] = sh[gpu.threadIdx.x, j]


def test_more_copies_than_the_queue():
    src = RNG.integers(-1000, 1000, (2, 100)).astype(np.int32)
    out = np.full((2, 100), -1, np.int32)
    many[1, 2](src, out, 4)
    np.testing.assert_array_equal(out, src[:, ::-1])


@pytest.mark.parametrize("body, match", [
    ("cp_async.copy(x, 0, x, 0, 4)", r"destination must be a shared array"),
    ("s = gpu.shared.array(8, np.float32); cp_async.copy(s, 0, s, 0, 4)", r"source must be a global array"),
    ("s = gpu.shared.array(8, np.float32); cp_async.copy(s, 0, x, 0, 12)", r"nbytes must be the constant 4, 8 or 16"),
    ("s = gpu.shared.array(8, np.float64); cp_async.copy(s, 0, x, 0, 4)", r"4 bytes is not a whole number of float64"),
    ("s = gpu.shared.array(8, np.float32); cp_async.copy(s, (0, 1), x, 0, 4)", r"destination index must be 1 integer"),
    ("cp_async.wait_group(8)", r"takes one constant, 0 to 7"),
    ("cp_async.commit_group(1)", r"commit_group\(\) takes no arguments"),
])
def test_misuse_is_a_typing_error(body, match):
    ns = {"cp_async": cp_async, "np": np, "gpu": gpu}
    exec("def kern(x):\n    " + body.replace("; ", "\n    ") + "\n", ns)
    with pytest.raises(gpu.TypingError, match=match):
        gpu.jit(ns["kern"])[1, 32](np.zeros(16, np.float32))


def test_needs_sm80():
    def kern(x):
        cp_async.wait_all()
    with pytest.raises(gpu.UnsupportedError, match=r"compute capability 8.0 or newer"):
        gpu.compiler.compile_ptx(kern, "void(float32[::1])", cc=(7, 5))
