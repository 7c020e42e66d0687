/* builtins.c: the lowering of builtins that take more than an instruction
 * or a libm call: min/max/sum/any/all over a tuple's items, round(x, n) as
 * CPython rounds, pow(a, b, m) by modular squaring; and math.frexp/modf,
 * C functions with an out-parameter. */
#include <math.h>

#include "gj.h"

/* The values and types min/max/sum/any/all work over: the arguments, or
 * the items of a single tuple argument (up to LIMIT_TUPLE of them), in arrays
 * from the arena. Returns how many, or -1 (out of memory). */
int spread_args(Ctx *c, Instr **a, int nargs, LLVMValueRef **vp, Type ***tp) {
    bool one = nargs == 1 && a[0]->type->kind == TY_TUPLE;
    int n = one ? a[0]->type->n : nargs;
    LLVMValueRef *v = arena_alloc(&c->arena, sizeof *v * (size_t)(n ? n : 1));
    Type **t = arena_alloc(&c->arena, sizeof *t * (size_t)(n ? n : 1));
    if (!v || !t) return -1;
    *vp = v, *tp = t;
    if (one) {
        Type *tt = a[0]->type;
        LLVMValueRef tv = val(c, a[0]);
        for (int i = 0; i < n; i++) {
            v[i] = LLVMBuildExtractValue(c->b, tv, (unsigned)i, "");
            t[i] = tt->items[i];
        }
        return n;
    }
    for (int i = 0; i < n; i++) {
        v[i] = val(c, a[i]);
        t[i] = a[i]->type;
    }
    return n;
}

/* round(x, n) of a float, in double precision, as CPython rounds: x times
 * 10**n (10**-n divides for n < 0), rounded half to even, scaled back. For
 * |n| <= 22, 10**n is exact and an fma gives the product's (quotient's)
 * rounding error exactly, which settles a product that rounded onto a half;
 * the scaling back is then one correctly rounded operation, as CPython's
 * decimal conversion is. Past 22 digits 10**n is two factors (each finite)
 * and the error is not tracked. Infinities and NaN are returned as they
 * are, as is x when the scaling overflows. */
