"""Stack overflow on the CPU target: a thread that overflows its stack (a big
gpu.local.array, deep recursion in a device function) hits a guard page, and
the launch fails with gpujit.LaunchError instead of killing the interpreter
with SIGSEGV. Later launches, of the same kernels too, still work.

The crashing cases also run in a subprocess, so that a regression shows up as
a failed test instead of a dead test runner."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpujit as gpu
from gpujit import _core

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OVERFLOW = "overflowed its CPU stack"

# 20000 float32 = 80 KB: more than the fibers' default 64 KiB (256 KiB under
# ASan: HUGE covers that), far less than a block function's 8 MiB.
BIG = 20000
SMALL = 256
HUGE = 4 << 20      # 16 MiB: more than a block function's stack too


@pytest.fixture(autouse=True)
def cpu_target():
    _core.set_target("cpu")
    yield
    _core.set_target(None)


def default_stack():
    # fibers get 64 KiB by default, but 256 KiB under AddressSanitizer (scripts/sanitize.sh)
    return "GPUJIT_CPU_STACK" not in os.environ and "libasan" not in os.environ.get("LD_PRELOAD", "")


# The array is filled and read at a runtime index, so that the compiler keeps it.
@gpu.jit
def local_big(out, idx):
    a = gpu.local.array(BIG, gpu.float32)
    t = gpu.threadIdx.x
    for i in range(BIG):
        a[i] = i + t
    gpu.syncthreads()
    out[t] = a[idx[t]]


@gpu.jit
def local_small(out, idx):
    a = gpu.local.array(SMALL, gpu.float32)
    t = gpu.threadIdx.x
    for i in range(SMALL):
        a[i] = i + t
    gpu.syncthreads()
    out[t] = a[idx[t]]


@gpu.jit
def local_huge_barrier(out, idx, idx2):
    a = gpu.local.array(HUGE, gpu.float32)
    t = gpu.threadIdx.x
    a[idx[t]] = t
    gpu.syncthreads()
    out[t] = a[idx2[t]]


@gpu.jit
def local_huge(out, idx, idx2):  # no barrier: a block function
    a = gpu.local.array(HUGE, gpu.float32)
    t = gpu.threadIdx.x
    a[idx[t]] = t
    out[t] = a[idx2[t]]


def depth(n, x):
    # not a tail call, nor one the compiler can turn into a loop
    if n == 0:
        return x[0]
    return depth(n - 1, x) * 3 + x[n % 4]


def depth_ref(n, x):
    r = int(x[0])
    for k in range(1, n + 1):
        r = r * 3 + int(x[k % 4])
    return r


@gpu.jit
def recurse_barrier(out, x, n):
    t = gpu.threadIdx.x
    gpu.syncthreads()
    out[t] = depth(n, x)


@gpu.jit
def recurse(out, x, n):  # no barrier: a block function
    t = gpu.threadIdx.x
    out[t] = depth(n, x)


def run_local(kernel, n=SMALL):
    idx = (np.arange(64, dtype=np.int64) * 7) % n
    out = np.zeros(64, np.float32)
    kernel[1, 64](out, idx)
    return out, idx


def test_local_array_overflow_raises():
    if not default_stack():
        pytest.skip("GPUJIT_CPU_STACK is set")
    for _ in range(2):  # the handler, signal mask and alternate stack are back
        with pytest.raises(gpu.LaunchError, match=OVERFLOW) as e:
            run_local(local_big, BIG)
        assert "GPUJIT_CPU_STACK" in str(e.value) and "KiB" in str(e.value)
        out, idx = run_local(local_small)
        np.testing.assert_array_equal(out, idx + np.arange(64))


def test_local_array_overflow_many_blocks():
    # every block overflows, on every pool thread
    idx = np.zeros(64, np.int64)
    out = np.zeros(64 * 32, np.float32)
    with pytest.raises(gpu.LaunchError, match=OVERFLOW):
        local_huge_barrier[32, 64](out, idx, idx)
    out, idx = run_local(local_small)
    np.testing.assert_array_equal(out, idx + np.arange(64))


def test_block_function_overflow_raises():
    idx = np.arange(64, dtype=np.int64)
    out = np.zeros(64, np.float32)
    with pytest.raises(gpu.LaunchError, match=OVERFLOW):
        local_huge[4, 64](out, idx, idx)
    # a block function has at least 8 MiB: 80 KB is fine there
    x = np.arange(1, 5, dtype=np.int64)
    o = np.zeros(64, np.int64)
    recurse[1, 64](o, x, 20)
    assert (o == depth_ref(20, x)).all()


def test_recursion_overflow_raises():
    x = np.arange(1, 5, dtype=np.int64)
    for kernel in (recurse_barrier, recurse):
        out = np.zeros(4, np.int64)
        with pytest.raises(gpu.LaunchError, match=OVERFLOW):
            kernel[1, 4](out, x, 10 ** 6)
        kernel[1, 4](out, x, 12)
        assert (out == depth_ref(12, x)).all(), out


def test_barrier_kernel_runs_after_overflow():
    @gpu.jit
    def early_exit(out):
        t = gpu.threadIdx.x
        if t == 0:
            return
        gpu.syncthreads()
        out[t] = 1

    idx = np.zeros(64, np.int64)
    with pytest.raises(gpu.LaunchError, match=OVERFLOW):
        local_huge_barrier[1, 64](np.zeros(64, np.float32), idx, idx)
    out = np.full(32, -1, np.int32)
    early_exit[1, 32](out)  # thread 0 returned: the others pass the barrier without it
    assert out[0] == -1 and (out[1:] == 1).all()


# -- in a subprocess: a crash there fails the test, not the runner --------------------------

SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import gpujit as gpu
    from gpujit import _core
    _core.set_target("cpu")

    @gpu.jit
    def k(out):                                  # the report's reproducer, as written
        a = gpu.local.array(20000, gpu.float32)
        t = gpu.threadIdx.x
        a[t] = t
        gpu.syncthreads()
        out[t] = a[t]

    @gpu.jit
    def k2(out, idx):                            # one whose array the compiler must keep
        a = gpu.local.array(20000, gpu.float32)
        t = gpu.threadIdx.x
        for i in range(20000):
            a[i] = i + t
        gpu.syncthreads()
        out[t] = a[idx[t]]

    def f(n):
        return 0 if n == 0 else 1 + f(n - 1)

    def g(n, x):
        if n == 0:
            return x[0]
        return g(n - 1, x) * 3 + x[n % 4]

    @gpu.jit
    def rf(out, n):
        t = gpu.threadIdx.x
        gpu.syncthreads()
        out[t] = f(n)

    @gpu.jit
    def rg(out, x, n):
        t = gpu.threadIdx.x
        gpu.syncthreads()
        out[t] = g(n, x)

    def attempt(name, fn):
        try:
            fn()
            print(name, "ok")
        except gpu.LaunchError as e:
            print(name, "LaunchError:", e)
        sys.stdout.flush()

    idx = np.arange(64, dtype=np.int64) * 7
    attempt("k", lambda: k[1, 64](np.zeros(64, np.float32)))
    attempt("k2", lambda: k2[1, 64](np.zeros(64, np.float32), idx))
    attempt("rf", lambda: rf[1, 4](np.zeros(4, np.int64), 10 ** 6))
    attempt("rg", lambda: rg[1, 4](np.zeros(4, np.int64), np.ones(4, np.int64), 10 ** 6))
    out = np.zeros(64, np.float32)
    k[1, 64](out)
    assert (out == np.arange(64)).all(), out
    print("after: ok")
""")


