"""Type checkers and editors see gpujit: it ships py.typed and stubs (__init__.pyi names every
public name, the lazily loaded ones and the vector types included; intrinsics.pyi gives the
kernel-language objects their members, shared.array, atomic.add, ...). mypy, from PyPI, checks
a program of typical kernels and host code clean, and reports a misspelt name in one (skipped
where mypy is not installed and cannot be)."""
import ast
import os
import site
import subprocess
import sys
import textwrap

import pytest

import gpujit
from gpujit import intrinsics

PKG = os.path.dirname(os.path.abspath(gpujit.__file__))


def stub_names(name):
    with open(os.path.join(PKG, name)) as f:
        tree = ast.parse(f.read())
    names, all_ = set(), None
    for n in tree.body:
        if isinstance(n, ast.ImportFrom):  # a stub re-exports `import x as x` only
            names.update(a.asname for a in n.names if a.asname == a.name)
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, ast.AnnAssign):
            names.add(n.target.id)
        elif isinstance(n, ast.Assign) and n.targets[0].id == "__all__":
            all_ = ast.literal_eval(n.value)
        elif isinstance(n, ast.Assign):
            names.add(n.targets[0].id)
    return {x for x in names if not x.startswith("_")}, all_, tree


def test_py_typed_is_there():
    assert os.path.isfile(os.path.join(PKG, "py.typed"))


def test_package_stub_names_every_public_name():
    out = subprocess.run([sys.executable, "-c", "import gpujit; print(' '.join(dir(gpujit)))"],
                         env=dict(os.environ, PYTHONPATH=os.path.dirname(PKG)), capture_output=True, text=True,
                         check=True).stdout.split()
    public = {n for n in out if not n.startswith("_")}
    names, all_, _ = stub_names("__init__.pyi")
    assert names == public, (sorted(public - names), sorted(names - public))
    # the package leaves out the running Python's module names (3.15's profiling)
    assert [n for n in all_ if n not in getattr(sys, "stdlib_module_names", ())] == gpujit.__all__


def test_intrinsics_stub_has_each_namespace_member():
    _, _, tree = stub_names("intrinsics.pyi")
    classes = {n.name: {a.target.id for a in n.body if isinstance(a, ast.AnnAssign)}
               for n in tree.body if isinstance(n, ast.ClassDef)}
    for name in dir(intrinsics):
        obj = getattr(intrinsics, name)
        if isinstance(obj, intrinsics._Namespace) and not name.startswith("_"):
            members = {k for k, v in vars(obj).items() if isinstance(v, intrinsics._KernelOnly)}
            assert classes.get("_" + name.capitalize()) == members, name


GOOD = textwrap.dedent('''
    import numpy as np
    import gpujit as gpu
    from gpujit import float32, void


    @gpu.jit(void(float32[::1], float32, float32[::1], float32[::1]))
    def saxpy(out, a, x, y):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]


    @gpu.jit(fastmath=True)
    def block_sum(x, out):
        sh = gpu.shared.array(128, gpu.float32)
        t = gpu.threadIdx.x + gpu.blockIdx.x * gpu.blockDim.x
        sh[gpu.threadIdx.x] = x[t]
        gpu.syncthreads()
        if gpu.threadIdx.x == 0:
            gpu.atomic.add(out, 0, sh[0])
        v = gpu.float32x3(1.0, 2.0, 3.0)
        out[1] = v.x + gpu.fp16.hadd(np.float16(1), np.float16(2)) + gpu.laneid
        gpu.cg.this_grid().sync()


    @gpu.vectorize(["float32(float32, float32)"])
    def add(a, b):
        return a + b


    def host() -> None:
        x = np.arange(256, dtype=np.float32)
        d = gpu.to_device(x)
        out = gpu.device_array(256, np.float32)
        saxpy[2, 128](out, np.float32(2.0), d, d)
        host_out = out.copy_to_host()
        s = gpu.stream()
        r = gpu.Reduce(lambda a, b: a + b)
        print(host_out[0], r(x), gpu.detect(), gpu.config.CUDA_LOW_OCCUPANCY_WARNINGS, s, gpu.event())
        ptx, resty = gpu.compile_ptx(saxpy.py_func, "void(float32[::1], float32, float32[::1], float32[::1])")
        print(ptx[:10], resty, add(x, x)[0], gpu.typeof(x), gpu.current_target(), len(gpu.gpus))
''')
BAD = GOOD.replace("gpu.shared.array(", "gpu.shared.arrayy(").replace("gpu.float32x3(", "gpu.float32x9(")


def mypy_command(tmp_path):
    """How to run mypy: this Python's, else one installed from PyPI into a cache directory;
    None where neither can be had."""
    try:
        import mypy  # noqa: F401
        return [sys.executable, "-m", "mypy"], dict(os.environ)
    except ImportError:
        pass
    # one per Python version: mypy's wheels are compiled for one
    target = os.path.join(os.path.expanduser("~"), ".cache", "gpujit-test-mypy-py%d%d" % sys.version_info[:2])
    env = dict(os.environ, PYTHONPATH=target)
    probe = [sys.executable, "-c", "import mypy.main"]
    if subprocess.run(probe, env=env, capture_output=True).returncode != 0:
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target", target, "mypy"],
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0 or subprocess.run(probe, env=env, capture_output=True).returncode != 0:
            return None, None
    return [sys.executable, "-m", "mypy"], env


def test_mypy_checks_typical_programs(tmp_path):
    cmd, env = mypy_command(tmp_path)
    if cmd is None:
        pytest.skip("mypy is not installed and could not be installed from PyPI")
    # gpujit as an installed package is to its users: its own modules' errors are not theirs
    cfg = tmp_path / "mypy.ini"
    cfg.write_text("[mypy]\ncheck_untyped_defs = True\n[mypy-gpujit.*]\nignore_errors = True\n")
    # in place, mypy is shown the checkout's python/; an installed gpujit it finds in the
    # interpreter's site-packages, which mypy refuses to have in MYPYPATH
    if os.path.dirname(PKG) not in site.getsitepackages():
        env["MYPYPATH"] = os.path.dirname(PKG)
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    base = cmd + ["--config-file", str(cfg), "--no-incremental", "--cache-dir", str(tmp_path / "cache")]
    r = subprocess.run(base + [str(tmp_path / "good.py")], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run(base + [str(tmp_path / "bad.py")], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 1, r.stdout + r.stderr
    assert '"_Shared" has no attribute "arrayy"' in r.stdout and 'no attribute "float32x9"' in r.stdout, r.stdout
