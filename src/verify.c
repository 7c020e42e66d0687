/* verify.c: the IR verifier. Run after build_ir and after infer_types (in
 * compile.c's column, and on every device function), it checks what the
 * later passes take for granted, so that a broken invariant is reported as an
 * internal error naming the pass that broke it and the instruction, instead
 * of a crash or wrong code further down:
 *   - every instruction and constant has a location (line > 0), an operation
 *     from irops.h and, where irops.h fixes it, that many operands;
 *   - every operand is a value (not a statement) defined in this function: an
 *     instruction placed in one of its blocks, or one of its constants;
 *   - every reachable (built) block ends in exactly one terminator, and its
 *     branches go to reachable blocks of this function;
 *   - after infer_types, every value has a known type.
 * It runs when GPUJIT_DEBUG contains "verify" and always in builds without
 * NDEBUG (setup sets c->verify). */
#include <stdarg.h>
#include <string.h>

#include "gj.h"

typedef struct Check {
    Ctx *c;
    const char *pass;
    Instr **owner;    /* by id: the instruction (or constant) that holds it */
    bool typed;
} Check;

static int fail(Check *k, Block *b, Instr *in, const char *fmt, ...) {
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!in)
        return internal_error(k->c, NO_LOCATION, "IR verifier, after %s: block %d of %s: %s", k->pass, b->id,
                              k->c->funcname, what);
    return internal_error(k->c, in->loc, "IR verifier, after %s: %%%d = %s in block %d of %s: %s", k->pass, in->id,
                          in->op < IR_NUM_OPS ? ir_op_info[in->op].name : "?", b->id, k->c->funcname, what);
}

/* Is `v` one of this function's constants? Constants sit in no block (lower.c
 * materialises them where used), so they are known by their id; a constant
 * tuple's items are constants too. */
static bool own_const(Check *k, Instr *v, int depth) {
    if (v->id < 0 || v->id >= k->c->nvalues || depth > 32) return false;
    if (k->owner[v->id] && k->owner[v->id] != v) return false;
    k->owner[v->id] = v;
    if (v->ckind != CK_TUPLE) return true;
    if (v->nargs && !v->args) return false;
    for (int i = 0; i < v->nargs; i++)
        if (!v->args[i] || v->args[i]->op != IR_CONST || !own_const(k, v->args[i], depth + 1)) return false;
    return true;
}

static bool own_block(Ctx *c, Block *t) {
    return t && t->id >= 0 && t->id < c->nblocks && c->blocks[t->id] == t && t->built;
}

static int check_instr(Check *k, Block *b, Instr *in) {
    if ((unsigned)in->op >= IR_NUM_OPS) return fail(k, b, in, "unknown operation %d", (int)in->op);
    const IrOpInfo *op = &ir_op_info[in->op];
    if (in->loc.line <= 0) return fail(k, b, in, "no source location");
    if (op->nargs >= 0 && in->nargs != op->nargs) return fail(k, b, in, "%d operands, not %d", in->nargs, op->nargs);
    if (in->nargs && !in->args) return fail(k, b, in, "no operand array");
    for (int a = 0; a < in->nargs; a++) {
        Instr *v = in->args[a];
        if (!v) return fail(k, b, in, "operand %d is missing", a);
        bool defined =
                v->op == IR_CONST ? own_const(k, v, 0) : v->id >= 0 && v->id < k->c->nvalues && k->owner[v->id] == v;
        if (!defined) return fail(k, b, in, "operand %d is not defined in this function", a);
        if (v->loc.line <= 0) return fail(k, b, in, "operand %d (%%%d) has no source location", a, v->id);
        if ((unsigned)v->op >= IR_NUM_OPS || !(ir_op_info[v->op].flags & IRF_VALUE))
            return fail(k, b, in, "operand %d is a statement, not a value", a);
        if (k->typed && !type_known(v->type)) return fail(k, b, in, "operand %d has no type", a);
    }
    if (in->op == IR_BR || in->op == IR_CONDBR) {
        if (!own_block(k->c, in->target) || (in->op == IR_CONDBR && !own_block(k->c, in->target2)))
            return fail(k, b, in, "branches to a block that is not a reachable block of this function");
    }
    if (k->typed && (op->flags & IRF_VALUE) && !type_known(in->type)) return fail(k, b, in, "a value with no type");
    return 0;
}

int verify_ir(Ctx *c, const char *pass) {
    if (!c->verify) return 0;
    Check k = {c, pass, arena_alloc(&c->arena, sizeof(Instr *) * (size_t)(c->nvalues + 1)), c->typed};
    if (!k.owner) return -1;
    /* first every placed instruction, so that operands may come from any block */
    for (int i = 0; i < c->nblocks; i++) {
        Block *b = c->blocks[i];
        if (!b->built) continue;
        for (int j = 0; j < b->instrs.n; j++) {
            Instr *in = b->instrs.v[j];
            if (!in) return fail(&k, b, NULL, "instruction %d is missing", j);
            if (in->id < 0 || in->id >= c->nvalues) return fail(&k, b, in, "id %d out of range", in->id);
            if (k.owner[in->id]) return fail(&k, b, in, "placed twice (id %d)", in->id);
            k.owner[in->id] = in;
        }
    }
    for (int i = 0; i < c->nblocks; i++) {
        Block *b = c->blocks[i];
        if (!b->built) continue;
        if (b->instrs.n == 0) return fail(&k, b, NULL, "empty block");
        for (int j = 0; j < b->instrs.n; j++) {
            Instr *in = b->instrs.v[j];
            RETURN_IF_ERROR(check_instr(&k, b, in));
            bool term = ir_op_info[in->op].flags & IRF_TERM, last = j == b->instrs.n - 1;
            if (term && !last) return fail(&k, b, in, "a terminator before the block's end");
            if (!term && last) return fail(&k, b, in, "the block does not end in a terminator");
        }
    }
    return 0;
}

/* For tests (_core._verify_selftest): break one invariant of a built, typed
 * function, so that the verifier can be seen to report it. */
int verify_break(Ctx *c, const char *what) {
    Block *b = c->blocks[0];
    Instr *first = b->instrs.n ? b->instrs.v[0] : NULL, *user = NULL;
    for (int j = 0; j < b->instrs.n && !user; j++)
        if (((Instr *)b->instrs.v[j])->nargs) user = b->instrs.v[j];
    if (!first || !user) return internal_error(c, NO_LOCATION, "verify_break: nothing to break");
    if (!strcmp(what, "location")) {
        first->loc = NO_LOCATION;
    } else if (!strcmp(what, "type")) {
        user->args[0]->type = &ty_unknown;
    } else if (!strcmp(what, "operand")) {
        user->args[0] = NULL;
    } else if (!strcmp(what, "foreign")) {
        Instr *stray = arena_alloc(&c->arena, sizeof *stray);
        if (!stray) return -1;
        *stray = *user->args[0];
        stray->op = IR_ARG;
        user->args[0] = stray;
    } else if (!strcmp(what, "terminator")) {
        b->instrs.n--;
    } else if (!strcmp(what, "early-terminator")) {
        b->instrs.v[0] = b->instrs.v[b->instrs.n - 1];
        b->instrs.v[b->instrs.n - 1] = first;
    } else {
        PyErr_Format(PyExc_ValueError, "verify_break: no invariant '%s'", what);
        return -1;
    }
    return 0;
}
