"""Bad-input corpus: kernels, launches and signatures that must fail *cleanly*.

Each case asserts the exception class, and for compile errors that the message starts
with FILE:LINE of the offending construct (the line marked `# <-`, located through
inspect.getsourcelines, so edits above a kernel never break the test) and that
.filename/.lineno agree. Nothing here may crash or hang the interpreter:
test_whole_file_in_subprocess re-runs this file in a child process to prove it.

Complements tests/test_errors.py (same idea, fewer and different cases).
"""
import inspect
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import gpujit as gpu

SIG = "void(float64[::1], int64)"
ARGS = (np.zeros(4), 3)

# globals of types kernels cannot use as constants
G_LIST = [1, 2, 3]
G_DICT = {"a": 1}
G_SET = {1, 2}
G_OBJECT = object()
G_STR = "hello"
G_NONE = None
G_ARRAY = np.arange(4.0)
G_COMPLEX = 1 + 2j
G_LAMBDA = lambda v: v + 1  # noqa: E731
G_TUPLE_10001 = tuple(range(10001))  # one item past LIMIT_TUPLE
G_DEEP = 1
for _ in range(18):
    G_DEEP = (G_DEEP, 2)  # nested past LIMIT_CONST_NESTING
G_SHAPE_33D = (1,) * 33  # past LIMIT_NDIM
G_WIDE = ((0,) * 100,) * 200  # 20,000 items unfolded, one inner tuple in Python
G_CONST_64K = np.arange(8192.0)  # exactly the GPU's 64 KiB constant bank
G_CONST_SMALL = np.arange(2.0)
COUNT = 0


class Thing:
    x = 3


def py_helper(v):
    return v + 1


def marked_line(fn):
    """Absolute line number of the single line of fn's source ending in `# <-`."""
    lines, start = inspect.getsourcelines(fn)
    hits = [start + k for k, line in enumerate(lines) if line.rstrip().endswith("# <-")]
    assert len(hits) == 1, "mark exactly one line of %s with '# <-'" % fn.__name__
    return hits[0]


def expect_compile_error(fn, exc, sig=SIG, args=ARGS, contains=None, at=None):
    """Compile fn for the GPU (compile_ptx) and for the current target (by launching it);
    both must raise `exc` located at the marked line of `at` (default: fn itself)."""
    at = at or fn
    filename = at.__code__.co_filename
    line = marked_line(at)
    attempts = [("ptx", lambda: gpu.compile_ptx(fn, sig))]
    if args is not None:
        attempts.append(("launch", lambda: gpu.jit(fn)[1, 1](*args)))
    for what, attempt in attempts:
        with pytest.raises(gpu.CompileError) as ei:
            attempt()
        e = ei.value
        msg = str(e)
        assert isinstance(e, exc), "%s: expected %s, got %s: %s" % (what, exc, type(e).__name__, msg)
        assert not isinstance(e, gpu.InternalCompilerError), msg
        assert msg.startswith("%s:%d:" % (filename, line)), "%s: %s" % (what, msg)
        assert (e.filename, e.lineno) == (filename, line), (e.filename, e.lineno)
        if contains:
            assert contains.lower() in msg.lower(), msg


U, T = gpu.UnsupportedError, gpu.TypingError


# == unsupported statements ==========================================================================
def k_try_except(out, n):
    try:  # <-
        out[0] = n
    except Exception:
        out[0] = 0


def k_try_finally(out, n):
    try:  # <-
        out[0] = n
    finally:
        out[1] = 0


def k_with(out, n):
    with G_STR:  # <-
        out[0] = n


def k_class_def(out, n):
    class Local:  # <-
        pass
    out[0] = n


def k_nested_def(out, n):
    def inner(v):  # <-
        return v + n
    out[0] = inner(n)


def k_lambda(out, n):
    f = lambda v: v * n  # noqa: E731  # <-
    out[0] = f(n)


def k_global_stmt(out, n):
    global COUNT
    COUNT = n  # <-


def make_nonlocal():
    c = 0

    def k_nonlocal(out, n):
        nonlocal c
        c = n  # <-
        out[0] = c
    return k_nonlocal


k_nonlocal = make_nonlocal()


def k_del_local(out, n):
    x = n
    del x  # <-
    out[0] = n


def k_del_item(out, n):
    del out[0]  # <-


def k_assert(out, n):
    assert n > 0  # <-
    out[0] = n


def k_raise(out, n):  # an exception raised in a kernel takes constant arguments
    if n > 100:
        raise ValueError("too big", n)  # <-
    out[0] = n


def k_import(out, n):
    import os as _os  # noqa: F401  # <-
    out[0] = n


def k_from_import(out, n):
    from math import sqrt  # noqa: F401  # <-
    out[0] = n


def k_attr_store(out, n):
    out.shape = n  # <-


def k_star_unpack(out, n):
    x, *rest = (1, 2, n)  # <-
    out[0] = x


# == unsupported expressions ==========================================================================
def k_list_literal(out, n):
    xs = [1, 2, n]  # <-
    out[0] = xs[0]


def k_empty_list(out, n):
    xs = []  # <-
    out[0] = n


def k_dict_literal(out, n):
    d = {"k": n}  # <-
    out[0] = n


