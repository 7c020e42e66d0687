"""NumPy ufuncs on arrays inside kernels: np.sin(x, out), np.add(a, b, out).

The compiler (src/ufuncloop.c) turns such a call into a call of a device
function made here as Python source for the ufunc and the number of
dimensions of each argument (0 for a scalar). The function loops over the
output's elements in the calling thread, applying the ufunc to scalars (which
the compiler knows), with NumPy's broadcasting: an input's dimensions line up
with the output's last ones, and a dimension of length 1 repeats its element.

    def __ufunc_sin_2_2(a0, out0):
        for i0 in range(out0.shape[0]):
            for i1 in range(out0.shape[1]):
                out0[i0, i1] = __np__.sin(a0[min(i0, a0.shape[0] - 1), min(i1, a0.shape[1] - 1)])
"""
import numpy as np

from .vectorizers import _exec_source

_cache = {}

# NumPy orders complex numbers lexicographically (real part, then imaginary) in its
# comparison and min/max ufuncs; the kernel language's operators refuse to order them.
_COMPLEX_SOURCE = """\
def less(x, y):
    x = complex(x)
    y = complex(y)
    nan = x.imag != x.imag or y.imag != y.imag
    return (x.real < y.real and not nan) or (x.real == y.real and x.imag < y.imag)


def less_equal(x, y):
    x = complex(x)
    y = complex(y)
    nan = x.imag != x.imag or y.imag != y.imag
    return (x.real < y.real and not nan) or (x.real == y.real and x.imag <= y.imag)


def greater(x, y):
    return less(y, x)


def greater_equal(x, y):
    return less_equal(y, x)


def isnan(x):
    return x.real != x.real or x.imag != x.imag


def maximum(x, y):
    x = complex(x)
    y = complex(y)
    if isnan(x) or isnan(y):
        return x if isnan(x) else y
    return x if less_equal(y, x) else y


def minimum(x, y):
    x = complex(x)
    y = complex(y)
    if isnan(x) or isnan(y):
        return x if isnan(x) else y
    return x if less_equal(x, y) else y


def fmax(x, y):
    x = complex(x)
    y = complex(y)
    if isnan(x) or isnan(y):
        return y if isnan(x) else x
    return x if less_equal(y, x) else y


def fmin(x, y):
    x = complex(x)
    y = complex(y)
    if isnan(x) or isnan(y):
        return y if isnan(x) else x
    return x if less_equal(x, y) else y
"""
_complex_ops = None


def _complex_op(name):
    global _complex_ops
    if _complex_ops is None:
        _complex_ops = {}
        exec(compile(_COMPLEX_SOURCE, "<gpujit complex ordering>", "exec"), _complex_ops)
        import linecache
        linecache.cache["<gpujit complex ordering>"] = (len(_COMPLEX_SOURCE), None,
                                                         _COMPLEX_SOURCE.splitlines(True), "<gpujit complex ordering>")
    return _complex_ops.get(name) if name not in ("isnan",) else None


# NumPy's ufuncs on complex scalars where the compiler's scalar intrinsics take real numbers
# only: kernel source over cmath, following NumPy's formulas (npymath's nc_* functions). __T__
# is the argument's complex type, so a complex64 stays complex64.
_COMPLEX_SCALAR_SOURCE = """\
def sin(x):
    return __T__(cmath.sin(x))


def cos(x):
    return __T__(cmath.cos(x))


def tan(x):
    return __T__(cmath.tan(x))


def arcsin(x):
    return __T__(cmath.asin(x))


def arccos(x):
    return __T__(cmath.acos(x))


def arctan(x):
    return __T__(cmath.atan(x))


def sinh(x):
    return __T__(cmath.sinh(x))


def cosh(x):
    return __T__(cmath.cosh(x))


def tanh(x):
    return __T__(cmath.tanh(x))


def arcsinh(x):
    return __T__(cmath.asinh(x))


def arccosh(x):
    return __T__(cmath.acosh(x))


def arctanh(x):
    return __T__(cmath.atanh(x))


def exp(x):
    return __T__(cmath.exp(x))


def log(x):
    return __T__(cmath.log(x))


def log10(x):
    return __T__(cmath.log10(x))


def sqrt(x):
    return __T__(cmath.sqrt(x))


def log2(x):
    r = cmath.log(x)
    return __T__(complex(r.real * 1.4426950408889634, r.imag * 1.4426950408889634))


def exp2(x):
    return __T__(cmath.exp(complex(x.real * 0.6931471805599453, x.imag * 0.6931471805599453)))


def expm1(x):
    h = math.sin(x.imag * 0.5)
    return __T__(complex(math.expm1(x.real) * math.cos(x.imag) - 2.0 * h * h, math.exp(x.real) * math.sin(x.imag)))


def log1p(x):
    return __T__(complex(math.log(math.hypot(x.real + 1.0, x.imag)), math.atan2(x.imag, x.real + 1.0)))


def isnan(x):
    return math.isnan(x.real) or math.isnan(x.imag)


def isinf(x):
    return math.isinf(x.real) or math.isinf(x.imag)


def isfinite(x):
    return math.isfinite(x.real) and math.isfinite(x.imag)
"""
_complex_scalar_ops = {}

