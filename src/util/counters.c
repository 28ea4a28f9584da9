/* SPDX-License-Identifier: BSD-3-Clause */
/* Counting requests, acquires and holds for redlock_client_stats(). See
 * counters.h. */
#include "util/counters.h"

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
