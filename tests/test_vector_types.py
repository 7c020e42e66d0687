"""CUDA's vector types (gpu.float32x3, gpu.int16x2, their C aliases gpu.float3,
gpu.short2, ...): construction from numbers and smaller vectors, .x .y .z .w,
passing to and returning from device functions."""
import numpy as np
import pytest

import gpujit as gpu
from gpujit.vector_types import vector_types
from conftest import poisoned


def test_names_and_aliases():
    assert len(vector_types) == 40
    assert gpu.float32x3 is gpu.float3 and gpu.float64x2 is gpu.double2 and gpu.int16x4 is gpu.short4
    assert gpu.uint32x1 is gpu.uint1 and gpu.int64x2 is gpu.long2 is gpu.longlong2
    vt = vector_types["float32x3"]
    assert vt.base_type is gpu.float32 and vt.num_elements == 3 and vt.attr_names == ("x", "y", "z")
    assert "float3" in vt.user_facing_object.aliases and "int8x4" in dir(gpu)
    with pytest.raises(AttributeError):
        gpu.float32x5
    with pytest.raises(RuntimeError):
        gpu.float3(1.0, 2.0, 3.0)


@pytest.mark.parametrize("name", sorted(vector_types))
def test_every_type_from_numbers_and_vectors(rng, name):
    vt = vector_types[name]
    ctor, n, base = vt.user_facing_object, vt.num_elements, vt.base_type
    one, two, three = (getattr(gpu, name[:-1] + str(m)) for m in (1, 2, 3))
    dt = np.dtype(base)
    vals = (rng.integers(0, 100, 4) if dt.kind in "iu" else rng.uniform(-100, 100, 4)).astype(dt)

    if n == 1:
        def k(out, a):
            v = ctor(a[0])
            w = ctor(one(a[0]))
            out[0] = v.x
            out[1] = w.x
    elif n == 2:
        def k(out, a):
            v = ctor(a[0], a[1])
            w = ctor(one(a[1]), a[0])
            out[0], out[1] = v.x, v.y
            out[2], out[3] = w.x, w.y
    elif n == 3:
        def k(out, a):
            v = ctor(a[0], a[1], a[2])
            w = ctor(a[2], two(a[0], a[1]))
            out[0], out[1], out[2] = v.x, v.y, v.z
            out[3], out[4], out[5] = w.x, w.y, w.z
    else:
        def k(out, a):
            v = ctor(a[0], a[1], a[2], a[3])
            w = ctor(three(a[3], a[2], a[1]), one(a[0]))
            out[0], out[1], out[2], out[3] = v.x, v.y, v.z, v.w
            out[4], out[5], out[6], out[7] = w.x, w.y, w.z, w.w
    want = {1: [0, 0], 2: [0, 1, 1, 0], 3: [0, 1, 2, 2, 0, 1], 4: [0, 1, 2, 3, 3, 2, 1, 0]}[n]
    out = poisoned(len(want), dt)
    gpu.jit(k)[1, 1](out, vals)
    np.testing.assert_array_equal(out, vals[want])


def test_items_convert_and_device_functions(rng):
    @gpu.jit(device=True)
    def norm2(v):
        return v.x * v.x + v.y * v.y + v.z * v.z

    @gpu.jit(device=True)
    def scaled(v, s):
        return gpu.float3(v.x * s, v.y * s, v.z * s)

    @gpu.jit
    def k(out, a):
        i = gpu.grid(1)
        if i < out.shape[0]:
            v = gpu.float32x3(a[i, 0], a[i, 1], 2)       # float64 and int items convert to float32
            w = scaled(v, gpu.float32(0.5))
            out[i, 0] = norm2(v)
            out[i, 1] = w.x + w.y + w.z
    a = rng.uniform(-3, 3, (100, 2))
    out = poisoned((100, 2), np.float32)
    k[2, 64](out, a)
    v = np.stack([a[:, 0].astype(np.float32), a[:, 1].astype(np.float32), np.full(100, 2, np.float32)], axis=1)
    np.testing.assert_allclose(out[:, 0], (v * v).sum(axis=1), rtol=1e-6)
    np.testing.assert_allclose(out[:, 1], (v * np.float32(0.5)).sum(axis=1), rtol=1e-6)


def test_errors_name_the_line():
    def too_few(out):
        v = gpu.float32x3(1.0, 2.0)
        out[0] = v.x

    def no_member(out):
        v = gpu.float32x2(1.0, 2.0)
        out[0] = v.z

    def bad_item(out):
        v = gpu.int32x2(out, 1)
        out[0] = v.x
    with pytest.raises(gpu.TypingError, match=r"float32x3\(\) makes 3 items from its arguments, got 2"):
        gpu.jit("void(float32[:])")(too_few)
    with pytest.raises(gpu.TypingError, match=r"float32x2 has no attribute 'z'"):
        gpu.jit("void(float32[:])")(no_member)
    with pytest.raises(gpu.TypingError, match=r"int32x2\(\) takes numbers and vectors, not float32\[:\]"):
        gpu.jit("void(float32[:])")(bad_item)
