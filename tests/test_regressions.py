"""Minimal reproducers of bugs found by the fuzzer (tests/fuzz) and the bad-input corpus.

Each test states the CPython answer. An open bug is marked xfail(strict=True) (when it is
fixed, strict turns the pass into a failure: drop the marker then); the ones below were
fixed in 0e1aca6 and are plain regression tests now. docs/reliability.md lists the findings.
"""
import math
import os
import sys

import numpy as np
import pytest

import gpujit as gpu

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz"))
import shim  # noqa: E402


def run_vs_python(fn, n, *inputs, out_dtype=np.int64):
    """Launch fn(out, *inputs) over n threads (one block) and compare with CPython running
    fn's body once per thread (tests/fuzz/shim.py stands in for gpujit)."""
    out = np.zeros(n, out_dtype)
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
