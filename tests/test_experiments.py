"""The GPU path's passes after O3, chosen per compile by GPUJIT_PTX_PASSES (all of them by
default; measured on the GPU by benchmarks/lang_bench.py --variants): each changes the PTX it
is meant to change and no other, and its PTX assembles."""
import math
import re

import numpy as np
import pytest

import gpujit as gpu
from conftest import assemble_ptx


def ptx_of(fn, sig, experiment, monkeypatch):
    monkeypatch.setenv("GPUJIT_PTX_PASSES", experiment or "none")
    ptx, _ = gpu.compile_ptx(fn, sig, cc=(9, 0))
    assemble_ptx([("%s %s %s" % (fn.__name__, sig, experiment), ptx)])
    return ptx


def body(ptx):
    out = []
    for line in ptx.splitlines():
        line = line.split("//")[0].strip()
        if line and not line.startswith((".", "{", "}", ")")) and not line.endswith(":"):
            out.append(line)
    return out


def order(ptx, *patterns):
    """Index of the first instruction matching each pattern."""
    ins = body(ptx)
    return [next(i for i, s in enumerate(ins) if re.search(p, s)) for p in patterns]


def bs(out, S, K, T, r):
    i = gpu.grid(1)
    if i < S.size:
        st = math.sqrt(T[i])
        out[i] = math.log(S[i] / K[i]) / st + r * T[i]


BS_SIG = "void(float32[::1], float32[::1], float32[::1], float32[::1], float32)"


def test_hoist_issues_loads_before_sqrt(monkeypatch):
    base = ptx_of(bs, BS_SIG, None, monkeypatch)
    loads = [i for i, s in enumerate(body(base)) if s.startswith("ld.global")]
    (sq,) = order(base, r"^sqrt\.rn\.f32")
    assert loads[0] < sq < loads[-1]  # source order: T[i], sqrt, S[i], K[i]
    for exp in ("hoist", "hoist-all"):
        ptx = ptx_of(bs, BS_SIG, exp, monkeypatch)
        loads = [i for i, s in enumerate(body(ptx)) if s.startswith("ld.global")]
        (sq,) = order(ptx, r"^sqrt\.rn\.f32")
        assert len(loads) == 3 and loads[-1] < sq, exp


def load_after_store(out, x, y):
    i = gpu.grid(1)
    if i < x.size:
        s = math.sqrt(x[i])
        out[i] = s
        out[i + 1] = y[i] / s  # y[i] may not move above the store (out and y may alias)


def test_hoist_keeps_loads_below_stores(monkeypatch):
    sig = "void(float32[::1], float32[::1], float32[::1])"
    for exp in ("hoist", "hoist-all"):
        ptx = ptx_of(load_after_store, sig, exp, monkeypatch)
        st, = order(ptx, r"^st\.global")
        loads = [i for i, s in enumerate(body(ptx)) if s.startswith("ld.global")]
        assert loads[-1] > st, exp


def guarded(out, x, idx):
    i = gpu.grid(1)
    if i < out.size:
        s = math.sqrt(x[i])
        j = idx[i]
        if j >= 0:  # the load below stays under its guard
            s += x[j]
        out[i] = s


def test_hoist_never_leaves_the_block(monkeypatch):
    sig = "void(float32[::1], float32[::1], int64[::1])"
    for exp in ("hoist", "hoist-all"):
        ptx = ptx_of(guarded, sig, exp, monkeypatch)
        ins = body(ptx)
        br = next(i for i, s in enumerate(ins) if s.startswith("@") and "bra" in s)
        loads = [i for i, s in enumerate(ins) if s.startswith("ld.global.f32")]
        assert loads[-1] > br, exp


def saxpy(out, a, x, y):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def test_hoist_leaves_kernels_without_slow_paths_alone(monkeypatch):
    sig = "void(float32[::1], float32, float32[::1], float32[::1])"
    assert ptx_of(saxpy, sig, "hoist", monkeypatch) == ptx_of(saxpy, sig, None, monkeypatch)


def test_experiments_do_not_change_cpu_results(monkeypatch):
    # the experiments are GPU code generation only: the CPU target computes the same
    monkeypatch.setenv("GPUJIT_PTX_PASSES", "hoist-all")
    rng = np.random.default_rng()
    n = 1000
    S, K, T = (rng.uniform(1, 10, n).astype(np.float32) for _ in range(3))
    out = np.full(n, np.nan, np.float32)
    gpu.jit(BS_SIG)(bs)[(n + 127) // 128, 128](out, S, K, T, np.float32(0.1))
    want = np.log(S / K) / np.sqrt(T) + np.float32(0.1) * T
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-6)


TILE = 64


