/* ptxfix.c -- steer around code generators' known miscompiles on the GPU path:
 * one IR rewrite before LLVM's NVPTX back end (fix_ir_nvptx) and a few PTX
 * rewrites before ptxas (fix_ptx), each into an equivalent form that is compiled
 * right. All were found by the differential fuzzer on the H200 and reduced to a few
 * lines (tests/test_regressions.py has each as a kernel and checks the PTX for the
 * patterns; docs/reliability.md tells the story).
 *
 * LLVM 19 NVPTX:
 *   sitofp i1 x   (InstCombine makes it of float(-int(bool)) and the like) is
 *             sometimes selected as selp.u32 1, 0 + cvt.rn.f64.s32: true gives +1.0,
 *             not -1.0. Written as select x, -1.0, 0.0 (uitofp i1 likewise, with +1.0).
 *
 * ptxas (CUDA 13.0, -O1 and up, sm_90):
 *   abs.s64   ptxas's range analysis of a 64-bit abs is wrong: for
 *               abs.s64 a, x;  neg.s64 b, a;  max.s64 c, b, -350;
 *             it emits c = -350 whatever x is (a compare of -|x| with a constant
 *             folds the same way). Written as (x ^ (x >> 63)) - (x >> 63) it is
 *             compiled right (the subtraction as below).
 *   min/max.{s,u}16
 *             ptxas fuses a 16-bit min/max with a following compare against the same
 *             constant into one VIMNMX.U16x2 whose predicate output misses the tie
 *             (max(x, 1) == 1 when x == 1): a loop exit taken on it never fired and
 *             the kernel hung. Written as setp + selp it is compiled right.
 *   sub.s64 / neg.s64 of a register
 *             ptxas fuses  cvt.u64.u32 a, (mul.hi.u32 x, C);  sub.s64 d, a, b  (b known
 *             to fit in 32 bits: `(x + 2) // 3 - (i & 3)`) into one IMAD.HI whose 64-bit
 *             addend is (-b_lo, then -1 plus the carry): for b == 0 no carry comes and
 *             the high word is all ones (neg.s64 + add.s64 the same). Written as
 *             a + ~b + 1 it is compiled right: two carries into one IADD3, the same
 *             instruction count. Only 64-bit subtractions of a register are rewritten.
 *
 * 32- and 64-bit min/max and 32-bit abs were checked the same way and are left alone.
 *
 * Spelling, not a miscompile: LLVM writes half add/sub/mul as add.rn.f16 ..., numba.cuda
 * (and CUDA C's __hadd) as add.f16, the same rounding, which lets ptxas fuse a mul.f16 and
 * an add.f16 into one fma. add.rn/sub.rn.f16 lose their .rn; mul.rn.f16 and mul.rn.bf16
 * only when the result is only stored, so no unrounded mul ever feeds an add. bfloat16's
 * add.rn/sub.rn keep it: the CPU target rounds a bfloat16 product before its add, and on an
 * H200 a bfloat16 `a * x + y` written mul.rn.bf16 + add.bf16 gave the fused rounding (one
 * element of 2^26 random ones, a tie of the product). An explicit rounding keeps both apart.
 * The text is only copied when one of these instructions occurs. */
#include "gj.h"

#include <string.h>

static const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\t') p++;
    return p;
}

/* "OP \tA, B, C;" -> the operands, each copied into ops[i] (at most 3). */
static int operands(const char *p, const char *end, char ops[3][64]) {
    int n = 0;
    while (p < end && n < 3) {
        p = skip_ws(p);
        const char *q = p;
        while (q < end && *q != ',' && *q != ';') q++;
        const char *e = q;
        while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
        if (e - p <= 0 || e - p >= 64) return -1;
        memcpy(ops[n], p, e - p);
        ops[n][e - p] = 0;
        n++;
        if (q >= end || *q == ';') break;
        p = q + 1;
    }
    return n;
}

/* ---- LLVM IR, after optimisation, before the NVPTX back end ---- */

/* One PTX instruction on a 16-bit operand, as inline assembly ("=h,h"). */
static LLVMValueRef asm16(LLVMBuilderRef b, LLVMTypeRef rt, const char *text, LLVMValueRef x) {
    LLVMTypeRef xt = LLVMTypeOf(x);
    LLVMTypeRef fty = LLVMFunctionType(rt, &xt, 1, 0);
    LLVMValueRef a = LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)"=h,h", 4, 0, 0,
                                      LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(b, fty, a, &x, 1, "");
}

