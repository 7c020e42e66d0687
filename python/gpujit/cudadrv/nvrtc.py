"""NVRTC, CUDA's run-time C++ compiler, as numba.cuda.cudadrv.nvrtc: compile() builds CUDA
C++ source (a CUSource a kernel links) into PTX; get_supported_ccs() and
find_closest_arch() answer which compute capabilities it compiles for.

gpujit compiles Python with LLVM and needs no CUDA toolkit, so libnvrtc is loaded with
ctypes on first use, never at import: from GPUJIT_NVRTC_PATH if set, else the system's
library search path, else the CUDA toolkit's lib64 ($CUDA_HOME, /usr/local/cuda). Without
it every function here raises NvrtcError saying so."""
import ctypes
import ctypes.util
import glob
import os
import threading
import warnings

__all__ = ["NvrtcError", "CCSupportError", "compile", "find_closest_arch", "get_supported_ccs",
           "get_lowest_supported_cc"]


class NvrtcError(RuntimeError):
    """NVRTC is missing, or a call into it failed (the message has NVRTC's own)."""


class CCSupportError(RuntimeError):
    """A compute capability below every one NVRTC compiles for."""


_lock = threading.Lock()
_lib = None


def _candidates():
    env = os.environ.get("GPUJIT_NVRTC_PATH")
    if env:
        yield env
        return
    found = ctypes.util.find_library("nvrtc")
    if found:
        yield found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            yield from sorted(glob.glob(os.path.join(home, "lib64", "libnvrtc.so*")), reverse=True)
    try:  # NVIDIA's wheels (nvidia-cuda-nvrtc), where cuda-pathfinder is installed to find them
        from cuda.pathfinder import load_nvidia_dynamic_lib
        yield load_nvidia_dynamic_lib("nvrtc").abs_path
    except Exception:
        pass


def _nvrtc():
    global _lib
    with _lock:
        if _lib is None:
            tried = []
            for path in _candidates():
                try:
                    lib = ctypes.CDLL(path)
                except OSError as e:
                    tried.append("%s (%s)" % (path, e))
                    continue
                lib.nvrtcGetErrorString.restype = ctypes.c_char_p
                _lib = lib
                break
            else:
                raise NvrtcError("NVRTC (libnvrtc.so, CUDA's run-time C++ compiler) was not found%s; it is "
                                 "needed to compile CUDA C++ and comes with the CUDA toolkit (set "
                                 "GPUJIT_NVRTC_PATH to the library's path)"
                                 % (": tried " + "; ".join(tried) if tried else ""))
        return _lib


def _check(lib, rc, what):
    if rc != 0:
        raise NvrtcError("%s failed: %s" % (what, lib.nvrtcGetErrorString(rc).decode()))


def _get_nvrtc_version():
    """NVRTC's version as (major, minor)."""
    lib = _nvrtc()
    major, minor = ctypes.c_int(), ctypes.c_int()
    _check(lib, lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
    return (major.value, minor.value)


def get_supported_ccs():
    """The compute capabilities NVRTC compiles for, ascending, as (major, minor) pairs."""
    lib = _nvrtc()
    n = ctypes.c_int()
    _check(lib, lib.nvrtcGetNumSupportedArchs(ctypes.byref(n)), "nvrtcGetNumSupportedArchs")
    archs = (ctypes.c_int * n.value)()
    _check(lib, lib.nvrtcGetSupportedArchs(archs), "nvrtcGetSupportedArchs")
    return [(a // 10, a % 10) for a in archs]


def get_lowest_supported_cc():
    return min(get_supported_ccs())


def find_closest_arch(cc):
    """The highest compute capability NVRTC supports that is not above `cc` (a (major,
    minor) pair); CCSupportError if `cc` is below all of them."""
    cc = tuple(cc[:2])
    supported = get_supported_ccs()
    below = [s for s in supported if s <= cc]
    if not below:
        raise CCSupportError("GPU compute capability %d.%d is not supported (requires >=%d.%d)"
                             % (cc + supported[0]))
    return max(below)


def _arch(cc):
    """sm_XY[a|f] for `cc`, (major, minor) or (major, minor, 'a'|'f'), lowered to the
    closest compute capability NVRTC supports."""
    suffix = cc[2] if len(cc) == 3 else ""
    if suffix not in ("", "a", "f"):
        raise ValueError("Invalid architecture suffix %r in compute capability %r: expected '', 'a' or 'f'"
                         % (suffix, cc))
    major, minor = find_closest_arch(cc[:2])
    return "sm_%d%d%s" % (major, minor, suffix)


def compile(src, name, cc, ltoir=False, lineinfo=False, debug=False):
    """Compile CUDA C++ `src` (str or bytes; `name` is its file name in messages) for
    compute capability `cc` into PTX (str), or LTO-IR (bytes) with ltoir=True, as
    relocatable device code. Returns (code, log): log is NVRTC's messages ('' if none,
    also given as a warning). A compile error raises NvrtcError with the log."""
    lib = _nvrtc()
    if isinstance(src, str):
        src = src.encode()
    opts = ["--gpu-architecture=" + _arch(tuple(cc)), "--relocatable-device-code=true"]
    if ltoir:
        opts.append("-dlto")
    if lineinfo:
        opts.append("--generate-line-info")
    if debug:
        opts.append("--device-debug")
    home = os.path.dirname(os.path.dirname(getattr(lib, "_name", "") or "")) or "/usr/local/cuda"
    include = os.path.join(home, "include")
    if os.path.isdir(include):
        opts.append("-I" + include)
    prog = ctypes.c_void_p()
    _check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), ctypes.c_char_p(bytes(src)),
                                       ctypes.c_char_p(str(name).encode()), 0, None, None), "nvrtcCreateProgram")
    try:
        argv = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
        rc = lib.nvrtcCompileProgram(prog, len(opts), argv)
        size = ctypes.c_size_t()
        _check(lib, lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size)), "nvrtcGetProgramLogSize")
        buf = ctypes.create_string_buffer(size.value)
        _check(lib, lib.nvrtcGetProgramLog(prog, buf), "nvrtcGetProgramLog")
        log = buf.value.decode(errors="replace").strip()
        if rc != 0:
            raise NvrtcError("NVRTC could not compile %s: %s\n%s" % (name, lib.nvrtcGetErrorString(rc).decode(), log))
        getsize, get = (("nvrtcGetLTOIRSize", "nvrtcGetLTOIR") if ltoir else ("nvrtcGetPTXSize", "nvrtcGetPTX"))
        _check(lib, getattr(lib, getsize)(prog, ctypes.byref(size)), getsize)
        out = ctypes.create_string_buffer(size.value)
        _check(lib, getattr(lib, get)(prog, out), get)
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
    if log:
        warnings.warn("NVRTC log messages: %s" % log)
    code = out.raw[:size.value] if ltoir else out.value.decode()
    return code, log
