"""Structured dtypes (records) in kernels: from_dtype's Record types, arrays of
records (host or device arrays) and single records as arguments, fields read and written as rec.x and
rec['x'], nested records and nested arrays, whole-record copies, records in
device functions, and the errors for bad fields. Checked against NumPy doing
the same on fresh random data; PTX goes through ptxas (conftest)."""
import numpy as np
import pytest

import gpujit as gpu
from gpujit import types
from gpujit.np.numpy_support import as_dtype, from_dtype

INNER = np.dtype([("y", np.int16), ("z", np.float32)], align=True)
ALIGNED = np.dtype([("a", np.float64), ("b", np.int32), ("c", np.complex64), ("d", np.uint8, (5,)),
                    ("n", INNER), ("m", np.float32, (3, 2))], align=True)
PACKED = np.dtype([("i", np.int32), ("j", np.float32, (3, 2)), ("k", np.int8)])


def random_records(rng, n, dt):
    a = np.zeros(n, dt)
    for name in dt.names:
        f = a[name]
        if f.dtype.fields is not None:
            for sub in f.dtype.names:
                f[sub] = rng.integers(-100, 100, f[sub].shape)
        elif f.dtype.kind == "c":
            f[...] = rng.standard_normal(f.shape) + 1j * rng.standard_normal(f.shape)
        elif f.dtype.kind == "f":
            f[...] = rng.standard_normal(f.shape)
        else:
            f[...] = rng.integers(0, 100, f.shape)
    return a


def same_records(got, want):
    """Field by field (NumPy's copies do not keep padding bytes)."""
    for name in want.dtype.names:
        if want[name].dtype.fields is not None:
            same_records(got[name], want[name])
        else:
            assert np.array_equal(got[name], want[name]), name


# -- the types ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dt", [ALIGNED, PACKED, INNER])
def test_from_dtype_round_trip(dt):
    rec = from_dtype(dt)
    assert isinstance(rec, types.Record)
    assert rec.size == dt.itemsize and rec.aligned == dt.isalignedstruct
    assert as_dtype(rec) == dt
    for name in dt.names:
        assert rec.offset(name) == dt.fields[name][1]
    assert isinstance(rec[:], types.Array) and str(rec[::1]).endswith("[::1]")
    assert isinstance(from_dtype(ALIGNED).typeof("d"), types.NestedArray)
    assert isinstance(from_dtype(ALIGNED).typeof("n"), types.Record)


# -- arrays of records ----------------------------------------------------------------------------
@gpu.jit
def k_fields(ary, v, out):
    i = gpu.grid(1)
    if i < ary.size:
        r = ary[i]
        out[i] = r.a + r["b"] + r.n.y + r.d[i % 5] + r.m[1, 1]
        ary[i].a = v * i
        r["b"] = i + 1
        r.c = r.c * 2
        r.n.z = r.a - 1
        r.d[i % 5] = 7
        r["m"][2, 0] = r.m[0, 1]


def test_record_array_fields(rng):
    a = random_records(rng, 40, ALIGNED)
    want_a = a.copy()
    out = np.full(40, np.nan)
    v = float(rng.standard_normal())
    k_fields[1, 64](a, v, out)
    w = want_a
    idx = np.arange(40)
    assert np.array_equal(out, w["a"] + w["b"] + w["n"]["y"] + w["d"][idx, idx % 5] + w["m"][:, 1, 1])
    w["a"] = v * idx
    w["b"] = idx + 1
    w["c"] *= 2
    w["n"]["z"] = w["a"] - 1
    w["d"][idx, idx % 5] = 7
    w["m"][:, 2, 0] = w["m"][:, 0, 1]
    same_records(a, w)


