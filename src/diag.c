/* diag.c: diagnostics. Every user-facing error names the Python file:line,
 * shows the source line with a caret, and is a gpujit exception: TypingError
 * or UnsupportedError for the user's code, InternalCompilerError for our bugs. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "gj.h"

PyObject *GjExc_CompileError, *GjExc_TypingError, *GjExc_UnsupportedError;
static PyObject *GjExc_InternalError, *GjExc_RequireLiteralValue, *GjExc_TypingValueError;

int diag_init_exceptions(PyObject *m) {
    GjExc_CompileError =
            PyErr_NewExceptionWithDoc("gpujit.CompileError", "A kernel could not be compiled.", NULL, NULL);
    if (!GjExc_CompileError) return -1;
    GjExc_TypingError = PyErr_NewExceptionWithDoc(
            "gpujit.TypingError", "A kernel's types could not be inferred or conflict.", GjExc_CompileError, NULL);
    GjExc_UnsupportedError = PyErr_NewExceptionWithDoc("gpujit.UnsupportedError",
                                                       "A kernel uses a Python construct gpujit does not support.",
                                                       GjExc_CompileError, NULL);
    GjExc_InternalError = PyErr_NewExceptionWithDoc("gpujit.InternalCompilerError", "A bug in gpujit itself.",
                                                    GjExc_CompileError, NULL);
    GjExc_RequireLiteralValue = PyErr_NewExceptionWithDoc(
            "gpujit.RequireLiteralValue", "An argument that must be a compile-time constant is not one.",
            GjExc_TypingError, NULL);
    if (!GjExc_TypingError || !GjExc_UnsupportedError || !GjExc_InternalError || !GjExc_RequireLiteralValue)
        return -1;
    PyObject *bases = PyTuple_Pack(2, GjExc_TypingError, PyExc_ValueError);
    if (!bases) return -1;
    GjExc_TypingValueError = PyErr_NewExceptionWithDoc(
            "gpujit.TypingValueError", "A constant argument has a value the construct does not accept.", bases, NULL);
    Py_DECREF(bases);
    if (!GjExc_TypingValueError) return -1;
    if (PyModule_AddObjectRef(m, "CompileError", GjExc_CompileError) < 0 ||
        PyModule_AddObjectRef(m, "TypingError", GjExc_TypingError) < 0 ||
        PyModule_AddObjectRef(m, "UnsupportedError", GjExc_UnsupportedError) < 0 ||
        PyModule_AddObjectRef(m, "InternalCompilerError", GjExc_InternalError) < 0 ||
        PyModule_AddObjectRef(m, "RequireLiteralValue", GjExc_RequireLiteralValue) < 0 ||
        PyModule_AddObjectRef(m, "TypingValueError", GjExc_TypingValueError) < 0)
        return -1;
    return 0;
}

/* The source line, stripped of its newline, via linecache; NULL if unknown. */
static PyObject *source_line(const char *filename, int line) {
    if (!filename || line <= 0) return NULL;
    PyObject *lc = PyImport_ImportModule("linecache");
    if (!lc) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *s = PyObject_CallMethod(lc, "getline", "si", filename, line);
    Py_DECREF(lc);
    if (!s) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *r = PyObject_CallMethod(s, "rstrip", NULL);
    Py_DECREF(s);
    if (!r) PyErr_Clear();
    return r;
}

static int raise_at(Ctx *c, PyObject *exc, Loc loc, const char *prefix, const char *msg) {
    PyObject *text;
    const char *file = c && c->filename ? c->filename : "<unknown>";
    PyObject *src = source_line(c ? c->filename : NULL, loc.line);
    if (loc.line > 0 && src && PyUnicode_GetLength(src) > 0) {
        /* PyUnicode_FromFormat has no "%*s": pad the caret ourselves */
        char caret[256];
        int col = loc.col > 0 ? loc.col : 0;
        if (col > (int)sizeof caret - 2) col = (int)sizeof caret - 2;
        memset(caret, ' ', (size_t)col);
        caret[col] = '^';
        caret[col + 1] = 0;
        text = PyUnicode_FromFormat("%s:%d: %s%s\n    %U\n    %s", file, loc.line, prefix, msg, src, caret);
    } else if (loc.line > 0) {
        text = PyUnicode_FromFormat("%s:%d: %s%s", file, loc.line, prefix, msg);
    } else {
        text = PyUnicode_FromFormat("%s: %s%s", file, prefix, msg);
    }
    Py_XDECREF(src);
    if (!text) return -1;
    PyObject *inst = PyObject_CallOneArg(exc, text);
    Py_DECREF(text);
    if (!inst) return -1;
    PyObject *fn = PyUnicode_FromString(file);
    PyObject *ln = PyLong_FromLong(loc.line);
    if (fn && ln) {
        PyObject_SetAttrString(inst, "filename", fn);
        PyObject_SetAttrString(inst, "lineno", ln);
    }
    Py_XDECREF(fn);
    Py_XDECREF(ln);
    PyErr_SetObject(exc, inst);
    Py_DECREF(inst);
    return -1;
}

