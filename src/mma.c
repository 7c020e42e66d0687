/* mma.c: gpu.wmma -- warp-level matrix multiply-accumulate on tensor cores,
 * in the manner of CUDA C++'s nvcuda::wmma: fragments, their loads, stores
 * and fills, and mma_sync. A fragment is a per-lane local array of the
 * elements PTX's mma.sync holds in that lane's registers (the layouts are
 * the table below and docs/language.md's), so loads, stores and fills are
 * each lane's own work and only mma_sync is warp-collective. On the GPU,
 * mma_sync is mma.sync.aligned.m16n8kK (sm_80 and up), once per eight
 * columns; on the CPU target the lanes exchange their operands through the
 * warp's shuffles and each lane computes its own elements by the documented
 * rule: products exact, summed in float32 (int32 for the 8-bit types) in
 * order of k, onto the accumulator. */
#include <string.h>

#include "gj.h"

typedef enum { ROLE_A, ROLE_B, ROLE_ACC } FragRole;
/* The per-lane layout of A and B: one per element width of mma.sync's operands. */
typedef enum { FAM_16BIT, FAM_TF32, FAM_8BIT } Family;

/* One row per shape and input type (bfloat16 has float32 accumulators only, as mma.sync). */
typedef struct MmaShape {
    int m, n, k;
    TypeKind ab;    /* the element of A and B (float32 means tf32) */
    const char *ptx; /* its name in mma.sync */
    Family fam;
    TypeKind acc[2]; /* the accumulators it allows */
} MmaShape;

/* clang-format off */
static const MmaShape shapes[] = {
    {16, 16, 16, TY_FLOAT16, "f16", FAM_16BIT, {TY_FLOAT32, TY_FLOAT16}},
    {16, 8, 16, TY_FLOAT16, "f16", FAM_16BIT, {TY_FLOAT32, TY_FLOAT16}},
    {16, 16, 16, TY_BFLOAT16, "bf16", FAM_16BIT, {TY_FLOAT32, TY_FLOAT32}},
    {16, 8, 16, TY_BFLOAT16, "bf16", FAM_16BIT, {TY_FLOAT32, TY_FLOAT32}},
    {16, 16, 8, TY_FLOAT32, "tf32", FAM_TF32, {TY_FLOAT32}},
    {16, 8, 8, TY_FLOAT32, "tf32", FAM_TF32, {TY_FLOAT32}},
    {16, 16, 16, TY_INT8, "s8", FAM_8BIT, {TY_INT32}},
    {16, 8, 16, TY_INT8, "s8", FAM_8BIT, {TY_INT32}},
    {16, 16, 16, TY_UINT8, "u8", FAM_8BIT, {TY_INT32}},
    {16, 8, 16, TY_UINT8, "u8", FAM_8BIT, {TY_INT32}},
};
/* clang-format on */
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

typedef struct MmaFrag {
    FragRole role;
    int shape;   /* index in shapes[] */
    char layout; /* A and B: 'R' row-major or 'C' column-major in memory; accumulators: 0 */
} MmaFrag;

static const char *const role_names[] = {"matrix_a", "matrix_b", "accumulator"};

/* Elements per lane: A is 16 x k, B is k x n, the accumulator 16 x n, over 32 lanes. */
static int frag_len(const MmaShape *s, FragRole r) {
    return r == ROLE_A ? 16 * s->k / 32 : r == ROLE_B ? s->k * s->n / 32 : 16 * s->n / 32;
}

/* A coordinate as g * groupID + t * threadID_in_group + k, with groupID =
 * lane / 4 and threadID_in_group = lane % 4 (PTX's names). */
typedef struct Lin {
    int g, t, k;
} Lin;

/* Row and column of element i of a lane's fragment: PTX's mma.sync
 * m16n8kK layouts; a 16-column B or accumulator is two 8-column halves,
 * the second's elements after the first's. */
static void elem_coord(const MmaShape *s, FragRole role, int i, Lin *row, Lin *col) {
    if (role == ROLE_A) {
        switch (s->fam) {
        case FAM_16BIT: *row = (Lin){1, 0, 8 * ((i >> 1) & 1)}, *col = (Lin){0, 2, (i & 1) + 8 * (i >> 2)}; return;
        case FAM_TF32: *row = (Lin){1, 0, 8 * (i & 1)}, *col = (Lin){0, 1, 4 * (i >> 1)}; return;
        case FAM_8BIT: *row = (Lin){1, 0, 8 * (i >> 2)}, *col = (Lin){0, 4, i & 3}; return;
        }
    }
    if (role == ROLE_B) {
        int per = s->k * 8 / 32, h = i / per, j = i % per;
        *col = (Lin){1, 0, 8 * h};
        switch (s->fam) {
        case FAM_16BIT: *row = (Lin){0, 2, (j & 1) + 8 * (j >> 1)}; return;
        case FAM_TF32: *row = (Lin){0, 1, 4 * j}; return;
        case FAM_8BIT: *row = (Lin){0, 4, j}; return;
        }
    }
    int h = i / 4, j = i % 4;
    *row = (Lin){1, 0, 8 * (j >> 1)}, *col = (Lin){0, 2, (j & 1) + 8 * h};
}

