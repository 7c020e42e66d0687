/* cpu_warp.c: warp-level operations among the fibers of a block (shuffles,
 * votes, match, syncwarp, activemask), for the block scheduler of
 * runtime/cpu.c. A lane of warp w (threads 32w..32w+31 in linear order, tx
 * fastest, which is also the order of the worker's fibers) stores its
 * operands in its Fiber and switches out; the scheduler calls
 * cpu_release_warp() once the warp's lanes have run as far as they can,
 * which releases, results written back into the Fibers, the lanes whose mask
 * names only lanes that have arrived (or exited). */
#define _GNU_SOURCE
#include <stdint.h>

#include "cpu_internal.h"

/* The lanes of the warp holding fiber i: *n fibers from the one returned. */
Fiber *cpu_warp_of(Fiber *fibers, uint32_t nthreads, uint32_t i, uint32_t *n) {
    uint32_t first = i & ~31u;
    *n = nthreads - first < 32 ? nthreads - first : 32;
    return &fibers[first];
}

/* blk->warp for fibers. activemask switches out too: lanes run one after
 * another here, so it can only be answered once the other lanes have run as
 * far as they can (cpu_release_warp). */
uint64_t cpu_fiber_warp(GjBlockCtx *blk, int32_t op, uint32_t mask, uint64_t value, int32_t arg) {
    Sched *s = blk->sched;
    Fiber *f = s->cur;
    if (op == GJ_WARP_YIELD) { /* block_run runs it again in its next round */
        s->nyield++;
        f->wait = WAIT_YIELD;
        cpu_to_sched(s, f);
        return 0;
    }
    f->op = op, f->mask = mask, f->value = value, f->arg = arg;
    f->wait = WAIT_WARP;
    cpu_to_sched(s, f);
    return f->result;
}

/* Computes the results of a warp operation for the lanes in `go`, reading
 * the operands of the lanes in `here` (those waiting at a warp operation). */
static void warp_results(Fiber *lanes, uint32_t go, uint32_t here) {
    for (uint32_t l = 0; l < 32; l++) {
        if (!(go >> l & 1)) continue;
        Fiber *f = &lanes[l];
        uint32_t in = f->mask & here, b = (uint32_t)f->arg & 31, src = l;
        int ok = 1;
        uint64_t r = 0;
        switch (f->op) {
        case GJ_WARP_SHFL_IDX: src = b; break;
        case GJ_WARP_SHFL_UP: ok = l >= b, src = l - b; break;
        case GJ_WARP_SHFL_DOWN: ok = l + b < 32, src = l + b; break;
        case GJ_WARP_SHFL_BFLY: src = l ^ b; break;
        default: break;
        }
        switch (f->op) {
        case GJ_WARP_SHFL_IDX:
        case GJ_WARP_SHFL_UP:
        case GJ_WARP_SHFL_DOWN:
        case GJ_WARP_SHFL_BFLY:
            /* out of range, or a source lane that is not here (undefined in
             * CUDA): the lane's own value, as PTX's clamp gives */
            r = ok && (here >> src & 1) ? lanes[src].value : f->value;
            break;
        case GJ_WARP_ALL:
        case GJ_WARP_ANY:
        case GJ_WARP_EQ:
        case GJ_WARP_BALLOT: {
            uint32_t ballot = 0;
            for (uint32_t j = 0; j < 32; j++)
                if (in >> j & 1 && lanes[j].value) ballot |= 1u << j;
            r = f->op == GJ_WARP_BALLOT    ? ballot
                    : f->op == GJ_WARP_ALL ? ballot == in
                    : f->op == GJ_WARP_ANY ? ballot != 0
                                           : ballot == 0 || ballot == in;
            break;
        }
        case GJ_WARP_MATCH_ANY:
        case GJ_WARP_MATCH_ALL: {
            uint32_t same = 0;
            for (uint32_t j = 0; j < 32; j++)
                if (in >> j & 1 && lanes[j].value == f->value) same |= 1u << j;
            r = f->op == GJ_WARP_MATCH_ANY ? same : same == in ? in : 0;
            break;
        }
        default: break; /* syncwarp */
        }
        f->result = r;
    }
}

/* Compares where two lanes waiting at activemask() are in the program: the
 * compiler passes the lane's position (value: an int64 array, arg: its
 * length; src/lower.c, lane_position), which orders as the lanes' progress
 * does. */
static int position_cmp(const Fiber *a, const Fiber *b) {
    const int64_t *pa = (const int64_t *)(uintptr_t)a->value, *pb = (const int64_t *)(uintptr_t)b->value;
    int32_t na = pa ? a->arg : 0, nb = pb ? b->arg : 0;
    for (int32_t i = 0; i < na && i < nb; i++)
        if (pa[i] != pb[i]) return pa[i] < pb[i] ? -1 : 1;
    return (na > nb) - (na < nb);
}

/* Releases, among the lanes of one warp (n of them) that wait at a warp
 * operation, either those whose mask names only lanes that wait at one too
 * or have exited (lanes past the end of a partial warp count as exited), or,
 * when there are none, the lanes at activemask() that are furthest behind,
 * all at one point: that point's active mask. Every lane has run as far as
 * it can, so a lane that has not reached that point yet never will on this
 * pass through it. activemask() is no rendezvous for the other operations:
 * a lane there does not count as arrived at them. Returns whether any lane
 * was released: 2 where some of them passed a syncwarp() (the race detector's
 * warp epoch), else 1. */
int cpu_release_warp(Fiber *lanes, uint32_t n) {
    uint32_t here = 0, am = 0, gone = n < 32 ? ~0u << n : 0;
    for (uint32_t l = 0; l < n; l++) {
        if (lanes[l].done)
            gone |= 1u << l;
        else if (lanes[l].wait == WAIT_WARP)
            *(lanes[l].op == GJ_WARP_ACTIVEMASK ? &am : &here) |= 1u << l;
    }
    uint32_t go = 0;
    for (uint32_t l = 0; l < n; l++)
        if (here >> l & 1 && (lanes[l].mask & ~(here | gone)) == 0) go |= 1u << l;
    if (!go && am) {
        const Fiber *first = NULL;
        for (uint32_t l = 0; l < n; l++)
            if (am >> l & 1 && (!first || position_cmp(&lanes[l], first) < 0)) first = &lanes[l];
        for (uint32_t l = 0; l < n; l++)
            if (am >> l & 1 && position_cmp(&lanes[l], first) == 0) go |= 1u << l;
        for (uint32_t l = 0; l < n; l++)
            if (go >> l & 1) {
                lanes[l].result = go;
                lanes[l].wait = WAIT_NONE;
            }
        return 1;
    }
    if (!go) return 0;
    warp_results(lanes, go, here);
    int synced = 0;
    for (uint32_t l = 0; l < n; l++)
        if (go >> l & 1) lanes[l].wait = WAIT_NONE, synced |= lanes[l].op == GJ_WARP_SYNC;
    return synced ? 2 : 1;
}
