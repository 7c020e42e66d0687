"""gpujit.extending: register_jitable and overload (a kernel's implementation of a Python
function, chosen by the argument types at compile time)."""
import numpy as np
import pytest

import gpujit as gpu
from gpujit import types
from gpujit.extending import overload, register_jitable


@register_jitable
def clamp(x, lo, hi):
    return lo if x < lo else hi if x > hi else x


def test_register_jitable_in_python_and_kernels():
    assert clamp(5, 0, 3) == 3

    @gpu.jit
    def k(out, x):
        i = gpu.grid(1)
        if i < x.size:
            out[i] = clamp(x[i], 0.25, 0.75)

    x = np.random.default_rng().random(100)
    out = np.full_like(x, np.nan)
    k[1, 128](out, x)
    np.testing.assert_array_equal(out, np.clip(x, 0.25, 0.75))


def scale(x, k):
    return x * k


seen = []


@overload(scale)
def _scale_ol(x, k):
    seen.append((x, k))
    if isinstance(x, types.Float):
        return lambda x, k: x * k + 0.5
    if isinstance(x, types.Integer):
        def impl(x, k):
            return x * k * 2
        return impl
    return None


def test_overload_picks_an_implementation_by_type():
    @gpu.jit
    def k(a, b):
        i = gpu.grid(1)
        if i < a.size:
            a[i] = scale(a[i], 3)
            b[i] = scale(b[i], 3)

    rng = np.random.default_rng()
    a0, b0 = rng.random(40), rng.integers(-50, 50, 40).astype(np.int32)
    a, b = a0.copy(), b0.copy()
    k[1, 64](a, b)
    np.testing.assert_allclose(a, a0 * 3 + 0.5, rtol=1e-14)   # the kernel may fuse it into one fma
    np.testing.assert_array_equal(b, b0 * 6)
    assert (types.float64, types.int64) in seen and (types.int32, types.int64) in seen
    assert scale(2, 3) == 6   # Python calls are unchanged


def test_overload_sees_array_types():
    def total(a):
        return 0

    @overload(total)
    def _total_ol(a):
        if isinstance(a, types.Array) and a.ndim == 1:
            def impl(a):
                s = 0.0
                for i in range(a.size):
                    s += a[i]
                return s
            return impl

    @gpu.jit
    def k(out, x):
        out[0] = total(x)

    x = np.random.default_rng().random(30)
    out = np.full(1, np.nan)
    k[1, 1](out, x)
    np.testing.assert_allclose(out[0], x.sum())


def test_no_overload_for_these_types_is_a_typing_error():
    def only_ints(x):
        return x

    @overload(only_ints)
    def _ol(x):
        if isinstance(x, types.Integer):
            return lambda x: x + 1

    @gpu.jit
    def k(out):
        out[0] = only_ints(1.5)

    with pytest.raises(gpu.TypingError, match=r"no overload of .*only_ints\(\) accepts \(float64\)"):
        k[1, 1](np.zeros(1))


def test_overload_of_a_builtin_is_refused():
    with pytest.raises(TypeError, match="Python functions only"):
        overload(len)


class _Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


class _PointType(types.Type):
    def __init__(self):
        super().__init__(name="PointType")


def test_data_model_registrations_import_and_their_types_are_refused_in_kernels():
    from gpujit.extending import core_models, make_attribute_wrapper, register_model, type_callable, typeof_impl

    point_type = _PointType()

    @typeof_impl.register(_Point)
    def _typeof(val, c):
        return point_type

    @register_model(_PointType)
    class _Model(core_models.StructModel):
        def __init__(self, dmm, fe_type):
            super().__init__(dmm, fe_type, [("x", types.int32), ("y", types.int32)])

    make_attribute_wrapper(_PointType, "x", "x")

    @type_callable(_Point)
    def _typer(context):
        return lambda x, y: point_type

    @gpu.jit
    def k(out):
        p = _Point(1, 2)
        out[0] = 1

    out = np.zeros(1)
    with pytest.raises(gpu.UnsupportedError, match=r"test_extending.py:\d+: .*_Point"):
        k[1, 1](out)
    assert out[0] == 0


def first_or_self(a, b=None):
    return b[0] if isinstance(b, tuple) else b


@overload(first_or_self)
def _first_or_self_ol(a, b=None):
    is_tuple = isinstance(b, (types.Tuple, types.UniTuple))

    def impl(a, b=None):
        # the branch the closure's constant rules out is not typed: b = b[0] does not type
        # for a scalar b, and rebinding a tuple argument to its element types only here
        if is_tuple is True:
            b = b[0]
        return b + a
    return impl


def test_overload_branch_on_a_closure_constant(rng):
    @gpu.jit
    def k(out, a, t, s):
        out[0] = first_or_self(a, t)
        out[1] = first_or_self(a, s)

    a, t0, s = (int(v) for v in rng.integers(-1000, 1000, 3))
    out = np.full(2, -1, np.int64)
    k[1, 1](out, a, (t0, 7), s)
    np.testing.assert_array_equal(out, [t0 + a, s + a])
