/* complex.c: complex numbers -- arithmetic, comparison, abs() and the cmath
 * module -- built from real math on the parts. A complex value is an LLVM
 * {float, float} or {double, double} (NumPy's layout in memory: re, im).
 *
 * The formulas are CPython's (Objects/complexobject.c: _Py_c_quot, _Py_c_pow,
 * c_powi; Modules/cmathmodule.c), so results agree with CPython on ordinary
 * finite inputs. An infinite or NaN part takes the cmath function's special
 * value, as CPython gives it: its table of answers by the class of each part
 * (-inf, negative, -0, +0, positive, +inf, NaN) is read from the running
 * CPython's cmath at compile time and becomes a constant table in the
 * kernel. Not reproduced: cmath's rescaling near overflow and underflow
 * (|z| beyond ~1e154 or subnormal), and its ValueErrors (a domain error
 * gives the special value or NaN); division by zero gives NaNs instead of
 * raising ZeroDivisionError, as numba.cuda's does.
 * Requires: infer_types; lower.c's helpers (math_call: libdevice or libm). */
#include <math.h>
#include <string.h>

#include "gj.h"

typedef struct {
    LLVMValueRef re, im;
} Cx;

/* ---- real helpers on one part type `ft` ---- */

static LLVMValueRef K(Ctx *c, Type *ft, double v) { return LLVMConstReal(llvm_type(c, ft), v); }
static LLVMValueRef add(Ctx *c, LLVMValueRef a, LLVMValueRef b) { return fp(c, LLVMBuildFAdd(c->b, a, b, "")); }
static LLVMValueRef sub(Ctx *c, LLVMValueRef a, LLVMValueRef b) { return fp(c, LLVMBuildFSub(c->b, a, b, "")); }
static LLVMValueRef mul(Ctx *c, LLVMValueRef a, LLVMValueRef b) { return fp(c, LLVMBuildFMul(c->b, a, b, "")); }
static LLVMValueRef dvd(Ctx *c, LLVMValueRef a, LLVMValueRef b) { return fp(c, LLVMBuildFDiv(c->b, a, b, "")); }
static LLVMValueRef neg(Ctx *c, LLVMValueRef a) { return fp(c, LLVMBuildFNeg(c->b, a, "")); }
static LLVMValueRef cmp(Ctx *c, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildFCmp(c->b, p, a, b, "");
}
static LLVMValueRef sel(Ctx *c, LLVMValueRef p, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildSelect(c->b, p, a, b, "");
}
static LLVMValueRef m1(Ctx *c, Type *ft, const char *fn, LLVMValueRef x) { return math_call(c, fn, ft, &x, 1); }
static LLVMValueRef m2(Ctx *c, Type *ft, const char *fn, LLVMValueRef x, LLVMValueRef y) {
    LLVMValueRef a[2] = {x, y};
    return math_call(c, fn, ft, a, 2);
}
static LLVMValueRef fabs_(Ctx *c, LLVMValueRef x) { return fcall1(c, "llvm.fabs", x); }

/* ---- complex values ---- */

static Cx split(Ctx *c, LLVMValueRef z) {
    return (Cx){LLVMBuildExtractValue(c->b, z, 0, "re"), LLVMBuildExtractValue(c->b, z, 1, "im")};
}
static LLVMValueRef join(Ctx *c, Type *ct, Cx z) { return complex_make(c, ct, z.re, z.im); }
static Cx csel(Ctx *c, LLVMValueRef p, Cx a, Cx b) { return (Cx){sel(c, p, a.re, b.re), sel(c, p, a.im, b.im)}; }
/* The products and quotients of complex arithmetic, contracted (fused
 * multiply-adds) as every float operation is; `exact` builds them with no
 * contraction (unless fastmath), CPython's arithmetic operation by operation. */
