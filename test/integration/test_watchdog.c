/* SPDX-License-Identifier: BSD-3-Clause */
/* Auto-extension and lock-lost notification, inspect and ping, and locks
 * released by freeing their client. */
#include "harness.h"

#include <criterion/criterion.h>
#include <poll.h>
#include <string.h>
#include <time.h>

static harness h;

static void five_masters(void)
{
    harness_start(&h, 5, NULL);
}

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(watchdog, .init = five_masters, .fini = teardown, .timeout = 90);

typedef struct lost_record {
    int calls;
    int status;
    int64_t validity_at_loss_ms;
    double at_ms;
} lost_record;

static void record_loss(int status, redlock_lock *lock, void *arg)
{
    lost_record *rec = arg;
    rec->calls++;
    rec->status = status;
    rec->validity_at_loss_ms = redlock_lock_validity_ms(lock);
    rec->at_ms = tc_now_ms();
    cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_LOST);
}

static bool lost_called(harness *hh, void *arg)
{
    (void)hh;
    return ((lost_record *)arg)->calls > 0;
}

static redlock_lock *acquire(const char *resource, int64_t ttl_ms)
{
    redlock_lock *lock = NULL;
    redlock_acquire_options o = fleet_acquire_options(ttl_ms, 0);
    cr_assert_eq(harness_acquire(&h, resource, strlen(resource), &o, &lock, NULL), REDLOCK_OK);
    return lock;
}

static size_t masters_holding(const redlock_lock *lock)
{
    size_t len;
    size_t value_len;
    const void *res = redlock_lock_resource(lock, &len);
    const char *value = redlock_lock_value(lock, &value_len);
    return fleet_count_value(h.fleet, res, len, value, value_len);
}

Test(watchdog, keeps_a_lock_alive_for_many_ttls)
{
    harness_connect(&h);
    redlock_lock *lock = acquire("kept", 600);
    lost_record rec = {0};
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, record_loss, &rec), REDLOCK_OK);
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, record_loss, &rec), REDLOCK_EBUSY);
    harness_run_for(&h, 2500); /* four TTLs */
    cr_assert_eq(rec.calls, 0);
    cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_HELD);
    cr_assert_gt(redlock_lock_validity_ms(lock), 200);
    cr_assert_geq(masters_holding(lock), 3);
    long long pttl = fleet_pttl(h.fleet, 0, "kept", 4);
    cr_assert(pttl > 0 && pttl <= 600, "PTTL %lld", pttl);

    /* Releasing stops the extension; nothing is lost, nothing remains. */
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_RELEASED);
    harness_run_for(&h, 800);
    cr_assert_eq(rec.calls, 0);
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(fleet_pttl(h.fleet, i, "kept", 4), -2);
    redlock_lock_free(lock);
}

Test(watchdog, a_stopped_majority_loses_the_lock_before_its_validity_ends)
{
    harness_connect(&h);
    redlock_lock *lock = acquire("stopped", 1500);
    lost_record rec = {0};
    int fd = -1;
    cr_assert_eq(redlock_lock_lost_fd(lock, &fd), REDLOCK_OK);
    cr_assert_geq(fd, 0);
    int again = -1;
    cr_assert_eq(redlock_lock_lost_fd(lock, &again), REDLOCK_OK);
    cr_assert_eq(again, fd, "one fd per handle");
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, record_loss, &rec), REDLOCK_OK);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_pause(h.fleet, i), 0);
    double paused_at = tc_now_ms();
    cr_assert(harness_wait_until(&h, lost_called, &rec, 5000), "never told the lock was lost");
    cr_assert_eq(rec.calls, 1);
    /* Told while validity remained (at most ttl/6 = 250 ms of it). */
    cr_assert_gt(rec.validity_at_loss_ms, 0, "told too late");
    cr_assert_leq(rec.validity_at_loss_ms, 260);
    cr_assert_lt(rec.at_ms - paused_at, 1500.0);
    cr_assert(rec.status == REDLOCK_ENOQUORUM, "status %s", redlock_status_name(rec.status));
    cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_LOST);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    cr_assert_eq(poll(&p, 1, 0), 1, "the lost fd must be readable");
    cr_assert(strstr(h.log, "lost stopped: lock lost") != NULL, "%s", h.log);

    /* The lost lock can still be released (to clean the live masters); once
     * the stopped masters run again the key is gone or expires. */
    harness_release(&h, lock, NULL);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_resume(h.fleet, i), 0);
    harness_run_for(&h, 100);
    for (size_t i = 0; i < 5; i++) {
        long long pttl = fleet_pttl(h.fleet, i, "stopped", 7);
        cr_assert(pttl == -2 || (pttl > 0 && pttl <= 1500), "master %zu: PTTL %lld", i, pttl);
    }
    redlock_lock_free(lock);
}

