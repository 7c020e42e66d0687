"""Tensor-core GEMM: C = A @ B, float16 in, float32 out, with wmma fragments (mma.sync) fed by
a multi-stage cp.async pipeline in dynamic shared memory.

A block computes a BM x BN tile of C with warps of WM x WN each (WM/16 x WN/16 fragments of
16x16). The K dimension goes by BK through STAGES shared buffers: while the warps multiply
one pair of tiles, the copies of the next STAGES-1 pairs are in flight
(cp_async.wait_group(STAGES-2) waits for all but the newest STAGES-2 groups). Blocks take
their tiles of C in groups of GROUP rows, so that consecutive blocks share B's columns in L2.

The kernel is written out from a Config: the fragments are separate variables (the language
has no arrays of fragments), so its source is generated, one line per fragment operation.
`tc_gemm` is the kernel of the default configuration.

    python3 examples/tc_gemm.py      # GPU if present, else the CPU backend; checks itself
"""
from collections import namedtuple

import numpy as np

import gpujit as gpu
from gpujit import cp_async, wmma

Config = namedtuple("Config", "bm bn bk stages wm wn group")
PAD = 8   # float16s after each shared row: rows stay 16-byte aligned, ldmatrix's rows hit other banks
# the fastest of benchmarks/tc_bench.py --sweep on an H200 (docs/performance.md)
DEFAULT = Config(bm=128, bn=128, bk=64, stages=3, wm=64, wn=64, group=8)


