"""gpujit in numba.cuda's place (gpujit._place): a small project written the numba.cuda way
(a package of kernels and host code, and its own pytest tests using numba.cuda.testing's
helpers, cuda.is_available() and cuda.list_devices()) runs unchanged in a fresh interpreter
under GPUJIT_AS_NUMBA_CUDA=1 NUMBA_ENABLE_CUDASIM=1, through the .pth hook the package
installs; real numba's CPU JIT and types stay numba's. Without the variable the hook does
nothing; gpujit.install_as_numba_cuda() switches a running interpreter (a notebook), after
numba.cuda was imported too. Skipped where numba is not installed."""
import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import gpujit

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba is not installed")

PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(gpujit.__file__)))
PTH = os.path.join(PKG_ROOT, "gpujit_numba_cuda.pth")

KERNELS = '''
"""heatsim: a 1-D heat equation and friends on the GPU, written for numba.cuda."""
import math

import numpy as np
import numba
from numba import cuda, float32, float64, njit
from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

TPB = 128
TILE = TPB + 2   # the block's values and a halo cell each side


@njit
def clamp(x, lo, hi):
    return min(max(x, lo), hi)


@cuda.jit(numba.void(float32[::1], float32[::1], float32))
def step(out, u, alpha):
    tile = cuda.shared.array(TILE, float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x + 1
    n = u.size
    if i < n:
        tile[t] = u[i]
        if cuda.threadIdx.x == 0:
            tile[0] = u[i - 1] if i > 0 else u[i]
        if cuda.threadIdx.x == cuda.blockDim.x - 1 or i == n - 1:
            tile[t + 1] = u[i + 1] if i + 1 < n else u[i]
    cuda.syncthreads()
    if i < n:
        out[i] = clamp(tile[t] + alpha * (tile[t - 1] - 2 * tile[t] + tile[t + 1]), float32(-1e6), float32(1e6))


def smooth(u, alpha, steps):
    d_a = cuda.to_device(u.astype(np.float32))
    d_b = cuda.device_array_like(d_a)
    blocks = (u.size + TPB - 1) // TPB
    for _ in range(steps):
        step[blocks, TPB](d_b, d_a, alpha)
        d_a, d_b = d_b, d_a
    return d_a.copy_to_host()


@cuda.jit
def block_sums(out, x):
    s = cuda.shared.array(TPB, numba.float64)
    i = cuda.grid(1)
    s[cuda.threadIdx.x] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if cuda.threadIdx.x < stride:
            s[cuda.threadIdx.x] += s[cuda.threadIdx.x + stride]
        cuda.syncthreads()
        stride //= 2
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(out, 0, s[0])


def total(x):
    out = cuda.to_device(np.zeros(1))
    block_sums[(x.size + TPB - 1) // TPB, TPB](out, x)
    return out.copy_to_host()[0]


@cuda.jit
def pi_hits(states, hits, per_thread):
    i = cuda.grid(1)
    if i < hits.size:
        n = 0
        for _ in range(per_thread):
            x = xoroshiro128p_uniform_float32(states, i)
            y = xoroshiro128p_uniform_float32(states, i)
            if x * x + y * y <= float32(1.0):
                n += 1
        hits[i] = n


def estimate_pi(threads, per_thread, seed):
    states = create_xoroshiro128p_states(threads, seed=seed)
    hits = cuda.device_array(threads, dtype=np.int64)
    pi_hits[(threads + 63) // 64, 64](states, hits, per_thread)
    return 4.0 * hits.copy_to_host().sum() / (threads * per_thread)
'''

