/* emit.c: the back end. Target machines, LLVM's O3 pipeline, libdevice
 * linking for the GPU, PTX text, and host machine code through one
 * process-wide ORC LLJIT (each kernel's code lives in its own resource
 * tracker and is removed with its output). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "gj.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_targets(void) {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
    /* How much code a loop transform may add to compute a trip count before it gives up.
     * LLVM's default (4) counts a division as too dear, so a grid-stride loop
     * (`while i < n: ...; i += gpu.gridsize(1)`: trips = (n - i) / step) is never
     * runtime-unrolled and keeps one load in flight per thread (0.6 of CUDA C on the
     * H200's float32 sums). NVVM unrolls those loops; 32 lets LLVM do the same. It is a
     * process-wide LLVM option: set once, here, for both targets. (A bad or repeated
     * option makes LLVM exit the process: this one exists in LLVM 19, which meson.build
     * requires, and pthread_once sets it once.) */
    const char *argv[] = {"gpujit", "-scev-cheap-expansion-budget=32"};
    LLVMParseCommandLineOptions(2, argv, NULL);
}

int emit_init(void) {
    pthread_once(&init_once, init_targets);
    return 0;
}

/* PTX ISA for the cc: sm_90 needs 7.8 (CUDA 11.8+ drivers). */
static int default_ptx(int cc) { return cc >= 90 ? 78 : cc >= 89 ? 78 : cc >= 80 ? 70 : 64; }

/* The processors LLVM 19's NVPTX back end knows (from sm_30: older ones lack
 * the warp-synchronous instructions kernels use), with the oldest PTX ISA
 * each needs. LLVM aborts the process on a processor or PTX version it does
 * not know, so every cc is checked here before it reaches LLVM. */
static const struct { int sm, min_ptx; } known_sm[] = {
    {30, 60}, {32, 60}, {35, 60}, {37, 60}, {50, 60}, {52, 60}, {53, 60}, {60, 60}, {61, 60},
    {62, 60}, {70, 60}, {72, 61}, {75, 63}, {80, 70}, {86, 71}, {87, 74}, {89, 78}, {90, 78},
};
static const int known_ptx[] = {60, 61, 62, 63, 64, 65, 70, 71, 72, 73, 74, 75, 76, 77, 78, 80, 81, 82, 83, 84, 85};
#define NKNOWN_SM (int)(sizeof known_sm / sizeof known_sm[0])

/* A cc newer than LLVM knows compiles for the newest it does: the driver
 * JIT-compiles PTX for newer GPUs, and that PTX's ISA (7.8 for sm_90) is one
 * every driver for them accepts. A cc between two known ones (8.8) compiles
 * for the older. Anything that is no compute capability is a ValueError. */
