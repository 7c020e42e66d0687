"""Builtins, the operator module, math's frexp/ldexp/modf/remainder/nextafter and NumPy's scalar
functions in kernels, and for loops over arrays, tuples, enumerate() and zip(): each against
CPython or NumPy on fresh random inputs with special values (NaN, infinities, -0.0, negative and
huge numbers), outputs poisoned first. The PTX of every kernel goes through ptxas (conftest)."""
import math
import operator

import numpy as np
import pytest

import gpujit as gpu
from conftest import assert_same, launch1d, make_binary, make_unary, poisoned

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300, -1e300, 5e-324, 0.5, -0.5, 1.5, 2.5, -2.5]


def floats(rng, n, dtype, lo=-100.0, hi=100.0, special=True):
    x = rng.uniform(lo, hi, n)
    if special:
        x[:len(SPECIAL)] = SPECIAL
        rng.shuffle(x)
    with np.errstate(over="ignore"):  # 1e300 is inf in float32
        return x.astype(dtype)


def same_float(got, want):
    """Bit-for-bit, but any NaN equals any NaN and -0.0 must stay -0.0."""
    got, want = np.asarray(got), np.asarray(want, dtype=got.dtype)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), (got, want)
    assert np.array_equal(got[~nan], want[~nan]), (got[~nan], want[~nan])
    assert np.array_equal(np.signbit(got[~nan]), np.signbit(want[~nan])), "signed zeros differ"


# ---- the operator module ----------------------------------------------------------------------

ARITH = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "iadd", "isub", "imul"]
CMP = ["lt", "le", "eq", "ne", "gt", "ge"]
BITS = ["and_", "or_", "xor", "lshift", "rshift", "iand", "ior", "ixor"]


def py_ref(f, xs, ys):
    out = []
    for x, y in zip(xs, ys):
        try:
            out.append(f(x.item(), y.item()))
        except (OverflowError, ZeroDivisionError):  # C's pow gives inf
            out.append(math.inf)
    return out


@pytest.mark.parametrize("name", ARITH + CMP)
def test_operator_float(rng, name):
    f = getattr(operator, name)
    n = 200
    x = floats(rng, n, np.float64)
    y = floats(rng, n, np.float64, 0.5, 20.0, special=False) * rng.choice([-1, 1], n)
    if name == "pow":
        x = np.abs(x)
        y = rng.uniform(-3, 3, n)
    out = poisoned(n, np.bool_ if name in CMP else np.float64)
    launch1d(make_binary(f), n, out, x, y)
    want = np.array(py_ref(f, x, y))
    if name == "pow":
        assert_same(out, want, rtol=1e-15)
    else:
        same_float(out, want) if out.dtype.kind == "f" else assert_same(out, want)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("name", ARITH + CMP + BITS)
def test_operator_int(rng, name, dtype):
    f = getattr(operator, name)
    n = 200
    x = rng.integers(-10**6, 10**6, n).astype(dtype)
    y = rng.integers(1, 1000, n).astype(dtype) * rng.choice([-1, 1], n).astype(dtype)
    if name in ("lshift", "rshift"):
        y = rng.integers(0, 40, n).astype(dtype)
    if name == "pow":
        x, y = rng.integers(-20, 20, n).astype(dtype), rng.integers(0, 12, n).astype(dtype)
    kind = np.bool_ if name in CMP else np.float64 if name == "truediv" else np.int64
    out = poisoned(n, kind)
    launch1d(make_binary(f), n, out, x, y)
    want = np.array(py_ref(f, x, y), dtype=kind)
    assert_same(out, want, rtol=1e-15) if kind == np.float64 else assert_same(out, want)


@pytest.mark.parametrize("name", ["neg", "pos", "invert", "inv", "not_", "truth", "abs"])
def test_operator_unary(rng, name):
    f = getattr(operator, name)
    x = rng.integers(-10**9, 10**9, 100)
    out = poisoned(100, np.int64)
    launch1d(make_unary(f), 100, out, x)
    assert_same(out, np.array([int(f(int(v))) for v in x]))
    if name not in ("invert", "inv"):
        xf = floats(rng, 100, np.float64)
        outf = poisoned(100, np.float64)
        launch1d(make_unary(f), 100, outf, xf)
        same_float(outf, np.array([float(f(v)) for v in xf.tolist()]))


