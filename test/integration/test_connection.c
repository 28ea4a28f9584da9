/* SPDX-License-Identifier: BSD-3-Clause */
/* A master's connection over its life: timeouts measured from when they
 * start, however long the loop sat idle before; a freed client that leaves
 * no timer behind, even when what it queued behind a handshake goes out and
 * is never answered; a client freed from its own log callback while a
 * master drops or connects, which still finishes and frees everything. */
#include "fake_master.h"
#include "harness.h"

#include <criterion/criterion.h>
#include <string.h>

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

/* The config's TTL stays above the timeouts at any time scale, as a client
 * requires. */
static void set_timeouts(int64_t connect_ms, int64_t command_ms)
{
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_TTL_MS, fleet_scaled_ms(TTL_MS)), REDLOCK_OK);
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
    tc_sleep_ms(2 * connect_ms); /* without running the loop */
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

/* Every fake's handshake is done. */
static bool fakes_connected(harness *hh, void *arg)
{
    (void)hh;
    (void)arg;
    for (size_t i = 0; i < MAX_FAKES; i++)
        if (!fake_logged(i, "connected"))
            return false;
    return true;
}

/* How many times the log says "master 127.0.0.1:PORT: <what>" for fake i. */
static unsigned fake_logged_times(size_t i, const char *what)
{
    char line[256];
    snprintf(line, sizeof(line), "master 127.0.0.1:%d: %s", fake_master_port(fakes[i]), what);
    unsigned n = 0;
    for (const char *at = h.log; at != NULL && (at = strstr(at, line)) != NULL; at++)
        n++;
    return n;
}

/* Every fake has been dropped (its requests stalled) and is connecting
 * again, its handshake waiting: the fakes are paused. */
static bool fakes_connecting_again(harness *hh, void *arg)
{
    (void)hh;
    (void)arg;
    for (size_t i = 0; i < MAX_FAKES; i++)
        if (fake_logged_times(i, "connecting") < 2)
            return false;
    return true;
}

static unsigned fakes_requests_wanted;

/* Every fake has read fakes_requests_wanted requests (a fake reads on its
 * own thread). */
static bool fakes_read_requests(harness *hh, void *arg)
{
    (void)hh;
    (void)arg;
    for (size_t i = 0; i < MAX_FAKES; i++)
        if (fake_master_requests(fakes[i]) < fakes_requests_wanted)
            return false;
    return true;
}

/*
 * Freed while two masters it was connected to before are in the handshake
 * of their next connection, the client keeps their queued requests (the
 * lock's SET and its release) until the handshake completes, sends them,
 * and waits one command timeout for the replies, which never come. Then it
 * is gone, and nothing of it may be left on the loop: a master watching
 * for stalled replies would otherwise fire, long after the client was
 * freed, inside freed memory. (Masters never ready before have nothing of
 * ours: nothing waits for them, test_cli_stopped.c.)
 */
Test(connection, a_freed_client_whose_last_requests_go_unanswered_leaves_no_timer_behind)
{
    int64_t command_ms = fleet_scaled_ms(100);
    harness_start(&h, 3, NULL);
    set_timeouts(fleet_scaled_ms(2000), command_ms);
    /* Dropped as stalled after a second, they connect again after this. */
    int64_t reconnect_ms = fleet_scaled_ms(300);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RECONNECT_MAX_MS, reconnect_ms), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RECONNECT_MIN_MS, reconnect_ms), REDLOCK_OK);
    add_fakes(FAKE_MASTER_SILENT_AFTER_HANDSHAKE, false);
    harness_connect(&h);
    cr_assert(harness_wait_until(&h, fakes_connected, NULL, 3000), "log:\n%s", h.log);
    /* A SET and a release they read and never answer: they are dropped. */
    redlock_lock *first = acquire_held("stalled");
    cr_assert_eq(harness_release(&h, first, NULL), REDLOCK_OK);
    redlock_lock_free(first);
    fakes_requests_wanted = 2;
    cr_assert(harness_wait_until(&h, fakes_read_requests, NULL, 3000), "log:\n%s", h.log);
    for (size_t i = 0; i < MAX_FAKES; i++)
        fake_master_pause(fakes[i]);
    cr_assert(harness_wait_until(&h, fakes_connecting_again, NULL, 5000), "log:\n%s", h.log);

    redlock_lock *lock = acquire_held("unanswered");
    unsigned frees = harness_configs_freed();
    redlock_client_free(h.client);
    h.client = NULL;
    for (size_t i = 0; i < MAX_FAKES; i++)
        fake_master_resume(fakes[i]);
    /* The replies are overdue after one command timeout; a stalled reply is
     * noticed only after ten. */
    double took = harness_free_client_timed(&h);
    fakes_requests_wanted = 4;
    cr_assert(harness_wait_until(&h, fakes_read_requests, NULL, 3000),
              "the SET and the release did not go out; log:\n%s", h.log);
    for (size_t i = 0; i < MAX_FAKES; i++)
        cr_assert_eq(fake_master_requests(fakes[i]), 4);
    cr_assert_lt(took, (double)command_ms * 5, "the loop ran %.0f ms after the free", took);
    cr_assert_eq(harness_configs_freed(), frees + 1, "the client was freed");
    cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_RELEASED);
    redlock_lock_free(lock);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_pttl(h.fleet, i, "unanswered", 10), -2);
}

