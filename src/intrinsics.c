/* intrinsics.c: what each name a kernel can call means -- gpujit's (numba.cuda's)
 * thread geometry, memory, barriers and atomics, Python's builtins, math and
 * NumPy's casts: its typing rule (used by typeinfer.c) and its lowering (used
 * by lower.c). A name is known by its dotted path (build.c resolves objects
 * to paths), so aliases of modules and functions work. */
#include <string.h>

#include "gj.h"

#define TERR(...) return (error_at(c, ERR_TYPING, in->loc, __VA_ARGS__), (Type *)NULL)
#define UNSUP(...) return (error_at(c, ERR_UNSUPPORTED, in->loc, __VA_ARGS__), (Type *)NULL)

/* ---- the table ---- */

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

const Intrinsic *intrinsic_lookup(const char *path) {
    for (size_t i = 0; i < sizeof intrinsics / sizeof intrinsics[0]; i++)
        if (strcmp(intrinsics[i].path, path) == 0) return &intrinsics[i];
    return NULL;
}

/* Is `path` a prefix of some intrinsic, so that attributes of it make sense? */
bool intrinsic_namespace(const char *path) {
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof intrinsics / sizeof intrinsics[0]; i++)
        if (strncmp(intrinsics[i].path, path, n) == 0 && intrinsics[i].path[n] == '.') return true;
    return false;
}

/* A user-facing name for a path: "gpujit.threadIdx" -> "gpu.threadIdx". */
const char *path_pretty(const char *path) {
    if (strncmp(path, "gpujit.", 7) == 0) return path + 7;
    if (strncmp(path, "builtins.", 9) == 0) return path + 9;
    return path;
}

/* ---- typing ---- */

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
            return error_at(c, ERR_TYPING, in->loc, "%s() missing argument '%s'",
                            path_pretty(in->args[0]->type->path), params[i]);
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
        const Intrinsic *k = intrinsic_lookup(d->type->path);
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


