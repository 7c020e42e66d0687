"""@jit(cache=True): kernels kept on disk (gpujit/caching.py), found again by another process,
invalidated when the source file changes, replaced by recompile(); kernels pickle by reference."""
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpujit as gpu

MODULE = '''
import numpy as np
import gpujit as gpu

Z = 1


@gpu.jit(cache=True)
def add(r, x, y):
    i = gpu.grid(1)
    if i < r.size:
        r[i] = x[i] + y[i] + Z


@gpu.jit
def add_nocache(r, x, y):
    i = gpu.grid(1)
    if i < r.size:
        r[i] = x[i] + y[i] + Z


def make(c):
    @gpu.jit(cache=True)
    def closure(r, x):
        i = gpu.grid(1)
        if i < r.size:
            r[i] = x[i] + c
    return closure


closure3 = make(3)
closure5 = make(5)


@gpu.jit(cache=True, debug=True)
def raises(r, x):
    if x[0] < 0:
        raise ValueError("negative", 7)
    r[0] = x[0]
'''

# a child process: imports the module, runs its kernels on fresh inputs, reports results and stats
CHILD = '''
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import {mod} as m
rng = np.random.default_rng()
out = {{}}
for dt in (np.float64, np.int32):
    x, y = (rng.integers(-100, 100, 37).astype(dt) for _ in range(2))
    r = np.full_like(x, -999)
    m.add[1, 64](r, x, y)
    out[np.dtype(dt).name] = bool((r == x + y + m.Z).all())
for name, c in (("closure3", 3), ("closure5", 5)):
    x = rng.standard_normal(10)
    r = np.full_like(x, np.nan)
    getattr(m, name)[1, 16](r, x)
    out[name] = bool((r == x + c).all())
try:
    m.raises[1, 1](np.zeros(1), -np.ones(1))
    out["raises"] = "no"
except ValueError as e:
    out["raises"] = list(e.args)
f = lambda k: [sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values())]
out["stats"] = {{n: f(getattr(m, n)) for n in ("add", "closure3", "closure5", "raises")}}
print(json.dumps(out))
'''


def run_child(tmp, mod, env=None):
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(gpu.__file__)), e.get("PYTHONPATH", "")])
    e.update(env or {})
    p = subprocess.run([sys.executable, "-c", CHILD.format(mod=mod), str(tmp)], capture_output=True, text=True,
                       env=e, timeout=300)
    assert p.returncode == 0, p.stderr
    import json
    return json.loads(p.stdout.strip().splitlines()[-1])


def cache_files(d):
    return sorted(f for f in os.listdir(d) if not f.endswith(".pyc")) if os.path.isdir(d) else []


def test_cache_across_processes_and_invalidation(tmp_path):
    (tmp_path / "cmod1.py").write_text(MODULE)
    pyc = tmp_path / "__pycache__"
    first = run_child(tmp_path, "cmod1")
    assert first["float64"] and first["int32"] and first["closure3"] and first["closure5"]
    assert first["raises"][0].startswith("In function 'raises', file ") and first["raises"][0].endswith(": negative")
    assert first["raises"][1] == 7
    assert first["stats"] == {"add": [0, 2], "closure3": [0, 1], "closure5": [0, 1], "raises": [0, 1]}
    files = cache_files(pyc)
    assert sum(f.endswith(".nbi") for f in files) == 3 and sum(f.endswith(".nbc") for f in files) == 5
    mtimes = {f: os.path.getmtime(pyc / f) for f in files}

    second = run_child(tmp_path, "cmod1")     # everything from the cache, nothing written
    assert second["float64"] and second["int32"] and second["closure3"] and second["closure5"]
    assert second["raises"][0].startswith("In function 'raises', file ") and second["raises"][0].endswith(": negative")
    assert second["raises"][1] == 7
    assert second["stats"] == {"add": [2, 0], "closure3": [1, 0], "closure5": [1, 0], "raises": [1, 0]}
    assert {f: os.path.getmtime(pyc / f) for f in cache_files(pyc)} == mtimes

    with open(tmp_path / "cmod1.py", "a") as f:    # the source changes: Z is 10 now
        f.write("\nZ = 10\n")
    third = run_child(tmp_path, "cmod1")
    assert third["float64"] and third["int32"]     # checked against m.Z == 10
    assert third["stats"]["add"] == [0, 2]


