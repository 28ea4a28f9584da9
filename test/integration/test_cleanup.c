/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What an acquire attempt leaves behind: nothing. Every master that may
 * hold a value of ours once the attempt failed gets it released, however
 * the SET got there: answered in time, answered after its deadline (before
 * or after the decision), queued behind a handshake, or applied by a master
 * whose connection then dropped. Masters are stopped (SIGSTOP) and resumed
 * by timers on the client's loop, so each reply comes at a chosen moment.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#define COMMAND_MS 100        /* the command timeout: short, so A times out */
#define LATE_MS 400           /* when a master that timed out answers */
#define LATER_MS 800          /* when the last master answers */
#define SLOW_COMMAND_MS 10000 /* the masters that answer late on purpose */
#define SLOW_CONNECT_MS 5000  /* a handshake held up on purpose */
#define TTL_MS 30000          /* far longer than any test: a key left is seen */
#define THEIRS "theirs"       /* another holder's value */

static harness h;

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(cleanup, .fini = teardown, .timeout = 120);

/* Three masters with a short command timeout; master i's own timeouts may
 * be changed before harness_connect(). The config's TTL stays above the
 * slow masters' timeouts, as a client requires. */
static void three_masters(void)
{
    harness_start(&h, 3, NULL);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, fleet_scaled_ms(COMMAND_MS)),
                 REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_TTL_MS, fleet_scaled_ms(TTL_MS)), REDLOCK_OK);
}

static void slow_master(size_t i, int64_t connect_ms, int64_t command_ms)
{
    cr_assert_eq(redlock_config_node_set_timeouts(h.cfg, i, fleet_scaled_ms(connect_ms),
                                                  fleet_scaled_ms(command_ms)),
                 REDLOCK_OK);
}

/* ---- What the masters hold -------------------------------------------------- */

/* Master i holds key with a value of ours (not another holder's): 1 yes,
 * 0 no, -1 cannot tell. value (NUL-terminated) gets what it holds. */
static int holds_ours(const fleet *f, size_t i, const char *key, char value[64])
{
    size_t len = 0;
    int found = fleet_get(f, i, key, strlen(key), value, 63, &len);
    value[found == 1 && len < 63 ? len : 0] = '\0';
    if (found <= 0)
        return found;
    return strcmp(value, THEIRS) != 0;
}

/* No running master holds key, except with another holder's value. */
static bool nothing_of_ours(harness *hh, void *arg)
{
    const char *key = arg;
    for (size_t i = 0; i < fleet_size(hh->fleet); i++) {
        char value[64];
        if (fleet_pid(hh->fleet, i) != 0 && !fleet_is_paused(hh->fleet, i) &&
            holds_ours(hh->fleet, i, key, value) != 0)
            return false;
    }
    return true;
}

static void expect_nothing_of_ours(const char *key)
{
    bool clean = harness_wait_until(&h, nothing_of_ours, (void *)key, 3000);
    for (size_t i = 0; !clean && i < fleet_size(h.fleet); i++) {
        char value[64];
        cr_assert_eq(holds_ours(h.fleet, i, key, value), 0, "master %zu kept %s=%s (PTTL %lld ms)",
                     i, key, value, fleet_pttl(h.fleet, i, key, strlen(key)));
    }
    cr_assert(clean);
}

static void give_to_another(size_t i, const char *key)
{
    cr_assert_eq(fleet_set(h.fleet, i, key, strlen(key), THEIRS, strlen(THEIRS), 60000), 0);
}

/* ---- Late replies -------------------------------------------------------- */

/*
 * A's OK comes after its command timeout, while the attempt is still
 * undecided (C, slow, has not answered). It cannot count toward the quorum,
 * but A holds our value: the failed attempt must release it there too, and
 * the result must say what A answered.
 */
Test(cleanup, a_late_ok_before_the_decision_is_released_and_reported)
{
    three_masters();
    slow_master(2, 0, SLOW_COMMAND_MS);
    give_to_another(2, "late");
    harness_connect(&h);
    cr_assert_eq(harness_ping(&h, NULL), REDLOCK_OK); /* every master connected */

    cr_assert_eq(fleet_pause(h.fleet, 0), 0);
    cr_assert_eq(fleet_pause(h.fleet, 2), 0);
    harness_resume_timer a;
    harness_resume_timer c;
    harness_resume_in(&h, &a, 0, LATE_MS);  /* after A's deadline */
    harness_resume_in(&h, &c, 2, LATER_MS); /* after A's late OK: C decides */
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(TTL_MS, 0);
    cr_assert_eq(harness_acquire(&h, "late", 4, &o, NULL, &r), REDLOCK_ENOQUORUM, "status %s",
                 redlock_status_name(r->status));
    expect_nothing_of_ours("late");
    cr_assert_eq(r->masters_locked, 1, "a late OK does not count");
    expect_master(r, 1, REDLOCK_MASTER_OK, NULL);
    expect_master(r, 2, REDLOCK_MASTER_HELD, NULL);
    const redlock_master_result *late = &r->masters[0];
    cr_assert_eq(late->outcome, REDLOCK_MASTER_OK, "A answered OK, shown as %s",
                 redlock_master_outcome_name(late->outcome));
    cr_assert_geq(late->latency_us, fleet_scaled_ms(COMMAND_MS) * 1000);
    cr_assert(late->detail != NULL && strstr(late->detail, "late") != NULL, "detail: %s",
              late->detail ? late->detail : "(none)");
    cr_assert(late->late, "the late OK is flagged");
    cr_assert(!r->masters[1].late && !r->masters[2].late);
    redlock_result_free(r);
}

