/* target_nvptx.c: what a CUDA GPU needs from lowering: the ptx_kernel calling
 * convention, thread geometry from special registers, bar.sync, shared
 * memory in address space 3, global arrays in address space 1, and math
 * functions from libdevice (linked in emit.c). */
#include <string.h>

#include "gj.h"

static int begin_kernel(Ctx *c, LLVMTypeRef *params, int nparams) {
    LLVMTypeRef fty = LLVMFunctionType(c->voidt, params, (unsigned)nparams, 0);
    c->fn = LLVMAddFunction(c->mod, c->symbol, fty);
    LLVMSetFunctionCallConv(c->fn, 71); /* PTX_Kernel */
    if (c->opt.fastmath) {
        /* instruction flags alone leave NVPTX's float code exact: its ftz and
         * approximate div/sqrt forms are chosen by these function attributes */
        static const char *const attrs[][2] = {{"denormal-fp-math-f32", "preserve-sign,preserve-sign"},
                                               {"unsafe-fp-math", "true"}};
        for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
            LLVMAddAttributeAtIndex(c->fn, LLVMAttributeFunctionIndex,
                                       LLVMCreateStringAttribute(c->llctx, attrs[i][0], (unsigned)strlen(attrs[i][0]),
                                                                 attrs[i][1], (unsigned)strlen(attrs[i][1])));
    }
    return 0;
}

static LLVMValueRef sreg(Ctx *c, const char *name) {
    LLVMTypeRef fty = LLVMFunctionType(c->i32, NULL, 0, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(c->mod, name);
    if (!fn) fn = LLVMAddFunction(c->mod, name, fty);
    return LLVMBuildCall2(c->b, fty, fn, NULL, 0, "");
}

static LLVMValueRef special(Ctx *c, Special s, int dim) {
    static const char *const base[] = {[SP_TID] = "tid", [SP_NTID] = "ntid", [SP_CTAID] = "ctaid", [SP_NCTAID] = "nctaid"};
    char name[64];
    if (s == SP_LANEID) return sreg(c, "llvm.nvvm.read.ptx.sreg.laneid");
    if (s == SP_WARPSIZE) return LLVMConstInt(c->i32, 32, 0);
    snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s.%c", base[s], "xyz"[dim]);
    return sreg(c, name);
}

static void barrier(Ctx *c) {
    LLVMTypeRef fty = LLVMFunctionType(c->voidt, NULL, 0, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(c->mod, "llvm.nvvm.barrier0");
    if (!fn) fn = LLVMAddFunction(c->mod, "llvm.nvvm.barrier0", fty);
    LLVMBuildCall2(c->b, fty, fn, NULL, 0, "");
}

static LLVMValueRef shared_array(Ctx *c, LLVMTypeRef arrty, size_t offset) {
    (void)offset; /* ptxas lays out .shared itself */
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(c->mod, arrty, "__shared", 3);
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetInitializer(g, LLVMGetUndef(arrty));
    LLVMSetAlignment(g, 16);
    return g;
}

static LLVMValueRef math_fn(Ctx *c, const char *name, LLVMTypeRef fnty) {
    char nv[80];
    snprintf(nv, sizeof nv, "__nv_%s", name);
    LLVMValueRef fn = LLVMGetNamedFunction(c->mod, nv);
    if (!fn) fn = LLVMAddFunction(c->mod, nv, fnty);
    c->needs_libdevice = true;
    return fn;
}

static int finish(Ctx *c) { return 0; }

/* A GPU thread knows its geometry from special registers: nothing hidden. */
static int hidden_params(Ctx *c, LLVMTypeRef *types, LLVMValueRef *vals) { return 0; }
static void begin_device_fn(Ctx *c) {}

const Target target_nvptx = {
    .name = "nvptx",
    .triple = "nvptx64-nvidia-cuda",
    .array_space = AS_GLOBAL,
    .shared_space = 3,
    .begin_kernel = begin_kernel,
    .special = special,
    .barrier = barrier,
    .shared_array = shared_array,
    .math_fn = math_fn,
    .finish = finish,
    .hidden_params = hidden_params,
    .begin_device_fn = begin_device_fn,
};