def test_no_cache_writes_nothing(tmp_path):
    (tmp_path / "cmod2.py").write_text(MODULE)
    sys.path.insert(0, str(tmp_path))
    try:
        import cmod2
        r = np.zeros(5)
        cmod2.add_nocache[1, 8](r, np.ones(5), np.ones(5))
        assert (r == 3).all()
        assert cache_files(tmp_path / "__pycache__") == []
        assert sum(cmod2.add_nocache.stats.cache_misses.values()) == 0
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("cmod2", None)


def test_recompile_reads_globals_again(tmp_path):
    (tmp_path / "cmod3.py").write_text(MODULE)
    sys.path.insert(0, str(tmp_path))
    try:
        import cmod3
        x = np.random.default_rng().standard_normal(6)
        r = np.zeros(6)
        cmod3.add[1, 8](r, x, x)
        assert (r == 2 * x + 1).all()
        cmod3.Z = 10
        cmod3.add[1, 8](r, x, x)
        assert (r == 2 * x + 1).all()              # the compiled kernel keeps Z == 1
        cmod3.add.recompile()
        cmod3.add[1, 8](r, x, x)
        assert (r == 2 * x + 10).all()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("cmod3", None)
    child = run_child(tmp_path, "cmod3")           # recompile() replaced the cache entry
    assert child["stats"]["add"][0] >= 1


def test_cache_dir_from_environment(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "cmod4.py").write_text(MODULE)
    cache = tmp_path / "cache"
    out = run_child(src, "cmod4", env={"NUMBA_CACHE_DIR": str(cache)})
    assert out["float64"]
    assert cache_files(src / "__pycache__") == []
    found = [f for _, _, fs in os.walk(cache) for f in fs]
    assert any(f.endswith(".nbi") for f in found) and any(f.endswith(".nbc") for f in found)


def test_captured_device_array_cannot_be_cached():
    arr = gpu.to_device(np.arange(3.0))

    @gpu.jit(cache=True)
    def k(out):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = arr[i] * 2

    with pytest.raises(pickle.PicklingError, match="global device arrays"):
        k[1, 3](gpu.device_array(3))


def test_uncacheable_source():
    ns = {"gpu": gpu}
    exec(textwrap.dedent("""
        def k(r):
            r[0] = 1
    """), ns)
    with pytest.raises(RuntimeError, match="cannot cache function"):
        gpu.jit(cache=True)(ns["k"])


@gpu.jit
def top_level_kernel(r):
    r[0] = 1


def test_kernels_pickle_by_reference():
    assert pickle.loads(pickle.dumps(top_level_kernel)) is top_level_kernel

    @gpu.jit
    def local(r):
        r[0] = 1

    assert pickle.loads(pickle.dumps(local)) is not local     # by value (tests/test_serialize.py)


WARM_CHILD = '''
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import gpujit as gpu
# tempfile (with shutil, bz2, lzma, random) costs milliseconds of a fresh process's start where
# nothing imported it before: a process whose kernels all come from the cache must not need it
sys.modules["tempfile"] = None
import {mod} as m
x, y = (np.random.default_rng().standard_normal(33) for _ in range(2))
r = np.full_like(x, np.nan)
m.add[1, 64](r, x, y)
assert (r == x + y + m.Z).all()
print(sum(m.add.stats.cache_hits.values()), sum(m.add.stats.cache_misses.values()))
'''


def test_warm_cache_process_does_not_import_tempfile(tmp_path):
    (tmp_path / "cmod4.py").write_text(MODULE)
    run_child(tmp_path, "cmod4")     # writes the cache (tempfile is used for that)
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(gpu.__file__)), e.get("PYTHONPATH", "")])
    p = subprocess.run([sys.executable, "-c", WARM_CHILD.format(mod="cmod4"), str(tmp_path)],
                       capture_output=True, text=True, env=e, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["1", "0"]


def test_digest_is_blake3():
    from gpujit import _core
    # BLAKE3's published hash of the empty input, and of b"abc"
    assert _core.Digest().hexdigest() == "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
    assert _core.Digest(b"abc").hexdigest() == "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85"
    data = np.random.default_rng().integers(0, 256, 5000, dtype=np.uint8).tobytes()
    d = _core.Digest()
    for piece in (data[:1], data[1:1500], memoryview(data)[1500:], b""):
        d.update(piece)
    assert d.digest() == _core.Digest(data).digest() and len(d.digest()) == 32
    assert d.hexdigest() == d.digest().hex()
    assert _core.Digest(data[:-1]).digest() != d.digest()
    with pytest.raises(TypeError):
        d.update("text")
