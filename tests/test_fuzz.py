"""A fixed-seed batch of the differential fuzzer (tests/fuzz): 2,000 random kernels, each
run by gpujit (the current target, i.e. the CPU backend on a machine without a GPU) and by
CPython, must agree -- no mismatch, no rejected valid program, no crash, no hang.

Programs run in two worker subprocesses (so a segfault is reported, not fatal), about
two minutes on 2 cores. A failure prints each finding's reproducer; re-run one with
`python3 tests/fuzz/fuzz.py --seed 0 --only K`.
"""
import io
import os
import sys

import numpy as np
import pytest

import gpujit as gpu

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz"))
import fuzz  # noqa: E402

SEED = 0
COUNT = int(os.environ.get("GJ_FUZZ_COUNT", "2000"))
JOBS = int(os.environ.get("GJ_FUZZ_JOBS", "2"))


def test_fuzz_fixed_seed():
    try:
        import ml_dtypes  # noqa: F401 -- the CPython reference of the generator's bfloat16 kernels
    except ImportError:
        pytest.fail("the fuzzer's bfloat16 reference needs ml_dtypes (pip install ml_dtypes)")
    log = io.StringIO()
    target = gpu.current_target()
    tally = fuzz.run(SEED, 0, COUNT, target=target, jobs=JOBS, out=log)
    print(log.getvalue()[-20000:])
    bad = {k: tally[k] for k in ("mismatch", "reject", "crash", "hang", "generror") if tally[k]}
    assert not bad, "fuzz findings %s:\n%s" % (bad, log.getvalue()[-20000:])
    assert tally["ok"] == COUNT


@pytest.mark.parametrize("seed", range(5))
def test_generator_is_deterministic(seed):
    # reproducers rely on program (S, K) always being the same source and inputs
    a, b = fuzz.gen.generate("%d-3" % seed), fuzz.gen.generate("%d-3" % seed)
    assert a.source == b.source
    ia, ib = fuzz.make_inputs(a), fuzz.make_inputs(b)
    assert len(ia) == len(ib)
    for x, y in zip(ia, ib):
        assert np.array_equal(x, y)


@pytest.mark.skipif(not os.path.exists("/usr/lib/llvm-19/bin/llc"), reason="needs LLVM 19's llc")
def test_irhost_tells_a_right_ir_from_a_wrong_one(tmp_path):
    # tests/fuzz/irhost.py runs a GPU kernel's optimised IR on the host: the reproducer of a
    # ptxas bug (finding 9) is right there, and a planted IR bug (smin -> smax) is caught
    import irhost  # noqa: E402
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz", "regressions",
                        "gen5-cuda-mismatch-30-8529.txt")
    assert irhost.run(path) is None
    prog = fuzz.load_reproducer(path)
    ir = irhost.kernel_ir(prog, *fuzz.make_inputs(prog))
    assert "@llvm.smin.i64(" in ir
    bad = tmp_path / "bad.ll"
    bad.write_text(ir.replace("@llvm.smin.i64(", "@llvm.smax.i64("))
    assert irhost.run(path, str(bad)) is not None


@pytest.mark.skipif(gpu._core.is_available(), reason="with a GPU the cuda target runs the programs (the fixed-seed batch)")
def test_cuda_target_without_a_driver_compiles_to_ptx():
    # without a driver `--target cuda` compiles each program to PTX: every valid program
    # must compile (a rejected one is a finding), and nothing is launched
    log = io.StringIO()
    tally = fuzz.run(SEED + 1, 0, 40, target="cuda", jobs=1, out=log)
    assert tally["ok"] == 40 and tally["run"] == 40, log.getvalue()[-5000:]


@pytest.mark.skipif(gpu.current_target() == "cuda" and not gpu.is_available(), reason="runs the kernels")
def test_bounds_checked_programs_raise_where_cpython_does(monkeypatch):
    # a `# bounds-checked` kernel (gen.int_leaf_checked) may index out of range: where
    # CPython raises IndexError the kernel must too, and one that does not is a mismatch
    import dataclasses
    src = ("def kern(out, a, b):\n    %s\n    i = gpu.grid(1)\n"
           "    out[i, 0] = (gpu.int64(i), gpu.int64(a[0]))[%%s]\n" % fuzz.gen.CHECKED_MARK)
    prog = dataclasses.replace(fuzz.gen.generate("0-3"), blocks=1, threads=32, barrier=False, nr=0)
    target = gpu.current_target()
    res = fuzz.check_program(dataclasses.replace(prog, source=src % "i % 2 - 2"), target)
    assert res["status"] == "ok" and not res.get("raised"), res
    res = fuzz.check_program(dataclasses.replace(prog, source=src % "i - 30"), target)
    assert res["status"] == "ok" and res["raised"], res
    res = fuzz.check_program(dataclasses.replace(prog, source=src.replace(fuzz.gen.CHECKED_MARK, "pass") % "i - 30"),
                             target)
    assert res["status"] == "generror", res  # without the mark CPython's IndexError is the generator's
    monkeypatch.setattr(fuzz, "run_gpujit", lambda *args, **kw: True)  # a kernel that never raises
    res = fuzz.check_program(dataclasses.replace(prog, source=src % "i - 30"), target)
    assert res["status"] == "mismatch" and "gpujit did not" in res["detail"], res
