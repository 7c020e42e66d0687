"""gpujit.guvectorize and the gufunc layout scheduler, against NumPy (matmul, sums,
copies) on fresh random inputs; outputs poisoned before each run."""
import pickle

import numpy as np
import pytest

import gpujit as gpu
from gpujit import float32, float64, int32, void
from gpujit.deviceufunc import GUFuncEngine, parse_signature

rng = np.random.default_rng()


def matmul_core(A, B, C):
    m, n = A.shape
    n, p = B.shape
    for i in range(m):
        for j in range(p):
            C[i, j] = 0
            for k in range(n):
                C[i, j] += A[i, k] * B[k, j]


mm32 = gpu.guvectorize([void(float32[:, :], float32[:, :], float32[:, :])], "(m,n),(n,p)->(m,p)")(matmul_core)
mm64 = gpu.guvectorize([void(float64[:, :], float64[:, :], float64[:, :])], "(m, n), (n, p) -> (m, p)")(matmul_core)


@gpu.guvectorize(["void(int32[:], int32[:])"], "(n)->()")
def row_sum(x, out):
    s = 0
    for i in range(x.shape[0]):
        s += x[i]
    out[0] = s


@gpu.guvectorize(["void(float32, float32[:], float32[:], float32[:])"], "(),(t),(t)->(t)")
def saxpy(a, x, y, out):
    for i in range(out.shape[0]):
        out[i] = a * x[i] + y[i]


@pytest.mark.parametrize("outer", [(), (7,), (3, 5)])
def test_matmul(outer):
    A = rng.random(outer + (2, 4)).astype(np.float32)
    B = rng.random(outer + (4, 5)).astype(np.float32)
    np.testing.assert_allclose(mm32(A, B), A @ B, rtol=1e-5)


def test_pinned_argument_and_device_result():
    X = rng.standard_normal((10, 3, 3))
    Y = rng.standard_normal((3, 3))
    np.testing.assert_allclose(mm64(X, Y), X @ Y)
    got = mm64(gpu.to_device(X), Y)
    assert isinstance(got, gpu.DeviceArray)
    np.testing.assert_allclose(got.copy_to_host(), X @ Y)


def test_out_and_stream():
    A = rng.random((33, 2, 4)).astype(np.float32)
    B = rng.random((33, 4, 5)).astype(np.float32)
    s = gpu.stream()
    dC = gpu.to_device(np.full((33, 2, 5), np.nan, np.float32))
    assert mm32(gpu.to_device(A, s), gpu.to_device(B, s), out=dC, stream=s) is dC
    np.testing.assert_allclose(dC.copy_to_host(stream=s), A @ B, rtol=1e-5)
    C = np.full((33, 2, 5), np.nan, np.float32)
    mm32(A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5)


def test_scalar_output_and_scalar_input():
    x = rng.integers(-100, 100, (40, 3)).astype(np.int32)
    np.testing.assert_array_equal(row_sum(x), x.sum(axis=1))
    out = gpu.to_device(np.full(40, 77, np.int32))
    row_sum(gpu.to_device(x), out=out)
    np.testing.assert_array_equal(out.copy_to_host(), x.sum(axis=1))
    a = np.float32(2)
    X = rng.random((5, 2)).astype(np.float32)
    Y = rng.random((5, 2)).astype(np.float32)
    np.testing.assert_allclose(saxpy(a, X, Y), a * X + Y, rtol=1e-6)  # a*x+y may fuse
    A = rng.random(5).astype(np.float32)
    np.testing.assert_allclose(saxpy(A, X, Y), A[:, None] * X + Y, rtol=1e-6)


def test_multiple_outputs():
    @gpu.guvectorize([void(int32[:], int32[:], float64[:])], "(x)->(x),(x)")
    def two(A, B, C):
        for i in range(A.size):
            B[i] = A[i]
            C[i] = A[i] * 1.5
    A = rng.integers(0, 100, 10).astype(np.int32)
    B, C = two(A)
    np.testing.assert_array_equal(B, A)
    np.testing.assert_array_equal(C, A * 1.5)


def test_cast_of_host_inputs_and_device_refusal():
    @gpu.guvectorize(["void(int32, int32[:], int32[:])"], "(),(t)->(t)")
    def scale(a, b, out):
        for i in range(b.size):
            out[i] = a * b[i]
    b = np.arange(10, dtype=np.int32)
    np.testing.assert_array_equal(scale(np.int64(2), b), 2 * b)
    with pytest.raises(TypeError, match="does not support .astype"):
        scale(gpu.to_device(np.array([2], np.int64)), b)


def test_errors():
    with pytest.raises(TypeError, match="cannot return values"):
        gpu.guvectorize([int32(int32[:], int32[:])], "(m)->(m)")(lambda x, y: None)
    with pytest.raises(TypeError, match="nopython flag must be True"):
        gpu.guvectorize([void(float32[:], float32[:])], "(x)->(x)", nopython=False)
    with pytest.raises(TypeError, match="not supported: 'what1'"):
        gpu.guvectorize([void(float32[:], float32[:])], "(x)->(x)", what1=True)
    x = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match="both positional and keyword"):
        mm32(x, x, x, out=x)
    with pytest.raises(TypeError, match="Got 1 positional argument."):
        mm32(x)
    with pytest.raises(ValueError, match="shape"):
        mm32(np.zeros((2, 3), np.float32), np.zeros((4, 5), np.float32))
    with pytest.raises(NameError):
        parse_signature("(m)->(q)")


