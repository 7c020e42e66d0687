"""Bounds checks by default on the CPU target: an out-of-range index (load or
store, any ndim, negative after wrap-around, shared/local/constant arrays,
inside device functions) makes the launch raise IndexError naming the kernel,
the file:line, the index, the axis and its size, and never reaches memory.
@jit(boundscheck=False) and GPUJIT_CPU_BOUNDSCHECK=0 turn the checks off;
boundscheck=True turns them on for the GPU too, whose default stays unchecked."""
import inspect

import numpy as np
import pytest

import gpujit as gpu
from conftest import assert_same, poisoned

pytestmark = pytest.mark.skipif(gpu.current_target() != "cpu", reason="the CPU target's default")


def line_of(fn, marker):
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, l in enumerate(lines) if marker in l)


def where(fn, marker):
    return "(kernel '%s', %s:%d)" % (fn.__name__, __file__, line_of(fn, marker))


def raises_oob(kernel, launch, args, index, axis, size, marker):
    with pytest.raises(IndexError) as e:
        kernel[launch](*args)
    msg = str(e.value)
    assert "index %d is out of bounds for axis %d with size %d" % (index, axis, size) in msg, msg
    assert where(kernel.py_func, marker) in msg, msg
    return msg


@gpu.jit
def store1(out, shift):
    i = gpu.grid(1)
    out[i + shift] = i  # <- store1


@gpu.jit
def load1(src, out, shift):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = src[i + shift]  # <- load1


@gpu.jit
def store2(a, i, j):
    a[i, j] = 7.0  # <- store2


@gpu.jit
def load3(a, out, i, j, k):
    out[0] = a[i, j, k]  # <- load3


def test_store_1d_past_the_end_raises_and_stays_inside(rng):
    # a guard zone around the array: a bad store must not land next to it
    n = int(rng.integers(20, 60))
    buf = np.full(n + 64, -1.0)
    out = buf[32:32 + n]
    raises_oob(store1, (1, n), (out, 5), n, 0, n, "# <- store1")
    assert (buf[:32] == -1.0).all() and (buf[32 + n:] == -1.0).all()
    assert_same(out[5:], np.arange(n - 5, dtype=np.float64))  # the in-range threads ran


def test_load_1d_raises(rng):
    src = rng.standard_normal(100)
    out = poisoned(100, np.float64)
    raises_oob(load1, (1, 128), (src, out, 3), 100, 0, 100, "# <- load1")


def test_negative_index_past_the_start_raises():
    a = np.zeros((3, 4))
    store2[1, 1](a, -1, -4)              # in range after wrap-around
    assert a[2, 0] == 7.0 and a.sum() == 7.0
    raises_oob(store2, (1, 1), (a, -4, 0), -4, 0, 3, "# <- store2")
    raises_oob(store2, (1, 1), (a, 0, -5), -5, 1, 4, "# <- store2")
    raises_oob(store2, (1, 1), (a, 1, 4), 4, 1, 4, "# <- store2")
    assert a.sum() == 7.0                # the bad stores went nowhere


def test_3d_each_axis(rng):
    a = rng.standard_normal((2, 3, 4))
    out = poisoned(1, np.float64)
    load3[1, 1](a, out, 1, -1, 3)
    assert out[0] == a[1, -1, 3]
    raises_oob(load3, (1, 1), (a, out, 2, 0, 0), 2, 0, 2, "# <- load3")
    raises_oob(load3, (1, 1), (a, out, 0, 3, 0), 3, 1, 3, "# <- load3")
    raises_oob(load3, (1, 1), (a, out, 0, 0, -5), -5, 2, 4, "# <- load3")
    # a strided (non-contiguous) view is checked against its own shape
    v = a[:, ::2, ::-1]
    load3[1, 1](v, out, 1, 1, 0)
    assert out[0] == v[1, 1, 0]
    raises_oob(load3, (1, 1), (v, out, 0, 2, 0), 2, 1, 2, "# <- load3")


@gpu.jit
def shared_oob(x, out, extra):
    sh = gpu.shared.array(32, gpu.float32)
    t = gpu.threadIdx.x
    sh[t] = x[t]
    gpu.syncthreads()
    out[t] = sh[t + extra]  # <- shared