typedef struct {
    LLVMValueRef (*add)(Ctx *, LLVMValueRef, LLVMValueRef), (*sub)(Ctx *, LLVMValueRef, LLVMValueRef),
            (*mul)(Ctx *, LLVMValueRef, LLVMValueRef), (*dvd)(Ctx *, LLVMValueRef, LLVMValueRef);
} Arith;
static LLVMValueRef strict(Ctx *c, LLVMValueRef v) { return c->opt.fastmath ? fp(c, v) : v; }
static LLVMValueRef sadd(Ctx *c, LLVMValueRef a, LLVMValueRef b) { return strict(c, LLVMBuildFAdd(c->b, a, b, "")); }
static LLVMValueRef ssub(Ctx *c, LLVMValueRef a, LLVMValueRef b) { return strict(c, LLVMBuildFSub(c->b, a, b, "")); }
static LLVMValueRef smul(Ctx *c, LLVMValueRef a, LLVMValueRef b) { return strict(c, LLVMBuildFMul(c->b, a, b, "")); }
static LLVMValueRef sdvd(Ctx *c, LLVMValueRef a, LLVMValueRef b) { return strict(c, LLVMBuildFDiv(c->b, a, b, "")); }
static const Arith fused = {add, sub, mul, dvd}, exact = {sadd, ssub, smul, sdvd};

/* _Py_c_prod */
static Cx c_prod_(Ctx *c, const Arith *o, Cx a, Cx b) {
    return (Cx){o->sub(c, o->mul(c, a.re, b.re), o->mul(c, a.im, b.im)),
                o->add(c, o->mul(c, a.re, b.im), o->mul(c, a.im, b.re))};
}
static Cx c_prod(Ctx *c, Cx a, Cx b) { return c_prod_(c, &fused, a, b); }

/* _Py_c_quot: Smith's method, scaled by the larger part of the divisor. */
static Cx c_quot_(Ctx *c, const Arith *o, Cx a, Cx b) {
    LLVMValueRef big_re = cmp(c, LLVMRealOGE, fabs_(c, b.re), fabs_(c, b.im));
    LLVMValueRef r1 = o->dvd(c, b.im, b.re), d1 = o->add(c, b.re, o->mul(c, b.im, r1));
    Cx q1 = {o->dvd(c, o->add(c, a.re, o->mul(c, a.im, r1)), d1), o->dvd(c, o->sub(c, a.im, o->mul(c, a.re, r1)), d1)};
    LLVMValueRef r2 = o->dvd(c, b.re, b.im), d2 = o->add(c, o->mul(c, b.re, r2), b.im);
    Cx q2 = {o->dvd(c, o->add(c, o->mul(c, a.re, r2), a.im), d2), o->dvd(c, o->sub(c, o->mul(c, a.im, r2), a.re), d2)};
    return csel(c, big_re, q1, q2);
}
static Cx c_quot(Ctx *c, Cx a, Cx b) { return c_quot_(c, &fused, a, b); }

/* c_powi for a constant integer exponent: CPython's binary powering (c_powu),
 * unrolled, with CPython's arithmetic exactly (no fused operations), so that
 * the result is CPython's to the bit. The first product is 1 * x too, as
 * CPython computes it: with an infinite part it is not x (0 * inf is NaN), so
 * z ** 2 of such a z has CPython's NaNs; n <= 0 takes 1 / that. */
static Cx c_powi(Ctx *c, Type *ft, Cx x, long n) {
    long m = n < 0 ? -n : n;
    Cx one = {K(c, ft, 1.0), K(c, ft, 0.0)}, r = one, p = x;
    for (long mask = 1; mask > 0 && m >= mask; mask <<= 1) {
        if (m & mask) r = c_prod_(c, &exact, r, p);
        if (m >= mask << 1) p = c_prod_(c, &exact, p, p);
    }
    return n <= 0 ? c_quot_(c, &exact, one, r) : r;
}

/* _Py_c_pow: polar form. */
static Cx c_pow(Ctx *c, Type *ft, Cx a, Cx b) {
    LLVMValueRef zero = K(c, ft, 0.0);
    LLVMValueRef vabs = m2(c, ft, "hypot", a.re, a.im);
    LLVMValueRef len = m2(c, ft, "pow", vabs, b.re);
    LLVMValueRef at = m2(c, ft, "atan2", a.im, a.re);
    LLVMValueRef phase = mul(c, at, b.re);
    LLVMValueRef bim = cmp(c, LLVMRealUNE, b.im, zero);
    len = sel(c, bim, dvd(c, len, m1(c, ft, "exp", mul(c, at, b.im))), len);
    phase = sel(c, bim, add(c, phase, mul(c, b.im, m1(c, ft, "log", vabs))), phase);
    Cx r = {mul(c, len, m1(c, ft, "cos", phase)), mul(c, len, m1(c, ft, "sin", phase))};
    LLVMValueRef b0 = LLVMBuildAnd(c->b, cmp(c, LLVMRealOEQ, b.re, zero), cmp(c, LLVMRealOEQ, b.im, zero), "");
    LLVMValueRef a0 = LLVMBuildAnd(c->b, cmp(c, LLVMRealOEQ, a.re, zero), cmp(c, LLVMRealOEQ, a.im, zero), "");
    r = csel(c, a0, (Cx){zero, zero}, r);
    return csel(c, b0, (Cx){K(c, ft, 1.0), zero}, r);
}

