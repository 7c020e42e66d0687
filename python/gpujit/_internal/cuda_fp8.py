"""numba.cuda._internal.cuda_fp8: gpujit.fp8 under the names numba.cuda's tests import."""
from ..fp8 import *  # noqa: F401,F403
from ..fp8 import __all__
