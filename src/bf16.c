/* bf16.c: bfloat16 -- its rounding, the legalisation of LLVM's bfloat for the
 * targets, and gpu.bf16.* (numba.cuda's cuda.bf16 functions).
 *
 * Lowering writes bfloat16 as LLVM bfloat with ordinary instructions (fadd,
 * fptrunc, sitofp, llvm.fma, ...). legalize_bf16 runs right after lowering,
 * before the optimiser, and rewrites what a target would compute wrongly:
 *   - the CPU target (and a GPU below sm_80) gets none of them: each becomes
 *     float32 arithmetic and an integer rounding, round to nearest even with
 *     CUDA's canonical NaN 0x7FFF (what cvt.rn.bf16.f32 gives). x86's own
 *     instructions for it flush subnormals, and the library call LLVM would
 *     make is absent from older libgccs.
 *   - sm_80 and up keep the native ones (cvt.rn.bf16.f32, fma.rn.bf16,
 *     add/mul.rn.bf16 on sm_90), and lose only the conversions LLVM would round
 *     twice: a double or a 64-bit integer to bfloat16, which go through a float32
 *     rounded to odd (exact for every mode of the second rounding).
 * lower.c's fp() puts no fast-math flag on a bfloat instruction: the GPU fuses no
 * bfloat16 multiply into an add, as the CPU target rounds each one. */
#include "gj.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

static LLVMContextRef ctx_of(LLVMBuilderRef b) {
    return LLVMGetModuleContext(LLVMGetGlobalParent(LLVMGetBasicBlockParent(LLVMGetInsertBlock(b))));
}
static LLVMValueRef k32(LLVMBuilderRef b, unsigned long long v) { return LLVMConstInt(LLVMInt32TypeInContext(ctx_of(b)), v, 0); }
static LLVMValueRef k64(LLVMBuilderRef b, unsigned long long v) { return LLVMConstInt(LLVMInt64TypeInContext(ctx_of(b)), v, 0); }

static LLVMValueRef icall(LLVMBuilderRef b, const char *name, LLVMTypeRef over, LLVMValueRef *args, int nargs) {
    LLVMModuleRef m = LLVMGetGlobalParent(LLVMGetBasicBlockParent(LLVMGetInsertBlock(b)));
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(m, id, &over, 1);
    LLVMTypeRef fty = LLVMIntrinsicGetType(ctx_of(b), id, &over, 1);
    return LLVMBuildCall2(b, fty, fn, args, (unsigned)nargs, "");
}

/* double -> float rounded to odd (toward zero, the last bit set when inexact):
 * a second rounding of it to a format of at most 22 bits (half's 11, bfloat16's 8)
 * in any mode is exactly the one rounding of the double. */
LLVMValueRef f64_to_f32_odd(LLVMBuilderRef b, LLVMValueRef d) {
    LLVMContextRef cx = ctx_of(b);
    LLVMTypeRef f32 = LLVMFloatTypeInContext(cx), f64 = LLVMDoubleTypeInContext(cx), i32 = LLVMInt32TypeInContext(cx);
    LLVMValueRef f = LLVMBuildFPTrunc(b, d, f32, "");
    LLVMValueRef back = LLVMBuildFPExt(b, f, f64, "");
    LLVMValueRef exact = LLVMBuildFCmp(b, LLVMRealUEQ, back, d, ""); /* NaN: keep f */
    LLVMValueRef away = LLVMBuildFCmp(b, LLVMRealOGT, icall(b, "llvm.fabs", f64, &back, 1), icall(b, "llvm.fabs", f64, &d, 1), "");
    LLVMValueRef bits = LLVMBuildBitCast(b, f, i32, "");
    bits = LLVMBuildSub(b, bits, LLVMBuildZExt(b, away, i32, ""), ""); /* one step toward zero */
    bits = LLVMBuildOr(b, bits, k32(b, 1), "");
    return LLVMBuildSelect(b, exact, f, LLVMBuildBitCast(b, bits, f32, ""), "");
}

/* An integer (i1..i64, signed or not) as a float32 rounded to odd. Up to 32 bits a
 * double holds it exactly; a 64-bit magnitude of 2**53 or more first has its low 11
 * bits folded into one sticky bit (bit 11), which leaves it exact in a double and
 * rounds to odd in float32 as the integer itself does. */
