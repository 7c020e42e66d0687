/* The caching launcher: `kernel[griddim, blockdim, stream, smem](args)`.
 *
 * _core.DispatcherBase is the C base of the Python dispatcher. Subscripting it
 * makes a _core.LaunchConfig; calling that classifies each argument (device
 * array, NumPy/buffer, __cuda_array_interface__, DLPack, scalar) into a
 * descriptor and a few bytes of cache key, finds the CompiledKernel for the key
 * (on a miss the subclass's _specialize(args) compiles one, which is then
 * checked against the arguments once and cached), packs kernelParams per the
 * ABI of docs/runtime.md, and launches with cuLaunchKernel or, on the cpu
 * target, gj_cpu_launch. A cache hit with device arrays makes no Python call
 * and no attribute lookup.
 *
 * NumPy arguments on the cuda target are copied to the device before the launch
 * and back after it (synchronising the stream), as numba does. */
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "cuda.h"

/* ---- argument descriptors ---- */

enum {
    A_DEVARRAY = 1, /* DeviceArrayBase: memory of the launch's target */
    A_HOST,         /* host memory (buffer protocol, DLPack kDLCPU): staged on cuda */
    A_FOREIGN,      /* device memory of another library (CAI, DLPack kDLCUDA) */
    A_SCALAR,
};

typedef struct ArgDesc {
    int kind;
    GjDtype dtype;
    int ndim, c_contig, readonly;
    uint64_t data;
    int64_t shape[GJ_MAXDIM], strides[GJ_MAXDIM]; /* strides in bytes */
    union { int64_t i; uint64_t u; double f; } value; /* scalars, in `dtype` (a complex's real part in f) */
    double imag;                /* complex scalars: the imaginary part */
    Py_buffer view;             /* A_HOST from a buffer: released after the launch */
    int has_view;
    PyObject *capsule;          /* consumed DLPack capsule: deleter runs after the launch */
    DLManagedTensor *managed;
    CUdeviceptr staged;         /* cuda: device copy of an A_HOST argument */
    int alias;                  /* staged shares an earlier argument's copy */
    int written;                /* cuda: copy back after the launch (the kernel may write it) */
} ArgDesc;

#define MAX_STACK_ARGS 16
#define MAX_STACK_PARAMS 128
#define KEY_HEADER 4

/* Key bytes of one argument: kind, dtype, ndim, layout. Device arrays, NumPy
 * arrays and foreign arrays share a key: the kernel only sees pointer + dims. */
static void key_arg(uint8_t *k, const ArgDesc *d)
{
    k[0] = d->kind == A_SCALAR ? 's' : 'a';
    k[1] = (uint8_t)d->dtype;
    k[2] = (uint8_t)d->ndim;
    k[3] = d->kind == A_SCALAR ? 0 : d->c_contig ? 'C' : 'A';
}

static PyObject *np_generic; /* numpy.generic, imported on first need */

static int numpy_scalar_type(PyObject *o)
{
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

static int fill_c_strides(ArgDesc *d, int itemsize)
{
    int64_t s = itemsize;
    for (int i = d->ndim - 1; i >= 0; i--) {
        d->strides[i] = s;
        s *= d->shape[i] ? d->shape[i] : 1;
    }
    return 0;
}

static void set_array(ArgDesc *d, int kind, GjDtype dt, int ndim, uint64_t data, int readonly)
{
    d->kind = kind;
    d->dtype = dt;
    d->ndim = ndim;
    d->data = data;
    d->readonly = readonly;
}

static int read_scalar(ArgDesc *d, GjDtype dt, const void *p)
{
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
    case GJ_FLOAT32: d->value.f = *(const float *)p; break;
    case GJ_FLOAT64: d->value.f = *(const double *)p; break;
    case GJ_COMPLEX64: d->value.f = ((const float *)p)[0], d->imag = ((const float *)p)[1]; break;
    case GJ_COMPLEX128: d->value.f = ((const double *)p)[0], d->imag = ((const double *)p)[1]; break;
    default: return -1;
    }
    return 0;
}

static int from_buffer(ArgDesc *d, PyObject *o, int pos, int scalar)
{
    if (PyObject_GetBuffer(o, &d->view, PyBUF_RECORDS_RO) < 0) {
        /* NumPy refuses to export some dtypes (datetime64...): that is a bad
         * argument type, not a ValueError of ours */
        if (PyErr_ExceptionMatches(PyExc_ValueError) || PyErr_ExceptionMatches(PyExc_BufferError)) {
            PyObject *dt = PyObject_GetAttrString(o, "dtype");
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "argument %d: unsupported dtype %S (kernels take bool, int8-int64, "
                         "uint8-uint64, float32, float64, complex64 and complex128)", pos, dt ? dt : Py_None);
            Py_XDECREF(dt);
        }
        return -1;
    }
    d->has_view = 1;
    GjDtype dt = gj_dtype_from_format(d->view.format, d->view.itemsize);
    if (!dt) {
        PyErr_Format(PyExc_TypeError, "argument %d: unsupported dtype (buffer format '%s')", pos,
                     d->view.format ? d->view.format : "B");
        return -1;
    }
    if (scalar)
        return read_scalar(d, dt, d->view.buf);
    if (d->view.ndim > GJ_MAXDIM) {
        PyErr_Format(PyExc_TypeError, "argument %d: %d dimensions; at most %d", pos,
                     d->view.ndim, GJ_MAXDIM);
        return -1;
    }
    set_array(d, A_HOST, dt, d->view.ndim, (uint64_t)(uintptr_t)d->view.buf, d->view.readonly);
    for (int i = 0; i < d->ndim; i++) {
        d->shape[i] = d->view.shape[i];
        d->strides[i] = d->view.strides ? d->view.strides[i] : 0;
    }
    if (!d->view.strides)
        fill_c_strides(d, (int)d->view.itemsize);
    return 0;
}

/* A device array described by a pointer, a typestr ("<f4"), a shape tuple and a
 * strides tuple in bytes (None or NULL: C-contiguous): CAI and CuPy arrays. */
static int foreign_array(ArgDesc *d, int pos, uint64_t ptr, int ro, PyObject *typestr, PyObject *shape,
                         PyObject *strides)
{
    const char *ts = PyUnicode_AsUTF8(typestr);
    GjDtype dt = ts ? gj_dtype_from_typestr(ts) : 0;
    if (!dt) {
        PyErr_Format(PyExc_TypeError, "argument %d: unsupported dtype '%s'", pos, ts ? ts : "?");
        return -1;
    }
    Py_ssize_t nd = PyTuple_GET_SIZE(shape);
    if (nd > GJ_MAXDIM) {
        PyErr_Format(PyExc_TypeError, "argument %d: %zd dimensions; at most %d", pos, nd, GJ_MAXDIM);
        return -1;
    }
    set_array(d, A_FOREIGN, dt, (int)nd, ptr, ro);
    for (Py_ssize_t i = 0; i < nd; i++)
        if ((d->shape[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i))) == -1 && PyErr_Occurred())
            return -1;
    if (strides && strides != Py_None) {
        if (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != nd) {
            PyErr_Format(PyExc_TypeError, "argument %d: malformed strides", pos);
            return -1;
        }
        for (Py_ssize_t i = 0; i < nd; i++)
            if ((d->strides[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(strides, i))) == -1 &&
                PyErr_Occurred())
                return -1;
    } else {
        fill_c_strides(d, gj_dtype_size(dt));
    }
    return 0;
}

