/* SPDX-License-Identifier: BSD-3-Clause */
/* Masters that are not what they should be, played by scripted fakes next
 * to real ones: a dataset still loading, a connection closed in the middle
 * of a reply, a server that is not Redis, one that never answers. Each ends
 * in the right status with the fake's exact reason, within the configured
 * timeouts, with no key of ours left on the real masters. */
#include "fake_master.h"
#include "harness.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <string.h>

#define CONNECT_MS 500
#define COMMAND_MS 250
#define SLACK_MS 3000 /* a loaded machine; a hang would take far longer */
#define TTL_MS 10000
#define MAX_FAKES 2

#define LOADING "LOADING Redis is loading the dataset in memory"

static harness h;
static fake_master *fakes[MAX_FAKES];
static size_t reals;

static void teardown(void)
{
    harness_stop(&h); /* the client first: it is connected to the fakes */
    for (size_t i = 0; i < MAX_FAKES; i++) {
        fake_master_stop(fakes[i]);
        fakes[i] = NULL;
    }
}

TestSuite(fake_masters, .fini = teardown, .timeout = 120);

/*
 * `real` real masters (nodes 0..real-1), then MAX_FAKES fakes in mode. A
 * master that fails waits a minute before reconnecting, so every request of
 * a test sees the same reason for it.
 */
static void start(size_t real, fake_master_mode mode, const char *error_reply)
{
    harness_start(&h, real, NULL);
    reals = real;
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_CONNECT_TIMEOUT_MS, CONNECT_MS), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, COMMAND_MS), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RECONNECT_MAX_MS, 60000), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RECONNECT_MIN_MS, 60000), REDLOCK_OK);
    for (size_t i = 0; i < MAX_FAKES; i++) {
        fakes[i] = fake_master_start(mode, error_reply);
        cr_assert_not_null(fakes[i]);
        cr_assert_eq(redlock_config_add_tcp_node(h.cfg, "127.0.0.1", fake_master_port(fakes[i]),
                                                 NULL),
                     REDLOCK_OK);
    }
}

/* Every fake ended with outcome and detail. */
static void expect_fakes(const redlock_result *r, int outcome, const char *detail)
{
    for (size_t i = 0; i < MAX_FAKES; i++)
        expect_master(r, reals + i, outcome, detail);
}

/* Every fake ended with outcome and detail, or had not answered when the
 * operation was decided (a quorum of real masters can be faster). */
static void expect_fakes_or_pending(const redlock_result *r, int outcome, const char *detail)
{
    for (size_t i = 0; i < MAX_FAKES; i++)
        expect_master_or_pending(r, reals + i, outcome, detail);
}

static void expect_elapsed_within(const redlock_result *r, int64_t ms)
{
    cr_assert_leq(r->total_ms, ms, "took %lld ms, more than %lld ms", (long long)r->total_ms,
                  (long long)ms);
}

/* No running real master keeps resource. */
static void expect_keys_gone(const char *resource)
{
    cr_assert(harness_wait_key_gone(&h, resource, strlen(resource), 3000),
              "a real master still holds %s", resource);
}

static void free_client_within(double ms)
{
    double took = harness_free_client_timed(&h);
    cr_assert_leq(took, ms, "freeing the client took %.0f ms", took);
}

/* Acquire, release, and the keys are gone: the fakes in a minority do not
 * stop the lock. Returns the acquire's result (free it). */
static redlock_result *lock_and_release(const char *resource)
{
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(TTL_MS, 0);
    cr_assert_eq(harness_acquire(&h, resource, strlen(resource), &o, &lock, &r), REDLOCK_OK);
    cr_assert_eq(r->masters_locked, reals, "only the real masters can lock");
    for (size_t i = 0; i < reals; i++)
        expect_master(r, i, REDLOCK_MASTER_OK, NULL);
    expect_elapsed_within(r, CONNECT_MS + COMMAND_MS + SLACK_MS);
    redlock_result *rr = NULL;
    cr_assert_eq(harness_release(&h, lock, &rr), REDLOCK_OK);
    cr_assert_eq(rr->masters_locked, reals);
    redlock_result_free(rr);
    redlock_lock_free(lock);
    expect_keys_gone(resource);
    return r;
}

/* One real master fewer: the fakes are now a majority of what answers. The
 * failed attempt's key is cleaned off the real masters. */
static redlock_result *acquire_without_quorum(const char *resource, int status)
{
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(TTL_MS, 0);
    cr_assert_eq(harness_acquire(&h, resource, strlen(resource), &o, NULL, &r), status,
                 "status %s", redlock_status_name(r ? r->status : 0));
    cr_assert_leq(r->masters_locked, reals - 1);
    expect_elapsed_within(r, CONNECT_MS + COMMAND_MS + SLACK_MS);
    expect_keys_gone(resource);
    return r;
}

