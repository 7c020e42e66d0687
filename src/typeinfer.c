/* typeinfer.c: give every IR value and variable a type, iterating to a
 * fixpoint (variables widen by unification as assignments are seen), and
 * resolve calls and attributes to intrinsics. Rules follow numba.cuda.
 * Requires: build_ir. After it, every reachable value has a known type. */
#include <string.h>

#include "gj.h"

/* Paths name objects: gpujit's own are registered by the package
 * ("gpujit.grid"); modules by name ("math"); builtins and NumPy types by
 * module and qualified name ("builtins.range", "numpy.float32"). */

typedef struct {
    Ctx *c;
    bool changed;
} TI;

/* A tuple type, within the limits on its size: a recursion that nests a
 * tuple deeper at each call would otherwise grow it without end. */
static Type *tuple_type(Ctx *c, Instr *in, int n, Type **items) {
    Type *t = type_tuple(c, n, items);
    if (t && t->nested_items > LIMIT_TUPLE)
        return error_limit(c, in->loc, "items in a tuple, counting those of nested tuples", LIMIT_TUPLE), (Type *)NULL;
    if (t && t->depth > LIMIT_TUPLE_NESTING)
        return error_limit(c, in->loc, "levels of nested tuples", LIMIT_TUPLE_NESTING), (Type *)NULL;
    return t;
}

static Type *const_type(Ctx *c, Instr *k) {
    switch (k->ckind) {
    case CK_INT: return k->is_uint64 ? &ty_uint64 : &ty_int64;
    case CK_FLOAT: return &ty_float64;
    case CK_BOOL: return &ty_bool;
    case CK_NONE: return &ty_none;
    case CK_STR: return &ty_str;
    case CK_COMPLEX: return &ty_complex128;
    case CK_ELLIPSIS: return &ty_ellipsis;
    case CK_TUPLE: {
        Type **items = arena_alloc(&c->arena, sizeof(Type *) * (size_t)(k->nargs ? k->nargs : 1));
        if (!items) return NULL;
        /* the items get their types too: lowering reads them (a[2, 1] indexes with a constant
         * tuple whose items are never an instruction's direct argument) */
        for (int i = 0; i < k->nargs; i++) {
            items[i] = const_type(c, k->args[i]);
            if (!k->args[i]->type) k->args[i]->type = items[i];
        }
        return type_tuple(c, k->nargs, items);
    }
    }
    return &ty_unknown;
}

/* Bind a call's positional and keyword arguments to parameter names. */
static Type *type_binop(Ctx *c, Instr *in, Type *a, Type *b) {
    static const char *const opstr[] = {"+", "&", "//", "<<", "@", "*", "%", "|", "**", ">>", "-", "/", "^"};
    const char *op = opstr[in->ival];
    if (is_fp8(a) || is_fp8(b))
        TERR("%s has no arithmetic (a storage type, as numba.cuda's fp8): convert it first, float32(x)",
             type_name(c, is_fp8(a) ? a : b));
    if (!is_number(a) || !is_number(b)) {
        if (a->kind == TY_TUPLE && b->kind == TY_TUPLE && in->ival == BIN_ADD) {
            if (a->n + b->n > LIMIT_TUPLE) {
                error_limit(c, in->loc, "items in a tuple", LIMIT_TUPLE);
                return NULL;
            }
            Type **items = arena_alloc(&c->arena, sizeof(Type *) * (size_t)(a->n + b->n + 1));
            if (!items) return NULL;
            for (int i = 0; i < a->n; i++) items[i] = a->items[i];
            for (int i = 0; i < b->n; i++) items[a->n + i] = b->items[i];
            return tuple_type(c, in, a->n + b->n, items);
        }
        if (a->kind == TY_ARRAY || b->kind == TY_ARRAY)
            UNSUP("whole-array arithmetic (%s %s %s); index the elements in a loop instead", type_name(c, a), op,
                  type_name(c, b));
        if (a->kind == TY_STR && in->ival == BIN_MOD)
            UNSUP("string formatting ('...' %% values) is not supported in kernels; " PRINT_HINT);
        TERR("unsupported operand types for %s: %s and %s", op, type_name(c, a), type_name(c, b));
    }
    if (is_complex(a) || is_complex(b)) {
        switch (in->ival) {
        case BIN_ADD:
        case BIN_SUB:
        case BIN_MUL:
        case BIN_DIV:
        case BIN_POW: return in->conv = promote_arith(a, b);
        default: TERR("unsupported operand types for %s: %s and %s", op, type_name(c, a), type_name(c, b));
        }
    }
    switch (in->ival) {
    case BIN_ADD:
    case BIN_SUB:
    case BIN_MUL:
    case BIN_FLOORDIV:
    case BIN_MOD:
    case BIN_POW: in->conv = promote_arith(a, b); return in->conv;
    case BIN_DIV: in->conv = (is_float(a) || is_float(b)) ? promote_arith(a, b) : &ty_float64; return in->conv;
    case BIN_AND:
    case BIN_OR:
    case BIN_XOR:
        if (a->kind == TY_BOOL && b->kind == TY_BOOL) return in->conv = &ty_bool;
        /* fallthrough */
    case BIN_LSHIFT:
    case BIN_RSHIFT:
        if (is_float(a) || is_float(b))
            TERR("unsupported operand types for %s: %s and %s", op, type_name(c, a), type_name(c, b));
        in->conv = promote_arith(a, b);
        if (is_float(in->conv)) in->conv = &ty_int64; /* int64 with uint64 */
        return in->conv;
    default: UNSUP("operator %s", op);
    }
}

