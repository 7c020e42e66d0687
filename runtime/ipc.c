/* CUDA IPC: sharing device memory with another process (numba's
 * get_ipc_handle / open_ipc_array; python/gpujit/ipc.py holds the handle
 * objects). A handle names a whole allocation (cuIpcGetMemHandle takes its
 * base, found with cuMemGetAddressRange); the Python side carries the offset
 * of the memory it describes. Opening maps that allocation into this process
 * (cuIpcOpenMemHandle), closing unmaps it. The cpu target's memory is the
 * host's, which IPC does not share: these refuse it. */
#define PY_SSIZE_T_CLEAN /* '#' formats take Py_ssize_t lengths */
#include <string.h>

#include "runtime.h"
#include "cuda.h"

static int usable(void) {
    int t = gj_target();
    if (t < 0) return -1;
    if (t != GJ_TARGET_NVPTX) {
        PyErr_SetString(PyExc_NotImplementedError,
                        "CUDA IPC shares GPU memory between processes; the cpu target's device arrays are host "
                        "memory (use multiprocessing's shared memory there)");
        return -1;
    }
    if (gj_cuda_load() < 0 || gj_cuda_enter(gj_current_device()) < 0) return -1;
    if (!gj_cu.IpcGetMemHandle || !gj_cu.IpcOpenMemHandle || !gj_cu.IpcCloseMemHandle || !gj_cu.MemGetAddressRange) {
        gj_cuda_error("the CUDA driver has no IPC entry points (cuIpcGetMemHandle)");
        return -1;
    }
    return 0;
}

/* ipc_get_handle(ptr) -> (handle bytes, base, allocation size): the handle of
 * the allocation holding device address `ptr`. */
static PyObject *py_ipc_get_handle(PyObject *self, PyObject *arg) {
    unsigned long long ptr = PyLong_AsUnsignedLongLong(arg);
    if (PyErr_Occurred() || usable() < 0) return NULL;
    CUdeviceptr base = 0;
    size_t size = 0;
    CUipcMemHandle h;
    if (gj_cuda_check(gj_cu.MemGetAddressRange(&base, &size, (CUdeviceptr)ptr), "cuMemGetAddressRange") < 0 ||
        gj_cuda_check(gj_cu.IpcGetMemHandle(&h, base), "cuIpcGetMemHandle") < 0)
        return NULL;
    return Py_BuildValue("(y#Kn)", (const char *)h.data, (Py_ssize_t)sizeof h.data, (unsigned long long)base,
                         (Py_ssize_t)size);
}

/* ipc_open(handle bytes) -> the base address of the other process's allocation here. */
static PyObject *py_ipc_open(PyObject *self, PyObject *arg) {
    char *data;
    Py_ssize_t n;
    if (PyBytes_AsStringAndSize(arg, &data, &n) < 0) return NULL;
    CUipcMemHandle h;
    if (n != (Py_ssize_t)sizeof h.data)
        return PyErr_Format(PyExc_ValueError, "an IPC handle is %d bytes, not %zd", (int)sizeof h.data, n);
    if (usable() < 0) return NULL;
    memcpy(h.data, data, sizeof h.data);
    CUdeviceptr p = 0;
    CUresult r;
    Py_BEGIN_ALLOW_THREADS r = gj_cu.IpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    Py_END_ALLOW_THREADS
    if (gj_cuda_check(r, "cuIpcOpenMemHandle") < 0) return NULL;
    return PyLong_FromUnsignedLongLong(p);
}

static PyObject *py_ipc_close(PyObject *self, PyObject *arg) {
    unsigned long long p = PyLong_AsUnsignedLongLong(arg);
    if (PyErr_Occurred() || usable() < 0) return NULL;
    if (gj_cuda_check(gj_cu.IpcCloseMemHandle((CUdeviceptr)p), "cuIpcCloseMemHandle") < 0) return NULL;
    Py_RETURN_NONE;
}

/* clang-format off */
static PyMethodDef ipc_methods[] = {
    {"ipc_get_handle", py_ipc_get_handle, METH_O,
     "ipc_get_handle(ptr) -> (handle: 64 bytes, base, size) of the allocation holding ptr"},
    {"ipc_open", py_ipc_open, METH_O, "ipc_open(handle) -> the allocation's base address in this process"},
    {"ipc_close", py_ipc_close, METH_O, "ipc_close(base): unmap memory ipc_open mapped"},
    {NULL, NULL, 0, NULL},
};
/* clang-format on */

int gj_ipc_add(PyObject *m) { return PyModule_AddFunctions(m, ipc_methods); }