/* A message for the fakes, "127.0.0.1:PORT: <what>", is in the log. */
static bool fakes_logged(harness *hh, void *arg)
{
    for (size_t i = 0; i < MAX_FAKES; i++) {
        char line[256];
        snprintf(line, sizeof(line), "master 127.0.0.1:%d: %s", fake_master_port(fakes[i]),
                 (const char *)arg);
        if (hh->log == NULL || strstr(hh->log, line) == NULL)
            return false;
    }
    return true;
}

/* ---- A dataset still loading ---------------------------------------------- */

/* Redis refuses SCRIPT LOAD while loading: the handshake fails, and the
 * master counts as not connected, with Redis's reason. */
Test(fake_masters, loading_during_the_handshake_keeps_a_master_out)
{
    static const char why[] = "SCRIPT LOAD: " LOADING;
    start(3, FAKE_MASTER_ERROR, LOADING);
    harness_connect(&h);
    redlock_result *r = NULL;
    cr_assert_eq(harness_ping(&h, &r), REDLOCK_OK); /* waits for every master */
    expect_fakes(r, REDLOCK_MASTER_NOT_CONNECTED, why);
    redlock_result_free(r);
    cr_assert(fakes_logged(&h, (void *)why), "log:\n%s", h.log);

    r = lock_and_release("loading");
    expect_fakes(r, REDLOCK_MASTER_NOT_CONNECTED, why);
    redlock_result_free(r);

    cr_assert_eq(fleet_kill(h.fleet, 2), 0);
    r = acquire_without_quorum("loading2", REDLOCK_ENOQUORUM);
    expect_fakes(r, REDLOCK_MASTER_NOT_CONNECTED, why);
    cr_assert_eq(r->masters[2].outcome, REDLOCK_MASTER_NOT_CONNECTED);
    redlock_result_free(r);
    free_client_within(COMMAND_MS + SLACK_MS);
}

/* A master that starts loading after the handshake (a replica resyncing
 * from disk) answers requests with LOADING: an error reply. */
Test(fake_masters, loading_after_the_handshake_is_an_error_reply)
{
    start(3, FAKE_MASTER_ERROR_AFTER_HANDSHAKE, LOADING);
    harness_connect(&h);
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(TTL_MS, 0);
    cr_assert_eq(harness_acquire(&h, "loaded", 6, &o, &lock, &r), REDLOCK_OK);
    cr_assert_eq(r->masters_locked, 3);
    expect_fakes_or_pending(r, REDLOCK_MASTER_ERROR, LOADING);
    redlock_result_free(r);
    cr_assert_eq(harness_extend(&h, lock, TTL_MS, &r), REDLOCK_OK);
    expect_fakes_or_pending(r, REDLOCK_MASTER_ERROR, LOADING);
    redlock_result_free(r);
    cr_assert_eq(harness_inspect(&h, "loaded", 6, &r), REDLOCK_OK); /* waits for every master */
    expect_fakes(r, REDLOCK_MASTER_ERROR, LOADING);
    for (size_t i = 0; i < reals; i++)
        cr_assert_str_eq(r->masters[i].value, redlock_lock_value(lock, NULL));
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, lock, &r), REDLOCK_OK);
    redlock_result_free(r);
    redlock_lock_free(lock);
    expect_keys_gone("loaded");

    /* Two of the four that answer are loading: the errors are the reason. */
    cr_assert_eq(fleet_kill(h.fleet, 2), 0);
    r = acquire_without_quorum("loaded2", REDLOCK_EREPLY);
    expect_fakes(r, REDLOCK_MASTER_ERROR, LOADING);
    redlock_result_free(r);
    free_client_within(COMMAND_MS + SLACK_MS);
}

/* ---- A connection closed in the middle of a reply ---------------------------- */

Test(fake_masters, a_connection_closed_in_the_middle_of_a_reply)
{
    static const char cut[] = "Server closed the connection";
    static const char lost[] = "connection lost: Server closed the connection";
    start(3, FAKE_MASTER_HALF_REPLY, NULL);
    harness_connect(&h);
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(TTL_MS, 0);
    cr_assert_eq(harness_acquire(&h, "cut", 3, &o, &lock, &r), REDLOCK_OK);
    cr_assert_eq(r->masters_locked, 3);
    expect_fakes_or_pending(r, REDLOCK_MASTER_NOT_CONNECTED, cut);
    redlock_result_free(r);
    /* Both hung up half-way through their reply to the SET. */
    cr_assert(harness_wait_until(&h, fakes_logged, (void *)lost, 3000), "log:\n%s", h.log);
    cr_assert_eq(harness_release(&h, lock, &r), REDLOCK_OK);
    expect_fakes(r, REDLOCK_MASTER_NOT_CONNECTED, lost);
    redlock_result_free(r);
    redlock_lock_free(lock);
    expect_keys_gone("cut");

    /* A fresh client, one real master fewer: the half replies decide. */
    free_client_within(COMMAND_MS + SLACK_MS);
    cr_assert_eq(fleet_kill(h.fleet, 2), 0);
    harness_connect(&h);
    r = acquire_without_quorum("cut2", REDLOCK_ENOQUORUM);
    expect_fakes(r, REDLOCK_MASTER_NOT_CONNECTED, cut);
    redlock_result_free(r);
    for (size_t i = 0; i < MAX_FAKES; i++)
        cr_assert_geq(fake_master_connections(fakes[i]), 2);
    free_client_within(COMMAND_MS + SLACK_MS);
}

