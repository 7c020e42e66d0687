"""numba's objects as gpujit's input, and gpujit's types in numba's CPU APIs (gpujit.numba_interop):
numba's scalar, array and record types and signatures in jit signatures, as shared/local array
dtypes and as casts in kernels; numba.njit / numba.jit functions called from kernels, compiled
from their Python functions; gpujit's signatures in numba.vectorize and numba.njit. Each result is
checked against NumPy on fresh random inputs, outputs poisoned first. gpujit imports numba only
where the user's code did (checked in a fresh interpreter). Skipped where numba is not installed,
except the import check."""
import importlib.util
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import gpujit as cuda

HAVE_NUMBA = importlib.util.find_spec("numba") is not None
needs_numba = pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(cuda.__file__)))


def _child(code, **env):
    e = dict(os.environ, **env)
    e["PYTHONPATH"] = os.pathsep.join([PKG_ROOT] + [p for p in [e.get("PYTHONPATH")] if p])
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=300)


def test_gpujit_does_not_import_numba():
    """import gpujit, a kernel compiled and launched with every kind of signature and dtype:
    numba stays unimported (its import takes longer than gpujit's)."""
    p = _child("import sys, numpy as np\n"
               "import gpujit as cuda\n"
               "from gpujit import float32, int32, void\n"
               "@cuda.jit(void(float32[::1], int32))\n"
               "def k(a, n):\n"
               "    s = cuda.shared.array(4, float32)\n"
               "    i = cuda.grid(1)\n"
               "    if i < n:\n"
               "        s[0] = 1\n"
               "        a[i] = float32(i) + s[0]\n"
               "a = np.full(8, np.nan, np.float32)\n"
               "k[1, 8](a, 8)\n"
               "assert (a == np.arange(8) + 1).all()\n"
               "cuda.jit('void(float64[:])')(lambda x: None)\n"
               "cuda.vectorize(['float32(float32)'])(lambda x: x + 1)\n"
               "assert not [m for m in sys.modules if m == 'numba' or m.startswith('numba.')], \\\n"
               "    [m for m in sys.modules if m.startswith('numba')]\n"
               "print('ok')\n")
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr[-3000:]


@pytest.fixture(scope="module")
def numba():
    if not HAVE_NUMBA:
        pytest.skip("numba is not installed")
    import numba
    return numba


def test_numba_types_in_signatures(numba, rng):
    from numba import float32, void

    @cuda.jit(void(float32[:, ::1], float32[:, ::1], numba.types.int32))
    def scale(out, a, k):
        i, j = cuda.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            out[i, j] = a[i, j] * k

    assert scale.signatures == ["void(float32[:, ::1], float32[:, ::1], int32)"]
    a = rng.standard_normal((5, 7)).astype(np.float32)
    out = np.full_like(a, np.nan)
    k = int(rng.integers(2, 9))
    scale[(1, 1), (8, 8)](out, a, k)
    np.testing.assert_array_equal(out, a * np.float32(k))

    arr = numba.types.Array(numba.float64, 1, "C")

    @cuda.jit([numba.void(arr, arr), (numba.float32[::1], numba.float32[::1])])
    def neg(out, x):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = -x[i]

    assert sorted(neg.signatures) == ["(float32[::1], float32[::1])", "void(float64[::1], float64[::1])"]
    for dt in (np.float64, np.float32):
        x = rng.standard_normal(100).astype(dt)
        out = np.full_like(x, np.nan)
        neg[1, 128](out, x)
        np.testing.assert_array_equal(out, -x)


def test_numba_types_as_dtypes_and_casts(numba, rng):
    @cuda.jit
    def block_sums(out, x):
        s = cuda.shared.array(64, numba.float32)
        c = cuda.local.array(2, dtype=numba.types.int64)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        s[t] = x[i]
        c[0] = numba.int64(x[i] * 10)
        cuda.syncthreads()
        if t == 0:
            acc = numba.float32(0)
            for k in range(64):
                acc += s[k]
            out[cuda.blockIdx.x, 0] = acc
        out[i, 1] = c[0]
        out[i, 2] = numba.types.uint8(300 + t)

    x = rng.uniform(-3, 3, 256).astype(np.float32)
    out = np.full((256, 3), np.nan, np.float32)
    block_sums[4, 64](out, x)
    expect = x.reshape(4, 64).sum(axis=1, dtype=np.float32)
    np.testing.assert_allclose(out[:4, 0], expect, rtol=1e-5)
    np.testing.assert_array_equal(out[:, 1], np.trunc(x * 10).astype(np.int64))
    np.testing.assert_array_equal(out[:, 2], ((300 + np.arange(256) % 64) % 256).astype(np.float32))