@pytest.mark.parametrize("layout, shapes, expect", [
    ("(m, n), (n, p) -> (m, p)", [(100, 4, 5), (1, 5, 7)], ([(4, 5), (5, 7)], [(4, 7)], (100,), [False, True])),
    ("(m,n),(n,p)->(m,p)", [(12, 34, 4, 5), (12, 34, 5, 7)], ([(4, 5), (5, 7)], [(4, 7)], (12, 34), [False, False])),
    ("(a),(a)->(a)", [(5,), (5,)], ([(5,), (5,)], [(5,)], (), [False, False])),
    ("(),()->()", [(5,), ()], ([(), ()], [()], (5,), [False, True])),
])
def test_schedule(layout, shapes, expect):
    s = GUFuncEngine.from_signature(layout).schedule(shapes)
    assert (s.ishapes, s.oshapes, s.loopdims, s.pinned) == expect


def test_pickle():
    again = pickle.loads(pickle.dumps(row_sum))
    x = rng.integers(0, 9, (4, 6)).astype(np.int32)
    np.testing.assert_array_equal(again(x), x.sum(axis=1))


def test_low_occupancy_warning(monkeypatch):
    from gpujit import config
    from gpujit.errors import NumbaPerformanceWarning

    @gpu.guvectorize(["void(float32[:], float32[:], float32[:])"], "(n),(n)->(n)")
    def mul(a, b, out):
        for i in range(a.shape[0]):
            out[i] = a[i] * b[i]
    a = rng.random(1000).astype(np.float32)
    out = np.full(1000, np.nan, np.float32)
    monkeypatch.setattr(config, "CUDA_WARN_ON_IMPLICIT_COPY", 0)   # on a GPU: the host arrays' copies
    monkeypatch.setattr(config, "CUDA_LOW_OCCUPANCY_WARNINGS", 1)  # given: the CPU target warns too
    with pytest.warns(NumbaPerformanceWarning, match="Grid size 1 .* low occupancy"):
        mul(a, a, out)      # one loop element: one block
    np.testing.assert_array_equal(out, a * a)
    monkeypatch.setattr(config, "CUDA_LOW_OCCUPANCY_WARNINGS", 0)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mul(a, a, out)


def test_gufunc_called_in_kernel_is_a_typing_error():
    @gpu.guvectorize(["void(int32[:], int32[:])"], "(n)->(n)")
    def copy(a, b):
        for i in range(a.shape[0]):
            b[i] = a[i]

    @gpu.jit
    def k(a, b):
        copy(a, b)

    with pytest.raises(gpu.TypingError, match="Untyped global name 'copy': a gufunc"):
        k[1, 1](np.zeros(4, np.int32), np.zeros(4, np.int32))


# -- a gufunc from its layout alone (numba's dynamic gufunc) ----------------------------------
def test_layout_alone_compiles_at_first_call():
    """@guvectorize(layout) without signatures: each call's inputs' and outputs' dtypes give
    the loop (the outputs passed); a new dtype without outputs is a TypeError saying so."""
    @gpu.guvectorize("(n),()->()")
    def scaled_sum(x, s, out):
        acc = x[0] - x[0]
        for i in range(x.shape[0]):
            acc += x[i]
        out[0] = acc * s

    @gpu.guvectorize("(n),(n)->(n)", is_dynamic=True)
    def addv(x, y, out):
        for i in range(x.shape[0]):
            out[i] = x[i] + y[i]

    a = rng.standard_normal((40, 9))
    b = rng.standard_normal((40, 9))
    out = np.full(40, np.nan)
    scaled_sum(a, 2.5, out)
    assert np.allclose(out, 2.5 * a.sum(axis=1))
    s = rng.standard_normal(40)          # the '()' input as an array, one scalar per row
    out = np.full(40, np.nan)
    scaled_sum(a, s, out)
    assert np.allclose(out, s * a.sum(axis=1))
    ai = rng.integers(-100, 100, (40, 9)).astype(np.int32)
    outi = np.zeros(40, np.int32)
    scaled_sum(ai, np.int32(3), outi)
    assert np.array_equal(outi, 3 * ai.sum(axis=1))

    o = np.full((40, 9), np.nan)
    addv(a, b, o)
    assert np.array_equal(o, a + b)
    assert np.array_equal(addv(a, b), a + b)     # the loop exists now: the output is made
    f = a.astype(np.float32)
    with pytest.raises(TypeError, match="without signatures: pass its output"):
        addv(f, f)
    of = np.zeros_like(f)
    addv(gpu.to_device(f), gpu.to_device(f), of)
    assert np.array_equal(of, f + f)
