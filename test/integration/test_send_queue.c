/* SPDX-License-Identifier: BSD-3-Clause */
/* Each master's window of requests in flight (max_in_flight) and the queue
 * behind it, against real masters: what waits there and is no longer
 * wanted is never sent, and a stopped master holds no more than the window,
 * nor, with what waits for room, more than a master may hold. */
#include "harness.h"
#include "slowlog.h"
#include "batch.h"
#include "master.h"
#include "scripts.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MASTERS 3

static harness h;

static void three_masters(void)
{
    harness_start(&h, MASTERS, NULL);
}

static void teardown(void)
{
    for (size_t i = 0; i < MASTERS; i++)
        fleet_resume(h.fleet, i); /* a failed test may leave one stopped */
    harness_stop(&h);
}

TestSuite(send_queue, .init = three_masters, .fini = teardown, .timeout = 120);

typedef struct done {
    bool called;
    int status;
} done;

static void on_done(int status, const redlock_result *r, void *arg)
{
    (void)r;
    done *d = arg;
    d->called = true;
    d->status = status;
}

static bool is_done(harness *hh, void *arg)
{
    (void)hh;
    return ((done *)arg)->called;
}

static uint64_t requests_to(size_t i)
{
    static redlock_stats s = {.size = sizeof(redlock_stats)};
    cr_assert_eq(redlock_client_stats(h.client, &s), REDLOCK_OK);
    return s.masters[i].requests;
}

static bool third_master_asked(harness *hh, void *arg)
{
    (void)hh;
    return requests_to(2) >= *(const uint64_t *)arg;
}

static redlock_lock *acquire(const char *res, int64_t ttl_ms)
{
    redlock_lock *lock = NULL;
    redlock_acquire_options o = fleet_acquire_options(ttl_ms, 0);
    cr_assert_eq(harness_acquire(&h, res, strlen(res), &o, &lock, NULL), REDLOCK_OK);
    return lock;
}

static void ignore_loss(int status, redlock_lock *lock, void *arg)
{
    (void)status;
    (void)lock;
    (void)arg;
}

/* The release of "second" in masters 0's and 1's slow logs. */
static bool released_on_both(harness *hh, void *arg)
{
    (void)arg;
    for (size_t i = 0; i < 2; i++)
        if (slowlog_script_calls(hh->fleet, i, rl_release_script.sha, "second") < 1)
            return false;
    return true;
}

Test(send_queue, an_extension_waiting_for_room_is_never_sent_once_its_lock_is_released)
{
    /* One request in flight per master. Masters 0 and 1 stopped with one
     * request each: the auto-extension of "second" waits there, and goes
     * out to master 2 alone; released meanwhile, it must never reach 0 or 1. */
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_MAX_IN_FLIGHT, 1), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, fleet_scaled_ms(200)),
                 REDLOCK_OK); /* stalled only after 10 of them: longer than the test */
    harness_connect(&h);
    slowlog_every_command(h.fleet, 0);
    slowlog_every_command(h.fleet, 1);
    redlock_lock *first = acquire("first", fleet_scaled_ms(10000));
    redlock_lock *second = acquire("second", fleet_scaled_ms(1500));
    cr_assert_eq(redlock_auto_extend_async(h.client, second, ignore_loss, NULL), REDLOCK_OK);
    cr_assert_eq(fleet_pause(h.fleet, 0), 0);
    cr_assert_eq(fleet_pause(h.fleet, 1), 0);
    /* Fill the windows of 0 and 1. */
    done extended = {0};
    cr_assert_eq(redlock_ping_async(h.client, on_done, &extended), REDLOCK_OK);
    uint64_t want = requests_to(2) + 1; /* the extension of "second", at a third of its TTL */
    cr_assert(harness_wait_until(&h, third_master_asked, &want, 3000),
              "the auto-extension never went out");
    done released = {0};
    cr_assert_eq(redlock_release_async(h.client, second, on_done, &released), REDLOCK_OK);
    cr_assert_eq(fleet_resume(h.fleet, 0), 0);
    cr_assert_eq(fleet_resume(h.fleet, 1), 0);
    cr_assert(harness_wait_until(&h, is_done, &released, 5000));
    cr_assert_eq(released.status, REDLOCK_OK);
    cr_assert(harness_wait_until(&h, is_done, &extended, 5000));
    /* Both resumed masters have run the release (however slow the
     * machine), and anything queued behind it. */
    cr_assert(harness_wait_until(&h, released_on_both, NULL, 5000),
              "the release never reached masters 0 and 1");
    harness_run_for(&h, 100);
    for (size_t i = 0; i < 2; i++) {
        cr_assert_eq(slowlog_script_calls(h.fleet, i, rl_release_script.sha, "second"), 1,
                     "master %zu: the release went out", i);
        cr_expect_eq(slowlog_script_calls(h.fleet, i, rl_extend_script.sha, "second"), 0,
                     "master %zu: the extension of a released lock went out after its release", i);
    }
    redlock_lock_free(second);
    redlock_release_async(h.client, first, NULL, NULL);
    redlock_lock_free(first);
    harness_free_client(&h);
}

