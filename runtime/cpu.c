/* cpu.c: the CPU executor. Runs a kernel's grid on the host's cores with
 * CUDA's semantics, through the ABI of cpu_abi.h (code emitted by
 * src/target_host.c).
 *
 * Blocks are spread over a persistent pool of worker threads, the launching
 * thread joining in; workers take block indices from an atomic counter. A
 * block runs either as one call of the compiled block function (kernels
 * without barriers: the compiled code loops over the threads itself) or, for
 * kernels that call syncthreads() or warp-level operations, as one fiber per
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
 * Stack overflow. Every stack a kernel runs on has a PROT_NONE guard page
 * below it, and the compiler makes frames over a page probe each page in turn
 * (src/target_host.c), so an overflow faults on the guard page. Fibers run
 * the threads of barrier kernels; block functions (kernels without barriers)
 * run on a "block fiber" of each worker, one switch there and back per
 * launch, whose stack is the larger of GPUJIT_CPU_STACK and 8 MiB. (Under the
 * ucontext fallback block functions run on the worker's 8 MiB thread stack
 * instead, where an overflow still kills the process.) A SIGSEGV/SIGBUS
 * handler, installed by the first launch, runs on an alternate signal stack
 * (each pool thread gets one; a launching thread gets one at its first launch,
 * kept until it exits, unless it has its own), recognises a fault on the guard
 * page of the fiber its thread is running and siglongjmps back to run_job():
 * the block's fibers are abandoned as after a deadlock (their stacks are
 * reused) and the launch fails with msg_overflow_*. blk->trap (an index out
 * of bounds in checked code) goes back the same way, failing with MSG_INDEX. Any other fault goes to
 * the handler installed before ours (called directly: Python's faulthandler,
 * ASan), else to the default action. A handler installed after the first
 * launch (faulthandler.enable() then) takes precedence over ours: an overflow
 * then crashes as it did before. A guard-page fault inside a libc call that
 * holds a lock (malloc, stdio) would leave that lock held.
 *
 * Requires: x86-64 for the hand-written context switch (elsewhere, or when
 * CET shadow stacks are on, glibc's ucontext takes over); POSIX threads and
 * mmap. Never exits or aborts; every failure becomes -1 and a static message. */
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
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

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

#ifdef GJ_ASAN
#define DEFAULT_STACK (256 * 1024) /* ASan's redzones fatten every frame */
#else
#define DEFAULT_STACK (64 * 1024)
#endif
#define MIN_STACK (16 * 1024)
#define MAX_THREADS 1024          /* cap on GPUJIT_CPU_THREADS */
#define MAX_FIBERS (1u << 16)     /* CUDA allows 1024 threads a block */
#define WORKER_STACK (8u << 20)   /* least stack of a block function */
#define ALT_STACK (256u * 1024)   /* alternate signal stack of a worker */

static const char MSG_DEADLOCK[] =
    "syncthreads(): not every thread of a block reached the same barrier "
    "(a barrier inside a branch that some threads skipped?)";
static const char MSG_WARP_DEADLOCK[] =
    "warp-level operation: a lane named in the mask never reached it "
    "(it waits at syncthreads(), or at a different warp operation)";
static const char MSG_NOMEM[] =
    "CPU launch: out of memory (shared-memory buffer or fiber stacks)";
static const char MSG_NOFN[] =
    "internal error: CPU launch without the host function this kernel needs";
static const char MSG_INDEX[] = "an array index was out of bounds";
static const char MSG_DIMS[] = "CPU launch: grid or block dimensions out of range";
static const char MSG_BIGBLOCK[] =
    "CPU launch: a block this large cannot run as fibers (at most 65536 threads)";
/* Filled in by pool_start with the stack sizes in force. */
static char msg_overflow_fiber[192], msg_overflow_block[256];

typedef struct Sched Sched;

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
    _Atomic uint64_t next;         /* first block index nobody has taken */
    _Atomic(const char *) err;     /* first error; set once */
} Job;

enum { WAIT_NONE, WAIT_BARRIER, WAIT_WARP };

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
    uint32_t nwait, ndone;     /* fibers at the barrier; finished */
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

/* The worker pool. launch_mu is held for a whole launch (and across fork);
 * mu guards the hand-off of a job to the pool threads. */
static struct {
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
} pool = {
    .launch_mu = PTHREAD_MUTEX_INITIALIZER,
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .work_cv = PTHREAD_COND_INITIALIZER,
    .done_cv = PTHREAD_COND_INITIALIZER,
};

/* ---- context switch ---------------------------------------------------- */