Test(watchdog, a_lock_taken_over_is_lost_at_once)
{
    harness_connect(&h);
    redlock_lock *lock = acquire("taken", 3000);
    lost_record rec = {0};
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, record_loss, &rec), REDLOCK_OK);
    /* Someone overwrites the key everywhere (an operator, a broken client). */
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(fleet_set(h.fleet, i, "taken", 5, "intruder", 8, 60000), 0);
    double t0 = tc_now_ms();
    cr_assert(harness_wait_until(&h, lost_called, &rec, 3000));
    cr_assert_eq(rec.status, REDLOCK_ENOTOWNER);
    /* At the first extension (ttl/3), not at the guard. */
    cr_assert_lt(tc_now_ms() - t0, 1500.0);
    /* The masters said the value is not ours: no validity to rely on. */
    cr_assert_leq(rec.validity_at_loss_ms, 0);
    redlock_lock_free(lock);
    /* The intruder's key is untouched. */
    cr_assert_eq(fleet_count_value(h.fleet, "taken", 5, "intruder", 8), 5);
}

static bool held_everywhere(harness *hh, void *arg)
{
    (void)hh;
    return masters_holding(arg) == 5;
}

typedef struct first_extension {
    redlock_lock *lock;
    double deadline_ms; /* before the first extension */
} first_extension;

/* The lock's deadline moved up (by the tick's time, a tenth of the
 * interval or more): extended. */
static bool extended_once(harness *hh, void *arg)
{
    (void)hh;
    const first_extension *f = arg;
    return tc_now_ms() + (double)redlock_lock_validity_ms(f->lock) > f->deadline_ms + 500;
}

Test(watchdog, a_failed_shorter_extend_by_the_holder_moves_the_guard)
{
    /* The holder extends its auto-extended lock to a shorter TTL while three
     * masters are stopped: the extend fails, and the lock's validity is cut
     * to the short TTL. The guard, armed from the old validity, must follow
     * it: the lock is declared lost while validity remains, not after. */
    harness_connect(&h);
    redlock_lock *lock = acquire("guarded", 30000);
    cr_assert(harness_wait_until(&h, held_everywhere, lock, 3000));
    lost_record rec = {0};
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, record_loss, &rec), REDLOCK_OK);
    /* Its first extension, drawn anywhere within the first interval, is
     * let through first: the next is a whole interval later. */
    first_extension first = {lock, tc_now_ms() + (double)redlock_lock_validity_ms(lock)};
    cr_assert(harness_wait_until(&h, extended_once, &first, 15000),
              "the first auto-extension never came");
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_pause(h.fleet, i), 0);
    int64_t short_ttl = fleet_scaled_ms(1000);
    cr_assert_eq(harness_extend(&h, lock, short_ttl, NULL), REDLOCK_ENOQUORUM);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_resume(h.fleet, i), 0);
    cr_assert_leq(redlock_lock_validity_ms(lock), short_ttl);
    cr_assert(harness_wait_until(&h, lost_called, &rec, 1000),
              "not told the lock was lost before its validity (%lld ms) ended",
              (long long)redlock_lock_validity_ms(lock));
    cr_assert_eq(rec.calls, 1);
    cr_assert_gt(rec.validity_at_loss_ms, 0, "told too late");
    cr_assert(rec.status == REDLOCK_ENOQUORUM, "status %s", redlock_status_name(rec.status));
    cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_LOST);
    redlock_lock_free(lock);
}

