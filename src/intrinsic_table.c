/* intrinsic_table.c: the names a kernel can call, one row each: a dotted path (build.c
 * resolves objects to paths, so aliases of modules and functions work), its kind and id.
 * What each kind means, its typing and its lowering, is intrinsics.c's. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gj.h"

/* clang-format off */
static const Intrinsic intrinsics[] = {
    {"gpujit.threadIdx.x", IK_SPECIAL, SP_TID, 0}, {"gpujit.threadIdx.y", IK_SPECIAL, SP_TID, 1},
    {"gpujit.threadIdx.z", IK_SPECIAL, SP_TID, 2}, {"gpujit.blockDim.x", IK_SPECIAL, SP_NTID, 0},
    {"gpujit.blockDim.y", IK_SPECIAL, SP_NTID, 1}, {"gpujit.blockDim.z", IK_SPECIAL, SP_NTID, 2},
    {"gpujit.blockIdx.x", IK_SPECIAL, SP_CTAID, 0}, {"gpujit.blockIdx.y", IK_SPECIAL, SP_CTAID, 1},
    {"gpujit.blockIdx.z", IK_SPECIAL, SP_CTAID, 2}, {"gpujit.gridDim.x", IK_SPECIAL, SP_NCTAID, 0},
    {"gpujit.gridDim.y", IK_SPECIAL, SP_NCTAID, 1}, {"gpujit.gridDim.z", IK_SPECIAL, SP_NCTAID, 2},
    {"gpujit.laneid", IK_SPECIAL, SP_LANEID, 0}, {"gpujit.warpsize", IK_SPECIAL, SP_WARPSIZE, 0},
    {"gpujit.grid", IK_GRID}, {"gpujit.gridsize", IK_GRIDSIZE},
    {"gpujit.syncthreads", IK_SYNCTHREADS},
    {"gpujit.cg.this_grid", IK_CG, CG_THIS_GRID}, {"gpujit.cg.this_thread_block", IK_CG, CG_THIS_BLOCK},
    {"gpujit.cg.GridGroup.sync", IK_CG, CG_GRID_SYNC}, {"gpujit.cg.ThreadBlock.sync", IK_CG, CG_BLOCK_SYNC},
    {"gpujit.shared.array", IK_SHARED_ARRAY}, {"gpujit.local.array", IK_LOCAL_ARRAY},
    {"gpujit.ldca", IK_CACHE_LOAD, CH_CA}, {"gpujit.ldcg", IK_CACHE_LOAD, CH_CG},
    {"gpujit.ldcs", IK_CACHE_LOAD, CH_CS}, {"gpujit.ldlu", IK_CACHE_LOAD, CH_LU},
    {"gpujit.ldcv", IK_CACHE_LOAD, CH_CV}, {"gpujit.stcg", IK_CACHE_STORE, CH_CG},
    {"gpujit.stcs", IK_CACHE_STORE, CH_CS}, {"gpujit.stwb", IK_CACHE_STORE, CH_WB},
    {"gpujit.stwt", IK_CACHE_STORE, CH_WT},
    {"gpujit.atomic.add", IK_ATOMIC, AT_ADD}, {"gpujit.atomic.sub", IK_ATOMIC, AT_SUB},
    {"gpujit.atomic.and_", IK_ATOMIC, AT_AND}, {"gpujit.atomic.or_", IK_ATOMIC, AT_OR},
    {"gpujit.atomic.xor", IK_ATOMIC, AT_XOR}, {"gpujit.atomic.exch", IK_ATOMIC, AT_EXCH},
    {"gpujit.atomic.max", IK_ATOMIC, AT_MAX}, {"gpujit.atomic.min", IK_ATOMIC, AT_MIN},
    {"gpujit.atomic.nanmax", IK_ATOMIC, AT_NANMAX}, {"gpujit.atomic.nanmin", IK_ATOMIC, AT_NANMIN},
    {"gpujit.atomic.inc", IK_ATOMIC, AT_INC}, {"gpujit.atomic.dec", IK_ATOMIC, AT_DEC},
    {"gpujit.atomic.cas", IK_ATOMIC, AT_CAS},
    {"gpujit.atomic.compare_and_swap", IK_ATOMIC, AT_COMPARE_AND_SWAP},
    {"gpujit.syncthreads_count", IK_SYNC_REDUCE, SYNC_COUNT},
    {"gpujit.syncthreads_and", IK_SYNC_REDUCE, SYNC_AND}, {"gpujit.syncthreads_or", IK_SYNC_REDUCE, SYNC_OR},
    {"gpujit.threadfence_block", IK_FENCE, FENCE_BLOCK}, {"gpujit.threadfence", IK_FENCE, FENCE_DEVICE},
    {"gpujit.threadfence_system", IK_FENCE, FENCE_SYSTEM},
    {"gpujit.syncwarp", IK_WARP, WARP_SYNC}, {"gpujit.activemask", IK_WARP, WARP_ACTIVEMASK},
    {"gpujit.shfl_sync", IK_WARP, WARP_SHFL_IDX}, {"gpujit.shfl_up_sync", IK_WARP, WARP_SHFL_UP},
    {"gpujit.shfl_down_sync", IK_WARP, WARP_SHFL_DOWN}, {"gpujit.shfl_xor_sync", IK_WARP, WARP_SHFL_BFLY},
    {"gpujit.all_sync", IK_WARP, WARP_ALL}, {"gpujit.any_sync", IK_WARP, WARP_ANY},
    {"gpujit.eq_sync", IK_WARP, WARP_EQ}, {"gpujit.ballot_sync", IK_WARP, WARP_BALLOT},
    {"gpujit.match_any_sync", IK_WARP, WARP_MATCH_ANY}, {"gpujit.match_all_sync", IK_WARP, WARP_MATCH_ALL},
    {"gpujit.lanemask_lt", IK_LANEMASK_LT},
    {"gpujit.const.array_like", IK_CONST_ARRAY},
    {"builtins.print", IK_PRINT},
    {"gpujit.fma", IK_FMA}, {"gpujit.cbrt", IK_MATH1, 0, 0, "cbrt"},
    {"gpujit.popc", IK_BITS, BITS_POPC}, {"gpujit.clz", IK_BITS, BITS_CLZ}, {"gpujit.ffs", IK_BITS, BITS_FFS},
    {"gpujit.brev", IK_BITS, BITS_BREV},
    {"gpujit.selp", IK_SELP}, {"gpujit.nanosleep", IK_NANOSLEEP},
#define VECTORS(base, T) \
    {"gpujit." base "x1", IK_VECTOR, T, 1}, {"gpujit." base "x2", IK_VECTOR, T, 2}, \
    {"gpujit." base "x3", IK_VECTOR, T, 3}, {"gpujit." base "x4", IK_VECTOR, T, 4}
    VECTORS("int8", TY_INT8), VECTORS("int16", TY_INT16), VECTORS("int32", TY_INT32), VECTORS("int64", TY_INT64),
    VECTORS("uint8", TY_UINT8), VECTORS("uint16", TY_UINT16), VECTORS("uint32", TY_UINT32),
    VECTORS("uint64", TY_UINT64), VECTORS("float32", TY_FLOAT32), VECTORS("float64", TY_FLOAT64),
#undef VECTORS
    {"gpujit.fp16.hadd", IK_FP16, FP16_ADD}, {"gpujit.fp16.hsub", IK_FP16, FP16_SUB},
    {"gpujit.fp16.hmul", IK_FP16, FP16_MUL}, {"gpujit.fp16.hdiv", IK_FP16, FP16_DIV},
    {"gpujit.fp16.hfma", IK_FP16, FP16_FMA}, {"gpujit.fp16.hneg", IK_FP16, FP16_NEG},
    {"gpujit.fp16.habs", IK_FP16, FP16_ABS}, {"gpujit.fp16.hmax", IK_FP16, FP16_MAX},
    {"gpujit.fp16.hmin", IK_FP16, FP16_MIN}, {"gpujit.fp16.hceil", IK_FP16, FP16_CEIL},
    {"gpujit.fp16.hfloor", IK_FP16, FP16_FLOOR}, {"gpujit.fp16.htrunc", IK_FP16, FP16_TRUNC},
    {"gpujit.fp16.hrint", IK_FP16, FP16_RINT}, {"gpujit.fp16.hsqrt", IK_FP16, FP16_SQRT},
    {"gpujit.fp16.hrsqrt", IK_FP16, FP16_RSQRT}, {"gpujit.fp16.hrcp", IK_FP16, FP16_RCP},
    {"gpujit.fp16.hexp", IK_FP16, FP16_EXP}, {"gpujit.fp16.hexp2", IK_FP16, FP16_EXP2},
    {"gpujit.fp16.hexp10", IK_FP16, FP16_EXP10}, {"gpujit.fp16.hlog", IK_FP16, FP16_LOG},
    {"gpujit.fp16.hlog2", IK_FP16, FP16_LOG2}, {"gpujit.fp16.hlog10", IK_FP16, FP16_LOG10},
    {"gpujit.fp16.hsin", IK_FP16, FP16_SIN}, {"gpujit.fp16.hcos", IK_FP16, FP16_COS},
    {"gpujit.fp16.htanh", IK_FP16, FP16_TANH}, {"gpujit.fp16.htanh_approx", IK_FP16, FP16_TANH_APPROX},
    {"gpujit.fp16.heq", IK_FP16, FP16_EQ}, {"gpujit.fp16.hne", IK_FP16, FP16_NE},
    {"gpujit.fp16.hgt", IK_FP16, FP16_GT}, {"gpujit.fp16.hge", IK_FP16, FP16_GE},
    {"gpujit.fp16.hlt", IK_FP16, FP16_LT}, {"gpujit.fp16.hle", IK_FP16, FP16_LE},
    {"gpujit.wmma.fragment", IK_WMMA, WMMA_FRAGMENT}, {"gpujit.wmma.fill_fragment", IK_WMMA, WMMA_FILL},
    {"gpujit.wmma.load_matrix_sync", IK_WMMA, WMMA_LOAD}, {"gpujit.wmma.store_matrix_sync", IK_WMMA, WMMA_STORE},
    {"gpujit.wmma.mma_sync", IK_WMMA, WMMA_MMA},
    {"gpujit.wmma.matrix_a", IK_WMMA, WMMA_CONST}, {"gpujit.wmma.matrix_b", IK_WMMA, WMMA_CONST},
    {"gpujit.wmma.accumulator", IK_WMMA, WMMA_CONST}, {"gpujit.wmma.row_major", IK_WMMA, WMMA_CONST},
    {"gpujit.wmma.col_major", IK_WMMA, WMMA_CONST}, {"gpujit.wmma.mem_row_major", IK_WMMA, WMMA_CONST},
    {"gpujit.wmma.mem_col_major", IK_WMMA, WMMA_CONST},
    {"gpujit.cp_async.copy", IK_CP_ASYNC, CPA_COPY}, {"gpujit.cp_async.commit_group", IK_CP_ASYNC, CPA_COMMIT},
    {"gpujit.cp_async.wait_group", IK_CP_ASYNC, CPA_WAIT_GROUP}, {"gpujit.cp_async.wait_all", IK_CP_ASYNC, CPA_WAIT_ALL},
    {"gpujit.mbarrier.init", IK_MBARRIER, MBAR_INIT}, {"gpujit.mbarrier.arrive", IK_MBARRIER, MBAR_ARRIVE},
    {"gpujit.mbarrier.arrive_expect_tx", IK_MBARRIER, MBAR_ARRIVE_EXPECT_TX},
    {"gpujit.mbarrier.expect_tx", IK_MBARRIER, MBAR_EXPECT_TX},
    {"gpujit.mbarrier.complete_tx", IK_MBARRIER, MBAR_COMPLETE_TX},
    {"gpujit.mbarrier.test_wait", IK_MBARRIER, MBAR_TEST_WAIT}, {"gpujit.mbarrier.try_wait", IK_MBARRIER, MBAR_TRY_WAIT},
    {"gpujit.mbarrier.test_wait_parity", IK_MBARRIER, MBAR_TEST_WAIT_PARITY},
    {"gpujit.mbarrier.try_wait_parity", IK_MBARRIER, MBAR_TRY_WAIT_PARITY},
    {"builtins.range", IK_RANGE}, {"builtins.len", IK_LEN}, {"builtins.abs", IK_ABS},
    {"builtins.min", IK_MIN}, {"builtins.max", IK_MAX},
    {"builtins.int", IK_CAST, TY_INT64}, {"builtins.float", IK_CAST, TY_FLOAT64},
    {"builtins.bool", IK_CAST, TY_BOOL},
    {"numpy.bool", IK_CAST, TY_BOOL}, {"numpy.bool_", IK_CAST, TY_BOOL},
    {"numpy.int8", IK_CAST, TY_INT8}, {"numpy.int16", IK_CAST, TY_INT16},
    {"numpy.int32", IK_CAST, TY_INT32}, {"numpy.int64", IK_CAST, TY_INT64},
    {"numpy.uint8", IK_CAST, TY_UINT8}, {"numpy.uint16", IK_CAST, TY_UINT16},
    {"numpy.uint32", IK_CAST, TY_UINT32}, {"numpy.uint64", IK_CAST, TY_UINT64},
    {"numpy.float16", IK_CAST, TY_FLOAT16}, {"ml_dtypes.bfloat16", IK_CAST, TY_BFLOAT16},
    {"ml_dtypes.float8_e4m3fn", IK_CAST, TY_FP8_E4M3}, {"ml_dtypes.float8_e5m2", IK_CAST, TY_FP8_E5M2},
    {"numpy.float32", IK_CAST, TY_FLOAT32}, {"numpy.float64", IK_CAST, TY_FLOAT64},
    {"numpy.complex64", IK_CAST, TY_COMPLEX64}, {"numpy.complex128", IK_CAST, TY_COMPLEX128},
    {"builtins.complex", IK_COMPLEX}, {"complex.conjugate", IK_CONJUGATE},
    /* cmath: complex.c builds each from real math */
    {"cmath.sqrt", IK_CMATH, CM_SQRT}, {"cmath.exp", IK_CMATH, CM_EXP}, {"cmath.log", IK_CMATH, CM_LOG},
    {"cmath.log10", IK_CMATH, CM_LOG10}, {"cmath.sin", IK_CMATH, CM_SIN}, {"cmath.cos", IK_CMATH, CM_COS},
    {"cmath.tan", IK_CMATH, CM_TAN}, {"cmath.sinh", IK_CMATH, CM_SINH}, {"cmath.cosh", IK_CMATH, CM_COSH},
    {"cmath.tanh", IK_CMATH, CM_TANH}, {"cmath.asin", IK_CMATH, CM_ASIN}, {"cmath.acos", IK_CMATH, CM_ACOS},
    {"cmath.atan", IK_CMATH, CM_ATAN}, {"cmath.asinh", IK_CMATH, CM_ASINH},
    {"cmath.acosh", IK_CMATH, CM_ACOSH}, {"cmath.atanh", IK_CMATH, CM_ATANH},
    {"cmath.phase", IK_CMATH, CM_PHASE}, {"cmath.polar", IK_CMATH, CM_POLAR}, {"cmath.rect", IK_CMATH, CM_RECT},
    {"cmath.isnan", IK_CMATH, CM_ISNAN}, {"cmath.isinf", IK_CMATH, CM_ISINF},
    {"cmath.isfinite", IK_CMATH, CM_ISFINITE},
    /* math: `name` is the C function (float32 calls its "f" variant) */
    {"math.sqrt", IK_MATH1, 0, 0, "sqrt"}, {"math.fabs", IK_MATH1, 0, 0, "fabs"},
    {"math.sin", IK_MATH1, 0, 0, "sin"}, {"math.cos", IK_MATH1, 0, 0, "cos"},
    {"math.tan", IK_MATH1, 0, 0, "tan"}, {"math.asin", IK_MATH1, 0, 0, "asin"},
    {"math.acos", IK_MATH1, 0, 0, "acos"}, {"math.atan", IK_MATH1, 0, 0, "atan"},
    {"math.sinh", IK_MATH1, 0, 0, "sinh"}, {"math.cosh", IK_MATH1, 0, 0, "cosh"},
    {"math.tanh", IK_MATH1, 0, 0, "tanh"}, {"math.asinh", IK_MATH1, 0, 0, "asinh"},
    {"math.acosh", IK_MATH1, 0, 0, "acosh"}, {"math.atanh", IK_MATH1, 0, 0, "atanh"},
    {"math.exp", IK_MATH1, 0, 0, "exp"}, {"math.exp2", IK_MATH1, 0, 0, "exp2"},
    {"math.expm1", IK_MATH1, 0, 0, "expm1"}, {"math.log", IK_MATH1, 0, 0, "log"},
    {"math.log2", IK_MATH1, 0, 0, "log2"}, {"math.log10", IK_MATH1, 0, 0, "log10"},
    {"math.log1p", IK_MATH1, 0, 0, "log1p"}, {"math.erf", IK_MATH1, 0, 0, "erf"},
    {"math.erfc", IK_MATH1, 0, 0, "erfc"}, {"math.gamma", IK_MATH1, 0, 0, "tgamma"},
    {"math.lgamma", IK_MATH1, 0, 0, "lgamma"}, {"math.cbrt", IK_MATH1, 0, 0, "cbrt"},
    {"math.pow", IK_MATH2, 0, 0, "pow"}, {"math.atan2", IK_MATH2, 0, 0, "atan2"},
    {"math.hypot", IK_MATH2, 0, 0, "hypot"}, {"math.fmod", IK_MATH2, 0, 0, "fmod"},
    {"math.copysign", IK_MATH2, 0, 0, "copysign"},
    {"math.floor", IK_MATH_TOINT, 0, 0, "floor"}, {"math.ceil", IK_MATH_TOINT, 0, 0, "ceil"},
    {"math.trunc", IK_MATH_TOINT, 0, 0, "trunc"},
    {"math.isnan", IK_MATH_CLASS, CLASS_ISNAN}, {"math.isinf", IK_MATH_CLASS, CLASS_ISINF},
    {"math.isfinite", IK_MATH_CLASS, CLASS_ISFINITE},
    {"math.radians", IK_MATH_SCALE, SCALE_RADIANS}, {"math.degrees", IK_MATH_SCALE, SCALE_DEGREES},
    {"math.remainder", IK_MATH2, 0, 0, "remainder"}, {"math.nextafter", IK_MATH2, 0, 0, "nextafter"},
    {"math.frexp", IK_FREXP}, {"math.ldexp", IK_LDEXP}, {"math.modf", IK_MODF},
    /* builtins beyond the casts (operator.*, pow(a, b) and divmod are operators: build.c) */
    {"builtins.round", IK_ROUND}, {"builtins.pow", IK_POWMOD},
    {"builtins.enumerate", IK_SEQ}, {"builtins.zip", IK_SEQ},
    {"builtins.tuple", IK_TUPLE}, {"builtins.sum", IK_SUM}, {"builtins.any", IK_ANYALL, 0}, {"builtins.all", IK_ANYALL, 1},
    {"builtins.isinstance", IK_ISINSTANCE},
    {"int.bit_count", IK_BIT_COUNT}, {"builtins.int.bit_count", IK_BIT_COUNT},
    {"_operator.abs", IK_ABS},
    /* NumPy's scalar functions on scalars, with NumPy's names (gpujit.intrinsics registers the ufuncs) */
    {"numpy.sqrt", IK_MATH1, 0, 0, "sqrt"}, {"numpy.fabs", IK_MATH1, 0, 0, "fabs"},
    {"numpy.sin", IK_MATH1, 0, 0, "sin"}, {"numpy.cos", IK_MATH1, 0, 0, "cos"},
    {"numpy.tan", IK_MATH1, 0, 0, "tan"}, {"numpy.arcsin", IK_MATH1, 0, 0, "asin"},
    {"numpy.arccos", IK_MATH1, 0, 0, "acos"}, {"numpy.arctan", IK_MATH1, 0, 0, "atan"},
    {"numpy.sinh", IK_MATH1, 0, 0, "sinh"}, {"numpy.cosh", IK_MATH1, 0, 0, "cosh"},
    {"numpy.tanh", IK_MATH1, 0, 0, "tanh"}, {"numpy.arcsinh", IK_MATH1, 0, 0, "asinh"},
    {"numpy.arccosh", IK_MATH1, 0, 0, "acosh"}, {"numpy.arctanh", IK_MATH1, 0, 0, "atanh"},
    {"numpy.exp", IK_MATH1, 0, 0, "exp"}, {"numpy.exp2", IK_MATH1, 0, 0, "exp2"},
    {"numpy.expm1", IK_MATH1, 0, 0, "expm1"}, {"numpy.log", IK_MATH1, 0, 0, "log"},
    {"numpy.log2", IK_MATH1, 0, 0, "log2"}, {"numpy.log10", IK_MATH1, 0, 0, "log10"},
    {"numpy.log1p", IK_MATH1, 0, 0, "log1p"}, {"numpy.cbrt", IK_MATH1, 0, 0, "cbrt"},
    {"numpy.absolute", IK_ABS},
    {"numpy.isnan", IK_MATH_CLASS, CLASS_ISNAN}, {"numpy.isinf", IK_MATH_CLASS, CLASS_ISINF},
    {"numpy.isfinite", IK_MATH_CLASS, CLASS_ISFINITE},
    {"numpy.floor", IK_NP_ROUND, 0, 0, "llvm.floor"}, {"numpy.ceil", IK_NP_ROUND, 0, 0, "llvm.ceil"},
    {"numpy.trunc", IK_NP_ROUND, 0, 0, "llvm.trunc"}, {"numpy.rint", IK_NP_ROUND, 0, 0, "llvm.roundeven"},
    {"numpy.minimum", IK_NP_MINMAX, 0}, {"numpy.maximum", IK_NP_MINMAX, 1},
    {"numpy.fmin", IK_NP_MINMAX, 2}, {"numpy.fmax", IK_NP_MINMAX, 3},
    {"numpy.logical_and", IK_NP_LOGICAL, 0}, {"numpy.logical_or", IK_NP_LOGICAL, 1},
    {"numpy.logical_xor", IK_NP_LOGICAL, 2}, {"numpy.sign", IK_NP_SIGN},
    {"numpy.fmod", IK_MATH2, 0, 0, "fmod"}, {"numpy.copysign", IK_MATH2, 0, 0, "copysign"},
    {"numpy.hypot", IK_MATH2, 0, 0, "hypot"}, {"numpy.arctan2", IK_MATH2, 0, 0, "atan2"},
    {"numpy.nextafter", IK_MATH2, 0, 0, "nextafter"},
    {"numpy.radians", IK_MATH_SCALE, SCALE_RADIANS}, {"numpy.deg2rad", IK_MATH_SCALE, SCALE_RADIANS},
    {"numpy.degrees", IK_MATH_SCALE, SCALE_DEGREES}, {"numpy.rad2deg", IK_MATH_SCALE, SCALE_DEGREES},
    /* whole-array reductions (reductions.c): NumPy's functions and the array methods */
    {"numpy.sum", IK_REDUCE, RD_SUM}, {"numpy.prod", IK_REDUCE, RD_PROD},
    {"numpy.min", IK_REDUCE, RD_MIN}, {"numpy.amin", IK_REDUCE, RD_MIN},
    {"numpy.max", IK_REDUCE, RD_MAX}, {"numpy.amax", IK_REDUCE, RD_MAX},
    {"numpy.mean", IK_REDUCE, RD_MEAN}, {"numpy.var", IK_REDUCE, RD_VAR}, {"numpy.std", IK_REDUCE, RD_STD},
    {"numpy.all", IK_REDUCE, RD_ALL}, {"numpy.any", IK_REDUCE, RD_ANY},
    {"numpy.argmin", IK_REDUCE, RD_ARGMIN}, {"numpy.argmax", IK_REDUCE, RD_ARGMAX},
    {"numpy.count_nonzero", IK_REDUCE, RD_COUNT_NONZERO},
    {"numpy.nansum", IK_REDUCE, RD_NANSUM}, {"numpy.nanprod", IK_REDUCE, RD_NANPROD},
    {"numpy.nanmin", IK_REDUCE, RD_NANMIN}, {"numpy.nanmax", IK_REDUCE, RD_NANMAX},
    {"numpy.nanmean", IK_REDUCE, RD_NANMEAN}, {"numpy.nanvar", IK_REDUCE, RD_NANVAR},
    {"numpy.nanstd", IK_REDUCE, RD_NANSTD},
    {"ndarray.sum", IK_REDUCE, RD_SUM}, {"ndarray.prod", IK_REDUCE, RD_PROD},
    {"ndarray.min", IK_REDUCE, RD_MIN}, {"ndarray.max", IK_REDUCE, RD_MAX},
    {"ndarray.mean", IK_REDUCE, RD_MEAN}, {"ndarray.var", IK_REDUCE, RD_VAR}, {"ndarray.std", IK_REDUCE, RD_STD},
    {"ndarray.all", IK_REDUCE, RD_ALL}, {"ndarray.any", IK_REDUCE, RD_ANY},
    {"ndarray.argmin", IK_REDUCE, RD_ARGMIN}, {"ndarray.argmax", IK_REDUCE, RD_ARGMAX},
    {"ndarray.reshape", IK_RESHAPE}, {"ndarray.view", IK_VIEW_DTYPE}, {"ndarray.copy", IK_ARRAY_COPY},
    {"gpujit.libdevice.*", IK_LIBDEVICE}, /* every gpujit.libdevice.<name> (libdevice.c) */
};
/* clang-format on */

