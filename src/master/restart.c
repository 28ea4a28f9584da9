/* SPDX-License-Identifier: BSD-3-Clause */
/* Masters restarted empty: from when a master's OKs count (restart.h has
 * the states and the rule). */
#include "master/restart.h"
#include "config/config_internal.h"
#include "context/context.h"
#include "master/master.h"
#include "redlock/redlock.h"
#include "util/log.h"
#include "util/util.h"
#include "wire/scripts.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* Show the state to redlock_client_stats(), which any thread may call:
 * the times first, so that a reader seeing a state sees its times. A
 * durable master counts whatever its connection does. */
static void restart_publish(struct rl_master *m)
{
    const rl_restart *r = &m->restart;
    rl_master_counters *c = &m->stats;
    int state = REDLOCK_RESTART_COUNTS;
    if (!r->durable && r->state == RL_RESTART_UNKNOWN)
        state = REDLOCK_RESTART_UNKNOWN;
    else if (!r->durable && r->state == RL_RESTART_EXCLUDED)
        state = REDLOCK_RESTART_EXCLUDED;
    atomic_store_explicit(&c->restart_votes_from_us, r->durable ? 0 : r->votes_from_us,
                          memory_order_relaxed);
    atomic_store_explicit(&c->restart_run_start_us, r->durable ? 0 : r->run_start_us,
                          memory_order_relaxed);
    atomic_store_explicit(&c->restart_state, state, memory_order_release);
}

void rl_restart_init(struct rl_master *m)
{
    rl_restart *r = &m->restart;
    memset(r, 0, sizeof(*r));
    r->state = RL_RESTART_UNKNOWN;
    r->durable = rl_node_durable(m->client->cfg, m->node);
    restart_publish(m);
}

void rl_restart_on_connecting(struct rl_master *m)
{
    m->restart.connected_at_us = 0;
    m->restart.state = RL_RESTART_UNKNOWN;
    restart_publish(m);
}

void rl_restart_on_connected(struct rl_master *m)
{
    rl_restart *r = &m->restart;
    r->connected_at_us = rl_now_us();
    r->state = RL_RESTART_UNKNOWN;
    restart_publish(m);
}

/* The connection's start, or now when the connect was never seen. */
static int64_t restart_connected_at(const rl_restart *r, int64_t now_us)
{
    return r->connected_at_us > 0 ? r->connected_at_us : now_us;
}

/* Exclude m until its bound plus max_ttl_ms and the drift allowance. */
static void restart_exclude_from(struct rl_master *m, int64_t bound_us, int64_t votes_from_us,
                                 int64_t now_us, const char *why)
{
    rl_restart *r = &m->restart;
    int64_t max_ttl_ms = rl_config_max_ttl_ms(m->client->cfg);
    r->run_start_us = bound_us;
    r->votes_from_us = votes_from_us;
    if (now_us >= votes_from_us) {
        r->state = RL_RESTART_COUNTS;
        restart_publish(m);
        return;
    }
    r->state = RL_RESTART_EXCLUDED;
    restart_publish(m);
    RL_EXPECT_ENTERED(m->client); /* a free from the log waits for its leave */
    rl_log(&m->client->log, REDLOCK_LOG_INFO,
           "master %s: %s %" PRId64 " s ago: not counted for %" PRId64 " s more (max_ttl_ms %" PRId64
           ")",
           m->node->name, why, (now_us - bound_us) / 1000000,
           (votes_from_us - now_us + 999999) / 1000000, max_ttl_ms);
}

/* When a run bounded by bound_us to have begun before may count. */
static int64_t restart_votes_from(const redlock_config *cfg, int64_t bound_us)
{
    int64_t max_ttl_ms = rl_config_max_ttl_ms(cfg);
    return bound_us + max_ttl_ms * 1000 + rl_drift_us(max_ttl_ms, cfg->drift_factor);
}

