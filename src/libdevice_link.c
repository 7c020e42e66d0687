/* libdevice_link.c: CUDA's libdevice (the GPU target's math functions), read and parsed once
 * per process. A kernel gets the libdevice functions it calls as one small bitcode module
 * that holds them and what they call: a piece, made on first use for that set of functions
 * and then cached, so a compile parses and links a few functions instead of all of
 * libdevice (that was most of a math kernel's compile time). A piece is made for the exact
 * set, never assembled from pieces made for others, so a kernel's PTX does not depend on
 * what the process compiled before it. All of it runs under one lock (compiles may run in
 * several threads at once); libdevice's own module lives in a context of its own. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "gj.h"

typedef struct Piece {
    char *path, *key; /* which libdevice file; the functions' names, sorted, joined by ' ', then
                       * whether it was simplified and for which flag and target machine */
    char *bc;         /* the bitcode */
    size_t n;
    struct Piece *next;
} Piece;

#define REFLECT_FTZ "nvvm-reflect-ftz"

static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static char *lib_path;       /* the file lib_mod was read from */
static LLVMModuleRef lib_mod; /* in its own context, kept for the process */
static Piece *pieces;        /* never freed: compiles in other threads may be reading one */

/* Reads and parses `path` unless it is the file already loaded. Under lib_lock. */
static int load(Ctx *c, const char *path) {
    if (lib_mod && strcmp(lib_path, path) == 0) return 0;
    LLVMMemoryBufferRef buf;
    char *err = NULL;
    if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &err)) {
        error_at(c, ERR_COMPILE, NO_LOCATION, "cannot read %s: %s", path, err ? err : "");
        LLVMDisposeMessage(err);
        return -1;
    }
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef mod;
    /* not ...InContext2: it reports a bad file through the context's default
     * diagnostic handler, which exits the process */
    int bad = LLVMParseBitcodeInContext(ctx, buf, &mod, &err);
    LLVMDisposeMemoryBuffer(buf);
    if (bad) {
        error_at(c, ERR_COMPILE, NO_LOCATION, "cannot parse %s as libdevice: %s", path, err ? err : "");
        LLVMDisposeMessage(err);
        LLVMContextDispose(ctx);
        return -1;
    }
    /* a different file than before (GPUJIT_LIBDEVICE changed): the old module and its
     * context stay, as pieces made from it may still be in use */
    lib_mod = mod;
    free(lib_path);
    lib_path = strdup(path);
    return lib_path ? 0 : internal_error(c, NO_LOCATION, "out of memory");
}

/* The functions marked in `keep` (indexed by position in the module's function list,
 * `fns`) and all they call, transitively, marked in `keep`. */
static int closure(Ctx *c, LLVMValueRef *fns, size_t nfns, unsigned char *keep) {
    LLVMValueRef *work = malloc((nfns + 1) * sizeof *work);
    if (!work) return internal_error(c, NO_LOCATION, "out of memory");
    size_t top = 0;
    for (size_t i = 0; i < nfns; i++)
        if (keep[i]) work[top++] = fns[i];
    while (top) {
        LLVMValueRef f = work[--top];
        for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
            for (LLVMValueRef in = LLVMGetFirstInstruction(b); in; in = LLVMGetNextInstruction(in)) {
                if (!LLVMIsACallInst(in)) continue;
                LLVMValueRef callee = LLVMGetCalledValue(in);
                if (!LLVMIsAFunction(callee) || LLVMIsDeclaration(callee)) continue;
                for (size_t i = 0; i < nfns; i++)
                    if (fns[i] == callee && !keep[i]) {
                        keep[i] = 1;
                        work[top++] = callee;
                    }
            }
    }
    free(work);
    return 0;
}

/* The piece for the functions names[0..n-1]: a copy of libdevice cut down to them and their
 * callees. Under lib_lock. */
