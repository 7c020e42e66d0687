/* lower.c: typed IR -> LLVM IR, for any Target. Variables become allocas
 * (mem2reg/SROA promote them); arrays are structs {data, shape[n], strides[n]}
 * (strides in bytes); integer // and % floor toward -inf as in Python and
 * never trap; float mul/add carry `contract` so ptxas gets FMAs (fast-math
 * adds the rest). Requires: infer_types. The module is verified afterwards.
 * Run-time checks and raise are in checks.c, slices and views in views.c,
 * lane positions in lanepos.c, the builder helpers (types, values, conversions,
 * element pointers) in cgutils.c. */
#include <math.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/DebugInfo.h>

#include "gj.h"

/* ---- integer division with Python semantics ---- */

static LLVMValueRef int_divmod(Ctx *c, LLVMValueRef a, LLVMValueRef b, Type *t, bool want_mod) {
    LLVMTypeRef ty = llvm_type(c, t);
    LLVMValueRef zero = LLVMConstInt(ty, 0, 0), one = LLVMConstInt(ty, 1, 0);
    LLVMValueRef bz = LLVMBuildICmp(c->b, LLVMIntEQ, b, zero, "");
    if (!is_signed(t)) {
        LLVMValueRef d = LLVMBuildSelect(c->b, bz, one, b, "");
        LLVMValueRef r = want_mod ? LLVMBuildURem(c->b, a, d, "") : LLVMBuildUDiv(c->b, a, d, "");
        return LLVMBuildSelect(c->b, bz, zero, r, "");
    }
    /* Division by zero gives 0 (NumPy's answer, and no trap on the host);
     * MIN // -1 wraps, as in NumPy. */
    LLVMValueRef minv = LLVMConstInt(ty, 1ULL << (type_bits(t) - 1), 0);
    LLVMValueRef ovf = LLVMBuildAnd(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, a, minv, ""),
                                    LLVMBuildICmp(c->b, LLVMIntEQ, b, LLVMConstAllOnes(ty), ""), "");
    LLVMValueRef unsafe = LLVMBuildOr(c->b, bz, ovf, "");
    LLVMValueRef d = LLVMBuildSelect(c->b, unsafe, one, b, "");
    LLVMValueRef q = LLVMBuildSDiv(c->b, a, d, "");
    LLVMValueRef r = LLVMBuildSRem(c->b, a, d, "");
    /* floor: when the remainder is non-zero and its sign differs from b's */
    LLVMValueRef adj = LLVMBuildAnd(c->b, LLVMBuildICmp(c->b, LLVMIntNE, r, zero, ""),
                                    LLVMBuildICmp(c->b, LLVMIntSLT, LLVMBuildXor(c->b, r, d, ""), zero, ""), "");
    LLVMValueRef res;
    if (want_mod) {
        res = LLVMBuildSelect(c->b, adj, LLVMBuildAdd(c->b, r, d, ""), r, "");
    } else {
        res = LLVMBuildSelect(c->b, adj, LLVMBuildSub(c->b, q, one, ""), q, "");
        res = LLVMBuildSelect(c->b, ovf, a, res, "");
    }
    return LLVMBuildSelect(c->b, bz, zero, res, "");
}

/* CPython's float floor division and modulo (Objects/floatobject.c). */
static LLVMValueRef float_divmod(Ctx *c, LLVMValueRef a, LLVMValueRef b, Type *t, bool want_mod) {
    LLVMTypeRef ty = LLVMTypeOf(a);
    LLVMValueRef zero = LLVMConstReal(ty, 0.0);
    /* fmod, exact as CPython's: LLVM's frem is a - trunc(a / b) * b on NVPTX, wrong
     * once the quotient passes 2**53 (1e300 % 3.0); libdevice's and libm's fmod are not */
    LLVMValueRef ab[2] = {a, b};
    LLVMValueRef mod = math_call(c, "fmod", t, ab, 2);
    if (!mod) return NULL;
    LLVMValueRef div = fp(c, LLVMBuildFDiv(c->b, fp(c, LLVMBuildFSub(c->b, a, mod, "")), b, ""));
    LLVMValueRef modnz = LLVMBuildFCmp(c->b, LLVMRealUNE, mod, zero, "");
    LLVMValueRef signs = LLVMBuildXor(c->b, LLVMBuildFCmp(c->b, LLVMRealOLT, b, zero, ""),
                                      LLVMBuildFCmp(c->b, LLVMRealOLT, mod, zero, ""), "");
    LLVMValueRef fix = LLVMBuildAnd(c->b, modnz, signs, "");
    mod = LLVMBuildSelect(c->b, fix, fp(c, LLVMBuildFAdd(c->b, mod, b, "")), mod, "");
    div = LLVMBuildSelect(c->b, fix, fp(c, LLVMBuildFSub(c->b, div, LLVMConstReal(ty, 1.0), "")), div, "");
    if (want_mod) return LLVMBuildSelect(c->b, modnz, mod, fcall2(c, "llvm.copysign", zero, b), "");
    LLVMValueRef fl = fcall1(c, "llvm.floor", div);
    LLVMValueRef gt =
            LLVMBuildFCmp(c->b, LLVMRealOGT, fp(c, LLVMBuildFSub(c->b, div, fl, "")), LLVMConstReal(ty, 0.5), "");
    fl = LLVMBuildSelect(c->b, gt, fp(c, LLVMBuildFAdd(c->b, fl, LLVMConstReal(ty, 1.0), "")), fl, "");
    LLVMValueRef divnz = LLVMBuildFCmp(c->b, LLVMRealUNE, div, zero, "");
    LLVMValueRef sz = fcall2(c, "llvm.copysign", zero, fp(c, LLVMBuildFDiv(c->b, a, b, "")));
    return LLVMBuildSelect(c->b, divnz, fl, sz, "");
}

/* An emitted loop: integer power by squaring (negative exponents give 0,
 * except for bases 1 and -1, as integer division would). */
