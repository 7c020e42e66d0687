/* typeinfer.c: give every IR value and variable a type, iterating to a
 * fixpoint (variables widen by unification as assignments are seen), and
 * resolve calls and attributes to intrinsics. Rules follow numba.cuda.
 * Requires: build_ir. After it, every reachable value has a known type. */
#include <string.h>

#include "gj.h"

/* Paths name objects: gpujit's own are registered by the package
 * ("gpujit.grid"); modules by name ("math"); builtins and NumPy types by
 * module and qualified name ("builtins.range", "numpy.float32"). */
static const Intrinsic intrinsics[] = {
    {"gpujit.threadIdx.x", IK_SPECIAL, SP_TID, 0}, {"gpujit.threadIdx.y", IK_SPECIAL, SP_TID, 1},
    {"gpujit.threadIdx.z", IK_SPECIAL, SP_TID, 2}, {"gpujit.blockDim.x", IK_SPECIAL, SP_NTID, 0},
    {"gpujit.blockDim.y", IK_SPECIAL, SP_NTID, 1}, {"gpujit.blockDim.z", IK_SPECIAL, SP_NTID, 2},
    {"gpujit.blockIdx.x", IK_SPECIAL, SP_CTAID, 0}, {"gpujit.blockIdx.y", IK_SPECIAL, SP_CTAID, 1},
    {"gpujit.blockIdx.z", IK_SPECIAL, SP_CTAID, 2}, {"gpujit.gridDim.x", IK_SPECIAL, SP_NCTAID, 0},
    {"gpujit.gridDim.y", IK_SPECIAL, SP_NCTAID, 1}, {"gpujit.gridDim.z", IK_SPECIAL, SP_NCTAID, 2},
    {"gpujit.laneid", IK_SPECIAL, SP_LANEID, 0}, {"gpujit.warpsize", IK_SPECIAL, SP_WARPSIZE, 0},
    {"gpujit.grid", IK_GRID}, {"gpujit.gridsize", IK_GRIDSIZE},
    {"gpujit.syncthreads", IK_SYNCTHREADS},
    {"gpujit.shared.array", IK_SHARED_ARRAY}, {"gpujit.local.array", IK_LOCAL_ARRAY},
    {"gpujit.atomic.add", IK_ATOMIC_ADD},
    {"builtins.range", IK_RANGE}, {"builtins.len", IK_LEN}, {"builtins.abs", IK_ABS},
    {"builtins.min", IK_MIN}, {"builtins.max", IK_MAX},
    {"builtins.int", IK_CAST, TY_INT64}, {"builtins.float", IK_CAST, TY_FLOAT64},
    {"builtins.bool", IK_CAST, TY_BOOL},
    {"numpy.bool", IK_CAST, TY_BOOL}, {"numpy.bool_", IK_CAST, TY_BOOL},
    {"numpy.int8", IK_CAST, TY_INT8}, {"numpy.int16", IK_CAST, TY_INT16},
    {"numpy.int32", IK_CAST, TY_INT32}, {"numpy.int64", IK_CAST, TY_INT64},
    {"numpy.uint8", IK_CAST, TY_UINT8}, {"numpy.uint16", IK_CAST, TY_UINT16},
    {"numpy.uint32", IK_CAST, TY_UINT32}, {"numpy.uint64", IK_CAST, TY_UINT64},
    {"numpy.float32", IK_CAST, TY_FLOAT32}, {"numpy.float64", IK_CAST, TY_FLOAT64},
    {"math.sqrt", IK_MATH1, 0, 0, "sqrt"}, {"math.fabs", IK_MATH1, 0, 0, "fabs"},
    {"math.floor", IK_MATH_TOINT, 0, 0, "floor"}, {"math.ceil", IK_MATH_TOINT, 0, 0, "ceil"},
    {"math.copysign", IK_MATH2, 0, 0, "copysign"},
};

static const Intrinsic *lookup(const char *path) {
    for (size_t i = 0; i < sizeof intrinsics / sizeof intrinsics[0]; i++)
        if (strcmp(intrinsics[i].path, path) == 0) return &intrinsics[i];
    return NULL;
}

