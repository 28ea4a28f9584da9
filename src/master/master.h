/* SPDX-License-Identifier: BSD-3-Clause */
/* One master's connection: connect with a timeout, handshake (AUTH, SELECT,
 * SCRIPT LOAD), reconnect with capped exponential backoff, and close a
 * connection whose replies stall. Requests are what its owner gives it
 * (request.h), told their outcome through the functions they carry.
 * At most max_in_flight of them are sent and unanswered at once; the rest
 * wait in the master's send queue (send_queue.h), so a burst waits where
 * its deadlines do not run and where what is no longer wanted is dropped
 * before it is sent. Extensions (and releases) that wait there together go
 * out as one batched request (batch.h), which takes a place in the
 * window for each lock; an extension waits a moment for others to batch with.
 *
 *   IDLE --connect--> CONNECTING --handshake done--> READY
 *     ^                   |                            |
 *     +---- backoff <-----+-- refused, timeout, -------+-- lost, stalled
 *
 * and, once the client is freed (rl_master_close):
 *
 *   CONNECTING, requests queued --> FLUSHING --handshake done--> DRAINING
 *     (ready before)
 *   READY, replies in flight ---------------------------------> DRAINING
 *   FLUSHING, DRAINING --done, failed or overdue--> CLOSED
 *   IDLE, CONNECTING, READY, nothing to wait for --> CLOSED
 *   CONNECTING, never ready (nothing of ours sent) --> CLOSED
 *
 * master.c draws it in full and says which timer belongs to which state.
 */
#ifndef REDLOCK_MASTER_H
#define REDLOCK_MASTER_H

#include "master/clock_probe.h"
#include "master/restart.h"
#include "config/config_internal.h"
#include "util/list.h"
#include "master/request.h"
#include "master/send_queue.h"
#include "wire/server_info.h"
#include "util/counters.h"

#include <ev.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Requests one master may hold at once: sent and not answered yet, or
 * queued behind its handshake or its window. A stopped master answers none, and each of
 * them keeps its round, hiredis's copy and callback until the connection is
 * dropped as stalled; this bounds them. Beyond it, requests to that master
 * fail at once as NOT_CONNECTED with RL_MASTER_FULL_DETAIL, never sent,
 * until replies make room. Releases may go on to twice as many: one may
 * have to undo a SET sent before the limit was reached.
 */
#define RL_MASTER_MAX_OUTSTANDING 4096
#define RL_MASTER_FULL_DETAIL "too many requests already wait for it; not sent"

struct redisAsyncContext;
typedef struct redlock_client redlock_client;
typedef struct rl_master rl_master;

/* What rl_master_submit() did with a request it took; an outcome (>= 0)
 * when it did not. */
enum {
    RL_SUBMIT_SENT = -1,    /* handed to hiredis: its on_sent was called */
    RL_SUBMIT_WAITING = -2, /* waits for the handshake, in order */
    RL_SUBMIT_QUEUED = -3,  /* waits in the send queue for room, or to gather a batch */
};

typedef enum rl_master_state {
    RL_MASTER_IDLE,       /* no connection; the reconnect timer may be armed */
    RL_MASTER_CONNECTING, /* TCP connect and handshake under way; requests queue */
    RL_MASTER_READY,      /* handshake done: requests go straight out */
    RL_MASTER_FLUSHING,   /* the client was freed during the handshake: the
                             queue goes out when it completes */
    RL_MASTER_DRAINING,   /* the client was freed: awaiting the replies in flight */
    RL_MASTER_CLOSED      /* the client was freed: no connection, no timer */
} rl_master_state;

