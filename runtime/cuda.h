/* The slice of the CUDA Driver API that the runtime uses, declared here so that
 * gpujit builds where no CUDA toolkit is installed. Values match cuda.h 13.0;
 * entry points are resolved at run time from libcuda.so.1 (runtime/driver.c),
 * never linked. Also the runtime's internal interfaces between its files. */
#ifndef GPUJIT_RUNTIME_CUDA_H
#define GPUJIT_RUNTIME_CUDA_H

#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include "gpujit/gpujit.h"
#include "cpu.h" /* GjDim3 */

/* ---- driver types and constants (cuda.h) ---- */

typedef int CUresult;
typedef int CUdevice;
typedef uint64_t CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef size_t (*CUoccupancyB2DSize)(int block_size);
typedef struct CUlinkState_st *CUlinkState;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
/* A kernel node's launch (cuda.h's CUDA_KERNEL_NODE_PARAMS_v2; the v1 entry
 * points read the same struct without its last two fields). */
typedef struct GjKernelNodeParams {
    CUfunction func;
    unsigned gridDimX, gridDimY, gridDimZ;
    unsigned blockDimX, blockDimY, blockDimZ;
    unsigned sharedMemBytes;
    void **kernelParams;
    void **extra;
    void *kern;     /* CUkernel: used only when func is NULL */
    CUcontext ctx;  /* NULL: the current context */
} GjKernelNodeParams;
typedef struct CUipcMemHandle {
    unsigned char data[64]; /* CU_IPC_HANDLE_SIZE */
} CUipcMemHandle;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_DEINITIALIZED = 4,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    /* stream capture (CUDA graphs): 900 to 908 */
    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
    CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
    CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908,
};

enum { /* CUstreamCaptureMode */
       CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
       CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
       CU_STREAM_CAPTURE_MODE_RELAXED = 2,
};

enum { /* CUstreamCaptureStatus */
       CU_STREAM_CAPTURE_STATUS_NONE = 0,
       CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
       CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
};

