/* cpasync.c: gpu.cp_async -- Ampere's asynchronous copies from global to
 * shared memory (cp.async, sm_80 and up), with commit and wait groups. On
 * the GPU each call is its NVVM intrinsic. On the CPU target a copy is put
 * in a per-thread queue and performed at the wait that covers it
 * (wait_group, wait_all), so a kernel that reads its shared memory before
 * the wait sees the old contents there too; a queue that fills performs its
 * copies early, which cp.async allows. */
#include <string.h>

#include "gj.h"

#define QUEUE_LEN 64 /* copies pending in one thread before the queue drains */

/* The queue: {dst[N], src[N], bytes[N], group[N], count, committed}. */
static LLVMTypeRef queue_type(Ctx *c) {
    LLVMTypeRef f[6] = {LLVMArrayType2(c->ptr, QUEUE_LEN), LLVMArrayType2(c->ptr, QUEUE_LEN),
                        LLVMArrayType2(c->i32, QUEUE_LEN), LLVMArrayType2(c->i32, QUEUE_LEN), c->i32, c->i32};
    return LLVMStructTypeInContext(c->llctx, f, 6, 0);
}

static Type *index_ok(Ctx *c, Instr *in, Type *arr, Type *ix, const char *what) {
    bool ok = arr->ndim == 1 ? is_index(ix) : ix->kind == TY_TUPLE && ix->n == arr->ndim;
    for (int i = 0; ok && ix->kind == TY_TUPLE && i < ix->n; i++) ok = is_index(ix->items[i]);
    if (!ok) TERR("cp_async.copy(): the %s index must be %d integer%s", what, arr->ndim, arr->ndim == 1 ? "" : "s");
    return &ty_none;
}

Type *type_cp_async(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs) {
    if (c->opt.target == GJ_TARGET_NVPTX && c->opt.cc_major < 8)
        UNSUP("%s needs compute capability 8.0 or newer (cp.async; compiling for %d.%d)", path_pretty(k->path),
              c->opt.cc_major, c->opt.cc_minor);
    if (ctx_root(c) != c && c->opt.target != GJ_TARGET_NVPTX)
        UNSUP("%s in a device function is not supported on the CPU target (call it in the kernel)",
              path_pretty(k->path));
    switch ((CpAsyncOp)k->id) {
    case CPA_COPY: {
        if (nargs != 5) TERR("cp_async.copy() takes (dst, dst_index, src, src_index, nbytes)");
        if (at[0]->kind != TY_ARRAY || at[0]->space != AS_SHARED || at[0]->frag)
            TERR("cp_async.copy(): the destination must be a shared array, not %s", type_name(c, at[0]));
        if (at[2]->kind != TY_ARRAY || at[2]->space == AS_SHARED || at[2]->space == AS_LOCAL ||
            at[2]->space == AS_CONST)
            TERR("cp_async.copy(): the source must be a global array, not %s", type_name(c, at[2]));
        if (!index_ok(c, in, at[0], at[1], "destination") || !index_ok(c, in, at[2], at[3], "source")) return NULL;
        Instr *n = literal_operand(c, in, in->args[5]);
        if (n->op != IR_CONST || n->ckind != CK_INT || (n->ival != 4 && n->ival != 8 && n->ival != 16))
            TERR("cp_async.copy(): nbytes must be the constant 4, 8 or 16");
        for (int i = 0; i < 3; i += 2)
            if (n->ival % (type_bits(at[i]->elem) / 8))
                TERR("cp_async.copy(): %lld bytes is not a whole number of %s elements", (long long)n->ival,
                     type_name(c, at[i]->elem));
        return &ty_none;
    }
    case CPA_WAIT_GROUP: {
        Instr *n = nargs == 1 ? literal_operand(c, in, in->args[1]) : NULL;
        if (!n || n->op != IR_CONST || n->ckind != CK_INT || n->ival < 0 || n->ival > 7)
            TERR("cp_async.wait_group() takes one constant, 0 to 7: the groups that may stay pending");
        return &ty_none;
    }
    case CPA_COMMIT:
    case CPA_WAIT_ALL:
        if (nargs) TERR("%s() takes no arguments", path_pretty(k->path));
        return &ty_none;
    }
    return NULL;
}