static Type *type_getitem(Ctx *c, Instr *in, Type *o, Type *idx) {
    if (o->kind == TY_CPTR) {
        if (o->elem->kind == TY_NONE) TERR("a void pointer cannot be indexed (a pointer to numbers can: int32*)");
        if (in->op == IR_GETITEM && in->ival) TERR("a pointer (%s) is not iterable: it has no length", type_name(c, o));
        if (!is_index(idx)) TERR("a pointer is indexed by one integer, not %s", type_name(c, idx));
        return o->elem;
    }
    if (o->kind == TY_ARRAY) {
        int n = idx->kind == TY_TUPLE ? idx->n : 1, nslices = 0, nell = 0, ell_at = n;
        Type **items = idx->kind == TY_TUPLE ? idx->items : &idx;
        if (in->op == IR_GETITEM && in->ival && o->ndim != 1) /* a for loop's item */
            UNSUP("iteration over the rows of %s (loop over an index and index the array instead)", type_name(c, o));
        for (int i = 0; i < n; i++) {
            if (items[i]->kind == TY_SLICE) {
                nslices++;
                continue;
            }
            if (items[i]->kind == TY_ELLIPSIS) {
                if (nell++) TERR("an index can only have a single ellipsis ('...')");
                ell_at = i;
                continue;
            }
            if (is_index(items[i])) continue;
            /* numba's: a 0-d integer array indexes as its element */
            if (items[i]->kind == TY_ARRAY && items[i]->ndim == 0 && is_index(items[i]->elem)) continue;
            if (is_float(items[i])) TERR("array index must be an integer, not %s", type_name(c, items[i]));
            UNSUP("array index of type %s (arrays as indices are not supported)", type_name(c, items[i]));
        }
        int given = n - nell;
        if (given > o->ndim)
            TERR("too many indices for array: array is %d-dimensional, but %d were indexed", o->ndim, given);
        if (given == o->ndim && nslices == 0) return o->elem;
        /* a view. numba's rule for its layout: a C array stays C when every
         * index is an integer but the last, which may be a slice without a
         * step, and no index follows an ellipsis that stands for some axes */
        char layout = o->layout;
        if (given < o->ndim && ell_at < n - 1) layout = 'A';
        int last = ell_at == n - 1 ? n - 2 : n - 1;
        for (int i = 0; i < n && layout == 'C'; i++)
            if (items[i]->kind == TY_SLICE && (i != last || items[i]->n == 3)) layout = 'A';
        return type_array(c, o->elem, o->ndim - given + nslices, layout, o->space);
    }
    if (o->kind == TY_RECORD) return type_record_field(c, in, o, record_field_name(c, o, in->args[1]));
    if (o->kind == TY_RANGE) {
        if (!is_index(idx)) TERR("range index must be an integer, not %s", type_name(c, idx));
        return &ty_int64;
    }
    if (o->kind == TY_TUPLE) {
        if (!is_index(idx)) TERR("tuple index must be an integer");
        Instr *iv = in->args[1];
        if (iv->op == IR_CONST) {
            int64_t i = iv->ival < 0 ? iv->ival + o->n : iv->ival;
            if (i < 0 || i >= o->n) TERR("tuple index %lld out of range", (long long)iv->ival);
            return o->items[i];
        }
        for (int i = 1; i < o->n; i++)
            if (!type_eq(o->items[i], o->items[0])) TERR("variable index into a tuple of mixed types");
        if (o->n == 0) TERR("index into an empty tuple");
        return o->items[0];
    }
    TERR("%s is not subscriptable", type_name(c, o));
}

/* A call of a Python function: type its specialisation for these arguments
 * (compile.c runs the frontend on it); the call's type is its return type. */
/* Python's default argument values fill the call's missing trailing
 * arguments (numbers and None only: they become constants). */
