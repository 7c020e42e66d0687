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
atomic = _Namespace(
    "gpujit.atomic", "Atomic operations on array elements; each returns the element's old value.",
    add="add(array, index, value): array[index] += value.",
    sub="sub(array, index, value): array[index] -= value.",
    and_="and_(array, index, value): array[index] &= value (integers).",
    or_="or_(array, index, value): array[index] |= value (integers).",
    xor="xor(array, index, value): array[index] ^= value (integers).",
    exch="exch(array, index, value): array[index] = value.",
    max="max(array, index, value): array[index] = max(array[index], value); NaN on either side: no change.",
    min="min(array, index, value): array[index] = min(array[index], value); NaN on either side: no change.",
    nanmax="nanmax(array, index, value): as max, but a NaN element is replaced and a NaN value ignored.",
    nanmin="nanmin(array, index, value): as min, but a NaN element is replaced and a NaN value ignored.",
    inc="inc(array, index, value): array[index] = 0 if array[index] >= value else array[index] + 1 (unsigned).",
    dec="dec(array, index, value): array[index] = value if array[index] == 0 or array[index] > value "
        "else array[index] - 1 (unsigned).",
    cas="cas(array, index, old, value): array[index] = value if array[index] == old (integers).",
    compare_and_swap="compare_and_swap(array, old, value): cas on element 0 of a 1-D array.")
const = _Namespace("gpujit.const", "Constant memory.",
                   array_like="array_like(ndarray): a read-only copy of a global NumPy array, made at compile time.")

syncthreads_count = _KernelOnly("gpujit.syncthreads_count",
                                "syncthreads_count(pred): barrier; the number of threads whose pred is true.")
syncthreads_and = _KernelOnly("gpujit.syncthreads_and", "syncthreads_and(pred): barrier; 1 if pred is true in every thread.")
syncthreads_or = _KernelOnly("gpujit.syncthreads_or", "syncthreads_or(pred): barrier; 1 if pred is true in any thread.")
syncwarp = _KernelOnly("gpujit.syncwarp", "syncwarp(mask=0xFFFFFFFF): barrier for the lanes of the warp in mask.")
threadfence = _KernelOnly("gpujit.threadfence", "Memory fence for the device (membar.gl).")
threadfence_block = _KernelOnly("gpujit.threadfence_block", "Memory fence for the block (membar.cta).")
threadfence_system = _KernelOnly("gpujit.threadfence_system", "Memory fence for the system (membar.sys).")
shfl_sync = _KernelOnly("gpujit.shfl_sync", "shfl_sync(mask, value, src_lane): value of lane src_lane.")
shfl_up_sync = _KernelOnly("gpujit.shfl_up_sync", "shfl_up_sync(mask, value, delta): value of lane laneid - delta.")
shfl_down_sync = _KernelOnly("gpujit.shfl_down_sync", "shfl_down_sync(mask, value, delta): value of lane laneid + delta.")
shfl_xor_sync = _KernelOnly("gpujit.shfl_xor_sync", "shfl_xor_sync(mask, value, lane_mask): value of lane laneid ^ lane_mask.")
all_sync = _KernelOnly("gpujit.all_sync", "all_sync(mask, pred): pred is true in every lane of mask.")
any_sync = _KernelOnly("gpujit.any_sync", "any_sync(mask, pred): pred is true in some lane of mask.")
eq_sync = _KernelOnly("gpujit.eq_sync", "eq_sync(mask, pred): pred is the same in every lane of mask.")
ballot_sync = _KernelOnly("gpujit.ballot_sync", "ballot_sync(mask, pred): uint32, bit i set if lane i's pred is true.")
match_any_sync = _KernelOnly("gpujit.match_any_sync", "match_any_sync(mask, value): uint32 mask of lanes holding value.")
match_all_sync = _KernelOnly("gpujit.match_all_sync",
                             "match_all_sync(mask, value): (mask, True) if all lanes hold value, else (0, False).")
activemask = _KernelOnly("gpujit.activemask", "activemask(): uint32 mask of the warp's active lanes.")
lanemask_lt = _KernelOnly("gpujit.lanemask_lt", "lanemask_lt(): uint32 mask of the lanes below this one.")
fma = _KernelOnly("gpujit.fma", "fma(a, b, c): a * b + c, rounded once.")
cbrt = _KernelOnly("gpujit.cbrt", "cbrt(x): cube root.")
popc = _KernelOnly("gpujit.popc", "popc(x): number of set bits.")
clz = _KernelOnly("gpujit.clz", "clz(x): number of leading zero bits.")
ffs = _KernelOnly("gpujit.ffs", "ffs(x): uint32, 1 + the position of the lowest set bit, 0 if x is 0.")
brev = _KernelOnly("gpujit.brev", "brev(x): the bits reversed (uint32 or uint64).")
cg = _Namespace("gpujit.cg", "Cooperative groups: the grid and the block as groups that sync.",
                this_grid="this_grid(): the grid group; g.sync() waits for every thread of the grid "
                          "(the kernel is then launched cooperatively).",
                this_thread_block="this_thread_block(): the block group; b.sync() is syncthreads().")

