/* checks.c: the run-time checks lowering adds and how a thread reports
 * them: raise and assert (a site per raise, the first thread's record in the
 * error buffer, the thread stopping, device functions passing it up through
 * the kernel's `raised` flag), division by zero, array bounds and zero slice
 * steps. runtime/launch.c reads the error buffer's records (GJ_ERR_* in
 * gpujit.h). */
#include <string.h>

#include "gj.h"

int raise_site(Ctx *c, PyObject *cls, PyObject *args, bool builtin) {
    Ctx *root = ctx_root(c);
    if (!root->raises && !(root->raises = PyList_New(0))) return -1;
    /* the raising function's name: the host's message names it, as numba's does */
    PyObject *t = Py_BuildValue("(OOOs)", cls, args, builtin ? Py_True : Py_False, c->funcname ? c->funcname : "?");
    if (!t) return -1;
    int rc = PyList_Append(root->raises, t);
    Py_DECREF(t);
    return rc < 0 ? -1 : (int)PyList_GET_SIZE(root->raises) - 1;
}

/* Can calling f raise? A raise statement in it or in what it calls, however
 * deep (recursion included); with debug, any device function (its checks
 * raise). Such a function takes a pointer to its kernel's `raised` flag and
 * sets it before it returns early. Decided for every device function of the
 * kernel at once, when lowering asks first: typing has found them all. */
bool may_raise(Func *f) {
    if (f->may_raise) return f->may_raise == 2;
    Ctx *root = f->sub->root;
    for (int i = 0; i < root->funcs.n; i++) {
        Func *g = root->funcs.v[i];
        Ctx *s = g->sub;
        bool r = s->opt.debug;
        for (int b = 0; b < s->nblocks && !r; b++)
            for (int k = 0; k < s->blocks[b]->instrs.n && !r; k++)
                r = ((Instr *)s->blocks[b]->instrs.v[k])->op == IR_RAISE;
        g->may_raise = r ? 2 : 1;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < root->funcs.n; i++) {
            Func *g = root->funcs.v[i];
            Ctx *s = g->sub;
            for (int b = 0; b < s->nblocks && g->may_raise == 1; b++)
                for (int k = 0; k < s->blocks[b]->instrs.n; k++) {
                    Instr *in = s->blocks[b]->instrs.v[k];
                    if (in->op == IR_CALL && in->callee && in->callee->may_raise == 2) {
                        g->may_raise = 2;
                        changed = true;
                        break;
                    }
                }
        }
    }
    return f->may_raise == 2;
}

/* The kernel's flag, an i8 that device functions set when they raise: in
 * the kernel an alloca cleared at entry; in a device function its parameter. */
LLVMValueRef raised_flag(Ctx *c) {
    if (c->raised) return c->raised;
    LLVMBasicBlockRef cur = LLVMGetInsertBlock(c->b);
    LLVMMetadataRef loc = LLVMGetCurrentDebugLocation2(c->b); /* kept, as in entry_alloca */
    LLVMValueRef a = entry_alloca(c, c->i8, "raised");
    LLVMPositionBuilder(c->b, c->entry, LLVMGetNextInstruction(a));
    LLVMBuildStore(c->b, LLVMConstInt(c->i8, 0, 0), a);
    LLVMPositionBuilderAtEnd(c->b, cur);
    LLVMSetCurrentDebugLocation2(c->b, loc);
    return c->raised = a;
}

/* The thread stops: a kernel returns, a device function sets the flag and
 * returns to its caller, which then stops too. */
void stop_thread(Ctx *c) {
    LLVMTypeRef rt = LLVMGetReturnType(LLVMGlobalGetValueType(c->fn));
    if (c->self && c->raised) LLVMBuildStore(c->b, LLVMConstInt(c->i8, 1, 0), c->raised);
    if (LLVMGetTypeKind(rt) == LLVMVoidTypeKind)
        LLVMBuildRetVoid(c->b);
    else
        LLVMBuildRet(c->b, LLVMGetUndef(rt));
}