/* An exponent CPython raises by repeated multiplication: a constant whose
 * value is an integer of magnitude <= 100 (complex_pow). */
static bool int_exponent(Instr *e, long *n) {
    if (!e || e->op != IR_CONST) return false;
    double v;
    switch (e->ckind) {
    case CK_INT:
    case CK_BOOL: *n = (long)e->ival; return !e->is_uint64 && e->ival >= -100 && e->ival <= 100;
    case CK_FLOAT: v = e->fval; break;
    case CK_COMPLEX:
        if (e->fimag != 0.0) return false;
        v = e->fval;
        break;
    default: return false;
    }
    if (v != floor(v) || fabs(v) > 100.0) return false;
    *n = (long)v;
    return true;
}

LLVMValueRef complex_binop(Ctx *c, BinOp op, LLVMValueRef a, LLVMValueRef b, Type *ct, Instr *exponent) {
    Type *ft = complex_part(ct);
    Cx x = split(c, a), y = split(c, b), r;
    long n;
    switch (op) {
    case BIN_ADD: r = (Cx){add(c, x.re, y.re), add(c, x.im, y.im)}; break;
    case BIN_SUB: r = (Cx){sub(c, x.re, y.re), sub(c, x.im, y.im)}; break;
    case BIN_MUL: r = c_prod(c, x, y); break;
    case BIN_DIV: r = c_quot(c, x, y); break;
    case BIN_POW: r = int_exponent(exponent, &n) ? c_powi(c, ft, x, n) : c_pow(c, ft, x, y); break;
    default: internal_error(c, c->cur_loc, "lower: complex operator %d", (int)op); return NULL;
    }
    return join(c, ct, r);
}

LLVMValueRef complex_cmp(Ctx *c, CmpOp op, LLVMValueRef a, LLVMValueRef b) {
    Cx x = split(c, a), y = split(c, b);
    if (op == CMP_EQ) return LLVMBuildAnd(c->b, cmp(c, LLVMRealOEQ, x.re, y.re), cmp(c, LLVMRealOEQ, x.im, y.im), "");
    return LLVMBuildOr(c->b, cmp(c, LLVMRealUNE, x.re, y.re), cmp(c, LLVMRealUNE, x.im, y.im), "");
}

LLVMValueRef complex_abs(Ctx *c, LLVMValueRef z, Type *ct) {
    Cx x = split(c, z);
    return m2(c, complex_part(ct), "hypot", x.re, x.im);
}

/* ---- cmath (Modules/cmathmodule.c, finite inputs) ---- */

static Cx c_sqrt(Ctx *c, Type *ft, Cx z) {
    LLVMValueRef zero = K(c, ft, 0.0), eighth = K(c, ft, 0.125), two = K(c, ft, 2.0);
    LLVMValueRef ax = mul(c, fabs_(c, z.re), eighth), ay = fabs_(c, z.im);
    LLVMValueRef s = mul(c, two, fcall1(c, "llvm.sqrt", add(c, ax, m2(c, ft, "hypot", ax, mul(c, ay, eighth)))));
    LLVMValueRef d = dvd(c, ay, mul(c, two, s));
    LLVMValueRef pos = cmp(c, LLVMRealOGE, z.re, zero);
    Cx r = csel(c, pos, (Cx){s, fcall2(c, "llvm.copysign", d, z.im)}, (Cx){d, fcall2(c, "llvm.copysign", s, z.im)});
    LLVMValueRef z0 = LLVMBuildAnd(c->b, cmp(c, LLVMRealOEQ, z.re, zero), cmp(c, LLVMRealOEQ, z.im, zero), "");
    return csel(c, z0, (Cx){zero, z.im}, r);
}

static Cx c_exp(Ctx *c, Type *ft, Cx z) {
    LLVMValueRef l = m1(c, ft, "exp", z.re);
    return (Cx){mul(c, l, m1(c, ft, "cos", z.im)), mul(c, l, m1(c, ft, "sin", z.im))};
}