selp = _KernelOnly("gpujit.selp", "selp(pred, a, b): a if pred else b, both evaluated, without a branch.")
fp16 = _Namespace(
    "gpujit.fp16", "float16 functions (numba.cuda's cuda.fp16): each takes float16 values (other numbers "
    "convert) and gives a float16, or a bool for the comparisons.",
    hadd="hadd(a, b): a + b.", hsub="hsub(a, b): a - b.", hmul="hmul(a, b): a * b.", hdiv="hdiv(a, b): a / b.",
    hfma="hfma(a, b, c): a * b + c, rounded once.", hneg="hneg(a): -a.", habs="habs(a): |a|.",
    hmax="hmax(a, b): the larger; a NaN loses.", hmin="hmin(a, b): the smaller; a NaN loses.",
    hceil="hceil(a)", hfloor="hfloor(a)", htrunc="htrunc(a)", hrint="hrint(a): to the nearest, ties to even.",
    hsqrt="hsqrt(a)", hrsqrt="hrsqrt(a): 1 / sqrt(a).", hrcp="hrcp(a): 1 / a.", hexp="hexp(a)",
    hexp2="hexp2(a)", hexp10="hexp10(a)", hlog="hlog(a)", hlog2="hlog2(a)", hlog10="hlog10(a)", hsin="hsin(a)",
    hcos="hcos(a)", htanh="htanh(a)", htanh_approx="htanh_approx(a): tanh; gpujit computes it as htanh, at least as "
    "exact as the hardware approximation.", heq="heq(a, b): a == b.", hne="hne(a, b): a != b, False if either is NaN.",
    hgt="hgt(a, b): a > b.", hge="hge(a, b): a >= b.", hlt="hlt(a, b): a < b.", hle="hle(a, b): a <= b.")

wmma = _Namespace(
    "gpujit.wmma", "Warp-level matrix multiply-accumulate on tensor cores (CUDA C++'s nvcuda::wmma; "
    "mma.sync, compute capability 8.0 and up). Every lane of the warp makes each call together.",
    fragment="fragment(use, m, n, k, dtype[, layout]): a fragment of a matrix, this lane's elements "
             "(a local array; docs/language.md gives which elements a lane holds).",
    fill_fragment="fill_fragment(frag, value): every element of the fragment set to value.",
    load_matrix_sync="load_matrix_sync(frag, array[, ldm][, layout]): the fragment loaded from the tile at "
                     "array[0, 0] (a 2-D array) or array[0] with leading dimension ldm (a 1-D array).",
    store_matrix_sync="store_matrix_sync(array, frag[, ldm], layout): an accumulator stored to the tile.",
    mma_sync="mma_sync(d, a, b, c): d = a @ b + c, warp-collective.",
    matrix_a="The A operand (m x k).", matrix_b="The B operand (k x n).",
    accumulator="The C and D operands (m x n).", row_major="Row-major memory: element (i, j) at [i, j].",
    col_major="Column-major memory: element (i, j) at [j, i].",
    mem_row_major="row_major, by CUDA's name for an accumulator's memory.",
    mem_col_major="col_major, by CUDA's name for an accumulator's memory.")
cp_async = _Namespace(
    "gpujit.cp_async", "Asynchronous copies from global to shared memory (cp.async, compute capability 8.0 "
    "and up). The CPU target performs a copy at the wait that covers it.",
    copy="copy(dst, dst_index, src, src_index, nbytes): starts copying nbytes (4, 8 or 16, aligned so) from "
         "&src[src_index] (global) to &dst[dst_index] (shared).",
    commit_group="commit_group(): the copies started since the last commit become a group.",
    wait_group="wait_group(n): waits until at most n (a constant, 0-7) of the newest groups are pending.",
    wait_all="wait_all(): commit_group(), then waits for every copy.")
mbarrier = _Namespace(
    "gpujit.mbarrier", "Split arrive/wait barriers, each an int64 or uint64 element of a shared array "
    "(mbarrier.*: compute capability 8.0 and up; the transaction counts and try_wait, 9.0).",
    init="init(bars, i, count): barrier bars[i] expects count arrivals per phase.",
    arrive="arrive(bars, i): this thread's arrival; returns the phase's token (uint64).",
    arrive_expect_tx="arrive_expect_tx(bars, i, nbytes): expect_tx, then arrive; returns the token.",
    expect_tx="expect_tx(bars, i, nbytes): the phase also waits for nbytes of transactions.",
    complete_tx="complete_tx(bars, i, nbytes): nbytes of the phase's transactions are done.",
    test_wait="test_wait(bars, i, token): whether the phase of token has completed.",
    try_wait="try_wait(bars, i, token): as test_wait, waiting a while first on the GPU.",
    test_wait_parity="test_wait_parity(bars, i, parity): whether the phase of that parity (0 or 1) has completed.",
    try_wait_parity="try_wait_parity(bars, i, parity): as test_wait_parity, waiting a while first on the GPU.")

