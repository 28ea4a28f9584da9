/* SPDX-License-Identifier: BSD-3-Clause */
/* The restart rule's requests on a connection: the marker script and the
 * durable check (restart_probe.h says which and why). */
#include "master/restart_probe.h"
#include "config/config_internal.h"
#include "context/context.h"
#include "master/master.h"
#include "master/restart.h"
#include "redlock/redlock.h"
#include "util/log.h"
#include "wire/reply.h"
#include "wire/scripts.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PROBE_EVALSHA ((void *)1)
#define PROBE_EVAL ((void *)2)
#define PROBE_QUOTE_MAX 96 /* bytes of an error reply quoted in the log */

static void probe_on_marker_reply(redisAsyncContext *ac, void *r, void *privdata);

static bool probe_send_marker(struct rl_master *m, bool sha)
{
    const rl_script *script = &rl_restart_marker_script;
    long long max_ttl_ms = (long long)rl_config_max_ttl_ms(m->client->cfg);
    return redisAsyncCommand(m->ac, probe_on_marker_reply, sha ? PROBE_EVALSHA : PROBE_EVAL,
                             "%s %s 2 %s %s %lld", sha ? "EVALSHA" : "EVAL",
                             sha ? script->sha : script->source, RL_RESTART_MARKER_KEY,
                             RL_RESTART_GUARD_KEY, max_ttl_ms) == REDIS_OK;
}

void rl_restart_probe_marker(struct rl_master *m)
{
    if (m->ac == NULL || !probe_send_marker(m, true))
        rl_restart_on_marker_refused(m, "out of memory");
}

/* An error reply as one printable line for the log, cut; withheld when it
 * quotes the node's password. */
static void probe_error_text(const struct rl_master *m, const redisReply *reply, char *out,
                             size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < reply->len && i < PROBE_QUOTE_MAX && n + 1 < len; i++) {
        char c = reply->str[i];
        if (c == '\r' || c == '\n')
            break;
        if (c < 0x20 || c >= 0x7f)
            c = '?';
        out[n++] = c;
    }
    out[n] = '\0';
    const char *pw = m->node->password;
    if (pw != NULL && pw[0] != '\0' &&
        (strstr(out, pw) != NULL || memmem(reply->str, reply->len, pw, strlen(pw)) != NULL))
        snprintf(out, len, "reply withheld: it quoted the password");
}

/* A number in a reply element (an integer, or a string of digits), or -1. */
static int64_t probe_number(const redisReply *e)
{
    if (e->type == REDIS_REPLY_INTEGER)
        return e->integer;
    if (e->type != REDIS_REPLY_STRING || e->len == 0 || e->len > 12)
        return -1;
    int64_t v = 0;
    for (size_t i = 0; i < e->len; i++) {
        if (e->str[i] < '0' || e->str[i] > '9')
            return -1;
        v = v * 10 + (e->str[i] - '0');
    }
    return v;
}

static void probe_handle_marker_reply(redisAsyncContext *ac, const redisReply *reply,
                                      const void *privdata)
{
    struct rl_master *m = ac->data;
    if (m == NULL || m->ac != ac || reply == NULL || m->restart.state != RL_RESTART_UNKNOWN)
        return; /* a stale context, or the connection died: nothing to bound */
    if (reply->type == REDIS_REPLY_ERROR) {
        if (privdata == PROBE_EVALSHA && rl_reply_starts_with(reply, "NOSCRIPT")) {
            if (!probe_send_marker(m, false)) /* its script cache was flushed */
                rl_restart_on_marker_refused(m, "out of memory");
            return;
        }
        char why[PROBE_QUOTE_MAX + 48];
        probe_error_text(m, reply, why, sizeof(why));
        rl_restart_on_marker_refused(m, why);
        return;
    }
    int64_t found = reply->type == REDIS_REPLY_ARRAY && reply->elements >= 1
                        ? probe_number(reply->element[0])
                        : -1;
    if (found == 0) {
        rl_restart_on_marker(m, RL_MARKER_MISSING, -2, 0);
    } else if (found == 2) {
        rl_restart_on_marker(m, RL_MARKER_UNGUARDED, -2, 0);
    } else if (found == 1 && reply->elements >= 3 &&
               reply->element[1]->type == REDIS_REPLY_INTEGER) {
        int64_t px = probe_number(reply->element[2]);
        rl_restart_on_marker(m, RL_MARKER_GUARDED, reply->element[1]->integer, px > 0 ? px : 0);
    } else {
        rl_restart_on_marker_refused(m, "unexpected reply");
    }
}

static void probe_on_marker_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    const struct rl_master *owner = ac->data;
    if (owner == NULL)
        return; /* a context we let go of */
    redlock_client *client = owner->client;
    rl_client_enter(client);
    probe_handle_marker_reply(ac, r, privdata);
    rl_client_leave(client);
}

/* The value of name in a CONFIG GET reply (name, value pairs), cut to
 * len - 1 bytes, "" when absent. */
static void probe_config_value(const redisReply *reply, const char *name, char *out, size_t len)
{
    out[0] = '\0';
    for (size_t i = 0; i + 1 < reply->elements; i += 2) {
        const redisReply *k = reply->element[i];
        const redisReply *v = reply->element[i + 1];
        if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING ||
            k->len != strlen(name) || memcmp(k->str, name, k->len) != 0)
            continue;
        size_t n = v->len < len - 1 ? v->len : len - 1;
        for (size_t j = 0; j < n; j++) {
            char c = v->str[j];
            if (c < 0x20 || c >= 0x7f)
                c = '?';
            out[j] = c;
        }
        out[n] = '\0';
        return;
    }
}

static void probe_handle_config_reply(redisAsyncContext *ac, const redisReply *reply)
{
    struct rl_master *m = ac->data;
    if (m == NULL || m->ac != ac || reply == NULL)
        return;
    RL_EXPECT_ENTERED(m->client); /* a free from the log waits for its leave */
    if (reply->type != REDIS_REPLY_ARRAY) {
        /* Not the reply text: an ACL's refusal is no news. */
        rl_log(&m->client->log, REDLOCK_LOG_DEBUG,
               "master %s: CONFIG GET append* not answered: its durable declaration unchecked",
               m->node->name);
        return;
    }
    char appendonly[16];
    char appendfsync[16];
    probe_config_value(reply, "appendonly", appendonly, sizeof(appendonly));
    probe_config_value(reply, "appendfsync", appendfsync, sizeof(appendfsync));
    rl_restart_on_durable_config(m, appendonly, appendfsync);
}

static void probe_on_config_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    (void)privdata;
    const struct rl_master *owner = ac->data;
    if (owner == NULL)
        return; /* a context we let go of */
    redlock_client *client = owner->client;
    rl_client_enter(client);
    probe_handle_config_reply(ac, r);
    rl_client_leave(client);
}

bool rl_restart_probe_config(struct rl_master *m)
{
    return redisAsyncCommand(m->ac, probe_on_config_reply, NULL, "CONFIG GET append*") == REDIS_OK;
}
