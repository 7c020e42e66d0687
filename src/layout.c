/* layout.c: the kernel ABI, in one place. A kernel's Python arguments are
 * flattened into parameters (gj_layout): lower.c declares the kernel's LLVM
 * parameters from this list and reassembles the arguments from them,
 * compile.c publishes it as gj_output_params(), and the launcher
 * (runtime/args.c) checks a kernel against it and packs kernelParams by it.
 * A new argument kind is flattened here, in flatten(), and nowhere else. */
#include "gj.h"

/* Bytes of a scalar dtype; 0 for a code a kernel does not take. */
static int dtype_size(int dt) {
    switch (dt) {
    case GJ_BOOL:
    case GJ_INT8:
    case GJ_UINT8: return 1;
    case GJ_INT16:
    case GJ_UINT16:
    case GJ_FLOAT16: return 2;
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
} Emit;

/* Every parameter is aligned as its size: each is its own kernelParams entry. */
static void emit(Emit *e, GjParamRole role, GjDtype dt, int size, int arg, int axis) {
    if (e->out && e->n < e->cap)
        e->out[e->n] = (GjParam){(uint8_t)size, (uint8_t)size, (uint8_t)role, (uint8_t)dt, (int16_t)arg, (int16_t)axis};
    e->n++;
}

/* The parameters of argument `i`, in order. */
static int flatten(Emit *e, const GjArgInfo *a, int i) {
    int size = dtype_size(a->dtype);
    if (!size) return -1;
    switch (a->kind) {
    case GJ_ARG_ARRAY:
        if (a->ndim < 0) return -1;
        emit(e, GJ_PARAM_DATA, 0, 8, i, 0);
        for (int k = 0; k < a->ndim; k++) emit(e, GJ_PARAM_SHAPE, GJ_INT64, 8, i, k);
        for (int k = 0; k < a->ndim; k++) emit(e, GJ_PARAM_STRIDE, GJ_INT64, 8, i, k);
        return 0;
    case GJ_ARG_SCALAR:
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
    Emit e = {out, cap, 0};
    for (int i = 0; i < nargs; i++)
        if (flatten(&e, &args[i], i) < 0) return -1;
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

GjArgInfo layout_arg(Ctx *c, int i) {
    Type *t = c->argtypes[i];
    if (t->kind == TY_ARRAY)
        return (GjArgInfo){GJ_ARG_ARRAY, (GjDtype)t->elem->kind, t->ndim, t->layout, (c->written & arg_bit(i)) != 0};
    return (GjArgInfo){GJ_ARG_SCALAR, (GjDtype)t->kind, 0, 0, 0};
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
