/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Eight threads share one blocking client and contend for four resources
 * while the main thread stops and kills masters under them. The masters
 * persist every write (AOF, appendfsync always), so a kill loses no
 * acknowledged key and mutual exclusion must hold throughout. Phases:
 *
 *   ALL_UP      five masters: every acquire succeeds
 *   TWO_DOWN    master 0 stopped (SIGSTOP), master 1 killed: still a
 *               quorum, every acquire succeeds
 *   THREE_DOWN  master 2 killed too: every acquire fails with ENOQUORUM,
 *               within about a command timeout
 *   BACK        master 0 resumed, 1 and 2 restarted: every thread
 *               acquires again (once the keys the masters kept of locks
 *               released while they were away have expired)
 *
 * A call is judged by its phase only when no change of faults overlapped
 * it. No blocking call may outlast its bound: a dead or stopped master
 * costs a timeout at most, never a hang.
 */
#include "threads.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define THREADS 8
#define RESOURCES 4
#define TTL_MS 2000
#define WAIT_MS 800           /* acquire: no retry starts later */
#define ACQUIRE_BOUND_MS 2000 /* WAIT_MS, then one attempt's timeouts */
#define RELEASE_BOUND_MS 1500 /* one attempt's timeouts */
#define NO_QUORUM_BOUND_MS 1000
#define BACK_LIMIT_MS 10000

enum phase { ALL_UP, TWO_DOWN, THREE_DOWN, BACK, DONE };
static const char *const phase_names[] = {"all up", "two down", "three down", "back", "done"};

static redlock_sync *shared;
/* Even: faults of phase epoch / 2 in place. Odd: changing to the next. */
static atomic_int epoch;
static atomic_int holder[RESOURCES];
static atomic_int ok_in[DONE];         /* successful acquires per phase */
static atomic_int no_quorum_in[DONE];  /* ENOQUORUM per phase */
static atomic_int threads_back;        /* threads that acquired in BACK */

static void resource_name(char *buf, size_t size, int res)
{
    snprintf(buf, size, "faulted-%d", res);
}

/* Hold the lock a moment, then release it (bounded). */
static void hold_and_release(int id, int res, const char *name, redlock_lock *lock)
{
    int was = atomic_exchange(&holder[res], id);
    CHECK(was == 0, "%s: thread %d got it while thread %d held it", name, id, was);
    tc_sleep_ms(1);
    CHECK(redlock_lock_validity_ms(lock) > 0, "%s: validity ran out while held", name);
    was = atomic_exchange(&holder[res], 0);
    CHECK(was == id, "%s: thread %d found thread %d's mark", name, id, was);

    double t0 = tc_now_ms();
    int rc = redlock_sync_release(shared, lock, NULL);
    double took = tc_now_ms() - t0;
    CHECK(took < (double)fleet_scaled_ms(RELEASE_BOUND_MS), "release took %.0f ms", took);
    /* Released, or (masters killed meanwhile) left to expire. */
    CHECK(rc == REDLOCK_OK || rc == REDLOCK_ENOQUORUM, "release: %s", redlock_status_name(rc));
    redlock_lock_free(lock);
}

static void *worker(void *arg)
{
    int id = (int)(uintptr_t)arg + 1;
    bool acquired_back = false;
    for (int round = 0; atomic_load(&epoch) / 2 < DONE; round++) {
        int res = (id + round) % RESOURCES;
        char name[32];
        resource_name(name, sizeof(name), res);
        int before = atomic_load(&epoch);
        int start = before / 2;
        /* Without a quorum, one attempt shows the failure. */
        redlock_acquire_options o = fleet_acquire_options(TTL_MS, start == THREE_DOWN ? 0 : 1000);
        o.retry_delay_ms = 5;
        o.retry_jitter_ms = 10;
        o.wait_ms = fleet_scaled_ms(WAIT_MS);

        redlock_lock *lock = NULL;
        double t0 = tc_now_ms();
        int rc = redlock_sync_acquire(shared, name, strlen(name), &o, &lock, NULL);
        double took = tc_now_ms() - t0;
        bool settled = before % 2 == 0 && atomic_load(&epoch) == before && start < DONE;
        CHECK(took < (double)fleet_scaled_ms(ACQUIRE_BOUND_MS), "acquire took %.0f ms (%s)", took,
              phase_names[start]);
        if (settled) {
            if (start == THREE_DOWN) {
                CHECK(rc == REDLOCK_ENOQUORUM, "acquire without a quorum: %s",
                      redlock_status_name(rc));
                CHECK(took < (double)fleet_scaled_ms(NO_QUORUM_BOUND_MS),
                      "a failed attempt took %.0f ms", took);
            } else if (start != BACK) {
                CHECK(rc == REDLOCK_OK, "acquire (%s): %s", phase_names[start],
                      redlock_status_name(rc));
            } else {
                /* Kept keys, and connections coming back. */
                CHECK(rc == REDLOCK_OK || rc == REDLOCK_ECONFLICT || rc == REDLOCK_ENOQUORUM,
                      "acquire (back): %s", redlock_status_name(rc));
            }
        }
        if (rc == REDLOCK_ENOQUORUM && settled)
            atomic_fetch_add(&no_quorum_in[start], 1);
        if (rc != REDLOCK_OK) {
            CHECK(lock == NULL, "a lock handle with %s", redlock_status_name(rc));
            tc_sleep_ms(5);
            continue;
        }
        if (settled)
            atomic_fetch_add(&ok_in[start], 1);
        if (settled && start == BACK && !acquired_back) {
            acquired_back = true;
            atomic_fetch_add(&threads_back, 1);
        }
        hold_and_release(id, res, name, lock);
    }
    return NULL;
}

