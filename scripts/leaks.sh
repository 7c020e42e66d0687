#!/usr/bin/env bash
# Valgrind's leak check over a compile-and-launch loop on the CPU backend
# (tests/stress/compile_launch_loop.py), reporting only blocks lost from
# gpujit's own code (frames in _core), not CPython's or LLVM's caches.
#   bash scripts/leaks.sh [ITERATIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
log=$(mktemp)
PYTHONMALLOC=malloc GPUJIT_TARGET=cpu PYTHONPATH="$PWD/python" valgrind --leak-check=full \
    --show-leak-kinds=definite --errors-for-leak-kinds=definite --num-callers=30 \
    "$(python3 -c "import sys; print(sys.executable)")" tests/stress/compile_launch_loop.py "${1:-20}" > /dev/null 2> "$log" || true
grep -E "definitely lost|ERROR SUMMARY" "$log" | tail -3
# a definitely-lost block allocated under gpujit's extension is ours
if awk '/definitely lost in/{blk=1; buf=""} blk{buf=buf"\n"$0} /^==[0-9]+== $/{ if (blk && buf ~ /_core\.cpython/) {print buf; bad=1} blk=0 } END{exit bad}' "$log"; then
    echo "no leaks from gpujit"
else
    echo "leaks from gpujit (above)"; exit 1
fi
