"""Tensor-core GEMM on the GPU: gpujit's examples/tc_gemm.py (wmma fragments on mma.sync, fed
by a multi-stage cp.async pipeline) beside cuBLAS (through PyTorch and CuPy) and a Triton
matmul kernel, float16 inputs with float32 accumulation, at 4096^3 and 8192^3.

    PYTHONPATH=python python3 benchmarks/tc_bench.py [--sizes 4096,8192] [--sweep] [--json OUT.json]

--sweep times the example's kernel in several configurations (block tile, K step, stages,
warp tile) besides its default one.

Method: every implementation's result is checked first against a float32 product (PyTorch,
TF32 off) within the accumulation bound docs/language.md gives (k * 2**-23 * |A| @ |B|, plus
float16's rounding of the output where the output is float16); then the median of 10 timed
runs after 3 warm-ups, CUDA events around each. Needs a GPU with PyTorch; Triton and CuPy
where installed (an implementation whose package is missing is skipped and said so).
"""
import argparse
import importlib.util
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def load_example():
    path = os.path.join(HERE, "..", "examples", "tc_gemm.py")
    spec = importlib.util.spec_from_file_location("tc_gemm_example", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def triton_matmul():
    """A standard Triton matmul (grouped tile order, float32 accumulator), or None."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def mm(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
        pid = tl.program_id(0)
        num_m = tl.cdiv(M, BM)
        num_n = tl.cdiv(N, BN)
        per_group = GROUP * num_n
        first_m = (pid // per_group) * GROUP
        size_m = min(num_m - first_m, GROUP)
        pm = first_m + (pid % per_group) % size_m
        pn = (pid % per_group) // size_m
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        pa = a + rm[:, None] * sam + rk[None, :] * sak
        pb = b + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for _ in range(0, K, BK):
            acc += tl.dot(tl.load(pa), tl.load(pb))
            pa += BK * sak
            pb += BK * sbk
        tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc)

    def run(A, B, C):
        M, K = A.shape
        N = B.shape[1]
        BM, BN, BK = 128, 256, 64
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        mm[grid](A, B, C, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1), C.stride(0), C.stride(1),
                 BM=BM, BN=BN, BK=BK, GROUP=8, num_warps=8, num_stages=3)
    return run


SWEEP = [  # (bm, bn, bk, stages, wm, wn, group)
    (128, 128, 32, 2, 64, 32, 8), (128, 128, 32, 3, 64, 32, 8), (128, 128, 32, 4, 64, 32, 8),
    (128, 256, 32, 3, 64, 64, 8), (128, 256, 32, 4, 64, 64, 8), (256, 128, 32, 3, 64, 64, 8),
    (128, 256, 64, 3, 64, 64, 8), (128, 128, 32, 4, 64, 64, 8), (128, 128, 64, 4, 64, 64, 8),
    (128, 128, 64, 2, 64, 64, 8)]


def timed(torch, fn, reps=10, warm=3):
    for _ in range(warm):
        fn()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="4096,8192")
    ap.add_argument("--sweep", action="store_true", help="also other configurations of the example's kernel")
    ap.add_argument("--json")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("tc_bench: needs PyTorch (and a GPU)")
    if not torch.cuda.is_available():
        sys.exit("tc_bench: no GPU")
    torch.backends.cuda.matmul.allow_tf32 = False
    example = load_example()
    tri = triton_matmul()
    if tri is None:
        print("triton: not installed, skipped")
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        g = torch.Generator(device="cuda").manual_seed(n)
        A = torch.randn((n, n), device="cuda", dtype=torch.float16, generator=g)
        B = torch.randn((n, n), device="cuda", dtype=torch.float16, generator=g)
        ref = A.float() @ B.float()
        bound = n * 2.0 ** -23 * (A.float().abs() @ B.float().abs())
        impls = {"cublas (torch, f16 out)": (lambda: torch.matmul(A, B), True)}
        try:
            import cupy
            Ac, Bc = cupy.from_dlpack(A), cupy.from_dlpack(B)
            impls["cupy matmul (f16 out)"] = (lambda: torch.from_dlpack(Ac @ Bc), True)
        except ImportError:
            pass
        C32 = torch.empty((n, n), device="cuda", dtype=torch.float32)
        configs = [example.DEFAULT] + ([example.Config(*c) for c in SWEEP] if args.sweep else [])
        for cfg in dict.fromkeys(configs):
            label = "gpujit %dx%dx%d s%d w%dx%d" % cfg[:6]
            impls[label + (" (default)" if cfg == example.DEFAULT else "")] = (
                lambda cfg=cfg: (example.launch(A, B, C32, cfg), C32)[1], False)
        if tri is not None:
            Ct = torch.empty((n, n), device="cuda", dtype=torch.float32)
            impls["triton"] = (lambda: (tri(A, B, Ct), Ct)[1], False)
        for name, (fn, f16_out) in impls.items():
            out = fn()
            torch.cuda.synchronize()
            err = (out.float() - ref).abs()
            allowed = bound + (ref.abs() * 2.0 ** -11 if f16_out else 0)
            ok = bool((err <= allowed * 1.01 + 1e-6).all())
            if not ok:
                print("%-34s %5d^3: WRONG (max error %.3g, allowed there %.3g)" % (
                    name, n, err.max().item(), allowed.flatten()[err.argmax()].item()))
                results.append({"impl": name, "n": n, "ok": False})
                continue
            t = timed(torch, fn)
            tflops = 2.0 * n ** 3 / t / 1e12
            print("%-34s %5d^3: %8.3f ms  %7.1f TFLOP/s" % (name, n, t * 1e3, tflops))
            results.append({"impl": name, "n": n, "ok": True, "seconds": t, "tflops": tflops})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
