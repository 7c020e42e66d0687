/* Memory: the _core.Allocation type, which owns one block of device memory
 * (cuMemAlloc), pinned host memory (cuMemHostAlloc) or, on the cpu target,
 * plain aligned host memory, and frees it when the last reference goes; and
 * the copies between host and device that the arrays and the launcher use.
 *
 * Device memory belongs to a device's primary context, which the driver file
 * retains for the life of the process, so an Allocation only records its
 * device and the context generation (see reset() in driver.c). */
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "cuda.h"

/* cuMemAlloc aligns to at least 256 bytes; the cpu target does the same so
 * that kernels see the same alignment on both. */
#define HOST_ALIGN 256
/* Host copies this large release the GIL. */
#define BIG_COPY (1u << 20)

static const char *kind_name(GjMemKind k) {
    return k == GJ_MEM_DEVICE ? "device" : k == GJ_MEM_PINNED ? "pinned" : "host";
}

int gj_device_malloc(int device, size_t n, CUdeviceptr *out) {
    *out = 0;
    if (n == 0) /* cuMemAlloc rejects 0 bytes; an empty array needs no memory */
        return 0;
    if (gj_cuda_enter(device) < 0) return -1;
    CUresult r = gj_cu.MemAlloc(out, n);
    if (r != CUDA_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "cuMemAlloc(%zu bytes)", n);
        return gj_cuda_check(r, what);
    }
    return 0;
}

/* Frees quietly: called from deallocators, where nothing can be raised, and
 * possibly after the context died (a sticky error or reset). */
void gj_device_free(int device, CUdeviceptr p) {
    if (!p) return;
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    if (gj_cuda_enter(device) == 0) gj_cu.MemFree(p);
    PyErr_Clear();
    PyErr_Restore(et, ev, tb);
}

