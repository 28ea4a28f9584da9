/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Release announcements: watches and their pub/sub connections. See
 * subscriber.h for the connection's states.
 *
 * A watch's channel on one master's connection:
 *
 *   NONE --wanted--> SUBSCRIBING --confirmed--> SUBSCRIBED
 *    ^                                              |
 *    |                                              | not wanted
 *    +--------confirmed------- UNSUBSCRIBING <------+
 *   any --the connection lost or closed--> NONE
 *
 * A watch is wanted while it has waiters and for RL_WATCH_LINGER_MS after
 * the last one left; channel_settle() moves each channel toward that, one
 * request at a time: hiredis keys its callbacks by channel name, so a
 * channel is never subscribed and unsubscribed at once. An unwanted watch
 * is freed once all its channels are NONE.
 *
 * Each connection keeps one subscription of its own, RL_OWN_CHANNEL, from
 * the connect to the close, so its count of subscriptions never falls to
 * zero: hiredis 0.14 leaves subscribed mode there, and would then take a
 * confirmation crossing it for a stray reply. Its confirmation also tells
 * that the master answers (READY).
 *
 * An error reply to a SUBSCRIBE (say the ACL denies the channel) makes
 * hiredis drop the connection: it reconnects with backoff, and waiters
 * retry on their timer meanwhile.
 */
#include "master/subscriber.h"
#include "context/context.h"
#include "config/config_internal.h"
#include "master/connect.h"
#include "master/master.h"
#include "redlock/redlock.h"
#include "util/list.h"
#include "util/log.h"
#include "util/timer.h"
#include "util/util.h"
#include "wire/channel.h"
#include "wire/reply.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Under the announcements' prefix, so that an ACL allowing those allows it
 * too; no resource channel has a letter where the database goes. */
#define RL_OWN_CHANNEL "redlock:released:subscriber"

typedef enum rl_channel_state {
    RL_CHANNEL_NONE,
    RL_CHANNEL_SUBSCRIBING,
    RL_CHANNEL_SUBSCRIBED,
    RL_CHANNEL_UNSUBSCRIBING
} rl_channel_state;

/* A watch's channel on one master. */
typedef struct rl_watch_channel {
    rl_channel_state state;
    int64_t confirmed_us;  /* when SUBSCRIBED began */
    int64_t announced_us;  /* the last announcement heard, 0 for none */
} rl_watch_channel;

struct rl_watch {
    rl_link link;          /* in client->watches */
    redlock_client *client;
    rl_link waiters;
    bool wanted;           /* waiters, or lingering after the last */
    ev_timer linger;       /* armed while wanted with no waiter */
    size_t resource_len;
    char *resource;        /* after channels[] */
    rl_watch_channel channels[];
};

static void subscriber_connect(rl_subscriber *s);
static void subscriber_drop(rl_subscriber *s, const char *reason);
static void subscriber_off(rl_subscriber *s);
static void subscriber_awaits(rl_subscriber *s);

static bool watch_settled(const rl_watch *w)
{
    for (size_t i = 0; i < w->client->n; i++)
        if (w->channels[i].state != RL_CHANNEL_NONE)
            return false;
    return true;
}

/* Free w if nobody wants it and every master let its channel go; the last
 * watch takes the connections with it. Returns true when freed. */
static bool watch_maybe_free(rl_watch *w)
{
    if (w->wanted || !watch_settled(w))
        return false;
    redlock_client *client = w->client;
    rl_list_remove(&w->link);
    ev_timer_stop(client->loop, &w->linger);
    free(w);
    if (rl_list_empty(&client->watches))
        for (size_t i = 0; i < client->n; i++)
            subscriber_off(&client->subscribers[i]);
    return true;
}

/* SUBSCRIBE or UNSUBSCRIBE w's channel on s. False when it could not be
 * sent (out of memory, or the connection is going). */
static bool channel_request(rl_subscriber *s, rl_watch *w, const char *verb);