/* Is `path` a prefix of some intrinsic, so that attributes of it make sense? */
static bool is_namespace(const char *path) {
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof intrinsics / sizeof intrinsics[0]; i++)
        if (strncmp(intrinsics[i].path, path, n) == 0 && intrinsics[i].path[n] == '.') return true;
    return false;
}

/* A user-facing name for a path: "gpujit.threadIdx" -> "gpu.threadIdx". */
static const char *pretty(const char *path) {
    if (strncmp(path, "gpujit.", 7) == 0) return path + 7;
    if (strncmp(path, "builtins.", 9) == 0) return path + 9;
    return path;
}

typedef struct { Ctx *c; bool changed; } TI;

#define TERR(...) return (error_at(c, ERR_TYPING, in->loc, __VA_ARGS__), (Type *)NULL)
#define UNSUP(...) return (error_at(c, ERR_UNSUPPORTED, in->loc, __VA_ARGS__), (Type *)NULL)

static bool known(const Type *t) { return t && t->kind != TY_UNKNOWN; }

static Type *const_type(Ctx *c, Instr *k) {
    switch (k->ckind) {
    case 0: return k->fval != 0.0 ? &ty_uint64 : &ty_int64;
    case 1: return &ty_float64;
    case 2: return &ty_bool;
    case 3: return &ty_none;
    case 4: return &ty_str;
    default: {
        Type *items[256];
        /* the items get their types too: lowering reads them (a[2, 1] indexes with a constant
         * tuple whose items are never an instruction's direct argument) */
        for (int i = 0; i < k->nargs && i < 256; i++) {
            items[i] = const_type(c, k->args[i]);
            if (!k->args[i]->type) k->args[i]->type = items[i];
        }
        return type_tuple(c, k->nargs, items);
    }
    }
}

/* Bind a call's positional and keyword arguments to parameter names. */
static int bind(Ctx *c, Instr *in, const char *const *params, int nparams, int required, Instr **out) {
    int npos = in->nargs - 1 - in->nkw;
    for (int i = 0; i < nparams; i++) out[i] = NULL;
    if (npos > nparams)
        return error_at(c, ERR_TYPING, in->loc, "%s() takes at most %d arguments (%d given)",
                        pretty(in->args[0]->type->path), nparams, npos);
    for (int i = 0; i < npos; i++) out[i] = in->args[1 + i];
    for (int k = 0; k < in->nkw; k++) {
        int p = -1;
        for (int i = 0; i < nparams; i++)
            if (strcmp(params[i], in->kwnames[k]) == 0) p = i;
        if (p < 0 || out[p])
            return error_at(c, ERR_TYPING, in->loc, "%s() got an unexpected keyword argument '%s'",
                            pretty(in->args[0]->type->path), in->kwnames[k]);
        out[p] = in->args[1 + npos + k];
    }
    for (int i = 0; i < required; i++)
        if (!out[i])
            return error_at(c, ERR_TYPING, in->loc, "%s() missing argument '%s'",
                            pretty(in->args[0]->type->path), params[i]);
    return 0;
}

/* The element type named by a dtype argument: np.float32, gpu.int32, 'float32'. */
static Type *dtype_of(Ctx *c, Instr *in, Instr *d) {
    if (d->op == IR_CONST && d->ckind == 4) {
        Type *t = type_from_name(d->name);
        if (t && is_scalar(t)) return t;
        TERR("unknown dtype '%s'", d->name);
    }
    if (d->type && d->type->kind == TY_OBJ) {
        const Intrinsic *k = lookup(d->type->path);
        if (k && k->kind == IK_CAST && strncmp(k->path, "builtins.", 9) != 0) return type_scalar(k->id);
        if (k && k->kind == IK_CAST) return type_scalar(k->id); /* int -> int64, float -> float64 */
    }
    TERR("dtype must be a NumPy/gpujit scalar type such as gpu.float32 (got %s)", type_name(c, d->type));
}

static int64_t const_int(Instr *v, bool *ok) {
    *ok = v->op == IR_CONST && (v->ckind == 0 || v->ckind == 2);
    return v->ival;
}

