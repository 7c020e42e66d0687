/* test_cpu.c: tests of the CPU executor (runtime/cpu.c) with hand-written
 * "kernels" that follow the ABI of runtime/cpu_abi.h, the way src/target_host.c
 * emits them: params is cuLaunchKernel's kernelParams (one pointer per
 * parameter value), block functions loop over the threads of a block, thread
 * functions run one thread and call blk->syncthreads.
 *
 *   test_cpu [--no-bench] [--small]     exit status 0 when every check passed
 * --small shrinks the inputs for slow tools (TSan, valgrind). */
#define _GNU_SOURCE
#include <fenv.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cpu.h"

static int failures;
static int small; /* --small: smaller inputs, for TSan and valgrind */

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            failures++;                                                    \
            fprintf(stderr, "%s:%d: FAIL %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

static GjDim3 dim3(uint32_t x, uint32_t y, uint32_t z) { return (GjDim3){x, y, z}; }

static int launch_block(GjHostBlockFn fn, GjDim3 g, GjDim3 b, size_t shared, void **params,
                        const char **err)
{
    return gj_cpu_launch(fn, NULL, 0, g, b, shared, params, err);
}

static int launch_fibers(GjHostThreadFn fn, GjDim3 g, GjDim3 b, size_t shared, void **params,
                         const char **err)
{
    return gj_cpu_launch(NULL, fn, 1, g, b, shared, params, err);
}

/* ---- 1. block function: out[global id] = global id ---------------------- */

static void k_iota(void **params, GjBlockCtx *blk)
{
    int32_t *out = *(int32_t **)params[0];
    for (int32_t tx = 0; tx < blk->ntid[0]; tx++) {
        int32_t i = blk->ctaid[0] * blk->ntid[0] + tx;
        out[i] = i;
    }
}

static void test_iota(void)
{
    enum { G = 37, B = 128, N = G * B };
    int32_t *out = malloc(N * sizeof *out);
    for (int i = 0; i < N; i++)
        out[i] = -1;
    void *params[] = {&out};
    const char *err = "unset";
    int rc = launch_block(k_iota, dim3(G, 1, 1), dim3(B, 1, 1), 0, params, &err);
    CHECK(rc == 0 && err == NULL, "rc=%d err=%s", rc, err ? err : "(null)");
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += out[i] != i;
    CHECK(bad == 0, "%d of %d elements wrong", bad, N);
    free(out);
}

/* ---- race detector (GJ_CPU_RACECHECK): the tree reduction telling blk->race of each
 * shared access, as compiled racecheck kernels do; with barriers nothing is reported, without
 * them thread 0's read of sh[1] (site 3) and thread 1's first write of it (site 1) are the
 * first write-after-read of every block ---- */

static void k_race_reduce(void **params, GjBlockCtx *blk, int32_t tx, int32_t ty, int32_t tz)
{
    int32_t sync = *(int32_t *)params[0];
    int64_t *sh = (int64_t *)(void *)blk->shared;
    enum { W = GJ_RACE_WRITE, S = GJ_RACE_SITE_SHIFT };
    blk->race(blk, &sh[tx], 8, 1 << S | W, tx, ty, tz);
    sh[tx] = tx;
    if (sync)
        blk->syncthreads(blk, -1);
    for (int32_t s = blk->ntid[0] / 2; s > 0; s >>= 1) {
        if (tx < s) {
            blk->race(blk, &sh[tx], 8, 2 << S, tx, ty, tz);
            blk->race(blk, &sh[tx + s], 8, 3 << S, tx, ty, tz);
            blk->race(blk, &sh[tx], 8, 4 << S | W, tx, ty, tz);
            sh[tx] += sh[tx + s];
        }
        if (sync)
            blk->syncthreads(blk, -1);
    }
}

static void test_race(void)
{
    for (int32_t sync = 1; sync >= 0; sync--) {
        void *params[] = {&sync};
        const char *err;
        int rc = gj_cpu_launch(NULL, k_race_reduce, GJ_CPU_BARRIER | GJ_CPU_RACECHECK, dim3(small ? 8 : 64, 1, 1),
                               dim3(128, 1, 1), 128 * sizeof(int64_t), params, &err);
        CHECK(rc == 0 && !err, "race (sync %d): rc=%d err=%s", sync, rc, err ? err : "(null)");
        int n;
        uint64_t total;
        const GjRaceReport *r = gj_cpu_race_reports(&n, &total);
        if (sync) {
            CHECK(n == 0 && total == 0, "race with barriers: %d reports, %" PRIu64 " hazards", n, total);
            continue;
        }
        CHECK(n > 0 && total >= (uint64_t)n, "race without barriers: %d reports, %" PRIu64 " hazards", n, total);
        if (n > 0)
            CHECK(r[0].kind == GJ_RACE_WAR && r[0].site[0] == 3 && r[0].site[1] == 1 && r[0].flags[0] == 0 &&
                          r[0].flags[1] == GJ_RACE_WRITE && r[0].tid[0][0] == 0 && r[0].tid[1][0] == 1 &&
                          r[0].tid[1][1] == 0 && r[0].shared_off == 8,
                  "race without barriers: kind %d, sites %d %d, threads %d %d, offset %lld", r[0].kind,
                  r[0].site[0], r[0].site[1], r[0].tid[0][0], r[0].tid[1][0], (long long)r[0].shared_off);
    }
    /* a launch without GJ_CPU_RACECHECK reports nothing, and leaves no reports behind */
    int32_t sync = 0;
    void *params[] = {&sync};
    int rc = gj_cpu_launch(NULL, k_race_reduce, GJ_CPU_BARRIER, dim3(2, 1, 1), dim3(128, 1, 1),
                           128 * sizeof(int64_t), params, NULL);
    int n;
    uint64_t total;
    gj_cpu_race_reports(&n, &total);
    CHECK(rc == 0 && n == 0 && total == 0, "race off: rc=%d, %d reports", rc, n);
}

/* ---- 2./3. shared-memory tree reduction with barriers -------------------- */

/* params: const int64_t *in, int64_t n, int64_t *total, int32_t sync.
 * sync == 0 skips every barrier, to prove the barrier is what makes it right. */
static void k_reduce(void **params, GjBlockCtx *blk, int32_t tx, int32_t ty, int32_t tz)
{
    const int64_t *in = *(const int64_t **)params[0];
    int64_t n = *(int64_t *)params[1];
    int64_t *total = *(int64_t **)params[2];
    int32_t sync = *(int32_t *)params[3];
    int64_t *sh = (int64_t *)(void *)blk->shared;
    int64_t i = (int64_t)blk->ctaid[0] * blk->ntid[0] + tx;
    sh[tx] = i < n ? in[i] : 0;
    if (sync)
        blk->syncthreads(blk, -1);
    for (int32_t s = blk->ntid[0] / 2; s > 0; s >>= 1) {
        if (tx < s)
            sh[tx] += sh[tx + s];
        if (sync)
            blk->syncthreads(blk, -1);
    }
    if (tx == 0)
        __atomic_fetch_add(total, sh[0], __ATOMIC_RELAXED);
}

static int64_t *make_input(int64_t n, uint64_t seed, int64_t *sum)
{
    int64_t *in = malloc((size_t)n * sizeof *in);
    *sum = 0;
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        in[i] = (int64_t)(seed >> 40) % 2001 - 1000;
        *sum += in[i];
    }
    return in;
}

