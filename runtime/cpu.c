/* cpu.c: the CPU executor. Runs a kernel's grid on the host's cores with
 * CUDA's semantics, through the ABI of cpu_abi.h (code emitted by
 * src/target_host.c).
 *
 * Blocks are spread over a persistent pool of worker threads, the launching
 * thread joining in; workers take block indices from an atomic counter. A
 * block runs either as one call of the compiled block function (kernels
 * without barriers, and those with syncthreads() only in their body
 * compiled as loops over the threads between barriers: the compiled code
 * loops over the threads itself; those with loops, or the other kernels with
 * syncthreads() only in their body, start each thread as a coroutine and
 * coro_run below interleaves them) or, for the other kernels
 * that call syncthreads() or warp-level operations, as one fiber per
 * CUDA thread: each thread runs on a small private stack, a barrier or warp
 * operation switches back to a scheduler on the worker's own stack, and the
 * scheduler resumes the threads warp by warp: a warp's lanes waiting at a
 * warp operation are released together once every lane their mask names has
 * arrived (or exited), the block once every live thread waits at the barrier.
 *
 * Launches are serialised by one lock: a launch already spreads over every
 * core, so two at once would only interleave, and the lock keeps each
 * worker's scratch (shared-memory buffer, fiber stacks) single-owner. The
 * pool and its lock are the only process-wide state.
 *
 * Environment, read once when the pool starts:
 *   GPUJIT_CPU_THREADS  threads running blocks, the launching one included
 *                       (default: the CPUs this process may run on)
 *   GPUJIT_CPU_STACK    bytes of stack per fiber, K/M suffix allowed (default
 *                       64K; 256K under ASan); an overflow hits a guard page
 *
 * Fibers, their stacks and what happens on a stack overflow: cpu_fiber.c.
 * Warp-level operations between a warp's fibers: cpu_warp.c. Their shared
 * declarations: cpu_internal.h.
 *
 * Never exits or aborts; every failure becomes -1 and a static message. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu_internal.h"

#ifdef GJ_ASAN
#define DEFAULT_STACK (256 * 1024) /* ASan's redzones fatten every frame */
#else
#define DEFAULT_STACK (64 * 1024)
#endif
#define MIN_STACK (16 * 1024)
#define MAX_THREADS 1024          /* cap on GPUJIT_CPU_THREADS */
#define MAX_FIBERS (1u << 16)     /* CUDA allows 1024 threads a block */
#define WORKER_STACK (8u << 20)   /* least stack of a block function */
#define CORO_ROUND 1024           /* loop iterations in a round of interleaved threads */
#define CORO_MIN_EVERY 4
#define CORO_MAX_EVERY 65536

static const char MSG_DEADLOCK[] = "syncthreads(): not every thread of a block reached the same barrier "
                                   "(a barrier inside a branch that some threads skipped?)";
static const char MSG_WARP_DEADLOCK[] = "warp-level operation: a lane named in the mask never reached it "
                                        "(it waits at syncthreads(), or at a different warp operation)";
static const char MSG_YIELD_DEADLOCK[] = "mbarrier wait: the threads of a block have waited on mbarriers that "
                                         "never complete (too few arrivals, or transaction bytes never completed?)";
#define YIELD_ROUNDS_LIMIT (1u << 16) /* rounds in a row in which every running thread only waited */
static const char MSG_NOMEM[] = "CPU launch: out of memory (shared-memory buffer, fiber stacks or thread frames)";
static const char MSG_NOFN[] = "internal error: CPU launch without the host function this kernel needs";
static const char MSG_INDEX[] = "an array index was out of bounds";
static const char MSG_DIMS[] = "CPU launch: grid or block dimensions out of range";
static const char MSG_COOP_TOO_LARGE[] = "cooperative launch too large: the CPU target runs a cooperative grid's "
                                         "blocks together, at most 16384 threads in all "
                                         "(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE)";
static const char MSG_BIGBLOCK[] = "CPU launch: a block this large cannot run as fibers (at most 65536 threads)";
static const char MSG_INTERRUPTED[] = "CPU launch: interrupted (SIGINT)";
/* Filled in by pool_start with the stack sizes in force. */
static char msg_overflow_fiber[192], msg_overflow_block[256];

/* clang-format off */
CpuPool cpu_pool = {
    .launch_mu = PTHREAD_MUTEX_INITIALIZER,
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .work_cv = PTHREAD_COND_INITIALIZER,
    .done_cv = PTHREAD_COND_INITIALIZER,
};
/* clang-format on */

static void run_blocks(Worker *w, Job *j);

/* ---- stopping a launch: SIGINT ------------------------------------------ */

/* GJ_CPU_STOP_FLAG: 1 once SIGINT has arrived during this launch. Compiled
 * code polls it at every loop back edge (src/stoppolls.c), the executor
 * between blocks, barriers and rounds of interleaved threads; the one that
 * sees it leaves the launch, which fails with MSG_INTERRUPTED (the launcher
 * then runs Python's handler: KeyboardInterrupt). */
volatile int32_t gpujit_cpu_stop;

/* The SIGINT handler ours chains to (Python's), under launch_mu. */
static struct sigaction prev_int;
static struct timespec int_checked;

