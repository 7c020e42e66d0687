"""Test-only `numba.core`: the peer's tests import TypingError and friends from
numba.core.errors as well as numba.cuda.core.errors; both are gpujit's exception
module. numba's other internals stay missing."""
import sys

from gpujit import errors  # noqa: F401

sys.modules[__name__ + ".errors"] = errors