enum { /* CUdevice_attribute */
       CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
       CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
       CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
       CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
       CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
       CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
       CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
       CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
       CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
       CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
       CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
       CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

enum { /* CUfunction_attribute */
       CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
       CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
       CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
       CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
       CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
       CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

enum { /* CUjit_option */
       CU_JIT_WALL_TIME = 2,
       CU_JIT_INFO_LOG_BUFFER = 3,
       CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
       CU_JIT_ERROR_LOG_BUFFER = 5,
       CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
       CU_JIT_LOG_VERBOSE = 12,
};

enum { /* CUjitInputType: what the linker takes */
       CU_JIT_INPUT_CUBIN = 0,
       CU_JIT_INPUT_PTX = 1,
       CU_JIT_INPUT_FATBINARY = 2,
       CU_JIT_INPUT_OBJECT = 3,
       CU_JIT_INPUT_LIBRARY = 4,
};

enum {
    CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1,
    CU_EVENT_DEFAULT = 0,
    CU_EVENT_DISABLE_TIMING = 2,
    CU_STREAM_DEFAULT = 0,
    CU_MEMHOSTALLOC_PORTABLE = 1,
    CU_MEMHOSTREGISTER_PORTABLE = 1,
    CU_MEMHOSTREGISTER_DEVICEMAP = 2,
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
};

/* Stream handles with a meaning of their own (also the CAI/DLPack encoding). */
#define GJ_STREAM_LEGACY ((CUstream)(uintptr_t)1)
#define GJ_STREAM_PER_THREAD ((CUstream)(uintptr_t)2)

/* ---- DLPack (dlpack.h v0.8: the unversioned "dltensor" capsule) ---- */

enum { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13 };
enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLComplex = 5, kDLBool = 6 };

typedef struct DLDevice {
    int32_t device_type, device_id;
} DLDevice;
typedef struct DLDataType {
    uint8_t code, bits;
    uint16_t lanes;
} DLDataType;
typedef struct DLTensor {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* elements; NULL means C-contiguous */
    uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
/* DLPack >= 1.0: the "dltensor_versioned" capsule (produced when asked for). */
typedef struct DLManagedTensorVersioned {
    struct {
        uint32_t major, minor;
    } version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags; /* bit 0: read-only */
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

/* ---- the resolved entry points (runtime/driver.c) ---- */

typedef struct GjCuda {
    CUresult (*Init)(unsigned);
    CUresult (*DriverGetVersion)(int *);
    CUresult (*DeviceGetCount)(int *);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetName)(char *, int, CUdevice);
    CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
    CUresult (*DeviceTotalMem)(size_t *, CUdevice);
    CUresult (*GetErrorName)(CUresult, const char **);
    CUresult (*GetErrorString)(CUresult, const char **);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice);
    CUresult (*DevicePrimaryCtxReset)(CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxGetCurrent)(CUcontext *);
    CUresult (*CtxSynchronize)(void);
    CUresult (*MemGetInfo)(size_t *, size_t *);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemHostAlloc)(void **, size_t, unsigned);
    CUresult (*MemFreeHost)(void *);
    /* numba's mapped()/mempin: host memory page-locked and mapped in place */
    CUresult (*MemHostRegister)(void *, size_t, unsigned);
    CUresult (*MemHostUnregister)(void *);
    CUresult (*MemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned);
    /* numba's profile_start/profile_stop */
    CUresult (*ProfilerStart)(void);
    CUresult (*ProfilerStop)(void);
    CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*MemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    /* between devices: direct where peer access exists, else staged by the driver */
    CUresult (*MemcpyPeer)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t);
    CUresult (*MemcpyPeerAsync)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);
    CUresult (*PointerGetAttribute)(void *, int, CUdeviceptr);
    CUresult (*ModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
    CUresult (*ModuleUnload)(CUmodule);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*FuncGetAttribute)(int *, int, CUfunction);
    CUresult (*FuncSetAttribute)(CUfunction, int, int);
    CUresult (*OccupancyMaxPotentialBlockSize)(int *, int *, CUfunction, CUoccupancyB2DSize, size_t, int);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
    /* cooperative launches (cg.this_grid()): the launch, its occupancy limit,
     * and the grid barrier's counter, zeroed before each launch */
    CUresult (*LaunchCooperativeKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, CUstream, void **);
    CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t);
    CUresult (*FuncGetModule)(CUmodule *, CUfunction);
    CUresult (*ModuleGetGlobal)(CUdeviceptr *, size_t *, CUmodule, const char *);
    CUresult (*MemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
    CUresult (*StreamCreate)(CUstream *, unsigned);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*StreamQuery)(CUstream);
    CUresult (*StreamWaitEvent)(CUstream, CUevent, unsigned);
    CUresult (*EventCreate)(CUevent *, unsigned);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventSynchronize)(CUevent);
    CUresult (*EventQuery)(CUevent);
    CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*EventDestroy)(CUevent);
    /* Optional (NULL where the driver lacks them; their users say so): the
     * linker, for kernels that call external code (declare_device, link=),
     * and IPC, for sharing device memory with other processes. */
    CUresult (*LinkCreate)(unsigned, int *, void **, CUlinkState *);
    CUresult (*LinkAddData)(CUlinkState, int, void *, size_t, const char *, unsigned, int *, void **);
    CUresult (*LinkComplete)(CUlinkState, void **, size_t *);
    CUresult (*LinkDestroy)(CUlinkState);
    CUresult (*IpcGetMemHandle)(CUipcMemHandle *, CUdeviceptr);
    CUresult (*IpcOpenMemHandle)(CUdeviceptr *, CUipcMemHandle, unsigned);
    CUresult (*IpcCloseMemHandle)(CUdeviceptr);
    CUresult (*MemGetAddressRange)(CUdeviceptr *, size_t *, CUdeviceptr);
    /* CUDA graphs (runtime/graph.c), optional: a driver without them makes
     * gpujit.graph raise. Of the two GetCaptureInfo entry points (_v3 takes
     * an edge-data argument more) the newer one the driver has is used. */
    CUresult (*StreamBeginCapture)(CUstream, int);
    CUresult (*StreamEndCapture)(CUstream, CUgraph *);
    CUresult (*StreamIsCapturing)(CUstream, int *);
    CUresult (*StreamGetCaptureInfo3)(CUstream, int *, uint64_t *, CUgraph *, const CUgraphNode **, const void **,
                                      size_t *);
    CUresult (*StreamGetCaptureInfo2)(CUstream, int *, uint64_t *, CUgraph *, const CUgraphNode **, size_t *);
    CUresult (*ThreadExchangeStreamCaptureMode)(int *);
    CUresult (*GraphInstantiate)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*GraphLaunch)(CUgraphExec, CUstream);
    CUresult (*GraphUpload)(CUgraphExec, CUstream);
    CUresult (*GraphGetNodes)(CUgraph, CUgraphNode *, size_t *);
    CUresult (*GraphExecKernelNodeSetParams)(CUgraphExec, CUgraphNode, const GjKernelNodeParams *);
    CUresult (*GraphExecDestroy)(CUgraphExec);
    CUresult (*GraphDestroy)(CUgraph);
} GjCuda;

/* Valid once gj_cuda_load() has returned 0; never unloaded. */
extern GjCuda gj_cu;

#define GJ_MAX_DEVICES 16

