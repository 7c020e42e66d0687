"""Signatures in every spelling numba accepts (strings, type objects, tuples of
argument types), read by the compiler's one parser both when compiling and when
matching a launch's arguments to the eager signatures."""
import contextlib
import numpy as np
import pytest

import gpujit as gpu
from gpujit import _core, types
from gpujit.types import (Array, CPointer, Tuple, UniTuple, complex64, complex128, float32, float64, int8, int16,
                          int32, int64, uint8, uint32, void)
from conftest import poisoned, random_array

# numba.core.types' scalar names and the type each is on a 64-bit Linux host
ALIASES = {
    "bool": "bool", "boolean": "bool", "bool_": "bool", "b1": "bool",
    "int8": "int8", "i1": "int8", "char": "int8",
    "int16": "int16", "i2": "int16", "short": "int16",
    "int32": "int32", "i4": "int32", "intc": "int32",
    "int64": "int64", "i8": "int64", "intp": "int64", "int_": "int64", "long_": "int64", "longlong": "int64",
    "uint8": "uint8", "u1": "uint8", "byte": "uint8", "uchar": "uint8",
    "uint16": "uint16", "u2": "uint16", "ushort": "uint16",
    "uint32": "uint32", "u4": "uint32", "uintc": "uint32",
    "uint64": "uint64", "u8": "uint64", "uintp": "uint64", "uint": "uint64", "ulong": "uint64",
    "ulonglong": "uint64",
    "float32": "float32", "f4": "float32", "float_": "float32",
    "float64": "float64", "f8": "float64", "double": "float64",
    "complex64": "complex64", "c8": "complex64",
    "complex128": "complex128", "c16": "complex128",
}


def values(rng, dtype, n):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind == "c":
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    return random_array(rng, n, dt)


def poison(n, dtype):
    dt = np.dtype(dtype)
    return np.full(n, complex(np.nan, np.nan), dt) if dt.kind == "c" else poisoned(n, dt)


def copy_and_put(out, a, x):
    i = gpu.grid(1)
    if i < a.size:
        out[i] = a[i]
    if i == 0:
        out[a.size] = x


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_alias_in_string_signature(alias, rng):
    """The alias compiles, and a launch with arrays and a scalar of its type matches it."""
    name = ALIASES[alias]
    k = gpu.jit("void(%s[::1], %s[:], %s)" % (alias, alias, alias))(copy_and_put)
    a, x = values(rng, name, 33), values(rng, name, 1)[0]
    out = poison(34, name)
    k[2, 32](out, a, x)
    want = np.append(a, x)
    assert out.dtype == np.dtype(name) and (out == want).all()
    assert k.signatures == ["void(%s[::1], %s[:], %s)" % (alias, alias, alias)]  # no lazy compile


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_alias_type_objects(alias):
    if alias == "bool":
        pytest.skip("'bool' is the type's name, not one of numba.types' attributes")
    t = getattr(types, alias)
    assert t is types.NUMBERS["numpy." + ALIASES[alias]] and getattr(gpu, alias) is t
    assert str(t) == ALIASES[alias] and np.dtype(t) == np.dtype(ALIASES[alias])
    assert _core.parse_signature("(%s)" % alias)[1][0][0] == ALIASES[alias]


def test_void_and_none():
    assert types.void is types.none is gpu.void is gpu.none
    assert _core.parse_signature("void()") == _core.parse_signature("none()") == (("none", "none", "", 0, ""), [])


def saxpy(out, a, x, y):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


SAXPY_FORMS = {
    "string": "void(float32[::1], float32, float32[::1], float32[::1])",
    "string-no-return": "(float32[::1], float32, float32[::1], float32[::1])",
    "types-called": void(float32[::1], float32, float32[::1], float32[::1]),
    "tuple": (float32[::1], float32, float32[::1], float32[::1]),
    "Array": void(Array(float32, 1, "C"), float32, Array(float32, 1, "C"), Array(float32, 1, "C")),
    "any-layout": void(float32[:], float32, float32[:], float32[:]),
    "numba-printed": "void(array(float32, 1d, C), float32, array(float32, 1d, A), array(f4, 1d, C))",
    "numba-constructor": "void(Array(float32, 1, 'C'), float32, Array(float32, 1, \"A\"), float32[::1])",
    "top-level": gpu.void(gpu.float32[::1], gpu.f4, gpu.float32[::1], gpu.float32[::1]),
    "list": [void(float64[::1], float64, float64[::1], float64[::1]), (float32[::1], float32, float32[::1],
                                                                           float32[::1])],
}