bool frag_eq(const MmaFrag *a, const MmaFrag *b) {
    if (!a || !b) return a == b;
    return a->role == b->role && a->shape == b->shape && a->layout == b->layout;
}

const char *frag_name(Ctx *c, const Type *t) {
    const MmaFrag *f = t->frag;
    const MmaShape *s = &shapes[f->shape];
    const char *elem = f->role != ROLE_ACC && s->fam == FAM_TF32 ? "tf32" : type_name(c, t->elem);
    return arena_printf(&c->arena, "wmma.fragment(%s, %d, %d, %d, %s%s)", role_names[f->role], s->m, s->n, s->k, elem,
                        f->layout == 'R' ? ", row_major" : f->layout == 'C' ? ", col_major" : "");
}

/* ---- typing ---- */

static const char *const_path(Type *t, const char *prefix) {
    size_t n = strlen(prefix);
    return t->kind == TY_OBJ && t->path && strncmp(t->path, prefix, n) == 0 ? t->path + n : NULL;
}

static int mem_layout(Type *t) {
    const char *p = const_path(t, "gpujit.wmma.");
    if (p && !strncmp(p, "mem_", 4)) p += 4;
    return !p ? 0 : !strcmp(p, "row_major") ? 'R' : !strcmp(p, "col_major") ? 'C' : 0;
}

static const MmaFrag *frag_of(Type *t) { return t->kind == TY_ARRAY ? t->frag : NULL; }

static Type *type_fragment(Ctx *c, Instr *in, Type **at, int nargs) {
    if (nargs < 5 || nargs > 6)
        TERR("wmma.fragment() takes (use, m, n, k, dtype[, layout]), got %d argument%s", nargs, nargs == 1 ? "" : "s");
    const char *use = const_path(at[0], "gpujit.wmma.");
    int role = -1;
    for (int r = 0; use && r < 3; r++)
        if (!strcmp(use, role_names[r])) role = r;
    if (role < 0) TERR("wmma.fragment(): the first argument is wmma.matrix_a, wmma.matrix_b or wmma.accumulator");
    int mnk[3];
    for (int i = 0; i < 3; i++) {
        Instr *v = literal_operand(c, in, in->args[2 + i]);
        if (v->op != IR_CONST || v->ckind != CK_INT) TERR("wmma.fragment(): m, n and k must be constant integers");
        mnk[i] = (int)v->ival;
    }
    Type *elem = dtype_of(c, in, in->args[5]);
    if (!elem) return NULL;
    int layout = 0;
    if (nargs == 6) {
        layout = mem_layout(at[5]);
        if (!layout) TERR("wmma.fragment(): the layout is wmma.row_major or wmma.col_major");
        if (role == ROLE_ACC)
            TERR("wmma.fragment(): an accumulator takes no layout (load_matrix_sync and store_matrix_sync name it)");
    } else if (role != ROLE_ACC) {
        layout = 'R';
    }
    int found = -1;
    bool shape_known = false;
    for (int i = 0; i < NSHAPES && found < 0; i++) {
        const MmaShape *s = &shapes[i];
        if (s->m != mnk[0] || s->n != mnk[1] || s->k != mnk[2]) continue;
        shape_known = true;
        if (role != ROLE_ACC ? elem->kind == s->ab : elem->kind == s->acc[0] || elem->kind == s->acc[1]) found = i;
    }
    if (!shape_known)
        TERR("wmma.fragment(): no tensor-core shape m=%d n=%d k=%d (there are 16x16x16 and 16x8x16 for float16, "
             "bfloat16 and int8/uint8, 16x16x8 and 16x8x8 for tf32 given as float32)",
             mnk[0], mnk[1], mnk[2]);
    if (found < 0)
        TERR("wmma.fragment(): a %s fragment of shape %dx%dx%d cannot hold %s", role_names[role], mnk[0], mnk[1], mnk[2],
             type_name(c, elem));
    if (c->opt.target == GJ_TARGET_NVPTX && c->opt.cc_major < 8)
        UNSUP("wmma fragments need compute capability 8.0 or newer (mma.sync; compiling for %d.%d)", c->opt.cc_major,
              c->opt.cc_minor);
    const MmaShape *s = &shapes[found];
    int n = frag_len(s, role);
    if (!in->alloc_done) {
        in->alloc_done = true;
        Ctx *root = ctx_root(c);
        root->local_bytes = ((root->local_bytes + 15) & ~(size_t)15) + (size_t)n * (size_t)(type_bits(elem) / 8);
    }
    Type *t = type_array(c, elem, 1, 'C', AS_LOCAL);
    MmaFrag *f = arena_alloc(&c->arena, sizeof *f);
    if (!t || !f) return NULL;
    *f = (MmaFrag){role, found, (char)layout};
    t->frag = f;
    return t;
}

/* load_matrix_sync(frag, array[, ldm][, layout]), store_matrix_sync(array, frag[, ldm], layout):
 * a 2-D array holds the tile at its [0, 0]; a 1-D array with ldm, as CUDA's pointer does. */
