/* SPDX-License-Identifier: BSD-3-Clause */
/* Masters restarted empty (docs/safety.md, "Masters restarted empty";
 * master/restart.h): real masters kill -9'd and restarted without
 * persistence, clients that do not declare them durable (the fixture's
 * default, fleet_config(), does). Short max_ttl_ms values keep them quick. */
#include "harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static harness h;

static void stop(void)
{
    harness_stop(&h);
}

/* A config for h's masters, not durable, sharing max_ttl_ms. */
static redlock_config *config_not_durable(int64_t max_ttl_ms, int64_t ttl_ms)
{
    redlock_config *cfg = fleet_config(h.fleet);
    cr_assert_not_null(cfg);
    cr_assert_eq(redlock_config_set(cfg, REDLOCK_DURABLE, 0), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(cfg, REDLOCK_MAX_TTL_MS, max_ttl_ms), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(cfg, REDLOCK_TTL_MS, ttl_ms), REDLOCK_OK);
    return cfg;
}

/* Acquire res with another client's config on h's loop (h.client is set
 * aside meanwhile); its wait budget wait_ms. */
static int acquire_as(redlock_client *other, const char *res, int64_t wait_ms,
                      redlock_lock **lock, redlock_result **result)
{
    redlock_client *mine = h.client;
    h.client = other;
    redlock_acquire_options o;
    redlock_acquire_options_init(&o);
    o.wait_ms = wait_ms;
    o.retry_count = 0;
    int rc = harness_acquire(&h, res, strlen(res), &o, lock, result);
    h.client = mine;
    return rc;
}

static void free_client(redlock_client *c)
{
    redlock_client_free(c);
    harness_run_for(&h, 50); /* its connections close */
}

/* Holder A locks on masters 0 and 1 (2 is down); 1 is kill -9'd and
 * restarted empty, 2 comes back. A client B taking 1 and 2 would hold
 * the lock beside A: with the rule, it is refused while A's validity lasts;
 * with the masters falsely declared durable, it is granted. */
static int two_holders(bool b_durable, redlock_result **b_result)
{
    harness_start(&h, 3, NULL);
    harness_connect(&h); /* A: durable, as the fixture declares */
    cr_assert_eq(fleet_kill(h.fleet, 2), 0);
    redlock_acquire_options o;
    redlock_acquire_options_init(&o);
    o.ttl_ms = 2000;
    o.retry_count = 0;
    redlock_lock *a_lock = NULL;
    cr_assert_eq(harness_acquire(&h, "job", 3, &o, &a_lock, NULL), REDLOCK_OK);
    double a_granted = tc_now_ms();
    cr_assert_eq(fleet_restart(h.fleet, 1), 0); /* empty: its key is forgotten */
    cr_assert_eq(fleet_restart(h.fleet, 2), 0);

    redlock_config *cfg = config_not_durable(2000, 2000);
    cr_assert_eq(redlock_config_set(cfg, REDLOCK_DURABLE, b_durable), REDLOCK_OK);
    redlock_client *b = NULL;
    cr_assert_eq(redlock_client_new(&b, cfg, h.loop), REDLOCK_OK);
    redlock_config_free(cfg);
    harness_run_for(&h, 200); /* B connected to all three: the rule, not a connect, decides */
    redlock_lock *b_lock = NULL;
    int rc = acquire_as(b, "job", 0, &b_lock, b_result);
    /* Within A's validity (2 s less the drift), or the test proves nothing. */
    cr_assert_lt(tc_now_ms() - a_granted, 1900.0, "B's acquire came after A's validity");
    redlock_lock_free(b_lock);
    redlock_lock_free(a_lock);
    free_client(b);
    return rc;
}

