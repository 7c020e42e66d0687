/* regions.c: a barrier kernel's block on the CPU target as loops over its
 * threads between barriers ("parallel regions", as PoCL's work-item loops).
 *
 * The body (target_host.c: body(blk, tx, ty, tz, params...)) is split at its
 * syncthreads() calls into regions: the blocks reachable from the function's
 * entry or from a barrier without crossing another barrier. Each region is
 * cloned into a loop nest over threadIdx.z, y, x (x fastest), so that a
 * region's code runs for every thread of the block before the next region
 * starts, which is what the barrier asks, and LLVM can vectorise across
 * threads. At each exit (a barrier or a return) a thread records which one it
 * took; where every thread took the same one, its region runs next. Threads
 * that wait at different syncthreads() calls (one barrier, as on the
 * hardware), or that wait while others returned, go on in a slower loop that
 * starts each thread where it waits; a returned thread takes no part in later
 * barriers (as on the GPU), and that loop runs until every thread returned.
 *
 * Values live across blocks are demoted to allocas first (LLVM's reg2mem).
 * An alloca a region may read before writing it (a value from before a
 * barrier) needs each thread's own copy, unless it is the same for every
 * thread: then one copy serves all (a value of the parameters, or one that
 * every thread updates alike, such as a uniform loop counter), or it is
 * recomputed from the thread's index in each region (tid, gpu.grid()). The
 * others live in per-thread arrays [threads x type] from the runtime
 * (GjBlockCtx.region_scratch), indexed by the linear thread id, so that a
 * vector of threads reads consecutive elements. A bounds check's failure
 * is deferred to the end of its loop (below), so that the loop stays
 * vectorisable. The body itself is left for target_host.c's other schemes
 * where the kernel does not fit (host_regions returns 0). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/IRReader.h>

#include "gj.h"

enum {
    REGION_MAX_CONTEXT = 16384, /* bytes of per-thread values a thread may keep across barriers */
    REGION_MAX_CLONES = 4000,   /* basic blocks of all region loops together: compile time grows with them */
    REGION_MAX_BARRIERS = 60,   /* exits (barriers, return, a deferred trap) are bits of an i64 */
};

/* a pointer-keyed hash map, in the arena */
typedef struct {
    const void **keys;
    intptr_t *vals;
    unsigned cap;
} Map;

static int map_init(Ctx *c, Map *m, unsigned n) {
    unsigned cap = 64;
    while (cap < 2 * n + 2) cap *= 2;
    m->keys = arena_alloc(&c->arena, sizeof *m->keys * cap);
    m->vals = arena_alloc(&c->arena, sizeof *m->vals * cap);
    m->cap = cap;
    return m->keys && m->vals ? 0 : -1;
}

static unsigned map_slot(const Map *m, const void *k) {
    unsigned h = (unsigned)(((uintptr_t)k >> 4) * 2654435761u) & (m->cap - 1);
    while (m->keys[h] && m->keys[h] != k) h = (h + 1) & (m->cap - 1);
    return h;
}

static intptr_t map_get(const Map *m, const void *k) {
    unsigned h = map_slot(m, k);
    return m->keys[h] ? m->vals[h] : 0;
}

static void map_put(Map *m, const void *k, intptr_t v) {
    unsigned h = map_slot(m, k);
    m->keys[h] = k;
    m->vals[h] = v;
}

static void map_clear(Map *m) {
    memset(m->keys, 0, sizeof *m->keys * m->cap);
    memset(m->vals, 0, sizeof *m->vals * m->cap);
}

/* What a value is across the threads of a block (a bit set): INV the same
 * for all and never changing after the entry (parameters, the geometry);
 * TID a function of the thread's index and such values; UNI the same for
 * all threads at any barrier but changing (a uniform loop counter); DIV
 * anything else. */
enum { K_INV = 0, K_TID = 1, K_UNI = 2, K_DIV = 4 };

/* How an alloca of the body lives in the region loops. */
typedef enum {
    A_SCALAR,  /* one copy for all threads: never read across a barrier, or never changed after the entry */
    A_REMAT,   /* recomputed from the thread's index at the start of each region */
    A_UNIFORM, /* one copy, the same for every thread at each barrier: restored at each thread's start */
    A_CONTEXT, /* one per thread, in the runtime's scratch */
} AllocaKind;

typedef struct {
    LLVMValueRef fn;
    int nbb;
    LLVMBasicBlockRef *bbs;
    Map bbidx; /* block -> index + 1 */
    int *nsucc, **succ, *npred, **pred;
    int *barrier;       /* block -> its barrier's number 1..nb, or 0 */
    LLVMValueRef *site; /* barrier number -> its call */
    int32_t *site_id;   /* barrier number -> its syncthreads() site (GjBlockCtx.syncthreads) */
    int *bblock;        /* barrier number -> its block */
    bool *live;         /* the block can reach a return or a barrier */
    int nb, nr, g;      /* barriers, regions (incl. the divergent one), the divergent one (-1: none) */
    unsigned char *in;  /* nr x nbb: the block is in the region */
    int **blocks, *nblocks;
    unsigned char *exits; /* nr x (nb + 2): the region exits to barrier k / returns (nb + 1) */
    /* allocas of the entry block */
    int na;
    LLVMValueRef *allocas;
    Map aidx;            /* alloca -> index + 1 */
    bool *direct;        /* only loaded and stored whole */
    int *nstores;
    LLVMValueRef *store; /* the only store, where there is one */
    bool *exposed;       /* read by some region before it writes it */
    bool *spine;         /* block -> always run, straight from the entry */
    int *state;          /* alloca -> K_* of its value, (state < 0: being computed) */
    AllocaKind *kind;
    Map memo;
    bool *ctl_div;       /* block -> run by some threads of a block and not others */
    bool *trapok;        /* block -> every path from it ends at a bounds check's trap */
    int nsave;           /* values a deferred trap keeps, at most */
    uint64_t save_stride; /* bytes a kept value takes */
    bool any_trap;
} Regions;

static int bb_of(Regions *R, LLVMBasicBlockRef bb) { return (int)map_get(&R->bbidx, bb) - 1; }
static int alloca_of(Regions *R, LLVMValueRef v) { return LLVMIsAAllocaInst(v) ? (int)map_get(&R->aidx, v) - 1 : -1; }

static bool is_blk_field(Regions *R, LLVMValueRef p) {
    return LLVMIsAGetElementPtrInst(p) && LLVMGetNumOperands(p) == 2 && LLVMGetOperand(p, 0) == LLVMGetParam(R->fn, 0) &&
           LLVMIsAConstantInt(LLVMGetOperand(p, 1));
}

static bool is_blk_field_at(Regions *R, LLVMValueRef p, size_t off) {
    return is_blk_field(R, p) && LLVMConstIntGetZExtValue(LLVMGetOperand(p, 1)) == off;
}

static int value_kind(Regions *R, LLVMValueRef v, bool spine_only, int depth);

/* An alloca's K_*: INV or TID where its one store, on the entry's straight
 * path, stores such a value; else UNI while it is still thought uniform
 * (spine_only: DIV). state: -1 not yet looked at, -2 being looked at, -3
 * neither INV nor TID. */
static int alloca_kind(Regions *R, int a, bool spine_only, int depth) {
    if (!R->direct[a]) return K_DIV;
    if (R->state[a] >= 0) return R->state[a];
    if (R->state[a] == -1) {
        R->state[a] = -3;
        if (R->nstores[a] == 1 && R->spine[bb_of(R, LLVMGetInstructionParent(R->store[a]))]) {
            R->state[a] = -2; /* a cycle reads K_DIV */
            int k = value_kind(R, LLVMGetOperand(R->store[a], 0), true, depth + 1);
            R->state[a] = k <= K_TID ? k : -3;
            if (k <= K_TID) return k;
        }
    }
    return spine_only ? K_DIV : R->kind[a] == A_UNIFORM ? K_UNI : K_DIV;
}

static int value_kind(Regions *R, LLVMValueRef v, bool spine_only, int depth) {
    if (depth > 200) return K_DIV;
    if (LLVMIsAArgument(v)) {
        for (int d = 1; d <= 3; d++)
            if (v == LLVMGetParam(R->fn, (unsigned)d)) return K_TID;
        return K_INV;
    }
    if (!LLVMIsAInstruction(v)) return K_INV; /* constants, globals */
    intptr_t m = spine_only ? 0 : map_get(&R->memo, v);
    if (m) return (int)m - 1;
    int k = K_DIV;
    switch (LLVMGetInstructionOpcode(v)) {
    case LLVMAlloca: { /* its address: each thread's own where it lives in the per-thread arrays */
        int a = alloca_of(R, v);
        k = a >= 0 && R->direct[a] ? K_INV : K_TID;
        break;
    }
    case LLVMLoad: {
        LLVMValueRef p = LLVMGetOperand(v, 0);
        int a = alloca_of(R, p);
        if (a >= 0)
            k = alloca_kind(R, a, spine_only, depth);
        else if (is_blk_field(R, p))
            k = K_INV;
        break;
    }
    case LLVMAdd: case LLVMFAdd: case LLVMSub: case LLVMFSub: case LLVMMul: case LLVMFMul: case LLVMUDiv:
    case LLVMSDiv: case LLVMFDiv: case LLVMURem: case LLVMSRem: case LLVMFRem: case LLVMShl: case LLVMLShr:
    case LLVMAShr: case LLVMAnd: case LLVMOr: case LLVMXor: case LLVMFNeg: case LLVMTrunc: case LLVMZExt:
    case LLVMSExt: case LLVMFPToUI: case LLVMFPToSI: case LLVMUIToFP: case LLVMSIToFP: case LLVMFPTrunc:
    case LLVMFPExt: case LLVMPtrToInt: case LLVMIntToPtr: case LLVMBitCast: case LLVMICmp: case LLVMFCmp:
    case LLVMSelect: case LLVMGetElementPtr: case LLVMExtractValue: case LLVMInsertValue: case LLVMFreeze: {
        k = K_INV;
        int n = LLVMGetNumOperands(v);
        for (int i = 0; i < n && !(k & K_DIV); i++) k |= value_kind(R, LLVMGetOperand(v, (unsigned)i), spine_only, depth + 1);
        break;
    }
    default: break;
    }
    if (k & K_DIV) k = K_DIV;
    if (!spine_only) map_put(&R->memo, v, k + 1);
    return k;
}