/* ---- the CPU target's queue ---- */

static LLVMValueRef field(Ctx *c, LLVMValueRef q, int f, LLVMValueRef i) {
    LLVMValueRef ix[3] = {LLVMConstInt(c->i32, 0, 0), LLVMConstInt(c->i32, (unsigned)f, 0), i};
    return LLVMBuildInBoundsGEP2(c->b, queue_type(c), q, ix, i ? 3 : 2, "");
}

static LLVMValueRef queue(Ctx *c) {
    if (c->cpa_queue) return c->cpa_queue;
    LLVMValueRef q = entry_alloca(c, queue_type(c), "cp_async");
    /* count and committed are 0 from the start, before anything else runs */
    LLVMBasicBlockRef cur = LLVMGetInsertBlock(c->b);
    LLVMMetadataRef loc = LLVMGetCurrentDebugLocation2(c->b);
    LLVMPositionBuilderBefore(c->b, LLVMGetNextInstruction(q));
    LLVMBuildStore(c->b, LLVMConstInt(c->i32, 0, 0), field(c, q, 4, NULL));
    LLVMBuildStore(c->b, LLVMConstInt(c->i32, 0, 0), field(c, q, 5, NULL));
    LLVMPositionBuilderAtEnd(c->b, cur);
    LLVMSetCurrentDebugLocation2(c->b, loc);
    return c->cpa_queue = q;
}

/* void __gpujit_cp_async_wait(queue*, i32 limit): performs the copies of
 * groups below `limit`, in order, and keeps the others. */