static LLVMValueRef int_pow(Ctx *c, LLVMValueRef base, LLVMValueRef e, Type *t) {
    LLVMTypeRef ty = llvm_type(c, t);
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(c->b);
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "pow.loop");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "pow.done");
    LLVMValueRef one = LLVMConstInt(ty, 1, 0), zero = LLVMConstInt(ty, 0, 0);
    LLVMValueRef neg = is_signed(t) ? LLVMBuildICmp(c->b, LLVMIntSLT, e, zero, "") : LLVMConstInt(c->i1, 0, 0);
    LLVMValueRef e0 = LLVMBuildSelect(c->b, neg, zero, e, "");
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, e0, zero, ""), done, loop);
    LLVMPositionBuilderAtEnd(c->b, loop);
    LLVMValueRef r = LLVMBuildPhi(c->b, ty, "r"), b = LLVMBuildPhi(c->b, ty, "b"), x = LLVMBuildPhi(c->b, ty, "e");
    LLVMValueRef odd = LLVMBuildICmp(c->b, LLVMIntNE, LLVMBuildAnd(c->b, x, one, ""), zero, "");
    LLVMValueRef r2 = LLVMBuildSelect(c->b, odd, LLVMBuildMul(c->b, r, b, ""), r, "");
    LLVMValueRef b2 = LLVMBuildMul(c->b, b, b, "");
    LLVMValueRef x2 = LLVMBuildLShr(c->b, x, one, "");
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, x2, zero, ""), done, loop);
    LLVMValueRef rin[2] = {one, r2}, bin[2] = {base, b2}, xin[2] = {e0, x2};
    LLVMBasicBlockRef from[2] = {pre, loop};
    LLVMAddIncoming(r, rin, from, 2);
    LLVMAddIncoming(b, bin, from, 2);
    LLVMAddIncoming(x, xin, from, 2);
    LLVMPositionBuilderAtEnd(c->b, done);
    LLVMValueRef res = LLVMBuildPhi(c->b, ty, "pow");
    LLVMValueRef din[2] = {one, r2};
    LLVMAddIncoming(res, din, from, 2);
    if (is_signed(t)) {
        /* x ** -n: 1 for x == 1, +-1 for x == -1, else 0 */
        LLVMValueRef is1 = LLVMBuildICmp(c->b, LLVMIntEQ, base, one, "");
        LLVMValueRef ism1 = LLVMBuildICmp(c->b, LLVMIntEQ, base, LLVMConstAllOnes(ty), "");
        LLVMValueRef oddexp = LLVMBuildICmp(c->b, LLVMIntNE, LLVMBuildAnd(c->b, e, one, ""), zero, "");
        LLVMValueRef negres = LLVMBuildSelect(
                c->b, is1, one,
                LLVMBuildSelect(c->b, ism1, LLVMBuildSelect(c->b, oddexp, LLVMConstAllOnes(ty), one, ""), zero, ""),
                "");
        res = LLVMBuildSelect(c->b, neg, negres, res, "");
    }
    return res;
}

static LLVMValueRef lower_binop(Ctx *c, Instr *in) {
    Type *t = in->conv;
    LLVMValueRef a = val_as(c, in->args[0], t), b;
    if (is_complex(t)) return complex_binop(c, (BinOp)in->ival, a, val_as(c, in->args[1], t), t, in->args[1]);
    if (in->ival == BIN_POW && is_float(t) && in->args[1]->op == IR_CONST && in->args[1]->ckind == CK_INT &&
        in->args[1]->ival >= 0 && in->args[1]->ival <= 4) {
        /* x ** small constant: multiplications, as nvcc would */
        LLVMValueRef r = LLVMConstReal(llvm_type(c, t), 1.0);
        for (int i = 0; i < in->args[1]->ival; i++) r = i ? fp(c, LLVMBuildFMul(c->b, r, a, "")) : a;
        return r;
    }
    if (in->ival == BIN_POW && is_float(t) && in->args[1]->op == IR_CONST && in->args[1]->ckind == CK_FLOAT &&
        in->args[1]->fval == 0.5) {
        /* x ** 0.5: a correctly rounded sqrt, as CPython's pow gives (libdevice's pow is
         * not: 9.0 ** 0.5 came out above 3.0 on the GPU), with pow's answers at -0.0
         * (+0.0, from the + 0.0) and -inf (+inf) */
        LLVMTypeRef ft = llvm_type(c, t);
        LLVMValueRef s = LLVMBuildFAdd(c->b, fcall1(c, "llvm.sqrt", a), LLVMConstReal(ft, 0.0), "");
        LLVMValueRef ninf = LLVMBuildFCmp(c->b, LLVMRealOEQ, a, LLVMConstReal(ft, -INFINITY), "");
        return LLVMBuildSelect(c->b, ninf, LLVMConstReal(ft, INFINITY), s, "");
    }
    b = val_as(c, in->args[1], t);
    bool f = is_float(t);
    bool ieee = in->name && !strncmp(in->name, "numpy.", 6); /* np.divide(x, 0.0) is inf, not an error */
    /* fastmath: a float division by zero gives IEEE's inf or NaN, as numba's does */
    if (c->opt.debug && !ieee && !is_complex(t) && !(c->opt.fastmath && f) &&
        (in->ival == BIN_DIV || in->ival == BIN_FLOORDIV || in->ival == BIN_MOD) && check_divisor(c, in, b, t) < 0)
        return NULL;
    switch (in->ival) {
    /* int64 + and -: an overflow has no int64 answer (CPython's would be wider), so, as
     * numba does, they are marked nsw; LLVM can then count a grid-stride `while` loop's
     * trips and unroll it. Narrower and unsigned types keep their wrap-around, and so
     * does int64 where the checks are on: an overflow under nsw is poison, and a bounds
     * check of a poison index may be folded away while the address uses the wrapped
     * value. */
    case BIN_ADD:
        if (f) return fp(c, LLVMBuildFAdd(c->b, a, b, ""));
        return t->kind == TY_INT64 && !c->errbuf ? LLVMBuildNSWAdd(c->b, a, b, "") : LLVMBuildAdd(c->b, a, b, "");
    case BIN_SUB:
        if (f) return fp(c, LLVMBuildFSub(c->b, a, b, ""));
        return t->kind == TY_INT64 && !c->errbuf ? LLVMBuildNSWSub(c->b, a, b, "") : LLVMBuildSub(c->b, a, b, "");
    case BIN_MUL: return f ? fp(c, LLVMBuildFMul(c->b, a, b, "")) : LLVMBuildMul(c->b, a, b, "");
    case BIN_DIV: return fp(c, LLVMBuildFDiv(c->b, a, b, ""));
    case BIN_FLOORDIV:
    case BIN_MOD:
        if (is_half(t)) /* in float32, rounded once, as NumPy's float16 divmod */
            return convert(c,
                           float_divmod(c, convert(c, a, t, &ty_float32), convert(c, b, t, &ty_float32), &ty_float32,
                                        in->ival == BIN_MOD),
                           &ty_float32, t);
        if (in->ival == BIN_MOD) return f ? float_divmod(c, a, b, t, true) : int_divmod(c, a, b, t, true);
        return f ? float_divmod(c, a, b, t, false) : int_divmod(c, a, b, t, false);
    case BIN_POW: {
        if (!f) return int_pow(c, a, b, t);
        LLVMValueRef args[2] = {a, b};
        return math_call(c, "pow", t, args, 2);
    }
    case BIN_AND: return LLVMBuildAnd(c->b, a, b, "");
    case BIN_OR: return LLVMBuildOr(c->b, a, b, "");
    case BIN_XOR: return LLVMBuildXor(c->b, a, b, "");
    case BIN_LSHIFT:
    case BIN_RSHIFT: {
        /* Python shifts never wrap the count: >= width gives 0 (or -1) */
        LLVMTypeRef ty = llvm_type(c, t);
        LLVMValueRef w = LLVMConstInt(ty, (unsigned long long)type_bits(t), 0);
        LLVMValueRef big = LLVMBuildICmp(c->b, LLVMIntUGE, b, w, "");
        LLVMValueRef safe = LLVMBuildSelect(c->b, big, LLVMConstInt(ty, 0, 0), b, "");
        if (in->ival == BIN_LSHIFT)
            return LLVMBuildSelect(c->b, big, LLVMConstInt(ty, 0, 0), LLVMBuildShl(c->b, a, safe, ""), "");
        if (!is_signed(t))
            return LLVMBuildSelect(c->b, big, LLVMConstInt(ty, 0, 0), LLVMBuildLShr(c->b, a, safe, ""), "");
        LLVMValueRef sign = LLVMBuildAShr(c->b, a, LLVMConstInt(ty, (unsigned long long)type_bits(t) - 1, 0), "");
        return LLVMBuildSelect(c->b, big, sign, LLVMBuildAShr(c->b, a, safe, ""), "");
    }
    }
    return NULL;
}