static void on_sigint(int sig, siginfo_t *si, void *ctx) {
    gpujit_cpu_stop = 1;
    if (prev_int.sa_flags & SA_SIGINFO)
        prev_int.sa_sigaction(sig, si, ctx);
    else if (prev_int.sa_handler != SIG_DFL && prev_int.sa_handler != SIG_IGN)
        prev_int.sa_handler(sig);
}

/* Before a launch (launch_mu held): ours is SIGINT's handler, in front of the one
 * installed now, unless that is the default action (which ends the process
 * anyway) or SIG_IGN. Python's signal.signal() puts its own back, so this
 * looks again, at most every SIGINT_RECHECK_MS (a syscall; a launch costs less
 * than one). */
#define SIGINT_RECHECK_MS 10
static void watch_sigint(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    int64_t ms = (int64_t)(now.tv_sec - int_checked.tv_sec) * 1000 + (now.tv_nsec - int_checked.tv_nsec) / 1000000;
    if (int_checked.tv_sec && ms < SIGINT_RECHECK_MS) return;
    int_checked = now;
    struct sigaction cur, sa;
    if (sigaction(SIGINT, NULL, &cur) != 0) return;
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sigint) return;
    if (!(cur.sa_flags & SA_SIGINFO) && (cur.sa_handler == SIG_DFL || cur.sa_handler == SIG_IGN)) return;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigint;
    sa.sa_flags = (cur.sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
    sa.sa_mask = cur.sa_mask;
    prev_int = cur;
    sigaction(SIGINT, &sa, NULL);
}

void cpu_fiber_main(Fiber *f) {
    Sched *s = f->sched;
#ifdef GJ_ASAN
    /* The first switch into a fiber tells us where the scheduler's stack is. */
    __sanitizer_finish_switch_fiber(NULL, &s->main_stack, &s->main_stack_size);
#endif
    const Job *j = s->job;
    if (j->uses_barrier)
        j->thread_fn(j->params, s->blk, f->tx, f->ty, f->tz);
    else
        run_blocks(s->worker, s->run);
    f->done = 1;
    f->wait = WAIT_NONE;
    s->ndone++;
    cpu_to_sched(s, f);
    __builtin_unreachable();
}

/* ---- fibers of a block -------------------------------------------------- */

/* blk->syncthreads for kernels run as fibers. */
static void fiber_barrier(GjBlockCtx *blk, int32_t site) {
    Sched *s = blk->sched;
    s->nwait++;
    s->cur->wait = WAIT_BARRIER;
    s->cur->site = site;
    cpu_to_sched(s, s->cur);
}

/* blk->sync_reduce for fibers. */
static int32_t fiber_sync_reduce(GjBlockCtx *blk, int32_t op, int32_t pred) {
    Sched *s = blk->sched;
    s->npred += pred != 0;
    fiber_barrier(blk, GJ_SITE_UNKNOWN);
    switch (op) {
    case GJ_SYNC_COUNT: return (int32_t)s->last_npred;
    case GJ_SYNC_AND: return s->last_npred == s->last_narrived;
    default: return s->last_npred != 0;
    }
}

/* blk->syncthreads, sync_reduce and warp for block functions: the compiler
 * only emits those for kernels without barriers or warp operations, and
 * these are the one thing that cannot hang. */
static void barrier_noop(GjBlockCtx *blk, int32_t site) { (void)blk, (void)site; }
static int32_t sync_reduce_noop(GjBlockCtx *blk, int32_t op, int32_t pred) {
    (void)blk, (void)op;
    return pred != 0;
}
static uint64_t warp_noop(GjBlockCtx *blk, int32_t op, uint32_t mask, uint64_t value, int32_t arg) {
    (void)blk, (void)op, (void)mask, (void)arg;
    return value;
}

/* blk->grid_sync: the thread waits for the whole grid (cooperative launches
 * only: run_coop releases it). */
static void fiber_grid_sync(GjBlockCtx *blk) {
    Sched *s = blk->sched;
    s->ngrid++;
    s->cur->wait = WAIT_GRID;
    cpu_to_sched(s, s->cur);
}

/* blk->grid_sync of a launch that is not cooperative: the compiler only emits
 * it in kernels that are, so this cannot be reached. */
static void grid_sync_noop(GjBlockCtx *blk) { (void)blk; }

/* Sets up block blk's threads on the fibers at `fibers` under scheduler s. */
static void block_begin(Sched *s, const Job *j, GjBlockCtx *blk, Fiber *fibers) {
    *s = (Sched){.job = j, .blk = blk, .fibers = fibers, .use_uc = cpu_pool.use_uc, .main_uc = s->main_uc};
#ifdef GJ_TSAN
    s->tsan_main = __tsan_get_current_fiber();
#endif
    blk->sched = s;
    blk->syncthreads = fiber_barrier;
    blk->sync_reduce = fiber_sync_reduce;
    blk->warp = cpu_fiber_warp;
    blk->grid_sync = j->coop ? fiber_grid_sync : grid_sync_noop;

    uint32_t n = j->nthreads;
    uint64_t fpctl = 0;
#if HAVE_ASM_SWITCH
    fpctl = cpu_fp_control();
#endif
    int32_t tx = 0, ty = 0, tz = 0;
    for (uint32_t i = 0; i < n; i++) {
        Fiber *f = &fibers[i];
        f->sched = s;
        f->tx = tx, f->ty = ty, f->tz = tz;
        f->done = 0;
        f->wait = WAIT_NONE;
        cpu_ctx_init(s, f, fpctl);
        if (++tx == blk->ntid[0]) {
            tx = 0;
            if (++ty == blk->ntid[1]) ty = 0, tz++;
        }
    }
}