def test_operator_wrong_count():
    @gpu.jit
    def k(out):
        out[0] = operator.add(1, 2, 3)

    with pytest.raises(gpu.TypingError, match=r"operator.add\(\) takes 2 arguments \(3 given\)"):
        k[1, 1](np.zeros(1))


# ---- pow, divmod, round, bit_count ------------------------------------------------------------

def test_pow_two_and_three_args(rng):
    @gpu.jit
    def k(out, a, b, m):
        i = gpu.grid(1)
        if i < a.size:
            out[i, 0] = pow(a[i], b[i])
            out[i, 1] = pow(a[i], b[i], m[i])

    n = 300
    a = rng.integers(-10**12, 10**12, n)
    b = rng.integers(0, 10**6, n)
    m = rng.integers(1, 2**62, n) * rng.choice([-1, 1], n)
    a[:4], b[:4], m[:4] = [-2**63, 2**63 - 1, 7, -7], [3, 2**62, 0, 1], [-2**63, 2**63 - 1, 1, -1]
    out = poisoned((n, 2), np.int64)
    launch1d(k, n, out, a, b, m)
    assert_same(out[:, 1], np.array([pow(int(x), int(y), int(z)) for x, y, z in zip(a, b, m)]))
    want0 = np.array([(pow(int(x), int(y), 2**64) + 2**63) % 2**64 - 2**63 for x, y in zip(a, b)])  # wraps
    assert_same(out[:, 0], want0)


def test_pow_float(rng):
    x, y = floats(rng, 200, np.float64), rng.uniform(-4, 4, 200)
    out = poisoned(200, np.float64)
    launch1d(make_binary(pow), 200, out, x, y)
    with np.errstate(all="ignore"):
        assert_same(out, np.power(x, y), rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_divmod(rng, dtype):
    @gpu.jit
    def k(out, x, y):
        i = gpu.grid(1)
        if i < x.size:
            q, r = divmod(x[i], y[i])
            out[i, 0] = q
            out[i, 1] = r

    n = 300
    if dtype == np.int64:
        x = rng.integers(-10**15, 10**15, n)
        y = rng.integers(1, 10**6, n) * rng.choice([-1, 1], n)
    else:
        x = floats(rng, n, dtype, -1e6, 1e6)
        y = rng.uniform(0.1, 100, n) * rng.choice([-1, 1], n)
        y[:3] = [np.inf, -np.inf, 3.0]
    out = poisoned((n, 2), dtype)
    launch1d(k, n, out, x, y)
    want = np.array([divmod(a, b) for a, b in zip(x.tolist(), y.tolist())], dtype=dtype)
    if dtype == np.int64:
        assert_same(out, want)
    else:
        same_float(out, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_one_arg(rng, dtype):
    x = floats(rng, 300, dtype, -1e6, 1e6, special=False)
    x[:10] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.0, 3.4999, 1e15 + 0.5, -7.5]
    out = poisoned(300, np.int64)
    launch1d(make_unary(round), 300, out, x)
    assert_same(out, np.array([round(v) for v in x.tolist()]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_ndigits(rng, dtype):
    n = 400
    x = floats(rng, n, dtype, -1e4, 1e4)
    d = rng.integers(-6, 12, n)
    d[:6] = [400, -400, 22, 23, -22, 0]
    x[:8] = [2.675, 1e300, 0.125, 0.375, -0.125, 12345.5, 5e-324, -0.0]
    out = poisoned(n, dtype)
    launch1d(make_binary(round), n, out, x, d)
    want = np.array([round(float(a), int(b)) for a, b in zip(x, d)], dtype=dtype)
    same_float(out, want)


def test_round_int(rng):
    n = 300
    x = rng.integers(-10**15, 10**15, n)
    d = rng.integers(-20, 4, n)
    x[:6], d[:6] = [15, 25, -15, -25, 150, 2**63 - 1], [-1, -1, -1, -1, -2, -18]
    out1, out2 = poisoned(n, np.int64), poisoned(n, np.int64)
    launch1d(make_binary(round), n, out2, x, d)
    launch1d(make_unary(round), n, out1, x)
    assert_same(out2, np.array([round(int(a), int(b)) for a, b in zip(x, d)]))
    assert_same(out1, x)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64, np.bool_])
def test_bit_count(rng, dtype):
    @gpu.jit
    def k(out, x):
        i = gpu.grid(1)
        if i < x.size:
            out[i, 0] = x[i].bit_count()
            out[i, 1] = int.bit_count(x[i])

    if dtype == np.bool_:
        x = rng.integers(0, 2, 100).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, 100, dtype=dtype, endpoint=True)
        x[:2] = [info.min, info.max]
    out = poisoned((100, 2), np.int64)
    launch1d(k, 100, out, x)
    want = np.array([int(v).bit_count() for v in x.tolist()])
    assert_same(out, np.stack([want, want], axis=1))


