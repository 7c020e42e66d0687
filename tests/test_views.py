"""Slices and array views in kernels: a[i] of an n-D array, a[i:j:k], a[:, j], a.T,
z.real / z.imag. Each view is checked against NumPy's on fresh random arrays (C and
non-contiguous), through reads, writes into the original, device functions, atomics,
shared, local, dynamic shared and constant arrays. PTX goes through ptxas (conftest)."""
import inspect

import numpy as np
import pytest

import gpujit as gpu
from conftest import assert_same, poisoned


def line_of(fn, marker):
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, l in enumerate(lines) if marker in l)


# -- Python's slice semantics, on runtime bounds ------------------------------------------------
@gpu.jit
def k_slices(a, b, e, s, form, out, lens):
    t = gpu.grid(1)
    if t >= b.size:
        return
    f = form[t]
    if f == 0:
        v = a[b[t]:e[t]:s[t]]
    elif f == 1:
        v = a[b[t]:e[t]]
    elif f == 2:
        v = a[b[t]:]
    elif f == 3:
        v = a[:e[t]]
    elif f == 4:
        v = a[::s[t]]
    elif f == 5:
        v = a[b[t]::s[t]]
    else:
        v = a[:e[t]:s[t]]
    lens[t] = len(v)
    for k in range(v.shape[0]):
        out[t, k] = v[k]


def numpy_form(a, b, e, s, f):
    return [a[b:e:s], a[b:e], a[b:], a[:e], a[::s], a[b::s], a[:e:s]][f]


