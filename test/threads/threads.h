/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multi-threaded tests of the blocking client, without Criterion (whose
 * runner cannot run under ThreadSanitizer), so that TSan sees the library's
 * threads at work: many threads sharing one redlock_sync against real
 * masters (test/support/fleet), with faults, auto-extension and the client
 * freed while threads hold locks or wait.
 *
 * Each scenario is a function run on the main thread with a fresh fleet;
 * it starts its own threads and joins them. Checks never stop a thread: a
 * failed CHECK is reported (file, line, condition, message) and counted,
 * and the scenario fails; REQUIRE also ends the process at once, for a
 * precondition the rest cannot run without (the fleet's exit handler stops
 * the servers). Every wait is bounded, and bounds go through
 * fleet_scaled_ms() so a run under a slow tool can stretch them.
 */
#ifndef REDLOCK_TEST_THREADS_H
#define REDLOCK_TEST_THREADS_H

#include "fleet.h"
#include "testclock.h"

#include <pthread.h>
#include <redlock/redlock.h>
#include <stdbool.h>
#include <stdint.h>

/* A scenario: masters is its fleet, cfg a fleet_config() of it that the
 * scenario may change (it is freed after the scenario). */
typedef void scenario_fn(fleet *masters, redlock_config *cfg);

typedef struct scenario {
    const char *name;
    scenario_fn *run;
    size_t masters;    /* fleet size */
    bool appendonly;   /* masters keep their keys across kill -9 */
} scenario;

/* The scenarios, one per file by theme. */
scenario_fn scenario_contention;
scenario_fn scenario_faults;
scenario_fn scenario_lost_fd;
scenario_fn scenario_handles_freed_while_extended;
scenario_fn scenario_free_releases_locks;
scenario_fn scenario_released_locks_never_look_expired;
scenario_fn scenario_free_while_threads_wait;
scenario_fn scenario_handles_freed_while_client_freed;
scenario_fn scenario_cancel_blocked_callers;
scenario_fn scenario_loop_runners;
scenario_fn scenario_cancel_fd_shared;

/* ---- Checks ------------------------------------------------------------ */

#define CHECK(cond, ...)                                                                   \
    ((cond) ? (void)0 : check_failed(__FILE__, __LINE__, #cond, __VA_ARGS__))
#define REQUIRE(cond, ...)                                                                 \
    ((cond) ? (void)0 : require_failed(__FILE__, __LINE__, #cond, __VA_ARGS__))

void check_failed(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
__attribute__((noreturn)) void require_failed(const char *file, int line, const char *cond,
                                              const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Failed checks so far, in any thread. */
int check_failures(void);

/* ---- Holding the I/O thread ------------------------------------------------
 * To order a test's threads against a blocking client's I/O thread: with
 * io_gate_log as the config's log callback (level REDLOCK_LOG_DEBUG),
 * io_gate_close() makes the I/O thread fail one acquire attempt (on a
 * resource someone else holds, from a helper thread) and stay in the log
 * callback until io_gate_open(), which also joins the helper. Requests
 * other threads make meanwhile stay queued. One gate at a time. */

void io_gate_log(int level, const char *message, void *arg);
/* Returns once the I/O thread of sync waits at the gate. */
void io_gate_close(fleet *masters, redlock_sync *sync);
void io_gate_open(void);

/* ---- Helpers ------------------------------------------------------------- */

/* Start n threads running fn(i) for i in 0..n-1 (REQUIREd to succeed), and
 * join them. */
void run_threads(pthread_t *threads, size_t n, void *(*fn)(void *));
void join_threads(pthread_t *threads, size_t n);

#endif