def k_set_literal(out, n):
    s = {n, 1}  # <-
    out[0] = n


def k_listcomp(out, n):
    xs = [v for v in range(n)]  # <-
    out[0] = n


def k_setcomp(out, n):
    xs = {v for v in range(n)}  # <-
    out[0] = n


def k_dictcomp(out, n):
    xs = {v: v for v in range(n)}  # <-
    out[0] = n


def k_genexp(out, n):
    out[0] = sum(v for v in range(n))  # <-


def k_string_concat(out, n):
    s = "a" + "b" * n  # <-
    out[0] = n


def k_string_store(out, n):
    out[0] = "x"  # <-


def k_fstring(out, n):
    s = f"{n}!"  # <-
    out[0] = n


def k_string_method(out, n):
    out[0] = len("abc".upper())  # <-


def k_bytes_literal(out, n):
    out[0] = len(b"ab")  # <-


def k_none_store(out, n):
    out[0] = None  # <-


def k_slice_load(out, n):
    v = out[1:n:0]  # <-
    out[0] = v[0]


def k_slice_store(out, n):
    out[1:3, 0] = n  # <-


def k_in(out, n):
    if n in (1, 2):  # <-
        out[0] = n


def k_not_in(out, n):
    if n not in (1, 2):  # <-
        out[0] = n


def k_matmul(out, n):
    out[0] = n @ n  # <-


def k_star_call(out, n):
    t = (1, n)
    out[0] = max(1, *t)  # <-


def k_tuple_index_oob(out, n):
    t = (1, 2)
    out[0] = t[7]  # <-


def k_tuple_item_store(out, n):
    t = (1, 2)
    t[0] = n  # <-


def k_unpack_count(out, n):
    x, y = (1, 2, n)  # <-
    out[0] = x


# == names, globals, calls =============================================================================
def k_undefined(out, n):
    out[0] = not_defined_anywhere  # noqa: F821  # <-


def k_global_list(out, n):
    out[0] = G_LIST[0]  # <-


def k_global_dict(out, n):
    out[0] = G_DICT["a"]  # <-


def k_global_set(out, n):
    out[0] = len(G_SET)  # <-


def k_global_object(out, n):
    out[0] = G_OBJECT  # <-


def k_global_str(out, n):
    out[0] = len(G_STR)  # <-


def k_global_none(out, n):
    out[0] = G_NONE  # <-


def k_global_complex(out, n):
    out[0] = G_COMPLEX  # <-


def k_global_array(out, n):  # global NumPy arrays are frozen constants
    G_ARRAY[0] = n  # <-


def helper_with_list(v):
    xs = [v]  # <-
    return xs[0]


def k_helper_with_list(out, n):
    out[0] = helper_with_list(n)


def k_class_attr(out, n):
    out[0] = Thing.x  # <-


def k_helper_wrong_arity(out, n):
    out[0] = py_helper(n, n)  # <-


def k_print(out, n):
    print(out)  # arrays cannot be printed # <-


def k_numpy_function(out, n):
    out[0] = np.cumsum(out)  # <-


def k_math_unsupported(out, n):
    out[0] = math.factorial(n)  # <-


def k_math_missing(out, n):
    out[0] = math.not_a_function(n)  # <-


def k_builtin_unsupported(out, n):
    out[0] = hash(n)  # <-


def k_array_method(out, n):
    out[0] = out.cumsum()  # <-


def k_array_unknown_attr(out, n):
    out[0] = out.not_an_attribute  # <-


def k_call_scalar(out, n):
    out[0] = n(1)  # <-


def k_index_scalar(out, n):
    out[0] = n[0]  # <-


def k_len_scalar(out, n):
    out[0] = len(n)  # <-


def k_keyword_call(out, n):
    out[0] = max(1, n, key=abs)  # <-


def k_grid_nonconst(out, n):
    i = gpu.grid(n)  # <-
    out[0] = i


def k_grid_four(out, n):
    i = gpu.grid(4)  # <-
    out[0] = i


def k_threadidx_w(out, n):
    out[0] = gpu.threadIdx.w  # <-


def k_atomic_unknown(out, n):
    gpu.atomic.not_an_op(out, 0, 1)  # <-


def k_syncthreads_args(out, n):
    gpu.syncthreads(n)  # <-


def k_min_no_args(out, n):
    out[0] = min()  # <-


def k_range_complex(out, n):
    for v in range(1.5j):  # <-
        out[0] = v


def k_range_four_args(out, n):
    for v in range(0, n, 1, 1):  # <-
        out[0] = v


def k_iterate_array(out, n):
    for v in reversed(out):  # <-
        out[0] = v


def k_int_of_string(out, n):
    out[0] = int("3")  # <-


# -- limits: "too many X (limit is N)" at the line that crosses one ----------------------------------
def k_tuple_too_long(out, n):
    out[0] = G_TUPLE_10001[n]  # <-


def k_constant_nested_too_deeply(out, n):
    t = G_DEEP  # <-
    out[0] = n


def k_shared_33_dims(out, n):
    s = gpu.shared.array(G_SHAPE_33D, gpu.float64)  # <-
    out[0] = n


