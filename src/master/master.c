/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One master's connection.
 *
 *   IDLE --connect--> CONNECTING --handshake done--> READY
 *     ^                   |                            |
 *     +---- backoff <-----+-- refused, timeout, -------+-- lost, stalled
 *                             auth or handshake error
 *
 * Freeing the client (rl_master_close) takes every state to CLOSED, but
 * first lets what was already submitted go out, within a bounded time:
 *
 *   CONNECTING --requests queued--> FLUSHING --handshake done, queue sent--+
 *                                       |                                  |
 *   READY --replies in flight-----------|--------------------> DRAINING <--+
 *                                       |                          |
 *               refused, timeout, error,|                          | replies in,
 *               or nothing sent         |                          | lost or overdue
 *                                       v                          |
 *   IDLE, CONNECTING, READY -------> CLOSED <----------------------+
 *   with nothing to wait for, or
 *   CONNECTING never ready before
 *
 * A master never ready was sent nothing of ours but a handshake: none of
 * our SETs can be there, so nothing waits for it (a stopped one would hold
 * the process up to a connect timeout). A release it may still need (of a
 * lock set by an earlier connection or another process), and the DEL of
 * the clock probe the handshake sets, are written behind the handshake
 * before the close, not waited for (master_close_unready).
 *
 * The handshake (AUTH, SELECT, SCRIPT LOAD of each script, INFO) is pipelined
 * right after the connect, so a new connection costs one round trip. INFO's
 * run_id keeps two config entries that reach the same server from both
 * voting, and tells when its OKs count (restart.h; without a run_id, the
 * marker script sent as INFO's reply comes in: restart_probe.h). A master
 * declared durable is also asked its AOF settings, not waited for.
 * Requests submitted while CONNECTING (or FLUSHING) wait in a queue and
 * go out once the handshake is done; while IDLE they fail at once, so a
 * dead master costs nothing. A master that leaves requests unanswered for
 * stall_timeout (a stopped process, a black-holed network) is disconnected:
 * its pending requests fail and it reconnects with backoff. Until then, and
 * during a handshake it never answers, at most RL_MASTER_MAX_OUTSTANDING
 * requests are sent or queued (twice as many for releases); beyond, requests
 * to it fail at once, so a stopped master costs a bounded amount of memory,
 * not one request per operation for as long as it is stopped.
 *
 * While READY, at most `window` (max_in_flight) requests are sent and not
 * answered; the others wait in the send queue, most urgent first, and go
 * out as replies make room. Their deadlines start when they go out, so a
 * burst does not time out for having waited behind itself, and a request
 * no longer wanted (its round decided, its lock released or lost) is taken
 * out of the queue, never sent. When the connection goes, what is queued
 * fails with it; when the client is freed, it is all sent (the releases
 * the free sends among it).
 *
 * Extensions and releases that leave the queue together, up to
 * RL_BATCH_MAX of them, go out as one call of a batch script (batch.h):
 * one script call on the master for all those locks, one request on the
 * wire; in the window it takes a place for each lock (the window bounds
 * the work a master has in hand), and it may start whenever there is room,
 * so the window is exceeded by at most RL_BATCH_MAX - 1. So that extensions do batch, one submitted while the window has
 * room waits RL_BATCH_GATHER_US in the queue (the batch timer, armed by
 * the first) for others to join it, or less once RL_BATCH_MAX wait; the
 * other requests go past it. Releases are never held back (a release frees
 * a lock for others now): they batch only when they wait for room anyway.
 *
 * Timers belong to states. master_enter(), the one place the state changes,
 * stops all four and starts the deadline of the state it enters:
 *   reconnect_timer  IDLE: the backoff before the next connect
 *   deadline_timer   CONNECTING: the connect timeout; FLUSHING: that plus
 *                    one command timeout; DRAINING: one command timeout
 *   stall_timer      READY, while requests are in flight
 *   batch_timer      READY, while extensions gather in the queue
 * CLOSED has none. The deadline, stall and batch timers run after I/O
 * (RL_DEADLINE_PRIORITY). Each handler checks the monotonic clock itself and waits
 * on if it fired early. FLUSHING and DRAINING hold a client reference,
 * dropped last when they reach CLOSED (master_close).
 *
 * The log callback and the owners of requests (through the rounds) may run
 * user code that frees the client, which closes every master: code that
 * calls them holds a client reference, has finished its own state change
 * first, and checks the state again afterwards.
 *
 * hiredis calls back with the context; ac->data points at the master while
 * the context is current and is cleared before we free it, so callbacks from
 * a context being torn down are recognised and ignored.
 */
#include "master/master.h"
#include "context/context.h"
#include "util/counters.h"
#include "config/config_internal.h"
#include "master/clock_probe.h"
#include "master/connect.h"
#include "master/request.h"
#include "master/restart_probe.h"
#include "master/send_queue.h"
#include "master/tls.h"
#include "redlock/redlock.h"
#include "master/batch.h"
#include "util/list.h"
#include "util/log.h"
#include "util/random.h"
#include "util/timer.h"
#include "util/util.h"
#include "wire/reply.h"
#include "wire/scripts.h"
#include "wire/server_info.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Replies overdue for this many command timeouts mean a stalled master... */
#define RL_STALL_TIMEOUTS 10
/* ...but never less than this, so a short command timeout does not make a
 * merely slow master reconnect over and over. */
#define RL_STALL_MIN_US 1000000
/* How long an extension submitted to a master with room waits for others
 * to go out with it in one batch. Small beside any lock's TTL (an
 * auto-extension goes out a third of the TTL before it runs out), long
 * enough for a busy client's extensions to gather. */
#define RL_BATCH_GATHER_US 2000

_Static_assert(sizeof(((rl_master *)0)->run_id) == RL_RUN_ID_SIZE, "run_id holds 40 hex digits");

static void master_connect(rl_master *m);
static bool master_send(rl_master *m, rl_request *req);
static bool master_send_batch(rl_master *m, const rl_script *script, rl_request **reqs, size_t n);
static void master_on_deadline(struct ev_loop *loop, ev_timer *w, int revents);
static void master_on_reconnect_timer(struct ev_loop *loop, ev_timer *w, int revents);
static void master_on_stall_timer(struct ev_loop *loop, ev_timer *w, int revents);
static void master_on_batch_timer(struct ev_loop *loop, ev_timer *w, int revents);
static void master_count_sent(rl_master *m, int64_t now, size_t requests);
static void master_on_probe_deleted(redisAsyncContext *ac, void *r, void *privdata);
static void master_on_part_reply(redisAsyncContext *ac, void *r, void *privdata);
static void master_on_command_reply(redisAsyncContext *ac, void *r, void *privdata);

/* The script-free form req goes to m in: the first whose commands m's
 * connection is known (from its INFO) to have (caps 0: every server's);
 * NULL: its script. */
static const rl_plain_request *master_plain_form(const rl_master *m, const rl_request *req)
{
    for (size_t i = 0; req->plain != NULL && i < req->plain_forms; i++)
        if (req->plain[i].parts > 0 && (m->conn_caps & req->plain[i].caps) == req->plain[i].caps)
            return &req->plain[i];
    return NULL;
}

static bool master_takes_plain(const rl_master *m, const rl_request *req)
{
    return master_plain_form(m, req) != NULL;
}

/* Whether m refuses req: its connection refused the scripts (the ACL, or a
 * service without them) and req has no script-free form it can take. */
static bool master_refuses(const rl_master *m, const rl_request *req)
{
    return m->no_scripts[0] != '\0' && req->scripted && !master_takes_plain(m, req);
}

/* Send req, or tell its owner why it cannot go (its owner may free the
 * client). */
static void master_send_or_fail(rl_master *m, rl_request *req)
{
    if (master_refuses(m, req))
        req->ops->on_failure(req, REDLOCK_MASTER_REFUSED, m->no_scripts);
    else if (!master_send(m, req))
        req->ops->on_failure(req, REDLOCK_MASTER_NOT_CONNECTED, "the request could not be sent");
}

static rl_logger *master_log(rl_master *m)
{
    return &m->client->log;
}

/* The stats' view of in_flight and of the queues: after every change. */
static void master_gauge(rl_master *m)
{
    rl_gauge_set(&m->stats.in_flight, m->in_flight);
    rl_gauge_set(&m->stats.queued, m->queued + m->queue.count);
}

/* The states a freed client's master finishes in, holding the client. */
static bool master_holds_client(rl_master_state state)
{
    return state == RL_MASTER_FLUSHING || state == RL_MASTER_DRAINING;
}

/* The states whose handshake is under way. */
static bool master_in_handshake(rl_master_state state)
{
    return state == RL_MASTER_CONNECTING || state == RL_MASTER_FLUSHING;
}

/* As many requests as a master may hold are sent or queued (behind the
 * handshake or for room in the window), without req; NULL: any request
 * but a release (master.h). */
static bool master_full(const rl_master *m, const rl_request *req)
{
    size_t limit = RL_MASTER_MAX_OUTSTANDING;
    if (req != NULL && req->queue_class == RL_REQUEST_RELEASE)
        limit *= 2;
    return m->in_flight + m->queued + m->queue.count >= limit;
}

/*
 * The one place the state changes. Stops every timer, then arms the
 * deadline of the state entered (the reconnect and stall timers are armed
 * within IDLE and READY by what needs them), and takes the client reference
 * that FLUSHING and DRAINING hold; master_close() drops it.
 */
static void master_enter(rl_master *m, rl_master_state to)
{
    struct ev_loop *loop = m->client->loop;
    bool held = master_holds_client(m->state);
    m->state = to;
    static const int shown[] = {
        [RL_MASTER_IDLE] = REDLOCK_CONNECTION_DOWN,
        [RL_MASTER_CONNECTING] = REDLOCK_CONNECTION_CONNECTING,
        [RL_MASTER_READY] = REDLOCK_CONNECTION_READY,
        [RL_MASTER_FLUSHING] = REDLOCK_CONNECTION_CLOSING,
        [RL_MASTER_DRAINING] = REDLOCK_CONNECTION_CLOSING,
        [RL_MASTER_CLOSED] = REDLOCK_CONNECTION_CLOSING,
    };
    atomic_store_explicit(&m->stats.state, shown[to], memory_order_relaxed);
    ev_timer_stop(loop, &m->reconnect_timer);
    ev_timer_stop(loop, &m->deadline_timer);
    ev_timer_stop(loop, &m->stall_timer);
    ev_timer_stop(loop, &m->batch_timer);
    bool deadline = true;
    switch (to) {
    case RL_MASTER_CONNECTING:
        m->deadline_us = m->connect_deadline_us;
        break;
    case RL_MASTER_FLUSHING:
        m->deadline_us = m->connect_deadline_us + m->command_timeout_us;
        break;
    case RL_MASTER_DRAINING:
        m->deadline_us = rl_now_us() + m->command_timeout_us;
        break;
    default:
        deadline = false;
        break;
    }
    if (deadline)
        rl_timer_arm_at(loop, &m->deadline_timer, m->deadline_us);
    if (!held && master_holds_client(to))
        rl_client_ref(m->client);
}

void rl_master_init(rl_master *m, redlock_client *client, const rl_node *node)
{
    memset(m, 0, sizeof(*m));
    m->client = client;
    m->node = node;
    m->state = RL_MASTER_IDLE;
    m->connect_timeout_us = rl_node_connect_timeout_ms(client->cfg, node) * 1000;
    m->command_timeout_us = rl_node_command_timeout_ms(client->cfg, node) * 1000;
    m->stall_timeout_us = m->command_timeout_us * RL_STALL_TIMEOUTS;
    if (m->stall_timeout_us < RL_STALL_MIN_US)
        m->stall_timeout_us = RL_STALL_MIN_US;
    m->backoff_ms = rl_client_setting(client, REDLOCK_RECONNECT_MIN_MS);
    m->failure_outcome = REDLOCK_MASTER_NOT_CONNECTED;
    snprintf(m->failure, sizeof(m->failure), "not connected yet");
    rl_list_init(&m->waiting);
    ev_timer_init(&m->deadline_timer, master_on_deadline, 0., 0.);
    ev_timer_init(&m->reconnect_timer, master_on_reconnect_timer, 0., 0.);
    ev_timer_init(&m->stall_timer, master_on_stall_timer, 0., 0.);
    ev_set_priority(&m->deadline_timer, RL_DEADLINE_PRIORITY);
    ev_timer_init(&m->batch_timer, master_on_batch_timer, 0., 0.);
    ev_set_priority(&m->stall_timer, RL_DEADLINE_PRIORITY);
    ev_set_priority(&m->batch_timer, RL_DEADLINE_PRIORITY);
    rl_send_queue_init(&m->queue);
    m->window = (size_t)rl_client_setting(client, REDLOCK_MAX_IN_FLIGHT);
    m->deadline_timer.data = m->reconnect_timer.data = m->stall_timer.data = m;
    m->batch_timer.data = m;
    rl_clock_probe_init(m);
    rl_restart_init(m);
}

void rl_master_start(rl_master *m)
{
    master_connect(m);
}

const char *rl_master_failure(const rl_master *m, int outcome)
{
    bool connected = m->state == RL_MASTER_READY || master_in_handshake(m->state);
    if (outcome == REDLOCK_MASTER_REFUSED && m->no_scripts[0] != '\0')
        return m->no_scripts;
    return connected && master_full(m, NULL) ? RL_MASTER_FULL_DETAIL : m->failure;
}

void rl_master_forgo_caps(rl_master *m, unsigned caps)
{
    if ((m->conn_caps & caps) == 0)
        return; /* told already: several were in flight */
    m->conn_caps &= ~caps;
    RL_EXPECT_ENTERED(m->client); /* a free from the log waits for its leave */
    rl_log(master_log(m), REDLOCK_LOG_INFO,
           "master %s: %s refused (the result shows the reply): the scripts instead on this "
           "connection (ACL: docs/servers.md)",
           m->node->name, rl_server_cap_name(caps));
}

/* Remember why requests cannot go out. */
static void master_set_failure(rl_master *m, int outcome, const char *reason)
{
    m->failure_outcome = outcome;
    snprintf(m->failure, sizeof(m->failure), "%s", reason);
}

/* Fail every request waiting for the handshake or for room with the
 * current failure. A request's owner may run user code; new requests then
 * see IDLE/CLOSED and fail at once. */
static void master_fail_waiting(rl_master *m)
{
    rl_link *link;
    while ((link = rl_list_pop_front(&m->waiting)) != NULL) {
        m->queued--;
        rl_request *req = rl_container_of(link, rl_request, link);
        req->ops->on_failure(req, m->failure_outcome, m->failure);
    }
    rl_request *req;
    while ((req = rl_send_queue_pop(&m->queue)) != NULL)
        req->ops->on_failure(req, m->failure_outcome, m->failure);
    master_gauge(m);
}

/* Close for good (CLOSED): free the context if we still hold it, fail what
 * is still queued, and drop the reference FLUSHING or DRAINING held (last:
 * it may free the client, and m with it). */
static void master_close(rl_master *m)
{
    if (m->state == RL_MASTER_CLOSED)
        return;
    redlock_client *client = m->client;
    bool held = master_holds_client(m->state);
    rl_clock_probe_on_lost(m);
    struct redisAsyncContext *ac = m->ac;
    m->ac = NULL;
    m->in_flight = 0;
    master_enter(m, RL_MASTER_CLOSED);
    if (ac != NULL) {
        ac->data = NULL;
        redisAsyncFree(ac); /* requests still pending complete with no reply */
    }
    rl_clock_probe_flush(m);
    master_fail_waiting(m);
    rl_send_queue_free(&m->queue);
    if (held)
        rl_client_unref(client);
}

/* Whether the extensions in the queue are held back for others to join
 * their batch: the batch timer runs and a full batch does not wait yet. */
static bool master_gathering(const rl_master *m)
{
    return ev_is_active(&m->batch_timer) && m->queue.extend_count < RL_BATCH_MAX;
}

/* Requests in the queue that would go out now, given room. */
static size_t master_ready_queued(const rl_master *m)
{
    return m->queue.count - (master_gathering(m) ? m->queue.extend_count : 0);
}

/* Take first out of the queue and send it, in one batch with the requests
 * next in line in its class that batch with it. A batch
 * that cannot be written (out of memory) goes out request by request; a
 * request that cannot be sent fails, and its owner may free the client. */
static void master_send_from_queue(rl_master *m, rl_request *first)
{
    rl_request *reqs[RL_BATCH_MAX];
    size_t n = 1;
    /* A request that goes without a script goes alone (pipelined all the
     * same), and so does one that would have to batch with it. */
    const rl_script *script = master_takes_plain(m, first) || master_refuses(m, first)
                                  ? NULL
                                  : first->batch_script;
    rl_send_queue_remove(&m->queue, first);
    rl_send_queue_sent(&m->queue, first);
    reqs[0] = first;
    rl_request *next;
    while (script != NULL && n < RL_BATCH_MAX &&
           (next = rl_send_queue_peek_after(&m->queue, first)) != NULL &&
           next->batch_script == script && !master_takes_plain(m, next)) {
        rl_send_queue_remove(&m->queue, next);
        reqs[n++] = next;
    }
    if (n > 1 && master_send_batch(m, script, reqs, n))
        return;
    for (size_t i = 0; i < n; i++)
        master_send_or_fail(m, reqs[i]);
}

/* Send what waits for room, while there is room, batched where it can be;
 * everything with all (the client is freed: what it submitted goes out
 * before the close). Extensions still gathering stay. The loop stops when
 * the state changes (a failed request's owner may free the client). */
static void master_send_queued(rl_master *m, bool all)
{
    while ((m->state == RL_MASTER_READY || m->state == RL_MASTER_FLUSHING) &&
           (all || m->in_flight < m->window)) {
        bool extensions = all || !master_gathering(m);
        rl_request *req = rl_send_queue_peek(&m->queue, extensions);
        if (req == NULL)
            break;
        master_send_from_queue(m, req);
    }
    master_gauge(m);
}

/* The client was freed while m is connected: wait for the replies in flight
 * (DRAINING), or close at once when there are none. */
static void master_finish(rl_master *m)
{
    rl_master_state before = m->state;
    /* The probe goes with the client: its DEL is awaited like the rest. */
    if (rl_clock_probe_on_close(m, master_on_probe_deleted))
        master_count_sent(m, rl_now_us(), 1);
    master_send_queued(m, true);
    if (m->state != before)
        return; /* closed by a failure meanwhile */
    if (m->in_flight == 0) {
        master_close(m);
        return;
    }
    master_enter(m, RL_MASTER_DRAINING);
    /* hiredis closes once every pending reply is in, then calls
     * master_on_disconnect; no new request is accepted meanwhile. */
    redisAsyncDisconnect(m->ac);
}

static void master_schedule_reconnect(rl_master *m)
{
    if (m->state != RL_MASTER_IDLE || m->client->closing)
        return;
    int64_t delay_ms = m->backoff_ms + rl_random_jitter(m->backoff_ms / 4);
    int64_t max_ms = rl_client_setting(m->client, REDLOCK_RECONNECT_MAX_MS);
    m->backoff_ms = m->backoff_ms * 2 > max_ms ? max_ms : m->backoff_ms * 2;
    m->reconnect_at_us = rl_now_us() + delay_ms * 1000;
    rl_timer_arm_at(m->client->loop, &m->reconnect_timer, m->reconnect_at_us);
}

/* How loud a drop is: a new reason, or a ready connection lost, is news;
 * the same failure again while reconnecting is not. */
static int master_drop_level(const rl_master *m, int outcome, const char *reason)
{
    if (strcmp(m->failure, reason) == 0 && m->state != RL_MASTER_READY)
        return REDLOCK_LOG_DEBUG;
    return outcome == REDLOCK_MASTER_AUTH_FAILED ? REDLOCK_LOG_ERROR : REDLOCK_LOG_WARN;
}

/*
 * A connection (or an attempt) failed: from IDLE, CONNECTING or READY back
 * to IDLE. Log why, free the context (hiredis completes our requests on it
 * with no reply; they read m->failure), schedule a reconnect and fail the
 * queued requests. The log callback and their owners may free the client:
 * inside the entry every way here is, that waits for its leave, and the
 * master is IDLE before either runs, so that closes it. In FLUSHING the
 * client was freed already: what was queued cannot go out, so close.
 */
static void master_drop(rl_master *m, int outcome, const char *reason)
{
    if (m->state == RL_MASTER_FLUSHING) {
        master_set_failure(m, outcome, reason);
        master_close(m);
        return;
    }
    if (m->state == RL_MASTER_DRAINING || m->state == RL_MASTER_CLOSED)
        return;
    RL_EXPECT_ENTERED(m->client);
    int level = master_drop_level(m, outcome, reason);
    master_set_failure(m, outcome, reason);
    struct redisAsyncContext *ac = m->ac;
    if (ac != NULL)
        ac->data = NULL;
    m->ac = NULL;
    m->in_flight = 0;
    m->dropped = true;
    m->run_id[0] = '\0';
    rl_clock_probe_on_lost(m);
    master_enter(m, RL_MASTER_IDLE);
    rl_log(master_log(m), level, "master %s: %s; retrying in %lld ms", m->node->name, m->failure,
           (long long)m->backoff_ms);
    if (ac != NULL)
        redisAsyncFree(ac); /* deferred by hiredis when inside its callback */
    master_schedule_reconnect(m);
    rl_clock_probe_flush(m);
    master_fail_waiting(m);
}

/* Another master of this client connected to the same server, if any: two
 * config entries naming one server (say localhost and 127.0.0.1) must not
 * give it two votes. */
static const rl_master *master_same_server(const rl_master *m)
{
    const redlock_client *client = m->client;
    if (m->run_id[0] == '\0')
        return NULL;
    for (size_t i = 0; i < client->n; i++) {
        const rl_master *other = &client->masters[i];
        if (other != m && strcmp(other->run_id, m->run_id) == 0)
            return other;
    }
    return NULL;
}

/* Send what waited for the handshake. A request that cannot be sent fails,
 * and its owner may free the client: the loop stops when the state changes. */
static void master_send_waiting(rl_master *m)
{
    rl_link *link;
    while ((m->state == RL_MASTER_READY || m->state == RL_MASTER_FLUSHING) &&
           (link = rl_list_pop_front(&m->waiting)) != NULL) {
        m->queued--;
        master_send_or_fail(m, rl_container_of(link, rl_request, link));
    }
    master_gauge(m);
}

/* A connection that refused the scripts: ready only where its server has
 * every command a plain lock takes without them (docs/servers.md), and
 * the client is to use them; else dropped, refused, with why. */
static bool master_plain_only(rl_master *m)
{
    bool plain = (m->conn_caps & RL_CAP_SET_IFEQ) &&
                 (m->conn_caps & (RL_CAP_DELIFEQ | RL_CAP_DELEX)) &&
                 rl_client_setting(m->client, REDLOCK_SCRIPT_FREE) != 0;
    if (!plain) {
        master_drop(m, REDLOCK_MASTER_REFUSED, m->no_scripts);
        return false;
    }
    RL_EXPECT_ENTERED(m->client); /* a free from the log waits for its leave */
    rl_log(master_log(m), REDLOCK_LOG_WARN,
           "master %s: scripts refused; a plain lock (one resource, not fenced, not "
           "reentrant) works here without them, the rest is refused: %s",
           m->node->name, m->no_scripts);
    return true;
}

/* The last handshake reply is in: READY, with the queue sent. FLUSHING
 * sends its queue, then finishes (the client was freed meanwhile). */
static void master_on_handshake_done(rl_master *m)
{
    const rl_master *twin = master_same_server(m);
    if (twin != NULL) {
        char reason[sizeof(m->failure)];
        snprintf(reason, sizeof(reason),
                 "the same Redis server as %s (run_id %.8s...): ignored, a server must not "
                 "count twice",
                 twin->node->name, m->run_id);
        master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, reason);
        return;
    }
    if (m->no_scripts[0] != '\0' && !master_plain_only(m))
        return;
    redlock_client *client = m->client;
    RL_EXPECT_ENTERED(client);
    bool again = m->ever_ready;
    m->ever_ready = true;
    rl_count(&m->stats.connects);
    m->backoff_ms = rl_client_setting(client, REDLOCK_RECONNECT_MIN_MS);
    if (m->state == RL_MASTER_CONNECTING) {
        master_set_failure(m, REDLOCK_MASTER_NOT_CONNECTED, "connection lost");
        master_enter(m, RL_MASTER_READY);
        m->client->hooks->master_ready(m);
    }
    master_send_waiting(m);
    master_send_queued(m, false);
    rl_log(master_log(m), REDLOCK_LOG_INFO, "master %s: %s", m->node->name,
           again ? "reconnected" : "connected");
    if (m->state == RL_MASTER_FLUSHING)
        master_finish(m);
}

