/* views.c: slices and array views in lowering: slice values, a[idx] with
 * slices, ellipses and integers as a view (its data, shape and strides),
 * a.T / a.real / a.imag, a.reshape(shape), a.view(dtype), and stores
 * through a view (a[idx] = v). */
#include <string.h>

#include "gj.h"

/* slice(start, stop, step) with omitted parts resolved now that the step's
 * sign is known: an omitted start or stop becomes an int64 extreme, which
 * clamping (slice_axis) turns into the end NumPy would pick. */
LLVMValueRef lower_slice(Ctx *c, Instr *in) {
    LLVMValueRef part[3];
    for (int i = 0; i < 3; i++) {
        part[i] = in->args[i]->type->kind == TY_NONE ? NULL : val_as(c, in->args[i], &ty_int64);
        if (in->args[i]->type->kind == TY_UINT64) /* past INT64_MAX: as far, for clamping */
            part[i] = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, part[i], ci64(c, 0), ""),
                                      ci64(c, INT64_MAX), part[i], "");
    }
    LLVMValueRef step = part[2] ? part[2] : ci64(c, 1);
    LLVMValueRef neg = LLVMBuildICmp(c->b, LLVMIntSLT, step, ci64(c, 0), "");
    LLVMValueRef start = part[0] ? part[0] : LLVMBuildSelect(c->b, neg, ci64(c, INT64_MAX), ci64(c, 0), "");
    LLVMValueRef stop = part[1] ? part[1] : LLVMBuildSelect(c->b, neg, ci64(c, INT64_MIN), ci64(c, INT64_MAX), "");
    LLVMValueRef s = LLVMGetUndef(llvm_type(c, &ty_slice2));
    s = LLVMBuildInsertValue(c->b, s, start, 0, "");
    s = LLVMBuildInsertValue(c->b, s, stop, 1, "");
    return LLVMBuildInsertValue(c->b, s, step, 2, "");
}

/* One end of a slice clamped to an axis of length n, as CPython's
 * PySlice_AdjustIndices: negatives count from the end, then [lo, hi]. */
static LLVMValueRef slice_clamp(Ctx *c, LLVMValueRef x, LLVMValueRef n, LLVMValueRef neg) {
    LLVMValueRef zero = ci64(c, 0);
    LLVMValueRef lo = LLVMBuildSelect(c->b, neg, ci64(c, -1), zero, "");
    LLVMValueRef hi = LLVMBuildSelect(c->b, neg, LLVMBuildSub(c->b, n, ci64(c, 1), ""), n, "");
    LLVMValueRef wrapped = LLVMBuildAdd(c->b, x, n, ""); /* x < 0 here: no overflow */
    LLVMValueRef below = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, wrapped, zero, ""), lo, wrapped, "");
    LLVMValueRef above = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSGE, x, n, ""), hi, x, "");
    return LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, x, zero, ""), below, above, "");
}

/* A slice `sl` of an axis of length n: its first index into *start, its
 * step into *step (1 for a zero step, reported apart) and its length. */
static LLVMValueRef slice_axis(Ctx *c, LLVMValueRef sl, LLVMValueRef n, LLVMValueRef *start, LLVMValueRef *step,
                               LLVMValueRef *zero_step) {
    LLVMValueRef zero = ci64(c, 0), one = ci64(c, 1);
    LLVMValueRef st = LLVMBuildExtractValue(c->b, sl, 2, "step");
    *zero_step = LLVMBuildICmp(c->b, LLVMIntEQ, st, zero, "");
    st = LLVMBuildSelect(c->b, *zero_step, one, st, "");
    LLVMValueRef neg = LLVMBuildICmp(c->b, LLVMIntSLT, st, zero, "");
    LLVMValueRef b = slice_clamp(c, LLVMBuildExtractValue(c->b, sl, 0, "start"), n, neg);
    LLVMValueRef e = slice_clamp(c, LLVMBuildExtractValue(c->b, sl, 1, "stop"), n, neg);
    /* both ends lie in [-1, n]; the step's magnitude as unsigned, so INT64_MIN works */
    LLVMValueRef span = LLVMBuildSelect(c->b, neg, LLVMBuildSub(c->b, b, e, ""), LLVMBuildSub(c->b, e, b, ""), "");
    LLVMValueRef mag = LLVMBuildSelect(c->b, neg, LLVMBuildNeg(c->b, st, ""), st, "");
    LLVMValueRef len = LLVMBuildAdd(c->b, LLVMBuildUDiv(c->b, LLVMBuildSub(c->b, span, one, ""), mag, ""), one, "");
    LLVMValueRef empty = LLVMBuildOr(c->b, LLVMBuildICmp(c->b, LLVMIntSLE, span, zero, ""), *zero_step, "");
    *start = b;
    *step = st;
    return LLVMBuildSelect(c->b, empty, zero, len, "len");
}