static Cx c_log(Ctx *c, Type *ft, Cx z) {
    LLVMValueRef ax = fabs_(c, z.re), ay = fabs_(c, z.im), one = K(c, ft, 1.0);
    LLVMValueRef h = m2(c, ft, "hypot", ax, ay);
    /* near |z| = 1, log(h) loses its digits: log1p of (am-1)(am+1) + an^2 */
    LLVMValueRef gt = cmp(c, LLVMRealOGT, ax, ay);
    LLVMValueRef am = sel(c, gt, ax, ay), an = sel(c, gt, ay, ax);
    LLVMValueRef near =
            LLVMBuildAnd(c->b, cmp(c, LLVMRealOGE, h, K(c, ft, 0.71)), cmp(c, LLVMRealOLE, h, K(c, ft, 1.73)), "");
    LLVMValueRef arg = add(c, mul(c, sub(c, am, one), add(c, am, one)), mul(c, an, an));
    LLVMValueRef re = sel(c, near, mul(c, m1(c, ft, "log1p", arg), K(c, ft, 0.5)), m1(c, ft, "log", h));
    return (Cx){re, m2(c, ft, "atan2", z.im, z.re)};
}

static Cx c_sinh(Ctx *c, Type *ft, Cx z) {
    return (Cx){mul(c, m1(c, ft, "cos", z.im), m1(c, ft, "sinh", z.re)),
                mul(c, m1(c, ft, "sin", z.im), m1(c, ft, "cosh", z.re))};
}

static Cx c_cosh(Ctx *c, Type *ft, Cx z) {
    return (Cx){mul(c, m1(c, ft, "cos", z.im), m1(c, ft, "cosh", z.re)),
                mul(c, m1(c, ft, "sin", z.im), m1(c, ft, "sinh", z.re))};
}

static Cx c_tanh(Ctx *c, Type *ft, Cx z) {
    LLVMValueRef one = K(c, ft, 1.0);
    LLVMValueRef tx = m1(c, ft, "tanh", z.re), ty = m1(c, ft, "tan", z.im);
    LLVMValueRef cx = dvd(c, one, m1(c, ft, "cosh", z.re));
    LLVMValueRef txty = mul(c, tx, ty), denom = add(c, one, mul(c, txty, txty));
    return (Cx){dvd(c, mul(c, tx, add(c, one, mul(c, ty, ty))), denom), mul(c, mul(c, dvd(c, ty, denom), cx), cx)};
}

static Cx c_asinh(Ctx *c, Type *ft, Cx z) {
    LLVMValueRef one = K(c, ft, 1.0);
    Cx s1 = c_sqrt(c, ft, (Cx){add(c, one, z.im), neg(c, z.re)});
    Cx s2 = c_sqrt(c, ft, (Cx){sub(c, one, z.im), z.re});
    return (Cx){m1(c, ft, "asinh", sub(c, mul(c, s1.re, s2.im), mul(c, s2.re, s1.im))),
                m2(c, ft, "atan2", z.im, sub(c, mul(c, s1.re, s2.re), mul(c, s1.im, s2.im)))};
}

static Cx c_acos(Ctx *c, Type *ft, Cx z) {
    LLVMValueRef one = K(c, ft, 1.0);
    Cx s1 = c_sqrt(c, ft, (Cx){sub(c, one, z.re), neg(c, z.im)});
    Cx s2 = c_sqrt(c, ft, (Cx){add(c, one, z.re), z.im});
    return (Cx){mul(c, K(c, ft, 2.0), m2(c, ft, "atan2", s1.re, s2.re)),
                m1(c, ft, "asinh", sub(c, mul(c, s2.re, s1.im), mul(c, s2.im, s1.re)))};
}

static Cx c_acosh(Ctx *c, Type *ft, Cx z) {
    LLVMValueRef one = K(c, ft, 1.0);
    Cx s1 = c_sqrt(c, ft, (Cx){sub(c, z.re, one), z.im});
    Cx s2 = c_sqrt(c, ft, (Cx){add(c, z.re, one), z.im});
    return (Cx){m1(c, ft, "asinh", add(c, mul(c, s1.re, s2.re), mul(c, s1.im, s2.im))),
                mul(c, K(c, ft, 2.0), m2(c, ft, "atan2", s1.im, s2.re))};
}

