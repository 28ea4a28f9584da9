/*
 * One master's connection.
 *
 *   IDLE --connect--> CONNECTING --handshake done--> READY
 *     ^                   |                            |
 *     +---- backoff <-----+-- refused, timeout, -------+-- lost, stalled
 *                             auth or handshake error
 *
 * The handshake (AUTH, SELECT, SCRIPT LOAD of each script, INFO) is pipelined
 * right after the connect, so a new connection costs one round trip. INFO's
 * run_id keeps two config entries that reach the same server from both
 * voting. Requests submitted while
 * CONNECTING wait in a queue and go out once READY; while IDLE they fail at
 * once, so a dead master costs nothing. A master that leaves requests
 * unanswered for stall_timeout (a stopped process, a black-holed network)
 * is disconnected: its pending requests fail and it reconnects with backoff.
 * When the client is freed, what was submitted still goes out: a handshake
 * in progress completes and sends its queue, replies in flight are awaited
 * (CLOSING), all within a bounded time, before the connection is closed.
 *
 * hiredis calls back with the context; ac->data points at the master while
 * the context is current and is cleared before we free it, so callbacks from
 * a context being torn down are recognised and ignored.
 */
#include "internal.h"
#include "random.h"
#include "reader_bounds.h"
#include "reply.h"
#include "scripts.h"
#include "timer.h"

#include <hiredis/adapters/libev.h>
#include <hiredis/async.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <string.h>

/* Replies overdue for this many command timeouts mean a stalled master... */
#define RL_STALL_TIMEOUTS 10
/* ...but never less than this, so a short command timeout does not make a
 * merely slow master reconnect over and over. */
#define RL_STALL_MIN_US 1000000

_Static_assert(sizeof(((rl_master *)0)->run_id) == RL_RUN_ID_SIZE, "run_id holds 40 hex digits");

static void master_connect(rl_master *m);
static void master_finish_close(rl_master *m);
static void master_drain(rl_master *m);
static void master_on_connect_timeout(struct ev_loop *loop, ev_timer *w, int revents);
static void master_on_reconnect_timer(struct ev_loop *loop, ev_timer *w, int revents);
static void master_on_stall_timer(struct ev_loop *loop, ev_timer *w, int revents);

static rl_logger *master_log(rl_master *m)
{
    return &m->client->log;
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
    ev_timer_init(&m->connect_timer, master_on_connect_timeout, 0., 0.);
    ev_timer_init(&m->reconnect_timer, master_on_reconnect_timer, 0., 0.);
    ev_timer_init(&m->stall_timer, master_on_stall_timer, 0., 0.);
    m->connect_timer.data = m->reconnect_timer.data = m->stall_timer.data = m;
}

void rl_master_start(rl_master *m)
{
    master_connect(m);
}

const char *rl_master_failure(const rl_master *m)
{
    return m->failure;
}

/* Remember why requests cannot go out; log when the reason changes. */
static void master_set_failure(rl_master *m, int outcome, const char *reason)
{
    int level = strcmp(m->failure, reason) != 0 || m->state == RL_MASTER_READY
                    ? (outcome == REDLOCK_MASTER_AUTH_FAILED ? REDLOCK_LOG_ERROR : REDLOCK_LOG_WARN)
                    : REDLOCK_LOG_DEBUG;
    m->failure_outcome = outcome;
    snprintf(m->failure, sizeof(m->failure), "%s", reason);
    if (m->state != RL_MASTER_CLOSED && m->state != RL_MASTER_CLOSING)
        rl_log(master_log(m), level, "master %s: %s; retrying in %lld ms", m->node->name,
               m->failure, (long long)m->backoff_ms);
}

/* Fail every queued slot with the current failure. A slot's owner may run
 * user code; new requests then see IDLE/CLOSED and fail at once. */
static void master_fail_waiting(rl_master *m)
{
    rl_link *link;
    while ((link = rl_list_pop_front(&m->waiting)) != NULL) {
        rl_slot *slot = rl_container_of(link, rl_slot, link);
        rl_slot_on_failure(slot, m->failure_outcome, m->failure);
    }
}

static void master_schedule_reconnect(rl_master *m)
{
    if (m->state != RL_MASTER_IDLE || m->client->closing)
        return;
    int64_t delay_ms = m->backoff_ms + rl_random_jitter(m->backoff_ms / 4);
    int64_t max_ms = rl_client_setting(m->client, REDLOCK_RECONNECT_MAX_MS);
    m->backoff_ms = m->backoff_ms * 2 > max_ms ? max_ms : m->backoff_ms * 2;
    rl_timer_arm_in(m->client->loop, &m->reconnect_timer, delay_ms * 1000);
}

