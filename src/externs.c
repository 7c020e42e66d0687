/* externs.c: calls of external device functions (gpujit.declare_device): code
 * written in CUDA C or PTX, named and typed by a declaration, linked with the
 * kernel when the runtime loads it. A call is typed by the declared signature
 * (the arguments converted to its types) and lowered to a call of the external
 * symbol under the declared ABI:
 *   numba's: int32 status = name(ret *out, args...), the result read from *out
 *            (the status is 0 unless the function raised, which CUDA C cannot);
 *   C:       ret name(args...).
 * The kernel's output lists the declarations it calls (GjOutput.externs), so the
 * runtime knows whose `link=` files to link. A target that cannot link external
 * code (the CPU's, which runs no CUDA C) refuses the call where it is typed. */
#include <string.h>

#include "gj.h"

static const Intrinsic extern_call = {PATH_EXTERN_FN, IK_EXTERN, 0, 0, NULL};

typedef struct Extern {
    const char *name;
    Type *ret; /* ty_none for void */
    Type **args;
    int nargs;
    bool c_abi;
} Extern;

/* The declaration's name, signature and ABI, from its __gpujit_extern__
 * (gpujit.linking.ExternFunction: a (name, signature string, abi) tuple). */
static int read_extern(Ctx *c, Loc loc, PyObject *o, Extern *e) {
    PyObject *d = PyObject_GetAttrString(o, "__gpujit_extern__");
    const char *name = NULL, *sig = NULL, *abi = NULL;
    if (!d || !PyArg_ParseTuple(d, "sss", &name, &sig, &abi)) {
        Py_XDECREF(d);
        PyErr_Clear();
        return internal_error(c, loc, "an external function's __gpujit_extern__ is not (name, signature, abi)");
    }
    e->name = arena_strdup(&c->arena, name);
    e->c_abi = !strcmp(abi, "c");
    int rc = sig_parse(c, sig, &e->ret, &e->args, &e->nargs);
    Py_DECREF(d);
    if (rc < 0) return -1;
    if (!e->ret) return error_at(c, ERR_TYPING, loc, "external function %s: its signature has no return type", name);
    for (int i = 0; i <= e->nargs; i++) {
        Type *t = i < e->nargs ? e->args[i] : e->ret;
        if ((!is_number(t) || is_complex(t)) && !(i == e->nargs && t->kind == TY_NONE))
            return error_at(c, ERR_UNSUPPORTED, loc,
                            "external function %s: %s %s is not supported (declared functions take and return "
                            "bools, ints and floats)",
                            name, i < e->nargs ? "argument type" : "return type", type_name(c, t));
    }
    return 0;
}

Type *type_extern_call(Ctx *c, Instr *in) {
    PyObject *o = in->args[0]->type->obj;
    Extern e;
    if (read_extern(c, in->loc, o, &e) < 0) return NULL;
    if (!c->target->links_external)
        UNSUP("%s() is an external function (declare_device) whose code is CUDA C or PTX, which the %s target "
              "cannot run: kernels that call it run on the cuda target",
              e.name, c->target->api_name);
    if (in->nkw) TERR("%s() does not take keyword arguments", e.name);
    int n = in->nargs - 1;
    if (n != e.nargs) TERR("%s() takes %d argument%s (%d given)", e.name, e.nargs, e.nargs == 1 ? "" : "s", n);
    for (int i = 0; i < n; i++) {
        Type *t = in->args[1 + i]->type;
        if (!type_known(t)) return &ty_unknown;
        if (!is_number(t) || is_complex(t))
            TERR("%s() argument %d: cannot pass %s as %s", e.name, i + 1, type_name(c, t), type_name(c, e.args[i]));
    }
    Ctx *root = ctx_root(c);
    if (!root->externs && !(root->externs = PyList_New(0))) return NULL;
    int known = PySequence_Contains(root->externs, o);
    if (known < 0 || (!known && PyList_Append(root->externs, o) < 0)) return NULL;
    in->intr = &extern_call;
    return e.ret;
}

LLVMValueRef lower_extern_call(Ctx *c, Instr *in) {
    Extern e;
    if (read_extern(c, in->loc, in->args[0]->type->obj, &e) < 0) return NULL;
    bool none = e.ret->kind == TY_NONE;
    int first = e.c_abi ? 0 : 1;
    LLVMTypeRef *pt = arena_alloc(&c->arena, sizeof(LLVMTypeRef) * (size_t)(e.nargs + 1));
    LLVMValueRef *av = arena_alloc(&c->arena, sizeof(LLVMValueRef) * (size_t)(e.nargs + 1));
    if (!pt || !av) return NULL;
    /* numba's ABI returns through a pointer, also for void (to a byte nothing writes) */
    LLVMTypeRef rt = none ? c->i8 : mem_type(c, e.ret);
    LLVMValueRef out = NULL;
    if (!e.c_abi) {
        pt[0] = c->ptr;
        av[0] = out = entry_alloca(c, rt, "extern.ret");
    }
    for (int i = 0; i < e.nargs; i++) {
        pt[first + i] = mem_type(c, e.args[i]);
        LLVMValueRef v = val_as(c, in->args[1 + i], e.args[i]);
        /* a bool travels as a byte, as C's */
        av[first + i] = e.args[i]->kind == TY_BOOL ? LLVMBuildZExt(c->b, v, c->i8, "") : v;
    }
    LLVMTypeRef fnty = LLVMFunctionType(e.c_abi ? (none ? c->voidt : rt) : c->i32, pt, (unsigned)(first + e.nargs), 0);
    LLVMValueRef fn = LLVMGetNamedFunction(c->mod, e.name);
    if (!fn) {
        fn = LLVMAddFunction(c->mod, e.name, fnty);
    } else if (LLVMGlobalGetValueType(fn) != fnty || !LLVMIsDeclaration(fn)) {
        error_at(c, ERR_COMPILE, in->loc,
                 "external function %s: the kernel declares it twice with different signatures, or defines a "
                 "function of that name itself",
                 e.name);
        return NULL;
    }
    LLVMValueRef r = LLVMBuildCall2(c->b, fnty, fn, av, (unsigned)(first + e.nargs), "");
    if (none) return NULL;
    if (!e.c_abi) r = LLVMBuildLoad2(c->b, rt, out, "");
    return e.ret->kind == TY_BOOL ? LLVMBuildTrunc(c->b, r, c->i1, "") : r;
}