static Type *type_load_store(Ctx *c, Instr *in, Type **at, int nargs, bool store) {
    const char *name = store ? "wmma.store_matrix_sync" : "wmma.load_matrix_sync";
    const MmaFrag *f = nargs >= 2 ? frag_of(at[store ? 1 : 0]) : NULL;
    Type *arr = nargs >= 2 ? at[store ? 0 : 1] : NULL;
    if (!f)
        TERR("%s() takes (%s)", name,
             store ? "array, accumulator fragment[, ldm], layout" : "fragment, array[, ldm][, layout]");
    if (store && f->role != ROLE_ACC) TERR("%s(): only an accumulator fragment can be stored", name);
    if (arr->kind != TY_ARRAY || arr->frag || (arr->ndim != 1 && arr->ndim != 2))
        TERR("%s(): the memory is a 1-D array with ldm or a 2-D array, not %s", name, type_name(c, arr));
    Type *frag_t = at[store ? 1 : 0];
    if (!type_eq(arr->elem, frag_t->elem))
        TERR("%s(): the array holds %s and the fragment %s", name, type_name(c, arr->elem), type_name(c, frag_t->elem));
    int want = 2 + (arr->ndim == 1) + (f->role == ROLE_ACC);
    if (nargs != want) {
        if (arr->ndim == 1 && nargs == want - 1) TERR("%s(): a 1-D array needs ldm, its leading dimension", name);
        if (f->role == ROLE_ACC) TERR("%s(): an accumulator needs the memory's layout, wmma.row_major or wmma.col_major", name);
        TERR("%s() takes %d arguments here, got %d", name, want, nargs);
    }
    if (arr->ndim == 1 && !is_int(at[2])) TERR("%s(): ldm must be an integer, not %s", name, type_name(c, at[2]));
    if (f->role == ROLE_ACC && !mem_layout(at[nargs - 1]))
        TERR("%s(): the layout is wmma.row_major or wmma.col_major", name);
    return &ty_none;
}

static Type *type_mma(Ctx *c, Instr *in, Type **at, int nargs) {
    static const FragRole want[4] = {ROLE_ACC, ROLE_A, ROLE_B, ROLE_ACC};
    if (nargs != 4) TERR("wmma.mma_sync() takes (d, a, b, c), got %d argument%s", nargs, nargs == 1 ? "" : "s");
    const MmaFrag *f[4];
    for (int i = 0; i < 4; i++) {
        f[i] = frag_of(at[i]);
        if (!f[i] || f[i]->role != want[i])
            TERR("wmma.mma_sync(): argument %d must be a %s fragment, not %s", i + 1, role_names[want[i]],
                 type_name(c, at[i]));
    }
    const MmaShape *s = &shapes[f[1]->shape];
    for (int i = 0; i < 4; i++) {
        const MmaShape *o = &shapes[f[i]->shape];
        if (o->m != s->m || o->n != s->n || o->k != s->k || (i < 3 && i > 0 && o->ab != s->ab))
            TERR("wmma.mma_sync(): the fragments' shapes differ (%s and %s)", type_name(c, at[1]), type_name(c, at[i]));
    }
    if (!type_eq(at[0]->elem, at[3]->elem))
        TERR("wmma.mma_sync(): d holds %s and c %s", type_name(c, at[0]->elem), type_name(c, at[3]->elem));
    c->uses_barrier = true; /* the CPU runs the warp's lanes as fibers: the exchange is a rendezvous */
    return &ty_none;
}

Type *type_wmma(Ctx *c, Instr *in, const Intrinsic *k, Type **at, int nargs) {
    switch ((WmmaOp)k->id) {
    case WMMA_FRAGMENT: return type_fragment(c, in, at, nargs);
    case WMMA_FILL:
        if (nargs != 2 || !frag_of(at[0]) || !is_scalar(at[1]))
            TERR("wmma.fill_fragment() takes (fragment, value)");
        return &ty_none;
    case WMMA_LOAD: return type_load_store(c, in, at, nargs, false);
    case WMMA_STORE: return type_load_store(c, in, at, nargs, true);
    case WMMA_MMA: return type_mma(c, in, at, nargs);
    case WMMA_CONST: TERR("%s is an argument of the wmma functions, not a function", path_pretty(k->path));
    }
    return NULL;
}

/* ---- lowering ---- */

static bool on_gpu(Ctx *c) { return c->opt.target == GJ_TARGET_NVPTX; }

static LLVMValueRef asm_call(Ctx *c, LLVMTypeRef ret, const char *text, const char *cons, LLVMValueRef *args, int n) {
    LLVMTypeRef pt[32];
    for (int i = 0; i < n; i++) pt[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret, pt, (unsigned)n, 0);
    LLVMValueRef a = LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)cons, strlen(cons), 0, 0,
                                      LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(c->b, fty, a, args, (unsigned)n, "");
}

/* A float32 rounded to tf32 (10 fraction bits; to nearest, ties away from
 * zero: cvt.rna.tf32.f32); NaN and infinity stay as they are. */
