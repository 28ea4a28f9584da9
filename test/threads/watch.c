/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Auto-extension by the blocking client's I/O thread while the holders'
 * threads read their locks: the state, the validity and the lost fd, which
 * wakes each holder when a stopped majority makes its lock lost; and
 * handles released or freed by their threads while the I/O thread extends
 * them.
 */
#include "threads.h"

#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* ---- The lost fd ----------------------------------------------------------- */

#define HOLDERS 6
#define LOST_TTL_MS 900
#define WATCH_MS 2000     /* more than two TTLs of extensions */
#define LOST_MARGIN_MS 160 /* told with at most ttl/6 (150 ms) of validity left */
#define MAX_STRETCH 3

/* The times above, stretched when the suite runs slowed down (valgrind):
 * six locks extended every 300 ms by one I/O thread under valgrind on a
 * loaded machine lose a round now and then. Three times is enough, where
 * the whole time scale (10) would make this scenario last half a minute. */
static int64_t stretched_ms(int64_t ms)
{
    int scale = fleet_time_scale();
    return ms * (scale < MAX_STRETCH ? scale : MAX_STRETCH);
}

typedef struct watched {
    redlock_lock *lock;
    atomic_int lost_calls;
    atomic_int lost_status;
    _Atomic int64_t validity_at_loss;
    atomic_int peer_fd;  /* what a second thread got from redlock_lock_lost_fd() */
} watched;

static redlock_sync *watcher;
static watched holders[HOLDERS];
static pthread_barrier_t all_watching, majority_stopped;

/* On the I/O thread. */
static void on_lost(int status, redlock_lock *lock, void *arg)
{
    watched *w = arg;
    atomic_store(&w->validity_at_loss, redlock_lock_validity_ms(lock));
    atomic_store(&w->lost_status, status);
    atomic_fetch_add(&w->lost_calls, 1);
    CHECK(redlock_lock_state(lock) == REDLOCK_LOCK_LOST, "state %s in on_lost",
          redlock_lock_state_name(redlock_lock_state(lock)));
}

static void *ask_for_lost_fd(void *arg)
{
    watched *w = arg;
    int fd = -1;
    (void)redlock_lock_lost_fd(w->lock, &fd); /* checked through fd */
    atomic_store(&w->peer_fd, fd);
    return NULL;
}

static void *hold_and_watch(void *arg)
{
    size_t i = (size_t)(uintptr_t)arg;
    watched *w = &holders[i];
    char name[32];
    snprintf(name, sizeof(name), "watched-%zu", i);
    redlock_acquire_options o = fleet_acquire_options(stretched_ms(LOST_TTL_MS), 0);
    int rc = redlock_sync_acquire(watcher, name, strlen(name), &o, &w->lock, NULL);
    REQUIRE(rc == REDLOCK_OK, "acquire %s: %s", name, redlock_status_name(rc));

    /* Two threads ask for the lost fd at once: one eventfd for both. */
    pthread_t peer;
    REQUIRE(pthread_create(&peer, NULL, ask_for_lost_fd, w) == 0, "pthread_create");
    int fd = -1;
    rc = redlock_lock_lost_fd(w->lock, &fd);
    pthread_join(peer, NULL);
    CHECK(rc == REDLOCK_OK && fd >= 0, "no lost fd: %s", redlock_status_name(rc));
    CHECK(atomic_load(&w->peer_fd) == fd, "two lost fds: %d and %d", fd,
          atomic_load(&w->peer_fd));

    rc = redlock_sync_auto_extend(watcher, w->lock, on_lost, w);
    CHECK(rc == REDLOCK_OK, "auto-extend: %s", redlock_status_name(rc));
    rc = redlock_sync_auto_extend(watcher, w->lock, on_lost, w);
    CHECK(rc == REDLOCK_EBUSY, "auto-extend twice: %s", redlock_status_name(rc));

    /* The I/O thread extends it while this thread reads its state. */
    double until = tc_now_ms() + (double)stretched_ms(WATCH_MS);
    int64_t min_validity = INT64_MAX;
    while (tc_now_ms() < until) {
        int state = redlock_lock_state(w->lock);
        CHECK(state == REDLOCK_LOCK_HELD, "%s: %s while auto-extended", name,
              redlock_lock_state_name(state));
        int64_t v = redlock_lock_validity_ms(w->lock);
        min_validity = v < min_validity ? v : min_validity;
        tc_sleep_ms(20);
    }
    CHECK(min_validity > 0, "%s: validity fell to %lld ms", name, (long long)min_validity);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    CHECK(poll(&p, 1, 0) == 0, "%s: lost fd readable before any loss", name);

    pthread_barrier_wait(&all_watching);
    pthread_barrier_wait(&majority_stopped); /* the main thread stopped three masters */
    int ready = poll(&p, 1, (int)fleet_scaled_ms(3000));
    int64_t left = redlock_lock_validity_ms(w->lock);
    CHECK(ready == 1, "%s: never told the lock was lost", name);
    CHECK(redlock_lock_state(w->lock) == REDLOCK_LOCK_LOST, "%s: state %s", name,
          redlock_lock_state_name(redlock_lock_state(w->lock)));
    CHECK(left <= stretched_ms(LOST_MARGIN_MS), "%s: %lld ms of validity left when told", name,
          (long long)left);
    redlock_lock_free(w->lock); /* auto-extended: taken apart on the I/O thread */
    return NULL;
}

