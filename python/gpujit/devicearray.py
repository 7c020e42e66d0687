"""Device arrays (numba.cuda's DeviceNDArray API) on top of _core.DeviceArrayBase.

The C base holds what a launch reads (pointer, shape, byte strides, dtype
code or record dtype, target, device, owner); this layer adds NumPy dtypes, basic slicing
(views share memory), host <-> device copies (non-contiguous views included)
and the interop protocols: __cuda_array_interface__ v3 (cuda target only) and
DLPack (kDLCUDA on cuda, kDLCPU on cpu).

On the cpu target "device" memory is aligned host memory and every copy is a
memcpy; the API is the same.
"""
import ctypes
import math
import operator
import os as _os

import numpy as np

from . import _core
from . import typing as _typing
from .cudadrv import Stream as _Stream

__all__ = [
    "DeviceArray", "to_device", "device_array", "device_array_like", "pinned_array", "as_cuda_array",
    "from_cuda_array_interface",
    "is_cuda_array", "mapped_array", "mapped_array_like", "pinned_array_like", "DeviceNDArray",
    "managed_array",
]

_CODES = dict(_core.dtype_codes)                       # 'float32' -> GjDtype code
_NAMES = {code: name for name, code in _CODES.items()}
_DTYPES = {}                                           # code -> np.dtype, made on first use


def _dtype_of(code):
    dt = _DTYPES.get(code)
    if dt is None:
        dt = _DTYPES[code] = _typing.np_dtype(_NAMES[code])
    return dt


def _dtype_code(dtype):
    dt = np.dtype(dtype)
    name = _typing.scalar_dtype_name(dt)
    if name is None:
        raise TypeError(f"unsupported dtype {dt}: gpujit arrays hold bool, int8-int64, uint8-uint64, "
                        "float16, bfloat16, float32, float64, complex64 or complex128 (native byte order), "
                        "or records of them")
    return _CODES[name]


def _element(dtype):
    """(the dtype code, the record dtype or None) of an array's elements: a record dtype
    (numba's records, whose fields kernels read and write) has code 0."""
    dt = np.dtype(dtype)
    if dt.fields is not None:
        _typing.dtype_name(dt)   # a TypeError for a record kernels cannot take
        return 0, dt
    return _dtype_code(dt), None