#if HAVE_ASM_SWITCH
/* gj_cpu_switch(save, to): push the callee-saved registers of the SysV ABI
 * and the FP control state (MXCSR, x87 control word: callee-saved too) on
 * the current stack, store the stack pointer in *save, load `to` and pop the
 * same frame there. Unlike swapcontext it makes no sigprocmask syscall.
 * gj_cpu_fiber_start is the first "return address" of a fresh fiber: it calls
 * r13(r12), i.e. fiber_main(fiber), which never returns. */
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".globl gj_cpu_switch\n"
    ".hidden gj_cpu_switch\n"
    ".type gj_cpu_switch, @function\n"
    "gj_cpu_switch:\n"
    "    pushq %rbp\n"
    "    pushq %rbx\n"
    "    pushq %r12\n"
    "    pushq %r13\n"
    "    pushq %r14\n"
    "    pushq %r15\n"
    "    subq $8, %rsp\n"
    "    stmxcsr (%rsp)\n"
    "    fnstcw 4(%rsp)\n"
    "    movq %rsp, (%rdi)\n"
    "    movq %rsi, %rsp\n"
    "    ldmxcsr (%rsp)\n"
    "    fldcw 4(%rsp)\n"
    "    addq $8, %rsp\n"
    "    popq %r15\n"
    "    popq %r14\n"
    "    popq %r13\n"
    "    popq %r12\n"
    "    popq %rbx\n"
    "    popq %rbp\n"
    "    ret\n"
    ".size gj_cpu_switch, .-gj_cpu_switch\n"
    ".p2align 4\n"
    ".globl gj_cpu_fiber_start\n"
    ".hidden gj_cpu_fiber_start\n"
    ".type gj_cpu_fiber_start, @function\n"
    "gj_cpu_fiber_start:\n"
    "    movq %r12, %rdi\n"
    "    andq $-16, %rsp\n"
    "    callq *%r13\n"
    "    ud2\n"
    ".size gj_cpu_fiber_start, .-gj_cpu_fiber_start\n");

void gj_cpu_switch(void **save, void *to);
void gj_cpu_fiber_start(void);

/* The scheduler's FP control state, inherited by fresh fibers. */
static uint64_t fp_control(void)
{
    uint32_t mxcsr;
    uint16_t cw;
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(cw));
    return mxcsr | (uint64_t)cw << 32;
}

/* A CET shadow stack would catch the asm switch's `ret` onto another stack
 * as an attack; glibc's swapcontext knows how to switch shadow stacks. rdsspq
 * is a NOP (leaving rax 0) unless shadow stacks are on. */
static int shadow_stack_active(void)
{
    uint64_t ssp = 0;
#ifdef GJ_VALGRIND
    if (RUNNING_ON_VALGRIND)
        return 0;
#endif
    __asm__ volatile(".byte 0xf3, 0x48, 0x0f, 0x1e, 0xc8" /* rdsspq %rax */ : "+a"(ssp));
    return ssp != 0;
}
#else
static int shadow_stack_active(void) { return 1; }
#endif

static void fiber_main(Fiber *f) __attribute__((noreturn));
static void run_blocks(Worker *w, Job *j);

static void uc_entry(unsigned lo, unsigned hi)
{
    /* makecontext passes only ints: the fiber's address comes in halves. */
    fiber_main((Fiber *)(uintptr_t)((uint64_t)hi << 32 | lo));
}

/* Lays out a fresh context on f's stack that starts fiber_main(f). */
static void ctx_init(Sched *s, Fiber *f, uint64_t fpctl)
{
    if (s->use_uc) {
        /* getcontext fills in the parts makecontext does not (signal mask, FP state). */
        getcontext(f->uc);
        f->uc->uc_stack.ss_sp = f->stack;
        f->uc->uc_stack.ss_size = f->size;
        f->uc->uc_link = NULL;
        uint64_t p = (uintptr_t)f;
        makecontext(f->uc, (void (*)(void))uc_entry, 2, (unsigned)p, (unsigned)(p >> 32));
        return;
    }
#if HAVE_ASM_SWITCH
    /* The frame gj_cpu_switch pops: FP control, r15, r14, r13, r12, rbx, rbp,
     * return address; the top of the stack is page-aligned. */
    uint64_t *sp = (uint64_t *)(void *)(f->stack + f->size);
    *--sp = (uintptr_t)gj_cpu_fiber_start;
    *--sp = 0;                     /* rbp: ends frame-pointer backtraces */
    *--sp = 0;                     /* rbx */
    *--sp = (uintptr_t)f;          /* r12 */
    *--sp = (uintptr_t)fiber_main; /* r13 */
    *--sp = 0;                     /* r14 */
    *--sp = 0;                     /* r15 */
    *--sp = fpctl;
    f->sp = sp;
#else
    (void)fpctl;
#endif
}

/* Scheduler -> fiber f; returns when f waits at a barrier or has finished. */
static void to_fiber(Sched *s, Fiber *f)
{
    s->cur = f;
#ifdef GJ_ASAN
    __sanitizer_start_switch_fiber(&s->asan_fake, f->stack, f->size);
#endif
#ifdef GJ_TSAN
    __tsan_switch_to_fiber(f->tsan, 0);
#endif
    if (s->use_uc)
        swapcontext(s->main_uc, f->uc);
#if HAVE_ASM_SWITCH
    else
        gj_cpu_switch(&s->main_sp, f->sp);
#endif
#ifdef GJ_ASAN
    __sanitizer_finish_switch_fiber(s->asan_fake, NULL, NULL);
#endif
    s->cur = NULL;
}

/* Fiber f -> scheduler; returns when the scheduler resumes f (never, if
 * f has finished). */