/* A handshake reply (privdata is the step): on to the next step, done
 * after the last one, or drop the connection with the reason. */
static void master_handle_handshake_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    rl_master *m = ac->data;
    redisReply *reply = r;
    if (m == NULL || m->ac != ac || !master_in_handshake(m->state) || reply == NULL)
        return; /* a stale context, or the connection died: its own callback handles it */
    rl_handshake_step step = (rl_handshake_step)(uintptr_t)privdata;
    char reason[sizeof(m->failure)];

    switch (rl_reply_handshake(step, reply, m->node->password, reason, sizeof(reason))) {
    case RL_HANDSHAKE_ACCEPTED:
        if (step == RL_HS_INFO) {
            rl_reply_run_id(reply, m->run_id);
            rl_server_info_read(reply, &m->server);
            m->conn_caps = m->server.caps;
            /* Sent ahead of what waited for the handshake: its reply comes
             * before theirs. */
            if (rl_restart_on_info(m, m->run_id, rl_reply_uptime_s(reply)))
                rl_restart_probe_marker(m);
        }
        break;
    case RL_HANDSHAKE_INFO_REFUSED:
        RL_EXPECT_ENTERED(m->client); /* a free from the log waits for its leave */
        rl_log(master_log(m), REDLOCK_LOG_DEBUG,
               "master %s: INFO refused; cannot check for duplicate servers", m->node->name);
        rl_server_info_read(NULL, &m->server); /* unknown: no command beyond the scripts */
        if (rl_restart_on_info(m, "", -1))
            rl_restart_probe_marker(m);
        break;
    case RL_HANDSHAKE_AUTH_FAILED:
        master_drop(m, REDLOCK_MASTER_AUTH_FAILED, reason);
        return;
    case RL_HANDSHAKE_SCRIPTS_REFUSED:
        /* Answered: not unreachable, refused (as a NOPERM reply is). The
         * server may have the commands that make a plain lock without
         * scripts: its INFO, behind, says (master_on_handshake_done). */
        if (m->no_scripts[0] == '\0')
            snprintf(m->no_scripts, sizeof(m->no_scripts), "%s", reason);
        break;
    case RL_HANDSHAKE_FAILED:
        master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, reason);
        return;
    }
    if (--m->handshake_left == 0)
        master_on_handshake_done(m);
}

