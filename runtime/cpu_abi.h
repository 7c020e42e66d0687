/* cpu_abi.h: the one definition of the ABI between the host code the compiler
 * emits (src/target_host.c) and the CPU executor that runs it (runtime/cpu.c):
 * the block context each compiled thread reads its geometry from and calls
 * the runtime through, and the numbering of the operations it passes. The
 * compiler addresses the fields by offsetof() on this struct and numbers its
 * warp operations from the list below, so the two sides cannot drift apart.
 * Plain C (stddef/stdint only): included by src/gj.h, runtime/cpu.h and the
 * executor's C tests. */
#ifndef GPUJIT_RUNTIME_CPU_ABI_H
#define GPUJIT_RUNTIME_CPU_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef struct GjBlockCtx GjBlockCtx;

/* Compiled code reads the int32 fields and calls the function pointers at
 * offsetof() of each; it loads shared_bytes as an i64 and the pointers as
 * 64-bit pointers (the host target is 64-bit, asserted below). */
struct GjBlockCtx {
    int32_t ntid[3];   /* blockDim */
    int32_t ctaid[3];  /* blockIdx */
    int32_t nctaid[3]; /* gridDim */
    int32_t pad;
    char *shared;      /* this block's shared memory (static, then dynamic), 16-aligned */
    /* barrier of this block; `site` numbers the syncthreads() call in the kernel's table of them
     * (gj_output_barrier: its file:line), -1 where there is none */
    void (*syncthreads)(GjBlockCtx *, int32_t site);
    void *sched;       /* the runtime's private scheduler state */
    size_t shared_bytes; /* bytes at `shared`: static + dynamic. The compiled
                          * code knows its static part, so
                          * dynamic = shared_bytes - static, after it */
    /* syncthreads_count/and/or (op GJ_SYNC_*): a barrier that also reduces
     * each thread's predicate over the block */
    int32_t (*sync_reduce)(GjBlockCtx *, int32_t op, int32_t pred);
    /* A warp-level operation (op GJ_WARP_*) of the calling thread: waits until
     * every lane of its warp named in `mask` that has not exited has called it
     * too, then returns this lane's result (shuffles: the value read; votes:
     * 0/1 or the ballot; match: the mask). GJ_WARP_ACTIVEMASK ignores the
     * mask: value is the address of the lane's position in the program (an
     * int64 array, arg entries long; src/lower.c, lane_position), and the
     * result names the lanes that reach that same point together.
     * GJ_WARP_YIELD ignores its operands: the thread lets the block's other
     * threads run before it goes on (a wait on an mbarrier that has not
     * completed; src/mbarrier.c). */
    uint64_t (*warp)(GjBlockCtx *, int32_t op, uint32_t mask, uint64_t value, int32_t arg);
    /* An array index out of bounds: the compiled code has written the error
     * record (gpujit.h, gj_output_debug); this ends the launch, which then
     * fails, without returning to the thread. */
    void (*trap)(GjBlockCtx *) __attribute__((noreturn));
    /* cg.this_grid().sync(): waits until every thread of the grid that has not
     * exited has called it (a cooperative launch: the grid's blocks run together). */
    void (*grid_sync)(GjBlockCtx *);
    /* Kernels compiled as interleaved threads (src/target_host.c: a thread
     * yields to the block's next one every coro_every crossings of a loop's
     * back edge, or at syncthreads()): each thread's first call takes its
     * frame of `size` bytes from coro_alloc and hands its coroutine handle
     * (the frame) to coro_begin, which is what tells LLVM that the thread
     * may be resumed (without it the code after a yield would be dropped).
     * coro_run then resumes the block's suspended threads round-robin, in
     * linear order, until all have returned. With `barriers` a round is the
     * time between two barriers: it ends when every thread that has not
     * returned waits at one (returned threads take no part in it). */
    void *(*coro_alloc)(GjBlockCtx *, uint64_t size);
    void (*coro_begin)(GjBlockCtx *, void *handle);
    void (*coro_run)(GjBlockCtx *, int32_t barriers);
    int32_t coro_every; /* back edges a thread crosses between yields */
    int32_t pad2;
    /* Kernels compiled as loops over the threads between barriers
     * (src/regions.c): region_scratch gives the block's per-thread values
     * that live across a barrier, per_thread bytes for each thread of the
     * block (64-aligned, the worker's, reused block after block);
     * region_deadlock ends the launch with the barrier error when the
     * threads of a block left a region by exits that no later region
     * continues (the loops never do so since returned threads take no part
     * in later barriers; it stays as the check of that): `seen` has bit k
     * set where some thread took exit k, and exit_sites[k] is that exit's
     * syncthreads() site (-1: a return), for k < nexits. Neither returns on
     * failure. */
    void *(*region_scratch)(GjBlockCtx *, uint64_t per_thread);
    void (*region_deadlock)(GjBlockCtx *, uint64_t seen, const int32_t *exit_sites, int32_t nexits)
            __attribute__((noreturn));
    /* Kernels compiled with racecheck=True: every load, store and atomic of
     * an element of a shared or global array first calls race(blk, address,
     * bytes, site << GJ_RACE_SITE_SHIFT | GJ_RACE_WRITE/ATOMIC bits, thread
     * index); the runtime (runtime/cpu_race.c) keeps the block's accesses in
     * race_state. site numbers the access in the kernel's table of them
     * (gj_output_race_site). */
    void (*race)(GjBlockCtx *, const void *addr, uint64_t size, int32_t site_flags, int32_t tx, int32_t ty,
                 int32_t tz);
    void *race_state;
};