static int file_id(Ctx *c);

/* The first thread to raise records (line, site, thread, block, file) in
 * the error buffer; the builder ends after the record, on every path. */
static void record_raise(Ctx *c, int site) {
    LLVMBasicBlockRef first = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "raise.first");
    LLVMBasicBlockRef stop = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "raise.stop");
    LLVMValueRef x = LLVMBuildAtomicCmpXchg(c->b, c->errbuf, ci64(c, 0), ci64(c, GJ_ERR_RAISE),
                                            LLVMAtomicOrderingMonotonic, LLVMAtomicOrderingMonotonic, 0);
    LLVMBuildCondBr(c->b, LLVMBuildExtractValue(c->b, x, 1, ""), first, stop);
    LLVMPositionBuilderAtEnd(c->b, first);
    /* which thread: threadIdx in 10 + 10 + 6 bits, blockIdx in 31 + 16 + 16 */
    LLVMValueRef tid = ci64(c, 0), ctaid = ci64(c, 0);
    static const int tshift[3] = {0, 10, 20}, cshift[3] = {0, 31, 47};
    for (int d = 0; d < 3; d++) {
        LLVMValueRef t = LLVMBuildZExt(c->b, c->target->special(c, SP_TID, d), c->i64, "");
        LLVMValueRef b = LLVMBuildZExt(c->b, c->target->special(c, SP_CTAID, d), c->i64, "");
        tid = LLVMBuildOr(c->b, tid, LLVMBuildShl(c->b, t, ci64(c, tshift[d]), ""), "");
        ctaid = LLVMBuildOr(c->b, ctaid, LLVMBuildShl(c->b, b, ci64(c, cshift[d]), ""), "");
    }
    LLVMValueRef rec[5][2] = {{ci64(c, 1), ci64(c, c->cur_loc.line)},
                              {ci64(c, 2), ci64(c, site)},
                              {ci64(c, 3), tid},
                              {ci64(c, 4), ctaid},
                              {ci64(c, 5), ci64(c, file_id(c))}};
    for (int i = 0; i < 5; i++)
        LLVMBuildStore(c->b, rec[i][1], LLVMBuildInBoundsGEP2(c->b, c->i64, c->errbuf, &rec[i][0], 1, ""));
    LLVMBuildBr(c->b, stop);
    LLVMPositionBuilderAtEnd(c->b, stop);
}

/* raise at this point: with debug, the first thread to raise records it in
 * the error buffer; the thread stops. */
void raise_now(Ctx *c, int site) {
    if (c->opt.debug) record_raise(c, site);
    stop_thread(c);
}

/* A check's two ways: the raise site of cls(msg), and `ok` branching to *cont (made here) or
 * to a failure block, where the builder is left. The site, or -1. */
static int check_branch(Ctx *c, LLVMValueRef ok, PyObject *cls, const char *msg, LLVMBasicBlockRef *cont) {
    PyObject *args = Py_BuildValue("(s)", msg);
    if (!args) return -1;
    int site = raise_site(c, cls, args, true);
    Py_DECREF(args);
    if (site < 0) return -1;
    LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "check.fail");
    *cont = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "check.ok");
    LLVMBuildCondBr(c->b, ok, *cont, bad);
    LLVMPositionBuilderAtEnd(c->b, bad);
    return site;
}

/* debug: unless `ok`, raise cls(msg) (a check of the compiler's own). */
int check_or_raise(Ctx *c, LLVMValueRef ok, PyObject *cls, const char *msg) {
    LLVMBasicBlockRef cont;
    int site = check_branch(c, ok, cls, msg, &cont);
    if (site < 0) return -1;
    raise_now(c, site);
    LLVMPositionBuilderAtEnd(c->b, cont);
    return 0;
}

