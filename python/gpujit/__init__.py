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
from . import _core
from .errors import (CompileError, TypingError, UnsupportedError, InternalCompilerError, CudaError,
                     LaunchError, CudaDriverError, PerformanceWarning)
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
from .dispatcher import Dispatcher, DeviceFunction
from .typing import signature_list as _signature_list

_core.register_paths(_intrinsics.registry())

# Types: numba's type objects (gpujit.types): signatures (void(float32[::1], int32)),
# dtypes (np.dtype(gpujit.float32), shared.array(n, gpujit.float32)) and casts in kernels.
from .types import (boolean, bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,  # noqa: E402
                    float16, float32, float64, complex64, complex128, intp, uintp, intc, uintc, byte, char, uchar, short,
                    ushort, int_, uint, long_, ulong, longlong, ulonglong, float_, double, void, none, b1, i1, i2,
                    i4, i8, u1, u2, u4, u8, f2, f4, f8, c8, c16)

from ._version import __version__  # noqa: E402


def jit(func_or_sig=None, device=False, **options):
    """Compile a Python function as a kernel: @jit, @jit(options), @jit(sig, ...) or
    @jit([sig1, sig2]), a signature being a string ("void(float32[::1], int32)"), types
    called (void(float32[::1], int32)) or a tuple of argument types ((float32[::1], int32)).
    Options: fastmath, lineinfo, debug, boundscheck (array indices
    checked, IndexError at the launch: default on the CPU target, off on the GPU)."""
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