bool rl_restart_on_info(struct rl_master *m, const char *run_id, int64_t uptime_s)
{
    rl_restart *r = &m->restart;
    int64_t now = rl_now_us(); /* e: the INFO reply is in */
    int64_t connected_at = restart_connected_at(r, now);
    r->conn_seq++;
    bool same_run = run_id[0] != '\0' && r->seen_run && strcmp(run_id, r->last_run_id) == 0;
    bool first = !r->seen_run;
    if (run_id[0] != '\0') {
        r->seen_run = true;
        snprintf(r->last_run_id, sizeof(r->last_run_id), "%s", run_id);
    }
    if (r->durable) {
        r->state = RL_RESTART_COUNTS;
        r->run_start_us = 0;
        r->votes_from_us = 0;
        restart_publish(m);
        return false;
    }
    if (same_run) {
        /* The keys of this run are where they were: its bound stands. */
        r->state = now >= r->votes_from_us ? RL_RESTART_COUNTS : RL_RESTART_EXCLUDED;
        restart_publish(m);
        return false;
    }
    if (run_id[0] == '\0') {
        /* No run_id: the marker and guard keys tell a restart from a
         * reconnection. UNKNOWN until the script answers. */
        r->state = RL_RESTART_UNKNOWN;
        restart_publish(m);
        return true;
    }
    int64_t bound = connected_at;
    if (first && uptime_s >= 0) {
        /* Redis truncates both ends of its uptime to the second; our clock
         * may run up to drift_factor slower than its. */
        int64_t up_us = (uptime_s > 1 ? uptime_s - 1 : 0) * 1000000;
        int64_t start = now - (int64_t)((double)up_us * (1.0 - m->client->cfg->drift_factor));
        if (start < bound)
            bound = start;
    }
    restart_exclude_from(m, bound, restart_votes_from(m->client->cfg, bound), now,
                         first ? "started" : "restarted (new run_id)");
    return false;
}

void rl_restart_on_marker(struct rl_master *m, rl_restart_marker found, int64_t guard_pttl_ms,
                          int64_t guard_px_ms)
{
    rl_restart *r = &m->restart;
    int64_t now = rl_now_us(); /* after the script ran: a later bound is safe */
    const redlock_config *cfg = m->client->cfg;
    if (found == RL_MARKER_UNGUARDED) {
        /* The guard outlived every key the run could have lost. */
        r->state = RL_RESTART_COUNTS;
        r->run_start_us = 0;
        r->votes_from_us = 0;
        restart_publish(m);
        return;
    }
    int64_t bound = now;
    const char *why = "restarted (no restart marker: written again)";
    if (found == RL_MARKER_GUARDED) {
        /* The guard was written (PX its value) when the marker was found
         * missing: the run began before. No TTL (not ours): from now. */
        int64_t px = guard_px_ms > 0 ? guard_px_ms : rl_config_max_ttl_ms(cfg);
        int64_t elapsed_ms = guard_pttl_ms >= 0 && guard_pttl_ms < px ? px - guard_pttl_ms : 0;
        bound = now - elapsed_ms * 1000;
        why = "restarted (restart marker guarded)";
    }
    restart_exclude_from(m, bound, restart_votes_from(cfg, bound), now, why);
}

void rl_restart_on_marker_refused(struct rl_master *m, const char *why)
{
    rl_restart *r = &m->restart;
    int64_t now = rl_now_us();
    RL_EXPECT_ENTERED(m->client); /* a free from the log waits for its leave */
    rl_log(&m->client->log, r->marker_warned ? REDLOCK_LOG_DEBUG : REDLOCK_LOG_WARN,
           "master %s: the restart marker script was refused (%s): not counted for max_ttl_ms "
           "after each connection; allow EVALSHA, EVAL, GET, SET and PTTL on "
           RL_RESTART_KEY_PREFIX "* (docs/safety.md)",
           m->node->name, why);
    r->marker_warned = true;
    /* Nothing tells a restart from a reconnection: the connection is the
     * bound, every time. */
    int64_t connected_at = restart_connected_at(r, now);
    restart_exclude_from(m, connected_at, restart_votes_from(m->client->cfg, connected_at), now,
                         "cannot be identified (no run_id); connected");
}

