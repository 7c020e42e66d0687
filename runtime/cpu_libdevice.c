/* cpu_libdevice.c: libdevice's functions (gpujit.libdevice.*) for kernels on the CPU target.
 * A kernel calls __nv_<name> on either target; the host JIT resolves those symbols to the
 * functions here (emit.c defines them from cpu_libdevice_symbol), with the C types of
 * libdevice's declarations (i32 int, i64 long long, float, double; results through pointers).
 * Most are the C library's functions of the same name; the rest follow libdevice's
 * documentation: explicit rounding modes (_rd, _rn, _ru, _rz) switch the FPU's mode around
 * the one operation, conversions saturate as the GPU's cvt does, and the integer intrinsics
 * are computed exactly. A libdevice function missing here is refused on the CPU target when
 * a kernel calls it (lower.c reports it). */
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_abi.h"

/* The FPU's rounding mode matters to the operations below (GCC assumes round-to-nearest
 * unless told): volatile operands keep each operation between the two mode switches. */
#pragma STDC FENV_ACCESS ON

#define MODE_rd FE_DOWNWARD
#define MODE_rn FE_TONEAREST
#define MODE_ru FE_UPWARD
#define MODE_rz FE_TOWARDZERO

#define BIN(name, T, op, rm)                                                                                           \
    static T nv_##name##_##rm(T a, T b) {                                                                              \
        int old = fegetround();                                                                                        \
        fesetround(MODE_##rm);                                                                                         \
        volatile T x = a, y = b;                                                                                       \
        volatile T r = x op y;                                                                                         \
        fesetround(old);                                                                                               \
        return r;                                                                                                      \
    }
#define UN(name, T, expr, rm)                                                                                          \
    static T nv_##name##_##rm(T a) {                                                                                   \
        int old = fegetround();                                                                                        \
        fesetround(MODE_##rm);                                                                                         \
        volatile T x = a;                                                                                              \
        volatile T r = expr;                                                                                           \
        fesetround(old);                                                                                               \
        return r;                                                                                                      \
    }
#define FMA(name, T, fn, rm)                                                                                           \
    static T nv_##name##_##rm(T a, T b, T c) {                                                                         \
        int old = fegetround();                                                                                        \
        fesetround(MODE_##rm);                                                                                         \
        volatile T x = a, y = b, z = c;                                                                                \
        volatile T r = fn(x, y, z);                                                                                    \
        fesetround(old);                                                                                               \
        return r;                                                                                                      \
    }
/* float -> integer, rounded in the mode, saturating at the type's range, NaN -> 0 (cvt.rXi) */
#define TOINT(name, F, I, lo, hi, rm)                                                                                  \
    static I nv_##name##_##rm(F a) {                                                                                   \
        if (a != a) return 0;                                                                                          \
        int old = fegetround();                                                                                        \
        fesetround(MODE_##rm);                                                                                         \
        volatile F x = a;                                                                                              \
        volatile double r = nearbyint((double)x);                                                                      \
        fesetround(old);                                                                                               \
        if (r <= (double)(lo)) return (I)(lo);                                                                         \
        if (r >= (double)(hi)) return (I)(hi);                                                                         \
        return (I)r;                                                                                                   \
    }
/* 64-bit results: the double holding hi may round up past it, so compare as long double */
#define TOINT64(name, F, I, lo, hi, rm)                                                                                \
    static I nv_##name##_##rm(F a) {                                                                                   \
        if (a != a) return 0;                                                                                          \
        int old = fegetround();                                                                                        \
        fesetround(MODE_##rm);                                                                                         \
        volatile F x = a;                                                                                              \
        volatile long double r = nearbyintl((long double)x);                                                           \
        fesetround(old);                                                                                               \
        if (r <= (long double)(lo)) return (I)(lo);                                                                    \
        if (r >= (long double)(hi)) return (I)(hi);                                                                    \
        return (I)r;                                                                                                   \
    }
