/* Modules: loads a CompiledKernel's PTX into a device's primary context with
 * cuModuleLoadDataEx (the driver JIT-compiles it; its error and info logs are
 * captured into the CudaError) and caches the (CUmodule, CUfunction) per
 * (kernel, device). For the on-disk cache it also makes the machine code (the
 * cubin, by the driver's linker) and loads a stored one without compiling.
 * The launcher keeps its own copy of the function in its dispatch cache, so
 * this table is off the hot path: a linear array behind a mutex. An entry
 * holds a weak reference to its kernel when the kernel's type allows one (the
 * entry and its module die with the kernel), else a strong one.
 * Also the kernel queries: kernel_attributes and max_potential_block. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"
#include "cuda.h"

#define LOG_SIZE 8192

typedef struct ModEntry {
    PyObject *kernel;  /* borrowed when `weak` is set, else a strong reference */
    PyObject *weak;    /* weakref whose callback drops the entry, or NULL */
    int dev;
    unsigned generation;
    CUmodule mod;
    CUfunction fn;
    int max_threads;
} ModEntry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ModEntry *entries;
static size_t nentries, capacity;
static PyObject *weak_callback; /* a PyCFunction: weak_cb below */

/* Called with `lock` held. */
static ModEntry *find(PyObject *kernel, int dev) {
    for (size_t i = 0; i < nentries; i++)
        if (entries[i].kernel == kernel && entries[i].dev == dev) return &entries[i];
    return NULL;
}

/* Moves out the entries that `match` selects (lock held); returns how many. */
static size_t take(int (*match)(const ModEntry *, const void *), const void *arg, ModEntry *out, size_t max) {
    size_t n = 0, j = 0;
    for (size_t i = 0; i < nentries; i++) {
        if (n < max && match(&entries[i], arg))
            out[n++] = entries[i];
        else
            entries[j++] = entries[i];
    }
    nentries = j;
    return n;
}

/* Drops taken entries: unloads their modules (unless their context died) and
 * releases their references. GIL held, lock not held. */
static void drop(ModEntry *e, size_t n, int unload) {
    for (size_t i = 0; i < n; i++) {
        if (unload && e[i].generation == gj_cuda_generation(e[i].dev)) {
            PyObject *et, *ev, *tb;
            PyErr_Fetch(&et, &ev, &tb);
            if (gj_cuda_enter(e[i].dev) == 0) gj_cu.ModuleUnload(e[i].mod);
            PyErr_Clear();
            PyErr_Restore(et, ev, tb);
        }
        if (e[i].weak)
            Py_DECREF(e[i].weak);
        else
            Py_DECREF(e[i].kernel);
    }
}

static int match_kernel(const ModEntry *e, const void *k) { return e->kernel == k; }
static int match_weak(const ModEntry *e, const void *w) { return e->weak == w; }
static int match_dev(const ModEntry *e, const void *d) { return e->dev == *(const int *)d; }

static void drop_matching(int (*match)(const ModEntry *, const void *), const void *arg, int unload) {
    ModEntry buf[GJ_MAX_DEVICES];
    size_t n;
    do { /* in batches: drop() must run without the lock */
        pthread_mutex_lock(&lock);
        n = take(match, arg, buf, GJ_MAX_DEVICES);
        pthread_mutex_unlock(&lock);
        drop(buf, n, unload);
    } while (n == GJ_MAX_DEVICES);
}

void gj_module_forget(PyObject *compiled) { drop_matching(match_kernel, compiled, 1); }

void gj_module_forget_device(int dev) { drop_matching(match_dev, &dev, 0); }

static PyObject *weak_cb(PyObject *self, PyObject *wr) {
    drop_matching(match_weak, wr, 1);
    Py_RETURN_NONE;
}

static PyMethodDef weak_cb_def = {"_module_dropped", weak_cb, METH_O, NULL};

static GjOutput *nvptx_output(PyObject *compiled) {
    GjOutput *o = gj_compiled_output(compiled);
    if (!o) {
        PyErr_Format(PyExc_TypeError, "expected a CompiledKernel, not %.100s", Py_TYPE(compiled)->tp_name);
        return NULL;
    }
    return o;
}