Test(restart, a_master_restarted_empty_does_not_make_two_holders, .fini = stop, .timeout = 60)
{
    redlock_result *r = NULL;
    int rc = two_holders(false, &r);
    cr_assert_eq(rc, REDLOCK_ERESTARTED, "B: %s (%s %s, %s %s, %s %s)", redlock_status_name(rc),
                 redlock_master_outcome_name(r->masters[0].outcome), r->masters[0].detail,
                 redlock_master_outcome_name(r->masters[1].outcome), r->masters[1].detail,
                 redlock_master_outcome_name(r->masters[2].outcome), r->masters[2].detail);
    /* Masters 1 and 2 both restarted: the round is decided as soon as the
     * answer is known, so the other may still be pending, but one of them
     * was left out for its restart. */
    cr_assert(r->masters[1].outcome == REDLOCK_MASTER_CLOCK ||
                  r->masters[2].outcome == REDLOCK_MASTER_CLOCK,
              "masters 1, 2: %s, %s", redlock_master_outcome_name(r->masters[1].outcome),
              redlock_master_outcome_name(r->masters[2].outcome));
    cr_assert(result_detail_contains(r, "not counted for"), "no detail says why");
    redlock_result_free(r);
}

Test(restart, masters_falsely_declared_durable_make_two_holders, .fini = stop, .timeout = 60)
{
    /* The same with the rule off: the hazard is real. */
    int rc = two_holders(true, NULL);
    cr_assert_eq(rc, REDLOCK_OK, "B: %s", redlock_status_name(rc));
}

static bool logged(harness *hh, void *arg)
{
    return hh->log != NULL && strstr(hh->log, arg) != NULL;
}

/* Masters started moments ago do not count for a client that sees them
 * first; the acquire waits for them when its budget allows, and they are
 * logged when excluded and when counted again. Masters whose uptime is
 * past max_ttl_ms count at once for a new client. */
Test(restart, young_masters_wait_old_ones_count_at_once, .fini = stop, .timeout = 60)
{
    harness_start(&h, 3, NULL);
    double started = tc_now_ms();
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_DURABLE, 0), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_MAX_TTL_MS, 500), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_TTL_MS, 500), REDLOCK_OK);
    harness_connect(&h);
    redlock_acquire_options now;
    redlock_acquire_options_init(&now);
    now.retry_count = 0;
    now.wait_ms = 0;
    redlock_result *r = NULL;
    int rc = harness_acquire(&h, "job", 3, &now, NULL, &r);
    cr_assert_eq(rc, REDLOCK_ERESTARTED, "%s", redlock_status_name(rc));
    cr_assert(result_detail_contains(r, "not counted for"));
    redlock_result_free(r);
    cr_assert(logged(&h, "not counted for"), "no exclusion logged:\n%s", h.log ? h.log : "");

    /* With time allowed: it waits (a timer) and gets the lock. */
    redlock_acquire_options o;
    redlock_acquire_options_init(&o);
    o.wait_ms = 3000;
    redlock_lock *lock = NULL;
    cr_assert_eq(harness_acquire(&h, "job", 3, &o, &lock, NULL), REDLOCK_OK);
    cr_assert(logged(&h, "counted again"), "no return logged:\n%s", h.log);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);

    /* uptime_in_seconds >= 2: over 500 ms even less its second of
     * truncation and the drift. */
    harness_run_for(&h, (int)(2300.0 - (tc_now_ms() - started)));
    redlock_config *cfg = config_not_durable(500, 500);
    redlock_client *fresh = NULL;
    cr_assert_eq(redlock_client_new(&fresh, cfg, h.loop), REDLOCK_OK);
    redlock_config_free(cfg);
    rc = acquire_as(fresh, "other", 0, &lock, NULL);
    cr_assert_eq(rc, REDLOCK_OK, "a master up over max_ttl_ms: %s", redlock_status_name(rc));
    redlock_lock_free(lock);
    free_client(fresh);
}

