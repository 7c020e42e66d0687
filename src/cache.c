/* cache.c: a compiled kernel as a dict of plain values and back, for the on-disk cache
 * (python/gpujit/caching.py pickles the dict). The GPU's kernel is its PTX; the CPU's is the
 * object code the JIT made of it, linked again as it is (emit_host_object), and the optimised
 * module's bitcode, which loading hands to the process's JIT again under a fresh symbol (every
 * kernel of the process shares the JIT's one namespace) where the object does not link,
 * skipping everything before code generation. The ABI structs travel as bytes, so a cache entry is only good for
 * the gpujit build that wrote it (caching.py keys entries by the build). */
#include <stdlib.h>
#include <string.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "gj.h"

static int put(PyObject *d, const char *key, PyObject *v) {
    if (!v) return -1;
    int rc = PyDict_SetItemString(d, key, v);
    Py_DECREF(v);
    return rc;
}
/* [str] of n C strings (NULL: an empty list) */
static PyObject *str_list(char **v, int n) {
    PyObject *l = PyList_New(v ? n : 0);
    for (int i = 0; l && v && i < n; i++) {
        PyObject *s = PyUnicode_FromString(v[i]);
        if (!s) return Py_DECREF(l), NULL;
        PyList_SET_ITEM(l, i, s);
    }
    return l;
}


static PyObject *str_or_none(const char *s) { return s ? PyUnicode_FromString(s) : Py_NewRef(Py_None); }

PyObject *gj_output_state(const GjOutput *o) {
    if (o->captures)
        return PyErr_SetString(PyExc_ValueError,
                               "it refers to global device arrays, whose addresses are compiled into it"),
               NULL;
    if (o->externs)
        return PyErr_SetString(PyExc_ValueError,
                               "it calls external functions (declare_device), whose code is linked when it loads"),
               NULL;
    if (o->target == GJ_TARGET_HOST && !o->bitcode)
        return PyErr_SetString(PyExc_ValueError, "it was compiled without keep_bitcode"), NULL;
    PyObject *d = PyDict_New(), *files = d ? str_list(o->files, o->nfiles) : NULL;
    if (!files) return Py_XDECREF(d), NULL;
    if (put(d, "target", PyLong_FromLong(o->target)) < 0 || put(d, "ptx", str_or_none(o->ptx)) < 0 ||
        put(d, "types", str_or_none(o->types)) < 0 || put(d, "symbol", str_or_none(o->symbol)) < 0 ||
        put(d, "restype", str_or_none(o->restype)) < 0 ||
        put(d, "args", PyBytes_FromStringAndSize((const char *)o->args, (Py_ssize_t)(sizeof *o->args * (size_t)o->nargs))) <
                0 ||
        put(d, "params",
            PyBytes_FromStringAndSize((const char *)o->params, (Py_ssize_t)(sizeof *o->params * (size_t)o->nparams))) <
                0 ||
        put(d, "shared_bytes", PyLong_FromSize_t(o->shared_bytes)) < 0 ||
        put(d, "shared_used", PyLong_FromSize_t(o->shared_used)) < 0 ||
        put(d, "local_bytes", PyLong_FromSize_t(o->local_bytes)) < 0 ||
        put(d, "const_used", PyLong_FromSize_t(o->const_used)) < 0 ||
        put(d, "max_threads", PyLong_FromLong(o->max_threads)) < 0 ||
        put(d, "uses_barrier", PyLong_FromLong(o->uses_barrier)) < 0 || put(d, "debug", PyLong_FromLong(o->debug)) < 0 ||
        put(d, "files", files) < 0 || put(d, "barriers", str_list(o->barriers, o->nbarriers)) < 0 ||
        put(d, "racecheck", PyLong_FromLong(o->racecheck)) < 0 || put(d, "races", str_list(o->races, o->nraces)) < 0 ||
        put(d, "raises", o->raises ? Py_NewRef(o->raises) : PyList_New(0)) < 0 ||
        put(d, "bitcode", o->bitcode ? PyBytes_FromStringAndSize(o->bitcode, (Py_ssize_t)o->bitcode_len)
                                     : Py_NewRef(Py_None)) < 0 ||
        put(d, "object", o->object ? PyBytes_FromStringAndSize(o->object, (Py_ssize_t)o->object_len)
                                   : Py_NewRef(Py_None)) < 0)
        return Py_DECREF(d), NULL;
    return d;
}

/* d[key], a list of strings, as a malloc'd array of *n of them (nothing where d has no such
 * list; "?" for an item that is not a string); -1 when out of memory. */
