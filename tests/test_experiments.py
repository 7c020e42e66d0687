"""Code-generation experiments chosen per compile by GPUJIT_EXPERIMENT (measured on the GPU
by benchmarks/lang_bench.py --variants): each changes the PTX it is meant to change and no
other, and its PTX assembles."""
import math
import re

import numpy as np
import pytest

import gpujit as gpu
from conftest import assemble_ptx


def ptx_of(fn, sig, experiment, monkeypatch):
    if experiment:
        monkeypatch.setenv("GPUJIT_EXPERIMENT", experiment)
    else:
        monkeypatch.delenv("GPUJIT_EXPERIMENT", raising=False)
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
    monkeypatch.setenv("GPUJIT_EXPERIMENT", "hoist-all")
    rng = np.random.default_rng()
    n = 1000
    S, K, T = (rng.uniform(1, 10, n).astype(np.float32) for _ in range(3))
    out = np.full(n, np.nan, np.float32)
    gpu.jit(BS_SIG)(bs)[(n + 127) // 128, 128](out, S, K, T, np.float32(0.1))
    want = np.log(S / K) / np.sqrt(T) + np.float32(0.1) * T
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-6)
