"""The compatibility yardstick's runner (tests/compat/run.py) counts honestly:
a crash or a hang is charged to the test that was running and the rest of its
module still runs, a module that cannot be imported charges each of its tests,
and an out-of-scope rule removes a test from the count. Runs on a small fake
peer folder, so it needs no download."""
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.path.join(HERE, "compat", "run.py")

FAKE = '''
import os, time, unittest
import numpy as np
import numba
from numba import cuda


class TestFake(unittest.TestCase):
    def test_a_kernel(self):
        assert numba.__file__.startswith(os.environ["SHIM"]), numba.__file__
        @cuda.jit
        def twice(out, x):
            i = cuda.grid(1)
            if i < x.size:
                out[i] = 2 * x[i]
        x = np.random.rand(100)
        out = np.full_like(x, np.nan)
        twice[4, 32](out, x)
        np.testing.assert_array_equal(out, 2 * x)

    def test_b_fail(self):
        self.assertEqual(1, 2)

    def test_c_crash(self):
        os.abort()

    def test_d_pass(self):
        pass

    def test_e_hang(self):
        time.sleep(600)

    def test_f_pass(self):
        pass

    @unittest.skip("a reason no rule covers")
    def test_g_skipped(self):
        pass
'''

BROKEN = '''
import unittest
from numba.cuda import no_such_name_in_gpujit
from numba.cuda.testing import skip_on_cudasim


class TestBroken(unittest.TestCase):
    def test_one(self):
        pass

    @skip_on_cudasim("Dispatcher C-extension not used in the simulator")
    def test_internal(self):
        pass
'''

IMPORT_CRASH = '''
import os
import unittest
os.abort()


class TestNeverRuns(unittest.TestCase):
    def test_x(self):
        pass
'''


def test_runner_counts_crashes_hangs_and_import_errors(tmp_path):
    tests = tmp_path / "peer" / "tests"
    (tests / "cudapy").mkdir(parents=True)
    (tests / "__init__.py").write_text("")
    (tests / "support.py").write_text("import unittest\nclass TestCase(unittest.TestCase):\n    pass\n"
                                      "def captured_stdout():\n    pass\ncaptured_stderr = captured_stdout\n")
    (tests / "cudapy" / "__init__.py").write_text("")
    (tests / "cudapy" / "test_fake.py").write_text(textwrap.dedent(FAKE))
    (tests / "cudapy" / "test_broken.py").write_text(textwrap.dedent(BROKEN))
    (tests / "cudapy" / "test_importcrash.py").write_text(textwrap.dedent(IMPORT_CRASH))
    out = tmp_path / "res.json"
    env = dict(os.environ, SHIM=os.path.join(HERE, "compat", "shim"))
    p = subprocess.run([sys.executable, RUN, "--peer-dir", str(tmp_path / "peer"), "--json", str(out),
                        "--test-timeout", "5", "-j", "2"], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    mods = json.loads(out.read_text())["modules"]
    fake = {t.split("::")[-1]: r for t, r in mods["cudapy/test_fake.py"].items()}
    got = {name: r["outcome"] for name, r in fake.items()}
    assert got == {"test_a_kernel": "passed", "test_b_fail": "failed", "test_c_crash": "error",
                   "test_d_pass": "passed", "test_e_hang": "error", "test_f_pass": "passed",
                   "test_g_skipped": "failed"}, {name: r.get("cause") for name, r in fake.items()}
    assert "SIGABRT" in fake["test_c_crash"]["cause"]
    assert fake["test_e_hang"]["cause"].startswith("hang")
    assert fake["test_b_fail"]["cause"].startswith("AssertionError: 1 != 2")
    broken = {t.split("::")[-1]: r for t, r in mods["cudapy/test_broken.py"].items()}
    assert broken["test_one"]["outcome"] == "failed"
    assert "no_such_name_in_gpujit" in broken["test_one"]["cause"]
    assert broken["test_internal"]["outcome"] == "oos"
    crashed = mods["cudapy/test_importcrash.py"]
    assert list(crashed) == ["cudapy/test_importcrash.py::TestNeverRuns::test_x"]
    assert crashed["cudapy/test_importcrash.py::TestNeverRuns::test_x"] == {
        "outcome": "error", "cause": "crash while importing the module (killed by signal SIGABRT)"}


NUMBA_PEER = '''
import os, subprocess, sys, unittest
import numpy as np
import numba
from numba import cuda
from numba.cuda import HAS_NUMBA
from numba.cuda.testing import skip_on_standalone_numba_cuda


class TestWithNumba(unittest.TestCase):
    @skip_on_standalone_numba_cuda
    def test_njit_in_kernel(self):
        assert HAS_NUMBA and not numba.__file__.startswith(os.environ["SHIM"]), numba.__file__
        assert cuda.__file__.startswith(os.environ["SHIM"]), cuda.__file__

        @numba.njit
        def inc(x):
            return x + 1

        @cuda.jit
        def k(out):
            out[0] = inc(41)

        out = np.zeros(1)
        k[1, 1](out)
        assert out[0] == 42

    @skip_on_standalone_numba_cuda
    def test_subprocess_sees_the_same(self):
        code = "import numba, numba.cuda; print(numba.cuda.HAS_NUMBA, 'shim' in numba.cuda.__file__)"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        assert out.split() == ["True", "True"], out
'''


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba is not installed")
def test_runner_with_numba(tmp_path):
    """run.py --numba: the real numba is numba, numba.cuda is the shim's (gpujit), in the test
    process and in the processes it starts; the tests that need numba run (and count)."""
    tests = tmp_path / "peer" / "tests"
    (tests / "cudapy").mkdir(parents=True)
    (tests / "__init__.py").write_text("")
    (tests / "support.py").write_text("import unittest\nclass TestCase(unittest.TestCase):\n    pass\n"
                                      "def captured_stdout():\n    pass\ncaptured_stderr = captured_stdout\n")
    (tests / "cudapy" / "__init__.py").write_text("")
    (tests / "cudapy" / "test_numba_fake.py").write_text(textwrap.dedent(NUMBA_PEER))
    out = tmp_path / "res.json"
    env = dict(os.environ, SHIM=os.path.join(HERE, "compat", "shim"))
    for numba_mode, want in ((True, "passed"), (False, "oos")):
        p = subprocess.run([sys.executable, RUN, "--peer-dir", str(tmp_path / "peer"), "--json", str(out), "-j", "1"]
                           + (["--numba"] if numba_mode else []), env=env, capture_output=True, text=True,
                           timeout=300)
        assert p.returncode == 0, p.stdout + p.stderr
        res = json.loads(out.read_text())["modules"]["cudapy/test_numba_fake.py"]
        assert {t.split("::")[-1]: r["outcome"] for t, r in res.items()} == {
            "test_njit_in_kernel": want, "test_subprocess_sees_the_same": want}, res
