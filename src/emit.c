/* emit.c: the back end's shared machinery. A pool of target machines (each
 * target says which machine it wants), LLVM's O3 pipeline, and the two
 * outputs the targets emit with: PTX text, and host machine code through one
 * process-wide ORC LLJIT (each kernel's code lives in its own resource
 * tracker and is removed with its output). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/BitWriter.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "gj.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_targets(void) {
    for (int k = 0; target_for(k); k++) target_for(k)->init();
    /* How much code a loop transform may add to compute a trip count before it gives up.
     * LLVM's default (4) counts a division as too dear, so a grid-stride loop
     * (`while i < n: ...; i += gpu.gridsize(1)`: trips = (n - i) / step) is never
     * runtime-unrolled and keeps one load in flight per thread (0.6 of CUDA C on the
     * H200's float32 sums). NVVM unrolls those loops; 32 lets LLVM do the same. It is a
     * process-wide LLVM option: set once, here, for every target. (A bad or repeated
     * option makes LLVM exit the process: this one exists in LLVM 19, which meson.build
     * requires, and pthread_once sets it once.) */
    const char *argv[] = {"gpujit", "-scev-cheap-expansion-budget=32"};
    LLVMParseCommandLineOptions(2, argv, NULL);
}

int emit_init(void) {
    pthread_once(&init_once, init_targets);
    return 0;
}

/* The processors LLVM 19's NVPTX back end knows (from sm_30: older ones lack
 * the warp-synchronous instructions kernels use), with the oldest PTX ISA
 * each needs. LLVM aborts the process on a processor or PTX version it does
 * not know, so every cc is checked here before it reaches LLVM. */
/* clang-format off */
static const struct { int sm, min_ptx; } known_sm[] = {
    {30, 60}, {32, 60}, {35, 60}, {37, 60}, {50, 60}, {52, 60}, {53, 60}, {60, 60}, {61, 60},
    {62, 60}, {70, 60}, {72, 61}, {75, 63}, {80, 70}, {86, 71}, {87, 74}, {89, 78}, {90, 78},
};
/* clang-format on */
static const int known_ptx[] = {60, 61, 62, 63, 64, 65, 70, 71, 72, 73, 74, 75, 76, 77, 78, 80, 81, 82, 83, 84, 85};
#define NKNOWN_SM (int)(sizeof known_sm / sizeof known_sm[0])

/* known_sm as ((major, minor), ...): what nvvm.get_supported_ccs() and `python -m gpujit info` report. */
PyObject *known_ccs(void) {
    PyObject *t = PyTuple_New(NKNOWN_SM);
    for (int k = 0; t && k < NKNOWN_SM; k++) {
        PyObject *cc = Py_BuildValue("(ii)", known_sm[k].sm / 10, known_sm[k].sm % 10);
        if (!cc) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, k, cc);
    }
    return t;
}

/* A cc newer than LLVM knows compiles for the newest it does: the driver
 * JIT-compiles PTX for newer GPUs, and that PTX's ISA (7.8 for sm_90) is one
 * every driver for them accepts. A cc between two known ones (8.8) compiles
 * for the older. Anything that is no compute capability is a ValueError. */
