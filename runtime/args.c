/* The launcher's arguments: each Python argument of a launch is classified
 * (device array, NumPy/buffer, __cuda_array_interface__, CuPy, DLPack,
 * scalar) into a descriptor and a few bytes of cache key; a kernel found for
 * the key is checked against the descriptors once per cache entry; NumPy
 * arrays are staged to the device on the cuda target; and kernelParams are
 * packed by walking the kernel's parameter layout (gj_layout, src/layout.c),
 * the one description the compiler also lowered the kernel from. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

/* ---- classifying arguments ---- */

/* Key bytes of one argument: kind, dtype, ndim, layout. Device arrays, NumPy
 * arrays and foreign arrays share a key: the kernel only sees pointer + dims. */
void gj_args_key(uint8_t *k, const ArgDesc *d) {
    if (d->kind == A_TUPLE) { /* its items' keys follow; a namedtuple's class says how many */
        int named = d->record_id != 0, n = named ? d->record_id : d->nitems;
        k[0] = named ? 'n' : 't';
        k[1] = (uint8_t)(n & 0xff);
        k[2] = (uint8_t)(n >> 8);
        k[3] = 0;
        return;
    }
    if (d->record_id) { /* a record ('r') or an array of records ('R'): which dtype, in two bytes */
        k[0] = d->ndim ? 'R' : 'r';
        k[1] = (uint8_t)(d->record_id & 0xff);
        k[2] = (uint8_t)(d->record_id >> 8);
        k[3] = (uint8_t)(d->ndim | (d->c_contig ? 0x40 : 0));
        return;
    }
    k[0] = d->kind == A_SCALAR ? 's' : 'a';
    k[1] = (uint8_t)d->dtype;
    k[2] = (uint8_t)d->ndim;
    k[3] = d->kind == A_SCALAR ? 0 : d->c_contig ? 'C' : 'A';
}

/* Bytes of one element: a number's, or a record's. */
static int elem_size(const ArgDesc *d) { return d->record_id ? d->itemsize : gj_dtype_size(d->dtype); }

/* Structured dtypes ({(dtype, aligned): number}) and namedtuple classes
 * ({class: number}) seen by launches, numbered from 1 for the cache key,
 * which holds a number in two bytes. */
static PyObject *record_ids, *tuple_classes;
enum { MAX_NUMBERED = 65535 };

/* The number of `key` in *table (numbering it if new): 0, or -1. */
static int number_of(PyObject **table, PyObject *key, int pos, int *out) {
    if (!*table && !(*table = PyDict_New())) return -1;
    PyObject *id = PyDict_GetItemWithError(*table, key);
    if (!id && !PyErr_Occurred()) {
        if (PyDict_GET_SIZE(*table) >= MAX_NUMBERED) {
            PyErr_Format(PyExc_TypeError, "argument %d: too many structured dtypes or namedtuple classes (limit is %d)",
                         pos, MAX_NUMBERED);
            return -1;
        }
        id = PyLong_FromSsize_t(PyDict_GET_SIZE(*table) + 1);
        if (!id || PyDict_SetItem(*table, key, id) < 0) return Py_XDECREF(id), -1;
        Py_DECREF(id); /* the dict holds it */
    }
    if (!id) return -1;
    *out = (int)PyLong_AsLong(id);
    return 0;
}

/* The number of the structured dtype dt, in d->record_id. */
static int record_number(ArgDesc *d, PyObject *dt, int pos) {
    PyObject *al = PyObject_GetAttrString(dt, "isalignedstruct");
    PyObject *key = al ? PyTuple_Pack(2, dt, al) : NULL;
    Py_XDECREF(al);
    if (!key) return -1;
    int rc = number_of(&record_ids, key, pos, &d->record_id);
    Py_DECREF(key);
    if (rc < 0) return -1;
    d->dtype = 0;
    return 0;
}

/* A record or an array of records (a buffer of format "T{...}"): which dtype. */
static int record_dtype(ArgDesc *d, PyObject *o, int pos) {
    PyObject *dt = PyObject_GetAttrString(o, "dtype");
    if (!dt) return -1;
    int rc = record_number(d, dt, pos);
    Py_DECREF(dt);
    if (rc < 0) return -1;
    d->itemsize = (int)d->view.itemsize;
    return 0;
}

/* IEEE binary16 <-> double, exactly (a double -> half rounds once, to
 * nearest even, as NumPy's float16(x)): the C compiler may have no _Float16. */
static double half_to_double(uint16_t h) {
    int e = (h >> 10) & 0x1f;
    double m = h & 0x3ff, v;
    if (e == 0x1f) v = m ? NAN : INFINITY;
    else if (e == 0) v = ldexp(m, -24);
    else v = ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

static uint16_t half_from_double(double f) {
    uint64_t b;
    memcpy(&b, &f, 8);
    uint16_t sign = (uint16_t)((b >> 48) & 0x8000);
    b &= 0x7fffffffffffffffull;
    if (b >= 0x7ff0000000000000ull) return sign | (b > 0x7ff0000000000000ull ? 0x7e00 : 0x7c00);
    int e = (int)(b >> 52) - 1023;
    if (e >= 16) return sign | 0x7c00;
    uint64_t m = (b & ((1ull << 52) - 1)) | (1ull << 52);
    /* m * 2**(e - 52) in units of the result's last place: 2**(e - 10), or 2**-24 below the normals */
    int shift = (e >= -14 ? e - 10 : -24) - (e - 52);
    if (shift > 54) return sign;
    uint64_t q = m >> shift, rem = m & ((1ull << shift) - 1), halfway = 1ull << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1))) q++;
    uint32_t bits = e >= -14 ? (uint32_t)((e + 14) << 10) + (uint32_t)q : (uint32_t)q;
    return sign | (uint16_t)(bits >= 0x7c00 ? 0x7c00 : bits);
}

/* bfloat16 <-> double: a bfloat16 is a float32's top half. A double rounds once, to
 * nearest even (through a float32 rounded to odd), a NaN to CUDA's canonical 0x7FFF:
 * what the kernels' own conversion gives (src/bf16.c). */