static bool divergent(int k) { return (k & (K_TID | K_DIV)) != 0; }

/* ---- the body's blocks and regions ---- */

/* Each barrier at the start of its own block: the call, rebuilt there, then
 * what followed it. */
static LLVMValueRef split_at(Ctx *c, LLVMValueRef fn, LLVMValueRef site) {
    LLVMBasicBlockRef bb = LLVMGetInstructionParent(site);
    LLVMBasicBlockRef rest = LLVMAppendBasicBlockInContext(c->llctx, fn, "barrier");
    LLVMPositionBuilderAtEnd(c->b, rest);
    LLVMValueRef blk = LLVMGetParam(fn, 0);
    LLVMValueRef off = LLVMConstInt(c->i64, offsetof(GjBlockCtx, syncthreads), 0);
    LLVMValueRef fp = LLVMBuildLoad2(c->b, c->ptr, LLVMBuildInBoundsGEP2(c->b, c->i8, blk, &off, 1, ""), "syncthreads");
    LLVMTypeRef pt[2] = {c->ptr, c->i32};
    LLVMValueRef args[2] = {blk, LLVMGetOperand(site, 1)}; /* (blk, site number) */
    LLVMValueRef nsite = LLVMBuildCall2(c->b, LLVMFunctionType(c->voidt, pt, 2, 0), fp, args, 2, "");
    move_rest(c, site, rest);
    LLVMValueRef old = LLVMGetCalledValue(site);
    LLVMInstructionEraseFromParent(site);
    while (old && LLVMIsAInstruction(old) && !LLVMGetFirstUse(old) && (LLVMIsALoadInst(old) || LLVMIsAGetElementPtrInst(old))) {
        LLVMValueRef op = LLVMGetOperand(old, 0);
        LLVMInstructionEraseFromParent(old);
        old = op;
    }
    LLVMPositionBuilderAtEnd(c->b, bb);
    LLVMBuildBr(c->b, rest);
    return nsite;
}

static int index_blocks(Ctx *c, Regions *R) {
    LLVMValueRef fn = R->fn;
    int n = R->nbb = (int)LLVMCountBasicBlocks(fn);
    R->bbs = arena_alloc(&c->arena, sizeof *R->bbs * (size_t)n);
    R->nsucc = arena_alloc(&c->arena, sizeof(int) * (size_t)n);
    R->succ = arena_alloc(&c->arena, sizeof(int *) * (size_t)n);
    R->npred = arena_alloc(&c->arena, sizeof(int) * (size_t)n);
    R->pred = arena_alloc(&c->arena, sizeof(int *) * (size_t)n);
    R->barrier = arena_alloc(&c->arena, sizeof(int) * (size_t)n);
    R->live = arena_alloc(&c->arena, sizeof(bool) * (size_t)n);
    R->spine = arena_alloc(&c->arena, sizeof(bool) * (size_t)n);
    R->ctl_div = arena_alloc(&c->arena, sizeof(bool) * (size_t)n);
    if (!R->bbs || !R->nsucc || !R->succ || !R->npred || !R->pred || !R->barrier || !R->live || !R->spine ||
        !R->ctl_div || map_init(c, &R->bbidx, (unsigned)n) < 0)
        return -1;
    LLVMGetBasicBlocks(fn, R->bbs);
    for (int i = 0; i < n; i++) map_put(&R->bbidx, R->bbs[i], i + 1);
    for (int i = 0; i < n; i++) {
        LLVMValueRef t = LLVMGetBasicBlockTerminator(R->bbs[i]);
        if (!t) return internal_error(c, NO_LOCATION, "barrier regions: a block without a terminator");
        int ns = (int)LLVMGetNumSuccessors(t);
        R->succ[i] = arena_alloc(&c->arena, sizeof(int) * (size_t)(ns + 1));
        if (!R->succ[i]) return -1;
        for (int k = 0; k < ns; k++) {
            int s = bb_of(R, LLVMGetSuccessor(t, (unsigned)k));
            if (s < 0) return internal_error(c, NO_LOCATION, "barrier regions: a branch out of the function");
            R->succ[i][R->nsucc[i]++] = s;
            R->npred[s]++;
        }
    }
    for (int i = 0; i < n; i++) {
        R->pred[i] = arena_alloc(&c->arena, sizeof(int) * (size_t)(R->npred[i] + 1));
        if (!R->pred[i]) return -1;
        R->npred[i] = 0;
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < R->nsucc[i]; k++) R->pred[R->succ[i][k]][R->npred[R->succ[i][k]]++] = i;
    R->bblock = arena_alloc(&c->arena, sizeof(int) * (size_t)(R->nb + 1));
    if (!R->bblock) return -1;
    for (int k = 1; k <= R->nb; k++) {
        int b = bb_of(R, LLVMGetInstructionParent(R->site[k]));
        R->barrier[b] = k;
        R->bblock[k] = b;
    }
    /* live: can still reach a return or a barrier (else only a trap's unreachable) */
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < n; i++) {
            if (R->live[i]) continue;
            bool l = LLVMIsAReturnInst(LLVMGetBasicBlockTerminator(R->bbs[i])) != NULL;
            for (int k = 0; k < R->nsucc[i] && !l; k++) l = R->barrier[R->succ[i][k]] || R->live[R->succ[i][k]];
            if (l) R->live[i] = changed = true;
        }
    }
    /* the entry's straight path: run once by every thread before any branch */
    for (int b = 0;;) {
        R->spine[b] = true;
        if (R->nsucc[b] != 1 || R->npred[R->succ[b][0]] != 1 || R->barrier[R->succ[b][0]]) break;
        b = R->succ[b][0];
    }
    return 0;
}

/* Region r's blocks from its starts (a barrier's block is a start only). */
static int find_region(Ctx *c, Regions *R, int r, const int *starts, int nstarts) {
    unsigned char *in = R->in + (size_t)r * (size_t)R->nbb, *ex = R->exits + (size_t)r * (size_t)(R->nb + 2);
    int *list = arena_alloc(&c->arena, sizeof(int) * (size_t)R->nbb);
    if (!list) return -1;
    int n = 0;
    for (int i = 0; i < nstarts; i++) in[starts[i]] = 1, list[n++] = starts[i];
    for (int i = 0; i < n; i++) {
        int b = list[i];
        if (LLVMIsAReturnInst(LLVMGetBasicBlockTerminator(R->bbs[b]))) ex[R->nb + 1] = 1;
        for (int k = 0; k < R->nsucc[b]; k++) {
            int s = R->succ[b][k];
            if (R->barrier[s])
                ex[R->barrier[s]] = 1;
            else if (!in[s])
                in[s] = 1, list[n++] = s;
        }
    }
    R->blocks[r] = list;
    R->nblocks[r] = n;
    return 0;
}

static bool internal_edge(Regions *R, int r, int from, int to) {
    return !R->barrier[to] && R->in[(size_t)r * (size_t)R->nbb + (size_t)from];
}

/* ---- allocas ---- */

static int find_allocas(Ctx *c, Regions *R) {
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(R->fn);
    int n = 0;
    for (int b = 0; b < R->nbb; b++)
        for (LLVMValueRef in = LLVMGetFirstInstruction(R->bbs[b]); in; in = LLVMGetNextInstruction(in))
            if (LLVMIsAAllocaInst(in)) {
                if (R->bbs[b] != entry) return 0; /* a stack object made in a loop: not here */
                n++;
            }
    R->na = n;
    R->allocas = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(n + 1));
    R->direct = arena_alloc(&c->arena, sizeof(bool) * (size_t)(n + 1));
    R->nstores = arena_alloc(&c->arena, sizeof(int) * (size_t)(n + 1));
    R->store = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(n + 1));
    R->exposed = arena_alloc(&c->arena, sizeof(bool) * (size_t)(n + 1));
    R->state = arena_alloc(&c->arena, sizeof(int) * (size_t)(n + 1));
    R->kind = arena_alloc(&c->arena, sizeof(AllocaKind) * (size_t)(n + 1));
    if (!R->allocas || !R->direct || !R->nstores || !R->store || !R->exposed || !R->state || !R->kind ||
        map_init(c, &R->aidx, (unsigned)n) < 0)
        return -1;
    n = 0;
    for (LLVMValueRef in = LLVMGetFirstInstruction(entry); in; in = LLVMGetNextInstruction(in))
        if (LLVMIsAAllocaInst(in)) {
            R->allocas[n] = in;
            map_put(&R->aidx, in, n + 1);
            LLVMTypeRef t = LLVMGetAllocatedType(in);
            bool direct = true;
            for (LLVMUseRef u = LLVMGetFirstUse(in); u; u = LLVMGetNextUse(u)) {
                LLVMValueRef user = LLVMGetUser(u);
                if (LLVMIsALoadInst(user) && LLVMTypeOf(user) == t && !LLVMGetVolatile(user))
                    continue;
                if (LLVMIsAStoreInst(user) && LLVMGetOperand(user, 1) == in && LLVMGetOperand(user, 0) != in &&
                    LLVMTypeOf(LLVMGetOperand(user, 0)) == t && !LLVMGetVolatile(user)) {
                    R->nstores[n]++;
                    R->store[n] = user;
                    continue;
                }
                direct = false;
            }
            R->direct[n] = direct;
            n++;
        }
    return 1;
}