def test_shared_array(rng):
    x = rng.standard_normal(32).astype(np.float32)
    out = poisoned(32, np.float32)
    shared_oob[1, 32](x, out, 0)
    assert_same(out, x)
    raises_oob(shared_oob, (1, 32), (x, out, 1), 32, 0, 32, "# <- shared")


@gpu.jit
def local_oob(out, k):
    loc = gpu.local.array(8, gpu.int32)
    for j in range(8):
        loc[j] = j * 3
    loc[k] = 1  # <- local
    out[0] = loc[0] + loc[7]


TABLE = np.arange(12, dtype=np.int64).reshape(3, 4)


@gpu.jit
def const_oob(out, i):
    t = gpu.const.array_like(TABLE)
    out[0] = t[i, 1]  # <- const


def test_local_and_const_arrays():
    out = poisoned(1, np.int32)
    local_oob[1, 1](out, 7)
    assert out[0] == 1
    raises_oob(local_oob, (1, 1), (out, 8), 8, 0, 8, "# <- local")
    o64 = poisoned(1, np.int64)
    const_oob[1, 1](o64, -1)
    assert o64[0] == TABLE[-1, 1]
    raises_oob(const_oob, (1, 1), (o64, 3), 3, 0, 3, "# <- const")


def helper(arr, i):
    return arr[i]  # <- helper


def test_inside_a_device_function():
    @gpu.jit
    def k(x, out):
        i = gpu.grid(1)
        out[i] = helper(x, i + 1)

    x = np.arange(8.0)
    out = poisoned(8, np.float64)
    with pytest.raises(IndexError) as e:
        k[1, 8](x, out)
    msg = str(e.value)
    assert "index 8 is out of bounds for axis 0 with size 8" in msg
    assert "%s:%d" % (__file__, line_of(helper, "# <- helper")) in msg


@gpu.jit
def saxpy2d(out, a, x, y):
    i, j = gpu.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a * x[i, j] + y[i, -1 - j]


def test_correct_kernel_gives_right_results_and_the_next_launch_is_clean(rng):
    x = rng.standard_normal((37, 23))
    y = rng.standard_normal((37, 23))
    out = poisoned((37, 23), np.float64)
    saxpy2d[(5, 3), (8, 8)](out, 1.5, x, y)
    assert_same(out, 1.5 * x + y[:, ::-1], atol=4e-15)  # a * x + y is one FMA in the kernel
    # an error in one launch does not leak into the next
    src = rng.standard_normal(100)
    o = poisoned(100, np.float64)
    with pytest.raises(IndexError):
        load1[1, 128](src, o, 1)
    load1[1, 128](src, o, 0)
    assert_same(o, src)


SIG = "void(float64[::1], float64[::1], int64)"
CHECK_IR = "cmpxchg"  # the first thread out of range claims the error record


def plain_copy(src, out, shift):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = src[i + shift]


def test_checks_are_in_the_code_by_default():
    assert CHECK_IR in gpu.jit(plain_copy).inspect_llvm(SIG)


def test_boundscheck_false_removes_the_checks(rng):
    k = gpu.jit(boundscheck=False)(plain_copy)
    assert CHECK_IR not in k.inspect_llvm(SIG)
    src = rng.standard_normal(300)
    out = poisoned(200, np.float64)
    k[4, 64](src, out, 100)  # in range: same results without the checks
    assert_same(out, src[100:])


def test_env_opt_out(monkeypatch, rng):
    monkeypatch.setenv("GPUJIT_CPU_BOUNDSCHECK", "0")
    k = gpu.jit(plain_copy)
    assert CHECK_IR not in k.inspect_llvm(SIG)
    src = rng.standard_normal(300)
    out = poisoned(200, np.float64)
    k[4, 64](src, out, 100)
    assert_same(out, src[100:])
    # boundscheck=True wins over the environment
    assert CHECK_IR in gpu.jit(boundscheck=True)(plain_copy).inspect_llvm(SIG)
    monkeypatch.setenv("GPUJIT_CPU_BOUNDSCHECK", "1")
    assert CHECK_IR in gpu.jit(plain_copy).inspect_llvm(SIG)


