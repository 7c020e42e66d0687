/* fp8.c: the fp8 storage types float8_e4m3fn (CUDA's __nv_fp8_e4m3) and
 * float8_e5m2 (__nv_fp8_e5m2), an i8 each, and their conversions, which are all
 * a kernel does with them (numba.cuda's fp8 types have no arithmetic).
 *
 * To fp8: as cuda_fp8.h's constructors, __nv_cvt_double_to_fp8 with
 * __NV_SATFINITE: round to nearest even, overflow (and inf) to the largest finite
 * value, a NaN to 0x7F (a float's NaN first made the canonical positive one, as
 * __nv_cvt_float_to_fp8 does); integers go through float32 first, as the
 * constructors' static_cast<float>. On sm_89 and up a float32 converts with one
 * cvt.rn.satfinite.{e4m3,e5m2}x2.f32; elsewhere, and on the CPU target, the same
 * rounding is integer operations on the double's bits.
 * From fp8: exact, through float32 (NaN stays NaN, E5M2's inf stays inf). */
#include "gj.h"

#include <math.h>
#include <string.h>

typedef struct Fp8Format {
    int bias, sig;                /* exponent bias; significand bits with the implicit one */
    uint64_t mindenorm_o2, overflow, minnorm; /* double bit patterns: 2**-10 (E4M3), ... */
    unsigned maxnorm;
} Fp8Format;

static const Fp8Format e4m3 = {7, 4, 0x3F50000000000000ull, 0x407D000000000000ull, 0x3F90000000000000ull, 0x7E};
static const Fp8Format e5m2 = {15, 3, 0x3EE0000000000000ull, 0x40EE000000000000ull - 1, 0x3F10000000000000ull, 0x7B};

static LLVMValueRef k64(Ctx *c, uint64_t v) { return LLVMConstInt(c->i64, v, 0); }

/* A double's fp8 bits (an i8), rounded to nearest even; an overflow saturates to the
 * finite range (satfinite) or gives E4M3's NaN / E5M2's inf. */
static LLVMValueRef encode(Ctx *c, LLVMValueRef d, bool is_e4m3, bool satfinite) {
    const Fp8Format *f = is_e4m3 ? &e4m3 : &e5m2;
    LLVMBuilderRef b = c->b;
    uint64_t half_ulp = 1ull << (53 - f->sig - 1);
    LLVMValueRef x = LLVMBuildBitCast(b, d, c->i64, "");
    LLVMValueRef sign = LLVMBuildShl(b, LLVMBuildLShr(b, x, k64(c, 63), ""), k64(c, 7), "");
    LLVMValueRef absx = LLVMBuildAnd(b, x, k64(c, 0x7FFFFFFFFFFFFFFFull), "");
    /* the exponent field rebiased (as unsigned 8-bit arithmetic in CUDA's code: only its low bits matter) */
    LLVMValueRef exp = LLVMBuildSub(b, LLVMBuildAnd(b, LLVMBuildLShr(b, x, k64(c, 52), ""), k64(c, 0x7FF), ""),
                                    k64(c, (uint64_t)(1023 - f->bias)), "");
    LLVMValueRef mant = LLVMBuildAnd(b, LLVMBuildLShr(b, x, k64(c, (uint64_t)(53 - f->sig)), ""),
                                     k64(c, (1ull << (f->sig - 1)) - 1), "");
    /* normal range */
    LLVMValueRef norm = LLVMBuildOr(b, LLVMBuildShl(b, exp, k64(c, (uint64_t)(f->sig - 1)), ""), mant, "");
    LLVMValueRef round = LLVMBuildAnd(b, x, k64(c, (half_ulp << 1) - 1), "");
    LLVMValueRef up = LLVMBuildOr(
            b, LLVMBuildICmp(b, LLVMIntUGT, round, k64(c, half_ulp), ""),
            LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, round, k64(c, half_ulp), ""),
                         LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, mant, k64(c, 1), ""), k64(c, 0), ""), ""),
            "");
    norm = LLVMBuildAdd(b, norm, LLVMBuildZExt(b, up, c->i64, ""), "");
    /* subnormal range: shift = 1 - exp, from 1 to sig */
    LLVMValueRef shift = LLVMBuildSub(b, k64(c, 1), exp, "");
    shift = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntUGT, shift, k64(c, 16), ""), k64(c, 16), shift, "");
    LLVMValueRef m1 = LLVMBuildOr(b, mant, k64(c, 1ull << (f->sig - 1)), "");
    LLVMValueRef sub = LLVMBuildLShr(b, m1, shift, "");
    LLVMValueRef hs = LLVMBuildShl(b, k64(c, half_ulp), shift, "");
    LLVMValueRef sround = LLVMBuildAnd(b, LLVMBuildOr(b, x, k64(c, 1ull << 52), ""),
                                       LLVMBuildSub(b, LLVMBuildShl(b, hs, k64(c, 1), ""), k64(c, 1), ""), "");
    LLVMValueRef sup = LLVMBuildOr(
            b, LLVMBuildICmp(b, LLVMIntUGT, sround, hs, ""),
            LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, sround, hs, ""),
                         LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, sub, k64(c, 1), ""), k64(c, 0), ""), ""),
            "");
    sub = LLVMBuildAdd(b, sub, LLVMBuildZExt(b, sup, c->i64, ""), "");
    /* the cases, the last first */
    LLVMValueRef r = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntUGE, absx, k64(c, f->minnorm), ""), norm, sub, "");
    LLVMValueRef over = k64(c, satfinite ? f->maxnorm : is_e4m3 ? 0x7F : 0x7C);
    r = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntUGT, absx, k64(c, f->overflow), ""), over, r, "");
    LLVMValueRef nan = is_e4m3 ? k64(c, 0x7F) : LLVMBuildOr(b, k64(c, 0x7E), mant, "");
    r = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntUGT, absx, k64(c, 0x7FF0000000000000ull), ""), nan, r, "");
    r = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntULE, absx, k64(c, f->mindenorm_o2), ""), k64(c, 0), r, "");
    return LLVMBuildTrunc(b, LLVMBuildOr(b, LLVMBuildAnd(b, r, k64(c, 0x7F), ""), sign, ""), c->i8, "");
}