static int reduce(const int64_t *in, int64_t n, int32_t block, int32_t sync, int64_t *total,
                  const char **err)
{
    *total = 0;
    int64_t *ptotal = total;
    void *params[] = {&in, &n, &ptotal, &sync};
    uint32_t grid = (uint32_t)((n + block - 1) / block);
    return launch_fibers(k_reduce, dim3(grid, 1, 1), dim3((uint32_t)block, 1, 1),
                         (size_t)block * sizeof(int64_t), params, err);
}

static void test_reduce(void)
{
    int64_t n = small ? 7001 : 70001, want, got;
    int64_t *in = make_input(n, 1, &want);
    const char *err;
    int rc = reduce(in, n, 128, 1, &got, &err);
    CHECK(rc == 0 && err == NULL, "rc=%d err=%s", rc, err ? err : "(null)");
    CHECK(got == want, "sum %" PRId64 ", want %" PRId64, got, want);

    rc = reduce(in, n, 128, 0, &got, &err);
    CHECK(rc == 0, "rc=%d without barriers", rc);
    CHECK(got != want, "sum right without barriers (%" PRId64 "): the barrier is not real", got);

    /* Other block sizes grow the fiber arrays and the shared buffer; 1024 is
     * CUDA's largest block. */
    static const int32_t sizes[] = {32, 1024, 64, 256, 1, 512};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        rc = reduce(in, n, sizes[k], 1, &got, &err);
        CHECK(rc == 0 && got == want, "block %d: rc=%d sum %" PRId64 ", want %" PRId64,
              sizes[k], rc, got, want);
    }
    free(in);
}

/* ---- 4. early returns at barriers --------------------------------------- */

/* params: int32_t mode, int32_t bad_block, int64_t *out (64 per block), int32_t *counts (per block)
 *   mode 0: thread 0 returns before the barrier the others wait at
 *   mode 1: all pass one barrier, then odd threads return and even ones wait again
 *   mode 2: nobody calls a barrier at all
 *   mode 3: a barrier inside a loop whose trip count differs between blocks
 *   mode 4: threads tx >= bad_block return; the others swap through shared memory
 *           across two barriers and count themselves with syncthreads_count
 * A thread that returned takes no part in later barriers: the block goes on with the others. */
static void k_early(void **params, GjBlockCtx *blk, int32_t tx, int32_t ty, int32_t tz)
{
    int32_t mode = *(int32_t *)params[0];
    int32_t bad_block = *(int32_t *)params[1];
    int64_t *out = *(int64_t **)params[2] + (int64_t)blk->ctaid[0] * 64;
    int32_t *counts = *(int32_t **)params[3];
    int64_t *sh = (int64_t *)(void *)blk->shared;
    int bad = bad_block < 0 || blk->ctaid[0] == bad_block;
    switch (mode) {
    case 0:
        if (bad && tx == 0)
            return;
        blk->syncthreads(blk, -1);
        out[tx] = 1;
        break;
    case 1:
        blk->syncthreads(blk, -1);
        if (bad && (tx & 1))
            return;
        blk->syncthreads(blk, -1);
        out[tx] = 1;
        break;
    case 2:
        out[tx] = 1;
        break;
    case 3:
        for (int32_t k = 0; k < blk->ctaid[0] % 5; k++)
            blk->syncthreads(blk, -1);
        out[tx] = 1;
        break;
    case 4: {
        int32_t n = bad_block;
        if (tx >= n)
            return;
        sh[tx] = 1000 * blk->ctaid[0] + tx;
        blk->syncthreads(blk, -1);
        int64_t v = sh[n - 1 - tx];
        blk->syncthreads(blk, -1);
        sh[tx] = v;
        int32_t live = blk->sync_reduce(blk, GJ_SYNC_COUNT, 1);
        out[tx] = sh[(tx + 1) % n];
        if (tx == 0)
            counts[blk->ctaid[0]] = live;
        break;
    }
    }
}

static int run_early(int32_t mode, int32_t bad_block, uint32_t grid, int64_t *out, int32_t *counts,
                     const char **err)
{
    void *params[] = {&mode, &bad_block, &out, &counts};
    for (uint32_t i = 0; i < grid * 64; i++)
        out[i] = -1;
    return launch_fibers(k_early, dim3(grid, 1, 1), dim3(64, 1, 1), 64 * sizeof(int64_t), params, err);
}

/* Threads of out (64 per block) that wrote 1: every one, but those of block bad_block
 * (every block when < 0) for which skipped(tx) holds, which must be -1. */
static int early_wrong(const int64_t *out, uint32_t grid, int32_t bad_block, int mode)
{
    int wrong = 0;
    for (uint32_t b = 0; b < grid; b++)
        for (int32_t tx = 0; tx < 64; tx++) {
            int bad = bad_block < 0 || (int32_t)b == bad_block;
            int gone = bad && (mode == 0 ? tx == 0 : mode == 1 ? (tx & 1) : 0);
            wrong += out[b * 64 + (uint32_t)tx] != (gone ? -1 : 1);
        }
    return wrong;
}

