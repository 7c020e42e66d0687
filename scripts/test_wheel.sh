#!/usr/bin/env bash
# The installed package under test: builds the wheel for one CPython (default
# python3) with scripts/wheel.sh, installs it into a fresh venv that has no
# build tools (pip installs only the wheel, numpy, pytest, ml_dtypes and, unless
# GPUJIT_TEST_NUMBA=0, numba), checks that the extension needs no libLLVM (ldd,
# no RPATH), then runs the test suite with that venv's Python from a copy of the
# checkout without python/, so every test and every child process it starts
# imports the installed gpujit, on the CPU target.
# CPython 3.14 and 3.15 (named as 3.14, 3.15): the wheel is built here with sid's interpreter
# (scripts/sid_python.sh), then installed and tested inside the sid root, with its python3.X.
#   bash scripts/test_wheel.sh [PYTHON|3.14|3.15] [pytest args...]
#   GPUJIT_WHEEL=dist/...whl   test that wheel, without building it
#   GPUJIT_TEST_EXTRA="dask distributed"   more packages for the test venv (from PyPI, binary)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
PY=${1:-python3}
shift || true
start=$(date +%s)
if [[ "$PY" =~ ^3\.1[45]$ ]]; then
    bash scripts/wheel.sh "$(bash scripts/sid_python.sh "$PY")"
    whl=$(ls dist/gpujit-*-cp${PY/./}-*manylinux*.whl)
    git ls-files -z --cached --others --exclude-standard > build/wheel-test-files # no git in the root
    exec scripts/sid_run.sh "$PY" env GPUJIT_WHEEL="$whl" GPUJIT_BUILT_IN=$(( $(date +%s) - start )) \
        GPUJIT_FILES=build/wheel-test-files \
        bash scripts/test_wheel.sh "python$PY" "$@"
fi
PY=$(command -v "$PY")
tag=$("$PY" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')

if [ -n "${GPUJIT_WHEEL:-}" ]; then
    whl=$GPUJIT_WHEEL
    start=$(( start - ${GPUJIT_BUILT_IN:-0} ))
else
    bash scripts/wheel.sh "$PY"
    whl=$(ls dist/gpujit-*-"$tag"-*manylinux*.whl)
fi
built=$(date +%s)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" -m venv "$tmp/venv"
pip=("$tmp/venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary :all:)
extra=(pytest ml_dtypes)   # ml_dtypes: the bfloat16 and fp8 tests and the fuzzer's reference
[ "${GPUJIT_TEST_NUMBA:-1}" = 0 ] || extra+=(numba)
[ -z "${GPUJIT_TEST_XDIST:-}" ] || extra+=(pytest-xdist)   # for pytest's -n
extra+=(${GPUJIT_TEST_EXTRA:-})   # more requirements, for the tests that skip without them
"${pip[@]}" "$whl" "${extra[@]}"
"$tmp/venv/bin/python" -c "import mesonbuild" 2>/dev/null && { echo "gpujit: the test venv has meson" >&2; exit 1; }

core=$(ls "$tmp"/venv/lib/python*/site-packages/gpujit/_core*.so)
echo "== $(basename "$whl"): $(du -m "$whl" | cut -f1) MB; the installed extension needs:"
ldd "$core" | sed 's/^/   /'
if ldd "$core" | grep -q -e libLLVM -e "not found" || readelf -d "$core" | grep -q -e RPATH -e RUNPATH; then
    echo "gpujit: the installed extension needs a library from outside the wheel" >&2
    exit 1
fi

# the checkout without its package, so that nothing imports python/gpujit
mkdir "$tmp/src"
{ if [ -n "${GPUJIT_FILES:-}" ]; then cat "$GPUJIT_FILES"; else git ls-files -z --cached --others --exclude-standard; fi; } |
    grep -zv '^python/' | xargs -0 cp --parents -t "$tmp/src"
cd "$tmp/src"
export GPUJIT_TARGET=cpu GPUJIT_SOURCE_TREE="$repo"
unset PYTHONPATH LD_LIBRARY_PATH
status=0
"$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider tests "$@" || status=1
echo "== wheel built in $((built - start)) s; installed and tested in $(( $(date +%s) - built )) s"
exit $status