def k_local_33_dims(out, n):
    s = gpu.local.array(G_SHAPE_33D, gpu.int32)  # <-
    out[0] = n


def k_constant_unfolds_too_far(out, n):
    out[0] = G_WIDE[0][n]  # <-


def k_constant_memory_over_64k(out, n):
    a = gpu.const.array_like(G_CONST_64K)
    b = gpu.const.array_like(G_CONST_SMALL)  # <-
    out[0] = a[n] + b[0]


def nest_deeper(x, n):
    if n == 0:
        return 0
    return nest_deeper((x,), n - 1)  # <-


def k_recursion_nests_a_tuple(out, n):
    out[0] = nest_deeper(1, n)


def double_up(x, n):
    if n == 0:
        return 0
    return double_up((x, x), n - 1)  # <-


def k_recursion_doubles_a_tuple(out, n):
    out[0] = double_up(1, n)


def test_recursion_that_nests_a_tuple_deeper_at_each_call():
    # each call is a new specialisation: typing never ended (or grew 2**n types)
    expect_compile_error(k_recursion_nests_a_tuple, U, contains="too many levels of nested tuples (limit is 32)",
                         at=nest_deeper)
    expect_compile_error(k_recursion_doubles_a_tuple, U, contains="too many items in a tuple, counting those of "
                         "nested tuples (limit is 10000)", at=double_up)


def test_device_functions_nested_too_deeply():
    ns = {}
    src = "".join("def f%d(x):\n    return f%d(x + 1)\n" % (i, i + 1) for i in range(150))
    src += "def f150(x):\n    return x\ndef k(out, n):\n    out[0] = f0(n)\n"
    exec(compile(src, "<chain>", "exec"), ns)
    with pytest.raises(gpu.UnsupportedError, match=r"too many device functions called inside one another .* "
                       r"\(limit is 100\)") as ei:
        gpu.compile_ptx(ns["k"], "void(int64[::1], int64)")
    assert ei.value.filename == "<chain>" and ei.value.lineno == 200  # the call in f99


def test_call_with_10001_arguments():
    ns = {}
    exec(compile("def k(out, n):\n    print(%s)\n" % ", ".join(["n"] * 10001), "<wide>", "exec"), ns)
    with pytest.raises(gpu.UnsupportedError, match=r"too many items in a tuple or arguments in a call "
                       r"\(limit is 10000\)") as ei:
        gpu.compile_ptx(ns["k"], "void(int64[::1], int64)")
    assert (ei.value.filename, ei.value.lineno) == ("<wide>", 2)


# -- more than 30 arguments or items: CPython builds them in a list ---------------------------------
def k_big_list_literal(out, n):
    xs = [n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n]  # <-
    out[0] = xs[0]


def k_big_call_with_keyword(out, n):
    print(n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, sep="")  # <-


def k_big_call_with_conditional(out, n):
    print(n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n if n else 0)  # <-


def k_big_tuple_unpacked_into_too_few(out, n):
    a, b = (n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n)  # <-
    out[0] = a


def k_list_appended_then_indexed(out, n):
    out[0] = [n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n][0]  # <-


# == type errors ======================================================================================
def k_conflict_int_array(out, n):
    x = 1
    if n > 0:
        x = out  # <-
    out[0] = x


def k_conflict_array_int(out, n):
    x = out
    if n > 0:
        x = 2  # <-
    y = x  # both reach this use: one variable, two types
    out[0] = n


def k_conflict_int_tuple(out, n):
    x = 1
    if n > 0:
        x = (1, 2)  # <-
    y = x
    out[0] = n


def k_return_value(out, n):
    out[0] = n
    return n  # <-


def k_return_array(out, n):
    return out  # <-


def k_too_many_indices(out, n):
    out[0, 1] = n  # <-


def k_float_index(out, n):
    out[1.5] = n  # <-


def k_float_var_index(out, n):
    j = n / 2
    out[j] = 1.0  # <-


def k_array_index(out, n):
    out[out] = 1.0  # <-


def k_shared_nonconst(out, n):
    s = gpu.shared.array(n, gpu.float32)  # <-
    out[0] = s[0]


def k_shared_bad_dtype(out, n):
    s = gpu.shared.array(4, G_STR)  # <-
    out[0] = s[0]


def k_shared_float_shape(out, n):
    s = gpu.shared.array(2.5, gpu.float32)  # <-
    out[0] = s[0]


def k_local_nonconst(out, n):
    s = gpu.local.array((n, 2), gpu.int32)  # <-
    out[0] = s[0, 0]


def k_bitand_float(out, n):
    out[0] = out[0] & n  # <-


def k_invert_float(out, n):
    out[0] = ~out[0]  # <-


def k_shift_float(out, n):
    out[0] = out[0] << 1  # <-


def k_array_plus_int(out, n):
    out[0] = (out + 1)[0]  # <-


def k_array_compare(out, n):
    if out > 0:  # <-
        out[0] = n


def k_store_array_in_element(out, n):
    out[0] = out  # <-


def k_store_tuple_in_element(out, n):
    out[0] = (1, 2)  # <-


def k_abs_array(out, n):
    out[0] = abs(out)[0]  # <-


def k_sqrt_array(out, n):
    out[0] = math.sqrt(out)  # <-