/* A TTL over max_ttl_ms is refused at once; declared durable, any goes. */
Test(restart, a_ttl_over_max_ttl_is_refused, .fini = stop, .timeout = 60)
{
    harness_start(&h, 3, NULL);
    redlock_config_set(h.cfg, REDLOCK_MAX_TTL_MS, 1000);
    redlock_config_set(h.cfg, REDLOCK_TTL_MS, 1000); /* more: the config is refused */
    harness_connect(&h);
    redlock_acquire_options o;
    redlock_acquire_options_init(&o);
    o.ttl_ms = 5000;
    redlock_lock *lock = NULL;
    cr_assert_eq(harness_acquire(&h, "job", 3, &o, &lock, NULL), REDLOCK_OK, "all durable");
    redlock_lock_free(lock);
    harness_free_client(&h);

    redlock_config_node_set_durable(h.cfg, 2, 0); /* one master not durable */
    harness_connect(&h);
    cr_assert_eq(harness_acquire(&h, "job2", 4, &o, &lock, NULL), REDLOCK_EMAXTTL);
    cr_assert_not_null(strstr(redlock_strerror(REDLOCK_EMAXTTL), "max_ttl_ms"));
    o.ttl_ms = 1000;
    o.wait_ms = 5000;
    cr_assert_eq(harness_acquire(&h, "job3", 4, &o, &lock, NULL), REDLOCK_OK);
    cr_assert_eq(harness_extend(&h, lock, 5000, NULL), REDLOCK_EMAXTTL);
    cr_assert_eq(harness_extend(&h, lock, 1000, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);

    /* A default TTL over max_ttl_ms: every acquire with it would be
     * refused, so the client is, and the log says why. */
    redlock_config_set(h.cfg, REDLOCK_TTL_MS, 5000);
    redlock_client *c = NULL;
    cr_assert_eq(redlock_client_new(&c, h.cfg, h.loop), REDLOCK_ECONFIG);
    cr_assert_null(c);
    cr_assert(logged(&h, "ttl_ms (5000) is more than max_ttl_ms (1000)"), "log:\n%s",
              h.log ? h.log : "");
}

/* What an INFO log callback hears of the rule, per master. */
typedef struct restart_lines {
    unsigned excluded[3], counted[3], other_level;
    char names[3][64];
} restart_lines;

static void count_restart_lines(int level, const char *message, void *arg)
{
    restart_lines *l = arg;
    for (size_t i = 0; i < 3; i++) {
        if (strncmp(message, l->names[i], strlen(l->names[i])) != 0)
            continue;
        bool excluded = strstr(message, "not counted for") != NULL;
        bool counted = strstr(message, "counted again") != NULL;
        if ((excluded || counted) && level != REDLOCK_LOG_INFO)
            l->other_level++;
        l->excluded[i] += excluded;
        l->counted[i] += counted;
    }
}

/* One INFO line when a master is excluded, one when it counts again, each
 * naming the master, through the program's log callback at INFO. */
Test(restart, one_info_line_when_excluded_and_one_when_counted_again, .fini = stop,
     .timeout = 60)
{
    harness_start(&h, 3, NULL);
    static restart_lines l;
    memset(&l, 0, sizeof(l));
    for (size_t i = 0; i < 3; i++)
        snprintf(l.names[i], sizeof(l.names[i]), "master %s:",
                 redlock_config_node_name(h.cfg, i));
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_DURABLE, 0), REDLOCK_OK);
    /* 500 ms, stretched with the fleet's timeouts (valgrind). */
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_MAX_TTL_MS, fleet_scaled_ms(500)), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_TTL_MS, fleet_scaled_ms(500)), REDLOCK_OK);
    cr_assert_eq(redlock_config_set_log(h.cfg, count_restart_lines, &l, REDLOCK_LOG_INFO),
                 REDLOCK_OK);
    harness_connect(&h);
    redlock_acquire_options o;
    redlock_acquire_options_init(&o);
    o.wait_ms = fleet_scaled_ms(3000);
    for (int k = 0; k < 2; k++) { /* the second finds them all counted: no more lines */
        redlock_lock *lock = NULL;
        cr_assert_eq(harness_acquire(&h, "job", 3, &o, &lock, NULL), REDLOCK_OK);
        cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
        redlock_lock_free(lock);
    }
    unsigned counted = 0;
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(l.excluded[i], 1, "%s excluded %u times", l.names[i], l.excluded[i]);
        cr_assert_leq(l.counted[i], 1, "%s counted again %u times", l.names[i], l.counted[i]);
        counted += l.counted[i];
    }
    cr_assert_geq(counted, 2, "a quorum took the lock, %u logged counted again", counted);
    cr_assert_eq(l.other_level, 0, "a line of the rule not at INFO");
}

/* ---- Masters that answer no run_id (INFO denied): the marker and guard
 * keys (model/restart.pml, master 2). ---- */

#define NOINFO_PASSWORD "restart-noinfo-pw-5c1e"
#define MARKER_KEY "redlock:restart:marker"
#define GUARD_KEY "redlock:restart:guard"

