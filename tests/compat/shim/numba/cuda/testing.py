"""Test-only `numba.cuda.testing`: the decorators and base class the peer's
tests import, written for gpujit.

The helpers that do not depend on numba (TestCase with assertPreciseEqual,
captured_stdout, override_config, ...) come from the peer's own
tests/support.py, loaded from the extracted wheel at run time (see
_support_loader.py).

skip_on_cudasim(reason) does not skip: gpujit is not numba's simulator. It
records the reason on the test, and the runner's out-of-scope rules
(tests/compat/out_of_scope.txt, "cudasim:" lines) decide whether that reason
applies to gpujit too. Compute-capability guards pass on the CPU target
(it emulates every feature, as numba's simulator does) and read the device on
the CUDA target. Toolkit-presence guards (nvjitlink, cudadevrt, CUDA headers)
do not skip: linking is in scope, so a missing piece is a failure.
"""
import os
import platform
import unittest  # noqa: F401  (the peer's tests import it from here)
from pathlib import Path

import gpujit

from . import config  # noqa: F401
import numba.cuda.tests.support as _support

TestCase = _support.TestCase
captured_stdout = _support.captured_stdout
captured_stderr = _support.captured_stderr

test_data_dir = Path(os.environ.get("GPUJIT_COMPAT_PEER", ".")) / "tests" / "data"

# Marks a test (function or class) whose peer skips it on the simulator.
CUDASIM_ATTR = "__gpujit_compat_cudasim__"


class CUDATestCase(TestCase):
    """Base of the peer's GPU tests. The peer's FileCheck assertions read
    numba's NVVM IR and SASS; they are absent here on purpose. As numba's, it
    turns the performance warnings off for each test (which turns them back on
    to test them) and puts the settings back after it."""
    FLOAT16_RTOL = float(__import__("numpy").finfo("float16").eps)

    def setUp(self):
        self._perf_settings = [(n, getattr(config, n)) for n in config._LAUNCHER_SETTINGS]
        config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
        config.CUDA_WARN_ON_IMPLICIT_COPY = 0

    def tearDown(self):
        for name, value in self._perf_settings:
            setattr(config, name, value)


def _mark(obj, reason):
    reasons = list(getattr(obj, CUDASIM_ATTR, ()))
    reasons.append(reason)
    try:
        setattr(obj, CUDASIM_ATTR, tuple(reasons))
    except (AttributeError, TypeError):
        pass
    return obj


def skip_on_cudasim(reason):
    assert isinstance(reason, str)
    return lambda obj: _mark(obj, reason)


def skip_unless_cudasim(reason):
    assert isinstance(reason, str)
    return unittest.skip("simulator only: " + reason)


if os.environ.get("GPUJIT_COMPAT_NUMBA") == "1":   # the real numba is installed (run.py --numba)
    def skip_on_standalone_numba_cuda(obj):
        return obj
else:
    skip_on_standalone_numba_cuda = unittest.skip("requires base numba install")


def skip_unless_conda_cudatoolkit(reason):
    return unittest.skip("conda toolkit only: " + reason)


def _no_skip(reason):
    assert isinstance(reason, str)
    return lambda obj: obj


skip_if_external_memmgr = _no_skip
skip_under_cuda_memcheck = _no_skip
skip_if_nvjitlink_missing = _no_skip
skip_on_nvjitlink_13_1_sm_120 = _no_skip


def _have_nvdisasm():
    from gpujit.sass import find_tool
    return find_tool("nvdisasm") is not None


def skip_without_nvdisasm(reason):
    return unittest.skipIf(not _have_nvdisasm(), "needs nvdisasm: " + reason)


def skip_with_nvdisasm(reason):
    return unittest.skipIf(_have_nvdisasm(), "nvdisasm is installed: " + reason)


def skip_on_arm(reason):
    cpu = platform.processor()
    return unittest.skipIf(cpu.startswith("arm") or cpu.startswith("aarch"), reason)


def skip_on_wsl2(reason):
    return unittest.skipIf("wsl2" in platform.release().lower(), reason)


def skip_if_cuda_includes_missing(fn):
    return fn


def skip_if_curand_kernel_missing(fn):
    return fn


def skip_if_cudadevrt_missing(fn):
    return fn


def cc_X_or_above(major, minor):
    if gpujit.current_target() != "cuda":
        return True
    return tuple(gpujit.get_current_device().compute_capability) >= (major, minor)


def _cc_guard(major, minor):
    def deco(fn):
        return unittest.skipUnless(cc_X_or_above(major, minor), "requires cc >= %d.%d" % (major, minor))(fn)
    return deco


skip_unless_cc_50 = _cc_guard(5, 0)
skip_unless_cc_53 = _cc_guard(5, 3)
skip_unless_cc_60 = _cc_guard(6, 0)
skip_unless_cc_75 = _cc_guard(7, 5)
skip_unless_cc_90 = _cc_guard(9, 0)


def xfail_unless_cudasim(fn):
    return unittest.expectedFailure(fn)


class ForeignArray:
    """An array seen only through __cuda_array_interface__, as another
    library's array would be."""

    def __init__(self, arr):
        self._arr = arr
        self.__cuda_array_interface__ = arr.__cuda_array_interface__