@pytest.mark.parametrize("form", sorted(SAXPY_FORMS))
def test_signature_forms_compile_and_launch(form, rng):
    k = gpu.jit(SAXPY_FORMS[form])(saxpy)
    compiled = list(k.signatures)
    x, y = random_array(rng, 100, np.float32), random_array(rng, 100, np.float32)
    out = poisoned(100, np.float32)
    k[4, 32](out, np.float32(1.5), x, y)
    # the kernel may fuse a * x + y (one rounding): compare with the exact value rounded once
    want = (1.5 * x.astype(np.float64) + y).astype(np.float32)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)
    assert k.signatures == compiled  # the launch used an eager signature


def test_signature_forms_compile_ptx():
    for sig in ("void(float32[::1], float32, float32[::1], float32[::1])",
                void(float32[::1], float32, float32[::1], float32[::1]),
                (float32[::1], float32, float32[::1], float32[::1])):
        ptx, restype = gpu.compile_ptx(saxpy, sig)
        assert ".entry" in ptx and "fma.rn.f32" in ptx and restype == gpu.void


def scale2d(out, a, s):
    i, j = gpu.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j] * s


@pytest.mark.parametrize("sig", [
    void(float64[:, ::1], float64[:, :], float64),
    void(Array(float64, 2, "C"), Array(float64, 2, "A"), float64),
    "void(f8[:, ::1], double[:, :], float_)",
    (float64[:, :], float64[:, :], int64),
], ids=["subscript", "Array", "aliases", "tuple"])
def test_2d_layouts(sig, rng):
    k = gpu.jit(sig)(scale2d)
    big = random_array(rng, (12, 20), np.float64)
    a = big[::2, 1::3]                                   # strided: any-layout only
    out = poisoned(a.shape, np.float64)
    s = 3 if isinstance(sig, tuple) else 0.75
    k[(1, 1), (8, 8)](out, a, s)
    np.testing.assert_array_equal(out, a * s)


def test_best_signature_is_chosen():
    """numba's choice among eager signatures: an exact match before a conversion, the
    safest conversion before a lossy one, else the first declared."""
    def put(out, x):
        out[0] = x
    k = gpu.jit([void(float64[::1], float32), void(float64[::1], float64), void(float64[::1], int16)])(put)
    out = poisoned(1, np.float64)
    k[1, 1](out, 0.1)                         # float64: exact
    assert out[0] == 0.1
    k[1, 1](out, np.float32(0.1))             # float32: exact
    assert out[0] == float(np.float32(0.1))
    k[1, 1](out, np.int8(-7))                 # int8 -> int16 is the safe one
    assert out[0] == -7
    k[1, 1](out, 2**40 + 1)                   # int64: to float64 is numba's safe one
    assert out[0] == 2**40 + 1
    k[1, 1](out, np.uint16(40000))            # uint16 -> float32 and -> float64 are lossless, to int16
    assert out[0] == 40000                    # not: the first of those two
    assert len(k.signatures) == 3
    k2 = gpu.jit([void(float64[::1], int8), void(float64[::1], uint32)])(put)
    k2[1, 1](out, 300)                        # int64: both lossy, the first declared
    assert out[0] == 300 - 256
    k2[1, 1](out, np.uint16(300))             # uint16 -> uint32 is a promotion
    assert out[0] == 300


def test_scalar_conversions():
    def put(out, x):
        out[0] = x
    k = gpu.jit("void(complex128[::1], c16)")(put)
    out = poison(1, np.complex128)
    for v, want in ((3, 3), (True, 1), (2.5, 2.5), (np.float32(0.5), 0.5), (1 - 2j, 1 - 2j)):
        k[1, 1](out, v)
        assert out[0] == want
    kf = gpu.jit("void(float32[::1], single)")(put)
    out = poisoned(1, np.float32)
    kf[1, 1](out, 7)
    assert out[0] == 7