static const Piece *make_piece(Ctx *c, const char *key, const char **names, size_t n, bool simplify) {
    LLVMModuleRef m = LLVMCloneModule(lib_mod);
    size_t nfns = 0, i;
    for (LLVMValueRef g = LLVMGetFirstFunction(m); g; g = LLVMGetNextFunction(g)) nfns++;
    LLVMValueRef *fns = malloc((nfns + 1) * sizeof *fns);
    unsigned char *keep = calloc(nfns + 1, 1);
    Piece *p = calloc(1, sizeof *p);
    if (!fns || !keep || !p || !(p->path = strdup(lib_path)) || !(p->key = strdup(key))) goto oom;
    i = 0;
    for (LLVMValueRef g = LLVMGetFirstFunction(m); g; g = LLVMGetNextFunction(g), i++) {
        fns[i] = g;
        if (LLVMIsDeclaration(g)) continue;
        for (size_t k = 0; k < n; k++)
            if (strcmp(LLVMGetValueName(g), names[k]) == 0) keep[i] = 1;
    }
    if (closure(c, fns, nfns, keep) < 0) goto fail;
    /* delete what is not kept, callers before callees (each pass drops the functions
     * nothing uses any more), then the globals nothing uses */
    for (int dropped = 1; dropped;) {
        dropped = 0;
        for (i = 0; i < nfns; i++)
            if (fns[i] && !keep[i] && !LLVMGetFirstUse(fns[i])) {
                LLVMDeleteFunction(fns[i]);
                fns[i] = NULL;
                dropped = 1;
            }
    }
    for (int dropped = 1; dropped;) {
        dropped = 0;
        for (LLVMValueRef g = LLVMGetFirstGlobal(m), next; g; g = next) {
            next = LLVMGetNextGlobal(g);
            if (!LLVMGetFirstUse(g)) {
                LLVMDeleteGlobal(g);
                dropped = 1;
            }
        }
    }
    if (simplify) {
        /* what every compile's O3 would first do to these functions, done once: O0's
         * pipeline resolves libdevice's __nvvm_reflect queries (the processor, and flushing
         * denormals where the kernel's flag says so: that flag goes with the piece) and
         * inlines its helpers; simplifycfg then drops the branches the answers decided.
         * O3 makes the same PTX of the result (checked over the test suite's math
         * kernels) and has a third less code to work through. */
        LLVMSetTarget(m, c->triple);
        LLVMSetDataLayout(m, LLVMGetDataLayoutStr(c->mod));
        LLVMAddModuleFlag(m, LLVMModuleFlagBehaviorOverride, REFLECT_FTZ, strlen(REFLECT_FTZ),
                          LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(LLVMGetModuleContext(m)),
                                                           c->opt.fastmath ? 1 : 0, 0)));
        LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
        LLVMErrorRef e = LLVMRunPasses(m, "default<O0>,function(simplifycfg)", c->tm, po);
        LLVMDisposePassBuilderOptions(po);
        if (e) {
            char *msg = LLVMGetErrorMessage(e);
            internal_error(c, NO_LOCATION, "libdevice: simplifying a piece: %s", msg);
            LLVMDisposeErrorMessage(msg);
            goto fail;
        }
    }
    LLVMMemoryBufferRef buf = LLVMWriteBitcodeToMemoryBuffer(m);
    p->n = LLVMGetBufferSize(buf);
    p->bc = malloc(p->n);
    if (p->bc) memcpy(p->bc, LLVMGetBufferStart(buf), p->n);
    LLVMDisposeMemoryBuffer(buf);
    if (!p->bc) goto oom;
    free(fns);
    free(keep);
    LLVMDisposeModule(m);
    p->next = pieces;
    pieces = p;
    return p;
oom:
    internal_error(c, NO_LOCATION, "out of memory");
fail:
    free(fns);
    free(keep);
    if (p) {
        free(p->path);
        free(p->key);
        free(p);
    }
    LLVMDisposeModule(m);
    return NULL;
}

static int by_name(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* The names of the libdevice functions c->mod declares (math_fn and friends declared them),
 * in the arena. */
static const char **declared(Ctx *c, size_t *n) {
    size_t k = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f)) k++;
    const char **names = arena_alloc(&c->arena, (k + 1) * sizeof *names);
    if (!names) return NULL;
    *n = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f))
        if (LLVMIsDeclaration(f) && strncmp(LLVMGetValueName(f), "__nv_", 5) == 0) names[(*n)++] = LLVMGetValueName(f);
    return names;
}

int libdevice_link(Ctx *c, const char *path) {
    size_t n, len = 1;
    const char **names = declared(c, &n);
    if (!names) return internal_error(c, NO_LOCATION, "out of memory");
    if (n == 0) return 0;
    qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) len += strlen(names[i]) + 1;
    /* opt=False: the functions as libdevice has them (O0 and no more) */
    bool simplify = !c->opt.noopt;
    len += strlen(c->tm_key) + 5;
    char *key = arena_alloc(&c->arena, len);
    if (!key) return internal_error(c, NO_LOCATION, "out of memory");
    for (size_t i = 0; i < n; i++) {
        strcat(key, names[i]);
        if (i + 1 < n) strcat(key, " ");
    }
    strcat(key, !simplify ? "|-|" : c->opt.fastmath ? "|S1|" : "|S0|");
    strcat(key, c->tm_key);
    pthread_mutex_lock(&lib_lock);
    const Piece *p = NULL;
    int rc = load(c, path);
    if (rc == 0) {
        for (p = pieces; p; p = p->next)
            if (strcmp(p->key, key) == 0 && strcmp(p->path, lib_path) == 0) break;
        if (!p && !(p = make_piece(c, key, names, n, simplify))) rc = -1;
    }
    pthread_mutex_unlock(&lib_lock);
    if (rc < 0) return -1;
    /* a piece is immutable once made: parse and link it without the lock, and without the GIL
     * (the piece's bytes are never freed, the module and context are this compile's alone).
     * A function libdevice lacks stays declared, and ptxas names it. */
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRange(p->bc, p->n, "libdevice", 0);
    LLVMModuleRef m;
    char *err = NULL;
    PyThreadState *ts = gil_release();
    bool bad_parse = LLVMParseBitcodeInContext(c->llctx, buf, &m, &err), bad_link = false;
    if (!bad_parse) {
        LLVMSetTarget(m, LLVMGetTarget(c->mod));
        LLVMSetDataLayout(m, LLVMGetDataLayoutStr(c->mod));
        bad_link = LLVMLinkModules2(c->mod, m);
    }
    LLVMDisposeMemoryBuffer(buf);
    gil_restore(ts);
    if (bad_parse) {
        rc = internal_error(c, NO_LOCATION, "libdevice: cannot parse the piece for %s: %s", key, err ? err : "");
        LLVMDisposeMessage(err);
    } else if (bad_link) {
        rc = internal_error(c, NO_LOCATION, "emit: linking libdevice failed");
    }
    return rc;
}