static int apply_defaults(Ctx *c, Instr *in, PyObject *func) {
    PyObject *defs = PyFunction_GET_DEFAULTS(func);
    int argc = ((PyCodeObject *)PyFunction_GET_CODE(func))->co_argcount, n = in->nargs - 1;
    int nd = defs ? (int)PyTuple_GET_SIZE(defs) : 0;
    if (n >= argc || argc - n > nd) return 0; /* compile_device_function reports the count */
    Instr **args = arena_alloc(&c->arena, sizeof(Instr *) * (size_t)(argc + 1));
    if (!args) return -1;
    memcpy(args, in->args, sizeof(Instr *) * (size_t)in->nargs);
    for (int i = n; i < argc; i++) {
        PyObject *d = PyTuple_GET_ITEM(defs, nd - (argc - i));
        Instr *k = arena_alloc(&c->arena, sizeof *k);
        if (!k) return -1;
        k->op = IR_CONST;
        k->loc = in->loc;
        k->id = c->nvalues++;
        if (PyBool_Check(d))
            k->ckind = CK_BOOL, k->ival = d == Py_True, k->type = &ty_bool;
        else if (PyLong_Check(d))
            k->ckind = CK_INT, k->ival = PyLong_AsLongLong(d), k->type = &ty_int64;
        else if (PyFloat_Check(d))
            k->ckind = CK_FLOAT, k->fval = PyFloat_AS_DOUBLE(d), k->type = &ty_float64;
        else if (d == Py_None) /* numba's omitted argument: `is None` tests settle on its type */
            k->ckind = CK_NONE, k->type = &ty_none;
        else
            return error_at(c, ERR_UNSUPPORTED, in->loc, "default value of type '%s' for argument %d of %s()",
                            Py_TYPE(d)->tp_name, i + 1, in->args[0]->type->path);
        if (PyErr_Occurred()) return error_at(c, ERR_TYPING, in->loc, "default value does not fit in 64 bits");
        args[1 + i] = k;
    }
    in->args = args;
    in->nargs = argc + 1;
    return 0;
}

/* A function with overloads (gpujit.extending.overload): its `__gpujit_overload__` picks
 * the implementation for the argument types' names (a new reference; the overload's cache
 * keeps it alive through the compilation). NULL with an error set where none fits. */
static PyObject *overload_impl(Ctx *c, Instr *in, PyObject *pick) {
    int n = in->nargs - 1;
    PyObject *names = PyTuple_New(n);
    if (!names) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *s = PyUnicode_FromString(type_name(c, in->args[1 + i]->type));
        if (!s) return Py_DECREF(names), NULL;
        PyTuple_SET_ITEM(names, i, s);
    }
    PyObject *impl = PyObject_CallOneArg(pick, names);
    Py_DECREF(names);
    if (!impl || !PyFunction_Check(impl)) {
        PyObject *t = NULL, *v = NULL, *tb = NULL;
        PyErr_Fetch(&t, &v, &tb);
        PyObject *msg = v ? PyObject_Str(v) : NULL;
        const char *text = msg ? PyUnicode_AsUTF8(msg) : NULL;
        PyErr_Clear();
        error_at(c, ERR_TYPING, in->loc, "%s(): %s", in->args[0]->type->path,
                 text ? text : "its overload gave no Python function");
        Py_XDECREF(msg);
        Py_XDECREF(t);
        Py_XDECREF(v);
        Py_XDECREF(tb);
        Py_XDECREF(impl);
        return NULL;
    }
    return impl;
}

/* f(a, name=b): the keywords go to their parameters' places; the defaults fill the rest */
static int bind_keywords(Ctx *c, Instr *in, PyObject *func) {
    PyCodeObject *co = (PyCodeObject *)PyFunction_GET_CODE(func);
    PyObject *defs = PyFunction_GET_DEFAULTS(func);
    int argc = co->co_argcount, npos = in->nargs - 1 - in->nkw, nd = defs ? (int)PyTuple_GET_SIZE(defs) : 0;
    const char *fname = PyUnicode_AsUTF8(co->co_name);
    if (npos > argc) return error_at(c, ERR_TYPING, in->loc, "%s() got too many positional arguments", fname);
    Instr **slots = arena_alloc(&c->arena, sizeof(Instr *) * (size_t)(argc + 1));
    if (!slots) return -1;
    memset(slots, 0, sizeof(Instr *) * (size_t)(argc + 1));
    slots[0] = in->args[0];
    for (int i = 0; i < npos; i++) slots[1 + i] = in->args[1 + i];
    for (int k = 0; k < in->nkw; k++) {
        int at = -1;
        for (int i = 0; i < argc; i++)
            if (!PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(co->co_localsplusnames, i), in->kwnames[k])) at = i;
        if (at < 0)
            return error_at(c, ERR_TYPING, in->loc, "%s() got an unexpected keyword argument '%s'", fname,
                            in->kwnames[k]);
        if (slots[1 + at])
            return error_at(c, ERR_TYPING, in->loc, "%s() got multiple values for argument '%s'", fname,
                            in->kwnames[k]);
        slots[1 + at] = in->args[1 + npos + k];
    }
    /* the defaults of the parameters after the last given one come from apply_defaults */
    int last = argc;
    while (last > 0 && !slots[last]) last--;
    for (int i = 0; i < last; i++)
        if (!slots[1 + i]) {
            if (i < argc - nd) return error_at(c, ERR_TYPING, in->loc, "%s() missing argument %d", fname, i + 1);
            Instr one = *in;
            one.args = slots;
            one.nargs = 1 + i;
            if (apply_defaults(c, &one, func) < 0) return -1;
            slots[1 + i] = one.args[1 + i];
        }
    in->args = slots;
    in->nargs = last + 1;
    in->nkw = 0;
    in->kwnames = NULL;
    return 0;
}