def run_script(*pyflags, stack=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("GPUJIT_CPU_STACK", None)
    if stack:
        env["GPUJIT_CPU_STACK"] = stack
    p = subprocess.run([sys.executable, *pyflags, "-c", SCRIPT], env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, "exit status %d\nstdout:\n%s\nstderr:\n%s" % (
        p.returncode, p.stdout, p.stderr[-3000:])
    return dict(line.split(" ", 1) for line in p.stdout.splitlines())


@pytest.mark.parametrize("pyflags", [(), ("-X", "faulthandler")], ids=["plain", "faulthandler"])
def test_subprocess_overflow_is_launch_error(pyflags):
    r = run_script(*pyflags)
    # The report's kernel may keep its array or not (the compiler can see that
    # a[t] is read right back), and f's recursion may become a loop: either
    # way it must not crash. k2 and g cannot avoid the overflow.
    for name in ("k", "rf"):
        assert r[name] == "ok" or (r[name].startswith("LaunchError:") and OVERFLOW in r[name]), r
    for name in ("k2", "rg"):
        assert r[name].startswith("LaunchError:") and OVERFLOW in r[name], r
        assert "now 64 KiB" in r[name] or "now 256 KiB" in r[name], r  # 256K: an ASan build
    assert r["after:"] == "ok"


def test_subprocess_bigger_stack_works():
    r = run_script(stack="1M")
    assert r["k"] == "ok" and r["k2"] == "ok", r
    assert r["rg"].startswith("LaunchError:") and "now 1024 KiB" in r["rg"], r
