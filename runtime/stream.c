/* Streams and events: _core.Stream (a CUstream; handle 0 is the legacy
 * default stream) and _core.Event (a CUevent, for ordering and timing).
 * On the cpu target every launch and copy completes before it returns, so
 * streams are inert and synchronising is a no-op; events record the host's
 * monotonic clock, which makes elapsed_time meaningful there too. */
#include <stdio.h>
#include <time.h>

#include <string.h>

#include "runtime.h"
#include "cuda.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int gj_stream_handle(PyObject *obj, CUstream *out) {
    *out = NULL;
    if (obj == Py_None) return 0;
    if (PyObject_TypeCheck(obj, &GjStream_Type)) {
        *out = ((GjStream *)obj)->handle;
        return 0;
    }
    if (PyLong_Check(obj)) { /* a raw handle, e.g. torch's cuda_stream */
        unsigned long long v = PyLong_AsUnsignedLongLong(obj);
        if (v == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "invalid stream handle %R", obj);
            return -1;
        }
        *out = (CUstream)(uintptr_t)v;
        return 0;
    }
    /* The CUDA stream protocol: __cuda_stream__() -> (version, handle). */
    PyObject *r = PyObject_CallMethod(obj, "__cuda_stream__", NULL);
    if (r && PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2) {
        unsigned long long v = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(r, 1));
        Py_DECREF(r);
        if (!PyErr_Occurred()) {
            *out = (CUstream)(uintptr_t)v;
            return 0;
        }
    } else {
        Py_XDECREF(r);
    }
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "stream must be 0, None, a gpujit Stream or an int handle, not %.100s",
                 Py_TYPE(obj)->tp_name);
    return -1;
}

int gj_stream_sync(int device, CUstream s) {
    if (gj_cuda_enter(device) < 0 || gj_cuda_wait(s, 0) < 0) return -1;
    CUresult r;
    Py_BEGIN_ALLOW_THREADS r = gj_cu.StreamSynchronize(s);
    Py_END_ALLOW_THREADS return gj_cuda_check(r, "cuStreamSynchronize");
}

/* Whether a handle created in an older context generation may still be used. */
static int check_alive(int device, unsigned generation, const char *what) {
    if (generation != gj_cuda_generation(device)) {
        gj_cuda_error("this %s was destroyed by gpujit.reset()", what);
        return -1;
    }
    return 0;
}

/* ---- Stream ---- */

/* Stream(handle=None): None creates a new stream (cuda target); an int wraps
 * an existing handle, which the Stream does not own. */
static PyObject *stream_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"handle", NULL};
    PyObject *handle = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:Stream", kwlist, &handle)) return NULL;
    int t = gj_target();
    if (t < 0) return NULL;
    GjStream *s = (GjStream *)tp->tp_alloc(tp, 0);
    if (!s) return NULL;
    s->device = gj_current_device();
    s->host = t == GJ_TARGET_HOST;
    s->generation = gj_cuda_generation(s->device);
    if (handle != Py_None) {
        if (gj_stream_handle(handle, &s->handle) < 0) {
            Py_DECREF(s);
            return NULL;
        }
    } else if (!s->host) {
        if (gj_cuda_enter(s->device) < 0 ||
            gj_cuda_check(gj_cu.StreamCreate(&s->handle, CU_STREAM_DEFAULT), "cuStreamCreate") < 0) {
            Py_DECREF(s);
            return NULL;
        }
        s->owned = 1;
    }
    return (PyObject *)s;
}