def test_gpu_default_unchecked_and_boundscheck_true_checks():
    cas = ("atom.global.cas.b64", "atom.cas.b64")
    plain = gpu.jit(plain_copy).inspect_ptx(SIG)
    assert not any(c in plain for c in cas)
    checked = gpu.jit(boundscheck=True)(plain_copy).inspect_ptx(SIG)
    assert any(c in checked for c in cas)
    ptx, _ = gpu.compile_ptx(plain_copy, SIG, boundscheck=True)
    assert any(c in ptx for c in cas)
    ptx, _ = gpu.compile_ptx(plain_copy, SIG)
    assert not any(c in ptx for c in cas)


def test_device_function_accepts_the_option():
    dev = gpu.jit(device=True, boundscheck=False)(helper)
    assert dev(np.arange(3.0), 1) == 1.0


# ---- index paths that once skipped the check ----

@gpu.jit
def cas_from(res, i, new):
    gpu.atomic.compare_and_swap(res[i:], 0, new)  # <- cas_from


def test_compare_and_swap_on_an_empty_slice_raises_and_stays_inside(rng):
    # compare_and_swap works on element 0: an empty array has none
    big = rng.integers(1, 100, 16)
    big[2] = big[4] = 0
    keep = big.copy()
    raises_oob(cas_from, (1, 1), (big[:4], 10, 77), 0, 0, 0, "# <- cas_from")
    raises_oob(cas_from, (1, 1), (big[:4], 4, 77), 0, 0, 0, "# <- cas_from")
    assert_same(big, keep)  # big[4] (just past the slice) untouched
    cas_from[1, 1](big[:4], 2, 77)  # in range: element 2 of big swapped
    keep[2] = 77
    assert_same(big, keep)
    empty = np.zeros(0, np.int64)
    raises_oob(cas_from, (1, 1), (empty, 0, 66), 0, 0, 0, "# <- cas_from")


def raises_tuple(kernel, args, marker, what="tuple", fn=None):
    with pytest.raises(IndexError) as e:
        kernel[1, 1](*args)
    msg = str(e.value)
    assert msg.startswith("%s index out of range (kernel '%s', %s:%d, tid=[0, 0, 0]"
                          % (what, kernel.py_func.__name__, __file__, line_of(fn or kernel.py_func, marker))), msg


@gpu.jit
def tuple_item(out, j):
    s = (10, 20, 30)
    out[0] = s[j]  # <- tuple_item


@gpu.jit
def tuple_of_arrays(a, b, j, v):
    t = (a, b)
    arr = t[j]  # <- tuple_of_arrays
    arr[0] = v


def helper_item(t, j):
    return t[j]  # <- helper_item


@gpu.jit
def tuple_in_device_function(out, j):
    out[0] = helper_item((1.5, 2.5, 3.5, 4.5), j)


@gpu.jit
def shape_item(a, out, k):
    out[0] = a.shape[k]  # <- shape_item


@pytest.mark.parametrize("boundscheck", [None, True])
def test_variable_tuple_index_out_of_range_raises(rng, boundscheck):
    k = gpu.jit(boundscheck=boundscheck)(tuple_item.py_func) if boundscheck else tuple_item
    s = (10, 20, 30)
    for j in rng.permutation(np.arange(-3, 3)):
        out = poisoned(1, np.float64)
        k[1, 1](out, j)
        assert out[0] == s[j]
    for j in (3, 5, -4, 10**9, -10**9):
        out = poisoned(1, np.float64)
        raises_tuple(k, (out, j), "# <- tuple_item")
        assert np.isnan(out[0])  # the store after the bad read never happened
    # an unsigned index never counts from the end
    raises_tuple(k, (poisoned(1, np.float64), np.uint64(2**64 - 1)), "# <- tuple_item")


def test_variable_tuple_index_into_arrays_raises_and_writes_nowhere(rng):
    a, b = rng.integers(0, 9, 4), rng.integers(0, 9, 4)
    keep_a, keep_b = a.copy(), b.copy()
    for j in (2, 3, -3, 1000):
        raises_tuple(tuple_of_arrays, (a, b, j, 99), "# <- tuple_of_arrays")
    assert_same(a, keep_a)
    assert_same(b, keep_b)
    tuple_of_arrays[1, 1](a, b, -1, 99)
    keep_b[0] = 99
    assert_same(b, keep_b)


def test_variable_tuple_index_in_a_device_function_and_of_a_shape():
    out = poisoned(1, np.float64)
    tuple_in_device_function[1, 1](out, -4)
    assert out[0] == 1.5
    raises_tuple(tuple_in_device_function, (poisoned(1, np.float64), 4), "# <- helper_item", fn=helper_item)
    a = np.zeros((2, 3))
    out = poisoned(1, np.int64)
    shape_item[1, 1](a, out, -1)
    assert out[0] == 3
    raises_tuple(shape_item, (a, out, 2), "# <- shape_item")


