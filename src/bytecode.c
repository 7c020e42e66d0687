/* bytecode.c: decode a code object's co_code (never the adaptive copy) into
 * version-independent instructions with their jump targets and source
 * locations, and check every operand that names a constant, a local, a name or
 * a jump target against the code object, so that a damaged code object is an
 * InternalCompilerError. Opcode numbers, cache counts and the forms that
 * changed between versions are the running version's table (pyversions.c);
 * what an instruction means is the same name in every version. */
#include <string.h>

#include "gj.h"

/* What an instruction's operand indexes, checked by decode_bytecode. */
typedef enum {
    ARG_NONE,
    ARG_CONST,      /* co_consts[arg] */
    ARG_LOCAL,      /* a local, cell or free variable: arg < co_nlocalsplus */
    ARG_LOCAL_PAIR, /* two locals, arg >> 4 and arg & 15 */
    ARG_NAME,       /* co_names[arg] */
    ARG_NAME_FLAG,  /* co_names[arg >> 1], the low bit a flag (LOAD_GLOBAL) */
    ARG_ATTR,       /* LOAD_ATTR: ARG_NAME_FLAG where the version has the method bit, else ARG_NAME */
    ARG_COMMON,     /* the version's LOAD_COMMON_CONSTANT list */
} ArgKind;

typedef struct OpInfo {
    OpKind kind;
    bool backward; /* relative jump backwards */
    bool jumps;    /* has a relative jump target */
    ArgKind argk;
    int caches;    /* inline cache code units */
    const char *name;
} OpInfo;

/* Process-wide and immutable after bytecode_init() (called once, under the GIL). */
static OpInfo ops[256];
static bool ops_ready;
static PyObject *common; /* the version's LOAD_COMMON_CONSTANT values, a tuple */