static Type *type_user_call(Ctx *c, Instr *in) {
    PyObject *func = in->args[0]->type->obj;
    PyObject *pick = PyObject_GetAttrString(func, "__gpujit_overload__");
    if (!pick) {
        PyErr_Clear();
    } else {
        for (int i = 1; i < in->nargs; i++)
            if (!type_known(in->args[i]->type)) return Py_DECREF(pick), &ty_unknown;
        func = overload_impl(c, in, pick);
        Py_DECREF(pick);
        if (!func) return NULL;
        Py_DECREF(func); /* the overload's cache holds it */
    }
    if (in->nkw && bind_keywords(c, in, func) < 0) return NULL;
    if (apply_defaults(c, in, func) < 0) return NULL;
    int n = in->nargs - 1;
    Type **at = arena_alloc(&c->arena, sizeof(Type *) * (size_t)(n + 1));
    if (!at) return NULL;
    for (int i = 0; i < n; i++) {
        at[i] = in->args[1 + i]->type;
        if (!type_known(at[i])) return &ty_unknown;
        /* functions, modules, dtypes and strings are compile-time values: the
         * callee is specialised on them (compile.c keys it) and gets no parameter; so is None */
        if (at[i]->kind == TY_OBJ || at[i]->kind == TY_STR || at[i]->kind == TY_NONE) continue;
        if (!has_value(at[i]) || at[i]->kind == TY_RANGE || at[i]->kind == TY_RANGEITER)
            TERR("argument %d of %s() is %s; device functions take numbers, arrays, pointers, tuples of them, "
                 "functions and dtypes",
                 i + 1, in->args[0]->type->path, type_name(c, at[i]));
    }
    Func *f = NULL;
    if (compile_device_function(c, in, func, at, n, &f) < 0) return NULL;
    in->callee = f;
    /* a parameter passed on to one whose value the callee was compiled for is keyed (needed) too */
    for (int i = 0; i < n && i < 64; i++)
        if (f->literal_args >> i & 1) arg_literal(c, in->args[1 + i], f->literal_needed >> i & 1 ? LIT_NEED : LIT_KEY);
    return f->sub->restype;
}

/* Does this device function call itself (directly)? Its return types failing to unify is
 * then numba's "does not converge": each call's result feeds the next return. */
static bool calls_itself(Ctx *c) {
    for (int bi = 0; c->self && bi < c->nblocks; bi++)
        for (int k = 0; c->blocks[bi]->built && k < c->blocks[bi]->instrs.n; k++) {
            Instr *in = c->blocks[bi]->instrs.v[k];
            if (in->op == IR_CALL && in->callee == c->self) return true;
        }
    return false;
}

/* f(*t) with t's type known: t[0], t[1], ... become the call's arguments,
 * read by TUPLE_GETs placed just before it (typed in the next round). */
static Type *spread_star(TI *ti, Instr *in) {
    Ctx *c = ti->c;
    Instr *t = in->args[1];
    if (!type_known(t->type)) return &ty_unknown;
    if (t->type->kind != TY_TUPLE) TERR("f(*args) in a kernel spreads a tuple, not %s", type_name(c, t->type));
    int n = t->type->n;
    if (n > 255) TERR("too many arguments in f(*args) (limit is 255)");
    Instr **args = arena_alloc(&c->arena, sizeof(Instr *) * (size_t)(n + 1));
    if (!args) return NULL;
    args[0] = in->args[0];
    for (int bi = 0; bi < c->nblocks; bi++) {
        PtrVec *v = &c->blocks[bi]->instrs;
        int pos = -1;
        for (int k = 0; k < v->n && pos < 0; k++)
            if (v->v[k] == in) pos = k;
        if (pos < 0) continue;
        for (int i = 0; i < n; i++) {
            Instr *g = arena_alloc(&c->arena, sizeof *g), **ga = arena_alloc(&c->arena, sizeof(Instr *));
            if (!g || !ga) return NULL;
            g->op = IR_TUPLE_GET;
            g->loc = in->loc;
            g->id = c->nvalues++;
            g->args = ga;
            g->nargs = 1;
            g->args[0] = t;
            g->ival = i;
            g->nunpack = n;
            args[1 + i] = g;
            vec_push(&c->arena, v, NULL); /* room, then shift the call and what follows */
            memmove(&v->v[pos + 1], &v->v[pos], sizeof(void *) * (size_t)(v->n - 1 - pos));
            v->v[pos++] = g;
        }
        in->args = args;
        in->nargs = n + 1;
        in->star = false;
        ti->changed = true;
        return &ty_unknown;
    }
    internal_error(c, in->loc, "typeinfer: a call in no block");
    return NULL;
}