static LLVMValueRef int_to_f32_odd(LLVMBuilderRef b, LLVMValueRef x, bool is_signed) {
    LLVMContextRef cx = ctx_of(b);
    LLVMTypeRef f64 = LLVMDoubleTypeInContext(cx), i64 = LLVMInt64TypeInContext(cx);
    unsigned w = LLVMGetIntTypeWidth(LLVMTypeOf(x));
    if (w <= 32) return f64_to_f32_odd(b, is_signed ? LLVMBuildSIToFP(b, x, f64, "") : LLVMBuildUIToFP(b, x, f64, ""));
    LLVMValueRef neg = is_signed ? LLVMBuildICmp(b, LLVMIntSLT, x, k64(b, 0), "") : NULL;
    LLVMValueRef m = x;
    if (is_signed) {
        LLVMValueRef args[2] = {x, LLVMConstInt(LLVMInt1TypeInContext(cx), 0, 0)};
        m = icall(b, "llvm.abs", i64, args, 2); /* INT64_MIN: 2**63 as unsigned */
    }
    LLVMValueRef big = LLVMBuildICmp(b, LLVMIntUGE, m, k64(b, 1ull << 53), "");
    LLVMValueRef sticky = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, m, k64(b, 0x7ff), ""), k64(b, 0), "");
    LLVMValueRef jam = LLVMBuildOr(b, LLVMBuildAnd(b, m, k64(b, ~0x7ffull), ""),
                                   LLVMBuildShl(b, LLVMBuildZExt(b, sticky, i64, ""), k64(b, 11), ""), "");
    LLVMValueRef d = LLVMBuildUIToFP(b, LLVMBuildSelect(b, big, jam, m, ""), f64, "");
    if (neg) d = LLVMBuildSelect(b, neg, LLVMBuildFNeg(b, d, ""), d, "");
    return f64_to_f32_odd(b, d);
}

/* A float32 rounded to bfloat16 in `mode`, as its 16 bits: CUDA's __float2bfloat16_rn
 * (_rz, _rd, _ru). A NaN gives the canonical 0x7FFF; overflow rounds to inf or to the
 * largest finite value as IEEE's directed roundings say. */
LLVMValueRef bf16_round_bits(LLVMBuilderRef b, LLVMValueRef f, RoundMode mode) {
    LLVMContextRef cx = ctx_of(b);
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cx), i16 = LLVMInt16TypeInContext(cx);
    LLVMValueRef u = LLVMBuildBitCast(b, f, i32, "");
    LLVMValueRef mag = LLVMBuildAnd(b, u, k32(b, 0x7fffffff), "");
    LLVMValueRef nan = LLVMBuildICmp(b, LLVMIntUGT, mag, k32(b, 0x7f800000), "");
    LLVMValueRef r;
    if (mode == ROUND_RN) {
        LLVMValueRef odd = LLVMBuildAnd(b, LLVMBuildLShr(b, u, k32(b, 16), ""), k32(b, 1), "");
        r = LLVMBuildLShr(b, LLVMBuildAdd(b, LLVMBuildAdd(b, u, k32(b, 0x7fff), ""), odd, ""), k32(b, 16), "");
    } else {
        r = LLVMBuildLShr(b, u, k32(b, 16), "");
        if (mode != ROUND_RZ) { /* away from zero when inexact and the sign asks for it */
            LLVMValueRef inexact = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, u, k32(b, 0xffff), ""), k32(b, 0), "");
            LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, u, k32(b, 0), "");
            LLVMValueRef up = LLVMBuildAnd(b, inexact, mode == ROUND_RD ? neg : LLVMBuildNot(b, neg, ""), "");
            r = LLVMBuildAdd(b, r, LLVMBuildZExt(b, up, i32, ""), "");
        }
    }
    r = LLVMBuildTrunc(b, r, i16, "");
    return LLVMBuildSelect(b, nan, LLVMConstInt(i16, 0x7fff, 0), r, "");
}

/* A number of LLVM type `from` (an integer, float, double or bfloat) as a bfloat16 in
 * `mode`, the integer signed or not. */
