"""The names kernels use: gpu.threadIdx, gpu.grid, gpu.shared.array, ...

Inside a kernel these are never called: the compiler recognises each object by
identity (the registry below gives it a dotted path) and emits code for it.
Called from ordinary Python they raise, as numba.cuda's do.
"""


class _KernelOnly:
    """An object that only means something inside a @gpujit.jit kernel."""

    def __init__(self, path, doc=""):
        self._path = path
        self.__doc__ = doc

    def __repr__(self):
        return "<gpujit intrinsic %s>" % self._path[len("gpujit."):]

    def __call__(self, *args, **kwargs):
        raise RuntimeError("%s() can only be called inside a @gpujit.jit kernel" % self._path[len("gpujit."):])


class _Dim3(_KernelOnly):
    """threadIdx, blockIdx, blockDim, gridDim: .x, .y, .z are int32."""

    def __init__(self, path, doc):
        super().__init__(path, doc)
        self.x = _KernelOnly(path + ".x")
        self.y = _KernelOnly(path + ".y")
        self.z = _KernelOnly(path + ".z")


class _Namespace(_KernelOnly):
    def __init__(self, path, doc, **members):
        super().__init__(path, doc)
        for name, member_doc in members.items():
            setattr(self, name, _KernelOnly(path + "." + name, member_doc))


threadIdx = _Dim3("gpujit.threadIdx", "The thread's index in its block.")
blockIdx = _Dim3("gpujit.blockIdx", "The block's index in the grid.")
blockDim = _Dim3("gpujit.blockDim", "The block's shape.")
gridDim = _Dim3("gpujit.gridDim", "The grid's shape, in blocks.")
laneid = _KernelOnly("gpujit.laneid", "The thread's lane in its warp (0..31).")
warpsize = _KernelOnly("gpujit.warpsize", "The warp size, 32.")
grid = _KernelOnly("gpujit.grid", "grid(ndim): the thread's absolute position in the grid (int64 or a tuple).")
gridsize = _KernelOnly("gpujit.gridsize", "gridsize(ndim): the grid's shape in threads.")
syncthreads = _KernelOnly("gpujit.syncthreads", "Barrier for every thread of the block.")
shared = _Namespace("gpujit.shared", "Per-block shared memory.",
                    array="array(shape, dtype): a static shared array.")
local = _Namespace("gpujit.local", "Per-thread local memory.",
                   array="array(shape, dtype): a per-thread array.")
atomic = _Namespace("gpujit.atomic", "Atomic operations on array elements.",
                    add="add(array, index, value): atomically add; returns the old value.")


def _walk(obj):
    yield obj
    for name, member in vars(obj).items():
        if isinstance(member, _KernelOnly) and not name.startswith("_"):
            yield from _walk(member)


def registry():
    """{id(obj): path} for every intrinsic object (the compiler's view of them)."""
    paths = {}
    for top in (threadIdx, blockIdx, blockDim, gridDim, laneid, warpsize, grid, gridsize, syncthreads,
                shared, local, atomic):
        for obj in _walk(top):
            paths[id(obj)] = obj._path
    return paths
