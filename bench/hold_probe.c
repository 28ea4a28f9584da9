/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The probe: a thread with blocking connections of its own that reads every
 * master once a period while the locks are held -- INFO commandstats (how
 * many extension scripts each master ran so far) and the PTTL of a sample
 * of held keys, pipelined, one round trip per master -- so that the
 * client's loop is never stalled by it. Then what the readings say.
 */
#include "hold.h"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROBE_TIMEOUT_MS 1000

struct hold_probe {
    bench_masters ms;
    char prefix[HOLD_PREFIX_SIZE];
    unsigned long keys[HOLD_SAMPLE_KEYS];
    size_t nkeys;
    int64_t period_ns;
    probe_tick *ticks;
    size_t nticks, max_ticks;
    redisContext *conn[BENCH_MAX_MASTERS];
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* CLOCK_MONOTONIC */
    bool stop;              /* under mu */
};

/* One PTTL reply into the tick. */
static void count_pttl(probe_tick *t, const redisReply *r)
{
    if (r == NULL || r->type != REDIS_REPLY_INTEGER) {
        t->pttl_errors++;
        return;
    }
    t->pttl_reads++;
    if (r->integer == -2)
        t->pttl_absent++;
    else if (r->integer >= 0 && (t->pttl_min < 0 || r->integer < t->pttl_min))
        t->pttl_min = r->integer;
}

/* INFO commandstats and the sample's PTTLs on master i, in one pipeline. */
static void read_master(hold_probe *p, size_t i, probe_tick *t)
{
    t->calls[i] = -1;
    if (p->conn[i] == NULL)
        p->conn[i] = hold_master_connect(&p->ms, i, PROBE_TIMEOUT_MS);
    if (p->conn[i] == NULL) {
        t->pttl_errors += p->nkeys;
        return;
    }
    redisContext *c = p->conn[i];
    redisAppendCommand(c, "INFO commandstats");
    for (size_t k = 0; k < p->nkeys; k++)
        redisAppendCommand(c, "PTTL %s%lu", p->prefix, p->keys[k]);
    void *reply = NULL;
    bool ok = redisGetReply(c, &reply) == REDIS_OK;
    t->t_ns[i] = tc_now_ns();
    const redisReply *info = reply;
    if (ok && info != NULL && info->type == REDIS_REPLY_STRING)
        t->calls[i] = hold_script_calls(info->str);
    if (reply != NULL)
        freeReplyObject(reply);
    for (size_t k = 0; k < p->nkeys; k++) {
        reply = NULL;
        if (ok)
            ok = redisGetReply(c, &reply) == REDIS_OK;
        count_pttl(t, ok ? reply : NULL);
        if (reply != NULL)
            freeReplyObject(reply);
    }
    if (!ok) { /* out of step with its replies: start afresh next time */
        redisFree(c);
        p->conn[i] = NULL;
    }
}

/* Sleep until at_ns; false when told to stop. */
static bool wait_until(hold_probe *p, int64_t at_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(at_ns / 1000000000),
                          .tv_nsec = (long)(at_ns % 1000000000)};
    pthread_mutex_lock(&p->mu);
    while (!p->stop && tc_now_ns() < at_ns)
        pthread_cond_timedwait(&p->cv, &p->mu, &ts);
    bool go = !p->stop;
    pthread_mutex_unlock(&p->mu);
    return go;
}

static void *probe_main(void *arg)
{
    hold_probe *p = arg;
    int64_t next = tc_now_ns();
    while (p->nticks < p->max_ticks) {
        probe_tick *t = &p->ticks[p->nticks++];
        memset(t, 0, sizeof(*t));
        t->pttl_min = -1;
        for (size_t i = 0; i < p->ms.n; i++)
            read_master(p, i, t);
        t->done_ns = tc_now_ns();
        next += p->period_ns;
        if (!wait_until(p, next))
            break;
    }
    for (size_t i = 0; i < p->ms.n; i++)
        if (p->conn[i] != NULL)
            redisFree(p->conn[i]);
    return NULL;
}