static Type *array_alloc_type(Ctx *c, Instr *in, bool shared) {
    static const char *const params[] = {"shape", "dtype"};
    Instr *a[2];
    if (bind(c, in, params, 2, 2, a) < 0) return NULL;
    Type *elem = dtype_of(c, in, a[1]);
    if (!elem) return NULL;
    Instr *shape = a[0];
    int ndim;
    int64_t n = 1;
    if (shape->op == IR_CONST && shape->ckind == 5) {
        ndim = shape->nargs;
        for (int i = 0; i < ndim; i++) {
            bool ok;
            int64_t d = const_int(shape->args[i], &ok);
            if (!ok || d <= 0) TERR("%s.array: each dimension must be a positive constant", shared ? "shared" : "local");
            if (n > ((int64_t)1 << 40) / d) TERR("%s.array: the array is too large", shared ? "shared" : "local");
            n *= d;
        }
        if (ndim < 1) TERR("array shape must have at least one dimension");
    } else {
        bool ok;
        n = const_int(shape, &ok);
        if (!ok)
            TERR("%s.array: the shape must be a compile-time constant (an int literal, a global, or a "
                 "tuple of them)", shared ? "shared" : "local");
        if (n <= 0) {
            if (shared && n == 0) UNSUP("dynamic shared memory (shape 0) comes with a later version of gpujit");
            TERR("array size must be positive");
        }
        ndim = 1;
    }
    size_t bytes = (size_t)n * (size_t)(type_bits(elem) / 8);
    if (shared && !in->alloc_done) {
        size_t align = 16;
        c->shared_bytes = (c->shared_bytes + align - 1) & ~(align - 1);
        in->shared_off = c->shared_bytes;
        in->alloc_done = true;
        c->shared_bytes += bytes;
        /* ptxas rejects more static .shared than this; say so here, at the line that asks */
        if (c->shared_bytes > 48 * 1024)
            TERR("shared arrays need %zu bytes; static shared memory is limited to 48 KiB per block",
                 c->shared_bytes);
    }
    return type_array(c, elem, ndim, 'C', shared ? AS_SHARED : AS_LOCAL);
}

static bool is_index(const Type *t) { return is_int(t) || (t && t->kind == TY_BOOL); }