static void to_sched(Sched *s, Fiber *f)
{
#ifdef GJ_ASAN
    /* A finished fiber passes NULL: ASan drops its fake stack. */
    __sanitizer_start_switch_fiber(f->done ? NULL : &f->asan_fake, s->main_stack,
                                   s->main_stack_size);
#endif
#ifdef GJ_TSAN
    __tsan_switch_to_fiber(s->tsan_main, 0);
#endif
    if (s->use_uc)
        swapcontext(f->uc, s->main_uc);
#if HAVE_ASM_SWITCH
    else
        gj_cpu_switch(&f->sp, s->main_sp);
#endif
#ifdef GJ_ASAN
    __sanitizer_finish_switch_fiber(f->asan_fake, NULL, NULL);
#endif
}

static void fiber_main(Fiber *f)
{
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
    to_sched(s, f);
    __builtin_unreachable();
}

/* ---- fibers of a block -------------------------------------------------- */

/* blk->syncthreads for kernels run as fibers. */
static void fiber_barrier(GjBlockCtx *blk)
{
    Sched *s = blk->sched;
    s->nwait++;
    s->cur->wait = WAIT_BARRIER;
    to_sched(s, s->cur);
}

/* blk->sync_reduce for fibers. */
static int32_t fiber_sync_reduce(GjBlockCtx *blk, int32_t op, int32_t pred)
{
    Sched *s = blk->sched;
    s->npred += pred != 0;
    fiber_barrier(blk);
    switch (op) {
    case GJ_SYNC_COUNT: return (int32_t)s->last_npred;
    case GJ_SYNC_AND: return s->last_npred == s->last_narrived;
    default: return s->last_npred != 0;
    }
}

/* The lanes of the warp holding fiber i: *n fibers from the one returned. */
static Fiber *warp_of(Worker *w, uint32_t nthreads, uint32_t i, uint32_t *n)
{
    uint32_t first = i & ~31u;
    *n = nthreads - first < 32 ? nthreads - first : 32;
    return &w->fibers[first];
}

/* blk->warp for fibers. activemask switches out too: lanes run one after
 * another here, so it can only be answered once the other lanes have run as
 * far as they can (release_warp). */
static uint64_t fiber_warp(GjBlockCtx *blk, int32_t op, uint32_t mask, uint64_t value, int32_t arg)
{
    Sched *s = blk->sched;
    Fiber *f = s->cur;
    f->op = op, f->mask = mask, f->value = value, f->arg = arg;
    f->wait = WAIT_WARP;
    to_sched(s, f);
    return f->result;
}

/* Computes the results of a warp operation for the lanes in `go`, reading
 * the operands of the lanes in `here` (those waiting at a warp operation). */
static void warp_results(Fiber *lanes, uint32_t go, uint32_t here)
{
    for (uint32_t l = 0; l < 32; l++) {
        if (!(go >> l & 1))
            continue;
        Fiber *f = &lanes[l];
        uint32_t in = f->mask & here, b = (uint32_t)f->arg & 31, src = l;
        int ok = 1;
        uint64_t r = 0;
        switch (f->op) {
        case GJ_WARP_SHFL_IDX: src = b; break;
        case GJ_WARP_SHFL_UP: ok = l >= b, src = l - b; break;
        case GJ_WARP_SHFL_DOWN: ok = l + b < 32, src = l + b; break;
        case GJ_WARP_SHFL_BFLY: src = l ^ b; break;
        default: break;
        }
        switch (f->op) {
        case GJ_WARP_SHFL_IDX: case GJ_WARP_SHFL_UP: case GJ_WARP_SHFL_DOWN: case GJ_WARP_SHFL_BFLY:
            /* out of range, or a source lane that is not here (undefined in
             * CUDA): the lane's own value, as PTX's clamp gives */
            r = ok && (here >> src & 1) ? lanes[src].value : f->value;
            break;
        case GJ_WARP_ALL: case GJ_WARP_ANY: case GJ_WARP_EQ: case GJ_WARP_BALLOT: {
            uint32_t ballot = 0;
            for (uint32_t j = 0; j < 32; j++)
                if (in >> j & 1 && lanes[j].value)
                    ballot |= 1u << j;
            r = f->op == GJ_WARP_BALLOT ? ballot
                : f->op == GJ_WARP_ALL  ? ballot == in
                : f->op == GJ_WARP_ANY  ? ballot != 0
                                        : ballot == 0 || ballot == in;
            break;
        }
        case GJ_WARP_MATCH_ANY: case GJ_WARP_MATCH_ALL: {
            uint32_t same = 0;
            for (uint32_t j = 0; j < 32; j++)
                if (in >> j & 1 && lanes[j].value == f->value)
                    same |= 1u << j;
            r = f->op == GJ_WARP_MATCH_ANY ? same : same == in ? in : 0;
            break;
        }
        default: break; /* syncwarp */
        }
        f->result = r;
    }
}

/* Compares where two lanes waiting at activemask() are in the program: the
 * compiler passes the lane's position (value: an int64 array, arg: its
 * length; src/lower.c, lane_position), which orders as the lanes' progress
 * does. */
static int position_cmp(const Fiber *a, const Fiber *b)
{
    const int64_t *pa = (const int64_t *)(uintptr_t)a->value, *pb = (const int64_t *)(uintptr_t)b->value;
    int32_t na = pa ? a->arg : 0, nb = pb ? b->arg : 0;
    for (int32_t i = 0; i < na && i < nb; i++)
        if (pa[i] != pb[i])
            return pa[i] < pb[i] ? -1 : 1;
    return (na > nb) - (na < nb);
}

