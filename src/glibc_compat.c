/* glibc functions newer than the oldest glibc the wheels support, defined here
 * so that the statically linked LLVM and libstdc++ (built against Debian 12's
 * glibc 2.36) bind to these instead of glibc's versioned symbols, which would
 * raise the wheel's manylinux tag. Only the static-LLVM build compiles this
 * file; the version script keeps these symbols local to the extension. */
#include <stdint.h>
#include <sys/random.h>

/* glibc 2.36: LLVM's Process::GetRandomNumber and libstdc++'s random_device
 * use it when the headers declare it. getrandom (glibc 2.25) gives the same
 * kernel entropy. */
uint32_t arc4random(void) {
    uint32_t v = 0;
    while (getrandom(&v, sizeof v, 0) != (long)sizeof v) {
    }
    return v;
}