LLVMValueRef bf16_from(LLVMBuilderRef b, LLVMValueRef v, bool is_signed, RoundMode mode) {
    LLVMContextRef cx = ctx_of(b);
    LLVMTypeRef t = LLVMTypeOf(v), f32 = LLVMFloatTypeInContext(cx);
    switch (LLVMGetTypeKind(t)) {
    case LLVMBFloatTypeKind: return v;
    case LLVMIntegerTypeKind: v = int_to_f32_odd(b, v, is_signed); break;
    case LLVMDoubleTypeKind: v = f64_to_f32_odd(b, v); break;
    case LLVMFloatTypeKind: break;
    default: v = LLVMBuildFPExt(b, v, f32, ""); break; /* half: exact */
    }
    return LLVMBuildBitCast(b, bf16_round_bits(b, v, mode), LLVMBFloatTypeInContext(cx), "");
}

/* A bfloat16 as the float32 of the same value: its bits, shifted up. */
LLVMValueRef bf16_to_f32(LLVMBuilderRef b, LLVMValueRef v) {
    LLVMContextRef cx = ctx_of(b);
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cx);
    LLVMValueRef u = LLVMBuildZExt(b, LLVMBuildBitCast(b, v, LLVMInt16TypeInContext(cx), ""), i32, "");
    return LLVMBuildBitCast(b, LLVMBuildShl(b, u, k32(b, 16), ""), LLVMFloatTypeInContext(cx), "");
}

/* ---- legalisation ---- */

static bool is_bf(LLVMValueRef v) { return LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMBFloatTypeKind; }

static LLVMValueRef wide(LLVMBuilderRef b, LLVMValueRef v) { return is_bf(v) ? bf16_to_f32(b, v) : v; }

/* a * b + c for bfloat16s, rounded once: in double the product is exact and the sum,
 * made odd with its exact error (Knuth's two-sum), keeps what one rounding needs. */
static LLVMValueRef soft_fma(LLVMBuilderRef b, LLVMValueRef *x) {
    LLVMContextRef cx = ctx_of(b);
    LLVMTypeRef f64 = LLVMDoubleTypeInContext(cx), i64 = LLVMInt64TypeInContext(cx);
    LLVMValueRef d[3];
    for (int i = 0; i < 3; i++) d[i] = LLVMBuildFPExt(b, bf16_to_f32(b, x[i]), f64, "");
    LLVMValueRef p = LLVMBuildFMul(b, d[0], d[1], ""), s = LLVMBuildFAdd(b, p, d[2], "");
    LLVMValueRef bb = LLVMBuildFSub(b, s, p, "");
    LLVMValueRef err = LLVMBuildFAdd(b, LLVMBuildFSub(b, p, LLVMBuildFSub(b, s, bb, ""), ""),
                                     LLVMBuildFSub(b, d[2], bb, ""), "");
    LLVMValueRef bits = LLVMBuildBitCast(b, s, i64, "");
    LLVMValueRef even = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, bits, k64(b, 1), ""), k64(b, 0), "");
    LLVMValueRef inexact = LLVMBuildFCmp(b, LLVMRealONE, err, LLVMConstReal(f64, 0.0), ""); /* NaN/inf sums: no */
    /* the odd neighbour is on err's side: one step away from zero when err has s's sign */
    LLVMValueRef same = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildICmp(b, LLVMIntSLT, bits, k64(b, 0), ""),
                                      LLVMBuildFCmp(b, LLVMRealOLT, err, LLVMConstReal(f64, 0.0), ""), "");
    LLVMValueRef step = LLVMBuildSelect(b, same, k64(b, 1), LLVMConstAllOnes(i64), "");
    LLVMValueRef fixed = LLVMBuildBitCast(b, LLVMBuildAdd(b, bits, step, ""), f64, "");
    s = LLVMBuildSelect(b, LLVMBuildAnd(b, even, inexact, ""), fixed, s, "");
    return bf16_from(b, s, false, ROUND_RN);
}

/* The intrinsic call `in` on float32 instead of bfloat16 (its bfloat operands widened,
 * a bfloat result rounded). fptosi/fptoui.sat are overloaded on {result, operand}. */
