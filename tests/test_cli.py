"""python3 -m gpujit: --help, --version, info and ptx, run as a user runs them (a subprocess)."""
import os
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpujit

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
EXAMPLES = os.path.join(REPO, "examples")


def cli(*args, cwd=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(gpujit.__file__)) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "gpujit", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


def one_line_error(r, code=2):
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpujit: "), r.stderr
    return lines[0]


KERNELS = textwrap.dedent('''
    import gpujit as gpu

    @gpu.jit("void(float32[::1], float32)")
    def eager(a, x):
        a[gpu.grid(1)] = x

    @gpu.jit
    def lazy(a, b):
        a[0] = b

    @gpu.jit
    def lazy2(a):
        a[0] = 1

    if __name__ == "__main__":
        raise SystemExit("the main block must not run")
''')


@pytest.fixture
def script(tmp_path):
    p = tmp_path / "kernels.py"
    p.write_text(KERNELS)
    return str(p)


def test_help_lists_commands_and_options():
    r = cli("--help")
    assert r.returncode == 0
    for word in ("info", "ptx", "--version"):
        assert word in r.stdout
    r = cli("ptx", "--help")
    assert r.returncode == 0
    helps = {"file": "script that defines", "--kernel NAME": "only this kernel", "--sig SIG": "signature",
             "--cc MAJOR.MINOR": "compute capability", "--output OUT": "write the PTX"}
    for opt, words in helps.items():
        # the option's line, then its help text on the same line or the next
        # (argparse prints "-o OUT, --output OUT" before CPython 3.13, "-o, --output OUT" since)
        m = re.search(r"^  (?:-\w(?: \w+)?, )?%s(?: {2,}|\n {20,})(.*)" % re.escape(opt), r.stdout, re.M)
        assert m and words in m.group(1), (opt, r.stdout)
    assert "default: 9.0" in r.stdout
    assert cli("info", "--help").returncode == 0


def test_no_command_is_a_usage_error():
    r = cli()
    assert r.returncode == 2 and "usage" in r.stderr and "Traceback" not in r.stderr


def test_version():
    r = cli("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == "gpujit %s" % gpujit.__version__
    # the version's one owner (in the checkout, also when the tests run from a copy without it)
    with open(os.path.join(os.environ.get("GPUJIT_SOURCE_TREE", REPO), "python", "gpujit", "VERSION")) as f:
        assert gpujit.__version__ == f.read().strip()


def test_info():
    r = cli("info")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    fields = dict(re.findall(r"^(\S[^:\n]*?)\s+: (.*)$", out, re.M))
    assert fields["gpujit"].startswith(gpujit.__version__)
    assert fields["LLVM"].startswith("19.")
    assert sys.version.split()[0] in fields["Python"]
    assert fields["NumPy"] == np.__version__
    assert fields["default target"].startswith(gpujit.current_target())
    assert "9.0" in fields["PTX for compute capabilities"]
    assert "libdevice" in fields and "cache directory (cache=True)" in fields
    if gpujit._core.is_available():   # a GPU (is_available() is also True where the cpu target was chosen)
        major, minor = gpujit.driver_version()
        assert fields["CUDA version (driver)"] == "%d.%d" % (major, minor)
        for d in gpujit.list_devices():
            line = fields["device %d" % d.id]
            assert d.name in line and "compute capability %d.%d" % d.compute_capability in line
    else:
        assert "missing" in fields and fields["GPU target"] == "not usable"
        assert re.search(r"^missing\s+: .*driver", out, re.M)


def cli_env(*args, **env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("GPUJIT_")}
    e.update(env)
    e["PYTHONPATH"] = os.path.dirname(os.path.dirname(gpujit.__file__)) + os.pathsep + e.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "gpujit", *args], capture_output=True, text=True, env=e,
                          timeout=300)