static void test_early_return(void)
{
    static int64_t out[64 * 50];
    static int32_t counts[50];
    const char *err;
    static const struct { int32_t mode, bad_block; uint32_t grid; const char *what; } cases[] = {
        {0, -1, 1, "thread 0 returns"},
        {1, -1, 3, "odd threads return after a barrier"},
        {0, 17, 50, "one block of 50 with a return"},
        {2, -1, 10, "no barrier at all"},
        {3, -1, 23, "barrier in a block-uniform loop"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int rc = run_early(cases[c].mode, cases[c].bad_block, cases[c].grid, out, counts, &err);
        CHECK(rc == 0 && !err, "%s: rc=%d err=%s", cases[c].what, rc, err ? err : "(null)");
        int wrong = early_wrong(out, cases[c].grid, cases[c].bad_block, cases[c].mode);
        CHECK(wrong == 0, "%s: %d threads wrong", cases[c].what, wrong);
    }
    /* the threads left swap through shared memory; syncthreads_count counts only them */
    static const int32_t ns[] = {1, 5, 33, 63, 64};
    for (size_t c = 0; c < sizeof ns / sizeof *ns; c++) {
        int32_t n = ns[c];
        uint32_t grid = 3;
        int rc = run_early(4, n, grid, out, counts, &err);
        CHECK(rc == 0 && !err, "%d threads left: rc=%d err=%s", n, rc, err ? err : "(null)");
        int wrong = 0;
        for (uint32_t b = 0; b < grid; b++) {
            CHECK(counts[b] == n, "%d threads left: syncthreads_count %d", n, counts[b]);
            for (int32_t tx = 0; tx < 64; tx++) {
                int32_t from = n - 1 - (tx + 1) % n;
                int64_t want = tx < n ? 1000 * (int64_t)b + from : -1;
                wrong += out[b * 64 + (uint32_t)tx] != want;
            }
        }
        CHECK(wrong == 0, "%d threads left: %d threads wrong", n, wrong);
    }
}

/* ---- 4b. blk->trap: an out-of-bounds index ends the launch ------------- */

/* params: int32_t bad_block, int32_t bad_thread, int64_t *after (counts the
 * threads that got past the trap point: the trapping one must not) */
static void k_trap_block(void **params, GjBlockCtx *blk)
{
    int32_t bad_block = *(int32_t *)params[0], bad_thread = *(int32_t *)params[1];
    int64_t *after = *(int64_t **)params[2];
    for (int32_t tx = 0; tx < blk->ntid[0]; tx++) {
        if (blk->ctaid[0] == bad_block && tx == bad_thread)
            blk->trap(blk);
        __atomic_fetch_add(after, 1, __ATOMIC_RELAXED);
    }
}

static void k_trap_thread(void **params, GjBlockCtx *blk, int32_t tx, int32_t ty, int32_t tz)
{
    int32_t bad_block = *(int32_t *)params[0], bad_thread = *(int32_t *)params[1];
    int64_t *after = *(int64_t **)params[2];
    blk->syncthreads(blk, -1);
    if (blk->ctaid[0] == bad_block && tx == bad_thread)
        blk->trap(blk);
    __atomic_fetch_add(after, 1, __ATOMIC_RELAXED);
    blk->syncthreads(blk, -1);
}

static void test_trap(void)
{
    for (int fibers = 0; fibers < 2; fibers++) {
        int32_t bad_block = 5, bad_thread = 17;
        int64_t after = 0, *pafter = &after;
        void *params[] = {&bad_block, &bad_thread, &pafter};
        const char *err = NULL;
        uint32_t grid = 40, block = 64;
        int rc = fibers ? launch_fibers(k_trap_thread, dim3(grid, 1, 1), dim3(block, 1, 1), 0, params, &err)
                        : launch_block(k_trap_block, dim3(grid, 1, 1), dim3(block, 1, 1), 0, params, &err);
        CHECK(rc == -1 && err && strstr(err, "out of bounds"), "trap (fibers %d): rc=%d err=%s", fibers, rc,
              err ? err : "(null)");
        CHECK(after < (int64_t)grid * block, "trap (fibers %d): every thread went on (%" PRId64 ")", fibers,
              after);
        /* the abandoned block's stacks are reused: the next launch is whole */
        bad_block = -1;
        after = 0;
        rc = fibers ? launch_fibers(k_trap_thread, dim3(grid, 1, 1), dim3(block, 1, 1), 0, params, &err)
                    : launch_block(k_trap_block, dim3(grid, 1, 1), dim3(block, 1, 1), 0, params, &err);
        CHECK(rc == 0 && after == (int64_t)grid * block, "after a trap (fibers %d): rc=%d, %" PRId64 " threads",
              fibers, rc, after);
    }
}

/* ---- 4a. SIGINT: a launch stopped at a poll ------------------------------ */

/* Every thread spins at a "loop back edge" polling the stop flag, as compiled
 * code does; thread 0 of block 3 sends the process SIGINT once. The launch fails with
 * GJ_CPU_INTERRUPTED, the program's own handler has been called once (the
 * executor's chains to it), and the next launch runs whole. */
static volatile sig_atomic_t sigints;
static void count_sigint(int sig) { (void)sig; sigints++; }

static void spin_until_stopped(GjBlockCtx *blk, int32_t tx, int64_t *ran)
{
    __atomic_add_fetch(ran, 1, __ATOMIC_RELAXED);
    /* to the process, as a terminal's Ctrl-C: a thread that does not block it
     * takes it (the pool's threads block every signal) */
    if (blk->ctaid[0] == 3 && tx == 0) kill(getpid(), SIGINT);
    for (;;)
        if (gpujit_cpu_stop) gpujit_cpu_stopped();
}

static void k_spin_block(void **params, GjBlockCtx *blk)
{
    int64_t *ran = *(int64_t **)params[0];
    for (int32_t tx = 0; tx < blk->ntid[0]; tx++) {
        if (blk->ctaid[0] != 3) {
            __atomic_add_fetch(ran, 1, __ATOMIC_RELAXED); /* other blocks finish */
            continue;
        }
        spin_until_stopped(blk, tx, ran);
    }
}

static void k_spin_thread(void **params, GjBlockCtx *blk, int32_t tx, int32_t ty, int32_t tz)
{
    int64_t *ran = *(int64_t **)params[0];
    if (blk->ctaid[0] != 3) {
        __atomic_add_fetch(ran, 1, __ATOMIC_RELAXED);
        blk->syncthreads(blk, -1);
        return;
    }
    spin_until_stopped(blk, tx, ran);
}

static void test_stop(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = count_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    usleep(20000); /* past the executor's recheck interval: it installs its own in front */
    for (int fibers = 0; fibers < 2; fibers++) {
        int64_t ran = 0, *pran = &ran;
        void *params[] = {&pran};
        const char *err = NULL;
        sigints = 0;
        int rc = fibers ? launch_fibers(k_spin_thread, dim3(8, 1, 1), dim3(64, 1, 1), 0, params, &err)
                        : launch_block(k_spin_block, dim3(8, 1, 1), dim3(64, 1, 1), 0, params, &err);
        CHECK(rc == GJ_CPU_INTERRUPTED && err && strstr(err, "interrupted"), "stop (fibers %d): rc=%d err=%s",
              fibers, rc, err ? err : "(null)");
        CHECK(sigints == 1, "stop (fibers %d): the program's handler ran %d times", fibers, (int)sigints);
        int32_t out[64 * 8], *po = out;
        memset(out, 0xff, sizeof out);
        void *iparams[] = {&po};
        rc = launch_block(k_iota, dim3(8, 1, 1), dim3(64, 1, 1), 0, iparams, &err);
        int bad = 0;
        for (int i = 0; i < 64 * 8; i++) bad += out[i] != i;
        CHECK(rc == 0 && bad == 0, "after a stop (fibers %d): rc=%d, %d wrong", fibers, rc, bad);
    }
    sigaction(SIGINT, &old, NULL);
}

/* ---- 4b. cooperative launches: the grid barrier ------------------------- */

/* Round r: each thread writes cell (r, i) from the previous round's mirrored
 * cell, which another block wrote; blk->grid_sync between rounds. Threads
 * past `live` return at once, as a partial last block's do. A thread of block
 * `skip` (every one, or thread 0 alone when skip_leader) returns before the
 * first barrier: the launch must fail, not hang. A thread at an out-of-bounds
 * index (trap_block) ends the launch while other blocks wait at the barrier. */
typedef struct CoopArgs { int64_t *m; int32_t rounds, n, live, skip, skip_leader, trap_block; } CoopArgs;

static void k_coop_rows(void **params, GjBlockCtx *blk, int32_t tx, int32_t ty, int32_t tz)
{
    CoopArgs *a = *(CoopArgs **)params[0];
    int32_t i = blk->ctaid[0] * blk->ntid[0] + tx;
    if (i >= a->live) return;
    if (blk->ctaid[0] == a->skip && (!a->skip_leader || tx == 0)) return;
    if (blk->ctaid[0] == a->trap_block && tx == 1) blk->trap(blk);
    for (int32_t r = 1; r < a->rounds; r++) {
        a->m[(int64_t)r * a->n + i] = a->m[(int64_t)(r - 1) * a->n + (a->live - 1 - i)] * 3 + r;
        blk->grid_sync(blk);
    }
}

static void test_coop(void)
{
    int32_t block = 24, grid = 7, n = block * grid, rounds = 12;
    int64_t *m = calloc((size_t)n * rounds, sizeof *m), *want = calloc((size_t)n * rounds, sizeof *want);
    CoopArgs a = {m, rounds, n, n - 5, -1, 0, -1};
    CoopArgs *pa = &a;
    void *params[] = {&pa};
    const char *err = NULL;
    for (int32_t i = 0; i < n; i++) m[i] = want[i] = i * 7 - 50;
    for (int32_t r = 1; r < rounds; r++)
        for (int32_t i = 0; i < a.live; i++) want[r * n + i] = want[(r - 1) * n + (a.live - 1 - i)] * 3 + r;
    int rc = gj_cpu_launch(NULL, k_coop_rows, GJ_CPU_BARRIER | GJ_CPU_COOPERATIVE, dim3(grid, 1, 1),
                           dim3(block, 1, 1), 64, params, &err);
    CHECK(rc == 0, "cooperative launch: %s", err ? err : "(null)");
    CHECK(memcmp(m, want, sizeof *m * (size_t)n * rounds) == 0, "cooperative rows differ from the reference");

    a.skip = 3;
    rc = gj_cpu_launch(NULL, k_coop_rows, GJ_CPU_BARRIER | GJ_CPU_COOPERATIVE, dim3(grid, 1, 1), dim3(block, 1, 1),
                       0, params, &err);
    CHECK(rc == -1 && err && strstr(err, "a block returned while other blocks wait"), "block skips: rc=%d err=%s",
          rc, err ? err : "(null)");
    a.skip_leader = 1;
    rc = gj_cpu_launch(NULL, k_coop_rows, GJ_CPU_BARRIER | GJ_CPU_COOPERATIVE, dim3(grid, 1, 1), dim3(block, 1, 1),
                       0, params, &err);
    CHECK(rc == -1 && err && strstr(err, "thread 0 of a block returned"), "leader skips: rc=%d err=%s", rc,
          err ? err : "(null)");
    a.skip = -1, a.skip_leader = 0, a.trap_block = 4;
    rc = gj_cpu_launch(NULL, k_coop_rows, GJ_CPU_BARRIER | GJ_CPU_COOPERATIVE, dim3(grid, 1, 1), dim3(block, 1, 1),
                       0, params, &err);
    CHECK(rc == -1 && err && strstr(err, "out of bounds"), "trap in a cooperative launch: rc=%d err=%s", rc,
          err ? err : "(null)");
    rc = gj_cpu_launch(NULL, k_coop_rows, GJ_CPU_BARRIER | GJ_CPU_COOPERATIVE, dim3(GJ_CPU_MAX_COOP_THREADS / 16 + 1, 1, 1),
                       dim3(16, 1, 1), 0, params, &err);
    CHECK(rc == -1 && err && strstr(err, "cooperative launch too large"), "too large: rc=%d err=%s", rc,
          err ? err : "(null)");
    /* the executor is whole afterwards */
    a.trap_block = -1;
    memset(m + n, 0, sizeof *m * (size_t)n * (rounds - 1));
    rc = gj_cpu_launch(NULL, k_coop_rows, GJ_CPU_BARRIER | GJ_CPU_COOPERATIVE, dim3(grid, 1, 1), dim3(block, 1, 1),
                       0, params, &err);
    CHECK(rc == 0 && memcmp(m, want, sizeof *m * (size_t)n * rounds) == 0, "after the failures: rc=%d", rc);
    free(m);
    free(want);
}

/* ---- 5. 2-D and 3-D indices --------------------------------------------- */

typedef struct Rec { int32_t ctaid[3], tid[3], nctaid[3], ntid[3], hits; } Rec;

static int64_t global_id(const GjBlockCtx *blk, int32_t tx, int32_t ty, int32_t tz)
{
    int64_t b = ((int64_t)blk->ctaid[2] * blk->nctaid[1] + blk->ctaid[1]) * blk->nctaid[0] +
                blk->ctaid[0];
    int64_t t = ((int64_t)tz * blk->ntid[1] + ty) * blk->ntid[0] + tx;
    return b * blk->ntid[0] * blk->ntid[1] * blk->ntid[2] + t;
}

static void record(Rec *out, const GjBlockCtx *blk, int32_t tx, int32_t ty, int32_t tz)
{
    Rec *r = &out[global_id(blk, tx, ty, tz)];
    memcpy(r->ctaid, blk->ctaid, sizeof r->ctaid);
    memcpy(r->nctaid, blk->nctaid, sizeof r->nctaid);
    memcpy(r->ntid, blk->ntid, sizeof r->ntid);
    r->tid[0] = tx, r->tid[1] = ty, r->tid[2] = tz;
    __atomic_fetch_add(&r->hits, 1, __ATOMIC_RELAXED);
}

static void k_index_block(void **params, GjBlockCtx *blk)
{
    Rec *out = *(Rec **)params[0];
    for (int32_t tz = 0; tz < blk->ntid[2]; tz++)
        for (int32_t ty = 0; ty < blk->ntid[1]; ty++)
            for (int32_t tx = 0; tx < blk->ntid[0]; tx++)
                record(out, blk, tx, ty, tz);
}

/* The fiber version also checks that a barrier separates the phases: every
 * thread of the block has recorded itself before any reads the records. */
static void k_index_thread(void **params, GjBlockCtx *blk, int32_t tx, int32_t ty, int32_t tz)
{
    Rec *out = *(Rec **)params[0];
    int32_t *bad = *(int32_t **)params[1];
    record(out, blk, tx, ty, tz);
    blk->syncthreads(blk, -1);
    int32_t nt = blk->ntid[0] * blk->ntid[1] * blk->ntid[2];
    int64_t first = global_id(blk, 0, 0, 0);
    for (int32_t k = 0; k < nt; k++)
        if (out[first + k].hits != 1)
            __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
}

static void check_indices(const Rec *out, GjDim3 g, GjDim3 b, const char *what)
{
    int bad = 0;
    int64_t i = 0;
    for (uint32_t bz = 0; bz < g.z; bz++)
        for (uint32_t by = 0; by < g.y; by++)
            for (uint32_t bx = 0; bx < g.x; bx++)
                for (uint32_t tz = 0; tz < b.z; tz++)
                    for (uint32_t ty = 0; ty < b.y; ty++)
                        for (uint32_t tx = 0; tx < b.x; tx++, i++) {
                            const Rec *r = &out[i];
                            int ok = r->hits == 1 && r->ctaid[0] == (int32_t)bx &&
                                     r->ctaid[1] == (int32_t)by && r->ctaid[2] == (int32_t)bz &&
                                     r->tid[0] == (int32_t)tx && r->tid[1] == (int32_t)ty &&
                                     r->tid[2] == (int32_t)tz && r->nctaid[0] == (int32_t)g.x &&
                                     r->nctaid[1] == (int32_t)g.y && r->nctaid[2] == (int32_t)g.z &&
                                     r->ntid[0] == (int32_t)b.x && r->ntid[1] == (int32_t)b.y &&
                                     r->ntid[2] == (int32_t)b.z;
                            bad += !ok;
                        }
    CHECK(bad == 0, "%s grid (%u,%u,%u) block (%u,%u,%u): %d of %" PRId64 " records wrong", what,
          g.x, g.y, g.z, b.x, b.y, b.z, bad, i);
}

static void test_indices(void)
{
    static const GjDim3 cases[][2] = {
        {{7, 5, 1}, {16, 4, 1}},
        {{3, 4, 5}, {4, 3, 2}},
        {{1, 1, 9}, {1, 1, 8}},
        {{2, 3, 1}, {8, 8, 16}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        GjDim3 g = cases[c][0], b = cases[c][1];
        size_t n = (size_t)g.x * g.y * g.z * b.x * b.y * b.z;
        Rec *out = calloc(n, sizeof *out);
        int32_t bad = 0, *pbad = &bad;
        void *params[] = {&out, &pbad};
        const char *err;
        int rc = launch_block(k_index_block, g, b, 0, params, &err);
        CHECK(rc == 0, "block function rc=%d", rc);
        check_indices(out, g, b, "block function");
        memset(out, 0, n * sizeof *out);
        rc = launch_fibers(k_index_thread, g, b, 0, params, &err);
        CHECK(rc == 0, "fibers rc=%d", rc);
        check_indices(out, g, b, "fibers");
        CHECK(bad == 0, "fibers: %d reads before the barrier was complete", bad);
        free(out);
    }
}

/* ---- edge cases ---------------------------------------------------------- */

static void k_count_block(void **params, GjBlockCtx *blk)
{
    int64_t *counts = *(int64_t **)params[0];
    int64_t *misaligned = *(int64_t **)params[1];
    int64_t b = ((int64_t)blk->ctaid[2] * blk->nctaid[1] + blk->ctaid[1]) * blk->nctaid[0] +
                blk->ctaid[0];
    __atomic_fetch_add(&counts[b], 1, __ATOMIC_RELAXED);
    if ((uintptr_t)blk->shared & 15)
        __atomic_fetch_add(misaligned, 1, __ATOMIC_RELAXED);
    blk->syncthreads(blk, -1); /* a no-op for block functions; must not crash */
}

static void k_count_thread(void **params, GjBlockCtx *blk, int32_t tx, int32_t ty, int32_t tz)
{
    if (tx == 0 && ty == 0 && tz == 0)
        k_count_block(params, blk);
}

static void test_edges(void)
{
    /* Many tiny blocks: every one runs exactly once despite chunking. */
    enum { NB = 100003 };
    int64_t *counts = calloc(NB, sizeof *counts), misaligned = 0, *pmis = &misaligned;
    void *params[] = {&counts, &pmis};
    const char *err;
    int rc = launch_block(k_count_block, dim3(NB, 1, 1), dim3(1, 1, 1), 24, params, &err);
    int bad = 0;
    for (int i = 0; i < NB; i++)
        bad += counts[i] != 1;
    CHECK(rc == 0 && bad == 0, "rc=%d, %d of %d blocks not run exactly once", rc, bad, NB);
    CHECK(misaligned == 0, "%" PRId64 " blocks saw shared memory not 16-aligned", misaligned);

    /* Zero-size grids and blocks call nothing. */
    memset(counts, 0, NB * sizeof *counts);
    static const GjDim3 zeros[][2] = {
        {{0, 1, 1}, {1, 1, 1}}, {{1, 0, 1}, {1, 1, 1}}, {{1, 1, 0}, {1, 1, 1}},
        {{4, 1, 1}, {0, 1, 1}}, {{4, 1, 1}, {1, 0, 1}}, {{4, 1, 1}, {1, 1, 0}},
    };
    for (size_t c = 0; c < sizeof zeros / sizeof *zeros; c++) {
        rc = launch_block(k_count_block, zeros[c][0], zeros[c][1], 0, params, &err);
        CHECK(rc == 0 && !err, "zero-size case %zu: rc=%d", c, rc);
        rc = launch_fibers(k_count_thread, zeros[c][0], zeros[c][1], 0, params, &err);
        CHECK(rc == 0 && !err, "zero-size case %zu (fibers): rc=%d", c, rc);
    }
    CHECK(counts[0] == 0, "a zero-size launch ran a block");

    /* Missing host function, absurd dimensions: errors, not crashes. */
    rc = gj_cpu_launch(NULL, NULL, 0, dim3(1, 1, 1), dim3(1, 1, 1), 0, params, &err);
    CHECK(rc == -1 && err, "no block function: rc=%d", rc);
    rc = gj_cpu_launch(k_count_block, NULL, 1, dim3(1, 1, 1), dim3(1, 1, 1), 0, params, &err);
    CHECK(rc == -1 && err, "barrier kernel without thread function: rc=%d", rc);
    rc = launch_block(k_count_block, dim3(0x80000000u, 1, 1), dim3(1, 1, 1), 0, params, &err);
    CHECK(rc == -1 && err, "grid.x > INT32_MAX: rc=%d", rc);
    rc = launch_fibers(k_count_thread, dim3(1, 1, 1), dim3(1024, 1024, 1), 0, params, &err);
    CHECK(rc == -1 && err, "a million-thread fiber block: rc=%d", rc);
    free(counts);
}

/* Each fiber keeps its own FP control state (MXCSR and x87 control word are
 * callee-saved) and its own stack across barriers. The expected quotients
 * come from the launching thread under each mode (valgrind, for one, ignores
 * SSE rounding modes, so hard-coded ones would not do). */
static double quotient(int mode)
{
    volatile double one = 1.0, three = 3.0;
    int old = fegetround();
    fesetround(mode);
    volatile double q = one / three; /* volatile: GCC would move the division past fesetround */
    fesetround(old);
    return q;
}

static void k_fpenv(void **params, GjBlockCtx *blk, int32_t tx, int32_t ty, int32_t tz)
{
    int32_t *bad = *(int32_t **)params[0];
    const double *want = *(const double **)params[1]; /* [down, up] */
    int mode = tx & 1 ? FE_UPWARD : FE_DOWNWARD;
    volatile unsigned char buf[16384];
    for (size_t k = 0; k < sizeof buf; k++)
        buf[k] = (unsigned char)(tx + k);
    fesetround(mode);
    blk->syncthreads(blk, -1);
    volatile double one = 1.0, three = 3.0;
    volatile double q = one / three;
    if (fegetround() != mode || q != want[tx & 1])
        __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
    blk->syncthreads(blk, -1);
    for (size_t k = 0; k < sizeof buf; k++)
        if (buf[k] != (unsigned char)(tx + k)) {
            __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
            break;
        }
}

static void test_fpenv(void)
{
    int32_t bad = 0, *pbad = &bad;
    double want[2] = {quotient(FE_DOWNWARD), quotient(FE_UPWARD)}, *pwant = want;
    void *params[] = {&pbad, &pwant};
    const char *err;
    int rc = launch_fibers(k_fpenv, dim3(8, 1, 1), dim3(64, 1, 1), 0, params, &err);
    CHECK(rc == 0, "rc=%d", rc);
    CHECK(bad == 0, "%d threads lost their rounding mode or stack across a barrier", bad);
    CHECK(fegetround() == FE_TONEAREST, "a fiber's rounding mode leaked into the launcher");
}

/* Launches from several threads at once are each correct. */
typedef struct Concurrent { int seed, failures; } Concurrent;

static void *concurrent_main(void *arg)
{
    Concurrent *c = arg;
    int64_t n = (small ? 2000 : 20000) + c->seed * 100, want, got;
    int64_t *in = make_input(n, (uint64_t)c->seed, &want);
    for (int k = 0; k < (small ? 4 : 20); k++) {
        const char *err;
        int rc = reduce(in, n, 32 << (k % 4), 1, &got, &err);
        c->failures += rc != 0 || got != want;
    }
    free(in);
    return NULL;
}

static void test_concurrent(void)
{
    enum { T = 4 };
    pthread_t th[T];
    Concurrent c[T];
    for (int i = 0; i < T; i++) {
        c[i] = (Concurrent){.seed = i + 100};
        pthread_create(&th[i], NULL, concurrent_main, &c[i]);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        CHECK(c[i].failures == 0, "thread %d: %d wrong launches", i, c[i].failures);
    }
}

/* ---- 6. timing ---------------------------------------------------------- */

static void k_saxpy(void **params, GjBlockCtx *blk)
{
    float a = *(float *)params[0];
    const float *x = *(const float **)params[1];
    float *y = *(float **)params[2];
    int64_t n = *(int64_t *)params[3];
    int64_t base = (int64_t)blk->ctaid[0] * blk->ntid[0];
    for (int32_t tx = 0; tx < blk->ntid[0]; tx++) {
        int64_t i = base + tx;
        if (i < n)
            y[i] = a * x[i] + y[i];
    }
}

static void k_empty(void **params, GjBlockCtx *blk) {}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void bench(void)
{
    int64_t n = 1 << 24;
    float a = 2.0f;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *yref = malloc(n * sizeof *y);
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)(i & 1023), y[i] = yref[i] = 1.0f;
    void *params[] = {&a, &x, &y, &n};
    const char *err;
    double best_loop = 1e9, best_launch = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
        for (int64_t i = 0; i < n; i++)
            yref[i] = a * x[i] + yref[i];
        double t1 = now();
        launch_block(k_saxpy, dim3((uint32_t)(n / 256), 1, 1), dim3(256, 1, 1), 0, params, &err);
        double t2 = now();
        best_loop = t1 - t0 < best_loop ? t1 - t0 : best_loop;
        best_launch = t2 - t1 < best_launch ? t2 - t1 : best_launch;
    }
    CHECK(memcmp(y, yref, n * sizeof *y) == 0, "saxpy results differ from the plain loop");
    printf("saxpy 2^24 floats: plain loop %.2f ms, gj_cpu_launch (256-thread blocks) %.2f ms, "
           "launch/loop = %.2f\n",
           best_loop * 1e3, best_launch * 1e3, best_launch / best_loop);

    /* The executor's own cost: an empty kernel, per block and per launch. */
    double t0 = now();
    launch_block(k_empty, dim3(1 << 20, 1, 1), dim3(256, 1, 1), 0, params, &err);
    double t1 = now();
    for (int rep = 0; rep < 1000; rep++)
        launch_block(k_empty, dim3(1, 1, 1), dim3(256, 1, 1), 0, params, &err);
    double t2 = now();
    for (int rep = 0; rep < 1000; rep++)
        launch_block(k_empty, dim3(64, 1, 1), dim3(256, 1, 1), 0, params, &err);
    double t3 = now();
    printf("empty kernel: %.1f ns per block (2^20 blocks); launch of 1 block %.2f us, "
           "of 64 blocks %.2f us\n",
           (t1 - t0) * 1e9 / (1 << 20), (t2 - t1) * 1e3, (t3 - t2) * 1e3);

    /* Cost of a barrier: the reduction over 2^22 elements, 256-thread blocks
     * (9 barriers a thread), with and without the barrier. */
    int64_t rn = 1 << 22, want, got;
    int64_t *in = make_input(rn, 3, &want);
    t0 = now();
    reduce(in, rn, 256, 1, &got, &err);
    t1 = now();
    reduce(in, rn, 256, 0, &got, &err);
    t2 = now();
    double switches = 2.0 * rn * 9; /* into the fiber and back, per barrier */
    printf("fiber reduction 2^22: %.1f ms with barriers, %.1f ms without; ~%.1f ns per switch\n",
           (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t1 - t0 - (t2 - t1)) * 1e9 / switches);
    free(in);
    free(x);
    free(y);
    free(yref);
}

