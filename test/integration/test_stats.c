/* SPDX-License-Identifier: BSD-3-Clause */
/* redlock_client_stats(): the counters say what the tests did, the
 * histograms add up, and a master's connection state and reconnects are
 * seen. */
#include "harness.h"

#include <criterion/criterion.h>
#include <stddef.h>
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

TestSuite(stats, .init = five_masters, .fini = teardown, .timeout = 90);

/* The client's counters now (static: the struct is some 28 KiB). */
static const redlock_stats *snapshot(void)
{
    static redlock_stats s;
    memset(&s, 0xab, sizeof(s)); /* every field must be written */
    s.size = sizeof(s);
    cr_assert_eq(redlock_client_stats(h.client, &s), REDLOCK_OK);
    cr_assert_eq(s.size, sizeof(s));
    cr_assert_eq(s.master_count, 5);
    return &s;
}

static uint64_t sum(const uint64_t *v, size_t n)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += v[i];
    return total;
}

/* Master i no longer ready: the client saw it go. */
static bool master_down(harness *hh, void *arg)
{
    (void)hh;
    return snapshot()->masters[*(const unsigned *)arg].state != REDLOCK_CONNECTION_READY;
}

/* Requests with a reply: everything but timeouts and no connection. */
static uint64_t replied(const redlock_master_stats *m)
{
    return sum(m->outcomes, REDLOCK_STATS_OUTCOMES) - m->outcomes[REDLOCK_MASTER_TIMEOUT] -
           m->outcomes[REDLOCK_MASTER_NOT_CONNECTED] + m->late;
}