/* Every server knows the user "noinfo", which may not run INFO, from its
 * command line: the user outlives a restart. keys: its key patterns. */
static void start_noinfo(const char *keys)
{
    char pass[64];
    snprintf(pass, sizeof(pass), ">%s", NOINFO_PASSWORD);
    const char *args[] = {"--user", "noinfo", "on", pass, "resetkeys", keys, "&*", "+@all", "-info",
                          NULL};
    fleet_options opts = {.extra_args = args};
    harness_start(&h, 3, &opts);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(redlock_config_node_set_auth(h.cfg, i, "noinfo", NOINFO_PASSWORD), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_DURABLE, 0), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_MAX_TTL_MS, fleet_scaled_ms(400)), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_TTL_MS, fleet_scaled_ms(400)), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RECONNECT_MIN_MS, 20), REDLOCK_OK);
    /* Without a run_id the clock check takes a restart for a flush (its
     * own quarantine): only the restart rule is under test. */
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_CLOCK_CHECK, REDLOCK_CLOCK_CHECK_WARN),
                 REDLOCK_OK);
}

static size_t count_in_log(const char *needle)
{
    size_t n = 0;
    for (const char *p = h.log; p != NULL && (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

typedef struct log_count {
    const char *needle;
    size_t at_least;
} log_count;

static bool logged_times(harness *hh, void *arg)
{
    (void)hh;
    const log_count *c = arg;
    return count_in_log(c->needle) >= c->at_least;
}

/* The client made and its first connection to every master completed. */
static void connect_all(void)
{
    harness_connect(&h);
    for (size_t i = 0; i < 3; i++)
        harness_wait_connected(&h, i);
}

/* Each master's connection closed by the server (the same run), and the
 * client's next connection to every one of them made. */
static void kill_connections(void)
{
    size_t before = count_in_log(": reconnected");
    for (size_t i = 0; i < 3; i++) {
        redisReply *r = fleet_command(h.fleet, i, "CLIENT KILL USER noinfo");
        cr_assert(r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer >= 1,
                  "CLIENT KILL on master %zu", i);
        freeReplyObject(r);
    }
    log_count c = {": reconnected", before + 3};
    cr_assert(harness_wait_until(&h, logged_times, &c, 3000), "not reconnected:\n%s", h.log);
}

static int acquire_now(const char *res, redlock_result **r)
{
    redlock_acquire_options o;
    redlock_acquire_options_init(&o);
    o.retry_count = 0;
    o.wait_ms = 0;
    redlock_lock *lock = NULL;
    int rc = harness_acquire(&h, res, strlen(res), &o, &lock, r);
    if (lock != NULL)
        cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    return rc;
}

/* Acquires with wait_ms 0 until one is granted (the masters count), at
 * most timeout_ms. */
static bool wait_counted(int timeout_ms)
{
    double deadline = tc_now_ms() + (double)fleet_scaled_ms(timeout_ms);
    while (tc_now_ms() < deadline) {
        if (acquire_now("job-counted", NULL) == REDLOCK_OK)
            return true;
        harness_run_for(&h, 50);
    }
    return false;
}

/* A master that answers no run_id: on the client's first connection the
 * marker is missing (a new master), so it is written with the guard and
 * the master is left out for max_ttl_ms; once it counts, a reconnection
 * to the same run (the connection closed by the server) finds the marker
 * and no guard: it counts at once. */
Test(restart, a_master_without_run_id_counts_again_at_once_on_the_same_run, .fini = stop,
     .timeout = 60)
{
    start_noinfo("~*");
    double connected = tc_now_ms();
    connect_all();
    redlock_result *r = NULL;
    int rc = acquire_now("job", &r);
    cr_assert_eq(rc, REDLOCK_ERESTARTED, "first connection: %s\n%s", redlock_status_name(rc),
                 h.log);
    /* "not counted for N s more", or, before the marker script's EVAL
     * answered (a new server's script cache is empty), "not known yet" */
    cr_assert(result_detail_contains(r, "not counted"), "no detail says why");
    redlock_result_free(r);
    for (size_t i = 0; i < 3; i++) {
        cr_expect_eq(fleet_pttl(h.fleet, i, MARKER_KEY, strlen(MARKER_KEY)), -1,
                     "master %zu: the marker, without a TTL", i);
        long long guard = fleet_pttl(h.fleet, i, GUARD_KEY, strlen(GUARD_KEY));
        cr_expect(guard > 0 && guard <= fleet_scaled_ms(400), "master %zu: the guard's PTTL %lld", i, guard);
    }
    cr_assert(wait_counted(3000), "never counted:\n%s", h.log);
    double waited = tc_now_ms() - connected;
    cr_expect_geq(waited, 0.9 * (double)fleet_scaled_ms(400), "counted after %.0f ms, under max_ttl_ms", waited);

    /* The same run, the guard gone: counts at once. */
    harness_run_for(&h, 100);
    kill_connections();
    r = NULL;
    rc = acquire_now("job", &r);
    cr_assert_eq(rc, REDLOCK_OK, "reconnected to the same run: %s (%s)\n%s",
                 redlock_status_name(rc), r != NULL ? r->masters[0].detail : "", h.log);
    redlock_result_free(r);
}

/* A client that finds the marker and the guard (written by another
 * client's first connection) counts when the guard expires, not a whole
 * max_ttl_ms after its own connection. */
Test(restart, a_client_finding_the_guard_counts_when_it_expires, .fini = stop, .timeout = 60)
{
    start_noinfo("~*");
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_MAX_TTL_MS, fleet_scaled_ms(1000)), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_TTL_MS, fleet_scaled_ms(1000)), REDLOCK_OK);
    connect_all(); /* writes the marker and the guard */
    harness_run_for(&h, (int)fleet_scaled_ms(600));
    redlock_client *first = h.client;
    cr_assert_eq(redlock_client_new(&h.client, h.cfg, h.loop), REDLOCK_OK);
    double connected = tc_now_ms();
    cr_assert_eq(acquire_now("job", NULL), REDLOCK_ERESTARTED, "the guard there\n%s", h.log);
    cr_assert(wait_counted(3000), "never counted:\n%s", h.log);
    double waited = tc_now_ms() - connected;
    cr_expect_lt(waited, 0.85 * (double)fleet_scaled_ms(1000), "counted %.0f ms after connecting: not from the guard", waited);
    free_client(first);
}