int check_cc(GjOptions *opt) {
    int major = opt->cc_major, minor = opt->cc_minor;
    if (major < 3 || major > 99 || minor < 0 || minor > 9) {
        PyErr_Format(PyExc_ValueError,
                     "compute capability (%d, %d) is not supported: gpujit compiles for "
                     "3.0 and newer (major >= 3, minor 0 to 9)",
                     major, minor);
        return -1;
    }
    int cc = major * 10 + minor, k = 0;
    /* an architecture-specific target's code runs on that cc alone: no nearest one stands in */
    if (opt->cc_suffix && !(opt->cc_suffix == 'a' && cc == 90)) {
        PyErr_Format(PyExc_ValueError,
                     "compute capability (%d, %d, '%c') is not supported: of the architecture-specific "
                     "targets, gpujit (LLVM 19) compiles for sm_90a, (9, 0, 'a'), only",
                     major, minor, opt->cc_suffix);
        return -1;
    }
    while (k + 1 < NKNOWN_SM && known_sm[k + 1].sm <= cc) k++;
    opt->cc_major = known_sm[k].sm / 10;
    opt->cc_minor = known_sm[k].sm % 10;
    if (opt->ptx_version) {
        bool ok = false;
        for (size_t i = 0; i < sizeof known_ptx / sizeof known_ptx[0]; i++) ok |= known_ptx[i] == opt->ptx_version;
        if (!ok || opt->ptx_version < (opt->cc_suffix ? 80 : known_sm[k].min_ptx)) {
            PyErr_Format(PyExc_ValueError, "PTX ISA version %d.%d is not supported for sm_%d (use %d.%d to 8.5)",
                         opt->ptx_version / 10, opt->ptx_version % 10, known_sm[k].sm, known_sm[k].min_ptx / 10,
                         known_sm[k].min_ptx % 10);
            return -1;
        }
    }
    return 0;
}

/* Target machines are costly to create (a tenth of a small kernel's compile)
 * and are only read while compiling, so finished compilations hand theirs back
 * to a process-wide pool keyed by triple, cpu and features; a compilation on
 * another thread never shares one that is in use. */
typedef struct PooledTM {
    char key[160];
    LLVMTargetMachineRef tm;
    bool busy;
} PooledTM;

static pthread_mutex_t tm_lock = PTHREAD_MUTEX_INITIALIZER;
static PooledTM tm_pool[16];

static LLVMTargetMachineRef tm_acquire(const char *key) {
    LLVMTargetMachineRef tm = NULL;
    pthread_mutex_lock(&tm_lock);
    for (int i = 0; i < 16 && !tm; i++)
        if (tm_pool[i].tm && !tm_pool[i].busy && strcmp(tm_pool[i].key, key) == 0) {
            tm_pool[i].busy = true;
            tm = tm_pool[i].tm;
        }
    pthread_mutex_unlock(&tm_lock);
    return tm;
}

void release_target_machine(LLVMTargetMachineRef tm, const char *key) {
    if (!tm) return;
    pthread_mutex_lock(&tm_lock);
    for (int i = 0; i < 16; i++)
        if (tm_pool[i].tm == tm) {
            tm_pool[i].busy = false;
            pthread_mutex_unlock(&tm_lock);
            return;
        }
    for (int i = 0; i < 16; i++)
        if (!tm_pool[i].tm) {
            snprintf(tm_pool[i].key, sizeof tm_pool[i].key, "%s", key);
            tm_pool[i].tm = tm;
            tm_pool[i].busy = false;
            pthread_mutex_unlock(&tm_lock);
            return;
        }
    pthread_mutex_unlock(&tm_lock);
    LLVMDisposeTargetMachine(tm); /* pool full */
}

/* LLVM's work on a compile's own module (linking, optimisation, code generation) runs without
 * the GIL, so that compiles in several threads use several cores; callers without the GIL (the
 * C tests) keep none. */
PyThreadState *gil_release(void) { return PyGILState_Check() ? PyEval_SaveThread() : NULL; }

void gil_restore(PyThreadState *ts) {
    if (ts) PyEval_RestoreThread(ts);
}

