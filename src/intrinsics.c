/* intrinsics.c: what each name a kernel can call means -- gpujit's (numba.cuda's)
 * thread geometry, memory, barriers and atomics, Python's builtins, math,
 * cmath, NumPy's casts and scalar functions: its typing rule (used by
 * typeinfer.c) and its lowering (used by lower.c). A name is known by its
 * dotted path (build.c resolves objects to paths), so aliases of modules and
 * functions work; the table of names is intrinsic_table.c. Larger pieces live
 * apart: global arrays (globalarrays.c), print (print.c), the longer builtins
 * (builtins.c), cmath (complex.c). */
#include <math.h>
#include <string.h>

#include "gj.h"

/* ---- typing ---- */

/* float("nan"), float("-inf"), float("1.5"): the constant string's value as Python reads
 * it; NaN with a Python exception when it is no constant string or no float. */
static double str_float(Instr *v) {
    if (v->op != IR_CONST || v->ckind != CK_STR || !v->name) {
        PyErr_SetString(PyExc_ValueError, "not a constant string");
        return NAN;
    }
    PyObject *s = PyUnicode_FromString(v->name), *f = s ? PyFloat_FromString(s) : NULL;
    double d = f ? PyFloat_AsDouble(f) : NAN;
    Py_XDECREF(s);
    Py_XDECREF(f);
    return d;
}

static int bind(Ctx *c, Instr *in, const char *const *params, int nparams, int required, Instr **out) {
    int npos = in->nargs - 1 - in->nkw;
    for (int i = 0; i < nparams; i++) out[i] = NULL;
    if (npos > nparams)
        return error_at(c, ERR_TYPING, in->loc, "%s() takes at most %d arguments (%d given)",
                        path_pretty(in->args[0]->type->path), nparams, npos);
    for (int i = 0; i < npos; i++) out[i] = in->args[1 + i];
    for (int k = 0; k < in->nkw; k++) {
        int p = -1;
        for (int i = 0; i < nparams; i++)
            if (strcmp(params[i], in->kwnames[k]) == 0) p = i;
        if (p < 0 || out[p])
            return error_at(c, ERR_TYPING, in->loc, "%s() got an unexpected keyword argument '%s'",
                            path_pretty(in->args[0]->type->path), in->kwnames[k]);
        out[p] = in->args[1 + npos + k];
    }
    for (int i = 0; i < required; i++)
        if (!out[i])
            return error_at(c, ERR_TYPING, in->loc, "%s() missing argument '%s'", path_pretty(in->args[0]->type->path),
                            params[i]);
    return 0;
}

/* A local variable assigned once, from a constant (`n = 100` before
 * `shared.array(n, int32)`): that constant; NULL otherwise. */
static Instr *local_constant(Ctx *c, Instr *v) {
    if (v->op != IR_LOAD_VAR || ctx_var(c, v->var)->is_arg) return NULL;
    Instr *only = NULL;
    for (int bi = 0; bi < c->nblocks; bi++)
        for (int k = 0; c->blocks[bi]->built && k < c->blocks[bi]->instrs.n; k++) {
            Instr *st = c->blocks[bi]->instrs.v[k];
            if (st->op != IR_STORE_VAR || st->var != v->var) continue;
            if (only || st->args[0]->op != IR_CONST) return NULL;
            only = st->args[0];
        }
    return only;
}

/* An operand needed at compile time: where it reads a device function's
 * parameter that the caller passed a constant for, that constant, put in
 * the IR in its place (lowering reads it). */
Instr *literal_operand(Ctx *c, Instr *in, Instr *v) {
    Instr *k = arg_literal(c, v, LIT_NEED);
    if (!k && !PyErr_Occurred()) k = local_constant(c, v);
    if (!k || k == v) return v;
    for (int j = 1; j < in->nargs; j++)
        if (in->args[j] == v) in->args[j] = k;
    return k;
}

/* The element type named by a dtype argument: np.float32, gpu.int32, 'float32'. */
Type *dtype_of(Ctx *c, Instr *in, Instr *d) {
    d = literal_operand(c, in, d);
    if (d->op == IR_CONST && d->ckind == CK_STR) {
        Type *t = type_from_name(d->name);
        if (t && is_number(t)) return t;
        if (!strncmp(d->name, "Record(", 7)) { /* a structured dtype (pyvalue.c spells it) */
            Type **args, *ret;
            int n;
            const char *sig = arena_printf(&c->arena, "(%s)", d->name);
            if (!sig || sig_parse(c, sig, &ret, &args, &n) < 0) return NULL;
            return args[0];
        }
        TERR("unknown dtype '%s'", d->name);
    }
    if (d->type && d->type->kind == TY_OBJ) {
        const Intrinsic *k = intrinsic_lookup(d->type->path);
        if (k && k->kind == IK_CAST) return type_scalar(k->id); /* int -> int64, float -> float64 */
    }
    TERR("dtype must be a NumPy/gpujit scalar type such as gpu.float32 (got %s)", type_name(c, d->type));
}

static int64_t const_int(Instr *v, bool *ok) {
    *ok = v->op == IR_CONST && (v->ckind == CK_INT || v->ckind == CK_BOOL);
    return v->ival;
}

/* shared.array(0, dtype) or shared.array((0,), dtype): dynamic shared memory. */
static bool shape_is_dynamic(Instr *shape) {
    if (shape->op == IR_CONST && shape->ckind == CK_TUPLE && shape->nargs == 1) shape = shape->args[0];
    return shape->op == IR_CONST && shape->ckind == CK_INT && shape->ival == 0;
}

/* alignment=: None (16 bytes), or a constant power of two. */
static int array_alignment(Ctx *c, Instr *in, Instr *a) {
    if (!a) return 16;
    a = literal_operand(c, in, a);
    if (a->op == IR_CONST && a->ckind == CK_NONE) return 16;
    if (a->op != IR_CONST || a->ckind != CK_INT)
        return error_at(c, ERR_TYPING, in->loc, "alignment must be a constant integer, not %s", type_name(c, a->type));
    if (a->ival <= 0 || (a->ival & (a->ival - 1)))
        return error_at(c, ERR_VALUE, in->loc, "Alignment must be a positive power of 2, not %lld",
                        (long long)a->ival);
    if (a->ival > LIMIT_ALIGN) return error_limit(c, in->loc, "bytes of alignment", LIMIT_ALIGN);
    return a->ival < 16 ? 16 : (int)a->ival;
}