/* __cuda_array_interface__ v3 (cuda target only). *sync gets the producer's
 * stream if it must be synchronised, else NULL. */
static int from_cai(ArgDesc *d, PyObject *cai, int pos, CUstream *sync)
{
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
    if (!shape || !PyTuple_Check(shape) || !typestr || !PyUnicode_Check(typestr) || !data ||
        !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2) {
        PyErr_Format(PyExc_TypeError, "argument %d: malformed __cuda_array_interface__", pos);
        return -1;
    }
    if (mask && mask != Py_None) {
        PyErr_Format(PyExc_TypeError, "argument %d: masked arrays are not supported", pos);
        return -1;
    }
    uint64_t ptr = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(data, 0));
    int ro = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1));
    if (PyErr_Occurred() || ro < 0)
        return -1;
    if (foreign_array(d, pos, ptr, ro, typestr, shape, strides) < 0)
        return -1;
    if (stream && stream != Py_None) {
        unsigned long long s = PyLong_AsUnsignedLongLong(stream);
        if (PyErr_Occurred())
            return -1;
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

static int is_cupy_array(PyObject *o)
{
    PyTypeObject *t = Py_TYPE(o);
    if (t == cupy_type)
        return 1;
    if (cupy_type || !strstr(t->tp_name, "ndarray"))
        return 0;
    PyObject *mod = PyObject_GetAttrString((PyObject *)t, "__module__");
    size_t n = strlen(t->tp_name);
    const char *m = mod && PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : NULL;
    int yes = m && !strncmp(m, "cupy", 4) && (m[4] == 0 || m[4] == '.') &&
              n >= 7 && !strcmp(t->tp_name + n - 7, "ndarray");
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

static PyObject *getattr_id(PyObject *o, const char *name, PyObject **interned)
{
    if (!*interned)
        *interned = PyUnicode_InternFromString(name);
    return *interned ? PyObject_GetAttr(o, *interned) : NULL;
}

/* *stream caches CuPy's current stream for the launch ((CUstream)-1: not looked up) */
static int from_cupy(ArgDesc *d, PyObject *o, int pos, CUstream *stream, CUstream *sync)
{
    static PyObject *s_data, *s_ptr, *s_shape, *s_strides, *s_dtype, *s_str;
    PyObject *data = getattr_id(o, "data", &s_data);
    PyObject *ptr = data ? getattr_id(data, "ptr", &s_ptr) : NULL;
    PyObject *shape = getattr_id(o, "shape", &s_shape);
    PyObject *strides = getattr_id(o, "strides", &s_strides);
    PyObject *dtype = getattr_id(o, "dtype", &s_dtype);
    PyObject *str = dtype ? getattr_id(dtype, "str", &s_str) : NULL;
    int rc = -1;
    if (!ptr || !shape || !strides || !str)
        goto out;
    if (!PyTuple_Check(shape) || !PyTuple_Check(strides) || !PyUnicode_Check(str)) {
        PyErr_Format(PyExc_TypeError, "argument %d: a CuPy array without shape/strides/dtype", pos);
        goto out;
    }
    uint64_t p = PyLong_AsUnsignedLongLong(ptr);
    if (PyErr_Occurred() || foreign_array(d, pos, p, 0, str, shape, strides) < 0)
        goto out;
    if (*stream == (CUstream)(intptr_t)-1) {
        static PyObject *s_sptr;
        PyObject *st = PyObject_CallNoArgs(cupy_get_stream);
        PyObject *sp = st ? getattr_id(st, "ptr", &s_sptr) : NULL;
        unsigned long long v = sp ? PyLong_AsUnsignedLongLong(sp) : 0;
        Py_XDECREF(st);
        Py_XDECREF(sp);
        if (!sp || PyErr_Occurred())
            goto out;
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
    Py_XDECREF(str);
    return rc;
}

static GjDtype dl_dtype(DLDataType t)
{
    if (t.lanes != 1)
        return 0;
    switch (t.code) {
    case kDLInt: return t.bits == 8 ? GJ_INT8 : t.bits == 16 ? GJ_INT16 : t.bits == 32 ? GJ_INT32
                       : t.bits == 64 ? GJ_INT64 : 0;
    case kDLUInt: return t.bits == 8 ? GJ_UINT8 : t.bits == 16 ? GJ_UINT16
                       : t.bits == 32 ? GJ_UINT32 : t.bits == 64 ? GJ_UINT64 : 0;
    case kDLFloat: return t.bits == 32 ? GJ_FLOAT32 : t.bits == 64 ? GJ_FLOAT64 : 0;
    case kDLBool: return t.bits == 8 ? GJ_BOOL : 0;
    case kDLComplex: return t.bits == 64 ? GJ_COMPLEX64 : t.bits == 128 ? GJ_COMPLEX128 : 0;
    }
    return 0;
}

/* A DLPack producer: consumes its capsule (renamed "used_dltensor"; the
 * deleter runs after the launch). Returns 1 if handled, 0 if `o` is no
 * producer, -1 on error. */
static int from_dlpack(ArgDesc *d, PyObject *o, int pos, GjTargetKind target, int dev,
                       CUstream launch_stream)
{
    PyObject *devt = PyObject_CallMethod(o, "__dlpack_device__", NULL);
    if (!devt) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
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
        PyErr_Format(PyExc_TypeError, "argument %d: DLPack device type %d is not supported", pos,
                     type);
        return -1;
    }
    if (on_gpu && target != GJ_TARGET_NVPTX) {
        PyErr_Format(PyExc_TypeError,
                     "argument %d: a CUDA tensor cannot be passed to a cpu-target launch", pos);
        return -1;
    }
    if (on_gpu && id != dev) {
        PyErr_Format(PyExc_ValueError, "argument %d lives on CUDA device %d; launching on %d", pos,
                     id, dev);
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
    if (!cap)
        return -1;
    DLManagedTensor *mt = PyCapsule_GetPointer(cap, "dltensor");
    if (!mt) {
        Py_DECREF(cap);
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "argument %d: __dlpack__ did not return a \"dltensor\" capsule",
                     pos);
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
        PyErr_Format(PyExc_TypeError, "argument %d: unsupported DLPack dtype (code %d, %d bits)",
                     pos, t->dtype.code, t->dtype.bits);
        return -1;
    }
    if (t->ndim > GJ_MAXDIM || t->ndim < 0) {
        PyErr_Format(PyExc_TypeError, "argument %d: %d dimensions; at most %d", pos, t->ndim,
                     GJ_MAXDIM);
        return -1;
    }
    set_array(d, on_gpu ? A_FOREIGN : A_HOST, dt, t->ndim,
              (uint64_t)(uintptr_t)t->data + t->byte_offset, 0);
    int isz = gj_dtype_size(dt);
    for (int i = 0; i < t->ndim; i++) {
        d->shape[i] = t->shape[i];
        d->strides[i] = t->strides ? t->strides[i] * isz : 0;
    }
    if (!t->strides)
        fill_c_strides(d, isz);
    return 1;
}

/* Classifies one argument; *sync gets a producer stream to synchronise (CAI). */
static int classify(ArgDesc *d, PyObject *o, int pos, GjTargetKind target, int dev,
                    CUstream launch_stream, CUstream *sync, CUstream *cupy_stream)
{
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
                         pos, a->target == GJ_TARGET_NVPTX ? "cuda" : "cpu",
                         target == GJ_TARGET_NVPTX ? "cuda" : "cpu");
            return -1;
        }
        if (target == GJ_TARGET_NVPTX && a->device != dev) {
            PyErr_Format(PyExc_ValueError, "argument %d lives on CUDA device %d; launching on %d",
                         pos, a->device, dev);
            return -1;
        }
        d->kind = A_DEVARRAY;
        d->dtype = a->dtype;
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
    if (PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyComplex_CheckExact(o))
        goto python_number;
    if (numpy_scalar_type(o)) {
        if (from_buffer(d, o, pos, 1) < 0)
            return -1;
        PyBuffer_Release(&d->view);
        d->has_view = 0;
        return 0;
    }
    if (PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o))
        goto python_number;
    int rc;
    if (target == GJ_TARGET_NVPTX && is_cupy_array(o)) {
        if (from_cupy(d, o, pos, cupy_stream, sync) < 0)
            return -1;
        goto array_done;
    }
    if (PyObject_CheckBuffer(o)) {
        if (from_buffer(d, o, pos, 0) == 0)
            goto array_done;
        if (target != GJ_TARGET_NVPTX || d->has_view)
            return -1;
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
        if (cai) {
            rc = from_cai(d, cai, pos, sync);
            Py_DECREF(cai);
            if (rc < 0)
                return -1;
            goto array_done;
        }
        /* torch raises other errors than AttributeError for CPU tensors */
        PyErr_Clear();
    }
    rc = from_dlpack(d, o, pos, target, dev, launch_stream);
    if (rc < 0)
        return -1;
    if (rc == 1)
        goto array_done;
    if (target == GJ_TARGET_HOST && PyObject_HasAttrString(o, "__cuda_array_interface__")) {
        PyErr_Format(PyExc_TypeError,
                     "argument %d: a CUDA array (__cuda_array_interface__) cannot be passed to a "
                     "cpu-target launch", pos);
        return -1;
    }
    PyErr_Format(PyExc_TypeError,
                 "argument %d: unsupported type %.100s (expected a device array, a NumPy "
                 "array, a CUDA or DLPack array, or an int/float/complex/bool/NumPy scalar)",
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
    if (*sync == launch_stream || (*sync == GJ_STREAM_LEGACY && !launch_stream))
        *sync = NULL;
    d->c_contig = gj_is_c_contig(d->ndim, d->shape, d->strides, gj_dtype_size(d->dtype));
    return 0;
}

