/* SPDX-License-Identifier: BSD-3-Clause */
/* Counters for an operator, and their snapshot. See stats.h. */
#include "client/stats.h"
#include "client/client.h"
#include "master/master.h"
#include "redlock/redlock.h"

#include <string.h>

unsigned rl_stats_bucket(uint64_t v)
{
    unsigned b = 0;
    while (v > 0 && b < REDLOCK_STATS_BUCKETS - 1) {
        v >>= 1;
        b++;
    }
    return b;
}

static void add(_Atomic uint64_t *counter, uint64_t n)
{
    atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}

static void latency(rl_master_counters *m, int64_t latency_us)
{
    if (latency_us < 0)
        return;
    rl_count(&m->latency_us[rl_stats_bucket((uint64_t)latency_us)]);
    add(&m->latency_sum_us, (uint64_t)latency_us);
}

void rl_stats_request_done(rl_master_counters *m, int outcome, int64_t latency_us)
{
    if (outcome >= 0 && outcome < REDLOCK_STATS_OUTCOMES)
        rl_count(&m->outcomes[outcome]);
    latency(m, latency_us);
}

void rl_stats_late_reply(rl_master_counters *m, int64_t latency_us)
{
    rl_count(&m->late);
    latency(m, latency_us);
}

void rl_stats_acquired(rl_client_counters *c, int status)
{
    if (status <= 0 && status > -REDLOCK_STATS_STATUSES)
        rl_count(&c->acquires[-status]);
}

void rl_stats_hold_ended(rl_client_counters *c, int64_t held_us)
{
    uint64_t ms = held_us > 0 ? (uint64_t)held_us / 1000 : 0;
    atomic_fetch_sub_explicit(&c->locks_held, 1, memory_order_relaxed);
    rl_count(&c->hold_ms[rl_stats_bucket(ms)]);
    add(&c->hold_sum_ms, ms);
}

static uint64_t get(const _Atomic uint64_t *counter)
{
    return atomic_load_explicit(counter, memory_order_relaxed);
}

static void copy_all(uint64_t *to, const _Atomic uint64_t *from, size_t n)
{
    for (size_t i = 0; i < n; i++)
        to[i] = get(&from[i]);
}

static void master_snapshot(redlock_master_stats *out, const rl_master_counters *m)
{
    out->requests = get(&m->requests);
    copy_all(out->outcomes, m->outcomes, REDLOCK_STATS_OUTCOMES);
    out->late = get(&m->late);
    out->connects = get(&m->connects);
    out->state = atomic_load_explicit(&m->state, memory_order_relaxed);
    copy_all(out->latency_us, m->latency_us, REDLOCK_STATS_BUCKETS);
    out->latency_sum_us = get(&m->latency_sum_us);
    out->in_flight = get(&m->in_flight);
    out->queued = get(&m->queued);
}

int redlock_client_stats(const redlock_client *client, redlock_stats *stats)
{
    /* Every field up to masters[] existed in the first version. */
    if (client == NULL || stats == NULL || stats->size < sizeof(redlock_stats))
        return REDLOCK_EINVAL;
    redlock_stats s;
    memset(&s, 0, sizeof(s));
    s.size = stats->size;
    const rl_client_counters *c = &client->stats;
    copy_all(s.acquires, c->acquires, REDLOCK_STATS_STATUSES);
    s.extends = get(&c->extends);
    s.extend_failures = get(&c->extend_failures);
    s.auto_extend_failures = get(&c->auto_extend_failures);
    s.locks_lost = get(&c->locks_lost);
    s.releases = get(&c->releases);
    s.release_failures = get(&c->release_failures);
    s.locks_held = get(&c->locks_held);
    copy_all(s.hold_ms, c->hold_ms, REDLOCK_STATS_BUCKETS);
    s.hold_sum_ms = get(&c->hold_sum_ms);
    s.master_count = (unsigned)client->n;
    for (size_t i = 0; i < client->n; i++)
        master_snapshot(&s.masters[i], &client->masters[i].stats);
    memcpy(stats, &s, sizeof(s));
    return REDLOCK_OK;
}

const char *redlock_connection_state_name(int state)
{
    switch (state) {
    case REDLOCK_CONNECTION_DOWN:
        return "down";
    case REDLOCK_CONNECTION_CONNECTING:
        return "connecting";
    case REDLOCK_CONNECTION_READY:
        return "ready";
    case REDLOCK_CONNECTION_CLOSING:
        return "closing";
    default:
        return "unknown";
    }
}