/* Releases, among the lanes of one warp (n of them) that wait at a warp
 * operation, either those whose mask names only lanes that wait at one too
 * or have exited (lanes past the end of a partial warp count as exited), or,
 * when there are none, the lanes at activemask() that are furthest behind,
 * all at one point: that point's active mask. Every lane has run as far as
 * it can, so a lane that has not reached that point yet never will on this
 * pass through it. activemask() is no rendezvous for the other operations:
 * a lane there does not count as arrived at them. Returns whether any lane
 * was released. */
static int release_warp(Fiber *lanes, uint32_t n)
{
    uint32_t here = 0, am = 0, gone = n < 32 ? ~0u << n : 0;
    for (uint32_t l = 0; l < n; l++) {
        if (lanes[l].done)
            gone |= 1u << l;
        else if (lanes[l].wait == WAIT_WARP)
            *(lanes[l].op == GJ_WARP_ACTIVEMASK ? &am : &here) |= 1u << l;
    }
    uint32_t go = 0;
    for (uint32_t l = 0; l < n; l++)
        if (here >> l & 1 && (lanes[l].mask & ~(here | gone)) == 0)
            go |= 1u << l;
    if (!go && am) {
        const Fiber *first = NULL;
        for (uint32_t l = 0; l < n; l++)
            if (am >> l & 1 && (!first || position_cmp(&lanes[l], first) < 0))
                first = &lanes[l];
        for (uint32_t l = 0; l < n; l++)
            if (am >> l & 1 && position_cmp(&lanes[l], first) == 0)
                go |= 1u << l;
        for (uint32_t l = 0; l < n; l++)
            if (go >> l & 1) {
                lanes[l].result = go;
                lanes[l].wait = WAIT_NONE;
            }
        return 1;
    }
    if (!go)
        return 0;
    warp_results(lanes, go, here);
    for (uint32_t l = 0; l < n; l++)
        if (go >> l & 1)
            lanes[l].wait = WAIT_NONE;
    return 1;
}

/* blk->syncthreads, sync_reduce and warp for block functions: the compiler
 * only emits those for kernels without barriers or warp operations, and
 * these are the one thing that cannot hang. */
static void barrier_noop(GjBlockCtx *blk) { (void)blk; }
static int32_t sync_reduce_noop(GjBlockCtx *blk, int32_t op, int32_t pred)
{
    (void)blk, (void)op;
    return pred != 0;
}
static uint64_t warp_noop(GjBlockCtx *blk, int32_t op, uint32_t mask, uint64_t value, int32_t arg)
{
    (void)blk, (void)op, (void)mask, (void)arg;
    return value;
}

/* Fibers stopped at a barrier of a block that cannot finish (or cut short
 * by a stack overflow) are never resumed; their stacks are reused as they
 * are, but the sanitizers must forget the frames left on them. */
static void abandon_fiber(Fiber *f)
{
#ifdef GJ_ASAN
    __asan_unpoison_memory_region(f->stack, f->size);
#endif
#ifdef GJ_TSAN
    __tsan_destroy_fiber(f->tsan);
    f->tsan = __tsan_create_fiber(0);
#endif
    (void)f;
}

static void abandon(Worker *w, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!w->fibers[i].done)
            abandon_fiber(&w->fibers[i]);
}

/* Runs one block of a kernel with barriers: all its threads as fibers,
 * released from a barrier together once every live one has reached it. */
static const char *run_fibers(Worker *w, const Job *j, GjBlockCtx *blk)
{
    Sched s = {.job = j, .blk = blk, .use_uc = pool.use_uc};
    ucontext_t main_uc;
    s.main_uc = &main_uc;
#ifdef GJ_TSAN
    s.tsan_main = __tsan_get_current_fiber();
#endif
    blk->sched = &s;
    w->active = &s;
    blk->syncthreads = fiber_barrier;
    blk->sync_reduce = fiber_sync_reduce;
    blk->warp = fiber_warp;

    uint32_t n = j->nthreads;
    uint64_t fpctl = 0;
#if HAVE_ASM_SWITCH
    fpctl = fp_control();
#endif
    int32_t tx = 0, ty = 0, tz = 0;
    for (uint32_t i = 0; i < n; i++) {
        Fiber *f = &w->fibers[i];
        f->sched = &s;
        f->tx = tx, f->ty = ty, f->tz = tz;
        f->done = 0;
        f->wait = WAIT_NONE;
        ctx_init(&s, f, fpctl);
        if (++tx == blk->ntid[0]) {
            tx = 0;
            if (++ty == blk->ntid[1])
                ty = 0, tz++;
        }
    }
    for (;;) {
        /* Run each warp until every lane has finished or waits at the barrier
         * or at a warp operation that cannot be released yet. */
        for (uint32_t first = 0; first < n; first += 32) {
            uint32_t nl;
            Fiber *lanes = warp_of(w, n, first, &nl);
            do {
                for (uint32_t l = 0; l < nl; l++)
                    if (!lanes[l].done && lanes[l].wait == WAIT_NONE)
                        to_fiber(&s, &lanes[l]);
            } while (release_warp(lanes, nl));
        }
        if (s.ndone == n) {
            w->active = NULL;
            return NULL; /* every thread returned */
        }
        if (s.nwait + s.ndone < n) {
            /* some wait at a warp operation that nobody else will reach */
            w->active = NULL;
            abandon(w, n);
            return MSG_WARP_DEADLOCK;
        }
        if (s.ndone > 0) {
            /* Finished threads will never arrive: the others would wait forever. */
            w->active = NULL;
            abandon(w, n);
            return MSG_DEADLOCK;
        }
        /* release the barrier */
        s.last_npred = s.npred, s.last_narrived = s.nwait;
        s.npred = s.nwait = 0;
        for (uint32_t i = 0; i < n; i++)
            w->fibers[i].wait = WAIT_NONE;
    }
}