/* A float32 to fp8 with the GPU's own instruction (sm_89+, PTX 7.8): the low byte of
 * cvt.rn.satfinite.<fmt>x2.f32 of (0.0, x), as cuda_fp8.h's __nv_cvt_float_to_fp8. */
static LLVMValueRef encode_native(Ctx *c, LLVMValueRef f, bool is_e4m3) {
    const char *text = is_e4m3 ? "cvt.rn.satfinite.e4m3x2.f32 $0, $2, $1;" : "cvt.rn.satfinite.e5m2x2.f32 $0, $2, $1;";
    LLVMTypeRef pt[2] = {c->f32, c->f32};
    LLVMTypeRef fty = LLVMFunctionType(c->i16, pt, 2, 0);
    LLVMValueRef a = LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)"=h,f,f", 6, 0, 0,
                                      LLVMInlineAsmDialectATT, 0);
    LLVMValueRef args[2] = {f, LLVMConstReal(c->f32, 0.0)};
    return LLVMBuildTrunc(c->b, LLVMBuildCall2(c->b, fty, a, args, 2, ""), c->i8, "");
}

/* fp8 bits to the float32 of the same value. E5M2 is a float16's top byte; E4M3 is
 * (8 + m) * 2**(e - 10), or m * 2**-9 below the normals, with S.1111.111 its NaN. */
static LLVMValueRef decode(Ctx *c, LLVMValueRef v, bool is_e4m3) {
    LLVMBuilderRef b = c->b;
    if (!is_e4m3) {
        LLVMValueRef h = LLVMBuildShl(b, LLVMBuildZExt(b, v, c->i16, ""), LLVMConstInt(c->i16, 8, 0), "");
        return convert(c, LLVMBuildBitCast(b, h, LLVMHalfTypeInContext(c->llctx), ""), &ty_float16, &ty_float32);
    }
    LLVMValueRef u = LLVMBuildZExt(b, v, c->i32, "");
    LLVMValueRef e = LLVMBuildAnd(b, LLVMBuildLShr(b, u, LLVMConstInt(c->i32, 3, 0), ""), LLVMConstInt(c->i32, 15, 0), "");
    LLVMValueRef m = LLVMBuildAnd(b, u, LLVMConstInt(c->i32, 7, 0), "");
    LLVMValueRef is_sub = LLVMBuildICmp(b, LLVMIntEQ, e, LLVMConstInt(c->i32, 0, 0), "");
    /* significand as an integer, scaled by 2**(e - 10) (2**-9 for subnormals): exact */
    LLVMValueRef sig = LLVMBuildSelect(b, is_sub, m, LLVMBuildAdd(b, m, LLVMConstInt(c->i32, 8, 0), ""), "");
    LLVMValueRef pow = LLVMBuildSelect(b, is_sub, LLVMConstInt(c->i32, 127 - 9, 0),
                                       LLVMBuildAdd(b, e, LLVMConstInt(c->i32, 127 - 10, 0), ""), "");
    LLVMValueRef scale = LLVMBuildBitCast(b, LLVMBuildShl(b, pow, LLVMConstInt(c->i32, 23, 0), ""), c->f32, "");
    LLVMValueRef mag = LLVMBuildFMul(b, LLVMBuildUIToFP(b, sig, c->f32, ""), scale, "");
    LLVMValueRef nan = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, u, LLVMConstInt(c->i32, 0x7F, 0), ""),
                                     LLVMConstInt(c->i32, 0x7F, 0), "");
    mag = LLVMBuildSelect(b, nan, LLVMConstReal(c->f32, NAN), mag, "");
    LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, u, LLVMConstInt(c->i32, 0x80, 0), ""),
                                     LLVMConstInt(c->i32, 0, 0), "");
    return LLVMBuildSelect(b, neg, LLVMBuildFNeg(b, mag, ""), mag, "");
}

