"""gpujit's exceptions and warnings. Compile errors come from the C compiler and name the
Python file:line of the construct; CudaError carries the driver's error.

numba.cuda code imports numba's names for them from here too: NumbaError (gpujit's
CompileError, the base of every compile error), LoweringError (a failure while generating
code: gpujit reports it as a CompileError) and numba's warning classes."""
from . import _core

CompileError = _core.CompileError
TypingError = _core.TypingError
UnsupportedError = _core.UnsupportedError
InternalCompilerError = _core.InternalCompilerError
# numba's name: a TypingError for an argument that must be a compile-time constant (cuda.grid(n)'s n)
RequireLiteralValue = _core.RequireLiteralValue
TypingValueError = _core.TypingValueError  # a TypingError that is also a ValueError (alignment=3)
CudaError = getattr(_core, "CudaError", RuntimeError)
LaunchError = getattr(_core, "LaunchError", RuntimeError)
# racecheck=True found a data race between threads of a block (cpu target): a LaunchError
RaceError = getattr(_core, "RaceError", LaunchError)
# the driver cannot be used in this process (it was forked after CUDA was initialised)
CudaDriverError = _core.CudaDriverError
# a CUDA graph capture went wrong (gpujit.graph): a CudaError
GraphCaptureError = _core.GraphCaptureError

NumbaError = CompileError
LoweringError = CompileError


class NumbaWarning(Warning):
    """The base of gpujit's warnings (numba's name)."""

    def __init__(self, msg, loc=None, highlighting=True):
        self.msg = msg
        self.loc = loc
        super().__init__(msg if loc is None else "%s\n%s" % (msg, loc))


class NumbaPerformanceWarning(NumbaWarning):
    """Code that works but runs slowly (a launch with few threads, an implicit copy)."""


PerformanceWarning = NumbaPerformanceWarning  # gpujit's name for it: the same class


class NumbaDeprecationWarning(NumbaWarning, DeprecationWarning):
    """A feature that will go away."""


class NumbaPendingDeprecationWarning(NumbaWarning, PendingDeprecationWarning):
    """A feature that is planned to go away."""


class NumbaInvalidConfigWarning(NumbaWarning):
    """A setting (an environment variable) that is not valid, and was ignored."""


class NumbaExperimentalFeatureWarning(NumbaWarning):
    """A feature whose behaviour may still change."""


class NumbaDebugInfoWarning(NumbaWarning):
    """Debug information that cannot be what was asked for."""


class NumbaSystemWarning(NumbaWarning):
    """Something about the system gpujit runs on (a missing library, a driver)."""


__all__ = ["CompileError", "TypingError", "TypingValueError", "UnsupportedError", "InternalCompilerError", "RequireLiteralValue",
           "CudaError", "LaunchError", "CudaDriverError",
           "NumbaError", "LoweringError", "NumbaWarning", "NumbaPerformanceWarning", "PerformanceWarning", "NumbaDeprecationWarning",
           "NumbaPendingDeprecationWarning", "NumbaInvalidConfigWarning", "NumbaExperimentalFeatureWarning",
           "NumbaDebugInfoWarning", "NumbaSystemWarning"]


class KernelRuntimeError(RuntimeError):
    """numba's error for an exception raised in a kernel, with the thread and block that
    raised it (tid, ctaid: (x, y, z) tuples, or None)."""

    def __init__(self, msg, tid=None, ctaid=None):
        self.tid = tid
        self.ctaid = ctaid
        self.msg = msg
        super().__init__("An exception was raised in thread=%s block=%s\n\t%s" % (tid, ctaid, msg))


__all__.append("KernelRuntimeError")
