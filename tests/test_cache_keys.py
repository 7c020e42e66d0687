"""What the on-disk cache's key covers (gpujit/caching.py): everything a kernel reads through
another module (a module's attributes, an Enum's members, a function's @overload in a third
module, a register_jitable function), so that a process started after one of them changed never
loads the kernel compiled from the old one. Each child process imports the modules afresh."""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpujit as gpu
from gpujit import caching
from gpujit.errors import NumbaWarning

HELPERS = '''
import enum
import gpujit as gpu
from gpujit.extending import register_jitable

SCALE = {scale}


class Color(enum.IntEnum):
    RED = {red}


class Mode(enum.Enum):
    FAST = {fast}


@gpu.jit(device=True)
def dev(x):
    return x + {dev}


@register_jitable
def jitable(x):
    return x * {jit}
'''

PYFNS = '''
def twice(x):
    return 2 * x
'''

OVERLOADS = '''
from gpujit.extending import overload
import pyfns

K = {k}


@overload(pyfns.twice)
def twice_impl(x):
    def impl(x):
        return x * K
    return impl
'''

KERNELS = '''
import gpujit as gpu
import helpers
import pyfns
import ovmod                   # registers the overload of pyfns.twice
from helpers import Color


@gpu.jit(cache=True)
def k_attr(out, x):
    out[0] = helpers.SCALE * x[0]
    out[1] = helpers.dev(x[1])


@gpu.jit(cache=True)
def k_enum(out, x):
    out[0] = Color.RED * x[0]
    out[1] = helpers.Mode.FAST.value * x[1]


@gpu.jit(cache=True)
def k_overload(out, x):
    out[0] = pyfns.twice(x[0])
    out[1] = pyfns.twice(x[1])


@gpu.jit(cache=True)
def k_jitable(out, x):
    out[0] = helpers.jitable(x[0])
    out[1] = helpers.jitable(x[1])
'''

# each kernel against what the modules hold in this process, on fresh inputs
CHILD = '''
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import helpers, ovmod, kmod
rng = np.random.default_rng()
want = {
    "k_attr": lambda x: [helpers.SCALE * x[0], helpers.dev.py_func(x[1])],
    "k_enum": lambda x: [int(helpers.Color.RED) * x[0], helpers.Mode.FAST.value * x[1]],
    "k_overload": lambda x: [ovmod.K * x[0], ovmod.K * x[1]],
    "k_jitable": lambda x: [helpers.jitable(x[0]), helpers.jitable(x[1])],
}
res = {}
for name, f in want.items():
    k = getattr(kmod, name)
    x = rng.integers(-1000, 1000, 2).astype(np.float64)
    out = np.full(2, np.nan)
    k[1, 1](out, x)
    res[name] = [bool((out == np.array(f(x))).all()), sum(k.stats.cache_hits.values())]
print(json.dumps(res))
'''

START = dict(scale=2, red=5, fast=3, dev=1, jit=3, k=4)


def write(tmp, **values):
    """The modules; only those whose text changes are written (a kernel's own source file
    changing drops its whole index)."""
    v = dict(START, **values)
    for name, text in (("helpers", HELPERS.format(**v)), ("pyfns", PYFNS), ("ovmod", OVERLOADS.format(**v)),
                       ("kmod", KERNELS)):
        path = tmp / (name + ".py")
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


def env(tmp):
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(gpu.__file__)), e.get("PYTHONPATH", "")])
    e["GPUJIT_CACHE_DIR"] = str(tmp / "cache")
    return e


