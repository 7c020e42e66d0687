/* desugar.c: what build.c rewrites into plainer IR as it builds: calls of
 * operator.add and its kin (pow, divmod, NumPy's arithmetic ufuncs) become
 * the operators, and a for loop over an array, a tuple, enumerate() or zip()
 * a count over range(len(...)) whose body starts by reading item k. */
#include <string.h>

#include "gj.h"

/* ---- calls that are operators ---- */

/* operator.add(a, b) and the rest of the operator module's number
 * functions, pow(a, b) and divmod(a, b) are the operators themselves: they
 * become the same IR, so their typing and lowering are the operators'. */
/* clang-format off */
static const struct { const char *path; IrOp op; int code, nargs; } operator_calls[] = {
    {"_operator.add", IR_BINOP, BIN_ADD, 2}, {"_operator.iadd", IR_BINOP, BIN_ADD, 2},
    {"_operator.sub", IR_BINOP, BIN_SUB, 2}, {"_operator.isub", IR_BINOP, BIN_SUB, 2},
    {"_operator.mul", IR_BINOP, BIN_MUL, 2}, {"_operator.imul", IR_BINOP, BIN_MUL, 2},
    {"_operator.truediv", IR_BINOP, BIN_DIV, 2}, {"_operator.itruediv", IR_BINOP, BIN_DIV, 2},
    {"_operator.floordiv", IR_BINOP, BIN_FLOORDIV, 2}, {"_operator.ifloordiv", IR_BINOP, BIN_FLOORDIV, 2},
    {"_operator.mod", IR_BINOP, BIN_MOD, 2}, {"_operator.imod", IR_BINOP, BIN_MOD, 2},
    {"_operator.pow", IR_BINOP, BIN_POW, 2}, {"_operator.ipow", IR_BINOP, BIN_POW, 2},
    {"_operator.and_", IR_BINOP, BIN_AND, 2}, {"_operator.iand", IR_BINOP, BIN_AND, 2},
    {"_operator.or_", IR_BINOP, BIN_OR, 2}, {"_operator.ior", IR_BINOP, BIN_OR, 2},
    {"_operator.xor", IR_BINOP, BIN_XOR, 2}, {"_operator.ixor", IR_BINOP, BIN_XOR, 2},
    {"_operator.lshift", IR_BINOP, BIN_LSHIFT, 2}, {"_operator.ilshift", IR_BINOP, BIN_LSHIFT, 2},
    {"_operator.rshift", IR_BINOP, BIN_RSHIFT, 2}, {"_operator.irshift", IR_BINOP, BIN_RSHIFT, 2},
    {"_operator.lt", IR_CMP, CMP_LT, 2}, {"_operator.le", IR_CMP, CMP_LE, 2},
    {"_operator.eq", IR_CMP, CMP_EQ, 2}, {"_operator.ne", IR_CMP, CMP_NE, 2},
    {"_operator.gt", IR_CMP, CMP_GT, 2}, {"_operator.ge", IR_CMP, CMP_GE, 2},
    {"_operator.neg", IR_UNARY, UN_NEG, 1}, {"_operator.pos", IR_UNARY, UN_POS, 1},
    {"_operator.invert", IR_UNARY, UN_INVERT, 1}, {"_operator.inv", IR_UNARY, UN_INVERT, 1},
    {"_operator.not_", IR_UNARY, UN_NOT, 1}, {"_operator.truth", IR_TRUTH, 0, 1},
    {"builtins.pow", IR_BINOP, BIN_POW, 2},
    /* NumPy's arithmetic ufuncs on scalars */
    {"numpy.add", IR_BINOP, BIN_ADD, 2}, {"numpy.subtract", IR_BINOP, BIN_SUB, 2},
    {"numpy.multiply", IR_BINOP, BIN_MUL, 2}, {"numpy.divide", IR_BINOP, BIN_DIV, 2},
    {"numpy.floor_divide", IR_BINOP, BIN_FLOORDIV, 2}, {"numpy.remainder", IR_BINOP, BIN_MOD, 2},
    {"numpy.power", IR_BINOP, BIN_POW, 2}, {"numpy.bitwise_and", IR_BINOP, BIN_AND, 2},
    {"numpy.bitwise_or", IR_BINOP, BIN_OR, 2}, {"numpy.bitwise_xor", IR_BINOP, BIN_XOR, 2},
    {"numpy.left_shift", IR_BINOP, BIN_LSHIFT, 2}, {"numpy.right_shift", IR_BINOP, BIN_RSHIFT, 2},
    {"numpy.less", IR_CMP, CMP_LT, 2}, {"numpy.less_equal", IR_CMP, CMP_LE, 2},
    {"numpy.equal", IR_CMP, CMP_EQ, 2}, {"numpy.not_equal", IR_CMP, CMP_NE, 2},
    {"numpy.greater", IR_CMP, CMP_GT, 2}, {"numpy.greater_equal", IR_CMP, CMP_GE, 2},
    {"numpy.negative", IR_UNARY, UN_NEG, 1}, {"numpy.positive", IR_UNARY, UN_POS, 1},
    {"numpy.invert", IR_UNARY, UN_INVERT, 1}, {"numpy.logical_not", IR_UNARY, UN_NOT, 1},
};
/* clang-format on */