static double bf16_to_double(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t bf16_from_double(double d) {
    if (d != d) return 0x7fff;
    float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((double)f != d) u = (fabs((double)f) > fabs(d) ? u - 1 : u) | 1; /* to odd */
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static PyObject *np_generic; /* numpy.generic, imported on first need */

static int numpy_scalar_type(PyObject *o) {
    if (!np_generic) {
        PyObject *np = PyImport_ImportModule("numpy");
        if (!np) {
            PyErr_Clear();
            return 0;
        }
        np_generic = PyObject_GetAttrString(np, "generic");
        Py_DECREF(np);
        if (!np_generic) {
            PyErr_Clear();
            return 0;
        }
    }
    return PyObject_IsInstance(o, np_generic) == 1;
}

static void set_array(ArgDesc *d, int kind, GjDtype dt, int ndim, uint64_t data, int readonly) {
    d->kind = kind;
    d->dtype = dt;
    d->ndim = ndim;
    d->data = data;
    d->readonly = readonly;
}

static int read_scalar(ArgDesc *d, GjDtype dt, const void *p) {
    d->kind = A_SCALAR;
    d->dtype = dt;
    switch (dt) {
    case GJ_BOOL: d->value.i = *(const uint8_t *)p != 0; break;
    case GJ_INT8: d->value.i = *(const int8_t *)p; break;
    case GJ_INT16: d->value.i = *(const int16_t *)p; break;
    case GJ_INT32: d->value.i = *(const int32_t *)p; break;
    case GJ_INT64: d->value.i = *(const int64_t *)p; break;
    case GJ_UINT8: d->value.u = *(const uint8_t *)p; break;
    case GJ_UINT16: d->value.u = *(const uint16_t *)p; break;
    case GJ_UINT32: d->value.u = *(const uint32_t *)p; break;
    case GJ_UINT64: d->value.u = *(const uint64_t *)p; break;
    case GJ_FLOAT16: d->value.f = half_to_double(*(const uint16_t *)p); break;
    case GJ_BFLOAT16: d->value.f = bf16_to_double(*(const uint16_t *)p); break;
    case GJ_FLOAT32: d->value.f = *(const float *)p; break;
    case GJ_FLOAT64: d->value.f = *(const double *)p; break;
    case GJ_COMPLEX64: d->value.f = ((const float *)p)[0], d->imag = ((const float *)p)[1]; break;
    case GJ_COMPLEX128: d->value.f = ((const double *)p)[0], d->imag = ((const double *)p)[1]; break;
    default: return -1;
    }
    return 0;
}

/* ml_dtypes' dtypes, which NumPy cannot export through a buffer: the code of `o`'s
 * dtype if it is one of them, else 0 (no exception). */
static GjDtype ml_dtype(PyObject *o) {
    PyObject *dt = PyObject_GetAttrString(o, "dtype");
    PyObject *name = dt ? PyObject_GetAttrString(dt, "name") : NULL;
    GjDtype r = 0;
    const char *n = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (n) r = !strcmp(n, "bfloat16") ? GJ_BFLOAT16 : !strcmp(n, "float8_e4m3fn") ? GJ_FLOAT8_E4M3
                                  : !strcmp(n, "float8_e5m2")                     ? GJ_FLOAT8_E5M2
                                                                                  : 0;
    Py_XDECREF(name);
    Py_XDECREF(dt);
    PyErr_Clear();
    return r;
}

static int from_buffer(ArgDesc *d, PyObject *o, int pos, int scalar) {
    GjDtype ml = ml_dtype(o);
    if (ml) { /* its bytes through an unsigned view of the same memory, which the buffer keeps */
        PyObject *v = PyObject_CallMethod(o, "view", "s", ml == GJ_BFLOAT16 ? "uint16" : "uint8");
        if (!v) return -1;
        int rc = PyObject_GetBuffer(v, &d->view, PyBUF_RECORDS_RO);
        Py_DECREF(v);
        if (rc < 0) return -1;
        d->has_view = 1;
        if (scalar) return read_scalar(d, ml, d->view.buf);
        if (d->view.ndim > GJ_MAXDIM) {
            PyErr_Format(PyExc_TypeError, "argument %d: %d dimensions; at most %d", pos, d->view.ndim, GJ_MAXDIM);
            return -1;
        }
        set_array(d, A_HOST, ml, d->view.ndim, (uint64_t)(uintptr_t)d->view.buf, d->view.readonly);
        for (int i = 0; i < d->ndim; i++) {
            d->shape[i] = d->view.shape[i];
            d->strides[i] = d->view.strides ? d->view.strides[i] : 0;
        }
        if (!d->view.strides) gj_c_strides(d->ndim, d->shape, d->view.itemsize, d->strides);
        return 0;
    }
    if (PyObject_GetBuffer(o, &d->view, PyBUF_RECORDS_RO) < 0) {
        /* NumPy refuses to export some dtypes (datetime64...): that is a bad
         * argument type, not a ValueError of ours */
        if (PyErr_ExceptionMatches(PyExc_ValueError) || PyErr_ExceptionMatches(PyExc_BufferError)) {
            PyObject *dt = PyObject_GetAttrString(o, "dtype");
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "argument %d: unsupported dtype %S (kernels take bool, int8-int64, "
                         "uint8-uint64, float16, bfloat16, float32, float64, complex64 and complex128)",
                         pos, dt ? dt : Py_None);
            Py_XDECREF(dt);
        }
        return -1;
    }
    d->has_view = 1;
    if (d->view.format && !strncmp(d->view.format, "T{", 2)) {
        /* a record (a NumPy void scalar: the kernel gets its address, and
         * what it writes there is the record's, as numba copies it back) or
         * an array of records */
        if (record_dtype(d, o, pos) < 0) return -1;
        set_array(d, A_HOST, 0, scalar ? 0 : d->view.ndim, (uint64_t)(uintptr_t)d->view.buf,
                  scalar ? 0 : d->view.readonly);
        if (d->ndim > GJ_MAXDIM) {
            PyErr_Format(PyExc_TypeError, "argument %d: %d dimensions; at most %d", pos, d->ndim, GJ_MAXDIM);
            return -1;
        }
        for (int i = 0; i < d->ndim; i++) {
            d->shape[i] = d->view.shape[i];
            d->strides[i] = d->view.strides ? d->view.strides[i] : 0;
        }
        if (!d->view.strides) gj_c_strides(d->ndim, d->shape, d->itemsize, d->strides);
        d->c_contig = gj_is_c_contig(d->ndim, d->shape, d->strides, d->itemsize);
        return 0;
    }
    GjDtype dt = gj_dtype_from_format(d->view.format, d->view.itemsize);
    if (!dt) {
        PyErr_Format(PyExc_TypeError, "argument %d: unsupported dtype (buffer format '%s')", pos,
                     d->view.format ? d->view.format : "B");
        return -1;
    }
    if (scalar) return read_scalar(d, dt, d->view.buf);
    if (d->view.ndim > GJ_MAXDIM) {
        PyErr_Format(PyExc_TypeError, "argument %d: %d dimensions; at most %d", pos, d->view.ndim, GJ_MAXDIM);
        return -1;
    }
    set_array(d, A_HOST, dt, d->view.ndim, (uint64_t)(uintptr_t)d->view.buf, d->view.readonly);
    for (int i = 0; i < d->ndim; i++) {
        d->shape[i] = d->view.shape[i];
        d->strides[i] = d->view.strides ? d->view.strides[i] : 0;
    }
    if (!d->view.strides) gj_c_strides(d->ndim, d->shape, d->view.itemsize, d->strides);
    return 0;
}

/* A device array described by a pointer, a typestr ("<f4"), a shape tuple and a
 * strides tuple in bytes (None or NULL: C-contiguous): CAI and CuPy arrays. */
static GjDtype typestr_dtype(int pos, PyObject *typestr) {
    const char *ts = PyUnicode_AsUTF8(typestr);
    GjDtype dt = ts ? gj_dtype_from_typestr(ts) : 0;
    if (!dt) PyErr_Format(PyExc_TypeError, "argument %d: unsupported dtype '%s'", pos, ts ? ts : "?");
    return dt;
}

static int foreign_array_of(ArgDesc *d, int pos, uint64_t ptr, int ro, GjDtype dt, PyObject *shape,
                            PyObject *strides);

static int foreign_array(ArgDesc *d, int pos, uint64_t ptr, int ro, PyObject *typestr, PyObject *shape,
                         PyObject *strides) {
    GjDtype dt = typestr_dtype(pos, typestr);
    return dt ? foreign_array_of(d, pos, ptr, ro, dt, shape, strides) : -1;
}

static int foreign_array_of(ArgDesc *d, int pos, uint64_t ptr, int ro, GjDtype dt, PyObject *shape,
                            PyObject *strides) {
    Py_ssize_t nd = PyTuple_GET_SIZE(shape);
    if (nd > GJ_MAXDIM) {
        PyErr_Format(PyExc_TypeError, "argument %d: %zd dimensions; at most %d", pos, nd, GJ_MAXDIM);
        return -1;
    }
    set_array(d, A_FOREIGN, dt, (int)nd, ptr, ro);
    for (Py_ssize_t i = 0; i < nd; i++)
        if ((d->shape[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i))) == -1 && PyErr_Occurred()) return -1;
    if (strides && strides != Py_None) {
        if (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != nd) {
            PyErr_Format(PyExc_TypeError, "argument %d: malformed strides", pos);
            return -1;
        }
        for (Py_ssize_t i = 0; i < nd; i++)
            if ((d->strides[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(strides, i))) == -1 && PyErr_Occurred()) return -1;
    } else {
        gj_c_strides(d->ndim, d->shape, gj_dtype_size(dt), d->strides);
    }
    return 0;
}

