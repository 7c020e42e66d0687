/* prune.c: dead branches on literal arguments, as numba prunes them. Where a
 * device function's caller passes a constant for a parameter that an `if`
 * tests directly (`if flag:`, `if p is None:`), only the branch that constant takes is kept:
 * the other is never typed or compiled, so it may hold code that would not
 * type for these arguments. The constant joins the specialisation's key
 * (arg_literal), so a call with another value, or a run-time one, gets its
 * own specialisation. A test of constants the code reads (`if FLAG is True:`
 * on a closure's cell) is decided the same way. Requires: build_ir; runs before infer_types. */
#include "gj.h"

/* Python's truth of a constant; -1 where it is not a plain value. */
static int truth_of(const Instr *k) {
    switch (k->ckind) {
    case CK_INT:
    case CK_BOOL: return k->ival != 0;
    case CK_NONE: return 0;
    case CK_FLOAT: return k->fval != 0.0;
    case CK_COMPLEX: return k->fval != 0.0 || k->fimag != 0.0;
    case CK_STR: return k->name && k->name[0] != 0;
    case CK_TUPLE: return k->nargs > 0;
    }
    return -1;
}

static Instr *terminator(Block *b) {
    Instr *t = b->instrs.n ? b->instrs.v[b->instrs.n - 1] : NULL;
    return t && (ir_op_info[t->op].flags & IRF_TERM) ? t : NULL;
}

/* Unbuild the blocks no branch reaches any more: typing and lowering skip them. */
static int drop_unreachable(Ctx *c) {
    bool *live = arena_alloc(&c->arena, sizeof(bool) * (size_t)c->nblocks);
    Block **work = arena_alloc(&c->arena, sizeof(Block *) * (size_t)c->nblocks);
    if (!live || !work) return PyErr_NoMemory(), -1;
    int n = 0;
    live[0] = true;
    work[n++] = c->blocks[0];
    while (n) {
        Instr *t = terminator(work[--n]);
        Block *succ[2] = {t && (t->op == IR_BR || t->op == IR_CONDBR) ? t->target : NULL,
                          t && t->op == IR_CONDBR ? t->target2 : NULL};
        for (int k = 0; k < 2; k++)
            if (succ[k] && !live[succ[k]->id]) {
                live[succ[k]->id] = true;
                work[n++] = succ[k];
            }
    }
    for (int i = 0; i < c->nblocks; i++)
        if (!live[i]) c->blocks[i]->built = false;
    return 0;
}

/* `len(args) == k` on a device function's *args: its length is the specialisation's, so
 * code for other lengths (args[1] where one was given) is never typed. -1: not such a test. */
static int varargs_len_test(Ctx *c, const Instr *cond) {
    PyCodeObject *co = (PyCodeObject *)c->code;
    if (!(co->co_flags & CO_VARARGS) || cond->op != IR_CMP || cond->nargs != 2) return -1;
    const Instr *l = cond->args[0], *k = cond->args[1];
    if (!is_call_of(l, "builtins.len") || l->nargs != 2 || l->args[1]->op != IR_LOAD_VAR ||
        l->args[1]->var != co->co_argcount || k->op != IR_CONST || k->ckind != CK_INT)
        return -1;
    int stores = 0; /* only the entry's store gives it a value */
    for (int i = 0; i < c->nblocks; i++)
        for (int j = 0; c->blocks[i]->built && j < c->blocks[i]->instrs.n; j++) {
            const Instr *in = c->blocks[i]->instrs.v[j];
            stores += in->op == IR_STORE_VAR && in->var == co->co_argcount;
        }
    if (stores != 1) return -1;
    long long n = c->nargs - co->co_argcount, v = k->ival;
    switch ((CmpOp)cond->ival) {
    case CMP_LT: return n < v;
    case CMP_LE: return n <= v;
    case CMP_EQ: return n == v;
    case CMP_NE: return n != v;
    case CMP_GT: return n > v;
    case CMP_GE: return n >= v;
    }
    return -1;
}