/* Runs blocks of a kernel without barriers on w's block fiber (a guarded
 * stack, so that an overflow is caught): run_blocks() there, one switch to
 * it and back per job. */
static void run_block_fiber(Worker *w, Job *j)
{
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
    fpctl = fp_control();
#endif
    ctx_init(&s, f, fpctl);
    w->active = &s;
    to_fiber(&s, f);
    w->active = NULL;
}

/* ---- leaving a block early ------------------------------------------------ */

/* The worker whose run_job() this thread is in: initial-exec, so that the
 * signal handler reads it without a call that could allocate. */
static __thread Worker *tls_worker __attribute__((tls_model("initial-exec")));
static struct sigaction prev_segv, prev_bus; /* what on_fault chains to */

enum { JUMP_FAULT = 1, JUMP_TRAP = 2 };

/* Back to run_job() of w, from the fiber s is running (if any): its block,
 * and the launch, are given up. */
static void jump_back(Worker *w, Sched *s, int why) __attribute__((noreturn));
static void jump_back(Worker *w, Sched *s, int why)
{
    Fiber *f = s ? s->cur : NULL;
    w->jumped_off_fiber = f != NULL;
    if (f) {
#ifdef GJ_ASAN
        __sanitizer_start_switch_fiber(NULL, s->main_stack, s->main_stack_size);
#endif
#ifdef GJ_TSAN
        __tsan_switch_to_fiber(s->tsan_main, 0);
#endif
    }
    siglongjmp(w->fault_jb, why);
}

/* blk->trap: an out-of-bounds index in the running thread. */
static void trap_index(GjBlockCtx *blk) __attribute__((noreturn));
static void trap_index(GjBlockCtx *blk)
{
    (void)blk;
    Worker *w = tls_worker;
    jump_back(w, w->active, JUMP_TRAP);
}

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
    Worker *w = tls_worker;
    Sched *s = w ? w->active : NULL;
    Fiber *f = s ? s->cur : NULL;
    if (f && si && si->si_code > 0) {
        uintptr_t a = (uintptr_t)si->si_addr, lo = (uintptr_t)f->stack;
        if (a < lo && lo - a <= pool.page) {
            /* The running fiber's guard page: back to run_job(), which
             * restores this mask; leaving the alternate stack frees it. */
            w->fault_mask = ((ucontext_t *)ctx)->uc_sigmask;
            jump_back(w, s, JUMP_FAULT);
        }
    }
    /* Not ours: the handler before ours, else the default action. */
    struct sigaction *prev = sig == SIGBUS ? &prev_bus : &prev_segv;
    if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
        if (prev->sa_flags & SA_RESETHAND) {
            struct sigaction dfl;
            memset(&dfl, 0, sizeof dfl);
            dfl.sa_handler = SIG_DFL;
            sigaction(sig, &dfl, NULL);
        }
        if (prev->sa_flags & SA_SIGINFO)
            prev->sa_sigaction(sig, si, ctx);
        else
            prev->sa_handler(sig);
        return; /* a fault comes again, unless the handler dealt with it */
    }
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
    if (!si || si->si_code <= 0)
        raise(sig); /* sent, not a fault: it would not come again by itself */
}

/* Called with launch_mu held by the first launch of the process (a forked
 * child inherits the handler): installs on_fault for SIGSEGV and SIGBUS,
 * chaining to the handlers there now. */
static void fault_handler_install(void)
{
    static const int sigs[2] = {SIGSEGV, SIGBUS};
    for (int i = 0; i < 2; i++) {
        struct sigaction cur, sa;
        if (sigaction(sigs[i], NULL, &cur) != 0)
            continue;
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fault)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        *(sigs[i] == SIGBUS ? &prev_bus : &prev_segv) = cur;
        sigaction(sigs[i], &sa, NULL);
    }
    pool.sig_set = 1;
}

