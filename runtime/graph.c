/* CUDA graphs: capturing the work queued on one stream into a graph,
 * instantiating and replaying it, and giving a captured kernel launch new
 * arguments (python/gpujit/graph.py is the user's API on top of this).
 *
 * A capture belongs to the thread that opened it. While it is open, the
 * launcher (launch.c) and the arrays' copies (devicearray.c) ask this file
 * whether their stream is the captured one, and append what they queue to the
 * capture's list of records. On the GPU the work still goes to the stream,
 * where the driver turns it into graph nodes (a kernel's record keeps its node,
 * for updates); on the cpu target nothing runs while capturing, and the
 * records are the graph, which graph.py replays.
 *
 * Records (tuples): ("kernel", launch_config, args, compiled_kernel, node),
 * ("copy", dst, src, nbytes, keep) on the cpu target, and ("keep", obj) on the
 * GPU: host memory a captured copy reads or writes at each replay, kept alive
 * with the graph. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime.h"
#include "cuda.h"

typedef struct Capture {
    PyObject *stream_obj; /* what the capture was opened with (strong) */
    CUstream stream;
    int host;             /* cpu target: no driver involved */
    int dev;
    int mode;             /* CUstreamCaptureMode */
    PyObject *records;    /* list (strong) */
} Capture;

static _Thread_local Capture *capture;
static _Thread_local GjGraphUpdate *update;

int gj_graph_capturing(void) { return capture != NULL; }

int gj_graph_active(void) { return capture != NULL || update != NULL; }

GjGraphUpdate *gj_graph_take_update(void) {
    GjGraphUpdate *u = update;
    update = NULL;
    return u;
}

static int capture_error(const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    PyErr_SetString(GjExc_GraphCaptureError, buf);
    return -1;
}

/* A host-target Stream's handle is 0 like the default stream's: it is told
 * apart by the object itself. */
static int is_host_stream(PyObject *obj) {
    return obj && PyObject_TypeCheck(obj, &GjStream_Type) && ((GjStream *)obj)->host;
}

static int is_legacy(PyObject *obj, CUstream h) {
    return (h == NULL || h == GJ_STREAM_LEGACY) && !is_host_stream(obj);
}

static int is_captured(const Capture *cap, PyObject *obj, CUstream h) {
    return obj == cap->stream_obj || (h && h == cap->stream);
}

int gj_graph_check_stream(PyObject *obj, CUstream h, const char *what) {
    Capture *cap = capture;
    if (!cap) return 0;
    if (is_captured(cap, obj, h)) return 0;
    if (is_legacy(obj, h))
        return capture_error("%s on the legacy default stream while a graph capture is open on this thread: it "
                             "would wait for the capturing stream (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT); queue it on "
                             "the captured stream",
                             what);
    if (!cap->host && gj_cu.StreamIsCapturing) {
        /* a stream forked from the captured one (it waited on an event recorded there) is captured too */
        int status = CU_STREAM_CAPTURE_STATUS_NONE;
        if (gj_cuda_check(gj_cu.StreamIsCapturing(h, &status), "cuStreamIsCapturing") < 0) return -1;
        if (status == CU_STREAM_CAPTURE_STATUS_ACTIVE) return 0;
    }
    return capture_error("%s on another stream than the one being captured: it would run now, outside the graph; "
                         "queue it on the captured stream (or fork: make the other stream wait for an Event "
                         "recorded on the captured one)",
                         what);
}

int gj_graph_check_sync(PyObject *obj, CUstream h, const char *what) {
    Capture *cap = capture;
    if (!cap) return 0;
    if (obj && !is_captured(cap, obj, h)) return 0; /* another stream: the driver decides */
    return capture_error("%s inside a graph capture: captured work does not run until the graph is launched, so "
                         "there is nothing to wait for (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED); synchronize after "
                         "the capture or after launching the graph",
                         what);
}

int gj_graph_check_alloc(void) {
    Capture *cap = capture;
    if (!cap || cap->mode == CU_STREAM_CAPTURE_MODE_RELAXED) return 0;
    return capture_error("allocating memory inside a graph capture (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED): "
                         "allocate the arrays before the capture, or capture with mode='relaxed'");
}

static int append(PyObject *rec) {
    if (!rec) return -1;
    int rc = PyList_Append(capture->records, rec);
    Py_DECREF(rec);
    return rc;
}

/* The node the last operation queued on the capturing stream became: the one
 * the next operation would depend on. NULL where that is not a single node. */
