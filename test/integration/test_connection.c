/* A master's connection over its life: timeouts measured from when they
 * start, however long the loop sat idle before; a freed client that leaves
 * no timer behind, even when what it queued behind a handshake goes out and
 * is never answered. */
#include "fake_master.h"
#include "harness.h"

#include <criterion/criterion.h>
#include <string.h>
#include <time.h>

#define TTL_MS 10000
#define MAX_FAKES 2

static harness h;
static fake_master *fakes[MAX_FAKES];

static void teardown(void)
{
    harness_stop(&h); /* the client first: it may be connected to the fakes */
    for (size_t i = 0; i < MAX_FAKES; i++) {
        fake_master_stop(fakes[i]);
        fakes[i] = NULL;
    }
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

/* No reconnect within a test: a master that fails stays out. */
static void never_reconnect(void)
{
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RECONNECT_MAX_MS, 60000), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RECONNECT_MIN_MS, 60000), REDLOCK_OK);
}

/* Fakes in mode after the real masters, paused if asked. */
static void add_fakes(fake_master_mode mode, bool paused)
{
    for (size_t i = 0; i < MAX_FAKES; i++) {
        fakes[i] = fake_master_start(mode, NULL);
        cr_assert_not_null(fakes[i]);
        if (paused)
            fake_master_pause(fakes[i]);
        cr_assert_eq(redlock_config_add_tcp_node(h.cfg, "127.0.0.1", fake_master_port(fakes[i]),
                                                 NULL),
                     REDLOCK_OK);
    }
}

/* Whether the log has "master 127.0.0.1:PORT: <what>" for fake i. */
static bool fake_logged(size_t i, const char *what)
{
    char line[256];
    snprintf(line, sizeof(line), "master 127.0.0.1:%d: %s", fake_master_port(fakes[i]), what);
    return h.log != NULL && strstr(h.log, line) != NULL;
}

static redlock_lock *held;

static bool held_by_every_real_master(harness *hh, void *arg)
{
    size_t len = 0;
    const char *value = redlock_lock_value(held, &len);
    const char *resource = arg;
    return fleet_count_value(hh->fleet, resource, strlen(resource), value, len) ==
           fleet_size(hh->fleet);
}

/* A lock on resource, once every real master holds it (a quorum may have
 * decided before the last one answered). */
static redlock_lock *acquire_held(const char *resource)
{
    redlock_acquire_options o = fleet_acquire_options(TTL_MS, 0);
    cr_assert_eq(harness_acquire(&h, resource, strlen(resource), &o, &held, NULL), REDLOCK_OK,
                 "log:\n%s", h.log);
    cr_assert(harness_wait_until(&h, held_by_every_real_master, (void *)resource, 3000));
    return held;
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

/* ---- A freed client's last requests ---------------------------------------- */

/* Every fake has read two requests (a fake reads on its own thread). */
static bool fakes_read_two_requests(harness *hh, void *arg)
{
    (void)hh;
    (void)arg;
    for (size_t i = 0; i < MAX_FAKES; i++)
        if (fake_master_requests(fakes[i]) < 2)
            return false;
    return true;
}

/*
 * Freed while two masters are still in their handshake, the client keeps
 * their queued requests (the lock's SET and its release) until the
 * handshake completes, sends them, and waits one command timeout for the
 * replies, which never come. Then it is gone, and nothing of it may be left
 * on the loop: a master watching for stalled replies would otherwise fire,
 * long after the client was freed, inside freed memory.
 */
Test(connection, a_freed_client_whose_last_requests_go_unanswered_leaves_no_timer_behind)
{
    int64_t command_ms = fleet_scaled_ms(300);
    harness_start(&h, 3, NULL);
    set_timeouts(fleet_scaled_ms(2000), command_ms);
    never_reconnect();
    add_fakes(FAKE_MASTER_SILENT_AFTER_HANDSHAKE, true);
    harness_connect(&h);
    redlock_lock *lock = acquire_held("unanswered");
    unsigned frees = harness_configs_freed();

    redlock_client_free(h.client);
    h.client = NULL;
    for (size_t i = 0; i < MAX_FAKES; i++)
        fake_master_resume(fakes[i]);
    /* The replies are overdue after one command timeout; a stalled reply is
     * noticed only after ten. */
    double took = harness_free_client_timed(&h);
    cr_assert(harness_wait_until(&h, fakes_read_two_requests, NULL, 3000),
              "the SET and the release did not go out; log:\n%s", h.log);
    for (size_t i = 0; i < MAX_FAKES; i++) {
        cr_assert(fake_logged(i, "connected"), "log:\n%s", h.log);
        cr_assert_eq(fake_master_requests(fakes[i]), 2);
    }
    cr_assert_lt(took, (double)command_ms * 5, "the loop ran %.0f ms after the free", took);
    cr_assert_eq(harness_configs_freed(), frees + 1, "the client was freed");
    cr_assert_eq(redlock_lock_get_state(lock), REDLOCK_LOCK_RELEASED);
    redlock_lock_free(lock);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_pttl(h.fleet, i, "unanswered", 10), -2);
}
