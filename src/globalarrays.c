/* globalarrays.c: arrays a kernel reads from its globals and closures: a
 * NumPy array (of numbers or records) frozen into the kernel's constant data (also what
 * const.array_like makes), a device array captured by its address. Read
 * through the buffer protocol and the array interfaces (no NumPy C API). */
#include <string.h>

#include "gj.h"

/* The element type and shape of a host array, through the buffer protocol
 * (no NumPy C API). Returns the element type or NULL with the buffer released. */
static Type *buffer_elem(Py_buffer *v) {
    const char *f = v->format ? v->format : "B";
    if (*f == '@' || *f == '=' || *f == '<') f++;
    if (*f == 'Z' && f[1] == 'f' && !f[2] && v->itemsize == 8) return &ty_complex64;
    if (*f == 'Z' && f[1] == 'd' && !f[2] && v->itemsize == 16) return &ty_complex128;
    if (!f[0] || f[1]) return NULL;
    if (*f == '?') return &ty_bool;
    if (*f == 'f' && v->itemsize == 4) return &ty_float32;
    if (*f == 'd' && v->itemsize == 8) return &ty_float64;
    static const TypeKind sgn[] = {TY_INT8, TY_INT16, 0, TY_INT32, 0, 0, 0, TY_INT64};
    static const TypeKind uns[] = {TY_UINT8, TY_UINT16, 0, TY_UINT32, 0, 0, 0, TY_UINT64};
    if (v->itemsize < 1 || v->itemsize > 8) return NULL;
    if (strchr("bhilq", *f)) return sgn[v->itemsize - 1] ? type_scalar(sgn[v->itemsize - 1]) : NULL;
    if (strchr("BHILQ", *f)) return uns[v->itemsize - 1] ? type_scalar(uns[v->itemsize - 1]) : NULL;
    return NULL;
}

/* The record type of a host array of a structured dtype, spelled by
 * gpujit.typing.dtype_name as a kernel argument's is; NULL (no exception)
 * for any other array, or a structured dtype kernels cannot take. */
static Type *record_elem(Ctx *c, PyObject *arr, Py_ssize_t itemsize) {
    PyObject *dt = PyObject_GetAttrString(arr, "dtype");
    PyObject *fields = dt ? PyObject_GetAttrString(dt, "fields") : NULL;
    PyObject *mod = fields && fields != Py_None ? PyImport_ImportModule("gpujit.typing") : NULL;
    PyObject *name = mod ? PyObject_CallMethod(mod, "dtype_name", "O", dt) : NULL;
    const char *spelling = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    Type *t = NULL, *ret, **args;
    int n;
    if (spelling && sig_parse(c, arena_printf(&c->arena, "(%s)", spelling), &ret, &args, &n) == 0 && n == 1 &&
        args[0]->kind == TY_RECORD && args[0]->size == itemsize)
        t = args[0];
    Py_XDECREF(name);
    Py_XDECREF(mod);
    Py_XDECREF(fields);
    Py_XDECREF(dt);
    PyErr_Clear();
    return t;
}

/* A device array held by a global: its description, read through the
 * gpujit DeviceArray's attributes or __cuda_array_interface__. */
typedef struct Captured {
    Type *elem;
    int ndim;
    int64_t shape[32], strides[32];
    uint64_t ptr;
    bool c_contig;
} Captured;

static int seq_i64(PyObject *seq, int64_t *out, int max) {
    PyObject *t = PySequence_Tuple(seq);
    if (!t) return -1;
    int n = (int)PyTuple_GET_SIZE(t);
    for (int i = 0; i < n && i < max; i++) out[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(t, i));
    Py_DECREF(t);
    return PyErr_Occurred() ? -1 : n;
}

static Type *elem_of_typestr(const char *ts) {
    /* "<f4", "|b1", "<c16"... */
    if (!ts || strlen(ts) < 3 || ts[0] == '>') return NULL;
    int sz = atoi(ts + 2);
    switch (ts[1]) {
    case 'b': return sz == 1 ? &ty_bool : NULL;
    case 'i': return sz == 1 ? &ty_int8 : sz == 2 ? &ty_int16 : sz == 4 ? &ty_int32 : sz == 8 ? &ty_int64 : NULL;
    case 'u': return sz == 1 ? &ty_uint8 : sz == 2 ? &ty_uint16 : sz == 4 ? &ty_uint32 : sz == 8 ? &ty_uint64 : NULL;
    case 'f': return sz == 4 ? &ty_float32 : sz == 8 ? &ty_float64 : NULL;
    case 'c': return sz == 8 ? &ty_complex64 : sz == 16 ? &ty_complex128 : NULL;
    }
    return NULL;
}

