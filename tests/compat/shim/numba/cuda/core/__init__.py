"""Test-only `numba.cuda.core`: only `config` and `errors`, which are gpujit's own
settings and exception modules (numba-cuda keeps TypingError there). numba's
other internals (ir, typing passes, ...) stay missing."""
import sys

from gpujit import config, errors  # noqa: F401

sys.modules[__name__ + ".errors"] = errors
sys.modules[__name__ + ".config"] = config
