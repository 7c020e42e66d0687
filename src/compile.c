/* compile.c: the pipeline. gj_compile() is the whole compiler in one column:
 * decode -> cfg -> build IR -> infer types -> lower -> optimise -> emit. */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gj.h"

static const Target *const targets[] = {[GJ_TARGET_NVPTX] = &target_nvptx, [GJ_TARGET_HOST] = &target_host};

const Target *target_for(int kind) {
    return kind >= 0 && kind < (int)(sizeof targets / sizeof targets[0]) ? targets[kind] : NULL;
}

/* A symbol for LLVM: the name with anything but [A-Za-z0-9_] replaced. */
static char *sanitise(Arena *a, const char *name) {
    /* a PTX identifier is a letter and more, or '_' and at least one more ("1abc" and "_" were
     * ptxas syntax errors) */
    bool prefix = isdigit((unsigned char)name[0]) || !strcmp(name, "_");
    char *sym = prefix ? arena_printf(a, "_%s", name) : arena_strdup(a, name);
    for (char *p = sym; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_') *p = '_';
    return sym;
}

static int setup(Ctx *c, PyObject *code, PyObject *globals, PyObject *closure, const GjOptions *opt) {
    if (!PyCode_Check(code)) {
        PyErr_SetString(PyExc_TypeError, "gj_compile: expected a code object");
        return -1;
    }
    c->opt = *opt;
    c->opt.racecheck = c->opt.racecheck && c->opt.target == GJ_TARGET_HOST; /* the GPU has compute-sanitizer */
    if (!c->opt.cc_major) c->opt.cc_major = 9, c->opt.cc_minor = 0;
    RETURN_IF_ERROR(check_cc(&c->opt));
    c->code = code;
    c->globals = globals && PyDict_Check(globals) ? globals : NULL;
    c->closure = closure && PyTuple_Check(closure) ? closure : NULL;
    if (!(c->target = target_for(opt->target)))
        return PyErr_Format(PyExc_ValueError, "gj_compile: unknown target %d", (int)opt->target), -1;
    PyCodeObject *co = (PyCodeObject *)code;
    const char *fn = PyUnicode_AsUTF8(co->co_filename), *name = PyUnicode_AsUTF8(co->co_name);
    if (!fn || !name) return -1;
    c->filename = arena_strdup(&c->arena, fn);
    c->funcname = arena_strdup(&c->arena, name);
    c->firstlineno = co->co_firstlineno;
    if (opt->device && !c->target->begin_export)
        return PyErr_Format(PyExc_NotImplementedError,
                            "compiling a device function on its own needs the cuda target, not %s",
                            c->target->api_name),
               -1;
    /* a symbol PTX and ORC accept: the name, sanitised (begin() may make it unique) */
    c->symbol = sanitise(&c->arena, opt->name && opt->name[0] ? opt->name : name);
    c->out = calloc(1, sizeof *c->out);
    if (!c->out) return PyErr_NoMemory(), -1;
    c->out->target = opt->target;
    c->timing = debug_enabled("time");
    c->verify = VERIFY_ALWAYS || debug_enabled("verify");
    return c->target->begin(c);
}

static int check_signature(Ctx *c) {
    /* a device function compiled on its own: typing infers its return type (settle_return) */
    if (c->opt.device) {
        c->restype = &ty_unknown;
        return 0;
    }
    if (c->restype->kind != TY_NONE)
        return error_at(c, ERR_TYPING, (Loc){c->firstlineno, 0}, "a kernel's return type must be void, not %s",
                        type_name(c, c->restype));
    for (int i = 0; i < c->nargs; i++) /* the launcher has no conversion to them */
        if (is_fp8(c->argtypes[i]))
            return error_at(c, ERR_UNSUPPORTED, (Loc){c->firstlineno, 0},
                            "argument %d: %s scalars cannot be kernel arguments (pass arrays of them, or a float "
                            "converted in the kernel)", i + 1, type_name(c, c->argtypes[i]));
    return 0;
}

/* Bytes of the constant arrays left in the optimised module (both targets name them
 * "__const"; LLVM numbers repeats), laid out one after another at their alignment as
 * ptxas lays out .const: what the GPU's driver reports for the kernel. */
static size_t const_bytes_of(Ctx *c) {
    LLVMTargetDataRef td = LLVMGetModuleDataLayout(c->mod);
    size_t n = 0;
    for (LLVMValueRef g = LLVMGetFirstGlobal(c->mod); g; g = LLVMGetNextGlobal(g)) {
        size_t len;
        const char *name = LLVMGetValueName2(g, &len);
        if (len < 7 || strncmp(name, "__const", 7) || (len > 7 && name[7] != '.')) continue;
        size_t align = LLVMGetAlignment(g) ? LLVMGetAlignment(g) : 1;
        n = (n + align - 1) / align * align + (size_t)LLVMABISizeOfType(td, LLVMGlobalGetValueType(g));
    }
    return n;
}

/* The kernel ABI: what the launcher checks and packs (layout.c). */
static int describe(Ctx *c) {
    GjOutput *o = c->out;
    GjParam *lay;
    int np = layout_params(c, &lay);
    if (np < 0) return -1;
    o->nargs = c->nargs;
    o->args = layout_args_copy(c);
    if (!o->args) return -1;
    o->params = calloc((size_t)np + 1, sizeof *o->params);
    if (!o->params) return PyErr_NoMemory(), -1;
    memcpy(o->params, lay, sizeof *lay * (size_t)np);
    o->nparams = np;
    o->debug = HAS_ERRBUF(c);
    o->nfiles = c->files.n;
    o->files = calloc((size_t)c->files.n + 1, sizeof(char *));
    for (int i = 0; o->files && i < c->files.n; i++) o->files[i] = strdup(c->files.v[i]);
    o->nbarriers = c->barriers.n;
    o->barriers = calloc((size_t)c->barriers.n + 1, sizeof(char *));
    for (int i = 0; o->barriers && i < c->barriers.n; i++) o->barriers[i] = strdup(c->barriers.v[i]);
    o->racecheck = c->opt.racecheck;
    o->nraces = c->races.n;
    o->races = calloc((size_t)c->races.n + 1, sizeof(char *));
    for (int i = 0; o->races && i < c->races.n; i++) o->races[i] = strdup(c->races.v[i]);
    o->raises = c->raises; /* the output owns them now */
    c->raises = NULL;
    o->shared_bytes = c->shared_bytes;
    o->shared_used = c->shared_used;
    o->local_bytes = c->local_bytes;
    o->const_used = const_bytes_of(c);
    o->max_threads = c->opt.launch_bounds[0];
    o->uses_barrier = c->uses_barrier;
    o->captures = c->captures;
    if (c->externs && !(o->externs = PyList_AsTuple(c->externs))) return -1;
    o->cooperative = c->cooperative;
    o->symbol = strdup(c->symbol);
    o->restype = strdup(type_name(c, c->restype));
    StrBuf sb = {0};
    types_report(c, &sb);
    o->types = sb.s ? sb.s : strdup("");
    return 0;
}

/* The return type of a device function: what its returns give (None where it has no return
 * that gives a value), converted to the signature's where that names one, as numba does. */
static int settle_return(Ctx *c, const char *name) {
    bool returns = false; /* a function that only raises returns None */
    for (int i = 0; i < c->nblocks && !returns; i++)
        for (int k = 0; k < c->blocks[i]->instrs.n; k++)
            returns |= ((Instr *)c->blocks[i]->instrs.v[k])->op == IR_RET_VALUE;
    if (!returns) c->restype = &ty_none;
    if (!type_known(c->restype))
        return error_at(c, ERR_TYPING, (Loc){c->firstlineno, 0},
                        "cannot type infer runaway recursion: no return of %s() gives its return type "
                        "without calling itself (a recursion without a base case)",
                        name);
    if (c->declared_ret && !c->root) {
        if (c->restype->kind != TY_NONE && c->declared_ret->kind == TY_NONE)
            return error_at(c, ERR_TYPING, (Loc){c->firstlineno, 0},
                            "%s() returns %s but its signature says it returns nothing", name,
                            type_name(c, c->restype));
        if (c->restype->kind == TY_NONE && c->declared_ret->kind != TY_NONE)
            return error_at(c, ERR_TYPING, (Loc){c->firstlineno, 0},
                            "%s() returns nothing but its signature says it returns %s", name,
                            type_name(c, c->declared_ret));
        c->restype = c->declared_ret;
    }
    return 0;
}

static int settle_device_return(Ctx *c) { return c->opt.device ? settle_return(c, c->funcname) : 0; }

/* Bytecode to typed IR: the front half of a kernel's compile, of a device function's (whose
 * branches on literal arguments go before typing; a kernel has none) and of the verifier's
 * own test. */
static int front_half(Ctx *c) {
    STAGE(decode_bytecode(c));
    STAGE(unroll_loops(c));
    STAGE(build_cfg(c));
    STAGE(build_ir(c));
    STAGE(verify_ir(c, "build_ir"));
    STAGE(prune_literal_branches(c));
    STAGE(verify_ir(c, "prune_literal_branches"));
    STAGE(split_webs(c));
    STAGE(infer_types(c));
    STAGE(verify_ir(c, "infer_types"));
    return 0;
}

static int compile(Ctx *c, const char *sig) {
    if (c->timing) fprintf(stderr, "== compile %s %s\n", c->funcname, sig);
    RETURN_IF_ERROR(bytecode_init());
    RETURN_IF_ERROR(emit_init());
    STAGE(parse_signature(c, sig));
    STAGE(check_signature(c));
    RETURN_IF_ERROR(front_half(c));
    STAGE(settle_device_return(c));
    STAGE(make_target_machine(c));
    STAGE(lower(c));
    STAGE(legalize_bf16(c));
    STAGE(optimise(c));
    STAGE(describe(c));
    STAGE(c->target->emit(c));
    return 0;
}

int compile_device_function(Ctx *caller, Instr *call, PyObject *func, Type **argtypes, int nargs, Func **out) {
    Ctx *root = ctx_root(caller);
    PyCodeObject *code = (PyCodeObject *)PyFunction_GET_CODE(func);
    const char *name = PyUnicode_AsUTF8(code->co_name);
    if (!name) return -1;
    char *key = "";
    for (int i = 0; i < nargs; i++) {
        key = arena_printf(&root->arena, "%s%s;", key, type_name(root, argtypes[i]));
        /* a function passed as a value: two can share a name */
        if (argtypes[i]->kind == TY_OBJ && argtypes[i]->obj)
            key = arena_printf(&root->arena, "%s@%p;", key, (void *)argtypes[i]->obj);
    }
    for (int i = 0; i < root->funcs.n; i++) {
        Func *f = root->funcs.v[i];
        if (f->code == (PyObject *)code && strcmp(f->argkey, key) == 0) {
            bool fits;
            RETURN_IF_ERROR(literals_fit(caller, call, f, name, &fits));
            if (!fits) continue;
            *out = f; /* typed already, or being typed (recursion) */
            return 0;
        }
    }
    /* a recursion whose argument types change at each call (f((x,))) never meets a typed one */
    int depth = 0;
    for (int i = 0; i < root->funcs.n; i++) depth += ((Func *)root->funcs.v[i])->typing;
    if (depth >= LIMIT_CALL_DEPTH)
        return error_limit(caller, call->loc,
                           "device functions called inside one another while compiling "
                           "(a recursion whose argument types change?)",
                           LIMIT_CALL_DEPTH);
    if (code->co_argcount != nargs && !((code->co_flags & CO_VARARGS) && nargs > code->co_argcount))
        return error_at(caller, ERR_TYPING, call->loc, "%s() takes %d argument%s (%d given)", name, code->co_argcount,
                        code->co_argcount == 1 ? "" : "s", nargs);
    Func *f = arena_alloc(&root->arena, sizeof *f);
    Ctx *s = calloc(1, sizeof *s);
    if (!f || !s) return PyErr_NoMemory(), -1;
    f->code = (PyObject *)code;
    f->argkey = key;
    f->sub = s;
    vec_push(&root->arena, &root->funcs, f);
    f->literals = arena_alloc(&root->arena, sizeof(Instr *) * (size_t)(nargs ? nargs : 1));
    s->argvals = arena_alloc(&root->arena, sizeof(Instr *) * (size_t)(nargs ? nargs : 1));
    if (!f->literals || !s->argvals) return PyErr_NoMemory(), -1;
    for (int i = 0; i < nargs; i++) s->argvals[i] = arg_literal(caller, call->args[1 + i], LIT_PEEK);
    s->root = root;
    s->self = f;
    s->opt = root->opt;
    s->opt.device = 1;
    s->target = root->target;
    /* its stages are timed as part of the caller's infer_types (s->timing stays 0) */
    s->verify = root->verify;
    s->code = (PyObject *)code;
    s->globals = PyFunction_GET_GLOBALS(func);
    s->closure = PyFunction_GET_CLOSURE(func);
    const char *fn = PyUnicode_AsUTF8(code->co_filename);
    if (!fn) return -1;
    s->filename = arena_strdup(&s->arena, fn);
    s->funcname = arena_strdup(&s->arena, name);
    s->firstlineno = code->co_firstlineno;
    s->symbol = arena_printf(&root->arena, "%s__%s_%d", root->symbol, sanitise(&root->arena, name), root->funcs.n);
    s->nargs = nargs;
    s->argtypes = arena_alloc(&s->arena, sizeof(Type *) * (size_t)(nargs ? nargs : 1));
    if (!s->argtypes) return -1;
    memcpy(s->argtypes, argtypes, sizeof(Type *) * (size_t)nargs);
    s->restype = &ty_unknown;
    /* shared arrays are laid out in the kernel's one block of shared memory */
    s->shared_bytes = caller->shared_bytes;
    f->typing = true;
    RETURN_IF_ERROR(front_half(s));
    f->typing = false;
    caller->shared_bytes = s->shared_bytes;
    caller->uses_barrier |= s->uses_barrier;
    caller->cooperative |= s->cooperative;
    RETURN_IF_ERROR(settle_return(s, name));
    *out = f;
    return 0;
}

static void teardown(Ctx *c) {
    for (int i = 0; i < c->funcs.n; i++) {
        Ctx *s = ((Func *)c->funcs.v[i])->sub;
        if (s->b) LLVMDisposeBuilder(s->b);
        arena_free(&s->arena);
        free(s);
    }
    if (c->b) LLVMDisposeBuilder(c->b);
    if (c->mod) LLVMDisposeModule(c->mod);
    if (c->tm) release_target_machine(c->tm, c->tm_key);
    if (c->target) c->target->end(c);
    Py_XDECREF(c->raises);
    Py_XDECREF(c->owned);
    Py_XDECREF(c->externs);
    arena_free(&c->arena);
}

/* A compile still running after GPUJIT_COMPILE_NOTICE seconds says once, on stderr, what it
 * compiles: a thread that waits that long for the compile to end (the compile holds the GIL, so
 * no Python thread could say it). */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    double secs;
    char what[320];
} Notice;