static int get_str_list(PyObject *d, const char *key, char ***out, int *n) {
    PyObject *l = PyDict_GetItemString(d, key);
    if (!l || !PyList_Check(l)) return 0;
    if (!(*out = calloc((size_t)PyList_GET_SIZE(l) + 1, sizeof(char *)))) return PyErr_NoMemory(), -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(l); i++) {
        PyObject *b = PyList_GET_ITEM(l, i);
        const char *s = PyUnicode_Check(b) ? PyUnicode_AsUTF8(b) : "?";
        if (!s) PyErr_Clear();
        if (!((*out)[(*n)++] = strdup(s ? s : "?"))) return (*n)--, PyErr_NoMemory(), -1;
    }
    return 0;
}

/* d[key] as a new malloc'd string (NULL for None); -1 if it is neither */
static int get_str(PyObject *d, const char *key, char **out) {
    PyObject *v = PyDict_GetItemString(d, key);
    *out = NULL;
    if (!v || v == Py_None) return 0;
    const char *s = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
    if (!s) return PyErr_Format(PyExc_ValueError, "cached kernel: '%s' is not a str", key), -1;
    return (*out = strdup(s)) ? 0 : (PyErr_NoMemory(), -1);
}

static int get_bytes(PyObject *d, const char *key, size_t item, void **out, int *n) {
    PyObject *v = PyDict_GetItemString(d, key);
    if (!v || !PyBytes_Check(v) || PyBytes_GET_SIZE(v) % (Py_ssize_t)item)
        return PyErr_Format(PyExc_ValueError, "cached kernel: '%s' is not an array of %zu-byte records", key, item),
               -1;
    size_t len = (size_t)PyBytes_GET_SIZE(v);
    *n = (int)(len / item);
    if (!(*out = calloc(1, len + item))) return PyErr_NoMemory(), -1;
    memcpy(*out, PyBytes_AS_STRING(v), len);
    return 0;
}

static long get_long(PyObject *d, const char *key) {
    PyObject *v = PyDict_GetItemString(d, key);
    return v && PyLong_Check(v) ? PyLong_AsLong(v) : 0;
}

/* The host kernel's module, back into the JIT under a fresh symbol: every name the kernel
 * defined starts with its old symbol (compile.c derives device functions' from it). */
static int host_load(GjOutput *o) {
    Ctx ctx = {0}, *c = &ctx;
    int rc = -1;
    c->out = o;
    c->target = target_for(GJ_TARGET_HOST);
    c->opt.target = GJ_TARGET_HOST;
    RETURN_IF_ERROR(emit_init());
    char *old = o->symbol;
    size_t base = strlen(old);
    char *gj = strstr(old, "_gj");
    for (char *p = gj; p; p = strstr(p + 1, "_gj")) gj = p; /* the last: begin() appended it */
    if (gj && gj[3] && strspn(gj + 3, "0123456789") == strlen(gj + 3)) base = (size_t)(gj - old);
    c->symbol = arena_printf(&c->arena, "%.*s", (int)base, old);
    if (c->target->begin(c) < 0) goto out;
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(o->bitcode, o->bitcode_len, "cached kernel");
    char *err = NULL;
    /* not ...InContext2: it reports a bad file through the context's handler, which exits */
    int bad = LLVMParseBitcodeInContext(c->llctx, buf, &c->mod, &err);
    LLVMDisposeMemoryBuffer(buf);
    if (bad) {
        PyErr_Format(PyExc_ValueError, "cached kernel: its bitcode does not load: %s", err ? err : "");
        LLVMDisposeMessage(err);
        goto out;
    }
    size_t oldlen = strlen(old);
    for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f)) {
        size_t n;
        const char *name = LLVMGetValueName2(f, &n);
        if (LLVMIsDeclaration(f) || n < oldlen || strncmp(name, old, oldlen)) continue;
        char *renamed = arena_printf(&c->arena, "%s%.*s", c->symbol, (int)(n - oldlen), name + oldlen);
        LLVMSetValueName2(f, renamed, strlen(renamed));
    }
    o->symbol = strdup(c->symbol);
    if (!o->symbol) {
        o->symbol = old;
        PyErr_NoMemory();
        goto out;
    }
    free(old);
    rc = emit_host(c);
out:
    if (c->mod) LLVMDisposeModule(c->mod);
    c->target->end(c);
    arena_free(&c->arena);
    return rc;
}

/* The host kernel's object code, linked into the JIT as it was made (its symbols unchanged). */
static int host_load_object(GjOutput *o) {
    Ctx ctx = {0}, *c = &ctx;
    c->out = o;
    c->target = target_for(GJ_TARGET_HOST);
    c->opt.target = GJ_TARGET_HOST;
    int rc = emit_init() < 0 ? -1 : emit_host_object(c);
    arena_free(&c->arena);
    return rc;
}

