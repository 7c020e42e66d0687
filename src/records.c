/* records.c: structured dtypes (numba's Record) in kernels: typing and
 * lowering of a record's fields, read as rec.x or rec['x'] and written as
 * rec.x = v or rec['x'] = v. A record value is a generic pointer to its
 * bytes (in an array, a shared or local array, or a record argument), so a
 * store into a field lands in the array the record came from, as numba's
 * records do. A field is a number, a nested record (a pointer into this
 * one) or a nested array (a C-contiguous array view of its bytes). */
#include <string.h>

#include "gj.h"

/* The field an index names: a string constant, or an integer constant
 * counting the fields from 0 (as NumPy's rec[0]); or a literal argument. */
const char *record_field_name(Ctx *c, Type *rec, Instr *idx) {
    Instr *k = arg_literal(c, idx, LIT_NEED);
    if (k && k->op == IR_CONST && k->ckind == CK_INT) {
        int64_t i = k->ival < 0 ? k->ival + rec->nfields : k->ival;
        return i >= 0 && i < rec->nfields ? rec->fields[i].name : NULL;
    }
    return k && k->op == IR_CONST && k->ckind == CK_STR ? k->name : NULL;
}

/* Bytes a field's loads and stores may assume: its natural alignment where
 * every record of an array keeps it there, else 1. */
static unsigned field_align(const Type *rec, const RecField *f) {
    int a = type_align(f->type);
    return f->offset % a == 0 && rec->size % a == 0 ? (unsigned)a : 1;
}

/* The type a field reads as; NULL (an error set) if the record has none of
 * that name, or if the field sits off its alignment in a packed record (the
 * GPU cannot load it, numba refuses it too). */
Type *type_record_field(Ctx *c, Instr *in, Type *rec, const char *name) {
    if (!name) TERR("a record is indexed by a field name or number (a constant, in range)");
    const RecField *f = record_field(rec, name);
    if (!f) TERR("%s has no field '%s'", type_name(c, rec), name);
    Type *ft = f->type;
    Type *base = ft->kind == TY_ARRAY ? ft->elem : ft;
    if (f->offset % type_align(base))
        TERR("type %s is not aligned (field '%s' at offset %lld of a packed record)", type_name(c, base), name,
             (long long)f->offset);
    if (ft->kind == TY_ARRAY) return type_array(c, ft->elem, ft->ndim, 'C', AS_GENERIC);
    return ft;
}

/* rec[name] = v: a number into a number field (converted as an array store
 * converts), a record of the same type, or an array or a number into a
 * nested array (element by element, a number broadcast). */
Type *type_record_store(Ctx *c, Instr *in, Type *rec, const char *name, Type *v) {
    Type *ft = type_record_field(c, in, rec, name);
    if (!ft) return NULL;
    if (ft->kind == TY_RECORD) {
        if (!type_eq(ft, v)) TERR("cannot store %s into field '%s' of type %s", type_name(c, v), name, type_name(c, ft));
        return &ty_none;
    }
    if (ft->kind == TY_ARRAY) {
        if (v->kind == TY_ARRAY) {
            if (v->ndim != ft->ndim)
                TERR("cannot assign a %d-dimensional array to the %d-dimensional field '%s'", v->ndim, ft->ndim, name);
            if (!is_number(v->elem) || !is_number(ft->elem) || (is_complex(v->elem) && !is_complex(ft->elem)))
                TERR("cannot store %s into field '%s' of type %s", type_name(c, v), name, type_name(c, ft));
            return &ty_none;
        }
        if (!is_number(v) || !is_number(ft->elem) || (is_complex(v) && !is_complex(ft->elem)))
            TERR("cannot store %s into field '%s' of type %s", type_name(c, v), name, type_name(c, ft));
        return &ty_none;
    }
    if (!is_number(v) || (is_complex(v) && !is_complex(ft)))
        TERR("cannot store %s into field '%s' of type %s", type_name(c, v), name, type_name(c, ft));
    return &ty_none;
}

static LLVMValueRef field_ptr(Ctx *c, LLVMValueRef p, const RecField *f) {
    LLVMValueRef off = ci64(c, f->offset);
    return LLVMBuildInBoundsGEP2(c->b, c->i8, p, &off, 1, "");
}

/* The C-contiguous array view of a nested array field at `p`. */
static LLVMValueRef nested_view(Ctx *c, const RecField *f, LLVMValueRef p, Type *vt) {
    Type *ft = f->type;
    LLVMValueRef a = LLVMBuildInsertValue(c->b, LLVMGetUndef(llvm_type(c, vt)), p, 0, "");
    LLVMValueRef shape = LLVMGetUndef(LLVMArrayType2(c->i64, (uint64_t)ft->ndim)), strides = shape;
    int64_t stride = type_size(ft->elem);
    for (int k = ft->ndim - 1; k >= 0; k--) {
        shape = LLVMBuildInsertValue(c->b, shape, ci64(c, ft->shape[k]), (unsigned)k, "");
        strides = LLVMBuildInsertValue(c->b, strides, ci64(c, stride), (unsigned)k, "");
        stride *= ft->shape[k];
    }
    a = LLVMBuildInsertValue(c->b, a, shape, 1, "");
    return LLVMBuildInsertValue(c->b, a, strides, 2, "");
}

/* rec[name], rec.name (`rt` the type it was given) of the record at `p`. */
LLVMValueRef lower_record_get(Ctx *c, Type *rec, LLVMValueRef p, const char *name, Type *rt) {
    const RecField *f = record_field(rec, name);
    if (!f) return internal_error(c, c->cur_loc, "records: no field '%s'", name), NULL;
    LLVMValueRef fp = field_ptr(c, p, f);
    if (f->type->kind == TY_RECORD) return fp;
    if (f->type->kind == TY_ARRAY) return nested_view(c, f, fp, rt);
    LLVMValueRef v = LLVMBuildLoad2(c->b, mem_type(c, f->type), fp, name);
    LLVMSetAlignment(v, field_align(rec, f));
    if (f->type->kind == TY_BOOL) v = LLVMBuildICmp(c->b, LLVMIntNE, v, LLVMConstInt(c->i8, 0, 0), "");
    return v;
}

/* rec[name] = v of the record at `p`. */
int lower_record_set(Ctx *c, Type *rec, LLVMValueRef p, const char *name, Instr *v) {
    const RecField *f = record_field(rec, name);
    if (!f) return internal_error(c, c->cur_loc, "records: no field '%s'", name);
    LLVMValueRef fp = field_ptr(c, p, f);
    Type *ft = f->type;
    if (ft->kind == TY_RECORD) {
        record_copy(c, ft, fp, val(c, v));
    } else if (ft->kind == TY_ARRAY) {
        Type *vt = type_array(c, ft->elem, ft->ndim, 'C', AS_GENERIC);
        if (!vt) return -1;
        store_view(c, vt, nested_view(c, f, fp, vt), v);
    } else {
        LLVMValueRef x = val_as(c, v, ft);
        if (ft->kind == TY_BOOL) x = LLVMBuildZExt(c->b, x, c->i8, "");
        LLVMSetAlignment(LLVMBuildStore(c->b, x, fp), field_align(rec, f));
    }
    return 0;
}
