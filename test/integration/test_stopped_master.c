/* SPDX-License-Identifier: BSD-3-Clause */
/* A stopped master (SIGSTOP) keeps its connection and answers nothing.
 * What the client holds for it stays bounded: at most max_in_flight
 * requests sent and unanswered; the rest wait in the client, where they
 * are dropped unsent once their rounds are decided and the master has
 * answered nothing for half its stall timeout (or is in its handshake) --
 * but a release still follows a SET that went out. Behind a handshake that is never
 * answered, the same: a window's worth waits to go out with it. Once it
 * answers again, requests go out to it again. */
#include "harness.h"
#include "context/context.h"
#include "lock/lock.h"
#include "master/master.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#define TTL_MS 120000
#define EXTRA 100U /* acquires beyond the bound */

static harness h;

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(stopped_master, .fini = teardown, .timeout = 120);

typedef struct tally {
    unsigned asked, done, ok, unsent;
} tally;

static void count_acquired(int status, redlock_lock *lock, const redlock_result *r, void *arg)
{
    tally *t = arg;
    t->done++;
    if (status == REDLOCK_OK)
        t->ok++;
    const redlock_master_result *first = &r->masters[0];
    if (first->outcome == REDLOCK_MASTER_NOT_CONNECTED && first->detail != NULL &&
        strcmp(first->detail, RL_MASTER_FULL_DETAIL) == 0)
        t->unsent++;
    redlock_lock_free(lock); /* the keys expire; the test does not need them */
}

static bool all_done(harness *hh, void *arg)
{
    const tally *t = arg;
    return t->done == t->asked;
}

static bool first_master_answered_all(harness *hh, void *arg)
{
    return hh->client->masters[0].in_flight == 0;
}

static bool others_ready(harness *hh, void *arg)
{
    const redlock_client *client = hh->client;
    return client->masters[1].state == RL_MASTER_READY &&
           client->masters[2].state == RL_MASTER_READY;
}

/* Three masters. Submitting all the acquires keeps the loop busy for a
 * while (seconds on a loaded machine, under valgrind): the command timeout
 * is far above that, and the TTL above the timeouts, at any time scale. */
static void start(void)
{
    harness_start(&h, 3, NULL);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_TTL_MS, fleet_scaled_ms(TTL_MS)), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, fleet_scaled_ms(30000)),
                 REDLOCK_OK);
}

/* Connected to every master. */
static void connect_all(void)
{
    harness_connect(&h);
    redlock_result *r = NULL;
    cr_assert_eq(harness_ping(&h, &r), REDLOCK_OK);
    cr_assert_eq(fleet_result_count(r, REDLOCK_MASTER_OK), 3);
    redlock_result_free(r);
}

/* n acquires at once, each on its own resource and with one attempt (so
 * each is counted once), and their results. */
static void acquire_many(tally *t, unsigned n)
{
    redlock_acquire_options once = fleet_acquire_options(fleet_scaled_ms(TTL_MS), 0);
    for (unsigned i = 0; i < n; i++) {
        char key[32];
        int len = snprintf(key, sizeof(key), "stopped:%u", t->asked++);
        cr_assert_eq(redlock_acquire_async(h.client, key, (size_t)len, &once, count_acquired, t),
                     REDLOCK_OK);
    }
    cr_assert(harness_wait_until(&h, all_done, t, 20000), "%u of %u acquires done", t->done,
              t->asked);
}

/* window + EXTRA acquires at once, each decided by the other two masters:
 * master 0 holds a window's worth of them (sent, or behind its handshake);
 * of the rest, queued_after still wait for room once their rounds are
 * decided. */
static void more_than_a_window(size_t queued_after)
{
    const rl_master *m = &h.client->masters[0];
    tally t = {0};
    acquire_many(&t, (unsigned)m->window + EXTRA);
    cr_expect_eq(m->in_flight + m->queued, m->window, "%zu requests sent to it, %zu queued",
                 m->in_flight, m->queued);
    cr_expect_eq(m->queue.count, queued_after, "%zu requests wait for room", m->queue.count);
    cr_expect_eq(t.ok, t.asked, "%u of %u acquired: two of three masters suffice", t.ok,
                 t.asked);
    cr_expect_eq(t.unsent, 0);
}

/* Stopped while connected: the requests sent to it stay within the window,
 * the rest wait and are dropped once the others decided, but the release
 * of a lock whose SET went out is still sent; it catches up once resumed. */
Test(stopped_master, bounds_requests_in_flight_to_a_stopped_master)
{
    start();
    connect_all();
    cr_assert_eq(fleet_pause(h.fleet, 0), 0);
    redlock_lock *held = NULL;
    cr_assert_eq(harness_acquire(&h, "held", 4, NULL, &held, NULL), REDLOCK_OK); /* SET sent */
    /* Stopped for less than half its stall timeout, it may be merely busy:
     * what is queued for it stays, in the client, to go out in turn. */
    more_than_a_window(EXTRA + 1);

    redlock_result *r = NULL;
    cr_assert_eq(harness_release(&h, held, &r), REDLOCK_OK);
    expect_master(r, 0, REDLOCK_MASTER_PENDING, NULL); /* sent after its SET */
    redlock_result_free(r);
    redlock_lock_free(held);

    cr_assert_eq(fleet_resume(h.fleet, 0), 0);
    const rl_master *m = &h.client->masters[0];
    cr_assert(harness_wait_until(&h, first_master_answered_all, NULL, 10000),
              "%zu requests still unanswered", m->in_flight);
    cr_expect_eq(fleet_pttl(h.fleet, 0, "held", 4), -2, "the release undid the SET");
    redlock_lock *lock = NULL;
    cr_assert_eq(harness_acquire(&h, "after", 5, NULL, &lock, &r), REDLOCK_OK);
    expect_master_or_pending(r, 0, REDLOCK_MASTER_OK, NULL);
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
}

/* Stopped before the client connects: its handshake is never answered,
 * and what waits behind it stays bounded the same way. */
Test(stopped_master, bounds_requests_queued_behind_a_stalled_handshake)
{
    start();
    /* Long enough to stay connecting throughout, at any time scale. */
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_CONNECT_TIMEOUT_MS, fleet_scaled_ms(20000)),
                 REDLOCK_OK);
    cr_assert_eq(fleet_pause(h.fleet, 0), 0);
    harness_connect(&h); /* master 0 connects; its handshake waits */
    cr_assert(harness_wait_until(&h, others_ready, NULL, 2000));
    more_than_a_window(0); /* in its handshake: answering nothing */
    cr_expect_eq(h.client->masters[0].state, RL_MASTER_CONNECTING);
    cr_assert_eq(fleet_resume(h.fleet, 0), 0); /* the queue goes out, the client can close */
}
