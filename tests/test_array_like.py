"""device_array_like, pinned_array_like, mapped_array(_like) keep the order of the source's axes
(contiguous, as np.empty_like picks for order 'K'); DeviceArray.flags; auto_device. Checked
against NumPy on C, F, strided, reversed and transposed sources of 1-3 dimensions."""
import numpy as np
import pytest

import gpujit as gpu
from gpujit import devicearray


def sources():
    for shape in [(10,), (10, 12), (4, 6, 5)]:
        for order in "CF":
            a = np.zeros(shape, order=order)
            yield a
            yield a[::2]
            yield a.T
            if a.ndim >= 2:
                yield a[::2, ::-3]
                yield a[::2, ::3].T
                yield np.swapaxes(a, 0, -1)[1:]


LIKES = [gpu.device_array_like, gpu.pinned_array_like, gpu.mapped_array_like]


@pytest.mark.parametrize("like", LIKES, ids=lambda f: f.__name__)
def test_like_numpy_empty_like(like):
    n = 0
    for src in sources():
        want = np.empty_like(src)
        for s in (src, devicearray.DeviceArray(src.shape, src.strides, src.dtype,
                                               gpu_data=gpu.device_array(src.size * 4).gpu_data)
                  if all(st >= 0 for st in src.strides) else src):
            got = like(s)
            assert got.shape == want.shape and got.dtype == want.dtype
            assert got.strides == want.strides, (src.shape, src.strides)
            assert got.flags["C_CONTIGUOUS"] == want.flags["C_CONTIGUOUS"]
            assert got.flags["F_CONTIGUOUS"] == want.flags["F_CONTIGUOUS"]
            n += 1
    assert n > 30


def test_flags():
    d = gpu.device_array((4, 5))
    assert d.flags["C_CONTIGUOUS"] and not d.flags["F_CONTIGUOUS"] and d.flags.c_contiguous
    f = gpu.device_array((4, 5), order="F")
    assert f.flags.f_contiguous and not f.flags.c_contiguous
    v = d[:, ::2]
    assert not v.flags["C_CONTIGUOUS"] and not v.flags["F_CONTIGUOUS"]
    with pytest.raises(AttributeError):
        d.flags.writeable_nope


def test_mapped_array_in_kernel(rng):
    @gpu.jit
    def k(a):
        i = gpu.grid(1)
        if i < a.size:
            a[i] = a[i] * 2 + 1

    m = gpu.mapped_array(100, dtype=np.float32)
    x = rng.uniform(-1, 1, 100).astype(np.float32)
    m[:] = x
    k[1, 128](m)
    np.testing.assert_array_equal(m, x * 2 + 1)
    f = gpu.mapped_array((3, 4), order="F")
    assert f.flags["F_CONTIGUOUS"] and f.shape == (3, 4)


def test_auto_device(rng):
    x = rng.uniform(size=(3, 4))
    d, converted = devicearray.auto_device(x)
    assert converted and isinstance(d, gpu.DeviceArray)
    np.testing.assert_array_equal(d.copy_to_host(), x)
    assert devicearray.auto_device(d) == (d, False)
    s, converted = devicearray.auto_device(2)
    assert converted and s.shape == () and s.copy_to_host() == 2
    fx = np.asfortranarray(x)
    fd, _ = devicearray.auto_device(fx)
    assert fd.strides == fx.strides
    np.testing.assert_array_equal(fd.copy_to_host(), x)
    with pytest.raises(ValueError, match="not contiguous"):
        devicearray.auto_device(x[:, ::2])