/* With checks on (an error buffer): unless `ok`, raise IndexError(msg), an
 * index the compiler checks outside arrays (a tuple's). With debug the thread
 * stops, as at a raise. Otherwise the first failure is recorded; a target that
 * can end the launch does (*good = NULL: the code after may assume ok), and a
 * GPU thread goes on, *good = ok for the caller to make the access harmless. */
int check_index_or_raise(Ctx *c, LLVMValueRef ok, const char *msg, LLVMValueRef *good) {
    *good = NULL;
    if (c->opt.debug) return check_or_raise(c, ok, PyExc_IndexError, msg);
    LLVMBasicBlockRef cont;
    int site = check_branch(c, ok, PyExc_IndexError, msg, &cont);
    if (site < 0) return -1;
    record_raise(c, site);
    if (c->target->trap) {
        c->target->trap(c);
        LLVMBuildUnreachable(c->b);
    } else {
        LLVMBuildBr(c->b, cont);
        *good = ok;
    }
    LLVMPositionBuilderAtEnd(c->b, cont);
    return 0;
}

/* debug: x / 0, x // 0 and x % 0 raise ZeroDivisionError with CPython's message. */
int check_divisor(Ctx *c, Instr *in, LLVMValueRef b, Type *t) {
    bool f = is_float(in->args[0]->type) || is_float(in->args[1]->type);
    LLVMValueRef ok = is_float(t) ? LLVMBuildFCmp(c->b, LLVMRealUNE, b, LLVMConstReal(llvm_type(c, t), 0.0), "")
                                  : LLVMBuildICmp(c->b, LLVMIntNE, b, LLVMConstInt(llvm_type(c, t), 0, 0), "");
    const char *msg = in->ival == BIN_DIV ? (f ? "float division by zero" : "division by zero")
            : !f                          ? "integer division or modulo by zero"
            : in->ival == BIN_MOD         ? "float modulo"
                                          : "float floor division by zero";
    return check_or_raise(c, ok, PyExc_ZeroDivisionError, msg);
}

/* debug: where a bad access goes instead (its value is junk; the launch
 * raises): the error buffer's spare words, or a shared scratch word for
 * shared arrays, which live in an address space of their own. */
LLVMValueRef scratch_ptr(Ctx *c, unsigned as) {
    unsigned gas = llvm_as(c, AS_GLOBAL);
    if (as != gas && as != 0) {
        LLVMValueRef g = LLVMGetNamedGlobal(c->mod, "__gpujit_scratch");
        if (!g) {
            LLVMTypeRef t = LLVMArrayType2(c->i64, 2);
            g = LLVMAddGlobalInAddressSpace(c->mod, t, "__gpujit_scratch", as);
            LLVMSetLinkage(g, LLVMInternalLinkage);
            LLVMSetInitializer(g, LLVMGetUndef(t));
            LLVMSetAlignment(g, 16);
        }
        return g;
    }
    LLVMValueRef six = ci64(c, 6); /* words 6 and 7: past the record */
    LLVMValueRef p = LLVMBuildInBoundsGEP2(c->b, c->i64, c->errbuf, &six, 1, "");
    return as == gas ? p : LLVMBuildAddrSpaceCast(c->b, p, LLVMPointerTypeInContext(c->llctx, as), "");
}

static int file_id(Ctx *c) {
    Ctx *root = ctx_root(c);
    for (int i = 0; i < root->files.n; i++)
        if (strcmp(root->files.v[i], c->filename) == 0) return i;
    vec_push(&root->arena, &root->files, arena_strdup(&root->arena, c->filename));
    return root->files.n - 1;
}

/* A conditional branch whose first way is almost always taken. On the CPU
 * target, IRCE (target_host.c) takes only a check that says so out of a loop
 * over threads. */
void branch_likely(Ctx *c, LLVMValueRef br) {
    LLVMMetadataRef w[3] = {LLVMMDStringInContext2(c->llctx, "branch_weights", 14),
                            LLVMValueAsMetadata(LLVMConstInt(c->i32, 1u << 20, 0)),
                            LLVMValueAsMetadata(LLVMConstInt(c->i32, 1, 0))};
    LLVMSetMetadata(br, LLVMGetMDKindIDInContext(c->llctx, "prof", 4),
                    LLVMMetadataAsValue(c->llctx, LLVMMDNodeInContext2(c->llctx, w, 3)));
}

