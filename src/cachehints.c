/* cachehints.c: gpu.ldca/ldcg/ldcs/ldlu/ldcv(array, index) and gpu.stcg/stcs/stwb/stwt(array,
 * index, value), numba.cuda's loads and stores of a global array's (or pointer's) element with a PTX cache
 * operator. The typing rule is numba's; the access itself is the target's `cache_access`
 * (an ld/st.global.<op> on the GPU, a plain load or store on the CPU, which has no such
 * cache levels). */
#include <string.h>

#include "gj.h"

/* the PTX cache operator of each, by the intrinsic's id (intrinsics.c's table) */
static const char *const load_ops[] = {[CH_CA] = "ca", [CH_CG] = "cg", [CH_CS] = "cs", [CH_LU] = "lu", [CH_CV] = "cv"};
static const char *const store_ops[] = {[CH_CG] = "cg", [CH_CS] = "cs", [CH_WB] = "wb", [CH_WT] = "wt"};

static const char *cache_hint_op(bool store, int id) { return store ? store_ops[id] : load_ops[id]; }

/* load(array, index) -> the element; store(array, index, value) -> None. Indices: one
 * integer for a 1-D array, else a tuple of one integer per dimension. */
Type *type_cache_hint(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs) {
    const char *name = path_pretty(k->path);
    bool store = k->kind == IK_CACHE_STORE;
    int want = store ? 3 : 2;
    if (nargs != want) TERR("%s(%s) takes %d arguments", name, store ? "array, index, value" : "array, index", want);
    Type *a = at[0], *idx = at[1];
    bool ptr = a->kind == TY_CPTR && a->elem->kind != TY_NONE; /* numba's raw pointer: one index, unchecked */
    if (a->kind != TY_ARRAY && !ptr)
        TERR("%s: the first argument must be an array or a pointer to numbers, not %s", name, type_name(c, a));
    if (!is_int(a->elem) && !is_float(a->elem))
        TERR("%s requires array of integer or float type, not %s", name, type_name(c, a->elem));
    if (a->space != AS_GLOBAL)
        TERR("%s needs an array in global memory (a kernel's argument), not a %s array", name,
             a->space == AS_CONST ? "constant" : "shared or local");
    if (idx->kind == TY_TUPLE && !ptr) {
        if (idx->n != a->ndim) TERR("%s: Expected %d indices, got %d", name, a->ndim, idx->n);
        for (int i = 0; i < idx->n; i++)
            if (!is_index(idx->items[i])) TERR("%s: %s is not a valid index", name, type_name(c, idx->items[i]));
    } else {
        if (!is_index(idx)) TERR("%s: %s is not a valid index", name, type_name(c, idx));
        if (!ptr && a->ndim != 1) TERR("%s: Expected %d indices, got a scalar", name, a->ndim);
    }
    if (store) {
        if (!is_scalar(at[2])) TERR("%s: the value must be a number, not %s", name, type_name(c, at[2]));
        return &ty_none;
    }
    return a->elem;
}

LLVMValueRef lower_cache_hint(Ctx *c, const Intrinsic *k, Instr **a, Type *rt) {
    bool store = k->kind == IK_CACHE_STORE;
    Type *et = a[0]->type->elem;
    LLVMValueRef p = elem_ptr(c, a[0], a[1]);
    LLVMValueRef v = store ? val_as(c, a[2], et) : NULL;
    return c->target->cache_access(c, cache_hint_op(store, k->id), p, mem_type(c, et), v);
}
