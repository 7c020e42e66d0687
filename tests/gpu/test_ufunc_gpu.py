"""Generated elementwise kernels on a real GPU: blocks of at most 256 threads (measured
faster than the occupancy query's 1024 for memory-bound ufuncs), right results. Skipped
as a whole without a CUDA driver and device."""
import numpy as np
import pytest

import gpujit as gpu
from gpujit import _core, vectorizers

pytestmark = pytest.mark.skipif(not _core.is_available(), reason="no CUDA driver or device")


def test_vectorize_blocks_of_at_most_256_threads():
    _core.set_target("cuda")
    try:
        f = gpu.vectorize("float32(float32, float32, float32)", target="cuda")(lambda a, x, y: a * x + y)
        rng = np.random.default_rng()
        n = int(rng.integers(1 << 20, 1 << 21))
        x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        dx, dy = gpu.to_device(x), gpu.to_device(y)
        out = gpu.to_device(np.full(n, np.nan, np.float32))
        f(np.float32(2.5), dx, dy, out=out)
        np.testing.assert_allclose(out.copy_to_host(), np.float32(2.5) * x + y, rtol=1e-6)
        (plan,) = f._plans.values()
        assert plan.tpb <= vectorizers._GPU_MAX_BLOCK == 256 and plan.blocks * plan.tpb >= n
    finally:
        _core.set_target(None)