/* exposed: some region that starts at a barrier may load the alloca before
 * storing it (a must-store dataflow over the region's blocks). */
static int find_exposed(Ctx *c, Regions *R) {
    int words = (R->na + 63) / 64 + 1, nbb = R->nbb;
    uint64_t *gen = arena_alloc(&c->arena, sizeof(uint64_t) * (size_t)words * (size_t)nbb);
    uint64_t *in = arena_alloc(&c->arena, sizeof(uint64_t) * (size_t)words * (size_t)nbb);
    uint64_t *cur = arena_alloc(&c->arena, sizeof(uint64_t) * (size_t)words);
    if (!gen || !in || !cur) return -1;
    for (int b = 0; b < nbb; b++)
        for (LLVMValueRef i = LLVMGetFirstInstruction(R->bbs[b]); i; i = LLVMGetNextInstruction(i)) {
            int a = LLVMIsAStoreInst(i) ? alloca_of(R, LLVMGetOperand(i, 1)) : -1;
            if (a >= 0 && R->direct[a]) gen[(size_t)b * words + a / 64] |= 1ull << (a % 64);
        }
    for (int r = 1; r <= R->nb; r++) {
        int start = R->bblock[r], *list = R->blocks[r];
        for (int i = 0; i < R->nblocks[r]; i++)
            for (int w = 0; w < words; w++) in[(size_t)list[i] * words + w] = list[i] == start ? 0 : ~0ull;
        for (bool changed = true; changed;) {
            changed = false;
            for (int i = 0; i < R->nblocks[r]; i++) {
                int b = list[i];
                if (b == start) continue;
                for (int w = 0; w < words; w++) {
                    uint64_t v = ~0ull;
                    for (int p = 0; p < R->npred[b]; p++)
                        if (internal_edge(R, r, R->pred[b][p], b))
                            v &= in[(size_t)R->pred[b][p] * words + w] | gen[(size_t)R->pred[b][p] * words + w];
                    if (v != in[(size_t)b * words + w]) in[(size_t)b * words + w] = v, changed = true;
                }
            }
        }
        for (int i = 0; i < R->nblocks[r]; i++) {
            int b = list[i];
            memcpy(cur, in + (size_t)b * words, sizeof(uint64_t) * (size_t)words);
            for (LLVMValueRef x = LLVMGetFirstInstruction(R->bbs[b]); x; x = LLVMGetNextInstruction(x)) {
                int a;
                if (LLVMIsALoadInst(x) && (a = alloca_of(R, LLVMGetOperand(x, 0))) >= 0 && R->direct[a] &&
                    !(cur[a / 64] >> (a % 64) & 1))
                    R->exposed[a] = true;
                if (LLVMIsAStoreInst(x) && (a = alloca_of(R, LLVMGetOperand(x, 1))) >= 0)
                    cur[a / 64] |= 1ull << (a % 64);
            }
        }
    }
    return 0;
}

/* Block b ends in a branch on a value that differs between threads, to two or more
 * successors that still reach a barrier or a return (under the alloca kinds as they are). */
static bool divergent_branch(Regions *R, int b) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(R->bbs[b]);
    int nlive = 0;
    for (int k = 0; k < R->nsucc[b]; k++) nlive += R->barrier[R->succ[b][k]] || R->live[R->succ[b][k]];
    return nlive > 1 && (LLVMIsASwitchInst(t) || (LLVMIsABranchInst(t) && LLVMIsConditional(t))) &&
           divergent(value_kind(R, LLVMGetOperand(t, 0), false, 0));
}

/* Which allocas are the same for every thread at every barrier: optimistically
 * all, then those stored a divergent value or under a divergent branch are
 * not, until nothing changes. */
static int classify(Ctx *c, Regions *R) {
    if (map_init(c, &R->memo, 4096) < 0) return -1;
    for (int a = 0; a < R->na; a++) {
        R->state[a] = -1;
        R->kind[a] = R->direct[a] ? A_UNIFORM : A_CONTEXT;
    }
    for (int a = 0; a < R->na; a++) alloca_kind(R, a, true, 0);
    for (int a = 0; a < R->na; a++)
        if (R->state[a] >= 0) R->kind[a] = R->state[a] == K_INV ? A_SCALAR : A_REMAT;
    bool *div_term = arena_alloc(&c->arena, sizeof(bool) * (size_t)R->nbb);
    int *queue = arena_alloc(&c->arena, sizeof(int) * (size_t)R->nbb);
    unsigned char *seen = arena_alloc(&c->arena, (size_t)R->nbb);
    if (!div_term || !queue || !seen) return -1;
    for (bool changed = true; changed;) {
        changed = false;
        map_clear(&R->memo);
        for (int b = 0; b < R->nbb; b++) div_term[b] = divergent_branch(R, b);
        memset(R->ctl_div, 0, sizeof(bool) * (size_t)R->nbb);
        for (int r = 0; r < R->nr; r++) {
            const unsigned char *in = R->in + (size_t)r * (size_t)R->nbb;
            if (r == R->g) {
                for (int i = 0; i < R->nblocks[r]; i++) R->ctl_div[R->blocks[r][i]] = true;
                continue;
            }
            /* everything after a divergent branch, up to the region's exits */
            memset(seen, 0, (size_t)R->nbb);
            int nq = 0;
            for (int i = 0; i < R->nblocks[r]; i++) {
                int b = R->blocks[r][i];
                if (!div_term[b]) continue;
                for (int k = 0; k < R->nsucc[b]; k++) {
                    int s = R->succ[b][k];
                    if (!R->barrier[s] && in[s] && !seen[s]) seen[s] = 1, queue[nq++] = s;
                }
            }
            for (int i = 0; i < nq; i++) {
                int b = queue[i];
                R->ctl_div[b] = true;
                for (int k = 0; k < R->nsucc[b]; k++) {
                    int s = R->succ[b][k];
                    if (!R->barrier[s] && in[s] && !seen[s]) seen[s] = 1, queue[nq++] = s;
                }
            }
        }
        for (int a = 0; a < R->na; a++) {
            if (R->kind[a] != A_UNIFORM) continue;
            bool uni = true;
            for (LLVMUseRef u = LLVMGetFirstUse(R->allocas[a]); u && uni; u = LLVMGetNextUse(u)) {
                LLVMValueRef st = LLVMGetUser(u);
                if (!LLVMIsAStoreInst(st)) continue;
                uni = !R->ctl_div[bb_of(R, LLVMGetInstructionParent(st))] &&
                      !divergent(value_kind(R, LLVMGetOperand(st, 0), false, 0));
            }
            if (!uni) R->kind[a] = A_CONTEXT, changed = true;
        }
    }
    return 0;
}

/* What no region reads before writing needs no more than one copy (after classify and
 * may_part, which read A_UNIFORM as the same for every thread). */
static void one_copy(Regions *R) {
    for (int a = 0; a < R->na; a++)
        if (R->direct[a] && !R->exposed[a]) R->kind[a] = A_SCALAR;
}

/* ---- deferred traps ----
 *
 * A bounds check's failure path (checks.c: the error record, then
 * blk->trap, which never returns) would keep the loop over threads from
 * being vectorised. In the loop, a failing thread instead keeps the values
 * that path reads and stops there (the bad access is never made); the other
 * threads finish the region; then the failure path runs for the first
 * failing thread, in thread order, which records the error and ends the
 * launch as before. */

static bool is_trap_block(Regions *R, int b) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(R->bbs[b]);
    LLVMValueRef call = t && LLVMIsAUnreachableInst(t) ? LLVMGetPreviousInstruction(t) : NULL;
    LLVMValueRef fp = call && LLVMIsACallInst(call) ? LLVMGetCalledValue(call) : NULL;
    return fp && LLVMIsALoadInst(fp) && is_blk_field_at(R, LLVMGetOperand(fp, 0), offsetof(GjBlockCtx, trap));
}

/* The allocas failure path d (a block index) reads, in a fixed order, in
 * out (at most R->na); their number. seen: R->nbb bytes of scratch. */
static int entry_saves(Regions *R, int d, int *out, int *stack, unsigned char *seen, bool *done) {
    memset(seen, 0, (size_t)R->nbb);
    memset(done, 0, sizeof(bool) * (size_t)R->na);
    int sp = 0, n = 0;
    stack[sp++] = d;
    seen[d] = 1;
    while (sp) {
        int b = stack[--sp];
        for (LLVMValueRef in = LLVMGetFirstInstruction(R->bbs[b]); in; in = LLVMGetNextInstruction(in)) {
            int a = LLVMIsALoadInst(in) ? alloca_of(R, LLVMGetOperand(in, 0)) : -1;
            if (a >= 0 && R->kind[a] != A_CONTEXT && !done[a]) done[a] = true, out[n++] = a;
        }
        for (int k = 0; k < R->nsucc[b]; k++)
            if (!seen[R->succ[b][k]]) seen[R->succ[b][k]] = 1, stack[sp++] = R->succ[b][k];
    }
    return n;
}

