/* build.c: simulate CPython's operand stack over each basic block and emit
 * the IR: values become instructions, locals become variables, and stack
 * entries that live across a block boundary become per-block slot variables
 * (stored by each predecessor, loaded on entry). Compile-time objects
 * (modules, gpujit intrinsics, builtins) become IR_OBJ values known by a
 * dotted path; globals and closure cells holding numbers become constants
 * (pyvalue.c). Calls of operator.add and its kin become the operators; a for
 * loop over an array, tuple, enumerate() or zip() becomes a count over
 * range(len(...)) whose body starts by reading item k (desugar.c).
 * Requires: decode_bytecode, build_cfg. Stack effects are stated per opcode. */
#include <string.h>

#include "gj.h"

/* The NULL that CPython pushes below a callable. */
static Instr null_marker = {.id = -1}; /* no id: the verifier rejects it as an operand */
#define NULLV (&null_marker)

Var *ctx_var(Ctx *c, int i) { return c->vars.v[i]; }

Instr *build_emit(Builder *bd, IrOp op, int nargs) {
    Ctx *c = bd->c;
    Instr *in = arena_alloc(&c->arena, sizeof *in);
    if (!in) return NULL;
    in->op = op;
    in->loc = bd->loc;
    in->id = c->nvalues++;
    in->nargs = nargs;
    if (nargs) {
        in->args = arena_alloc(&c->arena, sizeof(Instr *) * (size_t)nargs);
        if (!in->args) return NULL;
    }
    vec_push(&c->arena, &bd->blk->instrs, in);
    return in;
}

/* Constants are not placed in a block: lower.c materialises them on use. */
Instr *new_const(Builder *bd) {
    Ctx *c = bd->c;
    Instr *in = arena_alloc(&c->arena, sizeof *in);
    if (!in) return NULL;
    in->op = IR_CONST;
    in->loc = bd->loc;
    in->id = c->nvalues++;
    return in;
}

/* A value only the builder sees (a code object, a captured cell, a closure tuple): consumed
 * by MAKE_FUNCTION, never typed or lowered. */
static Instr *new_detached(Builder *bd, IrOp op, int nargs) {
    Instr *in = new_const(bd);
    if (!in) return NULL;
    in->op = op;
    in->nargs = nargs;
    if (nargs && !(in->args = arena_alloc(&bd->c->arena, sizeof(Instr *) * (size_t)nargs))) return NULL;
    return in;
}

static bool is_cell(const Instr *v) { return v && v->op == IR_OBJ && v->pyobj && PyCell_Check(v->pyobj); }

bool ir_is_const(const Instr *v) { return v && v->op == IR_CONST; }

/* co_stacksize bounds CPython's stack, but a call through CALL_FUNCTION_EX
 * puts its arguments back on ours one by one: the stack grows. */
static int push(Builder *bd, Instr *v) {
    if (!v) return -1;
    if (bd->sp == bd->cap) {
        int cap = bd->cap * 2 + 8;
        Instr **st = arena_alloc(&bd->c->arena, sizeof(Instr *) * (size_t)cap);
        if (!st) return -1;
        memcpy(st, bd->stack, sizeof(Instr *) * (size_t)bd->sp);
        bd->stack = st;
        bd->cap = cap;
    }
    bd->stack[bd->sp++] = v;
    return 0;
}

/* A tuple of `n` values: a constant when they all are. */
static Instr *make_tuple(Builder *bd, Instr **items, int n) {
    bool all_const = true;
    for (int k = 0; k < n; k++) all_const = all_const && items[k]->op == IR_CONST;
    Instr *t = all_const ? new_const(bd) : build_emit(bd, IR_TUPLE, n);
    if (!t) return NULL;
    if (all_const) {
        t->ckind = CK_TUPLE;
        t->nargs = n;
        t->args = arena_alloc(&bd->c->arena, sizeof(Instr *) * (size_t)(n ? n : 1));
        if (!t->args) return NULL;
    }
    for (int k = 0; k < n; k++) t->args[k] = items[k];
    return t;
}

/* CPython builds the arguments of a call with more than 30 of them, and a
 * tuple of more than 30 items, in a list: BUILD_LIST, LIST_APPEND or
 * LIST_EXTEND, then LIST_TO_TUPLE and CALL_FUNCTION_EX. Such a list lives
 * only on the builder's stack (tagged, never an IR value); LIST_TO_TUPLE
 * makes it an argument tuple, which CALL_FUNCTION_EX spreads into a plain
 * call and any other use makes a tuple value. Any other use of a list is
 * refused: kernels have no lists. */
static const char list_tag[] = "list", argtuple_tag[] = "argument tuple";
static bool is_list(const Instr *v) { return v && v->op == IR_TUPLE && v->name == list_tag; }
static bool is_argtuple(const Instr *v) { return v && v->op == IR_TUPLE && v->name == argtuple_tag; }

/* A stack entry as an IR value; NULL (an error set) for a list. */
static Instr *value_of(Builder *bd, Instr *v) {
    if (is_list(v)) {
        error_at(bd->c, ERR_UNSUPPORTED, bd->loc, "lists are not supported in kernels");
        return NULL;
    }
    return is_argtuple(v) ? make_tuple(bd, v->args, v->nargs) : v;
}

static Instr *new_list(Builder *bd) {
    Instr *l = new_const(bd);
    if (!l) return NULL;
    l->op = IR_TUPLE;
    l->name = list_tag;
    return l;
}

static int list_add(Builder *bd, Instr *l, Instr *v) {
    if (!(v = value_of(bd, v))) return -1;
    if (l->nargs == LIMIT_TUPLE)
        return error_limit(bd->c, bd->loc, "items in a tuple or arguments in a call", LIMIT_TUPLE);
    if (l->nargs == l->ival) { /* ival: the capacity */
        int cap = (int)l->ival * 2 + 32;
        Instr **a = arena_alloc(&bd->c->arena, sizeof(Instr *) * (size_t)cap);
        if (!a) return -1;
        if (l->nargs) memcpy(a, l->args, sizeof(Instr *) * (size_t)l->nargs);
        l->args = a;
        l->ival = cap;
    }
    l->args[l->nargs++] = v;
    return 0;
}

static Instr *pop_any(Builder *bd) {
    if (bd->sp == 0) {
        internal_error(bd->c, bd->loc, "build: operand stack underflow");
        return NULL;
    }
    return bd->stack[--bd->sp];
}

static Instr *pop(Builder *bd) {
    Instr *v = pop_any(bd);
    return v ? value_of(bd, v) : NULL;
}

/* (list -- argument tuple) */
static int list_to_tuple(Builder *bd) {
    Instr *l = pop_any(bd);
    if (!l) return -1;
    if (!is_list(l)) return internal_error(bd->c, bd->loc, "build: LIST_TO_TUPLE without a list");
    l->name = argtuple_tag;
    bd->stack[bd->sp++] = l;
    return 0;
}

#define POP(v) \
    Instr *v = pop(bd); \
    if (!v) return -1

static int add_var(Ctx *c, const char *name, Loc loc) {
    Var *v = arena_alloc(&c->arena, sizeof *v);
    if (!v) return -1;
    v->name = name;
    v->type = &ty_unknown;
    v->loc = loc;
    vec_push(&c->arena, &c->vars, v);
    return c->vars.n - 1;
}

static const char *name_at(PyObject *tuple, int i) {
    if (!tuple || i < 0 || i >= PyTuple_GET_SIZE(tuple)) return "?";
    const char *s = PyUnicode_AsUTF8(PyTuple_GET_ITEM(tuple, i));
    return s ? s : "?";
}

/* ---- control flow ---- */

/* Pass the entries [0, depth) of the stack to block `s`. */
static int pass_stack(Builder *bd, Block *s, int depth) {
    Ctx *c = bd->c;
    if (s->depth < 0) {
        s->depth = depth;
        s->slot_vars = arena_alloc(&c->arena, sizeof(int) * (size_t)(depth ? depth : 1));
        if (!s->slot_vars) return -1;
        for (int i = 0; i < depth; i++) {
            /* CPython's NULL below a callable has no value to keep: mark the slot */
            if (bd->stack[i] == NULLV) {
                s->slot_vars[i] = -1;
                continue;
            }
            s->slot_vars[i] = add_var(c, arena_printf(&c->arena, "$stack%d.%d", s->id, i), bd->loc);
            if (s->slot_vars[i] < 0) return -1;
        }
        vec_push(&c->arena, &bd->work, s);
    } else if (s->depth != depth) {
        return internal_error(c, bd->loc, "build: stack depth %d and %d meet at block %d", s->depth, depth, s->id);
    }
    for (int i = 0; i < depth; i++) {
        if (is_list(bd->stack[i]))
            return error_at(c, ERR_UNSUPPORTED, bd->loc,
                            "a conditional expression (or and/or) among the items "
                            "of a call or tuple with more than 30 of them: CPython builds those in a list, "
                            "which kernels do not have; compute it into a variable first");
        if (is_argtuple(bd->stack[i]) && !(bd->stack[i] = value_of(bd, bd->stack[i]))) return -1;
        if ((bd->stack[i] == NULLV) != (s->slot_vars[i] < 0))
            return internal_error(c, bd->loc, "build: a NULL and a value meet in stack slot %d of block %d", i, s->id);
        if (bd->stack[i] == NULLV) continue;
        Instr *st = build_emit(bd, IR_STORE_VAR, 1);
        if (!st) return -1;
        st->var = s->slot_vars[i];
        st->args[0] = bd->stack[i];
    }
    return 0;
}

