/* layout.c: the kernel ABI, in one place. A kernel's Python arguments are
 * flattened into parameters (gj_layout): lower.c declares the kernel's LLVM
 * parameters from this list and reassembles the arguments from them,
 * compile.c publishes it as gj_output_params(), and the launcher
 * (runtime/args.c) checks a kernel against it and packs kernelParams by it.
 * A new argument kind is flattened here, in flatten(), and nowhere else. */
#include <stdlib.h>
#include <string.h>

#include "gj.h"

/* Bytes of a scalar dtype; 0 for a code a kernel does not take. */
static int dtype_size(int dt) {
    switch (dt) {
    case GJ_BOOL:
    case GJ_INT8:
    case GJ_UINT8:
    case GJ_FLOAT8_E4M3:
    case GJ_FLOAT8_E5M2: return 1;
    case GJ_INT16:
    case GJ_UINT16:
    case GJ_FLOAT16:
    case GJ_BFLOAT16: return 2;
    case GJ_INT32:
    case GJ_UINT32:
    case GJ_FLOAT32: return 4;
    case GJ_INT64:
    case GJ_UINT64:
    case GJ_FLOAT64:
    case GJ_COMPLEX64: return 8;
    case GJ_COMPLEX128: return 16;
    default: return 0;
    }
}

typedef struct Emit {
    GjParam *out;
    int cap, n;
    int item; /* the part of the argument being flattened (GjParam.item) */
} Emit;

/* Every parameter is aligned as its size: each is its own kernelParams entry. */
static void emit(Emit *e, GjParamRole role, GjDtype dt, int size, int arg, int axis) {
    if (e->out && e->n < e->cap)
        e->out[e->n] = (GjParam){(uint8_t)size, (uint8_t)size, (uint8_t)role, (uint8_t)dt,
                                 (int16_t)arg,  (int16_t)axis, (int16_t)e->item};
    e->n++;
}

/* The most parts (the tuple and its items, nested ones counted) of one
 * argument: GjParam.item is 16 bits. */
#define MAX_ARG_PARTS 30000

/* The parameters of argument `i` (or of a part of it), in order: a tuple's
 * are its items', depth-first, each item numbered by e->item. */
static int flatten(Emit *e, const GjArgInfo *a, int i) {
    if (a->kind == GJ_ARG_TUPLE) {
        for (int k = 0; k < a->nitems; k++) {
            if (++e->item > MAX_ARG_PARTS) return -1;
            if (flatten(e, &a->items[k], i) < 0) return -1;
        }
        return 0;
    }
    int size = a->itemsize && !a->dtype ? a->itemsize : dtype_size(a->dtype);
    if (!size) return -1;
    switch (a->kind) {
    case GJ_ARG_RECORD: /* by address: a record is any size, and the kernel may write it */
        emit(e, GJ_PARAM_DATA, 0, 8, i, 0);
        return 0;
    case GJ_ARG_ARRAY:
        if (a->ndim < 0) return -1;
        emit(e, GJ_PARAM_DATA, 0, 8, i, 0);
        for (int k = 0; k < a->ndim; k++) emit(e, GJ_PARAM_SHAPE, GJ_INT64, 8, i, k);
        for (int k = 0; k < a->ndim; k++) emit(e, GJ_PARAM_STRIDE, GJ_INT64, 8, i, k);
        return 0;
    case GJ_ARG_SCALAR:
        if (!dtype_size(a->dtype)) return -1;
        /* a complex is two parameters, re and im, rather than one 16-byte
         * struct: every parameter stays within an 8-byte slot */
        if (a->dtype == GJ_COMPLEX64 || a->dtype == GJ_COMPLEX128) {
            GjDtype part = a->dtype == GJ_COMPLEX64 ? GJ_FLOAT32 : GJ_FLOAT64;
            emit(e, GJ_PARAM_REAL, part, size / 2, i, 0);
            emit(e, GJ_PARAM_IMAG, part, size / 2, i, 0);
        } else {
            emit(e, GJ_PARAM_VALUE, a->dtype, size, i, 0);
        }
        return 0;
    }
    return -1;
}

int gj_layout(const GjArgInfo *args, int nargs, int debug, GjParam *out, int cap) {
    Emit e = {out, cap, 0, 0};
    for (int i = 0; i < nargs; i++) {
        e.item = 0;
        if (flatten(&e, &args[i], i) < 0) return -1;
    }
    e.item = 0;
    if (debug) emit(&e, GJ_PARAM_ERRBUF, 0, 8, -1, 0);
    return e.n;
}