static int find_deferred_traps(Ctx *c, Regions *R) {
    R->trapok = arena_alloc(&c->arena, sizeof(bool) * (size_t)R->nbb);
    int *list = arena_alloc(&c->arena, sizeof(int) * (size_t)(R->na + 1));
    int *stack = arena_alloc(&c->arena, sizeof(int) * (size_t)R->nbb);
    unsigned char *seen = arena_alloc(&c->arena, (size_t)R->nbb);
    bool *done = arena_alloc(&c->arena, sizeof(bool) * (size_t)(R->na + 1));
    if (!R->trapok || !list || !stack || !seen || !done) return -1;
    for (bool changed = true; changed;) {
        changed = false;
        for (int b = 0; b < R->nbb; b++) {
            if (R->trapok[b] || R->live[b]) continue;
            bool ok = R->nsucc[b] ? true : is_trap_block(R, b);
            for (int k = 0; k < R->nsucc[b] && ok; k++) ok = R->trapok[R->succ[b][k]];
            if (ok) R->trapok[b] = changed = true;
        }
    }
    LLVMTargetDataRef td = LLVMGetModuleDataLayout(LLVMGetGlobalParent(R->fn));
    R->save_stride = 8;
    for (int b = 0; b < R->nbb; b++)
        for (int k = 0; k < R->nsucc[b]; k++) {
            int d = R->succ[b][k];
            if (!R->live[b] || !R->trapok[d]) continue;
            R->any_trap = true;
            int n = entry_saves(R, d, list, stack, seen, done);
            if (n > R->nsave) R->nsave = n;
            for (int i = 0; i < n; i++) {
                uint64_t size = LLVMABISizeOfType(td, LLVMGetAllocatedType(R->allocas[list[i]]));
                size = (size + 7) / 8 * 8;
                if (size > R->save_stride) R->save_stride = size;
            }
        }
    return 0;
}

/* ---- building the region loops ---- */

typedef struct {
    Regions *R;
    LLVMValueRef nf;
    LLVMValueRef *fa;    /* alloca -> its copy in nf (scalar kinds) */
    LLVMValueRef *cbase; /* alloca -> its per-thread array (A_CONTEXT) */
    LLVMValueRef *cptr;  /* alloca -> this thread's element, in the region being built */
    uint64_t *stride;
    LLVMValueRef tid[3];
    Map vmap;            /* body instruction -> its clone in the region being built */
    LLVMBasicBlockRef *clone, *pre, *stub;
    LLVMBasicBlockRef ret;
    LLVMValueRef next_base; /* the divergent loop's per-thread next barrier */
    LLVMValueRef next_ptr;
    LLVMValueRef group; /* the access group of the region being built */
    LLVMValueRef *sbase; /* the k-th value a deferred trap keeps, of each thread */
    LLVMValueRef trap_base; /* each thread's failure path, as its block's index + 1; 0: none */
    LLVMBasicBlockRef *defer; /* failure path -> the block that defers it, in the region being built */
    unsigned char *seen;
    int *list, *stack;
    bool *done;
    bool *deferred;      /* failure path -> some region defers it */
    LLVMBasicBlockRef replay; /* where every region goes when a thread deferred one */
    LLVMValueRef dead_seen; /* the barrier rule's failure: the exits the block's threads took */
} Build;

static LLVMValueRef remap(Ctx *c, Build *B, LLVMValueRef v) {
    Regions *R = B->R;
    if (LLVMIsAArgument(v)) {
        for (unsigned d = 0; d < 3; d++)
            if (v == LLVMGetParam(R->fn, d + 1)) return B->tid[d];
        for (unsigned i = 0, n = LLVMCountParams(R->fn); i < n; i++)
            if (v == LLVMGetParam(R->fn, i)) return LLVMGetParam(B->nf, i);
    }
    if (!LLVMIsAInstruction(v)) return v;
    int a = alloca_of(R, v);
    if (a >= 0) return R->kind[a] == A_CONTEXT ? B->cptr[a] : B->fa[a];
    LLVMValueRef m = (LLVMValueRef)map_get(&B->vmap, v);
    if (!m) internal_error(c, NO_LOCATION, "barrier regions: a value used outside its block");
    return m;
}

/* A new access group (a distinct metadata node without operands, which the C
 * API cannot make directly: parsed in the compilation's context, where it
 * outlives the scrap module); NULL where that fails. */
static LLVMMetadataRef access_group(Ctx *c) {
    static const char text[] = "!g = !{!0}\n!0 = distinct !{}\n"; /* !g names !0 itself */
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(text, sizeof text - 1, "access group");
    LLVMModuleRef m = NULL;
    char *msg = NULL;
    if (!buf) return NULL;
    if (LLVMParseIRInContext(c->llctx, buf, &m, &msg)) { /* takes the buffer */
        LLVMDisposeMessage(msg);
        return NULL;
    }
    LLVMValueRef node = NULL;
    if (LLVMGetNamedMetadataNumOperands(m, "g") == 1) LLVMGetNamedMetadataOperands(m, "g", &node);
    LLVMMetadataRef g = node && LLVMGetMDNodeNumOperands(node) == 0 ? LLVMValueAsMetadata(node) : NULL;
    LLVMDisposeModule(m);
    return g;
}

/* Threads do not see each other's writes between two barriers (that would
 * be a data race in CUDA), so the iterations of a loop over threads are
 * independent: its loads and stores join the loop's access group, which
 * lets the vectoriser go without run-time overlap checks. Not calls: a
 * device function's local array, once inlined, is one for all iterations. */
static void join_group(Ctx *c, LLVMValueRef in, LLVMValueRef group) {
    if (!group || !(LLVMIsALoadInst(in) || LLVMIsAStoreInst(in))) return;
    if (LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic || LLVMGetVolatile(in)) return;
    LLVMSetMetadata(in, LLVMGetMDKindIDInContext(c->llctx, "llvm.access.group", 17), group);
}

/* The value an A_REMAT alloca holds, computed again at the builder. */
static LLVMValueRef remat(Ctx *c, Build *B, LLVMValueRef v) {
    Regions *R = B->R;
    if (LLVMIsAArgument(v) || !LLVMIsAInstruction(v)) return remap(c, B, v);
    LLVMValueRef m = (LLVMValueRef)map_get(&B->vmap, v);
    if (m) return m;
    int a;
    if (LLVMIsALoadInst(v) && (a = alloca_of(R, LLVMGetOperand(v, 0))) >= 0 && R->state[a] == K_TID)
        m = remat(c, B, LLVMGetOperand(R->store[a], 0));
    else if (LLVMIsAAllocaInst(v))
        m = remap(c, B, v);
    else {
        LLVMValueRef *ops = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(LLVMGetNumOperands(v) + 1));
        if (!ops) return NULL;
        for (int i = 0; i < LLVMGetNumOperands(v); i++) {
            ops[i] = remat(c, B, LLVMGetOperand(v, (unsigned)i));
            if (!ops[i]) return NULL;
        }
        m = LLVMInstructionClone(v);
        for (int i = 0; i < LLVMGetNumOperands(v); i++) LLVMSetOperand(m, (unsigned)i, ops[i]);
        LLVMInsertIntoBuilder(c->b, m);
        join_group(c, m, B->group);
    }
    map_put(&B->vmap, v, (intptr_t)m);
    return m;
}

static LLVMBasicBlockRef stub(Ctx *c, Build *B, LLVMBasicBlockRef latch, int e) {
    if (!B->stub[e]) {
        B->stub[e] = LLVMAppendBasicBlockInContext(c->llctx, B->nf, "region.exit");
        LLVMPositionBuilderAtEnd(c->b, B->stub[e]);
        LLVMBuildBr(c->b, latch);
    }
    return B->stub[e];
}

static LLVMValueRef blk_call(Ctx *c, LLVMValueRef blk, size_t off, LLVMTypeRef ret, LLVMTypeRef *pt, LLVMValueRef *args,
                             unsigned n) {
    LLVMValueRef o = LLVMConstInt(c->i64, off, 0);
    LLVMValueRef fp = LLVMBuildLoad2(c->b, c->ptr, LLVMBuildInBoundsGEP2(c->b, c->i8, blk, &o, 1, ""), "");
    return LLVMBuildCall2(c->b, LLVMFunctionType(ret, pt, n, 0), fp, args, n, "");
}

/* The loop over threadIdx.x runs blockDim.x times, often 16 or 32: a
 * vectorised loop that also interleaves (four vectors an iteration) would
 * need 64 threads and more before its vector body ran at all. */
static LLVMValueRef thread_loop_md(Ctx *c, LLVMMetadataRef group) {
    LLVMMetadataRef tmp = LLVMTemporaryMDNode(c->llctx, NULL, 0);
    LLVMMetadataRef cnt[2] = {LLVMMDStringInContext2(c->llctx, "llvm.loop.interleave.count", 26),
                              LLVMValueAsMetadata(LLVMConstInt(c->i32, 1, 0))};
    LLVMMetadataRef par[2] = {LLVMMDStringInContext2(c->llctx, "llvm.loop.parallel_accesses", 27), group};
    LLVMMetadataRef ops[3] = {tmp, LLVMMDNodeInContext2(c->llctx, cnt, 2), LLVMMDNodeInContext2(c->llctx, par, 2)};
    LLVMMetadataRef id = LLVMMDNodeInContext2(c->llctx, ops, group ? 3 : 2);
    LLVMMetadataReplaceAllUsesWith(tmp, id); /* the loop's id names itself */
    return LLVMMetadataAsValue(c->llctx, id);
}

/* The block that defers failure path d (a block index): the values it
 * reads kept, then to the latch (which records d). */
static LLVMBasicBlockRef defer_block(Ctx *c, Build *B, int d, LLVMValueRef lin, LLVMBasicBlockRef latch) {
    Regions *R = B->R;
    if (B->defer[d]) return B->defer[d];
    B->deferred[d] = true;
    LLVMBasicBlockRef bb = B->defer[d] = LLVMAppendBasicBlockInContext(c->llctx, B->nf, "region.defer");
    LLVMPositionBuilderAtEnd(c->b, bb);
    int n = entry_saves(R, d, B->list, B->stack, B->seen, B->done);
    LLVMValueRef o = LLVMBuildMul(c->b, lin, LLVMConstInt(c->i64, R->save_stride, 0), "");
    for (int k = 0; k < n; k++) {
        int a = B->list[k];
        LLVMValueRef v = LLVMBuildLoad2(c->b, LLVMGetAllocatedType(R->allocas[a]), B->fa[a], "");
        join_group(c, v, B->group);
        join_group(c, LLVMBuildStore(c->b, v, LLVMBuildInBoundsGEP2(c->b, c->i8, B->sbase[k], &o, 1, "")), B->group);
    }
    LLVMBuildBr(c->b, latch);
    return bb;
}