typedef struct extended {
    bool called;
    int status;
    int64_t validity_ms;
    int64_t at_ms; /* when decided, on the monotonic clock */
} extended;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_extended(int status, const redlock_result *r, void *arg)
{
    extended *e = arg;
    e->called = true;
    e->status = status;
    e->validity_ms = r != NULL ? r->validity_ms : 0;
    e->at_ms = now_ms();
}

static bool extend_done(harness *hh, void *arg)
{
    (void)hh;
    return ((extended *)arg)->called;
}

Test(send_queue, an_extension_counts_its_validity_from_when_it_was_sent)
{
    /* Every master holds one request, stopped for wait_ms: the extension
     * of "second" waits that long to be sent to each. Its keys live a TTL
     * from the send, and so does its validity: the wait does not cut it. */
    const int64_t ttl_ms = fleet_scaled_ms(3000);
    const int wait_ms = (int)fleet_scaled_ms(400);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_MAX_IN_FLIGHT, 1), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, fleet_scaled_ms(200)),
                 REDLOCK_OK);
    harness_connect(&h);
    redlock_lock *first = acquire("first", ttl_ms);
    redlock_lock *second = acquire("second", ttl_ms);
    for (size_t i = 0; i < MASTERS; i++)
        cr_assert_eq(fleet_pause(h.fleet, i), 0);
    done filler = {0};
    cr_assert_eq(redlock_ping_async(h.client, on_done, &filler), REDLOCK_OK);
    extended ext = {0};
    cr_assert_eq(redlock_extend_async(h.client, second, 0, on_extended, &ext), REDLOCK_OK);
    harness_run_for(&h, wait_ms);
    cr_assert_not(ext.called, "the extension was decided while every master was stopped");
    int64_t resumed_ms = now_ms();
    for (size_t i = 0; i < MASTERS; i++)
        cr_assert_eq(fleet_resume(h.fleet, i), 0);
    cr_assert(harness_wait_until(&h, extend_done, &ext, 5000));
    cr_assert_eq(ext.status, REDLOCK_OK, "%s", redlock_strerror(ext.status));
    /* Counted from the send, the validity loses the time since the masters
     * resumed (their round trips, however slow the machine); counted from
     * the submission, it would lose the wait before too. */
    int64_t drift_ms = ttl_ms / 100 + 2;
    int64_t after_ms = ext.at_ms - resumed_ms;
    cr_expect_gt(ext.validity_ms, ttl_ms - drift_ms - after_ms - wait_ms / 2,
                 "validity %lld ms of a %lld ms TTL after waiting %d ms to be sent, decided "
                 "%lld ms after the masters resumed",
                 (long long)ext.validity_ms, (long long)ttl_ms, wait_ms, (long long)after_ms);
    cr_expect_gt(redlock_lock_validity_ms(second),
                 ttl_ms - drift_ms - (now_ms() - resumed_ms) - wait_ms / 2);
    cr_assert(harness_wait_until(&h, is_done, &filler, 5000));
    cr_assert_eq(harness_release(&h, second, NULL), REDLOCK_OK);
    redlock_lock_free(second);
    redlock_release_async(h.client, first, NULL, NULL);
    redlock_lock_free(first);
    harness_free_client(&h);
}

typedef struct acquired {
    bool called;
    int status;
    redlock_lock *lock;
} acquired;

static void on_acquired(int status, redlock_lock *lock, const redlock_result *r, void *arg)
{
    (void)r;
    acquired *a = arg;
    a->called = true;
    a->status = status;
    a->lock = lock;
}

