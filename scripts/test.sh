#!/usr/bin/env bash
# The test command (README; .ci/run calls it). On a fresh Debian machine it
# installs what it needs (apt: llvm-19-dev, debootstrap; pip: numpy, pytest, meson, ninja;
# dask, distributed, numba and NVIDIA's nvdisasm for the first interpreter: numba for the tests
# of numba's objects in gpujit and of gpujit in numba.cuda's place, which skip elsewhere), and then:
# - per CPython, 3.11, 3.12 and 3.13 (pyenv's) here, 3.14 and 3.15 in a Debian sid root
#   (build/sid-root, made by scripts/sid_root.sh on first use, several minutes): builds gpujit
#   in place (each decodes its own bytecode) and runs the whole suite on the CPU backend (and
#   on the GPU where one exists; the second interpreter's suite runs against its installed wheel
#   instead, below); then the numba.cuda compatibility yardstick on the CPU
#   target with each CPython that numba-cuda 0.30.4 has a wheel for (3.11 to 3.14; not 3.15)
#   (scripts/compat.sh: fails below its floor; downloads numba-cuda's wheel from PyPI);
# - once: the CPU executor's C tests, the suite under ASan+UBSan with the first interpreter
#   (scripts/sanitize.sh), and as a user installs it: the manylinux wheel for CPython 3.12
#   built, installed into a fresh venv with no build tools, and the suite run against the
#   installed package with no libLLVM (scripts/test_wheel.sh).
# The suites run with two pytest-xdist workers, one per core; the differential fuzzer's fixed seed
# runs its 2,000 programs with the first interpreter and 500 with the others.
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
# the interpreter whose wheel is tested installed: its suite runs there, not in place
wpy=${pythons[1]:-${pythons[0]}}
xdist() { "$@" -c "import xdist" 2>/dev/null && echo "-n 2"; }

# Each stage prints the minutes since the start, and each long step runs under a limit, so that a
# hang fails its step and names it instead of using up CI's time.
t0=$(date +%s)
stage() { local t=$(( $(date +%s) - t0 )); printf '== [%d:%02d] %s\n' $((t / 60)) $((t % 60)) "$*"; }
limit() { local secs=$1; shift; timeout -k 30 "$secs" "$@"; local rc=$?; [ $rc -ne 124 ] && [ $rc -ne 137 ] ||
          echo "gpujit: timed out after $secs s: $*" >&2; return $rc; }

status=0
stage "CPU executor C tests"
limit 600 bash tests/c/build_and_run.sh > /tmp/gpujit-ctests.log 2>&1 && tail -3 /tmp/gpujit-ctests.log || { cat /tmp/gpujit-ctests.log; status=1; }

for py in "${pythons[@]}"; do
    ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    stage "CPython $ver ($py)"
    # Dask (tests/test_dask.py, examples/dask_saxpy.py), nvdisasm (tests/test_sass.py) and numba
    # (tests/test_numba_objects.py, test_place.py, test_numba_coexist.py) with the first interpreter
    # only: ~30 s to install, ~20 s to run; elsewhere those tests skip
    extra=(); [ "$py" = "${pythons[0]}" ] && extra=("dask[array]" distributed nvidia-cuda-nvdisasm numba)
    "$py" -m pip install -q --disable-pip-version-check --root-user-action=ignore numpy pytest pytest-xdist meson ninja ml_dtypes "${extra[@]}" 2>&1 | grep -v "^WARNING" || true
    scripts/build.sh "$py"
    # the differential fuzzer's fixed seed in full with the first interpreter, a part of it elsewhere
    fuzz=$([ "$py" = "${pythons[0]}" ] && echo 2000 || echo 500)
    # the wheel's interpreter runs the whole suite as installed (below), not here as well
    [ "$py" = "$wpy" ] && { echo "   (the suite runs with CPython $ver against the installed wheel, below)"; continue; }
    GJ_FUZZ_COUNT=$fuzz PYTHONPATH="$PWD/python" limit 1200 "$py" -m pytest -q -p no:cacheprovider $(xdist "$py") tests || status=1
done

sid=(${GPUJIT_SID_PYTHONS-3.14 3.15})
if [ ${#sid[@]} -gt 0 ]; then
    stage "the Debian sid root for CPython ${sid[*]} (scripts/sid_root.sh)"
    limit 1200 bash scripts/sid_root.sh || { echo "gpujit: could not make the sid root" >&2; exit 1; }
fi
for v in "${sid[@]}"; do
    stage "CPython $v (Debian sid root)"
    scripts/sid_run.sh "$v" scripts/build.sh python
    scripts/sid_run.sh "$v" python -m pip install -q --disable-pip-version-check --only-binary=:all: pytest-xdist 2>&1 | grep -v "^WARNING" || true
    scripts/sid_run.sh "$v" python -m pip install -q --disable-pip-version-check --only-binary=:all: ml_dtypes 2>&1 | grep -v "^WARNING" || true
    limit 1200 scripts/sid_run.sh "$v" env GJ_FUZZ_COUNT=500 PYTHONPATH=/work/gpujit/python python -m pytest -q -p no:cacheprovider \
        $(xdist scripts/sid_run.sh "$v" python) tests || status=1
done

for py in "${pythons[@]}"; do
    stage "numba.cuda compatibility yardstick, CPU target (CPython $py)"
    PYTHON="$py" limit 900 bash scripts/compat.sh > /tmp/gpujit-compat.log 2>&1 && tail -3 /tmp/gpujit-compat.log ||
        { tail -40 /tmp/gpujit-compat.log; status=1; }
done

for v in "${sid[@]}"; do
    # numba-cuda 0.30.4 has wheels up to cp314: on 3.15 its tests cannot be had from PyPI
    [ "$v" = 3.15 ] && { stage "numba.cuda compatibility yardstick: not on CPython 3.15 (numba-cuda 0.30.4 has no cp315 wheel)"; continue; }
    stage "numba.cuda compatibility yardstick, CPU target (CPython $v, Debian sid root)"
    limit 900 scripts/sid_run.sh "$v" env PYTHON=python bash scripts/compat.sh > /tmp/gpujit-compat.log 2>&1 && tail -3 /tmp/gpujit-compat.log ||
        { tail -40 /tmp/gpujit-compat.log; status=1; }
done

stage "the suite again under AddressSanitizer + UndefinedBehaviorSanitizer (CPython ${pythons[0]})"
GJ_FUZZ_COUNT=500 limit 1500 bash scripts/sanitize.sh "${pythons[0]}" $(xdist "${pythons[0]}") || status=1

stage "the wheel, installed into a fresh venv (CPython $("$wpy" -c 'import sys; print("%d.%d" % sys.version_info[:2])'))"
GJ_FUZZ_COUNT=500 GPUJIT_TEST_XDIST=1 limit 1500 bash scripts/test_wheel.sh "$wpy" -n 2 > /tmp/gpujit-wheel.log 2>&1 && tail -4 /tmp/gpujit-wheel.log ||
    { tail -60 /tmp/gpujit-wheel.log; status=1; }

stage "done (status $status)"
exit $status
