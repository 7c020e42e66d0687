"""Diagnostics: every unsupported construct or type error raises a gpujit
exception (never crashes the interpreter) whose message starts with
FILE:LINE of the offending line -- marked `# <-` in each kernel below -- and
shows that source line; .filename and .lineno say the same."""
import inspect
import math

import numpy as np
import pytest

import gpujit as gpu

SIG = "void(float64[::1], int64)"
A_LIST = [1, 2, 3]
AN_OBJECT = object()
A_STRING = "hello"
COUNT = 0


class Thing:
    x = 3


def marked_line(fn):
    """The absolute line number of the line marked `# <-` in fn's source."""
    lines, start = inspect.getsourcelines(fn)
    hits = [start + k for k, line in enumerate(lines) if line.rstrip().endswith("# <-")]
    assert len(hits) == 1, "mark exactly one line of %s with '# <-'" % fn.__name__
    return hits[0]


def check(fn, exc, *, sig=SIG, contains=None, launch_args=None):
    """Compile fn (for the GPU via compile_ptx, and for the CPU target by launching it when
    launch_args are given) and check the error: type, FILE:LINE prefix, source line shown."""
    filename = fn.__code__.co_filename
    line = marked_line(fn)
    attempts = [lambda: gpu.compile_ptx(fn, sig)]
    if launch_args is not None:
        attempts.append(lambda: gpu.jit(fn)[1, 1](*launch_args))
    for attempt in attempts:
        with pytest.raises(exc) as ei:
            attempt()
        e = ei.value
        msg = str(e)
        assert isinstance(e, gpu.CompileError)
        assert msg.startswith("%s:%d:" % (filename, line)), msg
        source = inspect.getsourcelines(fn)[0][line - fn.__code__.co_firstlineno].strip()
        assert source in msg, msg
        assert e.filename == filename and e.lineno == line
        assert "internal" not in msg.lower(), msg
        if contains:
            assert contains.lower() in msg.lower(), msg
    return msg


# -- unsupported constructs ---------------------------------------------------------------------------
def k_try(out, n):
    try:  # <-
        out[0] = 1
    except Exception:
        out[0] = 2


def k_with(out, n):
    with A_STRING:  # <-
        out[0] = 1


def k_list(out, n):
    xs = [1, 2, n]  # <-
    out[0] = xs[0]


def k_dict(out, n):
    d = {"a": n}  # <-
    out[0] = 1


def k_set(out, n):
    s = {n, 2}  # <-
    out[0] = 1


def k_listcomp(out, n):
    xs = [i * 2 for i in range(n)]  # <-
    out[0] = 1


def k_genexp(out, n):
    out[0] = sum(i for i in range(n))  # <-


def k_lambda(out, n):
    f = lambda v: v + n  # <-
    out[0] = f(n)


def k_nested_def(out, n):
    def helper(v):  # <-
        return v + n
    out[0] = helper(n)


def k_yield(out, n):
    yield n  # <-


def k_string_op(out, n):
    s = "ab" + "c" * n  # <-
    out[0] = 1


def k_string_global(out, n):
    out[0] = len(A_STRING)  # <-


def k_raise(out, n):  # an exception raised in a kernel takes constant arguments
    if n > 0:
        raise ValueError(n)  # <-
    out[0] = 1


def k_assert(out, n):
    assert n > 0  # <-
    out[0] = 1


def k_global_assign(out, n):
    global COUNT
    COUNT = n  # <-
    out[0] = 1


def k_attr_assign(out, n):
    out.shape = n  # <-


def k_del(out, n):
    x = n
    del x  # <-
    out[0] = 1


def k_import(out, n):
    import os  # <-
    out[0] = 1


def k_fstring(out, n):
    s = f"{n}"  # <-
    out[0] = 1


def k_slice(out, n):
    v = out[1:n:0]  # <-
    v[0] = 1


def k_in(out, n):
    if n in (1, 2, 3):  # <-
        out[0] = 1


def k_matmul_op(out, n):
    out[0] = n @ n  # <-


