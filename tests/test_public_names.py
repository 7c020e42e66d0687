"""numba.cuda's public names, counted against gpujit's.

The names are read from numba-cuda 0.30.4's wheel (the one the compatibility
yardstick caches; skipped when it is absent), by parsing its sources, never
importing them:
- the names `import numba.cuda` binds: __init__.py, device_init.py and what they
  star-import from api.py (not the type names of numba.cuda.types, counted by the
  type tests; not the vector types, made in a loop; not modules of the standard
  library or NumPy that those files happen to import). What stubs.py and
  intrinsics.py define but device_init.py does not import (Stub, Dim3,
  shfl_sync_intrinsic, ...) is not in numba.cuda's namespace and not counted;
- atomic.X (stubs.atomic's members), fp16.X (fp16.__all__'s public names) and
  random.X (random.py's public functions).

A name is present when gpujit has it at the same place. Each absent name must be
listed, with its reason, in docs/compatibility.md's section NAMES_SECTION.

    python3 tests/test_public_names.py      # prints the count and the absent names
"""
import ast
import glob
import os
import re
import sys
import zipfile

import pytest

PEER = "0.30.4"
PREFIX = "numba_cuda/numba/cuda/"
NAMES_SECTION = "## numba.cuda names gpujit leaves out"
HERE = os.path.dirname(os.path.abspath(__file__))
NOT_API = {"sys", "os", "importlib", "warnings", "contextlib", "np", "HAS_NUMBA"}
# fp16.__all__'s registries are numba's typing/lowering tables, not functions
FP16_NOT_API = {"typing_registry", "target_registry"}


def _wheel():
    cache = os.environ.get("GPUJIT_COMPAT_CACHE", os.path.expanduser("~/.cache/gpujit-compat"))
    found = sorted(glob.glob(os.path.join(cache, "numba_cuda-%s-*.whl" % PEER)))
    return found[0] if found else None


def _bound(tree, read, seen):
    """Public names a module's top level binds; a star import from numba.cuda's own
    modules follows into them (api.py has no __all__: each public name it binds)."""
    out = []
    for n in tree.body:
        if isinstance(n, ast.If):  # config.ENABLE_CUDASIM: the device branch
            out += _bound(ast.Module(body=n.orelse, type_ignores=[]), read, seen)
            continue
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            out.append(n.name)
        elif isinstance(n, ast.Assign):
            for t in n.targets:
                out += [e.id for e in ast.walk(t) if isinstance(e, ast.Name)]
        elif isinstance(n, ast.Import):
            out += [(a.asname or a.name).split(".")[0] for a in n.names]
        elif isinstance(n, ast.ImportFrom):
            mod = n.module or ""
            if n.names[0].name == "*":
                if mod.endswith("types"):
                    continue
                name = mod.split(".")[-1]
                if name not in seen:
                    seen.add(name)
                    out += _bound(ast.parse(read(name + ".py")), read, seen)
                continue
            out += [a.asname or a.name for a in n.names]
    return [x for x in out if not x.startswith("_") and x not in NOT_API]


def peer_names(wheel):
    """The qualified names counted, in a stable order."""
    with zipfile.ZipFile(wheel) as z:
        def read(rel):
            return z.read(PREFIX + rel).decode()
        names = _bound(ast.parse(read("__init__.py")), read, {"__init__"})
        trees = {m: ast.parse(read(m + ".py")) for m in ("stubs", "fp16", "random")}
    atomic = next(n for n in trees["stubs"].body if isinstance(n, ast.ClassDef) and n.name == "atomic")
    names += ["atomic." + n.name for n in atomic.body if isinstance(n, ast.ClassDef)]
    for n in trees["fp16"].body:
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "__all__":
            names += ["fp16." + e.value for e in n.value.elts
                      if not e.value.startswith("_") and e.value not in FP16_NOT_API]
    names += ["random." + n.name for n in trees["random"].body
              if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]
    return list(dict.fromkeys(names))


def present(qualname):
    """random.X is in a submodule, which numba too binds only once imported."""
    import importlib
    import gpujit
    obj = gpujit
    head, _, rest = qualname.partition(".")
    if rest and not hasattr(gpujit, head):
        try:
            obj = importlib.import_module("gpujit." + head)
        except ImportError:
            return False
        qualname = rest
    for part in qualname.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return False
    return True


def documented_absent():
    """Names docs/compatibility.md lists as left out: `name` at the start of a table row."""
    with open(os.path.join(HERE, "..", "docs", "compatibility.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.find(NAMES_SECTION)
    if start < 0:
        return set()
    end = text.find("\n## ", start + 1)
    section = text[start:end if end > 0 else len(text)]
    names = set()
    for row in re.findall(r"^\| *([^|]+)\|", section, re.M):
        names.update(re.findall(r"`([\w.]+)`", row))
    return names


def count():
    wheel = _wheel()
    if wheel is None:
        return None
    names = peer_names(wheel)
    absent = [n for n in names if not present(n)]
    return names, absent


@pytest.fixture(scope="module")
def counted():
    r = count()
    if r is None:
        pytest.skip("numba-cuda %s's wheel is not in the compatibility cache" % PEER)
    return r


def test_most_names_present(counted):
    names, absent = counted
    assert len(names) > 100  # the parse found the namespace
    assert len(names) - len(absent) >= 0.95 * len(names), absent


def test_absent_names_documented(counted):
    _, absent = counted
    undocumented = sorted(set(absent) - documented_absent())
    assert not undocumented, "absent from gpujit and not in docs/compatibility.md: %s" % undocumented


def test_documented_names_are_absent(counted):
    # a name added later must leave the list of what is left out
    names, absent = counted
    stale = sorted((documented_absent() & set(names)) - set(absent))
    assert not stale, "present in gpujit but listed as left out: %s" % stale


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    r = count()
    if r is None:
        sys.exit("numba-cuda %s's wheel is not in the compatibility cache" % PEER)
    names, absent = r
    print("%d of %d public names present (%.0f %%)" % (len(names) - len(absent), len(names),
                                                      100.0 * (len(names) - len(absent)) / len(names)))
    for n in absent:
        print("  absent:", n)
