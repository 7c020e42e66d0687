/* The caching launcher: `kernel[griddim, blockdim, stream, smem](args)`.
 *
 * _core.DispatcherBase is the C base of the Python dispatcher. Subscripting it
 * makes a _core.LaunchConfig; calling that classifies each argument into a
 * descriptor and a few bytes of cache key (runtime/args.c), finds the
 * CompiledKernel for the key (on a miss the subclass's _specialize(args)
 * compiles one, which is then checked against the arguments once and cached),
 * packs kernelParams by the kernel's parameter layout, and launches with
 * cuLaunchKernel or, on the cpu target, gj_cpu_launch. A cache hit with device
 * arrays makes no Python call and no attribute lookup.
 *
 * NumPy arguments on the cuda target are copied to the device before the launch
 * and back after it (synchronising the stream), as numba does.
 *
 * numba's performance warnings are given here too: a grid of few blocks when it
 * is subscripted, a host array copied when it is launched. */
#include <stdlib.h>
#include <string.h>

#include "args.h"

PyObject *GjExc_LaunchError;
PyObject *GjExc_RaceError;

#define MAX_STACK_ARGS 16
#define MAX_STACK_PARAMS 128
#define KEY_HEADER 4

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
    PyObject_HEAD CacheEntry *table;
    size_t capacity, count;  /* capacity: 0 or a power of two */
    PyObject *dict;
    PyObject *weaklist;
    PyObject *extensions; /* numba's launch extensions (prepare_args hooks): a list, or NULL */
} GjDispatcher;

/* gpujit.args.ArgHint (In, Out, InOut), once that module is imported: an
 * argument of it makes the launch go through the dispatcher's _prepare_args. */
static PyObject *arg_hint_type;

static uint64_t hash_key(const uint8_t *k, size_t n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ k[i]) * 1099511628211ull;
    return h;
}

static CacheEntry *cache_find(GjDispatcher *d, const uint8_t *key, size_t n, uint64_t h) {
    if (!d->capacity) return NULL;
    size_t mask = d->capacity - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        CacheEntry *e = &d->table[i];
        if (!e->key) return NULL;
        if (e->hash == h && e->keylen == n && !memcmp(e->key, key, n)) return e;
    }
}

static CacheEntry *slot_for(CacheEntry *table, size_t cap, uint64_t h) {
    size_t mask = cap - 1, i = h & mask;
    while (table[i].key) i = (i + 1) & mask;
    return &table[i];
}

