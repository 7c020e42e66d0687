/* target_host.c: the CPU backend's side of lowering. The kernel body becomes
 * an internal function body(blk, tx, ty, tz, params...) reading block
 * geometry from a GjBlockCtx (runtime/cpu_abi.h, addressed by offsetof); two
 * entry points unpack a cuLaunchKernel-style params array: _block loops over
 * every thread of a block (kernels without barriers), _thread runs one
 * thread (kernels with barriers run each thread on a fiber). */
#include <stddef.h>
#include <string.h>

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
                        : LLVMGetTypeKind(t) == LLVMHalfTypeKind  ? 2
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

static void barrier(Ctx *c) {
    LLVMValueRef fp = LLVMBuildLoad2(c->b, c->ptr, field_ptr(c, OFF_SYNC), "syncthreads");
    LLVMTypeRef fty = LLVMFunctionType(c->voidt, &c->ptr, 1, 0);
    LLVMBuildCall2(c->b, fty, fp, &c->host_blk, 1, "");
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

static int finish(Ctx *c) {
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
    load_params(c, LLVMGetParam(th, 0), args);
    for (int i = 0; i < 4; i++) args[i] = LLVMGetParam(th, (unsigned)(1 + i));
    LLVMBuildCall2(c->b, body_ty, c->fn, args, n, "");
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

/* clang-format off */
const Target target_host = {
    .name = "host",
    .api_name = "cpu",
    .init = init,
    .begin = begin,
    .end = end,
    .machine = machine,
    .emit = emit_host,
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
    .lane_positions = true,
    .half_via_float = true,
};
/* clang-format on */