bool is_operator_path(const char *path) {
    for (size_t i = 0; i < sizeof operator_calls / sizeof operator_calls[0]; i++)
        if (!strcmp(operator_calls[i].path, path)) return true;
    return !strcmp(path, "builtins.divmod");
}

/* Emits the operator a call of `path` stands for into *out; *out stays NULL
 * when it is an ordinary call. */
int operator_call(Builder *bd, const char *path, Instr **argv, int n, Instr **out) {
    Ctx *c = bd->c;
    *out = NULL;
    if (!strcmp(path, "builtins.divmod")) { /* (a // b, a % b) */
        if (n != 2) return error_at(c, ERR_TYPING, bd->loc, "divmod() takes 2 arguments (%d given)", n);
        Instr *q = build_emit(bd, IR_BINOP, 2), *r = q ? build_emit(bd, IR_BINOP, 2) : NULL,
              *t = r ? build_emit(bd, IR_TUPLE, 2) : NULL;
        if (!t) return -1;
        q->ival = BIN_FLOORDIV;
        r->ival = BIN_MOD;
        q->args[0] = r->args[0] = argv[0];
        q->args[1] = r->args[1] = argv[1];
        t->args[0] = q;
        t->args[1] = r;
        *out = t;
        return 0;
    }
    for (size_t i = 0; i < sizeof operator_calls / sizeof operator_calls[0]; i++) {
        if (strcmp(operator_calls[i].path, path)) continue;
        if (!strcmp(path, "builtins.pow") && n != 2) return 0; /* pow(a, b, m) is an intrinsic */
        /* np.add(a, b, out): a ufunc with its output array, a loop (ufuncloop.c) */
        if (!strncmp(path, "numpy.", 6) && n == operator_calls[i].nargs + 1) return 0;
        if (n != operator_calls[i].nargs) {
            const char *name = strncmp(path, "_operator.", 10) ? path_pretty(path) : path + 1; /* operator.add */
            return error_at(c, ERR_TYPING, bd->loc, "%s() takes %d argument%s (%d given)", name,
                            operator_calls[i].nargs, operator_calls[i].nargs == 1 ? "" : "s", n);
        }
        Instr *v = build_emit(bd, operator_calls[i].op, n);
        if (!v) return -1;
        v->ival = operator_calls[i].code;
        v->name = operator_calls[i].path; /* NumPy's ufuncs divide by zero as IEEE does (lower.c) */
        for (int k = 0; k < n; k++) v->args[k] = argv[k];
        *out = v;
        return 0;
    }
    return 0;
}

/* ---- for loops over sequences ---- */

bool is_call_of(const Instr *v, const char *path) {
    return v->op == IR_CALL && v->args[0]->op == IR_OBJ && !v->args[0]->func && v->args[0]->name &&
            !strcmp(v->args[0]->name, path);
}