/* The half forms LLVM 19's NVPTX back end has no instruction for: fabs of a half goes
 * through float (abs.f16 is PTX 6.5, sm_53), and an 8-bit integer converts to half as
 * a 16-bit one (cvt.rn.f16.s8 is one instruction on the byte). Both as the one PTX
 * instruction that computes the same value. NULL when `in` is neither. */
static LLVMValueRef native_half(Ctx *c, LLVMBuilderRef b, LLVMValueRef in) {
    LLVMOpcode op = LLVMGetInstructionOpcode(in);
    LLVMTypeRef ty = LLVMTypeOf(in);
    if (LLVMGetTypeKind(ty) != LLVMHalfTypeKind) return NULL;
    if (op == LLVMSIToFP || op == LLVMUIToFP) {
        LLVMValueRef x = LLVMGetOperand(in, 0);
        LLVMTypeRef xt = LLVMTypeOf(x);
        if (LLVMGetTypeKind(xt) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(xt) != 8) return NULL;
        LLVMPositionBuilderBefore(b, in);
        LLVMTypeRef i16 = LLVMInt16TypeInContext(LLVMGetModuleContext(c->mod));
        x = op == LLVMSIToFP ? LLVMBuildSExt(b, x, i16, "") : LLVMBuildZExt(b, x, i16, "");
        return asm16(b, ty, op == LLVMSIToFP ? "cvt.rn.f16.s8 $0, $1;" : "cvt.rn.f16.u8 $0, $1;", x);
    }
    if (op != LLVMCall) return NULL;
    if (nvptx_ptx_version(c) < 65 || c->opt.cc_major * 10 + c->opt.cc_minor < 53 || LLVMGetIntrinsicID(LLVMGetCalledValue(in)) != LLVMLookupIntrinsicID("llvm.fabs", 9))
        return NULL;
    LLVMPositionBuilderBefore(b, in);
    return asm16(b, ty, "abs.f16 $0, $1;", LLVMGetOperand(in, 0));
}

/* bfloat16 arithmetic as CUDA's cuda_bf16.h computes it, where LLVM 19 would go through
 * float32 (the same values, more instructions): below sm_90, which has add/sub/mul.bf16,
 * a + b, a - b and a * b are one fma.rn.bf16 each (a * 1 + b, b * -1 + a, a * b + -0);
 * a / b is div.approx.f32 of the float32s, rounded once (correctly rounded for bfloat16's
 * 8 bits), with a divisor of 2**126 or more scaled by 1/4 as CUDA's __hdiv does, so the
 * approximation stays in its range. NULL when `in` is none of these. */
static LLVMValueRef native_bf16(Ctx *c, LLVMBuilderRef b, LLVMValueRef in) {
    LLVMTypeRef ty = LLVMTypeOf(in);
    if (LLVMGetTypeKind(ty) != LLVMBFloatTypeKind) return NULL;
    LLVMOpcode op = LLVMGetInstructionOpcode(in);
    int cc = c->opt.cc_major * 10 + c->opt.cc_minor;
    if (cc < 80 || (op != LLVMFAdd && op != LLVMFSub && op != LLVMFMul && op != LLVMFDiv)) return NULL;
    if (op != LLVMFDiv && cc >= 90) return NULL;
    LLVMPositionBuilderBefore(b, in);
    LLVMValueRef x = LLVMGetOperand(in, 0), y = LLVMGetOperand(in, 1);
    LLVMContextRef cx = LLVMGetModuleContext(c->mod);
    if (op != LLVMFDiv) {
        LLVMValueRef args[3] = {x, LLVMConstReal(ty, 1.0), y};
        if (op == LLVMFSub) args[0] = y, args[1] = LLVMConstReal(ty, -1.0), args[2] = x;
        if (op == LLVMFMul) args[1] = y, args[2] = LLVMConstReal(ty, -0.0);
        unsigned id = LLVMLookupIntrinsicID("llvm.nvvm.fma.rn.bf16", 21);
        return LLVMBuildCall2(b, LLVMIntrinsicGetType(cx, id, NULL, 0), LLVMGetIntrinsicDeclaration(c->mod, id, NULL, 0),
                              args, 3, "");
    }
    LLVMTypeRef f32 = LLVMFloatTypeInContext(cx);
    LLVMValueRef xf = LLVMBuildFPExt(b, x, f32, ""), yf = LLVMBuildFPExt(b, y, f32, "");
    unsigned fabs_id = LLVMLookupIntrinsicID("llvm.fabs", 9);
    LLVMValueRef ay = LLVMBuildCall2(b, LLVMIntrinsicGetType(cx, fabs_id, &f32, 1),
                                     LLVMGetIntrinsicDeclaration(c->mod, fabs_id, &f32, 1), &yf, 1, "");
    LLVMValueRef big = LLVMBuildFCmp(b, LLVMRealOGE, ay, LLVMConstReal(f32, 0x1p126), "");
    LLVMValueRef quarter = LLVMConstReal(f32, 0.25);
    yf = LLVMBuildSelect(b, big, LLVMBuildFMul(b, yf, quarter, ""), yf, "");
    unsigned id = LLVMLookupIntrinsicID("llvm.nvvm.div.approx.f", 22);
    LLVMValueRef args[2] = {xf, yf};
    LLVMValueRef q = LLVMBuildCall2(b, LLVMIntrinsicGetType(cx, id, NULL, 0), LLVMGetIntrinsicDeclaration(c->mod, id, NULL, 0),
                                    args, 2, "");
    q = LLVMBuildSelect(b, big, LLVMBuildFMul(b, q, quarter, ""), q, "");
    return LLVMBuildFPTrunc(b, q, ty, "");
}

