"""gpu.wmma: tensor-core fragments and mma_sync, on the CPU target against NumPy under the
documented rule (products exact, summed in float32 in order of k; tf32 rounded to nearest,
ties away from zero, when loaded), and their PTX assembled by ptxas for sm_80 and sm_90."""
import os
import subprocess
import tempfile

import ml_dtypes
import numpy as np
import pytest

import gpujit as gpu
from gpujit import wmma
from conftest import PTXAS

RNG = np.random.default_rng()


def tf32(x):
    """float32 rounded to tf32 as cvt.rna.tf32.f32 does (NaN and infinity kept)."""
    x = np.asarray(x, np.float32)
    bits = x.view(np.uint32)
    r = ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).astype(np.uint32)
    special = (bits & np.uint32(0x7FFFFFFF)) >= np.uint32(0x7F800000)
    return np.where(special, bits, r).view(np.float32)


def ref_mma(a, b, c):
    """d = a @ b + c by the CPU target's rule."""
    if a.dtype.kind in "iu":
        return (a.astype(np.int64) @ b.astype(np.int64) + c).astype(np.int32)
    if a.dtype == np.float32:
        a, b = tf32(a), tf32(b)
    acc = c.astype(np.float32)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    for k in range(a.shape[1]):
        acc = acc + a32[:, k:k + 1] * b32[k:k + 1, :]  # each product exact in float32
    return acc.astype(c.dtype)


def assert_mma(got, a, b, c):
    """got is a @ b + c: bit for bit by the CPU target's rule there; on a GPU, whose tensor
    cores sum in an order and width of their own, within the rule's bound (each of the k
    additions off by at most float32's half ulp of the running |sum|, so k * 2**-23 * (|a| @ |b|
    + |c|) in all), plus float16's rounding of a float16 result. Integers are exact on both."""
    want = ref_mma(a, b, c)
    if gpu.current_target() == "cpu" or a.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
        return
    if a.dtype == np.float32:
        a, b = tf32(a), tf32(b)
    mag = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)) + np.abs(c.astype(np.float64))
    bound = a.shape[1] * 2.0 ** -23 * mag + (2.0 ** -11 * np.abs(want.astype(np.float64)) if c.dtype == np.float16 else 0)
    err = np.abs(got.astype(np.float64) - (a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64)))
    assert not np.isnan(got).any()
    assert (err <= bound + 2.0 ** -24 * mag).all(), float((err - bound).max())


