/* webs.c: each variable split into its webs -- the groups of assignments
 * that reach common uses -- so that a name reused for unrelated values
 * (`for v in pairs: ...` and later `for v in triples: ...`) gets a variable,
 * and so a type, per web, as numba's SSA form gives it. A variable whose
 * assignments all reach shared uses stays whole, and keeps its index (an
 * argument's web is the one its entry store belongs to). Requires: build_ir
 * (and, in device functions, prune_literal_branches); runs before
 * infer_types. It also warns, where gpujit.config.ALWAYS_WARN_UNINIT_VAR asks
 * (numba's setting), of a variable read where some path has not assigned it. */
#include <string.h>

#include "gj.h"

/* Reaching definitions take nblocks * ndefs bits: past this, variables stay whole. */
#define WEBS_MAX_BITS (64u << 20)

typedef struct Webs {
    int ndefs, words;   /* assignments; 64-bit words of a set of them */
    Instr **def;        /* def d's store, numbered by variable, then program order */
    int *vstart;        /* variable v's defs are [vstart[v], vstart[v + 1]) */
    int *parent;        /* union-find over defs */
    int *dnum;          /* the def number of each store, by its position in program order */
    int *bfirst;        /* the position of block i's first store */
} Webs;

static Instr *terminator(Block *b) {
    Instr *t = b->instrs.n ? b->instrs.v[b->instrs.n - 1] : NULL;
    return t && (ir_op_info[t->op].flags & IRF_TERM) ? t : NULL;
}

static int find(Webs *w, int d) {
    while (w->parent[d] != d) d = w->parent[d] = w->parent[w->parent[d]];
    return d;
}

static void unite(Webs *w, int a, int b) {
    a = find(w, a), b = find(w, b);
    if (a != b) w->parent[a > b ? a : b] = a < b ? a : b; /* the earlier def leads */
}

static void kill_var(const Webs *w, uint64_t *set, int v) {
    for (int d = w->vstart[v]; d < w->vstart[v + 1]; d++) set[d >> 6] &= ~(1ULL << (d & 63));
}

/* Walks block b from the set `cur` reaching its entry, updating cur; with
 * loads, joins the defs that reach each load of a variable. */
/* cur = the defs reaching a block's entry: the union of its predecessors' OUT sets */
static void defs_in(const Webs *w, int npred, Block **pred, const uint64_t *out, uint64_t *cur) {
    memset(cur, 0, sizeof(uint64_t) * (size_t)w->words);
    for (int p = 0; p < npred; p++)
        for (int j = 0; j < w->words; j++) cur[j] |= out[(size_t)pred[p]->id * (size_t)w->words + (size_t)j];
}

static void walk(Webs *w, Block *b, uint64_t *cur, bool loads) {
    int o = w->bfirst[b->id];
    for (int k = 0; k < b->instrs.n; k++) {
        Instr *in = b->instrs.v[k];
        if (in->op == IR_STORE_VAR) {
            int d = w->dnum[o++];
            kill_var(w, cur, in->var);
            cur[d >> 6] |= 1ULL << (d & 63);
        } else if (loads && in->op == IR_LOAD_VAR) {
            int first = -1;
            for (int d = w->vstart[in->var]; d < w->vstart[in->var + 1]; d++)
                if (cur[d >> 6] >> (d & 63) & 1) {
                    if (first < 0)
                        first = d;
                    else
                        unite(w, first, d);
                }
        }
    }
}

static bool warn_uninit_asked(void) {
    PyObject *cfg = PyImport_ImportModule("gpujit.config");
    PyObject *v = cfg ? PyObject_GetAttrString(cfg, "ALWAYS_WARN_UNINIT_VAR") : NULL;
    int on = v ? PyObject_IsTrue(v) : 0;
    Py_XDECREF(v);
    Py_XDECREF(cfg);
    PyErr_Clear();
    return on > 0;
}

static int warn_uninit_at(Ctx *c, const Var *v, Loc loc) {
    PyObject *errs = PyImport_ImportModule("gpujit.errors");
    PyObject *cat = errs ? PyObject_GetAttrString(errs, "NumbaWarning") : NULL;
    Py_XDECREF(errs);
    if (!cat) return -1;
    const char *file = c->filename ? c->filename : "<unknown>";
    PyObject *msg = PyUnicode_FromFormat("Detected uninitialized variable %s (%s:%d)", v->name, file, loc.line);
    PyObject *fn = PyUnicode_FromString(file);
    int r = msg && fn ? PyErr_WarnExplicitObject(cat, msg, fn, loc.line, NULL, NULL) : -1;
    Py_XDECREF(msg);
    Py_XDECREF(fn);
    Py_DECREF(cat);
    return r;
}

