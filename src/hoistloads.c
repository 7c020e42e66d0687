/* hoistloads.c: on the GPU, after O3, each global-memory load moves up its
 * basic block to just after the last instruction it may not cross, taking
 * the arithmetic that computes its address with it, so that a thread's
 * independent loads are issued back to back and their latencies overlap.
 * LLVM's NVPTX back end schedules in source order, and ptxas does not move a
 * load across the branch it makes for a slow path (sqrt.rn, div.rn): in
 * Black-Scholes `sqrt(T[i])` then `S[i]`, `K[i]` cost two memory latencies
 * in series, where NVVM's code issues the three loads first. ptxas schedules
 * straight-line code well by itself (moving every load up changed the
 * registers of the float32 sums from 32 to 40), so by default a load moves
 * only when that takes it above such a branch (GPUJIT_PTX_PASSES=hoist);
 * hoist-all moves every one it can.
 *
 * Why it is safe. A load only moves within its block: every instruction of a
 * block runs once the block is entered, unless one in between does not
 * return (a trap, a call that exits), so the moved load runs in exactly the
 * executions it ran in before and cannot add a fault (hoisting into a
 * dominating block could: above a bounds check or `if i < n`). It does not
 * cross an instruction that may write memory or not return: stores, atomics,
 * fences, barriers, inline assembly, calls other than to functions that
 * neither write memory nor fail to return. The address arithmetic moved with
 * it is pure (no division, which can be undefined). Volatile and atomic loads
 * stay where they are. */
#include <stdlib.h>
#include <string.h>

#include <llvm-c/DebugInfo.h>

#include "gj.h"

#define HOIST_MAX_BLOCK 2048 /* larger blocks are left as they are (the pass is quadratic in a block) */

typedef struct {
    LLVMValueRef *v; /* the block's instructions, PHIs and terminator excluded, in their new order */
    int n;
} Order;

static int index_of(const Order *o, LLVMValueRef in) {
    for (int i = 0; i < o->n; i++)
        if (o->v[i] == in) return i;
    return -1;
}

static void move_to(Order *o, int from, int to) {
    LLVMValueRef in = o->v[from];
    memmove(&o->v[to + 1], &o->v[to], sizeof *o->v * (size_t)(from - to));
    o->v[to] = in;
}

/* A call that neither writes memory nor may fail to return (LLVM's memory and willreturn attributes). */
static bool harmless_call(LLVMValueRef call) {
    LLVMValueRef f = LLVMGetCalledValue(call);
    if (!f || !LLVMIsAFunction(f)) return false;
    static unsigned willreturn, memory, nounwind;
    if (!willreturn) {
        willreturn = LLVMGetEnumAttributeKindForName("willreturn", 10);
        memory = LLVMGetEnumAttributeKindForName("memory", 6);
        nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    }
    LLVMAttributeIndex fi = LLVMAttributeFunctionIndex;
    if (!LLVMGetEnumAttributeAtIndex(f, fi, willreturn) || !LLVMGetEnumAttributeAtIndex(f, fi, nounwind)) return false;
    LLVMAttributeRef m = LLVMGetEnumAttributeAtIndex(f, fi, memory);
    /* MemoryEffects: two bits (read 1, write 2) per kind of location; no write bit anywhere */
    return m && (LLVMGetEnumAttributeValue(m) & 0xAAAAAAAAAAAAAAAAull) == 0;
}

/* May this instruction write memory or not return (a load may not move above it)? */
static bool fence_for_loads(LLVMValueRef in) {
    switch (LLVMGetInstructionOpcode(in)) {
    case LLVMStore:
    case LLVMAtomicRMW:
    case LLVMAtomicCmpXchg:
    case LLVMFence:
    case LLVMVAArg: return true;
    case LLVMLoad: return LLVMGetVolatile(in) || LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic;
    case LLVMCall: return !harmless_call(in);
    default: return false;
    }
}

/* Pure arithmetic that may run earlier than written: it can neither fault nor be undefined where
 * the original was defined (division and remainder can, so they stay). */
static bool pure(LLVMValueRef in) {
    switch (LLVMGetInstructionOpcode(in)) {
    case LLVMAdd:
    case LLVMSub:
    case LLVMMul:
    case LLVMShl:
    case LLVMLShr:
    case LLVMAShr:
    case LLVMAnd:
    case LLVMOr:
    case LLVMXor:
    case LLVMFAdd:
    case LLVMFSub:
    case LLVMFMul:
    case LLVMFNeg:
    case LLVMGetElementPtr:
    case LLVMTrunc:
    case LLVMZExt:
    case LLVMSExt:
    case LLVMBitCast:
    case LLVMAddrSpaceCast:
    case LLVMPtrToInt:
    case LLVMIntToPtr:
    case LLVMICmp:
    case LLVMFCmp:
    case LLVMSelect:
    case LLVMExtractValue:
    case LLVMFreeze: return true;
    default: return false;
    }
}

