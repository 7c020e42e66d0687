/* literals.c: numba's literal arguments. A device function's parameter read where a
 * constant is needed (a shape, a dtype name, a branch to prune) takes the constant its
 * caller passed, and the value becomes part of the function's specialisation; a call
 * fits a specialisation only with the same values. */
#include <string.h>

#include "gj.h"

/* Is variable `var` assigned anywhere but by the entry's store of its argument? */
static bool reassigned(Ctx *c, int var) {
    for (int bi = 0; bi < c->nblocks; bi++) {
        Block *b = c->blocks[bi];
        for (int k = 0; b->built && k < b->instrs.n; k++) {
            Instr *in = b->instrs.v[k];
            if (in->op == IR_STORE_VAR && in->var == var && in->args[0]->op != IR_ARG) return true;
        }
    }
    return false;
}

/* A constant of the caller, copied into this function's IR (ids are per function). */
static Instr *copy_const(Ctx *c, Instr *k, Loc loc) {
    Instr *n = arena_alloc(&c->arena, sizeof *n);
    if (!n) return NULL;
    n->op = IR_CONST;
    n->loc = loc;
    n->id = c->nvalues++;
    n->ckind = k->ckind;
    n->ival = k->ival;
    n->fval = k->fval;
    n->fimag = k->fimag;
    n->is_uint64 = k->is_uint64;
    n->name = k->name ? arena_strdup(&c->arena, k->name) : NULL;
    n->nargs = k->nargs;
    if (k->ckind == CK_TUPLE) {
        n->args = arena_alloc(&c->arena, sizeof(Instr *) * (size_t)(k->nargs ? k->nargs : 1));
        if (!n->args) return NULL;
        for (int i = 0; i < k->nargs; i++)
            if (!(n->args[i] = copy_const(c, k->args[i], loc))) return NULL;
    }
    return n;
}

Instr *arg_literal(Ctx *c, Instr *v, LiteralUse use) {
    if (v->op == IR_CONST) return v;
    if (v->op != IR_LOAD_VAR || !c->self || !c->argvals) return NULL;
    int i = v->var;
    if (i >= c->nargs || i >= 64 || !c->argvals[i] || reassigned(c, i)) return NULL;
    PyCodeObject *co = (PyCodeObject *)c->code;
    if ((co->co_flags & CO_VARARGS) && i >= co->co_argcount) return NULL; /* *args: not one parameter */
    if (use == LIT_PEEK) return c->argvals[i];
    Func *f = c->self;
    if (!f->literals[i] && !(f->literals[i] = copy_const(c, c->argvals[i], v->loc))) return NULL;
    f->literal_args |= 1ULL << i;
    if (use == LIT_NEED) {
        if (!(f->literal_needed >> i & 1)) f->literal_loc = v->loc;
        f->literal_needed |= 1ULL << i;
    }
    return f->literals[i];
}

/* Two constants of the IR hold the same value. */
static bool const_equal(const Instr *a, const Instr *b) {
    if (a->ckind != b->ckind || a->nargs != b->nargs) return false;
    switch (a->ckind) {
    case CK_INT:
    case CK_BOOL: return a->ival == b->ival && a->is_uint64 == b->is_uint64;
    case CK_FLOAT: return memcmp(&a->fval, &b->fval, sizeof a->fval) == 0;
    case CK_COMPLEX:
        return memcmp(&a->fval, &b->fval, sizeof a->fval) == 0 && memcmp(&a->fimag, &b->fimag, sizeof a->fimag) == 0;
    case CK_STR: return strcmp(a->name, b->name) == 0;
    case CK_TUPLE:
        for (int i = 0; i < a->nargs; i++)
            if (!const_equal(a->args[i], b->args[i])) return false;
        return true;
    case CK_NONE: return true;
    }
    return false;
}

/* Does specialisation `f` fit this call's values? Not where it was compiled
 * for a parameter's value (numba's literal arguments) and the call passes
 * another, or a run-time value; that is an error where f needs the value. */
int literals_fit(Ctx *caller, Instr *call, Func *f, const char *name, bool *fits) {
    *fits = true;
    for (int i = 0; i < f->sub->nargs && i < 64; i++) {
        if (!(f->literal_args >> i & 1)) continue;
        Instr *k = arg_literal(caller, call->args[1 + i], LIT_PEEK);
        if (!k && (f->literal_needed >> i & 1))
            return error_at(caller, ERR_TYPING, call->loc,
                            "argument %d of %s() must be a compile-time constant: %s:%d needs its value", i + 1, name,
                            f->sub->filename, f->literal_loc.line);
        if (!k || !const_equal(k, f->literals[i])) *fits = false;
    }
    return 0;
}
