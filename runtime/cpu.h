/* The CPU backend's ABI between code the compiler emits for the host and the
 * runtime that runs it (runtime/cpu.c). The field offsets of GjBlockCtx are
 * mirrored by src/target_host.c: change both together. */
#ifndef GPUJIT_RUNTIME_CPU_H
#define GPUJIT_RUNTIME_CPU_H

#include <stddef.h>
#include <stdint.h>

typedef struct GjBlockCtx GjBlockCtx;

struct GjBlockCtx {
    int32_t ntid[3];   /* blockDim,  offset 0  */
    int32_t ctaid[3];  /* blockIdx,  offset 12 */
    int32_t nctaid[3]; /* gridDim,   offset 24 */
    int32_t pad;       /*            offset 36 */
    char *shared;      /* this block's shared memory (static, then dynamic), 16-aligned; offset 40 */
    void (*syncthreads)(GjBlockCtx *); /* barrier of this block; offset 48 */
    void *sched;       /* the runtime's private scheduler state; offset 56 */
};

/* Emitted by the compiler for every host kernel (k = the kernel's symbol):
 *   k_block:  runs every thread of one block in a loop (kernels without barriers)
 *   k_thread: runs one thread (kernels with barriers run each on a fiber)
 * params is the same kernelParams array that cuLaunchKernel takes. */
typedef void (*GjHostBlockFn)(void **params, GjBlockCtx *blk);
typedef void (*GjHostThreadFn)(void **params, GjBlockCtx *blk, int32_t tx, int32_t ty, int32_t tz);

typedef struct GjDim3 { uint32_t x, y, z; } GjDim3;

/* Run a whole grid on the CPU: blocks in parallel on the machine's cores,
 * threads of a block as loops (block_fn) or fibers (thread_fn, when the kernel
 * uses barriers). Returns 0, or -1 with *err set to a static message
 * (e.g. a barrier that not every thread of a block reached). */
int gj_cpu_launch(GjHostBlockFn block_fn, GjHostThreadFn thread_fn, int uses_barrier,
                  GjDim3 grid, GjDim3 block, size_t shared_bytes,
                  void **params, const char **err);

#endif