/* The CUjitInputType of a linked item's kind (CompiledKernel.link checked it). */
static int input_type(const char *kind) {
    static const struct {
        const char *kind;
        int type;
    } types[] = {{"ptx", CU_JIT_INPUT_PTX},       {"cubin", CU_JIT_INPUT_CUBIN}, {"fatbin", CU_JIT_INPUT_FATBINARY},
                 {"o", CU_JIT_INPUT_OBJECT},      {"a", CU_JIT_INPUT_LIBRARY}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(kind, types[i].kind)) return types[i].type;
    return -1;
}

/* The kernel's PTX linked with `link`'s items (none when NULL) by the driver's
 * linker, loaded; a copy of the linked image (a cubin) into *image when that
 * is not NULL. The GIL is released around each driver call that compiles. The
 * error log (unresolved symbols, PTX errors) goes into the CudaError. */
static int link_load(GjOutput *o, PyObject *link, CUmodule *mod, char *info, char *err, PyObject **image_out) {
    if (!gj_cu.LinkCreate || !gj_cu.LinkAddData || !gj_cu.LinkComplete || !gj_cu.LinkDestroy) {
        gj_cuda_error("kernel %s links external code, but the CUDA driver has no linker (cuLinkCreate)",
                      gj_output_symbol(o));
        return -1;
    }
    int opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {info, (void *)(uintptr_t)(LOG_SIZE - 1), err, (void *)(uintptr_t)(LOG_SIZE - 1)};
    CUlinkState st;
    CUresult r = gj_cu.LinkCreate(4, opts, vals, &st);
    char what[LOG_SIZE * 2 + 256];
    if (r != CUDA_SUCCESS) return gj_cuda_check(r, "cuLinkCreate");
    const char *ptx = gj_output_ptx(o), *stage = "kernel";
    Py_BEGIN_ALLOW_THREADS r = gj_cu.LinkAddData(st, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1,
                                                  gj_output_symbol(o), 0, NULL, NULL);
    Py_END_ALLOW_THREADS
    for (Py_ssize_t i = 0; r == CUDA_SUCCESS && link && i < PyTuple_GET_SIZE(link); i++) {
        PyObject *it = PyTuple_GET_ITEM(link, i), *data = PyTuple_GET_ITEM(it, 2);
        stage = PyUnicode_AsUTF8(PyTuple_GET_ITEM(it, 1));
        int type = input_type(PyUnicode_AsUTF8(PyTuple_GET_ITEM(it, 0)));
        Py_BEGIN_ALLOW_THREADS r = gj_cu.LinkAddData(st, type, PyBytes_AS_STRING(data), (size_t)PyBytes_GET_SIZE(data),
                                                      stage, 0, NULL, NULL);
        Py_END_ALLOW_THREADS
    }
    void *image = NULL;
    size_t size = 0;
    if (r == CUDA_SUCCESS) {
        stage = "cuLinkComplete";
        Py_BEGIN_ALLOW_THREADS r = gj_cu.LinkComplete(st, &image, &size);
        Py_END_ALLOW_THREADS
    }
    if (r == CUDA_SUCCESS) {
        stage = "cuModuleLoadDataEx of the linked image";
        Py_BEGIN_ALLOW_THREADS r = gj_cu.ModuleLoadDataEx(mod, image, 0, NULL, NULL);
        Py_END_ALLOW_THREADS
    }
    if (r == CUDA_SUCCESS && image_out && !(*image_out = PyBytes_FromStringAndSize(image, (Py_ssize_t)size))) {
        gj_cu.ModuleUnload(*mod);
        gj_cu.LinkDestroy(st);
        return -1;
    }
    gj_cu.LinkDestroy(st); /* frees the image, which the module no longer needs */
    if (r == CUDA_SUCCESS) return 0;
    snprintf(what, sizeof what, "linking kernel %s (at %s)%s%s%s%s", gj_output_symbol(o), stage ? stage : "?",
             *err ? "\n--- linker error log ---\n" : "", err, *info ? "\n--- linker info log ---\n" : "", info);
    return gj_cuda_check(r, what);
}

/* The kernel's entry point in a module just loaded (unloaded if it lacks it). */
static int get_function(GjOutput *o, CUmodule mod, CUfunction *fn) {
    CUresult r = gj_cu.ModuleGetFunction(fn, mod, gj_output_symbol(o));
    if (r != CUDA_SUCCESS) {
        gj_cu.ModuleUnload(mod);
        char what[512];
        snprintf(what, sizeof what, "cuModuleGetFunction(%s)", gj_output_symbol(o));
        return gj_cuda_check(r, what);
    }
    return 0;
}

/* Loads the PTX (linked with the kernel's link items, if it has any); the GIL
 * is released while the driver JIT-compiles it. */
