/* print.c: print() in kernels: which values it takes, and the printf-style
 * format and arguments it becomes (the target's printf does the printing). */
#include <string.h>

#include "gj.h"

/* print(a, b, ...): one printf-style line, Python's spacing; constants go
 * into the format, numbers are widened as C varargs are (floats print as %f,
 * as numba.cuda's print does), bools print True/False. PrintOut collects the
 * format and its arguments. */
typedef struct PrintOut {
    StrBuf fmt;
    PtrVec args;
} PrintOut;

/* The dim3 objects gpu.threadIdx, blockIdx, blockDim, gridDim: their x, y, z
 * intrinsics, or NULL. */
static const Intrinsic *dim3_part(const Type *t, int d) {
    if (t->kind != TY_OBJ || !t->path) return NULL;
    char p[256];
    snprintf(p, sizeof p, "%s.%c", t->path, "xyz"[d]);
    const Intrinsic *k = intrinsic_lookup(p);
    return k && k->kind == IK_SPECIAL ? k : NULL;
}

bool printable(const Type *t, const Instr *v) {
    if (v && v->op == IR_CONST && v->ckind == CK_STR) return true;
    if (is_scalar(t) || t->kind == TY_NONE || dim3_part(t, 0)) return true;
    if (t->kind != TY_TUPLE) return false;
    for (int i = 0; i < t->n; i++) {
        const Instr *item = v && v->op == IR_CONST && v->ckind == CK_TUPLE ? v->args[i] : NULL;
        if (!printable(t->items[i], item)) return false;
    }
    return true;
}

static void print_fmt_text(PrintOut *o, const char *s) {
    for (; *s; s++) sb_printf(&o->fmt, *s == '%' ? "%%%%" : "%c", *s);
}

/* One value as Python's str() of it would print, except that floats print as
 * %f (numba.cuda's choice); tuples as (a, b) and (a,), dim3 objects as the
 * tuple (x, y, z). A constant is formatted here; `k` is its IR constant when
 * there is one, else `v` its LLVM value. */
static void print_value(Ctx *c, PrintOut *o, Type *t, const Instr *k, LLVMValueRef v) {
    if (k && k->op == IR_CONST && k->ckind == CK_STR) {
        print_fmt_text(o, k->name);
    } else if (t->kind == TY_NONE) {
        sb_printf(&o->fmt, "None");
    } else if (t->kind == TY_TUPLE || dim3_part(t, 0)) {
        bool dim3 = t->kind != TY_TUPLE;
        int n = dim3 ? 3 : t->n;
        bool konst = k && k->op == IR_CONST && k->ckind == CK_TUPLE;
        sb_printf(&o->fmt, "(");
        for (int i = 0; i < n; i++) {
            if (i) sb_printf(&o->fmt, ", ");
            if (dim3) {
                const Intrinsic *d = dim3_part(t, i);
                print_value(c, o, &ty_int32, NULL, c->target->special(c, (Special)d->id, d->dim));
            } else {
                LLVMTypeRef it = llvm_type(c, t->items[i]);
                print_value(c, o, t->items[i], konst ? k->args[i] : NULL,
                            konst || !it ? NULL : LLVMBuildExtractValue(c->b, v, (unsigned)i, ""));
            }
        }
        sb_printf(&o->fmt, n == 1 ? ",)" : ")");
    } else if (k && k->op == IR_CONST && (k->ckind == CK_INT || k->ckind == CK_BOOL || k->ckind == CK_FLOAT)) {
        if (t->kind == TY_BOOL)
            sb_printf(&o->fmt, k->ival ? "True" : "False");
        else if (is_float(t))
            sb_printf(&o->fmt, "%f", k->fval);
        else
            sb_printf(&o->fmt, is_signed(t) ? "%lld" : "%llu", (long long)k->ival);
    } else if (t->kind == TY_BOOL) {
        LLVMValueRef yes = LLVMBuildGlobalStringPtr(c->b, "True", "true");
        LLVMValueRef no = LLVMBuildGlobalStringPtr(c->b, "False", "false");
        vec_push(&c->arena, &o->args, LLVMBuildSelect(c->b, v, yes, no, ""));
        sb_printf(&o->fmt, "%%s");
    } else if (is_float(t)) {
        vec_push(&c->arena, &o->args, convert(c, v, t, &ty_float64));
        sb_printf(&o->fmt, "%%f");
    } else {
        vec_push(&c->arena, &o->args, convert(c, v, t, is_signed(t) ? &ty_int64 : &ty_uint64));
        sb_printf(&o->fmt, is_signed(t) ? "%%lld" : "%%llu");
    }
}

/* CUDA's vprintf takes at most PRINT_CHUNK arguments: a longer print is
 * several calls, split before a conversion, the line ending with the last
 * (numba.cuda prints the raw format string instead). */
#define PRINT_CHUNK 32

static void print_chunked(Ctx *c, const char *fmt, LLVMValueRef *args, int nargs) {
    const char *start = fmt;
    int used = 0, n = 0;
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') continue;
        if (p[1] == '%') {
            p++;
            continue;
        }
        if (n == PRINT_CHUNK) {
            const char *piece = arena_printf(&c->arena, "%.*s", (int)(p - start), start);
            c->target->print(c, LLVMBuildGlobalStringPtr(c->b, piece, "fmt"), args + used, n);
            used += n, n = 0, start = p;
        }
        n++;
    }
    c->target->print(c, LLVMBuildGlobalStringPtr(c->b, start, "fmt"), args + used, nargs - used);
}

LLVMValueRef lower_print(Ctx *c, Instr **a, int nargs) {
    PrintOut o = {0};
    for (int i = 0; i < nargs; i++) {
        if (i) sb_printf(&o.fmt, " ");
        Type *t = a[i]->type;
        bool k = a[i]->op == IR_CONST;
        print_value(c, &o, t, k ? a[i] : NULL, k || !llvm_type(c, t) ? NULL : val(c, a[i]));
    }
    sb_printf(&o.fmt, "\n");
    print_chunked(c, o.fmt.s, (LLVMValueRef *)o.args.v, o.args.n);
    sb_free(&o.fmt);
    return NULL;
}