/* A message of any length (type names of big tuples run long); NULL if out of memory. */
static char *format(const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (msg) vsnprintf(msg, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return msg;
}

static int verror_at(Ctx *c, ErrKind kind, Loc loc, const char *fmt, va_list ap) {
    if (PyErr_Occurred()) return -1; /* the first error wins */
    char *msg = format(fmt, ap);
    if (!msg) return PyErr_NoMemory(), -1;
    PyObject *exc = kind == ERR_TYPING ? GjExc_TypingError
            : kind == ERR_VALUE        ? GjExc_TypingValueError
            : kind == ERR_UNSUPPORTED  ? GjExc_UnsupportedError
            : kind == ERR_INTERNAL     ? GjExc_InternalError
            : kind == ERR_LITERAL      ? GjExc_RequireLiteralValue
                                       : GjExc_CompileError;
    int r = raise_at(c, exc, loc, kind == ERR_INTERNAL ? "internal compiler error: " : "", msg);
    free(msg);
    return r;
}

int error_at(Ctx *c, ErrKind kind, Loc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = verror_at(c, kind, loc, fmt, ap);
    va_end(ap);
    return r;
}

int internal_error(Ctx *c, Loc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = verror_at(c, ERR_INTERNAL, loc, fmt, ap);
    va_end(ap);
    return r;
}

int error_limit(Ctx *c, Loc loc, const char *what, long limit) {
    return error_at(c, ERR_UNSUPPORTED, loc, "too many %s (limit is %ld)", what, limit);
}

/* The length of the comma list's item at p, without the spaces around it; *next is the item after. */
static size_t list_item(const char **p, const char **next) {
    while (**p == ' ') (*p)++;
    const char *e = strchr(*p, ',');
    if (!e) e = *p + strlen(*p);
    *next = *e ? e + 1 : e;
    while (e > *p && e[-1] == ' ') e--;
    return (size_t)(e - *p);
}

/* Does the comma list v name `word` (in any case)? */
static bool list_has(const char *v, const char *word) {
    size_t n = strlen(word);
    for (const char *p = v, *next; p && *p; p = next) {
        size_t len = list_item(&p, &next);
        if (len == n && strncasecmp(p, word, n) == 0) return true;
    }
    return false;
}

/* The words GPUJIT_DEBUG and GPUJIT_PTX_PASSES take: what debug_enabled and ptx_pass_enabled are
 * asked about, and "all" / "none". */
static const char *const DEBUG_WORDS[] = {"bytecode", "ir", "types", "llvm", "opt", "ptx", "time", "verify", "all", NULL};
static const char *const PTX_PASS_WORDS[] = {"hoist", "hoist-all", "shortptr", "unroll", "mergegep", "none", NULL};

/* 0, or -1 with a ValueError naming the first word of the comma list in `var` not in `words`. */
static int check_list(const char *var, const char *const *words) {
    const char *v = getenv(var);
    for (const char *p = v, *next; p && *p; p = next) {
        size_t len = list_item(&p, &next);
        bool known = len == 0;
        for (int i = 0; words[i] && !known; i++) known = strlen(words[i]) == len && !strncasecmp(p, words[i], len);
        if (!known) {
            char valid[160] = "";
            for (int i = 0; words[i]; i++) snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s", i ? ", " : "", words[i]);
            char word[64];
            snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), p);
            PyErr_Format(PyExc_ValueError, "%s='%s': '%s' is not one of %s (a comma-separated list)", var, v, word,
                         valid);
            return -1;
        }
    }
    return 0;
}