@pytest.mark.parametrize("sig,args", [
    ("void(float32[::1], float32)", (np.zeros(3, np.float64), 1.0)),         # dtype
    ("void(float32[::1], float32)", (np.zeros((3, 2), np.float32), 1.0)),    # ndim
    ("void(float32[::1], float32)", (np.zeros(6, np.float32)[::2], 1.0)),    # C wants C-contiguous
    ("void(float32[:], float32)", (np.zeros(3, np.float32), 1j)),            # complex to a real
    ("void(float32[:], int32)", (np.zeros(3, np.float32), 1.5)),             # float to an int
    ("void(float32[:], bool_)", (np.zeros(3, np.float32), 2)),               # int to a bool
    ("void(float32[:], float32)", (np.float32(1), 1.0)),                     # scalar for an array
    ("void(float32[:], float32)", (np.zeros(3, np.float32), np.zeros(3))),   # array for a scalar
], ids=["dtype", "ndim", "layout", "complex-real", "float-int", "int-bool", "scalar-array", "array-scalar"])
def test_mismatched_launch(sig, args):
    def put(a, x):
        a[0] = x
    k = gpu.jit(sig)(put)
    with pytest.raises(TypeError, match="No matching definition"):
        k[1, 1](*args)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        k[1, 1](np.zeros(3, np.float32), 1.0, 2.0)


def test_one_signature_takes_an_array_of_the_other_signedness(rng):
    # numba launches a kernel compiled for one signature without matching the arguments'
    # types: an int32 array reaches a uint32[:] parameter as its memory, read as uint32
    def bump(a, b):
        i = gpu.grid(1)
        if i < a.size:
            b[i] = a[i] + 1
    a = rng.integers(-2**31, 2**31 - 1, 40, dtype=np.int32)
    b = poisoned(40, np.int64)
    gpu.jit("void(uint32[:], uint64[:])")(bump)[1, 64](a, b)
    np.testing.assert_array_equal(b, a.view(np.uint32).astype(np.int64) + 1)
    # a kernel of several signatures matches types: no such reinterpretation
    k = gpu.jit(["void(uint32[:], uint64[:])", "void(float32[:], uint64[:])"])(bump)
    with pytest.raises(TypeError, match="No matching definition"):
        k[1, 64](a, b)
    # only signedness: other sizes and kinds are refused
    with pytest.raises(TypeError, match="No matching definition"):
        gpu.jit("void(uint32[:], uint64[:])")(bump)[1, 64](a.astype(np.int16), b)
    with pytest.raises(TypeError, match="No matching definition"):
        gpu.jit("void(float32[:], uint64[:])")(bump)[1, 64](a, b)


def test_mismatch_message_lists_signatures():
    def put(out, x):
        out[0] = x
    k = gpu.jit([void(float32[::1], float32), "void(float64[::1], intc)"])(put)
    with pytest.raises(TypeError, match=r"No matching definition for argument type\(s\) int8\[::1\], int64 of put; the kernel was "
                                        r"compiled for: void\(float32\[::1\], float32\); void\(float64\[::1\], intc\)"):
        k[1, 1](np.zeros(1, np.int8), 1)


BAD = [
    ("void(float32[:, ::1, :])", "'::1' goes on the last dimension \\(C order\\) or the first \\(F order\\)"),
    ("void(UniTuple(int8 x 2)*)", r"pointers are to numbers or void, not to UniTuple\(int8 x 2\)"),
    ("void(CPointer(float32[:]))", r"pointers are to numbers or void, not to float32\[:\]"),
    ("void(CPointer(float32)", "expected ',' or '\\)'"),
    ("void(Array(float32, 2, C))", "expected the layout, quoted"),
    ("void(array(float32, 33d, C))", "arrays have 0 to 32 dimensions, not 33"),
    ("void(Record(a[type=float64;offset=4];8;True))", "field 'a' ends past the record's 8 bytes"),
    ("void(Record(a[type=float64[:];offset=0];8;True))", "a record field is a number, a record or a nested array"),
    ("void(float65[:])", "unknown type name 'float65' at column 6"),
    ("void(void)", "void cannot be one of the arguments"),
    ("void(none[:])", "arrays of none are not supported"),
    ("void(float32[:]", "expected ',' or '\\)' at column 16"),
    ("void(float32[::2])", "expected ',' or ']'"),
    ("void(float32[%s])" % ", ".join([":"] * 33), "too many dimensions \\(limit is 32\\)"),
    ("void(%s)" % ", ".join(["int8"] * 257), "too many arguments \\(limit is 256\\)"),
    ("void(UniTuple(int8 x 65))", "too many tuple items \\(limit is 64\\)"),
    ("(" * 40 + ")" * 40, "expected a type"),
    ("UniTuple(" * 20 + "int8" + " x 1)" * 20 + "()", "nested too deeply"),
    ("float32(float32)", "a kernel's return type must be void"),
    ("void(float32)  x", "trailing characters"),
]


