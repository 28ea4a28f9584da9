/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * redlock_health_async(): what each master's settings say of Redlock's
 * safety there. Its questions go out on every ready master's context
 * outside the request machinery, pipelined, as the restart probe's do:
 * the lock path neither waits for them nor changes. The operation
 * completes once every reply is in or a command timeout passed
 * (COLLECTING -> DONE); it is freed when its last reply, or the
 * context's end, calls back (DONE -> freed), holding a client reference
 * until then.
 */
#include "config/config_internal.h"
#include "context/context.h"
#include "master/master.h"
#include "redlock/redlock.h"
#include "util/util.h"
#include "wire/scripts.h"

#include <hiredis/async.h>
#include <stdlib.h>
#include <string.h>

/* The questions, in the order sent. */
typedef enum health_question {
    HQ_INFO,        /* INFO: role, cluster_enabled, maxmemory_policy, aof_enabled */
    HQ_SAVE,        /* CONFIG GET save */
    HQ_APPENDFSYNC, /* CONFIG GET appendfsync */
    HQ_SCRIPT,      /* EVAL "return 1" 0 */
    HQ_PROBE_KEY,   /* PTTL of a clock probe key */
    HQ_MARKER_KEY,  /* PTTL of the restart marker */
    HQ_COUNT
} health_question;

typedef struct health_op health_op;

typedef struct health_ask {
    health_op *op;
    size_t master;
    health_question q;
} health_ask;

struct health_op {
    rl_op op; /* first: cancelled through it */
    redlock_client *client;
    redlock_health_cb cb;
    void *arg;
    bool done;          /* the callback ran */
    unsigned waiting;   /* replies (or context ends) still to come */
    ev_timer timer;     /* the command timeout */
    health_ask *asks;   /* HQ_COUNT per master */
    redlock_health health;
};

static void copy_text(char *out, size_t size, const char *s, size_t len)
{
    size_t n = len < size - 1 ? len : size - 1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c < 0x20 || c >= 0x7f)
            c = '?';
        out[i] = c;
    }
    out[n] = '\0';
}

/* The value of field in INFO's text, into out; false when absent. */
static bool info_field(const redisReply *r, const char *field, char *out, size_t size)
{
    size_t flen = strlen(field);
    for (const char *p = r->str; p != NULL && p < r->str + r->len;) {
        const char *end = memchr(p, '\n', (size_t)(r->str + r->len - p));
        size_t line = end ? (size_t)(end - p) : (size_t)(r->str + r->len - p);
        if (line > flen && memcmp(p, field, flen) == 0 && p[flen] == ':') {
            size_t n = line - flen - 1;
            if (n > 0 && p[flen + 1 + n - 1] == '\r')
                n--;
            copy_text(out, size, p + flen + 1, n);
            return true;
        }
        p = end ? end + 1 : NULL;
    }
    return false;
}

static void read_info(redlock_master_health *h, const redisReply *r)
{
    if (r->type != REDIS_REPLY_STRING)
        return;
    char v[32];
    info_field(r, "role", h->role, sizeof(h->role));
    info_field(r, "maxmemory_policy", h->maxmemory_policy, sizeof(h->maxmemory_policy));
    if (info_field(r, "cluster_enabled", v, sizeof(v)))
        h->cluster_enabled = strcmp(v, "1") == 0;
    if (info_field(r, "aof_enabled", v, sizeof(v)))
        h->aof_enabled = strcmp(v, "1") == 0;
}

/* CONFIG GET name's value, or NULL. */
static const redisReply *config_value(const redisReply *r)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 2 ||
        r->element[1]->type != REDIS_REPLY_STRING)
        return NULL;
    return r->element[1];
}

/* An allowed command (1), or refused with its error kept (0). */
static void read_allowed(const redisReply *r, int *allowed, char *error, size_t size)
{
    *allowed = r->type != REDIS_REPLY_ERROR;
    if (r->type == REDIS_REPLY_ERROR)
        copy_text(error, size, r->str, r->len);
}

static void read_answer(redlock_master_health *h, health_question q, const redisReply *r)
{
    const redisReply *v;
    switch (q) {
    case HQ_INFO:
        read_info(h, r);
        break;
    case HQ_SAVE:
        if ((v = config_value(r)) != NULL)
            h->rdb = v->len > 0;
        break;
    case HQ_APPENDFSYNC:
        if ((v = config_value(r)) != NULL)
            copy_text(h->appendfsync, sizeof(h->appendfsync), v->str, v->len);
        break;
    case HQ_SCRIPT:
        read_allowed(r, &h->scripting, h->scripting_error, sizeof(h->scripting_error));
        break;
    case HQ_PROBE_KEY:
        read_allowed(r, &h->probe_keys, h->probe_keys_error, sizeof(h->probe_keys_error));
        break;
    case HQ_MARKER_KEY:
        read_allowed(r, &h->marker_keys, h->marker_keys_error, sizeof(h->marker_keys_error));
        break;
    case HQ_COUNT:
        break;
    }
}

