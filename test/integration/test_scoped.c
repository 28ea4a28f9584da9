/* SPDX-License-Identifier: BSD-3-Clause */
/* The blocking client's scoped call (redlock_sync_with_lock): the lock held
 * while the function runs, released after it on every path, a loss during
 * it told to the function and to the caller. */
#include "fleet.h"
#include "testclock.h"

#include <criterion/criterion.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

static fleet *masters;
static redlock_config *cfg;
static redlock_sync *sync_client;

static void five_masters(void)
{
    masters = fleet_start(5, NULL);
    cr_assert_not_null(masters);
    cfg = fleet_config(masters);
    cr_assert_not_null(cfg);
    cr_assert_eq(redlock_sync_new(&sync_client, cfg), REDLOCK_OK);
}

static void teardown(void)
{
    redlock_sync_free(sync_client);
    redlock_config_free(cfg);
    fleet_stop(masters);
}

TestSuite(scoped, .init = five_masters, .fini = teardown, .timeout = 60);

/* What the function saw, for the test to check after the call. */
typedef struct seen {
    int calls;
    int state;            /* redlock_lock_state() when it began */
    size_t keys_held;     /* masters holding the lock's value then */
    const char *resource; /* the key to look for */
    int returns;          /* what it returns */
    int64_t run_ms;       /* how long it stays, checking the state */
    bool stayed_held;     /* HELD at every check */
    bool told_lost;       /* the lost fd became readable */
    int state_after_loss;
} seen;

static void look(seen *s, redlock_lock *lock)
{
    s->calls++;
    s->state = redlock_lock_state(lock);
    size_t len = 0;
    const char *value = redlock_lock_value(lock, &len);
    s->keys_held = fleet_count_value(masters, s->resource, strlen(s->resource), value, len);
}

static int stay(redlock_lock *lock, void *arg)
{
    seen *s = arg;
    look(s, lock);
    s->stayed_held = true;
    double until = tc_now_ms() + (double)s->run_ms;
    while (tc_now_ms() < until) {
        s->stayed_held = s->stayed_held && redlock_lock_state(lock) == REDLOCK_LOCK_HELD;
        tc_sleep_ms(20);
    }
    return s->returns;
}

static void assert_gone(const char *resource)
{
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(fleet_pttl(masters, i, resource, strlen(resource)), -2,
                     "master %zu still holds %s", i, resource);
}

Test(scoped, held_while_the_function_runs_and_released_after)
{
    seen s = {.resource = "scoped", .returns = 7};
    int fn_result = -1;
    redlock_result *r = NULL;
    cr_assert_eq(redlock_sync_with_lock(sync_client, "scoped", 6, NULL, stay, &s, &fn_result, &r),
                 REDLOCK_OK);
    cr_assert_eq(s.calls, 1);
    cr_assert_eq(s.state, REDLOCK_LOCK_HELD);
    cr_assert_eq(s.keys_held, 5);
    cr_assert_eq(fn_result, 7);
    cr_assert_not_null(r);
    cr_assert_eq(r->status, REDLOCK_OK);
    redlock_result_free(r);
    assert_gone("scoped");
}

Test(scoped, released_when_the_function_fails)
{
    seen s = {.resource = "failing", .returns = -1};
    int fn_result = 0;
    cr_assert_eq(redlock_sync_with_lock(sync_client, "failing", 7, NULL, stay, &s, &fn_result, NULL),
                 REDLOCK_OK);
    cr_assert_eq(s.calls, 1);
    cr_assert_eq(s.keys_held, 5);
    cr_assert_eq(fn_result, -1);
    assert_gone("failing");
}

Test(scoped, not_run_when_the_acquire_fails)
{
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_set(masters, i, "taken", 5, "theirs", 6, 10000), 0);
    redlock_acquire_options o = fleet_acquire_options(REDLOCK_DEFAULT, 0);
    seen s = {.resource = "taken"};
    int fn_result = 99;
    redlock_result *r = NULL;
    cr_assert_eq(redlock_sync_with_lock(sync_client, "taken", 5, &o, stay, &s, &fn_result, &r),
                 REDLOCK_ECONFLICT);
    cr_assert_eq(s.calls, 0);
    cr_assert_eq(fn_result, 0);
    cr_assert_not_null(r);
    cr_assert_eq(r->status, REDLOCK_ECONFLICT);
    redlock_result_free(r);
    cr_assert_eq(fleet_count_value(masters, "taken", 5, "theirs", 6), 3, "theirs was touched");
    cr_assert_eq(redlock_sync_with_lock(sync_client, "x", 1, NULL, NULL, NULL, &fn_result, NULL),
                 REDLOCK_EINVAL);
}