# NumPy's ufuncs the compiler has no intrinsic for, by the kind of their arguments ("i" ints
# and bools, "f" floats, "c" complex; "" any): kernel source of NumPy's definitions. __T__ is
# the arguments' promoted type (NumPy's result type), __R__ the float type a float result of
# them has (float32 for float32 and small ints, float64 else, complex128 for complex).
_OTHER_SOURCE = {
    ("square", ""): "def square(x):\n    return __T__(x * x)\n",
    ("reciprocal", "f"): "def reciprocal(x):\n    return __T__(1.0) / x\n",
    ("reciprocal", "c"): "def reciprocal(x):\n    return __T__(1.0) / x\n",
    # 1/x truncated: 1 and -1 are their own reciprocals, other integers give 0
    ("reciprocal", "i"): "def reciprocal(x):\n    return __T__(x if x == 1 or x == -1 else 0)\n",
    ("conjugate", "c"): "def conjugate(x):\n    return x.conjugate()\n",
    ("conjugate", "f"): "def conjugate(x):\n    return x\n",
    ("conjugate", "i"): "def conjugate(x):\n    return x\n",
    ("signbit", "f"): "def signbit(x):\n    return math.copysign(1.0, x) < 0.0\n",
    ("signbit", "i"): "def signbit(x):\n    return x < 0\n",
    ("spacing", "f"): (
        "def spacing(x):\n"
        "    x = __R__(x)\n"
        "    if math.isinf(x) or math.isnan(x):\n"
        "        return __R__(math.nan)\n"
        "    return np.nextafter(x, __R__(-math.inf) if x < 0 else __R__(math.inf)) - x\n"),
    ("logaddexp", "f"): (
        "def logaddexp(x, y):\n"
        "    x = __R__(x)\n"
        "    y = __R__(y)\n"
        "    if x == y:\n"
        "        return x + __R__(0.6931471805599453)\n"
        "    d = x - y\n"
        "    if d > 0:\n"
        "        return x + __R__(math.log1p(math.exp(-d)))\n"
        "    if d <= 0:\n"
        "        return y + __R__(math.log1p(math.exp(d)))\n"
        "    return d\n"),
    ("logaddexp2", "f"): (
        "def logaddexp2(x, y):\n"
        "    x = __R__(x)\n"
        "    y = __R__(y)\n"
        "    if x == y:\n"
        "        return x + __R__(1.0)\n"
        "    d = x - y\n"
        "    if d > 0:\n"
        "        return x + __R__(math.log1p(math.exp2(-d)) * 1.4426950408889634)\n"
        "    if d <= 0:\n"
        "        return y + __R__(math.log1p(math.exp2(d)) * 1.4426950408889634)\n"
        "    return d\n"),
    ("float_power", "f"): "def float_power(x, y):\n    return float(x) ** float(y)\n",
    ("float_power", "c"): "def float_power(x, y):\n    return complex(x) ** complex(y)\n",
    ("gcd", "i"): (
        "def gcd(x, y):\n"
        "    a = abs(__T__(x))\n"
        "    b = abs(__T__(y))\n"
        "    while b != 0:\n"
        "        a, b = b, a % b\n"
        "    return __T__(a)\n"),
    ("lcm", "i"): (
        "def lcm(x, y):\n"
        "    a = abs(__T__(x))\n"
        "    b = abs(__T__(y))\n"
        "    if a == 0 or b == 0:\n"
        "        return __T__(0)\n"
        "    g = a\n"
        "    h = b\n"
        "    while h != 0:\n"
        "        g, h = h, g % h\n"
        "    return __T__(a // g * b)\n"),
    ("ldexp", "f"): "def ldexp(x, n):\n    return __R__(math.ldexp(__R__(x), n))\n",
}
_other_ops = {}