static bool acquire_done(harness *hh, void *arg)
{
    (void)hh;
    return ((acquired *)arg)->called;
}

Test(send_queue, acquires_are_refused_while_the_masters_are_behind_with_extensions)
{
    /* Every master stopped with its one request in flight. An acquire
     * waits for room a command timeout, is never sent, and says the
     * masters are behind. An extension waits too; once it has waited
     * longer than a command timeout, a new acquire is refused at once. */
    const int64_t timeout_ms = fleet_scaled_ms(200);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_MAX_IN_FLIGHT, 1), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, timeout_ms), REDLOCK_OK);
    harness_connect(&h);
    redlock_lock *first = acquire("first", fleet_scaled_ms(10000));
    redlock_lock *second = acquire("second", fleet_scaled_ms(10000));
    for (size_t i = 0; i < MASTERS; i++)
        cr_assert_eq(fleet_pause(h.fleet, i), 0);
    done filler = {0};
    cr_assert_eq(redlock_ping_async(h.client, on_done, &filler), REDLOCK_OK);

    acquired waited = {0};
    redlock_acquire_options once = fleet_acquire_options(fleet_scaled_ms(10000), 0);
    cr_assert_eq(redlock_acquire_async(h.client, "third", 5, &once, on_acquired, &waited),
                 REDLOCK_OK);
    cr_assert(harness_wait_until(&h, acquire_done, &waited, 5000));
    cr_assert_eq(waited.status, REDLOCK_EOVERLOAD, "%s", redlock_strerror(waited.status));

    extended ext = {0};
    cr_assert_eq(redlock_extend_async(h.client, second, 0, on_extended, &ext), REDLOCK_OK);
    harness_run_for(&h, (int)(2 * timeout_ms));
    acquired refused = {0};
    cr_assert_eq(redlock_acquire_async(h.client, "fourth", 6, &once, on_acquired, &refused),
                 REDLOCK_EOVERLOAD, "an acquire while the extensions are behind");
    cr_assert_not(refused.called);

    for (size_t i = 0; i < MASTERS; i++)
        cr_assert_eq(fleet_resume(h.fleet, i), 0);
    cr_assert(harness_wait_until(&h, extend_done, &ext, 5000));
    cr_assert_eq(ext.status, REDLOCK_OK, "%s", redlock_strerror(ext.status));
    cr_assert(harness_wait_until(&h, is_done, &filler, 5000));
    /* Caught up: acquires go out again. */
    acquired again = {0};
    cr_assert_eq(redlock_acquire_async(h.client, "fifth", 5, &once, on_acquired, &again),
                 REDLOCK_OK);
    cr_assert(harness_wait_until(&h, acquire_done, &again, 5000));
    cr_assert_eq(again.status, REDLOCK_OK, "%s", redlock_strerror(again.status));
    redlock_release_async(h.client, again.lock, NULL, NULL);
    redlock_lock_free(again.lock);
    redlock_release_async(h.client, second, NULL, NULL);
    redlock_lock_free(second);
    redlock_release_async(h.client, first, NULL, NULL);
    redlock_lock_free(first);
    harness_free_client(&h);
}

typedef struct release_count {
    size_t done;
    size_t at_extension; /* releases done when the extension completed */
} release_count;

static void on_one_released(int status, const redlock_result *r, void *arg)
{
    (void)status;
    (void)r;
    ((release_count *)arg)->done++;
}

typedef struct extension_watch {
    extended ext;
    release_count *releases;
} extension_watch;

static void on_watched_extension(int status, const redlock_result *r, void *arg)
{
    extension_watch *w = arg;
    w->releases->at_extension = w->releases->done;
    on_extended(status, r, &w->ext);
}

static bool watched_done(harness *hh, void *arg)
{
    (void)hh;
    return ((extension_watch *)arg)->ext.called;
}

