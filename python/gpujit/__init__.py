"""gpujit: numba.cuda-style Python kernels, compiled by a C JIT to PTX (for
CUDA GPUs) or to host code (the CPU backend, used where there is no GPU).

    import gpujit as gpu

    @gpu.jit
    def saxpy(out, a, x, y):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    saxpy[blocks, threads](out, 2.0, x, y)
"""
from . import _pyversion  # first: raises ImportError on a Python whose bytecode gpujit cannot read
import inspect as _inspect
import sys as _sys
from . import _core
from .errors import (CompileError, TypingError, UnsupportedError, InternalCompilerError, CudaError,
                     LaunchError, RaceError, CudaDriverError, PerformanceWarning)
from .intrinsics import (threadIdx, blockIdx, blockDim, gridDim, laneid, warpsize, grid, gridsize,
                         syncthreads, shared, local, atomic, const, syncthreads_count, syncthreads_and,
                         syncthreads_or, syncwarp, threadfence, threadfence_block, threadfence_system,
                         shfl_sync, shfl_up_sync, shfl_down_sync, shfl_xor_sync, all_sync, any_sync, eq_sync,
                         ballot_sync, match_any_sync, match_all_sync, activemask, lanemask_lt, fma, cbrt,
                         popc, clz, ffs, brev, selp, fp16, cg)
from .intrinsics import ldca, ldcg, ldcs, ldlu, ldcv, stcg, stcs, stwb, stwt  # cache hints
from .intrinsics import nanosleep
from .intrinsics import wmma, cp_async, mbarrier  # tensor cores, asynchronous copies and their barriers
from . import intrinsics as _intrinsics
from . import types
from . import bf16  # noqa: E402  (numba.cuda.bf16)
from . import fp8  # noqa: E402  (numba.cuda.fp8)
from .dispatcher import Dispatcher, DeviceFunction
from .typing import signature_list as _signature_list

_core.register_paths(_intrinsics.registry())

# Types: numba's type objects (gpujit.types): signatures (void(float32[::1], int32)),
# dtypes (np.dtype(gpujit.float32), shared.array(n, gpujit.float32)) and casts in kernels.
from .types import (boolean, bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,  # noqa: E402
                    float16, bfloat16, float8_e4m3fn, float8_e5m2, float32, float64, complex64, complex128, intp, uintp, intc, uintc, byte, char, uchar, short,
                    ushort, int_, uint, long_, ulong, longlong, ulonglong, float_, double, void, none, b1, i1, i2,
                    i4, i8, u1, u2, u4, u8, f2, f4, f8, c8, c16)

from ._version import __version__  # noqa: E402


def jit(func_or_sig=None, device=False, inline=False, forceinline=False, link=None, debug=False, opt=True,
        lineinfo=False, cache=False, launch_bounds=None, lto=False, shared_memory_carveout=None, fastmath=False,
        boundscheck=None, extensions=None, racecheck=None):
    """Compile a Python function as a kernel (or, with device=True, a device function):
    @jit, @jit(options), @jit(sig, options) or @jit([sig1, sig2], options). Without a
    signature each launch compiles for its argument types; with one (or several) the
    kernel compiles at once, for those only.

    func_or_sig   the function; or a signature: a string ("void(float32[::1], int32)"),
                  types called (void(float32[::1], int32)), a tuple of argument types
                  ((float32[::1], int32)), or a list of signatures
    device        True: a device function (DeviceFunction), called from kernels and
                  compiled into each caller
    inline        numba's IR-level inlining switch: accepted; device functions are
                  inlined by LLVM as it sees fit
    forceinline   True: always inline this device function into its callers
    link          files or LinkableCode objects (PTX, CUDA C++, cubins, ...) linked
                  with every specialisation on the cuda target
    debug         True: check array indices and division by zero, and report
                  exceptions raised in the kernel
    opt           False: compile without optimisation
    lineinfo      True: map the PTX to the Python lines (.loc directives)
    cache         True: keep compiled kernels on disk ($GPUJIT_CACHE_DIR, else
                  __pycache__ beside the source)
    launch_bounds the most threads per block (an int), and optionally the fewest
                  blocks per multiprocessor and the most blocks per cluster: a
                  tuple of 1 to 3 ints (.maxntid, .minnctapersm, .maxclusterrank)
    lto           numba's link-time optimisation switch: accepted, changes
                  nothing (a kernel is already one optimised module)
    shared_memory_carveout  a hint for the L1/shared memory split: "MaxL1",
                  "MaxShared", "default", or a percentage from -1 to 100
    fastmath      True: fast, less precise float operations (flush to zero,
                  approximate division, square root and transcendentals)
    boundscheck   True/False: check array indices (IndexError at the launch) or
                  not; None: checked on the cpu target, not on the GPU, unless
                  debug=True
    extensions    numba's argument-handler extensions (objects with a
                  prepare_args method), applied to a launch's arguments
    racecheck     True: on the cpu target, report data races between the
                  threads of a block (gpujit.RaceError at the launch); None:
                  as GPUJIT_CPU_RACECHECK (off by default). No effect on the
                  GPU (use compute-sanitizer --tool racecheck there)
    """
    options = dict(inline=inline, forceinline=forceinline, link=link, debug=debug, opt=opt, lineinfo=lineinfo,
                   cache=cache, launch_bounds=launch_bounds, lto=lto, shared_memory_carveout=shared_memory_carveout,
                   fastmath=fastmath, boundscheck=boundscheck, extensions=extensions, racecheck=racecheck)
    if device:  # a device function takes the options that change its code, as given
        defaults = _inspect.signature(jit).parameters
        options = {k: v for k, v in options.items() if v is not defaults[k].default}
    make = DeviceFunction if device else Dispatcher
    if callable(func_or_sig) and not isinstance(func_or_sig, (str, list, tuple, types.Type)):
        return make(func_or_sig, None, **options)
    sigs = _signature_list(func_or_sig)

    def wrap(func):
        return make(func, sigs, **options)
    return wrap