#define TOFLOAT(name, I, F, rm)                                                                                        \
    static F nv_##name##_##rm(I a) {                                                                                   \
        int old = fegetround();                                                                                        \
        fesetround(MODE_##rm);                                                                                         \
        volatile I x = a;                                                                                              \
        volatile F r = (F)x;                                                                                           \
        fesetround(old);                                                                                               \
        return r;                                                                                                      \
    }
#define MODES(M, ...) M(__VA_ARGS__, rd) M(__VA_ARGS__, rn) M(__VA_ARGS__, ru) M(__VA_ARGS__, rz)

MODES(BIN, dadd, double, +)
MODES(BIN, dsub, double, -)
MODES(BIN, dmul, double, *)
MODES(BIN, ddiv, double, /)
MODES(BIN, fadd, float, +)
MODES(BIN, fsub, float, -)
MODES(BIN, fmul, float, *)
MODES(BIN, fdiv, float, /)
MODES(UN, drcp, double, 1.0 / x)
MODES(UN, frcp, float, 1.0f / x)
MODES(UN, dsqrt, double, sqrt(x))
MODES(UN, fsqrt, float, sqrtf(x))
MODES(UN, double2float, float, (float)x)
MODES(FMA, fma, double, fma)
MODES(FMA, fmaf, float, fmaf)
MODES(FMA, fmaf_ieee, float, fmaf)
MODES(TOINT, double2int, double, int32_t, INT32_MIN, INT32_MAX)
MODES(TOINT, double2uint, double, uint32_t, 0, UINT32_MAX)
MODES(TOINT, float2int, float, int32_t, INT32_MIN, INT32_MAX)
MODES(TOINT, float2uint, float, uint32_t, 0, UINT32_MAX)
MODES(TOINT64, double2ll, double, int64_t, INT64_MIN, INT64_MAX)
MODES(TOINT64, double2ull, double, uint64_t, 0, UINT64_MAX)
MODES(TOINT64, float2ll, float, int64_t, INT64_MIN, INT64_MAX)
MODES(TOINT64, float2ull, float, uint64_t, 0, UINT64_MAX)
MODES(TOFLOAT, int2float, int32_t, float)
MODES(TOFLOAT, uint2float, uint32_t, float)
MODES(TOFLOAT, ll2float, int64_t, float)
MODES(TOFLOAT, ull2float, uint64_t, float)
MODES(TOFLOAT, ll2double, int64_t, double)
MODES(TOFLOAT, ull2double, uint64_t, double)

static double nv_int2double_rn(int32_t a) { return (double)a; }
static double nv_uint2double_rn(uint32_t a) { return (double)a; }
static float nv_frsqrt_rn(float x) { return 1.0f / sqrtf(x); }