LOOKUP = tuple(range(7, 307))  # more than 256 items: a lookup table in memory
FLOOKUP = tuple(float(x) / 8 for x in range(-150, 150))


@gpu.jit
def table_item(out, j):
    out[0] = LOOKUP[j]  # <- table_item
    out[1] = FLOOKUP[j]


@pytest.mark.parametrize("debug", [False, True])
def test_global_table_index_out_of_range_raises(rng, debug):
    k = gpu.jit(debug=debug)(table_item.py_func) if debug else table_item
    for j in list(rng.integers(-300, 300, 5)) + [0, 299, -300]:
        out = poisoned(2, np.float64)
        k[1, 1](out, j)
        assert_same(out, np.array([LOOKUP[j], FLOOKUP[j]], np.float64))
    for j in (300, -301, 10**8, -10**8):
        out = poisoned(2, np.float64)
        raises_tuple(k, (out, j), "# <- table_item")
        assert np.isnan(out).all()


@gpu.jit
def range_item(out, n, j):
    out[0] = range(3, n, 2)[j]  # <- range_item


def test_range_index_out_of_range_raises(rng):
    n = int(rng.integers(10, 40))
    r = range(3, n, 2)
    for j in (0, len(r) - 1, -1, -len(r)):
        out = poisoned(1, np.int64)
        range_item[1, 1](out, n, j)
        assert out[0] == r[j]
    for j in (len(r), -len(r) - 1, 10**12):
        raises_tuple(range_item, (poisoned(1, np.int64), n, j), "# <- range_item", what="range object")


# an int64 index whose arithmetic wraps (to 2 here): the check holds for the wrapped value,
# the one the address is computed from (nsw would let LLVM drop the check)
@gpu.jit
def wrapped_store(out, v):
    t = gpu.threadIdx.x
    out[((t * 4611686018427387904) + (-9223372036854775808)) - 9223372036854775806] = v  # <- wrapped_store


@gpu.jit
def wrapped_load(src, out):
    t = gpu.threadIdx.x
    out[0] = src[((t * 4611686018427387904) + (-9223372036854775808)) - 9223372036854775806]  # <- wrapped_load


@gpu.jit
def wrapped_arg(out, a, b, v):
    i = gpu.grid(1)
    out[(i + a) + b] = v  # <- wrapped_arg


def test_wrapping_index_arithmetic_is_checked_as_it_wraps(rng):
    buf = np.full(8, -1, np.int64)
    raises_oob(wrapped_store, (1, 1), (buf[:1], 5), 2, 0, 1, "# <- wrapped_store")
    raises_oob(wrapped_store, (1, 1), (buf[:2], 5), 2, 0, 2, "# <- wrapped_store")
    assert (buf == -1).all()
    wrapped_store[1, 1](buf[:3], 5)  # in range after the wrap, as NumPy's int64 gives it
    assert list(buf) == [-1, -1, 5] + [-1] * 5
    src = rng.integers(0, 100, 8)
    out = poisoned(1, np.int64)
    raises_oob(wrapped_load, (1, 1), (src[:1], out), 2, 0, 1, "# <- wrapped_load")
    wrapped_load[1, 1](src[:3], out)
    assert out[0] == src[2]
    buf = np.full(8, -1, np.int64)
    raises_oob(wrapped_arg, (1, 1), (buf[:1], -2 ** 63, -2 ** 63 + 2, 5), 2, 0, 1, "# <- wrapped_arg")
    assert (buf == -1).all()


def test_negative_1d_index_wraps_and_past_the_start_raises(rng):
    # a 1-D signed index is tried as it is first; only a failure wraps it and checks again
    src = rng.standard_normal(100)
    out = poisoned(100, np.float64)
    load1[1, 128](src, out, -100)  # src[i - 100] is src[i]
    assert_same(out, src)
    raises_oob(load1, (1, 128), (src, poisoned(100, np.float64), -101), -101, 0, 100, "# <- load1")
    raises_oob(load1, (1, 128), (src, poisoned(100, np.float64), -2 ** 62), -2 ** 62, 0, 100, "# <- load1")
