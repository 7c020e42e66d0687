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
}

int emit_init(void) {
    pthread_once(&init_once, init_targets);
    return 0;
}

/* PTX ISA for the cc: sm_90 needs 7.8 (CUDA 11.8+ drivers). */
static int default_ptx(int cc) { return cc >= 90 ? 78 : cc >= 89 ? 78 : cc >= 80 ? 70 : 64; }

int make_target_machine(Ctx *c) {
    char *err = NULL;
    LLVMTargetRef t;
    if (c->opt.target == GJ_TARGET_NVPTX) {
        if (LLVMGetTargetFromTriple("nvptx64-nvidia-cuda", &t, &err)) {
            internal_error(c, NO_LOCATION, "emit: no NVPTX target in this LLVM: %s", err ? err : "");
            LLVMDisposeMessage(err);
            return -1;
        }
        int cc = c->opt.cc_major * 10 + c->opt.cc_minor;
        int ptx = c->opt.ptx_version ? c->opt.ptx_version : default_ptx(cc);
        char cpu[32], feat[32];
        snprintf(cpu, sizeof cpu, "sm_%d", cc);
        snprintf(feat, sizeof feat, "+ptx%d", ptx);
        const char *lvl = getenv("GPUJIT_CGLEVEL");
        c->tm = LLVMCreateTargetMachine(t, "nvptx64-nvidia-cuda", cpu, feat, lvl ? (LLVMCodeGenOptLevel)atoi(lvl) : LLVMCodeGenLevelAggressive,
                                        LLVMRelocDefault, LLVMCodeModelDefault);
    } else {
        char *triple = LLVMGetDefaultTargetTriple();
        if (LLVMGetTargetFromTriple(triple, &t, &err)) {
            internal_error(c, NO_LOCATION, "emit: no host target: %s", err ? err : "");
            LLVMDisposeMessage(err);
            LLVMDisposeMessage(triple);
            return -1;
        }
        char *cpu = LLVMGetHostCPUName(), *feat = LLVMGetHostCPUFeatures();
        c->tm = LLVMCreateTargetMachine(t, triple, cpu, feat, LLVMCodeGenLevelAggressive, LLVMRelocPIC,
                                        LLVMCodeModelJITDefault);
        c->triple = arena_strdup(&c->arena, triple);
        LLVMDisposeMessage(cpu);
        LLVMDisposeMessage(feat);
        LLVMDisposeMessage(triple);
    }
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
    int bad = LLVMParseBitcodeInContext2(c->llctx, buf, &lib);
    LLVMDisposeMemoryBuffer(buf);
    if (bad) return error_at(c, ERR_COMPILE, NO_LOCATION, "cannot parse %s", path);
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
    const char *pipeline = getenv("GPUJIT_PIPELINE");
    LLVMErrorRef e = LLVMRunPasses(c->mod, pipeline && *pipeline ? pipeline : "default<O3>", c->tm, po);
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
    if (getenv("GPUJIT_NOLLVM")) return 0;
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
    char name[512];
    snprintf(name, sizeof name, "%s_block", c->symbol);
    e = LLVMOrcLLJITLookup(jit, &ab, name);
    if (!e) {
        snprintf(name, sizeof name, "%s_thread", c->symbol);
        e = LLVMOrcLLJITLookup(jit, &at, name);
    }
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
