/* mbarrier.c: gpu.mbarrier -- the split arrive/wait barriers in shared
 * memory (mbarrier.*, sm_80; the transaction counts and try_wait, sm_90).
 * A barrier is one 64-bit element of a shared int64/uint64 array. On the
 * GPU each call is its PTX instruction. On the CPU target the word holds
 * the barrier's state in a layout of gpujit's own (pending arrivals in bits
 * 0-20, the expected count in 21-41, pending transaction bytes in 42-62,
 * the phase in bit 63), threads of a block run one at a time on fibers so
 * each update is whole, and a wait that finds its phase incomplete yields
 * to the block's other threads (GJ_WARP_YIELD) before it answers false. */
#include <string.h>

#include "gj.h"

static bool needs_sm90(MbarOp op) {
    return op == MBAR_ARRIVE_EXPECT_TX || op == MBAR_EXPECT_TX || op == MBAR_COMPLETE_TX || op == MBAR_TRY_WAIT ||
           op == MBAR_TRY_WAIT_PARITY;
}

/* (bars, index, extra arguments...): the count each takes past the barrier */
static int extra_args(MbarOp op) { return op == MBAR_ARRIVE ? 0 : 1; }

Type *type_mbarrier(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs) {
    MbarOp op = (MbarOp)k->id;
    const char *name = path_pretty(k->path);
    int want = 2 + extra_args(op);
    if (nargs != want) TERR("%s() takes %d arguments (barriers, index%s), got %d", name, want, want > 2 ? ", ..." : "", nargs);
    if (at[0]->kind != TY_ARRAY || at[0]->space != AS_SHARED || at[0]->frag ||
        (at[0]->elem->kind != TY_INT64 && at[0]->elem->kind != TY_UINT64))
        TERR("%s(): the barriers are a shared array of int64 or uint64, not %s", name, type_name(c, at[0]));
    bool ix = at[0]->ndim == 1 ? is_index(at[1]) : at[1]->kind == TY_TUPLE && at[1]->n == at[0]->ndim;
    for (int i = 0; ix && at[1]->kind == TY_TUPLE && i < at[1]->n; i++) ix = is_index(at[1]->items[i]);
    if (!ix) TERR("%s(): the index must be %d integer%s", name, at[0]->ndim, at[0]->ndim == 1 ? "" : "s");
    if (want == 3 && !is_int(at[2]) && at[2]->kind != TY_BOOL)
        TERR("%s(): the last argument must be an integer, not %s", name, type_name(c, at[2]));
    if (c->opt.target == GJ_TARGET_NVPTX) {
        int need = needs_sm90(op) ? 9 : 8;
        if (c->opt.cc_major < need)
            UNSUP("%s needs compute capability %d.0 or newer (compiling for %d.%d)", name, need, c->opt.cc_major,
                  c->opt.cc_minor);
        /* the transaction counts and scoped forms are PTX ISA 8.0: the kernel is compiled for it */
        Ctx *root = ctx_root(c);
        if (needs_sm90(op) && root->opt.ptx_version && root->opt.ptx_version < 80)
            UNSUP("%s needs PTX ISA 8.0 or newer (compiling for PTX %d.%d)", name, root->opt.ptx_version / 10,
                  root->opt.ptx_version % 10);
        if (needs_sm90(op) && nvptx_ptx_version(root) < 80) root->opt.ptx_version = 80;
    }
    c->uses_barrier = true; /* the CPU runs the block's threads as fibers: a wait yields to the others */
    switch (op) {
    case MBAR_ARRIVE:
    case MBAR_ARRIVE_EXPECT_TX: return &ty_uint64;
    case MBAR_TEST_WAIT:
    case MBAR_TRY_WAIT:
    case MBAR_TEST_WAIT_PARITY:
    case MBAR_TRY_WAIT_PARITY: return &ty_bool;
    default: return &ty_none;
    }
}

/* ---- the GPU ---- */