LLVMValueRef round_float_ndigits(Ctx *c, LLVMValueRef x, LLVMValueRef n) {
    LLVMTypeRef d = c->f64;
    LLVMValueRef nonneg = LLVMBuildICmp(c->b, LLVMIntSGE, n, ci64(c, 0), "");
    LLVMValueRef big = LLVMBuildICmp(c->b, LLVMIntSGT, n, ci64(c, 22), "");
    LLVMValueRef e =
            LLVMBuildSelect(c->b, nonneg, LLVMBuildSelect(c->b, big, LLVMBuildSub(c->b, n, ci64(c, 22), ""), n, ""),
                            LLVMBuildNeg(c->b, n, ""), "");
    e = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntUGT, e, ci64(c, 400), ""), ci64(c, 400), e, "");
    LLVMValueRef pa[2] = {LLVMConstReal(d, 10.0), LLVMBuildSIToFP(c->b, e, d, "")};
    LLVMValueRef p1 = math_call(c, "pow", &ty_float64, pa, 2);
    if (!p1) return NULL;
    double pw = 1.0;
    for (int j = 0; j <= 22; j++, pw *= 10.0) /* exact powers of ten, whatever pow's accuracy */
        p1 = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, e, ci64(c, j), ""), LLVMConstReal(d, pw), p1, "");
    LLVMValueRef p2 = LLVMBuildSelect(c->b, big, LLVMConstReal(d, 1e22), LLVMConstReal(d, 1.0), "");
    LLVMValueRef xp = LLVMBuildFMul(c->b, x, p1, ""), xq = LLVMBuildFDiv(c->b, x, p1, "");
    LLVMValueRef y = LLVMBuildSelect(c->b, nonneg, LLVMBuildFMul(c->b, xp, p2, ""), xq, "");
    LLVMTypeRef dt = d;
    LLVMValueRef fa[3] = {x, p1, LLVMBuildFNeg(c->b, xp, "")}, fb[3] = {LLVMBuildFNeg(c->b, xq, ""), p1, x};
    LLVMValueRef err =
            LLVMBuildSelect(c->b, nonneg, call_intrinsic(c, "llvm.fma", &dt, 1, fa, 3),
                            call_intrinsic(c, "llvm.fma", &dt, 1, fb, 3), ""); /* exact x*p1 - xp, x - xq*p1 */
    err = LLVMBuildSelect(c->b, big, LLVMConstReal(d, 0.0), err, "");
    LLVMValueRef z = call_intrinsic(c, "llvm.roundeven", &dt, 1, &y, 1);
    LLVMValueRef yz = LLVMBuildFSub(c->b, y, z, "");
    LLVMValueRef tie =
            LLVMBuildFCmp(c->b, LLVMRealOEQ, call_intrinsic(c, "llvm.fabs", &dt, 1, &yz, 1), LLVMConstReal(d, 0.5), "");
    LLVMValueRef half = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOGT, err, LLVMConstReal(d, 0.0), ""),
                                        LLVMConstReal(d, 0.5), LLVMConstReal(d, -0.5), "");
    z = LLVMBuildSelect(c->b,
                        LLVMBuildAnd(c->b, tie, LLVMBuildFCmp(c->b, LLVMRealONE, err, LLVMConstReal(d, 0.0), ""), ""),
                        LLVMBuildFAdd(c->b, y, half, ""), z, "");
    /* from 2**52 on, y is an integer and err alone is the fraction: a tie (err = +-0.5) goes to the even one of
     * y and y +- 1 */
    LLVMValueRef ay = call_intrinsic(c, "llvm.fabs", &dt, 1, &y, 1),
                 hy = LLVMBuildFMul(c->b, y, LLVMConstReal(d, 0.5), "");
    LLVMValueRef yeven = LLVMBuildFCmp(c->b, LLVMRealOEQ, hy, call_intrinsic(c, "llvm.trunc", &dt, 1, &hy, 1), "");
    LLVMValueRef etie = LLVMBuildFCmp(c->b, LLVMRealOEQ, call_intrinsic(c, "llvm.fabs", &dt, 1, &err, 1),
                                      LLVMConstReal(d, 0.5), "");
    LLVMValueRef wide = LLVMBuildFCmp(c->b, LLVMRealOGE, ay, LLVMConstReal(d, 4503599627370496.0), ""); /* 2**52 */
    z = LLVMBuildSelect(c->b, LLVMBuildAnd(c->b, wide, LLVMBuildAnd(c->b, etie, LLVMBuildNot(c->b, yeven, ""), ""), ""),
                        LLVMBuildFAdd(c->b, y, LLVMBuildFMul(c->b, err, LLVMConstReal(d, 2.0), ""), ""), z, "");
    z = LLVMBuildSelect(c->b, nonneg, LLVMBuildFDiv(c->b, LLVMBuildFDiv(c->b, z, p2, ""), p1, ""),
                        LLVMBuildFMul(c->b, z, p1, ""), "");
    /* z * inf for a huge negative n: the answer is a zero of x's sign */
    LLVMValueRef zero[2] = {LLVMConstReal(d, 0.0), x};
    LLVMValueRef sz = call_intrinsic(c, "llvm.copysign", &dt, 1, zero, 2);
    z = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealUNO, z, z, ""), sz, z, "");
    /* and a zero result keeps x's sign (round(-0.001, 2) is -0.0) */
    z = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOEQ, z, LLVMConstReal(d, 0.0), ""), sz, z, "");
    LLVMValueRef inf = LLVMConstReal(d, INFINITY);
    /* |x * 10**n| >= 2**53: 10**-n is below x's ulp, so x is its own rounding */
    LLVMValueRef fin =
            LLVMBuildAnd(c->b, LLVMBuildFCmp(c->b, LLVMRealOLT, call_intrinsic(c, "llvm.fabs", &dt, 1, &x, 1), inf, ""),
                         LLVMBuildFCmp(c->b, LLVMRealOLT, ay, LLVMConstReal(d, 9007199254740992.0), ""), "");
    return LLVMBuildSelect(c->b, fin, z, x, "");
}

/* round(x, n) of an int64: x itself for n >= 0, else the nearest multiple
 * of 10**-n, ties to the even multiple (CPython's). */