static void release_args(ArgDesc *d, int n, int dev)
{
    for (int i = 0; i < n; i++) {
        if (d[i].has_view)
            PyBuffer_Release(&d[i].view);
        if (d[i].capsule) {
            if (d[i].managed && d[i].managed->deleter)
                d[i].managed->deleter(d[i].managed);
            Py_DECREF(d[i].capsule);
        }
        if (d[i].staged && !d[i].alias)
            gj_device_free(dev, d[i].staged);
        d[i].has_view = 0;
        d[i].capsule = NULL;
        d[i].staged = 0;
    }
}

/* ---- the dispatch cache ---- */

typedef struct CacheEntry {
    uint64_t hash;
    uint8_t *key;          /* NULL: empty slot */
    size_t keylen;
    PyObject *kernel;      /* CompiledKernel (strong) */
    GjOutput *out;         /* borrowed from kernel */
    /* cuda: the loaded function while `generation` is current */
    CUfunction fn;
    int fn_max_threads;
    int fn_dyn_smem;       /* MAX_DYNAMIC_SHARED_SIZE_BYTES set so far */
    unsigned generation;
    int fn_valid;
} CacheEntry;

typedef struct GjDispatcher {
    PyObject_HEAD
    CacheEntry *table;
    size_t capacity, count;  /* capacity: 0 or a power of two */
    PyObject *dict;
    PyObject *weaklist;
} GjDispatcher;

static uint64_t hash_key(const uint8_t *k, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ k[i]) * 1099511628211ull;
    return h;
}

static CacheEntry *cache_find(GjDispatcher *d, const uint8_t *key, size_t n, uint64_t h)
{
    if (!d->capacity)
        return NULL;
    size_t mask = d->capacity - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        CacheEntry *e = &d->table[i];
        if (!e->key)
            return NULL;
        if (e->hash == h && e->keylen == n && !memcmp(e->key, key, n))
            return e;
    }
}

static CacheEntry *slot_for(CacheEntry *table, size_t cap, uint64_t h)
{
    size_t mask = cap - 1, i = h & mask;
    while (table[i].key)
        i = (i + 1) & mask;
    return &table[i];
}