static const char MSG_GRID_MIXED[] = "cg grid sync: some threads of a block wait at grid.sync(), others at "
                                     "syncthreads() or a warp operation";
static const char MSG_GRID_LEADER[] = "cg grid sync: thread 0 of a block returned while other threads of the block "
                                      "wait at grid.sync() (the block's first thread must reach it; on the GPU this "
                                      "hangs)";
static const char MSG_GRID_DEADLOCK[] = "cg grid sync: a block returned while other blocks wait at grid.sync() "
                                        "(every block must reach it; on the GPU this hangs)";

/* ---- the barrier rule's report ------------------------------------------- */

/* The worker's report starts afresh for block blk: no group known. */
static GjBarrierReport *report_begin(Worker *w, const GjBlockCtx *blk) {
    GjBarrierReport *r = &w->report;
    memset(r, 0, sizeof *r);
    memcpy(r->ctaid, blk->ctaid, sizeof r->ctaid);
    for (int g = 0; g < 2; g++) r->group[g].site = GJ_SITE_UNKNOWN, r->group[g].tid[0] = -1;
    return r;
}

/* The barrier rule's error, with the report of the worker that saw it. */
static void set_deadlock(Job *j, const Worker *w) {
    const char *none = NULL;
    if (atomic_compare_exchange_strong(&j->err, &none, MSG_DEADLOCK)) j->report = w->report;
}

/* Runs block s's threads until every one has returned (NULL, s->ndone ==
 * n) or, in a cooperative launch, every live one waits at the grid barrier
 * (NULL, s->ngrid > 0); releases its block barriers on the way. A deadlock
 * is an error message; the caller abandons the fibers. */
static const char *block_run(Worker *w, const Job *j, Sched *s) {
    uint32_t n = j->nthreads;
    w->active = s;
    for (;;) {
        /* Run each warp until every lane has finished or waits at the barrier
         * or at a warp operation that cannot be released yet. */
        for (uint32_t first = 0; first < n; first += 32) {
            uint32_t nl;
            Fiber *lanes = cpu_warp_of(s->fibers, n, first, &nl);
            for (int released = 1; released;) {
                for (uint32_t l = 0; l < nl; l++)
                    if (!lanes[l].done && lanes[l].wait == WAIT_NONE) cpu_to_fiber(s, &lanes[l]);
                released = cpu_release_warp(lanes, nl);
                if (released == 2) cpu_race_warp_sync(s->blk->race_state, first / 32);
            }
        }
        w->active = NULL;
        if (s->nyield) { /* threads waiting on an mbarrier: another round, unless none else can run */
            uint32_t ran = n - s->ndone - s->nwait - s->ngrid;
            s->yield_rounds = s->nyield == ran ? s->yield_rounds + 1 : 0;
            if (s->yield_rounds > YIELD_ROUNDS_LIMIT) return MSG_YIELD_DEADLOCK;
            for (uint32_t i = 0; i < n; i++)
                if (s->fibers[i].wait == WAIT_YIELD) s->fibers[i].wait = WAIT_NONE;
            s->nyield = 0;
            w->active = s;
            continue;
        }
        if (s->ndone == n) return NULL; /* every thread returned */
        if (s->nwait + s->ngrid + s->ndone < n)
            return MSG_WARP_DEADLOCK; /* some wait at a warp operation that nobody else will reach */
        if (s->ngrid > 0) {
            if (s->nwait > 0) return MSG_GRID_MIXED;
            if (s->fibers[0].done) return MSG_GRID_LEADER;
            return NULL; /* the block waits at the grid barrier */
        }
        /* release the barrier: every thread that has not returned waits at it
         * (returned threads take no part in later barriers, as on the GPU) */
        s->last_npred = s->npred, s->last_narrived = s->nwait;
        s->npred = s->nwait = 0;
        for (uint32_t i = 0; i < n; i++) s->fibers[i].wait = WAIT_NONE;
        cpu_race_barrier(s->blk->race_state);
        if (gpujit_cpu_stop) return MSG_INTERRUPTED;
        w->active = s;
    }
}

/* Runs one block of a kernel with barriers: all its threads as fibers,
 * released from a barrier together once every live one has reached it. */
static const char *run_fibers(Worker *w, const Job *j, GjBlockCtx *blk) {
    Sched s;
    ucontext_t main_uc;
    s.main_uc = &main_uc;
    block_begin(&s, j, blk, w->fibers);
    const char *msg = block_run(w, j, &s);
    if (msg) cpu_abandon(w, j->nthreads);
    return msg;
}

/* Runs blocks of a kernel without barriers on w's block fiber (a guarded
 * stack, so that an overflow is caught): run_blocks() there, one switch to
 * it and back per job. */
static void run_block_fiber(Worker *w, Job *j) {
    Sched s = {.job = j, .worker = w, .run = j, .use_uc = 0};
#ifdef GJ_TSAN
    s.tsan_main = __tsan_get_current_fiber();
#endif
    Fiber *f = &w->bfiber;
    f->sched = &s;
    f->done = 0;
    f->wait = WAIT_NONE;
    uint64_t fpctl = 0;
#if HAVE_ASM_SWITCH
    fpctl = cpu_fp_control();
#endif
    cpu_ctx_init(&s, f, fpctl);
    w->active = &s;
    cpu_to_fiber(&s, f);
    w->active = NULL;
}