static Type *type_of(TI *ti, Instr *in) {
    Ctx *c = ti->c;
    Type *a = in->nargs > 0 ? in->args[0]->type : NULL;
    Type *b = in->nargs > 1 ? in->args[1]->type : NULL;
    switch (in->op) {
    case IR_CONST: return const_type(c, in);
    case IR_ARG: return c->argtypes[in->ival];
    case IR_LOAD_VAR: return ctx_var(c, in->var)->type;
    case IR_STORE_VAR: {
        if (!type_known(a)) return &ty_none;
        Var *v = ctx_var(c, in->var);
        /* a parameter given None (an omitted argument) holds it: `is None` tests read it */
        if (a->kind == TY_NONE && v->name[0] != '$' && in->args[0]->op != IR_ARG)
            TERR("cannot assign None to '%s'", v->name);
        Type *u = unify(c, v->type, a);
        if (!u) {
            if (v->is_arg)
                TERR("cannot assign %s to argument '%s' of type %s", type_name(c, a), v->name, type_name(c, v->type));
            /* '$stack' variables carry values across blocks: the arms of `x if c else y`, `a or b` */
            if (v->name[0] == '$')
                TERR("the branches of this expression have incompatible types: %s and %s", type_name(c, a),
                     type_name(c, v->type));
            TERR("variable '%s' is %s here but %s elsewhere", v->name, type_name(c, a), type_name(c, v->type));
        }
        /* an array argument may be re-bound to a view of another layout (a = a[::2]):
         * both layouts have one representation, so only the variable widens */
        if (!type_eq(u, v->type)) {
            v->type = u;
            if (v->loc.line == 0 || v->loc.line == c->firstlineno) v->loc = in->loc;
            ti->changed = true;
        }
        return &ty_none;
    }
    case IR_OBJ: {
        if (in->func) return type_func(c, in->name, in->func);
        if (!strcmp(in->name, PATH_GLOBAL_ARRAY) || !strcmp(in->name, PATH_CAPTURED_ARRAY))
            return type_global_array(c, in);
        if (!strcmp(in->name, PATH_EXTERN_FN)) return type_func(c, in->name, in->pyobj);
        const Intrinsic *k = intrinsic_lookup(in->name);
        if (k && k->kind == IK_SPECIAL) {
            in->intr = k;
            return &ty_int32;
        }
        if (!k && !intrinsic_namespace(in->name) && strcmp(in->name, "numpy.ndarray") && !is_operator_path(in->name) &&
            !(in->pyobj && (PyModule_Check(in->pyobj) || PyType_Check(in->pyobj) || PyCFunction_Check(in->pyobj) ||
                            is_enum_member(in->pyobj) ||
                            !strcmp(Py_TYPE(in->pyobj)->tp_name, "numpy.ufunc")))) /* ufuncloop.c's */
            UNSUP("%s is not supported in kernels", path_pretty(in->name));
        return type_obj(c, in->name);
    }
    case IR_ATTR:
        if (!type_known(a)) return &ty_unknown;
        if (a->kind == TY_ARRAY) {
            if (!strcmp(in->name, "shape") || !strcmp(in->name, "strides")) {
                Type *items[LIMIT_NDIM];
                for (int i = 0; i < a->ndim; i++) items[i] = &ty_int64;
                return type_tuple(c, a->ndim, items);
            }
            if (!strcmp(in->name, "size") || !strcmp(in->name, "ndim") || !strcmp(in->name, "itemsize") ||
                !strcmp(in->name, "nbytes"))
                return &ty_int64;
            if (!strcmp(in->name, "ctypes.data")) return &ty_uint64;
            if (!strcmp(in->name, "dtype")) { /* a compile-time value: its scalar type, as np.float32 is */
                if (!is_number(a->elem)) UNSUP("'.dtype' of an array of %s", type_name(c, a->elem));
                return type_obj(c, arena_printf(&c->arena, "numpy.%s%s", type_name(c, a->elem),
                                                a->elem->kind == TY_BOOL ? "_" : ""));
            }
            /* views: .T reverses the axes; .real and .imag of a complex array
             * see one part of each element (the stride stays the complex's) */
            if (!strcmp(in->name, "T")) return a->ndim <= 1 ? a : type_array(c, a->elem, a->ndim, 'A', a->space);
            if (!strcmp(in->name, "real") && !is_complex(a->elem)) return a;
            if (!strcmp(in->name, "real") || !strcmp(in->name, "imag")) {
                if (!is_complex(a->elem))
                    UNSUP("'.imag' of a %s array (it has no imaginary part to view)", type_name(c, a->elem));
                return type_array(c, complex_part(a->elem), a->ndim, 'A', a->space);
            }
            /* a record array's field (recarray's a.x): a view of that field of every record */
            if (a->elem->kind == TY_RECORD && record_field(a->elem, in->name)) {
                Type *ft = type_record_field(c, in, a->elem, in->name);
                if (!ft) return NULL;
                if (!is_number(ft) && ft->kind != TY_RECORD)
                    UNSUP("'.%s' of a record array: a view of a %s field", in->name, type_name(c, ft));
                if (a->elem->size % type_align(ft))
                    UNSUP("'.%s' of an array of packed records (its %s items are not aligned)", in->name,
                          type_name(c, ft));
                return type_array(c, ft, a->ndim, 'A', a->space);
            }
            /* a.sum(), the other reductions, a.reshape() and a.view(): methods, called next */
            const Intrinsic *m = intrinsic_lookup(arena_printf(&c->arena, "ndarray.%s", in->name));
            if (m && (m->kind == IK_REDUCE || m->kind == IK_RESHAPE || m->kind == IK_VIEW_DTYPE ||
                      m->kind == IK_ARRAY_COPY))
                return type_obj(c, m->path);
            UNSUP("array attribute '%s'", in->name);
        }
        if (a->kind == TY_RECORD) return type_record_field(c, in, a, in->name);
        if (a->kind == TY_TUPLE && tuple_field(a, in->name) >= 0) return a->items[tuple_field(a, in->name)];
        if (is_complex(a)) {
            if (!strcmp(in->name, "real") || !strcmp(in->name, "imag")) return complex_part(a);
            if (!strcmp(in->name, "conjugate")) return type_obj(c, "complex.conjugate"); /* a method: called next */
            TERR("%s has no attribute '%s'", type_name(c, a), in->name);
        }
        if (is_vector(a)) {
            static const char members[] = "xyzw";
            const char *m = in->name[0] && !in->name[1] ? strchr(members, in->name[0]) : NULL;
            if (!m || m - members >= a->n) TERR("%s has no attribute '%s'", type_name(c, a), in->name);
            return a->items[m - members];
        }
        if (is_index(a) && !strcmp(in->name, "bit_count"))
            return type_obj(c, "int.bit_count"); /* a method: called next */
        if (a->kind == TY_OBJ) {
            const char *path = arena_printf(&c->arena, "%s.%s", a->path, in->name);
            const Intrinsic *k = intrinsic_lookup(path);
            if (k && k->kind == IK_SPECIAL) { /* t = gpu.threadIdx; t.x */
                in->intr = k;
                return &ty_int32;
            }
            return type_obj(c, path);
        }
        if (a->kind == TY_STR && !strcmp(in->name, "format"))
            UNSUP("string formatting (str.format) is not supported in kernels; " PRINT_HINT);
        TERR("%s has no attribute '%s'", type_name(c, a), in->name);
    case IR_BINOP:
        if (!type_known(a) || !type_known(b)) return &ty_unknown;
        return type_binop(c, in, a, b);
    case IR_UNARY:
        if (!type_known(a)) return &ty_unknown;
        if (!is_number(a)) TERR("bad operand type for unary operator: %s", type_name(c, a));
        if (in->ival == UN_NOT) return &ty_bool;
        if (is_complex(a)) {
            if (in->ival == UN_INVERT) TERR("bad operand type for unary ~: %s", type_name(c, a));
            return in->conv = a;
        }
        if (in->ival == UN_INVERT && is_float(a)) TERR("bad operand type for unary ~: %s", type_name(c, a));
        return in->conv = is_float(a) ? a : promote_arith(a, a);
    case IR_CMP:
        if (!type_known(a) || !type_known(b)) return &ty_unknown;
        if (enum_members(in)) { /* Color.red == Color['green']: settled now, as Python settles it (lower.c) */
            in->conv = NULL;
            if (in->ival != CMP_EQ && in->ival != CMP_NE && in->ival != CMP_IS && in->ival != CMP_IS_NOT)
                TERR("Enum members are not ordered: only ==, !=, is and is not compare them");
            return &ty_bool;
        }
        if (in->ival == CMP_IS || in->ival == CMP_IS_NOT) {
            /* numba's `is`: values of different types are never the same object; None is None;
             * numbers and bools of one type are compared by value */
            in->conv = NULL;
            if (!type_eq(a, b) || a->kind == TY_NONE) return &ty_bool;
            if (!is_number(a))
                TERR("'is' compares numbers, bools and None in kernels, not %s", type_name(c, a));
            in->conv = a;
            return &ty_bool;
        }
        if (is_fp8(a) || is_fp8(b))
            TERR("%s has no comparisons (a storage type, as numba.cuda's fp8): convert it first, float32(x)",
                 type_name(c, is_fp8(a) ? a : b));
        if (!is_number(a) || !is_number(b)) TERR("cannot compare %s with %s", type_name(c, a), type_name(c, b));
        if ((is_complex(a) || is_complex(b)) && in->ival != CMP_EQ && in->ival != CMP_NE)
            TERR("complex numbers are not ordered: only == and != compare %s with %s", type_name(c, a),
                 type_name(c, b));
        in->conv = (a->kind == TY_BOOL && b->kind == TY_BOOL) ? &ty_int64 : promote_arith(a, b);
        return &ty_bool;
    case IR_TRUTH:
        if (!type_known(a)) return &ty_unknown;
        if (!is_number(a) && !is_fp8(a) && a->kind != TY_NONE) TERR("truth value of %s", type_name(c, a)); /* None: False */
        return &ty_bool;
    case IR_CALL: {
        if (in->star) return spread_star(ti, in);
        bool loop; /* a NumPy ufunc on arrays: a loop written in Python (ufuncloop.c) */
        Type *t = type_ufunc_loop(c, in, &loop);
        if (loop) return t;
        if (a && a->kind == TY_OBJ && a->path && !strcmp(a->path, PATH_EXTERN_FN)) return type_extern_call(c, in);
        return a && a->kind == TY_OBJ && a->obj ? type_user_call(c, in) : type_intrinsic_call(c, in);
    }
    case IR_GETITEM:
        if (!type_known(a) || !type_known(b)) return &ty_unknown;
        return type_getitem(c, in, a, b);
    case IR_SETITEM: {
        Type *v = in->args[2]->type;
        if (!type_known(a) || !type_known(b) || !type_known(v)) return &ty_none;
        if (a->kind == TY_RECORD) return type_record_store(c, in, a, record_field_name(c, a, in->args[1]), v);
        if (a->kind != TY_ARRAY && in->args[1]->op == IR_CONST && in->args[1]->ckind == CK_STR)
            UNSUP("attribute assignments (only a record's fields can be set: rec.x = v)");
        if (a->kind == TY_CPTR) {
            Type *dst = type_getitem(c, in, a, b);
            if (!dst) return NULL;
            if (!is_number(v) || (is_complex(v) && !is_complex(dst)))
                TERR("cannot store %s through %s", type_name(c, v), type_name(c, a));
            in->conv = NULL;
            return &ty_none;
        }
        if (a->kind != TY_ARRAY) TERR("%s does not support item assignment", type_name(c, a));
        if (a->space == AS_CONST)
            TERR("cannot store into a constant array (global and closure NumPy arrays are frozen into the kernel)");
        Type *dst = type_getitem(c, in, a, b);
        if (!dst) return NULL;
        in->conv = dst->kind == TY_ARRAY ? dst : NULL; /* lowering stores through this view */
        if (dst->kind == TY_ARRAY && v->kind == TY_ARRAY) {
            /* a[i:j] = b: element by element, over the same shape */
            if (v->ndim != dst->ndim)
                TERR("cannot assign a %d-dimensional array to a %d-dimensional slice", v->ndim, dst->ndim);
            if (is_complex(v->elem) && !is_complex(a->elem))
                TERR("cannot store %s into an array of %s", type_name(c, v->elem), type_name(c, a->elem));
            return &ty_none;
        }
        if (dst->kind == TY_RECORD && type_eq(dst, v)) return &ty_none; /* a record's bytes, copied */
        if ((!is_number(v) && !is_fp8(v)) || (is_complex(v) && !is_complex(a->elem)) ||
            (is_fp8(a->elem) && is_complex(v)) || (is_fp8(v) && is_complex(a->elem)))
            TERR("cannot store %s into an array of %s%s", type_name(c, v), type_name(c, a->elem),
                 is_complex(v) ? " (store .real or abs() of it)" : "");
        return &ty_none;
    }
    case IR_SLICE:
        for (int i = 0; i < 3; i++) {
            Type *t = in->args[i]->type;
            if (!type_known(t)) return &ty_unknown;
            if (t->kind != TY_NONE && !is_index(t))
                TERR("slice indices must be integers or None, not %s", type_name(c, t));
        }
        if (in->args[2]->op == IR_CONST && in->args[2]->type->kind != TY_NONE && in->args[2]->ival == 0)
            TERR("slice step cannot be zero");
        return in->ival == 3 ? &ty_slice3 : &ty_slice2;
    case IR_TUPLE: {
        Type **items = arena_alloc(&c->arena, sizeof(Type *) * (size_t)(in->nargs ? in->nargs : 1));
        if (!items) return NULL;
        for (int i = 0; i < in->nargs; i++) {
            if (!type_known(in->args[i]->type)) return &ty_unknown;
            items[i] = in->args[i]->type;
        }
        return tuple_type(c, in, in->nargs, items);
    }
    case IR_TUPLE_GET:
        if (!type_known(a)) return &ty_unknown;
        if (a->kind != TY_TUPLE) TERR("cannot unpack %s", type_name(c, a));
        if (a->n != in->nunpack) TERR("cannot unpack %d values into %d variables", a->n, in->nunpack);
        return a->items[in->ival];
    case IR_GET_ITER:
        if (!type_known(a)) return &ty_unknown;
        if (a->kind != TY_RANGE) UNSUP("iteration over %s (only range() loops are supported)", type_name(c, a));
        return &ty_rangeiter;
    case IR_ITER_NEXT: return type_known(a) ? &ty_int64 : &ty_unknown;
    case IR_ITER_VALID: return &ty_bool;
    case IR_BR:
    case IR_RET:
    case IR_RAISE: return &ty_none;
    case IR_CONDBR: return &ty_none;
    case IR_RET_VALUE: {
        /* a device function's return type unifies what every return gives */
        if (!type_known(a)) return &ty_none;
        Type *u = unify(c, c->restype, a);
        if (!u)
            TERR("%s%s returns %s here but %s elsewhere",
                 calls_itself(c) ? "Return type of recursive function does not converge: " : "", c->funcname,
                 type_name(c, a), type_name(c, c->restype));
        if (!type_eq(u, c->restype)) {
            c->restype = u;
            ti->changed = true;
        }
        return &ty_none;
    }
    }
    return &ty_unknown;
}

