/* pyversions.c: the facts about CPython's bytecode that change between versions, one table
 * per version: opcode numbers and inline cache counts (opcode_tables.h, generated from each
 * interpreter's opcode module), and the forms of the instructions whose operands or stack
 * effects changed. The decoder (bytecode.c) and the IR builder (build.c, cfg.c) read these
 * tables and nothing else about the version; tests/test_pyversions.py checks the running
 * interpreter's table against its opcode and dis modules. Adding a version is a new table
 * here (and in opcode_tables.h), see docs/internals.md. */
#include "gj.h"

#include "opcode_tables.h"

#define OPS(t) t, (int)(sizeof t / sizeof t[0])

/* LOAD_COMMON_CONSTANT's operand indexes this list (dis._common_constants), each spelled as a
 * Python expression among the builtins */
static const char *const common_314[] = {"AssertionError", "NotImplementedError", "tuple", "all", "any", NULL};
static const char *const common_315[] = {"AssertionError", "NotImplementedError", "tuple", "all", "any", "list",
                                         "set", "None", "''", "True", "False", "-1", NULL};

/* clang-format off */
static const PyVersion versions[] = {
    {.minor = 11, OPS(opcodes_311), .compare_shift = 0, .null_after = false, .attr_method_bit = false,
     .make_function_attrs = true, .end_for_pops = 0, .iter_slots = 1, .binop_subscr = -1},
    {.minor = 12, OPS(opcodes_312), .compare_shift = 4, .null_after = false, .attr_method_bit = true,
     .make_function_attrs = true, .end_for_pops = 2, .iter_slots = 1, .binop_subscr = -1},
    {.minor = 13, OPS(opcodes_313), .compare_shift = 5, .null_after = true, .attr_method_bit = true,
     .make_function_attrs = false, .end_for_pops = 1, .iter_slots = 1, .binop_subscr = -1},
    {.minor = 14, OPS(opcodes_314), .compare_shift = 5, .null_after = true, .attr_method_bit = true,
     .make_function_attrs = false, .end_for_pops = 1, .iter_slots = 1, .binop_subscr = 26,
     .call_ex_kwargs_slot = true, .common_constants = common_314},
    {.minor = 15, OPS(opcodes_315), .compare_shift = 5, .null_after = true, .attr_method_bit = true,
     .make_function_attrs = false, .end_for_pops = 1, .iter_slots = 2, .binop_subscr = 26,
     .call_ex_kwargs_slot = true, .common_constants = common_315},
};
/* clang-format on */

const PyVersion *pyv;

const PyVersion *pyversion(void) {
    int minor = (int)((Py_Version >> 16) & 0xff);
    if ((Py_Version >> 24) == 3)
        for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
            if (versions[i].minor == minor) return &versions[i];
    PyErr_Format(PyExc_ImportError, "gpujit has no bytecode table for CPython %d.%d", (int)(Py_Version >> 24),
                 minor);
    return NULL;
}

/* _core.bytecode_table() -> the running version's table as a dict, for the test that checks it
 * against the interpreter's opcode and dis modules */
PyObject *py_bytecode_table(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    if (bytecode_init() < 0) return NULL;
    PyObject *ops = PyList_New(pyv->nops), *cc = PyList_New(0);
    if (!ops || !cc) goto fail;
    for (int i = 0; i < pyv->nops; i++) {
        PyObject *t = Py_BuildValue("(sii)", pyv->ops[i].name, pyv->ops[i].number, pyv->ops[i].caches);
        if (!t) goto fail;
        PyList_SET_ITEM(ops, i, t);
    }
    for (int i = 0; pyv->common_constants && pyv->common_constants[i]; i++)
        if (PyList_Append(cc, common_constant(i)) < 0) goto fail;
    return Py_BuildValue("{s:i,s:N,s:i,s:O,s:O,s:O,s:i,s:i,s:i,s:O,s:N}", "minor", pyv->minor, "ops", ops,
                         "compare_shift", pyv->compare_shift, "null_after", pyv->null_after ? Py_True : Py_False,
                         "attr_method_bit", pyv->attr_method_bit ? Py_True : Py_False, "make_function_attrs",
                         pyv->make_function_attrs ? Py_True : Py_False, "end_for_pops", pyv->end_for_pops,
                         "iter_slots", pyv->iter_slots, "binop_subscr", pyv->binop_subscr, "call_ex_kwargs_slot",
                         pyv->call_ex_kwargs_slot ? Py_True : Py_False, "common_constants", cc);
fail:
    Py_XDECREF(ops);
    Py_XDECREF(cc);
    return NULL;
}