static CacheEntry *cache_insert(GjDispatcher *d, const uint8_t *key, size_t n, uint64_t h,
                                PyObject *kernel, GjOutput *out)
{
    if ((d->count + 1) * 2 > d->capacity) {
        size_t nc = d->capacity ? d->capacity * 2 : 8;
        CacheEntry *nt = calloc(nc, sizeof *nt);
        if (!nt) {
            PyErr_NoMemory();
            return NULL;
        }
        for (size_t i = 0; i < d->capacity; i++)
            if (d->table[i].key)
                *slot_for(nt, nc, d->table[i].hash) = d->table[i];
        free(d->table);
        d->table = nt;
        d->capacity = nc;
    }
    uint8_t *k = malloc(n);
    if (!k) {
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(k, key, n);
    CacheEntry *e = slot_for(d->table, d->capacity, h);
    *e = (CacheEntry){.hash = h, .key = k, .keylen = n, .kernel = Py_NewRef(kernel), .out = out};
    d->count++;
    return e;
}

static void cache_clear(GjDispatcher *d)
{
    CacheEntry *t = d->table;
    size_t cap = d->capacity;
    d->table = NULL;
    d->capacity = d->count = 0;
    for (size_t i = 0; i < cap; i++)
        if (t[i].key) {
            free(t[i].key);
            Py_DECREF(t[i].kernel);
        }
    free(t);
}

/* ---- checking a kernel against the arguments (once per cache entry) ---- */

static int is_int(GjDtype t) { return t >= GJ_INT8 && t <= GJ_UINT64; }
static int is_float(GjDtype t) { return t == GJ_FLOAT32 || t == GJ_FLOAT64; }
static int is_complex(GjDtype t) { return t == GJ_COMPLEX64 || t == GJ_COMPLEX128; }

static void describe_arg(char *buf, size_t n, const ArgDesc *d)
{
    if (d->kind == A_SCALAR)
        snprintf(buf, n, "%s", gj_dtype_name(d->dtype));
    else
        snprintf(buf, n, "array(%s, %dd, %c)", gj_dtype_name(d->dtype), d->ndim,
                 d->c_contig ? 'C' : 'A');
}

static void describe_param(char *buf, size_t n, const GjArgInfo *a)
{
    if (a->kind == GJ_ARG_SCALAR)
        snprintf(buf, n, "%s", gj_dtype_name(a->dtype));
    else
        snprintf(buf, n, "array(%s, %dd, %c)", gj_dtype_name(a->dtype), a->ndim, a->layout);
}

/* The dispatcher's name for messages: its __name__, else the PTX symbol. */
static PyObject *kernel_name(PyObject *disp, GjOutput *o)
{
    PyObject *n = PyObject_GetAttrString(disp, "__name__");
    if (n && PyUnicode_Check(n))
        return n;
    Py_XDECREF(n);
    PyErr_Clear();
    return PyUnicode_FromString(o ? gj_output_symbol(o) : "?");
}

static int check_kernel(PyObject *disp, GjOutput *o, const ArgDesc *d, int nargs)
{
    int n = gj_output_nargs(o);
    const GjArgInfo *ai = gj_output_args(o);
    PyObject *name = NULL;
    if (n != nargs) {
        name = kernel_name(disp, o);
        PyErr_Format(PyExc_TypeError, "kernel '%U' takes %d argument%s, got %d", name, n,
                     n == 1 ? "" : "s", nargs);
        Py_XDECREF(name);
        return -1;
    }
    int expect_params = 0;
    for (int i = 0; i < n; i++) {
        const GjArgInfo *a = &ai[i];
        int ok;
        if (a->kind == GJ_ARG_ARRAY) {
            ok = d[i].kind != A_SCALAR && d[i].dtype == a->dtype && d[i].ndim == a->ndim &&
                 (a->layout != 'C' || d[i].c_contig);
            expect_params += 1 + 2 * a->ndim;
        } else {
            /* ints and bools convert to any number; floats to floats and complex; complex only
             * to complex */
            ok = d[i].kind == A_SCALAR &&
                 (d[i].dtype == a->dtype || is_complex(a->dtype) ||
                  ((is_int(d[i].dtype) || d[i].dtype == GJ_BOOL) &&
                   (is_int(a->dtype) || is_float(a->dtype))) ||
                  (is_float(d[i].dtype) && is_float(a->dtype)));
            expect_params += is_complex(a->dtype) ? 2 : 1;
        }
        if (!ok) {
            char got[64], want[64];
            describe_arg(got, sizeof got, &d[i]);
            describe_param(want, sizeof want, a);
            name = kernel_name(disp, o);
            PyErr_Format(PyExc_TypeError, "kernel '%U' argument %d: got %s, the kernel takes %s%s",
                         name, i + 1, got, want,
                         a->kind == GJ_ARG_ARRAY && a->layout == 'C' && !d[i].c_contig &&
                                 d[i].kind != A_SCALAR && d[i].dtype == a->dtype
                             ? " (a C-contiguous array)"
                             : "");
            Py_XDECREF(name);
            return -1;
        }
    }
    /* The flattened ABI must be what we pack: a mismatch is a compiler bug. */
    const GjParam *p = gj_output_params(o);
    int np = gj_output_nparams(o), k = 0;
    if (gj_output_debug(o))
        expect_params += 1; /* the error buffer */
    int bad = np != expect_params;
    for (int i = 0; !bad && i < n; i++) {
        if (ai[i].kind == GJ_ARG_ARRAY) {
            for (int j = 0; j < 1 + 2 * ai[i].ndim; j++)
                bad |= p[k++].size != 8;
        } else if (is_complex(ai[i].dtype)) { /* re, im */
            bad |= p[k++].size != gj_dtype_size(ai[i].dtype) / 2;
            bad |= p[k++].size != gj_dtype_size(ai[i].dtype) / 2;
        } else {
            bad |= p[k++].size != gj_dtype_size(ai[i].dtype);
        }
    }
    if (bad) {
        PyErr_Format(PyExc_RuntimeError,
                     "internal error: kernel %s has %d ABI parameters, which do not match its "
                     "arguments (runtime/launch.c check_kernel)", gj_output_symbol(o), np);
        return -1;
    }
    return 0;
}

/* ---- packing kernelParams ---- */

static void put_scalar(uint64_t *slot, GjDtype to, const ArgDesc *d)
{
    /* The source as the widest type of its kind. */
    int64_t i = 0;
    uint64_t u = 0;
    double f = 0;
    int src_float = is_float(d->dtype) || is_complex(d->dtype), src_unsigned = d->dtype >= GJ_UINT8 && d->dtype <= GJ_UINT64;
    if (src_float)
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
    case GJ_FLOAT32: *(float *)slot = (float)f; break;
    case GJ_FLOAT64: *(double *)slot = f; break;
    case GJ_COMPLEX64: /* two slots: re, im */
        *(float *)slot = (float)f;
        slot[1] = 0;
        *(float *)&slot[1] = is_complex(d->dtype) ? (float)d->imag : 0.0f;
        break;
    case GJ_COMPLEX128:
        *(double *)slot = f;
        *(double *)&slot[1] = is_complex(d->dtype) ? d->imag : 0.0;
        break;
    default: break;
    }
}

/* Each parameter in its own 8-byte slot; kp[i] points at slot i. */
static void pack(const GjArgInfo *ai, const ArgDesc *d, int nargs, uint64_t *slots, void **kp)
{
    int k = 0;
    for (int i = 0; i < nargs; i++) {
        if (ai[i].kind == GJ_ARG_ARRAY) {
            int nd = d[i].ndim;
            int64_t cstrides[GJ_MAXDIM];
            const int64_t *strides = d[i].strides;
            slots[k] = d[i].data;
            if (d[i].staged) { /* a contiguous device copy of a host array */
                slots[k] = d[i].staged;
                int64_t s = gj_dtype_size(d[i].dtype);
                for (int j = nd - 1; j >= 0; j--) {
                    cstrides[j] = s;
                    s *= d[i].shape[j] ? d[i].shape[j] : 1;
                }
                strides = cstrides;
            }
            k++;
            for (int j = 0; j < nd; j++)
                slots[k++] = (uint64_t)d[i].shape[j];
            for (int j = 0; j < nd; j++)
                slots[k++] = (uint64_t)strides[j];
        } else {
            put_scalar(&slots[k], ai[i].dtype, &d[i]);
            k += is_complex(ai[i].dtype) ? 2 : 1;
        }
    }
    for (int j = 0; j < k; j++)
        kp[j] = &slots[j];
}

