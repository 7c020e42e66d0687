"""print() in kernels: numbers, bools, string constants, tuples and the
threadIdx-like objects, Python's spacing and newline (floats as %f, as
numba.cuda prints them); vprintf on the GPU."""
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


@gpu.jit
def show_nul(x):
    print("before\x00after", x[0])


def test_a_string_stops_at_nul(capfd):
    # numba's answer, documented: the string goes to printf as a C string
    if gpu.current_target() != "cpu":
        pytest.skip("GPU printf output comes from the driver")
    show_nul[1, 1](np.array([7], np.int64))
    lines = [l for l in capfd.readouterr().out.splitlines() if l.startswith("before")]
    assert lines == ["before 7"]


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


def fmt(v):
    """Python's str(v), with floats as %f (as numba.cuda prints them)."""
    if isinstance(v, tuple):
        return "(" + ", ".join(fmt(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, (float, np.floating)):
        return "%f" % v
    return str(v)


@gpu.jit
def show_tuples(a, b):
    i = gpu.grid(1)
    if i < a.size:
        print("row", i, (a[i], b[i]), ((a[i], (b[i],)), i == 1), (7,), None)


def test_print_tuples(capfd, rng):
    if gpu.current_target() != "cpu":
        pytest.skip("GPU printf output comes from the driver")
    a = rng.integers(-1000, 1000, 3)
    b = rng.standard_normal(3)
    show_tuples[1, 4](a, b)
    lines = sorted(l for l in capfd.readouterr().out.splitlines() if l.startswith("row"))
    want = sorted(" ".join(["row", str(i), fmt((a[i], b[i])), fmt(((a[i], (b[i],)), i == 1)), "(7,)", "None"])
                  for i in range(3))
    assert lines == want


@gpu.jit
def show_dim3():
    print("dims", gpu.threadIdx, gpu.blockIdx, gpu.blockDim, gpu.gridDim)


def test_print_dim3(capfd):
    if gpu.current_target() != "cpu":
        pytest.skip("GPU printf output comes from the driver")
    show_dim3[(2, 1, 1), (2, 3, 1)]()
    lines = sorted(l for l in capfd.readouterr().out.splitlines() if l.startswith("dims"))
    want = sorted("dims %s %s (2, 3, 1) (2, 1, 1)" % (str((x, y, 0)), str((bx, 0, 0)))
                  for bx in range(2) for y in range(3) for x in range(2))
    assert lines == want


def test_print_of_more_than_32_values_in_tuples(capfd, rng):
    if gpu.current_target() != "cpu":
        pytest.skip("GPU printf output comes from the driver")

    @gpu.jit
    def many(r):
        t = (r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14],
             r[15], r[16])
        print("many", t, t)

    r = rng.integers(-10**12, 10**12, 17)
    many[1, 1](r)
    out = capfd.readouterr().out
    half = "(" + ", ".join(str(v) for v in r) + ")"
    assert out.splitlines()[-1] == "many %s %s" % (half, half)