def k_for_over_int(out, n):
    for v in n:  # <-
        out[0] = v


@pytest.mark.parametrize("fn,contains", [
    (k_try, "try"), (k_with, "with"), (k_list, "list"), (k_dict, "dict"), (k_set, "set"),
    (k_listcomp, "comprehension"), (k_genexp, None), (k_lambda, "non-constant value"), (k_nested_def, "non-constant value"),
    (k_string_op, None), (k_raise, "raise"), (k_assert, "assert"), (k_global_assign, "global"),
    (k_attr_assign, None), (k_del, "del"), (k_import, "import"), (k_fstring, None), (k_slice, "slice"),
    (k_in, None), (k_matmul_op, None), (k_for_over_int, "iteration over int64"),
], ids=lambda v: v.__name__ if callable(v) else "")
def test_unsupported_construct(fn, contains):
    check(fn, (gpu.UnsupportedError, gpu.TypingError), contains=contains,
          launch_args=(np.zeros(4), 3))


def test_unsupported_construct_types():
    # the clear-cut cases have a definite exception class
    for fn in (k_try, k_with, k_list, k_dict, k_set, k_listcomp, k_global_assign):
        check(fn, gpu.UnsupportedError)


def test_generator_kernel():
    # a generator's code is flagged before any bytecode: its error points at the def or the yield
    with pytest.raises(gpu.UnsupportedError) as ei:
        gpu.compile_ptx(k_yield, SIG)
    msg = str(ei.value)
    assert msg.startswith(k_yield.__code__.co_filename + ":")
    assert ei.value.lineno in (k_yield.__code__.co_firstlineno, marked_line(k_yield))


def k_star_args(out, *rest):
    out[0] = 1


def k_kwonly(out, *, n=1):
    out[0] = n


def k_kwargs(out, **kw):
    out[0] = 1


@pytest.mark.parametrize("fn", [k_star_args, k_kwonly, k_kwargs], ids=lambda f: f.__name__)
def test_unsupported_signatures(fn):
    with pytest.raises((gpu.UnsupportedError, TypeError)) as ei:
        gpu.compile_ptx(fn, "void(float64[::1])")
    if isinstance(ei.value, gpu.CompileError):
        assert str(ei.value).startswith("%s:%d:" % (fn.__code__.co_filename, fn.__code__.co_firstlineno))
        assert ei.value.lineno == fn.__code__.co_firstlineno


# -- names, globals, calls ------------------------------------------------------------------------------
def k_undefined(out, n):
    out[0] = no_such_name + 1  # noqa: F821  # <-


def k_unbound_local(out, n):
    if n > 0:
        y = 1
    out[0] = y  # <-


def k_global_list(out, n):
    out[0] = A_LIST[0]  # <-


def k_global_object(out, n):
    out[0] = AN_OBJECT  # <-


def k_class_attr(out, n):
    out[0] = Thing.x  # <-


def k_unsupported_function(out, n):
    out[0] = math.lgamma(n) + np.cumsum(out)  # <-


def k_print(out, n):
    print(out)  # arrays cannot be printed # <-


def k_bad_intrinsic_args(out, n):
    i = gpu.grid(4)  # <-
    out[0] = i


def k_grid_nonconst(out, n):
    i = gpu.grid(n)  # <-
    out[0] = i


def k_method_call(out, n):
    out[0] = out.cumsum()  # <-


def k_unknown_attr(out, n):
    out[0] = out.itemsize_xyz  # <-


def k_unknown_math(out, n):
    out[0] = math.no_such_fn(n)  # <-


@pytest.mark.parametrize("fn", [k_undefined, k_global_list, k_global_object, k_class_attr,
                                k_unsupported_function, k_print, k_bad_intrinsic_args,
                                k_grid_nonconst, k_method_call, k_unknown_attr, k_unknown_math],
                         ids=lambda f: f.__name__)
def test_names_and_calls(fn):
    check(fn, (gpu.TypingError, gpu.UnsupportedError), launch_args=(np.zeros(4), 3))


