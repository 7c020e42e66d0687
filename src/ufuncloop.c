/* ufuncloop.c: NumPy ufuncs on arrays in kernels (np.sin(x, out), np.add(a, b, out)).
 * Typing such a call asks gpujit.ufuncloop for a device function written in Python for the
 * ufunc and its arguments' dimensions (a loop over out's elements applying the ufunc to
 * scalars, with NumPy's broadcasting); the call becomes a call of that function, compiled as
 * any device function. Calls on real scalars alone never come here (intrinsics.c types them);
 * on complex scalars, NumPy's formulas written in Python stand in where the intrinsics take
 * real numbers only. */
#include <string.h>

#include "gj.h"

/* The Python exception raised by the generator, as a typing error at the call. */
static Type *report(Ctx *c, Instr *in) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *s = value ? PyObject_Str(value) : NULL;
    const char *msg = s ? PyUnicode_AsUTF8(s) : NULL;
    char *text = arena_strdup(&c->arena, msg ? msg : "cannot make the ufunc's loop");
    Py_XDECREF(s);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyErr_Clear();
    TERR("%s", text);
}

/* Is "numpy.X" (or "numpy.sub.X") a NumPy ufunc (np.sqrt), rather than another function
 * (np.zeros)? Unknown (no numpy, no such name) counts as a ufunc: the message stays the old one. */
static bool numpy_path_is_ufunc(const char *path) {
    PyObject *np = PyImport_ImportModule("numpy");
    PyObject *ufunc = np ? PyObject_GetAttrString(np, "ufunc") : NULL, *o = np;
    Py_XINCREF(o);
    const char *p = path + 6; /* after "numpy." */
    while (o && *p) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        char name[128];
        if (len >= sizeof name) {
            Py_CLEAR(o);
            break;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        PyObject *next = PyObject_GetAttrString(o, name);
        Py_DECREF(o);
        o = next;
        p += len + (dot ? 1 : 0);
    }
    int r = o && ufunc ? PyObject_IsInstance(o, ufunc) : 1;
    Py_XDECREF(o);
    Py_XDECREF(ufunc);
    Py_XDECREF(np);
    PyErr_Clear();
    return r != 0;
}

