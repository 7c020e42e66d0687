"""Device arrays under numba's API (gpujit.devicearray, gpujit.cudadrv.devicearray
and gpujit.cudadrv.driver), checked against NumPy: memory layouts kept from the
host (F order, broadcast strides), contiguity flags, copies between every pair of
layouts, views (dtype, reshape, ravel, transpose, split), and the memory helpers."""
import numpy as np
import pytest

from conftest import poisoned, random_array
import gpujit
from gpujit import _core, cudadrv
from gpujit.cudadrv import devicearray as nda
from gpujit.cudadrv import driver


LAYOUTS = {
    "C": lambda a: np.ascontiguousarray(a),
    "F": lambda a: np.asfortranarray(a),
    "strided": lambda a: np.repeat(a, 2, axis=-1)[..., ::2],
}


def _broadcast(rng, dtype):
    core = random_array(rng, (3, 1, 5), dtype)
    return np.broadcast_to(core, (3, 4, 5))


@pytest.mark.parametrize("order", ["C", "F"])
def test_to_device_keeps_layout_and_flags(rng, order):
    for shape in [(7,), (4, 6), (1, 5), (5, 1), (3, 4, 2), (0, 3)]:
        h = np.array(random_array(rng, shape, np.float64), order=order)
        d = gpujit.to_device(h)
        assert d.strides == h.strides or h.size == 0
        assert d.flags["C_CONTIGUOUS"] == h.flags["C_CONTIGUOUS"]
        assert d.flags["F_CONTIGUOUS"] == h.flags["F_CONTIGUOUS"]
        assert d.is_c_contiguous() == h.flags["C_CONTIGUOUS"]
        assert d.is_f_contiguous() == h.flags["F_CONTIGUOUS"]
        out = d.copy_to_host()
        np.testing.assert_array_equal(out, h)
        assert out.strides == h.strides or h.size == 0


def test_to_device_broadcast_keeps_stride_zero(rng):
    b = _broadcast(rng, np.int32)
    d = gpujit.to_device(b)
    assert d.strides == b.strides and d.alloc_size == b.base.nbytes if b.base is not None else True
    np.testing.assert_array_equal(d.copy_to_host(), b)
    # a strided host array is copied compactly
    s = random_array(rng, (6, 8), np.int16)[:, ::3]
    ds = gpujit.to_device(s)
    assert ds.is_c_contiguous()
    np.testing.assert_array_equal(ds.copy_to_host(), s)


@pytest.mark.parametrize("dst", ["C", "F", "broadcast"])
@pytest.mark.parametrize("src", ["C", "F", "strided", "broadcast"])
def test_copy_to_device_between_layouts(rng, src, dst):
    base = random_array(rng, (3, 4, 5), np.float32)
    host = _broadcast(rng, np.float32) if src == "broadcast" else LAYOUTS[src](base)
    if dst == "broadcast":
        d = gpujit.to_device(_broadcast(rng, np.float32))
        want = np.broadcast_to(host[:, :1, :], host.shape)  # index 0 of the broadcast axis
    else:
        d = gpujit.to_device(LAYOUTS[dst](poisoned((3, 4, 5), np.float32)))
        want = host
    d.copy_to_device(host)
    np.testing.assert_array_equal(d.copy_to_host(), want)


def test_copy_to_device_zero_size_and_errors(rng):
    d = nda.DeviceNDArray(shape=(0,), strides=(8,), dtype=np.int8)
    h = np.ndarray(shape=(0,), strides=(0,), dtype=np.int8)
    d.copy_to_host(h)
    d.copy_to_device(h)
    dh = gpujit.to_device(h)
    assert dh.shape == (0,) and dh.strides == (0,)
    d.copy_to_device(dh)
    with pytest.raises(ValueError):
        gpujit.to_device(np.zeros(5)).copy_to_device(np.zeros(4))
    with pytest.raises(TypeError, match="incompatible dtype"):
        gpujit.to_device(np.zeros(5)).copy_to_host(np.zeros(5, np.float32))


