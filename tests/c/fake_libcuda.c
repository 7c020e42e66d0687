/* A stand-in CUDA driver for testing the runtime's GPU path without a GPU
 * (GPUJIT_LIBCUDA=fake_libcuda.so, GPUJIT_TARGET=cuda). Device memory is host
 * memory and copies are memcpy; kernels do not run: each launch (direct or
 * from a graph) appends its parameters to a log the test reads through
 * fake_log_*. Stream capture follows the driver's rules that gpujit relies on:
 * work on a capturing stream becomes graph nodes, the legacy stream and
 * synchronisation break a capture, a capture mode refuses allocation and
 * module loading on its thread, events recorded in a capture cannot be queried,
 * and an instantiated graph's kernel nodes take new parameters. fake_set_busy(1)
 * makes the device look busy until fake_set_busy(0): queries answer
 * CUDA_ERROR_NOT_READY and the blocking calls (synchronisation, synchronous
 * copies) wait, as a real driver does behind a kernel that runs for ages.
 *
 * Built by tests/test_graph_fake_driver.py: cc -shared -fPIC -o fake_libcuda.so fake_libcuda.c */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
enum {
    OK = 0,
    INVALID_VALUE = 1,
    NOT_FOUND = 500,
    NOT_READY = 600,
    CAPTURE_UNSUPPORTED = 900,
    CAPTURE_INVALIDATED = 901,
    CAPTURE_IMPLICIT = 906,
    CAPTURED_EVENT = 907,
};
enum { MODE_GLOBAL, MODE_THREAD_LOCAL, MODE_RELAXED };
enum { MAX_PARAMS = 64, MAX_NODES = 4096, MAX_STREAMS = 64, MAX_LOG = 100000 };

typedef struct Func {
    char name[128];
    int nparams;
} Func;

typedef struct Node {
    int kind; /* 1 kernel, 2 copy, 3 memset */
    Func *fn;
    unsigned grid[3], block[3];
    uint64_t params[MAX_PARAMS];
    void *dst;
    const void *src;
    size_t n;
} Node;

typedef struct Graph {
    int nnodes;
    Node *nodes[MAX_NODES];
} Graph;

typedef struct Stream {
    int capturing; /* 1 active, 2 invalidated */
    int mode;
    Graph *graph;
    Node *last;
} Stream;

typedef struct Event {
    int captured;
} Event;

static Stream streams[MAX_STREAMS];
static int nstreams;
static __thread int thread_mode = MODE_GLOBAL;
static __thread int thread_capturing; /* captures this thread began that are open */

/* ---- the log of kernel executions, for the test ---- */
typedef struct LogEntry {
    char name[128];
    int nparams;
    uint64_t params[MAX_PARAMS];
    int from_graph;
} LogEntry;
static LogEntry *log_entries;
static int nlog;

int fake_log_count(void) { return nlog; }
const char *fake_log_name(int i) { return log_entries[i].name; }
uint64_t fake_log_param(int i, int j) { return log_entries[i].params[j]; }
int fake_log_nparams(int i) { return log_entries[i].nparams; }
int fake_log_from_graph(int i) { return log_entries[i].from_graph; }
void fake_log_clear(void) { nlog = 0; }

static void log_kernel(const Node *k, int from_graph) {
    if (!log_entries) log_entries = calloc(MAX_LOG, sizeof *log_entries);
    if (nlog >= MAX_LOG) return;
    LogEntry *e = &log_entries[nlog++];
    snprintf(e->name, sizeof e->name, "%s", k->fn->name);
    e->nparams = k->fn->nparams;
    memcpy(e->params, k->params, sizeof e->params);
    e->from_graph = from_graph;
}

static Stream *S(void *h) {
    uintptr_t v = (uintptr_t)h;
    return v > 2 ? (Stream *)h : NULL;
}

static int any_capturing(void) {
    for (int i = 0; i < nstreams; i++)
        if (streams[i].capturing == 1) return 1;
    return 0;
}

static void invalidate_all(void) {
    for (int i = 0; i < nstreams; i++)
        if (streams[i].capturing == 1) streams[i].capturing = 2;
}

/* An unsafe call (allocation, module load) on a thread whose mode forbids it. */
static CUresult unsafe_call(void) {
    if (!any_capturing() || thread_mode == MODE_RELAXED) return OK;
    if (thread_mode == MODE_THREAD_LOCAL && !thread_capturing) return OK;
    invalidate_all();
    return CAPTURE_UNSUPPORTED;
}

