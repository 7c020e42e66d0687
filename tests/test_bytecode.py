"""Bytecode corner cases: kernels big enough to need EXTENDED_ARG (long jumps,
many constants and locals), generated from source written to a real file so
that their diagnostics can show lines."""
import importlib.util

import numpy as np

import gpujit as gpu
from conftest import assert_same, launch1d, poisoned


def load_kernel(tmp_path, source, name):
    path = tmp_path / ("gen_%s.py" % name)
    path.write_text("import gpujit as gpu\n\n" + source)
    spec = importlib.util.spec_from_file_location("gen_" + name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name), str(path)


def test_long_kernel_extended_arg(tmp_path, rng):
    # 400 distinct constants and a branch jumping over ~1000 instructions
    n = 400
    body = ["def big(out, a):", "    i = gpu.grid(1)", "    if i < out.size:", "        x = a[i]", "        s = 0",
            "        if x > 0:"]
    body += ["            s += x * %d + %d" % (k + 1000, k * 7 + 100000) for k in range(n)]
    body += ["        else:", "            s = -1", "        out[i] = s"]
    big, _ = load_kernel(tmp_path, "\n".join(body) + "\n", "big")
    k = gpu.jit(big)
    a = rng.integers(-100, 100, 128)
    out = poisoned(128, np.int64)
    launch1d(k, 128, out, a)
    want = [sum(int(x) * (k + 1000) + k * 7 + 100000 for k in range(n)) if x > 0 else -1 for x in a]
    assert out.tolist() == want


def test_many_locals(tmp_path, rng):
    n = 300
    body = ["def many(out, a):", "    i = gpu.grid(1)", "    if i < out.size:"]
    body += ["        v%d = a[i] + %d" % (k, k) for k in range(n)]
    body += ["        out[i] = " + " + ".join("v%d" % k for k in range(0, n, 3))]
    many, _ = load_kernel(tmp_path, "\n".join(body) + "\n", "many")
    k = gpu.jit(many)
    a = rng.integers(-100, 100, 64)
    out = poisoned(64, np.int64)
    launch1d(k, 64, out, a)
    assert out.tolist() == [sum(int(x) + k for k in range(0, n, 3)) for x in a]


def test_error_line_after_extended_arg(tmp_path):
    n = 300
    body = ["def bad(out, a):", "    i = gpu.grid(1)", "    s = 0"]
    body += ["    s += a[i] * %d" % (k + 1000) for k in range(n)]
    body += ["    out[i] = [s]"]
    bad, path = load_kernel(tmp_path, "\n".join(body) + "\n", "bad")
    line = 2 + len(body)  # the import line and a blank line come first
    try:
        gpu.compile_ptx(bad, "void(int64[::1], int64[::1])")
    except gpu.UnsupportedError as e:
        assert str(e).startswith("%s:%d:" % (path, line)), str(e)
        assert e.lineno == line
    else:
        raise AssertionError("expected UnsupportedError")


@gpu.jit
def k_deep_while_and_ternary(out, a):
    i = gpu.grid(1)
    if i < out.size:
        x = a[i]
        n = 0
        while (x > 1 if x % 2 == 0 else x > 2) and n < 100:
            x = x // 2 if x % 2 == 0 else 3 * x + 1
            n += 1
        out[i] = n * 1000 + x


def test_conditional_expression_in_loop_condition(rng):
    a = rng.integers(0, 1000, 200)
    out = poisoned(200, np.int64)
    launch1d(k_deep_while_and_ternary, 200, out, a)
    want = []
    for x in map(int, a):
        n = 0
        while (x > 1 if x % 2 == 0 else x > 2) and n < 100:
            x = x // 2 if x % 2 == 0 else 3 * x + 1
            n += 1
        want.append(n * 1000 + x)
    assert out.tolist() == want
