"""CUDA graphs (gpujit.graph): capture, replay, argument updates, copies, and every misuse as a
clear exception. The same tests run on the cpu target (which records and replays) and, in the
GPU run, on the cuda target (stream capture); tests/gpu/test_graph_gpu.py adds what needs a GPU."""
import subprocess
import sys
import os

import numpy as np
import pytest

import gpujit as gpu
from gpujit import _core
from conftest import poisoned, random_array

GraphCaptureError = gpu.GraphCaptureError


@gpu.jit
def scale(x, k):
    i = gpu.grid(1)
    if i < x.size:
        x[i] = x[i] * k


@gpu.jit
def axpy(out, a, x, y):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@gpu.jit
def incr(c):
    i = gpu.grid(1)
    if i < c.size:
        c[i] += 1


def blocks(n, t=64):
    return (n + t - 1) // t


def sync(s):
    s.synchronize()


@pytest.fixture(autouse=True)
def no_capture_left():
    yield
    assert not _core._graph_capturing(), "a test left a capture open"


def test_capture_runs_nothing_then_replays(rng):
    n = int(rng.integers(100, 2000))
    hx, hy = random_array(rng, n, np.float64), random_array(rng, n, np.float64)
    k = float(rng.uniform(0.5, 2.0))
    a = float(rng.uniform(-3, 3))
    s = gpu.stream()
    x, y = gpu.to_device(hx), gpu.to_device(hy)
    out = gpu.to_device(poisoned(n, np.float64))
    with gpu.graph(s) as g:
        scale[blocks(n), 64, s](x, k)
        axpy[blocks(n), 64, s](out, a, x, y)
    # captured, not run
    assert np.isnan(out.copy_to_host()).all()
    np.testing.assert_array_equal(x.copy_to_host(), hx)
    assert [nd.kernel for nd in g.nodes] == [scale, axpy]
    assert g.nodes[1].args[1] == a and g.nodes[0].griddim == (blocks(n), 1, 1)
    g.launch()
    sync(s)
    # the kernel's a * x + y is one fused multiply-add: near cancellation only atol holds
    np.testing.assert_allclose(out.copy_to_host(), a * (hx * k) + hy, rtol=1e-13, atol=1e-14)
    # a replay reruns everything: x is scaled again
    g.launch(s)
    sync(s)
    np.testing.assert_allclose(x.copy_to_host(), hx * k * k, rtol=1e-13)
    np.testing.assert_allclose(out.copy_to_host(), a * (hx * k * k) + hy, rtol=1e-13, atol=1e-14)


def test_thousand_launches_replayed(rng):
    n = int(rng.integers(1, 300))
    s = gpu.stream()
    c = gpu.to_device(np.zeros(n, np.int64))
    with gpu.graph(s) as g:
        for _ in range(1000):
            incr[blocks(n, 32), 32, s](c)
    assert len(g.nodes) == 1000
    np.testing.assert_array_equal(c.copy_to_host(), 0)
    reps = int(rng.integers(1, 4))
    for _ in range(reps):
        g.launch()
    sync(s)
    np.testing.assert_array_equal(c.copy_to_host(), 1000 * reps)