PROJECT_TESTS = '''
import os
import unittest

import numpy as np
import numba
import pytest
from numba import cuda
from numba.cuda.testing import CUDATestCase, skip_on_cudasim, skip_unless_cc_60

from heatsim import kernels

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="CUDA is not available")


def reference(u, alpha, steps):
    u = u.astype(np.float32)
    for _ in range(steps):
        p = np.concatenate([u[:1], u, u[-1:]])
        u = np.clip(p[1:-1] + np.float32(alpha) * (p[:-2] - 2 * p[1:-1] + p[2:]), -1e6, 1e6).astype(np.float32)
    return u


def test_devices_agree():
    device_ids = [d.id for d in cuda.list_devices()]
    per_device = 1000 // len(device_ids)
    assert per_device == 1000 and device_ids == [0]
    dev = cuda.get_current_device()
    assert len(cuda.gpus) == 1 and dev.id == 0
    assert dev.WARP_SIZE == 32 and dev.MAX_THREADS_PER_BLOCK >= kernels.TPB
    assert dev.COMPUTE_CAPABILITY_MAJOR >= 5


def test_numba_itself_is_numba():
    assert "gpujit" not in numba.njit.__module__
    assert numba.njit(lambda x: x * 2)(21) == 42
    assert cuda.float32 is numba.float32


class TestHeat(CUDATestCase):
    def setUp(self):
        super().setUp()
        self.rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))

    def test_smooth(self):
        u = self.rng.standard_normal(1000).astype(np.float32)
        got = kernels.smooth(u, 0.25, 7)
        np.testing.assert_allclose(got, reference(u, 0.25, 7), rtol=1e-5, atol=1e-5)

    def test_total(self):
        x = self.rng.standard_normal(5000)
        self.assertAlmostEqual(kernels.total(x), float(x.sum()), places=9)

    @skip_unless_cc_60
    def test_pi(self):
        self.assertLess(abs(kernels.estimate_pi(256, 200, 7) - np.pi), 0.05)

    @skip_on_cudasim("needs a real GPU's timing")
    def test_gpu_only(self):
        raise AssertionError("skip_on_cudasim did not skip under NUMBA_ENABLE_CUDASIM=1")


if __name__ == "__main__":
    unittest.main()
'''

RUN_PYTEST = ("import site, sys; site.addsitedir(sys.argv[1]); import pytest; "
              "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', *sys.argv[2:]]))")


def _site(tmp_path, redirector=False):
    """A site directory holding the package's .pth hook (as site-packages would), and where
    redirector is set a stand-in for numba-cuda's redirection of numba.cuda (its finder, which
    sorts first, as numba-cuda's _numba_cuda_redirector.pth does)."""
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(PTH, site)
    if redirector:
        (site / "_numba_cuda_redirector.py").write_text(textwrap.dedent('''
            import importlib.abc, sys
            class NumbaCudaFinder(importlib.abc.MetaPathFinder):
                def find_spec(self, name, path, target=None):
                    if name == "numba.cuda" or name.startswith("numba.cuda."):
                        raise ImportError("numba-cuda's redirector reached for " + name)
            sys.meta_path.insert(0, NumbaCudaFinder())
            '''))
        (site / "_numba_cuda_redirector.pth").write_text("import _numba_cuda_redirector\n")
    return str(site)


