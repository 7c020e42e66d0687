/* lanepos.c: where each lane is in the program (loop iteration counts plus
 * the instruction), for targets that tell which lanes reach a point together
 * at run time (activemask() on the CPU). */
#include "gj.h"

/* A lane's position is where it is in the program: for each loop around the
 * instruction, outermost first, the loop's header and the lane's iteration
 * of it, then the instruction itself. Blocks are numbered in bytecode order,
 * which CPython lays out so that only a loop's back edges jump backwards: so
 * positions compare lexicographically as the lanes' progress does, and lanes
 * reach the same point together exactly when their positions are equal.
 * A device function's positions follow its caller's position at the call
 * (the first PREFIX_CAP entries of it: deeper recursion shares them). */
enum { PREFIX_CAP = 48 };
static int64_t point_key(Block *b, int index) { return (int64_t)b->first << 16 | index; }

/* The loops of c (by their back edges, in kernels that call activemask()
 * on a target that wants positions): an iteration counter per header. */
int find_loops(Ctx *c) {
    if (!c->target->lane_positions || !ctx_root(c)->uses_activemask) return 0;
    c->loop_end = arena_alloc(&c->arena, sizeof(int) * (size_t)c->nblocks);
    c->loop_trip = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)c->nblocks);
    if (!c->loop_end || !c->loop_trip) return -1;
    for (int i = 0; i < c->nblocks; i++) c->loop_end[i] = -1;
    int nloops = 0;
    for (int i = 0; i < c->nblocks; i++) {
        Block *b = c->blocks[i];
        if (!b->built || !b->instrs.n) continue;
        Instr *t = b->instrs.v[b->instrs.n - 1];
        Block *to[2] = {t->op == IR_BR || t->op == IR_CONDBR ? t->target : NULL,
                        t->op == IR_CONDBR ? t->target2 : NULL};
        for (int k = 0; k < 2; k++)
            if (to[k] && to[k]->id <= b->id && c->loop_end[to[k]->id] < b->id) c->loop_end[to[k]->id] = b->id;
    }
    for (int i = 0; i < c->nblocks; i++) {
        if (c->loop_end[i] < 0) continue;
        c->loop_trip[i] = LLVMBuildAlloca(c->b, c->i64, "trip");
        LLVMBuildStore(c->b, ci64(c, 0), c->loop_trip[i]);
        nloops++;
    }
    int cap = 2 * nloops + 1 + (c->lane_prefix[0] ? PREFIX_CAP : 0);
    c->lane_pos = LLVMBuildAlloca(c->b, LLVMArrayType2(c->i64, (uint64_t)cap), "lanepos");
    return 0;
}

/* Before a branch: entering a loop from outside starts its count at 0, a
 * back edge counts one more iteration. */
void count_trips(Ctx *c, Instr *br) {
    if (!c->loop_trip) return;
    Block *from = c->cur_block, *to[2] = {br->target, br->op == IR_CONDBR ? br->target2 : NULL};
    if (to[1] == to[0]) to[1] = NULL;
    for (int k = 0; k < 2; k++) {
        Block *h = to[k];
        if (!h || !c->loop_trip[h->id]) continue;
        LLVMValueRef slot = c->loop_trip[h->id];
        bool back = from->id >= h->id && from->id <= c->loop_end[h->id];
        LLVMValueRef old = LLVMBuildLoad2(c->b, c->i64, slot, "");
        LLVMValueRef v = back ? LLVMBuildAdd(c->b, old, ci64(c, 1), "") : ci64(c, 0);
        if (to[1]) {
            LLVMValueRef cond = val(c, br->args[0]);
            v = k == 0 ? LLVMBuildSelect(c->b, cond, v, old, "") : LLVMBuildSelect(c->b, cond, old, v, "");
        }
        LLVMBuildStore(c->b, v, slot);
    }
}

LLVMValueRef lane_position(Ctx *c, LLVMValueRef *len) {
    if (!c->lane_pos) return NULL;
    Block *x = c->cur_block;
    LLVMTypeRef at = LLVMGetAllocatedType(c->lane_pos);
    LLVMValueRef n = ci64(c, 0);
    if (c->lane_prefix[0]) {
        LLVMValueRef plen = LLVMBuildZExt(c->b, c->lane_prefix[1], c->i64, "");
        LLVMValueRef big = LLVMBuildICmp(c->b, LLVMIntUGT, plen, ci64(c, PREFIX_CAP), "");
        n = LLVMBuildSelect(c->b, big, ci64(c, PREFIX_CAP), plen, "");
        LLVMValueRef src = LLVMBuildIntToPtr(c->b, c->lane_prefix[0], c->ptr, "");
        LLVMBuildMemCpy(c->b, c->lane_pos, 8, src, 8, LLVMBuildMul(c->b, n, ci64(c, 8), ""));
    }
    for (int i = 0; i <= x->id + 1; i++) {
        bool site = i == x->id + 1;
        if (!site && (!c->loop_trip[i] || x->id > c->loop_end[i])) continue;
        LLVMValueRef v[2] = {ci64(c, point_key(site ? x : c->blocks[i], site ? c->cur_index + 1 : 0)),
                             site ? NULL : LLVMBuildLoad2(c->b, c->i64, c->loop_trip[i], "")};
        for (int k = 0; k < 2 && v[k]; k++) {
            LLVMValueRef idx[2] = {ci64(c, 0), n};
            LLVMBuildStore(c->b, v[k], LLVMBuildInBoundsGEP2(c->b, at, c->lane_pos, idx, 2, ""));
            n = LLVMBuildAdd(c->b, n, ci64(c, 1), "");
        }
    }
    *len = LLVMBuildTrunc(c->b, n, c->i32, "");
    return LLVMBuildPtrToInt(c->b, c->lane_pos, c->i64, "");
}
