/* target_nvptx.c: the CUDA GPU target. For lowering: the ptx_kernel calling
 * convention, thread geometry from special registers, bar.sync, shared
 * memory in address space 3, global arrays in address space 1, and math
 * functions from libdevice. For the back end: the nvptx64 machine for the
 * compute capability, libdevice linked before optimisation, and PTX text
 * (with ptxfix.c's work-arounds on either side of LLVM's code generator). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gj.h"

static void fastmath_attrs(Ctx *c) {
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
}

/* launch_bounds: nvvm.annotations that NVPTX prints as .maxntid, .minnctapersm, .maxclusterrank */
static void launch_bounds(Ctx *c) {
    static const char *const keys[] = {"maxntidx", "minctasm", "maxclusterrank"};
    for (int i = 0; i < 3; i++) {
        if (!c->opt.launch_bounds[i]) continue;
        LLVMMetadataRef md[3] = {LLVMValueAsMetadata(c->fn), LLVMMDStringInContext2(c->llctx, keys[i], strlen(keys[i])),
                                 LLVMValueAsMetadata(LLVMConstInt(c->i32, (unsigned)c->opt.launch_bounds[i], 0))};
        LLVMAddNamedMetadataOperand(c->mod, "nvvm.annotations",
                                    LLVMMetadataAsValue(c->llctx, LLVMMDNodeInContext2(c->llctx, md, 3)));
    }
}

static int begin_kernel(Ctx *c, LLVMTypeRef *params, int nparams) {
    LLVMTypeRef fty = LLVMFunctionType(c->voidt, params, (unsigned)nparams, 0);
    c->fn = LLVMAddFunction(c->mod, c->symbol, fty);
    LLVMSetFunctionCallConv(c->fn, 71); /* PTX_Kernel */
    fastmath_attrs(c);
    launch_bounds(c);
    return 0;
}

/* A device function on its own: a plain function (.visible .func in PTX) that others link. */
static int begin_export(Ctx *c, LLVMTypeRef ret, LLVMTypeRef *params, int nparams) {
    c->fn = LLVMAddFunction(c->mod, c->symbol, LLVMFunctionType(ret, params, (unsigned)nparams, 0));
    fastmath_attrs(c);
    return 0;
}