/* ---- Freed from the log callback -------------------------------------------- */

static const char *free_on; /* the log line (a part of it) that frees the client */
static unsigned freed_from_log;

static void free_client_on_line(harness *hh, const char *message)
{
    if (hh->client == NULL || strstr(message, free_on) == NULL)
        return;
    redlock_client_free(hh->client);
    hh->client = NULL;
    freed_from_log++;
}

/* The client is freed from the log callback on a line containing line;
 * to be called before harness_connect(). */
static void free_client_when_logged(const char *line)
{
    free_on = line;
    freed_from_log = 0;
    h.on_log = free_client_on_line;
}

static bool client_freed_from_log(harness *hh, void *arg)
{
    (void)hh;
    (void)arg;
    return freed_from_log > 0;
}

/* Run the loop until the log callback has freed the client, then until the
 * client has finished; it must be freed, with nothing left on the loop. */
static void expect_freed_from_the_log(unsigned frees_before)
{
    cr_assert(harness_wait_until(&h, client_freed_from_log, NULL, 10000),
              "\"%s\" was never logged; log:\n%s", free_on, h.log);
    harness_free_client(&h); /* runs the loop until no watcher is left */
    cr_assert_eq(freed_from_log, 1);
    cr_assert_eq(harness_configs_freed(), frees_before + 1,
                 "the client, its masters and its config copy were not freed; log:\n%s", h.log);
}

/* A master killed while the client holds a lock: the drop's message frees
 * the client. */
Test(connection, freed_from_the_log_when_a_killed_master_drops)
{
    harness_start(&h, 3, NULL);
    never_reconnect();
    free_client_when_logged(": connection lost");
    harness_connect(&h);
    redlock_lock *lock = acquire_held("killed");
    unsigned frees = harness_configs_freed();
    cr_assert_eq(fleet_kill(h.fleet, 2), 0);
    expect_freed_from_the_log(frees);
    redlock_lock_free(lock);
    for (size_t i = 0; i < 2; i++)
        cr_assert_eq(fleet_pttl(h.fleet, i, "killed", 6), -2);
}

/* The same master's reconnect is refused: it was connecting, with the lock's
 * release queued by the free, when the message came. */
Test(connection, freed_from_the_log_when_a_reconnect_is_refused)
{
    harness_start(&h, 3, NULL);
    free_client_when_logged(": connect: ");
    harness_connect(&h);
    redlock_lock *lock = acquire_held("refused");
    unsigned frees = harness_configs_freed();
    cr_assert_eq(fleet_kill(h.fleet, 2), 0); /* reconnects after 20 ms, refused */
    expect_freed_from_the_log(frees);
    redlock_lock_free(lock);
    for (size_t i = 0; i < 2; i++)
        cr_assert_eq(fleet_pttl(h.fleet, i, "refused", 7), -2);
}

/* A stopped master with a request in flight is dropped as stalled. */
Test(connection, freed_from_the_log_when_a_stalled_master_is_dropped)
{
    harness_start(&h, 3, NULL);
    never_reconnect();
    free_client_when_logged(": no reply for ");
    harness_connect(&h);
    redlock_lock *lock = acquire_held("stalled");
    cr_assert_eq(fleet_pause(h.fleet, 2), 0);
    redlock_result *r = NULL;
    cr_assert_eq(harness_extend(&h, lock, TTL_MS, &r), REDLOCK_OK); /* 2 of 3 */
    redlock_result_free(r);
    unsigned frees = harness_configs_freed();
    expect_freed_from_the_log(frees);
    redlock_lock_free(lock);
    for (size_t i = 0; i < 2; i++)
        cr_assert_eq(fleet_pttl(h.fleet, i, "stalled", 7), -2);
}

/* Masters that never answer their handshake time out. */
Test(connection, freed_from_the_log_when_a_handshake_times_out)
{
    harness_start(&h, 3, NULL);
    never_reconnect();
    add_fakes(FAKE_MASTER_SILENT, false);
    free_client_when_logged(": handshake timed out");
    unsigned frees = harness_configs_freed();
    harness_connect(&h);
    expect_freed_from_the_log(frees);
}

/* A master's handshake completes: the "connected" message frees the
 * client, with nothing else holding it. */
Test(connection, freed_from_the_log_when_a_master_connects)
{
    harness_start(&h, 3, NULL);
    free_client_when_logged(": connected");
    unsigned frees = harness_configs_freed();
    harness_connect(&h);
    expect_freed_from_the_log(frees);
}