GjOutput *gj_output_from_state(PyObject *d) {
    if (!PyDict_Check(d)) return PyErr_SetString(PyExc_TypeError, "a cached kernel is a dict"), NULL;
    GjOutput *o = calloc(1, sizeof *o);
    if (!o) return PyErr_NoMemory(), NULL;
    long target = get_long(d, "target");
    if (!target_for((int)target)) {
        PyErr_Format(PyExc_ValueError, "cached kernel: unknown target %ld", target);
        goto fail;
    }
    o->target = (GjTargetKind)target;
    void *args, *params;
    if (get_str(d, "ptx", &o->ptx) < 0 || get_str(d, "types", &o->types) < 0 || get_str(d, "symbol", &o->symbol) < 0 ||
        get_str(d, "restype", &o->restype) < 0 || get_bytes(d, "args", sizeof *o->args, &args, &o->nargs) < 0)
        goto fail;
    o->args = args;
    if (get_bytes(d, "params", sizeof *o->params, &params, &o->nparams) < 0) goto fail;
    o->params = params;
    o->shared_bytes = (size_t)get_long(d, "shared_bytes");
    o->shared_used = (size_t)get_long(d, "shared_used");
    o->local_bytes = (size_t)get_long(d, "local_bytes");
    o->const_used = (size_t)get_long(d, "const_used");
    o->max_threads = (int)get_long(d, "max_threads");
    o->uses_barrier = (int)get_long(d, "uses_barrier");
    o->debug = (int)get_long(d, "debug");
    PyObject *files = PyDict_GetItemString(d, "files"), *raises = PyDict_GetItemString(d, "raises");
    PyObject *bc = PyDict_GetItemString(d, "bitcode"), *obj = PyDict_GetItemString(d, "object");
    if (!o->symbol || !files || !PyList_Check(files) || !raises || !PyList_Check(raises)) {
        PyErr_SetString(PyExc_ValueError, "cached kernel: its symbol, files or raise sites are missing");
        goto fail;
    }
    o->files = calloc((size_t)PyList_GET_SIZE(files) + 1, sizeof(char *));
    if (!o->files) goto fail;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(files); i++) {
        const char *s = PyUnicode_Check(PyList_GET_ITEM(files, i)) ? PyUnicode_AsUTF8(PyList_GET_ITEM(files, i)) : "?";
        if (!(o->files[o->nfiles++] = strdup(s ? s : "?"))) goto fail;
    }
    /* absent from older entries */
    if (get_str_list(d, "barriers", &o->barriers, &o->nbarriers) < 0 ||
        get_str_list(d, "races", &o->races, &o->nraces) < 0)
        goto fail;
    PyObject *rc = PyDict_GetItemString(d, "racecheck");
    o->racecheck = rc && PyLong_Check(rc) && PyLong_AsLong(rc) == 1;
    o->raises = PyList_GetSlice(raises, 0, PyList_GET_SIZE(raises));
    if (!o->raises) goto fail;
    if (o->target == GJ_TARGET_HOST) {
        if (!bc || !PyBytes_Check(bc)) {
            PyErr_SetString(PyExc_ValueError, "cached kernel: a CPU kernel needs its bitcode");
            goto fail;
        }
        o->bitcode_len = (size_t)PyBytes_GET_SIZE(bc);
        if (!(o->bitcode = malloc(o->bitcode_len ? o->bitcode_len : 1))) goto fail;
        memcpy(o->bitcode, PyBytes_AS_STRING(bc), o->bitcode_len);
        if (obj && PyBytes_Check(obj) && PyBytes_GET_SIZE(obj) > 0) {
            o->object_len = (size_t)PyBytes_GET_SIZE(obj);
            if (!(o->object = malloc(o->object_len))) goto fail;
            memcpy(o->object, PyBytes_AS_STRING(obj), o->object_len);
            if (host_load_object(o) == 0) return o;
            PyErr_Clear(); /* code that does not link here: generated again from the bitcode */
            free(o->object);
            o->object = NULL;
            o->object_len = 0;
        }
        if (host_load(o) < 0) goto fail;
    } else if (!o->ptx) {
        PyErr_SetString(PyExc_ValueError, "cached kernel: a GPU kernel needs its PTX");
        goto fail;
    }
    return o;
fail:
    if (!PyErr_Occurred()) PyErr_NoMemory();
    gj_output_free(o);
    return NULL;
}

/* What, besides the kernel's own source and options, decides the code compiled for it:
 * LLVM's version, the host CPU the CPU target compiles for, and the libdevice file GPU
 * kernels link. The cache keys entries by it, so another machine or toolkit sharing a cache
 * directory never loads code that was not compiled for it. */
PyObject *gj_cache_environment(void) {
    unsigned major, minor, patch;
    LLVMGetVersion(&major, &minor, &patch);
    char *cpu = LLVMGetHostCPUName(), *feat = LLVMGetHostCPUFeatures();
    const char *why;
    const char *libdevice = find_libdevice(&why);
    PyObject *r = Py_BuildValue("{s:(III),s:s,s:s,s:s}", "llvm", major, minor, patch, "host_cpu", cpu,
                                "host_features", feat, "libdevice", libdevice);
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(feat);
    return r;
}
