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


def _bf16_value(c):
    """The exact value of bit pattern c (a Fraction), +-inf as +-2**200, None for NaN."""
    v = np.array([c & 0xFFFF], np.uint16).view(BF16).astype(np.float64)[0]
    if v != v:
        return None
    return Fraction(v) if abs(v) != float("inf") else Fraction(2) ** 200 * (1 if v > 0 else -1)


def exact_bf16(x, mode="rn"):
    """x (an int, a float64 or a Fraction) rounded once to bfloat16 in `mode` (rn: nearest
    even, rz: toward zero, rd: down, ru: up), from its exact value; NaN is 0x7FFF."""
    if isinstance(x, float) and x != x:
        return np.uint16(0x7FFF)
    if isinstance(x, float) and (abs(x) == float("inf") or x == 0):   # keeps -0.0's sign
        return np.array([x], np.float32).astype(BF16).view(np.uint16)[0]
    q = Fraction(x)
    with np.errstate(over="ignore"):   # within an ulp or two
        near = int(np.array([float(q)], np.float32).astype(BF16).view(np.uint16)[0])
    cands = []
    for d in range(-3, 4):   # neighbours by magnitude, either sign of zero
        for c in (near + d, (near ^ 0x8000) + d if near & 0x7FFF < 4 else None):
            if c is not None and 0 <= c <= 0xFFFF and _bf16_value(c) is not None:
                cands.append((_bf16_value(c), c))
    if mode == "rn":
        best = min(cands, key=lambda vc: (abs(vc[0] - q), vc[1] % 2, (vc[1] >= 0x8000) != (q < 0)))
        if abs(q) >= Fraction(2) ** 128 - Fraction(2) ** 119:   # past the largest finite's rounding range
            return np.uint16(0x7F80 if q > 0 else 0xFF80)
        return np.uint16(best[1])
    if mode == "rz":
        ok = [vc for vc in cands if abs(vc[0]) <= abs(q) and (vc[0] >= 0) == (q >= 0) and abs(vc[0]) < 2 ** 200]
        return np.uint16(max(ok, key=lambda vc: abs(vc[0]))[1])
    if mode == "rd":
        return np.uint16(max((vc for vc in cands if vc[0] <= q), key=lambda vc: vc[0])[1])
    return np.uint16(min((vc for vc in cands if vc[0] >= q), key=lambda vc: vc[0])[1])


def as_bf16(bits):
    return np.asarray(bits, np.uint16).view(BF16)


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


def test_ptx_keeps_a_product_and_its_add_apart(tmp_path):
    """a * x + y in bfloat16 rounds the product, then the sum, on both targets: on sm_90 the
    add keeps its explicit .rn, so that nothing fuses it with the product (the CPU target's
    rule), and the product is mul.rn.bf16."""
    def k(out, a, x, y):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]
    ptx = gpu.compile_ptx(k, "void(bfloat16[::1], bfloat16, bfloat16[::1], bfloat16[::1])", cc=(9, 0))[0]
    body = [l.split()[0] for l in ptx.splitlines() if ".bf16" in l and not l.strip().startswith((".", "//"))]
    assert body == ["mul.rn.bf16", "add.rn.bf16"], body
    ptxas(ptx, "sm_90", tmp_path)
    # the rule, on the CPU target: at a tie of the product (1.75 * -0.921875 = -1.61328125, halfway
    # between -1.609375 and -1.6171875) the product rounds to even first, then a tiny y does not
    # move it; one rounding of the exact sum would give -1.6171875
    out = np.full(1, np.nan, BF16)
    gpu.jit(k)[1, 1](out, BF16(1.75), np.array([-0.921875], BF16), np.array([-5.611218512058258e-08], BF16))
    assert float(out[0]) == -1.609375


# -- gpu.bf16.*: numba.cuda's cuda.bf16 ------------------------------------------------------------
from gpujit import bf16   # noqa: E402


def f32(x):
    return np.asarray(x).astype(np.float32)


