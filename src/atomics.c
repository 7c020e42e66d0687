/* atomics.c: the intrinsics that cross threads -- gpu.atomic.* and the
 * warp-level operations (shuffles, votes, match, syncwarp, activemask): their
 * typing rules and lowering, called by intrinsics.c's type_intrinsic_call and
 * lower_intrinsic_call. */
#include <string.h>

#include "gj.h"

/* a shuffle moves 32- or 64-bit ints and floats */
static bool warp_value(Type *t) { return (is_int(t) || is_float(t)) && type_bits(t) >= 32; }

/* the element types each atomic takes: */
enum { AT_INTS = 1, AT_UINTS = 2, AT_FLOATS = 4 }; /* 32 and 64 bits only */
/* clang-format off */
static const int atomic_types[] = {
    [AT_ADD] = AT_INTS | AT_UINTS | AT_FLOATS, [AT_SUB] = AT_INTS | AT_UINTS | AT_FLOATS,
    [AT_AND] = AT_INTS | AT_UINTS, [AT_OR] = AT_INTS | AT_UINTS, [AT_XOR] = AT_INTS | AT_UINTS,
    [AT_EXCH] = AT_INTS | AT_UINTS | AT_FLOATS, /* numba: ints only; CUDA has float atomicExch */
    [AT_MAX] = AT_INTS | AT_UINTS | AT_FLOATS, [AT_MIN] = AT_INTS | AT_UINTS | AT_FLOATS,
    [AT_NANMAX] = AT_INTS | AT_UINTS | AT_FLOATS, [AT_NANMIN] = AT_INTS | AT_UINTS | AT_FLOATS,
    [AT_INC] = AT_UINTS, [AT_DEC] = AT_UINTS,
    [AT_CAS] = AT_INTS | AT_UINTS, [AT_COMPARE_AND_SWAP] = AT_INTS | AT_UINTS,
};
/* clang-format on */

/* One index, or a tuple of one per dimension, all integers. */
bool check_index(Ctx *c, Instr *in, const char *what, Type *arr, Type *idx) {
    int nidx = idx->kind == TY_TUPLE ? idx->n : 1;
    if (nidx != arr->ndim)
        return error_at(c, ERR_TYPING, in->loc, "%s: %d indices for a %d-dimensional array", what, nidx, arr->ndim),
               false;
    for (int i = 0; i < nidx; i++)
        if (!is_index(idx->kind == TY_TUPLE ? idx->items[i] : idx))
            return error_at(c, ERR_TYPING, in->loc, "%s: indices must be integers, not %s", what,
                            type_name(c, idx->kind == TY_TUPLE ? idx->items[i] : idx)),
                   false;
    return true;
}

/* atomic.OP(array, index, value), cas(array, index, old, value),
 * compare_and_swap(array, old, value): each returns the old element. */
Type *type_atomic(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs) {
    const char *name = path_pretty(k->path);
    int want = k->id == AT_CAS ? 4 : 3, first_value = k->id == AT_COMPARE_AND_SWAP ? 1 : 2;
    if (nargs != want)
        TERR("%s(%s) takes %d arguments", name,
             k->id == AT_CAS                        ? "array, index, old, value"
                     : k->id == AT_COMPARE_AND_SWAP ? "array, old, value"
                                                    : "array, index, value",
             want);
    Type *a = at[0];
    if (a->kind != TY_ARRAY) TERR("%s: the first argument must be an array, not %s", name, type_name(c, a));
    if (a->space == AS_CONST) TERR("%s: constant arrays are read-only", name);
    Type *e = a->elem;
    int cls = is_float(e) ? AT_FLOATS : is_signed(e) ? AT_INTS : AT_UINTS;
    int ok = atomic_types[k->id];
    bool bf_add = e->kind == TY_BFLOAT16 && (k->id == AT_ADD || k->id == AT_SUB); /* atom.add.noftz.bf16 */
    if (!bf_add && (!(is_float(e) || is_int(e)) || type_bits(e) < 32 || !(ok & cls)))
        TERR("%s on %s arrays is not supported (%s%s%s are)", name, type_name(c, e),
             ok & AT_INTS ? "int32, int64, " : "", ok & AT_UINTS ? "uint32, uint64" : "",
             ok & AT_FLOATS ? ", float32, float64" : "");
    if (k->id == AT_COMPARE_AND_SWAP) {
        if (a->ndim != 1) TERR("%s needs a 1-dimensional array (it works on element 0)", name);
    } else if (!check_index(c, in, name, a, at[1])) {
        return NULL;
    }
    for (int i = first_value; i < nargs; i++)
        if (!is_scalar(at[i])) TERR("%s: the value must be a number, not %s", name, type_name(c, at[i]));
    return e;
}

