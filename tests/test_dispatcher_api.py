"""The kernel object's numba API: launchconfig (the configuration a launch
compiles its kernel for), specialize, overloads keyed both ways, PTX of
kernels compiled for the cpu target, kernel attributes per signature, and
launch-configuration errors in numba's words."""
import io
import threading

import numpy as np
import pytest

from conftest import poisoned, random_array
import gpujit as gpu
from gpujit import launchconfig
from gpujit.types import float32, float64, int32, int64, void


def store(x, v):
    i = gpu.grid(1)
    if i < x.size:
        x[i] = v + i


def test_launch_config_seen_while_compiling(rng):
    k = gpu.jit(store)
    seen = []
    orig = k._compile_for_args

    def wrapped(*args):
        cfg = launchconfig.ensure_current_launch_config()
        seen.append((cfg.griddim, cfg.blockdim, cfg.dispatcher, cfg.args))
        return orig(*args)

    k._compile_for_args = wrapped
    x = poisoned(37, np.float64)
    v = float(rng.uniform())
    configured = k[2, 32]
    configured(x, v)
    np.testing.assert_array_equal(x, v + np.arange(37))
    (grid, block, disp, args), = seen
    assert grid == (2, 1, 1) and block == (32, 1, 1) and disp is k and args[0] is x
    assert launchconfig.current_launch_config() is None and configured.args is None
    with pytest.raises(RuntimeError):
        launchconfig.ensure_current_launch_config()
    k[2, 32](x, v)  # a cache hit compiles nothing
    assert len(seen) == 1


def test_capture_compile_config_restores():
    k = gpu.jit(store)
    original = k._compile_for_args
    with launchconfig.capture_compile_config(k) as cap:
        k[1, 4](np.zeros(4, np.int32), 3)
    assert cap["config"].blockdim == (4, 1, 1)
    assert "_compile_for_args" not in k.__dict__
    assert k._compile_for_args.__func__ is original.__func__


def test_launch_config_per_thread():
    k = gpu.jit(store)
    barrier = threading.Barrier(2)
    seen, errors = [], []
    orig = k._compile_for_args

    def wrapped(*args):
        cfg = launchconfig.ensure_current_launch_config()
        barrier.wait(timeout=10)
        seen.append(id(cfg.args[0]))
        return orig(*args)

    k._compile_for_args = wrapped
    arrays = [np.zeros(3, np.int64), np.zeros(3, np.int64)]
    configured = k[1, 3]

    def run(a):
        try:
            configured(a, 1)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=run, args=(a,)) for a in arrays]
    for t in ts:
        t.start()
    for t in ts:
        t.join(20)
    assert not errors and set(seen) == {id(a) for a in arrays}


def test_specialize_and_overloads(rng):
    k = gpu.jit(store)
    assert not k.specialized and k.specializations == {}
    s = k.specialize(float32[::1], float32)
    assert s.specialized and s is k.specialize(float32[::1], float32)
    assert k.specialize(float32[:], float32) is not s and len(k.specializations) == 2
    with pytest.raises(RuntimeError, match="already specialized"):
        s.specialize(float32[::1], float32)
    with pytest.raises(RuntimeError, match="already specialized"):
        gpu.jit("void(int32[::1], int32)")(store).specialize(int32[::1], int32)
    x = poisoned(10, np.float32)
    s[1, 10](x, np.float32(2))
    np.testing.assert_array_equal(x, 2 + np.arange(10, dtype=np.float32))
    with pytest.raises(TypeError, match="No matching definition"):
        s[1, 10](np.zeros(10, np.float64), 2.0)
    k[1, 4](np.zeros(4, np.int64), 1)
    k[1, 4](np.zeros(4, np.float64), 1.5)
    ov = k.overloads
    assert len(ov) == 2
    assert ov[(int64[::1], int64)] is ov["void(int64[::1], int64)"]
    assert ov[void(float64[::1], float64)] is ov["(float64[::1], float64)"]
    with pytest.raises(KeyError):
        ov[(int32[::1], int64)]


def test_ptx_of_cpu_compiled_kernels():
    k = gpu.jit(store)
    k[1, 4](np.zeros(4, np.float64), 1.0)
    asm = k.inspect_asm()
    (sig, ptx), = asm.items()
    assert ".entry" in ptx and "st.global.f64" in ptx
    assert asm[(float64[::1], float64)] == ptx
    eager = gpu.jit([(int32[::1], int32)])(store)
    assert ".entry" in eager.inspect_asm()[(int32[::1], int32)]


