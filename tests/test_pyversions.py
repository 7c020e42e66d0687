"""The running CPython's bytecode table (src/pyversions.c) against the interpreter's own opcode
and dis modules, and damaged code objects: every operand the decoder reads is checked, so a
code object with an operand out of range is an InternalCompilerError, never a crash."""
import dis
import opcode
import sys

import numpy as np
import pytest

import gpujit as gpu
from gpujit import _core

TABLE = _core.bytecode_table()


def test_table_is_this_version():
    assert TABLE["minor"] == sys.version_info[1]


def test_opcode_numbers_and_caches_match_the_opcode_module():
    entries = opcode._inline_cache_entries
    want = sorted((name, number, entries[number] if isinstance(entries, list) else entries.get(name, 0))
                  for name, number in opcode.opmap.items() if number < 256)
    assert sorted(TABLE["ops"]) == want


def instructions(f):
    return [i for i in dis.get_instructions(f) if i.opname != "CACHE"]


def test_compare_operand_form():
    for op in dis.cmp_op:
        f = eval("lambda a, b: a %s b" % op)
        cmp = [i for i in instructions(f) if i.opname == "COMPARE_OP"]
        assert dis.cmp_op[cmp[0].arg >> TABLE["compare_shift"]] == op


def test_null_position_of_a_call():
    def f():
        return g(1)  # noqa: F821
    load = [i for i in instructions(f) if i.opname == "LOAD_GLOBAL"][0]
    assert load.argrepr == ("g + NULL" if TABLE["null_after"] else "NULL + g")


def test_method_and_function_forms():
    real = {n for n, v in opcode.opmap.items() if v < 256}
    assert TABLE["attr_method_bit"] == ("LOAD_METHOD" not in real)
    assert TABLE["make_function_attrs"] == ("SET_FUNCTION_ATTRIBUTE" not in real)


def test_loop_forms():
    real = {n: v for n, v in opcode.opmap.items() if v < 256}
    pushed = opcode.stack_effect(real["GET_ITER"], 0) if real["GET_ITER"] >= opcode.HAVE_ARGUMENT \
        else opcode.stack_effect(real["GET_ITER"])
    assert TABLE["iter_slots"] == 1 + pushed
    if "END_FOR" not in real:
        assert TABLE["end_for_pops"] == 0
    else:
        assert TABLE["end_for_pops"] == -opcode.stack_effect(real["END_FOR"])
    if "POP_ITER" in real:
        assert -opcode.stack_effect(real["POP_ITER"]) == TABLE["iter_slots"]


def test_subscript_and_call_ex_forms():
    nb = [name for name, _ in getattr(opcode, "_nb_ops", [])]
    assert TABLE["binop_subscr"] == (nb.index("NB_SUBSCR") if "NB_SUBSCR" in nb else -1)
    ex = opcode.opmap["CALL_FUNCTION_EX"]
    # 3.14+ always pop the kwargs slot: callable, NULL, args, kwargs
    effect = opcode.stack_effect(ex, 0) if ex >= opcode.HAVE_ARGUMENT else opcode.stack_effect(ex)
    assert TABLE["call_ex_kwargs_slot"] == (effect == -3)


def test_common_constants_match_dis():
    assert TABLE["common_constants"] == list(getattr(dis, "_common_constants", []))


# ---- damaged code objects ----

def kern(out, a):
    i = 3
    s = 0.5
    for j in range(2):
        s += a[j]
    out[i] = s


def patched(f, opnames, arg):
    """f's code with the operand of its first instruction named in opnames set to arg"""
    code = bytearray(f.__code__.co_code)
    ins = [i for i in instructions(f) if i.opname in opnames][0]
    assert arg < 256
    code[ins.offset + 1] = arg
    return f.__code__.replace(co_code=bytes(code))


def compile_code(code):
    def k(out, a):
        pass
    k.__code__ = code
    return gpu.jit("void(float64[::1], float64[::1])")(k)


@pytest.mark.parametrize("damage", ["no constants", "constant index", "local index", "pair index",
                                    "global name", "jump target"])
def test_damaged_code_object_is_an_internal_error(damage):
    if damage == "no constants":
        code = kern.__code__.replace(co_consts=())
    elif damage == "constant index":
        code = patched(kern, {"LOAD_CONST"}, 200)
    elif damage == "local index":
        code = patched(kern, {"STORE_FAST"}, 200)
    elif damage == "pair index":
        if not any(i.opname.endswith("FAST_LOAD_FAST") for i in instructions(kern)):
            pytest.skip("no pair forms before 3.13")
        code = patched(kern, {"LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"}, 0xff)
    elif damage == "global name":
        code = patched(kern, {"LOAD_GLOBAL"}, 200)
    else:
        code = patched(kern, {"JUMP_BACKWARD"}, 250)
    with pytest.raises(gpu.InternalCompilerError, match="malformed code object"):
        compile_code(code)


def test_undamaged_code_compiles_and_runs(rng):
    k = compile_code(kern.__code__)
    a = rng.random(4)
    out = np.full(4, np.nan)
    k[1, 1](out, a)
    assert out[3] == 0.5 + a[0] + a[1]


def test_intrinsic_numbers_build_c_uses():
    # build.c reads CALL_INTRINSIC_1 5 as unary + and 6 as a list made a tuple (3.12+)
    import _opcode
    if not hasattr(_opcode, "get_intrinsic1_descs"):
        pytest.skip("no CALL_INTRINSIC_1 before 3.12")
    descs = _opcode.get_intrinsic1_descs()
    assert descs[5] == "INTRINSIC_UNARY_POSITIVE" and descs[6] == "INTRINSIC_LIST_TO_TUPLE"


def test_constant_slice_indexes(rng):
    # 3.14+ fold a constant slice, and a tuple index holding one, into a single constant
    @gpu.jit
    def k(out, a):
        out[1:3, 0] = a[0:2, 1]
        out[0, ::2] = a[2, 1:]
        out[3, 1:3] = 7.0

    a = rng.random((4, 3))
    out = np.full((4, 3), np.nan)
    want = out.copy()
    k.py_func(want, a)
    k[1, 1](out, a)
    np.testing.assert_array_equal(out, want)