/* A CAI whose typestr is raw bytes ("<V2"), as a producer writes for a type NumPy has no
 * letter for (bfloat16). */
static int cai_untyped(PyObject *cai) {
    PyObject *typestr = PyDict_Check(cai) ? PyDict_GetItemString(cai, "typestr") : NULL;
    const char *ts = typestr && PyUnicode_Check(typestr) ? PyUnicode_AsUTF8(typestr) : NULL;
    if (!ts) PyErr_Clear();
    return ts && ts[0] && ts[1] == 'V';
}

/* __cuda_array_interface__ v3 (cuda target only). *sync gets the producer's
 * stream if it must be synchronised, else NULL. */
static int from_cai(ArgDesc *d, PyObject *cai, int pos, CUstream *sync) {
    *sync = NULL;
    if (!PyDict_Check(cai)) {
        PyErr_Format(PyExc_TypeError, "argument %d: __cuda_array_interface__ is not a dict", pos);
        return -1;
    }
    PyObject *shape = PyDict_GetItemString(cai, "shape");
    PyObject *typestr = PyDict_GetItemString(cai, "typestr");
    PyObject *data = PyDict_GetItemString(cai, "data");
    PyObject *strides = PyDict_GetItemString(cai, "strides");
    PyObject *mask = PyDict_GetItemString(cai, "mask");
    PyObject *stream = PyDict_GetItemString(cai, "stream");
    if (!shape || !PyTuple_Check(shape) || !typestr || !PyUnicode_Check(typestr) || !data || !PyTuple_Check(data) ||
        PyTuple_GET_SIZE(data) != 2) {
        PyErr_Format(PyExc_TypeError, "argument %d: malformed __cuda_array_interface__", pos);
        return -1;
    }
    if (mask && mask != Py_None) {
        PyErr_Format(PyExc_TypeError, "argument %d: masked arrays are not supported", pos);
        return -1;
    }
    uint64_t ptr = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(data, 0));
    int ro = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1));
    if (PyErr_Occurred() || ro < 0) return -1;
    if (foreign_array(d, pos, ptr, ro, typestr, shape, strides) < 0) return -1;
    if (stream && stream != Py_None) {
        unsigned long long s = PyLong_AsUnsignedLongLong(stream);
        if (PyErr_Occurred()) return -1;
        *sync = (CUstream)(uintptr_t)s;
    }
    return 0;
}

/* CuPy's ndarray, read directly: its __cuda_array_interface__ builds a dict and
 * looks up the current stream on every access, and its buffer export raises; together
 * most of a launch's cost. The same facts, from the attributes: data.ptr, shape,
 * strides, dtype.str, and the stream CuPy's CAI would name (its current stream: 1, the
 * legacy default stream, for the null stream), looked up once per launch. */
static PyTypeObject *cupy_type;     /* the exact type cupy.ndarray, once one was seen */
static PyObject *cupy_get_stream;   /* cupy.cuda.get_current_stream */

static int is_cupy_array(PyObject *o) {
    PyTypeObject *t = Py_TYPE(o);
    if (t == cupy_type) return 1;
    if (cupy_type || !strstr(t->tp_name, "ndarray")) return 0;
    PyObject *mod = PyObject_GetAttrString((PyObject *)t, "__module__");
    size_t n = strlen(t->tp_name);
    const char *m = mod && PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : NULL;
    int yes = m && !strncmp(m, "cupy", 4) && (m[4] == 0 || m[4] == '.') && n >= 7 &&
            !strcmp(t->tp_name + n - 7, "ndarray");
    Py_XDECREF(mod);
    PyErr_Clear();
    if (yes) {
        PyObject *cuda = PyImport_ImportModule("cupy.cuda");
        cupy_get_stream = cuda ? PyObject_GetAttrString(cuda, "get_current_stream") : NULL;
        Py_XDECREF(cuda);
        if (!cupy_get_stream) {
            PyErr_Clear();
            return 0;
        }
        Py_INCREF(t);
        cupy_type = t;
    }
    return yes;
}

