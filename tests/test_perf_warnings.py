"""numba's performance warnings on launches (gpujit.PerformanceWarning): a grid of fewer
than 128 blocks when kernel[griddim, blockdim] is made (config.CUDA_LOW_OCCUPANCY_WARNINGS),
a host array copied to the GPU and back (config.CUDA_WARN_ON_IMPLICIT_COPY), each at the
line of the user's code that launched.

By default the CPU target gives no occupancy warning (numba's simulator gives none); where the
setting is given (assigned, or in the environment) it warns as a GPU does, which the tests
here use to check the rule, the message, the line and the settings without a GPU. The
implicit copy only happens on a GPU: tests/gpu/test_perf_warnings_gpu.py checks it there."""
import inspect
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import gpujit as gpu
from gpujit import _core, config

rng = np.random.default_rng()
Base = _core.DispatcherBase
SETTINGS = ("CUDA_LOW_OCCUPANCY_WARNINGS", "CUDA_WARN_ON_IMPLICIT_COPY", "DISABLE_PERFORMANCE_WARNINGS")
MSG = "Grid size %d will likely result in GPU under-utilization due to low occupancy."


@gpu.jit
def fill(out, v):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = v


cpu_only = pytest.mark.skipif(gpu.current_target() != "cpu", reason="the CPU target's own behaviour")


@pytest.fixture
def asked():
    """The low-occupancy warning asked for (so the CPU target warns too), as a user or numba's
    override_config does; on a GPU the implicit-copy warning of these tests' NumPy arguments
    is off. tests/conftest.py puts the settings back afterwards."""
    config.CUDA_LOW_OCCUPANCY_WARNINGS = 1
    config.CUDA_WARN_ON_IMPLICIT_COPY = 0
    config.DISABLE_PERFORMANCE_WARNINGS = 0


def perf(record):
    return [w for w in record if issubclass(w.category, gpu.PerformanceWarning)]


def here():
    """The line after the caller's."""
    return inspect.currentframe().f_back.f_lineno + 1


def poisoned(n):
    return np.full(n, np.nan, np.float32)


@cpu_only
def test_cpu_target_is_quiet_unless_asked():
    # numba's default (on) without the setting given: the CPU target, like numba's simulator,
    # does not warn of low occupancy
    config.CUDA_LOW_OCCUPANCY_WARNINGS = 1
    config._occupancy_given = False
    out = poisoned(8)
    v = np.float32(rng.random())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fill[1, 8](out, v)
    assert (out == v).all()
    config.CUDA_LOW_OCCUPANCY_WARNINGS = 1       # asked for: it does
    with pytest.warns(gpu.PerformanceWarning, match="Grid size 1 "):
        fill[1, 8](out, v)


def test_low_occupancy_warns_at_the_launch_line(asked):
    out = poisoned(1)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = here()
        fill[1, 1](out, 1.0)
    w = perf(rec)
    assert len(w) == 1 and str(w[0].message) == MSG % 1
    assert w[0].category is gpu.errors.NumbaPerformanceWarning
    assert (w[0].filename, w[0].lineno) == (__file__, line)
    assert out[0] == 1.0    # the launch still runs


def test_rule_is_the_grids_block_count(asked):
    grids = [(1,), (127,), (128,), (8, 4, 4), (8, 4, 3), (1, 65535), (200, 1, 1)]
    grids += [tuple(int(x) for x in rng.integers(1, 9, size=int(rng.integers(1, 4)))) for _ in range(12)]
    for g in grids:
        blocks = int(np.prod(g))
        out = poisoned(g[0] * 2)    # grid(1): the blocks along x
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            fill[g, 2](out, 3.0)
        w = perf(rec)
        assert [str(x.message) for x in w] == ([MSG % blocks] if blocks < 128 else []), g
        assert (out == 3.0).all()


