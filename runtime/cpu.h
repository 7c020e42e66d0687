/* The CPU executor's interface (runtime/cpu.c, with cpu_fiber.c and
 * cpu_warp.c, whose shared internals are in cpu_internal.h): the entry
 * points the compiler emits for a kernel and the launch that runs them. The
 * block context and the operation numbers they share with the compiler are
 * in cpu_abi.h. */
#ifndef GPUJIT_RUNTIME_CPU_H
#define GPUJIT_RUNTIME_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_abi.h"

/* Emitted by the compiler for every host kernel (k = the kernel's symbol):
 *   k_block:  runs every thread of one block in a loop (kernels without barriers)
 *   k_thread: runs one thread (kernels with barriers run each on a fiber)
 * params is the same kernelParams array that cuLaunchKernel takes. */
typedef void (*GjHostBlockFn)(void **params, GjBlockCtx *blk);
typedef void (*GjHostThreadFn)(void **params, GjBlockCtx *blk, int32_t tx, int32_t ty, int32_t tz);

typedef struct GjDim3 {
    uint32_t x, y, z;
} GjDim3;

/* gj_cpu_launch's mode: 0 (block_fn), GJ_CPU_BARRIER (thread_fn on fibers),
 * or GJ_CPU_COOPERATIVE as well (the kernel syncs its grid: every block's
 * fibers are resident at once, at most GJ_CPU_MAX_COOP_THREADS threads);
 * GJ_CPU_RACECHECK besides: the kernel was compiled with racecheck=True, and
 * its blocks keep the shadow of their accesses (runtime/cpu_race.c;
 * cooperative launches are not checked). */
enum { GJ_CPU_BARRIER = 1, GJ_CPU_COOPERATIVE = 2, GJ_CPU_RACECHECK = 4 };
#define GJ_CPU_MAX_COOP_THREADS 16384 /* each a fiber stack mapped at once */

/* Run a whole grid on the CPU: blocks in parallel on the machine's cores,
 * threads of a block as loops (block_fn) or fibers (thread_fn, when the kernel
 * uses barriers or warp-level operations). Returns 0, or -1 with *err set to a static message
 * (e.g. a barrier that not every thread of a block reached), or
 * GJ_CPU_INTERRUPTED where SIGINT stopped it (the process's own handler has
 * run too: Python's has recorded the signal). */
#define GJ_CPU_INTERRUPTED (-2)
int gj_cpu_launch(GjHostBlockFn block_fn, GjHostThreadFn thread_fn, int mode, GjDim3 grid, GjDim3 block,
                  size_t shared_bytes, void **params, const char **err);

/* What the barrier rule's error saw in the block that broke it: the block, and two groups of
 * its threads that went different ways, each with the syncthreads() site they reached (its
 * number in the kernel's table, gj_output_barrier; GJ_SITE_RETURNED: they returned;
 * GJ_SITE_UNKNOWN: a barrier not named), the first thread of the group in linear order (x of
 * -1: not known) and how many they are (0: not known). */
enum { GJ_SITE_RETURNED = -1, GJ_SITE_UNKNOWN = -2 };
typedef struct GjBarrierGroup {
    int32_t site, tid[3];
    uint32_t count;
} GjBarrierGroup;
typedef struct GjBarrierReport {
    int32_t ctaid[3];
    GjBarrierGroup group[2];
} GjBarrierReport;

/* The report of the calling thread's last gj_cpu_launch, when it failed by the barrier rule;
 * else NULL. */
const GjBarrierReport *gj_cpu_barrier_report(void);

/* A data race the race detector saw (GJ_CPU_RACECHECK): its kind, the block, and the two
 * accesses, the earlier first: each thread's index, its site (gj_output_race_site) and flags
 * (GJ_RACE_WRITE, GJ_RACE_ATOMIC); the byte's address and, in shared memory, its offset
 * there (else -1). */
enum { GJ_RACE_RAW, GJ_RACE_WAR, GJ_RACE_WAW };
#define GJ_RACE_REPORTS 8 /* distinct pairs of sites kept per launch */
typedef struct GjRaceReport {
    int kind;
    int32_t ctaid[3];
    int32_t tid[2][3];
    int32_t site[2];
    int flags[2];
    uintptr_t addr;
    int64_t shared_off;
} GjRaceReport;

/* The races the calling thread's last gj_cpu_launch saw: *n reports (distinct pairs of sites
 * and kinds, in the order they were seen, at most GJ_RACE_REPORTS) and *total hazards in all
 * (each conflicting byte access counts). */
const GjRaceReport *gj_cpu_race_reports(int *n, uint64_t *total);

/* NULL, or what GPUJIT_CPU_THREADS or GPUJIT_CPU_STACK (named in *var) takes, when its value is
 * not that (a static message). */
const char *gj_cpu_env_error(const char **var);
/* The threads a launch runs blocks on and the bytes of stack of each simulated thread (before
 * rounding to pages): GPUJIT_CPU_THREADS and GPUJIT_CPU_STACK, clamped, or their defaults. */
void gj_cpu_settings(long *threads, long *stack);

#endif
