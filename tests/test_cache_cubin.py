"""The on-disk cache's machine code (caching.py, src/cache.c). A GPU kernel's entry also keeps
the cubin the driver's linker made, tagged with the compute capability and the driver version;
another process with that tag loads it, one with another tag compiles the PTX and stores its
own, and a damaged file is a miss. No GPU here: the driver's two calls (module_cubin,
module_load_cubin) are replaced by fakes, the tag is forced, and the kernels are the CPU
target's, which also run and are checked; tests/gpu/test_cache_cubin_gpu.py checks the real
thing on a GPU. A CPU kernel's entry keeps the JIT's object code, which another process links
without generating code (its bitcode is the fallback where the object does not link)."""
import importlib.util
import os
import pickle

import numpy as np
import pytest

from gpujit import _core, caching

SOURCE = '''
import gpujit as gpu


@gpu.jit(cache=True)
def scale(r, x, a):
    i = gpu.grid(1)
    if i < r.size:
        r[i] = a * x[i]
'''

TAG = ((9, 0), 12080)
_count = [0]


class FakeDriver:
    """module_cubin makes a distinct image per call; module_load_cubin records what it loaded."""

    def __init__(self, monkeypatch, tag=TAG, refuse=False):
        self.made, self.loaded, self.refuse = [], [], refuse
        monkeypatch.setattr(caching, "cubin_tag", lambda target, cc: tag)
        monkeypatch.setattr(_core, "module_cubin", self.cubin, raising=False)
        monkeypatch.setattr(_core, "module_load_cubin", self.load, raising=False)

    def cubin(self, kernel):
        image = b"\x7fELF cubin %d %s" % (len(self.made), os.urandom(8).hex().encode())
        self.made.append(image)
        return image

    def load(self, kernel, image):
        if self.refuse:
            raise RuntimeError("CUDA_ERROR_INVALID_IMAGE")
        self.loaded.append(bytes(image))


def fresh(path):
    """The kernel as another process sees it: the module executed anew (a new dispatcher)."""
    _count[0] += 1
    spec = importlib.util.spec_from_file_location("cubin_mod_%d" % _count[0], str(path))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m.scale


def run(k):
    x = np.random.default_rng().standard_normal(50)
    r = np.full_like(x, np.nan)
    k[1, 64](r, x, 1.5)
    np.testing.assert_array_equal(r, 1.5 * x)


def stored(tmp):
    """The state dicts of every data file (checksums verified by the cache on reading)."""
    out = []
    for d, _, fs in os.walk(tmp / "cache"):
        for f in fs:
            if f.endswith(".nbc"):
                with open(os.path.join(d, f), "rb") as fh:
                    magic, _, _, payload = pickle.loads(fh.read())
                out.append(pickle.loads(payload))
    return out


