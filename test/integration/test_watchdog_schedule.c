/* SPDX-License-Identifier: BSD-3-Clause */
/* Auto-extension's schedule against real masters: many locks acquired in
 * one burst are extended spread over a window, not in the same burst every
 * cycle; failed extensions back off. */
#include "harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static harness h;

static void five_masters(void)
{
    harness_start(&h, 5, NULL);
}

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(watchdog_schedule, .init = five_masters, .fini = teardown, .timeout = 120);

/* ---- Spread ------------------------------------------------------------ */

enum { SPREAD_LOCKS = 300, SPREAD_CYCLES = 3 };

/* One lock's deadlines as the test saw them: [0] after the acquire, then
 * one per extension. A lock's deadline is its extension's start plus the
 * same TTL less drift, so deadlines are as far apart as extension starts. */
typedef struct sampled_lock {
    redlock_lock *lock;
    int acquired; /* 0 pending, 1 held, -1 failed */
    double deadlines_ms[SPREAD_CYCLES + 1];
    int extensions;
} sampled_lock;

typedef struct spread_run {
    sampled_lock locks[SPREAD_LOCKS];
    int pending;
    int losses;
    double interval_ms; /* ttl/3 */
} spread_run;

static void on_spread_acquired(int status, redlock_lock *lock, const redlock_result *result,
                               void *arg)
{
    (void)result;
    sampled_lock *s = arg;
    s->lock = lock;
    s->acquired = status == REDLOCK_OK ? 1 : -1;
}

static bool all_acquired(harness *hh, void *arg)
{
    (void)hh;
    spread_run *run = arg;
    for (int i = 0; i < SPREAD_LOCKS; i++)
        if (run->locks[i].acquired == 0)
            return false;
    return true;
}

static void count_loss(int status, redlock_lock *lock, void *arg)
{
    (void)status;
    (void)lock;
    ((spread_run *)arg)->losses++;
}

/* Every 2 ms: each lock's deadline (now + validity, to the millisecond);
 * one that moved up by more than a fourth of the interval was extended. */