/* debug: is every index in range? If not, the first thread to notice
 * records (line, axis, index, size, file) in the error buffer; then a target
 * that can stop the launch does (and NULL is returned: no access is left to
 * redirect), else the thread goes on. */
LLVMValueRef check_bounds(Ctx *c, LLVMValueRef arr, LLVMValueRef *ix, LLVMValueRef *given, int n) {
    LLVMValueRef ok = LLVMConstInt(c->i1, 1, 0), axis = ci64(c, 0), index = ci64(c, 0), size = ci64(c, 0);
    for (int k = n - 1; k >= 0; k--) {
        LLVMValueRef dim = LLVMBuildExtractValue(c->b, LLVMBuildExtractValue(c->b, arr, 1, ""), (unsigned)k, "");
        LLVMValueRef okk = LLVMBuildICmp(c->b, LLVMIntULT, ix[k], dim, "inbounds");
        axis = LLVMBuildSelect(c->b, okk, axis, ci64(c, k), "");
        index = LLVMBuildSelect(c->b, okk, index, given[k], "");
        size = LLVMBuildSelect(c->b, okk, size, dim, "");
        ok = LLVMBuildAnd(c->b, ok, okk, "");
    }
    LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "oob");
    LLVMBasicBlockRef first = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "oob.first");
    LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "inbounds");
    LLVMBasicBlockRef after = c->target->trap ? LLVMAppendBasicBlockInContext(c->llctx, c->fn, "oob.trap") : cont;
    LLVMValueRef br = LLVMBuildCondBr(c->b, ok, cont, bad);
    if (c->target->trap) branch_likely(c, br);
    LLVMPositionBuilderAtEnd(c->b, bad);
    LLVMValueRef x = LLVMBuildAtomicCmpXchg(c->b, c->errbuf, ci64(c, 0), ci64(c, GJ_ERR_INDEX),
                                            LLVMAtomicOrderingMonotonic, LLVMAtomicOrderingMonotonic, 0);
    LLVMBuildCondBr(c->b, LLVMBuildExtractValue(c->b, x, 1, ""), first, after);
    LLVMPositionBuilderAtEnd(c->b, first);
    LLVMValueRef rec[5] = {ci64(c, c->cur_loc.line), axis, index, size, ci64(c, file_id(c))};
    for (int i = 0; i < 5; i++) {
        LLVMValueRef at = ci64(c, 1 + i);
        LLVMBuildStore(c->b, rec[i], LLVMBuildInBoundsGEP2(c->b, c->i64, c->errbuf, &at, 1, ""));
    }
    LLVMBuildBr(c->b, after);
    if (c->target->trap) {
        LLVMPositionBuilderAtEnd(c->b, after);
        c->target->trap(c);
        LLVMBuildUnreachable(c->b);
    }
    LLVMPositionBuilderAtEnd(c->b, cont);
    return c->target->trap ? NULL : ok;
}

/* With checks on: where `bad`, the first thread to notice records `kind` with
 * the line, the file and three words of detail ([2], [3], [4]: gpujit.h
 * says what each kind keeps there); the thread goes on, and the launch
 * raises ValueError from the record, as NumPy does. Words may be NULL (0). */