static void master_on_handshake_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    rl_master *owner = ac->data;
    if (owner == NULL)
        return; /* a context we let go of */
    redlock_client *client = owner->client;
    rl_client_enter(client);
    master_handle_handshake_reply(ac, r, privdata);
    rl_client_leave(client);
}

static bool master_send_handshake(rl_master *m)
{
    const rl_node *node = m->node;
    redisAsyncContext *ac = m->ac;
    int auth = rl_connect_send_auth(ac, node, master_on_handshake_reply, (void *)RL_HS_AUTH);
    if (auth < 0)
        return false;
    m->handshake_left = (unsigned)auth;
    if (node->db != 0) {
        if (redisAsyncCommand(ac, master_on_handshake_reply, (void *)RL_HS_SELECT, "SELECT %d",
                              node->db) != REDIS_OK)
            return false;
        m->handshake_left++;
    }
    /* Loading the scripts also proves the master answers, and lets the
     * requests use EVALSHA from the first one. */
    for (uintptr_t step = RL_HS_FIRST_LOAD; step <= RL_HS_LAST_LOAD; step++) {
        if (redisAsyncCommand(ac, master_on_handshake_reply, (void *)step, "SCRIPT LOAD %s",
                              rl_handshake_script((rl_handshake_step)step)->source) != REDIS_OK)
            return false;
        m->handshake_left++;
    }
    /* The server's run_id tells two config entries for one server apart. */
    if (redisAsyncCommand(ac, master_on_handshake_reply, (void *)RL_HS_INFO, "INFO server") !=
        REDIS_OK)
        return false;
    m->handshake_left++;
    /* A durable declaration checked against the master's settings, its
     * reply not waited for. */
    if (m->restart.durable && !rl_restart_probe_config(m))
        return false;
    /* Its clock probe, behind INFO (its run_id), readiness not waiting. */
    rl_clock_probe_on_handshake(m);
    return true;
}

