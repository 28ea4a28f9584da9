/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sixteen threads share one blocking client and contend for three
 * resources; a seventeenth pings all along. Each round a thread acquires,
 * marks the resource as held (an atomic exchange that must find it free),
 * extends the lock, inspects the resource (a quorum holds its value),
 * clears the mark and releases. Any overlap of two holders, any failed
 * operation on a held lock, or any key left behind fails the scenario.
 * The pinger also reads the client's statistics all along, which must
 * count exactly what the threads did.
 */
#include "threads.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define THREADS 16
#define RESOURCES 3
#define ROUNDS 12
#define RUN_LIMIT_MS 60000
#define TTL_MS 10000

static redlock_sync *shared;
static atomic_int holder[RESOURCES];
static atomic_int acquired[RESOURCES];
static atomic_int in_flight, max_in_flight;
static atomic_int pings;
static atomic_bool contenders_done;
static double deadline_ms;
static unsigned majority; /* of the fleet, counted here, not by the library */

static void resource_name(char *buf, size_t size, int res)
{
    snprintf(buf, size, "shared-%d", res);
}

static void count_in_flight(void)
{
    int now = atomic_fetch_add(&in_flight, 1) + 1;
    int seen = atomic_load(&max_in_flight);
    while (now > seen && !atomic_compare_exchange_weak(&max_in_flight, &seen, now))
        ;
}

/* Masters that hold lock's value according to an inspect result. */
static unsigned masters_with_value(const redlock_result *r, const redlock_lock *lock)
{
    const char *value = redlock_lock_value(lock, NULL);
    unsigned n = 0;
    for (unsigned i = 0; i < r->master_count; i++)
        n += r->masters[i].value != NULL && strcmp(r->masters[i].value, value) == 0;
    return n;
}

/* Inside the critical section: extend, inspect. */
static void use_lock(redlock_lock *lock, const char *name)
{
    redlock_result *r = NULL;
    int rc = redlock_sync_extend(shared, lock, TTL_MS, &r);
    CHECK(rc == REDLOCK_OK, "extend of a held lock: %s", redlock_status_name(rc));
    if (r != NULL) {
        CHECK(r->validity_ms > 0 && r->validity_ms < TTL_MS, "validity %lld",
              (long long)r->validity_ms);
        redlock_result_free(r);
    }
    CHECK(redlock_lock_state(lock) == REDLOCK_LOCK_HELD, "state %s",
          redlock_lock_state_name(redlock_lock_state(lock)));

    rc = redlock_sync_inspect(shared, name, strlen(name), &r);
    CHECK(rc == REDLOCK_OK, "inspect: %s", redlock_status_name(rc));
    if (r != NULL) {
        unsigned holding = masters_with_value(r, lock);
        CHECK(r->quorum == majority, "quorum %u of %u masters", r->quorum, r->master_count);
        CHECK(holding >= majority, "%s: our value on %u masters only", name, holding);
        redlock_result_free(r);
    }
}

static void *contend(void *arg)
{
    int id = (int)(uintptr_t)arg + 1;
    redlock_acquire_options o = fleet_acquire_options(TTL_MS, 1000);
    o.retry_delay_ms = 5;
    o.retry_jitter_ms = 10;
    for (int round = 0; round < ROUNDS && tc_now_ms() < deadline_ms; round++) {
        int res = (id + round) % RESOURCES;
        char name[32];
        resource_name(name, sizeof(name), res);
        redlock_lock *lock = NULL;
        count_in_flight();
        int rc = redlock_sync_acquire(shared, name, strlen(name), &o, &lock, NULL);
        atomic_fetch_sub(&in_flight, 1);
        CHECK(rc == REDLOCK_OK, "thread %d, round %d: acquire %s: %s", id, round, name,
              redlock_status_name(rc));
        if (rc != REDLOCK_OK)
            continue;
        int was = atomic_exchange(&holder[res], id);
        CHECK(was == 0, "%s: thread %d got it while thread %d held it", name, id, was);
        atomic_fetch_add(&acquired[res], 1);

        use_lock(lock, name);

        was = atomic_exchange(&holder[res], 0);
        CHECK(was == id, "%s: thread %d found thread %d's mark", name, id, was);
        rc = redlock_sync_release(shared, lock, NULL);
        CHECK(rc == REDLOCK_OK, "release of a held lock: %s", redlock_status_name(rc));
        CHECK(redlock_lock_state(lock) == REDLOCK_LOCK_RELEASED, "state after release");
        redlock_lock_free(lock);
    }
    return NULL;
}