void check_record(Ctx *c, LLVMValueRef bad, int kind, LLVMValueRef w2, LLVMValueRef w3, LLVMValueRef w4) {
    LLVMBasicBlockRef rec = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "check.rec");
    LLVMBasicBlockRef first = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "check.first");
    LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(c->llctx, c->fn, "check.ok");
    LLVMValueRef br = LLVMBuildCondBr(c->b, bad, rec, cont);
    LLVMMetadataRef w[3] = {LLVMMDStringInContext2(c->llctx, "branch_weights", 14),
                            LLVMValueAsMetadata(LLVMConstInt(c->i32, 1, 0)),
                            LLVMValueAsMetadata(LLVMConstInt(c->i32, 1u << 20, 0))};
    LLVMSetMetadata(br, LLVMGetMDKindIDInContext(c->llctx, "prof", 4),
                    LLVMMetadataAsValue(c->llctx, LLVMMDNodeInContext2(c->llctx, w, 3)));
    LLVMPositionBuilderAtEnd(c->b, rec);
    LLVMValueRef x = LLVMBuildAtomicCmpXchg(c->b, c->errbuf, ci64(c, 0), ci64(c, kind), LLVMAtomicOrderingMonotonic,
                                            LLVMAtomicOrderingMonotonic, 0);
    LLVMBuildCondBr(c->b, LLVMBuildExtractValue(c->b, x, 1, ""), first, cont);
    LLVMPositionBuilderAtEnd(c->b, first);
    LLVMValueRef words[5][2] = {{ci64(c, 1), ci64(c, c->cur_loc.line)},
                                {ci64(c, 2), w2 ? w2 : ci64(c, 0)},
                                {ci64(c, 3), w3 ? w3 : ci64(c, 0)},
                                {ci64(c, 4), w4 ? w4 : ci64(c, 0)},
                                {ci64(c, 5), ci64(c, file_id(c))}};
    for (int i = 0; i < 5; i++)
        LLVMBuildStore(c->b, words[i][1], LLVMBuildInBoundsGEP2(c->b, c->i64, c->errbuf, &words[i][0], 1, ""));
    LLVMBuildBr(c->b, cont);
    LLVMPositionBuilderAtEnd(c->b, cont);
}

/* A zero slice step (what GJ_STEP0_SLICE) or range() step (GJ_STEP0_RANGE). */
void check_step(Ctx *c, LLVMValueRef bad, int what) { check_record(c, bad, GJ_ERR_STEP0, ci64(c, what), NULL, NULL); }

/* Shapes that do not broadcast: axis `axis` of `ndim` has length src where
 * dst (or 1) is needed; `what` says where (GJ_SHAPE_ASSIGN: a[...] = b,
 * GJ_SHAPE_UFUNC: an operand of an in-kernel ufunc against its output). */
void check_shape(Ctx *c, LLVMValueRef bad, int what, int axis, int ndim, LLVMValueRef dst, LLVMValueRef src) {
    check_record(c, bad, GJ_ERR_SHAPE, ci64(c, what | (int64_t)axis << 8 | (int64_t)ndim << 16), dst, src);
}

void race_check(Ctx *c, Instr *arr, LLVMValueRef p, Type *et, int flags) {
    if (!c->opt.racecheck || !c->target->race_access) return;
    Type *at = arr->type;
    if (at->kind == TY_ARRAY && (at->space == AS_LOCAL || at->space == AS_CONST)) return;
    if (et->kind == TY_RECORD && !(flags & GJ_RACE_WRITE)) return; /* a[i] of records is an address: nothing read */
    int64_t size = type_size(et);
    if (size <= 0) return;
    const char *name = arr->op == IR_LOAD_VAR ? ctx_var(c, arr->var)->name : NULL;
    if (name && name[0] == '$') name = NULL;
    const char *what = at->kind == TY_ARRAY && at->space == AS_SHARED ? "shared array" : "array";
    Ctx *root = ctx_root(c);
    int site = root->races.n;
    vec_push(&root->arena, &root->races,
             name ? arena_printf(&root->arena, "%s:%d\t%s '%s'", c->filename, c->cur_loc.line, what, name)
                  : arena_printf(&root->arena, "%s:%d\t%s", c->filename, c->cur_loc.line,
                                 at->kind == TY_ARRAY && at->space == AS_SHARED ? "shared memory" : "memory"));
    c->target->race_access(c, p, (uint64_t)size, site << GJ_RACE_SITE_SHIFT | flags);
}