/* clang-format off */
static const struct { const char *name; OpKind kind; bool jumps, backward; } known[] = {
    {"LOAD_SMALL_INT", OP_LOAD_SMALL_INT}, {"LOAD_FAST_BORROW", OP_LOAD_FAST},
    {"LOAD_FAST_BORROW_LOAD_FAST_BORROW", OP_LOAD_FAST_LOAD_FAST}, {"POP_ITER", OP_POP_ITER},
    {"NOT_TAKEN", OP_NOP}, {"LOAD_COMMON_CONSTANT", OP_LOAD_COMMON_CONSTANT},
    {"NOP", OP_NOP}, {"POP_TOP", OP_POP_TOP}, {"PUSH_NULL", OP_PUSH_NULL},
    {"LOAD_CONST", OP_LOAD_CONST}, {"LOAD_FAST", OP_LOAD_FAST},
    {"LOAD_FAST_CHECK", OP_LOAD_FAST}, {"STORE_FAST", OP_STORE_FAST},
    {"LOAD_FAST_LOAD_FAST", OP_LOAD_FAST_LOAD_FAST},
    {"STORE_FAST_STORE_FAST", OP_STORE_FAST_STORE_FAST},
    {"STORE_FAST_LOAD_FAST", OP_STORE_FAST_LOAD_FAST},
    {"LOAD_FAST_AND_CLEAR", OP_LOAD_FAST_AND_CLEAR},
    {"LOAD_GLOBAL", OP_LOAD_GLOBAL}, {"LOAD_DEREF", OP_LOAD_DEREF},
    {"LOAD_ATTR", OP_LOAD_ATTR}, {"LOAD_METHOD", OP_LOAD_METHOD},
    {"PRECALL", OP_PRECALL}, {"CALL", OP_CALL}, {"CALL_KW", OP_CALL_KW},

    {"KW_NAMES", OP_KW_NAMES}, {"BINARY_OP", OP_BINARY_OP}, {"COMPARE_OP", OP_COMPARE_OP},
    {"IS_OP", OP_IS_OP}, {"CONTAINS_OP", OP_CONTAINS_OP}, {"BINARY_SUBSCR", OP_BINARY_SUBSCR},
    {"STORE_SUBSCR", OP_STORE_SUBSCR}, {"BUILD_TUPLE", OP_BUILD_TUPLE},
    {"UNPACK_SEQUENCE", OP_UNPACK_SEQUENCE}, {"GET_ITER", OP_GET_ITER},
    {"FOR_ITER", OP_FOR_ITER, true}, {"END_FOR", OP_END_FOR},
    {"JUMP_FORWARD", OP_JUMP_FORWARD, true},
    {"JUMP_BACKWARD", OP_JUMP_BACKWARD, true, true},
    {"JUMP_BACKWARD_NO_INTERRUPT", OP_JUMP_BACKWARD, true, true},
    {"POP_JUMP_IF_FALSE", OP_POP_JUMP_IF_FALSE, true},
    {"POP_JUMP_IF_TRUE", OP_POP_JUMP_IF_TRUE, true},
    {"POP_JUMP_IF_NONE", OP_POP_JUMP_IF_NONE, true},
    {"POP_JUMP_IF_NOT_NONE", OP_POP_JUMP_IF_NOT_NONE, true},
    {"POP_JUMP_FORWARD_IF_FALSE", OP_POP_JUMP_IF_FALSE, true},
    {"POP_JUMP_FORWARD_IF_TRUE", OP_POP_JUMP_IF_TRUE, true},
    {"POP_JUMP_FORWARD_IF_NONE", OP_POP_JUMP_IF_NONE, true},
    {"POP_JUMP_FORWARD_IF_NOT_NONE", OP_POP_JUMP_IF_NOT_NONE, true},
    {"POP_JUMP_BACKWARD_IF_FALSE", OP_POP_JUMP_IF_FALSE, true, true},
    {"POP_JUMP_BACKWARD_IF_TRUE", OP_POP_JUMP_IF_TRUE, true, true},
    {"POP_JUMP_BACKWARD_IF_NONE", OP_POP_JUMP_IF_NONE, true, true},
    {"POP_JUMP_BACKWARD_IF_NOT_NONE", OP_POP_JUMP_IF_NOT_NONE, true, true},
    {"JUMP_IF_FALSE_OR_POP", OP_JUMP_IF_FALSE_OR_POP, true},
    {"JUMP_IF_TRUE_OR_POP", OP_JUMP_IF_TRUE_OR_POP, true},
    {"RETURN_VALUE", OP_RETURN_VALUE}, {"RETURN_CONST", OP_RETURN_CONST},
    {"TO_BOOL", OP_TO_BOOL}, {"COPY", OP_COPY}, {"SWAP", OP_SWAP},
    {"UNARY_NEGATIVE", OP_UNARY_NEGATIVE}, {"UNARY_NOT", OP_UNARY_NOT},
    {"UNARY_INVERT", OP_UNARY_INVERT}, {"CALL_INTRINSIC_1", OP_CALL_INTRINSIC_1},
    {"UNARY_POSITIVE", OP_UNARY_POSITIVE}, /* 3.11; 3.12+ spell +x as CALL_INTRINSIC_1 5 */
    {"RESUME", OP_RESUME}, {"COPY_FREE_VARS", OP_COPY_FREE_VARS}, {"MAKE_CELL", OP_MAKE_CELL},
    {"CACHE", OP_CACHE}, {"EXTENDED_ARG", OP_EXTENDED_ARG},
    {"STORE_GLOBAL", OP_STORE_GLOBAL}, {"STORE_ATTR", OP_STORE_ATTR},
    {"DELETE_FAST", OP_DELETE_FAST},
    {"BUILD_LIST", OP_BUILD_LIST}, {"LIST_APPEND", OP_LIST_APPEND}, {"LIST_EXTEND", OP_LIST_EXTEND},
    {"LIST_TO_TUPLE", OP_LIST_TO_TUPLE}, {"CALL_FUNCTION_EX", OP_CALL_FUNCTION_EX},
    {"RAISE_VARARGS", OP_RAISE_VARARGS}, {"LOAD_ASSERTION_ERROR", OP_LOAD_ASSERTION_ERROR},
    {"BUILD_SLICE", OP_BUILD_SLICE}, {"BINARY_SLICE", OP_BINARY_SLICE}, {"STORE_SLICE", OP_STORE_SLICE},
    {"STORE_DEREF", OP_STORE_DEREF}, {"LOAD_CLOSURE", OP_LOAD_CLOSURE}, {"MAKE_FUNCTION", OP_MAKE_FUNCTION},
    {"SET_FUNCTION_ATTRIBUTE", OP_SET_FUNCTION_ATTRIBUTE},
};
/* clang-format on */