/* Does ptxas expand this into a branch to a slow path (which later loads are not moved across)?
 * IEEE division and square root, and 64-bit integer division (a subroutine call). */
static bool ptxas_branches(LLVMValueRef in) {
    switch (LLVMGetInstructionOpcode(in)) {
    case LLVMFDiv:
    case LLVMFRem: return true;
    case LLVMUDiv:
    case LLVMSDiv:
    case LLVMURem:
    case LLVMSRem: {
        LLVMTypeRef t = LLVMTypeOf(in);
        return LLVMGetTypeKind(t) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) > 32;
    }
    case LLVMCall: {
        LLVMValueRef f = LLVMGetCalledValue(in);
        size_t n;
        const char *name = f && LLVMIsAFunction(f) ? LLVMGetValueName2(f, &n) : "";
        return !strncmp(name, "llvm.sqrt.", 10) || !strncmp(name, "llvm.nvvm.sqrt.rn", 17) ||
                !strncmp(name, "llvm.nvvm.rcp.rn", 16) || !strncmp(name, "llvm.nvvm.div.rn", 16);
    }
    default: return false;
    }
}

static bool global_load(LLVMValueRef in) {
    if (LLVMGetInstructionOpcode(in) != LLVMLoad || fence_for_loads(in)) return false;
    return LLVMGetPointerAddressSpace(LLVMTypeOf(LLVMGetOperand(in, 0))) == AS_GLOBAL;
}

/* Move o->v[at] to the earliest place after `fence` (NULL: the block's start) where its operands
 * of this block are defined, first moving up those operands that are pure arithmetic; returns its
 * new index. */
static int hoist(Order *o, LLVMBasicBlockRef bb, int at, LLVMValueRef fence, int depth) {
    LLVMValueRef in = o->v[at];
    for (int k = 0, n = LLVMGetNumOperands(in); k < n; k++) {
        LLVMValueRef x = LLVMGetOperand(in, k);
        if (!x || !LLVMIsAInstruction(x) || LLVMGetInstructionParent(x) != bb) continue;
        int i = index_of(o, x);
        if (i >= 0 && i < at && depth < 64 && pure(x)) hoist(o, bb, i, NULL, depth + 1);
    }
    /* where everything it needs is done, now that the operands have moved (the fence too may have
     * moved down a place for each operand moved above it) */
    int to = fence ? index_of(o, fence) + 1 : 0;
    for (int k = 0, n = LLVMGetNumOperands(in); k < n; k++) {
        LLVMValueRef x = LLVMGetOperand(in, k);
        if (!x || !LLVMIsAInstruction(x) || LLVMGetInstructionParent(x) != bb) continue;
        int i = index_of(o, x); /* -1 for a PHI: defined before everything here */
        if (i + 1 > to) to = i + 1;
    }
    at = index_of(o, in);
    if (to < at) move_to(o, at, to);
    return to < at ? to : at;
}

static int hoist_block(Ctx *c, LLVMBuilderRef b, LLVMBasicBlockRef bb, bool all) {
    Order o = {0};
    int n = 0;
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) n++;
    if (n < 3 || n > HOIST_MAX_BLOCK) return 0;
    o.v = arena_alloc(&c->arena, sizeof *o.v * (size_t)n);
    LLVMValueRef *orig = arena_alloc(&c->arena, sizeof *orig * (size_t)n);
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in))
        if (in != term && LLVMGetInstructionOpcode(in) != LLVMPHI) o.v[o.n++] = in;
    memcpy(orig, o.v, sizeof *o.v * (size_t)o.n);
    bool moved = false;
    for (int k = 0; k < o.n; k++) {
        if (!global_load(orig[k])) continue;
        int at = index_of(&o, orig[k]);
        LLVMValueRef fence = NULL;
        bool worth = all;
        for (int i = at - 1; i >= 0 && !fence; i--)
            if (fence_for_loads(o.v[i]))
                fence = o.v[i];
            else
                worth |= ptxas_branches(o.v[i]);
        if (worth) moved |= hoist(&o, bb, at, fence, 0) != at;
    }
    if (!moved) return 0;
    /* lay the block out in the new order, before its terminator */
    for (int i = 0; i < o.n; i++) {
        /* positioning a builder gives it the terminator's source location, which the insertion
         * would stamp on the instruction: each keeps its own (lineinfo) */
        LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(o.v[i]);
        LLVMInstructionRemoveFromParent(o.v[i]);
        LLVMPositionBuilderBefore(b, term);
        LLVMInsertIntoBuilderWithName(b, o.v[i], LLVMGetValueName(o.v[i]));
        LLVMInstructionSetDebugLoc(o.v[i], loc);
    }
    return 0;
}

int hoist_loads(Ctx *c, bool all) {
    LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(c->mod));
    for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
            if (hoist_block(c, b, bb, all) < 0) {
                LLVMDisposeBuilder(b);
                return -1;
            }
    LLVMDisposeBuilder(b);
    return 0;
}