static Block *block_or_die(Builder *bd, int off) {
    Block *b = block_at(bd->c, off);
    if (!b) internal_error(bd->c, bd->loc, "build: no block at offset %d", off);
    return b;
}

static int branch(Builder *bd, Instr *cond, int t_off, int t_depth, int f_off, int f_depth) {
    Block *t = block_or_die(bd, t_off), *f = block_or_die(bd, f_off);
    if (!t || !f) return -1;
    RETURN_IF_ERROR(pass_stack(bd, t, t_depth));
    RETURN_IF_ERROR(pass_stack(bd, f, f_depth));
    Instr *br = build_emit(bd, IR_CONDBR, 1);
    if (!br) return -1;
    br->args[0] = cond;
    br->target = t;
    br->target2 = f;
    return 0;
}

static int jump(Builder *bd, int off) {
    Block *t = block_or_die(bd, off);
    if (!t) return -1;
    RETURN_IF_ERROR(pass_stack(bd, t, bd->sp));
    Instr *br = build_emit(bd, IR_BR, 0);
    if (!br) return -1;
    br->target = t;
    return 0;
}

static Instr *truth(Builder *bd, Instr *v) {
    if (!(v = value_of(bd, v))) return NULL;
    Instr *t = build_emit(bd, IR_TRUTH, 1);
    if (t) t->args[0] = v;
    return t;
}

static int ret(Builder *bd, Instr *v) {
    Ctx *c = bd->c;
    if (!c->opt.device) {
        if (!(v->op == IR_CONST && v->ckind == CK_NONE))
            return error_at(c, ERR_TYPING, bd->loc, "a kernel cannot return a value (a kernel must have void return type)");
        return build_emit(bd, IR_RET, 0) ? 0 : -1;
    }
    Instr *r = build_emit(bd, IR_RET_VALUE, 1);
    if (!r) return -1;
    r->args[0] = v;
    return 0;
}

static bool is_exception_class(PyObject *o) {
    return o && PyType_Check(o) && PyType_IsSubtype((PyTypeObject *)o, (PyTypeObject *)PyExc_BaseException);
}

/* raise E / raise E(constants...): the exception is known at compile time, so
 * the kernel only carries the number of its raise site (the launch makes the
 * exception from it). The call that made the exception value computes nothing
 * at run time: it becomes a None constant. */
static int raise_stmt(Builder *bd, Instr *v) {
    Ctx *c = bd->c;
    PyObject *cls = NULL, *args = NULL;
    if (v->op == IR_OBJ && is_exception_class(v->pyobj)) {
        cls = v->pyobj;
        args = PyTuple_New(0);
    } else if (v->op == IR_CALL && v->args[0]->op == IR_OBJ && is_exception_class(v->args[0]->pyobj)) {
        cls = v->args[0]->pyobj;
        if (v->nkw)
            return error_at(c, ERR_UNSUPPORTED, bd->loc, "keyword arguments to an exception raised in a kernel");
        for (int i = 1; i < v->nargs; i++)
            if (v->args[i]->op != IR_CONST)
                return error_at(c, ERR_UNSUPPORTED, v->args[i]->loc,
                                "an exception raised in a kernel takes constant arguments only");
        args = PyTuple_New(v->nargs - 1);
        for (int i = 1; args && i < v->nargs; i++) {
            PyObject *x = py_from_const(v->args[i]);
            if (!x) return Py_DECREF(args), -1;
            PyTuple_SET_ITEM(args, i - 1, x);
        }
        v->op = IR_CONST;
        v->ckind = CK_NONE;
        v->nargs = 0;
    } else {
        return error_at(c, ERR_UNSUPPORTED, bd->loc,
                        "kernels can raise an exception class or an instance made with constant arguments");
    }
    if (!args) return -1;
    int site = raise_site(c, cls, args, false);
    Py_DECREF(args);
    if (site < 0) return -1;
    Instr *r = build_emit(bd, IR_RAISE, 0);
    if (!r) return -1;
    r->ival = site;
    return 0;
}

/* What an opcode we do not compile means to the user. */
static const char *construct_of(const char *op) {
    /* clang-format off */
    static const struct { const char *prefix, *what; } m[] = {
        {"BUILD_LIST", "lists"}, {"LIST_", "lists"}, {"BUILD_MAP", "dicts"}, {"DICT_", "dicts"},
        {"MAP_ADD", "dict comprehensions"}, {"BUILD_SET", "sets"}, {"SET_", "sets"},
        {"BUILD_CONST_KEY_MAP", "dicts"}, {"MAKE_FUNCTION", "nested functions and lambdas"},
        {"LOAD_CLOSURE", "nested functions and lambdas"}, {"YIELD_VALUE", "generators (yield)"},
        {"RETURN_GENERATOR", "generators"}, {"GET_AWAITABLE", "await"}, {"SEND", "await / yield from"},
        {"BEFORE_WITH", "with statements"}, {"BEFORE_ASYNC_WITH", "async with"},
        {"LOAD_BUILD_CLASS", "classes"}, {"PUSH_EXC_INFO", "try statements"},
        {"RAISE_VARARGS", "raise statements"}, {"RERAISE", "try statements"}, {"IMPORT_", "import statements"},
        {"BUILD_STRING", "string formatting operations"}, {"FORMAT_", "string formatting operations"},
        {"CONVERT_VALUE", "string formatting operations"}, {"DELETE_", "del statements"},
        {"STORE_GLOBAL", "assignments to globals"}, {"STORE_DEREF", "assignments to closure variables"},
        {"STORE_ATTR", "attribute assignments"}, {"LOAD_ASSERTION_ERROR", "assert statements"},
        {"CALL_FUNCTION_EX", "calls with *args or **kwargs"}, {"UNPACK_EX", "starred assignments"},
        {"GET_AITER", "async for"}, {"GET_ANEXT", "async for"}, {"MATCH_", "match statements"},
        {"GET_LEN", "match statements"}, {"CHECK_EXC_MATCH", "try statements"},
        {"LOAD_FAST_AND_CLEAR", "comprehensions"}, {"CALL_INTRINSIC", "constructs like this"},
        {"SETUP_", "try/with statements"}, {"POP_EXCEPT", "try statements"},
        {"LOAD_LOCALS", "classes"}, {"LOAD_FROM_DICT", "classes"}, {"IS_OP", "'is' comparisons"},
        {"CONTAINS_OP", "'in' tests"}, {"POP_JUMP_IF_NONE", "comparisons with None"},
        {"POP_JUMP_IF_NOT_NONE", "comparisons with None"}, {"POP_JUMP_FORWARD_IF_NONE", "comparisons with None"},
        {"POP_JUMP_FORWARD_IF_NOT_NONE", "comparisons with None"}, {"PRINT_EXPR", "print statements"},
        {"EXIT_INIT_CHECK", "classes"}, {"GET_YIELD_FROM_ITER", "yield from"},
    };
    /* clang-format on */
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (strncmp(op, m[i].prefix, strlen(m[i].prefix)) == 0) return m[i].what;
    return NULL;
}

