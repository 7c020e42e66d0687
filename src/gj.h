/* gj.h: the compiler's one internal header, sectioned by the file that
 * exports each part (chibicc-style). The pipeline lives in compile.c. */
#ifndef GJ_INTERNAL_H
#define GJ_INTERNAL_H

#include <Python.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Orc.h>

#include "gpujit/gpujit.h"
#include "cpu_abi.h" /* the CPU backend's ABI: block context, warp operations */

typedef struct Ctx Ctx;
typedef struct Type Type;
typedef struct Instr Instr;
typedef struct Block Block;
typedef struct Target Target;
typedef struct Func Func;

#define RETURN_IF_ERROR(x) \
    do { \
        if ((x) < 0) return -1; \
    } while (0)

/* A Python source position. line 0 = NO_LOCATION. */
typedef struct Loc {
    int line, col;
} Loc;
#define NO_LOCATION ((Loc){0, 0})

//
// arena.c
//
typedef struct ArenaChunk ArenaChunk;
typedef struct Arena {
    ArenaChunk *head;
} Arena;
void *arena_alloc(Arena *a, size_t n);           /* zeroed, 16-aligned */
char *arena_strdup(Arena *a, const char *s);
char *arena_printf(Arena *a, const char *fmt, ...);
void arena_free(Arena *a);
/* A growable array of pointers in the arena. */
typedef struct PtrVec {
    void **v;
    int n, cap;
} PtrVec;
void vec_push(Arena *a, PtrVec *v, void *p);

/* A growable string outside the arena (outputs outlive it). */
typedef struct StrBuf {
    char *s;
    size_t n, cap;
} StrBuf;
void sb_printf(StrBuf *b, const char *fmt, ...);
void sb_free(StrBuf *b);

//
// diag.c
//
/* ERR_LITERAL: a TypingError for an argument that must be a compile-time constant (numba's
 * RequireLiteralValue). ERR_VALUE: a constant argument of a construct has a value it refuses
 * (alignment=3): a TypingError that is also a ValueError, the type numba raises for those. */
typedef enum { ERR_TYPING, ERR_UNSUPPORTED, ERR_COMPILE, ERR_INTERNAL, ERR_LITERAL, ERR_VALUE } ErrKind;
/* Set a Python exception of `kind` with "file:line: message", the source line
 * and a caret. Returns -1 so callers can `return error_at(...)`. */
int error_at(Ctx *c, ErrKind kind, Loc loc, const char *fmt, ...);
/* An invariant of the compiler broke: "internal compiler error in <pass>". */
int internal_error(Ctx *c, Loc loc, const char *fmt, ...);
/* A fixed capacity of the compiler was crossed: UnsupportedError
 * "too many <what> (limit is N)" at loc, as Lua's errorlimit. */
int error_limit(Ctx *c, Loc loc, const char *what, long limit);
/* The compiler's named capacities. Everything else grows from the arena. */
#define LIMIT_NDIM GJ_MAXDIM       /* array dimensions (gpujit.h) */
#define LIMIT_TUPLE 10000         /* items of one tuple (counting nested ones), arguments of one call */
#define LIMIT_CONST_NESTING 16    /* levels of tuples nested in one constant */
#define LIMIT_TUPLE_NESTING 32    /* levels of tuples nested in one value */
#define LIMIT_CALL_DEPTH 100      /* device functions typed inside one another */
#define LIMIT_CONST_BYTES 65536   /* const.array_like data: the GPU's constant bank */
#define LIMIT_ALIGN 4096          /* alignment= of a shared or local array (the CPU runtime's shared base) */
extern PyObject *GjExc_CompileError, *GjExc_TypingError, *GjExc_UnsupportedError;
int diag_init_exceptions(PyObject *module);
int gj_digest_add(PyObject *module); /* digest.c: _core.Digest */
bool debug_enabled(const char *stage); /* GPUJIT_DEBUG=bytecode,ir,types,llvm,opt,ptx,time,verify or all */
bool ptx_pass_enabled(const char *name); /* is this GPU step on (GPUJIT_PTX_PASSES, diag.c)? */
double compile_notice_seconds(void);      /* GPUJIT_COMPILE_NOTICE (diag.c): seconds, 0 for never, -1 malformed */
int diag_env_check(void);                 /* 0, or -1 with a ValueError: GPUJIT_DEBUG or GPUJIT_PTX_PASSES names an unknown word */
const char *path_pretty(const char *path); /* "gpujit.grid" -> "grid" for messages */
/* A Python debugger (pdb, breakpoint(), ...) inside a kernel: numba's simulator runs kernels as
 * Python, where it stops; gpujit compiles them on every target. The advice the error gives. */
bool is_debugger_module(const char *name);
/* What to write instead of a formatted string in a kernel's print(). */
#define PRINT_HINT "print the values as separate arguments instead: print('x =', x, 'at', i)"
/* The rest of "numpy.X is not supported in kernels" for a NumPy function kernels lack: an
 * allocator's advice (local.array, shared.array), else where the supported ones are listed. */
const char *numpy_unsupported_hint(const char *path); /* "pdb", "pdb.set_trace", "ipdb", ... */
#define DEBUGGER_HINT                                                                                   \
    "the Python debugger cannot stop inside a kernel: gpujit compiles kernels, also for the CPU "   \
    "target, and has no simulator that runs them as Python (docs/porting.md); print() the values "  \
    "from the kernel instead, and run it on the CPU target, whose index checks name the line of a " \
    "bad access"
/* GPUJIT_DEBUG=time: a monotonic clock in ms, and a pass's line of the report (STAGE) */
double now_ms(void);
void stage_time(const char *what, double start_ms);

//
// types.c
//
typedef enum {
    TY_UNKNOWN = 0,
    /* scalars, ordered as GjDtype */
    TY_BOOL = GJ_BOOL,
    TY_INT8,
    TY_INT16,
    TY_INT32,
    TY_INT64,
    TY_UINT8,
    TY_UINT16,
    TY_UINT32,
    TY_UINT64,
    TY_FLOAT32,
    TY_FLOAT64,
    TY_COMPLEX64,
    TY_COMPLEX128, /* {float, float}, {double, double} */
    TY_FLOAT16,    /* LLVM's half */
    TY_BFLOAT16,   /* LLVM's bfloat (bf16.c legalises it for the targets) */
    TY_FP8_E4M3,   /* fp8 storage types, an i8: conversions only (fp8.c) */
    TY_FP8_E5M2,
    TY_NONE,
    TY_ARRAY,     /* elem, ndim, layout, space */
    TY_TUPLE,     /* items */
    TY_RANGE,     /* (start, stop, step) int64 */
    TY_RANGEITER, /* pointer to a range's state */
    TY_OBJ,       /* a compile-time Python object known by its dotted path */
    TY_STR,       /* string constant (dtype names, print) */
    TY_SLICE,     /* {start, stop, step} int64, omitted parts resolved; n = 3 when a step was written */
    TY_ELLIPSIS,  /* `...` in an index */
    TY_RECORD,    /* a NumPy structured dtype's element: fields, size, align; a value is a pointer to it */
    TY_CPTR,      /* numba's CPointer(elem) (elem none: voidptr): a raw address in `space`, indexed unchecked */
} TypeKind;

typedef enum { AS_GENERIC = 0, AS_GLOBAL = 1, AS_SHARED = 3, AS_CONST = 4, AS_LOCAL = 5 } AddrSpace;

/* A record's field: a number, a nested record, or a nested array (a
 * TY_ARRAY with a constant shape), `offset` bytes into the record. */
typedef struct RecField {
    const char *name;
    Type *type;
    int64_t offset;
} RecField;

struct Type {
    TypeKind kind;
    /* TY_ARRAY */
    Type *elem;
    int ndim;
    char layout;   /* 'C' or 'A' */
    AddrSpace space;
    /* TY_TUPLE */
    int n;
    Type **items;
    int depth, nested_items; /* levels of tuples; items counting those of nested tuples (saturates past LIMIT_TUPLE) */
    const char **names; /* a namedtuple's field names (items in order), else NULL */
    const char *cls;    /* a namedtuple's class name */
    /* TY_OBJ; a TY_TUPLE that is a CUDA vector type (float32x3, with .x .y .z .w): its name */
    const char *path;
    PyObject *obj; /* a Python function called as a device function, else NULL */
    /* TY_RECORD: its fields, size and alignment in bytes, and its spelling (type_eq compares it) */
    int nfields;
    RecField *fields;
    int64_t size;
    int align;
    const char *spelling;
    /* TY_ARRAY, a record's nested array: the constant shape (C order); else NULL */
    const int64_t *shape;
    /* TY_ARRAY that is a wmma fragment (mma.c): its role, shape and layout; else NULL */
    const struct MmaFrag *frag;
};

extern Type ty_unknown, ty_bool, ty_int8, ty_int16, ty_int32, ty_int64, ty_uint8, ty_uint16, ty_uint32, ty_uint64,
        ty_float16, ty_bfloat16, ty_fp8_e4m3, ty_fp8_e5m2, ty_float32, ty_float64, ty_none, ty_range, ty_rangeiter, ty_str, ty_complex64, ty_complex128, ty_slice2,
        ty_slice3, ty_ellipsis;