/* COLLECTING -> DONE: the program's callback, once. */
static void health_complete(health_op *op, int status)
{
    if (op->done)
        return;
    op->done = true;
    ev_timer_stop(op->client->loop, &op->timer);
    rl_client_remove_op(&op->op);
    op->cb(status, status == REDLOCK_OK ? &op->health : NULL, op->arg);
}

/* DONE, and nothing more to come: freed. */
static void health_release(health_op *op)
{
    if (!op->done || op->waiting > 0)
        return;
    redlock_client *client = op->client;
    free(op->asks);
    free(op);
    rl_client_unref(client);
}

static void health_on_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    (void)ac;
    health_ask *ask = privdata;
    health_op *op = ask->op;
    redlock_client *client = op->client;
    rl_client_enter(client);
    op->waiting--;
    if (!op->done && reply != NULL)
        read_answer(&op->health.masters[ask->master], ask->q, reply);
    if (op->waiting == 0)
        health_complete(op, REDLOCK_OK);
    health_release(op);
    rl_client_leave(client);
}

static void health_on_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    health_op *op = w->data;
    redlock_client *client = op->client;
    rl_client_enter(client);
    health_complete(op, REDLOCK_OK);
    health_release(op);
    rl_client_leave(client);
}

static void health_cancel(rl_op *o)
{
    health_op *op = (health_op *)o;
    health_complete(op, REDLOCK_ECANCELED);
    health_release(op);
}

/* What nothing has answered yet: not known. */
static void health_unknown(redlock_master_health *h, const rl_master *m,
                           const redlock_config *cfg)
{
    h->name = m->node->name;
    h->durable = rl_node_durable(cfg, m->node);
    h->cluster_enabled = h->aof_enabled = h->rdb = -1;
    h->scripting = h->probe_keys = h->marker_keys = -1;
    h->connected = m->state == RL_MASTER_READY && m->ac != NULL;
    h->detail = h->connected ? NULL : m->failure;
}

/* Send m's questions; how many went out. */
static unsigned health_ask_master(health_op *op, size_t i, rl_master *m)
{
    health_ask *asks = &op->asks[i * HQ_COUNT];
    for (int q = 0; q < HQ_COUNT; q++)
        asks[q] = (health_ask){op, i, (health_question)q};
    /* Keys named by this client's id, under the patterns its probes use. */
    char probe_key[96];
    snprintf(probe_key, sizeof(probe_key), "redlock:clock:%s:health", op->client->id);
    const int sent[HQ_COUNT] = {
        redisAsyncCommand(m->ac, health_on_reply, &asks[HQ_INFO], "INFO"),
        redisAsyncCommand(m->ac, health_on_reply, &asks[HQ_SAVE], "CONFIG GET save"),
        redisAsyncCommand(m->ac, health_on_reply, &asks[HQ_APPENDFSYNC], "CONFIG GET appendfsync"),
        redisAsyncCommand(m->ac, health_on_reply, &asks[HQ_SCRIPT], "EVAL %s 0", "return 1"),
        redisAsyncCommand(m->ac, health_on_reply, &asks[HQ_PROBE_KEY], "PTTL %s", probe_key),
        redisAsyncCommand(m->ac, health_on_reply, &asks[HQ_MARKER_KEY], "PTTL %s",
                          RL_RESTART_KEY_PREFIX "marker"),
    };
    unsigned n = 0;
    for (int q = 0; q < HQ_COUNT; q++)
        n += sent[q] == REDIS_OK;
    return n;
}

static int health_start(redlock_client *client, redlock_health_cb cb, void *arg)
{
    if (client->closing)
        return REDLOCK_ECANCELED;
    health_op *op = calloc(1, sizeof(*op));
    health_ask *asks = calloc(client->n ? client->n * HQ_COUNT : 1, sizeof(*asks));
    if (op == NULL || asks == NULL) {
        free(op);
        free(asks);
        return REDLOCK_ENOMEM;
    }
    op->client = client;
    op->cb = cb;
    op->arg = arg;
    op->asks = asks;
    op->op.cancel = health_cancel;
    rl_client_ref(client);
    rl_client_add_op(client, &op->op);
    op->health.master_count = (unsigned)client->n;
    int64_t timeout_us = 0;
    for (size_t i = 0; i < client->n; i++) {
        rl_master *m = &client->masters[i];
        redlock_master_health *h = &op->health.masters[i];
        health_unknown(h, m, client->cfg);
        if (!h->connected)
            continue;
        op->waiting += health_ask_master(op, i, m);
        if (m->command_timeout_us > timeout_us)
            timeout_us = m->command_timeout_us;
    }
    ev_timer_init(&op->timer, health_on_timeout, (double)timeout_us / 1e6, 0.);
    op->timer.data = op;
    ev_timer_start(client->loop, &op->timer);
    return REDLOCK_OK;
}

int redlock_health_async(redlock_client *client, redlock_health_cb cb, void *arg)
{
    if (client == NULL || cb == NULL)
        return REDLOCK_EINVAL;
    rl_client_enter(client);
    int rc = health_start(client, cb, arg);
    rl_client_leave(client);
    return rc;
}