static void master_handle_connect(const redisAsyncContext *cac, int status)
{
    redisAsyncContext *ac = (redisAsyncContext *)cac;
    rl_master *m = ac->data;
    if (m != NULL && m->ac == ac && status == REDIS_OK)
        rl_restart_on_connected(m); /* a bound on the start of the run it reached */
    if (m == NULL || m->ac != ac || status == REDIS_OK)
        return; /* connected: the handshake replies decide readiness */
    /* hiredis frees the context after this callback. */
    char reason[sizeof(m->failure)];
    rl_connect_error(ac, "connect", "failed", reason, sizeof(reason));
    ac->data = NULL;
    m->ac = NULL;
    master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, reason);
}

static void master_on_connect(const redisAsyncContext *cac, int status)
{
    const rl_master *owner = cac->data;
    if (owner == NULL)
        return; /* a context we let go of */
    redlock_client *client = owner->client;
    rl_client_enter(client);
    master_handle_connect(cac, status);
    rl_client_leave(client);
}

static void master_handle_disconnect(const redisAsyncContext *cac, int status)
{
    redisAsyncContext *ac = (redisAsyncContext *)cac;
    rl_master *m = ac->data;
    if (m == NULL || m->ac != ac)
        return; /* we dropped it ourselves */
    /* hiredis frees the context after this callback. */
    char reason[sizeof(m->failure)];
    rl_connect_lost_reason(ac, status, reason, sizeof(reason));
    ac->data = NULL;
    m->ac = NULL;
    if (m->state == RL_MASTER_DRAINING)
        master_close(m); /* drained, or lost while draining */
    else
        master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, reason);
}

