/* SPDX-License-Identifier: BSD-3-Clause */
/* Masters' clocks checked through the client's probes (docs/safety.md,
 * "Masters' clocks"): masters on fake wall clocks (fleet.h), the client's
 * verdicts seen in its log. */
#include "harness.h"

#include <criterion/criterion.h>
#include <string.h>

static harness h;

static void stop(void)
{
    harness_stop(&h);
}

/* The log line about master i proving it fast, if any. */
static bool logged_fast(harness *hh, void *arg)
{
    size_t i = *(const size_t *)arg;
    char needle[96];
    snprintf(needle, sizeof(needle), "master 127.0.0.1:%d: expiry clock advanced",
             fleet_port(hh->fleet, i));
    return hh->log != NULL && strstr(hh->log, needle) != NULL;
}

/* Keys named redlock:clock:* on master i. */
static long long probes_on(size_t i)
{
    redisReply *r = fleet_command(h.fleet, i, "KEYS redlock:clock:*");
    cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY);
    long long n = (long long)r->elements;
    freeReplyObject(r);
    return n;
}

Test(clock, masters_three_times_fast_are_proven_fast_and_honest_ones_never, .fini = stop,
     .timeout = 60)
{
    static const char *const clocks[] = {"+0", "+0", "+0", "+0 x3", "+0 x3"};
    fleet_options opts = {.faketime = clocks};
    harness_start(&h, 5, &opts);
    harness_connect(&h);
    for (size_t i = 3; i < 5; i++)
        cr_assert(harness_wait_until(&h, logged_fast, &i, (int)fleet_scaled_ms(500)),
                  "master %zu (x3) not proven fast in 0.5 s; log:\n%s", i, h.log ? h.log : "");
    harness_run_for(&h, 1500); /* more samples of the honest ones, idle */
    for (size_t i = 0; i < 3; i++)
        cr_assert(!logged_fast(&h, &i), "honest master %zu proven fast; log:\n%s", i, h.log);
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(probes_on(i), 1, "master %zu: no probe, or more than one", i);
    harness_free_client(&h);
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(probes_on(i), 0, "master %zu: the probe outlived the client", i);
}

/* Every master: whether key is there. */
static size_t masters_with(const char *key)
{
    size_t n = 0;
    for (size_t i = 0; i < 5; i++)
        if (fleet_pttl(h.fleet, i, key, strlen(key)) != -2)
            n++;
    return n;
}

Test(clock, an_ok_from_a_fast_master_does_not_count_toward_the_quorum, .fini = stop,
     .timeout = 60)
{
    static const char *const clocks[] = {"+0", "+0", "+0", "+0 x3", "+0 x3"};
    fleet_options opts = {.faketime = clocks};
    harness_start(&h, 5, &opts);
    harness_connect(&h);
    for (size_t i = 3; i < 5; i++)
        cr_assert(harness_wait_until(&h, logged_fast, &i, (int)fleet_scaled_ms(500)));

    /* The three honest masters make a quorum alone. */
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    cr_assert_eq(harness_acquire(&h, "r1", 2, NULL, &lock, &r), REDLOCK_OK);
    for (size_t i = 3; i < 5; i++) /* or no answer yet when three decided it */
        cr_expect(r->masters[i].outcome == REDLOCK_MASTER_CLOCK ||
                      r->masters[i].outcome == REDLOCK_MASTER_PENDING,
                  "master %zu: %s", i, redlock_master_outcome_name(r->masters[i].outcome));
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);

    /* One honest master stopped: two honest and two fast said yes, which
     * would have been a quorum. */
    cr_assert_eq(fleet_pause(h.fleet, 0), 0);
    r = NULL;
    lock = NULL;
    int status = harness_acquire(&h, "r2", 2, NULL, &lock, &r);
    cr_assert_eq(status, REDLOCK_ECLOCK, "acquire: %s", redlock_status_name(status));
    cr_assert_null(lock);
    redlock_result_free(r);
    cr_assert_eq(fleet_resume(h.fleet, 0), 0);
    harness_run_for(&h, 200);
    cr_assert_eq(masters_with("r2"), 0, "the failed acquire left its key");
}
