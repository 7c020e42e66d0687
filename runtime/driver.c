/* The CUDA driver: loads libcuda.so.1 on first use (never at import), resolves
 * the versioned entry points, owns the per-device primary contexts and limits,
 * turns CUresults into gpujit.CudaError, and holds the process-wide target
 * choice ('cuda' or 'cpu') that the launcher reads on every launch.
 *
 * Process-wide state lives behind `lock`; the fast paths (driver loaded,
 * context retained, target resolved) read it with atomic loads and take no
 * lock. No Python API is called while `lock` is held. */
#include <dlfcn.h>
#include <stddef.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "runtime.h"
#include "cuda.h"

GjCuda gj_cu;
PyObject *GjExc_CudaError;
PyObject *GjExc_GraphCaptureError;
static PyObject *GjExc_CudaDriverError;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

enum { LOAD_NOT_TRIED = 0, LOAD_OK = 1, LOAD_FAILED = 2 };
static int load_state;           /* atomic */
static char load_msg[512];       /* why loading failed; fixed once LOAD_FAILED */
static int load_code = -1;       /* the CUresult of a failed cuInit, or -1 */
static void *libcuda;
static int device_count;

static CUcontext contexts[GJ_MAX_DEVICES]; /* atomic: retained primary contexts */
static unsigned generations[GJ_MAX_DEVICES];
static GjDeviceLimits limits[GJ_MAX_DEVICES];
static int limits_valid[GJ_MAX_DEVICES];   /* atomic */

static int target = -1;          /* atomic: GjTargetKind, or -1 while unresolved */
/* atomic: this process was forked from one that had initialised the driver. CUDA does
 * not survive a fork (the child's calls fail or hang), so each use raises instead. */
static int forked;
/* The calling thread's device, as a CUDA context is current per thread: a thread that
 * never selected one uses device 0, so threads driving different GPUs do not race. */
static _Thread_local int current_device;

/* ---- errors ---- */

/* The stream-capture codes (900 to 908) raise GraphCaptureError, a CudaError. */
static int is_capture_code(int code) { return code >= 900 && code <= 908; }

static void raise_cuda(int code, const char *name, const char *msg) {
    PyObject *cls = is_capture_code(code) && GjExc_GraphCaptureError ? GjExc_GraphCaptureError : GjExc_CudaError;
    PyObject *exc = PyObject_CallFunction(cls, "s", msg);
    if (!exc) return;
    PyObject *c = code >= 0 ? PyLong_FromLong(code) : Py_NewRef(Py_None);
    PyObject *n = name ? PyUnicode_FromString(name) : Py_NewRef(Py_None);
    if (c && n) {
        PyObject_SetAttrString(exc, "code", c);
        PyObject_SetAttrString(exc, "name", n);
    }
    Py_XDECREF(c);
    Py_XDECREF(n);
    if (!PyErr_Occurred()) PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
}

void gj_cuda_error(const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    raise_cuda(-1, NULL, buf);
}

/* Errors after which the context is unusable: every later call returns them. */
static int is_sticky(CUresult r) { return r == 700 || (r >= 714 && r <= 719) || r == 702; }

/* What a stream-capture error means for a gpujit user, and what to do instead. */
static const char *capture_advice(CUresult r) {
    switch (r) {
    case 900:
        return ". The operation cannot be part of a graph capture: a synchronize, a synchronous copy, an "
               "allocation, or a copy with pageable host memory (use pinned_array); do it before or after "
               "the capture";
    case 901: return ". An earlier operation broke this capture; the graph is discarded";
    case 902: return ". Two independent captures were merged";
    case 903: return ". The capture was not begun on this stream";
    case 904:
        return ". Work forked to another stream during the capture was not joined back: record an Event on "
               "that stream and make the capturing stream wait for it";
    case 905: return ". A dependency would cross the capture's boundary (an event recorded outside it)";
    case 906:
        return ". Work on the legacy default stream would wait for the capturing stream: queue it on the "
               "captured stream";
    case 907: return ". The event was last recorded inside a capture: query or wait for it after the capture ends";
    case 908: return ". The capture must end on the thread that began it";
    default: return "";
    }
}

/* Polls: yielding for the first 2 ms (a short wait ends with little delay), then
 * every 100 us. */
