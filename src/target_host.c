/* target_host.c: the CPU backend's side of lowering. The kernel body becomes
 * an internal function body(blk, tx, ty, tz, params...) reading block
 * geometry from a GjBlockCtx (runtime/cpu_abi.h, addressed by offsetof); two
 * entry points unpack a cuLaunchKernel-style params array: _block loops over
 * every thread of a block (kernels without barriers), _thread runs one
 * thread (kernels with barriers run each thread on a fiber). Kernels with
 * syncthreads() only in their body become loops over the threads between
 * barriers (regions.c) where they fit; those with loops, and the other such
 * barrier kernels, become coroutines whose threads the runtime interleaves
 * (interleave, below). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Transforms/PassBuilder.h>

#include "gj.h"

enum {
    OFF_NTID = offsetof(GjBlockCtx, ntid),
    OFF_CTAID = offsetof(GjBlockCtx, ctaid),
    OFF_NCTAID = offsetof(GjBlockCtx, nctaid),
    OFF_SHARED = offsetof(GjBlockCtx, shared),
    OFF_SYNC = offsetof(GjBlockCtx, syncthreads),
    OFF_SHARED_BYTES = offsetof(GjBlockCtx, shared_bytes),
    OFF_SYNC_REDUCE = offsetof(GjBlockCtx, sync_reduce),
    OFF_WARP = offsetof(GjBlockCtx, warp),
    OFF_TRAP = offsetof(GjBlockCtx, trap),
    OFF_GRID_SYNC = offsetof(GjBlockCtx, grid_sync),
    OFF_CORO_ALLOC = offsetof(GjBlockCtx, coro_alloc),
    OFF_CORO_BEGIN = offsetof(GjBlockCtx, coro_begin),
    OFF_CORO_RUN = offsetof(GjBlockCtx, coro_run),
    OFF_CORO_EVERY = offsetof(GjBlockCtx, coro_every),
    OFF_RACE = offsetof(GjBlockCtx, race),
};
/* The loads below are i32 and i64. */
_Static_assert(sizeof(((GjBlockCtx *)0)->ntid[0]) == 4 && sizeof(((GjBlockCtx *)0)->shared_bytes) == 8,
               "GjBlockCtx field widths");

/* Threads of barrier kernels run on small fiber stacks with a guard page
 * below: frames over a page (big local arrays) must touch each page in turn
 * so that an overflow faults at the guard instead of corrupting a neighbour. */
static void probe_stack(Ctx *c, LLVMValueRef fn) {
    LLVMAttributeRef a = LLVMCreateStringAttribute(c->llctx, "probe-stack", 11, "inline-asm", 10);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, a);
}

static int begin_kernel(Ctx *c, LLVMTypeRef *params, int nparams) {
    LLVMTypeRef *all = arena_alloc(&c->arena, sizeof(LLVMTypeRef) * (size_t)(nparams + 4));
    if (!all) return -1;
    all[0] = c->ptr;
    all[1] = all[2] = all[3] = c->i32;
    for (int i = 0; i < nparams; i++) all[4 + i] = params[i];
    LLVMTypeRef fty = LLVMFunctionType(c->voidt, all, (unsigned)nparams + 4, 0);
    c->fn = LLVMAddFunction(c->mod, arena_printf(&c->arena, "%s_body", c->symbol), fty);
    LLVMSetLinkage(c->fn, LLVMInternalLinkage);
    c->host_blk = LLVMGetParam(c->fn, 0);
    for (int d = 0; d < 3; d++) c->host_tid[d] = LLVMGetParam(c->fn, (unsigned)(1 + d));
    unsigned kind = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
    LLVMAddAttributeAtIndex(c->fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->llctx, kind, 0));
    probe_stack(c, c->fn);
    return 0;
}

/* The CPU has no PTX cache operators: numba's cache-hinted loads and stores are plain ones. */
static LLVMValueRef cache_access(Ctx *c, const char *op, LLVMValueRef p, LLVMTypeRef t, LLVMValueRef v) {
    (void)op;
    LLVMValueRef r = v ? LLVMBuildStore(c->b, v, p) : LLVMBuildLoad2(c->b, t, p, "");
    LLVMSetAlignment(r, LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(t) / 8
                        : LLVMGetTypeKind(t) == LLVMFloatTypeKind ? 4
                        : LLVMGetTypeKind(t) == LLVMHalfTypeKind || LLVMGetTypeKind(t) == LLVMBFloatTypeKind ? 2
                                                                   : 8);
    return v ? NULL : r;
}

static LLVMValueRef field_ptr(Ctx *c, int off) {
    LLVMValueRef o = LLVMConstInt(c->i64, (unsigned long long)off, 0);
    return LLVMBuildInBoundsGEP2(c->b, c->i8, c->host_blk, &o, 1, "");
}

/* A geometry field (blockDim, blockIdx, gridDim): never negative, as the
 * runtime checks. Saying so lets LLVM see that an index built from them is
 * never negative, drop the wrap-around of negative indices, and keep array
 * accesses affine (vector loads instead of gathers). */
static LLVMValueRef load_i32(Ctx *c, int off) {
    LLVMValueRef v = LLVMBuildLoad2(c->b, c->i32, field_ptr(c, off), "");
    LLVMSetAlignment(v, 4);
    LLVMMetadataRef range[2] = {LLVMValueAsMetadata(LLVMConstInt(c->i32, 0, 0)),
                                LLVMValueAsMetadata(LLVMConstInt(c->i32, 0x80000000u, 0))};
    LLVMSetMetadata(v, LLVMGetMDKindIDInContext(c->llctx, "range", 5),
                    LLVMMetadataAsValue(c->llctx, LLVMMDNodeInContext2(c->llctx, range, 2)));
    /* nor changing while a thread runs (the runtime sets them before its
     * block starts): a loop may read them once, although it holds a call to
     * blk->trap, which LLVM would otherwise think may write them */
    LLVMSetMetadata(v, LLVMGetMDKindIDInContext(c->llctx, "invariant.load", 14),
                    LLVMMetadataAsValue(c->llctx, LLVMMDNodeInContext2(c->llctx, NULL, 0)));
    return v;
}