/* A mapping of n usable bytes above a PROT_NONE guard page; NULL if none. */
static char *guarded_map(size_t n)
{
    char *m = mmap(NULL, pool.page + n, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    if (mprotect(m, pool.page, PROT_NONE) != 0) {
        munmap(m, pool.page + n);
        return NULL;
    }
    return m;
}

/* Gives the calling thread an alternate signal stack, for on_fault to run
 * on when the stack that overflowed is full, unless it has one; returns the
 * mapping, or NULL. */
static char *altstack_setup(void)
{
    stack_t old;
    if (sigaltstack(NULL, &old) != 0 || !(old.ss_flags & SS_DISABLE))
        return NULL; /* e.g. ASan and faulthandler give threads one */
    char *m = guarded_map(ALT_STACK);
    if (!m)
        return NULL;
    stack_t ss = {.ss_sp = m + pool.page, .ss_size = ALT_STACK, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        munmap(m, pool.page + ALT_STACK);
        return NULL;
    }
    return m;
}

/* Launching threads are the application's: the one they get from their
 * first launch stays until the thread exits, when this takes it back. */
static __thread int tls_alt_done __attribute__((tls_model("initial-exec")));
static pthread_key_t alt_key;
static pthread_once_t alt_once = PTHREAD_ONCE_INIT;
static int alt_key_ok;

static void caller_altstack_free(void *m)
{
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == (char *)m + pool.page &&
        !(cur.ss_flags & SS_DISABLE)) {
        stack_t off = {.ss_flags = SS_DISABLE};
        if (sigaltstack(&off, NULL) != 0)
            return; /* still in use: leave it */
    }
    munmap(m, pool.page + ALT_STACK);
}

static void alt_key_init(void) { alt_key_ok = pthread_key_create(&alt_key, caller_altstack_free) == 0; }

static void caller_altstack(void)
{
    tls_alt_done = 1;
    pthread_once(&alt_once, alt_key_init);
    if (!alt_key_ok)
        return; /* could not be freed at thread exit: go without */
    char *m = altstack_setup();
    if (m && pthread_setspecific(alt_key, m) != 0) {
        stack_t off = {.ss_flags = SS_DISABLE};
        sigaltstack(&off, NULL);
        munmap(m, pool.page + ALT_STACK);
    }
}

/* ---- per-worker scratch ------------------------------------------------- */

static void fibers_free(Worker *w)
{
    for (uint32_t i = 0; i < w->nfibers; i++) {
#ifdef GJ_VALGRIND
        VALGRIND_STACK_DEREGISTER(w->fibers[i].vg_id);
#endif
#ifdef GJ_TSAN
        __tsan_destroy_fiber(w->fibers[i].tsan);
#endif
    }
    if (w->stacks)
        munmap(w->stacks, w->stacks_len);
    free(w->fibers);
    free(w->ucs);
    w->stacks = NULL;
    w->stacks_len = 0;
    w->fibers = NULL;
    w->ucs = NULL;
    w->nfibers = 0;
}

/* Makes room for n fibers. All stacks share one mapping, each above a
 * PROT_NONE guard page so that an overflow faults instead of silently
 * corrupting a neighbour. */
static int fibers_grow(Worker *w, uint32_t n)
{
    size_t slot = pool.page + pool.stack_size;
    if (n > SIZE_MAX / slot)
        return -1;
    size_t len = n * slot;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    Fiber *fs = calloc(n, sizeof *fs);
    ucontext_t *ucs = pool.use_uc ? calloc(n, sizeof *ucs) : NULL;
    if (!fs || (pool.use_uc && !ucs)) {
        free(fs);
        free(ucs);
        munmap(m, len);
        return -1;
    }
    fibers_free(w);
    for (uint32_t i = 0; i < n; i++) {
        char *guard = m + i * slot;
        /* Fails only when the process is out of mappings (vm.max_map_count):
         * the stack then works unguarded. */
        (void)mprotect(guard, pool.page, PROT_NONE);
        fs[i].stack = guard + pool.page;
        fs[i].size = pool.stack_size;
        fs[i].uc = ucs ? &ucs[i] : NULL;
#ifdef GJ_VALGRIND
        fs[i].vg_id = VALGRIND_STACK_REGISTER(fs[i].stack, fs[i].stack + pool.stack_size);
#endif
#ifdef GJ_TSAN
        fs[i].tsan = __tsan_create_fiber(0);
#endif
    }
    w->stacks = m;
    w->stacks_len = len;
    w->fibers = fs;
    w->ucs = ucs;
    w->nfibers = n;
    return 0;
}

/* Maps w's block fiber. Without one, block functions run on w's own stack. */
static void bstack_alloc(Worker *w)
{
    char *m = guarded_map(pool.block_stack);
    if (!m)
        return;
    Fiber *f = &w->bfiber;
    memset(f, 0, sizeof *f);
    f->stack = m + pool.page;
    f->size = pool.block_stack;
#ifdef GJ_VALGRIND
    f->vg_id = VALGRIND_STACK_REGISTER(f->stack, f->stack + f->size);
#endif
#ifdef GJ_TSAN
    f->tsan = __tsan_create_fiber(0);
#endif
    w->bstack = m;
    w->bstack_len = pool.page + pool.block_stack;
}

static void worker_free(Worker *w)
{
    fibers_free(w);
    if (w->bstack) {
#ifdef GJ_VALGRIND
        VALGRIND_STACK_DEREGISTER(w->bfiber.vg_id);
#endif
#ifdef GJ_TSAN
        __tsan_destroy_fiber(w->bfiber.tsan);
#endif
        munmap(w->bstack, w->bstack_len);
        w->bstack = NULL;
    }
    if (w->altstack) /* only in a forked child, whose pool threads are gone */
        munmap(w->altstack, w->altstack_len);
    w->altstack = NULL;
    free(w->shared);
    w->shared = NULL;
    w->shared_cap = 0;
}

