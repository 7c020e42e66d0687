"""numba.cuda.testing in the place mode (gpujit._place): the test helpers numba.cuda projects
import for their own tests, written for gpujit.

The simulator's guards follow NUMBA_ENABLE_CUDASIM as numba-cuda's do: where it is set, the
tests a project skips on the simulator (skip_on_cudasim) are skipped and those it runs only
there (skip_unless_cudasim) run, so a suite picks the tests it picks under the simulator.
Compute-capability guards read the current device (the cpu target's is 9.0). CUDATestCase
turns the low-occupancy and implicit-copy warnings off for each test and puts them back
after it, as numba-cuda's does; it derives from numba's own TestCase (assertPreciseEqual)
where numba has one.
"""
import contextlib
import io
import os
import platform
import sys
import unittest  # noqa: F401  (projects import it from here)

from . import config
from .cudadrv import get_current_device

ENABLE_CUDASIM = os.environ.get("NUMBA_ENABLE_CUDASIM", "").strip() not in ("", "0")

try:   # numba's TestCase (assertPreciseEqual, ...): numba is installed in the place mode
    from numba.tests.support import TestCase
except Exception:   # numba without its tests
    TestCase = unittest.TestCase


class CUDATestCase(TestCase):
    """The base of a project's GPU tests."""

    def setUp(self):
        self._low_occupancy_warnings = config.CUDA_LOW_OCCUPANCY_WARNINGS
        self._warn_on_implicit_copy = config.CUDA_WARN_ON_IMPLICIT_COPY
        config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
        config.CUDA_WARN_ON_IMPLICIT_COPY = 0

    def tearDown(self):
        config.CUDA_LOW_OCCUPANCY_WARNINGS = self._low_occupancy_warnings
        config.CUDA_WARN_ON_IMPLICIT_COPY = self._warn_on_implicit_copy


ContextResettingTestCase = CUDATestCase   # older numba's name; gpujit's contexts need no reset


def skip_on_cudasim(reason):
    """Skip where NUMBA_ENABLE_CUDASIM is set (the project skips it on the simulator)."""
    assert isinstance(reason, str)
    return unittest.skipIf(ENABLE_CUDASIM, reason)


def skip_unless_cudasim(reason):
    """Skip unless NUMBA_ENABLE_CUDASIM is set."""
    assert isinstance(reason, str)
    return unittest.skipUnless(ENABLE_CUDASIM, reason)


def skip_on_standalone_numba_cuda(obj):
    """numba-cuda's guard for tests that need base numba: the place mode always has it."""
    return obj


def skip_unless_conda_cudatoolkit(reason):
    assert isinstance(reason, str)
    return unittest.skipUnless(os.environ.get("CONDA_PREFIX"), reason)


def _runs(reason):
    assert isinstance(reason, str)
    return lambda obj: obj


skip_if_external_memmgr = _runs        # gpujit has the default memory manager unless one is set
skip_under_cuda_memcheck = _runs


def skip_on_arm(reason):
    cpu = platform.machine().lower()
    return unittest.skipIf(cpu.startswith("arm") or cpu.startswith("aarch"), reason)


def skip_on_wsl2(reason):
    return unittest.skipIf("microsoft-standard" in platform.release().lower(), reason)


def cc_X_or_above(major, minor):
    return tuple(get_current_device().compute_capability) >= (major, minor)


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
    return fn if ENABLE_CUDASIM else unittest.expectedFailure(fn)


@contextlib.contextmanager
def _captured(name):
    saved = getattr(sys, name)
    setattr(sys, name, io.StringIO())
    try:
        yield getattr(sys, name)
    finally:
        setattr(sys, name, saved)


def captured_stdout():
    """with captured_stdout() as out: ...; out.getvalue()"""
    return _captured("stdout")


def captured_stderr():
    return _captured("stderr")


class ForeignArray:
    """An array seen only through __cuda_array_interface__, as another library's would be."""

    def __init__(self, arr):
        self._arr = arr
        self.__cuda_array_interface__ = arr.__cuda_array_interface__