def k_float_of_array(out, n):
    out[0] = float(out)  # <-


def k_cast_array(out, n):
    out[0] = gpu.float32(out)  # <-


def k_augassign_array(out, n):
    out[0] += out  # <-


COMPILE_CASES = [
    # (kernel, expected class, message must contain)
    (k_try_except, U, "try"), (k_try_finally, U, "try"), (k_with, U, "with"), (k_class_def, U, None),
    (k_nested_def, T, "non-constant value"), (k_lambda, T, "non-constant value"), (k_global_stmt, U, "global"),
    (k_nonlocal, U, None), (k_del_local, U, "del"), (k_del_item, U, "del"), (k_assert, U, "assert"),
    (k_raise, U, "raise"), (k_import, U, "import"), (k_from_import, U, "import"),
    (k_attr_store, U, None), (k_star_unpack, U, None),
    (k_list_literal, U, "list"), (k_empty_list, U, "list"), (k_dict_literal, U, "dict"), (k_set_literal, U, "set"),
    (k_listcomp, U, "comprehension"), (k_setcomp, U, None), (k_dictcomp, U, None), (k_genexp, U, None),
    (k_string_concat, T, None), (k_string_store, T, None), (k_fstring, U, None),
    (k_string_method, T, None), (k_bytes_literal, U, None),
    (k_none_store, T, None), (k_slice_load, T, "slice step cannot be zero"), (k_slice_store, T, "too many indices"),
    (k_in, U, None), (k_not_in, U, None),
    (k_matmul, U, None), (k_star_call, U, None),
    (k_tuple_index_oob, T, None), (k_tuple_item_store, T, None), (k_unpack_count, T, None),
    (k_undefined, T, "not_defined_anywhere"), (k_global_list, U, "G_LIST"),
    (k_global_dict, U, "G_DICT"), (k_global_set, U, "G_SET"), (k_global_object, U, "G_OBJECT"),
    (k_global_str, U, None), (k_global_none, T, None), (k_global_complex, T, None),
    (k_global_array, T, "constant array"), (k_class_attr, U, None),
    (k_helper_wrong_arity, T, None), (k_print, U, None), (k_numpy_function, U, None),
    (k_math_unsupported, U, None), (k_math_missing, T, None), (k_builtin_unsupported, U, None),
    (k_tuple_too_long, U, "too many items in a tuple (limit is 10000)"),
    (k_constant_nested_too_deeply, U, "too many levels of tuples nested in a constant (limit is 16)"),
    (k_constant_unfolds_too_far, U, "too many items in a constant tuple, counting those of nested tuples"),
    (k_constant_memory_over_64k, U, "too many bytes of constant memory in const.array_like arrays (limit is 65536)"),
    (k_shared_33_dims, U, "too many array dimensions (limit is 32)"),
    (k_local_33_dims, U, "too many array dimensions (limit is 32)"),
    (k_big_list_literal, U, "lists are not supported"), (k_big_call_with_keyword, U, "keyword"),
    (k_big_call_with_conditional, U, "conditional expression"), (k_big_tuple_unpacked_into_too_few, T, "unpack"),
    (k_list_appended_then_indexed, U, "lists are not supported"),
    (k_array_method, U, None), (k_array_unknown_attr, U, None), (k_call_scalar, T, None),
    (k_index_scalar, T, None), (k_len_scalar, T, None), (k_keyword_call, T, None),
    (k_grid_nonconst, T, None), (k_grid_four, T, None), (k_threadidx_w, U, None),
    (k_atomic_unknown, U, None), (k_syncthreads_args, T, None), (k_min_no_args, T, None),
    (k_range_complex, T, None), (k_range_four_args, T, None), (k_iterate_array, U, None),
    (k_int_of_string, T, None),
    (k_conflict_int_array, T, "float64[::1]"), (k_conflict_array_int, T, None), (k_conflict_int_tuple, T, None),
    (k_return_value, T, None), (k_return_array, T, None), (k_too_many_indices, T, None),
    (k_float_index, T, None), (k_float_var_index, T, None), (k_array_index, U, None),
    (k_shared_nonconst, T, None), (k_shared_bad_dtype, U, None), (k_shared_float_shape, T, None),
    (k_local_nonconst, T, None), (k_bitand_float, T, None), (k_invert_float, T, None),
    (k_shift_float, T, None), (k_array_plus_int, U, None), (k_array_compare, T, None),
    (k_store_array_in_element, T, None), (k_store_tuple_in_element, T, None),
    (k_abs_array, T, None), (k_sqrt_array, T, None), (k_float_of_array, T, None),
    (k_cast_array, T, None), (k_augassign_array, U, None),
]


@pytest.mark.parametrize("fn,exc,contains", COMPILE_CASES, ids=[c[0].__name__ for c in COMPILE_CASES])
def test_compile_error(fn, exc, contains):
    expect_compile_error(fn, exc, contains=contains)


def test_error_inside_helper_points_into_the_helper():
    # plain Python functions called by a kernel are compiled with it: their errors are
    # located in their own source
    expect_compile_error(k_helper_with_list, U, contains="list", at=helper_with_list)