static LLVMValueRef sreg(Ctx *c, const char *name) {
    LLVMTypeRef fty = LLVMFunctionType(c->i32, NULL, 0, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(c->mod, name);
    if (!fn) fn = LLVMAddFunction(c->mod, name, fty);
    return LLVMBuildCall2(c->b, fty, fn, NULL, 0, "");
}

static LLVMValueRef special(Ctx *c, Special s, int dim) {
    static const char *const base[] = {
            [SP_TID] = "tid", [SP_NTID] = "ntid", [SP_CTAID] = "ctaid", [SP_NCTAID] = "nctaid"};
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

static void fence(Ctx *c, FenceScope scope);

/* The grid barrier without cudadevrt: each block's thread 0 adds one to a
 * 64-bit arrival counter (zeroed by the launcher before each cooperative
 * launch) and spins until the counter reaches the end of its generation: the
 * k-th barrier ends when the counter reaches k * nblocks, and an arrival's old
 * value tells which generation it joined (no block can arrive at barrier k+1
 * before barrier k is complete, so the count never runs ahead). bar.sync on
 * both sides makes the leader's fences cover its whole block: membar.gl
 * before the arrival releases the block's writes, membar.gl after the spin
 * acquires every other block's. */
static void grid_sync(Ctx *c) {
    LLVMValueRef g = LLVMGetNamedGlobal(c->mod, GJ_GRID_SYNC_SYMBOL);
    if (!g) {
        g = LLVMAddGlobalInAddressSpace(c->mod, c->i64, GJ_GRID_SYNC_SYMBOL, 1);
        LLVMSetInitializer(g, LLVMConstInt(c->i64, 0, 0));
        LLVMSetAlignment(g, 8);
    }
    LLVMBasicBlockRef lead = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "gridsync.lead");
    LLVMBasicBlockRef spin = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "gridsync.spin");
    LLVMBasicBlockRef over = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "gridsync.over");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "gridsync.done");
    barrier(c);
    LLVMValueRef tid = LLVMBuildOr(c->b, special(c, SP_TID, 0), special(c, SP_TID, 1), "");
    tid = LLVMBuildOr(c->b, tid, special(c, SP_TID, 2), "");
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, tid, LLVMConstInt(c->i32, 0, 0), ""), lead, done);

    LLVMPositionBuilderAtEnd(c->b, lead);
    LLVMValueRef n = LLVMBuildZExt(c->b, special(c, SP_NCTAID, 0), c->i64, "");
    n = LLVMBuildMul(c->b, n, LLVMBuildZExt(c->b, special(c, SP_NCTAID, 1), c->i64, ""), "");
    n = LLVMBuildMul(c->b, n, LLVMBuildZExt(c->b, special(c, SP_NCTAID, 2), c->i64, ""), "nblocks");
    fence(c, FENCE_DEVICE);
    LLVMValueRef old = LLVMBuildAtomicRMW(c->b, LLVMAtomicRMWBinOpAdd, g, LLVMConstInt(c->i64, 1, 0),
                                          LLVMAtomicOrderingMonotonic, 0);
    LLVMValueRef end = LLVMBuildUDiv(c->b, old, n, "");
    end = LLVMBuildMul(c->b, LLVMBuildAdd(c->b, end, LLVMConstInt(c->i64, 1, 0), ""), n, "gen.end");
    LLVMBuildBr(c->b, spin);

    LLVMPositionBuilderAtEnd(c->b, spin);
    LLVMValueRef now = LLVMBuildLoad2(c->b, c->i64, g, "arrived");
    LLVMSetVolatile(now, 1);
    LLVMSetAlignment(now, 8);
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntULT, now, end, ""), spin, over);

    LLVMPositionBuilderAtEnd(c->b, over);
    fence(c, FENCE_DEVICE);
    LLVMBuildBr(c->b, done);

    LLVMPositionBuilderAtEnd(c->b, done);
    barrier(c);
}

static LLVMValueRef shared_array(Ctx *c, LLVMTypeRef arrty, size_t offset) {
    (void)offset; /* ptxas lays out .shared itself */
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(c->mod, arrty, "__shared", 3);
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetInitializer(g, LLVMGetUndef(arrty));
    LLVMSetAlignment(g, 16);
    return g;
}

/* libdevice's approximate float functions, for fastmath=True (as nvcc's
 * -use_fast_math): sin.approx, ex2.approx, lg2.approx based. */
static bool has_fast_variant(const char *name) {
    static const char *const fast[] = {"sinf", "cosf", "tanf", "expf", "exp10f", "logf", "log2f", "log10f", "powf"};
    for (size_t i = 0; i < sizeof fast / sizeof fast[0]; i++)
        if (!strcmp(fast[i], name)) return true;
    return false;
}

static LLVMValueRef math_fn(Ctx *c, const char *name, LLVMTypeRef fnty) {
    /* fastmath tanhf: the tanh.approx.f32 instruction of sm_75 and newer (as numba's) */
    if (c->opt.fastmath && !strcmp(name, "tanhf") && c->opt.cc_major * 10 + c->opt.cc_minor >= 75) {
        static const char text[] = "tanh.approx.f32 $0, $1;"; /* LLVM 19 has no intrinsic for it */
        return LLVMGetInlineAsm(fnty, text, sizeof text - 1, "=f,f", 4, 0, 0, LLVMInlineAsmDialectATT, 0);
    }
    char nv[80];
    snprintf(nv, sizeof nv, "__nv_%s%s", c->opt.fastmath && has_fast_variant(name) ? "fast_" : "", name);
    LLVMValueRef fn = LLVMGetNamedFunction(c->mod, nv);
    if (!fn) fn = LLVMAddFunction(c->mod, nv, fnty);
    c->needs_libdevice = true;
    return fn;
}

