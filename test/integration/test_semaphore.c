/* SPDX-License-Identifier: BSD-3-Clause */
/* Counting semaphores (docs/design.md, "Semaphores"): at most K holders of
 * a resource, each on a slot of its own, as model/semaphore.pml
 * specifies, against real masters with faults injected. */
#include "harness.h"

#include <criterion/criterion.h>
#include <string.h>
#include <time.h>

#define RES "builds"

static harness h;

static void stop(void)
{
    harness_stop(&h);
}

TestSuite(semaphore, .fini = stop, .timeout = 90);

static redlock_acquire_options slots_options(int slots, int64_t retries)
{
    redlock_acquire_options o = fleet_acquire_options(fleet_scaled_ms(10000), retries);
    o.slots = slots;
    return o;
}

/* The key a holder's handle names: its slot. */
static const char *slot_of(const redlock_lock *lock)
{
    static char key[64];
    size_t len = 0;
    const char *k = redlock_lock_resource(lock, &len);
    cr_assert(k != NULL && len < sizeof(key));
    memcpy(key, k, len);
    key[len] = '\0';
    return key;
}

/* Three masters, and both slots of a semaphore of two taken, in order. */
static void fill_two_slots(redlock_lock **a, redlock_lock **b)
{
    harness_start(&h, 3, NULL);
    harness_connect(&h);
    redlock_acquire_options o = slots_options(2, 0);
    cr_assert_eq(harness_acquire(&h, RES, strlen(RES), &o, a, NULL), REDLOCK_OK);
    cr_assert_str_eq(slot_of(*a), RES ":slot:0");
    cr_assert_eq(harness_acquire(&h, RES, strlen(RES), &o, b, NULL), REDLOCK_OK);
    cr_assert_str_eq(slot_of(*b), RES ":slot:1");
}

Test(semaphore, k_holders_at_once_and_not_one_more)
{
    redlock_lock *a = NULL;
    redlock_lock *b = NULL;
    redlock_lock *c = NULL;
    fill_two_slots(&a, &b);
    redlock_acquire_options o = slots_options(2, 0);
    redlock_result *r = NULL;
    cr_assert_eq(harness_acquire(&h, RES, strlen(RES), &o, &c, &r), REDLOCK_ECONFLICT);
    cr_assert_eq(r->attempts, 2, "one attempt a slot, not %u", r->attempts);
    redlock_result_free(r);
    /* Every slot's keys are the holders': nothing left of the refusals. */
    for (size_t i = 0; i < 3; i++) {
        cr_expect_gt(fleet_pttl(h.fleet, i, RES ":slot:0", strlen(RES ":slot:0")), 0);
        cr_expect_gt(fleet_pttl(h.fleet, i, RES ":slot:1", strlen(RES ":slot:1")), 0);
        cr_expect_eq(fleet_pttl(h.fleet, i, RES, strlen(RES)), -2, "the resource's own key");
    }
    /* A slot freed is the next holder's. */
    cr_assert_eq(harness_release(&h, a, NULL), REDLOCK_OK);
    redlock_lock_free(a);
    cr_assert_eq(harness_acquire(&h, RES, strlen(RES), &o, &c, NULL), REDLOCK_OK);
    cr_assert_str_eq(slot_of(c), RES ":slot:0");
    cr_assert_eq(harness_release(&h, b, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, c, NULL), REDLOCK_OK);
    redlock_lock_free(b);
    redlock_lock_free(c);
}

/* K + 1 contenders on K slots with a master stopped (a minority): K hold,
 * the last is refused, and a slot's lock auto-extends like any lock. */
Test(semaphore, k_plus_one_contenders_with_a_master_stopped)
{
    harness_start(&h, 5, NULL);
    harness_connect(&h);
    cr_assert_eq(harness_ping(&h, NULL), REDLOCK_OK);
    cr_assert_eq(fleet_pause(h.fleet, 4), 0);
    redlock_acquire_options o = slots_options(3, 0);
    o.ttl_ms = fleet_scaled_ms(1000);
    redlock_lock *held[4] = {NULL, NULL, NULL, NULL};
    int granted = 0;
    for (size_t i = 0; i < 4; i++) {
        int status = harness_acquire(&h, RES, strlen(RES), &o, &held[i], NULL);
        cr_assert(status == REDLOCK_OK || status == REDLOCK_ECONFLICT, "contender %zu: %s", i,
                  redlock_strerror(status));
        granted += status == REDLOCK_OK;
    }
    cr_assert_eq(granted, 3, "%d of 4 contenders hold 3 slots", granted);
    cr_assert_null(held[3]);
    /* Past three TTLs, auto-extended: still held, and still full. */
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(redlock_auto_extend_async(h.client, held[i], NULL, NULL), REDLOCK_OK);
    harness_run_for(&h, (int)(3 * o.ttl_ms));
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(redlock_lock_state(held[i]), REDLOCK_LOCK_HELD, "holder %zu", i);
    redlock_lock *late = NULL;
    cr_assert_eq(harness_acquire(&h, RES, strlen(RES), &o, &late, NULL), REDLOCK_ECONFLICT);
    cr_assert_eq(fleet_resume(h.fleet, 4), 0);
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(harness_release(&h, held[i], NULL), REDLOCK_OK);
        redlock_lock_free(held[i]);
    }
}