# -- kernels whose signature itself is unsupported: the error points at the def line ----------------
def k_star_args(out, *rest):
    out[0] = 1


def k_kwargs(out, **kw):
    out[0] = 1


def k_kwonly(out, *, n=1):
    out[0] = n


def k_generator(out, n):
    yield n


async def k_async(out, n):
    out[0] = n


async def k_await(out, n):
    await n


def k_yield_from(out, n):
    yield from range(n)


@pytest.mark.parametrize("fn", [k_star_args, k_kwargs, k_kwonly, k_generator, k_async, k_await, k_yield_from],
                         ids=lambda f: f.__name__)
def test_unsupported_kernel_kind(fn):
    # *args/**kwargs/keyword-only, generators and coroutines are flagged before any bytecode:
    # an UnsupportedError located at the def line (or a TypeError from the launcher for
    # parameter kinds it cannot bind), never a crash
    with pytest.raises((gpu.UnsupportedError, TypeError)) as ei:
        gpu.compile_ptx(fn, "void(float64[::1], int64)" if fn.__code__.co_argcount == 2 else "void(float64[::1])")
    e = ei.value
    assert not isinstance(e, gpu.InternalCompilerError)
    if isinstance(e, gpu.CompileError):
        body = range(fn.__code__.co_firstlineno, fn.__code__.co_firstlineno + 3)
        assert e.filename == fn.__code__.co_filename and e.lineno in body, str(e)
        assert str(e).startswith("%s:%d:" % (e.filename, e.lineno))


# == bad launches =====================================================================================
@gpu.jit
def k_ok(out, n):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = n


@gpu.jit
def k_ok_array(out, a):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a[i]


@pytest.mark.parametrize("launch,exc", [
    (lambda: k_ok[1, 1](np.zeros(2)), TypeError),                  # too few arguments
    (lambda: k_ok[1, 1](np.zeros(2), 1, 2), TypeError),            # too many
    (lambda: k_ok[1, 1](), TypeError),                             # none at all
    (lambda: k_ok[1, 1](np.zeros(2), "3"), TypeError),             # str
    (lambda: k_ok[1, 1](np.zeros(2), b"3"), TypeError),            # bytes
    (lambda: k_ok[1, 1](np.zeros(2), [3]), TypeError),             # list
    (lambda: k_ok[1, 1](np.zeros(2), {"n": 3}), TypeError),        # dict
    (lambda: k_ok[1, 1](np.zeros(2), None), TypeError),            # None
    (lambda: k_ok[1, 1](np.zeros(2), object()), TypeError),        # object
    (lambda: k_ok[1, 1](np.zeros(2), 3j), gpu.TypingError),        # complex into a float array
    (lambda: k_ok[1, 1](np.zeros(2), np.complex64(3)), gpu.TypingError),  # NumPy complex scalar, same
    (lambda: k_ok[1, 1](np.zeros(2), 2 ** 70), OverflowError),     # int beyond int64
    (lambda: k_ok[1, 1]([0.0, 0.0], 3), TypeError),                # list as the array
    (lambda: k_ok[1, 1]((0.0, 0.0), 3), gpu.TypingError),          # a tuple where the kernel stores into an array
    (lambda: k_ok[1, 1](np.zeros(()), 3), gpu.TypingError),        # 0-d array given one index
    (lambda: k_ok_array[1, 1](np.zeros(2), np.array([1, None], dtype=object)), TypeError),
    # a record stored into a float64 array: the kernel's typing refuses it
    (lambda: k_ok_array[1, 1](np.zeros(2), np.zeros(2, dtype=[("x", "f8"), ("y", "i4")])), gpu.TypingError),
    (lambda: k_ok_array[1, 1](np.zeros(2), np.zeros(2, np.longdouble)), TypeError),
    (lambda: k_ok_array[1, 1](np.zeros(2), np.zeros(2, np.complex64)), gpu.TypingError),   # complex into float
    (lambda: k_ok_array[1, 1](np.zeros(2), np.zeros(2, np.complex128)), gpu.TypingError),
    (lambda: k_ok_array[1, 1](np.zeros(2), np.zeros(2, ">f8")), TypeError),          # byte-swapped
    (lambda: k_ok_array[1, 1](np.zeros(2), np.zeros(2, "U3")), TypeError),           # unicode
    (lambda: k_ok_array[1, 1](np.zeros(2), np.zeros(2, "S3")), TypeError),           # bytes dtype
    (lambda: k_ok_array[1, 1](np.zeros(2), np.zeros(2, np.longdouble)), TypeError),
    # launch configuration
    (lambda: k_ok[1, 0](np.zeros(2), 1), ValueError),              # 0 threads
    (lambda: k_ok[0, 1](np.zeros(2), 1), ValueError),              # 0 blocks
    (lambda: k_ok[-1, 1](np.zeros(2), 1), ValueError),
    (lambda: k_ok[1, -32](np.zeros(2), 1), ValueError),
    (lambda: k_ok[1, 1025](np.zeros(2), 1), ValueError),           # > 1024 threads per block
    (lambda: k_ok[1, 4096](np.zeros(2), 1), ValueError),
    (lambda: k_ok[1, (32, 32, 2)](np.zeros(2), 1), ValueError),    # 2048 in 3-D
    (lambda: k_ok[1, (1, 1, 65)](np.zeros(2), 1), ValueError),     # z > 64
    (lambda: k_ok[2 ** 40, 1](np.zeros(2), 1), ValueError),        # grid beyond 2**31-1
    (lambda: k_ok[1.5, 1](np.zeros(2), 1), TypeError),             # non-int grid
    (lambda: k_ok[1, 2.0](np.zeros(2), 1), TypeError),             # non-int block
    (lambda: k_ok["1", 1](np.zeros(2), 1), TypeError),
    (lambda: k_ok[None, 1](np.zeros(2), 1), TypeError),
    (lambda: k_ok[(1, 1, 1, 1), 1](np.zeros(2), 1), (TypeError, ValueError)),  # 4-D grid
    (lambda: k_ok[(), 1](np.zeros(2), 1), (TypeError, ValueError)),            # empty tuple
    (lambda: k_ok[1](np.zeros(2), 1), (TypeError, ValueError)),                # only a grid
    (lambda: k_ok[1, 1, 0, -1](np.zeros(2), 1), (TypeError, ValueError)),      # negative dynamic shared
    (lambda: k_ok[1, 1, 0, 0, 0](np.zeros(2), 1), (TypeError, ValueError)),    # five items
    (lambda: k_ok(np.zeros(2), 1), TypeError),                     # no launch configuration
], ids=lambda v: "" if callable(v) else None)
def test_bad_launch(launch, exc):
    with pytest.raises(exc):
        launch()


