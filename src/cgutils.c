/* cgutils.c: the LLVM builder kit every lowering file builds with (numba's
 * cgutils.py): the LLVM types of gpujit's types, IR values as LLVM values and
 * conversions between them, math calls with the fast-math flags in force,
 * element pointers, entry-block allocas, new blocks, and array, range, complex
 * and record values. Requires: c->b positioned in the function being built. */
#include <string.h>

#include "gj.h"

static LLVMTypeRef array_struct(Ctx *c, Type *t);

unsigned llvm_as(Ctx *c, AddrSpace s) {
    switch (s) {
    case AS_GLOBAL: return (unsigned)c->target->array_space;
    case AS_SHARED: return (unsigned)c->target->shared_space;
    default: return 0;
    }
}

LLVMTypeRef llvm_type(Ctx *c, Type *t) {
    switch (t->kind) {
    case TY_BOOL: return c->i1;
    case TY_INT8:
    case TY_UINT8:
    case TY_FP8_E4M3:
    case TY_FP8_E5M2: return c->i8;
    case TY_INT16:
    case TY_UINT16: return c->i16;
    case TY_INT32:
    case TY_UINT32: return c->i32;
    case TY_INT64:
    case TY_UINT64: return c->i64;
    case TY_FLOAT16: return LLVMHalfTypeInContext(c->llctx);
    case TY_BFLOAT16: ctx_root(c)->uses_bf16 = true; return LLVMBFloatTypeInContext(c->llctx);
    case TY_FLOAT32: return c->f32;
    case TY_FLOAT64: return c->f64;
    case TY_COMPLEX64:
    case TY_COMPLEX128: {
        LLVMTypeRef part = t->kind == TY_COMPLEX64 ? c->f32 : c->f64, f[2] = {part, part};
        return LLVMStructTypeInContext(c->llctx, f, 2, 0); /* NumPy's layout: re, im */
    }
    case TY_ARRAY: return array_struct(c, t);
    case TY_CPTR: return LLVMPointerTypeInContext(c->llctx, llvm_as(c, t->space));
    case TY_TUPLE: {
        LLVMTypeRef *items = arena_alloc(&c->arena, sizeof(LLVMTypeRef) * (size_t)(t->n ? t->n : 1));
        if (!items) return NULL;
        for (int i = 0; i < t->n; i++)
            if (!(items[i] = llvm_type(c, t->items[i])))
                items[i] = c->i8; /* an object (isinstance's classes): no value */
        return LLVMStructTypeInContext(c->llctx, items, (unsigned)t->n, 0);
    }
    case TY_RANGE: {
        LLVMTypeRef items[3] = {c->i64, c->i64, c->i64};
        return LLVMStructTypeInContext(c->llctx, items, 3, 0);
    }
    case TY_RANGEITER: return c->ptr;
    case TY_SLICE: {
        LLVMTypeRef items[3] = {c->i64, c->i64, c->i64};
        return LLVMStructTypeInContext(c->llctx, items, 3, 0);
    }
    case TY_RECORD: return c->ptr; /* its address, generic: records live in any memory */
    case TY_ELLIPSIS: return c->i8; /* no information: a placeholder, so tuples holding it have a type */
    default: return NULL; /* none, objects, strings: no runtime value */
    }
}

/* Type of elements as stored in memory (bool is a byte). */
LLVMTypeRef mem_type(Ctx *c, Type *t) {
    if (t->kind == TY_RECORD) return LLVMArrayType2(c->i8, (uint64_t)t->size);
    return t->kind == TY_BOOL ? c->i8 : llvm_type(c, t);
}

static LLVMTypeRef array_struct(Ctx *c, Type *t) {
    LLVMTypeRef dims = LLVMArrayType2(c->i64, (uint64_t)t->ndim);
    LLVMTypeRef f[3] = {LLVMPointerTypeInContext(c->llctx, llvm_as(c, t->space)), dims, dims};
    return LLVMStructTypeInContext(c->llctx, f, 3, 0);
}

LLVMValueRef ci64(Ctx *c, int64_t v) { return LLVMConstInt(c->i64, (unsigned long long)v, 1); }

/* ---- conversions ---- */

