/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Freeing the blocking client while other threads use it: threads holding
 * locks (some auto-extended) watch them become RELEASED while the client
 * is freed, threads blocked in an acquire return REDLOCK_ECANCELED, and
 * threads free their handles while the free releases them.
 */
#include "threads.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* ---- Holders ------------------------------------------------------------ */

#define HOLDERS 8
#define HELD_TTL_MS 30000 /* stretched by the time scale: held past any scenario */
#define FREE_BOUND_MS 2000 /* the releases drain within a command timeout */

static redlock_sync *owner;
static redlock_lock *held[HOLDERS];
static pthread_barrier_t all_held, client_freed;

static void held_name(char *buf, size_t size, size_t i)
{
    snprintf(buf, size, "held-%zu", i);
}

/* A thread's lock on name, auto-extended if asked. A few attempts: the
 * threads all take theirs at once on a client just made, and under
 * valgrind on a loaded machine one attempt's replies can come after its
 * command timeout; these locks are the scene, not what is tested. */
static void acquire_named(redlock_sync *client, const char *name, bool auto_extend,
                          redlock_lock **out)
{
    redlock_acquire_options o = fleet_acquire_options(fleet_scaled_ms(HELD_TTL_MS), 3);
    int rc = redlock_sync_acquire(client, name, strlen(name), &o, out, NULL);
    REQUIRE(rc == REDLOCK_OK, "acquire %s: %s", name, redlock_status_name(rc));
    if (auto_extend) {
        rc = redlock_sync_auto_extend(client, *out, NULL, NULL);
        CHECK(rc == REDLOCK_OK, "auto-extend: %s", redlock_status_name(rc));
    }
}

static void *hold_until_freed(void *arg)
{
    size_t i = (size_t)(uintptr_t)arg;
    char name[32];
    held_name(name, sizeof(name), i);
    acquire_named(owner, name, i % 2 == 1, &held[i]);
    pthread_barrier_wait(&all_held);

    /* The state may be read while the I/O thread releases the lock. */
    double deadline = tc_now_ms() + (double)fleet_scaled_ms(FREE_BOUND_MS);
    /* One read per look: read twice, the release could come between the
     * loop's test and the check, which then saw "released". */
    for (int state = redlock_lock_state(held[i]);
         state != REDLOCK_LOCK_RELEASED && tc_now_ms() < deadline;
         state = redlock_lock_state(held[i])) {
        CHECK(state == REDLOCK_LOCK_HELD, "%s: %s before the client was freed", name,
              redlock_lock_state_name(state));
        tc_sleep_ms(1);
    }
    pthread_barrier_wait(&client_freed);
    CHECK(redlock_lock_state(held[i]) == REDLOCK_LOCK_RELEASED, "%s: %s after the free",
          name, redlock_lock_state_name(redlock_lock_state(held[i])));
    CHECK(redlock_lock_validity_ms(held[i]) <= 0, "%s: validity left after the free", name);
    redlock_lock_free(held[i]); /* the handle outlives its client */
    return NULL;
}

void scenario_free_releases_locks(fleet *masters, redlock_config *cfg)
{
    REQUIRE(redlock_sync_new(&owner, cfg) == REDLOCK_OK, "redlock_sync_new");
    pthread_barrier_init(&all_held, NULL, HOLDERS + 1);
    pthread_barrier_init(&client_freed, NULL, HOLDERS + 1);
    pthread_t threads[HOLDERS];
    run_threads(threads, HOLDERS, hold_until_freed);

    pthread_barrier_wait(&all_held);
    for (size_t i = 0; i < HOLDERS; i++) {
        char name[32];
        held_name(name, sizeof(name), i);
        size_t len;
        const char *value = redlock_lock_value(held[i], &len);
        CHECK(fleet_count_value(masters, name, strlen(name), value, len) >= 3,
              "%s not held by a quorum", name);
    }
    double t0 = tc_now_ms();
    redlock_sync_free(owner);
    double took = tc_now_ms() - t0;
    pthread_barrier_wait(&client_freed);
    join_threads(threads, HOLDERS);
    pthread_barrier_destroy(&all_held);
    pthread_barrier_destroy(&client_freed);

    CHECK(took < (double)fleet_scaled_ms(FREE_BOUND_MS), "redlock_sync_free took %.0f ms", took);
    for (size_t i = 0; i < HOLDERS; i++) {
        char name[32];
        held_name(name, sizeof(name), i);
        for (size_t m = 0; m < fleet_size(masters); m++)
            CHECK(fleet_pttl(masters, m, name, strlen(name)) == -2, "master %zu kept %s", m,
                  name);
    }
}

/* ---- Waiters ------------------------------------------------------------ */

#define WAITERS 8
#define WAIT_LIMIT_MS 30000 /* a bound on the waits, never reached */

