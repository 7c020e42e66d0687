"""The GPU target's math functions come from libdevice, read once per process and linked
per kernel as small pieces (src/libdevice_link.c): each kernel's PTX must not depend on what was
compiled before it in the process, nor on other threads compiling at the same time."""
import json
import os
import re
import subprocess
import sys
import threading

import pytest

import gpujit as gpu
from conftest import assemble_ptx

HERE = os.path.dirname(os.path.abspath(__file__))

# kernels over overlapping sets of math functions (erf and pow share helpers with exp/log)
SOURCE = '''
import math

def k_exp(out, x):
    i = gpu.grid(1)
    out[i] = math.exp(x[i])

def k_exp_log(out, x):
    i = gpu.grid(1)
    out[i] = math.exp(x[i]) + math.log(abs(x[i]) + 1.0)

def k_log(out, x):
    i = gpu.grid(1)
    out[i] = math.log(abs(x[i]) + 1.0)

def k_many(out, x):
    i = gpu.grid(1)
    v = x[i]
    out[i] = math.sin(v) * math.cos(v) + math.erf(v) + math.pow(abs(v), 1.5) + math.atan2(v, 2.0) + math.lgamma(abs(v) + 1.0)
'''
NAMES = ["k_exp", "k_exp_log", "k_log", "k_many"]
SIGS = ["void(float64[::1], float64[::1])", "void(float32[::1], float32[::1])"]


def load():
    ns = {"gpu": gpu}
    exec(compile(SOURCE, "<libdevice kernels>", "exec"), ns)
    return ns


def compile_all(order, fastmath=False):
    # NVPTX numbers its call sequences per target machine, which compiles share: the
    # numbers in those comments depend on what was compiled before, the code does not
    ns = load()
    return {(n, s): re.sub(r"// callseq \d+", "// callseq", gpu.compile_ptx(ns[n], s, cc=(9, 0), fastmath=fastmath)[0])
            for n in order for s in SIGS}


def test_every_math_call_is_linked_and_ptxas_accepts_it():
    ptx = compile_all(NAMES)
    for (n, s), text in ptx.items():
        assert "__nv_" not in text, (n, s)          # nothing left to link
    assemble_ptx([("%s %s" % k, v) for k, v in ptx.items()])


def test_ptx_does_not_depend_on_what_the_process_compiled_before():
    # each order in a fresh process: the pieces are made in a different order each time
    code = ("import json, sys; sys.path.insert(0, %r); import test_libdevice_link as t; "
            "ptx = t.compile_all(sys.argv[1].split(',')); "
            "print(json.dumps({'|'.join(k): v for k, v in ptx.items()}))" % HERE)
    results = []
    for order in (NAMES, NAMES[::-1], ["k_many", "k_exp", "k_log", "k_exp_log"]):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        r = subprocess.run([sys.executable, "-c", code, ",".join(order)], capture_output=True, text=True, env=env,
                           timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        results.append(json.loads(r.stdout.splitlines()[-1]))
    assert results[0] == results[1] == results[2]


def test_threads_compiling_math_kernels_at_once_get_the_serial_result():
    want = compile_all(NAMES, fastmath=True)
    got, errors = {}, []

    def work(names):
        try:
            got.update(compile_all(names, fastmath=True))
        except BaseException as e:  # noqa: BLE001 -- reported below
            errors.append(e)
    ths = [threading.Thread(target=work, args=([n],)) for n in NAMES]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    assert not errors, errors
    assert got == want


def test_a_file_that_is_not_libdevice_is_a_compile_error(tmp_path, monkeypatch):
    bad = tmp_path / "libdevice.10.bc"
    bad.write_bytes(b"BC\xc0\xde" + b"\x00" * 64)
    monkeypatch.setenv("GPUJIT_LIBDEVICE", str(bad))
    ns = load()
    with pytest.raises(gpu.CompileError, match="libdevice"):
        gpu.compile_ptx(ns["k_log"], SIGS[0], cc=(9, 0))
    monkeypatch.delenv("GPUJIT_LIBDEVICE")
    assert "__nv_" not in gpu.compile_ptx(ns["k_log"], SIGS[0], cc=(9, 0))[0]


def test_a_piece_is_simplified_for_its_kernels_flags_and_options():
    # a piece is simplified once for the flush-to-zero setting it is made for (fastmath=True
    # sets it): pieces for both settings of one set of functions, in either order, each give
    # its own setting's code; opt=False gets libdevice's functions as they are (a piece of its own)
    ns = load()
    sig = "void(float32[::1], float32[::1])"
    seen = {}
    for fast in (True, False, True, False):
        ptx = re.sub(r"// callseq \d+", "// callseq", gpu.compile_ptx(ns["k_many"], sig, cc=(9, 0), fastmath=fast)[0])
        assert seen.setdefault(fast, ptx) == ptx
    # libdevice flushes in a few places whatever the setting; fastmath flushes throughout
    assert seen[True].count(".ftz.f32") > 2 * seen[False].count(".ftz.f32")
    slow = gpu.compile_ptx(ns["k_many"], sig, cc=(9, 0), opt=False)[0]
    assert slow != seen[False]
    assemble_ptx([("k_many fast", seen[True]), ("k_many exact", seen[False]), ("k_many opt=False", slow)])
