/* cfg.c: split the decoded instructions into basic blocks. A block starts at
 * the first instruction, at every jump target and after every jump or return.
 * Successors and entry stack depths are found by build.c, which simulates
 * the stack and so knows what each terminator leaves on it. */
#include <string.h>

#include "gj.h"

/* Where an exhausted FOR_ITER continues: past the END_FOR at its target
 * where END_FOR pops the iterator too (3.12), else past END_FOR and the
 * POP_TOP or POP_ITER after it that pops the iterator. */
int for_iter_exit(Ctx *c, const Insn *in) {
    int t = in->jump;
    int i = t >= 0 && t / 2 < c->nbytes / 2 + 1 ? c->insn_at[t / 2] : -1;
    while (i >= 0 && i < c->ninsns && c->insns[i].op == OP_END_FOR) {
        t = c->insns[i].next;
        if (pyv->end_for_pops == 1 && i + 1 < c->ninsns &&
            (c->insns[i + 1].op == OP_POP_TOP || c->insns[i + 1].op == OP_POP_ITER))
            t = c->insns[i + 1].next;
        i = t / 2 < c->nbytes / 2 + 1 ? c->insn_at[t / 2] : -1;
    }
    return t;
}

static bool ends_block(const Insn *in) {
    switch (in->op) {
    case OP_RETURN_VALUE:
    case OP_RETURN_CONST:
    case OP_JUMP_FORWARD:
    case OP_JUMP_BACKWARD:
    case OP_RAISE_VARARGS: return true;
    default: return in->jump >= 0;
    }
}

int build_cfg(Ctx *c) {
    int n = c->ninsns;
    bool *leader = arena_alloc(&c->arena, (size_t)n + 1);
    if (!leader) return -1;
    leader[0] = true;
    for (int i = 0; i < n; i++) {
        Insn *in = &c->insns[i];
        if (ends_block(in) && i + 1 < n) leader[i + 1] = true;
        if (in->jump >= 0) {
            int t = in->op == OP_FOR_ITER ? for_iter_exit(c, in) : in->jump;
            int ti = t >= 0 && t < c->nbytes ? c->insn_at[t / 2] : -1;
            if (ti < 0) return internal_error(c, in->loc, "cfg: jump from %d to %d lands nowhere", in->off, t);
            leader[ti] = true;
        }
    }
    int nb = 0;
    for (int i = 0; i < n; i++) nb += leader[i];
    c->blocks = arena_alloc(&c->arena, sizeof(Block *) * (size_t)nb);
    if (!c->blocks) return -1;
    c->nblocks = 0;
    for (int i = 0; i < n; i++) {
        if (!leader[i]) continue;
        Block *b = arena_alloc(&c->arena, sizeof *b);
        if (!b) return -1;
        b->id = c->nblocks;
        b->first = i;
        b->depth = -1;
        if (c->nblocks) c->blocks[c->nblocks - 1]->last = i - 1;
        c->blocks[c->nblocks++] = b;
    }
    c->blocks[c->nblocks - 1]->last = n - 1;
    return 0;
}

/* The block starting at byte offset `off`, or NULL. */
Block *block_at(Ctx *c, int off) {
    int i = off >= 0 && off < c->nbytes ? c->insn_at[off / 2] : -1;
    if (i < 0) return NULL;
    int lo = 0, hi = c->nblocks - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (c->blocks[mid]->first == i) return c->blocks[mid];
        if (c->blocks[mid]->first < i)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}
