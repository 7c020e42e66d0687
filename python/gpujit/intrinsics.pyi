"""What type checkers and editors see of the names kernels use (intrinsics.py): each is
callable (in a kernel), the index objects have int .x, .y and .z, and each namespace
(shared, local, const, atomic, cg, fp16, wmma, cp_async, mbarrier) has its members."""
from typing import Any

class _KernelOnly:
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

class _Dim3(_KernelOnly):
    x: int
    y: int
    z: int

class _Namespace(_KernelOnly): ...

class _Atomic(_Namespace):
    add: _KernelOnly
    and_: _KernelOnly
    cas: _KernelOnly
    compare_and_swap: _KernelOnly
    dec: _KernelOnly
    exch: _KernelOnly
    inc: _KernelOnly
    max: _KernelOnly
    min: _KernelOnly
    nanmax: _KernelOnly
    nanmin: _KernelOnly
    or_: _KernelOnly
    sub: _KernelOnly
    xor: _KernelOnly

class _Cg(_Namespace):
    this_grid: _KernelOnly
    this_thread_block: _KernelOnly

class _Const(_Namespace):
    array_like: _KernelOnly

class _Fp16(_Namespace):
    habs: _KernelOnly
    hadd: _KernelOnly
    hceil: _KernelOnly
    hcos: _KernelOnly
    hdiv: _KernelOnly
    heq: _KernelOnly
    hexp: _KernelOnly
    hexp10: _KernelOnly
    hexp2: _KernelOnly
    hfloor: _KernelOnly
    hfma: _KernelOnly
    hge: _KernelOnly
    hgt: _KernelOnly
    hle: _KernelOnly
    hlog: _KernelOnly
    hlog10: _KernelOnly
    hlog2: _KernelOnly
    hlt: _KernelOnly
    hmax: _KernelOnly
    hmin: _KernelOnly
    hmul: _KernelOnly
    hne: _KernelOnly
    hneg: _KernelOnly
    hrcp: _KernelOnly
    hrint: _KernelOnly
    hrsqrt: _KernelOnly
    hsin: _KernelOnly
    hsqrt: _KernelOnly
    hsub: _KernelOnly
    htanh: _KernelOnly
    htanh_approx: _KernelOnly
    htrunc: _KernelOnly

class _Local(_Namespace):
    array: _KernelOnly

class _Shared(_Namespace):
    array: _KernelOnly

class _Cp_async(_Namespace):
    commit_group: _KernelOnly
    copy: _KernelOnly
    wait_all: _KernelOnly
    wait_group: _KernelOnly

class _Mbarrier(_Namespace):
    arrive: _KernelOnly
    arrive_expect_tx: _KernelOnly
    complete_tx: _KernelOnly
    expect_tx: _KernelOnly
    init: _KernelOnly
    test_wait: _KernelOnly
    test_wait_parity: _KernelOnly
    try_wait: _KernelOnly
    try_wait_parity: _KernelOnly

class _Wmma(_Namespace):
    accumulator: _KernelOnly
    col_major: _KernelOnly
    fill_fragment: _KernelOnly
    fragment: _KernelOnly
    load_matrix_sync: _KernelOnly
    matrix_a: _KernelOnly
    matrix_b: _KernelOnly
    mem_col_major: _KernelOnly
    mem_row_major: _KernelOnly
    mma_sync: _KernelOnly
    row_major: _KernelOnly
    store_matrix_sync: _KernelOnly

activemask: _KernelOnly
all_sync: _KernelOnly
any_sync: _KernelOnly
atomic: _Atomic
ballot_sync: _KernelOnly
blockDim: _Dim3
blockIdx: _Dim3
brev: _KernelOnly
cbrt: _KernelOnly
cg: _Cg
clz: _KernelOnly
const: _Const
cp_async: _Cp_async
eq_sync: _KernelOnly
ffs: _KernelOnly
fma: _KernelOnly
fp16: _Fp16
grid: _KernelOnly
gridDim: _Dim3
gridsize: _KernelOnly
laneid: _KernelOnly
lanemask_lt: _KernelOnly
ldca: _KernelOnly
ldcg: _KernelOnly
ldcs: _KernelOnly
ldcv: _KernelOnly
ldlu: _KernelOnly
local: _Local
match_all_sync: _KernelOnly
match_any_sync: _KernelOnly
mbarrier: _Mbarrier
nanosleep: _KernelOnly
popc: _KernelOnly
selp: _KernelOnly
shared: _Shared
shfl_down_sync: _KernelOnly
shfl_sync: _KernelOnly
shfl_up_sync: _KernelOnly
shfl_xor_sync: _KernelOnly
stcg: _KernelOnly
stcs: _KernelOnly
stwb: _KernelOnly
stwt: _KernelOnly
syncthreads: _KernelOnly
syncthreads_and: _KernelOnly
syncthreads_count: _KernelOnly
syncthreads_or: _KernelOnly
syncwarp: _KernelOnly
threadIdx: _Dim3
threadfence: _KernelOnly
threadfence_block: _KernelOnly
threadfence_system: _KernelOnly
warpsize: _KernelOnly
wmma: _Wmma

def add_paths(objs: Any) -> None: ...
def registry() -> dict[int, str]: ...
