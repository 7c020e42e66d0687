"""CUDA graphs on a real GPU: the cpu-target tests of tests/test_graph.py on the cuda target
(stream capture, cuGraphLaunch, cuGraphExecKernelNodeSetParams), the driver's own capture
errors mapped to GraphCaptureError, pageable copies, and capture on CuPy's and PyTorch's
streams. A watchdog ends the process with a traceback if anything hangs.
Skipped as a whole without a CUDA driver and device."""
import faulthandler
import time

import numpy as np
import pytest

import gpujit as gpu
from gpujit import _core
from conftest import poisoned, random_array
# the target-independent tests, run here on the cuda target
from test_graph import (test_capture_runs_nothing_then_replays, test_thousand_launches_replayed,  # noqa: F401
                        test_update_arguments, test_copies_are_captured,
                        test_exception_in_block_discards_the_capture, test_compile_error_inside_capture,
                        test_synchronize_inside_capture, test_launch_on_another_stream,
                        test_legacy_default_stream_during_capture, test_what_a_capture_cannot_hold,
                        test_bad_graph_arguments, test_close_and_repr, no_capture_left,
                        axpy, incr, scale, blocks)

pytestmark = pytest.mark.skipif(not _core.is_available(), reason="no CUDA driver or device")

WATCHDOG_S = 300  # no test here takes more than seconds: a hang is a failure, with tracebacks


@pytest.fixture(autouse=True)
def cuda_target():
    _core.set_target("cuda")
    faulthandler.dump_traceback_later(WATCHDOG_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()
    _core.set_target(None)


def test_nodes_are_the_drivers():
    s = gpu.stream()
    x = gpu.to_device(np.ones(64))
    with gpu.graph(s) as g:
        for _ in range(3):
            scale[1, 64, s](x, 2.0)
    assert all(n._node for n in g.nodes) and len({n._node for n in g.nodes}) == 3
    assert _core._graph_node_count(g._device, g._graph) == 3
    g.launch()
    s.synchronize()
    np.testing.assert_array_equal(x.copy_to_host(), 8.0)


def test_update_one_node_of_many(rng):
    n = 256
    s = gpu.stream()
    cs = [gpu.to_device(np.zeros(n, np.int64)) for _ in range(2)]
    with gpu.graph(s) as g:
        for _ in range(1000):
            incr[blocks(n), 64, s](cs[0])
    i = int(rng.integers(0, 1000))
    g.update(i, cs[1])
    g.launch()
    s.synchronize()
    np.testing.assert_array_equal(cs[0].copy_to_host(), 999)
    np.testing.assert_array_equal(cs[1].copy_to_host(), 1)


def test_driver_capture_error_is_mapped():
    """An event recorded inside the capture cannot be queried until it ends: the driver's
    CUDA_ERROR_CAPTURED_EVENT (or another capture code) comes back as GraphCaptureError, and
    the failed capture is discarded."""
    s = gpu.stream()
    ev = gpu.event()
    x = gpu.to_device(np.ones(4))
    with pytest.raises(gpu.GraphCaptureError) as info:
        with gpu.graph(s):
            scale[1, 32, s](x, 2.0)
            ev.record(s)
            ev.query()
    print("driver said:", info.value)
    assert 900 <= info.value.code <= 908 and info.value.name.startswith("CUDA_ERROR_")
    assert not _core._graph_capturing()
    s.synchronize()
    np.testing.assert_array_equal(x.copy_to_host(), 1.0)


def test_pageable_copy_in_capture(rng):
    """A copy into pageable host memory: captured (replays fill the array) or refused with
    GraphCaptureError, depending on the driver; never a hang or a crash."""
    n = 100
    s = gpu.stream()
    h = random_array(rng, n, np.int32)
    d = gpu.to_device(h)
    try:
        with gpu.graph(s) as g:
            incr[blocks(n), 64, s](d)
            fresh = d.copy_to_host(stream=s)
    except gpu.GraphCaptureError as e:
        print("pageable copy refused:", e)
        return
    g.launch()
    s.synchronize()
    np.testing.assert_array_equal(fresh, h + 1)
    print("pageable copy captured")


def test_cupy_stream_capture(rng):
    cupy = pytest.importorskip("cupy")
    n = int(rng.integers(100, 5000))
    cs = cupy.cuda.Stream(non_blocking=True)
    hx, hy = random_array(rng, n, np.float64), random_array(rng, n, np.float64)
    x, y = cupy.asarray(hx), cupy.asarray(hy)
    out = cupy.asarray(poisoned(n, np.float64))
    cupy.cuda.Device().synchronize()
    with gpu.graph(cs) as g:  # CuPy's stream object
        axpy[blocks(n), 64, cs.ptr](out, 2.0, x, y)
    assert np.isnan(cupy.asnumpy(out)).all()
    g.launch()
    cs.synchronize()
    np.testing.assert_allclose(cupy.asnumpy(out), 2.0 * hx + hy, rtol=1e-13)
    # with CuPy's current stream the capture stream too
    out2 = cupy.asarray(poisoned(n, np.float64))
    cupy.cuda.Device().synchronize()  # cs does not wait for the legacy stream
    with cs:
        with gpu.graph(cs.ptr) as g2:
            axpy[blocks(n), 64, cs.ptr](out2, -1.0, x, y)
        g2.launch(cs)
    cs.synchronize()
    np.testing.assert_allclose(cupy.asnumpy(out2), -hx + hy, rtol=1e-13)


def test_torch_stream_capture(rng):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    n = int(rng.integers(100, 5000))
    ts = torch.cuda.Stream()
    hx, hy = random_array(rng, n, np.float32), random_array(rng, n, np.float32)
    x, y = torch.from_numpy(hx).cuda(), torch.from_numpy(hy).cuda()
    out = torch.full((n,), float("nan"), device="cuda")
    torch.cuda.synchronize()
    with gpu.graph(ts) as g:  # PyTorch's stream object
        axpy[blocks(n), 64, ts.cuda_stream](out, np.float32(2.0), x, y)
    g.launch()
    ts.synchronize()
    np.testing.assert_allclose(out.cpu().numpy(), np.float32(2.0) * hx + hy, rtol=1e-6, atol=1e-5)


def test_gpujit_launch_inside_torch_graph(rng):
    """PyTorch's own capture (torch.cuda.graph) holds gpujit launches on its stream."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    n = 1000
    c = torch.zeros(n, dtype=torch.int64, device="cuda")
    incr[blocks(n), 64](c)  # warm-up: compiled and loaded outside the capture
    torch.cuda.synchronize()
    tg = torch.cuda.CUDAGraph()
    with torch.cuda.graph(tg):
        st = torch.cuda.current_stream().cuda_stream
        incr[blocks(n), 64, st](c)
        incr[blocks(n), 64, st](c)
    tg.replay()
    tg.replay()
    torch.cuda.synchronize()
    assert (c.cpu().numpy() == 1 + 4).all()


def test_replay_cost_per_kernel():
    """Prints what benchmarks/gpu_bench.py records: a 1,000-launch graph's replay per kernel."""
    s = gpu.stream()
    c = gpu.to_device(np.zeros(32, np.int64))
    with gpu.graph(s) as g:
        for _ in range(1000):
            incr[1, 32, s](c)
    g.upload()
    g.launch()
    s.synchronize()
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(10):
            g.launch()
        s.synchronize()
        best = min(best, (time.perf_counter() - t0) / 10000)
    np.testing.assert_array_equal(c.copy_to_host(), 1000 * 51)
    print("graph replay: %.3f us per kernel" % (best * 1e6))
    assert best < 20e-6