static LLVMValueRef lower_cmp(Ctx *c, Instr *in) {
    Type *t = in->conv;
    if (!t && enum_members(in)) { /* Enum members: Python's own answer */
        PyObject *x = in->args[0]->pyobj, *y = in->args[1]->pyobj;
        int r = in->ival == CMP_IS ? x == y
                : in->ival == CMP_IS_NOT ? x != y
                                         : PyObject_RichCompareBool(x, y, in->ival == CMP_EQ ? Py_EQ : Py_NE);
        if (r < 0) return NULL;
        return LLVMConstInt(c->i1, (unsigned long long)r, 0);
    }
    if (in->ival == CMP_IS || in->ival == CMP_IS_NOT) {
        bool is_not = in->ival == CMP_IS_NOT;
        if (!t) /* settled by the types (typeinfer.c): None is None, different types never */
            return LLVMConstInt(c->i1, (in->args[0]->type->kind == TY_NONE &&
                                        type_eq(in->args[0]->type, in->args[1]->type)) != is_not, 0);
        Instr eq = *in;
        eq.ival = is_not ? CMP_NE : CMP_EQ;
        return lower_cmp(c, &eq);
    }
    LLVMValueRef a = val_as(c, in->args[0], t), b = val_as(c, in->args[1], t);
    if (is_complex(t)) return complex_cmp(c, (CmpOp)in->ival, a, b);
    if (is_float(t)) {
        static const LLVMRealPredicate p[] = {LLVMRealOLT, LLVMRealOLE, LLVMRealOEQ,
                                              LLVMRealUNE, LLVMRealOGT, LLVMRealOGE};
        return LLVMBuildFCmp(c->b, p[in->ival], a, b, "");
    }
    static const LLVMIntPredicate ps[] = {LLVMIntSLT, LLVMIntSLE, LLVMIntEQ, LLVMIntNE, LLVMIntSGT, LLVMIntSGE};
    static const LLVMIntPredicate pu[] = {LLVMIntULT, LLVMIntULE, LLVMIntEQ, LLVMIntNE, LLVMIntUGT, LLVMIntUGE};
    return LLVMBuildICmp(c->b, is_signed(t) ? ps[in->ival] : pu[in->ival], a, b, "");
}

/* ---- arrays ---- */

/* A variable index into a tuple of n items, as an int64 in [0, n) where the
 * checks are on: a negative index counts from the end (an unsigned one never
 * does); one out of range raises IndexError, as CPython's. Unchecked, it is
 * used as it is (like an array's index). */
static LLVMValueRef tuple_index(Ctx *c, Instr *index, int64_t n) {
    Type *it = index->type;
    bool sg = is_signed(it) || it->kind == TY_BOOL;
    LLVMValueRef i = val_as(c, index, sg ? &ty_int64 : &ty_uint64);
    if (sg) {
        LLVMValueRef neg = LLVMBuildICmp(c->b, LLVMIntSLT, i, ci64(c, 0), "");
        i = LLVMBuildSelect(c->b, neg, LLVMBuildAdd(c->b, i, ci64(c, n), ""), i, "");
    }
    if (!c->errbuf) return i;
    LLVMValueRef good;
    if (check_index_or_raise(c, LLVMBuildICmp(c->b, LLVMIntULT, i, ci64(c, n), ""), "tuple index out of range",
                             &good) < 0)
        return NULL;
    return good ? LLVMBuildSelect(c->b, good, i, ci64(c, 0), "") : i; /* a GPU thread goes on with item 0 */
}

/* A variable index into a big constant tuple of scalars (a global table):
 * the items become a read-only array in global memory. Spilled whole to the stack, as smaller
 * tuples are, LLVM's optimiser takes seconds on a few thousand items. */
static LLVMValueRef const_tuple_item(Ctx *c, Instr *tup, Instr *index) {
    Type *et = tup->type->items[0];
    size_t size = et->kind == TY_BOOL ? 1 : (size_t)type_bits(et) / 8;
    char *bytes = arena_alloc(&c->arena, size * (size_t)tup->nargs + 1);
    if (!bytes) return NULL;
    for (int k = 0; k < tup->nargs; k++) {
        Instr *v = tup->args[k];
        if (et->kind == TY_FLOAT64)
            memcpy(bytes + size * (size_t)k, &v->fval, 8);
        else if (et->kind == TY_BOOL)
            bytes[k] = v->ival != 0;
        else
            memcpy(bytes + size * (size_t)k, &v->ival, 8);
    }
    /* in global memory, read-only: the GPU's constant bank holds only 64 KiB */
    LLVMValueRef init = LLVMConstStringInContext(c->llctx, bytes, (unsigned)(size * (size_t)tup->nargs), 1);
    unsigned as = llvm_as(c, AS_GLOBAL);
    LLVMValueRef data = LLVMAddGlobalInAddressSpace(c->mod, LLVMTypeOf(init), "__table", as);
    LLVMSetInitializer(data, init);
    LLVMSetGlobalConstant(data, 1);
    LLVMSetLinkage(data, LLVMInternalLinkage);
    LLVMSetAlignment(data, 16);
    if (as) data = LLVMBuildAddrSpaceCast(c->b, data, c->ptr, "");
    LLVMValueRef i = tuple_index(c, index, tup->nargs);
    if (!i) return NULL;
    return load_elem(c, et, LLVMBuildInBoundsGEP2(c->b, mem_type(c, et), data, &i, 1, ""));
}

/* ---- calls ---- */

static LLVMValueRef lower_user_call(Ctx *c, Instr *in);

/* A range iterator's state: {start, step, trip count, index}. */
static LLVMTypeRef iter_type(Ctx *c) {
    LLVMTypeRef f[4] = {c->i64, c->i64, c->i64, c->i64};
    return LLVMStructTypeInContext(c->llctx, f, 4, 0);
}

