"""gpujit.compile / compile_ptx (numba.cuda.compiler): device functions compiled on their
own, the ABI and output options, return types as gpujit.types objects, launch bounds."""
import math
import re

import pytest

import gpujit as gpu
from gpujit import compiler, float32, float64, int16, int32, int64, uint32, void
from conftest import assemble_ptx


def f_add(x, y):
    return x + y


def test_kernel_ptx_is_an_entry_returning_void():
    def k(r, x, y):
        i = gpu.grid(1)
        if i < len(r):
            r[i] = x[i] + y[i]

    ptx, resty = compiler.compile_ptx(k, (float32[:], float32[:], float32[:]))
    assert ".visible .entry" in ptx and ".visible .func" not in ptx and "func_retval" not in ptx
    assert resty == void


@pytest.mark.parametrize("sig,resty,width", [((float32, float32), float32, "b32"),
                                             (int32(int32, int32), int32, "b32"),
                                             (int16(int16, int16), int16, "b32"),
                                             ("uint32(uint32, uint32)", uint32, "b32"),
                                             (int64(int64, int64), int64, "b64"),
                                             ((float64, float64), float64, "b64")])
def test_device_function_on_its_own(sig, resty, width):
    ptx, rt = compiler.compile_ptx(f_add, sig, device=True)
    assert rt == resty
    assert re.search(r"\.visible\s+\.func\s+\(\.param\s+\.%s\s+func_retval0\)\s+f_add\(" % width, ptx)
    assert ".entry" not in ptx


def test_declared_return_type_converts():
    def half(x):
        return x / 2

    ptx, rt = compiler.compile(half, int32(int32))   # true division gives float64; the signature says int32
    assert rt == int32 and "cvt.rzi.s32.f64" in ptx


def test_return_types_inferred():
    def cmp(a, b):
        return a < b

    def pair(a, b):
        return a, b

    def nothing(a):
        pass

    assert compiler.compile(cmp, (int32, int32))[1] == gpu.boolean
    assert compiler.compile(pair, (int32, float32))[1] == gpu.types.Tuple([int32, float32])
    assert compiler.compile(pair, (int32, int32))[1] == gpu.types.UniTuple(int32, 2)
    ptx, rt = compiler.compile(nothing, (int32,))
    assert rt == void and "func_retval" not in ptx and ".visible .func" in ptx


def test_abi_name_and_lambda():
    ptx, _ = compiler.compile(f_add, int32(int32, int32), abi_info={"abi_name": "_Z4funcii"})
    assert re.search(r"func_retval0\)\s+_Z4funcii\(", ptx)
    ptx, _ = compiler.compile(lambda x: x, int32(int32), abi_info={"abi_name": "blah"})
    assert re.search(r"func_retval0\)\s+blah\(", ptx)


def test_fastmath_device_function():
    def f(x, y, z, d):
        return math.sqrt((x * y + z) / d)

    prec, _ = compiler.compile_ptx(f, (float32,) * 4, device=True)
    fast, _ = compiler.compile_ptx(f, (float32,) * 4, device=True, fastmath=True)
    assert "fma.rn.f32" in prec and "div.rn.f32" in prec and "sqrt.rn.f32" in prec
    assert "fma.rn.ftz.f32" in fast and "div.approx.ftz.f32" in fast and "sqrt.approx.ftz.f32" in fast


def test_device_function_inspect_asm():
    dev = gpu.jit("float32(float32, float32)", device=True, fastmath=True)(f_add)
    assert ".visible .func" in dev.inspect_asm((float32, float32))


def test_errors():
    def k(x, y):
        return x[0] + y[0]

    with pytest.raises(TypeError, match="must have void return type"):
        compiler.compile_ptx(k, (uint32[::1], uint32[::1]))
    with pytest.raises(NotImplementedError, match="The C ABI is not supported for kernels"):
        compiler.compile_ptx(f_add, (int32, int32), abi="c")
    with pytest.raises(NotImplementedError, match="Unsupported ABI: fastcall"):
        compiler.compile_ptx(f_add, (int32, int32), abi="fastcall")
    with pytest.raises(NotImplementedError, match="Unsupported output type: illegal"):
        compiler.compile(f_add, int32(int32, int32), output="illegal")
    with pytest.raises(NotImplementedError, match="LTO-IR"):
        compiler.compile(f_add, int32(int32, int32), output="ltoir")
    with pytest.raises(gpu.TypingError, match="signature says it returns nothing"):
        compiler.compile(f_add, void(int32, int32))


