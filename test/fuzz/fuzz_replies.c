/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: what the engine makes of any reply a master may send.
 *
 * The input is RESP, cut into replies by hiredis's own reader as on a
 * connection: any type (RESP3 ones too with hiredis 1.x), errors, nils,
 * integers of any size, nested arrays. Those replies are then
 *
 * - the answers to each operation of the public API (acquire, extend,
 *   inspect, ping, release, then a fenced acquire with its second round and
 *   the seeding it may start, its release, and the initialization of the
 *   fencing counters, in that order) on a client with as many masters
 *   as there are replies (1 to 7). Each request an operation sends, to any
 *   master, gets the next reply through its on_reply (master/request.h), the
 *   call master.c makes when hiredis hands it one; requests left when the replies run out
 *   lose their connection. So the engine's whole reply path runs: reading
 *   the reply, NOSCRIPT and the EVAL resend, the tally, the decision, the
 *   release after a failed attempt, late replies, the result and the
 *   callback. Each operation runs twice: as it comes, and with some masters
 *   timing out (one before its request went out, others after).
 * - the reply to each step of the connection handshake, and INFO's run_id
 *   and server.
 *
 * No connection is made and the loop never runs. The masters' connect
 * attempts (to sockets that cannot exist) fail at once; the target then
 * marks them CONNECTING, so that operations queue their requests on them,
 * and plays hiredis's part: it sends what is queued, in order, as
 * master_ready() does, and hands each request its reply in turn. A deadline
 * passes by moving it into the past and calling the round's timer.
 *
 * Beyond the sanitizers' checks, the results must keep the rules of
 * docs/design.md, every callback must run exactly once, every request must
 * be answered, and log lines and handshake reasons must be one line that
 * never holds the password.
 */
#include "fuzz.h"
#include "context/context.h"
#include "config/config_internal.h"
#include "lock/lock.h"
#include "master/master.h"
#include "round/quorum.h"
#include "util/list.h"
#include "reader_bounds.h"
#include "reply.h"
#include "server_info.h"

#include <ev.h>
#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <string.h>

#define MAX_REPLIES 64
#define MAX_MASTERS 7
#define WIRE_MAX 64 /* requests in flight on one master */
#define PASSWORD "s3cret-pw"
#define RESOURCE "fuzz-resource"
/* Another, so that the release of RESOURCE just before (which may have had
 * listeners: the courtesy of courtesy.h) does not delay its acquire. */
#define FENCED_RESOURCE "fuzz-fenced-resource"
#define REASON_SIZE sizeof(((rl_master *)0)->failure)

/* The replies cut from one input, handed out in order. */
typedef struct reply_feed {
    redisReply *replies[MAX_REPLIES];
    size_t count;
    size_t next;
} reply_feed;

/* What a connection holds: the requests sent, awaiting replies in order. */
typedef struct wire {
    rl_slot *sent[WIRE_MAX];
    size_t head;
    size_t count;
} wire;

typedef struct harness {
    struct ev_loop *loop;
    redlock_client *client;
    size_t n;
    reply_feed *feed;
    wire wires[MAX_MASTERS];
} harness;

/* How an operation ended: its callback's arguments. */
typedef struct op_end {
    rl_round_kind kind;
    size_t n;
    int calls;
    int status;
    redlock_lock *lock; /* acquire */
} op_end;

static bool one_line(const char *s)
{
    return strchr(s, '\n') == NULL && strchr(s, '\r') == NULL;
}

/* The API's promise for log lines. */
static void log_line(int level, const char *message, void *arg)
{
    (void)arg;
    FUZZ_CHECK(level >= REDLOCK_LOG_ERROR && level <= REDLOCK_LOG_DEBUG);
    FUZZ_CHECK(one_line(message));
    FUZZ_CHECK(strstr(message, PASSWORD) == NULL);
}

/* ------------------------------------------------------------------------ */
/* The handshake                                                             */

