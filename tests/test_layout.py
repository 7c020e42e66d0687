"""The kernel ABI as one description: CompiledKernel.params lists each flattened parameter
(role, argument, axis, dtype, size, align); the PTX entry declares exactly those parameters;
and a launch with many mixed arguments (arrays of 1 to 3 dimensions, contiguous or strided,
complex, bool, int8, float32 and unsigned scalars) packs them so the kernel sees NumPy's values."""
import re

import numpy as np
import pytest

import gpujit as gpu
from conftest import poisoned, random_array

# GjDtype codes (gpujit.h)
BOOL, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, F32, F64, C64, C128 = range(1, 14)
PTX_BITS = {"u8": 8, "b8": 8, "s8": 8, "u16": 16, "b16": 16, "s16": 16, "u32": 32, "b32": 32, "s32": 32,
            "f32": 32, "u64": 64, "b64": 64, "s64": 64, "f64": 64}

SIG = "void(float32[:, ::1], complex64, bool, int8, float64[:], complex128, uint16)"


def many(a, z, flag, s8, b, w, u):
    i = gpu.grid(1)
    if i < b.shape[0]:
        b[i] = a[0, i] + z.real + flag + s8 + w.imag + u


def array_params(arg, ndim):
    return ([("data", arg, 0, 0, 8, 8)] + [("shape", arg, k, INT64, 8, 8) for k in range(ndim)]
            + [("stride", arg, k, INT64, 8, 8) for k in range(ndim)])


EXPECTED = (array_params(0, 2)
            + [("real", 1, 0, F32, 4, 4), ("imag", 1, 0, F32, 4, 4), ("value", 2, 0, BOOL, 1, 1),
               ("value", 3, 0, INT8, 1, 1)]
            + array_params(4, 1)
            + [("real", 5, 0, F64, 8, 8), ("imag", 5, 0, F64, 8, 8), ("value", 6, 0, UINT16, 2, 2)])


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_params_describe_each_flattened_parameter(target):
    k = gpu.jit(many, boundscheck=False).compile(SIG, target=target, cc=(9, 0))  # no error buffer
    assert k.params == EXPECTED
    assert [a[:3] for a in k.args] == [(1, F32, 2), (0, C64, 0), (0, BOOL, 0), (0, INT8, 0), (1, F64, 1),
                                       (0, C128, 0), (0, UINT16, 0)]


def test_debug_kernels_take_the_error_buffer_last():
    k = gpu.jit(many, debug=True).compile(SIG, target="cpu")
    assert k.params == EXPECTED + [("errbuf", -1, 0, 0, 8, 8)]


@pytest.mark.parametrize("debug", [False, True])
def test_ptx_entry_declares_the_layout(debug):
    k = gpu.jit(many, debug=debug).compile(SIG, target="cuda", cc=(9, 0))
    decl = re.findall(r"\.param \.(\w+) %s_param_(\d+)" % re.escape(k.symbol), k.ptx)
    assert [int(n) for _, n in decl] == list(range(len(k.params)))
    assert [PTX_BITS[t] for t, _ in decl] == [8 * p[4] for p in k.params]


def mixed(out, a1, flag, b2, s8, c3, f32, z128, u16, z64, n, o2):
    i, j, k = gpu.grid(3)
    if i < out.shape[0] and j < out.shape[1] and k < out.shape[2]:
        w = c3[i, j, k] * z64 + z128
        v = a1[i] * f32 + b2[i, j] + s8 * u16 + w.real - w.imag + n
        if flag:
            v = -v
        out[i, j, k] = v
        if k == 0:
            o2[i, j] = s8 + j  # through the strided view's own strides


