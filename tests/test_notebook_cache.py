"""cache=True on a kernel defined in a notebook cell: IPython compiles each cell under a name
that is no file and keeps the cell's text in linecache; the kernel is cached by that text
(under $GPUJIT_CACHE_DIR/ipython), found again by the next process that runs the same cell,
and compiled anew when the cell's text changes."""
import os
import subprocess
import sys
import textwrap

import pytest

import gpujit as gpu

# a notebook's cell, run as IPython runs it: compiled under the cell's name, its text in linecache
RUNNER = textwrap.dedent('''
    import linecache, sys
    import numpy as np
    cell_name, scale = sys.argv[1], sys.argv[2]
    cell = """
    import gpujit as gpu

    @gpu.jit(cache=True)
    def k(out, x):
        i = gpu.grid(1)
        if i < out.size:
            out[i] = x[i] * %s
    """ % scale
    linecache.cache[cell_name] = (len(cell), None, cell.splitlines(True), cell_name)
    ns = {}
    exec(compile(cell, cell_name, "exec"), ns)
    rng = np.random.default_rng()
    x = rng.standard_normal(100)
    out = np.full(100, np.nan)
    ns["k"][1, 128](out, x)
    assert np.array_equal(out, x * float(scale)), (out, x)
    print(sum(ns["k"].stats.cache_hits.values()), sum(ns["k"].stats.cache_misses.values()))
''')


@pytest.mark.parametrize("cell_name", ["<ipython-input-3-5a1b2c3d4e5f>", "/tmp/ipykernel_4242/1234567890.py"])
def test_notebook_cell_kernel_is_cached(tmp_path, cell_name):
    env = dict(os.environ, GPUJIT_TARGET="cpu", GPUJIT_CACHE_DIR=str(tmp_path / "cache"))
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(gpu.__file__)) + os.pathsep + env.get("PYTHONPATH", "")

    def run(scale):
        r = subprocess.run([sys.executable, "-c", RUNNER, cell_name, scale], env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return r.stdout.split()

    assert run("2.0") == ["0", "1"]      # compiled and written
    assert run("2.0") == ["1", "0"]      # the next session: from the cache
    assert run("3.0") == ["0", "1"]      # the cell changed: compiled again, with its new value
    assert os.listdir(tmp_path / "cache" / "ipython")


def test_not_a_cell_still_refused():
    code = compile("def f(a):\n    a[0] = 1\n", "<string>", "exec")
    ns = {}
    exec(code, ns)
    with pytest.raises(RuntimeError, match="no locator available"):
        gpu.jit(cache=True)(ns["f"])
