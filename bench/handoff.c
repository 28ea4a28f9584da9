/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hand-off of one contended lock: K contenders, each with its own
 * client, all on one loop, take one resource, hold it for a random critical
 * section, release it and ask again at once. What it measures is the time
 * the lock sits free between holders (the hand-off gap), so the retry policy
 * is the config's default: the figures show how waiters find a free lock.
 *
 * One loop for all contenders: every event is seen in order on one thread,
 * so a release and the next acquire are timed on one clock without
 * cross-thread skew, and the contenders' own CPU work (microseconds per
 * attempt) is small next to the critical sections (milliseconds).
 *
 * Contender states:
 *
 *   WAITING --acquired--> HOLDING --section over--> RELEASING
 *      ^  \--failed--+                                  |
 *      +-------------+----------released----------------+
 *   any --deadline passed, at the next event--> DONE
 *
 * The deadline stops new attempts; operations in flight finish (an acquire
 * that succeeds late is released at once and not counted). A hard limit
 * past the deadline ends the loop whatever is still in flight.
 */
#include "bench.h"

#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HANDOFF_RESOURCE "bench:handoff"
#define HARD_LIMIT_AFTER_DEADLINE_S 30.0

typedef struct handoff_bench handoff_bench;

typedef enum contender_state { C_WAITING, C_HOLDING, C_RELEASING, C_DONE } contender_state;

typedef struct contender {
    handoff_bench *b;
    unsigned index;
    contender_state state;
    redlock_client *client;
    ev_timer section;       /* the critical section */
    redlock_lock *lock;     /* while HOLDING */
    int64_t wanted_ns;      /* first request since the last hold: failures extend a wait */
    int64_t max_wait_ns;    /* completed waits, and one still open at the deadline */
    int64_t acquired_ns;
    int64_t release_ns;     /* release asked */
    unsigned long acquisitions, failures;
    samples waits;          /* wanted to acquired, ns */
} contender;

struct handoff_bench {
    struct ev_loop *loop;
    const handoff_options *opt;
    measurement *m;
    int64_t start_ns, deadline_ns;
    uint64_t rng;
    unsigned active;        /* contenders not DONE */
    unsigned long attempts; /* over the acquires counted, done or failed */
    unsigned holders;       /* contenders HOLDING or RELEASING: at most 1 */
    int64_t busy_since_ns;  /* when holders went 0 -> 1 */
    int64_t busy_ns;        /* lock held, within [start, deadline] */
    int64_t free_since_ns;  /* last release completed with no holder; 0: none */
    samples gaps;
    samples gaps_other;     /* the next holder another contender */
    int last_holder;        /* -1: none yet */
    unsigned long overlaps; /* acquired before the previous release reported */
    ev_timer hard_limit;
    contender c[BENCH_MAX_CONTENDERS];
};

static void contender_request(contender *c);

static bool before_deadline(const handoff_bench *b, int64_t now)
{
    return now < b->deadline_ns;
}

/* Time within [start, deadline] only. */
static int64_t clip(const handoff_bench *b, int64_t t)
{
    return t > b->deadline_ns ? b->deadline_ns : t;
}

static void contender_done(contender *c)
{
    c->state = C_DONE;
    if (--c->b->active == 0)
        ev_break(c->b->loop, EVBREAK_ONE);
}

/* Next attempt, or DONE once the deadline has passed. */
static void contender_next(contender *c)
{
    if (before_deadline(c->b, tc_now_ns()))
        contender_request(c);
    else
        contender_done(c);
}

static void on_released(int status, const redlock_result *r, void *arg)
{
    (void)r;
    contender *c = arg;
    handoff_bench *b = c->b;
    int64_t now = tc_now_ns();
    if (status != REDLOCK_OK && status != REDLOCK_ECANCELED)
        b->m->failures++;
    if (status == REDLOCK_OK && before_deadline(b, c->acquired_ns)) {
        samples_add(&b->m->release, now - c->release_ns);
        samples_add(&b->m->pair, now - c->wanted_ns);
    }
    if (--b->holders == 0) {
        b->busy_ns += clip(b, now) - clip(b, b->busy_since_ns);
        b->free_since_ns = now;
    }
    c->wanted_ns = 0;
    if (status == REDLOCK_ECANCELED)
        contender_done(c);
    else
        contender_next(c);
}