/* One step of w's channel on s toward what w wants. */
static void channel_advance(rl_subscriber *s, rl_watch *w)
{
    rl_watch_channel *ch = &w->channels[s->index];
    if (s->ac == NULL)
        return;
    if (w->wanted && ch->state == RL_CHANNEL_NONE && channel_request(s, w, "SUBSCRIBE"))
        ch->state = RL_CHANNEL_SUBSCRIBING;
    else if (!w->wanted && ch->state == RL_CHANNEL_SUBSCRIBED &&
             channel_request(s, w, "UNSUBSCRIBE"))
        ch->state = RL_CHANNEL_UNSUBSCRIBING;
}

/* The same, and free w when it is done with. Returns true when freed. */
static bool channel_settle(rl_subscriber *s, rl_watch *w)
{
    channel_advance(s, w);
    return watch_maybe_free(w);
}

/* Tell w's waiters that master may have deleted the key. */
static void watch_announce(rl_watch *w, size_t master, const char *value, size_t value_len)
{
    for (rl_link *l = w->waiters.next; l != &w->waiters; l = l->next) {
        rl_waiter *waiter = rl_container_of(l, rl_waiter, link);
        waiter->on_announce(waiter, master, value, value_len);
    }
}

static rl_watch *watch_find(redlock_client *client, const char *resource, size_t resource_len)
{
    /* Linear: the watches are the resources this client waits for now. */
    for (rl_link *l = client->watches.next; l != &client->watches; l = l->next) {
        rl_watch *w = rl_container_of(l, rl_watch, link);
        if (w->resource_len == resource_len && memcmp(w->resource, resource, resource_len) == 0)
            return w;
    }
    return NULL;
}

static void watch_handle_linger(struct ev_loop *loop, ev_timer *t, int revents)
{
    rl_watch *w = t->data;
    w->wanted = false;
    redlock_client *client = w->client;
    for (size_t i = 0; i < client->n; i++)
        if (channel_settle(&client->subscribers[i], w))
            return;
}

static void watch_on_linger(struct ev_loop *loop, ev_timer *t, int revents)
{
    redlock_client *client = ((rl_watch *)t->data)->client;
    rl_client_enter(client);
    watch_handle_linger(loop, t, revents);
    rl_client_leave(client);
}

/* What a pub/sub reply says: the kind ("message", "subscribe",
 * "unsubscribe") and the channel, and for a message its payload. */
static bool pubsub_reply_read(const redisReply *reply, const redisReply **kind,
                              const redisReply **channel, const redisReply **payload)
{
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 3)
        return false;
    *kind = reply->element[0];
    *channel = reply->element[1];
    *payload = reply->element[2];
    return (*kind)->type == REDIS_REPLY_STRING && (*channel)->type == REDIS_REPLY_STRING;
}

static bool reply_is(const redisReply *r, const char *text)
{
    return r->len == strlen(text) && memcmp(r->str, text, r->len) == 0;
}

/* A (un)subscribe request went out: its confirmation is awaited. A master
 * that leaves them unanswered for the stall time (stopped, or black-holed)
 * is dropped, so that its channels do not keep unwanted watches alive. */
/* As long as for the master's request connection. */
static int64_t stall_us(const rl_subscriber *s)
{
    return s->client->masters[s->index].stall_timeout_us;
}

static void subscriber_awaits(rl_subscriber *s)
{
    if (s->pending++ == 0) {
        s->progress_us = rl_now_us();
        if (s->state == RL_SUBSCRIBER_READY)
            rl_timer_arm_in(s->client->loop, &s->timer, stall_us(s));
    }
}

/* A confirmation came. */
static void subscriber_progress(rl_subscriber *s)
{
    s->progress_us = rl_now_us();
    if (s->pending > 0 && --s->pending == 0 && s->state == RL_SUBSCRIBER_READY)
        ev_timer_stop(s->client->loop, &s->timer);
}

