#!/usr/bin/env bash
# The test command (README; .ci/run calls it). On a fresh Debian machine it installs what it
# needs (apt: llvm-19-dev, debootstrap, zlib1g-dev, libzstd-dev; pip: numpy, pytest, meson,
# ninja, ml_dtypes; and into the first interpreter's test venv dask, distributed and NVIDIA's
# nvdisasm, for the tests that skip elsewhere), and then:
# - once: the CPU executor's C tests;
# - per CPython, 3.11, 3.12 and 3.13 (pyenv's) here, 3.14 and 3.15 in a Debian sid root
#   (build/sid-root, made by scripts/sid_root.sh on first use, about a minute): the manylinux
#   wheel built, installed into a fresh venv with no build tools, and the whole suite run
#   against the installed package with no libLLVM (scripts/test_wheel.sh), on the CPU backend;
# - the numba.cuda compatibility yardstick on the CPU target with each CPython that
#   numba-cuda 0.30.4 has a wheel for (3.11 to 3.14; not 3.15), from an in-place build
#   (scripts/compat.sh: fails below its floor; downloads numba-cuda's wheel from PyPI);
# - once: the suite under ASan+UBSan, in place, with the first interpreter (scripts/sanitize.sh).
# The suites run with two pytest-xdist workers, one per core; the differential fuzzer's fixed seed
# runs its 2,000 programs with the first interpreter and 500 with the others and under ASan.
# Each stage prints the minutes since the start and runs under a limit, so that a hang fails
# its stage by name instead of using up CI's time.
#   GPUJIT_PYTHONS="python3.12 ..."   overrides the host interpreters
#   GPUJIT_SID_PYTHONS="3.14 3.15"    the sid root's ("" skips the root)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v llvm-config-19 >/dev/null 2>&1; then
    SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
    echo "== installing llvm-19-dev (apt)"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq llvm-19-dev >/dev/null
fi
command -v ptxas >/dev/null 2>&1 || echo "== note: ptxas not found; PTX will not be assembled by the tests (install the CUDA toolkit)"

. scripts/find_python.sh

if [ -n "${GPUJIT_PYTHONS:-}" ]; then
    pythons=($GPUJIT_PYTHONS)
else
    pythons=()
    for v in 3.11 3.12 3.13; do
        p=$(find_python $v) || { echo "gpujit: CPython $v not found (pyenv install $v, or set GPUJIT_PYTHONS)" >&2; exit 1; }
        pythons+=("$p")
    done
fi

# The suites run on both cores (pytest-xdist, two workers) where the interpreter has it
xdist() { "$@" -c "import xdist" 2>/dev/null && echo "-n 2"; }

t0=$(date +%s)
stage() { local t=$(( $(date +%s) - t0 )); printf '== [%d:%02d] %s\n' $((t / 60)) $((t % 60)) "$*"; }
limit() { local secs=$1; shift; timeout -k 30 "$secs" "$@"; local rc=$?; [ $rc -ne 124 ] && [ $rc -ne 137 ] ||
          echo "gpujit: timed out after $secs s: $*" >&2; return $rc; }

status=0
stage "CPU executor C tests"
limit 600 bash tests/c/build_and_run.sh > /tmp/gpujit-ctests.log 2>&1 && tail -3 /tmp/gpujit-ctests.log || { cat /tmp/gpujit-ctests.log; status=1; }

# the suite against the installed wheel, with 2,000 fuzz programs for the first interpreter and 500
# for the others; tests/test_dask.py and test_sass.py (nvdisasm) get what they need with the
# first interpreter only (the test venvs all have numba)
wheel_suite() {  # NAME VERSION-OR-PYTHON FUZZ EXTRA...
    local name=$1 py=$2 fuzz=$3; shift 3
    stage "CPython $name: the wheel, installed into a fresh venv, and the suite against it"
    GJ_FUZZ_COUNT=$fuzz GPUJIT_TEST_XDIST=1 GPUJIT_TEST_EXTRA="$*" limit 1500 bash scripts/test_wheel.sh "$py" -n 2 ||
        status=1
}
for py in "${pythons[@]}"; do
    ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    extra=() fuzz=500
    [ "$py" = "${pythons[0]}" ] && extra=("dask[array]" distributed nvidia-cuda-nvdisasm) fuzz=2000
    # what the in-place builds (the yardstick; ASan+UBSan with the first interpreter, whose
    # numba tests run there too) and the tests run in place need
    "$py" -m pip install -q --disable-pip-version-check --root-user-action=ignore numpy pytest pytest-xdist meson ninja ml_dtypes \
        "${extra[@]}" ${extra:+numba} 2>&1 | grep -v "^WARNING" || true
    wheel_suite "$ver" "$py" "$fuzz" "${extra[@]}"
done

sid=(${GPUJIT_SID_PYTHONS-3.14 3.15})
if [ ${#sid[@]} -gt 0 ]; then
    stage "the Debian sid root for CPython ${sid[*]} (scripts/sid_root.sh)"
    limit 1200 bash scripts/sid_root.sh || { echo "gpujit: could not make the sid root" >&2; exit 1; }
fi
for v in "${sid[@]}"; do
    wheel_suite "$v (Debian sid root)" "$v" 500
done

for py in "${pythons[@]}"; do
    stage "numba.cuda compatibility yardstick, CPU target (CPython $py)"
    PYTHON="$py" limit 900 bash scripts/compat.sh > /tmp/gpujit-compat.log 2>&1 && tail -3 /tmp/gpujit-compat.log ||
        { tail -40 /tmp/gpujit-compat.log; status=1; }
done

# real projects' GPU tests, fetched from PyPI, unchanged in the place mode on the CPU target
# (the simulator's side of the comparison, 15 minutes, is left to tests/projects/run.py by hand)
stage "real projects' GPU tests under the place mode (CPython ${pythons[0]})"
limit 900 "${pythons[0]}" tests/projects/run.py --mode gpujit > /tmp/gpujit-projects.log 2>&1 &&
    tail -4 /tmp/gpujit-projects.log || { tail -40 /tmp/gpujit-projects.log; status=1; }

for v in "${sid[@]}"; do
    # numba-cuda 0.30.4 has wheels up to cp314: on 3.15 its tests cannot be had from PyPI
    [ "$v" = 3.15 ] && { stage "numba.cuda compatibility yardstick: not on CPython 3.15 (numba-cuda 0.30.4 has no cp315 wheel)"; continue; }
    stage "numba.cuda compatibility yardstick, CPU target (CPython $v, Debian sid root)"
    limit 900 scripts/sid_run.sh "$v" env PYTHON=python bash scripts/compat.sh > /tmp/gpujit-compat.log 2>&1 && tail -3 /tmp/gpujit-compat.log ||
        { tail -40 /tmp/gpujit-compat.log; status=1; }
done

stage "the suite again under AddressSanitizer + UndefinedBehaviorSanitizer (CPython ${pythons[0]})"
GJ_FUZZ_COUNT=500 limit 1500 bash scripts/sanitize.sh "${pythons[0]}" $(xdist "${pythons[0]}") || status=1

stage "done (status $status)"
exit $status