/* GPUJIT_COMPILE_NOTICE: after how many seconds a compile still running says on stderr what it
 * compiles (a number; 0, off, no or false: never); 3 when unset, -1 when malformed. */
double compile_notice_seconds(void) {
    const char *v = getenv("GPUJIT_COMPILE_NOTICE");
    if (!v || !*v) return 3.0;
    static const char *const off[] = {"0", "off", "no", "false", NULL};
    for (int i = 0; off[i]; i++)
        if (!strcasecmp(v, off[i])) return 0.0;
    char *end;
    double s = strtod(v, &end);
    while (*end == ' ') end++;
    return end == v || *end || !(s > 0) || s > 1e6 ? -1.0 : s;
}

int diag_env_check(void) {
    RETURN_IF_ERROR(check_list("GPUJIT_DEBUG", DEBUG_WORDS));
    RETURN_IF_ERROR(check_list("GPUJIT_PTX_PASSES", PTX_PASS_WORDS));
    if (compile_notice_seconds() < 0) {
        PyErr_Format(PyExc_ValueError, "GPUJIT_COMPILE_NOTICE='%s': use a number of seconds (e.g. 3), or 0 or off "
                     "for never", getenv("GPUJIT_COMPILE_NOTICE"));
        return -1;
    }
    return 0;
}

bool debug_enabled(const char *stage) {
    const char *v = getenv("GPUJIT_DEBUG");
    return list_has(v, "all") || list_has(v, stage);
}

/* The GPU path's own passes after O3 (hoistloads.c, unrollmore.c, mergegep.c) and LLVM's
 * 32-bit shared-memory pointers: all of them unless GPUJIT_PTX_PASSES names a set ("none":
 * LLVM's O3 alone). Read per compile, so that one process can compare sets
 * (benchmarks/lang_bench.py --variants); the GPU measured each set against CUDA C. */
static const char DEFAULT_PTX_PASSES[] = "hoist,shortptr,unroll,mergegep";
bool ptx_pass_enabled(const char *name) {
    const char *v = getenv("GPUJIT_PTX_PASSES");
    return list_has(v ? v : DEFAULT_PTX_PASSES, name);
}

/* A user-facing name for a path: "gpujit.threadIdx" -> "gpu.threadIdx". */
const char *path_pretty(const char *path) {
    if (strncmp(path, "gpujit.", 7) == 0) return path + 7;
    if (strncmp(path, "builtins.", 9) == 0) return path + 9;
    return path;
}

bool is_debugger_module(const char *name) {
    static const char *const mods[] = {"pdb", "ipdb", "pudb", "pdbpp", "debugpy", "pydevd", "IPython", "bdb",
                                       "_pytest.debugging"};
    if (!strcmp(name, "breakpoint") || !strcmp(name, "builtins.breakpoint") || !strcmp(name, "sys.breakpointhook"))
        return true;
    for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++) {
        size_t n = strlen(mods[i]);
        if (!strncmp(name, mods[i], n) && (name[n] == '\0' || name[n] == '.')) return true;
    }
    return false;
}

const char *numpy_unsupported_hint(const char *path) {
    static const char *const allocators[] = {
        "zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like", "full_like", "array",
        "asarray", "ascontiguousarray", "asfortranarray", "arange", "linspace", "logspace", "eye", "identity",
        "copy", "concatenate", "stack", "hstack", "vstack", "tile", "repeat", "meshgrid", "diag", "frombuffer",
    };
    const char *name = strncmp(path, "numpy.", 6) == 0 ? path + 6 : path;
    for (size_t i = 0; i < sizeof allocators / sizeof allocators[0]; i++)
        if (!strcmp(name, allocators[i]))
            return ": kernels cannot allocate arrays; use local.array(shape, dtype) for an array of each "
                   "thread or shared.array(shape, dtype) for one of each block (shapes known when the kernel "
                   "is compiled), or pass the array in as an argument";
    return " (docs/language.md lists the NumPy functions kernels have)";
}

double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void stage_time(const char *what, double start_ms) { fprintf(stderr, "  %-32s %7.3f ms\n", what, now_ms() - start_ms); }