static Type *array_alloc_type(Ctx *c, Instr *in, bool shared) {
    static const char *const params[] = {"shape", "dtype", "alignment"};
    Instr *a[3];
    if (bind(c, in, params, 3, 2, a) < 0) return NULL;
    Type *elem = dtype_of(c, in, a[1]);
    if (!elem) return NULL;
    int align = array_alignment(c, in, a[2]);
    if (align < 0) return NULL;
    in->align = align;
    Instr *shape = literal_operand(c, in, a[0]);
    int ndim;
    int64_t n = 1;
    if (shared && shape_is_dynamic(shape)) /* sized by the launch; all alias one buffer */
        return type_array(c, elem, 1, 'C', AS_SHARED);
    if (shape->op == IR_CONST && shape->ckind == CK_TUPLE) {
        ndim = shape->nargs;
        if (ndim > LIMIT_NDIM) return error_limit(c, in->loc, "array dimensions", LIMIT_NDIM), (Type *)NULL;
        for (int i = 0; i < ndim; i++) {
            bool ok;
            int64_t d = const_int(shape->args[i], &ok);
            if (!ok || d <= 0)
                TERR("%s.array: each dimension must be a positive constant", shared ? "shared" : "local");
            if (n > ((int64_t)1 << 40) / d) TERR("%s.array: the array is too large", shared ? "shared" : "local");
            n *= d;
        }
        if (ndim < 1) TERR("array shape must have at least one dimension");
    } else {
        bool ok;
        n = const_int(shape, &ok);
        if (!ok && shape->op == IR_LOAD_VAR && c->self && ctx_var(c, shape->var)->is_arg)
            TERR("%s.array: the shape must be a compile-time constant, and the caller of %s() passes a "
                 "run-time value for '%s'",
                 shared ? "shared" : "local", c->funcname, ctx_var(c, shape->var)->name);
        if (!ok)
            TERR("%s.array: the shape must be a compile-time constant (an int literal, a global, or a "
                 "tuple of them)",
                 shared ? "shared" : "local");
        if (n <= 0) TERR("array size must be positive");
        ndim = 1;
    }
    size_t bytes = (size_t)n * (size_t)(type_bits(elem) / 8);
    if (shared && !in->alloc_done) {
        size_t align = (size_t)in->align;
        c->shared_bytes = (c->shared_bytes + align - 1) & ~(align - 1);
        in->shared_off = c->shared_bytes;
        in->alloc_done = true;
        Ctx *root = ctx_root(c);
        if (root->shared_used < in->shared_off + bytes) root->shared_used = in->shared_off + bytes;
        /* keep the total a multiple of 16: dynamic shared memory starts right after it */
        c->shared_bytes = (c->shared_bytes + bytes + align - 1) & ~(align - 1);
        /* ptxas rejects more static .shared than this; say so here, at the line that asks */
        if (c->shared_bytes > 48 * 1024)
            TERR("shared arrays need %zu bytes; static shared memory is limited to 48 KiB per block", c->shared_bytes);
    } else if (!shared && !in->alloc_done) {
        in->alloc_done = true;
        Ctx *root = ctx_root(c);
        root->local_bytes = ((root->local_bytes + (size_t)in->align - 1) & ~((size_t)in->align - 1)) + bytes;
    }
    return type_array(c, elem, ndim, 'C', shared ? AS_SHARED : AS_LOCAL);
}

/* A value a warp can shuffle or match: 32- or 64-bit ints and floats. */

/* Does the call store into the array that is its first argument? The launcher copies such an
 * argument back from the GPU and refuses a read-only one. */
bool intrinsic_writes_first(const Intrinsic *k) {
    return k->kind == IK_ATOMIC || k->kind == IK_CACHE_STORE || (k->kind == IK_WMMA && k->id == WMMA_STORE);
}