/* Grows w's shared-memory buffer and fibers to what job j needs; both are
 * reused by later blocks and launches. CUDA does not clear shared memory
 * between blocks and neither do we. */
static int worker_reserve(Worker *w, const Job *j)
{
    if (!w->shared || j->shared_bytes > w->shared_cap) {
        if (j->shared_bytes > SIZE_MAX / 2)
            return -1;
        size_t cap = (j->shared_bytes + 63) & ~(size_t)63;
        if (cap < 64)
            cap = 64;
        char *p = aligned_alloc(64, cap);
        if (!p)
            return -1;
        free(w->shared);
        w->shared = p;
        w->shared_cap = cap;
    }
    if (j->uses_barrier && j->nthreads > w->nfibers)
        return fibers_grow(w, (j->nthreads + 31) & ~31u);
    if (!j->uses_barrier && pool.block_stack && !w->bstack)
        bstack_alloc(w);
    return 0;
}

/* ---- blocks and jobs ---------------------------------------------------- */

static const char *run_block(Worker *w, const Job *j, uint64_t b)
{
    GjBlockCtx blk;
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
    blk.shared = w->shared;
    blk.shared_bytes = j->shared_bytes;
    blk.trap = trap_index;
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

static void set_error(Job *j, const char *msg)
{
    const char *none = NULL;
    atomic_compare_exchange_strong(&j->err, &none, msg);
}

/* Runs blocks of j until none is left or one has failed. */
static void run_blocks(Worker *w, Job *j)
{
    for (;;) {
        uint64_t b = atomic_fetch_add_explicit(&j->next, j->chunk, memory_order_relaxed);
        if (b >= j->nblocks)
            return;
        uint64_t end = b + j->chunk < j->nblocks ? b + j->chunk : j->nblocks;
        for (; b < end; b++) {
            if (atomic_load_explicit(&j->err, memory_order_relaxed))
                return;
            const char *msg = run_block(w, j, b);
            if (msg) {
                set_error(j, msg);
                return;
            }
        }
    }
}

static void run_job(Worker *w, Job *j)
{
    if (atomic_load_explicit(&j->err, memory_order_relaxed))
        return;
    if (worker_reserve(w, j) != 0) {
        set_error(j, MSG_NOMEM);
        return;
    }
    w->active = NULL;
    tls_worker = w;
    int why = sigsetjmp(w->fault_jb, 0);
    if (why) {
        /* From on_fault (a fiber of this worker ran into its guard page) or
         * from blk->trap (a thread indexed out of bounds). The block is
         * abandoned like a deadlocked one; the stacks stay. */
        if (why == JUMP_FAULT)
            pthread_sigmask(SIG_SETMASK, &w->fault_mask, NULL);
#ifdef GJ_ASAN
        if (w->jumped_off_fiber)
            __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
        w->active = NULL;
        tls_worker = NULL;
        if (j->uses_barrier)
            abandon(w, j->nthreads);
        else if (w->bstack)
            abandon_fiber(&w->bfiber);
        set_error(j, why == JUMP_TRAP ? MSG_INDEX : j->uses_barrier ? msg_overflow_fiber : msg_overflow_block);
        return;
    }
    if (!j->uses_barrier && w->bstack)
        run_block_fiber(w, j);
    else
        run_blocks(w, j);
    tls_worker = NULL;
}

/* ---- the pool ----------------------------------------------------------- */

static void *worker_main(void *arg)
{
    Worker *w = arg;
    uint64_t seen = 0;
    w->altstack = altstack_setup();
    if (w->altstack)
        w->altstack_len = pool.page + ALT_STACK;
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        while (!pool.job || pool.gen == seen)
            pthread_cond_wait(&pool.work_cv, &pool.mu);
        seen = pool.gen;
        Job *j = pool.job;
        pool.nactive++;
        pthread_mutex_unlock(&pool.mu);
        run_job(w, j);
        pthread_mutex_lock(&pool.mu);
        if (--pool.nactive == 0)
            pthread_cond_signal(&pool.done_cv);
    }
    return NULL;
}

/* A positive size from the environment, with an optional K or M suffix;
 * `dflt` when unset or malformed. */
static long env_size(const char *name, long dflt, long lo, long hi)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || v <= 0)
        return dflt;
    if (*end == 'k' || *end == 'K')
        v = v <= hi / 1024 ? v * 1024 : hi, end++;
    else if (*end == 'm' || *end == 'M')
        v = v <= hi / (1024 * 1024) ? v * 1024 * 1024 : hi, end++;
    if (*end)
        return dflt;
    return v < lo ? lo : v > hi ? hi : v;
}

static long cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set); /* honours taskset and container cpusets */
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

/* fork() keeps only the forking thread: the child must not wait for pool
 * threads it no longer has. The prepare handler takes the locks so that no
 * launch is half-way when the child's copy is made. */
static void atfork_prepare(void)
{
    pthread_mutex_lock(&pool.launch_mu);
    pthread_mutex_lock(&pool.mu);
}

static void atfork_parent(void)
{
    pthread_mutex_unlock(&pool.mu);
    pthread_mutex_unlock(&pool.launch_mu);
}