static LLVMValueRef round_tf32(Ctx *c, LLVMValueRef x) {
    if (on_gpu(c)) {
        LLVMValueRef r = asm_call(c, c->i32, "cvt.rna.tf32.f32 $0, $1;", "=r,f", &x, 1);
        return LLVMBuildBitCast(c->b, r, c->f32, "");
    }
    LLVMValueRef bits = LLVMBuildBitCast(c->b, x, c->i32, "");
    LLVMValueRef r = LLVMBuildAnd(c->b, LLVMBuildAdd(c->b, bits, LLVMConstInt(c->i32, 0x1000, 0), ""),
                                  LLVMConstInt(c->i32, 0xFFFFE000u, 0), "");
    LLVMValueRef mag = LLVMBuildAnd(c->b, bits, LLVMConstInt(c->i32, 0x7FFFFFFF, 0), "");
    LLVMValueRef special = LLVMBuildICmp(c->b, LLVMIntUGE, mag, LLVMConstInt(c->i32, 0x7F800000, 0), "");
    return LLVMBuildBitCast(c->b, LLVMBuildSelect(c->b, special, bits, r, ""), c->f32, "");
}

static bool is_tf32(const MmaFrag *f) { return f->role != ROLE_ACC && shapes[f->shape].fam == FAM_TF32; }

static LLVMValueRef frag_data(Ctx *c, Instr *frag) { return extract_value(c, val(c, frag), 0, "frag"); }

static LLVMValueRef frag_elem_ptr(Ctx *c, LLVMValueRef data, Type *elem, int i) {
    LLVMValueRef ix = ci64(c, i);
    return LLVMBuildInBoundsGEP2(c->b, mem_type(c, elem), data, &ix, 1, "");
}

static LLVMValueRef lin_value(Ctx *c, Lin l, LLVMValueRef g, LLVMValueRef t) {
    LLVMValueRef v = ci64(c, l.k);
    if (l.g) v = LLVMBuildAdd(c->b, v, LLVMBuildMul(c->b, g, ci64(c, l.g), ""), "");
    if (l.t) v = LLVMBuildAdd(c->b, v, LLVMBuildMul(c->b, t, ci64(c, l.t), ""), "");
    return v;
}

/* &tile[r, c] of the array value `a` (type at): a 2-D array's [r, c], or a 1-D
 * array's [r * ldm + c]; bounds checked where the kernel checks them. */
static LLVMValueRef tile_ptr(Ctx *c, Type *at, LLVMValueRef a, LLVMValueRef ldm, LLVMValueRef r, LLVMValueRef col) {
    LLVMValueRef ix[2] = {r, col};
    int n = at->ndim;
    if (n == 1) ix[0] = LLVMBuildAdd(c->b, LLVMBuildMul(c->b, r, ldm, ""), col, "");
    LLVMValueRef ok = c->errbuf ? check_bounds(c, a, ix, ix, n) : NULL;
    LLVMValueRef data = extract_value(c, a, 0, "data"), p;
    if (at->layout == 'C') {
        LLVMValueRef lin = ix[0];
        if (n == 2)
            lin = LLVMBuildAdd(c->b, LLVMBuildMul(c->b, ix[0], extract_value(c, extract_value(c, a, 1, ""), 1, ""), ""),
                               ix[1], "");
        p = LLVMBuildInBoundsGEP2(c->b, mem_type(c, at->elem), data, &lin, 1, "");
    } else {
        LLVMValueRef off = NULL;
        for (int k = 0; k < n; k++) {
            LLVMValueRef term = LLVMBuildMul(c->b, ix[k], extract_value(c, extract_value(c, a, 2, ""), (unsigned)k, ""), "");
            off = off ? LLVMBuildAdd(c->b, off, term, "") : term;
        }
        p = LLVMBuildInBoundsGEP2(c->b, c->i8, data, &off, 1, "");
    }
    if (ok) p = LLVMBuildSelect(c->b, ok, p, scratch_ptr(c, llvm_as(c, at->space)), "");
    return p;
}

static void lane_group(Ctx *c, LLVMValueRef *g, LLVMValueRef *t) {
    LLVMValueRef lane = LLVMBuildZExt(c->b, c->target->special(c, SP_LANEID, 0), c->i64, "lane");
    *g = LLVMBuildLShr(c->b, lane, ci64(c, 2), "group");
    *t = LLVMBuildAnd(c->b, lane, ci64(c, 3), "tig");
}

/* Each element of the fragment from (or to) its place in memory: scalar accesses. */
static void load_store_elems(Ctx *c, Type *ft, Type *at, LLVMValueRef arr, LLVMValueRef data, LLVMValueRef ldm,
                             int layout, bool store) {
    const MmaFrag *f = ft->frag;
    const MmaShape *s = &shapes[f->shape];
    LLVMValueRef g, t;
    lane_group(c, &g, &t);
    for (int i = 0; i < frag_len(s, f->role); i++) {
        Lin rl, cl;
        elem_coord(s, f->role, i, &rl, &cl);
        LLVMValueRef r = lin_value(c, rl, g, t), col = lin_value(c, cl, g, t);
        LLVMValueRef p = layout == 'R' ? tile_ptr(c, at, arr, ldm, r, col) : tile_ptr(c, at, arr, ldm, col, r);
        LLVMValueRef q = frag_elem_ptr(c, data, ft->elem, i);
        if (store) {
            store_elem(c, at->elem, p, load_elem(c, ft->elem, q));
        } else {
            LLVMValueRef v = load_elem(c, at->elem, p);
            store_elem(c, ft->elem, q, is_tf32(f) ? round_tf32(c, v) : v);
        }
    }
}