static void master_on_disconnect(const redisAsyncContext *cac, int status)
{
    const rl_master *owner = cac->data;
    if (owner == NULL)
        return; /* a context we let go of */
    redlock_client *client = owner->client;
    rl_client_enter(client);
    master_handle_disconnect(cac, status);
    rl_client_leave(client);
}

static void master_connect(rl_master *m)
{
    redlock_client *client = m->client;
    const rl_node *node = m->node;
    char reason[sizeof(m->failure)];
    redisAsyncContext *ac = rl_connect_node(client->loop, node, rl_client_tls(client, node), reason,
                                            sizeof(reason));
    if (ac == NULL) {
        master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, reason);
        return;
    }
    ac->data = m;
    m->ac = ac;
    m->in_flight = 0;
    m->conn_caps = 0; /* a server replaced on the same address may lack them */
    m->no_scripts[0] = '\0';
    rl_restart_on_connecting(m);
    m->connect_deadline_us = rl_now_us() + m->connect_timeout_us;
    redisAsyncSetConnectCallback(ac, master_on_connect);
    redisAsyncSetDisconnectCallback(ac, master_on_disconnect);
    master_enter(m, RL_MASTER_CONNECTING);
    if (!master_send_handshake(m)) {
        master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, "handshake: out of memory");
        return;
    }
    rl_log(master_log(m), REDLOCK_LOG_DEBUG, "master %s: connecting", node->name);
}

