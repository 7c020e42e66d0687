"""Test-only `numba.cuda`: gpujit under numba's name.

Every public name of gpujit is re-exported unchanged, and each gpujit
submodule is registered as `numba.cuda.<name>`, so `numba.cuda` behaves as
if it were the gpujit package itself. Nothing is added except what the test
harness needs to run the peer's tests at all:
  - `HAS_NUMBA`: False, as numba really is absent, and the peer's tests use this
    flag to leave out their numba-CPU interop parts; True in a run with the real
    numba installed (run.py --numba, GPUJIT_COMPAT_NUMBA=1), which has this
    package alone as numba.cuda;
  - `config` (also `numba.cuda.core.config`) is gpujit.config, whose
    ENABLE_CUDASIM is 0: gpujit is not numba's simulator;
  - `testing`: stand-ins for the peer's test decorators (testing.py);
  - `tests`: the peer's test package, found on __path__ at the folder the
    runner extracted from the numba-cuda wheel (GPUJIT_COMPAT_PEER).
A gpujit name that numba.cuda has and gpujit lacks stays missing.
"""
import importlib
import importlib.abc
import importlib.util
import os
import pkgutil
import sys

import gpujit as _gpujit

for _name in dir(_gpujit):
    if not _name.startswith("_"):
        globals()[_name] = getattr(_gpujit, _name)

for _info in pkgutil.iter_modules(_gpujit.__path__):
    if _info.name.startswith("_") and _info.name != "_internal":  # numba.cuda._internal is public to its tests
        continue
    try:
        _mod = importlib.import_module("gpujit." + _info.name)
    except Exception:  # a module gpujit itself cannot import stays missing
        continue
    sys.modules[__name__ + "." + _info.name] = _mod
    globals()[_info.name] = _mod


class _GpujitAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """numba.cuda.X.Y (a module inside one of gpujit's subpackages) is gpujit.X.Y itself,
    the same module object, not a second copy of it under another name."""

    def find_spec(self, fullname, path, target=None):
        head, _, rest = fullname.partition(__name__ + ".")
        if head or "." not in rest or rest.split(".")[0] in ("tests", "core", "testing"):
            return None
        try:
            importlib.util.find_spec("gpujit." + rest)
        except ImportError:
            return None
        if importlib.util.find_spec("gpujit." + rest) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        return importlib.import_module("gpujit." + spec.name[len(__name__) + 1:])

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _GpujitAlias())

HAS_NUMBA = os.environ.get("GPUJIT_COMPAT_NUMBA") == "1"

from .core import config  # noqa: E402

sys.modules[__name__ + ".config"] = config

_peer = os.environ.get("GPUJIT_COMPAT_PEER")
if _peer:
    __path__.append(_peer)
    from . import _support_loader  # noqa: E402

    _support_loader.install(os.path.join(_peer, "tests", "support.py"))
