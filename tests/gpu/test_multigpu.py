"""Several GPUs in one process: arrays and launches bound to their device, copies
between devices, and one thread per GPU. Skipped with fewer than two CUDA devices."""
import threading

import numpy as np
import pytest

import gpujit as gpu
from gpujit import _core

pytestmark = pytest.mark.skipif(not _core.is_available() or _core.device_count() < 2,
                                reason="needs two CUDA devices")

rng = np.random.default_rng()


@pytest.fixture(autouse=True)
def cuda_target():
    _core.set_target("cuda")
    prev = _core.current_device()
    yield
    _core.select_device(prev)
    _core.set_target(None)


@gpu.jit
def saxpy(out, a, x, y):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def run_saxpy(n=100003):
    x, y = rng.random(n), rng.random(n)
    dx, dy = gpu.to_device(x), gpu.to_device(y)
    dout = gpu.to_device(np.full(n, np.nan))
    saxpy[(n + 255) // 256, 256](dout, 2.5, dx, dy)
    np.testing.assert_allclose(dout.copy_to_host(), 2.5 * x + y, rtol=1e-15)
    return dout


def test_each_device_runs_a_kernel_on_its_own_arrays():
    for d in range(_core.device_count()):
        with gpu.gpus[d]:
            assert _core.current_device() == d
            assert run_saxpy()._device == d


def test_a_launch_with_another_devices_array_is_a_value_error():
    with gpu.gpus[0]:
        x = gpu.to_device(np.ones(64))
    with gpu.gpus[1]:
        out = gpu.device_array(64)
        with pytest.raises(ValueError, match="device 0"):
            saxpy[1, 64](out, 1.0, x, x)


@pytest.mark.parametrize("on_stream", [False, True])
def test_copy_between_devices(on_stream):
    host = rng.random(1 << 20)
    with gpu.gpus[0]:
        src = gpu.to_device(host)
    with gpu.gpus[1]:
        dst = gpu.to_device(np.full(host.size, np.nan))
        stream = gpu.stream() if on_stream else 0
        dst.copy_to_device(src, stream=stream)
        if on_stream:
            stream.synchronize()
        assert dst._device == 1
        np.testing.assert_array_equal(dst.copy_to_host(), host)
        # and back the other way, into a device that is not current
        src2 = gpu.to_device(host[::-1].copy())
    with gpu.gpus[0]:
        src.copy_to_device(src2)
        np.testing.assert_array_equal(src.copy_to_host(), host[::-1])


def test_threads_drive_different_devices_at_once():
    # the current device is per thread: two threads selecting different devices and
    # launching in a loop never see each other's choice
    errors, barrier = [], threading.Barrier(2)

    def work(d):
        try:
            gpu.select_device(d)
            barrier.wait()
            for _ in range(20):
                assert _core.current_device() == d
                assert run_saxpy(50001)._device == d
        except BaseException as e:  # noqa: BLE001 -- reported below
            errors.append(e)
    ths = [threading.Thread(target=work, args=(d,)) for d in (0, 1)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    assert not errors, errors


def test_a_new_thread_starts_on_device_0():
    gpu.select_device(1)
    seen = []
    t = threading.Thread(target=lambda: seen.append(_core.current_device()))
    t.start()
    t.join()
    assert seen == [0] and _core.current_device() == 1
