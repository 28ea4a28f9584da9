/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Who runs a blocking client's loop. A caller that finds it parked runs it
 * itself; what must not wait for the next call goes to the I/O thread: the
 * replies a call leaves outstanding (here those of a stopped master), and
 * an auto-extended lock, whose on_lost runs there. Once nothing is
 * outstanding the loop is parked again.
 */
#include "client/sync.h"
#include "config/config_internal.h"
#include "lock/lock.h"
#include "threads.h"

#define BOUND_MS 5000 /* a bound on every wait here, never reached */

static redlock_sync *client;

/* Wait (bounded) until the loop's runner is runner. */
static bool runner_becomes(rl_sync_runner runner)
{
    double deadline = tc_now_ms() + (double)fleet_scaled_ms(BOUND_MS);
    while (rl_sync_loop_runner(client) != runner && tc_now_ms() < deadline)
        tc_sleep_ms(1);
    return rl_sync_loop_runner(client) == runner;
}

void scenario_loop_runners(fleet *masters, redlock_config *cfg)
{
    REQUIRE(redlock_sync_new(&client, cfg) == REDLOCK_OK, "redlock_sync_new");
    REQUIRE(runner_becomes(RL_SYNC_RUNNER_IDLE), "the loop was never parked once connected");

    /* A stopped master's reply stays outstanding after the acquire has its
     * quorum: no call follows, so the I/O thread takes the loop over. */
    REQUIRE(fleet_pause(masters, 0) == 0, "pause");
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    redlock_lock *lock = NULL;
    CHECK(redlock_sync_acquire(client, "runner", 6, &o, &lock, NULL) == REDLOCK_OK, "acquire");
    CHECK(runner_becomes(RL_SYNC_RUNNER_IO_THREAD),
          "a loop left with a reply outstanding was not taken over");
    REQUIRE(fleet_resume(masters, 0) == 0, "resume");
    CHECK(redlock_sync_release(client, lock, NULL) == REDLOCK_OK, "release");
    redlock_lock_free(lock);
    CHECK(runner_becomes(RL_SYNC_RUNNER_IDLE), "the loop was not parked again once quiet");

    /* An auto-extended lock keeps the loop with the I/O thread, calls of
     * this thread notwithstanding, until it is released. */
    lock = NULL;
    CHECK(redlock_sync_acquire(client, "runner", 6, &o, &lock, NULL) == REDLOCK_OK, "acquire");
    CHECK(redlock_sync_auto_extend(client, lock, NULL, NULL) == REDLOCK_OK, "auto-extend");
    for (int i = 0; i < 20; i++) {
        CHECK(redlock_sync_ping(client, NULL) == REDLOCK_OK, "ping");
        CHECK(rl_sync_loop_runner(client) == RL_SYNC_RUNNER_IO_THREAD,
              "an auto-extended lock's loop left to a caller");
        tc_sleep_ms(1);
    }
    CHECK(redlock_sync_release(client, lock, NULL) == REDLOCK_OK, "release");
    redlock_lock_free(lock);
    CHECK(runner_becomes(RL_SYNC_RUNNER_IDLE), "the loop was not parked after the release");

    redlock_sync_free(client);
}