void rl_restart_on_durable_config(struct rl_master *m, const char *appendonly,
                                  const char *appendfsync)
{
    rl_restart *r = &m->restart;
    char found[sizeof(r->durable_doubt)] = "";
    if (appendonly[0] != '\0' && strcmp(appendonly, "yes") != 0)
        snprintf(found, sizeof(found), "appendonly %.16s", appendonly);
    else if (appendonly[0] != '\0' && appendfsync[0] != '\0' && strcmp(appendfsync, "always") != 0)
        snprintf(found, sizeof(found), "appendfsync %.16s", appendfsync);
    if (strcmp(found, r->durable_doubt) == 0)
        return; /* told already, or nothing to tell */
    snprintf(r->durable_doubt, sizeof(r->durable_doubt), "%s", found);
    RL_EXPECT_ENTERED(m->client); /* a free from the log waits for its leave */
    if (found[0] == '\0')
        rl_log(&m->client->log, REDLOCK_LOG_INFO,
               "master %s: declared durable, and now AOF with appendfsync always", m->node->name);
    else
        rl_log(&m->client->log, REDLOCK_LOG_WARN,
               "master %s: declared durable, but its CONFIG says %s (not AOF with appendfsync "
               "always): a restart may lose keys; the declaration stands, so the restart rule is "
               "off for it",
               m->node->name, found);
}

bool rl_restart_durable_doubt(const struct rl_master *m, char *buf, size_t len)
{
    if (len > 0)
        snprintf(buf, len, "%s", m->restart.durable_doubt);
    return m->restart.durable_doubt[0] != '\0';
}

bool rl_restart_excluded(const struct rl_master *m, int64_t now_us)
{
    const rl_restart *r = &m->restart;
    if (r->durable)
        return false;
    if (r->state == RL_RESTART_UNKNOWN)
        return true; /* its run not known yet: the marker script's EVAL, or a
                        reply from an earlier connection checked again */
    return r->state == RL_RESTART_EXCLUDED && now_us < r->votes_from_us;
}

bool rl_restart_excludes(struct rl_master *m, int64_t now_us)
{
    rl_restart *r = &m->restart;
    if (rl_restart_excluded(m, now_us))
        return true;
    if (r->state == RL_RESTART_EXCLUDED) {
        r->state = RL_RESTART_COUNTS;
        restart_publish(m);
        RL_EXPECT_ENTERED(m->client); /* a free from the log waits for its leave */
        rl_log(&m->client->log, REDLOCK_LOG_INFO,
               "master %s: its run began over max_ttl_ms (%" PRId64 " ms) ago: counted again",
               m->node->name, rl_config_max_ttl_ms(m->client->cfg));
    }
    return false;
}

int64_t rl_restart_wait_ms(const struct rl_master *m, int64_t now_us)
{
    const rl_restart *r = &m->restart;
    if (!rl_restart_excluded(m, now_us) || r->state != RL_RESTART_EXCLUDED)
        return 0;
    return (r->votes_from_us - now_us + 999) / 1000;
}

int64_t rl_restart_age_ms(const struct rl_master *m, int64_t now_us)
{
    const rl_restart *r = &m->restart;
    if (r->run_start_us == 0 || r->state == RL_RESTART_UNKNOWN)
        return -1;
    return (now_us - r->run_start_us) / 1000;
}

bool rl_restart_describe(const struct rl_master *m, int64_t now_us, char *buf, size_t len)
{
    if (len > 0)
        buf[0] = '\0';
    if (!m->restart.durable && m->restart.state == RL_RESTART_UNKNOWN) {
        snprintf(buf, len, "its run not known yet: not counted");
        return true;
    }
    int64_t wait_ms = rl_restart_wait_ms(m, now_us);
    if (wait_ms <= 0)
        return false;
    int64_t age_ms = rl_restart_age_ms(m, now_us);
    snprintf(buf, len, "restarted %" PRId64 " s ago: not counted for %" PRId64 " s more",
             age_ms < 0 ? 0 : age_ms / 1000, (wait_ms + 999) / 1000);
    return true;
}