int make_target_machine(Ctx *c) {
    char *err = NULL;
    LLVMTargetRef t;
    MachineSpec m = {.reloc = LLVMRelocDefault, .code_model = LLVMCodeModelDefault};
    c->target->machine(c, &m);
    c->triple = arena_strdup(&c->arena, m.triple);
    /* opt=False: no code generator optimisation either (NVPTX then fuses no FMAs); marked
     * first, as the pool keeps a key's first 159 characters and a host's features run long */
    c->tm_key = arena_printf(&c->arena, "%s%s%s|%s|%s", c->opt.noopt ? "O0|" : "", m.option ? m.option : "",
                             m.triple, m.cpu, m.features);
    if ((c->tm = tm_acquire(c->tm_key))) return 0;
    if (LLVMGetTargetFromTriple(m.triple, &t, &err)) {
        internal_error(c, NO_LOCATION, "emit: no target for %s in this LLVM: %s", m.triple, err ? err : "");
        LLVMDisposeMessage(err);
        return -1;
    }
    /* LLVM's options are process-wide: one lock for setting one, creating the machine that reads it
     * and resetting it (a boolean option may be given again: the last value counts) */
    static pthread_mutex_t option_lock = PTHREAD_MUTEX_INITIALIZER;
    if (m.option) {
        pthread_mutex_lock(&option_lock);
        const char *on[] = {"gpujit", arena_printf(&c->arena, "%s=true", m.option)};
        LLVMParseCommandLineOptions(2, on, NULL);
    }
    c->tm = LLVMCreateTargetMachine(t, m.triple, m.cpu, m.features,
                                    c->opt.noopt ? LLVMCodeGenLevelNone : LLVMCodeGenLevelAggressive, m.reloc,
                                    m.code_model);
    if (m.option) {
        const char *off[] = {"gpujit", arena_printf(&c->arena, "%s=false", m.option)};
        LLVMParseCommandLineOptions(2, off, NULL);
        pthread_mutex_unlock(&option_lock);
    }
    if (!c->tm) return internal_error(c, NO_LOCATION, "emit: could not create a target machine");
    return 0;
}

/* Runs a pass pipeline (LLVM's textual form) over the module; `what` names the step in an
 * internal error. Without the GIL where asked: the module, its context and the target
 * machine are this compile's alone, so other threads may compile meanwhile. */
int run_passes(Ctx *c, const char *pipeline, const char *what, bool without_gil) {
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    PyThreadState *ts = without_gil ? gil_release() : NULL;
    LLVMErrorRef e = LLVMRunPasses(c->mod, pipeline, c->tm, po);
    if (without_gil) gil_restore(ts);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
        char *m = LLVMGetErrorMessage(e);
        internal_error(c, NO_LOCATION, "%s: %s", what, m);
        LLVMDisposeErrorMessage(m);
        return -1;
    }
    return 0;
}

int optimise(Ctx *c) {
    if (c->target->link) STAGE(c->target->link(c));
    /* opt=False: only what O0 does (always-inline), and dropping the library functions
     * nothing calls (libdevice's) */
    RETURN_IF_ERROR(run_passes(c, c->opt.noopt ? "default<O0>,globaldce" : "default<O3>", "optimise", true));
    if (debug_enabled("opt")) {
        char *s = LLVMPrintModuleToString(c->mod);
        fprintf(stderr, "== LLVM IR of %s (optimised)\n%s", c->funcname, s);
        LLVMDisposeMessage(s);
    }
    if (!c->opt.keep_llvm) return 0; /* printing costs a tenth of a small compile */
    char *s = LLVMPrintModuleToString(c->mod);
    c->out->llvm = strdup(s);
    LLVMDisposeMessage(s);
    return 0;
}

int emit_ptx(Ctx *c) {
    char *err = NULL;
    LLVMMemoryBufferRef buf;
    PyThreadState *ts = gil_release(); /* as in optimise() */
    LLVMBool failed = LLVMTargetMachineEmitToMemoryBuffer(c->tm, c->mod, LLVMAssemblyFile, &err, &buf);
    gil_restore(ts);
    if (failed) {
        internal_error(c, NO_LOCATION, "emit: PTX generation failed: %s", err ? err : "");
        LLVMDisposeMessage(err);
        return -1;
    }
    size_t n = LLVMGetBufferSize(buf);
    c->out->ptx = malloc(n + 1);
    memcpy(c->out->ptx, LLVMGetBufferStart(buf), n);
    c->out->ptx[n] = 0;
    LLVMDisposeMemoryBuffer(buf);
    if (debug_enabled("ptx")) fprintf(stderr, "== PTX of %s\n%s", c->funcname, c->out->ptx);
    return 0;
}