def test_info_is_as_complete_as_numba_s(tmp_path):
    r = cli_env("info", GPUJIT_CPU_THREADS="3", GPUJIT_CACHE_DIR=str(tmp_path / "cache"))
    assert r.returncode == 0, r.stderr
    fields = dict(re.findall(r"^(\S[^:\n]*?)\s+: (.*)$", r.stdout, re.M))
    from gpujit import _core
    env = _core.cache_environment()
    assert fields["compiles for (and caches by)"].startswith(env["host_cpu"])
    assert set(fields["CPU features"].split()) == {f[1:] for f in env["host_features"].split(",") if f[0] == "+"}
    assert fields["threads running blocks"].startswith("3 (GPUJIT_CPU_THREADS=3")
    assert fields["GPUJIT_CPU_THREADS"] == "3"
    assert fields["GPUJIT_CACHE_DIR"] == str(tmp_path / "cache")
    assert "does not exist yet" in fields["cache directory (cache=True)"]
    for key in ("ptxas", "nvdisasm", "NVRTC", "libdevice", "installed", "memory", "C library", "CPU"):
        assert fields.get(key), (key, r.stdout)
    # the one inspect_sass runs: $CUDA_HOME, NVIDIA's wheels, PATH, then the toolkit's place
    from gpujit.sass import find_tool
    ptxas = find_tool("ptxas")
    assert (fields["ptxas"] == ptxas) if ptxas else fields["ptxas"].startswith("not found")
    if shutil.which("ptxas") and not os.environ.get("CUDA_HOME") and not os.environ.get("CUDA_PATH"):
        assert ptxas is not None
    assert "GiB" in fields["memory"] and fields["C library"].split()[0] in ("glibc", "unknown", "musl")
    (tmp_path / "file").write_text("x")
    r = cli_env("info", GPUJIT_CACHE_DIR=str(tmp_path / "file"))
    fields = dict(re.findall(r"^(\S[^:\n]*?)\s+: (.*)$", r.stdout, re.M))
    assert "is not used: it is not a directory: not usable" in fields["cache directory (cache=True)"]
    assert "__pycache__" in fields["cache directory used instead"]


@pytest.mark.parametrize("env", [dict(GPUJIT_TARGET="bogus"), dict(GPUJIT_TARGET="gpu"),
                                 dict(GPUJIT_DEBUG="bogus", GPUJIT_CPU_BOUNDSCHECK="maybe"),
                                 dict(GPUJIT_ALWAYS_WARN_UNINIT_VAR="2", GPUJIT_CUDA_LOW_OCCUPANCY_WARNINGS="x")])
def test_info_reports_bad_settings_in_one_line(env):
    r = cli_env("info", **env)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpujit: "), r.stderr
    for var, value in env.items():
        assert "%s=%r" % (var, value) in lines[0]
        assert re.search(r"^%s\s+: %s  <- bad: " % (var, re.escape(value)), r.stdout, re.M), r.stdout
    assert "__Versions__" in r.stdout and "__For the GPU target__" in r.stdout  # the rest is shown


def test_detect_agrees_with_gpus(tmp_path):
    code = "import gpujit; print(gpujit.detect(), len(gpujit.gpus))"
    for env, shown in ((dict(), "GPUJIT_TARGET unset"), (dict(GPUJIT_TARGET="cpu"), "GPUJIT_TARGET='cpu'")):
        e = {k: v for k, v in os.environ.items() if not k.startswith("GPUJIT_")}
        e.update(env, PYTHONPATH=os.path.dirname(os.path.dirname(gpujit.__file__)))
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=300)
        assert r.returncode == 0, r.stderr
        if gpujit.is_available():
            assert shown in r.stdout or env
            continue
        out = r.stdout.splitlines()
        assert shown in r.stdout, r.stdout
        if env:   # the cpu target chosen: the simulator's answer, one device
            assert out[-1] == "True 1" and "warp size: 32" in r.stdout, r.stdout
        else:
            assert out[-1] == "False 1" and "gpus[0]" in r.stdout, r.stdout  # the one device gpus lists, the host


def test_ptx_of_an_example():
    r = cli("ptx", os.path.join(EXAMPLES, "saxpy.py"))
    assert r.returncode == 0, r.stderr
    assert "// kernel saxpy, signature void(float32[::1], float32, float32[::1], float32[::1]), sm_90" in r.stdout
    assert ".target sm_90" in r.stdout and ".entry" in r.stdout
    r = cli("ptx", os.path.join(EXAMPLES, "saxpy.py"), "--cc", "8.6")
    assert r.returncode == 0 and ".target sm_86" in r.stdout


def test_ptx_lists_kernels_without_signature(script):
    r = cli("ptx", script)
    assert r.returncode == 0, r.stderr
    assert "// kernel eager" in r.stdout and r.stdout.count(".entry") == 1
    line = one_line_error(type(r)(r.args, 2, r.stdout, r.stderr))
    assert line.endswith(": lazy, lazy2")
    r = cli("ptx", os.path.join(EXAMPLES, "option_pricing.py"))
    assert "black_scholes" in one_line_error(r) and "monte_carlo" in r.stderr and not r.stdout