def test_bf16_names():
    """Each function under numba.cuda's NumPy-style name and CUDA's, the same object's path."""
    for name in ("hadd", "hfma_relu", "hmax_nan", "hisinf", "hltu", "int32_to_bfloat16_rz", "int2bfloat16_rz",
                 "bfloat16_to_uint64_ru", "bfloat162ull_ru", "bfloat16_as_short", "float2bfloat16_rd"):
        assert hasattr(bf16, name), name
    assert bf16.bfloat16 is gpu.bfloat16


BF16_BINARY = {"hadd": np.add, "hsub": np.subtract, "hmul": np.multiply, "hdiv": np.divide,
               "hadd_rn": np.add, "hsub_rn": np.subtract, "hmul_rn": np.multiply}


@pytest.mark.parametrize("name", sorted(BF16_BINARY))
def test_bf16_arithmetic(rng, name):
    fn = getattr(bf16, name)

    @gpu.jit
    def k(out, a, b):
        i = gpu.grid(1)
        if i < a.size:
            out[i] = fn(a[i], b[i])
    a, b = bf16s(rng, 300), bf16s(rng, 300, -3, 3)
    out = poisoned_bf16(a.size)
    launch1d(k, a.size, out, a, b)
    with np.errstate(all="ignore"):
        same_bits(out, BF16_BINARY[name](f32(a), f32(b)).astype(BF16))


def test_bf16_fma_sat_relu_rounds_once(rng):
    """hfma rounds a * b + c once (not the product, then the sum); the _sat forms clamp to
    [0, 1] with NaN to +0; hfma_relu sends negatives to +0 and NaN to 0x7FFF."""
    @gpu.jit
    def k(out, a, b, c):
        i = gpu.grid(1)
        if i < a.size:
            out[0, i] = bf16.hfma(a[i], b[i], c[i])
            out[1, i] = bf16.hfma_sat(a[i], b[i], c[i])
            out[2, i] = bf16.hfma_relu(a[i], b[i], c[i])
            out[3, i] = bf16.hadd_sat(a[i], c[i])
            out[4, i] = bf16.hmul_sat(a[i], b[i])
            out[5, i] = bf16.hsub_sat(a[i], c[i])
    a, b = bf16s(rng, 250, -2, 2), bf16s(rng, 250, -2, 2)
    # c just off the rounding point of a * b: a product rounded first would round the sum wrongly
    prod = [Fraction(float(x)) * Fraction(float(y)) if np.isfinite(x * y) else Fraction(0)
            for x, y in zip(f32(a), f32(b))]
    c = f32(bf16s(rng, 250, -1e-3, 1e-3))
    c[:100] = [-(p / 2 ** 20) if abs(p) < 2 ** 100 else 0.0 for p in prod[:100]]
    c = c.astype(BF16)
    out = poisoned_bf16((6, a.size))
    launch1d(k, a.size, out, a, b, c)
    fa, fb, fc = f32(a).astype(np.float64), f32(b).astype(np.float64), f32(c).astype(np.float64)

    def exact(x, y, z):
        if not all(np.isfinite([x, y, z])):
            with np.errstate(all="ignore"):
                return exact_bf16(float(x * y + z))
        return exact_bf16(Fraction(x) * Fraction(y) + Fraction(z))
    fma = as_bf16([exact(x, y, z) for x, y, z in zip(fa, fb, fc)])
    same_bits(out[0], fma)

    def sat(v):
        v = f32(v)
        return np.where(np.isnan(v), np.float32(0), np.clip(v, np.float32(0), np.float32(1))).astype(BF16)
    same_bits(out[1], sat(fma))
    relu = f32(fma)
    with np.errstate(invalid="ignore"):
        relu = np.where(relu < 0, np.float32(0), relu).astype(BF16)
    same_bits(out[2], relu)
    with np.errstate(all="ignore"):
        same_bits(out[3], sat((f32(a) + f32(c)).astype(BF16)))
        same_bits(out[4], sat((f32(a) * f32(b)).astype(BF16)))
        same_bits(out[5], sat((f32(a) - f32(c)).astype(BF16)))