LLVMValueRef to_bool(Ctx *c, LLVMValueRef v, Type *from) {
    if (from->kind == TY_BOOL) return v;
    if (is_fp8(from)) /* -0.0 (0x80) is false */
        return LLVMBuildICmp(c->b, LLVMIntNE, LLVMBuildAnd(c->b, v, LLVMConstInt(c->i8, 0x7F, 0), ""),
                             LLVMConstInt(c->i8, 0, 0), "");
    if (is_complex(from)) {
        Type *pt = complex_part(from);
        return LLVMBuildOr(c->b, to_bool(c, extract_value(c, v, 0, ""), pt),
                           to_bool(c, extract_value(c, v, 1, ""), pt), "");
    }
    if (is_float(from)) return LLVMBuildFCmp(c->b, LLVMRealUNE, v, LLVMConstReal(llvm_type(c, from), 0.0), "");
    return LLVMBuildICmp(c->b, LLVMIntNE, v, LLVMConstInt(llvm_type(c, from), 0, 0), "");
}

LLVMValueRef call_intrinsic(Ctx *c, const char *name, LLVMTypeRef *over, int nover, LLVMValueRef *args, int nargs) {
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(c->mod, id, over, (size_t)nover);
    LLVMTypeRef fty = LLVMIntrinsicGetType(c->llctx, id, over, (size_t)nover);
    return LLVMBuildCall2(c->b, fty, fn, args, (unsigned)nargs, "");
}

LLVMValueRef convert(Ctx *c, LLVMValueRef v, Type *from, Type *to) {
    if (from->kind == TY_TUPLE && to->kind == TY_TUPLE && from->n == to->n && !type_eq(from, to)) {
        /* a variable unified wider than a value stored in it: t = (i32, i32), later (i64, i64) */
        LLVMValueRef t = LLVMGetUndef(llvm_type(c, to));
        for (int i = 0; i < to->n; i++)
            t = LLVMBuildInsertValue(
                    c->b, t, convert(c, extract_value(c, v, (unsigned)i, ""), from->items[i], to->items[i]),
                    (unsigned)i, "");
        return t;
    }
    if (!type_eq(from, to) && (is_fp8(from) || is_fp8(to)) && (is_number(from) || is_fp8(from)) &&
        (is_number(to) || is_fp8(to)))
        return fp8_convert(c, v, from, to);
    if (type_eq(from, to) || !is_number(from) || !is_number(to)) return v;
    if (is_complex(to)) {
        Type *pt = complex_part(to);
        if (!is_complex(from)) return complex_make(c, to, convert(c, v, from, pt), NULL);
        Type *fpt = complex_part(from);
        return complex_make(c, to, convert(c, extract_value(c, v, 0, ""), fpt, pt),
                            convert(c, extract_value(c, v, 1, ""), fpt, pt));
    }
    if (is_complex(from)) {
        if (to->kind == TY_BOOL) return to_bool(c, v, from);
        return convert(c, extract_value(c, v, 0, ""), complex_part(from), to); /* typing refuses most */
    }
    LLVMTypeRef tt = llvm_type(c, to);
    if (to->kind == TY_BOOL) return to_bool(c, v, from);
    if (from->kind == TY_BOOL) return is_float(to) ? LLVMBuildUIToFP(c->b, v, tt, "") : LLVMBuildZExt(c->b, v, tt, "");
    if (is_int(from) && is_int(to)) {
        int fb = type_bits(from), tb = type_bits(to);
        if (fb == tb) return v;
        if (fb > tb) return LLVMBuildTrunc(c->b, v, tt, "");
        return is_signed(from) ? LLVMBuildSExt(c->b, v, tt, "") : LLVMBuildZExt(c->b, v, tt, "");
    }
    if (is_int(from)) return is_signed(from) ? LLVMBuildSIToFP(c->b, v, tt, "") : LLVMBuildUIToFP(c->b, v, tt, "");
    if (is_int(to)) {
        /* saturating, like PTX's cvt.rzi: never poison */
        LLVMTypeRef over[2] = {tt, llvm_type(c, from)};
        return call_intrinsic(c, is_signed(to) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", over, 2, &v, 1);
    }
    if (is_half(from) && is_half(to)) /* float16 <-> bfloat16: through float32, which holds either exactly */
        return LLVMBuildFPTrunc(c->b, LLVMBuildFPExt(c->b, v, c->f32, ""), tt, "");
    if (from->kind == TY_FLOAT64 && to->kind == TY_FLOAT16 && c->target->half_via_float)
        return LLVMBuildFPTrunc(c->b, f64_to_f32_odd(c->b, v), tt, "");
    return type_bits(from) > type_bits(to) ? LLVMBuildFPTrunc(c->b, v, tt, "") : LLVMBuildFPExt(c->b, v, tt, "");
}

LLVMValueRef val_as(Ctx *c, Instr *v, Type *to) { return convert(c, val(c, v), v->type, to); }

static LLVMValueRef const_value(Ctx *c, Instr *k) {
    switch (k->ckind) {
    case CK_INT: return LLVMConstInt(c->i64, (unsigned long long)k->ival, 1);
    case CK_FLOAT: return LLVMConstReal(c->f64, k->fval);
    case CK_BOOL: return LLVMConstInt(c->i1, (unsigned long long)k->ival, 0);
    case CK_ELLIPSIS: return LLVMGetUndef(c->i8);
    case CK_COMPLEX: {
        LLVMValueRef parts[2] = {LLVMConstReal(c->f64, k->fval), LLVMConstReal(c->f64, k->fimag)};
        return LLVMConstStructInContext(c->llctx, parts, 2, 0);
    }
    case CK_TUPLE: {
        LLVMValueRef *items = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(k->nargs ? k->nargs : 1));
        if (!items) return NULL;
        for (int i = 0; i < k->nargs; i++) {
            items[i] = const_value(c, k->args[i]);
            if (!items[i]) items[i] = LLVMGetUndef(c->i8);
        }
        return LLVMConstStructInContext(c->llctx, items, (unsigned)k->nargs, 0);
    }
    default: return NULL;
    }
}

