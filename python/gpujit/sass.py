"""SASS, the GPU's machine code, of a kernel's PTX: ptxas assembles it for the PTX's
target and nvdisasm prints it (kernel.inspect_sass()). Both are CUDA programs: they
are looked for in $CUDA_HOME and $CUDA_PATH, in NVIDIA's pip wheels
(nvidia-cuda-nvcc-cu12 has ptxas, nvidia-cuda-nvdisasm has nvdisasm), on PATH, then
in the toolkit's usual place; the first place holding both wins, so that the two are
of one release. No GPU is needed."""
import os
import re
import subprocess
import sys
import tempfile

# where each tool lies inside NVIDIA's wheels, under a sys.path entry
_WHEEL_BINS = ("nvidia/cu13/bin", "nvidia/cuda_nvcc/bin", "nvidia/cuda_nvdisasm/bin")
_INSTALL = {"nvdisasm": "pip install nvidia-cuda-nvdisasm",
            "ptxas": "pip install nvidia-cuda-nvcc-cu12 (NVIDIA's wheel with ptxas; gpujit's extra cuda12)"}


def _tool_dirs():
    """Where CUDA's programs are looked for, in order."""
    dirs = [os.path.join(h, "bin") for h in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")) if h]
    dirs += [os.path.join(entry, sub) for entry in sys.path if entry for sub in _WHEEL_BINS]
    dirs += [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    return dirs + ["/usr/local/cuda/bin"]


def find_tool(name):
    """The path of CUDA's program `name`, or None."""
    for d in _tool_dirs():
        p = os.path.join(d, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def _pair():
    """(ptxas, nvdisasm) of one release where a directory has both (an older nvdisasm cannot
    read a newer ptxas's cubin), else each where found."""
    for d in _tool_dirs():
        p, q = os.path.join(d, "ptxas"), os.path.join(d, "nvdisasm")
        if os.access(p, os.X_OK) and os.access(q, os.X_OK):
            return p, q
    return find_tool("ptxas"), find_tool("nvdisasm")


def _need(name, path):
    if path is None:
        raise RuntimeError("%s was not found (inspect_sass needs CUDA's %s): %s, or set CUDA_HOME to a CUDA "
                           "toolkit" % (name, name, _INSTALL[name]))
    return path


def _run(argv):
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s failed (exit status %d): %s" % (os.path.basename(argv[0]), r.returncode,
                                                                (r.stderr or r.stdout).strip()[:2000]))
    return r.stdout


def disassemble(ptx, cfg=False):
    """The SASS of a PTX module (nvdisasm's listing), or with cfg its control-flow graph
    in DOT, as numba's inspect_sass / inspect_sass_cfg give."""
    ptxas, nvdisasm = _pair()
    nvdisasm, ptxas = _need("nvdisasm", nvdisasm), _need("ptxas", ptxas)
    m = re.search(r"^\s*\.target\s+(sm_\w+)", ptx, re.M)
    if not m:
        raise ValueError("not a PTX module: no .target directive")
    with tempfile.TemporaryDirectory(prefix="gpujit-sass-") as d:
        src, cubin = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        _run([ptxas, "-lineinfo", "-arch=" + m.group(1), src, "-o", cubin])
        return _run([nvdisasm, "-cfg" if cfg else "-c", "-gi", cubin])