int gj_cuda_wait(void *h, int event) {
    CUresult (*query)(void *) = event ? (CUresult(*)(void *))gj_cu.EventQuery : (CUresult(*)(void *))gj_cu.StreamQuery;
    if (!query || query(h) != CUDA_ERROR_NOT_READY) return 0;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int64_t checked = 0;
    PyThreadState *ts = PyEval_SaveThread();
    while (query(h) == CUDA_ERROR_NOT_READY) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t us = (int64_t)(now.tv_sec - t0.tv_sec) * 1000000 + (now.tv_nsec - t0.tv_nsec) / 1000;
        if (us < 2000) {
            sched_yield();
        } else {
            struct timespec d = {0, 100000};
            nanosleep(&d, NULL);
        }
        if (us - checked >= GJ_WAIT_SIGNALS_MS * 1000) {
            checked = us;
            PyEval_RestoreThread(ts);
            if (PyErr_CheckSignals() < 0) return -1;
            ts = PyEval_SaveThread();
        }
    }
    PyEval_RestoreThread(ts);
    return 0;
}

int gj_cuda_check(CUresult r, const char *what) {
    if (r == CUDA_SUCCESS) return 0;
    const char *name = NULL, *text = NULL;
    if (gj_cu.GetErrorName) gj_cu.GetErrorName(r, &name);
    if (gj_cu.GetErrorString) gj_cu.GetErrorString(r, &text);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s: %s (%d): %s%s%s", what, name ? name : "CUDA_ERROR_UNKNOWN", (int)r,
             text ? text : "unknown error",
             is_sticky(r) ? ". The CUDA context is now unusable: restart the process "
                            "(gpujit.reset() tries to recover it; see docs/runtime.md)"
                          : "",
             capture_advice(r));
    raise_cuda(r, name, buf);
    return -1;
}

/* ---- loading ---- */

/* Resolves `names` in order (the newest versioned name first). */
static void *sym(const char *const *names) {
    for (; *names; names++) {
        void *p = dlsym(libcuda, *names);
        if (p) return p;
    }
    return NULL;
}

#define RESOLVE(field, ...) \
    do { \
        static const char *const names_[] = {__VA_ARGS__, NULL}; \
        *(void **)&gj_cu.field = sym(names_); \
        if (!gj_cu.field) { \
            snprintf(load_msg, sizeof load_msg, "the CUDA driver lacks %s (driver too old?)", names_[0]); \
            return -1; \
        } \
    } while (0)

/* An entry point some drivers lack: left NULL, its users check. */
#define RESOLVE_OPTIONAL(field, ...) \
    do { \
        static const char *const names_[] = {__VA_ARGS__, NULL}; \
        *(void **)&gj_cu.field = sym(names_); \
    } while (0)

/* A driver whose library stops exporting a versioned name still hands its
 * entry point out by the CUDA version its signature is from (cuGetProcAddress):
 * 12.3's, whose signatures the graph fields above have. */
static void *by_version(const char *name) {
    static CUresult (*gpa)(const char *, void **, int, uint64_t, int *);
    if (!gpa) *(void **)&gpa = dlsym(libcuda, "cuGetProcAddress_v2");
    void *fn = NULL;
    int status = 0;
    if (!gpa || gpa(name, &fn, 12030, 0 /* CU_GET_PROC_ADDRESS_DEFAULT */, &status) != CUDA_SUCCESS) return NULL;
    return fn;
}

