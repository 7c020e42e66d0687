/* glibc functions newer than the oldest glibc the wheels support, defined here
 * so that the statically linked LLVM and libstdc++ (built against Debian 12's
 * glibc 2.36) bind to these instead of glibc's versioned symbols, which would
 * raise the wheel's manylinux tag. Only the static-LLVM build compiles this
 * file; the version script keeps these symbols local to the extension. */
#include <errno.h>
#include <stdint.h>
#include <sys/random.h>
#include <time.h>

/* glibc 2.36: LLVM's Process::GetRandomNumber (unique temporary file names)
 * and libstdc++'s random_device use it when the headers declare it.
 * getrandom (glibc 2.25) gives the same kernel entropy; where a sandbox
 * refuses it, a clock-based value still differs from call to call, which is
 * all those callers need. */
uint32_t arc4random(void) {
    uint32_t v;
    ssize_t n;
    do n = getrandom(&v, sizeof v, 0);
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof v) return v;
    static uint32_t calls;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t x = ((uint64_t)t.tv_sec * 1000000007u) ^ (uint64_t)t.tv_nsec ^ ((uint64_t)++calls << 32);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (uint32_t)x;
}

/* glibc 2.35 gave hypot and hypotf a new symbol version (a faster implementation): the CPU
 * target's libdevice functions (runtime/cpu_libdevice.c) call the original one. */
double gj_hypot_glibc_2_2_5(double x, double y);
__asm__(".symver gj_hypot_glibc_2_2_5, hypot@GLIBC_2.2.5");
double hypot(double x, double y) { return gj_hypot_glibc_2_2_5(x, y); }
float gj_hypotf_glibc_2_2_5(float x, float y);
__asm__(".symver gj_hypotf_glibc_2_2_5, hypotf@GLIBC_2.2.5");
float hypotf(float x, float y) { return gj_hypotf_glibc_2_2_5(x, y); }
