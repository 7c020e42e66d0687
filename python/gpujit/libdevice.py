"""libdevice's functions in kernels: gpujit.libdevice.<name> calls CUDA's __nv_<name>
(libdevice.sinf(x), libdevice.popc(i), libdevice.sad(a, b, c), ...). The names and types are
libdevicefuncs's table; arguments convert to the parameters' types as in an assignment. A
function writing results through pointers (sincos, frexp, modf, remquo, ...) returns them:
its return value (unless void) first, a tuple when there is more than one. On the CPU
target the same functions run from gpujit's CPU implementations (C's libm where it has the
function). Outside a kernel they raise, as numba.cuda's do."""
from .intrinsics import _KernelOnly, add_paths
from .libdevicefuncs import create_signature as _create_signature, functions as _functions


def _make():
    made = {}
    for libname, (retty, args) in _functions.items():
        name = libname[len("__nv_"):]
        sig = _create_signature(retty, args)
        made[name] = _KernelOnly("gpujit.libdevice." + name, "%s(%s) -> %s: libdevice's %s." % (
            name, ", ".join(str(a) for a in sig.args), sig.return_type, libname))
    return made


_stubs = _make()
globals().update(_stubs)
add_paths(_stubs.values())
__all__ = sorted(_stubs)
