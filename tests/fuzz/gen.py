"""Random kernel generator for gpujit's differential fuzzer.

`generate(seed)` returns a `Program`: the source text of one kernel

    def kern(out, a, b):
        i = gpu.grid(1)
        ...

drawn from the supported subset, plus how to launch it and how to build its inputs.
The same source is run by CPython (tests/fuzz/shim.py stands in for `gpu`), so every
construct must mean the same thing in both. That is why the generator tracks, for each
expression, its static type and a bound on its magnitude:

- Integers: CPython ints don't wrap, kernels' int64 do. Every int expression carries a
  bound |v| <= B; once B could pass 2**40 the expression is reduced (`% P` with a prime P,
  which keeps every bit relevant, or `& MASK`), and variables are kept below VAR_BOUND
  at every assignment. So no value ever overflows int64 and both sides agree exactly.
- Division by zero is UB-ish in kernels (gives 0) and raises in CPython: integer divisors
  are `(e | 1)` (odd, never 0) or nonzero constants; float divisors are `(abs(e) + 1.0)`.
- Shift counts are masked (`e & 7`, `e & 15`); `**` exponents are small constants.
- Floats are bounded too (clamped with min/max at assignment, scaled by exact powers of
  two inside expressions), so no inf/NaN appears and float->int conversion (`int(f)`,
  `math.floor`) is always in range.
- Programs stay well-conditioned: kernels may fuse a*b+c into an FMA (LLVM `contract`) and
  CPython's `**` is libm pow(), so the two sides can differ by an ULP; nothing here may
  amplify that (products go through unfuse(), squares are x*x, no floor-mod of floats
  whose magnitude dwarfs the result). See docs/reliability.md, "False positives".
- Narrow casts (gpu.int32(e), gpu.uint8(e), ...) only appear as an operand of a binary
  op whose other side is int64: numba's promotion then gives int64 on both sides, where
  e.g. uint32 op uint32 -> uint64 would have no CPython counterpart. float32 arithmetic is
  kept inside `float(...)` and both operands are float32 (the shim returns np.float32,
  whose float32 op float32 is float32, as in the kernel).
- Variables have one type for the whole kernel (no int/float unification surprises) and
  are all initialised at the top, so no path reads an unbound local. Loop variables,
  while counters and tuple temporaries are only used in their own scope.

Barrier programs write `sh[tid]`, `syncthreads()`, then read any slot: the result does
not depend on the interleaving, and the reference runs a block's threads as Python
threads meeting at a threading.Barrier (see shim.py).
"""
import random
from dataclasses import dataclass, field

VAR_BOUND = 1 << 20      # |int variable| stays below this
WRAP_AT = 1 << 40        # reduce an int expression once its bound passes this
BIG_P = 1048573          # prime < 2**20 used to reduce
FVAR_BOUND = 1234567.25  # |float variable| stays below this
FWRAP_AT = 1.0e9

NARROW = {  # cast name -> bound on its result
    "int8": 128, "int16": 1 << 15, "int32": 1 << 31, "uint8": 255, "uint16": 65535, "uint32": (1 << 32) - 1,
}

INT_BINOPS = ["+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>", "**"]
FLOAT_BINOPS = ["+", "-", "*", "/", "//", "%", "**"]
CMPOPS = ["<", "<=", ">", ">=", "==", "!="]


def unfuse(product):
    """Keep a float product from being fused into an FMA with an add that consumes it.

    Kernels' float mul/add carry LLVM's `contract` flag (so ptxas and x86 emit FMAs), and an
    FMA rounds once where CPython rounds twice. One ULP is harmless by itself, but the
    generator's floor-mod clamps and squares of large values amplify it into any size of
    difference (found: a false positive, out 982.58 vs 921.13). min() with a huge bound
    never changes the value but makes the add consume a select/minnum, not an fmul. The bound
    must not be a constant: LLVM folds `select(c, x*y, K) + C` into `select(c, x*y + C, K + C)`
    and fuses again (seen: min(..., 1e300) did not block it), so it is 1e300 * b.size.
    (Contraction across an fpext -- a float32 product added in float64 -- is blocked too.)"""
    return "min(%s, 1e300 * b.size)" % product


# Device functions the kernel may call, appended to a program that uses them; fz_apply and
# fz_fapply take a function as their first argument (one specialisation per function passed).
FZ_HELPERS = """
def fz_apply(f, x, y):
    return f(x) + y


def fz_inc(x):
    return x * 3 + 1


def fz_neg(x):
    return 7 - x


def fz_fapply(f, x):
    return f(x) + 0.25


def fz_fhalf(x):
    return x * 0.5 - 1.0
"""
R_BOUND = 1000           # |r[k].x| and the tuple argument's ints
# The first line of a kernel that uses int_leaf_checked's operands: it runs with bounds
# checks (boundscheck=True, the CPU target's default), and where CPython raises IndexError
# the kernel must raise IndexError too (its output is not compared then).
CHECKED_MARK = "# bounds-checked"


@dataclass
class Program:
    seed: int
    source: str
    blocks: int
    threads: int
    ncols: int
    out_dtype: str            # "int64" or "float64"
    float_cols: list          # output columns that hold float values (tolerance compare)
    na: int
    nb: int
    a_bound: int
    a_stride: int             # a is a strided view a_full[::a_stride]
    a_dtype: str              # int64 or a narrower integer type
    b_dtype: str              # float64 or float32 (values k/8: exact in both)
    barrier: bool
    features: set = field(default_factory=set)
    nr: int = 0               # > 0: the kernel also takes r (nr records {x: int32, y: float64}) and
                              # t (a tuple (int, float, int)): kern(out, a, b, r, t)