struct rl_master {
    redlock_client *client;
    const rl_node *node;          /* in the client's config copy */
    rl_master_state state;
    struct redisAsyncContext *ac; /* NULL unless CONNECTING, READY, FLUSHING or DRAINING */
    int64_t connect_timeout_us;
    int64_t command_timeout_us;
    int64_t stall_timeout_us;     /* no reply for this long: drop the connection */
    int64_t connect_deadline_us;  /* while CONNECTING or FLUSHING */
    int64_t deadline_us;          /* when deadline_timer is due (rl_now_us() time) */
    int64_t reconnect_at_us;      /* when reconnect_timer is due */
    int64_t backoff_ms;           /* the next reconnect delay */
    unsigned handshake_left;      /* handshake replies still expected */
    bool ever_ready;              /* to log "reconnected" rather than "connected" */
    bool dropped;                 /* a connection to it was lost or failed: connecting
                                     again is a reconnection (rl_master_suspect) */
    rl_link waiting;              /* requests queued until the handshake is done */
    size_t queued;                /* requests in waiting */
    rl_send_queue queue;          /* READY: requests waiting for room in the window */
    size_t window;                /* max_in_flight */
    size_t in_flight;             /* our requests sent on ac, not yet answered */
    unsigned owed_dropped;        /* releases owed to it but not kept since it was last
                                     ready (owed_release.c: told once, when it is back) */
    int64_t last_progress_us;     /* last reply, or first send after silence */
    int failure_outcome;          /* for requests while IDLE: NOT_CONNECTED or AUTH_FAILED */
    char failure[192];            /* why the master is not connected */
    char run_id[41];              /* the server's INFO run_id, "" when unknown */
    rl_server_info server;        /* its name, version and commands, from INFO */
    unsigned conn_caps;           /* this connection's commands (RL_CAP_*), from its
                                     INFO; 0 until then: requests go with scripts */
    char no_scripts[192];         /* this connection's SCRIPT LOAD refused: why, and
                                     only script-free forms go (master.c); "" else */
    rl_master_counters stats;     /* for redlock_client_stats() */
    rl_clock_probe probe;         /* what its clock is proven to do */
    rl_restart restart;           /* from when its OKs count (restart.h) */
    ev_timer deadline_timer;      /* CONNECTING, FLUSHING, DRAINING: the state's deadline */
    ev_timer reconnect_timer;     /* IDLE: backoff before the next connect */
    ev_timer stall_timer;         /* READY: watches replies while in_flight > 0 */
    ev_timer batch_timer;         /* READY: extensions gather in the queue until it
                                     fires (master.c) */
};

/* Set up m for node; no I/O yet. Each time it is READY, before what
 * waited for the handshake goes out, it tells the client's master_ready
 * hook (context.h: the owed releases). */
void rl_master_init(rl_master *m, redlock_client *client, const rl_node *node);
/* Start connecting now. */
void rl_master_start(rl_master *m);
/* For the client being freed: stop reconnecting and close, but first let
 * what is already submitted reach the master. Requests queued behind a
 * handshake in progress go out once it completes (FLUSHING, until the
 * connect deadline plus one command timeout) if the master was ever ready
 * (else none of our SETs went there: they fail), and replies in flight are
 * awaited (DRAINING, one command timeout); then the connection is closed
 * (CLOSED, no timer left). Holds a client reference meanwhile.
 * Idempotent. */
void rl_master_close(rl_master *m);

/*
 * Send req's command, or queue it: while the handshake runs
 * (RL_SUBMIT_WAITING), or while the window is full or others wait for
 * room, or, an extension, to gather a batch (RL_SUBMIT_QUEUED). Returns
 * RL_SUBMIT_SENT when sent (after req's on_sent), RL_SUBMIT_WAITING or
 * RL_SUBMIT_QUEUED (its ops will be told later), else the outcome to
 * record at once (NOT_CONNECTED or AUTH_FAILED; NOT_CONNECTED too beyond
 * RL_MASTER_MAX_OUTSTANDING); calls back nothing but on_sent
 * synchronously.
 */
int rl_master_submit(rl_master *m, rl_request *req);
/* Take a waiting or queued request back: it will not be sent. */
void rl_master_withdraw(rl_master *m, rl_request *req);
/* When a request submitted now must be answered by. A request waiting for a
 * handshake in progress gets the rest of the connect timeout on top. */
int64_t rl_master_reply_deadline(const rl_master *m, int64_t now_us);
/* Whether the extensions waiting for room at m are behind: the next one
 * to go has waited longer than a command timeout. */
bool rl_master_behind(const rl_master *m, int64_t now_us);
/* Whether m is ready and has answered lately (within half its stall
 * timeout), or has room for more requests. */
bool rl_master_answering(const rl_master *m, int64_t now_us);
/*
 * Whether m is not answering for a request submitted now: connecting again
 * after a connection of this client to it was lost or failed, its handshake
 * not done within a command timeout (never on the first connection: a new
 * client waits for its handshakes), or ready with
 * requests in flight and nothing answered for over a command timeout (the
 * oldest of them is past its deadline). An acquire does not wait for it
 * (quorum.h).
 */
bool rl_master_suspect(const rl_master *m, int64_t now_us);
/* Why a request failed to go out, for results and logs. */
const char *rl_master_failure(const rl_master *m, int outcome);
/* m's connection refused a script-free form of caps (RL_CAP_*: the ACL
 * user lacks its command, or the server does): no more of it there. */
void rl_master_forgo_caps(rl_master *m, unsigned caps);

#endif
