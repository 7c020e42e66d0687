"""gpujit.libdevice: libdevice's functions called in kernels (run here on the CPU target, and
assembled for the GPU by conftest), against NumPy/CPython references on random inputs;
outputs poisoned before each launch."""
import math
from fractions import Fraction

import numpy as np
import pytest

import gpujit as gpu
from gpujit import libdevice, libdevicefuncs

rng = np.random.default_rng()
N = 64


def kernel(name, nin, nout):
    """out_k[i] = libdevice.<name>(x_0[i], ...)[k] over the arrays' elements."""
    ins = ["x%d" % i for i in range(nin)]
    outs = ["r%d" % i for i in range(nout)]
    call = "libdevice.%s(%s)" % (name, ", ".join("%s[i]" % x for x in ins))
    body = ("        %s = %s\n" % (", ".join("v%d" % k for k in range(nout)), call)
            + "".join("        %s[i] = v%d\n" % (o, k) for k, o in enumerate(outs)))
    src = "def k(%s):\n    for i in range(%s.size):\n%s" % (", ".join(outs + ins), ins[0], body)
    ns = {"libdevice": libdevice}
    exec(src, ns)
    return gpu.jit(ns["k"])


def run(name, *xs, dtypes=None):
    retty, args = libdevicefuncs.functions["__nv_" + name]
    sig = libdevicefuncs.create_signature(retty, args)
    results = list(sig.return_type) if hasattr(sig.return_type, "__iter__") else [sig.return_type]
    outs = []
    for t in results:
        dt = np.dtype(str(t))
        outs.append(np.full(len(xs[0]), 77 if dt.kind in "iu" else np.nan, dt))
    kernel(name, len(xs), len(outs))[1, 1](*outs, *xs)
    return outs if len(outs) > 1 else outs[0]


def floats(dtype, lo=-4.0, hi=4.0):
    return rng.uniform(lo, hi, N).astype(dtype)


UNARY = [  # name, reference, domain
    ("sin", np.sin, (-10, 10)), ("cos", np.cos, (-10, 10)), ("tan", np.tan, (-1.5, 1.5)), ("exp", np.exp, (-5, 5)),
    ("log", np.log, (0.01, 100)), ("log2", np.log2, (0.01, 100)), ("log10", np.log10, (0.01, 100)),
    ("sqrt", np.sqrt, (0, 100)), ("cbrt", np.cbrt, (-100, 100)), ("expm1", np.expm1, (-1, 1)),
    ("log1p", np.log1p, (-0.5, 2)), ("asinh", np.arcsinh, (-5, 5)), ("atanh", np.arctanh, (-0.9, 0.9)),
    ("erf", np.vectorize(math.erf), (-3, 3)), ("erfc", np.vectorize(math.erfc), (-3, 3)),
    ("lgamma", np.vectorize(math.lgamma), (0.1, 10)), ("tgamma", np.vectorize(math.gamma), (0.1, 6)),
    ("exp10", lambda x: 10.0 ** x, (-3, 3)), ("exp2", np.exp2, (-5, 5)), ("rsqrt", lambda x: 1 / np.sqrt(x), (0.1, 9)),
    ("rcbrt", lambda x: 1 / np.cbrt(x), (0.1, 9)), ("sinpi", lambda x: np.sin(np.pi * x), (-3, 3)),
    ("cospi", lambda x: np.cos(np.pi * x), (-3, 3)), ("cyl_bessel_i0", np.i0, (-20, 20)),
    ("normcdf", np.vectorize(lambda x: 0.5 * math.erfc(-x / math.sqrt(2))), (-5, 5)),
    ("erfcx", np.vectorize(lambda x: math.exp(x * x) * math.erfc(x)), (-2, 8)),
    ("floor", np.floor, (-9, 9)), ("trunc", np.trunc, (-9, 9)), ("rint", np.rint, (-9, 9)),
]