static int lower_instr(Ctx *c, Instr *in) {
    LLVMValueRef r = NULL;
    switch (in->op) {
    case IR_CONST:
    case IR_OBJ:
        if (in->op == IR_OBJ && in->intr && in->intr->kind == IK_SPECIAL)
            r = c->target->special(c, in->intr->id, in->intr->dim);
        if (in->op == IR_OBJ && in->type->kind == TY_ARRAY && !(r = lower_global_array(c, in))) return -1;
        break;
    case IR_ARG: r = c->params ? c->params[in->ival] : NULL; break;
    case IR_LOAD_VAR: {
        Var *v = ctx_var(c, in->var);
        if (v->slot) r = LLVMBuildLoad2(c->b, llvm_type(c, v->type), v->slot, v->name);
        if (v->once) r = v->value;
        break;
    }
    case IR_STORE_VAR: {
        Var *v = ctx_var(c, in->var);
        if (v->slot) LLVMBuildStore(c->b, val_as(c, in->args[0], v->type), v->slot);
        if (v->once) v->value = val_as(c, in->args[0], v->type);
        break;
    }
    case IR_ATTR: {
        Type *at = in->args[0]->type;
        if (at->kind == TY_RECORD) {
            if (!(r = lower_record_get(c, at, val(c, in->args[0]), in->name, in->type))) return -1;
            break;
        }
        if (at->kind == TY_TUPLE && at->names) { /* a namedtuple's field */
            if (llvm_type(c, in->type))
                r = extract_value(c, val(c, in->args[0]), (unsigned)tuple_field(at, in->name), in->name);
            break;
        }
        if (in->intr && in->intr->kind == IK_SPECIAL) r = c->target->special(c, in->intr->id, in->intr->dim);
        if (is_vector(at)) /* .x .y .z .w: typeinfer checked the name */
            r = extract_value(c, val(c, in->args[0]), (unsigned)(strchr("xyzw", in->name[0]) - "xyzw"), "");
        if (is_complex(at) && (!strcmp(in->name, "real") || !strcmp(in->name, "imag")))
            r = extract_value(c, val(c, in->args[0]), !strcmp(in->name, "imag"), in->name);
        if (at->kind == TY_ARRAY) {
            LLVMValueRef a = val(c, in->args[0]);
            if (in->type->kind == TY_ARRAY) {
                r = view_attr(c, at, a, in->name);
            } else if (!strcmp(in->name, "shape") || !strcmp(in->name, "strides")) {
                LLVMValueRef arr = extract_value(c, a, !strcmp(in->name, "shape") ? 1 : 2, "");
                LLVMValueRef t = LLVMGetUndef(llvm_type(c, in->type));
                for (int k = 0; k < at->ndim; k++)
                    t = LLVMBuildInsertValue(c->b, t, extract_value(c, arr, (unsigned)k, ""), (unsigned)k,
                                             "");
                r = t;
            } else if (!strcmp(in->name, "dtype")) {
                /* a type, which has no value */
            } else if (!strcmp(in->name, "ndim")) {
                r = ci64(c, at->ndim);
            } else if (!strcmp(in->name, "ctypes.data")) { /* the address, generic as numba's */
                LLVMValueRef p = extract_value(c, a, 0, "");
                if (LLVMGetPointerAddressSpace(LLVMTypeOf(p))) p = LLVMBuildAddrSpaceCast(c->b, p, c->ptr, "");
                r = LLVMBuildPtrToInt(c->b, p, c->i64, "");
            } else if (!strcmp(in->name, "itemsize")) {
                r = ci64(c, type_bits(at->elem) / 8);
            } else { /* size, nbytes */
                LLVMValueRef arr = extract_value(c, a, 1, "");
                r = ci64(c, 1);
                for (int k = 0; k < at->ndim; k++)
                    r = LLVMBuildMul(c->b, r, extract_value(c, arr, (unsigned)k, ""), "");
                if (!strcmp(in->name, "nbytes")) r = LLVMBuildMul(c->b, r, ci64(c, type_bits(at->elem) / 8), "");
            }
        }
        break;
    }
    case IR_BINOP:
        if (in->type->kind == TY_TUPLE) {
            Type *ta = in->args[0]->type, *tb = in->args[1]->type;
            LLVMValueRef t = LLVMGetUndef(llvm_type(c, in->type));
            for (int k = 0; k < ta->n; k++)
                t = LLVMBuildInsertValue(c->b, t, extract_value(c, val(c, in->args[0]), (unsigned)k, ""),
                                         (unsigned)k, "");
            for (int k = 0; k < tb->n; k++)
                t = LLVMBuildInsertValue(c->b, t, extract_value(c, val(c, in->args[1]), (unsigned)k, ""),
                                         (unsigned)(ta->n + k), "");
            r = t;
        } else {
            r = lower_binop(c, in);
        }
        break;
    case IR_UNARY: {
        Instr *a = in->args[0];
        if (in->ival == UN_NOT) {
            r = LLVMBuildNot(c->b, to_bool(c, val(c, a), a->type), "");
        } else {
            LLVMValueRef x = val_as(c, a, in->conv);
            if (in->ival == UN_POS)
                r = x;
            else if (in->ival == UN_NEG && is_complex(in->conv))
                r = complex_make(c, in->conv, LLVMBuildFNeg(c->b, extract_value(c, x, 0, ""), ""),
                                 LLVMBuildFNeg(c->b, extract_value(c, x, 1, ""), ""));
            else if (in->ival == UN_NEG)
                r = is_float(in->conv) ? LLVMBuildFNeg(c->b, x, "") : LLVMBuildNeg(c->b, x, "");
            else
                r = LLVMBuildNot(c->b, x, "");
        }
        break;
    }
    case IR_CMP: r = lower_cmp(c, in); break;
    case IR_TRUTH:
        r = in->args[0]->type->kind == TY_NONE ? LLVMConstInt(c->i1, 0, 0)
                                               : to_bool(c, val(c, in->args[0]), in->args[0]->type);
        break;
    case IR_CALL:
        check_ufunc_shapes(c, in);
        r = in->callee ? lower_user_call(c, in) : lower_intrinsic_call(c, in);
        if (!r && PyErr_Occurred()) return -1;
        break;
    case IR_GETITEM: {
        Type *ot = in->args[0]->type;
        if (ot->kind == TY_ARRAY && in->type->kind == TY_ARRAY) {
            r = make_view(c, ot, val(c, in->args[0]), in->args[1], in->type);
        } else if (ot->kind == TY_ARRAY || ot->kind == TY_CPTR) {
            LLVMValueRef p = elem_ptr(c, in->args[0], in->args[1]);
            race_check(c, in->args[0], p, ot->elem, 0);
            r = load_elem(c, ot->elem, p);
        } else if (ot->kind == TY_RECORD) {
            r = lower_record_get(c, ot, val(c, in->args[0]), record_field_name(c, ot, in->args[1]), in->type);
            if (!r) return -1;
        } else if (ot->kind == TY_RANGE) { /* start + i * step; a negative i counts from the end */
            LLVMValueRef rg = val(c, in->args[0]), i = val_as(c, in->args[1], &ty_int64), n = range_len(c, rg);
            LLVMValueRef neg = LLVMBuildICmp(c->b, LLVMIntSLT, i, ci64(c, 0), "");
            if (is_signed(in->args[1]->type) || in->args[1]->type->kind == TY_BOOL)
                i = LLVMBuildSelect(c->b, neg, LLVMBuildAdd(c->b, i, n, ""), i, "");
            LLVMValueRef good;
            if (c->errbuf && check_index_or_raise(c, LLVMBuildICmp(c->b, LLVMIntULT, i, n, ""),
                                                  "range object index out of range", &good) < 0)
                return -1;
            r = LLVMBuildAdd(c->b, extract_value(c, rg, 0, ""),
                             LLVMBuildMul(c->b, i, extract_value(c, rg, 2, ""), ""), "");
        } else if (in->args[1]->op == IR_CONST) {
            int64_t i = in->args[1]->ival;
            if (i < 0) i += ot->n;
            r = extract_value(c, val(c, in->args[0]), (unsigned)i, "");
        } else if (in->args[0]->op == IR_CONST && ot->n > 256 &&
                   (ot->items[0]->kind == TY_INT64 || ot->items[0]->kind == TY_UINT64 ||
                    ot->items[0]->kind == TY_FLOAT64 || ot->items[0]->kind == TY_BOOL)) {
            if (!(r = const_tuple_item(c, in->args[0], in->args[1]))) return -1;
        } else {
            /* a variable index into a uniform tuple: spill it */
            LLVMTypeRef tt = llvm_type(c, ot);
            LLVMValueRef slot = entry_alloca(c, tt, "tuple");
            LLVMBuildStore(c->b, val(c, in->args[0]), slot);
            LLVMValueRef i = tuple_index(c, in->args[1], ot->n);
            if (!i) return -1;
            LLVMValueRef idx[2] = {LLVMConstInt(c->i32, 0, 0), i};
            LLVMValueRef p =
                    LLVMBuildGEP2(c->b, LLVMArrayType2(llvm_type(c, ot->items[0]), (uint64_t)ot->n), slot, idx, 2, "");
            r = LLVMBuildLoad2(c->b, llvm_type(c, in->type), p, "");
        }
        break;
    }
    case IR_SETITEM: {
        if (in->args[0]->type->kind == TY_RECORD) {
            RETURN_IF_ERROR(lower_record_set(c, in->args[0]->type, val(c, in->args[0]),
                                             record_field_name(c, in->args[0]->type, in->args[1]), in->args[2]));
            break;
        }
        Type *et = in->args[0]->type->elem;
        if (in->conv) { /* a store into a view */
            Type *at = in->args[0]->type, *vt = in->conv;
            store_view(c, vt, make_view(c, at, val(c, in->args[0]), in->args[1], vt), in->args[2]);
            break;
        }
        /* the value first, then the address: the order the code has always been emitted in */
        LLVMValueRef v = val_as(c, in->args[2], et);
        LLVMValueRef p = elem_ptr(c, in->args[0], in->args[1]);
        race_check(c, in->args[0], p, et, GJ_RACE_WRITE);
        store_elem(c, et, p, v);
        break;
    }
    case IR_SLICE: r = lower_slice(c, in); break;
    case IR_TUPLE: {
        LLVMValueRef t = LLVMGetUndef(llvm_type(c, in->type));
        for (int k = 0; k < in->nargs; k++)
            if (llvm_type(c, in->args[k]->type))
                t = LLVMBuildInsertValue(c->b, t, val(c, in->args[k]), (unsigned)k, "");
        r = t;
        break;
    }
    case IR_TUPLE_GET:
        if (llvm_type(c, in->type)) r = extract_value(c, val(c, in->args[0]), (unsigned)in->ival, "");
        break;
    case IR_GET_ITER: {
        /* A range iterates by a trip count fixed up front, as CPython's
         * range does: no overflow near the int64 limits, and a canonical
         * loop (index 0..n) that LLVM can unroll and vectorise. State:
         * {start, step, n, index}. */
        LLVMTypeRef it = iter_type(c);
        LLVMValueRef slot = entry_alloca(c, it, "range");
        LLVMValueRef rg = val(c, in->args[0]);
        LLVMValueRef start = extract_value(c, rg, 0, "start");
        LLVMValueRef step = extract_value(c, rg, 2, "step");
        LLVMValueRef zero = ci64(c, 0), n = range_len(c, rg);
        LLVMValueRef st = LLVMGetUndef(it);
        st = LLVMBuildInsertValue(c->b, st, start, 0, "");
        st = LLVMBuildInsertValue(c->b, st, step, 1, "");
        st = LLVMBuildInsertValue(c->b, st, n, 2, "");
        st = LLVMBuildInsertValue(c->b, st, zero, 3, "");
        LLVMBuildStore(c->b, st, slot);
        r = slot;
        break;
    }
    case IR_ITER_NEXT: {
        LLVMTypeRef it = iter_type(c);
        LLVMValueRef p = val(c, in->args[0]);
        LLVMValueRef st = LLVMBuildLoad2(c->b, it, p, "");
        LLVMValueRef start = extract_value(c, st, 0, ""), step = extract_value(c, st, 1, "");
        LLVMValueRef n = extract_value(c, st, 2, ""), k = extract_value(c, st, 3, "k");
        LLVMValueRef ok = LLVMBuildICmp(c->b, LLVMIntULT, k, n, "");
        LLVMValueRef idx[2] = {LLVMConstInt(c->i32, 0, 0), LLVMConstInt(c->i32, 3, 0)};
        LLVMValueRef kp = LLVMBuildInBoundsGEP2(c->b, it, p, idx, 2, "");
        LLVMBuildStore(c->b, LLVMBuildNUWAdd(c->b, k, ci64(c, 1), ""), kp);
        r = LLVMBuildAdd(c->b, start, LLVMBuildMul(c->b, k, step, ""), "i"); /* in range: no wrap */
        in->llv2 = ok;
        break;
    }
    case IR_ITER_VALID: r = in->args[0]->llv2; break;
    case IR_BR:
        count_trips(c, in);
        LLVMBuildBr(c->b, in->target->bb);
        break;
    case IR_CONDBR:
        count_trips(c, in);
        LLVMBuildCondBr(c->b, val(c, in->args[0]), in->target->bb, in->target2->bb);
        break;
    case IR_RET: LLVMBuildRetVoid(c->b); break;
    case IR_RAISE: raise_now(c, (int)in->ival); break;
    case IR_RET_VALUE:
        if (c->restype->kind == TY_NONE)
            LLVMBuildRetVoid(c->b);
        else
            LLVMBuildRet(c->b, val_as(c, in->args[0], c->restype));
        break;
    }
    in->llv = r;
    return 0;
}