/* What the launcher checks a launch against, read once per device. */
typedef struct GjDeviceLimits {
    int max_threads;       /* per block */
    int max_block[3];
    int max_grid[3];
    int max_shared;        /* default per-block limit */
    int max_shared_optin;  /* with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
    int cc_major, cc_minor;
    int sm_count;
} GjDeviceLimits;

/* ---- runtime/driver.c ---- */

/* PyLong_AsInt is 3.13+; -1 with an exception on error or overflow. */
static inline int gj_as_int(PyObject *o) {
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < -2147483647L - 1 || v > 2147483647L) {
        PyErr_SetString(PyExc_OverflowError, "value out of range for a C int");
        return -1;
    }
    return (int)v;
}

extern PyObject *GjExc_LaunchError;

/* Process-wide target: GJ_TARGET_NVPTX ('cuda') or GJ_TARGET_HOST ('cpu').
 * Resolved on first use from GPUJIT_TARGET, else from whether a GPU exists. */
GjTargetKind gj_target(void);
/* 0, or -1 with a ValueError when GPUJIT_TARGET is set to something other than cpu or cuda. */
int gj_target_env_check(void);
/* The current device ordinal (process-wide; select_device changes it). */
int gj_current_device(void);
/* Loads the driver and initialises it; 0, or -1 with CudaError set. */
int gj_cuda_load(void);
/* Makes `dev`'s primary context current on this thread (retaining it on first
 * use); 0, or -1 with CudaError set. Call before any driver call that needs a
 * context: Python threads each have their own current context. */
int gj_cuda_enter(int dev);
int gj_cuda_context(int dev, CUcontext *out);
/* The device's limits; NULL with CudaError set if unavailable. */
const GjDeviceLimits *gj_cuda_limits(int dev);
/* Bumped by reset(): handles (modules, memory) from an older generation died
 * with the context and must not be used or freed. */
unsigned gj_cuda_generation(int dev);
/* If r is not CUDA_SUCCESS: sets CudaError ("what: NAME: text") and returns -1. */
int gj_cuda_check(CUresult r, const char *what);
/* Sets CudaError with a message and no driver code. */
void gj_cuda_error(const char *fmt, ...);
/* Before a driver call that blocks until work on the device is done (a
 * synchronisation, a synchronous copy): waits, GIL held on entry and exit,
 * until the stream (or with `event`, the event) h has no work left, so that
 * the blocking call returns at once and reports what it reports. While
 * waiting it runs Python's signal handlers every GJ_WAIT_SIGNALS_MS: 0, or -1
 * with their exception (Ctrl-C: KeyboardInterrupt; the work goes on). */
#define GJ_WAIT_SIGNALS_MS 20
int gj_cuda_wait(void *h, int event);

/* ---- runtime/memory.c ---- */

typedef enum GjMemKind { GJ_MEM_DEVICE, GJ_MEM_PINNED, GJ_MEM_HOST } GjMemKind;

typedef struct GjAllocation {
    PyObject_HEAD uint64_t ptr;
    size_t size;
    GjMemKind kind;
    int device;
    unsigned generation;
    Py_ssize_t exports; /* buffer views handed out (host kinds) */
} GjAllocation;

extern PyTypeObject GjAllocation_Type;
/* Allocates `size` bytes of the kind the target uses for arrays; new reference. */
PyObject *gj_alloc(GjTargetKind target, int device, size_t size, int pinned);
/* Copies between the spaces; target decides host memcpy or the driver. Sync
 * unless `stream` is non-zero. 0, or -1 with an exception. GIL released inside. */
int gj_memcpy(GjTargetKind target, int device, int dir, uint64_t dst, uint64_t src, size_t n, CUstream stream);
int gj_memcpy_peer(int dst_device, uint64_t dst, int src_device, uint64_t src, size_t n, CUstream stream);
enum { GJ_HTOD, GJ_DTOH, GJ_DTOD };
/* Raw device memory for the launcher's staging of NumPy arguments. */
int gj_device_malloc(int device, size_t n, CUdeviceptr *out);
void gj_device_free(int device, CUdeviceptr p);

/* ---- runtime/devicearray.c ---- */

typedef struct GjDeviceArray {
    PyObject_HEAD uint64_t data;               /* address of element [0, ..., 0] */
    int ndim;
    int64_t shape[GJ_MAXDIM];
    int64_t strides[GJ_MAXDIM];  /* bytes */
    GjDtype dtype;
    int itemsize;
    GjTargetKind target;
    int device;
    int readonly;
    int c_contig;                /* computed by __init__ */
    int initialized;
    PyObject *owner;             /* keeps the memory alive (an Allocation, or a foreign object) */
    PyObject *stream;            /* stream associated by the creator, or NULL */
    PyObject *record;            /* the structured NumPy dtype of a record array (dtype 0), or NULL */
    PyObject *dict;
    PyObject *weaklist;
} GjDeviceArray;

