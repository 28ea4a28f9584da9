/* SPDX-License-Identifier: BSD-3-Clause */
/* One master's clock probe: its requests, their replies, its timer
 * (clock_probe.h has the states and why). */
#include "master/clock_probe.h"
#include "context/context.h"
#include "master/clock_check.h"
#include "master/master.h"
#include "master/request.h"
#include "redlock/redlock.h"
#include "util/list.h"
#include "util/log.h"
#include "util/timer.h"
#include "util/util.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define PROBE_PREFIX "redlock:clock:"

static void probe_on_timer(struct ev_loop *loop, ev_timer *w, int revents);
static void probe_publish(struct rl_master *m);

static rl_logger *probe_log(struct rl_master *m)
{
    return &m->client->log;
}

/* How long the probe may go unsampled: RL_PROBE_MIN_GAP_US until the
 * master is trusted, then a tenth of the TTL while the client holds locks
 * (a change mid-hold is seen before the next extension), a second
 * otherwise; never more than a quarter of the probe's life, so that it is
 * set again (at half its life) before it could expire. */
static int64_t probe_period_us(const struct rl_master *m)
{
    const redlock_client *client = m->client;
    if (m->probe.clock.state == RL_CLOCK_UNKNOWN)
        return RL_PROBE_MIN_GAP_US; /* warming up: a verdict before the first acquire */
    int64_t period = RL_PROBE_IDLE_US;
    /* locks_held, not the list of locks: a blocking client's callers
     * change that on their own threads. */
    if (client->watchdogs != 0 || atomic_load(&client->stats.locks_held) != 0)
        period = m->probe.probe_us != 0 ? m->probe.probe_us
                                        : rl_client_setting(client, REDLOCK_TTL_MS) * 100;
    int64_t most = m->probe.px_ms * 1000 / 4;
    if (period > most)
        period = most;
    return period < RL_PROBE_MIN_GAP_US ? RL_PROBE_MIN_GAP_US : period;
}

void rl_clock_probe_init(struct rl_master *m)
{
    rl_clock_probe *p = &m->probe;
    memset(p, 0, sizeof(*p));
    p->state = RL_PROBE_DOWN;
    const redlock_client *client = m->client;
    rl_clock_init(&p->clock, client->cfg->drift_factor);
    p->mode = (int)rl_client_setting(client, REDLOCK_CLOCK_CHECK);
    p->warmup_us = rl_client_setting(client, REDLOCK_CLOCK_WARMUP_MS) * 1000;
    p->probe_us = rl_client_setting(client, REDLOCK_CLOCK_PROBE_MS) * 1000;
    p->quarantine_us = rl_client_setting(client, REDLOCK_CLOCK_QUARANTINE_MS) * 1000;
    p->px_ms = client->cfg->probe_px_ms > 0 ? client->cfg->probe_px_ms : RL_PROBE_PX_MS;
    ev_timer_init(&p->timer, probe_on_timer, 0., 0.);
    p->timer.data = m;
    rl_list_init(&p->awaiting);
    probe_publish(m);
}

bool rl_clock_probe_await(struct rl_master *m, rl_request *req, int64_t sent_us)
{
    rl_clock_probe *p = &m->probe;
    if (p->mode != REDLOCK_CLOCK_CHECK_ENFORCE || !p->sample_in_flight ||
        p->last_sample_us < sent_us)
        return false;
    rl_list_push_back(&p->awaiting, &req->link);
    return true;
}

void rl_clock_probe_flush(struct rl_master *m)
{
    rl_link *link;
    while ((link = rl_list_pop_front(&m->probe.awaiting)) != NULL) {
        rl_request *req = rl_container_of(link, rl_request, link);
        req->ops->on_clock_checked(req);
    }
}

static void probe_on_set_reply(redisAsyncContext *ac, void *r, void *privdata);
static void probe_on_pttl_reply(redisAsyncContext *ac, void *r, void *privdata);

