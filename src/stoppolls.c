/* stoppolls.c: the CPU target's way to stop a running kernel (Ctrl-C). After
 * O3, every back edge of every loop in the module gets a poll of the
 * runtime's stop flag (GJ_CPU_STOP_FLAG, set by runtime/cpu.c's SIGINT
 * handler): a volatile load and a branch, taken almost never, to a call of
 * GJ_CPU_STOP_FN, which leaves the launch (runtime/cpu_fiber.c). Put in after
 * the optimiser so that it vectorises and unrolls the loops as before: a
 * vectorised loop polls once per vector step. Requires a module with the
 * kernel's final code (emit_host follows). */
#include <stdint.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/DebugInfo.h>

#include "gj.h"

/* Blocks of one function, numbered through a hash of their addresses, with
 * their DFS state. */
typedef struct Cfg {
    LLVMBasicBlockRef *bb;
    unsigned char *state; /* 0 not seen, 1 on the DFS path, 2 done */
    unsigned n;
    unsigned *slot, mask; /* open addressing: index + 1, 0 empty */
} Cfg;

static unsigned hash_block(const Cfg *g, LLVMBasicBlockRef b) {
    uint64_t h = (uint64_t)(uintptr_t)b * 0x9E3779B97F4A7C15ull;
    return (unsigned)(h >> 32) & g->mask;
}

static unsigned block_index(const Cfg *g, LLVMBasicBlockRef b) {
    for (unsigned h = hash_block(g, b); g->slot[h]; h = (h + 1) & g->mask)
        if (g->bb[g->slot[h] - 1] == b) return g->slot[h] - 1;
    return g->n;
}

/* The edges u -> v of f with v on the DFS path from the entry to u: every
 * loop's back edge, and in any CFG at least one edge of every cycle. Each gets
 * a poll block between u and v; `stop` is made on first need. */
