/* SPDX-License-Identifier: BSD-3-Clause */
/* The snapshot of the counters for an operator (util/counters.h), and the
 * names of connection states. */
#include "util/counters.h"
#include "context/context.h"
#include "master/master.h"
#include "redlock/redlock.h"
#include "util/util.h"

#include <stddef.h>
#include <string.h>

/* sizeof(redlock_stats) in the first version: up to masters[]. */
#define RL_STATS_FIRST_SIZE                                                                        \
    (offsetof(redlock_stats, masters) + sizeof(((redlock_stats *)0)->masters))

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

/* The restart rule's view of a master at now_us: an exclusion whose time
 * is up counts, though the master hears it only at its next OK. */
static void restart_snapshot(redlock_master_restart *out, const rl_master_counters *m,
                             int64_t now_us)
{
    int state = atomic_load_explicit(&m->restart_state, memory_order_acquire);
    int64_t votes_from = atomic_load_explicit(&m->restart_votes_from_us, memory_order_relaxed);
    int64_t run_start = atomic_load_explicit(&m->restart_run_start_us, memory_order_relaxed);
    out->state = state;
    out->excluded_ms = 0;
    out->age_ms = state != REDLOCK_RESTART_UNKNOWN && run_start > 0 ? (now_us - run_start) / 1000
                                                                     : -1;
    if (state == REDLOCK_RESTART_EXCLUDED && now_us >= votes_from)
        out->state = REDLOCK_RESTART_COUNTS;
    else if (state == REDLOCK_RESTART_EXCLUDED)
        out->excluded_ms = (votes_from - now_us + 999) / 1000;
}

int redlock_client_stats(const redlock_client *client, redlock_stats *stats)
{
    /* Every field up to masters[] existed in the first version; those
     * after it are filled as far as the caller's size goes. */
    if (client == NULL || stats == NULL || stats->size < RL_STATS_FIRST_SIZE)
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
    int64_t now = rl_now_us();
    for (size_t i = 0; i < client->n; i++)
        restart_snapshot(&s.restarts[i], &client->masters[i].stats, now);
    for (size_t i = client->n; i < REDLOCK_MAX_NODES; i++)
        s.restarts[i].age_ms = -1;
    for (size_t i = 0; i < client->n; i++) {
        const rl_master_counters *m = &client->masters[i].stats;
        s.clocks[i].state = atomic_load_explicit(&m->clock_state, memory_order_relaxed);
        s.clocks[i].slow = atomic_load_explicit(&m->clock_slow, memory_order_relaxed) != 0;
    }
    memcpy(stats, &s, stats->size < sizeof(s) ? stats->size : sizeof(s));
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