static PyObject *getattr_id(PyObject *o, const char *name, PyObject **interned) {
    if (!*interned) *interned = PyUnicode_InternFromString(name);
    return *interned ? PyObject_GetAttr(o, *interned) : NULL;
}

/* The GjDtype of a NumPy dtype object, by identity: dtype objects are immutable and NumPy's
 * builtin ones are singletons, so the few an array library uses are each read (dtype.str, a
 * string made on every access, and its parse) once, not on every launch. Held with the GIL. */
static GjDtype cupy_dtype(int pos, PyObject *dtype) {
    static struct {
        PyObject *dtype; /* a strong reference */
        GjDtype dt;
    } seen[8];
    static int next;
    for (int i = 0; i < 8; i++)
        if (seen[i].dtype == dtype) return seen[i].dt;
    static PyObject *s_str;
    PyObject *str = getattr_id(dtype, "str", &s_str);
    if (!str) return 0;
    GjDtype dt = 0;
    PyObject *name = PyObject_GetAttrString(dtype, "name");
    if (name && PyUnicode_Check(name) && !strcmp(PyUnicode_AsUTF8(name), "bfloat16")) /* ml_dtypes': '<V2' */
        dt = GJ_BFLOAT16;
    Py_XDECREF(name);
    PyErr_Clear();
    if (dt)
        ;
    else if (!PyUnicode_Check(str))
        PyErr_Format(PyExc_TypeError, "argument %d: a CuPy array without shape/strides/dtype", pos);
    else
        dt = typestr_dtype(pos, str);
    Py_DECREF(str);
    if (dt) {
        Py_XSETREF(seen[next].dtype, Py_NewRef(dtype));
        seen[next].dt = dt;
        next = (next + 1) % 8;
    }
    return dt;
}

/* *stream caches CuPy's current stream for the launch ((CUstream)-1: not looked up) */
static int from_cupy(ArgDesc *d, PyObject *o, int pos, CUstream *stream, CUstream *sync) {
    static PyObject *s_data, *s_ptr, *s_shape, *s_strides, *s_dtype;
    PyObject *data = getattr_id(o, "data", &s_data);
    PyObject *ptr = data ? getattr_id(data, "ptr", &s_ptr) : NULL;
    PyObject *shape = getattr_id(o, "shape", &s_shape);
    PyObject *strides = getattr_id(o, "strides", &s_strides);
    PyObject *dtype = getattr_id(o, "dtype", &s_dtype);
    int rc = -1;
    if (!ptr || !shape || !strides || !dtype) goto out;
    if (!PyTuple_Check(shape) || !PyTuple_Check(strides)) {
        PyErr_Format(PyExc_TypeError, "argument %d: a CuPy array without shape/strides/dtype", pos);
        goto out;
    }
    GjDtype dt = cupy_dtype(pos, dtype);
    if (!dt) goto out;
    uint64_t p = PyLong_AsUnsignedLongLong(ptr);
    if (PyErr_Occurred() || foreign_array_of(d, pos, p, 0, dt, shape, strides) < 0) goto out;
    if (*stream == (CUstream)(intptr_t)-1) {
        static PyObject *s_sptr;
        PyObject *st = PyObject_CallNoArgs(cupy_get_stream);
        PyObject *sp = st ? getattr_id(st, "ptr", &s_sptr) : NULL;
        unsigned long long v = sp ? PyLong_AsUnsignedLongLong(sp) : 0;
        Py_XDECREF(st);
        Py_XDECREF(sp);
        if (!sp || PyErr_Occurred()) goto out;
        *stream = v ? (CUstream)(uintptr_t)v : GJ_STREAM_LEGACY;
    }
    *sync = *stream;
    rc = 0;
out:
    Py_XDECREF(data);
    Py_XDECREF(ptr);
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    Py_XDECREF(dtype);
    return rc;
}

static GjDtype dl_dtype(DLDataType t) {
    if (t.lanes != 1) return 0;
    switch (t.code) {
    case kDLInt:
        return t.bits == 8 ? GJ_INT8 : t.bits == 16 ? GJ_INT16 : t.bits == 32 ? GJ_INT32 : t.bits == 64 ? GJ_INT64 : 0;
    case kDLUInt:
        return t.bits == 8     ? GJ_UINT8
                : t.bits == 16 ? GJ_UINT16
                : t.bits == 32 ? GJ_UINT32
                : t.bits == 64 ? GJ_UINT64
                               : 0;
    case kDLFloat: return t.bits == 16 ? GJ_FLOAT16 : t.bits == 32 ? GJ_FLOAT32 : t.bits == 64 ? GJ_FLOAT64 : 0;
    case kDLBfloat: return t.bits == 16 ? GJ_BFLOAT16 : 0;
    case kDLBool: return t.bits == 8 ? GJ_BOOL : 0;
    case kDLComplex: return t.bits == 64 ? GJ_COMPLEX64 : t.bits == 128 ? GJ_COMPLEX128 : 0;
    }
    return 0;
}

/* A DLPack producer: consumes its capsule (renamed "used_dltensor"; the
 * deleter runs after the launch). Returns 1 if handled, 0 if `o` is no
 * producer, -1 on error. */