_TOP = (threadIdx, blockIdx, blockDim, gridDim, laneid, warpsize, grid, gridsize, syncthreads, shared, local, atomic,
        const, syncthreads_count, syncthreads_and, syncthreads_or, syncwarp, threadfence, threadfence_block,
        threadfence_system, wmma, cp_async, mbarrier, shfl_sync, shfl_up_sync, shfl_down_sync, shfl_xor_sync, all_sync, any_sync, eq_sync,
        ballot_sync, match_any_sync, match_all_sync, activemask, lanemask_lt, fma, cbrt, popc, clz, ffs, brev, selp, fp16, cg)

# Loads and stores of a global array's element with a PTX cache operator (numba's cache hints;
# plain loads and stores on the CPU target).
_LOAD_HINTS = {"ldca": "cache at all levels", "ldcg": "cache in L2, not L1", "ldcs": "streaming, likely used once",
               "ldlu": "last use", "ldcv": "do not cache, fetch again"}
_STORE_HINTS = {"stcg": "cache in L2, not L1", "stcs": "streaming, likely accessed once", "stwb": "write back",
                "stwt": "write through to system memory"}
ldca, ldcg, ldcs, ldlu, ldcv = (_KernelOnly("gpujit." + n, "%s(array, index): the element, loaded with "
                                            "ld.global.%s (%s)." % (n, n[2:], d)) for n, d in _LOAD_HINTS.items())
stcg, stcs, stwb, stwt = (_KernelOnly("gpujit." + n, "%s(array, index, value): array[index] = value, stored with "
                                      "st.global.%s (%s)." % (n, n[2:], d)) for n, d in _STORE_HINTS.items())
_TOP += (ldca, ldcg, ldcs, ldlu, ldcv, stcg, stcs, stwb, stwt)
nanosleep = _KernelOnly("gpujit.nanosleep", "nanosleep(ns): the thread sleeps about ns nanoseconds (between 0 and "
                        "2*ns; nanosleep.u32, sm_70 and up), converted to uint32; no sleep on the CPU target.")
_TOP += (nanosleep,)


def _walk(obj):
    yield obj
    for name, member in vars(obj).items():
        if isinstance(member, _KernelOnly) and not name.startswith("_"):
            yield from _walk(member)


# NumPy's ufuncs a kernel may call on scalars (the compiler's table has their meaning). Aliases
# (np.abs is np.absolute, np.true_divide is np.divide, np.mod is np.remainder) are one object:
# its path is the first name listed.
_NUMPY_UFUNCS = (
    "sqrt", "fabs", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "cbrt", "absolute", "isnan",
    "isinf", "isfinite", "floor", "ceil", "trunc", "rint", "minimum", "maximum", "fmin", "fmax", "fmod",
    "copysign", "hypot", "arctan2", "nextafter", "radians", "deg2rad", "degrees", "rad2deg", "add", "subtract",
    "multiply", "divide", "floor_divide", "remainder", "power", "bitwise_and", "bitwise_or", "bitwise_xor",
    "left_shift", "right_shift", "less", "less_equal", "equal", "not_equal", "greater", "greater_equal",
    "negative", "positive", "invert", "logical_not", "logical_and", "logical_or", "logical_xor", "sign",
    # these have no intrinsic: gpujit.ufuncloop writes them in Python
    "square", "reciprocal", "conjugate", "signbit", "spacing", "logaddexp", "logaddexp2", "float_power", "gcd",
    "lcm", "ldexp")

# NumPy's whole-array reductions a kernel may call (np.sum(a); the compiler's reductions.c).
_NUMPY_REDUCTIONS = (
    "sum", "prod", "min", "amin", "max", "amax", "mean", "var", "std", "all", "any", "argmin", "argmax",
    "count_nonzero", "nansum", "nanprod", "nanmin", "nanmax", "nanmean", "nanvar", "nanstd")


_paths = {}  # the registry: the compiler holds this dict and sees what add_paths() adds to it


def add_paths(objs):
    """Name intrinsic objects made after import (gpujit.vector_types's) to the compiler."""
    for obj in objs:
        _paths[id(obj)] = obj._path


def registry():
    """{id(obj): path} for every intrinsic object (the compiler's view of them). gpujit's
    scalar types (gpujit.float32, gpujit.types.int32) are named as NumPy's, so a kernel
    uses them as it uses np.float32: as casts and as dtypes."""
    from .types import NUMBERS
    paths = _paths
    paths.update({id(t): path for path, t in NUMBERS.items()})
    import numpy
    for name in _NUMPY_UFUNCS:
        obj = getattr(numpy, name, None)
        if obj is not None and id(obj) not in paths:
            paths[id(obj)] = "numpy." + name
    for name in _NUMPY_REDUCTIONS:
        obj = getattr(numpy, name, None)
        if obj is not None and id(obj) not in paths:
            paths[id(obj)] = "numpy." + name
    for top in _TOP:
        for obj in _walk(top):
            paths[id(obj)] = obj._path
    return paths