Test(send_queue, a_flood_of_releases_does_not_starve_the_extension_of_a_lock_still_held)
{
    /* Every master stopped with its one request in flight; 256 releases
     * and then an extension wait behind it. The extension goes out after
     * one batch of releases at most, not after all of them. */
    enum { RELEASES = 256 };
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_MAX_IN_FLIGHT, 1), REDLOCK_OK);
    /* The TTL first: a command timeout must stay below it. */
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_TTL_MS, fleet_scaled_ms(60000)), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, fleet_scaled_ms(2000)),
                 REDLOCK_OK);
    harness_connect(&h);
    redlock_lock *held = acquire("held", fleet_scaled_ms(20000));
    static redlock_lock *flood[RELEASES];
    for (size_t i = 0; i < RELEASES; i++) {
        char name[32];
        snprintf(name, sizeof(name), "flood:%zu", i);
        flood[i] = acquire(name, fleet_scaled_ms(20000));
    }
    for (size_t i = 0; i < MASTERS; i++)
        cr_assert_eq(fleet_pause(h.fleet, i), 0);
    done filler = {0};
    cr_assert_eq(redlock_ping_async(h.client, on_done, &filler), REDLOCK_OK);
    release_count releases = {0};
    for (size_t i = 0; i < RELEASES; i++) {
        cr_assert_eq(redlock_release_async(h.client, flood[i], on_one_released, &releases),
                     REDLOCK_OK);
        redlock_lock_free(flood[i]);
    }
    extension_watch w = {.releases = &releases};
    cr_assert_eq(redlock_extend_async(h.client, held, 0, on_watched_extension, &w), REDLOCK_OK);
    for (size_t i = 0; i < MASTERS; i++)
        cr_assert_eq(fleet_resume(h.fleet, i), 0);
    cr_assert(harness_wait_until(&h, watched_done, &w, 10000));
    cr_assert_eq(w.ext.status, REDLOCK_OK, "%s", redlock_strerror(w.ext.status));
    cr_expect_leq(releases.at_extension, RL_BATCH_MAX,
                  "the extension waited for %zu releases", releases.at_extension);
    redlock_release_async(h.client, held, NULL, NULL);
    redlock_lock_free(held);
    harness_free_client(&h);
}

/* Pings submitted at once to a stopped master: more than it may hold. */
#define PINGS (RL_MASTER_MAX_OUTSTANDING + 100)

typedef struct pings {
    size_t done;
    size_t refused; /* master 0 refused it unsent: too many wait for it */
} pings;

static void on_ping(int status, const redlock_result *r, void *arg)
{
    (void)status;
    pings *p = arg;
    p->done++;
    const redlock_master_result *first = &r->masters[0];
    if (first->outcome == REDLOCK_MASTER_NOT_CONNECTED && first->detail != NULL &&
        strcmp(first->detail, RL_MASTER_FULL_DETAIL) == 0)
        p->refused++;
}

static bool pings_done(harness *hh, void *arg)
{
    (void)hh;
    const pings *p = arg;
    return p->done == PINGS;
}

Test(send_queue, a_stopped_master_holds_no_more_than_the_bound_however_many_wait_for_room)
{
    /* One request in flight per master, master 0 stopped: all but one of
     * the pings submitted at once wait for room there. What it holds, sent
     * or waiting, stays within RL_MASTER_MAX_OUTSTANDING; the rest are
     * refused unsent. */
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_MAX_IN_FLIGHT, 1), REDLOCK_OK);
    harness_connect(&h);
    cr_assert_eq(harness_ping(&h, NULL), REDLOCK_OK);
    cr_assert_eq(fleet_pause(h.fleet, 0), 0);
    pings p = {0};
    for (size_t i = 0; i < PINGS; i++)
        cr_assert_eq(redlock_ping_async(h.client, on_ping, &p), REDLOCK_OK);
    static redlock_stats s = {.size = sizeof(redlock_stats)};
    cr_assert_eq(redlock_client_stats(h.client, &s), REDLOCK_OK);
    cr_expect_leq(s.masters[0].in_flight + s.masters[0].queued, RL_MASTER_MAX_OUTSTANDING,
                  "master 0 holds %llu requests in flight and %llu queued",
                  (unsigned long long)s.masters[0].in_flight,
                  (unsigned long long)s.masters[0].queued);
    cr_assert(harness_wait_until(&h, pings_done, &p, 5000), "%zu of %d pings done", p.done,
              PINGS);
    cr_expect_eq(p.refused, PINGS - RL_MASTER_MAX_OUTSTANDING, "%zu pings refused at master 0",
                 p.refused);
    cr_assert_eq(fleet_resume(h.fleet, 0), 0);
    harness_free_client(&h);
}