/* SET the probe (nx: only if it is not there), and note when. */
static bool probe_send_set(struct rl_master *m, bool nx)
{
    const char *id = m->client->id;
    int rc;
    if (nx)
        rc = redisAsyncCommand(m->ac, probe_on_set_reply, m,
                               "SET " PROBE_PREFIX "%s %s PX %" PRId64 " NX", id, id,
                               m->probe.px_ms);
    else
        rc = redisAsyncCommand(m->ac, probe_on_set_reply, m, "SET " PROBE_PREFIX "%s %s PX %" PRId64,
                               id, id, m->probe.px_ms);
    if (rc != REDIS_OK)
        return false;
    m->probe.state = RL_PROBE_SETTING;
    m->probe.set_nx = nx;
    m->probe.set_sent_us = rl_now_us();
    return true;
}

static bool probe_send_sample(struct rl_master *m)
{
    rl_clock_probe *p = &m->probe;
    /* Written out here: hiredis's formatting allocates for each argument,
     * and samples follow requests on the hot path. */
    char cmd[64 + sizeof(m->client->id)];
    size_t key_len = strlen(PROBE_PREFIX) + strlen(m->client->id);
    int len = snprintf(cmd, sizeof(cmd), "*2\r\n$4\r\nPTTL\r\n$%zu\r\n" PROBE_PREFIX "%s\r\n",
                       key_len, m->client->id);
    if (len < 0 || (size_t)len >= sizeof(cmd) ||
        redisAsyncFormattedCommand(m->ac, probe_on_pttl_reply, m, cmd, (size_t)len) != REDIS_OK)
        return false;
    p->sample_in_flight = true;
    p->last_sample_us = rl_now_us();
    rl_timer_arm_in(m->client->loop, &p->timer, probe_period_us(m));
    return true;
}

rl_probe_warmth rl_clock_probe_warmth(const struct rl_master *m)
{
    const rl_clock_probe *p = &m->probe;
    if (p->mode == REDLOCK_CLOCK_CHECK_OFF)
        return RL_PROBE_NOTHING_TO_WAIT;
    if (m->state == RL_MASTER_CONNECTING)
        return RL_PROBE_CONNECTING;
    if (m->state != RL_MASTER_READY || p->state == RL_PROBE_DOWN)
        return RL_PROBE_NOTHING_TO_WAIT;
    return p->clock.state == RL_CLOCK_UNKNOWN ? RL_PROBE_WARMING : RL_PROBE_WARM;
}

void rl_clock_probe_report(const struct rl_master *m, int *state, bool *slow, double *rate_lo,
                           double *rate_hi)
{
    const rl_clock_probe *p = &m->probe;
    const rl_clock *c = &p->clock;
    if (c->state == RL_CLOCK_FAST)
        *state = REDLOCK_CLOCK_FAST;
    else if (p->mode == REDLOCK_CLOCK_CHECK_OFF || (p->state == RL_PROBE_DOWN && !c->anchored))
        *state = REDLOCK_CLOCK_OFF;
    else
        *state = c->state == RL_CLOCK_TRUSTED ? REDLOCK_CLOCK_TRUSTED : REDLOCK_CLOCK_CHECKING;
    *slow = c->slow;
    *rate_lo = c->rate_lo;
    *rate_hi = c->rate_hi;
    /* Quarantined: its samples start afresh, so show what was proven. */
    if (c->state == RL_CLOCK_FAST) {
        *rate_lo = c->proof.vanished || c->proof.ours_us <= 0
                       ? 0
                       : (double)c->proof.master_ms * 1000.0 / (double)c->proof.ours_us;
        *rate_hi = -1;
    }
}

/* The verdict as redlock_client_stats() shows it, read from any thread:
 * called after anything that may change what the report says. */
static void probe_publish(struct rl_master *m)
{
    int state;
    bool slow;
    double lo;
    double hi;
    rl_clock_probe_report(m, &state, &slow, &lo, &hi);
    atomic_store_explicit(&m->stats.clock_state, state, memory_order_relaxed);
    atomic_store_explicit(&m->stats.clock_slow, slow, memory_order_relaxed);
}

bool rl_clock_probe_excludes(const struct rl_master *m)
{
    return m->probe.mode == REDLOCK_CLOCK_CHECK_ENFORCE && !rl_clock_counts(&m->probe.clock);
}