/* A reply on one of the connection's channels. */
static void subscriber_handle_pubsub(redisAsyncContext *ac, void *r, void *privdata)
{
    (void)privdata;
    rl_subscriber *s = ac->data;
    const redisReply *kind = NULL;
    const redisReply *channel = NULL;
    const redisReply *payload = NULL;
    if (s == NULL || s->ac != ac || r == NULL || !pubsub_reply_read(r, &kind, &channel, &payload))
        return; /* a context being torn down, or not pub/sub */
    if (!reply_is(kind, "message"))
        subscriber_progress(s);
    if (reply_is(channel, RL_OWN_CHANNEL)) {
        if (reply_is(kind, "subscribe") && s->state == RL_SUBSCRIBER_CONNECTING) {
            s->state = RL_SUBSCRIBER_READY;
            s->backoff_ms = rl_client_setting(s->client, REDLOCK_RECONNECT_MIN_MS);
            s->failure[0] = '\0';
            if (s->pending > 0)
                rl_timer_arm_in(s->client->loop, &s->timer, stall_us(s));
            else
                ev_timer_stop(s->client->loop, &s->timer);
        }
        return;
    }
    size_t resource_len;
    const char *resource =
        rl_channel_resource(channel->str, channel->len, s->node->db, &resource_len);
    rl_watch *w = resource ? watch_find(s->client, resource, resource_len) : NULL;
    if (w == NULL)
        return;
    rl_watch_channel *ch = &w->channels[s->index];
    int64_t now = rl_now_us();
    if (reply_is(kind, "message") && payload->type == REDIS_REPLY_STRING) {
        ch->announced_us = now;
        watch_announce(w, s->index, payload->str, payload->len);
    } else if (reply_is(kind, "subscribe") && ch->state == RL_CHANNEL_SUBSCRIBING) {
        ch->state = RL_CHANNEL_SUBSCRIBED;
        ch->confirmed_us = now;
        watch_announce(w, s->index, NULL, 0);
        channel_settle(s, w); /* unwanted meanwhile: unsubscribe */
    } else if (reply_is(kind, "unsubscribe") && ch->state == RL_CHANNEL_UNSUBSCRIBING) {
        ch->state = RL_CHANNEL_NONE;
        channel_settle(s, w); /* wanted again meanwhile: subscribe */
    }
}

static void subscriber_on_pubsub(redisAsyncContext *ac, void *r, void *privdata)
{
    rl_subscriber *owner = ac->data;
    if (owner == NULL)
        return; /* a context we let go of */
    redlock_client *client = owner->client;
    rl_client_enter(client);
    subscriber_handle_pubsub(ac, r, privdata);
    rl_client_leave(client);
}

static bool channel_request(rl_subscriber *s, rl_watch *w, const char *verb)
{
    char prefix[RL_CHANNEL_PREFIX_MAX];
    size_t prefix_len = rl_channel_prefix(s->node->db, prefix);
    char *name = malloc(prefix_len + w->resource_len);
    if (name == NULL)
        return false;
    memcpy(name, prefix, prefix_len);
    memcpy(name + prefix_len, w->resource, w->resource_len);
    const char *argv[2] = {verb, name};
    size_t len[2] = {strlen(verb), prefix_len + w->resource_len};
    int rc = redisAsyncCommandArgv(s->ac, subscriber_on_pubsub, NULL, 2, argv, len);
    free(name);
    if (rc != REDIS_OK)
        return false;
    subscriber_awaits(s);
    return true;
}

/* The connection is gone: every channel on it is NONE, and the watches
 * nobody wants are freed. */
static void subscriber_forget_channels(rl_subscriber *s)
{
    redlock_client *client = s->client;
    rl_link *next;
    for (rl_link *l = client->watches.next; l != &client->watches; l = next) {
        next = l->next;
        rl_watch *w = rl_container_of(l, rl_watch, link);
        w->channels[s->index].state = RL_CHANNEL_NONE;
        watch_maybe_free(w);
    }
}

