/* cpu_internal.h: what the CPU executor's files share (runtime/cpu.c: the
 * launch, the worker pool and the block scheduler; runtime/cpu_fiber.c:
 * fibers, their stacks and the way back from a guard-page fault or a trap;
 * runtime/cpu_warp.c: warp-level operations between a warp's fibers). Not
 * part of the executor's interface, which is cpu.h. Include after defining
 * _GNU_SOURCE. */
#ifndef GPUJIT_RUNTIME_CPU_INTERNAL_H
#define GPUJIT_RUNTIME_CPU_INTERNAL_H

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <ucontext.h>

#include "cpu.h"

#if defined(__x86_64__) && !defined(GJ_CPU_FORCE_UCONTEXT)
#define HAVE_ASM_SWITCH 1
#else
#define HAVE_ASM_SWITCH 0
#endif

/* Fibers switch stacks behind the sanitizers' backs: tell them. */
#if defined(__SANITIZE_ADDRESS__)
#define GJ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GJ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define GJ_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GJ_TSAN 1
#endif
#endif
#ifdef GJ_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef GJ_TSAN
#include <sanitizer/tsan_interface.h>
#endif
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define GJ_VALGRIND 1
#endif
#endif

#define ALT_STACK (256u * 1024)   /* alternate signal stack of a worker */

typedef struct Sched Sched;
typedef struct CpuRace CpuRace; /* a worker's shadow of its block's accesses (cpu_race.c) */

/* The race detector's findings in one launch (cpu_race.c): the first distinct ones, under mu. */
typedef struct GjRaceLog {
    pthread_mutex_t mu;
    uint64_t serial; /* which launch */
    _Atomic uint64_t total;
    uint32_t n;
    uint64_t keys[GJ_RACE_REPORTS];
    GjRaceReport reports[GJ_RACE_REPORTS];
} GjRaceLog;

/* One CUDA thread of a block that uses barriers. */
typedef struct Fiber {
    void *sp;          /* saved stack pointer (hand-written switch) */
    ucontext_t *uc;    /* saved context (ucontext fallback), else NULL */
    char *stack;       /* lowest usable byte, just above the guard page */
    size_t size;       /* usable bytes from `stack` */
    Sched *sched;
    int32_t tx, ty, tz;
    int done;          /* returned from the kernel */
    int wait;          /* WAIT_*: why it is switched out */
    int32_t site;      /* WAIT_BARRIER: the syncthreads() site it waits at (-1: none named) */
    /* a warp operation: the operands the lane deposits, the result it reads */
    int32_t op, arg;
    uint32_t mask;
    uint64_t value, result;
    void *asan_fake;   /* ASan's fake stack while switched out */
    void *tsan;        /* TSan's context for this fiber */
    unsigned vg_id;    /* valgrind's stack registration */
} Fiber;

/* What a pool thread (or the launching thread) keeps between launches. */
typedef struct Worker {
    pthread_t thread;
    char *shared;      /* shared memory of the block being run, 64-aligned */
    size_t shared_cap;
    Fiber *fibers;
    ucontext_t *ucs;   /* the fibers' contexts, ucontext fallback only */
    uint32_t nfibers;
    char *stacks;      /* one mapping: [guard page | stack] per fiber */
    size_t stacks_len;
    /* block functions run on this fiber: [guard page | pool.block_stack] */
    Fiber bfiber;
    char *bstack;
    size_t bstack_len;
    char *altstack;    /* pool threads' alternate signal stack (mapping) */
    size_t altstack_len;
    /* the fault handler: the scheduler of the block running on this thread
     * (its cur fiber is the one running), and where to go back to */
    Sched *volatile active;
    sigjmp_buf fault_jb;       /* in run_job(): JUMP_FAULT or JUMP_TRAP come back here */
    int jumped_off_fiber;      /* the jump left a fiber's stack (the sanitizers know) */
    sigset_t fault_mask; /* the signal mask when the fault hit */
    /* frames of interleaved threads (GjBlockCtx.coro_alloc): coro_n of
     * coro_size bytes each are live, in a buffer of coro_cap */
    char *coro_buf;
    size_t coro_cap, coro_size;
    uint32_t coro_n;
    /* values of the threads of a block run as loops between barriers
     * (GjBlockCtx.region_scratch) */
    char *region_buf;
    size_t region_cap;
    GjBarrierReport report; /* the barrier rule's failure this worker saw last */
    CpuRace *race;          /* racecheck launches: the shadow of the block being run */
} Worker;

/* One launch. Lives on the launching thread's stack; the pool points at it
 * while helpers may still pick it up. */
typedef struct Job {
    GjHostBlockFn block_fn;
    GjHostThreadFn thread_fn;
    int uses_barrier;
    GjDim3 grid, block;
    size_t shared_bytes;
    void **params;
    uint64_t nblocks, chunk;
    uint32_t nthreads;             /* threads per block */
    int coop;                      /* cooperative: every block resident, one worker runs them all */
    uint32_t nfibers;              /* fibers the launch needs: nthreads, or nthreads per block for all blocks */
    size_t shared_stride;          /* cooperative: bytes between blocks' shared memory */
    /* cooperative: each block's scheduler, context and whether it has finished */
    struct Sched *coop_scheds;
    GjBlockCtx *coop_blks;
    unsigned char *coop_done;
    ucontext_t *coop_uc;           /* the scheduler's context, one block at a time */
    _Atomic uint64_t next;         /* first block index nobody has taken */
    _Atomic(const char *) err;     /* first error; set once */
    GjBarrierReport report;        /* err is the barrier rule's: what its worker saw */
    GjRaceLog *race_log;           /* racecheck (GJ_CPU_RACECHECK), else NULL */
} Job;