Test(watchdog, a_shorter_ttl_set_by_the_holder_is_kept_extended)
{
    /* A successful extend by the holder to a shorter TTL: the next automatic
     * extension comes a third of that TTL later, not of the old one. */
    harness_connect(&h);
    redlock_lock *lock = acquire("shortened", 30000);
    lost_record rec = {0};
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, record_loss, &rec), REDLOCK_OK);
    cr_assert_eq(harness_extend(&h, lock, 600, NULL), REDLOCK_OK);
    harness_run_for(&h, 2000); /* three TTLs */
    cr_assert_eq(rec.calls, 0, "lost with %s", redlock_status_name(rec.status));
    cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_HELD);
    cr_assert_geq(masters_holding(lock), 3);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
}

static void record_status(int status, const redlock_result *result, void *arg)
{
    (void)result;
    *(int *)arg = status;
}

Test(watchdog, a_release_refused_as_busy_leaves_the_extension_running)
{
    /* The holder's own extend is in flight: a release is refused with
     * EBUSY, and must change nothing, auto-extension included. */
    harness_connect(&h);
    redlock_lock *lock = acquire("refused", 600);
    lost_record rec = {0};
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, record_loss, &rec), REDLOCK_OK);
    int extended = 1;
    cr_assert_eq(redlock_extend_async(h.client, lock, 0, record_status, &extended), REDLOCK_OK);
    cr_assert_eq(redlock_release_async(h.client, lock, NULL, NULL), REDLOCK_EBUSY);
    cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_HELD);
    harness_run_for(&h, 2000); /* three TTLs */
    cr_assert_eq(extended, REDLOCK_OK);
    cr_assert_eq(rec.calls, 0, "lost with %s", redlock_status_name(rec.status));
    cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_HELD, "no longer extended");
    cr_assert_geq(masters_holding(lock), 3);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
}

Test(watchdog, freeing_the_handle_stops_the_extension)
{
    harness_connect(&h);
    redlock_lock *lock = acquire("forgotten", 400);
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, NULL, NULL), REDLOCK_OK);
    harness_run_for(&h, 300);
    redlock_lock_free(lock);
    harness_run_for(&h, 800); /* longer than a TTL without extensions */
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(fleet_pttl(h.fleet, i, "forgotten", 9), -2);
}

Test(watchdog, the_holder_may_still_extend_and_releases_while_an_extension_is_in_flight)
{
    harness_connect(&h);
    redlock_lock *lock = acquire("both", 300);
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, NULL, NULL), REDLOCK_OK);
    cr_assert_eq(harness_extend(&h, lock, 0, NULL), REDLOCK_OK);
    /* Release right when the first automatic extension goes out. */
    harness_run_for(&h, 100);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    harness_run_for(&h, 400);
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(fleet_pttl(h.fleet, i, "both", 4), -2);
    redlock_lock_free(lock);
}

Test(watchdog, auto_extension_needs_a_known_validity)
{
    harness_connect(&h);
    redlock_lock *adopted = NULL;
    cr_assert_eq(redlock_lock_new(&adopted, "x", 1, "v", 1, 1000), REDLOCK_OK);
    cr_assert_eq(redlock_lock_state(adopted), REDLOCK_LOCK_UNKNOWN);
    cr_assert_eq(redlock_auto_extend_async(h.client, adopted, NULL, NULL), REDLOCK_EINVAL);
    redlock_lock_free(adopted);
    redlock_lock *lock = acquire("brief", 100);
    harness_run_for(&h, 150);
    cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_EXPIRED);
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, NULL, NULL), REDLOCK_EEXPIRED);
    redlock_lock_free(lock);
    cr_assert_str_eq(redlock_lock_state_name(REDLOCK_LOCK_LOST), "lost");
    cr_assert_str_eq(redlock_lock_state_name(42), "invalid");
}