static int last_node(CUstream h, CUgraphNode *node) {
    int status = CU_STREAM_CAPTURE_STATUS_NONE;
    uint64_t id = 0;
    CUgraph g = NULL;
    const CUgraphNode *deps = NULL;
    const void *edges = NULL;
    size_t n = 0;
    CUresult r = gj_cu.StreamGetCaptureInfo3 ? gj_cu.StreamGetCaptureInfo3(h, &status, &id, &g, &deps, &edges, &n)
                                             : gj_cu.StreamGetCaptureInfo2(h, &status, &id, &g, &deps, &n);
    if (gj_cuda_check(r, "cuStreamGetCaptureInfo") < 0) return -1;
    *node = status == CU_STREAM_CAPTURE_STATUS_ACTIVE && n == 1 && deps ? deps[0] : NULL;
    return 0;
}

int gj_graph_record_launch(PyObject *config, PyObject *args, PyObject *kernel, CUstream h) {
    Capture *cap = capture;
    if (!cap) return 0;
    CUgraphNode node = NULL;
    if (!cap->host && last_node(h, &node) < 0) return -1;
    return append(Py_BuildValue("(sOOOK)", "kernel", config, args, kernel, (unsigned long long)(uintptr_t)node));
}

int gj_graph_copy(PyObject *obj, CUstream h, int dir, uint64_t dst, uint64_t src, size_t n, PyObject *keep) {
    Capture *cap = capture;
    if (!cap) return 0;
    static const char *const what[] = {"a copy to the device", "a copy to the host", "a device-to-device copy"};
    if (gj_graph_check_stream(obj, h, what[dir]) < 0) return -1;
    if (cap->host) {
        if (append(Py_BuildValue("(sKKnO)", "copy", (unsigned long long)dst, (unsigned long long)src, (Py_ssize_t)n,
                                 keep ? keep : Py_None)) < 0)
            return -1;
        return 1;
    }
    if (keep && append(Py_BuildValue("(sO)", "keep", keep)) < 0) return -1;
    return 0;
}

int gj_graph_set_params(const GjGraphUpdate *u, CUfunction fn, GjDim3 grid, GjDim3 block, unsigned smem, void **kp) {
    GjKernelNodeParams p = {
            .func = fn,
            .gridDimX = grid.x,
            .gridDimY = grid.y,
            .gridDimZ = grid.z,
            .blockDimX = block.x,
            .blockDimY = block.y,
            .blockDimZ = block.z,
            .sharedMemBytes = smem,
            .kernelParams = kp,
    };
    /* the driver copies the parameter values: kp may go once this returns */
    return gj_cuda_check(gj_cu.GraphExecKernelNodeSetParams(u->exec, u->node, &p), "cuGraphExecKernelNodeSetParams");
}

/* ---- Python functions (private: graph.py's) ---- */

static int have_graphs(void) {
    if (gj_cu.StreamBeginCapture && gj_cu.StreamEndCapture && gj_cu.StreamIsCapturing &&
        (gj_cu.StreamGetCaptureInfo3 || gj_cu.StreamGetCaptureInfo2) && gj_cu.GraphInstantiate &&
        gj_cu.GraphLaunch && gj_cu.GraphExecKernelNodeSetParams && gj_cu.GraphExecDestroy && gj_cu.GraphDestroy)
        return 0;
    gj_cuda_error("this CUDA driver lacks CUDA graphs (cuStreamBeginCapture_v2, cuStreamGetCaptureInfo_v2, "
                  "cuGraphInstantiateWithFlags, ...): driver too old; CUDA 11.4 or newer is needed");
    return -1;
}

static int stream_device(PyObject *obj) {
    return PyObject_TypeCheck(obj, &GjStream_Type) ? ((GjStream *)obj)->device : gj_current_device();
}

