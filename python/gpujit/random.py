"""Random numbers in kernels: numba.cuda.random's xoroshiro128+ API.

    from gpujit.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

    states = create_xoroshiro128p_states(n_threads, seed=1)

    @gpu.jit
    def k(states, out):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = xoroshiro128p_uniform_float32(states, i)

Each thread owns one generator state: a record of two uint64 words, s0 and
s1, of xoroshiro128p_dtype (numba's layout), in a device array of n records.
State i is the seed's state jumped ahead i times by 2**64 steps, exactly as
numba.cuda.random does, so sequences are reproducible by seed, equal on the
GPU and the CPU backend, and equal to numba's. The jump-ahead runs in parallel: a kernel applies J**(start + i) to
the seed's state from precomputed powers J**(2**k) of the jump, a linear map
over GF(2).
"""
import math

import numpy as np

from . import dispatcher as _dispatcher
from .devicearray import device_array
from .intrinsics import grid as _grid

import gpujit as _gpu  # noqa: E402  (the kernels below use `_gpu.` like user code)

__all__ = ["create_xoroshiro128p_states", "init_xoroshiro128p_states", "xoroshiro128p_next",
           "xoroshiro128p_jump", "xoroshiro128p_uniform_float32", "xoroshiro128p_uniform_float64",
           "xoroshiro128p_normal_float32", "xoroshiro128p_normal_float64", "xoroshiro128p_dtype",
           "init_xoroshiro128p_state", "rotl", "uint64_to_unit_float64", "uint64_to_unit_float32",
           "init_xoroshiro128p_states_cpu"]

# a generator state, as numba lays it out
xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)

_JUMP = (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922)
_M64 = (1 << 64) - 1


def _device(fn):
    return _dispatcher.DeviceFunction(fn)


@_device
def _rotl(x, k):
    return (x << k) | (x >> (_gpu.uint64(64) - k))


@_device
def xoroshiro128p_next(states, index):
    """Advance thread `index`'s generator; returns the next uint64."""
    s0 = states[index]["s0"]
    s1 = states[index]["s1"]
    result = s0 + s1
    s1 ^= s0
    states[index]["s0"] = _rotl(s0, _gpu.uint64(55)) ^ s1 ^ (s1 << _gpu.uint64(14))
    states[index]["s1"] = _rotl(s1, _gpu.uint64(36))
    return result


@_device
def xoroshiro128p_jump(states, index):
    """Advance thread `index`'s generator by 2**64 steps."""
    s0 = _gpu.uint64(0)
    s1 = _gpu.uint64(0)
    for word in range(2):
        jump = _gpu.uint64(0xBEAC0467EBA5FACB) if word == 0 else _gpu.uint64(0xD86B048B86AA9922)
        for b in range(64):
            if (jump >> _gpu.uint64(b)) & _gpu.uint64(1):
                s0 ^= states[index]["s0"]
                s1 ^= states[index]["s1"]
            xoroshiro128p_next(states, index)
    states[index]["s0"] = s0
    states[index]["s1"] = s1


@_device
def _unit_float64(x):
    return _gpu.float64(x >> _gpu.uint64(11)) * (1.0 / 9007199254740992.0)


@_device
def xoroshiro128p_uniform_float64(states, index):
    """A float64 uniform on [0, 1)."""
    return _unit_float64(xoroshiro128p_next(states, index))


@_device
def xoroshiro128p_uniform_float32(states, index):
    """A float32 uniform on [0, 1) (rounded from the float64 one, as numba)."""
    return _gpu.float32(_unit_float64(xoroshiro128p_next(states, index)))


@_device
def xoroshiro128p_normal_float64(states, index):
    """A float64 standard normal (Box-Muller, one of the pair). As numba's, from two float32
    uniforms (so log(u1) is a float32 log), for numba's numbers bit for bit."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2)


@_device
def xoroshiro128p_normal_float32(states, index):
    """A float32 standard normal (Box-Muller, one of the pair)."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(_gpu.float32(-2.0) * math.log(u1)) * math.cos(_gpu.float32(6.2831855) * u2)


@_device
def rotl(x, k):
    """x (a uint64) rotated left by k bits, 0 < k < 64."""
    return _rotl(_gpu.uint64(x), _gpu.uint64(k))


@_device
def uint64_to_unit_float64(x):
    """A float64 in [0, 1) from the top 53 bits of the uint64 x."""
    return _unit_float64(_gpu.uint64(x))


@_device
def uint64_to_unit_float32(x):
    """uint64_to_unit_float64(x) rounded to float32."""
    return _gpu.float32(_unit_float64(_gpu.uint64(x)))


@_device
def init_xoroshiro128p_state(states, index, seed):
    """Set thread `index`'s state from a 64-bit seed by splitmix64 (both words equal), so
    that small seeds do not start predictable sequences."""
    z = _gpu.uint64(seed) + _gpu.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> _gpu.uint64(30))) * _gpu.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _gpu.uint64(27))) * _gpu.uint64(0x94D049BB133111EB)
    z = z ^ (z >> _gpu.uint64(31))
    states[index]["s0"] = z
    states[index]["s1"] = z


