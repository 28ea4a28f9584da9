/* SPDX-License-Identifier: BSD-3-Clause */
/* A master that does not answer (stopped: SIGSTOP) is one of five. An
 * acquire it would hold up decides without it once it is known not to
 * answer: it left a request unanswered past its deadline, or it is
 * connecting again after its connection was lost. Its outcome shows as
 * pending. Contended by several clients, the lock changes hands: the
 * attempts that lose decide and release at once instead of sitting on the
 * answering masters for the stopped one's timeouts. A client's first
 * connection is waited for, as first use must. */
#include "harness.h"
#include "context/context.h"
#include "master/master.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define STOPPED 4 /* the last of five */

static harness h;

static void teardown(void)
{
    if (h.fleet != NULL && fleet_is_paused(h.fleet, STOPPED) == 1)
        fleet_resume(h.fleet, STOPPED);
    harness_stop(&h);
}

TestSuite(stopped_master_rounds, .fini = teardown, .timeout = 120);

/* Five masters, a short command timeout (its stall timeout is then the
 * 1 s minimum) and a long connect timeout, so that a handshake never
 * answered is told from a round decided without it. */
static void start(int64_t connect_timeout_ms)
{
    harness_start(&h, 5, NULL);
    /* Above the timeouts, or the config is refused. */
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_TTL_MS, fleet_scaled_ms(10000)), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, fleet_scaled_ms(50)),
                 REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_CONNECT_TIMEOUT_MS,
                                    fleet_scaled_ms(connect_timeout_ms)),
                 REDLOCK_OK);
}

static void connect_all(void)
{
    harness_connect(&h);
    redlock_result *r = NULL;
    cr_assert_eq(harness_ping(&h, &r), REDLOCK_OK);
    cr_assert_eq(fleet_result_count(r, REDLOCK_MASTER_OK), 5);
    redlock_result_free(r);
    /* Else an acquire's warm-up waits for the stopped master's clock. */
    cr_assert(harness_wait_clocks_checked(&h));
}

/* The lock is free: the others grant it; the stopped master is left
 * with the SET (and the release after it) unanswered. */
static void acquire_free(const char *resource)
{
    redlock_acquire_options once = fleet_acquire_options(fleet_scaled_ms(10000), 0);
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    cr_assert_eq(harness_acquire(&h, resource, strlen(resource), &once, &lock, &r), REDLOCK_OK);
    cr_assert_geq(fleet_result_count(r, REDLOCK_MASTER_OK), 3); /* decided at a quorum */
    expect_master(r, STOPPED, REDLOCK_MASTER_PENDING, NULL);
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
}

/* A contender holds the resource on masters 2 and 3: with masters 0 and 1
 * saying yes, only the stopped master could make the quorum. One attempt;
 * its result. */
static int acquire_contested(redlock_result **r)
{
    for (size_t i = 2; i < 4; i++)
        cr_assert_eq(fleet_set(h.fleet, i, "contested", 9, "theirs", 6, 60000), 0);
    redlock_acquire_options once = fleet_acquire_options(fleet_scaled_ms(10000), 0);
    redlock_lock *lock = NULL;
    double t0 = tc_now_ms();
    int status = harness_acquire(&h, "contested", 9, &once, &lock, r);
    cr_assert_null(lock);
    cr_log_info("decided after %.0f ms", tc_now_ms() - t0);
    return status;
}

/* The attempt left nothing behind on the masters that answered. */
static void expect_cleaned_up(void)
{
    for (size_t i = 0; i < 2; i++) {
        bool gone = false;
        for (int k = 0; k < 100 && !gone; k++) {
            gone = fleet_pttl(h.fleet, i, "contested", 9) == -2;
            if (!gone)
                harness_run_for(&h, 10);
        }
        cr_expect(gone, "master %zu still holds the attempt's key", i);
    }
}

static bool overdue(harness *hh, void *arg)
{
    const rl_master *m = &hh->client->masters[STOPPED];
    return m->in_flight > 0 && rl_now_us() - m->last_progress_us > 2 * m->command_timeout_us;
}

/* Ready, with requests unanswered past their deadline: the attempt is
 * decided by the four that answer, without waiting a command timeout for
 * the fifth. The refusals alone do not rule a quorum out (the fifth's yes
 * would have made one), so the status is ENOQUORUM, as when the fifth
 * timed out. */
