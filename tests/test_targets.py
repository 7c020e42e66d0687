"""Each target (src/target_*.c) chooses its machine and emits its output; the
pipeline in compile.c does not know which it runs. Checked from outside: the
PTX's target line per compute capability, the host's symbols unique per
process, the NVPTX emit steps as GPUJIT_DEBUG=time reports them, and names."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import gpujit as gpu


def saxpy(a, x, y):
    i = gpu.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


SIG = "void(float32, float32[::1], float32[::1])"


def compile_for(target, **kw):
    return gpu._core.compile(saxpy.__code__, saxpy.__globals__, None, SIG, target=target, **kw)


@pytest.mark.parametrize("cc, sm, version", [((9, 0), "sm_90", "7.8"), ((8, 0), "sm_80", "7.0"),
                                             ((7, 5), "sm_75", "6.4")])
def test_nvptx_machine_follows_the_compute_capability(cc, sm, version):
    k = compile_for("cuda", cc=cc)
    assert k.target == "cuda"
    assert re.search(r"^\.target %s\b" % sm, k.ptx, re.M), k.ptx[:400]
    assert re.search(r"^\.version %s$" % re.escape(version), k.ptx, re.M), k.ptx[:400]
    assert re.search(r"^\.address_size 64$", k.ptx, re.M)
    assert k.symbol == "saxpy" and (".entry saxpy(" in k.ptx)


def test_host_symbols_are_unique_and_the_code_runs(rng):
    k1, k2 = compile_for("cpu"), compile_for("cpu")
    assert k1.target == k2.target == "cpu"
    assert k1.ptx is None
    assert k1.symbol != k2.symbol and k1.symbol.startswith("saxpy_gj")
    x = rng.standard_normal(300).astype(np.float32)
    y = rng.standard_normal(300).astype(np.float32)
    want = 1.5 * x.astype(np.float64) + y   # the kernel may fuse a * x + y into one rounding
    gpu.jit(saxpy)[5, 64](np.float32(1.5), x, y)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


def test_unknown_target_is_a_value_error():
    with pytest.raises(ValueError, match="unknown target 'tpu'"):
        compile_for("tpu")


def stage_report(target):
    prog = ("import gpujit as gpu, tests.test_targets as t\n"
            "gpu._core.compile(t.saxpy.__code__, t.saxpy.__globals__, None, t.SIG, target=%r)\n" % target)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, GPUJIT_DEBUG="time")
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-c", prog], env=env, cwd=root, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return re.findall(r"^  (\S+)\s+[\d.]+ ms$", r.stderr, re.M)


def test_the_pipeline_emits_through_the_target():
    cuda = stage_report("cuda")
    assert cuda[-4:] == ["fix_ir_nvptx(c)", "emit_ptx(c)", "fix_ptx(c)", "c->target->emit(c)"], cuda
    assert cuda.index("make_target_machine(c)") < cuda.index("lower(c)") < cuda.index("optimise(c)")
    cpu = stage_report("cpu")
    assert cpu[-1] == "c->target->emit(c)" and "emit_ptx(c)" not in cpu, cpu