/* atanh(z) = -atanh(-z): computed for re >= 0 */
static Cx c_atanh(Ctx *c, Type *ft, Cx z) {
    LLVMValueRef one = K(c, ft, 1.0), flip = cmp(c, LLVMRealOLT, z.re, K(c, ft, 0.0));
    Cx w = csel(c, flip, (Cx){neg(c, z.re), neg(c, z.im)}, z);
    LLVMValueRef ay = fabs_(c, w.im), omx = sub(c, one, w.re);
    LLVMValueRef re =
            dvd(c, m1(c, ft, "log1p", dvd(c, mul(c, K(c, ft, 4.0), w.re), add(c, mul(c, omx, omx), mul(c, ay, ay)))),
                K(c, ft, 4.0));
    LLVMValueRef im = dvd(c,
                          neg(c,
                              m2(c, ft, "atan2", mul(c, K(c, ft, -2.0), w.im),
                                 sub(c, mul(c, omx, add(c, one, w.re)), mul(c, ay, ay)))),
                          K(c, ft, 2.0));
    return csel(c, flip, (Cx){neg(c, re), neg(c, im)}, (Cx){re, im});
}

/* i*z and its inverse: sin(z) = -i sinh(iz) and friends */
static Cx times_i(Ctx *c, Cx z) { return (Cx){neg(c, z.im), z.re}; }
static Cx times_minus_i(Ctx *c, Cx z) { return (Cx){z.im, neg(c, z.re)}; }

/* clang-format off */
static const char *const cmath_names[] = {
    [CM_SQRT] = "sqrt", [CM_EXP] = "exp", [CM_LOG] = "log", [CM_LOG10] = "log10", [CM_SIN] = "sin",
    [CM_COS] = "cos", [CM_TAN] = "tan", [CM_SINH] = "sinh", [CM_COSH] = "cosh", [CM_TANH] = "tanh",
    [CM_ASIN] = "asin", [CM_ACOS] = "acos", [CM_ATAN] = "atan", [CM_ASINH] = "asinh", [CM_ACOSH] = "acosh",
    [CM_ATANH] = "atanh", [CM_PHASE] = "phase", [CM_POLAR] = "polar", [CM_RECT] = "rect", [CM_ISNAN] = "isnan",
    [CM_ISINF] = "isinf", [CM_ISFINITE] = "isfinite",
};
/* clang-format on */

/* ---- special values: an infinite or NaN part ---- */

/* CPython's classes of a part, the index of its special-value tables. */
enum { SV_NINF, SV_NEG, SV_NZERO, SV_PZERO, SV_POS, SV_PINF, SV_NAN, SV_N };
static const double sv_sample[SV_N] = {-INFINITY, -1.0, -0.0, 0.0, 1.0, INFINITY, NAN};

/* The answers of CPython's cmath.<fn> (or rect) with a non-finite part, by
 * class: one call per pair, made once per process. A pair that raises (a
 * domain error) has NaNs; a finite pair is never read. */
static int special_table(Ctx *c, CmathFn fn, double (**out)[2]) {
    static double tables[CM_ISFINITE + 1][SV_N * SV_N][2];
    static bool have[CM_ISFINITE + 1];
    *out = tables[fn];
    if (have[fn]) return 0;
    PyObject *mod = PyImport_ImportModule("cmath");
    PyObject *f = mod ? PyObject_GetAttrString(mod, cmath_names[fn]) : NULL;
    Py_XDECREF(mod);
    if (!f) return internal_error(c, c->cur_loc, "lower: cmath.%s is not in this CPython", cmath_names[fn]);
    for (int i = 0; i < SV_N; i++)
        for (int j = 0; j < SV_N; j++) {
            double *cell = tables[fn][i * SV_N + j];
            cell[0] = cell[1] = NAN;
            if (isfinite(sv_sample[i]) && isfinite(sv_sample[j])) continue;
            PyObject *r = fn == CM_RECT ? PyObject_CallFunction(f, "dd", sv_sample[i], sv_sample[j])
                                        : PyObject_CallFunction(f, "D", &(Py_complex){sv_sample[i], sv_sample[j]});
            if (!r) {
                if (!PyErr_ExceptionMatches(PyExc_ValueError) && !PyErr_ExceptionMatches(PyExc_OverflowError)) {
                    Py_DECREF(f);
                    return -1;
                }
                PyErr_Clear();
                continue;
            }
            Py_complex v = PyComplex_AsCComplex(r);
            Py_DECREF(r);
            if (PyErr_Occurred()) {
                Py_DECREF(f);
                return -1;
            }
            cell[0] = v.real;
            cell[1] = v.imag;
        }
    Py_DECREF(f);
    have[fn] = true;
    return 0;
}

