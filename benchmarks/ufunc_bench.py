"""Reductions and ufuncs on the GPU, side by side in one process: gpujit.reduce against
CuPy's sum and numba-cuda's cuda.reduce; gpujit.vectorize against a hand-written gpujit
kernel of the same operation, CuPy's ElementwiseKernel and numba-cuda's vectorize.

    PYTHONPATH=python python3 benchmarks/ufunc_bench.py [--json OUT.json] [--quick]

Method: float32 device arrays (no host transfers in the timed region), wall-clock median of
repeated calls with a device synchronise after each (kernels.median_seconds); every result is
checked against NumPy before it is timed. Bandwidth counts the bytes read plus written once.
A reduction's call includes what each library does per call (allocating the partial
results, the second pass, and returning the scalar to the host).
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kernels  # noqa: E402

import gpujit  # noqa: E402

RESULTS = {}


def record(bench, impl, value, unit):
    RESULTS.setdefault(bench, {})[impl] = (value, unit)
    print("  %-22s %-28s %10.3f %s" % (bench, impl, value, unit), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    try:
        import cupy as cp
    except ImportError:
        cp = None
    cuda, _ = kernels.numba_cuda()
    if cuda is not None and not cuda.is_available():
        cuda = None
    rng = np.random.default_rng()
    sizes = [1 << 16, 1 << 20] if args.quick else [1 << 20, 1 << 24, 1 << 27]
    gsync = gpujit.synchronize

    gsum = gpujit.reduce(lambda a, b: a + b)
    nsum = cuda.reduce(lambda a, b: a + b) if cuda is not None else None
    for n in sizes:
        x = rng.random(n, dtype=np.float32)
        want = float(x.astype(np.float64).sum())
        bench = "sum, n=2^%d" % (n.bit_length() - 1)
        rows = [("gpujit.reduce", gpujit.to_device(x), gsum, gsync)]
        if nsum is not None:
            rows.append(("numba-cuda cuda.reduce", cuda.to_device(x), nsum, cuda.synchronize))
        if cp is not None:
            cx = cp.asarray(x)
            rows.append(("CuPy sum", cx, lambda a: float(a.sum()), cp.cuda.Device().synchronize))
        for impl, dx, f, sync in rows:
            got = float(f(dx))
            assert abs(got - want) <= 1e-4 * abs(want) + 1e-3, (bench, impl, got, want)
            t = kernels.median_seconds(lambda: f(dx), sync, reps=20)
            record(bench, impl, 4 * n / t / 1e9, "GB/s")

    sig = ["float32(float32, float32, float32)"]

    def axpy(a, x, y):
        return a * x + y

    gvec = gpujit.vectorize(sig, target="cuda")(axpy)
    gkern = gpujit.jit(kernels.SIGS["saxpy"])(kernels.load(gpujit)["saxpy"])
    nvec = None
    if cuda is not None:
        import numba
        nvec = numba.vectorize(sig, target="cuda")(axpy)
    for n in sizes:
        x = rng.random(n, dtype=np.float32)
        y = rng.random(n, dtype=np.float32)
        a = np.float32(2.5)
        want = a * x + y
        bench = "a*x+y, n=2^%d" % (n.bit_length() - 1)
        dx, dy, dout = gpujit.to_device(x), gpujit.to_device(y), gpujit.device_array(n, np.float32)
        tpb = 256
        blocks = (n + tpb - 1) // tpb
        rows = [("gpujit.vectorize", lambda: gvec(a, dx, dy, out=dout), dout, gsync),
                ("gpujit kernel", lambda: gkern[blocks, tpb](dout, a, dx, dy), dout, gsync)]
        if nvec is not None:
            nx, ny, nout = cuda.to_device(x), cuda.to_device(y), cuda.device_array(n, np.float32)
            rows.append(("numba-cuda vectorize", lambda: nvec(a, nx, ny, out=nout), nout, cuda.synchronize))
        if cp is not None:
            ek = cp.ElementwiseKernel("float32 a, float32 x, float32 y", "float32 out", "out = a * x + y", "axpy")
            cx, cy, cout = cp.asarray(x), cp.asarray(y), cp.empty(n, cp.float32)
            rows.append(("CuPy ElementwiseKernel", lambda: ek(a, cx, cy, cout), cout, cp.cuda.Device().synchronize))
        for impl, run, out, sync in rows:
            run()
            sync()
            got = out.get() if hasattr(out, "get") else out.copy_to_host()
            np.testing.assert_allclose(got, want, rtol=1e-6)
            t = kernels.median_seconds(run, sync, reps=20)
            record(bench, impl, 12 * n / t / 1e9, "GB/s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(RESULTS, f, indent=1)


if __name__ == "__main__":
    main()