/* A handshake's reason goes to the log and into results: one printable
 * line, never the password. */
static void check_reason(const char *reason, size_t size, bool quotes_password)
{
    FUZZ_CHECK(memchr(reason, '\0', size) != NULL);
    FUZZ_CHECK(reason[0] != '\0');
    FUZZ_CHECK(one_line(reason));
    FUZZ_CHECK(strstr(reason, PASSWORD) == NULL);
    if (quotes_password)
        FUZZ_CHECK(strstr(reason, "withheld") != NULL);
}

static void check_handshake(const redisReply *reply)
{
    bool quotes_password =
        reply->type == REDIS_REPLY_ERROR && memmem(reply->str, reply->len, PASSWORD,
                                                   strlen(PASSWORD)) != NULL;
    for (int step = RL_HS_AUTH; step <= RL_HS_INFO; step++) {
        char reason[REASON_SIZE];
        memset(reason, 'x', sizeof(reason));
        rl_handshake_verdict v =
            rl_reply_handshake((rl_handshake_step)step, reply, PASSWORD, reason, sizeof(reason));
        const rl_script *script = rl_handshake_script((rl_handshake_step)step);
        switch (v) {
        case RL_HANDSHAKE_ACCEPTED:
            FUZZ_CHECK(reply->type != REDIS_REPLY_ERROR);
            if (script != NULL)
                FUZZ_CHECK(reply->type == REDIS_REPLY_STRING && reply->len == 40 &&
                           memcmp(reply->str, script->sha, 40) == 0);
            break;
        case RL_HANDSHAKE_INFO_REFUSED:
            FUZZ_CHECK(step == RL_HS_INFO && reply->type == REDIS_REPLY_ERROR);
            break;
        case RL_HANDSHAKE_SCRIPTS_REFUSED:
            /* Only a SCRIPT LOAD's error; it says what the lock needs. */
            FUZZ_CHECK(script != NULL && reply->type == REDIS_REPLY_ERROR);
            check_reason(reason, sizeof(reason), quotes_password);
            break;
        case RL_HANDSHAKE_AUTH_FAILED:
        case RL_HANDSHAKE_FAILED:
            check_reason(reason, sizeof(reason), quotes_password);
            break;
        default:
            FUZZ_CHECK(!"a verdict");
        }
        if (step == RL_HS_AUTH && reply->type == REDIS_REPLY_ERROR)
            FUZZ_CHECK(v == RL_HANDSHAKE_AUTH_FAILED);
    }
    char run_id[RL_RUN_ID_SIZE];
    memset(run_id, 'x', sizeof(run_id));
    rl_reply_run_id(reply, run_id);
    FUZZ_CHECK(memchr(run_id, '\0', sizeof(run_id)) != NULL);
    /* What the server is: printable, "NAME VERSION", or unknown with no
     * command beyond the scripts. */
    rl_server_info server;
    memset(&server, 'x', sizeof(server));
    rl_server_info_read(reply, &server);
    size_t len = strnlen(server.text, sizeof(server.text));
    FUZZ_CHECK(len < sizeof(server.text));
    for (size_t i = 0; i < len; i++)
        FUZZ_CHECK(server.text[i] >= 0x20 && server.text[i] <= 0x7e);
    FUZZ_CHECK(len == 0 ? server.caps == 0 : strchr(server.text, ' ') != NULL);
}

/* ------------------------------------------------------------------------ */
/* Results                                                                   */

/* Here RL_ROUND_FENCE stands for a whole fenced acquire (both rounds), and
 * RL_ROUND_FENCE_SEED for redlock_fencing_init_async(). */