/* ---- integers ---- */
static int32_t nv_abs(int32_t x) { return x < 0 ? (int32_t)(0u - (uint32_t)x) : x; }
static int64_t nv_llabs(int64_t x) { return x < 0 ? (int64_t)(0ull - (uint64_t)x) : x; }
static int32_t nv_min(int32_t a, int32_t b) { return a < b ? a : b; }
static int32_t nv_max(int32_t a, int32_t b) { return a > b ? a : b; }
static uint32_t nv_umin(uint32_t a, uint32_t b) { return a < b ? a : b; }
static uint32_t nv_umax(uint32_t a, uint32_t b) { return a > b ? a : b; }
static int64_t nv_llmin(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t nv_llmax(int64_t a, int64_t b) { return a > b ? a : b; }
static uint64_t nv_ullmin(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t nv_ullmax(uint64_t a, uint64_t b) { return a > b ? a : b; }
static int32_t nv_popc(uint32_t x) { return __builtin_popcount(x); }
static int32_t nv_popcll(uint64_t x) { return __builtin_popcountll(x); }
static int32_t nv_clz(uint32_t x) { return x ? __builtin_clz(x) : 32; }
static int32_t nv_clzll(uint64_t x) { return x ? __builtin_clzll(x) : 64; }
static int32_t nv_ffs(uint32_t x) { return x ? __builtin_ctz(x) + 1 : 0; }
static int32_t nv_ffsll(uint64_t x) { return x ? __builtin_ctzll(x) + 1 : 0; }
static uint32_t nv_brev(uint32_t x) {
    uint32_t r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
static uint64_t nv_brevll(uint64_t x) {
    uint64_t r = 0;
    for (int i = 0; i < 64; i++) r |= ((x >> i) & 1ull) << (63 - i);
    return r;
}
/* the bytes of {y, x} (x the low word) picked by the low 3 bits of each of s's nibbles */
static uint32_t nv_byte_perm(uint32_t x, uint32_t y, uint32_t s) {
    uint64_t v = ((uint64_t)y << 32) | x;
    uint32_t r = 0;
    for (int i = 0; i < 4; i++) r |= (uint32_t)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
static int32_t nv_hadd(int32_t a, int32_t b) { return (int32_t)(((int64_t)a + b) >> 1); }
static int32_t nv_rhadd(int32_t a, int32_t b) { return (int32_t)(((int64_t)a + b + 1) >> 1); }
static uint32_t nv_uhadd(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a + b) >> 1); }
static uint32_t nv_urhadd(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a + b + 1) >> 1); }
/* the low 32 bits of the product of the (sign-extended) low 24 bits of each */
static int32_t nv_mul24(int32_t a, int32_t b) {
    int64_t x = (int64_t)((uint64_t)(uint32_t)a << 40) >> 40, y = (int64_t)((uint64_t)(uint32_t)b << 40) >> 40;
    return (int32_t)(uint32_t)(uint64_t)(x * y);
}
static uint32_t nv_umul24(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)(a & 0xffffff) * (b & 0xffffff)); }
static int32_t nv_mulhi(int32_t a, int32_t b) { return (int32_t)(((int64_t)a * b) >> 32); }
static uint32_t nv_umulhi(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 32); }
static int64_t nv_mul64hi(int64_t a, int64_t b) { return (int64_t)(((__int128)a * b) >> 64); }
static uint64_t nv_umul64hi(uint64_t a, uint64_t b) { return (uint64_t)(((unsigned __int128)a * b) >> 64); }
static int32_t nv_sad(int32_t a, int32_t b, uint32_t c) {
    return (int32_t)((a > b ? (uint32_t)a - (uint32_t)b : (uint32_t)b - (uint32_t)a) + c);
}
static uint32_t nv_usad(uint32_t a, uint32_t b, uint32_t c) { return (a > b ? a - b : b - a) + c; }

/* ---- bits of floats ---- */
static int32_t nv_float_as_int(float x) {
    int32_t r;
    memcpy(&r, &x, 4);
    return r;
}
static float nv_int_as_float(int32_t x) {
    float r;
    memcpy(&r, &x, 4);
    return r;
}
static int64_t nv_double_as_longlong(double x) {
    int64_t r;
    memcpy(&r, &x, 8);
    return r;
}
static double nv_longlong_as_double(int64_t x) {
    double r;
    memcpy(&r, &x, 8);
    return r;
}
static int32_t nv_double2hiint(double x) { return (int32_t)(nv_double_as_longlong(x) >> 32); }
static int32_t nv_double2loint(double x) { return (int32_t)(uint32_t)nv_double_as_longlong(x); }
static double nv_hiloint2double(int32_t hi, int32_t lo) {
    return nv_longlong_as_double((int64_t)(((uint64_t)(uint32_t)hi << 32) | (uint32_t)lo));
}
static float nv_half2float(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float mag = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 0x400), (int)e - 25);
    return sign ? -mag : mag;
}

/* ---- classification: 1 or 0 ---- */
static int32_t nv_isinfd(double x) { return isinf(x) != 0; }
static int32_t nv_isinff(float x) { return isinf(x) != 0; }
static int32_t nv_isnand(double x) { return x != x; }
static int32_t nv_isnanf(float x) { return x != x; }
static int32_t nv_isfinited(double x) { return isfinite(x) != 0; }
static int32_t nv_finitef(float x) { return isfinite(x) != 0; }
static int32_t nv_signbitd(double x) { return signbit(x) != 0; }
static int32_t nv_signbitf(float x) { return signbit(x) != 0; }

