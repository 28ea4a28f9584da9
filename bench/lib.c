/* SPDX-License-Identifier: BSD-3-Clause */
/* The library under the same load as the raw baseline: acquire + release
 * pairs through the asynchronous API (K at once), the blocking API (T
 * threads sharing one client), and C clients contending for one resource. */
#include "bench.h"

#include <ev.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SLOTS 1024
#define WARMUP_PAIRS 200

typedef struct async_bench async_bench;

typedef struct slot {
    async_bench *b;
    redlock_client *client;
    unsigned index;
    unsigned long counter;
    int64_t t0, t_acquired;
} slot;

struct async_bench {
    struct ev_loop *loop;
    const bench_limits *lim;
    measurement *m;
    redlock_acquire_options opts;
    bool contended;          /* every slot on one resource */
    unsigned long started, finished;
    int64_t deadline;
    unsigned running;
    long live_before;        /* heap before the measured run */
    unsigned in_flight;
    slot slots[MAX_SLOTS];
};

static void slot_start(slot *s);

static void slot_next(slot *s)
{
    slot_start(s);
}

static void on_released(int status, const redlock_result *r, void *arg)
{
    slot *s = arg;
    async_bench *b = s->b;
    if (status != REDLOCK_OK)
        b->m->failures++;
    int64_t now = tc_now_ns();
    samples_add(&b->m->pair, now - s->t0);
    samples_add(&b->m->acquire, s->t_acquired - s->t0);
    samples_add(&b->m->release, now - s->t_acquired);
    if (++b->finished == b->lim->pairs / 2 && b->in_flight > 1)
        b->m->bytes_in_flight = (bench_live_bytes() - b->live_before) / (long)b->in_flight;
    slot_next(s);
}

static void on_acquired(int status, redlock_lock *lock, const redlock_result *r, void *arg)
{
    slot *s = arg;
    async_bench *b = s->b;
    s->t_acquired = tc_now_ns();
    if (status != REDLOCK_OK) {
        b->m->failures++;
        slot_next(s);
        return;
    }
    /* The release copies what it needs: the handle can go at once. */
    int rc = redlock_release_async(s->client, lock, on_released, s);
    redlock_lock_free(lock);
    if (rc != REDLOCK_OK) {
        b->m->failures++;
        slot_next(s);
    }
}

static void slot_start(slot *s)
{
    async_bench *b = s->b;
    if (b->started >= b->lim->pairs || tc_now_ns() >= b->deadline) {
        if (--b->running == 0)
            ev_break(b->loop, EVBREAK_ONE);
        return;
    }
    b->started++;
    s->counter++;
    char key[48];
    int len = b->contended ? snprintf(key, sizeof(key), "bench:contended")
                           : snprintf(key, sizeof(key), "bench:lib:%u:%lu", s->index, s->counter);
    s->t0 = tc_now_ns();
    if (redlock_acquire_async(s->client, key, (size_t)len, &b->opts, on_acquired, s) !=
        REDLOCK_OK) {
        b->m->failures++;
        if (--b->running == 0)
            ev_break(b->loop, EVBREAK_ONE);
    }
}

static void run_slots(async_bench *b, unsigned long pairs, double seconds)
{
    bench_limits lim = *b->lim;
    lim.pairs = pairs;
    const bench_limits *saved = b->lim;
    b->lim = &lim;
    b->started = b->finished = 0;
    b->deadline = tc_now_ns() + (int64_t)(seconds * 1e9);
    b->running = b->in_flight;
    for (unsigned i = 0; i < b->in_flight; i++)
        slot_start(&b->slots[i]);
    if (b->running > 0)
        ev_run(b->loop, 0);
    b->lim = saved;
}

static void on_fencing_init(int status, const redlock_result *r, void *arg)
{
    (void)r;
    *(int *)arg = status;
}

/* Put the masters' fencing counters in use (masters of the bench's own:
 * a new deployment), running the loop until done. */
static int init_fencing(struct ev_loop *loop, redlock_client *client)
{
    int status = 1; /* no status is positive */
    if (redlock_fencing_init_async(client, 0, on_fencing_init, &status) != REDLOCK_OK)
        return -1;
    while (status == 1)
        ev_run(loop, EVRUN_ONCE);
    return status == REDLOCK_OK ? 0 : -1;
}

/* What a run asks for: clients: 1 for the uncontended runs (K slots share
 * it), or one per slot when contended; fenced acquires, and whether to
 * put the counters in use first. */
typedef struct run_kind {
    bool contended;
    bool fenced;
    bool init_fencing;
    bool clock_off; /* clock_check off: what the masters' clock check costs */
    bool labelled;  /* holder metadata in every value: what it costs */
    const bench_fault *fault;
} run_kind;