# ---- min, max, sum, any, all over tuples ------------------------------------------------------

def test_tuple_reductions(rng):
    @gpu.jit
    def k(out, a, b, c):
        i = gpu.grid(1)
        if i < a.size:
            t = (a[i], b[i], c[i])
            out[i, 0] = min(t)
            out[i, 1] = max(t)
            out[i, 2] = sum(t)
            out[i, 3] = any(t)
            out[i, 4] = all(t)
            out[i, 5] = max((a[i], a[i] * 2))
            out[i, 6] = sum(())
            out[i, 7] = all(())

    n = 200
    a = floats(rng, n, np.float64, -10, 10)
    b = rng.integers(-3, 3, n).astype(np.int32)
    c = rng.uniform(-10, 10, n).astype(np.float32)
    out = poisoned((n, 8), np.float64)
    launch1d(k, n, out, a, b, c)
    want = []
    for x, y, z in zip(a.tolist(), b.tolist(), c.astype(np.float64).tolist()):
        t = (x, y, z)
        with np.errstate(all="ignore"):
            want.append([min(t), max(t), sum(t), any(t), all(t), max((x, x * 2)), 0, True])
    assert_same(out, np.array(want, dtype=np.float64), rtol=1e-15)


def test_tuple_reductions_int():
    @gpu.jit
    def k(out, x):
        t = (x[0], x[1], x[2], x[3])
        out[0] = min(t)
        out[1] = max(t)
        out[2] = sum(t)
        out[3] = any((x[0], x[1]))
        out[4] = all(t)

    x = np.array([5, -3, 0, 9], dtype=np.int16)
    out = poisoned(5, np.int64)
    k[1, 1](out, x)
    t = tuple(int(v) for v in x)
    assert_same(out, np.array([min(t), max(t), sum(t), any(t[:2]), all(t)]))


# ---- isinstance -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64, np.complex128, np.bool_])
def test_isinstance(dtype):
    @gpu.jit
    def k(out, x):
        v = x[0]
        out[0] = isinstance(v, int)
        out[1] = isinstance(v, float)
        out[2] = isinstance(v, complex)
        out[3] = isinstance(v, bool)
        out[4] = isinstance(v, np.float32)
        out[5] = isinstance(v, (int, float))
        out[6] = isinstance(x, np.ndarray)
        out[7] = isinstance(x.shape, tuple)

    x = np.zeros(1, dtype)
    out = poisoned(8, np.bool_)
    k[1, 1](out, x)
    kind = np.dtype(dtype).kind
    want = [kind in "ib", kind == "f", kind == "c", kind == "b", dtype == np.float32, kind in "ibf", True, True]
    assert_same(out, np.array(want))


