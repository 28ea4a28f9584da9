/* SPDX-License-Identifier: BSD-3-Clause */
/* When auto-extension acts: see watchdog_schedule.h. */
#include "lock/watchdog_schedule.h"

/* lo + uniform(0 .. span), span >= 0 (the modulo's bias is below
 * span / 2^64: nothing for spans of microseconds). */
static int64_t uniform(int64_t lo, int64_t span, uint64_t random)
{
    return lo + (int64_t)(random % ((uint64_t)span + 1));
}

int64_t rl_wd_interval_us(int64_t ttl_ms)
{
    return ttl_ms * 1000 / 3;
}

int64_t rl_wd_margin_us(int64_t ttl_ms)
{
    return ttl_ms * 1000 / 6;
}

int64_t rl_wd_guard_at(int64_t deadline_us, int64_t ttl_ms)
{
    return deadline_us - rl_wd_margin_us(ttl_ms);
}

void rl_wd_tick_window(int64_t started_us, int64_t interval_us, int64_t guard_us, bool first,
                       int64_t *lo_us, int64_t *hi_us)
{
    int64_t lo = started_us + (first ? interval_us / 10 : interval_us - interval_us / 10);
    int64_t hi = started_us + interval_us + interval_us / 10;
    int64_t halfway = started_us + (guard_us - started_us) / 2;
    if (hi > halfway)
        hi = halfway;
    if (lo > hi)
        lo = hi;
    *lo_us = lo;
    *hi_us = hi;
}

int64_t rl_wd_tick_at(int64_t started_us, int64_t interval_us, int64_t guard_us, bool first,
                      uint64_t random)
{
    int64_t lo;
    int64_t hi;
    rl_wd_tick_window(started_us, interval_us, guard_us, first, &lo, &hi);
    return uniform(lo, hi - lo, random);
}

/* Whether the cycle keeps a lock of ttl_ms: from the latest regular tick
 * to the guard, both counted from an extension's start, room for a round
 * trip the watchdog assumes at most RL_WD_MIN_RETRY_US. */
static bool keeps(int64_t ttl_ms, int64_t drift_us)
{
    int64_t guard = rl_wd_guard_at(ttl_ms * 1000 - drift_us, ttl_ms);
    int64_t lo;
    int64_t hi;
    rl_wd_tick_window(0, rl_wd_interval_us(ttl_ms), guard, false, &lo, &hi);
    return guard - hi >= RL_WD_MIN_RETRY_US;
}

int64_t rl_wd_min_ttl_ms(int64_t (*drift_us)(int64_t ttl_ms, double factor), double factor,
                         int64_t max_ttl_ms)
{
    if (max_ttl_ms < 1 || !keeps(max_ttl_ms, drift_us(max_ttl_ms, factor)))
        return -1;
    /* keeps() holds from some TTL on (the room grows with the TTL): the
     * first, by bisection, in some 40 steps at most. */
    int64_t lo = 0; /* does not keep */
    int64_t hi = max_ttl_ms;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (keeps(mid, drift_us(mid, factor)))
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

int64_t rl_wd_backoff_us(const rl_wd_backoff *b, unsigned failures, int64_t max_us,
                         uint64_t random)
{
    int64_t jitter = b->jitter_us > 0 ? b->jitter_us : 0;
    int64_t wait = uniform(b->delay_us > 0 ? b->delay_us : 0, jitter, random);
    if (wait < RL_WD_MIN_RETRY_US)
        wait = RL_WD_MIN_RETRY_US;
    /* Doubled per failure after the first, up to the cap (without
     * overflow, whatever the cap). */
    for (unsigned n = 1; n < failures && wait < max_us; n++)
        wait = wait > max_us / 2 ? max_us : wait * 2;
    return wait < max_us ? wait : max_us;
}

int64_t rl_wd_retry_at(int64_t now_us, int64_t wait_us, int64_t guard_us, int64_t reserve_us)
{
    int64_t at = now_us + wait_us;
    int64_t latest = guard_us - reserve_us;
    /* Before the last point: never past it, so that a last attempt has
     * its command timeout before the guard. */
    if (now_us + RL_WD_MIN_RETRY_US <= latest)
        return at < latest ? at : latest;
    /* Past it (or too close to wait the minimum first): a retry still
     * before the guard may be heard in time; one at or after the guard
     * could save nothing. */
    return at < guard_us ? at : RL_WD_NEVER;
}