def _shape_tuple(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(operator.index(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    return shape


def _c_strides(shape, itemsize):
    strides, s = [], itemsize
    for n in reversed(shape):
        strides.append(s)
        s *= max(n, 1)
    return tuple(reversed(strides))


def _extent(shape, strides, itemsize):
    """(lo, hi) byte offsets spanned relative to element [0, ..., 0]."""
    if any(n == 0 for n in shape):
        return 0, 0
    lo, hi = 0, itemsize
    for n, s in zip(shape, strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi


def _bytes_of(ary):
    """A flat writable uint8 view of a C-contiguous NumPy array."""
    return ary.reshape(-1).view(np.uint8)


# set by cudadrv/emm.py once a memory manager plugin is in use (or named by the environment)
_memory_manager_set = any(_os.environ.get(v, "default") != "default"
                          for v in ("NUMBA_CUDA_MEMORY_MANAGER", "GPUJIT_CUDA_MEMORY_MANAGER"))


def _alloc(nbytes, pinned=False):
    """gpujit's allocator, or the memory manager plugin's once one is set."""
    if _memory_manager_set:
        from .cudadrv import emm
        return emm.alloc(nbytes, pinned)
    return _core.alloc(nbytes, pinned=pinned)


def _sync(stream):
    if stream is not None and stream != 0 and not (isinstance(stream, _core.Stream) and
                                                     stream.handle == 0):
        s = stream if isinstance(stream, _core.Stream) else _Stream(_core.stream_handle(stream))
        s.synchronize()


class DeviceArray(_core.DeviceArrayBase):
    """An array in device memory (host memory on the cpu target): DeviceArray(shape,
    strides=None, dtype=np.float64, stream=0, gpu_data=None) makes an uninitialised one of
    `shape` with `strides` in bytes (default: C order) and elements of `dtype`, whose copies
    default to `stream`; `gpu_data` (an allocation) views existing memory instead. to_device
    and device_array are the usual ways to make one."""

    __array_priority__ = 100  # keep NumPy from broadcasting over us element by element

    def __init__(self, shape, strides=None, dtype=np.float64, stream=0, gpu_data=None):
        shape = _shape_tuple(shape)
        code, record = _element(dtype)
        itemsize = np.dtype(dtype).itemsize
        if strides is not None:
            strides = tuple(int(s) for s in strides)
        if gpu_data is None:
            lo, hi = _extent(shape, strides or _c_strides(shape, itemsize), itemsize)
            if lo < 0:
                raise ValueError("negative strides need an existing allocation (gpu_data)")
            gpu_data = _alloc(hi)
        super().__init__(shape, strides, code, gpu_data, gpu_data.ptr, stream=_kept_stream(stream), record=record)

    # ---- construction of views ----

    def _view(self, shape, strides, ptr):
        v = DeviceArray.__new__(type(self))
        _core.DeviceArrayBase.__init__(v, tuple(shape), tuple(strides), self._dtype_code,
                                       self._owner, ptr, readonly=self.readonly,
                                       target=self._target, device=self._device,
                                       stream=self.stream, record=self._record)
        return v

    # ---- attributes ----

    @property
    def dtype(self):
        record = self._record
        return record if record is not None else _dtype_of(self._dtype_code)

    @property
    def gpu_data(self):
        """The memory under the array: its Allocation when the array spans all of it, else a
        MemoryPointer to the bytes it spans (a view of part, another library's memory)."""
        owner = self._owner
        lo, hi = self._extent()
        if isinstance(owner, _core.Allocation) and self._ptr + lo == owner.ptr and hi - lo == owner.size:
            return owner
        from .cudadrv.emm import MemoryPointer
        return MemoryPointer(None, self._ptr + lo, hi - lo, owner=owner)

    def get_ipc_handle(self):
        """A picklable handle another process opens to use this array's memory (CUDA IPC;
        gpujit.ipc): `with handle as arr:` there. Cuda target only."""
        from .ipc import array_ipc_handle
        return array_ipc_handle(self)

    @property
    def device_ctypes_pointer(self):
        return ctypes.c_void_p(self._ptr)

    @property
    def target(self):
        return self._target

    __cuda_ndarray__ = True  # numba's marker of its device arrays (is_cuda_ndarray)

    def __reduce__(self):
        """Pickled as its contents, copied to the host (as numba's): it comes back as a
        device array on the receiving side's current device."""
        return (_rebuild_device_array, (self.copy_to_host(),))

    @property
    def alloc_size(self):
        """Bytes the elements span (the extent of the view)."""
        lo, hi = self._extent()
        return hi - lo

    def bind(self, stream=0):
        """The same array with `stream` as its default stream."""
        v = self._view(self.shape, self.strides, self._ptr)
        v.stream = _kept_stream(stream)
        return v

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("`copy=False` is not supported: a device array is always copied to the host")
        h = self.copy_to_host()
        return h if dtype is None else h.astype(dtype)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        return (f"<gpujit.DeviceArray shape={self.shape} dtype={self.dtype} "
                f"target={self._target} ptr=0x{self._ptr:x}>")

    @property
    def flags(self):
        """NumPy's flags: flags['C_CONTIGUOUS'] or flags.c_contiguous (relaxed strides:
        dimensions of length 1 do not count), and WRITEABLE."""
        return _Flags(C_CONTIGUOUS=self.is_c_contiguous(), F_CONTIGUOUS=self.is_f_contiguous(),
                      WRITEABLE=not self.readonly)

    def is_f_contiguous(self):
        if self.size == 0:
            return True
        expect = self.itemsize
        for n, s in zip(self.shape, self.strides):
            if n != 1 and s != expect:
                return False
            expect *= n
        return True

    # ---- copies ----

    def copy_to_host(self, ary=None, stream=0):
        """Copy to a NumPy array. Without `ary`, a new one with this array's
        strides when its elements are contiguous (C or F order, broadcast
        dimensions included, as numba returns), else a C-contiguous one. With
        `ary`, any NumPy array of the same shape and dtype. With a stream the
        copy is queued on it; a non-contiguous view or destination waits for it."""
        if ary is not None:
            if ary.dtype != self.dtype:
                raise TypeError(f"incompatible dtype: {self.dtype} vs. {ary.dtype}")
            if ary.shape != self.shape:
                raise ValueError(f"incompatible shape: {self.shape} vs. {ary.shape}")
        if self.size == 0:
            return np.empty(self.shape, dtype=self.dtype) if ary is None else ary
        if ary is None:
            lo, hi = self._extent()
            if _is_contiguous_core(self.shape, self.strides, self.itemsize) and lo == 0:
                buf = np.empty(hi, dtype=np.uint8)
                self._dtoh(0, buf, stream)
                return np.ndarray(self.shape, dtype=self.dtype, buffer=buf, strides=self.strides)
            ary = np.empty(self.shape, dtype=self.dtype)
        if self.is_c_contiguous() and ary.flags.c_contiguous and ary.flags.writeable:
            self._dtoh(0, _bytes_of(ary), stream)
            return ary
        ary[...] = self._read_extent(stream)
        return ary

    def _read_extent(self, stream=0):
        """The view's elements as a NumPy view over a host copy of its extent.
        (A copy into pageable memory, as `buf` is, has finished when the driver
        returns, on a stream too: no wait is needed.)"""
        lo, hi = self._extent()
        buf = np.empty(hi - lo, dtype=np.uint8)
        self._dtoh(lo, buf, stream)
        return np.ndarray(self.shape, dtype=self.dtype, buffer=buf, offset=-lo,
                          strides=self.strides)

    def copy_to_device(self, ary, stream=0):
        """Copy from a NumPy array (or array-like) of the same shape, or from
        another device array of the same shape, dtype and memory layout.

        The copy is one memcpy, so this array must be contiguous (C or F
        order, broadcast dimensions left out; else ValueError, as numba: write
        a strided view with d[...] = ary). From the host any layout is accepted
        (it is rearranged on the host first); into a broadcast array (a stride
        0), the elements at index 0 of each broadcast dimension are written.
        Between device arrays both must be contiguous with the same strides.
        A temporary host copy needs no wait: the driver has staged pageable
        memory when an asynchronous copy from it returns."""
        if isinstance(ary, _core.DeviceArrayBase):
            if ary.size == 0 and self.size == 0:
                return
            if not _is_contiguous_core(ary.shape, ary.strides, ary.itemsize):
                raise ValueError(errmsg_contiguous_buffer)
            if not _is_contiguous_core(self.shape, self.strides, self.itemsize):
                raise ValueError(errmsg_contiguous_buffer)
            if ary.dtype != self.dtype:
                raise TypeError(f"incompatible dtype: {self.dtype} vs. {ary.dtype}")
            mine, theirs = _core_dims(self.shape, self.strides), _core_dims(ary.shape, ary.strides)
            if [n for n, _ in mine] != [n for n, _ in theirs]:
                raise ValueError(f"incompatible shape: {self.shape} vs. {ary.shape}")
            if self.size and [s for _, s in mine] != [s for _, s in theirs]:
                raise ValueError(f"incompatible strides: {self.strides} vs. {ary.strides}")
            if ary._target != self._target:
                raise ValueError(f"cannot copy an array of the {ary._target} target into one of the "
                                 f"{self._target} target")
            lo, hi = self._extent()
            if hi > lo:
                self._dtod(lo, ary, ary._extent()[0], hi - lo, stream)
            return
        a = np.asarray(ary)
        if a.shape != self.shape:
            raise ValueError(f"copy_to_device: shape {a.shape} != {self.shape}")
        if a.dtype != self.dtype:
            a = a.astype(self.dtype)
        if self.size == 0:
            return
        if not _is_contiguous_core(self.shape, self.strides, self.itemsize):
            raise ValueError(errmsg_contiguous_buffer)
        c, f = self.is_c_contiguous(), self.is_f_contiguous()
        if c or f:
            # straight from the caller's memory when it already has our layout
            host = np.ascontiguousarray(a) if c else np.asfortranarray(a)
            self._htod(0, _bytes_of(host if c else host.T), stream)
            return
        # the elements at index 0 of our broadcast dimensions, in our memory order
        core = a[tuple(0 if s == 0 else slice(None) for s in self.strides)]
        strides = tuple(s for s in self.strides if s != 0)
        lo, hi = _extent(core.shape, strides, self.itemsize)
        host = np.empty(hi, dtype=np.uint8)
        np.ndarray(core.shape, dtype=self.dtype, buffer=host, strides=strides)[...] = core
        self._htod(0, host, stream)

    def _scatter(self, a, stream):
        """Write the host array `a` (this view's shape and dtype) into a strided view:
        read its extent, scatter into it, write it back (`buf` is pageable: the
        driver has finished the first copy and staged the second when they return)."""
        view = self._read_extent(stream)
        view[...] = a
        self._htod(self._extent()[0], view.base, stream)

    def copy_to_host_async(self, stream):
        return self.copy_to_host(stream=stream)

    def split(self, section, stream=0):
        """Views of consecutive pieces of `section` elements of a 1-D
        contiguous array (the last may be shorter)."""
        if self.ndim != 1:
            raise ValueError("only support 1d array")
        if self.strides[0] != self.itemsize:
            raise ValueError("only support unit stride")
        section = operator.index(section)
        if section <= 0:
            raise ValueError("section must be positive")
        pieces = []
        for begin in range(0, self.size, section):
            end = min(begin + section, self.size)
            v = self._view((end - begin,), self.strides, self._ptr + begin * self.itemsize)
            v.stream = _kept_stream(stream)
            pieces.append(v)
        return pieces

    # ---- indexing ----

    def __getitem__(self, idx):
        shape, strides, offset, scalar = self._index(idx)
        v = self._view(shape, strides, self._ptr + offset)
        if scalar:  # numba returns the element's value, copied to the host
            return v.copy_to_host()[()]
        return v

    def __setitem__(self, idx, value):
        self.setitem(idx, value)

    def setitem(self, idx, value, stream=0):
        """d[idx] = value, queued on `stream`, else on the array's stream; with
        neither (numba's rule) it runs on the default stream and waits for it.
        value broadcasts to the indexed view as NumPy broadcasts (numba's
        messages when it cannot)."""
        stream = stream or self.stream
        synchronous = not stream
        if synchronous:
            stream = _Stream(0)
        self._setitem(idx, value, stream)
        if synchronous:
            stream.synchronize()

    def _setitem(self, idx, value, stream):
        shape, strides, offset, _ = self._index(idx)
        v = self._view(shape, strides, self._ptr + offset)
        vshape = value.shape if isinstance(value, _core.DeviceArrayBase) else np.shape(value)
        if len(vshape) > len(shape):
            raise ValueError(f"Can't assign {len(vshape)}-D array to {len(shape)}-D self")
        padded = (1,) * (len(shape) - len(vshape)) + tuple(vshape)
        for axis, (n, r) in enumerate(zip(shape, padded)):
            if r != 1 and r != n:
                raise ValueError(f"Can't copy sequence with size {r} to array axis {axis} with dimension {n}")
        if isinstance(value, _core.DeviceArrayBase):
            if tuple(vshape) == tuple(shape):
                v.copy_to_device(value, stream=stream)
                return
            value = value.copy_to_host(stream=stream)  # pageable: complete on return
        value = np.broadcast_to(np.asarray(value, dtype=self.dtype), shape)
        if _is_contiguous_core(v.shape, v.strides, v.itemsize):
            v.copy_to_device(value, stream=stream)
        else:
            v._scatter(value, stream)

    def _index(self, idx):
        """Basic indexing: ints, slices (with steps), Ellipsis, None."""
        if not isinstance(idx, tuple):
            idx = (idx,)
        n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
        if sum(1 for i in idx if i is Ellipsis) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if n_real > self.ndim:
            raise IndexError(f"too many indices: array is {self.ndim}-dimensional, "
                             f"but {n_real} were indexed")
        has_ellipsis = any(i is Ellipsis for i in idx)
        expanded = []
        for i in idx:
            if i is Ellipsis:
                expanded.extend([slice(None)] * (self.ndim - n_real))
            else:
                expanded.append(i)
        if not has_ellipsis:
            expanded.extend([slice(None)] * (self.ndim - n_real))
        shape, strides, offset, dim, ints = [], [], 0, 0, 0
        for i in expanded:
            if i is None:
                shape.append(1)
                strides.append(0)
                continue
            n, s = self.shape[dim], self.strides[dim]
            if isinstance(i, slice):
                start, stop, step = i.indices(n)
                length = len(range(start, stop, step))
                if length:
                    offset += start * s
                shape.append(length)
                strides.append(s * step)
            else:
                try:
                    k = operator.index(i)
                except TypeError:
                    raise TypeError(f"device arrays support only basic indexing (ints, slices, "
                                    f"..., None), not {type(i).__name__}") from None
                if k < 0:
                    k += n
                if not 0 <= k < n:
                    raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
                offset += k * s
                ints += 1
            dim += 1
        scalar = ints == self.ndim and not shape
        return tuple(shape), tuple(strides), offset, scalar

    # ---- reshaping views ----

    def reshape(self, *newshape, order="C"):
        """A view with another shape: order 'C' needs a C-contiguous array,
        'F' an F-contiguous one, 'A' either (else NotImplementedError: the
        result would need a copy)."""
        if len(newshape) == 1 and not isinstance(newshape[0], (int, np.integer)):
            newshape = newshape[0]
        newshape = list(operator.index(s) for s in newshape)
        if newshape.count(-1) > 1:
            raise ValueError("can only specify one unknown dimension")
        if -1 in newshape:
            known = math.prod(s for s in newshape if s != -1)
            newshape[newshape.index(-1)] = self.size // known if known else 0
        newshape = tuple(newshape)
        if math.prod(newshape) != self.size or any(n < 0 for n in newshape):
            raise ValueError(f"cannot reshape array of size {self.size} into shape {newshape}")
        order = self._layout_order(order)
        if newshape == self.shape:
            return self._view(self.shape, self.strides, self._ptr)
        if order == "C":
            strides = _c_strides(newshape, self.itemsize)
        else:
            strides = tuple(reversed(_c_strides(tuple(reversed(newshape)), self.itemsize)))
        return self._view(newshape, strides, self._ptr)

    def _layout_order(self, order):
        if order not in ("C", "F", "A"):
            raise ValueError(f"order must be 'C', 'F' or 'A', not {order!r}")
        c, f = self.is_c_contiguous(), self.is_f_contiguous()
        if order == "A":
            order = "C" if c else "F" if f else None
        if order is None or (order == "C" and not c) or (order == "F" and not f):
            raise NotImplementedError("operation requires copying: the array is not "
                                      f"{'contiguous' if order is None else order + '-contiguous'}")
        return order

    def ravel(self, order="C", stream=0):
        """A 1-D view of a contiguous array, in `order` (NotImplementedError
        when that would need a copy)."""
        return self.reshape(self.size, order=order)

    def transpose(self, axes=None):
        """numba's transpose: the identity permutation returns the array itself; a
        2-D array is transposed into a new C-contiguous array (copied on the device,
        on the array's stream), not a view, so its strides are C strides; other
        ranks raise NotImplementedError."""
        if axes is not None:
            axes = tuple(operator.index(a) for a in axes)
            if axes == tuple(range(self.ndim)):
                return self
        if self.ndim != 2:
            raise NotImplementedError("transposing a non-2D DeviceNDArray isn't supported")
        if axes is not None and sorted(axes) != [0, 1]:
            raise ValueError(f"invalid axes list {axes}")
        from .kernels.transpose import transpose
        return transpose(self)

    @property
    def T(self):
        return self.transpose()

    def view(self, dtype):
        """The same memory seen as another dtype (NumPy's rules: a different
        item size rescales the last axis, which must then be contiguous)."""
        dtype = np.dtype(dtype)
        code, record = _element(dtype)
        shape, strides = list(self.shape), list(self.strides)
        if dtype.itemsize != self.itemsize:
            if self.ndim == 0:
                raise ValueError("Changing the dtype of a 0d array is only supported if the itemsize "
                                 "is unchanged")
            if shape[-1] != 1 and strides[-1] != self.itemsize:
                raise ValueError("To change to a dtype of a different size, the last axis must be "
                                 "contiguous")
            shape[-1], rem = divmod(shape[-1] * self.itemsize, dtype.itemsize)
            if rem:
                raise ValueError("When changing to a larger dtype, its size must be a divisor of the "
                                 "total size in bytes of the last axis of the array.")
            strides[-1] = dtype.itemsize
        v = DeviceArray.__new__(type(self))
        _core.DeviceArrayBase.__init__(v, tuple(shape), tuple(strides), code, self._owner, self._ptr,
                                       readonly=self.readonly, target=self._target,
                                       device=self._device, stream=self.stream, record=record)
        return v

    # ---- interop ----

    @property
    def __cuda_array_interface__(self):
        if self._target != "cuda":
            raise AttributeError("__cuda_array_interface__ exists only for arrays of the cuda "
                                 "target (this one is on the cpu target)")
        s = self.stream
        handle = _core.stream_handle(s)
        cai = {
            "shape": self.shape,
            "strides": None if self.is_c_contiguous() else self.strides,
            "data": (self._ptr if self.size else 0, self.readonly),
            "typestr": self.dtype.str,
            "version": 3,
            # None: work queued on the legacy default stream orders itself with
            # the consumer's blocking streams; a creation stream must be waited on.
            "stream": handle if handle else None,
        }
        if self._record is not None:
            cai["descr"] = self._record.descr   # the fields of a record ("|V16" alone has none)
        return cai

    def __dlpack_device__(self):
        return (2, self._device) if self._target == "cuda" else (1, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if copy:
            raise BufferError("gpujit device arrays export without copying only")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"cannot export to device {dl_device}")
        if self._target == "cuda" and stream != -1:
            _order_for_consumer(self.stream, stream)
        elif self._target == "cpu" and stream not in (None, -1):
            raise BufferError("stream must be None for a cpu-target array")
        versioned = max_version is not None and tuple(max_version) >= (1, 0)
        return self._dlpack_capsule(versioned)


def _kept_stream(stream):
    """What an array keeps as its stream: None for the default (0 or None), else the
    object given (a Stream, also the cpu target's inert one: bind() returns it)."""
    if stream is None or (not isinstance(stream, _core.Stream) and stream == 0):
        return None
    return stream


def _core_dims(shape, strides):
    """(length, stride) of the dimensions that are neither broadcast (stride 0)
    nor of length 1: what decides the memory layout."""
    return [(n, s) for n, s in zip(shape, strides) if s != 0 and n != 1]


def _is_contiguous_core(shape, strides, itemsize):
    """Are the elements, leaving out broadcast dimensions, one C- or F-contiguous block?"""
    if any(n == 0 for n in shape):
        return True
    dims = _core_dims(shape, strides)
    for order in (dims[::-1], dims):
        expect = itemsize
        for n, s in order:
            if s != expect:
                break
            expect *= n
        else:
            return True
    return False


errmsg_contiguous_buffer = ("Array contains non-contiguous buffer and cannot be transferred as a single "
                            "memory region. Please ensure contiguous buffer with numpy .ascontiguousarray()")


def _is_default(stream):
    return stream == 0 or (isinstance(stream, _core.Stream) and stream.handle == 0)


def _order_for_consumer(ours, theirs):
    """Make the consumer's stream wait for work queued on ours (DLPack's contract)."""
    ours_h = int(ours) if ours is not None else 0
    theirs_h = 1 if theirs is None else int(theirs)
    # Our work on the legacy default stream is ordered before later work on any
    # default stream; otherwise make their stream wait for an event on ours.
    if theirs_h == ours_h or (ours_h == 0 and theirs_h in (1, 2)):
        return
    ev = _core.Event(timing=False)
    ev.record(ours_h)
    ev.wait(theirs_h)


def _rebuild_device_array(host):
    return to_device(host)


def to_device(obj, stream=0, copy=True, to=None):
    """Copy `obj`, a NumPy array (or array-like), to a new DeviceArray, or into the
    DeviceArray `to`, on `stream` (0: the default stream); copy=False makes the array
    without copying the data. The device array has the host array's strides when its
    elements are one contiguous block (C or F order, broadcast dimensions kept as
    stride 0), else it is a C-contiguous copy. A device array is returned as it is."""
    if to is not None:
        to.copy_to_device(obj, stream=stream)
        return to
    if isinstance(obj, _core.DeviceArrayBase):
        return obj
    a = np.asarray(obj)
    _element(a.dtype)
    keep = _is_contiguous_core(a.shape, a.strides, a.itemsize) and all(s >= 0 for s in a.strides)
    d = DeviceArray(a.shape, a.strides if keep else None, a.dtype, stream=stream)
    if copy:
        d.copy_to_device(a, stream=stream)
    return d


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
    """A new uninitialised DeviceArray of `shape` (an int or a tuple) and `dtype`, laid out
    by `strides` in bytes if given, else in `order` ('C' or 'F'); its copies default to
    `stream`."""
    shape = _shape_tuple(shape)
    if strides is None and order == "F":
        itemsize = np.dtype(dtype).itemsize
        strides = tuple(reversed(_c_strides(tuple(reversed(shape)), itemsize)))
    return DeviceArray(shape, strides, dtype, stream=stream)


class _Flags(dict):
    """An array's flags, by key (as NumPy's flags['C_CONTIGUOUS']) and attribute (c_contiguous)."""

    def __getattr__(self, name):
        try:
            return self[name.upper()]
        except KeyError:
            raise AttributeError(name) from None


def _strides_like(ary):
    """Contiguous strides keeping ary's order of axes, as np.empty_like(ary) (order 'K') picks:
    a C- or F-contiguous array keeps its layout, any other is laid out with the axes in the
    order of their strides' magnitudes, largest outermost."""
    shape, itemsize = tuple(ary.shape), np.dtype(ary.dtype).itemsize
    flags = ary.flags
    if len(shape) <= 1 or flags["C_CONTIGUOUS"]:
        return _c_strides(shape, itemsize)
    if flags["F_CONTIGUOUS"]:
        return tuple(reversed(_c_strides(tuple(reversed(shape)), itemsize)))
    order = sorted(range(len(shape)), key=lambda k: -abs(ary.strides[k]))  # stable: ties keep axis order
    strides, step = [0] * len(shape), itemsize
    for k in reversed(order):
        strides[k] = step
        step *= shape[k]
    return tuple(strides)


def device_array_like(ary, stream=0):
    """A new uninitialised DeviceArray with ary's shape, dtype and order of axes
    (contiguous); its copies default to `stream`."""
    return DeviceArray(tuple(ary.shape), _strides_like(ary), ary.dtype, stream=stream)


def pinned_array_like(ary):
    """pinned_array() with ary's shape, dtype and order of axes (contiguous)."""
    return pinned_array(tuple(ary.shape), ary.dtype, strides=_strides_like(ary))


def mapped_array(shape, dtype=np.float64, strides=None, order="C", stream=0, portable=False, wc=False):
    """A host array a kernel can take (numba's mapped memory). gpujit passes host arrays to
    kernels by copying them to the device and back around the launch, so this is
    pinned_array(): page-locked memory, which makes those copies fast. On the cuda target
    it is a MappedArray, which also exports __cuda_array_interface__ (with `stream`).
    shape, dtype, strides and order as device_array's; portable and wc (numba's
    allocation flags) are accepted and change nothing."""
    return _mapped(pinned_array(shape, dtype, strides=strides, order=order), stream)


def mapped_array_like(ary, stream=0, portable=False, wc=False):
    """mapped_array() with ary's shape, dtype and order of axes (contiguous); stream,
    portable and wc as mapped_array's."""
    return _mapped(pinned_array_like(ary), stream)


def auto_device(obj, stream=0, copy=True, user_explicit=False):
    """(a DeviceArray holding obj, True), or (obj, False) if it is a device array already.
    A NumPy array that is neither C- nor F-contiguous raises ValueError."""
    if isinstance(obj, _core.DeviceArrayBase):
        return obj, False
    if is_cuda_array(obj):
        return as_cuda_array(obj), False
    a = np.asarray(obj)
    if not (a.flags["C_CONTIGUOUS"] or a.flags["F_CONTIGUOUS"]):
        raise ValueError("auto_device: the array is not contiguous (copy it with np.ascontiguousarray first)")
    if a.flags["F_CONTIGUOUS"] and not a.flags["C_CONTIGUOUS"]:
        d = DeviceArray(a.shape, a.strides, a.dtype, stream=stream)
        if copy:
            d.copy_to_device(a, stream=stream)
        return d, True
    return to_device(a, stream=stream, copy=copy), True


def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
    """A NumPy array in page-locked host memory (cuMemHostAlloc) on the cuda
    target, a plain NumPy array on the cpu target; shape, dtype, strides and order as
    device_array's."""
    shape = _shape_tuple(shape)
    dtype = np.dtype(dtype)
    if math.prod(shape) == 0 or (_core.get_target() == "cpu" and strides is None):
        return np.empty(shape, dtype=dtype, order=order)
    size = math.prod(shape)
    if _core.get_target() == "cpu":
        flat = np.empty(size, dtype=dtype)
    else:
        alloc = _alloc(size * dtype.itemsize, pinned=True)
        flat = np.frombuffer(alloc, dtype=dtype, count=size)  # keeps alloc alive
    return flat.reshape(shape, order=order) if strides is None else np.lib.stride_tricks.as_strided(
        flat, shape, strides)


def managed_array(shape, dtype=np.float64, strides=None, order="C", stream=0, attach_global=True):
    """numba's unified-memory array; here the same memory as mapped_array (the
    host's, reachable from the device), so the same semantics where managed
    memory would migrate pages to the device. shape, dtype, strides, order and stream
    as mapped_array's; attach_global (numba's attachment flag) is accepted and changes
    nothing."""
    return _mapped(pinned_array(shape, dtype, strides, order), stream)


def _f_only(ary):
    """Is ary F-contiguous and not C-contiguous (arrays without NumPy's flags: no)?"""
    flags = getattr(ary, "flags", None)
    try:
        return not flags["C_CONTIGUOUS"] and bool(flags["F_CONTIGUOUS"])
    except (TypeError, KeyError):
        return False


def is_cuda_array(obj):
    """True if obj exports __cuda_array_interface__."""
    try:
        return obj.__cuda_array_interface__ is not None
    except Exception:
        return False


def _cai_sync(handle):
    """Wait for the stream a __cuda_array_interface__ names (v3: the producer's work on it
    comes before the consumer's), unless config.CUDA_ARRAY_INTERFACE_SYNC is off. Through
    Stream.synchronize, so that code patching it sees every wait; the launcher calls this
    for each array argument whose interface names a stream."""
    from . import config
    if config.CUDA_ARRAY_INTERFACE_SYNC:
        _Stream(int(handle)).synchronize()


def from_cuda_array_interface(desc, owner=None, sync=True):
    """A DeviceArray viewing the memory a __cuda_array_interface__ dict `desc` describes (no copy);
    it keeps `owner` alive (numba's cuda.from_cuda_array_interface). A named stream becomes
    the array's default stream (an external one) and is waited for when `sync` and
    config.CUDA_ARRAY_INTERFACE_SYNC are true. Masked arrays are refused."""
    if not isinstance(desc, dict):
        raise TypeError("a __cuda_array_interface__ is a dict, not %s" % type(desc).__name__)
    if desc.get("mask") is not None:
        raise NotImplementedError("Masked arrays are not supported")
    if _core.get_target() != "cuda":
        raise NotImplementedError("__cuda_array_interface__ describes GPU memory, which the cpu target's "
                                  "device arrays (host memory) cannot view")
    try:
        shape, typestr, (ptr, readonly) = tuple(desc["shape"]), desc["typestr"], desc["data"]
    except (KeyError, TypeError, ValueError):
        raise TypeError("malformed __cuda_array_interface__ (it needs shape, typestr and data=(ptr, readonly)): "
                        "%r" % (desc,)) from None
    code = _dtype_code(np.dtype(typestr))
    strides = desc.get("strides")
    handle = desc.get("stream")
    stream = None
    if handle is not None:
        try:
            handle = operator.index(handle) if not isinstance(handle, bool) else 0
        except TypeError:
            handle = 0
        if handle == 0:
            raise ValueError("the stream of a __cuda_array_interface__ is None or a nonzero int, not %r"
                             % (desc.get("stream"),))
        stream = _Stream(handle)
        if sync:
            _cai_sync(handle)
    v = DeviceArray.__new__(DeviceArray)
    _core.DeviceArrayBase.__init__(v, shape, None if strides is None else tuple(strides), code, owner,
                                   ptr or 0, readonly=bool(readonly), target="cuda",
                                   device=_core.current_device(), stream=stream)
    return v


def as_cuda_array(obj, sync=True):
    """A DeviceArray viewing another library's CUDA array `obj` (no copy); it keeps obj
    alive. A device array's own interface is read too (a view of the same memory). sync:
    wait for the stream the interface names, as from_cuda_array_interface does."""
    if not is_cuda_array(obj):
        raise TypeError("*obj* doesn't implement the cuda array interface.")
    return from_cuda_array_interface(obj.__cuda_array_interface__, owner=obj, sync=sync)


class MappedArray(np.ndarray):
    """A NumPy array in page-locked host memory that the GPU reaches at the same address
    (mapped_array, managed_array on the cuda target): it also exports
    __cuda_array_interface__, naming the stream it was made with. Its views do too; a
    new array NumPy computes from it (m * 2) is in ordinary memory and does not."""

    def __array_finalize__(self, obj):
        span = getattr(obj, "_cai_span", None)
        if span is not None and not span[0] <= self.__array_interface__["data"][0] <= span[1]:
            span = None
        self._cai_span = span
        self._cai_stream = getattr(obj, "_cai_stream", None) if span is not None else None

    @property
    def __cuda_array_interface__(self):
        if self._cai_span is None:
            raise AttributeError("__cuda_array_interface__: this array is not in mapped memory")
        s = self._cai_stream
        handle = _core.stream_handle(s)
        return {
            "shape": self.shape,
            "strides": None if self.flags.c_contiguous else self.strides,
            "data": (self.ctypes.data if self.size else 0, not self.flags.writeable),
            "typestr": self.dtype.str,
            "version": 3,
            "stream": handle if handle else None,
        }


def _mapped(ary, stream):
    """ary as a MappedArray remembering `stream` (the cuda target's pinned memory only)."""
    if _core.get_target() != "cuda" or not isinstance(ary, np.ndarray):
        return ary
    m = ary.view(MappedArray)
    start = ary.__array_interface__["data"][0]
    m._cai_span = (start, start + ary.nbytes)     # the pinned memory's addresses
    m._cai_stream = _kept_stream(stream)
    return m


DeviceNDArray = DeviceArray  # numba's name