Test(stopped_master_rounds, an_overdue_ready_master_is_not_waited_for)
{
    start(3000);
    connect_all();
    cr_assert_eq(fleet_pause(h.fleet, STOPPED), 0);
    acquire_free("free");
    cr_assert(harness_wait_until(&h, overdue, NULL, 2000));
    cr_assert_eq(h.client->masters[STOPPED].state, RL_MASTER_READY, "dropped as stalled already");

    redlock_result *r = NULL;
    cr_expect_eq(acquire_contested(&r), REDLOCK_ENOQUORUM);
    /* Decided once the four that answer have: a round trip. */
    expect_master(r, 0, REDLOCK_MASTER_OK, NULL);
    expect_master(r, 1, REDLOCK_MASTER_OK, NULL);
    expect_master(r, 2, REDLOCK_MASTER_HELD, NULL);
    expect_master(r, 3, REDLOCK_MASTER_HELD, NULL);
    expect_master(r, STOPPED, REDLOCK_MASTER_PENDING, NULL); /* not waited for */
    redlock_result_free(r);
    expect_cleaned_up();
}

static bool reconnecting(harness *hh, void *arg)
{
    return hh->client->masters[STOPPED].state == RL_MASTER_CONNECTING;
}

/* Dropped as stalled, connecting again: its handshake will not be answered
 * before the connect timeout (3 s here); the attempt does not wait for it. */
Test(stopped_master_rounds, a_reconnecting_master_is_not_waited_for)
{
    start(3000);
    connect_all();
    cr_assert_eq(fleet_pause(h.fleet, STOPPED), 0);
    acquire_free("free");
    /* The stall timeout (1 s), then a reconnect after its backoff. */
    cr_assert(harness_wait_until(&h, reconnecting, NULL, 5000), "master %d not reconnecting",
              STOPPED);
    /* Its handshake overdue: a reconnection is waited for a command timeout. */
    harness_run_for(&h, (int)fleet_scaled_ms(100));

    double t0 = tc_now_ms();
    redlock_result *r = NULL;
    cr_expect_eq(acquire_contested(&r), REDLOCK_ENOQUORUM);
    double elapsed = tc_now_ms() - t0;
    expect_master(r, 2, REDLOCK_MASTER_HELD, NULL);
    expect_master(r, 3, REDLOCK_MASTER_HELD, NULL);
    expect_master(r, STOPPED, REDLOCK_MASTER_PENDING, NULL); /* not waited for */
    redlock_result_free(r);
    cr_expect_lt(elapsed, (double)fleet_scaled_ms(1500), "decided after %.0f ms", elapsed);
    expect_cleaned_up();
}

/* A new client's first connection to a master is waited for: nothing says
 * yet that it will not answer, and the wait is bounded by one connect
 * timeout (after it, the master is reconnecting and not waited for). The
 * lock free, the four others grant it; contested, the attempt waits for
 * the handshake and counts the master as not connected. */
Test(stopped_master_rounds, a_first_connection_is_waited_for)
{
    start(1000);
    cr_assert_eq(fleet_pause(h.fleet, STOPPED), 0);
    harness_connect(&h);
    acquire_free("free");
    /* Still in its first handshake: the connect timeout is far off. */
    cr_assert_eq(h.client->masters[STOPPED].state, RL_MASTER_CONNECTING);
    cr_assert_eq(atomic_load(&h.client->masters[STOPPED].stats.connects), 0);

    redlock_result *r = NULL;
    cr_expect_eq(acquire_contested(&r), REDLOCK_ENOQUORUM);
    cr_expect_eq(r->masters[STOPPED].outcome, REDLOCK_MASTER_NOT_CONNECTED, "%s",
                 redlock_master_outcome_name(r->masters[STOPPED].outcome));
    redlock_result_free(r);
}

/* ---- Contention ------------------------------------------------------- */

#define CLIENTS 6
#define HOT_MS 3000

typedef struct worker {
    redlock_client *client;
    redlock_acquire_options opts;
    bool busy;       /* an acquire or release in flight */
    unsigned taken;  /* acquisitions */
    double until_ms; /* no new acquire after this */
} worker;