@pytest.mark.parametrize("flag", [False, True])
def test_mixed_arguments_against_numpy(rng, flag):
    kern = gpu.jit(mixed)
    ni, nj, nk = 5, 6, 7
    out = poisoned((ni, nj, nk), np.float64)
    a1 = random_array(rng, ni, np.float32)
    big = random_array(rng, (2 * ni, 3 * nj + 1), np.int16, -100, 100)
    b2 = big[::2, 1::3]  # strided: layout 'A'
    assert not b2.flags.c_contiguous
    big2 = random_array(rng, (3 * ni, 2 * nj), np.int16)
    o2 = big2[1::3, ::2]
    big2_before = big2.copy()
    c3 = (rng.uniform(-2, 2, (ni, nj, nk)) + 1j * rng.uniform(-2, 2, (ni, nj, nk))).astype(np.complex64)
    s8 = np.int8(rng.integers(-128, 128))
    f32 = np.float32(rng.uniform(-3, 3))
    z128 = complex(rng.uniform(-3, 3), rng.uniform(-3, 3))
    u16 = np.uint16(rng.integers(0, 65536))
    z64 = np.complex64(complex(rng.uniform(-3, 3), rng.uniform(-3, 3)))
    n = int(rng.integers(-1000, 1000))
    kern[(1, 1, 1), (ni, nj, nk)](out, a1, np.bool_(flag), b2, s8, c3, f32, z128, u16, z64, n, o2)

    w = c3.astype(np.complex128) * complex(z64) + z128
    v = (a1.astype(np.float64)[:, None, None] * float(f32) + b2.astype(np.float64)[:, :, None]
         + float(s8) * float(u16) + w.real - w.imag + n)
    np.testing.assert_allclose(out, -v if flag else v, rtol=1e-6, atol=1e-4)
    want_big2 = big2_before.copy()
    want_big2[1::3, ::2] = s8 + np.arange(nj, dtype=np.int16)[None, :]
    np.testing.assert_array_equal(big2, want_big2)  # elements between the view's are untouched

    (ck,) = kern._cached_kernels()
    roles = [p[0] for p in ck.params]
    assert roles == (["data", "shape", "shape", "shape", "stride", "stride", "stride"]  # out
                     + ["data", "shape", "stride", "value"]                             # a1, flag
                     + ["data", "shape", "shape", "stride", "stride", "value"]          # b2, s8
                     + ["data"] + ["shape"] * 3 + ["stride"] * 3                        # c3
                     + ["value", "real", "imag", "value", "real", "imag", "value"]      # f32 .. n
                     + ["data", "shape", "shape", "stride", "stride"]                   # o2
                     + (["errbuf"] if kern._boundscheck(gpu.current_target()) else []))  # the CPU checks by default
    assert [p[1] for p in ck.params if p[0] in ("data", "value", "real")] == list(range(12))
    assert [a[3] for a in ck.args if a[0] == 1] == ["C", "C", "A", "C", "A"]


def test_scalar_conversions_follow_the_parameter_dtype(rng):
    # a Python int and bool given for float32, complex64 and int8 parameters: the launcher
    # converts each to the parameter's dtype (the real part gets it, the imaginary part 0)
    @gpu.jit("void(float64[::1], float32, complex64, int8, bool)")
    def k(out, f, z, s, b):
        out[0] = f
        out[1] = z.real
        out[2] = z.imag
        out[3] = s
        out[4] = b

    out = poisoned(5, np.float64)
    x = int(rng.integers(-1000, 1000))
    k[1, 1](out, x, x, -7, True)
    np.testing.assert_array_equal(out, [x, x, 0, -7, 1])


@pytest.mark.parametrize("debug", [False, True])
def test_device_function_with_many_arguments(rng, debug):
    # a device function's parameters are the target's hidden ones (the CPU's block context
    # and thread index), the debug error buffer, then its arguments (CPython passes at most
    # 30 positionally; beyond, it builds a list, which kernels do not support)
    n = 30
    ns = {}
    exec("def dev(%s):\n    return %s\n" % (", ".join("x%d" % i for i in range(n)),
                                            " + ".join("x%d * %d" % (i, i + 1) for i in range(n))), ns)
    exec("def kern(out, a):\n    out[0] = dev(%s)\n" % ", ".join("a[%d]" % i for i in range(n)), ns)
    k = gpu.jit(ns["kern"], debug=debug)
    a = rng.integers(-1000, 1000, n)
    out = poisoned(1, np.int64)
    k[1, 1](out, a)
    assert out[0] == int((a * np.arange(1, n + 1)).sum())