static bool is_none_const(const Instr *k) { return k->op == IR_CONST && k->ckind == CK_NONE; }

/* `p is None` or `p is not None` on a parameter the caller gave a constant (an
 * omitted argument's None default too): whether it holds, with *cond set to
 * the parameter's load; -1 where the constant is not known; -2 for any other
 * condition. The branch not taken may use p as what it is not (numba's
 * pruning of Optional arguments). */
static int none_test(Ctx *c, Instr **cond) {
    Instr *t = *cond;
    if (t->op != IR_CMP || (t->ival != CMP_IS && t->ival != CMP_IS_NOT)) return -2;
    Instr *x = t->args[0], *y = t->args[1];
    if (is_none_const(x)) x = t->args[1], y = t->args[0];
    if (!is_none_const(y) || x->op != IR_LOAD_VAR) return -2;
    Instr *k = arg_literal(c, x, LIT_PEEK);
    if (!k) return -1;
    *cond = x;
    return (k->ckind == CK_NONE) != (t->ival == CMP_IS_NOT);
}

/* `if FLAG is True:` where FLAG is a constant the code reads (a closure's cell, a global):
 * whether it holds; -2 for any other condition. An overload's implementation tests the
 * types it was made for this way, and its other branch may not type for them. */
static int const_test(const Instr *t) {
    if (t->op == IR_CONST) return truth_of(t) < 0 ? -2 : truth_of(t);
    if (t->op != IR_CMP || t->nargs != 2) return -2;
    const Instr *x = t->args[0], *y = t->args[1];
    if (x->op != IR_CONST || y->op != IR_CONST) return -2;
    bool plain_x = x->ckind == CK_BOOL || x->ckind == CK_NONE, plain_y = y->ckind == CK_BOOL || y->ckind == CK_NONE;
    bool num_x = x->ckind == CK_BOOL || x->ckind == CK_INT, num_y = y->ckind == CK_BOOL || y->ckind == CK_INT;
    switch ((CmpOp)t->ival) {
    case CMP_IS:
    case CMP_IS_NOT: /* identity is only certain for True, False and None */
        if (!plain_x || !plain_y) return -2;
        return (x->ckind == y->ckind && x->ival == y->ival) == (t->ival == CMP_IS);
    case CMP_EQ:
    case CMP_NE:
        if (!num_x || !num_y) return -2;
        return (x->ival == y->ival) == (t->ival == CMP_EQ);
    default: return -2;
    }
}

int prune_literal_branches(Ctx *c) {
    if (!c->argvals || !c->nblocks) return 0;
    /* every block must end in a branch or a return for reachability to be known */
    for (int i = 0; i < c->nblocks; i++)
        if (c->blocks[i]->built && !terminator(c->blocks[i])) return 0;
    bool pruned = false;
    for (int i = 0; i < c->nblocks; i++) {
        Block *b = c->blocks[i];
        if (!b->built) continue;
        Instr *t = terminator(b);
        if (t->op != IR_CONDBR) continue;
        Instr *cond = t->args[0];
        while (cond->op == IR_TRUTH) cond = cond->args[0]; /* 3.13's TO_BOOL adds one */
        int taken = varargs_len_test(c, cond);
        if (taken < 0) taken = const_test(cond);
        bool literal = taken < 0; /* the test reads a parameter's constant: the kernel's key holds it */
        if (literal) {
            taken = none_test(c, &cond);
            if (taken == -2) {
                if (cond->op != IR_LOAD_VAR) continue; /* a parameter, not a constant the code spells */
                Instr *k = arg_literal(c, cond, LIT_PEEK);
                taken = k ? truth_of(k) : -1;
            }
        }
        if (taken < 0) continue;
        if (literal && !arg_literal(c, cond, LIT_KEY))
            return PyErr_Occurred() ? -1 : internal_error(c, t->loc, "prune: no literal");
        t->op = IR_BR;
        t->nargs = 0;
        if (!taken) t->target = t->target2;
        t->target2 = NULL;
        pruned = true;
    }
    return pruned ? drop_unreachable(c) : 0;
}