/* ---- interleaved threads ------------------------------------------------ */

/* How many loop iterations a thread of an interleaved kernel runs before the
 * next thread's turn: a round of the block's threads then runs about
 * CORO_ROUND iterations, neighbours in memory for a grid-stride loop. Fewer
 * would pay a resumption (a few ns) too often; more would spread a round
 * over more cache lines than stay in the cache. */
static int32_t coro_every(uint64_t nthreads) {
    if (nthreads <= 1) return INT32_MAX; /* nothing to interleave with */
    uint64_t k = CORO_ROUND / nthreads;
    return (int32_t)(k < CORO_MIN_EVERY ? CORO_MIN_EVERY : k > CORO_MAX_EVERY ? CORO_MAX_EVERY : k);
}

/* blk->coro_alloc: a thread's frame. The first thread of a block sizes the
 * buffer for all of them (no frame is live then, so it may move). Threads
 * on fibers (a cooperative launch) each keep theirs, by fiber index. */
static void *coro_alloc(GjBlockCtx *blk, uint64_t size) {
    Worker *w = cpu_tls_worker;
    Sched *s = blk->sched;
    size = (size + 63) & ~(uint64_t)63; /* 64: frames may hold any vector */
    uint64_t i = s ? (uint64_t)(s->cur - w->fibers) : w->coro_n;
    if (i == 0) {
        uint64_t n = s ? s->job->nfibers : (uint64_t)blk->ntid[0] * (uint64_t)blk->ntid[1] * (uint64_t)blk->ntid[2];
        if (size * n > w->coro_cap) {
            free(w->coro_buf);
            w->coro_buf = aligned_alloc(64, size * n);
            w->coro_cap = w->coro_buf ? size * n : 0;
            if (!w->coro_buf) cpu_trap_nomem();
        }
        w->coro_size = size;
    }
    if (!s) w->coro_n++;
    return w->coro_buf + i * w->coro_size;
}

/* blk->coro_begin: the handle is the frame coro_alloc gave (LLVM's
 * switched-resume coroutines), which coro_run finds by its index. */
static void coro_begin(GjBlockCtx *blk, void *handle) { (void)blk, (void)handle; }

/* A frame starts with its resume function, which a returned thread's final
 * suspension sets to NULL. */
static int coro_live(void **h) { return h[0] != NULL; }
static void coro_resume(void **h) { ((void (*)(void *))h[0])(h); }

/* blk->coro_run: resumes the block's suspended threads, one round after
 * another in linear thread order, until every one has returned. */
static void coro_run(GjBlockCtx *blk, int32_t barriers) {
    Worker *w = cpu_tls_worker;
    size_t size = w->coro_size;
    if (blk->sched) {
        /* a fiber: this thread alone, the fibers' own barrier between rounds */
        void **h = (void **)(w->coro_buf + (size_t)(((Sched *)blk->sched)->cur - w->fibers) * size);
        while (coro_live(h)) {
            if (barriers) blk->syncthreads(blk, GJ_SITE_UNKNOWN);
            coro_resume(h);
        }
        return;
    }
    char *buf = w->coro_buf;
    uint32_t n = w->coro_n, live = 0;
    for (uint32_t i = 0; i < n; i++) live += coro_live((void **)(buf + i * size));
    /* a round ends when every thread that has not returned waits at the
     * barrier: returned threads take no part in it, as on the GPU */
    while (live) {
        if (gpujit_cpu_stop) gpujit_cpu_stopped();
        uint32_t waiting = 0;
        for (uint32_t i = 0; i < n; i++) {
            void **h = (void **)(buf + i * size);
            if (coro_live(h)) {
                coro_resume(h);
                waiting += coro_live(h);
            }
        }
        live = waiting;
    }
    w->coro_n = 0;
}

/* ---- loops over the threads between barriers ---------------------------- */

/* blk->region_scratch: room for per_thread bytes of each thread of the
 * block, the worker's buffer, grown as needed (no block's values are live
 * between two blocks). */
static void *region_scratch(GjBlockCtx *blk, uint64_t per_thread) {
    Worker *w = cpu_tls_worker;
    uint64_t n = (uint64_t)blk->ntid[0] * (uint64_t)blk->ntid[1], bytes;
    if (__builtin_mul_overflow(n, (uint64_t)blk->ntid[2], &n) || __builtin_mul_overflow(n, per_thread, &bytes) ||
        bytes > SIZE_MAX / 2)
        cpu_trap_nomem();
    if (bytes > w->region_cap) {
        free(w->region_buf);
        w->region_buf = aligned_alloc(64, (bytes + 63) & ~(uint64_t)63);
        w->region_cap = w->region_buf ? bytes : 0;
        if (!w->region_buf) cpu_trap_nomem();
    }
    return w->region_buf;
}

/* blk->region_deadlock: the threads of a block did not all reach the same barrier; `seen` has
 * bit k for each exit k some thread took (which threads, the loops do not keep). */