/* After a region's loop, where some thread deferred its failure path: the
 * first such thread's, its kept values read back. One for all regions: the
 * values are the same arrays whichever region kept them. */
static int replay_traps(Ctx *c, Build *B, LLVMValueRef dims[3]) {
    Regions *R = B->R;
    LLVMValueRef *fa = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(R->na + 1));
    int *list = arena_alloc(&c->arena, sizeof(int) * (size_t)R->nbb);
    if (!fa || !list) return -1;
    /* the first thread that deferred one */
    LLVMBasicBlockRef from = LLVMGetInsertBlock(c->b);
    LLVMBasicBlockRef scan = LLVMAppendBasicBlockInContext(c->llctx, B->nf, "region.trap.scan");
    LLVMBasicBlockRef found = LLVMAppendBasicBlockInContext(c->llctx, B->nf, "region.trap");
    LLVMBuildBr(c->b, scan);
    LLVMPositionBuilderAtEnd(c->b, scan);
    LLVMValueRef i = LLVMBuildPhi(c->b, c->i64, "");
    LLVMValueRef d = LLVMBuildLoad2(c->b, c->i32, LLVMBuildInBoundsGEP2(c->b, c->i32, B->trap_base, &i, 1, ""), "");
    LLVMValueRef i1 = LLVMBuildNUWAdd(c->b, i, LLVMConstInt(c->i64, 1, 0), "");
    LLVMAddIncoming(i, (LLVMValueRef[]){LLVMConstInt(c->i64, 0, 0), i1}, (LLVMBasicBlockRef[]){from, scan}, 2);
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntNE, d, LLVMConstInt(c->i32, 0, 0), ""), found, scan);
    LLVMPositionBuilderAtEnd(c->b, found);
    LLVMValueRef lin_f = i;

    memcpy(fa, B->fa, sizeof(LLVMValueRef) * (size_t)R->na);
    for (int a = 0; a < R->na; a++)
        if (R->kind[a] == A_CONTEXT) {
            LLVMValueRef o = LLVMBuildMul(c->b, lin_f, LLVMConstInt(c->i64, B->stride[a], 0), "");
            B->cptr[a] = LLVMBuildInBoundsGEP2(c->b, c->i8, B->cbase[a], &o, 1, "");
        }
    LLVMValueRef nx = LLVMBuildZExt(c->b, dims[0], c->i64, ""), ny = LLVMBuildZExt(c->b, dims[1], c->i64, "");
    LLVMValueRef row = LLVMBuildUDiv(c->b, lin_f, nx, "");
    B->tid[0] = LLVMBuildTrunc(c->b, LLVMBuildURem(c->b, lin_f, nx, ""), c->i32, "");
    B->tid[1] = LLVMBuildTrunc(c->b, LLVMBuildURem(c->b, row, ny, ""), c->i32, "");
    B->tid[2] = LLVMBuildTrunc(c->b, LLVMBuildUDiv(c->b, row, ny, ""), c->i32, "");
    LLVMValueRef o = LLVMBuildMul(c->b, lin_f, LLVMConstInt(c->i64, R->save_stride, 0), "");
    LLVMValueRef *slot = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(R->nsave + 1));
    if (!slot) return -1;
    for (int k = 0; k < R->nsave; k++) slot[k] = LLVMBuildInBoundsGEP2(c->b, c->i8, B->sbase[k], &o, 1, "");
    /* the failure paths some region defers, one entry block each; then their blocks */
    int n = 0;
    for (int b = 0; b < R->nbb; b++)
        if (B->deferred[b]) list[n++] = b;
    int nentries = n;
    LLVMBasicBlockRef *entry = arena_alloc(&c->arena, sizeof(LLVMBasicBlockRef) * (size_t)(nentries + 1));
    if (!entry) return -1;
    for (int e = 0; e < nentries; e++) {
        /* each entry with its own kept values, so its own copy of the path */
        int dd = list[e];
        int ns = entry_saves(R, dd, B->list, B->stack, B->seen, B->done);
        for (int k = 0; k < ns; k++) B->fa[B->list[k]] = slot[k];
        int m = 0;
        memset(B->seen, 0, (size_t)R->nbb);
        B->seen[dd] = 1, list[nentries + m++] = dd;
        for (int q = 0; q < m; q++)
            for (int k = 0; k < R->nsucc[list[nentries + q]]; k++) {
                int s2 = R->succ[list[nentries + q]][k];
                if (!B->seen[s2]) B->seen[s2] = 1, list[nentries + m++] = s2;
            }
        for (int q = 0; q < m; q++)
            B->clone[list[nentries + q]] = LLVMAppendBasicBlockInContext(c->llctx, B->nf, "region.trap.path");
        entry[e] = B->clone[dd];
        map_clear(&B->vmap);
        for (int q = 0; q < m; q++) {
            int b = list[nentries + q];
            LLVMPositionBuilderAtEnd(c->b, B->clone[b]);
            for (LLVMValueRef in = LLVMGetFirstInstruction(R->bbs[b]); in; in = LLVMGetNextInstruction(in)) {
                LLVMValueRef cl = LLVMInstructionClone(in);
                for (int k = 0, nop = LLVMGetNumOperands(in); k < nop; k++) {
                    LLVMValueRef op = LLVMGetOperand(in, (unsigned)k);
                    if (LLVMValueIsBasicBlock(op)) continue;
                    LLVMValueRef mv = remap(c, B, op);
                    if (!mv) return -1;
                    LLVMSetOperand(cl, (unsigned)k, mv);
                }
                LLVMInsertIntoBuilder(c->b, cl);
                map_put(&B->vmap, in, (intptr_t)cl);
                if (LLVMIsATerminatorInst(in))
                    for (unsigned k = 0, nsu = LLVMGetNumSuccessors(in); k < nsu; k++)
                        LLVMSetSuccessor(cl, k, B->clone[bb_of(R, LLVMGetSuccessor(in, k))]);
            }
        }
        memcpy(B->fa, fa, sizeof(LLVMValueRef) * (size_t)R->na);
    }
    LLVMPositionBuilderAtEnd(c->b, found);
    LLVMValueRef sw = LLVMBuildSwitch(c->b, d, entry[0], (unsigned)nentries);
    for (int e = 0; e < nentries; e++) LLVMAddCase(sw, LLVMConstInt(c->i32, (unsigned)list[e] + 1, 0), entry[e]);
    return 0;
}