static LLVMValueRef soft_intrinsic(LLVMBuilderRef b, LLVMValueRef in) {
    LLVMValueRef fn = LLVMGetCalledValue(in);
    unsigned id = LLVMGetIntrinsicID(fn);
    if (!id) return NULL;
    size_t len;
    const char *name = LLVMIntrinsicGetName(id, &len);
    int n = LLVMGetNumArgOperands(in);
    LLVMValueRef x[4];
    if (n > 4) return NULL;
    for (int i = 0; i < n; i++) x[i] = LLVMGetOperand(in, (unsigned)i);
    if (!strcmp(name, "llvm.fma") || !strcmp(name, "llvm.fmuladd")) return soft_fma(b, x);
    for (int i = 0; i < n; i++) x[i] = wide(b, x[i]);
    LLVMContextRef cx = ctx_of(b);
    LLVMTypeRef f32 = LLVMFloatTypeInContext(cx), rt = LLVMTypeOf(in);
    LLVMTypeRef over[2] = {is_bf(in) ? f32 : rt, f32};
    int nover = !strcmp(name, "llvm.fptosi.sat") || !strcmp(name, "llvm.fptoui.sat") ? 2 : 1;
    if (!strcmp(name, "llvm.is.fpclass")) over[0] = f32;
    LLVMModuleRef m = LLVMGetGlobalParent(LLVMGetBasicBlockParent(LLVMGetInsertBlock(b)));
    LLVMValueRef decl = LLVMGetIntrinsicDeclaration(m, id, over, (size_t)nover);
    LLVMTypeRef fty = LLVMIntrinsicGetType(cx, id, over, (size_t)nover);
    LLVMValueRef r = LLVMBuildCall2(b, fty, decl, x, (unsigned)n, "");
    return is_bf(in) ? bf16_from(b, r, false, ROUND_RN) : r;
}

/* `in` computed without bfloat arithmetic, or NULL to leave it (no bfloat in it, or
 * one the target does right: native). */
static LLVMValueRef legal(LLVMBuilderRef b, LLVMValueRef in, bool native) {
    LLVMOpcode op = LLVMGetInstructionOpcode(in);
    LLVMValueRef x = LLVMGetNumOperands(in) ? LLVMGetOperand(in, 0) : NULL;
    LLVMContextRef cx = ctx_of(b);
    switch (op) {
    case LLVMFPTrunc:
        if (!is_bf(in) || (native && LLVMGetTypeKind(LLVMTypeOf(x)) == LLVMFloatTypeKind)) return NULL;
        return native ? LLVMBuildFPTrunc(b, f64_to_f32_odd(b, x), LLVMTypeOf(in), "") : bf16_from(b, x, false, ROUND_RN);
    case LLVMSIToFP:
    case LLVMUIToFP: {
        if (!is_bf(in)) return NULL;
        unsigned w = LLVMGetIntTypeWidth(LLVMTypeOf(x));
        if (w == 1) /* exact: no rounding */
            return LLVMBuildSelect(b, x, LLVMConstReal(LLVMTypeOf(in), op == LLVMSIToFP ? -1.0 : 1.0),
                                   LLVMConstReal(LLVMTypeOf(in), 0.0), "");
        if (native && w <= 16) return NULL; /* exact in the float32 LLVM goes through */
        if (native) return LLVMBuildFPTrunc(b, int_to_f32_odd(b, x, op == LLVMSIToFP), LLVMTypeOf(in), "");
        return bf16_from(b, x, op == LLVMSIToFP, ROUND_RN);
    }
    default: break;
    }
    if (native) return NULL;
    switch (op) {
    case LLVMFPExt:
        if (!is_bf(x)) return NULL;
        x = bf16_to_f32(b, x);
        return LLVMGetTypeKind(LLVMTypeOf(in)) == LLVMFloatTypeKind ? x : LLVMBuildFPExt(b, x, LLVMTypeOf(in), "");
    case LLVMFNeg:
        if (!is_bf(in)) return NULL;
        return LLVMBuildBitCast(b, LLVMBuildXor(b, LLVMBuildBitCast(b, x, LLVMInt16TypeInContext(cx), ""),
                                              LLVMConstInt(LLVMInt16TypeInContext(cx), 0x8000, 0), ""),
                                LLVMTypeOf(in), "");
    case LLVMFAdd:
    case LLVMFSub:
    case LLVMFMul:
    case LLVMFDiv:
    case LLVMFRem: {
        /* float32's 24 bits hold what one rounding to 8 needs (2 * 8 + 2): +, -, *, / in
         * float32 then rounded are the bfloat16 operation itself; a remainder is exact */
        if (!is_bf(in)) return NULL;
        LLVMValueRef y = wide(b, LLVMGetOperand(in, 1));
        return bf16_from(b, LLVMBuildBinOp(b, op, wide(b, x), y, ""), false, ROUND_RN);
    }
    case LLVMFCmp:
        if (!is_bf(x)) return NULL;
        return LLVMBuildFCmp(b, LLVMGetFCmpPredicate(in), wide(b, x), wide(b, LLVMGetOperand(in, 1)), "");
    case LLVMFPToSI:
    case LLVMFPToUI:
        if (!is_bf(x)) return NULL;
        return op == LLVMFPToSI ? LLVMBuildFPToSI(b, wide(b, x), LLVMTypeOf(in), "")
                                : LLVMBuildFPToUI(b, wide(b, x), LLVMTypeOf(in), "");
    case LLVMCall: {
        bool any = is_bf(in);
        for (int i = 0; i < LLVMGetNumArgOperands(in); i++) any |= is_bf(LLVMGetOperand(in, (unsigned)i));
        return any ? soft_intrinsic(b, in) : NULL;
    }
    default: return NULL;
    }
}