Type *type_scalar(TypeKind k);
Type *type_array(Ctx *c, Type *elem, int ndim, char layout, AddrSpace space);
Type *type_tuple(Ctx *c, int n, Type **items);
Type *type_cptr(Ctx *c, Type *elem, AddrSpace space);
int tuple_field(const Type *t, const char *name); /* a namedtuple's item of that name, or -1 */
/* CUDA's vector type of n (1-4) items of a scalar: a tuple named, e.g., float32x3 */
Type *type_vector(Ctx *c, Type *base, int n);
bool is_vector(const Type *t);
Type *type_obj(Ctx *c, const char *path);
Type *type_func(Ctx *c, const char *path, PyObject *func); /* a device function */
bool type_eq(const Type *a, const Type *b);
bool is_scalar(const Type *t);
bool is_int(const Type *t); /* signed or unsigned integer, not bool */
bool is_signed(const Type *t);
bool is_float(const Type *t);
bool is_half(const Type *t); /* float16 or bfloat16 */
bool is_fp8(const Type *t);  /* float8_e4m3fn or float8_e5m2: numbers that only convert */
bool is_numeric(const Type *t); /* bool, ints, floats */
bool is_complex(const Type *t);
bool is_number(const Type *t); /* bool, ints, floats, complex */
Type *complex_part(const Type *t); /* complex64 -> float32, complex128 -> float64 */
Type *complex_of(const Type *t); /* the complex type holding a real one: float32 -> complex64, else complex128 */
bool is_index(const Type *t); /* usable as an index: ints and bool */
bool has_value(const Type *t); /* lives at run time: numbers, arrays, tuples of them, ranges */
int type_bits(const Type *t); /* scalar width; bool = 8 in memory; complex128 = 128 */
int type_align(const Type *t); /* bytes, in memory: a complex aligns as its parts */
int64_t type_size(const Type *t); /* bytes, in memory: records and nested arrays too */
const RecField *record_field(const Type *rec, const char *name); /* NULL if it has none of that name */
const char *type_name(Ctx *c, const Type *t); /* numba spelling: float32[:, ::1], UniTuple... */
Type *type_from_name(const char *name); /* "float32", "int64", "bool"... or NULL */
/* numba.cuda's promotion for arithmetic binary operators (NumPy scalar rules). */
Type *promote_arith(Type *a, Type *b);
/* Unify two types at a control-flow join or a re-assignment; NULL if they conflict. */
Type *unify(Ctx *c, Type *a, Type *b);
/* Parse any signature spelling ("void(float32[::1], intc)", "(f8[:, :])",
 * "UniTuple(int64 x 2)(float32)"); *ret is NULL where none is written. */
int sig_parse(Ctx *c, const char *sig, Type **ret, Type ***args, int *nargs);
/* A kernel's signature (arrays and numbers): fills c->argtypes, c->nargs, c->restype. */
int parse_signature(Ctx *c, const char *sig);

//
// bytecode.c: decode co_code into version-independent instructions
//
typedef enum {
    OP_UNKNOWN = 0,
    OP_NOP,
    OP_POP_TOP,
    OP_PUSH_NULL,
    OP_LOAD_CONST,
    OP_LOAD_FAST,
    OP_STORE_FAST,
    OP_LOAD_FAST_LOAD_FAST,
    OP_STORE_FAST_STORE_FAST,
    OP_STORE_FAST_LOAD_FAST,
    OP_LOAD_FAST_AND_CLEAR,
    OP_LOAD_GLOBAL,
    OP_LOAD_DEREF,
    OP_LOAD_ATTR,
    OP_LOAD_METHOD,
    OP_PRECALL,
    OP_CALL,
    OP_CALL_KW,
    OP_KW_NAMES,
    OP_BINARY_OP,
    OP_COMPARE_OP,
    OP_IS_OP,
    OP_CONTAINS_OP,
    OP_BINARY_SUBSCR,
    OP_STORE_SUBSCR,
    OP_BUILD_TUPLE,
    OP_UNPACK_SEQUENCE,
    OP_GET_ITER,
    OP_FOR_ITER,
    OP_END_FOR,
    OP_JUMP_FORWARD,
    OP_JUMP_BACKWARD,
    OP_JUMP_BACKWARD_NO_INTERRUPT,
    OP_POP_JUMP_IF_FALSE,
    OP_POP_JUMP_IF_TRUE,
    OP_POP_JUMP_IF_NONE,
    OP_POP_JUMP_IF_NOT_NONE,
    OP_JUMP_IF_FALSE_OR_POP,
    OP_JUMP_IF_TRUE_OR_POP,
    OP_RETURN_VALUE,
    OP_RETURN_CONST,
    OP_TO_BOOL,
    OP_COPY,
    OP_SWAP,
    OP_UNARY_NEGATIVE,
    OP_UNARY_NOT,
    OP_UNARY_INVERT,
    OP_UNARY_POSITIVE,
    OP_CALL_INTRINSIC_1,
    OP_RESUME,
    OP_COPY_FREE_VARS,
    OP_MAKE_CELL,
    OP_CACHE,
    OP_EXTENDED_ARG,
    OP_STORE_GLOBAL,
    OP_STORE_ATTR,
    OP_DELETE_FAST,
    OP_BUILD_LIST,
    OP_LIST_APPEND,
    OP_LIST_EXTEND,
    OP_LIST_TO_TUPLE,
    OP_CALL_FUNCTION_EX,
    OP_RAISE_VARARGS,
    OP_LOAD_ASSERTION_ERROR,
    OP_BUILD_SLICE,
    OP_BINARY_SLICE,
    OP_STORE_SLICE,
    OP_STORE_DEREF,
    OP_LOAD_CLOSURE,
    OP_MAKE_FUNCTION,
    OP_SET_FUNCTION_ATTRIBUTE,
    OP_LOAD_SMALL_INT,
    OP_LOAD_COMMON_CONSTANT,
    OP_POP_ITER,
    OP_NUM_KNOWN,
    OP_UNROLL_ITEM, /* unroll.c's: (t -- t t[arg]) */
    OP_UNROLL_START, /* unroll.c's: (t -- [NULL] t), the iterator's slots */
    OP_UNROLL_END /* unroll.c's: pops the iterator's slots */
} OpKind;

typedef struct Insn {
    OpKind op;
    int raw; /* the interpreter's opcode number */
    int arg; /* full oparg after EXTENDED_ARG */
    int off; /* byte offset of the instruction (after EXTENDED_ARG prefixes) */
    int next; /* byte offset of the next instruction (after its caches) */
    int jump; /* jump target byte offset, or -1 */
    Loc loc;
    int count; /* OP_UNROLL_ITEM: the tuple's length */
} Insn;

const char *op_name(int raw); /* the interpreter's name for a raw opcode */
int bytecode_init(void); /* once per process, under the GIL */
PyObject *common_constant(int i); /* LOAD_COMMON_CONSTANT's value i (checked by the decoder), borrowed */

//
// pyversions.c: what changes between CPython versions, one table per version
//
typedef struct OpDef {
    const char *name;
    int number; /* opcode number */
    int caches; /* inline cache code units after the instruction */
} OpDef;

typedef struct PyVersion {
    int minor; /* 3.minor */
    const OpDef *ops; /* every real opcode (opcode_tables.h) */
    int nops;
    /* instruction forms */
    int compare_shift; /* COMPARE_OP: the comparison is arg >> compare_shift */
    bool null_after; /* LOAD_GLOBAL/LOAD_ATTR push the NULL after the callable, and a call's
                      * stack is [callable, self_or_null, args...]; else [NULL|callable, callable|self] */
    bool attr_method_bit; /* LOAD_ATTR's low bit is the method form; else LOAD_METHOD */
    bool make_function_attrs; /* MAKE_FUNCTION's arg carries the attribute flags; else
                               * SET_FUNCTION_ATTRIBUTE sets them */
    int end_for_pops; /* values END_FOR pops: 2 (it, v), or 1 and a POP_TOP/POP_ITER follows;
                       * 0: FOR_ITER pops the iterator and jumps past its loop (3.11) */
    int iter_slots; /* stack entries of a for loop's iterator: GET_ITER pushes them, POP_ITER pops */
    int binop_subscr; /* BINARY_OP's arg for o[i], or -1 where BINARY_SUBSCR spells it */
    bool call_ex_kwargs_slot; /* CALL_FUNCTION_EX always has the kwargs slot (NULL when none) */
    /* LOAD_COMMON_CONSTANT's operands, NULL-terminated names of builtins (NULL: no such op) */
    const char *const *common_constants;
} PyVersion;

/* The running interpreter's table, or NULL (with an ImportError set) where there is none. */
const PyVersion *pyversion(void);
extern const PyVersion *pyv; /* set by bytecode_init() */
PyObject *py_bytecode_table(PyObject *self, PyObject *unused); /* _core.bytecode_table() */
int decode_bytecode(Ctx *c); /* fills c->insns, c->ninsns */

