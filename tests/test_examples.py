"""Every example runs and checks its own result (fresh random inputs each run)."""
import importlib.util
import os

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")
# dask_saxpy starts a cluster of worker processes: tests/test_dask.py runs it in a process of its own
NAMES = sorted(f[:-3] for f in os.listdir(EXAMPLES) if f.endswith(".py") and f != "dask_saxpy.py")


@pytest.mark.parametrize("name", NAMES)
def test_example(name, capsys):
    spec = importlib.util.spec_from_file_location("example_" + name, os.path.join(EXAMPLES, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main()
    assert ": OK" in capsys.readouterr().out