int legalize_bf16(Ctx *c) {
    if (!c->uses_bf16) return 0;
    bool native = c->opt.target == GJ_TARGET_NVPTX && c->opt.cc_major >= 8;
    LLVMBuilderRef b = LLVMCreateBuilderInContext(c->llctx);
    for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef in = LLVMGetFirstInstruction(bb), next; in; in = next) {
                next = LLVMGetNextInstruction(in);
                LLVMPositionBuilderBefore(b, in);
                LLVMValueRef r = legal(b, in, native);
                if (!r) continue;
                LLVMReplaceAllUsesWith(in, r);
                LLVMInstructionEraseFromParent(in);
            }
    LLVMDisposeBuilder(b);
    return 0;
}

/* ---- gpu.bf16.*: numba.cuda's cuda.bf16 ---- */

/* What a function does: one of fp16.c's (sub is its Fp16Op), or one of these. */
enum {
    BF_FP16,     /* fp16.c's function `sub` on bfloat16 values */
    BF_SAT,      /* fp16.c's `sub`, then clamped to [0, 1], a NaN to +0 (CUDA's _sat) */
    BF_RELU,     /* fma, then negative results to +0 (__hfma_relu) */
    BF_MAXNAN,   /* max/min with a NaN giving NaN (sub 1: max, 0: min) */
    BF_CMPU,     /* an unordered comparison: true where either is NaN (sub: the LLVM predicate) */
    BF_ISNAN,    /* bool */
    BF_ISINF,    /* int32: 1 for +inf, -1 for -inf, else 0 */
    BF_TO,       /* the argument, converted to `arg`, to bfloat16 in `mode` */
    BF_FROM,     /* a bfloat16 to `ret`, an integer rounded in `mode` first */
    BF_BITS,     /* the 16 bits reinterpreted, from `arg` to `ret` */
};

/* One list, two names each (numba.cuda's NumPy-style name and CUDA's), expanded into the
 * table of rows and the table of intrinsic paths below.
 * X(name, cuda_name, op, sub, arg, ret, mode) */