static LLVMValueRef wait_fn(Ctx *c) {
    const char *name = "__gpujit_cp_async_wait";
    LLVMTypeRef pt[2] = {c->ptr, c->i32};
    LLVMTypeRef fty = LLVMFunctionType(c->voidt, pt, 2, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(c->mod, name);
    if (fn) return fn;
    fn = LLVMAddFunction(c->mod, name, fty);
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    LLVMBasicBlockRef cur = LLVMGetInsertBlock(c->b);
    LLVMMetadataRef loc = LLVMGetCurrentDebugLocation2(c->b);
    LLVMSetCurrentDebugLocation2(c->b, NULL);
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(c->llctx, fn, "entry");
    LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(c->llctx, fn, "head");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(c->llctx, fn, "body");
    LLVMBasicBlockRef copy = LLVMAppendBasicBlockInContext(c->llctx, fn, "copy");
    LLVMBasicBlockRef keep = LLVMAppendBasicBlockInContext(c->llctx, fn, "keep");
    LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(c->llctx, fn, "next");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c->llctx, fn, "done");
    LLVMValueRef q = LLVMGetParam(fn, 0), limit = LLVMGetParam(fn, 1);
    LLVMPositionBuilderAtEnd(c->b, entry);
    LLVMValueRef count = LLVMBuildLoad2(c->b, c->i32, field(c, q, 4, NULL), "count");
    LLVMBuildBr(c->b, head);
    LLVMPositionBuilderAtEnd(c->b, head);
    LLVMValueRef i = LLVMBuildPhi(c->b, c->i32, "i"), j = LLVMBuildPhi(c->b, c->i32, "j");
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntULT, i, count, ""), body, done);
    LLVMPositionBuilderAtEnd(c->b, body);
    LLVMValueRef dst = LLVMBuildLoad2(c->b, c->ptr, field(c, q, 0, i), "");
    LLVMValueRef src = LLVMBuildLoad2(c->b, c->ptr, field(c, q, 1, i), "");
    LLVMValueRef n = LLVMBuildLoad2(c->b, c->i32, field(c, q, 2, i), "");
    LLVMValueRef g = LLVMBuildLoad2(c->b, c->i32, field(c, q, 3, i), "");
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, g, limit, ""), copy, keep);
    LLVMPositionBuilderAtEnd(c->b, copy);
    LLVMBuildMemCpy(c->b, dst, 1, src, 1, LLVMBuildZExt(c->b, n, c->i64, ""));
    LLVMBuildBr(c->b, next);
    LLVMPositionBuilderAtEnd(c->b, keep);
    LLVMBuildStore(c->b, dst, field(c, q, 0, j));
    LLVMBuildStore(c->b, src, field(c, q, 1, j));
    LLVMBuildStore(c->b, n, field(c, q, 2, j));
    LLVMBuildStore(c->b, g, field(c, q, 3, j));
    LLVMValueRef j1 = LLVMBuildAdd(c->b, j, LLVMConstInt(c->i32, 1, 0), "");
    LLVMBuildBr(c->b, next);
    LLVMPositionBuilderAtEnd(c->b, next);
    LLVMValueRef jn = LLVMBuildPhi(c->b, c->i32, "");
    LLVMValueRef inc[2] = {j, j1};
    LLVMBasicBlockRef from[2] = {copy, keep};
    LLVMAddIncoming(jn, inc, from, 2);
    LLVMValueRef i1 = LLVMBuildAdd(c->b, i, LLVMConstInt(c->i32, 1, 0), "");
    LLVMBuildBr(c->b, head);
    LLVMValueRef zero = LLVMConstInt(c->i32, 0, 0);
    LLVMValueRef iv[2] = {zero, i1}, jv[2] = {zero, jn};
    LLVMBasicBlockRef ib[2] = {entry, next};
    LLVMAddIncoming(i, iv, ib, 2);
    LLVMAddIncoming(j, jv, ib, 2);
    LLVMPositionBuilderAtEnd(c->b, done);
    LLVMBuildStore(c->b, j, field(c, q, 4, NULL));
    LLVMBuildRetVoid(c->b);
    LLVMPositionBuilderAtEnd(c->b, cur);
    LLVMSetCurrentDebugLocation2(c->b, loc);
    return fn;
}

static void call_wait(Ctx *c, LLVMValueRef q, LLVMValueRef limit) {
    LLVMValueRef fn = wait_fn(c), args[2] = {q, limit};
    LLVMBuildCall2(c->b, LLVMGlobalGetValueType(fn), fn, args, 2, "");
}

static LLVMValueRef lower_cpu(Ctx *c, CpAsyncOp op, Instr **a) {
    LLVMValueRef q = queue(c);
    LLVMValueRef committed = LLVMBuildLoad2(c->b, c->i32, field(c, q, 5, NULL), "");
    LLVMValueRef one = LLVMConstInt(c->i32, 1, 0);
    switch (op) {
    case CPA_COPY: {
        LLVMValueRef dst = elem_ptr(c, a[0], a[1]), src = elem_ptr(c, a[2], a[3]);
        LLVMValueRef full = LLVMBuildICmp(c->b, LLVMIntEQ, LLVMBuildLoad2(c->b, c->i32, field(c, q, 4, NULL), ""),
                                          LLVMConstInt(c->i32, QUEUE_LEN, 0), "");
        LLVMBasicBlockRef drain = new_block(c, "cp_async.drain"), put = new_block(c, "cp_async.put");
        LLVMBuildCondBr(c->b, full, drain, put);
        LLVMPositionBuilderAtEnd(c->b, drain);
        call_wait(c, q, LLVMConstInt(c->i32, 0x7FFFFFFF, 0)); /* early, all of them */
        LLVMBuildBr(c->b, put);
        LLVMPositionBuilderAtEnd(c->b, put);
        LLVMValueRef n = LLVMBuildLoad2(c->b, c->i32, field(c, q, 4, NULL), "");
        LLVMBuildStore(c->b, dst, field(c, q, 0, n));
        LLVMBuildStore(c->b, src, field(c, q, 1, n));
        LLVMBuildStore(c->b, LLVMConstInt(c->i32, (unsigned long long)a[4]->ival, 0), field(c, q, 2, n));
        LLVMBuildStore(c->b, committed, field(c, q, 3, n));
        LLVMBuildStore(c->b, LLVMBuildAdd(c->b, n, one, ""), field(c, q, 4, NULL));
        return NULL;
    }
    case CPA_COMMIT: LLVMBuildStore(c->b, LLVMBuildAdd(c->b, committed, one, ""), field(c, q, 5, NULL)); return NULL;
    case CPA_WAIT_GROUP:
        call_wait(c, q, LLVMBuildSub(c->b, committed, LLVMConstInt(c->i32, (unsigned long long)a[0]->ival, 0), ""));
        return NULL;
    case CPA_WAIT_ALL: /* commit_group and wait_group(0) */
        committed = LLVMBuildAdd(c->b, committed, one, "");
        LLVMBuildStore(c->b, committed, field(c, q, 5, NULL));
        call_wait(c, q, committed);
        return NULL;
    }
    return NULL;
}