/* path(args...), for a builtin the code did not name itself. */
Instr *call_builtin(Builder *bd, const char *path, Instr **args, int n) {
    Instr *f = build_emit(bd, IR_OBJ, 0), *v = f ? build_emit(bd, IR_CALL, n + 1) : NULL;
    if (!v) return NULL;
    f->name = path;
    v->args[0] = f;
    for (int i = 0; i < n; i++) v->args[1 + i] = args[i];
    return v;
}

/* enumerate(x, start=0): x, and start or NULL. */
static int enumerate_args(Builder *bd, Instr *e, Instr **x, Instr **start) {
    int n = e->nargs - 1;
    if (n < 1 || n > 2 || (e->nkw && (e->nkw > 1 || n != 2 || strcmp(e->kwnames[0], "start"))))
        return error_at(bd->c, ERR_TYPING, e->loc, "enumerate() takes an iterable and an optional start");
    *x = e->args[1];
    *start = n == 2 ? e->args[2] : NULL;
    return 0;
}

/* How many items a loop over `s` takes: len(s), the shortest of zip's. */
Instr *seq_len(Builder *bd, Instr *s) {
    Ctx *c = bd->c;
    if (is_call_of(s, "builtins.enumerate")) {
        Instr *x, *start;
        if (enumerate_args(bd, s, &x, &start) < 0) return NULL;
        s->ival = 1; /* consumed by this loop (typeinfer refuses it elsewhere) */
        return seq_len(bd, x);
    }
    if (is_call_of(s, "builtins.zip")) {
        Instr *lens[256];
        int n = s->nargs - 1;
        if (n < 1 || s->nkw) {
            error_at(c, ERR_TYPING, s->loc, "zip() in a kernel takes one or more iterables and no keywords");
            return NULL;
        }
        if (n > 255) {
            error_at(c, ERR_UNSUPPORTED, s->loc, "too many iterables in zip() (limit is 255)");
            return NULL;
        }
        s->ival = 1;
        for (int i = 0; i < n; i++)
            if (!(lens[i] = seq_len(bd, s->args[1 + i]))) return NULL;
        return n == 1 ? lens[0] : call_builtin(bd, "builtins.min", lens, n);
    }
    Instr *n = call_builtin(bd, "builtins.len", &s, 1);
    if (n) n->ival = 1; /* a loop's: typeinfer says so if s has no length */
    return n;
}

/* Item k of `s` (k in range(seq_len(s))): s[k], (start + k, x[k]) for
 * enumerate, a tuple of items for zip. */
Instr *seq_item(Builder *bd, Instr *s, Instr *k) {
    if (is_call_of(s, "builtins.enumerate")) {
        Instr *x, *start;
        if (enumerate_args(bd, s, &x, &start) < 0) return NULL;
        Instr *i = k;
        if (start) {
            if (!(i = build_emit(bd, IR_BINOP, 2))) return NULL;
            i->ival = BIN_ADD;
            i->args[0] = k;
            i->args[1] = start;
        }
        Instr *item = seq_item(bd, x, k), *t = item ? build_emit(bd, IR_TUPLE, 2) : NULL;
        if (!t) return NULL;
        t->args[0] = i;
        t->args[1] = item;
        return t;
    }
    if (is_call_of(s, "builtins.zip")) {
        Instr *items[256];
        int n = s->nargs - 1;
        for (int j = 0; j < n; j++)
            if (!(items[j] = seq_item(bd, s->args[1 + j], k))) return NULL;
        Instr *t = build_emit(bd, IR_TUPLE, n);
        if (!t) return NULL;
        for (int j = 0; j < n; j++) t->args[j] = items[j];
        return t;
    }
    Instr *g = build_emit(bd, IR_GETITEM, 2);
    if (!g) return NULL;
    g->args[0] = s;
    g->args[1] = k;
    g->ival = 1; /* a loop's item */
    return g;
}

/* Build one block; queue its successors. */