static LLVMValueRef special(Ctx *c, Special s, int dim) {
    switch (s) {
    case SP_TID: return c->host_tid[dim];
    case SP_NTID: return load_i32(c, OFF_NTID + 4 * dim);
    case SP_CTAID: return load_i32(c, OFF_CTAID + 4 * dim);
    case SP_NCTAID: return load_i32(c, OFF_NCTAID + 4 * dim);
    case SP_WARPSIZE: return LLVMConstInt(c->i32, 32, 0);
    case SP_LANEID: {
        /* lanes are numbered along the linear thread index, as on a GPU */
        LLVMValueRef nx = load_i32(c, OFF_NTID), ny = load_i32(c, OFF_NTID + 4);
        LLVMValueRef lin = LLVMBuildAdd(
                c->b,
                LLVMBuildMul(c->b, LLVMBuildAdd(c->b, LLVMBuildMul(c->b, c->host_tid[2], ny, ""), c->host_tid[1], ""),
                             nx, ""),
                c->host_tid[0], "");
        return LLVMBuildAnd(c->b, lin, LLVMConstInt(c->i32, 31, 0), "");
    }
    }
    return NULL;
}

/* syncthreads(): the block's barrier, told which call this is (its site, numbered in the root's
 * table of them, so that the barrier rule's error can say where each thread waits). */
static void barrier(Ctx *c) {
    Ctx *root = ctx_root(c);
    int site = root->barriers.n;
    vec_push(&root->arena, &root->barriers, arena_printf(&root->arena, "%s:%d", c->filename, c->cur_loc.line));
    LLVMValueRef fp = LLVMBuildLoad2(c->b, c->ptr, field_ptr(c, OFF_SYNC), "syncthreads");
    LLVMTypeRef pt[2] = {c->ptr, c->i32};
    LLVMValueRef args[2] = {c->host_blk, LLVMConstInt(c->i32, (unsigned)site, 0)};
    LLVMBuildCall2(c->b, LLVMFunctionType(c->voidt, pt, 2, 0), fp, args, 2, "");
}

static void grid_sync(Ctx *c) {
    LLVMValueRef fp = LLVMBuildLoad2(c->b, c->ptr, field_ptr(c, OFF_GRID_SYNC), "grid_sync");
    LLVMTypeRef fty = LLVMFunctionType(c->voidt, &c->ptr, 1, 0);
    LLVMBuildCall2(c->b, fty, fp, &c->host_blk, 1, "");
}

static LLVMValueRef shared_array(Ctx *c, LLVMTypeRef arrty, size_t offset) {
    LLVMValueRef base = LLVMBuildLoad2(c->b, c->ptr, field_ptr(c, OFF_SHARED), "shared");
    LLVMValueRef o = LLVMConstInt(c->i64, offset, 0);
    return LLVMBuildInBoundsGEP2(c->b, c->i8, base, &o, 1, "");
}

static LLVMValueRef math_fn(Ctx *c, const char *name, LLVMTypeRef fnty) {
    LLVMValueRef fn = LLVMGetNamedFunction(c->mod, name);
    if (!fn) fn = LLVMAddFunction(c->mod, name, fnty);
    return fn;
}

/* libdevice's functions: runtime/cpu_libdevice.c's, which the JIT knows as __nv_<name>. */
static LLVMValueRef libdevice_fn(Ctx *c, const char *name, LLVMTypeRef fnty) {
    if (!cpu_libdevice_symbol(name)) return NULL;
    const char *nv = arena_printf(&c->arena, "__nv_%s", name);
    LLVMValueRef fn = LLVMGetNamedFunction(c->mod, nv);
    if (!fn) fn = LLVMAddFunction(c->mod, nv, fnty);
    return fn;
}

/* Calls the runtime function whose pointer sits at `off` of the block context. */
static LLVMValueRef call_runtime(Ctx *c, int off, LLVMTypeRef ret, LLVMTypeRef *pt, LLVMValueRef *args, unsigned n) {
    LLVMValueRef fp = LLVMBuildLoad2(c->b, c->ptr, field_ptr(c, off), "");
    return LLVMBuildCall2(c->b, LLVMFunctionType(ret, pt, n, 0), fp, args, n, "");
}

static LLVMValueRef barrier_reduce(Ctx *c, int op, LLVMValueRef pred) {
    LLVMTypeRef pt[3] = {c->ptr, c->i32, c->i32};
    LLVMValueRef args[3] = {c->host_blk, LLVMConstInt(c->i32, (unsigned)op, 0), pred};
    return call_runtime(c, OFF_SYNC_REDUCE, c->i32, pt, args, 3);
}

/* Blocks run on different OS threads: a real fence. A block's threads are
 * fibers of one OS thread, so within a block only the compiler must not
 * move memory operations across (the runtime call at every switch already
 * orders them). */
static void fence(Ctx *c, FenceScope scope) {
    LLVMBuildFence(c->b, LLVMAtomicOrderingSequentiallyConsistent, scope == FENCE_BLOCK, "");
}

static LLVMValueRef warp(Ctx *c, WarpOp op, LLVMValueRef mask, LLVMValueRef v, LLVMValueRef arg) {
    LLVMTypeRef pt[5] = {c->ptr, c->i32, c->i32, c->i64, c->i32};
    LLVMTypeRef vt = v ? LLVMTypeOf(v) : c->i64;
    LLVMValueRef args[5] = {c->host_blk, LLVMConstInt(c->i32, (unsigned)op, 0),
                            mask ? mask : LLVMConstInt(c->i32, 0xFFFFFFFFu, 0),
                            v ? LLVMBuildZExt(c->b, v, c->i64, "") : LLVMConstInt(c->i64, 0, 0),
                            arg ? arg : LLVMConstInt(c->i32, 0, 0)};
    LLVMValueRef r = call_runtime(c, OFF_WARP, c->i64, pt, args, 5);
    if (op == WARP_SYNC) return NULL;
    return LLVMBuildTrunc(c->b, r, op <= WARP_SHFL_BFLY ? vt : c->i32, "");
}

