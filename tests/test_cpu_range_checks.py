"""Bounds checks of the CPU target's loops over threads (docs/cpu-backend.md,
"Bounds checks"): a check whose index is an affine function of the thread's
index leaves the loop's main run of threads (LLVM's inductive range check
elimination, IRCE, before O3), and the threads whose indices may fail keep
it. The errors must stay exactly those of the checked loop: the same
IndexError and message, for the first failing thread in linear order, and
no access past an array's end (each array here is a view between poisoned
guard elements, which must come back untouched). Each kernel also checks
that it got the fast path (IRCE's loops are in its compiled module)."""
import re

import numpy as np
import pytest

import gpujit as gpu
from gpujit import _core

from conftest import poisoned

GUARD = 8


@pytest.fixture(autouse=True)
def cpu_target():
    _core.set_target("cpu")
    yield
    _core.set_target(None)


def ir_of(kernel):
    return kernel.inspect_llvm(list(kernel.inspect_llvm())[-1])  # the current (cpu) target's


def scheme(kernel):
    ir = ir_of(kernel)
    m = re.search(r'!gpujit\.cpu_threads = !\{(![0-9]+)\}', ir)
    return re.search(re.escape(m.group(1)) + r' = !\{!"([a-z-]+)"\}', ir).group(1)


def fast_path(kernel):
    """IRCE split a loop over threads into checked runs and an unchecked main run."""
    return re.search(r"^[\w.]*(\.preloop|\.postloop|main\.exit\.selector)[\w.]*:", ir_of(kernel), re.M) is not None


def guarded(shape, dtype=np.float32):
    """A poisoned array of `shape` inside a larger one: (the view, the whole buffer)."""
    shape = (shape,) if np.isscalar(shape) else tuple(shape)
    buf = poisoned((shape[0] + 2 * GUARD,) + shape[1:], dtype)
    return buf[GUARD:GUARD + shape[0]], buf


def guards_intact(buf):
    n = buf.shape[0] - 2 * GUARD
    head, tail = buf[:GUARD], buf[GUARD + n:]
    return bool(np.isnan(head).all() and np.isnan(tail).all())


def shifted(out, x, k):
    # no barrier: the block is one loop over its threads
    i = gpu.grid(1)
    if i < x.size:
        out[i + k] = x[i] * 2.0


def shifted_regions(out, x, k):
    # barriers: the same access in a loop over threads between barriers
    sh = gpu.shared.array(64, gpu.float32)
    t = gpu.threadIdx.x
    i = gpu.grid(1)
    sh[t] = x[i] if i < x.size else gpu.float32(0.0)
    gpu.syncthreads()
    v = sh[gpu.blockDim.x - 1 - t]
    gpu.syncthreads()
    if i < x.size:
        out[i + k] = v * 2.0


def expected_failure(n_threads, size, k):
    """The first thread (in order) whose index i + k is out of range for `size`, or None."""
    for i in range(n_threads):
        j = i + k
        if not -size <= j < size:
            return j
    return None