/* Restarted empty, the marker is lost with the keys: left out again. */
Test(restart, a_master_without_run_id_restarted_empty_is_left_out_again, .fini = stop,
     .timeout = 60)
{
    start_noinfo("~*");
    harness_connect(&h);
    cr_assert(wait_counted(3000), "never counted:\n%s", h.log);
    size_t before = count_in_log(": reconnected");
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_restart(h.fleet, i), 0);
    log_count c = {": reconnected", before + 3};
    cr_assert(harness_wait_until(&h, logged_times, &c, 3000), "not reconnected:\n%s", h.log);
    redlock_result *r = NULL;
    int rc = acquire_now("job", &r);
    cr_assert_eq(rc, REDLOCK_ERESTARTED, "restarted empty: %s\n%s", redlock_status_name(rc),
                 h.log);
    /* "not counted for N s more", or, before the marker script's EVAL
     * answered (a new server's script cache is empty), "not known yet" */
    cr_assert(result_detail_contains(r, "not counted"), "no detail says why");
    redlock_result_free(r);
    cr_assert(wait_counted(3000), "never counted again:\n%s", h.log);
}

/* The log kept as the harness keeps it, and the WARN lines apart. */
static char warnings[8192];
static size_t warnings_len;

static void log_with_levels(int level, const char *message, void *arg)
{
    (void)arg;
    size_t n = strlen(message);
    char *grown = realloc(h.log, h.log_len + n + 2);
    cr_assert_not_null(grown);
    h.log = grown;
    memcpy(h.log + h.log_len, message, n);
    h.log_len += n;
    h.log[h.log_len++] = '\n';
    h.log[h.log_len] = '\0';
    if (level == REDLOCK_LOG_WARN && warnings_len + n + 2 <= sizeof(warnings)) {
        memcpy(warnings + warnings_len, message, n);
        warnings_len += n;
        warnings[warnings_len++] = '\n';
        warnings[warnings_len] = '\0';
    }
}