//
// cfg.c: basic blocks and the stack depth at each block entry
//
struct Block {
    int id;
    int first, last; /* insn index range [first, last] */
    int depth; /* operand-stack depth on entry; -1 = unreachable */
    Block **succ;
    int nsucc;
    PtrVec instrs; /* IR (build.c) */
    int *slot_vars; /* var index holding entry stack slot i (build.c) */
    bool built;
    LLVMBasicBlockRef bb; /* lower.c */
};
int build_cfg(Ctx *c);
Block *block_at(Ctx *c, int off);
int for_iter_exit(Ctx *c, const Insn *in);

// unroll.c: loops over tuples of arrays, repeated per item
int unroll_loops(Ctx *c);

//
// build.c: stack simulation, bytecode -> IR
//
enum { IRF_VALUE = 1, IRF_TERM = 2 }; /* irops.h's flags */
typedef enum {
#define IR_OP(name, spelling, nargs, flags) IR_##name,
#include "irops.h"
#undef IR_OP
    IR_NUM_OPS
} IrOp;
/* irops.h's columns, by IrOp */
typedef struct IrOpInfo {
    const char *name;
    int nargs, flags;
} IrOpInfo;
extern const IrOpInfo ir_op_info[IR_NUM_OPS];

/* What an IR_CONST holds. */
typedef enum {
    CK_INT, /* ival (a uint64 beyond int64's range when is_uint64) */
    CK_FLOAT, /* fval */
    CK_BOOL, /* ival 0 or 1 */
    CK_NONE,
    CK_STR, /* name */
    CK_TUPLE, /* args, nargs: constants */
    CK_COMPLEX, /* fval + fimag j */
    CK_ELLIPSIS, /* `...` */
} ConstKind;

typedef enum {
    BIN_ADD,
    BIN_AND,
    BIN_FLOORDIV,
    BIN_LSHIFT,
    BIN_MATMUL,
    BIN_MUL,
    BIN_MOD,
    BIN_OR,
    BIN_POW,
    BIN_RSHIFT,
    BIN_SUB,
    BIN_DIV,
    BIN_XOR
} BinOp;
typedef enum { UN_NEG, UN_POS, UN_NOT, UN_INVERT } UnOp;
typedef enum { CMP_LT, CMP_LE, CMP_EQ, CMP_NE, CMP_GT, CMP_GE, CMP_IS, CMP_IS_NOT } CmpOp;

struct Instr {
    IrOp op;
    Loc loc;
    int id;
    Type *type; /* typeinfer.c */
    Instr **args;
    int nargs;
    int64_t ival;
    double fval;
    ConstKind ckind; /* IR_CONST */
    bool is_uint64; /* IR_CONST CK_INT: too big for int64, so typed uint64 */
    double fimag; /* IR_CONST CK_COMPLEX: the imaginary part (fval the real) */
    const char *name; /* IR_OBJ path, IR_ATTR attribute, IR_CONST str */
    int var; /* IR_LOAD_VAR / IR_STORE_VAR */
    int nkw;
    const char **kwnames; /* IR_CALL: the last nkw args are keywords */
    bool star; /* IR_CALL: f(*t), the one argument a tuple to spread (typeinfer does) */
    int nunpack; /* IR_TUPLE_GET: how many values the code unpacks into */
    Block *target, *target2;
    PyObject *pyobj; /* IR_OBJ: the object, borrowed (kept alive by globals/modules) */
    PyObject *func; /* IR_OBJ: the Python function of a device function, borrowed */
    LLVMValueRef llv, llv2; /* lower.c */
    const struct Intrinsic *intr; /* typeinfer.c: the resolved intrinsic of an IR_CALL/IR_OBJ */
    Func *callee; /* typeinfer.c: the device function an IR_CALL calls */
    uint64_t origin; /* typeinfer.c: the arguments (bit i: argument i) an array value may be */
    Type *conv; /* typeinfer.c: operand type an op computes in (binop/cmp); a setitem's view */
    bool alloc_done;
    size_t shared_off; /* typeinfer.c: offset of a shared array in the block's shared memory */
    int align; /* typeinfer.c: a shared or local array's alignment in bytes (alignment=, at least 16) */
};

typedef struct Var {
    const char *name; /* Python name, or "$stack.B.i" for stack slots */
    Type *type;
    Loc loc; /* first assignment */
    bool is_arg;
    LLVMValueRef slot; /* lower.c: alloca */
    LLVMValueRef value; /* lower.c: the value of a variable assigned once, at the start (no alloca) */
    bool once; /* lower.c: assigned once, in the first block, before any read there */
    uint64_t origin; /* typeinfer.c: the arguments an array variable may hold */
} Var;

/* A for loop over something other than range() (an array, a tuple,
 * enumerate(), zip()): it counts k over range(len(seq)) and its body starts
 * by taking element k. */
#define MAX_SEQ_LOOPS 256
typedef struct SeqLoop {
    int for_off; /* the FOR_ITER's offset */
    int body_off; /* where its body starts (the FOR_ITER's next) */
    Instr *seq;
} SeqLoop;

/* The builder's state, shared by build.c and the files it builds with. */
typedef struct Builder {
    Ctx *c;
    Block *blk;
    Instr **stack;
    int sp, cap;
    Loc loc;
    PyObject *kwnames; /* KW_NAMES (3.11/3.12): names for the next CALL */
    PtrVec work; /* blocks to build */
    PyObject *names, *consts, *varnames, *freevars;
    int const_items; /* items of the constant being converted, counting nested tuples */
    Instr *tuple_k; /* the last LOAD_CONST of a tuple, and the tuple: a nested function's defaults */
    PyObject *tuple_obj;
    SeqLoop loops[MAX_SEQ_LOOPS];
    int nloops;
} Builder;

Instr *build_emit(Builder *bd, IrOp op, int nargs); /* a new instruction at the end of the block */
Instr *new_const(Builder *bd); /* a new IR_CONST, in no block */

int build_ir(Ctx *c);
void dump_ir(Ctx *c, FILE *f);
/* Does the kernel take the error buffer (debug=True or boundscheck=True)? */
#define HAS_ERRBUF(c) ((c)->opt.debug || (c)->opt.boundscheck)

/* The IR_OBJ paths of a global NumPy array (frozen into the kernel) and of a
 * captured device array (its address baked in): not real dotted paths, so no
 * module attribute (numpy.ndarray, the class) can take them. */
#define PATH_GLOBAL_ARRAY "$global ndarray"
#define PATH_CAPTURED_ARRAY "$captured device array"
#define PATH_EXTERN_FN "$external device function" /* declare_device's (externs.c) */
/* Is this IR value a compile-time constant (int/float/bool/tuple of them)? */
bool ir_is_const(const Instr *v);
/* Does a call of this path become an operator (operator.add, np.power, divmod...)? */
bool is_operator_path(const char *path);

//
// pyvalue.c: Python objects as IR values, and IR constants as Python objects
//
/* A number, bool, None, str or tuple of them as an IR constant; NULL with no
 * exception set if `o` is none of these. */
Instr *const_from_py(Builder *bd, PyObject *o, int depth);
/* An Enum class's member m: an IntEnum's an int constant, another's a compile-time object;
 * NULL (no exception) if m is not a member of cls. */
Instr *enum_member_value(Builder *bd, PyObject *cls, PyObject *m);
bool is_enum_member(PyObject *o);
bool enum_members(const Instr *cmp); /* a comparison of two such members */
Instr *value_from_py(Builder *bd, PyObject *o, const char *what); /* a global, cell or module attribute */
Instr *load_global(Builder *bd, const char *name);
Instr *load_attr(Builder *bd, Instr *obj, const char *name);
PyObject *py_from_const(const Instr *k); /* new reference */
const char *py_type_name(PyObject *o); /* for messages */

//
// desugar.c: operator calls as operators, for loops over sequences as counts
//
/* The operator a call of `path` stands for, emitted into *out (NULL: an ordinary call). */
int operator_call(Builder *bd, const char *path, Instr **argv, int n, Instr **out);
bool is_call_of(const Instr *v, const char *path);
Instr *call_builtin(Builder *bd, const char *path, Instr **args, int n); /* path(args...) */
Instr *seq_len(Builder *bd, Instr *s); /* how many items a loop over s takes */
Instr *seq_item(Builder *bd, Instr *s, Instr *k); /* item k of s */

// libdevice.c
Type *type_libdevice_call(Ctx *c, Instr *in, const char *path, Type **at, int nargs);
LLVMValueRef lower_libdevice_call(Ctx *c, Instr *in);

// ufuncloop.c
Type *type_ufunc_loop(Ctx *c, Instr *in, bool *handled); /* np.sin(x, out) on arrays; *handled if it was one */
void check_ufunc_shapes(Ctx *c, Instr *in); /* lowering: a ufunc's operands broadcast onto its output */