LLVMValueRef round_int_ndigits(Ctx *c, LLVMValueRef x, LLVMValueRef n) {
    LLVMValueRef k = LLVMBuildNeg(c->b, n, ""), p = ci64(c, 1), zero = ci64(c, 0), one = ci64(c, 1);
    int64_t pow10 = 1;
    for (int j = 1; j <= 18; j++) { /* 10**k for k <= 18 (int64's last power of ten) */
        pow10 *= 10;
        p = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSGE, k, ci64(c, j), ""), ci64(c, pow10), p, "");
    }
    LLVMValueRef q = LLVMBuildSDiv(c->b, x, p, ""), r = LLVMBuildSRem(c->b, x, p, "");
    LLVMValueRef rneg = LLVMBuildICmp(c->b, LLVMIntSLT, r, zero, ""); /* floor: 0 <= r < p */
    q = LLVMBuildSelect(c->b, rneg, LLVMBuildSub(c->b, q, one, ""), q, "");
    r = LLVMBuildSelect(c->b, rneg, LLVMBuildAdd(c->b, r, p, ""), r, "");
    LLVMValueRef r2 = LLVMBuildShl(c->b, r, one, "");
    LLVMValueRef odd = LLVMBuildICmp(c->b, LLVMIntNE, LLVMBuildAnd(c->b, q, one, ""), zero, "");
    LLVMValueRef up = LLVMBuildOr(c->b, LLVMBuildICmp(c->b, LLVMIntSGT, r2, p, ""),
                                  LLVMBuildAnd(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, r2, p, ""), odd, ""), "");
    LLVMValueRef res = LLVMBuildMul(c->b, LLVMBuildAdd(c->b, q, LLVMBuildZExt(c->b, up, c->i64, ""), ""), p, "");
    LLVMValueRef neg = LLVMBuildICmp(c->b, LLVMIntSLT, n, zero, "");
    LLVMValueRef huge = LLVMBuildICmp(c->b, LLVMIntSGT, k, ci64(c, 18), ""); /* |x| < 10**19 / 2: 0 */
    return LLVMBuildSelect(c->b, neg, LLVMBuildSelect(c->b, huge, zero, res, ""), x, "");
}

/* (x + y) mod m for x, y < m <= 2**63: the sum fits in 64 unsigned bits. */
static LLVMValueRef add_mod(Ctx *c, LLVMValueRef x, LLVMValueRef y, LLVMValueRef m) {
    LLVMValueRef s = LLVMBuildAdd(c->b, x, y, "");
    return LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntUGE, s, m, ""), LLVMBuildSub(c->b, s, m, ""), s, "");
}

/* x * y mod m (x, y < m <= 2**63) by doubling and adding over y's 64 bits,
 * as an emitted loop: no product wider than 64 bits (the targets have no
 * 128-bit remainder). */
static LLVMValueRef mul_mod(Ctx *c, LLVMValueRef x, LLVMValueRef y, LLVMValueRef m) {
    LLVMValueRef one = ci64(c, 1);
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(c->b), loop = new_block(c, "mulmod"), done = new_block(c, "mulmod.done");
    LLVMBuildBr(c->b, loop);
    LLVMPositionBuilderAtEnd(c->b, loop);
    LLVMValueRef r = LLVMBuildPhi(c->b, c->i64, "r"), bit = LLVMBuildPhi(c->b, c->i64, "bit");
    LLVMValueRef r2 = add_mod(c, r, r, m);
    LLVMValueRef set = LLVMBuildICmp(c->b, LLVMIntNE, LLVMBuildAnd(c->b, LLVMBuildLShr(c->b, y, bit, ""), one, ""),
                                     ci64(c, 0), "");
    r2 = LLVMBuildSelect(c->b, set, add_mod(c, r2, x, m), r2, "");
    LLVMValueRef next = LLVMBuildSub(c->b, bit, one, "");
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, bit, ci64(c, 0), ""), done, loop);
    LLVMValueRef rin[2] = {ci64(c, 0), r2}, bin[2] = {ci64(c, 63), next};
    LLVMBasicBlockRef from[2] = {pre, loop};
    LLVMAddIncoming(r, rin, from, 2);
    LLVMAddIncoming(bit, bin, from, 2);
    LLVMPositionBuilderAtEnd(c->b, done);
    return r2;
}

/* pow(a, b, m) of int64s: a**b mod m by squaring; the result has m's sign,
 * as in Python. m == 0 and b < 0 (Python: ValueError, or a modular inverse)
 * give 0. */
