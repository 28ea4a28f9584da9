/* SPDX-License-Identifier: BSD-3-Clause */
/* The blocking API: one client shared by many threads, operations of
 * different threads in flight at once, mutual exclusion between them. */
#include "fleet.h"
#include "testclock.h"

#include <criterion/criterion.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

static fleet *masters;
static redlock_config *cfg;

static void five_masters(void)
{
    masters = fleet_start(5, NULL);
    cr_assert_not_null(masters);
    cfg = fleet_config(masters);
    cr_assert_not_null(cfg);
}

static void teardown(void)
{
    redlock_config_free(cfg);
    fleet_stop(masters);
}

TestSuite(sync, .init = five_masters, .fini = teardown, .timeout = 120);

Test(sync, acquire_extend_release)
{
    redlock_sync *s = NULL;
    cr_assert_eq(redlock_sync_new(&s, cfg), REDLOCK_OK);
    redlock_acquire_options o;
    redlock_acquire_options_init(&o);
    o.ttl_ms = 5000;
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    cr_assert_eq(redlock_sync_acquire(s, "sync", 4, &o, &lock, &r), REDLOCK_OK);
    cr_assert_not_null(lock);
    cr_assert_eq(r->master_count, 5);
    cr_assert_gt(r->validity_ms, 4800);
    redlock_result_free(r);

    /* A second holder is refused while we hold it. */
    redlock_lock *other = NULL;
    o.retry_count = 0;
    cr_assert_eq(redlock_sync_acquire(s, "sync", 4, &o, &other, NULL), REDLOCK_ECONFLICT);
    cr_assert_null(other);

    cr_assert_eq(redlock_sync_extend(s, lock, 15000, &r), REDLOCK_OK);
    cr_assert_gt(r->validity_ms, 14000);
    redlock_result_free(r);
    cr_assert_eq(redlock_sync_release(s, lock, &r), REDLOCK_OK);
    cr_assert_geq(r->masters_locked, 3);
    redlock_result_free(r);
    cr_assert_eq(redlock_sync_release(s, lock, NULL), REDLOCK_ENOTOWNER);
    redlock_lock_free(lock);
    redlock_sync_free(s);
}

