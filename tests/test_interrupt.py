"""Ctrl-C stops a CPU-target launch: SIGINT during a kernel that would run for
ages raises KeyboardInterrupt from the launch, and the process stays usable:
the next launches, of the same kernel and of others, give right answers. Each
kind of kernel the executor runs differently is tried: blocks as loops over
their threads, an endless loop with no exit, barriers (loops over threads or
interleaved threads), warp operations (fibers) and a grid of very many short
blocks; and a SIGINT handler of the program's own, set with signal.signal after
the first launches, is called as Python's would be. On the GPU, waiting for the device (synchronize, a stream's or an
event's, a synchronous copy) is interrupted the same way, tried against the
stand-in driver (tests/c/fake_libcuda.c) made to look busy. A child process is
interrupted, so a wait that ignores the signal shows up as a child that never
reports back (the parent gives up after TIMEOUT seconds and kills it)."""
import os
import selectors
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import gpujit as gpu

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 120

CHILD = textwrap.dedent("""
    import signal
    import sys
    import time
    import numpy as np
    import gpujit as gpu

    @gpu.jit
    def spin(out, n):
        i = gpu.grid(1)
        s = 0
        k = 0
        while k < n:
            s = (s * 3 + k) % 1000003
            k += 1
        out[i] = s

    @gpu.jit
    def forever(out, flag):
        i = gpu.grid(1)
        while True:
            out[i] += flag
            if out[i] < 0:
                out[i] = 0

    @gpu.jit
    def barriers(out, n):
        sm = gpu.shared.array(64, np.int64)
        t = gpu.threadIdx.x
        sm[t] = 0
        gpu.syncthreads()
        for k in range(n):
            sm[t] += k % 7
            gpu.syncthreads()
        out[gpu.grid(1)] = sm[t]

    @gpu.jit
    def warps(out, n):
        t = gpu.threadIdx.x
        v = t
        k = 0
        while k < n:
            v = gpu.shfl_xor_sync(0xffffffff, v, 1) + 1
            k += 1
        out[gpu.grid(1)] = v

    @gpu.jit
    def tiny(out):
        if gpu.blockIdx.x == 0 and gpu.blockIdx.y == 0:
            out[0] = 1

    @gpu.jit
    def add(a, b, out):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = a[i] + b[i]

    def py_spin(n):
        s = 0
        for k in range(n):
            s = (s * 3 + k) % 1000003
        return s

    def check(name):
        rng = np.random.default_rng()
        a, b = rng.standard_normal(1000), rng.standard_normal(1000)
        out = np.full(1000, np.nan)
        add[8, 128](a, b, out)
        assert np.array_equal(out, a + b), name
        o = np.full(8, -1, np.int64)
        spin[8, 1](o, 1000)
        assert (o == py_spin(1000)).all(), (name, o)
        o = np.full(64, -1, np.int64)
        barriers[1, 64](o, 10)
        assert (o == sum(k % 7 for k in range(10))).all(), (name, o)
        o = np.full(32, -1, np.int64)
        warps[1, 32](o, 5)
        want = np.arange(32)
        for _ in range(5):
            want = want[np.arange(32) ^ 1] + 1
        assert np.array_equal(o, want), (name, o)

    big = 10 ** 15
    launches = {
        "spin": lambda: spin[8, 1](np.zeros(8, np.int64), big),
        "forever": lambda: forever[2, 4](np.zeros(8, np.int64), 1),
        "barriers": lambda: barriers[4, 64](np.zeros(256, np.int64), big),
        "warps": lambda: warps[2, 32](np.zeros(64, np.int64), big),
        "tiny": lambda: tiny[(2 ** 31 - 1, 60000), 1](np.zeros(1, np.int64)),
    }
    # a handler of the program's own, set after the first launches, is called (once) in place
    # of Python's: the launch stops and raises what it raises, or KeyboardInterrupt if nothing
    calls = []

    class Stop(KeyboardInterrupt):
        pass

    def raising(sig, frame):
        calls.append(sig)
        raise Stop

    def quiet(sig, frame):
        calls.append(sig)

    handlers = {"own-handler": raising, "quiet-handler": quiet}
    launches["own-handler"] = launches["quiet-handler"] = launches["spin"]
    check("warm-up")  # every kernel compiled before the first signal
    forever.compile("void(int64[::1], int64)")
    tiny[1, 1](np.zeros(1, np.int64))
    for name in sys.argv[1:]:
        if name in handlers:
            signal.signal(signal.SIGINT, handlers[name])
            time.sleep(0.1)
            del calls[:]
        print("go", name, flush=True)
        try:
            launches[name]()
            print("finished", name, flush=True)
        except KeyboardInterrupt as e:
            assert (name == "own-handler") == isinstance(e, Stop), (name, e)
            print("stopped", name, flush=True)
        if name in handlers:
            assert calls == [signal.SIGINT], calls
            signal.signal(signal.SIGINT, signal.default_int_handler)
        check(name)
        print("ok", name, flush=True)
""")