@pytest.mark.parametrize("dt", [ALIGNED, PACKED])
def test_device_array_of_records(rng, dt):
    a = random_records(rng, 40, dt)
    d = gpu.to_device(a)
    assert d.shape == (40,) and d.dtype == dt and d.itemsize == dt.itemsize
    same_records(d.copy_to_host(), a)
    same_records(d[5:9].copy_to_host(), a[5:9])
    e = gpu.device_array(40, dt)
    k_copy_records[1, 1](e, d, 3, 7)
    assert e.copy_to_host()[3] == a[7]
    if dt is ALIGNED:
        out = np.full(40, np.nan)
        v = float(rng.standard_normal())
        k_fields[1, 64](d, v, out)
        idx = np.arange(40)
        assert np.array_equal(out, a["a"] + a["b"] + a["n"]["y"] + a["d"][idx, idx % 5] + a["m"][:, 1, 1])
        assert np.array_equal(d.copy_to_host()["a"], v * idx)


@pytest.mark.parametrize("dt", [ALIGNED, PACKED])
def test_cuda_array_interface_of_records_is_typed_from_its_descr(dt):
    # a GPU array of records shows "|V<n>" as its typestr and its fields in `descr`; DLPack
    # has no records, so typing must not ask it (as it does for raw bytes: bfloat16)
    from gpujit.typing import typeof_string

    class GpuRecords:
        __cuda_array_interface__ = {"shape": (40,), "strides": None, "data": (0, False),
                                    "typestr": dt.str, "descr": dt.descr, "version": 3}

        def __dlpack__(self, **kw):
            raise BufferError("DLPack has no record dtypes")

    assert dt.str.startswith("|V")
    assert typeof_string(GpuRecords()) == typeof_string(np.zeros(40, dt))


@gpu.jit
def k_copy_records(ary, src, i, j):
    ary[i] = src[j]


def test_record_copy_between_arrays(rng):
    a, b = random_records(rng, 6, ALIGNED), random_records(rng, 6, ALIGNED)
    want = a.copy()
    want[4] = b[1]
    k_copy_records[1, 1](a, b, 4, 1)
    same_records(a, want)


def test_record_array_view_and_recarray(rng):
    a = random_records(rng, 20, ALIGNED).view(np.recarray)
    want = a.copy()
    out = np.full(10, np.nan)
    k_fields[1, 16](a[::2], 0.5, out)  # a strided view: every other record
    w = want[::2]
    idx = np.arange(10)
    assert np.array_equal(out, w["a"] + w["b"] + w["n"]["y"] + w["d"][idx, idx % 5] + w["m"][:, 1, 1])
    assert np.array_equal(a["a"][::2], 0.5 * idx) and np.array_equal(a["a"][1::2], want["a"][1::2])


def test_record_array_field_as_an_array(rng):
    # recarray's a.x: the field of every record, an array view written through too
    @gpu.jit
    def k(x, out1, out2):
        i = gpu.grid(1)
        if i < x.shape[0]:
            out1[i] = x.b[i] + x.c[i].imag
            out2[i] = x.a[i]
            x.a[i] = x.b[i] * 2.0
            x.n[i].y = 7

    a = random_records(rng, 24, ALIGNED)
    for view in (a.view(np.recarray), a.view(np.recarray)[::3]):
        want = view.copy()
        n = view.shape[0]
        out1, out2 = np.full(n, np.nan), np.full(n, np.nan)
        k[1, 32](view, out1, out2)
        np.testing.assert_array_equal(out1, want.b + want.c.imag.astype(np.float64))
        np.testing.assert_array_equal(out2, want.a)
        np.testing.assert_array_equal(view.a, want.b * 2.0)
        np.testing.assert_array_equal(view.n.y, np.full(n, 7))


def test_record_array_field_errors():
    def nested(x, out):
        out[0] = x.d[0][0]

    with pytest.raises(gpu.UnsupportedError, match="a view of a .* field"):
        gpu.jit(nested)[1, 1](np.zeros(2, ALIGNED), np.zeros(1))

    def packed(x, out):
        out[0] = x.i[1]

    with pytest.raises(gpu.UnsupportedError, match="packed records"):
        gpu.jit(packed)[1, 1](np.zeros(2, PACKED), np.zeros(1))