static Type *index_type(Instr *idx, int k) { return idx->type->kind == TY_TUPLE ? idx->type->items[k] : idx->type; }

/* Index k of the index value idx: its LLVM value, its type, and the IR
 * value when there is one (a constant can then be seen as such). */
static LLVMValueRef index_item(Ctx *c, Instr *idx, int k, Type **t, Instr **iv) {
    if (idx->type->kind != TY_TUPLE) {
        *t = idx->type, *iv = idx;
        return val(c, idx);
    }
    if (idx->op == IR_CONST || idx->op == IR_TUPLE) {
        *iv = idx->args[k], *t = idx->args[k]->type;
        return val(c, *iv);
    }
    *iv = NULL, *t = idx->type->items[k];
    return LLVMBuildExtractValue(c->b, val(c, idx), (unsigned)k, "");
}

/* The view value (type vt) of array `a` (type at) indexed by idx: integers
 * drop their axis, slices narrow theirs, missing trailing indices keep
 * theirs. The view's data points at its first element; its strides, in
 * bytes, are the array's times the slices' steps. */
LLVMValueRef make_view(Ctx *c, Type *at, LLVMValueRef a, Instr *idx, Type *vt) {
    LLVMValueRef shape = LLVMBuildExtractValue(c->b, a, 1, ""), strides = LLVMBuildExtractValue(c->b, a, 2, "");
    int n = idx->type->kind == TY_TUPLE ? idx->type->n : 1, m = 0;
    LLVMValueRef off = ci64(c, 0), ix[32], given[32], dims[32], nsh[32], nst[32], step0 = NULL;
    bool checks = c->errbuf != NULL, any_int = false; /* where elements are checked */
    /* the index item of each axis, -1 for one kept whole (after the items,
     * and those an ellipsis stands for) */
    int item_of[32], nell = 0, k = 0;
    for (int j = 0; j < n; j++) nell += index_type(idx, j)->kind == TY_ELLIPSIS;
    for (int j = 0; j < n; j++)
        if (index_type(idx, j)->kind == TY_ELLIPSIS)
            for (int s = 0; s < at->ndim - (n - nell); s++) item_of[k++] = -1;
        else
            item_of[k++] = j;
    while (k < at->ndim) item_of[k++] = -1;
    for (k = 0; k < at->ndim; k++) {
        LLVMValueRef dim = LLVMBuildExtractValue(c->b, shape, (unsigned)k, "");
        LLVMValueRef st = LLVMBuildExtractValue(c->b, strides, (unsigned)k, "");
        ix[k] = given[k] = ci64(c, 0);
        dims[k] = ci64(c, 1); /* axes kept whole always pass the check */
        if (item_of[k] < 0) {
            nsh[m] = dim, nst[m++] = st;
            continue;
        }
        Type *it;
        Instr *iv;
        LLVMValueRef v = index_item(c, idx, item_of[k], &it, &iv);
        if (it->kind == TY_SLICE) {
            LLVMValueRef first, step, zero;
            nsh[m] = slice_axis(c, v, dim, &first, &step, &zero);
            nst[m++] = LLVMBuildMul(c->b, st, step, "");
            off = LLVMBuildAdd(c->b, off, LLVMBuildMul(c->b, first, st, ""), "");
            step0 = step0 ? LLVMBuildOr(c->b, step0, zero, "") : zero;
            continue;
        }
        /* an integer: as elem_ptr takes it */
        v = index_scalar(c, v, &it);
        v = convert(c, v, it, is_signed(it) || it->kind == TY_BOOL ? &ty_int64 : &ty_uint64);
        given[k] = v;
        if (is_signed(it) && !(iv && iv->op == IR_CONST && iv->ival >= 0)) {
            LLVMValueRef neg = LLVMBuildICmp(c->b, LLVMIntSLT, v, ci64(c, 0), "");
            v = LLVMBuildSelect(c->b, neg, LLVMBuildAdd(c->b, v, dim, ""), v, "");
        }
        ix[k] = v, dims[k] = dim, any_int = true;
        off = LLVMBuildAdd(c->b, off, LLVMBuildMul(c->b, v, st, ""), "");
    }
    if (checks && any_int) {
        /* check_bounds reads the shape from field 1: give it the integer axes'
         * lengths (1 for the others, indexed at 0). A bad index stops the
         * launch or, where the target cannot, empties the view, so no access
         * through it lands anywhere. */
        LLVMTypeRef f[2] = {c->i8, LLVMArrayType2(c->i64, (uint64_t)at->ndim)};
        LLVMValueRef sh = LLVMGetUndef(f[1]);
        for (int k = 0; k < at->ndim; k++) sh = LLVMBuildInsertValue(c->b, sh, dims[k], (unsigned)k, "");
        LLVMValueRef fake =
                LLVMBuildInsertValue(c->b, LLVMGetUndef(LLVMStructTypeInContext(c->llctx, f, 2, 0)), sh, 1, "");
        LLVMValueRef ok = check_bounds(c, fake, ix, given, at->ndim);
        if (ok) /* NULL: the target stopped the launch at a bad index */
            for (int j = 0; j < m; j++) nsh[j] = LLVMBuildSelect(c->b, ok, nsh[j], ci64(c, 0), "");
    }
    if (checks && step0) check_step(c, step0, GJ_STEP0_SLICE);
    LLVMValueRef data = LLVMBuildExtractValue(c->b, a, 0, "");
    data = LLVMBuildGEP2(c->b, c->i8, data, &off, 1, "view");
    LLVMValueRef r = LLVMBuildInsertValue(c->b, LLVMGetUndef(llvm_type(c, vt)), data, 0, "");
    LLVMValueRef vs = LLVMGetUndef(LLVMArrayType2(c->i64, (uint64_t)m)), vd = vs;
    for (int j = 0; j < m; j++) {
        vs = LLVMBuildInsertValue(c->b, vs, nsh[j], (unsigned)j, "");
        vd = LLVMBuildInsertValue(c->b, vd, nst[j], (unsigned)j, "");
    }
    r = LLVMBuildInsertValue(c->b, r, vs, 1, "");
    return LLVMBuildInsertValue(c->b, r, vd, 2, "");
}