/* Let go of the context (hiredis may still call back with it: ac->data is
 * cleared first). */
static void subscriber_release_context(rl_subscriber *s)
{
    redisAsyncContext *ac = s->ac;
    s->ac = NULL;
    s->pending = 0;
    if (ac != NULL) {
        ac->data = NULL;
        redisAsyncFree(ac); /* deferred by hiredis when inside its callback */
    }
}

/* No connection and no timer: the last watch is gone, or the client. */
static void subscriber_off(rl_subscriber *s)
{
    if (s->state == RL_SUBSCRIBER_OFF)
        return;
    s->state = RL_SUBSCRIBER_OFF;
    ev_timer_stop(s->client->loop, &s->timer);
    subscriber_release_context(s);
    s->backoff_ms = rl_client_setting(s->client, REDLOCK_RECONNECT_MIN_MS);
}

static void subscriber_handle_timer(struct ev_loop *loop, ev_timer *t, int revents)
{
    rl_subscriber *s = t->data;
    if (s->state == RL_SUBSCRIBER_READY && s->pending > 0) {
        int64_t silent_us = rl_now_us() - s->progress_us;
        if (silent_us < stall_us(s)) {
            rl_timer_arm_in(loop, t, stall_us(s) - silent_us);
            return;
        }
        char reason[64];
        snprintf(reason, sizeof(reason), "no confirmation for %lld ms",
                 (long long)(silent_us / 1000));
        subscriber_drop(s, reason);
    } else if (s->state == RL_SUBSCRIBER_CONNECTING) {
        char reason[64];
        snprintf(reason, sizeof(reason), "no answer within %lld ms",
                 (long long)rl_node_connect_timeout_ms(s->client->cfg, s->node));
        subscriber_drop(s, reason);
    } else if (s->state == RL_SUBSCRIBER_BACKOFF) {
        subscriber_connect(s);
    }
}

static void subscriber_on_timer(struct ev_loop *loop, ev_timer *t, int revents)
{
    redlock_client *client = ((rl_subscriber *)t->data)->client;
    rl_client_enter(client);
    subscriber_handle_timer(loop, t, revents);
    rl_client_leave(client);
}

/* CONNECTING or READY failed: BACKOFF, channels forgotten. A new reason
 * is logged once as a warning, the same again only for debugging. */
static void subscriber_drop(rl_subscriber *s, const char *reason)
{
    if (s->state != RL_SUBSCRIBER_CONNECTING && s->state != RL_SUBSCRIBER_READY)
        return;
    redlock_client *client = s->client;
    int level = strcmp(s->failure, reason) == 0 ? REDLOCK_LOG_DEBUG : REDLOCK_LOG_WARN;
    snprintf(s->failure, sizeof(s->failure), "%s", reason);
    subscriber_release_context(s);
    s->state = RL_SUBSCRIBER_BACKOFF;
    int64_t delay_ms = s->backoff_ms;
    int64_t max_ms = rl_client_setting(client, REDLOCK_RECONNECT_MAX_MS);
    s->backoff_ms = s->backoff_ms * 2 > max_ms ? max_ms : s->backoff_ms * 2;
    rl_timer_arm_in(client->loop, &s->timer, delay_ms * 1000);
    RL_EXPECT_ENTERED(client); /* a free from the log waits for its leave */
    rl_log(&client->log, level,
           "master %s: release announcements: %s; waiters retry on their timer meanwhile",
           s->node->name, reason);
    if (s->state == RL_SUBSCRIBER_BACKOFF)
        subscriber_forget_channels(s);
}