/* Which arguments can an array value be, and which does the code store
 * into? Unions grow with the types to the same fixpoint; the launcher
 * refuses read-only arrays for written arguments, as numba refuses to type
 * a store into a read-only array. */
static bool track_origin(Ctx *c, Instr *in) {
    uint64_t o = 0, w = 0;
    switch (in->op) {
    case IR_ARG: o = arg_bit(in->ival); break;
    case IR_LOAD_VAR: o = ctx_var(c, in->var)->origin; break;
    case IR_STORE_VAR: {
        Var *v = ctx_var(c, in->var);
        uint64_t u = v->origin | in->args[0]->origin;
        if (u == v->origin) return false;
        v->origin = u;
        return true;
    }
    case IR_TUPLE:
    case IR_TUPLE_GET:
    case IR_GETITEM:
    case IR_ATTR: /* views: .T, .real */
        for (int i = 0; i < in->nargs; i++) o |= in->args[i]->origin;
        break;
    case IR_SETITEM: w = in->args[0]->origin; break;
    case IR_CALL:
        if (in->callee) {
            for (int i = 1; i < in->nargs; i++) {
                o |= in->args[i]->origin;
                if (in->callee->sub->written & arg_bit(i - 1)) w |= in->args[i]->origin;
            }
        } else if (in->intr && intrinsic_writes_first(in->intr) && in->nargs > 1) {
            w = in->args[1]->origin; /* the array an atomic, a cache-hinted store or a fragment store writes */
        }
        break;
    default: break;
    }
    bool changed = (in->origin | o) != in->origin || (c->written | w) != c->written;
    in->origin |= o;
    c->written |= w;
    return changed;
}