/* Counters only grow, and never show more locks held than threads. */
static void check_stats(redlock_stats *last)
{
    static redlock_stats now; /* only the pinger reads them */
    now.size = sizeof(now);
    CHECK(redlock_sync_stats(shared, &now) == REDLOCK_OK, "redlock_sync_stats");
    CHECK(now.locks_held <= THREADS, "%llu locks held", (unsigned long long)now.locks_held);
    CHECK(now.acquires[0] >= last->acquires[0] && now.releases >= last->releases &&
              now.masters[0].requests >= last->masters[0].requests,
          "a counter went down");
    *last = now;
}

static void *ping_along(void *arg)
{
    (void)arg;
    static redlock_stats last;
    while (!atomic_load(&contenders_done) && tc_now_ms() < deadline_ms) {
        check_stats(&last);
        redlock_result *r = NULL;
        int rc = redlock_sync_ping(shared, &r);
        CHECK(rc == REDLOCK_OK, "ping: %s", redlock_status_name(rc));
        /* Every master answers, or at worst is slow: under ThreadSanitizer
         * beside the failover runs a reply can miss its 300 ms. Anything
         * else (an error, a refusal, a lost connection) fails, named. */
        for (unsigned i = 0; r != NULL && i < r->master_count; i++) {
            const redlock_master_result *m = &r->masters[i];
            CHECK(m->outcome == REDLOCK_MASTER_OK || m->outcome == REDLOCK_MASTER_TIMEOUT,
                  "ping: master %u %s (%s)", i, redlock_master_outcome_name(m->outcome),
                  m->detail != NULL ? m->detail : "no detail");
        }
        redlock_result_free(r);
        atomic_fetch_add(&pings, 1);
        tc_sleep_ms(2);
    }
    return NULL;
}

void scenario_contention(fleet *masters, redlock_config *cfg)
{
    REQUIRE(redlock_sync_new(&shared, cfg) == REDLOCK_OK, "redlock_sync_new");
    majority = (unsigned)fleet_size(masters) / 2 + 1;
    deadline_ms = tc_now_ms() + (double)fleet_scaled_ms(RUN_LIMIT_MS);
    pthread_t threads[THREADS];
    pthread_t pinger;
    run_threads(&pinger, 1, ping_along);
    run_threads(threads, THREADS, contend);
    join_threads(threads, THREADS);
    atomic_store(&contenders_done, true);
    join_threads(&pinger, 1);
    static redlock_stats s;
    s.size = sizeof(s);
    CHECK(redlock_sync_stats(shared, &s) == REDLOCK_OK, "redlock_sync_stats");
    const uint64_t rounds = (uint64_t)THREADS * ROUNDS;
    CHECK(s.acquires[0] == rounds && s.releases == rounds && s.extends == rounds,
          "stats: %llu acquires, %llu extends, %llu releases", (unsigned long long)s.acquires[0],
          (unsigned long long)s.extends, (unsigned long long)s.releases);
    CHECK(s.locks_held == 0, "stats: %llu locks held", (unsigned long long)s.locks_held);
    uint64_t holds = 0;
    for (size_t b = 0; b < REDLOCK_STATS_BUCKETS; b++)
        holds += s.hold_ms[b];
    CHECK(holds == rounds, "stats: %llu holds", (unsigned long long)holds);
    redlock_sync_free(shared);

    int total = 0;
    for (int r = 0; r < RESOURCES; r++) {
        CHECK(atomic_load(&acquired[r]) > 0, "resource %d never acquired", r);
        total += atomic_load(&acquired[r]);
    }
    CHECK(total == THREADS * ROUNDS, "%d of %d acquisitions", total, THREADS * ROUNDS);
    /* Operations of different threads really were in flight together. */
    CHECK(atomic_load(&max_in_flight) > 1, "never more than one acquire in flight");
    CHECK(atomic_load(&pings) > 0, "no ping completed");
    for (int r = 0; r < RESOURCES; r++) {
        char name[32];
        resource_name(name, sizeof(name), r);
        for (size_t i = 0; i < fleet_size(masters); i++)
            CHECK(fleet_pttl(masters, i, name, strlen(name)) == -2, "master %zu kept %s", i,
                  name);
    }
}
