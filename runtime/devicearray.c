/* Device arrays: _core.DeviceArrayBase, the C half of gpujit.DeviceArray.
 * Its struct holds everything the launcher reads (data pointer, shape, byte
 * strides, dtype, target, device) so a launch needs no attribute lookups; the
 * Python subclass (python/gpujit/devicearray.py) adds dtype objects, slicing
 * and the copy methods on top of the raw-range copies defined here.
 * Also: dtype codes and their spellings in buffer formats and CAI typestrs,
 * and the DLPack export of an array. */
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "cuda.h"

static const struct {
    const char *name;
    int size;
/* clang-format off */
} dtypes[GJ_NDTYPES] = {
    [GJ_BOOL] = {"bool", 1},       [GJ_INT8] = {"int8", 1},     [GJ_INT16] = {"int16", 2},
    [GJ_INT32] = {"int32", 4},     [GJ_INT64] = {"int64", 8},   [GJ_UINT8] = {"uint8", 1},
    [GJ_UINT16] = {"uint16", 2},   [GJ_UINT32] = {"uint32", 4}, [GJ_UINT64] = {"uint64", 8},
    [GJ_FLOAT16] = {"float16", 2}, [GJ_BFLOAT16] = {"bfloat16", 2}, [GJ_FLOAT8_E4M3] = {"float8_e4m3fn", 1},
    [GJ_FLOAT8_E5M2] = {"float8_e5m2", 1}, [GJ_FLOAT32] = {"float32", 4}, [GJ_FLOAT64] = {"float64", 8},
    [GJ_COMPLEX64] = {"complex64", 8}, [GJ_COMPLEX128] = {"complex128", 16},
};
/* clang-format on */

int gj_dtype_size(int dtype) { return dtype > 0 && dtype < GJ_NDTYPES ? dtypes[dtype].size : 0; }

const char *gj_dtype_name(int dtype) { return dtype > 0 && dtype < GJ_NDTYPES ? dtypes[dtype].name : "?"; }

static GjDtype int_dtype(int is_signed, Py_ssize_t size) {
    switch (size) {
    case 1: return is_signed ? GJ_INT8 : GJ_UINT8;
    case 2: return is_signed ? GJ_INT16 : GJ_UINT16;
    case 4: return is_signed ? GJ_INT32 : GJ_UINT32;
    case 8: return is_signed ? GJ_INT64 : GJ_UINT64;
    }
    return 0;
}

GjDtype gj_dtype_from_format(const char *fmt, Py_ssize_t itemsize) {
    if (!fmt) return GJ_UINT8; /* PyBUF without FORMAT means unsigned bytes */
    if (*fmt == '@' || *fmt == '=' || *fmt == '<')
        fmt++;
    else if ((*fmt == '>' || *fmt == '!') && itemsize > 1)
        return 0; /* big-endian data would be read wrongly by a little-endian GPU */
    if (fmt[0] == 'Z' && fmt[1] && !fmt[2]) /* complex: Zf, Zd */
        return fmt[1] == 'f' && itemsize == 8 ? GJ_COMPLEX64 : fmt[1] == 'd' && itemsize == 16 ? GJ_COMPLEX128 : 0;
    if (!fmt[0] || fmt[1]) return 0;
    switch (fmt[0]) {
    case '?': return itemsize == 1 ? GJ_BOOL : 0;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n': return int_dtype(1, itemsize);
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
    case 'N': return int_dtype(0, itemsize);
    case 'e': return itemsize == 2 ? GJ_FLOAT16 : 0;
    case 'f': return itemsize == 4 ? GJ_FLOAT32 : 0;
    case 'd': return itemsize == 8 ? GJ_FLOAT64 : 0;
    }
    return 0;
}

GjDtype gj_dtype_from_typestr(const char *ts) {
    if (!ts || (ts[0] != '<' && ts[0] != '|' && ts[0] != '=') || !ts[1]) return 0;
    long size = strtol(ts + 2, NULL, 10);
    switch (ts[1]) {
    case 'b': return size == 1 ? GJ_BOOL : 0;
    case 'i': return int_dtype(1, size);
    case 'u': return int_dtype(0, size);
    case 'f': return size == 2 ? GJ_FLOAT16 : size == 4 ? GJ_FLOAT32 : size == 8 ? GJ_FLOAT64 : 0;
    case 'c': return size == 8 ? GJ_COMPLEX64 : size == 16 ? GJ_COMPLEX128 : 0;
    }
    return 0;
}