@pytest.mark.parametrize("sig,message", BAD, ids=range(len(BAD)))
def test_bad_signatures(sig, message):
    def one(a):
        pass
    for attempt in (lambda: gpu.compile_ptx(one, sig), lambda: gpu.jit(sig)(one)):
        with pytest.raises((TypeError, gpu.CompileError), match=message) as ei:
            attempt()
        assert not isinstance(ei.value, gpu.InternalCompilerError)


@pytest.mark.parametrize("make", [
    lambda: float32[::2], lambda: float32[1:], lambda: float32[::1, ::1], lambda: float32[()],
    lambda: Array(int32, -1), lambda: Array(int32, 2, "X"), lambda: Array(void, 1), lambda: void[:],
    lambda: float32(3, float32), lambda: UniTuple(void, 2),
])
def test_bad_type_objects(make):
    with pytest.raises(TypeError):
        make()


@pytest.mark.parametrize("sig", [42, None, b"void(int32)", [float32], (float32, "int32"), float32])
def test_not_a_signature(sig):
    def one(a):
        pass
    with pytest.raises(TypeError):
        gpu.compile_ptx(one, sig)


def test_type_spellings_are_the_parsers():
    """str() of every type object is what the compiler's parser reads, and prints back."""
    objs = [float32, complex64, types.boolean, float32[:], float32[::1], float32[:, ::1], int16[:, :, :],
            Array(uint8, 3, "C"), Array(complex128, 1, "F"), UniTuple(int64, 3), Tuple([int8, float64]),
            Tuple([int32, int32]), Tuple(()), UniTuple(Tuple([int8, float32]), 2)]
    for t in objs:
        ret, _ = _core.parse_signature("%s()" % t)
        assert ret[0] == str(t), t
    assert _core.parse_signature("(UniTuple(i1, 3))")[1][0][0] == str(UniTuple(int8, 3)) == "UniTuple(int8 x 3)"
    sig = void(float32[::1], int64, UniTuple(int8, 2))
    assert str(sig) == "void(float32[::1], int64, UniTuple(int8 x 2))"
    assert _core.parse_signature(str(sig))[1] == [("float32[::1]", "array", "float32", 1, "C"),
                                                  ("int64", "scalar", "int64", 0, ""),
                                                  ("UniTuple(int8 x 2)", "tuple", "", 0, "")]
    assert Tuple([int8, int8]) == UniTuple(int8, 2) and isinstance(Tuple([int8, int8]), UniTuple)
    assert float32[:, ::1] == Array(float32, 2, "C") and float32[:] != float32[::1]
    assert Array(int8, 1, "F") == int8[::1]


def test_type_objects_as_numpy_types(rng):
    assert gpu.float32 is types.float32 and np.dtype(gpu.float32) == np.float32
    x = gpu.float32(1.1)
    assert type(x) is np.float32 and x == np.float32(1.1)
    assert type(gpu.boolean(3)) is np.bool_ and type(gpu.intc(7.9)) is np.int32 and gpu.intc(7.9) == 7
    assert np.zeros(3, gpu.uint16).dtype == np.uint16
    d = gpu.device_array(5, dtype=gpu.complex64)
    assert d.dtype == np.complex64
    a = np.arange(4).astype(gpu.int8)
    assert a.dtype == np.int8


def test_type_objects_in_kernels(rng):
    """As casts and as shared/local dtypes, gpujit's and gpujit.types' objects alike."""
    @gpu.jit
    def k(out, a):
        s = gpu.shared.array(8, gpu.float32)
        loc = gpu.local.array(2, types.int16)
        i = gpu.threadIdx.x
        s[i] = gpu.float32(a[i]) * types.float32(0.5)
        loc[0] = types.int16(a[i])
        loc[1] = gpu.intc(a[i] * 2)
        gpu.syncthreads()
        out[i] = s[7 - i] + loc[0] + loc[1]
    a = random_array(rng, 8, np.float64)
    out = poisoned(8, np.float64)
    k[1, 8](out, a)
    half = a.astype(np.float32) * np.float32(0.5)
    # loc holds int16s, and float32 + int16 stays float32 (numba's promotion)
    want = (half[::-1] + np.trunc(a).astype(np.float32) + np.trunc(a * 2).astype(np.float32)).astype(np.float64)
    np.testing.assert_array_equal(out, want)


