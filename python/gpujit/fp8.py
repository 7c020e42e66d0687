"""fp8 for kernels: numba.cuda's fp8 storage types and cuda_fp8.h's conversions.

fp8_e4m3 (gpujit.float8_e4m3fn, ml_dtypes.float8_e4m3fn: no inf, NaN S.1111.111) and
fp8_e5m2 (gpujit.float8_e5m2, ml_dtypes.float8_e5m2) are types that only convert:
fp8_e4m3(x) rounds any number as CUDA's constructors do (to nearest even, saturating to
the finite range, integers through float32), float32(v) and int32(v) of one are exact /
truncate. Arrays of ml_dtypes' fp8 dtypes are kernel arguments.

cvt_float_to_fp8(x, saturation, interpretation) and cvt_double_to_fp8(...) give the
storage byte (uint8) as __nv_cvt_float_to_fp8 / __nv_cvt_double_to_fp8: saturation_t.NOSAT
sends an overflow to E4M3's NaN (0x7F) or E5M2's inf (0x7C), SATFINITE to the largest
finite value; the two modes are compile-time constants.
"""
import enum

from .intrinsics import _KernelOnly, add_paths
from .types import float8_e4m3fn as fp8_e4m3, float8_e5m2 as fp8_e5m2


class saturation_t(enum.IntEnum):
    """cuda_fp8.h's __nv_saturation_t."""
    NOSAT = 0
    SATFINITE = 1


class fp8_interpretation_t(enum.IntEnum):
    """cuda_fp8.h's __nv_fp8_interpretation_t."""
    E4M3 = 0
    E5M2 = 1


cvt_float_to_fp8 = _KernelOnly("gpujit.fp8.cvt_float_to_fp8",
                               "cvt_float_to_fp8(x, saturation, interpretation): a float32's fp8 storage byte")
cvt_double_to_fp8 = _KernelOnly("gpujit.fp8.cvt_double_to_fp8",
                                "cvt_double_to_fp8(x, saturation, interpretation): a float64's fp8 storage byte")
add_paths([cvt_float_to_fp8, cvt_double_to_fp8])

__all__ = ["fp8_e4m3", "fp8_e5m2", "saturation_t", "fp8_interpretation_t", "cvt_float_to_fp8", "cvt_double_to_fp8"]