@pytest.mark.parametrize("bounds,lines", [(128, [r"\.maxntid 128, 1, 1"]), ((128,), [r"\.maxntid 128, 1, 1"]),
                                          ((128, 2), [r"\.maxntid 128, 1, 1", r"\.minnctapersm 2"]),
                                          ((128, 2, 4), [r"\.maxntid 128", r"\.minnctapersm 2",
                                                         r"\.maxclusterrank 4"])])
def test_launch_bounds(bounds, lines):
    def k():
        pass

    ptx, rt = gpu.compile_ptx(k, "void()", launch_bounds=bounds)
    for pat in lines:
        assert re.search(pat, ptx)
    if not isinstance(bounds, tuple) or len(bounds) < 3:
        assert ".maxclusterrank" not in ptx
    plain, _ = gpu.compile_ptx(k, "void()")
    assert ".maxntid" not in plain


def test_too_many_launch_bounds():
    with pytest.raises(ValueError, match="Got 4 launch bounds"):
        gpu.compile_ptx(lambda: None, "void()", launch_bounds=(128, 2, 4, 8))


def test_for_current_device_targets_a_cc():
    ptx, _ = gpu.compile_ptx_for_current_device(f_add, (float32, float32), device=True)
    assert re.search(r"\.target sm_\d+", ptx)
    ptx2, _ = gpu.compile_for_current_device(f_add, (float32, float32))
    assert ptx2 == ptx


def test_device_function_compiled_alone_runs_in_a_kernel():
    """The same function, compiled into a kernel, gives the values the PTX above describes."""
    import numpy as np
    dev = gpu.jit(device=True)(f_add)

    @gpu.jit
    def k(r, x, y):
        i = gpu.grid(1)
        if i < r.size:
            r[i] = dev(x[i], y[i])

    rng = np.random.default_rng()
    x, y = rng.random(100).astype(np.float32), rng.random(100).astype(np.float32)
    r = np.full(100, np.nan, np.float32)
    k[1, 128](r, x, y)
    np.testing.assert_array_equal(r, x + y)


def test_forceinline_needs_ltoir():
    with pytest.raises(ValueError, match="Can only designate forced inlining in LTO-IR"):
        compiler.compile(f_add, (int32, int32), forceinline=True)


def test_kernel_calls_a_kernel_as_a_device_function():
    """A @jit kernel called from another kernel is compiled into it, as a device function."""
    import numpy as np

    @gpu.jit(forceinline=True)
    def set_to(a, i, v):
        a[i] = v

    @gpu.jit
    def k(a, v):
        i = gpu.grid(1)
        if i < a.size:
            set_to(a, i, v[i] * 2)

    v = np.random.default_rng().random(50)
    a = np.full(50, np.nan)
    k[1, 64](a, v)
    np.testing.assert_array_equal(a, v * 2)


def test_specialize():
    import numpy as np

    @gpu.jit
    def k(a, b):
        i = gpu.grid(1)
        if i < a.size:
            a[i] = b[i] + 1

    b = np.random.default_rng().integers(0, 100, 20).astype(np.int32)
    a = np.full(20, -1, np.int32)
    s = k.specialize(a, b)
    assert s.signatures == ["void(int32[::1], int32[::1])"]
    s[1, 32](a, b)
    np.testing.assert_array_equal(a, b + 1)
    with pytest.raises(RuntimeError, match="already specialized"):
        s.specialize(a, b)