static bool status_documented(rl_round_kind kind, int status)
{
    switch (status) {
    case REDLOCK_OK:
    case REDLOCK_ENOQUORUM:
    case REDLOCK_EAUTH:
    case REDLOCK_EPERM:
    case REDLOCK_EREPLY:
        return true;
    case REDLOCK_ECONFLICT:
        return kind == RL_ROUND_ACQUIRE || kind == RL_ROUND_FENCE;
    case REDLOCK_ENOFENCE:
        return kind == RL_ROUND_FENCE;
    case REDLOCK_EEXPIRED:
    /* The rounds that set or extend a lock count only the masters whose
     * run is old enough (master/restart.h). */
    case REDLOCK_ERESTARTED:
        return kind == RL_ROUND_ACQUIRE || kind == RL_ROUND_EXTEND || kind == RL_ROUND_FENCE;
    case REDLOCK_ENOTOWNER:
        return kind == RL_ROUND_EXTEND || kind == RL_ROUND_RELEASE;
    case REDLOCK_ELOST: /* a scoped call's, after the caller's function: no round's */
    default:
        return false;
    }
}

static void check_same_result(const redlock_result *a, const redlock_result *b)
{
    FUZZ_CHECK(a->status == b->status && a->validity_ms == b->validity_ms);
    FUZZ_CHECK(a->master_count == b->master_count && a->quorum == b->quorum);
    for (unsigned i = 0; i < a->master_count; i++) {
        const redlock_master_result *x = &a->masters[i];
        const redlock_master_result *y = &b->masters[i];
        FUZZ_CHECK(strcmp(x->name, y->name) == 0 && x->outcome == y->outcome);
        FUZZ_CHECK((x->detail == NULL) == (y->detail == NULL));
        FUZZ_CHECK(x->detail == NULL || strcmp(x->detail, y->detail) == 0);
        FUZZ_CHECK((x->value == NULL) == (y->value == NULL) && x->value_len == y->value_len);
        FUZZ_CHECK(x->value == NULL || memcmp(x->value, y->value, x->value_len + 1) == 0);
        FUZZ_CHECK(x->pttl_ms == y->pttl_ms && x->latency_us == y->latency_us && x->late == y->late);
    }
}

/* The result against docs/design.md: the outcomes per master, and the
 * status they allow. */