Type *type_ufunc_loop(Ctx *c, Instr *in, bool *handled) {
    *handled = false;
    Type *f = in->args[0]->type;
    if (!f || f->kind != TY_OBJ || f->obj || !f->path || strncmp(f->path, "numpy.", 6) || in->star) return NULL;
    int n = in->nargs - 1;
    bool any_array = false;
    for (int i = 0; i < n; i++) {
        Type *t = in->args[1 + i]->type;
        if (!type_known(t)) return *handled = true, &ty_unknown;
        any_array |= t->kind == TY_ARRAY;
    }
    PyObject *fn;
    if (!any_array) {
        /* complex scalars where the scalar intrinsics take real numbers, and ufuncs with no
         * intrinsic: NumPy's formulas in Python */
        bool any_complex = false;
        for (int i = 0; i < n; i++) any_complex |= is_complex(in->args[1 + i]->type);
        if ((!any_complex && intrinsic_lookup(f->path)) || in->nkw) return NULL;
        PyObject *mod = PyImport_ImportModule("gpujit.ufuncloop");
        PyObject *names = mod ? PyTuple_New(n) : NULL;
        for (int i = 0; names && i < n; i++)
            PyTuple_SET_ITEM(names, i, PyUnicode_FromString(type_name(c, in->args[1 + i]->type)));
        fn = names ? PyObject_CallMethod(mod, "scalar_function", "sO", f->path, names) : NULL;
        Py_XDECREF(names);
        Py_XDECREF(mod);
    } else {
        if (in->nkw) TERR("keyword arguments to %s() on arrays are not supported", path_pretty(f->path));
        PyObject *mod = PyImport_ImportModule("gpujit.ufuncloop");
        PyObject *dims = mod ? PyTuple_New(n) : NULL, *cplx = dims ? PyTuple_New(n) : NULL;
        for (int i = 0; cplx && i < n; i++) {
            Type *t = in->args[1 + i]->type;
            PyTuple_SET_ITEM(dims, i, PyLong_FromLong(t->kind == TY_ARRAY ? t->ndim : 0));
            PyTuple_SET_ITEM(cplx, i, PyBool_FromLong(is_complex(t->kind == TY_ARRAY ? t->elem : t)));
        }
        fn = cplx ? PyObject_CallMethod(mod, "loop_function", "sOO", f->path, dims, cplx) : NULL;
        Py_XDECREF(dims);
        Py_XDECREF(cplx);
        Py_XDECREF(mod);
    }
    if (!fn) return *handled = true, report(c, in);
    if (fn == Py_None) {
        Py_DECREF(fn);
        if (any_array || intrinsic_lookup(f->path)) return NULL;
        *handled = true; /* a ufunc gpujit writes in Python, on types NumPy has no loop for */
        if (!numpy_path_is_ufunc(f->path))
            UNSUP("%s is not supported in kernels%s", f->path, numpy_unsupported_hint(f->path));
        const char *types = "";
        for (int i = 0; i < n; i++)
            types = arena_printf(&c->arena, "%s%s%s", types, i ? ", " : "", type_name(c, in->args[1 + i]->type));
        TERR("%s() does not take (%s)", path_pretty(f->path), types);
    }
    *handled = true;
    if (!PyFunction_Check(fn)) {
        Py_DECREF(fn);
        return (Type *)(internal_error(c, in->loc, "gpujit.ufuncloop returned no function"), NULL);
    }
    Type **at = arena_alloc(&c->arena, sizeof(Type *) * (size_t)(n + 1));
    if (!at) return Py_DECREF(fn), NULL;
    for (int i = 0; i < n; i++) {
        at[i] = in->args[1 + i]->type;
        if (at[i]->kind != TY_ARRAY && !is_number(at[i]))
            return Py_DECREF(fn), (Type *)(error_at(c, ERR_TYPING, in->loc, "argument %d of %s() is %s, not a number or an array",
                                                   i + 1, path_pretty(f->path), type_name(c, at[i])), NULL);
    }
    Func *callee = NULL;
    /* the generator's cache keeps fn (and its code, the callee's key) alive */
    int rc = compile_device_function(c, in, fn, at, n, &callee);
    Py_DECREF(fn);
    if (rc < 0) return NULL;
    in->callee = callee;
    return callee->sub->restype;
}

/* Is this call one of the loops above (a NumPy ufunc on arrays)? */
static bool is_ufunc_loop(const Instr *in) {
    const Type *f = in->args[0]->type;
    if (!in->callee || !f || f->kind != TY_OBJ || f->obj || !f->path || strncmp(f->path, "numpy.", 6)) return false;
    for (int i = 1; i < in->nargs; i++)
        if (in->args[i]->type->kind == TY_ARRAY) return true;
    return false;
}

/* With checks on, before the loop runs: every input's axes broadcast onto the
 * output's (equal, or 1), as NumPy requires. The loop itself stays inside every
 * operand (the min() in its indices), so without the checks a mismatch reads a
 * short input's last element again, and nothing outside it. */
void check_ufunc_shapes(Ctx *c, Instr *in) {
    if (!c->errbuf || !is_ufunc_loop(in)) return;
    Instr *out = in->args[in->nargs - 1];
    if (out->type->kind != TY_ARRAY) return;
    int ond = out->type->ndim;
    LLVMValueRef oshape = LLVMBuildExtractValue(c->b, val(c, out), 1, "");
    for (int i = 1; i < in->nargs - 1; i++) {
        Type *t = in->args[i]->type;
        if (t->kind != TY_ARRAY) continue;
        LLVMValueRef ishape = LLVMBuildExtractValue(c->b, val(c, in->args[i]), 1, "");
        for (int k = 0; k < t->ndim; k++) {
            int ax = ond - t->ndim + k;
            LLVMValueRef n = LLVMBuildExtractValue(c->b, ishape, (unsigned)k, "");
            LLVMValueRef want = LLVMBuildExtractValue(c->b, oshape, (unsigned)ax, "");
            LLVMValueRef bad = LLVMBuildAnd(c->b, LLVMBuildICmp(c->b, LLVMIntNE, n, ci64(c, 1), ""),
                                            LLVMBuildICmp(c->b, LLVMIntNE, n, want, ""), "");
            check_shape(c, bad, GJ_SHAPE_UFUNC | i << 24, ax, ond, want, n);
        }
    }
}