/* Work queued on stream h: 1 if captured as `node`, 0 to run now, or an error. */
static CUresult enqueue(void *h, Node *node, int *captured) {
    *captured = 0;
    Stream *s = S(h);
    if (!s) {
        if ((uintptr_t)h != 2 && any_capturing()) { /* the legacy stream syncs with every blocking stream */
            invalidate_all();
            return CAPTURE_IMPLICIT;
        }
        return OK;
    }
    if (s->capturing == 2) return CAPTURE_INVALIDATED;
    if (s->capturing != 1) return OK;
    if (s->graph->nnodes >= MAX_NODES) return INVALID_VALUE;
    Node *n = malloc(sizeof *n);
    *n = *node;
    s->graph->nodes[s->graph->nnodes++] = n;
    s->last = n;
    *captured = 1;
    return OK;
}

/* ---- init, devices, contexts ---- */
CUresult cuInit(unsigned f) { return OK; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return OK; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
CUresult cuDeviceGet(int *d, int i) { *d = i; return OK; }
CUresult cuDeviceGetName(char *b, int n, int d) { snprintf(b, n, "Fake GPU"); return OK; }
CUresult cuDeviceGetAttribute(int *v, int a, int d) {
    switch (a) {
    case 1: case 2: case 3: *v = 1024; break;
    case 4: *v = 64; break;
    case 5: *v = 2147483647; break;
    case 6: case 7: *v = 65535; break;
    case 8: *v = 49152; break;
    case 10: *v = 32; break;
    case 16: *v = 132; break;
    case 75: *v = 9; break;
    case 76: *v = 0; break;
    case 97: *v = 232448; break;
    default: *v = 0;
    }
    return OK;
}
CUresult cuDeviceTotalMem_v2(size_t *b, int d) { *b = (size_t)1 << 34; return OK; }
CUresult cuGetErrorName(CUresult r, const char **s) {
    switch (r) {
    case CAPTURE_UNSUPPORTED: *s = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"; break;
    case CAPTURE_INVALIDATED: *s = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"; break;
    case CAPTURE_IMPLICIT: *s = "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"; break;
    case CAPTURED_EVENT: *s = "CUDA_ERROR_CAPTURED_EVENT"; break;
    case INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
    default: *s = "CUDA_ERROR_FAKE";
    }
    return OK;
}
CUresult cuGetErrorString(CUresult r, const char **s) { *s = "fake driver error"; return OK; }
static int the_ctx;
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { *c = &the_ctx; return OK; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { return OK; }
CUresult cuDevicePrimaryCtxReset_v2(int d) { return OK; }
static __thread void *current;
CUresult cuCtxSetCurrent(void *c) { current = c; return OK; }
CUresult cuCtxGetCurrent(void **c) { *c = current; return OK; }
static volatile int busy;
void fake_set_busy(int b) { busy = b; }
static void wait_idle(void) {
    while (busy) usleep(1000);
}

CUresult cuCtxSynchronize(void) {
    wait_idle();
    if (any_capturing()) {
        invalidate_all();
        return CAPTURE_UNSUPPORTED;
    }
    return OK;
}

/* ---- memory ---- */
CUresult cuMemGetInfo_v2(size_t *f, size_t *t) { *f = *t = (size_t)1 << 34; return OK; }
CUresult cuMemAlloc_v2(uint64_t *p, size_t n) {
    CUresult r = unsafe_call();
    if (r) return r;
    void *q = NULL;
    if (posix_memalign(&q, 256, n ? n : 1)) return 2;
    *p = (uint64_t)(uintptr_t)q;
    return OK;
}
CUresult cuMemFree_v2(uint64_t p) { free((void *)(uintptr_t)p); return OK; }
CUresult cuMemHostAlloc(void **p, size_t n, unsigned f) { return posix_memalign(p, 256, n ? n : 1) ? 2 : OK; }
CUresult cuMemFreeHost(void *p) { free(p); return OK; }
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned f) { return OK; }
CUresult cuMemHostUnregister(void *p) { return OK; }
CUresult cuMemHostGetDevicePointer_v2(uint64_t *d, void *p, unsigned f) { *d = (uint64_t)(uintptr_t)p; return OK; }
CUresult cuProfilerStart(void) { return OK; }
CUresult cuProfilerStop(void) { return OK; }
CUresult cuPointerGetAttribute(void *v, int a, uint64_t p) { *(int *)v = 0; return OK; }

static CUresult copy(void *dst, const void *src, size_t n, void *h, int sync) {
    Node node = {.kind = 2, .dst = dst, .src = src, .n = n};
    int captured;
    CUresult r = sync ? enqueue(NULL, &node, &captured) : enqueue(h, &node, &captured);
    if (r || captured) return r;
    memcpy(dst, src, n);
    return OK;
}
#define P(x) ((void *)(uintptr_t)(x))
CUresult cuMemcpyHtoD_v2(uint64_t d, const void *s, size_t n) { return wait_idle(), copy(P(d), s, n, NULL, 1); }
CUresult cuMemcpyDtoH_v2(void *d, uint64_t s, size_t n) { return wait_idle(), copy(d, P(s), n, NULL, 1); }
CUresult cuMemcpyDtoD_v2(uint64_t d, uint64_t s, size_t n) { return wait_idle(), copy(P(d), P(s), n, NULL, 1); }
CUresult cuMemcpyHtoDAsync_v2(uint64_t d, const void *s, size_t n, void *h) { return copy(P(d), s, n, h, 0); }
CUresult cuMemcpyDtoHAsync_v2(void *d, uint64_t s, size_t n, void *h) { return copy(d, P(s), n, h, 0); }
CUresult cuMemcpyDtoDAsync_v2(uint64_t d, uint64_t s, size_t n, void *h) { return copy(P(d), P(s), n, h, 0); }
CUresult cuMemcpyPeer(uint64_t d, void *dc, uint64_t s, void *sc, size_t n) { return copy(P(d), P(s), n, NULL, 1); }
CUresult cuMemcpyPeerAsync(uint64_t d, void *dc, uint64_t s, void *sc, size_t n, void *h) {
    return copy(P(d), P(s), n, h, 0);
}
CUresult cuMemsetD32Async(uint64_t d, unsigned v, size_t n, void *h) {
    for (size_t i = 0; i < n; i++) ((unsigned *)P(d))[i] = v;
    return OK;
}

/* ---- modules: a function knows its name and parameter count from the PTX ---- */
typedef struct Module {
    char *ptx;
    int nfuncs;
    Func funcs[16];
} Module;

CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned n, int *o, void **v) {
    CUresult r = unsafe_call();
    if (r) return r;
    Module *mod = calloc(1, sizeof *mod);
    mod->ptx = strdup((const char *)image);
    *m = mod;
    return OK;
}
CUresult cuModuleUnload(void *m) { return OK; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
    Module *mod = m;
    char pat[160];
    snprintf(pat, sizeof pat, ".entry %s(", name);
    const char *p = strstr(mod->ptx, pat);
    if (!p || mod->nfuncs >= 16) return NOT_FOUND;
    const char *end = strchr(p, ')');
    Func *fn = &mod->funcs[mod->nfuncs++];
    snprintf(fn->name, sizeof fn->name, "%s", name);
    for (const char *q = p; q && q < end; q = strstr(q + 1, ".param"))
        if (q != p) fn->nparams++;
    *f = fn;
    return OK;
}
CUresult cuFuncGetAttribute(int *v, int a, void *f) { *v = a == 0 ? 1024 : 0; return OK; }
CUresult cuFuncSetAttribute(void *f, int a, int v) { return OK; }
CUresult cuOccupancyMaxPotentialBlockSize(int *g, int *b, void *f, void *fn, size_t s, int l) {
    *g = 132, *b = 1024;
    return OK;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int b, size_t s) { *n = 1; return OK; }