static void stream_dealloc(GjStream *s) {
    if (s->owned && s->handle && s->generation == gj_cuda_generation(s->device)) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        if (gj_cuda_enter(s->device) == 0) gj_cu.StreamDestroy(s->handle); /* pending work still completes */
        PyErr_Clear();
        PyErr_Restore(et, ev, tb);
    }
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyObject *stream_synchronize(GjStream *s, PyObject *unused) {
    if (gj_graph_check_sync((PyObject *)s, s->handle, "Stream.synchronize()") < 0) return NULL;
    if (s->host) Py_RETURN_NONE;
    if (check_alive(s->device, s->generation, "stream") < 0 || gj_stream_sync(s->device, s->handle) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *stream_query(GjStream *s, PyObject *unused) {
    if (s->host) Py_RETURN_TRUE;
    if (check_alive(s->device, s->generation, "stream") < 0 || gj_cuda_enter(s->device) < 0) return NULL;
    CUresult r = gj_cu.StreamQuery(s->handle);
    if (r == CUDA_ERROR_NOT_READY) Py_RETURN_FALSE;
    if (gj_cuda_check(r, "cuStreamQuery") < 0) return NULL;
    Py_RETURN_TRUE;
}

/* `with stream.auto_synchronize():` (numba's) and `with stream:` wait for the
 * stream's work when the block ends. */
static PyObject *stream_enter(GjStream *s, PyObject *unused) { return Py_NewRef((PyObject *)s); }

static PyObject *stream_exit(GjStream *s, PyObject *args) {
    if (PyTuple_GET_SIZE(args) && PyTuple_GET_ITEM(args, 0) != Py_None) {
        /* the block raised: wait all the same, but its exception is the one to report */
        PyObject *r = stream_synchronize(s, NULL);
        if (!r) PyErr_Clear();
        Py_XDECREF(r);
        Py_RETURN_FALSE;
    }
    PyObject *r = stream_synchronize(s, NULL);
    if (!r) return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyObject *stream_cuda_stream(GjStream *s, PyObject *unused) {
    return Py_BuildValue("(iK)", 0, (unsigned long long)(uintptr_t)s->handle);
}

static PyObject *stream_get_handle(GjStream *s, void *c) { return PyLong_FromUnsignedLongLong((uintptr_t)s->handle); }

static PyObject *stream_get_device(GjStream *s, void *c) { return PyLong_FromLong(s->device); }

/* A wrapped handle of another's stream (external_stream, a CAI's): not one this
 * process's gpujit made, nor a default stream (0, 1, 2). */
static PyObject *stream_get_external(GjStream *s, void *c) {
    return PyBool_FromLong(!s->owned && !s->host && (uintptr_t)s->handle > 2);
}

static PyObject *stream_int(GjStream *s) { return stream_get_handle(s, NULL); }

static PyObject *stream_repr(GjStream *s) {
    if (!s->handle) return PyUnicode_FromFormat("<gpujit Stream default%s>", s->host ? " (cpu target)" : "");
    char buf[96]; /* PyUnicode_FromFormat has no %llx */
    snprintf(buf, sizeof buf, "<gpujit Stream 0x%llx on device %d>", (unsigned long long)(uintptr_t)s->handle,
             s->device);
    return PyUnicode_FromString(buf);
}

/* A stream or event is a handle in one process's CUDA context: it means nothing
 * in another process. */
static PyObject *no_pickle(PyObject *self, PyObject *unused) {
    const char *name = strrchr(Py_TYPE(self)->tp_name, '.');
    PyErr_Format(PyExc_TypeError,
                 "cannot pickle a %s: it belongs to this process's CUDA context; create one in the "
                 "receiving process",
                 name ? name + 1 : Py_TYPE(self)->tp_name);
    return NULL;
}

/* clang-format off */
static PyMethodDef stream_methods[] = {
    {"synchronize", (PyCFunction)stream_synchronize, METH_NOARGS,
     "wait until all work queued on the stream has finished"},
    {"query", (PyCFunction)stream_query, METH_NOARGS, "True if all queued work has finished"},
    {"__cuda_stream__", (PyCFunction)stream_cuda_stream, METH_NOARGS,
     "the CUDA stream protocol: (0, handle)"},
    {"auto_synchronize", (PyCFunction)stream_enter, METH_NOARGS,
     "the stream, as a context manager that synchronizes it when the block ends"},
    {"__enter__", (PyCFunction)stream_enter, METH_NOARGS, NULL},
    {"__reduce__", (PyCFunction)no_pickle, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)stream_exit, METH_VARARGS, NULL},
    {NULL},
};
/* clang-format on */

/* clang-format off */
static PyGetSetDef stream_getset[] = {
    {"handle", (getter)stream_get_handle, NULL, "the CUstream as an int (0: legacy default)", NULL},
    {"device", (getter)stream_get_device, NULL, NULL, NULL},
    {"external", (getter)stream_get_external, NULL, "wraps a handle gpujit did not create (not a default stream)",
     NULL},
    {NULL},
};
/* clang-format on */

/* clang-format off */
static PyNumberMethods stream_as_number = {
    .nb_int = (unaryfunc)stream_int,
    .nb_index = (unaryfunc)stream_int,
};
/* clang-format on */

/* clang-format off */
PyTypeObject GjStream_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpujit._core.Stream",
    .tp_basicsize = sizeof(GjStream),
    .tp_dealloc = (destructor)stream_dealloc,
    .tp_repr = (reprfunc)stream_repr,
    .tp_as_number = &stream_as_number,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, /* gpujit.cudadrv.Stream */
    .tp_doc = "Stream(handle=None)\n--\n\nA CUDA stream: handle None creates one, an int (a CUstream) wraps it.",
    .tp_methods = stream_methods,
    .tp_getset = stream_getset,
    .tp_new = stream_new,
};
/* clang-format on */

/* ---- Event ---- */

static PyObject *event_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"timing", NULL};
    int timing = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|p:Event", kwlist, &timing)) return NULL;
    int t = gj_target();
    if (t < 0) return NULL;
    GjEvent *e = (GjEvent *)tp->tp_alloc(tp, 0);
    if (!e) return NULL;
    e->device = gj_current_device();
    e->timing = timing;
    e->host = t == GJ_TARGET_HOST;
    e->host_time_ms = -1;
    e->generation = gj_cuda_generation(e->device);
    if (!e->host &&
        (gj_cuda_enter(e->device) < 0 ||
         gj_cuda_check(gj_cu.EventCreate(&e->handle, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING),
                       "cuEventCreate") < 0)) {
        Py_DECREF(e);
        return NULL;
    }
    return (PyObject *)e;
}