def test_undefined_name_message():
    assert "no_such_name" in check(k_undefined, (gpu.TypingError, gpu.UnsupportedError))


def test_possibly_unbound_local():
    # numba types this and leaves the value undefined; we either do the same or say where
    try:
        gpu.compile_ptx(k_unbound_local, SIG)
    except gpu.CompileError:
        check(k_unbound_local, (gpu.TypingError, gpu.UnsupportedError))


# -- types ------------------------------------------------------------------------------------------
def k_type_conflict(out, n):
    x = 1
    if n > 0:
        x = out  # <-
    out[0] = x


def k_return_value(out, n):
    out[0] = 1
    return n  # <-


def k_too_many_indices(out, n):
    out[0, 1] = 2  # <-


def k_too_many_indices(out2, n):
    out2[0, 0, 0] = 2  # <-


def k_float_index(out, n):
    out[1.5] = 2  # <-


def k_shared_nonconst(out, n):
    s = gpu.shared.array(n, gpu.float32)  # <-
    out[0] = s[0]


def k_shared_bad_dtype(out, n):
    s = gpu.shared.array(4, A_STRING)  # <-
    out[0] = s[0]


def k_local_nonconst(out, n):
    s = gpu.local.array((n, 2), gpu.int32)  # <-
    out[0] = s[0, 0]


def k_atomic_bad_type(out8, n):
    gpu.atomic.add(out8, 0, 1)  # <-


def k_bitop_float(out, n):
    out[0] = out[0] & n  # <-


def k_array_arith(out, n):
    out[0] = (out + 1)[0]  # <-


def k_store_array_into_element(out, n):
    out[0] = out  # <-


def k_call_array(out, n):
    out[0] = out(1)  # <-


def k_unpack_mismatch(out, n):
    a, b = gpu.grid(3)  # <-
    out[0] = a


def k_tuple_index_oob(out, n):
    t = (1, 2)
    out[0] = t[5]  # <-


def k_ternary_conflict(out, n):
    out[0] = 1 if n > 0 else out  # <-


def k_starred(out, n):
    a, *b = (1, 2, 3)  # <-
    out[0] = a


def k_shared_too_big(out, n):
    s = gpu.shared.array(8192, gpu.float32)
    t = gpu.shared.array((64, 65), gpu.float32)  # <-
    out[0] = s[0] + t[0, 0]


def k_shared_max(out, n):
    s = gpu.shared.array(8192, gpu.float32)
    t = gpu.shared.array((64, 64), gpu.float32)
    s[n] = 1
    t[n, n] = 2
    gpu.syncthreads()
    out[0] = s[0] + t[0, 0]


def test_conditional_expression_type_conflict():
    msg = check(k_ternary_conflict, gpu.TypingError, launch_args=(np.zeros(4), 3))
    assert "$" not in msg  # (3.12 stores in each arm, so the store itself reports it)


def test_starred_assignment():
    check(k_starred, gpu.UnsupportedError, contains="starred")


def test_static_shared_memory_limit():
    check(k_shared_too_big, gpu.TypingError, contains="48 KiB")
    ptx, _ = gpu.compile_ptx(k_shared_max, SIG)  # exactly 48 KiB is fine
    assert ".shared" in ptx


@pytest.mark.parametrize("fn,sig", [
    (k_type_conflict, SIG),
    (k_return_value, SIG),
    (k_too_many_indices, SIG),
    (k_too_many_indices, "void(float64[:, ::1], int64)"),
    (k_float_index, SIG),
    (k_shared_nonconst, SIG),
    (k_shared_bad_dtype, SIG),
    (k_local_nonconst, SIG),
    (k_atomic_bad_type, "void(int8[::1], int64)"),
    (k_bitop_float, SIG),
    (k_array_arith, SIG),
    (k_store_array_into_element, SIG),
    (k_call_array, SIG),
    (k_unpack_mismatch, SIG),
    (k_tuple_index_oob, SIG),
], ids=lambda v: v.__name__ if callable(v) else "")
def test_type_errors(fn, sig):
    check(fn, (gpu.TypingError, gpu.UnsupportedError), sig=sig)


