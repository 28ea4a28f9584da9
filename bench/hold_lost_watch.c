/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lost watch: a thread with blocking connections of its own that looks,
 * from outside, at the keys of locks the client reported lost. It reads
 * their PTTL on every master 1.5 s and 3 s after the report. A key's PTTL
 * says when it was last set or extended: an extension executed at x leaves
 * PTTL = x + TTL - t at the reading t, so a reading sent at s with PTTL p
 * proves an extension at or after s - TTL + p - 1 ms (PTTL is truncated).
 * One later than the report plus HOLD_LOST_QUIET_NS means the client still
 * sent for a lock it had given up. Keys gone (released, or expired) prove
 * nothing either way and are counted apart.
 */
#include "hold.h"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WATCH_TIMEOUT_MS 1000
#define WATCH_PERIOD_NS 50000000LL                   /* how often due checks run */
static const int64_t check_after_ns[HOLD_LOST_CHECKS] = {1500000000LL, 3000000000LL};

typedef struct watched {
    unsigned long index;
    int64_t lost_ns;
    unsigned checks_done;
} watched;

struct hold_lost_watch {
    bench_masters ms;
    char prefix[HOLD_PREFIX_SIZE];
    int64_t ttl_ns;
    redisContext *conn[BENCH_MAX_MASTERS];
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;                 /* CLOCK_MONOTONIC */
    bool stop;                         /* under mu */
    watched locks[HOLD_LOST_WATCHED];  /* under mu */
    watched due[HOLD_LOST_WATCHED];    /* the thread's: the checks due now */
    size_t n;                          /* under mu */
    unsigned long not_watched;         /* reported past the room, under mu */
    hold_lost_figures fig;             /* the thread's own until joined */
};

/* The readings of one master for the locks in due[0..n): PTTL each, in one
 * pipeline; what they prove goes into fig. */
static void read_master(hold_lost_watch *w, size_t i, const watched *due, size_t n)
{
    if (w->conn[i] == NULL)
        w->conn[i] = hold_master_connect(&w->ms, i, WATCH_TIMEOUT_MS);
    redisContext *c = w->conn[i];
    if (c == NULL) {
        w->fig.errors += n;
        return;
    }
    for (size_t k = 0; k < n; k++)
        redisAppendCommand(c, "PTTL %s%lu", w->prefix, due[k].index);
    int64_t sent_ns = tc_now_ns(); /* the pipeline is written by the first read */
    bool ok = true;
    for (size_t k = 0; k < n; k++) {
        void *reply = NULL;
        if (ok)
            ok = redisGetReply(c, &reply) == REDIS_OK;
        const redisReply *r = reply;
        if (!ok || r == NULL || r->type != REDIS_REPLY_INTEGER) {
            w->fig.errors++;
        } else if (r->integer < 0) {
            w->fig.gone++;
        } else {
            w->fig.present++;
            int64_t extended_ns = sent_ns - w->ttl_ns + r->integer * 1000000 - 1000000;
            int64_t after_ns = extended_ns - due[k].lost_ns;
            if (after_ns > w->fig.latest_after_ns)
                w->fig.latest_after_ns = after_ns;
            if (after_ns > HOLD_LOST_QUIET_NS)
                w->fig.extended_late++;
        }
        if (reply != NULL)
            freeReplyObject(reply);
    }
    if (!ok) { /* out of step with its replies: start afresh next time */
        redisFree(c);
        w->conn[i] = NULL;
    }
}

/* Copy out the checks due now (and count them done); how many. */
static size_t take_due(hold_lost_watch *w, watched *due, int64_t now)
{
    size_t n = 0;
    pthread_mutex_lock(&w->mu);
    for (size_t k = 0; k < w->n; k++) {
        watched *l = &w->locks[k];
        if (l->checks_done < HOLD_LOST_CHECKS && now >= l->lost_ns + check_after_ns[l->checks_done]) {
            if (l->checks_done == 0)
                w->fig.checked++;
            l->checks_done++;
            due[n++] = *l;
        }
    }
    pthread_mutex_unlock(&w->mu);
    return n;
}

static void *watch_main(void *arg)
{
    hold_lost_watch *w = arg;
    for (;;) {
        int64_t now = tc_now_ns();
        size_t n = take_due(w, w->due, now);
        if (n > 0) {
            w->fig.readings += n;
            for (size_t i = 0; i < w->ms.n; i++)
                read_master(w, i, w->due, n);
        }
        int64_t at = now + WATCH_PERIOD_NS;
        struct timespec ts = {.tv_sec = (time_t)(at / 1000000000), .tv_nsec = (long)(at % 1000000000)};
        pthread_mutex_lock(&w->mu);
        while (!w->stop && tc_now_ns() < at)
            pthread_cond_timedwait(&w->cv, &w->mu, &ts);
        bool stop = w->stop;
        pthread_mutex_unlock(&w->mu);
        if (stop)
            break;
    }
    for (size_t i = 0; i < w->ms.n; i++)
        if (w->conn[i] != NULL)
            redisFree(w->conn[i]);
    return NULL;
}

hold_lost_watch *hold_lost_watch_start(const bench_masters *ms, const char *prefix, int64_t ttl_ms)
{
    hold_lost_watch *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return NULL;
    w->ms = *ms;
    snprintf(w->prefix, sizeof(w->prefix), "%s", prefix);
    w->ttl_ns = ttl_ms * 1000000;
    w->fig.latest_after_ns = INT64_MIN;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    bool cv = pthread_cond_init(&w->cv, &attr) == 0;
    pthread_condattr_destroy(&attr);
    bool mu = pthread_mutex_init(&w->mu, NULL) == 0;
    if (!cv || !mu || pthread_create(&w->thread, NULL, watch_main, w) != 0) {
        if (cv)
            pthread_cond_destroy(&w->cv);
        if (mu)
            pthread_mutex_destroy(&w->mu);
        free(w);
        return NULL;
    }
    return w;
}

void hold_lost_watch_add(hold_lost_watch *w, unsigned long index, int64_t lost_ns)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->mu);
    if (w->n < HOLD_LOST_WATCHED)
        w->locks[w->n++] = (watched){.index = index, .lost_ns = lost_ns};
    else
        w->not_watched++;
    pthread_mutex_unlock(&w->mu);
}

void hold_lost_watch_stop(hold_lost_watch *w, hold_lost_figures *out)
{
    memset(out, 0, sizeof(*out));
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    *out = w->fig;
    out->watched = w->n;
    out->not_watched = w->not_watched;
    out->measured = true;
    free(w);
}