//
// typeinfer.c
//
typedef enum {
    IK_SPECIAL, /* a value: threadIdx.x (id = Special, dim) */
    IK_GRID,
    IK_GRIDSIZE,
    IK_SYNCTHREADS,
    IK_SHARED_ARRAY,
    IK_LOCAL_ARRAY,
    IK_ATOMIC, /* id = AtomicOp */
    IK_RANGE,
    IK_LEN,
    IK_ABS,
    IK_MIN,
    IK_MAX,
    IK_CAST, /* cast: id = TypeKind */
    IK_MATH1, /* float -> float (libm name in `name`) */
    IK_MATH2, /* (float, float) -> float */
    IK_MATH_TOINT, /* floor/ceil/trunc: float -> int64 */
    IK_MATH_CLASS, /* isnan/isinf/isfinite: number -> bool (id = MathClass) */
    IK_MATH_SCALE, /* radians/degrees: float * constant (id = MathScale) */
    IK_FMA, /* gpu.fma(a, b, c) */
    IK_BITS, /* gpu.popc/clz/ffs/brev (id = BitsOp) */
    IK_SYNC_REDUCE, /* syncthreads_count/and/or (id = SyncReduceOp) */
    IK_FENCE, /* threadfence_block/threadfence/threadfence_system (id = FenceScope) */
    IK_WARP, /* shuffles, votes, match, syncwarp, activemask: id = WarpOp */
    IK_LANEMASK_LT,
    IK_CONST_ARRAY, /* gpu.const.array_like(global ndarray) */
    IK_PRINT, /* print(...) of constants, numbers and bools */
    IK_COMPLEX, /* complex(re=0, im=0) -> complex128 */
    IK_CONJUGATE, /* z.conjugate(): the callee is the IR_ATTR holding z */
    IK_CMATH, /* cmath.*: id = CmathFn (complex.c) */
    IK_ROUND, /* round(x), round(x, ndigits) */
    IK_POWMOD, /* pow(a, b, m) of integers (pow(a, b) is the ** operator) */
    IK_SEQ, /* enumerate(), zip(): only as a for loop's iterable (build.c counts over them) */
    IK_SUM, /* sum(tuple) */
    IK_TUPLE, /* tuple(), tuple(a tuple) */
    IK_ANYALL, /* any(tuple) (id 0), all(tuple) (id 1) */
    IK_ISINSTANCE, /* isinstance(x, cls or tuple of classes): a constant of the static type */
    IK_BIT_COUNT, /* x.bit_count(), int.bit_count(x) */
    IK_FREXP, /* math.frexp(x) -> (mantissa, int32 exponent) */
    IK_LDEXP, /* math.ldexp(x, i) */
    IK_MODF, /* math.modf(x) -> (fraction, integral part) */
    IK_NP_ROUND, /* np.floor/ceil/trunc/rint: float -> float (name = llvm intrinsic) */
    IK_NP_MINMAX, /* np.minimum/maximum (NaN wins), np.fmin/fmax (NaN loses): id = 0..3 */
    IK_NP_LOGICAL, /* np.logical_and/or/xor: id = 0..2 */
    IK_NP_SIGN, /* np.sign: -1, 0, 1 in the argument's type (NaN for NaN) */
    IK_REDUCE, /* np.sum(a), a.sum() and the other whole-array reductions: id = ReduceFn */
    IK_RESHAPE, /* a.reshape(shape): the callee is the IR_ATTR holding a (views.c) */
    IK_VIEW_DTYPE, /* a.view(dtype): the callee is the IR_ATTR holding a (views.c) */
    IK_ARRAY_COPY, /* a.copy() of a frozen global array: a local array (globalarrays.c) */
    IK_FP16, /* gpu.fp16.*: id = Fp16Op (fp16.c) */
    IK_BF16, /* gpu.bf16.*: id = the row of bf16.c's table */
    IK_FP8,  /* gpu.fp8.cvt_*_to_fp8: id = the source's TypeKind (fp8.c) */
    IK_WMMA, /* gpu.wmma.*: id = WmmaOp (mma.c) */
    IK_CP_ASYNC, /* gpu.cp_async.*: id = CpAsyncOp (cpasync.c) */
    IK_MBARRIER, /* gpu.mbarrier.*: id = MbarOp (mbarrier.c) */
    IK_SELP, /* gpu.selp(pred, a, b): a select, no branch */
    IK_NANOSLEEP, /* gpu.nanosleep(ns): nanosleep.u32 on the GPU; nothing on the CPU target */
    IK_VECTOR, /* a vector type's constructor, gpu.float32x3(...): id = the items' TypeKind, dim = their count */
    IK_CACHE_LOAD, /* gpu.ldca/ldcg/ldcs/ldlu/ldcv(array, index): id = CacheHint */
    IK_CACHE_STORE, /* gpu.stcg/stcs/stwb/stwt(array, index, value): id = CacheHint */
    IK_CG, /* cooperative groups: cg.this_grid(), g.sync() ... (id = CgOp) */
    IK_LIBDEVICE, /* gpu.libdevice.<name>(...): libdevice's __nv_<name> (libdevice.c) */
    IK_EXTERN, /* a call of an external function (declare_device; externs.c) */
} IntrinsicKind;
/* cachehints.c: the PTX cache operators */
typedef enum { CH_CA, CH_CG, CH_CS, CH_LU, CH_CV, CH_WB, CH_WT } CacheHint;

/* cg.this_grid() and cg.this_thread_block() give a compile-time group object
 * (TY_OBJ "gpujit.cg.GridGroup" / "gpujit.cg.ThreadBlock"), whose .sync is
 * the barrier. */
typedef enum { CG_THIS_GRID, CG_THIS_BLOCK, CG_GRID_SYNC, CG_BLOCK_SYNC } CgOp;

typedef struct Intrinsic {
    const char *path;
    IntrinsicKind kind;
    int id, dim;
    const char *name; /* math: the C function */
} Intrinsic;
/* The ids of IK_BITS, IK_MATH_CLASS and IK_MATH_SCALE rows. */
typedef enum { BITS_POPC, BITS_CLZ, BITS_FFS, BITS_BREV } BitsOp;
typedef enum { CLASS_ISNAN, CLASS_ISINF, CLASS_ISFINITE } MathClass;
typedef enum { SCALE_RADIANS, SCALE_DEGREES } MathScale;
int infer_types(Ctx *c);
/* externs.c: calls of declared external functions */
Type *type_extern_call(Ctx *c, Instr *in);
LLVMValueRef lower_extern_call(Ctx *c, Instr *in);
/* For typing functions of (Ctx *c, Instr *in, ...) that return a Type *:
 * raise the error at the instruction's line and return NULL. */
#define TERR(...) return (error_at(c, ERR_TYPING, in->loc, __VA_ARGS__), (Type *)NULL)
#define UNSUP(...) return (error_at(c, ERR_UNSUPPORTED, in->loc, __VA_ARGS__), (Type *)NULL)
static inline bool type_known(const Type *t) { return t && t->kind != TY_UNKNOWN; }
/* Argument i's bit in the origin and written masks; bit 63 stands for every
 * argument from the 64th on (they share it, so the masks stay one word). */
static inline uint64_t arg_bit(int64_t i) { return 1ULL << (i < 63 ? i : 63); }
/* prune.c: before infer_types, in a device function: `if p:` on a literal
 * argument p keeps only the branch its value takes, as numba prunes. */
int prune_literal_branches(Ctx *c);
/* webs.c: before infer_types, each variable split into its webs (assignments
 * reaching common uses), so that a reused name may hold another type. */
int split_webs(Ctx *c);
void types_report(Ctx *c, StrBuf *out); /* typed locals per line (inspect_types) */

//
// literals.c: numba's literal arguments of device functions
//
/* The compile-time constant an operand holds: itself if a constant, or the
 * constant a device function's caller passed for the parameter it reads
 * (numba's literal arguments); NULL if none. LIT_PEEK only looks; LIT_KEY
 * makes the value part of the device function's specialisation (a call
 * with a run-time value there gets another one); LIT_NEED also makes a
 * run-time value there an error (a shape, a dtype name). */
typedef enum { LIT_PEEK, LIT_KEY, LIT_NEED } LiteralUse;
Instr *arg_literal(Ctx *c, Instr *v, LiteralUse use);
/* Does specialisation `f` fit this call's values (*fits)? -1 with an error where f
 * needs a value the call does not pass as a constant. */
int literals_fit(Ctx *caller, Instr *call, Func *f, const char *name, bool *fits);

//
// target_nvptx.c, target_host.c: what differs between a GPU and the CPU
//
typedef enum { SP_TID, SP_NTID, SP_CTAID, SP_NCTAID, SP_LANEID, SP_WARPSIZE } Special;
typedef enum { FENCE_BLOCK, FENCE_DEVICE, FENCE_SYSTEM } FenceScope;
/* syncthreads_count/and/or and the warp-level operations: the CPU backend
 * passes them to the runtime by number, so both take them from runtime/cpu_abi.h. */
typedef enum { SYNC_COUNT = GJ_SYNC_COUNT, SYNC_AND = GJ_SYNC_AND, SYNC_OR = GJ_SYNC_OR } SyncReduceOp;
#define WARP_ENUMERATOR(name) WARP_##name = GJ_WARP_##name,
typedef enum { GJ_WARP_OPS(WARP_ENUMERATOR) } WarpOp;
#undef WARP_ENUMERATOR