/* A's OK comes after the attempt was decided without it: the release sent
 * then queued behind the SET on A's connection, so it runs after it. */
Test(cleanup, a_late_ok_after_the_decision_is_released_behind_its_set)
{
    three_masters();
    give_to_another(2, "later");
    harness_connect(&h);
    cr_assert_eq(harness_ping(&h, NULL), REDLOCK_OK);

    cr_assert_eq(fleet_pause(h.fleet, 0), 0);
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(TTL_MS, 0);
    cr_assert_eq(harness_acquire(&h, "later", 5, &o, NULL, &r), REDLOCK_ENOQUORUM);
    expect_master(r, 0, REDLOCK_MASTER_TIMEOUT, NULL);
    redlock_result_free(r);
    cr_assert_eq(fleet_resume(h.fleet, 0), 0);
    expect_nothing_of_ours("later");
}

/* ---- Requests queued behind a handshake ----------------------------------- */

/*
 * A quorum that answers too slowly for any validity (drift_factor 0.99
 * leaves 98 ms of a 10 s TTL): EEXPIRED. C was still in its handshake, its
 * SET queued: it must not go out once C connects.
 */
Test(cleanup, an_expired_attempt_sends_no_queued_set)
{
    three_masters();
    cr_assert_eq(redlock_config_set_drift_factor(h.cfg, 0.99), REDLOCK_OK);
    slow_master(1, 0, SLOW_COMMAND_MS);
    slow_master(2, SLOW_CONNECT_MS, 0);
    cr_assert_eq(fleet_pause(h.fleet, 2), 0); /* its handshake waits */
    harness_connect(&h);
    harness_wait_connected(&h, 0);
    harness_wait_connected(&h, 1);

    cr_assert_eq(fleet_pause(h.fleet, 1), 0);
    harness_resume_timer b;
    harness_resume_in(&h, &b, 1, LATE_MS); /* B's OK makes a quorum, too late */
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    cr_assert_eq(harness_acquire(&h, "expired", 7, &o, NULL, &r), REDLOCK_EEXPIRED, "status %s",
                 redlock_status_name(r->status));
    cr_assert_eq(r->masters_locked, 2);
    redlock_result_free(r);
    cr_assert_eq(fleet_resume(h.fleet, 2), 0);
    harness_wait_connected(&h, 2);
    expect_nothing_of_ours("expired");
}

static void record_status(int status, const redlock_result *r, void *arg)
{
    *(int *)arg = status;
}

/*
 * A lock taken while C was still in its handshake: its SET waits for C. The
 * release, started and at once canceled by freeing the client (as a
 * command-line tool does), queues behind that SET: it must never be
 * withdrawn while the SET still goes. (C was never ready, so neither goes
 * out: the free does not wait for it. A master ready before, connecting
 * again, gets both: test_connection.c.)
 */
Test(cleanup, a_release_queued_behind_a_set_survives_freeing_the_client)
{
    three_masters();
    slow_master(2, SLOW_CONNECT_MS, 0);
    cr_assert_eq(fleet_pause(h.fleet, 2), 0);
    harness_connect(&h);
    harness_wait_connected(&h, 0);
    harness_wait_connected(&h, 1);

    redlock_lock *lock = NULL;
    redlock_acquire_options o = fleet_acquire_options(TTL_MS, 0);
    cr_assert_eq(harness_acquire(&h, "queued", 6, &o, &lock, NULL), REDLOCK_OK);
    int status = 1;
    cr_assert_eq(redlock_release_async(h.client, lock, record_status, &status), REDLOCK_OK);
    redlock_client_free(h.client);
    h.client = NULL;
    cr_assert_eq(status, REDLOCK_ECANCELED);
    cr_assert_eq(fleet_resume(h.fleet, 2), 0);
    harness_free_client(&h); /* C's handshake completes, its queue goes out */
    redlock_lock_free(lock);
    expect_nothing_of_ours("queued");
}

