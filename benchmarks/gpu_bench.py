"""GPU benchmarks, side by side in one process: gpujit vs numba-cuda vs CuPy
(RawKernel, i.e. CUDA C through NVRTC) vs a C loop over cuLaunchKernel.

    PYTHONPATH=python python3 benchmarks/gpu_bench.py [--json OUT.json] [--quick]

Method: wall-clock (time.perf_counter) around many launches, with a device
synchronise before and after; medians of repeats. Bandwidth counts bytes read
plus written once each. Every kernel's result is checked before it is timed.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kernels  # noqa: E402

import gpujit  # noqa: E402

RESULTS = {}


def record(section, name, value, unit):
    RESULTS.setdefault(section, {})[name] = (value, unit)
    print("  %-44s %10.3f %s" % (name, value, unit), flush=True)


def try_import_cupy():
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        return cupy
    except Exception as e:
        print("cupy unavailable: %s" % e)
        return None


CUDA_C = r'''
extern "C" __global__ void copy3(float *out, const float *x, const float *y, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i];
}
extern "C" __global__ void saxpy(float *out, float a, const float *x, const float *y, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
#define TPB 16
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int n) {
    __shared__ float sA[TPB][TPB];
    __shared__ float sB[TPB][TPB];
    int x = blockIdx.x * TPB + threadIdx.x, y = blockIdx.y * TPB + threadIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    float tmp = 0.0f;
    for (int i = 0; i < (n + TPB - 1) / TPB; i++) {
        sA[ty][tx] = 0.0f;
        sB[ty][tx] = 0.0f;
        if (y < n && tx + i * TPB < n) sA[ty][tx] = A[y * n + tx + i * TPB];
        if (x < n && ty + i * TPB < n) sB[ty][tx] = B[(ty + i * TPB) * n + x];
        __syncthreads();
        for (int j = 0; j < TPB; j++) tmp += sA[ty][j] * sB[j][tx];
        __syncthreads();
    }
    if (y < n && x < n) C[y * n + x] = tmp;
}
'''

C_LAUNCH = r'''
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
#define CK(x) do { CUresult r = (x); if (r) { printf("error %d at %s\n", r, #x); return 1; } } while (0)
int main(int argc, char **argv) {
    int n = atoi(argv[2]);
    CUdevice dev; CUcontext ctx; CUmodule mod; CUfunction fn;
    CK(cuInit(0)); CK(cuDeviceGet(&dev, 0)); CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
    FILE *f = fopen(argv[1], "rb"); static char ptx[1 << 20]; size_t len = fread(ptx, 1, sizeof ptx - 1, f); ptx[len] = 0; fclose(f);
    CK(cuModuleLoadData(&mod, ptx)); CK(cuModuleGetFunction(&fn, mod, "copy3"));
    CUdeviceptr a, b, c; CK(cuMemAlloc(&a, 4096)); CK(cuMemAlloc(&b, 4096)); CK(cuMemAlloc(&c, 4096));
    long sz = 1, st = 4;
    void *params[] = {&a, &sz, &st, &b, &sz, &st, &c, &sz, &st};
    for (int i = 0; i < 1000; i++) CK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, 0, params, NULL));
    CK(cuCtxSynchronize());
    double best_async = 1e9, best_sync = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
        for (int i = 0; i < n; i++) cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, 0, params, NULL);
        double t1 = now();
        CK(cuCtxSynchronize());
        if ((t1 - t0) / n < best_async) best_async = (t1 - t0) / n;
        t0 = now();
        for (int i = 0; i < n / 10; i++) { cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, 0, params, NULL); cuCtxSynchronize(); }
        t1 = now();
        if ((t1 - t0) / (n / 10) < best_sync) best_sync = (t1 - t0) / (n / 10);
    }
    printf("%.3f %.3f\n", best_async * 1e6, best_sync * 1e6);
    return 0;
}
'''


def per_launch_us(launch, n, sync):
    """Best of 5 repeats of n launches: (async µs/launch, launch+sync µs)."""
    for _ in range(200):
        launch()
    sync()
    best_async = best_sync = 1e9
    for _ in range(5):
        sync()
        t0 = time.perf_counter()
        for _ in range(n):
            launch()
        t1 = time.perf_counter()
        sync()
        best_async = min(best_async, (t1 - t0) / n)
        m = max(n // 10, 10)
        t0 = time.perf_counter()
        for _ in range(m):
            launch()
            sync()
        best_sync = min(best_sync, (time.perf_counter() - t0) / m)
    return best_async * 1e6, best_sync * 1e6


def bench_launch(cupy, cuda, nbk, quick):
    print("\n== launch overhead: a 3-array kernel, 1 block of 32 threads")
    n = 2000 if quick else 20000
    g = kernels.load(gpujit)
    sig = kernels.SIGS["copy3"]
    k = gpujit.jit(sig)(g["copy3"])
    d = [gpujit.to_device(np.zeros(1024, np.float32)) for _ in range(3)]
    a, s = per_launch_us(lambda: k[1, 32](d[0], d[1], d[2]), n, gpujit.synchronize)
    record("launch", "gpujit, DeviceArray: async launch", a, "us")
    record("launch", "gpujit, DeviceArray: launch + synchronize", s, "us")
    bench_graph(k, quick)
    if cupy is not None:
        c = [cupy.zeros(1024, cupy.float32) for _ in range(3)]
        a, s = per_launch_us(lambda: k[1, 32](c[0], c[1], c[2]), n, gpujit.synchronize)
        record("launch", "gpujit, CuPy arrays (CAI): async launch", a, "us")
        raw = cupy.RawModule(code=CUDA_C, options=("-std=c++14",)).get_function("copy3")
        nn = np.int64(1)
        a, s = per_launch_us(lambda: raw((1,), (32,), (c[0], c[1], c[2], nn)), n, cupy.cuda.Device().synchronize)
        record("launch", "CuPy RawKernel: async launch", a, "us")
        record("launch", "CuPy RawKernel: launch + synchronize", s, "us")
    if cuda is not None:
        nk = cuda.jit(sig)(nbk["copy3"])
        nd = [cuda.to_device(np.zeros(1024, np.float32)) for _ in range(3)]
        a, s = per_launch_us(lambda: nk[1, 32](nd[0], nd[1], nd[2]), n, cuda.synchronize)
        record("launch", "numba-cuda, device arrays: async launch", a, "us")
        record("launch", "numba-cuda, device arrays: launch + synchronize", s, "us")
        if cupy is not None:
            a, s = per_launch_us(lambda: nk[1, 32](c[0], c[1], c[2]), n // 4, cuda.synchronize)
            record("launch", "numba-cuda, CuPy arrays (CAI): async launch", a, "us")
    # the C floor: the same PTX (gpujit's), launched from a C loop
    with tempfile.TemporaryDirectory() as tmp:
        ptx = os.path.join(tmp, "copy3.ptx")
        with open(ptx, "w") as f:
            f.write(gpujit.compile_ptx(g["copy3"], sig, cc=gpujit.get_current_device().compute_capability)[0])
        src = os.path.join(tmp, "launch.c")
        with open(src, "w") as f:
            f.write(C_LAUNCH)
        exe = os.path.join(tmp, "launch")
        cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
        r = subprocess.run(["gcc", "-O2", src, "-o", exe, "-I%s/include" % cuda_home, "-L%s/lib64/stubs" % cuda_home,
                            "-lcuda"], capture_output=True, text=True)
        if r.returncode == 0:
            out = subprocess.run([exe, ptx, str(n)], capture_output=True, text=True).stdout.split()
            if len(out) == 2:
                record("launch", "C loop over cuLaunchKernel: async launch", float(out[0]), "us")
                record("launch", "C loop over cuLaunchKernel: launch + synchronize", float(out[1]), "us")
        else:
            print("C launcher did not build: %s" % r.stderr[-300:])


def bench_graph(k, quick, nodes=1000):
    """The same launch, 1,000 of them captured into a CUDA graph (gpujit.graph) and the graph
    replayed, per kernel; beside it 1,000 separate launches on a stream and one synchronize."""
    s = gpujit.stream()
    x = np.random.default_rng().standard_normal(1024).astype(np.float32)
    d = [gpujit.to_device(np.full(1024, np.nan, np.float32)), gpujit.to_device(x), gpujit.to_device(x)]
    with gpujit.graph(s) as g:
        for _ in range(nodes):
            k[1, 32, s](d[0], d[1], d[2])
    g.upload()
    g.launch()
    s.synchronize()
    got = d[0].copy_to_host()
    assert np.array_equal(got[:32], x[:32]) and np.isnan(got[32:]).all(), "the graph's result is wrong"
    reps = 5 if quick else 20
    best_graph = best_loop = 1e9
    for _ in range(5):
        s.synchronize()
        t0 = time.perf_counter()
        for _ in range(reps):
            g.launch()
        s.synchronize()
        best_graph = min(best_graph, (time.perf_counter() - t0) / (reps * nodes))
        t0 = time.perf_counter()
        for _ in range(nodes):
            k[1, 32, s](d[0], d[1], d[2])
        s.synchronize()
        best_loop = min(best_loop, (time.perf_counter() - t0) / nodes)
    record("launch", "gpujit, %d launches + synchronize: per kernel" % nodes, best_loop * 1e6, "us")
    record("launch", "gpujit graph of %d launches, replayed: per kernel" % nodes, best_graph * 1e6, "us")
    t0 = time.perf_counter()
    for i in range(200):
        g.update(i % nodes, d[0], d[1], d[2])
    record("launch", "gpujit graph: update a kernel node's arguments", (time.perf_counter() - t0) / 200 * 1e6, "us")


def bench_saxpy(cupy, cuda, nbk, quick):
    n = 1 << (24 if quick else 28)
    print("\n== saxpy over 2^%d float32 (bytes: 3 x 4 x n)" % (n.bit_length() - 1))
    nbytes = 12 * n
    rng = np.random.default_rng()
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    a = np.float32(1.7)
    want = a * x + y
    tpb = 256
    blocks = (n + tpb - 1) // tpb
    g = kernels.load(gpujit)
    k = gpujit.jit(kernels.SIGS["saxpy"])(g["saxpy"])
    dx, dy = gpujit.to_device(x), gpujit.to_device(y)
    dout = gpujit.to_device(np.full(n, np.nan, np.float32))
    k[blocks, tpb](dout, a, dx, dy)
    np.testing.assert_allclose(dout.copy_to_host(), want, rtol=1e-5, atol=1e-5)
    t = kernels.median_seconds(lambda: k[blocks, tpb](dout, a, dx, dy), gpujit.synchronize, 20)
    record("saxpy", "gpujit", nbytes / t / 1e9, "GB/s")
    if cuda is not None:
        nk = cuda.jit(kernels.SIGS["saxpy"])(nbk["saxpy"])
        nx, ny = cuda.to_device(x), cuda.to_device(y)
        nout = cuda.device_array(n, np.float32)
        nk[blocks, tpb](nout, a, nx, ny)
        np.testing.assert_allclose(nout.copy_to_host(), want, rtol=1e-5, atol=1e-5)
        t = kernels.median_seconds(lambda: nk[blocks, tpb](nout, a, nx, ny), cuda.synchronize, 20)
        record("saxpy", "numba-cuda", nbytes / t / 1e9, "GB/s")
        del nx, ny, nout
    if cupy is not None:
        raw = cupy.RawModule(code=CUDA_C).get_function("saxpy")
        cx, cy = cupy.asarray(x), cupy.asarray(y)
        cout = cupy.empty(n, cupy.float32)
        nn = np.int64(n)
        raw((blocks,), (tpb,), (cout, a, cx, cy, nn))
        np.testing.assert_allclose(cupy.asnumpy(cout), want, rtol=1e-5, atol=1e-5)
        sync = cupy.cuda.Device().synchronize
        t = kernels.median_seconds(lambda: raw((blocks,), (tpb,), (cout, a, cx, cy, nn)), sync, 20)
        record("saxpy", "CUDA C (NVRTC via CuPy RawKernel)", nbytes / t / 1e9, "GB/s")
        t = kernels.median_seconds(lambda: cout.__setitem__(Ellipsis, cx), sync, 20)
        record("saxpy", "device copy (cupy, 2 x 4 x n bytes)", 8 * n / t / 1e9, "GB/s")
        del cx, cy, cout


def bench_matmul(cupy, cuda, nbk, quick):
    n = 1024 if quick else 4096
    print("\n== 16x16 shared-memory tiled matmul, %d^2 float32" % n)
    flops = 2.0 * n ** 3
    rng = np.random.default_rng()
    A = rng.standard_normal((n, n), dtype=np.float32)
    B = rng.standard_normal((n, n), dtype=np.float32)
    want = (A.astype(np.float64) @ B.astype(np.float64))
    grid = ((n + 15) // 16, (n + 15) // 16)
    g = kernels.load(gpujit)
    k = gpujit.jit(kernels.SIGS["matmul"])(g["matmul"])
    dA, dB = gpujit.to_device(A), gpujit.to_device(B)
    dC = gpujit.to_device(np.full((n, n), np.nan, np.float32))
    k[grid, (16, 16)](dA, dB, dC)
    np.testing.assert_allclose(dC.copy_to_host(), want, rtol=1e-3, atol=1e-2 * np.sqrt(n))
    t = kernels.median_seconds(lambda: k[grid, (16, 16)](dA, dB, dC), gpujit.synchronize, 10)
    record("matmul", "gpujit", flops / t / 1e12, "TFLOP/s")
    if cuda is not None:
        nk = cuda.jit(kernels.SIGS["matmul"])(nbk["matmul"])
        nA, nB, nC = cuda.to_device(A), cuda.to_device(B), cuda.device_array((n, n), np.float32)
        nk[grid, (16, 16)](nA, nB, nC)
        np.testing.assert_allclose(nC.copy_to_host(), want, rtol=1e-3, atol=1e-2 * np.sqrt(n))
        t = kernels.median_seconds(lambda: nk[grid, (16, 16)](nA, nB, nC), cuda.synchronize, 10)
        record("matmul", "numba-cuda", flops / t / 1e12, "TFLOP/s")
    if cupy is not None:
        raw = cupy.RawModule(code=CUDA_C).get_function("matmul")
        cA, cB = cupy.asarray(A), cupy.asarray(B)
        cC = cupy.empty((n, n), cupy.float32)
        nn = np.int32(n)
        raw(grid, (16, 16), (cA, cB, cC, nn))
        np.testing.assert_allclose(cupy.asnumpy(cC), want, rtol=1e-3, atol=1e-2 * np.sqrt(n))
        sync = cupy.cuda.Device().synchronize
        t = kernels.median_seconds(lambda: raw(grid, (16, 16), (cA, cB, cC, nn)), sync, 10)
        record("matmul", "CUDA C (NVRTC via CuPy RawKernel)", flops / t / 1e12, "TFLOP/s")
        t = kernels.median_seconds(lambda: cupy.matmul(cA, cB, out=cC), sync, 10)
        record("matmul", "cuBLAS (cupy.matmul)", flops / t / 1e12, "TFLOP/s")


FRESH = r'''
import time, sys
t0 = time.perf_counter()
import numpy as np
t1 = time.perf_counter()
import gpujit as gpu
t2 = time.perf_counter()
@gpu.jit
def saxpy(out, a, x, y):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]
n = 1 << 20
x = np.ones(n, np.float32); y = np.ones(n, np.float32)
d = gpu.device_array(n, np.float32)
t3 = time.perf_counter()
saxpy[(n + 255) // 256, 256](d, np.float32(2.0), gpu.to_device(x), gpu.to_device(y))
gpu.synchronize()
t4 = time.perf_counter()
assert float(d.copy_to_host()[7]) == 3.0
print("%.3f %.3f" % ((t2 - t1) * 1e3, (t4 - t3) * 1e3))
'''

FRESH_NUMBA = FRESH.replace("import gpujit as gpu", "np.row_stack = np.vstack\nfrom numba import cuda as gpu")


def bench_fresh(have_numba):
    print("\n== a fresh process: import, then the first saxpy launch (compile + load + launch + sync)")
    for label, src in (("gpujit", FRESH), ("numba-cuda", FRESH_NUMBA)):
        if label == "numba-cuda" and not have_numba:
            continue
        for cache in ("warm driver cache", "driver cache disabled"):
            env = dict(os.environ)
            if cache != "warm driver cache":
                env["CUDA_CACHE_DISABLE"] = "1"
            runs = []
            for _ in range(3):
                r = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, env=env)
                if r.returncode != 0:
                    print("  %s failed: %s" % (label, r.stderr[-400:]))
                    break
                runs.append([float(v) for v in r.stdout.split()])
            if runs:
                record("fresh", "%s: import (%s)" % (label, cache), statistics.median(r[0] for r in runs), "ms")
                record("fresh", "%s: first launch (%s)" % (label, cache), statistics.median(r[1] for r in runs), "ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="launch,saxpy,matmul,fresh")
    args = ap.parse_args()
    dev = gpujit.get_current_device()
    print("gpujit GPU benchmarks, %s, %s (cc %d.%d), driver %s, Python %s" % (
        time.strftime("%Y-%m-%d"), dev.name, dev.compute_capability[0], dev.compute_capability[1],
        gpujit.driver_version(), platform.python_version()))
    cupy = try_import_cupy()
    cuda, nb_f32 = kernels.numba_cuda()
    nbk = kernels.load(cuda, nb_f32) if cuda is not None else None
    only = args.only.split(",")
    for name, fn in (("launch", bench_launch), ("saxpy", bench_saxpy), ("matmul", bench_matmul)):
        if name in only:
            try:
                fn(cupy, cuda, nbk, args.quick)
            except Exception as e:
                import traceback
                traceback.print_exc()
                print("  %s benchmark failed: %s" % (name, e))
    if "fresh" in only:
        bench_fresh(cuda is not None)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(RESULTS, f, indent=1)


if __name__ == "__main__":
    main()
