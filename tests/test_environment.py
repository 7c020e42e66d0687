"""GPUJIT_* variables take the usual spellings, and any other value fails with one line that
names the variable, its value and what it takes: at the first compile (a fresh process each,
since the variables are read when first needed) and in gpujit.config.check_environment()."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = """
import numpy as np
import gpujit as gpu

@gpu.jit
def k(a):
    a[3] = 1

big = np.full(8, -1.0)
try:
    k[1, 1](big[:2])  # unchecked, the store lands in big[3]
    print("ran", big[3])
except IndexError:
    print("checked")
"""


def run(**env):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("GPUJIT_", "NUMBA_"))}
    e.update(env, GPUJIT_TARGET=env.get("GPUJIT_TARGET", "cpu"))
    e["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.join(ROOT, "python"), e.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-c", SCRIPT], env=e, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("value,want", [("0", "ran"), ("off", "ran"), ("False", "ran"), ("no", "ran"),
                                        ("1", "checked"), ("ON", "checked"), ("yes", "checked"), ("", "checked")])
def test_boundscheck_spellings(value, want):
    r = run(GPUJIT_CPU_BOUNDSCHECK=value)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == want, (r.stdout, r.stderr)


@pytest.mark.parametrize("var,value,says", [
    ("GPUJIT_CPU_BOUNDSCHECK", "maybe", "use one of 1, true, yes, on (yes) or 0, false, no, off (no)"),
    ("GPUJIT_DEBUG", "bogus", "'bogus' is not one of bytecode, ir, types, llvm, opt, ptx, time, verify, all"),
    ("GPUJIT_DEBUG", "types,bogus", "'bogus' is not one of"),
    ("GPUJIT_PTX_PASSES", "hoist,fast", "'fast' is not one of hoist, hoist-all, shortptr, unroll, mergegep, none"),
    ("GPUJIT_TARGET", "gpu", "use 'cpu' or 'cuda'"),
    ("GPUJIT_CPU_THREADS", "four", "use a positive number of threads"),
    ("GPUJIT_CPU_THREADS", "-2", "use a positive number of threads"),
    ("GPUJIT_CPU_STACK", "12Q", "use a positive number of bytes, K or M allowed"),
    ("GPUJIT_CUDA_LOW_OCCUPANCY_WARNINGS", "maybe", "use one of 1, true"),
    ("GPUJIT_ALWAYS_WARN_UNINIT_VAR", "2", "use one of 1, true"),
    ("GPUJIT_CUDA_ARRAY_INTERFACE_SYNC", "sometimes", "use one of 1, true"),
    ("GPUJIT_COMPILE_NOTICE", "soon", "use a number of seconds"),
])
def test_bad_value_is_one_line(var, value, says):
    r = run(**{var: value})
    assert r.returncode == 1 and r.stdout == "", (r.stdout, r.stderr)
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ValueError: %s=%r" % (var, value)) and says in last, r.stderr


@pytest.mark.parametrize("env", [dict(GPUJIT_DEBUG="TYPES, time"), dict(GPUJIT_PTX_PASSES="none"),
                                 dict(GPUJIT_TARGET="CPU"), dict(GPUJIT_CPU_THREADS="3"),
                                 dict(GPUJIT_CPU_STACK="256k"), dict(NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="off")])
def test_good_values_run(env):
    r = run(**env)
    assert r.returncode == 0 and r.stdout.split()[0] == "checked", (r.stdout, r.stderr)


def test_check_environment(monkeypatch):
    from gpujit import config
    monkeypatch.setenv("GPUJIT_DEBUG", "verify,nonsense")
    with pytest.raises(ValueError, match="GPUJIT_DEBUG='verify,nonsense': 'nonsense' is not one of"):
        config.check_environment()
    monkeypatch.setenv("GPUJIT_DEBUG", "verify")
    monkeypatch.setenv("GPUJIT_CPU_BOUNDSCHECK", "offf")
    with pytest.raises(ValueError, match="GPUJIT_CPU_BOUNDSCHECK='offf'"):
        config.check_environment()
    monkeypatch.setenv("GPUJIT_CPU_BOUNDSCHECK", "off")
    assert config.check_environment() is None
    assert config.parse_flag("X", " Yes ") == 1 and config.parse_flag("X", "OFF") == 0