/* _graph_begin(stream, mode, records): opens a capture on this thread. */
static PyObject *py_graph_begin(PyObject *self, PyObject *a) {
    PyObject *obj, *records;
    int mode;
    if (!PyArg_ParseTuple(a, "OiO!:_graph_begin", &obj, &mode, &PyList_Type, &records)) return NULL;
    if (capture) {
        capture_error("a graph capture is already open on this thread: captures do not nest");
        return NULL;
    }
    if (mode < CU_STREAM_CAPTURE_MODE_GLOBAL || mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return PyErr_Format(PyExc_ValueError, "invalid capture mode %d", mode);
    int t = gj_target();
    if (t < 0) return NULL;
    CUstream h;
    if (gj_stream_handle(obj, &h) < 0) return NULL;
    if (is_legacy(obj, h))
        return PyErr_Format(PyExc_ValueError, "a graph cannot capture the legacy default stream (%R): capture on a "
                                              "stream of its own (gpujit.stream())",
                            obj);
    int host = t == GJ_TARGET_HOST, dev = stream_device(obj);
    if (!host) {
        if (gj_cuda_load() < 0 || have_graphs() < 0 || gj_cuda_enter(dev) < 0 ||
            gj_cuda_check(gj_cu.StreamBeginCapture(h, mode), "cuStreamBeginCapture") < 0)
            return NULL;
    }
    Capture *cap = malloc(sizeof *cap);
    if (!cap) {
        if (!host) {
            CUgraph g = NULL;
            if (gj_cu.StreamEndCapture(h, &g) == CUDA_SUCCESS && g) gj_cu.GraphDestroy(g);
        }
        return PyErr_NoMemory();
    }
    *cap = (Capture){.stream_obj = Py_NewRef(obj), .stream = h, .host = host, .dev = dev, .mode = mode,
                     .records = Py_NewRef(records)};
    capture = cap;
    Py_RETURN_NONE;
}

/* _graph_end(discard) -> the CUgraph as an int (0 on the cpu target), or None
 * when discarded. The capture is closed whatever happens. */
static PyObject *py_graph_end(PyObject *self, PyObject *discard_obj) {
    int discard = PyObject_IsTrue(discard_obj);
    if (discard < 0) return NULL;
    Capture *cap = capture;
    if (!cap) {
        capture_error("no graph capture is open on this thread");
        return NULL;
    }
    capture = NULL;
    CUgraph g = NULL;
    CUresult r = CUDA_SUCCESS;
    int entered = 0;
    if (!cap->host) {
        entered = gj_cuda_enter(cap->dev) == 0;
        if (entered) r = gj_cu.StreamEndCapture(cap->stream, &g);
        if (discard) PyErr_Clear(); /* the caller is raising the exception that made it discard */
    }
    int host = cap->host;
    Py_DECREF(cap->stream_obj);
    Py_DECREF(cap->records);
    free(cap);
    if (host) return discard ? Py_NewRef(Py_None) : PyLong_FromLong(0);
    if (discard) {
        if (g) gj_cu.GraphDestroy(g);
        Py_RETURN_NONE;
    }
    if (!entered) return NULL;
    if (r != CUDA_SUCCESS) {
        if (g) gj_cu.GraphDestroy(g);
        gj_cuda_check(r, "cuStreamEndCapture");
        return NULL;
    }
    return PyLong_FromUnsignedLongLong((uintptr_t)g);
}

static PyObject *py_graph_capturing(PyObject *self, PyObject *unused) { return PyBool_FromLong(capture != NULL); }

/* _graph_alive(device, generation): False once reset() destroyed the context the graph was in */
static PyObject *py_graph_alive(PyObject *self, PyObject *a) {
    int dev;
    unsigned gen;
    if (!PyArg_ParseTuple(a, "iI:_graph_alive", &dev, &gen)) return NULL;
    return PyBool_FromLong(gen == gj_cuda_generation(dev));
}

/* _graph_instantiate(device, graph) -> (the CUgraphExec as an int, the context
 * generation both belong to). On failure the graph is destroyed. */
static PyObject *py_graph_instantiate(PyObject *self, PyObject *a) {
    int dev;
    unsigned long long g;
    if (!PyArg_ParseTuple(a, "iK:_graph_instantiate", &dev, &g)) return NULL;
    CUgraphExec e = NULL;
    if (have_graphs() < 0 || gj_cuda_enter(dev) < 0) return NULL;
    CUresult r = gj_cu.GraphInstantiate(&e, (CUgraph)(uintptr_t)g, 0);
    if (r != CUDA_SUCCESS) {
        gj_cu.GraphDestroy((CUgraph)(uintptr_t)g);
        gj_cuda_check(r, "cuGraphInstantiate");
        return NULL;
    }
    return Py_BuildValue("(KI)", (unsigned long long)(uintptr_t)e, gj_cuda_generation(dev));
}

/* _graph_launch(device, exec, stream) */
static PyObject *py_graph_launch(PyObject *self, PyObject *a) {
    int dev;
    unsigned long long e;
    PyObject *obj;
    CUstream h;
    if (!PyArg_ParseTuple(a, "iKO:_graph_launch", &dev, &e, &obj) || gj_stream_handle(obj, &h) < 0) return NULL;
    if (gj_graph_check_stream(obj, h, "a graph launch") < 0 || gj_cuda_enter(dev) < 0 ||
        gj_cuda_check(gj_cu.GraphLaunch((CUgraphExec)(uintptr_t)e, h), "cuGraphLaunch") < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* _graph_upload(device, exec, stream): what the first launch would do, done now */
static PyObject *py_graph_upload(PyObject *self, PyObject *a) {
    int dev;
    unsigned long long e;
    PyObject *obj;
    CUstream h;
    if (!PyArg_ParseTuple(a, "iKO:_graph_upload", &dev, &e, &obj) || gj_stream_handle(obj, &h) < 0) return NULL;
    if (!gj_cu.GraphUpload) Py_RETURN_NONE;
    if (gj_cuda_enter(dev) < 0 ||
        gj_cuda_check(gj_cu.GraphUpload((CUgraphExec)(uintptr_t)e, h), "cuGraphUpload") < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* _graph_node_count(device, graph) */
static PyObject *py_graph_node_count(PyObject *self, PyObject *a) {
    int dev;
    unsigned long long g;
    if (!PyArg_ParseTuple(a, "iK:_graph_node_count", &dev, &g)) return NULL;
    size_t n = 0;
    if (!gj_cu.GraphGetNodes) Py_RETURN_NONE;
    if (gj_cuda_enter(dev) < 0 ||
        gj_cuda_check(gj_cu.GraphGetNodes((CUgraph)(uintptr_t)g, NULL, &n), "cuGraphGetNodes") < 0)
        return NULL;
    return PyLong_FromSize_t(n);
}

/* _graph_destroy(device, generation, graph, exec): quietly, from a finalizer;
 * after a reset the context took them along already. */
static PyObject *py_graph_destroy(PyObject *self, PyObject *a) {
    int dev;
    unsigned gen;
    unsigned long long g, e;
    if (!PyArg_ParseTuple(a, "iIKK:_graph_destroy", &dev, &gen, &g, &e)) return NULL;
    if ((!g && !e) || gen != gj_cuda_generation(dev)) Py_RETURN_NONE;
    if (gj_cuda_enter(dev) == 0) {
        if (e) gj_cu.GraphExecDestroy((CUgraphExec)(uintptr_t)e);
        if (g) gj_cu.GraphDestroy((CUgraph)(uintptr_t)g);
    }
    PyErr_Clear();
    Py_RETURN_NONE;
}

/* _graph_update(exec, node, kernel, config, args): the launcher classifies and
 * packs `args` for `config` as for a launch, checks they select the captured
 * specialisation `kernel`, and sets the kernel node's parameters instead of
 * launching (on the cpu target it only checks). */
static PyObject *py_graph_update(PyObject *self, PyObject *a) {
    unsigned long long e, node;
    PyObject *kernel, *config, *args;
    if (!PyArg_ParseTuple(a, "KKOOO!:_graph_update", &e, &node, &kernel, &config, &PyTuple_Type, &args)) return NULL;
    if (capture) {
        capture_error("a graph's kernel node cannot be updated while a capture is open on this thread");
        return NULL;
    }
    GjGraphUpdate u = {.exec = (CUgraphExec)(uintptr_t)e, .node = (CUgraphNode)(uintptr_t)node, .kernel = kernel};
    update = &u;
    PyObject *r = PyObject_Call(config, args, NULL);
    int taken = update == NULL;
    update = NULL;
    if (r && !taken) {
        Py_DECREF(r);
        PyErr_SetString(PyExc_RuntimeError, "internal error: the launcher did not apply the graph update");
        return NULL;
    }
    return r;
}

/* clang-format off */
static PyMethodDef graph_methods[] = {
    {"_graph_begin", py_graph_begin, METH_VARARGS, "_graph_begin(stream, mode, records): open a capture"},
    {"_graph_end", py_graph_end, METH_O, "_graph_end(discard) -> CUgraph handle (0 on the cpu target) or None"},
    {"_graph_capturing", py_graph_capturing, METH_NOARGS, "whether a capture is open on this thread"},
    {"_graph_alive", py_graph_alive, METH_VARARGS, "_graph_alive(device, generation) -> bool"},
    {"_graph_instantiate", py_graph_instantiate, METH_VARARGS, "_graph_instantiate(device, graph) -> (exec, generation)"},
    {"_graph_launch", py_graph_launch, METH_VARARGS, "_graph_launch(device, exec, stream)"},
    {"_graph_upload", py_graph_upload, METH_VARARGS, "_graph_upload(device, exec, stream)"},
    {"_graph_node_count", py_graph_node_count, METH_VARARGS, "_graph_node_count(device, graph) -> int"},
    {"_graph_destroy", py_graph_destroy, METH_VARARGS, "_graph_destroy(device, generation, graph, exec)"},
    {"_graph_update", py_graph_update, METH_VARARGS,
     "_graph_update(exec, node, kernel, config, args): new arguments for a captured launch"},
    {NULL, NULL, 0, NULL},
};
/* clang-format on */

int gj_graph_add(PyObject *m) { return PyModule_AddFunctions(m, graph_methods); }