/* lineinfo: a DISubprogram for c->fn, so that every instruction can carry its
 * Python line and NVPTX emits .file/.loc. The compile unit's emission kind 3
 * (DebugDirectivesOnly, not in the C enum) gives the directives alone, without
 * `.target sm_XX, debug`, which would cost registers. */
static void debug_subprogram(Ctx *c) {
    Ctx *root = ctx_root(c);
    LLVMDIBuilderRef dib = root->dib;
    if (!dib) return;
    const char *slash = strrchr(c->filename, '/');
    const char *base = slash ? slash + 1 : c->filename;
    size_t dirlen = slash ? (size_t)(slash - c->filename) : 0;
    LLVMMetadataRef file = LLVMDIBuilderCreateFile(dib, base, strlen(base), c->filename, dirlen);
    LLVMMetadataRef fty = LLVMDIBuilderCreateSubroutineType(dib, file, NULL, 0, LLVMDIFlagZero);
    c->disp = LLVMDIBuilderCreateFunction(dib, file, c->funcname, strlen(c->funcname), c->symbol, strlen(c->symbol),
                                          file, (unsigned)c->firstlineno, fty, c != root, 1, (unsigned)c->firstlineno,
                                          LLVMDIFlagZero, 1);
    LLVMSetSubprogram(c->fn, c->disp);
}