def test_device_to_device_needs_one_layout(rng):
    a_c = random_array(rng, (4, 5, 3), np.int64)
    a_f = np.asfortranarray(a_c)
    d = gpujit.to_device(a_c)
    with pytest.raises(ValueError, match=r"incompatible strides: %s vs\. %s" % (
            str(a_c.strides).replace("(", r"\(").replace(")", r"\)"),
            str(a_f.strides).replace("(", r"\(").replace(")", r"\)"))):
        d.copy_to_device(gpujit.to_device(a_f))
    other = random_array(rng, (4, 5, 3), np.int64)
    d.copy_to_device(gpujit.to_device(other))
    np.testing.assert_array_equal(d.copy_to_host(), other)
    src = gpujit.to_device(random_array(rng, 20, np.int64))
    with pytest.raises(ValueError, match="non-contiguous buffer"):
        gpujit.to_device(np.zeros(10, np.int64)).copy_to_device(src[::2])
    assert nda.errmsg_contiguous_buffer.startswith("Array contains non-contiguous buffer")


@pytest.mark.parametrize("dtype", ["i4", "u4", "i8", "f8", "u2", "i1"])
def test_view_dtype(rng, dtype):
    h = random_array(rng, (3, 8), np.int16)
    d = gpujit.to_device(h)
    v = d.view(dtype)
    assert v.shape == h.view(dtype).shape and v.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(v.copy_to_host(), h.view(dtype))
    # a view shares memory
    v2 = d.view("u2")
    new = random_array(rng, (3, 8), np.uint16)
    v2.copy_to_device(new)
    np.testing.assert_array_equal(d.copy_to_host(), new.view(np.int16))


def test_view_dtype_errors(rng):
    h = random_array(rng, (4, 8), np.int16)
    d = gpujit.to_device(h)[:, ::2]
    np.testing.assert_array_equal(d.view("u2").copy_to_host(), h[:, ::2].view("u2"))
    with pytest.raises(ValueError, match="To change to a dtype of a different size, the last axis must be"):
        d.view("i4")
    with pytest.raises(ValueError, match="must be a divisor of the total size in bytes"):
        gpujit.to_device(random_array(rng, (4, 3), np.int16)).view("i4")


@pytest.mark.parametrize("order", ["C", "F", "A"])
def test_reshape_and_ravel_orders(rng, order):
    for make in (np.ascontiguousarray, np.asfortranarray):
        h = make(random_array(rng, (2, 5, 6), np.float64))
        d = gpujit.to_device(h)
        c_ok = h.flags.c_contiguous and order in "CA"
        f_ok = h.flags.f_contiguous and (order == "F" or (order == "A" and not h.flags.c_contiguous))
        if c_ok or f_ok:
            np.testing.assert_array_equal(d.ravel(order=order).copy_to_host(), h.ravel(order=order))
            np.testing.assert_array_equal(d.reshape(6, 10, order=order).copy_to_host(),
                                          h.reshape(6, 10, order=order))
            np.testing.assert_array_equal(d.reshape((-1, 3), order=order).copy_to_host(),
                                          h.reshape((-1, 3), order=order))
            assert d.ravel(order=order) is not d
        else:
            with pytest.raises(NotImplementedError):
                d.ravel(order=order)
    with pytest.raises(NotImplementedError):
        gpujit.to_device(random_array(rng, 20, np.float64))[::2].ravel()
    with pytest.raises(ValueError):
        gpujit.to_device(np.zeros(12)).reshape(5, 3)


def test_transpose(rng):
    # numba's rules: identity permutations of any rank return the array, a 2-D
    # transpose is a new C-contiguous array (not a view), other ranks are refused
    h3 = random_array(rng, (3, 4, 2), np.int32)
    d3 = gpujit.to_device(h3)
    assert d3.transpose((0, 1, 2)) is d3 and np.transpose(d3, axes=(0, 1, 2)) is d3
    for axes in [None, (2, 1, 0), (1, 0, 2)]:
        with pytest.raises(NotImplementedError, match="transposing a non-2D DeviceNDArray isn't supported"):
            d3.transpose(axes)
    with pytest.raises(NotImplementedError):
        gpujit.to_device(h3[0, 0]).T
    for dtype in (np.int32, np.float64, np.float32, np.int8):
        h = random_array(rng, (13, 37), dtype)
        d = gpujit.to_device(h)
        for src, want in ((d, h.T), (d[::2, 1::3], h[::2, 1::3].T)):
            for t in (src.T, np.transpose(src), src.transpose((1, 0))):
                assert t.shape == want.shape and t.strides == (want.shape[1] * h.itemsize, h.itemsize)
                assert t.flags["C_CONTIGUOUS"] and not t.flags["F_CONTIGUOUS"]
                np.testing.assert_array_equal(t.copy_to_host(), want)
        t = d.T
        t[0, 0] = h[0, 0] + 1  # a copy: the source is not written
        np.testing.assert_array_equal(d.copy_to_host(), h)
    d = gpujit.to_device(random_array(rng, (3, 4), np.int32))
    with pytest.raises(ValueError, match=r"invalid axes list \(0, 0\)"):
        d.transpose((0, 0))
    with pytest.raises(ValueError, match=r"invalid axes list \(0, 2\)"):
        d.transpose((0, 2))