/* The deadline of CONNECTING, FLUSHING or DRAINING (leaving them stops the
 * timer). */
static void master_handle_deadline(struct ev_loop *loop, ev_timer *w, int revents)
{
    rl_master *m = w->data;
    if (!master_in_handshake(m->state) && m->state != RL_MASTER_DRAINING)
        return;
    if (rl_now_us() < m->deadline_us) {
        rl_timer_arm_at(loop, w, m->deadline_us); /* early by the loop's clock */
        return;
    }
    if (m->state == RL_MASTER_DRAINING) {
        master_close(m); /* replies overdue: stop draining */
        return;
    }
    char reason[sizeof(m->failure)];
    bool tcp_up = m->ac != NULL && (m->ac->c.flags & REDIS_CONNECTED);
    const char *stage = !tcp_up                             ? "connect"
                        : rl_tls_handshake_pending(m->ac) ? "TLS handshake"
                                                          : "handshake";
    snprintf(reason, sizeof(reason), "%s timed out after %lld ms", stage,
             (long long)(m->connect_timeout_us / 1000));
    master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, reason);
}

static void master_on_deadline(struct ev_loop *loop, ev_timer *w, int revents)
{
    redlock_client *client = ((rl_master *)w->data)->client;
    rl_client_enter(client);
    master_handle_deadline(loop, w, revents);
    rl_client_leave(client);
}

static void master_handle_reconnect_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    rl_master *m = w->data;
    if (m->state != RL_MASTER_IDLE || m->client->closing)
        return;
    if (rl_now_us() < m->reconnect_at_us) {
        rl_timer_arm_at(loop, w, m->reconnect_at_us); /* early by the loop's clock */
        return;
    }
    master_connect(m);
}

static void master_on_reconnect_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    redlock_client *client = ((rl_master *)w->data)->client;
    rl_client_enter(client);
    master_handle_reconnect_timer(loop, w, revents);
    rl_client_leave(client);
}

static void master_handle_stall_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    rl_master *m = w->data;
    if (m->state != RL_MASTER_READY || m->in_flight == 0)
        return;
    int64_t silent_us = rl_now_us() - m->last_progress_us;
    if (silent_us < m->stall_timeout_us) {
        rl_timer_arm_in(loop, w, m->stall_timeout_us - silent_us);
        return;
    }
    char reason[sizeof(m->failure)];
    snprintf(reason, sizeof(reason), "no reply for %lld ms; connection closed",
             (long long)(silent_us / 1000));
    master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, reason);
}

static void master_on_stall_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    redlock_client *client = ((rl_master *)w->data)->client;
    rl_client_enter(client);
    master_handle_stall_timer(loop, w, revents);
    rl_client_leave(client);
}

/* A reply to one request of ours (one's, or a batch of `requests`
 * requests'), before they hear it: on the current connection, progress,
 * and the room it made used. Returns why the request was lost when r is NULL. The caller holds a
 * client reference. */
static const char *master_take_reply(rl_master *m, const redisAsyncContext *ac, const void *r,
                                     size_t requests)
{
    if (ac->data != m)
        return r == NULL ? m->failure : NULL; /* we dropped it, and said why */
    m->in_flight -= requests < m->in_flight ? requests : m->in_flight;
    if (r != NULL)
        m->last_progress_us = rl_now_us();
    if (m->in_flight == 0)
        ev_timer_stop(m->client->loop, &m->stall_timer);
    master_gauge(m);
    if (r == NULL)
        return ac->c.errstr[0] ? ac->c.errstr : "connection lost";
    master_send_queued(m, false); /* the room this reply made */
    return NULL;
}

static void master_handle_probe_deleted(redisAsyncContext *ac, void *r, void *privdata)
{
    master_take_reply(privdata, ac, r, 1);
}

static void master_on_probe_deleted(redisAsyncContext *ac, void *r, void *privdata)
{
    if (ac->data != privdata)
        return; /* a context let go of: its master may be gone with its client */
    redlock_client *client = ((rl_master *)privdata)->client;
    rl_client_enter(client);
    master_handle_probe_deleted(ac, r, privdata);
    rl_client_leave(client);
}

/* A reply to one of a script-free form's leading commands: kept for the
 * last one's (a lost connection is told there). The request lives until
 * that one's callback, which comes after this. */
static void master_on_part_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    (void)ac;
    rl_request *req = privdata;
    if (r == NULL)
        return;
    size_t i = 0; /* the first part without its reply yet */
    while (i + 2 < RL_PLAIN_PARTS && req->parts[i].type != 0)
        i++;
    rl_part_reply_keep(&req->parts[i], r);
}

static void master_on_command_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    rl_request *req = privdata;
    rl_master *m = req->master;
    redlock_client *client = m->client;
    rl_client_enter(client);
    const char *lost_reason = master_take_reply(m, ac, r, 1);
    req->ops->on_reply(req, r, lost_reason);
    rl_client_leave(client);
}