static void check_result(const op_end *end, const redlock_result *r)
{
    rl_round_kind kind = end->kind;
    int status = end->status;
    FUZZ_CHECK(r != NULL && r->status == status);
    FUZZ_CHECK(status_documented(kind, status));
    FUZZ_CHECK(r->master_count == end->n && r->quorum == rl_quorum_of((unsigned)end->n));
    /* No retries; a fenced acquire refused for counters not in use tries
     * once more after the seeding its attempt started (acquire.c). */
    FUZZ_CHECK(r->attempts == 1 || (kind == RL_ROUND_FENCE && r->attempts == 2));
    unsigned count[REDLOCK_MASTER_REFUSED + 1] = {0};
    for (unsigned i = 0; i < r->master_count; i++) {
        const redlock_master_result *m = &r->masters[i];
        FUZZ_CHECK(m->name != NULL);
        FUZZ_CHECK(m->outcome >= REDLOCK_MASTER_OK && m->outcome <= REDLOCK_MASTER_REFUSED);
        /* Not counted, on a master that does not count yet: only where a
         * lock is set or extended, and said why. */
        if (m->outcome == REDLOCK_MASTER_CLOCK)
            FUZZ_CHECK((kind == RL_ROUND_ACQUIRE || kind == RL_ROUND_EXTEND ||
                        kind == RL_ROUND_FENCE) &&
                       m->detail != NULL);
        /* A late reply shows what the master said; it counted as a timeout. */
        if (m->late)
            FUZZ_CHECK(m->detail != NULL &&
                       strncmp(m->detail, RL_LATE_DETAIL, strlen(RL_LATE_DETAIL)) == 0);
        count[m->late ? REDLOCK_MASTER_TIMEOUT : m->outcome]++;
        if (m->value != NULL)
            FUZZ_CHECK(kind == RL_ROUND_INSPECT && m->value[m->value_len] == '\0');
        if (kind != RL_ROUND_INSPECT)
            FUZZ_CHECK(m->value == NULL && m->pttl_ms == -2);
        if (m->outcome == REDLOCK_MASTER_PENDING)
            FUZZ_CHECK(m->detail == NULL && m->latency_us == -1);
    }
    unsigned q = r->quorum;
    unsigned n = r->master_count;
    unsigned ok = count[REDLOCK_MASTER_OK];
    unsigned refused = count[REDLOCK_MASTER_HELD] + count[REDLOCK_MASTER_ABSENT];
    unsigned pending = count[REDLOCK_MASTER_PENDING];
    if (kind == RL_ROUND_RELEASE) {
        /* Our value gone counts, whoever removed it. */
        ok += refused;
        refused = 0;
    }
    bool waits_for_all =
        kind == RL_ROUND_INSPECT || kind == RL_ROUND_PING || kind == RL_ROUND_FENCE_SEED;
    if (waits_for_all)
        FUZZ_CHECK(pending == 0);
    else if (kind != RL_ROUND_FENCE) /* decided by the OKs that carry a counter */
        FUZZ_CHECK(ok >= q || ok + pending < q); /* decided as soon as known */
    if (kind != RL_ROUND_INSPECT && kind != RL_ROUND_PING)
        FUZZ_CHECK(r->masters_locked == count[REDLOCK_MASTER_OK]);
    FUZZ_CHECK(r->fencing_token == 0 || (kind == RL_ROUND_FENCE && status == REDLOCK_OK));
    if (kind == RL_ROUND_FENCE && status == REDLOCK_OK)
        FUZZ_CHECK(r->fencing_token > 0);
    /* A fenced acquire's second round may fail for its own reasons, with
     * the first round's quorum shown. */
    bool second_round = kind == RL_ROUND_FENCE && ok >= q;

    switch (status) {
    case REDLOCK_OK:
        FUZZ_CHECK(ok >= q);
        if (kind == RL_ROUND_RELEASE)
            FUZZ_CHECK(count[REDLOCK_MASTER_OK] > 0); /* we deleted it somewhere */
        if (kind == RL_ROUND_ACQUIRE || kind == RL_ROUND_EXTEND)
            FUZZ_CHECK(r->validity_ms > 0);
        break;
    case REDLOCK_EEXPIRED:
        FUZZ_CHECK(ok >= q);
        break;
    case REDLOCK_ECONFLICT:
        FUZZ_CHECK(refused + q > n); /* the refusals alone rule a quorum out */
        break;
    case REDLOCK_ENOTOWNER:
        if (kind == RL_ROUND_RELEASE)
            FUZZ_CHECK(ok >= q && count[REDLOCK_MASTER_OK] == 0);
        else
            FUZZ_CHECK(refused + q > n);
        break;
    case REDLOCK_EAUTH:
        FUZZ_CHECK(second_round || (ok < q && count[REDLOCK_MASTER_AUTH_FAILED] > 0));
        break;
    case REDLOCK_EREPLY:
        FUZZ_CHECK(second_round || (ok < q && count[REDLOCK_MASTER_ERROR] > 0));
        break;
    case REDLOCK_EPERM: /* a NOPERM: the ACL user may not */
        FUZZ_CHECK(second_round || (ok < q && count[REDLOCK_MASTER_REFUSED] > 0));
        break;
    case REDLOCK_ENOQUORUM:
        FUZZ_CHECK(second_round || ok < q);
        break;
    case REDLOCK_ENOFENCE:
        FUZZ_CHECK(ok + pending >= q); /* a quorum said yes, or still could */
        break;
    case REDLOCK_ERESTARTED:
        /* Enough said yes, or still could, but too few on masters that
         * count. */
        FUZZ_CHECK(second_round || (ok < q && count[REDLOCK_MASTER_CLOCK] > 0 &&
                                    ok + count[REDLOCK_MASTER_CLOCK] + pending >= q));
        break;
    }
    if (status != REDLOCK_OK)
        FUZZ_CHECK(r->validity_ms == 0);

    redlock_result *copy = NULL;
    if (redlock_result_copy(r, &copy) == REDLOCK_OK) {
        check_same_result(r, copy);
        redlock_result_free(copy);
    }
}