static int load(PyObject *compiled, GjOutput *o, int dev, CUmodule *mod, CUfunction *fn) {
    const char *ptx = gj_output_ptx(o);
    if (!ptx) {
        PyErr_SetString(PyExc_TypeError, "the kernel was not compiled for the cuda target");
        return -1;
    }
    if (gj_cuda_enter(dev) < 0) return -1;
    PyObject *link = gj_compiled_link(compiled);
    char *info = calloc(1, LOG_SIZE), *err = calloc(1, LOG_SIZE);
    if (!info || !err) {
        free(info);
        free(err);
        PyErr_NoMemory();
        return -1;
    }
    if (link) {
        int rc = link_load(o, link, mod, info, err, NULL);
        free(info);
        free(err);
        if (rc < 0) return -1;
        goto loaded;
    }
    int opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {info, (void *)(uintptr_t)(LOG_SIZE - 1), err, (void *)(uintptr_t)(LOG_SIZE - 1)};
    CUresult r;
    Py_BEGIN_ALLOW_THREADS r = gj_cu.ModuleLoadDataEx(mod, ptx, 4, opts, vals);
    Py_END_ALLOW_THREADS if (r != CUDA_SUCCESS) {
        char what[LOG_SIZE * 2 + 128];
        snprintf(what, sizeof what, "cuModuleLoadDataEx of kernel %s%s%s%s%s", gj_output_symbol(o),
                 *err ? "\n--- ptxas error log ---\n" : "", err, *info ? "\n--- ptxas info log ---\n" : "", info);
        free(info);
        free(err);
        return gj_cuda_check(r, what);
    }
    free(info);
    free(err);
loaded:
    return get_function(o, *mod, fn);
}

static int keep(PyObject *compiled, int dev, unsigned gen, CUmodule mod, CUfunction *fn, int *max_threads);

int gj_module_function(PyObject *compiled, int dev, CUfunction *fn, int *max_threads) {
    GjOutput *o = nvptx_output(compiled);
    if (!o) return -1;
    unsigned gen = gj_cuda_generation(dev);
    pthread_mutex_lock(&lock);
    ModEntry *e = find(compiled, dev);
    if (e && e->generation == gen) {
        *fn = e->fn;
        *max_threads = e->max_threads;
        pthread_mutex_unlock(&lock);
        return 0;
    }
    pthread_mutex_unlock(&lock);
    if (e) /* from before a reset: its module died with the context */
        gj_module_forget_device(dev);

    CUmodule mod;
    if (load(compiled, o, dev, &mod, fn) < 0) return -1;
    return keep(compiled, dev, gen, mod, fn, max_threads);
}

/* Enters a module just loaded (with its function *fn) as the kernel's on `dev`; when another
 * thread entered one meanwhile, that one is used (*fn, *max_threads) and this one unloaded. */
static int keep(PyObject *compiled, int dev, unsigned gen, CUmodule mod, CUfunction *fn, int *max_threads) {
    int maxt = 0;
    if (gj_cuda_check(gj_cu.FuncGetAttribute(&maxt, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, *fn),
                      "cuFuncGetAttribute") < 0) {
        gj_cu.ModuleUnload(mod);
        return -1;
    }
    *max_threads = maxt;

    PyObject *weak = PyWeakref_NewRef(compiled, weak_callback);
    if (!weak) { /* the type has no weakref slot: keep the kernel alive instead */
        PyErr_Clear();
        Py_INCREF(compiled);
    }
    pthread_mutex_lock(&lock);
    ModEntry *dup = find(compiled, dev);
    CUfunction dup_fn = dup ? dup->fn : NULL;
    int dup_maxt = dup ? dup->max_threads : 0;
    int ok = 1;
    if (!dup && nentries == capacity) {
        size_t nc = capacity ? capacity * 2 : 16;
        ModEntry *ne = realloc(entries, nc * sizeof *ne);
        if (ne) {
            entries = ne;
            capacity = nc;
        } else {
            ok = 0;
        }
    }
    if (!dup && ok) entries[nentries++] = (ModEntry){compiled, weak, dev, gen, mod, *fn, maxt};
    pthread_mutex_unlock(&lock);
    if (!dup && ok) return 0;
    /* Another thread loaded it meanwhile (use its module), or there was no
     * memory for the entry: either way this module is not kept. */
    if (weak)
        Py_DECREF(weak);
    else
        Py_DECREF(compiled);
    gj_cu.ModuleUnload(mod);
    if (!dup) {
        PyErr_NoMemory();
        return -1;
    }
    *fn = dup_fn;
    *max_threads = dup_maxt;
    return 0;
}