int fix_ir_nvptx(Ctx *c) {
    LLVMBuilderRef b = NULL;
    for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef in = LLVMGetFirstInstruction(bb), next; in; in = next) {
                next = LLVMGetNextInstruction(in);
                if (!b) b = LLVMCreateBuilderInContext(LLVMGetModuleContext(c->mod));
                LLVMValueRef h = native_half(c, b, in);
                if (!h) h = native_bf16(c, b, in);
                if (h) {
                    LLVMReplaceAllUsesWith(in, h);
                    LLVMInstructionEraseFromParent(in);
                    continue;
                }
                LLVMOpcode op = LLVMGetInstructionOpcode(in);
                if (op != LLVMSIToFP && op != LLVMUIToFP) continue;
                LLVMValueRef x = LLVMGetOperand(in, 0);
                LLVMTypeRef xt = LLVMTypeOf(x), ty = LLVMTypeOf(in);
                if (LLVMGetTypeKind(xt) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(xt) != 1) continue;
                LLVMPositionBuilderBefore(b, in);
                LLVMValueRef one = LLVMConstReal(ty, op == LLVMSIToFP ? -1.0 : 1.0);
                LLVMValueRef sel = LLVMBuildSelect(b, x, one, LLVMConstReal(ty, 0.0), "");
                LLVMReplaceAllUsesWith(in, sel);
                LLVMInstructionEraseFromParent(in);
            }
    if (b) LLVMDisposeBuilder(b);
    return 0;
}

/* ---- PTX text, before ptxas ---- */

/* p starts with the opcode `name` followed by white space */
static bool op_is(const char *p, const char *name) {
    size_t n = strlen(name);
    return !strncmp(p, name, n) && (p[n] == ' ' || p[n] == '\t');
}

/* d = a - x, written as a + ~x + 1 (see the header); d may be a or x */
static void sub64(StrBuf *b, const char *d, const char *a, const char *x) {
    sb_printf(b, "\tnot.b64 \t%%gjfix_t, %s;\n\tadd.s64 \t%s, %%gjfix_t, %s;\n\tadd.s64 \t%s, %s, 1;\n", x, d, a, d, d);
}

/* Whether every other mention of register `reg` in ptx is by a store (st.*): its value
 * feeds no arithmetic that ptxas could fuse it into. */
static bool only_stored(const char *ptx, const char *reg, const char *self) {
    size_t n = strlen(reg);
    for (const char *p = strstr(ptx, reg); p; p = strstr(p + n, reg)) {
        char after = p[n];
        if ((after >= '0' && after <= '9') || (after >= 'a' && after <= 'z') || after == '_') continue; /* %rs1 in %rs12 */
        const char *line = p;
        while (line > ptx && line[-1] != '\n') line--;
        if (line == self) continue;
        if (strncmp(skip_ws(line), "st.", 3)) return false;
    }
    return true;
}

