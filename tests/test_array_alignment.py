"""alignment= of shared.array and local.array: the array's address (a.ctypes.data)
is a multiple of it, the GPU's shared global and local alloca carry it, and a
value that is not a constant power of two is a TypingError at its line."""
import numpy as np
import pytest

import gpujit as gpu
from conftest import poisoned

REC = np.dtype([("a", np.uint8), ("b", np.int32), ("c", np.float64)], align=True)


def make(alignment, dtype, shape):
    @gpu.jit
    def k(out):
        pad_s = gpu.shared.array(3, dtype=np.uint8)   # something before, to misalign by default
        pad_l = gpu.local.array(3, dtype=np.uint8)
        s = gpu.shared.array(shape, dtype=dtype, alignment=alignment)
        loc = gpu.local.array(shape, dtype=dtype, alignment=alignment)
        pad_s[0] = 1
        pad_l[0] = 1
        out[0] = s.ctypes.data
        out[1] = loc.ctypes.data
        out[2] = pad_s.ctypes.data
    return k


@pytest.mark.parametrize("alignment", [None, 16, 64, 256, 4096])
@pytest.mark.parametrize("dtype,shape", [(np.uint8, 5), (np.uint64, (2, 3)), (REC, (1, 4, 5))])
def test_addresses_are_aligned(alignment, dtype, shape):
    k = make(alignment, dtype, shape)
    out = poisoned(3, np.uint64)
    k[1, 1](out)
    want = alignment or 16
    # sm_80+ GPUs reserve the first 1 KiB of a block's shared window, so a shared array's
    # address is aligned as declared modulo 1 KiB at most (its offset in the window is)
    want_shared = min(want, 1024) if gpu.current_target() == "cuda" else want
    assert out[0] % want_shared == 0 and out[1] % want == 0
    assert out[0] != out[2]


def test_ptx_carries_the_alignment():
    ptx = gpu.compile_ptx(make(256, np.uint8, 5).py_func, "void(uint64[::1])")[0]
    assert ".shared .align 256" in ptx


@pytest.mark.parametrize("bad,message", [(3, "power of 2"), (0, "power of 2"), (-16, "power of 2"),
                                         (1.5, "constant integer"), ("16", "has type 'str'"),
                                         (8192, "limit is 4096")])
@pytest.mark.parametrize("space", ["shared", "local"])
def test_bad_alignment(bad, message, space):
    where = getattr(gpu, space)

    @gpu.jit
    def k(out):
        a = where.array(4, dtype=np.int32, alignment=bad)
        out[0] = a.ctypes.data

    with pytest.raises(gpu.CompileError, match=message):
        k[1, 1](np.zeros(1, np.uint64))


@pytest.mark.parametrize("bad", [-1, 0, 3, 17, 33])
@pytest.mark.parametrize("space", ["shared", "local"])
def test_bad_alignment_value_is_also_a_value_error(bad, space):
    # numba raises ValueError for an int that is not a power of two
    where = getattr(gpu, space)

    @gpu.jit
    def k(out):
        a = where.array(4, dtype=np.int32, alignment=bad)
        out[0] = a.ctypes.data

    with pytest.raises(ValueError, match="Alignment must be a positive power of 2, not %d" % bad) as e:
        k[1, 1](np.zeros(1, np.uint64))
    assert isinstance(e.value, gpu.errors.TypingValueError) and isinstance(e.value, gpu.TypingError)


def test_overload_inspect_llvm_and_asm():
    k = make(64, np.uint8, 5)
    out = poisoned(3, np.uint64)
    k[1, 1](out)
    (sig, overload), = k.overloads.items()
    ir = overload.inspect_llvm()
    assert "align 64" in ir and "align 64" in k.inspect_llvm(sig)  # each compile has its own symbols
    assert overload.inspect_asm() == k.inspect_asm(sig) and ".entry" in overload.inspect_asm()
    assert ".target sm_80" in overload.inspect_asm((8, 0))
