/* pymodule.c: the gpujit._core extension module: the compiler's Python entry
 * point (compile -> CompiledKernel), its signature parser, the path registry
 * that names gpujit's own objects, and the runtime's types (added by runtime/
 * files). */
#include <ctype.h>
#include <stddef.h>
#include <string.h>

#include "gj.h"
#include "runtime.h"
#include "cuda.h"
#include "cpu.h"

typedef struct {
    PyObject_HEAD GjOutput *out;
    PyObject *signature;
    PyObject *name;
    PyObject *weakrefs; /* runtime/module.c unloads a kernel's modules when it dies */
    PyObject *link; /* what runtime/module.c links with the PTX: a tuple of (kind, name, bytes), or NULL */
} CompiledKernel;

static void ck_dealloc(CompiledKernel *self) {
    if (self->weakrefs) PyObject_ClearWeakRefs((PyObject *)self);
    gj_output_free(self->out);
    Py_XDECREF(self->signature);
    Py_XDECREF(self->name);
    Py_XDECREF(self->link);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *str_or_none(const char *s) {
    if (!s) Py_RETURN_NONE;
    return PyUnicode_FromString(s);
}

static PyObject *ck_get(CompiledKernel *self, void *which) {
    GjOutput *o = self->out;
    switch ((intptr_t)which) {
    case 0: return str_or_none(o->ptx);
    case 1: return str_or_none(o->llvm);
    case 2: return str_or_none(o->types);
    case 3: return str_or_none(o->symbol);
    case 4: return str_or_none(o->restype);
    case 5: return PyUnicode_FromString(target_for(o->target)->api_name);
    case 6: return PyLong_FromSize_t(o->shared_bytes);
    case 7: return PyBool_FromLong(o->uses_barrier);
    case 8: return Py_NewRef(self->signature);
    case 12: return PyBool_FromLong(o->cooperative);
    case 13: return o->externs ? Py_NewRef(o->externs) : PyTuple_New(0);
    case 14: return self->link ? Py_NewRef(self->link) : PyTuple_New(0);
    case 9: {
        PyObject *l = PyList_New(o->nargs);
        for (int i = 0; l && i < o->nargs; i++)
            PyList_SET_ITEM(l, i,
                            Py_BuildValue("(iiiC)", o->args[i].kind, o->args[i].dtype, o->args[i].ndim,
                                          o->args[i].layout ? o->args[i].layout : ' '));
        return l;
    }
    case 10: return Py_NewRef(self->name);
    case 11: {
        PyObject *l = PyList_New(o->nparams);
        for (int i = 0; l && i < o->nparams; i++) {
            const GjParam *p = &o->params[i];
            PyObject *t = Py_BuildValue("(siiiii)", gj_param_role_name(p->role), p->arg, p->axis, p->dtype, p->size,
                                        p->align);
            if (!t)
                Py_CLEAR(l);
            else
                PyList_SET_ITEM(l, i, t);
        }
        return l;
    }
    }
    Py_RETURN_NONE;
}

/* Setting it drops the modules loaded so far: the next launch links anew. */
static int ck_set_link(CompiledKernel *self, PyObject *v, void *unused) {
    static const char *const kinds[] = {"ptx", "cubin", "fatbin", "o", "a"};
    if (!v || !PyTuple_Check(v))
        return PyErr_SetString(PyExc_TypeError, "link is a tuple of (kind, name, bytes)"), -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(v); i++) {
        PyObject *it = PyTuple_GET_ITEM(v, i);
        const char *kind;
        int known = 0;
        if (!PyTuple_Check(it) || PyTuple_GET_SIZE(it) != 3 || !PyUnicode_Check(PyTuple_GET_ITEM(it, 0)) ||
            !PyUnicode_Check(PyTuple_GET_ITEM(it, 1)) || !PyBytes_Check(PyTuple_GET_ITEM(it, 2)) ||
            !(kind = PyUnicode_AsUTF8(PyTuple_GET_ITEM(it, 0))))
            return PyErr_SetString(PyExc_TypeError, "link is a tuple of (kind, name, bytes)"), -1;
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) known |= !strcmp(kind, kinds[k]);
        if (!known) return PyErr_Format(PyExc_ValueError, "link: unknown kind '%s'", kind), -1;
    }
    Py_XSETREF(self->link, PyTuple_GET_SIZE(v) ? Py_NewRef(v) : NULL);
    gj_module_forget((PyObject *)self);
    return 0;
}