/* bench_config(), with the masters' clock check on (the default) or off. */
static redlock_config *bench_config_clock(const bench_masters *masters, bool clock_check)
{
    redlock_config *cfg = bench_config(masters);
    if (cfg != NULL && !clock_check)
        redlock_config_set(cfg, REDLOCK_CLOCK_CHECK, REDLOCK_CLOCK_CHECK_OFF);
    return cfg;
}

static int async_run(const bench_masters *masters, const bench_limits *lim, unsigned in_flight,
                     const run_kind *kind, measurement *m)
{
    bool contended = kind->contended;
    const bench_fault *fault = kind->fault;
    if (in_flight == 0 || in_flight > MAX_SLOTS)
        return -1;
    async_bench *b = calloc(1, sizeof(*b));
    redlock_config *cfg = bench_config_clock(masters, !kind->clock_off);
    if (b == NULL || cfg == NULL) {
        free(b);
        redlock_config_free(cfg);
        return -1;
    }
    b->loop = ev_loop_new(EVFLAG_AUTO);
    b->lim = lim;
    b->in_flight = in_flight;
    b->contended = contended;
    b->m = m;
    m->bytes_in_flight = -1;
    redlock_acquire_options_init(&b->opts);
    b->opts.ttl_ms = lim->ttl_ms;
    if (contended) {
        b->opts.retry_count = 1000000;
        b->opts.wait_ms = 2000;
    }
    b->opts.fencing = kind->fenced ? 1 : 0;
    /* About what `redlock run` writes: a command line of some 60 bytes. */
    if (kind->labelled)
        b->opts.label = "/usr/local/bin/nightly-report --region eu-west-1 --full 2026";
    int rc = 0;
    unsigned clients = contended ? in_flight : 1;
    redlock_client *shared[MAX_SLOTS] = {0};
    for (unsigned i = 0; i < clients && rc == 0; i++)
        if (redlock_client_new(&shared[i], cfg, b->loop) != REDLOCK_OK)
            rc = -1;
    redlock_config_free(cfg);
    if (rc == 0 && kind->init_fencing)
        rc = init_fencing(b->loop, shared[0]);
    if (rc == 0) {
        for (unsigned i = 0; i < in_flight; i++)
            b->slots[i] = (slot){.b = b, .client = shared[contended ? i : 0], .index = i};
        measurement warm = {0};
        b->m = &warm;
        run_slots(b, WARMUP_PAIRS, 5.0);
        samples_free(&warm.pair);
        samples_free(&warm.acquire);
        samples_free(&warm.release);
        b->m = m;
        measurement_reserve(m, lim->pairs);
        if (fault != NULL)
            fault->begin(fault->arg); /* the client is connected to every master by now */
        b->live_before = bench_live_bytes();
        stopwatch w;
        stopwatch_start(&w);
        run_slots(b, lim->pairs, lim->seconds);
        m->pairs = b->finished;
        stopwatch_stop(&w, m);
        if (fault != NULL)
            fault->end(fault->arg);
    }
    for (unsigned i = 0; i < clients; i++)
        redlock_client_free(shared[i]);
    ev_run(b->loop, 0); /* let the clients close */
    ev_loop_destroy(b->loop);
    free(b);
    return rc;
}

int lib_async_run(const bench_masters *masters, const bench_limits *lim, unsigned in_flight,
                  measurement *m)
{
    run_kind kind = {0};
    return async_run(masters, lim, in_flight, &kind, m);
}

int lib_async_clock_off_run(const bench_masters *masters, const bench_limits *lim,
                            unsigned in_flight, measurement *m)
{
    run_kind kind = {.clock_off = true};
    return async_run(masters, lim, in_flight, &kind, m);
}

int lib_async_labelled_run(const bench_masters *masters, const bench_limits *lim,
                           unsigned in_flight, measurement *m)
{
    run_kind kind = {.labelled = true};
    return async_run(masters, lim, in_flight, &kind, m);
}

int lib_async_fenced_run(const bench_masters *masters, const bench_limits *lim,
                         unsigned in_flight, bool init_counters, measurement *m)
{
    run_kind kind = {.fenced = true, .init_fencing = init_counters};
    return async_run(masters, lim, in_flight, &kind, m);
}

int lib_async_run_fault(const bench_masters *masters, const bench_limits *lim,
                        unsigned in_flight, const bench_fault *fault, measurement *m)
{
    run_kind kind = {.fault = fault};
    return async_run(masters, lim, in_flight, &kind, m);
}

int lib_contended_run(const bench_masters *masters, const bench_limits *lim, unsigned clients,
                      measurement *m)
{
    run_kind kind = {.contended = true};
    return async_run(masters, lim, clients, &kind, m);
}