/* 0, or -1 with a message in `why`. */
static int captured_array(Ctx *c, PyObject *o, Captured *a, const char **why) {
    memset(a, 0, sizeof *a);
    bool cuda = c->opt.target == GJ_TARGET_NVPTX;
    PyObject *cai = PyObject_GetAttrString(o, "__cuda_array_interface__");
    PyErr_Clear();
    PyObject *shape = NULL, *strides = NULL, *ts = NULL;
    int rc = -1;
    if (cai && PyDict_Check(cai)) {
        if (!cuda) {
            *why = "is a CUDA array; this kernel is compiled for the cpu target";
            goto done;
        }
        PyObject *data = PyDict_GetItemString(cai, "data");
        shape = PyDict_GetItemString(cai, "shape");
        strides = PyDict_GetItemString(cai, "strides");
        ts = PyDict_GetItemString(cai, "typestr");
        Py_XINCREF(shape);
        Py_XINCREF(ts);
        if (strides == Py_None) strides = NULL;
        Py_XINCREF(strides);
        if (!data || !PyTuple_Check(data) || !shape || !ts) {
            *why = "has a malformed __cuda_array_interface__";
            goto done;
        }
        a->ptr = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(data, 0));
    } else {
        PyObject *tgt = PyObject_GetAttrString(o, "target"), *p = PyObject_GetAttrString(o, "_ptr");
        PyObject *dt = PyObject_GetAttrString(o, "dtype");
        ts = dt ? PyObject_GetAttrString(dt, "str") : NULL;
        Py_XDECREF(dt);
        shape = PyObject_GetAttrString(o, "shape");
        strides = PyObject_GetAttrString(o, "strides");
        bool ok = tgt && p && ts && shape && strides && PyUnicode_Check(tgt);
        if (ok) {
            if (strcmp(PyUnicode_AsUTF8(tgt), gj_target_name(c->opt.target)) != 0) {
                *why = cuda ? "is an array of the cpu target; this kernel is compiled for cuda"
                            : "is an array of the cuda target; this kernel is compiled for the cpu target";
                ok = false;
            } else {
                a->ptr = PyLong_AsUnsignedLongLong(p);
            }
        } else {
            *why = "is not an array gpujit can capture";
        }
        Py_XDECREF(tgt);
        Py_XDECREF(p);
        PyErr_Clear();
        if (!ok) goto done;
    }
    a->elem = ts && PyUnicode_Check(ts) ? elem_of_typestr(PyUnicode_AsUTF8(ts)) : NULL;
    if (!a->elem) {
        *why = "has a dtype kernels do not support";
        goto done;
    }
    a->ndim = seq_i64(shape, a->shape, 32);
    if (a->ndim < 0 || a->ndim > 32) {
        PyErr_Clear();
        *why = "must have 0 to 32 dimensions";
        goto done;
    }
    int64_t s = type_bits(a->elem) / 8;
    a->c_contig = true;
    if (strides && seq_i64(strides, a->strides, 32) != a->ndim) {
        PyErr_Clear();
        *why = "has malformed strides";
        goto done;
    }
    for (int k = a->ndim - 1; k >= 0; k--) {
        if (!strides) a->strides[k] = s;
        a->c_contig &= a->shape[k] <= 1 || a->strides[k] == s;
        s *= a->shape[k];
    }
    rc = 0;
done:
    Py_XDECREF(cai);
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    Py_XDECREF(ts);
    PyErr_Clear();
    return rc;
}

Type *type_global_array(Ctx *c, Instr *in) {
    if (!strcmp(in->name, PATH_CAPTURED_ARRAY)) {
        Captured a;
        const char *why = "";
        if (captured_array(c, in->pyobj, &a, &why) < 0) TERR("a captured device array %s", why);
        ctx_root(c)->captures = true;
        return type_array(c, a.elem, a.ndim, a.c_contig ? 'C' : 'A', c->target->array_space);
    }
    Py_buffer v;
    if (PyObject_GetBuffer(in->pyobj, &v, PyBUF_FULL_RO) < 0) {
        PyErr_Clear();
        TERR("cannot read the memory of this global NumPy array");
    }
    Type *e = buffer_elem(&v);
    if (!e) e = record_elem(c, in->pyobj, v.itemsize);
    int ndim = v.ndim;
    PyBuffer_Release(&v);
    if (!e)
        TERR("a global NumPy array of this dtype (bool, ints, floats, complex and records of them in native byte "
             "order are supported)");
    if (ndim < 0 || ndim > 32) TERR("a global NumPy array must have 0 to 32 dimensions");
    return type_array(c, e, ndim, 'C', AS_CONST);
}