/* x (float32 or float64) to fp8 bits as __nv_cvt_float_to_fp8 / __nv_cvt_double_to_fp8 */
static LLVMValueRef to_fp8(Ctx *c, LLVMValueRef x, Type *from, bool is_e4m3, bool satfinite) {
    if (from->kind == TY_FLOAT64) return encode(c, x, is_e4m3, satfinite);
    if (satfinite && c->opt.target == GJ_TARGET_NVPTX && c->opt.cc_major * 10 + c->opt.cc_minor >= 89 &&
        nvptx_ptx_version(c) >= 78)
        return encode_native(c, x, is_e4m3);
    LLVMValueRef nan = LLVMBuildFCmp(c->b, LLVMRealUNO, x, x, "");
    LLVMValueRef qnan = LLVMBuildBitCast(c->b, LLVMConstInt(c->i32, 0x7FFFFFFF, 0), c->f32, "");
    x = LLVMBuildSelect(c->b, nan, qnan, x, ""); /* CUDA's canonical NaN, 0x7FFFFFFF */
    return encode(c, LLVMBuildFPExt(c->b, x, c->f64, ""), is_e4m3, satfinite);
}

LLVMValueRef fp8_convert(Ctx *c, LLVMValueRef v, Type *from, Type *to) {
    if (is_fp8(from)) {
        LLVMValueRef f = decode(c, v, from->kind == TY_FP8_E4M3);
        return convert(c, f, &ty_float32, to);
    }
    bool is_e4m3 = to->kind == TY_FP8_E4M3;
    if (from->kind == TY_FLOAT64) return to_fp8(c, v, from, is_e4m3, true);
    /* exact from a 16-bit float; an integer rounds to float32 first, as CUDA's constructors */
    return to_fp8(c, convert(c, v, from, &ty_float32), &ty_float32, is_e4m3, true);
}

/* cvt_float_to_fp8(x, saturation_t.X, fp8_interpretation_t.Y), cvt_double_to_fp8(...):
 * the storage bits (uint8); the two modes are compile-time constants (numba.cuda's enums:
 * NOSAT 0, SATFINITE 1; E4M3 0, E5M2 1). */
Type *type_fp8_cvt(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs) {
    const char *name = path_pretty(k->path);
    if (nargs != 3) TERR("%s(x, saturation, interpretation) takes 3 arguments, got %d", name, nargs);
    if (!is_scalar(at[0]) || is_complex(at[0])) TERR("%s() converts a real number, not %s", name, type_name(c, at[0]));
    for (int i = 1; i < 3; i++) {
        Instr *v = literal_operand(c, in, in->args[i + 1]);
        if (v->op != IR_CONST || v->ckind != CK_INT || v->ival < 0 || v->ival > 1)
            TERR("%s(): the %s must be a constant, %s", name, i == 1 ? "saturation" : "interpretation",
                 i == 1 ? "saturation_t.NOSAT or SATFINITE" : "fp8_interpretation_t.E4M3 or E5M2");
    }
    return &ty_uint8;
}

LLVMValueRef lower_fp8_cvt(Ctx *c, Instr *in, const Intrinsic *k, Instr **a) {
    Type *from = type_scalar(k->id);
    bool sat = in->args[2]->ival == 1, e4m3 = in->args[3]->ival == 0;
    return to_fp8(c, val_as(c, a[0], from), from, e4m3, sat);
}