/* Dynamic shared memory follows the static arrays, whose total typeinfer
 * keeps a multiple of 16 (so this base is aligned as on a GPU). */
static LLVMValueRef dynamic_shared(Ctx *c, LLVMValueRef *nbytes) {
    LLVMValueRef stat = LLVMConstInt(c->i64, ctx_root(c)->shared_bytes, 0);
    LLVMValueRef total = LLVMBuildLoad2(c->b, c->i64, field_ptr(c, OFF_SHARED_BYTES), "");
    *nbytes = LLVMBuildSub(c->b, total, stat, "");
    LLVMValueRef base = LLVMBuildLoad2(c->b, c->ptr, field_ptr(c, OFF_SHARED), "shared");
    return LLVMBuildInBoundsGEP2(c->b, c->i8, base, &stat, 1, "dynshared");
}

static LLVMValueRef const_array(Ctx *c, const char *bytes, size_t n) {
    LLVMValueRef init = LLVMConstStringInContext(c->llctx, bytes, (unsigned)n, 1);
    LLVMValueRef g = LLVMAddGlobal(c->mod, LLVMTypeOf(init), "__const");
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
    LLVMSetAlignment(g, 16);
    return g;
}

/* ---- interleaved threads: a barrier-free kernel with loops ----
 *
 * Run one after another, the threads of a block walk memory in thread-major
 * order: a grid-stride loop (i += gridsize) then strides through each array
 * gridsize elements at a time, a new page at every access. Instead, the body
 * of such a kernel becomes an LLVM coroutine that yields at every
 * GjBlockCtx.coro_every-th crossing of a loop's back edge: _block starts every thread
 * of the block (each runs until its first yield) and the runtime then
 * resumes them round-robin in linear order (GjBlockCtx.coro_run), so that
 * threads t and t+1 run their k-th iterations close together and touch
 * neighbouring addresses, as a warp does. A kernel without barriers cannot
 * tell the two schedules apart (no thread of a block may wait for another).
 * LLVM's coroutine passes keep only what lives across a yield in the
 * thread's frame (the runtime's memory, reused block after block).
 *
 * Not for kernels that print (their output would interleave by iteration),
 * nor for large local arrays (they would live in every thread's frame). */
enum { CORO_MAX_LOCALS = 256 };
typedef enum { CORO_NONE, CORO_LOOPS, CORO_BARRIERS } CoroMode;

static int ptr_cmp(const void *a, const void *b) {
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

static int bb_index(LLVMBasicBlockRef *sorted, int n, LLVMBasicBlockRef bb) {
    LLVMBasicBlockRef *p = bsearch(&bb, sorted, (size_t)n, sizeof *sorted, ptr_cmp);
    return p ? (int)(p - sorted) : -1;
}

typedef struct {
    LLVMBasicBlockRef from;
    unsigned succ;
} Edge;

/* The back edges of fn (to a block on the depth-first path), in *out; their
 * number, 0 where a loop cannot take a yield (a block that branches to its
 * header twice), -1 when out of memory. */
static int back_edges(Ctx *c, LLVMValueRef fn, Edge **out) {
    int n = (int)LLVMCountBasicBlocks(fn);
    LLVMBasicBlockRef *bbs = arena_alloc(&c->arena, sizeof *bbs * (size_t)n);
    int *state = arena_alloc(&c->arena, sizeof(int) * (size_t)n);
    int *stack = arena_alloc(&c->arena, sizeof(int) * (size_t)n);
    unsigned *next = arena_alloc(&c->arena, sizeof(unsigned) * (size_t)n);
    Edge *edges = arena_alloc(&c->arena, sizeof *edges * (size_t)n * 2 + 1);
    if (!bbs || !state || !stack || !next || !edges) return -1;
    LLVMGetBasicBlocks(fn, bbs);
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
    qsort(bbs, (size_t)n, sizeof *bbs, ptr_cmp);
    int sp = 0, ne = 0, cap = n * 2;
    stack[sp++] = bb_index(bbs, n, entry);
    state[stack[0]] = 1;
    while (sp > 0) {
        int v = stack[sp - 1];
        LLVMValueRef term = LLVMGetBasicBlockTerminator(bbs[v]);
        unsigned ns = term ? LLVMGetNumSuccessors(term) : 0;
        if (next[v] >= ns) {
            state[v] = 2;
            sp--;
            continue;
        }
        unsigned k = next[v]++;
        LLVMBasicBlockRef to = LLVMGetSuccessor(term, k);
        int u = bb_index(bbs, n, to);
        if (u < 0) return 0;
        if (state[u] == 1) {
            for (unsigned m = 0; m < ns; m++)
                if (m != k && LLVMGetSuccessor(term, m) == to) return 0;
            if (ne == cap) return 0;
            edges[ne++] = (Edge){bbs[v], k};
        } else if (state[u] == 0) {
            state[u] = 1;
            stack[sp++] = u;
        }
    }
    *out = edges;
    return ne;
}

static uint64_t alloca_bytes(Ctx *c) {
    uint64_t most = 0;
    LLVMTargetDataRef td = LLVMGetModuleDataLayout(c->mod);
    for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in))
                if (LLVMIsAAllocaInst(in)) {
                    uint64_t b = LLVMABISizeOfType(td, LLVMGetAllocatedType(in));
                    if (b > most) most = b;
                }
    return most;
}

static LLVMValueRef coro_call(Ctx *c, const char *name, LLVMTypeRef over, LLVMValueRef *args, int n) {
    return call_intrinsic(c, name, over ? &over : NULL, over ? 1 : 0, args, n);
}