/* a.T (axes reversed), a.real / a.imag of a complex array (the parts in
 * place: same shape and strides, the data moved by a part for .imag), a.x
 * of a record array (its field x in place, as a.imag). */
LLVMValueRef view_attr(Ctx *c, Type *at, LLVMValueRef a, const char *name) {
    if (!strcmp(name, "T")) {
        LLVMValueRef r = a;
        for (unsigned f = 1; f <= 2; f++) {
            LLVMValueRef src = LLVMBuildExtractValue(c->b, a, f, ""), dst = src;
            for (int k = 0; k < at->ndim; k++)
                dst = LLVMBuildInsertValue(
                        c->b, dst, LLVMBuildExtractValue(c->b, src, (unsigned)(at->ndim - 1 - k), ""), (unsigned)k, "");
            r = LLVMBuildInsertValue(c->b, r, dst, f, "");
        }
        return r;
    }
    if (at->elem->kind == TY_RECORD) { /* a field of each record: the data moved to the field */
        LLVMValueRef off = ci64(c, record_field(at->elem, name)->offset);
        LLVMValueRef data = LLVMBuildGEP2(c->b, c->i8, LLVMBuildExtractValue(c->b, a, 0, ""), &off, 1, name);
        return LLVMBuildInsertValue(c->b, a, data, 0, "");
    }
    if (!is_complex(at->elem) || !strcmp(name, "real")) return a;
    LLVMValueRef half = ci64(c, type_bits(at->elem) / 16);
    LLVMValueRef data = LLVMBuildGEP2(c->b, c->i8, LLVMBuildExtractValue(c->b, a, 0, ""), &half, 1, "imag");
    return LLVMBuildInsertValue(c->b, a, data, 0, "");
}

