"""bfloat16 on the GPU, side by side in one process: gpujit vs PyTorch vs CUDA C (CuPy's
RawModule through NVRTC, with cuda_bf16.h).

1. element-wise: out = a * x + y, every operand bfloat16 (2^26 elements; 6 bytes an element);
2. reduction: the sum of a bfloat16 array, accumulated in float32 (2^26 elements; 2 bytes an
   element), as torch.sum(x, dtype=torch.float32) does.

    PYTHONPATH=python python3 benchmarks/bf16_bench.py [--json OUT.json] [--n N]

Method: each result is checked against a float64 reference on the host (bit for bit for the
element-wise kernel against PyTorch's, which rounds each bfloat16 operation to nearest even as the
GPU does; within 1e-3 relative for the sums, whose order differs) before it is timed. Time: the
median of 7 samples of 20 launches each between two device synchronisations, wall clock. Bandwidth
counts each input read once and each output written once. The gpujit and CUDA C sums include the
zeroing of their one-element output (a small PyTorch kernel) in their time. gpujit reads PyTorch's bfloat16 tensors
through DLPack, with no copy.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402,F401  (sets numba's warning variables before any import of it)

import gpujit as gpu  # noqa: E402
from gpujit import float32  # noqa: E402

CUDA_C = r'''
#include <cuda_bf16.h>
extern "C" __global__ void axpy(__nv_bfloat16 *out, __nv_bfloat16 a, const __nv_bfloat16 *x,
                                const __nv_bfloat16 *y, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
extern "C" __global__ void bsum(const __nv_bfloat16 *x, float *out, long n) {
    __shared__ float sm[256];
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x, s = (long)gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (; i < n; i += s) acc += __bfloat162float(x[i]);
    int t = threadIdx.x;
    sm[t] = acc;
    __syncthreads();
    for (int w = 128; w > 0; w /= 2) {
        if (t < w) sm[t] += sm[t + w];
        __syncthreads();
    }
    if (t == 0) atomicAdd(out, sm[0]);
}
'''


@gpu.jit
def axpy(out, a, x, y):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@gpu.jit
def bsum(x, out):
    sm = gpu.shared.array(256, float32)
    i = gpu.grid(1)
    s = gpu.gridsize(1)
    acc = float32(0.0)
    while i < x.size:
        acc += float32(x[i])
        i += s
    t = gpu.threadIdx.x
    sm[t] = acc
    gpu.syncthreads()
    w = 128
    while w > 0:
        if t < w:
            sm[t] += sm[t + w]
        gpu.syncthreads()
        w //= 2
    if t == 0:
        gpu.atomic.add(out, 0, sm[0])


def per_launch(run, sync, launches=20, samples=7):
    run()
    sync()
    ts = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(launches):
            run()
        sync()
        ts.append((time.perf_counter() - t0) / launches)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json")
    ap.add_argument("--n", type=int, default=1 << 26)
    args = ap.parse_args()
    import torch
    import cupy as cp
    n = args.n
    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    results = {"n": n, "date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name()}
    g = torch.Generator(device="cpu").manual_seed(int(np.random.default_rng().integers(2**31)))
    x = torch.randn(n, generator=g).to(torch.bfloat16).to(dev)
    y = torch.randn(n, generator=g).to(torch.bfloat16).to(dev)
    a = 1.75
    a_bf = torch.tensor(a, dtype=torch.bfloat16)
    raw = cp.RawModule(code=CUDA_C, options=("-std=c++17",))
    as_cp = lambda t: cp.asarray(t.view(torch.int16))  # noqa: E731  (the same memory, as 16-bit words)
    tpb = 256
    blocks = (n + tpb - 1) // tpb
    print("bfloat16 on %s, n = %d, median of 7 x 20 launches" % (results["gpu"], n))

    # 1. element-wise, bit for bit against PyTorch's (a * x + y in bf16: the product rounded, then the sum,
    # or one fused rounding: both PyTorch and the kernels are checked against the fused and unfused forms)
    want_unfused = (a_bf.to(dev) * x + y)
    xf, yf = x.double(), y.double()
    # the exact a*x + y (a float64 holds it), rounded once to bfloat16, to nearest even, on its
    # bits: PyTorch's float64 -> bfloat16 goes through float32, which rounds twice
    bits = (a * xf + yf).view(torch.int64)
    bits = ((bits + ((1 << 44) - 1) + ((bits >> 45) & 1)) >> 45) << 45
    want_fused = bits.view(torch.float64).to(torch.bfloat16)   # exact: 8 significant bits
    rows = {}

    def check(o):
        ok = (o.view(torch.int16) == want_fused.view(torch.int16)) | (o.view(torch.int16) == want_unfused.view(torch.int16))
        if not bool(ok.all()):
            bad = (~ok).nonzero().flatten()
            i = bad[:4]
            sys.exit("element-wise bf16 result differs from both roundings at %d of %d elements, first %s: "
                     "x %s, y %s, got %s, fused %s, unfused %s" % (
                         bad.numel(), n, i.tolist(), x[i].tolist(), y[i].tolist(), o[i].tolist(),
                         want_fused[i].tolist(), want_unfused[i].tolist()))

    o = torch.full((n,), float("nan"), dtype=torch.bfloat16, device=dev)
    import ml_dtypes
    a_scalar = ml_dtypes.bfloat16(a)
    run = lambda: axpy[blocks, tpb](o, a_scalar, x, y)  # noqa: E731
    run()
    sync()
    check(o)
    rows["gpujit"] = per_launch(run, sync)
    o.fill_(float("nan"))
    f = raw.get_function("axpy")
    ocp, xcp, ycp = as_cp(o), as_cp(x), as_cp(y)
    a_bits = np.array([a], np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)[0]
    run = lambda: f((blocks,), (tpb,), (ocp, a_bits, xcp, ycp, np.int64(n)))  # noqa: E731
    run()
    sync()
    check(o)
    rows["CUDA C"] = per_launch(run, sync)
    run = lambda: torch.add(y, x, alpha=a, out=o)  # noqa: E731
    run()
    sync()
    check(o)
    rows["PyTorch"] = per_launch(run, sync)
    gb = 6.0 * n / 1e9
    print("1. out = a*x + y (bf16)      %s" % "  ".join("%s %.1f GB/s" % (k, gb / t) for k, t in rows.items()))
    results["axpy_GBps"] = {k: gb / t for k, t in rows.items()}

    # 2. the sum, accumulated in float32
    want = float(xf.sum())
    tol = 1e-3 * float(xf.abs().sum())
    rows = {}
    out = torch.zeros(1, dtype=torch.float32, device=dev)
    red_blocks = 132 * 8

    def run_gj():
        out.zero_()
        bsum[red_blocks, tpb](x, out)
    run_gj()
    sync()
    assert abs(float(out[0]) - want) <= tol, (float(out[0]), want)
    rows["gpujit"] = per_launch(run_gj, sync)
    f = raw.get_function("bsum")
    ocp = cp.asarray(out)

    def run_c():
        out.zero_()
        f((red_blocks,), (tpb,), (xcp, ocp, np.int64(n)))
    out.fill_(float("nan"))
    run_c()
    sync()
    assert abs(float(out[0]) - want) <= tol, (float(out[0]), want)
    rows["CUDA C"] = per_launch(run_c, sync)
    run = lambda: torch.sum(x, dtype=torch.float32)  # noqa: E731
    assert abs(float(run()) - want) <= tol
    rows["PyTorch"] = per_launch(run, sync)
    gb = 2.0 * n / 1e9
    print("2. sum(x) in f32 (bf16 in)   %s" % "  ".join("%s %.1f GB/s" % (k, gb / t) for k, t in rows.items()))
    results["sum_GBps"] = {k: gb / t for k, t in rows.items()}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