static LLVMValueRef ptx(Ctx *c, LLVMTypeRef ret, const char *text, const char *cons, LLVMValueRef *args, int n) {
    LLVMTypeRef pt[3];
    for (int i = 0; i < n; i++) pt[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret, pt, (unsigned)n, 0);
    LLVMValueRef f = LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)cons, strlen(cons), 1, 0,
                                      LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(c->b, fty, f, args, (unsigned)n, "");
}

static LLVMValueRef lower_gpu(Ctx *c, MbarOp op, LLVMValueRef p, LLVMValueRef x) {
    if (LLVMGetPointerAddressSpace(LLVMTypeOf(p)) != 3) p = LLVMBuildAddrSpaceCast(c->b, p, LLVMPointerTypeInContext(c->llctx, 3), "");
    LLVMValueRef a[2] = {LLVMBuildPtrToInt(c->b, p, c->i32, ""), x};
    LLVMValueRef r;
    switch (op) {
    case MBAR_INIT: ptx(c, c->voidt, "mbarrier.init.shared.b64 [$0], $1;", "r,r,~{memory}", a, 2); return NULL;
    case MBAR_ARRIVE: return ptx(c, c->i64, "mbarrier.arrive.shared.b64 $0, [$1];", "=l,r,~{memory}", a, 1);
    case MBAR_ARRIVE_EXPECT_TX:
        return ptx(c, c->i64, "mbarrier.arrive.expect_tx.shared::cta.b64 $0, [$1], $2;", "=l,r,r,~{memory}", a, 2);
    case MBAR_EXPECT_TX:
        ptx(c, c->voidt, "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [$0], $1;", "r,r,~{memory}", a, 2);
        return NULL;
    case MBAR_COMPLETE_TX:
        ptx(c, c->voidt, "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [$0], $1;", "r,r,~{memory}", a, 2);
        return NULL;
    case MBAR_TEST_WAIT:
        r = ptx(c, c->i32, "{ .reg .pred p; mbarrier.test_wait.shared.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }",
                "=r,r,l,~{memory}", a, 2);
        break;
    case MBAR_TRY_WAIT:
        r = ptx(c, c->i32, "{ .reg .pred p; mbarrier.try_wait.shared::cta.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }",
                "=r,r,l,~{memory}", a, 2);
        break;
    case MBAR_TEST_WAIT_PARITY:
        r = ptx(c, c->i32, "{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }",
                "=r,r,r,~{memory}", a, 2);
        break;
    case MBAR_TRY_WAIT_PARITY:
        r = ptx(c, c->i32,
                "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }",
                "=r,r,r,~{memory}", a, 2);
        break;
    default: return NULL;
    }
    return LLVMBuildICmp(c->b, LLVMIntNE, r, LLVMConstInt(c->i32, 0, 0), "");
}

/* ---- the CPU target ---- */

#define M21 ((1ull << 21) - 1)

static LLVMValueRef k64(Ctx *c, uint64_t v) { return LLVMConstInt(c->i64, v, 0); }
static LLVMValueRef bits(Ctx *c, LLVMValueRef w, int shift) {
    return LLVMBuildAnd(c->b, LLVMBuildLShr(c->b, w, k64(c, (uint64_t)shift), ""), k64(c, M21), "");
}

/* The word with `pending` arrivals and `tx` bytes left: the phase completes
 * (bit 63 flips, arrivals reset to the expected count) when both reach 0. */
static LLVMValueRef settle(Ctx *c, LLVMValueRef w, LLVMValueRef pending, LLVMValueRef tx) {
    LLVMValueRef expected = bits(c, w, 21);
    LLVMValueRef phase = LLVMBuildAnd(c->b, w, k64(c, 1ull << 63), "");
    LLVMValueRef done = LLVMBuildICmp(c->b, LLVMIntEQ, LLVMBuildOr(c->b, pending, tx, ""), k64(c, 0), "");
    LLVMValueRef next = LLVMBuildSelect(c->b, done, LLVMBuildXor(c->b, phase, k64(c, 1ull << 63), ""), phase, "");
    LLVMValueRef pend = LLVMBuildSelect(c->b, done, expected, pending, "");
    LLVMValueRef r = LLVMBuildOr(c->b, next, LLVMBuildShl(c->b, expected, k64(c, 21), ""), "");
    r = LLVMBuildOr(c->b, r, LLVMBuildShl(c->b, tx, k64(c, 42), ""), "");
    return LLVMBuildOr(c->b, r, pend, "");
}