/* A suspension at the builder (llvm.coro.suspend, `final` for the last one):
 * the runtime's resume continues at `resume`, its destroy at `cleanup`, and
 * the ramp's first return goes to `out`. */
static void suspend_here(Ctx *c, bool final, LLVMBasicBlockRef resume, LLVMBasicBlockRef cleanup,
                         LLVMBasicBlockRef out) {
    LLVMValueRef args[2] = {LLVMConstNull(LLVMTokenTypeInContext(c->llctx)), LLVMConstInt(c->i1, final, 0)};
    LLVMValueRef st = coro_call(c, "llvm.coro.suspend", NULL, args, 2);
    LLVMValueRef sw = LLVMBuildSwitch(c->b, st, out, 2);
    LLVMAddCase(sw, LLVMConstInt(c->i8, 0, 0), resume);
    LLVMAddCase(sw, LLVMConstInt(c->i8, 1, 0), cleanup);
}

/* The phis of `head`: what came from `from` now comes from each of via[]. */
void retarget_phis(Ctx *c, LLVMBasicBlockRef head, LLVMBasicBlockRef from, LLVMBasicBlockRef *via,
                   unsigned nvia) {
    LLVMValueRef phi = LLVMGetFirstInstruction(head);
    while (phi && LLVMIsAPHINode(phi)) {
        LLVMValueRef nxt = LLVMGetNextInstruction(phi);
        LLVMPositionBuilderBefore(c->b, phi);
        LLVMValueRef np = LLVMBuildPhi(c->b, LLVMTypeOf(phi), "");
        unsigned m = LLVMCountIncoming(phi);
        for (unsigned j = 0; j < m; j++) {
            LLVMValueRef v = LLVMGetIncomingValue(phi, j);
            LLVMBasicBlockRef in = LLVMGetIncomingBlock(phi, j);
            if (in == from)
                for (unsigned k = 0; k < nvia; k++) LLVMAddIncoming(np, &v, &via[k], 1);
            else
                LLVMAddIncoming(np, &v, &in, 1);
        }
        LLVMReplaceAllUsesWith(phi, np);
        LLVMInstructionEraseFromParent(phi);
        phi = nxt;
    }
}

/* What follows `site` in its block moves to the builder's position at the
 * end of `rest` (a new block, which then ends with the old terminator), and
 * the phis of the blocks it branches to name `rest` instead of site's block. */
void move_rest(Ctx *c, LLVMValueRef site, LLVMBasicBlockRef rest) {
    LLVMBasicBlockRef bb = LLVMGetInstructionParent(site);
    for (LLVMValueRef in = LLVMGetNextInstruction(site); in;) {
        LLVMValueRef nxt = LLVMGetNextInstruction(in);
        LLVMInstructionRemoveFromParent(in);
        LLVMInsertIntoBuilder(c->b, in);
        in = nxt;
    }
    LLVMValueRef term = LLVMGetBasicBlockTerminator(rest);
    for (unsigned k = 0, n = term ? LLVMGetNumSuccessors(term) : 0; k < n; k++) {
        LLVMBasicBlockRef succ = LLVMGetSuccessor(term, k);
        bool seen = false;
        for (unsigned m = 0; m < k; m++) seen |= LLVMGetSuccessor(term, m) == succ;
        if (!seen) retarget_phis(c, succ, bb, &rest, 1);
    }
}

/* The runtime hook a call goes through (the GjBlockCtx offset whose pointer
 * it loads), or -1. */
static int hook_of(LLVMValueRef call) {
    LLVMValueRef fp = LLVMGetCalledValue(call);
    if (!fp || !LLVMIsALoadInst(fp)) return -1;
    LLVMValueRef gep = LLVMGetOperand(fp, 0);
    if (!LLVMIsAGetElementPtrInst(gep) || LLVMGetNumOperands(gep) != 2) return -1;
    LLVMValueRef off = LLVMGetOperand(gep, 1);
    return LLVMIsAConstantInt(off) ? (int)LLVMConstIntGetZExtValue(off) : -1;
}

/* The syncthreads() calls of a barrier kernel's body, in *out: their number,
 * or -1 where the kernel cannot run as interleaved threads (a barrier in a
 * device function, or a block-wide or warp-wide operation other than
 * syncthreads(), which only fibers implement). */
static int barrier_sites(Ctx *c, LLVMValueRef **out) {
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
        n = 0;
        for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f))
            for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
                for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
                    if (!LLVMIsACallInst(in)) continue;
                    int h = hook_of(in);
                    if (h == OFF_SYNC_REDUCE || h == OFF_WARP || h == OFF_GRID_SYNC || (h == OFF_SYNC && f != c->fn))
                        return -1;
                    if (h == OFF_SYNC) {
                        if (pass) (*out)[n] = in;
                        n++;
                    }
                }
        if (!pass && !(*out = arena_alloc(&c->arena, sizeof **out * (size_t)(n + 1)))) return -1;
    }
    return n;
}

/* Turns the body into a coroutine that yields at its loops' back edges
 * (CORO_LOOPS) or at its barriers (CORO_BARRIERS); CORO_NONE (nothing
 * changed) where neither applies. */