/* clang-format off */
static PyGetSetDef ck_getset[] = {
    {"ptx", (getter)ck_get, NULL, "PTX text (cuda target)", (void *)0},
    {"llvm", (getter)ck_get, NULL, "optimised LLVM IR", (void *)1},
    {"types", (getter)ck_get, NULL, "typed locals per line", (void *)2},
    {"symbol", (getter)ck_get, NULL, "entry symbol", (void *)3},
    {"restype", (getter)ck_get, NULL, "return type", (void *)4},
    {"target", (getter)ck_get, NULL, "'cuda' or 'cpu'", (void *)5},
    {"shared_bytes", (getter)ck_get, NULL, "static shared memory in bytes", (void *)6},
    {"uses_barrier", (getter)ck_get, NULL, "calls syncthreads()", (void *)7},
    {"signature", (getter)ck_get, NULL, "the signature compiled", (void *)8},
    {"args", (getter)ck_get, NULL, "(kind, dtype, ndim, layout) per argument", (void *)9},
    {"name", (getter)ck_get, NULL, "the Python function's name", (void *)10},
    {"params", (getter)ck_get, NULL,
     "the kernel ABI: (role, arg, axis, dtype, size, align) per flattened parameter", (void *)11},
    {"cooperative", (getter)ck_get, NULL, "calls cg.this_grid(): launched cooperatively", (void *)12},
    {"externs", (getter)ck_get, NULL, "the external functions (declare_device) the kernel calls", (void *)13},
    {"link", (getter)ck_get, (setter)ck_set_link,
     "what is linked with the PTX when the kernel loads: (kind, name, bytes) per item, kind one of 'ptx', "
     "'cubin', 'fatbin', 'o', 'a'", (void *)14},
    {NULL},
};
/* clang-format on */

/* clang-format off */
static PyTypeObject CompiledKernel_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpujit._core.CompiledKernel",
    .tp_basicsize = sizeof(CompiledKernel),
    .tp_dealloc = (destructor)ck_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One specialisation of a kernel, compiled for one target.",
    .tp_getset = ck_getset,
    .tp_weaklistoffset = offsetof(CompiledKernel, weakrefs),
};
/* clang-format on */

GjOutput *gj_compiled_output(PyObject *obj) {
    if (!obj || Py_TYPE(obj) != &CompiledKernel_Type) return NULL;
    return ((CompiledKernel *)obj)->out;
}

PyObject *gj_compiled_link(PyObject *obj) {
    if (!obj || Py_TYPE(obj) != &CompiledKernel_Type) return NULL;
    return ((CompiledKernel *)obj)->link;
}

/* cc: a pair of ints (major, minor), or numba's triple with a suffix string
 * ((9, 0, 'a'): sm_90a); anything else is a ValueError. Which are compute
 * capabilities is check_cc's (emit.c) to say. */
static int parse_cc(PyObject *o, int *major, int *minor, char *suffix) {
    PyObject *seq = o && (PyTuple_Check(o) || PyList_Check(o)) ? PySequence_Fast(o, "") : NULL;
    Py_ssize_t n = seq ? PySequence_Fast_GET_SIZE(seq) : 0;
    int ok = n == 2 || n == 3;
    *suffix = 0;
    if (ok && n == 3) {
        PyObject *s = PySequence_Fast_GET_ITEM(seq, 2);
        const char *t = PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : NULL;
        ok = t && strlen(t) == 1 && isalpha((unsigned char)t[0]);
        if (ok) *suffix = t[0];
    }
    for (int i = 0; ok && i < 2; i++) {
        PyObject *v = PySequence_Fast_GET_ITEM(seq, i);
        int overflow = 0;
        long x = PyLong_Check(v) && !PyBool_Check(v) ? PyLong_AsLongAndOverflow(v, &overflow) : 0;
        ok = PyLong_Check(v) && !PyBool_Check(v) && !overflow && x >= INT_MIN && x <= INT_MAX;
        *(i ? minor : major) = (int)x;
    }
    Py_XDECREF(seq);
    PyErr_Clear();
    if (ok) return 0;
    PyObject *r = PyObject_Repr(o);
    PyErr_Format(PyExc_ValueError,
                 "cc must be a (major, minor) pair of ints such as (9, 0), or (9, 0, 'a') for sm_90a, not %s",
                 r ? PyUnicode_AsUTF8(r) : "?");
    Py_XDECREF(r);
    return -1;
}

