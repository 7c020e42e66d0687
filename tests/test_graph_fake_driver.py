"""The GPU path of CUDA graphs (runtime/graph.c, the launcher's capture and update paths) against
a stand-in driver (tests/c/fake_libcuda.c) that captures work into graphs as the real one does
but runs no kernels: it logs each kernel execution's parameters, which the checks read. What
the kernels compute on a real GPU is tests/gpu/test_graph_gpu.py's."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = r'''
import ctypes, struct, sys
import numpy as np
import gpujit as gpu
from gpujit import _core

fake = ctypes.CDLL(sys.argv[1])
fake.fake_log_param.restype = ctypes.c_uint64
fake.fake_log_name.restype = ctypes.c_char_p
assert _core.get_target() == "cuda" and _core.driver_version() == 13000


def log():
    return [(fake.fake_log_name(i).decode(), [fake.fake_log_param(i, j) for j in range(fake.fake_log_nparams(i))],
             fake.fake_log_from_graph(i)) for i in range(fake.fake_log_count())]


def ptr(d):
    return d.__cuda_array_interface__["data"][0]


def bits(f):
    return struct.unpack("<Q", struct.pack("<d", f))[0]


@gpu.jit
def axpy(out, a, x, y):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


n = 8
s = gpu.stream()
x, y = gpu.to_device(np.arange(n, dtype=np.float64)), gpu.to_device(np.ones(n))
out, out2 = gpu.to_device(np.full(n, 7.0)), gpu.device_array(n)
host = gpu.pinned_array(n, np.float64)
host[:] = -1
# the kernel's first launch is inside the capture: its module loads in relaxed mode
with gpu.graph(s) as g:
    axpy[1, 32, s](out, 2.0, x, y)
    out.copy_to_host(host, stream=s)
assert log() == [] and (host == -1).all(), "captured work ran during the capture"
assert len(g.nodes) == 1 and g.nodes[0]._node != 0
assert _core._graph_node_count(g._device, g._graph) == 2
g.upload()
g.launch()
(name, p, from_graph), = log()
assert from_graph == 1 and p[0] == ptr(out) and p[3] == bits(2.0) and p[4] == ptr(x) and p[7] == ptr(y), p
assert (host == 7.0).all(), "the captured copy did not run at the replay"
g.update(0, out2, 3.5, x, y)
g.launch(s)
p = log()[-1][1]
assert p[0] == ptr(out2) and p[3] == bits(3.5) and p[4] == ptr(x), p
try:
    g.update(0, out2, 3, x, y)
    raise AssertionError("an update of another type went through")
except TypeError as e:
    assert "another specialisation" in str(e)

# the driver's own capture error: an event recorded in the capture cannot be queried
ev = gpu.event()
try:
    with gpu.graph(s):
        axpy[1, 32, s](out, 2.0, x, y)
        ev.record(s)
        ev.query()
    raise AssertionError("no error")
except gpu.GraphCaptureError as e:
    assert e.code == 907 and e.name == "CUDA_ERROR_CAPTURED_EVENT" and "inside a capture" in str(e), e
assert not _core._graph_capturing()

# what gpujit refuses before the driver sees it
fake.fake_log_clear()
other = gpu.stream()
with gpu.graph(s) as g2:
    for bad, words in ((lambda: axpy[1, 32](out, 1.0, x, y), "legacy default stream"),
                       (lambda: axpy[1, 32, other](out, 1.0, x, y), "another stream"),
                       (lambda: gpu.synchronize(), "synchronize"),
                       (lambda: s.synchronize(), "synchronize"),
                       (lambda: gpu.device_array(4), "allocating"),
                       (lambda: axpy[1, 32, s](np.zeros(n), 1.0, x, y), "host array")):
        try:
            bad()
            raise AssertionError("accepted: " + words)
        except gpu.GraphCaptureError as e:
            assert words in str(e), (words, e)
    axpy[1, 32, s](out, 1.0, x, y)
assert log() == []
g2.launch()
assert len(log()) == 1

@gpu.jit(debug=True)
def dbg(x):
    x[0] = 1.0

try:
    with gpu.graph(s):
        dbg[1, 1, s](x)
    raise AssertionError("a debug kernel was captured")
except gpu.GraphCaptureError as e:
    assert "debug=True" in str(e)

# an exception in the block discards the capture; the stream is usable again
try:
    with gpu.graph(s) as g3:
        axpy[1, 32, s](out, 1.0, x, y)
        raise KeyError("boom")
except KeyError:
    pass
with gpu.graph(s, mode="relaxed") as g4:
    z = gpu.device_array(n)  # relaxed: allocation allowed
    axpy[1, 32, s](z, 1.0, x, y)
fake.fake_log_clear()
g4.launch()
assert log()[0][1][0] == ptr(z)
g4.close()
# a reset destroys the graphs of the context with it
with gpu.graph(s) as g5:
    axpy[1, 32, s](out, 1.0, x, y)
gpu.reset()
try:
    g5.launch()
    raise AssertionError("a graph of a reset context launched")
except gpu.CudaError as e:
    assert "reset" in str(e), e
print("fake driver: OK")
'''


def test_graphs_against_the_stand_in_driver(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    so = tmp_path / "fake_libcuda.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(so), os.path.join(ROOT, "tests", "c", "fake_libcuda.c")],
                   check=True, capture_output=True)
    env = dict(os.environ, GPUJIT_LIBCUDA=str(so), GPUJIT_TARGET="cuda", GPUJIT_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(so)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "fake driver: OK" in r.stdout, r.stdout + r.stderr
