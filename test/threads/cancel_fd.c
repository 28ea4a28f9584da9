/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Acquires of threads sharing one blocking client, each canceled by its own
 * eventfd (redlock_acquire_options.cancel_fd) while it waits for a resource
 * held elsewhere: each returns REDLOCK_ECANCELED promptly, the others keep
 * waiting, no thread is canceled, and no key of theirs is left. Runs under
 * ThreadSanitizer too: the fd is written by another thread than the one
 * running the loop that polls it.
 */
#include "threads.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define WAITERS 4
#define RETURN_BOUND_MS 2000 /* a canceled call returns within this */
#define WAIT_LIMIT_MS 30000  /* the waiters' acquire waits, never reached */
#define HELD "someone-else"

static redlock_sync *client;
static int cancel_fds[WAITERS];
static atomic_int rcs[WAITERS];   /* each waiter's status, 1 while it waits */
static atomic_int waiting;        /* waiters started */

static void *wait_for_lock(void *arg)
{
    size_t i = (size_t)(uintptr_t)arg;
    redlock_acquire_options o = fleet_acquire_options(10000, 1000000);
    o.retry_delay_ms = 20;
    o.retry_jitter_ms = 0;
    o.wait_ms = fleet_scaled_ms(WAIT_LIMIT_MS);
    o.cancel_fd = cancel_fds[i];
    redlock_lock *lock = NULL;
    atomic_fetch_add(&waiting, 1);
    int rc = redlock_sync_acquire(client, "cancel-fd", 9, &o, &lock, NULL);
    CHECK(lock == NULL, "waiter %zu got a lock", i);
    redlock_lock_free(lock);
    atomic_store(&rcs[i], rc);
    return NULL;
}

void scenario_cancel_fd_shared(fleet *masters, redlock_config *cfg)
{
    REQUIRE(redlock_sync_new(&client, cfg) == REDLOCK_OK, "redlock_sync_new");
    for (size_t m = 0; m < fleet_size(masters); m++)
        REQUIRE(fleet_set(masters, m, "cancel-fd", 9, HELD, strlen(HELD), 60000) == 0, "set");
    pthread_t threads[WAITERS];
    for (size_t i = 0; i < WAITERS; i++) {
        cancel_fds[i] = eventfd(0, EFD_CLOEXEC);
        REQUIRE(cancel_fds[i] >= 0, "eventfd");
        atomic_store(&rcs[i], 1);
        REQUIRE(pthread_create(&threads[i], NULL, wait_for_lock, (void *)(uintptr_t)i) == 0,
                "pthread_create");
    }
    double deadline = tc_now_ms() + (double)fleet_scaled_ms(5000);
    while (atomic_load(&waiting) < WAITERS && tc_now_ms() < deadline)
        tc_sleep_ms(1);
    tc_sleep_ms(fleet_scaled_ms(100)); /* every acquire under way */

    for (size_t i = 0; i < WAITERS; i++) {
        double t0 = tc_now_ms();
        REQUIRE(eventfd_write(cancel_fds[i], 1) == 0, "eventfd_write");
        double until = t0 + (double)fleet_scaled_ms(RETURN_BOUND_MS);
        while (atomic_load(&rcs[i]) == 1 && tc_now_ms() < until)
            tc_sleep_ms(1);
        int rc = atomic_load(&rcs[i]);
        CHECK(rc == REDLOCK_ECANCELED, "waiter %zu: %s after %.0f ms", i,
              rc == 1 ? "still waiting" : redlock_status_name(rc), tc_now_ms() - t0);
        for (size_t j = i + 1; j < WAITERS; j++)
            CHECK(atomic_load(&rcs[j]) == 1, "waiter %zu returned %s with waiter %zu's cancel",
                  j, redlock_status_name(atomic_load(&rcs[j])), i);
    }
    join_threads(threads, WAITERS);

    /* The holder's keys are untouched, and none of the waiters' is left. */
    CHECK(fleet_count_value(masters, "cancel-fd", 9, HELD, strlen(HELD)) == fleet_size(masters),
          "the holder's keys changed");
    for (size_t m = 0; m < fleet_size(masters); m++)
        REQUIRE(fleet_del(masters, m, "cancel-fd", 9) == 1, "del");
    double until = tc_now_ms() + (double)fleet_scaled_ms(300);
    while (tc_now_ms() < until) {
        CHECK(redlock_sync_ping(client, NULL) == REDLOCK_OK, "ping");
        tc_sleep_ms(10);
    }
    for (size_t m = 0; m < fleet_size(masters); m++)
        CHECK(fleet_pttl(masters, m, "cancel-fd", 9) == -2,
              "master %zu: a canceled acquire left a key", m);
    redlock_sync_free(client);
    for (size_t i = 0; i < WAITERS; i++)
        close(cancel_fds[i]);
}
