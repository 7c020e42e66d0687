"""Variables assigned once, in a function's first block, before any read there, are lowered
to their value (no stack slot); the others keep theirs. The results must not change, whatever
the variable's assignments and reads look like."""
import numpy as np

import gpujit as gpu
from conftest import poisoned, random_array
from gpujit.types import float64, int64, void


def mixed(x, out, n):
    i = gpu.grid(1)  # once
    a = x[i] * 2.0  # once, read in a loop and after it
    s = 0.0  # assigned again in the loop
    b = 1.0
    b = b + a  # twice in the first block
    for k in range(n):  # the iterator's stack slot: once
        s += a * k + b
        if k % 3 == 0:
            a2 = a + s  # once, in a later block, read in another
            if a2 != 0.125:
                s -= a2 * 0.5
            t = s * 0.25  # once, in a later block, read in it
            s += t
    n = n + 1  # an argument assigned again
    out[i] = s + a + b + n


def mixed_ref(x, n):
    out = np.empty_like(x)
    for i in range(x.size):
        a = x[i] * 2.0
        s = 0.0
        b = 1.0 + a
        for k in range(n):
            s += a * k + b
            if k % 3 == 0:
                a2 = a + s
                if a2 != 0.125:
                    s -= a2 * 0.5
                s += s * 0.25
        out[i] = s + a + b + (n + 1)
    return out


def test_variables_assigned_once_and_more(rng):
    x = random_array(rng, 257, np.float64)
    for n in (0, 1, 7):
        k = gpu.jit(void(float64[::1], float64[::1], int64))(mixed)
        out = poisoned(x.size, np.float64)
        k[1, x.size](x, out, n)
        np.testing.assert_allclose(out, mixed_ref(x, n), rtol=1e-12)


def counter(out):
    # the first block is the loop's header: a read there precedes the assignment
    i = 0
    while True:
        out[i] = i * i
        i += 1
        if i >= out.size:
            break


def test_loop_back_to_the_first_block():
    out = poisoned(11, np.int64)
    gpu.jit(counter)[1, 1](out)
    np.testing.assert_array_equal(out, np.arange(11) ** 2)


def test_no_slot_for_a_variable_assigned_once(capfd, monkeypatch):
    monkeypatch.setenv("GPUJIT_DEBUG", "llvm")
    gpu.compile_ptx(mixed, void(float64[::1], float64[::1], int64))
    ir = capfd.readouterr().err
    assert "== LLVM IR of mixed (before optimisation)" in ir
    allocas = [ln.split("=")[0].strip() for ln in ir.splitlines() if " = alloca " in ln]
    assert "%s" in allocas and "%a2" in allocas  # assigned in a loop; assigned in a later block
    for name in ("%i", "%a", "%x", "%out", "%t"):
        assert name not in allocas