/* ---- staging host arrays on the cuda target ---- */

static void strided_copy(char *dst, const int64_t *dst_strides, const char *src,
                         const int64_t *src_strides, const int64_t *shape, int ndim, int itemsize)
{
    if (ndim == 0) {
        memcpy(dst, src, itemsize);
        return;
    }
    for (int64_t i = 0; i < shape[0]; i++)
        strided_copy(dst + i * dst_strides[0], dst_strides + 1, src + i * src_strides[0],
                     src_strides + 1, shape + 1, ndim - 1, itemsize);
}

static size_t array_nbytes(const ArgDesc *d)
{
    size_t n = gj_dtype_size(d->dtype);
    for (int i = 0; i < d->ndim; i++)
        n *= (size_t)d->shape[i];
    return n;
}

static void c_strides(const ArgDesc *d, int64_t *out)
{
    int64_t s = gj_dtype_size(d->dtype);
    for (int j = d->ndim - 1; j >= 0; j--) {
        out[j] = s;
        s *= d->shape[j] ? d->shape[j] : 1;
    }
}

static int same_host_array(const ArgDesc *a, const ArgDesc *b)
{
    if (a->kind != A_HOST || a->alias || a->data != b->data || a->dtype != b->dtype || a->ndim != b->ndim)
        return 0;
    for (int k = 0; k < a->ndim; k++)
        if (a->shape[k] != b->shape[k] || a->strides[k] != b->strides[k])
            return 0;
    return 1;
}

static int stage_in(ArgDesc *d, int dev)
{
    size_t n = array_nbytes(d);
    if (n == 0)
        return 0;
    if (gj_device_malloc(dev, n, &d->staged) < 0)
        return -1;
    if (d->c_contig)
        return gj_memcpy(GJ_TARGET_NVPTX, dev, GJ_HTOD, d->staged, d->data, n, NULL);
    char *tmp = malloc(n);
    if (!tmp) {
        PyErr_NoMemory();
        return -1;
    }
    int64_t cs[GJ_MAXDIM];
    c_strides(d, cs);
    strided_copy(tmp, cs, (const char *)(uintptr_t)d->data, d->strides, d->shape, d->ndim,
                 gj_dtype_size(d->dtype));
    int rc = gj_memcpy(GJ_TARGET_NVPTX, dev, GJ_HTOD, d->staged, (uint64_t)(uintptr_t)tmp, n, NULL);
    free(tmp);
    return rc;
}

static int stage_out(ArgDesc *d, int dev)
{
    size_t n = array_nbytes(d);
    if (n == 0 || d->readonly)
        return 0;
    if (d->c_contig)
        return gj_memcpy(GJ_TARGET_NVPTX, dev, GJ_DTOH, d->data, d->staged, n, NULL);
    char *tmp = malloc(n);
    if (!tmp) {
        PyErr_NoMemory();
        return -1;
    }
    int rc = gj_memcpy(GJ_TARGET_NVPTX, dev, GJ_DTOH, (uint64_t)(uintptr_t)tmp, d->staged, n, NULL);
    if (rc == 0) {
        int64_t cs[GJ_MAXDIM];
        c_strides(d, cs);
        strided_copy((char *)(uintptr_t)d->data, d->strides, tmp, cs, d->shape, d->ndim,
                     gj_dtype_size(d->dtype));
    }
    free(tmp);
    return rc;
}

/* ---- LaunchConfig ---- */

typedef struct GjLaunchConfig {
    PyObject_HEAD
    GjDispatcher *disp;
    GjDim3 grid, block;
    CUstream stream;
    PyObject *stream_obj;  /* what was given, for .stream; NULL for the default */
    size_t dyn_smem;
} GjLaunchConfig;

static PyTypeObject GjLaunchConfig_Type;

static int parse_dim(PyObject *o, const char *what, GjDim3 *out)
{
    uint64_t v[3] = {1, 1, 1};
    if (PyTuple_Check(o)) {
        Py_ssize_t n = PyTuple_GET_SIZE(o);
        if (n < 1 || n > 3) {
            PyErr_Format(PyExc_ValueError, "%s must be an int or a tuple of 1 to 3 ints, not %R",
                         what, o);
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *x = PyTuple_GET_ITEM(o, i);
            long long y = PyLong_Check(x) ? PyLong_AsLongLong(x) : -1;
            if (!PyLong_Check(x) && !PyErr_Occurred()) {
                PyObject *ix = PyNumber_Index(x);
                if (!ix) {
                    PyErr_Format(PyExc_TypeError, "%s must contain ints, not %R", what, o);
                    return -1;
                }
                y = PyLong_AsLongLong(ix);
                Py_DECREF(ix);
            }
            if (y == -1 && PyErr_Occurred())
                return -1;
            if (y <= 0 || y > 0xffffffffLL) {
                PyErr_Format(PyExc_ValueError, "%s must be between 1 and 2**32 - 1 in each dimension, got %R",
                             what, o);
                return -1;
            }
            v[i] = (uint64_t)y;
        }
    } else {
        PyObject *ix = PyNumber_Index(o);
        if (!ix) {
            PyErr_Format(PyExc_TypeError, "%s must be an int or a tuple of 1 to 3 ints, not %.100s",
                         what, Py_TYPE(o)->tp_name);
            return -1;
        }
        long long y = PyLong_AsLongLong(ix);
        Py_DECREF(ix);
        if (y == -1 && PyErr_Occurred())
            return -1;
        if (y <= 0 || y > 0xffffffffLL) {
            PyErr_Format(PyExc_ValueError, "%s must be between 1 and 2**32 - 1, got %lld", what, y);
            return -1;
        }
        v[0] = (uint64_t)y;
    }
    *out = (GjDim3){(uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2]};
    return 0;
}