LLVMValueRef val(Ctx *c, Instr *v) {
    if (v->op == IR_CONST) {
        if (!v->llv) v->llv = const_value(c, v);
        return v->llv;
    }
    return v->llv;
}

/* ---- fast-math ---- */

LLVMValueRef fp(Ctx *c, LLVMValueRef v) {
    /* bfloat16: none, each operation rounded as written on both targets (bf16.c) */
    if (LLVMIsAInstruction(v) && LLVMCanValueUseFastMathFlags(v) && LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMBFloatTypeKind)
        LLVMSetFastMathFlags(v, c->opt.fastmath ? LLVMFastMathAll
                                : c->opt.noopt  ? LLVMFastMathNone
                                                : LLVMFastMathAllowContract);
    return v;
}

/* ---- math calls ---- */

LLVMValueRef fcall1(Ctx *c, const char *name, LLVMValueRef x) {
    LLVMTypeRef t = LLVMTypeOf(x);
    return fp(c, call_intrinsic(c, name, &t, 1, &x, 1));
}

LLVMValueRef fcall2(Ctx *c, const char *name, LLVMValueRef x, LLVMValueRef y) {
    LLVMTypeRef t = LLVMTypeOf(x);
    LLVMValueRef a[2] = {x, y};
    return fp(c, call_intrinsic(c, name, &t, 1, a, 2));
}

LLVMValueRef math_call(Ctx *c, const char *name, Type *t, LLVMValueRef *args, int nargs) {
    if (is_half(t)) {
        /* no libm has float16 or bfloat16 functions: float32's, rounded once to float16 (NumPy's way) */
        LLVMValueRef wide[2];
        for (int i = 0; i < nargs && i < 2; i++) wide[i] = convert(c, args[i], t, &ty_float32);
        LLVMValueRef r = math_call(c, name, &ty_float32, wide, nargs);
        return r ? convert(c, r, &ty_float32, t) : NULL;
    }
    char fname[64];
    snprintf(fname, sizeof fname, "%s%s", name, t->kind == TY_FLOAT32 ? "f" : "");
    LLVMTypeRef ft = llvm_type(c, t);
    LLVMTypeRef params[2] = {ft, ft};
    LLVMTypeRef fnty = LLVMFunctionType(ft, params, (unsigned)nargs, 0);
    LLVMValueRef fn = c->target->math_fn(c, fname, fnty);
    if (!fn) return NULL;
    return fp(c, LLVMBuildCall2(c->b, fnty, fn, args, (unsigned)nargs, ""));
}

/* ---- arrays ---- */

/* An index item v of type *it: a 0-d integer array indexes as its element
 * (typeinfer.c allows it), which is loaded here; *it becomes its type. */
LLVMValueRef index_scalar(Ctx *c, LLVMValueRef v, Type **it) {
    if ((*it)->kind != TY_ARRAY) return v;
    Type *et = (*it)->elem;
    *it = et;
    return load_elem(c, et, extract_value(c, v, 0, ""));
}