static int from_dlpack(ArgDesc *d, PyObject *o, int pos, GjTargetKind target, int dev, CUstream launch_stream) {
    PyObject *devt = PyObject_CallMethod(o, "__dlpack_device__", NULL);
    if (!devt) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
        PyErr_Clear();
        return 0;
    }
    int type = -1, id = 0;
    if (!PyArg_ParseTuple(devt, "ii", &type, &id)) {
        Py_DECREF(devt);
        return -1;
    }
    Py_DECREF(devt);
    int on_gpu = type == kDLCUDA || type == kDLCUDAManaged;
    if (!on_gpu && type != kDLCPU && type != kDLCUDAHost) {
        PyErr_Format(PyExc_TypeError, "argument %d: DLPack device type %d is not supported", pos, type);
        return -1;
    }
    if (on_gpu && target != GJ_TARGET_NVPTX) {
        PyErr_Format(PyExc_TypeError, "argument %d: a CUDA tensor cannot be passed to a cpu-target launch", pos);
        return -1;
    }
    if (on_gpu && id != dev) {
        PyErr_Format(PyExc_ValueError, "argument %d lives on CUDA device %d; launching on %d", pos, id, dev);
        return -1;
    }
    PyObject *cap;
    if (on_gpu) {
        /* The consumer names its stream; the producer makes the data ready on it.
         * 1 is the legacy default stream (our handle 0). */
        uintptr_t s = launch_stream ? (uintptr_t)launch_stream : 1;
        PyObject *kw = Py_BuildValue("{s:K}", "stream", (unsigned long long)s);
        PyObject *meth = kw ? PyObject_GetAttrString(o, "__dlpack__") : NULL;
        PyObject *noargs = PyTuple_New(0);
        cap = meth && noargs ? PyObject_Call(meth, noargs, kw) : NULL;
        Py_XDECREF(meth);
        Py_XDECREF(kw);
        Py_XDECREF(noargs);
    } else {
        cap = PyObject_CallMethod(o, "__dlpack__", NULL);
    }
    if (!cap) return -1;
    DLManagedTensor *mt = PyCapsule_GetPointer(cap, "dltensor");
    if (!mt) {
        Py_DECREF(cap);
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "argument %d: __dlpack__ did not return a \"dltensor\" capsule", pos);
        return -1;
    }
    if (PyCapsule_SetName(cap, "used_dltensor") < 0) {
        Py_DECREF(cap);
        return -1;
    }
    d->capsule = cap;
    d->managed = mt;
    DLTensor *t = &mt->dl_tensor;
    GjDtype dt = dl_dtype(t->dtype);
    if (!dt) {
        PyErr_Format(PyExc_TypeError, "argument %d: unsupported DLPack dtype (code %d, %d bits)", pos, t->dtype.code,
                     t->dtype.bits);
        return -1;
    }
    if (t->ndim > GJ_MAXDIM || t->ndim < 0) {
        PyErr_Format(PyExc_TypeError, "argument %d: %d dimensions; at most %d", pos, t->ndim, GJ_MAXDIM);
        return -1;
    }
    set_array(d, on_gpu ? A_FOREIGN : A_HOST, dt, t->ndim, (uint64_t)(uintptr_t)t->data + t->byte_offset, 0);
    int isz = gj_dtype_size(dt);
    for (int i = 0; i < t->ndim; i++) {
        d->shape[i] = t->shape[i];
        d->strides[i] = t->strides ? t->strides[i] * isz : 0;
    }
    if (!t->strides) gj_c_strides(d->ndim, d->shape, isz, d->strides);
    return 1;
}

/* Tuples nest at most this deep; one has at most this many items (the key's two bytes). */
enum { MAX_TUPLE_DEPTH = 32, MAX_TUPLE_ITEMS = 65535 };

int gj_args_count(PyObject *o, int pos, int depth) {
    if (!PyTuple_Check(o)) return 1;
    if (depth >= MAX_TUPLE_DEPTH) {
        PyErr_Format(PyExc_TypeError, "argument %d: tuples nested too deeply (limit is %d)", pos, MAX_TUPLE_DEPTH);
        return -1;
    }
    if (PyTuple_GET_SIZE(o) > MAX_TUPLE_ITEMS) {
        PyErr_Format(PyExc_TypeError, "argument %d: too many tuple items (limit is %d)", pos, MAX_TUPLE_ITEMS);
        return -1;
    }
    int n = 1;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(o); k++) {
        int m = gj_args_count(PyTuple_GET_ITEM(o, k), pos, depth + 1);
        if (m < 0) return -1;
        n += m;
    }
    return n;
}

static int classify_one(ArgDesc *d, PyObject *o, int pos, GjTargetKind target, int dev, CUstream launch_stream,
                        CUstream *sync, CUstream *cupy_stream);

/* Classifies one argument into its descriptors; *sync gets a producer
 * stream to synchronise (CAI), the last one of a tuple's items that has one. */
int gj_args_classify(ArgDesc *d, PyObject *o, int pos, GjTargetKind target, int dev, CUstream launch_stream,
                     CUstream *sync, CUstream *cupy_stream) {
    d->pos = pos;
    d->span = 1;
    if (!PyTuple_Check(o)) return classify_one(d, o, pos, target, dev, launch_stream, sync, cupy_stream);
    *sync = NULL;
    d->kind = A_TUPLE;
    d->nitems = (int)PyTuple_GET_SIZE(o);
    if (Py_TYPE(o) != &PyTuple_Type && number_of(&tuple_classes, (PyObject *)Py_TYPE(o), pos, &d->record_id) < 0)
        return -1;
    for (int k = 0; k < d->nitems; k++) {
        CUstream s;
        ArgDesc *item = d + d->span;
        if (gj_args_classify(item, PyTuple_GET_ITEM(o, k), pos, target, dev, launch_stream, &s, cupy_stream) < 0)
            return -1;
        if (s) *sync = s;
        d->span += item->span;
    }
    return 0;
}

