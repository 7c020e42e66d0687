/* unrollmore.c: on the GPU, after O3, a single-block loop with a constant trip count (the
 * N-body's `for k in range(TILE)` over shared memory) is unrolled twice more than O3 left it:
 * NVPTX's unrolling budget stops at 2x where NVVM unrolls 4x, and each further copy saves
 * the loop's own instructions (counter, compare, branch) and lets ptxas fold more shared-memory
 * offsets into its addresses. Loops O3 fully unrolled are gone by then, and loops whose trip
 * count is only known at run time (grid-stride loops, already runtime-unrolled) are left
 * alone. (GPUJIT_PTX_PASSES=unroll) */
#include <string.h>

#include <llvm-c/DebugInfo.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "gj.h"

#define UNROLL_MAX_BODY 400 /* instructions of a loop body worth doubling */

static bool const_int(LLVMValueRef v) { return v && LLVMIsAConstantInt(v); }

/* Is this single-block loop (bb branches to itself) counted by a constant: its exit compares
 * phi + step with a constant, and the phi starts at a constant? */
static bool constant_trips(LLVMBasicBlockRef bb, LLVMValueRef br) {
    LLVMValueRef cond = LLVMGetCondition(br);
    if (!LLVMIsAICmpInst(cond)) return false;
    LLVMValueRef a = LLVMGetOperand(cond, 0), b = LLVMGetOperand(cond, 1);
    if (!const_int(b)) return false;
    if (!LLVMIsAInstruction(a) || LLVMGetInstructionOpcode(a) != LLVMAdd) return false;
    LLVMValueRef phi = LLVMGetOperand(a, 0);
    if (!const_int(LLVMGetOperand(a, 1)) || !LLVMIsAPHINode(phi) || LLVMGetInstructionParent(phi) != bb) return false;
    for (unsigned i = 0; i < LLVMCountIncoming(phi); i++)
        if (LLVMGetIncomingBlock(phi, i) != bb && !const_int(LLVMGetIncomingValue(phi, i))) return false;
    return true;
}

static LLVMValueRef unroll_count_md(Ctx *c, LLVMContextRef ctx, unsigned count) {
    LLVMMetadataRef tmp = LLVMTemporaryMDNode(ctx, NULL, 0);
    LLVMMetadataRef cnt[2] = {LLVMMDStringInContext2(ctx, "llvm.loop.unroll.count", 22),
                              LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(ctx), count, 0))};
    LLVMMetadataRef ops[2] = {tmp, LLVMMDNodeInContext2(ctx, cnt, 2)};
    LLVMMetadataRef id = LLVMMDNodeInContext2(ctx, ops, 2);
    LLVMMetadataReplaceAllUsesWith(tmp, id); /* the loop's id names itself */
    (void)c;
    return LLVMMetadataAsValue(ctx, id);
}

int unroll_more(Ctx *c) {
    LLVMContextRef ctx = LLVMGetModuleContext(c->mod);
    unsigned loop_kind = LLVMGetMDKindIDInContext(ctx, "llvm.loop", 9);
    int marked = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb)) {
            LLVMValueRef br = LLVMGetBasicBlockTerminator(bb);
            if (!br || LLVMGetInstructionOpcode(br) != LLVMBr || !LLVMIsConditional(br)) continue;
            if (LLVMGetSuccessor(br, 0) != bb && LLVMGetSuccessor(br, 1) != bb) continue;
            if (LLVMGetMetadata(br, loop_kind) || !constant_trips(bb, br)) continue;
            int n = 0;
            bool call = false;
            for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
                n++;
                call |= LLVMGetInstructionOpcode(in) == LLVMCall && !LLVMIsAIntrinsicInst(in);
            }
            if (call || n > UNROLL_MAX_BODY) continue;
            LLVMSetMetadata(br, loop_kind, unroll_count_md(c, ctx, 2));
            marked++;
        }
    if (!marked) return 0;
    return run_passes(c, "function(loop-unroll<O3>,instcombine<no-verify-fixpoint>,simplifycfg,early-cse)", "unroll",
                      true);
}
