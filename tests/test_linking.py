"""Calls of declared external functions (declare_device) and jit(link=...): the PTX a call
compiles to under numba's ABI and the C ABI (assembled, and linked with CUDA C by the
toolkit's nvlink where nvcc is installed: the declaration and the definition must
agree), the cpu target's refusal, the link items a kernel carries to the loader, and
their checks. Launches that link run where a GPU is the target (the `cuda` tests)."""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import gpujit as gpu
from gpujit import _core, linking
from gpujit.cudadrv import nvrtc

NVCC, NVLINK, PTXAS = shutil.which("nvcc"), shutil.which("nvlink"), shutil.which("ptxas")
on_gpu = gpu.current_target() == "cuda"
cuda_only = pytest.mark.skipif(not on_gpu, reason="links and launches on a GPU")


def _have_nvrtc():
    try:
        nvrtc._nvrtc()
        return True
    except nvrtc.NvrtcError:
        return False


# CUDA C defining the functions below, under the ABI each is declared with
TIMES_CU = r'''
extern "C" __device__ int times2(int *out, int a) { *out = 2 * a; return 0; }
extern "C" __device__ int add3(long long *out, long long a, double b, bool c) { *out = a + (long long)b + c; return 0; }
extern "C" __device__ float scale_c(float x, int k) { return x * k; }
extern "C" __device__ void touch_c(double x) { asm volatile("" : : "d"(x) : "memory"); }
extern "C" __device__ int const7_c() { return 7; }
'''

# The same as hand-written PTX (no NVRTC needed to link it on a GPU)
TIMES_PTX = r'''
.version 7.8
.target sm_90
.address_size 64
.visible .func (.param .b32 func_retval0) times2(.param .b64 times2_param_0, .param .b32 times2_param_1)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [times2_param_0];
    ld.param.u32 %r1, [times2_param_1];
    shl.b32 %r2, %r1, 1;
    st.u32 [%rd1], %r2;
    mov.u32 %r3, 0;
    st.param.b32 [func_retval0+0], %r3;
    ret;
}
.visible .func (.param .b32 func_retval0) const7_c()
{
    .reg .b32 %r<2>;
    mov.u32 %r1, 7;
    st.param.b32 [func_retval0+0], %r1;
    ret;
}
'''

times2 = gpu.declare_device("times2", "int32(int32)", link=gpu.PTXSource(TIMES_PTX, name="times"))
const7 = gpu.declare_device("const7_c", "int32()", link=gpu.PTXSource(TIMES_PTX, name="times"), abi="c")
add3 = gpu.declare_device("add3", "int64(int64, float64, boolean)")
scale = gpu.declare_device("scale_c", "float32(float32, int32)", abi="c")
touch = gpu.declare_device("touch_c", "void(float64)", abi="c")


@gpu.jit(device=True)
def twice_via(x):
    return times2(x)


def k_numba_abi(r, x):
    i = gpu.grid(1)
    if i < r.size:
        r[i] = twice_via(x[i]) + times2(i) + const7()


def k_all(r, x, f):
    i = gpu.grid(1)
    if i < r.size:
        r[i] = add3(x[i], 1.5, i % 2 == 0) + times2(x[i]) + const7()
        f[i] = scale(f[i], i)
        touch(f[i])


def _ptx(fn, sig):
    return gpu.compile_ptx(fn, sig)[0]


def test_calls_are_external_functions_of_the_declared_abi():
    ptx = _ptx(k_all, "void(int64[::1], int64[::1], float32[::1])")
    decls = {m.group(2): (m.group(1), re.findall(r"\.param \.(b\d+)", m.group(3)))
             for m in re.finditer(r"\.extern \.func\s+(\(\.param \.b\d+ func_retval0\))?\s*(\w+)\s*\(([^)]*)\)", ptx)}
    # numba's ABI: a status, a pointer to the result, then the arguments (a bool as a byte)
    assert decls["add3"] == ("(.param .b32 func_retval0)", ["b64", "b64", "b64", "b32"])
    assert decls["times2"] == ("(.param .b32 func_retval0)", ["b64", "b32"])
    # the C ABI: the result itself
    assert decls["scale_c"] == ("(.param .b32 func_retval0)", ["b32", "b32"])
    assert decls["touch_c"] == (None, ["b64"])
    assert decls["const7_c"] == ("(.param .b32 func_retval0)", [])


