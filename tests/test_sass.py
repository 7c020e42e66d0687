"""kernel.inspect_sass(): the PTX assembled by ptxas and listed by nvdisasm (no GPU needed)."""
import numpy as np
import pytest

import gpujit as gpu
from gpujit import sass

HAVE_TOOLS = None not in sass._pair()
needs_tools = pytest.mark.skipif(not HAVE_TOOLS, reason="CUDA's ptxas and nvdisasm not installed "
                                                        "(pip install nvidia-cuda-nvdisasm)")


@gpu.jit
def saxpy(out, a, x, y):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@needs_tools
def test_sass_of_each_launched_signature():
    rng = np.random.default_rng()
    x, y = rng.random(100, dtype=np.float32), rng.random(100, dtype=np.float32)
    out = np.full(100, np.nan, np.float32)
    saxpy[1, 128](out, np.float32(3), x, y)
    np.testing.assert_allclose(out, 3 * x + y, rtol=1e-6)
    listing = saxpy.inspect_sass()
    assert list(listing) == ["void(float32[::1], float32, float32[::1], float32[::1])"]
    text = listing["void(float32[::1], float32, float32[::1], float32[::1])"]
    assert "sm_90" in text or "SM90" in text    # nvdisasm's header spells it by release
    # one fused multiply-add, two loads and a store: what the kernel says
    body = [ln for ln in text.splitlines() if ln.strip().startswith("/*")]
    ops = [ln.split("*/", 1)[1].split()[0] for ln in body]
    assert ops.count("FFMA") == 1 and ops.count("STG.E") == 1 and ops.count("LDG.E") == 2, ops
    # line information: the listing names the kernel's Python lines
    line = saxpy.py_func.__code__.co_firstlineno + 4  # out[i] = a * x[i] + y[i]
    assert '//## File "%s", line %d' % (__file__, line) in text
    # float64: the same kernel, the float64 instructions
    t64 = saxpy.inspect_sass("void(float64[::1], float64, float64[::1], float64[::1])")
    assert "DFMA" in t64 and "FFMA" not in t64


@needs_tools
def test_sass_cfg_is_dot():
    dot = saxpy.inspect_sass_cfg("void(float32[::1], float32, float32[::1], float32[::1])")
    assert dot.lstrip().startswith("digraph") and "FFMA" in dot


def test_missing_tool_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(sass, "_pair", lambda: ("/bin/true", None))
    with pytest.raises(RuntimeError, match="nvdisasm was not found .inspect_sass needs CUDA's nvdisasm.: pip "
                                           "install nvidia-cuda-nvdisasm"):
        saxpy.inspect_sass("void(float32[::1], float32, float32[::1], float32[::1])")


def test_device_function_has_no_sass():
    @gpu.jit(device=True)
    def f(x):
        return x + 1
    with pytest.raises(RuntimeError, match="compiled into its callers"):
        f.inspect_sass()