/* ---- 10. stack overflow: a fault on a guard page fails the launch ---------
 *
 * Like the compiler's code (src/target_host.c), this file is built with
 * stack probes (-fstack-clash-protection), so that a big frame touches each
 * page in turn and an overflow faults on the guard page below the stack. */

/* Recursion with a frame of about 600 bytes that the compiler cannot turn
 * into a loop. */
__attribute__((noinline)) static int64_t deep(int64_t n)
{
    volatile char buf[512];
    buf[0] = (char)n;
    buf[511] = (char)(n >> 8);
    if (n <= 0)
        return buf[0];
    return deep(n - 1) + buf[511];
}

/* A big local array: `bytes` of stack, probed page by page. */
__attribute__((noinline)) static int64_t big_frame(size_t bytes)
{
    volatile char a[bytes];
    a[0] = 1;
    a[bytes - 1] = 2;
    return a[0] + a[bytes - 1];
}

/* params: int32_t mode (0: recursion, 1: big array), int64_t amount,
 * int32_t bad_block, int32_t bad_tx, int64_t *out. Only thread bad_tx of
 * block bad_block (-1: every block) overflows. */
static void k_overflow_thread(void **params, GjBlockCtx *blk, int32_t tx, int32_t ty, int32_t tz)
{
    int32_t mode = *(int32_t *)params[0];
    int64_t amount = *(int64_t *)params[1];
    int32_t bad_block = *(int32_t *)params[2], bad_tx = *(int32_t *)params[3];
    int64_t *out = *(int64_t **)params[4];
    int bad = (bad_block < 0 || blk->ctaid[0] == bad_block) && tx == bad_tx;
    int64_t r = 0;
    blk->syncthreads(blk, -1);
    if (bad)
        r = mode == 0 ? deep(amount) : big_frame((size_t)amount);
    else
        r = mode == 0 ? deep(8) : big_frame(1000);
    blk->syncthreads(blk, -1);
    out[blk->ctaid[0] * blk->ntid[0] + tx] = r;
}