/* A 16-bit A or B fragment from shared memory is read as ldmatrix reads it
 * on the GPU: 8x8 matrices whose rows (8 elements, 16 bytes) the lanes
 * address, lane L the row L % 8 of matrix L / 8, which gives each lane
 * exactly the elements mma.sync wants. Matrix q's origin in the tile is
 * (8 * (q % 2), 8 * (q / 2)), for A and for B alike (the registers' order in
 * the fragment); memory whose rows run along the tile's columns is read
 * with .trans. Each memory row must be contiguous and 16-byte aligned: a
 * ValueError otherwise, on both targets (the CPU target then loads the
 * elements one by one). */
static bool via_ldmatrix(const MmaFrag *f, Type *at) {
    return at->space == AS_SHARED && f->role != ROLE_ACC && shapes[f->shape].fam == FAM_16BIT &&
           shapes[f->shape].k == 16;
}

static int check_rows(Ctx *c, Type *at, LLVMValueRef arr, LLVMValueRef ldm) {
    LLVMValueRef base = LLVMBuildPtrToInt(c->b, extract_value(c, arr, 0, ""), c->i64, "");
    LLVMValueRef inner, lead;
    if (at->ndim == 2) {
        LLVMValueRef st = extract_value(c, arr, 2, "");
        inner = at->layout == 'C' ? ci64(c, 2) : extract_value(c, st, 1, "");
        lead = at->layout == 'C' ? LLVMBuildMul(c->b, extract_value(c, extract_value(c, arr, 1, ""), 1, ""), ci64(c, 2), "")
                                 : extract_value(c, st, 0, "");
    } else {
        inner = at->layout == 'C' ? ci64(c, 2) : extract_value(c, extract_value(c, arr, 2, ""), 0, "");
        lead = LLVMBuildMul(c->b, ldm, inner, "");
    }
    LLVMValueRef mis = LLVMBuildAnd(c->b, LLVMBuildOr(c->b, base, lead, ""), ci64(c, 15), "");
    LLVMValueRef ok = LLVMBuildAnd(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, inner, ci64(c, 2), ""),
                                   LLVMBuildICmp(c->b, LLVMIntEQ, mis, ci64(c, 0), ""), "");
    return check_or_raise(c, ok, PyExc_ValueError,
                          "wmma.load_matrix_sync(): a 16-bit fragment loaded from shared memory needs rows of "
                          "contiguous elements that start at 16-byte boundaries (what ldmatrix reads)");
}

static void load_ldmatrix(Ctx *c, Type *ft, Type *at, LLVMValueRef arr, LLVMValueRef data, LLVMValueRef ldm,
                          int layout) {
    const MmaFrag *f = ft->frag;
    int nmat = frag_len(&shapes[f->shape], f->role) / 2; /* 4 (16x16) or 2 (B of 16x8): a register each */
    LLVMValueRef lane = LLVMBuildZExt(c->b, c->target->special(c, SP_LANEID, 0), c->i64, "");
    LLVMValueRef q = LLVMBuildAnd(c->b, LLVMBuildLShr(c->b, lane, ci64(c, 3), ""), ci64(c, nmat - 1), "");
    LLVMValueRef rr = LLVMBuildAnd(c->b, lane, ci64(c, 7), "");
    LLVMValueRef r0 = LLVMBuildMul(c->b, LLVMBuildAnd(c->b, q, ci64(c, 1), ""), ci64(c, 8), "");
    LLVMValueRef c0 = LLVMBuildMul(c->b, LLVMBuildLShr(c->b, q, ci64(c, 1), ""), ci64(c, 8), "");
    /* row-major memory: the lane's row is a tile row; column-major: a tile column */
    LLVMValueRef p = layout == 'R' ? tile_ptr(c, at, arr, ldm, LLVMBuildAdd(c->b, r0, rr, ""), c0)
                                   : tile_ptr(c, at, arr, ldm, LLVMBuildAdd(c->b, c0, rr, ""), r0);
    bool trans = (f->role == ROLE_A) != (layout == 'R');
    char text[160], cons[64];
    int o = snprintf(text, sizeof text, "ldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 {", nmat, trans ? ".trans" : "");
    int k = 0;
    for (int i = 0; i < nmat; i++) {
        o += snprintf(text + o, sizeof text - (size_t)o, "%s$%d", i ? ", " : "", i);
        k += snprintf(cons + k, sizeof cons - (size_t)k, "=r,");
    }
    snprintf(text + o, sizeof text - (size_t)o, "}, [$%d];", nmat);
    snprintf(cons + k, sizeof cons - (size_t)k, "r,~{memory}");
    if (LLVMGetPointerAddressSpace(LLVMTypeOf(p)) != 3) p = LLVMBuildAddrSpaceCast(c->b, p, LLVMPointerTypeInContext(c->llctx, 3), "");
    LLVMValueRef addr = LLVMBuildPtrToInt(c->b, p, c->i32, "");
    LLVMTypeRef rt[4] = {c->i32, c->i32, c->i32, c->i32};
    LLVMValueRef r = asm_call(c, LLVMStructTypeInContext(c->llctx, rt, (unsigned)nmat, 0), text, cons, &addr, 1);
    for (int i = 0; i < nmat; i++) {
        LLVMValueRef ix = ci64(c, 4 * i);
        LLVMValueRef st = LLVMBuildStore(c->b, LLVMBuildExtractValue(c->b, r, (unsigned)i, ""),
                                         LLVMBuildInBoundsGEP2(c->b, c->i8, data, &ix, 1, ""));
        LLVMSetAlignment(st, 4);
    }
}