static void event_dealloc(GjEvent *e) {
    if (e->handle && e->generation == gj_cuda_generation(e->device)) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        if (gj_cuda_enter(e->device) == 0) gj_cu.EventDestroy(e->handle);
        PyErr_Clear();
        PyErr_Restore(et, ev, tb);
    }
    Py_TYPE(e)->tp_free((PyObject *)e);
}

static int event_ready(GjEvent *e) {
    if (e->host) return 0;
    if (check_alive(e->device, e->generation, "event") < 0 || gj_cuda_enter(e->device) < 0) return -1;
    return 0;
}

static PyObject *event_record(GjEvent *e, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"stream", NULL};
    PyObject *stream = Py_None;
    CUstream h;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:record", kwlist, &stream) || gj_stream_handle(stream, &h) < 0 ||
        event_ready(e) < 0)
        return NULL;
    if (e->host) {
        e->host_time_ms = now_ms();
        Py_RETURN_NONE;
    }
    if (gj_cuda_check(gj_cu.EventRecord(e->handle, h), "cuEventRecord") < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *event_synchronize(GjEvent *e, PyObject *unused) {
    if (event_ready(e) < 0) return NULL;
    if (e->host) Py_RETURN_NONE;
    if (gj_cuda_wait(e->handle, 1) < 0) return NULL;
    CUresult r;
    Py_BEGIN_ALLOW_THREADS r = gj_cu.EventSynchronize(e->handle);
    Py_END_ALLOW_THREADS if (gj_cuda_check(r, "cuEventSynchronize") < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *event_query(GjEvent *e, PyObject *unused) {
    if (event_ready(e) < 0) return NULL;
    if (e->host) Py_RETURN_TRUE;
    CUresult r = gj_cu.EventQuery(e->handle);
    if (r == CUDA_ERROR_NOT_READY) Py_RETURN_FALSE;
    if (gj_cuda_check(r, "cuEventQuery") < 0) return NULL;
    Py_RETURN_TRUE;
}

/* wait(stream=0): later work on `stream` waits for this event. */
static PyObject *event_wait(GjEvent *e, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"stream", NULL};
    PyObject *stream = Py_None;
    CUstream h;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:wait", kwlist, &stream) || gj_stream_handle(stream, &h) < 0 ||
        event_ready(e) < 0)
        return NULL;
    if (!e->host && gj_cuda_check(gj_cu.StreamWaitEvent(h, e->handle, 0), "cuStreamWaitEvent") < 0) return NULL;
    Py_RETURN_NONE;
}

/* start.elapsed_time(end) -> milliseconds from this event to `end` (numba's order). */
static PyObject *event_elapsed_time(GjEvent *e, PyObject *other) {
    if (!PyObject_TypeCheck(other, &GjEvent_Type)) {
        PyErr_SetString(PyExc_TypeError, "elapsed_time() takes an Event");
        return NULL;
    }
    GjEvent *end = (GjEvent *)other;
    if (!e->timing || !end->timing) {
        PyErr_SetString(PyExc_ValueError, "elapsed_time needs events created with timing=True");
        return NULL;
    }
    if (e->host != end->host) {
        PyErr_SetString(PyExc_ValueError, "events from different targets");
        return NULL;
    }
    if (e->host) {
        if (e->host_time_ms < 0 || end->host_time_ms < 0) {
            PyErr_SetString(PyExc_ValueError, "elapsed_time on an event that was never recorded");
            return NULL;
        }
        return PyFloat_FromDouble(end->host_time_ms - e->host_time_ms);
    }
    float ms = 0;
    if (event_ready(e) < 0 || event_ready(end) < 0 ||
        gj_cuda_check(gj_cu.EventElapsedTime(&ms, e->handle, end->handle), "cuEventElapsedTime") < 0)
        return NULL;
    return PyFloat_FromDouble(ms);
}

static PyObject *event_get_handle(GjEvent *e, void *c) { return PyLong_FromUnsignedLongLong((uintptr_t)e->handle); }

/* clang-format off */
static PyMethodDef event_methods[] = {
    {"record", (PyCFunction)(void (*)(void))event_record, METH_VARARGS | METH_KEYWORDS,
     "record(stream=0): capture the work queued on the stream so far"},
    {"synchronize", (PyCFunction)event_synchronize, METH_NOARGS,
     "wait until the captured work has finished"},
    {"query", (PyCFunction)event_query, METH_NOARGS, "True if the captured work has finished"},
    {"wait", (PyCFunction)(void (*)(void))event_wait, METH_VARARGS | METH_KEYWORDS,
     "wait(stream=0): make later work on the stream wait for this event"},
    {"__reduce__", (PyCFunction)no_pickle, METH_NOARGS, NULL},
    {"elapsed_time", (PyCFunction)event_elapsed_time, METH_O,
     "start.elapsed_time(end) -> float milliseconds"},
    {NULL},
};
/* clang-format on */

/* clang-format off */
static PyGetSetDef event_getset[] = {
    {"handle", (getter)event_get_handle, NULL, "the CUevent as an int", NULL},
    {NULL},
};
/* clang-format on */

/* clang-format off */
PyTypeObject GjEvent_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpujit._core.Event",
    .tp_basicsize = sizeof(GjEvent),
    .tp_dealloc = (destructor)event_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Event(timing=True)\n--\n\nA CUDA event; timing=False makes one that cannot time (cheaper to record).",
    .tp_methods = event_methods,
    .tp_getset = event_getset,
    .tp_new = event_new,
};
/* clang-format on */

int gj_stream_add(PyObject *m) {
    if (PyType_Ready(&GjStream_Type) < 0 || PyType_Ready(&GjEvent_Type) < 0 ||
        PyModule_AddObjectRef(m, "Stream", (PyObject *)&GjStream_Type) < 0 ||
        PyModule_AddObjectRef(m, "Event", (PyObject *)&GjEvent_Type) < 0)
        return -1;
    return 0;
}