/* A CompiledKernel owning `out` (freed here if the object cannot be made). */
static PyObject *compiled_kernel(GjOutput *out, PyObject *signature, PyObject *name) {
    CompiledKernel *ck = PyObject_New(CompiledKernel, &CompiledKernel_Type);
    if (!ck) {
        gj_output_free(out);
        return NULL;
    }
    ck->out = out;
    ck->weakrefs = NULL;
    ck->link = NULL;
    ck->signature = Py_NewRef(signature);
    ck->name = Py_NewRef(name);
    return (PyObject *)ck;
}

/* The environment variables the C side reads, checked before anything uses them: 0, or -1 with
 * a ValueError whose one line says which variable is wrong and what it takes. */
static int env_check(void) {
    if (diag_env_check() < 0 || gj_target_env_check() < 0) return -1;
    const char *var, *e = gj_cpu_env_error(&var);
    if (e) return PyErr_Format(PyExc_ValueError, "%s='%s': %s", var, getenv(var), e), -1;
    return 0;
}

static PyObject *py_cpu_settings(PyObject *mod, PyObject *unused) {
    (void)mod, (void)unused;
    long threads, stack;
    gj_cpu_settings(&threads, &stack);
    return Py_BuildValue("{s:l,s:l}", "threads", threads, "stack", stack);
}

static PyObject *py_check_environment(PyObject *mod, PyObject *unused) {
    (void)mod, (void)unused;
    if (env_check() < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_compile(PyObject *mod, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"code",     "globals", "closure", "sig",  "target",    "cc",          "fastmath",
                             "lineinfo", "debug",   "device",  "name", "keep_llvm", "boundscheck",
                             "launch_bounds", "keep_bitcode", "opt", "racecheck", NULL};
    PyObject *code, *globals = Py_None, *closure = Py_None, *cc = NULL, *bounds = NULL;
    const char *sig, *target = "cuda", *name = NULL;
    int cc_major = 9, cc_minor = 0, fastmath = 0, lineinfo = 0, debug = 0, device = 0, keep_llvm = 0, boundscheck = 0,
        keep_bitcode = 0, opt_on = 1, racecheck = 0;
    if (env_check() < 0) return NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!OOs|sOppppzppOppp", kwlist, &PyCode_Type, &code, &globals, &closure,
                                     &sig, &target, &cc, &fastmath, &lineinfo, &debug, &device, &name, &keep_llvm,
                                     &boundscheck, &bounds, &keep_bitcode, &opt_on, &racecheck))
        return NULL;
    GjOptions opt = {0};
    int kind = 0;
    while (target_for(kind) && strcmp(target, target_for(kind)->api_name)) kind++;
    if (!target_for(kind)) return PyErr_Format(PyExc_ValueError, "unknown target '%s' (use 'cuda' or 'cpu')", target);
    opt.target = (GjTargetKind)kind;
    opt.cc_major = cc_major;
    opt.cc_minor = cc_minor;
    if (cc && (parse_cc(cc, &opt.cc_major, &opt.cc_minor, &opt.cc_suffix) < 0 || check_cc(&opt) < 0))
        return NULL; /* checked here too: to the C API, (0, 0) means the default */
    opt.fastmath = fastmath;
    opt.lineinfo = lineinfo;
    opt.debug = debug;
    opt.boundscheck = boundscheck;
    opt.device = device;
    opt.name = name;
    opt.keep_llvm = keep_llvm;
    opt.keep_bitcode = keep_bitcode;
    opt.noopt = !opt_on;
    opt.racecheck = racecheck;
    if (bounds && bounds != Py_None) {
        PyObject *seq = PySequence_Fast(bounds, "launch_bounds must be a tuple of ints");
        if (!seq) return NULL;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        for (Py_ssize_t i = 0; i < n; i++) {
            long v = i < 3 ? PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i)) : -1;
            if (i >= 3 || v < 1 || v > INT_MAX) {
                Py_DECREF(seq);
                if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError) ||
                    PyErr_ExceptionMatches(PyExc_OverflowError)) {
                    PyErr_Clear();
                    PyErr_SetString(PyExc_ValueError, "launch_bounds are at most 3 positive ints");
                }
                return NULL;
            }
            opt.launch_bounds[i] = (int)v;
        }
        Py_DECREF(seq);
    }
    GjOutput *out;
    if (gj_compile(code, globals == Py_None ? NULL : globals, closure == Py_None ? NULL : closure, sig, &opt, &out) < 0)
        return NULL;
    PyObject *signature = PyUnicode_FromString(sig);
    if (!signature) {
        gj_output_free(out);
        return NULL;
    }
    PyObject *ck = compiled_kernel(out, signature, ((PyCodeObject *)code)->co_name);
    Py_DECREF(signature);
    return ck;
}