enum { WAIT_NONE, WAIT_BARRIER, WAIT_WARP, WAIT_GRID, WAIT_YIELD };

/* The block scheduler's state while a block's fibers run; blk->sched.
 *
 * Two kinds of wait: at the block's barrier, and at a warp operation. A lane
 * of warp w (threads 32w..32w+31 in linear order, tx fastest, which is also
 * the order of w->fibers) stores its operands in its Fiber and switches out;
 * run_fibers() releases it, results written back into the Fiber, once every
 * lane its mask names has arrived at a warp operation or exited. */
struct Sched {
    const Job *job;
    GjBlockCtx *blk;
    Worker *worker;            /* a block fiber: runs blocks of this job */
    Job *run;
    Fiber *cur;                /* the fiber running now */
    Fiber *fibers;             /* the block's threads (a slice of the worker's fibers) */
    uint32_t nwait, ndone;     /* fibers at the barrier; finished */
    uint32_t ngrid;            /* fibers at the grid barrier (cooperative launches) */
    uint32_t nyield;           /* fibers that yielded (GJ_WARP_YIELD) this round */
    uint32_t yield_rounds;     /* rounds in a row in which every running fiber yielded */
    /* syncthreads_count/and/or: true predicates so far at this barrier, and
     * (npred, narrived) of the barrier last released, which the released
     * threads read before any can arrive at the next one */
    uint32_t npred, last_npred, last_narrived;
    int use_uc;
    void *main_sp;             /* the scheduler's own context */
    ucontext_t *main_uc;
    const void *main_stack;    /* the worker's stack, for ASan */
    size_t main_stack_size;
    void *asan_fake;
    void *tsan_main;
};

/* The worker pool (runtime/cpu.c). launch_mu is held for a whole launch (and
 * across fork); mu guards the hand-off of a job to the pool threads. */
typedef struct CpuPool {
    pthread_mutex_t launch_mu;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    /* under launch_mu */
    int started, atfork_set;
    int nhelpers;              /* pool threads besides the launching thread */
    Worker caller;             /* the launching thread's scratch */
    Worker *helpers;
    size_t page, stack_size;
    size_t block_stack;        /* stack of a block fiber; 0: block functions run
                                * on the worker's stack (ucontext fallback) */
    int use_uc;                /* fibers through ucontext, not the asm switch */
    int sig_set;               /* the fault handler has been installed */
    /* under mu */
    Job *job;
    uint64_t gen;              /* bumped per published job */
    int nactive;               /* helpers working on the current job */
} CpuPool;

extern CpuPool cpu_pool;

/* runtime/cpu.c */

/* What every fiber runs: its thread of the kernel (or, on a block fiber,
 * blocks of a kernel without barriers); then back to the scheduler. */
void cpu_fiber_main(Fiber *f) __attribute__((noreturn));

/* runtime/cpu_fiber.c */

enum { JUMP_FAULT = 1, JUMP_TRAP = 2, JUMP_NOMEM = 3, JUMP_DEADLOCK = 4, JUMP_STOP = 5 };

/* The worker whose run_job() this thread is in: initial-exec, so that the
 * signal handler reads it without a call that could allocate. */
extern __thread Worker *cpu_tls_worker __attribute__((tls_model("initial-exec")));
/* Whether this thread has been given its alternate signal stack. */
extern __thread int cpu_tls_alt_done __attribute__((tls_model("initial-exec")));

#if HAVE_ASM_SWITCH
uint64_t cpu_fp_control(void);
#endif
int cpu_shadow_stack_active(void);
void cpu_ctx_init(Sched *s, Fiber *f, uint64_t fpctl);
void cpu_to_fiber(Sched *s, Fiber *f);
void cpu_to_sched(Sched *s, Fiber *f);
void cpu_abandon_fiber(Fiber *f);
void cpu_abandon(Worker *w, uint32_t n);
void cpu_trap_index(GjBlockCtx *blk) __attribute__((noreturn));
void cpu_trap_nomem(void) __attribute__((noreturn));
void cpu_trap_deadlock(void) __attribute__((noreturn));
void cpu_fault_handler_install(void);
char *cpu_altstack_setup(void);
void cpu_caller_altstack(void);
void cpu_worker_free(Worker *w);
int cpu_worker_reserve(Worker *w, const Job *j);

/* runtime/cpu_warp.c */

Fiber *cpu_warp_of(Fiber *fibers, uint32_t nthreads, uint32_t i, uint32_t *n);
uint64_t cpu_fiber_warp(GjBlockCtx *blk, int32_t op, uint32_t mask, uint64_t value, int32_t arg);
int cpu_release_warp(Fiber *lanes, uint32_t n);

/* runtime/cpu_race.c */

void cpu_race_log_begin(GjRaceLog *log);
void cpu_race_log_end(GjRaceLog *log);
int cpu_race_block(CpuRace **r, GjBlockCtx *blk, GjRaceLog *log);
void cpu_race_barrier(CpuRace *r);
void cpu_race_warp_sync(CpuRace *r, uint32_t warp);
void cpu_race_free(CpuRace *r);
void cpu_race_access(GjBlockCtx *blk, const void *addr, uint64_t size, int32_t site_flags, int32_t tx, int32_t ty,
                     int32_t tz);
void cpu_race_noop(GjBlockCtx *blk, const void *addr, uint64_t size, int32_t site_flags, int32_t tx, int32_t ty,
                   int32_t tz);

#endif