static void subscriber_handle_auth(redisAsyncContext *ac, void *r, void *privdata)
{
    (void)privdata;
    rl_subscriber *s = ac->data;
    if (s == NULL || s->ac != ac || r == NULL)
        return;
    char reason[sizeof(s->failure)];
    if (rl_reply_handshake(RL_HS_AUTH, r, s->node->password, reason, sizeof(reason)) !=
        RL_HANDSHAKE_ACCEPTED)
        subscriber_drop(s, reason);
}

static void subscriber_on_auth(redisAsyncContext *ac, void *r, void *privdata)
{
    rl_subscriber *owner = ac->data;
    if (owner == NULL)
        return; /* a context we let go of */
    redlock_client *client = owner->client;
    rl_client_enter(client);
    subscriber_handle_auth(ac, r, privdata);
    rl_client_leave(client);
}

static void subscriber_handle_connect(const redisAsyncContext *cac, int status)
{
    redisAsyncContext *ac = (redisAsyncContext *)cac;
    rl_subscriber *s = ac->data;
    if (s == NULL || s->ac != ac || status == REDIS_OK)
        return;
    char reason[sizeof(s->failure)];
    rl_connect_error(ac, "connect", "failed", reason, sizeof(reason));
    ac->data = NULL; /* hiredis frees it after this callback */
    s->ac = NULL;
    subscriber_drop(s, reason);
}

static void subscriber_on_connect(const redisAsyncContext *cac, int status)
{
    const rl_subscriber *owner = cac->data;
    if (owner == NULL)
        return; /* a context we let go of */
    redlock_client *client = owner->client;
    rl_client_enter(client);
    subscriber_handle_connect(cac, status);
    rl_client_leave(client);
}

static void subscriber_handle_disconnect(const redisAsyncContext *cac, int status)
{
    redisAsyncContext *ac = (redisAsyncContext *)cac;
    rl_subscriber *s = ac->data;
    if (s == NULL || s->ac != ac)
        return; /* we let it go ourselves */
    char reason[sizeof(s->failure)];
    rl_connect_lost_reason(ac, status, reason, sizeof(reason));
    ac->data = NULL; /* hiredis frees it after this callback */
    s->ac = NULL;
    subscriber_drop(s, reason);
}

static void subscriber_on_disconnect(const redisAsyncContext *cac, int status)
{
    const rl_subscriber *owner = cac->data;
    if (owner == NULL)
        return; /* a context we let go of */
    redlock_client *client = owner->client;
    rl_client_enter(client);
    subscriber_handle_disconnect(cac, status);
    rl_client_leave(client);
}

/* Connect, authenticate, and subscribe to our own channel and every wanted
 * watch's, pipelined: READY after one round trip. */
static void subscriber_connect(rl_subscriber *s)
{
    redlock_client *client = s->client;
    char reason[sizeof(s->failure)];
    redisAsyncContext *ac = rl_connect_node(client->loop, s->node, rl_client_tls(client, s->node),
                                            reason, sizeof(reason));
    s->state = RL_SUBSCRIBER_CONNECTING; /* so that a failure below backs off */
    if (ac == NULL) {
        subscriber_drop(s, reason);
        return;
    }
    ac->data = s;
    s->ac = ac;
    redisAsyncSetConnectCallback(ac, subscriber_on_connect);
    redisAsyncSetDisconnectCallback(ac, subscriber_on_disconnect);
    if (rl_connect_send_auth(ac, s->node, subscriber_on_auth, NULL) < 0 ||
        redisAsyncCommand(ac, subscriber_on_pubsub, NULL, "SUBSCRIBE %s", RL_OWN_CHANNEL) !=
            REDIS_OK) {
        subscriber_drop(s, "connect: out of memory");
        return;
    }
    subscriber_awaits(s);
    rl_timer_arm_in(client->loop, &s->timer,
                    rl_node_connect_timeout_ms(client->cfg, s->node) * 1000);
    /* Unwanted watches have nothing to do here: their channel on s is NONE. */
    for (rl_link *l = client->watches.next; l != &client->watches; l = l->next)
        channel_advance(s, rl_container_of(l, rl_watch, link));
}

