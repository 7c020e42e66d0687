"""Where the NVPTX target finds CUDA's libdevice (src/target_nvptx.c): $GPUJIT_LIBDEVICE, then
$CUDA_HOME and $CUDA_PATH, then NVIDIA's pip wheels on sys.path (nvidia-cuda-nvcc-cu12's
nvidia/cuda_nvcc, nvidia-nvvm 13's nvidia/cu13), then the toolkit's usual places; and the error
that says what to install when there is none.

Each candidate place holds a stand-in libdevice (assembled by llvm-as) whose __nv_sinf returns
its own constant, so the PTX of a kernel calling math.sin shows which file was linked."""
import os
import shutil
import struct
import subprocess
import sys

import pytest

import gpujit as gpu

LLVM_AS = shutil.which("llvm-as-19") or shutil.which("llvm-as")
REL = os.path.join("nvvm", "libdevice", "libdevice.10.bc")
WHEEL_DIRS = {"cu12": os.path.join("nvidia", "cuda_nvcc"), "cu13": os.path.join("nvidia", "cu13")}
SYSTEM_ROOTS = ["/usr/local/cuda", "/usr/lib/cuda", "/usr/local/cuda-13.0", "/usr/local/cuda-12",
                "/usr/lib/nvidia-cuda-toolkit"]

CHILD = r"""
import os, sys, json
import gpujit as gpu
scenarios = json.loads(sys.argv[1])
base_path = list(sys.path)
for i, (env, extra_path) in enumerate(scenarios):
    for k in ("GPUJIT_LIBDEVICE", "CUDA_HOME", "CUDA_PATH"):
        os.environ.pop(k, None)
    os.environ.update(env)
    sys.path[:] = extra_path + base_path
    ns = {}
    # a fresh function each time: nothing compiled before is reused
    exec("import math\ndef k%d(out, x):\n    out[0] = math.sin(x[0])\n" % i, ns)
    try:
        ptx, _ = gpu.compile_ptx(ns["k%d" % i], "void(float32[::1], float32[::1])")
        print(json.dumps(["ok", ptx]))
    except Exception as e:
        print(json.dumps([type(e).__name__, str(e)]))
"""


def fake_libdevice(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    ll = path[:-3] + ".ll"
    with open(ll, "w") as f:
        f.write('target triple = "nvptx64-nvidia-cuda"\n'
                "define float @__nv_sinf(float %%x) {\n  ret float %r\n}\n" % value)
    subprocess.run([LLVM_AS, ll, "-o", path], check=True)


def has_const(ptx, value):
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    return "0f%08X" % bits in ptx or " %d;" % bits in ptx   # as a float or as the stored bits


def run(scenarios):
    import json
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(gpu.__file__)))
    env = {k: v for k, v in os.environ.items() if k not in ("GPUJIT_LIBDEVICE", "CUDA_HOME", "CUDA_PATH")}
    env["PYTHONPATH"] = os.pathsep.join([pkg_root] + [p for p in [env.get("PYTHONPATH")] if p])
    p = subprocess.run([sys.executable, "-c", CHILD, json.dumps(scenarios)], env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return [json.loads(line) for line in p.stdout.splitlines()]


@pytest.mark.skipif(LLVM_AS is None, reason="needs llvm-as to assemble stand-in libdevices")
def test_libdevice_search_order(tmp_path):
    values = {"env": 1.25, "home": 2.5, "path": 3.75, "cu12": 5.5, "cu13": 6.75}
    env_file = str(tmp_path / "own" / "libdevice.10.bc")
    fake_libdevice(env_file, values["env"])
    home, cuda_path = str(tmp_path / "toolkit"), str(tmp_path / "toolkit2")
    fake_libdevice(os.path.join(home, REL), values["home"])
    fake_libdevice(os.path.join(cuda_path, REL), values["path"])
    site12, site13, both = (str(tmp_path / n) for n in ("site12", "site13", "both"))
    fake_libdevice(os.path.join(site12, WHEEL_DIRS["cu12"], REL), values["cu12"])
    fake_libdevice(os.path.join(site13, WHEEL_DIRS["cu13"], REL), values["cu13"])
    for key in ("cu12", "cu13"):
        fake_libdevice(os.path.join(both, WHEEL_DIRS[key], REL), values[key])
    missing = str(tmp_path / "nowhere" / "libdevice.10.bc")
    cases = [  # (env, sys.path entries in front) -> the one expected
        (({"GPUJIT_LIBDEVICE": env_file, "CUDA_HOME": home, "CUDA_PATH": cuda_path}, [both]), "env"),
        (({"CUDA_HOME": home, "CUDA_PATH": cuda_path}, [both]), "home"),
        (({"CUDA_PATH": cuda_path}, [both]), "path"),
        (({"CUDA_HOME": str(tmp_path / "empty")}, [site12]), "cu12"),   # a home without libdevice
        (({}, [site13]), "cu13"),
        (({}, ["", str(tmp_path / "nothing"), site13, site12]), "cu13"),  # the first sys.path entry wins
        (({}, [both]), "cu12"),
    ]
    results = run([c for c, _ in cases] + [({"GPUJIT_LIBDEVICE": missing}, [both])])
    for (case, want), (kind, text) in zip(cases, results):
        assert kind == "ok", (case, text)
        found = [k for k, v in values.items() if has_const(text, v)]
        assert found == [want], (case, found)
    kind, text = results[-1]
    assert kind == "CompileError" and "GPUJIT_LIBDEVICE=" + missing in text, text


@pytest.mark.skipif(any(os.path.exists(os.path.join(r, REL)) or os.path.exists(os.path.join(r, "libdevice"))
                        for r in SYSTEM_ROOTS), reason="a CUDA toolkit is installed in a usual place")
def test_missing_libdevice_says_what_to_install(tmp_path):
    [(kind, text)] = run([({}, [str(tmp_path)])])
    assert kind == "CompileError", text
    assert "pip install nvidia-cuda-nvcc-cu12" in text and "nvidia-nvvm>=13,<14" in text, text
    assert "GPUJIT_LIBDEVICE" in text, text


def test_kernels_without_math_need_no_libdevice(tmp_path):
    code = ("import os, gpujit as gpu\n"
            "def k(out, x):\n    out[0] = x[0] + 1\n"
            "print(gpu.compile_ptx(k, 'void(float32[::1], float32[::1])')[0].count('.entry'))\n")
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(gpu.__file__)))
    env = dict(os.environ, GPUJIT_LIBDEVICE=str(tmp_path / "absent.bc"), PYTHONPATH=pkg_root)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "1", p.stderr