static int classify_one(ArgDesc *d, PyObject *o, int pos, GjTargetKind target, int dev, CUstream launch_stream,
                        CUstream *sync, CUstream *cupy_stream) {
    *sync = NULL;
    if (PyObject_TypeCheck(o, &GjDeviceArray_Type)) {
        GjDeviceArray *a = (GjDeviceArray *)o;
        if (!a->initialized) {
            PyErr_Format(PyExc_TypeError, "argument %d: DeviceArrayBase.__init__ was not called", pos);
            return -1;
        }
        if (a->target != target) {
            PyErr_Format(PyExc_TypeError,
                         "argument %d is an array of the %s target; this launch is on %s "
                         "(copy it with copy_to_host() and to_device())",
                         pos, gj_target_name(a->target),
                         gj_target_name(target));
            return -1;
        }
        if (target == GJ_TARGET_NVPTX && a->device != dev) {
            PyErr_Format(PyExc_ValueError, "argument %d lives on CUDA device %d; launching on %d", pos, a->device, dev);
            return -1;
        }
        d->kind = A_DEVARRAY;
        d->dtype = a->dtype;
        if (a->record) { /* an array of records */
            if (record_number(d, a->record, pos) < 0) return -1;
            d->itemsize = a->itemsize;
        }
        d->ndim = a->ndim;
        d->data = a->data;
        d->c_contig = a->c_contig;
        d->readonly = a->readonly;
        memcpy(d->shape, a->shape, a->ndim * sizeof(int64_t));
        memcpy(d->strides, a->strides, a->ndim * sizeof(int64_t));
        return 0;
    }
    if (PyBool_Check(o)) {
        d->kind = A_SCALAR;
        d->dtype = GJ_BOOL;
        d->value.i = o == Py_True;
        return 0;
    }
    if (PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyComplex_CheckExact(o)) goto python_number;
    if (numpy_scalar_type(o)) {
        if (from_buffer(d, o, pos, 1) < 0) return -1;
        if (d->record_id) return 0; /* its buffer stays: the kernel reads and writes it */
        PyBuffer_Release(&d->view);
        d->has_view = 0;
        return 0;
    }
    if (PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o)) goto python_number;
    int rc;
    if (target == GJ_TARGET_NVPTX && is_cupy_array(o)) {
        if (from_cupy(d, o, pos, cupy_stream, sync) < 0) return -1;
        goto array_done;
    }
    if (PyObject_CheckBuffer(o)) {
        if (from_buffer(d, o, pos, 0) == 0) goto array_done;
        if (target != GJ_TARGET_NVPTX || d->has_view) return -1;
        /* a buffer that refuses host access (CuPy): use its CUDA interface; any
         * other refusal (NumPy's datetime64) keeps the TypeError just set */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        int has_cai = PyObject_HasAttrString(o, "__cuda_array_interface__");
        if (!has_cai) {
            PyErr_Restore(type, value, tb);
            return -1;
        }
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
    }
    if (target == GJ_TARGET_NVPTX) {
        PyObject *cai = PyObject_GetAttrString(o, "__cuda_array_interface__");
        if (cai && cai_untyped(cai) && PyObject_HasAttrString(o, "__dlpack__")) {
            Py_CLEAR(cai); /* DLPack names the type: PyTorch's bfloat16 is "<V2" in its CAI */
        } else if (cai) {
            rc = from_cai(d, cai, pos, sync);
            Py_DECREF(cai);
            if (rc < 0) return -1;
            goto array_done;
        }
        /* torch raises other errors than AttributeError for CPU tensors */
        PyErr_Clear();
    }
    rc = from_dlpack(d, o, pos, target, dev, launch_stream);
    if (rc < 0) return -1;
    if (rc == 1) goto array_done;
    if (target == GJ_TARGET_HOST && PyObject_HasAttrString(o, "__cuda_array_interface__")) {
        PyErr_Format(PyExc_TypeError,
                     "argument %d: a CUDA array (__cuda_array_interface__) cannot be passed to a "
                     "cpu-target launch",
                     pos);
        return -1;
    }
    if (PyList_Check(o)) {
        /* a list has no fixed element type or layout a kernel could index */
        PyErr_Format(PyExc_TypeError,
                     "argument %d: unsupported type list (pass a NumPy array instead: "
                     "numpy.asarray(the_list), or a tuple for a few scalars)",
                     pos);
        return -1;
    }
    PyErr_Format(PyExc_TypeError,
                 "argument %d: unsupported type %.100s (expected a device array, a NumPy "
                 "array, a CUDA or DLPack array, an int/float/complex/bool/NumPy scalar, a record "
                 "or a tuple of them)",
                 pos, Py_TYPE(o)->tp_name);
    return -1;

python_number:
    d->kind = A_SCALAR;
    if (PyComplex_Check(o)) {
        d->dtype = GJ_COMPLEX128;
        d->value.f = PyComplex_RealAsDouble(o);
        d->imag = PyComplex_ImagAsDouble(o);
        return PyErr_Occurred() ? -1 : 0;
    }
    if (PyFloat_Check(o)) {
        d->dtype = GJ_FLOAT64;
        d->value.f = PyFloat_AS_DOUBLE(o);
        return 0;
    }
    int overflow;
    d->dtype = GJ_INT64;
    d->value.i = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow > 0) { /* beyond int64: uint64, as numba types it */
        d->dtype = GJ_UINT64;
        d->value.u = PyLong_AsUnsignedLongLong(o);
    }
    if (overflow < 0 || PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_OverflowError, "argument %d: integer %R does not fit in 64 bits", pos, o);
        return -1;
    }
    return 0;

array_done:
    /* a producer's stream (CAI, CuPy) that is the launch's needs no wait; 1 (the legacy
     * default stream) is our stream 0 */
    if (*sync == launch_stream || (*sync == GJ_STREAM_LEGACY && !launch_stream)) *sync = NULL;
    d->c_contig = gj_is_c_contig(d->ndim, d->shape, d->strides, elem_size(d));
    return 0;
}

void gj_args_release(ArgDesc *d, int n, int dev) {
    for (int i = 0; i < n; i++) {
        if (d[i].has_view) PyBuffer_Release(&d[i].view);
        if (d[i].capsule) {
            if (d[i].managed && d[i].managed->deleter) d[i].managed->deleter(d[i].managed);
            Py_DECREF(d[i].capsule);
        }
        if (d[i].staged && !d[i].alias) gj_device_free(dev, d[i].staged);
        d[i].has_view = 0;
        d[i].capsule = NULL;
        d[i].staged = 0;
    }
}

/* ---- checking a kernel against the arguments (once per cache entry) ---- */

static int is_int(GjDtype t) { return t >= GJ_INT8 && t <= GJ_UINT64; }
static int is_float(GjDtype t) { return t == GJ_FLOAT32 || t == GJ_FLOAT64 || t == GJ_FLOAT16 || t == GJ_BFLOAT16; }
static int is_complex(GjDtype t) { return t == GJ_COMPLEX64 || t == GJ_COMPLEX128; }

static void describe_arg(char *buf, size_t n, const ArgDesc *d) {
    if (d->kind == A_TUPLE)
        snprintf(buf, n, "a tuple of %d items", d->nitems);
    else if (d->record_id && !d->ndim)
        snprintf(buf, n, "a record of %d bytes", d->itemsize);
    else if (d->record_id)
        snprintf(buf, n, "array(record of %d bytes, %dd, %c)", d->itemsize, d->ndim, d->c_contig ? 'C' : 'A');
    else if (d->kind == A_SCALAR)
        snprintf(buf, n, "%s", gj_dtype_name(d->dtype));
    else
        snprintf(buf, n, "array(%s, %dd, %c)", gj_dtype_name(d->dtype), d->ndim, d->c_contig ? 'C' : 'A');
}

static void describe_param(char *buf, size_t n, const GjArgInfo *a) {
    if (a->kind == GJ_ARG_TUPLE)
        snprintf(buf, n, "a tuple of %d items", a->nitems);
    else if (a->kind == GJ_ARG_RECORD)
        snprintf(buf, n, "a record of %d bytes", a->itemsize);
    else if (a->kind == GJ_ARG_ARRAY && a->itemsize)
        snprintf(buf, n, "array(record of %d bytes, %dd, %c)", a->itemsize, a->ndim, a->layout);
    else if (a->kind == GJ_ARG_SCALAR)
        snprintf(buf, n, "%s", gj_dtype_name(a->dtype));
    else
        snprintf(buf, n, "array(%s, %dd, %c)", gj_dtype_name(a->dtype), a->ndim, a->layout);
}

