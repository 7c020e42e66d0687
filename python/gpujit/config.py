"""Settings under numba.cuda.config's names, read when they apply (set them as
attributes: gpujit.config.CUDA_LOW_OCCUPANCY_WARNINGS = 1). Initial values come
from the environment variables named GPUJIT_<NAME>, yes/no values each spelt 1, true,
yes, on or 0, false, no, off in any case (another value is a ValueError at import).
This module also reads the other yes/no GPUJIT_* variables (flag) and checks every
GPUJIT_* variable gpujit reads (check_environment).

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

# The spellings a yes/no variable takes, in any case.
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def parse_flag(var, value):
    """A yes/no environment value as 1 or 0; ValueError, in one line listing the spellings, for
    anything else."""
    word = value.strip().lower()
    if word in _TRUE:
        return 1
    if word in _FALSE:
        return 0
    raise ValueError("%s=%r: use one of %s (yes) or %s (no)" % (var, value, ", ".join(_TRUE), ", ".join(_FALSE)))


def flag(var, default):
    """The environment variable `var` as 1 or 0 (parse_flag), or `default` when unset or empty."""
    value = os.environ.get(var, "")
    return default if not value.strip() else parse_flag(var, value)


def _env(name, default, numba=False):
    """GPUJIT_<name> (numba=True: else numba's NUMBA_<name>) as 1 or 0, or default."""
    var = "GPUJIT_" + name
    if numba and not os.environ.get(var, "").strip() and os.environ.get("NUMBA_" + name, "").strip():
        var = "NUMBA_" + name
    return flag(var, default)


def environment():
    """[(name, value), ...]: every GPUJIT_* variable set in the environment, by name."""
    return sorted((k, v) for k, v in os.environ.items() if k.startswith("GPUJIT_"))


def check_environment():
    """None, or ValueError (one line: the variable, its value and what it takes) for the first
    GPUJIT_* variable gpujit reads whose value it does not take. A kernel's first compile
    checks the same."""
    _core.check_environment()  # those the compiler and the CPU target read
    flag("GPUJIT_CPU_BOUNDSCHECK", 1)
    flag("GPUJIT_CPU_RACECHECK", 0)
    flag("GPUJIT_PROFILE", 0)
    for name, numba in _FLAGS:
        _env(name, 0, numba)


# The settings below that are yes/no variables, and whether numba's NUMBA_<NAME> is read too.
_FLAGS = (("CUDA_LOW_OCCUPANCY_WARNINGS", True), ("CUDA_WARN_ON_IMPLICIT_COPY", True), ("CUDA_ENABLE_NRT", False),
          ("DISABLE_PERFORMANCE_WARNINGS", True), ("ALWAYS_WARN_UNINIT_VAR", False),
          ("CUDA_ARRAY_INTERFACE_SYNC", True))

CUDA_LOW_OCCUPANCY_WARNINGS = _env("CUDA_LOW_OCCUPANCY_WARNINGS", 1, numba=True)
CUDA_WARN_ON_IMPLICIT_COPY = _env("CUDA_WARN_ON_IMPLICIT_COPY", 1, numba=True)
ENABLE_CUDASIM = 0
CUDA_ENABLE_NRT = _env("CUDA_ENABLE_NRT", 0)
DISABLE_PERFORMANCE_WARNINGS = _env("DISABLE_PERFORMANCE_WARNINGS", 0, numba=True)
ALWAYS_WARN_UNINIT_VAR = _env("ALWAYS_WARN_UNINIT_VAR", 0)
CUDA_ARRAY_INTERFACE_SYNC = _env("CUDA_ARRAY_INTERFACE_SYNC", 1, numba=True)


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