void rl_clock_probes_on_hold(redlock_client *client)
{
    int64_t now = rl_now_us();
    for (size_t i = 0; i < client->n; i++) {
        struct rl_master *m = &client->masters[i];
        rl_clock_probe *p = &m->probe;
        if (!ev_is_active(&p->timer))
            continue;
        int64_t due_us = p->last_sample_us + probe_period_us(m) - now;
        if (due_us < 0)
            due_us = 0;
        if ((double)due_us / 1e6 < ev_timer_remaining(client->loop, &p->timer))
            rl_timer_arm_in(client->loop, &p->timer, due_us);
    }
}

void rl_clock_probe_on_handshake(struct rl_master *m)
{
    rl_clock_probe *p = &m->probe;
    p->sample_in_flight = false;
    if (p->mode == REDLOCK_CLOCK_CHECK_OFF)
        return;
    if (probe_send_set(m, true))
        probe_send_sample(m);
    probe_publish(m);
}

void rl_clock_probe_after_send(struct rl_master *m)
{
    rl_clock_probe *p = &m->probe;
    if (p->state != RL_PROBE_SAMPLING || p->sample_in_flight || m->ac == NULL)
        return;
    if (rl_now_us() - p->last_sample_us < RL_PROBE_MIN_GAP_US)
        return;
    probe_send_sample(m);
}

void rl_clock_probe_on_lost(struct rl_master *m)
{
    rl_clock_probe *p = &m->probe;
    p->state = RL_PROBE_DOWN;
    p->sample_in_flight = false;
    ev_timer_stop(m->client->loop, &p->timer);
    probe_publish(m);
}

bool rl_clock_probe_on_close(struct rl_master *m,
                             void (*on_deleted)(struct redisAsyncContext *, void *, void *))
{
    rl_clock_probe *p = &m->probe;
    bool sent = m->ac != NULL && p->state != RL_PROBE_DOWN &&
                redisAsyncCommand(m->ac, on_deleted, m, "DEL " PROBE_PREFIX "%s",
                                  m->client->id) == REDIS_OK;
    rl_clock_probe_on_lost(m);
    return sent;
}

/* Say what a sample changed, as the operator needs to hear it. */
static void probe_report(struct rl_master *m, unsigned ev)
{
    const rl_clock *c = &m->probe.clock;
    const char *name = m->node->name;
    int64_t quarantine_s = (c->fast_until_us - rl_now_us() + 999999) / 1000000;
    if (ev & RL_CLOCK_EV_FAST) {
        if (c->proof.vanished)
            rl_log(probe_log(m), REDLOCK_LOG_WARN,
                   "master %s: the clock probe is gone on the same server run (its clock "
                   "stepped past the probe's life, or keys were evicted or flushed); excluded "
                   "for %" PRId64 " s",
                   name, quarantine_s);
        else
            rl_log(probe_log(m), REDLOCK_LOG_WARN,
                   "master %s: expiry clock advanced %" PRId64 " ms in at most %.1f ms of ours "
                   "(rate >= %.2f); excluded for %" PRId64 " s",
                   name, c->proof.master_ms, (double)c->proof.ours_us / 1000.0,
                   (double)c->proof.master_ms * 1000.0 / (double)c->proof.ours_us, quarantine_s);
    }
    if (ev & RL_CLOCK_EV_SLOW)
        rl_log(probe_log(m), REDLOCK_LOG_INFO,
               "master %s: expiry clock runs slow (rate <= %.4f): keys live longer there", name,
               c->rate_hi);
    if (ev & RL_CLOCK_EV_READMIT)
        rl_log(probe_log(m), REDLOCK_LOG_INFO,
               "master %s: its quarantine is over; its clock is checked afresh", name);
    if (ev & RL_CLOCK_EV_RESTART)
        rl_log(probe_log(m), REDLOCK_LOG_DEBUG,
               "master %s: restarted (new run_id): its clock is checked afresh", name);
}

/* After a reply: set the probe again if the check asks for it. */
static void probe_follow(struct rl_master *m, unsigned ev)
{
    if (ev != 0) {
        redlock_client *client = m->client;
        RL_EXPECT_ENTERED(client); /* a free from the log or a lost callback waits for its leave */
        probe_report(m, ev);
        if ((ev & RL_CLOCK_EV_FAST) && !client->closing)
            client->hooks->clock_loss_check(client, m);
        if (m->ac == NULL || m->probe.state == RL_PROBE_DOWN)
            return;
    }
    if ((ev & RL_CLOCK_EV_REANCHOR) && m->probe.state == RL_PROBE_SAMPLING)
        probe_send_set(m, false);
}

