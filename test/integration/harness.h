/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Integration-test harness: a fleet of real masters, an asynchronous client
 * on a private libev loop, and blocking helpers that run the loop until an
 * operation's callback fires (bounded by a guard timer, so a bug shows as a
 * failure, never a hang). Log lines are captured for assertions.
 */
#ifndef REDLOCK_TEST_HARNESS_H
#define REDLOCK_TEST_HARNESS_H

#include "fleet.h"
#include "testclock.h"

#include <ev.h>
#include <redlock/redlock.h>
#include <stdbool.h>

#define HARNESS_GUARD_S 30.0 /* no single operation may take longer (times the
                                fleet's time scale) */

typedef struct harness {
    fleet *fleet;
    redlock_config *cfg;   /* fleet_config(), adjustable before harness_connect() */
    struct ev_loop *loop;
    redlock_client *client;
    char *log;             /* every log line so far, '\n'-separated */
    size_t log_len;
    /* If set, called with each log line once it is captured; it may free
     * the client (then set h->client to NULL). */
    void (*on_log)(struct harness *h, const char *message);
} harness;

/* Start n masters (opts may be NULL) and a config for them. Aborts the test
 * on failure. */
void harness_start(harness *h, size_t n, const fleet_options *opts);
/* Create the client from h->cfg. */
void harness_connect(harness *h);
/* Free the client (if any) and run the loop until it has finished (its
 * releases sent, its connections closed): no watcher may be left. */
void harness_free_client(harness *h);
/* harness_free_client(), and how long it took in milliseconds. */
double harness_free_client_timed(harness *h);
/* Free the client (if any), the config, the loop and stop the fleet. */
void harness_stop(harness *h);

/* A stopped master (fleet_pause) resumed by a timer on the client's loop,
 * so that its replies come at a chosen moment of a call in progress. */
typedef struct harness_resume_timer {
    ev_timer timer;
    fleet *fleet;
    size_t master;
} harness_resume_timer;
/* Resume master i ms (scaled) from now, while the loop runs; t must live
 * until then. */
void harness_resume_in(harness *h, harness_resume_timer *t, size_t i, int64_t ms);

/* Blocking wrappers around the asynchronous API. *result_out (if not NULL)
 * gets a copy to free with redlock_result_free(). */
int harness_acquire(harness *h, const void *res, size_t len, const redlock_acquire_options *opts,
                    redlock_lock **lock_out, redlock_result **result_out);
int harness_acquire_many(harness *h, const void *const *res, const size_t *lens, size_t count,
                         const redlock_acquire_options *opts, redlock_lock **lock_out,
                         redlock_result **result_out);
int harness_extend(harness *h, redlock_lock *lock, int64_t ttl_ms, redlock_result **result_out);
int harness_release(harness *h, redlock_lock *lock, redlock_result **result_out);
int harness_inspect(harness *h, const void *res, size_t len, redlock_result **result_out);
int harness_inspect_many(harness *h, const void *const *res, const size_t *lens, size_t count,
                         redlock_result **result_out);
int harness_ping(harness *h, redlock_result **result_out);
int harness_fencing_init(harness *h, uint64_t floor, redlock_result **result_out);

/* Run the loop for ms milliseconds (lets connections settle, replies land). */
void harness_run_for(harness *h, int ms);
/* Run the loop until pred(arg) is true or timeout_ms (times the fleet's time
 * scale) passes; returns pred. */
bool harness_wait_until(harness *h, bool (*pred)(harness *h, void *arg), void *arg,
                        int timeout_ms);

/* Run the loop until no running master holds key (a release or the
 * cleanup of a failed attempt may still be on its way), at most timeout_ms;
 * returns whether it is gone everywhere. */
/* Run the loop until the log says master i connected (its handshake is
 * done), failing the test after 3 s (times the fleet's time scale). */
void harness_wait_connected(harness *h, size_t i);
/* Run the loop until the client has checked the masters' clocks as its
 * first acquire waits for (redlock_client_clocks_checked); whether it has,
 * within 3 s (times the fleet's time scale). */
bool harness_wait_clocks_checked(harness *h);
bool harness_wait_key_gone(harness *h, const void *key, size_t len, int timeout_ms);
/* Run the loop until every master has answered every request of the
 * client's (none in flight or queued); whether it has within timeout_ms. */
bool harness_wait_all_answered(harness *h, int timeout_ms);

/* Whether any master's detail in r contains needle. */
bool result_detail_contains(const redlock_result *r, const char *needle);

/* Fail unless master i of r ended with outcome and exactly detail (NULL:
 * no detail). */
void expect_master(const redlock_result *r, size_t i, int outcome, const char *detail);
/* The same, or the master had not answered when the operation was decided
 * (others made the quorum first): outcome pending, no detail. */
void expect_master_or_pending(const redlock_result *r, size_t i, int outcome, const char *detail);

/* How many configs the program has freed so far (every
 * redlock_config_free() is counted): a client frees its private copy when
 * it is freed at last, so the count going up tells that it was. */
unsigned harness_configs_freed(void);

#endif
