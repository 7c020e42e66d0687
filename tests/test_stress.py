"""Stress: many launches without memory growth; eight Python threads compiling
and launching different kernels at once, with correct results."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import gpujit as gpu

HERE = os.path.dirname(os.path.abspath(__file__))


def test_many_launches_do_not_grow_memory():
    # under pytest-xdist other workers allocate on the same GPU at the same time, so the
    # GPU-wide free memory says nothing about this process (scripts/gpu.sh stress judges it alone)
    shared = ["--device-shared"] if os.environ.get("PYTEST_XDIST_WORKER") else []
    r = subprocess.run([sys.executable, os.path.join(HERE, "stress", "launches.py"), "--count", "100000"] + shared,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def make_kernel(k):
    scale = k + 1  # a closure constant: each thread's kernel is a different compilation

    @gpu.jit
    def kern(out, x):
        i = gpu.grid(1)
        if i < x.size:
            acc = 0
            for j in range(scale):
                acc += x[i] * (j + 1)
            out[i] = acc

    return kern, scale * (scale + 1) // 2


def test_eight_threads_compile_and_launch():
    errors = []

    def work(k):
        try:
            rng = np.random.default_rng()
            for rep in range(20):
                kern, factor = make_kernel(k * 100 + rep % 3)
                x = rng.integers(-1000, 1000, 1000 + k)
                out = np.full(x.size, -7, np.int64)
                kern[(x.size + 127) // 128, 128](out, x)
                if not (out == x * factor).all():
                    errors.append("thread %d rep %d: wrong result" % (k, rep))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append("thread %d: %r" % (k, e))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not errors, errors


@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="AddressSanitizer's quarantine holds freed memory back from the OS")
def test_compiles_do_not_leak():
    """Each CPU-target compile once leaked a whole LLVM context (~68 KB)."""
    from gpujit import _core

    def kern(out, x):
        i = gpu.grid(1)
        if i < x.size:
            out[i] = x[i] * 3

    def rss_mb():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    sig = "void(float64[::1], float64[::1])"
    for target in ("cpu", "cuda"):
        for _ in range(50):
            _core.compile(kern.__code__, kern.__globals__, None, sig, target=target)
        base = rss_mb()
        for _ in range(400):
            _core.compile(kern.__code__, kern.__globals__, None, sig, target=target)
        assert rss_mb() - base < 8.0, (target, rss_mb() - base)