class _Gen:
    def __init__(self, seed, branchy_calls=True):
        self.r = random.Random(seed)
        # gpujit rejected branching expressions (x if c else y, and/or, a < b < c) inside a
        # call's arguments until 0e1aca6 ("a call across branches", docs/reliability.md);
        # branchy_calls=False keeps them out of calls (tracked by in_call), for older builds.
        self.branchy_calls = branchy_calls
        self.in_call = 0
        self.seed = seed
        self.lines = []
        self.indent = 1
        self.counter = 0
        self.features = set()

    # -- helpers -------------------------------------------------------------------------------
    def fresh(self, prefix):
        self.counter += 1
        return "%s%d" % (prefix, self.counter)

    def branchy_ok(self):
        return self.branchy_calls or self.in_call == 0

    def arg(self, fn, *args):
        """fn(*args), generated as (part of) a call's argument."""
        self.in_call += 1
        try:
            return fn(*args)
        finally:
            self.in_call -= 1

    def emit(self, text):
        self.lines.append("    " * self.indent + text)

    def chance(self, p):
        return self.r.random() < p

    def pick(self, seq):
        return self.r.choice(seq)

    def reduce_int(self, src, bound, limit):
        """Reduce an int expression whose bound passes `limit`, keeping its low bits relevant."""
        if bound <= limit:
            return src, bound
        if self.chance(0.7):
            return "((%s) %% %d)" % (src, BIG_P), BIG_P
        return "((%s) & 0xFFFFF)" % src, 0xFFFFF

    def reduce_float(self, src, bound, limit):
        if bound <= limit:
            return src, bound
        # a call-free reduction (src may hold branching expressions): scale by a power of two,
        # which is exact and keeps relative errors relative. (A floor-mod clamp was tried
        # first: it turns a legitimate 1-ULP difference -- an FMA, libm's pow -- into an
        # arbitrary one, i.e. false positives.)
        k = 0
        while bound * 2.0 ** -k > limit:
            k += 1
        return "((%s) * %r)" % (src, 2.0 ** -k), bound * 2.0 ** -k

    # -- integer expressions ----------------------------------------------------------------------
    def int_leaf(self):
        if self.chance(0.0025):
            return self.int_leaf_checked()
        if self.chance(0.04):
            leaf = self.int_leaf_more()
            if leaf:
                return leaf
        r = self.r.random()
        scope_ints = self.ints + self.loop_ints
        if r < 0.35 and scope_ints:
            name, bound = self.pick(scope_ints)
            return name, bound
        if r < 0.50:
            c = self.pick([0, 1, 2, 3, 5, 7, -1, -3, 10, 100, self.r.randint(-1000, 1000),
                           self.r.randint(-(1 << 31), 1 << 31)])
            return ("(%d)" % c if c < 0 else str(c)), abs(c)
        if r < 0.60:
            return "i", self.nthreads
        if r < 0.70:
            self.features.add("load")
            idx = self.index_expr("a")
            if self.a_dtype != "int64":
                # a narrow element meets an int64 at once: numba keeps abs(int8) etc. in the
                # narrow type (abs(int8(-128)) == -128), where CPython's ints don't wrap
                c = self.r.randint(-3, 3)
                return "(a[%s] + %d)" % (idx, c), self.a_bound + 3
            return "a[%s]" % idx, self.a_bound
        if r < 0.76:
            return self.pick([("a.size", 64), ("len(a)", 64), ("a.shape[0]", 64), ("b.size", 64),
                              ("out.shape[1]", 64), ("out.shape[0]", 256), ("a.ndim", 1), ("out.ndim", 2),
                              ("out.size", 4096)])
        if r < 0.84:
            self.features.add("intrinsic")
            return self.pick([("gpu.threadIdx.x", 256), ("gpu.blockIdx.x", 256), ("gpu.blockDim.x", 256),
                              ("gpu.gridDim.x", 256), ("gpu.laneid", 32), ("gpu.warpsize", 32),
                              ("gpu.gridsize(1)", 256), ("gpu.threadIdx.y", 1), ("gpu.blockIdx.z", 1)])
        if r < 0.90:
            # b holds multiples of 1/8, so int() of it is exact and in range
            self.features.add("float2int")
            return "int(b[%s])" % self.arg(self.index_expr, "b"), 64
        if r < 0.95 and self.tuples:
            name, types = self.pick(self.tuples)
            ks = [k for k, t in enumerate(types) if t[0] == "i"]
            if ks:
                k = self.pick(ks)
                return "%s[%d]" % (name, k), types[k][1]
        c = self.r.randint(0, 50)
        return str(c), c

    def checked_index(self, n, bad):
        """An index into a sequence of length n (a source expression): in range, or, when
        `bad`, one that may pass either end (CPython raises IndexError, and so must the
        kernel: see CHECKED_MARK)."""
        e, _ = self.arg(self.int_expr, 1)
        if bad:
            # `+ i`: never a constant, which gpujit would refuse at compile time (as numba does)
            return "(%s + i) %% (%s + 3) - 1" % (e, n) if self.chance(0.5) else "-1 - (%s + i) %% (%s + 2)" % (e, n)
        if self.chance(0.3):
            return "-1 - (%s) %% %s" % (e, n)
        return "(%s) %% %s" % (e, n)

    def int_leaf_checked(self):
        """The paths where only the bounds checks keep memory safe: a tuple indexed by a
        variable; a constant tuple of more than 256 items (a lookup table) indexed, or
        reduced by min/max/sum/any; an index into a whose int64 arithmetic wraps (the
        kernel's wraps, CPython's exact value is wrapped by gpu.int64, the same number);
        compare_and_swap on a row of out from a variable column. Some of them may index out
        of range. (source, bound)."""
        self.features.add("checked")
        bad = self.chance(0.35)
        if bad:
            self.features.add("mayraise")
        r = self.r.random()
        if r < 0.3 or (r >= 0.8 and self.out_dtype != "int64"):
            self.features.add("tupleindex")
            items = [self.reduce_int(*self.arg(self.int_expr, 1), VAR_BOUND) for _ in range(self.r.randint(2, 5))]
            # gpu.int64: one item type (threadIdx.x and narrow loads are not int64)
            text = ", ".join("gpu.int64(%s)" % e for e, _ in items)
            return "(%s)[%s]" % (text, self.checked_index(str(len(items)), bad)), max(b for _, b in items)
        if r < 0.55:
            self.features.add("bigtuple")
            n = self.pick([257, 300, 600])
            vals = [self.r.randint(-1000, 1000) for _ in range(n)]
            lit = "(%s)" % ", ".join(map(str, vals))
            form = self.pick(["min", "max", "sum", "any", "index"])
            if form == "index":
                return "%s[%s]" % (lit, self.checked_index(str(n), bad)), 1000
            if form == "any":
                return "int(any(%s))" % lit, 1
            return "%s(%s)" % (form, lit), 1000 * n if form == "sum" else 1000
        if r < 0.8:
            self.features.add("wrapindex")
            big = (1 << 63) - 1
            if bad:
                # the index wraps to (t % 4) * 2**62 + 2: 2 for a t divisible by 4, else far out
                t = "%s + i" % self.arg(self.int_expr, 1)[0]
                idx = "gpu.int64(((%s) * 4611686018427387904 + (-9223372036854775808)) - 9223372036854775806)" % t
            else:
                idx = self.checked_index("a.size", False)
                sign = self.pick(["+", "-"])
                idx = "gpu.int64(((%s) %s %d) %s %d %s 2)" % (idx, sign, big, sign, big, sign)
            if self.a_dtype != "int64":
                return "(a[%s] + 1)" % idx, self.a_bound + 1
            return "a[%s]" % idx, self.a_bound
        self.features.add("cas")
        col = self.checked_index(str(self.ncols), False) if not bad else \
            "(%s + i) %% %d" % (self.arg(self.int_expr, 1)[0], self.ncols + 2)
        old, _ = self.reduce_int(*self.arg(self.int_expr, 1), VAR_BOUND)
        new, _ = self.reduce_int(*self.arg(self.int_expr, 1), VAR_BOUND)
        # out's row i is this thread's own: the result does not depend on other threads
        return "(gpu.atomic.compare_and_swap(out[i, %s:], %s, %s) %% %d)" % (col, old, new, BIG_P), BIG_P

    def a_slice(self):
        """A non-empty view of a: constant bounds checked against a's length, or a dynamic start."""
        if self.chance(0.3):
            e, _ = self.arg(self.int_expr, 1)
            return "a[(%s) %% a.size:]" % e
        while True:
            lo = self.pick([None, 0, 1, 2, -1, -3])
            hi = self.pick([None, 3, -1, 5])
            step = self.pick([None, 2, 3, -1, -2])
            if len(range(self.na)[slice(lo, hi, step)]):
                break
        text = ":".join("" if v is None else str(v) for v in (lo, hi, step))
        return "a[%s]" % (text[:-1] if text.endswith(":") and step is None else text)

    def int_leaf_more(self):
        """Slices of a, the record and tuple arguments, and device functions that take a
        function: (source, bound), or None when the program has no such operand."""
        r = self.r.random()
        if r < 0.35:
            self.features.add("slice")
            view = self.a_slice()
            e, _ = self.arg(self.int_expr, 1)
            c = self.r.randint(-3, 3)
            return "(%s[(%s) %% len(%s)] + %d)" % (view, e, view, c), self.a_bound + 3
        if r < 0.55 and self.nr:
            self.features.add("record")
            idx = self.arg(self.index_expr, "r")
            field = self.pick([".x", "['x']"])
            # an int32 field meets an int64 at once (see the narrow loads of a above)
            return "(r[%s]%s + %d)" % (idx, field, self.r.randint(-3, 3)), R_BOUND + 3
        if r < 0.7 and self.nr:
            self.features.add("tuplearg")
            return self.pick([("t[0]", R_BOUND), ("t[2]", R_BOUND), ("t[-1]", R_BOUND), ("len(t)", 3)])
        self.features.add("devfn")
        fn = self.pick(["fz_inc", "fz_neg"])
        x, bx = self.arg(self.int_expr, 1)
        x, bx = self.reduce_int(x, bx, VAR_BOUND)
        y, by = self.arg(self.int_expr, 1)
        y, by = self.reduce_int(y, by, VAR_BOUND)
        return self.reduce_int("fz_apply(%s, %s, %s)" % (fn, x, y), 3 * bx + 7 + by, WRAP_AT)

    def float_leaf_more(self):
        """float16 and bfloat16 arithmetic, the record and tuple arguments' floats, a device function
        that takes a function: (source, bound), or None."""
        r = self.r.random()
        if r < 0.15:
            # bfloat16: the same operations, float32's range (each one rounded once, both sides)
            self.features.add("bfloat16")
            x, _ = self.arg(self.float_expr, 1)
            y, _ = self.arg(self.float_expr, 1)
            x = "gpu.bfloat16(min(max(%s, -1000.0), 1000.0))" % x
            y = "gpu.bfloat16(min(max(%s, -1000.0), 1000.0))" % y
            op = self.pick(["+", "-", "*", "/", "abs", "cvt"])
            if op == "/":
                return "float(%s / (abs(%s) + gpu.bfloat16(1.0)))" % (x, y), 1000.0
            if op == "abs":
                return "float(abs(%s))" % x, 1000.0
            if op == "cvt":   # through float32 and an integer and back
                return "float(gpu.float32(%s) + gpu.bfloat16(gpu.int32(%s)))" % (x, y), 2000.0
            return "float(%s %s %s)" % (x, op, y), 1.0e6
        if r < 0.45:
            self.features.add("float16")
            # operands clamped so that no float16 result passes 200 * 200 < 65504
            x, _ = self.arg(self.float_expr, 1)
            y, _ = self.arg(self.float_expr, 1)
            x = "gpu.float16(min(max(%s, -200.0), 200.0))" % x
            y = "gpu.float16(min(max(%s, -200.0), 200.0))" % y
            op = self.pick(["+", "-", "*", "/", "abs"])
            if op == "/":
                return "float(%s / (abs(%s) + gpu.float16(1.0)))" % (x, y), 200.0
            if op == "abs":
                return "float(abs(%s))" % x, 200.0
            return "float(%s %s %s)" % (x, op, y), 40000.0
        if r < 0.65 and self.nr:
            self.features.add("record")
            return "r[%s]%s" % (self.arg(self.index_expr, "r"), self.pick([".y", "['y']"])), 64.0
        if r < 0.75 and self.nr:
            self.features.add("tuplearg")
            return "t[1]", 64.0
        self.features.add("devfn")
        x, bx = self.arg(self.float_expr, 1)
        x, bx = self.reduce_float(x, bx, FVAR_BOUND)
        return "fz_fapply(fz_fhalf, %s)" % x, bx * 0.5 + 1.25

    def index_expr(self, arr):
        """An in-range index into 1-D input `arr`: (e) % n is in [0, n) by floor semantics."""
        e, _ = self.int_expr(1)
        n = self.pick(["%s.size" % arr, "len(%s)" % arr, "%s.shape[0]" % arr])
        if self.chance(0.2):
            self.features.add("negindex")
            return "-1 - (%s) %% %s" % (e, n)
        return "(%s) %% %s" % (e, n)

    def int_expr(self, depth):
        if depth <= 0 or self.chance(0.25):
            return self.int_leaf()
        r = self.r.random()
        if r < 0.45:
            return self.int_binop(depth)
        if r < 0.55:
            op = self.pick(["-", "+", "~", "abs"])
            if op == "abs":
                e, b = self.arg(self.int_expr, depth - 1)
                return "abs(%s)" % e, b
            e, b = self.int_expr(depth - 1)
            return "(%s%s)" % (op, e), b + 1
        if r < 0.63:
            f = self.pick(["min", "max"])
            args = [self.arg(self.int_expr, depth - 1) for _ in range(self.r.randint(2, 3))]
            return "%s(%s)" % (f, ", ".join(a for a, _ in args)), max(b for _, b in args)
        if r < 0.70 and self.branchy_ok():
            self.features.add("ifexp")
            c = self.cond(depth - 1)
            x, bx = self.int_expr(depth - 1)
            y, by = self.int_expr(depth - 1)
            return "(%s if %s else %s)" % (x, c, y), max(bx, by)
        if r < 0.77:
            # narrow cast, combined with an int64 operand (promotes back to int64)
            self.features.add("cast")
            name = self.pick(list(NARROW))
            e, _ = self.arg(self.int_expr, depth - 1)
            o, bo = self.int_leaf()
            op = self.pick(["+", "-", "^", "|"])
            bound = NARROW[name] + bo + 1 if op in "+-" else max(NARROW[name], bo) * 2
            return "(gpu.%s(%s) %s %s)" % (name, e, op, o), bound
        if r < 0.81:
            self.features.add("cmp2int")
            return "int(bool(%s))" % self.arg(self.cond, depth - 1), 1
        if r < 0.85 and self.branchy_ok():
            self.features.add("andor")
            x, bx = self.int_expr(depth - 1)
            y, by = self.int_expr(depth - 1)
            return "(%s %s %s)" % (x, self.pick(["and", "or"]), y), max(bx, by)
        if r < 0.89:
            self.features.add("float2int")
            f, fb = self.arg(self.float_expr, depth - 1)
            fn = self.pick(["int", "math.floor", "math.ceil"])
            return "%s(%s)" % (fn, f), int(fb) + 1
        if r < 0.92:
            self.features.add("int64cast")
            e, b = self.arg(self.int_expr, depth - 1)
            return "gpu.int64(%s)" % e, b
        return self.int_binop(depth)

    def int_binop(self, depth):
        op = self.pick(INT_BINOPS)
        x, bx = self.int_expr(depth - 1)
        if op in ("//", "%"):
            if self.chance(0.3):
                c = self.pick([1, 2, 3, 7, 16, -1, -2, -5, 1000])
                y, by = ("(%d)" % c if c < 0 else str(c)), abs(c)
            else:
                y, by = self.int_expr(depth - 1)
                y = "((%s) | 1)" % y
                by += 1
            return "(%s %s %s)" % (x, op, y), (bx if op == "//" else by)
        if op in ("<<", ">>"):
            y, _ = self.int_expr(depth - 1)
            mask = 7 if op == "<<" else 15
            x, bx = self.reduce_int(x, bx, 1 << 40)
            return "(%s %s (%s & %d))" % (x, op, y, mask), (bx << 7 if op == "<<" else bx)
        if op == "**":
            k = self.pick([0, 1, 2, 3])
            x, bx = self.reduce_int(x, bx, 1 << 12)
            return "(%s ** %d)" % (x, k), max(1, bx ** k)
        y, by = self.int_expr(depth - 1)
        if op == "*":
            x, bx = self.reduce_int(x, bx, 1 << 30)
            y, by = self.reduce_int(y, by, 1 << 30)
            res = (bx * by)
        elif op in "+-":
            res = bx + by
        else:  # & | ^: two's complement, bound by the larger power of two
            res = 1 << max(bx, by, 1).bit_length()
        return self.reduce_int("(%s %s %s)" % (x, op, y), res, WRAP_AT)

    # -- float expressions ------------------------------------------------------------------------
    def float_leaf(self):
        if self.chance(0.05):
            leaf = self.float_leaf_more()
            if leaf:
                return leaf
        r = self.r.random()
        if r < 0.4 and self.floats:
            return self.pick(self.floats)
        if r < 0.6:
            self.features.add("load")
            if self.b_dtype == "float32":
                # float32 op float32 stays float32 in the kernel; float() makes it float64 first
                return "float(b[%s])" % self.arg(self.index_expr, "b"), 64.0
            return "b[%s]" % self.index_expr("b"), 64.0
        if r < 0.75:
            c = self.pick([0.0, 0.5, 1.0, -2.25, 3.0, 0.125, -0.75, 10.0, 1.5])
            return ("(%r)" % c if c < 0 else repr(c)), abs(c)
        if r < 0.9:
            e, b = self.arg(self.int_expr, 1)
            e, b = self.reduce_int(e, b, VAR_BOUND)
            return "float(%s)" % e, float(b)
        if self.tuples:
            name, types = self.pick(self.tuples)
            ks = [k for k, t in enumerate(types) if t[0] == "f"]
            if ks:
                k = self.pick(ks)
                return "%s[%d]" % (name, k), types[k][1]
        return "2.5", 2.5

    def float_expr(self, depth):
        if depth <= 0 or self.chance(0.25):
            return self.float_leaf()
        r = self.r.random()
        if r < 0.45:
            op = self.pick(FLOAT_BINOPS)
            if op == "**" and self.chance(0.5):
                x, bx = self.arg(self.float_expr, depth - 1)
                return "(abs(%s) ** 0.5)" % x, bx ** 0.5 + 1
            # products are wrapped in unfuse() below, so their operands are call arguments
            x, bx = (self.arg if op in ("*", "**") else lambda f, d: f(d))(self.float_expr, depth - 1)
            if op in ("/", "//", "%"):
                y, by = self.arg(self.float_expr, depth - 1)
                return "(%s %s (abs(%s) + 1.0))" % (x, op, y), (bx if op != "%" else by + 1.0)
            if op == "**":
                # x * x, not x ** 2: CPython's float ** calls libm pow(), which is not always
                # correctly rounded (found: pow(32311.686279296875, 2) is 1 ULP off x*x)
                x, bx = self.reduce_float(x, bx, 1e4)
                return unfuse("(%s * %s)" % (x, x)), bx * bx
            in_product = self.arg if op == "*" else lambda f, d: f(d)
            if self.chance(0.25):  # mixed int/float operand
                y, by = in_product(self.int_expr, depth - 1)
                y, by = self.reduce_int(y, by, VAR_BOUND)
            else:
                y, by = in_product(self.float_expr, depth - 1)
            if op == "*":
                x, bx = self.reduce_float(x, bx, 1e6)
                y, by = self.reduce_float(y, float(by), 1e6)
                return unfuse("(%s * %s)" % (x, y)), bx * by
            return self.reduce_float("(%s %s %s)" % (x, op, y), bx + by, FWRAP_AT)
        if r < 0.55:
            fn = self.pick(["-", "abs", "math.fabs", "math.sqrt", "+"])
            x, bx = (self.float_expr if fn in "-+" else lambda d: self.arg(self.float_expr, d))(depth - 1)
            if fn == "math.sqrt":
                return "math.sqrt(abs(%s))" % x, bx ** 0.5 + 1
            if fn in "-+":
                return "(%s%s)" % (fn, x), bx
            return "%s(%s)" % (fn, x), bx
        if r < 0.63:
            f = self.pick(["min", "max"])
            args = [self.arg(self.float_expr, depth - 1) for _ in range(self.r.randint(2, 3))]
            return "%s(%s)" % (f, ", ".join(a for a, _ in args)), max(b for _, b in args)
        if r < 0.70 and self.branchy_ok():
            self.features.add("ifexp")
            c = self.cond(depth - 1)
            x, bx = self.float_expr(depth - 1)
            y, by = self.float_expr(depth - 1)
            return "(%s if %s else %s)" % (x, c, y), max(bx, by)
        if r < 0.78:
            self.features.add("float32")
            x, bx = self.arg(self.float_expr, depth - 1)
            if self.chance(0.5):
                return "float(gpu.float32(%s))" % x, bx * 1.001
            y, by = self.arg(self.float_expr, depth - 1)
            op = self.pick(["+", "-", "*"])
            if op == "*":
                x, bx = self.reduce_float(x, bx, 1e6)
                y, by = self.reduce_float(y, by, 1e6)
            e = "float(gpu.float32(%s) %s gpu.float32(%s))" % (x, op, y)
            return (unfuse(e) if op == "*" else e), (bx * by if op == "*" else bx + by) * 1.001
        if r < 0.84:
            x, bx = self.arg(self.float_expr, depth - 1)
            y, _ = self.arg(self.float_expr, depth - 1)
            return "math.copysign(%s, %s)" % (x, y), bx
        if r < 0.90:
            x, bx = self.arg(self.float_expr, depth - 1)
            fn = self.pick(["math.floor", "math.ceil"])
            # math.floor gives an int in both CPython and the kernel: back to float
            return "float(%s(%s))" % (fn, x), bx + 1
        if r < 0.95:
            e, b = self.int_expr(depth - 1)
            e, b = self.reduce_int(e, b, VAR_BOUND)
            return "(%s / ((%s) | 1))" % (e, self.int_expr(depth - 1)[0]), float(b)
        return self.float_leaf()

    # -- conditions ---------------------------------------------------------------------------------
    def cond(self, depth):
        r = self.r.random()
        if depth <= 0 or r < 0.45:
            if self.chance(0.8 if self.int_only else 0.6):
                xs = [self.int_expr(max(depth - 1, 0))[0] for _ in range(3)]
            else:
                self.features.add("floatcmp")
                xs = [self.float_expr(max(depth - 1, 0))[0] for _ in range(3)]
            if self.chance(0.25) and self.branchy_ok():
                self.features.add("chaincmp")
                return "(%s %s %s %s %s)" % (xs[0], self.pick(CMPOPS), xs[1], self.pick(CMPOPS), xs[2])
            return "(%s %s %s)" % (xs[0], self.pick(CMPOPS), xs[1])
        if r < 0.6:
            return "(not %s)" % self.cond(depth - 1)
        if r < 0.8 and self.branchy_ok():
            return "(%s %s %s)" % (self.cond(depth - 1), self.pick(["and", "or"]), self.cond(depth - 1))
        if r < 0.9:
            return self.int_expr(depth - 1)[0]      # truthiness of an int
        return "bool(%s)" % self.arg(self.int_expr, depth - 1)[0]

    # -- statements ---------------------------------------------------------------------------------
    def assign_int(self, name):
        e, b = self.int_expr(self.r.randint(1, 3))
        e, _ = self.reduce_int(e, b, VAR_BOUND)
        self.emit("%s = %s" % (name, e))

    def assign_float(self, name):
        e, b = self.float_expr(self.r.randint(1, 3))
        e, _ = self.reduce_float(e, b, FVAR_BOUND)
        self.emit("%s = %s" % (name, e))

    def stmt(self, depth, in_loop):
        r = self.r.random()
        if depth <= 0:
            r = r * 0.5  # simple statements only
        if r < 0.18 and self.int_names:
            self.assign_int(self.pick(self.int_names))
        elif r < 0.28 and self.float_names:
            self.assign_float(self.pick(self.float_names))
        elif r < 0.38 and self.int_names:
            self.features.add("augassign")
            v = self.pick(self.int_names)
            op = self.pick(["+=", "-=", "*=", "//=", "%=", "&=", "|=", "^=", "<<=", ">>="])
            e, b = self.int_expr(self.r.randint(1, 2))
            if op in ("//=", "%="):
                e = "((%s) | 1)" % e
            elif op in ("<<=", ">>="):
                e = "((%s) & %d)" % (e, 7 if op == "<<=" else 15)
            elif op == "*=":
                e, b = self.reduce_int(e, b, VAR_BOUND)
            self.emit("%s %s %s" % (v, op, e))
            if op in ("+=", "-=", "*=", "<<=", "|=", "^="):
                self.emit("%s %%= %d" % (v, BIG_P) if self.chance(0.6) else "%s &= 0xFFFFF" % v)
        elif r < 0.44 and self.float_names:
            self.features.add("augassign")
            v = self.pick(self.float_names)
            op = self.pick(["+=", "-=", "*=", "/="])
            e, b = (self.arg if op == "/=" else lambda f, d: f(d))(self.float_expr, 1)
            e, _ = self.reduce_float(e, b, FVAR_BOUND)
            if op == "/=":
                e = "(abs(%s) + 1.0)" % e
            self.emit("%s %s %s" % (v, op, e))
            self.emit("%s = min(max(%s, -%r), %r)" % (v, v, FVAR_BOUND, FVAR_BOUND))
        elif r < 0.50:
            self.tuple_stmt()
        elif r < 0.54:
            self.store_stmt()
        elif r < 0.58 and self.local_arr:
            self.local_stmt()
        elif r < 0.72:
            self.if_stmt(depth, in_loop)
        elif r < 0.82:
            self.for_stmt(depth)
        elif r < 0.88:
            self.while_stmt(depth)
        elif r < 0.94 and in_loop:
            self.features.add("breakcont")
            self.emit("if %s:" % self.cond(1))
            self.indent += 1
            if self.chance(0.3):
                self.stmt(0, in_loop)
            self.emit(self.pick(["break", "continue"]))
            self.indent -= 1
        elif r < 0.97 and self.allow_return:
            self.features.add("return")
            self.emit("if %s:" % self.cond(1))
            self.indent += 1
            if self.chance(0.5):
                self.store_stmt()
            self.emit("return")
            self.indent -= 1
        else:
            if self.int_names:
                self.assign_int(self.pick(self.int_names))

    def block(self, depth, in_loop, n=None):
        n = n or self.r.randint(1, 3)
        start = len(self.lines)
        for _ in range(n):
            self.stmt(depth, in_loop)
        if len(self.lines) == start:
            self.emit("pass")

    def tuple_stmt(self):
        self.features.add("tuple")
        r = self.r.random()
        if r < 0.4 and len(self.int_names) >= 2:
            x, y = self.r.sample(self.int_names, 2)
            self.emit("%s, %s = %s, %s" % (x, y, y, x))        # swap
        elif r < 0.7 and self.int_names and self.float_names:
            x = self.pick(self.int_names)
            f = self.pick(self.float_names)
            e, b = self.int_expr(2)
            e, _ = self.reduce_int(e, b, VAR_BOUND)
            g, gb = self.float_expr(2)
            g, _ = self.reduce_float(g, gb, FVAR_BOUND)
            self.emit("%s, %s = %s, %s" % (x, f, e, g))
        elif self.int_names:
            # a tuple temporary, used immediately (it may not exist on other paths)
            t = self.fresh("t")
            e, b = self.int_expr(2)
            e, b = self.reduce_int(e, b, VAR_BOUND)
            if self.int_only or self.chance(0.5):
                g, gb = self.int_expr(1)
                g, gb = self.reduce_int(g, gb, VAR_BOUND)
                types = [("i", b), ("i", gb)]
            else:
                g, gb = self.float_expr(1)
                g, gb = self.reduce_float(g, gb, FVAR_BOUND)
                types = [("i", b), ("f", gb)]
            self.emit("%s = (%s, %s)" % (t, e, g))
            self.tuples.append((t, types))
            x = self.pick(self.int_names)
            if types[1][0] == "i" and self.chance(0.5):
                y = self.pick(self.int_names)
                self.emit("%s, %s = %s" % (x, y, t))
            else:
                e2, b2 = self.int_expr(2)
                e2, _ = self.reduce_int(e2, b2 + b, VAR_BOUND)
                self.emit("%s = %s" % (x, self.reduce_int("(%s[0] + %s)" % (t, e2), b + b2, VAR_BOUND)[0]))
            self.tuples.pop()

    def store_stmt(self):
        col = self.r.randrange(self.ncols)
        self.store_col(col)

    def store_col(self, col):
        if col in self.float_cols:
            e, b = self.float_expr(2)
        else:
            e, b = self.int_expr(2)
            if self.out_dtype == "float64":
                e, b = self.reduce_int(e, b, VAR_BOUND)   # exactly representable
        self.emit("out[i, %d] = %s" % (col, e))

    def local_stmt(self):
        self.features.add("local")
        name, n = self.local_arr
        if self.chance(0.5):
            e, b = self.int_expr(2)
            e, _ = self.reduce_int(e, b, VAR_BOUND)
            self.emit("%s[(%s) %% %d] = %s" % (name, self.int_expr(1)[0], n, e))
        else:
            v = self.pick(self.int_names)
            self.emit("%s = (%s + %s[(%s) %% %d]) %% %d" % (v, v, name, self.int_expr(1)[0], n, BIG_P))

    def if_stmt(self, depth, in_loop):
        self.features.add("if")
        self.emit("if %s:" % self.cond(2))
        self.indent += 1
        self.block(depth - 1, in_loop)
        self.indent -= 1
        for _ in range(self.r.choice([0, 0, 1, 2])):
            self.emit("elif %s:" % self.cond(2))
            self.indent += 1
            self.block(depth - 1, in_loop)
            self.indent -= 1
        if self.chance(0.5):
            self.emit("else:")
            self.indent += 1
            self.block(depth - 1, in_loop)
            self.indent -= 1

    def small(self, lo, hi):
        """A small int expression in [lo, hi)."""
        e, _ = self.arg(self.int_expr, 1)     # inside range(...)
        if lo == 0:
            return "(%s) %% %d" % (e, hi)
        return "(%s) %% %d + %d" % (e, hi - lo, lo)

    def for_stmt(self, depth):
        self.features.add("for")
        j = self.fresh("j")
        form = self.r.randrange(5)
        if form == 0:
            rng, bound = "range(%s)" % self.small(0, 6), 6
        elif form == 1:
            rng, bound = "range(%s, %s)" % (self.small(-3, 3), self.small(0, 6)), 6
        elif form == 2:
            step = self.pick([1, 2, 3, -1, -2])
            if step > 0:
                rng = "range(%s, %s, %d)" % (self.small(-4, 2), self.small(0, 8), step)
            else:
                rng = "range(%s, %s, %d)" % (self.small(0, 8), self.small(-4, 2), step)
            bound = 8
        elif form == 3:
            self.features.add("negstep")
            rng, bound = "range(%s, -1, -1)" % self.small(0, 6), 6
        else:
            rng, bound = "range(%d)" % self.r.randint(0, 5), 5
        self.emit("for %s in %s:" % (j, rng))
        self.indent += 1
        self.loop_ints.append((j, bound))
        self.block(depth - 1, True)
        self.loop_ints.pop()
        self.indent -= 1
        if self.chance(0.15):
            self.features.add("forelse")
            self.emit("else:")
            self.indent += 1
            self.block(0, False, 1)
            self.indent -= 1

    def while_stmt(self, depth):
        self.features.add("while")
        w = self.fresh("w")
        self.emit("%s = 0" % w)
        limit = self.small(0, 6)
        if self.chance(0.4):
            self.emit("while %s < %s and %s:" % (w, limit, self.cond(1)))
        else:
            self.emit("while %s < %s:" % (w, limit))
        self.indent += 1
        self.emit("%s += 1" % w)        # first, so that `continue` cannot skip it
        self.loop_ints.append((w, 6))
        self.block(depth - 1, True)
        self.loop_ints.pop()
        self.indent -= 1

    # -- the whole program ----------------------------------------------------------------------------
    def program(self):
        r = self.r
        self.threads = r.choice([32, 32, 64])
        self.blocks = r.choice([1, 1, 2])
        self.nthreads = self.threads * self.blocks
        self.int_only = r.random() < 0.35
        self.out_dtype = "int64" if self.int_only else r.choice(["float64", "int64"])
        self.ncols = r.randint(2, 5)
        if self.int_only or self.out_dtype == "int64":
            self.float_cols = []
        else:
            self.float_cols = sorted(r.sample(range(self.ncols), r.randint(1, self.ncols)))
        self.a_dtype = r.choice(["int64"] * 4 + ["int32", "int16", "int8", "uint8", "uint16", "uint32"])
        info_max = {"int64": 1 << 31, "int32": (1 << 31) - 1, "int16": (1 << 15) - 1, "int8": 127, "uint8": 255,
                    "uint16": 65535, "uint32": (1 << 32) - 1}[self.a_dtype]
        self.a_bound = min(r.choice([100, 1000, 1 << 20, 1 << 31]), info_max)
        self.b_dtype = r.choice(["float64"] * 3 + ["float32"])
        self.na = r.randint(1, 17)
        self.nr = r.randint(1, 9) if r.random() < 0.3 else 0
        self.barrier = r.random() < 0.15
        self.allow_return = not self.barrier
        self.ints, self.floats, self.loop_ints, self.tuples = [], [], [], []
        self.int_names = ["x%d" % k for k in range(r.randint(1, 4))]
        self.float_names = [] if self.int_only else ["f%d" % k for k in range(r.randint(1, 3))]
        self.local_arr = None

        self.emit("i = gpu.grid(1)")
        if self.barrier:
            self.emit("tid = gpu.threadIdx.x")
            sh_dtype = "int64" if (self.int_only or r.random() < 0.6) else "float64"
            self.emit("sh = gpu.shared.array(%d, gpu.%s)" % (self.threads, sh_dtype))
        for name in self.int_names:
            self.assign_int(name)
            self.ints.append((name, VAR_BOUND))
        for name in self.float_names:
            self.assign_float(name)
            self.floats.append((name, FVAR_BOUND))
        if r.random() < 0.2:
            self.local_arr = ("la", r.choice([2, 4, 5]))
            self.emit("la = gpu.local.array(%d, gpu.int64)" % self.local_arr[1])
            self.emit("for q in range(%d):" % self.local_arr[1])
            self.emit("    la[q] = q * %s" % self.pick(self.int_names))

        self.block(3, False, r.randint(2, 6))
        if self.barrier:
            self.features.add("barrier")
            if sh_dtype == "int64":
                e, b = self.int_expr(2)
                e, _ = self.reduce_int(e, b, VAR_BOUND)
            else:
                e, b = self.float_expr(2)
                e, _ = self.reduce_float(e, b, FVAR_BOUND)
            self.emit("sh[tid] = %s" % e)
            self.emit("gpu.syncthreads()")
            v = self.pick(self.int_names if sh_dtype == "int64" else self.float_names)
            k = self.r.randint(1, self.threads - 1)
            if sh_dtype == "int64":
                self.emit("%s = (%s + sh[(tid + %d) %% %d] + sh[(%s) %% %d]) %% %d"
                          % (v, v, k, self.threads, self.int_expr(1)[0], self.threads, BIG_P))
            else:
                self.emit("%s = min(max(%s + sh[(tid + %d) %% %d], -%r), %r)"
                          % (v, v, k, self.threads, FVAR_BOUND, FVAR_BOUND))
            self.allow_return = True
            self.block(2, False, r.randint(1, 3))
        for col in range(self.ncols):
            if col in self.float_cols and self.float_names and r.random() < 0.7:
                self.emit("out[i, %d] = %s" % (col, self.pick(self.float_names)))
            elif col not in self.float_cols and r.random() < 0.7:
                self.emit("out[i, %d] = %s" % (col, self.pick(self.int_names)))
            else:
                self.store_col(col)
        if "checked" in self.features:
            self.lines.insert(0, "    " + CHECKED_MARK)
        params = "out, a, b, r, t" if self.nr else "out, a, b"
        src = "def kern(%s):\n" % params + "\n".join(self.lines) + "\n"
        if "devfn" in self.features:
            src += "\n" + FZ_HELPERS
        return Program(seed=self.seed, source=src, blocks=self.blocks, threads=self.threads, ncols=self.ncols,
                       out_dtype=self.out_dtype, float_cols=self.float_cols, na=self.na,
                       nb=r.randint(1, 17), a_bound=self.a_bound, a_stride=r.choice([1, 1, 1, 2, 3]),
                       a_dtype=self.a_dtype, b_dtype=self.b_dtype,
                       barrier=self.barrier, features=self.features, nr=self.nr)


def generate(seed, branchy_calls=True):
    """The program for one seed (deterministic). branchy_calls=False keeps branching
    expressions out of call arguments (gpujit rejected them before 0e1aca6)."""
    return _Gen(seed, branchy_calls).program()


if __name__ == "__main__":
    import sys
    print(generate(sys.argv[1] if len(sys.argv) > 1 else "0-0").source)