__attribute__((noreturn)) static void region_deadlock(GjBlockCtx *blk, uint64_t seen, const int32_t *exit_sites,
                                                    int32_t nexits) {
    GjBarrierReport *r = report_begin(cpu_tls_worker, blk);
    int g = 0;
    for (int32_t k = 0; k < nexits && k < 64 && g < 2; k++)
        if (seen >> k & 1) r->group[g++].site = exit_sites[k];
    cpu_trap_deadlock();
}

/* ---- blocks and jobs ---------------------------------------------------- */

/* Block b's geometry and runtime hooks, in blk. */
static void block_ctx(const Job *j, GjBlockCtx *blk_, uint64_t b, char *shared) {
#define blk (*blk_)
    uint64_t gx = j->grid.x, gy = j->grid.y;
    blk.ntid[0] = (int32_t)j->block.x;
    blk.ntid[1] = (int32_t)j->block.y;
    blk.ntid[2] = (int32_t)j->block.z;
    blk.ctaid[0] = (int32_t)(b % gx);
    blk.ctaid[1] = (int32_t)(b / gx % gy);
    blk.ctaid[2] = (int32_t)(b / gx / gy);
    blk.nctaid[0] = (int32_t)j->grid.x;
    blk.nctaid[1] = (int32_t)j->grid.y;
    blk.nctaid[2] = (int32_t)j->grid.z;
    blk.pad = 0;
    blk.shared = shared;
    blk.shared_bytes = j->shared_bytes;
    blk.trap = cpu_trap_index;
    blk.grid_sync = grid_sync_noop;
    blk.coro_alloc = coro_alloc;
    blk.coro_begin = coro_begin;
    blk.coro_run = coro_run;
    blk.coro_every = coro_every(j->block.x * j->block.y * j->block.z);
    blk.region_scratch = region_scratch;
    blk.region_deadlock = region_deadlock;
    blk.race = cpu_race_noop;
    blk.race_state = NULL;
#undef blk
}

static const char *run_block(Worker *w, const Job *j, uint64_t b) {
    GjBlockCtx blk;
    block_ctx(j, &blk, b, w->shared);
    /* out of memory for the shadow: the block runs unchecked */
    if (j->race_log && cpu_race_block(&w->race, &blk, j->race_log) == 0) blk.race = cpu_race_access;
    if (!j->uses_barrier) {
        blk.syncthreads = barrier_noop;
        blk.sync_reduce = sync_reduce_noop;
        blk.warp = warp_noop;
        blk.sched = NULL;
        j->block_fn(j->params, &blk); /* on the block fiber if w has one */
        return NULL;
    }
    return run_fibers(w, j, &blk);
}

static void set_error(Job *j, const char *msg) {
    const char *none = NULL;
    atomic_compare_exchange_strong(&j->err, &none, msg);
}

/* Runs blocks of j until none is left or one has failed. */
static void run_blocks(Worker *w, Job *j) {
    for (;;) {
        uint64_t b = atomic_fetch_add_explicit(&j->next, j->chunk, memory_order_relaxed);
        if (b >= j->nblocks) return;
        uint64_t end = b + j->chunk < j->nblocks ? b + j->chunk : j->nblocks;
        for (; b < end; b++) {
            if (atomic_load_explicit(&j->err, memory_order_relaxed)) return;
            if (gpujit_cpu_stop) {
                set_error(j, MSG_INTERRUPTED);
                return;
            }
            const char *msg = run_block(w, j, b);
            if (msg) {
                set_error(j, msg);
                return;
            }
        }
    }
}

/* A cooperative launch: every block of the grid is resident at once, on this
 * worker's fibers (nthreads per block, one slice of w->fibers each). Each
 * block runs until its threads have returned or wait at the grid barrier;
 * once every block is there, the barrier is released for all. */
static void run_coop(Worker *w, Job *j) {
    uint64_t nb = j->nblocks;
    /* allocated by the launch, which frees them even when a fault ends this early */
    Sched *scheds = j->coop_scheds;
    GjBlockCtx *blks = j->coop_blks;
    unsigned char *done = j->coop_done;
    ucontext_t *main_uc = j->coop_uc;
    for (uint64_t b = 0; b < nb; b++) {
        block_ctx(j, &blks[b], b, w->shared + b * j->shared_stride);
        scheds[b].main_uc = main_uc; /* blocks are scheduled one at a time */
        block_begin(&scheds[b], j, &blks[b], &w->fibers[b * j->nthreads]);
    }
    for (;;) {
        uint64_t ndone = 0;
        for (uint64_t b = 0; b < nb; b++) {
            if (done[b]) {
                ndone++;
                continue;
            }
            const char *msg = block_run(w, j, &scheds[b]);
            if (msg) {
                cpu_abandon(w, j->nfibers);
                set_error(j, msg);
                return;
            }
            if (scheds[b].ndone == j->nthreads) done[b] = 1, ndone++;
        }
        if (ndone == nb) return;
        if (ndone > 0) {
            cpu_abandon(w, j->nfibers);
            set_error(j, MSG_GRID_DEADLOCK);
            return;
        }
        /* release the grid barrier */
        for (uint64_t b = 0; b < nb; b++) {
            Sched *s = &scheds[b];
            s->ngrid = 0;
            for (uint32_t i = 0; i < j->nthreads; i++)
                if (s->fibers[i].wait == WAIT_GRID) s->fibers[i].wait = WAIT_NONE;
        }
    }
}

