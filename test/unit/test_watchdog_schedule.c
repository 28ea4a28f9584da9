/* SPDX-License-Identifier: BSD-3-Clause */
/* Auto-extension's schedule: the tick's window, its jitter, the backoff of
 * failed extensions and its caps. Instants in microseconds. */
#include "config_internal.h"
#include "quorum.h"
#include "random.h"
#include "watchdog_schedule.h"

#include <criterion/criterion.h>
#include <limits.h>
#include <stdbool.h>

#define MS INT64_C(1000)

/* A lock's instants as the watchdog sees them: its last extension started
 * at 0; the deadline is ttl - drift later, the guard ttl/6 before that. */
typedef struct lock_times {
    int64_t ttl_ms;
    int64_t interval;
    int64_t deadline;
    int64_t guard;
} lock_times;

static lock_times times_of(int64_t ttl_ms, double drift_factor)
{
    lock_times t = {.ttl_ms = ttl_ms, .interval = rl_wd_interval_us(ttl_ms)};
    t.deadline = ttl_ms * MS - rl_drift_us(ttl_ms, drift_factor);
    t.guard = rl_wd_guard_at(t.deadline, ttl_ms);
    return t;
}

Test(watchdog_schedule, interval_margin_and_guard)
{
    cr_assert_eq(rl_wd_interval_us(1500), 500 * MS);
    cr_assert_eq(rl_wd_margin_us(1500), 250 * MS);
    cr_assert_eq(rl_wd_guard_at(10000 * MS, 1500), 9750 * MS);
    /* No overflow at the largest TTL. */
    cr_assert_eq(rl_wd_interval_us(INT32_MAX), (int64_t)INT32_MAX * MS / 3);
}

Test(watchdog_schedule, the_tick_window_is_ttl_over_3_give_or_take_10_percent)
{
    lock_times t = times_of(1500, 0.01);
    int64_t lo;
    int64_t hi;
    rl_wd_tick_window(0, t.interval, t.guard, false, &lo, &hi);
    cr_assert_eq(lo, 450 * MS);
    cr_assert_eq(hi, 550 * MS);
    /* Counted from when the last extension started. */
    rl_wd_tick_window(7 * MS, t.interval, 7 * MS + t.guard, false, &lo, &hi);
    cr_assert_eq(lo, 457 * MS);
    cr_assert_eq(hi, 557 * MS);
    /* The draw picks within it, both ends included. */
    cr_assert_eq(rl_wd_tick_at(0, t.interval, t.guard, false, 0), 450 * MS);
    cr_assert_eq(rl_wd_tick_at(0, t.interval, t.guard, false, (uint64_t)(hi - lo)), 550 * MS);
    cr_assert_eq(rl_wd_tick_at(0, t.interval, t.guard, false, (uint64_t)(hi - lo) + 1), 450 * MS);
    cr_assert_eq(rl_wd_tick_at(0, t.interval, t.guard, false, UINT64_MAX) - 450 * MS,
                 (int64_t)(UINT64_MAX % (uint64_t)(hi - lo + 1)));
}

Test(watchdog_schedule, the_first_tick_window_is_a_whole_interval_wide)
{
    /* A burst of acquires is spread over a cycle at once: the first tick
     * anywhere from a tenth of the interval to 1.1 of it, the same end as
     * every later window. */
    lock_times t = times_of(1500, 0.01);
    int64_t lo;
    int64_t hi;
    rl_wd_tick_window(0, t.interval, t.guard, true, &lo, &hi);
    cr_assert_eq(lo, 50 * MS);
    cr_assert_eq(hi, 550 * MS);
    cr_assert_eq(hi - lo, t.interval);
    cr_assert_eq(rl_wd_tick_at(0, t.interval, t.guard, true, 0), 50 * MS);
    cr_assert_eq(rl_wd_tick_at(0, t.interval, t.guard, true, (uint64_t)(hi - lo)), 550 * MS);
    /* Cut at halfway to the guard like the others (a tiny TTL, a large
     * drift factor), never opening after it closes. */
    t = times_of(10, 0.6);
    rl_wd_tick_window(0, t.interval, t.guard, true, &lo, &hi);
    cr_assert_leq(hi, t.guard / 2);
    cr_assert_leq(lo, hi);
}

