"""Globals and closure variables holding arrays and NumPy scalars, as numba.cuda
has them: a NumPy array is frozen into the kernel at compile time (constant
memory on the GPU), a NumPy scalar is a constant of its dtype, and a device
array is captured by reference (its address is baked into the kernel)."""
import numpy as np
import pytest

import gpujit as gpu


def no_ptx_check():
    """A kernel that captured a cpu-target array has no PTX: leave it out of conftest's
    ptxas check of what the test compiled."""
    import conftest
    conftest._pending.clear()


_rng = np.random.default_rng()
TABLE = _rng.standard_normal((3, 5)).astype(np.float32)
LUT = _rng.integers(-1000, 1000, 7).astype(np.int16)
CTAB = (_rng.standard_normal(4) + 1j * _rng.standard_normal(4)).astype(np.complex64)
SCALE32 = np.float32(_rng.uniform(0.5, 2))
OFFSET8 = np.int8(_rng.integers(-100, 100))
BIG_U = np.uint64(2**63 + 12345)
FLAG = np.bool_(True)


@gpu.jit
def use_tables(out, cout):
    i = gpu.grid(1)
    if i < TABLE.size:
        r, c = i // TABLE.shape[1], i % TABLE.shape[1]
        out[i] = TABLE[r, c] * SCALE32 + LUT[i % LUT.shape[0]] + OFFSET8
    if i < CTAB.shape[0]:
        cout[i] = CTAB[i] * 2


def test_global_arrays_and_scalars():
    out = np.full(TABLE.size, np.nan, np.float32)
    cout = np.zeros(CTAB.shape[0], np.complex64)
    use_tables[1, 32](out, cout)
    i = np.arange(TABLE.size)
    # float32 * float32 stays float32; + int16 and + int8 promote to float32 too (NumPy's rules)
    want = TABLE.ravel() * SCALE32 + LUT[i % LUT.size].astype(np.float32) + np.float32(OFFSET8)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    np.testing.assert_allclose(cout, CTAB * 2, rtol=1e-6)


def test_global_arrays_are_frozen_at_compile_time():
    saved = LUT.copy()

    @gpu.jit
    def read(out):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = LUT[i]

    out = np.zeros(LUT.size, np.int64)
    read[1, 8](out)
    np.testing.assert_array_equal(out, saved)
    LUT[:] = 0  # the compiled kernel keeps the values it was compiled with
    try:
        out[:] = -1
        read[1, 8](out)
        np.testing.assert_array_equal(out, saved)
    finally:
        LUT[:] = saved


def test_closure_array_and_scalar(rng):
    def make(weights, bias):
        @gpu.jit
        def k(x, out):
            i = gpu.grid(1)
            if i < out.size:
                acc = bias
                for j in range(weights.shape[0]):
                    acc += weights[j] * x[i]
                out[i] = acc
        return k

    w = rng.standard_normal(6)
    b = np.float64(rng.standard_normal())
    k = make(w, b)
    x = rng.standard_normal(50)
    out = np.full(50, np.nan)
    k[1, 64](x, out)
    want = np.full(50, b)
    for j in range(6):
        want += w[j] * x
    np.testing.assert_allclose(out, want, rtol=1e-12)


def test_numpy_scalar_types():
    @gpu.jit
    def k(out):
        out[0] = BIG_U >> np.uint64(60)     # uint64, not int64 or float64
        out[1] = OFFSET8 * np.int8(1)       # int8 * int8 computes in int64 (numba)
        out[2] = 1 if FLAG else 0

    out = np.zeros(3, np.int64)
    k[1, 1](out)
    assert out.tolist() == [int(BIG_U) >> 60, int(OFFSET8), 1]


def test_float32_scalar_keeps_single_precision():
    third = np.float32(1) / np.float32(3)

    @gpu.jit
    def k(out):
        out[0] = third * third  # float32 arithmetic, rounded to float32

    out = np.zeros(1, np.float64)
    k[1, 1](out)
    assert out[0] == np.float64(third * third)
    assert out[0] != np.float64(third) * np.float64(third)


def test_global_arrays_use_constant_memory_on_the_gpu():
    ptx = use_tables.inspect_ptx("void(float32[::1], complex64[::1])")
    assert ".const" in ptx


PARTS = np.dtype([("w", np.uint8), ("id", np.uint32), ("pos", np.float64), ("z", np.int16)], align=True)
RECS = np.zeros(6, PARTS)
RECS["w"] = _rng.integers(0, 255, 6)
RECS["id"] = _rng.integers(0, 2**32 - 1, 6, dtype=np.uint64)
RECS["pos"] = _rng.standard_normal(6)
RECS["z"] = _rng.integers(-2**15, 2**15 - 1, 6)
NO_RECS = np.zeros(0, [("x", np.float64), ("y", np.int64)])