def _project(tmp_path):
    proj = tmp_path / "proj"
    (proj / "heatsim").mkdir(parents=True)
    (proj / "tests").mkdir()
    (proj / "heatsim" / "__init__.py").write_text("")
    (proj / "heatsim" / "kernels.py").write_text(KERNELS)
    (proj / "tests" / "test_heat.py").write_text(PROJECT_TESTS)
    return proj


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("GPUJIT_TARGET", "GPUJIT_AS_NUMBA_CUDA",
                                                             "NUMBA_ENABLE_CUDASIM")}
    env["PYTHONPATH"] = os.pathsep.join([PKG_ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    env.update(extra)
    return env


@pytest.mark.parametrize("redirector", [False, True], ids=["numba", "numba-cuda-installed"])
def test_project_runs_unchanged(tmp_path, redirector):
    proj = _project(tmp_path)
    p = subprocess.run([sys.executable, "-c", RUN_PYTEST, _site(tmp_path, redirector), "-rs", "tests"],
                       cwd=proj, env=_env(GPUJIT_AS_NUMBA_CUDA="1", NUMBA_ENABLE_CUDASIM="1",
                                          PYTHONPATH=os.pathsep.join([str(proj), PKG_ROOT])),
                       capture_output=True, text=True, timeout=600)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-5000:]
    assert "5 passed, 1 skipped" in out and "needs a real GPU's timing" in out, out[-3000:]


CHECK = '''
import sys
import numba
from numba import cuda
import numba.cuda.cudadrv.driver as drv
import numba.cuda.random
import gpujit
print(cuda.jit is gpujit.jit, drv is sys.modules["gpujit.cudadrv.driver"],
      numba.cuda.random is sys.modules["gpujit.random"], cuda.is_available(), gpujit.current_target())
try:
    import numba.cuda.no_such_module
except ModuleNotFoundError as e:
    print(e)
'''


def test_hook_switches_and_resolves(tmp_path):
    site = _site(tmp_path)
    run = ("import site, sys; site.addsitedir(sys.argv[1]); exec(sys.argv[2])")
    p = subprocess.run([sys.executable, "-c", run, site, CHECK], env=_env(GPUJIT_AS_NUMBA_CUDA="1",
                       NUMBA_ENABLE_CUDASIM="1"), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.splitlines() == ["True True True True cpu", "No module named 'numba.cuda.no_such_module'"]


@pytest.mark.parametrize("value", [None, "0"])
def test_hook_does_nothing_unless_set(tmp_path, value):
    site = _site(tmp_path)
    code = ("import site, sys; site.addsitedir(sys.argv[1])\n"
            "assert 'gpujit' not in sys.modules, 'the hook imported gpujit'\n"
            "from numba import cuda\n"
            "print('gpujit' in (cuda.__file__ or ''), 'gpujit' in sys.modules)\n")
    env = _env() if value is None else _env(GPUJIT_AS_NUMBA_CUDA=value)
    p = subprocess.run([sys.executable, "-c", code, site], env=env, capture_output=True, text=True, timeout=300)
    if p.returncode != 0 and "No module named 'numba.cuda'" in p.stderr:
        return   # a numba without numba.cuda: nothing resolved to gpujit either
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.split() == ["False", "False"]


def test_install_in_a_running_interpreter():
    """A notebook: numba.cuda (numba's) imported first, then install_as_numba_cuda()."""
    code = textwrap.dedent('''
        import sys
        import numpy as np
        import numba
        try:
            from numba import cuda as before
        except ImportError:
            before = None
        import gpujit
        mod = gpujit.install_as_numba_cuda(cudasim=True)
        from numba import cuda
        import numba.cuda as again
        assert mod is cuda is again is numba.cuda and cuda is not before
        assert cuda.jit is gpujit.jit and cuda.is_available() and cuda.float32 is numba.float32

        @cuda.jit(numba.void(cuda.float32[::1]))
        def lanes(a):
            a[cuda.grid(1)] = cuda.laneid
        a = np.full(64, np.nan, np.float32)
        lanes[1, 64](a)
        assert (a == np.arange(64) % 32).all()
        print("ok")
        ''')
    p = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr[-3000:]


CHECKOUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python")

FROM_CHECKOUT = '''
import sys
import numpy as np
import numba
from numba import cuda
import gpujit
assert cuda.jit is gpujit.jit, cuda

@cuda.jit
def axpy(out, a, x, y):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        out[i] = a * x[i] + y[i]

rng = np.random.default_rng(7)
x = rng.standard_normal(1000).astype(np.float32)
y = rng.standard_normal(1000).astype(np.float32)
out = np.zeros_like(x)
axpy[4, 32](out, np.float32(1.5), x, y)
assert np.allclose(out, np.float32(1.5) * x + y), out
print("ok")
'''


@pytest.mark.skipif(not os.path.isfile(os.path.join(CHECKOUT, "sitecustomize.py")),
                    reason="gpujit is not imported from a checkout")
def test_checkout_on_pythonpath_switches(tmp_path):
    """From a checkout (PYTHONPATH=python, the README's way) no site directory holds the .pth
    hook; GPUJIT_AS_NUMBA_CUDA=1 still puts gpujit in numba.cuda's place (python/sitecustomize),
    and a sitecustomize it hides later on sys.path still runs. Unset, gpujit is not imported."""
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "sitecustomize.py").write_text("import builtins\nbuiltins._hidden_sitecustomize_ran = True\n")
    link = tmp_path / "checkout_link"   # the checkout under a second name: still run once
    link.symlink_to(CHECKOUT)
    path = os.pathsep.join([CHECKOUT, str(link), str(hidden)])
    env = _env(GPUJIT_AS_NUMBA_CUDA="1", PYTHONPATH=path)
    p = subprocess.run([sys.executable, "-c", FROM_CHECKOUT + "import builtins\n"
                        "assert builtins._hidden_sitecustomize_ran\n"],
                       env=env, capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr[-3000:]
    p = subprocess.run([sys.executable, "-c", "import sys, builtins\n"
                        "assert builtins._hidden_sitecustomize_ran\n"
                        "print('gpujit' in sys.modules)\n"],
                       env=_env(PYTHONPATH=path), capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert p.returncode == 0 and p.stdout.split() == ["False"], p.stderr[-3000:]


NUMBA_UFUNCS = '''
import math
import numpy as np
import numba
from numba import vectorize, guvectorize
import gpujit

rng = np.random.default_rng(11)
a = rng.standard_normal(1000).astype(np.float32)
b = rng.standard_normal(1000).astype(np.float32)

@vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="cuda")
def fma3(x, y):
    return 3 * x + y
assert isinstance(fma3, gpujit.vectorizers.DeviceUFunc), type(fma3)
assert np.allclose(fma3(a, b), 3 * a + b) and fma3(a, b).dtype == np.float32

@vectorize(target="cuda", identity=0)
def add(x, y):
    return x + y
d = add(a.astype(np.float64), b.astype(np.float64))
assert d.dtype == np.float64 and np.allclose(d, a.astype(np.float64) + b)

@guvectorize(["(float32[:], float32[:])", (numba.float64[:], numba.float64[:])], "(i)->()", target="cuda")
def l2(vec, out):
    acc = 0.0
    for v in vec:
        acc += v ** 2
    out[0] = math.sqrt(acc)
m = rng.standard_normal((50, 7)).astype(np.float32)
assert np.allclose(l2(m), np.sqrt((m.astype(np.float64) ** 2).sum(axis=1)), rtol=1e-5)

@guvectorize("(n),(n)->(n)", target="cuda")          # numba's dynamic gufunc: the layout alone
def addv(x, y, out):
    for i in range(x.shape[0]):
        out[i] = x[i] + y[i]
out = np.zeros((50, 7))
addv(m.astype(np.float64), m.astype(np.float64), out)
assert np.allclose(out, 2.0 * m)

try:
    vectorize(["float32(float32)"], target="cuda", cache=True)(lambda x: x)
except TypeError as e:
    assert "caching is not supported" in str(e), e
else:
    raise AssertionError("cache=True was accepted")
print("ok")
'''


def test_numbas_vectorize_target_cuda(tmp_path):
    """numba.vectorize / numba.guvectorize(..., target='cuda') in the place mode: numba's
    decorators look numba.cuda.vectorizers' builders up, which give gpujit's ufuncs."""
    run = "import site, sys; site.addsitedir(sys.argv[1]); exec(sys.argv[2])"
    p = subprocess.run([sys.executable, "-c", run, _site(tmp_path), NUMBA_UFUNCS],
                       env=_env(GPUJIT_AS_NUMBA_CUDA="1", NUMBA_ENABLE_CUDASIM="1"),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "ok", (p.stdout + p.stderr)[-3000:]


DETECT = '''
import numpy as np
from numba import cuda

@cuda.jit
def square(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * x[i]

x = np.random.default_rng(5).standard_normal(300)
out = np.zeros_like(x)
square[3, 128](out, x)
assert np.array_equal(out, x * x)
assert cuda.detect() is True
'''


def test_detect_names_the_simulator_switch(tmp_path):
    """NUMBA_ENABLE_CUDASIM=1 in the place mode chose the cpu target: detect() says so,
    rather than that GPUJIT_TARGET is unset."""
    run = "import site, sys; site.addsitedir(sys.argv[1]); exec(sys.argv[2])"
    p = subprocess.run([sys.executable, "-c", run, _site(tmp_path), DETECT],
                       env=_env(GPUJIT_AS_NUMBA_CUDA="1", NUMBA_ENABLE_CUDASIM="1"),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    first = p.stdout.splitlines()[0]
    assert first == "Found 1 CUDA devices (the cpu target, chosen: NUMBA_ENABLE_CUDASIM=1, gpujit in numba.cuda's place)", p.stdout