static LLVMValueRef libdevice_fn(Ctx *c, const char *name, LLVMTypeRef fnty) {
    const char *nv = arena_printf(&c->arena, "__nv_%s", name);
    LLVMValueRef fn = LLVMGetNamedFunction(c->mod, nv);
    if (!fn) fn = LLVMAddFunction(c->mod, nv, fnty);
    c->needs_libdevice = true;
    return fn;
}

/* A call of an NVVM intrinsic by name, declared with the given type. */
static LLVMValueRef nvvm_call(Ctx *c, const char *name, LLVMTypeRef ret, LLVMValueRef *args, unsigned n) {
    LLVMTypeRef pt[4];
    for (unsigned i = 0; i < n; i++) pt[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret, pt, n, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(c->mod, name);
    if (!fn) fn = LLVMAddFunction(c->mod, name, fty);
    return LLVMBuildCall2(c->b, fty, fn, args, n, "");
}

static LLVMValueRef barrier_reduce(Ctx *c, int op, LLVMValueRef pred) {
    static const char *const name[] = {"llvm.nvvm.barrier0.popc", "llvm.nvvm.barrier0.and", "llvm.nvvm.barrier0.or"};
    return nvvm_call(c, name[op], c->i32, &pred, 1);
}

/* LLVM 19's NVPTX back end cannot select the IR fence: membar it is. */
static void fence(Ctx *c, FenceScope scope) {
    static const char *const name[] = {"llvm.nvvm.membar.cta", "llvm.nvvm.membar.gl", "llvm.nvvm.membar.sys"};
    nvvm_call(c, name[scope], c->voidt, NULL, 0);
}

static LLVMValueRef shfl32(Ctx *c, WarpOp op, LLVMValueRef mask, LLVMValueRef v, LLVMValueRef arg) {
    static const char *const mode[] = {"idx", "up", "down", "bfly"};
    char name[64];
    snprintf(name, sizeof name, "llvm.nvvm.shfl.sync.%s.i32", mode[op]);
    /* c = 0x1f (whole warp, clamp at lane 31) except for up, whose clamp is lane 0: numba's */
    LLVMValueRef args[4] = {mask, v, arg, LLVMConstInt(c->i32, op == WARP_SHFL_UP ? 0 : 0x1f, 0)};
    return nvvm_call(c, name, c->i32, args, 4);
}

static LLVMValueRef warp(Ctx *c, WarpOp op, LLVMValueRef mask, LLVMValueRef v, LLVMValueRef arg) {
    switch (op) {
    case WARP_SHFL_IDX:
    case WARP_SHFL_UP:
    case WARP_SHFL_DOWN:
    case WARP_SHFL_BFLY: {
        if (LLVMTypeOf(v) == c->i32) return shfl32(c, op, mask, v, arg);
        /* 64 bits: two 32-bit shuffles of the halves */
        LLVMValueRef lo = shfl32(c, op, mask, LLVMBuildTrunc(c->b, v, c->i32, ""), arg);
        LLVMValueRef hi =
                shfl32(c, op, mask,
                       LLVMBuildTrunc(c->b, LLVMBuildLShr(c->b, v, LLVMConstInt(c->i64, 32, 0), ""), c->i32, ""), arg);
        return LLVMBuildOr(c->b, LLVMBuildZExt(c->b, lo, c->i64, ""),
                           LLVMBuildShl(c->b, LLVMBuildZExt(c->b, hi, c->i64, ""), LLVMConstInt(c->i64, 32, 0), ""),
                           "");
    }
    case WARP_ALL:
    case WARP_ANY:
    case WARP_EQ: {
        static const char *const name[] = {"llvm.nvvm.vote.all.sync", "llvm.nvvm.vote.any.sync",
                                           "llvm.nvvm.vote.uni.sync"};
        LLVMValueRef args[2] = {mask, LLVMBuildICmp(c->b, LLVMIntNE, v, LLVMConstInt(c->i32, 0, 0), "")};
        return LLVMBuildZExt(c->b, nvvm_call(c, name[op - WARP_ALL], c->i1, args, 2), c->i32, "");
    }
    case WARP_BALLOT: {
        LLVMValueRef args[2] = {mask, LLVMBuildICmp(c->b, LLVMIntNE, v, LLVMConstInt(c->i32, 0, 0), "")};
        return nvvm_call(c, "llvm.nvvm.vote.ballot.sync", c->i32, args, 2);
    }
    case WARP_MATCH_ANY:
    case WARP_MATCH_ALL: {
        bool w64 = LLVMTypeOf(v) == c->i64;
        LLVMValueRef args[2] = {mask, v};
        if (op == WARP_MATCH_ANY)
            return nvvm_call(c, w64 ? "llvm.nvvm.match.any.sync.i64" : "llvm.nvvm.match.any.sync.i32", c->i32, args, 2);
        LLVMTypeRef pair[2] = {c->i32, c->i1};
        LLVMValueRef r = nvvm_call(c, w64 ? "llvm.nvvm.match.all.sync.i64p" : "llvm.nvvm.match.all.sync.i32p",
                                   LLVMStructTypeInContext(c->llctx, pair, 2, 0), args, 2);
        return LLVMBuildExtractValue(c->b, r, 0, ""); /* the mask; 0 unless all match */
    }
    case WARP_SYNC: nvvm_call(c, "llvm.nvvm.bar.warp.sync", c->voidt, &mask, 1); return NULL;
    case WARP_ACTIVEMASK: return nvvm_call(c, "llvm.nvvm.activemask", c->i32, NULL, 0);
    }
    return NULL;
}

/* CUDA's `extern __shared__`: every dynamic shared array of a kernel is this
 * one symbol; its size is the launch's, read from %dynamic_smem_size (LLVM
 * 19 has no intrinsic for that register). */
static LLVMValueRef dynamic_shared(Ctx *c, LLVMValueRef *nbytes) {
    LLVMValueRef g = LLVMGetNamedGlobal(c->mod, "__gj_dynamic_shared");
    if (!g) {
        g = LLVMAddGlobalInAddressSpace(c->mod, LLVMArrayType2(c->i8, 0), "__gj_dynamic_shared", 3);
        LLVMSetLinkage(g, LLVMExternalLinkage);
        LLVMSetAlignment(g, 16);
    }
    static const char text[] = "mov.u32 $0, %dynamic_smem_size;";
    LLVMTypeRef fty = LLVMFunctionType(c->i32, NULL, 0, 0);
    LLVMValueRef asm_ = LLVMGetInlineAsm(fty, text, sizeof text - 1, "=r", 2, 0, 0, LLVMInlineAsmDialectATT, 0);
    *nbytes = LLVMBuildZExt(c->b, LLVMBuildCall2(c->b, fty, asm_, NULL, 0, ""), c->i64, "");
    return g;
}

/* ld/st.global.<op>.bN (numba's cache hints): inline PTX on the element's bits, which go
 * through an integer register (8-bit ones in a 16-bit register, as PTX loads bytes). The
 * memory clobber keeps them in order with the kernel's other loads and stores. */
static LLVMValueRef cache_access(Ctx *c, const char *op, LLVMValueRef p, LLVMTypeRef t, LLVMValueRef v) {
    unsigned bits = LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(t)
                    : LLVMGetTypeKind(t) == LLVMFloatTypeKind ? 32
                    : LLVMGetTypeKind(t) == LLVMHalfTypeKind || LLVMGetTypeKind(t) == LLVMBFloatTypeKind ? 16
                                                               : 64;
    LLVMTypeRef it = LLVMIntTypeInContext(c->llctx, bits), rt = bits == 8 ? c->i16 : it;
    const char *reg = bits <= 16 ? "h" : bits == 32 ? "r" : "l";
    char text[64], cons[32];
    if (v) {
        snprintf(text, sizeof text, "st.global.%s.b%u [$0], $1;", op, bits);
        snprintf(cons, sizeof cons, "l,%s,~{memory}", reg);
        LLVMValueRef x = LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? v : LLVMBuildBitCast(c->b, v, it, "");
        if (bits == 8) x = LLVMBuildZExt(c->b, x, rt, "");
        LLVMTypeRef pt[2] = {LLVMTypeOf(p), rt};
        LLVMTypeRef fty = LLVMFunctionType(c->voidt, pt, 2, 0);
        LLVMValueRef asm_ = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), 1, 0,
                                             LLVMInlineAsmDialectATT, 0);
        LLVMValueRef args[2] = {p, x};
        LLVMBuildCall2(c->b, fty, asm_, args, 2, "");
        return NULL;
    }
    snprintf(text, sizeof text, "ld.global.%s.b%u $0, [$1];", op, bits);
    snprintf(cons, sizeof cons, "=%s,l,~{memory}", reg);
    LLVMTypeRef pt[1] = {LLVMTypeOf(p)};
    LLVMTypeRef fty = LLVMFunctionType(rt, pt, 1, 0);
    LLVMValueRef asm_ = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
    LLVMValueRef r = LLVMBuildCall2(c->b, fty, asm_, &p, 1, "");
    if (bits == 8) r = LLVMBuildTrunc(c->b, r, it, "");
    return LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? r : LLVMBuildBitCast(c->b, r, t, "");
}