/* Region r as a loop nest over the block's threads, from B->pre[r]. */
static int build_region(Ctx *c, Build *B, int r, LLVMValueRef dims[3], LLVMBasicBlockRef dead) {
    Regions *R = B->R;
    LLVMValueRef nf = B->nf;
    LLVMTypeRef i32 = c->i32;
    int nex = R->nb + 3, trap = R->nb + 2; /* exits: barriers 1..nb, return, a deferred trap */
    LLVMValueRef zero = LLVMConstInt(i32, 0, 0), one = LLVMConstInt(i32, 1, 0);
    LLVMValueRef none = LLVMConstInt(c->i64, 0, 0);
    LLVMBasicBlockRef hz = LLVMAppendBasicBlockInContext(c->llctx, nf, "region.z");
    LLVMBasicBlockRef hy = LLVMAppendBasicBlockInContext(c->llctx, nf, "region.y");
    LLVMBasicBlockRef hx = LLVMAppendBasicBlockInContext(c->llctx, nf, "region.x");
    LLVMBasicBlockRef lx = LLVMAppendBasicBlockInContext(c->llctx, nf, "region.next.x");
    LLVMBasicBlockRef ly = LLVMAppendBasicBlockInContext(c->llctx, nf, "region.next.y");
    LLVMBasicBlockRef lz = LLVMAppendBasicBlockInContext(c->llctx, nf, "region.next.z");
    LLVMBasicBlockRef after = LLVMAppendBasicBlockInContext(c->llctx, nf, "region.after");
    LLVMMetadataRef gmd = access_group(c);
    LLVMValueRef group = B->group = gmd ? LLVMMetadataAsValue(c->llctx, gmd) : NULL;

    /* the uniform values as every thread finds them at the region's start */
    LLVMPositionBuilderAtEnd(c->b, B->pre[r]);
    LLVMValueRef *snap = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(R->na + 1));
    if (!snap) return -1;
    if (r > 0)
        for (int a = 0; a < R->na; a++)
            if (R->kind[a] == A_UNIFORM)
                snap[a] = LLVMBuildLoad2(c->b, LLVMGetAllocatedType(R->allocas[a]), B->fa[a], "");
    LLVMBuildBr(c->b, hz);

    LLVMPositionBuilderAtEnd(c->b, hz);
    /* seen: the exits some thread took, a bit each (an or, which the vectoriser reduces) */
    LLVMValueRef tz = LLVMBuildPhi(c->b, i32, "tz"), seenz = LLVMBuildPhi(c->b, c->i64, "");
    LLVMBuildBr(c->b, hy);
    LLVMPositionBuilderAtEnd(c->b, hy);
    LLVMValueRef ty = LLVMBuildPhi(c->b, i32, "ty"), seeny = LLVMBuildPhi(c->b, c->i64, "");
    LLVMValueRef row = LLVMBuildMul(c->b,
                                    LLVMBuildAdd(c->b, LLVMBuildMul(c->b, LLVMBuildZExt(c->b, tz, c->i64, ""),
                                                                    LLVMBuildZExt(c->b, dims[1], c->i64, ""), ""),
                                                 LLVMBuildZExt(c->b, ty, c->i64, ""), ""),
                                    LLVMBuildZExt(c->b, dims[0], c->i64, ""), "");
    LLVMBuildBr(c->b, hx);
    LLVMPositionBuilderAtEnd(c->b, hx);
    LLVMValueRef tx = LLVMBuildPhi(c->b, i32, "tx"), seenx = LLVMBuildPhi(c->b, c->i64, "");

    LLVMValueRef lin = LLVMBuildAdd(c->b, row, LLVMBuildZExt(c->b, tx, c->i64, ""), "lin");
    B->tid[0] = tx, B->tid[1] = ty, B->tid[2] = tz;
    map_clear(&B->vmap);
    for (int a = 0; a < R->na; a++)
        if (R->kind[a] == A_CONTEXT) {
            LLVMValueRef o = LLVMBuildMul(c->b, lin, LLVMConstInt(c->i64, B->stride[a], 0), "");
            B->cptr[a] = LLVMBuildInBoundsGEP2(c->b, c->i8, B->cbase[a], &o, 1, "");
        }
    if (r > 0) {
        for (int a = 0; a < R->na; a++)
            if (R->kind[a] == A_UNIFORM) join_group(c, LLVMBuildStore(c->b, snap[a], B->fa[a]), group);
        for (int a = 0; a < R->na; a++)
            if (R->kind[a] == A_REMAT && R->exposed[a]) {
                LLVMValueRef v = remat(c, B, LLVMGetOperand(R->store[a], 0));
                if (!v) return -1;
                join_group(c, LLVMBuildStore(c->b, v, B->fa[a]), group);
            }
        map_clear(&B->vmap);
    }
    if (B->next_base) B->next_ptr = LLVMBuildInBoundsGEP2(c->b, i32, B->next_base, &lin, 1, "");

    /* the region's blocks */
    memset(B->stub, 0, sizeof *B->stub * (size_t)nex);
    memset(B->defer, 0, sizeof *B->defer * (size_t)R->nbb);
    int *list = R->blocks[r];
    /* a failure path that is deferred is not cloned into the loop */
    memset(B->seen, 0, (size_t)R->nbb);
    for (int i = 0; i < R->nblocks[r]; i++) {
        int b = list[i];
        bool skip = B->trap_base && R->trapok[b] && !R->barrier[b] && b != 0;
        for (int p = 0; p < R->npred[b] && skip; p++) {
            int q = R->pred[b][p];
            skip = !R->in[(size_t)r * (size_t)R->nbb + (size_t)q] || R->live[q] || R->trapok[q];
        }
        B->seen[b] = skip;
        B->clone[b] = skip ? NULL : LLVMAppendBasicBlockInContext(c->llctx, nf, "");
    }
    if (r == R->g) {
        LLVMValueRef nx = LLVMBuildLoad2(c->b, i32, B->next_ptr, "");
        join_group(c, nx, group);
        LLVMValueRef sw = LLVMBuildSwitch(c->b, nx, B->clone[R->bblock[1]], (unsigned)R->nb);
        for (int k = 2; k <= R->nb; k++) LLVMAddCase(sw, LLVMConstInt(i32, (unsigned)k, 0), B->clone[R->bblock[k]]);
        /* a thread that returned in an earlier region returns again, taking no part */
        LLVMBasicBlockRef at = LLVMGetInsertBlock(c->b);
        LLVMAddCase(sw, LLVMConstInt(i32, (unsigned)R->nb + 1, 0), stub(c, B, lx, R->nb + 1));
        LLVMPositionBuilderAtEnd(c->b, at);
    } else
        LLVMBuildBr(c->b, B->clone[list[0]]);
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(R->fn);
    unsigned char *skipped = arena_alloc(&c->arena, (size_t)R->nbb);
    if (!skipped) return -1;
    memcpy(skipped, B->seen, (size_t)R->nbb);
    for (int i = 0; i < R->nblocks[r]; i++) {
        int b = list[i];
        if (skipped[b]) continue;
        LLVMValueRef skip = R->barrier[b] ? R->site[R->barrier[b]] : NULL;
        for (LLVMValueRef in = LLVMGetFirstInstruction(R->bbs[b]); in; in = LLVMGetNextInstruction(in)) {
            LLVMPositionBuilderAtEnd(c->b, B->clone[b]);
            if (in == skip) continue;
            if (R->bbs[b] == entry && LLVMIsAAllocaInst(in)) continue;
            if (LLVMIsAReturnInst(in)) {
                LLVMBasicBlockRef s = stub(c, B, lx, R->nb + 1);
                LLVMPositionBuilderAtEnd(c->b, B->clone[b]);
                LLVMBuildBr(c->b, s);
                continue;
            }
            LLVMValueRef cl = LLVMInstructionClone(in);
            for (int k = 0, n = LLVMGetNumOperands(in); k < n; k++) {
                LLVMValueRef op = LLVMGetOperand(in, (unsigned)k);
                if (LLVMValueIsBasicBlock(op)) continue;
                LLVMValueRef m = remap(c, B, op);
                if (!m) return -1;
                LLVMSetOperand(cl, (unsigned)k, m);
            }
            LLVMInsertIntoBuilder(c->b, cl);
            join_group(c, cl, group);
            map_put(&B->vmap, in, (intptr_t)cl);
            if (LLVMIsATerminatorInst(in))
                for (unsigned k = 0, n = LLVMGetNumSuccessors(in); k < n; k++) {
                    int s = bb_of(R, LLVMGetSuccessor(in, k));
                    LLVMBasicBlockRef to = R->barrier[s]                         ? stub(c, B, lx, R->barrier[s])
                                           : B->trap_base && R->live[b] && R->trapok[s] ? defer_block(c, B, s, lin, lx)
                                                                                     : B->clone[s];
                    if (!to) return -1;
                    LLVMSetSuccessor(cl, k, to);
                }
        }
    }

    /* the latch: which exit this thread took; the least and the most of them */
    LLVMPositionBuilderAtEnd(c->b, lx);
    LLVMValueRef e = LLVMBuildPhi(c->b, i32, "exit");
    int nstubs = 0, only = -1, ndefer = 0;
    for (int k = 1; k < nex; k++)
        if (B->stub[k]) {
            LLVMValueRef kv = LLVMConstInt(i32, (unsigned)k, 0);
            LLVMAddIncoming(e, &kv, &B->stub[k], 1);
            nstubs++, only = k;
        }
    /* a deferred failure path: which one, for every thread (0: none) */
    LLVMValueRef kt = LLVMConstInt(i32, (unsigned)trap, 0), which = NULL;
    for (int d = 0; d < R->nbb; d++)
        if (B->defer[d]) {
            if (!which) {
                which = LLVMBuildPhi(c->b, i32, "trap");
                LLVMValueRef z = LLVMConstInt(i32, 0, 0);
                for (int k = 1; k < nex; k++)
                    if (B->stub[k]) LLVMAddIncoming(which, &z, &B->stub[k], 1);
            }
            LLVMValueRef dv = LLVMConstInt(i32, (unsigned)d + 1, 0);
            LLVMAddIncoming(e, &kt, &B->defer[d], 1);
            LLVMAddIncoming(which, &dv, &B->defer[d], 1);
            ndefer++;
        }
    if (ndefer) {
        LLVMValueRef p = LLVMBuildInBoundsGEP2(c->b, i32, B->trap_base, &lin, 1, "");
        join_group(c, LLVMBuildStore(c->b, which, p), group);
    }
    if (!nstubs && !ndefer) { /* every path traps */
        LLVMInstructionEraseFromParent(e);
        e = LLVMConstInt(i32, 0, 0);
    }
    LLVMValueRef seen1 =
            LLVMBuildOr(c->b, seenx, LLVMBuildShl(c->b, LLVMConstInt(c->i64, 1, 0), LLVMBuildZExt(c->b, e, c->i64, ""), ""), "");
    if (B->next_ptr) join_group(c, LLVMBuildStore(c->b, e, B->next_ptr), group);

    LLVMValueRef tx1 = LLVMBuildNSWAdd(c->b, tx, one, "");
    LLVMValueRef xbr = LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, tx1, dims[0], ""), hx, ly);
    LLVMSetMetadata(xbr, LLVMGetMDKindIDInContext(c->llctx, "llvm.loop", 9), thread_loop_md(c, gmd));
    LLVMPositionBuilderAtEnd(c->b, ly);
    LLVMValueRef ty1 = LLVMBuildNSWAdd(c->b, ty, one, "");
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, ty1, dims[1], ""), hy, lz);
    LLVMPositionBuilderAtEnd(c->b, lz);
    LLVMValueRef tz1 = LLVMBuildNSWAdd(c->b, tz, one, "");
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, tz1, dims[2], ""), hz, after);
    LLVMBasicBlockRef pre = B->pre[r];
    LLVMAddIncoming(tz, (LLVMValueRef[]){zero, tz1}, (LLVMBasicBlockRef[]){pre, lz}, 2);
    LLVMAddIncoming(seenz, (LLVMValueRef[]){none, seen1}, (LLVMBasicBlockRef[]){pre, lz}, 2);
    LLVMAddIncoming(ty, (LLVMValueRef[]){zero, ty1}, (LLVMBasicBlockRef[]){hz, ly}, 2);
    LLVMAddIncoming(seeny, (LLVMValueRef[]){seenz, seen1}, (LLVMBasicBlockRef[]){hz, ly}, 2);
    LLVMAddIncoming(tx, (LLVMValueRef[]){zero, tx1}, (LLVMBasicBlockRef[]){hy, lx}, 2);
    LLVMAddIncoming(seenx, (LLVMValueRef[]){seeny, seen1}, (LLVMBasicBlockRef[]){hy, lx}, 2);

    /* after the loop: a deferred failure path first */
    LLVMPositionBuilderAtEnd(c->b, after);
    if (ndefer) {
        if (!B->replay) B->replay = LLVMAppendBasicBlockInContext(c->llctx, nf, "region.trap");
        LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(c->llctx, nf, "region.go");
        LLVMValueRef bit = LLVMBuildAnd(c->b, seen1, LLVMConstInt(c->i64, 1ull << trap, 0), "");
        LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntNE, bit, none, ""), B->replay,
                        go);
        LLVMPositionBuilderAtEnd(c->b, go);
    }
    /* then every thread took the same exit, whose region is next */
    if (nstubs == 0) {
        LLVMBuildUnreachable(c->b);
        return 0;
    }
    LLVMBasicBlockRef target_of_only = only == R->nb + 1 ? B->ret : B->pre[only];
    if (nstubs == 1) {
        LLVMBuildBr(c->b, target_of_only);
        return 0;
    }
    LLVMBasicBlockRef same = LLVMAppendBasicBlockInContext(c->llctx, nf, "region.same");
    LLVMBasicBlockRef split = LLVMAppendBasicBlockInContext(c->llctx, nf, "region.split");
    LLVMValueRef lowest = LLVMBuildAnd(c->b, seen1, LLVMBuildSub(c->b, seen1, LLVMConstInt(c->i64, 1, 0), ""), "");
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, lowest, none, ""), same, split);
    LLVMPositionBuilderAtEnd(c->b, same);
    LLVMValueRef cz[2] = {seen1, LLVMConstInt(c->i1, 1, 0)};
    LLVMValueRef only_exit = LLVMBuildTrunc(c->b, call_intrinsic(c, "llvm.cttz", &c->i64, 1, cz, 2), i32, "");
    LLVMValueRef sw = LLVMBuildSwitch(c->b, only_exit, dead, (unsigned)nstubs);
    LLVMAddIncoming(B->dead_seen, &seen1, &same, 1);
    for (int k = 1; k < trap; k++)
        if (B->stub[k]) LLVMAddCase(sw, LLVMConstInt(i32, (unsigned)k, 0), k == R->nb + 1 ? B->ret : B->pre[k]);
    /* threads that parted go on in the divergent region, which each enters where it waits
     * and which the returned ones leave at once */
    LLVMPositionBuilderAtEnd(c->b, split);
    if (R->g >= 0)
        LLVMBuildBr(c->b, B->pre[R->g]);
    else {
        LLVMBuildBr(c->b, dead);
        LLVMAddIncoming(B->dead_seen, &seen1, &split, 1);
    }
    return 0;
}

