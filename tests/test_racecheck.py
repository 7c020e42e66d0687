"""racecheck=True on the CPU target (runtime/cpu_race.c): data races between the threads of a
block with no barrier between them are a gpujit.RaceError at the launch, naming the kind (RAW,
WAR, WAW), the block, both threads and both source lines; barriers (syncthreads, and syncwarp
within a warp) order accesses, atomics do not race with atomics, and different blocks are not
compared. Each line a report names is found by the `# L:name` marker on it."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import gpujit as gpu
from gpujit import _core

HERE = os.path.abspath(__file__)


@pytest.fixture(autouse=True)
def cpu_target():
    """The race detector is the CPU target's (on a GPU it is compute-sanitizer's racecheck):
    these tests run there on a machine with a GPU too."""
    _core.set_target("cpu")
    yield
    _core.set_target(None)
with open(HERE) as _f:
    MARKS = {m.group(1): i + 1 for i, line in enumerate(_f) for m in [re.search(r"# L:(\w+)", line)] if m}


def at(name):
    """file:line of the line marked `# L:name`."""
    return "%s:%d" % (HERE, MARKS[name])


def races_of(launch):
    with pytest.raises(gpu.RaceError) as e:
        launch()
    return e.value


# -- the warp-synchronous reduction, without and with syncwarp -------------------------------

def warp_reduce_racy(out, x):
    s = gpu.shared.array(64, gpu.float32)
    tid = gpu.threadIdx.x
    s[tid] = x[tid]
    gpu.syncthreads()
    if tid < 32:
        s[tid] += s[tid + 32]  # L:w32
        s[tid] += s[tid + 16]  # L:w16
        s[tid] += s[tid + 8]   # L:w8
        s[tid] += s[tid + 4]   # L:w4
        s[tid] += s[tid + 2]   # L:w2
        s[tid] += s[tid + 1]   # L:w1
    if tid == 0:
        out[0] = s[0]


def test_warp_synchronous_reduction_without_barriers_is_reported():
    k = gpu.jit(racecheck=True)(warp_reduce_racy)
    out = np.zeros(1, np.float32)
    e = races_of(lambda: k[1, 64](out, np.ones(64, np.float32)))
    msg = str(e)
    assert msg.startswith("kernel 'warp_reduce_racy': racecheck: "), msg
    # Thread 0 runs its whole branch before thread 1 starts (no barrier lets the others in): it
    # read s[1] at the last step, which thread 1 then overwrites at its first, and so on for
    # s[2], s[4], s[8] and s[16]: five pairs of lines, each a write-after-read.
    assert [(r["kind"], r["lines"], r["threads"], r["shared_offset"], r["accesses"]) for r in e.races] == [
        ("WAR", (at("w%d" % off), at("w32")), ((0, 0, 0), (off, 0, 0)), 4 * off, ("read", "write"))
        for off in (1, 2, 4, 8, 16)]
    assert all(r["block"] == (0, 0, 0) and r["what"] == "shared array 's'" for r in e.races)
    assert "(5 distinct below):\n  WAR hazard in block (0, 0, 0) at shared memory offset 4 (0x" in msg, msg
    assert ("shared array 's': read by thread (0, 0, 0) at %s, then write by thread (1, 0, 0) at %s"
            % (at("w1"), at("w32"))) in msg, msg
    assert isinstance(e, gpu.LaunchError)


def warp_reduce_syncwarp(out, x):
    s = gpu.shared.array(64, gpu.float32)
    tid = gpu.threadIdx.x
    s[tid] = x[tid]
    s[tid + 32] = 0.0
    gpu.syncwarp()
    v = s[tid] + s[tid + 16]
    gpu.syncwarp()
    s[tid] = v
    gpu.syncwarp()
    v = s[tid] + s[tid + 8]
    gpu.syncwarp()
    s[tid] = v
    gpu.syncwarp()
    v = s[tid] + s[tid + 4]
    gpu.syncwarp()
    s[tid] = v
    gpu.syncwarp()
    v = s[tid] + s[tid + 2]
    gpu.syncwarp()
    s[tid] = v
    gpu.syncwarp()
    v = s[tid] + s[tid + 1]
    gpu.syncwarp()
    s[tid] = v
    gpu.syncwarp()
    if tid == 0:
        out[0] = s[0]


def test_syncwarp_orders_the_lanes_of_a_warp():
    k = gpu.jit(racecheck=True)(warp_reduce_syncwarp)
    out = np.zeros(1, np.float32)
    x = np.arange(32, dtype=np.float32)
    k[1, 32](out, x)
    assert out[0] == x.sum()


def across_warps(out):
    s = gpu.shared.array(64, gpu.int32)
    tid = gpu.threadIdx.x
    if tid == 0:
        s[0] = 5  # L:xw_write
    gpu.syncwarp()
    if tid == 32:
        out[0] = s[0]  # L:xw_read


def test_syncwarp_does_not_order_two_warps():
    k = gpu.jit(racecheck=True)(across_warps)
    e = races_of(lambda: k[1, 64](np.zeros(1, np.int32)))
    assert [(r["kind"], r["threads"], r["lines"]) for r in e.races] == [
        ("RAW", ((0, 0, 0), (32, 0, 0)), (at("xw_write"), at("xw_read")))]
    want = "write by thread (0, 0, 0) at %s, then read by thread (32, 0, 0) at %s" % (at("xw_write"), at("xw_read"))
    assert "RAW hazard in block (0, 0, 0) at shared memory offset 0 (0x" in str(e) and want in str(e), str(e)


# -- a correct block reduction ----------------------------------------------------------------

def tree_reduce(out, x):
    s = gpu.shared.array(128, gpu.float64)
    tid = gpu.threadIdx.x
    i = gpu.grid(1)
    s[tid] = x[i] if i < x.size else 0.0
    gpu.syncthreads()
    step = 64
    while step > 0:
        if tid < step:
            s[tid] += s[tid + step]
        gpu.syncthreads()
        step //= 2
    if tid == 0:
        out[gpu.blockIdx.x] = s[0]


def test_barrier_separated_reduction_reports_nothing():
    k = gpu.jit(racecheck=True)(tree_reduce)
    x = np.random.default_rng(1).standard_normal(1000)
    out = np.zeros(8)
    k[8, 128](out, x)
    np.testing.assert_allclose(out.sum(), x.sum())
    assert "!{!\"fibers\"}" in k.inspect_llvm(k.signatures[0])  # the scheme whose barriers the runtime sees


# -- RAW, WAR and WAW in shared memory --------------------------------------------------------

def shared_raw(out):
    s = gpu.shared.array(32, gpu.float32)
    t = gpu.threadIdx.x
    s[t] = t  # L:raw_w
    if t > 0:
        out[t] = s[t - 1]  # L:raw_r


def test_shared_raw_across_threads():
    k = gpu.jit(racecheck=True)(shared_raw)
    e = races_of(lambda: k[1, 32](np.zeros(32, np.float32)))
    r = e.races[0]
    assert (r["kind"], r["threads"], r["lines"], r["accesses"]) == (
        "RAW", ((0, 0, 0), (1, 0, 0)), (at("raw_w"), at("raw_r")), ("write", "read"))
    assert r["shared_offset"] == 0
    # each of the 31 reads of a neighbour's element is one hazard of 4 bytes
    assert str(e).startswith("kernel 'shared_raw': racecheck: 124 data race hazards")
    assert len(e.races) == 1


def test_barrier_between_write_and_read_is_not_a_race():
    def ok(out):
        s = gpu.shared.array(32, gpu.float32)
        t = gpu.threadIdx.x
        s[t] = t
        gpu.syncthreads()
        if t > 0:
            out[t] = s[t - 1]
    out = np.zeros(32, np.float32)
    gpu.jit(racecheck=True)(ok)[1, 32](out)
    np.testing.assert_array_equal(out[1:], np.arange(31))


def shared_war(out):
    s = gpu.shared.array(33, gpu.int64)
    t = gpu.threadIdx.x
    out[t] = s[t + 1]  # L:war_r
    s[t] = t  # L:war_w


def test_shared_war():
    k = gpu.jit(racecheck=True)(shared_war)
    e = races_of(lambda: k[1, 16](np.zeros(16, np.int64)))
    r = e.races[0]
    assert (r["kind"], r["threads"], r["lines"], r["accesses"], r["shared_offset"]) == (
        "WAR", ((0, 0, 0), (1, 0, 0)), (at("war_r"), at("war_w")), ("read", "write"), 8)
    assert "WAR hazard in block (0, 0, 0) at shared memory offset 8" in str(e)


def shared_waw(flag):
    s = gpu.shared.array(1, gpu.int32)
    s[0] = gpu.threadIdx.y  # L:waw
    gpu.syncthreads()
    flag[0] = s[0]


def test_shared_waw_2d_block():
    k = gpu.jit(racecheck=True)(shared_waw)
    e = races_of(lambda: k[(1, 2), (1, 3)](np.zeros(1, np.int32)))
    # blocks are not compared with each other: each block reports its own
    assert {(r["kind"], r["block"], r["threads"], r["lines"]) for r in e.races} >= {
        ("WAW", (0, 0, 0), ((0, 0, 0), (0, 1, 0)), (at("waw"), at("waw")))}
    assert all(r["kind"] == "WAW" for r in e.races)
    want = "write by thread (0, 0, 0) at %s, then write by thread (0, 1, 0)" % at("waw")
    assert "WAW hazard in block (0, " in str(e) and want in str(e), str(e)
    # flag[0] after the barrier is written by thread (0, 0, 0) of each block: between blocks, not reported


# -- global memory ----------------------------------------------------------------------------

def global_raw(x):
    t = gpu.threadIdx.x
    x[t] = 2 * t  # L:g_w
    if t > 0:
        x[t] = x[t - 1] + 1  # L:g_r


def test_global_memory_race_within_a_block():
    k = gpu.jit(racecheck=True)(global_raw)
    x = np.zeros(64, np.int32)
    e = races_of(lambda: k[1, 64](x))
    r = e.races[0]
    assert (r["kind"], r["threads"], r["lines"], r["what"], r["shared_offset"]) == (
        "RAW", ((0, 0, 0), (1, 0, 0)), (at("g_w"), at("g_r")), "array 'x'", -1)
    assert r["address"] == x.ctypes.data
    want = "RAW hazard in block (0, 0, 0) at address 0x%x, array 'x': write by thread (0, 0, 0)" % x.ctypes.data
    assert want in str(e), str(e)


def one_per_block(out):
    out[0] = gpu.blockIdx.x


def test_blocks_writing_one_address_are_not_compared():
    out = np.zeros(1, np.int32)
    gpu.jit(racecheck=True)(one_per_block)[16, 1](out)
    assert 0 <= out[0] < 16


# -- atomics ----------------------------------------------------------------------------------

def count(out, sh_out):
    c = gpu.shared.array(1, gpu.int32)
    if gpu.threadIdx.x == 0:
        c[0] = 0
    gpu.syncthreads()
    gpu.atomic.add(c, 0, 1)
    gpu.atomic.add(out, 0, 1)
    gpu.atomic.max(out, 1, gpu.threadIdx.x)
    gpu.syncthreads()
    if gpu.threadIdx.x == 0:
        sh_out[gpu.blockIdx.x] = c[0]


def test_atomics_do_not_race_with_atomics():
    out = np.zeros(2, np.int32)
    sh = np.zeros(3, np.int32)
    gpu.jit(racecheck=True)(count)[3, 96](out, sh)
    assert out[0] == 288 and out[1] == 95
    np.testing.assert_array_equal(sh, [96, 96, 96])


def atomic_then_read(out, r):
    gpu.atomic.add(out, 0, 1)  # L:at_add
    if gpu.threadIdx.x == 1:
        r[0] = out[0]  # L:at_read


def test_a_plain_read_races_with_an_atomic():
    k = gpu.jit(racecheck=True)(atomic_then_read)
    e = races_of(lambda: k[1, 4](np.zeros(1, np.int32), np.zeros(1, np.int32)))
    # threads 0 and 1 add (no hazard: both atomic), thread 1 reads, thread 2 adds: its atomic
    # write after thread 1's plain read
    assert [(r["kind"], r["threads"], r["lines"], r["accesses"]) for r in e.races] == [
        ("WAR", ((1, 0, 0), (2, 0, 0)), (at("at_read"), at("at_add")), ("read", "atomic"))]
    want = "read by thread (1, 0, 0) at %s, then atomic by thread (2, 0, 0) at %s" % (at("at_read"), at("at_add"))
    assert want in str(e), str(e)


# -- turning it on, and what it costs nothing to leave off ------------------------------------

def test_off_by_default_and_environment(monkeypatch):
    out = np.zeros(32, np.float32)
    monkeypatch.delenv("GPUJIT_CPU_RACECHECK", raising=False)
    k = gpu.jit(shared_raw)
    k[1, 32](out)  # no detector: the race goes unreported
    sig = "void(float32[::1])"
    off = k.compile(sig)
    monkeypatch.setenv("GPUJIT_CPU_RACECHECK", "yes")
    on = k.compile(sig)  # read at each compile: a new key, a new kernel
    assert on is not off and k.compile(sig) is on and len(k._compiled) == 2
    e = races_of(lambda: gpu.jit(shared_raw)[1, 32](out))
    assert e.races[0]["lines"] == (at("raw_w"), at("raw_r"))
    gpu.jit(racecheck=False)(shared_raw)[1, 32](out)  # the option wins over the environment
    monkeypatch.setenv("GPUJIT_CPU_RACECHECK", "0")
    gpu.jit(shared_raw)[1, 32](out)
    monkeypatch.setenv("GPUJIT_CPU_RACECHECK", "sometimes")
    with pytest.raises(ValueError, match="GPUJIT_CPU_RACECHECK='sometimes': use one of"):
        gpu.jit(shared_raw)[1, 32](out)
    with pytest.raises(ValueError, match="GPUJIT_CPU_RACECHECK"):
        from gpujit import config
        config.check_environment()


def test_no_effect_on_the_gpu_target():
    sig = "void(float32[::1])"
    plain = gpu.jit(shared_raw).compile(sig, target="cuda")
    checked = gpu.jit(racecheck=True)(shared_raw).compile(sig, target="cuda")
    assert checked.ptx == plain.ptx
    assert "race" not in gpu.compile_ptx(shared_raw, sig)[0]


def test_device_function_lines_and_option():
    @gpu.jit(device=True, racecheck=True)  # accepted; the kernel decides
    def put(s, i, v):
        s[i] = v  # L:dev_put

    @gpu.jit(racecheck=True)
    def k(out):
        s = gpu.shared.array(4, gpu.int32)
        put(s, 0, gpu.threadIdx.x)
        gpu.syncthreads()
        out[0] = s[0]

    e = races_of(lambda: k[1, 2](np.zeros(1, np.int32)))
    assert e.races[0]["kind"] == "WAW" and e.races[0]["lines"] == (at("dev_put"), at("dev_put"))
    assert e.races[0]["threads"] == ((0, 0, 0), (1, 0, 0))


CACHED = '''
import numpy as np
import gpujit as gpu


def body(out):
    s = gpu.shared.array(8, gpu.int32)
    t = gpu.threadIdx.x
    s[t] = t
    if t > 0:
        out[t] = s[t - 1]


# one function, two entries: racecheck is part of the key
raw = gpu.jit(cache=True, racecheck=True)(body)
raw_plain = gpu.jit(cache=True)(body)


try:
    raw[1, 8](np.zeros(8, np.int32))
    print("none")
except gpu.RaceError as e:
    print(e.races[0]["kind"], e.races[0]["lines"][0].rsplit("/", 1)[1], e.races[0]["lines"][1].rsplit("/", 1)[1])
raw_plain[1, 8](np.zeros(8, np.int32))
f = lambda k: "%d %d" % (sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values()))
print(f(raw), f(raw_plain))
'''


def test_cached_on_disk_keeps_its_sites(tmp_path):
    (tmp_path / "rcmod.py").write_text(CACHED)
    env = dict(os.environ, GPUJIT_TARGET="cpu", PYTHONPATH=os.pathsep.join([str(tmp_path)] + sys.path))
    env.pop("GPUJIT_CPU_RACECHECK", None)

    def run():
        return subprocess.run([sys.executable, str(tmp_path / "rcmod.py")], env=env, capture_output=True, text=True,
                              check=True, cwd=tmp_path).stdout.split("\n")

    assert run()[:2] == ["RAW rcmod.py:9 rcmod.py:11", "0 1 0 1"]
    assert run()[:2] == ["RAW rcmod.py:9 rcmod.py:11", "1 0 1 0"]  # from disk: still checked, still named


def halves(x):
    # each of two threads walks its own half: more memory than the shadow holds at once
    t = gpu.threadIdx.x
    n = x.size // 2
    for i in range(t * n, t * n + n):
        x[i] += 1.0


def test_a_block_touching_much_memory_is_checked_in_windows():
    x = np.zeros(1 << 20, np.float32)  # 4 MiB: the shadow starts afresh several times
    gpu.jit(racecheck=True)(halves)[1, 2](x)
    assert (x == 1).all()

    @gpu.jit(racecheck=True)
    def both(x):
        for i in range(x.size):
            x[i] += 1.0  # L:both

    small = np.zeros(4096, np.float32)  # within one window: found
    e = races_of(lambda: both[1, 2](small))
    assert e.races[0]["kind"] == "RAW" and e.races[0]["threads"] == ((0, 0, 0), (1, 0, 0))
    assert e.races[0]["lines"] == (at("both"), at("both")) and e.races[0]["accesses"] == ("write", "read")


def test_the_first_eight_distinct_hazards_are_named():
    @gpu.jit(racecheck=True)
    def ten(out):
        s = gpu.shared.array(10, gpu.int32)
        t = gpu.threadIdx.x
        s[0] = t  # L:ten0
        s[1] = t
        s[2] = t
        s[3] = t
        s[4] = t
        s[5] = t
        s[6] = t
        s[7] = t  # L:ten7
        s[8] = t
        s[9] = t
        out[t] = t

    e = races_of(lambda: ten[1, 2](np.zeros(2, np.int32)))
    assert str(e).startswith("kernel 'ten': racecheck: 40 data race hazards between threads of a block with no "
                             "barrier between them (the first 8 distinct below):\n  WAW hazard"), str(e)
    assert [r["lines"] for r in e.races] == [("%s:%d" % (HERE, MARKS["ten0"] + i),) * 2 for i in range(8)]
    assert e.races[7]["lines"] == (at("ten7"), at("ten7")) and e.races[7]["shared_offset"] == 28
