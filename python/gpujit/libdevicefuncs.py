"""libdevice's functions as kernels call them (gpujit.libdevice.sinf, .popc, .sincos, ...):
name, result and parameter types, written once in _TABLE (generated from libdevice's own
definitions by scripts/gen_libdevice_table.py; the compiler reads the same table).

`functions` maps "__nv_<name>" to (return type, [arg(name, ty, is_ptr)]), as numba.cuda's
libdevicefuncs does; a pointer parameter is a result the function writes, so in a kernel
the call returns a tuple: the return value (unless void) then each pointer's value."""
from collections import namedtuple

from . import types as _types

arg = namedtuple("arg", ("name", "ty", "is_ptr"))

# name ret:params; i int32, l int64, h int16, f float32, d float64, v void; *x a result pointer
_TABLE = """\
abs i:i
acos d:d
acosf f:f
acosh d:d
acoshf f:f
asin d:d
asinf f:f
asinh d:d
asinhf f:f
atan d:d
atan2 d:dd
atan2f f:ff
atanf f:f
atanh d:d
atanhf f:f
brev i:i
brevll l:l
byte_perm i:iii
cbrt d:d
cbrtf f:f
ceil d:d
ceilf f:f
clz i:i
clzll i:l
copysign d:dd
copysignf f:ff
cos d:d
cosf f:f
cosh d:d
coshf f:f
cospi d:d
cospif f:f
cyl_bessel_i0 d:d
cyl_bessel_i0f f:f
cyl_bessel_i1 d:d
cyl_bessel_i1f f:f
dadd_rd d:dd
dadd_rn d:dd
dadd_ru d:dd
dadd_rz d:dd
ddiv_rd d:dd
ddiv_rn d:dd
ddiv_ru d:dd
ddiv_rz d:dd
dmul_rd d:dd
dmul_rn d:dd
dmul_ru d:dd
dmul_rz d:dd
double2float_rd f:d
double2float_rn f:d
double2float_ru f:d
double2float_rz f:d
double2hiint i:d
double2int_rd i:d
double2int_rn i:d
double2int_ru i:d
double2int_rz i:d
double2ll_rd l:d
double2ll_rn l:d
double2ll_ru l:d
double2ll_rz l:d
double2loint i:d
double2uint_rd i:d
double2uint_rn i:d
double2uint_ru i:d
double2uint_rz i:d
double2ull_rd l:d
double2ull_rn l:d
double2ull_ru l:d
double2ull_rz l:d
double_as_longlong l:d
drcp_rd d:d
drcp_rn d:d
drcp_ru d:d
drcp_rz d:d
dsqrt_rd d:d
dsqrt_rn d:d
dsqrt_ru d:d
dsqrt_rz d:d
dsub_rd d:dd
dsub_rn d:dd
dsub_ru d:dd
dsub_rz d:dd
erf d:d
erfc d:d
erfcf f:f
erfcinv d:d
erfcinvf f:f
erfcx d:d
erfcxf f:f
erff f:f
erfinv d:d
erfinvf f:f
exp d:d
exp10 d:d
exp10f f:f
exp2 d:d
exp2f f:f
expf f:f
expm1 d:d
expm1f f:f
fabs d:d
fabsf f:f
fadd_rd f:ff
fadd_rn f:ff
fadd_ru f:ff
fadd_rz f:ff
fast_cosf f:f
fast_exp10f f:f
fast_expf f:f
fast_fdividef f:ff
fast_log10f f:f
fast_log2f f:f
fast_logf f:f
fast_powf f:ff
fast_sincosf v:f*f*f
fast_sinf f:f
fast_tanf f:f
fast_tanhf f:f
fdim d:dd
fdimf f:ff
fdiv_rd f:ff
fdiv_rn f:ff
fdiv_ru f:ff
fdiv_rz f:ff
ffs i:i
ffsll i:l
finitef i:f
float2int_rd i:f
float2int_rn i:f
float2int_ru i:f
float2int_rz i:f
float2ll_rd l:f
float2ll_rn l:f
float2ll_ru l:f
float2ll_rz l:f
float2uint_rd i:f
float2uint_rn i:f
float2uint_ru i:f
float2uint_rz i:f
float2ull_rd l:f
float2ull_rn l:f
float2ull_ru l:f
float2ull_rz l:f
float_as_int i:f
float_as_uint i:f
floor d:d
floorf f:f
fma d:ddd
fma_rd d:ddd
fma_rn d:ddd
fma_ru d:ddd
fma_rz d:ddd
fmaf f:fff
fmaf_ieee_rd f:fff
fmaf_ieee_rn f:fff
fmaf_ieee_ru f:fff
fmaf_ieee_rz f:fff
fmaf_rd f:fff
fmaf_rn f:fff
fmaf_ru f:fff
fmaf_rz f:fff
fmax d:dd
fmaxf f:ff
fmin d:dd
fminf f:ff
fmod d:dd
fmodf f:ff
fmul_rd f:ff
fmul_rn f:ff
fmul_ru f:ff
fmul_rz f:ff
frcp_rd f:f
frcp_rn f:f
frcp_ru f:f
frcp_rz f:f
frexp d:d*i
frexpf f:f*i
frsqrt_rn f:f
fsqrt_rd f:f
fsqrt_rn f:f
fsqrt_ru f:f
fsqrt_rz f:f
fsub_rd f:ff
fsub_rn f:ff
fsub_ru f:ff
fsub_rz f:ff
hadd i:ii
half2float f:h
hiloint2double d:ii
hypot d:dd
hypotf f:ff
ilogb i:d
ilogbf i:f
int2double_rn d:i
int2float_rd f:i
int2float_rn f:i
int2float_ru f:i
int2float_rz f:i
int_as_float f:i
isfinited i:d
isinfd i:d
isinff i:f
isnand i:d
isnanf i:f
j0 d:d
j0f f:f
j1 d:d
j1f f:f
jn d:id
jnf f:if
ldexp d:di
ldexpf f:fi
lgamma d:d
lgammaf f:f
ll2double_rd d:l
ll2double_rn d:l
ll2double_ru d:l
ll2double_rz d:l
ll2float_rd f:l
ll2float_rn f:l
ll2float_ru f:l
ll2float_rz f:l
llabs l:l
llmax l:ll
llmin l:ll
llrint l:d
llrintf l:f
llround l:d
llroundf l:f
log d:d
log10 d:d
log10f f:f
log1p d:d
log1pf f:f
log2 d:d
log2f f:f
logb d:d
logbf f:f
logf f:f
longlong_as_double d:l
max i:ii
min i:ii
modf d:d*d
modff f:f*f
mul24 i:ii
mul64hi l:ll
mulhi i:ii
nearbyint d:d
nearbyintf f:f
nextafter d:dd
nextafterf f:ff
norm3d d:ddd
norm3df f:fff
norm4d d:dddd
norm4df f:ffff
normcdf d:d
normcdff f:f
normcdfinv d:d
normcdfinvf f:f
popc i:i
popcll i:l
pow d:dd
powf f:ff
powi d:di
powif f:fi
rcbrt d:d
rcbrtf f:f
rcp64h d:d
remainder d:dd
remainderf f:ff
remquo d:dd*i
remquof f:ff*i
rhadd i:ii
rhypot d:dd
rhypotf f:ff
rint d:d
rintf f:f
rnorm3d d:ddd
rnorm3df f:fff
rnorm4d d:dddd
rnorm4df f:ffff
round d:d
roundf f:f
rsqrt d:d
rsqrtf f:f
sad i:iii
saturatef f:f
scalbn d:di
scalbnf f:fi
signbitd i:d
signbitf i:f
sin d:d
sincos v:d*d*d
sincosf v:f*f*f
sincospi v:d*d*d
sincospif v:f*f*f
sinf f:f
sinh d:d
sinhf f:f
sinpi d:d
sinpif f:f
sqrt d:d
sqrtf f:f
tan d:d
tanf f:f
tanh d:d
tanhf f:f
tgamma d:d
tgammaf f:f
trunc d:d
truncf f:f
uhadd i:ii
uint2double_rn d:i
uint2float_rd f:i
uint2float_rn f:i
uint2float_ru f:i
uint2float_rz f:i
uint_as_float f:i
ull2double_rd d:l
ull2double_rn d:l
ull2double_ru d:l
ull2double_rz d:l
ull2float_rd f:l
ull2float_rn f:l
ull2float_ru f:l
ull2float_rz f:l
ullmax l:ll
ullmin l:ll
umax i:ii
umin i:ii
umul24 i:ii
umul64hi l:ll
umulhi i:ii
urhadd i:ii
usad i:iii
y0 d:d
y0f f:f
y1 d:d
y1f f:f
yn d:id
ynf f:if
"""