/* The LLVM target machine a target compiles for. */
typedef struct MachineSpec {
    const char *triple, *cpu, *features; /* in the compilation's arena: a host's feature list is long */
    LLVMRelocMode reloc;
    LLVMCodeModel code_model;
    /* an LLVM option ("-name") the machine reads when it is created: on while it is created,
     * off after, and part of the pool's key (NULL: none) */
    const char *option;
} MachineSpec;

/* Everything that differs between targets: compile.c and emit.c call these
 * without knowing which target it is (setup picks it with target_for). */
struct Target {
    const char *name;
    const char *api_name; /* gpujit's name for it: target="cuda" / "cpu" */
    /* Once per process, before any compilation: initialise LLVM's back end. */
    void (*init)(void);
    /* Setup: the per-target state of a compilation (its LLVM context, and
     * on the host a process-unique c->symbol); end() frees it at teardown,
     * after the module, even when begin() or the pipeline failed. */
    int (*begin)(Ctx *c);
    void (*end)(Ctx *c);
    /* The triple, CPU and features to compile for (emit.c pools the machines). */
    void (*machine)(Ctx *c, MachineSpec *m);
    /* Before optimisation: link libraries the module calls (libdevice); the
     * host target splits its coroutines there. */
    int (*link)(Ctx *c);
    /* After optimisation: the output (PTX text, or host code in the JIT). */
    int (*emit)(Ctx *c);
    /* ---- lowering (lower.c, intrinsics.c) ---- */
    AddrSpace array_space; /* address space of array arguments' data */
    int shared_space; /* LLVM address space of shared arrays */
    /* Create c->fn (the function that holds the kernel body) with its params. */
    int (*begin_kernel)(Ctx *c, LLVMTypeRef *params, int nparams);
    /* Optional: create c->fn for a device function compiled on its own (compile_ptx(device=True)),
     * externally visible, returning `ret`. A target without it cannot compile one. */
    int (*begin_export)(Ctx *c, LLVMTypeRef ret, LLVMTypeRef *params, int nparams);
    /* A load (v NULL: returns the value) or store of v at global pointer p, of memory type t,
     * with PTX cache operator `op` ("cg", "wt", ...; cachehints.c). */
    LLVMValueRef (*cache_access)(Ctx *c, const char *op, LLVMValueRef p, LLVMTypeRef t, LLVMValueRef v);
    /* Thread geometry: dim 0..2 (x, y, z). */
    LLVMValueRef (*special)(Ctx *c, Special s, int dim);
    void (*barrier)(Ctx *c);
    /* cg.this_grid().sync(): a barrier of every thread of the grid (the
     * launch is cooperative, so every block is resident). */
    void (*grid_sync)(Ctx *c);
    /* Pointer to a static shared array of type `arrty` at byte `offset` of
     * the block's shared memory (typeinfer.c laid them out). */
    LLVMValueRef (*shared_array)(Ctx *c, LLVMTypeRef arrty, size_t offset);
    /* A libm/libdevice function by its C name ("sqrt", "powf"...). */
    LLVMValueRef (*math_fn)(Ctx *c, const char *name, LLVMTypeRef fnty);
    /* libdevice's __nv_<name> declared as fnty, or NULL where this target has no such function. */
    LLVMValueRef (*libdevice_fn)(Ctx *c, const char *name, LLVMTypeRef fnty);
    /* syncthreads_count/and/or (op a SyncReduceOp): a barrier that reduces an i32
     * predicate over the block; returns the i32 result. */
    LLVMValueRef (*barrier_reduce)(Ctx *c, int op, LLVMValueRef pred);
    void (*fence)(Ctx *c, FenceScope scope);
    /* A warp-level operation on an i32 or i64 value `v` (votes: 0/1 in an
     * i32) with an i32 `mask` and i32 `arg` (lane, delta); returns an int of
     * v's width for shuffles, an i32 otherwise, NULL for WARP_SYNC. */
    LLVMValueRef (*warp)(Ctx *c, WarpOp op, LLVMValueRef mask, LLVMValueRef v, LLVMValueRef arg);
    /* Dynamic shared memory (sized at launch): its base, and its size in
     * bytes as an i64 into *nbytes. */
    LLVMValueRef (*dynamic_shared)(Ctx *c, LLVMValueRef *nbytes);
    /* printf-style output of `fmt` with arguments already widened to i64,
     * double or a string pointer (vprintf on the GPU, printf on the CPU). */
    void (*print)(Ctx *c, LLVMValueRef fmt, LLVMValueRef *args, int nargs);
    /* A read-only array holding these bytes; returns a generic pointer. */
    LLVMValueRef (*const_array)(Ctx *c, const char *bytes, size_t n);
    /* After lowering: entry points, module flags. */
    int (*finish)(Ctx *c);
    /* Device functions take hidden parameters first (the CPU's block context
     * and thread index): their types into `types`, or, at a call site, the
     * caller's values into `vals`; returns how many. */
    int (*hidden_params)(Ctx *c, LLVMTypeRef *types, LLVMValueRef *vals);
    /* c->fn of a device function exists: pick up the hidden parameters. */
    void (*begin_device_fn)(Ctx *c);
    /* activemask() takes the lane's position in the program (lower.c,
     * lane_position): the CPU runs a warp's lanes one after another, and
     * the runtime groups the lanes that reach the same point together. */
    bool lane_positions;
    /* The back end computes half in float (x86): a half fma would round
     * twice, and double -> half calls a runtime library the JIT may not
     * find. lower.c rounds double to half in two steps, the first to odd
     * (which keeps the result exact); fp16.c computes an fma in double. */
    bool half_via_float;
    /* Calls of external functions (declare_device) are linked with their code
     * when the runtime loads the output; without it they are refused. */
    bool links_external;
    /* An out-of-bounds index, its error record written: end the launch here
     * (the caller adds `unreachable`). NULL: the thread goes on, the access
     * redirected to a scratch word. */
    void (*trap)(Ctx *c);
    /* Optional, racecheck=True: tell the race detector of an access of `size` bytes at p
     * (flags GJ_RACE_WRITE/ATOMIC, and the site, as GjBlockCtx.race takes them). */
    void (*race_access)(Ctx *c, LLVMValueRef p, uint64_t size, int32_t site_flags);
};
extern const Target target_nvptx, target_host;
/* libdevice_link.c: links the libdevice functions that c->mod declares, from the file at path */
int libdevice_link(Ctx *c, const char *path);
const Target *target_for(int kind); /* compile.c: by GjTargetKind; NULL past the last */

//
// verify.c: the IR's invariants, checked between passes
//
/* After `pass` (its name, for the message): an internal error for the first
 * broken invariant of c's IR; 0 at once unless c->verify. */
int verify_ir(Ctx *c, const char *pass);
#ifdef NDEBUG
#define VERIFY_ALWAYS 0 /* release builds: only with GPUJIT_DEBUG=verify */
#else
#define VERIFY_ALWAYS 1
#endif
int verify_break(Ctx *c, const char *what); /* tests: break one invariant */

//
// reductions.c: whole-array reductions (np.sum(a), a.max(), np.nanmean(a), ...)
//
typedef enum {
    RD_SUM,
    RD_PROD,
    RD_MIN,
    RD_MAX,
    RD_MEAN,
    RD_VAR,
    RD_STD,
    RD_ALL,
    RD_ANY,
    RD_ARGMIN,
    RD_ARGMAX,
    RD_COUNT_NONZERO,
    RD_NANSUM,
    RD_NANPROD,
    RD_NANMIN,
    RD_NANMAX,
    RD_NANMEAN,
    RD_NANVAR,
    RD_NANSTD,
} ReduceFn;
const char *reduce_name(ReduceFn fn);
Instr *reduce_operand(Instr *in); /* the array of np.f(a) or a.f(); NULL if the arguments are wrong */
Type *reduce_type(Ctx *c, Instr *in, ReduceFn fn);
LLVMValueRef lower_reduction(Ctx *c, ReduceFn fn, Instr *in, Type *rt);

//
// bf16.c: bfloat16's rounding, its legalisation for the targets, gpu.bf16.*
//
typedef enum { ROUND_RN, ROUND_RZ, ROUND_RD, ROUND_RU } RoundMode; /* CUDA's _rn, _rz, _rd, _ru */
LLVMValueRef f64_to_f32_odd(LLVMBuilderRef b, LLVMValueRef d);
LLVMValueRef bf16_round_bits(LLVMBuilderRef b, LLVMValueRef f, RoundMode mode);
LLVMValueRef bf16_from(LLVMBuilderRef b, LLVMValueRef v, bool is_signed, RoundMode mode);
LLVMValueRef bf16_to_f32(LLVMBuilderRef b, LLVMValueRef v);
int legalize_bf16(Ctx *c);
const Intrinsic *bf16_lookup(const char *path);
PyObject *bf16_names(void); /* the names of gpu.bf16's functions, a tuple of str */
Type *type_bf16(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs);
LLVMValueRef lower_bf16(Ctx *c, int id, Instr **a, int nargs, Type *rt);