@pytest.mark.skipif(not (NVCC and NVLINK and PTXAS), reason="needs the CUDA toolkit's nvcc, ptxas and nvlink")
def test_declarations_link_with_cuda_c(tmp_path):
    """What the driver's linker does at load time, done by the toolkit: the kernel's calls
    resolve against the CUDA C definitions (a mismatch of ABI fails here)."""
    (tmp_path / "k.ptx").write_text(_ptx(k_all, "void(int64[::1], int64[::1], float32[::1])"))
    # times2 and const7_c come from the PTX
    (tmp_path / "defs.cu").write_text(TIMES_CU.replace("int times2", "int unused_times2")
                                      .replace("int const7_c", "int unused_const7"))
    (tmp_path / "times.ptx").write_text(TIMES_PTX)
    # the toolkit's programs without the sanitizer runtime a sanitized test run preloads
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")}
    run = dict(cwd=tmp_path, check=True, capture_output=True, env=env)
    subprocess.run([NVCC, "-arch=sm_90", "-rdc=true", "-ptx", "defs.cu", "-o", "defs.ptx"], **run)
    for name in ("k", "defs", "times"):
        subprocess.run([PTXAS, "-arch=sm_90", "-c", name + ".ptx", "-o", name + ".o"], **run)
    subprocess.run([NVLINK, "-arch=sm_90", "k.o", "defs.o", "times.o", "-o", "linked.cubin"], **run)
    assert (tmp_path / "linked.cubin").stat().st_size > 0
    # without the definitions the symbols stay unresolved
    r = subprocess.run([NVLINK, "-arch=sm_90", "k.o", "-o", "alone.cubin"], cwd=tmp_path, capture_output=True, env=env)
    assert r.returncode != 0


def test_kernel_lists_the_declarations_it_calls():
    k = gpu.jit(k_numba_abi)
    ck = k.compile("void(int32[::1], int32[::1])", "cuda", (9, 0))
    assert set(ck.externs) == {times2, const7}     # through the device function too, each once
    # their link files, each once, NUL-terminated PTX, ready for the driver's linker
    assert ck.link == (("ptx", "times", TIMES_PTX.encode() + b"\0"),)


@pytest.mark.skipif(on_gpu, reason="checks the cpu target's refusal")
def test_cpu_target_refuses_a_call():
    k = gpu.jit(k_numba_abi)
    with pytest.raises(gpu.UnsupportedError, match=r"test_linking.py:\d+: times2\(\) is an external function "
                                                   r"\(declare_device\) .* cpu target cannot run"):
        k[1, 4](np.zeros(4, np.int32), np.zeros(4, np.int32))


def test_bad_calls_are_typing_errors():
    def arity(r):
        r[0] = times2(1, 2)

    def array_arg(r):
        r[0] = times2(r)

    arr = gpu.declare_device("takes_array", "int32(float32[:])")

    def arr_decl(r):
        r[0] = arr(r)

    with pytest.raises(gpu.TypingError, match=r"times2\(\) takes 1 argument \(2 given\)"):
        _ptx(arity, "void(int32[::1])")
    with pytest.raises(gpu.TypingError, match=r"times2\(\) argument 1: cannot pass int32\[::1\] as int32"):
        _ptx(array_arg, "void(int32[::1])")
    with pytest.raises(gpu.UnsupportedError, match=r"takes_array: argument type float32\[:\] is not supported"):
        _ptx(arr_decl, "void(float32[::1])")


def test_link_option_checks():
    with pytest.raises(RuntimeError, match="Cannot pickle CUDACodeLibrary with linking files"):
        @gpu.jit("void()", cache=True, link=[gpu.PTXSource(TIMES_PTX)])
        def f():
            pass
    with pytest.raises(TypeError, match="link= takes"):
        gpu.jit(link=[3])(k_numba_abi)
    extra = gpu.PTXSource(TIMES_PTX.replace("times2", "times2_x").replace("const7_c", "const7_x"), name="extra")
    k = gpu.jit(link=[extra, gpu.PTXSource(TIMES_PTX, name="same")])(k_numba_abi)
    ck = k.compile("void(int32[::1], int32[::1])", "cuda", (9, 0))
    # the kernel's own first; code given twice (here by the kernel and its declarations) once
    assert [item[1] for item in ck.link] == ["extra", "same"]