static Type *type_call(TI *ti, Instr *in) {
    Ctx *c = ti->c;
    Type *ft = in->args[0]->type;
    if (!known(ft)) return &ty_unknown;
    for (int i = 1; i < in->nargs; i++)
        if (!known(in->args[i]->type)) return &ty_unknown;
    if (ft->kind != TY_OBJ) TERR("cannot call a value of type %s", type_name(c, ft));
    const Intrinsic *k = lookup(ft->path);
    if (!k || k->kind == IK_SPECIAL) {
        if (ft->path && strncmp(ft->path, "math.", 5) == 0)
            UNSUP("%s() is not supported yet in kernels", ft->path);
        UNSUP("calling %s is not supported in kernels", pretty(ft->path));
    }
    in->intr = k;
    int nargs = in->nargs - 1;
    Type **at = arena_alloc(&c->arena, sizeof(Type *) * (size_t)(nargs + 1));
    if (!at) return NULL;
    for (int i = 0; i < nargs; i++) at[i] = in->args[1 + i]->type;
    if (in->nkw && k->kind != IK_SHARED_ARRAY && k->kind != IK_LOCAL_ARRAY)
        TERR("%s() does not take keyword arguments", pretty(k->path));
    switch (k->kind) {
    case IK_GRID: case IK_GRIDSIZE: {
        bool ok = nargs == 1;
        int64_t n = ok ? const_int(in->args[1], &ok) : 0;
        if (!ok || n < 1 || n > 3) TERR("%s() takes one constant argument, 1, 2 or 3", pretty(k->path));
        if (n == 1) return &ty_int64;
        Type *items[3] = {&ty_int64, &ty_int64, &ty_int64};
        return type_tuple(c, (int)n, items);
    }
    case IK_SYNCTHREADS:
        if (nargs) TERR("syncthreads() takes no arguments");
        c->uses_barrier = true;
        return &ty_none;
    case IK_SHARED_ARRAY: return array_alloc_type(c, in, true);
    case IK_LOCAL_ARRAY: return array_alloc_type(c, in, false);
    case IK_ATOMIC_ADD: {
        if (nargs != 3) TERR("atomic.add(array, index, value) takes 3 arguments");
        Type *a = at[0];
        if (a->kind != TY_ARRAY) TERR("atomic.add: the first argument must be an array, not %s", type_name(c, a));
        TypeKind ek = a->elem->kind;
        if (ek != TY_INT32 && ek != TY_INT64 && ek != TY_UINT32 && ek != TY_UINT64 && ek != TY_FLOAT32 &&
            ek != TY_FLOAT64)
            TERR("atomic.add on %s arrays is not supported (int32, int64, uint32, uint64, float32, float64 are)",
                 type_name(c, a->elem));
        int nidx = at[1]->kind == TY_TUPLE ? at[1]->n : 1;
        if (nidx != a->ndim) TERR("atomic.add: %d indices for a %d-dimensional array", nidx, a->ndim);
        if (at[1]->kind == TY_TUPLE) {
            for (int i = 0; i < at[1]->n; i++)
                if (!is_index(at[1]->items[i])) TERR("atomic.add: indices must be integers");
        } else if (!is_index(at[1])) {
            TERR("atomic.add: the index must be an integer, not %s", type_name(c, at[1]));
        }
        if (!is_scalar(at[2])) TERR("atomic.add: the value must be a number, not %s", type_name(c, at[2]));
        return a->elem;
    }
    case IK_RANGE:
        if (nargs < 1 || nargs > 3) TERR("range expected 1 to 3 arguments, got %d", nargs);
        for (int i = 0; i < nargs; i++)
            if (!is_index(at[i])) TERR("range() arguments must be integers, not %s", type_name(c, at[i]));
        return &ty_range;
    case IK_LEN:
        if (nargs != 1) TERR("len() takes exactly one argument");
        if (at[0]->kind != TY_ARRAY && at[0]->kind != TY_TUPLE) TERR("len() of %s", type_name(c, at[0]));
        return &ty_int64;
    case IK_ABS:
        if (nargs != 1 || !is_scalar(at[0])) TERR("abs() takes one number");
        return at[0]->kind == TY_BOOL ? &ty_int64 : at[0];
    case IK_MIN: case IK_MAX: {
        if (nargs < 2) TERR("%s() of fewer than two numbers is not supported", pretty(k->path));
        Type *r = at[0];
        for (int i = 0; i < nargs; i++) {
            if (!is_scalar(at[i])) TERR("%s() arguments must be numbers, not %s", pretty(k->path), type_name(c, at[i]));
            if (i) r = type_eq(r, at[i]) ? r : promote_arith(r, at[i]);
        }
        return r;
    }
    case IK_CAST:
        if (nargs == 0) return type_scalar(k->id); /* int() == 0 */
        if (nargs != 1 || !is_scalar(at[0])) TERR("%s() takes one number", pretty(k->path));
        return type_scalar(k->id);
    case IK_MATH1: case IK_MATH_TOINT:
        if (nargs != 1 || !is_scalar(at[0])) TERR("%s() takes one number", k->path);
        if (k->kind == IK_MATH_TOINT) return is_float(at[0]) ? &ty_int64 : at[0]->kind == TY_BOOL ? &ty_int64 : at[0];
        return at[0]->kind == TY_FLOAT32 ? &ty_float32 : &ty_float64;
    case IK_MATH2: {
        if (nargs != 2 || !is_scalar(at[0]) || !is_scalar(at[1])) TERR("%s() takes two numbers", k->path);
        Type *r = promote_arith(at[0], at[1]);
        return r->kind == TY_FLOAT32 ? &ty_float32 : &ty_float64;
    }
    default:
        UNSUP("%s() is not supported", pretty(k->path));
    }
}