/* The class of x (an i32 in SV_*); no fast-math flags, which would let LLVM assume x finite. */
static LLVMValueRef sv_class(Ctx *c, Type *ft, LLVMValueRef x) {
    LLVMTypeRef t = llvm_type(c, ft);
    LLVMValueRef ax = call_intrinsic(c, "llvm.fabs", &t, 1, &x, 1);
    LLVMValueRef neg = cmp(c, LLVMRealOLT, call_intrinsic(c, "llvm.copysign", &t, 1,
                                                          (LLVMValueRef[]){LLVMConstReal(t, 1.0), x}, 2),
                           LLVMConstReal(t, 0.0));
#define I(v) LLVMConstInt(c->i32, v, 0)
    LLVMValueRef k = sel(c, neg, I(SV_NEG), I(SV_POS));
    k = sel(c, cmp(c, LLVMRealOEQ, ax, LLVMConstReal(t, 0.0)), sel(c, neg, I(SV_NZERO), I(SV_PZERO)), k);
    k = sel(c, cmp(c, LLVMRealOEQ, ax, LLVMConstReal(t, INFINITY)), sel(c, neg, I(SV_NINF), I(SV_PINF)), k);
    return sel(c, cmp(c, LLVMRealUNO, x, x), I(SV_NAN), k);
#undef I
}

static LLVMValueRef is_inf(Ctx *c, Type *ft, LLVMValueRef x) {
    LLVMTypeRef t = llvm_type(c, ft);
    return cmp(c, LLVMRealOEQ, call_intrinsic(c, "llvm.fabs", &t, 1, &x, 1), LLVMConstReal(t, INFINITY));
}
static LLVMValueRef is_finite(Ctx *c, Type *ft, LLVMValueRef x) {
    LLVMTypeRef t = llvm_type(c, ft);
    return cmp(c, LLVMRealOLT, call_intrinsic(c, "llvm.fabs", &t, 1, &x, 1), LLVMConstReal(t, INFINITY));
}

/* cmath.<fn>(z) (rect(r, phi): z = (r, phi)) from its value on finite input
 * `fin`: a non-finite part takes the table's answer, except where CPython
 * computes it (an infinite real part with a finite non-zero imaginary part
 * in exp, sinh, cosh, tanh and rect, whose signs follow cos and sin). */
static int with_special(Ctx *c, Type *ft, CmathFn fn, Cx z, Cx *fin) {
    double (*tab)[2];
    RETURN_IF_ERROR(special_table(c, fn, &tab));
    bool dbl = ft->kind == TY_FLOAT64;
    size_t part = dbl ? sizeof(double) : sizeof(float);
    char *bytes = arena_alloc(&c->arena, SV_N * SV_N * 2 * part);
    for (int i = 0; i < SV_N * SV_N * 2; i++) {
        double v = tab[i / 2][i % 2];
        float f = (float)v;
        memcpy(bytes + (size_t)i * part, dbl ? (void *)&v : (void *)&f, part);
    }
    LLVMTypeRef t = llvm_type(c, ft);
    LLVMValueRef data = c->target->const_array(c, bytes, SV_N * SV_N * 2 * part);
    LLVMValueRef idx = LLVMBuildAdd(c->b, LLVMBuildMul(c->b, sv_class(c, ft, z.re), LLVMConstInt(c->i32, SV_N * 2, 0), ""),
                                    LLVMBuildMul(c->b, sv_class(c, ft, z.im), LLVMConstInt(c->i32, 2, 0), ""), "");
    LLVMValueRef idx1 = LLVMBuildAdd(c->b, idx, LLVMConstInt(c->i32, 1, 0), "");
    Cx sp = {LLVMBuildLoad2(c->b, t, LLVMBuildGEP2(c->b, t, data, &idx, 1, ""), "sv.re"),
             LLVMBuildLoad2(c->b, t, LLVMBuildGEP2(c->b, t, data, &idx1, 1, ""), "sv.im")};
    if (fn == CM_EXP || fn == CM_SINH || fn == CM_COSH || fn == CM_TANH || fn == CM_RECT) {
        LLVMValueRef zero = K(c, ft, 0.0), inf = K(c, ft, INFINITY);
        LLVMValueRef computed = LLVMBuildAnd(c->b, LLVMBuildAnd(c->b, is_inf(c, ft, z.re), is_finite(c, ft, z.im), ""),
                                             cmp(c, LLVMRealUNE, z.im, zero), "");
        LLVMValueRef pos = cmp(c, LLVMRealOGT, z.re, zero);
        LLVMValueRef co = m1(c, ft, "cos", z.im), si = m1(c, ft, "sin", z.im);
        LLVMTypeRef tt[1] = {t};
#define CS(mag, sgn) call_intrinsic(c, "llvm.copysign", tt, 1, (LLVMValueRef[]){mag, sgn}, 2)
        Cx pinf = {CS(inf, co), CS(inf, si)}, r;
        switch (fn) {
        case CM_EXP: r = csel(c, pos, pinf, (Cx){CS(zero, co), CS(zero, si)}); break;
        case CM_COSH: r = csel(c, pos, pinf, (Cx){pinf.re, neg(c, pinf.im)}); break;
        case CM_SINH: r = csel(c, pos, pinf, (Cx){neg(c, pinf.re), pinf.im}); break;
        case CM_RECT: r = csel(c, pos, pinf, (Cx){neg(c, pinf.re), neg(c, pinf.im)}); break;
        default: /* tanh */
            r = (Cx){CS(K(c, ft, 1.0), z.re), CS(zero, mul(c, K(c, ft, 2.0), mul(c, si, co)))};
            break;
        }
#undef CS
        sp = csel(c, computed, r, sp);
    }
    LLVMValueRef finite = LLVMBuildAnd(c->b, is_finite(c, ft, z.re), is_finite(c, ft, z.im), "");
    *fin = csel(c, finite, *fin, sp);
    return 0;
}