LLVMValueRef pow_mod(Ctx *c, LLVMValueRef a, LLVMValueRef b, LLVMValueRef m) {
    LLVMValueRef zero = ci64(c, 0), one = ci64(c, 1);
    LLVMValueRef mneg = LLVMBuildICmp(c->b, LLVMIntSLT, m, zero, "");
    LLVMValueRef mm = LLVMBuildSelect(c->b, mneg, LLVMBuildNeg(c->b, m, ""), m, ""); /* |m|, unsigned */
    LLVMValueRef bad = LLVMBuildOr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, m, zero, ""),
                                   LLVMBuildICmp(c->b, LLVMIntSLT, b, zero, ""), "");
    mm = LLVMBuildSelect(c->b, bad, one, mm, "");
    LLVMValueRef aneg = LLVMBuildICmp(c->b, LLVMIntSLT, a, zero, "");
    LLVMValueRef ar = LLVMBuildURem(c->b, LLVMBuildSelect(c->b, aneg, LLVMBuildNeg(c->b, a, ""), a, ""), mm, "");
    LLVMValueRef base =
            LLVMBuildSelect(c->b, LLVMBuildAnd(c->b, aneg, LLVMBuildICmp(c->b, LLVMIntNE, ar, zero, ""), ""),
                            LLVMBuildSub(c->b, mm, ar, ""), ar, "");
    LLVMValueRef e0 = LLVMBuildSelect(c->b, bad, zero, b, "");
    LLVMValueRef r0 = LLVMBuildURem(c->b, one, mm, "");
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(c->b), loop = new_block(c, "powmod"), done = new_block(c, "powmod.done");
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, e0, zero, ""), done, loop);
    LLVMPositionBuilderAtEnd(c->b, loop);
    LLVMValueRef r = LLVMBuildPhi(c->b, c->i64, "r"), x = LLVMBuildPhi(c->b, c->i64, "x"),
                 e = LLVMBuildPhi(c->b, c->i64, "e");
    LLVMValueRef rx = mul_mod(c, r, x, mm), xx = mul_mod(c, x, x, mm);
    LLVMValueRef odd = LLVMBuildICmp(c->b, LLVMIntNE, LLVMBuildAnd(c->b, e, one, ""), zero, "");
    LLVMValueRef r2 = LLVMBuildSelect(c->b, odd, rx, r, "");
    LLVMValueRef e2 = LLVMBuildLShr(c->b, e, one, "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(c->b);
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, e2, zero, ""), done, loop);
    LLVMValueRef rin[2] = {r0, r2}, xin[2] = {base, xx}, ein[2] = {e0, e2};
    LLVMBasicBlockRef from[2] = {pre, latch};
    LLVMAddIncoming(r, rin, from, 2);
    LLVMAddIncoming(x, xin, from, 2);
    LLVMAddIncoming(e, ein, from, 2);
    LLVMPositionBuilderAtEnd(c->b, done);
    LLVMValueRef res = LLVMBuildPhi(c->b, c->i64, "powmod");
    LLVMAddIncoming(res, rin, from, 2);
    LLVMValueRef shift = LLVMBuildAnd(c->b, mneg, LLVMBuildICmp(c->b, LLVMIntNE, res, zero, ""), "");
    res = LLVMBuildSelect(c->b, shift, LLVMBuildAdd(c->b, res, m, ""), res, "");
    return LLVMBuildSelect(c->b, bad, zero, res, "");
}

/* frexp(x), modf(x): C's function with an out-parameter, as a pair. */
LLVMValueRef lower_out_param(Ctx *c, const char *name, Instr *arg, Type *rt) {
    Type *ft = rt->items[0], *ot = rt->items[1];
    LLVMTypeRef t = llvm_type(c, ft), params[2] = {t, c->ptr}, fnty = LLVMFunctionType(t, params, 2, 0);
    LLVMValueRef slot = entry_alloca(c, llvm_type(c, ot), "out");
    LLVMValueRef fn =
            c->target->math_fn(c, arena_printf(&c->arena, "%s%s", name, ft->kind == TY_FLOAT32 ? "f" : ""), fnty);
    if (!fn) return NULL;
    LLVMValueRef x = val_as(c, arg, ft), args[2] = {x, slot};
    LLVMValueRef first = LLVMBuildCall2(c->b, fnty, fn, args, 2, "");
    LLVMValueRef second = LLVMBuildLoad2(c->b, llvm_type(c, ot), slot, "");
    if (ot->kind == TY_INT32) { /* frexp's exponent of inf and NaN: 0, as CPython says (C leaves it unspecified) */
        LLVMValueRef ax = call_intrinsic(c, "llvm.fabs", &t, 1, &x, 1);
        second = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOLT, ax, LLVMConstReal(t, INFINITY), ""), second,
                                 LLVMConstInt(c->i32, 0, 0), "");
    }
    LLVMValueRef r = LLVMBuildInsertValue(c->b, LLVMGetUndef(llvm_type(c, rt)), first, 0, "");
    return LLVMBuildInsertValue(c->b, r, second, 1, "");
}
