"""numba.cuda's host API around the driver: memory manager plugins (EMM), mapped(),
the profiler, runtime / nvvm / devices / driver, cuda_error, KernelRuntimeError, and
numba.cuda.random's helpers. Runs on the target gpujit picks (cpu here, cuda on a GPU)."""
import ctypes
import gc
import weakref

import numpy as np
import pytest

import gpujit as gpu
from gpujit import _core
from gpujit.cudadrv import emm


@gpu.jit
def axpy(out, a, x, y):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def launch_axpy(out, a, x, y):
    axpy[(out.size + 63) // 64, 64](out, a, x, y)


@pytest.fixture
def no_plugin():
    yield
    emm._plugin = None
    emm._instances.clear()
    emm._activate()


class CountingPlugin(gpu.HostOnlyCUDAMemoryManager):
    """Memory from gpujit's own allocator, each call and free recorded."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.initialized = False
        self.sizes = []
        self.live = {}
        self.host_sizes = []
        self.reset_called = False

    def memalloc(self, size):
        if not self.initialized:
            raise RuntimeError("memalloc before initialize")
        alloc = _core.alloc(size)
        key = len(self.sizes)
        self.sizes.append(size)
        self.live[key] = alloc
        live = self.live

        def finalizer():
            del live[key]
        return gpu.MemoryPointer(weakref.proxy(self.context), ctypes.c_void_p(alloc.ptr), size,
                                 finalizer=finalizer)

    def memhostalloc(self, size, mapped=False, portable=False, wc=False):
        self.host_sizes.append(size)
        return super().memhostalloc(size, mapped, portable, wc)

    def initialize(self):
        self.initialized = True

    def get_ipc_handle(self, memory):
        return "handle"

    def get_memory_info(self):
        return gpu.MemoryInfo(free=32, total=64)

    def reset(self):
        super().reset()
        self.reset_called = True

    @property
    def interface_version(self):
        return 1


class BadVersion(CountingPlugin):
    @property
    def interface_version(self):
        return 2


def test_plugin_class_allocates_device_arrays(no_plugin):
    rng = np.random.default_rng()
    n = int(rng.integers(100, 1000))
    x = rng.standard_normal(n)
    y = rng.standard_normal(n)
    gpu.set_memory_manager(CountingPlugin)
    mm = gpu.current_context().memory_manager
    assert isinstance(mm, CountingPlugin) and mm.initialized
    dx, dy = gpu.to_device(x), gpu.to_device(y)
    dout = gpu.device_array(n)
    dout.copy_to_device(np.full(n, np.nan))
    assert mm.sizes == [8 * n] * 3
    assert isinstance(dout.gpu_data, gpu.MemoryPointer)
    launch_axpy(dout, 2.5, dx, dy)
    np.testing.assert_allclose(dout.copy_to_host(), 2.5 * x + y)
    assert len(mm.live) == 3
    del dx, dy, dout
    gc.collect()
    assert not mm.live  # each finalizer ran when its array went


def test_plugin_memory_with_driver_functions(no_plugin):
    from gpujit.cudadrv import driver
    gpu.set_memory_manager(CountingPlugin)
    mp = gpu.current_context().memalloc(64)
    assert isinstance(mp, gpu.MemoryPointer) and driver.is_device_memory(mp)
    assert driver.device_pointer(mp) == mp.device_pointer_value and driver.device_memory_size(mp) == 64
    byte = int(np.random.default_rng().integers(1, 255))
    mp.memset(byte)
    host = np.zeros(64, np.uint8)
    driver.device_to_host(host, mp, 64)
    assert (host == byte).all()
    src = np.random.default_rng().integers(0, 255, 64).astype(np.uint8)
    driver.host_to_device(mp, src, 64)
    driver.device_to_host(host, mp, 64)
    np.testing.assert_array_equal(host, src)


def test_plugin_reports_and_resets(no_plugin, monkeypatch):
    monkeypatch.setattr(_core, "reset", lambda: None)  # keep the device's context for the other tests
    gpu.set_memory_manager(CountingPlugin)
    ctx = gpu.current_context()
    assert ctx.get_memory_info() == (32, 64)
    mm = ctx.memory_manager
    ctx.reset()
    assert mm.reset_called


def test_plugin_pinned_memory(no_plugin):
    rng = np.random.default_rng()
    gpu.set_memory_manager(CountingPlugin)
    mm = gpu.current_context().memory_manager
    shape = (int(rng.integers(2, 20)), 3)
    p = gpu.pinned_array(shape, np.float32)
    if gpu.current_target() == "cuda":  # the cpu target's pinned arrays are NumPy's own
        assert mm.host_sizes == [p.nbytes]
    v = rng.standard_normal(shape).astype(np.float32)
    p[...] = v
    d = gpu.to_device(p)
    np.testing.assert_array_equal(d.copy_to_host(), v)


def test_plugin_instance_on_context(no_plugin):
    ctx = gpu.current_context()
    before = ctx.memory_manager
    mm = CountingPlugin(context=ctx)
    mm.initialize()
    ctx.memory_manager = mm
    try:
        gpu.device_array((4, 5), np.int32)
        assert mm.sizes == [80]
    finally:
        ctx.memory_manager = before
    gpu.device_array(7)
    assert mm.sizes == [80]


def test_plugin_version_checked(no_plugin):
    with pytest.raises(RuntimeError, match="version 2"):
        gpu.set_memory_manager(BadVersion)
    with pytest.raises(TypeError):
        gpu.set_memory_manager(gpu.HostOnlyCUDAMemoryManager)  # abstract: memalloc missing
    with pytest.raises(RuntimeError, match="context"):
        CountingPlugin()


PLUGIN_MODULE = """
import gpujit as gpu
from gpujit import _core

calls = []


class Plugin(gpu.HostOnlyCUDAMemoryManager):
    def memalloc(self, size):
        calls.append(size)
        a = _core.alloc(size)
        return gpu.MemoryPointer(self.context, a.ptr, size, finalizer=a.__repr__)

    def initialize(self):
        pass

    def get_ipc_handle(self, memory):
        pass

    def get_memory_info(self):
        return gpu.MemoryInfo(1, 2)

    @property
    def interface_version(self):
        return 1


_numba_memory_manager = Plugin
"""


def test_plugin_named_by_environment(tmp_path):
    import subprocess
    import sys
    (tmp_path / "myplugin.py").write_text(PLUGIN_MODULE)
    code = ("import numpy as np, gpujit as gpu, myplugin\n"
            "d = gpu.to_device(np.arange(5.0))\n"
            "print(myplugin.calls, d.copy_to_host().sum(), gpu.current_context().get_memory_info())\n")
    env = dict(__import__("os").environ)
    env["PYTHONPATH"] = str(tmp_path) + ":" + env.get("PYTHONPATH", "")
    env["NUMBA_CUDA_MEMORY_MANAGER"] = "myplugin"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[0] == "[40] 10.0 MemoryInfo(free=1, total=2)"
    env["NUMBA_CUDA_MEMORY_MANAGER"] = "no_such_plugin_module"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode != 0 and "Failed to use memory manager from no_such_plugin_module" in r.stderr


def test_memory_pointer():
    freed = []
    mp = gpu.MemoryPointer(None, ctypes.c_void_p(0x1000), 64, finalizer=lambda: freed.append(1))
    assert mp.device_pointer_value == 0x1000 and mp.size == 64 and mp.owner is mp
    v = mp.view(16, 48)
    assert v.device_pointer_value == 0x1010 and v.size == 32 and v.owner is mp
    mp.free()
    assert freed == [1]
    with pytest.raises(RuntimeError):
        mp.free()


def test_mapped_arrays_are_written_in_place():
    rng = np.random.default_rng()
    n = int(rng.integers(50, 500))
    x = rng.standard_normal(n)
    y = rng.standard_normal(n)
    out = np.full(n, np.nan)
    with gpu.mapped(out, x, y) as (dout, dx, dy):
        assert isinstance(dout, gpu.DeviceArray)
        launch_axpy(dout, -1.5, dx, dy)
        gpu.synchronize()
    np.testing.assert_allclose(out, -1.5 * x + y)
    one = np.zeros(3)
    with gpu.mapped(one) as d:
        assert d.shape == (3,)


def test_mapped_refuses_strided():
    with pytest.raises(ValueError):
        with gpu.mapped(np.zeros((4, 4))[:, 1]):
            pass


def test_mempin():
    a = np.arange(16, dtype=np.uint8)
    pm = gpu.current_context().mempin(a, a.ctypes.data, a.nbytes, mapped=True)
    assert isinstance(pm, gpu.MappedMemory) and pm.host_pointer == a.ctypes.data and pm.size == 16
    pm.free()


def test_profiler_calls():
    gpu.profile_start()
    gpu.profile_stop()
    with gpu.profiling():
        gpu.device_array(4)


def test_runtime_nvvm_devices_driver():
    assert gpu.nvvm.is_available()
    ccs = gpu.nvvm.get_supported_ccs()
    assert (9, 0) in ccs and list(ccs) == sorted(ccs)
    if gpu._core.is_available():   # a GPU
        assert gpu.runtime.get_version() == gpu.driver_version()
        assert gpu.cuda_error() is None
    else:
        with pytest.raises(gpu.CudaSupportError):
            gpu.runtime.get_version()
        assert isinstance(gpu.cuda_error(), str)
    assert gpu.devices.get_context() == gpu.current_context()
    assert gpu.driver.MemoryPointer is gpu.MemoryPointer
    assert gpu.driver.CudaSupportError is gpu.CudaSupportError

    @gpu.require_context
    def f(a, b=2):
        """doc"""
        return a + b
    assert f(1) == 3 and f.__doc__ == "doc"
    assert gpu.implementation == "gpujit"
    assert gpu.config_default_cc in ccs


def test_kernel_runtime_error():
    e = gpu.KernelRuntimeError("boom", tid=(1, 0, 0), ctaid=(2, 0, 0))
    assert isinstance(e, RuntimeError)
    assert e.tid == (1, 0, 0) and e.ctaid == (2, 0, 0) and e.msg == "boom"
    assert "thread=(1, 0, 0) block=(2, 0, 0)" in str(e)


# ---- numba.cuda.random's helpers -------------------------------------------------------

M64 = (1 << 64) - 1


def splitmix(seed):
    z = (seed + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def test_random_helpers():
    from gpujit import random as r

    @gpu.jit
    def k(states, seeds, xs, ks, rot, f64, f32):
        i = gpu.grid(1)
        if i < seeds.size:
            r.init_xoroshiro128p_state(states, i, seeds[i])
            rot[i] = r.rotl(xs[i], ks[i])
            f64[i] = r.uint64_to_unit_float64(xs[i])
            f32[i] = r.uint64_to_unit_float32(xs[i])

    rng = np.random.default_rng()
    n = 37
    seeds = rng.integers(0, 2**63, n, dtype=np.uint64)
    xs = rng.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    ks = rng.integers(1, 64, n).astype(np.uint64)
    states = np.zeros(n, r.xoroshiro128p_dtype)
    rot = np.zeros(n, np.uint64)
    f64 = np.full(n, np.nan)
    f32 = np.full(n, np.nan, np.float32)
    k[1, 64](states, seeds, xs, ks, rot, f64, f32)
    for i in range(n):
        z = splitmix(int(seeds[i]))
        assert list(states[i]) == [z, z]
        x, s = int(xs[i]), int(ks[i])
        assert int(rot[i]) == ((x << s) | (x >> (64 - s))) & M64
        assert f64[i] == (x >> 11) / 2.0**53
        assert f32[i] == np.float32((x >> 11) / 2.0**53)


def test_random_states_cpu_match_device():
    from gpujit import random as r
    rng = np.random.default_rng()
    seed = int(rng.integers(0, 2**40))
    start = int(rng.integers(0, 3))
    n = 5
    host = np.zeros(n, r.xoroshiro128p_dtype)
    r.init_xoroshiro128p_states_cpu(host, seed, start)
    dev = r.create_xoroshiro128p_states(n, seed, subsequence_start=start)
    np.testing.assert_array_equal(host, dev.copy_to_host())
    with pytest.raises(TypeError):
        r.init_xoroshiro128p_states_cpu(np.zeros((4, 2), np.uint64), 1, 0)
