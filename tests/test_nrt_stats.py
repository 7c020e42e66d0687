"""numba's NRT statistics (gpujit.memory_management.nrt.rtsys): gpujit kernels never
allocate on the device, so a kernel run leaves every counter at zero."""
import numpy as np

import gpujit as gpu
from gpujit import config
from gpujit.memory_management.nrt import rtsys


def test_counters_stay_zero_across_a_kernel_with_reductions(rng):
    @gpu.jit
    def k(out, a):
        out[0] = np.sum(a)
        out[1] = a.max()

    a = rng.standard_normal(37)
    out = np.full(2, np.nan)
    rtsys.memsys_enable_stats()
    assert rtsys.memsys_stats_enabled()
    before = rtsys.get_allocation_stats()
    k[1, 1](out, a)
    after = rtsys.get_allocation_stats()
    rtsys.memsys_disable_stats()
    assert not rtsys.memsys_stats_enabled()
    np.testing.assert_allclose(out, [a.sum(), a.max()])
    assert before == after == (0, 0, 0, 0)
    assert after.alloc == after.free == after.mi_alloc == after.mi_free == 0


def test_nrt_setting_is_accepted():
    old = config.CUDA_ENABLE_NRT
    try:
        config.CUDA_ENABLE_NRT = True
        assert config.CUDA_ENABLE_NRT
    finally:
        config.CUDA_ENABLE_NRT = old
