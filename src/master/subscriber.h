/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hearing release announcements (channel.h). A waiter (an acquire between
 * attempts) joins the watch of its resource; a watch subscribes to the
 * resource's channel on every master, through one pub/sub connection per
 * master that all the client's watches share. Every announcement, and
 * every subscription confirmed (a delete just before it was not heard),
 * is passed to each waiter of the resource with the master's index.
 *
 * A watch outlives its last waiter by RL_WATCH_LINGER_MS, so that a
 * resource waited on again and again keeps its subscriptions; then it
 * unsubscribes, and is freed once every master confirmed. The connection
 * of a master is opened with the first watch and closed with the last.
 *
 * Connection, per master (subscriber.c draws the channels too):
 *
 *   OFF --first watch--> CONNECTING --its own channel confirmed--> READY
 *    ^                     |                                        |
 *    |                     +--refused, timeout, error--> BACKOFF <--+-- lost, or
 *    |                                                     |           confirmations
 *    |                                                     |           stalled
 *    +--last watch freed (any state), or BACKOFF over  <---+
 *       with no watch left
 *
 * Nothing here runs user code: waiters are told through a function that
 * must only take note (the acquire re-arms its retry timer).
 */
#ifndef REDLOCK_SUBSCRIBER_H
#define REDLOCK_SUBSCRIBER_H

#include "util/list.h"

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How long a watch stays subscribed after its last waiter left. */
#define RL_WATCH_LINGER_MS 1000

struct redisAsyncContext;
typedef struct redlock_client redlock_client;
typedef struct rl_node rl_node;
typedef struct rl_watch rl_watch;
typedef struct rl_waiter rl_waiter;

/*
 * Master master may have deleted the key: it announced value's delete, or
 * (value NULL) a subscription there was just confirmed. Must not run user
 * code, nor join or leave.
 */
typedef void rl_waiter_fn(rl_waiter *w, size_t master, const char *value, size_t value_len);

struct rl_waiter {
    rl_link link;        /* in its watch's waiters */
    rl_watch *watch;     /* NULL when not joined */
    rl_waiter_fn *on_announce;
    void *owner;         /* for on_announce */
};

typedef enum rl_subscriber_state {
    RL_SUBSCRIBER_OFF,        /* no connection, no timer */
    RL_SUBSCRIBER_CONNECTING, /* connect, AUTH and SUBSCRIBEs sent; timer: the connect timeout */
    RL_SUBSCRIBER_READY,      /* its own channel confirmed; timer: the stall time while
                                 confirmations are awaited */
    RL_SUBSCRIBER_BACKOFF     /* timer: the reconnect delay */
} rl_subscriber_state;

typedef struct rl_subscriber {
    redlock_client *client;
    const rl_node *node;
    size_t index;                 /* the master's */
    rl_subscriber_state state;
    struct redisAsyncContext *ac; /* CONNECTING, READY */
    ev_timer timer;               /* per state: see subscriber_on_timer() */
    unsigned pending;             /* (un)subscribe confirmations awaited; READY drops the
                                     connection after the master's stall time without one */
    int64_t progress_us;          /* the last confirmation, or the first request after none */
    int64_t backoff_ms;
    char failure[160];            /* why it was last dropped, to log a change once */
} rl_subscriber;

/* Set up client->subscribers (client->n of them, after the masters); no
 * I/O yet. */
int rl_subscribers_init(redlock_client *client);
/* Close every connection and free every watch, now: the client is being
 * freed and its waiters are gone. */
void rl_subscribers_close(redlock_client *client);

/*
 * Join the watch of resource, which subscribes where it is not yet.
 * since_us is when the waiter's last attempt began: masters already
 * subscribed that announced a delete since, or whose subscription is newer,
 * are passed to on_announce before this returns. REDLOCK_OK, or
 * REDLOCK_ENOMEM (then w is not joined).
 */
int rl_waiter_join(redlock_client *client, rl_waiter *w, const void *resource, size_t resource_len,
                   int64_t since_us);
/* Leave the watch, if joined. */
void rl_waiter_leave(rl_waiter *w);
/* Whether this client may be among the subscribers to resource's channel
 * on master (a release counts who heard its announcement). */
bool rl_watch_may_hear(redlock_client *client, const void *resource, size_t resource_len,
                       size_t master);

#endif