# -- single records -------------------------------------------------------------------------------
@gpu.jit
def k_record_arg(r, v, out):
    out[0] = r.i + r.j[2, 1]
    r.i = v
    r["k"] = -3
    r.j[0, 0] = r.j[1, 0] * 2


@pytest.mark.parametrize("make", [lambda a: a[1], lambda a: a.view(np.recarray)[1]])
def test_record_argument_written_back(rng, make):
    a = random_records(rng, 3, PACKED)
    want = a.copy()
    out = np.full(1, np.nan)
    rec = make(a)
    k_record_arg[1, 1](rec, 42, out)
    assert out[0] == want[1]["i"] + want[1]["j"][2, 1]
    want[1]["i"], want[1]["k"] = 42, -3
    want[1]["j"][0, 0] = want[1]["j"][1, 0] * 2
    assert rec["i"] == 42 and rec["k"] == -3
    same_records(a, want)


@gpu.jit(device=True)
def dev_sum(r):
    return r.a + r.b


@gpu.jit(device=True)
def dev_first(a):
    return a[0]


@gpu.jit
def k_device_records(ary, res, out):
    i = gpu.grid(1)
    if i < ary.size:
        out[i] = dev_sum(ary[i])
    if i == 0:
        res[0] = dev_first(ary)


def test_records_through_device_functions(rng):
    a = random_records(rng, 8, ALIGNED)
    out = np.full(8, np.nan)
    res = np.zeros(1, ALIGNED)
    k_device_records[1, 8](a, res, out)
    assert np.array_equal(out, a["a"] + a["b"])
    same_records(res, a[:1])


def test_eager_record_signature(rng):
    rec = from_dtype(ALIGNED)

    @gpu.jit(types.void(rec[:], types.int64))
    def k(ary, i):
        ary[i].b = ary[i].b * 3

    a = random_records(rng, 4, ALIGNED)
    want = a.copy()
    want[2]["b"] *= 3
    k[1, 1](a, 2)
    same_records(a, want)
    with pytest.raises(TypeError, match="No matching definition"):
        k[1, 1](np.zeros(4, PACKED), 0)


# -- errors ---------------------------------------------------------------------------------------
def test_bad_field_is_a_typing_error():
    def k(ary):
        ary[0].nope = 1

    with pytest.raises(gpu.TypingError, match="no field 'nope'"):
        gpu.jit(k)[1, 1](np.zeros(2, ALIGNED))


def test_misaligned_field_of_packed_record():
    dt = np.dtype([("a", np.int32), ("b", np.float64)])

    with pytest.raises(gpu.TypingError, match="type float64 is not aligned"):
        @gpu.jit((from_dtype(dt)[:],))
        def k(a):
            a[0].a = a[0].b


def test_wrong_store_into_field():
    def k(ary):
        ary[0].b = 1j

    with pytest.raises(gpu.TypingError, match="cannot store complex128 into field 'b'"):
        gpu.jit(k)[1, 1](np.zeros(2, ALIGNED))


# -- records in shared and local arrays -----------------------------------------------------------
SMALL = np.dtype([("a", np.float64), ("b", np.int32), ("d", np.uint8, (5,))], align=True)
SMALL_REC = from_dtype(SMALL)


@gpu.jit
def k_shared_local(ary, out):
    s = gpu.shared.array(16, dtype=SMALL)       # a NumPy structured dtype
    loc = gpu.local.array(2, dtype=SMALL_REC)   # a Record type
    i = gpu.threadIdx.x
    s[i] = ary[i]
    s[i].a += 1.5
    loc[1] = s[i]
    loc[1].b = loc[1].b * 2
    loc[1].d[4] = 9
    gpu.syncthreads()
    out[i] = s[15 - i].a + loc[1].b + loc[1].d[4] + loc[1].d[0]


def test_records_in_shared_and_local_arrays(rng):
    a = random_records(rng, 16, SMALL)
    out = np.full(16, np.nan)
    k_shared_local[1, 16](a, out)
    want = (a["a"][::-1] + 1.5) + a["b"] * 2 + 9 + a["d"][:, 0]
    assert np.array_equal(out, want)