const char *gj_param_role_name(int role) {
    static const char *const names[GJ_NPARAM_ROLES] = {
            [GJ_PARAM_VALUE] = "value",  [GJ_PARAM_REAL] = "real",   [GJ_PARAM_IMAG] = "imag",
            [GJ_PARAM_DATA] = "data",    [GJ_PARAM_SHAPE] = "shape", [GJ_PARAM_STRIDE] = "stride",
            [GJ_PARAM_ERRBUF] = "errbuf"};
    return role >= 0 && role < GJ_NPARAM_ROLES ? names[role] : "?";
}

/* ---- the compiler's side ---- */

/* A kernel argument (or a part of one) of type t; a tuple's items in the arena. */
static GjArgInfo arg_info(Ctx *c, Type *t, int written) {
    if (t->kind == TY_TUPLE) {
        GjArgInfo *items = arena_alloc(&c->arena, sizeof *items * (size_t)(t->n + 1));
        for (int k = 0; items && k < t->n; k++) items[k] = arg_info(c, t->items[k], written);
        return (GjArgInfo){GJ_ARG_TUPLE, 0, 0, 0, written, 0, items ? t->n : -1, items};
    }
    if (t->kind == TY_RECORD) return (GjArgInfo){GJ_ARG_RECORD, 0, 0, 0, written, (int)t->size};
    if (t->kind == TY_ARRAY && t->elem->kind == TY_RECORD)
        return (GjArgInfo){GJ_ARG_ARRAY, 0, t->ndim, t->layout, written, (int)t->elem->size};
    if (t->kind == TY_ARRAY) return (GjArgInfo){GJ_ARG_ARRAY, (GjDtype)t->elem->kind, t->ndim, t->layout, written, 0};
    /* a pointer is passed as its address, the integer the caller gives (numba's CPointer) */
    if (t->kind == TY_CPTR) return (GjArgInfo){GJ_ARG_SCALAR, GJ_UINT64, 0, 0, 0, 0};
    return (GjArgInfo){GJ_ARG_SCALAR, (GjDtype)t->kind, 0, 0, 0, 0};
}

/* A tuple argument's written flag covers its arrays: which of them the code
 * stores into is not tracked apart. */
GjArgInfo layout_arg(Ctx *c, int i) { return arg_info(c, c->argtypes[i], (c->written & arg_bit(i)) != 0); }

static int count_parts(const GjArgInfo *a) {
    int n = 1;
    for (int k = 0; a->kind == GJ_ARG_TUPLE && k < a->nitems; k++) n += count_parts(&a->items[k]);
    return n;
}

/* Copies a's items (and theirs) into pool from *used on, pointing the copies at them. */
static void copy_items(GjArgInfo *a, GjArgInfo *pool, int *used) {
    if (a->kind != GJ_ARG_TUPLE) return;
    GjArgInfo *items = &pool[*used];
    memcpy(items, a->items, sizeof *items * (size_t)a->nitems);
    *used += a->nitems;
    a->items = items;
    for (int k = 0; k < a->nitems; k++) copy_items(&items[k], pool, used);
}

GjArgInfo *layout_args_copy(Ctx *c) {
    GjArgInfo *tmp = arena_alloc(&c->arena, sizeof *tmp * (size_t)(c->nargs + 1));
    if (!tmp) return NULL;
    int total = c->nargs;
    for (int i = 0; i < c->nargs; i++) {
        tmp[i] = layout_arg(c, i);
        if (tmp[i].nitems < 0) return NULL;
        total += count_parts(&tmp[i]) - 1;
    }
    GjArgInfo *out = calloc((size_t)total + 1, sizeof *out);
    if (!out) return PyErr_NoMemory(), NULL;
    memcpy(out, tmp, sizeof *out * (size_t)c->nargs);
    int used = c->nargs;
    for (int i = 0; i < c->nargs; i++) copy_items(&out[i], out, &used);
    return out;
}

int layout_params(Ctx *c, GjParam **out) {
    GjArgInfo *args = arena_alloc(&c->arena, sizeof *args * (size_t)(c->nargs + 1));
    if (!args) return -1;
    for (int i = 0; i < c->nargs; i++) args[i] = layout_arg(c, i);
    int np = gj_layout(args, c->nargs, HAS_ERRBUF(c), NULL, 0);
    if (np < 0) return internal_error(c, NO_LOCATION, "layout: an argument type a kernel cannot take");
    *out = arena_alloc(&c->arena, sizeof **out * (size_t)(np + 1));
    if (!*out) return -1;
    gj_layout(args, c->nargs, HAS_ERRBUF(c), *out, np);
    return np;
}
