/* pyvalue.c: Python objects the code uses (constants, globals, closure
 * cells, module attributes) as IR: numbers, bools, None, strings and tuples
 * of them become constants, NumPy scalars casts of constants, functions and
 * compile-time objects (modules, intrinsics, dtypes, global arrays) IR_OBJ
 * values known by a dotted path; and IR constants back as Python objects. */
#include <string.h>

#include "gj.h"

static Instr *const_tuple(Builder *bd, PyObject *o, int depth) {
    Py_ssize_t n = PyTuple_GET_SIZE(o);
    if (n > LIMIT_TUPLE) {
        error_limit(bd->c, bd->loc, "items in a tuple", LIMIT_TUPLE);
        return NULL;
    }
    /* a tuple can hold one inner tuple many times over: count what it unfolds to */
    if ((bd->const_items += (int)n) > LIMIT_TUPLE) {
        error_limit(bd->c, bd->loc, "items in a constant tuple, counting those of nested tuples", LIMIT_TUPLE);
        return NULL;
    }
    Instr *t = new_const(bd);
    if (!t) return NULL;
    t->ckind = CK_TUPLE;
    t->nargs = (int)n;
    t->args = arena_alloc(&bd->c->arena, sizeof(Instr *) * (size_t)(n ? n : 1));
    if (!t->args) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        t->args[i] = const_from_py(bd, PyTuple_GET_ITEM(o, i), depth + 1);
        if (!t->args[i]) return NULL;
    }
    return t;
}

/* A number, bool, None, str or tuple of them as an IR constant; NULL with no
 * exception set if `o` is none of these. */
Instr *const_from_py(Builder *bd, PyObject *o, int depth) {
    Ctx *c = bd->c;
    if (depth > LIMIT_CONST_NESTING) {
        error_limit(c, bd->loc, "levels of tuples nested in a constant", LIMIT_CONST_NESTING);
        return NULL;
    }
    Instr *k;
    if (depth == 0) bd->const_items = 0;
    if (o == Py_Ellipsis) {
        if (!(k = new_const(bd))) return NULL;
        k->ckind = CK_ELLIPSIS;
        return k;
    }
    if (o == Py_None || PyBool_Check(o)) {
        if (!(k = new_const(bd))) return NULL;
        k->ckind = o == Py_None ? CK_NONE : CK_BOOL;
        k->ival = o == Py_True;
        return k;
    }
    if (PyLong_Check(o)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow) {
            unsigned long long u = PyLong_AsUnsignedLongLong(o);
            if (PyErr_Occurred()) {
                PyErr_Clear();
                error_at(c, ERR_TYPING, bd->loc, "integer constant does not fit in 64 bits");
                return NULL;
            }
            v = (long long)u;
        }
        if (!(k = new_const(bd))) return NULL;
        k->ckind = CK_INT;
        k->ival = v;
        k->is_uint64 = overflow;
        return k;
    }
    if (PyFloat_Check(o)) {
        if (!(k = new_const(bd))) return NULL;
        k->ckind = CK_FLOAT;
        k->fval = PyFloat_AS_DOUBLE(o);
        return k;
    }
    if (PyComplex_Check(o)) {
        if (!(k = new_const(bd))) return NULL;
        k->ckind = CK_COMPLEX;
        k->fval = PyComplex_RealAsDouble(o);
        k->fimag = PyComplex_ImagAsDouble(o);
        return k;
    }
    if (PyUnicode_Check(o)) {
        const char *s = PyUnicode_AsUTF8(o);
        if (!s) return NULL;
        if (!(k = new_const(bd))) return NULL;
        k->ckind = CK_STR;
        k->name = arena_strdup(&c->arena, s);
        return k;
    }
    if (PyTuple_Check(o)) return const_tuple(bd, o, depth);
    return NULL;
}

static PyObject *path_registry; /* id(obj) -> path; set by gpujit at import */

int build_set_registry(PyObject *dict) {
    Py_XINCREF(dict);
    Py_XSETREF(path_registry, dict);
    return 0;
}