@pytest.fixture
def src(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUJIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GPUJIT_TARGET", "cpu")
    p = tmp_path / "cubin_src.py"
    p.write_text(SOURCE)
    return p


def counts(k):
    s = k.stats
    return tuple(sum(c.values()) for c in (s.cache_hits, s.cache_misses, s.cache_writes, s.cubin_hits, s.cubin_writes))


def test_compiled_kernel_stores_its_cubin_and_another_process_loads_it(src, tmp_path, monkeypatch):
    drv = FakeDriver(monkeypatch)
    k = fresh(src)
    run(k)
    assert counts(k) == (0, 1, 1, 0, 1)
    (state,) = stored(tmp_path)
    assert state["cubin"] == (TAG, drv.made[0])
    k2 = fresh(src)
    run(k2)
    assert counts(k2) == (1, 0, 0, 1, 0)
    assert drv.loaded == [drv.made[0]] and len(drv.made) == 1   # loaded, not compiled again


def test_another_driver_compiles_the_ptx_and_stores_its_cubin(src, tmp_path, monkeypatch):
    FakeDriver(monkeypatch)
    run(fresh(src))
    newer = FakeDriver(monkeypatch, tag=((9, 0), 13000))
    k = fresh(src)
    run(k)
    assert counts(k) == (1, 0, 0, 0, 1)          # a hit for the entry; its cubin was not this driver's
    assert newer.loaded == [] and len(newer.made) == 1
    (state,) = stored(tmp_path)
    assert state["cubin"] == (((9, 0), 13000), newer.made[0])
    k = fresh(src)
    run(k)
    assert counts(k) == (1, 0, 0, 1, 0) and newer.loaded == [newer.made[0]]


def test_a_cubin_the_driver_refuses_is_replaced(src, tmp_path, monkeypatch):
    FakeDriver(monkeypatch)
    run(fresh(src))
    drv = FakeDriver(monkeypatch, refuse=True)
    k = fresh(src)
    run(k)
    assert counts(k) == (1, 0, 0, 0, 1) and len(drv.made) == 1
    assert stored(tmp_path)[0]["cubin"] == (TAG, drv.made[0])


def test_without_a_gpu_nothing_is_made_and_a_stored_cubin_is_ignored(src, tmp_path, monkeypatch):
    drv = FakeDriver(monkeypatch)
    run(fresh(src))
    monkeypatch.setattr(caching, "cubin_tag", lambda target, cc: None)
    k = fresh(src)
    run(k)
    assert counts(k) == (1, 0, 0, 0, 0) and drv.loaded == [] and len(drv.made) == 1


def test_a_damaged_cubin_is_a_miss(src, tmp_path, monkeypatch):
    drv = FakeDriver(monkeypatch)
    run(fresh(src))
    (path,) = [os.path.join(d, f) for d, _, fs in os.walk(tmp_path / "cache") for f in fs if f.endswith(".nbc")]
    blob = bytearray(open(path, "rb").read())
    at = blob.find(drv.made[0])
    assert at > 0
    blob[at + len(drv.made[0]) - 1] ^= 1          # one bit of the stored machine code
    open(path, "wb").write(bytes(blob))
    k = fresh(src)
    run(k)
    assert counts(k) == (0, 1, 1, 0, 1) and drv.loaded == []    # compiled again, rewritten
    assert stored(tmp_path)[0]["cubin"] == (TAG, drv.made[1])


def test_real_tag_on_this_machine():
    """The CPU target never has one; the GPU target's names the compute capability and driver."""
    assert caching.cubin_tag("cpu", (9, 0)) is None
    if not _core.is_available():
        assert caching.cubin_tag("cuda", (9, 0)) is None
    else:
        cc = tuple(_core.device_info(_core.current_device())["compute_capability"])
        assert caching.cubin_tag("cuda", cc) == (cc, _core.driver_version())
        assert caching.cubin_tag("cuda", (cc[0] + 1, 0)) is None


def rewrite(tmp, change):
    """The entry with its state changed by change(state), under a valid checksum."""
    (path,) = [os.path.join(d, f) for d, _, fs in os.walk(tmp / "cache") for f in fs if f.endswith(".nbc")]
    with open(path, "rb") as f:
        magic, key_hash, _, payload = pickle.loads(f.read())
    state = pickle.loads(payload)
    change(state)
    payload = pickle.dumps(state, protocol=4)
    with open(path, "wb") as f:
        f.write(pickle.dumps((magic, key_hash, caching._digest(payload).hexdigest(), payload), protocol=4))


@pytest.mark.skipif(_core.get_target() != "cpu", reason="an entry of the CPU target (a GPU's holds a cubin)")
def test_cpu_kernel_is_loaded_from_its_object_code(src, tmp_path):
    run(fresh(src))
    (state,) = stored(tmp_path)
    assert state["object"][:4] == b"\x7fELF" and state["bitcode"]
    rewrite(tmp_path, lambda s: s.update(bitcode=b"BC not bitcode"))   # only the object can load now
    ks = [fresh(src) for _ in range(3)]            # the same symbols three times in one process
    for k in ks:
        run(k)
        assert counts(k)[:2] == (1, 0)
    del ks
    import gc
    gc.collect()                                   # their code released
    run(fresh(src))


def test_object_code_that_does_not_link_falls_back_to_the_bitcode(src, tmp_path):
    run(fresh(src))
    rewrite(tmp_path, lambda s: s.update(object=b"\x7fELF" + bytes(100)))
    k = fresh(src)
    run(k)
    assert counts(k)[:2] == (1, 0)
    rewrite(tmp_path, lambda s: s.update(object=None))     # an entry of a build without object code
    k = fresh(src)
    run(k)
    assert counts(k)[:2] == (1, 0)