/* ---- Python functions ---- */

static PyObject *py_kernel_attributes(PyObject *self, PyObject *compiled) {
    GjOutput *o = nvptx_output(compiled);
    if (!o) return NULL;
    if (gj_output_target(o) == GJ_TARGET_HOST) {
        /* what the code declares, known exactly at compile time; a CPU has no registers to count */
        size_t shared, local, constant;
        int bound;
        gj_output_static_sizes(o, &shared, &local, &constant, &bound);
        return Py_BuildValue("{s:i,s:i,s:n,s:n,s:n}", "regs_per_thread", 0, "max_threads_per_block",
                             bound > 0 && bound < 1024 ? bound : 1024, "shared_bytes", (Py_ssize_t)shared,
                             "local_bytes", (Py_ssize_t)local, "const_bytes", (Py_ssize_t)constant);
    }
    int dev = gj_current_device(), maxt;
    CUfunction fn;
    if (gj_module_function(compiled, dev, &fn, &maxt) < 0) return NULL;
    static const int attrs[] = {CU_FUNC_ATTRIBUTE_NUM_REGS, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
                                CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES};
    int v[5];
    for (int i = 0; i < 5; i++)
        if (gj_cuda_check(gj_cu.FuncGetAttribute(&v[i], attrs[i], fn), "cuFuncGetAttribute") < 0) return NULL;
    return Py_BuildValue("{s:i,s:i,s:i,s:i,s:i}", "regs_per_thread", v[0], "max_threads_per_block", v[1],
                         "shared_bytes", v[2], "local_bytes", v[3], "const_bytes", v[4]);
}

static PyObject *py_max_potential_block(PyObject *self, PyObject *args) {
    PyObject *compiled;
    Py_ssize_t dyn = 0;
    if (!PyArg_ParseTuple(args, "O|n:max_potential_block", &compiled, &dyn)) return NULL;
    GjOutput *o = nvptx_output(compiled);
    if (!o) return NULL;
    if (dyn < 0) return PyErr_Format(PyExc_ValueError, "negative dynamic shared memory size");
    if (gj_output_target(o) == GJ_TARGET_HOST) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        size_t shared, local, constant;
        int bound;
        gj_output_static_sizes(o, &shared, &local, &constant, &bound);
        return Py_BuildValue("(ii)", ncpu > 0 ? (int)ncpu : 1, bound > 0 && bound < 256 ? bound : 256);
    }
    int dev = gj_current_device(), maxt, min_grid = 0, block = 0;
    CUfunction fn;
    if (gj_module_function(compiled, dev, &fn, &maxt) < 0 ||
        gj_cuda_check(gj_cu.OccupancyMaxPotentialBlockSize(&min_grid, &block, fn, NULL, (size_t)dyn, 0),
                      "cuOccupancyMaxPotentialBlockSize") < 0)
        return NULL;
    return Py_BuildValue("(ii)", min_grid, block);
}

/* How many blocks of `nthreads` threads a cooperative launch of the kernel
 * may have: all must be resident at once (on the CPU target, its fibers). */
static PyObject *py_max_cooperative_grid_blocks(PyObject *self, PyObject *args) {
    PyObject *compiled;
    Py_ssize_t nthreads, dyn = 0;
    if (!PyArg_ParseTuple(args, "On|n:max_cooperative_grid_blocks", &compiled, &nthreads, &dyn)) return NULL;
    GjOutput *o = nvptx_output(compiled);
    if (!o) return NULL;
    if (nthreads <= 0) return PyErr_Format(PyExc_ValueError, "a block has at least one thread, not %zd", nthreads);
    if (dyn < 0) return PyErr_Format(PyExc_ValueError, "negative dynamic shared memory size");
    if (gj_output_target(o) == GJ_TARGET_HOST) return PyLong_FromSsize_t(GJ_CPU_MAX_COOP_THREADS / nthreads);
    int dev = gj_current_device(), maxt, per_sm = 0;
    const GjDeviceLimits *l = gj_cuda_limits(dev);
    CUfunction fn;
    if (!l || gj_module_function(compiled, dev, &fn, &maxt) < 0) return NULL;
    if (nthreads > maxt) return PyLong_FromLong(0);
    if (gj_cuda_check(gj_cu.OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, (int)nthreads, (size_t)dyn),
                      "cuOccupancyMaxActiveBlocksPerMultiprocessor") < 0)
        return NULL;
    return PyLong_FromLongLong((long long)per_sm * l->sm_count);
}