/* debug=True on the GPU target: full DWARF (emission kind 1, `.section .debug_info`), as
 * numba's debug=True gives a debugger; debug=True on the CPU target is the error
 * checks alone. */
static void debug_begin(Ctx *c) {
    int full = c->opt.debug && c->opt.target == GJ_TARGET_NVPTX;
    if (!c->opt.lineinfo && !full) return;
    LLVMDIBuilderRef dib = LLVMCreateDIBuilder(c->mod);
    c->dib = dib;
    const char *slash = strrchr(c->filename, '/');
    const char *base = slash ? slash + 1 : c->filename;
    LLVMMetadataRef file =
            LLVMDIBuilderCreateFile(dib, base, strlen(base), c->filename, slash ? (size_t)(slash - c->filename) : 0);
    LLVMDIBuilderCreateCompileUnit(dib, LLVMDWARFSourceLanguagePython, file, "gpujit", 6, 1, "", 0, 0, "", 0,
                                   full ? LLVMDWARFEmissionFull : (LLVMDWARFEmissionKind)3, 0, 0, 0, "", 0, "", 0);
    LLVMAddModuleFlag(c->mod, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
                      LLVMValueAsMetadata(LLVMConstInt(c->i32, LLVMDebugMetadataVersion(), 0)));
    LLVMAddModuleFlag(c->mod, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
                      LLVMValueAsMetadata(LLVMConstInt(c->i32, 2, 0)));
}

static void debug_finish(Ctx *c) {
    if (!c->dib) return;
    LLVMDIBuilderFinalize(c->dib);
    LLVMDisposeDIBuilder(c->dib);
    c->dib = NULL;
}

static int lower_body(Ctx *c, LLVMValueRef *args);
static int lower_export(Ctx *c);

/* The LLVM type of one kernel parameter: pointers in the address space of
 * the argument's array (or of global memory, the error buffer), else the
 * dtype as stored in memory (bool is a byte). */
/* How many parts (GjParam.item numbers) a value of type t takes: a tuple
 * and, depth-first, its items. */
static int type_parts(const Type *t) {
    int n = 1;
    for (int k = 0; t->kind == TY_TUPLE && k < t->n; k++) n += type_parts(t->items[k]);
    return n;
}

/* The type of part `item` of a value of type t. */
static Type *part_type(Type *t, int item) {
    for (int k = 0, id = 1; item && t->kind == TY_TUPLE && k < t->n; k++) {
        int span = type_parts(t->items[k]);
        if (item < id + span) return part_type(t->items[k], item - id);
        id += span;
    }
    return t;
}

static LLVMTypeRef param_type(Ctx *c, const GjParam *p) {
    switch (p->role) {
    case GJ_PARAM_DATA: {
        Type *t = part_type(c->argtypes[p->arg], p->item);
        return LLVMPointerTypeInContext(c->llctx, llvm_as(c, t->kind == TY_RECORD ? AS_GLOBAL : t->space));
    }
    case GJ_PARAM_ERRBUF: return LLVMPointerTypeInContext(c->llctx, llvm_as(c, AS_GLOBAL));
    default: return mem_type(c, type_scalar((TypeKind)p->dtype));
    }
}

/* Argument value of type `t` from its `n` parameters `pv` (laid out as `lay`
 * says): an array's struct, a complex's pair, a scalar (bool from its byte).
 * NULL if they do not fit the type. */
static LLVMValueRef reassemble(Ctx *c, Type *t, const GjParam *lay, LLVMValueRef *pv, int n, int part) {
    if (t->kind == TY_TUPLE) { /* each item from the parameters of its parts */
        LLVMValueRef v = LLVMGetUndef(llvm_type(c, t));
        int j = 0, id = part + 1;
        for (int k = 0; k < t->n; k++) {
            int first = j, span = type_parts(t->items[k]);
            while (j < n && lay[j].item >= id && lay[j].item < id + span) j++;
            LLVMValueRef x = reassemble(c, t->items[k], &lay[first], &pv[first], j - first, id);
            if (!x) return NULL;
            v = LLVMBuildInsertValue(c->b, v, x, (unsigned)k, "");
            id += span;
        }
        return j == n ? v : NULL;
    }
    if (t->kind == TY_RECORD) return n == 1 && lay[0].role == GJ_PARAM_DATA ? load_elem(c, t, pv[0]) : NULL;
    if (t->kind == TY_CPTR) return n == 1 ? LLVMBuildIntToPtr(c->b, pv[0], llvm_type(c, t), "") : NULL;
    if (t->kind == TY_ARRAY) {
        if (n != 1 + 2 * t->ndim || lay[0].role != GJ_PARAM_DATA) return NULL;
        LLVMValueRef a = LLVMBuildInsertValue(c->b, LLVMGetUndef(llvm_type(c, t)), pv[0], 0, "");
        for (int f = 1; f <= 2; f++) { /* shape, then strides */
            LLVMValueRef dims = LLVMGetUndef(LLVMArrayType2(c->i64, (uint64_t)t->ndim));
            for (int k = 0; k < t->ndim; k++)
                dims = LLVMBuildInsertValue(c->b, dims, pv[1 + (f - 1) * t->ndim + k], (unsigned)k, "");
            a = LLVMBuildInsertValue(c->b, a, dims, (unsigned)f, "");
        }
        return a;
    }
    if (is_complex(t)) return n == 2 && lay[0].role == GJ_PARAM_REAL ? complex_make(c, t, pv[0], pv[1]) : NULL;
    if (n != 1 || lay[0].role != GJ_PARAM_VALUE) return NULL;
    return t->kind == TY_BOOL ? LLVMBuildICmp(c->b, LLVMIntNE, pv[0], LLVMConstInt(c->i8, 0, 0), "") : pv[0];
}