/* ---- the host JIT: one per process, behind a lock ---- */

static pthread_mutex_t jit_lock = PTHREAD_MUTEX_INITIALIZER;
static LLVMOrcLLJITRef jit;

static int jit_error(Ctx *c, LLVMErrorRef e, const char *what) {
    char *m = LLVMGetErrorMessage(e);
    internal_error(c, NO_LOCATION, "host JIT: %s: %s", what, m);
    LLVMDisposeErrorMessage(m);
    return -1;
}

/* Symbols the JIT's code may call that the process does not show it: gpujit's own extension
 * is loaded privately (RTLD_LOCAL), so what it carries is defined here by address, in `jd`. */
static void define_absolute(LLVMOrcJITDylibRef jd, const char *const *names, void *const *addrs, size_t n) {
    LLVMOrcCSymbolMapPairs pairs = malloc((n ? n : 1) * sizeof *pairs);
    if (!pairs) return;
    for (size_t i = 0; i < n; i++) {
        pairs[i].Name = LLVMOrcLLJITMangleAndIntern(jit, names[i]);
        pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)addrs[i];
        pairs[i].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
        pairs[i].Sym.Flags.TargetFlags = 0;
    }
    LLVMErrorRef e = LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(pairs, n));
    if (e) LLVMConsumeError(e);
    free(pairs);
}

/* The CPU's libdevice functions under libdevice's names (__nv_sinf ...), so a kernel calls
 * them as on the GPU, and its cached code finds them again in another process. */
static void define_cpu_libdevice(LLVMOrcJITDylibRef jd) {
    size_t n = cpu_libdevice_count();
    char (*sym)[96] = malloc((n ? n : 1) * sizeof *sym);
    const char **names = malloc((n ? n : 1) * sizeof *names);
    void **addrs = malloc((n ? n : 1) * sizeof *addrs);
    if (sym && names && addrs) {
        for (size_t i = 0; i < n; i++) {
            snprintf(sym[i], sizeof sym[i], "__nv_%s", cpu_libdevice_name(i, &addrs[i]));
            names[i] = sym[i];
        }
        define_absolute(jd, names, addrs, n);
    }
    free(sym);
    free(names);
    free(addrs);
}

/* The compiler runtime's 128-bit division, which x86-64 code generation calls for i128
 * division (LLVM's passes may widen a 64-bit one: seen with CPython 3.12's bytecode of a
 * fuzzer program); from libgcc, linked into the extension. */
extern __int128 __divti3(__int128, __int128);
extern __int128 __modti3(__int128, __int128);
extern unsigned __int128 __udivti3(unsigned __int128, unsigned __int128);
extern unsigned __int128 __umodti3(unsigned __int128, unsigned __int128);

static void define_compiler_runtime(LLVMOrcJITDylibRef jd) {
    static const char *const names[] = {"__divti3", "__modti3", "__udivti3", "__umodti3"};
    void *const addrs[] = {(void *)__divti3, (void *)__modti3, (void *)__udivti3, (void *)__umodti3};
    define_absolute(jd, names, addrs, sizeof names / sizeof names[0]);
}

/* What every library of the JIT resolves beyond its own code: the process's symbols (libm),
 * the CPU's libdevice functions, the compiler runtime's and the executor's stop flag. */
static void define_externals(LLVMOrcJITDylibRef jd) {
    LLVMOrcDefinitionGeneratorRef gen;
    LLVMErrorRef e;
    char prefix = LLVMOrcLLJITGetGlobalPrefix(jit);
    if (!(e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, prefix, NULL, NULL)))
        LLVMOrcJITDylibAddGenerator(jd, gen);
    else
        LLVMConsumeError(e);
    define_cpu_libdevice(jd);
    define_compiler_runtime(jd);
    static const char *const stop_names[] = {GJ_CPU_STOP_FLAG, GJ_CPU_STOP_FN};
    void *const stop_addrs[] = {(void *)&gpujit_cpu_stop, (void *)gpujit_cpu_stopped};
    define_absolute(jd, stop_names, stop_addrs, 2);
}