static LLVMValueRef lower_load_store(Ctx *c, Instr **a, int nargs, bool store) {
    Instr *fi = a[store ? 1 : 0], *ai = a[store ? 0 : 1];
    Type *ft = fi->type, *at = ai->type;
    const MmaFrag *f = ft->frag;
    int layout = f->role == ROLE_ACC ? mem_layout(a[nargs - 1]->type) : f->layout;
    LLVMValueRef arr = val(c, ai), data = frag_data(c, fi);
    LLVMValueRef ldm = at->ndim == 1 ? val_as(c, a[2], &ty_int64) : NULL;
    bool rows = !store && via_ldmatrix(f, at);
    if (rows && check_rows(c, at, arr, ldm) < 0) return NULL;
    if (rows && on_gpu(c) && !c->errbuf) /* debug keeps the element loads' bounds checks */
        load_ldmatrix(c, ft, at, arr, data, ldm, layout);
    else
        load_store_elems(c, ft, at, arr, data, ldm, layout, store);
    return NULL;
}

static LLVMValueRef lower_fill(Ctx *c, Instr **a) {
    Type *ft = a[0]->type;
    const MmaFrag *f = ft->frag;
    LLVMValueRef data = frag_data(c, a[0]), v = val_as(c, a[1], ft->elem);
    if (is_tf32(f)) v = round_tf32(c, v);
    for (int i = 0; i < frag_len(&shapes[f->shape], f->role); i++) store_elem(c, ft->elem, frag_elem_ptr(c, data, ft->elem, i), v);
    return NULL;
}

static const char *ptx_acc(TypeKind k) { return k == TY_FLOAT32 ? "f32" : k == TY_FLOAT16 ? "f16" : "s32"; }

/* `n` 32-bit registers of a fragment, from byte `off` of its memory. */
static void load_regs(Ctx *c, LLVMValueRef data, int off, int n, LLVMTypeRef t, LLVMValueRef *out) {
    for (int i = 0; i < n; i++) {
        LLVMValueRef ix = ci64(c, off + 4 * i);
        LLVMValueRef v = LLVMBuildLoad2(c->b, t, LLVMBuildInBoundsGEP2(c->b, c->i8, data, &ix, 1, ""), "");
        LLVMSetAlignment(v, 4);
        out[i] = v;
    }
}

/* On the GPU: one mma.sync.aligned.m16n8kK.row.col per 8 columns of the result. */
static void mma_gpu(Ctx *c, const MmaShape *s, Type *acc, LLVMValueRef d, LLVMValueRef a, LLVMValueRef b, LLVMValueRef cc) {
    int esz = type_bits(&(Type){.kind = s->ab}) / 8;
    int na = 16 * s->k / 32 * esz / 4, nb = s->k * 8 / 32 * esz / 4;
    bool f16acc = acc->kind == TY_FLOAT16;
    int nc = f16acc ? 2 : 4; /* 4 elements of the accumulator per half, in 2 or 4 registers */
    LLVMTypeRef ct = acc->kind == TY_FLOAT32 ? c->f32 : c->i32;
    int cbytes = 4 * type_bits(acc) / 8; /* bytes of a half's 4 accumulator elements */
    const char *cr = acc->kind == TY_FLOAT32 ? "f" : "r";
    for (int h = 0; h < s->n / 8; h++) {
        LLVMValueRef args[16];
        int n = 0;
        load_regs(c, a, 0, na, c->i32, args + n), n += na;
        load_regs(c, b, h * nb * 4, nb, c->i32, args + n), n += nb;
        load_regs(c, cc, h * cbytes, nc, ct, args + n), n += nc;
        char text[256], cons[128];
        int o = 0, p = 0;
        o += snprintf(text + o, sizeof text - (size_t)o, "mma.sync.aligned.m16n8k%d.row.col.%s.%s.%s.%s {", s->k,
                      ptx_acc(acc->kind), s->ptx, s->ptx, ptx_acc(acc->kind));
        int groups[4] = {nc, na, nb, nc}, reg = 0;
        for (int gi = 0; gi < 4; gi++) {
            for (int i = 0; i < groups[gi]; i++, reg++) {
                o += snprintf(text + o, sizeof text - (size_t)o, "%s$%d", i ? ", " : "", reg);
                const char *k = gi == 0 ? cr : gi == 3 ? cr : "r";
                p += snprintf(cons + p, sizeof cons - (size_t)p, "%s%s%s", reg ? "," : "", gi == 0 ? "=" : "", k);
            }
            o += snprintf(text + o, sizeof text - (size_t)o, gi < 3 ? "}, {" : "};");
        }
        LLVMTypeRef rt[4] = {ct, ct, ct, ct};
        LLVMTypeRef st = LLVMStructTypeInContext(c->llctx, rt, (unsigned)nc, 0);
        LLVMValueRef r = asm_call(c, st, text, cons, args, n);
        for (int i = 0; i < nc; i++) {
            LLVMValueRef ix = ci64(c, h * cbytes + 4 * i);
            LLVMValueRef st_ = LLVMBuildStore(c->b, LLVMBuildExtractValue(c->b, r, (unsigned)i, ""),
                                              LLVMBuildInBoundsGEP2(c->b, c->i8, d, &ix, 1, ""));
            LLVMSetAlignment(st_, 4);
        }
    }
}