static ArgKind arg_kind(OpKind k) {
    switch (k) {
    case OP_LOAD_CONST:
    case OP_RETURN_CONST:
    case OP_KW_NAMES: return ARG_CONST;
    case OP_LOAD_FAST:
    case OP_STORE_FAST:
    case OP_LOAD_FAST_AND_CLEAR:
    case OP_DELETE_FAST:
    case OP_LOAD_DEREF:
    case OP_STORE_DEREF:
    case OP_LOAD_CLOSURE:
    case OP_MAKE_CELL: return ARG_LOCAL;
    case OP_LOAD_FAST_LOAD_FAST:
    case OP_STORE_FAST_STORE_FAST:
    case OP_STORE_FAST_LOAD_FAST: return ARG_LOCAL_PAIR;
    case OP_STORE_ATTR:
    case OP_STORE_GLOBAL:
    case OP_LOAD_METHOD: return ARG_NAME;
    case OP_LOAD_GLOBAL: return ARG_NAME_FLAG;
    case OP_LOAD_ATTR: return ARG_ATTR;
    case OP_LOAD_COMMON_CONSTANT: return ARG_COMMON;
    default: return ARG_NONE;
    }
}

/* The version's LOAD_COMMON_CONSTANT values: each spelling evaluated among the builtins. */
static PyObject *common_values(void) {
    int n = 0;
    while (pyv->common_constants && pyv->common_constants[n]) n++;
    PyObject *t = PyTuple_New(n), *env = t ? PyDict_New() : NULL;
    if (!env || PyDict_SetItemString(env, "__builtins__", PyEval_GetBuiltins()) < 0) goto fail;
    for (int i = 0; i < n; i++) {
        PyObject *v = PyRun_String(pyv->common_constants[i], Py_eval_input, env, env);
        if (!v) goto fail;
        PyTuple_SET_ITEM(t, i, v);
    }
    Py_DECREF(env);
    return t;
fail:
    Py_XDECREF(env);
    Py_XDECREF(t);
    return NULL;
}

int bytecode_init(void) {
    if (ops_ready) return 0;
    if (!(pyv = pyversion())) return -1;
    if (!(common = common_values())) return -1;
    for (int i = 0; i < 256; i++) ops[i] = (OpInfo){.kind = OP_UNKNOWN, .name = "<unknown>"};
    for (int d = 0; d < pyv->nops; d++) {
        const OpDef *od = &pyv->ops[d];
        OpInfo *oi = &ops[od->number];
        oi->name = od->name;
        oi->caches = od->caches;
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            if (strcmp(known[k].name, od->name) == 0) {
                oi->kind = known[k].kind;
                oi->jumps = known[k].jumps;
                oi->backward = known[k].backward;
            }
        oi->argk = arg_kind(oi->kind);
        if (oi->argk == ARG_ATTR) oi->argk = pyv->attr_method_bit ? ARG_NAME_FLAG : ARG_NAME;
    }
    ops_ready = true;
    return 0;
}

PyObject *common_constant(int i) { return PyTuple_GET_ITEM(common, i); }

/* The operand of `in` indexes what it names (decode_bytecode's check). */
static int check_operand(Ctx *c, const Insn *in, ArgKind k) {
    PyCodeObject *co = (PyCodeObject *)c->code;
    int arg = in->arg, lim = 0;
    const char *what = "";
    switch (k) {
    case ARG_NONE: return 0;
    case ARG_CONST: lim = (int)PyTuple_GET_SIZE(co->co_consts), what = "co_consts"; break;
    case ARG_LOCAL: lim = co->co_nlocalsplus, what = "the locals"; break;
    case ARG_LOCAL_PAIR:
        lim = co->co_nlocalsplus, what = "the locals";
        if ((arg >> 4) >= lim || (arg & 15) >= lim || arg > 255) break;
        return 0;
    case ARG_NAME: lim = (int)PyTuple_GET_SIZE(co->co_names), what = "co_names"; break;
    case ARG_NAME_FLAG:
        lim = (int)PyTuple_GET_SIZE(co->co_names), what = "co_names";
        if ((arg >> 1) >= lim) break;
        return 0;
    case ARG_ATTR: return 0; /* resolved to a name kind by bytecode_init */
    case ARG_COMMON: lim = (int)PyTuple_GET_SIZE(common), what = "the common constants"; break;
    }
    if (k != ARG_LOCAL_PAIR && k != ARG_NAME_FLAG && arg < lim) return 0;
    return internal_error(c, in->loc, "malformed code object: %s at byte %d has operand %d, outside %s (%d entries)",
                          op_name(in->raw), in->off, arg, what, lim);
}

const char *op_name(int raw) { return raw >= 0 && raw < 256 ? ops[raw].name : "?"; }

