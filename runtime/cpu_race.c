/* cpu_race.c: the race detector of kernels compiled with racecheck=True
 * (GjBlockCtx.race). Each access of a shared or global array element passes
 * its address, size, kind and source site; each worker keeps a shadow of the
 * bytes its current block touched, and two accesses of one byte by two
 * threads of the block conflict (at least one writes, not both atomics)
 * unless a barrier both passed separates them. The scheduler (runtime/cpu.c)
 * counts barriers: `epoch` is the number of syncthreads() the block has
 * released, `wepoch[w]` the number of syncwarp() warp w has released, so two
 * accesses are ordered iff their epochs differ, or they are of one warp and
 * their warp epochs differ. Racecheck kernels run as fibers (or, without
 * barriers, as one loop over the threads), where those counts are exact.
 *
 * The shadow is a hash table of 8-byte granules, each with a record per
 * byte of its last write and of up to two reads since (of two different
 * threads, so that a write finds a read by another thread if there was one:
 * the latest reader and the earliest other one).
 * Entries carry the block's generation: a new block makes every entry stale
 * without clearing the table. The table stops growing at MAX_SLOTS: a block
 * that touches more memory than that holds is checked in windows (its
 * shadow starts afresh when full, so a race between two windows is missed). Hazards go to the launch's log (cpu_race_log),
 * the first few distinct pairs of sites with their details, and a count of
 * all. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

typedef struct Acc {
    uint32_t tid1;   /* linear thread index + 1; 0: none */
    uint32_t epoch;  /* the block's barrier epoch at the access */
    uint32_t wepoch; /* its warp's syncwarp epoch */
    int32_t sf;      /* site << GJ_RACE_SITE_SHIFT | flags */
} Acc;

typedef struct Shadow {
    Acc w, r1, r2;
} Shadow;

typedef struct Granule {
    uintptr_t key; /* address >> 3 */
    uint64_t gen;  /* the block it belongs to; another is a free slot */
    Shadow b[8];
} Granule;

/* distinct hazards a worker has passed on in this launch (it counts the rest); the most
 * slots of a worker's table (2^17 of 400 bytes: 52 MB, about 0.75 MiB of a block's bytes):
 * a block that touches more starts its shadow afresh each time it is full */
enum { SEEN_MAX = 64, MAX_SLOTS = 1 << 17 };

struct CpuRace {
    Granule *tab;
    size_t cap, used; /* slots (a power of two), those of this generation */
    uint64_t gen;
    uint32_t epoch;
    uint32_t *wepoch;
    size_t nwarps_cap;
    uint32_t nthreads;
    int32_t ntid[3], ctaid[3];
    const char *shared;
    size_t shared_bytes;
    GjRaceLog *log;
    uint64_t launch;   /* the launch `seen` belongs to */
    uint32_t nseen;
    uint64_t seen[SEEN_MAX];
    int failed;        /* out of memory: the block is no longer checked */
};

static uint64_t launch_serial;

void cpu_race_log_begin(GjRaceLog *log) {
    memset(log, 0, sizeof *log);
    atomic_init(&log->total, 0);
    pthread_mutex_init(&log->mu, NULL);
    log->serial = ++launch_serial; /* under the pool's launch lock */
}

void cpu_race_log_end(GjRaceLog *log) { pthread_mutex_destroy(&log->mu); }

void cpu_race_free(CpuRace *r) {
    if (!r) return;
    free(r->tab);
    free(r->wepoch);
    free(r);
}

static size_t slot_of(uintptr_t key, size_t cap) { return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1); }

static int grow(CpuRace *r) {
    size_t cap = r->cap ? r->cap * 2 : 4096;
    Granule *t = calloc(cap, sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < r->cap; i++) {
        Granule *g = &r->tab[i];
        if (g->gen != r->gen) continue;
        size_t s = slot_of(g->key, cap);
        while (t[s].gen == r->gen) s = (s + 1) & (cap - 1);
        t[s] = *g;
    }
    free(r->tab);
    r->tab = t;
    r->cap = cap;
    return 0;
}

