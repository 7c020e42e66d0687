"""gpu.atomic.*: contended updates from many threads of many blocks (blocks run in parallel
on the CPU backend), exact expected results, on global and shared arrays, with 1-D and tuple
indices; each op returns the old value. PTX of each kernel goes through ptxas (conftest)."""
import numpy as np
import pytest

import gpujit as gpu
from conftest import assert_same, poisoned

N = 4096          # threads
SLOTS = 5         # contended elements
ALL = [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]
INTS = [np.int32, np.uint32, np.int64, np.uint64]


def make(op):
    @gpu.jit
    def k(acc, old, x):
        i = gpu.grid(1)
        if i < x.size:
            old[i] = op(acc, i % acc.size, x[i])
    return k


def values(rng, dtype, n=N, small=False):
    dt = np.dtype(dtype)
    if dt.kind == "f":   # integers in float: sums are exact whatever the order
        return rng.integers(-1000, 1000, n).astype(dtype)
    info = np.iinfo(dt)
    if small:
        return rng.integers(0, 1000, n).astype(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def run(op, acc, x):
    old = poisoned(x.shape, acc.dtype)
    make(op)[N // 128, 128](acc, old, x)
    return old


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", ["add", "sub"])
def test_add_sub(rng, name, dtype):
    x = values(rng, dtype, small=True)
    init = values(rng, dtype, SLOTS, small=True)
    acc = init.copy()
    old = run(getattr(gpu.atomic, name), acc, x)
    want = init.copy()
    with np.errstate(over="ignore"):
        (np.add if name == "add" else np.subtract).at(want, np.arange(N) % SLOTS, x)
    assert_same(acc, want)
    assert not np.isnan(old.astype(np.float64)).any()   # every thread got its old value


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", ["max", "min", "nanmax", "nanmin"])
def test_max_min(rng, name, dtype):
    x = values(rng, dtype)
    init = np.full(SLOTS, x[0], dtype)
    acc = init.copy()
    old = run(getattr(gpu.atomic, name), acc, x)
    red = np.maximum if "max" in name else np.minimum
    want = init.copy()
    red.at(want, np.arange(N) % SLOTS, x)
    assert_same(acc, want)
    assert set(old[0::SLOTS]) <= set(x[0::SLOTS]) | {x[0]}


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("name", ["and_", "or_", "xor"])
def test_bitwise(rng, name, dtype):
    x = values(rng, dtype)
    init = values(rng, dtype, SLOTS)
    acc = init.copy()
    run(getattr(gpu.atomic, name), acc, x)
    want = init.copy()
    {"and_": np.bitwise_and, "or_": np.bitwise_or, "xor": np.bitwise_xor}[name].at(want, np.arange(N) % SLOTS, x)
    assert_same(acc, want)


@pytest.mark.parametrize("dtype", ALL)
def test_exch(rng, dtype):
    x = np.arange(N).astype(dtype)
    acc = np.full(1, -1 if np.dtype(dtype).kind != "u" else 99999, dtype)
    init = acc[0]
    old = run(gpu.atomic.exch, acc, x)
    # the chain of exchanges: every value but the last stored is someone's old value
    assert sorted(np.append(old, acc[0])) == sorted(np.append(x, init))


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
def test_inc_dec_wrap(rng, dtype):
    limit = int(rng.integers(3, 50))
    x = np.full(N, limit, dtype)
    acc = np.zeros(1, dtype)
    old = run(gpu.atomic.inc, acc, x)
    assert acc[0] == N % (limit + 1)                        # old >= limit ? 0 : old + 1
    assert_same(np.sort(old), np.sort(np.arange(N) % (limit + 1)).astype(dtype))
    start = int(rng.integers(0, limit + 1))
    acc = np.array([start], dtype)
    old = run(gpu.atomic.dec, acc, x)
    seq, v = [], start
    for _ in range(N):                                     # old == 0 or old > limit ? limit : old - 1
        seq.append(v)
        v = limit if v == 0 or v > limit else v - 1
    assert acc[0] == v
    assert_same(np.sort(old), np.sort(np.array(seq, dtype)))


@gpu.jit
def k_cas(slots, old, won):
    i = gpu.grid(1)
    if i < old.size:
        old[i] = gpu.atomic.cas(slots, i // 8, -1, i)    # one thread of each 8 wins its slot


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_cas(dtype):
    slots = np.full(N // 8, -1, dtype)
    old = poisoned(N, dtype)
    k_cas[N // 128, 128](slots, old, old)
    for s in range(N // 8):
        group = old[8 * s: 8 * s + 8]
        winner = slots[s]
        assert 8 * s <= winner < 8 * s + 8
        assert group[winner - 8 * s] == -1
        assert (np.delete(group, winner - 8 * s) == winner).all()


@gpu.jit
def k_compare_and_swap(a, out):
    out[0] = gpu.atomic.compare_and_swap(a, 5, 7)
    out[1] = gpu.atomic.compare_and_swap(a, 5, 9)


def test_compare_and_swap():
    a = np.array([5, 0], np.uint32)
    out = poisoned(2, np.uint32)
    k_compare_and_swap[1, 1](a, out)
    assert_same(out, np.array([5, 7], np.uint32))
    assert a[0] == 7


@gpu.jit
def k_nan(a, out):
    out[0] = gpu.atomic.max(a, 0, 5.0)      # NaN element: left alone
    out[1] = gpu.atomic.nanmax(a, 1, 5.0)   # NaN element: replaced
    out[2] = gpu.atomic.max(a, 2, np.nan)   # NaN value: ignored
    out[3] = gpu.atomic.nanmin(a, 3, np.nan)
    out[4] = gpu.atomic.min(a, 4, -3.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_max_min_nan_semantics(dtype):
    a = np.array([np.nan, np.nan, 1.0, 1.0, 2.0], dtype)
    out = np.zeros(5, dtype)
    k_nan[1, 1](a, out)
    assert np.isnan(a[0]) and a[1] == 5 and a[2] == 1 and a[3] == 1 and a[4] == -3
    assert np.isnan(out[0]) and np.isnan(out[1]) and list(out[2:]) == [1, 1, 2]


@gpu.jit
def k_hist2d(hist, data):
    # a per-block histogram in shared memory, then merged into the global one
    sh = gpu.shared.array((4, 8), gpu.int32)
    t = gpu.threadIdx.x
    if t < 32:
        sh[t // 8, t % 8] = 0
    gpu.syncthreads()
    i = gpu.grid(1)
    if i < data.shape[0]:
        gpu.atomic.add(sh, (data[i, 0], data[i, 1]), 1)
    gpu.syncthreads()
    if t < 32:
        gpu.atomic.add(hist, (t // 8, t % 8), sh[t // 8, t % 8])


def test_shared_and_tuple_indices(rng):
    data = np.stack([rng.integers(0, 4, N), rng.integers(0, 8, N)], axis=1)
    hist = np.zeros((4, 8), np.int32)
    k_hist2d[N // 256, 256](hist, data)
    want = np.zeros((4, 8), np.int32)
    np.add.at(want, (data[:, 0], data[:, 1]), 1)
    assert_same(hist, want)


def test_atomic_errors():
    def bad_type(a):
        gpu.atomic.inc(a, 0, 1)
    with pytest.raises(gpu.TypingError, match=r"atomic.inc on int32 arrays is not supported \(uint32, uint64 are\)"):
        gpu.compile_ptx(bad_type, "void(int32[::1])")

    def bad_float(a):
        gpu.atomic.and_(a, 0, 1)
    with pytest.raises(gpu.TypingError, match="and_ on float64 arrays"):
        gpu.compile_ptx(bad_float, "void(float64[::1])")

    def bad_index(a):
        gpu.atomic.add(a, 0, 1)
    with pytest.raises(gpu.TypingError, match="1 indices for a 2-dimensional array"):
        gpu.compile_ptx(bad_index, "void(float64[:, ::1])")

    def bad_cas(a):
        gpu.atomic.cas(a, 0, 1)
    with pytest.raises(gpu.TypingError, match="takes 4 arguments"):
        gpu.compile_ptx(bad_cas, "void(int64[::1])")