def test_update_arguments(rng):
    n = int(rng.integers(50, 500))
    s = gpu.stream()
    hx, hy, hx2 = (random_array(rng, n, np.float32) for _ in range(3))
    x, y, x2 = gpu.to_device(hx), gpu.to_device(hy), gpu.to_device(hx2)
    out, out2 = gpu.to_device(poisoned(n, np.float32)), gpu.to_device(poisoned(n, np.float32))
    with gpu.graph(s) as g:
        axpy[blocks(n), 64, s](out, np.float32(2.0), x, y)
    g.update(0, out2, np.float32(-1.5), x2, y)
    assert g.nodes[0].args[2] is x2
    g.launch()
    sync(s)
    np.testing.assert_allclose(out2.copy_to_host(), np.float32(-1.5) * hx2 + hy, rtol=1e-6, atol=1e-5)
    assert np.isnan(out.copy_to_host()).all()  # the old output is no longer written
    g.nodes[0].update(out, np.float32(3.0), x, y)  # the node's own method
    g.launch()
    sync(s)
    np.testing.assert_allclose(out.copy_to_host(), np.float32(3.0) * hx + hy, rtol=1e-6, atol=1e-5)
    # an update keeps the argument types (the captured specialisation)
    xd = gpu.to_device(hx.astype(np.float64))
    with pytest.raises(TypeError, match="another specialisation"):
        g.update(0, out, np.float32(1.0), xd, y)
    with pytest.raises(IndexError, match="1 kernel launches"):
        g.update(3, out, np.float32(1.0), x, y)
    # a failed update changed nothing
    g.launch()
    sync(s)
    np.testing.assert_allclose(out.copy_to_host(), np.float32(3.0) * hx + hy, rtol=1e-6, atol=1e-5)


def test_copies_are_captured(rng):
    """Copies read and write their host memory at each replay, at the address captured."""
    n = int(rng.integers(10, 1000))
    s = gpu.stream()
    src = gpu.pinned_array(n, np.float64)
    dst = gpu.pinned_array(n, np.float64)
    src[:] = random_array(rng, n, np.float64)
    dst[:] = np.nan
    d = gpu.device_array(n, np.float64)
    d2 = gpu.device_array(n, np.float64)
    with gpu.graph(s) as g:
        d.copy_to_device(src, stream=s)
        scale[blocks(n), 64, s](d, 2.0)
        d2.copy_to_device(d, stream=s)
        d2.copy_to_host(dst, stream=s)
    assert np.isnan(dst).all()
    for _ in range(2):
        src[:] = random_array(rng, n, np.float64)
        g.launch()
        sync(s)
        np.testing.assert_array_equal(dst, src * 2.0)


@pytest.mark.skipif(_core.get_target() != "cpu", reason="pageable host memory: tests/gpu/test_graph_gpu.py")
def test_copy_to_new_host_array_is_filled_by_replays(rng):
    n = int(rng.integers(10, 1000))
    s = gpu.stream()
    h = random_array(rng, n, np.int32)
    d = gpu.to_device(h)
    with gpu.graph(s) as g:
        incr[blocks(n), 64, s](d)
        fresh = d.copy_to_host(stream=s)  # the array the replays write
    g.launch()
    np.testing.assert_array_equal(fresh, h + 1)
    g.launch()
    np.testing.assert_array_equal(fresh, h + 2)


def test_exception_in_block_discards_the_capture(rng):
    s = gpu.stream()
    x = gpu.to_device(np.ones(8))
    with pytest.raises(ZeroDivisionError):
        with gpu.graph(s) as g:
            scale[1, 32, s](x, 3.0)
            1 / 0
    assert not _core._graph_capturing()
    with pytest.raises(GraphCaptureError, match="discarded"):
        g.launch()
    with pytest.raises(GraphCaptureError, match="captured already"):
        with g:
            pass
    # the stream is usable again, and a new capture on it works
    with gpu.graph(s) as g2:
        scale[1, 32, s](x, 3.0)
    g2.launch()
    sync(s)
    np.testing.assert_array_equal(x.copy_to_host(), 3.0)


def test_compile_error_inside_capture():
    @gpu.jit
    def bad(x):
        x[0] = undefined_name  # noqa: F821

    s = gpu.stream()
    x = gpu.to_device(np.zeros(4))
    with pytest.raises(gpu.CompileError):
        with gpu.graph(s):
            bad[1, 1, s](x)
    assert not _core._graph_capturing()


@pytest.mark.parametrize("what", ["device", "stream"])
def test_synchronize_inside_capture(what):
    s = gpu.stream()
    x = gpu.to_device(np.ones(4))
    with pytest.raises(GraphCaptureError, match="synchronize"):
        with gpu.graph(s):
            scale[1, 32, s](x, 2.0)
            gpu.synchronize() if what == "device" else s.synchronize()
    np.testing.assert_array_equal(x.copy_to_host(), 1.0)  # nothing ran


