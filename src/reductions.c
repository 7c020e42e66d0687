/* reductions.c: whole-array reductions in kernels -- np.sum, prod, min, max,
 * mean, var, std, all, any, argmin, argmax, count_nonzero, the nan* family,
 * and the array methods of the same names (a.sum()). Each is a loop over every
 * element in C order (any layout, any rank), as numba's implementations are:
 * sums and products accumulate in that order (NumPy's pairwise summation may
 * differ in the last bits on long arrays); mean is the sum over the count; var
 * the mean squared distance (|x - mean|^2 for complex) from a second pass.
 * Results follow numba's typing: sums of ints are int64 (uint64 if unsigned),
 * means and variances of ints float64. min/max/argmin/argmax propagate a NaN
 * as NumPy does; the nan* forms skip NaNs (an all-NaN nanmin is NaN).
 * An empty array gives min/max the identity (+-inf, the integer extremes;
 * with debug=True, NumPy's ValueError), mean and var NaN.
 * Requires: infer_types; lower.c's helpers. */
#include <math.h>
#include <string.h>

#include "gj.h"

/* clang-format off */
static const struct { const char *name; bool nan_skip; } reduce_info[] = {
    [RD_SUM] = {"sum", false}, [RD_PROD] = {"prod", false}, [RD_MIN] = {"min", false},
    [RD_MAX] = {"max", false}, [RD_MEAN] = {"mean", false}, [RD_VAR] = {"var", false},
    [RD_STD] = {"std", false}, [RD_ALL] = {"all", false}, [RD_ANY] = {"any", false},
    [RD_ARGMIN] = {"argmin", false}, [RD_ARGMAX] = {"argmax", false},
    [RD_COUNT_NONZERO] = {"count_nonzero", false}, [RD_NANSUM] = {"nansum", true},
    [RD_NANPROD] = {"nanprod", true}, [RD_NANMIN] = {"nanmin", true}, [RD_NANMAX] = {"nanmax", true},
    [RD_NANMEAN] = {"nanmean", true}, [RD_NANVAR] = {"nanvar", true}, [RD_NANSTD] = {"nanstd", true},
};
/* clang-format on */

const char *reduce_name(ReduceFn fn) { return reduce_info[fn].name; }

/* The array a reduction reads: np.f(a), or a.f() (the callee is the IR_ATTR holding a). */
Instr *reduce_operand(Instr *in) {
    if (in->args[0]->op == IR_ATTR) return in->nargs == 1 ? in->args[0]->args[0] : NULL;
    return in->nargs == 2 ? in->args[1] : NULL;
}

/* Mean and variance of ints and bools are float64; of floats and complex, their own. */
static Type *float_of(Type *et) { return is_float(et) || is_complex(et) ? et : &ty_float64; }

Type *reduce_type(Ctx *c, Instr *in, ReduceFn fn) {
    Instr *x = reduce_operand(in);
    const char *name = in->args[0]->op == IR_ATTR ? arena_printf(&c->arena, "a.%s", reduce_info[fn].name)
                                                  : arena_printf(&c->arena, "np.%s", reduce_info[fn].name);
    if (!x) {
        if (in->args[0]->op != IR_ATTR && in->nargs > 2)
            UNSUP("%s() with an axis or other arguments (kernels reduce whole arrays)", name);
        TERR("%s() takes %s", name, in->args[0]->op == IR_ATTR ? "no arguments" : "one array");
    }
    Type *at = x->type;
    if (at->kind != TY_ARRAY) TERR("%s() takes an array, not %s", name, type_name(c, at));
    Type *et = at->elem;
    if (is_fp8(et)) TERR("%s() of an array of %s: a storage type without arithmetic; convert it first", name, type_name(c, et));
    switch (fn) {
    case RD_SUM:
    case RD_PROD:
    case RD_NANSUM:
    case RD_NANPROD:
        if (et->kind == TY_BOOL || (is_index(et) && is_signed(et))) return &ty_int64;
        return is_index(et) ? &ty_uint64 : et;
    case RD_MIN:
    case RD_MAX:
    case RD_NANMIN:
    case RD_NANMAX:
    case RD_ARGMIN:
    case RD_ARGMAX:
        if (is_complex(et)) UNSUP("%s() of a complex array", name);
        return fn == RD_ARGMIN || fn == RD_ARGMAX ? &ty_int64 : et;
    case RD_MEAN:
    case RD_NANMEAN: return float_of(et);
    case RD_VAR:
    case RD_STD:
    case RD_NANVAR:
    case RD_NANSTD: return is_complex(et) ? complex_part(et) : float_of(et);
    case RD_ALL:
    case RD_ANY: return &ty_bool;
    case RD_COUNT_NONZERO: return &ty_int64;
    }
    internal_error(c, in->loc, "typeinfer: reduction %d", (int)fn);
    return NULL;
}