int gj_is_c_contig(int ndim, const int64_t *shape, const int64_t *strides, int64_t itemsize) {
    /* an empty array is contiguous whatever its strides, as NumPy says */
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0) return 1;
    int64_t expect = itemsize;
    for (int i = ndim - 1; i >= 0; i--) {
        if (shape[i] != 1 && strides[i] != expect) return 0;
        expect *= shape[i];
    }
    return 1;
}

void gj_c_strides(int ndim, const int64_t *shape, int64_t itemsize, int64_t *strides) {
    /* an empty dimension counts as 1, as NumPy does, so the strides stay distinct */
    int64_t s = itemsize;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        s *= shape[i] ? shape[i] : 1;
    }
}

static int64_t array_size(const GjDeviceArray *a) {
    int64_t n = 1;
    for (int i = 0; i < a->ndim; i++) n *= a->shape[i];
    return n;
}

/* ---- construction ---- */

static int parse_dims(PyObject *o, const char *what, int64_t *out, int *ndim) {
    if (PyLong_Check(o)) {
        out[0] = PyLong_AsLongLong(o);
        *ndim = 1;
        return out[0] == -1 && PyErr_Occurred() ? -1 : 0;
    }
    PyObject *t = PySequence_Tuple(o);
    if (!t) {
        PyErr_Format(PyExc_TypeError, "%s must be an int or a tuple of ints", what);
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(t);
    if (n > GJ_MAXDIM) {
        Py_DECREF(t);
        PyErr_Format(PyExc_ValueError, "%s has %zd dimensions; at most %d", what, n, GJ_MAXDIM);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        out[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(t, i));
        if (out[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(t);
            return -1;
        }
    }
    Py_DECREF(t);
    *ndim = (int)n;
    return 0;
}

/* None and the int 0 name the default stream, which an array keeps as NULL. */
static int is_default_stream(PyObject *s) {
    int overflow = 0;
    return s == Py_None || (PyLong_CheckExact(s) && PyLong_AsLongAndOverflow(s, &overflow) == 0 && !overflow);
}

/* __init__(shape, strides, dtype, owner, ptr, readonly=False, target=None,
 *          device=None, stream=None, record=None)
 * strides None means C-contiguous; dtype is a GjDtype code, or 0 with record,
 * a structured NumPy dtype (an array of records); target None takes the
 * owner's (an Allocation) or the current one. */
static int da_init(GjDeviceArray *a, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"shape",    "strides", "dtype",  "owner",  "ptr",    "readonly",
                             "target",   "device",  "stream", "record", NULL};
    PyObject *shape, *strides, *owner, *ptr, *target = Py_None, *device = Py_None, *stream = Py_None;
    PyObject *record = Py_None;
    int dtype, readonly = 0, itemsize = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOiOO|pOOOO:DeviceArrayBase", kwlist, &shape, &strides, &dtype,
                                     &owner, &ptr, &readonly, &target, &device, &stream, &record))
        return -1;
    if (record != Py_None) {
        PyObject *n = dtype == 0 ? PyObject_GetAttrString(record, "itemsize") : NULL;
        itemsize = n ? (int)PyLong_AsLong(n) : 0;
        Py_XDECREF(n);
        if (itemsize <= 0) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a record array needs dtype code 0 and a dtype");
            return -1;
        }
    } else if (!(itemsize = gj_dtype_size(dtype))) {
        PyErr_Format(PyExc_TypeError, "invalid dtype code %d", dtype);
        return -1;
    }
    int ndim, nstrides;
    if (parse_dims(shape, "shape", a->shape, &ndim) < 0) return -1;
    for (int i = 0; i < ndim; i++)
        if (a->shape[i] < 0) {
            PyErr_SetString(PyExc_ValueError, "negative dimensions are not allowed");
            return -1;
        }
    a->ndim = ndim;
    a->dtype = dtype;
    a->itemsize = itemsize;
    if (strides == Py_None) {
        gj_c_strides(ndim, a->shape, a->itemsize, a->strides);
    } else {
        if (parse_dims(strides, "strides", a->strides, &nstrides) < 0) return -1;
        if (nstrides != ndim) {
            PyErr_Format(PyExc_ValueError, "strides has %d entries for %d dimensions", nstrides, ndim);
            return -1;
        }
    }
    a->data = PyLong_AsUnsignedLongLong(ptr);
    if (PyErr_Occurred()) return -1;
    int is_alloc = PyObject_TypeCheck(owner, &GjAllocation_Type);
    if (target == Py_None) {
        if (is_alloc)
            a->target = ((GjAllocation *)owner)->kind == GJ_MEM_HOST ? GJ_TARGET_HOST : GJ_TARGET_NVPTX;
        else {
            int t = gj_target();
            if (t < 0) return -1;
            a->target = (GjTargetKind)t;
        }
    } else {
        const char *s = PyUnicode_Check(target) ? PyUnicode_AsUTF8(target) : "";
        if (s && !strcmp(s, "cuda"))
            a->target = GJ_TARGET_NVPTX;
        else if (s && !strcmp(s, "cpu"))
            a->target = GJ_TARGET_HOST;
        else {
            PyErr_Format(PyExc_ValueError, "target must be 'cuda' or 'cpu', not %R", target);
            return -1;
        }
    }
    if (device == Py_None)
        a->device = is_alloc ? ((GjAllocation *)owner)->device : gj_current_device();
    else if ((a->device = gj_as_int(device)) == -1 && PyErr_Occurred())
        return -1;
    a->readonly = readonly;
    a->c_contig = gj_is_c_contig(ndim, a->shape, a->strides, a->itemsize);
    Py_INCREF(owner);
    Py_XSETREF(a->owner, owner);
    Py_XSETREF(a->stream, is_default_stream(stream) ? NULL : Py_NewRef(stream));
    Py_XSETREF(a->record, record == Py_None ? NULL : Py_NewRef(record));
    a->initialized = 1;
    return 0;
}