_CODES = {"i": _types.int32, "l": _types.int64, "h": _types.int16, "f": _types.float32, "d": _types.float64,
          "v": _types.void}


def _parse():
    out = {}
    for line in _TABLE.splitlines():
        name, _, sig = line.partition(" ")
        ret, _, params = sig.partition(":")
        out[name] = (ret, params)
    return out


_codes = _parse()


def codes(name):
    """(return code, parameter codes) of libdevice's `name` (without __nv_), or None: what the
    compiler types and lowers a call by."""
    return _codes.get(name)


def _arguments(params):
    args, i = [], 0
    while i < len(params):
        ptr = params[i] == "*"
        i += ptr
        args.append(arg(name="a%d" % len(args), ty=_CODES[params[i]], is_ptr=ptr))
        i += 1
    return args


functions = {"__nv_" + name: (_CODES[ret], _arguments(params)) for name, (ret, params) in _codes.items()}


def create_signature(retty, args):
    """The signature a kernel calls a libdevice function by: its results (the return value
    unless void, then each pointer's value: a tuple when more than one) of its value
    parameters."""
    results = ([] if retty == _types.void else [retty]) + [a.ty for a in args if a.is_ptr]
    ret = results[0] if len(results) == 1 else _types.Tuple(results)
    return _types.signature(ret, *[a.ty for a in args if not a.is_ptr])