/* ---- the element loop ---- */

typedef struct {
    int ndim;
    LLVMValueRef ivar[LIMIT_NDIM];
    LLVMBasicBlockRef heads[LIMIT_NDIM], latches[LIMIT_NDIM], exit;
} Loop;

/* Opens loops over every element of `a` (outermost axis first) and returns
 * the element's address; the builder is left in the innermost body. */
static LLVMValueRef loop_begin(Ctx *c, Type *at, LLVMValueRef a, Loop *L) {
    LLVMValueRef shape = LLVMBuildExtractValue(c->b, a, 1, ""), strides = LLVMBuildExtractValue(c->b, a, 2, "");
    L->ndim = at->ndim;
    L->exit = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "reduce.done");
    for (int k = 0; k < at->ndim; k++) {
        LLVMValueRef n = LLVMBuildExtractValue(c->b, shape, (unsigned)k, "");
        L->ivar[k] = entry_alloca(c, c->i64, "reduce.i");
        LLVMBuildStore(c->b, ci64(c, 0), L->ivar[k]);
        L->heads[k] = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "reduce.head");
        LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "reduce.body");
        L->latches[k] = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "reduce.next");
        LLVMBuildBr(c->b, L->heads[k]);
        LLVMPositionBuilderAtEnd(c->b, L->heads[k]);
        LLVMValueRef i = LLVMBuildLoad2(c->b, c->i64, L->ivar[k], "");
        LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, i, n, ""), body, k ? L->latches[k - 1] : L->exit);
        LLVMPositionBuilderAtEnd(c->b, body);
    }
    LLVMValueRef off = ci64(c, 0);
    for (int k = 0; k < at->ndim; k++)
        off = LLVMBuildAdd(c->b, off,
                           LLVMBuildMul(c->b, LLVMBuildLoad2(c->b, c->i64, L->ivar[k], ""),
                                        LLVMBuildExtractValue(c->b, strides, (unsigned)k, ""), ""),
                           "");
    return LLVMBuildGEP2(c->b, c->i8, LLVMBuildExtractValue(c->b, a, 0, ""), &off, 1, "");
}

static void loop_end(Ctx *c, Loop *L) {
    if (!L->ndim) { /* a 0-d array: its one element, no loop */
        LLVMBuildBr(c->b, L->exit);
        LLVMPositionBuilderAtEnd(c->b, L->exit);
        return;
    }
    LLVMBuildBr(c->b, L->latches[L->ndim - 1]);
    for (int k = L->ndim - 1; k >= 0; k--) {
        LLVMPositionBuilderAtEnd(c->b, L->latches[k]);
        LLVMValueRef i = LLVMBuildLoad2(c->b, c->i64, L->ivar[k], "");
        LLVMBuildStore(c->b, LLVMBuildAdd(c->b, i, ci64(c, 1), ""), L->ivar[k]);
        LLVMBuildBr(c->b, L->heads[k]);
    }
    LLVMPositionBuilderAtEnd(c->b, L->exit);
}

/* ---- arithmetic on accumulators of any number type ---- */

