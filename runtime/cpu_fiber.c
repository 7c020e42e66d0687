/* cpu_fiber.c: the CPU executor's fibers, which runtime/cpu.c schedules:
 * the context switch, the fibers' stacks and the rest of a worker's scratch
 * (guard pages, alternate signal stacks, the shared-memory buffer), and the
 * way back to run_job() from a stack overflow or an out-of-bounds index.
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
 * of bounds in checked code) goes back the same way, failing with MSG_INDEX,
 * and so does gpujit_cpu_stopped (SIGINT seen at a poll). Any other fault goes to
 * the handler installed before ours (called directly: Python's faulthandler,
 * ASan), else to the default action. A handler installed after the first
 * launch (faulthandler.enable() then) takes precedence over ours: an overflow
 * then crashes as it did before. A guard-page fault inside a libc call that
 * holds a lock (malloc, stdio) would leave that lock held.
 *
 * Requires: x86-64 for the hand-written context switch (elsewhere, or when
 * CET shadow stacks are on, glibc's ucontext takes over); POSIX threads and
 * mmap. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "cpu_internal.h"

/* ---- context switch ---------------------------------------------------- */

#if HAVE_ASM_SWITCH
/* gj_cpu_switch(save, to): push the callee-saved registers of the SysV ABI
 * and the FP control state (MXCSR, x87 control word: callee-saved too) on
 * the current stack, store the stack pointer in *save, load `to` and pop the
 * same frame there. Unlike swapcontext it makes no sigprocmask syscall.
 * gj_cpu_fiber_start is the first "return address" of a fresh fiber: it calls
 * r13(r12), i.e. cpu_fiber_main(fiber), which never returns. */
__asm__(".text\n"
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
uint64_t cpu_fp_control(void) {
    uint32_t mxcsr;
    uint16_t cw;
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(cw));
    return mxcsr | (uint64_t)cw << 32;
}

/* A CET shadow stack would catch the asm switch's `ret` onto another stack
 * as an attack; glibc's swapcontext knows how to switch shadow stacks. rdsspq
 * is a NOP (leaving rax 0) unless shadow stacks are on. */
int cpu_shadow_stack_active(void) {
    uint64_t ssp = 0;
#ifdef GJ_VALGRIND
    if (RUNNING_ON_VALGRIND) return 0;
#endif
    __asm__ volatile(".byte 0xf3, 0x48, 0x0f, 0x1e, 0xc8" /* rdsspq %rax */ : "+a"(ssp));
    return ssp != 0;
}
#else
int cpu_shadow_stack_active(void) { return 1; }
#endif

static void uc_entry(unsigned lo, unsigned hi) {
    /* makecontext passes only ints: the fiber's address comes in halves. */
    cpu_fiber_main((Fiber *)(uintptr_t)((uint64_t)hi << 32 | lo));
}

/* Lays out a fresh context on f's stack that starts cpu_fiber_main(f). */
void cpu_ctx_init(Sched *s, Fiber *f, uint64_t fpctl) {
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
    *--sp = (uintptr_t)cpu_fiber_main; /* r13 */
    *--sp = 0;                     /* r14 */
    *--sp = 0;                     /* r15 */
    *--sp = fpctl;
    f->sp = sp;
#else
    (void)fpctl;
#endif
}