static void k_overflow_block(void **params, GjBlockCtx *blk)
{
    int32_t mode = *(int32_t *)params[0];
    int64_t amount = *(int64_t *)params[1];
    int32_t bad_block = *(int32_t *)params[2], bad_tx = *(int32_t *)params[3];
    int64_t *out = *(int64_t **)params[4];
    for (int32_t tx = 0; tx < blk->ntid[0]; tx++) {
        int bad = (bad_block < 0 || blk->ctaid[0] == bad_block) && tx == bad_tx;
        int64_t r = bad ? (mode == 0 ? deep(amount) : big_frame((size_t)amount))
                        : (mode == 0 ? deep(8) : big_frame(1000));
        out[blk->ctaid[0] * blk->ntid[0] + tx] = r;
    }
}

static int run_overflow(int fibers, int32_t mode, int64_t amount, int32_t bad_block, uint32_t grid,
                        const char **err)
{
    enum { B = 64 };
    int32_t bad_tx = 37;
    int64_t *out = calloc((size_t)grid * B, sizeof *out);
    void *params[] = {&mode, &amount, &bad_block, &bad_tx, &out};
    int rc = fibers ? launch_fibers(k_overflow_thread, dim3(grid, 1, 1), dim3(B, 1, 1), 0, params, err)
                    : launch_block(k_overflow_block, dim3(grid, 1, 1), dim3(B, 1, 1), 0, params, err);
    if (rc == 0) {
        for (uint32_t i = 0; i < grid * B; i++) {
            int bad = (bad_block < 0 || (int32_t)(i / B) == bad_block) && (int32_t)(i % B) == bad_tx;
            int64_t want = mode == 1 ? 3 : deep(bad ? amount : 8);
            if (out[i] != want) {
                rc = -2;
                break;
            }
        }
    }
    free(out);
    return rc;
}