static Type *type_binop(Ctx *c, Instr *in, Type *a, Type *b) {
    static const char *const opstr[] = {"+", "&", "//", "<<", "@", "*", "%", "|", "**", ">>", "-", "/", "^"};
    const char *op = opstr[in->ival];
    if (!is_scalar(a) || !is_scalar(b)) {
        if (a->kind == TY_TUPLE && b->kind == TY_TUPLE && in->ival == BIN_ADD) {
            Type *items[512];
            if (a->n + b->n > 512) TERR("tuple too long");
            for (int i = 0; i < a->n; i++) items[i] = a->items[i];
            for (int i = 0; i < b->n; i++) items[a->n + i] = b->items[i];
            return type_tuple(c, a->n + b->n, items);
        }
        if (a->kind == TY_ARRAY || b->kind == TY_ARRAY)
            UNSUP("whole-array arithmetic (%s %s %s); index the elements in a loop instead", type_name(c, a), op,
                  type_name(c, b));
        TERR("unsupported operand types for %s: %s and %s", op, type_name(c, a), type_name(c, b));
    }
    switch (in->ival) {
    case BIN_ADD: case BIN_SUB: case BIN_MUL: case BIN_FLOORDIV: case BIN_MOD: case BIN_POW:
        in->conv = promote_arith(a, b);
        return in->conv;
    case BIN_DIV:
        in->conv = (is_float(a) || is_float(b)) ? promote_arith(a, b) : &ty_float64;
        return in->conv;
    case BIN_AND: case BIN_OR: case BIN_XOR:
        if (a->kind == TY_BOOL && b->kind == TY_BOOL) return in->conv = &ty_bool;
        /* fallthrough */
    case BIN_LSHIFT: case BIN_RSHIFT:
        if (is_float(a) || is_float(b)) TERR("unsupported operand types for %s: %s and %s", op, type_name(c, a), type_name(c, b));
        in->conv = promote_arith(a, b);
        if (is_float(in->conv)) in->conv = &ty_int64; /* int64 with uint64 */
        return in->conv;
    default:
        UNSUP("operator %s", op);
    }
}

static Type *type_getitem(Ctx *c, Instr *in, Type *o, Type *idx) {
    if (o->kind == TY_ARRAY) {
        int n = idx->kind == TY_TUPLE ? idx->n : 1;
        if (idx->kind == TY_TUPLE) {
            for (int i = 0; i < idx->n; i++)
                if (!is_index(idx->items[i]))
                    UNSUP("array index of type %s (slices and arrays as indices are not supported)",
                          type_name(c, idx->items[i]));
        } else if (!is_index(idx)) {
            if (is_float(idx)) TERR("array index must be an integer, not %s", type_name(c, idx));
            UNSUP("array index of type %s (slices are not supported)", type_name(c, idx));
        }
        if (n != o->ndim)
            TERR("%d %s for a %d-dimensional array (gpujit indexes single elements)", n,
                 n == 1 ? "index" : "indices", o->ndim);
        return o->elem;
    }
    if (o->kind == TY_TUPLE) {
        if (!is_index(idx)) TERR("tuple index must be an integer");
        Instr *iv = in->args[1];
        if (iv->op == IR_CONST) {
            int64_t i = iv->ival < 0 ? iv->ival + o->n : iv->ival;
            if (i < 0 || i >= o->n) TERR("tuple index %lld out of range", (long long)iv->ival);
            return o->items[i];
        }
        for (int i = 1; i < o->n; i++)
            if (!type_eq(o->items[i], o->items[0])) TERR("variable index into a tuple of mixed types");
        if (o->n == 0) TERR("index into an empty tuple");
        return o->items[0];
    }
    TERR("%s is not subscriptable", type_name(c, o));
}