static void run_job(Worker *w, Job *j) {
    if (atomic_load_explicit(&j->err, memory_order_relaxed)) return;
    if (cpu_worker_reserve(w, j) != 0) {
        set_error(j, MSG_NOMEM);
        return;
    }
    w->active = NULL;
    w->coro_n = 0; /* a failed launch may have left frames */
    cpu_tls_worker = w;
    int why = sigsetjmp(w->fault_jb, 0);
    if (why) {
        /* From on_fault (a fiber of this worker ran into its guard page) or
         * from blk->trap (a thread indexed out of bounds). The block is
         * abandoned like a deadlocked one; the stacks stay. */
        if (why == JUMP_FAULT) pthread_sigmask(SIG_SETMASK, &w->fault_mask, NULL);
#ifdef GJ_ASAN
        if (w->jumped_off_fiber) {
            __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
            /* The frames that switched to the fiber, below this one on this
             * stack, are gone without returning; ASan's siglongjmp handling
             * cleared the fiber's stack, not this one, so their redzones must
             * be forgotten here (else uninstrumented code using that memory
             * later, LLVM's, trips over stale poison). */
            Sched *s = w->active;
            volatile char here = 0;
            uintptr_t lo = s ? (uintptr_t)s->main_stack : 0, hi = (uintptr_t)&here;
            if (lo && hi > lo && hi - lo <= s->main_stack_size) __asan_unpoison_memory_region((void *)lo, hi - lo);
            (void)here;
        }
#endif
        w->active = NULL;
        cpu_tls_worker = NULL;
        if (j->uses_barrier)
            cpu_abandon(w, j->nfibers);
        else if (w->bstack)
            cpu_abandon_fiber(&w->bfiber);
        if (why == JUMP_DEADLOCK)
            set_deadlock(j, w);
        else
            set_error(j, why == JUMP_TRAP      ? MSG_INDEX
                         : why == JUMP_NOMEM   ? MSG_NOMEM
                         : why == JUMP_STOP    ? MSG_INTERRUPTED
                         : j->uses_barrier     ? msg_overflow_fiber
                                               : msg_overflow_block);
        return;
    }
    if (j->coop)
        run_coop(w, j);
    else if (!j->uses_barrier && w->bstack)
        run_block_fiber(w, j);
    else
        run_blocks(w, j);
    cpu_tls_worker = NULL;
}

/* ---- the pool ----------------------------------------------------------- */

static void *worker_main(void *arg) {
    Worker *w = arg;
    uint64_t seen = 0;
    w->altstack = cpu_altstack_setup();
    if (w->altstack) w->altstack_len = cpu_pool.page + ALT_STACK;
    pthread_mutex_lock(&cpu_pool.mu);
    for (;;) {
        while (!cpu_pool.job || cpu_pool.gen == seen) pthread_cond_wait(&cpu_pool.work_cv, &cpu_pool.mu);
        seen = cpu_pool.gen;
        Job *j = cpu_pool.job;
        cpu_pool.nactive++;
        pthread_mutex_unlock(&cpu_pool.mu);
        run_job(w, j);
        pthread_mutex_lock(&cpu_pool.mu);
        if (--cpu_pool.nactive == 0) pthread_cond_signal(&cpu_pool.done_cv);
    }
    return NULL;
}

/* A positive size from the environment, with an optional K or M suffix (`units`
 * only), clamped to lo..hi; `dflt` when unset, -1 when malformed. */
static long env_size(const char *name, long dflt, long lo, long hi, int units) {
    const char *s = getenv(name);
    if (!s || !*s) return dflt;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || v <= 0) return -1;
    if (units && (*end == 'k' || *end == 'K'))
        v = v <= hi / 1024 ? v * 1024 : hi, end++;
    else if (units && (*end == 'm' || *end == 'M'))
        v = v <= hi / (1024 * 1024) ? v * 1024 * 1024 : hi, end++;
    while (*end == ' ') end++;
    if (*end) return -1;
    return v < lo ? lo : v > hi ? hi : v;
}

static long cpu_count(void);

void gj_cpu_settings(long *threads, long *stack) {
    /* a malformed value is refused before a kernel compiles (gj_cpu_env_error): the default here */
    *threads = env_size("GPUJIT_CPU_THREADS", cpu_count(), 1, MAX_THREADS, 0);
    if (*threads < 0) *threads = cpu_count();
    *stack = env_size("GPUJIT_CPU_STACK", DEFAULT_STACK, MIN_STACK, 1L << 30, 1);
    if (*stack < 0) *stack = DEFAULT_STACK;
}

const char *gj_cpu_env_error(const char **var) {
    *var = "GPUJIT_CPU_THREADS";
    if (env_size(*var, 1, 1, MAX_THREADS, 0) < 0)
        return "use a positive number of threads (e.g. 4), or leave it unset for every CPU";
    *var = "GPUJIT_CPU_STACK";
    if (env_size(*var, 1, MIN_STACK, 1L << 30, 1) < 0)
        return "use a positive number of bytes, K or M allowed (e.g. 256K), or leave it unset for the default";
    return NULL;
}

static long cpu_count(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set); /* honours taskset and container cpusets */
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

/* fork() keeps only the forking thread: the child must not wait for pool
 * threads it no longer has. The prepare handler takes the locks so that no
 * launch is half-way when the child's copy is made. */