def test_declare_device_declares():
    ext = gpu.declare_device("times2", "int32(int32)", link=gpu.CUSource("extern \"C\" __device__ int times2(int x);"))
    assert ext.name == "times2" and ext.sig.return_type == int32 and ext.sig.args == (int32,)
    assert gpu.declare_device("f1", int32(float32[:])).sig.args == (float32[:],)
    with pytest.raises(TypeError, match="Return type"):
        gpu.declare_device("f1", "(float32[:],)")
    with pytest.raises(TypeError, match="link="):
        gpu.declare_device("f1", "int32(int32)", link=[3])

    def k(r, x):
        i = gpu.grid(1)
        if i < len(r):
            r[i] = ext(x[i])

    # the cuda target calls it (linked when the kernel loads: tests/test_linking.py)
    assert ".extern .func  (.param .b32 func_retval0) times2" in gpu.compile_ptx(k, "void(int32[::1], int32[::1])")[0]


def test_device_function_is_not_a_kernel():
    dev = gpu.jit(device=True)(f_add)
    with pytest.raises(RuntimeError, match="Cannot compile a device function as a kernel"):
        dev[1, 1](1, 2)
    with pytest.raises(RuntimeError, match="Cannot inspect SASS of a device function"):
        dev.inspect_sass((int32, int32))


def runaway(x):
    return runaway(x)


def test_runaway_recursion_is_named():
    def k(r):
        r[0] = runaway(1)

    with pytest.raises(gpu.TypingError, match=r"cannot type infer runaway recursion: no return of runaway\(\)"):
        gpu.compile_ptx(k, "void(int64[::1])")
    with pytest.raises(gpu.TypingError, match="cannot type infer runaway recursion"):
        compiler.compile(runaway, (int64,))


def nest(n):
    if n <= 0:
        return None
    return (n, nest(n - 1))


def pick(n):
    if n > 0:
        return (n, None)
    return None


def test_nonconverging_recursion_is_named():
    def k(r):
        nest(r[0])

    with pytest.raises(gpu.TypingError, match=r"test_compiler_api.py:\d+: Return type of recursive function does not "
                                              r"converge: nest returns Tuple\(int64, none\) here but none elsewhere"):
        gpu.compile_ptx(k, "void(int64[::1])")

    def k2(r):
        pick(r[0])

    # the same conflict without recursion says only what conflicts
    with pytest.raises(gpu.TypingError) as ei:
        gpu.compile_ptx(k2, "void(int64[::1])")
    assert "pick returns" in str(ei.value) and "recursive" not in str(ei.value)


def test_fastmath_tanhf_is_the_approximate_instruction():
    def k(r, x):
        r[0] = math.tanh(x)

    sig = (float32[::1], float32)
    assert "tanh.approx.f32 " in compiler.compile_ptx(k, sig, fastmath=True)[0]
    assert "tanh.approx.f32 " not in compiler.compile_ptx(k, sig)[0]
    assert "tanh.approx.f32 " not in compiler.compile_ptx(k, sig, fastmath=True, cc=(7, 0))[0]  # sm_75 has it


def test_fastmath_tanhf_runs():
    import numpy as np

    @gpu.jit(fastmath=True)
    def k(r, x):
        i = gpu.grid(1)
        if i < r.size:
            r[i] = math.tanh(x[i])

    x = np.random.default_rng().standard_normal(200).astype(np.float32) * 3
    r = np.full_like(x, np.nan)
    k[2, 128](r, x)
    np.testing.assert_allclose(r, np.tanh(x), atol=2e-3)   # tanh.approx: about 2**-11 relative


def test_fastmath_float_division_by_zero_does_not_raise():
    import numpy as np

    def f(r, x, y):
        r[0] = x / y

    sig = (float32[::1], float32, float32)
    fast = gpu.jit(sig, fastmath=True, debug=True)(f)
    prec = gpu.jit(sig, debug=True)(f)
    r = np.zeros(1, np.float32)
    with pytest.raises(ZeroDivisionError):
        prec[1, 1](r, 10.0, 0.0)
    fast[1, 1](r, 10.0, 0.0)
    assert r[0] == np.inf