static Type *type_of(TI *ti, Instr *in) {
    Ctx *c = ti->c;
    Type *a = in->nargs > 0 ? in->args[0]->type : NULL;
    Type *b = in->nargs > 1 ? in->args[1]->type : NULL;
    switch (in->op) {
    case IR_CONST: return const_type(c, in);
    case IR_ARG: return c->argtypes[in->ival];
    case IR_LOAD_VAR: return ctx_var(c, in->var)->type;
    case IR_STORE_VAR: {
        if (!known(a)) return &ty_none;
        Var *v = ctx_var(c, in->var);
        if (a->kind == TY_NONE && v->name[0] != '$') TERR("cannot assign None to '%s'", v->name);
        Type *u = unify(c, v->type, a);
        if (!u) {
            if (v->is_arg) TERR("cannot assign %s to argument '%s' of type %s", type_name(c, a), v->name, type_name(c, v->type));
            /* '$stack' variables carry values across blocks: the arms of `x if c else y`, `a or b` */
            if (v->name[0] == '$')
                TERR("the branches of this expression have incompatible types: %s and %s", type_name(c, a),
                     type_name(c, v->type));
            TERR("variable '%s' is %s here but %s elsewhere", v->name, type_name(c, a), type_name(c, v->type));
        }
        if (v->is_arg && !type_eq(u, v->type) && v->type->kind == TY_ARRAY)
            TERR("cannot assign %s to array argument '%s'", type_name(c, a), v->name);
        if (!type_eq(u, v->type)) {
            v->type = u;
            if (v->loc.line == 0 || v->loc.line == c->firstlineno) v->loc = in->loc;
            ti->changed = true;
        }
        return &ty_none;
    }
    case IR_OBJ: {
        const Intrinsic *k = lookup(in->name);
        if (k && k->kind == IK_SPECIAL) {
            in->intr = k;
            return &ty_int32;
        }
        if (!k && !is_namespace(in->name) && !(in->pyobj && (PyModule_Check(in->pyobj) || PyType_Check(in->pyobj) || PyCFunction_Check(in->pyobj))))
            UNSUP("%s is not supported in kernels", pretty(in->name));
        return type_obj(c, in->name);
    }
    case IR_ATTR:
        if (!known(a)) return &ty_unknown;
        if (a->kind == TY_ARRAY) {
            if (!strcmp(in->name, "shape") || !strcmp(in->name, "strides")) {
                Type *items[32];
                for (int i = 0; i < a->ndim; i++) items[i] = &ty_int64;
                return type_tuple(c, a->ndim, items);
            }
            if (!strcmp(in->name, "size") || !strcmp(in->name, "ndim") || !strcmp(in->name, "itemsize") ||
                !strcmp(in->name, "nbytes"))
                return &ty_int64;
            UNSUP("array attribute '%s'", in->name);
        }
        if (a->kind == TY_OBJ) return type_obj(c, arena_printf(&c->arena, "%s.%s", a->path, in->name));
        TERR("%s has no attribute '%s'", type_name(c, a), in->name);
    case IR_BINOP:
        if (!known(a) || !known(b)) return &ty_unknown;
        return type_binop(c, in, a, b);
    case IR_UNARY:
        if (!known(a)) return &ty_unknown;
        if (!is_scalar(a)) TERR("bad operand type for unary operator: %s", type_name(c, a));
        if (in->ival == UN_NOT) return &ty_bool;
        if (in->ival == UN_INVERT && is_float(a)) TERR("bad operand type for unary ~: %s", type_name(c, a));
        return in->conv = is_float(a) ? a : promote_arith(a, a);
    case IR_CMP:
        if (!known(a) || !known(b)) return &ty_unknown;
        if (!is_scalar(a) || !is_scalar(b))
            TERR("cannot compare %s with %s", type_name(c, a), type_name(c, b));
        in->conv = (a->kind == TY_BOOL && b->kind == TY_BOOL) ? &ty_int64 : promote_arith(a, b);
        return &ty_bool;
    case IR_TRUTH:
        if (!known(a)) return &ty_unknown;
        if (!is_scalar(a)) TERR("truth value of %s", type_name(c, a));
        return &ty_bool;
    case IR_CALL: return type_call(ti, in);
    case IR_GETITEM:
        if (!known(a) || !known(b)) return &ty_unknown;
        return type_getitem(c, in, a, b);
    case IR_SETITEM: {
        Type *v = in->args[2]->type;
        if (!known(a) || !known(b) || !known(v)) return &ty_none;
        if (a->kind != TY_ARRAY) TERR("%s does not support item assignment", type_name(c, a));
        if (!type_getitem(c, in, a, b)) return NULL;
        if (!is_scalar(v)) TERR("cannot store %s into an array of %s", type_name(c, v), type_name(c, a->elem));
        return &ty_none;
    }
    case IR_TUPLE: {
        Type *items[256];
        for (int i = 0; i < in->nargs; i++) {
            if (!known(in->args[i]->type)) return &ty_unknown;
            items[i] = in->args[i]->type;
        }
        return type_tuple(c, in->nargs, items);
    }
    case IR_TUPLE_GET:
        if (!known(a)) return &ty_unknown;
        if (a->kind != TY_TUPLE) TERR("cannot unpack %s", type_name(c, a));
        if (a->n != in->nkw) TERR("cannot unpack %d values into %d variables", a->n, in->nkw);
        return a->items[in->ival];
    case IR_GET_ITER:
        if (!known(a)) return &ty_unknown;
        if (a->kind != TY_RANGE) UNSUP("iteration over %s (only range() loops are supported)", type_name(c, a));
        return &ty_rangeiter;
    case IR_ITER_NEXT: return known(a) ? &ty_int64 : &ty_unknown;
    case IR_ITER_VALID: return &ty_bool;
    case IR_BR: case IR_RET: return &ty_none;
    case IR_CONDBR: return &ty_none;
    case IR_RET_VALUE: return &ty_none;
    }
    return &ty_unknown;
}