/* The granule of `key` in this block, made where there is none; NULL when out of memory. */
static Granule *granule(CpuRace *r, uintptr_t key) {
    if ((r->used + 1) * 4 > r->cap * 3) {
        if (r->cap >= MAX_SLOTS)
            r->gen++, r->used = 0; /* full: every entry stale (the epochs stay) */
        else if (grow(r) < 0)
            return NULL;
    }
    size_t s = slot_of(key, r->cap);
    for (;;) {
        Granule *g = &r->tab[s];
        if (g->gen != r->gen) {
            memset(g, 0, sizeof *g);
            g->key = key;
            g->gen = r->gen;
            r->used++;
            return g;
        }
        if (g->key == key) return g;
        s = (s + 1) & (r->cap - 1);
    }
}

int cpu_race_block(CpuRace **rp, GjBlockCtx *blk, GjRaceLog *log) {
    CpuRace *r = *rp;
    if (!r && !(r = *rp = calloc(1, sizeof *r))) return -1;
    uint32_t n = (uint32_t)blk->ntid[0] * (uint32_t)blk->ntid[1] * (uint32_t)blk->ntid[2];
    size_t nw = (n + 31) / 32;
    if (nw > r->nwarps_cap) {
        uint32_t *w = realloc(r->wepoch, nw * sizeof *w);
        if (!w) return -1;
        r->wepoch = w;
        r->nwarps_cap = nw;
    }
    memset(r->wepoch, 0, nw * sizeof *r->wepoch);
    r->gen++;
    r->used = 0;
    r->epoch = 0;
    r->nthreads = n;
    memcpy(r->ntid, blk->ntid, sizeof r->ntid);
    memcpy(r->ctaid, blk->ctaid, sizeof r->ctaid);
    r->shared = blk->shared;
    r->shared_bytes = blk->shared_bytes;
    r->failed = 0;
    r->log = log;
    if (r->launch != log->serial) r->launch = log->serial, r->nseen = 0;
    blk->race_state = r;
    return 0;
}

void cpu_race_barrier(CpuRace *r) {
    if (r) r->epoch++;
}

void cpu_race_warp_sync(CpuRace *r, uint32_t warp) {
    if (r && warp < r->nwarps_cap) r->wepoch[warp]++;
}

/* Are two accesses of different threads unordered (no barrier both passed between them)? */
static int unordered(const Acc *a, const Acc *b) {
    if (a->epoch != b->epoch) return 0;
    return (a->tid1 - 1) / 32 != (b->tid1 - 1) / 32 || a->wepoch == b->wepoch;
}

static void tid3(const CpuRace *r, uint32_t lin, int32_t *t) {
    t[0] = (int32_t)(lin % (uint32_t)r->ntid[0]);
    t[1] = (int32_t)(lin / (uint32_t)r->ntid[0] % (uint32_t)r->ntid[1]);
    t[2] = (int32_t)(lin / (uint32_t)r->ntid[0] / (uint32_t)r->ntid[1]);
}