/* __constant__ memory: cached, read-only, in address space 4. Arrays are
 * generic pointers in lowering, so hand back the generic address. */
static LLVMValueRef const_array(Ctx *c, const char *bytes, size_t n) {
    LLVMValueRef init = LLVMConstStringInContext(c->llctx, bytes, (unsigned)n, 1);
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(c->mod, LLVMTypeOf(init), "__const", 4);
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetAlignment(g, 16);
    return LLVMBuildAddrSpaceCast(c->b, g, c->ptr, "");
}

static int finish(Ctx *c) { return 0; }

/* A GPU thread knows its geometry from special registers: nothing hidden. */
static int hidden_params(Ctx *c, LLVMTypeRef *types, LLVMValueRef *vals) { return 0; }
static void begin_device_fn(Ctx *c) {}

/* vprintf(fmt, args): the arguments packed 8 bytes each into a local buffer;
 * the driver links vprintf and prints the buffer at the next synchronisation. */
static void print(Ctx *c, LLVMValueRef fmt, LLVMValueRef *args, int nargs) {
    LLVMTypeRef pt[2] = {c->ptr, c->ptr};
    LLVMTypeRef fty = LLVMFunctionType(c->i32, pt, 2, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(c->mod, "vprintf");
    if (!fn) fn = LLVMAddFunction(c->mod, "vprintf", fty);
    LLVMValueRef buf = LLVMConstPointerNull(c->ptr);
    if (nargs) {
        LLVMTypeRef *ft = arena_alloc(&c->arena, sizeof(LLVMTypeRef) * (size_t)nargs);
        for (int i = 0; i < nargs; i++) ft[i] = LLVMTypeOf(args[i]);
        LLVMTypeRef st = LLVMStructTypeInContext(c->llctx, ft, (unsigned)nargs, 0);
        buf = entry_alloca(c, st, "printf_args");
        for (int i = 0; i < nargs; i++)
            LLVMBuildStore(c->b, args[i], LLVMBuildStructGEP2(c->b, st, buf, (unsigned)i, ""));
    }
    LLVMValueRef cargs[2] = {fmt, buf};
    LLVMBuildCall2(c->b, fty, fn, cargs, 2, "");
}

/* ---- the back end ---- */

static void init(void) {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
}

static int begin(Ctx *c) {
    c->llctx = LLVMContextCreate();
    return 0;
}

static void end(Ctx *c) {
    if (c->llctx) LLVMContextDispose(c->llctx);
}

/* PTX ISA for the cc: sm_90 needs 7.8 (CUDA 11.8+ drivers). */
static int default_ptx(int cc) { return cc >= 90 ? 78 : cc >= 89 ? 78 : cc >= 80 ? 70 : 64; }

int nvptx_ptx_version(Ctx *c) {
    if (c->opt.ptx_version) return c->opt.ptx_version;
    return c->opt.cc_suffix ? 80 : default_ptx(c->opt.cc_major * 10 + c->opt.cc_minor); /* sm_90a needs PTX 8.0 */
}

static void machine(Ctx *c, MachineSpec *m) {
    int cc = c->opt.cc_major * 10 + c->opt.cc_minor;
    m->triple = "nvptx64-nvidia-cuda";
    m->cpu = c->opt.cc_suffix ? arena_printf(&c->arena, "sm_%d%c", cc, c->opt.cc_suffix) : arena_printf(&c->arena, "sm_%d", cc);
    m->features = arena_printf(&c->arena, "+ptx%d", nvptx_ptx_version(c));
    /* 32-bit pointers to shared, constant and local memory (ld.shared [%r], as NVVM's code): ptxas
     * then addresses shared memory through uniform registers in N-body's inner loop */
    if (ptx_pass_enabled("shortptr")) m->option = "-nvptx-short-ptr";
}

/* Where libdevice.10.bc is looked for, in order (the one place that knows;
 * docs/runtime.md and the README describe it): $GPUJIT_LIBDEVICE (a file),
 * $CUDA_HOME and $CUDA_PATH (toolkits), NVIDIA's pip wheels in any sys.path
 * entry (what gpujit's extras install), then the toolkit's usual places. */
#define LIBDEVICE_IN_TOOLKIT "nvvm/libdevice/libdevice.10.bc"
static const char *const libdevice_wheel_dirs[] = {
    "nvidia/cuda_nvcc", /* nvidia-cuda-nvcc-cu12: gpujit[cuda12] */
    "nvidia/cu13",      /* nvidia-nvvm 13 (nvidia-cuda-nvcc 13 depends on it): gpujit[cuda13] */
};
static const char *const libdevice_system_roots[] = {"/usr/local/cuda", "/usr/lib/cuda", "/usr/local/cuda-13.0",
                                                     "/usr/local/cuda-12"};
#define LIBDEVICE_MISSING                                                                                    \
    "this kernel needs CUDA's libdevice (math functions), which was not found: pip install "               \
    "nvidia-cuda-nvcc-cu12 (or 'nvidia-nvvm>=13,<14' for CUDA 13; gpujit's extras cuda12 and cuda13 name "  \
    "them), or set GPUJIT_LIBDEVICE to libdevice.10.bc, or CUDA_HOME to a CUDA toolkit"

static bool readable_in(char *path, size_t size, const char *dir, const char *rel) {
    snprintf(path, size, "%s/%s", dir, rel);
    return access(path, R_OK) == 0;
}

/* The wheels' directories under each sys.path entry (site-packages, a venv's,
 * the user's), the first entry first as for imports: the compiler runs with the
 * GIL held, as pymodule.c calls it. */
static bool find_in_wheels(char *path, size_t size) {
    PyObject *sys_path = PySys_GetObject("path"); /* borrowed */
    if (!sys_path || !PyList_Check(sys_path)) return false;
    char rel[256];
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(sys_path); i++) {
        PyObject *entry = PyList_GET_ITEM(sys_path, i);
        const char *dir = PyUnicode_Check(entry) ? PyUnicode_AsUTF8(entry) : NULL;
        if (!dir) {
            PyErr_Clear();
            continue;
        }
        if (!*dir) continue; /* the current directory: not where wheels install */
        for (size_t w = 0; w < sizeof libdevice_wheel_dirs / sizeof libdevice_wheel_dirs[0]; w++) {
            snprintf(rel, sizeof rel, "%s/%s", libdevice_wheel_dirs[w], LIBDEVICE_IN_TOOLKIT);
            if (readable_in(path, size, dir, rel)) return true;
        }
    }
    return false;
}