static CacheEntry *cache_insert(GjDispatcher *d, const uint8_t *key, size_t n, uint64_t h, PyObject *kernel,
                                GjOutput *out) {
    if ((d->count + 1) * 2 > d->capacity) {
        size_t nc = d->capacity ? d->capacity * 2 : 8;
        CacheEntry *nt = calloc(nc, sizeof *nt);
        if (!nt) {
            PyErr_NoMemory();
            return NULL;
        }
        for (size_t i = 0; i < d->capacity; i++)
            if (d->table[i].key) *slot_for(nt, nc, d->table[i].hash) = d->table[i];
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

static void cache_clear(GjDispatcher *d) {
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


/* ---- LaunchConfig ---- */

typedef struct GjLaunchConfig {
    PyObject_HEAD GjDispatcher *disp;
    GjDim3 grid, block;
    CUstream stream;
    PyObject *stream_obj;  /* what was given, for .stream; NULL for the default */
    size_t dyn_smem;
    PyObject *callbacks;   /* pre_launch_callbacks: a list made on first access, or NULL */
    int quiet;             /* made by _quiet_config: gives no performance warning */
} GjLaunchConfig;

static PyTypeObject GjLaunchConfig_Type;

/* ---- performance warnings (numba's NumbaPerformanceWarning) ---- */

/* gpujit.config's CUDA_LOW_OCCUPANCY_WARNINGS and CUDA_WARN_ON_IMPLICIT_COPY, each
 * already off under DISABLE_PERFORMANCE_WARNINGS. The config module pushes them
 * (_set_performance_warnings) when it is imported and whenever one of its settings
 * is assigned, so that a launch reads a static instead of calling into Python.
 * The CPU target warns of low occupancy only where the setting was given (in the
 * environment or assigned), not by default: like numba's simulator it is quiet,
 * and its many small test launches would each pay for a warning.
 * -1: not known yet; the first launch configuration imports the config module. */
enum { WARN_OCCUPANCY = 1, WARN_OCCUPANCY_CPU = 2, WARN_IMPLICIT_COPY = 4 };
static int perf_warnings = -1;

/* GPUJIT_PROFILE (gpujit/_profiler.py): called as hook(dispatcher, kernel, stream handle) before
 * each launch, it returns what is called after it; NULL: not profiling (no cost but a test). */
static PyObject *profile_hook;

/* The fewest blocks a grid may have without the low-occupancy warning: numba's
 * fixed 128 (it aims at about two blocks per multiprocessor without asking the
 * device, whose count varies from a few to 132). */
#define MIN_GRID_BLOCKS 128

static PyObject *perf_warning_class; /* gpujit.errors.NumbaPerformanceWarning, once warned */
static PyObject *package_prefix;     /* gpujit's package folder and a separator, once warned */

static int load_perf_warnings(void) {
    PyObject *m = PyImport_ImportModule("gpujit.config");
    if (!m) return -1;
    if (perf_warnings < 0) { /* imported before this extension was: ask it again */
        PyObject *r = PyObject_CallMethod(m, "_publish", NULL);
        Py_XDECREF(r);
        if (!r) {
            Py_DECREF(m);
            return -1;
        }
    }
    Py_DECREF(m);
    if (perf_warnings < 0) {
        PyErr_SetString(PyExc_RuntimeError, "gpujit.config did not set the performance warnings");
        return -1;
    }
    return 0;
}

/* How far up the stack the user's line is: the innermost frame whose code is
 * not gpujit's own, so that a ufunc, forall or Reduce launched from inside the
 * package warns at the line that called it. */
static int user_stack_level(void) {
    if (!package_prefix) {
        PyObject *m = PyImport_ImportModule("gpujit");
        PyObject *file = m ? PyObject_GetAttrString(m, "__file__") : NULL;
        PyObject *os = file ? PyImport_ImportModule("os.path") : NULL;
        PyObject *dir = os ? PyObject_CallMethod(os, "dirname", "O", file) : NULL;
        PyObject *sep = os ? PyObject_GetAttrString(os, "sep") : NULL;
        if (dir && sep) package_prefix = PyUnicode_Concat(dir, sep);
        Py_XDECREF(sep);
        Py_XDECREF(dir);
        Py_XDECREF(os);
        Py_XDECREF(file);
        Py_XDECREF(m);
        if (!package_prefix) return -1;
    }
    int level = 1;
    PyFrameObject *f = PyEval_GetFrame();
    Py_XINCREF(f);
    while (f) {
        PyCodeObject *code = PyFrame_GetCode(f);
        PyObject *name = PyObject_GetAttrString((PyObject *)code, "co_filename");
        Py_DECREF(code);
        int inside = 0;
        if (name && PyUnicode_Check(name))
            inside = (int)PyUnicode_Tailmatch(name, package_prefix, 0, PY_SSIZE_T_MAX, -1);
        Py_XDECREF(name);
        if (inside < 0) {
            Py_DECREF(f);
            return -1;
        }
        if (!inside) break;
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
        level++;
    }
    Py_XDECREF(f);
    PyErr_Clear(); /* a code object without a file name is the user's */
    return level;
}

/* Warns NumbaPerformanceWarning at the user's line; -1 where the warning is
 * an error (a warnings filter) or could not be given. */
static int perf_warn(const char *msg) {
    if (!perf_warning_class) {
        PyObject *m = PyImport_ImportModule("gpujit.errors");
        perf_warning_class = m ? PyObject_GetAttrString(m, "NumbaPerformanceWarning") : NULL;
        Py_XDECREF(m);
        if (!perf_warning_class) return -1;
    }
    int level = user_stack_level();
    return level < 0 ? -1 : PyErr_WarnEx(perf_warning_class, msg, level);
}

/* numba's low-occupancy warning, when the configuration is made. */
static int warn_occupancy(const GjLaunchConfig *c) {
    if (!(perf_warnings & (WARN_OCCUPANCY | WARN_OCCUPANCY_CPU)) || c->quiet) return 0;
    uint64_t blocks;
    if (__builtin_mul_overflow((uint64_t)c->grid.x * c->grid.y, (uint64_t)c->grid.z, &blocks) ||
        blocks >= MIN_GRID_BLOCKS)
        return 0;
    int t = gj_target();
    if (t < 0) return -1;
    if (!(perf_warnings & (t == GJ_TARGET_NVPTX ? WARN_OCCUPANCY : WARN_OCCUPANCY_CPU))) return 0;
    char msg[128];
    snprintf(msg, sizeof msg, "Grid size %llu will likely result in GPU under-utilization due to low occupancy.",
             (unsigned long long)blocks);
    return perf_warn(msg);
}

static int warn_implicit_copy(void) {
    return perf_warn("Host array used in CUDA kernel will incur copy overhead to/from device.");
}

/* numba's implicit-copy warning, before a cuda launch stages host arrays. Mapped
 * and managed arrays (host memory that also exports __cuda_array_interface__)
 * do not warn: numba passes them without a copy, and the user chose memory the
 * device reaches (gpujit copies them, from pinned memory). */
static int warn_host_arguments(PyObject *args, const ArgDesc *d, int ndesc) {
    for (int i = 0; i < ndesc; i++) {
        if (d[i].kind != A_HOST) continue;
        PyObject *o = PyTuple_GET_ITEM(args, d[i].pos - 1);
        if (!PyTuple_Check(o) && PyObject_HasAttrString(o, "__cuda_array_interface__")) continue;
        return warn_implicit_copy();
    }
    return 0;
}

/* numba's wording: the dimensions are shown as the list they were read as */
static void dim_error(PyObject *exc, const char *what, const char *need, PyObject *o) {
    PyObject *l = PyTuple_Check(o) || PyList_Check(o) ? PySequence_List(o) : Py_BuildValue("[O]", o);
    if (l) PyErr_Format(exc, "%s must be a sequence of %s, got %R", what, need, l);
    Py_XDECREF(l);
}

static int parse_dim(PyObject *o, const char *what, GjDim3 *out) {
    uint64_t v[3] = {1, 1, 1};
    if (PyTuple_Check(o) || PyList_Check(o)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
        if (n < 1 || n > 3) {
            dim_error(PyExc_ValueError, what, "1, 2 or 3 integers", o);
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *x = PySequence_Fast_GET_ITEM(o, i);
            long long y = PyLong_Check(x) ? PyLong_AsLongLong(x) : -1;
            if (!PyLong_Check(x) && !PyErr_Occurred()) {
                PyObject *ix = PyNumber_Index(x);
                if (!ix) {
                    PyErr_Clear();
                    dim_error(PyExc_TypeError, what, "integers", o);
                    return -1;
                }
                y = PyLong_AsLongLong(ix);
                Py_DECREF(ix);
            }
            if (y == -1 && PyErr_Occurred()) return -1;
            if (y <= 0 || y > 0xffffffffLL) {
                PyErr_Format(PyExc_ValueError, "%s must be between 1 and 2**32 - 1 in each dimension, got %R", what, o);
                return -1;
            }
            v[i] = (uint64_t)y;
        }
    } else {
        PyObject *ix = PyNumber_Index(o);
        if (!ix) {
            PyErr_Clear();
            dim_error(PyExc_TypeError, what, "integers", o);
            return -1;
        }
        long long y = PyLong_AsLongLong(ix);
        Py_DECREF(ix);
        if (y == -1 && PyErr_Occurred()) return -1;
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
static PyObject *make_config(GjDispatcher *d, PyObject *key, int quiet) {
    if (perf_warnings < 0 && load_perf_warnings() < 0) return NULL;
    Py_ssize_t n = PyTuple_Check(key) ? PyTuple_GET_SIZE(key) : 0;
    if (n < 2 || n > 4) {
        PyErr_SetString(PyExc_ValueError,
                        "launch configuration must be kernel[griddim, blockdim], "
                        "kernel[griddim, blockdim, stream] or "
                        "kernel[griddim, blockdim, stream, dynamic_shared_bytes]");
        return NULL;
    }
    GjLaunchConfig *c = PyObject_New(GjLaunchConfig, &GjLaunchConfig_Type);
    if (!c) return NULL;
    c->disp = (GjDispatcher *)Py_NewRef(d);
    c->stream = NULL;
    c->stream_obj = NULL;
    c->dyn_smem = 0;
    c->callbacks = NULL;
    c->quiet = quiet;
    if (parse_dim(PyTuple_GET_ITEM(key, 0), "griddim", &c->grid) < 0 ||
        parse_dim(PyTuple_GET_ITEM(key, 1), "blockdim", &c->block) < 0)
        goto fail;
    if (n >= 3) {
        PyObject *s = PyTuple_GET_ITEM(key, 2);
        if (gj_stream_handle(s, &c->stream) < 0) goto fail;
        if (s != Py_None) c->stream_obj = Py_NewRef(s); /* keeps a Stream alive while the config lives */
    }
    if (n == 4) {
        Py_ssize_t sm = PyNumber_AsSsize_t(PyTuple_GET_ITEM(key, 3), PyExc_OverflowError);
        if (sm == -1 && PyErr_Occurred()) goto fail;
        if (sm < 0) {
            PyErr_Format(PyExc_ValueError, "dynamic shared memory must be >= 0, got %zd", sm);
            goto fail;
        }
        c->dyn_smem = (size_t)sm;
    }
    if (warn_occupancy(c) < 0) goto fail;
    return (PyObject *)c;
fail:
    Py_DECREF(c);
    return NULL;
}

static PyObject *disp_subscript(GjDispatcher *d, PyObject *key) { return make_config(d, key, 0); }

static void config_dealloc(GjLaunchConfig *c) {
    Py_XDECREF(c->disp);
    Py_XDECREF(c->stream_obj);
    Py_XDECREF(c->callbacks);
    PyObject_Free(c);
}

/* The CPU target mimics an H200's limits so that a launch valid on one target
 * is valid on the other. */
/* clang-format off */
static const GjDeviceLimits host_limits = {
    .max_threads = 1024, .max_block = {1024, 1024, 64},
    .max_grid = {2147483647, 65535, 65535},
};
/* clang-format on */

static int check_dims(const GjLaunchConfig *c, const GjDeviceLimits *l, const char *where) {
    uint64_t threads = (uint64_t)c->block.x * c->block.y * c->block.z;
    const uint32_t b[3] = {c->block.x, c->block.y, c->block.z};
    const uint32_t g[3] = {c->grid.x, c->grid.y, c->grid.z};
    if (threads > (uint64_t)l->max_threads) {
        PyErr_Format(PyExc_ValueError, "blockdim (%u, %u, %u) has %llu threads; the %s allows at most %d per block",
                     b[0], b[1], b[2], (unsigned long long)threads, where, l->max_threads);
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        if (b[i] > (uint32_t)l->max_block[i]) {
            PyErr_Format(PyExc_ValueError,
                         "blockdim (%u, %u, %u): dimension %c exceeds the %s's "
                         "limit of %d",
                         b[0], b[1], b[2], "xyz"[i], where, l -> max_block[i]);
            return -1;
        }
        if (g[i] > (uint32_t)l->max_grid[i]) {
            PyErr_Format(PyExc_ValueError,
                         "griddim (%u, %u, %u): dimension %c exceeds the %s's "
                         "limit of %d",
                         g[0], g[1], g[2], "xyz"[i], where, l -> max_grid[i]);
            return -1;
        }
    }
    return 0;
}

/* The launch whose kernel this thread is compiling (borrowed, set only around
 * _specialize): what gpujit.launchconfig shows a compiler hook that needs the
 * launch's configuration. */
static _Thread_local PyObject *compiling_config, *compiling_args;

/* Finds the kernel for the arguments' key: a hit is pure C; a miss calls
 * _specialize, checks the result against the arguments and caches it. */
static CacheEntry *lookup(GjDispatcher *disp, PyObject *config, PyObject *args, const ArgDesc *d, int nargs,
                          int ndesc, GjTargetKind target, int dev) {
    uint8_t kbuf[KEY_HEADER + GJ_ARG_KEY_BYTES * MAX_STACK_ARGS], *key = kbuf;
    size_t klen = KEY_HEADER + GJ_ARG_KEY_BYTES * (size_t)ndesc;
    if (ndesc > MAX_STACK_ARGS && !(key = malloc(klen))) {
        PyErr_NoMemory();
        return NULL;
    }
    key[0] = (uint8_t)target;
    key[1] = (uint8_t)(target == GJ_TARGET_NVPTX ? dev : 0);
    key[2] = (uint8_t)(nargs & 0xff);
    key[3] = (uint8_t)(nargs >> 8);
    for (int i = 0; i < ndesc; i++) gj_args_key(key + KEY_HEADER + GJ_ARG_KEY_BYTES * i, &d[i]);
    uint64_t h = hash_key(key, klen);
    CacheEntry *e = cache_find(disp, key, klen, h);
    if (!e) {
        PyObject *outer_config = compiling_config, *outer_args = compiling_args;
        compiling_config = config;
        compiling_args = args;
        PyObject *k = PyObject_CallMethod((PyObject *)disp, "_specialize", "(O)", args);
        compiling_config = outer_config;
        compiling_args = outer_args;
        GjOutput *o = k ? gj_compiled_output(k) : NULL;
        if (k && !o)
            PyErr_Format(PyExc_TypeError, "_specialize must return a CompiledKernel, not %.100s", Py_TYPE(k)->tp_name);
        else if (o && gj_output_target(o) != target)
            PyErr_Format(PyExc_TypeError,
                         "_specialize returned a kernel compiled for the %s target; this launch "
                         "is on %s",
                         gj_target_name(gj_output_target(o)),
                         gj_target_name(target));
        else if (o && gj_args_check((PyObject *)disp, o, d, nargs) == 0)
            e = cache_insert(disp, key, klen, h, k, o);
        Py_XDECREF(k);
    }
    if (key != kbuf) free(key);
    return e;
}

/* ---- debug=True kernels: the error buffer ---- */

/* A debug kernel's last parameter points at 8 int64 (gpujit.h): zero before
 * the launch; after it, [0] != 0 means some thread indexed out of bounds.
 * One buffer per device (launches hold the GIL), one per thread on the CPU. */
static CUdeviceptr debug_dev_buf[GJ_MAX_DEVICES];
static _Thread_local int64_t debug_host_buf[8];

/* rec[0] == GJ_ERR_RAISE: a raise statement or a check of the compiler's raised the
 * exception of raise site rec[2] in thread rec[3] of block rec[4] (packed): the
 * same class on the host. The compiler's own checks say in the message where they
 * failed; the code's own exceptions get numba's prefix on their first argument,
 * "In function 'f', file F, line N, tid=[x, y, z] ctaid=[x, y, z]: " (or that
 * alone as the argument, where there was none). */
static int raise_site_exception(GjLaunchConfig *c, GjOutput *o, const int64_t *rec) {
    PyObject *site = gj_output_raise(o, (int)rec[2]);
    if (!site) {
        PyErr_Format(PyExc_RuntimeError, "a kernel raised from an unknown raise site %lld", (long long)rec[2]);
        return -1;
    }
    PyObject *cls = PyTuple_GET_ITEM(site, 0), *args = PyTuple_GET_ITEM(site, 1);
    int builtin = PyObject_IsTrue(PyTuple_GET_ITEM(site, 2));
    PyObject *name = gj_kernel_name((PyObject *)c->disp, o);
    if (!name) return -1;
    uint64_t t = (uint64_t)rec[3], b = (uint64_t)rec[4];
    int tid[3] = {(int)(t & 1023), (int)(t >> 10 & 1023), (int)(t >> 20 & 63)};
    int ctaid[3] = {(int)(b & 0x7fffffff), (int)(b >> 31 & 0xffff), (int)(b >> 47 & 0xffff)};
    const char *file = gj_output_file(o, (int)rec[5]);
    PyObject *exc = NULL;
    if (builtin) {
        PyObject *msg = PyUnicode_FromFormat("%S (kernel '%U', %s:%lld, tid=[%d, %d, %d] ctaid=[%d, %d, %d])",
                                             PyTuple_GET_ITEM(args, 0), name, file, (long long)rec[1], tid[0],
                                             tid[1], tid[2], ctaid[0], ctaid[1], ctaid[2]);
        if (msg) exc = PyObject_CallOneArg(cls, msg);
        Py_XDECREF(msg);
    } else {
        PyObject *fn = PyTuple_GET_SIZE(site) > 3 ? PyTuple_GET_ITEM(site, 3) : name; /* older cache entries: 3 */
        PyObject *prefix = PyUnicode_FromFormat("In function %R, file %s, line %lld, tid=[%d, %d, %d] ctaid=[%d, %d, %d]",
                                                fn, file, (long long)rec[1], tid[0], tid[1], tid[2], ctaid[0],
                                                ctaid[1], ctaid[2]);
        Py_ssize_t n = PyTuple_GET_SIZE(args);
        PyObject *full = prefix ? PyTuple_New(n ? n : 1) : NULL;
        PyObject *first = !full ? NULL
                : n         ? PyUnicode_FromFormat("%U: %S", prefix, PyTuple_GET_ITEM(args, 0))
                            : Py_NewRef(prefix);
        if (first) {
            PyTuple_SET_ITEM(full, 0, first);
            for (Py_ssize_t i = 1; i < n; i++) PyTuple_SET_ITEM(full, i, Py_NewRef(PyTuple_GET_ITEM(args, i)));
            exc = PyObject_Call(cls, full, NULL);
        }
        Py_XDECREF(full);
        Py_XDECREF(prefix);
    }
    Py_DECREF(name);
    if (!exc) return -1;
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return -1;
}

/* rec[0] == GJ_ERR_SHAPE: NumPy's and numba's messages where one axis tells it all */
static void shape_error(const int64_t *rec, PyObject *name, const char *file) {
    int what = (int)(rec[2] & 0xff), axis = (int)(rec[2] >> 8 & 0xff), ndim = (int)(rec[2] >> 16 & 0xff);
    long long want = (long long)rec[3], got = (long long)rec[4], line = (long long)rec[1];
    if (what == GJ_SHAPE_UFUNC)
        PyErr_Format(PyExc_ValueError,
                     "operands could not be broadcast together: input %d has length %lld where the output's "
                     "axis %d has %lld (kernel '%U', %s:%lld)",
                     (int)(rec[2] >> 24 & 0xff), got, axis, want, name, file, line);
    else if (ndim == 1)
        PyErr_Format(PyExc_ValueError,
                     "cannot assign slice of shape (%lld,) from input of shape (%lld,) (kernel '%U', %s:%lld)", want,
                     got, name, file, line);
    else
        PyErr_Format(PyExc_ValueError,
                     "cannot assign slice from input of another shape: axis %d of the slice has length %lld, the "
                     "input's %lld (kernel '%U', %s:%lld)",
                     axis, want, got, name, file, line);
}

static int debug_raise(GjLaunchConfig *c, GjOutput *o, const int64_t *rec) {
    if (rec[0] == GJ_ERR_RAISE) return raise_site_exception(c, o, rec);
    PyObject *name = gj_kernel_name((PyObject *)c->disp, o);
    const char *file = gj_output_file(o, (int)rec[5]);
    if (rec[0] == GJ_ERR_STEP0)
        PyErr_Format(PyExc_ValueError, "%s (kernel '%U', %s:%lld)",
                     rec[2] == GJ_STEP0_RANGE ? "range() arg 3 must not be zero" : "slice step cannot be zero", name,
                     file, (long long)rec[1]);
    else if (rec[0] == GJ_ERR_SHAPE)
        shape_error(rec, name, file);
    else
        PyErr_Format(PyExc_IndexError,
                     "index %lld is out of bounds for axis %lld with size %lld (kernel '%U', %s:%lld)",
                     (long long)rec[3], (long long)rec[2], (long long)rec[4], name, gj_output_file(o, (int)rec[5]),
                     (long long)rec[1]);
    Py_XDECREF(name);
    return -1;
}

/* A block of more threads than the kernel can run: max is its launch_bounds on the CPU
 * target, the driver's limit for the function on a GPU (the launch_bounds too, or the
 * registers it uses). A ValueError on both targets, before anything is launched. */
static int check_kernel_threads(GjLaunchConfig *c, GjOutput *o, int max) {
    uint64_t threads = (uint64_t)c->block.x * c->block.y * c->block.z;
    if (max <= 0 || threads <= (uint64_t)max) return 0;
    size_t shared, local, constant;
    int bound;
    gj_output_static_sizes(o, &shared, &local, &constant, &bound);
    PyObject *name = gj_kernel_name((PyObject *)c->disp, o);
    PyErr_Format(PyExc_ValueError, "blockdim has %llu threads; kernel '%U' can run at most %d per block (%s)",
                 (unsigned long long)threads, name, max,
                 bound > 0 && bound <= max ? "its launch_bounds" : "it uses many registers");
    Py_XDECREF(name);
    return -1;
}

/* Loads the kernel's module on first use. Inside a graph capture the load
 * (which may allocate) runs in relaxed capture mode: it is no part of the graph. */
static int load_function(CacheEntry *e, int dev) {
    int relax = gj_graph_capturing() && gj_cu.ThreadExchangeStreamCaptureMode;
    int mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    if (relax && gj_cuda_check(gj_cu.ThreadExchangeStreamCaptureMode(&mode), "cuThreadExchangeStreamCaptureMode") < 0)
        return -1;
    int rc = gj_module_function(e->kernel, dev, &e->fn, &e->fn_max_threads);
    if (relax) gj_cu.ThreadExchangeStreamCaptureMode(&mode); /* back to the capture's mode */
    return rc;
}

/* With `upd`, the launch is not made: its parameters go to a graph's kernel node. */
static int launch_cuda(GjLaunchConfig *c, CacheEntry *e, ArgDesc *d, int ndesc, int dev, const GjDeviceLimits *l,
                       void **kp, uint64_t *slots, const GjGraphUpdate *upd) {
    if (gj_cuda_enter(dev) < 0) return -1;
    unsigned gen = gj_cuda_generation(dev);
    if (!e->fn_valid || e->generation != gen) {
        if (load_function(e, dev) < 0) return -1;
        e->generation = gen;
        e->fn_dyn_smem = 0;
        e->fn_valid = 1;
    }
    if (check_kernel_threads(c, e->out, e->fn_max_threads) < 0) return -1;
    size_t stat = gj_output_shared_bytes(e->out);
    if (c->dyn_smem) {
        if (stat + c->dyn_smem > (size_t)l->max_shared_optin) {
            PyErr_Format(PyExc_ValueError,
                         "%zu bytes of dynamic + %zu of static shared memory exceed the device's "
                         "%d bytes per block",
                         c->dyn_smem, stat, l->max_shared_optin);
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
    int staged;
    if (gj_args_stage_in(d, ndesc, dev, &staged) < 0) return -1;
    int debug = gj_output_debug(e->out);
    if (debug) {
        static const int64_t zero[8];
        if (!debug_dev_buf[dev] && gj_device_malloc(dev, sizeof zero, &debug_dev_buf[dev]) < 0) return -1;
        if (gj_cuda_check(gj_cu.MemcpyHtoD(debug_dev_buf[dev], zero, sizeof zero), "cuMemcpyHtoD") < 0) return -1;
    }
    gj_args_pack(e->out, d, debug ? (uint64_t)debug_dev_buf[dev] : 0, slots, kp);
    if (upd) return gj_graph_set_params(upd, e->fn, c->grid, c->block, (unsigned)c->dyn_smem, kp);
    CUresult r;
    int coop = gj_output_cooperative(e->out);
    if (coop) {
        /* the grid barrier counts arrivals from zero (target_nvptx.c, grid_sync):
         * zeroed on the launch's stream, so in order with earlier launches */
        CUmodule mod;
        CUdeviceptr ctr = 0;
        size_t ctr_size = 0;
        r = gj_cu.FuncGetModule(&mod, e->fn);
        if (r == CUDA_SUCCESS) {
            r = gj_cu.ModuleGetGlobal(&ctr, &ctr_size, mod, GJ_GRID_SYNC_SYMBOL);
            if (r == CUDA_ERROR_NOT_FOUND) r = CUDA_SUCCESS, ctr = 0; /* this_grid() without sync() */
        }
        if (r == CUDA_SUCCESS && ctr) r = gj_cu.MemsetD32Async(ctr, 0, ctr_size / 4, c->stream);
        if (r == CUDA_SUCCESS)
            r = gj_cu.LaunchCooperativeKernel(e->fn, c->grid.x, c->grid.y, c->grid.z, c->block.x, c->block.y,
                                              c->block.z, (unsigned)c->dyn_smem, c->stream, kp);
    } else {
        r = gj_cu.LaunchKernel(e->fn, c->grid.x, c->grid.y, c->grid.z, c->block.x, c->block.y, c->block.z,
                               (unsigned)c->dyn_smem, c->stream, kp, NULL);
    }
    if (r != CUDA_SUCCESS) {
        char what[256];
        PyObject *name = gj_kernel_name((PyObject *)c->disp, e->out);
        snprintf(what, sizeof what, "%s(%s)", coop ? "cuLaunchCooperativeKernel" : "cuLaunchKernel",
                 name ? PyUnicode_AsUTF8(name) : "?");
        Py_XDECREF(name);
        PyErr_Clear();
        return gj_cuda_check(r, what);
    }
    if (staged || debug) {
        if (gj_stream_sync(dev, c->stream) < 0 || gj_args_stage_out(d, ndesc, dev) < 0) return -1;
    }
    if (debug) {
        int64_t rec[8];
        if (gj_cuda_check(gj_cu.MemcpyDtoH(rec, debug_dev_buf[dev], sizeof rec), "cuMemcpyDtoH") < 0) return -1;
        if (rec[0]) return debug_raise(c, e->out, rec);
    }
    return 0;
}

/* run = 0: only the checks (a launch recorded into a graph, or its update). */
/* One group of the barrier rule's report in words: "threads (0, 0, 0) to ... (30 of them) wait
 * at the barrier at k.py:7", "... returned". */
static void barrier_group(const GjOutput *o, const GjBarrierGroup *g, char *buf, size_t n) {
    char who[96] = "some threads";
    if (g->tid[0] >= 0 && g->count == 1)
        snprintf(who, sizeof who, "thread (%d, %d, %d)", g->tid[0], g->tid[1], g->tid[2]);
    else if (g->tid[0] >= 0)
        snprintf(who, sizeof who, "%u threads, the first (%d, %d, %d),", g->count, g->tid[0], g->tid[1], g->tid[2]);
    const char *where = g->site >= 0 ? gj_output_barrier(o, g->site) : NULL;
    if (g->site == GJ_SITE_RETURNED)
        snprintf(buf, n, "%s returned", who);
    else if (where)
        snprintf(buf, n, "%s reached the syncthreads() at %s", who, where);
    else
        snprintf(buf, n, "%s wait at a barrier", who);
}

/* "write", "read" or "atomic": an access of the race detector's report */
static const char *race_verb(int flags) {
    return flags & GJ_RACE_ATOMIC ? "atomic" : flags & GJ_RACE_WRITE ? "write" : "read";
}

/* One access site's "file:line" and what it accessed, from gj_output_race_site's "file:line\twhat". */
static void race_site(const GjOutput *o, int site, char *where, size_t nw, char *what, size_t nt) {
    const char *s = gj_output_race_site(o, site);
    const char *tab = s ? strchr(s, '\t') : NULL;
    snprintf(where, nw, "%.*s", s ? (int)(tab ? (size_t)(tab - s) : strlen(s)) : 1, s ? s : "?");
    snprintf(what, nt, "%s", tab ? tab + 1 : "memory");
}

/* The race detector's findings of the last launch as a gpujit.RaceError: each distinct hazard a
 * line (its kind, block, address, and the two accesses: thread, kind and file:line), and .races
 * as a list of dicts of the same. */
static int race_raise(PyObject *name, const GjOutput *o, const GjRaceReport *r, int n, uint64_t total) {
    static const char *kinds[] = {"RAW", "WAR", "WAW"};
    size_t len = 0, cap = GJ_RACE_REPORTS * 1600 + 512;
    char *msg = malloc(cap);
    PyObject *list = msg ? PyList_New(0) : NULL;
    if (!list) return free(msg), msg ? -1 : (PyErr_NoMemory(), -1);
    const char *u = PyUnicode_AsUTF8(name);
    if (!u) PyErr_Clear();
    char line[1600]; /* two sites' file:line, what, the rest: each well under their buffers */
    snprintf(msg, cap,
             "kernel '%s': racecheck: %llu data race hazard%s between threads of a block with no barrier between "
             "them (%s%d distinct below):",
             u ? u : "?", (unsigned long long)total, total == 1 ? "" : "s", n == GJ_RACE_REPORTS ? "the first " : "",
             n);
    len = strlen(msg);
    for (int i = 0; i < n; i++) {
        const GjRaceReport *p = &r[i];
        char where[2][512], what[2][256], at[96];
        for (int k = 0; k < 2; k++) race_site(o, p->site[k], where[k], sizeof where[k], what[k], sizeof what[k]);
        if (p->shared_off >= 0)
            snprintf(at, sizeof at, "shared memory offset %lld (0x%llx)", (long long)p->shared_off,
                     (unsigned long long)p->addr);
        else
            snprintf(at, sizeof at, "address 0x%llx", (unsigned long long)p->addr);
        const char *kind = kinds[p->kind >= 0 && p->kind < 3 ? p->kind : 0];
        snprintf(line, sizeof line,
                 "\n  %s hazard in block (%d, %d, %d) at %s, %s: %s by thread (%d, %d, %d) at %s, then %s by thread "
                 "(%d, %d, %d) at %s",
                 kind, p->ctaid[0], p->ctaid[1], p->ctaid[2], at, what[1], race_verb(p->flags[0]), p->tid[0][0],
                 p->tid[0][1], p->tid[0][2], where[0], race_verb(p->flags[1]), p->tid[1][0], p->tid[1][1],
                 p->tid[1][2], where[1]);
        size_t l = strlen(line);
        if (len + l < cap) memcpy(msg + len, line, l + 1), len += l;
        PyObject *dct = Py_BuildValue(
                "{s:s,s:(iii),s:K,s:L,s:s,s:((iii)(iii)),s:(ss),s:(ss)}", "kind", kind, "block", p->ctaid[0],
                p->ctaid[1], p->ctaid[2], "address", (unsigned long long)p->addr, "shared_offset",
                (long long)p->shared_off, "what", what[1], "threads", p->tid[0][0], p->tid[0][1], p->tid[0][2],
                p->tid[1][0], p->tid[1][1], p->tid[1][2], "lines", where[0], where[1], "accesses",
                race_verb(p->flags[0]), race_verb(p->flags[1]));
        if (!dct || PyList_Append(list, dct) < 0) {
            Py_XDECREF(dct);
            Py_DECREF(list);
            free(msg);
            return -1;
        }
        Py_DECREF(dct);
    }
    PyObject *exc = PyObject_CallFunction(GjExc_RaceError, "s", msg);
    free(msg);
    if (!exc || PyObject_SetAttrString(exc, "races", list) < 0) {
        Py_XDECREF(exc);
        Py_DECREF(list);
        return -1;
    }
    Py_DECREF(list);
    PyErr_SetObject(GjExc_RaceError, exc);
    Py_DECREF(exc);
    return -1;
}

static int launch_host(GjLaunchConfig *c, CacheEntry *e, ArgDesc *d, int nargs, void **kp, uint64_t *slots, int run) {
    GjOutput *o = e->out;
    size_t shared_used, local, constant;
    int bound;
    gj_output_static_sizes(o, &shared_used, &local, &constant, &bound);
    if (check_kernel_threads(c, o, bound) < 0) return -1;
    if (!run) return 0;
    int debug = gj_output_debug(o);
    if (debug) memset(debug_host_buf, 0, sizeof debug_host_buf);
    gj_args_pack(o, d, debug ? (uint64_t)(uintptr_t)debug_host_buf : 0, slots, kp);
    const char *err = NULL;
    int rc;
    GjHostBlockFn bf = (GjHostBlockFn)gj_output_host_block_fn(o);
    GjHostThreadFn tf = (GjHostThreadFn)gj_output_host_thread_fn(o);
    size_t shared = gj_output_shared_bytes(o) + c->dyn_smem;
    int barrier = gj_output_uses_barrier(o) ? GJ_CPU_BARRIER : 0;
    if (gj_output_cooperative(o)) barrier |= GJ_CPU_BARRIER | GJ_CPU_COOPERATIVE;
    if (gj_output_racecheck(o)) barrier |= GJ_CPU_RACECHECK;
    Py_BEGIN_ALLOW_THREADS rc = gj_cpu_launch(bf, tf, barrier, c->grid, c->block, shared, kp, &err);
    Py_END_ALLOW_THREADS
    if (rc == GJ_CPU_INTERRUPTED) {
        /* Ctrl-C: Python's handler runs now (KeyboardInterrupt); where it raises
         * nothing, or on another thread than the main one, the launch that did
         * not finish still raises */
        if (PyErr_CheckSignals() < 0) return -1;
        PyErr_SetNone(PyExc_KeyboardInterrupt);
        return -1;
    }
    /* an out-of-bounds index also ends the launch early (blk->trap) */
    if (debug && debug_host_buf[0]) return debug_raise(c, o, debug_host_buf);
    if (rc < 0) {
        PyObject *name = gj_kernel_name((PyObject *)c->disp, o);
        const GjBarrierReport *r = gj_cpu_barrier_report();
        if (r && name) {
            char what[2][320];
            for (int g = 0; g < 2; g++) barrier_group(o, &r->group[g], what[g], sizeof what[g]);
            PyErr_Format(GjExc_LaunchError,
                         "kernel '%U': syncthreads(): not every thread of block (%d, %d, %d) reached the same barrier: "
                         "%s; %s (a barrier inside a branch that some threads skipped?)",
                         name, r->ctaid[0], r->ctaid[1], r->ctaid[2], what[0], what[1]);
        } else
            PyErr_Format(GjExc_LaunchError, "kernel '%U': %s", name, err ? err : "launch failed");
        Py_XDECREF(name);
        return -1;
    }
    if (gj_output_racecheck(o)) {
        int n;
        uint64_t total;
        const GjRaceReport *r = gj_cpu_race_reports(&n, &total);
        if (total) {
            PyObject *name = gj_kernel_name((PyObject *)c->disp, o);
            int rc2 = name ? race_raise(name, o, r, n, total) : -1;
            Py_XDECREF(name);
            return rc2;
        }
    }
    return 0;
}

/* Waits for the stream an array argument's producer named (its
 * __cuda_array_interface__, or CuPy's current stream) through
 * gpujit.devicearray._cai_sync: config.CUDA_ARRAY_INTERFACE_SYNC may turn the
 * wait off, and Stream.synchronize does it (code may patch it to watch). */
static int producer_sync(CUstream s) {
    PyObject *m = PyImport_ImportModule("gpujit.devicearray");
    if (!m) return -1;
    PyObject *r = PyObject_CallMethod(m, "_cai_sync", "K", (unsigned long long)(uintptr_t)s);
    Py_DECREF(m);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* numba's pre-launch callbacks: each is called as callback(kernel, config) once the
 * kernel for the arguments is known, before the launch; one raising stops it. */
static int run_callbacks(GjLaunchConfig *c, PyObject *kernel) {
    PyObject *cbs = PySequence_List(c->callbacks); /* a callback may change the list */
    if (!cbs) return -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(cbs); i++) {
        PyObject *r = PyObject_CallFunctionObjArgs(PyList_GET_ITEM(cbs, i), kernel, (PyObject *)c, NULL);
        if (!r) {
            Py_DECREF(cbs);
            return -1;
        }
        Py_DECREF(r);
    }
    Py_DECREF(cbs);
    return 0;
}

/* A launch inside a graph capture, or a captured launch's update: what a graph
 * cannot hold is refused before anything is queued. */
static int graph_check(GjLaunchConfig *c, CacheEntry *e, const ArgDesc *d, int ndesc, const GjGraphUpdate *upd) {
    PyObject *name = gj_kernel_name((PyObject *)c->disp, e->out);
    if (!name) return -1;
    int rc = -1;
    char what[160];
    const char *u = PyUnicode_AsUTF8(name);
    if (!u) PyErr_Clear();
    snprintf(what, sizeof what, "a launch of kernel '%s'", u ? u : "?");
    if (upd && e->kernel != upd->kernel)
        PyErr_Format(PyExc_TypeError,
                     "graph update of kernel '%U': these arguments select another specialisation than the "
                     "captured launch's; an update keeps the argument types",
                     name);
    else if (!upd && gj_graph_check_stream(c->stream_obj, c->stream, what) < 0)
        ;
    else if (gj_output_debug(e->out) && gj_output_target(e->out) == GJ_TARGET_NVPTX)
        PyErr_Format(GjExc_GraphCaptureError,
                     "kernel '%U' was compiled with debug=True or boundscheck=True: its error check waits for "
                     "each launch, which a CUDA graph cannot do",
                     name);
    else {
        rc = 0;
        for (int i = 0; i < ndesc; i++)
            if (d[i].kind == A_HOST) {
                PyErr_Format(GjExc_GraphCaptureError,
                             "kernel '%U' argument %d is a host array: its implicit copies to and from the "
                             "device cannot be part of a CUDA graph; pass a device array (gpujit.to_device "
                             "before the capture)",
                             name, d[i].pos);
                rc = -1;
                break;
            }
    }
    Py_DECREF(name);
    return rc;
}

static PyObject *config_launch(GjLaunchConfig *c, PyObject *args) {
    GjGraphUpdate *upd = gj_graph_take_update();
    int capturing = gj_graph_capturing();
    int t = gj_target();
    if (t < 0) return NULL;
    GjTargetKind target = (GjTargetKind)t;
    int dev = gj_current_device();
    const GjDeviceLimits *l = &host_limits;
    if (target == GJ_TARGET_NVPTX && !(l = gj_cuda_limits(dev))) return NULL;
    if (check_dims(c, l, target == GJ_TARGET_NVPTX ? "device" : "cpu target") < 0) return NULL;

    int nargs = (int)PyTuple_GET_SIZE(args), ndesc = 0; /* a tuple argument takes a descriptor per item too */
    for (int i = 0; i < nargs; i++) {
        int n = gj_args_count(PyTuple_GET_ITEM(args, i), i + 1, 0);
        if (n < 0) return NULL;
        ndesc += n;
    }
    ArgDesc dbuf[MAX_STACK_ARGS], *d = dbuf;
    if (ndesc > MAX_STACK_ARGS && !(d = malloc(ndesc * sizeof *d))) return PyErr_NoMemory();
    uint64_t sbuf[MAX_STACK_PARAMS], *slots = sbuf;
    void *kbuf[MAX_STACK_PARAMS], **kp = kbuf;
    PyObject *result = NULL;
    int nclassified = 0;
    CUstream cupy_stream = (CUstream)(intptr_t)-1;
    for (int i = 0; i < ndesc; i++) {
        d[i].has_view = 0;
        d[i].capsule = NULL;
        d[i].managed = NULL;
        d[i].staged = 0;
        d[i].alias = 0;
        d[i].written = 0;
        d[i].record_id = 0;
        d[i].itemsize = 0;
        d[i].kernel_writes = 0;
    }
    nclassified = ndesc;
    for (int i = 0, k = 0; i < nargs; i++, k += d[k].span) {
        CUstream sync;
        if (gj_args_classify(&d[k], PyTuple_GET_ITEM(args, i), i + 1, target, dev, c->stream, &sync, &cupy_stream) < 0)
            goto done;
        /* A producer's pending work on another stream must finish first. Not while
         * capturing or updating a graph: nothing runs now, and a replay's inputs are
         * ordered by whoever launches it (a wait here would break the capture). */
        if (sync && !capturing && !upd && producer_sync(sync) < 0) goto done;
    }
    CacheEntry *e = lookup(c->disp, (PyObject *)c, args, d, nargs, ndesc, target, dev);
    if (!e) goto done;
    if (c->callbacks && PyList_GET_SIZE(c->callbacks) > 0 && run_callbacks(c, e->kernel) < 0) goto done;
    gj_args_mark(d, nargs, e->out);
    for (int i = 0; i < ndesc; i++)
        if (d[i].readonly && d[i].kind != A_SCALAR && d[i].kind != A_TUPLE && d[i].kernel_writes) {
            PyObject *name = gj_kernel_name((PyObject *)c->disp, e->out);
            PyErr_Format(PyExc_ValueError,
                         "kernel '%U' argument %d: a read-only array, but the kernel writes "
                         "to it",
                         name, d[i].pos);
            Py_XDECREF(name);
            goto done;
        }
    if (target == GJ_TARGET_NVPTX && (perf_warnings & WARN_IMPLICIT_COPY) && !c->quiet &&
        warn_host_arguments(args, d, ndesc) < 0)
        goto done;
    if ((upd || capturing) && graph_check(c, e, d, ndesc, upd) < 0) goto done;
    int np = gj_output_nparams(e->out);
    if (np > MAX_STACK_PARAMS) {
        slots = malloc(np * sizeof *slots);
        kp = malloc(np * sizeof *kp);
        if (!slots || !kp) {
            PyErr_NoMemory();
            goto done;
        }
    }
    PyObject *after = NULL; /* the profiler's: what to call when the launch is done */
    if (profile_hook && !upd && !capturing &&
        !(after = PyObject_CallFunction(profile_hook, "OOK", c->disp, e->kernel,
                                        (unsigned long long)(uintptr_t)c->stream)))
        goto done;
    /* the cpu target runs a captured launch when the graph is replayed */
    if ((target == GJ_TARGET_NVPTX ? launch_cuda(c, e, d, ndesc, dev, l, kp, slots, upd)
                                   : launch_host(c, e, d, nargs, kp, slots, !upd && !capturing)) == 0 &&
        (upd || !capturing || gj_graph_record_launch((PyObject *)c, args, e->kernel, c->stream) == 0))
        result = Py_NewRef(Py_None);
    if (after) {
        PyObject *et, *ev, *tb; /* a failed launch is timed too, its error kept */
        PyErr_Fetch(&et, &ev, &tb);
        PyObject *r = PyObject_CallNoArgs(after);
        Py_DECREF(after);
        if (!r) {
            Py_XDECREF(et), Py_XDECREF(ev), Py_XDECREF(tb);
            Py_CLEAR(result);
            goto done;
        }
        Py_DECREF(r);
        PyErr_Restore(et, ev, tb);
    }
done:
    gj_args_release(d, nclassified, dev);
    if (d != dbuf) free(d);
    if (slots != sbuf) free(slots);
    if (kp != kbuf) free(kp);
    return result;
}

/* Whether the launch needs the Python side first: launch extensions, or
 * arguments wrapped in In/Out/InOut. Without them this costs no Python call. */
static int needs_prepare(GjLaunchConfig *c, PyObject *args) {
    PyObject *ext = ((GjDispatcher *)c->disp)->extensions;
    if (ext && (!PyList_Check(ext) || PyList_GET_SIZE(ext) > 0)) return 1;
    if (!arg_hint_type) return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); i++)
        if (PyObject_TypeCheck(PyTuple_GET_ITEM(args, i), (PyTypeObject *)arg_hint_type)) return 1;
    return 0;
}

static PyObject *config_call(GjLaunchConfig *c, PyObject *args, PyObject *kw) {
    if (kw && PyDict_GET_SIZE(kw)) {
        PyErr_SetString(PyExc_TypeError, "kernels take positional arguments only");
        return NULL;
    }
    if (!needs_prepare(c, args)) return config_launch(c, args);
    if (gj_graph_active()) {
        PyErr_SetString(GjExc_GraphCaptureError,
                        "In/Out/InOut arguments and launch extensions copy data around the launch, which a "
                        "CUDA graph capture cannot hold: pass device arrays");
        return NULL;
    }
    /* (the arguments to launch with, the write-backs to call after the launch) */
    PyObject *prep = PyObject_CallMethod((PyObject *)c->disp, "_prepare_args", "(OO)", args,
                                         c->stream_obj ? c->stream_obj : Py_None);
    if (!prep) return NULL;
    if (!PyTuple_Check(prep) || PyTuple_GET_SIZE(prep) != 2 || !PyTuple_Check(PyTuple_GET_ITEM(prep, 0))) {
        Py_DECREF(prep);
        PyErr_SetString(PyExc_TypeError, "_prepare_args must return (args tuple, write-backs)");
        return NULL;
    }
    PyObject *result = config_launch(c, PyTuple_GET_ITEM(prep, 0));
    PyObject *it = result ? PyObject_GetIter(PyTuple_GET_ITEM(prep, 1)) : NULL;
    PyObject *wb;
    while (it && (wb = PyIter_Next(it))) {
        PyObject *r = PyObject_CallNoArgs(wb);
        Py_DECREF(wb);
        if (!r) break;
        Py_DECREF(r);
    }
    Py_XDECREF(it);
    Py_DECREF(prep);
    if (result && PyErr_Occurred()) Py_CLEAR(result);
    return result;
}

static PyObject *dim_tuple(GjDim3 v) { return Py_BuildValue("(III)", v.x, v.y, v.z); }

static PyObject *config_griddim(GjLaunchConfig *c, void *x) { return dim_tuple(c->grid); }
static PyObject *config_blockdim(GjLaunchConfig *c, void *x) { return dim_tuple(c->block); }
static PyObject *config_sharedmem(GjLaunchConfig *c, void *x) { return PyLong_FromSize_t(c->dyn_smem); }
static PyObject *config_stream(GjLaunchConfig *c, void *x) {
    return c->stream_obj ? Py_NewRef(c->stream_obj) : PyLong_FromLong(0);
}
static PyObject *config_dispatcher(GjLaunchConfig *c, void *x) { return Py_NewRef(c->disp); }
static PyObject *config_args(GjLaunchConfig *c, void *x) {
    return Py_NewRef((PyObject *)c == compiling_config ? compiling_args : Py_None);
}
static PyObject *config_callbacks(GjLaunchConfig *c, void *x) {
    if (!c->callbacks && !(c->callbacks = PyList_New(0))) return NULL;
    return Py_NewRef(c->callbacks);
}

/* Pickled as kernel[griddim, blockdim, stream, sharedmem] (the stream by its own
 * pickling, which refuses a Stream); callbacks are arbitrary code, so a configuration
 * holding some is refused. */
static PyObject *config_reduce(GjLaunchConfig *c, PyObject *unused) {
    if (c->callbacks && PyList_GET_SIZE(c->callbacks) > 0) {
        PyObject *pickle = PyImport_ImportModule("pickle");
        PyObject *exc = pickle ? PyObject_GetAttrString(pickle, "PicklingError") : NULL;
        if (exc) PyErr_SetString(exc, "Cannot pickle configured launches with pre-launch callbacks");
        Py_XDECREF(exc);
        Py_XDECREF(pickle);
        return NULL;
    }
    PyObject *op = PyImport_ImportModule("operator");
    PyObject *getitem = op ? PyObject_GetAttrString(op, "getitem") : NULL;
    Py_XDECREF(op);
    if (!getitem) return NULL;
    PyObject *r = Py_BuildValue("N(O(NNOn))", getitem, (PyObject *)c->disp, dim_tuple(c->grid), dim_tuple(c->block),
                                c->stream_obj ? c->stream_obj : Py_None, (Py_ssize_t)c->dyn_smem);
    return r;
}

/* LaunchConfig._compiling(): the configuration whose kernel this thread is
 * compiling, or None. */
static PyObject *config_compiling(PyObject *unused, PyObject *unused2) {
    return Py_NewRef(compiling_config ? compiling_config : Py_None);
}

/* clang-format off */
static PyMethodDef config_methods[] = {
    {"_compiling", (PyCFunction)config_compiling, METH_NOARGS | METH_STATIC,
     "the launch configuration whose kernel this thread is compiling, or None"},
    {"__reduce__", (PyCFunction)config_reduce, METH_NOARGS, NULL},
    {NULL},
};
/* clang-format on */

/* clang-format off */
static PyGetSetDef config_getset[] = {
    {"griddim", (getter)config_griddim, NULL, NULL, NULL},
    {"blockdim", (getter)config_blockdim, NULL, NULL, NULL},
    {"sharedmem", (getter)config_sharedmem, NULL, "dynamic shared memory bytes", NULL},
    {"stream", (getter)config_stream, NULL, NULL, NULL},
    {"dispatcher", (getter)config_dispatcher, NULL, NULL, NULL},
    {"args", (getter)config_args, NULL, "the arguments, while this launch's kernel is being compiled; else None",
     NULL},
    {"pre_launch_callbacks", (getter)config_callbacks, NULL,
     "callables called as callback(kernel, config) before each launch of this configuration", NULL},
    {NULL},
};
/* clang-format on */

/* clang-format off */
static PyTypeObject GjLaunchConfig_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpujit._core.LaunchConfig",
    .tp_basicsize = sizeof(GjLaunchConfig),
    .tp_dealloc = (destructor)config_dealloc,
    .tp_call = (ternaryfunc)config_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "kernel[griddim, blockdim, stream, dynamic_shared_bytes]: call it with the arguments.",
    .tp_getset = config_getset,
    .tp_methods = config_methods,
};
/* clang-format on */

/* ---- DispatcherBase ---- */

static int disp_traverse(GjDispatcher *d, visitproc visit, void *arg) {
    Py_VISIT(d->dict);
    Py_VISIT(d->extensions);
    for (size_t i = 0; i < d->capacity; i++)
        if (d->table[i].key) Py_VISIT(d->table[i].kernel);
    return 0;
}

static int disp_clear(GjDispatcher *d) {
    Py_CLEAR(d->dict);
    Py_CLEAR(d->extensions);
    cache_clear(d);
    return 0;
}

static void disp_dealloc(GjDispatcher *d) {
    PyTypeObject *tp = Py_TYPE(d);
    PyObject_GC_UnTrack(d);
    if (d->weaklist) PyObject_ClearWeakRefs((PyObject *)d);
    disp_clear(d);
    /* A static base type: a heap subclass's subtype_dealloc drops the type's reference. */
    tp->tp_free((PyObject *)d);
}

/* A TypeError (gpujit's) that is also numba's ValueError. */
static PyObject *GjExc_NoLaunchConfig;

static PyObject *disp_call(PyObject *self, PyObject *args, PyObject *kw) {
    PyErr_SetString(GjExc_NoLaunchConfig,
                    "launch configuration missing: kernel[griddim, blockdim](args) (the launch "
                    "configuration was not specified)");
    return NULL;
}

static PyObject *disp_cache_clear(GjDispatcher *d, PyObject *unused) {
    cache_clear(d);
    Py_RETURN_NONE;
}

static PyObject *disp_cached_kernels(GjDispatcher *d, PyObject *unused) {
    PyObject *l = PyList_New(0);
    for (size_t i = 0; l && i < d->capacity; i++)
        if (d->table[i].key && PyList_Append(l, d->table[i].kernel) < 0) Py_CLEAR(l);
    return l;
}

/* for tests: the CuPy array type the launcher reads directly, once it has seen one */
static PyObject *disp_cupy_type(GjDispatcher *d, PyObject *unused) { return gj_args_cupy_type(); }

/* DispatcherBase._set_arg_hint_type(cls): the base class of In/Out/InOut */
static PyObject *disp_set_arg_hint_type(PyObject *unused, PyObject *cls) {
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "_set_arg_hint_type takes a class");
        return NULL;
    }
    Py_XSETREF(arg_hint_type, Py_NewRef(cls));
    Py_RETURN_NONE;
}

/* kernel._quiet_config(griddim, blockdim[, stream[, sharedmem]]): kernel[...]
 * without performance warnings, for gpujit's own launches whose grid or
 * copies the user did not ask for. */
static PyObject *disp_quiet_config(GjDispatcher *d, PyObject *args) { return make_config(d, args, 1); }

/* gpujit.config pushes its settings here (see perf_warnings). */
static PyObject *disp_set_profile_hook(PyObject *unused, PyObject *hook) {
    Py_XSETREF(profile_hook, hook == Py_None ? NULL : Py_NewRef(hook));
    Py_RETURN_NONE;
}

static PyObject *disp_set_perf_warnings(PyObject *unused, PyObject *args) {
    int occupancy, occupancy_cpu, copy;
    if (!PyArg_ParseTuple(args, "ppp", &occupancy, &occupancy_cpu, &copy)) return NULL;
    perf_warnings = (occupancy ? WARN_OCCUPANCY : 0) | (occupancy_cpu ? WARN_OCCUPANCY_CPU : 0) |
                    (copy ? WARN_IMPLICIT_COPY : 0);
    Py_RETURN_NONE;
}

/* numba's implicit-copy warning for gpujit's own copies of host arrays (ufuncs):
 * given on the cuda target while config.CUDA_WARN_ON_IMPLICIT_COPY is on. */
static PyObject *disp_warn_implicit_copy(PyObject *unused, PyObject *unused2) {
    if (perf_warnings < 0 && load_perf_warnings() < 0) return NULL;
    if (perf_warnings & WARN_IMPLICIT_COPY) {
        int t = gj_target();
        if (t < 0 || (t == GJ_TARGET_NVPTX && warn_implicit_copy() < 0)) return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *disp_get_extensions(GjDispatcher *d, void *x) {
    if (!d->extensions && !(d->extensions = PyList_New(0))) return NULL;
    return Py_NewRef(d->extensions);
}

static int disp_set_extensions(GjDispatcher *d, PyObject *v, void *x) {
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "cannot delete extensions");
        return -1;
    }
    Py_XSETREF(d->extensions, Py_NewRef(v));
    return 0;
}

/* clang-format off */
static PyMethodDef disp_methods[] = {
    {"_cupy_fast_path_type", (PyCFunction)disp_cupy_type, METH_NOARGS,
     "the CuPy ndarray type read without __cuda_array_interface__, or None"},
    {"_set_arg_hint_type", (PyCFunction)disp_set_arg_hint_type, METH_O | METH_STATIC,
     "the base class of argument wrappers (In, Out, InOut) that go through _prepare_args"},
    {"_cache_clear", (PyCFunction)disp_cache_clear, METH_NOARGS,
     "drop every cached specialisation"},
    {"_cached_kernels", (PyCFunction)disp_cached_kernels, METH_NOARGS,
     "the CompiledKernels in the launch cache"},
    {"_quiet_config", (PyCFunction)disp_quiet_config, METH_VARARGS,
     "kernel[griddim, blockdim, stream, sharedmem] that gives no performance warning"},
    {"_set_profile_hook", (PyCFunction)disp_set_profile_hook, METH_O | METH_STATIC,
     "(hook or None): hook(dispatcher, kernel, stream handle) before each launch returns a callable called "
     "after it (gpujit._profiler, GPUJIT_PROFILE)"},
    {"_set_performance_warnings", (PyCFunction)disp_set_perf_warnings, METH_VARARGS | METH_STATIC,
     "(low_occupancy, low_occupancy_on_cpu, implicit_copy): which performance warnings launches give "
     "(gpujit.config sets them)"},
    {"_warn_implicit_copy", (PyCFunction)disp_warn_implicit_copy, METH_NOARGS | METH_STATIC,
     "numba's implicit-copy warning, where config and target call for it"},
    {NULL},
};
/* clang-format on */

/* clang-format off */
static PyGetSetDef disp_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"extensions", (getter)disp_get_extensions, (setter)disp_set_extensions,
     "launch extensions: objects whose prepare_args(ty, val, stream=, retr=) sees each argument", NULL},
    {NULL},
};
/* clang-format on */