Type *type_intrinsic_call(Ctx *c, Instr *in) {
    Type *ft = in->args[0]->type;
    if (!type_known(ft)) return &ty_unknown;
    for (int i = 1; i < in->nargs; i++)
        if (!type_known(in->args[i]->type)) return &ty_unknown;
    if (ft->kind != TY_OBJ) TERR("cannot call a value of type %s", type_name(c, ft));
    const Intrinsic *k = intrinsic_lookup(ft->path);
    if (!k || k->kind == IK_SPECIAL) {
        if (ft->path && is_debugger_module(ft->path)) UNSUP("calling %s in a kernel: %s", path_pretty(ft->path), DEBUGGER_HINT);
        if (ft->path && strncmp(ft->path, "numpy.", 6) == 0)
            UNSUP("%s is not supported in kernels%s", ft->path, numpy_unsupported_hint(ft->path));
        if (ft->path && strncmp(ft->path, "math.", 5) == 0) UNSUP("%s() is not supported yet in kernels", ft->path);
        UNSUP("calling %s is not supported in kernels", path_pretty(ft->path));
    }
    in->intr = k;
    int nargs = in->nargs - 1;
    Type **at = arena_alloc(&c->arena, sizeof(Type *) * (size_t)(nargs + 1));
    if (!at) return NULL;
    for (int i = 0; i < nargs; i++) at[i] = in->args[1 + i]->type;
    if (in->nkw && k->kind != IK_SHARED_ARRAY && k->kind != IK_LOCAL_ARRAY && k->kind != IK_SEQ)
        TERR("%s() does not take keyword arguments", path_pretty(k->path));
    switch (k->kind) {
    case IK_GRID:
    case IK_GRIDSIZE: {
        bool ok = nargs == 1;
        int64_t n = ok ? const_int(literal_operand(c, in, in->args[1]), &ok) : 0;
        if (nargs == 1 && !ok)
            return error_at(c, ERR_LITERAL, in->loc,
                            "RequireLiteralValue: %s() takes one constant argument, 1, 2 or 3; this one is a "
                            "variable of type %s",
                            path_pretty(k->path), type_name(c, in->args[1]->type)),
                   (Type *)NULL;
        if (!ok || n < 1 || n > 3) TERR("%s() takes one constant argument, 1, 2 or 3", path_pretty(k->path));
        if (n == 1) return &ty_int64;
        Type *items[3] = {&ty_int64, &ty_int64, &ty_int64};
        return type_tuple(c, (int)n, items);
    }
    case IK_SYNCTHREADS:
        if (nargs) TERR("syncthreads() takes no arguments");
        c->uses_barrier = true;
        return &ty_none;
    case IK_CG:
        if (nargs) TERR("%s() takes no arguments", path_pretty(k->path));
        /* the CPU runs a kernel that syncs its grid or block on fibers */
        c->uses_barrier |= k->id != CG_THIS_BLOCK;
        /* as numba: asking for the grid group makes the launch cooperative */
        c->cooperative |= k->id == CG_THIS_GRID || k->id == CG_GRID_SYNC;
        if (k->id == CG_THIS_GRID) return type_obj(c, "gpujit.cg.GridGroup");
        if (k->id == CG_THIS_BLOCK) return type_obj(c, "gpujit.cg.ThreadBlock");
        return &ty_none;
    case IK_SHARED_ARRAY: return array_alloc_type(c, in, true);
    case IK_LOCAL_ARRAY: return array_alloc_type(c, in, false);
    case IK_ATOMIC: return type_atomic(c, in, k, at, nargs);
    case IK_FP16: return type_fp16(c, in, k, at, nargs);
    case IK_BF16: return type_bf16(c, in, k, at, nargs);
    case IK_FP8: return type_fp8_cvt(c, in, k, at, nargs);
    case IK_WMMA: return type_wmma(c, in, k, at, nargs);
    case IK_CP_ASYNC: return type_cp_async(c, in, k, at, nargs);
    case IK_MBARRIER: return type_mbarrier(c, in, k, at, nargs);
    case IK_VECTOR: {
        /* the items, in order, from numbers and from smaller vectors */
        int n = 0;
        for (int i = 0; i < nargs; i++) {
            if (!is_vector(at[i]) && !(is_scalar(at[i])))
                TERR("%s() takes numbers and vectors, not %s (argument %d)", path_pretty(k->path), type_name(c, at[i]),
                     i + 1);
            n += is_vector(at[i]) ? at[i]->n : 1;
        }
        if (n != k->dim)
            TERR("%s() makes %d item%s from its arguments, got %d", path_pretty(k->path), k->dim, k->dim == 1 ? "" : "s", n);
        return type_vector(c, type_scalar((TypeKind)k->id), k->dim);
    }
    case IK_NANOSLEEP:
        if (nargs != 1 || !is_int(at[0])) TERR("nanosleep(ns) takes one integer, the nanoseconds");
        /* nanosleep.u32 is Volta's: LLVM cannot select it for older GPUs (and aborts) */
        if (c->opt.target == GJ_TARGET_NVPTX && c->opt.cc_major < 7)
            UNSUP("nanosleep() needs compute capability 7.0 or newer (compiling for %d.%d)", c->opt.cc_major,
                  c->opt.cc_minor);
        return &ty_none;
    case IK_SELP: {
        Type *r = nargs == 3 && is_number(at[0]) ? unify(c, at[1], at[2]) : NULL;
        if (!r || !is_number(r)) TERR("selp(predicate, a, b) takes a predicate and two numbers");
        return r;
    }
    case IK_CACHE_LOAD:
    case IK_CACHE_STORE: return type_cache_hint(c, in, k, at, nargs);
    case IK_SYNC_REDUCE:
        if (nargs != 1 || !is_scalar(at[0])) TERR("%s(predicate) takes one number", path_pretty(k->path));
        c->uses_barrier = true;
        return &ty_int32;
    case IK_FENCE:
        if (nargs) TERR("%s() takes no arguments", path_pretty(k->path));
        return &ty_none;
    case IK_WARP: return type_warp(c, in, k, at, nargs);
    case IK_LANEMASK_LT:
        if (nargs) TERR("lanemask_lt() takes no arguments");
        return &ty_uint32;
    case IK_CONST_ARRAY: return type_const_array(c, in);
    case IK_PRINT:
        for (int i = 0; i < nargs; i++) {
            Instr *v = at[i]->kind == TY_STR ? literal_operand(c, in, in->args[1 + i]) : in->args[1 + i];
            if (!printable(at[i], v))
                UNSUP("print() of %s (numbers, bools, string constants, tuples of them and "
                      "gpu.threadIdx-like objects can be printed)",
                      type_name(c, at[i]));
        }
        return &ty_none;
    case IK_FMA: {
        if (nargs != 3 || !is_scalar(at[0]) || !is_scalar(at[1]) || !is_scalar(at[2]))
            TERR("fma(a, b, c) takes three numbers");
        Type *r = promote_arith(promote_arith(at[0], at[1]), at[2]);
        return r->kind == TY_FLOAT32 ? &ty_float32 : &ty_float64;
    }
    case IK_BITS:
        if (nargs != 1 || !is_int(at[0])) TERR("%s() takes one integer", path_pretty(k->path));
        if (k->id == BITS_FFS) return &ty_uint32;                         /* a bit position */
        if (k->id == BITS_BREV) return type_bits(at[0]) == 64 ? &ty_uint64 : &ty_uint32; /* numba's u4/u8 */
        return at[0];                                                    /* popc, clz */
    case IK_MATH_CLASS:
        if (nargs != 1 || !is_scalar(at[0])) TERR("%s() takes one number", k->path);
        return &ty_bool;
    case IK_MATH_SCALE:
        if (nargs != 1 || !is_scalar(at[0])) TERR("%s() takes one number", k->path);
        return at[0]->kind == TY_FLOAT32 ? &ty_float32 : &ty_float64;
    case IK_RANGE:
        if (nargs < 1 || nargs > 3) TERR("range expected 1 to 3 arguments, got %d", nargs);
        for (int i = 0; i < nargs; i++) /* a float is truncated, as numba-cuda converts it (range_arg) */
            if (!is_index(at[i]) && !is_float(at[i]))
                TERR("range() arguments must be integers or floats, not %s", type_name(c, at[i]));
        if (nargs == 3) { /* a constant zero step fails here; a variable one at run time, with the checks */
            bool ok;
            int64_t step = const_int(literal_operand(c, in, in->args[3]), &ok);
            if (ok && step == 0) TERR("range() arg 3 must not be zero");
        }
        return &ty_range;
    case IK_LEN:
        if (nargs != 1) TERR("len() takes exactly one argument");
        if (at[0]->kind != TY_ARRAY && at[0]->kind != TY_TUPLE && at[0]->kind != TY_RANGE) {
            if (in->ival)
                TERR("iteration over %s (for loops go over ranges, arrays, tuples, enumerate() and zip())",
                     type_name(c, at[0]));
            TERR("len() of %s", type_name(c, at[0]));
        }
        return &ty_int64;
    case IK_ABS:
        if (nargs != 1 || !is_number(at[0])) TERR("abs() takes one number");
        if (is_complex(at[0])) return complex_part(at[0]);
        return at[0]->kind == TY_BOOL ? &ty_int64 : at[0];
    case IK_MIN:
    case IK_MAX: {
        if (nargs == 1 && at[0]->kind == TY_TUPLE) { /* min(tuple): over its items */
            if (!at[0]->n) TERR("%s() of an empty tuple", path_pretty(k->path));
            nargs = at[0]->n;
            at = at[0]->items;
        } else if (nargs < 2) {
            TERR("%s() of fewer than two numbers is not supported", path_pretty(k->path));
        }
        Type *r = at[0];
        for (int i = 0; i < nargs; i++) {
            if (!is_scalar(at[i]))
                TERR("%s() arguments must be numbers, not %s", path_pretty(k->path), type_name(c, at[i]));
            if (i) r = type_eq(r, at[i]) ? r : promote_arith(r, at[i]);
        }
        return r;
    }
    case IK_TUPLE:
        if (nargs == 0) return type_tuple(c, 0, NULL);
        if (nargs != 1 || at[0]->kind != TY_TUPLE) TERR("tuple() in a kernel takes a tuple");
        return type_tuple(c, at[0]->n, at[0]->items); /* a vector's items become a plain tuple */
    case IK_SUM:
    case IK_ANYALL: {
        const char *name = path_pretty(k->path);
        if (nargs != 1 || at[0]->kind != TY_TUPLE) TERR("%s() in a kernel takes one tuple", name);
        Type *r = &ty_int64; /* sum(()) == 0 */
        for (int i = 0; i < at[0]->n; i++) {
            Type *t = at[0]->items[i];
            if (!is_number(t)) TERR("%s() of a tuple holding %s", name, type_name(c, t));
            if (!i)
                r = is_complex(t) || is_float(t) ? t : promote_arith(t, t); /* ints add in 64 bits */
            else
                r = promote_arith(r, t);
        }
        return k->kind == IK_SUM ? r : &ty_bool;
    }
    case IK_ROUND:
        if (nargs < 1 || nargs > 2 || !is_scalar(at[0])) TERR("round() takes a number and optional ndigits");
        if (nargs == 2 && !is_index(at[1])) TERR("round(): ndigits must be an integer, not %s", type_name(c, at[1]));
        if (at[0]->kind == TY_BOOL || (nargs == 1 && is_float(at[0]))) return &ty_int64;
        return at[0]; /* round(float, n) keeps the float's type, round(int) the int's */
    case IK_POWMOD:
        if (nargs != 3) TERR("pow() takes 2 or 3 arguments (%d given)", nargs);
        for (int i = 0; i < 3; i++)
            if (!is_index(at[i])) TERR("pow() with 3 arguments takes integers, not %s", type_name(c, at[i]));
        return &ty_int64;
    case IK_SEQ:
        if (!in->ival) UNSUP("%s() is supported only as the iterable of a for loop", path_pretty(k->path));
        return &ty_none;
    case IK_ISINSTANCE: {
        if (nargs != 2) TERR("isinstance() takes 2 arguments (%d given)", nargs);
        Type *x = at[0], *cls = at[1];
        int ncls = cls->kind == TY_TUPLE ? cls->n : 1;
        in->ival = 0;
        for (int i = 0; i < ncls; i++) {
            Type *ct = cls->kind == TY_TUPLE ? cls->items[i] : cls;
            const Intrinsic *ck = ct->kind == TY_OBJ ? intrinsic_lookup(ct->path) : NULL;
            bool match;
            if (ct->kind == TY_OBJ && !strcmp(ct->path, "builtins.tuple"))
                match = x->kind == TY_TUPLE;
            else if (ct->kind == TY_OBJ && !strcmp(ct->path, "numpy.ndarray"))
                match = x->kind == TY_ARRAY;
            else if (ck && ck->kind == IK_COMPLEX)
                match = is_complex(x);
            else if (ck && ck->kind == IK_CAST && !strcmp(ck->path, "builtins.int"))
                match = is_index(x); /* bool is an int */
            else if (ck && ck->kind == IK_CAST && !strcmp(ck->path, "builtins.float"))
                match = is_float(x);
            else if (ck && ck->kind == IK_CAST)
                match = type_eq(x, type_scalar(ck->id));
            else
                TERR("isinstance() with %s is not supported (int, float, complex, bool, tuple, NumPy scalar "
                     "types and np.ndarray are)",
                     type_name(c, ct));
            if (match) in->ival = 1;
        }
        return &ty_bool;
    }
    case IK_BIT_COUNT: {
        Type *x = in->args[0]->op == IR_ATTR ? in->args[0]->args[0]->type : nargs == 1 ? at[0] : NULL;
        if (!x || (in->args[0]->op == IR_ATTR && nargs) || !is_index(x)) TERR("bit_count() takes one integer");
        return &ty_int64;
    }
    case IK_FREXP:
    case IK_MODF: {
        if (nargs != 1 || !is_scalar(at[0])) TERR("%s() takes one number", k->path);
        Type *f = at[0]->kind == TY_FLOAT32 ? &ty_float32 : &ty_float64;
        Type *items[2] = {f, k->kind == IK_FREXP ? &ty_int32 : f}; /* C's int exponent */
        return type_tuple(c, 2, items);
    }
    case IK_LDEXP:
        if (nargs != 2 || !is_scalar(at[0]) || !is_index(at[1])) TERR("ldexp(x, i) takes a number and an integer");
        return at[0]->kind == TY_FLOAT32 ? &ty_float32 : &ty_float64;
    case IK_NP_ROUND:
        if (nargs != 1 || !is_scalar(at[0])) TERR("%s() takes one number", k->path);
        return at[0]->kind == TY_FLOAT32 ? &ty_float32 : &ty_float64;
    case IK_NP_LOGICAL:
        if (nargs != 2 || !is_number(at[0]) || !is_number(at[1])) TERR("%s() takes two numbers", k->path);
        return &ty_bool;
    case IK_NP_SIGN:
        if (nargs != 1 || !is_scalar(at[0])) TERR("%s() takes one number", k->path);
        return at[0]->kind == TY_BOOL ? &ty_int64 : at[0];
    case IK_NP_MINMAX:
        if (nargs != 2 || !is_scalar(at[0]) || !is_scalar(at[1])) TERR("%s() takes two numbers", k->path);
        return type_eq(at[0], at[1]) ? at[0] : promote_arith(at[0], at[1]);
    case IK_CAST:
        if (nargs == 0) return type_scalar(k->id); /* int() == 0 */
        if (nargs == 1 && is_float(type_scalar(k->id)) && at[0]->kind == TY_STR) { /* float("nan"): a constant */
            if (isnan(str_float(in->args[1])) && PyErr_Occurred()) {
                PyErr_Clear();
                TERR("%s() of a string takes a constant that Python's float() reads", path_pretty(k->path));
            }
            return type_scalar(k->id);
        }
        if (nargs != 1 || !(is_number(at[0]) || is_fp8(at[0]))) TERR("%s() takes one number", path_pretty(k->path));
        if ((is_fp8(at[0]) || is_fp8(type_scalar(k->id))) && (is_complex(at[0]) || is_complex(type_scalar(k->id))))
            TERR("cannot convert %s to %s", type_name(c, at[0]), path_pretty(k->path));
        if (is_complex(at[0]) && !is_complex(type_scalar(k->id)))
            TERR("cannot convert %s to %s (take .real, .imag or abs() of it)", type_name(c, at[0]),
                 path_pretty(k->path));
        return type_scalar(k->id);
    case IK_COMPLEX:
        if (nargs > 2) TERR("complex() takes at most 2 arguments (%d given)", nargs);
        for (int i = 0; i < nargs; i++)
            if (!is_number(at[i]) || (nargs == 2 && is_complex(at[i])))
                TERR("complex() takes real numbers, or one complex, not %s", type_name(c, at[i]));
        return &ty_complex128;
    case IK_CONJUGATE:
        if (nargs) TERR("conjugate() takes no arguments");
        return in->args[0]->args[0]->type;
    case IK_CMATH: return cmath_type(c, in, (CmathFn)k->id, at, nargs);
    case IK_LIBDEVICE: return type_libdevice_call(c, in, ft->path, at, nargs);
    case IK_REDUCE: return reduce_type(c, in, (ReduceFn)k->id);
    case IK_RESHAPE: return type_reshape(c, in);
    case IK_ARRAY_COPY: return type_array_copy(c, in);
    case IK_VIEW_DTYPE: {
        if (nargs != 1) TERR("view() takes one dtype");
        Type *e = dtype_of(c, in, in->args[1]);
        return e ? type_view_dtype(c, in, e) : NULL;
    }
    case IK_MATH1:
    case IK_MATH_TOINT:
        if (nargs != 1 || !is_scalar(at[0])) TERR("%s() takes one number", k->path);
        if (is_half(at[0])) /* numba.cuda's float16 and bfloat16 overloads; the others take it as a float32 */
            return strstr(at[0]->kind == TY_FLOAT16 ? " sin cos ceil floor sqrt log log2 log10 exp exp2 fabs trunc "
                                                    : " sin cos ceil floor sqrt log log10 exp exp2 tanh trunc ",
                          arena_printf(&c->arena, " %s ", k->name))
                           ? at[0]
                           : &ty_float32;
        if (k->kind == IK_MATH_TOINT) return is_float(at[0]) ? &ty_int64 : at[0]->kind == TY_BOOL ? &ty_int64 : at[0];
        return at[0]->kind == TY_FLOAT32 ? &ty_float32 : &ty_float64;
    case IK_MATH2: {
        if (nargs != 2 || !is_scalar(at[0]) || !is_scalar(at[1])) TERR("%s() takes two numbers", k->path);
        Type *r = promote_arith(at[0], at[1]);
        return r->kind == TY_FLOAT32 ? &ty_float32 : &ty_float64;
    }
    default: UNSUP("%s() is not supported", path_pretty(k->path));
    }
}


