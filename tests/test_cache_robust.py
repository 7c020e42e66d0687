"""The on-disk cache under change and under load (gpujit/caching.py): an entry is found again only
while everything the kernel was compiled from is the same (its code, the globals and closure
variables it reads, the device functions it calls, its options, gpujit's build); damaged files are
misses that get rewritten; processes sharing a directory all get correct kernels, compiled once."""
import json
import os
import subprocess
import sys

import pytest

import gpujit as gpu

HELPER = '''
import gpujit as gpu


@gpu.jit(device=True)
def twist(v):
    return v * {mul}
'''

MODULE = '''
import os
import gpujit as gpu
from helpmod import twist

Z = int(os.environ.get("CK_Z", "1"))
FAST = os.environ.get("CK_FAST") == "1"


@gpu.jit(cache=True, fastmath=FAST)
def kern(r, x):
    i = gpu.grid(1)
    if i < r.size:
        r[i] = twist(x[i]) + Z{extra}
'''

CHILD = '''
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import gpujit
if os.environ.get("CK_VERSION"):
    gpujit.__version__ = os.environ["CK_VERSION"]
import helpmod, ckmod as m
start = float(os.environ.get("CK_START", "0"))
while time.time() < start:
    time.sleep(0.001)
rng = np.random.default_rng()
ok = True
for dt in (np.int64, np.float64):
    x = rng.integers(-1000, 1000, 77).astype(dt)
    r = np.full_like(x, -12345)
    m.kern[1, 128](r, x)
    ok = ok and bool((r == x * int(os.environ.get("CK_MUL", "2")) + m.Z + {extra_val}).all())
s = m.kern.stats
print(json.dumps({{"ok": ok, "hits": sum(s.cache_hits.values()), "misses": sum(s.cache_misses.values()),
                  "writes": sum(s.cache_writes.values())}}))
'''


def write(tmp, mul=2, extra=""):
    (tmp / "helpmod.py").write_text(HELPER.format(mul=mul))
    (tmp / "ckmod.py").write_text(MODULE.format(extra=extra))


def start_child(tmp, extra_val=0, **env):
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(gpu.__file__)), e.get("PYTHONPATH", "")])
    e["GPUJIT_CACHE_DIR"] = str(tmp / "cache")
    e.update({k: str(v) for k, v in env.items()})
    return subprocess.Popen([sys.executable, "-c", CHILD.format(extra_val=extra_val), str(tmp)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)


def finish(p):
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def run(tmp, extra_val=0, **env):
    return finish(start_child(tmp, extra_val, **env))


def data_files(tmp):
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(tmp / "cache") for f in fs if f.endswith(".nbc"))


def index_files(tmp):
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(tmp / "cache") for f in fs if f.endswith(".nbi"))


def test_invalidation(tmp_path):
    write(tmp_path)
    assert run(tmp_path) == {"ok": True, "hits": 0, "misses": 2, "writes": 2}
    assert run(tmp_path) == {"ok": True, "hits": 2, "misses": 0, "writes": 0}
    # a global's value changes (the source does not): a different kernel
    assert run(tmp_path, CK_Z=7) == {"ok": True, "hits": 0, "misses": 2, "writes": 2}
    assert run(tmp_path, CK_Z=7)["hits"] == 2
    assert run(tmp_path)["hits"] == 2                        # the first entries are still there
    # options
    assert run(tmp_path, CK_FAST=1)["misses"] == 2
    # a device function it calls changes (in another file: the kernel's own is untouched)
    (tmp_path / "helpmod.py").write_text(HELPER.format(mul=3))
    assert run(tmp_path, CK_MUL=3) == {"ok": True, "hits": 0, "misses": 2, "writes": 2}
    assert run(tmp_path, CK_MUL=3)["hits"] == 2
    # the function is edited
    write(tmp_path, mul=3, extra=" + 5")
    assert run(tmp_path, extra_val=5, CK_MUL=3)["misses"] == 2
    assert run(tmp_path, extra_val=5, CK_MUL=3)["hits"] == 2
    # another gpujit version wrote the cache
    assert run(tmp_path, extra_val=5, CK_MUL=3, CK_VERSION="99.0")["misses"] == 2
    assert run(tmp_path, extra_val=5, CK_MUL=3)["misses"] == 2
    # superseded data files were removed with their index entries
    assert len(data_files(tmp_path)) == 2 and len(index_files(tmp_path)) == 1


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "garbage_index", "swap"])
def test_damaged_files_are_misses_and_rewritten(tmp_path, damage):
    write(tmp_path)
    assert run(tmp_path)["misses"] == 2
    files = data_files(tmp_path)
    assert len(files) == 2
    if damage == "truncate":
        data = open(files[0], "rb").read()
        open(files[0], "wb").write(data[: len(data) // 2])
    elif damage == "flip":
        data = bytearray(open(files[0], "rb").read())
        data[len(data) * 2 // 3] ^= 0x55
        open(files[0], "wb").write(bytes(data))
    elif damage == "empty":
        open(files[0], "wb").close()
    elif damage == "garbage_index":
        open(index_files(tmp_path)[0], "wb").write(os.urandom(300))
    elif damage == "swap":                  # each file holds the other signature's kernel
        a, b = (open(f, "rb").read() for f in files)
        open(files[0], "wb").write(b)
        open(files[1], "wb").write(a)
    res = run(tmp_path)
    assert res["ok"]
    want_misses = {"truncate": 1, "flip": 1, "empty": 1, "garbage_index": 2, "swap": 2}[damage]
    assert res["misses"] == want_misses and res["hits"] == 2 - want_misses
    assert run(tmp_path) == {"ok": True, "hits": 2, "misses": 0, "writes": 0}   # rewritten, intact


def test_processes_starting_at_once(tmp_path):
    import time
    write(tmp_path)
    start = time.time() + 3.0              # all of them import first, then launch together
    procs = [start_child(tmp_path, CK_START=start) for _ in range(8)]
    results = [finish(p) for p in procs]
    assert all(r["ok"] for r in results)
    # each signature was compiled and written once; the others waited and loaded it
    assert sum(r["misses"] for r in results) == 2 and sum(r["writes"] for r in results) == 2
    assert sum(r["hits"] for r in results) == 14
    assert len(data_files(tmp_path)) == 2
    assert run(tmp_path) == {"ok": True, "hits": 2, "misses": 0, "writes": 0}


def test_uncacheable_value_compiles_and_writes_nothing(tmp_path):
    src = tmp_path / "ucmod.py"
    src.write_text('''
import threading
import gpujit as gpu
LOCK = threading.Lock()        # read by the kernel's code below: has no fingerprint


@gpu.jit(cache=True)
def k(r):
    if LOCK is None:
        r[0] = 0
    else:
        r[0] = 1
''')
    sys.path.insert(0, str(tmp_path))
    os.environ["GPUJIT_CACHE_DIR"] = str(tmp_path / "cache")
    try:
        import ucmod
        from gpujit.caching import fingerprint
        assert fingerprint(ucmod.k.py_func) is None
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("ucmod", None)
        del os.environ["GPUJIT_CACHE_DIR"]
    assert data_files(tmp_path) == []