static void probe_handle_set_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    struct rl_master *m = privdata;
    const redisReply *reply = r;
    if (reply == NULL || ac->data != m || m->probe.state != RL_PROBE_SETTING)
        return; /* a stale context, or the connection died */
    rl_clock_probe *p = &m->probe;
    int64_t now = rl_now_us();
    unsigned ev = 0;
    if (reply->type == REDIS_REPLY_STATUS) {
        /* Set now. A probe anchored on this run should have been there. */
        if (p->set_nx && p->clock.anchored)
            ev = rl_clock_sample_add(&p->clock, p->set_sent_us, now, -2, m->run_id,
                                     p->warmup_us, p->quarantine_us);
        ev &= ~(unsigned)RL_CLOCK_EV_REANCHOR; /* this SET is the new anchor */
        rl_clock_anchor(&p->clock, p->set_sent_us, now, p->px_ms, m->run_id);
        p->state = RL_PROBE_SAMPLING;
    } else if (reply->type == REDIS_REPLY_NIL) {
        /* Already there (NX): ours from before, sampled next. */
        p->state = RL_PROBE_SAMPLING;
        if (!p->clock.anchored)
            ev = RL_CLOCK_EV_REANCHOR; /* set when, we do not know */
    } else {
        rl_log(probe_log(m), REDLOCK_LOG_WARN,
               "master %s: cannot keep a clock probe (%.*s): its clock is not checked",
               m->node->name, reply->type == REDIS_REPLY_ERROR ? (int)reply->len : 0,
               reply->type == REDIS_REPLY_ERROR ? reply->str : "");
        p->state = RL_PROBE_DOWN;
        return;
    }
    probe_follow(m, ev);
}

static void probe_on_set_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    if (ac->data != privdata)
        return; /* a context let go of: its master may be gone with its client */
    redlock_client *client = ((struct rl_master *)privdata)->client;
    rl_client_enter(client);
    probe_handle_set_reply(ac, r, privdata);
    probe_publish(privdata);
    rl_client_leave(client);
}

static void probe_handle_pttl_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    struct rl_master *m = privdata;
    const redisReply *reply = r;
    if (ac->data != m)
        return; /* a stale context: its master flushed what waited */
    rl_clock_probe *p = &m->probe;
    p->sample_in_flight = false;
    RL_EXPECT_ENTERED(m->client); /* a free from the log or a lost callback waits for its leave */
    /* No evidence when the connection died, a SET is on its way, or the
     * sample was refused. */
    if (reply != NULL && p->state == RL_PROBE_SAMPLING && reply->type == REDIS_REPLY_INTEGER)
        probe_follow(m, rl_clock_sample_add(&p->clock, p->last_sample_us, rl_now_us(),
                                            reply->integer, m->run_id, p->warmup_us,
                                            p->quarantine_us));
    rl_clock_probe_flush(m);
}

static void probe_on_pttl_reply(redisAsyncContext *ac, void *r, void *privdata)
{
    if (ac->data != privdata)
        return; /* a context let go of: its master may be gone with its client */
    redlock_client *client = ((struct rl_master *)privdata)->client;
    rl_client_enter(client);
    probe_handle_pttl_reply(ac, r, privdata);
    probe_publish(privdata);
    rl_client_leave(client);
}

static void probe_handle_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop, (void)revents;
    struct rl_master *m = w->data;
    rl_clock_probe *p = &m->probe;
    unsigned ev = rl_clock_tick(&p->clock, rl_now_us());
    if (ev != 0) {
        probe_follow(m, ev);
        if (m->ac == NULL || p->state == RL_PROBE_DOWN)
            return;
    }
    if (p->state == RL_PROBE_SAMPLING && !p->sample_in_flight && m->ac != NULL)
        probe_send_sample(m);
    else
        rl_timer_arm_in(m->client->loop, &p->timer, probe_period_us(m));
}

static void probe_on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    redlock_client *client = ((struct rl_master *)w->data)->client;
    rl_client_enter(client);
    probe_handle_timer(loop, w, revents);
    probe_publish(w->data);
    rl_client_leave(client);
}
