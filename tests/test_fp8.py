"""fp8 storage types (ml_dtypes.float8_e4m3fn / float8_e5m2, numba.cuda's fp8_e4m3 /
fp8_e5m2): conversions checked bit for bit against ml_dtypes inside the finite range and
against cuda_fp8.h's rules (round to nearest even, saturation, NaN 0x7F) outside it."""
import shutil
import subprocess

import numpy as np
import pytest

import gpujit as gpu
from conftest import launch1d

ml_dtypes = pytest.importorskip("ml_dtypes")
from gpujit import fp8   # noqa: E402

E4, E5 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2
# |x| from which a value overflows: past max + half an ulp for E4M3 (whose tie rounds to the even
# max, 448), from it on for E5M2 (whose tie would round to inf: cuda_fp8.h saturates it)
LIMIT = {E4: 464.0, E5: 61440.0}
MAXNORM = {E4: 0x7E, E5: 0x7B}


def random_floats(rng, n):
    bits = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([bits.view(np.float32), rng.uniform(-600, 600, n).astype(np.float32),
                        rng.uniform(-0.02, 0.02, n).astype(np.float32),
                        np.array([0.0, -0.0, 464.0, -464.0, 448.0, 61440.0, 57344.0, 2.0 ** -10, 2.0 ** -17,
                                  np.inf, -np.inf, np.nan], np.float32)])
    return x


def want_bits(x, dt, nan_sign=False):
    """cuda_fp8.h's SATFINITE conversion: ml_dtypes' rounding in range, the largest finite
    value (with x's sign) past it and for inf, 0x7F for NaN (a double's NaN keeps its sign)."""
    with np.errstate(all="ignore"):
        w = x.astype(dt).view(np.uint8).copy()
    over = np.isinf(x) | ((np.abs(x) > LIMIT[dt]) if dt == E4 else (np.abs(x) >= LIMIT[dt]))
    w[over] = MAXNORM[dt] | np.where(np.signbit(x[over]), 0x80, 0)
    nan = np.isnan(x)
    if not nan_sign:   # a float's NaN: the canonical one first
        w[nan] = 0x7F
    else:              # __nv_cvt_double_to_fp8: the sign kept, E5M2 keeps the top two payload bits
        top = ((x[nan].astype(np.float64).view(np.uint64) >> np.uint64(50)) & np.uint64(3)).astype(np.uint8)
        w[nan] = (0x7F if dt == E4 else 0x7E | top) | np.where(np.signbit(x[nan]), 0x80, 0)
    return w


@pytest.mark.parametrize("dt", [E4, E5], ids=["e4m3", "e5m2"])
def test_from_float32_and_float64(rng, dt):
    @gpu.jit
    def k(o, od, x, d):
        i = gpu.grid(1)
        if i < x.size:
            o[i] = x[i]
            od[i] = d[i]
    x = random_floats(rng, 3000)
    o = np.full(x.size, 0x55, np.uint8).view(dt)
    od = o.copy()
    with np.errstate(invalid="ignore"):
        launch1d(k, x.size, o, od, x, x.astype(np.float64))
    w = want_bits(x, dt)
    np.testing.assert_array_equal(o.view(np.uint8), w)
    np.testing.assert_array_equal(od.view(np.uint8), want_bits(x, dt, nan_sign=True))


@pytest.mark.parametrize("dt", [E4, E5], ids=["e4m3", "e5m2"])
def test_to_other_types_is_exact(dt):
    @gpu.jit
    def k(o32, o64, o16, obf, oi, x):
        i = gpu.grid(1)
        if i < x.size:
            o32[i] = x[i]
            o64[i] = x[i]
            o16[i] = x[i]
            obf[i] = x[i]
            oi[i] = x[i]
    x = np.arange(256, dtype=np.uint8).view(dt)
    o32, o64, o16 = np.zeros(256, np.float32), np.zeros(256), np.zeros(256, np.float16)
    obf, oi = np.zeros(256, np.float32).astype(ml_dtypes.bfloat16), np.full(256, 7, np.int32)
    launch1d(k, 256, o32, o64, o16, obf, oi, x)
    ref = x.astype(np.float32)
    np.testing.assert_array_equal(o32, ref)
    np.testing.assert_array_equal(o64, ref.astype(np.float64))
    np.testing.assert_array_equal(o16, ref.astype(np.float16))
    np.testing.assert_array_equal(obf.astype(np.float32), ref)
    fin = np.isfinite(ref) & (np.abs(ref) < 2 ** 31)
    np.testing.assert_array_equal(oi[fin], ref[fin].astype(np.int32))


def test_integers_and_casts(rng):
    """An integer rounds to float32 first (CUDA's constructors); fp8_e4m3(x) is the cast."""
    @gpu.jit
    def k(o4, o5, n):
        i = gpu.grid(1)
        if i < n.size:
            o4[i] = fp8.fp8_e4m3(n[i])
            o5[i] = gpu.float8_e5m2(n[i])
    n = rng.integers(-100000, 100000, 500).astype(np.int64)
    o4 = np.zeros(n.size, E4)
    o5 = np.zeros(n.size, E5)
    launch1d(k, n.size, o4, o5, n)
    f = n.astype(np.float32)
    np.testing.assert_array_equal(o4.view(np.uint8), want_bits(f, E4))
    np.testing.assert_array_equal(o5.view(np.uint8), want_bits(f, E5))