/* A hazard between the earlier access `a` and the current one `b` at addr. */
static void hazard(CpuRace *r, int kind, const Acc *a, const Acc *b, const char *addr) {
    uint64_t key = (uint64_t)(uint32_t)(a->sf >> GJ_RACE_SITE_SHIFT) << 34 |
                   (uint64_t)(uint32_t)(b->sf >> GJ_RACE_SITE_SHIFT) << 2 | (uint64_t)kind;
    GjRaceLog *log = r->log;
    for (uint32_t i = 0; i < r->nseen; i++)
        if (r->seen[i] == key) {
            atomic_fetch_add_explicit(&log->total, 1, memory_order_relaxed);
            return;
        }
    if (r->nseen < SEEN_MAX) r->seen[r->nseen++] = key;
    atomic_fetch_add_explicit(&log->total, 1, memory_order_relaxed);
    pthread_mutex_lock(&log->mu);
    int dup = 0;
    for (uint32_t i = 0; i < log->n && !dup; i++) dup = log->keys[i] == key;
    if (!dup && log->n < GJ_RACE_REPORTS) {
        GjRaceReport *p = &log->reports[log->n];
        log->keys[log->n++] = key;
        p->kind = kind;
        memcpy(p->ctaid, r->ctaid, sizeof p->ctaid);
        tid3(r, a->tid1 - 1, p->tid[0]);
        tid3(r, b->tid1 - 1, p->tid[1]);
        p->site[0] = a->sf >> GJ_RACE_SITE_SHIFT;
        p->site[1] = b->sf >> GJ_RACE_SITE_SHIFT;
        p->flags[0] = a->sf & ((1 << GJ_RACE_SITE_SHIFT) - 1);
        p->flags[1] = b->sf & ((1 << GJ_RACE_SITE_SHIFT) - 1);
        p->addr = (uintptr_t)addr;
        p->shared_off = addr >= r->shared && (size_t)(addr - r->shared) < r->shared_bytes
                                ? (int64_t)(addr - r->shared)
                                : -1;
    }
    pthread_mutex_unlock(&log->mu);
}

/* One byte's records against access c, then c recorded. */
static void check_byte(CpuRace *r, Shadow *s, const Acc *c, const char *addr) {
    int write = c->sf & GJ_RACE_WRITE, atom = c->sf & GJ_RACE_ATOMIC;
    const Acc *w = &s->w;
    if (w->tid1 && w->tid1 != c->tid1 && unordered(w, c) && !(atom && (w->sf & GJ_RACE_ATOMIC)))
        hazard(r, write ? GJ_RACE_WAW : GJ_RACE_RAW, w, c, addr);
    if (write) {
        const Acc *rd[2] = {&s->r1, &s->r2};
        for (int i = 0; i < 2; i++)
            if (rd[i]->tid1 && rd[i]->tid1 != c->tid1 && unordered(rd[i], c)) hazard(r, GJ_RACE_WAR, rd[i], c, addr);
        s->w = *c;
        s->r1.tid1 = s->r2.tid1 = 0;
        return;
    }
    /* r2 keeps the earliest reader of the epoch other than r1 that the read of c does not
     * displace, so that a later write by a third thread still finds one */
    if (s->r1.tid1 && s->r1.tid1 != c->tid1 &&
        !(s->r2.tid1 && s->r2.tid1 != c->tid1 && s->r2.epoch == c->epoch && s->r2.epoch == s->r1.epoch))
        s->r2 = s->r1;
    s->r1 = *c;
}

void cpu_race_access(GjBlockCtx *blk, const void *addr, uint64_t size, int32_t sf, int32_t tx, int32_t ty,
                     int32_t tz) {
    CpuRace *r = blk->race_state;
    if (!r || r->failed || !size) return;
    uint32_t lin = (uint32_t)tx + (uint32_t)blk->ntid[0] * ((uint32_t)ty + (uint32_t)blk->ntid[1] * (uint32_t)tz);
    Acc c = {.tid1 = lin + 1, .epoch = r->epoch, .wepoch = r->wepoch[lin / 32], .sf = sf};
    const char *p = addr, *end = p + size;
    while (p < end) {
        uintptr_t key = (uintptr_t)p >> 3;
        Granule *g = granule(r, key);
        if (!g) {
            r->failed = 1; /* out of memory: stop checking this block rather than fail it */
            return;
        }
        size_t i = (uintptr_t)p & 7;
        for (; i < 8 && p < end; i++, p++) check_byte(r, &g->b[i], &c, p);
    }
}

void cpu_race_noop(GjBlockCtx *blk, const void *addr, uint64_t size, int32_t sf, int32_t tx, int32_t ty,
                   int32_t tz) {
    (void)blk, (void)addr, (void)size, (void)sf, (void)tx, (void)ty, (void)tz;
}