def test_numba_record_types(numba, rng):
    dt = np.dtype([("a", np.int32), ("b", np.float32), ("c", np.float64, (2,))], align=True)
    rec = numba.from_dtype(dt)

    @cuda.jit(numba.void(rec[:], numba.float64[:]))
    def total(r, out):
        tmp = cuda.local.array(1, rec)
        i = cuda.grid(1)
        if i < r.size:
            tmp[0].a = r[i].a * 2
            out[i] = tmp[0].a + r[i].b + r[i].c[1]

    r = np.zeros(50, dt)
    r["a"] = rng.integers(-100, 100, 50)
    r["b"] = rng.standard_normal(50)
    r["c"] = rng.standard_normal((50, 2))
    out = np.full(50, np.nan)
    total[1, 64](r, out)
    np.testing.assert_allclose(out, 2 * r["a"] + r["b"].astype(np.float64) + r["c"][:, 1], rtol=1e-12)


def test_njit_functions_called_from_kernels(numba, rng):
    @numba.njit
    def clamp(x, lo, hi):
        return min(max(x, lo), hi)

    @numba.jit(numba.float64(numba.float64), nopython=True)
    def cube(x):          # numba compiled it for float64 only: the kernel converts as numba does
        return x * x * x

    def closure_kernel(bound):
        @cuda.jit
        def k(out, x):
            i = cuda.grid(1)
            if i < x.size:
                out[i] = clamp(x[i], -bound, bound) + cube(x[i]) + math.sqrt(abs(x[i]))
        return k

    k = closure_kernel(1.5)
    x = rng.uniform(-3, 3, 300)
    out = np.full_like(x, np.nan)
    k[3, 128](out, x)
    np.testing.assert_allclose(out, np.clip(x, -1.5, 1.5) + x ** 3 + np.sqrt(np.abs(x)), rtol=1e-12)
    # the same functions still run on the CPU through numba
    assert clamp(5.0, -1.0, 1.0) == 1.0 and cube(2.0) == 8.0


def test_njit_refused_where_its_body_is(numba):
    @numba.njit
    def makes_list(n):
        return [0] * n

    @cuda.jit
    def k(out):
        out[0] = len(makes_list(3))

    with pytest.raises(cuda.CompileError, match="test_numba_objects.py"):
        k[1, 1](np.zeros(1))


def test_numba_type_without_counterpart(numba):
    with pytest.raises(TypeError, match="unicode_type"):
        cuda.jit(numba.void(numba.types.unicode_type))


def test_gpujit_types_in_numbas_cpu_apis(numba, rng):
    from gpujit import float32, float64, int32

    @numba.vectorize([float32(float32, float32), float64(float64, float64)])
    def hyp(a, b):
        return math.sqrt(a * a + b * b)

    for dt in (np.float32, np.float64):
        a, b = rng.standard_normal((2, 40)).astype(dt)
        got = hyp(a, b)
        assert got.dtype == dt
        np.testing.assert_allclose(got, np.hypot(a, b), rtol=1e-6)

    @numba.njit(float64(float64[::1], int32))
    def head_sum(x, n):
        s = 0.0
        for i in range(n):
            s += x[i]
        return s

    x = rng.standard_normal(30)
    assert math.isclose(head_sum(x, 10), float(x[:10].sum()), rel_tol=1e-12)
    # and the same signature objects still serve gpujit
    cuda.jit(float64(float64[::1], int32), device=True)(lambda x, n: x[n])