static void on_acquired(int status, redlock_lock *lock, const redlock_result *result, void *arg)
{
    op_end *end = arg;
    end->calls++;
    end->status = status;
    end->lock = lock;
    FUZZ_CHECK((status == REDLOCK_OK) == (lock != NULL));
    check_result(end, result);
}

static void on_done(int status, const redlock_result *result, void *arg)
{
    op_end *end = arg;
    end->calls++;
    end->status = status;
    check_result(end, result);
}

/* ------------------------------------------------------------------------ */
/* Playing the connections                                                   */

/* A client whose n masters are CONNECTING, and will stay so. */
static redlock_client *client_open(struct ev_loop *loop, size_t n)
{
    redlock_config *cfg = NULL;
    if (redlock_config_new(&cfg) != REDLOCK_OK)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        /* Under /dev/null: connecting fails at once, whatever the machine. */
        char path[64];
        snprintf(path, sizeof(path), "/dev/null/redlock-fuzz-%zu.sock", i);
        redlock_config_add_unix_node(cfg, path, NULL);
        redlock_config_node_set_auth(cfg, i, NULL, PASSWORD);
        /* No handshake runs, so no master's run is known: only those
         * declared durable count (master/restart.h). A quorum of them, so
         * that a round may still be won, and the others, so that it may be
         * lost for want of masters that count (REDLOCK_ERESTARTED). */
        if (i < rl_quorum_of((unsigned)n))
            redlock_config_node_set_durable(cfg, i, 1);
    }
    redlock_config_set(cfg, REDLOCK_RETRY_COUNT, 0);
    /* The loop never runs: an acquire must not wait for the masters'
     * clocks (there are no probes here). */
    redlock_config_set(cfg, REDLOCK_CLOCK_WARMUP_MS, 0);
    redlock_config_set_log(cfg, log_line, NULL, REDLOCK_LOG_DEBUG);
    redlock_client *client = NULL;
    int rc = redlock_client_new(&client, cfg, loop);
    redlock_config_free(cfg);
    if (rc != REDLOCK_OK)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        rl_master *m = &client->masters[i];
        FUZZ_CHECK(m->state == RL_MASTER_IDLE && m->ac == NULL);
        ev_timer_stop(loop, &m->reconnect_timer);
        m->state = RL_MASTER_CONNECTING;
        m->connect_deadline_us = rl_now_us();
        /* The odd ones as if their INFO had named a server with every
         * script-free command: their extensions and releases go plain. */
        if (i % 2 == 1)
            m->conn_caps = RL_CAP_SET_IFEQ | RL_CAP_DELIFEQ | RL_CAP_DELEX;
    }
    return client;
}

/* Send what waits on each master, as master_ready() does once connected. */
static void send_queued(harness *h)
{
    for (size_t i = 0; i < h->n; i++) {
        rl_master *m = &h->client->masters[i];
        wire *w = &h->wires[i];
        rl_link *link;
        while ((link = rl_list_pop_front(&m->waiting)) != NULL) {
            rl_slot *slot = rl_slot_of(rl_container_of(link, rl_request, link));
            FUZZ_CHECK(slot->state == RL_SLOT_WAITING && slot->master == m);
            FUZZ_CHECK(w->count < WIRE_MAX);
            slot->state = RL_SLOT_SENT;
            /* The form master_send() would pick. */
            slot->req.sent_plain = NULL;
            for (size_t f = 0; slot->req.plain != NULL && f < slot->req.plain_forms; f++)
                if ((m->conn_caps & slot->req.plain[f].caps) == slot->req.plain[f].caps) {
                    slot->req.sent_plain = &slot->req.plain[f];
                    break;
                }
            w->sent[(w->head + w->count++) % WIRE_MAX] = slot;
        }
    }
}