def test_type_conflict_is_typing_error():
    msg = check(k_type_conflict, gpu.TypingError, launch_args=(np.zeros(4), 3))
    assert "int64" in msg and "float64[::1]" in msg


def test_return_value_is_typing_error():
    check(k_return_value, gpu.TypingError, launch_args=(np.zeros(4), 3))


def test_wrong_index_count_is_typing_error():
    msg = check(k_too_many_indices, gpu.TypingError, sig="void(float64[:, ::1], int64)",
                launch_args=(np.zeros((2, 2)), 3))
    assert "too many indices" in msg and "2-dimensional" in msg


# -- bad signatures and launches ------------------------------------------------------------------
def plain(out, n):
    out[0] = n


@pytest.mark.parametrize("sig", [
    "void(float64[::1])",               # too few
    "void(float64[::1], int64, int64)",  # too many
    "void(float65[::1], int64)",         # unknown type
    "void(float64[::1, int64)",          # unbalanced
    "float64[::1], int64",               # no parentheses
    "",
    "void(complex128, int64)",
])
def test_bad_signature_strings(sig):
    with pytest.raises((TypeError, gpu.CompileError)) as ei:
        gpu.compile_ptx(plain, sig)
    assert not isinstance(ei.value, gpu.InternalCompilerError)


def test_non_string_signature():
    with pytest.raises(TypeError):
        gpu.compile_ptx(plain, 42)
    with pytest.raises(TypeError):
        gpu.jit([42])(plain)


def test_launch_with_bad_arguments():
    k = gpu.jit(plain)
    with pytest.raises(TypeError):
        k[1, 1](np.zeros(2))               # missing argument
    with pytest.raises(TypeError):
        k[1, 1](np.zeros(2), 1, 2)         # extra argument
    with pytest.raises(TypeError):
        k[1, 1](np.zeros(2), "a string")   # unsupported argument type
    with pytest.raises(TypeError):
        k[1, 1]([1.0, 2.0], 1)             # a list, not an array
    with pytest.raises(TypeError):
        k[1, 1](np.zeros(2, np.longdouble), 1)  # an unsupported dtype


def test_eager_signature_mismatch():
    k = gpu.jit("void(float64[::1], int64)")(plain)
    with pytest.raises(TypeError):
        k[1, 1](np.zeros((2, 2)), 1)


def test_unknown_jit_option():
    with pytest.raises(TypeError):
        gpu.jit(plain, no_such_option=True)


def test_jit_of_non_function():
    with pytest.raises(TypeError):
        gpu.jit("void(int64)")(42)


def test_errors_are_repeatable_and_do_not_poison_the_dispatcher():
    k = gpu.jit(k_type_conflict)
    for _ in range(3):
        with pytest.raises(gpu.TypingError):
            k[1, 1](np.zeros(4), 3)
    good = gpu.jit(plain)
    out = np.zeros(2)
    good[1, 1](out, 5)
    assert out[0] == 5


def test_exception_hierarchy():
    assert issubclass(gpu.TypingError, gpu.CompileError)
    assert issubclass(gpu.UnsupportedError, gpu.CompileError)
    assert issubclass(gpu.CompileError, Exception)


def test_nonconstant_grid_is_require_literal_value():
    # numba's TypingError subclass for an argument that must be a compile-time constant
    for fn in (k_grid_nonconst, k_gridsize_nonconst):
        msg = check(fn, gpu.errors.RequireLiteralValue, launch_args=(np.zeros(4), 3))
        assert "RequireLiteralValue" in msg and "int64" in msg
    assert issubclass(gpu.errors.RequireLiteralValue, gpu.TypingError)
    # a constant out of range is a plain TypingError
    with pytest.raises(gpu.TypingError) as ei:
        gpu.compile_ptx(k_bad_intrinsic_args, SIG)
    assert not isinstance(ei.value, gpu.errors.RequireLiteralValue)