@pytest.mark.parametrize("dt", ["M8[s]", "m8[s]"])
def test_datetime_array_argument(dt):
    # was a ValueError leaking from NumPy's buffer export ("cannot include dtype 'M' in a
    # buffer"); fixed in 0e1aca6
    with pytest.raises(TypeError):
        k_ok_array[1, 1](np.zeros(2), np.zeros(2, dt))


def test_bad_launch_leaves_kernel_usable():
    for bad in (lambda: k_ok[1, 0](np.zeros(2), 1), lambda: k_ok[1, 1](np.zeros(2), "x")):
        with pytest.raises((TypeError, ValueError)):
            bad()
    out = np.zeros(4)
    k_ok[1, 4](out, 7)
    assert (out == 7).all()


# == signatures =======================================================================================
def plain(out, n):
    out[0] = n


BAD_SIGS = [
    "void(float33[:])", "void(float32[:]", "(int32)", "void(float64[::1])", "void(float64[::1], int64, int64)",
    "void(float65[::1], int64)", "void(float64[::1, int64)", "float64[::1], int64", "", "void", "void()",
    "void(complex128, int64)", "void(float128[:], int64)", "void(object, int64)", "void(str, int64)",
    "void(int32[::2], int64)", "void(float32[], int64)", "void(,)",
    "void(float32[:] int64)", "void(float32[:], int64,)", "void(float32[:], int64) trailing",
    "void((float32[:]), int64)", "void(float32[:][:], int64)", "int32(float64[::1], int64)",
    "void(float64[::1], int64", "void float64[::1], int64)", "void(float64[:, ::1, :], int64)",
]


@pytest.mark.parametrize("sig", BAD_SIGS)
def test_bad_signature(sig):
    for attempt in (lambda: gpu.compile_ptx(plain, sig), lambda: gpu.jit(sig)(plain)):
        with pytest.raises((TypeError, gpu.CompileError)) as ei:
            attempt()
        assert not isinstance(ei.value, gpu.InternalCompilerError), str(ei.value)


@pytest.mark.parametrize("sig", [42, None, b"void(int64)", ["void(float64[::1], int64)"]])
def test_non_string_signature(sig):
    with pytest.raises(TypeError):
        gpu.compile_ptx(plain, sig)


@pytest.mark.parametrize("args", [
    (np.zeros((2, 2)), 1),                 # 2-D where 1-D was declared
    (np.zeros(2, np.float32), 1),          # float32 where float64 was declared
    (np.zeros(2, np.int64), 1),            # int64 array
    (np.zeros(2), 1.5),                    # float scalar where int64 was declared
    (np.zeros(4)[::2], 1),                 # strided where C-contiguous was declared
], ids=["ndim", "float32", "int64", "float-scalar", "strided"])
def test_eager_signature_mismatch(args):
    k = gpu.jit("void(float64[::1], int64)")(plain)
    with pytest.raises(TypeError):
        k[1, 1](*args)


# == read-only host arrays ============================================================================
def test_read_only_input_is_fine():
    a = np.arange(4.0)
    a.flags.writeable = False
    out = np.zeros(4)
    k_ok_array[1, 4](out, a)
    assert (out == a).all()


def test_read_only_output_is_refused():
    # the cpu target used to write straight into a read-only NumPy array; since 0e1aca6 a
    # read-only array for a parameter the kernel stores into is refused, untouched
    out = np.zeros(4)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        k_ok[1, 4](out, 7)
    assert (out == 0).all()


@gpu.jit
def k_writes_through_helper(out, n):
    store_into(out, n)


def store_into(arr, v):
    arr[0] = v


