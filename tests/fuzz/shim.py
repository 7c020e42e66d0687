"""A pure-Python stand-in for `gpujit` so CPython can run a kernel body as one thread.

The fuzzer's reference executes the generated kernel's own code object with `gpu`
bound to a `Shim` for each simulated thread. Values must behave as the kernel's do:

- Arrays are wrapped (`RefArray`) so loads give Python ints/floats, not NumPy scalars:
  np.int64 arithmetic wraps silently and np.float32 under NEP 50 would turn
  `np.float32 + python float` into float32, unlike the kernel's float64.
- Integer casts wrap to their width two's-complement (as a trunc/zext in the kernel)
  and return Python ints; gpu.float32 returns np.float32 so that float32 op float32
  stays float32 (the generator only combines float32 with float32).
- syncthreads() meets the other threads of the block at a threading.Barrier;
  shared.array() hands every thread of a block the same array (k-th call -> k-th array).
"""
import threading

import numpy as np

_INT_WIDTH = {"int8": (8, True), "int16": (16, True), "int32": (32, True), "int64": (64, True),
              "uint8": (8, False), "uint16": (16, False), "uint32": (32, False), "uint64": (64, False)}


def wrap_int(value, name="int64"):
    bits, signed = _INT_WIDTH[name]
    v = int(value) & ((1 << bits) - 1)
    if signed and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def _bfloat16(x):
    """x rounded once to bfloat16 (a double through a float32 rounded to odd, exact for
    the second rounding), as the kernels' conversion."""
    import ml_dtypes
    if isinstance(x, (int, np.integer)):
        x = float(x)   # the fuzzer's ints are below 2**53: exact
    f = np.float32(x)
    if isinstance(x, float) and float(f) != x and x == x:
        u = int(np.array([f]).view(np.uint32)[0])
        if abs(float(f)) > abs(x):
            u -= 1
        f = np.array([u | 1], np.uint32).view(np.float32)[0]
    return ml_dtypes.bfloat16(f)


class _Cast:
    """gpu.int32 etc.: callable as a cast, and usable as a dtype argument."""

    def __init__(self, name):
        self.name = name
        if name == "bfloat16":
            import ml_dtypes
            self.dtype = np.dtype(ml_dtypes.bfloat16)
        else:
            self.dtype = np.dtype("bool" if name == "bool_" else name)

    def __call__(self, x):
        if self.name == "float32":
            return np.float32(x)
        if self.name == "float16":    # np.float16 op np.float16 rounds to float16, as kernels do
            return np.float16(x)
        if self.name == "bfloat16":   # ml_dtypes' bfloat16 op bfloat16 rounds once from float32, as kernels do
            return _bfloat16(x)
        if self.name == "float64":
            return float(x)
        if self.name == "bool_":
            return bool(x)
        if isinstance(x, (float, np.floating)):
            x = int(x)           # truncation toward zero, as fptosi
        return wrap_int(x, self.name)


class RefArray:
    """A NumPy array seen as kernels see it: Python scalars in and out."""

    def __init__(self, arr):
        self.arr = arr
        self.shape = arr.shape
        self.size = arr.size
        self.ndim = arr.ndim
        self._int = arr.dtype.kind in "iu"
        self._name = arr.dtype.name

    def __len__(self):
        return self.shape[0]

    def __getitem__(self, idx):
        if isinstance(idx, slice) or (isinstance(idx, tuple) and any(isinstance(k, slice) for k in idx)):
            return RefArray(self.arr[idx])     # a view, as a kernel's slice is
        if self.arr.dtype.names:
            return RefRecord(self.arr[idx])
        return self.arr[idx].item()

    def __setitem__(self, idx, value):
        if self._int:
            value = wrap_int(value, self._name)
        self.arr[idx] = value


class RefRecord:
    """One record of a structured array: its fields as Python scalars, by r.x or r['x']."""

    def __init__(self, rec):
        self._rec = rec

    def __getitem__(self, name):
        return self._rec[name].item()

    def __getattr__(self, name):
        return self._rec[name].item()


class _Dim3:
    def __init__(self, x=0, y=0, z=0):
        self.x, self.y, self.z = x, y, z


class _Namespace:
    def __init__(self, **members):
        self.__dict__.update(members)


class Block:
    """What a block's threads share: the barrier and the shared arrays."""

    def __init__(self, nthreads, use_barrier):
        self.barrier = threading.Barrier(nthreads) if use_barrier else None
        self.shared = []
        self.lock = threading.Lock()


class Shim:
    def __init__(self, block, block_dim, grid_dim):
        self._block = block
        self.blockDim = _Dim3(block_dim, 1, 1)
        self.gridDim = _Dim3(grid_dim, 1, 1)
        self.threadIdx = _Dim3()
        self.blockIdx = _Dim3()
        self.warpsize = 32
        self.laneid = 0
        self._nshared = 0
        self.shared = _Namespace(array=self._shared_array)
        self.local = _Namespace(array=self._local_array)
        self.atomic = _Namespace(add=self._atomic_add, compare_and_swap=self._atomic_compare_and_swap)
        for name in _INT_WIDTH:
            setattr(self, name, _Cast(name))
        self.float16, self.float32, self.float64 = _Cast("float16"), _Cast("float32"), _Cast("float64")
        self.bfloat16 = _Cast("bfloat16")
        self.bool_ = _Cast("bool_")
        self.boolean = self.bool_

    def set_thread(self, tid, bid):
        self.threadIdx.x = tid
        self.blockIdx.x = bid
        self.laneid = tid % 32
        self._nshared = 0

    def grid(self, ndim):
        assert ndim == 1
        return self.blockIdx.x * self.blockDim.x + self.threadIdx.x

    def gridsize(self, ndim):
        assert ndim == 1
        return self.blockDim.x * self.gridDim.x

    def syncthreads(self):
        if self._block.barrier is not None:
            self._block.barrier.wait(timeout=30)

    @staticmethod
    def _dtype(dtype):
        return dtype.dtype if isinstance(dtype, _Cast) else np.dtype(dtype)

    def _shared_array(self, shape, dtype):
        with self._block.lock:
            k = self._nshared
            self._nshared += 1
            if k == len(self._block.shared):
                # uninitialised memory in the kernel: poison it so a read-before-write shows
                self._block.shared.append(RefArray(np.full(shape, 0x5A5A, self._dtype(dtype))))
            return self._block.shared[k]

    def _local_array(self, shape, dtype):
        return RefArray(np.full(shape, 0x5A5A, self._dtype(dtype)))

    def _atomic_compare_and_swap(self, arr, old, value):
        """numba's: element 0 (an empty array raises IndexError), replaced if it equals old."""
        with self._block.lock:
            seen = arr[0]
            if seen == old:
                arr[0] = value
            return seen

    def _atomic_add(self, arr, idx, value):
        with self._block.lock:
            old = arr[idx]
            arr[idx] = old + value
            return old
