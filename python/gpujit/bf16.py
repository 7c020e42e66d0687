"""bfloat16 functions for kernels: numba.cuda's cuda.bf16, by the same names.

hadd, hsub, hmul, hdiv, hfma, hneg, habs, hmax, hmin (a NaN loses), hmax_nan and hmin_nan
(a NaN wins), the _sat forms (clamped to [0, 1], NaN to +0), hfma_relu, the math functions
(hsqrt, hexp, hlog, hsin, ...: float32's, rounded once), the comparisons (heq ... hle false
where a NaN is; hequ ... hltu true there), hisnan, hisinf, and the conversions, each under
numba.cuda's NumPy-style name (int32_to_bfloat16_rz, bfloat16_to_int64_rd,
bfloat16_as_int16, ...) and CUDA's (int2bfloat16_rz, bfloat162ll_rd, bfloat16_as_short, ...):
_rn rounds to nearest even, _rz toward zero, _rd down, _ru up. docs/language.md has the table.
Like every intrinsic they only mean something inside a kernel.
"""
from . import _core
from .intrinsics import _KernelOnly, add_paths
from .types import bfloat16

_FUNCS = {name: _KernelOnly("gpujit.bf16." + name, "numba.cuda.bf16.%s, on bfloat16 values (docs/language.md)" % name)
          for name in _core.bf16_names}
globals().update(_FUNCS)
add_paths(_FUNCS.values())

__all__ = ["bfloat16"] + sorted(_FUNCS)