/*
 * Leave CONNECTING or READY for IDLE: free the context (hiredis completes our
 * requests on it with no reply; they read m->failure), fail queued slots and
 * schedule a reconnect. Any of that may run user code that frees the client,
 * so each step checks the state again.
 */
static void master_drop(rl_master *m, int outcome, const char *reason)
{
    redlock_client *client = m->client;
    struct redisAsyncContext *ac = m->ac;
    if (m->state == RL_MASTER_CLOSED || m->state == RL_MASTER_CLOSING)
        return;
    if (m->closing) {
        /* Freed while connecting: what was queued cannot go out. */
        m->failure_outcome = outcome;
        snprintf(m->failure, sizeof(m->failure), "%s", reason);
        master_finish_close(m);
        return;
    }
    rl_client_ref(client);
    master_set_failure(m, outcome, reason);
    m->ac = NULL;
    m->state = RL_MASTER_IDLE;
    m->in_flight = 0;
    m->run_id[0] = '\0';
    ev_timer_stop(client->loop, &m->connect_timer);
    ev_timer_stop(client->loop, &m->stall_timer);
    if (ac != NULL) {
        ac->data = NULL;
        redisAsyncFree(ac); /* deferred by hiredis when inside its callback */
    }
    if (m->state == RL_MASTER_IDLE)
        master_schedule_reconnect(m);
    master_fail_waiting(m);
    rl_client_unref(client);
}

static bool master_send(rl_master *m, rl_slot *slot);

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

static void master_ready(rl_master *m)
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
    m->state = RL_MASTER_READY;
    ev_timer_stop(m->client->loop, &m->connect_timer);
    m->backoff_ms = rl_client_setting(m->client, REDLOCK_RECONNECT_MIN_MS);
    rl_log(master_log(m), REDLOCK_LOG_INFO, "master %s: %s", m->node->name,
           m->ever_ready ? "reconnected" : "connected");
    m->ever_ready = true;
    m->failure_outcome = REDLOCK_MASTER_NOT_CONNECTED;
    snprintf(m->failure, sizeof(m->failure), "connection lost");
    rl_owed_release_on_ready(m);

    rl_link *link;
    while (m->state == RL_MASTER_READY && (link = rl_list_pop_front(&m->waiting)) != NULL) {
        rl_slot *slot = rl_container_of(link, rl_slot, link);
        if (!master_send(m, slot))
            rl_slot_on_failure(slot, REDLOCK_MASTER_NOT_CONNECTED, "the request could not be sent");
    }
    if (m->closing && m->state == RL_MASTER_READY) {
        /* The client was freed during the handshake: the queue is out. */
        if (m->in_flight > 0)
            master_drain(m);
        else
            master_finish_close(m);
    }
}

/* A handshake reply (privdata is the step): on to the next step, READY
 * after the last one, or drop the connection with the reason. */
static void master_on_handshake_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    rl_master *m = ac->data;
    redisReply *reply = r;
    if (m == NULL || m->ac != ac || m->state != RL_MASTER_CONNECTING || reply == NULL)
        return; /* a stale context, or the connection died: its own callback handles it */
    rl_handshake_step step = (rl_handshake_step)(uintptr_t)privdata;
    char reason[sizeof(m->failure)];

    switch (rl_reply_handshake(step, reply, m->node->password, reason, sizeof(reason))) {
    case RL_HANDSHAKE_ACCEPTED:
        if (step == RL_HS_INFO)
            rl_reply_run_id(reply, m->run_id);
        break;
    case RL_HANDSHAKE_INFO_REFUSED:
        rl_log(master_log(m), REDLOCK_LOG_DEBUG,
               "master %s: INFO refused; cannot check for duplicate servers", m->node->name);
        break;
    case RL_HANDSHAKE_AUTH_FAILED:
        master_drop(m, REDLOCK_MASTER_AUTH_FAILED, reason);
        return;
    case RL_HANDSHAKE_FAILED:
        master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, reason);
        return;
    }
    if (--m->handshake_left == 0)
        master_ready(m);
}

static bool master_send_handshake(rl_master *m)
{
    const rl_node *node = m->node;
    redisAsyncContext *ac = m->ac;
    m->handshake_left = 0;
    if (node->password != NULL) {
        int rc = node->username != NULL
                     ? redisAsyncCommand(ac, master_on_handshake_reply, (void *)RL_HS_AUTH,
                                         "AUTH %s %s", node->username, node->password)
                     : redisAsyncCommand(ac, master_on_handshake_reply, (void *)RL_HS_AUTH,
                                         "AUTH %s", node->password);
        if (rc != REDIS_OK)
            return false;
        m->handshake_left++;
    }
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
    return true;
}