def test_split(rng):
    h = random_array(rng, 23, np.float32)
    d = gpujit.to_device(h)
    pieces = list(d.split(5))
    assert [p.size for p in pieces] == [5, 5, 5, 5, 3]
    np.testing.assert_array_equal(np.concatenate([p.copy_to_host() for p in pieces]), h)
    pieces[1].copy_to_device(np.full(5, -1, np.float32))
    h[5:10] = -1
    np.testing.assert_array_equal(d.copy_to_host(), h)
    with pytest.raises(ValueError, match="only support 1d"):
        gpujit.to_device(np.zeros((2, 2))).split(1)
    with pytest.raises(ValueError, match="unit stride"):
        d[::2].split(2)


def test_array_protocol_len_and_zero_d(rng):
    h = random_array(rng, (5, 3), np.int16)
    d = gpujit.to_device(h)
    got = np.asarray(d)
    assert got.dtype == np.int16
    np.testing.assert_array_equal(got, h)
    np.testing.assert_array_equal(np.array(d, dtype=np.float64), h.astype(np.float64))
    with pytest.raises(ValueError, match="copy=False"):
        np.array(d, copy=False)
    assert len(d) == 5 and len(gpujit.device_array((7, 2))) == 7
    z = gpujit.to_device(np.asarray(rng.uniform()))
    assert z.ndim == 0 and z.shape == () and z.size == 1
    nda.verify_cuda_ndarray_interface(z)
    with pytest.raises(TypeError):
        len(z)


def test_device_array_shapes():
    for bad in (1.23, np.float64(1.23), np.array(1.23), [1.1], (1.1, 2.2), np.array([1.1])):
        with pytest.raises(TypeError):
            gpujit.device_array(shape=bad)
    assert gpujit.device_array(shape=np.array([10, 10]), dtype=np.bool_).shape == (10, 10)
    assert gpujit.device_array([3, 4], order="F").is_f_contiguous()
    f = np.zeros((4, 5), order="F")
    assert gpujit.device_array_like(f).strides == f.strides


def test_relaxed_strides():
    a = nda.DeviceNDArray((1, 10), (800, 8), np.float64)
    assert a.flags["C_CONTIGUOUS"] and a.flags["F_CONTIGUOUS"]


def test_stream_bind():
    s = gpujit.stream()
    with s.auto_synchronize() as t:
        assert t is s
        a = gpujit.device_array((3, 3), stream=s)
    assert a.stream is s
    b = a.bind(s)
    assert b.stream is s and b.shape == a.shape
    assert gpujit.device_array(3).bind(0).stream == 0


def test_array_core_and_is_contiguous(rng):
    views = [np.zeros(10)[::2], np.zeros((10, 12))[::2, ::2], np.zeros((10, 12), order="F")[::2, ::2],
             np.zeros((4, 6)), np.zeros((4, 6)).T, np.broadcast_to(np.zeros((3, 1)), (3, 5))]
    for v in views:
        assert nda.is_contiguous(v) == nda.array_core(v).flags["C_CONTIGUOUS"]
    for shape, order in [((10,), "C"), ((10, 12), "C"), ((10, 12), "F"), ((10, 12, 14), "F")]:
        d = gpujit.device_array(shape, order=order)
        for x in (d, d[::2]):
            assert nda.is_contiguous(x) == nda.array_core(x).flags["C_CONTIGUOUS"]
    b = gpujit.to_device(_broadcast(rng, np.int8))
    assert nda.array_core(b).shape == (3, 5)