Test(watchdog_schedule, the_latest_tick_leaves_the_retries_at_least_as_long_before_the_guard)
{
    /* With the default drift factor, the latest tick (1.1 ttl/3 after the
     * last start) is before the guard (ttl - drift - ttl/6) by 0.457 ttl -
     * 2 ms or more: longer than the wait before it once the TTL is 23 ms or
     * more. Shorter TTLs and large drift factors bring the window in to
     * halfway to the guard; it is never past that. */
    static const int64_t ttls[] = {1, 3, 10, 22, 23, 50, 100, 300, 1500, 10000, 60000,
                                   86400000, INT32_MAX};
    static const double drifts[] = {0.0, 0.01, 0.1, 0.3, 0.49, 0.6, 0.99};
    for (size_t i = 0; i < sizeof(ttls) / sizeof(ttls[0]); i++) {
        for (size_t j = 0; j < sizeof(drifts) / sizeof(drifts[0]); j++) {
            lock_times t = times_of(ttls[i], drifts[j]);
            int64_t lo;
            int64_t hi;
            int64_t first_lo;
            int64_t first_hi;
            rl_wd_tick_window(0, t.interval, t.guard, true, &first_lo, &first_hi);
            rl_wd_tick_window(0, t.interval, t.guard, false, &lo, &hi);
            cr_assert_eq(first_hi, hi, "ttl %lld drift %g: the first window ends elsewhere",
                         (long long)t.ttl_ms, drifts[j]);
            cr_assert_leq(first_lo, lo);
            cr_assert_leq(lo, hi, "ttl %lld drift %g", (long long)t.ttl_ms, drifts[j]);
            cr_assert_leq(hi, t.guard / 2, "ttl %lld drift %g: tick %lld, guard %lld",
                          (long long)t.ttl_ms, drifts[j], (long long)hi, (long long)t.guard);
            cr_assert_leq(hi, t.interval + t.interval / 10);
            if (t.guard > 0)
                cr_assert_lt(hi, t.guard, "ttl %lld drift %g", (long long)t.ttl_ms, drifts[j]);
            if (drifts[j] == 0.01 && t.ttl_ms >= 23) {
                cr_assert_eq(hi, t.interval + t.interval / 10, "ttl %lld: the window was cut",
                             (long long)t.ttl_ms);
                cr_assert_eq(lo, t.interval - t.interval / 10);
                cr_assert_geq(t.guard - hi, hi, "ttl %lld", (long long)t.ttl_ms);
                cr_assert_geq(t.guard - hi, t.ttl_ms * MS * 456 / 1000 - 2 * MS,
                              "ttl %lld", (long long)t.ttl_ms);
            }
        }
    }
}

Test(watchdog_schedule, ticks_drawn_from_the_random_source_cover_the_window_evenly)
{
    enum { DRAWS = 10000, BINS = 10 };
    lock_times t = times_of(1500, 0.01);
    int64_t lo;
    int64_t hi;
    rl_wd_tick_window(0, t.interval, t.guard, false, &lo, &hi);
    rl_random_pool pool;
    rl_random_pool_init(&pool);
    unsigned bins[BINS] = {0};
    double sum = 0;
    for (int i = 0; i < DRAWS; i++) {
        int64_t at = rl_wd_tick_at(0, t.interval, t.guard, false, rl_random_pool_word(&pool));
        if (at < lo || at > hi) /* asserted only when false: 10000 asserts are slow */
            cr_assert_fail("tick at %lld, outside [%lld, %lld]", (long long)at, (long long)lo,
                           (long long)hi);
        int bin = (int)((at - lo) * BINS / (hi - lo + 1));
        bins[bin]++;
        sum += (double)at;
    }
    /* 1000 expected in each tenth (standard deviation 30). */
    for (int b = 0; b < BINS; b++)
        cr_assert(bins[b] >= 800 && bins[b] <= 1200, "tenth %d of the window: %u of %d draws", b,
                  bins[b], DRAWS);
    double mean = sum / DRAWS;
    cr_assert(mean > 495 * MS && mean < 505 * MS, "mean tick %.0f us", mean);
}

static const rl_wd_backoff fleet_retry = {.delay_us = 20 * MS, .jitter_us = 20 * MS};

Test(watchdog_schedule, the_first_retry_waits_as_an_acquire_retry_does)
{
    const int64_t cap = 3333 * MS;
    /* retry_delay + 0..retry_jitter, both ends included. */
    cr_assert_eq(rl_wd_backoff_us(&fleet_retry, 1, cap, 0), 20 * MS);
    cr_assert_eq(rl_wd_backoff_us(&fleet_retry, 1, cap, 20 * MS), 40 * MS);
    cr_assert_eq(rl_wd_backoff_us(&fleet_retry, 1, cap, 20 * MS + 1), 20 * MS);
    cr_assert_eq(rl_wd_backoff_us(&fleet_retry, 1, cap, 7 * MS), 27 * MS);
    /* No jitter: the delay alone. Failures 0 counts as the first. */
    rl_wd_backoff fixed = {.delay_us = 200 * MS, .jitter_us = 0};
    cr_assert_eq(rl_wd_backoff_us(&fixed, 1, cap, UINT64_MAX), 200 * MS);
    cr_assert_eq(rl_wd_backoff_us(&fixed, 0, cap, UINT64_MAX), 200 * MS);
    /* At least 10 ms. */
    rl_wd_backoff none = {0};
    cr_assert_eq(rl_wd_backoff_us(&none, 1, cap, 12345), RL_WD_MIN_RETRY_US);
    rl_wd_backoff short_delay = {.delay_us = 2 * MS, .jitter_us = 3 * MS};
    cr_assert_eq(rl_wd_backoff_us(&short_delay, 1, cap, 3 * MS), RL_WD_MIN_RETRY_US);
}