/* ---- An array too large to be a reply of ours ------------------------------- */

/* hiredis would allocate the announced element table up front; every
 * connection's reader refuses more than RL_READER_MAX_ELEMENTS elements
 * instead, at once, without waiting for the command timeout. */
Test(fake_masters, an_array_header_of_two_billion_elements_is_refused_at_once)
{
#if HIREDIS_MAJOR >= 1
    static const char why[] = "Multi-bulk length out of range";
#else
    static const char why[] = "Out of memory";
#endif
    char lost[64];
    snprintf(lost, sizeof(lost), "connection lost: %s", why);
    start(3, FAKE_MASTER_HUGE_ARRAY, NULL);
    harness_connect(&h);
    redlock_result *r = NULL;
    cr_assert_eq(harness_ping(&h, &r), REDLOCK_OK);
    expect_fakes(r, REDLOCK_MASTER_NOT_CONNECTED, why);
    redlock_result_free(r);

    /* The fakes are out now (reconnecting waits a minute). */
    r = lock_and_release("huge");
    expect_fakes(r, REDLOCK_MASTER_NOT_CONNECTED, lost);
    redlock_result_free(r);

    /* A fresh client, one real master fewer: the refused arrays decide. */
    free_client_within(COMMAND_MS + SLACK_MS);
    cr_assert_eq(fleet_kill(h.fleet, 2), 0);
    harness_connect(&h);
    r = acquire_without_quorum("huge2", REDLOCK_ENOQUORUM);
    expect_fakes(r, REDLOCK_MASTER_NOT_CONNECTED, why);
    redlock_result_free(r);
    free_client_within(COMMAND_MS + SLACK_MS);
}

/* ---- Not Redis at all ----------------------------------------------------------- */

Test(fake_masters, a_server_that_is_not_redis)
{
    static const char why[] = "connection lost: Protocol error, got \"\\xff\" as reply type byte";
    start(3, FAKE_MASTER_GARBAGE, NULL);
    harness_connect(&h);
    redlock_result *r = NULL;
    cr_assert_eq(harness_ping(&h, &r), REDLOCK_OK);
    expect_fakes(r, REDLOCK_MASTER_NOT_CONNECTED, why);
    redlock_result_free(r);

    r = lock_and_release("garbage");
    expect_fakes(r, REDLOCK_MASTER_NOT_CONNECTED, why);
    redlock_result_free(r);

    cr_assert_eq(fleet_kill(h.fleet, 2), 0);
    r = acquire_without_quorum("garbage2", REDLOCK_ENOQUORUM);
    expect_fakes(r, REDLOCK_MASTER_NOT_CONNECTED, why);
    redlock_result_free(r);
    free_client_within(COMMAND_MS + SLACK_MS);
}

/* ---- A server that accepts and never answers ------------------------------------ */

Test(fake_masters, a_server_that_never_answers)
{
    char why[64];
    snprintf(why, sizeof(why), "handshake timed out after %d ms", CONNECT_MS);
    start(3, FAKE_MASTER_SILENT, NULL);
    /* A quorum of real masters decides at once: the silent ones cost
     * nothing (they are still in their handshake). */
    harness_connect(&h);
    redlock_result *r = lock_and_release("silent");
    expect_fakes_or_pending(r, REDLOCK_MASTER_NOT_CONNECTED, why);
    redlock_result_free(r);
    /* The release waits for the silent ones' handshake: bounded by it. */
    free_client_within(CONNECT_MS + COMMAND_MS + SLACK_MS);

    /* Without a quorum of real masters, the attempt lasts until the silent
     * ones' handshake times out, and no longer. */
    cr_assert_eq(fleet_kill(h.fleet, 2), 0);
    harness_connect(&h);
    r = acquire_without_quorum("silent2", REDLOCK_ENOQUORUM);
    expect_fakes(r, REDLOCK_MASTER_NOT_CONNECTED, why);
    cr_assert_geq(r->total_ms, CONNECT_MS * 8 / 10, "decided before the handshakes timed out");
    redlock_result_free(r);
    for (size_t i = 0; i < MAX_FAKES; i++)
        cr_assert_geq(fake_master_connections(fakes[i]), 2);
    free_client_within(COMMAND_MS + SLACK_MS);
}