def test_helpers_and_auto_device(rng):
    h = random_array(rng, 10, np.int32)
    d, new = nda.auto_device(h)
    assert new and nda.is_cuda_ndarray(d) and not nda.is_cuda_ndarray(h)
    d2, new2 = nda.auto_device(d)
    assert d2 is d and not new2
    assert gpujit.to_device(d) is d
    with pytest.raises(ValueError):
        nda.verify_cuda_ndarray_interface(h)
    nda.check_array_compatibility(h, h.copy())
    with pytest.raises(TypeError, match="incompatible dtype"):
        nda.check_array_compatibility(h, h.astype(np.int64))
    with pytest.raises(ValueError, match="incompatible shape"):
        nda.check_array_compatibility(h, h[:5])
    with pytest.raises(ValueError, match="incompatible strides"):
        nda.check_array_compatibility(np.zeros((2, 3)), np.zeros((2, 3), order="F"))
    with pytest.raises(ValueError, match="non-contiguous"):
        nda.sentry_contiguous(np.zeros((4, 4))[::2, ::2])
    nda.sentry_contiguous(np.broadcast_to(np.zeros(3), (4, 3)))
    e = nda.from_array_like(np.zeros((3, 4), order="F"))
    assert e.strides == (8, 24)


# ---- gpujit.cudadrv.driver --------------------------------------------------------

def test_driver_memory_functions(rng):
    n = 48
    mem = cudadrv.current_context().memhostalloc(n, mapped=True)
    ary = np.ndarray(shape=n, dtype=np.uint8, buffer=mem)
    v = int(rng.integers(0, 256))
    driver.device_memset(mem, v, n)
    assert (ary == v).all()
    h = random_array(rng, 12, np.float32)
    d = gpujit.to_device(poisoned(12, np.float32))
    assert driver.device_memory_size(d) == 48
    driver.host_to_device(d, h, h.nbytes)
    np.testing.assert_array_equal(d.copy_to_host(), h)
    back = poisoned(12, np.float32)
    driver.device_to_host(back, d, back.nbytes)
    np.testing.assert_array_equal(back, h)
    d2 = gpujit.device_array(12, np.float32)
    driver.device_to_device(d2, d, 48)
    np.testing.assert_array_equal(d2.copy_to_host(), h)
    driver.device_memset(d, 0, 24)
    np.testing.assert_array_equal(d.copy_to_host(), np.concatenate([np.zeros(6, np.float32), h[6:]]))
    with pytest.raises(ValueError):
        driver.device_memset(d, 0, 49)
    m = gpujit.mapped_array(10, dtype=np.uint32)
    m.fill(123)
    driver.device_memset(m, 0, driver.device_memory_size(m))
    assert (m == 0).all()
    assert isinstance(driver.CudaAPIError(1, "x"), gpujit.CudaError)
    assert driver._have_nvjitlink() is False
    assert driver.is_device_memory(d) and not driver.is_device_memory(h)


def test_contexts_gpus_and_streams():
    if _core.is_available():
        pytest.skip("the cpu target's view of devices")
    ctx = gpujit.current_context()
    free, total = ctx.get_memory_info()
    assert 0 < free <= total
    ctx.deallocations.clear()
    with ctx.deallocations.disable():
        pass
    ctx.reset()
    ctx.synchronize()
    assert len(gpujit.gpus) == 1 and gpujit.gpus.current.id == 0
    with gpujit.gpus[0] as g:
        assert g.id == 0
    with pytest.raises(IndexError):
        gpujit.gpus[1]
    assert gpujit.select_device(0).target == "cpu"
    with pytest.raises(ValueError):
        gpujit.select_device(1)
    for s in (gpujit.legacy_default_stream(), gpujit.per_thread_default_stream(), gpujit.default_stream()):
        s.synchronize()
    assert gpujit.is_supported_version()
    with gpujit.defer_cleanup():
        pass
    gpujit.close()
    a = np.arange(10)
    with gpujit.pinned(a):
        np.testing.assert_array_equal(gpujit.to_device(a).copy_to_host(), a)
    for f in (gpujit.mapped_array, gpujit.managed_array, gpujit.pinned_array):
        x = f((3, 4), dtype=np.int16, order="F")
        assert isinstance(x, np.ndarray) and x.shape == (3, 4) and x.flags.f_contiguous