Test(watchdog_schedule, each_failure_in_a_row_doubles_the_wait_up_to_the_interval)
{
    const int64_t cap = 3333 * MS;
    int64_t lo = 20 * MS;
    for (unsigned n = 1; n <= 7; n++, lo *= 2) {
        cr_assert_eq(rl_wd_backoff_us(&fleet_retry, n, cap, 0), lo, "failure %u", n);
        cr_assert_eq(rl_wd_backoff_us(&fleet_retry, n, cap, 20 * MS), 2 * lo, "failure %u", n);
    }
    /* 20 to 40 ms doubled 7 times is 2560 to 5120 ms: capped at the top;
     * doubled 8 times, capped. */
    cr_assert_eq(rl_wd_backoff_us(&fleet_retry, 8, cap, 0), 2560 * MS);
    cr_assert_eq(rl_wd_backoff_us(&fleet_retry, 8, cap, 20 * MS), cap);
    cr_assert_eq(rl_wd_backoff_us(&fleet_retry, 9, cap, 0), cap);
    cr_assert_eq(rl_wd_backoff_us(&fleet_retry, 1000, cap, 0), cap);
    cr_assert_eq(rl_wd_backoff_us(&fleet_retry, UINT_MAX, cap, UINT64_MAX), cap);
    /* The 10 ms floor doubles too. */
    rl_wd_backoff none = {0};
    cr_assert_eq(rl_wd_backoff_us(&none, 3, cap, 0), 4 * RL_WD_MIN_RETRY_US);
    /* The largest settings, and a cap below the floor (a TTL under 30 ms):
     * the cap wins. */
    rl_wd_backoff largest = {.delay_us = 3600000LL * MS, .jitter_us = 3600000LL * MS};
    cr_assert_eq(rl_wd_backoff_us(&largest, UINT_MAX, INT64_MAX, UINT64_MAX), INT64_MAX);
    cr_assert_eq(rl_wd_backoff_us(&largest, 1, cap, 0), cap);
    cr_assert_eq(rl_wd_backoff_us(&fleet_retry, 1, 5 * MS, 0), 5 * MS);
}

Test(watchdog_schedule, a_retry_is_never_later_than_a_command_timeout_before_the_guard)
{
    const int64_t guard = 5000 * MS;
    const int64_t reserve = 100 * MS;
    /* Well before: after the wait. */
    cr_assert_eq(rl_wd_retry_at(1000 * MS, 300 * MS, guard, reserve), 1300 * MS);
    /* A wait past the last point: at it. */
    cr_assert_eq(rl_wd_retry_at(4000 * MS, 2000 * MS, guard, reserve), 4900 * MS);
    cr_assert_eq(rl_wd_retry_at(4890 * MS, 2000 * MS, guard, reserve), 4900 * MS);
    /* Closer than the minimum wait to it, or past it: a retry still before
     * the guard, else none. */
    cr_assert_eq(rl_wd_retry_at(4891 * MS, 50 * MS, guard, reserve), 4941 * MS);
    cr_assert_eq(rl_wd_retry_at(4950 * MS, 49 * MS, guard, reserve), 4999 * MS);
    cr_assert_eq(rl_wd_retry_at(4950 * MS, 50 * MS, guard, reserve), RL_WD_NEVER);
    cr_assert_eq(rl_wd_retry_at(4950 * MS, 2000 * MS, guard, reserve), RL_WD_NEVER);
    cr_assert_eq(rl_wd_retry_at(6000 * MS, 10 * MS, guard, reserve), RL_WD_NEVER);
    /* A reserve longer than what is left (a command timeout near the TTL). */
    cr_assert_eq(rl_wd_retry_at(0, 20 * MS, 100 * MS, 200 * MS), 20 * MS);
    cr_assert_eq(rl_wd_retry_at(0, 100 * MS, 100 * MS, 200 * MS), RL_WD_NEVER);
}