Test(stats, refuses_what_it_cannot_fill)
{
    harness_connect(&h);
    /* The first version's struct ended with masters[]. */
    redlock_stats s = {.size = offsetof(redlock_stats, restarts) - 1};
    cr_assert_eq(redlock_client_stats(h.client, &s), REDLOCK_EINVAL);
    s.size = sizeof(s);
    cr_assert_eq(redlock_client_stats(NULL, &s), REDLOCK_EINVAL);
    cr_assert_eq(redlock_client_stats(h.client, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_sync_stats(NULL, &s), REDLOCK_EINVAL);
    cr_assert_str_eq(redlock_connection_state_name(REDLOCK_CONNECTION_READY), "ready");
    cr_assert_str_eq(redlock_connection_state_name(42), "unknown");
}

/* redlock_stats_init(): a struct the stats calls take as it is, every
 * byte zero but the size. */
Test(stats, the_initialiser_sets_the_size_and_zeroes_the_rest)
{
    harness_connect(&h);
    static redlock_stats s;
    memset(&s, 0xab, sizeof(s));
    redlock_stats_init(&s);
    cr_assert_eq(s.size, sizeof(s));
    const unsigned char *bytes = (const unsigned char *)&s;
    for (size_t i = sizeof(s.size); i < sizeof(s); i++)
        cr_assert_eq(bytes[i], 0, "byte %zu not zeroed", i);
    cr_assert_eq(redlock_client_stats(h.client, &s), REDLOCK_OK);
    cr_assert_eq(s.master_count, 5);
}

Test(stats, count_what_the_client_did)
{
    harness_connect(&h);
    cr_assert_eq(harness_ping(&h, NULL), REDLOCK_OK);
    const redlock_stats *s = snapshot();
    for (unsigned i = 0; i < 5; i++) {
        cr_assert_eq(s->masters[i].state, REDLOCK_CONNECTION_READY, "master %u", i);
        cr_assert_eq(s->masters[i].connects, 1);
        cr_assert_eq(s->masters[i].requests, 1, "the ping alone");
        cr_assert_eq(s->masters[i].outcomes[REDLOCK_MASTER_OK], 1);
    }
    cr_assert_eq(sum(s->acquires, REDLOCK_STATS_STATUSES), 0);

    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    redlock_lock *lock = NULL;
    cr_assert_eq(harness_acquire(&h, "counted", 7, &o, &lock, NULL), REDLOCK_OK);
    cr_assert_eq(snapshot()->locks_held, 1);
    redlock_lock *refused = NULL;
    cr_assert_eq(harness_acquire(&h, "counted", 7, &o, &refused, NULL), REDLOCK_ECONFLICT);
    cr_assert_eq(harness_extend(&h, lock, 10000, NULL), REDLOCK_OK);
    harness_run_for(&h, 130);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    /* A release of a lock no longer held fails. */
    cr_assert_eq(redlock_lock_new(&lock, "counted", 7, "not-mine", 8, 0), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_ENOTOWNER);
    redlock_lock_free(lock);
    /* The last masters' replies, however slow the machine. */
    cr_assert(harness_wait_all_answered(&h, 5000), "requests still in flight");

    s = snapshot();
    cr_assert_eq(s->acquires[0], 1);
    cr_assert_eq(s->acquires[-REDLOCK_ECONFLICT], 1);
    cr_assert_eq(sum(s->acquires, REDLOCK_STATS_STATUSES), 2);
    cr_assert_eq(s->extends, 1);
    cr_assert_eq(s->extend_failures, 0);
    cr_assert_eq(s->releases, 1);
    cr_assert_eq(s->release_failures, 1);
    cr_assert_eq(s->locks_held, 0);
    cr_assert_eq(s->locks_lost, 0);
    /* One hold, of at least the 130 ms waited: bucket [128, 256) or above. */
    cr_assert_eq(sum(s->hold_ms, REDLOCK_STATS_BUCKETS), 1);
    cr_assert_geq(s->hold_sum_ms, 130);
    cr_assert_eq(sum(s->hold_ms, 8), 0, "a hold of %llu ms below 128", (unsigned long long)s->hold_sum_ms);
    uint64_t held_elsewhere = 0;
    for (unsigned i = 0; i < 5; i++) {
        const redlock_master_stats *m = &s->masters[i];
        /* ping, acquire, refused acquire, extend, release, failed release,
         * and where the refused acquire's SET was still in flight when
         * it was decided, its cleanup's release: each counted once. */
        cr_assert(m->requests == 6 || m->requests == 7, "master %u: %llu requests", i,
                  (unsigned long long)m->requests);
        cr_assert_eq(sum(m->outcomes, REDLOCK_STATS_OUTCOMES), m->requests);
        cr_assert_eq(m->outcomes[REDLOCK_MASTER_OK], 4, "master %u", i);
        held_elsewhere += m->outcomes[REDLOCK_MASTER_HELD] + m->outcomes[REDLOCK_MASTER_ABSENT];
        /* The histogram counts every reply, and its sum is theirs. */
        cr_assert_eq(sum(m->latency_us, REDLOCK_STATS_BUCKETS), replied(m));
        cr_assert_gt(m->latency_sum_us, 0);
        cr_assert_lt(m->latency_sum_us, UINT64_C(6000000));
    }
    /* The refused acquire and the failed release everywhere (and the
     * cleanup's releases). */
    cr_assert_geq(held_elsewhere, 10);
}

/* A master killed shows down, its requests not connected; back, it counts
 * a second connect. A lock lost to a stopped majority is counted lost. */
Test(stats, a_master_down_and_back_and_a_lock_lost)
{
    harness_connect(&h);
    cr_assert_eq(harness_ping(&h, NULL), REDLOCK_OK);
    cr_assert_eq(fleet_kill(h.fleet, 4), 0);
    unsigned killed = 4;
    cr_assert(harness_wait_until(&h, master_down, &killed, 5000), "master 4 still ready");
    redlock_acquire_options o = fleet_acquire_options(1000, 0);
    redlock_lock *lock = NULL;
    cr_assert_eq(harness_acquire(&h, "lost", 4, &o, &lock, NULL), REDLOCK_OK);
    const redlock_stats *s = snapshot();
    cr_assert_eq(s->masters[4].outcomes[REDLOCK_MASTER_NOT_CONNECTED], 1);
    cr_assert_eq(s->masters[4].requests, 1, "only the ping went out");
    cr_assert_eq(fleet_restart(h.fleet, 4), 0);
    for (int i = 0; i < 50 && snapshot()->masters[4].state != REDLOCK_CONNECTION_READY; i++)
        harness_run_for(&h, 100);
    s = snapshot();
    cr_assert_eq(s->masters[4].state, REDLOCK_CONNECTION_READY);
    cr_assert_eq(s->masters[4].connects, 2);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);

    cr_assert_eq(harness_acquire(&h, "lost", 4, &o, &lock, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, NULL, NULL), REDLOCK_OK);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_pause(h.fleet, i), 0);
    for (int i = 0; i < 40 && redlock_lock_state(lock) != REDLOCK_LOCK_LOST; i++)
        harness_run_for(&h, 100);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_resume(h.fleet, i), 0);
    cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_LOST);
    s = snapshot();
    /* Whether an extension failed first, or the guard gave the lock up
     * while one was still in flight (a slow run, valgrind), depends on
     * timing: only the loss itself is certain. */
    cr_assert_eq(s->locks_lost, 1);
    cr_assert_eq(s->locks_held, 0);
    cr_assert_eq(sum(s->hold_ms, REDLOCK_STATS_BUCKETS), 2);
    redlock_lock_free(lock);

    /* Freeing a held handle ends its hold too. */
    cr_assert_eq(harness_acquire(&h, "freed", 5, &o, &lock, NULL), REDLOCK_OK);
    cr_assert_eq(snapshot()->locks_held, 1);
    redlock_lock_free(lock);
    cr_assert_eq(snapshot()->locks_held, 0);
}