static int poll_function(Ctx *c, LLVMValueRef f, LLVMValueRef flag, LLVMValueRef stop_fn) {
    Cfg g = {.n = LLVMCountBasicBlocks(f)};
    if (!g.n) return 0;
    unsigned cap = 2;
    while (cap < 2 * g.n) cap *= 2;
    g.mask = cap - 1;
    g.bb = arena_alloc(&c->arena, sizeof *g.bb * g.n);
    g.state = arena_alloc(&c->arena, g.n);
    g.slot = arena_alloc(&c->arena, sizeof *g.slot * cap);
    unsigned *stack = arena_alloc(&c->arena, sizeof *stack * g.n), *next = arena_alloc(&c->arena, sizeof *next * g.n);
    /* the edges found (at most one per block and successor), polled after the walk */
    unsigned nedges = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b)) {
        LLVMValueRef t = LLVMGetBasicBlockTerminator(b);
        nedges += t ? LLVMGetNumSuccessors(t) : 0;
    }
    unsigned *eu = arena_alloc(&c->arena, sizeof *eu * (nedges + 1) * 2), *ev = eu ? eu + nedges + 1 : NULL, ne = 0;
    if (!g.bb || !g.state || !g.slot || !stack || !next || !eu) return PyErr_NoMemory(), -1;
    LLVMGetBasicBlocks(f, g.bb);
    for (unsigned i = 0; i < g.n; i++) {
        unsigned h = hash_block(&g, g.bb[i]);
        while (g.slot[h]) h = (h + 1) & g.mask;
        g.slot[h] = i + 1;
    }
    unsigned sp = 0;
    stack[sp++] = 0, next[0] = 0, g.state[0] = 1;
    while (sp) {
        unsigned u = stack[sp - 1];
        LLVMValueRef t = LLVMGetBasicBlockTerminator(g.bb[u]);
        unsigned ns = t ? LLVMGetNumSuccessors(t) : 0;
        if (next[u] == ns) {
            g.state[u] = 2, sp--;
            continue;
        }
        unsigned v = block_index(&g, LLVMGetSuccessor(t, next[u]++));
        if (v == g.n) continue;
        if (g.state[v] == 0) {
            g.state[v] = 1, next[v] = 0, stack[sp++] = v;
        } else if (g.state[v] == 1) {
            eu[ne] = u, ev[ne] = v, ne++;
        }
    }
    LLVMBasicBlockRef stop = NULL;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(c->llctx);
    unsigned prof = LLVMGetMDKindIDInContext(c->llctx, "prof", 4);
    LLVMMetadataRef w[3] = {LLVMMDStringInContext2(c->llctx, "branch_weights", 14),
                            LLVMValueAsMetadata(LLVMConstInt(c->i32, 1, 0)),
                            LLVMValueAsMetadata(LLVMConstInt(c->i32, 1u << 20, 0))};
    LLVMValueRef weights = LLVMMetadataAsValue(c->llctx, LLVMMDNodeInContext2(c->llctx, w, 3));
    for (unsigned k = 0; k < ne; k++) {
        LLVMBasicBlockRef u = g.bb[eu[k]], v = g.bb[ev[k]];
        LLVMValueRef t = LLVMGetBasicBlockTerminator(u);
        bool still = false; /* u -> v is polled once, however many of u's successors are v */
        for (unsigned i = 0, ns = LLVMGetNumSuccessors(t); i < ns; i++) still |= LLVMGetSuccessor(t, i) == v;
        if (!still) continue;
        LLVMMetadataRef dl = LLVMInstructionGetDebugLoc(t);
        if (!stop) {
            stop = LLVMAppendBasicBlockInContext(c->llctx, f, "gj.stop");
            LLVMPositionBuilderAtEnd(c->b, stop);
            LLVMSetCurrentDebugLocation2(c->b, dl);
            LLVMBuildCall2(c->b, LLVMGlobalGetValueType(stop_fn), stop_fn, NULL, 0, "");
            LLVMSetCurrentDebugLocation2(c->b, NULL);
            LLVMBuildUnreachable(c->b);
        }
        LLVMBasicBlockRef p = LLVMInsertBasicBlockInContext(c->llctx, v, "gj.poll");
        LLVMPositionBuilderAtEnd(c->b, p);
        LLVMSetCurrentDebugLocation2(c->b, dl);
        LLVMValueRef x = LLVMBuildLoad2(c->b, i32, flag, "stop");
        LLVMSetVolatile(x, 1);
        LLVMValueRef br =
                LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntNE, x, LLVMConstInt(i32, 0, 0), ""), stop, v);
        LLVMSetMetadata(br, prof, weights);
        LLVMSetCurrentDebugLocation2(c->b, NULL);
        for (unsigned i = 0, ns = LLVMGetNumSuccessors(t); i < ns; i++)
            if (LLVMGetSuccessor(t, i) == v) LLVMSetSuccessor(t, i, p);
        retarget_phis(c, v, u, &p, 1);
    }
    return 0;
}

int insert_stop_polls(Ctx *c) {
    LLVMValueRef flag = LLVMGetNamedGlobal(c->mod, GJ_CPU_STOP_FLAG);
    if (!flag) {
        flag = LLVMAddGlobal(c->mod, LLVMInt32TypeInContext(c->llctx), GJ_CPU_STOP_FLAG);
        LLVMSetLinkage(flag, LLVMExternalLinkage);
    }
    LLVMValueRef stop_fn = LLVMGetNamedFunction(c->mod, GJ_CPU_STOP_FN);
    if (!stop_fn) {
        stop_fn = LLVMAddFunction(c->mod, GJ_CPU_STOP_FN, LLVMFunctionType(c->voidt, NULL, 0, 0));
        static const char *const attrs[] = {"noreturn", "nounwind", "cold"};
        for (int i = 0; i < 3; i++) {
            unsigned kind = LLVMGetEnumAttributeKindForName(attrs[i], strlen(attrs[i]));
            LLVMAddAttributeAtIndex(stop_fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->llctx, kind, 0));
        }
    }
    for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f))
        if (LLVMCountBasicBlocks(f)) RETURN_IF_ERROR(poll_function(c, f, flag, stop_fn));
    char *msg = NULL;
    if (c->verify && LLVMVerifyModule(c->mod, LLVMReturnStatusAction, &msg)) {
        internal_error(c, NO_LOCATION, "stop polls: the LLVM module does not verify:\n%s", msg ? msg : "");
        LLVMDisposeMessage(msg);
        return -1;
    }
    LLVMDisposeMessage(msg);
    return 0;
}