def test_read_only_output_written_by_a_helper_is_refused():
    # the store happens in a called function: the "writes to it" analysis must see through it
    out = np.zeros(4)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        k_writes_through_helper[1, 1](out, 7)
    assert (out == 0).all()


def test_read_only_array_written_through_an_alias_is_refused():
    out = np.zeros(4)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        k_alias_store[1, 1](out, 7)
    assert (out == 0).all()


@gpu.jit
def k_alias_store(out, n):
    alias = out
    alias[1] = n


# == limits met outside a kernel's body =================================================================
def test_signature_with_33_dimensions():
    # the signature parser's limit: a TypeError naming it
    sig = "void(float64[%s], int64)" % ", ".join([":"] * 33)
    for attempt in (lambda: gpu.compile_ptx(plain, sig), lambda: gpu.jit(sig)(plain)):
        with pytest.raises(TypeError, match=r"too many dimensions \(limit is 32\)"):
            attempt()


@pytest.mark.parametrize("ndim", [33, 40])
def test_array_argument_with_many_dimensions(ndim):
    # GJ_MAXDIM (32): the launcher's capacity and the compiler's limit
    with pytest.raises((TypeError, gpu.UnsupportedError), match="dimensions"):
        k_ok_array[1, 1](np.zeros(2), np.zeros((1,) * ndim))


def run_child(code, env=None):
    """Run `code` in a child interpreter importing this gpujit: an LLVM abort or exit there
    shows as its exit status instead of killing the test runner."""
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(gpu.__file__)))
    env = dict(os.environ, **(env or {}))
    env["PYTHONPATH"] = os.pathsep.join([pkg_root] + [p for p in [env.get("PYTHONPATH")] if p])
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, "child exited with %d:\n%s\n%s" % (p.returncode, p.stdout[-3000:], p.stderr[-3000:])
    return p.stdout


CHILD_PRELUDE = """
import gpujit as gpu
def plain(out, n):
    out[0] = n
def probe(cc, fn=plain, sig="void(float64[::1], int64)"):
    try:
        ptx, _ = gpu.compile_ptx(fn, sig, cc=cc)
    except Exception as e:
        return type(e).__name__ + ": " + str(e).splitlines()[0]
    return " ".join(l for l in ptx.splitlines() if l.startswith((".version", ".target")))
"""

NONSENSE_CCS = [(1, 0), (2, 1), (-1, 0), (9, -1), (9, 10), (100, 0), (0, 0), (9.0, 0), (9, 0.5), "9.0", (9,),
                (9, 0, 0), (2 ** 40, 0), (True, 0), 9, "sm_90", ()]   # None is numba's default: 9.0


def test_nonsense_compute_capabilities_are_value_errors():
    out = run_child(CHILD_PRELUDE + "for cc in %r:\n    print(repr(cc), '->', probe(cc))\n" % (NONSENSE_CCS,))
    lines = out.splitlines()
    assert len(lines) == len(NONSENSE_CCS), out
    for cc, line in zip(NONSENSE_CCS, lines):
        assert line.startswith(repr(cc) + " -> ValueError: "), line


@pytest.mark.parametrize("cc,target", [((10, 0), "sm_90"), ((10, 3), "sm_90"), ((12, 0), "sm_90"),
                                       ((12, 1), "sm_90"), ((99, 9), "sm_90"), ((8, 8), "sm_87"),
                                       ((7, 1), "sm_70"), ((3, 0), "sm_30"), ((8, 6), "sm_86")])
def test_compute_capabilities_llvm_does_not_know(cc, target):
    # LLVM 19 aborted the process on sm_100 ("Cannot select vote.all.sync"): a newer cc
    # compiles for the newest LLVM knows, whose PTX the driver JIT-compiles forward
    out = run_child(CHILD_PRELUDE + "print(probe(%r))\n" % (cc,))
    assert (".target %s" % target) in out, out
    if target == "sm_90":
        assert ".version 7.8" in out, out


def test_match_sync_before_volta_is_an_error():
    # match.sync needs sm_70: LLVM aborted on it for older targets
    code = CHILD_PRELUDE + (
        "def km(out, n):\n"
        "    out[0] = gpu.match_any_sync(0xffffffff, n)\n"
        "def ka(out, n):\n"
        "    out[0] = gpu.match_all_sync(0xffffffff, n)[0]\n"
        "for cc in [(3, 0), (5, 0), (6, 1), (7, 0)]:\n"
        "    for fn in (km, ka):\n"
        "        print(probe(cc, fn, 'void(int32[::1], int32)'))\n")
    lines = run_child(code).splitlines()
    assert len(lines) == 8, lines
    for line in lines[:6]:
        assert line.startswith("UnsupportedError: <string>:") and "compute capability 7.0 or newer" in line, line
    assert all(".target sm_70" in line for line in lines[6:]), lines