/* Index v of axis k of array value a, a negative one counted from the end. */
static LLVMValueRef wrap_index(Ctx *c, LLVMValueRef a, int k, LLVMValueRef v) {
    LLVMValueRef dim = extract_value(c, extract_value(c, a, 1, ""), (unsigned)k, "");
    LLVMValueRef neg = LLVMBuildICmp(c->b, LLVMIntSLT, v, ci64(c, 0), "");
    return LLVMBuildSelect(c->b, neg, LLVMBuildAdd(c->b, v, dim, ""), v, "");
}

/* Element pointer for a[idx...]; negative indices count from the end. A raw
 * pointer's p[i] is C's: i elements on from p, unchecked (p[-1] is the one before). */
LLVMValueRef elem_ptr(Ctx *c, Instr *arr, Instr *idx) {
    Type *at = arr->type;
    if (at->kind == TY_CPTR) {
        Type *it = idx->type;
        LLVMValueRef i = convert(c, val(c, idx), it, is_signed(it) || it->kind == TY_BOOL ? &ty_int64 : &ty_uint64);
        return LLVMBuildGEP2(c->b, mem_type(c, at->elem), val(c, arr), &i, 1, "");
    }
    LLVMValueRef a = val(c, arr);
    LLVMValueRef data = extract_value(c, a, 0, "data");
    LLVMValueRef ix[LIMIT_NDIM], given[LIMIT_NDIM];
    int n = at->ndim;
    bool wraps = false; /* some index may be negative */
    for (int k = 0; k < n; k++) {
        Instr *iv = idx->type->kind == TY_TUPLE ? NULL : idx;
        Type *it;
        LLVMValueRef v;
        if (iv) {
            it = iv->type;
            v = val(c, iv);
        } else if (idx->op == IR_CONST || idx->op == IR_TUPLE) {
            iv = idx->args[k];
            it = iv->type;
            v = val(c, iv);
        } else {
            it = idx->type->items[k];
            v = extract_value(c, val(c, idx), (unsigned)k, "");
        }
        v = index_scalar(c, v, &it);
        v = convert(c, v, it, is_signed(it) || it->kind == TY_BOOL ? &ty_int64 : &ty_uint64);
        given[k] = v;
        bool nonneg = !is_signed(it) || (iv && iv->op == IR_CONST && iv->ival >= 0);
        wraps |= !nonneg;
        ix[k] = nonneg ? v : NULL;
    }
    LLVMValueRef ok = NULL;
    if (c->errbuf && c->target->trap && wraps && n == 1) {
        /* checked where a failure ends the launch: the index is tried as it is first
         * (one compare, which IRCE can take out of a loop over threads); only if that
         * fails is a negative one wrapped and checked again. It keeps a grid-stride
         * loop's index, which may wrap (no nsw under the checks), as cheap as it was.
         * (N-D indices keep the select: matmul's tiles came out slower this way.) */
        LLVMValueRef dim = extract_value(c, extract_value(c, a, 1, ""), 0, "");
        LLVMBasicBlockRef from = LLVMGetInsertBlock(c->b);
        LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "wrap");
        LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "index");
        branch_likely(c, LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntULT, given[0], dim, "inbounds"), join, slow));
        LLVMPositionBuilderAtEnd(c->b, slow);
        LLVMValueRef wrapped = wrap_index(c, a, 0, given[0]);
        check_bounds(c, a, &wrapped, given, 1); /* a failure never comes back */
        LLVMBasicBlockRef back = LLVMGetInsertBlock(c->b);
        LLVMBuildBr(c->b, join);
        LLVMPositionBuilderAtEnd(c->b, join);
        ix[0] = LLVMBuildPhi(c->b, c->i64, "");
        LLVMValueRef in[2] = {given[0], wrapped};
        LLVMBasicBlockRef bb[2] = {from, back};
        LLVMAddIncoming(ix[0], in, bb, 2);
    } else {
        for (int k = 0; k < n; k++)
            if (!ix[k]) ix[k] = wrap_index(c, a, k, given[k]);
        if (c->errbuf) ok = check_bounds(c, a, ix, given, n);
    }
    LLVMTypeRef et = mem_type(c, at->elem);
    LLVMValueRef p;
    if (n == 0) {
        p = data; /* a 0-d array's one element */
    } else if (at->layout == 'C') {
        /* row-major: the strides follow from the shape, the last is the item */
        LLVMValueRef lin = ix[0];
        for (int k = 1; k < n; k++) {
            LLVMValueRef dim = extract_value(c, extract_value(c, a, 1, ""), (unsigned)k, "");
            lin = LLVMBuildAdd(c->b, LLVMBuildMul(c->b, lin, dim, ""), ix[k], "");
        }
        p = LLVMBuildInBoundsGEP2(c->b, et, data, &lin, 1, "");
    } else {
        LLVMValueRef off = NULL;
        for (int k = 0; k < n; k++) {
            LLVMValueRef st = extract_value(c, extract_value(c, a, 2, ""), (unsigned)k, "");
            LLVMValueRef term = LLVMBuildMul(c->b, ix[k], st, "");
            off = off ? LLVMBuildAdd(c->b, off, term, "") : term;
        }
        p = LLVMBuildInBoundsGEP2(c->b, c->i8, data, &off, 1, "");
    }
    if (ok) p = LLVMBuildSelect(c->b, ok, p, scratch_ptr(c, llvm_as(c, at->space)), "");
    return p;
}