static int unsupported_op(Builder *bd, const Insn *in) {
    const char *op = op_name(in->raw);
    /* a dict after an argument tuple: the keywords of a call CPython passes through CALL_FUNCTION_EX */
    for (int k = 0; k < bd->sp; k++)
        if (is_argtuple(bd->stack[k]) &&
            (!strncmp(op, "BUILD_MAP", 9) || !strncmp(op, "DICT_", 5) || !strncmp(op, "BUILD_CONST_KEY_MAP", 19)))
            return error_at(bd->c, ERR_UNSUPPORTED, in->loc,
                            "keyword arguments in a call with more than 30 "
                            "arguments, and **kwargs, are not supported in kernels");
    if (!strcmp(op, "IMPORT_NAME") && bd->names) {
#if PY_VERSION_HEX >= 0x030F0000
        const char *mod = name_at(bd->names, in->arg >> 2); /* 3.15: the low two bits say eager or lazy */
#else
        const char *mod = name_at(bd->names, in->arg);
#endif
        if (mod && is_debugger_module(mod))
            return error_at(bd->c, ERR_UNSUPPORTED, in->loc, "importing %s in a kernel: %s", mod, DEBUGGER_HINT);
    }
    const char *what = construct_of(op);
    if (what && !strcmp(what, "string formatting operations"))
        return error_at(bd->c, ERR_UNSUPPORTED, in->loc,
                        "string formatting (f-strings) is not supported in kernels (bytecode %s); "
                        PRINT_HINT, op);
    if (what)
        return error_at(bd->c, ERR_UNSUPPORTED, in->loc, "%s are not supported in kernels (bytecode %s)", what, op);
    return error_at(bd->c, ERR_UNSUPPORTED, in->loc, "unsupported Python construct (bytecode %s)", op);
}

/* An Enum's member by name (RequestError["not_found"], Color["red"]): *out,
 * as its attribute is (pyvalue.c); *out NULL for any other subscript. A name
 * the class lacks is a user error. */
static int enum_member(Builder *bd, Instr *o, Instr *idx, Instr **out) {
    *out = NULL;
    if (o->op != IR_OBJ || !o->pyobj || !PyType_Check(o->pyobj) || idx->op != IR_CONST || idx->ckind != CK_STR)
        return 0;
    PyObject *key = PyUnicode_FromString(idx->name);
    PyObject *m = key ? PyObject_GetItem(o->pyobj, key) : NULL;
    Py_XDECREF(key);
    if (!m && PyErr_ExceptionMatches(PyExc_KeyError)) { /* an Enum class without that member */
        PyErr_Clear();
        return error_at(bd->c, ERR_TYPING, bd->loc, "%s has no member '%s'", ((PyTypeObject *)o->pyobj)->tp_name,
                        idx->name);
    }
    PyErr_Clear(); /* not a class with members by name */
    if (m) *out = enum_member_value(bd, o->pyobj, m);
    Py_XDECREF(m);
    return *out || !PyErr_Occurred() ? 0 : -1;
}

static int compare_index(int arg) { return arg >> pyv->compare_shift; }

/* slice(start, stop, step), a NULL part omitted (None). ival counts the
 * parts written (3 with a step, as numba's slice3 type: `a[::1]` is not
 * known to be contiguous). */
static Instr *make_slice(Builder *bd, Instr *start, Instr *stop, Instr *step) {
    Instr *v = build_emit(bd, IR_SLICE, 3);
    if (!v) return NULL;
    v->ival = step ? 3 : 2;
    Instr *parts[3] = {start, stop, step};
    for (int i = 0; i < 3; i++) {
        if (!parts[i]) {
            if (!(parts[i] = new_const(bd))) return NULL;
            parts[i]->ckind = CK_NONE;
        }
        v->args[i] = parts[i];
    }
    return v;
}

static int call(Builder *bd, int nargs, PyObject *kwnames) {
    Ctx *c = bd->c;
    if (nargs > LIMIT_TUPLE) return error_limit(c, bd->loc, "arguments in a call", LIMIT_TUPLE);
    Instr **args = arena_alloc(&c->arena, sizeof(Instr *) * (size_t)(nargs + 1));
    if (!args) return -1;
    for (int i = nargs - 1; i >= 0; i--) {
        args[i + 1] = pop(bd);
        if (!args[i + 1]) return -1;
    }
    POP(upper);
    POP(lower);
    Instr *callee, *self = NULL;
    if (pyv->null_after) {
        callee = lower; /* [callable, self_or_null, args...] */
        if (upper != NULLV) self = upper;
    } else if (lower == NULLV) { /* [NULL, callable, args...] */
        callee = upper;
    } else { /* [method, self, args...] */
        callee = lower;
        self = upper;
    }
    if (callee == NULLV) return internal_error(c, bd->loc, "build: call of NULL");
    if (callee->op == IR_OBJ && callee->pyobj == (PyObject *)&PySlice_Type && !self && !kwnames) {
        /* slice(stop), slice(start, stop[, step]): the value a[start:stop:step] builds */
        if (nargs < 1 || nargs > 3)
            return error_at(c, ERR_TYPING, bd->loc, "slice expected 1 to 3 arguments, got %d", nargs);
        return push(bd,
                    nargs == 1 ? make_slice(bd, NULL, args[1], NULL)
                               : make_slice(bd, args[1], args[2], nargs == 3 ? args[3] : NULL));
    }
    int n = nargs;
    Instr **argv = args + 1;
    if (self) {
        args[0] = self;
        argv = args;
        n++;
    }
    if (callee->op == IR_OBJ && callee->name && !callee->func && !self &&
        !(kwnames && PyTuple_Check(kwnames) && PyTuple_GET_SIZE(kwnames))) {
        Instr *op;
        RETURN_IF_ERROR(operator_call(bd, callee->name, argv, n, &op));
        if (op) return push(bd, op);
    }
    Instr *v = build_emit(bd, IR_CALL, n + 1);
    if (!v) return -1;
    v->args[0] = callee;
    for (int i = 0; i < n; i++) v->args[i + 1] = argv[i];
    if (kwnames && PyTuple_Check(kwnames)) {
        v->nkw = (int)PyTuple_GET_SIZE(kwnames);
        v->kwnames = arena_alloc(&c->arena, sizeof(char *) * (size_t)(v->nkw ? v->nkw : 1));
        if (!v->kwnames) return -1;
        for (int i = 0; i < v->nkw; i++) v->kwnames[i] = arena_strdup(&c->arena, name_at(kwnames, i));
    }
    return push(bd, v);
}

/* Nested functions. A `def` in kernel code becomes a Python function made at compile time
 * and compiled where it is called, as any other device function. Its closure cells must
 * hold constants: a cell of this function assigned once, from a constant, or a cell passed
 * down from the enclosing function's own closure. */
static int keep(Ctx *c, PyObject *o) { /* steals o */
    Ctx *root = ctx_root(c);
    if (!o) return -1;
    if (!root->owned && !(root->owned = PyList_New(0))) return Py_DECREF(o), -1;
    int rc = PyList_Append(root->owned, o);
    Py_DECREF(o);
    return rc;
}

static bool is_freevar(Ctx *c, int idx) {
    PyCodeObject *co = (PyCodeObject *)c->code;
    return idx >= co->co_nlocalsplus - co->co_nfreevars;
}

static PyObject *capture_cell(Builder *bd, int idx, Loc loc) {
    Ctx *c = bd->c;
    PyObject *vn = PyObject_CallMethod(c->code, "_varname_from_oparg", "i", idx);
    if (!vn) return NULL;
    const char *name = PyUnicode_AsUTF8(vn);
    if (is_freevar(c, idx)) {
        PyCodeObject *co = (PyCodeObject *)c->code;
        int fi = idx - (co->co_nlocalsplus - co->co_nfreevars);
        Py_DECREF(vn);
        if (c->closure && fi < PyTuple_GET_SIZE(c->closure)) return PyTuple_GET_ITEM(c->closure, fi);
        error_at(c, ERR_TYPING, loc, "closure variable is not available");
        return NULL;
    }
    int nstores = 0, store = -1;
    for (int k = 0; k < c->ninsns; k++)
        if ((c->insns[k].op == OP_STORE_DEREF || c->insns[k].op == OP_STORE_FAST) && c->insns[k].arg == idx)
            nstores++, store = k;
    int prev = store - 1;
    while (prev >= 0 && (c->insns[prev].op == OP_CACHE || c->insns[prev].op == OP_EXTENDED_ARG)) prev--;
    PyObject *val = NULL;
    if (nstores > 1)
        error_at(c, ERR_TYPING, loc,
                 "Cannot capture a constant value for variable '%s' in a nested function: it is assigned more "
                 "than once",
                 name);
    else if (nstores == 0 || prev < 0 ||
             (c->insns[prev].op != OP_LOAD_CONST && c->insns[prev].op != OP_LOAD_SMALL_INT))
        error_at(c, ERR_TYPING, loc,
                 "Cannot capture the non-constant value associated with variable '%s' in a nested function "
                 "(captured variables must be assigned a constant once)",
                 name);
    else if (c->insns[prev].op == OP_LOAD_SMALL_INT) {
        PyObject *k = PyLong_FromLong(c->insns[prev].arg);
        val = k ? PyCell_New(k) : NULL;
        Py_XDECREF(k);
    } else
        val = PyCell_New(PyTuple_GET_ITEM(bd->consts, c->insns[prev].arg));
    Py_DECREF(vn);
    if (!val || keep(c, val) < 0) return NULL;
    return val;
}