/* The words (up to 8 bytes each) of `bytes` bytes at byte `off` of a
 * fragment, as i64, each read from lane `src` by a shuffle. */
static int shuffle_words(Ctx *c, LLVMValueRef data, int off, int bytes, LLVMValueRef src, LLVMValueRef *w) {
    int n = 0;
    for (int at = 0; at < bytes; at += 8, n++) {
        LLVMTypeRef t = bytes - at >= 8 ? c->i64 : LLVMIntTypeInContext(c->llctx, (unsigned)(bytes - at) * 8);
        LLVMValueRef ix = ci64(c, off + at);
        LLVMValueRef v = LLVMBuildLoad2(c->b, t, LLVMBuildInBoundsGEP2(c->b, c->i8, data, &ix, 1, ""), "");
        LLVMSetAlignment(v, 1);
        v = LLVMBuildZExt(c->b, v, c->i64, "");
        w[n] = c->target->warp(c, WARP_SHFL_IDX, LLVMConstInt(c->i32, 0xFFFFFFFFu, 0), v, src);
    }
    return n;
}

/* Element e (of esz bytes, from byte 0) of shuffled words, widened to the
 * type the products are computed in: float32 (tf32 truncated to its 19
 * bits) or int32. */
static LLVMValueRef word_elem(Ctx *c, const MmaShape *s, LLVMValueRef *w, int e) {
    int esz = s->fam == FAM_16BIT ? 2 : s->fam == FAM_TF32 ? 4 : 1, at = e * esz;
    LLVMValueRef v = LLVMBuildLShr(c->b, w[at / 8], LLVMConstInt(c->i64, (unsigned)(at % 8) * 8, 0), "");
    v = LLVMBuildTrunc(c->b, v, LLVMIntTypeInContext(c->llctx, (unsigned)esz * 8), "");
    switch (s->fam) {
    case FAM_16BIT:
        if (s->ab == TY_BFLOAT16) /* a bfloat16 is a float32's top half: exact */
            return LLVMBuildBitCast(c->b, LLVMBuildShl(c->b, LLVMBuildZExt(c->b, v, c->i32, ""), LLVMConstInt(c->i32, 16, 0), ""),
                                    c->f32, "");
        return LLVMBuildFPExt(c->b, LLVMBuildBitCast(c->b, v, llvm_type(c, &ty_float16), ""), c->f32, "");
    case FAM_TF32:
        return LLVMBuildBitCast(c->b, LLVMBuildAnd(c->b, v, LLVMConstInt(c->i32, 0xFFFFE000u, 0), ""), c->f32, "");
    case FAM_8BIT: return s->ab == TY_INT8 ? LLVMBuildSExt(c->b, v, c->i32, "") : LLVMBuildZExt(c->b, v, c->i32, "");
    }
    return NULL;
}

/* On the CPU target: lane (g, t) needs rows g and g + 8 of A, which lanes
 * g*4 .. g*4+3 hold, and columns 2t and 2t+1 of each half of B, which
 * lanes (2t)*4.. and (2t+1)*4.. hold; it reads them with 64-bit shuffles,
 * then computes its accumulator elements, k in order. */
