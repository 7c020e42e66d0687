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
import numpy as _np

from . import _core
from .errors import (CompileError, TypingError, UnsupportedError, InternalCompilerError, CudaError,
                     LaunchError)
from .intrinsics import (threadIdx, blockIdx, blockDim, gridDim, laneid, warpsize, grid, gridsize,
                         syncthreads, shared, local, atomic, const, syncthreads_count, syncthreads_and,
                         syncthreads_or, syncwarp, threadfence, threadfence_block, threadfence_system,
                         shfl_sync, shfl_up_sync, shfl_down_sync, shfl_xor_sync, all_sync, any_sync, eq_sync,
                         ballot_sync, match_any_sync, match_all_sync, activemask, lanemask_lt, fma, cbrt,
                         popc, clz, ffs, brev)
from . import intrinsics as _intrinsics
from .dispatcher import Dispatcher, DeviceFunction

_core.register_paths(_intrinsics.registry())

# Types: NumPy's scalar types, usable as dtypes and as casts inside kernels.
boolean = bool_ = _np.bool_
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
float32, float64 = _np.float32, _np.float64
complex64, complex128 = _np.complex64, _np.complex128
intp, uintp = _np.intp, _np.uintp

__version__ = "0.1.0"


def jit(func_or_sig=None, device=False, **options):
    """Compile a Python function as a kernel: @jit, @jit(options), @jit("void(float32[::1])", ...)
    or @jit(["sig1", "sig2"]). Options: fastmath, lineinfo, debug, boundscheck (array indices
    checked, IndexError at the launch: default on the CPU target, off on the GPU)."""
    make = DeviceFunction if device else Dispatcher
    if callable(func_or_sig) and not isinstance(func_or_sig, (str, list, tuple)):
        return make(func_or_sig, None, **options)
    sigs = func_or_sig
    if isinstance(sigs, str):
        sigs = [sigs]
    elif sigs is not None and not isinstance(sigs, (list, tuple)):
        raise TypeError("jit() takes a function, a signature string or a list of them, not %s"
                        % type(sigs).__name__)

    def wrap(func):
        return make(func, sigs, **options)
    return wrap


def compile_ptx(pyfunc, sig, device=False, cc=(9, 0), fastmath=False, lineinfo=False, debug=False,
                boundscheck=None):
    """PTX of `pyfunc` for signature `sig`, as numba.cuda.compile_ptx: returns (ptx, return_type).
    Needs no GPU and no driver."""
    if isinstance(pyfunc, Dispatcher):
        pyfunc = pyfunc.py_func
    if not isinstance(sig, str):
        raise TypeError("sig must be a string such as 'void(float32[::1])'")
    if "(" not in sig:
        raise TypeError("bad signature %r: expected 'void(arg types)'" % sig)
    k = _core.compile(pyfunc.__code__, pyfunc.__globals__, pyfunc.__closure__, sig, target="cuda",
                      cc=tuple(cc), fastmath=fastmath, lineinfo=lineinfo,
                      debug=debug if boundscheck is None else bool(boundscheck), device=device)
    return k.ptx, k.restype if k.restype != "none" else "void"


def compile_ptx_for_current_device(pyfunc, sig, **kw):
    from .cudadrv import get_current_device
    return compile_ptx(pyfunc, sig, cc=get_current_device().compute_capability, **kw)


from .cudadrv import *  # noqa: E402,F401,F403  (is_available, detect, streams, events, targets)
from .devicearray import *  # noqa: E402,F401,F403  (to_device, device_array, DeviceArray, ...)