PyObject *gj_kernel_name(PyObject *disp, GjOutput *o) {
    PyObject *n = PyObject_GetAttrString(disp, "__name__");
    if (n && PyUnicode_Check(n)) return n;
    Py_XDECREF(n);
    PyErr_Clear();
    return PyUnicode_FromString(o ? gj_output_symbol(o) : "?");
}

/* ints and bools convert to any number; floats to floats and complex; complex only to complex */
static int takes(const GjArgInfo *a, const ArgDesc *d) {
    if (a->kind == GJ_ARG_TUPLE || d->kind == A_TUPLE) return a->kind == GJ_ARG_TUPLE && d->kind == A_TUPLE && a->nitems == d->nitems;
    if (a->kind == GJ_ARG_RECORD) return d->record_id && !d->ndim && d->itemsize == a->itemsize;
    if (a->kind == GJ_ARG_ARRAY && a->itemsize)
        return d->record_id && d->ndim == a->ndim && d->itemsize == a->itemsize && (a->layout != 'C' || d->c_contig);
    if (d->record_id) return 0;
    if (a->kind == GJ_ARG_ARRAY) /* int32 for uint32: the dispatcher passes a one-signature kernel's memory as is */
        return d->kind != A_SCALAR &&
                (d->dtype == a->dtype ||
                 (is_int(d->dtype) && is_int(a->dtype) && gj_dtype_size(d->dtype) == gj_dtype_size(a->dtype))) &&
                d->ndim == a->ndim && (a->layout != 'C' || d->c_contig);
    return d->kind == A_SCALAR &&
            (d->dtype == a->dtype || is_complex(a->dtype) ||
             ((is_int(d->dtype) || d->dtype == GJ_BOOL) && (is_int(a->dtype) || is_float(a->dtype))) ||
             (is_float(d->dtype) && is_float(a->dtype)));
}

static int same_param(const GjParam *a, const GjParam *b) {
    return a->size == b->size && a->align == b->align && a->role == b->role && a->dtype == b->dtype &&
            a->arg == b->arg && a->axis == b->axis;
}

/* gj_args_pack fills the parameters gj_layout() gives for the kernel's
 * arguments: a kernel that declares others is a compiler bug. */
static int check_layout(GjOutput *o) {
    const GjParam *p = gj_output_params(o);
    int np = gj_output_nparams(o);
    GjParam *want = malloc(((size_t)np + 1) * sizeof *want);
    if (!want) {
        PyErr_NoMemory();
        return -1;
    }
    int n = gj_layout(gj_output_args(o), gj_output_nargs(o), gj_output_debug(o), want, np);
    int bad = n != np;
    for (int k = 0; !bad && k < np; k++) bad = !same_param(&p[k], &want[k]);
    free(want);
    if (bad) {
        PyErr_Format(PyExc_RuntimeError,
                     "internal error: kernel %s has %d ABI parameters, which are not the layout of its "
                     "arguments (runtime/args.c check_layout)",
                     gj_output_symbol(o), np);
        return -1;
    }
    return 0;
}

/* One argument (or a tuple's item, and its items) against what the kernel takes. */
static int check_arg(PyObject *disp, GjOutput *o, const GjArgInfo *a, const ArgDesc *d) {
    if (!takes(a, d)) {
        char got[64], want[64];
        describe_arg(got, sizeof got, d);
        describe_param(want, sizeof want, a);
        PyObject *name = gj_kernel_name(disp, o);
        PyErr_Format(PyExc_TypeError, "kernel '%U' argument %d: got %s, the kernel takes %s%s", name, d->pos, got, want,
                     a->kind == GJ_ARG_ARRAY && a->layout == 'C' && !d->c_contig && d->kind != A_SCALAR &&
                                     d->kind != A_TUPLE && d->dtype == a->dtype
                             ? " (a C-contiguous array)"
                             : "");
        Py_XDECREF(name);
        return -1;
    }
    for (int j = 0, k = 1; a->kind == GJ_ARG_TUPLE && j < a->nitems; j++, k += d[k].span)
        if (check_arg(disp, o, &a->items[j], &d[k]) < 0) return -1;
    return 0;
}

int gj_args_check(PyObject *disp, GjOutput *o, const ArgDesc *d, int nargs) {
    int n = gj_output_nargs(o);
    const GjArgInfo *ai = gj_output_args(o);
    PyObject *name = NULL;
    if (n != nargs) {
        name = gj_kernel_name(disp, o);
        PyErr_Format(PyExc_TypeError, "kernel '%U' takes %d argument%s, got %d", name, n, n == 1 ? "" : "s", nargs);
        Py_XDECREF(name);
        return -1;
    }
    for (int i = 0, k = 0; i < n; i++, k += d[k].span)
        if (check_arg(disp, o, &ai[i], &d[k]) < 0) return -1;
    return check_layout(o);
}

static void mark(const GjArgInfo *a, ArgDesc *d) {
    d->kernel_writes = a->written;
    for (int j = 0, k = 1; a->kind == GJ_ARG_TUPLE && j < a->nitems; j++, k += d[k].span) mark(&a->items[j], &d[k]);
}

void gj_args_mark(ArgDesc *d, int nargs, const GjOutput *o) {
    const GjArgInfo *ai = gj_output_args(o);
    for (int i = 0, k = 0; i < nargs; i++, k += d[k].span) mark(&ai[i], &d[k]);
}

/* ---- packing kernelParams ---- */

/* A scalar argument (or, with `imag`, a complex one's imaginary part: 0 for
 * a real argument) converted to dtype `to` in an 8-byte slot. */
static void put_scalar(uint64_t *slot, GjDtype to, const ArgDesc *d, int imag) {
    /* The source as the widest type of its kind. */
    int64_t i = 0;
    uint64_t u = 0;
    double f = 0;
    int src_float = is_float(d->dtype) || is_complex(d->dtype),
        src_unsigned = d->dtype >= GJ_UINT8 && d->dtype <= GJ_UINT64;
    if (imag)
        src_float = 1, f = is_complex(d->dtype) ? d->imag : 0.0;
    else if (src_float)
        f = d->value.f;
    else if (src_unsigned)
        u = d->value.u, i = (int64_t)u, f = (double)u;
    else
        i = d->value.i, u = (uint64_t)i, f = (double)i;
    *slot = 0;
    switch (to) {
    case GJ_BOOL: *(uint8_t *)slot = src_float ? f != 0 : u != 0; break;
    case GJ_INT8: *(int8_t *)slot = (int8_t)i; break;
    case GJ_INT16: *(int16_t *)slot = (int16_t)i; break;
    case GJ_INT32: *(int32_t *)slot = (int32_t)i; break;
    case GJ_INT64: *(int64_t *)slot = i; break;
    case GJ_UINT8: *(uint8_t *)slot = (uint8_t)u; break;
    case GJ_UINT16: *(uint16_t *)slot = (uint16_t)u; break;
    case GJ_UINT32: *(uint32_t *)slot = (uint32_t)u; break;
    case GJ_UINT64: *(uint64_t *)slot = u; break;
    case GJ_FLOAT16: *(uint16_t *)slot = half_from_double(f); break;
    case GJ_BFLOAT16: *(uint16_t *)slot = bf16_from_double(f); break;
    case GJ_FLOAT32: *(float *)slot = (float)f; break;
    case GJ_FLOAT64: *(double *)slot = f; break;
    default: break;
    }
}