def test_link_items(tmp_path):
    path = tmp_path / "lib.ptx"
    path.write_text(TIMES_PTX)
    cubin = linking.Cubin(b"\x7fELF-cubin")
    items = linking.link_items([str(path), path, cubin, cubin, linking.Archive(b"!<arch>\n")], (9, 0))
    assert items == (("ptx", "lib", TIMES_PTX.encode() + b"\0"), ("cubin", "<unnamed-cubin>", b"\x7fELF-cubin"),
                     ("a", "<unnamed-archive>", b"!<arch>\n"))
    with pytest.raises(NotImplementedError, match="LTO-IR .*nvJitLink"):
        linking.link_items([linking.LTOIR(b"x")], (9, 0))
    if not _have_nvrtc():
        with pytest.raises(nvrtc.NvrtcError, match="not found"):
            linking.link_items([gpu.CUSource(TIMES_CU)], (9, 0))
    else:
        (kind, _, ptx), = linking.link_items([gpu.CUSource(TIMES_CU)], (9, 0))
        assert kind == "ptx" and b".visible .func" in ptx and ptx.endswith(b"\0")


def test_link_setter_checks_its_items():
    ck = gpu.jit(k_numba_abi).compile("void(int32[::1], int32[::1])", "cuda", (9, 0))
    with pytest.raises(TypeError, match=r"\(kind, name, bytes\)"):
        ck.link = [("ptx", "x", b"")]
    with pytest.raises(TypeError, match=r"\(kind, name, bytes\)"):
        ck.link = (("ptx", "x", "text"),)
    with pytest.raises(ValueError, match="unknown kind 'ltoir'"):
        ck.link = (("ltoir", "x", b""),)
    ck.link = ()
    assert ck.link == ()


def test_kernels_calling_declarations_are_not_cached():
    ck = gpu.jit(k_numba_abi).compile("void(int32[::1], int32[::1])", "cuda", (9, 0))
    with pytest.raises(ValueError, match="external functions"):
        _core.kernel_state(ck)


# ---- on a GPU: linked when the kernel loads ----

@cuda_only
def test_launch_links_ptx(rng):
    x = rng.integers(-1000, 1000, 64).astype(np.int32)
    r = np.full(64, -1, np.int32)
    gpu.jit(k_numba_abi)[2, 32](r, x)
    np.testing.assert_array_equal(r, 2 * x + 2 * np.arange(64) + 7)


@cuda_only
@pytest.mark.skipif(not _have_nvrtc(), reason="CUDA C is compiled by NVRTC")
def test_launch_links_cuda_c(rng):
    src = gpu.CUSource(TIMES_CU.replace("int times2", "int times2_cu"))
    t2 = gpu.declare_device("times2_cu", "int32(int32)", link=src)
    a3 = gpu.declare_device("add3", "int64(int64, float64, boolean)", link=src)
    sc = gpu.declare_device("scale_c", "float32(float32, int32)", link=src, abi="c")
    tc = gpu.declare_device("touch_c", "void(float64)", link=src, abi="c")

    @gpu.jit
    def k(r, x, f):
        i = gpu.grid(1)
        if i < r.size:
            r[i] = a3(x[i], 1.5, i % 2 == 0) + t2(x[i])
            f[i] = sc(f[i], i)
            tc(f[i])

    x = rng.integers(-1000, 1000, 40)
    f = rng.standard_normal(40).astype(np.float32)
    r = np.full(40, -1, np.int64)
    f_in = f.copy()
    k[1, 64](r, x, f)
    i = np.arange(40)
    np.testing.assert_array_equal(r, x + 1 + (i % 2 == 0) + 2 * x)
    np.testing.assert_array_equal(f, f_in * i.astype(np.float32))


@cuda_only
def test_unresolved_symbol_is_a_cuda_error():
    missing = gpu.declare_device("not_defined_anywhere", "int32(int32)")

    @gpu.jit
    def k(r):
        r[0] = missing(1)

    with pytest.raises(gpu.CudaError, match="not_defined_anywhere"):
        k[1, 1](np.zeros(1, np.int32))