/* 1 when the line was rewritten into b. */
static int rewrite(StrBuf *b, const char *ptx, const char *line, const char *end) {
    const char *p = skip_ws(line);
    char ops[3][64];
    if (op_is(p, "add.rn.f16") || op_is(p, "sub.rn.f16") || op_is(p, "mul.rn.f16") || op_is(p, "mul.rn.bf16")) {
        bool bf = p[7] == 'b';
        if (operands(p + 10 + bf, end, ops) != 3) return 0;
        if (p[0] == 'm' && !only_stored(ptx, ops[0], line)) return 0;
        sb_printf(b, "\t%.3s.%s \t%s, %s, %s;\n", p, bf ? "bf16" : "f16", ops[0], ops[1], ops[2]);
        return 1;
    }
    if (op_is(p, "abs.s64")) {
        if (operands(p + 7, end, ops) != 2) return 0;
        sb_printf(b, "\tshr.s64 \t%%gjfix_t, %s, 63;\n\txor.b64 \t%s, %s, %%gjfix_t;\n", ops[1], ops[0], ops[1]);
        sub64(b, ops[0], ops[0], "%gjfix_t");
        return 1;
    }
    if (op_is(p, "sub.s64") || op_is(p, "sub.u64")) {
        if (operands(p + 7, end, ops) != 3 || ops[2][0] != '%') return 0; /* b a register */
        sub64(b, ops[0], ops[1], ops[2]);
        return 1;
    }
    if (op_is(p, "neg.s64")) { /* -b as ~b + 1 */
        if (operands(p + 7, end, ops) != 2) return 0;
        sb_printf(b, "\tnot.b64 \t%s, %s;\n\tadd.s64 \t%s, %s, 1;\n", ops[0], ops[1], ops[0], ops[0]);
        return 1;
    }
    if ((!strncmp(p, "min.", 4) || !strncmp(p, "max.", 4)) && (p[4] == 's' || p[4] == 'u') && op_is(p + 5, "16")) {
        if (operands(p + 7, end, ops) != 3) return 0;
        sb_printf(b, "\tsetp.%s.%c16 \t%%gjfix_p, %s, %s;\n\tselp.b16 \t%s, %s, %s, %%gjfix_p;\n",
                  p[1] == 'i' ? "lt" : "gt", p[4], ops[1], ops[2], ops[0], ops[1], ops[2]);
        return 1;
    }
    return 0;
}

static bool needs_fix(const char *ptx) {
    static const char *bad[] = {"add.rn.f16", "sub.rn.f16", "mul.rn.f16", "mul.rn.bf16", "abs.s64", "min.s16", "min.u16", "max.s16", "max.u16", "sub.s64", "sub.u64", "neg.s64"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (strstr(ptx, bad[i])) return true;
    return false;
}

/* Net change in brace depth over a line, braces in a // comment not counted (vector
 * operands `{%r1, %r2}` open and close on one line; LLVM's scoped-register blocks
 * `{ .reg .b64 %tmp; ...` may close at the end of a later instruction line). */
static int brace_delta(const char *line, const char *end) {
    int d = 0;
    for (const char *p = line; p < end; p++) {
        if (p[0] == '/' && p + 1 < end && p[1] == '/') break;
        d += *p == '{';
        d -= *p == '}';
    }
    return d;
}

char *ptxfix_text(const char *ptx, int *changed) {
    *changed = 0;
    if (!ptx || !needs_fix(ptx)) return NULL;
    StrBuf b = {0};
    int depth = 0, section = 0; /* section: inside a DWARF `.section ... { }`, which is no function body */
    for (const char *line = ptx; *line;) {
        const char *nl = strchr(line, '\n');
        const char *end = nl ? nl : line + strlen(line);
        const char *next = nl ? nl + 1 : end;
        if (rewrite(&b, ptx, line, end)) {
            (*changed)++;
        } else {
            sb_printf(&b, "%.*s", (int)(next - line), line);
        }
        int d = brace_delta(line, end);
        const char *tok = line + strspn(line, " \t");
        if (depth == 0 && !strncmp(tok, ".section", 8)) section = 1;
        /* a function body opens: its scratch registers come first */
        if (depth == 0 && d > 0 && !section) sb_printf(&b, "\t.reg .pred \t%%gjfix_p;\n\t.reg .b64 \t%%gjfix_t;\n");
        depth += d;
        if (depth == 0 && memchr(line, '}', (size_t)(end - line))) section = 0;
        line = next;
    }
    return b.s;
}

int fix_ptx(Ctx *c) {
    int changed;
    char *fixed = ptxfix_text(c->out->ptx, &changed);
    if (!fixed) return 0;
    free(c->out->ptx);
    c->out->ptx = fixed;
    if (debug_enabled("ptx"))
        fprintf(stderr, "== PTX of %s after ptxas workarounds (%d instructions rewritten)\n%s", c->funcname, changed,
                c->out->ptx);
    return 0;
}
