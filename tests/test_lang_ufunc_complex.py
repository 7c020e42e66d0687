"""NumPy's ufuncs on complex numbers inside kernels, on scalars (np.sin(z)) and on arrays
(np.sin(z, out)), against NumPy on random inputs; outputs poisoned before each launch."""
import numpy as np
import pytest

import gpujit as gpu

rng = np.random.default_rng()

UNARY = [np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.tanh, np.arcsinh,
         np.arccosh, np.arctanh, np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sqrt]


def random_complex(n, dtype):
    return (rng.uniform(-2, 2, n) + 1j * rng.uniform(-2, 2, n)).astype(dtype)


def poisoned(n, dtype):
    return np.full(n, np.nan, dtype)


def tolerance(dtype):
    return 1e-5 if np.dtype(dtype) == np.complex64 else 1e-12


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("ufunc", UNARY, ids=lambda u: u.__name__)
def test_unary_scalar(ufunc, dtype):
    ns = {"np": np}
    exec("def k(x, out):\n    for i in range(x.size):\n        out[i] = np.%s(x[i])\n" % ufunc.__name__, ns)
    x = random_complex(16, dtype)
    out = poisoned(16, dtype)
    gpu.jit(ns["k"])[1, 1](x, out)
    np.testing.assert_allclose(out, ufunc(x), rtol=tolerance(dtype), atol=tolerance(dtype))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("ufunc", UNARY, ids=lambda u: u.__name__)
def test_unary_array_out(ufunc, dtype):
    ns = {"np": np}
    exec("def k(x, out):\n    np.%s(x, out)\n" % ufunc.__name__, ns)
    x = random_complex(12, dtype).reshape(3, 4)
    out = poisoned(12, dtype).reshape(3, 4)
    gpu.jit(ns["k"])[1, 1](x, out)
    np.testing.assert_allclose(out, ufunc(x), rtol=tolerance(dtype), atol=tolerance(dtype))


def test_result_keeps_complex64():
    @gpu.jit
    def k(x, out):
        y = np.sin(x[0])
        out[0] = y.real
        out[1] = y.imag

    x = random_complex(1, np.complex64)
    out = np.full(2, np.nan, np.float32)
    k[1, 1](x, out)
    np.testing.assert_allclose(out[0] + 1j * out[1], np.sin(x[0]), rtol=1e-5)
    types = [line.split() for line in k.inspect_types_text().splitlines()]
    assert ["y", "complex64"] in [t[-2:] for t in types if len(t) >= 2], k.inspect_types_text()


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_classification(name):
    ns = {"np": np}
    exec("def k(x, out):\n    for i in range(x.size):\n        out[i] = np.%s(x[i])\n" % name, ns)
    x = np.array([1 + 1j, complex(np.nan, 1), complex(1, np.nan), complex(np.inf, 0), complex(0, -np.inf),
                  complex(np.nan, np.inf)] + list(random_complex(4, np.complex128)))
    out = np.full(x.size, 2, np.uint8)
    gpu.jit(ns["k"])[1, 1](x, out)
    np.testing.assert_array_equal(out, getattr(np, name)(x))


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_ordering_scalars(name):
    ns = {"np": np}
    exec("def k(a, b, out):\n    for i in range(a.size):\n        out[i] = np.%s(a[i], b[i])\n" % name, ns)
    a = random_complex(8, np.complex128)
    b = random_complex(8, np.complex128)
    b[:3] = a[:3].real + 1j * rng.uniform(-2, 2, 3)  # equal real parts: the imaginary parts decide
    b[3] = complex(np.nan, 0)
    out = poisoned(8, np.complex128)
    gpu.jit(ns["k"])[1, 1](a, b, out)
    np.testing.assert_array_equal(out, getattr(np, name)(a, b))


def test_real_only_ufunc_rejects_complex():
    @gpu.jit
    def k(x, out):
        out[0] = np.floor(x[0])

    with pytest.raises(gpu.TypingError, match="floor"):
        k[1, 1](np.zeros(1, np.complex128), np.zeros(1, np.complex128))