def test_bf16_min_max_compare_classify(rng):
    @gpu.jit
    def k(out, flags, cls, a, b):
        i = gpu.grid(1)
        if i < a.size:
            out[0, i] = bf16.hmax(a[i], b[i])
            out[1, i] = bf16.hmin(a[i], b[i])
            out[2, i] = bf16.hmax_nan(a[i], b[i])
            out[3, i] = bf16.hmin_nan(a[i], b[i])
            flags[0, i] = bf16.heq(a[i], b[i])
            flags[1, i] = bf16.hne(a[i], b[i])
            flags[2, i] = bf16.hequ(a[i], b[i])
            flags[3, i] = bf16.hneu(a[i], b[i])
            flags[4, i] = bf16.hltu(a[i], b[i])
            flags[5, i] = bf16.hgeu(a[i], b[i])
            flags[6, i] = bf16.hisnan(a[i])
            cls[i] = bf16.hisinf(a[i])
    a, b = bf16s(rng, 200, -3, 3), bf16s(rng, 200, -3, 3)
    a[20:30], b[25:35] = np.nan, np.nan
    b[40:50] = a[40:50]
    out = poisoned_bf16((4, a.size))
    flags = np.ones((7, a.size), np.bool_)
    flags[1::2] = False
    cls = np.full(a.size, 7, np.int32)
    launch1d(k, a.size, out, flags, cls, a, b)
    x, y = f32(a), f32(b)
    both = np.isnan(x) | np.isnan(y)
    nz = (x != 0) | (y != 0)   # max(+0, -0) may be either zero
    same_bits(out[0][nz], np.fmax(x, y).astype(BF16)[nz])
    same_bits(out[1][nz], np.fmin(x, y).astype(BF16)[nz])
    with np.errstate(invalid="ignore"):
        same_bits(out[2][nz], np.where(both, np.nan, np.fmax(x, y)).astype(BF16)[nz])
        same_bits(out[3][nz], np.where(both, np.nan, np.fmin(x, y)).astype(BF16)[nz])
        want = [x == y, (x != y) & ~both, (x == y) | both, x != y, (x < y) | both, (x >= y) | both, np.isnan(x)]
    for row, w in enumerate(want):
        np.testing.assert_array_equal(flags[row], w, err_msg=str(row))
    np.testing.assert_array_equal(cls, np.where(np.isposinf(x), 1, np.where(np.isneginf(x), -1, 0)))


MODES = ("rn", "rz", "rd", "ru")


@pytest.mark.parametrize("np_name,cu_name,dt", [("int16", "short", np.int16), ("uint16", "ushort", np.uint16),
                                                ("int32", "int", np.int32), ("uint32", "uint", np.uint32),
                                                ("int64", "ll", np.int64), ("uint64", "ull", np.uint64),
                                                ("float32", "float", np.float32)])
def test_bf16_conversions_in_every_mode(rng, np_name, cu_name, dt):
    """x_to_bfloat16_{rn,rz,rd,ru} (CUDA's x2bfloat16_*) against the exact value rounded in
    that mode; bfloat16_to_x_* (bfloat162x_*) against NumPy's rint/trunc/floor/ceil,
    saturating, NaN to 0."""
    to = tuple(getattr(bf16, "%s_to_bfloat16_%s" % (np_name, m)) for m in MODES)
    to_cu = tuple(getattr(bf16, "%s2bfloat16_%s" % (cu_name, m)) for m in MODES)
    kind = np.dtype(dt).kind
    frm = tuple(getattr(bf16, "bfloat16_to_%s_%s" % (np_name, m)) for m in MODES) if kind != "f" else None
    t0, t1, t2, t3 = to[0], to[1], to[2], to_cu[3]

    @gpu.jit
    def k_to(out, x):
        i = gpu.grid(1)
        if i < x.size:
            out[0, i] = t0(x[i])
            out[1, i] = t1(x[i])
            out[2, i] = t2(x[i])
            out[3, i] = t3(x[i])
    if kind == "f":
        x = (rng.integers(0, 2 ** 32, 400, dtype=np.uint64).astype(np.uint32)).view(np.float32)
        x = x[np.isfinite(x)]
    else:
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, 400, endpoint=True, dtype=dt)
        x[:2] = [info.max, info.min]
    out = poisoned_bf16((4, x.size))
    launch1d(k_to, x.size, out, x)
    for row, m in enumerate(MODES):
        want = as_bf16([exact_bf16(float(v) if kind == "f" else int(v), m) for v in x])
        same_bits(out[row], want)
    if frm is None:
        return
    f0, f1, f2, f3 = frm

    @gpu.jit
    def k_from(out, h):
        i = gpu.grid(1)
        if i < h.size:
            out[0, i] = f0(h[i])
            out[1, i] = f1(h[i])
            out[2, i] = f2(h[i])
            out[3, i] = f3(h[i])
    h = bf16s(rng, 300, -70000, 70000)
    h[5] = np.nan
    back = np.full((4, h.size), 3, dt)
    launch1d(k_from, h.size, back, h)
    info = np.iinfo(dt)
    for row, r in enumerate((np.rint, np.trunc, np.floor, np.ceil)):
        v = r(f32(h).astype(np.float64))
        want = [0 if np.isnan(e) else info.max if e > info.max else info.min if e < info.min else int(e) for e in v]
        assert [int(e) for e in back[row]] == want, row