/* The dotted path that names a compile-time object, or NULL (no exception). */
static char *object_path(Ctx *c, PyObject *o) {
    if (path_registry) {
        PyObject *key = PyLong_FromVoidPtr(o);
        if (!key) return NULL;
        PyObject *p = PyDict_GetItemWithError(path_registry, key);
        Py_DECREF(key);
        if (p && PyUnicode_Check(p)) return arena_strdup(&c->arena, PyUnicode_AsUTF8(p));
        if (PyErr_Occurred()) return NULL;
    }
    if (PyModule_Check(o)) {
        const char *n = PyModule_GetName(o);
        if (!n) {
            PyErr_Clear();
            return NULL;
        }
        return arena_strdup(&c->arena, n);
    }
    if (PyCFunction_Check(o) || PyType_Check(o)) {
        PyObject *mod = PyObject_GetAttrString(o, "__module__");
        PyObject *qn = PyObject_GetAttrString(o, "__qualname__");
        char *r = NULL;
        if (mod && qn && PyUnicode_Check(mod) && PyUnicode_Check(qn))
            r = arena_printf(&c->arena, "%s.%s", PyUnicode_AsUTF8(mod), PyUnicode_AsUTF8(qn));
        Py_XDECREF(mod);
        Py_XDECREF(qn);
        PyErr_Clear();
        return r;
    }
    return NULL;
}

const char *py_type_name(PyObject *o) { return Py_TYPE(o)->tp_name; }

/* A NumPy scalar (np.int32(3), np.float32(0.5), np.bool_(True)...) as a
 * constant of its dtype: its value converted by the dtype's cast, which LLVM
 * folds. NULL with no exception if `o` is not a NumPy scalar of a dtype
 * kernels have. */
static Instr *numpy_scalar(Builder *bd, PyObject *o) {
    PyObject *mod = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__module__");
    bool numpy = mod && PyUnicode_Check(mod) && strcmp(PyUnicode_AsUTF8(mod), "numpy") == 0;
    Py_XDECREF(mod);
    PyErr_Clear();
    if (!numpy || strcmp(Py_TYPE(o)->tp_name, "numpy.ndarray") == 0 || !PyObject_HasAttrString(o, "dtype") ||
        !PyObject_HasAttrString(o, "item"))
        return NULL;
    PyObject *dt = PyObject_GetAttrString(o, "dtype");
    PyObject *name = dt ? PyObject_GetAttrString(dt, "name") : NULL;
    Py_XDECREF(dt);
    char path[64] = "";
    if (name && PyUnicode_Check(name)) snprintf(path, sizeof path, "numpy.%s", PyUnicode_AsUTF8(name));
    Py_XDECREF(name);
    PyErr_Clear();
    const Intrinsic *k = intrinsic_lookup(path);
    if (!k || k->kind != IK_CAST) return NULL;
    PyObject *item = PyObject_CallMethod(o, "item", NULL);
    if (!item) return NULL;
    Instr *v = const_from_py(bd, item, 0);
    Py_DECREF(item);
    if (!v) return NULL;
    Instr *f = build_emit(bd, IR_OBJ, 0), *call = build_emit(bd, IR_CALL, 2);
    if (!f || !call) return NULL;
    f->name = arena_strdup(&bd->c->arena, path);
    f->pyobj = (PyObject *)Py_TYPE(o); /* NumPy's scalar types live as long as NumPy */
    call->args[0] = f;
    call->args[1] = v;
    return call;
}

/* A NumPy dtype instance (np.dtype('f4')): its class derives from numpy.dtype. */
static bool is_numpy_dtype(PyObject *o) {
    for (PyTypeObject *t = Py_TYPE(o); t; t = t->tp_base)
        if (strcmp(t->tp_name, "numpy.dtype") == 0) return true;
    return false;
}

/* A structured dtype (np.dtype with fields) or a gpujit Record type, as
 * the string constant of its Record spelling, which a dtype argument
 * (shared.array(n, dtype=rec)) parses; NULL with no exception if `o` is
 * neither. */