static void atfork_prepare(void) {
    pthread_mutex_lock(&cpu_pool.launch_mu);
    pthread_mutex_lock(&cpu_pool.mu);
}

static void atfork_parent(void) {
    pthread_mutex_unlock(&cpu_pool.mu);
    pthread_mutex_unlock(&cpu_pool.launch_mu);
}

static void atfork_child(void) {
    for (int i = 0; i < cpu_pool.nhelpers; i++) cpu_worker_free(&cpu_pool.helpers[i]);
    free(cpu_pool.helpers);
    cpu_pool.helpers = NULL;
    cpu_pool.nhelpers = 0;
    cpu_pool.started = 0; /* the next launch starts a new pool */
    cpu_pool.job = NULL;
    cpu_pool.nactive = 0;
    pthread_cond_init(&cpu_pool.work_cv, NULL);
    pthread_cond_init(&cpu_pool.done_cv, NULL);
    pthread_mutex_unlock(&cpu_pool.mu);
    pthread_mutex_unlock(&cpu_pool.launch_mu);
}

/* Called with launch_mu held, by the first launch. A pool thread that
 * cannot be created only makes the pool smaller. */
static void pool_start(void) {
    long nthreads, stack_env;
    gj_cpu_settings(&nthreads, &stack_env);
    long page = sysconf(_SC_PAGESIZE);
    cpu_pool.page = page > 0 ? (size_t)page : 4096;
    size_t stack = (size_t)stack_env;
    cpu_pool.stack_size = (stack + cpu_pool.page - 1) & ~(cpu_pool.page - 1);
    cpu_pool.use_uc = !HAVE_ASM_SWITCH || cpu_shadow_stack_active();
    cpu_pool.block_stack = cpu_pool.use_uc       ? 0
            : cpu_pool.stack_size > WORKER_STACK ? cpu_pool.stack_size
                                                 : WORKER_STACK;
    snprintf(msg_overflow_fiber, sizeof msg_overflow_fiber,
             "a thread overflowed its CPU stack (big gpu.local.array or deep recursion?): "
             "raise GPUJIT_CPU_STACK (now %zu KiB)",
             cpu_pool.stack_size / 1024);
    snprintf(msg_overflow_block, sizeof msg_overflow_block,
             "a thread overflowed its CPU stack (big gpu.local.array or deep recursion?): "
             "raise GPUJIT_CPU_STACK (now %zu KiB; kernels without syncthreads() or warp "
             "operations get %zu KiB)",
             cpu_pool.stack_size / 1024, cpu_pool.block_stack / 1024);

    cpu_pool.nhelpers = 0;
    cpu_pool.helpers = nthreads > 1 ? calloc(nthreads - 1, sizeof *cpu_pool.helpers) : NULL;
    if (cpu_pool.helpers) {
        /* Asynchronous signals belong to the application's threads (Python
         * handles them on its main thread); faults stay deliverable. */
        sigset_t all, old;
        sigfillset(&all);
        sigdelset(&all, SIGSEGV);
        sigdelset(&all, SIGBUS);
        sigdelset(&all, SIGFPE);
        sigdelset(&all, SIGILL);
        sigdelset(&all, SIGTRAP);
        sigdelset(&all, SIGABRT);
        sigdelset(&all, SIGSYS);
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, WORKER_STACK);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        for (long i = 0; i < nthreads - 1; i++) {
            Worker *w = &cpu_pool.helpers[cpu_pool.nhelpers];
            if (pthread_create(&w->thread, &attr, worker_main, w) != 0) break;
            cpu_pool.nhelpers++;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
    }
    if (!cpu_pool.atfork_set && pthread_atfork(atfork_prepare, atfork_parent, atfork_child) == 0)
        cpu_pool.atfork_set = 1; /* inherited by children: register once per process image */
    cpu_pool.started = 1;
}

/* The calling thread's last launch's barrier report (gj_cpu_barrier_report). */
static _Thread_local GjBarrierReport last_report;
static _Thread_local int last_report_set;
/* and its races (gj_cpu_race_reports): the log of the thread's last racecheck launch, kept
 * until its next one (static TLS is scarce in an extension module, so it is malloc'd) */
static _Thread_local GjRaceLog *last_races;
static _Thread_local int last_races_n;
static _Thread_local uint64_t last_races_total;