//
// fp8.c: the fp8 storage types' conversions, as cuda_fp8.h's
//
LLVMValueRef fp8_convert(Ctx *c, LLVMValueRef v, Type *from, Type *to);
Type *type_fp8_cvt(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs);
LLVMValueRef lower_fp8_cvt(Ctx *c, Instr *in, const Intrinsic *k, Instr **a);
Instr *literal_operand(Ctx *c, Instr *in, Instr *v); /* intrinsics.c: an operand needed at compile time */

//
// fp16.c: gpu.fp16.* (hadd, hfma, hsin, heq, ...)
//
typedef enum {
    FP16_ADD, FP16_SUB, FP16_MUL, FP16_DIV, FP16_FMA, FP16_NEG, FP16_ABS, FP16_MAX, FP16_MIN,
    FP16_CEIL, FP16_FLOOR, FP16_TRUNC, FP16_RINT, FP16_SQRT, FP16_RSQRT, FP16_RCP,
    FP16_EXP, FP16_EXP2, FP16_EXP10, FP16_LOG, FP16_LOG2, FP16_LOG10, FP16_SIN, FP16_COS, FP16_TANH, FP16_TANH_APPROX,
    FP16_EQ, FP16_NE, FP16_GT, FP16_GE, FP16_LT, FP16_LE, /* the comparisons, together: bool results */
    FP16_NOPS
} Fp16Op;
int fp16_nargs(int op);
Type *type_half_fn(Ctx *c, Instr *in, const char *path, int op, Type *h, Type **at, int nargs);
Type *type_fp16(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs);
LLVMValueRef lower_fp16(Ctx *c, int op, Instr **a, int nargs, Type *h); /* h: float16 or bfloat16 */

//
// mma.c: gpu.wmma.* (fragments, load/store/fill, mma_sync on tensor cores)
//
typedef enum {
    WMMA_FRAGMENT, WMMA_FILL, WMMA_LOAD, WMMA_STORE, WMMA_MMA,
    WMMA_CONST, /* matrix_a, row_major, ...: arguments, not calls */
} WmmaOp;
Type *type_wmma(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs);
bool frag_eq(const struct MmaFrag *a, const struct MmaFrag *b); /* types.c's type_eq */
const char *frag_name(Ctx *c, const Type *t); /* types.c's type_name */
LLVMValueRef lower_wmma(Ctx *c, Instr *in, const Intrinsic *k, Instr **a, int nargs, Type *rt);

//
// cpasync.c: gpu.cp_async.* (Ampere's asynchronous copies, global to shared)
//
typedef enum { CPA_COPY, CPA_COMMIT, CPA_WAIT_GROUP, CPA_WAIT_ALL } CpAsyncOp;
Type *type_cp_async(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs);
LLVMValueRef lower_cp_async(Ctx *c, Instr *in, const Intrinsic *k, Instr **a, int nargs);

//
// mbarrier.c: gpu.mbarrier.* (split arrive/wait barriers in shared memory)
//
typedef enum {
    MBAR_INIT, MBAR_ARRIVE, MBAR_ARRIVE_EXPECT_TX, MBAR_EXPECT_TX, MBAR_COMPLETE_TX,
    MBAR_TEST_WAIT, MBAR_TRY_WAIT, MBAR_TEST_WAIT_PARITY, MBAR_TRY_WAIT_PARITY
} MbarOp;
Type *type_mbarrier(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs);
LLVMValueRef lower_mbarrier(Ctx *c, Instr *in, const Intrinsic *k, Instr **a, int nargs);

//
// atomics.c: atomics and warp-level operations
//
/* gpu.atomic.*: the op (an Intrinsic's id). */
typedef enum {
    AT_ADD,
    AT_SUB,
    AT_AND,
    AT_OR,
    AT_XOR,
    AT_EXCH,
    AT_MAX,
    AT_MIN,
    AT_NANMAX,
    AT_NANMIN,
    AT_INC,
    AT_DEC,
    AT_CAS,
    AT_COMPARE_AND_SWAP
} AtomicOp;
bool check_index(Ctx *c, Instr *in, const char *what, Type *arr, Type *idx);
Type *type_atomic(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs);
Type *type_warp(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs);
LLVMValueRef lower_atomic(Ctx *c, AtomicOp op, Instr **a, Type *et);
Type *type_cache_hint(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs);
LLVMValueRef lower_cache_hint(Ctx *c, const Intrinsic *k, Instr **a, Type *rt);
LLVMValueRef lower_warp(Ctx *c, WarpOp op, Instr **a, int nargs, Type *rt);

//
// intrinsic_table.c
//
/* Returns the intrinsic table entry matched by a dotted path, or NULL. */
const Intrinsic *intrinsic_lookup(const char *path);
bool intrinsic_namespace(const char *path); /* a prefix of some intrinsic ("gpujit.shared") */

//
// intrinsics.c
//
/* An operand needed at compile time: a device function's literal parameter or a
 * local assigned once from a constant resolved to that constant (else v). */
Instr *literal_operand(Ctx *c, Instr *in, Instr *v);
Type *dtype_of(Ctx *c, Instr *in, Instr *d); /* the element type a dtype argument names */
bool intrinsic_writes_first(const Intrinsic *k);
Type *type_intrinsic_call(Ctx *c, Instr *in); /* NULL on error, &ty_unknown if args are not typed yet */
LLVMValueRef lower_intrinsic_call(Ctx *c, Instr *in);

//
// globalarrays.c: arrays read from globals and closures, and const.array_like
//
/* A global or closure array read by the code (an IR_OBJ): a NumPy array is
 * frozen into constant memory, a device array captured by its address. */
Type *type_global_array(Ctx *c, Instr *in);
LLVMValueRef lower_global_array(Ctx *c, Instr *in);
Type *type_array_copy(Ctx *c, Instr *in);
LLVMValueRef lower_array_copy(Ctx *c, Instr *in, Type *rt);
Type *type_const_array(Ctx *c, Instr *in); /* const.array_like(a) */
LLVMValueRef lower_const_array(Ctx *c, Instr *in);

//
// print.c: print() in kernels
//
bool printable(const Type *t, const Instr *v); /* can print() take this value (v: its IR, or NULL)? */
LLVMValueRef lower_print(Ctx *c, Instr **a, int nargs);

//
// builtins.c: builtins beyond an instruction (min/max/sum over tuples, round, pow mod), frexp/modf
//
/* The values and types of min/max/sum/any/all's arguments, a single tuple's items spread
 * (arrays in the arena); their count, -1 out of memory. */
int spread_args(Ctx *c, Instr **a, int nargs, LLVMValueRef **v, Type ***t);
LLVMValueRef round_float_ndigits(Ctx *c, LLVMValueRef x, LLVMValueRef n); /* round(x, n), x a double */
LLVMValueRef round_int_ndigits(Ctx *c, LLVMValueRef x, LLVMValueRef n); /* round(x, n), x an int64 */
LLVMValueRef pow_mod(Ctx *c, LLVMValueRef a, LLVMValueRef b, LLVMValueRef m); /* pow(a, b, m) of int64s */
LLVMValueRef lower_out_param(Ctx *c, const char *name, Instr *arg, Type *rt); /* frexp, modf */

//
// lower.c: typed IR -> LLVM IR
//
int lower(Ctx *c);

//
// cgutils.c: the LLVM builder kit every lowering file builds with (numba's cgutils.py)
//
LLVMTypeRef llvm_type(Ctx *c, Type *t);
unsigned llvm_as(Ctx *c, AddrSpace s); /* an address space's LLVM number */
LLVMTypeRef mem_type(Ctx *c, Type *t); /* in memory: bool is a byte */
LLVMValueRef val(Ctx *c, Instr *v); /* an IR value's LLVM value */
LLVMValueRef val_as(Ctx *c, Instr *v, Type *to);
LLVMValueRef convert(Ctx *c, LLVMValueRef v, Type *from, Type *to);
LLVMValueRef to_bool(Ctx *c, LLVMValueRef v, Type *from);
LLVMValueRef ci64(Ctx *c, int64_t v);
LLVMValueRef fp(Ctx *c, LLVMValueRef v); /* add the fast-math flags in force */
LLVMValueRef call_intrinsic(Ctx *c, const char *name, LLVMTypeRef *over, int nover, LLVMValueRef *args, int nargs);
LLVMValueRef fcall1(Ctx *c, const char *llvm_intrinsic, LLVMValueRef x);
LLVMValueRef fcall2(Ctx *c, const char *llvm_intrinsic, LLVMValueRef x, LLVMValueRef y);
LLVMValueRef math_call(Ctx *c, const char *name, Type *t, LLVMValueRef *args, int nargs); /* libm/libdevice */
LLVMValueRef elem_ptr(Ctx *c, Instr *arr, Instr *idx); /* &arr[idx...] */
LLVMValueRef index_scalar(Ctx *c, LLVMValueRef v, Type **it); /* a 0-d array index: its element */
LLVMValueRef load_elem(Ctx *c, Type *et, LLVMValueRef p); /* an element of type et at p */
void store_elem(Ctx *c, Type *et, LLVMValueRef p, LLVMValueRef v);
LLVMValueRef const_shape_array(Ctx *c, Type *t, LLVMValueRef data, Instr *shape);
LLVMValueRef entry_alloca(Ctx *c, LLVMTypeRef t, const char *name);
LLVMValueRef extract_value(Ctx *c, LLVMValueRef agg, unsigned idx, const char *name);
LLVMValueRef range_len(Ctx *c, LLVMValueRef rg); /* a range's number of values (i64) */
/* The struct of a C-contiguous array at `data` with these dims (i64). */
LLVMValueRef array_value(Ctx *c, Type *t, LLVMValueRef data, LLVMValueRef *dims);
LLVMBasicBlockRef new_block(Ctx *c, const char *name); /* in the function being built */
LLVMValueRef complex_make(Ctx *c, Type *ct, LLVMValueRef re, LLVMValueRef im); /* {re, im}; im NULL: 0 */
void record_copy(Ctx *c, Type *rec, LLVMValueRef dst, LLVMValueRef src); /* a record's bytes over another's */

