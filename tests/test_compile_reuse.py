"""What compiles keep for the next one (the pooled target machines of src/emit.c, the libdevice
pieces of src/libdevice_link.c) must not carry one compile's state into another: kernels of
different kinds, options and compute capabilities compiled one after another in either order,
and from several threads at once, give the PTX that a fresh process gives each of them alone."""
import json
import os
import re
import subprocess
import sys
import threading

import gpujit as gpu

HERE = os.path.dirname(os.path.abspath(__file__))

SOURCE = '''
import math

def saxpy(out, a, x, y):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]

def tiles(A, B, C):
    sA = gpu.shared.array(shape=(16, 16), dtype=float32)
    sB = gpu.shared.array(shape=(16, 16), dtype=float32)
    x, y = gpu.grid(2)
    tx = gpu.threadIdx.x
    ty = gpu.threadIdx.y
    acc = float32(0.0)
    for i in range((A.shape[1] + 15) // 16):
        sA[ty, tx] = A[y, tx + i * 16] if y < A.shape[0] and tx + i * 16 < A.shape[1] else float32(0.0)
        sB[ty, tx] = B[ty + i * 16, x] if x < B.shape[1] and ty + i * 16 < B.shape[0] else float32(0.0)
        gpu.syncthreads()
        for j in range(16):
            acc += sA[ty, j] * sB[j, tx]
        gpu.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = acc

def cnd(d):
    return 0.5 * (1.0 + math.erf(d / math.sqrt(2.0)))

def pricing(out, s, k, t):
    i = gpu.grid(1)
    if i < out.size:
        d1 = (math.log(s[i] / k[i]) + 0.5 * t[i]) / math.sqrt(t[i])
        out[i] = s[i] * cnd(d1) - k[i] * math.exp(-t[i]) * cnd(d1 - math.sqrt(t[i]))

def trig(out, x):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = math.sin(x[i]) * math.cos(x[i]) + math.atan2(x[i], 2.0)
'''

F32 = "float32[::1]"
SIGS = {
    "saxpy": "void(%s, float32, %s, %s)" % (F32, F32, F32),
    "tiles": "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])",
    "pricing": "void(%s, %s, %s, %s)" % (F32, F32, F32, F32),
    "trig": "void(float64[::1], float64[::1])",
}

# (kernel, options): every option that picks another target machine or another libdevice
# piece (cc, opt, fastmath), and lineinfo (debug sections in the PTX)
CASES = [
    ("saxpy", {}),
    ("saxpy", {"cc": (7, 5)}),
    ("saxpy", {"opt": False}),
    ("tiles", {}),
    ("tiles", {"cc": (8, 0)}),
    ("tiles", {"lineinfo": True}),
    ("pricing", {}),
    ("pricing", {"fastmath": True}),
    ("pricing", {"cc": (7, 0)}),
    ("pricing", {"opt": False}),
    ("trig", {}),
    ("trig", {"fastmath": True, "cc": (8, 6)}),
]


def compile_case(ns, k):
    name, opts = CASES[k]
    opts = dict({"cc": (9, 0)}, **opts)
    ptx = gpu.compile_ptx(ns[name], SIGS[name], **opts)[0]
    # NVPTX numbers the call sequences of a target machine's life in comments
    return re.sub(r"// callseq \d+", "// callseq", ptx)


def load():
    ns = {"gpu": gpu, "float32": gpu.float32}
    exec(compile(SOURCE, os.path.join(HERE, "compile_reuse_kernels.py"), "exec"), ns)
    return ns


def fresh_process_ptx():
    """Each case compiled alone, each in a process of its own."""
    code = ("import json, sys; sys.path.insert(0, %r); import test_compile_reuse as t; "
            "print(json.dumps(t.compile_case(t.load(), int(sys.argv[1]))))" % HERE)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    want = []
    for k in range(len(CASES)):
        r = subprocess.run([sys.executable, "-c", code, str(k)], capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        want.append(json.loads(r.stdout.splitlines()[-1]))
    return want


def test_one_after_another_and_from_threads_equal_a_fresh_process():
    want = fresh_process_ptx()
    ns = load()
    order = list(range(len(CASES)))
    for ks in (order, order[::-1], order[1::2] + order[::2]):
        for k in ks:
            assert compile_case(ns, k) == want[k], CASES[k]
    got, errors = {}, []

    def work(ks):
        try:
            for _ in range(2):
                for k in ks:
                    got.setdefault(k, set()).add(compile_case(ns, k))
        except BaseException as e:  # noqa: BLE001 -- reported below
            errors.append(e)
    # four threads, each over every case in its own order, so that the same target machine and
    # libdevice piece are wanted by several at once
    ths = [threading.Thread(target=work, args=(order[t:] + order[:t],)) for t in range(0, 4 * 3, 3)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    assert not errors, errors
    for k in order:
        assert got[k] == {want[k]}, CASES[k]