int check_cc(GjOptions *opt) {
    int major = opt->cc_major, minor = opt->cc_minor;
    if (major < 3 || major > 99 || minor < 0 || minor > 9) {
        PyErr_Format(PyExc_ValueError, "compute capability (%d, %d) is not supported: gpujit compiles for "
                     "3.0 and newer (major >= 3, minor 0 to 9)", major, minor);
        return -1;
    }
    int cc = major * 10 + minor, k = 0;
    while (k + 1 < NKNOWN_SM && known_sm[k + 1].sm <= cc) k++;
    opt->cc_major = known_sm[k].sm / 10;
    opt->cc_minor = known_sm[k].sm % 10;
    if (opt->ptx_version) {
        bool ok = false;
        for (size_t i = 0; i < sizeof known_ptx / sizeof known_ptx[0]; i++) ok |= known_ptx[i] == opt->ptx_version;
        if (!ok || opt->ptx_version < known_sm[k].min_ptx) {
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

int make_target_machine(Ctx *c) {
    char *err = NULL;
    LLVMTargetRef t;
    const char *triple, *cpu, *feat; /* in the arena: a host's feature list runs to ~900 bytes and grows */
    char *host_triple = NULL, *host_cpu = NULL, *host_feat = NULL;
    if (c->opt.target == GJ_TARGET_NVPTX) {
        int cc = c->opt.cc_major * 10 + c->opt.cc_minor;
        triple = "nvptx64-nvidia-cuda";
        cpu = arena_printf(&c->arena, "sm_%d", cc);
        feat = arena_printf(&c->arena, "+ptx%d", c->opt.ptx_version ? c->opt.ptx_version : default_ptx(cc));
    } else {
        host_triple = LLVMGetDefaultTargetTriple();
        host_cpu = LLVMGetHostCPUName();
        host_feat = LLVMGetHostCPUFeatures();
        triple = arena_strdup(&c->arena, host_triple);
        cpu = arena_strdup(&c->arena, host_cpu);
        feat = arena_strdup(&c->arena, host_feat);
        LLVMDisposeMessage(host_triple);
        LLVMDisposeMessage(host_cpu);
        LLVMDisposeMessage(host_feat);
        c->triple = triple;
    }
    c->tm_key = arena_printf(&c->arena, "%s|%s|%.100s", triple, cpu, feat);
    if ((c->tm = tm_acquire(c->tm_key))) return 0;
    if (LLVMGetTargetFromTriple(triple, &t, &err)) {
        internal_error(c, NO_LOCATION, "emit: no target for %s in this LLVM: %s", triple, err ? err : "");
        LLVMDisposeMessage(err);
        return -1;
    }
    bool host = c->opt.target == GJ_TARGET_HOST;
    c->tm = LLVMCreateTargetMachine(t, triple, cpu, feat, LLVMCodeGenLevelAggressive,
                                    host ? LLVMRelocPIC : LLVMRelocDefault,
                                    host ? LLVMCodeModelJITDefault : LLVMCodeModelDefault);
    if (!c->tm) return internal_error(c, NO_LOCATION, "emit: could not create a target machine");
    return 0;
}

/* libdevice.10.bc: $GPUJIT_LIBDEVICE, then the CUDA toolkit's usual places. */
static const char *find_libdevice(void) {
    static char path[4096];
    const char *env = getenv("GPUJIT_LIBDEVICE");
    if (env && access(env, R_OK) == 0) return env;
    const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda", "/usr/lib/cuda",
                           "/usr/local/cuda-13.0", "/usr/local/cuda-12"};
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        if (!roots[i]) continue;
        snprintf(path, sizeof path, "%s/nvvm/libdevice/libdevice.10.bc", roots[i]);
        if (access(path, R_OK) == 0) return path;
    }
    return NULL;
}

static int link_libdevice(Ctx *c) {
    const char *path = find_libdevice();
    if (!path)
        return error_at(c, ERR_COMPILE, NO_LOCATION,
                        "this kernel needs CUDA's libdevice (math functions), which was not found: "
                        "set GPUJIT_LIBDEVICE to libdevice.10.bc or CUDA_HOME");
    LLVMMemoryBufferRef buf;
    char *err = NULL;
    if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &err)) {
        error_at(c, ERR_COMPILE, NO_LOCATION, "cannot read %s: %s", path, err ? err : "");
        LLVMDisposeMessage(err);
        return -1;
    }
    LLVMModuleRef lib;
    /* not ...InContext2: it reports a bad file through the context's default
     * diagnostic handler, which exits the process */
    int bad = LLVMParseBitcodeInContext(c->llctx, buf, &lib, &err);
    LLVMDisposeMemoryBuffer(buf);
    if (bad) {
        error_at(c, ERR_COMPILE, NO_LOCATION, "cannot parse %s as libdevice: %s", path, err ? err : "");
        LLVMDisposeMessage(err);
        return -1;
    }
    LLVMSetTarget(lib, LLVMGetTarget(c->mod));
    LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(c->mod));
    if (LLVMLinkModules2(c->mod, lib)) return internal_error(c, NO_LOCATION, "emit: linking libdevice failed");
    /* keep only the kernel visible, so O3 drops what we do not call */
    for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f))
        if (!LLVMIsDeclaration(f) && f != c->fn) LLVMSetLinkage(f, LLVMInternalLinkage);
    for (LLVMValueRef g = LLVMGetFirstGlobal(c->mod); g; g = LLVMGetNextGlobal(g))
        if (!LLVMIsDeclaration(g)) LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMAddModuleFlag(c->mod, LLVMModuleFlagBehaviorOverride, "nvvm-reflect-ftz", 16,
                      LLVMValueAsMetadata(LLVMConstInt(c->i32, c->opt.fastmath ? 1 : 0, 0)));
    return 0;
}

int optimise(Ctx *c) {
    if (c->needs_libdevice) RETURN_IF_ERROR(link_libdevice(c));
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = LLVMRunPasses(c->mod, "default<O3>", c->tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
        char *m = LLVMGetErrorMessage(e);
        internal_error(c, NO_LOCATION, "optimise: %s", m);
        LLVMDisposeErrorMessage(m);
        return -1;
    }
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
    if (LLVMTargetMachineEmitToMemoryBuffer(c->tm, c->mod, LLVMAssemblyFile, &err, &buf)) {
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

int emit_host(Ctx *c) {
    pthread_mutex_lock(&jit_lock);
    LLVMErrorRef e;
    if (!jit) {
        if ((e = LLVMOrcCreateLLJIT(&jit, NULL))) {
            jit = NULL;
            pthread_mutex_unlock(&jit_lock);
            return jit_error(c, e, "create");
        }
        LLVMOrcDefinitionGeneratorRef gen;
        char prefix = LLVMOrcLLJITGetGlobalPrefix(jit);
        if (!(e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, prefix, NULL, NULL)))
            LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(jit), gen);
        else
            LLVMConsumeError(e);
    }
    LLVMOrcJITDylibRef dylib = LLVMOrcLLJITGetMainJITDylib(jit);
    LLVMOrcResourceTrackerRef rt = LLVMOrcJITDylibCreateResourceTracker(dylib);
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(c->mod, c->tsc);
    c->mod = NULL; /* owned by the JIT now */
    if ((e = LLVMOrcLLJITAddLLVMIRModuleWithRT(jit, rt, tsm))) {
        LLVMOrcReleaseResourceTracker(rt);
        pthread_mutex_unlock(&jit_lock);
        return jit_error(c, e, "add module");
    }
    LLVMOrcExecutorAddress ab = 0, at = 0;
    e = LLVMOrcLLJITLookup(jit, &ab, arena_printf(&c->arena, "%s_block", c->symbol));
    if (!e) e = LLVMOrcLLJITLookup(jit, &at, arena_printf(&c->arena, "%s_thread", c->symbol));
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

void host_jit_release(void *tracker) {
    if (!tracker) return;
    pthread_mutex_lock(&jit_lock);
    LLVMErrorRef e = LLVMOrcResourceTrackerRemove(tracker);
    if (e) LLVMConsumeError(e);
    LLVMOrcReleaseResourceTracker(tracker);
    pthread_mutex_unlock(&jit_lock);
}