/* Walks the kernel's parameter layout: what each slot holds is the
 * parameter's role in its argument. A staged array passes its device copy,
 * whose strides are C-contiguous. */
void gj_args_pack(const GjOutput *o, const ArgDesc *d, uint64_t errbuf, uint64_t *slots, void **kp) {
    const GjParam *p = gj_output_params(o);
    int np = gj_output_nparams(o);
    int arg = 0, base = 0; /* argument `arg`'s descriptors start at d[base] */
    for (int k = 0; k < np; k++) {
        while (p[k].arg > arg) base += d[base].span, arg++;
        const ArgDesc *a = &d[p[k].arg >= 0 ? base + p[k].item : 0];
        slots[k] = 0;
        switch (p[k].role) {
        case GJ_PARAM_VALUE:
        case GJ_PARAM_REAL: put_scalar(&slots[k], p[k].dtype, a, 0); break;
        case GJ_PARAM_IMAG: put_scalar(&slots[k], p[k].dtype, a, 1); break;
        case GJ_PARAM_DATA: slots[k] = a->staged ? a->staged : a->data; break;
        case GJ_PARAM_SHAPE: slots[k] = (uint64_t)a->shape[p[k].axis]; break;
        case GJ_PARAM_STRIDE: slots[k] = (uint64_t)(a->staged ? a->staged_strides : a->strides)[p[k].axis]; break;
        case GJ_PARAM_ERRBUF: slots[k] = errbuf; break;
        default: break;
        }
        kp[k] = &slots[k];
    }
}

/* ---- staging host arrays on the cuda target ---- */

static void strided_copy(char *dst, const int64_t *dst_strides, const char *src, const int64_t *src_strides,
                         const int64_t *shape, int ndim, int itemsize) {
    if (ndim == 0) {
        memcpy(dst, src, itemsize);
        return;
    }
    for (int64_t i = 0; i < shape[0]; i++)
        strided_copy(dst + i * dst_strides[0], dst_strides + 1, src + i * src_strides[0], src_strides + 1, shape + 1,
                     ndim - 1, itemsize);
}

static size_t array_nbytes(const ArgDesc *d) {
    size_t n = elem_size(d);
    for (int i = 0; i < d->ndim; i++) n *= (size_t)d->shape[i];
    return n;
}

static int same_host_array(const ArgDesc *a, const ArgDesc *b) {
    if (a->kind != A_HOST || a->alias || a->data != b->data || a->dtype != b->dtype || a->ndim != b->ndim) return 0;
    for (int k = 0; k < a->ndim; k++)
        if (a->shape[k] != b->shape[k] || a->strides[k] != b->strides[k]) return 0;
    return 1;
}

static int stage_in(ArgDesc *d, int dev) {
    size_t n = array_nbytes(d);
    if (n == 0) return 0;
    if (gj_device_malloc(dev, n, &d->staged) < 0) return -1;
    gj_c_strides(d->ndim, d->shape, elem_size(d), d->staged_strides);
    if (d->c_contig) return gj_memcpy(GJ_TARGET_NVPTX, dev, GJ_HTOD, d->staged, d->data, n, NULL);
    char *tmp = malloc(n);
    if (!tmp) {
        PyErr_NoMemory();
        return -1;
    }
    strided_copy(tmp, d->staged_strides, (const char *)(uintptr_t)d->data, d->strides, d->shape, d->ndim,
                 elem_size(d));
    int rc = gj_memcpy(GJ_TARGET_NVPTX, dev, GJ_HTOD, d->staged, (uint64_t)(uintptr_t)tmp, n, NULL);
    free(tmp);
    return rc;
}

static int stage_out(ArgDesc *d, int dev) {
    size_t n = array_nbytes(d);
    if (n == 0 || d->readonly) return 0;
    if (d->c_contig) return gj_memcpy(GJ_TARGET_NVPTX, dev, GJ_DTOH, d->data, d->staged, n, NULL);
    char *tmp = malloc(n);
    if (!tmp) {
        PyErr_NoMemory();
        return -1;
    }
    int rc = gj_memcpy(GJ_TARGET_NVPTX, dev, GJ_DTOH, (uint64_t)(uintptr_t)tmp, d->staged, n, NULL);
    if (rc == 0)
        strided_copy((char *)(uintptr_t)d->data, d->strides, tmp, d->staged_strides, d->shape, d->ndim,
                     elem_size(d));
    free(tmp);
    return rc;
}

int gj_args_stage_in(ArgDesc *d, int nargs, int dev, int *staged) {
    *staged = 0;
    for (int i = 0; i < nargs; i++) {
        if (d[i].kind != A_HOST) continue;
        /* the same host array passed twice shares one device copy, so
         * that what the kernel wrote through one comes back through both */
        int j = 0;
        while (j < i && !same_host_array(&d[j], &d[i])) j++;
        if (j < i) {
            d[i].staged = d[j].staged;
            memcpy(d[i].staged_strides, d[j].staged_strides, sizeof d[i].staged_strides);
            d[i].alias = 1;
            d[j].written |= d[i].kernel_writes;
            continue;
        }
        if (stage_in(&d[i], dev) < 0) return -1;
        d[i].written = d[i].kernel_writes;
        *staged = 1;
    }
    return 0;
}

/* only what the kernel may have written comes back */
int gj_args_stage_out(ArgDesc *d, int nargs, int dev) {
    for (int i = 0; i < nargs; i++)
        if (d[i].kind == A_HOST && !d[i].alias && d[i].written && stage_out(&d[i], dev) < 0) return -1;
    return 0;
}

/* for tests: the CuPy array type the launcher reads directly, once it has seen one */
PyObject *gj_args_cupy_type(void) { return Py_NewRef(cupy_type ? (PyObject *)cupy_type : Py_None); }
