"""The IR as the compiler's debug dump shows it (GPUJIT_DEBUG=ir): operation
names come from src/irops.h, constants print as the values they hold, and the
fields an operation reads are its own (an unpacking's count, a constant's
uint64-ness) -- checked through what compiles, what raises and what runs."""
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpujit as gpu

IROPS = os.path.join(os.path.dirname(__file__), "..", "src", "irops.h")


def op_spellings():
    """The spelling column of src/irops.h."""
    with open(IROPS) as f:
        return set(re.findall(r'^IR_OP\(\s*\w+,\s*"(\w+)"', f.read(), re.M))


def dump_ir(source, sig):
    """Compile `source`'s kernel `k` for the CPU in a fresh interpreter with GPUJIT_DEBUG=ir
    and return the dump it writes to stderr."""
    prog = textwrap.dedent("""
        import gpujit as gpu
        %s
        gpu._core.compile(k.__code__, k.__globals__, None, %r, target="cpu")
    """) % (textwrap.dedent(source), sig)
    env = dict(os.environ, GPUJIT_DEBUG="ir")
    r = subprocess.run([sys.executable, "-c", prog], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stderr


def test_dump_names_every_op_from_the_list():
    names = op_spellings()
    assert {"const", "store", "load", "binop", "condbr", "br", "ret", "call", "setitem"} <= names
    dump = dump_ir("""
        def k(a, n):
            p = (n, n + 1)
            i, j = p
            for t in range(i):
                if t < j:
                    a[t] = a[t] * 2.0
    """, "void(float64[::1], int64)")
    ops = re.findall(r"^  %\d+ = (\w+)", dump, re.M)
    assert ops, dump
    assert set(ops) <= names, set(ops) - names
    assert {"tuple_get", "get_iter", "iter_next", "iter_valid", "condbr", "setitem", "ret"} <= set(ops)
    # every instruction carries a line of the kernel
    assert all(int(l) > 0 for l in re.findall(r"; line (-?\d+)$", dump, re.M))


def test_uint64_constant_prints_and_types_as_uint64(rng):
    dump = dump_ir("""
        def k(a):
            a[0] = a[0] + 18446744073709551615
    """, "void(uint64[::1])")
    assert "18446744073709551615" in dump
    assert "-1 " not in dump and not dump.rstrip().endswith("-1")

    @gpu.jit
    def add_max(a, out):
        i = gpu.grid(1)
        if i < a.size:
            out[i] = a[i] + 18446744073709551615   # uint64 + uint64: wraps, stays uint64

    a = rng.integers(0, 2**64 - 1, 100, dtype=np.uint64, endpoint=True)
    out = np.zeros(100, np.uint64)
    add_max[1, 128](a, out)
    np.testing.assert_array_equal(out, a + np.uint64(2**64 - 1))


def test_unpacking_counts_its_targets(rng):
    @gpu.jit
    def swap3(a, out):
        i = gpu.grid(1)
        if i < a.shape[0]:
            x, y, z = a[i, 0], a[i, 1], a[i, 2]
            out[i, 0], out[i, 1], out[i, 2] = z, x, y

    a = rng.standard_normal((50, 3))
    out = np.full((50, 3), np.nan)
    swap3[1, 64](a, out)
    np.testing.assert_array_equal(out, a[:, [2, 0, 1]])

    def bad(a):
        x, y = (a[0], a[1], a[2])
        a[0] = x + y

    with pytest.raises(gpu.TypingError, match="cannot unpack 3 values into 2 variables"):
        gpu.compile_ptx(bad, "void(float64[::1])")