# ---- creating states: jump-ahead by powers of the jump matrix ----------------

def _next_py(s0, s1):
    s1 ^= s0
    rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & _M64  # noqa: E731
    return rotl(s0, 55) ^ s1 ^ ((s1 << 14) & _M64), rotl(s1, 36)


def _jump_py(s0, s1):
    t0 = t1 = 0
    for word in _JUMP:
        for b in range(64):
            if word >> b & 1:
                t0 ^= s0
                t1 ^= s1
            s0, s1 = _next_py(s0, s1)
    return t0, t1


def _seed_state(seed):
    """splitmix64 of the seed, both words equal, as numba."""
    z = (seed + 0x9E3779B97F4A7C15) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    z ^= z >> 31
    return z, z


_POWERS = None


def _jump_powers():
    """(64, 128, 2) uint64: column b of J**(2**k) as its two words."""
    global _POWERS
    if _POWERS is None:
        cols = np.zeros((128, 128), np.uint8)  # cols[b] = J(e_b) as 128 bits
        for b in range(128):
            s = (1 << b, 0) if b < 64 else (0, 1 << (b - 64))
            t0, t1 = _jump_py(*s)
            v = t0 | (t1 << 64)
            cols[b] = [(v >> r) & 1 for r in range(128)]
        m = cols.T.astype(np.int64)  # m @ x applies J to a bit vector x
        out = np.zeros((64, 128, 2), np.uint64)
        weights = (np.uint64(1) << np.arange(64, dtype=np.uint64))
        for k in range(64):
            c = m.T.astype(np.uint64)  # rows: images of the basis vectors
            out[k, :, 0] = (c[:, :64] * weights).sum(axis=1, dtype=np.uint64)
            out[k, :, 1] = (c[:, 64:] * weights).sum(axis=1, dtype=np.uint64)
            m = (m @ m) % 2
        _POWERS = out
    return _POWERS


@_gpu.jit
def _init_states(states, powers, s0, s1, start):
    i = _grid(1)
    if i >= states.shape[0]:
        return
    n = start + _gpu.uint64(i)
    a = s0
    b = s1
    k = 0
    one = _gpu.uint64(1)
    while n != _gpu.uint64(0):
        if n & one:
            ra = _gpu.uint64(0)
            rb = _gpu.uint64(0)
            for bit in range(64):
                if (a >> _gpu.uint64(bit)) & one:
                    ra ^= powers[k, bit, 0]
                    rb ^= powers[k, bit, 1]
                if (b >> _gpu.uint64(bit)) & one:
                    ra ^= powers[k, 64 + bit, 0]
                    rb ^= powers[k, 64 + bit, 1]
            a = ra
            b = rb
        n >>= one
        k += 1
    states[i]["s0"] = a
    states[i]["s1"] = b


def _check_states(states):
    if states.ndim != 1 or np.dtype(states.dtype) != xoroshiro128p_dtype:
        raise TypeError("states must be a 1-d array of xoroshiro128p_dtype records, as "
                        "create_xoroshiro128p_states makes")


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Fill `states` (a device array of n xoroshiro128p_dtype records) for `seed`."""
    _check_states(states)
    n = states.shape[0]
    if n == 0:
        return
    s0, s1 = _seed_state(int(seed) & _M64)
    powers = _jump_powers()
    tpb = 128
    # numba fills the states on the host: its users see no launch here, so no performance warning
    _init_states._quiet_config((n + tpb - 1) // tpb, tpb, stream)(states, powers, np.uint64(s0), np.uint64(s1),
                                                                 np.uint64(int(subsequence_start) & _M64))


def init_xoroshiro128p_states_cpu(states, seed, subsequence_start):
    """Fill `states`, a NumPy array of n xoroshiro128p_dtype records, on the host: state 0 is
    the seed's jumped subsequence_start times by 2**64 steps, each next state the previous one
    jumped once (the same states init_xoroshiro128p_states makes on the device)."""
    states = np.asarray(states)
    _check_states(states)
    if states.shape[0] == 0:
        return
    s0, s1 = _seed_state(int(seed) & _M64)
    for _ in range(int(subsequence_start)):
        s0, s1 = _jump_py(s0, s1)
    for i in range(states.shape[0]):
        if i:
            s0, s1 = _jump_py(s0, s1)
        states[i]["s0"] = s0
        states[i]["s1"] = s1


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """A device array of n generator states (xoroshiro128p_dtype records) for `seed`, one per
    thread."""
    if n < 0:
        raise ValueError("n must be non-negative")
    states = device_array(n, dtype=xoroshiro128p_dtype, stream=stream)
    init_xoroshiro128p_states(states, seed, subsequence_start, stream)
    return states
