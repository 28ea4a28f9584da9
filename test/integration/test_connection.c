/* A master's connection over its life: timeouts measured from when they
 * start, however long the loop sat idle before. */
#include "harness.h"

#include <criterion/criterion.h>
#include <string.h>
#include <time.h>

#define TTL_MS 10000

static harness h;

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(connection, .fini = teardown, .timeout = 120);

/* Sleep without running the loop. */
static void sleep_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void set_timeouts(int64_t connect_ms, int64_t command_ms)
{
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_CONNECT_TIMEOUT_MS, connect_ms), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, command_ms), REDLOCK_OK);
}

/* ---- Timeouts after an idle loop ------------------------------------------- */

/* libev measures a timer from the time it cached when the loop last ran; a
 * client created long after that must still give every master its whole
 * connect timeout, not time out at the loop's first turn. */
Test(connection, a_client_created_after_the_loop_sat_idle_gets_its_whole_connect_timeout)
{
    int64_t connect_ms = fleet_scaled_ms(500);
    harness_start(&h, 3, NULL);
    set_timeouts(connect_ms, fleet_scaled_ms(250));
    harness_run_for(&h, 10); /* the loop has run, and cached its time */
    sleep_ms(2 * connect_ms);
    harness_connect(&h);

    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(TTL_MS, 0);
    int status = harness_acquire(&h, "idle", 4, &o, &lock, &r);
    cr_assert_eq(status, REDLOCK_OK, "status %s after %lld ms; log:\n%s",
                 redlock_status_name(status), (long long)r->total_ms, h.log);
    for (size_t i = 0; i < 3; i++)
        expect_master_or_pending(r, i, REDLOCK_MASTER_OK, NULL);
    redlock_result_free(r);
    harness_run_for(&h, (int)connect_ms); /* past every connect deadline */
    cr_assert_null(strstr(h.log, "timed out"), "log:\n%s", h.log);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
}
