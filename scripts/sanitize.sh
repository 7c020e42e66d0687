#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer:
# builds _core with -Dsanitize=true into build/asan-pyXY, preloads libasan
# into the (uninstrumented) interpreter and runs pytest on the CPU backend.
#   bash scripts/sanitize.sh [PYTHON] [pytest args...]
# Leak checking is off for the suite (CPython itself keeps memory at exit);
# scripts/leaks.sh checks gpujit's own allocations with valgrind instead.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-python3}
shift || true
tag=$("$PY" -c 'import sys; print("py%d%d" % sys.version_info[:2])')
dir=build/asan-$tag
[ -f "$dir/build.ninja" ] || "$PY" -m mesonbuild.mesonmain setup "$dir" -Dbuildtype=debugoptimized -Dsanitize=true \
    --native-file <(printf "[binaries]\npython = '%s'\n" "$(command -v "$PY")") >/dev/null
ninja -C "$dir" >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r python/gpujit python/gpujit_numba_cuda.pth "$tmp/"
rm -f "$tmp"/gpujit/_core*.so
cp "$dir"/_core*.so "$tmp/gpujit/"
export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:detect_stack_use_after_return=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export GPUJIT_TARGET=cpu PYTHONPATH="$tmp"
"$PY" -m pytest -q -p no:cacheprovider tests "$@"