/* dispatcher[griddim, blockdim(, stream(, dynamic_shared_bytes))] */
static PyObject *disp_subscript(GjDispatcher *d, PyObject *key)
{
    Py_ssize_t n = PyTuple_Check(key) ? PyTuple_GET_SIZE(key) : 0;
    if (n < 2 || n > 4) {
        PyErr_SetString(PyExc_ValueError,
                        "launch configuration must be kernel[griddim, blockdim], "
                        "kernel[griddim, blockdim, stream] or "
                        "kernel[griddim, blockdim, stream, dynamic_shared_bytes]");
        return NULL;
    }
    GjLaunchConfig *c = PyObject_New(GjLaunchConfig, &GjLaunchConfig_Type);
    if (!c)
        return NULL;
    c->disp = (GjDispatcher *)Py_NewRef(d);
    c->stream = NULL;
    c->stream_obj = NULL;
    c->dyn_smem = 0;
    if (parse_dim(PyTuple_GET_ITEM(key, 0), "griddim", &c->grid) < 0 ||
        parse_dim(PyTuple_GET_ITEM(key, 1), "blockdim", &c->block) < 0)
        goto fail;
    if (n >= 3) {
        PyObject *s = PyTuple_GET_ITEM(key, 2);
        if (gj_stream_handle(s, &c->stream) < 0)
            goto fail;
        if (s != Py_None)
            c->stream_obj = Py_NewRef(s); /* keeps a Stream alive while the config lives */
    }
    if (n == 4) {
        Py_ssize_t sm = PyNumber_AsSsize_t(PyTuple_GET_ITEM(key, 3), PyExc_OverflowError);
        if (sm == -1 && PyErr_Occurred())
            goto fail;
        if (sm < 0) {
            PyErr_Format(PyExc_ValueError, "dynamic shared memory must be >= 0, got %zd", sm);
            goto fail;
        }
        c->dyn_smem = (size_t)sm;
    }
    return (PyObject *)c;
fail:
    Py_DECREF(c);
    return NULL;
}

static void config_dealloc(GjLaunchConfig *c)
{
    Py_XDECREF(c->disp);
    Py_XDECREF(c->stream_obj);
    PyObject_Free(c);
}

/* The CPU target mimics an H200's limits so that a launch valid on one target
 * is valid on the other. */
static const GjDeviceLimits host_limits = {
    .max_threads = 1024, .max_block = {1024, 1024, 64},
    .max_grid = {2147483647, 65535, 65535},
};

static int check_dims(const GjLaunchConfig *c, const GjDeviceLimits *l, const char *where)
{
    uint64_t threads = (uint64_t)c->block.x * c->block.y * c->block.z;
    const uint32_t b[3] = {c->block.x, c->block.y, c->block.z};
    const uint32_t g[3] = {c->grid.x, c->grid.y, c->grid.z};
    if (threads > (uint64_t)l->max_threads) {
        PyErr_Format(PyExc_ValueError,
                     "blockdim (%u, %u, %u) has %llu threads; the %s allows at most %d per block",
                     b[0], b[1], b[2], (unsigned long long)threads, where, l->max_threads);
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        if (b[i] > (uint32_t)l->max_block[i]) {
            PyErr_Format(PyExc_ValueError, "blockdim (%u, %u, %u): dimension %c exceeds the %s's "
                         "limit of %d", b[0], b[1], b[2], "xyz"[i], where, l->max_block[i]);
            return -1;
        }
        if (g[i] > (uint32_t)l->max_grid[i]) {
            PyErr_Format(PyExc_ValueError, "griddim (%u, %u, %u): dimension %c exceeds the %s's "
                         "limit of %d", g[0], g[1], g[2], "xyz"[i], where, l->max_grid[i]);
            return -1;
        }
    }
    return 0;
}

/* Finds the kernel for the arguments' key: a hit is pure C; a miss calls
 * _specialize, checks the result against the arguments and caches it. */
static CacheEntry *lookup(GjDispatcher *disp, PyObject *args, const ArgDesc *d, int nargs,
                          GjTargetKind target, int dev)
{
    uint8_t kbuf[KEY_HEADER + 4 * MAX_STACK_ARGS], *key = kbuf;
    size_t klen = KEY_HEADER + 4 * (size_t)nargs;
    if (nargs > MAX_STACK_ARGS && !(key = malloc(klen))) {
        PyErr_NoMemory();
        return NULL;
    }
    key[0] = (uint8_t)target;
    key[1] = (uint8_t)(target == GJ_TARGET_NVPTX ? dev : 0);
    key[2] = (uint8_t)(nargs & 0xff);
    key[3] = (uint8_t)(nargs >> 8);
    for (int i = 0; i < nargs; i++)
        key_arg(key + KEY_HEADER + 4 * i, &d[i]);
    uint64_t h = hash_key(key, klen);
    CacheEntry *e = cache_find(disp, key, klen, h);
    if (!e) {
        PyObject *k = PyObject_CallMethod((PyObject *)disp, "_specialize", "(O)", args);
        GjOutput *o = k ? gj_compiled_output(k) : NULL;
        if (k && !o)
            PyErr_Format(PyExc_TypeError, "_specialize must return a CompiledKernel, not %.100s",
                         Py_TYPE(k)->tp_name);
        else if (o && gj_output_target(o) != target)
            PyErr_Format(PyExc_TypeError,
                         "_specialize returned a kernel compiled for the %s target; this launch "
                         "is on %s", gj_output_target(o) == GJ_TARGET_NVPTX ? "cuda" : "cpu",
                         target == GJ_TARGET_NVPTX ? "cuda" : "cpu");
        else if (o && check_kernel((PyObject *)disp, o, d, nargs) == 0)
            e = cache_insert(disp, key, klen, h, k, o);
        Py_XDECREF(k);
    }
    if (key != kbuf)
        free(key);
    return e;
}

/* ---- debug=True kernels: the error buffer ---- */

/* A debug kernel's last parameter points at 8 int64 (gpujit.h): zero before
 * the launch; after it, [0] != 0 means some thread indexed out of bounds.
 * One buffer per device (launches hold the GIL), one per thread on the CPU. */
static CUdeviceptr debug_dev_buf[GJ_MAX_DEVICES];
static _Thread_local int64_t debug_host_buf[8];

static int debug_raise(GjLaunchConfig *c, GjOutput *o, const int64_t *rec)
{
    PyObject *name = kernel_name((PyObject *)c->disp, o);
    PyErr_Format(PyExc_IndexError,
                 "index %lld is out of bounds for axis %lld with size %lld (kernel '%U', %s:%lld)",
                 (long long)rec[3], (long long)rec[2], (long long)rec[4], name,
                 gj_output_file(o, (int)rec[5]), (long long)rec[1]);
    Py_XDECREF(name);
    return -1;
}