int decode_bytecode(Ctx *c) {
    PyObject *bytes = PyCode_GetCode((PyCodeObject *)c->code);
    if (!bytes) return -1;
    const unsigned char *code = (const unsigned char *)PyBytes_AS_STRING(bytes);
    int n = (int)PyBytes_GET_SIZE(bytes);
    c->nbytes = n;
    c->insns = arena_alloc(&c->arena, sizeof(Insn) * (size_t)(n / 2 + 1));
    c->insn_at = arena_alloc(&c->arena, sizeof(int) * (size_t)(n / 2 + 2));
    if (!c->insns || !c->insn_at) {
        Py_DECREF(bytes);
        return -1;
    }
    for (int i = 0; i <= n / 2; i++) c->insn_at[i] = -1;
    /* every code unit's position, read in one pass: PyCode_Addr2Location scans the
     * location table from its start at each call, quadratic in a long function */
    Loc *pos = arena_alloc(&c->arena, sizeof(Loc) * (size_t)(n / 2 + 1));
    PyObject *it = pos ? PyObject_CallMethod(c->code, "co_positions", NULL) : NULL;
    if (!it) {
        Py_DECREF(bytes);
        return -1;
    }
    PyObject *p;
    for (int u = 0; u < n / 2 && (p = PyIter_Next(it)); u++) {
        PyObject *sl = PyTuple_Check(p) && PyTuple_GET_SIZE(p) == 4 ? PyTuple_GET_ITEM(p, 0) : Py_None;
        PyObject *sc = PyTuple_Check(p) && PyTuple_GET_SIZE(p) == 4 ? PyTuple_GET_ITEM(p, 2) : Py_None;
        int line = sl != Py_None ? (int)PyLong_AsLong(sl) : 0, col = sc != Py_None ? (int)PyLong_AsLong(sc) : 0;
        pos[u] = (Loc){line > 0 ? line : 0, col > 0 ? col : 0};
        Py_DECREF(p);
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) {
        Py_DECREF(bytes);
        return -1;
    }
    int count = 0, ext = 0, ext_start = -1;
    for (int off = 0; off + 1 < n;) {
        if (ext > 0xffffff) {
            Py_DECREF(bytes);
            return internal_error(c, pos[off / 2], "malformed code object: EXTENDED_ARG overflows at byte %d", off);
        }
        int raw = code[off], arg = code[off + 1] | (ext << 8);
        const OpInfo *oi = &ops[raw];
        int next = off + 2 + 2 * oi->caches;
        if (oi->kind == OP_EXTENDED_ARG) {
            if (ext_start < 0) ext_start = off;
            ext = arg;
            off = next;
            continue;
        }
        Insn *in = &c->insns[count];
        in->op = oi->kind;
        in->raw = raw;
        in->arg = arg;
        in->off = off;
        in->next = next;
        in->jump = -1;
        if (oi->jumps) in->jump = oi->backward ? next - 2 * arg : next + 2 * arg;
        in->loc = pos[off / 2];
        /* no line of its own: the previous instruction's, or for a closure's leading
         * COPY_FREE_VARS the function's first line (where RESUME, next, has it) */
        if (in->loc.line == 0) in->loc = count > 0 ? c->insns[count - 1].loc : (Loc){c->firstlineno, 0};
        if (check_operand(c, in, oi->argk) < 0) {
            Py_DECREF(bytes);
            return -1;
        }
        /* a jump to an EXTENDED_ARG prefix lands on its instruction */
        c->insn_at[(ext_start >= 0 ? ext_start : off) / 2] = count;
        c->insn_at[off / 2] = count;
        ext = 0;
        ext_start = -1;
        count++;
        off = next;
    }
    c->insn_at[n / 2] = -1;
    c->ninsns = count;
    Py_DECREF(bytes);
    for (int i = 0; i < count; i++) {
        const Insn *in = &c->insns[i];
        int t = in->jump;
        if (in->jump != -1 && (t < 0 || t >= n || (t & 1) || c->insn_at[t / 2] < 0))
            return internal_error(c, in->loc, "malformed code object: %s at byte %d jumps to byte %d, not an instruction",
                                  op_name(in->raw), in->off, t);
    }
    if (debug_enabled("bytecode")) {
        fprintf(stderr, "== bytecode of %s\n", c->funcname);
        for (int i = 0; i < count; i++) {
            Insn *in = &c->insns[i];
            fprintf(stderr, "%5d  line %-4d %-28s %d", in->off, in->loc.line, op_name(in->raw), in->arg);
            if (in->jump >= 0) fprintf(stderr, "  -> %d", in->jump);
            fprintf(stderr, "\n");
        }
    }
    return 0;
}
