/* gpujit public C API: compile a CPython code object to PTX (or to host code).
 *
 * Usable from C with no Python objects beyond the code object (and, optionally,
 * the function's globals dict and closure cells, which resolve names such as
 * `gpu`, `math` and compile-time constants). The interpreter must be
 * initialised and the caller must hold the GIL while calling gj_compile().
 */
#ifndef GPUJIT_GPUJIT_H
#define GPUJIT_GPUJIT_H

#include <Python.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most dimensions an array may have, in a kernel and at a launch (NumPy 1.x's NPY_MAXDIMS). */
#define GJ_MAXDIM 32

typedef enum GjTargetKind {
    GJ_TARGET_NVPTX = 0, /* PTX text for a CUDA device */
    GJ_TARGET_HOST = 1   /* native code for this machine's CPU (the CPU backend) */
} GjTargetKind;

/* The target's name for users: "cuda" or "cpu" (set_target(), DeviceArray.target, messages). */
static inline const char *gj_target_name(GjTargetKind t) { return t == GJ_TARGET_NVPTX ? "cuda" : "cpu"; }

typedef struct GjOptions {
    GjTargetKind target;
    int cc_major, cc_minor; /* compute capability; 0,0 means 9.0 */
    int ptx_version;        /* e.g. 78 for PTX ISA 7.8; 0 picks one for the cc */
    int fastmath;           /* add every fast-math flag, not only `contract` */
    int lineinfo;           /* .loc directives in the PTX */
    int debug;              /* debug mode: bounds checks, and raise/assert, division by zero and tuple
                             * indices reported to the host (an error buffer parameter) */
    int boundscheck;        /* bounds checks alone (the same error buffer) */
    int device;             /* compile a device function, not a kernel */
    int keep_llvm;          /* keep the optimised LLVM IR text (gj_output_llvm) */
    const char *name;       /* symbol name; NULL derives it from the code object */
    int keep_bitcode;       /* host target: keep the optimised module's bitcode (the on-disk cache) */
    int launch_bounds[3];   /* a kernel's max threads per block, min blocks per multiprocessor, max blocks
                             * per cluster (.maxntid, .minnctapersm, .maxclusterrank); 0: not given */
    int noopt;              /* opt=False: no LLVM optimisation (locals stay in memory) and no
                             * floating-point contraction into FMAs, as numba's -O0 */
    char cc_suffix;         /* 'a': the cc's architecture-specific features (sm_90a); 0: none */
    int racecheck;          /* host target: report data races between a block's threads
                             * (runtime/cpu_race.c); ignored on NVPTX */
} GjOptions;

/* One Python-level argument of a compiled kernel. */
typedef enum GjArgKind {
    GJ_ARG_SCALAR = 0,
    GJ_ARG_ARRAY = 1,
    GJ_ARG_RECORD = 2, /* one element of a structured dtype, passed by its address */
    GJ_ARG_TUPLE = 3   /* a tuple: its items' parameters, in order (items, nitems) */
} GjArgKind;

/* Scalar dtypes; values are stable (they appear in type keys). */
typedef enum GjDtype {
    GJ_BOOL = 1,
    GJ_INT8,
    GJ_INT16,
    GJ_INT32,
    GJ_INT64,
    GJ_UINT8,
    GJ_UINT16,
    GJ_UINT32,
    GJ_UINT64,
    GJ_FLOAT32,
    GJ_FLOAT64,
    GJ_COMPLEX64,
    GJ_COMPLEX128,  /* NumPy's layout: re, im */
    GJ_FLOAT16,     /* IEEE binary16 (NumPy's float16) */
    GJ_BFLOAT16,    /* bfloat16: float32's top half (ml_dtypes.bfloat16) */
    GJ_FLOAT8_E4M3, /* OCP fp8 E4M3, no inf (ml_dtypes.float8_e4m3fn, CUDA's __nv_fp8_e4m3) */
    GJ_FLOAT8_E5M2, /* OCP fp8 E5M2 (ml_dtypes.float8_e5m2, CUDA's __nv_fp8_e5m2) */
    GJ_NDTYPES
} GjDtype;

typedef struct GjArgInfo {
    GjArgKind kind;
    GjDtype dtype;
    int ndim;        /* arrays */
    char layout;     /* arrays: 'C' contiguous, 'A' any strides */
    int written;     /* arrays, records: the kernel may store into it (read-only arrays are refused) */
    int itemsize;    /* records and arrays of records (dtype 0): bytes of one record; else 0 */
    int nitems;      /* tuples: how many items, each described at items[k] */
    const struct GjArgInfo *items;
} GjArgInfo;

/* What one flattened kernel parameter carries (docs/runtime.md, "Kernel ABI"). */
typedef enum GjParamRole {
    GJ_PARAM_VALUE = 0, /* a scalar argument's value in `dtype` (bool: one byte, 0 or 1) */
    GJ_PARAM_REAL,      /* a complex scalar's real part, in `dtype` float32/float64 */
    GJ_PARAM_IMAG,      /* its imaginary part */
    GJ_PARAM_DATA,      /* an array's data pointer (the address of element [0, ..., 0]); a record's address */
    GJ_PARAM_SHAPE,     /* an array's extent along `axis` (int64) */
    GJ_PARAM_STRIDE,    /* an array's stride along `axis`, in bytes (int64) */
    GJ_PARAM_ERRBUF,    /* debug kernels, last: the error record (gj_output_debug) */
    GJ_NPARAM_ROLES
} GjParamRole;

/* One flattened parameter of the kernel ABI. Every one is its own
 * kernelParams entry and fits an 8-byte slot. */