static PyMappingMethods disp_as_mapping = {
        .mp_subscript = (binaryfunc)disp_subscript,
};

/* clang-format off */
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
    .tp_getset = disp_getset,
    .tp_dictoffset = offsetof(GjDispatcher, dict),
    .tp_new = PyType_GenericNew,
};
/* clang-format on */

int gj_launch_add(PyObject *m) {
    GjExc_LaunchError = PyErr_NewExceptionWithDoc("gpujit.LaunchError", "A kernel launch on the CPU target failed.",
                                                  PyExc_RuntimeError, NULL);
    if (!GjExc_LaunchError || PyModule_AddObjectRef(m, "LaunchError", GjExc_LaunchError) < 0) return -1;
    GjExc_RaceError = PyErr_NewExceptionWithDoc(
            "gpujit.RaceError",
            "A kernel compiled with racecheck=True raced on the CPU target: two threads of a block "
            "accessed the same memory, at least one writing, with no barrier between them. .races "
            "lists the hazards the message names.",
            GjExc_LaunchError, NULL);
    if (!GjExc_RaceError || PyModule_AddObjectRef(m, "RaceError", GjExc_RaceError) < 0) return -1;
    PyObject *bases = PyTuple_Pack(2, PyExc_TypeError, PyExc_ValueError);
    GjExc_NoLaunchConfig = bases ? PyErr_NewExceptionWithDoc("gpujit.NoLaunchConfigError",
                                                             "A kernel was called without kernel[griddim, blockdim].",
                                                             bases, NULL)
                                 : NULL;
    Py_XDECREF(bases);
    if (!GjExc_NoLaunchConfig || PyModule_AddObjectRef(m, "NoLaunchConfigError", GjExc_NoLaunchConfig) < 0)
        return -1;
    if (PyType_Ready(&GjDispatcher_Type) < 0 || PyType_Ready(&GjLaunchConfig_Type) < 0 ||
        PyModule_AddObjectRef(m, "DispatcherBase", (PyObject *)&GjDispatcher_Type) < 0 ||
        PyModule_AddObjectRef(m, "LaunchConfig", (PyObject *)&GjLaunchConfig_Type) < 0)
        return -1;
    return 0;
}