def test_attributes_and_occupancy_of_an_overload_or_the_kernel():
    k = gpu.jit(store)
    with pytest.raises(ValueError, match="has not been compiled yet"):
        gpu.kernel_attributes(k)
    x = poisoned(4, np.float32)
    k[1, 4](x, 1.0)
    assert (x == np.arange(4) + 1).all()
    sig = next(iter(k.overloads))
    compiled = k.overloads[sig]._kernel
    want = gpu.kernel_attributes(compiled)
    assert gpu.kernel_attributes(k.overloads[sig]) == want == gpu.kernel_attributes(k)
    assert want["max_threads_per_block"] > 0
    blocks = gpu.max_potential_block(compiled)
    assert gpu.max_potential_block(k.overloads[sig]) == blocks == gpu.max_potential_block(k)
    assert blocks[0] > 0 and blocks[1] > 0
    k[1, 4](np.zeros(4, np.int64), 1)
    with pytest.raises(TypeError, match="has 2 compiled signatures: pass one of kernel.overloads"):
        gpu.max_potential_block(k)
    with pytest.raises(TypeError, match="expected a CompiledKernel"):
        gpu.kernel_attributes(42)


def test_argument_count_against_the_signature():
    with pytest.raises(TypeError, match="^store takes 2 arguments but the signature gives 1$"):
        gpu.compile_ptx(store, "void(float32[::1])")

    def one(x):
        x[0] = 1

    with pytest.raises(TypeError, match="^one takes 1 argument but the signature gives 2$"):
        gpu.compile_ptx(one, "void(float32[::1], int64)")


def test_kernel_attributes_per_signature():
    k = gpu.jit(store)
    k[1, 4](np.zeros(4, np.float32), 1.0)
    k[1, 4](np.zeros(4, np.int64), 1)
    per = k.get_max_threads_per_block()
    assert set(per) == {s for s in k.overloads}
    assert per[(float32[::1], float64)] == k.get_max_threads_per_block(void(float32[::1], float64)) > 0
    single = gpu.jit(void(float32[::1], float32))(store)
    assert isinstance(single.get_max_threads_per_block(), int)
    for f in ("get_regs_per_thread", "get_shared_mem_per_block", "get_local_mem_per_thread",
              "get_const_mem_size"):
        assert isinstance(getattr(single, f)(), int)


def test_kernel_static_memory_attributes(rng):
    # the bytes a kernel declares: shared per block (up to the end of the last array, not
    # rounded up), local arrays per thread, constant arrays; the same on both targets
    n = int(rng.integers(3, 40))
    m = n * 25
    table = rng.integers(-1000, 1000, int(rng.integers(20, 100)))

    def body(out, x):
        sm = gpu.shared.array(n, dtype=out.dtype)
        lm = gpu.local.array(m, dtype=out.dtype)
        c = gpu.const.array_like(table)
        for j in range(n):
            i = (j + int(x)) % n        # an index known only at run time, and a barrier: else the
            sm[i] = x + i               # GPU's optimiser splits the array or forwards the stores
        gpu.syncthreads()
        for j in range(m):
            lm[j] = x * j
        for j in range(n):
            out[j] = sm[j] + lm[(j * 7 + int(x)) % m] + c[(j + int(x)) % c.size]   # run-time index: not folded

    k = gpu.jit(body)
    for dtype in (np.float32, np.float64):
        out = poisoned(n, dtype)
        x = float(rng.integers(1, 5))
        k[1, 1](out, x)
        j = np.arange(n)
        np.testing.assert_array_equal(out, (x + j) + x * ((j * 7 + int(x)) % m) + table[(j + int(x)) % table.size])
    for dtype, item in ((float32, 4), (float64, 8)):
        sig = void(dtype[::1], float64)
        assert k.get_shared_mem_per_block(sig) == n * item
        assert k.get_local_mem_per_thread(sig) >= m * item
        assert k.get_const_mem_size(sig) >= table.nbytes
    every = k.get_shared_mem_per_block()
    assert every[(float32[::1], float64)] == n * 4 and every[(float64[::1], float64)] == n * 8