/* ---- lowering ---- */

static LLVMValueRef special(Ctx *c, Special s, int dim) { return c->target->special(c, s, dim); }

static LLVMValueRef grid_value(Ctx *c, bool size, int dim) {
    if (size)
        return LLVMBuildMul(c->b, LLVMBuildSExt(c->b, special(c, SP_NTID, dim), c->i64, ""),
                            LLVMBuildSExt(c->b, special(c, SP_NCTAID, dim), c->i64, ""), "");
    LLVMValueRef blk = LLVMBuildMul(c->b, LLVMBuildZExt(c->b, special(c, SP_CTAID, dim), c->i64, ""),
                                    LLVMBuildZExt(c->b, special(c, SP_NTID, dim), c->i64, ""), "");
    return LLVMBuildAdd(c->b, blk, LLVMBuildZExt(c->b, special(c, SP_TID, dim), c->i64, ""), "");
}

LLVMValueRef lower_intrinsic_call(Ctx *c, Instr *in) {
    const Intrinsic *k = in->intr;
    Instr **a = in->args + 1;
    int nargs = in->nargs - 1;
    Type *rt = in->type;
    switch (k->kind) {
    case IK_GRID:
    case IK_GRIDSIZE: {
        int n = (int)a[0]->ival;
        if (n == 1) return grid_value(c, k->kind == IK_GRIDSIZE, 0);
        LLVMValueRef t = LLVMGetUndef(llvm_type(c, rt));
        for (int d = 0; d < n; d++)
            t = LLVMBuildInsertValue(c->b, t, grid_value(c, k->kind == IK_GRIDSIZE, d), (unsigned)d, "");
        return t;
    }
    case IK_SYNCTHREADS: c->target->barrier(c); return NULL;
    case IK_EXTERN: return lower_extern_call(c, in);
    case IK_CG:
        if (k->id == CG_GRID_SYNC) c->target->grid_sync(c);
        if (k->id == CG_BLOCK_SYNC) c->target->barrier(c);
        return NULL;
    case IK_SHARED_ARRAY:
    case IK_LOCAL_ARRAY: {
        static const char *const params[] = {"shape", "dtype", "alignment"};
        Instr *bound[3];
        if (bind(c, in, params, 3, 2, bound) < 0) return NULL; /* shape= may come after dtype= */
        Instr *shape = bound[0];
        int64_t n = 1;
        if (shape->ckind == CK_TUPLE)
            for (int i = 0; i < shape->nargs; i++) n *= shape->args[i]->ival;
        else
            n = shape->ival;
        if (k->kind == IK_SHARED_ARRAY && shape_is_dynamic(shape)) {
            LLVMValueRef nbytes, data = c->target->dynamic_shared(c, &nbytes);
            LLVMValueRef len = LLVMBuildUDiv(c->b, nbytes, ci64(c, type_bits(rt->elem) / 8), "");
            return array_value(c, rt, data, &len);
        }
        LLVMTypeRef arrty = LLVMArrayType2(mem_type(c, rt->elem), (uint64_t)n);
        LLVMValueRef data;
        if (k->kind == IK_SHARED_ARRAY) {
            data = c->target->shared_array(c, arrty, in->shared_off);
            if (!data) return NULL;
            /* a global of its own (the GPU's .shared), or an offset the layout aligned */
            if (in->align > 16 && LLVMIsAGlobalVariable(data)) LLVMSetAlignment(data, (unsigned)in->align);
        } else {
            data = entry_alloca(c, arrty, "local");
            LLVMSetAlignment(data, (unsigned)in->align);
        }
        return const_shape_array(c, rt, data, shape);
    }
    case IK_ATOMIC: return lower_atomic(c, (AtomicOp)k->id, a, rt);
    case IK_FP16: return lower_fp16(c, k->id, a, nargs, &ty_float16);
    case IK_BF16: return lower_bf16(c, k->id, a, nargs, rt);
    case IK_FP8: return lower_fp8_cvt(c, in, k, a);
    case IK_WMMA: return lower_wmma(c, in, k, a, nargs, rt);
    case IK_CP_ASYNC: return lower_cp_async(c, in, k, a, nargs);
    case IK_MBARRIER: return lower_mbarrier(c, in, k, a, nargs);
    case IK_VECTOR: {
        LLVMValueRef v = LLVMGetUndef(llvm_type(c, rt));
        unsigned j = 0;
        for (int i = 0; i < nargs; i++) {
            Type *t = a[i]->type;
            if (!is_vector(t)) {
                v = LLVMBuildInsertValue(c->b, v, val_as(c, a[i], rt->items[0]), j++, "");
                continue;
            }
            LLVMValueRef sv = val(c, a[i]);
            for (int e = 0; e < t->n; e++)
                v = LLVMBuildInsertValue(
                        c->b, v, convert(c, LLVMBuildExtractValue(c->b, sv, (unsigned)e, ""), t->items[e], rt->items[0]),
                        j++, "");
        }
        return v;
    }
    case IK_NANOSLEEP: {
        /* PTX sleeps for between 0 and 2*ns, so the CPU target's fibers sleeping 0 keep the contract */
        if (c->opt.target != GJ_TARGET_NVPTX) return NULL;
        LLVMValueRef ns = val_as(c, a[0], &ty_uint32);
        call_intrinsic(c, "llvm.nvvm.nanosleep", NULL, 0, &ns, 1);
        return NULL;
    }
    case IK_SELP:
        return LLVMBuildSelect(c->b, to_bool(c, val(c, a[0]), a[0]->type), val_as(c, a[1], rt), val_as(c, a[2], rt), "");
    case IK_CACHE_LOAD:
    case IK_CACHE_STORE: return lower_cache_hint(c, k, a, rt);
    case IK_SYNC_REDUCE: {
        LLVMValueRef p = LLVMBuildZExt(c->b, to_bool(c, val(c, a[0]), a[0]->type), c->i32, "");
        return c->target->barrier_reduce(c, k->id, p);
    }
    case IK_FENCE: c->target->fence(c, (FenceScope)k->id); return NULL;
    case IK_WARP: return lower_warp(c, (WarpOp)k->id, a, nargs, rt);
    case IK_LANEMASK_LT: {
        LLVMValueRef one = LLVMConstInt(c->i32, 1, 0);
        return LLVMBuildSub(c->b, LLVMBuildShl(c->b, one, special(c, SP_LANEID, 0), ""), one, "");
    }
    case IK_CONST_ARRAY: return lower_const_array(c, in);
    case IK_PRINT: return lower_print(c, a, nargs);
    case IK_FMA: {
        LLVMValueRef x = val_as(c, a[0], rt), y = val_as(c, a[1], rt), z = val_as(c, a[2], rt);
        LLVMTypeRef t = llvm_type(c, rt);
        LLVMValueRef args[3] = {x, y, z};
        return fp(c, call_intrinsic(c, "llvm.fma", &t, 1, args, 3));
    }
    case IK_BITS: {
        Type *xt = k->id == BITS_BREV ? rt : a[0]->type; /* brev works on numba's u4/u8 */
        LLVMValueRef x = val_as(c, a[0], xt);
        LLVMTypeRef t = llvm_type(c, xt);
        LLVMValueRef no = LLVMConstInt(c->i1, 0, 0), args[2] = {x, no};
        switch (k->id) {
        case BITS_POPC: return call_intrinsic(c, "llvm.ctpop", &t, 1, &x, 1);
        case BITS_CLZ: return call_intrinsic(c, "llvm.ctlz", &t, 1, args, 2);
        case BITS_FFS: { /* CUDA's __ffs: 1 + the lowest set bit's position, 0 for 0 */
            LLVMValueRef tz = call_intrinsic(c, "llvm.cttz", &t, 1, args, 2);
            LLVMValueRef pos = LLVMBuildAdd(c->b, tz, LLVMConstInt(t, 1, 0), "");
            LLVMValueRef zero = LLVMBuildICmp(c->b, LLVMIntEQ, x, LLVMConstInt(t, 0, 0), "");
            pos = LLVMBuildSelect(c->b, zero, LLVMConstInt(t, 0, 0), pos, "");
            return LLVMBuildZExtOrBitCast(c->b, type_bits(xt) > 32 ? LLVMBuildTrunc(c->b, pos, c->i32, "") : pos,
                                          c->i32, "");
        }
        default: return call_intrinsic(c, "llvm.bitreverse", &t, 1, &x, 1); /* BITS_BREV */
        }
    }
    case IK_MATH_CLASS: {
        Type *xt = a[0]->type;
        if (!is_float(xt)) return LLVMConstInt(c->i1, k->id == CLASS_ISFINITE, 0); /* ints are finite */
        LLVMValueRef x = val(c, a[0]);
        if (k->id == CLASS_ISNAN) return LLVMBuildFCmp(c->b, LLVMRealUNO, x, x, "");
        /* no fast-math flags here: they would let LLVM assume the answer */
        LLVMTypeRef t = LLVMTypeOf(x);
        LLVMValueRef ax = call_intrinsic(c, "llvm.fabs", &t, 1, &x, 1), inf = LLVMConstReal(t, INFINITY);
        return LLVMBuildFCmp(c->b, k->id == CLASS_ISINF ? LLVMRealOEQ : LLVMRealOLT, ax, inf, "");
    }
    case IK_MATH_SCALE: {
        static const double factor[] = {[SCALE_RADIANS] = M_PI / 180.0, [SCALE_DEGREES] = 180.0 / M_PI}; /* numba's */
        LLVMValueRef x = val_as(c, a[0], rt);
        return fp(c, LLVMBuildFMul(c->b, x, LLVMConstReal(LLVMTypeOf(x), factor[k->id]), ""));
    }
    case IK_RANGE: {
        /* numba-cuda's range takes int32, int64 or uint64 arguments, a float converted to the
         * first that fits the others best: int32 unless one is a 64-bit integer. A float is
         * truncated toward zero to that width (saturating: NaN is 0), then widened. */
        bool wide = false;
        for (int i = 0; i < nargs; i++)
            if (!is_float(a[i]->type) && type_bits(a[i]->type) == 64) wide = true;
#define RANGE_ARG(x) (is_float((x)->type) && !wide ? convert(c, val_as(c, (x), &ty_int32), &ty_int32, &ty_int64) \
                                                  : val_as(c, (x), &ty_int64))
        LLVMValueRef start = ci64(c, 0), stop, step = ci64(c, 1);
        if (nargs == 1) {
            stop = RANGE_ARG(a[0]);
        } else {
            start = RANGE_ARG(a[0]);
            stop = RANGE_ARG(a[1]);
            if (nargs == 3) step = RANGE_ARG(a[2]);
        }
#undef RANGE_ARG
        if (nargs == 3 && c->errbuf) check_step(c, LLVMBuildICmp(c->b, LLVMIntEQ, step, ci64(c, 0), ""), GJ_STEP0_RANGE);
        LLVMValueRef r = LLVMGetUndef(llvm_type(c, &ty_range));
        r = LLVMBuildInsertValue(c->b, r, start, 0, "");
        r = LLVMBuildInsertValue(c->b, r, stop, 1, "");
        return LLVMBuildInsertValue(c->b, r, step, 2, "");
    }
    case IK_LEN:
        if (a[0]->type->kind == TY_TUPLE) return ci64(c, a[0]->type->n);
        if (a[0]->type->kind == TY_RANGE) return range_len(c, val(c, a[0]));
        return LLVMBuildExtractValue(c->b, LLVMBuildExtractValue(c->b, val(c, a[0]), 1, ""), 0, "");
    case IK_ABS: {
        if (is_complex(a[0]->type)) return complex_abs(c, val(c, a[0]), a[0]->type);
        LLVMValueRef x = val_as(c, a[0], rt);
        if (is_float(rt)) return fcall1(c, "llvm.fabs", x);
        if (!is_signed(rt)) return x;
        LLVMValueRef args[2] = {x, LLVMConstInt(c->i1, 0, 0)};
        LLVMTypeRef t = llvm_type(c, rt);
        return call_intrinsic(c, "llvm.abs", &t, 1, args, 2);
    }
    case IK_MIN:
    case IK_MAX: {
        bool mx = k->kind == IK_MAX;
        if (nargs == 2 && is_float(a[0]->type) && is_float(a[1]->type))
            /* two floats: numba.cuda's fmin/fmax (PTX min/max; a NaN loses), not Python's compare */
            return fcall2(c, mx ? "llvm.maxnum" : "llvm.minnum", val_as(c, a[0], rt), val_as(c, a[1], rt));
        LLVMValueRef *v;
        Type **vt;
        if ((nargs = spread_args(c, a, nargs, &v, &vt)) < 0) return NULL;
        LLVMValueRef r = convert(c, v[0], vt[0], rt);
        for (int i = 1; i < nargs; i++) {
            LLVMValueRef x = convert(c, v[i], vt[i], rt);
            LLVMValueRef better;
            /* Python's min/max keep the first of equals and compare with <, > */
            if (is_float(rt))
                better = LLVMBuildFCmp(c->b, mx ? LLVMRealOGT : LLVMRealOLT, x, r, "");
            else if (rt->kind == TY_BOOL)
                better = mx ? LLVMBuildAnd(c->b, x, LLVMBuildNot(c->b, r, ""), "")
                            : LLVMBuildAnd(c->b, r, LLVMBuildNot(c->b, x, ""), "");
            else
                better = LLVMBuildICmp(c->b,
                                       mx ? (is_signed(rt) ? LLVMIntSGT : LLVMIntUGT)
                                          : (is_signed(rt) ? LLVMIntSLT : LLVMIntULT),
                                       x, r, "");
            r = LLVMBuildSelect(c->b, better, x, r, "");
        }
        return r;
    }
    case IK_TUPLE: return nargs ? val(c, a[0]) : LLVMGetUndef(llvm_type(c, rt));
    case IK_SUM:
    case IK_ANYALL: {
        LLVMValueRef *v;
        Type **vt;
        int n = spread_args(c, a, nargs, &v, &vt);
        if (n < 0) return NULL;
        if (k->kind == IK_ANYALL) {
            LLVMValueRef r = LLVMConstInt(c->i1, (unsigned long long)k->id, 0); /* any(()) False, all(()) True */
            for (int i = 0; i < n; i++) {
                LLVMValueRef b = to_bool(c, v[i], vt[i]);
                r = k->id ? LLVMBuildAnd(c->b, r, b, "") : LLVMBuildOr(c->b, r, b, "");
            }
            return r;
        }
        if (!n) return LLVMConstNull(llvm_type(c, rt));
        LLVMValueRef r = convert(c, v[0], vt[0], rt);
        for (int i = 1; i < n; i++) {
            LLVMValueRef x = convert(c, v[i], vt[i], rt);
            if (is_complex(rt))
                r = complex_binop(c, BIN_ADD, r, x, rt, NULL);
            else if (is_float(rt))
                r = fp(c, LLVMBuildFAdd(c->b, r, x, ""));
            else
                r = LLVMBuildAdd(c->b, r, x, "");
        }
        return r;
    }
    case IK_ROUND: {
        Type *xt = a[0]->type;
        if (nargs == 1) {
            if (!is_float(xt)) return val_as(c, a[0], rt);
            LLVMValueRef x = val(c, a[0]);
            LLVMTypeRef t = LLVMTypeOf(x);
            return convert(c, call_intrinsic(c, "llvm.roundeven", &t, 1, &x, 1), xt, rt); /* half to even */
        }
        LLVMValueRef n = val_as(c, a[1], &ty_int64);
        if (is_float(xt)) return convert(c, round_float_ndigits(c, val_as(c, a[0], &ty_float64), n), &ty_float64, rt);
        return convert(c, round_int_ndigits(c, val_as(c, a[0], &ty_int64), n), &ty_int64, rt);
    }
    case IK_POWMOD:
        return pow_mod(c, val_as(c, a[0], &ty_int64), val_as(c, a[1], &ty_int64), val_as(c, a[2], &ty_int64));
    case IK_SEQ: return NULL; /* build.c loops over its arguments */
    case IK_ISINSTANCE: return LLVMConstInt(c->i1, (unsigned long long)in->ival, 0);
    case IK_BIT_COUNT: {
        Instr *xi = in->args[0]->op == IR_ATTR ? in->args[0]->args[0] : a[0];
        LLVMValueRef x = val(c, xi);
        if (xi->type->kind == TY_BOOL) return LLVMBuildZExt(c->b, x, c->i64, "");
        LLVMTypeRef t = llvm_type(c, xi->type);
        if (is_signed(xi->type)) { /* Python counts the bits of abs(x) */
            LLVMValueRef args[2] = {x, LLVMConstInt(c->i1, 0, 0)};
            x = call_intrinsic(c, "llvm.abs", &t, 1, args, 2);
        }
        return LLVMBuildZExtOrBitCast(c->b, call_intrinsic(c, "llvm.ctpop", &t, 1, &x, 1), c->i64, "");
    }
    case IK_FREXP: return lower_out_param(c, "frexp", a[0], rt);
    case IK_MODF: return lower_out_param(c, "modf", a[0], rt);
    case IK_LDEXP: {
        LLVMTypeRef t = llvm_type(c, rt), params[2] = {t, c->i32}, fnty = LLVMFunctionType(t, params, 2, 0);
        LLVMValueRef fn = c->target->math_fn(c, rt->kind == TY_FLOAT32 ? "ldexpf" : "ldexp", fnty);
        if (!fn) return NULL;
        /* an exponent beyond +-2**20 overflows or underflows any float alike: clamp it into C's int */
        LLVMValueRef i = val_as(c, a[1], &ty_int64), lim = ci64(c, 1 << 20), nlim = ci64(c, -(1 << 20));
        i = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSGT, i, lim, ""), lim, i, "");
        i = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, i, nlim, ""), nlim, i, "");
        LLVMValueRef args[2] = {val_as(c, a[0], rt), LLVMBuildTrunc(c->b, i, c->i32, "")};
        return LLVMBuildCall2(c->b, fnty, fn, args, 2, "");
    }
    case IK_NP_ROUND: return fcall1(c, k->name, val_as(c, a[0], rt));
    case IK_NP_LOGICAL: {
        LLVMValueRef x = to_bool(c, val(c, a[0]), a[0]->type), y = to_bool(c, val(c, a[1]), a[1]->type);
        if (k->id == 0) return LLVMBuildAnd(c->b, x, y, "");
        return k->id == 1 ? LLVMBuildOr(c->b, x, y, "") : LLVMBuildXor(c->b, x, y, "");
    }
    case IK_NP_SIGN: { /* (x > 0) - (x < 0); a NaN stays NaN */
        LLVMValueRef x = val_as(c, a[0], rt);
        LLVMTypeRef t = llvm_type(c, rt);
        if (is_float(rt)) {
            LLVMValueRef zero = LLVMConstReal(t, 0.0);
            LLVMValueRef s1 =
                    LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOGT, x, zero, ""), LLVMConstReal(t, 1.0),
                                    LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOLT, x, zero, ""),
                                                    LLVMConstReal(t, -1.0), zero, ""),
                                    "");
            return LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealUNO, x, x, ""), x, s1, "");
        }
        LLVMValueRef zero = LLVMConstInt(t, 0, 0);
        LLVMValueRef pos =
                LLVMBuildZExt(c->b, LLVMBuildICmp(c->b, is_signed(rt) ? LLVMIntSGT : LLVMIntUGT, x, zero, ""), t, "");
        if (!is_signed(rt)) return pos;
        return LLVMBuildSub(c->b, pos, LLVMBuildZExt(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, x, zero, ""), t, ""), "");
    }
    case IK_NP_MINMAX: {
        LLVMValueRef x = val_as(c, a[0], rt), y = val_as(c, a[1], rt);
        bool mx = k->id & 1;
        if (!is_float(rt)) {
            LLVMIntPredicate p =
                    mx ? (is_signed(rt) ? LLVMIntSGT : LLVMIntUGT) : (is_signed(rt) ? LLVMIntSLT : LLVMIntULT);
            return LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, p, x, y, ""), x, y, "");
        }
        LLVMValueRef r = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, mx ? LLVMRealOGT : LLVMRealOLT, x, y, ""), x, y, "");
        LLVMValueRef xnan = LLVMBuildFCmp(c->b, LLVMRealUNO, x, x, ""),
                     ynan = LLVMBuildFCmp(c->b, LLVMRealUNO, y, y, "");
        if (k->id < 2) return LLVMBuildSelect(c->b, xnan, x, r, "");          /* minimum/maximum: a NaN wins */
        return LLVMBuildSelect(c->b, xnan, y, LLVMBuildSelect(c->b, ynan, x, r, ""), ""); /* fmin/fmax: a NaN loses */
    }
    case IK_CAST:
        if (nargs == 0) return LLVMConstNull(llvm_type(c, rt));
        if (a[0]->type->kind == TY_STR) /* rounded from the double as any float constant is */
            return convert(c, LLVMConstReal(c->f64, str_float(a[0])), &ty_float64, rt);
        return val_as(c, a[0], rt);
    case IK_COMPLEX: {
        LLVMValueRef z = LLVMConstNull(llvm_type(c, rt));
        if (nargs == 1) z = val_as(c, a[0], rt);
        if (nargs == 2) z = complex_make(c, rt, val_as(c, a[0], &ty_float64), val_as(c, a[1], &ty_float64));
        return z;
    }
    case IK_CONJUGATE: {
        LLVMValueRef z = val(c, in->args[0]->args[0]);
        LLVMValueRef im = LLVMBuildFNeg(c->b, LLVMBuildExtractValue(c->b, z, 1, ""), "");
        return LLVMBuildInsertValue(c->b, z, im, 1, "");
    }
    case IK_CMATH: return cmath_lower(c, (CmathFn)k->id, a, nargs, rt);
    case IK_LIBDEVICE: return lower_libdevice_call(c, in);
    case IK_REDUCE: return lower_reduction(c, (ReduceFn)k->id, in, rt);
    case IK_RESHAPE: return lower_reshape(c, in, rt);
    case IK_ARRAY_COPY: return lower_array_copy(c, in, rt);
    case IK_VIEW_DTYPE: return lower_view_dtype(c, in, rt);
    case IK_MATH1: {
        LLVMValueRef x = val_as(c, a[0], rt);
        if (!strcmp(k->name, "sqrt")) return fcall1(c, "llvm.sqrt", x);
        if (!strcmp(k->name, "fabs")) return fcall1(c, "llvm.fabs", x);
        return math_call(c, k->name, rt, &x, 1);
    }
    case IK_MATH_TOINT: {
        Type *ft = a[0]->type;
        if (!is_float(ft)) return val_as(c, a[0], rt);
        LLVMValueRef x = fcall1(c, arena_printf(&c->arena, "llvm.%s", k->name), val(c, a[0]));
        return convert(c, x, ft, rt);
    }
    case IK_MATH2: {
        LLVMValueRef x = val_as(c, a[0], rt), y = val_as(c, a[1], rt);
        if (!strcmp(k->name, "copysign")) return fcall2(c, "llvm.copysign", x, y);
        LLVMValueRef args[2] = {x, y};
        return math_call(c, k->name, rt, args, 2);
    }
    default: internal_error(c, in->loc, "lower: intrinsic %s", k->path); return NULL;
    }
}

/* ---- instructions ---- */
