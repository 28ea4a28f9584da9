/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The raw baseline: what a lock pair costs with no library at all. Plain
 * hiredis async on libev: SET key value NX PX ttl to every master at once,
 * then EVALSHA compare-and-delete to every master, each command formatted
 * once and sent to all. Either waits for every reply, or moves on as soon as
 * N/2+1 replies are in (the floor for a quorum lock).
 */
#include "bench.h"

#include "scripts.h"

#include <ev.h>
#include <hiredis/adapters/libev.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IN_FLIGHT 1024

typedef struct raw_bench raw_bench;

typedef struct raw_pair {
    raw_bench *b;
    unsigned slot;
    uint32_t gen;       /* which pair this slot runs now */
    int phase;          /* 0: SET, 1: release */
    unsigned replies;
    int64_t t0, t_acquired;
    unsigned long counter;
} raw_pair;

/* One request in flight: replies to an older pair of the slot are told
 * apart by gen. Recycled through a free list. */
typedef struct token {
    struct token *next;
    raw_pair *pair;
    uint32_t gen;
    int phase;
} token;

struct raw_bench {
    struct ev_loop *loop;
    size_t n;
    unsigned needed;    /* replies to move on after */
    redisAsyncContext *ac[BENCH_MAX_MASTERS];
    unsigned connected;
    char sha[41];
    const bench_limits *lim;
    measurement *m;
    unsigned long started, finished;
    int64_t deadline;
    unsigned running;
    bool closing;       /* freeing: replies no longer count */
    token *free_tokens;
    raw_pair pairs[MAX_IN_FLIGHT];
};

static token *token_get(raw_bench *b)
{
    token *t = b->free_tokens;
    if (t != NULL) {
        b->free_tokens = t->next;
        return t;
    }
    return malloc(sizeof(token));
}

static void token_put(raw_bench *b, token *t)
{
    t->next = b->free_tokens;
    b->free_tokens = t;
}

static void on_reply(redisAsyncContext *ac, void *r, void *privdata);

static void send_all(raw_bench *b, raw_pair *p, const char *cmd, size_t len)
{
    for (size_t i = 0; i < b->n; i++) {
        token *t = token_get(b);
        *t = (token){NULL, p, p->gen, p->phase};
        redisAsyncFormattedCommand(b->ac[i], on_reply, t, cmd, len);
    }
}

static void pair_start(raw_bench *b, raw_pair *p)
{
    if (b->started >= b->lim->pairs || tc_now_ns() >= b->deadline) {
        b->running--;
        if (b->running == 0)
            ev_break(b->loop, EVBREAK_ONE);
        return;
    }
    b->started++;
    p->gen++;
    p->phase = 0;
    p->replies = 0;
    p->counter++;
    char key[48];
    char value[40];
    int klen = snprintf(key, sizeof(key), "bench:raw:%u:%lu", p->slot, p->counter);
    int vlen = snprintf(value, sizeof(value), "%08x%08lx%016lx", p->slot, p->counter,
                        (unsigned long)p->gen * 2654435761UL);
    char *cmd;
    p->t0 = tc_now_ns();
    int len = redisFormatCommand(&cmd, "SET %b %b NX PX %d", key, (size_t)klen, value,
                                 (size_t)vlen, b->lim->ttl_ms);
    send_all(b, p, cmd, (size_t)len);
    redisFreeCommand(cmd);
}

static void pair_release(raw_bench *b, raw_pair *p)
{
    p->t_acquired = tc_now_ns();
    p->phase = 1;
    p->replies = 0;
    char key[48];
    char value[40];
    int klen = snprintf(key, sizeof(key), "bench:raw:%u:%lu", p->slot, p->counter);
    int vlen = snprintf(value, sizeof(value), "%08x%08lx%016lx", p->slot, p->counter,
                        (unsigned long)p->gen * 2654435761UL);
    char *cmd;
    int len = redisFormatCommand(&cmd, "EVALSHA %s 1 %b %b", b->sha, key, (size_t)klen, value,
                                 (size_t)vlen);
    send_all(b, p, cmd, (size_t)len);
    redisFreeCommand(cmd);
}

static void on_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    token *t = privdata;
    raw_pair *p = t->pair;
    raw_bench *b = p->b;
    bool current = t->gen == p->gen && t->phase == p->phase;
    redisReply *reply = r;
    token_put(b, t);
    if (!current || b->closing)
        return; /* a reply after the pair moved on, or while freeing */
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR)
        b->m->failures++;
    if (++p->replies < b->needed)
        return;
    p->replies = 0;
    if (p->phase == 0) {
        pair_release(b, p);
        return;
    }
    int64_t now = tc_now_ns();
    samples_add(&b->m->pair, now - p->t0);
    samples_add(&b->m->acquire, p->t_acquired - p->t0);
    samples_add(&b->m->release, now - p->t_acquired);
    b->finished++;
    pair_start(b, p);
}