/* The kernel whose module the calling thread is compiling with keep_bitcode (emit_host, under
 * jit_lock): the JIT compiles in place on the thread that looks a symbol up. */
static _Thread_local GjOutput *capture_into;

/* Every object the JIT makes passes here: a kept kernel's is copied for the on-disk cache,
 * whose next process links it without generating code again. */
static LLVMErrorRef capture_object(void *unused, LLVMMemoryBufferRef *obj) {
    GjOutput *o = capture_into;
    (void)unused;
    if (o && !o->object) {
        size_t n = LLVMGetBufferSize(*obj);
        if ((o->object = malloc(n ? n : 1))) {
            memcpy(o->object, LLVMGetBufferStart(*obj), n);
            o->object_len = n;
        }
    }
    return NULL;
}

/* The process's JIT, made on first use; called with jit_lock held. */
static int jit_create(Ctx *c) {
    LLVMErrorRef e;
    if (jit) return 0;
    if ((e = LLVMOrcCreateLLJIT(&jit, NULL))) {
        jit = NULL;
        return jit_error(c, e, "create");
    }
    define_externals(LLVMOrcLLJITGetMainJITDylib(jit));
    LLVMOrcObjectTransformLayerSetTransform(LLVMOrcLLJITGetObjTransformLayer(jit), capture_object, NULL);
    return 0;
}

int emit_host(Ctx *c) {
    pthread_mutex_lock(&jit_lock);
    LLVMErrorRef e;
    if (jit_create(c) < 0) {
        pthread_mutex_unlock(&jit_lock);
        return -1;
    }
    LLVMOrcJITDylibRef dylib = LLVMOrcLLJITGetMainJITDylib(jit);
    LLVMOrcResourceTrackerRef rt = LLVMOrcJITDylibCreateResourceTracker(dylib);
    if (c->opt.keep_bitcode && !c->out->bitcode) {
        LLVMMemoryBufferRef buf = LLVMWriteBitcodeToMemoryBuffer(c->mod);
        size_t n = LLVMGetBufferSize(buf);
        if ((c->out->bitcode = malloc(n ? n : 1))) {
            memcpy(c->out->bitcode, LLVMGetBufferStart(buf), n);
            c->out->bitcode_len = n;
        }
        LLVMDisposeMemoryBuffer(buf);
    }
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(c->mod, c->tsc);
    c->mod = NULL; /* owned by the JIT now */
    if ((e = LLVMOrcLLJITAddLLVMIRModuleWithRT(jit, rt, tsm))) {
        LLVMOrcReleaseResourceTracker(rt);
        pthread_mutex_unlock(&jit_lock);
        return jit_error(c, e, "add module");
    }
    LLVMOrcExecutorAddress ab = 0, at = 0;
    capture_into = c->opt.keep_bitcode ? c->out : NULL; /* the lookup compiles the module */
    e = LLVMOrcLLJITLookup(jit, &ab, arena_printf(&c->arena, "%s_block", c->symbol));
    if (!e) e = LLVMOrcLLJITLookup(jit, &at, arena_printf(&c->arena, "%s_thread", c->symbol));
    capture_into = NULL;
    pthread_mutex_unlock(&jit_lock);
    if (e) {
        LLVMOrcResourceTrackerRemove(rt);
        LLVMOrcReleaseResourceTracker(rt);
        return jit_error(c, e, "lookup");
    }
    c->out->host_block_fn = (void *)(uintptr_t)ab;
    c->out->host_thread_fn = (void *)(uintptr_t)at;
    c->out->jit = rt;
    return 0;
}

/* The result of a lookup in a cached kernel's library. */
typedef struct Found {
    int done;
    LLVMErrorRef err;
    LLVMOrcSymbolStringPoolEntryRef name[2];
    LLVMOrcExecutorAddress addr[2];
} Found;