/* The on-disk cache's two ends (cache.c): a kernel's state as a dict, and a kernel from one. */
static PyObject *py_kernel_state(PyObject *mod, PyObject *k) {
    GjOutput *o = gj_compiled_output(k);
    if (!o) return PyErr_Format(PyExc_TypeError, "kernel_state() takes a CompiledKernel, not %.100s", Py_TYPE(k)->tp_name);
    return gj_output_state(o);
}

static PyObject *py_kernel_from_state(PyObject *mod, PyObject *args) {
    PyObject *state, *name, *sig;
    if (!PyArg_ParseTuple(args, "OUU", &state, &name, &sig)) return NULL;
    GjOutput *out = gj_output_from_state(state);
    if (!out) return NULL;
    return compiled_kernel(out, sig, name);
}

static PyObject *py_cache_environment(PyObject *mod, PyObject *unused) { return gj_cache_environment(); }

int build_set_registry(PyObject *dict);

static PyObject *py_register_paths(PyObject *mod, PyObject *dict) {
    if (!PyDict_Check(dict)) return PyErr_Format(PyExc_TypeError, "expected a dict {id(obj): path}");
    build_set_registry(dict);
    Py_RETURN_NONE;
}

/* (name, kind, dtype, ndim, layout) of one parsed type: the canonical spelling,
 * 'scalar' / 'array' / 'tuple' / 'record' / 'pointer' / 'none', the element's name, and the array's
 * ndim and layout ('C' or 'A'). */
static PyObject *type_desc(Ctx *c, const Type *t) {
    if (!t) Py_RETURN_NONE;
    bool arr = t->kind == TY_ARRAY;
    const char *kind = arr                        ? "array"
                       : t->kind == TY_TUPLE      ? "tuple"
                       : t->kind == TY_NONE       ? "none"
                       : t->kind == TY_RECORD     ? "record"
                       : t->kind == TY_CPTR       ? "pointer"
                                                  : "scalar";
    const char *dtype = arr || t->kind == TY_CPTR ? type_name(c, t->elem) : is_number(t) || t->kind == TY_RECORD ? type_name(c, t) : "";
    const char layout[2] = {arr ? t->layout : 0, 0};
    return Py_BuildValue("(sssis)", type_name(c, t), kind, dtype, arr ? t->ndim : 0, layout);
}

/* The compiler's signature parser, for the launcher's matching of eager
 * signatures (python/gpujit/typing.py): one parser, so both read a spelling alike. */
static PyObject *py_parse_signature(PyObject *mod, PyObject *arg) {
    if (!PyUnicode_Check(arg))
        return PyErr_Format(PyExc_TypeError, "a signature is a string such as 'void(float32[::1], int32)', not %.100s",
                            Py_TYPE(arg)->tp_name);
    const char *sig = PyUnicode_AsUTF8(arg);
    if (!sig) return NULL;
    Ctx c = {0};
    Type *ret, **args;
    int n;
    PyObject *r = NULL, *list = NULL, *rd = NULL;
    if (sig_parse(&c, sig, &ret, &args, &n) < 0) goto done;
    if (!(list = PyList_New(n)) || !(rd = type_desc(&c, ret))) goto done;
    for (int i = 0; i < n; i++) {
        PyObject *d = type_desc(&c, args[i]);
        if (!d) goto done;
        PyList_SET_ITEM(list, i, d);
    }
    r = PyTuple_Pack(2, rd, list);
done:
    Py_XDECREF(list);
    Py_XDECREF(rd);
    arena_free(&c.arena);
    return r;
}

/* The ptxas work-arounds alone, on any PTX text (src/ptxfix.c; for tests). */
static PyObject *py_ptxfix(PyObject *mod, PyObject *arg) {
    const char *ptx = PyUnicode_AsUTF8(arg);
    if (!ptx) return NULL;
    int changed;
    char *fixed = ptxfix_text(ptx, &changed);
    if (!fixed) return Py_NewRef(arg);
    PyObject *r = PyUnicode_FromString(fixed);
    free(fixed);
    return r;
}

