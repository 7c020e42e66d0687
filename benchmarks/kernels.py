"""The benchmark kernels, written once against the numba.cuda API and bound to
either gpujit or numba.cuda: load(module) execs this source with `gpu` = that
module, so both compilers see the very same Python function."""
import os
import statistics
import time

import numpy as np

# The timings are of launches, not of warnings: numba's performance warnings (on by default in
# gpujit and numba-cuda) would be given by every launch of fewer than 128 blocks or of a host
# array, for both compilers. Set before either reads its settings (gpujit on its first launch,
# numba-cuda on import); gpujit also reads numba's names.
for _name in ("CUDA_LOW_OCCUPANCY_WARNINGS", "CUDA_WARN_ON_IMPLICIT_COPY"):
    os.environ.setdefault("NUMBA_" + _name, "0")

SOURCE = '''
TPB = 16

def saxpy(out, a, x, y):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]

def matmul(A, B, C):
    # 16x16 shared-memory tiles; x is the column so that loads coalesce
    sA = gpu.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = gpu.shared.array(shape=(TPB, TPB), dtype=float32)
    x, y = gpu.grid(2)
    tx = gpu.threadIdx.x
    ty = gpu.threadIdx.y
    tmp = float32(0.0)
    for i in range((A.shape[1] + TPB - 1) // TPB):
        sA[ty, tx] = 0.0
        sB[ty, tx] = 0.0
        if y < A.shape[0] and tx + i * TPB < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and ty + i * TPB < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        gpu.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        gpu.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp

def block_sum(x, total):
    # 128-thread tree reduction in shared memory, one atomic per block
    sh = gpu.shared.array(128, float32)
    tid = gpu.threadIdx.x
    i = gpu.grid(1)
    sh[tid] = x[i] if i < x.size else float32(0.0)
    gpu.syncthreads()
    s = 64
    while s > 0:
        if tid < s:
            sh[tid] += sh[tid + s]
        gpu.syncthreads()
        s //= 2
    if tid == 0:
        gpu.atomic.add(total, 0, sh[0])

def copy3(out, x, y):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = x[i]
'''

SIGS = {
    "saxpy": "void(float32[::1], float32, float32[::1], float32[::1])",
    "matmul": "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])",
    "block_sum": "void(float32[::1], float32[::1])",
    "copy3": "void(float32[::1], float32[::1], float32[::1])",
}


def load(gpu, float32=np.float32):
    """{name: python function} with `gpu` bound to the given kernel API module."""
    ns = {"gpu": gpu, "float32": float32}
    exec(compile(SOURCE, __file__.replace(".pyc", ".py") + ":SOURCE", "exec"), ns)
    return {k: ns[k] for k in SIGS}


def numba_cuda():
    """numba.cuda, or None (numba predates numpy 2.5's removal of row_stack)."""
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    try:
        from numba import cuda
        import numba
        return cuda, numba.float32
    except Exception:
        return None, None


def median_seconds(run, sync, reps=10):
    """Median wall time of run() followed by sync(), after one untimed run."""
    run()
    sync()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        run()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def bar_plot(path, groups, series, title, ylabel, ref=None, log=False):
    """Grouped bars, one group per row of a table and one bar per column, written to `path`
    (PNG). series: {label: [value per group]} (None for a missing value). The legend sits below
    the axes, where it covers no bar; `ref` draws a horizontal line (1.0 for ratios)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(groups) + 2), 4.2))
    for j, (label, vals) in enumerate(series.items()):
        xs = np.arange(len(groups)) + (j - (len(series) - 1) / 2) * width
        ax.bar(xs, [v if v is not None else 0 for v in vals], width, label=label)
    if ref is not None:
        ax.axhline(ref, color="k", lw=0.5)
    if log:
        ax.set_yscale("log")
    ax.set_xticks(np.arange(len(groups)), groups)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    # below the tick labels, however many lines they take
    lines = max(str(g).count("\n") + 1 for g in groups)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.06 - 0.06 * lines), ncol=len(series), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