int lower(Ctx *c) {
    c->mod = LLVMModuleCreateWithNameInContext(c->funcname, c->llctx);
    c->b = LLVMCreateBuilderInContext(c->llctx);
    c->i1 = LLVMInt1TypeInContext(c->llctx);
    c->i8 = LLVMInt8TypeInContext(c->llctx);
    c->i16 = LLVMInt16TypeInContext(c->llctx);
    c->i32 = LLVMInt32TypeInContext(c->llctx);
    c->i64 = LLVMInt64TypeInContext(c->llctx);
    c->f32 = LLVMFloatTypeInContext(c->llctx);
    c->f64 = LLVMDoubleTypeInContext(c->llctx);
    c->ptr = LLVMPointerTypeInContext(c->llctx, 0);
    c->voidt = LLVMVoidTypeInContext(c->llctx);
    LLVMSetTarget(c->mod, c->triple);
    if (c->tm) {
        LLVMTargetDataRef td = LLVMCreateTargetDataLayout(c->tm);
        char *dl = LLVMCopyStringRepOfTargetData(td);
        LLVMSetDataLayout(c->mod, dl);
        LLVMDisposeMessage(dl);
        LLVMDisposeTargetData(td);
    }
    if (c->opt.device) {
        RETURN_IF_ERROR(lower_export(c));
        goto done;
    }
    /* the kernel's parameters: layout.c flattens the arguments */
    GjParam *lay;
    int np = layout_params(c, &lay);
    if (np < 0) return -1;
    LLVMTypeRef *pt = arena_alloc(&c->arena, sizeof(LLVMTypeRef) * (size_t)(np + 1));
    if (!pt) return -1;
    for (int j = 0; j < np; j++) pt[j] = param_type(c, &lay[j]);
    RETURN_IF_ERROR(c->target->begin_kernel(c, pt, np));
    if (HAS_ERRBUF(c)) c->errbuf = LLVMGetParam(c->fn, LLVMCountParams(c->fn) - 1);
    debug_begin(c);
    debug_subprogram(c);
    c->entry = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "entry");
    LLVMPositionBuilderAtEnd(c->b, c->entry);
    /* reassemble the Python-level arguments; the body function takes the
     * target's hidden parameters first (begin_kernel's: a kernel's can differ
     * from a device function's) */
    LLVMValueRef *args = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(c->nargs + 1));
    LLVMValueRef *pv = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(np + 1));
    if (!args || !pv) return -1;
    int nh = (int)LLVMCountParams(c->fn) - np;
    for (int j = 0; j < np; j++) pv[j] = LLVMGetParam(c->fn, (unsigned)(nh + j));
    for (int j = 0, i = 0; i < c->nargs; i++) {
        int first = j;
        while (j < np && lay[j].arg == i) j++;
        args[i] = reassemble(c, c->argtypes[i], &lay[first], &pv[first], j - first, 0);
        if (!args[i]) return internal_error(c, NO_LOCATION, "lower: argument %d does not match its parameters", i);
    }
    RETURN_IF_ERROR(lower_body(c, args));
done:
    LLVMSetCurrentDebugLocation2(c->b, NULL);
    RETURN_IF_ERROR(c->target->finish(c));
    debug_finish(c);
    if (debug_enabled("llvm")) {
        char *s = LLVMPrintModuleToString(c->mod);
        fprintf(stderr, "== LLVM IR of %s (before optimisation)\n%s", c->funcname, s);
        LLVMDisposeMessage(s);
    }
    char *msg = NULL;
    if (LLVMVerifyModule(c->mod, LLVMReturnStatusAction, &msg)) {
        internal_error(c, NO_LOCATION, "lower: the LLVM module does not verify:\n%s", msg ? msg : "");
        LLVMDisposeMessage(msg);
        return -1;
    }
    LLVMDisposeMessage(msg);
    return 0;
}

/* A device function compiled on its own (compile_ptx(device=True)): one externally visible
 * function taking its arguments by value (arrays as their structs) and returning its value,
 * as a device function called from a kernel does, with the error buffer last under debug. */
static int lower_export(Ctx *c) {
    LLVMTypeRef *pt = arena_alloc(&c->arena, sizeof(LLVMTypeRef) * (size_t)(c->nargs + 1));
    LLVMValueRef *args = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(c->nargs + 1));
    if (!pt || !args) return -1;
    int np = 0;
    for (int i = 0; i < c->nargs; i++)
        if (has_value(c->argtypes[i])) pt[np++] = llvm_type(c, c->argtypes[i]);
    if (HAS_ERRBUF(c)) pt[np++] = LLVMPointerTypeInContext(c->llctx, llvm_as(c, AS_GLOBAL));
    LLVMTypeRef rt = c->restype->kind == TY_NONE ? c->voidt : llvm_type(c, c->restype);
    RETURN_IF_ERROR(c->target->begin_export(c, rt, pt, np));
    if (HAS_ERRBUF(c)) c->errbuf = LLVMGetParam(c->fn, (unsigned)np - 1);
    debug_begin(c);
    debug_subprogram(c);
    c->entry = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "entry");
    LLVMPositionBuilderAtEnd(c->b, c->entry);
    for (int i = 0, p = 0; i < c->nargs; i++)
        args[i] = has_value(c->argtypes[i]) ? LLVMGetParam(c->fn, (unsigned)p++) : NULL;
    return lower_body(c, args);
}

/* Marks the variables assigned once whose reads all follow that assignment in its block, or,
 * where it is in the first block (which runs first and dominates every other), come after it
 * there or in any other block: most of a kernel's (its arguments, thread indices, shared
 * arrays, the stack slots that hold a loop's iterator, a loop body's temporaries). The
 * assignment's value is every read's, so they need no alloca: that leaves SROA, EarlyCSE
 * and InstCombine less to take apart (an array's struct was stored whole and loaded whole
 * at each use). A read before the assignment in its block (a loop back to it) keeps the slot. */
static int find_once(Ctx *c) {
    size_t n = (size_t)c->vars.n + 1;
    int *stores = arena_alloc(&c->arena, sizeof(int) * n), *sblock = arena_alloc(&c->arena, sizeof(int) * n);
    bool *bad = arena_alloc(&c->arena, sizeof(bool) * n);
    if (!stores || !sblock || !bad) return -1;
    for (int i = 0; i < c->vars.n; i++) stores[i] = 0, sblock[i] = -1, bad[i] = false;
    for (int i = 0; i < c->nblocks; i++) {
        Block *b = c->blocks[i];
        if (!b->built) continue;
        for (int k = 0; k < b->instrs.n; k++) {
            Instr *in = b->instrs.v[k];
            if (in->op == IR_STORE_VAR) stores[in->var]++, sblock[in->var] = i;
            /* a read before the assignment is seen (in an earlier block, or in its block
             * before it), or outside its block where that is not the first, may see
             * another value */
            if (in->op == IR_LOAD_VAR && sblock[in->var] != i && sblock[in->var] != 0) bad[in->var] = true;
        }
    }
    /* opt=False keeps every local in memory, as numba's -O0 does */
    for (int i = 0; i < c->vars.n; i++) ctx_var(c, i)->once = stores[i] == 1 && !bad[i] && !c->opt.noopt;
    return 0;
}

