"""gpujit.Reduce (numba.cuda.Reduce / cuda.reduce): a whole-array reduction with a
binary function, on the device.

    sum_reduce = gpujit.Reduce(lambda a, b: a + b)
    total = sum_reduce(x)                  # x: a 1-D NumPy or device array
    sum_reduce(dx, res=dres, init=3)       # result left in dres[0]

One launch: each thread folds a grid-strided share of the array (four loads in
flight per step), each block combines its threads' values in shared memory and
stores the block's value in a partial-results buffer; the block that finishes
last (an atomic ticket, after a fence; it sets the counter back to zero) combines
the partial results and writes the result. `init` is folded into block 0's value before
it is stored, as numba folds it (f(block 0's value, init)), so that results whose rounding
or overflow depends on the order (float products) come out as numba's. The ticket is an atomic add,
one instruction: a compare-and-swap loop (what atomic.inc's wrap needs) costs a
quarter of a millisecond when hundreds of blocks finish together. The grid fills the device (blocks per
multiprocessor from the occupancy query, asked once per kernel and device). The
function is applied to values only, never to a fill value, so any associative
and commutative function works (the order of combination is unspecified).

Per call the work is a few dictionary lookups and the launch: kernels are
compiled once per dtype and layout, and the partial results, the ticket
counter and the result slot are kept per device, stream and thread (a launch
on one stream finishes before the next on it starts; the result slot is read
back by the thread that launched).
"""
import textwrap
import threading

import numpy as np

from . import _core
from .vectorizers import _as_device_array, _is_device_array, _stream_sync

__all__ = ["Reduce"]

_TPB = {"cuda": 256, "cpu": 64}   # threads per block: a power of two, at least 64
_CPU_BLOCKS = 16    # the CPU target runs a block's threads as fibers: few blocks are fastest

# The block's combination, used twice (the threads' values, then the partial results): a
# tree in shared memory over the block's first `valid` threads, barriers while it spans
# warps, then within the first warp. The block's value ends in lane 0's `acc`.
_COMBINE = """\
    sm[tid] = acc
    __gj__.syncthreads()
    s = {half}
    while s >= 32:
        if tid < s and tid + s < valid:
            sm[tid] = __dt__(__core__(sm[tid], sm[tid + s]))
        __gj__.syncthreads()
        s //= 2
    if tid < 32:
        while s > 0:
            if tid < s and tid + s < valid:
                sm[tid] = __dt__(__core__(sm[tid], sm[tid + s]))
            __gj__.syncwarp()
            s //= 2
        acc = sm[0]
    __gj__.syncthreads()
"""

_SOURCE = """\
def __reduce_{name}(a, partials, count, out, init):
    sm = __gj__.shared.array({tpb}, __dt__)
    last = __gj__.shared.array(1, __gj__.int32)
    tid = __gj__.threadIdx.x
    n = a.shape[0]
    stride = __gj__.gridDim.x * {tpb}
    first = __gj__.blockIdx.x * {tpb}
    i = first + tid
    acc = init
    if i < n:
        acc = a[i]
        i += stride
        while i + 3 * stride < n:
            v0 = a[i]
            v1 = a[i + stride]
            v2 = a[i + 2 * stride]
            v3 = a[i + 3 * stride]
            acc = __dt__(__core__(acc, __dt__(__core__(__dt__(__core__(v0, v1)), __dt__(__core__(v2, v3))))))
            i += 4 * stride
        while i < n:
            acc = __dt__(__core__(acc, a[i]))
            i += stride
    valid = min(n - first, {tpb})
{combine1}\
    nb = __gj__.gridDim.x
    if tid == 0:
{fold}        partials[__gj__.blockIdx.x] = acc
        __gj__.threadfence()
        ticket = __gj__.atomic.add(count, 0, __u32__(1))
        last[0] = 1 if ticket == nb - 1 else 0
        if ticket == nb - 1:
            count[0] = __u32__(0)     # every block has taken its ticket: ready for the next launch
    __gj__.syncthreads()
    if last[0] != 0:
        j = tid
        if j < nb:
            acc = partials[j]
            j += {tpb}
            while j < nb:
                acc = __dt__(__core__(acc, partials[j]))
                j += {tpb}
        valid = min(nb, {tpb})
{combine2}\
        if tid == 0:
            out[0] = acc
"""

# `init` folded into block 0's value before it is stored (the value first), where numba folds it
_FOLD_INIT = """\
        if __gj__.blockIdx.x == 0:
            acc = __dt__(__core__(acc, init))
"""