static redlock_sync *waited_on;
static atomic_int first_attempts;
static atomic_int statuses[WAITERS];
static atomic_bool got_lock[WAITERS];
static _Atomic double returned_at[WAITERS];

/* On the client's threads: counts acquires that failed a first attempt,
 * that is waiters now retrying inside the client. */
static void count_first_attempts(int level, const char *message, void *arg)
{
    (void)level;
    (void)arg;
    if (strncmp(message, "acquire attempt 1:", strlen("acquire attempt 1:")) == 0)
        atomic_fetch_add(&first_attempts, 1);
}

static void *wait_for_busy(void *arg)
{
    size_t i = (size_t)(uintptr_t)arg;
    redlock_acquire_options o = fleet_acquire_options(10000, 1000000);
    o.retry_delay_ms = 20;
    o.retry_jitter_ms = 0;
    o.wait_ms = fleet_scaled_ms(WAIT_LIMIT_MS);
    redlock_lock *lock = NULL;
    int rc = redlock_sync_acquire(waited_on, "busy", 4, &o, &lock, NULL);
    atomic_store(&returned_at[i], tc_now_ms());
    atomic_store(&statuses[i], rc);
    atomic_store(&got_lock[i], lock != NULL);
    redlock_lock_free(lock);
    return NULL;
}

void scenario_free_while_threads_wait(fleet *masters, redlock_config *cfg)
{
    /* Someone else holds "busy" on every master for the whole scenario. */
    for (size_t m = 0; m < fleet_size(masters); m++)
        REQUIRE(fleet_set(masters, m, "busy", 4, "someone-else", 12, 60000) == 0, "set busy");
    redlock_config_set_log(cfg, count_first_attempts, NULL, REDLOCK_LOG_DEBUG);
    REQUIRE(redlock_sync_new(&waited_on, cfg) == REDLOCK_OK, "redlock_sync_new");
    redlock_lock *kept = NULL;
    REQUIRE(redlock_sync_acquire(waited_on, "kept", 4, NULL, &kept, NULL) == REDLOCK_OK,
            "acquire kept");

    pthread_t threads[WAITERS];
    run_threads(threads, WAITERS, wait_for_busy);
    /* Every waiter is inside the client, retrying, before the free. */
    double deadline = tc_now_ms() + (double)fleet_scaled_ms(5000);
    while (atomic_load(&first_attempts) < WAITERS && tc_now_ms() < deadline)
        tc_sleep_ms(5);
    REQUIRE(atomic_load(&first_attempts) >= WAITERS, "only %d of %d waiters started",
            atomic_load(&first_attempts), WAITERS);

    double t0 = tc_now_ms();
    redlock_sync_free(waited_on);
    CHECK(tc_now_ms() - t0 < (double)fleet_scaled_ms(FREE_BOUND_MS), "redlock_sync_free took %.0f ms",
          tc_now_ms() - t0);
    join_threads(threads, WAITERS);

    for (size_t i = 0; i < WAITERS; i++) {
        int rc = atomic_load(&statuses[i]);
        CHECK(rc == REDLOCK_ECANCELED, "waiter %zu: %s", i, redlock_status_name(rc));
        CHECK(!atomic_load(&got_lock[i]), "waiter %zu got a lock handle", i);
        double after = atomic_load(&returned_at[i]) - t0;
        CHECK(after < (double)fleet_scaled_ms(FREE_BOUND_MS),
              "waiter %zu returned %.0f ms after the free began", i, after);
    }
    CHECK(redlock_lock_state(kept) == REDLOCK_LOCK_RELEASED, "kept: %s",
          redlock_lock_state_name(redlock_lock_state(kept)));
    redlock_lock_free(kept);
    for (size_t m = 0; m < fleet_size(masters); m++)
        CHECK(fleet_pttl(masters, m, "kept", 4) == -2, "master %zu kept \"kept\"", m);
    /* The waiters' attempts took nothing from the holder. */
    CHECK(fleet_count_value(masters, "busy", 4, "someone-else", 12) == fleet_size(masters),
          "the holder's key was touched");
}

/* ---- Handles freed as the client is freed ----------------------------------- */

#define RACERS 12

static redlock_sync *racing;
static redlock_lock *raced[RACERS];
static pthread_barrier_t racers_held, io_held;
static atomic_bool free_now;

static void raced_name(char *buf, size_t size, size_t i)
{
    snprintf(buf, size, "raced-%zu", i);
}

/* Even threads auto-extend their lock: its handle is taken apart by the I/O
 * thread, so they queue that while the I/O thread is held, and the free
 * that follows answers them. Odd threads free theirs as the I/O thread
 * resumes, straight into the free's release of the client's locks. */
