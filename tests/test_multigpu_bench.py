"""benchmarks/multigpu_bench.py's N-body step on the current device, with each body's sum split
over 1, 2 and 4 threads (the launch shape that keeps each of several GPUs as full as one), and a
device's share of 2 or 4 devices: checked against a float64 NumPy reference."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import multigpu_bench as mb  # noqa: E402


@pytest.mark.parametrize("ndev,ways", [(1, 1), (1, 2), (2, 2), (4, 4), (2, 1)])
def test_share_matches_reference(ndev, ways):
    n = mb.multiple(ndev, ways) * 2
    pos = np.random.default_rng().random((n, 3), dtype=np.float32)
    shares = []
    for k in range(ndev):          # every share on this one device: the arithmetic is the same
        s = mb.Share(pos, k, ndev, ways)
        s.launch()
        shares.append(s)
    mb.check(pos, shares)


def test_step_time_runs_and_checks():
    n = mb.multiple(1, 2)
    pos = np.random.default_rng().random((n, 3), dtype=np.float32)
    assert mb.step_time([0], pos, 1, ways=2) > 0


def test_bad_body_count_is_a_value_error():
    with pytest.raises(ValueError, match="not a multiple"):
        mb.Share(np.zeros((100, 3), np.float32), 0, 2, 2)