static void on_connect(const redisAsyncContext *ac, int status)
{
    raw_bench *b = ac->data;
    b->connected += status == REDIS_OK;
    if (status != REDIS_OK)
        b->m->failures++;
}

static void on_loaded(redisAsyncContext *ac, void *r, void *privdata)
{
    raw_bench *b = privdata;
    redisReply *reply = r;
    if (reply != NULL && reply->type == REDIS_REPLY_STRING && reply->len == 40)
        memcpy(b->sha, reply->str, 40);
}

static void timeout_break(struct ev_loop *loop, ev_timer *w, int revents)
{
    ev_break(loop, EVBREAK_ONE);
}

/* Connect to every master and load the script; false on failure. */
static bool raw_connect(raw_bench *b, const bench_masters *masters)
{
    b->n = masters->n;
    for (size_t i = 0; i < b->n; i++) {
        b->ac[i] = redisAsyncConnect(masters->host[i], masters->port[i]);
        if (b->ac[i] == NULL || b->ac[i]->err)
            return false;
        b->ac[i]->data = b;
        redisLibevAttach(b->loop, b->ac[i]);
        redisAsyncSetConnectCallback(b->ac[i], on_connect);
        redisAsyncCommand(b->ac[i], on_loaded, b, "SCRIPT LOAD %s",
                          rl_release_script.source);
    }
    ev_timer guard;
    ev_timer_init(&guard, timeout_break, 5., 0.);
    ev_timer_start(b->loop, &guard);
    while ((b->connected < b->n || b->sha[0] == '\0') && ev_is_active(&guard))
        ev_run(b->loop, EVRUN_ONCE);
    ev_timer_stop(b->loop, &guard);
    return b->connected == b->n && b->sha[0] != '\0';
}

/* Run `count` pairs untimed, so connections and caches are warm. */
static void run_pairs(raw_bench *b, unsigned in_flight, unsigned long count, double seconds)
{
    bench_limits lim = *b->lim;
    lim.pairs = count;
    const bench_limits *saved = b->lim;
    b->lim = &lim;
    b->started = b->finished = 0;
    b->deadline = tc_now_ns() + (int64_t)(seconds * 1e9);
    b->running = in_flight;
    for (unsigned i = 0; i < in_flight; i++)
        pair_start(b, &b->pairs[i]);
    if (b->running > 0)
        ev_run(b->loop, 0);
    b->lim = saved;
}

int raw_run(const bench_masters *masters, const bench_limits *lim, bool quorum_only,
            unsigned in_flight, measurement *m)
{
    if (in_flight == 0 || in_flight > MAX_IN_FLIGHT)
        return -1;
    raw_bench *b = calloc(1, sizeof(*b));
    if (b == NULL)
        return -1;
    b->loop = ev_loop_new(EVFLAG_AUTO);
    b->lim = lim;
    b->m = m;
    m->bytes_in_flight = -1;
    int rc = -1;
    if (b->loop != NULL && raw_connect(b, masters)) {
        b->needed = quorum_only ? (unsigned)(b->n / 2 + 1) : (unsigned)b->n;
        for (unsigned i = 0; i < in_flight; i++)
            b->pairs[i] = (raw_pair){.b = b, .slot = i};
        measurement warm = {0};
        b->m = &warm;
        run_pairs(b, in_flight, 200, 5.0);
        samples_free(&warm.pair);
        samples_free(&warm.acquire);
        samples_free(&warm.release);
        b->m = m;
        measurement_reserve(m, lim->pairs);
        stopwatch w;
        stopwatch_start(&w);
        run_pairs(b, in_flight, lim->pairs, lim->seconds);
        m->pairs = b->finished;
        stopwatch_stop(&w, m);
        rc = 0;
    }
    b->closing = true;
    for (size_t i = 0; i < b->n; i++)
        if (b->ac[i] != NULL)
            redisAsyncFree(b->ac[i]);
    while (b->free_tokens != NULL) {
        token *t = b->free_tokens;
        b->free_tokens = t->next;
        free(t);
    }
    if (b->loop != NULL)
        ev_loop_destroy(b->loop);
    free(b);
    return rc;
}