def run(tmp):
    p = subprocess.run([sys.executable, "-c", CHILD, str(tmp)], capture_output=True, text=True, env=env(tmp),
                       timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_edits_in_other_modules_are_new_kernels(tmp_path):
    write(tmp_path)
    assert run(tmp_path) == {k: [True, 0] for k in ("k_attr", "k_enum", "k_overload", "k_jitable")}
    assert run(tmp_path) == {k: [True, 1] for k in ("k_attr", "k_enum", "k_overload", "k_jitable")}
    values = dict(START)
    # each edit: the kernels that read what changed compile again (and are right); the others load
    for edit, changed in ((dict(scale=3), {"k_attr"}), (dict(dev=100), {"k_attr"}), (dict(red=7), {"k_enum"}),
                          (dict(fast=11), {"k_enum"}), (dict(k=9), {"k_overload"}), (dict(jit=-5), {"k_jitable"})):
        values.update(edit)
        write(tmp_path, **values)
        got = run(tmp_path)
        assert got == {k: [True, 0 if k in changed else 1] for k in got}, edit
        assert run(tmp_path) == {k: [True, 1] for k in got}, edit


SEEDED = '''
import sys
sys.path.insert(0, sys.argv[1])
import seeded
from gpujit.caching import fingerprint
print(fingerprint(seeded.f))
'''


def test_fingerprint_does_not_depend_on_the_hash_seed(tmp_path):
    (tmp_path / "seeded.py").write_text(textwrap.dedent('''
        NAMES = frozenset({"alpha", "beta", "gamma", "delta", "epsilon"})
        def f(x):
            return x in {"one", "two", "three", "four", "five", "six"} or x in NAMES
    '''))
    prints = set()
    for seed in ("1", "2", "3"):
        e = dict(env(tmp_path), PYTHONHASHSEED=seed)
        p = subprocess.run([sys.executable, "-c", SEEDED, str(tmp_path)], capture_output=True, text=True, env=e,
                           timeout=300)
        assert p.returncode == 0, p.stderr
        prints.add(p.stdout.strip())
    assert len(prints) == 1 and "None" not in prints


def test_what_changes_the_fingerprint():
    ns = {}

    def f_of(src):
        exec(textwrap.dedent(src), ns)
        return caching.fingerprint(ns["f"])

    base = f_of("""
        def f(x, *, k=1):
            return x + k
    """)
    assert base is not None
    assert f_of("""
        def f(x, *, k=2):
            return x + k
    """) != base                     # a keyword-only default
    assert f_of("""

        def f(x, *, k=1):
            return x + k
    """) != base                     # its lines (in error messages and line info)
    assert f_of("""
        def f(x, *, k=1):
            return x + k
    """) == base
    ns["X"] = float("nan")           # a global NaN's sign (the compiler keeps it)
    nan = f_of("""
        def f(x):
            return X
    """)
    ns["X"] = -float("nan")
    assert f_of("""
        def f(x):
            return X
    """) != nan


def test_unkeyable_value_warns(tmp_path):
    # the key covers each attribute of a module that the kernel's code names (`shape` here, which
    # the kernel reads from an array): one that does not pickle leaves the kernel uncached
    (tmp_path / "unkeyed_helpers.py").write_text(textwrap.dedent('''
        import threading
        N = 3
        shape = threading.Lock()
    '''))
    (tmp_path / "unkeyed.py").write_text(textwrap.dedent('''
        import gpujit as gpu
        import unkeyed_helpers as h


        @gpu.jit(cache=True)
        def k(r, x):
            r[0] = x[0] * x.shape[0] * h.N
    '''))
    sys.path.insert(0, str(tmp_path))
    os.environ["GPUJIT_CACHE_DIR"] = str(tmp_path / "cache")
    try:
        import unkeyed
        x = np.random.default_rng().standard_normal(4)
        r = np.full(1, np.nan)
        with pytest.warns(NumbaWarning, match=r"cannot cache k: unkeyed_helpers.shape \(a lock, which does not "
                                              r"pickle\) has no fingerprint"):
            unkeyed.k[1, 1](r, x)
        assert r[0] == x[0] * 4 * 3
    finally:
        sys.path.remove(str(tmp_path))
        for m in ("unkeyed", "unkeyed_helpers"):
            sys.modules.pop(m, None)
        del os.environ["GPUJIT_CACHE_DIR"]
    assert not any(f.endswith((".nbi", ".nbc")) for _, _, fs in os.walk(tmp_path / "cache") for f in fs)


LIB_OVERLOAD = '''
import colorsys
from gpujit.extending import overload


@overload(colorsys.rgb_to_yiq)
def yiq_impl(r, g, b):
    def impl(r, g, b):
        return (r * {k}, g, b)
    return impl
'''

LIB_KERNEL = '''
import colorsys
import gpujit as gpu
import libov                  # registers the overload of colorsys.rgb_to_yiq


@gpu.jit(cache=True)
def k(out, x):
    out[0] = colorsys.rgb_to_yiq(x[0], 0.0, 0.0)[0]
'''

LIB_CHILD = '''
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import libkmod, gpujit
x = np.random.default_rng().integers(1, 1000, 1).astype(np.float64)
out = np.full(1, np.nan)
libkmod.k[1, 1](out, x)
print(json.dumps([out[0] / x[0], sum(libkmod.k.stats.cache_hits.values()), gpujit.__file__]))
'''


def run_lib(tmp, pythonpath=None):
    e = env(tmp)
    if pythonpath:
        e["PYTHONPATH"] = pythonpath
    p = subprocess.run([sys.executable, "-c", LIB_CHILD, str(tmp)], capture_output=True, text=True, env=e,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_overload_of_a_library_function(tmp_path):
    """An @overload of a function of Python's (or NumPy's) modules, which the key otherwise
    knows by their name and version: an edit to the overload is a new kernel."""
    (tmp_path / "libkmod.py").write_text(LIB_KERNEL)
    (tmp_path / "libov.py").write_text(LIB_OVERLOAD.format(k=3))
    assert run_lib(tmp_path)[:2] == [3, 0]
    assert run_lib(tmp_path)[:2] == [3, 1]
    (tmp_path / "libov.py").write_text(LIB_OVERLOAD.format(k=7))
    assert run_lib(tmp_path)[:2] == [7, 0]
    assert run_lib(tmp_path)[:2] == [7, 1]


def test_gpujit_python_files_are_in_the_build(tmp_path):
    """A source checkout whose Python files are edited in place keeps its version: the edit is
    another build, whose entries are other kernels."""
    pkg = tmp_path / "checkout" / "python"
    shutil.copytree(os.path.dirname(gpu.__file__), pkg / "gpujit", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "checkout" / "meson.build").write_text("")
    (tmp_path / "libkmod.py").write_text(LIB_KERNEL)
    (tmp_path / "libov.py").write_text(LIB_OVERLOAD.format(k=3))
    first = run_lib(tmp_path, str(pkg))
    assert first[2] == str(pkg / "gpujit" / "__init__.py") and first[1] == 0
    assert run_lib(tmp_path, str(pkg))[1] == 1
    with open(pkg / "gpujit" / "ufuncloop.py", "a") as f:
        f.write("\n# edited\n")
    assert run_lib(tmp_path, str(pkg))[1] == 0
    assert run_lib(tmp_path, str(pkg))[1] == 1