static void *hold_then_free(void *arg)
{
    size_t i = (size_t)(uintptr_t)arg;
    char name[32];
    raced_name(name, sizeof(name), i);
    acquire_named(racing, name, i % 2 == 0, &raced[i]);
    pthread_barrier_wait(&racers_held);
    pthread_barrier_wait(&io_held);
    if (i % 2 == 1) {
        double deadline = tc_now_ms() + (double)fleet_scaled_ms(FREE_BOUND_MS);
        while (!atomic_load(&free_now) && tc_now_ms() < deadline)
            sched_yield(); /* no sleep: free as the I/O thread resumes */
    }
    redlock_lock_free(raced[i]);
    return NULL;
}

static void *free_racing(void *arg)
{
    (void)arg;
    redlock_sync_free(racing);
    return NULL;
}

void scenario_handles_freed_while_client_freed(fleet *masters, redlock_config *cfg)
{
    redlock_config_set_log(cfg, io_gate_log, NULL, REDLOCK_LOG_DEBUG);
    REQUIRE(redlock_sync_new(&racing, cfg) == REDLOCK_OK, "redlock_sync_new");
    pthread_barrier_init(&racers_held, NULL, RACERS + 1);
    pthread_barrier_init(&io_held, NULL, RACERS + 1);
    pthread_t threads[RACERS];
    run_threads(threads, RACERS, hold_then_free);
    pthread_barrier_wait(&racers_held);

    io_gate_close(masters, racing);
    pthread_barrier_wait(&io_held); /* even threads queue their handle's end */
    tc_sleep_ms(fleet_scaled_ms(50));
    double t0 = tc_now_ms();
    pthread_t freer;
    REQUIRE(pthread_create(&freer, NULL, free_racing, NULL) == 0, "pthread_create");
    tc_sleep_ms(fleet_scaled_ms(50)); /* the free has begun: it waits for the I/O thread */
    atomic_store(&free_now, true);
    io_gate_open();
    pthread_join(freer, NULL);
    CHECK(tc_now_ms() - t0 < (double)fleet_scaled_ms(FREE_BOUND_MS + 100),
          "redlock_sync_free took %.0f ms", tc_now_ms() - t0);
    join_threads(threads, RACERS);
    pthread_barrier_destroy(&racers_held);
    pthread_barrier_destroy(&io_held);

    /* The auto-extended locks were still the client's when it was freed:
     * released, not left to expire. */
    for (size_t i = 0; i < RACERS; i += 2) {
        char name[32];
        raced_name(name, sizeof(name), i);
        for (size_t m = 0; m < fleet_size(masters); m++)
            CHECK(fleet_pttl(masters, m, name, strlen(name)) == -2, "master %zu kept %s", m,
                  name);
    }
}

/* ---- Many locks released at once, watched ----------------------------------
 * A handle given up goes from HELD to RELEASED and never shows EXPIRED on
 * the way while its validity had time left: readers polling many handles
 * while the free releases them would see the step between the two. */

#define WATCHED_LOCKS 400
#define WATCHERS 4
#define WATCH_ROUNDS 20

static redlock_lock *watched[WATCHED_LOCKS];
static atomic_bool watch_done;
static atomic_int seen_expired;

static void *watch_states(void *arg)
{
    (void)arg;
    while (!atomic_load(&watch_done)) {
        for (size_t i = 0; i < WATCHED_LOCKS; i++)
            if (redlock_lock_state(watched[i]) == REDLOCK_LOCK_EXPIRED)
                atomic_fetch_add(&seen_expired, 1);
        /* Between passes: under valgrind, which runs one thread at a time
         * and hands over unfairly, four spinning readers kept the I/O
         * thread from the releases for minutes. */
        sched_yield();
    }
    return NULL;
}

void scenario_released_locks_never_look_expired(fleet *masters, redlock_config *cfg)
{
    (void)masters;
    for (int round = 0; round < WATCH_ROUNDS; round++) {
        redlock_sync *client;
        REQUIRE(redlock_sync_new(&client, cfg) == REDLOCK_OK, "redlock_sync_new");
        for (size_t i = 0; i < WATCHED_LOCKS; i++) {
            char name[32];
            snprintf(name, sizeof(name), "watched-%zu", i);
            acquire_named(client, name, false, &watched[i]);
        }
        atomic_store(&watch_done, false);
        pthread_t threads[WATCHERS];
        run_threads(threads, WATCHERS, watch_states);
        tc_sleep_ms(5);
        redlock_sync_free(client);
        tc_sleep_ms(5);
        atomic_store(&watch_done, true);
        join_threads(threads, WATCHERS);
        for (size_t i = 0; i < WATCHED_LOCKS; i++) {
            CHECK(redlock_lock_state(watched[i]) == REDLOCK_LOCK_RELEASED,
                  "watched-%zu: %s after the free", i,
                  redlock_lock_state_name(redlock_lock_state(watched[i])));
            redlock_lock_free(watched[i]);
        }
    }
    CHECK(atomic_load(&seen_expired) == 0, "%d reads saw EXPIRED on the way to RELEASED",
          atomic_load(&seen_expired));
}