/* cur = the variables every path to block b assigns: the intersection of its
 * predecessors' OUT sets (none at the entry) */
static void assigned_in(Ctx *c, const Block *b, int words, const uint64_t *out, uint64_t *cur) {
    memset(cur, b->id ? 0xff : 0, sizeof(uint64_t) * (size_t)words);
    for (int p = 0; b->id && p < c->nblocks; p++) {
        Instr *t = c->blocks[p]->built ? terminator(c->blocks[p]) : NULL;
        if (!t || (t->op != IR_BR && t->op != IR_CONDBR) || (t->target != b && t->target2 != b)) continue;
        for (int j = 0; j < words; j++) cur[j] &= out[(size_t)p * (size_t)words + (size_t)j];
    }
}

/* cur, from the variables assigned on entry to block b, to those assigned on its exit. With
 * `warned` (the last pass, after the fixpoint), a read of a variable not assigned yet warns,
 * once per variable. */
static int assigned_out(Ctx *c, const Block *b, uint64_t *cur, bool *warned) {
    for (int k = 0; k < b->instrs.n; k++) {
        Instr *in = b->instrs.v[k];
        if (in->op == IR_STORE_VAR) {
            cur[in->var >> 6] |= 1ULL << (in->var & 63);
        } else if (warned && in->op == IR_LOAD_VAR && !(cur[in->var >> 6] >> (in->var & 63) & 1) &&
                   !warned[in->var]) {
            warned[in->var] = true;
            RETURN_IF_ERROR(warn_uninit_at(c, ctx_var(c, in->var), in->loc));
        }
    }
    return 0;
}

/* Definite assignment, a must-analysis over variables. A read of a variable
 * some path has not assigned warns, once per variable (numba's SSA pass warns
 * the same way). */
static int warn_uninit(Ctx *c) {
    int nvars = c->vars.n, nb = c->nblocks, words = (nvars + 63) / 64;
    if (!nvars || !nb || !warn_uninit_asked()) return 0;
    uint64_t *out = arena_alloc(&c->arena, sizeof(uint64_t) * (size_t)words * (size_t)nb);
    uint64_t *cur = arena_alloc(&c->arena, sizeof(uint64_t) * (size_t)words);
    bool *warned = arena_alloc(&c->arena, sizeof(bool) * (size_t)nvars);
    if (!out || !cur || !warned) return PyErr_NoMemory(), -1;
    memset(out, 0xff, sizeof(uint64_t) * (size_t)words * (size_t)nb); /* optimistic start, shrinking to the fixpoint */
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < nb; i++) {
            Block *b = c->blocks[i];
            if (!b->built) continue;
            assigned_in(c, b, words, out, cur);
            RETURN_IF_ERROR(assigned_out(c, b, cur, NULL));
            uint64_t *o = out + (size_t)i * (size_t)words;
            if (memcmp(o, cur, sizeof(uint64_t) * (size_t)words)) {
                memcpy(o, cur, sizeof(uint64_t) * (size_t)words);
                changed = true;
            }
        }
    }
    for (int i = 0; i < nb; i++) {
        Block *b = c->blocks[i];
        if (!b->built) continue;
        assigned_in(c, b, words, out, cur);
        RETURN_IF_ERROR(assigned_out(c, b, cur, warned));
    }
    return 0;
}