static void *notice_main(void *arg) {
    Notice *n = arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    double whole = (double)until.tv_sec + until.tv_nsec / 1e9 + n->secs;
    until.tv_sec = (time_t)whole;
    until.tv_nsec = (long)((whole - (double)until.tv_sec) * 1e9);
    pthread_mutex_lock(&n->mu);
    int rc = 0;
    while (!n->done && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&n->cv, &n->mu, &until);
    if (!n->done)
        fprintf(stderr, "gpujit: compiling %s (more than %g s so far; GPUJIT_COMPILE_NOTICE=0 silences this)\n",
                n->what, n->secs);
    pthread_mutex_unlock(&n->mu);
    return NULL;
}

static int notice_start(Notice *n, pthread_t *th, const Ctx *c, const char *sig, const GjOptions *opt) {
    n->secs = compile_notice_seconds();
    if (!(n->secs > 0)) return 0;
    n->done = 0;
    if (opt->target == GJ_TARGET_HOST)
        snprintf(n->what, sizeof n->what, "%s(%s) for the cpu target", c->funcname ? c->funcname : "?", sig);
    else
        snprintf(n->what, sizeof n->what, "%s(%s) to PTX for sm_%d%d", c->funcname ? c->funcname : "?", sig,
                 opt->cc_major, opt->cc_minor);
    if (pthread_mutex_init(&n->mu, NULL)) return 0;
    if (pthread_cond_init(&n->cv, NULL)) return pthread_mutex_destroy(&n->mu), 0;
    if (pthread_create(th, NULL, notice_main, n)) {
        pthread_cond_destroy(&n->cv);
        pthread_mutex_destroy(&n->mu);
        return 0;
    }
    return 1;
}