PyObject *gj_alloc(GjTargetKind target, int device, size_t size, int pinned) {
    GjAllocation *a = PyObject_New(GjAllocation, &GjAllocation_Type);
    if (!a) return NULL;
    a->ptr = 0;
    a->size = size;
    a->device = device;
    a->exports = 0;
    a->generation = 0;
    if (target == GJ_TARGET_HOST) {
        a->kind = GJ_MEM_HOST;
        void *p = NULL;
        size_t n = (size + HOST_ALIGN - 1) / HOST_ALIGN * HOST_ALIGN;
        if (posix_memalign(&p, HOST_ALIGN, n ? n : HOST_ALIGN) != 0) {
            a->kind = GJ_MEM_HOST; /* ptr 0: dealloc frees nothing */
            Py_DECREF(a);
            return PyErr_NoMemory();
        }
        a->ptr = (uint64_t)(uintptr_t)p;
        return (PyObject *)a;
    }
    a->kind = pinned ? GJ_MEM_PINNED : GJ_MEM_DEVICE;
    a->generation = gj_cuda_generation(device);
    if (pinned) {
        void *p = NULL;
        if (gj_cuda_enter(device) < 0 ||
            gj_cuda_check(gj_cu.MemHostAlloc(&p, size ? size : 1, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc") < 0) {
            Py_DECREF(a);
            return NULL;
        }
        a->ptr = (uint64_t)(uintptr_t)p;
    } else {
        CUdeviceptr p;
        if (gj_device_malloc(device, size, &p) < 0) {
            Py_DECREF(a);
            return NULL;
        }
        a->ptr = p;
    }
    return (PyObject *)a;
}

/* Allocations freed so far (any kind): numba's deallocation queue is counted from it
 * (python/gpujit/cudadrv: current_context().memory_manager.deallocations). */
static unsigned long long nfreed; /* atomic */

static void alloc_dealloc(GjAllocation *a) {
    if (a->ptr) {
        __atomic_add_fetch(&nfreed, 1, __ATOMIC_RELAXED);
        switch (a->kind) {
        case GJ_MEM_HOST: free((void *)(uintptr_t)a->ptr); break;
        case GJ_MEM_DEVICE:
            /* A reset destroyed it already; freeing again could free another's block. */
            if (a->generation == gj_cuda_generation(a->device)) gj_device_free(a->device, a->ptr);
            break;
        case GJ_MEM_PINNED:
            if (a->generation == gj_cuda_generation(a->device)) {
                PyObject *et, *ev, *tb;
                PyErr_Fetch(&et, &ev, &tb);
                if (gj_cuda_enter(a->device) == 0) gj_cu.MemFreeHost((void *)(uintptr_t)a->ptr);
                PyErr_Clear();
                PyErr_Restore(et, ev, tb);
            }
            break;
        }
    }
    PyObject_Free(a);
}

/* Host kinds export their bytes, so numpy.frombuffer can view pinned memory. */
static int alloc_getbuffer(GjAllocation *a, Py_buffer *view, int flags) {
    if (a->kind == GJ_MEM_DEVICE) {
        PyErr_SetString(PyExc_BufferError, "device memory has no host buffer");
        view->obj = NULL;
        return -1;
    }
    if (PyBuffer_FillInfo(view, (PyObject *)a, (void *)(uintptr_t)a->ptr, (Py_ssize_t)a->size, 0, flags) < 0) return -1;
    a->exports++;
    return 0;
}

static void alloc_releasebuffer(GjAllocation *a, Py_buffer *view) { a->exports--; }

/* clang-format off */
static PyBufferProcs alloc_as_buffer = {
    .bf_getbuffer = (getbufferproc)alloc_getbuffer,
    .bf_releasebuffer = (releasebufferproc)alloc_releasebuffer,
};
/* clang-format on */

static PyObject *alloc_repr(GjAllocation *a) {
    char buf[160]; /* PyUnicode_FromFormat has no %llx */
    snprintf(buf, sizeof buf, "<gpujit Allocation %s %zu bytes at 0x%llx on device %d>", kind_name(a->kind), a->size,
             (unsigned long long)a->ptr, a->device);
    return PyUnicode_FromString(buf);
}

static PyObject *alloc_get_ptr(GjAllocation *a, void *c) { return PyLong_FromUnsignedLongLong(a->ptr); }

static PyObject *alloc_get_size(GjAllocation *a, void *c) { return PyLong_FromSize_t(a->size); }

static PyObject *alloc_get_kind(GjAllocation *a, void *c) { return PyUnicode_FromString(kind_name(a->kind)); }

static PyObject *alloc_get_device(GjAllocation *a, void *c) { return PyLong_FromLong(a->device); }

static PyObject *alloc_get_alive(GjAllocation *a, void *c) {
    return PyBool_FromLong(a->kind == GJ_MEM_HOST || a->generation == gj_cuda_generation(a->device));
}

/* clang-format off */
static PyGetSetDef alloc_getset[] = {
    {"ptr", (getter)alloc_get_ptr, NULL, "address (device or host)", NULL},
    {"size", (getter)alloc_get_size, NULL, "bytes", NULL},
    {"kind", (getter)alloc_get_kind, NULL, "'device', 'pinned' or 'host'", NULL},
    {"device", (getter)alloc_get_device, NULL, "device ordinal", NULL},
    {"alive", (getter)alloc_get_alive, NULL, "False once reset() destroyed the memory", NULL},
    {NULL},
};
/* clang-format on */

/* clang-format off */
PyTypeObject GjAllocation_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpujit._core.Allocation",
    .tp_basicsize = sizeof(GjAllocation),
    .tp_dealloc = (destructor)alloc_dealloc,
    .tp_repr = (reprfunc)alloc_repr,
    .tp_as_buffer = &alloc_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Owns one block of device, pinned or host memory; freed with the object.",
    .tp_getset = alloc_getset,
};
/* clang-format on */

/* ---- copies ---- */

int gj_memcpy(GjTargetKind target, int device, int dir, uint64_t dst, uint64_t src, size_t n, CUstream stream) {
    if (n == 0) return 0;
    if (target == GJ_TARGET_HOST) {
        if (n >= BIG_COPY) {
            Py_BEGIN_ALLOW_THREADS memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
            Py_END_ALLOW_THREADS
        } else {
            memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
        }
        return 0;
    }
    if (gj_cuda_enter(device) < 0) return -1;
    CUresult r;
    const char *what;
    if (stream) { /* asynchronous: the caller keeps the host memory alive */
        switch (dir) {
        case GJ_HTOD:
            what = "cuMemcpyHtoDAsync";
            r = gj_cu.MemcpyHtoDAsync(dst, (const void *)(uintptr_t)src, n, stream);
            break;
        case GJ_DTOH:
            what = "cuMemcpyDtoHAsync";
            r = gj_cu.MemcpyDtoHAsync((void *)(uintptr_t)dst, src, n, stream);
            break;
        default:
            what = "cuMemcpyDtoDAsync";
            r = gj_cu.MemcpyDtoDAsync(dst, src, n, stream);
            break;
        }
        return gj_cuda_check(r, what);
    }
    /* Synchronous copies wait for earlier work on the legacy stream: let other
     * Python threads run meanwhile, and Ctrl-C end the wait. The context is
     * per-thread state and stays. */
    if (gj_cuda_wait(NULL, 0) < 0) return -1;
    Py_BEGIN_ALLOW_THREADS switch (dir) {
    case GJ_HTOD:
        what = "cuMemcpyHtoD";
        r = gj_cu.MemcpyHtoD(dst, (const void *)(uintptr_t)src, n);
        break;
    case GJ_DTOH:
        what = "cuMemcpyDtoH";
        r = gj_cu.MemcpyDtoH((void *)(uintptr_t)dst, src, n);
        break;
    default:
        what = "cuMemcpyDtoD";
        r = gj_cu.MemcpyDtoD(dst, src, n);
        break;
    }
    Py_END_ALLOW_THREADS return gj_cuda_check(r, what);
}

/* A copy between two CUDA devices' memory: ordered on `stream` (0: synchronous, waiting
 * for earlier work on both devices' legacy streams). */
int gj_memcpy_peer(int dst_device, uint64_t dst, int src_device, uint64_t src, size_t n, CUstream stream) {
    CUcontext dctx, sctx;
    if (n == 0) return 0;
    if (gj_cuda_context(dst_device, &dctx) < 0 || gj_cuda_context(src_device, &sctx) < 0) return -1;
    if (stream) return gj_cuda_check(gj_cu.MemcpyPeerAsync(dst, dctx, src, sctx, n, stream), "cuMemcpyPeerAsync");
    CUresult r;
    Py_BEGIN_ALLOW_THREADS r = gj_cu.MemcpyPeer(dst, dctx, src, sctx, n);
    Py_END_ALLOW_THREADS return gj_cuda_check(r, "cuMemcpyPeer");
}

/* ---- Python functions ---- */

static PyObject *py_alloc(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"nbytes", "pinned", NULL};
    Py_ssize_t n;
    int pinned = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "n|p:alloc", kwlist, &n, &pinned)) return NULL;
    if (n < 0) return PyErr_Format(PyExc_ValueError, "negative allocation size %zd", n);
    int t = gj_target();
    if (t < 0 || gj_graph_check_alloc() < 0) return NULL;
    return gj_alloc((GjTargetKind)t, gj_current_device(), (size_t)n, pinned);
}