Type *type_warp(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs) {
    static const int nparams[] = {
            [WARP_SHFL_IDX] = 3,  [WARP_SHFL_UP] = 3,   [WARP_SHFL_DOWN] = 3, [WARP_SHFL_BFLY] = 3,
            [WARP_ALL] = 2,       [WARP_ANY] = 2,       [WARP_EQ] = 2,        [WARP_BALLOT] = 2,
            [WARP_MATCH_ANY] = 2, [WARP_MATCH_ALL] = 2, [WARP_SYNC] = 1,      [WARP_ACTIVEMASK] = 0};
    static const char *const spelling[] = {[WARP_SHFL_IDX] = "mask, value, src_lane",
                                           [WARP_SHFL_UP] = "mask, value, delta",
                                           [WARP_SHFL_DOWN] = "mask, value, delta",
                                           [WARP_SHFL_BFLY] = "mask, value, lane_mask",
                                           [WARP_ALL] = "mask, predicate",
                                           [WARP_ANY] = "mask, predicate",
                                           [WARP_EQ] = "mask, predicate",
                                           [WARP_BALLOT] = "mask, predicate",
                                           [WARP_MATCH_ANY] = "mask, value",
                                           [WARP_MATCH_ALL] = "mask, value",
                                           [WARP_SYNC] = "mask=0xFFFFFFFF",
                                           [WARP_ACTIVEMASK] = ""};
    WarpOp op = (WarpOp)k->id;
    const char *name = path_pretty(k->path);
    /* on the CPU, lanes meet in the runtime: each thread runs on a fiber */
    c->uses_barrier = true;
    if (op == WARP_ACTIVEMASK) ctx_root(c)->uses_activemask = true;
    if (nargs != nparams[op] && !(op == WARP_SYNC && nargs == 0))
        TERR("%s(%s) takes %d argument%s", name, spelling[op], nparams[op], nparams[op] == 1 ? "" : "s");
    if (nargs && (!is_int(at[0]) || at[0]->kind == TY_BOOL))
        TERR("%s: Mask type must be an integer, not %s", name, type_name(c, at[0]));
    /* match.sync is Volta's: LLVM cannot select it for older GPUs (and aborts) */
    if ((op == WARP_MATCH_ANY || op == WARP_MATCH_ALL) && c->opt.target == GJ_TARGET_NVPTX && c->opt.cc_major < 7)
        UNSUP("%s needs compute capability 7.0 or newer (compiling for %d.%d)", name, c->opt.cc_major, c->opt.cc_minor);
    switch (op) {
    case WARP_SHFL_IDX:
    case WARP_SHFL_UP:
    case WARP_SHFL_DOWN:
    case WARP_SHFL_BFLY:
        if (!warp_value(at[1]))
            TERR("%s: the value must be a 32- or 64-bit integer or float, not %s", name, type_name(c, at[1]));
        if (!is_index(at[2])) TERR("%s: the lane must be an integer, not %s", name, type_name(c, at[2]));
        return at[1];
    case WARP_ALL:
    case WARP_ANY:
    case WARP_EQ:
    case WARP_BALLOT:
        /* numba's rule: a float is not a predicate */
        if (!is_int(at[1]) && at[1]->kind != TY_BOOL)
            TERR("%s: Predicate must be an integer or boolean, not %s", name, type_name(c, at[1]));
        return op == WARP_BALLOT ? &ty_uint32 : &ty_bool;
    case WARP_MATCH_ANY:
    case WARP_MATCH_ALL: {
        if (!warp_value(at[1]))
            TERR("%s: the value must be a 32- or 64-bit integer or float, not %s", name, type_name(c, at[1]));
        if (op == WARP_MATCH_ANY) return &ty_uint32;
        Type *items[2] = {&ty_uint32, &ty_bool};
        return type_tuple(c, 2, items);
    }
    case WARP_SYNC: return &ty_none;
    case WARP_ACTIVEMASK: return &ty_uint32;
    }
    TERR("%s", name);
}

/* numba's float atomic max/min as a compare-and-swap loop (LLVM's
 * atomicrmw fmax would follow maxnum and replace a NaN element):
 *   max, min:       store only when old < val (old > val); a NaN on either
 *                   side leaves the element alone;
 *   nanmax, nanmin: a NaN val is ignored, a NaN element is replaced. */