def test_device_function_signature_converts_arguments():
    """A device function declared with a signature gets its arguments and result converted to
    the signature's types at each call, as numba converts them."""
    import numpy as np

    @gpu.jit("int32(int32, int32, int32, int32)", device=True)
    def rgba(r, g, b, a):
        return ((r & 0xFF) << 16) | ((g & 0xFF) << 8) | (b & 0xFF) | ((a & 0xFF) << 24)

    @gpu.jit(["float32(float32)", "int64(int64)"], device=True)
    def twice(x):
        return x * 2

    @gpu.jit
    def k(out, ch, f):
        out[0] = rgba(ch[0], ch[1], ch[2], ch[3])
        out[1] = twice(f[0]) * 1000000          # float32 signature: float32 arithmetic
        out[2] = twice(7)                       # int64 signature, exact

    rng = np.random.default_rng()
    ch = rng.integers(0, 255, 4).astype(np.float32)
    f = np.array([rng.random() + 0.1], np.float64)
    out = np.zeros(3, np.int64)
    k[1, 1](out, ch, f)
    c = ch.astype(np.int64)
    assert out[0] == np.int32((c[0] << 16) | (c[1] << 8) | c[2] | (c[3] << 24))
    assert out[1] == np.int64(np.float64(np.float32(f[0]) * np.float32(2)) * 1000000)
    assert out[2] == 14
    assert rgba(1, 2, 3, 4) == 0x04010203          # Python calls are plain Python


def test_cc_none_is_the_default():
    ptx, _ = gpu.compile_ptx(f_add, (float32, float32), device=True, cc=None)
    assert ".target sm_90" in ptx


@gpu.jit("int64(int64)", device=True)
def fib_declared(n):
    if n < 2:
        return n
    return fib_declared(n - 1) + fib_declared(n - 2)


def test_recursive_device_function_with_a_signature():
    import numpy as np

    @gpu.jit
    def k(out, n):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = fib_declared(n[i])

    n = np.random.default_rng().integers(0, 15, 20)
    out = np.full(20, -1, np.int64)
    k[1, 32](out, n)
    fib = [0, 1]
    while len(fib) < 16:
        fib.append(fib[-1] + fib[-2])
    np.testing.assert_array_equal(out, np.array(fib)[n])


def test_debug_gives_dwarf_and_lineinfo_gives_lines():
    def nothing():
        pass

    @gpu.jit(device=True)
    def checked(x):
        if x < 0:
            raise ValueError("negative")
        return x / 2

    def k(r, x):
        i = gpu.grid(1)
        if i < len(r):
            r[i] = checked(x[i]) + 1

    ptxs = []
    for f, sig, device in ((nothing, (), False), (nothing, (), True), (k, "void(float64[:], float64[:])", False)):
        dbg, _ = compiler.compile_ptx(f, sig, device=device, debug=True, opt=False)
        assert re.search(r"\.section\s+\.debug_info", dbg) and ".target sm_90, debug" in dbg
        assert re.search(r'\.file.*test_compiler_api\.py"', dbg)
        lines, _ = compiler.compile_ptx(f, sig, device=device, lineinfo=True)
        assert re.search(r'\.file.*test_compiler_api\.py"', lines)
        assert ".debug_info" not in lines and ".target sm_90\n" in lines
        plain, _ = compiler.compile_ptx(f, sig, device=device)
        assert ".file" not in plain and ".loc" not in plain
        ptxs += [("%s debug" % f.__name__, dbg), ("%s lineinfo" % f.__name__, lines)]
    assemble_ptx(ptxs)


def test_compile_device_and_inspection_by_signature_keyword():
    @gpu.jit(device=True)
    def scaled(x, y):
        return x * 3 + y

    res = scaled.compile_device((int32, int32))
    assert res.signature.return_type == int64 and res.signature.args == (int32, int32)
    assert res.fndesc.mangled_name == "scaled" and scaled.compile_device((int32, int32)) is res
    assert re.search(r"\.visible\s+\.func\s+\(\.param\s+\.b64\s+func_retval0\)\s+scaled\(", res.ptx)
    assert "@scaled(" in scaled.inspect_llvm((int32, int32))
    conv = scaled.compile_device((int32, int32), float64)
    assert conv.signature.return_type == float64 and ".f64" in conv.ptx
    assemble_ptx([("scaled", res.ptx), ("scaled f64", conv.ptx)])

    @gpu.jit
    def k(a):
        a[0] = 7

    sig = "void(int32[::1])"
    assert k.inspect_asm(signature=sig) == k.inspect_ptx(sig) and ".visible .entry" in k.inspect_asm(signature=sig)
    assert "define" in k.inspect_llvm(signature=sig)