def test_warned_when_the_configuration_is_made(asked):
    # numba warns in kernel[griddim, blockdim]; calling it later does not warn again
    out = poisoned(4)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        cfg = fill[1, 4]
    assert [str(x.message) for x in perf(rec)] == [MSG % 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg(out, 2.0)
        cfg(out, 2.0)
    assert (out == 2.0).all()


def test_settings_turn_it_off_and_on(asked):
    def warned():
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            fill[3, 1](out, 1.0)
        return len(perf(rec))
    out = poisoned(3)
    assert warned() == 1
    config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
    assert warned() == 0
    config.CUDA_LOW_OCCUPANCY_WARNINGS = 1
    config.DISABLE_PERFORMANCE_WARNINGS = 1
    assert warned() == 0
    config.DISABLE_PERFORMANCE_WARNINGS = 0
    assert warned() == 1
    # numba's tests switch settings with setattr on the module, as override_config does
    setattr(config, "CUDA_LOW_OCCUPANCY_WARNINGS", False)
    assert warned() == 0


def test_as_an_error_it_stops_the_launch(asked):
    out = poisoned(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpu.PerformanceWarning)
        with pytest.raises(gpu.PerformanceWarning, match="Grid size 1 "):
            fill[1, 2](out, 5.0)
    assert np.isnan(out).all()


def user_helper(out):
    fill[2, 1](out, 7.0)     # <- the warning's line: the helper is the user's code
    return inspect.currentframe().f_lineno - 1


def test_warning_names_the_innermost_user_line(asked):
    out = poisoned(2)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = user_helper(out)
    w = perf(rec)
    assert len(w) == 1 and (w[0].filename, w[0].lineno) == (__file__, line)


def test_launches_made_inside_gpujit_warn_at_the_callers_line(asked):
    out = poisoned(5)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = here()
        fill.forall(5)(out, 4.0)
    w = perf(rec)
    assert len(w) == 1 and (w[0].filename, w[0].lineno) == (__file__, line)
    assert (out == 4.0).all()

    @gpu.vectorize(["float32(float32)"])
    def twice(x):
        return 2 * x
    x = rng.random(300).astype(np.float32)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = here()
        got = twice(x)
    w = perf(rec)
    assert len(w) == 1 and (w[0].filename, w[0].lineno) == (__file__, line)
    assert "low occupancy" in str(w[0].message)
    np.testing.assert_array_equal(got, 2 * x)

    # Reduce: its first pass's grid warns once; its one-block second pass does not
    add = gpu.Reduce(lambda a, b: a + b)
    a = rng.integers(-100, 100, size=1000).astype(np.int64)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = here()
        total = add(a)
    w = perf(rec)
    assert total == a.sum()
    assert len(w) == 1 and (w[0].filename, w[0].lineno) == (__file__, line)


def test_gpujits_own_fixed_launches_do_not_warn(asked):
    from gpujit.random import create_xoroshiro128p_states
    config.CUDA_WARN_ON_IMPLICIT_COPY = 1    # on a GPU they copy host arrays too, unasked
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        states = create_xoroshiro128p_states(3, seed=int(rng.integers(1 << 30)))
        out = poisoned(3)
        fill._quiet_config(1, 3)(out, 6.0)
    assert states.shape[0] == 3 and (out == 6.0).all()


@cpu_only
def test_no_implicit_copy_warning_where_nothing_is_copied(asked):
    # the CPU target's kernels use host memory in place: no copy, no warning
    config.CUDA_WARN_ON_IMPLICIT_COPY = 1
    out = poisoned(200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fill[200, 1](out, 8.0)
        Base._warn_implicit_copy()
    assert (out == 8.0).all()


def test_settings_hook_checks_its_arguments():
    with pytest.raises(TypeError):
        Base._set_performance_warnings(1)


def run(code, *args, **env):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("GPUJIT_CUDA_", "NUMBA_CUDA_", "GPUJIT_DISABLE",
                                                                      "NUMBA_DISABLE"))}
    e.update(env, GPUJIT_TARGET="cpu")
    e["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=e, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


SHOW = """
    from gpujit import config
    print(config.CUDA_LOW_OCCUPANCY_WARNINGS, config.CUDA_WARN_ON_IMPLICIT_COPY,
          config.DISABLE_PERFORMANCE_WARNINGS)
"""
# the launcher reads the settings without the program importing gpujit.config
LAUNCH = """
    import sys
    import warnings
    import numpy as np
    import gpujit as gpu
    @gpu.jit
    def k(a):
        a[0] = 1
    if sys.argv[1:] == ["assign"]:
        gpu.config.CUDA_LOW_OCCUPANCY_WARNINGS = 1      # the default value, but given
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        for g in (1, 127, 128):
            k[g, 1](np.zeros(1))
    print(len(rec))
"""


def test_defaults_and_environment():
    assert run(SHOW) == ["1", "1", "0"]          # numba-cuda 0.30.4's defaults
    assert run(SHOW, NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0", NUMBA_CUDA_WARN_ON_IMPLICIT_COPY="0",
               NUMBA_DISABLE_PERFORMANCE_WARNINGS="1") == ["0", "0", "1"]
    assert run(SHOW, GPUJIT_CUDA_LOW_OCCUPANCY_WARNINGS="1", NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0",
               GPUJIT_CUDA_WARN_ON_IMPLICIT_COPY="0") == ["1", "0", "0"]
    assert run(SHOW, GPUJIT_CUDA_LOW_OCCUPANCY_WARNINGS="off", NUMBA_CUDA_WARN_ON_IMPLICIT_COPY="No") == ["0", "0", "0"]
    with pytest.raises(AssertionError, match="GPUJIT_CUDA_LOW_OCCUPANCY_WARNINGS='x': use one of"):
        run(SHOW, GPUJIT_CUDA_LOW_OCCUPANCY_WARNINGS="x")  # a value it does not take: a ValueError
    # the CPU target: quiet by default, like numba's simulator; warns where the setting is given
    assert run(LAUNCH) == ["0"]
    assert run(LAUNCH, "assign") == ["2"]
    assert run(LAUNCH, NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="1") == ["2"]
    assert run(LAUNCH, GPUJIT_CUDA_LOW_OCCUPANCY_WARNINGS="1") == ["2"]
    assert run(LAUNCH, GPUJIT_CUDA_LOW_OCCUPANCY_WARNINGS="0") == ["0"]
    assert run(LAUNCH, "assign", NUMBA_DISABLE_PERFORMANCE_WARNINGS="1") == ["0"]