static void release(contender *c, redlock_lock *lock)
{
    c->state = C_RELEASING;
    c->release_ns = tc_now_ns();
    int rc = redlock_release_async(c->client, lock, on_released, c);
    if (rc != REDLOCK_OK)
        on_released(rc, NULL, c);
}

static void on_section_over(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop, (void)revents;
    contender *c = t->data;
    redlock_lock *lock = c->lock;
    c->lock = NULL;
    release(c, lock);
    redlock_lock_free(lock); /* the release copies what it needs */
}

/* A random critical section in [min, max] ms (xorshift: no libc state). */
static double section_seconds(handoff_bench *b)
{
    b->rng ^= b->rng << 13;
    b->rng ^= b->rng >> 7;
    b->rng ^= b->rng << 17;
    int span = b->opt->hold_max_ms - b->opt->hold_min_ms + 1;
    return (double)(b->opt->hold_min_ms + (int)(b->rng % (uint64_t)span)) / 1000.0;
}

static void on_acquired(int status, redlock_lock *lock, const redlock_result *r, void *arg)
{
    contender *c = arg;
    handoff_bench *b = c->b;
    int64_t now = tc_now_ns();
    if (status == REDLOCK_ECANCELED) {
        contender_done(c);
        return;
    }
    bool counted = before_deadline(b, now);
    if (counted && r != NULL)
        b->attempts += r->attempts;
    int64_t wait = clip(b, now) - c->wanted_ns;
    if (wait > c->max_wait_ns)
        c->max_wait_ns = wait; /* still waiting at the deadline counts up to it */
    if (status != REDLOCK_OK) {
        if (counted) {
            c->failures++;
            b->m->failures++;
        }
        contender_next(c);
        return;
    }
    c->state = C_HOLDING;
    c->acquired_ns = now;
    if (b->holders++ == 0)
        b->busy_since_ns = now;
    if (counted) {
        c->acquisitions++;
        b->m->pairs++;
        samples_add(&c->waits, now - c->wanted_ns);
        samples_add(&b->m->acquire, now - c->wanted_ns);
        int64_t gap = -1;
        if (b->holders > 1) {
            b->overlaps++; /* the previous holder's release is not yet reported */
            gap = 0;
        } else if (b->free_since_ns != 0) {
            gap = now - b->free_since_ns;
        }
        if (gap >= 0) {
            samples_add(&b->gaps, gap);
            if (b->last_holder != (int)c->index)
                samples_add(&b->gaps_other, gap);
        }
        b->last_holder = (int)c->index;
    }
    b->free_since_ns = 0;
    if (!counted) {
        c->lock = NULL;
        release(c, lock);
        redlock_lock_free(lock);
        return;
    }
    c->lock = lock;
    ev_timer_set(&c->section, section_seconds(b), 0.);
    ev_timer_start(b->loop, &c->section);
}

static void contender_request(contender *c)
{
    c->state = C_WAITING;
    if (c->wanted_ns == 0)
        c->wanted_ns = tc_now_ns();
    int rc = redlock_acquire_async(c->client, HANDOFF_RESOURCE, sizeof(HANDOFF_RESOURCE) - 1,
                                   NULL, on_acquired, c);
    if (rc != REDLOCK_OK) {
        c->b->m->failures++;
        contender_done(c);
    }
}