static void master_on_connect(const redisAsyncContext *cac, int status)
{
    redisAsyncContext *ac = (redisAsyncContext *)cac;
    rl_master *m = ac->data;
    if (m == NULL || m->ac != ac || status == REDIS_OK)
        return; /* connected: the handshake replies decide readiness */
    /* hiredis frees the context after this callback. */
    char reason[sizeof(m->failure)];
    snprintf(reason, sizeof(reason), "connect: %s", ac->c.errstr[0] ? ac->c.errstr : "failed");
    ac->data = NULL;
    m->ac = NULL;
    master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, reason);
}

static void master_on_disconnect(const redisAsyncContext *cac, int status)
{
    redisAsyncContext *ac = (redisAsyncContext *)cac;
    rl_master *m = ac->data;
    if (m == NULL || m->ac != ac)
        return; /* we dropped it ourselves */
    if (m->state == RL_MASTER_CLOSING) {
        /* Drained (or lost while draining): hiredis frees the context. */
        ac->data = NULL;
        m->ac = NULL;
        master_finish_close(m);
        return;
    }
    char reason[sizeof(m->failure)];
    snprintf(reason, sizeof(reason), "connection lost: %s",
             status == REDIS_OK || !ac->c.errstr[0] ? "closed" : ac->c.errstr);
    ac->data = NULL;
    m->ac = NULL;
    master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, reason);
}

static void master_connect(rl_master *m)
{
    redlock_client *client = m->client;
    const rl_node *node = m->node;

    /* A host name is resolved here, by hiredis, with getaddrinfo(3), which
     * blocks; configure IP addresses where the loop must never wait. */
    redisAsyncContext *ac = node->unix_path ? redisAsyncConnectUnix(node->unix_path)
                                            : redisAsyncConnect(node->host, node->port);
    if (ac == NULL) {
        master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, "connect: out of memory");
        return;
    }
    if (ac->err) {
        char reason[sizeof(m->failure)];
        snprintf(reason, sizeof(reason), "connect: %s", ac->c.errstr);
        redisAsyncFree(ac);
        master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, reason);
        return;
    }
    if (rl_reader_bound(ac->c.reader) != 0) {
        redisAsyncFree(ac);
        master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, "connect: out of memory");
        return;
    }
    /* Our sockets are ours: a program that forks and execs must not hand
     * them to its children. */
    int flags = fcntl(ac->c.fd, F_GETFD);
    if (flags >= 0)
        fcntl(ac->c.fd, F_SETFD, flags | FD_CLOEXEC);
    if (redisLibevAttach(client->loop, ac) != REDIS_OK) {
        redisAsyncFree(ac);
        master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, "connect: cannot attach to the loop");
        return;
    }
    ac->data = m;
    m->ac = ac;
    m->state = RL_MASTER_CONNECTING;
    m->in_flight = 0;
    m->connect_deadline_us = rl_now_us() + m->connect_timeout_us;
    redisAsyncSetConnectCallback(ac, master_on_connect);
    redisAsyncSetDisconnectCallback(ac, master_on_disconnect);
    if (!master_send_handshake(m)) {
        master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, "handshake: out of memory");
        return;
    }
    rl_timer_arm_at(client->loop, &m->connect_timer, m->connect_deadline_us);
    rl_log(master_log(m), REDLOCK_LOG_DEBUG, "master %s: connecting", node->name);
}

static void master_on_connect_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
    rl_master *m = w->data;
    if (m->state == RL_MASTER_CLOSING) {
        master_finish_close(m); /* replies overdue: stop draining */
        return;
    }
    if (m->state != RL_MASTER_CONNECTING)
        return;
    char reason[sizeof(m->failure)];
    bool tcp_up = m->ac != NULL && (m->ac->c.flags & REDIS_CONNECTED);
    snprintf(reason, sizeof(reason), "%s timed out after %lld ms", tcp_up ? "handshake" : "connect",
             (long long)(m->connect_timeout_us / 1000));
    master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, reason);
}

static void master_on_reconnect_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    rl_master *m = w->data;
    if (m->state == RL_MASTER_IDLE && !m->client->closing)
        master_connect(m);
}

static void master_arm_stall_timer(rl_master *m, int64_t after_us)
{
    rl_timer_arm_in(m->client->loop, &m->stall_timer, after_us);
}

static void master_on_stall_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    rl_master *m = w->data;
    if (m->state != RL_MASTER_READY || m->in_flight == 0)
        return;
    int64_t silent_us = rl_now_us() - m->last_progress_us;
    if (silent_us < m->stall_timeout_us) {
        master_arm_stall_timer(m, m->stall_timeout_us - silent_us);
        return;
    }
    char reason[sizeof(m->failure)];
    snprintf(reason, sizeof(reason), "no reply for %lld ms; connection closed",
             (long long)(silent_us / 1000));
    master_drop(m, REDLOCK_MASTER_NOT_CONNECTED, reason);
}

