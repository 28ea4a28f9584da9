/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * When auto-extension acts (src/watchdog.c): pure arithmetic on instants
 * and durations in microseconds on CLOCK_MONOTONIC, with the random draws
 * passed in as 64-bit words, so it can be tested without a loop or a clock.
 *
 *   started           tick window            guard        deadline
 *      |-------------[0.9 .. 1.1]·ttl/3---------|--- ttl/6 ---|
 *      |--[0.1 ............ 1.1]·ttl/3---------|   (the first tick)
 *
 * - The tick (the next regular extension) is drawn uniformly within 10 %
 *   of ttl/3 after the last extension started, anew for each extension, so
 *   that locks extended together drift apart instead of being extended
 *   together forever. The first tick of an auto-extension is drawn over a
 *   whole interval, from a tenth of it to 1.1 of it after the acquire (or
 *   last extension) started: locks acquired in a burst are spread over a
 *   cycle at once, where ±10 % a cycle would take some twenty cycles to
 *   spread them (a lock held less than that may be extended once more than
 *   it needed). A tick is never later than halfway from that start to the
 *   guard, so that retries always have at least as long as the wait before
 *   the tick (with the default drift factor, the bound only bites when the
 *   TTL is under about 23 ms).
 * - After the n-th failed extension in a row the retry waits
 *   2^(n-1) · max(10 ms, retry_delay + uniform(0 .. retry_jitter)): the
 *   acquire's retry window, doubled per failure. With retry_jitter =
 *   retry_delay, that is equal jitter (half the wait fixed, half drawn).
 *   The wait is at most ttl/3, and the retry is never later than a command
 *   timeout before the guard (a last attempt that can still be heard in
 *   time); past that point (or nearer to it than 10 ms) only a retry
 *   before the guard is made, else none (RL_WD_NEVER): the guard decides.
 */
#ifndef REDLOCK_WATCHDOG_SCHEDULE_H
#define REDLOCK_WATCHDOG_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

/* Extensions are retried no faster than this after a failure. */
#define RL_WD_MIN_RETRY_US INT64_C(10000)
/* No retry: the guard decides. */
#define RL_WD_NEVER INT64_MAX

/* The regular interval, ttl/3, and the guard's margin, ttl/6. */
int64_t rl_wd_interval_us(int64_t ttl_ms);
int64_t rl_wd_margin_us(int64_t ttl_ms);

/* The guard: margin before the deadline. */
int64_t rl_wd_guard_at(int64_t deadline_us, int64_t ttl_ms);

/* The tick window after an extension started at started_us, the guard at
 * guard_us: [*lo_us, *hi_us], both within [0.9, 1.1] of the interval after
 * started_us ([0.1, 1.1] for the first tick), hi no later than halfway to
 * the guard (lo then no later than hi). */
void rl_wd_tick_window(int64_t started_us, int64_t interval_us, int64_t guard_us, bool first,
                       int64_t *lo_us, int64_t *hi_us);

/* The tick: uniform within the window, drawn from random. */
int64_t rl_wd_tick_at(int64_t started_us, int64_t interval_us, int64_t guard_us, bool first,
                      uint64_t random);

/* The smallest TTL, in milliseconds, the cycle can keep: the one where,
 * from the latest regular tick to the guard, there is still
 * RL_WD_MIN_RETRY_US for the extension's round trip. drift_us(ttl_ms) is
 * the drift allowance, searched up to max_ttl_ms; -1 when no TTL up to it
 * works (a drift factor near 1). */
int64_t rl_wd_min_ttl_ms(int64_t (*drift_us)(int64_t ttl_ms, double factor), double factor,
                         int64_t max_ttl_ms);

/* The retry settings, in microseconds. */
typedef struct rl_wd_backoff {
    int64_t delay_us;  /* retry_delay_ms: the first wait */
    int64_t jitter_us; /* retry_jitter_ms: plus uniform 0..this */
} rl_wd_backoff;

/* The wait after the failures-th failed extension in a row (1 for the
 * first; 0 counts as 1): max(RL_WD_MIN_RETRY_US, delay + uniform(0..jitter))
 * drawn from random, doubled failures - 1 times, at most max_us (the
 * interval; it wins over the minimum). */
int64_t rl_wd_backoff_us(const rl_wd_backoff *b, unsigned failures, int64_t max_us,
                         uint64_t random);

/* When to retry, at now_us, after waiting wait_us (rl_wd_backoff_us()):
 * no later than guard_us - reserve_us (a command timeout before the
 * guard); once that is nearer than RL_WD_MIN_RETRY_US or past,
 * now_us + wait_us if still before the guard, else RL_WD_NEVER. */
int64_t rl_wd_retry_at(int64_t now_us, int64_t wait_us, int64_t guard_us, int64_t reserve_us);

#endif