CUresult cuFuncGetModule(void **m, void *f) { return NOT_FOUND; }
CUresult cuModuleGetGlobal_v2(uint64_t *d, size_t *n, void *m, const char *name) { return NOT_FOUND; }

static CUresult launch(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       void *h, void **kp) {
    Func *fn = f;
    Node node = {.kind = 1, .fn = fn, .grid = {gx, gy, gz}, .block = {bx, by, bz}};
    for (int i = 0; i < fn->nparams && i < MAX_PARAMS; i++) memcpy(&node.params[i], kp[i], 8);
    int captured;
    CUresult r = enqueue(h, &node, &captured);
    if (r || captured) return r;
    log_kernel(&node, 0);
    return OK;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void *h, void **kp, void **extra) {
    return launch(f, gx, gy, gz, bx, by, bz, h, kp);
}
CUresult cuLaunchCooperativeKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned smem, void *h, void **kp) {
    return launch(f, gx, gy, gz, bx, by, bz, h, kp);
}

/* ---- streams and events ---- */
CUresult cuStreamCreate(void **h, unsigned f) {
    if (nstreams >= MAX_STREAMS) return 2;
    *h = &streams[nstreams++];
    return OK;
}
CUresult cuStreamDestroy_v2(void *h) { return OK; }
CUresult cuStreamSynchronize(void *h) {
    wait_idle();
    Stream *s = S(h);
    if ((s && s->capturing) || (!s && (uintptr_t)h != 2 && any_capturing())) {
        invalidate_all();
        return CAPTURE_UNSUPPORTED;
    }
    return OK;
}
CUresult cuStreamQuery(void *h) { return busy ? NOT_READY : OK; }
CUresult cuStreamWaitEvent(void *h, void *e, unsigned f) { return OK; }
CUresult cuEventCreate(void **e, unsigned f) { *e = calloc(1, sizeof(Event)); return OK; }
CUresult cuEventRecord(void *e, void *h) {
    Stream *s = S(h);
    ((Event *)e)->captured = s && s->capturing == 1;
    return OK;
}
CUresult cuEventSynchronize(void *e) {
    wait_idle();
    if (((Event *)e)->captured) {
        invalidate_all();
        return CAPTURED_EVENT;
    }
    return OK;
}
CUresult cuEventQuery(void *e) { return busy ? NOT_READY : cuEventSynchronize(e); }
CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b) { *ms = 0; return OK; }
CUresult cuEventDestroy_v2(void *e) { free(e); return OK; }