static int is_overflow(int rc, const char *err)
{
    return rc == -1 && err && strstr(err, "overflowed its CPU stack") &&
           strstr(err, "GPUJIT_CPU_STACK");
}

/* A SIGSEGV handler installed before gpujit's, that the runtime must chain
 * to for faults that are not on its guard pages. */
static sigjmp_buf chain_jb;
static volatile sig_atomic_t chain_hits;
static void *chain_addr;

static void chain_handler(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    if (sig == SIGSEGV && si->si_addr == chain_addr) {
        chain_hits++;
        siglongjmp(chain_jb, 1);
    }
    signal(sig, SIG_DFL); /* anything else: crash as usual */
}

static void install_chain_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = chain_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
}

/* A fault that is not on a guard page reaches the handler installed before.
 * (Not under valgrind, which reports the deliberate bad write as an error.) */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif
static void test_fault_chain(void)
{
    if (RUNNING_ON_VALGRIND)
        return;
    long page = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    chain_addr = p;
    int before = chain_hits;
    if (sigsetjmp(chain_jb, 1) == 0)
        *(volatile char *)p = 1;
    CHECK(chain_hits == before + 1, "the earlier SIGSEGV handler was not called");
    munmap(p, (size_t)page);
}

static void test_overflow(void)
{
    const char *err;
    int rc;
    /* (Under ASan too: it lets the program install a SEGV handler over its
     * own, allow_user_segv_handler=1 being its default.) */
    /* fibers: deep recursion, one thread of one block */
    rc = run_overflow(1, 0, 1 << 24, 0, 1, &err);
    CHECK(is_overflow(rc, err), "fiber recursion: rc=%d err=%s", rc, err ? err : "(null)");
    CHECK(!err || strstr(err, "KiB"), "no size in: %s", err);
    /* again (the signal mask and the alternate stack were restored), then a
     * big local array, in several blocks at once (pool threads too) */
    rc = run_overflow(1, 0, 1 << 24, 5, 16, &err);
    CHECK(is_overflow(rc, err), "fiber recursion, block 5 of 16: rc=%d", rc);
    rc = run_overflow(1, 1, 64 << 20, -1, 16, &err);
    CHECK(is_overflow(rc, err), "fiber local array, all 16 blocks: rc=%d err=%s", rc,
          err ? err : "(null)");
    /* the same kernel within its stack, and other kernels, still work */
    rc = run_overflow(1, 0, 20, -1, 16, &err);
    CHECK(rc == 0 && !err, "fiber recursion within the stack: rc=%d err=%s", rc, err ? err : "(null)");
    rc = run_overflow(1, 1, 8 << 10, -1, 16, &err);
    CHECK(rc == 0 && !err, "fiber local array within the stack: rc=%d", rc);
    int64_t n = 5000, want, got;
    int64_t *in = make_input(n, 11, &want);
    rc = reduce(in, n, 64, 1, &got, &err);
    CHECK(rc == 0 && got == want, "reduction after an overflow: rc=%d", rc);

    /* block functions: on a guarded stack of at least 8 MiB (asm switch
     * only: under the ucontext fallback they run on the thread's stack) */
#ifndef GJ_CPU_FORCE_UCONTEXT
    rc = run_overflow(0, 0, 1 << 24, 3, 8, &err);
    CHECK(is_overflow(rc, err), "block recursion: rc=%d err=%s", rc, err ? err : "(null)");
    rc = run_overflow(0, 1, 256 << 20, -1, 8, &err);
    CHECK(is_overflow(rc, err), "block local array: rc=%d err=%s", rc, err ? err : "(null)");
#endif
    rc = run_overflow(0, 1, 1 << 20, -1, 8, &err); /* 1 MiB: more than a fiber has */
    CHECK(rc == 0 && !err, "block local array within the stack: rc=%d err=%s", rc,
          err ? err : "(null)");
    rc = run_overflow(0, 0, 2000, -1, 8, &err);
    CHECK(rc == 0 && !err, "block recursion within the stack: rc=%d", rc);
    rc = reduce(in, n, 64, 1, &got, &err);
    CHECK(rc == 0 && got == want, "reduction after a block overflow: rc=%d", rc);
    free(in);
    test_fault_chain();
}

int main(int argc, char **argv)
{
    int do_bench = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-bench") == 0)
            do_bench = 0;
        else if (strcmp(argv[i], "--small") == 0)
            small = 1;
        else {
            fprintf(stderr, "usage: test_cpu [--no-bench] [--small]\n");
            return 2;
        }
    }
    alarm(300); /* a hang is a failure too */
    install_chain_handler(); /* before the first launch installs gpujit's */
    test_iota();
    test_reduce();
    test_early_return();
    test_trap();
    test_stop();
    test_coop();
    test_indices();
    test_edges();
    test_fpenv();
    test_concurrent();
    test_overflow();
    test_race();
    if (do_bench)
        bench();
    if (failures) {
        printf("test_cpu: %d FAILED\n", failures);
        return 1;
    }
    printf("test_cpu: all passed\n");
    return 0;
}
