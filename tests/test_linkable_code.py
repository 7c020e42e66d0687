"""compile_all, LinkableCode (its kinds, from_path, from_path_or_obj), the NVRTC module
when NVRTC is absent, and numba's @intrinsic, which gpujit refuses."""
import io
import os

import pytest

import gpujit as gpu
from gpujit import float32, int32, linking, void
from gpujit.cudadrv import nvrtc
from gpujit.extending import intrinsic
from conftest import assemble_ptx


def add(x, y):
    return x + y


def test_compile_all_is_the_functions_code_and_its_type():
    codes, resty = gpu.compile_all(add, int32(int32, int32), output="ptx")
    assert resty == int32 and len(codes) == 1
    assert codes[0] == gpu.compile(add, int32(int32, int32))[0]
    assert ".visible .func  (.param .b32 func_retval0) add(" in codes[0]

    def k(r, x):
        i = gpu.grid(1)
        if i < len(r):
            r[i] = x[i] * 2

    kcodes, kres = gpu.compile_all(k, (float32[:], float32[:]), device=False, abi="numba", output="ptx")
    assert kres == void and ".visible .entry" in kcodes[0] and "func_retval" not in kcodes[0]
    assemble_ptx([("add", codes[0]), ("k", kcodes[0])])


def test_compile_all_errors_are_compiles():
    with pytest.raises(NotImplementedError, match="Unsupported output type: illegal"):
        gpu.compile_all(add, int32(int32, int32), output="illegal")
    with pytest.raises(NotImplementedError, match="ltoir"):
        gpu.compile_all(add, int32(int32, int32))   # numba's default output
    with pytest.raises(NotImplementedError, match="The C ABI is not supported for kernels"):
        gpu.compile_all(add, (int32, int32), abi="c", device=False, output="ptx")
    with pytest.raises(TypeError, match="must have void return type"):
        gpu.compile_all(add, (int32, int32), abi="numba", device=False, output="ptx")


KINDS = [(".cu", "cu", linking.CUSource, str), (".ptx", "ptx", linking.PTXSource, str),
         (".fatbin", "fatbin", linking.Fatbin, bytes), (".cubin", "cubin", linking.Cubin, bytes),
         (".a", "a", linking.Archive, bytes), (".o", "o", linking.Object, bytes),
         (".ltoir", "ltoir", linking.LTOIR, bytes)]


@pytest.mark.parametrize("ext,kind,cls,datatype", KINDS)
def test_from_path(tmp_path, ext, kind, cls, datatype):
    payload = os.urandom(16).hex()
    path = tmp_path / ("lib" + ext)
    path.write_text(payload)
    obj = gpu.LinkableCode.from_path(str(path))
    assert type(obj) is cls and obj.kind == kind and obj.name == "lib"
    assert isinstance(obj.data, datatype) and obj.data == (payload if datatype is str else payload.encode())
    assert gpu.LinkableCode.from_path_or_obj(path).data == obj.data   # os.PathLike too
    assert gpu.LinkableCode.from_path_or_obj(obj) is obj


def test_from_path_unknown_extension(tmp_path):
    path = tmp_path / "lib.txt"
    path.write_text("x")
    with pytest.raises(ValueError, match="Unknown extension: .txt"):
        gpu.LinkableCode.from_path(str(path))


def test_linkable_code_in_memory():
    text = os.urandom(8).hex()
    src = gpu.CUSource(io.StringIO(text))
    assert src.data == text and src.name == "<unnamed-cu>" and src.kind == "cu"
    assert gpu.PTXSource(b"x", name="mine").name == "mine"
    assert isinstance(gpu.PTXSource("x"), gpu.LinkableCode)
    with pytest.raises(TypeError, match="setup_callback must be callable"):
        gpu.CUSource("x", setup_callback=3)
    with pytest.raises(TypeError, match="str, bytes"):
        gpu.CUSource(3)
    # any kind is accepted as a declared function's link=
    ext = gpu.declare_device("f", "int32(int32)", link=[linking.Cubin(b"\x7fELF")])
    assert ext.link[0].kind == "cubin"


def test_nvrtc_absent_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(nvrtc, "_lib", None)
    monkeypatch.setenv("GPUJIT_NVRTC_PATH", str(tmp_path / "libnvrtc.so.0"))
    for call in (nvrtc.get_supported_ccs, nvrtc._get_nvrtc_version, lambda: nvrtc.find_closest_arch((9, 0)),
                 lambda: nvrtc.compile("__device__ int f(int x) { return x; }", "f.cu", (9, 0))):
        with pytest.raises(nvrtc.NvrtcError, match="NVRTC .* was not found.*GPUJIT_NVRTC_PATH"):
            call()
    assert gpu.cudadrv.nvrtc is nvrtc


def test_find_closest_arch(monkeypatch):
    monkeypatch.setattr(nvrtc, "get_supported_ccs", lambda: [(7, 5), (8, 0), (8, 6), (9, 0), (12, 0)])
    assert nvrtc.find_closest_arch((9, 0)) == (9, 0)
    assert nvrtc.find_closest_arch((8, 9)) == (8, 6)
    assert nvrtc.find_closest_arch((13, 0)) == (12, 0)
    with pytest.raises(nvrtc.CCSupportError, match="7.0 is not supported"):
        nvrtc.find_closest_arch((7, 0))
    assert nvrtc._arch((9, 0, "a")) == "sm_90a" and nvrtc._arch((10, 3)) == "sm_90"
    with pytest.raises(ValueError, match="suffix"):
        nvrtc._arch((9, 0, "x"))


def test_intrinsic_is_refused():
    @intrinsic
    def twice(typingctx, x):
        pass

    @intrinsic(prefer_literal=True)
    def thrice(typingctx, x):
        pass

    def k(r):
        r[0] = twice(r[0])   # <- refused here

    with pytest.raises(gpu.UnsupportedError, match=r"twice\(\) is a numba @intrinsic.*llvmlite"):
        gpu.compile_ptx(k, "void(int32[::1])")
    with pytest.raises(TypeError, match="intrinsic"):
        thrice(1)


def test_every_kind_is_a_top_level_name():
    for name in ("LinkableCode", "CUSource", "PTXSource", "Fatbin", "Cubin", "Archive", "Object", "LTOIR"):
        cls = getattr(gpu, name)
        assert cls is getattr(gpu.linking, name)
        assert name == "LinkableCode" or issubclass(cls, gpu.LinkableCode)