static LLVMValueRef add_(Ctx *c, Type *t, LLVMValueRef a, LLVMValueRef b) {
    if (is_complex(t)) return complex_binop(c, BIN_ADD, a, b, t, NULL);
    return is_float(t) ? fp(c, LLVMBuildFAdd(c->b, a, b, "")) : LLVMBuildAdd(c->b, a, b, "");
}
static LLVMValueRef mul_(Ctx *c, Type *t, LLVMValueRef a, LLVMValueRef b) {
    if (is_complex(t)) return complex_binop(c, BIN_MUL, a, b, t, NULL);
    return is_float(t) ? fp(c, LLVMBuildFMul(c->b, a, b, "")) : LLVMBuildMul(c->b, a, b, "");
}
/* a / n, n an i64 count (a floating or complex) */
static LLVMValueRef div_count(Ctx *c, Type *t, LLVMValueRef a, LLVMValueRef n) {
    Type *ft = is_complex(t) ? complex_part(t) : t;
    LLVMValueRef d = LLVMBuildSIToFP(c->b, n, llvm_type(c, ft), "");
    if (!is_complex(t)) return fp(c, LLVMBuildFDiv(c->b, a, d, ""));
    LLVMValueRef re = fp(c, LLVMBuildFDiv(c->b, LLVMBuildExtractValue(c->b, a, 0, ""), d, ""));
    LLVMValueRef im = fp(c, LLVMBuildFDiv(c->b, LLVMBuildExtractValue(c->b, a, 1, ""), d, ""));
    return complex_make(c, t, re, im);
}
static LLVMValueRef is_nan(Ctx *c, Type *t, LLVMValueRef x) {
    if (is_complex(t))
        return LLVMBuildOr(c->b, is_nan(c, complex_part(t), LLVMBuildExtractValue(c->b, x, 0, "")),
                           is_nan(c, complex_part(t), LLVMBuildExtractValue(c->b, x, 1, "")), "");
    if (is_float(t)) return LLVMBuildFCmp(c->b, LLVMRealUNO, x, x, "");
    return LLVMConstInt(c->i1, 0, 0);
}
/* x before y in the order min() takes (x < y); bools as 0 < 1 */
static LLVMValueRef less(Ctx *c, Type *t, LLVMValueRef x, LLVMValueRef y) {
    if (is_float(t)) return LLVMBuildFCmp(c->b, LLVMRealOLT, x, y, "");
    return LLVMBuildICmp(c->b, is_signed(t) && t->kind != TY_BOOL ? LLVMIntSLT : LLVMIntULT, x, y, "");
}
/* min's starting value (max's: `hi` false): +inf / the type's largest, or -inf / its smallest */
static LLVMValueRef extreme(Ctx *c, Type *t, bool hi) {
    LLVMTypeRef lt = llvm_type(c, t);
    if (is_float(t)) return LLVMConstReal(lt, hi ? INFINITY : -INFINITY);
    unsigned bits = t->kind == TY_BOOL ? 1 : (unsigned)type_bits(t);
    bool sgn = is_signed(t) && t->kind != TY_BOOL;
    unsigned long long one = 1ULL;
    unsigned long long max = sgn ? (one << (bits - 1)) - 1 : (bits == 64 ? ~0ULL : (one << bits) - 1);
    unsigned long long min = sgn ? (one << (bits - 1)) : 0; /* two's complement bit pattern */
    return LLVMConstInt(lt, hi ? max : min, 0);
}

static LLVMValueRef load(Ctx *c, Type *t, LLVMValueRef p) { return LLVMBuildLoad2(c->b, llvm_type(c, t), p, ""); }
static LLVMValueRef slot(Ctx *c, Type *t, LLVMValueRef init, const char *name) {
    LLVMValueRef p = entry_alloca(c, llvm_type(c, t), name);
    LLVMBuildStore(c->b, init, p);
    return p;
}
static LLVMValueRef zero_of(Ctx *c, Type *t) { return LLVMConstNull(llvm_type(c, t)); }
static LLVMValueRef one_of(Ctx *c, Type *t) {
    if (is_complex(t)) return complex_make(c, t, LLVMConstReal(llvm_type(c, complex_part(t)), 1.0), NULL);
    return is_float(t) ? LLVMConstReal(llvm_type(c, t), 1.0) : LLVMConstInt(llvm_type(c, t), 1, 0);
}

/* The sum (or product) of the elements, skipping NaNs if `skip`, in type t;
 * the count of the elements taken into *count when asked. */