static void notice_end(Notice *n, pthread_t th) {
    pthread_mutex_lock(&n->mu);
    n->done = 1;
    pthread_cond_signal(&n->cv);
    pthread_mutex_unlock(&n->mu);
    pthread_join(th, NULL);
    pthread_cond_destroy(&n->cv);
    pthread_mutex_destroy(&n->mu);
}

int gj_compile(PyObject *code, PyObject *globals, PyObject *closure, const char *sig, const GjOptions *opt,
               GjOutput **out) {
    Ctx ctx = {0}, *c = &ctx;
    int rc = setup(c, code, globals, closure, opt);
    Notice notice;
    pthread_t notice_thread;
    int noticing = rc == 0 && notice_start(&notice, &notice_thread, c, sig, opt);
    if (rc == 0) rc = compile(c, sig);
    if (noticing) notice_end(&notice, notice_thread);
    if (rc == 0 && PyErr_Occurred()) rc = -1;
    if (rc < 0 && !PyErr_Occurred()) internal_error(c, NO_LOCATION, "compile failed without a message");
    if (rc == 0) {
        *out = c->out;
    } else {
        gj_output_free(c->out);
        *out = NULL;
    }
    teardown(c);
    return rc;
}

int verify_selftest(PyObject *code, PyObject *globals, const char *sig, const char *what) {
    Ctx ctx = {0}, *c = &ctx;
    GjOptions opt = {.target = GJ_TARGET_HOST};
    int rc = setup(c, code, globals, NULL, &opt);
    if (rc == 0)
        rc = bytecode_init() < 0 || parse_signature(c, sig) < 0 || front_half(c) < 0 || verify_break(c, what) < 0 ||
                        verify_ir(c, "verify_break") < 0
                ? -1
                : 0;
    gj_output_free(c->out);
    teardown(c);
    return rc;
}