/* ---- Blocking API: T threads, one shared client ------------------------ */

typedef struct sync_bench {
    redlock_sync *client;
    const bench_limits *lim;
    atomic_ulong started;
    atomic_ulong failures;
    int64_t deadline;
} sync_bench;

typedef struct sync_thread {
    sync_bench *b;
    unsigned index;
    samples pair, acquire, release;
    unsigned long finished;
} sync_thread;

static void *sync_worker(void *arg)
{
    sync_thread *t = arg;
    sync_bench *b = t->b;
    redlock_acquire_options o;
    redlock_acquire_options_init(&o);
    o.ttl_ms = b->lim->ttl_ms;
    for (unsigned long counter = 0;; counter++) {
        if (atomic_fetch_add(&b->started, 1) >= b->lim->pairs || tc_now_ns() >= b->deadline)
            break;
        char key[48];
        int len = snprintf(key, sizeof(key), "bench:sync:%u:%lu", t->index, counter);
        int64_t t0 = tc_now_ns();
        redlock_lock *lock = NULL;
        if (redlock_sync_acquire(b->client, key, (size_t)len, &o, &lock, NULL) != REDLOCK_OK) {
            atomic_fetch_add(&b->failures, 1);
            continue;
        }
        int64_t t1 = tc_now_ns();
        if (redlock_sync_release(b->client, lock, NULL) != REDLOCK_OK)
            atomic_fetch_add(&b->failures, 1);
        int64_t t2 = tc_now_ns();
        redlock_lock_free(lock);
        samples_add(&t->pair, t2 - t0);
        samples_add(&t->acquire, t1 - t0);
        samples_add(&t->release, t2 - t1);
        t->finished++;
    }
    return NULL;
}

static void merge(samples *into, samples *from)
{
    for (size_t i = 0; i < from->n; i++)
        samples_add(into, from->v[i]);
    samples_free(from);
}

/* Run `pairs` through threads; fill m when m is not NULL. */
static int sync_phase(redlock_sync *client, const bench_limits *lim, unsigned threads,
                      measurement *m)
{
    sync_bench b = {.client = client, .lim = lim};
    b.deadline = tc_now_ns() + (int64_t)(lim->seconds * 1e9);
    sync_thread *ts = calloc(threads, sizeof(*ts));
    pthread_t *tids = calloc(threads, sizeof(*tids));
    if (ts == NULL || tids == NULL) {
        free(ts);
        free(tids);
        return -1;
    }
    for (unsigned i = 0; i < threads; i++) {
        ts[i] = (sync_thread){.b = &b, .index = i};
        samples_reserve(&ts[i].pair, lim->pairs / threads + 1);
        samples_reserve(&ts[i].acquire, lim->pairs / threads + 1);
        samples_reserve(&ts[i].release, lim->pairs / threads + 1);
    }
    if (m != NULL)
        measurement_reserve(m, lim->pairs);
    stopwatch w;
    stopwatch_start(&w);
    for (unsigned i = 0; i < threads; i++) {
        pthread_create(&tids[i], NULL, sync_worker, &ts[i]);
    }
    unsigned long finished = 0;
    for (unsigned i = 0; i < threads; i++) {
        pthread_join(tids[i], NULL);
        finished += ts[i].finished;
    }
    if (m != NULL) {
        m->pairs = finished;
        m->failures = atomic_load(&b.failures);
        stopwatch_stop(&w, m);
    }
    for (unsigned i = 0; i < threads; i++) {
        if (m != NULL) {
            merge(&m->pair, &ts[i].pair);
            merge(&m->acquire, &ts[i].acquire);
            merge(&m->release, &ts[i].release);
        } else {
            samples_free(&ts[i].pair);
            samples_free(&ts[i].acquire);
            samples_free(&ts[i].release);
        }
    }
    free(ts);
    free(tids);
    return 0;
}

int lib_sync_run(const bench_masters *masters, const bench_limits *lim, unsigned threads,
                 measurement *m)
{
    redlock_config *cfg = bench_config(masters);
    redlock_sync *client = NULL;
    int rc = cfg ? redlock_sync_new(&client, cfg) : REDLOCK_ENOMEM;
    redlock_config_free(cfg);
    if (rc != REDLOCK_OK)
        return -1;
    m->bytes_in_flight = -1;
    bench_limits warm = *lim;
    warm.pairs = WARMUP_PAIRS;
    warm.seconds = 5.0;
    rc = sync_phase(client, &warm, threads, NULL);
    if (rc == 0)
        rc = sync_phase(client, lim, threads, m);
    redlock_sync_free(client);
    return rc;
}
