"""The package as installed: meson.build installs python/gpujit by a rule (every module found
when meson configures), not by a hand-kept list, so a wheel ships each module the package
imports; and an installed gpujit (a wheel, not this checkout) holds every module of the
checkout, its VERSION and one _core extension that needs no libLLVM."""
import os
import re
import subprocess
import sys

import pytest

import gpujit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The checkout whose modules an installed gpujit must hold: this one, or the one named by
# GPUJIT_SOURCE_TREE when the tests run from a copy (scripts/test_wheel.sh).
SOURCE = os.environ.get("GPUJIT_SOURCE_TREE", ROOT)
PKG = os.path.join(SOURCE, "python", "gpujit")
INSTALLED = os.path.dirname(os.path.abspath(gpujit.__file__))


def modules(pkg):
    return {os.path.relpath(os.path.join(d, n), pkg) for d, _, names in os.walk(pkg) for n in names
            if (n.endswith((".py", ".pyi")) or n == "py.typed") and "__pycache__" not in d}


def meson_build():
    with open(os.path.join(SOURCE, "meson.build")) as f:
        return f.read()


def test_meson_lists_no_module_by_hand():
    assert not re.findall(r"'python/gpujit/[\w/]+\.py'", meson_build()), \
        "meson.build names modules one by one; the install rule finds them"


def test_meson_install_rule_finds_every_module():
    # the listing program meson.build runs at configure time, run here on the checkout
    program = re.search(r"package_files = run_command\(py, '-c', '''(.*?)'''", meson_build(), re.S)
    assert program, "meson.build's package_files rule not found"
    out = subprocess.run([sys.executable, "-c", program.group(1), os.path.join(SOURCE, "python")],
                         capture_output=True, text=True, check=True).stdout.split()
    listed = {os.path.relpath(f, "gpujit") for f in out}
    assert listed == modules(PKG) | {"VERSION", "THIRD_PARTY_NOTICES.txt"}


# installed: scripts/test_wheel.sh and the GPU script run the tests from a copy of the
# checkout, naming it in GPUJIT_SOURCE_TREE (the sanitizer run's copy of python/ is not one)
@pytest.mark.skipif(INSTALLED == os.path.realpath(PKG) or INSTALLED == PKG or "GPUJIT_SOURCE_TREE" not in os.environ,
                    reason="gpujit is imported from the checkout, not installed")
def test_installed_package_holds_every_module():
    assert modules(PKG) - modules(INSTALLED) == set(), "modules missing from the installed package"
    assert os.path.isfile(os.path.join(INSTALLED, "VERSION"))
    assert os.path.isfile(os.path.join(INSTALLED, "THIRD_PARTY_NOTICES.txt"))
    cores = [n for n in os.listdir(INSTALLED) if n.startswith("_core") and n.endswith(".so")]
    assert len(cores) == 1, cores
    ldd = subprocess.run(["ldd", os.path.join(INSTALLED, cores[0])], capture_output=True, text=True).stdout
    assert ldd and "libLLVM" not in ldd and "not found" not in ldd, ldd
    with open("/proc/self/maps") as f:
        assert "libLLVM" not in f.read(), "a libLLVM is loaded in the process"
    # the place mode's hook (gpujit/_place.py), beside the package in site-packages
    pth = os.path.join(os.path.dirname(INSTALLED), "gpujit_numba_cuda.pth")
    with open(pth) as f, open(os.path.join(SOURCE, "python", "gpujit_numba_cuda.pth")) as g:
        assert f.read() == g.read()


def test_version_has_one_owner():
    with open(os.path.join(PKG, "VERSION")) as f:
        assert gpujit.__version__ == f.read().strip()
    assert re.search(r"version : files\('python/gpujit/VERSION'\)", meson_build())
    with open(os.path.join(SOURCE, "pyproject.toml")) as f:
        pyproject = f.read()
    assert re.search(r"^dynamic = \['version'\]", pyproject, re.M)
    assert not re.search(r"^version\s*=", pyproject, re.M)