/* a[idx] = v where a[idx] is a view: v (a number) into each element, or
 * v's elements (an array of the view's rank) into the matching ones. Loops
 * nested over the view's axes, outermost first. */
void store_view(Ctx *c, Type *vt, LLVMValueRef view, Instr *src) {
    LLVMValueRef shape = LLVMBuildExtractValue(c->b, view, 1, ""), strides = LLVMBuildExtractValue(c->b, view, 2, "");
    bool from_array = src->type->kind == TY_ARRAY;
    Type *st = from_array ? src->type : NULL;
    LLVMValueRef sv = val(c, src), scalar = from_array ? NULL : convert(c, sv, src->type, vt->elem);
    LLVMValueRef sshape = from_array ? LLVMBuildExtractValue(c->b, sv, 1, "") : NULL;
    LLVMValueRef sstrides = from_array ? LLVMBuildExtractValue(c->b, sv, 2, "") : NULL;
    LLVMValueRef ivar[LIMIT_NDIM], sstep[LIMIT_NDIM] = {0}, tn[LIMIT_NDIM];
    for (int k = 0; k < vt->ndim; k++) {
        /* the trip count: the view's length. An axis of b of length 1 repeats its
         * element (its stride taken as 0), as numba broadcasts; any other length
         * must match, which the checks report; without them the shorter is copied,
         * so no access lands outside either array. */
        LLVMValueRef n = tn[k] = LLVMBuildExtractValue(c->b, shape, (unsigned)k, "");
        if (!from_array) continue;
        LLVMValueRef sn = LLVMBuildExtractValue(c->b, sshape, (unsigned)k, "");
        LLVMValueRef one = LLVMBuildICmp(c->b, LLVMIntEQ, sn, ci64(c, 1), "bcast");
        if (c->errbuf)
            check_shape(c, LLVMBuildAnd(c->b, LLVMBuildNot(c->b, one, ""), LLVMBuildICmp(c->b, LLVMIntNE, sn, n, ""), ""),
                        GJ_SHAPE_ASSIGN, k, vt->ndim, n, sn);
        LLVMValueRef shorter = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, sn, n, ""), sn, n, "");
        tn[k] = LLVMBuildSelect(c->b, one, n, shorter, "");
        sstep[k] = LLVMBuildSelect(c->b, one, ci64(c, 0), LLVMBuildExtractValue(c->b, sstrides, (unsigned)k, ""), "");
    }
    LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "fill.done");
    LLVMBasicBlockRef heads[LIMIT_NDIM], latches[LIMIT_NDIM];
    for (int k = 0; k < vt->ndim; k++) {
        LLVMValueRef n = tn[k];
        ivar[k] = entry_alloca(c, c->i64, "fill.i");
        LLVMBuildStore(c->b, ci64(c, 0), ivar[k]);
        heads[k] = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "fill.head");
        LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "fill.body");
        latches[k] = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "fill.next");
        LLVMBuildBr(c->b, heads[k]);
        LLVMPositionBuilderAtEnd(c->b, heads[k]);
        LLVMValueRef i = LLVMBuildLoad2(c->b, c->i64, ivar[k], "");
        LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, i, n, ""), body, k ? latches[k - 1] : exit);
        LLVMPositionBuilderAtEnd(c->b, body);
    }
    LLVMValueRef doff = ci64(c, 0), soff = ci64(c, 0);
    for (int k = 0; k < vt->ndim; k++) {
        LLVMValueRef i = LLVMBuildLoad2(c->b, c->i64, ivar[k], "");
        doff = LLVMBuildAdd(c->b, doff,
                            LLVMBuildMul(c->b, i, LLVMBuildExtractValue(c->b, strides, (unsigned)k, ""), ""), "");
        if (from_array)
            soff = LLVMBuildAdd(c->b, soff, LLVMBuildMul(c->b, i, sstep[k], ""), "");
    }
    LLVMValueRef v = scalar;
    if (from_array) {
        LLVMValueRef sp = LLVMBuildGEP2(c->b, c->i8, LLVMBuildExtractValue(c->b, sv, 0, ""), &soff, 1, "");
        v = convert(c, load_elem(c, st->elem, sp), st->elem, vt->elem);
    }
    store_elem(c, vt->elem, LLVMBuildGEP2(c->b, c->i8, LLVMBuildExtractValue(c->b, view, 0, ""), &doff, 1, ""), v);
    LLVMBuildBr(c->b, latches[vt->ndim - 1]);
    for (int k = vt->ndim - 1; k >= 0; k--) {
        LLVMPositionBuilderAtEnd(c->b, latches[k]);
        LLVMValueRef i = LLVMBuildLoad2(c->b, c->i64, ivar[k], "");
        LLVMBuildStore(c->b, LLVMBuildAdd(c->b, i, ci64(c, 1), ""), ivar[k]);
        LLVMBuildBr(c->b, heads[k]);
    }
    LLVMPositionBuilderAtEnd(c->b, exit);
}