static int build(Ctx *c, Regions *R, LLVMValueRef *out) {
    Build B = {.R = R};
    B.stride = arena_alloc(&c->arena, sizeof(uint64_t) * (size_t)(R->na + 1));
    if (!B.stride) return -1;
    /* each thread's values, past a limit a fiber's stack serves better */
    LLVMTargetDataRef td = LLVMGetModuleDataLayout(c->mod);
    uint64_t total = (R->g >= 0 ? 4 + 64 : 0) + (R->any_trap ? 4 + 64 : 0) +
                     (uint64_t)R->nsave * (R->save_stride + 64);
    if (total > REGION_MAX_CONTEXT) return 0;
    for (int a = 0; a < R->na; a++)
        if (R->kind[a] == A_CONTEXT) {
            uint64_t al = LLVMGetAlignment(R->allocas[a]), size = LLVMABISizeOfType(td, LLVMGetAllocatedType(R->allocas[a]));
            if (al < 1) al = 1;
            if (al > 64) return 0;
            B.stride[a] = (size + al - 1) / al * al;
            total += B.stride[a] + 64;
            if (total > REGION_MAX_CONTEXT) return 0;
        }
    LLVMTypeRef fty = LLVMGlobalGetValueType(R->fn);
    size_t len;
    const char *name = LLVMGetValueName2(R->fn, &len);
    LLVMValueRef nf = B.nf = LLVMAddFunction(c->mod, arena_printf(&c->arena, "%.*s_regions", (int)len, name), fty);
    LLVMSetLinkage(nf, LLVMInternalLinkage);
    unsigned inl = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
    LLVMAddAttributeAtIndex(nf, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->llctx, inl, 0));
    LLVMAddAttributeAtIndex(nf, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(c->llctx, "probe-stack", 11, "inline-asm", 10));
    B.fa = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(R->na + 1));
    B.cbase = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(R->na + 1));
    B.cptr = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(R->na + 1));
    B.clone = arena_alloc(&c->arena, sizeof(LLVMBasicBlockRef) * (size_t)R->nbb);
    B.pre = arena_alloc(&c->arena, sizeof(LLVMBasicBlockRef) * (size_t)(R->nr + 1));
    B.stub = arena_alloc(&c->arena, sizeof(LLVMBasicBlockRef) * (size_t)(R->nb + 3));
    B.defer = arena_alloc(&c->arena, sizeof(LLVMBasicBlockRef) * (size_t)R->nbb);
    B.seen = arena_alloc(&c->arena, (size_t)R->nbb);
    B.sbase = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(R->nsave + 1));
    B.list = arena_alloc(&c->arena, sizeof(int) * (size_t)(R->na + 1));
    B.stack = arena_alloc(&c->arena, sizeof(int) * (size_t)R->nbb);
    B.done = arena_alloc(&c->arena, sizeof(bool) * (size_t)(R->na + 1));
    B.deferred = arena_alloc(&c->arena, sizeof(bool) * (size_t)R->nbb);
    if (!B.defer || !B.seen || !B.sbase || !B.list || !B.stack || !B.done || !B.deferred) return -1;
    unsigned ninstr = 0;
    for (int b = 0; b < R->nbb; b++)
        for (LLVMValueRef in = LLVMGetFirstInstruction(R->bbs[b]); in; in = LLVMGetNextInstruction(in)) ninstr++;
    if (!B.fa || !B.cbase || !B.cptr || !B.clone || !B.pre || !B.stub || map_init(c, &B.vmap, ninstr) < 0)
        return -1;

    LLVMBasicBlockRef fentry = LLVMAppendBasicBlockInContext(c->llctx, nf, "entry");
    LLVMPositionBuilderAtEnd(c->b, fentry);
    uint64_t per_thread = 0;
    for (int a = 0; a < R->na; a++) {
        LLVMTypeRef t = LLVMGetAllocatedType(R->allocas[a]);
        if (R->kind[a] != A_CONTEXT) {
            B.fa[a] = LLVMBuildAlloca(c->b, t, "");
            LLVMSetAlignment(B.fa[a], LLVMGetAlignment(R->allocas[a]));
            continue;
        }
        per_thread += B.stride[a] + 64;
    }
    per_thread += (uint64_t)R->nsave * (R->save_stride + 64);
    if (R->g >= 0) per_thread += 4 + 64;
    if (R->any_trap) per_thread += 4 + 64;
    LLVMValueRef blk = LLVMGetParam(nf, 0);
    LLVMValueRef dims[3];
    for (int d = 0; d < 3; d++) {
        LLVMValueRef o = LLVMConstInt(c->i64, offsetof(GjBlockCtx, ntid) + 4 * (unsigned)d, 0);
        dims[d] = LLVMBuildLoad2(c->b, c->i32, LLVMBuildInBoundsGEP2(c->b, c->i8, blk, &o, 1, ""), "");
        LLVMSetAlignment(dims[d], 4);
        /* never negative (as target_host.c says of every geometry field):
         * a thread index is then known not to be, and an index built from
         * it needs no wrap-around */
        LLVMMetadataRef range[2] = {LLVMValueAsMetadata(LLVMConstInt(c->i32, 0, 0)),
                                    LLVMValueAsMetadata(LLVMConstInt(c->i32, 0x80000000u, 0))};
        LLVMSetMetadata(dims[d], LLVMGetMDKindIDInContext(c->llctx, "range", 5),
                        LLVMMetadataAsValue(c->llctx, LLVMMDNodeInContext2(c->llctx, range, 2)));
    }
    if (per_thread) {
        LLVMTypeRef pt[2] = {c->ptr, c->i64};
        LLVMValueRef args[2] = {blk, LLVMConstInt(c->i64, per_thread, 0)};
        LLVMValueRef base = blk_call(c, blk, offsetof(GjBlockCtx, region_scratch), c->ptr, pt, args, 2);
        unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
        LLVMAddCallSiteAttribute(base, LLVMAttributeReturnIndex, LLVMCreateEnumAttribute(c->llctx, noalias, 0));
        LLVMValueRef n = LLVMBuildMul(c->b,
                                      LLVMBuildMul(c->b, LLVMBuildZExt(c->b, dims[0], c->i64, ""),
                                                   LLVMBuildZExt(c->b, dims[1], c->i64, ""), ""),
                                      LLVMBuildZExt(c->b, dims[2], c->i64, ""), "");
        LLVMValueRef off = LLVMConstInt(c->i64, 0, 0);
        /* the arrays: context allocas, kept values, the next barriers, the failure paths */
        for (int i = 0; i < R->na + R->nsave + 2; i++) {
            int a = i, k = i - R->na;
            LLVMValueRef *slot = i < R->na            ? (R->kind[a] == A_CONTEXT ? &B.cbase[a] : NULL)
                                 : k < R->nsave       ? &B.sbase[k]
                                 : k == R->nsave      ? (R->g >= 0 ? &B.next_base : NULL)
                                                      : (R->any_trap ? &B.trap_base : NULL);
            if (!slot) continue;
            *slot = LLVMBuildInBoundsGEP2(c->b, c->i8, base, &off, 1, "");
            uint64_t stride = i < R->na ? B.stride[a] : k < R->nsave ? R->save_stride : 4;
            LLVMValueRef bytes = LLVMBuildAdd(c->b, LLVMBuildMul(c->b, n, LLVMConstInt(c->i64, stride, 0), ""),
                                              LLVMConstInt(c->i64, 63, 0), "");
            off = LLVMBuildAnd(c->b, LLVMBuildAdd(c->b, off, bytes, ""), LLVMConstInt(c->i64, ~(uint64_t)63, 0), "");
        }
    }
    for (int r = 0; r < R->nr; r++) B.pre[r] = LLVMAppendBasicBlockInContext(c->llctx, nf, "region");
    B.ret = LLVMAppendBasicBlockInContext(c->llctx, nf, "return");
    LLVMBasicBlockRef dead = LLVMAppendBasicBlockInContext(c->llctx, nf, "region.deadlock");
    LLVMPositionBuilderAtEnd(c->b, fentry);
    LLVMBuildBr(c->b, B.pre[0]);
    LLVMPositionBuilderAtEnd(c->b, B.ret);
    LLVMBuildRetVoid(c->b);
    LLVMPositionBuilderAtEnd(c->b, dead);
    /* region_deadlock(blk, seen, exit_sites, nexits): exit k's syncthreads() site, -1 for the return */
    B.dead_seen = LLVMBuildPhi(c->b, c->i64, "seen");
    int nexits = R->nb + 2;
    LLVMValueRef *ids = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)nexits);
    if (!ids) return -1;
    for (int k = 0; k < nexits; k++)
        ids[k] = LLVMConstInt(c->i32, (unsigned long long)(k >= 1 && k <= R->nb ? R->site_id[k] : -1), 1);
    LLVMTypeRef tab_ty = LLVMArrayType2(c->i32, (uint64_t)nexits);
    LLVMValueRef tab = LLVMAddGlobal(c->mod, tab_ty, "region.exit_sites");
    LLVMSetInitializer(tab, LLVMConstArray2(c->i32, ids, (uint64_t)nexits));
    LLVMSetGlobalConstant(tab, 1);
    LLVMSetLinkage(tab, LLVMPrivateLinkage);
    LLVMTypeRef dpt[4] = {c->ptr, c->i64, c->ptr, c->i32};
    LLVMValueRef dargs[4] = {blk, B.dead_seen, tab, LLVMConstInt(c->i32, (unsigned)nexits, 0)};
    LLVMValueRef call = blk_call(c, blk, offsetof(GjBlockCtx, region_deadlock), c->voidt, dpt, dargs, 4);
    unsigned nr = LLVMGetEnumAttributeKindForName("noreturn", 8);
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->llctx, nr, 0));
    LLVMBuildUnreachable(c->b);
    for (int r = 0; r < R->nr; r++) RETURN_IF_ERROR(build_region(c, &B, r, dims, dead));
    if (B.replay) {
        LLVMPositionBuilderAtEnd(c->b, B.replay);
        RETURN_IF_ERROR(replay_traps(c, &B, dims));
    }
    if (LLVMVerifyFunction(nf, LLVMReturnStatusAction))
        return internal_error(c, NO_LOCATION, "barrier regions: the loops over threads of %s do not verify", name);
    /* named in the module (inspect_llvm) where threads may part: the slower loop exists */
    if (R->g >= 0) LLVMAddNamedMetadataOperand(c->mod, "gpujit.cpu_divergent_region", LLVMMDNodeInContext(c->llctx, NULL, 0));
    *out = nf;
    return 1;
}