extern PyTypeObject GjDeviceArray_Type;
/* Itemsize of a dtype; 0 for an invalid code. */
int gj_dtype_size(int dtype);
const char *gj_dtype_name(int dtype);
/* Whether shape/strides describe a C-contiguous array of itemsize bytes. */
int gj_is_c_contig(int ndim, const int64_t *shape, const int64_t *strides, int64_t itemsize);
/* The strides in bytes of a C-contiguous array of this shape and itemsize. */
void gj_c_strides(int ndim, const int64_t *shape, int64_t itemsize, int64_t *strides);
/* Maps a buffer-protocol / CAI format ("d", "<f8", "?", "|b1", ...) to a dtype; 0 if unknown. */
GjDtype gj_dtype_from_format(const char *fmt, Py_ssize_t itemsize);
GjDtype gj_dtype_from_typestr(const char *typestr);

/* ---- runtime/stream.c ---- */

typedef struct GjStream {
    PyObject_HEAD CUstream handle;
    int device;
    int owned;          /* created by us: destroyed on dealloc */
    int host;           /* created for the cpu target: inert */
    unsigned generation;
} GjStream;

typedef struct GjEvent {
    PyObject_HEAD CUevent handle;
    int device;
    int timing;
    int host;            /* created for the cpu target */
    unsigned generation;
    double host_time_ms; /* cpu target: the time record() was called */
} GjEvent;

extern PyTypeObject GjStream_Type, GjEvent_Type;
/* Converts 0 / None / a Stream / an int handle / an object with
 * __cuda_stream__ to a handle. 0, or -1 with TypeError. */
int gj_stream_handle(PyObject *obj, CUstream *out);
/* Synchronizes one stream with the GIL released. */
int gj_stream_sync(int device, CUstream s);

/* ---- runtime/module.c ---- */

/* The kernel of a CompiledKernel, loaded on `dev` (cached per kernel and device).
 * *max_threads gets the function's own per-block limit. 0, or -1 with an exception. */
int gj_module_function(PyObject *compiled, int dev, CUfunction *fn, int *max_threads);
/* Drops cached modules of a CompiledKernel (call from its dealloc) or of a reset device. */
void gj_module_forget(PyObject *compiled);
void gj_module_forget_device(int dev);

/* ---- runtime/graph.c ---- */

/* A captured kernel launch being given new arguments (gpujit.graph's update). */
typedef struct GjGraphUpdate {
    CUgraphExec exec;
    CUgraphNode node;
    PyObject *kernel; /* the captured CompiledKernel: the arguments must select it */
} GjGraphUpdate;

extern PyObject *GjExc_GraphCaptureError;
/* Whether a graph capture is open on this thread (a thread-local read). */
int gj_graph_capturing(void);
/* ... or a captured launch's update is under way. */
int gj_graph_active(void);
/* The update a launch is to apply instead of launching, once (NULL: launch). */
GjGraphUpdate *gj_graph_take_update(void);
/* While a capture is open: 0 if work queued on this stream (`obj` as given,
 * `h` its handle) goes into it; else -1 with GraphCaptureError naming `what`. */
int gj_graph_check_stream(PyObject *obj, CUstream h, const char *what);
/* A synchronize of `obj` (NULL: the device) while a capture is open: -1 with
 * GraphCaptureError if it would wait for the captured stream. */
int gj_graph_check_sync(PyObject *obj, CUstream h, const char *what);
/* An allocation while a capture that forbids it is open: -1 with GraphCaptureError. */
int gj_graph_check_alloc(void);
/* Appends a launch just queued (GPU) or to be replayed (cpu) to the open capture. */
int gj_graph_record_launch(PyObject *config, PyObject *args, PyObject *kernel, CUstream h);
/* A copy while a capture is open: checks its stream; on the cpu target records
 * it and returns 1 (the caller does not copy now); on the GPU keeps `keep` (host
 * memory the copy uses, or NULL) with the graph and returns 0 (the caller queues
 * the copy). -1 with an exception. */
int gj_graph_copy(PyObject *obj, CUstream h, int dir, uint64_t dst, uint64_t src, size_t n, PyObject *keep);
/* Sets a kernel node's launch in an instantiated graph. */
int gj_graph_set_params(const GjGraphUpdate *u, CUfunction fn, GjDim3 grid, GjDim3 block, unsigned smem, void **kp);

/* ---- adders: each file's types and functions for _core (runtime/registry.c) ---- */

int gj_driver_add(PyObject *m);
int gj_memory_add(PyObject *m);
int gj_devicearray_add(PyObject *m);
int gj_stream_add(PyObject *m);
int gj_module_add(PyObject *m);
int gj_launch_add(PyObject *m);
int gj_ipc_add(PyObject *m);
int gj_graph_add(PyObject *m);

#endif
