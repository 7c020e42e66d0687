"""Settings under numba.cuda.config's names, read when they apply (set them as
attributes: gpujit.config.CUDA_LOW_OCCUPANCY_WARNINGS = 1). Initial values come
from the environment variables named GPUJIT_<NAME>.

CUDA_LOW_OCCUPANCY_WARNINGS   warn (NumbaPerformanceWarning) when a launch configuration
                              (kernel[griddim, blockdim], a ufunc's, forall's or Reduce's)
                              has a grid of fewer than 128 blocks, numba's rule; default 1.
                              The cpu target warns only where the setting is given (in the
                              environment or assigned): by default it is quiet, as numba's
                              simulator is
CUDA_WARN_ON_IMPLICIT_COPY    warn when a launch or a ufunc copies a host array to a GPU
                              and back (cuda target only); default 1
ENABLE_CUDASIM                numba's simulator switch: always 0 (gpujit compiles)
CUDA_ENABLE_NRT               numba's device-side allocator (NRT) switch: accepted and
                              changes nothing, as gpujit kernels never allocate on the
                              device (gpujit.memory_management.nrt.rtsys counts zero)
DISABLE_PERFORMANCE_WARNINGS  1: no NumbaPerformanceWarning at all; default 0
(CUDA_LOW_OCCUPANCY_WARNINGS, CUDA_WARN_ON_IMPLICIT_COPY and DISABLE_PERFORMANCE_WARNINGS
also read numba's NUMBA_<NAME> where GPUJIT_<NAME> is not set; the C launcher keeps its own
copy of them, which assigning one of them here updates)
ALWAYS_WARN_UNINIT_VAR        1: warn (NumbaWarning "Detected uninitialized variable x")
                              where a kernel reads a variable that some path reaching
                              the read has not assigned; default 0
CUDA_ARRAY_INTERFACE_SYNC     wait for the stream a __cuda_array_interface__ names before
                              using the array (as_cuda_array, a launch taking it), as
                              the interface's v3 asks; default 1 (also read from
                              NUMBA_CUDA_ARRAY_INTERFACE_SYNC, numba's name)
"""
import os
import sys
import types

from . import _core


def _env(name, default, numba=False):
    """GPUJIT_<name> as an integer (numba=True: else numba's NUMBA_<name>), or default."""
    value = os.environ.get("GPUJIT_" + name)
    if value is None and numba:
        value = os.environ.get("NUMBA_" + name)
    try:
        return int(default if value is None else value)
    except ValueError:
        return default


CUDA_LOW_OCCUPANCY_WARNINGS = _env("CUDA_LOW_OCCUPANCY_WARNINGS", 1, numba=True)
CUDA_WARN_ON_IMPLICIT_COPY = _env("CUDA_WARN_ON_IMPLICIT_COPY", 1, numba=True)
ENABLE_CUDASIM = 0
CUDA_ENABLE_NRT = _env("CUDA_ENABLE_NRT", 0)
DISABLE_PERFORMANCE_WARNINGS = _env("DISABLE_PERFORMANCE_WARNINGS", 0, numba=True)
ALWAYS_WARN_UNINIT_VAR = _env("ALWAYS_WARN_UNINIT_VAR", 0)
CUDA_ARRAY_INTERFACE_SYNC = _env("CUDA_ARRAY_INTERFACE_SYNC",
                                 os.environ.get("NUMBA_CUDA_ARRAY_INTERFACE_SYNC", 1))


# Whether CUDA_LOW_OCCUPANCY_WARNINGS was given rather than left at its default: only then
# does the cpu target warn too. Assigning the setting gives it (numba's override_config too).
_occupancy_given = any(p + "CUDA_LOW_OCCUPANCY_WARNINGS" in os.environ for p in ("GPUJIT_", "NUMBA_"))

# The settings the C launcher reads on every launch: it keeps them as bits. (In the order
# a test restores them: assigning the occupancy setting gives it.)
_LAUNCHER_SETTINGS = ("CUDA_LOW_OCCUPANCY_WARNINGS", "CUDA_WARN_ON_IMPLICIT_COPY", "DISABLE_PERFORMANCE_WARNINGS",
                      "_occupancy_given")


def _publish():
    on = not DISABLE_PERFORMANCE_WARNINGS
    occupancy = bool(on and CUDA_LOW_OCCUPANCY_WARNINGS)
    _core.DispatcherBase._set_performance_warnings(occupancy, occupancy and bool(_occupancy_given),
                                                   bool(on and CUDA_WARN_ON_IMPLICIT_COPY))


class _Config(types.ModuleType):
    """This module's class: assigning a launcher setting updates the launcher's copy."""

    def __setattr__(self, name, value):
        global _occupancy_given
        super().__setattr__(name, value)
        if name == "CUDA_LOW_OCCUPANCY_WARNINGS":
            _occupancy_given = True
        if name in _LAUNCHER_SETTINGS:
            _publish()


sys.modules[__name__].__class__ = _Config
_publish()
