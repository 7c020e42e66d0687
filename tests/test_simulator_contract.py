"""The simulator's contract where the cpu target was chosen (GPUJIT_TARGET=cpu or
set_target('cpu')): is_available() is True, list_devices(), gpus, get_current_device() and
detect() agree on the one CpuDevice, which has numba's device attributes (upper-case ones
included), and its warp size is the one kernels see. Where the cpu target is only the fallback
for a machine without a GPU, is_available() stays about GPUs."""
import os
import subprocess
import sys

import numpy as np
import pytest

import gpujit as gpu
from gpujit import _core, cudadrv

UPPER = ["MAX_THREADS_PER_BLOCK", "WARP_SIZE", "MULTIPROCESSOR_COUNT", "MAX_SHARED_MEMORY_PER_BLOCK",
         "COMPUTE_CAPABILITY_MAJOR", "COMPUTE_CAPABILITY_MINOR", "MAX_BLOCK_DIM_X", "MAX_BLOCK_DIM_Y",
         "MAX_BLOCK_DIM_Z", "MAX_GRID_DIM_X", "MAX_GRID_DIM_Y", "MAX_GRID_DIM_Z", "TOTAL_CONSTANT_MEMORY",
         "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", "UNIFIED_ADDRESSING", "PCI_BUS_ID", "COOPERATIVE_LAUNCH"]


@pytest.fixture
def chosen_cpu():
    """The cpu target chosen through the API, the choice undone afterwards."""
    gpu.set_target("cpu")
    yield
    gpu.set_target(None)
    cudadrv._cpu_chosen = False
    _core.set_target("cpu")


def test_chosen_cpu_is_a_device(chosen_cpu):
    assert cudadrv.cpu_chosen()
    assert gpu.is_available() is True
    devs = gpu.list_devices()
    assert len(devs) == 1 and len(gpu.gpus) == 1
    dev = gpu.get_current_device()
    assert devs[0] == dev and dev.id == 0 and devs[0].id == 0
    assert gpu.gpus[0].id == 0 and gpu.gpus.current.id == 0
    assert gpu.gpus[0].name == dev.name and gpu.gpus[0].compute_capability == dev.compute_capability
    # the numba idiom that divided by zero with an empty list
    ids = [d.id for d in gpu.list_devices()]
    assert ids == [0] and 64 // len(ids) == 64
    with gpu.gpus[0]:
        assert gpu.get_current_device() == dev


def test_upper_case_attributes(chosen_cpu):
    dev = gpu.get_current_device()
    for name in UPPER:
        assert isinstance(getattr(dev, name), int), name
        assert isinstance(getattr(gpu.gpus[0], name), int), name
    assert dev.MAX_THREADS_PER_BLOCK == dev.max_threads_per_block == 1024
    assert dev.WARP_SIZE == dev.warp_size == 32
    assert dev.MULTIPROCESSOR_COUNT == dev.multiprocessor_count == (os.cpu_count() or 1)
    assert (dev.COMPUTE_CAPABILITY_MAJOR, dev.COMPUTE_CAPABILITY_MINOR) == dev.compute_capability == (9, 0)
    assert (dev.MAX_BLOCK_DIM_X, dev.MAX_BLOCK_DIM_Y, dev.MAX_BLOCK_DIM_Z) == dev.max_block_dim
    assert dev.MAX_SHARED_MEMORY_PER_BLOCK == dev.max_shared_memory_per_block == 48 * 1024
    assert "WARP_SIZE" in dir(dev)
    with pytest.raises(AttributeError, match="NO_SUCH_ATTRIBUTE"):
        dev.NO_SUCH_ATTRIBUTE


def test_warp_size_is_what_kernels_see(chosen_cpu):
    @gpu.jit
    def lanes(out):
        i = gpu.grid(1)
        out[i, 0] = gpu.warpsize
        out[i, 1] = gpu.laneid

    n = 96
    out = np.full((n, 2), -1, np.int32)
    lanes[1, n](out)
    ws = gpu.get_current_device().WARP_SIZE
    assert (out[:, 0] == ws).all()
    np.testing.assert_array_equal(out[:, 1], np.arange(n) % ws)


def test_block_limit_is_the_devices(chosen_cpu):
    """A launch of MAX_THREADS_PER_BLOCK threads runs; one more is refused."""
    @gpu.jit
    def ones(out):
        out[gpu.grid(1)] = 1

    limit = gpu.get_current_device().MAX_THREADS_PER_BLOCK
    out = np.zeros(limit + 1, np.int32)
    ones[1, limit](out)
    assert out[:limit].sum() == limit and out[limit] == 0
    with pytest.raises((ValueError, gpu.LaunchError, gpu.CudaError)):
        ones[1, limit + 1](out)


def test_detect_agrees(chosen_cpu, capsys):
    assert gpu.detect() is True
    text = capsys.readouterr().out
    assert "Found 1 CUDA devices" in text and gpu.get_current_device().name in text
    # what chose the target: this process's set_target call, not GPUJIT_TARGET's absence
    assert "chosen: set_target('cpu')" in text, text


def test_fallback_cpu_is_not_a_gpu():
    """The automatic choice of the cpu target (no GPU): is_available() says whether a GPU
    exists, as numba's is_available() does outside its simulator."""
    if _core.is_available() or os.environ.get("GPUJIT_TARGET"):
        pytest.skip("the cpu target is not the automatic fallback here")
    gpu.set_target(None)
    cudadrv._cpu_chosen = False
    assert gpu.current_target() == "cpu" and not cudadrv.cpu_chosen()
    assert gpu.is_available() is False and gpu.list_devices() == []


def test_environment_choice_in_a_fresh_interpreter():
    code = ("import gpujit as g\n"
            "d = g.get_current_device()\n"
            "assert g.is_available() and g.list_devices() == [d] and len(g.gpus) == 1\n"
            "assert d.WARP_SIZE == 32 and d.COMPUTE_CAPABILITY_MAJOR == 9\n"
            "print('ok')\n")
    env = dict(os.environ, GPUJIT_TARGET="cpu")
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(gpu.__file__)) + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr[-3000:]