/* const.array_like(a): `a` a global or closure NumPy array, whose contents
 * are frozen into the kernel at compile time (numba's semantics). */
Type *type_const_array(Ctx *c, Instr *in) {
    if (in->nargs != 2) TERR("const.array_like(array) takes one argument");
    Instr *o = in->args[1];
    if (o->op != IR_OBJ || !o->pyobj || !PyObject_CheckBuffer(o->pyobj))
        TERR("const.array_like: the argument must be a NumPy array held by a global or closure variable");
    Py_buffer v;
    if (PyObject_GetBuffer(o->pyobj, &v, PyBUF_FULL_RO) < 0) {
        PyErr_Clear();
        TERR("const.array_like: cannot read the array's memory");
    }
    Type *e = buffer_elem(&v);
    if (!e) e = record_elem(c, o->pyobj, v.itemsize);
    int ndim = v.ndim;
    size_t nbytes = (size_t)v.len;
    PyBuffer_Release(&v);
    if (!e)
        TERR("const.array_like: unsupported dtype (bool, ints, floats, complex and records of them in native byte "
             "order are)");
    /* ptxas refuses more than the GPU's 64 KiB constant bank (at load, on a GPU); say so here, on both targets */
    Ctx *root = ctx_root(c);
    if (!in->alloc_done) {
        in->alloc_done = true;
        root->const_bytes += (nbytes + 15) & ~(size_t)15;
    }
    if (root->const_bytes > LIMIT_CONST_BYTES)
        return error_limit(c, in->loc, "bytes of constant memory in const.array_like arrays", LIMIT_CONST_BYTES),
               (Type *)NULL;
    if (ndim < 1) TERR("const.array_like: the array must have at least one dimension");
    if (ndim > LIMIT_NDIM) return error_limit(c, in->loc, "array dimensions", LIMIT_NDIM), (Type *)NULL;
    return type_array(c, e, ndim, 'C', AS_CONST);
}

/* The array's bytes become a constant of the module (typing checked it). */
LLVMValueRef lower_const_array(Ctx *c, Instr *in) {
    /* the global itself was lowered (a constant array) where it was loaded */
    if (in->args[1]->llv && type_eq(in->args[1]->type, in->type)) return in->args[1]->llv;
    Py_buffer v;
    if (PyObject_GetBuffer(in->args[1]->pyobj, &v, PyBUF_FULL_RO) < 0) return NULL;
    char *bytes = arena_alloc(&c->arena, (size_t)v.len + 1);
    LLVMValueRef dims[LIMIT_NDIM];
    if (!bytes || PyBuffer_ToContiguous(bytes, &v, v.len, 'C') < 0) {
        PyBuffer_Release(&v);
        return NULL;
    }
    for (int k = 0; k < v.ndim; k++) dims[k] = ci64(c, v.shape[k]);
    LLVMValueRef data = c->target->const_array(c, bytes, (size_t)v.len);
    PyBuffer_Release(&v);
    return array_value(c, in->type, data, dims);
}

LLVMValueRef lower_global_array(Ctx *c, Instr *in) {
    if (!strcmp(in->name, PATH_GLOBAL_ARRAY)) {
        Instr fake = {.type = in->type, .nargs = 2};
        Instr *args[2] = {in, in};
        fake.args = args;
        return lower_const_array(c, &fake);
    }
    Captured a;
    const char *why = "";
    if (captured_array(c, in->pyobj, &a, &why) < 0) {
        internal_error(c, in->loc, "lower: a captured array changed since typing");
        return NULL;
    }
    Type *t = in->type;
    LLVMTypeRef pt = LLVMPointerTypeInContext(c->llctx, t->space == AS_GLOBAL ? (unsigned)c->target->array_space : 0);
    LLVMValueRef data = LLVMConstIntToPtr(LLVMConstInt(c->i64, a.ptr, 0), pt);
    LLVMTypeRef dt = LLVMArrayType2(c->i64, (uint64_t)t->ndim);
    LLVMValueRef shape = LLVMGetUndef(dt), strides = LLVMGetUndef(dt);
    for (int k = 0; k < t->ndim; k++) {
        shape = LLVMBuildInsertValue(c->b, shape, ci64(c, a.shape[k]), (unsigned)k, "");
        strides = LLVMBuildInsertValue(c->b, strides, ci64(c, a.strides[k]), (unsigned)k, "");
    }
    LLVMValueRef v = LLVMBuildInsertValue(c->b, LLVMGetUndef(llvm_type(c, t)), data, 0, "");
    v = LLVMBuildInsertValue(c->b, v, shape, 1, "");
    return LLVMBuildInsertValue(c->b, v, strides, 2, "");
}