/* Returns the path, NULL with *why set when $GPUJIT_LIBDEVICE names a file
 * that cannot be read, or NULL with *why NULL when none was found. */
const char *find_libdevice(const char **why) {
    static char path[4096];
    *why = NULL;
    const char *env = getenv("GPUJIT_LIBDEVICE");
    if (env && *env) {
        if (access(env, R_OK) == 0) return env;
        *why = env;
        return NULL;
    }
    const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH")};
    for (size_t i = 0; i < sizeof homes / sizeof homes[0]; i++)
        if (homes[i] && *homes[i] && readable_in(path, sizeof path, homes[i], LIBDEVICE_IN_TOOLKIT)) return path;
    if (find_in_wheels(path, sizeof path)) return path;
    for (size_t i = 0; i < sizeof libdevice_system_roots / sizeof libdevice_system_roots[0]; i++)
        if (readable_in(path, sizeof path, libdevice_system_roots[i], LIBDEVICE_IN_TOOLKIT)) return path;
    /* Debian's nvidia-cuda-toolkit */
    if (readable_in(path, sizeof path, "/usr/lib/nvidia-cuda-toolkit", "libdevice/libdevice.10.bc")) return path;
    return NULL;
}

/* Math functions come from libdevice (math_fn declared them): link it in
 * before optimisation so that O3 inlines what the kernel calls. */
