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
                     LaunchError)
from .intrinsics import (threadIdx, blockIdx, blockDim, gridDim, laneid, warpsize, grid, gridsize,
                         syncthreads, shared, local, atomic, const, syncthreads_count, syncthreads_and,
                         syncthreads_or, syncwarp, threadfence, threadfence_block, threadfence_system,
                         shfl_sync, shfl_up_sync, shfl_down_sync, shfl_xor_sync, all_sync, any_sync, eq_sync,
                         ballot_sync, match_any_sync, match_all_sync, activemask, lanemask_lt, fma, cbrt,
                         popc, clz, ffs, brev, cg)
from . import intrinsics as _intrinsics
from . import types
from .dispatcher import Dispatcher, DeviceFunction
from .typing import signature_list as _signature_list, signature_string as _signature_string

_core.register_paths(_intrinsics.registry())

# Types: numba's type objects (gpujit.types): signatures (void(float32[::1], int32)),
# dtypes (np.dtype(gpujit.float32), shared.array(n, gpujit.float32)) and casts in kernels.
from .types import (boolean, bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,  # noqa: E402
                    float32, float64, complex64, complex128, intp, uintp, intc, uintc, byte, char, uchar, short,
                    ushort, int_, uint, long_, ulong, longlong, ulonglong, float_, double, void, none, b1, i1, i2,
                    i4, i8, u1, u2, u4, u8, f4, f8, c8, c16)

__version__ = "0.1.0"


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


def compile_ptx(pyfunc, sig, device=False, cc=(9, 0), fastmath=False, lineinfo=False, debug=False,
                boundscheck=None):
    """PTX of `pyfunc` for signature `sig`, as numba.cuda.compile_ptx: returns (ptx, return_type).
    Needs no GPU and no driver."""
    if isinstance(pyfunc, (Dispatcher, DeviceFunction)):
        pyfunc = pyfunc.py_func
    sig = _signature_string(sig)
    k = _core.compile(pyfunc.__code__, pyfunc.__globals__, pyfunc.__closure__, sig, target="cuda",
                      cc=cc, fastmath=fastmath, lineinfo=lineinfo,
                      debug=debug, boundscheck=debug if boundscheck is None else bool(boundscheck),
                      device=device)
    return k.ptx, k.restype if k.restype != "none" else "void"


def compile_ptx_for_current_device(pyfunc, sig, **kw):
    from .cudadrv import get_current_device
    return compile_ptx(pyfunc, sig, cc=get_current_device().compute_capability, **kw)


from .cudadrv import *  # noqa: E402,F401,F403  (is_available, detect, streams, events, targets)
from .devicearray import *  # noqa: E402,F401,F403  (to_device, device_array, DeviceArray, ...)