/* Scheduler -> fiber f; returns when f waits at a barrier or has finished. */
void cpu_to_fiber(Sched *s, Fiber *f) {
    s->cur = f;
#ifdef GJ_ASAN
    __sanitizer_start_switch_fiber(&s->asan_fake, f->stack, f->size);
#endif
#ifdef GJ_TSAN
    __tsan_switch_to_fiber(f->tsan, 0);
#endif
    if (s->use_uc) swapcontext(s->main_uc, f->uc);
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
void cpu_to_sched(Sched *s, Fiber *f) {
#ifdef GJ_ASAN
    /* A finished fiber passes NULL: ASan drops its fake stack. */
    __sanitizer_start_switch_fiber(f->done ? NULL : &f->asan_fake, s->main_stack, s->main_stack_size);
#endif
#ifdef GJ_TSAN
    __tsan_switch_to_fiber(s->tsan_main, 0);
#endif
    if (s->use_uc) swapcontext(f->uc, s->main_uc);
#if HAVE_ASM_SWITCH
    else
        gj_cpu_switch(&f->sp, s->main_sp);
#endif
#ifdef GJ_ASAN
    __sanitizer_finish_switch_fiber(f->asan_fake, NULL, NULL);
#endif
}

/* Fibers stopped at a barrier of a block that cannot finish (or cut short
 * by a stack overflow) are never resumed; their stacks are reused as they
 * are, but the sanitizers must forget the frames left on them. */
void cpu_abandon_fiber(Fiber *f) {
#ifdef GJ_ASAN
    __asan_unpoison_memory_region(f->stack, f->size);
#endif
#ifdef GJ_TSAN
    __tsan_destroy_fiber(f->tsan);
    f->tsan = __tsan_create_fiber(0);
#endif
    (void)f;
}

void cpu_abandon(Worker *w, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (!w->fibers[i].done) cpu_abandon_fiber(&w->fibers[i]);
}

/* ---- leaving a block early ------------------------------------------------ */

__thread Worker *cpu_tls_worker __attribute__((tls_model("initial-exec")));
static struct sigaction prev_segv, prev_bus; /* what on_fault chains to */

/* Back to run_job() of w, from the fiber s is running (if any): its block,
 * and the launch, are given up. */
static void jump_back(Worker *w, Sched *s, int why) __attribute__((noreturn));
static void jump_back(Worker *w, Sched *s, int why) {
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
void cpu_trap_index(GjBlockCtx *blk) {
    (void)blk;
    Worker *w = cpu_tls_worker;
    jump_back(w, w->active, JUMP_TRAP);
}

/* Out of memory inside a thread (its frame): the launch fails. */
void cpu_trap_nomem(void) {
    Worker *w = cpu_tls_worker;
    jump_back(w, w->active, JUMP_NOMEM);
}

/* Interleaved threads that cannot all reach the same barrier. */
void cpu_trap_deadlock(void) {
    Worker *w = cpu_tls_worker;
    jump_back(w, w->active, JUMP_DEADLOCK);
}

/* GJ_CPU_STOP_FN: compiled code saw the stop flag (SIGINT) at a loop's back edge. */
void gpujit_cpu_stopped(void) {
    Worker *w = cpu_tls_worker;
    jump_back(w, w->active, JUMP_STOP);
}

static void on_fault(int sig, siginfo_t *si, void *ctx) {
    Worker *w = cpu_tls_worker;
    Sched *s = w ? w->active : NULL;
    Fiber *f = s ? s->cur : NULL;
    if (f && si && si->si_code > 0) {
        uintptr_t a = (uintptr_t)si->si_addr, lo = (uintptr_t)f->stack;
        if (a < lo && lo - a <= cpu_pool.page) {
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
    if (!si || si->si_code <= 0) raise(sig); /* sent, not a fault: it would not come again by itself */
}

/* Called with launch_mu held by the first launch of the process (a forked
 * child inherits the handler): installs on_fault for SIGSEGV and SIGBUS,
 * chaining to the handlers there now. */
void cpu_fault_handler_install(void) {
    static const int sigs[2] = {SIGSEGV, SIGBUS};
    for (int i = 0; i < 2; i++) {
        struct sigaction cur, sa;
        if (sigaction(sigs[i], NULL, &cur) != 0) continue;
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fault) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        *(sigs[i] == SIGBUS ? &prev_bus : &prev_segv) = cur;
        sigaction(sigs[i], &sa, NULL);
    }
    cpu_pool.sig_set = 1;
}

/* A mapping of n usable bytes above a PROT_NONE guard page; NULL if none. */
static char *guarded_map(size_t n) {
    char *m = mmap(NULL, cpu_pool.page + n, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED) return NULL;
    if (mprotect(m, cpu_pool.page, PROT_NONE) != 0) {
        munmap(m, cpu_pool.page + n);
        return NULL;
    }
    return m;
}

/* Gives the calling thread an alternate signal stack, for on_fault to run
 * on when the stack that overflowed is full, unless it has one; returns the
 * mapping, or NULL. */
char *cpu_altstack_setup(void) {
    stack_t old;
    if (sigaltstack(NULL, &old) != 0 || !(old.ss_flags & SS_DISABLE))
        return NULL; /* e.g. ASan and faulthandler give threads one */
    char *m = guarded_map(ALT_STACK);
    if (!m) return NULL;
    stack_t ss = {.ss_sp = m + cpu_pool.page, .ss_size = ALT_STACK, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        munmap(m, cpu_pool.page + ALT_STACK);
        return NULL;
    }
    return m;
}

/* Launching threads are the application's: the one they get from their
 * first launch stays until the thread exits, when this takes it back. */
__thread int cpu_tls_alt_done __attribute__((tls_model("initial-exec")));
static pthread_key_t alt_key;
static pthread_once_t alt_once = PTHREAD_ONCE_INIT;
static int alt_key_ok;

static void caller_altstack_free(void *m) {
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == (char *)m + cpu_pool.page && !(cur.ss_flags & SS_DISABLE)) {
        stack_t off = {.ss_flags = SS_DISABLE};
        if (sigaltstack(&off, NULL) != 0) return; /* still in use: leave it */
    }
    munmap(m, cpu_pool.page + ALT_STACK);
}

static void alt_key_init(void) { alt_key_ok = pthread_key_create(&alt_key, caller_altstack_free) == 0; }

void cpu_caller_altstack(void) {
    cpu_tls_alt_done = 1;
    pthread_once(&alt_once, alt_key_init);
    if (!alt_key_ok) return; /* could not be freed at thread exit: go without */
    char *m = cpu_altstack_setup();
    if (m && pthread_setspecific(alt_key, m) != 0) {
        stack_t off = {.ss_flags = SS_DISABLE};
        sigaltstack(&off, NULL);
        munmap(m, cpu_pool.page + ALT_STACK);
    }
}

/* ---- per-worker scratch ------------------------------------------------- */

static void fibers_free(Worker *w) {
    for (uint32_t i = 0; i < w->nfibers; i++) {
#ifdef GJ_VALGRIND
        VALGRIND_STACK_DEREGISTER(w->fibers[i].vg_id);
#endif
#ifdef GJ_TSAN
        __tsan_destroy_fiber(w->fibers[i].tsan);
#endif
    }
    if (w->stacks) munmap(w->stacks, w->stacks_len);
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
static int fibers_grow(Worker *w, uint32_t n) {
    size_t slot = cpu_pool.page + cpu_pool.stack_size;
    if (n > SIZE_MAX / slot) return -1;
    size_t len = n * slot;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED) return -1;
    Fiber *fs = calloc(n, sizeof *fs);
    ucontext_t *ucs = cpu_pool.use_uc ? calloc(n, sizeof *ucs) : NULL;
    if (!fs || (cpu_pool.use_uc && !ucs)) {
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
        (void)mprotect(guard, cpu_pool.page, PROT_NONE);
        fs[i].stack = guard + cpu_pool.page;
        fs[i].size = cpu_pool.stack_size;
        fs[i].uc = ucs ? &ucs[i] : NULL;
#ifdef GJ_VALGRIND
        fs[i].vg_id = VALGRIND_STACK_REGISTER(fs[i].stack, fs[i].stack + cpu_pool.stack_size);
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
static void bstack_alloc(Worker *w) {
    char *m = guarded_map(cpu_pool.block_stack);
    if (!m) return;
    Fiber *f = &w->bfiber;
    memset(f, 0, sizeof *f);
    f->stack = m + cpu_pool.page;
    f->size = cpu_pool.block_stack;
#ifdef GJ_VALGRIND
    f->vg_id = VALGRIND_STACK_REGISTER(f->stack, f->stack + f->size);
#endif
#ifdef GJ_TSAN
    f->tsan = __tsan_create_fiber(0);
#endif
    w->bstack = m;
    w->bstack_len = cpu_pool.page + cpu_pool.block_stack;
}

void cpu_worker_free(Worker *w) {
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
    free(w->coro_buf);
    w->coro_buf = NULL;
    free(w->region_buf);
    w->region_buf = NULL;
    w->region_cap = 0;
    w->coro_cap = w->coro_n = 0;
    cpu_race_free(w->race);
    w->race = NULL;
}

/* Grows w's shared-memory buffer and fibers to what job j needs; both are
 * reused by later blocks and launches. CUDA does not clear shared memory
 * between blocks and neither do we. */
int cpu_worker_reserve(Worker *w, const Job *j) {
    /* a cooperative launch keeps every block's shared memory at once */
    size_t need = j->coop ? j->shared_stride * j->nblocks : j->shared_bytes;
    if (!w->shared || need > w->shared_cap) {
        if (need > SIZE_MAX / 2) return -1;
        /* aligned as the largest alignment= a shared array may ask (LIMIT_ALIGN) */
        size_t cap = (need + 4095) & ~(size_t)4095;
        if (cap < 4096) cap = 4096;
        char *p = aligned_alloc(4096, cap);
        if (!p) return -1;
        free(w->shared);
        w->shared = p;
        w->shared_cap = cap;
    }
    if (j->uses_barrier && j->nfibers > w->nfibers) return fibers_grow(w, (j->nfibers + 31) & ~31u);
    if (!j->uses_barrier && cpu_pool.block_stack && !w->bstack) bstack_alloc(w);
    return 0;
}