/* The region in which threads that parted go on, each from where it waits. */
static int add_divergent_region(Ctx *c, Regions *R, long *clones) {
    R->g = R->nb + 1;
    R->nr = R->nb + 2;
    RETURN_IF_ERROR(find_region(c, R, R->g, &R->bblock[1], R->nb));
    *clones += R->nblocks[R->g];
    return 0;
}

/* The exits (barrier k, or nb + 1: a return) that paths from b's successors in region r
 * reach without passing through block p (-1: none): none (0), one (1, in *one) or more (2). */
static int exits_avoiding(Regions *R, int r, int b, int p, int *stack, unsigned char *seen, int *one) {
    const unsigned char *in = R->in + (size_t)r * (size_t)R->nbb;
    memset(seen, 0, (size_t)R->nbb);
    int n = 0, found = 0;
    *one = 0;
    seen[b] = 1;
    for (int k = 0; k < R->nsucc[b]; k++) stack[n++] = R->succ[b][k];
    while (n > 0) {
        int s = stack[--n], e = 0;
        if (R->barrier[s])
            e = R->barrier[s];
        else if (s != p && !seen[s] && in[s] && R->live[s]) {
            seen[s] = 1;
            if (LLVMIsAReturnInst(LLVMGetBasicBlockTerminator(R->bbs[s])))
                e = R->nb + 1;
            else
                for (int k = 0; k < R->nsucc[s]; k++) stack[n++] = R->succ[s][k];
        }
        if (e && !found)
            *one = e, found = 1;
        else if (e && e != *one)
            return 2;
    }
    return found;
}

/* Whether threads of a block can leave one region by different exits, under the kinds
 * classify found: a branch on a divergent value in a region with several exits, whose
 * paths reach them without first meeting at a block of the region. */
static int may_part(Ctx *c, Regions *R, bool *part) {
    enum { MAX_BLOCKS = 256 }; /* beyond: assume they may */
    int nbb = R->nbb, nb = R->nb;
    size_t edges = 1;
    for (int b = 0; b < nbb; b++) edges += (size_t)R->nsucc[b];
    int *stack = arena_alloc(&c->arena, sizeof(int) * edges); /* a block is expanded once */
    unsigned char *seen = arena_alloc(&c->arena, (size_t)nbb);
    if (!stack || !seen) return -1;
    *part = false;
    map_clear(&R->memo);
    for (int r = 0; r <= nb && !*part; r++) {
        const unsigned char *ex = R->exits + (size_t)r * (size_t)(nb + 2);
        int nexits = 0;
        for (int k = 1; k <= nb + 1; k++) nexits += ex[k];
        if (nexits < 2) continue;
        if (R->nblocks[r] > MAX_BLOCKS) {
            *part = true;
            break;
        }
        for (int i = 0; i < R->nblocks[r] && !*part; i++) {
            int b = R->blocks[r][i], one;
            if (!divergent_branch(R, b)) continue;
            if (exits_avoiding(R, r, b, -1, stack, seen, &one) < 2) continue; /* every path to one exit */
            bool met = false;
            for (int j = 0; j < R->nblocks[r] && !met; j++)
                met = R->blocks[r][j] != b && exits_avoiding(R, r, b, R->blocks[r][j], stack, seen, &one) == 0;
            *part = !met;
        }
    }
    return 0;
}

int host_regions(Ctx *c, LLVMValueRef *sites, int nsites, LLVMValueRef *out) {
    Regions R = {.fn = c->fn, .nb = nsites, .g = -1};
    *out = NULL;
    if (nsites > REGION_MAX_BARRIERS) return 0;
    R.site = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(nsites + 1));
    if (!R.site) return -1;
    R.site_id = arena_alloc(&c->arena, sizeof(int32_t) * (size_t)(nsites + 1));
    if (!R.site_id) return -1;
    for (int i = 0; i < nsites; i++) {
        LLVMValueRef id = LLVMGetOperand(sites[i], 1);
        R.site_id[i + 1] = LLVMIsAConstantInt(id) ? (int32_t)LLVMConstIntGetSExtValue(id) : -1;
        R.site[i + 1] = split_at(c, c->fn, sites[i]);
    }
    RETURN_IF_ERROR(run_passes(c, "function(sroa,reg2mem)", "barrier regions", false));
    RETURN_IF_ERROR(index_blocks(c, &R));
    int nb = R.nb;
    R.nr = nb + 2;
    R.in = arena_alloc(&c->arena, (size_t)R.nr * (size_t)R.nbb);
    R.exits = arena_alloc(&c->arena, (size_t)R.nr * (size_t)(nb + 2));
    R.blocks = arena_alloc(&c->arena, sizeof(int *) * (size_t)R.nr);
    R.nblocks = arena_alloc(&c->arena, sizeof(int) * (size_t)R.nr);
    if (!R.in || !R.exits || !R.blocks || !R.nblocks) return -1;
    int entry = 0;
    RETURN_IF_ERROR(find_region(c, &R, 0, &entry, 1));
    bool two_barriers = false, barrier_and_return = false;
    long clones = R.nblocks[0];
    for (int k = 1; k <= nb; k++) {
        RETURN_IF_ERROR(find_region(c, &R, k, &R.bblock[k], 1));
        clones += R.nblocks[k];
    }
    for (int r = 0; r <= nb; r++) {
        int nbar = 0;
        for (int k = 1; k <= nb; k++) nbar += R.exits[(size_t)r * (size_t)(nb + 2) + (size_t)k];
        two_barriers |= nbar > 1;
        barrier_and_return |= nbar == 1 && R.exits[(size_t)r * (size_t)(nb + 2) + (size_t)(nb + 1)];
    }
    /* threads may part at two barriers; at a barrier and a return only where the choice
     * between them depends on the thread (a uniform loop's last round ends them all) */
    R.nr = nb + 1;
    if (two_barriers) RETURN_IF_ERROR(add_divergent_region(c, &R, &clones));
    if (clones > REGION_MAX_CLONES) return 0;
    int ok = find_allocas(c, &R);
    if (ok <= 0) return ok;
    RETURN_IF_ERROR(find_exposed(c, &R));
    RETURN_IF_ERROR(classify(c, &R));
    if (!two_barriers && barrier_and_return) {
        bool part;
        RETURN_IF_ERROR(may_part(c, &R, &part));
        if (part) {
            RETURN_IF_ERROR(add_divergent_region(c, &R, &clones));
            if (clones > REGION_MAX_CLONES) return 0;
            RETURN_IF_ERROR(classify(c, &R)); /* its blocks are run by some threads only */
        }
    }
    one_copy(&R);
    RETURN_IF_ERROR(find_deferred_traps(c, &R));
    return build(c, &R, out);
}
