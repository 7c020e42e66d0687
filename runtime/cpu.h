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
    size_t shared_bytes; /* bytes at `shared`: static + dynamic; offset 64. The
                          * compiled code knows its static part, so
                          * dynamic = shared_bytes - static, after it */
    /* syncthreads_count/and/or (op GJ_SYNC_*): a barrier that also reduces
     * each thread's predicate over the block; offset 72 */
    int32_t (*sync_reduce)(GjBlockCtx *, int32_t op, int32_t pred);
    /* A warp-level operation (op GJ_WARP_*) of the calling thread: waits until
     * every lane of its warp named in `mask` that has not exited has called it
     * too, then returns this lane's result (shuffles: the value read; votes:
     * 0/1 or the ballot; match: the mask). offset 80 */
    uint64_t (*warp)(GjBlockCtx *, int32_t op, uint32_t mask, uint64_t value, int32_t arg);
};

enum { GJ_SYNC_COUNT, GJ_SYNC_AND, GJ_SYNC_OR };
/* Numbered as src/gj.h's WarpOp. */
enum {
    GJ_WARP_SHFL_IDX, GJ_WARP_SHFL_UP, GJ_WARP_SHFL_DOWN, GJ_WARP_SHFL_BFLY,
    GJ_WARP_ALL, GJ_WARP_ANY, GJ_WARP_EQ, GJ_WARP_BALLOT, GJ_WARP_MATCH_ANY, GJ_WARP_MATCH_ALL,
    GJ_WARP_SYNC, GJ_WARP_ACTIVEMASK,
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
 * uses barriers or warp-level operations). Returns 0, or -1 with *err set to a static message
 * (e.g. a barrier that not every thread of a block reached). */
int gj_cpu_launch(GjHostBlockFn block_fn, GjHostThreadFn thread_fn, int uses_barrier,
                  GjDim3 grid, GjDim3 block, size_t shared_bytes,
                  void **params, const char **err);

#endif