static LLVMValueRef float_minmax(Ctx *c, AtomicOp op, LLVMValueRef p, LLVMValueRef v) {
    LLVMTypeRef ft = LLVMTypeOf(v),
                it = LLVMIntTypeInContext(c->llctx, LLVMGetTypeKind(ft) == LLVMFloatTypeKind ? 32 : 64);
    bool mx = op == AT_MAX || op == AT_NANMAX, nan = op == AT_NANMAX || op == AT_NANMIN;
    LLVMValueRef vbits = LLVMBuildBitCast(c->b, v, it, "");
    LLVMValueRef old0 = LLVMBuildLoad2(c->b, it, p, "");
    LLVMSetOrdering(old0, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(old0, (unsigned)LLVMGetIntTypeWidth(it) / 8);
    LLVMBasicBlockRef entry = LLVMGetInsertBlock(c->b), loop = new_block(c, "minmax"),
                      try_ = new_block(c, "minmax.cas"), done = new_block(c, "minmax.done");
    LLVMBuildBr(c->b, loop);
    LLVMPositionBuilderAtEnd(c->b, loop);
    LLVMValueRef old = LLVMBuildPhi(c->b, it, "old");
    LLVMValueRef f = LLVMBuildBitCast(c->b, old, ft, "");
    LLVMValueRef want;
    if (nan)
        want = LLVMBuildAnd(c->b, LLVMBuildFCmp(c->b, LLVMRealORD, v, v, ""),
                            LLVMBuildFCmp(c->b, mx ? LLVMRealULT : LLVMRealUGT, f, v, ""), "");
    else
        want = LLVMBuildFCmp(c->b, mx ? LLVMRealOLT : LLVMRealOGT, f, v, "");
    LLVMBuildCondBr(c->b, want, try_, done);
    LLVMPositionBuilderAtEnd(c->b, try_);
    LLVMValueRef pair =
            LLVMBuildAtomicCmpXchg(c->b, p, old, vbits, LLVMAtomicOrderingMonotonic, LLVMAtomicOrderingMonotonic, 0);
    LLVMValueRef seen = LLVMBuildExtractValue(c->b, pair, 0, "");
    LLVMBuildCondBr(c->b, LLVMBuildExtractValue(c->b, pair, 1, ""), done, loop);
    LLVMValueRef in[2] = {old0, seen};
    LLVMBasicBlockRef from[2] = {entry, try_};
    LLVMAddIncoming(old, in, from, 2);
    LLVMPositionBuilderAtEnd(c->b, done);
    return f;
}

/* Returns the element's old value, as numba's atomics do. */
/* A bfloat16 atomic add on the CPU target: a compare-and-swap loop on the 16 bits, the
 * sum made by the ordinary (legalised, rounded) bfloat add, not LLVM's expansion of an
 * atomicrmw fadd, which would round through the host's conversion. The GPU's is one
 * atom.add.noftz.bf16 (sm_90) or LLVM's loop around add.bf16. */
static LLVMValueRef bf16_atomic_add(Ctx *c, LLVMValueRef p, LLVMValueRef v) {
    LLVMTypeRef bt = LLVMTypeOf(v);
    LLVMBasicBlockRef from = LLVMGetInsertBlock(c->b);
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "atom.bf16");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "atom.bf16.done");
    LLVMValueRef first = LLVMBuildLoad2(c->b, c->i16, p, "");
    LLVMSetOrdering(first, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(first, 2);
    LLVMBuildBr(c->b, loop);
    LLVMPositionBuilderAtEnd(c->b, loop);
    LLVMValueRef old = LLVMBuildPhi(c->b, c->i16, "");
    LLVMValueRef sum = LLVMBuildFAdd(c->b, LLVMBuildBitCast(c->b, old, bt, ""), v, "");
    LLVMValueRef x = LLVMBuildAtomicCmpXchg(c->b, p, old, LLVMBuildBitCast(c->b, sum, c->i16, ""),
                                            LLVMAtomicOrderingMonotonic, LLVMAtomicOrderingMonotonic, 0);
    LLVMValueRef seen = LLVMBuildExtractValue(c->b, x, 0, "");
    LLVMAddIncoming(old, &first, &from, 1);
    LLVMBasicBlockRef again = LLVMGetInsertBlock(c->b);
    LLVMAddIncoming(old, &seen, &again, 1);
    LLVMBuildCondBr(c->b, LLVMBuildExtractValue(c->b, x, 1, ""), done, loop);
    LLVMPositionBuilderAtEnd(c->b, done);
    return LLVMBuildBitCast(c->b, seen, bt, "");
}