//
// checks.c: run-time checks (raise, assert, division, bounds, slice steps) and their reports
//
/* A place the code can raise `cls(*args)` from (args a tuple); its number.
 * `builtin`: the compiler's own check, whose message says where it failed. */
int raise_site(Ctx *c, PyObject *cls, PyObject *args, bool builtin);
bool may_raise(Func *f); /* can calling f raise (and so take the `raised` flag)? */
LLVMValueRef raised_flag(Ctx *c); /* the kernel's `raised` flag (an i8 pointer) */
void stop_thread(Ctx *c); /* return now, telling the caller when in a device function */
void raise_now(Ctx *c, int site); /* raise from raise_site `site` here; the thread stops */
int check_or_raise(Ctx *c, LLVMValueRef ok, PyObject *cls, const char *msg); /* unless ok, raise cls(msg) */
int check_index_or_raise(Ctx *c, LLVMValueRef ok, const char *msg, LLVMValueRef *good); /* IndexError(msg) */
int check_divisor(Ctx *c, Instr *in, LLVMValueRef b, Type *t); /* ZeroDivisionError for a zero b */
LLVMValueRef scratch_ptr(Ctx *c, unsigned as); /* where a bad access goes instead */
void branch_likely(Ctx *c, LLVMValueRef br); /* a condbr whose first way is the rule */
/* Are the indices ix (given[] as written) in range of arr's n axes? The i1
 * answer, or NULL where the target stopped the launch at a bad one. */
LLVMValueRef check_bounds(Ctx *c, LLVMValueRef arr, LLVMValueRef *ix, LLVMValueRef *given, int n);
/* with checks on (c->errbuf): a record of `kind` (GJ_ERR_*) where `bad`; the thread goes on */
void check_record(Ctx *c, LLVMValueRef bad, int kind, LLVMValueRef w2, LLVMValueRef w3, LLVMValueRef w4);
void check_step(Ctx *c, LLVMValueRef bad, int what); /* a zero slice or range() step where `bad` */
/* racecheck=True: the access at p of an element of type et of array arr (a store where
 * GJ_RACE_WRITE is in flags, an atomic with GJ_RACE_ATOMIC) is told to the race detector,
 * unless arr is a local or constant array. A site per access, in the root's table. */
void race_check(Ctx *c, Instr *arr, LLVMValueRef p, Type *et, int flags);
/* a[...] = b or a ufunc's operand (GJ_SHAPE_*): axis of ndim has length src, not dst (or 1) */
void check_shape(Ctx *c, LLVMValueRef bad, int what, int axis, int ndim, LLVMValueRef dst, LLVMValueRef src);

//
// views.c: slices and array views
//
LLVMValueRef lower_slice(Ctx *c, Instr *in);
LLVMValueRef make_view(Ctx *c, Type *at, LLVMValueRef a, Instr *idx, Type *vt); /* a[idx], a view of type vt */
LLVMValueRef view_attr(Ctx *c, Type *at, LLVMValueRef a, const char *name); /* a.T, a.real, a.imag */
void store_view(Ctx *c, Type *vt, LLVMValueRef view, Instr *src);
Type *type_reshape(Ctx *c, Instr *in); /* a.reshape(...) */
LLVMValueRef lower_reshape(Ctx *c, Instr *in, Type *rt);
Type *type_view_dtype(Ctx *c, Instr *in, Type *elem); /* a.view(dtype), elem its element type */
LLVMValueRef lower_view_dtype(Ctx *c, Instr *in, Type *rt); /* view[...] = src */

//
// records.c: structured dtypes' fields (rec.x, rec['x'], and stores into them)
//
const char *record_field_name(Ctx *c, Type *rec, Instr *idx); /* the field a constant index names (a string, or a number), or NULL */
Type *type_record_field(Ctx *c, Instr *in, Type *rec, const char *name); /* NULL (error set) if none */
Type *type_record_store(Ctx *c, Instr *in, Type *rec, const char *name, Type *v);
LLVMValueRef lower_record_get(Ctx *c, Type *rec, LLVMValueRef p, const char *name, Type *rt);
int lower_record_set(Ctx *c, Type *rec, LLVMValueRef p, const char *name, Instr *v);

//
// lanepos.c: each lane's position in the program (activemask on the CPU)
//
int find_loops(Ctx *c); /* at entry: a trip counter per loop */
void count_trips(Ctx *c, Instr *br); /* before a branch */
/* The calling lane's position at the instruction being lowered, for the
 * runtime to tell which lanes reach it together: an i64 array (returned as
 * an i64 address) of *len entries; NULL where the target does not want it. */
LLVMValueRef lane_position(Ctx *c, LLVMValueRef *len);