Test(watchdog_schedule, retries_drawn_at_random_stay_before_the_guard)
{
    rl_random_pool pool;
    rl_random_pool_init(&pool);
    for (int i = 0; i < 100000; i++) {
        int64_t now = (int64_t)(rl_random_pool_word(&pool) % (20000 * MS));
        int64_t wait = RL_WD_MIN_RETRY_US + (int64_t)(rl_random_pool_word(&pool) % (5000 * MS));
        int64_t guard = (int64_t)(rl_random_pool_word(&pool) % (20000 * MS));
        int64_t reserve = 1 * MS + (int64_t)(rl_random_pool_word(&pool) % (1000 * MS));
        int64_t at = rl_wd_retry_at(now, wait, guard, reserve);
        bool past_last = now + RL_WD_MIN_RETRY_US > guard - reserve;
        bool right;
        if (at == RL_WD_NEVER) /* only past the last point, when the wait reaches the guard */
            right = past_last && now + wait >= guard;
        else /* before the guard, after the minimum wait, no later than the wait */
            right = at < guard && at >= now + RL_WD_MIN_RETRY_US && at <= now + wait &&
                    (past_last || at <= guard - reserve);
        if (!right) /* asserted only when false: 100000 asserts are slow */
            cr_assert_fail("now %lld wait %lld guard %lld reserve %lld: at %lld", (long long)now,
                           (long long)wait, (long long)guard, (long long)reserve, (long long)at);
    }
}

Test(watchdog_schedule, a_lock_whose_extensions_all_fail_backs_off_until_a_last_attempt)
{
    /* The defaults (ttl 10 s, retry_delay 200 ms + 0..100 ms, command
     * timeout 50 ms), every attempt timing out: each retry waits about
     * twice as long as the one before, the last goes out a command timeout
     * before the guard, and none after. */
    const rl_wd_backoff defaults = {.delay_us = 200 * MS, .jitter_us = 100 * MS};
    const int64_t timeout = 50 * MS;
    rl_random_pool pool;
    rl_random_pool_init(&pool);
    for (int run = 0; run < 1000; run++) {
        lock_times t = times_of(10000, 0.01);
        int64_t start = rl_wd_tick_at(0, t.interval, t.guard, false, rl_random_pool_word(&pool));
        int64_t starts[32] = {0};
        int count = 0;
        for (unsigned failures = 1; start != RL_WD_NEVER; failures++) {
            if (count == 32)
                cr_assert_fail("more than 32 attempts");
            starts[count++] = start;
            int64_t now = start + timeout; /* it failed */
            int64_t wait = rl_wd_backoff_us(&defaults, failures, t.interval,
                                            rl_random_pool_word(&pool));
            start = rl_wd_retry_at(now, wait, t.guard, timeout);
        }
        /* Ticks at 3000-3667 ms, the guard at 8231 ms: 5 or 6 attempts
         * (without backoff some 20), the last one just in time. */
        int64_t last = count > 0 ? starts[count - 1] : 0;
        if (count < 5 || count > 6 || last > t.guard - timeout ||
            last <= t.guard - 2 * timeout - RL_WD_MIN_RETRY_US)
            cr_assert_fail("%d attempts, the last at %lld us, the guard at %lld us", count,
                           (long long)last, (long long)t.guard);
        for (int k = 2; k < count - 1; k++) {
            int64_t before = starts[k - 1] - starts[k - 2] - timeout;
            int64_t wait = starts[k] - starts[k - 1] - timeout;
            /* 2^(n-1) (200..300 ms): the next wait is at least 4/3 of the
             * last, until the interval caps it. */
            if (wait * 3 < before * 4 && wait != t.interval)
                cr_assert_fail("attempt %d waited %lld us, after %lld us", k, (long long)wait,
                               (long long)before);
        }
    }
}

/* The smallest TTL kept: from the latest regular tick to the guard, at
 * least RL_WD_MIN_RETRY_US; one millisecond less has less. */
Test(watchdog_schedule, the_smallest_ttl_kept_leaves_a_round_trip_before_the_guard)
{
    static const double factors[] = {0, 0.01, 0.1, 0.4};
    for (size_t k = 0; k < sizeof(factors) / sizeof(factors[0]); k++) {
        int64_t min = rl_wd_min_ttl_ms(rl_drift_us, factors[k], 3600000);
        cr_assert_gt(min, 1, "drift factor %g", factors[k]);
        for (int64_t ttl = min - 1; ttl <= min; ttl++) {
            lock_times t = times_of(ttl, factors[k]);
            int64_t lo;
            int64_t hi;
            rl_wd_tick_window(0, t.interval, t.guard, false, &lo, &hi);
            cr_assert_eq(t.guard - hi >= RL_WD_MIN_RETRY_US, ttl == min,
                         "drift factor %g, ttl %lld ms: %lld us from the tick to the guard",
                         factors[k], (long long)ttl, (long long)(t.guard - hi));
        }
    }
    cr_assert_eq(rl_wd_min_ttl_ms(rl_drift_us, 0.01, 3600000), 27);
    /* No TTL is kept when the drift allowance and the guard's sixth take
     * it all. */
    cr_assert_eq(rl_wd_min_ttl_ms(rl_drift_us, 0.9, 3600000), -1);
}