Test(sync, bad_arguments)
{
    redlock_sync *s = NULL;
    redlock_config *empty = NULL;
    cr_assert_eq(redlock_config_new(&empty), REDLOCK_OK);
    cr_assert_eq(redlock_sync_new(&s, empty), REDLOCK_EINVAL);
    cr_assert_null(s);
    redlock_config_free(empty);
    cr_assert_eq(redlock_sync_new(&s, cfg), REDLOCK_OK);
    redlock_lock *lock = NULL;
    redlock_result *r = (redlock_result *)&lock; /* must be reset to NULL */
    cr_assert_eq(redlock_sync_acquire(s, "", 0, NULL, &lock, &r), REDLOCK_EINVAL);
    cr_assert_null(r);
    cr_assert_eq(redlock_sync_acquire(s, "x", 1, NULL, NULL, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_sync_extend(s, NULL, 0, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_sync_release(s, NULL, NULL), REDLOCK_EINVAL);
    redlock_sync_free(s);
    redlock_sync_free(NULL);
}

/* 16 threads, 3 resources. Inside its critical section a thread marks the
 * resource as held (an atomic exchange that must find it free), stays a
 * moment, then clears the mark and releases. Any overlap of two holders is
 * caught by the exchange. */
#define THREADS 16
#define RESOURCES 3
#define ROUNDS_PER_THREAD 12
#define RUN_LIMIT_MS 60000.0

static redlock_sync *shared;
static atomic_int holder[RESOURCES];
static atomic_int overlaps;
static atomic_int acquired[RESOURCES];
static atomic_int in_flight, max_in_flight;
static double deadline_ms;

static void *contend(void *arg)
{
    int id = (int)(intptr_t)arg + 1;
    redlock_acquire_options o;
    redlock_acquire_options_init(&o);
    o.ttl_ms = 10000;
    o.retry_count = 1000;
    o.retry_delay_ms = 5;
    o.retry_jitter_ms = 10;
    for (int round = 0; round < ROUNDS_PER_THREAD && tc_now_ms() < deadline_ms; round++) {
        int res = (id + round) % RESOURCES;
        char name[32];
        snprintf(name, sizeof(name), "shared-%d", res);
        redlock_lock *lock = NULL;
        int now_in_flight = atomic_fetch_add(&in_flight, 1) + 1;
        int seen = atomic_load(&max_in_flight);
        while (now_in_flight > seen && !atomic_compare_exchange_weak(&max_in_flight, &seen, now_in_flight))
            ;
        int rc = redlock_sync_acquire(shared, name, strlen(name), &o, &lock, NULL);
        atomic_fetch_sub(&in_flight, 1);
        if (rc != REDLOCK_OK)
            continue;
        if (atomic_exchange(&holder[res], id) != 0)
            atomic_fetch_add(&overlaps, 1);
        atomic_fetch_add(&acquired[res], 1);
        tc_sleep_us(200); /* 0.2 ms of "work" */
        if (atomic_exchange(&holder[res], 0) != id)
            atomic_fetch_add(&overlaps, 1);
        rc = redlock_sync_release(shared, lock, NULL);
        if (rc != REDLOCK_OK)
            atomic_fetch_add(&overlaps, 1000); /* a held lock must release cleanly */
        redlock_lock_free(lock);
    }
    return NULL;
}

Test(sync, sixteen_threads_contend_on_three_resources_without_overlap)
{
    cr_assert_eq(redlock_sync_new(&shared, cfg), REDLOCK_OK);
    deadline_ms = tc_now_ms() + RUN_LIMIT_MS;
    pthread_t threads[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        cr_assert_eq(pthread_create(&threads[i], NULL, contend, (void *)i), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    redlock_sync_free(shared);

    cr_assert_eq(atomic_load(&overlaps), 0, "two holders at once, or a failed release");
    int total = 0;
    for (int r = 0; r < RESOURCES; r++) {
        cr_assert_gt(atomic_load(&acquired[r]), 0, "resource %d never acquired", r);
        total += atomic_load(&acquired[r]);
    }
    cr_assert_eq(total, THREADS * ROUNDS_PER_THREAD, "every thread got every lock it wanted");
    /* Operations of different threads really were in flight together. */
    cr_assert_gt(atomic_load(&max_in_flight), 1);
    for (int r = 0; r < RESOURCES; r++) {
        char name[32];
        snprintf(name, sizeof(name), "shared-%d", r);
        for (size_t i = 0; i < 5; i++)
            cr_assert_eq(fleet_pttl(masters, i, name, strlen(name)), -2);
    }
}

Test(sync, a_dead_master_does_not_hang_a_blocking_call)
{
    cr_assert_eq(fleet_kill(masters, 0), 0);
    cr_assert_eq(fleet_pause(masters, 1), 0);
    redlock_sync *s = NULL;
    cr_assert_eq(redlock_sync_new(&s, cfg), REDLOCK_OK);
    redlock_acquire_options o;
    redlock_acquire_options_init(&o);
    o.retry_count = 0;
    redlock_lock *lock = NULL;
    double t0 = tc_now_ms();
    cr_assert_eq(redlock_sync_acquire(s, "d", 1, &o, &lock, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_sync_release(s, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    cr_assert_eq(fleet_kill(masters, 2), 0);
    redlock_result *r = NULL;
    cr_assert_eq(redlock_sync_acquire(s, "d", 1, &o, &lock, &r), REDLOCK_ENOQUORUM);
    /* Bounded by the 200 ms connect and 100 ms command timeouts, with
     * margin for a loaded machine. */
    cr_assert_lt(tc_now_ms() - t0, 2000.0);
    redlock_result_free(r);
    redlock_sync_free(s);
    cr_assert_eq(fleet_resume(masters, 1), 0);
}

/* The validity left when the I/O thread declared the lock lost: read there,
 * not after this thread wakes from poll, which a loaded machine delays. */
static _Atomic int64_t left_when_lost = INT64_MIN;

static void note_left(int status, redlock_lock *lock, void *arg)
{
    (void)status;
    (void)arg;
    atomic_store(&left_when_lost, redlock_lock_validity_ms(lock));
}

Test(sync, auto_extension_and_the_lost_fd)
{
    redlock_sync *s = NULL;
    cr_assert_eq(redlock_sync_new(&s, cfg), REDLOCK_OK);
    redlock_acquire_options o;
    redlock_acquire_options_init(&o);
    o.ttl_ms = 900;
    redlock_lock *lock = NULL;
    cr_assert_eq(redlock_sync_acquire(s, "watched", 7, &o, &lock, NULL), REDLOCK_OK);
    int fd = -1;
    cr_assert_eq(redlock_lock_lost_fd(lock, &fd), REDLOCK_OK);
    cr_assert_geq(fd, 0);
    cr_assert_eq(redlock_sync_auto_extend(s, lock, note_left, NULL), REDLOCK_OK);

    /* The I/O thread extends it while this thread reads its state. */
    double until = tc_now_ms() + 2000;
    int min_validity = 1000000;
    while (tc_now_ms() < until) {
        cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_HELD);
        int v = (int)redlock_lock_validity_ms(lock);
        min_validity = v < min_validity ? v : min_validity;
        tc_sleep_ms(20);
    }
    cr_assert_gt(min_validity, 0);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    cr_assert_eq(poll(&p, 1, 0), 0, "not lost yet");

    /* Stop a majority: the holder learns it through the fd, in time. */
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_pause(masters, i), 0);
    cr_assert_eq(poll(&p, 1, 3000), 1, "never told the lock was lost");
    cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_LOST);
    int64_t left = INT64_MIN;
    for (int waited = 0; (left = atomic_load(&left_when_lost)) == INT64_MIN && waited < 3000;
         waited += 5) /* the fd may be written before on_lost runs */
        tc_sleep_ms(5);
    cr_assert(left >= 0 && left <= 160, "%lld ms of validity left when told", (long long)left);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_resume(masters, i), 0);

    redlock_lock_free(lock); /* handed to the I/O thread */
    redlock_sync_free(s);
}

Test(sync, freeing_the_client_releases_its_locks)
{
    redlock_sync *s = NULL;
    cr_assert_eq(redlock_sync_new(&s, cfg), REDLOCK_OK);
    redlock_lock *a = NULL;
    redlock_lock *b = NULL;
    cr_assert_eq(redlock_sync_acquire(s, "a", 1, NULL, &a, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_sync_acquire(s, "b", 1, NULL, &b, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_sync_auto_extend(s, b, NULL, NULL), REDLOCK_OK);
    redlock_sync_free(s);
    cr_assert_eq(redlock_lock_state(a), REDLOCK_LOCK_RELEASED);
    cr_assert_eq(redlock_lock_state(b), REDLOCK_LOCK_RELEASED);
    for (size_t i = 0; i < 5; i++) {
        cr_assert_eq(fleet_pttl(masters, i, "a", 1), -2);
        cr_assert_eq(fleet_pttl(masters, i, "b", 1), -2);
    }
    redlock_lock_free(a);
    redlock_lock_free(b);
}

Test(sync, inspect_and_ping)
{
    redlock_sync *s = NULL;
    cr_assert_eq(redlock_sync_new(&s, cfg), REDLOCK_OK);
    redlock_lock *lock = NULL;
    cr_assert_eq(redlock_sync_acquire(s, "looked-at", 9, NULL, &lock, NULL), REDLOCK_OK);
    tc_sleep_ms(50);
    redlock_result *r = NULL;
    cr_assert_eq(redlock_sync_inspect(s, "looked-at", 9, &r), REDLOCK_OK);
    for (unsigned i = 0; i < r->master_count; i++)
        cr_assert_str_eq(r->masters[i].value, redlock_lock_value(lock, NULL));
    redlock_result_free(r);
    cr_assert_eq(redlock_sync_ping(s, &r), REDLOCK_OK);
    cr_assert_eq(r->master_count, 5);
    redlock_result_free(r);
    cr_assert_eq(redlock_sync_release(s, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    redlock_sync_free(s);
}

static _Atomic uint64_t last_token;
static atomic_int token_errors;

static void *fenced_holder(void *arg)
{
    redlock_sync *s = arg;
    redlock_acquire_options o;
    redlock_acquire_options_init(&o); /* fencing: the config's */
    o.ttl_ms = 10000;
    o.retry_count = 1000;
    o.retry_delay_ms = 5;
    o.retry_jitter_ms = 10;
    for (int round = 0; round < 10; round++) {
        redlock_lock *lock = NULL;
        if (redlock_sync_acquire(s, "fenced", 6, &o, &lock, NULL) != REDLOCK_OK) {
            atomic_fetch_add(&token_errors, 1);
            continue;
        }
        /* Held alone: each token greater than the holder's before. */
        uint64_t token = redlock_lock_fencing_token(lock);
        if (token <= atomic_exchange(&last_token, token))
            atomic_fetch_add(&token_errors, 1);
        if (redlock_sync_extend(s, lock, 10000, NULL) != REDLOCK_OK ||
            redlock_lock_fencing_token(lock) != token)
            atomic_fetch_add(&token_errors, 1);
        redlock_sync_release(s, lock, NULL);
        redlock_lock_free(lock);
    }
    return NULL;
}

/* The config's `fencing` makes every acquire fenced; the first one puts
 * the counters in use; tokens grow from holder to holder. */
Test(sync, threads_holding_in_turn_get_growing_fencing_tokens)
{
    cr_assert_eq(redlock_config_set(cfg, REDLOCK_FENCING, 1), REDLOCK_OK);
    redlock_sync *s = NULL;
    cr_assert_eq(redlock_sync_new(&s, cfg), REDLOCK_OK);
    redlock_lock *lock = NULL;
    cr_assert_eq(redlock_sync_acquire(s, "fenced", 6, NULL, &lock, NULL), REDLOCK_OK);
    cr_assert_gt(redlock_lock_fencing_token(lock), 0);
    cr_assert_eq(redlock_sync_release(s, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    redlock_result *r = NULL;
    cr_assert_eq(redlock_sync_fencing_init(s, 0, &r), REDLOCK_OK);
    cr_assert_eq(r->masters_locked, 5);
    redlock_result_free(r);
    pthread_t threads[4];
    for (int i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&threads[i], NULL, fenced_holder, s), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(threads[i], NULL);
    redlock_sync_free(s);
    cr_assert_eq(atomic_load(&token_errors), 0);
    cr_assert_geq(atomic_load(&last_token), 40);
}