/* ---- capture and graphs ---- */
CUresult cuStreamBeginCapture_v2(void *h, int mode) {
    Stream *s = S(h);
    if (!s) return CAPTURE_UNSUPPORTED;
    if (s->capturing) return INVALID_VALUE;
    s->capturing = 1;
    s->mode = mode;
    s->graph = calloc(1, sizeof(Graph));
    s->last = NULL;
    thread_capturing++;
    thread_mode = mode;
    return OK;
}
CUresult cuStreamEndCapture(void *h, void **g) {
    Stream *s = S(h);
    *g = NULL;
    if (!s || !s->capturing) return 903;
    int ok = s->capturing == 1;
    s->capturing = 0;
    thread_capturing--;
    thread_mode = MODE_GLOBAL;
    if (!ok) return CAPTURE_INVALIDATED;
    *g = s->graph;
    return OK;
}
CUresult cuStreamIsCapturing(void *h, int *status) {
    Stream *s = S(h);
    *status = s ? s->capturing : 0;
    return OK;
}
CUresult cuStreamGetCaptureInfo_v3(void *h, int *status, uint64_t *id, void **g, const void **deps,
                                   const void **edges, size_t *n) {
    static __thread Node *one;
    Stream *s = S(h);
    *status = s ? s->capturing : 0;
    if (g) *g = s ? s->graph : NULL;
    one = s ? s->last : NULL;
    *deps = one ? (const void *)&one : NULL;
    if (edges) *edges = NULL;
    *n = one ? 1 : 0;
    return OK;
}
CUresult cuThreadExchangeStreamCaptureMode(int *mode) {
    int old = thread_mode;
    thread_mode = *mode;
    *mode = old;
    return OK;
}
CUresult cuGraphInstantiateWithFlags(void **e, void *g, unsigned long long f) {
    Graph *src = g, *x = calloc(1, sizeof *x);
    /* an exec keeps its own copies; nodes are found by the original's handle */
    x->nnodes = src->nnodes;
    for (int i = 0; i < src->nnodes; i++) {
        x->nodes[i] = malloc(sizeof(Node));
        *x->nodes[i] = *src->nodes[i];
    }
    Graph **pair = malloc(2 * sizeof *pair);
    pair[0] = src, pair[1] = x;
    *e = pair;
    return OK;
}
CUresult cuGraphLaunch(void *e, void *h) {
    Graph *x = ((Graph **)e)[1];
    Stream *s = S(h);
    if (s && s->capturing) return CAPTURE_UNSUPPORTED; /* a child graph: not faked */
    for (int i = 0; i < x->nnodes; i++) {
        Node *n = x->nodes[i];
        if (n->kind == 1)
            log_kernel(n, 1);
        else if (n->kind == 2)
            memcpy(n->dst, n->src, n->n);
    }
    return OK;
}
CUresult cuGraphUpload(void *e, void *h) { return OK; }
CUresult cuGraphGetNodes(void *g, void **nodes, size_t *n) {
    *n = ((Graph *)g)->nnodes;
    return OK;
}
typedef struct KernelNodeParams {
    void *func;
    unsigned gx, gy, gz, bx, by, bz, smem;
    void **kp;
    void **extra;
    void *kern, *ctx;
} KernelNodeParams;
CUresult cuGraphExecKernelNodeSetParams_v2(void *e, void *node, const KernelNodeParams *p) {
    Graph *src = ((Graph **)e)[0], *x = ((Graph **)e)[1];
    for (int i = 0; i < src->nnodes; i++)
        if (src->nodes[i] == node) {
            Node *n = x->nodes[i];
            if (n->kind != 1 || p->func != n->fn) return INVALID_VALUE;
            unsigned g[3] = {p->gx, p->gy, p->gz}, b[3] = {p->bx, p->by, p->bz};
            memcpy(n->grid, g, sizeof g);
            memcpy(n->block, b, sizeof b);
            for (int j = 0; j < n->fn->nparams && j < MAX_PARAMS; j++) memcpy(&n->params[j], p->kp[j], 8);
            return OK;
        }
    return INVALID_VALUE;
}
CUresult cuGraphExecDestroy(void *e) { return OK; }
CUresult cuGraphDestroy(void *g) { return OK; }