LLVMValueRef lower_atomic(Ctx *c, AtomicOp op, Instr **a, Type *et) {
    LLVMValueRef p;
    int vi = 2;
    if (op == AT_COMPARE_AND_SWAP) {
        /* element 0, checked as a[0] is: an empty array (or slice) has none */
        Instr zero = {.op = IR_CONST, .loc = a[0]->loc, .type = &ty_int64, .ckind = CK_INT};
        p = elem_ptr(c, a[0], &zero);
        vi = 1;
    } else {
        p = elem_ptr(c, a[0], a[1]);
    }
    race_check(c, a[0], p, et, GJ_RACE_WRITE | GJ_RACE_ATOMIC);
    LLVMValueRef v = val_as(c, a[vi], et);
    LLVMAtomicOrdering mo = LLVMAtomicOrderingMonotonic;
    bool fl = is_float(et), sg = is_signed(et);
    LLVMAtomicRMWBinOp rmw;
    switch (op) {
    case AT_CAS:
    case AT_COMPARE_AND_SWAP:
        return LLVMBuildExtractValue(c->b, LLVMBuildAtomicCmpXchg(c->b, p, v, val_as(c, a[vi + 1], et), mo, mo, 0), 0,
                                     "");
    case AT_MAX:
    case AT_MIN:
    case AT_NANMAX:
    case AT_NANMIN: {
        if (fl) return float_minmax(c, op, p, v);
        bool mx = op == AT_MAX || op == AT_NANMAX;
        rmw = mx ? (sg ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax)
                 : (sg ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin);
        break;
    }
    case AT_ADD:
        if (et->kind == TY_BFLOAT16 && c->opt.target != GJ_TARGET_NVPTX) return bf16_atomic_add(c, p, v);
        rmw = fl ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd;
        break;
    case AT_SUB:
        /* a float's x - v is x + (-v) exactly, and the GPU has atom.add.f32/f64 */
        if (fl) v = LLVMBuildFNeg(c->b, v, "");
        if (et->kind == TY_BFLOAT16 && c->opt.target != GJ_TARGET_NVPTX) return bf16_atomic_add(c, p, v);
        rmw = fl ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpSub;
        break;
    case AT_AND: rmw = LLVMAtomicRMWBinOpAnd; break;
    case AT_OR: rmw = LLVMAtomicRMWBinOpOr; break;
    case AT_XOR: rmw = LLVMAtomicRMWBinOpXor; break;
    case AT_EXCH: rmw = LLVMAtomicRMWBinOpXchg; break;
    case AT_INC: rmw = LLVMAtomicRMWBinOpUIncWrap; break; /* old >= v ? 0 : old + 1 */
    default: rmw = LLVMAtomicRMWBinOpUDecWrap; break;     /* old == 0 || old > v ? v : old - 1 */
    }
    return LLVMBuildAtomicRMW(c->b, rmw, p, v, mo, 0);
}

/* The bits of a 32/64-bit int or float, as an int of its width. */
static LLVMValueRef as_bits(Ctx *c, LLVMValueRef v, Type *t) {
    return is_float(t) ? LLVMBuildBitCast(c->b, v, LLVMIntTypeInContext(c->llctx, (unsigned)type_bits(t)), "") : v;
}

LLVMValueRef lower_warp(Ctx *c, WarpOp op, Instr **a, int nargs, Type *rt) {
    LLVMValueRef mask = nargs ? val_as(c, a[0], &ty_uint32) : LLVMConstInt(c->i32, 0xFFFFFFFFu, 0);
    switch (op) {
    case WARP_SHFL_IDX:
    case WARP_SHFL_UP:
    case WARP_SHFL_DOWN:
    case WARP_SHFL_BFLY: {
        LLVMValueRef r = c->target->warp(c, op, mask, as_bits(c, val(c, a[1]), rt), val_as(c, a[2], &ty_int32));
        return is_float(rt) ? LLVMBuildBitCast(c->b, r, llvm_type(c, rt), "") : r;
    }
    case WARP_ALL:
    case WARP_ANY:
    case WARP_EQ:
    case WARP_BALLOT: {
        LLVMValueRef p = LLVMBuildZExt(c->b, to_bool(c, val(c, a[1]), a[1]->type), c->i32, "");
        LLVMValueRef r = c->target->warp(c, op, mask, p, NULL);
        return op == WARP_BALLOT ? r : LLVMBuildICmp(c->b, LLVMIntNE, r, LLVMConstInt(c->i32, 0, 0), "");
    }
    case WARP_MATCH_ANY:
    case WARP_MATCH_ALL: {
        LLVMValueRef r = c->target->warp(c, op, mask, as_bits(c, val(c, a[1]), a[1]->type), NULL);
        if (op == WARP_MATCH_ANY) return r;
        /* (mask, pred): the mask is 0 unless every lane holds the same value */
        LLVMValueRef t = LLVMBuildInsertValue(c->b, LLVMGetUndef(llvm_type(c, rt)), r, 0, "");
        return LLVMBuildInsertValue(c->b, t, LLVMBuildICmp(c->b, LLVMIntNE, r, LLVMConstInt(c->i32, 0, 0), ""), 1, "");
    }
    case WARP_SYNC: c->target->warp(c, op, mask, NULL, NULL); return NULL;
    case WARP_ACTIVEMASK: {
        LLVMValueRef len = NULL, pos = lane_position(c, &len);
        return c->target->warp(c, op, mask, pos, len);
    }
    }
    return NULL;
}