def test_ptx_with_sig_and_output(script, tmp_path):
    out = tmp_path / "lazy.ptx"
    r = cli("ptx", script, "--kernel", "lazy", "--sig", "void(int64[::1], int64)", "-o", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "// kernel lazy, signature void(int64[::1], int64), sm_90" in text and ".entry" in text


@pytest.mark.parametrize("args, words", [
    (["ptx", "no_such_file.py"], "no such file"),
    (["ptx", "@SCRIPT", "--cc", "abc"], "bad --cc"),
    (["ptx", "@SCRIPT", "--cc", "2.0"], "bad --cc"),
    (["ptx", "@SCRIPT", "--cc", "9.10"], "bad --cc"),
    (["ptx", "@SCRIPT", "--kernel", "lazy", "--sig", "void(float33[:])"], "unknown type name 'float33'"),
    (["ptx", "@SCRIPT", "--kernel", "lazy", "--sig", "void(float32[:])"], "2 arguments"),
    (["ptx", "@SCRIPT", "--kernel", "lazy", "--sig", "(("], "bad signature"),
    (["ptx", "@SCRIPT", "--kernel", "nope"], "no kernel named 'nope'"),
])
def test_ptx_bad_input_is_one_line(script, args, words):
    r = cli(*[script if a == "@SCRIPT" else a for a in args])
    assert words in one_line_error(r)


@pytest.mark.parametrize("body, words", [
    ("import gpujit\ndef f(:\n    pass\n", ":2: cannot load the script: SyntaxError"),
    ("x = 1\nraise RuntimeError('boom\\nmore')\n", ":2: cannot load the script: RuntimeError: boom"),
    ("import sys\nsys.exit(3)\n", "exited (status 3)"),
    ("x = 1\n", "no @gpujit.jit kernels"),
])
def test_ptx_bad_script_is_one_line(tmp_path, body, words):
    p = tmp_path / "bad.py"
    p.write_text(body)
    assert words in one_line_error(cli("ptx", str(p)))


def test_ptx_compile_error_names_the_line(tmp_path):
    p = tmp_path / "unsupported.py"
    p.write_text("import gpujit as gpu\n\n@gpu.jit('void(int32[:])')\ndef k(a):\n    a[0] = {1: 2}\n")
    r = cli("ptx", str(p))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "unsupported.py:5:" in r.stderr and "dicts are not supported" in r.stderr


RUN_SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    import gpujit as gpu

    @gpu.jit
    def lazy(a, b):
        a[0] = b

    @gpu.jit
    def never(a):
        a[0] = 1

    if __name__ == "__main__":
        a = np.zeros(3, np.int16)
        lazy[1, 1](a, 7)
        assert a[0] == 7
        print("ran on", gpu.current_target())   # standard output: must not mix with the PTX
        sys.exit(0)
''')


def test_ptx_run_takes_the_launched_types(tmp_path):
    p = tmp_path / "run.py"
    p.write_text(RUN_SCRIPT)
    r = cli("ptx", str(p), "--run")
    assert r.returncode == 0, r.stderr
    assert "ran on cpu" in r.stderr and "ran on" not in r.stdout
    assert "// kernel lazy, signature void(int16[::1], int64), sm_90" in r.stdout
    assert r.stdout.count(".entry") == 1 and "never" not in r.stdout
    assert r.stderr.strip().splitlines()[-1].endswith("never launched by the script's main block, not compiled "
                                                      "(pass --sig 'void(...)'): never")


@pytest.mark.parametrize("example", sorted(f for f in os.listdir(EXAMPLES)
                                            if f.endswith(".py") and not f.startswith("dask")))
def test_ptx_run_compiles_every_example(example, tmp_path):
    # the examples give no eager signatures: --run finds each kernel's types, and the
    # PTX assembles (the Dask example launches its kernel in worker processes only)
    out = tmp_path / "ptx"
    r = cli("ptx", os.path.join(EXAMPLES, example), "--run", "-o", str(out) + os.sep)
    assert r.returncode == 0 and "not compiled" not in r.stderr, r.stderr
    files = sorted(out.iterdir())
    assert files and len(files) == r.stderr.count("gpujit: wrote "), r.stderr
    for f in files:  # one PTX module per kernel and signature
        text = f.read_text()
        assert text.startswith("// kernel ") and text.count(".entry ") == 1
        assemble(f, tmp_path)


def assemble(path, tmp_path, arch="sm_90"):
    """ptxas assembles the PTX file (where ptxas is installed)."""
    ptxas = shutil.which("ptxas")
    if ptxas:
        a = subprocess.run([ptxas, "-arch=" + arch, str(path), "-o", str(tmp_path / "k.cubin")], capture_output=True,
                           text=True)
        assert a.returncode == 0, a.stderr


# the quickstart's way: no main guard, and the script prints
NO_GUARD = textwrap.dedent('''
    import numpy as np
    import gpujit as gpu

    @gpu.jit("void(float32[::1], float32, float32[::1])")
    def axpy(out, a, x):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = a * x[i] + out[i]

    out = np.ones(8, np.float32)
    axpy[1, 8](out, 2.0, np.arange(8, dtype=np.float32))
    print("result", out)
''')


def test_ptx_stdout_is_one_module_only(tmp_path):
    p = tmp_path / "noguard.py"
    p.write_text(NO_GUARD)
    r = cli("ptx", str(p))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("// kernel axpy, signature void(float32[::1], float32, float32[::1]), sm_90\n")
    assert "result" not in r.stdout and "result" in r.stderr
    (tmp_path / "out.ptx").write_text(r.stdout)
    assemble(tmp_path / "out.ptx", tmp_path)


def test_ptx_several_modules_need_a_directory(tmp_path):
    p = tmp_path / "two.py"
    two = KERNELS.replace("@gpu.jit\ndef lazy(a, b)",
                          "@gpu.jit(['void(int32[::1], int32)', 'void(float64[::1], float64)'])\ndef lazy(a, b)")
    assert two != KERNELS
    p.write_text(two)
    r = cli("ptx", str(p))
    line = one_line_error(r)
    assert "3 PTX modules" in line and "-o DIR" in line and not r.stdout
    assert "-o DIR" in one_line_error(cli("ptx", str(p), "-o", str(tmp_path / "one.ptx")))
    r = cli("ptx", str(p), "-o", str(tmp_path / "out") + os.sep)
    assert r.returncode == 0, r.stderr
    names = sorted(f.name for f in (tmp_path / "out").iterdir())
    assert names == ["eager.ptx", "lazy.1.ptx", "lazy.2.ptx"], names
    assert "signature void(float64[::1], float64)" in (tmp_path / "out" / "lazy.2.ptx").read_text()
    for n in names:
        assemble(tmp_path / "out" / n, tmp_path)
    r = cli("ptx", str(p), "--kernel", "lazy", "--sig", "void(int16[::1], int16)")  # one module: stdout
    assert r.returncode == 0 and r.stdout.count(".entry ") == 1, r.stderr


def test_ptx_cc_is_one_the_compiler_targets(script, tmp_path):
    line = one_line_error(cli("ptx", script, "--cc", "10.0"))
    assert "bad --cc '10.0'" in line and "8.6" in line and "9.0a" in line
    r = cli("ptx", script, "--cc", "9.0a")
    assert r.returncode == 0, r.stderr
    assert "sm_90a\n" in r.stdout.split("\n", 1)[0] + "\n" and ".target sm_90a" in r.stdout
    (tmp_path / "a.ptx").write_text(r.stdout)
    assemble(tmp_path / "a.ptx", tmp_path, "sm_90a")


def test_ptx_sig_needs_a_kernel_and_excludes_run(script):
    line = one_line_error(cli("ptx", script, "--sig", "void(int32[::1], int32)"))
    assert "--sig applies to one kernel: pass --kernel NAME" in line and "eager, lazy, lazy2" in line
    r = cli("ptx", script, "--kernel", "lazy", "--sig", "void(int32[::1], int32)", "--run")
    assert r.returncode == 2 and "not allowed with argument" in r.stderr and "Traceback" not in r.stderr


def test_ptx_directory_and_os_exit(tmp_path):
    assert "is a directory" in one_line_error(cli("ptx", str(tmp_path)))
    p = tmp_path / "quits.py"
    p.write_text("import os\nimport gpujit as gpu\n\n@gpu.jit('void(int32[::1])')\ndef k(a):\n    a[0] = 1\n\n"
                 "os._exit(0)\n")
    assert "called os._exit(0) while being loaded" in one_line_error(cli("ptx", str(p)))
    r = cli("ptx", str(p), "--run")  # a run that ends the process: the end of the run
    assert r.returncode == 0 and r.stdout.count(".entry ") == 1, r.stderr
