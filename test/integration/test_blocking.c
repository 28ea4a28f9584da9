/* SPDX-License-Identifier: BSD-3-Clause */
/* The blocking wrappers' guard (tool/blocking.c), which turns an operation
 * that takes too long into a failure: it returns, and the operation, when
 * it completes later, cleans up after itself (valgrind checks no leak). */
#include "blocking.h"
#include "harness.h"

#include <criterion/criterion.h>

static harness h;

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(blocking, .fini = teardown, .timeout = 60);

Test(blocking, a_guard_returns_before_a_slow_operation_which_cleans_up_when_it_ends)
{
    harness_start(&h, 3, NULL);
    /* A command timeout far above the guard; the TTL far above both (a
     * config whose timeouts reach its TTL is refused). */
    int64_t slow_ms = fleet_scaled_ms(1500);
    int64_t ttl_ms = 20 * slow_ms;
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, slow_ms), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_TTL_MS, ttl_ms), REDLOCK_OK);
    harness_connect(&h);
    cr_assert_eq(harness_ping(&h, NULL), REDLOCK_OK, "connected");
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_pause(h.fleet, i), 0);

    blocking_ctx ctx = {.loop = h.loop, .client = h.client, .guard_s = 0.2};
    redlock_acquire_options o = fleet_acquire_options(ttl_ms, 0);
    redlock_lock *lock = (redlock_lock *)&ctx; /* must be reset */
    redlock_result *r = (redlock_result *)&ctx;
    double start = tc_now_ms();
    cr_assert_eq(blocking_acquire(&ctx, "slow", 4, &o, &lock, &r), BLOCKING_GUARD_EXPIRED);
    double waited = tc_now_ms() - start;
    cr_assert_null(lock);
    cr_assert_null(r);
    cr_assert(waited >= 190 && waited < (double)slow_ms, "waited %.0f ms", waited);

    /* The masters answer again: the acquire completes, takes the lock,
     * and, as nobody waits for it, gives it back. */
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_resume(h.fleet, i), 0);
    cr_assert(harness_wait_key_gone(&h, "slow", 4, 2000), "the late lock is released");
    /* The key may be checked gone on a master before the late SET waiting
     * in its socket ran: a new acquire waits (bounded) for the release. */
    redlock_acquire_options again = o;
    again.retry_count = 1000; /* bounded by wait_ms */
    again.wait_ms = fleet_scaled_ms(2000);
    int rc = harness_acquire(&h, "slow", 4, &again, NULL, NULL);
    cr_assert_eq(rc, REDLOCK_OK, "free again: %s", redlock_status_name(rc));
}
