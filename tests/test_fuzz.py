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

import pytest

import gpujit as gpu

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz"))
import fuzz  # noqa: E402

SEED = 0
COUNT = int(os.environ.get("GJ_FUZZ_COUNT", "2000"))
JOBS = int(os.environ.get("GJ_FUZZ_JOBS", "2"))


def test_fuzz_fixed_seed():
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
    for x, y in zip(ia, ib):
        assert (x == y).all()