/* Hand each request sent its reply (or, once they run out, a lost
 * connection), master after master, until none is left. */
static void deliver_all(harness *h)
{
    bool any = true;
    while (any) {
        any = false;
        for (size_t i = 0; i < h->n; i++) {
            wire *w = &h->wires[i];
            if (w->count == 0)
                continue;
            rl_slot *slot = w->sent[w->head];
            w->head = (w->head + 1) % WIRE_MAX;
            w->count--;
            FUZZ_CHECK(slot->state == RL_SLOT_SENT);
            reply_feed *feed = h->feed;
            /* A script-free form's leading commands' replies first. */
            const rl_plain_request *form = slot->req.sent_plain;
            for (size_t p = 0; form != NULL && p + 1 < form->parts; p++) {
                slot->req.parts[p].type = 0;
                if (feed->next < feed->count)
                    rl_part_reply_keep(&slot->req.parts[p], feed->replies[feed->next++]);
            }
            const redisReply *reply = feed->next < feed->count ? feed->replies[feed->next++] : NULL;
            slot->req.ops->on_reply(&slot->req, reply,
                                    reply ? NULL : "connection lost: no more replies");
            send_queued(h); /* an EVAL resend goes out at once, as on a READY master */
            any = true;
        }
    }
}

/* The deadline of slot passes now: its round's timer fires. */
static void expire(harness *h, rl_slot *slot)
{
    slot->deadline_us = 0;
    ev_invoke(h->loop, &slot->round->timer, EV_TIMER);
}

/* Master 0 times out before its request goes out. */
static void expire_queued(harness *h)
{
    rl_master *m = &h->client->masters[0];
    if (!rl_list_empty(&m->waiting))
        expire(h, rl_slot_of(rl_container_of(m->waiting.next, rl_request, link)));
}

/* The odd masters time out after their request went out: their replies
 * come late. */
static void expire_sent(harness *h)
{
    for (size_t i = 1; i < h->n; i += 2) {
        wire *w = &h->wires[i];
        if (w->count > 0)
            expire(h, w->sent[w->head]);
    }
}

/* Run one operation to its end, every request answered. */
static void run_op(harness *h, rl_round_kind kind, bool timeouts, redlock_lock **lock)
{
    op_end end = {.kind = kind, .n = h->n};
    redlock_client *client = h->client;
    int rc = REDLOCK_EINVAL;
    h->feed->next = 0;
    switch (kind) {
    case RL_ROUND_ACQUIRE: {
        redlock_acquire_options opts;
        redlock_acquire_options_init(&opts);
        opts.retry_count = 0;
        rc = redlock_acquire_async(client, RESOURCE, strlen(RESOURCE), &opts, on_acquired, &end);
        break;
    }
    case RL_ROUND_EXTEND:
        rc = redlock_extend_async(client, *lock, 0, on_done, &end);
        break;
    case RL_ROUND_RELEASE:
        rc = redlock_release_async(client, *lock, on_done, &end);
        break;
    case RL_ROUND_INSPECT:
        rc = redlock_inspect_async(client, RESOURCE, strlen(RESOURCE), on_done, &end);
        break;
    case RL_ROUND_PING:
        rc = redlock_ping_async(client, on_done, &end);
        break;
    case RL_ROUND_FENCE: {
        redlock_acquire_options opts;
        redlock_acquire_options_init(&opts);
        opts.retry_count = 0;
        opts.fencing = 1;
        rc = redlock_acquire_async(client, FENCED_RESOURCE, strlen(FENCED_RESOURCE), &opts,
                                   on_acquired, &end);
        break;
    }
    case RL_ROUND_FENCE_SEED:
        rc = redlock_fencing_init_async(client, 0, on_done, &end);
        break;
    case RL_ROUND_FENCE_READ:
        return; /* seeding's own: started by a fenced acquire */
    }
    FUZZ_CHECK(end.calls == 0); /* never from within the call */
    if (rc != REDLOCK_OK) {
        /* Only an extend of a lock known to have run out is refused. */
        FUZZ_CHECK(rc == REDLOCK_ENOMEM || (kind == RL_ROUND_EXTEND && rc == REDLOCK_EEXPIRED));
        return;
    }
    if (timeouts)
        expire_queued(h);
    send_queued(h);
    if (timeouts)
        expire_sent(h);
    deliver_all(h);
    FUZZ_CHECK(end.calls == 1);
    for (size_t i = 0; i < h->n; i++)
        FUZZ_CHECK(rl_list_empty(&client->masters[i].waiting) && h->wires[i].count == 0);
    if ((kind == RL_ROUND_ACQUIRE || kind == RL_ROUND_FENCE) && end.lock != NULL)
        *lock = end.lock;
}

