"""Minimal reproducers of bugs found by the fuzzer (tests/fuzz) and the bad-input corpus.

Each test states the CPython answer. An open bug is marked xfail(strict=True) (when it is
fixed, strict turns the pass into a failure: drop the marker then); the ones below were
fixed in 0e1aca6 and are plain regression tests now. docs/reliability.md lists the findings.
"""
import math
import os
import re
import sys

import numpy as np
import pytest

import gpujit as gpu
from conftest import assemble_ptx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz"))
import shim  # noqa: E402
import fuzz  # noqa: E402  (the fuzzer, for its saved reproducers)


def run_vs_python(fn, n, *inputs, out_dtype=np.int64):
    """Launch fn(out, *inputs) over n threads (one block) and compare with CPython running
    fn's body once per thread (tests/fuzz/shim.py stands in for gpujit)."""
    out = np.full(n, -12345, out_dtype)    # poisoned: a thread that stores nothing shows
    gpu.jit(fn)[1, n](out, *inputs)
    want = np.zeros(n, out_dtype)
    g = dict(fn.__globals__)
    g["gpu"] = sh = shim.Shim(shim.Block(n, False), n, 1)
    py = type(fn)(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)
    for tid in range(n):
        sh.set_thread(tid, 0)
        py(shim.RefArray(want), *[shim.RefArray(x) if isinstance(x, np.ndarray) else x for x in inputs])
    np.testing.assert_array_equal(out, want)


A = np.array([-3, 0, 1, 2, 4, 5, 6, 9], np.int64)

# -- 1. a branching expression inside a call's arguments was rejected (fixed in 0e1aca6) -------------
# `x if c else y`, `a and b` and `a < b < c` compile to jumps; inside the arguments of a call
# the callable (and, on 3.11, a NULL) sits on the stack across the jump, and the bytecode
# builder refused: "UnsupportedError: this expression (a call across branches)". Found by the
# fuzzer in ~80% of its first programs.


def k_ifexp_in_call(out, a):
    i = gpu.grid(1)
    out[i] = max(a[i] if i > 2 else 5, 1)


def k_and_in_call(out, a):
    i = gpu.grid(1)
    out[i] = abs(a[i] and i)


def k_chained_cmp_in_call(out, a):
    i = gpu.grid(1)
    out[i] = int(0 < a[i] < 5)


def k_ifexp_in_cast(out, a):
    i = gpu.grid(1)
    out[i] = gpu.int32(a[i] if i > 2 else -1)


def k_or_in_math(out, a):
    i = gpu.grid(1)
    out[i] = math.floor(math.sqrt(a[i] * a[i] or 2.0))


@pytest.mark.parametrize("fn", [k_ifexp_in_call, k_and_in_call, k_chained_cmp_in_call, k_ifexp_in_cast,
                                k_or_in_math], ids=lambda f: f.__name__)
def test_branching_expression_in_call_arguments(fn):
    run_vs_python(fn, len(A), A)


def k_ifexp_outside_call(out, a):
    i = gpu.grid(1)
    t = a[i] if i > 2 else 5     # the same expression, hoisted out of the call, works
    out[i] = max(t, 1) + (a[i] if i > 4 else 0)


def test_branching_expression_outside_call_works():
    run_vs_python(k_ifexp_outside_call, len(A), A)


# -- 2. default argument values of helper functions were ignored (fixed in 0e1aca6) ------------------
# A plain Python function called from a kernel is compiled with it, but its defaults were not
# applied: "TypingError: helper_with_default() takes 2 arguments (1 given)".
def helper_with_default(v, w=2):
    return v * w


def k_helper_default(out, a):
    i = gpu.grid(1)
    out[i] = helper_with_default(a[i]) + helper_with_default(a[i], 3)


def test_helper_default_argument():
    run_vs_python(k_helper_default, len(A), A)


# -- 3. miscompiles in the GPU code generators (found on the H200, worked around in src/ptxfix.c) -----
# The fuzzer's GPU findings, reduced there: none shows on the CPU backend (same IR, x86 code
# generator), so on a machine without a GPU these tests check the PTX for the patterns that
# were miscompiled, and on the GPU they check the numbers.
#  a) ptxas folds max(-|x|, c) for 64-bit x to c (its range for -|x| is wrong): abs.s64 is
#     written as (x ^ (x >> 63)) - (x >> 63).
#  b) ptxas fuses a 16-bit max/min with a compare against the same constant into one VIMNMX
#     whose predicate misses the tie: a loop exit never fired and the kernel hung. 16-bit
#     min/max are written as setp + selp.
#  c) LLVM's NVPTX back end turns `sitofp i1 true` into +1.0 (selp.u32 1, 0 + cvt.rn.f64.s32)
#     in some contexts: float(-int(bool)) came out as 1.0. It is written as a select.
#  e) ptxas fuses `zext(mul.hi.u32 x, C) - b` (64-bit, b a register known to fit in 32 bits)
#     into one IMAD.HI whose addend is (-b_lo, high word -1 plus the carry): for b == 0 no carry
#     comes and the high word is wrong. 64-bit sub/neg of a register are written as a + ~b + 1.
def k_neg_abs_max(out, a):
    i = gpu.grid(1)
    out[i] = max(-abs(a[i]), -350) + 1000 * (min(-abs(a[i]), -350) < -400)


def test_neg_abs_max_64bit():
    a = np.array([0, 1, -2, 349, -350, 351, -1000, 7, 2 ** 40, -(2 ** 40), 5, -5], np.int64)
    run_vs_python(k_neg_abs_max, len(a), a)
    ptx = gpu.compile_ptx(k_neg_abs_max, "void(int64[::1], int64[::1])")[0]
    assert "abs.s64" not in ptx