static void worker_next(worker *w);

static void worker_released(int status, const redlock_result *r, void *arg)
{
    worker *w = arg;
    w->busy = false;
    worker_next(w);
}

static void worker_acquired(int status, redlock_lock *lock, const redlock_result *r, void *arg)
{
    worker *w = arg;
    w->busy = false;
    if (status == REDLOCK_OK) {
        w->taken++;
        w->busy = true;
        if (redlock_release_async(w->client, lock, worker_released, w) != REDLOCK_OK)
            w->busy = false;
        redlock_lock_free(lock);
        if (w->busy)
            return;
    }
    worker_next(w);
}

static void worker_next(worker *w)
{
    if (tc_now_ms() >= w->until_ms)
        return;
    w->busy = redlock_acquire_async(w->client, "hot", 3, &w->opts, worker_acquired, w) ==
              REDLOCK_OK;
}

/* Connected, and every clock checked (else the acquires' warm-up would
 * wait for the stopped master's). */
static bool all_ready(harness *hh, void *arg)
{
    worker *ws = arg;
    for (size_t k = 0; k < CLIENTS; k++) {
        bool checked = false;
        if (redlock_client_clocks_checked(ws[k].client, &checked) != REDLOCK_OK || !checked)
            return false;
        for (size_t i = 0; i < 5; i++)
            if (ws[k].client->masters[i].state != RL_MASTER_READY)
                return false;
    }
    return true;
}

static bool all_idle(harness *hh, void *arg)
{
    worker *ws = arg;
    for (size_t k = 0; k < CLIENTS; k++)
        if (ws[k].busy)
            return false;
    return true;
}

/* Clients contend for one lock, taking and releasing it, while one master
 * of five is stopped: it changes hands many times. Had every contested
 * attempt waited on the stopped master (a command timeout, then a connect
 * timeout per handshake), its keys on the others would keep the next
 * contenders out in turn. */
Test(stopped_master_rounds, a_contended_lock_changes_hands_with_a_master_stopped)
{
    start(1000);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, fleet_scaled_ms(300)),
                 REDLOCK_OK);
    /* Reconnecting at once after each connect timeout: the stopped master
     * is nearly always in a handshake it never finishes (while not
     * connected, requests to it fail at once and hold nothing up). */
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RECONNECT_MAX_MS, 20), REDLOCK_OK);
    worker ws[CLIENTS];
    memset(ws, 0, sizeof(ws));
    for (size_t k = 0; k < CLIENTS; k++) {
        cr_assert_eq(redlock_client_new(&ws[k].client, h.cfg, h.loop), REDLOCK_OK);
        ws[k].opts = fleet_acquire_options(fleet_scaled_ms(2000), 1000000);
        ws[k].opts.retry_delay_ms = 10;
        ws[k].opts.retry_jitter_ms = 10;
    }
    cr_assert(harness_wait_until(&h, all_ready, ws, 5000));
    cr_assert_eq(fleet_pause(h.fleet, STOPPED), 0);
    double until = tc_now_ms() + HOT_MS;
    for (size_t k = 0; k < CLIENTS; k++) {
        ws[k].until_ms = until;
        worker_next(&ws[k]);
    }
    harness_run_for(&h, HOT_MS);
    /* The last acquires give up within their retries' bound once freed. */
    unsigned taken = 0;
    for (size_t k = 0; k < CLIENTS; k++)
        taken += ws[k].taken;
    for (size_t k = 0; k < CLIENTS; k++) {
        ws[k].until_ms = 0;
        redlock_client_free(ws[k].client); /* cancels what is in flight */
    }
    cr_expect(all_idle(&h, ws));
    cr_log_info("acquired %u times in %d ms by %d clients", taken, HOT_MS, CLIENTS);
    /* Measured on loopback: 2000 to 3700 times; 75 to 330 when each
     * contested attempt waited on the stopped master; 551 under ASan on a
     * machine running other tests beside it. Under a stretched time scale
     * (valgrind: 12 times, the timeouts ten times longer), only that it
     * changes hands. */
    unsigned expected = fleet_time_scale() > 1 ? 5 : 400;
    cr_expect_gt(taken, expected, "the lock changed hands %u times in %d ms", taken, HOT_MS);
}