def test_bf16_float_and_bit_conversions(rng):
    @gpu.jit
    def k(out, bits, f, d, h, i16):
        i = gpu.grid(1)
        if i < f.size:
            out[0, i] = bf16.float32_to_bfloat16(f[i])
            out[1, i] = bf16.float64_to_bfloat16(d[i])
            out[2, i] = bf16.double2bfloat16(d[i])
            out[3, i] = bf16.int16_as_bfloat16(i16[i])
            bits[0, i] = bf16.bfloat16_as_int16(h[i])
            bits[1, i] = bf16.bfloat16_as_ushort(h[i])
            f[i] = bf16.bfloat16_to_float32(h[i])
    n = 200
    f = rng.uniform(-1e5, 1e5, n).astype(np.float32)
    d = rng.uniform(-1e5, 1e5, n)
    h = bf16s(rng, n - 12)
    i16 = rng.integers(-2 ** 15, 2 ** 15, n, dtype=np.int16)
    i16[(i16.view(np.uint16) & 0x7F80) == 0x7F80] = 1   # no NaN patterns: a NaN's bits may change
    out = poisoned_bf16((4, n))
    bits = np.zeros((2, n), np.int16)
    f_in = f.copy()
    launch1d(k, n, out, bits, f, d, h, i16)
    same_bits(out[0], f_in.astype(BF16))
    same_bits(out[1], as_bf16([exact_bf16(float(v)) for v in d]))
    same_bits(out[2], out[1])
    same_bits(out[3], i16.view(BF16))
    np.testing.assert_array_equal(bits[0], h.view(np.int16))
    np.testing.assert_array_equal(bits[1], h.view(np.int16))
    np.testing.assert_array_equal(f, f32(h))


def test_bf16_math_functions(rng):
    @gpu.jit
    def k(out, x):
        i = gpu.grid(1)
        if i < x.size:
            out[0, i] = bf16.hsqrt(x[i])
            out[1, i] = bf16.hrint(x[i])
            out[2, i] = bf16.hrcp(x[i])
            out[3, i] = bf16.htrunc(x[i])
            out[4, i] = bf16.hlog2(x[i])
    x = np.abs(bf16s(rng, 200, 0.01, 50))
    out = poisoned_bf16((5, x.size))
    launch1d(k, x.size, out, x)
    v = f32(x)
    with np.errstate(all="ignore"):
        for row, want in enumerate((np.sqrt(v), np.rint(v), np.float32(1) / v, np.trunc(v))):
            same_bits(out[row], want.astype(BF16))
        w = np.log2(v).astype(BF16)
    got, want = out[4].view(np.int16).astype(int), w.view(np.int16).astype(int)
    assert (np.abs(got - want) <= 1).all()


def test_bf16_ptx_native(tmp_path):
    """hfma is fma.rn.bf16 and a division div.approx.f32 (CUDA's __hdiv), with no detour
    through float64; ptxas takes it for sm_80 and sm_90."""
    def k(out, a, b, c):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = bf16.hfma(a[i], b[i], c[i]) + bf16.habs(a[i]) / b[i] - bf16.hneg(c[i])
    for cc in ((8, 0), (9, 0)):
        ptx = gpu.compile_ptx(k, "void(bfloat16[::1], bfloat16[::1], bfloat16[::1], bfloat16[::1])", cc=cc)[0]
        assert "fma.rn.bf16" in ptx and "div.approx.f32" in ptx and ".f64" not in ptx
        ptxas(ptx, "sm_%d%d" % cc, tmp_path)


