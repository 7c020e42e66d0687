/* libdevice.c: calls of libdevice's functions, gpu.libdevice.<name>(...) -> __nv_<name>.
 * Their types are gpujit.libdevicefuncs's table (one letter a type, '*' before a pointer the
 * function writes a result through), asked for at typing and at lowering. Arguments convert
 * to the parameters' types; pointer parameters become stack slots whose values, after the
 * return value unless void, are the call's results (a tuple when more than one). The
 * target declares the function (libdevice_fn): the GPU's links libdevice, the CPU's JIT
 * resolves it to runtime/cpu_libdevice.c. */
#include <string.h>

#include "gj.h"

#define MAX_LIBDEVICE_PARAMS 8

/* The table's codes of `name` into *ret and params (NUL-terminated); false where the table
 * has no such function (Python's error cleared), -1 on a Python failure. */
static int libdevice_codes(const char *name, char *ret, char *params, size_t cap) {
    PyObject *mod = PyImport_ImportModule("gpujit.libdevicefuncs");
    PyObject *r = mod ? PyObject_CallMethod(mod, "codes", "s", name) : NULL;
    Py_XDECREF(mod);
    if (!r) return -1;
    const char *rs = NULL, *ps = NULL;
    bool ok = r != Py_None && PyArg_ParseTuple(r, "ss", &rs, &ps) && strlen(ps) < cap && strlen(rs) == 1;
    if (ok) {
        *ret = rs[0];
        strcpy(params, ps);
    }
    Py_DECREF(r);
    if (!ok && PyErr_Occurred()) return -1;
    return ok;
}

static Type *code_type(char code) {
    switch (code) {
    case 'i': return &ty_int32;
    case 'l': return &ty_int64;
    case 'h': return &ty_int16;
    case 'f': return &ty_float32;
    case 'd': return &ty_float64;
    default: return NULL;
    }
}

/* The parameters' types and which are results, from the codes; returns their count. */
static int decode(const char *params, Type **pt, bool *out) {
    int n = 0;
    for (const char *p = params; *p && n < MAX_LIBDEVICE_PARAMS; p++) {
        out[n] = *p == '*';
        if (out[n]) p++;
        pt[n++] = code_type(*p);
    }
    return n;
}

Type *type_libdevice_call(Ctx *c, Instr *in, const char *path, Type **at, int nargs) {
    const char *name = path + strlen("gpujit.libdevice.");
    char ret, params[2 * MAX_LIBDEVICE_PARAMS + 1];
    int found = libdevice_codes(name, &ret, params, sizeof params);
    if (found < 0) return NULL;
    if (!found) UNSUP("libdevice has no function %s", name);
    Type *pt[MAX_LIBDEVICE_PARAMS], *results[MAX_LIBDEVICE_PARAMS + 1];
    bool out[MAX_LIBDEVICE_PARAMS];
    int np = decode(params, pt, out), nres = 0, nin = 0;
    if (ret != 'v') results[nres++] = code_type(ret);
    for (int i = 0; i < np; i++) {
        if (out[i]) {
            results[nres++] = pt[i];
            continue;
        }
        if (nin < nargs && !is_scalar(at[nin]))
            TERR("argument %d of libdevice.%s() is %s, not a real number", nin + 1, name, type_name(c, at[nin]));
        nin++;
    }
    if (nargs != nin) TERR("libdevice.%s() takes %d argument%s (%d given)", name, nin, nin == 1 ? "" : "s", nargs);
    if (nres == 0) return &ty_none;
    return nres == 1 ? results[0] : type_tuple(c, nres, results);
}

LLVMValueRef lower_libdevice_call(Ctx *c, Instr *in) {
    const char *name = in->args[0]->type->path + strlen("gpujit.libdevice.");
    char ret, params[2 * MAX_LIBDEVICE_PARAMS + 1];
    int found = libdevice_codes(name, &ret, params, sizeof params);
    if (found <= 0) return found < 0 ? NULL : (internal_error(c, in->loc, "libdevice.%s lost its table row", name), NULL);
    Type *pt[MAX_LIBDEVICE_PARAMS];
    bool out[MAX_LIBDEVICE_PARAMS];
    int np = decode(params, pt, out), nin = 0;
    LLVMTypeRef lt[MAX_LIBDEVICE_PARAMS];
    LLVMValueRef args[MAX_LIBDEVICE_PARAMS], slots[MAX_LIBDEVICE_PARAMS];
    for (int i = 0; i < np; i++) {
        if (out[i]) {
            lt[i] = c->ptr;
            args[i] = slots[i] = entry_alloca(c, llvm_type(c, pt[i]), "libdevice_out");
        } else {
            Instr *a = in->args[1 + nin++];
            lt[i] = llvm_type(c, pt[i]);
            args[i] = convert(c, val(c, a), a->type, pt[i]);
        }
    }
    LLVMTypeRef rt = ret == 'v' ? c->voidt : llvm_type(c, code_type(ret));
    LLVMTypeRef fnty = LLVMFunctionType(rt, lt, (unsigned)np, 0);
    LLVMValueRef fn = c->target->libdevice_fn ? c->target->libdevice_fn(c, name, fnty) : NULL;
    if (!fn) {
        error_at(c, ERR_UNSUPPORTED, in->loc, "libdevice.%s() has no implementation on the %s target", name,
                 c->target->api_name);
        return NULL;
    }
    LLVMValueRef r = LLVMBuildCall2(c->b, fnty, fn, args, (unsigned)np, "");
    LLVMValueRef results[MAX_LIBDEVICE_PARAMS + 1];
    int nres = 0;
    if (ret != 'v') results[nres++] = r;
    for (int i = 0; i < np; i++)
        if (out[i]) results[nres++] = LLVMBuildLoad2(c->b, llvm_type(c, pt[i]), slots[i], "");
    if (nres == 0) return NULL;
    if (nres == 1) return results[0];
    LLVMValueRef t = LLVMGetUndef(llvm_type(c, in->type));
    for (int i = 0; i < nres; i++) t = LLVMBuildInsertValue(c->b, t, results[i], (unsigned)i, "");
    return t;
}