static void resolve_by_version(void) {
    /* clang-format off */
    static const struct { size_t offset; const char *name; } graph_fns[] = {
        {offsetof(GjCuda, StreamBeginCapture), "cuStreamBeginCapture"},
        {offsetof(GjCuda, StreamEndCapture), "cuStreamEndCapture"},
        {offsetof(GjCuda, StreamIsCapturing), "cuStreamIsCapturing"},
        {offsetof(GjCuda, ThreadExchangeStreamCaptureMode), "cuThreadExchangeStreamCaptureMode"},
        {offsetof(GjCuda, GraphInstantiate), "cuGraphInstantiateWithFlags"},
        {offsetof(GjCuda, GraphLaunch), "cuGraphLaunch"},
        {offsetof(GjCuda, GraphUpload), "cuGraphUpload"},
        {offsetof(GjCuda, GraphGetNodes), "cuGraphGetNodes"},
        {offsetof(GjCuda, GraphExecKernelNodeSetParams), "cuGraphExecKernelNodeSetParams"},
        {offsetof(GjCuda, GraphExecDestroy), "cuGraphExecDestroy"},
        {offsetof(GjCuda, GraphDestroy), "cuGraphDestroy"},
    };
    /* clang-format on */
    for (size_t i = 0; i < sizeof graph_fns / sizeof graph_fns[0]; i++) {
        void **slot = (void **)((char *)&gj_cu + graph_fns[i].offset);
        if (!*slot) *slot = by_version(graph_fns[i].name);
    }
    if (!gj_cu.StreamGetCaptureInfo3 && !gj_cu.StreamGetCaptureInfo2)
        *(void **)&gj_cu.StreamGetCaptureInfo3 = by_version("cuStreamGetCaptureInfo");
}

