"""The yardstick's start-up hook in a run with numba installed (run.py --numba puts this folder
on PYTHONPATH, GPUJIT_COMPAT_NUMBA=1): every interpreter of the run, the peer's subprocesses
included, finds the real numba, and `numba.cuda` alone is the shim's package (gpujit)."""
import importlib.abc
import importlib.util
import os
import sys

SHIM_CUDA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "shim", "numba", "cuda")


class ShimNumbaCuda(importlib.abc.MetaPathFinder):
    """numba.cuda is the shim's package beside the real numba."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "numba.cuda":
            return None
        return importlib.util.spec_from_file_location(fullname, os.path.join(SHIM_CUDA, "__init__.py"),
                                                      submodule_search_locations=[SHIM_CUDA])


if os.environ.get("GPUJIT_COMPAT_NUMBA") == "1":
    # numba-cuda's own redirection of numba.cuda (an installed numba-cuda's .pth) steps aside
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__module__ != "_numba_cuda_redirector"]
    sys.meta_path.insert(0, ShimNumbaCuda())
