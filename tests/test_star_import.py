"""`from gpujit import *` gives numba.cuda's names: those `from numba.cuda import *` gives that
gpujit has (read from numba-cuda 0.30.4's wheel, as test_public_names reads it; that part is
skipped without the wheel), less modules and `compile`; none shadows a builtin or a module of
the standard library."""
import builtins
import inspect
import sys
import zipfile

import pytest

import gpujit as gpu
from test_public_names import PREFIX, _wheel, peer_names


def star():
    ns = {}
    exec("from gpujit import *", ns)
    ns.pop("__builtins__")
    return ns


def test_star_binds_all_and_nothing_else():
    ns = star()
    assert sorted(ns) == sorted(gpu.__all__) and len(set(gpu.__all__)) == len(gpu.__all__)
    assert ns["jit"] is gpu.jit and ns["float32x3"] is gpu.float32x3 and ns["float32"] is gpu.float32


def test_star_shadows_no_builtin_and_no_stdlib_module():
    names = set(gpu.__all__)
    assert not names & set(dir(builtins)), names & set(dir(builtins))
    assert not names & set(sys.stdlib_module_names), names & set(sys.stdlib_module_names)
    assert not [n for n in names if inspect.ismodule(getattr(gpu, n))]


def test_star_matches_numba_cuda():
    wheel = _wheel()
    if wheel is None:
        pytest.skip("numba-cuda's wheel is not cached (see test_public_names)")
    top = [n for n in peer_names(wheel) if "." not in n]
    with zipfile.ZipFile(wheel) as z:
        src = z.read(PREFIX + "types/__init__.py").decode()
    type_names = src.split('all_str = """')[1].split('"""')[0].split()
    from gpujit.vector_types import constructors
    want = {n for n in top + type_names if hasattr(gpu, n) and not inspect.ismodule(getattr(gpu, n))}
    want = (want - {"compile"} - set(getattr(sys, "stdlib_module_names", ()))) | set(constructors)
    assert set(gpu.__all__) == want, (sorted(set(gpu.__all__) - want), sorted(want - set(gpu.__all__)))