static CoroMode interleave(Ctx *c) {
    Edge *edges = NULL;
    LLVMValueRef *sites = NULL;
    int ne = 0, ns = 0;
    if (alloca_bytes(c) > CORO_MAX_LOCALS) return CORO_NONE;
    if (ctx_root(c)->uses_barrier) {
        ns = barrier_sites(c, &sites);
        if (ns <= 0) return CORO_NONE;
    } else {
        if (LLVMGetNamedFunction(c->mod, "printf")) return CORO_NONE;
        ne = back_edges(c, c->fn, &edges);
        if (ne <= 0) return CORO_NONE;
    }
    LLVMValueRef fn = c->fn;
    LLVMValueRef saved = c->host_blk;
    c->host_blk = LLVMGetParam(fn, 0);
    LLVMTypeRef tok = LLVMTokenTypeInContext(c->llctx);
    LLVMValueRef none = LLVMConstNull(tok), nullp = LLVMConstPointerNull(c->ptr);
    LLVMValueRef fls = LLVMConstInt(c->i1, 0, 0);

    /* returns, before new ones are made */
    int nret = 0;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
        nret += LLVMIsAReturnInst(LLVMGetBasicBlockTerminator(bb)) != NULL;
    LLVMValueRef *rets = arena_alloc(&c->arena, sizeof *rets * (size_t)(nret + 1));
    if (!rets) return false;
    nret = 0;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
        if (LLVMIsAReturnInst(LLVMGetBasicBlockTerminator(bb))) rets[nret++] = LLVMGetBasicBlockTerminator(bb);

    /* entry: the frame from the runtime, a yield counter */
    LLVMPositionBuilderBefore(c->b, LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(fn)));
    LLVMValueRef count = LLVMBuildAlloca(c->b, c->i32, "coro.count");
    LLVMBuildStore(c->b, LLVMConstInt(c->i32, 0, 0), count);
    LLVMValueRef idargs[4] = {LLVMConstInt(c->i32, 0, 0), nullp, nullp, nullp};
    LLVMValueRef id = coro_call(c, "llvm.coro.id", NULL, idargs, 4);
    LLVMValueRef size = coro_call(c, "llvm.coro.size", c->i64, NULL, 0);
    LLVMTypeRef at[2] = {c->ptr, c->i64};
    LLVMValueRef aa[2] = {c->host_blk, size};
    LLVMValueRef mem = call_runtime(c, OFF_CORO_ALLOC, c->ptr, at, aa, 2);
    LLVMValueRef ba[2] = {id, mem};
    LLVMValueRef hdl = coro_call(c, "llvm.coro.begin", NULL, ba, 2);
    LLVMTypeRef bt[2] = {c->ptr, c->ptr};
    LLVMValueRef bv[2] = {c->host_blk, hdl};
    call_runtime(c, OFF_CORO_BEGIN, c->voidt, bt, bv, 2);
    LLVMValueRef every = LLVMBuildLoad2(c->b, c->i32, field_ptr(c, OFF_CORO_EVERY), "coro.every");

    /* the way out of every suspension, and the final suspension at each return */
    LLVMValueRef entry_br = LLVMGetBasicBlockTerminator(LLVMGetEntryBasicBlock(fn));
    LLVMBasicBlockRef out = LLVMAppendBasicBlockInContext(c->llctx, fn, "coro.out");
    LLVMBasicBlockRef cleanup = LLVMAppendBasicBlockInContext(c->llctx, fn, "coro.cleanup");
    LLVMBasicBlockRef never = LLVMAppendBasicBlockInContext(c->llctx, fn, "coro.never");
    LLVMBasicBlockRef final = LLVMAppendBasicBlockInContext(c->llctx, fn, "coro.final");
    LLVMPositionBuilderAtEnd(c->b, out);
    LLVMValueRef ea[3] = {hdl, fls, none};
    coro_call(c, "llvm.coro.end", NULL, ea, 3);
    LLVMBuildRetVoid(c->b);
    LLVMPositionBuilderAtEnd(c->b, cleanup);
    LLVMBuildBr(c->b, out);
    LLVMPositionBuilderAtEnd(c->b, never);
    LLVMBuildUnreachable(c->b);
    LLVMPositionBuilderAtEnd(c->b, final);
    suspend_here(c, true, never, cleanup, out);
    for (int i = 0; i < nret; i++) {
        LLVMPositionBuilderBefore(c->b, rets[i]);
        LLVMBuildBr(c->b, final);
        LLVMInstructionEraseFromParent(rets[i]);
    }

    /* A first suspension, before any of the kernel's code: the ramp only
     * starts the thread, and all of its work runs in the resume function,
     * whose frame is noalias (split_coroutines). In the ramp, where the
     * frame has escaped to the runtime, a loop would store the values it
     * keeps there at every iteration. */
    if (entry_br && LLVMIsABranchInst(entry_br) && !LLVMIsConditional(entry_br)) {
        LLVMBasicBlockRef first = LLVMGetSuccessor(entry_br, 0);
        LLVMPositionBuilderBefore(c->b, entry_br);
        suspend_here(c, false, first, cleanup, out);
        LLVMInstructionEraseFromParent(entry_br);
    }

    /* each back edge L -> H becomes L -> count -> (H | yield -> H) */
    for (int e = 0; e < ne; e++) {
        LLVMValueRef term = LLVMGetBasicBlockTerminator(edges[e].from);
        LLVMBasicBlockRef head = LLVMGetSuccessor(term, edges[e].succ);
        LLVMBasicBlockRef tick = LLVMAppendBasicBlockInContext(c->llctx, fn, "coro.tick");
        LLVMBasicBlockRef yield = LLVMAppendBasicBlockInContext(c->llctx, fn, "coro.yield");
        LLVMPositionBuilderAtEnd(c->b, tick);
        LLVMValueRef k = LLVMBuildAdd(c->b, LLVMBuildLoad2(c->b, c->i32, count, ""), LLVMConstInt(c->i32, 1, 0), "");
        LLVMValueRef due = LLVMBuildICmp(c->b, LLVMIntSGE, k, every, "");
        LLVMBuildStore(c->b, LLVMBuildSelect(c->b, due, LLVMConstInt(c->i32, 0, 0), k, ""), count);
        LLVMBuildCondBr(c->b, due, yield, head);
        LLVMPositionBuilderAtEnd(c->b, yield);
        suspend_here(c, false, head, cleanup, out);
        LLVMSetSuccessor(term, edges[e].succ, tick);
        /* H's phis: what came from L now comes from tick and from yield */
        LLVMBasicBlockRef via[2] = {tick, yield};
        retarget_phis(c, head, edges[e].from, via, 2);
    }
    /* a barrier: the rest of its block moves to a new one, entered on resumption */
    for (int i = 0; i < ns; i++) {
        LLVMBasicBlockRef bb = LLVMGetInstructionParent(sites[i]);
        LLVMBasicBlockRef rest = LLVMAppendBasicBlockInContext(c->llctx, fn, "coro.resume");
        LLVMPositionBuilderAtEnd(c->b, rest);
        move_rest(c, sites[i], rest);
        LLVMPositionBuilderBefore(c->b, sites[i]);
        suspend_here(c, false, rest, cleanup, out);
        LLVMInstructionEraseFromParent(sites[i]);
    }
    unsigned inl = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
    LLVMRemoveEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, inl);
    unsigned pre = LLVMGetEnumAttributeKindForName("presplitcoroutine", 17);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->llctx, pre, 0));
    c->host_blk = saved;
    if (ns) ctx_root(c)->uses_barrier = false; /* the runtime runs it as a block function */
    return ns ? CORO_BARRIERS : CORO_LOOPS;
}