@pytest.mark.parametrize("body", [shifted, shifted_regions])
@pytest.mark.parametrize("where", ["first", "middle", "last", "none"])
def test_one_block_fails_at(rng, body, where):
    T = 64
    x = rng.random(T, dtype=np.float32)
    # indices i + k for threads i = 0..T-1 of one block into an array of T elements:
    # negative ones wrap around (only below -T do they fail)
    k = {"first": -T - 1, "middle": T // 2, "last": 1, "none": -T // 2}[where]
    first_bad = {"first": 0, "middle": T // 2, "last": T - 1, "none": None}[where]
    out, buf = guarded(T)
    kern = gpu.jit(body)
    if first_bad is None:
        kern[1, T](out, x, k)
        ref = np.full(T, np.nan, np.float32)
        src = x if body is shifted else x[::-1]
        ref[(np.arange(T) + k) % T] = src * 2
        np.testing.assert_array_equal(out, ref)
    else:
        given = first_bad + k
        assert expected_failure(T, T, k) == given
        with pytest.raises(IndexError, match=r"index %d is out of bounds for axis 0 with size %d \(kernel '%s'"
                           % (given, T, body.__name__)):
            kern[1, T](out, x, k)
    assert guards_intact(buf)
    assert scheme(kern) == ("loop" if body is shifted else "regions")
    assert fast_path(kern)


@pytest.mark.parametrize("body", [shifted, shifted_regions])
def test_offsets_across_the_range(rng, body):
    # every offset from well below to well above the array: the result or the first bad index
    T, nb = 32, 3
    n = T * nb - int(rng.integers(0, T))
    x = rng.random(n, dtype=np.float32)
    kern = gpu.jit(body)
    ks = sorted(set([-2 * n - 1, -n - 1, -n, -n + 1, -1, 0, 1, n - 1, n] + list(rng.integers(-2 * n, 2 * n, 8))))
    for k in ks:
        k = int(k)
        out, buf = guarded(n)
        bad = expected_failure(n, n, k)
        if bad is None:
            kern[nb, T](out, x, k)
            ref = np.full(n, np.nan, np.float32)
            if body is shifted:
                ref[(np.arange(n) + k) % n] = x * 2
            else:
                xs = np.concatenate([x, np.zeros(nb * T - n, np.float32)]).reshape(nb, T)[:, ::-1].ravel()[:n]
                ref[(np.arange(n) + k) % n] = xs * 2
            np.testing.assert_array_equal(out, ref, err_msg="k=%d" % k)
        else:
            # blocks run in any order: the failing block's first bad index, when one block fails
            with pytest.raises(IndexError, match=r"out of bounds for axis 0 with size %d" % n):
                kern[nb, T](out, x, k)
        assert guards_intact(buf), k
    assert fast_path(kern)


@gpu.jit
def wrong_guard(out, x, m):
    # the guard is m, not out.size: only the threads of the last block past out.size fail
    i = gpu.grid(1)
    if i < m:
        out[i] = x[i % x.size] + 1.0


def test_only_some_threads_of_a_block_fail(rng):
    T = 64
    n = 5 * T + int(rng.integers(1, T - 1))
    x = rng.random(n, dtype=np.float32)
    out, buf = guarded(n)
    nb = (n + T - 1) // T
    with pytest.raises(IndexError, match=r"index %d is out of bounds for axis 0 with size %d" % (n, n)):
        wrong_guard[nb, T](out, x, nb * T)
    assert guards_intact(buf)
    out, buf = guarded(n)
    wrong_guard[nb, T](out, x, n)
    np.testing.assert_array_equal(out, x + 1)
    assert guards_intact(buf)
    assert fast_path(wrong_guard)


@gpu.jit
def tile_2d(out, a, k0, k1):
    sh = gpu.shared.array((8, 8), gpu.float32)
    tx = gpu.threadIdx.x
    ty = gpu.threadIdx.y
    sh[ty, tx] = a[ty + k0, tx + k1]
    gpu.syncthreads()
    out[ty, tx] = sh[tx, ty]


@pytest.mark.parametrize("k0, k1, err", [
    (0, 0, None), (-8, -8, None), (0, 1, (8, 1, 8)), (1, 0, (8, 0, 8)),
    (0, -9, (-9, 1, 8)), (-9, 0, (-9, 0, 8)), (3, 5, (8, 1, 8))])
def test_2d(rng, k0, k1, err):
    a_view, a_buf = guarded((8, 8))
    a_view[...] = rng.random((8, 8), dtype=np.float32)
    out, buf = guarded((8, 8))
    if err is None:
        tile_2d[1, (8, 8)](out, a_view, k0, k1)
        np.testing.assert_array_equal(out, np.roll(a_view, (-k0, -k1), (0, 1)).T)
    else:
        # the first failing thread in linear order (x fastest): its first bad axis
        with pytest.raises(IndexError, match=r"index %d is out of bounds for axis %d with size %d" % err):
            tile_2d[1, (8, 8)](out, a_view, k0, k1)
    assert guards_intact(buf) and guards_intact(a_buf)
    assert scheme(tile_2d) == "regions"
    assert fast_path(tile_2d)


@gpu.jit
def copy_3d(out, a, k):
    tx, ty, tz = gpu.threadIdx.x, gpu.threadIdx.y, gpu.threadIdx.z
    out[tz, ty, tx + k] = a[tz, ty, tx]


@pytest.mark.parametrize("k, bad", [(0, None), (-4, None), (1, 4), (-5, -5)])
def test_3d(rng, k, bad):
    a = rng.random((2, 3, 4), dtype=np.float32)
    out, buf = guarded((2, 3, 4))
    if bad is None:
        copy_3d[1, (4, 3, 2)](out, a, k)
        np.testing.assert_array_equal(out, np.roll(a, k, 2))
    else:
        with pytest.raises(IndexError, match=r"index %d is out of bounds for axis 2 with size 4" % bad):
            copy_3d[1, (4, 3, 2)](out, a, k)
        # the threads before the first failing one (tz = ty = 0, tx < 4 - k) ran; none after
        if k > 0:
            np.testing.assert_array_equal(out[0, 0, k:], a[0, 0, :4 - k])
    assert guards_intact(buf)
    assert scheme(copy_3d) == "loop"
    assert fast_path(copy_3d)


def test_unchecked_and_checked_agree(rng):
    # the same kernel both ways on in-range data: identical results
    n = 1000 + int(rng.integers(0, 100))
    x = rng.random(n, dtype=np.float32)
    outs = []
    for bc in (True, False):
        out = poisoned(n, np.float32)
        gpu.jit(shifted_regions, boundscheck=bc)[(n + 63) // 64, 64](out, x, 0)
        outs.append(out)
    np.testing.assert_array_equal(outs[0], outs[1])
