#!/bin/sh
# Builds tests/c/test_cpu.c against the CPU executor (runtime/cpu.c,
# cpu_fiber.c, cpu_warp.c, cpu_race.c) and runs it: plain, on one thread, and under
# ASan+UBSan. Exits non-zero on the first failure.
#   EXTRA=1   also: the ucontext fallback, ThreadSanitizer, valgrind (slow)
#   CC=...    compiler (default gcc)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
CC=${CC:-gcc}
# -fstack-clash-protection: the test kernels probe big frames page by page,
# as the compiler's do, so that a stack overflow hits the guard page
cflags="-std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -pthread -fstack-clash-protection -I$root/runtime"
srcs="$here/test_cpu.c $root/runtime/cpu.c $root/runtime/cpu_fiber.c $root/runtime/cpu_warp.c $root/runtime/cpu_race.c"

run() { echo "== $*"; "$@"; }

$CC $cflags -o "$out/test_cpu" $srcs -lm
run "$out/test_cpu"
GPUJIT_CPU_THREADS=1 run "$out/test_cpu" --no-bench

$CC $cflags -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all \
    -o "$out/test_cpu_asan" $srcs -lm
ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1 run "$out/test_cpu_asan" --no-bench

if [ "${EXTRA:-0}" = 1 ]; then
    $CC $cflags -DGJ_CPU_FORCE_UCONTEXT -o "$out/test_cpu_uc" $srcs -lm
    run "$out/test_cpu_uc" --no-bench
    $CC $cflags -DGJ_CPU_FORCE_UCONTEXT -fsanitize=address,undefined -fno-omit-frame-pointer \
        -fno-sanitize-recover=all -o "$out/test_cpu_uc_asan" $srcs -lm
    run "$out/test_cpu_uc_asan" --no-bench
    $CC $cflags -fsanitize=thread -o "$out/test_cpu_tsan" $srcs -lm
    TSAN_OPTIONS=halt_on_error=1 run "$out/test_cpu_tsan" --no-bench --small
    if command -v valgrind >/dev/null; then
        run valgrind -q --error-exitcode=9 "$out/test_cpu" --no-bench --small
    fi
fi
echo "== all test_cpu runs passed"