/* Before O3, in a kernel with bounds checks whose threads run as loops
 * ("loop", "regions"): LLVM's inductive range check elimination (IRCE)
 * splits a loop over threads into the threads whose indices may fail a
 * check, which keep it, and a main run of threads whose affine indices
 * (sh[tid], A[row, t * 16 + tx]) it has shown in range from the first and
 * the last of them, without checks, which O3 then vectorises like the
 * unchecked loop. The threads still run in order, so the first failing
 * thread and its error stay the same. O3 does not run IRCE; it needs the
 * body inlined and its indices simplified into recurrences first, and the
 * check branches weighted unlikely (checks.c). */
static int range_checks(Ctx *c) {
    if (!HAS_ERRBUF(c) || c->opt.noopt || LLVMGetNamedMetadataNumOperands(c->mod, "gpujit.cpu_threads") != 1)
        return 0;
    LLVMValueRef node = NULL;
    LLVMGetNamedMetadataOperands(c->mod, "gpujit.cpu_threads", &node);
    unsigned len = 0;
    const char *scheme = LLVMGetNumOperands(node) == 1 ? LLVMGetMDString(LLVMGetOperand(node, 0), &len) : NULL;
    if (!scheme || !((len == 4 && !memcmp(scheme, "loop", 4)) || (len == 7 && !memcmp(scheme, "regions", 7))))
        return 0;
    static const char passes[] = "always-inline,function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg,"
                                 "correlated-propagation,loop-mssa(licm),indvars,loop-simplify,lcssa,irce,"
                                 "simplifycfg)";
    return run_passes(c, passes, "range checks", false);
}

/* Before O3: an interleaved body is split into its coroutine functions
 * first, so that the resume function's frame can be marked noalias. The
 * body is simplified before the split (loop facts such as an index never
 * being negative cannot be proved of a value reloaded from the frame). LLVM
 * does not mark it (a frame may be reached through its handle), and without
 * that every value a loop keeps in the frame is reloaded, and its counter
 * stored, at every iteration, for fear of the kernel's own stores. Here
 * only the runtime, between resumptions, ever holds the handle. */
static int split_coroutines(Ctx *c) {
    RETURN_IF_ERROR(range_checks(c));
    unsigned pre = LLVMGetEnumAttributeKindForName("presplitcoroutine", 17);
    LLVMValueRef body = NULL;
    for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f))
        if (LLVMGetEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, pre)) body = f;
    if (!body) return 0;
    size_t len;
    const char *name = LLVMGetValueName2(body, &len);
    const char *resume_name = arena_printf(&c->arena, "%.*s.resume", (int)len, name);
    static const char passes[] = "function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg,"
                                 "correlated-propagation,loop-mssa(licm),indvars,"
                                 "instcombine<no-verify-fixpoint>,simplifycfg),"
                                 "coro-early,cgscc(coro-split),coro-cleanup";
    RETURN_IF_ERROR(run_passes(c, passes, "coroutine split", false));
    LLVMValueRef resume = LLVMGetNamedFunction(c->mod, resume_name);
    if (!resume) return internal_error(c, NO_LOCATION, "coroutine split: no %s", resume_name);
    unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
    LLVMAddAttributeAtIndex(resume, 1, LLVMCreateEnumAttribute(c->llctx, noalias, 0));
    return 0;
}

/* blk->coro_run(blk, barriers): the threads started, run to the end. */
static void coro_run(Ctx *c, LLVMValueRef blk, CoroMode mode) {
    LLVMValueRef saved = c->host_blk;
    c->host_blk = blk;
    LLVMTypeRef pt[2] = {c->ptr, c->i32};
    LLVMValueRef args[2] = {blk, LLVMConstInt(c->i32, mode == CORO_BARRIERS, 0)};
    call_runtime(c, OFF_CORO_RUN, c->voidt, pt, args, 2);
    c->host_blk = saved;
}

/* Load each flattened parameter from params[i] (pointers to the values). */
static void load_params(Ctx *c, LLVMValueRef params, LLVMValueRef *out) {
    unsigned n = LLVMCountParams(c->fn) - 4;
    for (unsigned i = 0; i < n; i++) {
        LLVMTypeRef t = LLVMTypeOf(LLVMGetParam(c->fn, i + 4));
        LLVMValueRef idx = LLVMConstInt(c->i64, i, 0);
        LLVMValueRef pp = LLVMBuildLoad2(c->b, c->ptr, LLVMBuildInBoundsGEP2(c->b, c->ptr, params, &idx, 1, ""), "");
        out[4 + i] = LLVMBuildLoad2(c->b, t, pp, "");
    }
}

/* The scheme a kernel's threads run under (docs/cpu-backend.md, "Threads of
 * a block"), named in the module for whoever inspects its IR. */
static void name_scheme(Ctx *c, const char *scheme) {
    LLVMValueRef s = LLVMMDStringInContext(c->llctx, scheme, (unsigned)strlen(scheme));
    LLVMAddNamedMetadataOperand(c->mod, "gpujit.cpu_threads", LLVMMDNodeInContext(c->llctx, &s, 1));
}