int gj_cpu_launch(GjHostBlockFn block_fn, GjHostThreadFn thread_fn, int mode, GjDim3 grid, GjDim3 block,
                  size_t shared_bytes, void **params, const char **err) {
    int uses_barrier = (mode & (GJ_CPU_BARRIER | GJ_CPU_COOPERATIVE)) != 0, coop = (mode & GJ_CPU_COOPERATIVE) != 0;
    int racecheck = (mode & GJ_CPU_RACECHECK) && !coop;
    const char *dummy;
    if (!err) err = &dummy;
    *err = NULL;
    last_races_n = 0, last_races_total = 0; /* this launch's, even where it runs nothing */
    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z) return 0;
    if (grid.x > INT32_MAX || grid.y > INT32_MAX || grid.z > INT32_MAX || block.x > INT32_MAX || block.y > INT32_MAX ||
        block.z > INT32_MAX) {
        *err = MSG_DIMS;
        return -1;
    }
    uint64_t nblocks, nthreads;
    if (__builtin_mul_overflow((uint64_t)grid.x * grid.y, (uint64_t)grid.z, &nblocks) ||
        __builtin_mul_overflow((uint64_t)block.x * block.y, (uint64_t)block.z, &nthreads)) {
        *err = MSG_DIMS;
        return -1;
    }
    if (uses_barrier ? !thread_fn : !block_fn) {
        *err = MSG_NOFN;
        return -1;
    }
    if (uses_barrier && nthreads > MAX_FIBERS) {
        *err = MSG_BIGBLOCK;
        return -1;
    }
    uint64_t total;
    if (coop && (__builtin_mul_overflow(nblocks, nthreads, &total) || total > GJ_CPU_MAX_COOP_THREADS)) {
        *err = MSG_COOP_TOO_LARGE;
        return -1;
    }

    /* clang-format off */
    Job j = {
        .block_fn = block_fn, .thread_fn = thread_fn, .uses_barrier = uses_barrier,
        .grid = grid, .block = block, .shared_bytes = shared_bytes, .params = params,
        .nblocks = nblocks, .nthreads = (uint32_t)(uses_barrier ? nthreads : 0),
        .coop = coop, .nfibers = (uint32_t)(uses_barrier ? nthreads * (coop ? nblocks : 1) : 0),
        .shared_stride = coop ? (shared_bytes + 4095) & ~(size_t)4095 : 0,
    };
    /* clang-format on */
    if (coop) {
        j.coop_scheds = calloc(nblocks, sizeof *j.coop_scheds);
        j.coop_blks = calloc(nblocks, sizeof *j.coop_blks);
        j.coop_done = calloc(nblocks, 1);
        j.coop_uc = malloc(sizeof *j.coop_uc);
        if (!j.coop_scheds || !j.coop_blks || !j.coop_done || !j.coop_uc) {
            free(j.coop_scheds), free(j.coop_blks), free(j.coop_done), free(j.coop_uc);
            *err = MSG_NOMEM;
            return -1;
        }
    }
    atomic_init(&j.next, 0);
    atomic_init(&j.err, NULL);
    GjRaceLog *race_log = NULL;
    if (racecheck && !(race_log = j.race_log = malloc(sizeof *race_log))) {
        *err = MSG_NOMEM;
        return -1;
    }

    pthread_mutex_lock(&cpu_pool.launch_mu);
    if (race_log) cpu_race_log_begin(race_log);
    if (!cpu_pool.started) pool_start();
    watch_sigint();
    gpujit_cpu_stop = 0;
    /* Blocks are taken a chunk at a time to keep the shared counter cold
     * when blocks are tiny; a chunk stays under a sixteenth of a thread's
     * share so that the threads still finish together. */
    uint64_t share = nblocks / ((uint64_t)(cpu_pool.nhelpers + 1) * 16);
    j.chunk = share < 1 ? 1 : share > 64 ? 64 : share;
    uint64_t nchunks = (nblocks + j.chunk - 1) / j.chunk;
    int helpers = nchunks - 1 < (uint64_t)cpu_pool.nhelpers ? (int)(nchunks - 1) : cpu_pool.nhelpers;
    if (coop) helpers = 0; /* one worker holds every block of the grid */
    if (helpers > 0) {
        pthread_mutex_lock(&cpu_pool.mu);
        cpu_pool.job = &j;
        cpu_pool.gen++;
        if (helpers == cpu_pool.nhelpers)
            pthread_cond_broadcast(&cpu_pool.work_cv);
        else
            for (int i = 0; i < helpers; i++) pthread_cond_signal(&cpu_pool.work_cv);
        pthread_mutex_unlock(&cpu_pool.mu);
    }
    if (!cpu_pool.sig_set) cpu_fault_handler_install();
    if (!cpu_tls_alt_done) cpu_caller_altstack();
    run_job(&cpu_pool.caller, &j);
    if (helpers > 0) {
        /* Helpers that have not picked the job up yet never will; wait for
         * those that did. */
        pthread_mutex_lock(&cpu_pool.mu);
        cpu_pool.job = NULL;
        while (cpu_pool.nactive > 0) pthread_cond_wait(&cpu_pool.done_cv, &cpu_pool.mu);
        pthread_mutex_unlock(&cpu_pool.mu);
    }
    pthread_mutex_unlock(&cpu_pool.launch_mu);
    if (coop) free(j.coop_scheds), free(j.coop_blks), free(j.coop_done), free(j.coop_uc);

    *err = atomic_load(&j.err);
    last_report_set = *err == MSG_DEADLOCK;
    if (last_report_set) last_report = j.report;
    if (race_log) {
        last_races_n = (int)race_log->n;
        last_races_total = atomic_load(&race_log->total);
        cpu_race_log_end(race_log);
        free(last_races);
        last_races = race_log;
    }
    return *err == MSG_INTERRUPTED ? GJ_CPU_INTERRUPTED : *err ? -1 : 0;
}

const GjBarrierReport *gj_cpu_barrier_report(void) { return last_report_set ? &last_report : NULL; }

const GjRaceReport *gj_cpu_race_reports(int *n, uint64_t *total) {
    *n = last_races ? last_races_n : 0;
    *total = last_races ? last_races_total : 0;
    return last_races ? last_races->reports : NULL;
}
