/* fp16.c: gpu.fp16.* (numba.cuda's cuda.fp16 functions): typing and
 * lowering, for float16 and (the same functions of gpu.bf16, bf16.c) for
 * bfloat16. Each takes 16-bit float values (any real number converts) and gives
 * one, or a bool for the comparisons. Arithmetic, comparisons and
 * rounding are LLVM half operations (native f16 instructions on the GPU,
 * exact through float on the CPU); the transcendental ones compute in float32
 * and round once to float16, as NumPy's float16 ufuncs do. */
#include "gj.h"

/* One row per function: its arity; the LLVM intrinsic or the libm name
 * (float32's, lower.c's math_call) that computes it, if it is one call. */
typedef struct Fp16Fn {
    int nargs;
    const char *llvm; /* llvm.* on half */
    const char *libm; /* a libm function, in float32 */
} Fp16Fn;

/* clang-format off */
static const Fp16Fn fns[FP16_NOPS] = {
    [FP16_ADD] = {2}, [FP16_SUB] = {2}, [FP16_MUL] = {2}, [FP16_DIV] = {2}, [FP16_FMA] = {3},
    [FP16_NEG] = {1}, [FP16_ABS] = {1, "llvm.fabs"},
    [FP16_MAX] = {2, "llvm.maxnum"}, [FP16_MIN] = {2, "llvm.minnum"},
    [FP16_CEIL] = {1, "llvm.ceil"}, [FP16_FLOOR] = {1, "llvm.floor"}, [FP16_TRUNC] = {1, "llvm.trunc"},
    [FP16_RINT] = {1, "llvm.roundeven"},
    [FP16_SQRT] = {1, "llvm.sqrt"}, [FP16_RSQRT] = {1}, [FP16_RCP] = {1},
    [FP16_EXP] = {1, NULL, "exp"}, [FP16_EXP2] = {1, NULL, "exp2"}, [FP16_EXP10] = {1, NULL, "exp10"},
    [FP16_LOG] = {1, NULL, "log"}, [FP16_LOG2] = {1, NULL, "log2"}, [FP16_LOG10] = {1, NULL, "log10"},
    [FP16_SIN] = {1, NULL, "sin"}, [FP16_COS] = {1, NULL, "cos"},
    /* the approximate tanh may be more exact than CUDA's tanh.approx.f16: this is the correctly rounded one */
    [FP16_TANH] = {1, NULL, "tanh"}, [FP16_TANH_APPROX] = {1, NULL, "tanh"},
    [FP16_EQ] = {2}, [FP16_NE] = {2}, [FP16_GT] = {2}, [FP16_GE] = {2}, [FP16_LT] = {2}, [FP16_LE] = {2},
};
/* clang-format on */

static bool is_cmp(int op) { return op >= FP16_EQ && op <= FP16_LE; }

int fp16_nargs(int op) { return fns[op].nargs; }

/* op's result for 16-bit float values of type h (float16 or bfloat16) */
Type *type_half_fn(Ctx *c, Instr *in, const char *path, int op, Type *h, Type **at, int nargs) {
    int want = fns[op].nargs;
    const char *hn = type_name(c, h);
    if (nargs != want) TERR("%s() takes %d %s argument%s, got %d", path_pretty(path), want, hn, want == 1 ? "" : "s", nargs);
    for (int i = 0; i < nargs; i++)
        if (!is_scalar(at[i]))
            TERR("%s() takes %s values, not %s (argument %d)", path_pretty(path), hn, type_name(c, at[i]), i + 1);
    return is_cmp(op) ? &ty_bool : h;
}

Type *type_fp16(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs) {
    return type_half_fn(c, in, k->path, k->id, &ty_float16, at, nargs);
}

LLVMValueRef lower_fp16(Ctx *c, int op, Instr **a, int nargs, Type *ht) {
    LLVMValueRef x[3];
    for (int i = 0; i < nargs && i < 3; i++) x[i] = val_as(c, a[i], ht);
    LLVMTypeRef h = llvm_type(c, ht);
    const Fp16Fn *f = &fns[op];
    /* no fast-math flags: each is the one correctly rounded operation it names */
    switch (op) {
    case FP16_ADD: return LLVMBuildFAdd(c->b, x[0], x[1], "");
    case FP16_SUB: return LLVMBuildFSub(c->b, x[0], x[1], "");
    case FP16_MUL: return LLVMBuildFMul(c->b, x[0], x[1], "");
    case FP16_DIV: return LLVMBuildFDiv(c->b, x[0], x[1], "");
    case FP16_NEG: return LLVMBuildFNeg(c->b, x[0], "");
    case FP16_FMA:
        if (c->target->half_via_float && ht->kind == TY_FLOAT16) { /* bf16.c legalises bfloat16's */
            /* in double, a * b is exact and + c rounds where no half can tell: one rounding */
            LLVMValueRef d[3];
            for (int i = 0; i < 3; i++) d[i] = convert(c, x[i], ht, &ty_float64);
            return convert(c, call_intrinsic(c, "llvm.fma", &c->f64, 1, d, 3), &ty_float64, ht);
        }
        return call_intrinsic(c, "llvm.fma", &h, 1, x, 3);
    case FP16_RCP: return LLVMBuildFDiv(c->b, LLVMConstReal(h, 1.0), x[0], "");
    case FP16_RSQRT: {
        LLVMValueRef s = fcall1(c, "llvm.sqrt", convert(c, x[0], ht, &ty_float32));
        return convert(c, LLVMBuildFDiv(c->b, LLVMConstReal(c->f32, 1.0), s, ""), &ty_float32, ht);
    }
    case FP16_EQ: return LLVMBuildFCmp(c->b, LLVMRealOEQ, x[0], x[1], "");
    case FP16_NE: return LLVMBuildFCmp(c->b, LLVMRealONE, x[0], x[1], ""); /* CUDA's __hne: false for NaN */
    case FP16_GT: return LLVMBuildFCmp(c->b, LLVMRealOGT, x[0], x[1], "");
    case FP16_GE: return LLVMBuildFCmp(c->b, LLVMRealOGE, x[0], x[1], "");
    case FP16_LT: return LLVMBuildFCmp(c->b, LLVMRealOLT, x[0], x[1], "");
    case FP16_LE: return LLVMBuildFCmp(c->b, LLVMRealOLE, x[0], x[1], "");
    }
    if (f->llvm) return nargs == 1 ? fcall1(c, f->llvm, x[0]) : fcall2(c, f->llvm, x[0], x[1]);
    if (f->libm) return math_call(c, f->libm, ht, x, 1);
    internal_error(c, a[0]->loc, "fp16 function %d has no lowering", op);
    return NULL;
}