@pytest.mark.parametrize("bounds", [128, (128,), (128, 2)])
def test_launch_bounds_limit_the_block(bounds):
    k = gpu.jit(launch_bounds=bounds)(store)
    x = poisoned(256, np.int64)
    k[1, 128](x, 3)
    np.testing.assert_array_equal(x[:128], 3 + np.arange(128))
    assert k.get_max_threads_per_block(void(int64[::1], int64)) <= 128
    with pytest.raises(ValueError, match=r"blockdim has 256 threads; kernel 'store' can run at most 128 per block"):
        k[1, 256](x, 4)
    with pytest.raises(ValueError, match="at most 128 per block"):
        k[2, (16, 16)](x, 4)
    x[:] = -1
    k.forall(256)(x, 5)  # sized to fit the bounds
    np.testing.assert_array_equal(x, 5 + np.arange(256))
    assert ".maxntid 128, 1, 1" in k.inspect_asm(void(int64[::1], int64))


@pytest.mark.parametrize("value", ["MaxL1", "MaxShared", "default", 0, 50, 100, -1])
def test_shared_memory_carveout_accepted(rng, value):
    k = gpu.jit(shared_memory_carveout=value)(store)
    x = poisoned(5, np.int64)
    k[1, 5](x, 7)
    np.testing.assert_array_equal(x, 7 + np.arange(5))


@pytest.mark.parametrize("value", [150, -2, 101, "InvalidOption"])
def test_shared_memory_carveout_refused(value):
    with pytest.raises(ValueError, match="must be between -1 and 100|Invalid carveout value"):
        gpu.jit(shared_memory_carveout=value)(store)


def test_launch_configuration_errors():
    k = gpu.jit(store)
    with pytest.raises(ValueError, match=r"griddim must be a sequence of 1, 2 or 3 integers, got \[1, 2, 3, 4\]"):
        k[(1, 2, 3, 4), (5, 6)]
    with pytest.raises(ValueError, match=r"blockdim must be a sequence of 1, 2 or 3 integers, got \[3, 4, 5, 6\]"):
        k[(1, 2), (3, 4, 5, 6)]
    with pytest.raises(TypeError, match=r"griddim must be a sequence of integers, got \[2\.0\]"):
        k[2.0, 3]
    with pytest.raises(TypeError, match=r"blockdim must be a sequence of integers, got \[1, 2\.5\]"):
        k[2, [1, 2.5]]
    x = np.zeros(6, np.int32)
    k[[2], [3]](x, 1)  # lists are sequences too
    np.testing.assert_array_equal(x, 1 + np.arange(6))
    for exc in (TypeError, ValueError):
        with pytest.raises(exc, match="launch configuration was not specified"):
            k(x, 1)


def test_forall_covers_the_tasks_and_refuses_a_negative_count(rng):
    k = gpu.jit(store)
    n = int(rng.integers(1, 3000))
    x = poisoned(n, np.float64)
    v = float(rng.uniform())
    k.forall(n)(x, v)
    np.testing.assert_array_equal(x, v + np.arange(n))
    k.forall(0)(x, v)  # no tasks: no launch
    with pytest.raises(ValueError, match="Can't create ForAll with negative task count"):
        k.forall(-1)


def test_device_function_forceinline(rng):
    @gpu.jit(device=True, forceinline=True)
    def twice(v):
        return 2 * v

    @gpu.jit
    def k(out, x):
        i = gpu.grid(1)
        if i < x.size:
            out[i] = twice(x[i])

    x = random_array(rng, 20, np.float32)
    out = poisoned(20, np.float32)
    k[1, 32](out, x)
    np.testing.assert_array_equal(out, 2 * x)


def test_inspect_types_prints_as_numba_does(capsys):
    @gpu.jit
    def k(out, x):
        i = gpu.grid(1)
        if i < out.size:
            doubled = x[i] * 2
            out[i] = doubled

    assert k.inspect_types(signature="void(float64[::1], int32[::1])") is None
    printed = capsys.readouterr().out
    assert "doubled" in printed and "int64" in printed, printed
    text = k.inspect_types_text("void(float64[::1], int32[::1])")
    assert printed == text + "\n"
    buf = io.StringIO()
    assert k.inspect_types(buf) is None  # every signature compiled so far, to the file given
    assert buf.getvalue() == printed and capsys.readouterr().out == ""
