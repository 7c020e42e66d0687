"""numba.cuda.launchconfig: the launch configuration a kernel is being
compiled for.

A launch whose argument types have no compiled kernel yet compiles one
(Dispatcher._compile_for_args) before it runs; during that call, in that
thread, current_launch_config() is the launch's configuration (griddim,
blockdim, stream, sharedmem, dispatcher, and args). Everywhere else it is
None. The launcher (runtime/launch.c) keeps it per thread.
"""
import contextlib

from . import _core

__all__ = ["current_launch_config", "ensure_current_launch_config", "capture_compile_config"]


def current_launch_config():
    """The LaunchConfig whose kernel this thread is compiling, or None."""
    return _core.LaunchConfig._compiling()


def ensure_current_launch_config():
    """current_launch_config(), or RuntimeError when no launch is compiling a kernel."""
    cfg = current_launch_config()
    if cfg is None:
        raise RuntimeError("no launch configuration: this thread is not compiling a kernel for a launch")
    return cfg


@contextlib.contextmanager
def capture_compile_config(dispatcher):
    """Within the block, records in the yielded dict, under "config", the launch
    configuration of the last compilation `dispatcher` makes for a launch."""
    captured = {"config": None}
    compile_for_args = dispatcher._compile_for_args

    def wrapped(*args, **kws):
        captured["config"] = current_launch_config()
        return compile_for_args(*args, **kws)

    dispatcher._compile_for_args = wrapped
    try:
        yield captured
    finally:
        del dispatcher._compile_for_args
