"""lineinfo=True: .loc directives map PTX back to the Python lines (device
functions included), without `.target ..., debug`; results are unchanged."""
import inspect

import numpy as np

import gpujit as gpu


def scale(a, b):
    return a * b + 1.0  # <- scale


@gpu.jit(lineinfo=True)
def kernel(x, out):
    i = gpu.grid(1)
    if i < x.size:
        out[i] = scale(x[i], 2.0)  # <- call


def line_of(fn, marker):
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, l in enumerate(lines) if marker in l)


def test_loc_directives_name_python_lines(rng):
    ptx = kernel.inspect_ptx("void(float64[::1], float64[::1])")
    assert '.file\t1 "%s"' % __file__ in ptx
    locs = {int(l.split()[2]) for l in ptx.splitlines() if l.strip().startswith(".loc")}
    assert line_of(kernel.py_func, "# <- call") in locs
    assert line_of(scale, "# <- scale") in locs
    assert ".target sm_90\n" in ptx and "debug" not in ptx.split(".target", 1)[1].splitlines()[0]
    x = rng.standard_normal(100)
    out = np.full(100, np.nan)
    kernel[1, 128](x, out)
    np.testing.assert_allclose(out, x * 2.0 + 1.0, rtol=1e-15)


def test_without_lineinfo_no_loc():
    @gpu.jit
    def plain(x, out):
        i = gpu.grid(1)
        if i < x.size:
            out[i] = x[i]
    assert ".loc" not in plain.inspect_ptx("void(float64[::1], float64[::1])")
