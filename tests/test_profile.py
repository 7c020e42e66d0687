"""GPUJIT_PROFILE=1 prints at exit, on stderr, a table of the kernels launched: calls, compile
time, total and mean run time, per kernel and signature; profile_start()/profile_stop() delimit
it; a failed launch is counted and its error kept. Unset, nothing is printed. A compile that
runs longer than GPUJIT_COMPILE_NOTICE seconds says what it compiles (0 silences it)."""
import os
import re
import subprocess
import sys
import textwrap

import pytest

import gpujit as gpu

SCRIPT = textwrap.dedent('''
    import numpy as np
    import gpujit as gpu

    @gpu.jit
    def inc(a):
        i = gpu.grid(1)
        if i < a.size:
            a[i] += 1

    @gpu.jit
    def outside(a):
        a[0] = 1

    @gpu.jit
    def bad(a):
        a[9] = 1

    a = np.zeros(1000)
    inc[4, 256](a)                       # before profile_start: not counted
    gpu.profile_start()
    for _ in range(5):
        inc[4, 256](a)
    b = np.zeros(3, np.int32)
    inc[1, 4](b)                         # another signature, compiled inside the window
    try:
        inc[1, 1](b[5:])                 # an empty view: fine; then a failing launch
        bad[1, 1](b)
    except Exception as e:
        print("error kept:", type(e).__name__)
    gpu.profile_stop()
    outside[1, 1](a)                     # after profile_stop: not counted
    assert (a[1:] == 6).all() and a[0] == 1 and (b == 1).all(), (a, b)
    print("done")
''')


def run(**env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("GPUJIT_")}
    e.update(env, GPUJIT_TARGET="cpu")
    e["PYTHONPATH"] = os.path.dirname(os.path.dirname(gpu.__file__)) + os.pathsep + e.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=e, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r


def rows(stderr):
    lines = stderr.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("gpujit profile (GPUJIT_PROFILE)"))
    head = lines[start + 1].split()
    assert head == ["kernel", "signature", "target", "calls", "compile", "s", "total", "ms", "mean", "ms"]
    out = {}
    for ln in lines[start + 2:]:
        name, sig, target, calls, comp, total, mean = ln.split()
        out[(name, sig)] = (target, int(calls), float(comp), float(total), float(mean))
    return out


def test_profile_table():
    r = run(GPUJIT_PROFILE="1")
    assert "done" in r.stdout and "error kept: IndexError" in r.stdout, r.stdout
    table = rows(r.stderr)
    assert "outside" not in {k[0] for k in table}
    target, calls, comp, total, mean = table[("inc", "void(float64[::1])")]
    assert target == "cpu" and calls == 5 and comp == 0.0  # compiled before the window
    assert total > 0 and mean == pytest.approx(total / 5, abs=2e-3)
    target, calls, comp, total, mean = table[("inc", "void(int32[::1])")]
    assert calls == 2 and comp > 0
    assert table[("bad", "void(int32[::1])")][1] == 1


@pytest.mark.parametrize("value", ["", "0", "off"])
def test_no_table_unless_asked(value):
    r = run(GPUJIT_PROFILE=value)
    assert "gpujit profile" not in r.stderr, r.stderr


def test_bad_profile_value_says_so_and_stays_off():
    r = run(GPUJIT_PROFILE="sometimes")
    assert "gpujit: GPUJIT_PROFILE='sometimes': use one of" in r.stderr and "profiling is off" in r.stderr
    assert "gpujit profile" not in r.stderr


def test_long_compile_says_what_it_compiles():
    r = run(GPUJIT_COMPILE_NOTICE="0.000001")
    assert re.search(r"^gpujit: compiling inc\(void\(float64\[::1\]\)\) for the cpu target \(more than 1e-06 s so "
                     r"far; GPUJIT_COMPILE_NOTICE=0 silences this\)$", r.stderr, re.M), r.stderr
    for quiet in ("0", "off", ""):  # "": the default, 3 s, which these small kernels stay under
        assert "gpujit: compiling" not in run(GPUJIT_COMPILE_NOTICE=quiet).stderr
