"""gpujit's exceptions. Compile errors come from the C compiler and name the
Python file:line of the construct; CudaError carries the driver's error."""
from . import _core

CompileError = _core.CompileError
TypingError = _core.TypingError
UnsupportedError = _core.UnsupportedError
InternalCompilerError = _core.InternalCompilerError
CudaError = getattr(_core, "CudaError", RuntimeError)
LaunchError = getattr(_core, "LaunchError", RuntimeError)

__all__ = ["CompileError", "TypingError", "UnsupportedError", "InternalCompilerError", "CudaError", "LaunchError"]


class NumbaWarning(Warning):
    """A gpujit warning (numba's name)."""


class NumbaPerformanceWarning(NumbaWarning):
    """Code that works but runs slowly (numba's name): a launch too small to fill the device."""