/* (code -- function): MAKE_FUNCTION's result, before its attributes are set */
static Instr *make_function(Builder *bd, Instr *code) {
    Ctx *c = bd->c;
    if (code->op != IR_OBJ || !code->pyobj || !PyCode_Check(code->pyobj)) {
        internal_error(c, bd->loc, "build: MAKE_FUNCTION without a code object");
        return NULL;
    }
    PyObject *f = PyFunction_New(code->pyobj, c->globals);
    if (!f) return NULL;
    if (keep(c, f) < 0) return NULL;
    return value_from_py(bd, f, "nested function");
}

/* SET_FUNCTION_ATTRIBUTE's flags (and MAKE_FUNCTION's before 3.13): 1 defaults, 2 keyword
 * defaults, 4 annotations, 8 closure */
static int set_function_attribute(Builder *bd, Instr *fn, int flag, Instr *v) {
    Ctx *c = bd->c;
    PyObject *f = fn->func;
    if (flag == 8) {
        if (v->op != IR_TUPLE) return internal_error(c, bd->loc, "build: closure is not a tuple");
        PyObject *cl = PyTuple_New(v->nargs);
        if (!cl) return -1;
        for (int k = 0; k < v->nargs; k++) {
            /* 3.13 builds the closure with LOAD_FAST of each cell (before, LOAD_CLOSURE) */
            PyObject *cell = v->args[k]->op == IR_OBJ              ? v->args[k]->pyobj
                             : v->args[k]->op == IR_LOAD_VAR ? capture_cell(bd, v->args[k]->var, bd->loc)
                                                               : NULL;
            if (!cell && PyErr_Occurred()) return Py_DECREF(cl), -1;
            if (!cell || !PyCell_Check(cell)) {
                Py_DECREF(cl);
                return internal_error(c, bd->loc, "build: closure item is not a cell");
            }
            PyTuple_SET_ITEM(cl, k, Py_NewRef(cell));
        }
        int rc = PyFunction_SetClosure(f, cl);
        Py_DECREF(cl);
        return rc;
    }
    if (flag == 1) {
        if (v != bd->tuple_k || !bd->tuple_obj)
            return error_at(c, ERR_UNSUPPORTED, bd->loc,
                            "default values of a nested function must be constants in kernels");
        return PyFunction_SetDefaults(f, bd->tuple_obj);
    }
    if (flag == 4) return 0; /* annotations do not change what the function computes */
    return error_at(c, ERR_UNSUPPORTED, bd->loc, "keyword-only arguments of nested functions are not supported in "
                                                 "kernels");
}

/* (o i -- o[i]): an enum's member by name, or an item */
static int subscript(Builder *bd) {
    POP(idx);
    POP(o);
    Instr *member;
    RETURN_IF_ERROR(enum_member(bd, o, idx, &member));
    if (member) return push(bd, member);
    Instr *v = build_emit(bd, IR_GETITEM, 2);
    if (!v) return -1;
    v->args[0] = o;
    v->args[1] = idx;
    return push(bd, v);
}

/* a slice constant (3.14+ fold a[1:2]'s slice into one): slice(start, stop[, step]) of its parts */
static Instr *slice_const(Builder *bd, PyObject *sl) {
    PySliceObject *so = (PySliceObject *)sl;
    PyObject *parts[3] = {so->start, so->stop, so->step};
    Instr *ins[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3; k++)
        if (parts[k] != Py_None && !(ins[k] = const_from_py(bd, parts[k], 0))) {
            if (!PyErr_Occurred())
                error_at(bd->c, ERR_UNSUPPORTED, bd->loc, "slice of a constant of type '%s'", py_type_name(parts[k]));
            return NULL;
        }
    return make_slice(bd, ins[0], ins[1], ins[2]);
}

static bool holds_slice(PyObject *o) {
    if (PySlice_Check(o)) return true;
    for (Py_ssize_t k = 0; PyTuple_Check(o) && k < PyTuple_GET_SIZE(o); k++)
        if (holds_slice(PyTuple_GET_ITEM(o, k))) return true;
    return false;
}

/* A constant that holds slices (3.14+ fold a[1:3, 0]'s index into one): the slices and the
 * tuples around them built as the code of earlier versions builds them */
