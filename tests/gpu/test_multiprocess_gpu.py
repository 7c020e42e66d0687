"""Processes on a real GPU: a child forked after CUDA was initialised gets CudaDriverError at
its first CUDA call (never a hang); spawned workers use the GPU, kernels pickled by value.
Skipped without a CUDA driver and device."""
import concurrent.futures
import multiprocessing as mp

import numpy as np
import pytest

import gpujit as gpu
from gpujit import _core

pytestmark = pytest.mark.skipif(not _core.is_available(), reason="no CUDA driver or device")


def _to_device_sum(x):
    return float(gpu.to_device(x).copy_to_host().sum())


def test_fork_after_init_raises():
    from gpujit.cudadrv.error import CudaDriverError
    _core.set_target("cuda")
    try:
        gpu.current_context()
        gpu.to_device(np.arange(3))              # the driver is in use before the fork
        with concurrent.futures.ProcessPoolExecutor(1, mp_context=mp.get_context("fork")) as ex:
            fut = ex.submit(gpu.to_device, np.arange(4))
            with pytest.raises(CudaDriverError, match="CUDA initialized before forking"):
                fut.result(timeout=120)
    finally:
        _core.set_target(None)


def test_spawn_works():
    x = np.random.default_rng().integers(0, 1000, 100).astype(np.float64)
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=mp.get_context("spawn")) as ex:
        assert ex.submit(_to_device_sum, x).result(timeout=300) == x.sum()