def test_cache_key_follows_the_njit_function(numba, tmp_path):
    """cache=True: a kernel calling an @njit function is cached under that function's body, so
    changing the body compiles afresh rather than loading the kernel the old body made."""
    script = tmp_path / "prog.py"
    script.write_text("import sys, numpy as np, numba, gpujit as cuda\n"
                      "step = int(sys.argv[1])\n"
                      "src = 'def inc(x):\\n    return x + %d\\n' % step\n"
                      "ns = {}\n"
                      "exec(compile(src, __file__, 'exec'), ns)\n"
                      "inc = numba.njit(ns['inc'])\n"
                      "@cuda.jit(cache=True)\n"
                      "def k(o):\n"
                      "    o[0] = inc(numba.float32(2.5))\n"
                      "o = np.full(1, np.nan)\n"
                      "k[1, 1](o)\n"
                      "print(o[0])\n")
    for step in (1, 2, 1):
        p = subprocess.run([sys.executable, str(script), str(step)], capture_output=True, text=True, timeout=300,
                           cwd=tmp_path, env=dict(os.environ, PYTHONPATH=PKG_ROOT))
        assert p.returncode == 0, p.stderr[-3000:]
        assert float(p.stdout) == 2.5 + step


def test_numbas_cuda_overloads(numba, rng):
    """numba.extending.overload(func, target='cuda'): a kernel calling func runs the
    implementation numba's overload function chooses from numba's types of the arguments."""
    from numba.extending import overload

    def scale(x):
        raise NotImplementedError

    @overload(scale, target="cuda")
    def ol_scale(x):
        if isinstance(x, numba.types.Integer):
            return lambda x: x * 10
        if isinstance(x, numba.types.Float):
            return lambda x: x * 0.5

    def cpu_only(x):
        return x

    @overload(cpu_only)        # numba's CPU target only: the kernel compiles the Python function
    def ol_cpu_only(x):
        return lambda x: x + 1000

    @cuda.jit
    def k(out, i, f):
        out[0] = scale(i)
        out[1] = scale(f)
        out[2] = cpu_only(i)

    i, f = int(rng.integers(-50, 50)), float(rng.standard_normal())
    out = np.full(3, np.nan)
    k[1, 1](out, i, f)
    np.testing.assert_array_equal(out, [i * 10, f * 0.5, i])


def test_numba_and_gpujit_caches_of_one_function(numba, tmp_path):
    """One function cached by numba's CPU JIT (@njit(cache=True)) and as a gpujit kernel
    (cache=True) in one __pycache__: neither cache overwrites or removes the other's files, so
    a second process loads both (each a hit, nothing compiled)."""
    (tmp_path / "both.py").write_text(
        "import numpy as np, numba, gpujit as cuda\n"
        "def assign(r, x):\n"
        "    r[()] = x[()]\n"
        "cpu = numba.njit(cache=True)(assign)\n"
        "gpu = cuda.jit(cache=True)(assign)\n")
    run = ("import sys, numpy as np, both\n"
           "for v in (5.0, 2.5):\n"
           "    x = np.array(v); r = np.array(np.nan)\n"
           "    both.cpu(r, x); assert r[()] == v\n"
           "    r[()] = np.nan\n"
           "    both.gpu[1, 1](r, x); assert r[()] == v\n"
           "print(sum(both.cpu.stats.cache_hits.values()), sum(both.gpu.stats.cache_hits.values()))\n")
    outs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", run], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                           env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), PKG_ROOT])))
        assert p.returncode == 0, p.stderr[-3000:]
        outs.append(p.stdout.split())
    assert outs == [["0", "0"], ["1", "1"]], outs


def test_numba_signatures_for_ufuncs(numba, rng):
    from numba import float32, float64, void

    @cuda.vectorize(float64(float64, float64))
    def hyp(a, b):
        return math.sqrt(a * a + b * b)

    @cuda.guvectorize([void(float32[:], float32[:])], "(n)->(n)")
    def cumsum(x, out):
        acc = float32(0)
        for i in range(x.shape[0]):
            acc += x[i]
            out[i] = acc

    a, b = rng.standard_normal((2, 50))
    np.testing.assert_allclose(hyp(a, b), np.hypot(a, b), rtol=1e-12)
    x = rng.standard_normal((4, 9)).astype(np.float32)
    out = np.full_like(x, np.nan)
    cumsum(x, out)
    np.testing.assert_allclose(out, np.cumsum(x, axis=1), rtol=1e-5, atol=1e-6)