@pytest.mark.parametrize("name,ref,dom", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("single", [False, True])
def test_unary(name, ref, dom, single):
    if single:
        name += "f"
    dtype = np.float32 if single else np.float64
    x = floats(dtype, *dom)
    got = run(name, x)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, ref(x.astype(np.float64)), rtol=2e-6 if single else 1e-13, atol=1e-6 if single else 1e-14)


def test_inverse_functions():
    y = rng.uniform(-0.999, 0.999, N)
    np.testing.assert_allclose(np.vectorize(math.erf)(run("erfinv", y)), y, rtol=1e-14, atol=1e-16)
    p = rng.uniform(1e-6, 1.999, N)
    np.testing.assert_allclose(np.vectorize(math.erfc)(run("erfcinv", p)), p, rtol=1e-13)
    q = rng.uniform(1e-9, 1 - 1e-9, N)
    x = run("normcdfinv", q)
    np.testing.assert_allclose(np.vectorize(lambda t: 0.5 * math.erfc(-t / math.sqrt(2)))(x), q, rtol=1e-12)
    tiny = np.array([1e-300, 1e-100, 1e-20] * (N // 3 + 1))[:N]
    np.testing.assert_allclose(np.vectorize(math.erfc)(run("erfcinv", tiny)), tiny, rtol=1e-12)


def test_binary_float():
    a, b = floats(np.float64), floats(np.float64)
    np.testing.assert_allclose(run("atan2", a, b), np.arctan2(a, b), rtol=1e-14)
    np.testing.assert_allclose(run("hypot", a, b), np.hypot(a, b), rtol=1e-14)
    np.testing.assert_array_equal(run("fmod", a, b), np.fmod(a, b))
    np.testing.assert_array_equal(run("fmaxf", a.astype(np.float32), b.astype(np.float32)),
                                  np.fmax(a.astype(np.float32), b.astype(np.float32)))
    np.testing.assert_allclose(run("powf", np.abs(a).astype(np.float32), b.astype(np.float32)),
                               np.abs(a).astype(np.float32) ** b.astype(np.float32), rtol=1e-6)
    n = rng.integers(-4, 5, N).astype(np.int32)
    np.testing.assert_allclose(run("powi", a, n), a ** n.astype(np.float64), rtol=1e-14)
    np.testing.assert_array_equal(run("ldexp", a, n), np.ldexp(a, n))
    np.testing.assert_allclose(run("norm3d", a, b, a * b), np.sqrt(a * a + b * b + (a * b) ** 2), rtol=1e-14)
    np.testing.assert_array_equal(run("fma", a, b, a), [float(exact(x) * exact(y) + exact(x)) for x, y in zip(a, b)])


def test_tuple_results():
    x = floats(np.float64, -50, 50)
    s, c = run("sincos", x)
    np.testing.assert_allclose(s, np.sin(x), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(c, np.cos(x), rtol=1e-14, atol=1e-15)
    s, c = run("sincosf", x.astype(np.float32))
    assert s.dtype == np.float32
    np.testing.assert_allclose(s, np.sin(x.astype(np.float32)), rtol=1e-5, atol=1e-6)
    s, c = run("sincospi", x)
    np.testing.assert_allclose(s, np.sin(np.pi * x), atol=1e-12)
    frac, e = run("frexp", x)
    assert e.dtype == np.int32
    np.testing.assert_array_equal((frac, e), np.frexp(x))
    frac, whole = run("modf", x)
    np.testing.assert_array_equal((frac, whole), np.modf(x))
    a, b = floats(np.float64, -100, 100), floats(np.float64, 0.5, 7)
    r, q = run("remquo", a, b)
    np.testing.assert_array_equal(r, np.vectorize(math.remainder)(a, b))
    n = np.rint((a - r) / b).astype(np.int64)  # the integral quotient of the remainder
    # the quotient's sign and at least its three low bits
    np.testing.assert_array_equal(np.abs(q) & 7, np.abs(n) & 7)
    np.testing.assert_array_equal(np.sign(q)[q != 0], np.sign(n)[q != 0])


def exact(x):
    return Fraction(float(x))


@pytest.mark.parametrize("op,fn", [("add", lambda a, b: a + b), ("sub", lambda a, b: a - b),
                                   ("mul", lambda a, b: a * b), ("div", lambda a, b: a / b)])
def test_rounding_modes(op, fn):
    a = rng.uniform(-10, 10, N)
    b = rng.uniform(0.1, 10, N) * rng.choice([-1, 1], N)
    down, near, up, zero = (run("d%s_%s" % (op, m), a, b) for m in ("rd", "rn", "ru", "rz"))
    np.testing.assert_array_equal(near, fn(a, b))
    for i in range(N):
        v = fn(exact(a[i]), exact(b[i]))
        assert exact(down[i]) <= v <= exact(up[i])
        assert np.nextafter(down[i], np.inf) >= float(v) if exact(down[i]) != v else down[i] == up[i]
        assert abs(exact(zero[i])) <= abs(v)
        assert zero[i] == (down[i] if v >= 0 else up[i])
    fdown, fup = run("f%s_rd" % op, a.astype(np.float32), b.astype(np.float32)), \
        run("f%s_ru" % op, a.astype(np.float32), b.astype(np.float32))
    for i in range(N):
        v = fn(exact(np.float32(a[i])), exact(np.float32(b[i])))
        assert exact(fdown[i]) <= v <= exact(fup[i])
        assert np.nextafter(fdown[i], np.float32(np.inf)) >= fup[i]


def test_conversions():
    # (NaN has no int result CUDA documents: the H200's is INT_MIN, so it is not compared)
    x = rng.uniform(-1e3, 1e3, N)
    x[:3] = [2.5, -2.5, 1e20]
    for m, ref in (("rd", np.floor), ("ru", np.ceil), ("rz", np.trunc), ("rn", np.rint)):
        got = run("double2int_" + m, x)
        want = np.clip(ref(x), -2**31, 2**31 - 1).astype(np.int32)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(run("double2ll_" + m, x[4:]), ref(x[4:]).astype(np.int64))
    i = rng.integers(-2**31, 2**31, N).astype(np.int32)
    for m in ("rd", "ru"):
        got = run("int2float_" + m, i)
        for k in range(N):
            assert (exact(got[k]) <= int(i[k])) if m == "rd" else (exact(got[k]) >= int(i[k]))
    np.testing.assert_array_equal(run("int2float_rn", i), i.astype(np.float32))
    f = x.astype(np.float32)
    np.testing.assert_array_equal(run("float_as_int", f), f.view(np.int32))
    np.testing.assert_array_equal(run("double_as_longlong", x), x.view(np.int64))
    np.testing.assert_array_equal(run("hiloint2double", run("double2hiint", x), run("double2loint", x)).view(np.int64),
                                  x.view(np.int64))
    np.testing.assert_array_equal(run("saturatef", np.float32([-1, 0.25, 2, np.nan] * (N // 4))),
                                  np.float32([0, 0.25, 1, 0] * (N // 4)))


def test_integers():
    a = rng.integers(-2**31, 2**31, N).astype(np.int32)
    b = rng.integers(-2**31, 2**31, N).astype(np.int32)
    c = rng.integers(-2**20, 2**20, N).astype(np.int32)
    u, v = [int(x) for x in a.view(np.uint32)], [int(x) for x in b.view(np.uint32)]
    np.testing.assert_array_equal(run("popc", a), [bin(x).count("1") for x in u])
    np.testing.assert_array_equal(run("clz", a), [32 - x.bit_length() for x in u])
    np.testing.assert_array_equal(run("ffs", a), [(x & -x).bit_length() for x in u])
    np.testing.assert_array_equal(run("brev", a).view(np.uint32), [int(bin(x)[2:].zfill(32)[::-1], 2) for x in u])
    l64 = rng.integers(-2**63, 2**63, N, dtype=np.int64)
    np.testing.assert_array_equal(run("popcll", l64), [bin(int(x) & (2**64 - 1)).count("1") for x in l64])
    np.testing.assert_array_equal(run("mulhi", a, b), (a.astype(np.int64) * b) >> 32)
    np.testing.assert_array_equal(run("umulhi", a, b).view(np.uint32), [(x * y) >> 32 for x, y in zip(u, v)])
    np.testing.assert_array_equal(run("mul64hi", l64, l64[::-1]), [(int(x) * int(y)) >> 64 for x, y in zip(l64, l64[::-1])])
    np.testing.assert_array_equal(run("hadd", a, b), (a.astype(np.int64) + b) >> 1)
    np.testing.assert_array_equal(run("rhadd", a, b), (a.astype(np.int64) + b + 1) >> 1)
    np.testing.assert_array_equal(run("mul24", c, c[::-1]), (c.astype(np.int64) * c[::-1]).astype(np.int32))
    np.testing.assert_array_equal(run("sad", c, c[::-1], c), np.abs(c.astype(np.int64) - c[::-1]) + c)
    np.testing.assert_array_equal(run("min", a, b), np.minimum(a, b))
    np.testing.assert_array_equal(run("umax", a, b).view(np.uint32), np.maximum(u, v))
    np.testing.assert_array_equal(run("abs", c), np.abs(c))
    s = rng.integers(0, 2**16, N).astype(np.int32)
    want = []
    for x, y, sel in zip(u, v, s):
        w = x | (y << 32)
        want.append(sum(((w >> (8 * ((int(sel) >> (4 * k)) & 7))) & 0xff) << (8 * k) for k in range(4)))
    np.testing.assert_array_equal(run("byte_perm", a, b, s).view(np.uint32), want)


def test_arguments_convert_and_scalars():
    @gpu.jit
    def k(out, x, n):
        out[0] = libdevice.sinf(x)  # float64 -> the float32 parameter
        out[1] = libdevice.popc(n)  # int64 -> int32
        out[2] = libdevice.fast_expf(np.float32(1.0))

    out = np.full(3, np.nan)
    x = rng.uniform(-3, 3)
    k[1, 1](out, x, 0xF0F)
    assert out[0] == pytest.approx(math.sin(np.float32(x)), rel=1e-6)
    assert out[1] == 8
    assert out[2] == pytest.approx(math.e, rel=1e-6)


def test_errors():
    @gpu.jit
    def two(out):
        out[0] = libdevice.sin(1.0, 2.0)

    with pytest.raises(gpu.TypingError, match=r"libdevice.sin\(\) takes 1 argument \(2 given\)"):
        two[1, 1](np.zeros(1))

    @gpu.jit
    def cplx(out, z):
        out[0] = libdevice.sin(z)

    with pytest.raises(gpu.TypingError, match="complex128, not a real number"):
        cplx[1, 1](np.zeros(1), 1j)

    @gpu.jit
    def gpu_only(out, x):
        out[0] = libdevice.rcp64h(x)

    if gpu.current_target() == "cpu":
        with pytest.raises(gpu.UnsupportedError, match="rcp64h.*cpu target"):
            gpu_only[1, 1](np.zeros(1), 2.0)
    assert "rcp.approx.ftz.f64" in gpu.compile_ptx(gpu_only.py_func, "void(float64[::1], float64)")[0]
    with pytest.raises(RuntimeError, match="inside a @gpujit.jit kernel"):
        libdevice.sinf(1.0)


def test_table():
    # every function libdevice defines with value parameters is there, with its types
    assert len(libdevicefuncs.functions) > 330
    retty, args = libdevicefuncs.functions["__nv_remquof"]
    assert str(retty) == "float32" and [(str(a.ty), a.is_ptr) for a in args] == [
        ("float32", False), ("float32", False), ("int32", True)]
    assert str(libdevicefuncs.create_signature(*libdevicefuncs.functions["__nv_sincos"])) == \
        str(gpu.types.signature(gpu.types.UniTuple(gpu.types.float64, 2), gpu.types.float64))
    assert set(libdevice.__all__) == {n[5:] for n in libdevicefuncs.functions}