def k_gridsize_nonconst(out, n):
    i = gpu.gridsize(n)  # <-
    out[0] = i


def k_maybe_unassigned(out, n):
    if n > 0:
        c = 2.5
    out[0] = c  # <-


def test_uninitialized_variable_warning(monkeypatch):
    import warnings
    monkeypatch.setattr(gpu.config, "ALWAYS_WARN_UNINIT_VAR", 1)
    with pytest.warns(gpu.errors.NumbaWarning, match="Detected uninitialized variable c") as rec:
        gpu.compile_ptx(k_maybe_unassigned, SIG)
    w = [r for r in rec if "uninitialized" in str(r.message)]
    assert len(w) == 1 and w[0].lineno == marked_line(k_maybe_unassigned)
    assert w[0].filename == k_maybe_unassigned.__code__.co_filename
    monkeypatch.setattr(gpu.config, "ALWAYS_WARN_UNINIT_VAR", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gpu.compile_ptx(k_maybe_unassigned, SIG)
    # every path assigns: no warning even when asked
    monkeypatch.setattr(gpu.config, "ALWAYS_WARN_UNINIT_VAR", 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gpu.compile_ptx(k_type_conflict_free, SIG)


def k_type_conflict_free(out, n):
    if n > 0:
        c = 1.0
    else:
        c = 2.0
    for i in range(n):
        c += out[i]
    out[0] = c


def test_performance_warning_is_numbas_class():
    from gpujit import errors
    assert gpu.PerformanceWarning is errors.NumbaPerformanceWarning
    assert "PerformanceWarning" in errors.__all__
    assert issubclass(gpu.PerformanceWarning, errors.NumbaWarning)
    with pytest.warns(gpu.PerformanceWarning, match="slow"):
        import warnings
        warnings.warn(errors.NumbaPerformanceWarning("slow"))


# -- a Python debugger in a kernel (numba's simulator stops there; gpujit compiles kernels) ----------
import pdb  # noqa: E402
from pdb import set_trace as pdb_set_trace  # noqa: E402

DEBUGGER = "the Python debugger cannot stop inside a kernel"


def k_debug_import(out, n):
    i = gpu.grid(1)
    if i == 0:
        from pdb import set_trace; set_trace()  # <-
    if i < n:
        out[i] = 2.0 * out[i]


def k_debug_breakpoint(out, n):
    i = gpu.grid(1)
    if i == 0:
        breakpoint()  # <-
    if i < n:
        out[i] = 2.0 * out[i]


def k_debug_module(out, n):
    i = gpu.grid(1)
    if i == 0:
        pdb.set_trace()  # <-
    if i < n:
        out[i] = 2.0 * out[i]


def k_debug_global(out, n):
    i = gpu.grid(1)
    if i == 0:
        pdb_set_trace()  # <-
    if i < n:
        out[i] = 2.0 * out[i]


def k_debug_free(out, n):
    i = gpu.grid(1)
    if i < n:
        out[i] = 2.0 * out[i]


@pytest.mark.parametrize("fn", [k_debug_import, k_debug_breakpoint, k_debug_module, k_debug_global])
def test_debugger_in_kernel_says_why(fn):
    """pdb.set_trace()/breakpoint() in a kernel: the error names the line and says the debugger
    cannot stop in a compiled kernel (not "import statements", nor a line inside pdb.py)."""
    x = np.random.default_rng(3).standard_normal(100)
    msg = check(fn, gpu.UnsupportedError, contains=DEBUGGER, launch_args=(x.copy(), x.size))
    assert "pdb.py" not in msg and "print()" in msg, msg
    # the same kernel without the debugger line runs
    out = x.copy()
    gpu.jit(k_debug_free)[4, 32](out, out.size)
    assert np.array_equal(out, 2.0 * x)


# -- NumPy functions kernels lack: the message says so (and, for an allocator, what to use) ---------
ALLOCATE = "kernels cannot allocate arrays; use local.array(shape, dtype)"


def k_np_zeros(out, n):
    b = np.zeros(4)  # <-
    out[0] = b[0]


def k_np_zeros_dtype(out, n):
    b = np.zeros(4, dtype=np.float64)  # <-
    out[0] = b[0]


def k_np_empty_tuple(out, n):
    b = np.empty((4,))  # <-
    out[0] = b[0]


def k_np_ones_like(out, n):
    b = np.ones_like(out)  # <-
    out[0] = b[0]


def k_np_dot(out, n):
    out[0] = np.dot(out, out)  # <-


def k_np_norm(out, n):
    out[0] = np.linalg.norm(out)  # <-


@pytest.mark.parametrize("fn, name, hint", [
    (k_np_zeros, "numpy.zeros", ALLOCATE), (k_np_zeros_dtype, "numpy.zeros", ALLOCATE),
    (k_np_empty_tuple, "numpy.empty", ALLOCATE), (k_np_ones_like, "numpy.ones_like", ALLOCATE),
    (k_np_dot, "numpy.dot", "docs/language.md"), (k_np_norm, "numpy.linalg.norm", "docs/language.md")])
def test_numpy_function_kernels_lack(fn, name, hint):
    """Not "numpy.zeros() does not take (int64)" nor "has type '_ArrayFunctionDispatcher'"."""
    x = np.random.default_rng(1).standard_normal(8)
    msg = check(fn, gpu.UnsupportedError, contains="%s is not supported in kernels" % name,
                launch_args=(x.copy(), x.size))
    assert hint in msg and "does not take" not in msg and "has type" not in msg, msg


def k_local_instead(out, n):
    i = gpu.grid(1)
    b = gpu.local.array(4, np.float64)
    for j in range(4):
        b[j] = out[i] * (j + 1)
    out[i] = b[0] + b[1] + b[2] + b[3]


def test_local_array_is_the_way():
    """The advice works: a per-thread local.array where np.zeros was meant; and NumPy's
    ufuncs and array methods kernels do have still compile."""
    x = np.random.default_rng(2).standard_normal(64)
    out = x.copy()
    gpu.jit(k_local_instead)[2, 32](out, out.size)
    assert np.allclose(out, 10.0 * x)

    @gpu.jit
    def uses_numpy(out, a):
        i = gpu.grid(1)
        if i < a.size:
            out[i] = np.sqrt(np.abs(a[i])) + np.sum(a) * 0.0
    a = np.random.default_rng(4).standard_normal(40)
    o = np.zeros_like(a)
    uses_numpy[2, 32](o, a)
    assert np.allclose(o, np.sqrt(np.abs(a)))


# -- formatted strings in print(): the message says how to print the values ---------------------
PRINT_ADVICE = "print the values as separate arguments instead"


def k_print_fstring(out, n):
    i = gpu.grid(1)
    print(f"i = {i}")  # <-


def k_print_percent(out, n):
    i = gpu.grid(1)
    print("i = %d" % i)  # <-


def k_print_format(out, n):
    i = gpu.grid(1)
    print("i = {}".format(i))  # <-


@pytest.mark.parametrize("fn", [k_print_fstring, k_print_percent, k_print_format])
def test_formatted_print_says_how(fn):
    msg = check(fn, gpu.UnsupportedError, contains=PRINT_ADVICE, launch_args=(np.zeros(1), 1))
    assert "string formatting" in msg, msg


def test_print_of_separate_values_runs(capfd):
    """The advice works: print('x =', x, ...) prints the values (the CPU target)."""
    @gpu.jit
    def show(a):
        i = gpu.grid(1)
        if i < a.size:
            print("a", i, "=", a[i])
    a = np.random.default_rng(6).integers(0, 1000, 3).astype(np.int64)
    show[1, 3](a)
    gpu.synchronize()
    lines = sorted(capfd.readouterr().out.split("\n"))
    assert [l for l in lines if l] == ["a %d = %d" % (i, v) for i, v in enumerate(a)], lines