def test_old_compute_capabilities_compile_every_intrinsic_or_refuse_cleanly():
    # each of these once risked an LLVM abort on an old target; now PTX or a clean error
    bodies = ["gpu.atomic.add(a, 0, 1.0)", "gpu.atomic.max(a, 0, 1.0)", "gpu.atomic.exch(a, 0, 1.0)",
              "a[0] = gpu.shfl_down_sync(0xffffffff, a[1], 1)", "a[0] = gpu.all_sync(0xffffffff, a[1] > 0)",
              "a[0] = gpu.ballot_sync(0xffffffff, a[1] > 0)", "a[0] = gpu.activemask()", "gpu.syncwarp()",
              "a[0] = gpu.lanemask_lt()", "gpu.threadfence_system()", "a[0] = gpu.syncthreads_count(a[1])",
              "a[0] = gpu.match_any_sync(0xffffffff, 1)"]
    code = CHILD_PRELUDE + "bodies = %r\n" % (bodies,) + (
        "for cc in [(3, 0), (3, 5), (5, 0), (6, 0), (7, 0), (7, 5), (8, 0), (8, 9), (10, 0)]:\n"
        "    for i, b in enumerate(bodies):\n"
        "        ns = {'gpu': gpu}\n"
        "        exec('def k(a):\\n    ' + b + '\\n', ns)\n"
        "        print(cc, i, probe(cc, ns['k'], 'void(float64[::1])'))\n")
    lines = run_child(code).splitlines()
    assert len(lines) == 9 * len(bodies), lines
    for line in lines:
        assert ".target sm_" in line or "UnsupportedError" in line, line


@pytest.mark.parametrize("contents", [b"", b"not bitcode at all", b"BC\xc0\xde" + b"\x00" * 64])
def test_bad_libdevice_is_a_compile_error(tmp_path, contents):
    # LLVMParseBitcodeInContext2 reported a bad file through LLVM's default diagnostic
    # handler, which exits the process
    bc = tmp_path / "libdevice.10.bc"
    bc.write_bytes(contents)
    code = CHILD_PRELUDE + (
        "import math\n"
        "def ks(out, n):\n"
        "    out[0] = math.erf(out[1])\n"
        "print(probe((9, 0), ks))\n")
    out = run_child(code, env={"GPUJIT_LIBDEVICE": str(bc)})
    assert out.startswith("CompileError: ") and "libdevice" in out, out


G_MIXED_151 = tuple(range(150)) + (1.5,)


def k_long_message(out, n):
    t = G_MIXED_151
    if n > 0:
        t = 1.0  # <-
    u = t
    out[0] = n


def test_long_messages_are_whole():
    # messages were cut at 1,024 bytes: this one names a 151-item tuple type
    expect_compile_error(k_long_message, T, contains="int64, float64) elsewhere")


def _(out, n):
    out[0] = n


@pytest.mark.parametrize("fn,name", [(_, None), (plain, "1abc"), (plain, ""), (plain, "a b.c"), (plain, "_")])
def test_odd_kernel_names_give_ptx_identifiers(fn, name):
    # "1abc" and "_" made .entry names ptxas rejects
    import re
    kw = {} if name is None else {"name": name}
    k = gpu._core.compile(fn.__code__, fn.__globals__, None, "void(float64[::1], int64)", **kw)
    entry = re.search(r"\.entry (\S+)\(", k.ptx).group(1)
    assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_$]*|[_$%][A-Za-z0-9_$]+", entry), entry


@pytest.mark.parametrize("version", [(3, 16, 0, "final", 0), (3, 10, 12, "final", 0), (4, 0, 0, "alpha", 1)])
def test_unsupported_python_version_fails_at_import(version):
    # gpujit decodes CPython 3.11-3.15 bytecode; elsewhere it must not load (and so never
    # misread bytecode)
    code = ("import sys, numpy\n"
            "sys.version_info = %r\n"
            "try:\n"
            "    import gpujit\n"
            "except ImportError as e:\n"
            "    print('ImportError:', e)\n" % (version,))
    out = run_child(code)
    assert out.startswith("ImportError: gpujit supports CPython 3.11 to 3.15"), out
    assert "this is Python %d.%d" % version[:2] in out, out


def test_supported_python_versions_pass_the_check():
    from gpujit import _pyversion
    for v in [(3, 11, 0), (3, 12, 7), (3, 13, 2), (3, 14, 10), (3, 15, 2)]:
        _pyversion.check(v)
    with pytest.raises(ImportError):
        _pyversion.check((3, 16, 0))


def test_list_argument_says_to_use_a_numpy_array():
    @gpu.jit
    def k(a, n):
        a[0] = n

    with pytest.raises(TypeError, match=r"argument 1: unsupported type list \(pass a NumPy array instead"):
        k[1, 1]([1.0, 2.0], 3)
    out = np.full(2, np.nan)
    k[1, 1](out, 3)  # the kernel itself is fine
    assert out[0] == 3


# == the whole file in a child interpreter ============================================================
@pytest.mark.skipif(os.environ.get("GJ_BAD_INPUTS_CHILD") == "1", reason="already the child")
def test_whole_file_in_subprocess():
    # a segfault/abort in any case above would kill pytest itself; in a child it shows as a
    # signal exit status here
    env = dict(os.environ, GJ_BAD_INPUTS_CHILD="1")
    # the child must import this same gpujit, whatever the (maybe relative) PYTHONPATH was
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(gpu.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([pkg_root] + [p for p in [env.get("PYTHONPATH")] if p])
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", __file__],
                       env=env, capture_output=True, text=True, timeout=600,
                       cwd=os.path.dirname(os.path.abspath(__file__)))
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