int infer_types(Ctx *c) {
    TI ti = {c, true};
    for (int iter = 0; ti.changed; iter++) {
        if (iter > 100) return internal_error(c, NO_LOCATION, "typeinfer: no fixpoint after 100 rounds");
        ti.changed = false;
        for (int bi = 0; bi < c->nblocks; bi++) {
            Block *b = c->blocks[bi];
            if (!b->built) continue;
            for (int k = 0; k < b->instrs.n; k++) {
                Instr *in = b->instrs.v[k];
                for (int a = 0; a < in->nargs; a++) {
                    Instr *v = in->args[a];
                    if (v->op == IR_CONST && !v->type) v->type = type_of(&ti, v);
                }
                Type *t = type_of(&ti, in);
                if (!t) return -1;
                if (!type_eq(t, in->type)) {
                    in->type = t;
                    ti.changed = true;
                }
            }
        }
    }
    /* Everything reachable must now be typed. */
    for (int bi = 0; bi < c->nblocks; bi++) {
        Block *b = c->blocks[bi];
        if (!b->built) continue;
        for (int k = 0; k < b->instrs.n; k++) {
            Instr *in = b->instrs.v[k];
            if (known(in->type)) continue;
            if (in->op == IR_LOAD_VAR) {
                Var *v = ctx_var(c, in->var);
                return error_at(c, ERR_TYPING, in->loc, "variable '%s' is used before it is assigned", v->name);
            }
            return error_at(c, ERR_TYPING, in->loc, "cannot infer the type of this expression");
        }
    }
    if (debug_enabled("types")) {
        StrBuf sb = {0};
        types_report(c, &sb);
        fprintf(stderr, "%s", sb.s ? sb.s : "");
        sb_free(&sb);
    }
    return 0;
}

void types_report(Ctx *c, StrBuf *out) {
    sb_printf(out, "%s (%s:%d)\n", c->funcname, c->filename, c->firstlineno);
    sb_printf(out, "  signature: (");
    for (int i = 0; i < c->nargs; i++) sb_printf(out, "%s%s", i ? ", " : "", type_name(c, c->argtypes[i]));
    sb_printf(out, ") -> %s\n", type_name(c, c->restype));
    for (int i = 0; i < c->vars.n; i++) {
        Var *v = ctx_var(c, i);
        if (v->name[0] == '$' || v->type->kind == TY_UNKNOWN) continue;
        sb_printf(out, "  line %4d  %-16s %s\n", v->loc.line, v->name, type_name(c, v->type));
    }
}
