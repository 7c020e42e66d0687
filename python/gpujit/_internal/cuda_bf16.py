"""numba.cuda._internal.cuda_bf16: gpujit.bf16 under the names numba.cuda's tests import
(nv_bfloat16 is gpujit.bfloat16)."""
from ..bf16 import *  # noqa: F401,F403
from ..bf16 import __all__ as _all
from ..types import bfloat16 as nv_bfloat16

__all__ = list(_all) + ["nv_bfloat16"]