static void mma_cpu(Ctx *c, const MmaShape *s, Type *acc, LLVMValueRef d, LLVMValueRef a, LLVMValueRef b, LLVMValueRef cc) {
    int esz = s->fam == FAM_16BIT ? 2 : s->fam == FAM_TF32 ? 4 : 1;
    int na = frag_len(s, ROLE_A), nbh = s->k * 8 / 32;
    bool isint = s->fam == FAM_8BIT;
    LLVMValueRef g, t;
    lane_group(c, &g, &t);
    g = LLVMBuildTrunc(c->b, g, c->i32, ""), t = LLVMBuildTrunc(c->b, t, c->i32, "");
    LLVMValueRef A[2][16], B[2][16], w[4];
    for (int tp = 0; tp < 4; tp++) {
        LLVMValueRef src = LLVMBuildAdd(c->b, LLVMBuildShl(c->b, g, LLVMConstInt(c->i32, 2, 0), ""),
                                        LLVMConstInt(c->i32, (unsigned)tp, 0), "");
        shuffle_words(c, a, 0, na * esz, src, w);
        for (int i = 0; i < na; i++) {
            Lin rl, cl;
            elem_coord(s, ROLE_A, i, &rl, &cl);
            A[rl.k / 8][cl.t * tp + cl.k] = word_elem(c, s, w, i);
        }
    }
    LLVMValueRef out[8];
    for (int h = 0; h < s->n / 8; h++) {
        for (int cc2 = 0; cc2 < 2; cc2++) {
            LLVMValueRef col = LLVMBuildAdd(c->b, LLVMBuildShl(c->b, t, LLVMConstInt(c->i32, 1, 0), ""),
                                            LLVMConstInt(c->i32, (unsigned)cc2, 0), "");
            for (int tp = 0; tp < 4; tp++) {
                LLVMValueRef src = LLVMBuildAdd(c->b, LLVMBuildShl(c->b, col, LLVMConstInt(c->i32, 2, 0), ""),
                                                LLVMConstInt(c->i32, (unsigned)tp, 0), "");
                shuffle_words(c, b, h * nbh * esz, nbh * esz, src, w);
                for (int j = 0; j < nbh; j++) {
                    Lin rl, cl;
                    elem_coord(s, ROLE_B, j, &rl, &cl);
                    B[cc2][rl.t * tp + rl.k] = word_elem(c, s, w, j);
                }
            }
        }
        for (int j = 0; j < 4; j++) {
            LLVMValueRef v = load_elem(c, acc, frag_elem_ptr(c, cc, acc, h * 4 + j));
            if (acc->kind == TY_FLOAT16) v = LLVMBuildFPExt(c->b, v, c->f32, "");
            for (int k = 0; k < s->k; k++) {
                LLVMValueRef x = A[j >> 1][k], y = B[j & 1][k];
                v = isint ? LLVMBuildAdd(c->b, v, LLVMBuildMul(c->b, x, y, ""), "")
                          : LLVMBuildFAdd(c->b, v, LLVMBuildFMul(c->b, x, y, ""), "");
            }
            out[h * 4 + j] = acc->kind == TY_FLOAT16 ? LLVMBuildFPTrunc(c->b, v, llvm_type(c, &ty_float16), "") : v;
        }
    }
    for (int i = 0; i < s->n / 2; i++) store_elem(c, acc, frag_elem_ptr(c, d, acc, i), out[i]);
}

/* mma.sync needs every lane of the warp: a block whose thread count is not a
 * multiple of 32 has a last warp without some (ValueError, on both targets). */
static int check_full_warp(Ctx *c) {
    LLVMValueRef t[3], n[3];
    for (int d = 0; d < 3; d++) {
        t[d] = LLVMBuildZExt(c->b, c->target->special(c, SP_TID, d), c->i64, "");
        n[d] = LLVMBuildZExt(c->b, c->target->special(c, SP_NTID, d), c->i64, "");
    }
    LLVMValueRef lin = LLVMBuildAdd(c->b, t[0], LLVMBuildMul(c->b, n[0], LLVMBuildAdd(c->b, t[1], LLVMBuildMul(c->b, n[1], t[2], ""), ""), ""), "");
    LLVMValueRef total = LLVMBuildMul(c->b, LLVMBuildMul(c->b, n[0], n[1], ""), n[2], "");
    LLVMValueRef end = LLVMBuildAdd(c->b, LLVMBuildOr(c->b, lin, ci64(c, 31), ""), ci64(c, 1), "");
    return check_or_raise(c, LLVMBuildICmp(c->b, LLVMIntULE, end, total, ""), PyExc_ValueError,
                          "wmma.mma_sync(): every lane of the warp must take part, and the block's last warp is "
                          "not full (launch blocks of a multiple of 32 threads)");
}

LLVMValueRef lower_wmma(Ctx *c, Instr *in, const Intrinsic *k, Instr **a, int nargs, Type *rt) {
    (void)in, (void)rt;
    switch ((WmmaOp)k->id) {
    case WMMA_FRAGMENT: {
        Type *t = in->type;
        int n = frag_len(&shapes[t->frag->shape], t->frag->role);
        LLVMValueRef data = entry_alloca(c, LLVMArrayType2(mem_type(c, t->elem), (uint64_t)n), "frag");
        LLVMSetAlignment(data, 16);
        LLVMValueRef dim = ci64(c, n);
        return array_value(c, t, data, &dim);
    }
    case WMMA_FILL: return lower_fill(c, a);
    case WMMA_LOAD: return lower_load_store(c, a, nargs, false);
    case WMMA_STORE: return lower_load_store(c, a, nargs, true);
    case WMMA_MMA: {
        const MmaShape *s = &shapes[a[1]->type->frag->shape];
        if (check_full_warp(c) < 0) return NULL;
        LLVMValueRef d = frag_data(c, a[0]), x = frag_data(c, a[1]), y = frag_data(c, a[2]), z = frag_data(c, a[3]);
        if (on_gpu(c))
            mma_gpu(c, s, a[0]->type->elem, d, x, y, z);
        else
            mma_cpu(c, s, a[0]->type->elem, d, x, y, z);
        return NULL;
    }
    case WMMA_CONST: break;
    }
    internal_error(c, in->loc, "wmma operation %d has no lowering", k->id);
    return NULL;
}