static int resolve_all(void) {
    RESOLVE(Init, "cuInit");
    RESOLVE(DriverGetVersion, "cuDriverGetVersion");
    RESOLVE(DeviceGetCount, "cuDeviceGetCount");
    RESOLVE(DeviceGet, "cuDeviceGet");
    RESOLVE(DeviceGetName, "cuDeviceGetName");
    RESOLVE(DeviceGetAttribute, "cuDeviceGetAttribute");
    RESOLVE(DeviceTotalMem, "cuDeviceTotalMem_v2");
    RESOLVE(GetErrorName, "cuGetErrorName");
    RESOLVE(GetErrorString, "cuGetErrorString");
    RESOLVE(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    RESOLVE(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease");
    RESOLVE(DevicePrimaryCtxReset, "cuDevicePrimaryCtxReset_v2", "cuDevicePrimaryCtxReset");
    RESOLVE(CtxSetCurrent, "cuCtxSetCurrent");
    RESOLVE(CtxGetCurrent, "cuCtxGetCurrent");
    RESOLVE(CtxSynchronize, "cuCtxSynchronize");
    RESOLVE(MemGetInfo, "cuMemGetInfo_v2");
    RESOLVE(MemAlloc, "cuMemAlloc_v2");
    RESOLVE(MemFree, "cuMemFree_v2");
    RESOLVE(MemHostAlloc, "cuMemHostAlloc");
    RESOLVE(MemFreeHost, "cuMemFreeHost");
    RESOLVE(MemHostRegister, "cuMemHostRegister_v2", "cuMemHostRegister");
    RESOLVE(MemHostUnregister, "cuMemHostUnregister");
    RESOLVE(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", "cuMemHostGetDevicePointer");
    RESOLVE(ProfilerStart, "cuProfilerStart");
    RESOLVE(ProfilerStop, "cuProfilerStop");
    RESOLVE(MemcpyHtoD, "cuMemcpyHtoD_v2");
    RESOLVE(MemcpyDtoH, "cuMemcpyDtoH_v2");
    RESOLVE(MemcpyDtoD, "cuMemcpyDtoD_v2");
    RESOLVE(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    RESOLVE(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    RESOLVE(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
    RESOLVE(MemcpyPeer, "cuMemcpyPeer");
    RESOLVE(MemcpyPeerAsync, "cuMemcpyPeerAsync");
    RESOLVE(PointerGetAttribute, "cuPointerGetAttribute");
    RESOLVE(ModuleLoadDataEx, "cuModuleLoadDataEx");
    RESOLVE(ModuleUnload, "cuModuleUnload");
    RESOLVE(ModuleGetFunction, "cuModuleGetFunction");
    RESOLVE(FuncGetAttribute, "cuFuncGetAttribute");
    RESOLVE(FuncSetAttribute, "cuFuncSetAttribute");
    RESOLVE(OccupancyMaxPotentialBlockSize, "cuOccupancyMaxPotentialBlockSize");
    RESOLVE(LaunchKernel, "cuLaunchKernel");
    RESOLVE(LaunchCooperativeKernel, "cuLaunchCooperativeKernel");
    RESOLVE(OccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    RESOLVE(FuncGetModule, "cuFuncGetModule");
    RESOLVE(ModuleGetGlobal, "cuModuleGetGlobal_v2");
    RESOLVE(MemsetD32Async, "cuMemsetD32Async");
    RESOLVE(StreamCreate, "cuStreamCreate");
    RESOLVE(StreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy");
    RESOLVE(StreamSynchronize, "cuStreamSynchronize");
    RESOLVE(StreamQuery, "cuStreamQuery");
    RESOLVE(StreamWaitEvent, "cuStreamWaitEvent");
    RESOLVE(EventCreate, "cuEventCreate");
    RESOLVE(EventRecord, "cuEventRecord");
    RESOLVE(EventSynchronize, "cuEventSynchronize");
    RESOLVE(EventQuery, "cuEventQuery");
    /* CUDA 12.8 added _v2 (same signature); older drivers only have the plain name. */
    RESOLVE(EventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
    RESOLVE(EventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
    RESOLVE_OPTIONAL(LinkCreate, "cuLinkCreate_v2", "cuLinkCreate");
    RESOLVE_OPTIONAL(LinkAddData, "cuLinkAddData_v2", "cuLinkAddData");
    RESOLVE_OPTIONAL(LinkComplete, "cuLinkComplete");
    RESOLVE_OPTIONAL(LinkDestroy, "cuLinkDestroy");
    RESOLVE_OPTIONAL(IpcGetMemHandle, "cuIpcGetMemHandle");
    RESOLVE_OPTIONAL(IpcOpenMemHandle, "cuIpcOpenMemHandle_v2", "cuIpcOpenMemHandle");
    RESOLVE_OPTIONAL(IpcCloseMemHandle, "cuIpcCloseMemHandle");
    RESOLVE_OPTIONAL(MemGetAddressRange, "cuMemGetAddressRange_v2");
    /* CUDA graphs: the mode-taking BeginCapture is _v2 (the unversioned name takes none) */
    RESOLVE_OPTIONAL(StreamBeginCapture, "cuStreamBeginCapture_v2");
    RESOLVE_OPTIONAL(StreamEndCapture, "cuStreamEndCapture");
    RESOLVE_OPTIONAL(StreamIsCapturing, "cuStreamIsCapturing");
    RESOLVE_OPTIONAL(StreamGetCaptureInfo3, "cuStreamGetCaptureInfo_v3");
    RESOLVE_OPTIONAL(StreamGetCaptureInfo2, "cuStreamGetCaptureInfo_v2");
    RESOLVE_OPTIONAL(ThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode");
    RESOLVE_OPTIONAL(GraphInstantiate, "cuGraphInstantiateWithFlags");
    RESOLVE_OPTIONAL(GraphLaunch, "cuGraphLaunch");
    RESOLVE_OPTIONAL(GraphUpload, "cuGraphUpload");
    RESOLVE_OPTIONAL(GraphGetNodes, "cuGraphGetNodes");
    RESOLVE_OPTIONAL(GraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams_v2",
                     "cuGraphExecKernelNodeSetParams");
    RESOLVE_OPTIONAL(GraphExecDestroy, "cuGraphExecDestroy");
    RESOLVE_OPTIONAL(GraphDestroy, "cuGraphDestroy");
    resolve_by_version();
    return 0;
}

/* Called with `lock` held. */
static void load_locked(void) {
    const char *path = getenv("GPUJIT_LIBCUDA"); /* tests and unusual installs */
    if (!path || !*path) path = "libcuda.so.1";
    libcuda = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!libcuda) {
        const char *e = dlerror();
        snprintf(load_msg, sizeof load_msg, "no CUDA driver: cannot load %s (%s); is an NVIDIA driver installed?", path,
                 e ? e : "not found");
        goto fail;
    }
    if (resolve_all() < 0) goto fail;
    CUresult r = gj_cu.Init(0);
    if (r != CUDA_SUCCESS) {
        const char *name = NULL, *text = NULL;
        gj_cu.GetErrorName(r, &name);
        gj_cu.GetErrorString(r, &text);
        load_code = r;
        snprintf(load_msg, sizeof load_msg, "cuInit failed: %s (%d): %s%s", name ? name : "?", (int)r, text ? text : "",
                 r == CUDA_ERROR_NO_DEVICE ? " (no CUDA device found)" : "");
        goto fail;
    }
    int n = 0;
    r = gj_cu.DeviceGetCount(&n);
    if (r != CUDA_SUCCESS || n <= 0) {
        load_code = r != CUDA_SUCCESS ? r : CUDA_ERROR_NO_DEVICE;
        snprintf(load_msg, sizeof load_msg, "no CUDA device found");
        goto fail;
    }
    device_count = n > GJ_MAX_DEVICES ? GJ_MAX_DEVICES : n;
    __atomic_store_n(&load_state, LOAD_OK, __ATOMIC_RELEASE);
    return;
fail:
    /* The symbol table is left as resolved so far; nothing calls it once LOAD_FAILED. */
    __atomic_store_n(&load_state, LOAD_FAILED, __ATOMIC_RELEASE);
}

/* 0 if the driver is usable, -1 if not (no exception set). */
static int try_load(void) {
    int s = __atomic_load_n(&load_state, __ATOMIC_ACQUIRE);
    if (s == LOAD_NOT_TRIED) {
        pthread_mutex_lock(&lock);
        if (__atomic_load_n(&load_state, __ATOMIC_ACQUIRE) == LOAD_NOT_TRIED) load_locked();
        pthread_mutex_unlock(&lock);
        s = __atomic_load_n(&load_state, __ATOMIC_ACQUIRE);
    }
    return s == LOAD_OK ? 0 : -1;
}

static void atfork_child(void) {
    if (__atomic_load_n(&load_state, __ATOMIC_ACQUIRE) == LOAD_OK) __atomic_store_n(&forked, 1, __ATOMIC_RELEASE);
}

int gj_cuda_load(void) {
    if (__atomic_load_n(&forked, __ATOMIC_ACQUIRE)) {
        PyErr_SetString(GjExc_CudaDriverError,
                        "CUDA initialized before forking: a process forked after CUDA was initialised cannot "
                        "use it; start worker processes with the 'spawn' or 'forkserver' method");
        return -1;
    }
    if (try_load() == 0) return 0;
    const char *name = NULL;
    if (load_code >= 0 && gj_cu.GetErrorName) gj_cu.GetErrorName(load_code, &name);
    raise_cuda(load_code, name, load_msg);
    return -1;
}

static int check_device(int dev) {
    if (dev < 0 || dev >= device_count) {
        gj_cuda_error("invalid CUDA device %d (this machine has %d)", dev, device_count);
        return -1;
    }
    return 0;
}

/* The retained primary context of device dev (retaining it on first use). */
int gj_cuda_context(int dev, CUcontext *out) {
    if (gj_cuda_load() < 0 || check_device(dev) < 0) return -1;
    CUcontext ctx = __atomic_load_n(&contexts[dev], __ATOMIC_ACQUIRE);
    CUresult r = CUDA_SUCCESS;
    if (!ctx) {
        pthread_mutex_lock(&lock);
        ctx = contexts[dev];
        if (!ctx) {
            CUdevice d;
            r = gj_cu.DeviceGet(&d, dev);
            if (r == CUDA_SUCCESS) r = gj_cu.DevicePrimaryCtxRetain(&ctx, d);
            if (r == CUDA_SUCCESS) __atomic_store_n(&contexts[dev], ctx, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&lock);
        if (gj_cuda_check(r, "cuDevicePrimaryCtxRetain") < 0) return -1;
    }
    *out = ctx;
    return 0;
}

int gj_cuda_enter(int dev) {
    CUcontext ctx;
    if (gj_cuda_context(dev, &ctx) < 0) return -1;
    CUresult r;
    /* Cheap (a thread-local read in the driver); other libraries may have
     * switched this thread to another device's context since our last call. */
    CUcontext cur = NULL;
    r = gj_cu.CtxGetCurrent(&cur);
    if (r == CUDA_SUCCESS && cur != ctx) r = gj_cu.CtxSetCurrent(ctx);
    return gj_cuda_check(r, "cuCtxSetCurrent");
}

const GjDeviceLimits *gj_cuda_limits(int dev) {
    if (gj_cuda_load() < 0 || check_device(dev) < 0) return NULL;
    if (__atomic_load_n(&limits_valid[dev], __ATOMIC_ACQUIRE)) return &limits[dev];
    /* clang-format off */
    static const int attrs[] = {
        CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
        CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
    };
    /* clang-format on */
    int v[sizeof attrs / sizeof attrs[0]];
    CUdevice d;
    CUresult r = gj_cu.DeviceGet(&d, dev);
    for (size_t i = 0; r == CUDA_SUCCESS && i < sizeof attrs / sizeof attrs[0]; i++)
        r = gj_cu.DeviceGetAttribute(&v[i], attrs[i], d);
    if (gj_cuda_check(r, "cuDeviceGetAttribute") < 0) return NULL;
    /* clang-format off */
    GjDeviceLimits l = {
        .max_threads = v[0], .max_block = {v[1], v[2], v[3]}, .max_grid = {v[4], v[5], v[6]},
        .max_shared = v[7], .max_shared_optin = v[8], .cc_major = v[9], .cc_minor = v[10],
        .sm_count = v[11],
    };
    /* clang-format on */
    pthread_mutex_lock(&lock);
    limits[dev] = l;
    __atomic_store_n(&limits_valid[dev], 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
    return &limits[dev];
}

unsigned gj_cuda_generation(int dev) {
    if (dev < 0 || dev >= GJ_MAX_DEVICES) return 0;
    return __atomic_load_n(&generations[dev], __ATOMIC_ACQUIRE);
}

int gj_current_device(void) { return current_device; }

/* ---- target ---- */

static int parse_target(const char *s) {
    if (!strcasecmp(s, "cuda")) return GJ_TARGET_NVPTX;
    if (!strcasecmp(s, "cpu")) return GJ_TARGET_HOST;
    return -1;
}

int gj_target_env_check(void) {
    const char *env = getenv("GPUJIT_TARGET");
    if (env && *env && parse_target(env) < 0) {
        PyErr_Format(PyExc_ValueError,
                     "GPUJIT_TARGET='%s' is not a target: use 'cpu' or 'cuda', or leave it unset "
                     "('cuda' when there is a GPU, else 'cpu')", env);
        return -1;
    }
    return 0;
}

GjTargetKind gj_target(void) {
    int t = __atomic_load_n(&target, __ATOMIC_ACQUIRE);
    if (t >= 0) return (GjTargetKind)t;
    const char *env = getenv("GPUJIT_TARGET");
    if (env && *env) {
        t = parse_target(env);
        if (t < 0) {
            gj_target_env_check();
            return (GjTargetKind)-1;
        }
        /* Forcing 'cuda' without a GPU is allowed here: the first operation that
         * needs the driver raises CudaError saying why. */
    } else {
        t = try_load() == 0 ? GJ_TARGET_NVPTX : GJ_TARGET_HOST;
    }
    __atomic_store_n(&target, t, __ATOMIC_RELEASE);
    return (GjTargetKind)t;
}


/* ---- Python functions ---- */

static PyObject *py_set_target(PyObject *self, PyObject *arg) {
    if (arg == Py_None) { /* back to automatic choice */
        __atomic_store_n(&target, -1, __ATOMIC_RELEASE);
        Py_RETURN_NONE;
    }
    const char *s = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    int t = s ? parse_target(s) : -1;
    if (t < 0) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "target must be 'cuda', 'cpu' or None, not %R", arg);
        return NULL;
    }
    __atomic_store_n(&target, t, __ATOMIC_RELEASE);
    Py_RETURN_NONE;
}

static PyObject *py_get_target(PyObject *self, PyObject *unused) {
    int t = gj_target();
    if (t < 0) return NULL;
    return PyUnicode_FromString(gj_target_name((GjTargetKind)t));
}

static PyObject *py_is_available(PyObject *self, PyObject *unused) { return PyBool_FromLong(try_load() == 0); }

static PyObject *py_driver_version(PyObject *self, PyObject *unused) {
    int v = 0;
    if (gj_cuda_load() < 0 || gj_cuda_check(gj_cu.DriverGetVersion(&v), "cuDriverGetVersion") < 0) return NULL;
    return PyLong_FromLong(v);
}

static PyObject *py_device_count(PyObject *self, PyObject *unused) {
    return PyLong_FromLong(try_load() == 0 ? device_count : 0);
}

static PyObject *py_device_info(PyObject *self, PyObject *arg) {
    int dev = gj_as_int(arg);
    if (dev == -1 && PyErr_Occurred()) return NULL;
    const GjDeviceLimits *l = gj_cuda_limits(dev);
    if (!l) return NULL;
    CUdevice d;
    char name[256] = "";
    size_t total = 0;
    int pci = 0, warp = 0;
    CUresult r = gj_cu.DeviceGet(&d, dev);
    if (r == CUDA_SUCCESS) r = gj_cu.DeviceGetName(name, sizeof name, d);
    if (r == CUDA_SUCCESS) r = gj_cu.DeviceTotalMem(&total, d);
    if (r == CUDA_SUCCESS) r = gj_cu.DeviceGetAttribute(&pci, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d);
    if (r == CUDA_SUCCESS) r = gj_cu.DeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, d);
    if (gj_cuda_check(r, "cuDeviceGetAttribute") < 0) return NULL;
    return Py_BuildValue("{s:i,s:s,s:(ii),s:i,s:K,s:i,s:i,s:(iii),s:(iii),s:i,s:i,s:i}", "id", dev, "name", name,
                         "compute_capability", l->cc_major, l->cc_minor, "multiprocessor_count", l->sm_count,
                         "total_memory", (unsigned long long)total, "pci_bus_id", pci, "max_threads_per_block",
                         l->max_threads, "max_block_dim", l->max_block[0], l->max_block[1], l->max_block[2],
                         "max_grid_dim", l->max_grid[0], l->max_grid[1], l->max_grid[2], "max_shared_memory_per_block",
                         l->max_shared, "max_shared_memory_per_block_optin", l->max_shared_optin, "warp_size", warp);
}

static PyObject *py_select_device(PyObject *self, PyObject *arg) {
    int dev = gj_as_int(arg);
    if (dev == -1 && PyErr_Occurred()) return NULL;
    if (gj_cuda_enter(dev) < 0) return NULL;
    current_device = dev;
    Py_RETURN_NONE;
}

static PyObject *py_current_device(PyObject *self, PyObject *unused) { return PyLong_FromLong(gj_current_device()); }

static PyObject *py_synchronize(PyObject *self, PyObject *unused) {
    int t = gj_target();
    if (t < 0) return NULL;
    if (gj_graph_check_sync(NULL, NULL, "gpujit.synchronize()") < 0) return NULL;
    if (t == GJ_TARGET_HOST) /* cpu launches finish before they return */
        Py_RETURN_NONE;
    if (gj_cuda_enter(gj_current_device()) < 0 || gj_cuda_wait(NULL, 0) < 0) return NULL;
    CUresult r;
    Py_BEGIN_ALLOW_THREADS r = gj_cu.CtxSynchronize();
    Py_END_ALLOW_THREADS if (gj_cuda_check(r, "cuCtxSynchronize") < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_mem_get_info(PyObject *self, PyObject *unused) {
    size_t free_b = 0, total = 0;
    if (gj_cuda_enter(gj_current_device()) < 0 || gj_cuda_check(gj_cu.MemGetInfo(&free_b, &total), "cuMemGetInfo") < 0)
        return NULL;
    return Py_BuildValue("(KK)", (unsigned long long)free_b, (unsigned long long)total);
}

/* Destroys every allocation, module, stream and event of the current device's
 * primary context (ours and other libraries' alike) and starts a new generation:
 * objects from the old one become inert (they skip their free on dealloc and
 * raise if used). */
static PyObject *py_reset(PyObject *self, PyObject *unused) {
    int dev = gj_current_device();
    if (gj_cuda_load() < 0 || check_device(dev) < 0) return NULL;
    CUdevice d;
    CUresult r = gj_cu.DeviceGet(&d, dev);
    gj_module_forget_device(dev);
    pthread_mutex_lock(&lock);
    if (r == CUDA_SUCCESS) r = gj_cu.DevicePrimaryCtxReset(d);
    /* A reset primary context comes back only through a new retain (an old handle
     * made current gives CUDA_ERROR_CONTEXT_IS_DESTROYED): gj_cuda_enter retains it
     * again and makes it current on each thread that uses it. */
    __atomic_store_n(&contexts[dev], NULL, __ATOMIC_RELEASE);
    __atomic_add_fetch(&generations[dev], 1, __ATOMIC_ACQ_REL);
    pthread_mutex_unlock(&lock);
    if (gj_cuda_check(r, "cuDevicePrimaryCtxReset") < 0) return NULL;
    if (gj_cuda_enter(dev) < 0) return NULL;
    Py_RETURN_NONE;
}

/* Any stream a launch accepts (None or 0, a gpujit Stream, an int, the __cuda_stream__ protocol)
 * as its CUstream: one reading of streams for the Python layer too. */
static PyObject *py_stream_handle(PyObject *self, PyObject *obj) {
    (void)self;
    CUstream h;
    if (gj_stream_handle(obj, &h) < 0) return NULL;
    return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)h);
}

/* clang-format off */
static PyMethodDef driver_methods[] = {
    {"is_available", py_is_available, METH_NOARGS,
     "is_available() -> bool: a CUDA driver and at least one device exist"},
    {"driver_version", py_driver_version, METH_NOARGS,
     "driver_version() -> int: cuDriverGetVersion (e.g. 13000)"},
    {"device_count", py_device_count, METH_NOARGS, "device_count() -> int (0 without a driver)"},
    {"device_info", py_device_info, METH_O, "device_info(id) -> dict of the device's properties"},
    {"select_device", py_select_device, METH_O,
     "select_device(id): make device `id` current for the calling thread"},
    {"current_device", py_current_device, METH_NOARGS, "current_device() -> int"},
    {"stream_handle", py_stream_handle, METH_O,
     "stream_handle(stream) -> int: the CUstream of any stream a launch accepts (0: the default)"},
    {"set_target", py_set_target, METH_O,
     "set_target('cuda' | 'cpu' | None): choose where launches and arrays go (None: automatic)"},
    {"get_target", py_get_target, METH_NOARGS, "get_target() -> 'cuda' or 'cpu'"},
    {"synchronize", py_synchronize, METH_NOARGS,
     "synchronize(): wait for all work on the current device"},
    {"mem_get_info", py_mem_get_info, METH_NOARGS, "mem_get_info() -> (free, total) bytes"},
    {"reset", py_reset, METH_NOARGS,
     "reset(): reset the current device's primary context (all its memory is freed)"},
    {NULL, NULL, 0, NULL},
};
/* clang-format on */

int gj_driver_add(PyObject *m) {
    PyObject *d = Py_BuildValue("{s:O,s:O}", "code", Py_None, "name", Py_None);
    if (!d) return -1;
    GjExc_CudaError =
            PyErr_NewExceptionWithDoc("gpujit.CudaError",
                                      "An error from the CUDA driver (or its absence). `code` is the CUresult "
                                      "(None when there is none), `name` its name (e.g. 'CUDA_ERROR_ILLEGAL_ADDRESS').",
                                      PyExc_RuntimeError, d);
    Py_DECREF(d);
    if (!GjExc_CudaError) return -1;
    /* named where pickle finds it: a worker's exception crosses back to its parent */
    GjExc_CudaDriverError = PyErr_NewExceptionWithDoc("gpujit.cudadrv.error.CudaDriverError",
                                                      "The driver cannot be used: in a process forked after "
                                                      "CUDA was initialised.",
                                                      GjExc_CudaError, NULL);
    if (!GjExc_CudaDriverError) return -1;
    GjExc_GraphCaptureError =
            PyErr_NewExceptionWithDoc("gpujit.GraphCaptureError",
                                      "A CUDA graph capture went wrong: an operation that cannot be captured, "
                                      "work queued on another stream, or the driver's CUDA_ERROR_STREAM_CAPTURE_* "
                                      "codes (then `code` and `name` say which).",
                                      GjExc_CudaError, NULL);
    if (!GjExc_GraphCaptureError) return -1;
    if (PyModule_AddObjectRef(m, "CudaError", GjExc_CudaError) < 0 ||
        PyModule_AddObjectRef(m, "GraphCaptureError", GjExc_GraphCaptureError) < 0 ||
        PyModule_AddObjectRef(m, "CudaDriverError", GjExc_CudaDriverError) < 0 ||
        PyModule_AddFunctions(m, driver_methods) < 0)
        return -1;
    /* the module is initialised once per process image; children inherit the handler */
    if (pthread_atfork(NULL, NULL, atfork_child) != 0) {
        PyErr_SetString(PyExc_RuntimeError, "pthread_atfork failed");
        return -1;
    }
    return 0;
}