//
// complex.c: complex arithmetic and cmath, built from real math (CPython's formulas)
//
typedef enum {
    CM_SQRT,
    CM_EXP,
    CM_LOG,
    CM_LOG10,
    CM_SIN,
    CM_COS,
    CM_TAN,
    CM_SINH,
    CM_COSH,
    CM_TANH,
    CM_ASIN,
    CM_ACOS,
    CM_ATAN,
    CM_ASINH,
    CM_ACOSH,
    CM_ATANH, /* complex -> complex */
    CM_PHASE,
    CM_POLAR,
    CM_RECT,
    CM_ISNAN,
    CM_ISINF,
    CM_ISFINITE,
} CmathFn;
/* Typing of cmath.<fn>(args): NULL (and an error set) for bad arguments. */
Type *cmath_type(Ctx *c, Instr *in, CmathFn fn, Type **at, int nargs);
LLVMValueRef cmath_lower(Ctx *c, CmathFn fn, Instr **args, int nargs, Type *rt);
LLVMValueRef complex_binop(Ctx *c, BinOp op, LLVMValueRef a, LLVMValueRef b, Type *ct, Instr *exponent);
LLVMValueRef complex_cmp(Ctx *c, CmpOp op, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef complex_abs(Ctx *c, LLVMValueRef z, Type *ct);

//
// layout.c: the kernel ABI (gj_layout in gpujit.h), for this compilation
//
GjArgInfo layout_arg(Ctx *c, int i); /* kernel argument i as the launcher sees it (tuple items in the arena) */
GjArgInfo *layout_args_copy(Ctx *c); /* all of them, malloc'd in one block with their tuples' items */
int layout_params(Ctx *c, GjParam **out); /* the kernel's parameters, in the arena: how many, or -1 */

//
// emit.c: optimise, then PTX text or host machine code
//
int emit_init(void); /* once: initialise every target's LLVM back end */
int make_target_machine(Ctx *c);
/* Validate opt's cc (ValueError) and map it to one LLVM knows. */
int check_cc(GjOptions *opt);
PyObject *known_ccs(void);
/* target_nvptx.c: libdevice.10.bc's path; NULL with *why set when $GPUJIT_LIBDEVICE names an
 * unreadable file, NULL with *why NULL when none was found */
const char *find_libdevice(const char **why);
void release_target_machine(LLVMTargetMachineRef tm, const char *key);
int optimise(Ctx *c);
int run_passes(Ctx *c, const char *pipeline, const char *what, bool without_gil); /* emit.c */
/* emit.c: around LLVM's work on this compile's own module and context, which touches no Python
 * object; NULL (and nothing to restore) where the caller does not hold the GIL */
PyThreadState *gil_release(void);
void gil_restore(PyThreadState *ts);
int emit_ptx(Ctx *c); /* target_nvptx's emit: the PTX text of c->mod */
int nvptx_ptx_version(Ctx *c); /* target_nvptx.c: the PTX ISA version the code is for */
int fix_ir_nvptx(Ctx *c); /* ptxfix.c: around known NVPTX back-end miscompiles */
int unroll_more(Ctx *c); /* unrollmore.c: constant-count loops twice more than O3 unrolled them */
int merge_geps(Ctx *c);  /* mergegep.c: p[a][b] as p[a + b] within a block */
int hoist_loads(Ctx *c, bool all); /* hoistloads.c: global loads up their block, so their latencies overlap */
int fix_ptx(Ctx *c); /* ptxfix.c: around known ptxas miscompiles */
char *ptxfix_text(const char *ptx, int *changed); /* ptxfix.c: the same on any PTX text (malloc'd; NULL: unchanged) */
int emit_host(Ctx *c); /* target_host's emit: c->mod into the process's JIT */
int insert_stop_polls(Ctx *c); /* stoppolls.c: the stop flag polled at every loop back edge (CPU target) */
void host_jit_release(void *jit);
int emit_host_object(Ctx *c); /* c->out's cached object code into the JIT */
/* regions.c: a barrier kernel's block as loops over its threads between its
 * barriers; 1 with the function in *out, 0 where the kernel does not fit */
int host_regions(Ctx *c, LLVMValueRef *sites, int nsites, LLVMValueRef *out);
void retarget_phis(Ctx *c, LLVMBasicBlockRef head, LLVMBasicBlockRef from, LLVMBasicBlockRef *via,
                   unsigned nvia); /* target_host.c */
void move_rest(Ctx *c, LLVMValueRef site, LLVMBasicBlockRef rest); /* target_host.c */
/* cache.c: a compiled kernel as a dict of plain values (for gpujit/caching.py) and back */
PyObject *gj_output_state(const GjOutput *o);
GjOutput *gj_output_from_state(PyObject *state);
PyObject *gj_cache_environment(void);

//
// compile.c: the pipeline
//
/* A pass of the pipeline: run it, and with GPUJIT_DEBUG=time print how long
 * it took. Needs `Ctx *c` in scope. */
#define STAGE(x) \
    do { \
        double t_ = now_ms(); \
        RETURN_IF_ERROR(x); \
        if (c->timing) stage_time(#x, t_); \
    } while (0)
/* One specialisation of a device function (a Python function called from a
 * kernel), compiled into the kernel's module. */
struct Func {
    PyObject *code; /* which Python function */
    const char *argkey; /* its argument types, spelled */
    Ctx *sub; /* its compilation: frontend state, return type */
    bool typing; /* being typed now: a call from inside is recursion */
    /* parameters whose value this specialisation was compiled for: bit i
     * set, literals[i] the constant; in literal_needed where the body
     * cannot do without it (a shape, a dtype name) */
    uint64_t literal_args, literal_needed;
    Instr **literals;
    Loc literal_loc; /* the first use that needed one, for messages */
    LLVMValueRef fn; /* lower.c */
    int may_raise; /* lower.c: 0 not known yet, 1 no, 2 yes */
};
/* Type (and find or create) the specialisation of `func` for these argument
 * types; *out is NULL with no error when arg types are not known yet. */
int compile_device_function(Ctx *caller, Instr *call, PyObject *func, Type **argtypes, int nargs, Func **out);
/* Tests: the front end on `code`, then verify_break(what), then the verifier
 * (when on, as in any compilation), which must raise an internal error (-1);
 * 0 if it did not. */
int verify_selftest(PyObject *code, PyObject *globals, const char *sig, const char *what);
struct GjOutput {
    GjTargetKind target;
    char *ptx, *llvm, *types, *symbol, *restype;
    int nargs;
    GjArgInfo *args;
    int nparams;
    GjParam *params;
    size_t shared_bytes;
    int uses_barrier;
    int cooperative; /* calls cg.this_grid(): launched with cuLaunchCooperativeKernel */
    int debug; /* takes an error buffer as its last parameter (runtime.md) */
    int nfiles;
    char **files;
    int nbarriers;
    char **barriers; /* host target: "file:line" of each syncthreads() call, by site number */
    int racecheck;   /* host target: compiled with racecheck (its accesses call blk->race) */
    int nraces;
    char **races;    /* racecheck: "file:line\twhat" of each checked access, by site number */
    PyObject *raises; /* (class, args, builtin, function name) per raise site */
    void *host_block_fn, *host_thread_fn;
    void *jit; /* LLVMOrcLLJITRef owning the host code */
    char *bitcode; /* host target, with keep_bitcode: the optimised module (cache.c saves it) */
    size_t bitcode_len;
    char *object; /* host target, with keep_bitcode: the JIT's object code of it (cache.c saves it) */
    size_t object_len;
    int captures; /* a captured device array's address is compiled in (cannot be cached) */
    /* The kernel's static memory, for the CPU target's kernel attributes (the GPU's driver
     * reports its own): shared bytes per block up to the end of the last array
     * (shared_bytes is that rounded up to where dynamic shared memory starts), local array
     * bytes per thread, constant bytes in the optimised module. */
    size_t shared_used, local_bytes, const_used;
    int max_threads; /* per block: launch_bounds' first number, else 0 */
    PyObject *externs; /* a tuple of the external functions (declare_device) called, or NULL */
};

/* The whole state of one compilation. */
struct Ctx {
    Arena arena;
    GjOptions opt;
    const Target *target;
    bool timing; /* GPUJIT_DEBUG=time: STAGE prints each pass's time */
    bool verify; /* GPUJIT_DEBUG=verify or a debug build: verify_ir runs */
    /* the function */
    PyObject *code, *globals, *closure;
    const char *filename, *funcname;
    int firstlineno;
    /* signature */
    int nargs;
    Type **argtypes;
    Type *restype;
    Type *declared_ret; /* the signature's return type, NULL where it names none */
    /* bytecode.c */
    Insn *insns;
    int ninsns;
    int *insn_at; /* byte offset/2 -> insn index, or -1 */
    int nbytes;
    /* cfg.c */
    Block **blocks;
    int nblocks;
    /* build.c */
    PtrVec vars; /* Var* */
    int nvalues;
    /* typeinfer.c */
    bool typed; /* infer_types finished: every value has a type */
    bool uses_barrier;
    bool uses_bf16; /* some LLVM bfloat was made: legalize_bf16 has work */
    bool cooperative; /* cg.this_grid() is called: every block must be resident at once */
    bool uses_activemask; /* root: some function of the kernel calls activemask() */
    bool captures; /* root: a captured device array's address is compiled in */
    size_t shared_bytes;
    uint64_t written; /* the arguments whose arrays the code may store into */
    size_t const_bytes; /* intrinsics.c, root: constant memory of const.array_like arrays */
    size_t shared_used, local_bytes; /* intrinsics.c, root: GjOutput's */
    /* lower.c */
    LLVMContextRef llctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMValueRef fn; /* the function holding the body */
    LLVMValueRef *params; /* its flattened parameters */
    LLVMBasicBlockRef entry; /* allocas go here */
    LLVMTargetMachineRef tm;
    const char *tm_key; /* emit.c: the pool's key for tm */
    LLVMTypeRef i1, i8, i16, i32, i64, f32, f64, ptr, voidt;
    const char *symbol;
    const char *triple; /* emit.c: the target machine's triple */
    LLVMValueRef host_blk; /* target_host.c: the GjBlockCtx* parameter */
    LLVMValueRef host_tid[3];
    bool needs_libdevice; /* target_nvptx.c: __nv_* functions were declared */
    LLVMOrcThreadSafeContextRef tsc; /* host target: ORC owns the context */
    void *dib; /* lower.c, lineinfo: the LLVMDIBuilderRef (root's) */
    LLVMMetadataRef disp; /* lower.c, lineinfo: this function's DISubprogram */
    LLVMValueRef errbuf; /* lower.c, debug: where an out-of-bounds index is reported */
    Loc cur_loc; /* lower.c: the location of the instruction being lowered */
    Block *cur_block; /* lower.c: the block being lowered, and the instruction's index in it */
    int cur_index;
    int *loop_end; /* lower.c, lane positions: per block id, the last block of the loop it heads, or -1 */
    LLVMValueRef *loop_trip; /* lower.c, lane positions: per loop header, its iteration counter (i64 alloca) */
    LLVMValueRef lane_pos; /* lower.c, lane positions: the i64 array activemask() passes */
    LLVMValueRef cpa_queue; /* cpasync.c, CPU target: the thread's pending cp.async copies */
    LLVMValueRef lane_prefix[2]; /* device functions: the caller's position at the call (i64 address, i32 length) */
    PtrVec files; /* root: file names, indexed by debug error records */
    PtrVec barriers; /* root, CPU target: "file:line" of each syncthreads() call, by its site number */
    PtrVec races;    /* root, racecheck: "file:line\twhat" of each checked access, by its site number */
    PyObject *raises; /* root: a list of (class, args, builtin, function name), indexed by IR_RAISE */
    PyObject *owned; /* root: a list of the nested functions (and their cells) built from kernel code */
    PyObject *externs; /* root: a list of the external functions (declare_device) the code calls */
    LLVMValueRef raised; /* lower.c: i8 set when a device function this calls raised */
    /* device functions: the kernel's context owns every Func (root only) */
    Ctx *root; /* the kernel's context; itself for the kernel */
    PtrVec funcs;
    Func *self; /* the Func this context compiles (device functions) */
    Instr **argvals; /* device functions: the constant the caller passed for each argument, or NULL */
    /* results */
    GjOutput *out;
};

/* The kernel's context: a device function's root, or the kernel's own. */
static inline Ctx *ctx_root(Ctx *c) { return c->root ? c->root : c; }

Var *ctx_var(Ctx *c, int i);

#endif