int rl_subscribers_init(redlock_client *client)
{
    client->subscribers = calloc(client->n, sizeof(rl_subscriber));
    if (client->subscribers == NULL)
        return REDLOCK_ENOMEM;
    rl_list_init(&client->watches);
    for (size_t i = 0; i < client->n; i++) {
        rl_subscriber *s = &client->subscribers[i];
        s->client = client;
        s->node = &client->cfg->nodes[i];
        s->index = i;
        s->state = RL_SUBSCRIBER_OFF;
        s->backoff_ms = rl_client_setting(client, REDLOCK_RECONNECT_MIN_MS);
        ev_timer_init(&s->timer, subscriber_on_timer, 0., 0.);
        s->timer.data = s;
    }
    return REDLOCK_OK;
}

void rl_subscribers_close(redlock_client *client)
{
    if (client->subscribers == NULL)
        return;
    rl_link *next;
    for (rl_link *l = client->watches.next; l != &client->watches; l = next) {
        next = l->next;
        rl_watch *w = rl_container_of(l, rl_watch, link);
        ev_timer_stop(client->loop, &w->linger);
        free(w);
    }
    rl_list_init(&client->watches);
    for (size_t i = 0; i < client->n; i++)
        subscriber_off(&client->subscribers[i]);
}

static rl_watch *watch_new(redlock_client *client, const void *resource, size_t resource_len)
{
    size_t channels = client->n * sizeof(rl_watch_channel);
    rl_watch *w = calloc(1, sizeof(*w) + channels + resource_len);
    if (w == NULL)
        return NULL;
    w->client = client;
    rl_list_init(&w->waiters);
    ev_timer_init(&w->linger, watch_on_linger, 0., 0.);
    w->linger.data = w;
    w->resource = (char *)w->channels + channels;
    w->resource_len = resource_len;
    memcpy(w->resource, resource, resource_len);
    rl_list_push_back(&client->watches, &w->link);
    return w;
}

int rl_waiter_join(redlock_client *client, rl_waiter *waiter, const void *resource,
                   size_t resource_len, int64_t since_us)
{
    rl_watch *w = watch_find(client, resource, resource_len);
    if (w == NULL && (w = watch_new(client, resource, resource_len)) == NULL)
        return REDLOCK_ENOMEM;
    waiter->watch = w;
    rl_list_push_back(&w->waiters, &waiter->link);
    w->wanted = true;
    ev_timer_stop(client->loop, &w->linger);
    for (size_t i = 0; i < client->n; i++) {
        rl_subscriber *s = &client->subscribers[i];
        const rl_watch_channel *ch = &w->channels[i];
        if (s->state == RL_SUBSCRIBER_OFF)
            subscriber_connect(s); /* subscribes to w */
        else
            channel_advance(s, w);
        /* Heard since the attempt began, or subscribed since: a delete
         * after the attempt's request may have gone unheard. */
        if (ch->state == RL_CHANNEL_SUBSCRIBED &&
            (ch->confirmed_us >= since_us || ch->announced_us >= since_us))
            waiter->on_announce(waiter, i, NULL, 0);
    }
    return REDLOCK_OK;
}

void rl_waiter_leave(rl_waiter *waiter)
{
    rl_watch *w = waiter->watch;
    if (w == NULL)
        return;
    waiter->watch = NULL;
    rl_list_remove(&waiter->link);
    if (rl_list_empty(&w->waiters))
        rl_timer_arm_in(w->client->loop, &w->linger, (int64_t)RL_WATCH_LINGER_MS * 1000);
}

bool rl_watch_may_hear(redlock_client *client, const void *resource, size_t resource_len,
                       size_t master)
{
    const rl_watch *w = watch_find(client, resource, resource_len);
    return w != NULL && w->channels[master].state != RL_CHANNEL_NONE;
}