/* A batch's reply: each of its requests hears its part. A master whose
 * script cache was flushed loads the batch script again, ahead of what the
 * reply lets out (the requests themselves fall back to EVAL, one by one). */
static void master_on_batch_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    rl_batch *b = privdata;
    rl_master *m = b->master;
    redlock_client *client = m->client;
    rl_client_enter(client);
    if (ac->data == m && rl_batch_noscript(r))
        redisAsyncCommand(ac, NULL, NULL, "SCRIPT LOAD %s", b->script->source);
    const char *lost_reason = master_take_reply(m, ac, r, b->count);
    rl_batch_dispatch(b, r, lost_reason);
    free(b);
    rl_client_leave(client);
}

/* More requests of ours on the wire: one, or a batch, which takes a
 * place in the window for each of its requests (the window bounds the work
 * a master has in hand, not the calls). Replies are watched for a stall
 * while READY; a freed client's last requests have their own deadline. */
static void master_count_sent(rl_master *m, int64_t now, size_t requests)
{
    bool was_idle = m->in_flight == 0;
    m->in_flight += requests;
    if (was_idle) {
        m->last_progress_us = now;
        if (m->state == RL_MASTER_READY)
            rl_timer_arm_in(m->client->loop, &m->stall_timer, m->stall_timeout_us);
    }
    master_gauge(m);
}

/* Hand a script-free form's commands to hiredis, each on its own so that
 * its reply is matched; the last one's reply is the request's. hiredis
 * refuses a command only while its context is going away, which none of
 * these calls changes: the first accepted, all are. */
static bool master_send_plain(rl_master *m, rl_request *req, const rl_plain_request *form)
{
    const char *cmd = form->cmd;
    for (size_t i = 0; i < RL_PLAIN_PARTS - 1; i++)
        req->parts[i].type = 0;
    for (size_t i = 0; i < form->parts; i++) {
        redisCallbackFn *fn = i + 1 < form->parts ? master_on_part_reply : master_on_command_reply;
        if (redisAsyncFormattedCommand(m->ac, fn, req, cmd, form->part_len[i]) != REDIS_OK)
            return false;
        cmd += form->part_len[i];
    }
    return true;
}

/* Hand req's command to hiredis: its script-free form where m has the
 * commands. */
static bool master_send(rl_master *m, rl_request *req)
{
    const rl_plain_request *form = master_plain_form(m, req);
    if (m->ac == NULL)
        return false;
    if (form != NULL ? !master_send_plain(m, req, form)
                     : redisAsyncFormattedCommand(m->ac, master_on_command_reply, req, req->cmd,
                                                  req->cmd_len) != REDIS_OK)
        return false;
    req->sent_plain = form;
    int64_t now = rl_now_us();
    req->ops->on_sent(req, now, now + m->command_timeout_us);
    rl_count(&m->stats.requests);
    master_count_sent(m, now, 1);
    rl_clock_probe_after_send(m);
    return true;
}

/* Hand n requests to hiredis as one call of script, a batch (batch.h): n
 * places in the window, each request sent (and counted in the requests
 * statistic) at the same time. false, with nothing sent, when it cannot be
 * written or sent. */
static bool master_send_batch(rl_master *m, const rl_script *script, rl_request **reqs, size_t n)
{
    if (m->ac == NULL)
        return false;
    rl_batch *b = malloc(sizeof(*b));
    if (b == NULL)
        return false;
    b->master = m;
    b->script = script;
    b->count = n;
    memcpy(b->reqs, reqs, n * sizeof(rl_request *));
    size_t len = 0;
    char *cmd = rl_batch_command(script, reqs, n, &len);
    /* hiredis copies the request; the batch is its callback's until then. */
    bool sent = cmd != NULL && redisAsyncFormattedCommand(m->ac, master_on_batch_reply, b, cmd,
                                                          len) == REDIS_OK;
    free(cmd);
    if (!sent) {
        free(b);
        return false;
    }
    int64_t now = rl_now_us();
    for (size_t i = 0; i < n; i++) {
        reqs[i]->ops->on_sent(reqs[i], now, now + m->command_timeout_us);
        rl_count(&m->stats.requests);
    }
    master_count_sent(m, now, n);
    rl_clock_probe_after_send(m);
    return true;
}

/* The batch timer: the extensions gathered go out. */
static void master_on_batch_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    rl_master *m = w->data;
    if (m->state != RL_MASTER_READY)
        return;
    redlock_client *client = m->client;
    rl_client_enter(client);
    master_send_queued(m, false);
    rl_client_leave(client);
}

/* Into the send queue (RL_SUBMIT_QUEUED). Its owner says how long it may
 * wait there. */
static int master_enqueue(rl_master *m, rl_request *req)
{
    if (!rl_send_queue_push(&m->queue, req))
        return REDLOCK_MASTER_NOT_CONNECTED;
    req->in_queue = true;
    req->queued_us = rl_now_us();
    master_gauge(m);
    return RL_SUBMIT_QUEUED;
}

/* An extension to a ready master waits in the queue for others to batch
 * with: RL_BATCH_GATHER_US from the first, or until the next loop
 * iteration once a full batch waits. With the window full it needs no
 * timer: it goes out, batched, as replies make room. */
static int master_gather(rl_master *m, rl_request *req)
{
    int outcome = master_enqueue(m, req);
    if (outcome >= 0)
        return outcome;
    bool timer = ev_is_active(&m->batch_timer);
    if (m->queue.extend_count >= RL_BATCH_MAX && (timer || m->in_flight < m->window))
        rl_timer_arm_in(m->client->loop, &m->batch_timer, 0);
    else if (!timer && m->in_flight < m->window)
        rl_timer_arm_in(m->client->loop, &m->batch_timer, RL_BATCH_GATHER_US);
    return RL_SUBMIT_QUEUED;
}