# numba.cuda.compile, compile_ptx and their *_for_current_device forms (gpujit/compiler.py)
from .compiler import compile, compile_all, compile_for_current_device, compile_ptx, compile_ptx_for_current_device  # noqa: E402,A004,E501


from .linking import (Archive, Cubin, CUSource, Fatbin, LinkableCode, LTOIR, Object, PTXSource,  # noqa: E402
                      declare_device)  # external code: refused in kernels
from .cudadrv import *  # noqa: E402,F401,F403  (is_available, detect, streams, events, targets)
from .devicearray import *  # noqa: E402,F401,F403  (to_device, device_array, DeviceArray, ...)

# Host-API pieces loaded on first use, so `import gpujit` stays fast: name -> (module, attribute).
_LAZY = {
    "vectorize": ("vectorizers", "vectorize"), "guvectorize": ("vectorizers", "guvectorize"),
    "Reduce": ("reduction", "Reduce"), "reduce": ("reduction", "Reduce"),
    "typeof": ("typing.typeof", "typeof"), "deviceufunc": ("deviceufunc", None),
    "kernels": ("kernels", None), "config": ("config", None),
    "literal_unroll": ("misc.special", "literal_unroll"), "CudaSupportError": ("cudadrv.driver", "CudaSupportError"),
    "args": ("args", None), "In": ("args", "In"), "Out": ("args", "Out"), "InOut": ("args", "InOut"),
    "libdevice": ("libdevice", None), "libdevicefuncs": ("libdevicefuncs", None),
    "open_ipc_array": ("ipc", "open_ipc_array"), "IpcHandle": ("ipc", "IpcHandle"),
    # numba.cuda's host API around the driver (cudadrv/): memory manager plugins, mapped memory,
    # the profiler, and numba's modules and objects of those names
    "BaseCUDAMemoryManager": ("cudadrv.emm", "BaseCUDAMemoryManager"),
    "HostOnlyCUDAMemoryManager": ("cudadrv.emm", "HostOnlyCUDAMemoryManager"),
    "GetIpcHandleMixin": ("cudadrv.emm", "GetIpcHandleMixin"), "MemoryPointer": ("cudadrv.emm", "MemoryPointer"),
    "MappedMemory": ("cudadrv.emm", "MappedMemory"), "PinnedMemory": ("cudadrv.emm", "PinnedMemory"),
    "MemoryInfo": ("cudadrv", "MemoryInfo"), "set_memory_manager": ("cudadrv.emm", "set_memory_manager"),
    "mapped": ("cudadrv.emm", "mapped"), "profiling": ("cudadrv.driver", "profiling"),
    "profile_start": ("cudadrv.driver", "profile_start"), "profile_stop": ("cudadrv.driver", "profile_stop"),
    "driver": ("cudadrv.driver", None), "devices": ("cudadrv.devices", None),
    "require_context": ("cudadrv.devices", "require_context"), "runtime": ("cudadrv.runtime", "runtime"),
    "nvvm": ("cudadrv.nvvm", None), "KernelRuntimeError": ("errors", "KernelRuntimeError"),
    "reduction": ("reduction", None),
    "graph": ("graph", None), "GraphCaptureError": ("errors", "GraphCaptureError"),  # CUDA graphs
    "install_as_numba_cuda": ("_place", "install"),  # gpujit in numba.cuda's place (docs/porting.md)
}