static void master_on_command_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    rl_slot *slot = privdata;
    rl_master *m = slot->master;
    const char *lost_reason = NULL;
    if (ac->data == m) {
        /* The current connection: account for progress. */
        if (m->in_flight > 0)
            m->in_flight--;
        if (r != NULL)
            m->last_progress_us = rl_now_us();
        if (m->in_flight == 0)
            ev_timer_stop(m->client->loop, &m->stall_timer);
        if (r == NULL)
            lost_reason = ac->c.errstr[0] ? ac->c.errstr : "connection lost";
    } else if (r == NULL) {
        lost_reason = m->failure; /* we dropped it, and said why */
    }
    rl_slot_on_reply(slot, r, lost_reason);
}

static bool master_send(rl_master *m, rl_slot *slot)
{
    size_t len;
    const char *cmd = rl_slot_command(slot, &len);
    if (m->ac == NULL ||
        redisAsyncFormattedCommand(m->ac, master_on_command_reply, slot, cmd, len) != REDIS_OK)
        return false;
    slot->state = RL_SLOT_SENT;
    if (m->in_flight++ == 0) {
        m->last_progress_us = rl_now_us();
        master_arm_stall_timer(m, m->stall_timeout_us);
    }
    return true;
}

int rl_master_submit(rl_master *m, rl_slot *slot)
{
    switch (m->state) {
    case RL_MASTER_READY:
        if (master_send(m, slot))
            return -1;
        return REDLOCK_MASTER_NOT_CONNECTED;
    case RL_MASTER_CONNECTING:
        slot->state = RL_SLOT_WAITING;
        rl_list_push_back(&m->waiting, &slot->link);
        return -1;
    default:
        return m->failure_outcome;
    }
}

void rl_master_withdraw(rl_master *m, rl_slot *slot)
{
    (void)m;
    rl_list_remove(&slot->link);
}

int64_t rl_master_reply_deadline(const rl_master *m, int64_t now_us)
{
    int64_t from = now_us;
    if (m->state == RL_MASTER_CONNECTING && m->connect_deadline_us > now_us)
        from = m->connect_deadline_us;
    return from + m->command_timeout_us;
}

/* Close for good: free the context if we still hold it, fail what is still
 * queued, and drop the reference taken while finishing (last: it may free
 * the client, and m with it). */
static void master_finish_close(rl_master *m)
{
    ev_timer_stop(m->client->loop, &m->connect_timer);
    m->state = RL_MASTER_CLOSED;
    struct redisAsyncContext *ac = m->ac;
    m->ac = NULL;
    m->in_flight = 0;
    if (ac != NULL) {
        ac->data = NULL;
        redisAsyncFree(ac); /* requests still pending complete with no reply */
    }
    master_fail_waiting(m);
    if (m->holds_client_ref) {
        m->holds_client_ref = false;
        rl_client_unref(m->client);
    }
}

/* Hold the client until closed, and close no later than timeout_us. */
static void master_hold_until(rl_master *m, int64_t timeout_us)
{
    if (!m->holds_client_ref) {
        m->holds_client_ref = true;
        rl_client_ref(m->client);
    }
    rl_timer_arm_in(m->client->loop, &m->connect_timer, timeout_us);
}

/* Wait for the replies in flight, then close (CLOSING). */
static void master_drain(rl_master *m)
{
    m->state = RL_MASTER_CLOSING;
    master_hold_until(m, m->command_timeout_us);
    /* hiredis closes once every pending reply is in, then calls
     * master_on_disconnect; no new request is accepted meanwhile. */
    redisAsyncDisconnect(m->ac);
}

void rl_master_close(rl_master *m)
{
    if (m->closing || m->state == RL_MASTER_CLOSED)
        return;
    m->closing = true;
    struct ev_loop *loop = m->client->loop;
    ev_timer_stop(loop, &m->reconnect_timer);
    ev_timer_stop(loop, &m->stall_timer);
    snprintf(m->failure, sizeof(m->failure), "the client was freed");
    m->failure_outcome = REDLOCK_MASTER_NOT_CONNECTED;
    if (m->state == RL_MASTER_CONNECTING && !rl_list_empty(&m->waiting)) {
        /* Queued requests (releases) go out when the handshake completes. */
        master_hold_until(m, m->connect_deadline_us - rl_now_us() + m->command_timeout_us);
        return;
    }
    if (m->state == RL_MASTER_READY && m->in_flight > 0) {
        master_drain(m);
        return;
    }
    master_finish_close(m);
}