static int link_libdevice(Ctx *c) {
    if (!c->needs_libdevice) return 0;
    const char *why;
    const char *path = find_libdevice(&why);
    if (!path && why)
        return error_at(c, ERR_COMPILE, NO_LOCATION, "GPUJIT_LIBDEVICE=%s: no such readable file (it should name "
                        "libdevice.10.bc)", why);
    if (!path) return error_at(c, ERR_COMPILE, NO_LOCATION, LIBDEVICE_MISSING);
    RETURN_IF_ERROR(libdevice_link(c, path));
    /* keep only the kernel visible, so O3 drops what we do not call */
    for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f))
        if (!LLVMIsDeclaration(f) && f != c->fn) LLVMSetLinkage(f, LLVMInternalLinkage);
    /* ... and drop the uncalled ones now, before O3's first interprocedural passes
     * analyse them (its dead-code pass comes later) */
    for (bool dropped = true; dropped;) {
        dropped = false;
        for (LLVMValueRef f = LLVMGetFirstFunction(c->mod), next; f; f = next) {
            next = LLVMGetNextFunction(f);
            if (LLVMGetLinkage(f) == LLVMInternalLinkage && !LLVMGetFirstUse(f)) {
                LLVMDeleteFunction(f);
                dropped = true;
            }
        }
    }
    /* (the grid barrier's counter stays: the launcher finds it by name) */
    for (LLVMValueRef g = LLVMGetFirstGlobal(c->mod); g; g = LLVMGetNextGlobal(g))
        if (!LLVMIsDeclaration(g) && strcmp(LLVMGetValueName(g), GJ_GRID_SYNC_SYMBOL))
            LLVMSetLinkage(g, LLVMInternalLinkage);
    /* (a simplified piece brought the flag along, with the same value) */
    if (!LLVMGetModuleFlag(c->mod, "nvvm-reflect-ftz", 16))
        LLVMAddModuleFlag(c->mod, LLVMModuleFlagBehaviorOverride, "nvvm-reflect-ftz", 16,
                          LLVMValueAsMetadata(LLVMConstInt(c->i32, c->opt.fastmath ? 1 : 0, 0)));
    return 0;
}

static int emit(Ctx *c) {
    if (ptx_pass_enabled("unroll")) STAGE(unroll_more(c));
    if (ptx_pass_enabled("mergegep")) STAGE(merge_geps(c));
    if (ptx_pass_enabled("hoist") || ptx_pass_enabled("hoist-all"))
        STAGE(hoist_loads(c, ptx_pass_enabled("hoist-all")));
    STAGE(fix_ir_nvptx(c));
    STAGE(emit_ptx(c));
    STAGE(fix_ptx(c));
    return 0;
}

/* clang-format off */
const Target target_nvptx = {
    .name = "nvptx",
    .api_name = "cuda",
    .links_external = true,
    .init = init,
    .begin = begin,
    .end = end,
    .machine = machine,
    .link = link_libdevice,
    .emit = emit,
    .array_space = AS_GLOBAL,
    .shared_space = 3,
    .begin_kernel = begin_kernel,
    .begin_export = begin_export,
    .cache_access = cache_access,
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
    .begin_device_fn = begin_device_fn,
};
/* clang-format on */