static Instr *const_with_slices(Builder *bd, PyObject *o, int depth) {
    if (PySlice_Check(o)) return slice_const(bd, o);
    if (!PyTuple_Check(o) || !holds_slice(o)) {
        Instr *k = const_from_py(bd, o, 0);
        if (!k && !PyErr_Occurred())
            error_at(bd->c, ERR_UNSUPPORTED, bd->loc, "constant of type '%s'", py_type_name(o));
        return k;
    }
    if (depth > LIMIT_CONST_NESTING) {
        error_limit(bd->c, bd->loc, "levels of tuples nested in a constant", LIMIT_CONST_NESTING);
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(o);
    Instr **items = arena_alloc(&bd->c->arena, sizeof(Instr *) * (size_t)(n ? n : 1));
    if (!items) return NULL;
    for (Py_ssize_t k = 0; k < n; k++)
        if (!(items[k] = const_with_slices(bd, PyTuple_GET_ITEM(o, k), depth + 1))) return NULL;
    return make_tuple(bd, items, (int)n);
}

static int build_block(Builder *bd, Block *b) {
    Ctx *c = bd->c;
    bd->blk = b;
    bd->sp = 0;
    bd->kwnames = NULL;
    bd->loc = c->insns[b->first].loc;
    if (b == c->blocks[0]) {
        int fixed = ((PyCodeObject *)c->code)->co_flags & CO_VARARGS ? ((PyCodeObject *)c->code)->co_argcount
                                                                      : c->nargs;
        for (int i = 0; i < c->nargs; i++) {
            Instr *a = build_emit(bd, IR_ARG, 0), *st = i < fixed ? build_emit(bd, IR_STORE_VAR, 1) : a;
            if (!a || !st) return -1;
            a->ival = i;
            if (i >= fixed) continue;
            st->var = i;
            st->args[0] = a;
        }
        if (fixed < c->nargs || ((PyCodeObject *)c->code)->co_flags & CO_VARARGS) {
            /* a device function's *args: the call's extra arguments are its parameters, gathered
             * into the tuple here (the function is specialised on their number and types) */
            Instr **items = arena_alloc(&c->arena, sizeof(Instr *) * (size_t)(c->nargs - fixed + 1));
            if (!items) return -1;
            for (int i = fixed, k = 0; i < c->nargs; i++) items[k++] = b->instrs.v[b->instrs.n - (c->nargs - i)];
            Instr *t = make_tuple(bd, items, c->nargs - fixed), *st = t ? build_emit(bd, IR_STORE_VAR, 1) : NULL;
            if (!st) return -1;
            st->var = fixed;
            st->args[0] = t;
        }
    }
    for (int i = 0; i < b->depth; i++) {
        if (b->slot_vars[i] < 0) {
            RETURN_IF_ERROR(push(bd, NULLV));
            continue;
        }
        Instr *ld = build_emit(bd, IR_LOAD_VAR, 0);
        if (!ld) return -1;
        ld->var = b->slot_vars[i];
        RETURN_IF_ERROR(push(bd, ld));
    }
    for (int i = 0; i < bd->nloops; i++)
        if (bd->loops[i].body_off >= 0 && block_at(c, bd->loops[i].body_off) == b) { /* a loop's body */
            POP(k);
            RETURN_IF_ERROR(push(bd, seq_item(bd, bd->loops[i].seq, k)));
        }
    for (int ii = b->first; ii <= b->last; ii++) {
        const Insn *in = &c->insns[ii];
        bd->loc = in->loc;
        int arg = in->arg;
        switch (in->op) {
        case OP_NOP:
        case OP_RESUME:
        case OP_CACHE:
        case OP_PRECALL:
        case OP_COPY_FREE_VARS:
        case OP_MAKE_CELL:
        case OP_EXTENDED_ARG: break; /* ( -- ) */
        case OP_POP_TOP: {
            POP(v);
            (void)v;
            break;
        } /* (v -- ) */
        case OP_PUSH_NULL: RETURN_IF_ERROR(push(bd, NULLV)); break; /* ( -- NULL) */
        case OP_LOAD_CONST: { /* ( -- k) */
            PyObject *ko = PyTuple_GET_ITEM(bd->consts, arg);
            if (holds_slice(ko)) {
                RETURN_IF_ERROR(push(bd, const_with_slices(bd, ko, 0)));
                break;
            }
            if (PyCode_Check(ko) && ((PyCodeObject *)ko)->co_name &&
                PyUnicode_READ_CHAR(((PyCodeObject *)ko)->co_name, 0) == '<' &&
                PyUnicode_CompareWithASCIIString(((PyCodeObject *)ko)->co_name, "<lambda>") != 0)
                return error_at(c, ERR_UNSUPPORTED, in->loc,
                                "comprehensions and generator expressions are not supported in kernels");
            if (PyCode_Check(ko)) { /* the body of a def or lambda: MAKE_FUNCTION follows */
                Instr *v = new_detached(bd, IR_OBJ, 0);
                if (!v) return -1;
                v->name = "code";
                v->pyobj = ko; /* borrowed: co_consts holds it */
                RETURN_IF_ERROR(push(bd, v));
                break;
            }
            Instr *k = const_from_py(bd, ko, 0);
            if (k && PyTuple_Check(ko)) bd->tuple_k = k, bd->tuple_obj = ko;
            if (!k) {
                if (!PyErr_Occurred()) /* code constants (def, lambda, comprehension) are taken above */
                    error_at(c, ERR_UNSUPPORTED, in->loc, "constant of type '%s'",
                             py_type_name(PyTuple_GET_ITEM(bd->consts, arg)));
                return -1;
            }
            RETURN_IF_ERROR(push(bd, k));
            break;
        }
        case OP_LOAD_FAST:
        case OP_LOAD_FAST_LOAD_FAST: { /* ( -- v) or ( -- v1 v2) */
            int idx[2] = {arg, -1};
            if (in->op == OP_LOAD_FAST_LOAD_FAST) {
                idx[0] = arg >> 4;
                idx[1] = arg & 15;
            }
            for (int k = 0; k < 2 && idx[k] >= 0; k++) {
                Instr *ld = build_emit(bd, IR_LOAD_VAR, 0);
                if (!ld) return -1;
                ld->var = idx[k];
                RETURN_IF_ERROR(push(bd, ld));
            }
            break;
        }
        case OP_STORE_FAST:
        case OP_STORE_FAST_STORE_FAST:
        case OP_STORE_FAST_LOAD_FAST: {
            /* (v -- ), (v2 v1 -- ), (v -- w) */
            int idx[2] = {arg, -1};
            if (in->op != OP_STORE_FAST) {
                idx[0] = arg >> 4;
                idx[1] = arg & 15;
            }
            int nstore = in->op == OP_STORE_FAST_STORE_FAST ? 2 : 1;
            for (int k = 0; k < nstore; k++) {
                POP(v);
                if (v == NULLV) return internal_error(c, in->loc, "build: store of NULL");
                Instr *st = build_emit(bd, IR_STORE_VAR, 1);
                if (!st) return -1;
                st->var = idx[k];
                st->args[0] = v;
            }
            if (in->op == OP_STORE_FAST_LOAD_FAST) {
                Instr *ld = build_emit(bd, IR_LOAD_VAR, 0);
                if (!ld) return -1;
                ld->var = idx[1];
                RETURN_IF_ERROR(push(bd, ld));
            }
            break;
        }
        case OP_LOAD_GLOBAL: { /* ( -- [NULL] g [NULL]) */
            Instr *g = load_global(bd, name_at(bd->names, arg >> 1));
            if (!g) return -1;
            if ((arg & 1) && !pyv->null_after) RETURN_IF_ERROR(push(bd, NULLV));
            RETURN_IF_ERROR(push(bd, g));
            if ((arg & 1) && pyv->null_after) RETURN_IF_ERROR(push(bd, NULLV));
            break;
        }
        case OP_STORE_DEREF: { /* (v -- ) */
            if (is_freevar(c, arg))
                return error_at(c, ERR_UNSUPPORTED, in->loc,
                                "assignments to variables of an enclosing function (nonlocal) are not supported "
                                "in kernels");
            POP(v);
            if (v == NULLV) return internal_error(c, in->loc, "build: store of NULL");
            Instr *st = build_emit(bd, IR_STORE_VAR, 1);
            if (!st) return -1;
            st->var = arg; /* a cell of this function is a local of the compiled code */
            st->args[0] = v;
            break;
        }
        case OP_LOAD_CLOSURE: { /* ( -- cell) */
            PyObject *cell = capture_cell(bd, arg, in->loc);
            if (!cell) return -1;
            Instr *v = new_detached(bd, IR_OBJ, 0);
            if (!v) return -1;
            v->name = "cell";
            v->pyobj = cell; /* kept alive by the root's owned list or the closure */
            RETURN_IF_ERROR(push(bd, v));
            break;
        }
        case OP_MAKE_FUNCTION: { /* (attrs... code -- f); 3.13: (code -- f) */
            POP(code);
            Instr *f = make_function(bd, code);
            if (!f) return -1;
            for (int flag = 8; flag && pyv->make_function_attrs; flag >>= 1)
                if (arg & flag) {
                    POP(v);
                    RETURN_IF_ERROR(set_function_attribute(bd, f, flag, v));
                }
            RETURN_IF_ERROR(push(bd, f));
            break;
        }
        case OP_SET_FUNCTION_ATTRIBUTE: { /* (v f -- f) */
            POP(f);
            POP(v);
            RETURN_IF_ERROR(set_function_attribute(bd, f, arg, v));
            RETURN_IF_ERROR(push(bd, f));
            break;
        }
        case OP_LOAD_DEREF: { /* ( -- v) */
            if (!is_freevar(c, arg)) {
                Instr *ld = build_emit(bd, IR_LOAD_VAR, 0);
                if (!ld) return -1;
                ld->var = arg;
                RETURN_IF_ERROR(push(bd, ld));
                break;
            }
            PyObject *vn = PyObject_CallMethod(c->code, "_varname_from_oparg", "i", arg);
            if (!vn) return -1;
            const char *name = PyUnicode_AsUTF8(vn);
            int fi = -1;
            for (Py_ssize_t k = 0; bd->freevars && k < PyTuple_GET_SIZE(bd->freevars); k++)
                if (strcmp(name_at(bd->freevars, (int)k), name) == 0) fi = (int)k;
            PyObject *cell = fi >= 0 && c->closure && fi < PyTuple_GET_SIZE(c->closure)
                    ? PyTuple_GET_ITEM(c->closure, fi)
                    : NULL;
            PyObject *val = cell && PyCell_Check(cell) ? PyCell_GET(cell) : NULL;
            if (!val) {
                error_at(c, ERR_TYPING, in->loc, "closure variable '%s' is not available", name);
                Py_DECREF(vn);
                return -1;
            }
            char what[300];
            snprintf(what, sizeof what, "closure variable '%s'", name);
            Py_DECREF(vn);
            Instr *v = value_from_py(bd, val, what);
            if (!v) return -1;
            RETURN_IF_ERROR(push(bd, v));
            break;
        }
        case OP_LOAD_ATTR:
        case OP_LOAD_METHOD: { /* (o -- a) or (o -- NULL a) / (o -- a NULL) */
            POP(o);
            bool method = in->op == OP_LOAD_METHOD;
            int namei = arg;
            if (pyv->attr_method_bit) {
                method = arg & 1;
                namei = arg >> 1;
            }
            if (o == NULLV) return internal_error(c, in->loc, "build: attribute of NULL");
            Instr *a = load_attr(bd, o, name_at(bd->names, namei));
            if (!a) return -1;
            if (method && !pyv->null_after) RETURN_IF_ERROR(push(bd, NULLV));
            RETURN_IF_ERROR(push(bd, a));
            if (method && pyv->null_after) RETURN_IF_ERROR(push(bd, NULLV));
            break;
        }
        case OP_KW_NAMES: /* ( -- ) */
            bd->kwnames = PyTuple_GET_ITEM(bd->consts, arg);
            if (!PyTuple_Check(bd->kwnames))
                return internal_error(c, in->loc, "malformed code object: KW_NAMES of a non-tuple");
            break;
        case OP_CALL: { /* (callable self_or_null args... -- result) */
            PyObject *kw = bd->kwnames;
            bd->kwnames = NULL;
            RETURN_IF_ERROR(call(bd, arg, kw));
            break;
        }
        case OP_CALL_KW: { /* (callable self_or_null args... kwnames -- result) */
            POP(names);
            if (!(names->op == IR_CONST && names->ckind == CK_TUPLE))
                return internal_error(c, in->loc, "build: CALL_KW without a names tuple");
            PyObject *kw = PyTuple_New(names->nargs);
            if (!kw) return -1;
            for (int k = 0; k < names->nargs; k++)
                PyTuple_SET_ITEM(kw, k, PyUnicode_FromString(names->args[k]->name ? names->args[k]->name : "?"));
            int r = call(bd, arg, kw);
            Py_DECREF(kw);
            RETURN_IF_ERROR(r);
            break;
        }
        case OP_BINARY_OP: { /* (a b -- a op b) */
            if (arg == pyv->binop_subscr) {
                RETURN_IF_ERROR(subscript(bd));
                break;
            }
            if (arg >= 26) return internal_error(c, in->loc, "build: BINARY_OP %d", arg);
            POP(rhs);
            POP(lhs);
            Instr *v = build_emit(bd, IR_BINOP, 2);
            if (!v) return -1;
            v->ival = arg >= 13 ? arg - 13 : arg;
            v->args[0] = lhs;
            v->args[1] = rhs;
            if (v->ival == BIN_MATMUL) return error_at(c, ERR_UNSUPPORTED, in->loc, "the '@' operator");
            RETURN_IF_ERROR(push(bd, v));
            break;
        }
        case OP_COMPARE_OP: { /* (a b -- a cmp b) */
            POP(rhs);
            POP(lhs);
            Instr *v = build_emit(bd, IR_CMP, 2);
            if (!v) return -1;
            v->ival = compare_index(arg);
            v->args[0] = lhs;
            v->args[1] = rhs;
            RETURN_IF_ERROR(push(bd, v));
            break;
        }
        case OP_IS_OP: { /* (a b -- a is b), arg 1: is not */
            POP(rhs);
            POP(lhs);
            Instr *v = build_emit(bd, IR_CMP, 2);
            if (!v) return -1;
            v->ival = arg ? CMP_IS_NOT : CMP_IS;
            v->args[0] = lhs;
            v->args[1] = rhs;
            RETURN_IF_ERROR(push(bd, v));
            break;
        }
        case OP_BINARY_SUBSCR: RETURN_IF_ERROR(subscript(bd)); break; /* (o i -- o[i]) */
        case OP_STORE_SUBSCR: { /* (v o i -- ) */
            POP(idx);
            POP(o);
            POP(val);
            Instr *v = build_emit(bd, IR_SETITEM, 3);
            if (!v) return -1;
            v->args[0] = o;
            v->args[1] = idx;
            v->args[2] = val;
            break;
        }
        case OP_STORE_ATTR: { /* (v o -- ): o.name = v, a record's field, stored as o['name'] = v */
            POP(o);
            POP(val);
            Instr *k = new_const(bd), *v = k ? build_emit(bd, IR_SETITEM, 3) : NULL;
            if (!v) return -1;
            k->ckind = CK_STR;
            k->name = arena_strdup(&c->arena, name_at(bd->names, arg));
            v->args[0] = o;
            v->args[1] = k;
            v->args[2] = val;
            break;
        }
        case OP_BUILD_SLICE: { /* (start stop [step] -- slice) */
            if (arg != 2 && arg != 3) return internal_error(c, in->loc, "build: BUILD_SLICE %d", arg);
            Instr *step = arg == 3 ? pop(bd) : NULL;
            if (arg == 3 && !step) return -1;
            POP(stop);
            POP(start);
            Instr *v = make_slice(bd, start, stop, step);
            if (!v) return -1;
            RETURN_IF_ERROR(push(bd, v));
            break;
        }
        case OP_BINARY_SLICE: { /* (o start stop -- o[start:stop]) */
            POP(stop);
            POP(start);
            POP(o);
            Instr *s = make_slice(bd, start, stop, NULL), *v = s ? build_emit(bd, IR_GETITEM, 2) : NULL;
            if (!v) return -1;
            v->args[0] = o;
            v->args[1] = s;
            RETURN_IF_ERROR(push(bd, v));
            break;
        }
        case OP_STORE_SLICE: { /* (v o start stop -- ) */
            POP(stop);
            POP(start);
            POP(o);
            POP(val);
            Instr *s = make_slice(bd, start, stop, NULL), *v = s ? build_emit(bd, IR_SETITEM, 3) : NULL;
            if (!v) return -1;
            v->args[0] = o;
            v->args[1] = s;
            v->args[2] = val;
            break;
        }
        case OP_BUILD_TUPLE: { /* (items... -- tuple) */
            if (arg > LIMIT_TUPLE) return error_limit(c, in->loc, "items in a tuple", LIMIT_TUPLE);
            Instr **items = arena_alloc(&c->arena, sizeof(Instr *) * (size_t)(arg ? arg : 1));
            if (!items) return -1;
            for (int k = arg - 1; k >= 0; k--) {
                items[k] = pop(bd);
                if (!items[k]) return -1;
            }
            if (arg && is_cell(items[0])) { /* a nested function's closure */
                Instr *t = new_detached(bd, IR_TUPLE, arg);
                if (!t) return -1;
                for (int k = 0; k < arg; k++) t->args[k] = items[k];
                RETURN_IF_ERROR(push(bd, t));
                break;
            }
            RETURN_IF_ERROR(push(bd, make_tuple(bd, items, arg)));
            break;
        }
        case OP_BUILD_LIST: { /* (items... -- list) */
            Instr *l = new_list(bd);
            if (!l) return -1;
            if (arg > bd->sp) return internal_error(c, in->loc, "build: bad BUILD_LIST");
            for (int k = bd->sp - arg; k < bd->sp; k++) RETURN_IF_ERROR(list_add(bd, l, bd->stack[k]));
            bd->sp -= arg;
            RETURN_IF_ERROR(push(bd, l));
            break;
        }
        case OP_LIST_APPEND:
        case OP_LIST_EXTEND: { /* (list ... v -- list ...) */
            POP(v);
            Instr *l = arg >= 1 && arg <= bd->sp ? bd->stack[bd->sp - arg] : NULL;
            if (!is_list(l)) return internal_error(c, in->loc, "build: %s without a list", op_name(in->raw));
            if (in->op == OP_LIST_APPEND) {
                RETURN_IF_ERROR(list_add(bd, l, v));
            } else if ((v->op == IR_CONST && v->ckind == CK_TUPLE) ||
                       v->op == IR_TUPLE) { /* f(*(a, b), ...) and constants */
                for (int k = 0; k < v->nargs; k++) RETURN_IF_ERROR(list_add(bd, l, v->args[k]));
            } else {
                return error_at(c, ERR_UNSUPPORTED, in->loc, "calls with *args are not supported in kernels");
            }
            break;
        }
        case OP_LIST_TO_TUPLE: RETURN_IF_ERROR(list_to_tuple(bd)); break; /* (list -- tuple) */
        case OP_CALL_FUNCTION_EX: { /* (NULL f t [kw] -- result); 3.13: (f NULL t [kw] -- result) */
            /* CPython calls this way for f(*t), and when a call has more than 30
             * arguments: then they are in a tuple built just before (a constant one
             * when all are constants), spread into a plain call here. */
            Instr *kwargs = pyv->call_ex_kwargs_slot ? pop_any(bd) : NULLV; /* 3.14+: always a slot */
            if (!kwargs) return -1;
            if ((arg & 1) || kwargs != NULLV)
                return error_at(c, ERR_UNSUPPORTED, in->loc,
                                "calls with **kwargs, or with more than "
                                "30 arguments and keyword arguments, are not supported in kernels");
            Instr *t = pop_any(bd);
            if (!t) return -1;
            if ((t->op == IR_CONST && t->ckind == CK_TUPLE) || is_argtuple(t)) {
                for (int k = 0; k < t->nargs; k++) RETURN_IF_ERROR(push(bd, t->args[k]));
                RETURN_IF_ERROR(call(bd, t->nargs, NULL));
                break;
            }
            /* f(*t) of a tuple value: typeinfer spreads it once t's type is known */
            POP(upper);
            POP(lower);
            Instr *f = lower == NULLV ? upper : lower, *other = lower == NULLV ? lower : upper;
            if (f == NULLV || other != NULLV) return unsupported_op(bd, in);
            Instr *v = build_emit(bd, IR_CALL, 2);
            if (!v) return -1;
            v->args[0] = f;
            v->args[1] = t;
            v->star = true;
            RETURN_IF_ERROR(push(bd, v));
            break;
        }
        case OP_UNPACK_SEQUENCE: { /* (t -- t[n-1] ... t[0]) */
            POP(t);
            for (int k = arg - 1; k >= 0; k--) {
                Instr *g = build_emit(bd, IR_TUPLE_GET, 1);
                if (!g) return -1;
                g->args[0] = t;
                g->ival = k;
                g->nunpack = arg;
                RETURN_IF_ERROR(push(bd, g));
            }
            break;
        }
        case OP_GET_ITER: { /* (r -- it) */
            POP(r);
            if (!is_call_of(r, "builtins.range")) { /* counts over range(len(r)) */
                if (bd->nloops == MAX_SEQ_LOOPS)
                    return error_at(c, ERR_UNSUPPORTED, in->loc,
                                    "too many for loops over arrays, tuples, "
                                    "enumerate() and zip() (limit is %d)",
                                    MAX_SEQ_LOOPS);
                Instr *n = seq_len(bd, r);
                if (!n) return -1;
                int f = ii + 1; /* the loop's FOR_ITER follows (after an EXTENDED_ARG when its jump is long) */
                while (f < c->ninsns && c->insns[f].op != OP_FOR_ITER) f++;
                if (f == c->ninsns) return internal_error(c, in->loc, "build: GET_ITER without FOR_ITER");
                bd->loops[bd->nloops++] = (SeqLoop){c->insns[f].off, -1, r};
                if (!(r = call_builtin(bd, "builtins.range", &n, 1))) return -1;
            }
            Instr *it = build_emit(bd, IR_GET_ITER, 1);
            if (!it) return -1;
            it->args[0] = r;
            for (int k = 1; k < pyv->iter_slots; k++) RETURN_IF_ERROR(push(bd, NULLV)); /* below the iterator */
            RETURN_IF_ERROR(push(bd, it));
            break;
        }
        case OP_UNROLL_START: /* (t -- [NULL] t): an unrolled loop's tuple where its iterator was */
            if (pyv->iter_slots > 1) {
                POP(t);
                for (int k = 1; k < pyv->iter_slots; k++) RETURN_IF_ERROR(push(bd, NULLV));
                RETURN_IF_ERROR(push(bd, t));
            }
            break;
        case OP_POP_ITER: /* (it -- ): the iterator's slots */
        case OP_UNROLL_END:
            for (int k = 0; k < pyv->iter_slots; k++)
                if (!pop_any(bd)) return -1;
            break;
        case OP_LOAD_SMALL_INT: { /* ( -- arg) */
            PyObject *o = PyLong_FromLong(arg);
            if (!o || keep(c, o) < 0) return -1;
            RETURN_IF_ERROR(push(bd, const_from_py(bd, o, 0)));
            break;
        }
        case OP_LOAD_COMMON_CONSTANT: { /* ( -- AssertionError, tuple, None, ...) */
            PyObject *o = common_constant(arg);
            Instr *v = PyType_Check(o) || PyCFunction_Check(o) ? value_from_py(bd, o, op_name(in->raw))
                                                               : const_from_py(bd, o, 0);
            if (!v && !PyErr_Occurred()) return unsupported_op(bd, in);
            RETURN_IF_ERROR(push(bd, v));
            break;
        }
        case OP_UNROLL_ITEM: { /* (t -- t t[arg]): an unrolled loop's item (unroll.c) */
            Instr *t = bd->sp ? bd->stack[bd->sp - 1] : NULL;
            if (!t) return internal_error(c, in->loc, "build: UNROLL_ITEM on an empty stack");
            Instr *v = t;
            if ((t->op == IR_TUPLE || (t->op == IR_CONST && t->ckind == CK_TUPLE)) && arg < t->nargs)
                v = t->args[arg];
            else if ((v = build_emit(bd, IR_TUPLE_GET, 1))) {
                v->args[0] = t;
                v->ival = arg;
                v->nunpack = in->count;
            } else
                return -1;
            RETURN_IF_ERROR(push(bd, v));
            break;
        }
        case OP_FOR_ITER: { /* (it -- it v) or, exhausted, (it -- ) and jump */
            Instr *it = bd->sp ? bd->stack[bd->sp - 1] : NULL;
            if (!it) return internal_error(c, in->loc, "build: FOR_ITER on an empty stack");
            Instr *nx = build_emit(bd, IR_ITER_NEXT, 1), *ok = nx ? build_emit(bd, IR_ITER_VALID, 1) : NULL;
            if (!ok) return -1;
            nx->args[0] = it;
            ok->args[0] = nx;
            for (int k = 0; k < bd->nloops; k++)
                if (bd->loops[k].for_off == in->off) bd->loops[k].body_off = in->next;
            RETURN_IF_ERROR(push(bd, nx));
            return branch(bd, ok, in->next, bd->sp, for_iter_exit(c, in), bd->sp - 1 - pyv->iter_slots);
        }
        case OP_TO_BOOL: {
            POP(v);
            RETURN_IF_ERROR(push(bd, truth(bd, v)));
            break;
        } /* (v -- bool) */
        case OP_COPY: /* (x ... -- x ... x) */
            if (arg < 1 || arg > bd->sp) return internal_error(c, in->loc, "build: bad COPY");
            RETURN_IF_ERROR(push(bd, bd->stack[bd->sp - arg]));
            break;
        case OP_SWAP: { /* (x ... y -- y ... x) */
            if (arg < 2 || arg > bd->sp) return internal_error(c, in->loc, "build: bad SWAP");
            Instr *t = bd->stack[bd->sp - 1];
            bd->stack[bd->sp - 1] = bd->stack[bd->sp - arg];
            bd->stack[bd->sp - arg] = t;
            break;
        }
        case OP_CALL_INTRINSIC_1:
            if (arg == 6) { /* INTRINSIC_LIST_TO_TUPLE (3.12+): (list -- tuple) */
                RETURN_IF_ERROR(list_to_tuple(bd));
                break;
            }
            /* fallthrough */
        case OP_UNARY_NEGATIVE:
        case OP_UNARY_NOT:
        case OP_UNARY_INVERT:
        case OP_UNARY_POSITIVE: {
            /* (v -- op v) */
            int u = in->op == OP_UNARY_NEGATIVE ? UN_NEG
                    : in->op == OP_UNARY_NOT    ? UN_NOT
                    : in->op == OP_UNARY_INVERT ? UN_INVERT
                                                : UN_POS;
            if (in->op == OP_CALL_INTRINSIC_1 && arg != 5) return unsupported_op(bd, in);
            POP(v);
            Instr *r = build_emit(bd, IR_UNARY, 1);
            if (!r) return -1;
            r->ival = u;
            r->args[0] = v;
            RETURN_IF_ERROR(push(bd, r));
            break;
        }
        case OP_POP_JUMP_IF_FALSE:
        case OP_POP_JUMP_IF_TRUE: { /* (c -- ) */
            POP(v);
            Instr *t = truth(bd, v);
            if (!t) return -1;
            int jt = in->jump, ft = in->next;
            if (in->op == OP_POP_JUMP_IF_FALSE) return branch(bd, t, ft, bd->sp, jt, bd->sp);
            return branch(bd, t, jt, bd->sp, ft, bd->sp);
        }
        case OP_POP_JUMP_IF_NONE:
        case OP_POP_JUMP_IF_NOT_NONE: { /* (v -- ): `v is None` and a jump */
            POP(v);
            Instr *none = const_from_py(bd, Py_None, 0);
            Instr *t = none ? build_emit(bd, IR_CMP, 2) : NULL;
            if (!t) return -1;
            t->ival = CMP_IS;
            t->args[0] = v;
            t->args[1] = none;
            int jt = in->jump, ft = in->next;
            if (in->op == OP_POP_JUMP_IF_NONE) return branch(bd, t, jt, bd->sp, ft, bd->sp);
            return branch(bd, t, ft, bd->sp, jt, bd->sp);
        }
        case OP_JUMP_IF_FALSE_OR_POP:
        case OP_JUMP_IF_TRUE_OR_POP: { /* (c -- c) jumping, (c -- ) not */
            Instr *v = bd->stack[bd->sp - 1];
            Instr *t = truth(bd, v);
            if (!t) return -1;
            if (in->op == OP_JUMP_IF_FALSE_OR_POP) return branch(bd, t, in->next, bd->sp - 1, in->jump, bd->sp);
            return branch(bd, t, in->jump, bd->sp, in->next, bd->sp - 1);
        }
        case OP_JUMP_FORWARD:
        case OP_JUMP_BACKWARD: return jump(bd, in->jump); /* ( -- ) */
        case OP_RETURN_VALUE: {
            POP(v);
            return ret(bd, v);
        } /* (v -- ) */
        case OP_RETURN_CONST: { /* ( -- ) */
            Instr *k = const_from_py(bd, PyTuple_GET_ITEM(bd->consts, arg), 0);
            if (!k) return PyErr_Occurred() ? -1 : error_at(c, ERR_UNSUPPORTED, in->loc, "return of this constant");
            return ret(bd, k);
        }
        case OP_LOAD_ASSERTION_ERROR: { /* ( -- AssertionError) */
            Instr *v = value_from_py(bd, PyExc_AssertionError, "AssertionError");
            if (!v) return -1;
            RETURN_IF_ERROR(push(bd, v));
            break;
        }
        case OP_RAISE_VARARGS: { /* (exc [cause] -- ) */
            if (arg == 0) return error_at(c, ERR_UNSUPPORTED, in->loc, "a bare raise (re-raise) in a kernel");
            if (arg == 2) {
                POP(cause);
                (void)cause;
            }
            POP(v);
            return raise_stmt(bd, v);
        }
        default: return unsupported_op(bd, in);
        }
    }
    /* fell through into the next block */
    const Insn *last = &c->insns[b->last];
    return jump(bd, last->next);
}

int build_ir(Ctx *c) {
    PyCodeObject *co = (PyCodeObject *)c->code;
    Builder bd = {.c = c};
    Loc floc = {c->firstlineno, 0};
    bd.loc = floc;
    int flags = co->co_flags;
    if (flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE))
        return error_at(c, ERR_UNSUPPORTED, floc, "generators and coroutines are not supported as kernels");
    if ((flags & CO_VARKEYWORDS) || ((flags & CO_VARARGS) && !c->self))
        return error_at(c, ERR_UNSUPPORTED, floc,
                        c->self ? "**kwargs are not supported in device functions"
                                : "*args and **kwargs are not supported in kernels");
    if (co->co_kwonlyargcount)
        return error_at(c, ERR_UNSUPPORTED, floc, "keyword-only arguments are not supported in kernels");
    if (co->co_argcount != c->nargs && !((flags & CO_VARARGS) && c->nargs > co->co_argcount)) {
        PyErr_Format(PyExc_TypeError, "%s takes %d argument%s but the signature gives %d", c->funcname,
                     co->co_argcount, co->co_argcount == 1 ? "" : "s", c->nargs);
        return -1;
    }
    PyObject *exc = PyObject_GetAttrString(c->code, "co_exceptiontable");
    if (!exc) return -1;
    for (int k = 0; k < c->ninsns; k++)
        if (c->insns[k].op == OP_LOAD_FAST_AND_CLEAR) { /* 3.12+ inline comprehensions; they also */
            Py_DECREF(exc);                               /* have an exception table entry */
            return error_at(c, ERR_UNSUPPORTED, c->insns[k].loc,
                            "comprehensions and generator expressions are not supported in kernels");
        }
    if (PyBytes_Check(exc) && PyBytes_GET_SIZE(exc)) {
        /* Point at the `try:` / `with` line: the instruction just before the first protected
         * range (a NOP for try, BEFORE_WITH for with). The table's entries are sorted; each
         * starts with the range's start in code units, a big-endian varint of 6-bit chunks
         * (0x40 = more follow). */
        const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(exc);
        Py_ssize_t n = PyBytes_GET_SIZE(exc), i = 0;
        int start = p[i] & 63;
        while ((p[i] & 64) && i + 1 < n) start = (start << 6) | (p[++i] & 63);
        Loc loc = floc;
        for (int k = 0; k < c->ninsns && c->insns[k].off < 2 * start; k++)
            if (c->insns[k].loc.line > 0) loc = c->insns[k].loc;
        Py_DECREF(exc);
        return error_at(c, ERR_UNSUPPORTED, loc, "try and with statements are not supported in kernels");
    }
    Py_DECREF(exc);
    bd.names = PyObject_GetAttrString(c->code, "co_names");
    bd.consts = PyObject_GetAttrString(c->code, "co_consts");
    bd.varnames = PyObject_GetAttrString(c->code, "co_varnames");
    bd.freevars = PyObject_GetAttrString(c->code, "co_freevars");
    int rc = -1;
    if (!bd.names || !bd.consts || !bd.varnames || !bd.freevars) goto done;
    int nlocals =
            co->co_nlocals > (int)PyTuple_GET_SIZE(bd.varnames) ? co->co_nlocals : (int)PyTuple_GET_SIZE(bd.varnames);
    for (int i = 0; i < nlocals; i++) {
        int v = add_var(c, arena_strdup(&c->arena, name_at(bd.varnames, i)), floc);
        if (v < 0) goto done;
        ctx_var(c, v)->is_arg = i < c->nargs;
    }
    for (int i = nlocals; i < co->co_nlocalsplus - co->co_nfreevars; i++) { /* cells that are not arguments */
        PyObject *vn = PyObject_CallMethod(c->code, "_varname_from_oparg", "i", i);
        if (!vn) goto done;
        int v = add_var(c, arena_strdup(&c->arena, PyUnicode_AsUTF8(vn)), floc);
        Py_DECREF(vn);
        if (v < 0) goto done;
    }
    bd.cap = co->co_stacksize + 8;
    bd.stack = arena_alloc(&c->arena, sizeof(Instr *) * (size_t)bd.cap);
    if (!bd.stack) goto done;
    Block *entry = c->blocks[0];
    entry->depth = 0;
    vec_push(&c->arena, &bd.work, entry);
    for (int w = 0; w < bd.work.n; w++) {
        Block *b = bd.work.v[w];
        if (b->built) continue;
        b->built = true;
        if (build_block(&bd, b) < 0) goto done;
    }
    rc = 0;
    if (debug_enabled("ir")) dump_ir(c, stderr);
done:
    Py_XDECREF(bd.names);
    Py_XDECREF(bd.consts);
    Py_XDECREF(bd.varnames);
    Py_XDECREF(bd.freevars);
    return rc;
}

