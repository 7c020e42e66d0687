"""gpujit.random: xoroshiro128+ states and draws, bit-exact against a Python
model of numba.cuda.random's generator (seeding, 2**64 jumps, conversions)."""
import numpy as np
import pytest

import gpujit as gpu
from gpujit import random as gr


def reference_states(seed, n, start=0):
    s = gr._seed_state(seed & gr._M64)
    for _ in range(start):
        s = gr._jump_py(*s)
    out = [s]
    for _ in range(1, n):
        out.append(gr._jump_py(*out[-1]))
    return out


def reference_draws(state, count):
    s0, s1 = state
    vals = []
    for _ in range(count):
        vals.append(((s0 + s1) & gr._M64) >> 11)
        s0, s1 = gr._next_py(s0, s1)
    return np.array(vals, dtype=np.float64) * (1.0 / 9007199254740992.0)


@gpu.jit
def uniforms64(states, out):
    i = gpu.grid(1)
    if i < out.shape[0]:
        for j in range(out.shape[1]):
            out[i, j] = gr.xoroshiro128p_uniform_float64(states, i)


@gpu.jit
def uniforms32(states, out):
    i = gpu.grid(1)
    if i < out.shape[0]:
        for j in range(out.shape[1]):
            out[i, j] = gr.xoroshiro128p_uniform_float32(states, i)


@pytest.mark.parametrize("start", [0, 5])
def test_states_match_sequential_jumps(rng, start):
    seed = int(rng.integers(0, 2**63))
    n = 37
    states = gr.create_xoroshiro128p_states(n, seed=seed, subsequence_start=start).copy_to_host()
    want = reference_states(seed, n, start)
    assert [tuple(int(v) for v in row) for row in states] == want


def test_uniform_draws_bit_exact(rng):
    seed = int(rng.integers(0, 2**63))
    n, m = 300, 18     # 5,400 draws: the 0.02 bound on the mean is 5 standard errors
    states = gr.create_xoroshiro128p_states(n, seed=seed)
    out = np.full((n, m), np.nan)
    uniforms64[3, 128](states, out)
    ref = reference_states(seed, n)
    for i in rng.choice(n, 10, replace=False):
        np.testing.assert_array_equal(out[i], reference_draws(ref[i], m))
    assert 0.0 <= out.min() and out.max() < 1.0
    assert abs(out.mean() - 0.5) < 0.02


def test_uniform_float32_rounds_the_float64_draw(rng):
    seed = int(rng.integers(0, 2**63))
    states = gr.create_xoroshiro128p_states(64, seed=seed)
    out = np.full((64, 4), np.nan, np.float32)
    uniforms32[1, 64](states, out)
    ref = reference_states(seed, 64)
    np.testing.assert_array_equal(out[7], reference_draws(ref[7], 4).astype(np.float32))


def test_same_seed_same_numbers_different_seed_different(rng):
    seed = int(rng.integers(0, 2**63))
    a = np.full((128, 3), np.nan)
    b = np.full((128, 3), np.nan)
    c = np.full((128, 3), np.nan)
    uniforms64[1, 128](gr.create_xoroshiro128p_states(128, seed=seed), a)
    uniforms64[1, 128](gr.create_xoroshiro128p_states(128, seed=seed), b)
    uniforms64[1, 128](gr.create_xoroshiro128p_states(128, seed=seed + 1), c)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_bad_states():
    for bad in (gpu.device_array((4, 3), np.uint64), gpu.device_array((4, 2), np.uint64)):
        with pytest.raises(TypeError):
            gr.init_xoroshiro128p_states(bad, 1)


def test_states_are_numbas_records(rng):
    assert gr.xoroshiro128p_dtype == np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)
    n = int(rng.integers(1, 300))
    states = gr.create_xoroshiro128p_states(n, seed=int(rng.integers(0, 2**63)))
    assert states.shape == (n,) and states.dtype == gr.xoroshiro128p_dtype
    host = states.copy_to_host()
    assert host.shape == (n,) and host.dtype == gr.xoroshiro128p_dtype
    assert np.unique(host).size == n   # one seed's n states are all different


@gpu.jit
def every_draw(states, o64, o32, n32, n64, raw):
    i = gpu.grid(1)
    if i < o64.shape[0]:
        for j in range(o64.shape[1]):
            o64[i, j] = gr.xoroshiro128p_uniform_float64(states, i)
            o32[i, j] = gr.xoroshiro128p_uniform_float32(states, i)
        for j in range(n32.shape[1]):
            n32[i, j] = gr.xoroshiro128p_normal_float32(states, i)
            n64[i, j] = gr.xoroshiro128p_normal_float64(states, i)
        gr.xoroshiro128p_jump(states, i)
        for j in range(raw.shape[1]):
            raw[i, j] = gr.xoroshiro128p_next(states, i)