static void found(LLVMErrorRef err, LLVMOrcCSymbolMapPairs res, size_t n, void *ctx) {
    Found *f = ctx;
    f->err = err;
    for (size_t i = 0; !err && i < n; i++)
        for (int k = 0; k < 2; k++)
            if (res[i].Name == f->name[k]) f->addr[k] = res[i].Sym.Address;
    f->done = 1;
}

/* A cached kernel's object code (c->out->object, made by capture_object in the process that
 * compiled it) linked into the JIT: no code generation. Each goes into a library of its own,
 * since its symbols are the compiling process's (another kernel's, or the same kernel loaded
 * twice, may have the same names); the library resolves what the main one does. A ValueError
 * if the object does not link (the caller then loads the bitcode). */
int emit_host_object(Ctx *c) {
    GjOutput *o = c->out;
    static unsigned seq;
    pthread_mutex_lock(&jit_lock);
    if (jit_create(c) < 0) {
        pthread_mutex_unlock(&jit_lock);
        return -1;
    }
    char *name = arena_printf(&c->arena, "gpujit cached %s %u", o->symbol, ++seq);
    LLVMOrcJITDylibRef jd = LLVMOrcExecutionSessionCreateBareJITDylib(LLVMOrcLLJITGetExecutionSession(jit), name);
    define_externals(jd);
    LLVMOrcResourceTrackerRef rt = LLVMOrcJITDylibCreateResourceTracker(jd);
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(o->object, o->object_len, name);
    LLVMErrorRef e = LLVMOrcLLJITAddObjectFileWithRT(jit, rt, buf); /* owns buf */
    Found *f = calloc(1, sizeof *f);
    int started = !e && f;
    if (started) {
        LLVMOrcCLookupSetElement syms[2];
        LLVMOrcCJITDylibSearchOrderElement order = {jd, LLVMOrcJITDylibLookupFlagsMatchAllSymbols};
        for (int k = 0; k < 2; k++) {
            f->name[k] = LLVMOrcLLJITMangleAndIntern(
                    jit, arena_printf(&c->arena, "%s_%s", o->symbol, k ? "thread" : "block"));
            syms[k] = (LLVMOrcCLookupSetElement){f->name[k], LLVMOrcSymbolLookupFlagsRequiredSymbol};
        }
        LLVMOrcExecutionSessionLookup(LLVMOrcLLJITGetExecutionSession(jit), LLVMOrcLookupKindStatic, &order, 1, syms, 2,
                                      found, f);
    }
    pthread_mutex_unlock(&jit_lock);
    char *msg = NULL;
    if (e || (f && f->err)) {
        msg = LLVMGetErrorMessage(e ? e : f->err);
        PyErr_Format(PyExc_ValueError, "cached kernel: its object code does not link: %s", msg);
        LLVMDisposeErrorMessage(msg);
    } else if (!f) {
        PyErr_NoMemory();
    } else if (!f->done || !f->addr[0] || !f->addr[1]) {
        /* a lookup run elsewhere (not how this process's JIT is set up) */
        PyErr_SetString(PyExc_ValueError, "cached kernel: its object code's lookup did not complete");
    } else {
        o->host_block_fn = (void *)(uintptr_t)f->addr[0];
        o->host_thread_fn = (void *)(uintptr_t)f->addr[1];
        o->jit = rt;
        free(f);
        return 0;
    }
    if (!started || f->done) free(f); /* a lookup still running owns its Found */
    pthread_mutex_lock(&jit_lock);
    LLVMErrorRef r = LLVMOrcResourceTrackerRemove(rt);
    if (r) LLVMConsumeError(r);
    LLVMOrcReleaseResourceTracker(rt);
    pthread_mutex_unlock(&jit_lock);
    return -1;
}

void host_jit_release(void *tracker) {
    if (!tracker) return;
    pthread_mutex_lock(&jit_lock);
    LLVMErrorRef e = LLVMOrcResourceTrackerRemove(tracker);
    if (e) LLVMConsumeError(e);
    LLVMOrcReleaseResourceTracker(tracker);
    pthread_mutex_unlock(&jit_lock);
}