/* ---- a.reshape(shape) ---- */

/* a.reshape(d0, d1, ...) or a.reshape((d0, d1, ...)): a C-contiguous view of
 * the same elements with the new shape's rank (one axis may be -1). */
Type *type_reshape(Ctx *c, Instr *in) {
    Type *at = in->args[0]->args[0]->type;
    int nargs = in->nargs - 1, ndim = nargs;
    Type **dims = NULL;
    if (nargs == 1 && in->args[1]->type->kind == TY_TUPLE) {
        ndim = in->args[1]->type->n;
        dims = in->args[1]->type->items;
    }
    if (ndim < 1) TERR("reshape() takes the new shape: ints or a tuple of ints (a 0-d result is not supported)");
    if (ndim > LIMIT_NDIM) TERR("too many dimensions in reshape() (limit is %d)", LIMIT_NDIM);
    for (int k = 0; k < ndim; k++) {
        Type *t = dims ? dims[k] : in->args[1 + k]->type;
        if (!is_index(t) || t->kind == TY_BOOL) TERR("reshape() takes ints or a tuple of ints, not %s", type_name(c, t));
    }
    return type_array(c, at->elem, ndim, 'C', at->space);
}

LLVMValueRef lower_reshape(Ctx *c, Instr *in, Type *rt) {
    Instr *self = in->args[0]->args[0];
    Type *at = self->type;
    LLVMValueRef a = val(c, self), dims[LIMIT_NDIM];
    LLVMValueRef shape = LLVMBuildExtractValue(c->b, a, 1, ""), strides = LLVMBuildExtractValue(c->b, a, 2, "");
    if (in->nargs == 2 && in->args[1]->type->kind == TY_TUPLE) {
        LLVMValueRef t = val(c, in->args[1]);
        for (int k = 0; k < rt->ndim; k++)
            dims[k] = convert(c, LLVMBuildExtractValue(c->b, t, (unsigned)k, ""), in->args[1]->type->items[k], &ty_int64);
    } else {
        for (int k = 0; k < rt->ndim; k++) dims[k] = val_as(c, in->args[1 + k], &ty_int64);
    }
    /* the old size, and whether the elements lie in C order (axes of length 1 have any stride) */
    LLVMValueRef size = ci64(c, 1), expect = ci64(c, type_bits(at->elem) / 8), contig = LLVMConstInt(c->i1, 1, 0);
    for (int k = at->ndim - 1; k >= 0; k--) {
        LLVMValueRef n = LLVMBuildExtractValue(c->b, shape, (unsigned)k, "");
        LLVMValueRef st = LLVMBuildExtractValue(c->b, strides, (unsigned)k, "");
        LLVMValueRef ok = LLVMBuildOr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, n, ci64(c, 1), ""),
                                      LLVMBuildICmp(c->b, LLVMIntEQ, st, expect, ""), "");
        contig = LLVMBuildAnd(c->b, contig, ok, "");
        expect = LLVMBuildMul(c->b, expect, n, "");
        size = LLVMBuildMul(c->b, size, n, "");
    }
    /* one -1 takes what the others leave */
    LLVMValueRef known = ci64(c, 1), nunknown = ci64(c, 0), bad = LLVMConstInt(c->i1, 0, 0);
    for (int k = 0; k < rt->ndim; k++) {
        LLVMValueRef unk = LLVMBuildICmp(c->b, LLVMIntEQ, dims[k], ci64(c, -1), "");
        nunknown = LLVMBuildAdd(c->b, nunknown, LLVMBuildZExt(c->b, unk, c->i64, ""), "");
        bad = LLVMBuildOr(c->b, bad, LLVMBuildICmp(c->b, LLVMIntSLT, dims[k], ci64(c, -1), ""), "");
        known = LLVMBuildMul(c->b, known, LLVMBuildSelect(c->b, unk, ci64(c, 1), dims[k], ""), "");
    }
    LLVMValueRef known0 = LLVMBuildICmp(c->b, LLVMIntEQ, known, ci64(c, 0), "");
    LLVMValueRef fill = LLVMBuildSDiv(c->b, size, LLVMBuildSelect(c->b, known0, ci64(c, 1), known, ""), "");
    bad = LLVMBuildOr(c->b, bad, LLVMBuildICmp(c->b, LLVMIntUGT, nunknown, ci64(c, 1), ""), "");
    LLVMValueRef total = known;
    for (int k = 0; k < rt->ndim; k++) {
        LLVMValueRef unk = LLVMBuildICmp(c->b, LLVMIntEQ, dims[k], ci64(c, -1), "");
        dims[k] = LLVMBuildSelect(c->b, unk, fill, dims[k], "");
    }
    total = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, nunknown, ci64(c, 1), ""),
                            LLVMBuildMul(c->b, known, fill, ""), known, "");
    bad = LLVMBuildOr(c->b, bad, LLVMBuildICmp(c->b, LLVMIntNE, total, size, ""), "");
    if (check_or_raise(c, LLVMBuildNot(c->b, bad, ""), PyExc_ValueError, "total size of new array must be unchanged") < 0 ||
        check_or_raise(c, contig, PyExc_NotImplementedError, "incompatible shape for array") < 0)
        return NULL;
    return array_value(c, rt, LLVMBuildExtractValue(c->b, a, 0, ""), dims);
}