GjTargetKind gj_output_target(const GjOutput *o) { return o->target; }
const char *gj_output_ptx(const GjOutput *o) { return o->ptx; }
const char *gj_output_llvm(const GjOutput *o) { return o->llvm; }
const char *gj_output_types(const GjOutput *o) { return o->types; }
const char *gj_output_symbol(const GjOutput *o) { return o->symbol; }
const char *gj_output_restype(const GjOutput *o) { return o->restype; }
int gj_output_nargs(const GjOutput *o) { return o->nargs; }
const GjArgInfo *gj_output_args(const GjOutput *o) { return o->args; }
int gj_output_nparams(const GjOutput *o) { return o->nparams; }
const GjParam *gj_output_params(const GjOutput *o) { return o->params; }
size_t gj_output_shared_bytes(const GjOutput *o) { return o->shared_bytes; }
void gj_output_static_sizes(const GjOutput *o, size_t *shared, size_t *local, size_t *constant, int *max_threads) {
    *shared = o->shared_used;
    *local = o->local_bytes;
    *constant = o->const_used;
    *max_threads = o->max_threads;
}
int gj_output_uses_barrier(const GjOutput *o) { return o->uses_barrier; }
int gj_output_cooperative(const GjOutput *o) { return o->cooperative; }
int gj_output_debug(const GjOutput *o) { return o->debug; }
const char *gj_output_file(const GjOutput *o, int i) { return i >= 0 && i < o->nfiles ? o->files[i] : "?"; }
const char *gj_output_barrier(const GjOutput *o, int site) {
    return o->barriers && site >= 0 && site < o->nbarriers ? o->barriers[site] : NULL;
}
int gj_output_racecheck(const GjOutput *o) { return o->racecheck; }
const char *gj_output_race_site(const GjOutput *o, int site) {
    return o->races && site >= 0 && site < o->nraces ? o->races[site] : NULL;
}
PyObject *gj_output_raise(const GjOutput *o, int i) {
    return o->raises && i >= 0 && i < PyList_GET_SIZE(o->raises) ? PyList_GET_ITEM(o->raises, i) : NULL;
}
void *gj_output_host_block_fn(const GjOutput *o) { return o->host_block_fn; }
void *gj_output_host_thread_fn(const GjOutput *o) { return o->host_thread_fn; }

void gj_output_free(GjOutput *o) {
    if (!o) return;
    host_jit_release(o->jit);
    free(o->ptx);
    free(o->llvm);
    free(o->types);
    free(o->symbol);
    free(o->restype);
    free(o->bitcode);
    free(o->object);
    free(o->args);
    free(o->params);
    for (int i = 0; o->files && i < o->nfiles; i++) free(o->files[i]);
    free(o->files);
    for (int i = 0; o->barriers && i < o->nbarriers; i++) free(o->barriers[i]);
    free(o->barriers);
    for (int i = 0; o->races && i < o->nraces; i++) free(o->races[i]);
    free(o->races);
    Py_XDECREF(o->raises);
    Py_XDECREF(o->externs);
    free(o);
}