def test_device_function_signatures(rng):
    @gpu.jit(int32(int32, int32), device=True)
    def add(a, b):
        return a + b

    @gpu.jit("UniTuple(float64 x 2)(float64)", device=True)
    def twice(x):
        return x, 2 * x

    @gpu.jit((int32[::1], float64[::1], float64[::1]))
    def k(out, x, y):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = add(i, 3)
            p, q = twice(x[i])
            y[i] = p + q
    assert add.signatures == ["int32(int32, int32)"] and twice.signatures == ["UniTuple(float64 x 2)(float64)"]
    x = random_array(rng, 40, np.float64)
    out, y = poisoned(40, np.int32), poisoned(40, np.float64)
    k[2, 32](out, x, y)
    np.testing.assert_array_equal(out, np.arange(40) + 3)
    np.testing.assert_array_equal(y, 3 * x)
    with pytest.raises(TypeError, match="unknown type name"):
        gpu.jit("int32(int33)", device=True)(lambda a: a)


def test_device_function_signatures_refuse_a_complex_for_a_real(rng):
    add = gpu.jit(["(int64, int64)", "(float64, float64)"], device=True)(lambda a, b: a + b)

    @gpu.jit
    def k(r, x, y):
        r[0] = add(x, y)
    r = poisoned(1, np.float64)
    x, y = rng.random(2)
    k[1, 1](r, np.float32(x), np.int32(7))       # converted to (float64, float64)
    assert r[0] == np.float64(np.float32(x)) + 7
    with pytest.raises(gpu.TypingError, match=r"test_signatures.py:\d+: .*Invalid use of type\(CUDADispatcher\(.*"
                                              r"with parameters \(complex128, complex128\): no signature of"):
        k[1, 1](np.zeros(1, np.complex128), 1j * x, 1j * y)


def test_compile_and_inspect_take_any_form():
    def put(out, x):
        out[0] = x
    k = gpu.jit(put)
    for sig in (void(float32[::1], float32), (float32[::1], float32), "void(f4[::1], f4)"):
        kern = k.compile(sig, target="cpu")
        assert kern.args == [(1, 10, 1, "C"), (0, 10, 0, " ")]
        assert ".entry" in k.inspect_ptx(sig)


@pytest.mark.parametrize("sig", ["void(float64[::1, :], float64[::1, :])", void(Array(float64, 2, "F"), Array(float64, 2, "F")),
                                 "void(array(float64, 2d, F), array(float64, 2d, F))",
                                 "void(Array(float64, 2, 'F'), Array(float64, 2, 'F'))"])
def test_f_order_signature(sig, rng):
    """An F-order signature compiles for any strides: F-ordered arrays (numba's case), and others."""
    def twice(out, a):
        i, j = gpu.grid(2)
        if i < out.shape[0] and j < out.shape[1]:
            out[i, j] = 2.0 * a[i, j]
    k = gpu.jit(sig)(twice)
    for order in "FC":
        a = np.asarray(rng.standard_normal((5, 7)), order=order)
        out = np.full((5, 7), np.nan, order=order)
        k[(1, 1), (8, 8)](out, a)
        np.testing.assert_array_equal(out, 2.0 * a)


# -- numba's CPointer: a raw address, indexed unchecked -------------------------------------------
@contextlib.contextmanager
def addresses(*arrays):
    """Addresses a kernel can dereference for NumPy arrays: the arrays' own on the CPU target;
    on a GPU, those of device copies, copied back into the arrays afterwards."""
    if gpu.current_target() != "cuda":
        yield [a.ctypes.data for a in arrays]
        return
    devs = [gpu.to_device(a) for a in arrays]
    yield [d.__cuda_array_interface__["data"][0] for d in devs]
    gpu.synchronize()
    for a, d in zip(arrays, devs):
        a[...] = d.copy_to_host()


def test_pointer_spellings():
    assert str(CPointer(uint8)) == "uint8*" and str(types.voidptr) == "void*"
    assert str(void(CPointer(int32), uint32)) == "void(int32*, uint32)"
    for sig in ("void(int32*, int64)", "void(CPointer(int32), int64)", void(CPointer(int32), int64)):
        ret, args = _core.parse_signature(sig if isinstance(sig, str) else str(sig))
        assert args[0][:3] == ("int32*", "pointer", "int32")
    assert _core.parse_signature("void(void*)")[1][0][:2] == ("void*", "pointer")
    assert _core.parse_signature("int32*()")[0][:2] == ("int32*", "pointer")


