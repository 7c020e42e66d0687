"""The on-disk cache keeps a GPU kernel's machine code: the process that compiles a kernel
stores the cubin the driver's linker made with its PTX, and a second process loads that cubin
(cubin_hits, no compilation by the driver) and gets the right results; a cubin of another
driver version, or one the driver refuses, is replaced by a fresh one and the results stay
right. Skipped without a CUDA driver and device."""
import json
import os
import pickle
import subprocess
import sys

import pytest

from gpujit import _core

pytestmark = pytest.mark.skipif(not _core.is_available(), reason="no CUDA driver or device")

MODULE = '''
import gpujit as gpu


@gpu.jit(cache=True)
def saxpy(out, a, x, y):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]
'''

CHILD = '''
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import saxmod
rng = np.random.default_rng()
x = rng.standard_normal(100003).astype(np.float32)
y = rng.standard_normal(100003).astype(np.float32)
out = np.full_like(x, np.nan)
saxmod.saxpy[(x.size + 255) // 256, 256](out, np.float32(2.5), x, y)
ok = bool(np.allclose(out, np.float32(2.5) * x + y, rtol=1e-6, atol=1e-6))
s = saxmod.saxpy.stats
print(json.dumps({"ok": ok, "stats": [sum(c.values()) for c in (s.cache_hits, s.cache_misses, s.cache_writes,
                                                                   s.cubin_hits, s.cubin_writes)]}))
'''


def child(src, cache):
    env = dict(os.environ, GPUJIT_CACHE_DIR=str(cache), GPUJIT_TARGET="cuda")
    p = subprocess.run([sys.executable, "-c", CHILD, str(src)], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["ok"]
    return tuple(r["stats"])


def data_file(cache):
    (path,) = [os.path.join(d, f) for d, _, fs in os.walk(cache) for f in fs if f.endswith(".nbc")]
    return path


def rewrite(path, change):
    """The entry with its state changed by change(state), under a valid checksum."""
    from gpujit import caching
    with open(path, "rb") as f:
        magic, key_hash, _, payload = pickle.loads(f.read())
    state = pickle.loads(payload)
    change(state)
    payload = pickle.dumps(state, protocol=4)
    with open(path, "wb") as f:
        f.write(pickle.dumps((magic, key_hash, caching._digest(payload).hexdigest(), payload), protocol=4))


def stored_cubin(path):
    with open(path, "rb") as f:
        return pickle.loads(pickle.loads(f.read())[3]).get("cubin")


@pytest.fixture
def src(tmp_path):
    d = tmp_path / "src"
    d.mkdir()
    (d / "saxmod.py").write_text(MODULE)
    return d


def test_second_process_loads_the_cubin(src, tmp_path):
    cache = tmp_path / "cache"
    # (hits, misses, entries written, cubin hits, cubins written)
    assert child(src, cache) == (0, 1, 1, 0, 1)
    tag, image = stored_cubin(data_file(cache))
    cc = tuple(_core.device_info(_core.current_device())["compute_capability"])
    assert tag == (cc, _core.driver_version()) and image[:4] == b"\x7fELF"
    assert child(src, cache) == (1, 0, 0, 1, 0)            # cubin hit: the driver compiled nothing
    assert child(src, cache) == (1, 0, 0, 1, 0)


def test_other_drivers_cubin_is_replaced(src, tmp_path):
    cache = tmp_path / "cache"
    child(src, cache)
    path = data_file(cache)
    tag, image = stored_cubin(path)
    rewrite(path, lambda s: s.update(cubin=((tag[0], tag[1] - 10), image)))
    assert child(src, cache) == (1, 0, 0, 0, 1)             # compiled from the PTX, stored anew
    assert stored_cubin(path)[0] == tag
    assert child(src, cache) == (1, 0, 0, 1, 0)


def test_refused_cubin_falls_back_to_the_ptx(src, tmp_path):
    cache = tmp_path / "cache"
    child(src, cache)
    path = data_file(cache)
    tag, image = stored_cubin(path)
    rewrite(path, lambda s: s.update(cubin=(tag, b"\x7fELF not a cubin" + bytes(64))))
    assert child(src, cache) == (1, 0, 0, 0, 1)             # the driver refused it: right results anyway
    assert stored_cubin(path)[1][:4] == b"\x7fELF" and child(src, cache) == (1, 0, 0, 1, 0)