/* The verifier's own test: see verify_selftest (src/compile.c). */
static PyObject *py_verify_selftest(PyObject *mod, PyObject *args) {
    PyObject *code, *globals;
    const char *sig, *what;
    if (!PyArg_ParseTuple(args, "O!Oss", &PyCode_Type, &code, &globals, &sig, &what)) return NULL;
    if (verify_selftest(code, PyDict_Check(globals) ? globals : NULL, sig, what) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_supported_ccs(PyObject *self, PyObject *unused) { return known_ccs(); }

/* What `python -m gpujit info` reports of the compiler's environment. */
static PyObject *py_libdevice_path(PyObject *self, PyObject *unused) {
    const char *why;
    const char *p = find_libdevice(&why);
    if (!p) Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(p);
}

static PyObject *py_llvm_version(PyObject *self, PyObject *unused) {
    unsigned major, minor, patch;
    LLVMGetVersion(&major, &minor, &patch);
    return Py_BuildValue("(III)", major, minor, patch);
}

/* clang-format off */
static PyMethodDef methods[] = {
    {"supported_ccs", py_supported_ccs, METH_NOARGS, "supported_ccs() -> the (major, minor) PTX is compiled for"},
    {"libdevice_path", py_libdevice_path, METH_NOARGS, "libdevice_path() -> libdevice.10.bc's path, or None"},
    {"llvm_version", py_llvm_version, METH_NOARGS, "llvm_version() -> LLVM's (major, minor, patch)"},
    {"cpu_settings", py_cpu_settings, METH_NOARGS,
     "cpu_settings() -> {'threads', 'stack'}: the threads the CPU target runs blocks on and the bytes of stack "
     "of each simulated thread, from GPUJIT_CPU_THREADS and GPUJIT_CPU_STACK"},
    {"check_environment", py_check_environment, METH_NOARGS,
     "check_environment(): None, or ValueError naming a GPUJIT_* variable the compiler or the CPU target "
     "reads (GPUJIT_DEBUG, GPUJIT_PTX_PASSES, GPUJIT_TARGET, GPUJIT_CPU_THREADS, GPUJIT_CPU_STACK) whose value "
     "it does not take"},
    {"compile", (PyCFunction)(void (*)(void))py_compile, METH_VARARGS | METH_KEYWORDS,
     "compile(code, globals, closure, sig, target='cuda', cc=(9, 0), fastmath=False, lineinfo=False, "
     "debug=False, device=False, name=None, keep_llvm=False) -> CompiledKernel"},
    {"register_paths", py_register_paths, METH_O, "register_paths({id(obj): 'gpujit.name'})"},
    {"kernel_state", py_kernel_state, METH_O,
     "kernel_state(kernel) -> dict: what the on-disk cache keeps of a kernel compiled with keep_bitcode "
     "(ValueError if it cannot be kept)"},
    {"cache_environment", py_cache_environment, METH_NOARGS,
     "cache_environment() -> {'llvm': (major, minor, patch), 'host_cpu', 'host_features', 'libdevice': path or None}"},
    {"kernel_from_state", py_kernel_from_state, METH_VARARGS,
     "kernel_from_state(state, name, signature) -> CompiledKernel, loaded (the CPU's into the JIT)"},
    {"parse_signature", py_parse_signature, METH_O,
     "parse_signature(sig) -> (restype, [argtype]); each type (name, kind, dtype, ndim, layout), restype None "
     "where the signature has none"},
    {"bytecode_table", py_bytecode_table, METH_NOARGS,
     "bytecode_table() -> the running CPython's bytecode table (src/pyversions.c) as a dict"},
    {"ptxfix", py_ptxfix, METH_O, "ptxfix(ptx) -> ptx with src/ptxfix.c's ptxas work-arounds applied"},
    {"_verify_selftest", py_verify_selftest, METH_VARARGS,
     "_verify_selftest(code, globals, sig, invariant): break one invariant of the IR; the verifier must raise"},
    {NULL},
};
/* clang-format on */

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "gpujit._core", "gpujit's compiler and runtime", -1,
                                    methods};

static int add_bf16_names(PyObject *m) {
    PyObject *names = bf16_names();
    int rc = names ? PyModule_AddObjectRef(m, "bf16_names", names) : -1;
    Py_XDECREF(names);
    return rc;
}

PyMODINIT_FUNC PyInit__core(void) {
    PyObject *m = PyModule_Create(&moddef);
    if (!m) return NULL;
    if (PyType_Ready(&CompiledKernel_Type) < 0 ||
        PyModule_AddObjectRef(m, "CompiledKernel", (PyObject *)&CompiledKernel_Type) < 0 ||
        diag_init_exceptions(m) < 0 || gj_runtime_add_to_module(m) < 0 || gj_digest_add(m) < 0 ||
        PyModule_AddIntConstant(m, "_verify_always", VERIFY_ALWAYS) < 0 || add_bf16_names(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