static Instr *record_dtype(Builder *bd, PyObject *o) {
    PyObject *spelling = NULL;
    if (is_numpy_dtype(o)) {
        PyObject *fields = PyObject_GetAttrString(o, "fields");
        if (!fields) return NULL;
        int has = fields != Py_None;
        Py_DECREF(fields);
        if (!has) return NULL;
        PyObject *mod = PyImport_ImportModule("gpujit.typing");
        spelling = mod ? PyObject_CallMethod(mod, "dtype_name", "O", o) : NULL;
        Py_XDECREF(mod);
    } else {
        PyTypeObject *t = Py_TYPE(o);
        if (strcmp(t->tp_name, "Record") != 0 || !PyObject_HasAttrString(o, "fields")) return NULL;
        spelling = PyObject_Str(o);
    }
    if (!spelling) return NULL;
    Instr *k = new_const(bd);
    const char *s = PyUnicode_AsUTF8(spelling);
    if (k && s) {
        k->ckind = CK_STR;
        k->name = arena_strdup(&bd->c->arena, s);
    }
    Py_DECREF(spelling);
    return s ? k : NULL;
}

/* A tuple holding a NumPy array, at any depth. */
static bool holds_array(PyObject *o) {
    if (strcmp(Py_TYPE(o)->tp_name, "numpy.ndarray") == 0) return true;
    if (!PyTuple_Check(o)) return false;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(o); k++)
        if (holds_array(PyTuple_GET_ITEM(o, k))) return true;
    return false;
}

/* Whether numba's package made o's class (its module is numba or numba.*, not numba.cuda.*). */
static bool made_by_numba(PyObject *o) {
    PyObject *mod = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__module__");
    const char *m = mod && PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : NULL;
    bool yes = m && (!strcmp(m, "numba") || (!strncmp(m, "numba.", 6) && strncmp(m, "numba.cuda", 10)));
    Py_XDECREF(mod);
    PyErr_Clear();
    return yes;
}