static PyObject *py_frees(PyObject *self, PyObject *unused) {
    return PyLong_FromUnsignedLongLong(__atomic_load_n(&nfreed, __ATOMIC_RELAXED));
}

/* Page-locks host memory someone else owns (numba's mempin and mapped());
 * returns the address a kernel reaches it at. The cpu target has nothing to
 * lock: its kernels read host memory. */
static PyObject *py_host_register(PyObject *self, PyObject *args) {
    unsigned long long ptr;
    Py_ssize_t n;
    int mapped;
    if (!PyArg_ParseTuple(args, "Knp:host_register", &ptr, &n, &mapped)) return NULL;
    if (n < 0) return PyErr_Format(PyExc_ValueError, "negative size %zd", n);
    int t = gj_target();
    if (t < 0) return NULL;
    if (t == GJ_TARGET_HOST || n == 0) return PyLong_FromUnsignedLongLong(ptr);
    int dev = gj_current_device();
    unsigned flags = CU_MEMHOSTREGISTER_PORTABLE | (mapped ? CU_MEMHOSTREGISTER_DEVICEMAP : 0);
    if (gj_cuda_enter(dev) < 0 ||
        gj_cuda_check(gj_cu.MemHostRegister((void *)(uintptr_t)ptr, (size_t)n, flags), "cuMemHostRegister") < 0)
        return NULL;
    CUdeviceptr d = (CUdeviceptr)ptr;
    if (mapped && gj_cuda_check(gj_cu.MemHostGetDevicePointer(&d, (void *)(uintptr_t)ptr, 0),
                                "cuMemHostGetDevicePointer") < 0) {
        gj_cu.MemHostUnregister((void *)(uintptr_t)ptr);
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(d);
}

static PyObject *py_host_unregister(PyObject *self, PyObject *args) {
    unsigned long long ptr;
    if (!PyArg_ParseTuple(args, "K:host_unregister", &ptr)) return NULL;
    int t = gj_target();
    if (t < 0) return NULL;
    if (t != GJ_TARGET_HOST && ptr &&
        (gj_cuda_enter(gj_current_device()) < 0 ||
         gj_cuda_check(gj_cu.MemHostUnregister((void *)(uintptr_t)ptr), "cuMemHostUnregister") < 0))
        return NULL;
    Py_RETURN_NONE;
}

/* numba's profile_start/profile_stop: bracket what a profiler records. Nothing
 * to record on the cpu target. */
static PyObject *py_profiler(PyObject *self, PyObject *on) {
    int start = PyObject_IsTrue(on);
    if (start < 0) return NULL;
    int t = gj_target();
    if (t < 0) return NULL;
    if (t == GJ_TARGET_HOST) Py_RETURN_NONE;
    if (gj_cuda_enter(gj_current_device()) < 0 ||
        gj_cuda_check(start ? gj_cu.ProfilerStart() : gj_cu.ProfilerStop(),
                      start ? "cuProfilerStart" : "cuProfilerStop") < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* clang-format off */
static PyMethodDef memory_methods[] = {
    {"host_register", py_host_register, METH_VARARGS,
     "host_register(ptr, nbytes, mapped) -> the device address of page-locked host memory"},
    {"host_unregister", py_host_unregister, METH_VARARGS, "host_unregister(ptr): undoes host_register"},
    {"profiler", py_profiler, METH_O, "profiler(on): cuProfilerStart / cuProfilerStop"},
    {"alloc", (PyCFunction)(void (*)(void))py_alloc, METH_VARARGS | METH_KEYWORDS,
     "alloc(nbytes, pinned=False) -> Allocation on the current target and device"},
    {"frees", py_frees, METH_NOARGS, "frees() -> how many allocations have been freed in this process"},
    {NULL, NULL, 0, NULL},
};
/* clang-format on */

int gj_memory_add(PyObject *m) {
    if (PyType_Ready(&GjAllocation_Type) < 0 ||
        PyModule_AddObjectRef(m, "Allocation", (PyObject *)&GjAllocation_Type) < 0 ||
        PyModule_AddFunctions(m, memory_methods) < 0)
        return -1;
    return 0;
}