static size_t count_in(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* A user that may not touch the marker's keys: the script is refused, the
 * master is left out for max_ttl_ms after each connection, as without the
 * keys, and one warning says why. */
Test(restart, a_refused_marker_script_leaves_the_master_out_after_each_connection,
     .fini = stop, .timeout = 60)
{
    start_noinfo("~job*");
    warnings[0] = '\0';
    warnings_len = 0;
    redlock_config_set_log(h.cfg, log_with_levels, NULL, REDLOCK_LOG_DEBUG);
    harness_connect(&h);
    cr_assert_eq(acquire_now("job", NULL), REDLOCK_ERESTARTED, "first connection\n%s", h.log);
    cr_assert(wait_counted(3000), "never counted:\n%s", h.log);
    kill_connections();
    int rc = acquire_now("job", NULL);
    cr_assert_eq(rc, REDLOCK_ERESTARTED, "reconnected, the script refused: %s\n%s",
                 redlock_status_name(rc), h.log);
    for (size_t i = 0; i < 3; i++) {
        char line[96];
        snprintf(line, sizeof(line), "master 127.0.0.1:%d: the restart marker script was refused",
                 fleet_port(h.fleet, i));
        /* the refusal answers the script sent after the handshake: it may
         * come after the acquire was decided */
        log_count c = {line, 2};
        cr_expect(harness_wait_until(&h, logged_times, &c, 3000),
                  "master %zu: not refused on each connection:\n%s", i, h.log);
        cr_expect_eq(count_in(warnings, line), 1, "master %zu: not one warning:\n%s", i, warnings);
    }
}

/* ---- The durable declaration checked: CONFIG GET append* ---- */

static void start_durable(int appendonly)
{
    fleet_options opts = {.appendonly = appendonly};
    harness_start(&h, 3, &opts); /* fleet_config() declares its masters durable */
    warnings[0] = '\0';
    warnings_len = 0;
    redlock_config_set_log(h.cfg, log_with_levels, NULL, REDLOCK_LOG_DEBUG);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RECONNECT_MIN_MS, 20), REDLOCK_OK);
    connect_all();
    harness_run_for(&h, (int)fleet_scaled_ms(100)); /* CONFIG's reply, not waited for by the handshake */
}

/* Declared durable without AOF: one warning a master, naming it and what
 * its CONFIG says; the declaration stands (its OKs count at once). */
Test(restart, a_master_declared_durable_without_aof_is_warned_about, .fini = stop, .timeout = 60)
{
    start_durable(0);
    for (size_t i = 0; i < 3; i++) {
        char line[128];
        snprintf(line, sizeof(line),
                 "master 127.0.0.1:%d: declared durable, but its CONFIG says appendonly no",
                 fleet_port(h.fleet, i));
        cr_expect_eq(count_in(warnings, line), 1, "master %zu: not one warning:\n%s", i, h.log);
    }
    cr_assert_eq(acquire_now("job", NULL), REDLOCK_OK, "the declaration stands\n%s", h.log);
    /* A reconnection finds the same: no news. */
    size_t before = count_in_log(": reconnected");
    for (size_t i = 0; i < 3; i++) {
        redisReply *r = fleet_command(h.fleet, i, "CLIENT KILL TYPE normal SKIPME yes");
        cr_assert(r != NULL && r->type == REDIS_REPLY_INTEGER, "CLIENT KILL on master %zu", i);
        freeReplyObject(r);
    }
    log_count c = {": reconnected", before + 3};
    cr_assert(harness_wait_until(&h, logged_times, &c, 3000), "not reconnected:\n%s", h.log);
    harness_run_for(&h, (int)fleet_scaled_ms(100));
    cr_expect_eq(count_in(warnings, "declared durable, but"), 3, "warnings:\n%s", warnings);
}

/* AOF with appendfsync always: what the declaration says, no warning. */
Test(restart, a_master_declared_durable_on_aof_always_is_not_warned_about, .fini = stop,
     .timeout = 60)
{
    start_durable(1);
    cr_assert_eq(acquire_now("job", NULL), REDLOCK_OK, "%s", h.log);
    cr_expect(strstr(h.log, "declared durable") == NULL, "log:\n%s", h.log);
    cr_expect_eq(warnings[0], '\0', "warnings:\n%s", warnings);
}