int split_webs(Ctx *c) {
    RETURN_IF_ERROR(warn_uninit(c));
    int nvars = c->vars.n, nb = c->nblocks;
    Webs w = {0};
    w.vstart = arena_alloc(&c->arena, sizeof(int) * (size_t)(nvars + 1));
    if (!w.vstart) return PyErr_NoMemory(), -1;
    /* count, then number the stores by variable */
    for (int i = 0; i < nb; i++)
        for (int k = 0; c->blocks[i]->built && k < c->blocks[i]->instrs.n; k++) {
            Instr *in = c->blocks[i]->instrs.v[k];
            if (in->op == IR_STORE_VAR) w.vstart[in->var + 1]++, w.ndefs++;
        }
    if (w.ndefs < 2 || (size_t)nb * (size_t)w.ndefs > WEBS_MAX_BITS) return 0;
    for (int v = 0; v < nvars; v++) w.vstart[v + 1] += w.vstart[v];
    w.words = (w.ndefs + 63) / 64;
    w.def = arena_alloc(&c->arena, sizeof(Instr *) * (size_t)w.ndefs);
    w.dnum = arena_alloc(&c->arena, sizeof(int) * (size_t)w.ndefs);
    w.bfirst = arena_alloc(&c->arena, sizeof(int) * (size_t)nb);
    w.parent = arena_alloc(&c->arena, sizeof(int) * (size_t)w.ndefs);
    int *seen = arena_alloc(&c->arena, sizeof(int) * (size_t)nvars);
    uint64_t *out = arena_alloc(&c->arena, sizeof(uint64_t) * (size_t)w.words * (size_t)nb);
    uint64_t *cur = arena_alloc(&c->arena, sizeof(uint64_t) * (size_t)w.words);
    int *npred = arena_alloc(&c->arena, sizeof(int) * (size_t)nb);
    Block ***pred = arena_alloc(&c->arena, sizeof(Block **) * (size_t)nb);
    if (!w.def || !w.dnum || !w.bfirst || !w.parent || !seen || !out || !cur || !npred || !pred) return PyErr_NoMemory(), -1;
    int ord = 0;
    for (int i = 0; i < nb; i++) {
        w.bfirst[i] = ord;
        for (int k = 0; c->blocks[i]->built && k < c->blocks[i]->instrs.n; k++) {
            Instr *in = c->blocks[i]->instrs.v[k];
            if (in->op != IR_STORE_VAR) continue;
            int d = w.vstart[in->var] + seen[in->var]++;
            w.def[d] = in;
            w.dnum[ord++] = d;
        }
    }
    for (int d = 0; d < w.ndefs; d++) w.parent[d] = d;
    /* predecessors, from the terminators (pruning may have dropped edges) */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < nb; i++) {
            Instr *t = c->blocks[i]->built ? terminator(c->blocks[i]) : NULL;
            Block *succ[2] = {t && (t->op == IR_BR || t->op == IR_CONDBR) ? t->target : NULL,
                              t && t->op == IR_CONDBR ? t->target2 : NULL};
            for (int s = 0; s < 2; s++) {
                if (!succ[s]) continue;
                if (pass == 0)
                    npred[succ[s]->id]++;
                else
                    pred[succ[s]->id][npred[succ[s]->id]++] = c->blocks[i];
            }
        }
        if (pass == 0)
            for (int i = 0; i < nb; i++) {
                if (!(pred[i] = arena_alloc(&c->arena, sizeof(Block *) * (size_t)(npred[i] + 1))))
                    return PyErr_NoMemory(), -1;
                npred[i] = 0;
            }
    }
    /* reaching definitions: OUT(b) = defs of b's last stores + (IN(b) - b's variables' defs) */
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < nb; i++) {
            Block *b = c->blocks[i];
            if (!b->built) continue;
            defs_in(&w, npred[i], pred[i], out, cur);
            walk(&w, b, cur, false);
            uint64_t *o = out + (size_t)i * (size_t)w.words;
            if (memcmp(o, cur, sizeof(uint64_t) * (size_t)w.words)) {
                memcpy(o, cur, sizeof(uint64_t) * (size_t)w.words);
                changed = true;
            }
        }
    }
    /* join the defs that reach each load */
    for (int i = 0; i < nb; i++) {
        Block *b = c->blocks[i];
        if (!b->built) continue;
        defs_in(&w, npred[i], pred[i], out, cur);
        walk(&w, b, cur, true);
    }
    /* a new variable for each web but a variable's first; loads follow the defs reaching them */
    int *var_of = arena_alloc(&c->arena, sizeof(int) * (size_t)w.ndefs);
    if (!var_of) return PyErr_NoMemory(), -1;
    for (int v = 0; v < nvars; v++)
        for (int d = w.vstart[v]; d < w.vstart[v + 1]; d++) {
            int r = find(&w, d);
            if (r == w.vstart[v]) {
                var_of[d] = v;
            } else if (r != d) {
                var_of[d] = var_of[r];
            } else {
                Var *old = ctx_var(c, v), *nv = arena_alloc(&c->arena, sizeof *nv);
                if (!nv) return PyErr_NoMemory(), -1;
                *nv = *old;
                nv->is_arg = false;
                nv->loc = w.def[d]->loc;
                vec_push(&c->arena, &c->vars, nv);
                var_of[d] = c->vars.n - 1;
            }
        }
    for (int i = 0; i < nb; i++) {
        Block *b = c->blocks[i];
        if (!b->built) continue;
        int o = w.bfirst[i];
        defs_in(&w, npred[i], pred[i], out, cur);
        for (int k = 0; k < b->instrs.n; k++) {
            Instr *in = b->instrs.v[k];
            if (in->op == IR_STORE_VAR) {
                int v = in->var, d = w.dnum[o++];
                kill_var(&w, cur, v);
                cur[d >> 6] |= 1ULL << (d & 63);
                in->var = var_of[d];
            } else if (in->op == IR_LOAD_VAR) {
                for (int d = w.vstart[in->var]; d < w.vstart[in->var + 1]; d++)
                    if (cur[d >> 6] >> (d & 63) & 1) {
                        in->var = var_of[d];
                        break;
                    }
            }
        }
    }
    return 0;
}