/* ---- dump ---- */

/* clang-format off */
const IrOpInfo ir_op_info[IR_NUM_OPS] = {
#define IR_OP(name, spelling, nargs, flags) [IR_##name] = {spelling, nargs, flags},
#include "irops.h"
#undef IR_OP
};
/* clang-format on */

static void dump_value(Ctx *c, FILE *f, Instr *v) {
    if (v->op == IR_CONST) {
        switch (v->ckind) {
        case CK_INT:
            if (v->is_uint64)
                fprintf(f, "%llu", (unsigned long long)v->ival);
            else
                fprintf(f, "%lld", (long long)v->ival);
            break;
        case CK_FLOAT: fprintf(f, "%g", v->fval); break;
        case CK_BOOL: fprintf(f, v->ival ? "True" : "False"); break;
        case CK_NONE: fprintf(f, "None"); break;
        case CK_STR: fprintf(f, "'%s'", v->name); break;
        case CK_COMPLEX: fprintf(f, "(%g%+gj)", v->fval, v->fimag); break;
        case CK_TUPLE:
            fprintf(f, "(");
            for (int i = 0; i < v->nargs; i++) {
                if (i) fprintf(f, ", ");
                dump_value(c, f, v->args[i]);
            }
            fprintf(f, ")");
        }
    } else {
        fprintf(f, "%%%d", v->id);
    }
}

