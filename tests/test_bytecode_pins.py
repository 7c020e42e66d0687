"""Each supported CPython's code for a few small kernels, pinned: the listing of every function
below is tests/bytecode_pins/3.X.txt for that version, so that a point release that changes
code generation is noticed here (and the kernels are run, so that what changed is known to
work). Regenerate a version's pins with `python3.X tests/test_bytecode_pins.py`, after checking
what changed with dis. The kernel's assert must be CPython's own: PYTEST_DONT_REWRITE."""
import dis
import math
import os
import sys

import numpy as np
import pytest

import gpujit as gpu

PINS = os.path.join(os.path.dirname(__file__), "bytecode_pins", "%d.%d.txt" % sys.version_info[:2])
T = (1, 2, 3)


@gpu.jit(device=True)
def dev(x, b=1):
    return x * b


def loop_break(out, a, n):
    s = 0.0
    for j in range(n):
        if j > 3 and a[j] is not None:
            s += a[j] * 2
        else:
            break
    out[0] = s


def small_ints_and_consts(out, a):
    # a product by a power of two is exact, so the fused multiply-add gpujit makes of it
    # (docs/language.md) rounds as CPython's multiply then add does
    out[0] = a[0] * 8 + 300 - 1
    out[1] = -a[1] if a[1] > 0.5 else 2


def slices_and_subscripts(out, a):
    out[1:3] = a[0:2]
    b = a[2:]
    out[3] = b[0] + a[-1]


def tuples_and_unpack(out, a):
    x, y = T[0], T[1]
    out[0] = x + y + len(T) + a[0]


def assert_and_calls(out, a, n):
    assert n > 0, "n"
    out[0] = math.sqrt(abs(a[0])) + max(a[1], a[2])
    out[1] = dev(a[0], b=2) if n > 5 else min(a[0], 1.0)


def while_and_bools(out, a, n):
    i = 0
    while i < n and not (a[i] < 0):
        i += 1
    out[0] = i


FUNCS = [loop_break, small_ints_and_consts, slices_and_subscripts, tuples_and_unpack, assert_and_calls,
         while_and_bools]


def listing(f):
    lines = []
    for ins in dis.get_instructions(f):
        if ins.opname == "CACHE":
            continue
        arg = ins.argrepr if ins.argrepr else ("" if ins.arg is None else str(ins.arg))
        lines.append(("%s %s" % (ins.opname, arg)).rstrip())
    return lines


def all_listings():
    out = []
    for f in FUNCS:
        out.append("# " + f.__name__)
        out.extend(listing(f))
    return "\n".join(out) + "\n"


def pinned():
    with open(PINS) as fh:
        text = fh.read()
    parts, name = {}, None
    for line in text.splitlines():
        if line.startswith("# "):
            name = line[2:]
            parts[name] = []
        else:
            parts[name].append(line)
    return parts


@pytest.mark.parametrize("f", FUNCS, ids=lambda f: f.__name__)
def test_code_generation_is_the_pinned_one(f):
    assert listing(f) == pinned()[f.__name__], (
        "CPython %s emits other code for %s: check it with dis and regenerate %s"
        % (sys.version.split()[0], f.__name__, PINS))


def test_pinned_kernels_run(rng):
    a = rng.random(8) + 0.1
    for f, args, want in [
            (loop_break, (8,), 0.0),
            (small_ints_and_consts, (), None),
            (slices_and_subscripts, (), None),
            (tuples_and_unpack, (), None),
            (assert_and_calls, (3,), None),
            (while_and_bools, (8,), 8)]:
        out = np.full(4, np.nan)
        ref = np.full(4, np.nan)
        gpu.jit(f)[1, 1](out, a, *args)
        f(ref, a.copy(), *args)
        np.testing.assert_array_equal(out, ref)
        if want is not None:
            assert out[0] == want


if __name__ == "__main__":
    with open(PINS, "w") as fh:
        fh.write(all_listings())
    print("wrote", PINS)