@pytest.mark.parametrize("dt", [np.uint8, np.int16, np.int32, np.float16, np.float32, np.float64])
def test_pointer_argument_loads_and_stores(rng, dt):
    """A kernel indexes a pointer argument (given as an integer address) as C does."""
    ptr = CPointer(types.float32 if dt == np.float32 else getattr(types, np.dtype(dt).name))
    @gpu.jit(void(ptr, ptr, uint32))
    def axpy(out, x, n):
        i = gpu.grid(1)
        if i < n:
            out[i] = x[i] + x[n - 1 - i]
    n = 37
    x = random_array(rng, n, dt)
    out = poisoned(n + 3, dt)               # the tail must stay poisoned: nothing past n is written
    want = (x + x[::-1]).astype(dt)
    with addresses(out, x) as (po, px):
        axpy[2, 32](po, px, n)
    np.testing.assert_array_equal(out[:n], want)
    np.testing.assert_array_equal(out[n:], poisoned(3, dt))


def test_pointer_offsets_negative_index_and_device_function(rng):
    """p[-1] is the element before p (C's pointer arithmetic, not Python's wraparound);
    a pointer passes to a device function; the cache-hinted loads and stores take one."""
    @gpu.jit(device=True)
    def bump(p, i, v):
        p[i] = p[i] + v

    @gpu.jit("void(int64*, int64*, int64*, int32)")
    def k(p, s, q, n):
        i = gpu.grid(1)
        if i < n:
            bump(p, i, s[i - 1])
            gpu.stcg(q, i, gpu.ldcg(s, i - 1) * 2)
    base = rng.integers(-1000, 1000, 20).astype(np.int64)
    p = rng.integers(-1000, 1000, 19).astype(np.int64)
    want = p + base[:-1]
    q = poisoned(20, np.int64)
    with addresses(p, base, q) as (pp, pb, pq):
        k[1, 32](pp, pb + base.itemsize, pq, 19)     # base[1:]
    np.testing.assert_array_equal(p, want)
    np.testing.assert_array_equal(q[:19], base[:-1] * 2)
    assert q[19] == poisoned(1, np.int64)[0]
    ptx = gpu.compile_ptx(k.py_func, "void(int64*, int64*, int64*, int32)")[0]
    assert "ld.global.cg.b64" in ptx and "st.global.cg.b64" in ptx


def test_pointer_wrong_arguments():
    @gpu.jit("void(int32*, int32)")
    def k(p, n):
        if n > 0:
            p[0] = n
    x = np.zeros(1, np.int32)
    with addresses(x) as (px,):
        k[1, 1](px, 5)
    assert x[0] == 5
    for bad in (1.5, True, x, None, "x", (1, 2)):
        with pytest.raises(TypeError):
            k[1, 1](bad, 0)


@pytest.mark.parametrize("body,message", [
    ("x = p[1.5]", "a pointer is indexed by one integer, not float64"),
    ("x = p[1, 2]", "a pointer is indexed by one integer"),
    ("x = len(p)", "int32\\*"),
    ("for v in p:\n        pass", "iteration over int32\\*"),
    ("q[0] = 1", "a void pointer cannot be indexed"),
    ("p[0] = 1j", "cannot store complex128 through int32\\*"),
])
def test_pointer_misuse_is_a_typing_error(body, message):
    ns = {}
    exec("def k(p, q):\n    %s\n" % body, ns)
    with pytest.raises(gpu.TypingError, match=message):
        gpu.compile_ptx(ns["k"], "void(int32*, void*)")


def test_pointer_in_an_overload(rng):
    """An @overload's typing function sees a pointer argument as types.CPointer(dtype)."""
    from gpujit.extending import overload

    def put(p, v):
        pass

    seen = []

    @overload(put)
    def put_ptr(p, v):
        if isinstance(p, CPointer):
            seen.append((p, p.dtype))

            def impl(p, v):
                p[0] = v
            return impl

    @gpu.jit("void(float64*, float64)")
    def k(p, v):
        put(p, v)
    x = poisoned(1, np.float64)
    v = rng.uniform(-5, 5)
    with addresses(x) as (px,):
        k[1, 1](px, v)
    assert x[0] == v and seen == [(CPointer(float64), float64)]
