"""numba's performance warnings on a real GPU: a grid of fewer than 128 blocks
(config.CUDA_LOW_OCCUPANCY_WARNINGS) and a host array copied to the device and back
(config.CUDA_WARN_ON_IMPLICIT_COPY), each at the launch's line in the user's code.
Skipped as a whole without a CUDA driver and device."""
import inspect
import warnings

import numpy as np
import pytest

import gpujit as gpu
from gpujit import _core, config

pytestmark = pytest.mark.skipif(not _core.is_available(), reason="no CUDA driver or device")
rng = np.random.default_rng()
OCCUPANCY = "Grid size %d will likely result in GPU under-utilization due to low occupancy."
COPY = "Host array used in CUDA kernel will incur copy overhead to/from device."


@pytest.fixture(autouse=True)
def cuda_target():
    _core.set_target("cuda")
    # numba's defaults, as left (not given): the GPU warns (tests/conftest.py restores them)
    config.CUDA_LOW_OCCUPANCY_WARNINGS = 1
    config.CUDA_WARN_ON_IMPLICIT_COPY = 1
    config.DISABLE_PERFORMANCE_WARNINGS = 0
    config._occupancy_given = False
    yield
    _core.set_target(None)


@gpu.jit
def add1(a):
    i = gpu.grid(1)
    if i < a.size:
        a[i] += 1


def here():
    return inspect.currentframe().f_back.f_lineno + 1


def recorded(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fn()
    return [(str(w.message), w.filename, w.lineno) for w in rec if issubclass(w.category, gpu.PerformanceWarning)]


def test_low_occupancy():
    d = gpu.to_device(np.zeros(128 * 32, np.float32))
    line = here()
    got = recorded(lambda: add1[1, 32](d))
    assert got == [(OCCUPANCY % 1, __file__, line)]
    line = here()
    got = recorded(lambda: add1[(8, 4, 3), 32](d))
    assert got == [(OCCUPANCY % 96, __file__, line)]
    for g in (128, (8, 4, 4), 1000):
        assert recorded(lambda: add1[g, 32](d)) == []
    config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
    assert recorded(lambda: add1[1, 32](d)) == []
    config.CUDA_LOW_OCCUPANCY_WARNINGS = 1
    config.DISABLE_PERFORMANCE_WARNINGS = 1
    assert recorded(lambda: add1[1, 32](d)) == []
    config.DISABLE_PERFORMANCE_WARNINGS = 0
    assert [m for m, _, _ in recorded(lambda: add1[1, 32](d))] == [OCCUPANCY % 1]


def test_implicit_copy():
    n = 128 * 64
    h = rng.random(n).astype(np.float32)
    want = h + 1
    line = here()
    got = recorded(lambda: add1[128, 64](h))
    assert got == [(COPY, __file__, line)]
    np.testing.assert_array_equal(h, want)      # copied back
    for make in (lambda a: gpu.to_device(a), lambda a: gpu.In(a), lambda a: gpu.mapped_array_like(a),
                 lambda a: gpu.managed_array(a.shape, a.dtype)):
        assert recorded(lambda: add1[128, 64](make(h))) == []
    p = gpu.pinned_array(n, np.float32)
    p[:] = h
    assert [m for m, _, _ in recorded(lambda: add1[128, 64](p))] == [COPY]
    np.testing.assert_array_equal(p, want + 1)
    config.CUDA_WARN_ON_IMPLICIT_COPY = 0
    assert recorded(lambda: add1[128, 64](h)) == []
    config.CUDA_WARN_ON_IMPLICIT_COPY = 1
    config.DISABLE_PERFORMANCE_WARNINGS = 1
    assert recorded(lambda: add1[1, 64](h)) == []


def test_implicit_copy_as_an_error_stops_the_launch():
    h = np.zeros(128 * 32, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpu.PerformanceWarning)
        with pytest.raises(gpu.PerformanceWarning, match="Host array used in CUDA kernel"):
            add1[128, 32](h)
    assert not h.any()


def test_ufunc_copy_warns_at_the_callers_line():
    @gpu.vectorize(["float32(float32)"], target="cuda")
    def twice(x):
        return 2 * x
    x = rng.random(1 << 20).astype(np.float32)
    line = here()
    got = recorded(lambda: twice(x))
    assert got and all(g == (COPY, __file__, line) for g in got)
