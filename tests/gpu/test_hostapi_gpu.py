"""numba's host API on a real GPU: device-array layouts and copies in device
memory, the driver module's transfers on device and pinned memory, contexts,
gpus, the per-thread default stream, and the PTX of launched kernels.
Skipped as a whole without a CUDA driver and device."""
import numpy as np
import pytest

from conftest import poisoned, random_array  # noqa: E402
import gpujit as gpu
from gpujit import _core
from gpujit.cudadrv import devicearray as nda
from gpujit.cudadrv import driver

pytestmark = pytest.mark.skipif(not _core.is_available(), reason="no CUDA driver or device")


@pytest.fixture(autouse=True)
def cuda_target():
    _core.set_target("cuda")
    yield
    _core.set_target(None)


@gpu.jit
def bump(x):
    i, j = gpu.grid(2)
    if i < x.shape[0] and j < x.shape[1]:
        x[i, j] += 1


def test_layouts_in_device_memory(rng):
    h = np.asfortranarray(random_array(rng, (37, 21), np.float64))
    d = gpu.to_device(h)
    assert d.strides == h.strides and d.is_f_contiguous() and not d.is_c_contiguous()
    bump[(2, 1), (32, 32)](d)
    got = d.copy_to_host()
    assert got.flags.f_contiguous
    np.testing.assert_array_equal(got, h + 1)
    b = np.broadcast_to(random_array(rng, (5, 1), np.int32), (5, 9))
    db = gpu.to_device(b)
    assert db.strides == b.strides
    np.testing.assert_array_equal(db.copy_to_host(), b)
    new = random_array(rng, (37, 21), np.float64)
    d.copy_to_device(new)
    np.testing.assert_array_equal(d.copy_to_host(), new)
    with pytest.raises(ValueError, match="incompatible strides"):
        d.copy_to_device(gpu.to_device(np.ascontiguousarray(new)))
    v = gpu.to_device(random_array(rng, (4, 8), np.int16))
    np.testing.assert_array_equal(v.view("i4").copy_to_host(), v.copy_to_host().view("i4"))


def test_driver_transfers(rng):
    h = random_array(rng, 64, np.uint8)
    mem = gpu.current_context().memalloc(64)
    driver.host_to_device(mem, h, 64)
    back = poisoned(64, np.uint8)
    driver.device_to_host(back, mem, 64)
    np.testing.assert_array_equal(back, h)
    driver.device_memset(mem, 7, 32)
    driver.device_to_host(back, mem, 64)
    np.testing.assert_array_equal(back, np.concatenate([np.full(32, 7, np.uint8), h[32:]]))
    host = gpu.current_context().memhostalloc(64, mapped=True)
    a = np.ndarray(64, np.uint8, buffer=host)
    driver.device_memset(host, 0xAB, 64)
    assert (a == 0xAB).all()
    m = gpu.mapped_array(16, dtype=np.uint32)
    m.fill(5)
    driver.device_memset(m, 0, driver.device_memory_size(m))
    assert (m == 0).all()
    d = gpu.to_device(h)
    d2 = gpu.device_array_like(d)
    driver.device_to_device(d2, d, 64)
    np.testing.assert_array_equal(d2.copy_to_host(), h)


def test_contexts_gpus_streams(rng):
    ctx = gpu.current_context()
    free, total = ctx.get_memory_info()
    assert 0 < free <= total and ctx.device.id == gpu.gpus.current.id
    assert len(gpu.gpus) == _core.device_count()
    with gpu.gpus[0]:
        x = gpu.to_device(random_array(rng, 10, np.int64))
    for s in (gpu.per_thread_default_stream(), gpu.legacy_default_stream(), gpu.stream()):
        with s.auto_synchronize():
            y = gpu.device_array_like(x, stream=s)
            y.copy_to_device(x, stream=s)
        np.testing.assert_array_equal(y.copy_to_host(), x.copy_to_host())
    assert gpu.is_supported_version()
    assert nda.is_cuda_ndarray(x)


def test_inspect_asm_of_launched_kernel():
    bump[(1, 1), (4, 4)](gpu.device_array((4, 4)))
    ptxs = bump.inspect_asm()   # every signature compiled so far (other tests launch it too)
    assert ptxs and all(".entry" in ptx for ptx in ptxs.values())
