"""The package as installed: meson.build lists every module of python/gpujit, so `pip install .`
ships each one the package imports."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_meson_installs_every_module():
    with open(os.path.join(ROOT, "meson.build")) as f:
        listed = set(re.findall(r"'python/gpujit/([\w/]+\.py)'", f.read()))
    pkg = os.path.join(ROOT, "python", "gpujit")
    modules = {os.path.relpath(os.path.join(d, n), pkg) for d, _, names in os.walk(pkg) for n in names
               if n.endswith(".py") and "__pycache__" not in d}
    assert modules - listed == set(), "modules missing from meson.build's install_sources"
    assert listed - modules == set(), "meson.build installs modules that do not exist"