implementation = "gpujit"  # numba.cuda.implementation: who implements the API ("NVIDIA" for numba-cuda)
# numba's default compute capability for PTX compiled without one; gpujit's is 9.0
config_default_cc = numba_cuda_default_ptx_cc = (9, 0)


def cuda_error():
    """None if the CUDA driver loaded and initialised, else the reason it did not (a string)."""
    if _core.is_available():
        return None
    try:
        _core.driver_version()
    except CudaError as e:
        return str(e)
    return "no CUDA device found"


def __getattr__(name):
    """The names of _LAZY, and CUDA's vector types (gpu.float32x3, gpu.float3, ...): made on first use."""
    entry = _LAZY.get(name)
    if entry is None:
        if name[-1:] in "1234" and not name.startswith("_"):
            from .vector_types import constructors
            if name in constructors:
                return constructors[name]
        raise AttributeError("module 'gpujit' has no attribute %r" % name)
    import importlib
    mod = importlib.import_module("." + entry[0], __name__)
    value = mod if entry[1] is None else getattr(mod, entry[1])
    globals()[name] = value
    return value


def __dir__():
    from .vector_types import constructors
    return sorted(set(globals()) | set(_LAZY) | set(constructors))


# `from gpujit import *`: the names `from numba.cuda import *` gives that gpujit has (the API,
# numba.cuda.types' type names and the vector types), less modules and `compile`, which would
# shadow the builtin (gpujit.compile is numba.cuda.compile).
__all__ = [
    # kernels and compilation
    "jit", "declare_device", "compile_all", "compile_for_current_device", "compile_ptx",
    "compile_ptx_for_current_device", "literal_unroll", "implementation", "config_default_cc",
    "numba_cuda_default_ptx_cc", "vectorize", "guvectorize", "reduce", "Reduce",
    # the kernel language
    "threadIdx", "blockIdx", "blockDim", "gridDim", "laneid", "warpsize", "grid", "gridsize", "shared", "local",
    "const", "atomic", "cg", "syncthreads", "syncthreads_and", "syncthreads_count", "syncthreads_or", "syncwarp",
    "threadfence", "threadfence_block", "threadfence_system", "shfl_sync", "shfl_up_sync", "shfl_down_sync",
    "shfl_xor_sync", "all_sync", "any_sync", "eq_sync", "ballot_sync", "match_any_sync", "match_all_sync",
    "activemask", "lanemask_lt", "popc", "brev", "clz", "ffs", "fma", "cbrt", "selp", "nanosleep",
    "ldca", "ldcg", "ldcs", "ldlu", "ldcv", "stcg", "stcs", "stwb", "stwt",
    # arrays, memory, devices, streams, events
    "to_device", "device_array", "device_array_like", "pinned_array", "pinned_array_like", "mapped_array",
    "mapped_array_like", "managed_array", "as_cuda_array", "is_cuda_array", "from_cuda_array_interface",
    "open_ipc_array", "IpcHandle", "pinned", "mapped", "In", "Out", "InOut", "BaseCUDAMemoryManager",
    "HostOnlyCUDAMemoryManager", "GetIpcHandleMixin", "MemoryPointer", "MappedMemory", "PinnedMemory",
    "MemoryInfo", "set_memory_manager", "is_available", "is_supported_version", "cuda_error", "detect",
    "select_device", "get_current_device", "list_devices", "gpus", "close", "current_context", "require_context",
    "synchronize", "defer_cleanup", "stream", "default_stream", "legacy_default_stream",
    "per_thread_default_stream", "external_stream", "event", "event_elapsed_time", "profiling", "profile_start",
    "profile_stop", "runtime", "is_float16_supported", "is_bfloat16_supported", "is_fp8_supported",
    # linking and errors
    "Archive", "CUSource", "Cubin", "Fatbin", "LinkableCode", "LTOIR", "Object", "PTXSource", "CudaSupportError",
    "KernelRuntimeError",
    # numba.cuda.types' names
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intp", "uintp", "intc", "uintc",
    "boolean", "float32", "float64", "complex64", "complex128", "bool_", "byte", "char", "uchar", "short", "ushort",
    "int_", "uint", "long_", "ulong", "longlong", "ulonglong", "float_", "double", "void", "none", "bfloat16", "b1", "i1", "i2",
    "i4", "i8", "u1", "u2", "u4", "u8", "f4", "f8", "c8", "c16",
]
from .vector_types import constructors as _vector_constructors  # noqa: E402  (float32x3, float3, ...)
__all__ += sorted(_vector_constructors)
# less the names of the running Python's own modules (3.15's `profiling`), which a star import
# would shadow
__all__ = [_name for _name in __all__ if _name not in getattr(_sys, "stdlib_module_names", ())]