/* A global, closure cell or module attribute used in a kernel. */
Instr *value_from_py(Builder *bd, PyObject *o, const char *what) {
    Ctx *c = bd->c;
    Instr *rec = record_dtype(bd, o);
    if (rec || PyErr_Occurred()) return rec;
    if (!PyLong_Check(o) && !PyFloat_Check(o) && !PyBool_Check(o) && !PyComplex_Check(o)) {
        Instr *k = numpy_scalar(bd, o);
        if (k || PyErr_Occurred()) return k;
    }
    if (PyTuple_Check(o) && holds_array(o)) { /* each item as it would be alone: arrays become constant arrays */
        Py_ssize_t n = PyTuple_GET_SIZE(o);
        Instr **items = arena_alloc(&c->arena, sizeof(Instr *) * (size_t)(n ? n : 1)), *t;
        if (!items) return NULL;
        for (Py_ssize_t k = 0; k < n; k++) /* the items come before the tuple that uses them */
            if (!(items[k] = value_from_py(bd, PyTuple_GET_ITEM(o, k), what))) return NULL;
        if (!(t = build_emit(bd, IR_TUPLE, (int)n))) return NULL;
        for (Py_ssize_t k = 0; k < n; k++) t->args[k] = items[k];
        return t;
    }
    if (PyTuple_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o) || PyBool_Check(o) ||
        o == Py_None) {
        Instr *k = const_from_py(bd, o, 0);
        if (!k && !PyErr_Occurred())
            error_at(c, ERR_UNSUPPORTED, bd->loc, "%s: a tuple holding values other than numbers", what);
        return k;
    }
    /* a Python function, or a gpujit device function: compiled where it is called */
    PyObject *func = PyFunction_Check(o) ? o : NULL;
    if (PyCallable_Check(o) && !PyType_Check(o) && !PyModule_Check(o)) {
        /* pdb.set_trace, ipdb's, pytest's: the debugger's Python, not a device function */
        PyObject *m = PyObject_GetAttrString(o, "__module__");
        bool dbg = m && PyUnicode_Check(m) && is_debugger_module(PyUnicode_AsUTF8(m));
        Py_XDECREF(m);
        PyErr_Clear();
        if (dbg) return error_at(c, ERR_UNSUPPORTED, bd->loc, "%s: %s", what, DEBUGGER_HINT), NULL;
    }
    if (func && PyDict_GetItemString(PyImport_GetModuleDict(), "numba.core.typing.templates")) {
        /* numba's @overload(func, target='cuda') registrations, made gpujit's (numba_interop) */
        PyObject *mod = PyImport_ImportModule("gpujit.numba_interop");
        PyObject *r = mod ? PyObject_CallMethod(mod, "sync_overloads", NULL) : NULL;
        Py_XDECREF(mod);
        if (!r) return NULL;
        Py_DECREF(r);
    }
    if (!func && PyObject_HasAttrString(o, "__gpujit_device__")) {
        /* what kernels call, where it is not py_func itself (a device function's signatures) */
        func = PyObject_GetAttrString(o, "__gpujit_func__");
        if (!func) {
            PyErr_Clear();
            func = PyObject_GetAttrString(o, "py_func");
        }
    }
    else if (func)
        Py_INCREF(func);
    if (func && PyFunction_Check(func)) {
        Instr *v = build_emit(bd, IR_OBJ, 0);
        if (!v) return Py_DECREF(func), NULL;
        PyObject *qn = PyObject_GetAttrString(func, "__qualname__");
        v->name = arena_printf(&c->arena, "%s", qn && PyUnicode_Check(qn) ? PyUnicode_AsUTF8(qn) : "function");
        Py_XDECREF(qn);
        PyErr_Clear();
        v->pyobj = o;
        v->func = func; /* borrowed below: `o` (a global or a cell) keeps its py_func alive */
        Py_DECREF(func);
        return v;
    }
    Py_XDECREF(func);
    PyErr_Clear();
    char *path = NULL;
    if (is_numpy_dtype(o)) { /* names its scalar type, as np.float32 does */
        PyObject *st = PyObject_GetAttrString(o, "type");
        if (!st) return NULL;
        path = object_path(c, st);
        Py_DECREF(st);
    } else {
        path = object_path(c, o);
    }
    if (!path && !PyErr_Occurred() && strcmp(Py_TYPE(o)->tp_name, "numpy.ndarray") == 0)
        path = PATH_GLOBAL_ARRAY; /* its contents become constant memory (typeinfer.c) */
    if (!path && !PyErr_Occurred() &&
        (PyObject_HasAttrString(o, "__cuda_array_interface__") || PyObject_HasAttrString(o, "device_ctypes_pointer")))
        path = PATH_CAPTURED_ARRAY; /* captured by reference: its address is baked in */
    if (!path && !PyErr_Occurred() && PyObject_HasAttrString(o, "__gpujit_extern__"))
        path = PATH_EXTERN_FN; /* declare_device's: called through externs.c */
    PyErr_Clear();
    if (!path) {
        /* an object that says why kernels cannot use it (gpujit.linking's external functions) */
        PyObject *why = PyObject_GetAttrString(o, "__gpujit_unsupported__");
        if (why && PyUnicode_Check(why)) {
            error_at(c, ERR_UNSUPPORTED, bd->loc, "%s: %s", what, PyUnicode_AsUTF8(why));
            Py_DECREF(why);
            return NULL;
        }
        Py_XDECREF(why);
        PyErr_Clear();
        /* an object numba cannot type at all (a gufunc): its TypingError, naming the global */
        why = PyObject_GetAttrString(o, "__gpujit_untyped__");
        if (why && PyUnicode_Check(why)) {
            const char *q = strchr(what, '\'');
            error_at(c, ERR_TYPING, bd->loc, "Untyped global name %s: %s", q ? q : what, PyUnicode_AsUTF8(why));
            Py_DECREF(why);
            return NULL;
        }
        Py_XDECREF(why);
        PyErr_Clear();
        /* numba's own objects (numba.float32, an @njit function): gpujit.numba_interop's counterpart */
        if (made_by_numba(o)) {
            PyObject *mod = PyImport_ImportModule("gpujit.numba_interop");
            PyObject *sub = mod ? PyObject_CallMethod(mod, "counterpart", "O", o) : NULL;
            Py_XDECREF(mod);
            if (!sub) return NULL;
            if (sub != Py_None) { /* numba_interop keeps it alive, with o */
                Py_DECREF(sub);
                return value_from_py(bd, sub, what);
            }
            Py_DECREF(sub);
        }
        /* a NumPy function kernels do not have (np.ones_like, np.dot: array-function dispatchers) */
        if (!PyErr_Occurred() && PyCallable_Check(o)) {
            PyObject *m = PyObject_GetAttrString(o, "__module__"), *n = PyObject_GetAttrString(o, "__name__");
            PyErr_Clear();
            if (m && n && PyUnicode_Check(m) && PyUnicode_Check(n) &&
                (!strcmp(PyUnicode_AsUTF8(m), "numpy") || !strncmp(PyUnicode_AsUTF8(m), "numpy.", 6))) {
                char *full = arena_printf(&c->arena, "%s.%s", PyUnicode_AsUTF8(m), PyUnicode_AsUTF8(n));
                error_at(c, ERR_UNSUPPORTED, bd->loc, "%s is not supported in kernels%s", full,
                         numpy_unsupported_hint(full));
                Py_DECREF(m);
                Py_DECREF(n);
                return NULL;
            }
            Py_XDECREF(m);
            Py_XDECREF(n);
        }
        if (!PyErr_Occurred())
            error_at(c, ERR_UNSUPPORTED, bd->loc,
                     "%s has type '%s'; kernels can use globals that hold ints, floats, bools, "
                     "tuples of them, modules and gpujit/math functions",
                     what, py_type_name(o));
        return NULL;
    }
    Instr *v = build_emit(bd, IR_OBJ, 0);
    if (!v) return NULL;
    v->name = path;
    v->pyobj = o; /* borrowed: kept alive by the module or globals */
    return v;
}