static int finish(Ctx *c) {
    /* a barrier kernel whose only barrier is syncthreads() in its body:
     * loops over the threads between barriers (regions.c) where it fits */
    LLVMValueRef regions = NULL, *sites = NULL;
    /* racecheck kernels run as fibers (barrier kernels) or one loop over the
     * threads: the runtime sees every barrier there (cpu_race.c's epochs) */
    bool plain = c->opt.racecheck;
    int ns = ctx_root(c)->uses_barrier && !plain ? barrier_sites(c, &sites) : 0;
    if (ns > 0 && host_regions(c, sites, ns, &regions) < 0) return -1;
    CoroMode coro = regions || plain ? CORO_NONE : interleave(c);
    name_scheme(c, regions                 ? "regions"
                   : coro == CORO_LOOPS    ? "interleaved-loops"
                   : coro == CORO_BARRIERS ? "interleaved-barriers"
                   : ctx_root(c)->uses_barrier ? "fibers"
                                                : "loop");
    if (regions) ctx_root(c)->uses_barrier = false; /* the runtime runs it as a block function */
    unsigned n = LLVMCountParams(c->fn);
    LLVMTypeRef body_ty = LLVMGlobalGetValueType(c->fn);
    LLVMValueRef *args = arena_alloc(&c->arena, sizeof(LLVMValueRef) * n);
    if (!args) return -1;
    /* _thread(params, blk, tx, ty, tz) */
    LLVMTypeRef tp[5] = {c->ptr, c->ptr, c->i32, c->i32, c->i32};
    LLVMValueRef th = LLVMAddFunction(c->mod, arena_printf(&c->arena, "%s_thread", c->symbol),
                                      LLVMFunctionType(c->voidt, tp, 5, 0));
    probe_stack(c, th);
    LLVMPositionBuilderAtEnd(c->b, LLVMAppendBasicBlockInContext(c->llctx, th, "entry"));
    /* The runtime only runs _thread for kernels with barriers or a grid barrier,
     * which a kernel run as regions has neither of: its _thread stays empty, so
     * that the body is not optimised and compiled twice. */
    if (!regions) {
        load_params(c, LLVMGetParam(th, 0), args);
        for (int i = 0; i < 4; i++) args[i] = LLVMGetParam(th, (unsigned)(1 + i));
        LLVMBuildCall2(c->b, body_ty, c->fn, args, n, "");
        if (coro) coro_run(c, LLVMGetParam(th, 1), coro);
    }
    LLVMBuildRetVoid(c->b);
    /* _block(params, blk): for z, y, x: body */
    LLVMValueRef bl = LLVMAddFunction(c->mod, arena_printf(&c->arena, "%s_block", c->symbol),
                                      LLVMFunctionType(c->voidt, tp, 2, 0));
    /* The block context lives on the runtime's stack: no array the kernel
     * stores into can reach it, so its fields may stay in registers. */
    unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
    LLVMAddAttributeAtIndex(bl, 2, LLVMCreateEnumAttribute(c->llctx, noalias, 0));
    probe_stack(c, bl);
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(c->llctx, bl, "entry");
    LLVMPositionBuilderAtEnd(c->b, entry);
    LLVMValueRef blk = LLVMGetParam(bl, 1);
    LLVMValueRef saved = c->host_blk;
    c->host_blk = blk;
    load_params(c, LLVMGetParam(bl, 0), args);
    LLVMValueRef dims[3] = {load_i32(c, OFF_NTID), load_i32(c, OFF_NTID + 4), load_i32(c, OFF_NTID + 8)};
    c->host_blk = saved;
    args[0] = blk;
    if (regions) {
        for (int d = 0; d < 3; d++) args[1 + d] = LLVMConstInt(c->i32, 0, 0);
        LLVMBuildCall2(c->b, body_ty, regions, args, n, "");
        LLVMBuildRetVoid(c->b);
        return 0;
    }
    LLVMBasicBlockRef pre = entry;
    LLVMBasicBlockRef head[3], latch[3];
    LLVMValueRef iv[3];
    for (int d = 2; d >= 0; d--) {
        head[d] = LLVMAppendBasicBlockInContext(c->llctx, bl, "loop");
        LLVMBuildBr(c->b, head[d]);
        LLVMPositionBuilderAtEnd(c->b, head[d]);
        iv[d] = LLVMBuildPhi(c->b, c->i32, "t");
        LLVMValueRef zero = LLVMConstInt(c->i32, 0, 0);
        LLVMAddIncoming(iv[d], &zero, &pre, 1);
        pre = head[d];
    }
    for (int d = 0; d < 3; d++) args[1 + d] = iv[d];
    LLVMBuildCall2(c->b, body_ty, c->fn, args, n, "");
    LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(c->llctx, bl, "exit");
    for (int d = 0; d < 3; d++) {
        latch[d] = LLVMGetInsertBlock(c->b);
        LLVMValueRef next = LLVMBuildAdd(c->b, iv[d], LLVMConstInt(c->i32, 1, 0), "");
        LLVMAddIncoming(iv[d], &next, &latch[d], 1);
        LLVMBasicBlockRef out = d == 2 ? exit : LLVMAppendBasicBlockInContext(c->llctx, bl, "next");
        LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, next, dims[d], ""), head[d], out);
        LLVMPositionBuilderAtEnd(c->b, out);
    }
    if (coro) coro_run(c, blk, coro);
    LLVMBuildRetVoid(c->b);
    return 0;
}

/* Device functions see the block context and thread index of their caller,
 * and, in kernels that call activemask(), the caller's lane position at the
 * call (lower.c, lane_position). */