/* An asm statement with side effects (the GPU's cp.async instructions; NVVM's intrinsics for
 * them need a newer PTX than the target machine may choose). */
static void asm_stmt(Ctx *c, const char *text, const char *cons, LLVMValueRef *args, int n) {
    LLVMTypeRef pt[2];
    for (int i = 0; i < n; i++) pt[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(c->voidt, pt, (unsigned)n, 0);
    LLVMValueRef f = LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)cons, strlen(cons), 1, 0,
                                      LLVMInlineAsmDialectATT, 0);
    LLVMBuildCall2(c->b, fty, f, args, (unsigned)n, "");
}

LLVMValueRef lower_cp_async(Ctx *c, Instr *in, const Intrinsic *k, Instr **a, int nargs) {
    (void)in, (void)nargs;
    CpAsyncOp op = (CpAsyncOp)k->id;
    if (c->opt.target != GJ_TARGET_NVPTX) return lower_cpu(c, op, a);
    char text[96];
    switch (op) {
    case CPA_COPY: {
        int n = (int)a[4]->ival;
        LLVMValueRef dst = elem_ptr(c, a[0], a[1]), src = elem_ptr(c, a[2], a[3]);
        if (LLVMGetPointerAddressSpace(LLVMTypeOf(dst)) != 3)
            dst = LLVMBuildAddrSpaceCast(c->b, dst, LLVMPointerTypeInContext(c->llctx, 3), "");
        if (LLVMGetPointerAddressSpace(LLVMTypeOf(src)) != 1)
            src = LLVMBuildAddrSpaceCast(c->b, src, LLVMPointerTypeInContext(c->llctx, 1), "");
        /* 16 bytes bypass L1 (.cg), as CUDA's __pipeline_memcpy_async does; .cg takes no other size */
        snprintf(text, sizeof text, "cp.async.%s.shared.global [$0], [$1], %d;", n == 16 ? "cg" : "ca", n);
        LLVMValueRef args[2] = {LLVMBuildPtrToInt(c->b, dst, c->i32, ""), LLVMBuildPtrToInt(c->b, src, c->i64, "")};
        asm_stmt(c, text, "r,l,~{memory}", args, 2);
        return NULL;
    }
    case CPA_COMMIT: asm_stmt(c, "cp.async.commit_group;", "~{memory}", NULL, 0); return NULL;
    case CPA_WAIT_GROUP:
        snprintf(text, sizeof text, "cp.async.wait_group %d;", (int)a[0]->ival);
        asm_stmt(c, text, "~{memory}", NULL, 0);
        return NULL;
    case CPA_WAIT_ALL: asm_stmt(c, "cp.async.wait_all;", "~{memory}", NULL, 0); return NULL;
    }
    return NULL;
}