Type *type_intrinsic_call(Ctx *c, Instr *in) {
    Type *ft = in->args[0]->type;
    if (!type_known(ft)) return &ty_unknown;
    for (int i = 1; i < in->nargs; i++)
        if (!type_known(in->args[i]->type)) return &ty_unknown;
    if (ft->kind != TY_OBJ) TERR("cannot call a value of type %s", type_name(c, ft));
    const Intrinsic *k = intrinsic_lookup(ft->path);
    if (!k || k->kind == IK_SPECIAL) {
        if (ft->path && strncmp(ft->path, "math.", 5) == 0)
            UNSUP("%s() is not supported yet in kernels", ft->path);
        UNSUP("calling %s is not supported in kernels", path_pretty(ft->path));
    }
    in->intr = k;
    int nargs = in->nargs - 1;
    Type **at = arena_alloc(&c->arena, sizeof(Type *) * (size_t)(nargs + 1));
    if (!at) return NULL;
    for (int i = 0; i < nargs; i++) at[i] = in->args[1 + i]->type;
    if (in->nkw && k->kind != IK_SHARED_ARRAY && k->kind != IK_LOCAL_ARRAY)
        TERR("%s() does not take keyword arguments", path_pretty(k->path));
    switch (k->kind) {
    case IK_GRID: case IK_GRIDSIZE: {
        bool ok = nargs == 1;
        int64_t n = ok ? const_int(in->args[1], &ok) : 0;
        if (!ok || n < 1 || n > 3) TERR("%s() takes one constant argument, 1, 2 or 3", path_pretty(k->path));
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
        if (nargs < 2) TERR("%s() of fewer than two numbers is not supported", path_pretty(k->path));
        Type *r = at[0];
        for (int i = 0; i < nargs; i++) {
            if (!is_scalar(at[i])) TERR("%s() arguments must be numbers, not %s", path_pretty(k->path), type_name(c, at[i]));
            if (i) r = type_eq(r, at[i]) ? r : promote_arith(r, at[i]);
        }
        return r;
    }
    case IK_CAST:
        if (nargs == 0) return type_scalar(k->id); /* int() == 0 */
        if (nargs != 1 || !is_scalar(at[0])) TERR("%s() takes one number", path_pretty(k->path));
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
        UNSUP("%s() is not supported", path_pretty(k->path));
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
    case IK_GRID: case IK_GRIDSIZE: {
        int n = (int)a[0]->ival;
        if (n == 1) return grid_value(c, k->kind == IK_GRIDSIZE, 0);
        LLVMValueRef t = LLVMGetUndef(llvm_type(c, rt));
        for (int d = 0; d < n; d++) t = LLVMBuildInsertValue(c->b, t, grid_value(c, k->kind == IK_GRIDSIZE, d), (unsigned)d, "");
        return t;
    }
    case IK_SYNCTHREADS: c->target->barrier(c); return NULL;
    case IK_SHARED_ARRAY: case IK_LOCAL_ARRAY: {
        Instr *shape = in->nkw && !strcmp(in->kwnames[0], "shape") ? a[nargs - in->nkw] : a[0];
        int64_t n = 1;
        if (shape->ckind == 5) for (int i = 0; i < shape->nargs; i++) n *= shape->args[i]->ival;
        else n = shape->ival;
        LLVMTypeRef arrty = LLVMArrayType2(mem_type(c, rt->elem), (uint64_t)n);
        LLVMValueRef data;
        if (k->kind == IK_SHARED_ARRAY) {
            data = c->target->shared_array(c, arrty, in->shared_off);
            if (!data) return NULL;
        } else {
            data = entry_alloca(c, arrty, "local");
            LLVMSetAlignment(data, 16);
        }
        return const_shape_array(c, rt, data, shape);
    }
    case IK_ATOMIC_ADD: {
        LLVMValueRef p = elem_ptr(c, a[0], a[1]);
        Type *et = rt;
        LLVMValueRef v = val_as(c, a[2], et);
        LLVMValueRef r = LLVMBuildAtomicRMW(c->b, is_float(et) ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd, p, v,
                                            LLVMAtomicOrderingMonotonic, 0);
        return r;
    }
    case IK_RANGE: {
        LLVMValueRef start = ci64(c, 0), stop, step = ci64(c, 1);
        if (nargs == 1) {
            stop = val_as(c, a[0], &ty_int64);
        } else {
            start = val_as(c, a[0], &ty_int64);
            stop = val_as(c, a[1], &ty_int64);
            if (nargs == 3) step = val_as(c, a[2], &ty_int64);
        }
        LLVMValueRef r = LLVMGetUndef(llvm_type(c, &ty_range));
        r = LLVMBuildInsertValue(c->b, r, start, 0, "");
        r = LLVMBuildInsertValue(c->b, r, stop, 1, "");
        return LLVMBuildInsertValue(c->b, r, step, 2, "");
    }
    case IK_LEN:
        if (a[0]->type->kind == TY_TUPLE) return ci64(c, a[0]->type->n);
        return LLVMBuildExtractValue(c->b, LLVMBuildExtractValue(c->b, val(c, a[0]), 1, ""), 0, "");
    case IK_ABS: {
        LLVMValueRef x = val_as(c, a[0], rt);
        if (is_float(rt)) return fcall1(c, "llvm.fabs", x);
        if (!is_signed(rt)) return x;
        LLVMValueRef args[2] = {x, LLVMConstInt(c->i1, 0, 0)};
        LLVMTypeRef t = llvm_type(c, rt);
        return call_intrinsic(c, "llvm.abs", &t, 1, args, 2);
    }
    case IK_MIN: case IK_MAX: {
        bool mx = k->kind == IK_MAX;
        LLVMValueRef r = val_as(c, a[0], rt);
        for (int i = 1; i < nargs; i++) {
            LLVMValueRef x = val_as(c, a[i], rt);
            LLVMValueRef better;
            /* Python's min/max keep the first of equals and compare with <, > */
            if (is_float(rt)) better = LLVMBuildFCmp(c->b, mx ? LLVMRealOGT : LLVMRealOLT, x, r, "");
            else if (rt->kind == TY_BOOL) better = mx ? LLVMBuildAnd(c->b, x, LLVMBuildNot(c->b, r, ""), "") : LLVMBuildAnd(c->b, r, LLVMBuildNot(c->b, x, ""), "");
            else better = LLVMBuildICmp(c->b, mx ? (is_signed(rt) ? LLVMIntSGT : LLVMIntUGT) : (is_signed(rt) ? LLVMIntSLT : LLVMIntULT), x, r, "");
            r = LLVMBuildSelect(c->b, better, x, r, "");
        }
        return r;
    }
    case IK_CAST:
        if (nargs == 0) return LLVMConstNull(llvm_type(c, rt));
        return val_as(c, a[0], rt);
    case IK_MATH1: {
        LLVMValueRef x = val_as(c, a[0], rt);
        if (!strcmp(k->name, "sqrt")) return fcall1(c, "llvm.sqrt", x);
        if (!strcmp(k->name, "fabs")) return fcall1(c, "llvm.fabs", x);
        return math_call(c, k->name, rt, &x, 1);
    }
    case IK_MATH_TOINT: {
        Type *ft = a[0]->type;
        if (!is_float(ft)) return val_as(c, a[0], rt);
        LLVMValueRef x = fcall1(c, !strcmp(k->name, "floor") ? "llvm.floor" : "llvm.ceil", val(c, a[0]));
        return convert(c, x, ft, rt);
    }
    case IK_MATH2: {
        LLVMValueRef x = val_as(c, a[0], rt), y = val_as(c, a[1], rt);
        if (!strcmp(k->name, "copysign")) return fcall2(c, "llvm.copysign", x, y);
        LLVMValueRef args[2] = {x, y};
        return math_call(c, k->name, rt, args, 2);
    }
    default:
        internal_error(c, in->loc, "lower: intrinsic %s", k->path);
        return NULL;
    }
}

/* ---- instructions ---- */