Instr *load_global(Builder *bd, const char *name) {
    Ctx *c = bd->c;
    PyObject *o = NULL;
    if (c->globals) {
        o = PyDict_GetItemString(c->globals, name);
        if (!o) {
            PyObject *bi = PyDict_GetItemString(c->globals, "__builtins__");
            if (bi && PyModule_Check(bi)) bi = PyModule_GetDict(bi);
            if (bi && PyDict_Check(bi)) o = PyDict_GetItemString(bi, name);
        }
    }
    if (!o) {
        /* No globals (the C API): the usual module names and builtins. */
        static const char *mods[][2] = {{"math", "math"},     {"gpu", "gpujit"}, {"cuda", "gpujit"},
                                        {"gpujit", "gpujit"}, {"np", "numpy"},   {"numpy", "numpy"}};
        for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++)
            if (!c->globals && strcmp(name, mods[i][0]) == 0) {
                PyObject *m = PyImport_ImportModule(mods[i][1]);
                if (!m) return NULL;
                Instr *v = value_from_py(bd, m, name);
                Py_DECREF(m); /* sys.modules keeps it */
                return v;
            }
        PyObject *bi = PyEval_GetBuiltins();
        if (bi) o = PyDict_GetItemString(bi, name);
    }
    if (!o) {
        error_at(c, ERR_TYPING, bd->loc, "name '%s' is not defined", name);
        return NULL;
    }
    char what[300];
    snprintf(what, sizeof what, "global '%s'", name);
    return value_from_py(bd, o, what);
}

bool is_enum_member(PyObject *o) {
    PyObject *mod = PyImport_ImportModule("enum");
    PyObject *base = mod ? PyObject_GetAttrString(mod, "Enum") : NULL;
    int r = base ? PyObject_IsInstance(o, base) : 0;
    Py_XDECREF(base);
    Py_XDECREF(mod);
    PyErr_Clear();
    return r > 0;
}

/* Does comparison `in` compare two Enum members the code names (Color.red)? */
bool enum_members(const Instr *in) {
    for (int k = 0; k < 2; k++) {
        const Instr *a = in->args[k];
        if (a->op != IR_OBJ || !a->pyobj || !is_enum_member(a->pyobj) || PyLong_Check(a->pyobj)) return false;
    }
    return true;
}

/* An IntEnum's member is an int of its class, so an int constant. Another
 * Enum's member is a compile-time object named by its class and name: its
 * comparisons with members are settled at compile time, as Python settles
 * them, and `.value` reads its value. */