hold_probe *hold_probe_start(const bench_masters *ms, const char *prefix,
                             const unsigned long *keys, size_t nkeys, int64_t period_ms,
                             size_t max_ticks)
{
    hold_probe *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->ms = *ms;
    snprintf(p->prefix, sizeof(p->prefix), "%s", prefix);
    p->nkeys = nkeys < HOLD_SAMPLE_KEYS ? nkeys : HOLD_SAMPLE_KEYS;
    memcpy(p->keys, keys, p->nkeys * sizeof(*keys));
    p->period_ns = period_ms * 1000000;
    p->max_ticks = max_ticks;
    p->ticks = calloc(max_ticks, sizeof(*p->ticks));
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    bool cv = pthread_cond_init(&p->cv, &attr) == 0;
    pthread_condattr_destroy(&attr);
    bool mu = pthread_mutex_init(&p->mu, NULL) == 0;
    if (p->ticks == NULL || !cv || !mu || pthread_create(&p->thread, NULL, probe_main, p) != 0) {
        if (cv)
            pthread_cond_destroy(&p->cv);
        if (mu)
            pthread_mutex_destroy(&p->mu);
        free(p->ticks);
        free(p);
        return NULL;
    }
    return p;
}

void hold_probe_signal_stop(hold_probe *p)
{
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

size_t hold_probe_join(hold_probe *p, probe_tick **ticks)
{
    hold_probe_signal_stop(p);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    size_t n = p->nticks;
    *ticks = p->ticks;
    free(p);
    return n;
}

/* Whether every master answered tick t, and within [from_ns, to_ns]. */
static bool tick_in(const probe_tick *t, size_t masters, int64_t from_ns, int64_t to_ns)
{
    for (size_t i = 0; i < masters; i++)
        if (t->calls[i] < 0 || t->t_ns[i] < from_ns || t->t_ns[i] > to_ns)
            return false;
    return true;
}

/* Script calls per second, over all masters, from reading a to reading b. */
static double calls_per_s(const probe_tick *a, const probe_tick *b, size_t masters)
{
    double rate = 0;
    for (size_t i = 0; i < masters; i++) {
        double s = (double)(b->t_ns[i] - a->t_ns[i]) / 1e9;
        if (s > 0)
            rate += (double)(b->calls[i] - a->calls[i]) / s;
    }
    return rate;
}

static void summarize_pttl(const probe_tick *ticks, size_t n, int64_t to_ns, hold_figures *f)
{
    f->pttl_min_ms = -1;
    for (size_t k = 0; k < n; k++) {
        const probe_tick *t = &ticks[k];
        if (t->done_ns > to_ns)
            continue; /* releases may have begun */
        f->pttl_reads += t->pttl_reads;
        f->pttl_absent += t->pttl_absent;
        if (t->pttl_min >= 0 && (f->pttl_min_ms < 0 || t->pttl_min < f->pttl_min_ms))
            f->pttl_min_ms = t->pttl_min;
    }
}

void hold_probe_summarize(const probe_tick *ticks, size_t n, size_t masters, int64_t from_ns,
                          int64_t to_ns, hold_figures *f)
{
    summarize_pttl(ticks, n, to_ns, f);
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < masters; i++)
            if (ticks[k].calls[i] < 0 && ticks[k].done_ns <= to_ns)
                f->probe_failures++;
    f->calls_mean_per_s = f->calls_busiest_per_s = -1;
    const probe_tick *first = NULL;
    const probe_tick *prev = NULL;
    for (size_t k = 0; k < n; k++) {
        const probe_tick *t = &ticks[k];
        if (!tick_in(t, masters, from_ns, to_ns))
            continue;
        if (prev != NULL) {
            double rate = calls_per_s(prev, t, masters);
            if (rate > f->calls_busiest_per_s)
                f->calls_busiest_per_s = rate;
        }
        if (first == NULL)
            first = t;
        prev = t;
    }
    if (first != NULL && prev != first)
        f->calls_mean_per_s = calls_per_s(first, prev, masters);
}