def threads(cfg):
    return 32 * (cfg.bm // cfg.wm) * (cfg.bn // cfg.wn)


def shared_bytes(cfg):
    return 2 * cfg.stages * (cfg.bm * (cfg.bk + PAD) + cfg.bk * (cfg.bn + PAD))


def source(cfg):
    """The kernel's Python source for one configuration."""
    fm, fn, nthreads = cfg.wm // 16, cfg.wn // 16, threads(cfg)
    sa_w, sb_w = cfg.bk + PAD, cfg.bn + PAD
    sa = cfg.stages * cfg.bm * sa_w
    pieces_a, pieces_b = cfg.bm * cfg.bk // 8, cfg.bk * cfg.bn // 8   # 16-byte copies per tile
    assert pieces_a % nthreads == 0 and pieces_b % nthreads == 0, cfg
    L = []
    add = L.append
    add("def tc_gemm(A, B, C):")
    add("    smem = gpu.shared.array(0, np.float16)")
    add("    sA = smem[0:%d].reshape((%d, %d, %d))" % (sa, cfg.stages, cfg.bm, sa_w))
    add("    sB = smem[%d:%d].reshape((%d, %d, %d))" % (sa, sa + cfg.stages * cfg.bk * sb_w, cfg.stages, cfg.bk,
                                                          sb_w))
    add("    tid = gpu.threadIdx.x")
    add("    warp = tid // 32")
    add("    wm = (warp // %d) * %d" % (cfg.bn // cfg.wn, cfg.wm))
    add("    wn = (warp %% %d) * %d" % (cfg.bn // cfg.wn, cfg.wn))
    add("    num_m, num_n = C.shape[0] // %d, C.shape[1] // %d" % (cfg.bm, cfg.bn))
    add("    pid = gpu.blockIdx.x")
    add("    first = (pid // (%d * num_n)) * %d" % (cfg.group, cfg.group))
    add("    rows = min(num_m - first, %d)" % cfg.group)
    add("    m0 = (first + (pid %% (%d * num_n)) %% rows) * %d" % (cfg.group, cfg.bm))
    add("    n0 = ((pid %% (%d * num_n)) // rows) * %d" % (cfg.group, cfg.bn))
    for i in range(fm):
        for j in range(fn):
            add("    c%d_%d = wmma.fragment(wmma.accumulator, 16, 16, 16, np.float32)" % (i, j))
            add("    wmma.fill_fragment(c%d_%d, 0)" % (i, j))
    for i in range(fm):
        add("    a%d = wmma.fragment(wmma.matrix_a, 16, 16, 16, np.float16, wmma.row_major)" % i)
    for j in range(fn):
        add("    b%d = wmma.fragment(wmma.matrix_b, 16, 16, 16, np.float16, wmma.row_major)" % j)
    add("    ntiles = A.shape[1] // %d" % cfg.bk)

    def copies(indent, buf, k):
        add(indent + "for p in range(%d):" % (pieces_a // nthreads))
        add(indent + "    q = tid + p * %d" % nthreads)
        add(indent + "    r, c = q // %d, (q %% %d) * 8" % (cfg.bk // 8, cfg.bk // 8))
        add(indent + "    cp_async.copy(sA, (%s, r, c), A, (m0 + r, %s + c), 16)" % (buf, k))
        add(indent + "for p in range(%d):" % (pieces_b // nthreads))
        add(indent + "    q = tid + p * %d" % nthreads)
        add(indent + "    r, c = q // %d, (q %% %d) * 8" % (cfg.bn // 8, cfg.bn // 8))
        add(indent + "    cp_async.copy(sB, (%s, r, c), B, (%s + r, n0 + c), 16)" % (buf, k))

    add("    for s in range(%d):   # the first tiles, one group each" % (cfg.stages - 1))
    add("        if s < ntiles:")
    copies("            ", "s", "s * %d" % cfg.bk)
    add("        cp_async.commit_group()")
    add("    for t in range(ntiles):")
    add("        cp_async.wait_group(%d)   # tile t is in" % (cfg.stages - 2))
    add("        gpu.syncthreads()   # and every warp is done with the buffer refilled next")
    add("        nt = t + %d" % (cfg.stages - 1))
    add("        if nt < ntiles:")
    copies("            ", "nt %% %d" % cfg.stages, "nt * %d" % cfg.bk)
    add("        cp_async.commit_group()")
    add("        buf = t %% %d" % cfg.stages)
    add("        for kk in range(0, %d, 16):" % cfg.bk)
    for j in range(fn):
        add("            wmma.load_matrix_sync(b%d, sB[buf, kk:kk + 16, wn + %d:wn + %d])" % (j, 16 * j, 16 * j + 16))
    for i in range(fm):
        add("            wmma.load_matrix_sync(a%d, sA[buf, wm + %d:wm + %d, kk:kk + 16])" % (i, 16 * i, 16 * i + 16))
    for i in range(fm):
        for j in range(fn):
            add("            wmma.mma_sync(c%d_%d, a%d, b%d, c%d_%d)" % (i, j, i, j, i, j))
    add("    i, j = m0 + wm, n0 + wn")
    for i in range(fm):
        for j in range(fn):
            add("    wmma.store_matrix_sync(C[i + %d:i + %d, j + %d:j + %d], c%d_%d, wmma.mem_row_major)"
                % (16 * i, 16 * i + 16, 16 * j, 16 * j + 16, i, j))
    return "\n".join(L) + "\n"


def make(cfg):
    """The kernel of a configuration, compiled on first launch."""
    import linecache
    src = source(cfg)
    name = "<tc_gemm %s>" % ",".join("%s=%d" % kv for kv in cfg._asdict().items())
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)   # errors show the line
    ns = {"gpu": gpu, "np": np, "wmma": wmma, "cp_async": cp_async}
    exec(compile(src, name, "exec"), ns)
    return gpu.jit(ns["tc_gemm"])


tc_gemm = make(DEFAULT)
_kernels = {DEFAULT: tc_gemm}


def launch(A, B, C, cfg=DEFAULT):
    """C = A @ B; M a multiple of cfg.bm, N of cfg.bn, K of cfg.bk, all C-contiguous."""
    (M, K), (K2, N) = A.shape, B.shape
    if K != K2 or tuple(C.shape) != (M, N) or M % cfg.bm or N % cfg.bn or K % cfg.bk:
        raise ValueError("tc_gemm: shapes (%d, %d) @ (%d, %d) -> %s: M, N, K must be multiples of %d, %d, %d"
                         % (M, K, K2, N, tuple(C.shape), cfg.bm, cfg.bn, cfg.bk))
    if cfg not in _kernels:
        _kernels[cfg] = make(cfg)
    _kernels[cfg][(M // cfg.bm) * (N // cfg.bn), threads(cfg), 0, shared_bytes(cfg)](A, B, C)


def reference(A, B):
    """The CPU target's rule: each product exact in float32, summed in float32 in order of k."""
    acc = np.zeros((A.shape[0], B.shape[1]), np.float32)
    A32, B32 = A.astype(np.float32), B.astype(np.float32)
    for k in range(A.shape[1]):
        acc += A32[:, k:k + 1] * B32[k:k + 1, :]
    return acc


def main(m=256, n=256, k=192):
    rng = np.random.default_rng()
    A = rng.standard_normal((m, k)).astype(np.float16)
    B = rng.standard_normal((k, n)).astype(np.float16)
    C = np.full((m, n), np.nan, np.float32)
    launch(A, B, C)
    if gpu.current_target() == "cpu":
        np.testing.assert_array_equal(C, reference(A, B))
    np.testing.assert_allclose(C, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-3, atol=1e-3 * np.sqrt(k))
    print("tc_gemm %dx%d @ %dx%d (float16 -> float32) on the %s target: OK" % (m, k, k, n, gpu.current_target()))


if __name__ == "__main__":
    main()