/* The frozen NumPy array a.copy()'s `a` is: a global or closure array, its
 * const.array_like, or a local assigned once from either; NULL otherwise. */
static PyObject *frozen_source(Ctx *c, Instr *a, int depth) {
    if (a->op == IR_OBJ && a->pyobj && !strcmp(a->name, PATH_GLOBAL_ARRAY)) return a->pyobj;
    if (a->op == IR_CALL && a->intr && a->intr->kind == IK_CONST_ARRAY && a->nargs == 2) return a->args[1]->pyobj;
    if (a->op != IR_LOAD_VAR || depth > 0) return NULL;
    Instr *only = NULL;
    for (int bi = 0; bi < c->nblocks; bi++)
        for (int k = 0; c->blocks[bi]->built && k < c->blocks[bi]->instrs.n; k++) {
            Instr *st = c->blocks[bi]->instrs.v[k];
            if (st->op != IR_STORE_VAR || st->var != a->var) continue;
            if (only) return NULL;
            only = st->args[0];
        }
    return only ? frozen_source(c, only, depth + 1) : NULL;
}

/* a.copy() where a's size is known at compile time (a frozen global array):
 * a C-contiguous local array of a's shape and dtype, as numba.cuda's copy
 * (which allocates on the device) gives. A kernel argument's size is known
 * only at run time, and gpujit kernels do not allocate memory. */
Type *type_array_copy(Ctx *c, Instr *in) {
    Instr *self = in->args[0]->args[0];
    Type *at = self->type;
    if (in->nargs != 1) TERR("copy() takes no arguments in kernels (the copy is C-ordered)");
    PyObject *src = frozen_source(c, self, 0);
    if (!src)
        UNSUP("copy() of an array whose size is known only at run time (gpujit kernels do not allocate "
              "memory: copy into a gpu.local.array of a constant size)");
    Py_buffer v;
    if (PyObject_GetBuffer(src, &v, PyBUF_FULL_RO) < 0) {
        PyErr_Clear();
        TERR("copy(): cannot read the array's memory");
    }
    Py_ssize_t n = v.len;
    PyBuffer_Release(&v);
    if (n > LIMIT_CONST_BYTES) return error_limit(c, in->loc, "bytes in an array's local copy", LIMIT_CONST_BYTES), (Type *)NULL;
    return type_array(c, at->elem, at->ndim, 'C', AS_LOCAL);
}

LLVMValueRef lower_array_copy(Ctx *c, Instr *in, Type *rt) {
    Instr *self = in->args[0]->args[0];
    Py_buffer v;
    if (PyObject_GetBuffer(frozen_source(c, self, 0), &v, PyBUF_FULL_RO) < 0) return NULL;
    size_t nbytes = (size_t)v.len, n = (size_t)(v.itemsize ? v.len / v.itemsize : 0);
    PyBuffer_Release(&v);
    LLVMValueRef a = val(c, self), dims[LIMIT_NDIM];
    LLVMValueRef shape = LLVMBuildExtractValue(c->b, a, 1, "");
    for (int k = 0; k < rt->ndim; k++) dims[k] = LLVMBuildExtractValue(c->b, shape, (unsigned)k, "");
    LLVMValueRef data = entry_alloca(c, LLVMArrayType2(mem_type(c, rt->elem), n ? n : 1), "copy");
    LLVMSetAlignment(data, 16);
    /* the frozen constant is C-ordered already (lower_const_array): one copy of its bytes */
    if (nbytes)
        LLVMBuildMemCpy(c->b, data, 16, LLVMBuildExtractValue(c->b, a, 0, ""), 16, ci64(c, (int64_t)nbytes));
    return array_value(c, rt, data, dims);
}