def test_launch_on_another_stream():
    s, other = gpu.stream(), gpu.stream()
    x = gpu.to_device(np.ones(4))
    with gpu.graph(s) as g:
        scale[1, 32, s](x, 2.0)
        with pytest.raises(GraphCaptureError, match="another stream"):
            scale[1, 32, other](x, 5.0)
        with pytest.raises(GraphCaptureError, match="another stream"):
            x.copy_to_device(np.ones(4), stream=other)
    g.launch()
    sync(s)
    np.testing.assert_array_equal(x.copy_to_host(), 2.0)


def test_legacy_default_stream_during_capture():
    s = gpu.stream()
    x = gpu.to_device(np.ones(4))
    h = np.empty(4)
    with gpu.graph(s) as g:
        with pytest.raises(GraphCaptureError, match="legacy default stream"):
            scale[1, 32](x, 2.0)
        with pytest.raises(GraphCaptureError, match="legacy default stream"):
            scale[1, 32, 0](x, 2.0)
        with pytest.raises(GraphCaptureError, match="legacy default stream"):
            x.copy_to_host(h)
        scale[1, 32, s](x, 4.0)
    g.launch()
    sync(s)
    np.testing.assert_array_equal(x.copy_to_host(), 4.0)


def test_what_a_capture_cannot_hold():
    s, other = gpu.stream(), gpu.stream()
    x = gpu.to_device(np.ones(4))
    with gpu.graph(s) as g:
        with pytest.raises(GraphCaptureError, match="argument 1 is a host array"):
            scale[1, 32, s](np.ones(4), 2.0)
        with pytest.raises(GraphCaptureError, match="In/Out"):
            scale[1, 32, s](gpu.InOut(np.ones(4)), 2.0)
        with pytest.raises(GraphCaptureError, match="allocating memory"):
            gpu.device_array(4)
        with pytest.raises(GraphCaptureError, match="already open"):
            with gpu.graph(s):
                pass
        with pytest.raises(GraphCaptureError, match="already open"):
            with gpu.graph(other):
                pass
        scale[1, 32, s](x, 2.0)
    assert len(g.nodes) == 1
    # relaxed mode allows allocation
    with gpu.graph(s, mode="relaxed") as g2:
        y = gpu.device_array(4)
        y.copy_to_device(x, stream=s)
    g2.launch()
    sync(s)
    np.testing.assert_array_equal(y.copy_to_host(), 1.0)  # the first graph was never launched


def test_bad_graph_arguments():
    with pytest.raises(ValueError, match="legacy default stream"):
        with gpu.graph(0):
            pass
    with pytest.raises(ValueError, match="legacy default stream"):
        with gpu.graph(None):
            pass
    with pytest.raises(ValueError, match="mode must be one of"):
        gpu.graph(gpu.stream(), mode="eager")
    with pytest.raises(TypeError, match="stream must be"):
        with gpu.graph("stream"):
            pass
    g = gpu.graph(gpu.stream())
    with pytest.raises(GraphCaptureError, match="not been captured"):
        g.launch()
    assert not _core._graph_capturing()


def test_close_and_repr():
    s = gpu.stream()
    x = gpu.to_device(np.ones(4))
    with gpu.graph(s) as g:
        scale[1, 32, s](x, 2.0)
    assert "1 kernel launches" in repr(g) and "scale" in repr(g.nodes[0])
    g.upload()
    g.close()
    with pytest.raises(GraphCaptureError, match="closed"):
        g.launch()


def test_graph_is_a_callable_module_loaded_lazily():
    code = ("import sys, gpujit\n"
            "assert 'gpujit.graph' not in sys.modules\n"
            "import gpujit.graph\n"
            "g = gpujit.graph(gpujit.stream())\n"
            "assert isinstance(g, gpujit.graph.Graph)\n"
            "assert gpujit.GraphCaptureError is gpujit.graph.GraphCaptureError\n"
            "assert issubclass(gpujit.GraphCaptureError, gpujit.CudaError)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