typedef struct GjParam {
    uint8_t size;    /* bytes: 1, 2, 4 or 8 */
    uint8_t align;   /* bytes */
    uint8_t role;    /* GjParamRole */
    uint8_t dtype;   /* GjDtype of the value; 0 for pointers (DATA, ERRBUF) */
    int16_t arg;     /* the argument it comes from (0-based); -1 for ERRBUF */
    int16_t axis;    /* SHAPE, STRIDE: the dimension; else 0 */
    int16_t item;    /* the part of the argument it comes from: 0 the argument itself; in a tuple,
                      * 1 + the number of tuples and items before this item, counted depth-first */
} GjParam;

/* The kernel ABI: the parameters of a kernel taking `args` (plus the error
 * buffer when `debug`), in order. Writes at most `cap` of them to `out` (which
 * may be NULL) and returns how many there are, or -1 if an argument's kind or
 * dtype is not one a kernel takes. The compiler lowers kernels and the launcher
 * packs kernelParams from this one description. */
int gj_layout(const GjArgInfo *args, int nargs, int debug, GjParam *out, int cap);
/* "value", "real", "imag", "data", "shape", "stride", "errbuf" */
const char *gj_param_role_name(int role);

typedef struct GjOutput GjOutput; /* opaque: free with gj_output_free() */

/* Compile `code` with the numba-style signature `sig` ("void(float32[::1], float64)").
 * globals: a dict or NULL; closure: a tuple of cells or NULL.
 * Returns 0 on success with *out set; -1 with a Python exception set
 * (gpujit.TypingError / UnsupportedError / CompileError, or an internal error). */
int gj_compile(PyObject *code, PyObject *globals, PyObject *closure, const char *sig, const GjOptions *opt,
               GjOutput **out);

GjTargetKind gj_output_target(const GjOutput *o);
const char *gj_output_ptx(const GjOutput *o);        /* NVPTX target: PTX text */
const char *gj_output_llvm(const GjOutput *o);       /* optimised LLVM IR text, if keep_llvm */
const char *gj_output_types(const GjOutput *o);      /* typed locals per line */
const char *gj_output_symbol(const GjOutput *o);     /* kernel entry symbol */
const char *gj_output_restype(const GjOutput *o);    /* return type name ("none" for kernels) */
int gj_output_nargs(const GjOutput *o);
const GjArgInfo *gj_output_args(const GjOutput *o);
int gj_output_nparams(const GjOutput *o);
const GjParam *gj_output_params(const GjOutput *o);
size_t gj_output_shared_bytes(const GjOutput *o);    /* static shared memory */
/* The CPU target's kernel attributes, all known at compile time: static shared bytes per
 * block, local array bytes per thread, constant bytes, and the most threads per block
 * (launch_bounds' first number; 0 where it gives none). */
void gj_output_static_sizes(const GjOutput *o, size_t *shared, size_t *local, size_t *constant, int *max_threads);
int gj_output_uses_barrier(const GjOutput *o);
/* The kernel calls cg.this_grid(): launch it cooperatively (every block resident). */
int gj_output_cooperative(const GjOutput *o);
/* The PTX global (.u64) whose arrivals the grid barrier counts; the launcher
 * zeroes it on the launch's stream before each cooperative launch. */
#define GJ_GRID_SYNC_SYMBOL "gpujit_grid_sync"
/* debug=True kernels take one more parameter after the arguments' (counted in
 * gj_output_nparams): a pointer to 8 zeroed int64 in global memory. A thread
 * that indexes out of bounds sets [0] = 1 (the first one wins) and writes
 * [1] line, [2] axis, [3] index, [4] size, [5] file (gj_output_file); the
 * bad access itself goes to [6..7]. A thread that raises an exception sets
 * [0] = 2 instead and writes [1] line, [2] raise site (gj_output_raise),
 * [3] threadIdx (x | y << 10 | z << 20), [4] blockIdx (x | y << 31 | z << 47),
 * [5] file. A slice or range() with step 0 sets [0] = 3 and writes [1] line,
 * [2] which (GJ_STEP0_*) and [5] file. Shapes that do not broadcast (a slice
 * assigned from an array of another length, a ufunc's operand against its
 * output) set [0] = 4 and write [1] line, [2] where (GJ_SHAPE_*) | axis << 8 |
 * ndim << 16 | the ufunc's argument (from 1) << 24, [3] the length needed,
 * [4] the length found, [5] file. */
enum { GJ_ERR_NONE = 0, GJ_ERR_INDEX = 1, GJ_ERR_RAISE = 2, GJ_ERR_STEP0 = 3, GJ_ERR_SHAPE = 4 }; /* word [0] */
enum { GJ_STEP0_SLICE = 0, GJ_STEP0_RANGE = 1 };
enum { GJ_SHAPE_ASSIGN = 0, GJ_SHAPE_UFUNC = 1 };
int gj_output_debug(const GjOutput *o);
const char *gj_output_file(const GjOutput *o, int i);
/* "file:line" of syncthreads() call `site` of a CPU-target kernel (GjBlockCtx.syncthreads), or NULL. */
const char *gj_output_barrier(const GjOutput *o, int site);
/* racecheck kernels: whether it was compiled so, and access site `site` as "file:line\twhat"
 * (what: "shared array 's'", "array 'out'", ...; NULL if there is no such site) */
int gj_output_racecheck(const GjOutput *o);
const char *gj_output_race_site(const GjOutput *o, int site);
/* Raise site i: a borrowed (class, args, builtin) tuple, or NULL. */
PyObject *gj_output_raise(const GjOutput *o, int i);
/* Host target only: entry points (see runtime/cpu.h for their types);
 * valid while the output lives. */
void *gj_output_host_block_fn(const GjOutput *o);
void *gj_output_host_thread_fn(const GjOutput *o);
void gj_output_free(GjOutput *o);

#ifdef __cplusplus
}
#endif
#endif