int rl_master_submit(rl_master *m, rl_request *req)
{
    req->master = m;
    switch (m->state) {
    case RL_MASTER_READY:
        if (master_full(m, req))
            return REDLOCK_MASTER_NOT_CONNECTED;
        if (master_refuses(m, req))
            return REDLOCK_MASTER_REFUSED; /* rl_master_failure() says why */
        if (req->queue_class == RL_REQUEST_EXTENSION && req->batch_script != NULL &&
            !master_takes_plain(m, req))
            return master_gather(m, req);
        /* Past extensions that gather: they are not waiting for room. */
        if (m->in_flight < m->window && master_ready_queued(m) == 0)
            return master_send(m, req) ? RL_SUBMIT_SENT : REDLOCK_MASTER_NOT_CONNECTED;
        return master_enqueue(m, req);
    case RL_MASTER_CONNECTING:
    case RL_MASTER_FLUSHING:
        if (master_full(m, req))
            return REDLOCK_MASTER_NOT_CONNECTED;
        /* A window's worth goes out with the handshake, in order; the rest
         * waits for room like any other (never behind a stopped master's
         * handshake after its rounds are decided). */
        if (m->queued >= m->window && m->state == RL_MASTER_CONNECTING)
            return master_enqueue(m, req);
        req->in_queue = false;
        rl_list_push_back(&m->waiting, &req->link);
        m->queued++;
        master_gauge(m);
        return RL_SUBMIT_WAITING;
    default:
        return m->failure_outcome;
    }
}

void rl_master_withdraw(rl_master *m, rl_request *req)
{
    if (req->in_queue) {
        rl_send_queue_remove(&m->queue, req);
    } else {
        rl_list_remove(&req->link);
        m->queued--;
    }
    master_gauge(m);
}

bool rl_master_behind(const rl_master *m, int64_t now_us)
{
    const rl_request *next = rl_send_queue_next_extension(&m->queue);
    return next != NULL && now_us - next->queued_us > m->command_timeout_us;
}

bool rl_master_answering(const rl_master *m, int64_t now_us)
{
    /* Half the stall timeout: far longer than a loop held up by the program
     * (replies not read yet are not the master's silence). */
    return m->state == RL_MASTER_READY &&
           (m->in_flight < m->window || now_us - m->last_progress_us < m->stall_timeout_us / 2);
}

bool rl_master_suspect(const rl_master *m, int64_t now_us)
{
    switch (m->state) {
    case RL_MASTER_CONNECTING:
    case RL_MASTER_FLUSHING:
        /* A stopped server's kernel still accepts the connection, and a
         * black-holed one never connects: after a loss, a handshake not
         * done within a command timeout is no sign of life. (One that
         * answers takes a round trip: a master restarted, or every
         * connection lost to a network blip, is waited for as before.) */
        return m->dropped &&
               now_us - (m->connect_deadline_us - m->connect_timeout_us) > m->command_timeout_us;
    case RL_MASTER_READY:
        /* Replies come in order: with requests in flight, the oldest was
         * sent no later than the last reply (or the first send after
         * silence, last_progress_us, which the stall timer watches too). */
        return m->in_flight > 0 && now_us - m->last_progress_us > m->command_timeout_us;
    default:
        return false;
    }
}

int64_t rl_master_reply_deadline(const rl_master *m, int64_t now_us)
{
    int64_t from = now_us;
    if (master_in_handshake(m->state) && m->connect_deadline_us > now_us)
        from = m->connect_deadline_us;
    return from + m->command_timeout_us;
}

/* Whether the request at `at` in the waiting list is a release the master
 * may need: one whose lock's acquire does not wait before it, unsent too
 * (then neither matters). Its lock may have been set there by an earlier
 * connection, or by another process (a release of a value). */
static bool master_release_owed(const rl_master *m, const rl_link *at)
{
    const rl_request *req = rl_container_of(at, rl_request, link);
    if (req->queue_class != RL_REQUEST_RELEASE)
        return false;
    for (const rl_link *l = m->waiting.next; l != at; l = l->next) {
        const rl_request *before = rl_container_of(l, rl_request, link);
        if (req->lock_tag != 0 && before->sets_lock && before->lock_tag == req->lock_tag)
            return false;
    }
    return true;
}

/* Freed in its first handshake (never ready): nothing of ours but the
 * handshake went to the master, so nothing else need wait for it (a
 * stopped one would hold the process up to a connect timeout). The
 * releases it may need are written behind the handshake and the
 * connection closed without waiting: a stopped master runs them when it
 * resumes (the data is in its socket before our FIN). So does the DEL of
 * the clock probe, whose SET went out with the handshake: without it the
 * probe would outlive the client by its life. false, with nothing done,
 * when the releases cannot be written now (not connected yet, or more
 * than the waiting list): then it is waited for (FLUSHING). */
static bool master_close_unready(rl_master *m)
{
    bool owed = false;
    for (const rl_link *l = m->waiting.next; l != &m->waiting && !owed; l = l->next)
        owed = master_release_owed(m, l);
    if (owed && (m->queue.count > 0 || m->ac == NULL || !(m->ac->c.flags & REDIS_CONNECTED)))
        return false;
    rl_link *l = m->waiting.next;
    while (owed && l != &m->waiting) {
        rl_link *next = l->next;
        if (master_release_owed(m, l)) {
            rl_list_remove(l);
            m->queued--;
            master_send_or_fail(m, rl_container_of(l, rl_request, link));
        }
        l = next;
    }
    bool probe = rl_clock_probe_on_close(m, NULL);
    int done = 0;
    for (int i = 0; (owed || probe) && m->ac != NULL && !done && i < 8; i++)
        if (redisBufferWrite(&m->ac->c, &done) != REDIS_OK)
            break;
    master_close(m); /* the rest fails: never sent, it is moot */
    return true;
}

void rl_master_close(rl_master *m)
{
    if (master_holds_client(m->state) || m->state == RL_MASTER_CLOSED)
        return; /* closing already */
    master_set_failure(m, REDLOCK_MASTER_NOT_CONNECTED, "the client was freed");
    bool flush = !rl_list_empty(&m->waiting) && m->ever_ready;
    if (m->state == RL_MASTER_CONNECTING && (flush || !master_close_unready(m)))
        master_enter(m, RL_MASTER_FLUSHING); /* the queue (releases) goes out after the handshake */
    else if (m->state == RL_MASTER_READY)
        master_finish(m);
    else if (m->state != RL_MASTER_CLOSED)
        master_close(m);
}