/* A real argument becomes the complex of its width (float32 -> complex64,
 * ints and float64 -> complex128); a complex keeps its type. */
Type *cmath_type(Ctx *c, Instr *in, CmathFn fn, Type **at, int nargs) {
    const char *name = cmath_names[fn];
    int want = fn == CM_RECT ? 2 : 1, most = fn == CM_LOG || fn == CM_RECT ? 2 : 1;
    if (nargs < want || nargs > most)
        TERR("cmath.%s() takes %s", name,
             fn == CM_RECT          ? "two numbers (r, phi)"
                     : fn == CM_LOG ? "one or two numbers"
                                    : "one number");
    for (int i = 0; i < nargs; i++) {
        if (!is_number(at[i])) TERR("cmath.%s() takes numbers, not %s", name, type_name(c, at[i]));
        if (fn == CM_RECT && is_complex(at[i])) TERR("cmath.rect() takes real numbers, not %s", type_name(c, at[i]));
    }
    Type *z = nargs == 2 ? promote_arith(at[0], at[1]) : at[0];
    if (z->kind == TY_BOOL) z = &ty_int64;
    Type *ct = complex_of(z);
    switch (fn) {
    case CM_PHASE: return complex_part(ct);
    case CM_POLAR: {
        Type *items[2] = {complex_part(ct), complex_part(ct)};
        return type_tuple(c, 2, items);
    }
    case CM_ISNAN:
    case CM_ISINF:
    case CM_ISFINITE: return &ty_bool;
    default: return ct;
    }
}

/* One of the functions CPython computes directly (the others are these on
 * i*z), with its special values. */
static int cmath_base(Ctx *c, Type *ft, CmathFn fn, Cx z, Cx *r) {
    switch (fn) {
    case CM_SQRT: *r = c_sqrt(c, ft, z); break;
    case CM_EXP: *r = c_exp(c, ft, z); break;
    case CM_LOG: *r = c_log(c, ft, z); break;
    case CM_SINH: *r = c_sinh(c, ft, z); break;
    case CM_COSH: *r = c_cosh(c, ft, z); break;
    case CM_TANH: *r = c_tanh(c, ft, z); break;
    case CM_ASINH: *r = c_asinh(c, ft, z); break;
    case CM_ACOS: *r = c_acos(c, ft, z); break;
    case CM_ACOSH: *r = c_acosh(c, ft, z); break;
    case CM_ATANH: *r = c_atanh(c, ft, z); break;
    default: return internal_error(c, c->cur_loc, "lower: cmath.%s has no formula of its own", cmath_names[fn]);
    }
    return with_special(c, ft, fn, z, r);
}

