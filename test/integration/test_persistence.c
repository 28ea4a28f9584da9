/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Why the persistence rule exists: a master that crashes and comes back
 * without the keys it held can hand a live lock to a second holder. One
 * scenario, three ways of restarting the crashed master:
 *
 *   masters 3 and 4 are down; A takes the lock on 0, 1, 2 (a bare
 *   majority); master 0 crashes (kill -9) and comes back; 3 and 4 come back
 *   (empty: they never had A's key); B tries to take the lock.
 *
 * - unsafe, 0 restarted at once without persistence: B gets 0, 3, 4 while A
 *   still holds: two holders. This test expects exactly that.
 * - 0 restarted at once with AOF (appendfsync always): 0 remembers A's key;
 *   B gets the lock only after A's validity has ended.
 * - 0 restarted without persistence, but only after the longest TTL
 *   (delayed restart): the same.
 */
#include "harness.h"

#include <criterion/criterion.h>
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

TestSuite(persistence_rule, .init = five_masters, .fini = teardown, .timeout = 90);

#define TTL_MS 3000

typedef enum restart_policy { RESTART_AT_ONCE, RESTART_WITH_AOF, RESTART_DELAYED } restart_policy;

typedef struct outcome {
    bool b_acquired;
    int64_t a_validity_when_b_got_it_ms; /* A's validity left at that moment */
} outcome;

/* B tries once every 100 ms until it has the lock or limit_ms passed. */
static outcome second_holder(redlock_lock *a_lock, int limit_ms)
{
    outcome out = {false, 0};
    redlock_client *b = NULL;
    cr_assert_eq(redlock_client_new(&b, h.cfg, h.loop), REDLOCK_OK);
    redlock_client *a = h.client;
    h.client = b; /* the harness's blocking helpers act on h.client */
    redlock_acquire_options o = fleet_acquire_options(TTL_MS, 0);
    double deadline = tc_now_ms() + limit_ms;
    while (tc_now_ms() < deadline) {
        redlock_lock *b_lock = NULL;
        if (harness_acquire(&h, "shared", 6, &o, &b_lock, NULL) == REDLOCK_OK) {
            out.b_acquired = true;
            out.a_validity_when_b_got_it_ms = redlock_lock_validity_ms(a_lock);
            redlock_lock_free(b_lock);
            break;
        }
        harness_run_for(&h, 100);
    }
    /* A's client shares the loop, so the loop never goes idle: give B's
     * closing a moment instead (its command timeout is 100 ms). */
    redlock_client_free(b);
    h.client = a;
    harness_run_for(&h, 300);
    return out;
}

static outcome crash_and_restart(restart_policy policy)
{
    if (policy == RESTART_WITH_AOF) {
        cr_assert_eq(fleet_set_appendonly(h.fleet, 0, 1), 0);
        cr_assert_eq(fleet_restart(h.fleet, 0), 0);
    }
    cr_assert_eq(fleet_kill(h.fleet, 3), 0);
    cr_assert_eq(fleet_kill(h.fleet, 4), 0);
    harness_connect(&h);
    redlock_lock *a_lock = NULL;
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(TTL_MS, 0);
    cr_assert_eq(harness_acquire(&h, "shared", 6, &o, &a_lock, &r), REDLOCK_OK);
    cr_assert_eq(r->masters_locked, 3, "A should hold exactly masters 0, 1, 2");
    redlock_result_free(r);

    cr_assert_eq(fleet_kill(h.fleet, 0), 0);
    if (policy == RESTART_DELAYED) {
        /* Out for longer than the longest TTL: every key it had is gone
         * everywhere by the time it answers again. */
        harness_run_for(&h, TTL_MS + 200);
    }
    cr_assert_eq(fleet_restart(h.fleet, 0), 0);
    cr_assert_eq(fleet_restart(h.fleet, 3), 0);
    cr_assert_eq(fleet_restart(h.fleet, 4), 0);
    outcome out = second_holder(a_lock, TTL_MS + 2000);
    redlock_lock_free(a_lock);
    return out;
}

Test(persistence_rule, an_immediate_restart_without_persistence_gives_two_holders)
{
    outcome out = crash_and_restart(RESTART_AT_ONCE);
    cr_assert(out.b_acquired, "B never got the lock");
    cr_assert_gt(out.a_validity_when_b_got_it_ms, 0,
                 "expected B to get the lock while A still held it (the violation this "
                 "rule exists for); A had %lld ms left",
                 (long long)out.a_validity_when_b_got_it_ms);
}

Test(persistence_rule, an_immediate_restart_with_aof_keeps_the_lock_exclusive)
{
    outcome out = crash_and_restart(RESTART_WITH_AOF);
    cr_assert(out.b_acquired, "B should get the lock once A's expired");
    cr_assert_leq(out.a_validity_when_b_got_it_ms, 0,
                  "B got the lock while A held it for %lld ms more",
                  (long long)out.a_validity_when_b_got_it_ms);
}

Test(persistence_rule, a_delayed_restart_keeps_the_lock_exclusive)
{
    outcome out = crash_and_restart(RESTART_DELAYED);
    cr_assert(out.b_acquired, "B should get the lock once A's expired");
    cr_assert_leq(out.a_validity_when_b_got_it_ms, 0,
                  "B got the lock while A held it for %lld ms more",
                  (long long)out.a_validity_when_b_got_it_ms);
}