static LLVMValueRef fold(Ctx *c, Type *at, LLVMValueRef a, Type *t, bool prod, bool skip, LLVMValueRef *count) {
    Type *et = at->elem;
    LLVMValueRef acc = slot(c, t, prod ? one_of(c, t) : zero_of(c, t), "reduce.acc");
    LLVMValueRef n = slot(c, &ty_int64, ci64(c, 0), "reduce.n");
    Loop L;
    LLVMValueRef x = load_elem(c, et, loop_begin(c, at, a, &L));
    LLVMValueRef keep = skip ? LLVMBuildNot(c->b, is_nan(c, et, x), "") : LLVMConstInt(c->i1, 1, 0);
    LLVMValueRef xv = convert(c, x, et, t), old = load(c, t, acc);
    LLVMValueRef nv = prod ? mul_(c, t, old, xv) : add_(c, t, old, xv);
    LLVMBuildStore(c->b, LLVMBuildSelect(c->b, keep, nv, old, ""), acc);
    LLVMValueRef on = load(c, &ty_int64, n);
    LLVMBuildStore(c->b, LLVMBuildAdd(c->b, on, LLVMBuildZExt(c->b, keep, c->i64, ""), ""), n);
    loop_end(c, &L);
    if (count) *count = load(c, &ty_int64, n);
    return load(c, t, acc);
}

/* var: the mean of |x - m|^2 over the elements (not NaN, if `skip`), m their mean. */
static LLVMValueRef variance(Ctx *c, Type *at, LLVMValueRef a, Type *rt, bool skip) {
    Type *et = at->elem, *mt = float_of(et);
    LLVMValueRef n, s = fold(c, at, a, mt, false, skip, &n);
    LLVMValueRef m = div_count(c, mt, s, n);
    LLVMValueRef acc = slot(c, rt, zero_of(c, rt), "reduce.ssd");
    Loop L;
    LLVMValueRef x = load_elem(c, et, loop_begin(c, at, a, &L));
    LLVMValueRef keep = skip ? LLVMBuildNot(c->b, is_nan(c, et, x), "") : LLVMConstInt(c->i1, 1, 0);
    LLVMValueRef d, sq;
    if (is_complex(mt)) {
        d = complex_binop(c, BIN_SUB, convert(c, x, et, mt), m, mt, NULL);
        LLVMValueRef re = LLVMBuildExtractValue(c->b, d, 0, ""), im = LLVMBuildExtractValue(c->b, d, 1, "");
        sq = add_(c, rt, mul_(c, rt, re, re), mul_(c, rt, im, im));
    } else {
        d = fp(c, LLVMBuildFSub(c->b, convert(c, x, et, mt), m, ""));
        sq = mul_(c, rt, d, d);
    }
    LLVMValueRef old = load(c, rt, acc);
    LLVMBuildStore(c->b, LLVMBuildSelect(c->b, keep, add_(c, rt, old, sq), old, ""), acc);
    loop_end(c, &L);
    return div_count(c, rt, load(c, rt, acc), n);
}

/* min/max (argmin/argmax: the flat index of the first): a NaN wins unless
 * `skip`, when NaNs are passed over and an array of only NaNs gives NaN. */