Test(scoped, kept_alive_through_a_function_longer_than_the_ttl)
{
    redlock_acquire_options o = fleet_acquire_options(fleet_scaled_ms(500), REDLOCK_DEFAULT);
    seen s = {.resource = "long", .run_ms = fleet_scaled_ms(1600)};
    int fn_result = -1;
    double t0 = tc_now_ms();
    cr_assert_eq(redlock_sync_with_lock(sync_client, "long", 4, &o, stay, &s, &fn_result, NULL),
                 REDLOCK_OK);
    cr_assert_geq(tc_now_ms() - t0, (double)fleet_scaled_ms(1600));
    cr_assert(s.stayed_held, "the lock was not held throughout three TTLs");
    cr_assert_eq(fn_result, 0);
    assert_gone("long");
}

static int lose(redlock_lock *lock, void *arg)
{
    seen *s = arg;
    look(s, lock);
    int fd = -1;
    if (redlock_lock_lost_fd(lock, &fd) != REDLOCK_OK)
        return -1;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 0) != 0)
        return -2; /* readable while held */
    for (size_t i = 0; i < 3; i++)
        if (fleet_kill(masters, i) != 0)
            return -3;
    s->told_lost = poll(&p, 1, (int)fleet_scaled_ms(3000)) == 1;
    s->state_after_loss = redlock_lock_state(lock);
    return 0;
}

Test(scoped, a_loss_during_the_function_is_told_to_it_and_returned)
{
    redlock_acquire_options o = fleet_acquire_options(fleet_scaled_ms(900), REDLOCK_DEFAULT);
    seen s = {.resource = "lost"};
    int fn_result = -1;
    cr_assert_eq(redlock_sync_with_lock(sync_client, "lost", 4, &o, lose, &s, &fn_result, NULL),
                 REDLOCK_ELOST);
    cr_assert_eq(fn_result, 0, "the function failed at step %d", fn_result);
    cr_assert(s.told_lost, "the lost fd never became readable");
    cr_assert_eq(s.state_after_loss, REDLOCK_LOCK_LOST);
    /* Released where masters still run. */
    cr_assert_eq(fleet_pttl(masters, 3, "lost", 4), -2);
    cr_assert_eq(fleet_pttl(masters, 4, "lost", 4), -2);
}

static int both(redlock_lock *lock, void *arg)
{
    seen *s = arg;
    look(s, lock);
    size_t len = 0;
    const char *value = redlock_lock_value(lock, &len);
    return (int)fleet_count_value(masters, "second", 6, value, len);
}

Test(scoped, several_resources_as_one_lock)
{
    const void *resources[] = {"first", "second"};
    size_t lens[] = {5, 6};
    seen s = {.resource = "first"};
    int fn_result = -1;
    cr_assert_eq(redlock_sync_with_lock_many(sync_client, resources, lens, 2, NULL, both, &s,
                                             &fn_result, NULL),
                 REDLOCK_OK);
    cr_assert_eq(s.keys_held, 5);
    cr_assert_eq(fn_result, 5);
    assert_gone("first");
    assert_gone("second");
}

/* A thread canceled inside the function: the cleanup handler releases. */
static atomic_int inside;

static int wait_for_cancel(redlock_lock *lock, void *arg)
{
    (void)lock;
    (void)arg;
    atomic_store(&inside, 1);
    for (int i = 0; i < 100; i++) {
        tc_sleep_ms(50);
        pthread_testcancel();
    }
    return 0;
}

static void *scoped_thread(void *arg)
{
    int *rc = arg;
    *rc = redlock_sync_with_lock(sync_client, "canceled", 8, NULL, wait_for_cancel, NULL, NULL,
                                 NULL);
    return NULL;
}

Test(scoped, released_when_the_thread_is_canceled_in_the_function)
{
    int rc = 12345;
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, scoped_thread, &rc), 0);
    double until = tc_now_ms() + (double)fleet_scaled_ms(3000);
    while (!atomic_load(&inside) && tc_now_ms() < until)
        tc_sleep_ms(10);
    cr_assert(atomic_load(&inside), "the function never ran");
    size_t held = 0;
    for (size_t i = 0; i < 5; i++)
        held += fleet_pttl(masters, i, "canceled", 8) > 0;
    cr_assert_geq(held, 3, "not held while the function runs");
    cr_assert_eq(pthread_cancel(t), 0);
    void *ret = NULL;
    cr_assert_eq(pthread_join(t, &ret), 0);
    cr_assert_eq(ret, PTHREAD_CANCELED);
    cr_assert_eq(rc, 12345, "the call returned");
    assert_gone("canceled");
}