def test_fixed_seed_gives_the_same_numbers():
    # values recorded from this generator when its states were an (n, 2) uint64 array
    states = gr.create_xoroshiro128p_states(64, seed=1234, subsequence_start=2)
    host = states.copy_to_host()
    assert (int(host[0]["s0"]), int(host[0]["s1"])) == (6344182779895303839, 14223811519519052581)
    o64, n64 = np.full((64, 5), np.nan), np.full((64, 4), np.nan)
    o32, n32 = np.full((64, 5), np.nan, np.float32), np.full((64, 4), np.nan, np.float32)
    raw = np.zeros((64, 3), np.uint64)
    every_draw[2, 32](states, o64, o32, n32, n64, raw)
    assert o64[3, 0] == 0.2801134421630609 and o32[10, 4] == np.float32(0.46731171011924744)
    # numba's normal_float64 draws two float32 uniforms (a float32 log): its value, not Box-Muller of float64s
    assert n32[20, 1] == np.float32(-1.3784641027450562) and n64[63, 3] == -1.1442026749310275
    assert raw[5, 0] == 10701762307030729050
    after = states.copy_to_host()
    assert (int(after[40]["s0"]), int(after[40]["s1"])) == (251570018025611718, 8890651575775549951)


@gpu.jit
def normals(states, out32, out64):
    i = gpu.grid(1)
    if i < out64.shape[0]:
        for j in range(out64.shape[1]):
            out32[i, j] = gr.xoroshiro128p_normal_float32(states, i)
            out64[i, j] = gr.xoroshiro128p_normal_float64(states, i)


def test_normal_draws(rng):
    seed = int(rng.integers(0, 2**63))
    n, m = 512, 128    # 65,536 draws: the 0.02 bounds are 5 standard errors of mean and std
    states = gr.create_xoroshiro128p_states(n, seed=seed)
    o32 = np.full((n, m), np.nan, np.float32)
    o64 = np.full((n, m), np.nan)
    normals[4, 128](states, o32, o64)
    for o in (o32, o64):
        assert np.isfinite(o).all()
        assert abs(o.mean()) < 0.02 and abs(o.std() - 1.0) < 0.02
    # the float64 draw of thread 3: Box-Muller of its 2nd and 3rd uniforms (the 1st pair went to
    # float32), taken as float32 uniforms as numba does, so log(u1) is a float32 log
    u = reference_draws(reference_states(seed, 4)[3], 4).astype(np.float32)
    want = np.sqrt(-2.0 * np.float64(np.log(u[2]))) * np.cos(2 * np.pi * np.float64(u[3]))
    np.testing.assert_allclose(o64[3, 0], want, rtol=2e-6)


def test_draws_are_numbas_bit_for_bit(rng):
    """Every draw equals numba.cuda.random's own functions run by numba's CPU JIT on the same
    seed's states (numba's normal_float64 takes float32 uniforms: so does gpujit's); on the GPU
    the normals within libdevice's rounding of their math functions."""
    numba = pytest.importorskip("numba")
    nr = pytest.importorskip("numba.cuda.random")
    seed, n = int(rng.integers(0, 2**63)), 96
    states = gr.create_xoroshiro128p_states(n, seed=seed)
    ref = np.empty(n, dtype=nr.xoroshiro128p_dtype)
    nr.init_xoroshiro128p_states_cpu(ref, seed, 0)
    assert np.array_equal(states.copy_to_host().view(np.uint64), ref.view(np.uint64))

    @numba.njit
    def numba_draws(st, o64, o32, n32, n64):
        for i in range(o64.shape[0]):
            for j in range(o64.shape[1]):
                o64[i, j] = nr.xoroshiro128p_uniform_float64(st, i)
                o32[i, j] = nr.xoroshiro128p_uniform_float32(st, i)
            for j in range(n32.shape[1]):
                n32[i, j] = nr.xoroshiro128p_normal_float32(st, i)
                n64[i, j] = nr.xoroshiro128p_normal_float64(st, i)

    got = [np.full((n, 3), np.nan), np.full((n, 3), np.nan, np.float32),
           np.full((n, 6), np.nan, np.float32), np.full((n, 6), np.nan)]
    want = [np.zeros_like(g) for g in got]
    every_draw[3, 32](states, *got, np.zeros((n, 1), np.uint64))
    numba_draws(ref, *want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype
        if i < 2 or gpu.current_target() == "cpu":
            assert np.array_equal(g, w)   # the uniforms are integer work on both targets
        else:   # a normal's log, sqrt and cos are libdevice's on the GPU, the C library's here
            tol = 1e-6 if g.dtype == np.float32 else 1e-13
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