def _source(name, tpb, with_init):
    combine = _COMBINE.format(half=tpb // 2)
    return _SOURCE.format(name=name, tpb=tpb, combine1=combine, combine2=textwrap.indent(combine, "    "),
                          fold=_FOLD_INIT if with_init else "")


class _Buffers:
    """A launch's scratch on one device: the blocks' partial results, the ticket counter
    (zero between launches: the last block sets it back), the result slot and the
    pinned host memory it is read back into (a faster copy than to pageable memory)."""
    __slots__ = ("partials", "count", "result", "host")

    def __init__(self, dtype, nblocks, stream):
        from .devicearray import device_array, pinned_array, to_device
        self.partials = device_array(nblocks, dtype=dtype, stream=stream)
        self.count = to_device(np.zeros(1, np.uint32), stream=stream)
        self.result = device_array(1, dtype=dtype, stream=stream)
        self.host = pinned_array(1, dtype=dtype)


# (target, device, stream handle, thread, dtype, blocks) -> _Buffers
_buffers = {}
_BUFFERS_KEPT = 64


class Reduce:
    """Reduce(functor): a reduction by `functor`, a binary function (a plain function, a
    lambda or a gpujit.jit(device=True) function), compiled into a kernel per dtype.
    Calling it, r(arr, size=None, res=None, init=0, stream=0), reduces arr."""

    def __init__(self, functor):
        if not callable(functor):
            raise TypeError("Reduce takes a binary function, not %s" % type(functor).__name__)
        self._functor = functor
        self._with_init = True      # a ufunc's .reduce combines the elements only
        self._kernels = {}
        self._plans = {}    # (dtype, unit stride, target, device) -> (kernel, tpb, max blocks)

    def __repr__(self):
        return "<gpujit Reduce %s>" % getattr(self._functor, "__name__", self._functor)

    def _compile(self, dtype, contiguous, tpb):
        key = (dtype, contiguous, tpb)
        k = self._kernels.get(key)
        if k is None:
            import gpujit
            from .dispatcher import Dispatcher
            from .np.numpy_support import from_dtype
            from .typing import dtype_name
            from .vectorizers import _exec_source, _symbol
            nbtype = from_dtype(dtype)
            name = _symbol(self._functor)
            fn = _exec_source(_source(name, tpb, self._with_init), "<gpujit Reduce %s>" % name,
                              {"__gj__": gpujit, "__core__": self._functor, "__dt__": nbtype,
                               "__u32__": gpujit.uint32}, "__reduce_" + name)
            t = dtype_name(dtype)
            layout = "::1" if contiguous else ":"     # unit stride: no stride multiply per load
            k = self._kernels[key] = Dispatcher(
                fn, ["void(%s[%s], %s[::1], uint32[::1], %s[:], %s)" % (t, layout, t, t, t)])
        return k

    def _plan(self, dtype, contiguous):
        """The kernel, its block size and the grid that fills the current device."""
        target = _core.get_target()
        key = (dtype, contiguous, target, _core.current_device())
        plan = self._plans.get(key)
        if plan is None:
            tpb = _TPB.get(target, 256)
            kernel = self._compile(dtype, contiguous, tpb)
            if target == "cuda":
                from .vectorizers import sm_count
                compiled = kernel.compile(kernel._eager[0], target)
                blocks = _core.max_cooperative_grid_blocks(compiled, tpb) or sm_count()
            else:
                blocks = _CPU_BLOCKS
            plan = self._plans[key] = (kernel, tpb, blocks)
        return plan

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        """Reduce arr (its first `size` elements if given) and `init`. Returns the result,
        or writes it to res[0] (a device array) and returns None."""
        dev = isinstance(arr, _core.DeviceArrayBase)
        if not dev:
            dev = _is_device_array(arr)
            a = _as_device_array(arr) if dev else np.asarray(arr)
        else:
            a = arr
        if a.ndim != 1:
            raise TypeError("Reduce takes a 1-D array, not %d-D" % a.ndim)
        if size is not None:
            a = a[:size]
        dtype = a.dtype
        init = dtype.type(init)
        if res is not None:
            if not isinstance(res, _core.DeviceArrayBase):
                if not _is_device_array(res):
                    raise TypeError("res= must be a device array (the result is left on the device)")
                res = _as_device_array(res)
        n = a.shape[0]
        if n == 0:
            if res is None:
                return init
            res[:1].copy_to_device(np.array([init], dtype=dtype), stream=stream)
            return None
        if not dev:
            from .devicearray import to_device
            a = to_device(np.ascontiguousarray(a), stream=stream)
        kernel, tpb, maxblocks = self._plan(dtype, a.strides[0] == dtype.itemsize)
        blocks = min((n + tpb - 1) // tpb, maxblocks)
        bkey = (_core.get_target(), _core.current_device(), _core.stream_handle(stream), threading.get_ident(),
                dtype, maxblocks)
        bufs = _buffers.get(bkey)
        if bufs is None:
            if len(_buffers) >= _BUFFERS_KEPT:
                _buffers.clear()
            bufs = _buffers[bkey] = _Buffers(dtype, maxblocks, stream)
        direct = res is not None and res.ndim == 1 and res.shape[0] > 0 and res.dtype == dtype
        out = res if direct else bufs.result        # the kernel writes out[0]
        try:
            kernel[blocks, tpb, stream](a, bufs.partials, bufs.count, out, init)
        except BaseException:
            _buffers.pop(bkey, None)    # a launch that did not finish may leave the ticket counter set
            raise
        if res is not None:
            if not direct:
                res[:1].copy_to_device(bufs.result, stream=stream)
            return None
        bufs.result._dtoh(0, bufs.host, stream)
        _stream_sync(stream)        # a copy on a stream into pinned memory is asynchronous
        return bufs.host[0]
