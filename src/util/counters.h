/* SPDX-License-Identifier: BSD-3-Clause */
/* The counters behind redlock_client_stats() (client/stats.c takes their
 * snapshot): written by every layer on the client's loop thread, read from
 * any thread, so every one is atomic (relaxed: each is
 * exact, a snapshot is not one instant across them). An increment is one
 * uncontended atomic add: nothing the hot path would notice beside a round
 * trip. */
#ifndef REDLOCK_COUNTERS_H
#define REDLOCK_COUNTERS_H

#include "redlock/redlock.h"

#include <stdatomic.h>
#include <stdint.h>

typedef struct rl_master_counters {
    _Atomic uint64_t requests;
    _Atomic uint64_t outcomes[REDLOCK_STATS_OUTCOMES];
    _Atomic uint64_t late;
    _Atomic uint64_t connects;
    _Atomic int state; /* a redlock_connection_state */
    _Atomic uint64_t latency_us[REDLOCK_STATS_BUCKETS];
    _Atomic uint64_t latency_sum_us;
    _Atomic uint64_t in_flight; /* gauges, set by master.c */
    _Atomic uint64_t queued;
    /* The restart rule's view (master/restart.c publishes it): a
     * redlock_restart_state, and for EXCLUDED when it counts from and the
     * bound on its run's start (rl_now_us() time; 0: none). */
    _Atomic int restart_state;
    _Atomic int64_t restart_votes_from_us;
    _Atomic int64_t restart_run_start_us;
    /* The clock check's verdict (master/clock_probe.c publishes it): a
     * redlock_clock_state, and whether it was proven slow. */
    _Atomic int clock_state;
    _Atomic int clock_slow;
} rl_master_counters;

typedef struct rl_client_counters {
    _Atomic uint64_t acquires[REDLOCK_STATS_STATUSES];
    _Atomic uint64_t extends;
    _Atomic uint64_t extend_failures;
    _Atomic uint64_t auto_extend_failures;
    _Atomic uint64_t locks_lost;
    _Atomic uint64_t releases;
    _Atomic uint64_t release_failures;
    _Atomic uint64_t locks_held;
    _Atomic uint64_t hold_ms[REDLOCK_STATS_BUCKETS];
    _Atomic uint64_t hold_sum_ms;
} rl_client_counters;

static inline void rl_gauge_set(_Atomic uint64_t *gauge, uint64_t value)
{
    atomic_store_explicit(gauge, value, memory_order_relaxed);
}

/* The histogram bucket of v (REDLOCK_STATS_BUCKETS says which is which). */
unsigned rl_stats_bucket(uint64_t v);

static inline void rl_count(_Atomic uint64_t *counter)
{
    atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
}

/* A request's outcome (a redlock_master_outcome) and, when it had a reply,
 * its latency (-1: none). */
void rl_stats_request_done(rl_master_counters *m, int outcome, int64_t latency_us);
/* A reply after the request was counted a timeout. */
void rl_stats_late_reply(rl_master_counters *m, int64_t latency_us);
/* Status of a completed acquire. */
void rl_stats_acquired(rl_client_counters *c, int status);
/* A lock ended (released, lost or freed) after held_us. */
void rl_stats_hold_ended(rl_client_counters *c, int64_t held_us);

#endif