/* GjBlockCtx.race's flags: a store (or an atomic's write), an atomic. */
enum { GJ_RACE_WRITE = 1, GJ_RACE_ATOMIC = 2, GJ_RACE_SITE_SHIFT = 2 };

_Static_assert(sizeof(void *) == 8 && sizeof(size_t) == 8,
               "the CPU backend's compiled code assumes 64-bit pointers and size_t");

/* syncthreads_count/and/or: GjBlockCtx.sync_reduce's op. */
enum { GJ_SYNC_COUNT, GJ_SYNC_AND, GJ_SYNC_OR };

/* Warp-level operations, in the order both sides number them: the runtime's
 * GJ_WARP_<name> and the compiler's WARP_<name> (src/gj.h) come from this
 * one list. Shuffles come first (the compiler relies on <= SHFL_BFLY). */
#define GJ_WARP_OPS(X) \
    X(SHFL_IDX) \
    X(SHFL_UP) X(SHFL_DOWN) X(SHFL_BFLY) X(ALL) X(ANY) X(EQ) X(BALLOT) X(MATCH_ANY) X(MATCH_ALL) X(SYNC) X(ACTIVEMASK) \
    X(YIELD)

#define GJ_WARP_ENUMERATOR(name) GJ_WARP_##name,
enum { GJ_WARP_OPS(GJ_WARP_ENUMERATOR) GJ_WARP_NOPS };
#undef GJ_WARP_ENUMERATOR

/* Stopping a launch (SIGINT, runtime/cpu.c): compiled code polls the int32
 * GJ_CPU_STOP_FLAG at every loop back edge (src/stoppolls.c) and, when it is
 * not 0, calls GJ_CPU_STOP_FN, which leaves the launch without returning
 * (runtime/cpu_fiber.c). The host JIT defines both names by address. */
#define GJ_CPU_STOP_FLAG "gpujit_cpu_stop"
#define GJ_CPU_STOP_FN "gpujit_cpu_stopped"
extern volatile int32_t gpujit_cpu_stop;
void gpujit_cpu_stopped(void) __attribute__((noreturn));

/* runtime/cpu_libdevice.c: libdevice's functions for the CPU target, by their names without
 * __nv_ (NULL where there is none); the host JIT defines __nv_<name> as each. */
void *cpu_libdevice_symbol(const char *name);
size_t cpu_libdevice_count(void);
const char *cpu_libdevice_name(size_t i, void **fn);

#endif