/* The kernel's machine code for the current device: its PTX compiled by the driver's linker
 * (what a load would compile), loaded as the kernel's module there, and returned as a cubin
 * for the on-disk cache; None for a kernel linked with other code (never cached). */
static PyObject *py_module_cubin(PyObject *self, PyObject *compiled) {
    GjOutput *o = nvptx_output(compiled);
    if (!o) return NULL;
    if (!gj_output_ptx(o))
        return PyErr_SetString(PyExc_TypeError, "the kernel was not compiled for the cuda target"), NULL;
    if (gj_compiled_link(compiled)) Py_RETURN_NONE;
    int dev = gj_current_device(), maxt;
    if (gj_cuda_enter(dev) < 0) return NULL;
    unsigned gen = gj_cuda_generation(dev);
    char *info = calloc(1, LOG_SIZE), *err = calloc(1, LOG_SIZE);
    PyObject *image = NULL;
    CUmodule mod;
    CUfunction fn;
    int rc = info && err ? link_load(o, NULL, &mod, info, err, &image) : (PyErr_NoMemory(), -1);
    free(info);
    free(err);
    if (rc < 0 || get_function(o, mod, &fn) < 0 || keep(compiled, dev, gen, mod, &fn, &maxt) < 0) {
        Py_XDECREF(image);
        return NULL;
    }
    return image;
}

/* Loads machine code made by module_cubin (in this process or another, for a device of the
 * same compute capability) as the kernel's module on the current device: no compilation. A
 * driver's refusal (another architecture, a damaged image) is a CudaError; the caller falls
 * back to the PTX. */
static PyObject *py_module_load_cubin(PyObject *self, PyObject *args) {
    PyObject *compiled;
    Py_buffer image;
    if (!PyArg_ParseTuple(args, "Oy*:module_load_cubin", &compiled, &image)) return NULL;
    GjOutput *o = nvptx_output(compiled);
    int dev = gj_current_device(), maxt;
    CUmodule mod;
    CUfunction fn;
    CUresult r = CUDA_SUCCESS;
    int rc = -1;
    if (!o || gj_cuda_enter(dev) < 0) goto out;
    unsigned gen = gj_cuda_generation(dev);
    Py_BEGIN_ALLOW_THREADS r = gj_cu.ModuleLoadDataEx(&mod, image.buf, 0, NULL, NULL);
    Py_END_ALLOW_THREADS
    if (gj_cuda_check(r, "cuModuleLoadDataEx of a cached cubin") < 0 || get_function(o, mod, &fn) < 0) goto out;
    rc = keep(compiled, dev, gen, mod, &fn, &maxt);
out:
    PyBuffer_Release(&image);
    return rc < 0 ? NULL : Py_NewRef(Py_None);
}

/* clang-format off */
static PyMethodDef module_methods[] = {
    {"module_cubin", py_module_cubin, METH_O,
     "module_cubin(compiled) -> bytes: the kernel's cubin for the current device (the driver's linker), "
     "now loaded there; None for a kernel linked with other code"},
    {"module_load_cubin", py_module_load_cubin, METH_VARARGS,
     "module_load_cubin(compiled, cubin): loads a cubin from module_cubin as the kernel's module on the current device"},
    {"kernel_attributes", py_kernel_attributes, METH_O,
     "kernel_attributes(compiled) -> dict(regs_per_thread, max_threads_per_block, shared_bytes, "
     "local_bytes, const_bytes) on the current device"},
    {"max_potential_block", py_max_potential_block, METH_VARARGS,
     "max_potential_block(compiled, dynamic_smem=0) -> (min_grid, block) for full occupancy"},
    {"max_cooperative_grid_blocks", py_max_cooperative_grid_blocks, METH_VARARGS,
     "max_cooperative_grid_blocks(compiled, nthreads, dynamic_smem=0) -> the most blocks a cooperative launch may have"},
    {NULL, NULL, 0, NULL},
};
/* clang-format on */

int gj_module_add(PyObject *m) {
    weak_callback = PyCFunction_New(&weak_cb_def, NULL);
    if (!weak_callback) return -1;
    return PyModule_AddFunctions(m, module_methods);
}
