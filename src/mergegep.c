/* mergegep.c: on the GPU, after O3, an address computed as two steps in one block,
 * `gep T, (gep T, p, a), b`, becomes `gep T, p, a + b`. LLVM's InstCombine splits
 * `p[a + b]` in two so that a loop can hoist `p + a`; in straight-line code the split costs a
 * 64-bit add per address (two SASS instructions) where one multiply-add would form row * w + x:
 * the 5-point stencil's four addresses took 66 SASS instructions against CUDA C's 47, 58 with the
 * steps merged. Only steps of one block are merged, so nothing a loop hoisted comes back into
 * it. (GPUJIT_PTX_PASSES=mergegep) */
#include "gj.h"

/* A getelementptr with a single index. */
static bool single_gep(LLVMValueRef v) { return v && LLVMIsAGetElementPtrInst(v) && LLVMGetNumIndices(v) == 1; }

int merge_geps(Ctx *c) {
    LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(c->mod));
    for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef in = LLVMGetFirstInstruction(bb), next; in; in = next) {
                next = LLVMGetNextInstruction(in);
                if (!single_gep(in)) continue;
                LLVMValueRef inner = LLVMGetOperand(in, 0), b_ix = LLVMGetOperand(in, 1);
                if (!single_gep(inner) || LLVMGetInstructionParent(inner) != bb) continue;
                LLVMTypeRef t = LLVMGetGEPSourceElementType(in);
                LLVMValueRef a_ix = LLVMGetOperand(inner, 1);
                if (LLVMGetGEPSourceElementType(inner) != t || LLVMTypeOf(a_ix) != LLVMTypeOf(b_ix)) continue;
                if (LLVMIsConstant(b_ix)) continue; /* p + a + constant: the constant folds into the load's offset */
                LLVMPositionBuilderBefore(b, in);
                LLVMValueRef ix = LLVMBuildAdd(b, a_ix, b_ix, "");
                LLVMValueRef base = LLVMGetOperand(inner, 0);
                /* not inbounds: a + b may wrap where neither step did */
                LLVMValueRef g = LLVMBuildGEP2(b, t, base, &ix, 1, "");
                LLVMReplaceAllUsesWith(in, g);
                LLVMInstructionEraseFromParent(in);
                if (!LLVMGetFirstUse(inner)) LLVMInstructionEraseFromParent(inner);
            }
    LLVMDisposeBuilder(b);
    return 0;
}
