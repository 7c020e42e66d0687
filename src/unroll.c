/* unroll.c: a for loop over a global or closure tuple that holds arrays
 * (`for x in t`, `for x in literal_unroll(t)`) is unrolled in the decoded
 * bytecode, before blocks are found: its body is repeated once per item,
 * each copy starting by taking its item with a constant index, so that
 * items of different types (arrays of different ndim or layout) each type
 * their own copy. Copies get fresh byte offsets past the code's end. */
#include <string.h>

#include "gj.h"

#define MAX_UNROLL_INSNS 100000

/* The global or closure value a LOAD_GLOBAL or LOAD_DEREF reads, borrowed;
 * NULL (no exception) when it is not known here. */
static PyObject *loaded_value(Ctx *c, const Insn *in) {
    PyObject *o = NULL;
    if (in->op == OP_LOAD_GLOBAL && c->globals) {
        PyObject *names = PyObject_GetAttrString(c->code, "co_names");
        if (names && PyTuple_Check(names) && (in->arg >> 1) < PyTuple_GET_SIZE(names))
            o = PyDict_GetItem(c->globals, PyTuple_GET_ITEM(names, in->arg >> 1));
        Py_XDECREF(names);
    } else if (in->op == OP_LOAD_DEREF && c->closure) {
        PyObject *vn = PyObject_CallMethod(c->code, "_varname_from_oparg", "i", in->arg);
        PyObject *fv = vn ? PyObject_GetAttrString(c->code, "co_freevars") : NULL;
        for (Py_ssize_t k = 0; fv && PyTuple_Check(fv) && k < PyTuple_GET_SIZE(fv); k++)
            if (k < PyTuple_GET_SIZE(c->closure) && PyUnicode_Compare(PyTuple_GET_ITEM(fv, k), vn) == 0) {
                PyObject *cell = PyTuple_GET_ITEM(c->closure, k);
                o = PyCell_Check(cell) ? PyCell_GET(cell) : NULL;
            }
        Py_XDECREF(vn);
        Py_XDECREF(fv);
    }
    PyErr_Clear();
    return o;
}

/* How many items the tuple that GET_ITER at insn `g` iterates holds, when
 * that is a global or closure tuple holding an array, read directly or
 * through literal_unroll(); else 0. */
static int unrollable(Ctx *c, int g) {
    int i = g - 1;
    bool called = false;
    while (i >= 0 && (c->insns[i].op == OP_PRECALL || c->insns[i].op == OP_CALL) && c->insns[i].arg == 1) {
        called = true;
        i--;
    }
    if (i < 0) return 0;
    PyObject *t = loaded_value(c, &c->insns[i]);
    if (called) {
        PyObject *f = i > 0 ? loaded_value(c, &c->insns[i - 1]) : NULL;
        PyObject *nm = f ? PyObject_GetAttrString(f, "__name__") : NULL;
        bool ok = nm && PyUnicode_Check(nm) && PyUnicode_CompareWithASCIIString(nm, "literal_unroll") == 0;
        Py_XDECREF(nm);
        PyErr_Clear();
        if (!ok) return 0;
    }
    if (!t || !PyTuple_Check(t)) return 0;
    bool arrays = false;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(t); k++)
        arrays = arrays || strcmp(Py_TYPE(PyTuple_GET_ITEM(t, k))->tp_name, "numpy.ndarray") == 0;
    if (!arrays) return 0;
    /* literal_unroll(t) is t: its load and call go, leaving t where the call's result was */
    if (called)
        for (int j = i - 1; j < g; j++)
            if (j != i) c->insns[j].op = OP_NOP;
    return (int)PyTuple_GET_SIZE(t);
}