def rand(shape, dtype):
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return RNG.integers(info.min, info.max + 1, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def assemble(ptx, arch):
    if not PTXAS:
        return
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        p = subprocess.run([PTXAS, "-arch=" + arch, "-o", os.devnull, path], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr


def make_kernel(m, n, k, ab, acc, la, lb, lc):
    """One mma of a (m x k) and b (k x n) onto c, the operands in 2-D arrays; a and b stored
    transposed where their layout is col_major, c and d where lc is."""
    @gpu.jit
    def kern(a, b, c, d):
        fa = wmma.fragment(wmma.matrix_a, m, n, k, ab, la)
        fb = wmma.fragment(wmma.matrix_b, m, n, k, ab, lb)
        fc = wmma.fragment(wmma.accumulator, m, n, k, acc)
        wmma.load_matrix_sync(fa, a)
        wmma.load_matrix_sync(fb, b)
        wmma.load_matrix_sync(fc, c, lc)
        wmma.mma_sync(fc, fa, fb, fc)
        wmma.store_matrix_sync(d, fc, lc)
    return kern


BF16 = ml_dtypes.bfloat16
CASES = [(16, 16, 16, np.float16, np.float32), (16, 16, 16, np.float16, np.float16),
         (16, 8, 16, np.float16, np.float32), (16, 8, 16, np.float16, np.float16),
         (16, 16, 16, BF16, np.float32), (16, 8, 16, BF16, np.float32),
         (16, 16, 8, np.float32, np.float32), (16, 8, 8, np.float32, np.float32),
         (16, 16, 16, np.int8, np.int32), (16, 8, 16, np.int8, np.int32),
         (16, 16, 16, np.uint8, np.int32), (16, 8, 16, np.uint8, np.int32)]
ROW, COL = wmma.row_major, wmma.col_major


@pytest.mark.parametrize("m, n, k, ab, acc", CASES)
@pytest.mark.parametrize("la, lb, lc", [(ROW, ROW, ROW), (COL, COL, COL), (ROW, COL, ROW)])
def test_mma_matches_numpy(m, n, k, ab, acc, la, lb, lc):
    kern = make_kernel(m, n, k, ab, acc, la, lb, lc)
    a, b = rand((m, k), ab), rand((k, n), ab)
    c = rand((m, n), acc) if acc != np.int32 else RNG.integers(-1000, 1000, (m, n)).astype(np.int32)
    t = lambda x, lay: np.ascontiguousarray(x.T) if lay is COL else x  # noqa: E731
    d = np.full((n, m) if lc is COL else (m, n), -1 if acc == np.int32 else np.nan, acc)
    kern[1, 32](t(a, la), t(b, lb), t(c, lc), d)
    assert_mma(d.T if lc is COL else d, a, b, c)
    x, y = np.dtype(ab).name, np.dtype(acc).name
    sig = "void(%s[:, ::1], %s[:, ::1], %s[:, ::1], %s[:, ::1])" % (x, x, y, y)
    for cc, arch in (((8, 0), "sm_80"), ((9, 0), "sm_90")):
        ptx = gpu.compiler.compile_ptx(kern.py_func, sig, cc=cc)[0]
        assert ptx.count("mma.sync.aligned.m16n8k%d.row.col" % k) == n // 8
        assemble(ptx, arch)


def make_shared_kernel(n, la, lb, dt=np.float16):
    """As make_kernel for dt (float16 or bfloat16) -> float32, A and B staged through shared
    memory (where the GPU loads fragments with ldmatrix), each shared row padded by 8 elements."""
    @gpu.jit
    def kern(a, b, c, d):
        sa = gpu.shared.array((16, 24), dt)
        sb = gpu.shared.array((16, 24), dt)
        lane = gpu.threadIdx.x
        for e in range(lane, a.size, 32):
            sa[e // a.shape[1], e % a.shape[1]] = a[e // a.shape[1], e % a.shape[1]]
        for e in range(lane, b.size, 32):
            sb[e // b.shape[1], e % b.shape[1]] = b[e // b.shape[1], e % b.shape[1]]
        gpu.syncthreads()
        fa = wmma.fragment(wmma.matrix_a, 16, n, 16, dt, la)
        fb = wmma.fragment(wmma.matrix_b, 16, n, 16, dt, lb)
        fc = wmma.fragment(wmma.accumulator, 16, n, 16, np.float32)
        wmma.load_matrix_sync(fa, sa[:, :16])
        wmma.load_matrix_sync(fb, sb[:b.shape[0], :b.shape[1]])
        wmma.load_matrix_sync(fc, c, wmma.row_major)
        wmma.mma_sync(fc, fa, fb, fc)
        wmma.store_matrix_sync(d, fc, wmma.row_major)
    return kern


@pytest.mark.parametrize("dt", [np.float16, BF16])
@pytest.mark.parametrize("n", [16, 8])
@pytest.mark.parametrize("la, lb", [(ROW, ROW), (COL, COL), (ROW, COL), (COL, ROW)])
def test_fragments_from_shared_memory(n, la, lb, dt):
    kern = make_shared_kernel(n, la, lb, dt)
    a, b = rand((16, 16), dt), rand((16, n), dt)
    c = rand((16, n), np.float32)
    t = lambda x, lay: np.ascontiguousarray(x.T) if lay is COL else x  # noqa: E731
    d = np.full((16, n), np.nan, np.float32)
    kern[1, 32](t(a, la), t(b, lb), c, d)
    assert_mma(d, a, b, c)
    x = np.dtype(dt).name
    ptx = gpu.compiler.compile_ptx(kern.py_func, "void(%s[:, ::1], %s[:, ::1], float32[:, ::1], "
                                   "float32[:, ::1])" % (x, x), cc=(8, 0))[0]
    ptx_type = {"float16": "f16", "bfloat16": "bf16"}[x]
    assert "mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32" % (ptx_type, ptx_type) in ptx
    assert ptx.count("ldmatrix.sync.aligned.m8n8") == 2
    assert ptx.count(".trans.shared.b16") == (la is COL) + (lb is ROW)  # memory rows along the tile's columns
    assert ("ldmatrix.sync.aligned.m8n8.x2" in ptx) == (n == 8)
    assemble(ptx, "sm_80")


@gpu.jit(device=True)
def tile_mma(acc, a, b):
    fa = wmma.fragment(wmma.matrix_a, 16, 16, 16, np.float16)
    fb = wmma.fragment(wmma.matrix_b, 16, 16, 16, np.float16)
    wmma.load_matrix_sync(fa, a)
    wmma.load_matrix_sync(fb, b)
    wmma.mma_sync(acc, fa, fb, acc)


@gpu.jit
def mma_in_device_fn(a, b, c):
    acc = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32)
    wmma.fill_fragment(acc, -2)
    tile_mma(acc, a, b)
    wmma.store_matrix_sync(c, acc, wmma.row_major)


def test_fragment_passed_to_a_device_function():
    a, b = rand((16, 16), np.float16), rand((16, 16), np.float16)
    c = np.full((16, 16), np.nan, np.float32)
    mma_in_device_fn[1, 32](a, b, c)
    assert_mma(c, a, b, np.full((16, 16), -2, np.float32))


def test_tf32_rounds_on_load():
    """Elements of float32 fragments are rounded to tf32 (ties away from zero) when loaded."""
    kern = make_kernel(16, 16, 8, np.float32, np.float32, ROW, ROW, ROW)
    # 1 + 2**-11 is a tie between two tf32 values: it rounds up to 1 + 2**-10
    a = np.zeros((16, 8), np.float32)
    a[:, 0] = 1 + 2.0 ** -11
    b = np.zeros((8, 16), np.float32)
    b[0, :] = 1.0
    d = np.full((16, 16), np.nan, np.float32)
    kern[1, 32](a, b, np.zeros((16, 16), np.float32), d)
    np.testing.assert_array_equal(d, np.float32(1 + 2.0 ** -10))


@gpu.jit
def tiled_gemm(a, b, c):
    """c = a @ b, float16 in, float32 out: a warp per 16x16 tile of c, 4 warps a block."""
    warp = gpu.threadIdx.x // 32
    i = (gpu.blockIdx.y * 2 + warp // 2) * 16
    j = (gpu.blockIdx.x * 2 + warp % 2) * 16
    fa = wmma.fragment(wmma.matrix_a, 16, 16, 16, np.float16)
    fb = wmma.fragment(wmma.matrix_b, 16, 16, 16, np.float16)
    acc = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32)
    wmma.fill_fragment(acc, 0)
    for k in range(0, a.shape[1], 16):
        wmma.load_matrix_sync(fa, a[i:i + 16, k:k + 16])
        wmma.load_matrix_sync(fb, b[k:k + 16, j:j + 16])
        wmma.mma_sync(acc, fa, fb, acc)
    wmma.store_matrix_sync(c[i:i + 16, j:j + 16], acc, wmma.row_major)


def test_tiled_gemm_views():
    M, N, K = 64, 32, 48
    a, b = rand((M, K), np.float16), rand((K, N), np.float16)
    c = np.full((M, N), np.nan, np.float32)
    tiled_gemm[(N // 32, M // 32), 128](a, b, c)
    assert_mma(c, a, b, np.zeros((M, N), np.float32))
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-3)


@gpu.jit
def flat_ldm(a, b, c, lda, ldb, ldc):
    """1-D arrays with leading dimensions, as CUDA's pointers; a col-major accumulator."""
    fa = wmma.fragment(wmma.matrix_a, 16, 16, 16, np.float16, wmma.col_major)
    fb = wmma.fragment(wmma.matrix_b, 16, 16, 16, np.float16, wmma.row_major)
    acc = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32)
    wmma.fill_fragment(acc, 1.5)
    wmma.load_matrix_sync(fa, a, lda)
    wmma.load_matrix_sync(fb, b[3:], ldb)
    wmma.mma_sync(acc, fa, fb, acc)
    wmma.store_matrix_sync(c, acc, ldc, wmma.mem_col_major)


def test_flat_arrays_with_ldm():
    lda, ldb, ldc = 20, 24, 17
    a = rand((16, lda), np.float16)  # column j of A is a[j, :16]
    b = rand(3 + 16 * ldb, np.float16)
    c = np.full(16 * ldc, np.nan, np.float32)
    flat_ldm[1, 32](a.ravel(), b, c, lda, ldb, ldc)
    A = a[:, :16].T
    B = b[3:].reshape(16, ldb)[:, :16]
    assert_mma(c.reshape(16, ldc)[:, :16].T, A, B, np.full((16, 16), 1.5, np.float32))
    assert np.isnan(c.reshape(16, ldc)[:, 16:]).all()  # nothing written past the tile


def test_fragment_elements_per_lane():
    """A fragment is the lane's elements; the accumulator's element i of lane l is
    (l // 4 + 8 * (i % 4 // 2), 2 * (l % 4) + i % 2 + 8 * (i // 4)), as documented."""
    @gpu.jit
    def kern(out):
        acc = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32)
        lane = gpu.threadIdx.x
        for i in range(len(acc)):
            acc[i] = lane * 100 + i
        wmma.store_matrix_sync(out, acc, wmma.row_major)

    out = np.full((16, 16), np.nan, np.float32)
    kern[1, 32](out)
    want = np.full((16, 16), np.nan, np.float32)
    for lane in range(32):
        for i in range(8):
            want[lane // 4 + 8 * (i % 4 // 2), 2 * (lane % 4) + i % 2 + 8 * (i // 4)] = lane * 100 + i
    np.testing.assert_array_equal(out, want)


def compile_error(src_fn, sig, cc=(9, 0)):
    return gpu.compiler.compile_ptx(src_fn, sig, cc=cc)


def test_needs_sm80():
    def kern(x):
        wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32)
    with pytest.raises(gpu.UnsupportedError, match=r"compute capability 8.0 or newer .*7.5"):
        gpu.compiler.compile_ptx(kern, "void(float32[::1])", cc=(7, 5))


@pytest.mark.parametrize("body, match", [
    ("wmma.fragment(wmma.matrix_a, 32, 8, 16, np.float16)", r"no tensor-core shape m=32 n=8 k=16"),
    ("wmma.fragment(wmma.matrix_a, 16, 16, 16, np.float64)", r"cannot hold float64"),
    ("wmma.fragment(wmma.accumulator, 16, 16, 8, np.float16)", r"accumulator fragment of shape 16x16x8 cannot hold"),
    ("wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32, wmma.row_major)", r"accumulator takes no layout"),
    ("wmma.fragment(wmma.row_major, 16, 16, 16, np.float32)", r"matrix_a, wmma.matrix_b or wmma.accumulator"),
    ("f = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32); wmma.load_matrix_sync(f, x)",
     r"an accumulator needs the memory's layout"),
    ("f = wmma.fragment(wmma.matrix_a, 16, 16, 16, np.float16); wmma.load_matrix_sync(f, x)",
     r"the array holds float32 and the fragment float16"),
    ("f = wmma.fragment(wmma.matrix_a, 16, 16, 16, np.float16); wmma.store_matrix_sync(x, f, wmma.row_major)",
     r"only an accumulator fragment can be stored"),
    ("f = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32); wmma.load_matrix_sync(f, x[0], wmma.row_major)",
     r"needs ldm"),
    ("a = wmma.fragment(wmma.matrix_a, 16, 16, 16, np.float16); "
     "f = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32); wmma.mma_sync(f, a, a, f)",
     r"argument 3 must be a matrix_b fragment, not wmma.fragment\(matrix_a, 16, 16, 16, float16, row_major\)"),
    ("a = wmma.fragment(wmma.matrix_a, 16, 16, 16, np.float16); "
     "b = wmma.fragment(wmma.matrix_b, 16, 8, 16, np.float16); "
     "f = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32); wmma.mma_sync(f, a, b, f)",
     r"the fragments' shapes differ"),
    ("a = wmma.fragment(wmma.matrix_a, 16, 16, 16, np.float16); "
     "b = wmma.fragment(wmma.matrix_b, 16, 16, 16, np.float16); "
     "f = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32); "
     "h = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float16); wmma.mma_sync(f, a, b, h)",
     r"d holds float32 and c float16"),
    ("wmma.row_major(x)", r"row_major is an argument of the wmma functions"),
])
def test_misuse_is_a_typing_error(body, match):
    ns = {"wmma": wmma, "np": np}
    exec("def kern(x):\n    " + body.replace("; ", "\n    ") + "\n", ns)
    with pytest.raises(gpu.TypingError, match=match):
        gpu.jit(ns["kern"])[1, 32](np.zeros((16, 16), np.float32))


def test_example_gemm_ptx():
    """examples/tc_gemm.py (run by test_examples) assembles for sm_80 and sm_90, its
    fragments in registers."""
    import importlib.util
    path = os.path.join(os.path.dirname(__file__), "..", "examples", "tc_gemm.py")
    spec = importlib.util.spec_from_file_location("example_tc_gemm", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for cc, arch in (((8, 0), "sm_80"), ((9, 0), "sm_90")):
        ptx = gpu.compiler.compile_ptx(mod.tc_gemm.py_func, "void(float16[:, ::1], float16[:, ::1], float32[:, ::1])",
                                       cc=cc)[0]
        assert "cp.async.cg.shared.global" in ptx and "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
        assert ".local" not in ptx
        assemble(ptx, arch)


def misaligned_shared(a, c, off):
    sa = gpu.shared.array((16, 32), np.float16)
    for e in range(gpu.threadIdx.x, 512, 32):
        sa[e // 32, e % 32] = 0
    gpu.syncthreads()
    fa = wmma.fragment(wmma.matrix_a, 16, 16, 16, np.float16)
    wmma.load_matrix_sync(fa, sa[:, off:off + 16])
    acc = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32)
    wmma.fill_fragment(acc, 0)
    wmma.store_matrix_sync(c, acc, wmma.row_major)


@pytest.mark.parametrize("debug", [True, False])
def test_shared_rows_must_be_16_byte_aligned(debug):
    """What ldmatrix reads on the GPU: a shared tile whose rows start off a 16-byte boundary
    raises ValueError on the CPU target too (reported with debug=True; without it the threads
    stop there, as at any raise); one that starts on a boundary loads."""
    kern = gpu.jit(debug=debug)(misaligned_shared)
    c = np.full((16, 16), np.nan, np.float32)
    kern[1, 32](np.zeros(1, np.float16), c, 8)
    np.testing.assert_array_equal(c, 0)
    c[:] = np.nan
    if debug:
        with pytest.raises(ValueError, match=r"rows of contiguous elements that start at 16-byte boundaries"):
            kern[1, 32](np.zeros(1, np.float16), c, 3)
    else:
        kern[1, 32](np.zeros(1, np.float16), c, 3)
    assert np.isnan(c).all()


@pytest.mark.parametrize("debug", [True, False])
def test_mma_needs_a_full_warp(debug):
    """A block of 48 threads: its second warp lacks lanes 16-31, so its mma_sync raises
    ValueError (reported with debug=True); the first warp computes its tile."""
    kern = gpu.jit(debug=debug)(make_kernel(16, 16, 16, np.float16, np.float32, ROW, ROW, ROW).py_func)
    a, b = rand((16, 16), np.float16), rand((16, 16), np.float16)
    c = np.zeros((16, 16), np.float32)
    d = np.full((16, 16), np.nan, np.float32)
    kern[1, 32](a, b, c, d)
    assert_mma(d, a, b, c)
    d[:] = np.nan
    if debug:
        with pytest.raises(ValueError, match=r"every lane of the warp must take part"):
            kern[1, 48](a, b, c, d)
    else:
        kern[1, 48](a, b, c, d)
        assert_mma(d, a, b, c)  # the first warp's result; the second stopped


def test_a_fragment_store_writes_its_array():
    """store_matrix_sync stores into its array as a[i] = v does: the launcher copies it back
    from the GPU, and refuses a read-only one on either target, untouched."""
    @gpu.jit
    def kern(out):
        acc = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32)
        wmma.fill_fragment(acc, 2.5)
        wmma.store_matrix_sync(out, acc, wmma.row_major)

    out = np.full((16, 16), np.nan, np.float32)
    kern[1, 32](out)
    np.testing.assert_array_equal(out, 2.5)
    ro = np.zeros((16, 16), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        kern[1, 32](ro)
    assert (ro == 0).all()