def _other_function(name, typenames):
    dtypes = [np.dtype(t) for t in typenames]
    kinds = "c" if any(d.kind == "c" for d in dtypes) else "f" if any(d.kind == "f" for d in dtypes) else "i"
    if name == "ldexp":  # a float and an integer exponent
        if len(dtypes) != 2 or dtypes[1].kind not in "iub" or dtypes[0].kind == "c":
            return None
        kinds, dtypes = "f", dtypes[:1]
    src = _OTHER_SOURCE.get((name, kinds)) or _OTHER_SOURCE.get((name, ""))
    if src is None and kinds == "i":
        src = _OTHER_SOURCE.get((name, "f"))  # a float function of integers: in __R__
    if src is None:
        return None
    key = (name, tuple(typenames))
    fn = _other_ops.get(key)
    if fn is None:
        import math
        t = np.result_type(*dtypes)
        r = np.complex128 if t.kind == "c" else np.result_type(t, np.float32).type
        fn = _exec_source(src, "<gpujit np.%s on %s>" % (name, ", ".join(typenames)),
                          {"__T__": t.type, "__R__": r, "math": math, "np": np}, name)
        _other_ops[key] = fn
    return fn


def scalar_function(path, typenames):
    """The device function for numpy.<name> on these scalar types (names as the compiler
    spells them) where the compiler's intrinsics do not take them, or None (the intrinsic
    types the call, or reports it)."""
    mod, _, name = path.partition(".")
    if mod != "numpy":
        return None
    if (name, "") in _OTHER_SOURCE or any(k[0] == name for k in _OTHER_SOURCE):
        return _other_function(name, typenames)
    complex_types = [t for t in typenames if t.startswith("complex")]
    if not complex_types:
        return None
    if len(typenames) != 1:
        return _complex_op(name)
    key = complex_types[0]
    ops = _complex_scalar_ops.get(key)
    if ops is None:
        import cmath
        import math
        ops = {"__T__": getattr(np, key), "cmath": cmath, "math": math}
        filename = "<gpujit numpy ufuncs on %s>" % key
        import linecache
        linecache.cache[filename] = (len(_COMPLEX_SCALAR_SOURCE), None, _COMPLEX_SCALAR_SOURCE.splitlines(True),
                                     filename)
        exec(compile(_COMPLEX_SCALAR_SOURCE, filename, "exec"), ops)
        _complex_scalar_ops[key] = ops
    fn = ops.get(name)
    return fn if name not in ("cmath", "math") and callable(fn) and hasattr(fn, "__code__") else None


def loop_function(path, ndims, complex_args=()):
    """The device function for numpy.<name> called with arguments of these dimensions
    (complex_args: which have complex elements), or None where the path is not a NumPy
    ufunc. TypeError for a call NumPy's form does not fit (the compiler reports it at
    the call)."""
    key = (path, tuple(ndims), tuple(complex_args))
    fn = _cache.get(key)
    if fn is not None:
        return fn
    mod, _, name = path.partition(".")
    uf = getattr(np, name, None) if mod == "numpy" else None
    if not isinstance(uf, np.ufunc):
        return None
    nin, nout = uf.nin, uf.nout
    nargs = len(ndims)
    if nout != 1:
        raise TypeError("np.%s() has %d outputs: only ufuncs of one output take arrays in kernels" % (name, nout))
    if nargs == nin:
        raise TypeError("np.%s() on an array needs an output array in a kernel (no array is allocated): "
                        "np.%s(%s, out)" % (name, name, ", ".join("x%d" % i for i in range(nin))))
    if nargs != nin + nout:
        raise TypeError("np.%s() takes %d input%s and an output array (%d arguments given)"
                        % (name, nin, "" if nin == 1 else "s", nargs))
    ond = ndims[-1]
    if ond == 0:
        raise TypeError("the output of np.%s() is an array, not a scalar" % name)
    for i, nd in enumerate(ndims[:nin]):
        if nd > ond:
            raise TypeError("np.%s(): input %d has %d dimensions, more than the output's %d" % (name, i + 1, nd, ond))
    params = ["a%d" % i for i in range(nin)] + ["out0"]
    lines = ["def __ufunc_%s(%s):" % (name, ", ".join(params))]
    for d in range(ond):
        lines.append("    " * (d + 1) + "for i%d in range(out0.shape[%d]):" % (d, d))
    items = []
    for p, nd in zip(params, ndims):
        if nd == 0:
            items.append(p)
            continue
        first = ond - nd
        items.append("%s[%s]" % (p, ", ".join("min(i%d, %s.shape[%d] - 1)" % (first + k, p, k) for k in range(nd))))
    idx = ", ".join("i%d" % d for d in range(ond))
    op = _complex_op(name) if any(complex_args[:nin]) else None
    call = "__op__" if op is not None else "__np__." + name
    lines.append("    " * (ond + 1) + "out0[%s] = %s(%s)" % (idx, call, ", ".join(items[:nin])))
    src = "\n".join(lines) + "\n"
    fn = _exec_source(src, "<gpujit np.%s loop, dimensions %s>" % (name, ",".join(map(str, ndims))),
                      {"__np__": np, "__op__": op}, "__ufunc_" + name)
    _cache[key] = fn
    return fn