Instr *enum_member_value(Builder *bd, PyObject *cls, PyObject *m) {
    if (!PyObject_TypeCheck(m, (PyTypeObject *)cls)) return NULL;
    if (PyLong_Check(m)) return const_from_py(bd, m, 0);
    if (!is_enum_member(m)) return NULL;
    PyObject *name = PyObject_GetAttrString(m, "name");
    char *cp = object_path(bd->c, cls);
    PyErr_Clear();
    Instr *v = name && PyUnicode_Check(name) && cp ? build_emit(bd, IR_OBJ, 0) : NULL;
    if (v) {
        v->name = arena_printf(&bd->c->arena, "%s.%s", cp, PyUnicode_AsUTF8(name));
        v->pyobj = m; /* borrowed: its class keeps it */
    }
    Py_XDECREF(name);
    return v;
}

Instr *load_attr(Builder *bd, Instr *obj, const char *name) {
    Ctx *c = bd->c;
    if (obj->op == IR_ATTR && !strcmp(obj->name, "ctypes") && !strcmp(name, "data")) {
        obj->name = "ctypes.data"; /* a.ctypes.data, an array's address, is one attribute */
        return obj;
    }
    if (obj->op == IR_OBJ && obj->pyobj && PyModule_Check(obj->pyobj)) {
        PyObject *a = PyObject_GetAttrString(obj->pyobj, name);
        if (!a) {
            PyErr_Clear();
            error_at(c, ERR_TYPING, bd->loc, "module '%s' has no attribute '%s'", obj->name, name);
            return NULL;
        }
        char what[300];
        snprintf(what, sizeof what, "%s.%s", obj->name, name);
        Instr *v = value_from_py(bd, a, what);
        Py_DECREF(a); /* the module keeps it */
        return v;
    }
    if (obj->op == IR_OBJ && obj->pyobj && !strcmp(name, "value") && is_enum_member(obj->pyobj)) {
        PyObject *a = PyObject_GetAttrString(obj->pyobj, name);
        if (!a) return NULL;
        Instr *v = value_from_py(bd, a, "an Enum member's value");
        Py_DECREF(a); /* the member keeps it */
        return v;
    }
    if (obj->op == IR_OBJ && obj->pyobj && PyType_Check(obj->pyobj)) {
        /* an Enum's member (RequestError.not_found, Color.red) */
        PyObject *a = PyObject_GetAttrString(obj->pyobj, name);
        PyErr_Clear();
        Instr *k = a ? enum_member_value(bd, obj->pyobj, a) : NULL;
        Py_XDECREF(a); /* the class keeps its members */
        if (k || PyErr_Occurred()) return k;
    }
    bool array =
            obj->op == IR_OBJ && (!strcmp(obj->name, PATH_GLOBAL_ARRAY) || !strcmp(obj->name, PATH_CAPTURED_ARRAY));
    if (obj->op == IR_OBJ && !array) {
        /* gpujit's namespaces (threadIdx, shared, atomic...): resolved by path */
        Instr *v = build_emit(bd, IR_OBJ, 0);
        if (!v) return NULL;
        v->name = arena_printf(&c->arena, "%s.%s", obj->name, name);
        return v;
    }
    Instr *v = build_emit(bd, IR_ATTR, 1);
    if (!v) return NULL;
    v->args[0] = obj;
    v->name = arena_strdup(&c->arena, name);
    return v;
}

/* An IR constant as the Python object it came from (new reference). */
PyObject *py_from_const(const Instr *k) {
    switch (k->ckind) {
    case CK_INT:
        return k->is_uint64 ? PyLong_FromUnsignedLongLong((unsigned long long)k->ival)
                            : PyLong_FromLongLong((long long)k->ival);
    case CK_FLOAT: return PyFloat_FromDouble(k->fval);
    case CK_BOOL: return PyBool_FromLong((long)k->ival);
    case CK_NONE: Py_RETURN_NONE;
    case CK_STR: return PyUnicode_FromString(k->name);
    case CK_COMPLEX: return PyComplex_FromDoubles(k->fval, k->fimag);
    case CK_TUPLE: {
        PyObject *t = PyTuple_New(k->nargs);
        for (int i = 0; t && i < k->nargs; i++) {
            PyObject *x = py_from_const(k->args[i]);
            if (!x) return Py_DECREF(t), NULL;
            PyTuple_SET_ITEM(t, i, x);
        }
        return t;
    }
    }
    return NULL;
}