SUB_NEG_64 = r"\b(sub\.[su]64\s+[^,]+,[^,]+,\s*%|neg\.s64)"    # 64-bit sub/neg of a register (e)


def k_udiv_sub(out, a):
    i = gpu.grid(1)
    out[i] = (a[i] + 2) // 3 - (i & 3)


def test_udiv_minus_small_64bit():
    # fuzz finding 30-8529: on the H200 every fourth thread (i & 3 == 0) stored (a + 2) // 3 - 2**32
    a = np.random.default_rng().integers(0, 2 ** 16, 256).astype(np.uint16)
    run_vs_python(k_udiv_sub, len(a), a)
    ptx = gpu.compile_ptx(k_udiv_sub, "void(int64[::1], uint16[::1])")[0]
    assert "mul.hi.u32" in ptx      # the division by 3 is still there, and its subtraction is not:
    assert not re.search(SUB_NEG_64, ptx)


def k_pow_half(out, x):
    i = gpu.grid(1)
    out[i] = x[i] ** 0.5


def test_pow_half_is_correctly_rounded():
    # d) libdevice's pow(9.0, 0.5) is not 3.0 on the GPU (gen3-cuda-mismatch-21-27928 went on a
    #    different branch for thread 8, i + 1 == 9): `x ** 0.5` is a correctly rounded sqrt,
    #    with CPython's answers at -0.0 and -inf
    x = np.concatenate([np.arange(50.0) ** 2, [0.0, -0.0, np.inf, -np.inf, 2.0, 1e-310, 0.1]])
    out = np.full_like(x, np.nan)
    gpu.jit(k_pow_half)[1, len(x)](out, x)
    want = np.array([v ** 0.5 for v in x.tolist()])
    assert out.tobytes() == want.tobytes(), (out, want)
    ptx = gpu.compile_ptx(k_pow_half, "void(float64[::1], float64[::1])")[0]
    assert "sqrt.rn.f64" in ptx and ptx.count("\n") < 100    # libdevice pow inlined is ~370 lines


TWO_FUNCTIONS_PTX = """.version 7.8
.target sm_90
.address_size 64

.func f(.param .b64 a, .param .b64 b)
{
    .reg .b64 %rd<5>;
    .reg .b32 %r<2>;
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [b];
    { .reg .b64 %tmp;
      cvta.to.local.u64 %tmp, %rd1;
      cvt.u32.u64 %r1, %tmp; }
    sub.s64 %rd3, %rd1, %rd2;
    ret;
}

.visible .entry k(.param .u64 p, .param .u64 q)
{
    .reg .b64 %rd<6>;
    .reg .b32 %r<3>;
    ld.param.u64 %rd1, [p];
    ld.param.u64 %rd2, [q];
    mov.u32 %r1, 7;
    mov.b64 %rd5, {%r1, %r1};   // a vector operand: its braces open and close on one line
    neg.s64 %rd3, %rd2;
    sub.s64 %rd4, %rd1, %rd2;
    st.global.u64 [%rd1], %rd4;
    st.global.u64 [%rd1+8], %rd3;
    st.global.u64 [%rd1+16], %rd5;
    ret;
}
"""


def test_ptx_rewrites_declare_their_registers_in_every_function():
    # the rewrites' scratch registers are declared where each function body opens; a scoped
    # register block closing at the end of an instruction line (`cvt ...; }`, as LLVM writes
    # 32-bit local pointers) once hid the second function's opening brace, and ptxas then
    # rejected `%gjfix_t` there
    fixed = gpu._core.ptxfix(TWO_FUNCTIONS_PTX)
    assert not re.search(r"\b(sub|neg)\.s64\b", fixed), fixed
    assert fixed.count(".reg .b64 \t%gjfix_t;") == 2, fixed
    assemble_ptx([("two functions", fixed)])
    assert gpu._core.ptxfix(".version 7.8\n") == ".version 7.8\n"   # nothing to do: unchanged


REGRESSIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz", "regressions")


@pytest.mark.parametrize("name", sorted(os.listdir(REGRESSIONS)))
def test_fuzz_regression(name):
    # the fuzzer's findings that were fixed, as it saved them: against CPython on the current
    # target (each of these failed or hung on the H200 before its fix)
    prog = fuzz.load_reproducer(os.path.join(REGRESSIONS, name))
    res = fuzz.check_program(prog, gpu.current_target())
    assert res["status"] == "ok", res


BAD_PTX = [
    ("abs.s64 (ptxas folds comparisons of -|x|)", r"\babs\.s64\b"),
    ("16-bit min/max (ptxas fuses them with a compare)", r"\b(min|max)\.[su]16\b"),
    ("64-bit sub/neg of a register (ptxas's IMAD.HI fusion drops a carry)", SUB_NEG_64),
    ("sitofp i1 as selp.u32 1, 0 (+1.0 for true)",
     r"selp\.u32\s+(%r\d+), 1, 0, %p\d+;\s*\n\s*cvt\.rn\.f(32|64)\.s32\s+%f\w*, \1;"),
]


@pytest.mark.parametrize("name", sorted(os.listdir(REGRESSIONS)))
def test_fuzz_regression_ptx_avoids_miscompiled_patterns(name):
    prog = fuzz.load_reproducer(os.path.join(REGRESSIONS, name))
    out, a, b = fuzz.make_inputs(prog)
    g = {"gpu": gpu, "math": math}
    exec(fuzz.code_of(prog), g)
    ptx = gpu.compile_ptx(g["kern"], gpu.typing.signature_of((out, a, b)))[0]
    for what, rx in BAD_PTX:
        assert not re.search(rx, ptx), what