Test(watchdog, freeing_the_client_releases_what_it_holds)
{
    harness_connect(&h);
    redlock_lock *plain = acquire("plain", 30000);
    redlock_lock *extended = acquire("extended", 30000);
    cr_assert_eq(redlock_auto_extend_async(h.client, extended, NULL, NULL), REDLOCK_OK);
    harness_run_for(&h, 50);
    cr_assert_geq(masters_holding(plain), 3);
    harness_free_client(&h);
    cr_assert_eq(redlock_lock_state(plain), REDLOCK_LOCK_RELEASED);
    cr_assert_eq(redlock_lock_state(extended), REDLOCK_LOCK_RELEASED);
    cr_assert_eq(masters_holding(plain), 0);
    cr_assert_eq(masters_holding(extended), 0);
    redlock_lock_free(plain);
    redlock_lock_free(extended);
}

Test(watchdog, inspect_shows_every_masters_value_and_pttl)
{
    harness_connect(&h);
    redlock_lock *lock = acquire("seen", 20000);
    harness_run_for(&h, 50);
    cr_assert_eq(fleet_kill(h.fleet, 4), 0);
    harness_run_for(&h, 50);

    cr_assert_eq(redlock_inspect_async(h.client, "seen", 4, NULL, NULL), REDLOCK_EINVAL);
    redlock_result *r = NULL;
    cr_assert_eq(harness_inspect(&h, "seen", 4, &r), REDLOCK_OK);
    cr_assert_eq(r->master_count, 5);
    for (unsigned i = 0; i < 4; i++) {
        cr_assert_eq(r->masters[i].outcome, REDLOCK_MASTER_OK);
        cr_assert_not_null(r->masters[i].value);
        cr_assert_str_eq(r->masters[i].value, redlock_lock_value(lock, NULL));
        cr_assert(r->masters[i].pttl_ms > 19000 && r->masters[i].pttl_ms <= 20000);
    }
    cr_assert_eq(r->masters[4].outcome, REDLOCK_MASTER_NOT_CONNECTED);
    redlock_result_free(r);

    /* An absent key: no value, PTTL -2. */
    cr_assert_eq(harness_inspect(&h, "nothing", 7, &r), REDLOCK_OK);
    cr_assert_null(r->masters[0].value);
    cr_assert_eq(r->masters[0].pttl_ms, -2);
    redlock_result_free(r);

    cr_assert_eq(harness_ping(&h, &r), REDLOCK_OK);
    for (unsigned i = 0; i < 4; i++) {
        cr_assert_eq(r->masters[i].outcome, REDLOCK_MASTER_OK);
        cr_assert_geq(r->masters[i].latency_us, 0);
    }
    cr_assert_eq(r->masters[4].outcome, REDLOCK_MASTER_NOT_CONNECTED);
    redlock_result_free(r);
    redlock_lock_free(lock);
}