int unroll_loops(Ctx *c) {
    for (int g = 0; g + 1 < c->ninsns; g++) {
        if (c->insns[g].op != OP_GET_ITER || c->insns[g + 1].op != OP_FOR_ITER) continue;
        int n = unrollable(c, g);
        if (n <= 0) continue;
        int f = g + 1, foff = c->insns[f].off, exit = for_iter_exit(c, &c->insns[f]);
        int e = -1; /* the loop's closing JUMP_BACKWARD: the last jump back to the FOR_ITER */
        for (int i = f + 1; i < c->ninsns && c->insns[i].off < c->insns[f].jump; i++)
            if (c->insns[i].jump == foff) e = i;
        if (e < 0) return internal_error(c, c->insns[f].loc, "unroll: loop without its jump back");
        int body = e - f, total = c->ninsns + n * (body + 1) + 2;
        if ((long)n * (body + 1) > MAX_UNROLL_INSNS)
            return error_at(c, ERR_UNSUPPORTED, c->insns[f].loc,
                            "unrolled loop too large (limit is %d instructions)", MAX_UNROLL_INSNS);
        Insn *out = arena_alloc(&c->arena, sizeof(Insn) * (size_t)total);
        if (!out) return -1;
        int m = 0, nb = c->nbytes;
        for (int i = 0; i < g; i++) out[m++] = c->insns[i];
        out[m] = c->insns[g];
        out[m++].op = OP_UNROLL_START; /* the tuple stays on the stack, where the iterator was */
        for (int k = 0; k < n; k++) {
            int base = nb + k * 2 * (body + 1); /* copy k: UNROLL_ITEM, then the body */
            int next_start = k + 1 < n ? base + 2 * (body + 1) : nb + n * 2 * (body + 1);
            Insn it = c->insns[f];
            it.op = OP_UNROLL_ITEM;
            it.arg = k;
            it.count = n;
            it.off = base;
            it.jump = -1;
            out[m++] = it;
            for (int i = f + 1; i <= e; i++) {
                Insn in = c->insns[i];
                in.off = base + 2 * (i - f);
                int j = in.jump;
                if (j == foff)
                    in.jump = next_start; /* continue, and the loop's end: the next copy */
                else if (j > foff && j <= c->insns[e].off)
                    in.jump = base + 2 * (c->insn_at[j / 2] - f);
                if (in.op == OP_JUMP_BACKWARD && in.jump > in.off) in.op = OP_JUMP_FORWARD;
                out[m++] = in;
            }
        }
        /* after the last copy: what an exhausted FOR_ITER does */
        int end = nb + n * 2 * (body + 1);
        Insn pop = c->insns[e];
        pop.op = OP_UNROLL_END;
        pop.arg = 0;
        pop.off = end;
        pop.jump = -1;
        out[m++] = pop;
        Insn jmp = pop;
        jmp.op = OP_JUMP_FORWARD;
        jmp.off = end + 2;
        jmp.jump = exit;
        out[m++] = jmp;
        for (int i = e + 1; i < c->ninsns; i++) out[m++] = c->insns[i];
        for (int i = 0; i + 1 < m; i++) out[i].next = out[i + 1].off;
        out[m - 1].next = out[m - 1].off + 2;
        int nbytes = end + 4;
        int *at = arena_alloc(&c->arena, sizeof(int) * (size_t)(nbytes / 2 + 2));
        if (!at) return -1;
        for (int i = 0; i < nbytes / 2 + 2; i++) at[i] = -1;
        for (int i = 0; i < m; i++) at[out[i].off / 2] = i;
        /* a jump to an EXTENDED_ARG prefix lands on its instruction, as decoded */
        for (int i = 0; i < c->nbytes / 2; i++)
            if (c->insn_at[i] >= 0 && at[i] < 0 && c->insn_at[i] < g) at[i] = c->insn_at[i];
            else if (c->insn_at[i] > e && at[i] < 0) at[i] = c->insn_at[i] - (c->ninsns - m);
        c->insns = out;
        c->ninsns = m;
        c->insn_at = at;
        c->nbytes = nbytes;
        g = -1; /* loops nested in the copies, and later ones, from the start */
    }
    return 0;
}