KINDS = ["spin", "forever", "barriers", "warps", "tiny", "own-handler", "quiet-handler"]


def interrupt_each(args, kinds, env):
    """Runs the child; for each kind, waits for its "go", sends SIGINT a second
    later and expects "stopped" (KeyboardInterrupt) then "ok" (the next call right)."""
    # SIGINT at its default in the child, which Python then handles: a test runner's worker
    # (pytest-xdist's) ignores it, and an ignored signal stays ignored across exec
    p = subprocess.Popen([sys.executable, "-X", "faulthandler"] + args + kinds, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=dict(env, PYTHONPATH=os.pathsep.join(sys.path)),
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ)
    buf = b""

    def line():
        nonlocal buf
        while b"\n" not in buf:
            if not sel.select(TIMEOUT):
                p.send_signal(signal.SIGABRT)  # faulthandler: where the child is
                _, err = p.communicate()
                pytest.fail("the child did not answer within %d s (a wait that SIGINT does not stop?)\n%s"
                            % (TIMEOUT, err.decode()[-3000:]))
            chunk = os.read(p.stdout.fileno(), 4096)
            if not chunk:
                pytest.fail("the child ended early:\n%s" % p.stderr.read().decode()[-3000:])
            buf += chunk
        text, buf = buf.split(b"\n", 1)
        return text.decode()

    try:
        for name in kinds:
            assert line() == "go " + name
            time.sleep(1.0)  # the wait has begun by then (everything compiled before the first "go")
            p.send_signal(signal.SIGINT)
            assert line() == "stopped " + name
            assert line() == "ok " + name
        _, err = p.communicate(timeout=TIMEOUT)
        assert p.returncode == 0, err.decode()[-3000:]
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@pytest.mark.skipif(gpu.current_target() != "cpu", reason="the CPU executor")
def test_sigint_stops_a_launch_and_the_next_launch_works(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    interrupt_each([str(script)], KINDS, os.environ)


FAKE_CHILD = textwrap.dedent("""
    import ctypes, sys
    import numpy as np
    import gpujit as gpu

    fake = ctypes.CDLL(sys.argv[1])
    s = gpu.stream()
    ev = gpu.event()
    data = np.arange(8.0)
    d = gpu.to_device(data)

    def event():
        ev.record(s)
        ev.synchronize()

    waits = {"synchronize": gpu.synchronize, "stream": s.synchronize, "event": event,
             "copy": lambda: d.copy_to_host(), "to_device": lambda: gpu.to_device(data)}
    for name in sys.argv[2:]:
        fake.fake_set_busy(1)
        print("go", name, flush=True)
        try:
            waits[name]()
            print("finished", name, flush=True)
        except KeyboardInterrupt:
            print("stopped", name, flush=True)
        fake.fake_set_busy(0)
        waits[name]()
        assert np.array_equal(d.copy_to_host(), data)
        print("ok", name, flush=True)
""")


def test_sigint_stops_a_wait_for_the_gpu(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    so = tmp_path / "fake_libcuda.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(so), os.path.join(ROOT, "tests", "c", "fake_libcuda.c")],
                   check=True, capture_output=True)
    script = tmp_path / "child.py"
    script.write_text(FAKE_CHILD)
    env = dict(os.environ, GPUJIT_LIBCUDA=str(so), GPUJIT_TARGET="cuda", GPUJIT_CACHE_DIR=str(tmp_path / "cache"))
    interrupt_each([str(script), str(so)], ["synchronize", "stream", "event", "copy", "to_device"], env)