typedef struct outcome {
    bool called;
    int status;
    redlock_lock *lock;
    struct timespec at;
} outcome;

static void on_acquired(int status, redlock_lock *lock, const redlock_result *r, void *arg)
{
    (void)r;
    outcome *o = arg;
    o->called = true;
    o->status = status;
    o->lock = lock;
    clock_gettime(CLOCK_MONOTONIC, &o->at);
}

static bool acquired(harness *hh, void *arg)
{
    (void)hh;
    return ((outcome *)arg)->called;
}

/* A waiter on a full semaphore hears the release of any slot, not only
 * the last it tried: it takes the slot freed long before its timed retry. */
Test(semaphore, a_waiter_takes_a_slot_freed_at_once)
{
    redlock_lock *a = NULL;
    redlock_lock *b = NULL;
    fill_two_slots(&a, &b);
    redlock_acquire_options wait = slots_options(2, 10);
    wait.retry_delay_ms = fleet_scaled_ms(5000);
    wait.retry_jitter_ms = 0;
    outcome w = {0};
    cr_assert_eq(redlock_acquire_async(h.client, RES, strlen(RES), &wait, on_acquired, &w),
                 REDLOCK_OK);
    harness_run_for(&h, 300); /* refused on both slots, waiting */
    cr_assert_not(w.called);
    struct timespec released;
    clock_gettime(CLOCK_MONOTONIC, &released);
    cr_assert_eq(harness_release(&h, a, NULL), REDLOCK_OK); /* slot 0: not the last tried */
    cr_assert(harness_wait_until(&h, acquired, &w, (int)fleet_scaled_ms(4000)),
              "not woken by the release of slot 0");
    cr_assert_eq(w.status, REDLOCK_OK, "%s", redlock_strerror(w.status));
    cr_assert_str_eq(slot_of(w.lock), RES ":slot:0");
    double after_ms = (double)(w.at.tv_sec - released.tv_sec) * 1e3 +
                      (double)(w.at.tv_nsec - released.tv_nsec) / 1e6;
    cr_expect_lt(after_ms, (double)fleet_scaled_ms(2500), "took %.0f ms: the timed retry",
                 after_ms);
    cr_assert_eq(harness_release(&h, w.lock, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, b, NULL), REDLOCK_OK);
    redlock_lock_free(w.lock);
    redlock_lock_free(a);
    redlock_lock_free(b);
}

Test(semaphore, what_a_semaphore_cannot_be_is_refused)
{
    harness_start(&h, 3, NULL);
    harness_connect(&h);
    redlock_lock *lock = NULL;
    redlock_acquire_options o = slots_options(REDLOCK_MAX_SLOTS + 1, 0);
    cr_assert_eq(redlock_acquire_async(h.client, RES, 6, &o, on_acquired, NULL), REDLOCK_EINVAL);
    o.slots = -1;
    cr_assert_eq(redlock_acquire_async(h.client, RES, 6, &o, on_acquired, NULL), REDLOCK_EINVAL);
    o = slots_options(2, 0);
    o.owner = "me";
    o.owner_len = 2;
    cr_assert_eq(redlock_acquire_async(h.client, RES, 6, &o, on_acquired, NULL), REDLOCK_EINVAL,
                 "a reentrant semaphore");
    o.owner = NULL;
    o.owner_len = 0;
    const void *two[] = {"a", "b"};
    const size_t lens[] = {1, 1};
    cr_assert_eq(redlock_acquire_many_async(h.client, two, lens, 2, &o, on_acquired, NULL),
                 REDLOCK_EINVAL, "a semaphore of two resources");
    /* One slot is the lock itself, on the resource's own key. */
    o.slots = 1;
    cr_assert_eq(harness_acquire(&h, RES, strlen(RES), &o, &lock, NULL), REDLOCK_OK);
    cr_assert_str_eq(slot_of(lock), RES);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
}