static void atfork_child(void)
{
    for (int i = 0; i < pool.nhelpers; i++)
        worker_free(&pool.helpers[i]);
    free(pool.helpers);
    pool.helpers = NULL;
    pool.nhelpers = 0;
    pool.started = 0; /* the next launch starts a new pool */
    pool.job = NULL;
    pool.nactive = 0;
    pthread_cond_init(&pool.work_cv, NULL);
    pthread_cond_init(&pool.done_cv, NULL);
    pthread_mutex_unlock(&pool.mu);
    pthread_mutex_unlock(&pool.launch_mu);
}

/* Called with launch_mu held, by the first launch. A pool thread that
 * cannot be created only makes the pool smaller. */
static void pool_start(void)
{
    long nthreads = env_size("GPUJIT_CPU_THREADS", cpu_count(), 1, MAX_THREADS);
    long page = sysconf(_SC_PAGESIZE);
    pool.page = page > 0 ? (size_t)page : 4096;
    size_t stack = (size_t)env_size("GPUJIT_CPU_STACK", DEFAULT_STACK, MIN_STACK, 1L << 30);
    pool.stack_size = (stack + pool.page - 1) & ~(pool.page - 1);
    pool.use_uc = !HAVE_ASM_SWITCH || shadow_stack_active();
    pool.block_stack = pool.use_uc ? 0 : pool.stack_size > WORKER_STACK ? pool.stack_size : WORKER_STACK;
    snprintf(msg_overflow_fiber, sizeof msg_overflow_fiber,
             "a thread overflowed its CPU stack (big gpu.local.array or deep recursion?): "
             "raise GPUJIT_CPU_STACK (now %zu KiB)", pool.stack_size / 1024);
    snprintf(msg_overflow_block, sizeof msg_overflow_block,
             "a thread overflowed its CPU stack (big gpu.local.array or deep recursion?): "
             "raise GPUJIT_CPU_STACK (now %zu KiB; kernels without syncthreads() or warp "
             "operations get %zu KiB)", pool.stack_size / 1024, pool.block_stack / 1024);

    pool.nhelpers = 0;
    pool.helpers = nthreads > 1 ? calloc(nthreads - 1, sizeof *pool.helpers) : NULL;
    if (pool.helpers) {
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
            Worker *w = &pool.helpers[pool.nhelpers];
            if (pthread_create(&w->thread, &attr, worker_main, w) != 0)
                break;
            pool.nhelpers++;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
    }
    if (!pool.atfork_set && pthread_atfork(atfork_prepare, atfork_parent, atfork_child) == 0)
        pool.atfork_set = 1; /* inherited by children: register once per process image */
    pool.started = 1;
}

int gj_cpu_launch(GjHostBlockFn block_fn, GjHostThreadFn thread_fn, int uses_barrier,
                  GjDim3 grid, GjDim3 block, size_t shared_bytes, void **params,
                  const char **err)
{
    const char *dummy;
    if (!err)
        err = &dummy;
    *err = NULL;
    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z)
        return 0;
    if (grid.x > INT32_MAX || grid.y > INT32_MAX || grid.z > INT32_MAX ||
        block.x > INT32_MAX || block.y > INT32_MAX || block.z > INT32_MAX) {
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

    Job j = {
        .block_fn = block_fn, .thread_fn = thread_fn, .uses_barrier = uses_barrier,
        .grid = grid, .block = block, .shared_bytes = shared_bytes, .params = params,
        .nblocks = nblocks, .nthreads = (uint32_t)(uses_barrier ? nthreads : 0),
    };
    atomic_init(&j.next, 0);
    atomic_init(&j.err, NULL);

    pthread_mutex_lock(&pool.launch_mu);
    if (!pool.started)
        pool_start();
    /* Blocks are taken a chunk at a time to keep the shared counter cold
     * when blocks are tiny; a chunk stays under a sixteenth of a thread's
     * share so that the threads still finish together. */
    uint64_t share = nblocks / ((uint64_t)(pool.nhelpers + 1) * 16);
    j.chunk = share < 1 ? 1 : share > 64 ? 64 : share;
    uint64_t nchunks = (nblocks + j.chunk - 1) / j.chunk;
    int helpers = nchunks - 1 < (uint64_t)pool.nhelpers ? (int)(nchunks - 1) : pool.nhelpers;
    if (helpers > 0) {
        pthread_mutex_lock(&pool.mu);
        pool.job = &j;
        pool.gen++;
        if (helpers == pool.nhelpers)
            pthread_cond_broadcast(&pool.work_cv);
        else
            for (int i = 0; i < helpers; i++)
                pthread_cond_signal(&pool.work_cv);
        pthread_mutex_unlock(&pool.mu);
    }
    if (!pool.sig_set)
        fault_handler_install();
    if (!tls_alt_done)
        caller_altstack();
    run_job(&pool.caller, &j);
    if (helpers > 0) {
        /* Helpers that have not picked the job up yet never will; wait for
         * those that did. */
        pthread_mutex_lock(&pool.mu);
        pool.job = NULL;
        while (pool.nactive > 0)
            pthread_cond_wait(&pool.done_cv, &pool.mu);
        pthread_mutex_unlock(&pool.mu);
    }
    pthread_mutex_unlock(&pool.launch_mu);

    *err = atomic_load(&j.err);
    return *err ? -1 : 0;
}