LLVMValueRef load_elem(Ctx *c, Type *et, LLVMValueRef p) {
    if (et->kind == TY_RECORD) /* a record is its address */
        return LLVMGetPointerAddressSpace(LLVMTypeOf(p)) ? LLVMBuildAddrSpaceCast(c->b, p, c->ptr, "") : p;
    LLVMValueRef v = LLVMBuildLoad2(c->b, mem_type(c, et), p, "");
    LLVMSetAlignment(v, (unsigned)type_align(et));
    if (et->kind == TY_BOOL) v = LLVMBuildICmp(c->b, LLVMIntNE, v, LLVMConstInt(c->i8, 0, 0), "");
    return v;
}

void store_elem(Ctx *c, Type *et, LLVMValueRef p, LLVMValueRef v) {
    if (et->kind == TY_RECORD) {
        record_copy(c, et, p, v);
        return;
    }
    if (et->kind == TY_BOOL) v = LLVMBuildZExt(c->b, v, c->i8, "");
    LLVMValueRef s = LLVMBuildStore(c->b, v, p);
    LLVMSetAlignment(s, (unsigned)type_align(et));
}

/* Build the struct value of an array whose shape is constant. */
LLVMValueRef const_shape_array(Ctx *c, Type *t, LLVMValueRef data, Instr *shape) {
    LLVMValueRef a = LLVMGetUndef(llvm_type(c, t));
    a = LLVMBuildInsertValue(c->b, a, data, 0, "");
    int64_t dims[LIMIT_NDIM];
    if (shape->ckind == CK_TUPLE)
        for (int k = 0; k < t->ndim; k++) dims[k] = shape->args[k]->ival;
    else
        dims[0] = shape->ival;
    int64_t stride = type_bits(t->elem) / 8;
    for (int k = t->ndim - 1; k >= 0; k--) {
        LLVMValueRef sh = extract_value(c, a, 1, "");
        a = LLVMBuildInsertValue(c->b, a, LLVMBuildInsertValue(c->b, sh, ci64(c, dims[k]), (unsigned)k, ""), 1, "");
        LLVMValueRef st = extract_value(c, a, 2, "");
        a = LLVMBuildInsertValue(c->b, a, LLVMBuildInsertValue(c->b, st, ci64(c, stride), (unsigned)k, ""), 2, "");
        stride *= dims[k];
    }
    return a;
}

/* The struct of a C-contiguous array at `data` with these dims (i64). */
LLVMValueRef array_value(Ctx *c, Type *t, LLVMValueRef data, LLVMValueRef *dims) {
    LLVMTypeRef dt = LLVMArrayType2(c->i64, (uint64_t)t->ndim);
    LLVMValueRef shape = LLVMGetUndef(dt), strides = LLVMGetUndef(dt);
    LLVMValueRef stride = ci64(c, type_bits(t->elem) / 8);
    for (int k = t->ndim - 1; k >= 0; k--) {
        shape = LLVMBuildInsertValue(c->b, shape, dims[k], (unsigned)k, "");
        strides = LLVMBuildInsertValue(c->b, strides, stride, (unsigned)k, "");
        stride = LLVMBuildMul(c->b, stride, dims[k], "");
    }
    LLVMValueRef a = LLVMBuildInsertValue(c->b, LLVMGetUndef(llvm_type(c, t)), data, 0, "");
    a = LLVMBuildInsertValue(c->b, a, shape, 1, "");
    return LLVMBuildInsertValue(c->b, a, strides, 2, "");
}