static LLVMValueRef wait_cpu(Ctx *c, LLVMValueRef p, LLVMValueRef parity) {
    LLVMValueRef w = LLVMBuildLoad2(c->b, c->i64, p, "");
    LLVMValueRef done = LLVMBuildICmp(c->b, LLVMIntNE, LLVMBuildLShr(c->b, w, k64(c, 63), ""), parity, "");
    LLVMBasicBlockRef yield = new_block(c, "mbarrier.yield"), after = new_block(c, "mbarrier.waited");
    LLVMBuildCondBr(c->b, done, after, yield);
    LLVMPositionBuilderAtEnd(c->b, yield);
    c->target->warp(c, WARP_YIELD, NULL, NULL, NULL);
    LLVMBuildBr(c->b, after);
    LLVMPositionBuilderAtEnd(c->b, after);
    return done;
}

static LLVMValueRef lower_cpu(Ctx *c, MbarOp op, LLVMValueRef p, LLVMValueRef x) {
    if (op == MBAR_INIT) {
        LLVMValueRef n = LLVMBuildAnd(c->b, x, k64(c, M21), "");
        LLVMBuildStore(c->b, LLVMBuildOr(c->b, n, LLVMBuildShl(c->b, n, k64(c, 21), ""), ""), p);
        return NULL;
    }
    if (op == MBAR_TEST_WAIT || op == MBAR_TRY_WAIT) return wait_cpu(c, p, LLVMBuildLShr(c->b, x, k64(c, 63), ""));
    if (op == MBAR_TEST_WAIT_PARITY || op == MBAR_TRY_WAIT_PARITY)
        return wait_cpu(c, p, LLVMBuildAnd(c->b, x, k64(c, 1), ""));
    LLVMValueRef w = LLVMBuildLoad2(c->b, c->i64, p, "");
    LLVMValueRef pending = bits(c, w, 0), tx = bits(c, w, 42);
    if (op == MBAR_EXPECT_TX || op == MBAR_ARRIVE_EXPECT_TX)
        tx = LLVMBuildAnd(c->b, LLVMBuildAdd(c->b, tx, x, ""), k64(c, M21), "");
    if (op == MBAR_COMPLETE_TX) tx = LLVMBuildAnd(c->b, LLVMBuildSub(c->b, tx, x, ""), k64(c, M21), "");
    if (op == MBAR_ARRIVE || op == MBAR_ARRIVE_EXPECT_TX) pending = LLVMBuildSub(c->b, pending, k64(c, 1), "");
    LLVMValueRef nw;
    if (op == MBAR_EXPECT_TX) { /* no arrival: nothing completes */
        nw = LLVMBuildOr(c->b, LLVMBuildAnd(c->b, w, k64(c, ~(M21 << 42)), ""), LLVMBuildShl(c->b, tx, k64(c, 42), ""), "");
    } else {
        nw = settle(c, w, pending, tx);
    }
    LLVMBuildStore(c->b, nw, p);
    return op == MBAR_ARRIVE || op == MBAR_ARRIVE_EXPECT_TX ? w : NULL; /* the token: the phase arrived at */
}

LLVMValueRef lower_mbarrier(Ctx *c, Instr *in, const Intrinsic *k, Instr **a, int nargs) {
    (void)in;
    MbarOp op = (MbarOp)k->id;
    LLVMValueRef p = elem_ptr(c, a[0], a[1]);
    LLVMValueRef x = NULL;
    if (nargs == 3) {
        bool wide = c->opt.target != GJ_TARGET_NVPTX || op == MBAR_TEST_WAIT || op == MBAR_TRY_WAIT;
        x = val_as(c, a[2], wide ? &ty_uint64 : &ty_uint32);
    }
    return c->opt.target == GJ_TARGET_NVPTX ? lower_gpu(c, op, p, x) : lower_cpu(c, op, p, x);
}
