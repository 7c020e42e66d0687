"""bfloat16 (ml_dtypes.bfloat16): arrays and scalars as kernel arguments, arithmetic,
comparisons, casts and promotion, checked bit for bit against ml_dtypes and against
exact rounding (round to nearest even, CUDA's canonical NaN 0x7FFF)."""
import operator
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

import gpujit as gpu
from gpujit import types
from conftest import launch1d

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = ml_dtypes.bfloat16


def bf16s(rng, n, lo=-100.0, hi=100.0):
    """Random bfloat16 values, with special ones (zeros, subnormals, the extremes, inf)."""
    edge = np.array([0.0, -0.0, 1.0, -1.0, 1e-40, -9.2e-41, 3.38e38, -3.38e38, 0.5, 256.0, np.inf, -np.inf],
                    np.float32)
    return np.concatenate([edge, rng.uniform(lo, hi, n).astype(np.float32)]).astype(BF16)


def poisoned_bf16(shape):
    return np.full(shape, np.nan, np.float32).astype(BF16)


def same_bits(got, want):
    """Equal as bfloat16 bit patterns; a NaN must be CUDA's canonical 0x7FFF."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype == np.dtype(BF16), (got.dtype, want.dtype)
    g, w = got.view(np.uint16), want.view(np.uint16)
    wnan = np.isnan(want.astype(np.float32))
    bad = np.where(wnan, g != 0x7FFF, g != w)
    assert not bad.any(), [(hex(a), hex(b)) for a, b in zip(g[bad][:5], w[bad][:5])]


def exact_bf16(x):
    """x (an int or a float64) rounded once to bfloat16, nearest even: from the exact value."""
    if isinstance(x, float) and x != x:
        return np.uint16(0x7FFF)
    if isinstance(x, float) and abs(x) == float("inf"):
        return np.array([x], np.float32).astype(BF16).view(np.uint16)[0]
    q = Fraction(x)
    with np.errstate(over="ignore"):   # within an ulp or two
        near = np.array([float(x)], np.float32).astype(BF16).view(np.uint16)[0]
    cands = [int(near) + d for d in (-2, -1, 0, 1, 2)]
    best = None
    for c in cands:
        if c & 0x7F80 == 0x7F80 and c & 0x7F:   # NaN patterns are no candidates
            continue
        v = np.array([c & 0xFFFF], np.uint16).view(BF16).astype(np.float64)[0]
        d = abs(Fraction(v) - q) if abs(v) != float("inf") else Fraction(2) ** 200
        if best is None or d < best[0] or (d == best[0] and c % 2 == 0):
            best = (d, c & 0xFFFF)
    return np.uint16(best[1])


def test_types_exported_and_lazy_import():
    assert gpu.bfloat16 is types.bfloat16
    assert np.dtype(gpu.bfloat16) == np.dtype(BF16)
    assert str(gpu.bfloat16[::1]) == "bfloat16[::1]"
    assert type(gpu.bfloat16(1.5)) is BF16
    code = "import sys, gpujit; print('ml_dtypes' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


BINOPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod]


@pytest.mark.parametrize("op", BINOPS, ids=lambda o: o.__name__)
def test_binary_bit_exact(rng, op):
    @gpu.jit
    def k(out, a, b):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = op(a[i], b[i])
    a, b = bf16s(rng, 500), bf16s(rng, 500, -8.0, 8.0)
    b[b == 0] = BF16(0.25)
    out = poisoned_bf16(a.size)
    launch1d(k, a.size, out, a, b)
    with np.errstate(all="ignore"):   # float32, rounded once: exact for + - * / (24 >= 2 * 8 + 2)
        want = op(a.astype(np.float32), b.astype(np.float32)).astype(BF16)
    same_bits(out, want)


@pytest.mark.parametrize("op", [operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge],
                         ids=lambda o: o.__name__)
def test_compare(rng, op):
    @gpu.jit
    def k(out, a, b):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = op(a[i], b[i])
    a = bf16s(rng, 300, -4, 4)
    b = a.copy()
    b[::2] = bf16s(rng, 300, -4, 4)[::2]
    a[5] = b[7] = np.nan
    out = np.ones(a.size, np.bool_) if op is not operator.ne else np.zeros(a.size, np.bool_)
    out[:] = not op(1, 1) if op in (operator.eq, operator.le, operator.ge) else True
    launch1d(k, a.size, out, a, b)
    np.testing.assert_array_equal(out, op(a.astype(np.float32), b.astype(np.float32)))


def test_float32_rounding_and_nan(rng):
    """float32 -> bfloat16 is ml_dtypes' round to nearest even (ties, subnormals, overflow
    to inf); every NaN becomes 0x7FFF."""
    @gpu.jit
    def k(out, x):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = gpu.bfloat16(x[i])
    bits = rng.integers(0, 2 ** 32, 4000, dtype=np.uint64).astype(np.uint32)
    bits[:8] = [0x3F808000, 0x3F818000, 0x00008000, 0x00018000, 0x7F7FFFFF, 0xFF7F8000, 0x7FC00001, 0xFFFFFFFF]
    x = bits.view(np.float32)
    out = poisoned_bf16(x.size)
    launch1d(k, x.size, out, x)
    with np.errstate(invalid="ignore"):
        same_bits(out, x.astype(BF16))
    assert out.view(np.uint16)[6] == 0x7FFF and out.view(np.uint16)[7] == 0x7FFF


def test_float64_and_int64_round_once(rng):
    """float64 and 64-bit integers round to bfloat16 once: just off a halfway point between
    two bfloat16s, rounding through float32 to nearest would land on it and round wrongly."""
    @gpu.jit
    def k(out, d, i, u):
        j = gpu.grid(1)
        if j < d.size:
            out[0, j] = gpu.bfloat16(d[j])
            out[1, j] = gpu.bfloat16(i[j])
            out[2, j] = gpu.bfloat16(u[j])
    h = bf16s(rng, 200, -1000, 1000)[:-2].astype(np.float64)
    h = h[np.isfinite(h)]
    ulp = np.abs(h) * 2.0 ** -8
    d = np.concatenate([h + ulp / 2 * (1 + 2.0 ** -40), h - ulp / 2 * (1 + 2.0 ** -40), h + ulp / 2,
                        rng.uniform(-1e30, 1e30, 50), [1e300, -1e300, np.nan, 5e-324]])
    n = d.size
    i = rng.integers(-2 ** 63, 2 ** 63 - 1, n, dtype=np.int64)
    i[:4] = [2 ** 60 + 2 ** 52 + 1, -(2 ** 60 + 2 ** 52 + 1), -2 ** 63, (1 << 40) + (1 << 32)]
    u = rng.integers(0, 2 ** 64 - 1, n, dtype=np.uint64)
    u[:3] = [2 ** 64 - 1, 2 ** 63 + 2 ** 55 + 1, (1 << 40) + (1 << 32)]
    out = poisoned_bf16((3, n))
    launch1d(k, n, out, d, i, u)
    for row, src, conv in ((0, d, float), (1, i, int), (2, u, int)):
        want = np.array([exact_bf16(conv(v)) for v in src], np.uint16).view(BF16)
        same_bits(out[row], want)


@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                np.uint64, np.float16, np.float32, np.float64])
def test_casts(rng, dt):
    @gpu.jit
    def to_bf16(out, x):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = x[i]

    @gpu.jit
    def from_bf16(out, x):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = x[i]
    kind = np.dtype(dt).kind
    if kind == "f":
        src = rng.uniform(-60000, 60000, 300).astype(dt)
    elif kind == "b":
        src = rng.integers(0, 2, 300).astype(dt)
    else:
        info = np.iinfo(dt)
        src = rng.integers(info.min, info.max, 300, endpoint=True, dtype=dt)
    out = poisoned_bf16(src.size)
    launch1d(to_bf16, src.size, out, src)
    want = np.array([exact_bf16(float(v) if kind == "f" else int(v)) for v in src], np.uint16).view(BF16)
    same_bits(out, want)
    h = bf16s(rng, 300, -100, 100)[:-2]
    if kind in "iub":
        info = np.iinfo(dt) if kind != "b" else None
        if info is not None:
            h = h[(h.astype(np.float64) >= info.min) & (h.astype(np.float64) <= info.max)]
    back = np.zeros(h.size, dt)
    back[:] = 1 if kind == "b" else 7
    launch1d(from_bf16, h.size, back, h)
    want = h.astype(np.float32) != 0 if kind == "b" else h.astype(np.float32).astype(dt)
    np.testing.assert_array_equal(back, want)


@pytest.mark.parametrize("dt,res", [(np.int8, BF16), (BF16, BF16), (np.uint8, BF16), (np.int16, np.float32),
                                    (np.float16, np.float32), (np.float32, np.float32), (np.int32, np.float64),
                                    (np.int64, np.float64), (np.float64, np.float64)])
def test_promotion(rng, dt, res):
    """numba.cuda's: bfloat16 with itself or an 8-bit int stays bfloat16; a 16-bit int,
    float16 or float32 gives float32; wider ints and float64 give float64."""
    @gpu.jit
    def k(out, a, b):
        out[0] = a + b
        out[1] = a * b
    a = BF16(rng.uniform(0, 1))
    b = np.array([rng.uniform(0, 100)]).astype(dt)[0]
    out = np.full(2, np.nan, np.float32).astype(res)
    k[1, 1](out, a, b)
    want = [np.float64(a) + np.float64(b), np.float64(a) * np.float64(b)]
    if res == BF16:
        np.testing.assert_array_equal(out.view(np.uint16),
                                      np.array([exact_bf16(float(w)) for w in want], np.uint16))
    else:
        np.testing.assert_array_equal(out, np.array(want).astype(res))


def test_scalar_args_python_floats_and_device_functions(rng):
    @gpu.jit(device=True)
    def twice(x):
        return x * gpu.bfloat16(2)

    @gpu.jit("void(bfloat16[:, ::1], bfloat16[:, ::1], bfloat16)")
    def k(out, a, s):
        i, j = gpu.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            out[i, j] = twice(a[i, j]) + s
    a = rng.uniform(-10, 10, (7, 9)).astype(BF16)
    s = 1.0 + 2.0 ** -8 + 2.0 ** -30   # a Python float: rounded once, up
    out = poisoned_bf16(a.shape)
    k[(1, 1), (8, 16)](out, a, s)
    want = (a.astype(np.float32) * 2 + np.float32(exact_bf16(s).view(BF16))).astype(BF16)
    same_bits(out.ravel(), want.ravel())


def test_math_functions(rng):
    """math.sqrt/floor/... on a bfloat16 give a bfloat16 (numba.cuda's overloads), computed in
    float32 and rounded once."""
    import math

    @gpu.jit
    def k(out, x):
        i = gpu.grid(1)
        if i < x.size:
            out[0, i] = math.sqrt(x[i])
            out[1, i] = math.floor(x[i])
            out[2, i] = math.exp(x[i])
            out[3, i] = math.sin(x[i])
            out[4, i] = abs(x[i])
            out[5, i] = -x[i]
    x = np.abs(bf16s(rng, 200, 0, 20))
    out = poisoned_bf16((6, x.size))
    launch1d(k, x.size, out, x)
    f = x.astype(np.float32)
    with np.errstate(all="ignore"):
        same_bits(out[0], np.sqrt(f).astype(BF16))
        same_bits(out[1], np.floor(f).astype(BF16))
        for row, fn in ((2, np.exp), (3, np.sin)):   # libm's float32 may differ from NumPy's by an ulp
            w = fn(f).astype(BF16)
            got, want = out[row].view(np.int16).astype(int), w.view(np.int16).astype(int)
            nan = np.isnan(w.astype(np.float32))
            assert (got[nan] == 0x7FFF).all() and (np.abs(got - want)[~nan] <= 1).all()
    same_bits(out[4], np.abs(f).astype(BF16))
    same_bits(out[5], (-f).astype(BF16))


def test_device_array_round_trip():
    h = np.arange(-6, 6).astype(BF16)
    d = gpu.to_device(h)
    assert d.dtype == np.dtype(BF16)
    same_bits(d.copy_to_host(), h)
    e = gpu.device_array(5, dtype=gpu.bfloat16)
    assert e.dtype == np.dtype(BF16)


def ptxas(ptx, arch, tmp_path):
    """ptxas accepts the PTX for `arch` (skipped where it is not installed)."""
    import shutil
    exe = shutil.which("ptxas")
    if not exe:
        return
    src = tmp_path / ("k_%s.ptx" % arch)
    src.write_text(ptx)
    r = subprocess.run([exe, "-arch=" + arch, str(src), "-o", str(tmp_path / "k.cubin")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr


def test_ptx_native_instructions(tmp_path):
    """On the GPU: cvt.rn.bf16.f32, fma.rn.bf16 and the bf16 add, assembled for sm_80 and sm_90."""
    def k(out, a, b, c, f):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = a[i] * b[i] + c[i] + gpu.bfloat16(f[i])
    for cc in ((8, 0), (9, 0)):
        ptx = gpu.compile_ptx(k, "void(bfloat16[::1], bfloat16[::1], bfloat16[::1], bfloat16[::1], float32[::1])",
                              cc=cc)[0]
        assert "cvt.rn.bf16.f32" in ptx
        assert "mul.rn.bf16" in ptx or "fma.rn.bf16" in ptx
        assert ".f64" not in ptx
        ptxas(ptx, "sm_%d%d" % cc, tmp_path)
