"""transpose(a, b=None): b = a.T, computed on the device (numba.cuda.kernels.transpose).

A block copies a square tile of `a` into shared memory and writes it out
transposed, so that both the reads of `a` and the writes of `b` run along rows
(coalesced on a GPU); the tile has one padding column so that reading it by
columns avoids shared-memory bank conflicts. Dtypes other than numbers
(records) are copied element by element without the tile.
"""
import numpy as np

__all__ = ["transpose"]

_TILE = 16
_kernels = {}

_TILED = """\
def __transpose(a, b):
    tile = __gj__.shared.array(({t}, {t} + 1), __dt__)
    tx = __gj__.threadIdx.x
    ty = __gj__.threadIdx.y
    col = __gj__.blockIdx.x * {t}
    row = __gj__.blockIdx.y * {t}
    if row + ty < a.shape[0] and col + tx < a.shape[1]:
        tile[ty, tx] = a[row + ty, col + tx]
    __gj__.syncthreads()
    if col + ty < b.shape[0] and row + tx < b.shape[1]:
        b[col + ty, row + tx] = tile[tx, ty]
"""

_PLAIN = """\
def __transpose(a, b):
    i, j = __gj__.grid(2)
    if j < a.shape[0] and i < a.shape[1]:
        b[i, j] = a[j, i]
"""


def _kernel(dtype):
    k = _kernels.get(dtype)
    if k is None:
        import gpujit
        from ..dispatcher import Dispatcher
        from ..np.numpy_support import from_dtype
        from ..typing import dtype_name
        from ..vectorizers import _exec_source
        src = (_TILED if dtype.kind in "biufc" else _PLAIN).format(t=_TILE)
        glbls = {"__gj__": gpujit, "__dt__": from_dtype(dtype)}
        fn = _exec_source(src, "<gpujit transpose %s>" % dtype, glbls, "__transpose")
        t = dtype_name(dtype)
        k = _kernels[dtype] = Dispatcher(fn, ["void(%s[:, :], %s[:, :])" % (t, t)])
    return k


def transpose(a, b=None):
    """Write the transpose of the 2-D array `a` (NumPy or device) into the device array
    `b` (a new one if None) and return b. Runs on a's stream where a has one."""
    from ..devicearray import device_array, to_device
    from ..vectorizers import _as_device_array, _is_device_array
    stream = getattr(a, "stream", 0) or 0
    a = _as_device_array(a) if _is_device_array(a) else to_device(np.asarray(a), stream=stream)
    if a.ndim != 2:
        raise ValueError("transpose takes a 2-D array, not %d-D" % a.ndim)
    rows, cols = a.shape
    if b is None:
        b = device_array((cols, rows), dtype=a.dtype, stream=stream)
    elif not _is_device_array(b):
        raise TypeError("transpose writes into a device array, not %s" % type(b).__name__)
    else:
        b = _as_device_array(b)
    if tuple(b.shape) != (cols, rows) or b.dtype != a.dtype:
        raise ValueError("transpose of a %s %s array needs a %s %s destination, not %s %s"
                         % (a.shape, a.dtype, (cols, rows), a.dtype, b.shape, b.dtype))
    if rows and cols:
        grid = ((cols + _TILE - 1) // _TILE, (rows + _TILE - 1) // _TILE)
        _kernel(np.dtype(a.dtype))[grid, (_TILE, _TILE), stream](a, b)
    return b
