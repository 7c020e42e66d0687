"""Kernel-language benchmarks on the GPU, side by side in one run: gpujit vs
numba-cuda (the same Python source) vs CUDA C of the same algorithm (NVRTC
through CuPy's RawModule).

    PYTHONPATH=python python3 benchmarks/lang_bench.py [--json OUT.json] [--plot OUT.png] [--quick]
    PYTHONPATH=python python3 benchmarks/lang_bench.py --variants [LIST] [--json OUT.json] [--quick]

Kernels: 16x16 tiled matmul 4096^2; float32 sum of 2^28 (shared-memory tree +
one atomic per block, and a warp-shuffle variant); 5-point stencil 8192^2;
Black-Scholes over 2^24 options; an all-pairs N-body step with 64 Ki bodies.
Method: each kernel's result is checked, then the median of 10 timed runs
(wall clock around launch + device synchronise). Bandwidth-bound kernels are
also given as a fraction of the device-copy bandwidth measured in the run.

--variants measures sets of gpujit's GPU passes after O3 (GPUJIT_PTX_PASSES, one
compile per kernel and variant, "default" the set used unless the variable is set,
"none" LLVM's O3 alone) side by side with CUDA C in
one process: each kernel of this file and gpu_bench.py's saxpy and matmul, each
variant's result checked, then three rounds that time CUDA C and every variant
in turn (median of 10 launches each; the best round is reported, so that drift
during the run favours no one). LIST is a ';'-separated list of variants.
"""
import argparse
import json
import math
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402

import gpujit  # noqa: E402

SOURCE = '''
TPB = 16
RED = 256
TILE = 128
EPS2 = 0.01

def sum_tree(x, total):
    sh = gpu.shared.array(RED, float32)
    t = gpu.threadIdx.x
    i = gpu.grid(1)
    acc = float32(0.0)
    while i < x.size:
        acc += x[i]
        i += gpu.gridsize(1)
    sh[t] = acc
    gpu.syncthreads()
    s = RED // 2
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        gpu.syncthreads()
        s //= 2
    if t == 0:
        gpu.atomic.add(total, 0, sh[0])

def sum_shfl(x, total):
    i = gpu.grid(1)
    acc = float32(0.0)
    while i < x.size:
        acc += x[i]
        i += gpu.gridsize(1)
    off = 16
    while off > 0:
        acc += gpu.shfl_down_sync(0xFFFFFFFF, acc, off)
        off //= 2
    if gpu.laneid == 0:
        gpu.atomic.add(total, 0, acc)

def stencil(src, dst):
    x, y = gpu.grid(2)
    h = src.shape[0]
    w = src.shape[1]
    if 0 < y < h - 1 and 0 < x < w - 1:
        dst[y, x] = float32(0.25) * (src[y - 1, x] + src[y + 1, x] + src[y, x - 1] + src[y, x + 1])

@gpu.jit(device=True)
def cnd(d):
    return float32(0.5) * (float32(1.0) + math.erf(d * float32(0.7071067811865476)))

def black_scholes(call, put, S, K, T, r, v):
    i = gpu.grid(1)
    if i < S.size:
        sqrt_t = math.sqrt(T[i])
        d1 = (math.log(S[i] / K[i]) + (r + float32(0.5) * v * v) * T[i]) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        e = K[i] * math.exp(-r * T[i])
        call[i] = S[i] * cnd(d1) - e * cnd(d2)
        put[i] = e * cnd(-d2) - S[i] * cnd(-d1)

def nbody(pos, acc):
    sx = gpu.shared.array(TILE, float32)
    sy = gpu.shared.array(TILE, float32)
    sz = gpu.shared.array(TILE, float32)
    i = gpu.grid(1)
    n = pos.shape[0]
    xi = pos[i, 0]
    yi = pos[i, 1]
    zi = pos[i, 2]
    ax = float32(0.0)
    ay = float32(0.0)
    az = float32(0.0)
    for start in range(0, n, TILE):
        t = gpu.threadIdx.x
        sx[t] = pos[start + t, 0]
        sy[t] = pos[start + t, 1]
        sz[t] = pos[start + t, 2]
        gpu.syncthreads()
        for k in range(TILE):
            dx = sx[k] - xi
            dy = sy[k] - yi
            dz = sz[k] - zi
            r2 = dx * dx + dy * dy + dz * dz + float32(EPS2)
            inv = float32(1.0) / math.sqrt(r2)
            inv3 = inv * inv * inv
            ax += dx * inv3
            ay += dy * inv3
            az += dz * inv3
        gpu.syncthreads()
    acc[i, 0] = ax
    acc[i, 1] = ay
    acc[i, 2] = az
'''

