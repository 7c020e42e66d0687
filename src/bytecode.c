/* bytecode.c: decode a code object's co_code (never the adaptive copy) into
 * version-independent instructions with their jump targets and source
 * locations. Opcode numbers and inline-cache counts are read once from the
 * running interpreter's `opcode` module, so 3.11, 3.12 and 3.13 share one
 * decoder; their differences in meaning are handled in cfg.c and build.c. */
#include <string.h>

#include "gj.h"

typedef struct OpInfo {
    OpKind kind;
    bool backward;   /* relative jump backwards */
    bool jumps;      /* has a relative jump target */
    int caches;      /* inline cache code units */
    const char *name;
} OpInfo;

/* Process-wide and immutable after bytecode_init() (called once, under the GIL). */
static OpInfo ops[256];
static bool ops_ready;

/* clang-format off */
static const struct { const char *name; OpKind kind; bool jumps, backward; } known[] = {
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

int bytecode_init(void) {
    if (ops_ready) return 0;
    PyObject *mod = PyImport_ImportModule("opcode");
    if (!mod) return -1;
    PyObject *opname = PyObject_GetAttrString(mod, "opname");
    PyObject *caches = PyObject_GetAttrString(mod, "_inline_cache_entries");
    Py_DECREF(mod);
    if (!opname || !caches) {
        Py_XDECREF(opname);
        Py_XDECREF(caches);
        return -1;
    }
    for (int i = 0; i < 256; i++) {
        ops[i].kind = OP_UNKNOWN;
        ops[i].name = "<unknown>";
        PyObject *nm = i < PyList_Size(opname) ? PyList_GetItem(opname, i) : NULL;
        const char *name = nm ? PyUnicode_AsUTF8(nm) : NULL;
        if (!name) continue;
        /* names outlive us: the opcode module keeps its list */
        ops[i].name = name;
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            if (strcmp(known[k].name, name) == 0) {
                ops[i].kind = known[k].kind;
                ops[i].jumps = known[k].jumps;
                ops[i].backward = known[k].backward;
            }
        PyObject *n = PyDict_Check(caches) ? PyDict_GetItemString(caches, name)
                : i < PyList_Size(caches)  ? PyList_GetItem(caches, i)
                                           : NULL;
        ops[i].caches = n ? (int)PyLong_AsLong(n) : 0;
    }
    Py_INCREF(opname); /* keep the names alive for the process */
    Py_DECREF(opname);
    Py_DECREF(caches);
    ops_ready = true;
    return 0;
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
    for (int off = 0; off < n;) {
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