/* Mark a change of faults under way (before applying them). */
static void changing(void)
{
    atomic_fetch_add(&epoch, 1);
}

/* The faults of the next phase are in place; let it run ms. */
static void settled_for(int ms)
{
    atomic_fetch_add(&epoch, 1);
    tc_sleep_ms(fleet_scaled_ms(ms));
}

void scenario_faults(fleet *masters, redlock_config *cfg)
{
    REQUIRE(redlock_sync_new(&shared, cfg) == REDLOCK_OK, "redlock_sync_new");
    pthread_t threads[THREADS];
    run_threads(threads, THREADS, worker);

    tc_sleep_ms(fleet_scaled_ms(500)); /* ALL_UP */
    changing();
    REQUIRE(fleet_pause(masters, 0) == 0, "pause master 0");
    REQUIRE(fleet_kill(masters, 1) == 0, "kill master 1");
    /* Each phase outlasts an acquire's retries (WAIT_MS), so that calls
     * start and end in it. */
    settled_for(1500); /* TWO_DOWN */
    changing();
    REQUIRE(fleet_kill(masters, 2) == 0, "kill master 2");
    settled_for(1500); /* THREE_DOWN */
    changing();
    REQUIRE(fleet_resume(masters, 0) == 0, "resume master 0");
    REQUIRE(fleet_restart(masters, 1) == 0, "restart master 1");
    REQUIRE(fleet_restart(masters, 2) == 0, "restart master 2");
    settled_for(0); /* BACK */
    double deadline = tc_now_ms() + (double)fleet_scaled_ms(BACK_LIMIT_MS);
    while (atomic_load(&threads_back) < THREADS && tc_now_ms() < deadline)
        tc_sleep_ms(20);
    atomic_store(&epoch, 2 * DONE);
    join_threads(threads, THREADS);
    redlock_sync_free(shared);

    CHECK(atomic_load(&threads_back) == THREADS, "%d of %d threads acquired after the masters "
          "came back", atomic_load(&threads_back), THREADS);
    for (int p = ALL_UP; p <= BACK; p++) {
        if (p == THREE_DOWN)
            CHECK(atomic_load(&no_quorum_in[p]) > 0, "no acquire failed without a quorum");
        else
            CHECK(atomic_load(&ok_in[p]) > 0, "no acquire succeeded with %s", phase_names[p]);
    }
    CHECK(atomic_load(&ok_in[THREE_DOWN]) == 0, "%d acquires succeeded without a quorum",
          atomic_load(&ok_in[THREE_DOWN]));

    /* What a killed master kept of a lock released meanwhile expires with
     * its TTL; nothing outlives that. */
    deadline = tc_now_ms() + TTL_MS + (double)fleet_scaled_ms(1000);
    for (int r = 0; r < RESOURCES; r++) {
        char name[32];
        resource_name(name, sizeof(name), r);
        for (size_t i = 0; i < fleet_size(masters); i++) {
            while (fleet_pttl(masters, i, name, strlen(name)) != -2 && tc_now_ms() < deadline)
                tc_sleep_ms(50);
            CHECK(fleet_pttl(masters, i, name, strlen(name)) == -2, "master %zu kept %s", i,
                  name);
        }
    }
}