static void sample_deadlines(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    spread_run *run = w->data;
    for (int i = 0; i < SPREAD_LOCKS; i++) {
        sampled_lock *s = &run->locks[i];
        if (s->extensions >= SPREAD_CYCLES)
            continue;
        double deadline = tc_now_ms() + (double)redlock_lock_validity_ms(s->lock);
        if (deadline > s->deadlines_ms[s->extensions] + run->interval_ms / 4)
            s->deadlines_ms[++s->extensions] = deadline;
    }
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Every lock extended SPREAD_CYCLES times, or one lost (a failure). */
static bool all_extended(harness *hh, void *arg)
{
    (void)hh;
    spread_run *run = arg;
    if (run->losses > 0)
        return true;
    for (int i = 0; i < SPREAD_LOCKS; i++)
        if (run->locks[i].extensions < SPREAD_CYCLES)
            return false;
    return true;
}

/* How far apart the cycle's extensions (or the acquires, cycle 0) are:
 * the latest deadline less the earliest. */
static double cycle_spread(const spread_run *run, int cycle)
{
    double lo = run->locks[0].deadlines_ms[cycle];
    double hi = lo;
    for (int i = 1; i < SPREAD_LOCKS; i++) {
        double d = run->locks[i].deadlines_ms[cycle];
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
    }
    return hi - lo;
}

Test(watchdog_schedule, locks_taken_in_a_burst_are_extended_spread_over_a_window)
{
    /* 300 locks acquired at once and auto-extended: each extension is due a
     * third of the TTL after the last, give or take 10 %, drawn anew each
     * time, and the first anywhere from a tenth of that to 1.1 of it. The
     * gaps between one lock's later extensions vary over their window
     * (never shorter than 0.9 of the interval; a busy loop may make them
     * longer, never shorter), and the extensions of each cycle, which all
     * came in the acquires' burst, spread over much of an interval from
     * the first cycle on. */
    static spread_run run; /* 300 locks' samples: not on the stack */
    memset(&run, 0, sizeof(run));
    int64_t ttl_ms = fleet_scaled_ms(1500);
    run.interval_ms = (double)ttl_ms / 3;
    double window_ms = run.interval_ms / 5; /* [0.9, 1.1] of the interval */
    harness_connect(&h);
    redlock_acquire_options o = fleet_acquire_options(ttl_ms, 3);
    for (int i = 0; i < SPREAD_LOCKS; i++) {
        char name[32];
        int len = snprintf(name, sizeof(name), "spread-%d", i);
        cr_assert_eq(redlock_acquire_async(h.client, name, (size_t)len, &o, on_spread_acquired,
                                           &run.locks[i]),
                     REDLOCK_OK);
    }
    cr_assert(harness_wait_until(&h, all_acquired, &run, 10000), "the acquires never completed");
    for (int i = 0; i < SPREAD_LOCKS; i++) {
        sampled_lock *s = &run.locks[i];
        cr_assert_eq(s->acquired, 1, "lock %d not acquired", i);
        s->deadlines_ms[0] = tc_now_ms() + (double)redlock_lock_validity_ms(s->lock);
        cr_assert_eq(redlock_auto_extend_async(h.client, s->lock, count_loss, &run), REDLOCK_OK);
    }
    ev_timer sampler;
    ev_timer_init(&sampler, sample_deadlines, 0.002, 0.002);
    sampler.data = &run;
    ev_timer_start(h.loop, &sampler);
    bool extended = harness_wait_until(&h, all_extended, &run, 1500 * (SPREAD_CYCLES + 2));
    ev_timer_stop(h.loop, &sampler);
    cr_assert_eq(run.losses, 0, "%d locks lost", run.losses);
    cr_assert(extended, "not every lock was extended %d times", SPREAD_CYCLES);

    /* Each gap between two later extensions of a lock; the first, from the
     * acquire, may be as short as a tenth of the interval. */
    static double all_gaps[SPREAD_LOCKS * (SPREAD_CYCLES - 1)];
    int gaps = 0;
    double shortest = 1e9;
    double shortest_first = 1e9;
    for (int i = 0; i < SPREAD_LOCKS; i++) {
        const double *first = run.locks[i].deadlines_ms;
        if (first[1] - first[0] < shortest_first)
            shortest_first = first[1] - first[0];
        for (int k = 2; k <= SPREAD_CYCLES; k++) {
            const double *d = run.locks[i].deadlines_ms;
            double gap = d[k] - d[k - 1];
            all_gaps[gaps++] = gap;
            shortest = gap < shortest ? gap : shortest;
        }
    }
    /* The spread is judged around the median gap, not the interval: each
     * deadline counts from its extension's start, which comes a round's
     * latency after the last one's end, so a slow run (ASan on a slow
     * machine: 20 of 600 gaps below the interval's first fourth, 295 above
     * its last) shifts every gap alike without narrowing the spread. */
    qsort(all_gaps, (size_t)gaps, sizeof(all_gaps[0]), by_value);
    double median = all_gaps[gaps / 2];
    int early = 0; /* within the first fourth of the window */
    int late = 0;  /* within the last fourth */
    for (int g = 0; g < gaps; g++) {
        early += all_gaps[g] < median - window_ms / 4;
        late += all_gaps[g] > median + window_ms / 4;
    }
    /* Deadlines are seen to the millisecond: 2 ms of slack. */
    cr_assert_geq(shortest, run.interval_ms * 0.9 - 2, "an extension %.1f ms after the last",
                  shortest);
    cr_assert_geq(shortest_first, run.interval_ms * 0.1 - 2,
                  "a first extension %.1f ms after the acquire", shortest_first);
    /* Uniform over the window: about a fourth of the gaps in each end
     * (failing by chance needs fewer than a tenth of 600). */
    cr_assert(early >= gaps / 10 && late >= gaps / 10,
              "of %d gaps between extensions (interval %.0f ms, median %.1f ms), %d shorter "
              "than %.0f ms and %d longer than %.0f ms: not spread over the window",
              gaps, run.interval_ms, median, early, median - window_ms / 4, late,
              median + window_ms / 4);
    /* The extensions of each cycle, the first included, spread over much
     * of an interval, whatever the acquires' burst was (here about 10 ms).
     * Not most of it: a loop held up early in the first cycle (ASan, both
     * cores busy) runs the extensions due meanwhile late and together,
     * and narrowed the first cycle to 282 ms of 500 once. */
    for (int k = 1; k <= SPREAD_CYCLES; k++) {
        double spread = cycle_spread(&run, k);
        cr_assert_geq(spread, 0.4 * run.interval_ms,
                      "cycle %d: extensions %.1f ms apart (the acquires %.1f ms), the interval "
                      "%.0f ms",
                      k, spread, cycle_spread(&run, 0), run.interval_ms);
    }

    harness_free_client(&h); /* releases them all */
    for (int i = 0; i < SPREAD_LOCKS; i++)
        redlock_lock_free(run.locks[i].lock);
}

/* ---- Backoff ----------------------------------------------------------- */

enum { MAX_ATTEMPTS = 64 };

/* Each failed extension's end, from its log line. */
typedef struct attempts {
    double at_ms[MAX_ATTEMPTS];
    int count;
    int lost_status;
    int lost;
    int64_t validity_at_loss_ms;
} attempts;

static attempts seen;

static void record_failed_extend(harness *hh, const char *message)
{
    (void)hh;
    if (strncmp(message, "extend backed: ", 15) == 0 && strstr(message, "success") == NULL &&
        seen.count < MAX_ATTEMPTS)
        seen.at_ms[seen.count++] = tc_now_ms();
}

static void record_backoff_loss(int status, redlock_lock *lock, void *arg)
{
    (void)arg;
    seen.lost++;
    seen.lost_status = status;
    seen.validity_at_loss_ms = redlock_lock_validity_ms(lock);
}

static bool backoff_lost(harness *hh, void *arg)
{
    (void)hh;
    (void)arg;
    return seen.lost > 0;
}

Test(watchdog_schedule, failed_extensions_back_off_until_the_guard_gives_the_lock_up)
{
    /* A majority stopped: every extension times out. Each retry waits
     * twice as long as the one before (retry_delay_ms + 0..retry_jitter_ms
     * at first), yet one still goes out before the guard, which gives the
     * lock up while some validity remains. */
    memset(&seen, 0, sizeof(seen));
    int64_t delay_ms = fleet_scaled_ms(50);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RETRY_DELAY_MS, delay_ms), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RETRY_JITTER_MS, delay_ms), REDLOCK_OK);
    harness_connect(&h);
    int64_t ttl_ms = fleet_scaled_ms(6000);
    redlock_lock *lock = NULL;
    redlock_acquire_options o = fleet_acquire_options(ttl_ms, 0);
    cr_assert_eq(harness_acquire(&h, "backed", 6, &o, &lock, NULL), REDLOCK_OK);
    h.on_log = record_failed_extend;
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, record_backoff_loss, NULL), REDLOCK_OK);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_pause(h.fleet, i), 0);
    cr_assert(harness_wait_until(&h, backoff_lost, NULL, 12000), "never told the lock was lost");
    h.on_log = NULL;
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_resume(h.fleet, i), 0);

    cr_assert_eq(seen.lost, 1);
    cr_assert(seen.lost_status == REDLOCK_ENOQUORUM, "lost with %s",
              redlock_status_name(seen.lost_status));
    cr_assert_gt(seen.validity_at_loss_ms, 0, "told too late");
    cr_assert_leq(seen.validity_at_loss_ms, ttl_ms / 6 + 10);
    /* From the first failure (a third of the TTL in, give or take 10 %) to
     * the guard (a sixth before the end) there are 2700 ms or more. Each
     * attempt fails after the command timeout (100 ms); the retries wait
     * 50-100, 100-200, 200-400, 400-800 ms, then the last goes out a
     * command timeout before the guard: 6 attempts, 150-200 ms apart at
     * first, 500-900 ms later. Without backoff: some 15, 150-200 ms apart.
     * A busy machine only makes fewer, further apart. */
    char shown[512] = "";
    size_t used = 0;
    double largest = 0;
    for (int k = 1; k < seen.count; k++) {
        double gap = seen.at_ms[k] - seen.at_ms[k - 1];
        largest = gap > largest ? gap : largest;
        if (used < sizeof(shown))
            used += (size_t)snprintf(shown + used, sizeof(shown) - used, " %.0f", gap);
    }
    cr_assert(seen.count >= 4 && seen.count <= 8,
              "%d failed extensions before the loss (gaps in ms:%s)", seen.count, shown);
    double first = seen.at_ms[1] - seen.at_ms[0];
    cr_assert_geq(largest, 2 * first, "the gaps between attempts did not grow (ms:%s)", shown);
    redlock_lock_free(lock);
}