/* ---- a.view(dtype) ---- */

/* The same bytes read as another element type: a C array stays C; a view of
 * a different itemsize is 'A' (its last axis rescaled, as NumPy's). */
Type *type_view_dtype(Ctx *c, Instr *in, Type *elem) {
    Type *at = in->args[0]->args[0]->type;
    bool same = type_bits(elem) == type_bits(at->elem);
    return type_array(c, elem, at->ndim, same || at->layout == 'C' ? at->layout : 'A', at->space);
}

LLVMValueRef lower_view_dtype(Ctx *c, Instr *in, Type *rt) {
    Instr *self = in->args[0]->args[0];
    Type *at = self->type;
    LLVMValueRef a = val(c, self);
    int64_t old = type_bits(at->elem) / 8, nw = type_bits(rt->elem) / 8;
    if (old == nw || at->ndim == 0) return a;
    unsigned last = (unsigned)(at->ndim - 1);
    LLVMValueRef shape = LLVMBuildExtractValue(c->b, a, 1, ""), strides = LLVMBuildExtractValue(c->b, a, 2, "");
    LLVMValueRef n = LLVMBuildExtractValue(c->b, shape, last, ""), st = LLVMBuildExtractValue(c->b, strides, last, "");
    LLVMValueRef contig = LLVMBuildOr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, st, ci64(c, old), ""),
                                      LLVMBuildICmp(c->b, LLVMIntEQ, n, ci64(c, 1), ""), "");
    LLVMValueRef bytes = LLVMBuildMul(c->b, n, ci64(c, old), "");
    LLVMValueRef fits = LLVMBuildICmp(c->b, LLVMIntEQ, LLVMBuildSRem(c->b, bytes, ci64(c, nw), ""), ci64(c, 0), "");
    if (check_or_raise(c, contig, PyExc_ValueError,
                       "To change to a dtype of a different size, the last axis must be contiguous") < 0 ||
        check_or_raise(c, fits, PyExc_ValueError,
                       nw > old ? "When changing to a larger dtype, its size must be a divisor of the total size in "
                                  "bytes of the last axis of the array."
                                : "When changing to a smaller dtype, its size must be a divisor of the size of "
                                  "original dtype") < 0)
        return NULL;
    shape = LLVMBuildInsertValue(c->b, shape, LLVMBuildSDiv(c->b, bytes, ci64(c, nw), ""), last, "");
    strides = LLVMBuildInsertValue(c->b, strides, ci64(c, nw), last, "");
    a = LLVMBuildInsertValue(c->b, a, shape, 1, "");
    return LLVMBuildInsertValue(c->b, a, strides, 2, "");
}