# ---- math -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_frexp_modf(rng, dtype):
    @gpu.jit
    def k(m, e, f, ip, x):
        i = gpu.grid(1)
        if i < x.size:
            m[i], e[i] = math.frexp(x[i])
            f[i], ip[i] = math.modf(x[i])

    n = 200
    x = floats(rng, n, dtype, -1e8, 1e8)
    x[0] = np.finfo(dtype).smallest_subnormal
    m, f, ip = poisoned(n, dtype), poisoned(n, dtype), poisoned(n, dtype)
    e = poisoned(n, np.int32)
    launch1d(k, n, m, e, f, ip, x)
    fr = [math.frexp(v) for v in x.tolist()]
    md = [math.modf(v) for v in x.tolist()]
    same_float(m, np.array([a for a, _ in fr]))
    assert_same(e, np.array([b for _, b in fr], dtype=np.int32))
    same_float(f, np.array([a for a, _ in md]))
    same_float(ip, np.array([b for _, b in md]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ldexp(rng, dtype):
    n = 200
    x = floats(rng, n, dtype, -10, 10)
    i = rng.integers(-200, 200, n)
    i[:4] = [5000, -5000, 2**40, -2**40]
    out = poisoned(n, dtype)
    launch1d(make_binary(math.ldexp), n, out, x, i)
    with np.errstate(all="ignore"):
        same_float(out, np.ldexp(x, np.clip(i, -100000, 100000).astype(np.int32)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_remainder_nextafter(rng, dtype):
    n = 200
    x = floats(rng, n, dtype, -1e3, 1e3)
    x[np.isinf(x)] = 7.0  # CPython's remainder raises for an infinite x
    y = rng.uniform(0.1, 50, n).astype(dtype) * rng.choice([-1, 1], n).astype(dtype)
    y[:3] = [np.inf, -np.inf, np.nan]
    out = poisoned(n, dtype)
    launch1d(make_binary(math.remainder), n, out, x, y)
    same_float(out, np.array([math.remainder(a, b) for a, b in zip(x.tolist(), y.tolist())]))
    out2 = poisoned(n, dtype)
    launch1d(make_binary(math.nextafter), n, out2, x, y)
    same_float(out2, np.nextafter(x, y))


# ---- NumPy's scalar functions -----------------------------------------------------------------

NP_UNARY = {"sqrt": (0, 100), "exp": (-10, 10), "log": (0.01, 100), "sin": (-10, 10), "cos": (-10, 10),
            "tan": (-1.5, 1.5), "arcsin": (-1, 1), "arccos": (-1, 1), "arctan": (-10, 10), "sinh": (-5, 5),
            "cosh": (-5, 5), "tanh": (-5, 5), "arcsinh": (-10, 10), "arccosh": (1, 10), "arctanh": (-0.9, 0.9),
            "exp2": (-10, 10), "expm1": (-5, 5), "log2": (0.01, 100), "log10": (0.01, 100), "log1p": (-0.9, 10),
            "cbrt": (-10, 10), "fabs": (-10, 10)}
NP_EXACT = ["abs", "absolute", "isnan", "isinf", "isfinite", "floor", "ceil", "trunc", "rint", "negative", "sign",
            "logical_not"]
NP_BINARY = ["minimum", "maximum", "fmin", "fmax", "copysign", "hypot", "arctan2", "fmod", "power", "add",
             "subtract", "multiply", "divide", "greater", "less_equal", "logical_and", "logical_or", "logical_xor"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("name", sorted(NP_UNARY))
def test_numpy_unary(rng, name, dtype):
    f = getattr(np, name)
    lo, hi = NP_UNARY[name]
    if dtype == np.int32:
        if math.floor(hi) - math.ceil(lo) < 2:
            pytest.skip("no integers in the domain to speak of")
        x = rng.integers(math.ceil(lo), math.floor(hi), 200, endpoint=True).astype(dtype)
    else:
        x = rng.uniform(lo, hi, 200).astype(dtype)
    rt = np.float32 if dtype == np.float32 else np.float64
    out = poisoned(200, rt)
    launch1d(make_unary(f), 200, out, x)
    with np.errstate(all="ignore"):
        want = f(x.astype(rt))
    assert_same(out, want, rtol=2e-6 if rt == np.float32 else 1e-14, atol=1e-6 if rt == np.float32 else 1e-300)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("name", NP_EXACT)
def test_numpy_exact(rng, name, dtype):
    f = getattr(np, name)
    x = floats(rng, 200, dtype, -1e6, 1e6) if dtype != np.int64 else rng.integers(-10**12, 10**12, 200)
    if dtype == np.int64 and name in ("floor", "ceil", "trunc", "rint"):
        rt = np.dtype(np.float64)  # numba's typing: a float for any argument
    else:
        rt = f(x[:1]).dtype
    out = poisoned(200, rt)
    launch1d(make_unary(f), 200, out, x)
    want = f(x).astype(rt)
    same_float(out, want) if rt.kind == "f" else assert_same(out, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", NP_BINARY)
def test_numpy_binary(rng, name, dtype):
    f = getattr(np, name)
    x = floats(rng, 200, dtype, -100, 100)
    y = floats(rng, 200, dtype, -100, 100)
    if name == "power":
        x = np.abs(x)
    out = poisoned(200, f(x[:1], y[:1]).dtype)
    launch1d(make_binary(f), 200, out, x, y)
    with np.errstate(all="ignore"):
        want = f(x, y)
    if name in ("hypot", "arctan2", "power") and dtype == np.float32:
        assert_same(out, want, rtol=2e-6, atol=1e-6)
    elif name in ("hypot", "arctan2", "power"):
        assert_same(out, want, rtol=1e-15)
    elif out.dtype.kind == "f":
        same_float(out, want)
    else:
        assert_same(out, want)


def test_numpy_int_minmax(rng):
    x, y = rng.integers(-10**9, 10**9, 100), rng.integers(-10**9, 10**9, 100)
    for f in (np.minimum, np.maximum, np.power, np.remainder, np.floor_divide, np.bitwise_xor):
        if f is np.power:
            x2, y2 = rng.integers(-9, 9, 100), rng.integers(0, 9, 100)
        else:
            x2, y2 = x, y
        out = poisoned(100, np.int64)
        launch1d(make_binary(f), 100, out, x2, y2)
        assert_same(out, f(x2, y2))


# ---- for loops over arrays, tuples, enumerate(), zip() ----------------------------------------

def test_enumerate_zip(rng):
    @gpu.jit
    def k(out, a, b, lo, hi, step):
        for i, v in enumerate(a):
            out[0, i] = v * 2.0 + i
        for x, y in zip(a, b):
            out[1, 0] += x * y
        for i, (x, y) in enumerate(zip(range(lo, hi, step), b), 3):
            out[2, i] = x + y
        for v in a:
            out[3, 0] += v
        for v in (1.5, 2.5, 3.5):
            out[3, 1] += v
        for i, r in enumerate(range(hi, lo, -step)):
            out[4, i] = r
        for x, y, z in zip(a, b, range(5)):
            if z == 3:
                break
            out[5, z] = x - y
        n = 0
        for i, v in enumerate(a, start=-2):
            n += i
        out[6, 0] = n

    a = rng.normal(size=9)
    b = rng.normal(size=7)
    lo, hi, step = -4, 20, 3
    out = np.zeros((7, 12))
    k[1, 1](out, a, b, lo, hi, step)
    want = np.zeros((7, 12))
    for i, v in enumerate(a):
        want[0, i] = v * 2.0 + i
    for x, y in zip(a, b):
        want[1, 0] += x * y
    for i, (x, y) in enumerate(zip(range(lo, hi, step), b), 3):
        want[2, i] = x + y
    for v in a:
        want[3, 0] += v
    for v in (1.5, 2.5, 3.5):
        want[3, 1] += v
    for i, r in enumerate(range(hi, lo, -step)):
        want[4, i] = r
    for x, y, z in zip(a, b, range(5)):
        if z == 3:
            break
        want[5, z] = x - y
    want[6, 0] = sum(i for i, _ in enumerate(a, start=-2))
    # out[1, 0] += x * y is a fused multiply-add (docs/language.md): each step rounds once, where
    # CPython rounds twice, so the dot product may differ by a few ulps of the terms' magnitudes
    mag = sum(abs(x * y) for x, y in zip(a, b))
    assert abs(out[1, 0] - want[1, 0]) <= 8 * 2.0 ** -52 * mag, (out[1, 0], want[1, 0])
    out[1, 0] = want[1, 0]
    assert_same(out, want, rtol=1e-14)


def test_loop_over_2d_rows_of_tuple_and_range_index(rng):
    @gpu.jit
    def k(out, a, n):
        r = range(3, n, 2)
        out[0] = len(r)
        out[1] = r[1]
        out[2] = r[-1]
        s = 0
        for v in r:
            s += v
        out[3] = s
        for v in a.shape:
            out[4] += v

    out = np.zeros(5, np.int64)
    a = np.zeros((3, 4))
    k[1, 1](out, a, 20)
    r = range(3, 20, 2)
    assert_same(out, np.array([len(r), r[1], r[-1], sum(r), 7]))


def test_enumerate_outside_for_loop():
    @gpu.jit
    def k(out, a):
        e = enumerate(a)  # noqa: F841
        out[0] = 1

    with pytest.raises(gpu.UnsupportedError, match=r"enumerate\(\) is supported only as the iterable of a for loop"):
        k[1, 1](np.zeros(1), np.zeros(3))


# ---- f(*t) ------------------------------------------------------------------------------------

def _fma_like(a, b, c):
    return a * b + c


def test_star_call(rng):
    @gpu.jit
    def k(out, x):
        i = gpu.grid(1)
        if i < x.shape[0]:
            t = (x[i, 0], x[i, 1])
            out[i, 0] = complex(*t)
            out[i, 1] = _fma_like(*(x[i, 0], x[i, 1], x[i, 2]))
            out[i, 2] = max(*t)

    x = rng.normal(size=(50, 3))
    out = np.full((50, 3), complex(np.nan, np.nan))
    launch1d(k, 50, out, x)
    want = np.array([[complex(a, b), a * b + c, max(a, b)] for a, b, c in x.tolist()])
    assert_same(out.real, want.real, rtol=1e-13, atol=1e-15)  # a * b + c is contracted to an fma
    assert_same(out.imag, want.imag)


def test_star_call_of_non_tuple():
    @gpu.jit
    def k(out, x):
        out[0] = complex(*x[0])

    with pytest.raises(gpu.TypingError, match=r"spreads a tuple, not float64"):
        k[1, 1](np.zeros(1, np.complex128), np.zeros(2))


def test_enumerate_with_a_long_body(rng):
    # a body past 255 code units gives the FOR_ITER an EXTENDED_ARG prefix
    body = "".join("        acc = acc * 0.5 + v * %d + i\n" % j for j in range(120))
    src = "def k(out, a):\n    acc = 0.0\n    for i, v in enumerate(a):\n" + body + "        out[i] = acc\n"
    ns = {}
    exec(compile(src, "<long body>", "exec"), ns)
    a = rng.normal(size=6)
    out = poisoned(6, np.float64)
    gpu.jit(ns["k"])[1, 1](out, a)
    want = np.empty(6)
    ns["k"](want, a)
    assert_same(out, want, rtol=1e-12)


def test_divmod_wrong_count():
    @gpu.jit
    def k(out):
        out[0] = divmod(7)[0]

    with pytest.raises(gpu.TypingError, match=r"divmod\(\) takes 2 arguments \(1 given\)"):
        k[1, 1](np.zeros(1))


def test_nested_sequence_loops_continue_else(rng):
    def body(out, a, b):
        n = 0
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                if y < 0:
                    continue
                if x * y > 1.5:
                    break
                out[0] += x * y + i - j
                n += 1
            else:
                out[1] += 1
        for v in b:
            if v > 100:
                break
        else:
            out[2] = n

    a, b = rng.normal(size=7), rng.normal(size=5)
    out = np.zeros(3)
    gpu.jit(body)[1, 1](out, a, b)
    want = np.zeros(3)
    body(want, a, b)
    assert_same(out, want, rtol=1e-13)