static LLVMValueRef extremum(Ctx *c, ReduceFn fn, Type *at, LLVMValueRef a, bool mx, bool arg, bool skip) {
    Type *et = at->elem;
    LLVMValueRef acc = slot(c, et, extreme(c, et, !mx), "reduce.best");
    LLVMValueRef idx = slot(c, &ty_int64, ci64(c, 0), "reduce.at");
    LLVMValueRef k = slot(c, &ty_int64, ci64(c, 0), "reduce.k");
    LLVMValueRef seen = slot(c, &ty_bool, LLVMConstInt(c->i1, 0, 0), "reduce.seen");
    Loop L;
    LLVMValueRef x = load_elem(c, et, loop_begin(c, at, a, &L));
    LLVMValueRef old = load(c, et, acc), nan = is_nan(c, et, x);
    LLVMValueRef better = mx ? less(c, et, old, x) : less(c, et, x, old);
    LLVMValueRef take;
    if (skip)
        take = LLVMBuildAnd(c->b, LLVMBuildNot(c->b, nan, ""), better, "");
    else /* the first NaN wins and stays */
        take = LLVMBuildAnd(c->b, LLVMBuildNot(c->b, is_nan(c, et, old), ""), LLVMBuildOr(c->b, nan, better, ""), "");
    LLVMBuildStore(c->b, LLVMBuildSelect(c->b, take, x, old, ""), acc);
    LLVMValueRef kv = load(c, &ty_int64, k);
    LLVMBuildStore(c->b, LLVMBuildSelect(c->b, take, kv, load(c, &ty_int64, idx), ""), idx);
    LLVMBuildStore(c->b, LLVMBuildAdd(c->b, kv, ci64(c, 1), ""), k);
    LLVMBuildStore(c->b, LLVMBuildOr(c->b, load(c, &ty_bool, seen), LLVMBuildNot(c->b, nan, ""), ""), seen);
    loop_end(c, &L);
    if (c->opt.debug) {
        const char *msg = arena_printf(&c->arena, "zero-size array to reduction operation %s which has no identity",
                                       reduce_info[fn].name);
        if (check_or_raise(c, LLVMBuildICmp(c->b, LLVMIntNE, load(c, &ty_int64, k), ci64(c, 0), ""),
                           PyExc_ValueError, msg) < 0)
            return NULL;
    }
    if (arg) return load(c, &ty_int64, idx);
    LLVMValueRef r = load(c, et, acc);
    if (skip && is_float(et)) r = LLVMBuildSelect(c->b, load(c, &ty_bool, seen), r, LLVMConstReal(llvm_type(c, et), NAN), "");
    return r;
}

LLVMValueRef lower_reduction(Ctx *c, ReduceFn fn, Instr *in, Type *rt) {
    Instr *x = reduce_operand(in);
    Type *at = x->type, *et = at->elem;
    LLVMValueRef a = val(c, x);
    bool skip = reduce_info[fn].nan_skip && (is_float(et) || is_complex(et));
    switch (fn) {
    case RD_SUM:
    case RD_NANSUM: return fold(c, at, a, rt, false, skip, NULL);
    case RD_PROD:
    case RD_NANPROD: return fold(c, at, a, rt, true, skip, NULL);
    case RD_MEAN:
    case RD_NANMEAN: {
        LLVMValueRef n, s = fold(c, at, a, rt, false, skip, &n);
        return div_count(c, rt, s, n);
    }
    case RD_VAR:
    case RD_NANVAR: return variance(c, at, a, rt, skip);
    case RD_STD:
    case RD_NANSTD: return fcall1(c, "llvm.sqrt", variance(c, at, a, rt, skip));
    case RD_MIN:
    case RD_NANMIN: return extremum(c, fn, at, a, false, false, skip);
    case RD_MAX:
    case RD_NANMAX: return extremum(c, fn, at, a, true, false, skip);
    case RD_ARGMIN: return extremum(c, fn, at, a, false, true, false);
    case RD_ARGMAX: return extremum(c, fn, at, a, true, true, false);
    case RD_ALL:
    case RD_ANY:
    case RD_COUNT_NONZERO: {
        bool all = fn == RD_ALL, count = fn == RD_COUNT_NONZERO;
        Type *t = count ? &ty_int64 : &ty_bool;
        LLVMValueRef acc = slot(c, t, count ? ci64(c, 0) : LLVMConstInt(c->i1, all, 0), "reduce.acc");
        Loop L;
        LLVMValueRef b = to_bool(c, load_elem(c, et, loop_begin(c, at, a, &L)), et), old = load(c, t, acc);
        LLVMValueRef nv = count ? LLVMBuildAdd(c->b, old, LLVMBuildZExt(c->b, b, c->i64, ""), "")
                          : all ? LLVMBuildAnd(c->b, old, b, "")
                                : LLVMBuildOr(c->b, old, b, "");
        LLVMBuildStore(c->b, nv, acc);
        loop_end(c, &L);
        return load(c, t, acc);
    }
    }
    internal_error(c, in->loc, "lower: reduction %d", (int)fn);
    return NULL;
}