def tiles(pos, acc):
    sx = gpu.shared.array(TILE, gpu.float32)
    i = gpu.grid(1)
    xi = pos[i]
    a = gpu.float32(0.0)
    for start in range(0, pos.size, TILE):
        sx[gpu.threadIdx.x] = pos[start + gpu.threadIdx.x]
        gpu.syncthreads()
        for k in range(TILE):
            d = sx[k] - xi
            a += d / math.sqrt(d * d + gpu.float32(0.01))
        gpu.syncthreads()
    acc[i] = a


TILES_SIG = "void(float32[::1], float32[::1])"


def test_shortptr_addresses_shared_memory_with_32_bits(monkeypatch):
    base = ptx_of(tiles, TILES_SIG, None, monkeypatch)
    assert re.search(r"ld\.shared\.\S+\s+[^;]*\[%rd", base)
    ptx = ptx_of(tiles, TILES_SIG, "shortptr", monkeypatch)
    assert re.search(r"ld\.shared\.\S+\s+[^;]*\[%r\d", ptx)
    assert not re.search(r"\.shared\.\S+\s+[^;]*\[%rd", ptx)
    # the option is on only while its machine is made: the next compile without it is main's again
    assert ptx_of(tiles, TILES_SIG, None, monkeypatch) == base


def test_unroll_doubles_the_constant_count_loop(monkeypatch):
    def sqrts(ptx):
        return sum(1 for s in body(ptx) if s.startswith("sqrt.rn.f32"))

    base = ptx_of(tiles, TILES_SIG, None, monkeypatch)
    ptx = ptx_of(tiles, TILES_SIG, "unroll", monkeypatch)
    assert sqrts(base) >= 2 and sqrts(ptx) == 2 * sqrts(base)


def stencil(src, dst):
    x, y = gpu.grid(2)
    if 0 < y < src.shape[0] - 1 and 0 < x < src.shape[1] - 1:
        dst[y, x] = gpu.float32(0.25) * (src[y - 1, x] + src[y + 1, x] + src[y, x - 1] + src[y, x + 1])


def test_mergegep_forms_each_address_in_one_step(monkeypatch):
    sig = "void(float32[:, ::1], float32[:, ::1])"
    base = ptx_of(stencil, sig, None, monkeypatch)
    ptx = ptx_of(stencil, sig, "mergegep", monkeypatch)
    assert len(body(ptx)) < len(body(base))
    assert sum(s.startswith("ld.global") for s in body(ptx)) == 4


@pytest.mark.parametrize("experiment", ["hoist", "unroll", "mergegep", "shortptr"])
def test_experiments_leave_other_kernels_alone(experiment, monkeypatch):
    sig = "void(float32[::1], float32, float32[::1], float32[::1])"
    assert ptx_of(saxpy, sig, experiment, monkeypatch) == ptx_of(saxpy, sig, None, monkeypatch)


def test_experiments_key_the_disk_cache(monkeypatch):
    from gpujit import caching
    monkeypatch.delenv("GPUJIT_PTX_PASSES", raising=False)
    main = caching._build()
    monkeypatch.setenv("GPUJIT_PTX_PASSES", "hoist")
    assert caching._build() != main


@pytest.mark.parametrize("experiment", ["hoist", "hoist-all", "mergegep", "unroll"])
def test_experiments_keep_source_lines(experiment, monkeypatch):
    # instructions moved or rebuilt keep their own line (lineinfo's .loc directives)
    def lines(ptx):
        return {int(s.split()[2]) for s in ptx.splitlines() if s.strip().startswith(".loc")}

    for fn, sig in ((bs, BS_SIG), (stencil, "void(float32[:, ::1], float32[:, ::1])"), (tiles, TILES_SIG)):
        monkeypatch.setenv("GPUJIT_PTX_PASSES", "none")
        base = gpu.compile_ptx(fn, sig, cc=(9, 0), lineinfo=True)[0]
        monkeypatch.setenv("GPUJIT_PTX_PASSES", experiment)
        ptx = gpu.compile_ptx(fn, sig, cc=(9, 0), lineinfo=True)[0]
        assert lines(ptx) == lines(base), (fn.__name__, experiment)


def test_default_is_every_pass_and_none_is_o3_alone(monkeypatch):
    sig = "void(float32[:, ::1], float32[:, ::1])"
    monkeypatch.delenv("GPUJIT_PTX_PASSES", raising=False)
    default = gpu.compile_ptx(stencil, sig, cc=(9, 0))[0]
    assert default == ptx_of(stencil, sig, "hoist,shortptr,unroll,mergegep", monkeypatch)
    assert default != ptx_of(stencil, sig, "none", monkeypatch) == ptx_of(stencil, sig, "", monkeypatch)