def test_cvt_functions_saturation():
    @gpu.jit
    def k(out, x, d):
        i = gpu.grid(1)
        if i < x.size:
            out[0, i] = fp8.cvt_float_to_fp8(x[i], fp8.saturation_t.NOSAT, fp8.fp8_interpretation_t.E5M2)
            out[1, i] = fp8.cvt_float_to_fp8(x[i], fp8.saturation_t.SATFINITE, fp8.fp8_interpretation_t.E5M2)
            out[2, i] = fp8.cvt_double_to_fp8(d[i], fp8.saturation_t.NOSAT, fp8.fp8_interpretation_t.E4M3)
            out[3, i] = fp8.cvt_double_to_fp8(d[i], fp8.saturation_t.SATFINITE, fp8.fp8_interpretation_t.E4M3)
    x = np.array([1e20, 1.0, -1e20, np.nan, 0.3], np.float32)
    d = np.array([1e300, 1.0, -1e300, np.nan, 0.3])
    out = np.full((4, x.size), 0x55, np.uint8)
    k[1, 8](out, x, d)
    np.testing.assert_array_equal(out[0], [0x7C, 0x3C, 0xFC, 0x7F, np.array([0.3], np.float32).astype(E5).view(np.uint8)[0]])
    np.testing.assert_array_equal(out[1], [0x7B, 0x3C, 0xFB, 0x7F, out[0, 4]])
    np.testing.assert_array_equal(out[2], [0x7F, 0x38, 0xFF, 0x7F, np.array([0.3]).astype(E4).view(np.uint8)[0]])
    np.testing.assert_array_equal(out[3], [0x7E, 0x38, 0xFE, 0x7F, out[2, 4]])


def test_errors():
    @gpu.jit
    def k(out, x, mode):
        out[0] = fp8.cvt_float_to_fp8(x[0], mode, fp8.fp8_interpretation_t.E4M3)
    with pytest.raises(gpu.TypingError, match="saturation must be a constant"):
        k[1, 1](np.zeros(1, np.uint8), np.zeros(1, np.float32), 1)

    with pytest.raises(gpu.UnsupportedError, match="float8_e4m3fn scalars cannot be kernel arguments"):
        @gpu.jit("void(float8_e4m3fn[::1], float8_e4m3fn)")
        def scalar(out, v):
            out[0] = v


def test_ptx_native(tmp_path):
    """sm_89 and up: one cvt.rn.satfinite.{e4m3,e5m2}x2.f32; ptxas takes it."""
    def k(o4, o5, x):
        i = gpu.grid(1)
        if i < x.size:
            o4[i] = x[i]
            o5[i] = x[i]
    sig = "void(float8_e4m3fn[::1], float8_e5m2[::1], float32[::1])"
    ptx = gpu.compile_ptx(k, sig, cc=(9, 0))[0]
    assert "cvt.rn.satfinite.e4m3x2.f32" in ptx and "cvt.rn.satfinite.e5m2x2.f32" in ptx
    exe = shutil.which("ptxas")
    if exe:
        for cc in ((9, 0), (8, 0)):
            src = tmp_path / "k.ptx"
            src.write_text(gpu.compile_ptx(k, sig, cc=cc)[0])
            r = subprocess.run([exe, "-arch=sm_%d%d" % cc, str(src), "-o", str(tmp_path / "k.cubin")],
                               capture_output=True, text=True)
            assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("src", ["o[0] = a[0] + a[1]", "o[0] = a[0] * 2", "o[0] = a[0] < a[1]", "o[0] = -a[0]",
                                 "o[0] = abs(a[0])", "o[0] = np.sum(a)", "o[0] = a.max()"])
def test_no_arithmetic(src):
    """fp8 values only convert (numba.cuda's fp8 types the same): arithmetic is a TypingError."""
    ns = {"np": np}
    exec("def k(o, a):\n    " + src, ns)
    k = gpu.jit(ns["k"])
    with pytest.raises(gpu.TypingError, match="float8_e4m3fn|bad operand|takes one number"):
        k[1, 1](np.zeros(2, np.float32), np.ones(2, E4))


def test_truth_and_int():
    @gpu.jit
    def k(o, a):
        i = gpu.grid(1)
        if i < a.size:
            o[0, i] = 1 if a[i] else 0
            o[1, i] = int(a[i])
    a = np.array([0.0, -0.0, 0.5, -3.5, 448, np.nan], np.float32).astype(E4)
    o = np.full((2, a.size), 9, np.int64)
    k[1, 8](o, a)
    np.testing.assert_array_equal(o[0], [0, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(o[1, :5], [0, 0, 0, -3, 448])
