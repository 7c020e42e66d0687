"""Test-only `numba.core`: the peer's tests import TypingError and friends from
numba.core.errors as well as numba.cuda.core.errors; both are gpujit's exception
module. numba.core.extending is gpujit.extending (register_jitable, overload), as
numba.cuda.extending is. numba's other internals stay missing."""
import sys

from gpujit import errors  # noqa: F401
from gpujit import extending  # noqa: F401

sys.modules[__name__ + ".errors"] = errors
sys.modules[__name__ + ".extending"] = extending