LLVMValueRef cmath_lower(Ctx *c, CmathFn fn, Instr **args, int nargs, Type *rt) {
    if (fn == CM_RECT) {
        Type *ft = complex_part(rt);
        LLVMValueRef r = val_as(c, args[0], ft), phi = val_as(c, args[1], ft);
        Cx v = {mul(c, r, m1(c, ft, "cos", phi)), mul(c, r, m1(c, ft, "sin", phi))};
        if (with_special(c, ft, CM_RECT, (Cx){r, phi}, &v) < 0) return NULL;
        return join(c, rt, v);
    }
    Type *z0 = args[0]->type->kind == TY_BOOL ? &ty_int64 : args[0]->type;
    Type *ct = is_complex(rt) ? rt : complex_of(nargs == 2 ? promote_arith(z0, args[1]->type) : z0);
    if (fn == CM_PHASE || fn == CM_POLAR) ct = complex_of(z0);
    Type *ft = complex_part(ct);
    Cx z = split(c, val_as(c, args[0], ct)), r;
    int rc = 0;
    switch (fn) {
    case CM_LOG:
        rc = cmath_base(c, ft, CM_LOG, z, &r);
        if (rc == 0 && nargs == 2) {
            Cx lb;
            rc = cmath_base(c, ft, CM_LOG, split(c, val_as(c, args[1], ct)), &lb);
            r = c_quot(c, r, lb);
        }
        break;
    case CM_LOG10: {
        rc = cmath_base(c, ft, CM_LOG, z, &r);
        LLVMValueRef ln10 = K(c, ft, M_LN10);
        r = (Cx){dvd(c, r.re, ln10), dvd(c, r.im, ln10)};
        break;
    }
    case CM_SQRT:
    case CM_EXP:
    case CM_SINH:
    case CM_COSH:
    case CM_TANH:
    case CM_ASINH:
    case CM_ACOS:
    case CM_ACOSH:
    case CM_ATANH: rc = cmath_base(c, ft, fn, z, &r); break;
    case CM_SIN: rc = cmath_base(c, ft, CM_SINH, times_i(c, z), &r); r = times_minus_i(c, r); break;
    case CM_COS: rc = cmath_base(c, ft, CM_COSH, times_i(c, z), &r); break;
    case CM_TAN: rc = cmath_base(c, ft, CM_TANH, times_i(c, z), &r); r = times_minus_i(c, r); break;
    case CM_ASIN: rc = cmath_base(c, ft, CM_ASINH, times_i(c, z), &r); r = times_minus_i(c, r); break;
    case CM_ATAN: rc = cmath_base(c, ft, CM_ATANH, times_i(c, z), &r); r = times_minus_i(c, r); break;
    case CM_PHASE: return m2(c, ft, "atan2", z.im, z.re);
    case CM_POLAR: {
        LLVMValueRef t = LLVMGetUndef(llvm_type(c, rt));
        t = LLVMBuildInsertValue(c->b, t, m2(c, ft, "hypot", z.re, z.im), 0, "");
        return LLVMBuildInsertValue(c->b, t, m2(c, ft, "atan2", z.im, z.re), 1, "");
    }
    case CM_ISNAN: return LLVMBuildOr(c->b, cmp(c, LLVMRealUNO, z.re, z.re), cmp(c, LLVMRealUNO, z.im, z.im), "");
    case CM_ISINF:
    case CM_ISFINITE: {
        /* no fast-math flags here: they would let LLVM assume the answer */
        LLVMTypeRef t = llvm_type(c, ft);
        LLVMValueRef inf = LLVMConstReal(t, INFINITY);
        LLVMValueRef are = call_intrinsic(c, "llvm.fabs", &t, 1, &z.re, 1),
                     aim = call_intrinsic(c, "llvm.fabs", &t, 1, &z.im, 1);
        if (fn == CM_ISINF) return LLVMBuildOr(c->b, cmp(c, LLVMRealOEQ, are, inf), cmp(c, LLVMRealOEQ, aim, inf), "");
        return LLVMBuildAnd(c->b, cmp(c, LLVMRealOLT, are, inf), cmp(c, LLVMRealOLT, aim, inf), "");
    }
    default: internal_error(c, c->cur_loc, "lower: cmath.%s", cmath_names[fn]); return NULL;
    }
    return rc < 0 ? NULL : join(c, ct, r);
}