int infer_types(Ctx *c) {
    TI ti = {c, true};
    /* Each round widens some type, and a type widens a bounded number of times
     * (a few per scalar, per tuple item): a long chain of values may need many
     * rounds, an endless one is a bug. */
    int max_rounds = 100 + 8 * (c->nvalues + c->vars.n);
    for (int iter = 0; ti.changed; iter++) {
        if (iter > max_rounds)
            return internal_error(c, NO_LOCATION, "typeinfer: no fixpoint after %d rounds", max_rounds);
        ti.changed = false;
        for (int bi = 0; bi < c->nblocks; bi++) {
            Block *b = c->blocks[bi];
            if (!b->built) continue;
            for (int k = 0; k < b->instrs.n; k++) {
                Instr *in = b->instrs.v[k];
                for (int a = 0; a < in->nargs; a++) {
                    Instr *v = in->args[a];
                    if (v->op == IR_CONST && !v->type) v->type = type_of(&ti, v);
                }
                Type *t = type_of(&ti, in);
                if (!t) return -1;
                if (track_origin(c, in)) ti.changed = true;
                if (!type_eq(t, in->type)) {
                    in->type = t;
                    ti.changed = true;
                }
            }
        }
    }
    /* Everything reachable must now be typed. */
    for (int bi = 0; bi < c->nblocks; bi++) {
        Block *b = c->blocks[bi];
        if (!b->built) continue;
        for (int k = 0; k < b->instrs.n; k++) {
            Instr *in = b->instrs.v[k];
            if (type_known(in->type)) continue;
            if (in->op == IR_LOAD_VAR) {
                Var *v = ctx_var(c, in->var);
                return error_at(c, ERR_TYPING, in->loc, "variable '%s' is used before it is assigned", v->name);
            }
            if (in->op == IR_CALL && in->callee)
                return error_at(c, ERR_TYPING, in->loc,
                                "cannot type infer runaway recursion: no return of %s() gives its "
                                "return type without calling itself (a recursion without a base case)",
                                in->callee->sub->funcname);
            return error_at(c, ERR_TYPING, in->loc, "cannot infer the type of this expression");
        }
    }
    c->typed = true;
    if (debug_enabled("types")) {
        StrBuf sb = {0};
        types_report(c, &sb);
        fprintf(stderr, "%s", sb.s ? sb.s : "");
        sb_free(&sb);
    }
    return 0;
}

void types_report(Ctx *c, StrBuf *out) {
    sb_printf(out, "%s (%s:%d)\n", c->funcname, c->filename, c->firstlineno);
    sb_printf(out, "  signature: (");
    for (int i = 0; i < c->nargs; i++) sb_printf(out, "%s%s", i ? ", " : "", type_name(c, c->argtypes[i]));
    sb_printf(out, ") -> %s\n", type_name(c, c->restype));
    for (int i = 0; i < c->vars.n; i++) {
        Var *v = ctx_var(c, i);
        if (v->name[0] == '$' || v->type->kind == TY_UNKNOWN) continue;
        sb_printf(out, "  line %4d  %-16s %s\n", v->loc.line, v->name, type_name(c, v->type));
    }
}