static int da_traverse(GjDeviceArray *a, visitproc visit, void *arg) {
    Py_VISIT(a->owner);
    Py_VISIT(a->stream);
    Py_VISIT(a->record);
    Py_VISIT(a->dict);
    return 0;
}

static int da_clear(GjDeviceArray *a) {
    Py_CLEAR(a->owner);
    Py_CLEAR(a->stream);
    Py_CLEAR(a->record);
    Py_CLEAR(a->dict);
    return 0;
}

static void da_dealloc(GjDeviceArray *a) {
    PyTypeObject *tp = Py_TYPE(a);
    PyObject_GC_UnTrack(a);
    if (a->weaklist) PyObject_ClearWeakRefs((PyObject *)a);
    da_clear(a);
    /* A static base type: a heap subclass's subtype_dealloc drops the type's reference. */
    tp->tp_free((PyObject *)a);
}

/* ---- attributes ---- */

static PyObject *int64_tuple(const int64_t *v, int n) {
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *x = PyLong_FromLongLong(v[i]);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

static PyObject *da_shape(GjDeviceArray *a, void *c) { return int64_tuple(a->shape, a->ndim); }
static PyObject *da_strides(GjDeviceArray *a, void *c) { return int64_tuple(a->strides, a->ndim); }
static PyObject *da_ndim(GjDeviceArray *a, void *c) { return PyLong_FromLong(a->ndim); }
static PyObject *da_size(GjDeviceArray *a, void *c) { return PyLong_FromLongLong(array_size(a)); }
static PyObject *da_itemsize(GjDeviceArray *a, void *c) { return PyLong_FromLong(a->itemsize); }
static PyObject *da_nbytes(GjDeviceArray *a, void *c) { return PyLong_FromLongLong(array_size(a) * a->itemsize); }
static PyObject *da_code(GjDeviceArray *a, void *c) { return PyLong_FromLong(a->dtype); }
static PyObject *da_ptr(GjDeviceArray *a, void *c) { return PyLong_FromUnsignedLongLong(a->data); }
static PyObject *da_device(GjDeviceArray *a, void *c) { return PyLong_FromLong(a->device); }
static PyObject *da_readonly(GjDeviceArray *a, void *c) { return PyBool_FromLong(a->readonly); }
static PyObject *da_target(GjDeviceArray *a, void *c) {
    return PyUnicode_FromString(gj_target_name(a->target));
}
static PyObject *da_record(GjDeviceArray *a, void *c) { return Py_NewRef(a->record ? a->record : Py_None); }
static PyObject *da_owner(GjDeviceArray *a, void *c) { return Py_NewRef(a->owner ? a->owner : Py_None); }
/* 0 for the default stream, as numba's device arrays say */
static PyObject *da_get_stream(GjDeviceArray *a, void *c) { return a->stream ? Py_NewRef(a->stream) : PyLong_FromLong(0); }
static int da_set_stream(GjDeviceArray *a, PyObject *v, void *c) {
    Py_XSETREF(a->stream, v && !is_default_stream(v) ? Py_NewRef(v) : NULL);
    return 0;
}

/* clang-format off */
static PyGetSetDef da_getset[] = {
    {"shape", (getter)da_shape, NULL, "tuple of dimensions", NULL},
    {"strides", (getter)da_strides, NULL, "tuple of strides in bytes", NULL},
    {"ndim", (getter)da_ndim, NULL, NULL, NULL},
    {"size", (getter)da_size, NULL, "number of elements", NULL},
    {"itemsize", (getter)da_itemsize, NULL, NULL, NULL},
    {"nbytes", (getter)da_nbytes, NULL, "size * itemsize", NULL},
    {"readonly", (getter)da_readonly, NULL, NULL, NULL},
    {"stream", (getter)da_get_stream, (setter)da_set_stream, "the stream given at creation", NULL},
    {"_dtype_code", (getter)da_code, NULL, "GjDtype code", NULL},
    {"_ptr", (getter)da_ptr, NULL, "address of element [0, ..., 0]", NULL},
    {"_device", (getter)da_device, NULL, NULL, NULL},
    {"_target", (getter)da_target, NULL, "'cuda' or 'cpu'", NULL},
    {"_owner", (getter)da_owner, NULL, "the object keeping the memory alive", NULL},
    {"_record", (getter)da_record, NULL, "the structured dtype of a record array, or None", NULL},
    {NULL},
};
/* clang-format on */

/* ---- raw copies (the Python layer composes them into copy_to_host etc.) ---- */

/* Checks that [data+off, data+off+n) lies inside the owning Allocation, when
 * there is one: a Python-level slicing bug must not become a wild copy. */
static int check_range(GjDeviceArray *a, Py_ssize_t off, Py_ssize_t n, uint64_t *addr) {
    if (!a->initialized) {
        PyErr_SetString(PyExc_ValueError, "DeviceArrayBase.__init__ was not called");
        return -1;
    }
    *addr = a->data + (uint64_t)(int64_t)off;
    if (a->owner && PyObject_TypeCheck(a->owner, &GjAllocation_Type)) {
        GjAllocation *al = (GjAllocation *)a->owner;
        if (al->kind != GJ_MEM_HOST && al->generation != gj_cuda_generation(al->device)) {
            gj_cuda_error("this array's memory was destroyed by gpujit.reset()");
            return -1;
        }
        if (n > 0 && (*addr < al->ptr || *addr + (uint64_t)n > al->ptr + al->size)) {
            PyErr_Format(PyExc_IndexError, "copy of %zd bytes at offset %zd is outside the array's memory", n, off);
            return -1;
        }
    }
    return 0;
}

static PyObject *da_htod(GjDeviceArray *a, PyObject *args) {
    Py_ssize_t off;
    Py_buffer src;
    PyObject *stream = Py_None;
    CUstream h;
    uint64_t addr;
    if (!PyArg_ParseTuple(args, "ny*|O:_htod", &off, &src, &stream)) return NULL;
    int rc = -1;
    if (a->readonly)
        PyErr_SetString(PyExc_ValueError, "cannot copy into a read-only device array");
    else if (gj_stream_handle(stream, &h) == 0 && check_range(a, off, src.len, &addr) == 0) {
        /* inside a graph capture: recorded (cpu) or captured, the buffer kept with the graph */
        int g = gj_graph_capturing() ? gj_graph_copy(stream, h, GJ_HTOD, addr, (uint64_t)(uintptr_t)src.buf,
                                                     (size_t)src.len, src.obj)
                                     : 0;
        rc = g < 0   ? -1
             : g > 0 ? 0
                     : gj_memcpy(a->target, a->device, GJ_HTOD, addr, (uint64_t)(uintptr_t)src.buf, (size_t)src.len, h);
    }
    PyBuffer_Release(&src);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *da_dtoh(GjDeviceArray *a, PyObject *args) {
    Py_ssize_t off;
    Py_buffer dst;
    PyObject *stream = Py_None;
    CUstream h;
    uint64_t addr;
    if (!PyArg_ParseTuple(args, "nw*|O:_dtoh", &off, &dst, &stream)) return NULL;
    int rc = -1;
    if (gj_stream_handle(stream, &h) == 0 && check_range(a, off, dst.len, &addr) == 0) {
        int g = gj_graph_capturing() ? gj_graph_copy(stream, h, GJ_DTOH, (uint64_t)(uintptr_t)dst.buf, addr,
                                                     (size_t)dst.len, dst.obj)
                                     : 0;
        rc = g < 0   ? -1
             : g > 0 ? 0
                     : gj_memcpy(a->target, a->device, GJ_DTOH, (uint64_t)(uintptr_t)dst.buf, addr, (size_t)dst.len, h);
    }
    PyBuffer_Release(&dst);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

/* _dtod(offset, src_array, src_offset, nbytes, stream=0) */
static PyObject *da_dtod(GjDeviceArray *a, PyObject *args) {
    Py_ssize_t off, soff, n;
    GjDeviceArray *src;
    PyObject *stream = Py_None;
    CUstream h;
    uint64_t daddr, saddr;
    if (!PyArg_ParseTuple(args, "nO!nn|O:_dtod", &off, &GjDeviceArray_Type, &src, &soff, &n, &stream)) return NULL;
    if (a->readonly) {
        PyErr_SetString(PyExc_ValueError, "cannot copy into a read-only device array");
        return NULL;
    }
    if (src->target != a->target) {
        PyErr_SetString(PyExc_ValueError, "arrays live on different targets");
        return NULL;
    }
    if (gj_stream_handle(stream, &h) < 0 || check_range(a, off, n, &daddr) < 0 ||
        check_range(src, soff, n, &saddr) < 0)
        return NULL;
    int g = gj_graph_capturing() ? gj_graph_copy(stream, h, GJ_DTOD, daddr, saddr, (size_t)n, NULL) : 0;
    if (g < 0) return NULL;
    if (g > 0) Py_RETURN_NONE;
    /* another GPU's array: a peer copy (the CPU target has one device) */
    if ((src->device != a->device ? gj_memcpy_peer(a->device, daddr, src->device, saddr, (size_t)n, h)
                                  : gj_memcpy(a->target, a->device, GJ_DTOD, daddr, saddr, (size_t)n, h)) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *da_is_c_contig(GjDeviceArray *a, PyObject *unused) { return PyBool_FromLong(a->c_contig); }

/* (lo, hi): the byte range relative to the data pointer that the elements span. */
static PyObject *da_extent(GjDeviceArray *a, PyObject *unused) {
    int64_t lo = 0, hi = a->itemsize;
    for (int i = 0; i < a->ndim; i++) {
        if (a->shape[i] == 0) return Py_BuildValue("(LL)", 0LL, 0LL);
        int64_t span = (a->shape[i] - 1) * a->strides[i];
        if (span < 0)
            lo += span;
        else
            hi += span;
    }
    return Py_BuildValue("(LL)", (long long)lo, (long long)hi);
}

/* ---- DLPack export ---- */

typedef struct DLExport {
    union {
        DLManagedTensor legacy;
        DLManagedTensorVersioned versioned;
    } mt;
    int64_t shape[GJ_MAXDIM];
    int64_t strides[GJ_MAXDIM];
} DLExport;

static void dl_release(PyObject *owner, void *export) {
    PyGILState_STATE g = PyGILState_Ensure(); /* consumers may call it from any thread */
    Py_XDECREF(owner);
    PyGILState_Release(g);
    free(export);
}

static void dl_deleter(DLManagedTensor *mt) { dl_release(mt->manager_ctx, mt); }

static void dl_deleter_versioned(DLManagedTensorVersioned *mt) { dl_release(mt->manager_ctx, mt); }

static void dl_capsule_destructor(PyObject *cap) {
    /* Renamed "used_dltensor" by a consumer, which then owns the deleter. */
    if (PyCapsule_IsValid(cap, "dltensor")) {
        DLManagedTensor *mt = PyCapsule_GetPointer(cap, "dltensor");
        if (mt->deleter) mt->deleter(mt);
    } else if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        DLManagedTensorVersioned *mt = PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (mt->deleter) mt->deleter(mt);
    }
}

/* clang-format off */
static const DLDataType dl_types[GJ_NDTYPES] = {
    [GJ_BOOL] = {kDLBool, 8, 1},     [GJ_INT8] = {kDLInt, 8, 1},     [GJ_INT16] = {kDLInt, 16, 1},
    [GJ_INT32] = {kDLInt, 32, 1},    [GJ_INT64] = {kDLInt, 64, 1},   [GJ_UINT8] = {kDLUInt, 8, 1},
    [GJ_UINT16] = {kDLUInt, 16, 1},  [GJ_UINT32] = {kDLUInt, 32, 1}, [GJ_UINT64] = {kDLUInt, 64, 1},
    [GJ_FLOAT16] = {kDLFloat, 16, 1}, [GJ_BFLOAT16] = {kDLBfloat, 16, 1}, [GJ_FLOAT32] = {kDLFloat, 32, 1},
    [GJ_FLOAT64] = {kDLFloat, 64, 1},
    [GJ_COMPLEX64] = {kDLComplex, 64, 1}, [GJ_COMPLEX128] = {kDLComplex, 128, 1},
};
/* clang-format on */

/* _dlpack_capsule(versioned=False) -> PyCapsule "dltensor" (or
 * "dltensor_versioned", DLPack 1.0) viewing this array without a copy.
 * Stream synchronisation is the Python layer's job (__dlpack__). */
static PyObject *da_dlpack_capsule(GjDeviceArray *a, PyObject *args) {
    int versioned = 0;
    if (!PyArg_ParseTuple(args, "|p:_dlpack_capsule", &versioned)) return NULL;
    if (a->record) {
        PyErr_SetString(PyExc_BufferError, "DLPack has no record dtypes");
        return NULL;
    }
    for (int i = 0; i < a->ndim; i++)
        if (a->strides[i] % a->itemsize) {
            PyErr_SetString(PyExc_BufferError, "DLPack needs strides that are multiples of the itemsize");
            return NULL;
        }
    DLExport *e = calloc(1, sizeof *e);
    if (!e) return PyErr_NoMemory();
    DLTensor *t = versioned ? &e->mt.versioned.dl_tensor : &e->mt.legacy.dl_tensor;
    t->data = (void *)(uintptr_t)a->data;
    t->device.device_type = a->target == GJ_TARGET_NVPTX ? kDLCUDA : kDLCPU;
    t->device.device_id = a->target == GJ_TARGET_NVPTX ? a->device : 0;
    t->ndim = a->ndim;
    t->dtype = dl_types[a->dtype];
    for (int i = 0; i < a->ndim; i++) {
        e->shape[i] = a->shape[i];
        e->strides[i] = a->strides[i] / a->itemsize;
    }
    t->shape = e->shape;
    t->strides = e->strides;
    t->byte_offset = 0;
    PyObject *cap;
    if (versioned) {
        DLManagedTensorVersioned *mt = &e->mt.versioned;
        mt->version.major = 1;
        mt->version.minor = 0;
        mt->flags = a->readonly ? 1 : 0;
        mt->manager_ctx = Py_NewRef((PyObject *)a);
        mt->deleter = dl_deleter_versioned;
        cap = PyCapsule_New(mt, "dltensor_versioned", dl_capsule_destructor);
    } else {
        DLManagedTensor *mt = &e->mt.legacy;
        mt->manager_ctx = Py_NewRef((PyObject *)a);
        mt->deleter = dl_deleter;
        cap = PyCapsule_New(mt, "dltensor", dl_capsule_destructor);
    }
    if (!cap) {
        Py_DECREF(a);
        free(e);
    }
    return cap;
}

/* clang-format off */
static PyMethodDef da_methods[] = {
    {"is_c_contiguous", (PyCFunction)da_is_c_contig, METH_NOARGS, NULL},
    {"_htod", (PyCFunction)da_htod, METH_VARARGS,
     "_htod(offset, buffer, stream=0): copy the buffer's bytes to data+offset"},
    {"_dtoh", (PyCFunction)da_dtoh, METH_VARARGS,
     "_dtoh(offset, buffer, stream=0): fill the writable buffer from data+offset"},
    {"_dtod", (PyCFunction)da_dtod, METH_VARARGS,
     "_dtod(offset, src, src_offset, nbytes, stream=0)"},
    {"_extent", (PyCFunction)da_extent, METH_NOARGS,
     "_extent() -> (lo, hi) bytes spanned, relative to the data pointer"},
    {"_dlpack_capsule", (PyCFunction)da_dlpack_capsule, METH_VARARGS,
     "_dlpack_capsule(versioned=False) -> a DLPack capsule viewing the array"},
    {NULL},
};
/* clang-format on */

/* clang-format off */
PyTypeObject GjDeviceArray_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpujit._core.DeviceArrayBase",
    .tp_basicsize = sizeof(GjDeviceArray),
    .tp_dealloc = (destructor)da_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "C base of gpujit.DeviceArray: pointer, shape, byte strides, dtype, target.",
    .tp_traverse = (traverseproc)da_traverse,
    .tp_clear = (inquiry)da_clear,
    .tp_weaklistoffset = offsetof(GjDeviceArray, weaklist),
    .tp_methods = da_methods,
    .tp_getset = da_getset,
    .tp_dictoffset = offsetof(GjDeviceArray, dict),
    .tp_init = (initproc)da_init,
    .tp_new = PyType_GenericNew,
};
/* clang-format on */

int gj_devicearray_add(PyObject *m) {
    if (PyType_Ready(&GjDeviceArray_Type) < 0 ||
        PyModule_AddObjectRef(m, "DeviceArrayBase", (PyObject *)&GjDeviceArray_Type) < 0)
        return -1;
    PyObject *codes = PyDict_New();
    if (!codes) return -1;
    for (int i = 1; i < GJ_NDTYPES; i++) {
        PyObject *v = PyLong_FromLong(i);
        if (!v || PyDict_SetItemString(codes, dtypes[i].name, v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(codes);
            return -1;
        }
        Py_DECREF(v);
    }
    int rc = PyModule_AddObjectRef(m, "dtype_codes", codes);
    Py_DECREF(codes);
    if (rc < 0) return rc;
    /* {(DLPack type code, bits): name}, from the export table */
    PyObject *dl = PyDict_New();
    for (int i = 1; dl && i < GJ_NDTYPES; i++) {
        PyObject *k = Py_BuildValue("(ii)", dl_types[i].code, dl_types[i].bits);
        PyObject *v = PyUnicode_FromString(dtypes[i].name);
        int bad = !k || !v || PyDict_SetItem(dl, k, v) < 0;
        Py_XDECREF(k);
        Py_XDECREF(v);
        if (bad) Py_CLEAR(dl);
    }
    rc = dl ? PyModule_AddObjectRef(m, "dlpack_dtypes", dl) : -1;
    Py_XDECREF(dl);
    return rc;
}