static bool restarts_known(harness *hh, void *arg)
{
    (void)arg;
    static redlock_stats s;
    s.size = sizeof(s);
    if (redlock_client_stats(hh->client, &s) != REDLOCK_OK)
        return false;
    for (unsigned i = 0; i < s.master_count; i++)
        if (s.restarts[i].state == REDLOCK_RESTART_UNKNOWN)
            return false;
    return true;
}

/* Each master's restart state (docs/safety.md, "Masters restarted
 * empty"): masters started moments ago are excluded for a client that does
 * not declare them durable, with the time left; one declared durable
 * counts. A caller with the first version's size gets restarts[] left
 * alone. */
Test(stats, each_masters_restart_state)
{
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_DURABLE, 0), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_MAX_TTL_MS, 30000), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_TTL_MS, 10000), REDLOCK_OK);
    cr_assert_eq(redlock_config_node_set_durable(h.cfg, 0, 1), REDLOCK_OK);
    harness_connect(&h);
    cr_assert(harness_wait_until(&h, restarts_known, NULL, 5000), "a master's run never read");
    const redlock_stats *s = snapshot();
    cr_assert_eq(s->restarts[0].state, REDLOCK_RESTART_COUNTS);
    cr_assert_eq(s->restarts[0].excluded_ms, 0);
    cr_assert_eq(s->restarts[0].age_ms, -1);
    for (unsigned i = 1; i < 5; i++) {
        const redlock_master_restart *r = &s->restarts[i];
        cr_assert_eq(r->state, REDLOCK_RESTART_EXCLUDED, "master %u: %d", i, r->state);
        /* 30 s and the drift allowance from a start moments ago. */
        cr_assert(r->excluded_ms > 20000 && r->excluded_ms <= 31000, "master %u: %lld ms", i,
                  (long long)r->excluded_ms);
        cr_assert(r->age_ms >= 0 && r->age_ms < 10000, "master %u: age %lld ms", i,
                  (long long)r->age_ms);
    }

    static redlock_stats old;
    memset(&old, 0xab, sizeof(old));
    old.size = offsetof(redlock_stats, restarts);
    cr_assert_eq(redlock_client_stats(h.client, &old), REDLOCK_OK);
    cr_assert_eq(old.master_count, 5);
    const unsigned char *tail = (const unsigned char *)&old.restarts;
    for (size_t i = 0; i < sizeof(old.restarts); i++)
        cr_assert_eq(tail[i], 0xab, "byte %zu past the size given was written", i);
}