def test_detect_reports_no_devices(capsys):
    if _core.is_available():
        pytest.skip("a CUDA driver is present")
    if gpujit.cudadrv.cpu_chosen():   # GPUJIT_TARGET=cpu: the simulator's answer, one device
        assert gpujit.detect() is True
        assert "Found 1 CUDA devices (the cpu target, chosen" in capsys.readouterr().out
        return
    assert gpujit.detect() is False
    assert "Found 0 CUDA devices" in capsys.readouterr().out


def test_setitem_broadcasts_like_numpy(rng):
    h = random_array(rng, (5, 7), np.int32)
    d = gpujit.to_device(h)
    row = random_array(rng, 7, np.int32)
    d[1:4] = row
    h[1:4] = row
    col = random_array(rng, (5, 1), np.int32)
    d[:, ::3] = col
    h[:, ::3] = col
    dev_row = gpujit.to_device(random_array(rng, (1, 7), np.int32))
    d[4:] = dev_row
    h[4:] = dev_row.copy_to_host()
    d.setitem((0, 2), -5, stream=gpujit.stream())
    h[0, 2] = -5
    np.testing.assert_array_equal(d.copy_to_host(), h)
    with pytest.raises(ValueError, match="Can't assign 3-D array to 2-D self"):
        d[:] = np.ones((1, 2, 3))
    with pytest.raises(ValueError, match="Can't copy sequence with size 2 to array axis 1 with dimension 7"):
        d[:] = [1, 3]


def test_small_numba_names():
    assert gpujit.is_float16_supported() and gpujit.is_bfloat16_supported() and gpujit.is_fp8_supported()
    assert gpujit.literal_unroll((1, 2)) == (1, 2)
    assert issubclass(gpujit.CudaSupportError, Exception)


@pytest.mark.skipif(gpujit.current_target() != "cuda", reason="the CUDA Array Interface describes device memory")
def test_from_cuda_array_interface(rng):
    a = rng.standard_normal(17)
    d = gpujit.to_device(a)
    v = gpujit.from_cuda_array_interface(d.__cuda_array_interface__, owner=d)
    np.testing.assert_array_equal(v.copy_to_host(), a)


def test_setitem_synchronises_only_without_a_stream(rng):
    # numba's rule: d[i] = v waits for the default stream when neither the call nor
    # the array names a stream; an array's stream or a given one (any, the default
    # stream's objects included) queues the copy without waiting
    from unittest import mock
    streams = [gpujit.stream(), gpujit.default_stream(), gpujit.legacy_default_stream(),
               gpujit.per_thread_default_stream()]
    cases = [(None, None)] + [(s, None) for s in streams] + [(None, s) for s in streams]
    for kept, given in cases:
        h = random_array(rng, (6, 7), np.int64)
        d = gpujit.to_device(h, stream=kept or 0)
        v = int(rng.integers(-1000, 1000))
        with mock.patch.object(driver.Stream, "synchronize",
                               side_effect=lambda *a: gpujit.synchronize()) as sync:
            if given is None:
                d[2, 3] = v
                d[::2, 1::3] = v + 1  # a strided view
            else:
                d.setitem((2, 3), v, stream=given)
                d.setitem((slice(None, None, 2), slice(1, None, 3)), v + 1, stream=given)
        assert sync.call_count == (2 if kept is None and given is None else 0), (kept, given)
        gpujit.synchronize()
        h[2, 3] = v
        h[::2, 1::3] = v + 1
        np.testing.assert_array_equal(d.copy_to_host(), h)


def test_copy_to_device_needs_a_contiguous_destination(rng):
    h = random_array(rng, (5, 5), np.int32)
    d = gpujit.to_device(np.asfortranarray(h))
    row = random_array(rng, 5, np.int32)
    with pytest.raises(ValueError, match="non-contiguous buffer"):
        d[2].copy_to_device(row)  # strides of 20 bytes: not one memcpy
    d[:, 2].copy_to_device(row)  # a column of an F-order array is contiguous
    d[2] = row + 1  # setitem writes a strided view
    h[:, 2] = row
    h[2] = row + 1
    np.testing.assert_array_equal(d.copy_to_host(), h)
    b = gpujit.to_device(np.broadcast_to(h[:1], (4, 5)))  # a broadcast array: its core is written
    b.copy_to_device(np.broadcast_to(row, (4, 5)))
    np.testing.assert_array_equal(b.copy_to_host(), np.broadcast_to(row, (4, 5)))