/* Every operation on a fresh client, then the client freed. */
static void run_ops(struct ev_loop *loop, reply_feed *feed, bool timeouts)
{
    harness h = {.loop = loop, .feed = feed};
    h.n = feed->count < 1 ? 1 : feed->count > MAX_MASTERS ? MAX_MASTERS : feed->count;
    h.client = client_open(loop, h.n);
    if (h.client == NULL)
        return;
    redlock_lock *lock = NULL;
    run_op(&h, RL_ROUND_ACQUIRE, timeouts, &lock);
    if (lock == NULL &&
        redlock_lock_new(&lock, RESOURCE, strlen(RESOURCE), "fuzz-value", 10, 0) != REDLOCK_OK)
        lock = NULL;
    if (lock != NULL)
        run_op(&h, RL_ROUND_EXTEND, timeouts, &lock);
    run_op(&h, RL_ROUND_INSPECT, timeouts, &lock);
    run_op(&h, RL_ROUND_PING, timeouts, &lock);
    if (lock != NULL) {
        run_op(&h, RL_ROUND_RELEASE, timeouts, &lock);
        redlock_lock_free(lock);
    }
    lock = NULL;
    run_op(&h, RL_ROUND_FENCE, timeouts, &lock);
    if (lock != NULL) {
        FUZZ_CHECK(redlock_lock_fencing_token(lock) > 0);
        run_op(&h, RL_ROUND_RELEASE, timeouts, &lock);
        redlock_lock_free(lock);
    }
    run_op(&h, RL_ROUND_FENCE_SEED, timeouts, &lock);
    redlock_client_free(h.client);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct ev_loop *loop;
    if (loop == NULL && (loop = ev_loop_new(EVFLAG_AUTO)) == NULL)
        return 0;

    reply_feed feed = {.count = 0};
    /* Bounded as every connection's reader is (src/wire/reader_bounds.h). */
    redisReader *reader = redisReaderCreate();
    if (reader == NULL)
        return 0;
    if (rl_reader_bound(reader) != 0) {
        redisReaderFree(reader);
        return 0;
    }
    if (redisReaderFeed(reader, (const char *)data, size) == REDIS_OK) {
        void *reply = NULL;
        while (feed.count < MAX_REPLIES && redisReaderGetReply(reader, &reply) == REDIS_OK &&
               reply != NULL) {
            feed.replies[feed.count++] = reply;
            reply = NULL;
        }
    }
    redisReaderFree(reader);

    for (size_t i = 0; i < feed.count; i++)
        check_handshake(feed.replies[i]);
    run_ops(loop, &feed, false);
    run_ops(loop, &feed, true);

    for (size_t i = 0; i < feed.count; i++)
        freeReplyObject(feed.replies[i]);
    return 0;
}