/* The table's rows by path, made once: a compile looks up every name it resolves, and a scan
 * of the table's rows was a few per cent of a math kernel's front end. Equal paths keep the
 * table's order, so the first row of a path is the one found, as a scan finds it. */
#define NINTRINSICS (sizeof intrinsics / sizeof intrinsics[0])
static const Intrinsic *by_path[NINTRINSICS];
static pthread_once_t by_path_once = PTHREAD_ONCE_INIT;

static int path_order(const void *a, const void *b) {
    const Intrinsic *x = *(const Intrinsic *const *)a, *y = *(const Intrinsic *const *)b;
    int d = strcmp(x->path, y->path);
    return d ? d : (x > y) - (x < y);
}

static void sort_by_path(void) {
    for (size_t i = 0; i < NINTRINSICS; i++) by_path[i] = &intrinsics[i];
    qsort(by_path, NINTRINSICS, sizeof by_path[0], path_order);
}

/* The first row of by_path whose path is not below `path` (NINTRINSICS if none). */
static size_t lower_bound(const char *path) {
    size_t lo = 0, hi = NINTRINSICS;
    pthread_once(&by_path_once, sort_by_path);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(by_path[mid]->path, path) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const Intrinsic *intrinsic_lookup(const char *path) {
    size_t i = lower_bound(path);
    if (i < NINTRINSICS && strcmp(by_path[i]->path, path) == 0) return by_path[i];
    if (strncmp(path, "gpujit.libdevice.", 17) == 0 && strcmp(path + 17, "*")) return intrinsic_lookup("gpujit.libdevice.*");
    if (strncmp(path, "gpujit.bf16.", 12) == 0) return bf16_lookup(path);
    static const Intrinsic fp8[] = {{"gpujit.fp8.cvt_float_to_fp8", IK_FP8, TY_FLOAT32},
                                    {"gpujit.fp8.cvt_double_to_fp8", IK_FP8, TY_FLOAT64}};
    for (size_t k = 0; k < sizeof fp8 / sizeof fp8[0]; k++)
        if (!strcmp(fp8[k].path, path)) return &fp8[k];
    return NULL;
}

/* Is `path` a prefix of some intrinsic, so that attributes of it make sense? */
bool intrinsic_namespace(const char *path) {
    size_t n = strlen(path);
    if (!strcmp(path, "gpujit.bf16") || !strcmp(path, "gpujit.fp8")) return true;
    /* the paths under `path.` follow `path.` in by_path's order: the first of them is its bound */
    char *under = malloc(n + 2);
    if (!under) return false;
    memcpy(under, path, n);
    memcpy(under + n, ".", 2);
    size_t i = lower_bound(under);
    free(under);
    return i < NINTRINSICS && strncmp(by_path[i]->path, path, n) == 0 && by_path[i]->path[n] == '.';
}