SIGS = {
    "sum_tree": "void(float32[::1], float32[::1])",
    "sum_shfl": "void(float32[::1], float32[::1])",
    "stencil": "void(float32[:, ::1], float32[:, ::1])",
    "black_scholes": "void(float32[::1], float32[::1], float32[::1], float32[::1], float32[::1], float32, float32)",
    "nbody": "void(float32[:, ::1], float32[:, ::1])",
}

CUDA_C = r'''
#define RED 256
#define TILE 128
extern "C" __global__ void sum_tree(const float *x, float *total, long n) {
    __shared__ float sh[RED];
    int t = threadIdx.x;
    long i = (long)blockIdx.x * blockDim.x + t, step = (long)blockDim.x * gridDim.x;
    float acc = 0.0f;
    for (; i < n; i += step) acc += x[i];
    sh[t] = acc;
    __syncthreads();
    for (int s = RED / 2; s > 0; s /= 2) {
        if (t < s) sh[t] += sh[t + s];
        __syncthreads();
    }
    if (t == 0) atomicAdd(total, sh[0]);
}
extern "C" __global__ void sum_shfl(const float *x, float *total, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x, step = (long)blockDim.x * gridDim.x;
    float acc = 0.0f;
    for (; i < n; i += step) acc += x[i];
    for (int off = 16; off > 0; off /= 2) acc += __shfl_down_sync(0xFFFFFFFF, acc, off);
    if ((threadIdx.x & 31) == 0) atomicAdd(total, acc);
}
extern "C" __global__ void stencil(const float *src, float *dst, int h, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (0 < y && y < h - 1 && 0 < x && x < w - 1)
        dst[(long)y * w + x] = 0.25f * (src[(long)(y - 1) * w + x] + src[(long)(y + 1) * w + x] +
                                        src[(long)y * w + x - 1] + src[(long)y * w + x + 1]);
}
__device__ float cnd(float d) { return 0.5f * (1.0f + erff(d * 0.7071067811865476f)); }
extern "C" __global__ void black_scholes(float *call, float *put, const float *S, const float *K,
                                         const float *T, float r, float v, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float sqrt_t = sqrtf(T[i]);
        float d1 = (logf(S[i] / K[i]) + (r + 0.5f * v * v) * T[i]) / (v * sqrt_t);
        float d2 = d1 - v * sqrt_t;
        float e = K[i] * expf(-r * T[i]);
        call[i] = S[i] * cnd(d1) - e * cnd(d2);
        put[i] = e * cnd(-d2) - S[i] * cnd(-d1);
    }
}
extern "C" __global__ void nbody(const float *pos, float *acc, int n) {
    __shared__ float sx[TILE], sy[TILE], sz[TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float xi = pos[3 * i], yi = pos[3 * i + 1], zi = pos[3 * i + 2];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int start = 0; start < n; start += TILE) {
        int t = threadIdx.x;
        sx[t] = pos[3 * (start + t)];
        sy[t] = pos[3 * (start + t) + 1];
        sz[t] = pos[3 * (start + t) + 2];
        __syncthreads();
        for (int k = 0; k < TILE; k++) {
            float dx = sx[k] - xi, dy = sy[k] - yi, dz = sz[k] - zi;
            float r2 = dx * dx + dy * dy + dz * dz + 0.01f;
            float inv = 1.0f / sqrtf(r2);
            float inv3 = inv * inv * inv;
            ax += dx * inv3; ay += dy * inv3; az += dz * inv3;
        }
        __syncthreads();
    }
    acc[3 * i] = ax; acc[3 * i + 1] = ay; acc[3 * i + 2] = az;
}
'''

RESULTS = {}

# GPUJIT_PTX_PASSES values measured by --variants ("" leaves it unset: the default set)
VARIANTS = ("", "none", "hoist", "shortptr", "unroll", "mergegep", "shortptr,unroll", "hoist,unroll,mergegep")


def record(bench, impl, value, unit):
    RESULTS.setdefault(bench, {})[impl] = (value, unit)
    print("  %-14s %-40s %10.3f %s" % (bench, impl, value, unit), flush=True)


def load(module, f32):
    ns = {"gpu": module, "float32": f32, "math": math}
    exec(compile(SOURCE, __file__ + ":SOURCE", "exec"), ns)
    return ns