static int hidden_params(Ctx *c, LLVMTypeRef *types, LLVMValueRef *vals) {
    bool pos = ctx_root(c)->uses_activemask;
    if (types) {
        types[0] = c->ptr;
        types[1] = types[2] = types[3] = c->i32;
        if (pos) types[4] = c->i64, types[5] = c->i32;
    }
    if (vals) {
        vals[0] = c->host_blk;
        for (int d = 0; d < 3; d++) vals[1 + d] = c->host_tid[d];
        if (pos) vals[4] = lane_position(c, &vals[5]);
    }
    return pos ? 6 : 4;
}

static void begin_device_fn(Ctx *c) {
    c->host_blk = LLVMGetParam(c->fn, 0);
    for (int d = 0; d < 3; d++) c->host_tid[d] = LLVMGetParam(c->fn, (unsigned)(1 + d));
    if (ctx_root(c)->uses_activemask)
        for (int k = 0; k < 2; k++) c->lane_prefix[k] = LLVMGetParam(c->fn, (unsigned)(4 + k));
    probe_stack(c, c->fn);
}

/* blk->trap(blk), which never returns: the runtime abandons the block and
 * fails the launch, so the bad access itself is never made and the code after
 * a check may assume the index in range. */
static void trap(Ctx *c) {
    LLVMValueRef call = call_runtime(c, OFF_TRAP, c->voidt, &c->ptr, &c->host_blk, 1);
    unsigned kind = LLVMGetEnumAttributeKindForName("noreturn", 8);
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->llctx, kind, 0));
    kind = LLVMGetEnumAttributeKindForName("cold", 4);
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->llctx, kind, 0));
}

/* racecheck: blk->race(blk, p, size, site_flags, tx, ty, tz) before the access
 * (runtime/cpu_race.c). */
static void race_access(Ctx *c, LLVMValueRef p, uint64_t size, int32_t site_flags) {
    LLVMTypeRef pt[7] = {c->ptr, c->ptr, c->i64, c->i32, c->i32, c->i32, c->i32};
    if (LLVMGetPointerAddressSpace(LLVMTypeOf(p))) p = LLVMBuildAddrSpaceCast(c->b, p, c->ptr, "");
    LLVMValueRef args[7] = {c->host_blk, p, LLVMConstInt(c->i64, size, 0),
                            LLVMConstInt(c->i32, (unsigned long long)(uint32_t)site_flags, 0),
                            c->host_tid[0], c->host_tid[1], c->host_tid[2]};
    call_runtime(c, OFF_RACE, c->voidt, pt, args, 7);
}

/* printf from the host C library, then fflush so the line is out before
 * the launch returns (Python's own output is buffered separately). */
static void print(Ctx *c, LLVMValueRef fmt, LLVMValueRef *args, int nargs) {
    LLVMTypeRef fty = LLVMFunctionType(c->i32, &c->ptr, 1, 1);
    LLVMValueRef fn = LLVMGetNamedFunction(c->mod, "printf");
    if (!fn) fn = LLVMAddFunction(c->mod, "printf", fty);
    LLVMValueRef *all = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(nargs + 1));
    all[0] = fmt;
    for (int i = 0; i < nargs; i++) all[1 + i] = args[i];
    LLVMBuildCall2(c->b, fty, fn, all, (unsigned)(nargs + 1), "");
    LLVMTypeRef flty = LLVMFunctionType(c->i32, &c->ptr, 1, 0);
    LLVMValueRef fl = LLVMGetNamedFunction(c->mod, "fflush");
    if (!fl) fl = LLVMAddFunction(c->mod, "fflush", flty);
    LLVMValueRef null = LLVMConstPointerNull(c->ptr);
    LLVMBuildCall2(c->b, flty, fl, &null, 1, "");
}

/* ---- the back end: this machine's CPU, code into the process's JIT (emit.c) ---- */

static void init(void) {
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
}

/* Every kernel of the process lives in one JIT: its symbols must be unique
 * there, and the module is built in a context that ORC can take over. */
static int begin(Ctx *c) {
    static long counter; /* atomic: compilations may run on several threads */
    long id = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
    c->symbol = arena_printf(&c->arena, "%s_gj%ld", c->symbol, id);
    c->tsc = LLVMOrcCreateNewThreadSafeContext();
    c->llctx = LLVMOrcThreadSafeContextGetContext(c->tsc);
    return 0;
}

static void end(Ctx *c) {
    if (c->tsc) LLVMOrcDisposeThreadSafeContext(c->tsc);
}

static void machine(Ctx *c, MachineSpec *m) {
    char *triple = LLVMGetDefaultTargetTriple(), *cpu = LLVMGetHostCPUName(), *feat = LLVMGetHostCPUFeatures();
    m->triple = arena_strdup(&c->arena, triple);
    m->cpu = arena_strdup(&c->arena, cpu);
    m->features = arena_strdup(&c->arena, feat);
    LLVMDisposeMessage(triple);
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(feat);
    m->reloc = LLVMRelocPIC;
    m->code_model = LLVMCodeModelJITDefault;
}

/* Ctrl-C's polls at the loops' back edges, then the JIT. */
static int emit(Ctx *c) {
    RETURN_IF_ERROR(insert_stop_polls(c));
    return emit_host(c);
}

/* clang-format off */
const Target target_host = {
    .name = "host",
    .api_name = "cpu",
    .init = init,
    .begin = begin,
    .end = end,
    .machine = machine,
    .link = split_coroutines,
    .emit = emit,
    .array_space = AS_GENERIC,
    .shared_space = 0,
    .begin_kernel = begin_kernel,
    .special = special,
    .barrier = barrier,
    .grid_sync = grid_sync,
    .shared_array = shared_array,
    .math_fn = math_fn,
    .libdevice_fn = libdevice_fn,
    .barrier_reduce = barrier_reduce,
    .fence = fence,
    .warp = warp,
    .dynamic_shared = dynamic_shared,
    .const_array = const_array,
    .print = print,
    .finish = finish,
    .hidden_params = hidden_params,
    .cache_access = cache_access,
    .begin_device_fn = begin_device_fn,
    .trap = trap,
    .race_access = race_access,
    .lane_positions = true,
    .half_via_float = true,
};
/* clang-format on */