Test(watchdog, an_extension_short_of_masters_is_retried_not_given_up)
{
    /* One master forgot the key (restarted empty), two are stopped: the
     * extension hears "ours" from two, "absent" from one and nothing from
     * two. That is no quorum for now, not "not ours": the lock is kept and
     * extended again once the stopped masters answer. */
    harness_connect(&h);
    redlock_lock *lock = acquire("short", 3000);
    harness_run_for(&h, 50);
    lost_record rec = {0};
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, record_loss, &rec), REDLOCK_OK);
    cr_assert_eq(fleet_restart(h.fleet, 0), 0);
    cr_assert_eq(fleet_pause(h.fleet, 1), 0);
    cr_assert_eq(fleet_pause(h.fleet, 2), 0);
    harness_run_for(&h, 1500); /* the first extension (at 1 s) falls short */
    cr_assert_eq(rec.calls, 0, "given up with %s", redlock_status_name(rec.status));
    cr_assert_eq(fleet_resume(h.fleet, 1), 0);
    cr_assert_eq(fleet_resume(h.fleet, 2), 0);
    harness_run_for(&h, 2000); /* past the first TTL: retries got through */
    cr_assert_eq(rec.calls, 0, "given up with %s", redlock_status_name(rec.status));
    cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_HELD);
    cr_assert_gt(redlock_lock_validity_ms(lock), 1000);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
}

/* max_hold_ms: extension stops at the cap, counted from the acquire; the
 * holder is told as for a loss; the keys then expire on their own. */
Test(watchdog, max_hold_stops_the_extension_and_tells_the_holder)
{
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_MAX_HOLD_MS, fleet_scaled_ms(1000)),
                 REDLOCK_OK);
    harness_connect(&h);
    double acquired_ms = tc_now_ms();
    redlock_lock *lock = acquire("capped", 400);
    lost_record rec = {0};
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, record_loss, &rec), REDLOCK_OK);
    cr_assert(harness_wait_until(&h, lost_called, &rec, 5000), "the cap never stopped it");
    cr_assert_eq(rec.status, REDLOCK_EMAXHOLD, "lost with %s", redlock_status_name(rec.status));
    double held_ms = rec.at_ms - acquired_ms;
    cr_assert(held_ms >= fleet_scaled_ms(1000) && held_ms < fleet_scaled_ms(1300),
              "stopped after %.0f ms held, the cap being %lld ms", held_ms,
              (long long)fleet_scaled_ms(1000));
    /* Extended past its first TTL, then no more: the keys expire. */
    cr_assert_geq(masters_holding(lock), 3, "the keys went at the cap");
    cr_assert(harness_wait_key_gone(&h, "capped", 6, 2000), "the keys were extended past the cap");
    cr_assert_eq(rec.calls, 1);
    cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_LOST);
    redlock_lock_free(lock);
}

/* The log line of each automatic extension names the lock's resource. */
Test(watchdog, the_auto_extension_log_line_names_the_resource)
{
    harness_connect(&h);
    redlock_lock *lock = acquire("named-job", 600);
    lost_record rec = {0};
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, record_loss, &rec), REDLOCK_OK);
    harness_run_for(&h, 700); /* more than one extension */
    cr_assert_eq(rec.calls, 0);
    cr_assert_not_null(strstr(h.log, "lock named-job auto-extended: "), "%s", h.log);
    cr_assert_null(strstr(h.log, "lock auto-extended:"), "%s", h.log);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
}

/* A TTL the extension cycle can never keep (an extension a third of it
 * after the last, the lock lost a sixth of it before the validity ends)
 * is refused as an invalid argument, the reason and the smallest TTL that
 * works in the log; the lock is left as it was. */
Test(watchdog, a_ttl_too_short_to_keep_extended_is_refused)
{
    harness_connect(&h);
    redlock_lock *lock = NULL;
    redlock_acquire_options o = fleet_acquire_options(10, 5);
    cr_assert_eq(harness_acquire(&h, "brief", 5, &o, &lock, NULL), REDLOCK_OK);
    lost_record rec = {0};
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, record_loss, &rec), REDLOCK_EINVAL);
    cr_assert_not_null(strstr(h.log, "auto-extend brief: a TTL of 10 ms is too short to keep "
                                     "extended; the smallest that works is "),
                       "%s", h.log);
    cr_assert_eq(rec.calls, 0);
    cr_assert_neq(redlock_lock_state(lock), REDLOCK_LOCK_LOST);
    redlock_lock_free(lock);
}
