"""Every example runs and checks its own result (fresh random inputs each run)."""
import importlib.util
import os

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")
NAMES = sorted(f[:-3] for f in os.listdir(EXAMPLES) if f.endswith(".py"))


@pytest.mark.parametrize("name", NAMES)
def test_example(name, capsys):
    spec = importlib.util.spec_from_file_location("example_" + name, os.path.join(EXAMPLES, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main()
    assert ": OK" in capsys.readouterr().out