static void on_hard_limit(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)t, (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

/* The summary figures, and the worst contender: the longest wait. */
static void summarize(handoff_bench *b, handoff_figures *f)
{
    const handoff_options *o = b->opt;
    f->contenders = o->contenders;
    f->hold_min_ms = o->hold_min_ms;
    f->hold_max_ms = o->hold_max_ms;
    f->acquisitions = b->m->pairs;
    f->failures = b->m->failures;
    unsigned long acquires = f->acquisitions + f->failures;
    f->attempts_per_acquire = acquires > 0 ? (double)b->attempts / (double)acquires : 0;
    f->overlaps = b->overlaps;
    f->gaps = b->gaps.n;
    f->gap_p50_us = samples_quantile_us(&b->gaps, 0.5);
    f->gap_p90_us = samples_quantile_us(&b->gaps, 0.9);
    f->gap_p99_us = samples_quantile_us(&b->gaps, 0.99);
    f->gaps_other = b->gaps_other.n;
    f->other_p50_us = samples_quantile_us(&b->gaps_other, 0.5);
    f->other_p90_us = samples_quantile_us(&b->gaps_other, 0.9);
    f->other_p99_us = samples_quantile_us(&b->gaps_other, 0.99);
    int64_t window = b->deadline_ns - b->start_ns;
    f->busy_fraction = window > 0 ? (double)b->busy_ns / (double)window : 0;
    f->worst = 0;
    for (unsigned i = 0; i < o->contenders; i++) {
        contender *c = &b->c[i];
        contender_figures *cf = &f->per[i];
        cf->acquisitions = c->acquisitions;
        cf->failures = c->failures;
        cf->wait_p99_us = samples_quantile_us(&c->waits, 0.99);
        cf->wait_max_us = (double)c->max_wait_ns / 1000.0;
        if (cf->wait_max_us > f->per[f->worst].wait_max_us)
            f->worst = i;
    }
}

static void run_contenders(handoff_bench *b, double seconds)
{
    b->start_ns = tc_now_ns();
    b->deadline_ns = b->start_ns + (int64_t)(seconds * 1e9);
    ev_timer_init(&b->hard_limit, on_hard_limit, seconds + HARD_LIMIT_AFTER_DEADLINE_S, 0.);
    ev_timer_start(b->loop, &b->hard_limit);
    b->active = b->opt->contenders;
    for (unsigned i = 0; i < b->opt->contenders && b->active > 0; i++)
        contender_request(&b->c[i]);
    if (b->active > 0)
        ev_run(b->loop, 0);
    ev_timer_stop(b->loop, &b->hard_limit);
    /* Still waiting when the hard limit ended the loop: open up to the deadline. */
    for (unsigned i = 0; i < b->opt->contenders; i++) {
        contender *c = &b->c[i];
        if (c->state == C_WAITING && clip(b, tc_now_ns()) - c->wanted_ns > c->max_wait_ns)
            c->max_wait_ns = clip(b, tc_now_ns()) - c->wanted_ns;
    }
    /* Held past the deadline: busy up to the deadline. */
    if (b->holders > 0)
        b->busy_ns += clip(b, tc_now_ns()) - clip(b, b->busy_since_ns);
}

int lib_handoff_run(const bench_masters *masters, const handoff_options *opt, measurement *m,
                    handoff_figures *f)
{
    if (opt->contenders == 0 || opt->contenders > BENCH_MAX_CONTENDERS ||
        opt->hold_min_ms < 0 || opt->hold_max_ms < opt->hold_min_ms)
        return -1;
    handoff_bench *b = calloc(1, sizeof(*b));
    /* The config's default retry policy, not the bench's; waiting by
     * notification or on the timer alone, as asked. */
    redlock_config *cfg = bench_config_default_retry(masters);
    if (cfg != NULL)
        redlock_config_set(cfg, REDLOCK_WAIT_BY_NOTIFICATION, opt->notify);
    if (b == NULL || cfg == NULL) {
        free(b);
        redlock_config_free(cfg);
        return -1;
    }
    b->loop = ev_loop_new(EVFLAG_AUTO);
    b->opt = opt;
    b->m = m;
    b->rng = 0x9e3779b97f4a7c15U;
    b->last_holder = -1;
    m->bytes_in_flight = -1;
    int rc = b->loop != NULL ? 0 : -1;
    for (unsigned i = 0; i < opt->contenders && rc == 0; i++) {
        contender *c = &b->c[i];
        *c = (contender){.b = b, .index = i, .state = C_DONE};
        ev_timer_init(&c->section, on_section_over, 0., 0.);
        c->section.data = c;
        if (redlock_client_new(&c->client, cfg, b->loop) != REDLOCK_OK)
            rc = -1;
    }
    redlock_config_free(cfg);
    if (rc == 0) {
        stopwatch w;
        stopwatch_start(&w);
        run_contenders(b, opt->seconds);
        stopwatch_stop(&w, m);
        m->seconds = opt->seconds; /* rates over the measured window */
        summarize(b, f);
    }
    for (unsigned i = 0; i < opt->contenders; i++) {
        if (b->loop != NULL)
            ev_timer_stop(b->loop, &b->c[i].section);
        redlock_lock_free(b->c[i].lock);
        redlock_client_free(b->c[i].client);
        samples_free(&b->c[i].waits);
    }
    samples_free(&b->gaps);
    samples_free(&b->gaps_other);
    if (b->loop != NULL) {
        ev_run(b->loop, 0); /* let the clients close */
        ev_loop_destroy(b->loop);
    }
    free(b);
    return rc;
}
