#!/usr/bin/env bash
# Everything that needs the GPU, in one call on a GPU machine that has no LLVM
# and no package registry: a carried LLVM runtime and a cp312 build made on the
# development machine, then the example, the whole test suite on the cuda
# target, and the benchmarks.
#
# On the development machine, first either
#   (a) the wheel, as users get it: scripts/wheel.sh ~/.pyenv/versions/3.12.1/bin/python3, and into .whl/
#       its cp312 wheel, NVIDIA's libdevice wheel (nvidia-cuda-nvcc-cu12) and any other wheel the GPU
#       machine lacks (cffi and pycparser for numba-cuda's tests; dask, distributed and what they
#       need); carry .whl; or
#   (b) the development build: scripts/build.sh ~/.pyenv/versions/3.12.1/bin/python3
#       (mkdir -p .deps && cd .deps && apt-get download libllvm19 libz3-4); carry .deps and build/py312.
# On the GPU machine: bash scripts/gpu.sh [tests|bench|variants|stress|compat|fuzz|multi|all|none, or a comma list: tests,fuzz]
# Results land in $OUT (default /tmp/gpujit-out): gpu_tests.log, gpu_bench.{log,json}, lang_bench.{log,json,png},
# compile_time.{log,png}, bf16_bench.{log,json}, lang_variants.{log,json}, stress.log, fuzz*.log (packed into results.tgz when more than 8). The CPU
# backend's tests run in CI, not here.
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
OUT=${OUT:-/tmp/gpujit-out}
mkdir -p "$OUT"
if ls .whl/gpujit-*.whl > /dev/null 2>&1; then
    # As a user installs it: the cp312 wheel built on the development machine (with
    # whatever else .whl holds: NVIDIA's libdevice wheel, Dask's) into a fresh venv that
    # also sees this machine's packages (NumPy, CuPy, PyTorch, numba-cuda) through a .pth
    # file; everything below then runs from a copy of the checkout without python/, so the
    # installed gpujit is the one imported, with no carried LLVM and no LD_LIBRARY_PATH.
    here=$(python3 -c 'import site; print(site.getsitepackages()[0])')
    # a fresh venv on every run: a machine kept warm between runs still has the last one, whose
    # gpujit (the same version number) pip would keep
    rm -rf /tmp/gj-venv
    python3 -m venv /tmp/gj-venv || exit 1
    there=$(/tmp/gj-venv/bin/python -c 'import site; print(site.getsitepackages()[0])')
    echo "$here" > "$there/machine-packages.pth"
    # (pip compiles the modules to bytecode as it installs them, as for a user: a fresh process
    # then imports gpujit without compiling its sources)
    /tmp/gj-venv/bin/python -m pip install -q --no-index --no-deps --disable-pip-version-check \
        .whl/*.whl || exit 1
    export GPUJIT_SOURCE_TREE=$PWD PATH=/tmp/gj-venv/bin:$PATH
    rm -rf /tmp/gj-src && mkdir -p /tmp/gj-src
    tar --exclude=./python --exclude=./.whl --exclude=./.deps --exclude=./build -cf - . | tar -C /tmp/gj-src -xf -
    cd /tmp/gj-src
    unset PYTHONPATH LD_LIBRARY_PATH
    export PYTHONUNBUFFERED=1
    python3 -c "import gpujit, os; print('gpujit', gpujit.__version__, 'installed at', os.path.dirname(gpujit.__file__))"
    core=$(python3 -c 'import gpujit._core as c; print(c.__file__)')
    ldd "$core" | grep -e LLVM -e "not found" && { echo "the installed extension needs a library from outside the wheel"; exit 1; }
    # libdevice from NVIDIA's pip wheel (nvidia-cuda-nvcc-cu12 in .whl), not the machine's toolkit
    unset CUDA_HOME CUDA_PATH
    python3 -m gpujit info | grep -i -e libdevice -e "^gpujit" -e llvm
else
    prefix=/tmp/gpujit-llvm
    if [ ! -d "$prefix" ]; then
        mkdir -p "$prefix"
        for f in .deps/*.deb; do dpkg -x "$f" "$prefix"; done
    fi
    export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:$prefix/usr/lib/llvm-19/lib:${LD_LIBRARY_PATH:-}"
    so=$(ls build/py312/_core*.so)
    ln -sf "../../$so" python/gpujit/
    export PYTHONPATH="$PWD/python" PYTHONUNBUFFERED=1
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true
python3 -c "import gpujit; gpujit.detect(); print('target:', gpujit.current_target())" || exit 1
python3 examples/saxpy.py || exit 1
python3 -m gpujit ptx examples/saxpy.py > /tmp/saxpy.ptx && ptxas -arch=sm_90 /tmp/saxpy.ptx -o /dev/null && echo "ptxas: saxpy.ptx OK"
rc=0
want() { [ "$what" = all ] || [[ ",$what," == *",$1,"* ]]; }
# a one-off diagnostic script (not in the repo) run in this environment
[ -n "${EXTRA:-}" ] && bash "$EXTRA"
# with both wanted, numba-cuda's tests run beside the suite, sharing the cores, so the two fit
# one call
compat() {
    # numba-cuda's own tests against gpujit on the GPU; the tests come from the numba-cuda
    # installed on this machine (same version as the wheel the CPU run downloads)
    peer=$(python3 -c "import importlib.util, os; s = importlib.util.find_spec('numba_cuda'); print(os.path.join(os.path.dirname(s.origin), 'numba', 'cuda'))" 2>/dev/null)
    # the peer's tests import cffi; this machine has no package registry: wheels carried in .whl
    # (installed with the rest) or in .deps/wheels of the checkout
    python3 -c "import cffi" 2>/dev/null || python3 -m pip install -q --no-index \
        --find-links "${GPUJIT_SOURCE_TREE:-.}/.deps/wheels" cffi 2>&1 | tail -1
    if [ -d "$peer/tests" ]; then
        timeout ${COMPAT_TIMEOUT:-400} python3 tests/compat/run.py --target cuda --peer-dir "$peer" -j ${COMPAT_JOBS:-8} \
            --budget $(( ${COMPAT_TIMEOUT:-400} - 30 )) --json "$OUT/compat-cuda.json" > "$OUT/compat.log" 2>&1
        tail -12 "$OUT/compat.log"
    else
        echo "compat: numba-cuda's tests not found on this machine"
    fi
}
compat_pid=""
if want compat && want tests; then
    COMPAT_JOBS=${COMPAT_JOBS:-6} compat > "$OUT/compat.out" 2>&1 &
    compat_pid=$!
fi
if want tests; then
    # pytest-xdist is on the GPU image: 8 workers share the GPU; a hung test is killed
    # (thread method: works while C code holds the process) and named in the log
    par=""; python3 -c "import xdist" 2>/dev/null && par="-n ${TEST_JOBS:-8}"
    # the fuzzer's fixed seed runs alone afterwards, its programs spread over the cores: inside
    # the parallel run it shares them with 8 workers and outlasts the per-test limit
    GJ_FUZZ_JOBS=4 timeout ${TEST_TIMEOUT:-400} python3 -m pytest -q -rfE --tb=short $par --timeout=150 \
        --timeout-method=thread -p no:cacheprovider --deselect tests/test_fuzz.py::test_fuzz_fixed_seed \
        ${TESTS:-tests} > "$OUT/gpu_tests.log" 2>&1
    rc=$?
    if [ -z "${TESTS:-}" ]; then
        GJ_FUZZ_JOBS=$(nproc) timeout 300 python3 -m pytest -q -p no:cacheprovider \
            tests/test_fuzz.py::test_fuzz_fixed_seed >> "$OUT/gpu_tests.log" 2>&1 || rc=1
    fi
    tail -25 "$OUT/gpu_tests.log"
fi
if [ -n "$compat_pid" ]; then
    wait "$compat_pid"; cat "$OUT/compat.out"; rm -f "$OUT/compat.out"
elif want compat; then
    compat
fi
if want bench; then
    timeout ${BENCH_TIMEOUT:-120} python3 benchmarks/gpu_bench.py --json "$OUT/gpu_bench.json" > "$OUT/gpu_bench.log" 2>&1
    timeout ${BENCH_TIMEOUT:-120} python3 benchmarks/lang_bench.py --json "$OUT/lang_bench.json" --plot "$OUT/lang_bench.png" \
        > "$OUT/lang_bench.log" 2>&1
    timeout 90 python3 benchmarks/compile_time.py --plot "$OUT/compile_time.png" > "$OUT/compile_time.log" 2>&1
    timeout ${BENCH_TIMEOUT:-120} python3 benchmarks/ufunc_bench.py --json "$OUT/ufunc_bench.json" > "$OUT/ufunc_bench.log" 2>&1
    timeout 120 python3 benchmarks/cache_startup.py 5 > "$OUT/cache_startup.log" 2>&1
    timeout 120 python3 benchmarks/bf16_bench.py --json "$OUT/bf16_bench.json" > "$OUT/bf16_bench.log" 2>&1
    cat "$OUT/gpu_bench.log" "$OUT/lang_bench.log" "$OUT/compile_time.log" "$OUT/ufunc_bench.log" \
        "$OUT/cache_startup.log" "$OUT/bf16_bench.log" | grep -v Warning
fi
if want variants; then
    # sets of the GPU passes after O3 (GPUJIT_PTX_PASSES) against each other, beside CUDA C
    timeout ${VARIANTS_TIMEOUT:-400} python3 benchmarks/lang_bench.py --variants --json "$OUT/lang_variants.json" \
        > "$OUT/lang_variants.log" 2>&1
    grep -v Warning "$OUT/lang_variants.log"
fi
if want stress; then
    # 10^6 launches: process and device memory sampled, no growth allowed
    timeout ${STRESS_TIMEOUT:-120} python3 tests/stress/launches.py --target cuda --count ${STRESS_COUNT:-1000000} \
        > "$OUT/stress.log" 2>&1 || rc=1
    tail -8 "$OUT/stress.log"
fi
if want fuzz; then
    # the saved GPU findings, then a fresh batch on the GPU
    for f in tests/fuzz/findings/*.txt; do
        [ -e "$f" ] || continue
        timeout -s ABRT 30 python3 -X faulthandler tests/fuzz/fuzz.py --target cuda --source "$f" || echo "$f: rc $?"
    done > "$OUT/fuzz_findings.log" 2>&1
    tail -15 "$OUT/fuzz_findings.log"
    if [ -n "${FUZZ_COUNT:-}" ]; then
        # fuzz.py stops starting programs at --time-limit and prints its tally; the outer
        # timeout is only a backstop (a killed run prints nothing)
        ft=${FUZZ_TIME:-300}
        timeout $((ft + 60)) python3 tests/fuzz/fuzz.py --target cuda --seed ${FUZZ_SEED:-30} --count "$FUZZ_COUNT" \
            --jobs ${FUZZ_JOBS:-12} --time-limit "$ft" --keep /tmp/fuzz_keep > "$OUT/fuzz.log" 2>&1
        tar czf "$OUT/fuzz_keep.tgz" -C /tmp fuzz_keep 2>/dev/null
        tail -15 "$OUT/fuzz.log"
    fi
fi
if want multi; then
    # several GPUs of one host (one is enough to run it): the multi-device tests and the
    # N-body step's scaling over the devices, one thread per GPU: each body's sum split over as
    # many threads as there are devices (each GPU as full as one alone), then one thread per
    # body at 2^18 (half a GPU each) and at 2^19 (each GPU full)
    timeout 120 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_multigpu.py > "$OUT/multigpu.log" 2>&1 || rc=1
    timeout 120 python3 benchmarks/multigpu_bench.py --n 262144 --json "$OUT/multigpu.json" >> "$OUT/multigpu.log" 2>&1 || rc=1
    timeout 120 python3 benchmarks/multigpu_bench.py --n 262144 --ways 1 >> "$OUT/multigpu.log" 2>&1 || rc=1
    timeout 120 python3 benchmarks/multigpu_bench.py --n 524288 --ways 1 --reps 5 >> "$OUT/multigpu.log" 2>&1 || rc=1
    # the same step through dask.distributed, one worker process per GPU, against one process
    # with a thread per GPU: a task per step, then 10 steps per task
    timeout 150 python3 benchmarks/dask_bench.py --n 262144 --json "$OUT/multigpu_dask.json" >> "$OUT/multigpu.log" 2>&1 || rc=1
    timeout 150 python3 benchmarks/dask_bench.py --n 262144 --reps 5 --batch 10 >> "$OUT/multigpu.log" 2>&1 || rc=1
    # Dask: one worker process per GPU, sharing one cache directory (the kernel compiled once)
    timeout 180 python3 examples/dask_saxpy.py 20000003 1000000 >> "$OUT/multigpu.log" 2>&1 || rc=1
    grep -e "GPU" -e "dask" -e "threads" -e passed -e failed -e Error "$OUT/multigpu.log" | tail -30
fi
# at most 8 result files are fetched back: pack them when there are more
if [ "$(find "$OUT" -maxdepth 1 -type f | wc -l)" -gt 8 ]; then
    (cd "$OUT" && tar czf results.tgz --exclude results.tgz ./* && find . -maxdepth 1 -type f ! -name results.tgz -delete)
fi
exit $rc