def test_bf16_bad_arguments():
    @gpu.jit
    def k(out, a):
        out[0] = bf16.hadd(a[0])
    with pytest.raises(gpu.TypingError, match=r"hadd\(\) takes 2 bfloat16 arguments, got 1"):
        k[1, 1](np.zeros(1, np.float32).astype(BF16), np.zeros(1, np.float32).astype(BF16))


class _Producer:
    """A DLPack producer of another library's making (here: a gpujit device array's capsule,
    which NumPy cannot read: it takes no bfloat16)."""

    def __init__(self, arr):
        self.arr = arr

    def __dlpack__(self, stream=None):
        return self.arr.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.arr.__dlpack_device__()


def test_dlpack_bfloat16_in_and_out(rng):
    """A bfloat16 array leaves through DLPack as kDLBfloat (code 4), 16 bits, and a DLPack
    producer of bfloat16 goes into a kernel."""
    import ctypes
    h = rng.uniform(-50, 50, 40).astype(np.float32).astype(BF16)
    d = gpu.to_device(h)
    cap = d.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    p = get(cap, b"dltensor")
    code, bits, lanes = ctypes.c_uint8.from_address(p + 20).value, ctypes.c_uint8.from_address(p + 21).value, \
        ctypes.c_uint16.from_address(p + 22).value
    assert (code, bits, lanes) == (4, 16, 1)
    del cap

    @gpu.jit
    def k(out, x):
        i = gpu.grid(1)
        if i < x.size:
            out[i] = x[i] * gpu.bfloat16(3)
    out = gpu.to_device(poisoned_bf16(h.size))
    k[1, 64](_Producer(out), _Producer(d))
    same_bits(out.copy_to_host(), (f32(h) * 3).astype(BF16))


def test_atomic_add_bfloat16(rng, tmp_path):
    """atomic.add/sub on bfloat16 elements: each add rounds once, as atom.add.noftz.bf16 does;
    with every thread adding an exact small integer the sum is exact and order-free."""
    @gpu.jit
    def k(acc, old, v):
        i = gpu.grid(1)
        if i < v.size:
            old[i] = gpu.atomic.add(acc, i % 4, v[i])
            gpu.atomic.sub(acc, 4 + i % 4, v[i])
    v = rng.integers(-4, 5, 256).astype(np.float32).astype(BF16)
    acc = np.zeros(8, np.float32).astype(BF16)
    acc[:4] = BF16(0.5)
    old = poisoned_bf16(v.size)
    launch1d(k, v.size, acc, old, v)
    sums = [0.5 + f32(v[j::4]).sum() for j in range(4)]
    np.testing.assert_array_equal(f32(acc[:4]), np.array(sums, np.float32))
    np.testing.assert_array_equal(f32(acc[4:]), -np.array(sums, np.float32) + 0.5)
    assert not np.isnan(f32(old)).any()
    for cc in ((8, 0), (9, 0)):
        ptx = gpu.compile_ptx(k.py_func, "void(bfloat16[::1], bfloat16[::1], bfloat16[::1])", cc=cc)[0]
        if cc == (9, 0):
            assert "atom.global.add.noftz.bf16" in ptx or "atom.add.noftz.bf16" in ptx, ptx
        ptxas(ptx, "sm_%d%d" % cc, tmp_path)


def test_a_cai_of_raw_bytes_is_typed_through_dlpack():
    """PyTorch's bfloat16 tensors say "<V2" in their __cuda_array_interface__: the type comes
    from their DLPack tensor instead (the launcher reads them through DLPack too)."""
    from gpujit.typing import typeof_string
    d = gpu.to_device(np.zeros(4, BF16))

    class Both:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<V2", "data": (0, False), "version": 3}

        def __dlpack__(self, stream=None):
            return d.__dlpack__()

        def __dlpack_device__(self):
            return d.__dlpack_device__()

    assert typeof_string(Both()) == "bfloat16[::1]"