@pytest.mark.parametrize("n", [0, 1, 7])
def test_slice_semantics_match_python(rng, n):
    a = rng.standard_normal(n)
    ends = [-12, -8, -7, -3, -1, 0, 1, 2, 5, 7, 8, 100, -(2 ** 63), 2 ** 63 - 1]
    steps = [-(2 ** 63), -9, -3, -2, -1, 1, 2, 3, 9, 2 ** 63 - 1]
    combos = [(b, e, s, f) for f in range(7) for b in ends for e in ends for s in steps
              if not ((f in (1, 2) or f == 3) and s != 1) and not (f == 4 and (b, e) != (0, 0))
              and not (f == 5 and e != 0) and not (f == 6 and b != 0)]
    b, e, s, form = (np.array(x, dtype=np.int64) for x in zip(*combos))
    out = poisoned((len(combos), max(n, 1)), np.float64)
    lens = poisoned(len(combos), np.int64)
    k_slices[(len(combos) + 127) // 128, 128](a, b, e, s, form, out, lens)
    for t, (bb, ee, ss, f) in enumerate(combos):
        want = numpy_form(a, bb, ee, ss, f)
        assert lens[t] == len(want), (bb, ee, ss, f)
        assert_same(out[t, :len(want)], want)


@gpu.jit
def k_unsigned_bounds(a, lo, hi, lens):
    lens[0] = len(a[lo:])
    lens[1] = len(a[:hi])
    lens[2] = len(a[lo:hi:-1])


def test_unsigned_bounds():
    a = np.zeros(10)
    for lo, hi in [(3, 8), (2 ** 64 - 1, 2 ** 63), (0, 2 ** 63 + 1)]:
        lens = poisoned(3, np.int64)
        k_unsigned_bounds[1, 1](a, np.uint64(lo), np.uint64(hi), lens)
        assert list(lens) == [len(a[lo:]), len(a[:hi]), len(a[lo:hi:-1])], (lo, hi)


# -- views of 1-D to 3-D arrays, C and not --------------------------------------------------------
@gpu.jit(device=True)
def put1(v, out, row):
    for i in range(v.shape[0]):
        out[row, i] = v[i]
    return v.shape[0]


@gpu.jit(device=True)
def put2(v, out, row):
    for i in range(v.shape[0]):
        for j in range(v.shape[1]):
            out[row, i * v.shape[1] + j] = v[i, j]
    return v.shape[0] * 1000 + v.shape[1]


@gpu.jit
def k_forms2(a, i, j, out, info):
    info[0] = put1(a[i], out, 0)
    info[1] = put2(a[i:j], out, 1)
    info[2] = put2(a[::2], out, 2)
    info[3] = put2(a[::-1], out, 3)
    info[4] = put1(a[:, j], out, 4)
    info[5] = put1(a[i, 1:], out, 5)
    info[6] = put2(a[i:], out, 6)
    info[7] = put2(a[1:-1, ::-2], out, 7)
    info[8] = put1(a[-1][::3], out, 8)
    info[9] = put2(a[:, :], out, 9)
    info[10] = put1(a[i:j][0], out, 10)
    info[11] = put2(a[i:j, j - 1:i - 8:-1], out, 11)


def forms2(a, i, j):
    return [a[i], a[i:j], a[::2], a[::-1], a[:, j], a[i, 1:], a[i:], a[1:-1, ::-2], a[-1][::3],
            a[:, :], a[i:j][0], a[i:j, j - 1:i - 8:-1]]


def check_forms(kernel, ref, a, *idx):
    want = ref(a, *idx)
    out = poisoned((len(want), a.size), a.dtype)
    info = poisoned(len(want), np.int64)
    kernel[1, 1](a, *idx, out, info)
    for r, w in enumerate(want):
        assert info[r] == (w.shape[0] if w.ndim == 1 else w.shape[0] * 1000 + w.shape[1]), r
        assert_same(out[r, :w.size], w.ravel())


@pytest.mark.parametrize("contig", [True, False])
def test_views_of_2d(rng, contig):
    base = rng.standard_normal((7, 12)).astype(np.float32)
    a = base if contig else base[:, ::2]
    if contig:
        a = a[:, :6].copy()
    for i, j in [(1, 4), (0, 5), (2, 3), (-4, -1)]:
        check_forms(k_forms2, forms2, a, i, j)


@gpu.jit
def k_forms3(a, i, j, out, info):
    info[0] = put2(a[i], out, 0)
    info[1] = put1(a[i, j], out, 1)
    info[2] = put2(a[:, i, :], out, 2)
    info[3] = put2(a[i, :, j:], out, 3)
    info[4] = put1(a[::-1, j, i], out, 4)
    info[5] = put2(a[1:, ::2, -1], out, 5)
    info[6] = put2(a[i][::-1], out, 6)
    info[7] = put1(a[:, -1, :][j], out, 7)


def forms3(a, i, j):
    return [a[i], a[i, j], a[:, i, :], a[i, :, j:], a[::-1, j, i], a[1:, ::2, -1], a[i][::-1], a[:, -1, :][j]]


@pytest.mark.parametrize("contig", [True, False])
def test_views_of_3d(rng, contig):
    base = rng.integers(-1000, 1000, (4, 5, 12)).astype(np.int64)
    a = base[:, :, :6].copy() if contig else base[:, :, ::2]
    for i, j in [(0, 1), (2, 3), (-1, -2)]:
        check_forms(k_forms3, forms3, a, i, j)


@gpu.jit
def k_ellipsis(a, i, out, info):
    info[0] = put2(a[..., i], out, 0)
    info[1] = put2(a[i, ...], out, 1)
    info[2] = put2(a[..., 1:3, i], out, 2)
    info[3] = put1(a[i, ..., ::-1][1], out, 3)
    info[4] = put1(a[..., i, 2], out, 4)
    info[5] = put2(a[...][i], out, 5)


def ellipsis_forms(a, i):
    return [a[..., i], a[i, ...], a[..., 1:3, i], a[i, ..., ::-1][1], a[..., i, 2], a[...][i]]


@pytest.mark.parametrize("contig", [True, False])
def test_ellipsis(rng, contig):
    base = rng.standard_normal((3, 4, 10))
    a = base[:, :, :5].copy() if contig else base[:, :, ::2]
    for i in (0, 2, -1):
        check_forms(k_ellipsis, ellipsis_forms, a, i)


@gpu.jit
def k_attrs(a, out):
    v = a[1:, ::-2]
    w = a[2]
    out[0] = v.shape[0]
    out[1] = v.shape[1]
    out[2] = v.strides[0]
    out[3] = v.strides[1]
    out[4] = v.size
    out[5] = v.ndim
    out[6] = w.ndim
    out[7] = w.strides[0]
    out[8] = len(w)
    t = a.T
    out[9] = t.shape[0]
    out[10] = t.strides[0]
    out[11] = t.strides[1]


@pytest.mark.parametrize("contig", [True, False])
def test_view_attributes(rng, contig):
    a = rng.standard_normal((5, 9))
    if not contig:
        a = a[::2, 1::3]
    out = poisoned(12, np.int64)
    k_attrs[1, 1](a, out)
    if gpu.current_target() == "cuda":
        a = np.ascontiguousarray(a)  # a strided host array reaches the GPU as a C-contiguous copy
    v, w, t = a[1:, ::-2], a[2], a.T
    assert list(out) == [*v.shape, *v.strides, v.size, v.ndim, w.ndim, w.strides[0], len(w), t.shape[0],
                         *t.strides]


# -- writes through views ---------------------------------------------------------------------------
@gpu.jit
def k_write(a, x, n):
    r = a[1:-1:2]                # rows 1, 3, ...
    for k in range(r.shape[0]):
        r[k, 0] = x
    c = a[:, -1]
    c[n] = -x
    a[0, 1:3] = 2 * x            # a scalar into each element
    a[-1] = 3 * x                # a whole row
    a[1:3, 3:5] = a[3:5, 1:3]    # element by element


def test_writes_through_views_reach_the_array(rng):
    for contig in (True, False):
        base = rng.standard_normal((7, 12))
        a = base[:, :6].copy() if contig else base[:, ::2]
        want = a.copy()
        k_write[1, 1](a, 1.5, 2)
        want[1:-1:2, 0] = 1.5
        want[2, -1] = -1.5
        want[0, 1:3] = 3.0
        want[-1] = 4.5
        want[1:3, 3:5] = want[3:5, 1:3].copy()
        assert_same(a, want)


@gpu.jit
def k_reverse_in_place(a):
    i = gpu.grid(1)
    r = a[::-1]
    if i < a.size // 2:
        t = a[i]
        a[i] = r[i]
        r[i] = t


def test_reverse_through_a_view(rng):
    a = rng.integers(0, 1 << 30, 1001).astype(np.int32)
    want = a[::-1].copy()
    k_reverse_in_place[8, 64](a)
    assert_same(a, want)


# -- joins, variables, device functions -----------------------------------------------------------
@gpu.jit
def k_join(a, b, flag, out):
    if flag > 0:
        v = a[1]                 # float64[::1]
    else:
        v = b[::2, 1]            # float64[:]
    w = a[1:] if flag > 1 else a[:-1]
    for k in range(v.shape[0]):
        out[k] = v[k] + w[0, k]


def test_views_across_joins(rng):
    a = rng.standard_normal((4, 5))
    b = rng.standard_normal((10, 3))
    for flag in (0, 1, 2):
        out = poisoned(5, np.float64)
        k_join[1, 1](a, b, flag, out)
        v = a[1] if flag > 0 else b[::2, 1]
        w = a[1:] if flag > 1 else a[:-1]
        assert_same(out[:len(v)], v + w[0, :len(v)])


@gpu.jit
def k_slice_values(a, n, flag, out, lens):
    s = slice(1, n)
    if flag:
        s = slice(None, None, -n)     # slice2 and slice3 meet here
    idx = (s, n - 1)
    v = a[idx]
    w = a[slice(n)]
    lens[0] = len(v)
    lens[1] = w.shape[0]
    for k in range(len(v)):
        out[k] = v[k]


def test_slice_objects_in_variables(rng):
    a = rng.standard_normal((9, 5))
    for n, flag in [(3, 0), (4, 1), (2, 1), (5, 0)]:
        out = poisoned(9, np.float64)
        lens = poisoned(2, np.int64)
        k_slice_values[1, 1](a, n, flag, out, lens)
        s = slice(None, None, -n) if flag else slice(1, n)
        want = a[s, n - 1]
        assert list(lens) == [len(want), len(a[:n])]
        assert_same(out[:len(want)], want)


@gpu.jit
def k_rebind(a, out):
    a = a[::2]                   # the argument's variable widens to float64[:]
    a = a[1:]
    for k in range(a.size):
        out[k] = a[k]


def test_argument_rebound_to_a_view(rng):
    a = rng.standard_normal(11)
    out = poisoned(11, np.float64)
    k_rebind[1, 1](a, out)
    assert_same(out[:len(a[::2][1:])], a[::2][1:])


def foo(inp, out):
    for i in range(out.shape[0]):
        out[i] = inp[i]


def test_rows_to_a_device_function_with_a_signature(rng):
    dev = gpu.jit("void(int32[:], int32[:])", device=True)(foo)

    def copy(inp, out):
        i = gpu.grid(1)
        dev(inp[i, :], out[i, :])
    k = gpu.jit("void(int32[:,:], int32[:,:])")(copy)
    inp = rng.integers(-100, 100, (10, 10)).astype(np.int32)
    out = poisoned(inp.shape, np.int32)
    k[1, 10](inp, out)
    assert_same(out, inp)


@gpu.jit(device=True)
def reversed_row(a, i):
    return a[i, ::-1]


@gpu.jit
def k_returned_view(a, out):
    i = gpu.grid(1)
    if i < a.shape[0]:
        r = reversed_row(a, i)
        for j in range(r.size):
            out[i, j] = r[j]


def test_device_function_returns_a_view(rng):
    a = rng.integers(-99, 99, (70, 9)).astype(np.int32)[:, 1:]
    out = poisoned(a.shape, np.int32)
    k_returned_view[2, 64](a, out)
    assert_same(out, a[:, ::-1])


# -- atomics on views -------------------------------------------------------------------------------
@gpu.jit
def k_atomic_views(res, old, vals, m):
    i = gpu.grid(1)
    if i < vals.size:
        gpu.atomic.add(res[i % m:], 0, vals[i])
        old[i] = gpu.atomic.compare_and_swap(res[m + i:], 0, i + 1)
        gpu.atomic.max(res[m + vals.size:], i, vals[i])


def test_atomics_on_views(rng):
    n, m = 100, 7
    vals = rng.integers(-50, 50, n).astype(np.int64)
    res = np.zeros(m + 2 * n, np.int64)
    res[m + 1::3] = 5
    start = res.copy()
    old = poisoned(n, np.int64)
    k_atomic_views[2, 64](res, old, vals, m)
    want = start.copy()
    np.add.at(want, np.arange(n) % m, vals)
    want_old = start[m:m + n].copy()
    want[m:m + n] = np.where(want_old == 0, np.arange(1, n + 1), want_old)
    want[m + n:] = np.maximum(start[m + n:], vals)
    assert_same(old, want_old)
    assert_same(res, want)


# -- shared, local, dynamic shared and constant arrays ------------------------------------------
@gpu.jit
def k_shared_view(x, out):
    sh = gpu.shared.array((4, 32), gpu.float32)
    t = gpu.threadIdx.x
    row = sh[t // 32]            # a view in shared memory
    row[t % 32] = x[t]
    gpu.syncthreads()
    col = sh[::-1, t % 32]
    out[t] = col[t // 32]


def test_views_of_shared_arrays(rng):
    x = rng.standard_normal(128).astype(np.float32)
    out = poisoned(128, np.float32)
    k_shared_view[1, 128](x, out)
    assert_same(out, x.reshape(4, 32)[::-1].ravel())


@gpu.jit
def k_dynamic_view(x, out):
    dyn = gpu.shared.array(0, gpu.int32)
    t = gpu.threadIdx.x
    n = gpu.blockDim.x
    top = dyn[n:]
    dyn[t] = x[t]
    top[t] = 2 * x[t]
    gpu.syncthreads()
    back = top[::-1]
    out[t] = back[t] - dyn[t]


def test_views_of_dynamic_shared_memory(rng):
    x = rng.integers(-1000, 1000, 64).astype(np.int32)
    out = poisoned(64, np.int32)
    k_dynamic_view[1, 64, 0, 2 * 64 * 4](x, out)
    assert_same(out, 2 * x[::-1] - x)


@gpu.jit
def k_local_view(x, out):
    i = gpu.grid(1)
    if i >= x.size:
        return
    loc = gpu.local.array((3, 4), gpu.int64)
    for r in range(3):
        for c in range(4):
            loc[r, c] = x[i] * 10 + r * 4 + c
    tail = loc[1:, ::-1]
    tail[0, 0] = -1
    out[i, 0] = tail[1, 2]
    out[i, 1] = loc[1, 3]
    out[i, 2] = loc.T[2, 0]


def test_views_of_local_arrays(rng):
    x = rng.integers(0, 1000, 100).astype(np.int64)
    out = poisoned((100, 3), np.int64)
    k_local_view[2, 64](x, out)
    assert_same(out[:, 0], x * 10 + 2 * 4 + 1)
    assert_same(out[:, 1], np.full(100, -1))
    assert_same(out[:, 2], x * 10 + 2)


TABLE = np.arange(24, dtype=np.float64).reshape(4, 6) * 0.25


@gpu.jit
def k_const_view(out):
    t = gpu.const.array_like(TABLE)
    i = gpu.threadIdx.x
    row = t[i // 6][::-1]
    out[i] = row[i % 6] + t.T[i % 6, 0]


def test_views_of_constant_arrays():
    out = poisoned(24, np.float64)
    k_const_view[1, 24](out)
    assert_same(out, np.array([TABLE[i // 6][::-1][i % 6] + TABLE.T[i % 6, 0] for i in range(24)]))


# -- .T, .real, .imag ---------------------------------------------------------------------------
@gpu.jit
def k_transpose(a, out):
    i, j = gpu.grid(2)
    t = a.T
    if i < t.shape[0] and j < t.shape[1]:
        out[i, j] = t[i, j]


@pytest.mark.parametrize("contig", [True, False])
def test_transpose(rng, contig):
    a = rng.standard_normal((13, 21))
    if not contig:
        a = a[::3, ::-2]
    out = poisoned(a.T.shape, np.float64)
    k_transpose[(2, 2), (16, 16)](a, out)
    assert_same(out, a.T)


@gpu.jit
def k_transpose3(a, out):
    t = a.T
    for i in range(t.shape[0]):
        for j in range(t.shape[1]):
            for k in range(t.shape[2]):
                out[i, j, k] = t[i, j, k]


def test_transpose_3d(rng):
    a = rng.integers(0, 100, (2, 3, 4)).astype(np.int16)
    out = poisoned((4, 3, 2), np.int16)
    k_transpose3[1, 1](a, out)
    assert_same(out, a.T)


@gpu.jit
def k_parts(z, re, im):
    i = gpu.grid(1)
    r = z.real
    m = z.imag
    if i < r.size:
        re[i] = r[i]
        im[i] = m[i]
        m[i] = -2 * r[i]        # writes one part of the element


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_real_and_imag_views(rng, dtype):
    z = (rng.standard_normal(300) + 1j * rng.standard_normal(300)).astype(dtype)
    z = z[::2]
    part = np.float32 if dtype == np.complex64 else np.float64
    want = z.copy()
    re, im = poisoned(z.size, part), poisoned(z.size, part)
    k_parts[3, 64](z, re, im)
    assert_same(re, want.real)
    assert_same(im, want.imag)
    assert_same(z.real, want.real)
    assert_same(z.imag, -2 * want.real)


@gpu.jit
def k_atomic_parts(z, idx):
    i = gpu.grid(1)
    if i < idx.size:
        gpu.atomic.add(z.real, idx[i], 1.0)
        gpu.atomic.add(z.imag[::-1], idx[i], 2.0)


def test_atomics_on_real_and_imag(rng):
    z = (rng.standard_normal(16) + 1j * rng.standard_normal(16)).astype(np.complex64)
    idx = rng.integers(0, 16, 500)
    want = z.copy()
    k_atomic_parts[8, 64](z, idx)
    counts = np.bincount(idx, minlength=16).astype(np.float32)
    assert_same(z.real, want.real + counts, rtol=1e-5)
    assert_same(z.imag, want.imag + 2 * counts[::-1], rtol=1e-5)


# -- errors -------------------------------------------------------------------------------------
def k_zero_step_const(a, out):
    v = a[::0]  # <- const
    out[0] = v[0]


def test_constant_zero_step_is_a_typing_error():
    with pytest.raises(gpu.TypingError) as e:
        gpu.compile_ptx(k_zero_step_const, "void(float64[::1], float64[::1])")
    assert "slice step cannot be zero" in str(e.value)
    assert "%s:%d" % (__file__, line_of(k_zero_step_const, "# <- const")) in str(e.value)


@gpu.jit(debug=True)
def k_zero_step(a, s, out):
    v = a[1::s]  # <- step
    out[0] = len(v)


def test_runtime_zero_step_raises_value_error():
    a = np.arange(10.0)
    out = poisoned(1, np.int64)
    k_zero_step[1, 1](a, -3, out)
    assert out[0] == len(a[1::-3])
    with pytest.raises(ValueError) as e:
        k_zero_step[1, 1](a, 0, out)
    assert "slice step cannot be zero" in str(e.value)
    assert "%s:%d" % (__file__, line_of(k_zero_step.py_func, "# <- step")) in str(e.value)


@gpu.jit(debug=True)
def k_view_bounds(a, i, j, out):
    r = a[i]  # <- row
    v = r[::2]
    out[0] = v[j]  # <- elem


def test_view_bounds_are_checked_with_debug(rng):
    a = rng.standard_normal((3, 7))
    out = poisoned(1, np.float64)
    k_view_bounds[1, 1](a, -1, 3, out)
    assert out[0] == a[-1][::2][3]
    with pytest.raises(IndexError) as e:
        k_view_bounds[1, 1](a, 3, 0, out)
    assert "index 3 is out of bounds for axis 0 with size 3" in str(e.value)
    assert "%s:%d" % (__file__, line_of(k_view_bounds.py_func, "# <- row")) in str(e.value)
    with pytest.raises(IndexError) as e:
        k_view_bounds[1, 1](a, 0, 4, out)
    assert "index 4 is out of bounds for axis 0 with size 4" in str(e.value)
    assert "%s:%d" % (__file__, line_of(k_view_bounds.py_func, "# <- elem")) in str(e.value)


def test_typing_errors_name_the_line():
    def too_many(a, out):
        out[0] = a[1, 2:, 3]  # <- many

    def float_bound(a, out):
        v = a[1.5:]  # <- float
        out[0] = v[0]

    def imag_of_real(a, out):
        v = a.imag  # <- imag
        out[0] = v[0]

    def shape_mismatch(a, out):
        a[1] = a  # <- rank

    def two_ellipses(a, out):
        out[0] = a[..., 1, ...]  # <- ellipses
    for fn, exc, marker, msg in [
            (too_many, gpu.TypingError, "# <- many", "too many indices"),
            (float_bound, gpu.TypingError, "# <- float", "slice indices must be integers"),
            (imag_of_real, gpu.UnsupportedError, "# <- imag", "imag"),
            (shape_mismatch, gpu.TypingError, "# <- rank", "2-dimensional array to a 1-dimensional"),
            (two_ellipses, gpu.TypingError, "# <- ellipses", "a single ellipsis")]:
        with pytest.raises(exc) as e:
            gpu.compile_ptx(fn, "void(float64[:, ::1], float64[::1])")
        assert msg in str(e.value)
        assert "%s:%d" % (__file__, line_of(fn, marker)) in str(e.value)


def test_view_types_follow_numba():
    def f(a, out):
        r = a[1]
        s = a[1:3]
        t = a[:, 1]
        u = a[::2]
        w = a[1, 1:]
        x = a.T
        y = a[..., 1]
        z = a[1, ...]
        out[0] = r[0] + s[0, 0] + t[0] + u[0, 0] + w[0] + x[0, 0] + y[0] + z[0]
    k = gpu.jit("void(float32[:, ::1], float32[::1])")(f)
    types = k.inspect_types_text()
    for var, spelled in [("r", "float32[::1]"), ("s", "float32[:, ::1]"), ("t", "float32[:]"),
                         ("u", "float32[:, :]"), ("w", "float32[::1]"), ("x", "float32[:, :]"),
                         ("y", "float32[:]"), ("z", "float32[::1]")]:
        assert any(l.split(None, 3)[2:] == [var, spelled] for l in types.splitlines()), (var, types)
