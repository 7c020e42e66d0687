"""print() in kernels: numbers, bools and string constants, Python's spacing
and newline (floats as %f, as numba.cuda prints them); vprintf on the GPU."""
import subprocess

import numpy as np
import pytest

import gpujit as gpu


@gpu.jit
def show(x):
    i = gpu.grid(1)
    if i < x.size:
        print("thread", i, "value", x[i], i == 0, gpu.uint8(200), "100%")


def test_print_lines(capfd, rng):
    if gpu.current_target() != "cpu":
        pytest.skip("GPU printf output comes from the driver; checked through the PTX below")
    x = rng.integers(-50, 50, 3).astype(np.float64)
    show[1, 4](x)
    lines = sorted(l for l in capfd.readouterr().out.splitlines() if l.startswith("thread"))
    want = sorted("thread %d value %f %s 200 100%%" % (i, x[i], i == 0) for i in range(3))
    assert lines == want


def test_vprintf_in_ptx(tmp_path):
    ptx = show.inspect_ptx("void(float64[::1])")
    assert "vprintf" in ptx
    f = tmp_path / "p.ptx"
    f.write_text(ptx)
    try:
        r = subprocess.run(["ptxas", "-arch=sm_90", str(f), "-o", "/dev/null"], capture_output=True, text=True)
    except FileNotFoundError:
        pytest.skip("no ptxas")
    assert r.returncode == 0, r.stderr


def test_print_of_an_array_is_an_error():
    @gpu.jit
    def bad(x):
        print(x)

    with pytest.raises(gpu.UnsupportedError, match="print"):
        bad[1, 1](np.zeros(2))