def test_global_record_arrays_are_frozen_constants():
    @gpu.jit
    def k(ids, pos, small, n):
        c = gpu.const.array_like(RECS)
        e = gpu.const.array_like(NO_RECS)
        i = gpu.grid(1)
        if i < c.shape[0]:
            ids[i] = c[i]["id"]
            pos[i] = RECS[i].pos * 2.0
            small[i] = c[i].w + RECS[i]["z"]
        if i == 0:
            n[0] = len(e)

    ids, pos = np.zeros(6, np.uint64), np.full(6, np.nan)
    small, n = np.full(6, -99999, np.int64), np.full(1, -1, np.int64)
    k[1, 8](ids, pos, small, n)
    np.testing.assert_array_equal(ids, RECS["id"])
    np.testing.assert_array_equal(pos, RECS["pos"] * 2.0)
    np.testing.assert_array_equal(small, RECS["w"].astype(np.int64) + RECS["z"])
    assert n[0] == 0
    assert ".const" in k.inspect_ptx("void(uint64[::1], float64[::1], int64[::1], int64[::1])")


REVERSED = _rng.integers(-1000, 1000, 9)[::-1]      # a strided view: frozen in C order


def test_copy_of_a_frozen_array_is_a_writable_local_array(rng):
    @gpu.jit
    def k(out, out2, x):
        q = REVERSED.copy()
        t = gpu.const.array_like(TABLE)
        t2 = t.copy()
        i = gpu.grid(1)
        q[i % 9] += x[i]           # each thread's own copy
        t2[i % 3, i % 5] = -1.0
        out[i] = q[i % 9]
        out2[i] = t2[(i + 1) % 3, i % 5] + TABLE.copy()[i % 3, i % 5]

    x = rng.integers(-50, 50, 32)
    out, out2 = np.full(32, -99999), np.full(32, np.nan, np.float32)
    k[1, 32](out, out2, x)
    i = np.arange(32)
    np.testing.assert_array_equal(out, REVERSED[i % 9] + x)
    np.testing.assert_array_equal(out2, TABLE[(i + 1) % 3, i % 5] + TABLE[i % 3, i % 5])


def test_copy_of_a_run_time_sized_array_is_an_error():
    def k(out, x):
        y = x.copy()
        out[0] = y[0]

    with pytest.raises(gpu.UnsupportedError, match="copy\\(\\) of an array whose size is known only at run time"):
        gpu.jit(k)[1, 1](np.zeros(1), np.ones(3))


def test_store_into_a_global_array_is_an_error():
    @gpu.jit
    def k(out):
        TABLE[0, 0] = 1

    with pytest.raises(gpu.TypingError, match="constant array"):
        k[1, 1](np.zeros(1))


def test_device_array_captured_by_reference(rng):
    if gpu.current_target() != "cpu":
        pytest.skip("the cpu target's device arrays")
    host = rng.standard_normal(20)
    dev = gpu.to_device(host)

    @gpu.jit(device=True)
    def get(i):
        return dev[i]

    @gpu.jit
    def k(out):
        i = gpu.grid(1)
        if i < dev.shape[0]:
            out[i] = get(i) * 2
            dev[i] = i

    out = np.zeros(20)
    k[1, 32](out)
    np.testing.assert_array_equal(out, host * 2)
    np.testing.assert_array_equal(dev.copy_to_host(), np.arange(20))
    # by reference: the kernel sees the array's current contents
    new = rng.standard_normal(20)
    dev.copy_to_device(new)
    k[1, 32](out)
    np.testing.assert_array_equal(out, new * 2)
    no_ptx_check()


def test_device_array_2d_strided_capture(rng):
    if gpu.current_target() != "cpu":
        pytest.skip("the cpu target's device arrays")
    host = rng.standard_normal((6, 8))
    dev = gpu.to_device(host)[:, ::2]

    @gpu.jit
    def k(out):
        i, j = gpu.grid(2)
        if i < dev.shape[0] and j < dev.shape[1]:
            out[i, j] = dev[i, j]

    out = np.zeros((6, 4))
    k[(1, 1), (8, 8)](out)
    np.testing.assert_array_equal(out, host[:, ::2])
    no_ptx_check()


def test_device_array_of_the_other_target_is_an_error(rng):
    if gpu.current_target() != "cpu":
        pytest.skip("the cpu target's device arrays")
    dev = gpu.to_device(rng.standard_normal(4))

    def k(out):
        out[0] = dev[0]

    with pytest.raises(gpu.TypingError, match="array of the cpu target"):
        gpu.compile_ptx(k, "void(float64[::1])")