void dump_ir(Ctx *c, FILE *f) {
    fprintf(f, "== IR of %s (%s)\n", c->funcname, c->filename);
    for (int i = 0; i < c->nblocks; i++) {
        Block *b = c->blocks[i];
        if (!b->built) continue;
        fprintf(f, "block%d (depth %d):\n", b->id, b->depth);
        for (int k = 0; k < b->instrs.n; k++) {
            Instr *in = b->instrs.v[k];
            fprintf(f, "  %%%d = %s", in->id, ir_op_info[in->op].name);
            if (in->op == IR_LOAD_VAR || in->op == IR_STORE_VAR) fprintf(f, " %s", ctx_var(c, in->var)->name);
            if (in->op == IR_OBJ || in->op == IR_ATTR) fprintf(f, " %s", in->name);
            if (in->op == IR_BINOP || in->op == IR_UNARY || in->op == IR_CMP || in->op == IR_TUPLE_GET ||
                in->op == IR_ARG)
                fprintf(f, " #%lld", (long long)in->ival);
            for (int a = 0; a < in->nargs; a++) {
                fprintf(f, " ");
                dump_value(c, f, in->args[a]);
            }
            if (in->target) fprintf(f, " -> block%d", in->target->id);
            if (in->target2) fprintf(f, ", block%d", in->target2->id);
            if (in->type) fprintf(f, "   : %s", type_name(c, in->type));
            fprintf(f, "   ; line %d\n", in->loc.line);
        }
    }
}