void scenario_lost_fd(fleet *masters, redlock_config *cfg)
{
    REQUIRE(redlock_sync_new(&watcher, cfg) == REDLOCK_OK, "redlock_sync_new");
    pthread_barrier_init(&all_watching, NULL, HOLDERS + 1);
    pthread_barrier_init(&majority_stopped, NULL, HOLDERS + 1);
    pthread_t threads[HOLDERS];
    run_threads(threads, HOLDERS, hold_and_watch);

    pthread_barrier_wait(&all_watching);
    for (size_t i = 0; i < 3; i++)
        REQUIRE(fleet_pause(masters, i) == 0, "pause master %zu", i);
    pthread_barrier_wait(&majority_stopped);
    join_threads(threads, HOLDERS);
    for (size_t i = 0; i < 3; i++)
        REQUIRE(fleet_resume(masters, i) == 0, "resume master %zu", i);
    redlock_sync_free(watcher);
    pthread_barrier_destroy(&all_watching);
    pthread_barrier_destroy(&majority_stopped);

    for (size_t i = 0; i < HOLDERS; i++) {
        watched *w = &holders[i];
        CHECK(atomic_load(&w->lost_calls) == 1, "lock %zu: on_lost called %d times", i,
              atomic_load(&w->lost_calls));
        CHECK(atomic_load(&w->lost_status) == REDLOCK_ENOQUORUM, "lock %zu: lost with %s", i,
              redlock_status_name(atomic_load(&w->lost_status)));
        int64_t v = atomic_load(&w->validity_at_loss);
        CHECK(v > 0 && v <= stretched_ms(LOST_MARGIN_MS), "lock %zu: told with %lld ms of validity left", i,
              (long long)v);
    }
}

/* ---- Handles released or freed while extended ------------------------------- */

#define EXTENDED 8
#define EXTENDED_TTL_MS 600
#define HOLD_MS 300

static redlock_sync *extender;

static void extended_name(char *buf, size_t size, size_t i)
{
    snprintf(buf, size, "extended-%zu", i);
}

/* Even threads extend it themselves and release it; odd ones free the
 * handle without releasing: the extension must stop either way. */
static void *extend_then_let_go(void *arg)
{
    size_t i = (size_t)(uintptr_t)arg;
    char name[32];
    extended_name(name, sizeof(name), i);
    redlock_acquire_options o = fleet_acquire_options(EXTENDED_TTL_MS, 0);
    redlock_lock *lock = NULL;
    int rc = redlock_sync_acquire(extender, name, strlen(name), &o, &lock, NULL);
    REQUIRE(rc == REDLOCK_OK, "acquire %s: %s", name, redlock_status_name(rc));
    rc = redlock_sync_auto_extend(extender, lock, NULL, NULL);
    CHECK(rc == REDLOCK_OK, "auto-extend: %s", redlock_status_name(rc));

    double until = tc_now_ms() + HOLD_MS;
    while (tc_now_ms() < until) {
        if (i % 2 == 0) {
            /* Busy while an automatic extension is in flight. */
            rc = redlock_sync_extend(extender, lock, 0, NULL);
            CHECK(rc == REDLOCK_OK || rc == REDLOCK_EBUSY, "%s: extend: %s", name,
                  redlock_status_name(rc));
        }
        CHECK(redlock_lock_state(lock) == REDLOCK_LOCK_HELD, "%s: not held", name);
        tc_sleep_ms(20);
    }
    if (i % 2 == 0) {
        rc = redlock_sync_release(extender, lock, NULL);
        CHECK(rc == REDLOCK_OK, "%s: release: %s", name, redlock_status_name(rc));
        CHECK(redlock_lock_state(lock) == REDLOCK_LOCK_RELEASED, "%s: not released", name);
    }
    redlock_lock_free(lock);
    return NULL;
}

void scenario_handles_freed_while_extended(fleet *masters, redlock_config *cfg)
{
    REQUIRE(redlock_sync_new(&extender, cfg) == REDLOCK_OK, "redlock_sync_new");
    pthread_t threads[EXTENDED];
    run_threads(threads, EXTENDED, extend_then_let_go);
    join_threads(threads, EXTENDED);
    /* Longer than a TTL: a lock still extended would still be there. */
    tc_sleep_ms(fleet_scaled_ms(2 * (int64_t)EXTENDED_TTL_MS));
    for (size_t i = 0; i < EXTENDED; i++) {
        char name[32];
        extended_name(name, sizeof(name), i);
        for (size_t m = 0; m < fleet_size(masters); m++)
            CHECK(fleet_pttl(masters, m, name, strlen(name)) == -2, "master %zu kept %s", m,
                  name);
    }
    redlock_sync_free(extender);
}