static int launch_cuda(GjLaunchConfig *c, CacheEntry *e, ArgDesc *d, int nargs, int dev,
                       const GjDeviceLimits *l, void **kp, uint64_t *slots)
{
    if (gj_cuda_enter(dev) < 0)
        return -1;
    unsigned gen = gj_cuda_generation(dev);
    if (!e->fn_valid || e->generation != gen) {
        if (gj_module_function(e->kernel, dev, &e->fn, &e->fn_max_threads) < 0)
            return -1;
        e->generation = gen;
        e->fn_dyn_smem = 0;
        e->fn_valid = 1;
    }
    uint64_t threads = (uint64_t)c->block.x * c->block.y * c->block.z;
    if (threads > (uint64_t)e->fn_max_threads) {
        PyObject *name = kernel_name((PyObject *)c->disp, e->out);
        PyErr_Format(PyExc_ValueError,
                     "blockdim has %llu threads; kernel '%U' can run at most %d per block (it "
                     "uses many registers)", (unsigned long long)threads, name, e->fn_max_threads);
        Py_XDECREF(name);
        return -1;
    }
    size_t stat = gj_output_shared_bytes(e->out);
    if (c->dyn_smem) {
        if (stat + c->dyn_smem > (size_t)l->max_shared_optin) {
            PyErr_Format(PyExc_ValueError,
                         "%zu bytes of dynamic + %zu of static shared memory exceed the device's "
                         "%d bytes per block", c->dyn_smem, stat, l->max_shared_optin);
            return -1;
        }
        /* Beyond the default 48 KB a kernel must opt in, once per function. */
        if (stat + c->dyn_smem > (size_t)l->max_shared && (int)c->dyn_smem > e->fn_dyn_smem) {
            if (gj_cuda_check(gj_cu.FuncSetAttribute(e->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                     (int)c->dyn_smem),
                              "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)") < 0)
                return -1;
            e->fn_dyn_smem = (int)c->dyn_smem;
        }
    }
    int staged = 0;
    const GjArgInfo *ai = gj_output_args(e->out);
    for (int i = 0; i < nargs; i++)
        if (d[i].kind == A_HOST) {
            /* the same host array passed twice shares one device copy, so
             * that what the kernel wrote through one comes back through both */
            int j = 0;
            while (j < i && !same_host_array(&d[j], &d[i]))
                j++;
            if (j < i) {
                d[i].staged = d[j].staged;
                d[i].alias = 1;
                d[j].written |= ai[i].written;
                continue;
            }
            if (stage_in(&d[i], dev) < 0)
                return -1;
            d[i].written = ai[i].written;
            staged = 1;
        }
    pack(gj_output_args(e->out), d, nargs, slots, kp);
    int debug = gj_output_debug(e->out);
    if (debug) {
        static const int64_t zero[8];
        if (!debug_dev_buf[dev] && gj_device_malloc(dev, sizeof zero, &debug_dev_buf[dev]) < 0)
            return -1;
        if (gj_cuda_check(gj_cu.MemcpyHtoD(debug_dev_buf[dev], zero, sizeof zero), "cuMemcpyHtoD") < 0)
            return -1;
        int np = gj_output_nparams(e->out);
        slots[np - 1] = (uint64_t)debug_dev_buf[dev];
        kp[np - 1] = &slots[np - 1];
    }
    CUresult r = gj_cu.LaunchKernel(e->fn, c->grid.x, c->grid.y, c->grid.z, c->block.x, c->block.y,
                                    c->block.z, (unsigned)c->dyn_smem, c->stream, kp, NULL);
    if (r != CUDA_SUCCESS) {
        char what[256];
        PyObject *name = kernel_name((PyObject *)c->disp, e->out);
        snprintf(what, sizeof what, "cuLaunchKernel(%s)", name ? PyUnicode_AsUTF8(name) : "?");
        Py_XDECREF(name);
        PyErr_Clear();
        return gj_cuda_check(r, what);
    }
    if (staged || debug) {
        if (gj_stream_sync(dev, c->stream) < 0)
            return -1;
        /* only what the kernel may have written comes back */
        for (int i = 0; i < nargs; i++)
            if (d[i].kind == A_HOST && !d[i].alias && d[i].written && stage_out(&d[i], dev) < 0)
                return -1;
    }
    if (debug) {
        int64_t rec[8];
        if (gj_cuda_check(gj_cu.MemcpyDtoH(rec, debug_dev_buf[dev], sizeof rec), "cuMemcpyDtoH") < 0)
            return -1;
        if (rec[0])
            return debug_raise(c, e->out, rec);
    }
    return 0;
}

static int launch_host(GjLaunchConfig *c, CacheEntry *e, ArgDesc *d, int nargs, void **kp,
                       uint64_t *slots)
{
    GjOutput *o = e->out;
    pack(gj_output_args(o), d, nargs, slots, kp);
    int debug = gj_output_debug(o);
    if (debug) {
        int np = gj_output_nparams(o);
        memset(debug_host_buf, 0, sizeof debug_host_buf);
        slots[np - 1] = (uint64_t)(uintptr_t)debug_host_buf;
        kp[np - 1] = &slots[np - 1];
    }
    const char *err = NULL;
    int rc;
    GjHostBlockFn bf = (GjHostBlockFn)gj_output_host_block_fn(o);
    GjHostThreadFn tf = (GjHostThreadFn)gj_output_host_thread_fn(o);
    size_t shared = gj_output_shared_bytes(o) + c->dyn_smem;
    int barrier = gj_output_uses_barrier(o);
    Py_BEGIN_ALLOW_THREADS
    rc = gj_cpu_launch(bf, tf, barrier, c->grid, c->block, shared, kp, &err);
    Py_END_ALLOW_THREADS
    /* an out-of-bounds index also ends the launch early (blk->trap) */
    if (debug && debug_host_buf[0])
        return debug_raise(c, o, debug_host_buf);
    if (rc < 0) {
        PyObject *name = kernel_name((PyObject *)c->disp, o);
        PyErr_Format(GjExc_LaunchError, "kernel '%U': %s", name, err ? err : "launch failed");
        Py_XDECREF(name);
        return -1;
    }
    return 0;
}

static PyObject *config_call(GjLaunchConfig *c, PyObject *args, PyObject *kw)
{
    if (kw && PyDict_GET_SIZE(kw)) {
        PyErr_SetString(PyExc_TypeError, "kernels take positional arguments only");
        return NULL;
    }
    int t = gj_target();
    if (t < 0)
        return NULL;
    GjTargetKind target = (GjTargetKind)t;
    int dev = gj_current_device();
    const GjDeviceLimits *l = &host_limits;
    if (target == GJ_TARGET_NVPTX && !(l = gj_cuda_limits(dev)))
        return NULL;
    if (check_dims(c, l, target == GJ_TARGET_NVPTX ? "device" : "cpu target") < 0)
        return NULL;

    int nargs = (int)PyTuple_GET_SIZE(args);
    ArgDesc dbuf[MAX_STACK_ARGS], *d = dbuf;
    if (nargs > MAX_STACK_ARGS && !(d = malloc(nargs * sizeof *d)))
        return PyErr_NoMemory();
    uint64_t sbuf[MAX_STACK_PARAMS], *slots = sbuf;
    void *kbuf[MAX_STACK_PARAMS], **kp = kbuf;
    PyObject *result = NULL;
    int nclassified = 0;
    CUstream cupy_stream = (CUstream)(intptr_t)-1;
    for (int i = 0; i < nargs; i++) {
        CUstream sync;
        d[i].has_view = 0;
        d[i].capsule = NULL;
        d[i].managed = NULL;
        d[i].staged = 0;
        d[i].alias = 0;
        d[i].written = 0;
        nclassified = i + 1;
        if (classify(&d[i], PyTuple_GET_ITEM(args, i), i + 1, target, dev, c->stream, &sync,
                     &cupy_stream) < 0)
            goto done;
        /* A producer's pending work on another stream must finish first. */
        if (sync && gj_stream_sync(dev, sync) < 0)
            goto done;
    }
    CacheEntry *e = lookup(c->disp, args, d, nargs, target, dev);
    if (!e)
        goto done;
    const GjArgInfo *ai = gj_output_args(e->out);
    for (int i = 0; i < nargs; i++)
        if (d[i].readonly && ai[i].kind == GJ_ARG_ARRAY && ai[i].written) {
            PyObject *name = kernel_name((PyObject *)c->disp, e->out);
            PyErr_Format(PyExc_ValueError, "kernel '%U' argument %d: a read-only array, but the kernel writes "
                         "to it", name, i + 1);
            Py_XDECREF(name);
            goto done;
        }
    int np = gj_output_nparams(e->out);
    if (np > MAX_STACK_PARAMS) {
        slots = malloc(np * sizeof *slots);
        kp = malloc(np * sizeof *kp);
        if (!slots || !kp) {
            PyErr_NoMemory();
            goto done;
        }
    }
    if ((target == GJ_TARGET_NVPTX ? launch_cuda(c, e, d, nargs, dev, l, kp, slots)
                                   : launch_host(c, e, d, nargs, kp, slots)) == 0)
        result = Py_NewRef(Py_None);
done:
    release_args(d, nclassified, dev);
    if (d != dbuf)
        free(d);
    if (slots != sbuf)
        free(slots);
    if (kp != kbuf)
        free(kp);
    return result;
}

