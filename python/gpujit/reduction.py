"""gpujit.Reduce (numba.cuda.Reduce / cuda.reduce): a whole-array reduction with a
binary function, on the device.

    sum_reduce = gpujit.Reduce(lambda a, b: a + b)
    total = sum_reduce(x)                  # x: a 1-D NumPy or device array
    sum_reduce(dx, res=dres, init=3)       # result left in dres[0]

Each block folds a grid-strided share of the array per thread, then the
block's threads combine theirs through shared memory; a second one-block
launch combines the blocks' partial results and `init`. The function must be
associative and commutative (the order of combination is unspecified). One
kernel is compiled per dtype and cached on the Reduce object.
"""
import numpy as np

from . import _core

__all__ = ["Reduce"]

_TPB = 256          # threads per block: a power of two (the tree halves it)
_CPU_BLOCKS = 16    # the CPU target runs a block's threads as fibers: few blocks are fastest


def _max_blocks():
    """The first pass's grid: on a GPU, enough blocks of _TPB threads to fill every
    multiprocessor (2048 threads each), so that it runs at memory bandwidth; the partial
    results are then combined by one block."""
    if _core.get_target() != "cuda":
        return _CPU_BLOCKS
    from .vectorizers import sm_count
    return sm_count() * (2048 // _TPB)

_SOURCE = """\
def __reduce_{name}(a, partials, init, use_init):
    sm = __gj__.shared.array({tpb}, __dt__)
    tid = __gj__.threadIdx.x
    first = __gj__.blockIdx.x * {tpb}
    n = a.shape[0]
    i = first + tid
    if i < n:
        acc = a[i]
        i += __gj__.gridDim.x * {tpb}
        while i < n:
            acc = __dt__(__core__(acc, a[i]))
            i += __gj__.gridDim.x * {tpb}
        sm[tid] = acc
    __gj__.syncthreads()
    valid = min(n - first, {tpb})
    s = {tpb} // 2
    while s > 0:
        if tid < s and tid + s < valid:
            sm[tid] = __core__(sm[tid], sm[tid + s])
        __gj__.syncthreads()
        s //= 2
    if tid == 0:
        r = sm[0]
        if use_init:
            r = __dt__(__core__(r, init))
        partials[__gj__.blockIdx.x] = r
"""


class Reduce:
    """A reduction by a binary function (a plain function, a lambda or a
    gpujit.jit(device=True) function), compiled into a kernel per dtype."""

    def __init__(self, functor):
        if not callable(functor):
            raise TypeError("Reduce takes a binary function, not %s" % type(functor).__name__)
        self._functor = functor
        self._kernels = {}

    def __repr__(self):
        return "<gpujit Reduce %s>" % getattr(self._functor, "__name__", self._functor)

    def _compile(self, dtype, contiguous):
        k = self._kernels.get((dtype, contiguous))
        if k is None:
            import gpujit
            from .dispatcher import Dispatcher
            from .np.numpy_support import from_dtype
            from .typing import dtype_name
            from .vectorizers import _exec_source, _symbol
            nbtype = from_dtype(dtype)
            name = _symbol(self._functor)
            src = _SOURCE.format(name=name, tpb=_TPB)
            fn = _exec_source(src, "<gpujit Reduce %s>" % name,
                              {"__gj__": gpujit, "__core__": self._functor, "__dt__": nbtype}, "__reduce_" + name)
            t = dtype_name(dtype)
            layout = "::1" if contiguous else ":"     # unit stride: no stride multiply per load
            k = self._kernels[(dtype, contiguous)] = Dispatcher(
                fn, ["void(%s[%s], %s[::1], %s, bool)" % (t, layout, t, t)])
        return k

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        """Reduce arr (its first `size` elements if given) and `init`. Returns the result,
        or writes it to res[0] (a device array) and returns None."""
        from .devicearray import device_array, to_device
        from .vectorizers import _as_device_array, _is_device_array, _stream_sync
        dev = _is_device_array(arr)
        a = _as_device_array(arr) if dev else np.asarray(arr)
        if a.ndim != 1:
            raise TypeError("Reduce takes a 1-D array, not %d-D" % a.ndim)
        if size is not None:
            a = a[:size]
        dtype = np.dtype(a.dtype)
        init = dtype.type(init)
        if res is not None and not _is_device_array(res):
            raise TypeError("res= must be a device array (the result is left on the device)")
        n = a.shape[0]
        if n == 0:
            if res is None:
                return init
            _as_device_array(res)[:1].copy_to_device(np.array([init], dtype=dtype), stream=stream)
            return None
        if not dev:
            a = to_device(np.ascontiguousarray(a), stream=stream)
        kernel = self._compile(dtype, a.strides[0] == dtype.itemsize)
        blocks = min((n + _TPB - 1) // _TPB, _max_blocks())
        partials = device_array(blocks, dtype=dtype, stream=stream)
        kernel[blocks, _TPB, stream](a, partials, init, blocks == 1)   # may warn of low occupancy
        if blocks > 1:   # one block by design: no warning
            self._compile(dtype, True)._quiet_config(1, _TPB, stream)(partials, partials, init, True)
        if res is not None:
            _as_device_array(res)[:1].copy_to_device(partials[:1], stream=stream)
            return None
        host = partials[:1].copy_to_host(stream=stream)
        _stream_sync(stream)
        return host[0]