/* ---- A reply lost with its connection ----------------------------------------- */

/*
 * A stops with our SET unanswered; after ten command timeouts (at least a
 * second) its connection is closed as stalled, so the SET's reply is lost,
 * but the SET itself is still in A's socket and runs when A resumes. The
 * attempt fails (C holds the key for another) while A waits to reconnect:
 * A must get the release once it is connected again.
 */
Test(cleanup, a_set_whose_reply_was_lost_is_released_after_reconnecting)
{
    three_masters();
    /* A reconnects 1.5 to 1.9 s after it was dropped: after C decides. */
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RECONNECT_MIN_MS, fleet_scaled_ms(1500)),
                 REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RECONNECT_MAX_MS, fleet_scaled_ms(3000)),
                 REDLOCK_OK);
    slow_master(2, 0, SLOW_COMMAND_MS);
    give_to_another(2, "lost");
    harness_connect(&h);
    cr_assert_eq(harness_ping(&h, NULL), REDLOCK_OK);

    cr_assert_eq(fleet_pause(h.fleet, 0), 0);
    cr_assert_eq(fleet_pause(h.fleet, 2), 0);
    harness_resume_timer c;
    harness_resume_in(&h, &c, 2, 2000); /* after A's connection was closed as stalled */
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(TTL_MS, 0);
    cr_assert_eq(harness_acquire(&h, "lost", 4, &o, NULL, &r), REDLOCK_ENOQUORUM, "status %s",
                 redlock_status_name(r->status));
    expect_master(r, 0, REDLOCK_MASTER_TIMEOUT, NULL);
    redlock_result_free(r);
    cr_assert(strstr(h.log, "no reply for") != NULL, "A was not dropped as stalled; log:\n%s",
              h.log);
    cr_assert_eq(fleet_resume(h.fleet, 0), 0); /* runs the SET, then accepts us again */
    expect_nothing_of_ours("lost");
    cr_assert(strstr(h.log, "a release waits for its next connection") != NULL, "log:\n%s",
              h.log);
}

/* Lines of the log that contain needle. */
static size_t log_count(const char *needle)
{
    size_t n = 0;
    for (const char *p = h.log; p != NULL && (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static bool log_has(harness *hh, void *needle)
{
    return hh->log != NULL && strstr(hh->log, needle) != NULL;
}

/* A master out of reach for long is owed more releases than are kept for
 * it: the first one dropped is a warning, the rest are counted and told
 * once when it is back, not a warning each (thousands a second under load). */
Test(cleanup, releases_dropped_for_a_master_out_of_reach_are_told_once_not_each)
{
    harness_start(&h, 3, NULL);
    for (size_t i = 0; i < 2; i++)
        cr_assert_eq(fleet_set(h.fleet, i, "owed", 4, "theirs", 6, 60000), 0);
    /* The stopped master's connection is dropped ten command timeouts
     * after it stopped: 2 s (20 s under valgrind), far longer than the 80
     * attempts take even on a loaded machine, so that all of them are
     * owed when it is. The others' refusals decide each attempt. Its clock
     * is checked before it stops: else each attempt would first wait for
     * that check, up to the connect timeout, and the connection would be
     * dropped a few attempts in. */
    slow_master(2, 200, 200);
    harness_connect(&h);
    cr_assert_eq(harness_ping(&h, NULL), REDLOCK_OK);
    cr_assert(harness_wait_clocks_checked(&h));
    /* Each attempt's SET reaches the stopped master, so its cleanup owes it
     * a release; once the connection is dropped as stalled, they all are. */
    cr_assert_eq(fleet_pause(h.fleet, 2), 0);
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    for (int i = 0; i < 80; i++) {
        int status = harness_acquire(&h, "owed", 4, &o, NULL, NULL);
        cr_assert_eq(status, REDLOCK_ECONFLICT, "attempt %d: %s", i, redlock_status_name(status));
    }
    cr_assert(!log_has(&h, "no reply for"),
              "the stopped master's connection was dropped before the attempts were done; log:\n%s",
              h.log);
    cr_assert(harness_wait_until(&h, log_has, "no reply for", 10000),
              "the stopped master's connection was never dropped");
    harness_run_for(&h, 100);
    cr_assert_eq(log_count("releases already wait for it to reconnect"), 1,
                 "%zu warnings for releases dropped", log_count("releases already wait"));
    cr_assert_eq(fleet_resume(h.fleet, 2), 0);
    cr_assert(harness_wait_until(&h, log_has, "were dropped while it was out of reach", 10000),
              "the releases dropped were not told once it was back");
    harness_run_for(&h, 100);
    cr_assert_eq(log_count("16 releases owed to it were dropped while it was out of reach"), 1,
                 "%s", h.log);
}