static PyObject *dim_tuple(GjDim3 v)
{
    return Py_BuildValue("(III)", v.x, v.y, v.z);
}

static PyObject *config_griddim(GjLaunchConfig *c, void *x) { return dim_tuple(c->grid); }
static PyObject *config_blockdim(GjLaunchConfig *c, void *x) { return dim_tuple(c->block); }
static PyObject *config_sharedmem(GjLaunchConfig *c, void *x) { return PyLong_FromSize_t(c->dyn_smem); }
static PyObject *config_stream(GjLaunchConfig *c, void *x)
{
    return c->stream_obj ? Py_NewRef(c->stream_obj) : PyLong_FromLong(0);
}
static PyObject *config_dispatcher(GjLaunchConfig *c, void *x) { return Py_NewRef(c->disp); }

static PyGetSetDef config_getset[] = {
    {"griddim", (getter)config_griddim, NULL, NULL, NULL},
    {"blockdim", (getter)config_blockdim, NULL, NULL, NULL},
    {"sharedmem", (getter)config_sharedmem, NULL, "dynamic shared memory bytes", NULL},
    {"stream", (getter)config_stream, NULL, NULL, NULL},
    {"dispatcher", (getter)config_dispatcher, NULL, NULL, NULL},
    {NULL},
};

static PyTypeObject GjLaunchConfig_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpujit._core.LaunchConfig",
    .tp_basicsize = sizeof(GjLaunchConfig),
    .tp_dealloc = (destructor)config_dealloc,
    .tp_call = (ternaryfunc)config_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "kernel[griddim, blockdim, stream, dynamic_shared_bytes]: call it with the arguments.",
    .tp_getset = config_getset,
};

/* ---- DispatcherBase ---- */

static int disp_traverse(GjDispatcher *d, visitproc visit, void *arg)
{
    Py_VISIT(d->dict);
    for (size_t i = 0; i < d->capacity; i++)
        if (d->table[i].key)
            Py_VISIT(d->table[i].kernel);
    return 0;
}

static int disp_clear(GjDispatcher *d)
{
    Py_CLEAR(d->dict);
    cache_clear(d);
    return 0;
}

static void disp_dealloc(GjDispatcher *d)
{
    PyTypeObject *tp = Py_TYPE(d);
    PyObject_GC_UnTrack(d);
    if (d->weaklist)
        PyObject_ClearWeakRefs((PyObject *)d);
    disp_clear(d);
    /* A static base type: a heap subclass's subtype_dealloc drops the type's reference. */
    tp->tp_free((PyObject *)d);
}

static PyObject *disp_call(PyObject *self, PyObject *args, PyObject *kw)
{
    PyErr_SetString(PyExc_TypeError, "launch configuration missing: kernel[griddim, blockdim](args)");
    return NULL;
}

static PyObject *disp_cache_clear(GjDispatcher *d, PyObject *unused)
{
    cache_clear(d);
    Py_RETURN_NONE;
}

static PyObject *disp_cached_kernels(GjDispatcher *d, PyObject *unused)
{
    PyObject *l = PyList_New(0);
    for (size_t i = 0; l && i < d->capacity; i++)
        if (d->table[i].key && PyList_Append(l, d->table[i].kernel) < 0)
            Py_CLEAR(l);
    return l;
}

/* for tests: the CuPy array type the launcher reads directly, once it has seen one */
static PyObject *disp_cupy_type(GjDispatcher *d, PyObject *unused)
{
    PyObject *t = cupy_type ? (PyObject *)cupy_type : Py_None;
    Py_INCREF(t);
    return t;
}

static PyMethodDef disp_methods[] = {
    {"_cupy_fast_path_type", (PyCFunction)disp_cupy_type, METH_NOARGS,
     "the CuPy ndarray type read without __cuda_array_interface__, or None"},
    {"_cache_clear", (PyCFunction)disp_cache_clear, METH_NOARGS,
     "drop every cached specialisation"},
    {"_cached_kernels", (PyCFunction)disp_cached_kernels, METH_NOARGS,
     "the CompiledKernels in the launch cache"},
    {NULL},
};

static PyMappingMethods disp_as_mapping = {
    .mp_subscript = (binaryfunc)disp_subscript,
};

static PyTypeObject GjDispatcher_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpujit._core.DispatcherBase",
    .tp_basicsize = sizeof(GjDispatcher),
    .tp_dealloc = (destructor)disp_dealloc,
    .tp_as_mapping = &disp_as_mapping,
    .tp_call = disp_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "C base of the kernel dispatcher: kernel[griddim, blockdim](args). Subclasses "
              "define _specialize(args) -> CompiledKernel.",
    .tp_traverse = (traverseproc)disp_traverse,
    .tp_clear = (inquiry)disp_clear,
    .tp_weaklistoffset = offsetof(GjDispatcher, weaklist),
    .tp_methods = disp_methods,
    .tp_dictoffset = offsetof(GjDispatcher, dict),
    .tp_new = PyType_GenericNew,
};

int gj_launch_add(PyObject *m)
{
    if (PyType_Ready(&GjDispatcher_Type) < 0 || PyType_Ready(&GjLaunchConfig_Type) < 0 ||
        PyModule_AddObjectRef(m, "DispatcherBase", (PyObject *)&GjDispatcher_Type) < 0 ||
        PyModule_AddObjectRef(m, "LaunchConfig", (PyObject *)&GjLaunchConfig_Type) < 0)
        return -1;
    return 0;
}
