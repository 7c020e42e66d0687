"""Reductions and ufuncs on the GPU, side by side in one process: gpujit.reduce against
CuPy's sum and numba-cuda's cuda.reduce; gpujit.vectorize against a hand-written gpujit
kernel of the same operation, CuPy's ElementwiseKernel and numba-cuda's vectorize.

    PYTHONPATH=python python3 benchmarks/ufunc_bench.py [--json OUT.json] [--quick] [--overhead]

Method: float32 device arrays (no host transfers in the timed region), wall-clock median of
repeated calls with a device synchronise after each (kernels.median_seconds); every result is
checked against NumPy before it is timed. Bandwidth counts the bytes read plus written once.
A reduction's call includes what each library does per call. Like is compared with like:
"sum" rows return the scalar to the host (gpujit.reduce and numba-cuda's return a host
scalar; CuPy's sum is followed by float(), its copy to the host); "sum to device" rows leave
it on the device (gpujit.reduce(x, res=d) against cupy.sum(x, out=d)).

The per-call overhead section (the only one with --overhead; it runs on the cpu target too)
times calls on 32 elements, where the kernels' own time is negligible on a GPU: the mean of
a batch of calls with one synchronise at its end (launches queue), the best of several
batches. On the cpu target a launch runs the kernel, so there the reduction's rows include
its kernel; "its kernel alone" is that kernel launched directly, for subtraction.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kernels  # noqa: E402

import gpujit  # noqa: E402

RESULTS = {}


def record(bench, impl, value, unit):
    RESULTS.setdefault(bench, {})[impl] = (value, unit)
    print("  %-22s %-28s %10.3f %s" % (bench, impl, value, unit), flush=True)


def per_call_us(run, sync, calls=300, batches=7):
    """Microseconds per call: the best of `batches` batches of `calls` calls, each batch
    ending with one synchronise."""
    run()
    sync()
    best = None
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(calls):
            run()
        sync()
        t = (time.perf_counter() - t0) / calls * 1e6
        best = t if best is None else min(best, t)
    return best


def overhead(cp, cuda):
    """Per-call time of each library's call on 32 float32 elements."""
    n = 32
    rng = np.random.default_rng()
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    a = np.float32(2.5)
    gsync = gpujit.synchronize
    bench = "per call, n=32 (%s)" % gpujit._core.get_target()
    print("%s: microseconds per call" % bench)
    dx, dy, dout = gpujit.to_device(x), gpujit.to_device(y), gpujit.device_array(n, np.float32)
    gkern = gpujit.jit(kernels.SIGS["saxpy"])(kernels.load(gpujit)["saxpy"])
    gvec = gpujit.vectorize(["float32(float32, float32, float32)"])(lambda a, x, y: a * x + y)
    gsum = gpujit.reduce(lambda a, b: a + b)
    dres = gpujit.device_array(1, np.float32)
    rows = [("gpujit kernel launch", lambda: gkern[1, 32](dout, a, dx, dy), gsync),
            ("gpujit.vectorize out=", lambda: gvec(a, dx, dy, out=dout), gsync),
            ("gpujit.vectorize", lambda: gvec(a, dx, dy), gsync)]
    got = float(gsum(dx))
    assert abs(got - float(x.sum())) <= 1e-4, (got, x.sum())
    if hasattr(gsum, "_plan"):     # the one-launch reduction (an older one had two)
        kernel, tpb, _ = gsum._plan(np.dtype(np.float32), True)
        from gpujit.reduction import _buffers
        bufs = next(b for k, b in _buffers.items() if k[4] == np.float32)
        rows.append(("gpujit.reduce: its kernel alone",
                     lambda: kernel[1, tpb](dx, bufs.partials, bufs.count, dres, np.float32(0)), gsync))
        # the Python path alone: the same call with the kernel swapped for an empty one
        stub = gpujit.reduce(lambda a, b: a + b)
        stub(dx)
        (key, (_, tpb, blocks)), = stub._plans.items()

        def empty(a, partials, count, out, init):
            pass
        stub._plans[key] = (gpujit.jit(kernel._eager[0])(empty), tpb, blocks)
        rows += [("gpujit.reduce, empty kernel", lambda: stub(dx), gsync),
                 ("gpujit.reduce res=, empty kernel", lambda: stub(dx, res=dres), gsync)]
    rows += [("gpujit.reduce res=", lambda: gsum(dx, res=dres), gsync),
             ("gpujit.reduce", lambda: gsum(dx), gsync)]
    for impl, run, sync in rows:
        record(bench, impl, per_call_us(run, sync), "us")

    def axpy(a, x, y):
        return a * x + y
    rows = []
    try:
        if cuda is not None:
            import numba
            nx, ny, nout = cuda.to_device(x), cuda.to_device(y), cuda.device_array(n, np.float32)
            nvec = numba.vectorize(["float32(float32, float32, float32)"], target="cuda")(axpy)
            nsum = cuda.reduce(lambda a, b: a + b)
            nres = cuda.device_array(1, np.float32)
            rows += [("numba-cuda vectorize out=", lambda: nvec(a, nx, ny, out=nout), cuda.synchronize),
                     ("numba-cuda reduce res=", lambda: nsum(nx, res=nres), cuda.synchronize),
                     ("numba-cuda reduce", lambda: nsum(nx), cuda.synchronize)]
        if cp is not None:
            cx, cy, cout = cp.asarray(x), cp.asarray(y), cp.empty(n, cp.float32)
            cres = cp.empty((), cp.float32)
            ek = cp.ElementwiseKernel("float32 a, float32 x, float32 y", "float32 out", "out = a * x + y", "axpy")
            csync = cp.cuda.Device().synchronize
            rows += [("CuPy ElementwiseKernel", lambda: ek(a, cx, cy, cout), csync),
                     ("CuPy sum out=", lambda: cp.sum(cx, out=cres), csync),
                     ("CuPy float(sum)", lambda: float(cx.sum()), csync)]
        for impl, run, sync in rows:
            record(bench, impl, per_call_us(run, sync), "us")
    except Exception as e:      # the other libraries' rows are for comparison only
        print("  (the other libraries' per-call rows stopped: %s: %s)" % (type(e).__name__, e))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--overhead", action="store_true", help="only the per-call overhead section")
    args = ap.parse_args()
    try:
        import cupy as cp
    except ImportError:
        cp = None
    cuda, _ = kernels.numba_cuda()
    if cuda is not None and not cuda.is_available():
        cuda = None
    overhead(cp, cuda)
    if args.overhead:
        if args.json:
            with open(args.json, "w") as f:
                json.dump(RESULTS, f, indent=1)
        return
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
        # the result left on the device: no copy to the host, no wait in the call
        bench = "sum to device, n=2^%d" % (n.bit_length() - 1)
        dres = gpujit.device_array(1, np.float32)
        rows = [("gpujit.reduce res=", gpujit.to_device(x), lambda a: gsum(a, res=dres), gsync,
                 lambda: dres.copy_to_host()[0])]
        if cp is not None:
            cres = cp.empty((), cp.float32)
            rows.append(("CuPy sum out=", cp.asarray(x), lambda a: cp.sum(a, out=cres), cp.cuda.Device().synchronize,
                         lambda: float(cres)))
        for impl, dx, f, sync, read in rows:
            f(dx)
            sync()
            got = float(read())
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