/* Variables, blocks and instructions of c->fn, whose entry block holds the builder. */
static int lower_body(Ctx *c, LLVMValueRef *args) {
    c->params = args;
    RETURN_IF_ERROR(find_once(c));
    /* a slot per variable with a runtime value, but those assigned once */
    for (int i = 0; i < c->vars.n; i++) {
        Var *v = ctx_var(c, i);
        LLVMTypeRef t = v->type->kind != TY_UNKNOWN ? llvm_type(c, v->type) : NULL;
        if (t && !v->once) v->slot = LLVMBuildAlloca(c->b, t, v->name);
        if (!t) v->once = false;
    }
    RETURN_IF_ERROR(find_loops(c));
    for (int i = 0; i < c->nblocks; i++)
        if (c->blocks[i]->built)
            c->blocks[i]->bb = LLVMAppendBasicBlockInContext(c->llctx, c->fn, arena_printf(&c->arena, "b%d", i));
    LLVMBuildBr(c->b, c->blocks[0]->bb);
    for (int i = 0; i < c->nblocks; i++) {
        Block *b = c->blocks[i];
        if (!b->built) continue;
        LLVMPositionBuilderAtEnd(c->b, b->bb);
        for (int k = 0; k < b->instrs.n; k++) {
            Instr *in = b->instrs.v[k];
            if (c->disp && in->loc.line > 0)
                LLVMSetCurrentDebugLocation2(c->b,
                                             LLVMDIBuilderCreateDebugLocation(c->llctx, (unsigned)in->loc.line,
                                                                              (unsigned)in->loc.col + 1, c->disp,
                                                                              NULL));
            c->cur_loc = in->loc;
            c->cur_block = b;
            c->cur_index = k;
            RETURN_IF_ERROR(lower_instr(c, in));
        }
    }
    return 0;
}

/* The LLVM function of a device function, lowered on first call into the
 * kernel's module: internal, arguments by value (arrays as their structs),
 * after the target's hidden parameters (the CPU's block context and thread
 * index). O3 inlines it where that pays. */
static LLVMValueRef device_fn(Ctx *caller, Func *f) {
    if (f->fn) return f->fn;
    Ctx *s = f->sub, *root = ctx_root(caller);
    s->llctx = root->llctx;
    s->mod = root->mod;
    s->tm = root->tm;
    s->triple = root->triple;
    s->i1 = root->i1, s->i8 = root->i8, s->i16 = root->i16, s->i32 = root->i32, s->i64 = root->i64;
    s->f32 = root->f32, s->f64 = root->f64, s->ptr = root->ptr, s->voidt = root->voidt;
    s->b = LLVMCreateBuilderInContext(s->llctx);
    /* the target's hidden parameters, the error buffer, the arguments */
    int nh = s->target->hidden_params(s, NULL, NULL);
    LLVMTypeRef *pt = arena_alloc(&s->arena, sizeof(LLVMTypeRef) * (size_t)(nh + 2 + s->nargs));
    if (!pt) return NULL;
    s->target->hidden_params(s, pt, NULL);
    if (HAS_ERRBUF(s)) pt[nh++] = LLVMPointerTypeInContext(s->llctx, llvm_as(s, AS_GLOBAL));
    bool raises = may_raise(f);
    if (raises) pt[nh++] = s->ptr;
    /* compile-time arguments (functions, dtypes, strings) have no parameter */
    int np = 0;
    for (int i = 0; i < s->nargs; i++)
        if (has_value(s->argtypes[i])) pt[nh + np++] = llvm_type(s, s->argtypes[i]);
    LLVMTypeRef rt = s->restype->kind == TY_NONE ? s->voidt : llvm_type(s, s->restype);
    s->fn = f->fn = LLVMAddFunction(s->mod, s->symbol, LLVMFunctionType(rt, pt, (unsigned)(nh + np), 0));
    if (HAS_ERRBUF(s)) s->errbuf = LLVMGetParam(s->fn, (unsigned)nh - 1 - raises);
    if (raises) s->raised = LLVMGetParam(s->fn, (unsigned)nh - 1);
    LLVMSetLinkage(s->fn, LLVMInternalLinkage);
    s->target->begin_device_fn(s);
    debug_subprogram(s);
    s->entry = LLVMAppendBasicBlockInContext(s->llctx, s->fn, "entry");
    LLVMPositionBuilderAtEnd(s->b, s->entry);
    LLVMValueRef *args = arena_alloc(&s->arena, sizeof(LLVMValueRef) * (size_t)(s->nargs + 1));
    if (!args) return NULL;
    for (int i = 0, p = nh; i < s->nargs; i++)
        args[i] = has_value(s->argtypes[i]) ? LLVMGetParam(s->fn, (unsigned)p++) : NULL;
    if (lower_body(s, args) < 0) return NULL;
    root->needs_libdevice |= s->needs_libdevice;
    return f->fn;
}

static LLVMValueRef lower_user_call(Ctx *c, Instr *in) {
    Func *f = in->callee;
    LLVMValueRef fn = device_fn(c, f);
    if (!fn) return NULL;
    int nh = c->target->hidden_params(c, NULL, NULL);
    LLVMValueRef *args = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(nh + 2 + f->sub->nargs));
    if (!args) return NULL;
    c->target->hidden_params(c, NULL, args);
    if (HAS_ERRBUF(c)) args[nh++] = c->errbuf;
    bool raises = may_raise(f);
    if (raises) args[nh++] = raised_flag(c);
    int np = 0;
    for (int i = 0; i < f->sub->nargs; i++)
        if (has_value(f->sub->argtypes[i])) args[nh + np++] = val_as(c, in->args[1 + i], f->sub->argtypes[i]);
    LLVMValueRef r = LLVMBuildCall2(c->b, LLVMGlobalGetValueType(fn), fn, args, (unsigned)(nh + np), "");
    if (raises) {
        /* the callee raised: this thread stops here too */
        LLVMBasicBlockRef stop = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "raised");
        LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "call.ok");
        LLVMValueRef flag = LLVMBuildLoad2(c->b, c->i8, raised_flag(c), "");
        LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntNE, flag, LLVMConstInt(c->i8, 0, 0), ""), stop, cont);
        LLVMPositionBuilderAtEnd(c->b, stop);
        stop_thread(c);
        LLVMPositionBuilderAtEnd(c->b, cont);
    }
    return f->sub->restype->kind == TY_NONE ? NULL : r;
}
