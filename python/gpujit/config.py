"""Settings under numba.cuda.config's names, read when they apply (set them as
attributes: gpujit.config.CUDA_LOW_OCCUPANCY_WARNINGS = 1). Initial values come
from the environment variables named GPUJIT_<NAME>.

CUDA_LOW_OCCUPANCY_WARNINGS   warn (NumbaPerformanceWarning) when a ufunc, gufunc or
                              Reduce launch has fewer blocks than twice the device's
                              multiprocessors (cores on the cpu target); default 0
CUDA_WARN_ON_IMPLICIT_COPY    warn when a ufunc or gufunc copies a host array to a GPU
                              and back (cuda target only); default 0
ENABLE_CUDASIM                numba's simulator switch: always 0 (gpujit compiles)
CUDA_ENABLE_NRT               numba's device-side allocator (NRT) switch: accepted and
                              changes nothing, as gpujit kernels never allocate on the
                              device (gpujit.memory_management.nrt.rtsys counts zero)
DISABLE_PERFORMANCE_WARNINGS  1: no NumbaPerformanceWarning at all; default 0
ALWAYS_WARN_UNINIT_VAR        1: warn (NumbaWarning "Detected uninitialized variable x")
                              where a kernel reads a variable that some path reaching
                              the read has not assigned; default 0
CUDA_ARRAY_INTERFACE_SYNC     wait for the stream a __cuda_array_interface__ names before
                              using the array (as_cuda_array, a launch taking it), as
                              the interface's v3 asks; default 1 (also read from
                              NUMBA_CUDA_ARRAY_INTERFACE_SYNC, numba's name)
"""
import os


def _env(name, default):
    try:
        return int(os.environ.get("GPUJIT_" + name, default))
    except ValueError:
        return default


CUDA_LOW_OCCUPANCY_WARNINGS = _env("CUDA_LOW_OCCUPANCY_WARNINGS", 0)
CUDA_WARN_ON_IMPLICIT_COPY = _env("CUDA_WARN_ON_IMPLICIT_COPY", 0)
ENABLE_CUDASIM = 0
CUDA_ENABLE_NRT = _env("CUDA_ENABLE_NRT", 0)
DISABLE_PERFORMANCE_WARNINGS = _env("DISABLE_PERFORMANCE_WARNINGS", 0)
ALWAYS_WARN_UNINIT_VAR = _env("ALWAYS_WARN_UNINIT_VAR", 0)
CUDA_ARRAY_INTERFACE_SYNC = _env("CUDA_ARRAY_INTERFACE_SYNC",
                                 os.environ.get("NUMBA_CUDA_ARRAY_INTERFACE_SYNC", 1))
