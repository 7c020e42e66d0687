"""gpujit used from a checkout (`export PYTHONPATH=$PWD/python`): Python reads `.pth` files
only in site directories, never in PYTHONPATH's, so the gpujit_numba_cuda.pth hook beside this
file is not read there and GPUJIT_AS_NUMBA_CUDA=1 would leave numba.cuda numba's own, silently.
Python imports `sitecustomize` from sys.path at start-up, after the site directories' `.pth`
files, so this module does what the hook does, then runs the `sitecustomize` it hides (the
next one on sys.path), if there is one. Not installed with the package: an installed gpujit
has the hook itself. It imports nothing of gpujit unless the variable is set."""
import os
import sys


def _env_on(name):
    return os.environ.get(name, "").strip() not in ("", "0")


def _run():
    me = os.path.realpath(__file__)
    here = os.path.dirname(me)
    if _env_on("GPUJIT_AS_NUMBA_CUDA"):
        try:
            from gpujit import _place
            if not _place.installed():
                _place.install()
        except Exception as e:  # never stop the interpreter from starting
            sys.stderr.write("gpujit: GPUJIT_AS_NUMBA_CUDA is set, but gpujit could not be put in "
                             "numba.cuda's place: %s: %s\n" % (type(e).__name__, e))
    # the sitecustomize this one hides (a distribution's, a virtual environment's)
    import importlib.machinery
    import importlib.util
    rest = [p for p in sys.path if os.path.realpath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    while spec is not None and spec.origin and os.path.realpath(spec.origin) == me:
        # this file again, under another name for its folder (a symbolic link)
        rest = [p for p in rest if os.path.realpath(p or os.curdir) != os.path.dirname(os.path.realpath(spec.origin))
                and os.path.join(os.path.realpath(p or os.curdir), "sitecustomize.py") != me]
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)


_run()
