"""Test-only `numba.cuda.core`: only `config` (the harness settings) and
`errors`, which is gpujit's own exception module (numba-cuda keeps TypingError
there). numba's other internals (ir, typing passes, ...) stay missing."""
import sys

from gpujit import errors  # noqa: F401

sys.modules[__name__ + ".errors"] = errors