def variant_cases(cp, rng, size):
    """Each kernel as a dict: its Python function and signature, launch configuration, arguments,
    a check of the result, the CUDA C function and its arguments, and the work one launch does
    (for the throughput). size 0: full, 1: --quick, 2: --tiny (a smoke test of this harness)."""
    import gpu_bench
    raw = cp.RawModule(code=CUDA_C)
    raw_b = cp.RawModule(code=gpu_bench.CUDA_C)
    ns = load(gpujit, np.float32)
    kn = kernels.load(gpujit)
    host = cp.asnumpy
    cases = []

    n = 1 << (28, 24, 14)[size]
    x = rng.random(n, dtype=np.float32)
    cx = cp.asarray(x)
    want_sum = float(x.astype(np.float64).sum())
    for name in ("sum_tree", "sum_shfl"):
        total = cp.zeros(1, cp.float32)

        def check(total=total):
            got = float(host(total)[0])
            assert abs(got - want_sum) < 1e-3 * want_sum, (got, want_sum)

        cases.append(dict(name=name, fn=ns[name], sig=SIGS[name], unit="GB/s", work=4 * n / 1e9,
                          config=(132 * 8, 256), args=(cx, total), before=lambda t=total: t.fill(0), check=check,
                          c=(raw.get_function(name), (cx, total, np.int64(n)))))

    h = w = (8192, 2048, 64)[size]
    src = rng.random((h, w), dtype=np.float32)
    csrc, dst = cp.asarray(src), cp.asarray(src)
    ref = src.copy()
    ref[1:-1, 1:-1] = 0.25 * (src[:-2, 1:-1] + src[2:, 1:-1] + src[1:-1, :-2] + src[1:-1, 2:])
    cases.append(dict(name="stencil", fn=ns["stencil"], sig=SIGS["stencil"], unit="GB/s", work=8 * h * w / 1e9,
                      config=(((w + 31) // 32, (h + 7) // 8), (32, 8)), args=(csrc, dst),
                      before=lambda: dst.fill(np.nan), check=lambda: np.testing.assert_allclose(host(dst)[1:-1, 1:-1], ref[1:-1, 1:-1], rtol=1e-6),
                      c=(raw.get_function("stencil"), (csrc, dst, np.int32(h), np.int32(w)))))

    n = 1 << (24, 20, 12)[size]
    S = cp.asarray(rng.uniform(5, 30, n).astype(np.float32))
    K = cp.asarray(rng.uniform(1, 100, n).astype(np.float32))
    T = cp.asarray(rng.uniform(0.25, 10, n).astype(np.float32))
    r, v = np.float32(0.02), np.float32(0.30)
    Sh, Kh, Th = (host(a).astype(np.float64)[:2000] for a in (S, K, T))
    d1 = (np.log(Sh / Kh) + (0.02 + 0.5 * 0.09) * Th) / (0.3 * np.sqrt(Th))
    d2 = d1 - 0.3 * np.sqrt(Th)
    from math import erf
    cndv = np.vectorize(lambda d: 0.5 * (1 + erf(d / math.sqrt(2))))
    want_call = Sh * cndv(d1) - Kh * np.exp(-0.02 * Th) * cndv(d2)
    call, put = cp.empty(n, cp.float32), cp.empty(n, cp.float32)
    cases.append(dict(name="black_scholes", fn=ns["black_scholes"], sig=SIGS["black_scholes"], unit="Goptions/s",
                      work=n / 1e9, config=((n + 255) // 256, 256), args=(call, put, S, K, T, r, v),
                      before=lambda: call.fill(np.nan),
                      check=lambda: np.testing.assert_allclose(host(call)[:2000], want_call, rtol=1e-3, atol=1e-3),
                      c=(raw.get_function("black_scholes"), (call, put, S, K, T, r, v, np.int64(n)))))

    n = (65536, 8192, 256)[size]
    pos = rng.standard_normal((n, 3), dtype=np.float32)
    cpos, acc = cp.asarray(pos), cp.empty((n, 3), cp.float32)
    sub = pos[:64].astype(np.float64)
    d = pos.astype(np.float64)[None, :, :] - sub[:, None, :]
    r2 = (d * d).sum(-1) + 0.01
    want_acc = (d / (r2 ** 1.5)[:, :, None]).sum(1)
    cases.append(dict(name="nbody", fn=ns["nbody"], sig=SIGS["nbody"], unit="TFLOP/s (20/pair)",
                      work=20.0 * n * n / 1e12, config=(n // 128, 128), args=(cpos, acc),
                      before=lambda: acc.fill(np.nan),
                      check=lambda: np.testing.assert_allclose(host(acc)[:64], want_acc, rtol=2e-3,
                                                               atol=2e-3 * np.abs(want_acc).max()),
                      c=(raw.get_function("nbody"), (cpos, acc, np.int32(n)))))

    n = 1 << (28, 24, 12)[size]
    a = np.float32(2.5)
    xs, ys = (cp.asarray(rng.random(n, dtype=np.float32)) for _ in range(2))
    out = cp.empty(n, cp.float32)
    want_saxpy = a * host(xs) + host(ys)
    cases.append(dict(name="saxpy", fn=kn["saxpy"], sig=kernels.SIGS["saxpy"], unit="GB/s", work=12 * n / 1e9,
                      config=((n + 255) // 256, 256), args=(out, a, xs, ys), before=lambda: out.fill(np.nan),
                      check=lambda: np.testing.assert_allclose(host(out), want_saxpy, rtol=1e-6),
                      c=(raw_b.get_function("saxpy"), (out, a, xs, ys, np.int64(n)))))

    n = (4096, 1024, 64)[size]
    A = rng.standard_normal((n, n), dtype=np.float32)
    B = rng.standard_normal((n, n), dtype=np.float32)
    want_mm = A.astype(np.float64) @ B.astype(np.float64)
    cA, cB, cC = cp.asarray(A), cp.asarray(B), cp.empty((n, n), cp.float32)
    cases.append(dict(name="matmul", fn=kn["matmul"], sig=kernels.SIGS["matmul"], unit="TFLOP/s",
                      work=2.0 * n ** 3 / 1e12, config=(((n + 15) // 16, (n + 15) // 16), (16, 16)), args=(cA, cB, cC),
                      before=lambda: cC.fill(np.nan),
                      check=lambda n=n: np.testing.assert_allclose(host(cC), want_mm, rtol=1e-3, atol=1e-2 * np.sqrt(n)),
                      c=(raw_b.get_function("matmul"), (cA, cB, cC, np.int32(n)))))
    return cases


def run_variants(args, variants):
    import hashlib

    import cupy as cp
    csync = cp.cuda.Device().synchronize
    size = 2 if args.tiny else 1 if args.quick else 0
    dev = gpujit.get_current_device()
    print("gpujit code generation variants, %s, %s, CuPy %s, target %s" % (
        time.strftime("%Y-%m-%d"), dev.name, cp.__version__, gpujit.current_target()))
    saved = os.environ.get("GPUJIT_PTX_PASSES")
    out = RESULTS.setdefault("variants", {})
    for case in variant_cases(cp, np.random.default_rng(), size):
        grid, block = case["config"]
        gk, ptx = {}, {}
        for v in variants:
            # the experiment applies to what compiles while it is set: the kernel, compiled and
            # launched (checked) once here, keeps its code from then on
            os.environ["GPUJIT_PTX_PASSES"] = v
            try:
                k = gpujit.jit(case["sig"])(case["fn"])
                case["before"]()
                k[grid, block](*case["args"])
                gpujit.synchronize()
                case["check"]()
                ptx[v] = hashlib.sha1(k.inspect_ptx(case["sig"]).encode()).hexdigest()[:8]
            finally:
                if saved is None:
                    del os.environ["GPUJIT_PTX_PASSES"]
                else:
                    os.environ["GPUJIT_PTX_PASSES"] = saved
            gk[v] = k
        f, cargs = case["c"]
        impls = {"CUDA C": (lambda: f(grid if isinstance(grid, tuple) else (grid,),
                                      block if isinstance(block, tuple) else (block,), cargs), csync)}
        for v in variants:
            impls[v] = ((lambda k=gk[v]: k[grid, block](*case["args"])), gpujit.synchronize)
        best = {}
        for _ in range(3):
            for name, (run, sync) in impls.items():
                t = kernels.median_seconds(run, sync, 5 if case["name"] == "nbody" else 10)
                best[name] = max(best.get(name, 0.0), case["work"] / t)
        ref = best["CUDA C"]
        print("%s (%s): CUDA C %.3f" % (case["name"], case["unit"], ref), flush=True)
        row = out.setdefault(case["name"], {"unit": case["unit"], "CUDA C": ref})
        for v in variants:
            same = [u or "default" for u in variants if u != v and ptx[u] == ptx[v] and variants.index(u) < variants.index(v)]
            print("  %-24s %10.3f  %.3f of CUDA C  ptx %s%s" % (v or "default", best[v], best[v] / ref, ptx[v],
                                                                 "  (same code as %s)" % same[0] if same else ""),
                  flush=True)
            row[v or "default"] = best[v]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--plot")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--variants", nargs="?", const=";".join(VARIANTS),
                    help="measure GPUJIT_PTX_PASSES variants (';'-separated, default: all known)")
    ap.add_argument("--tiny", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    q = args.quick
    if args.variants is not None:
        variants = tuple(dict.fromkeys([""] + [v.strip() for v in args.variants.split(";")]))
        run_variants(args, variants)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(RESULTS, fh, indent=1)
        return
    import cupy as cp
    cuda, nb_f32 = kernels.numba_cuda()
    impls = {"gpujit": (load(gpujit, np.float32), gpujit, gpujit.synchronize)}
    if cuda is not None:
        impls["numba-cuda"] = (load(cuda, nb_f32), cuda, cuda.synchronize)
    raw = cp.RawModule(code=CUDA_C)
    csync = cp.cuda.Device().synchronize
    rng = np.random.default_rng()
    dev = gpujit.get_current_device()
    print("gpujit kernel-language benchmarks, %s, %s, CuPy %s" % (time.strftime("%Y-%m-%d"), dev.name, cp.__version__))

    # device copy bandwidth (reference)
    n = 1 << (24 if q else 28)
    a, b = cp.ones(n, cp.float32), cp.empty(n, cp.float32)
    copy_bw = 8 * n / kernels.median_seconds(lambda: b.__setitem__(Ellipsis, a), csync) / 1e9
    record("copy", "device copy (cupy)", copy_bw, "GB/s")
    del a, b

    def jit(ns, mod, name):
        return mod.jit(SIGS[name])(ns[name])

    # float32 sums
    x = rng.random(n, dtype=np.float32)
    want = float(x.astype(np.float64).sum())
    cx = cp.asarray(x)
    for kname in ("sum_tree", "sum_shfl"):
        blocks, tpb = 132 * 8, 256
        for impl, (ns, mod, sync) in impls.items():
            k = jit(ns, mod, kname)
            if impl == "gpujit":
                gk = k
            total = cp.zeros(1, cp.float32)
            run = lambda: k[blocks, tpb](cx, total)  # noqa: E731
            run()
            sync()
            got = float(total.get()[0])
            assert abs(got - want) < 1e-3 * want, (kname, impl, got, want)
            t = kernels.median_seconds(run, sync)
            record(kname, impl, 4 * n / t / 1e9, "GB/s")
        f = raw.get_function(kname)
        total = cp.zeros(1, cp.float32)
        run = lambda: f((blocks,), (tpb,), (cx, total, np.int64(n)))  # noqa: E731
        t = kernels.median_seconds(run, csync)
        record(kname, "CUDA C", 4 * n / t / 1e9, "GB/s")
        # diagnosis of the sums' gap: gpujit's own PTX, loaded and launched by CuPy (our ABI:
        # each array as data pointer, shape, byte stride). As fast as CUDA C: the gap is in
        # gpujit's launch path; as slow as gpujit: it is in the code.
        ptx = gk.inspect_ptx(SIGS[kname])
        with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as fp:
            fp.write(ptx)
        g = cp.RawModule(path=fp.name).get_function(kname)
        total = cp.zeros(1, cp.float32)
        run = lambda: g((blocks,), (tpb,), (cx, np.int64(n), np.int64(4), total, np.int64(1), np.int64(4)))  # noqa: E731
        run()
        csync()
        got = float(total.get()[0])
        assert abs(got - want) < 1e-3 * want, (kname, "gpujit PTX via CuPy", got, want)
        t = kernels.median_seconds(run, csync)
        record(kname, "gpujit PTX, CuPy launch", 4 * n / t / 1e9, "GB/s")
        os.unlink(fp.name)
    del cx

    # stencil
    h = w = 2048 if q else 8192
    src = rng.random((h, w), dtype=np.float32)
    csrc = cp.asarray(src)
    ref = src.copy()
    ref[1:-1, 1:-1] = 0.25 * (src[:-2, 1:-1] + src[2:, 1:-1] + src[1:-1, :-2] + src[1:-1, 2:])
    grid = ((w + 31) // 32, (h + 7) // 8)
    for impl, (ns, mod, sync) in impls.items():
        k = jit(ns, mod, "stencil")
        dst = cp.asarray(src)
        run = lambda: k[grid, (32, 8)](csrc, dst)  # noqa: E731
        run()
        sync()
        np.testing.assert_allclose(dst.get(), ref, rtol=1e-6)
        record("stencil", impl, 8 * h * w / kernels.median_seconds(run, sync) / 1e9, "GB/s")
    f = raw.get_function("stencil")
    dst = cp.asarray(src)
    run = lambda: f(grid, (32, 8), (csrc, dst, np.int32(h), np.int32(w)))  # noqa: E731
    record("stencil", "CUDA C", 8 * h * w / kernels.median_seconds(run, csync) / 1e9, "GB/s")
    del csrc, dst

    # Black-Scholes
    n = 1 << (20 if q else 24)
    S = cp.asarray(rng.uniform(5, 30, n).astype(np.float32))
    K = cp.asarray(rng.uniform(1, 100, n).astype(np.float32))
    T = cp.asarray(rng.uniform(0.25, 10, n).astype(np.float32))
    r, v = np.float32(0.02), np.float32(0.30)
    Sh, Kh, Th = S.get().astype(np.float64), K.get().astype(np.float64), T.get().astype(np.float64)
    d1 = (np.log(Sh / Kh) + (0.02 + 0.5 * 0.09) * Th) / (0.3 * np.sqrt(Th))
    d2 = d1 - 0.3 * np.sqrt(Th)
    from math import erf
    cndv = np.vectorize(lambda d: 0.5 * (1 + erf(d / math.sqrt(2))))
    sample = slice(0, 2000)
    want_call = Sh[sample] * cndv(d1[sample]) - Kh[sample] * np.exp(-0.02 * Th[sample]) * cndv(d2[sample])
    tpb = 256
    blocks = (n + tpb - 1) // tpb
    for impl, (ns, mod, sync) in impls.items():
        k = jit(ns, mod, "black_scholes")
        call, put = cp.empty(n, cp.float32), cp.empty(n, cp.float32)
        run = lambda: k[blocks, tpb](call, put, S, K, T, r, v)  # noqa: E731
        run()
        sync()
        np.testing.assert_allclose(call.get()[sample], want_call, rtol=1e-3, atol=1e-3)
        record("black_scholes", impl, n / kernels.median_seconds(run, sync) / 1e9, "Goptions/s")
    f = raw.get_function("black_scholes")
    run = lambda: f((blocks,), (tpb,), (call, put, S, K, T, r, v, np.int64(n)))  # noqa: E731
    record("black_scholes", "CUDA C", n / kernels.median_seconds(run, csync) / 1e9, "Goptions/s")
    del S, K, T, call, put

    # N-body
    n = 8192 if q else 65536
    pos = rng.standard_normal((n, 3), dtype=np.float32)
    cpos = cp.asarray(pos)
    sub = pos[:64].astype(np.float64)
    d = pos.astype(np.float64)[None, :, :] - sub[:, None, :]
    r2 = (d * d).sum(-1) + 0.01
    want = (d / (r2 ** 1.5)[:, :, None]).sum(1)
    flops = 20.0 * n * n
    for impl, (ns, mod, sync) in impls.items():
        k = jit(ns, mod, "nbody")
        acc = cp.empty((n, 3), cp.float32)
        run = lambda: k[n // 128, 128](cpos, acc)  # noqa: E731
        run()
        sync()
        np.testing.assert_allclose(acc.get()[:64], want, rtol=2e-3, atol=2e-3 * np.abs(want).max())
        record("nbody", impl, flops / kernels.median_seconds(run, sync, 5) / 1e12, "TFLOP/s (20/pair)")
    f = raw.get_function("nbody")
    run = lambda: f((n // 128,), (128,), (cpos, acc, np.int32(n)))  # noqa: E731
    record("nbody", "CUDA C", flops / kernels.median_seconds(run, csync, 5) / 1e12, "TFLOP/s (20/pair)")

    if args.json:
        with open(args.json, "w") as fh:
            json.dump(RESULTS, fh, indent=1)
    if args.plot:
        benches = [b for b in RESULTS if b != "copy"]
        kernels.bar_plot(args.plot, benches,
                         {impl: [RESULTS[b][impl][0] / RESULTS[b]["CUDA C"][0] if impl in RESULTS[b] else None
                                 for b in benches] for impl in ("gpujit", "numba-cuda", "CUDA C")},
                         "H200: gpujit vs numba-cuda vs CUDA C (same algorithm), %s" % time.strftime("%Y-%m-%d"),
                         "throughput / CUDA C", ref=1.0)

if __name__ == "__main__":
    main()