#define BF_TO4(X, np, cu, ty)                                                                         \
    X(np##_to_bfloat16_rn, cu##2bfloat16_rn, BF_TO, 0, ty, TY_BFLOAT16, ROUND_RN)                    \
    X(np##_to_bfloat16_rz, cu##2bfloat16_rz, BF_TO, 0, ty, TY_BFLOAT16, ROUND_RZ)                    \
    X(np##_to_bfloat16_rd, cu##2bfloat16_rd, BF_TO, 0, ty, TY_BFLOAT16, ROUND_RD)                    \
    X(np##_to_bfloat16_ru, cu##2bfloat16_ru, BF_TO, 0, ty, TY_BFLOAT16, ROUND_RU)
#define BF_FROM4(X, np, cu, ty)                                                                       \
    X(bfloat16_to_##np##_rn, bfloat162##cu##_rn, BF_FROM, 0, TY_BFLOAT16, ty, ROUND_RN)              \
    X(bfloat16_to_##np##_rz, bfloat162##cu##_rz, BF_FROM, 0, TY_BFLOAT16, ty, ROUND_RZ)              \
    X(bfloat16_to_##np##_rd, bfloat162##cu##_rd, BF_FROM, 0, TY_BFLOAT16, ty, ROUND_RD)              \
    X(bfloat16_to_##np##_ru, bfloat162##cu##_ru, BF_FROM, 0, TY_BFLOAT16, ty, ROUND_RU)
#define H(X, n, op) X(h##n, h##n, BF_FP16, op, TY_BFLOAT16, TY_BFLOAT16, ROUND_RN)
#define BF16_FNS(X)                                                                                   \
    H(X, add, FP16_ADD) H(X, sub, FP16_SUB) H(X, mul, FP16_MUL) H(X, div, FP16_DIV) H(X, fma, FP16_FMA)            \
    H(X, neg, FP16_NEG) H(X, abs, FP16_ABS) H(X, max, FP16_MAX) H(X, min, FP16_MIN)                              \
    H(X, add_rn, FP16_ADD) H(X, sub_rn, FP16_SUB) H(X, mul_rn, FP16_MUL)                                      \
    H(X, ceil, FP16_CEIL) H(X, floor, FP16_FLOOR) H(X, trunc, FP16_TRUNC) H(X, rint, FP16_RINT) H(X, sqrt, FP16_SQRT) \
    H(X, rsqrt, FP16_RSQRT) H(X, rcp, FP16_RCP) H(X, exp, FP16_EXP) H(X, exp2, FP16_EXP2) H(X, exp10, FP16_EXP10)   \
    H(X, log, FP16_LOG) H(X, log2, FP16_LOG2) H(X, log10, FP16_LOG10) H(X, sin, FP16_SIN) H(X, cos, FP16_COS)       \
    H(X, tanh, FP16_TANH) H(X, tanh_approx, FP16_TANH_APPROX)                                              \
    H(X, eq, FP16_EQ) H(X, ne, FP16_NE) H(X, gt, FP16_GT) H(X, ge, FP16_GE) H(X, lt, FP16_LT) H(X, le, FP16_LE)        \
    X(hadd_sat, hadd_sat, BF_SAT, FP16_ADD, TY_BFLOAT16, TY_BFLOAT16, ROUND_RN)                      \
    X(hsub_sat, hsub_sat, BF_SAT, FP16_SUB, TY_BFLOAT16, TY_BFLOAT16, ROUND_RN)                      \
    X(hmul_sat, hmul_sat, BF_SAT, FP16_MUL, TY_BFLOAT16, TY_BFLOAT16, ROUND_RN)                      \
    X(hfma_sat, hfma_sat, BF_SAT, FP16_FMA, TY_BFLOAT16, TY_BFLOAT16, ROUND_RN)                      \
    X(hfma_relu, hfma_relu, BF_RELU, 0, TY_BFLOAT16, TY_BFLOAT16, ROUND_RN)                          \
    X(hmax_nan, hmax_nan, BF_MAXNAN, 1, TY_BFLOAT16, TY_BFLOAT16, ROUND_RN)                          \
    X(hmin_nan, hmin_nan, BF_MAXNAN, 0, TY_BFLOAT16, TY_BFLOAT16, ROUND_RN)                          \
    X(hequ, hequ, BF_CMPU, LLVMRealUEQ, TY_BFLOAT16, TY_BOOL, ROUND_RN)                              \
    X(hneu, hneu, BF_CMPU, LLVMRealUNE, TY_BFLOAT16, TY_BOOL, ROUND_RN)                              \
    X(hgeu, hgeu, BF_CMPU, LLVMRealUGE, TY_BFLOAT16, TY_BOOL, ROUND_RN)                              \
    X(hgtu, hgtu, BF_CMPU, LLVMRealUGT, TY_BFLOAT16, TY_BOOL, ROUND_RN)                              \
    X(hleu, hleu, BF_CMPU, LLVMRealULE, TY_BFLOAT16, TY_BOOL, ROUND_RN)                              \
    X(hltu, hltu, BF_CMPU, LLVMRealULT, TY_BFLOAT16, TY_BOOL, ROUND_RN)                              \
    X(hisnan, hisnan, BF_ISNAN, 0, TY_BFLOAT16, TY_BOOL, ROUND_RN)                                   \
    X(hisinf, hisinf, BF_ISINF, 0, TY_BFLOAT16, TY_INT32, ROUND_RN)                                  \
    X(float32_to_bfloat16, float2bfloat16, BF_TO, 0, TY_FLOAT32, TY_BFLOAT16, ROUND_RN)              \
    X(float64_to_bfloat16, double2bfloat16, BF_TO, 0, TY_FLOAT64, TY_BFLOAT16, ROUND_RN)             \
    X(bfloat16_to_float32, bfloat162float, BF_FROM, 0, TY_BFLOAT16, TY_FLOAT32, ROUND_RN)            \
    BF_TO4(X, float32, float, TY_FLOAT32)                                                            \
    X(bfloat16_to_int8_rz, bfloat162char_rz, BF_FROM, 0, TY_BFLOAT16, TY_INT8, ROUND_RZ)             \
    X(bfloat16_to_uint8_rz, bfloat162uchar_rz, BF_FROM, 0, TY_BFLOAT16, TY_UINT8, ROUND_RZ)          \
    BF_TO4(X, int16, short, TY_INT16) BF_FROM4(X, int16, short, TY_INT16)                            \
    BF_TO4(X, uint16, ushort, TY_UINT16) BF_FROM4(X, uint16, ushort, TY_UINT16)                      \
    BF_TO4(X, int32, int, TY_INT32) BF_FROM4(X, int32, int, TY_INT32)                                \
    BF_TO4(X, uint32, uint, TY_UINT32) BF_FROM4(X, uint32, uint, TY_UINT32)                          \
    BF_TO4(X, int64, ll, TY_INT64) BF_FROM4(X, int64, ll, TY_INT64)                                  \
    BF_TO4(X, uint64, ull, TY_UINT64) BF_FROM4(X, uint64, ull, TY_UINT64)                            \
    X(bfloat16_as_int16, bfloat16_as_short, BF_BITS, 0, TY_BFLOAT16, TY_INT16, ROUND_RN)             \
    X(bfloat16_as_uint16, bfloat16_as_ushort, BF_BITS, 0, TY_BFLOAT16, TY_UINT16, ROUND_RN)          \
    X(int16_as_bfloat16, short_as_bfloat16, BF_BITS, 0, TY_INT16, TY_BFLOAT16, ROUND_RN)             \
    X(uint16_as_bfloat16, ushort_as_bfloat16, BF_BITS, 0, TY_UINT16, TY_BFLOAT16, ROUND_RN)

typedef struct Bf16Fn {
    int op, sub;
    TypeKind arg, ret;
    RoundMode mode;
} Bf16Fn;

#define ROW(name, cu, op, sub, arg, ret, mode) {op, sub, arg, ret, mode},
static const Bf16Fn rows[] = {BF16_FNS(ROW)};
#undef ROW
enum { NROWS = sizeof rows / sizeof rows[0] };
#define PATHS(name, cu, op, sub, arg, ret, mode) {"gpujit.bf16." #name}, {"gpujit.bf16." #cu},
static const struct {
    const char *path;
} paths[] = {BF16_FNS(PATHS)};
#undef PATHS
#undef H

/* the Intrinsic of each path (its row: index / 2), made once */
static Intrinsic intrinsics_bf16[2 * NROWS];
static pthread_once_t made = PTHREAD_ONCE_INIT;
static void make(void) {
    for (int i = 0; i < (int)(2 * NROWS); i++) intrinsics_bf16[i] = (Intrinsic){paths[i].path, IK_BF16, i / 2};
}

const Intrinsic *bf16_lookup(const char *path) {
    pthread_once(&made, make);
    for (int i = 0; i < (int)(2 * NROWS); i++)
        if (!strcmp(intrinsics_bf16[i].path, path)) return &intrinsics_bf16[i];
    return NULL;
}

PyObject *bf16_names(void) {
    PyObject *t = PyTuple_New(2 * NROWS);
    for (int i = 0; t && i < (int)(2 * NROWS); i++) {
        PyObject *s = PyUnicode_FromString(paths[i].path + strlen("gpujit.bf16."));
        if (!s) return Py_DECREF(t), NULL;
        PyTuple_SET_ITEM(t, i, s);
    }
    return t;
}

static int nargs_of(const Bf16Fn *f) {
    switch (f->op) {
    case BF_FP16:
    case BF_SAT: return fp16_nargs(f->sub);
    case BF_RELU: return 3;
    case BF_MAXNAN:
    case BF_CMPU: return 2;
    default: return 1;
    }
}

Type *type_bf16(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs) {
    const Bf16Fn *f = &rows[k->id];
    if (f->op == BF_FP16) return type_half_fn(c, in, k->path, f->sub, &ty_bfloat16, at, nargs);
    int want = nargs_of(f);
    if (nargs != want) TERR("%s() takes %d argument%s, got %d", path_pretty(k->path), want, want == 1 ? "" : "s", nargs);
    for (int i = 0; i < nargs; i++)
        if (!is_scalar(at[i]))
            TERR("%s() takes %s values, not %s (argument %d)", path_pretty(k->path), type_name(c, type_scalar(f->arg)),
                 type_name(c, at[i]), i + 1);
    return type_scalar(f->ret);
}

static LLVMValueRef nan_bf16(Ctx *c) { return LLVMBuildBitCast(c->b, LLVMConstInt(c->i16, 0x7fff, 0), llvm_type(c, &ty_bfloat16), ""); }

LLVMValueRef lower_bf16(Ctx *c, int id, Instr **a, int nargs, Type *rt) {
    const Bf16Fn *f = &rows[id];
    Type *bf = &ty_bfloat16, *at = type_scalar(f->arg);
    LLVMTypeRef bt = llvm_type(c, bf);
    LLVMValueRef x[3];
    if (f->op == BF_FP16 || f->op == BF_SAT) {
        LLVMValueRef r = lower_fp16(c, f->sub, a, nargs, bf);
        if (f->op == BF_FP16 || !r) return r;
        /* in float32, exact: > 1 -> 1; NaN and < 0 -> +0 */
        LLVMValueRef w = convert(c, r, bf, &ty_float32), one = LLVMConstReal(c->f32, 1.0), zero = LLVMConstReal(c->f32, 0.0);
        w = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOGT, w, one, ""), one, w, "");
        w = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealUGE, w, zero, ""), w, zero, "");
        w = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealUNO, w, w, ""), zero, w, "");
        return convert(c, w, &ty_float32, bf);
    }
    for (int i = 0; i < nargs && i < 3; i++) x[i] = val_as(c, a[i], at);
    switch (f->op) {
    case BF_RELU: {
        LLVMValueRef r = call_intrinsic(c, "llvm.fma", &bt, 1, x, 3);
        LLVMValueRef neg = LLVMBuildFCmp(c->b, LLVMRealOLT, r, LLVMConstReal(bt, 0.0), "");
        LLVMValueRef nan = LLVMBuildFCmp(c->b, LLVMRealUNO, r, r, "");
        r = LLVMBuildSelect(c->b, neg, LLVMConstReal(bt, 0.0), r, "");
        return LLVMBuildSelect(c->b, nan, nan_bf16(c), r, "");
    }
    case BF_MAXNAN: {
        LLVMValueRef r = call_intrinsic(c, f->sub ? "llvm.maxnum" : "llvm.minnum", &bt, 1, x, 2);
        LLVMValueRef nan = LLVMBuildFCmp(c->b, LLVMRealUNO, x[0], x[1], "");
        return LLVMBuildSelect(c->b, nan, nan_bf16(c), r, "");
    }
    case BF_CMPU: return LLVMBuildFCmp(c->b, (LLVMRealPredicate)f->sub, x[0], x[1], "");
    case BF_ISNAN: return LLVMBuildFCmp(c->b, LLVMRealUNO, x[0], x[0], "");
    case BF_ISINF: {
        LLVMValueRef pinf = LLVMBuildFCmp(c->b, LLVMRealOEQ, x[0], LLVMConstReal(bt, INFINITY), "");
        LLVMValueRef ninf = LLVMBuildFCmp(c->b, LLVMRealOEQ, x[0], LLVMConstReal(bt, -INFINITY), "");
        return LLVMBuildSelect(c->b, pinf, LLVMConstInt(c->i32, 1, 0),
                               LLVMBuildSelect(c->b, ninf, LLVMConstAllOnes(c->i32), LLVMConstInt(c->i32, 0, 0), ""), "");
    }
    case BF_TO:
        if (f->mode == ROUND_RN) return convert(c, x[0], at, bf);
        return bf16_from(c->b, x[0], is_signed(at), f->mode); /* integer rounding on both targets: exact */
    case BF_FROM: {
        LLVMValueRef w = convert(c, x[0], bf, &ty_float32);
        if (is_int(rt)) {
            static const char *const round[] = {[ROUND_RN] = "llvm.roundeven", [ROUND_RZ] = "llvm.trunc",
                                                [ROUND_RD] = "llvm.floor", [ROUND_RU] = "llvm.ceil"};
            w = fcall1(c, round[f->mode], w);
        }
        return convert(c, w, &ty_float32, rt); /* saturating; NaN gives 0 (cvt.rni.s32.f32's) */
    }
    case BF_BITS: return LLVMBuildBitCast(c->b, x[0], llvm_type(c, rt), "");
    }
    internal_error(c, a[0]->loc, "bf16 function %d has no lowering", id);
    return NULL;
}