/* ---- values and blocks ---- */

/* Field `idx` of an aggregate: where the aggregate was built here by insertvalue, the value
 * put there (arrays' and tuples' structs are built field by field and read field by field:
 * O3's InstCombine would otherwise fold each pair). */
LLVMValueRef extract_value(Ctx *c, LLVMValueRef agg, unsigned idx, const char *name) {
    while (LLVMIsAInsertValueInst(agg) && LLVMGetNumIndices(agg) == 1) {
        if (LLVMGetIndices(agg)[0] == idx) return LLVMGetOperand(agg, 1);
        agg = LLVMGetOperand(agg, 0);
    }
    return LLVMBuildExtractValue(c->b, agg, idx, name);
}

LLVMValueRef entry_alloca(Ctx *c, LLVMTypeRef t, const char *name) {
    LLVMBasicBlockRef cur = LLVMGetInsertBlock(c->b);
    /* positioning before an instruction takes its debug location: the current one is kept */
    LLVMMetadataRef loc = LLVMGetCurrentDebugLocation2(c->b);
    LLVMValueRef first = LLVMGetFirstInstruction(c->entry);
    if (first)
        LLVMPositionBuilderBefore(c->b, first);
    else
        LLVMPositionBuilderAtEnd(c->b, c->entry);
    LLVMValueRef a = LLVMBuildAlloca(c->b, t, name);
    LLVMPositionBuilderAtEnd(c->b, cur);
    LLVMSetCurrentDebugLocation2(c->b, loc);
    return a;
}

LLVMBasicBlockRef new_block(Ctx *c, const char *name) {
    return LLVMAppendBasicBlockInContext(c->llctx, LLVMGetBasicBlockParent(LLVMGetInsertBlock(c->b)), name);
}

/* How many values a range {start, stop, step} gives (an i64). */
LLVMValueRef range_len(Ctx *c, LLVMValueRef rg) {
    LLVMValueRef start = extract_value(c, rg, 0, "start");
    LLVMValueRef stop = extract_value(c, rg, 1, "stop");
    LLVMValueRef step = extract_value(c, rg, 2, "step");
    LLVMValueRef zero = ci64(c, 0), one = ci64(c, 1);
    LLVMValueRef up = LLVMBuildICmp(c->b, LLVMIntSGT, step, zero, "");
    LLVMValueRef down = LLVMBuildICmp(c->b, LLVMIntSLT, step, zero, "");
    /* unsigned distances: stop - start never overflows as an unsigned number */
    LLVMValueRef span =
            LLVMBuildSelect(c->b, up, LLVMBuildSub(c->b, stop, start, ""), LLVMBuildSub(c->b, start, stop, ""), "");
    LLVMValueRef mag = LLVMBuildSelect(c->b, up, step, LLVMBuildNeg(c->b, step, ""), "");
    LLVMValueRef nonempty =
            LLVMBuildSelect(c->b, up, LLVMBuildICmp(c->b, LLVMIntSLT, start, stop, ""),
                            LLVMBuildAnd(c->b, down, LLVMBuildICmp(c->b, LLVMIntSGT, start, stop, ""), ""), "");
    LLVMValueRef safe = LLVMBuildSelect(c->b, nonempty, mag, one, "");
    LLVMValueRef n = LLVMBuildAdd(c->b, LLVMBuildUDiv(c->b, LLVMBuildSub(c->b, span, one, ""), safe, ""), one, "");
    return LLVMBuildSelect(c->b, nonempty, n, zero, "n");
}

LLVMValueRef complex_make(Ctx *c, Type *ct, LLVMValueRef re, LLVMValueRef im) {
    if (!im) im = LLVMConstReal(llvm_type(c, complex_part(ct)), 0.0);
    LLVMValueRef z = LLVMBuildInsertValue(c->b, LLVMGetUndef(llvm_type(c, ct)), re, 0, "");
    return LLVMBuildInsertValue(c->b, z, im, 1, "");
}

/* A record's bytes copied over another's (a[i] = r, a nested record field). */
void record_copy(Ctx *c, Type *rec, LLVMValueRef dst, LLVMValueRef src) {
    LLVMBuildMemCpy(c->b, dst, (unsigned)rec->align, src, (unsigned)rec->align, ci64(c, rec->size));
}