/* ---- functions the C library lacks ---- */
static float nv_saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; } /* NaN -> 0 */
static double nv_rsqrt(double x) { return 1.0 / sqrt(x); }
static float nv_rsqrtf(float x) { return 1.0f / sqrtf(x); }
static double nv_rcbrt(double x) { return 1.0 / cbrt(x); }
static float nv_rcbrtf(float x) { return 1.0f / cbrtf(x); }
static double nv_rhypot(double x, double y) { return 1.0 / hypot(x, y); }
static float nv_rhypotf(float x, float y) { return (float)(1.0 / hypot(x, y)); }
static double nv_norm3d(double a, double b, double c) { return hypot(hypot(a, b), c); }
static float nv_norm3df(float a, float b, float c) { return (float)hypot(hypot(a, b), c); }
static double nv_norm4d(double a, double b, double c, double d) { return hypot(hypot(a, b), hypot(c, d)); }
static float nv_norm4df(float a, float b, float c, float d) { return (float)hypot(hypot(a, b), hypot(c, d)); }
static double nv_rnorm3d(double a, double b, double c) { return 1.0 / nv_norm3d(a, b, c); }
static float nv_rnorm3df(float a, float b, float c) { return (float)(1.0 / hypot(hypot(a, b), c)); }
static double nv_rnorm4d(double a, double b, double c, double d) { return 1.0 / nv_norm4d(a, b, c, d); }
static float nv_rnorm4df(float a, float b, float c, float d) { return (float)(1.0 / nv_norm4d(a, b, c, d)); }
static double nv_powi(double x, int32_t n) { return pow(x, (double)n); }
static float nv_powif(float x, int32_t n) { return powf(x, (float)n); }
static double nv_exp10(double x) { return pow(10.0, x); }
static float nv_exp10f(float x) { return (float)pow(10.0, (double)x); }
/* sin(pi x), cos(pi x): reduced exactly to [-1, 1] first, so integers give exact zeros */
static double nv_sinpi(double x) {
    double r = fmod(x, 2.0);
    if (r == floor(r)) return copysign(0.0, x);
    return sin(M_PI * r);
}
static double nv_cospi(double x) {
    double r = fmod(fabs(x), 2.0);
    if (r == 0.5 || r == 1.5) return 0.0;
    return cos(M_PI * r);
}
static float nv_sinpif(float x) { return (float)nv_sinpi(x); }
static float nv_cospif(float x) { return (float)nv_cospi(x); }
static void nv_sincospi(double x, double *s, double *c) { *s = nv_sinpi(x), *c = nv_cospi(x); }
static void nv_sincospif(float x, float *s, float *c) { *s = nv_sinpif(x), *c = nv_cospif(x); }
static void nv_sincos(double x, double *s, double *c) { *s = sin(x), *c = cos(x); }
static void nv_sincosf(float x, float *s, float *c) { *s = sinf(x), *c = cosf(x); }
static double nv_normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
static float nv_normcdff(float x) { return (float)nv_normcdf(x); }
/* erfc(x) exp(x^2), by its asymptotic series where exp(x^2) would overflow */
static double nv_erfcx(double x) {
    if (x < 25.0) return exp(x * x) * erfc(x);
    double t = 1.0 / (2.0 * x * x);
    return (1.0 - t * (1.0 - 3.0 * t * (1.0 - 5.0 * t))) / (x * sqrt(M_PI));
}
static float nv_erfcxf(float x) { return (float)nv_erfcx(x); }
/* erfcinv(y): Newton's method on erfc from a rough start (y in (0, 2)) */
static double nv_erfcinv(double y) {
    if (!(y > 0.0 && y < 2.0)) return y == 0.0 ? INFINITY : y == 2.0 ? -INFINITY : NAN;
    double p = y < 1.0 ? y : 2.0 - y, t = sqrt(-2.0 * log(p / 2.0));
    double x = (t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
               * M_SQRT1_2; /* Abramowitz and Stegun 26.2.23, for erfc(x) = p */
    for (int i = 0; i < 60; i++) {
        double f = erfc(x) - p, d = -2.0 / sqrt(M_PI) * exp(-x * x);
        double step = f / d;
        /* Halley's correction: erfc'' = -2x erfc' */
        step = step / (1.0 + x * step);
        x -= step;
        if (fabs(step) <= 1e-17 * fabs(x)) break;
    }
    return y < 1.0 ? x : -x;
}
static float nv_erfcinvf(float y) { return (float)nv_erfcinv(y); }
/* erfinv(y): Newton's method on erf near 0 (where 1 - y would lose y's digits), else erfcinv */
static double nv_erfinv(double y) {
    if (y < 0.0) return -nv_erfinv(-y);
    if (y >= 0.5) return nv_erfcinv(1.0 - y); /* exact: Sterbenz */
    double x = y * sqrt(M_PI) / 2.0;
    for (int i = 0; i < 60; i++) {
        double step = (erf(x) - y) / (2.0 / sqrt(M_PI) * exp(-x * x));
        x -= step;
        if (fabs(step) <= 1e-17 * fabs(x)) break;
    }
    return x;
}
static float nv_erfinvf(float y) { return (float)nv_erfinv(y); }
static double nv_normcdfinv(double p) { return -M_SQRT2 * nv_erfcinv(2.0 * p); }
static float nv_normcdfinvf(float p) { return (float)nv_normcdfinv(p); }
/* modified Bessel functions of the first kind, orders 0 and 1: their power series (all terms
 * positive, so no cancellation), or the leading asymptotic terms far out */
static double bessel_i(double x, int order) {
    double a = fabs(x);
    if (a > 700.0) return order && x < 0 ? -INFINITY : INFINITY;
    double q = a * a / 4.0, term = order ? a / 2.0 : 1.0, sum = term;
    for (int k = 1; k < 1000; k++) {
        term *= q / ((double)k * (double)(k + order));
        sum += term;
        if (term < sum * 1e-17) break;
    }
    return order && x < 0 ? -sum : sum;
}
static double nv_cyl_bessel_i0(double x) { return bessel_i(x, 0); }
static double nv_cyl_bessel_i1(double x) { return bessel_i(x, 1); }
static float nv_cyl_bessel_i0f(float x) { return (float)bessel_i(x, 0); }
static float nv_cyl_bessel_i1f(float x) { return (float)bessel_i(x, 1); }

/* clang-format off */
#define L(name) {#name, (void *)name}
#define E(name) {#name, (void *)nv_##name}
#define E4(name) E(name##_rd), E(name##_rn), E(name##_ru), E(name##_rz)
static const struct {
    const char *name;
    void *fn;
} table[] = {
    /* the C library's, same name and types */
    L(acos), L(acosf), L(acosh), L(acoshf), L(asin), L(asinf), L(asinh), L(asinhf), L(atan), L(atan2), L(atan2f),
    L(atanf), L(atanh), L(atanhf), L(cbrt), L(cbrtf), L(ceil), L(ceilf), L(copysign), L(copysignf), L(cos), L(cosf),
    L(cosh), L(coshf), L(erf), L(erfc), L(erfcf), L(erff), L(exp), L(exp2), L(exp2f), L(expf), L(expm1), L(expm1f),
    L(fabs), L(fabsf), L(fdim), L(fdimf), L(floor), L(floorf), L(fma), L(fmaf), L(fmax), L(fmaxf), L(fmin), L(fminf),
    L(fmod), L(fmodf), L(frexp), L(frexpf), L(hypot), L(hypotf), L(ilogb), L(ilogbf), L(j0), L(j0f), L(j1), L(j1f),
    L(jn), L(jnf), L(ldexp), L(ldexpf), L(lgamma), L(lgammaf), L(llrint), L(llrintf), L(llround), L(llroundf), L(log),
    L(log10), L(log10f), L(log1p), L(log1pf), L(log2), L(log2f), L(logb), L(logbf), L(logf), L(modf), L(modff),
    L(nearbyint), L(nearbyintf), L(nextafter), L(nextafterf), L(pow), L(powf), L(remainder), L(remainderf), L(remquo),
    L(remquof), L(rint), L(rintf), L(round), L(roundf), L(scalbn), L(scalbnf), L(sin), L(sinf), L(sinh), L(sinhf),
    L(sqrt), L(sqrtf), L(tan), L(tanf), L(tanh), L(tanhf), L(tgamma), L(tgammaf), L(trunc), L(truncf), L(y0), L(y0f),
    L(y1), L(y1f), L(yn), L(ynf),
    E(sincos), E(sincosf), E(sincospi), E(sincospif), E(exp10), E(exp10f),
    /* the fast approximations: the accurate functions */
    {"fast_cosf", (void *)cosf}, {"fast_exp10f", (void *)nv_exp10f}, {"fast_expf", (void *)expf},
    {"fast_fdividef", (void *)nv_fdiv_rn}, {"fast_log10f", (void *)log10f}, {"fast_log2f", (void *)log2f},
    {"fast_logf", (void *)logf}, {"fast_powf", (void *)powf}, {"fast_sincosf", (void *)nv_sincosf},
    {"fast_sinf", (void *)sinf}, {"fast_tanf", (void *)tanf}, {"fast_tanhf", (void *)tanhf},
    /* explicit rounding modes */
    E4(dadd), E4(dsub), E4(dmul), E4(ddiv), E4(fadd), E4(fsub), E4(fmul), E4(fdiv), E4(drcp), E4(frcp), E4(dsqrt),
    E4(fsqrt), E4(double2float), E4(fma), E4(fmaf), E4(fmaf_ieee), E4(double2int), E4(double2uint), E4(float2int),
    E4(float2uint), E4(double2ll), E4(double2ull), E4(float2ll), E4(float2ull), E4(int2float), E4(uint2float),
    E4(ll2float), E4(ull2float), E4(ll2double), E4(ull2double), E(int2double_rn), E(uint2double_rn), E(frsqrt_rn),
    /* integers */
    E(abs), E(llabs), E(min), E(max), E(umin), E(umax), E(llmin), E(llmax), E(ullmin), E(ullmax), E(popc),
    E(popcll), E(clz), E(clzll), E(ffs), E(ffsll), E(brev), E(brevll), E(byte_perm), E(hadd), E(rhadd), E(uhadd),
    E(urhadd), E(mul24), E(umul24), E(mulhi), E(umulhi), E(mul64hi), E(umul64hi), E(sad), E(usad),
    /* bits and classes */
    E(float_as_int), {"float_as_uint", (void *)nv_float_as_int}, E(int_as_float),
    {"uint_as_float", (void *)nv_int_as_float}, E(double_as_longlong), E(longlong_as_double), E(double2hiint),
    E(double2loint), E(hiloint2double), E(half2float), E(isinfd), E(isinff), E(isnand), E(isnanf), E(isfinited),
    E(finitef), E(signbitd), E(signbitf),
    /* special functions */
    E(saturatef), E(rsqrt), E(rsqrtf), E(rcbrt), E(rcbrtf), E(rhypot), E(rhypotf), E(norm3d), E(norm3df), E(norm4d),
    E(norm4df), E(rnorm3d), E(rnorm3df), E(rnorm4d), E(rnorm4df), E(powi), E(powif), E(sinpi), E(sinpif), E(cospi),
    E(cospif), E(normcdf), E(normcdff), E(normcdfinv), E(normcdfinvf), E(erfcx), E(erfcxf), E(erfinv), E(erfinvf),
    E(erfcinv), E(erfcinvf), E(cyl_bessel_i0), E(cyl_bessel_i0f), E(cyl_bessel_i1), E(cyl_bessel_i1f),
};
/* clang-format on */

void *cpu_libdevice_symbol(const char *name) {
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].name, name)) return table[i].fn;
    return NULL;
}

size_t cpu_libdevice_count(void) { return sizeof table / sizeof table[0]; }

const char *cpu_libdevice_name(size_t i, void **fn) {
    *fn = table[i].fn;
    return table[i].name;
}
