"""The IR verifier (src/verify.c): after build_ir and after infer_types it
checks locations, operands, terminators and types. The suite runs with it on
(conftest.py); here: real kernels pass it and it is seen to run, "verify" turns
on no dumps, and each broken invariant is an InternalCompilerError that names
the pass and the instruction -- never a crash."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import gpujit as gpu

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_python(prog, debug):
    env = dict(os.environ, GPUJIT_DEBUG=debug)
    # the gpujit this test imported (the sanitizer run's copy is not the checkout's)
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(gpu.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([pkg_root, ROOT, env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-c", prog], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def test_the_examples_pass_the_verifier():
    prog = """if 1:
        import importlib.util, os
        for f in sorted(os.listdir("examples")):
            if f.endswith(".py") and f != "dask_saxpy.py":    # a cluster: tests/test_dask.py runs it
                spec = importlib.util.spec_from_file_location("ex_" + f[:-3], os.path.join("examples", f))
                m = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(m)
                m.main()
    """
    r = run_python(prog, "verify,time")
    assert r.stdout.count(": OK") == len([f for f in os.listdir(os.path.join(ROOT, "examples"))
                                          if f.endswith(".py") and f != "dask_saxpy.py"])
    compiles = len(re.findall(r"^== compile ", r.stderr, re.M))
    assert compiles >= 8
    # its stage is in the column after both passes of every compilation
    assert len(re.findall(r'^  verify_ir\(c, "build_ir"\)\s', r.stderr, re.M)) == compiles
    assert len(re.findall(r'^  verify_ir\(c, "infer_types"\)\s', r.stderr, re.M)) == compiles


def test_verify_alone_dumps_nothing():
    r = run_python("""if 1:
        import gpujit as gpu
        def k(a):
            a[0] = a[1] + 1.0
        gpu._core.compile(k.__code__, k.__globals__, None, "void(float64[::1])", target="cpu")
        gpu._core.compile(k.__code__, k.__globals__, None, "void(float64[::1])", target="cuda")
    """, "verify")
    assert r.stderr == ""


def helper(x, y):
    if x > y:
        return x - y
    return y - x


def sample(a, out):
    i = gpu.grid(1)
    if i < a.size:
        s = 0.0
        for j in range(3):
            s += helper(a[i], float(j))
        out[i] = s


SIG = "void(float64[::1], float64[::1])"


def test_a_kernel_with_a_device_function_passes(rng):
    a = rng.standard_normal(200)
    out = np.full(200, np.nan)
    gpu.jit(sample)[4, 64](a, out)
    want = sum(np.abs(a - j) for j in range(3))
    np.testing.assert_allclose(out, want, rtol=1e-13)
    # the hook verifies the IR before it breaks anything: reaching the unknown name means
    # the kernel's IR, typed, passed
    with pytest.raises(ValueError, match="no invariant 'nothing'"):
        gpu._core._verify_selftest(sample.__code__, sample.__globals__, SIG, "nothing")


@pytest.mark.parametrize("invariant, message", [
    ("location", r"%\d+ = \w+ in block 0 of sample: no source location"),
    ("type", r"%\d+ = \w+ in block 0 of sample: a value with no type"),
    ("operand", r"%\d+ = \w+ in block 0 of sample: operand 0 is missing"),
    ("foreign", r"%\d+ = \w+ in block 0 of sample: operand 0 is not defined in this function"),
    ("terminator", r"%\d+ = \w+ in block 0 of sample: the block does not end in a terminator"),
    ("early-terminator", r"%\d+ = (br|condbr|ret) in block 0 of sample: a terminator before the block's end"),
])
def test_a_broken_invariant_is_an_internal_error(invariant, message):
    assert "verify" in os.environ["GPUJIT_DEBUG"].split(",")  # conftest.py: the verifier is on
    with pytest.raises(gpu.InternalCompilerError) as e:
        gpu._core._verify_selftest(sample.__code__, sample.__globals__, SIG, invariant)
    msg = str(e.value)
    assert "internal compiler error: IR verifier, after verify_break: " in msg
    assert re.search(message, msg), msg



@pytest.mark.parametrize("debug", ["", "ir,types"])
def test_the_verifier_runs_only_when_asked_or_in_a_debug_build(debug):
    r = run_python("""if 1:
        import gpujit as gpu, tests.test_verify as t
        try:
            print(gpu._core._verify_selftest(t.sample.__code__, t.sample.__globals__, t.SIG, "operand"))
        except gpu.InternalCompilerError as e:
            print("raised:", e)
    """, debug)
    want = "raised: " if gpu._core._verify_always else "None"
    assert r.stdout.startswith(want), r.stdout
