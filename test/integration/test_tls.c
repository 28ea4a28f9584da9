/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TLS to real masters (ctest label tls): redis-server with --tls-port only,
 * certificates made by the fixture (fleet_tls.h). Every operation over
 * TLS, a client certificate required, each kind of failed handshake as a
 * per-master outcome with OpenSSL's reason and within the connect timeout,
 * and a master killed and restarted. Skipped on a build without TLS (the
 * unit and CLI tests check that it refuses TLS).
 */
#include "fleet_tls.h"
#include "harness.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define MASTERS 3

static harness h;

static void teardown(void)
{
    harness_stop(&h);
}

static void require_tls(void)
{
    if (!redlock_tls_available(NULL))
        cr_skip_test("this build has no TLS");
}

TestSuite(tls, .init = require_tls, .fini = teardown, .timeout = 120);

static void start(int tls)
{
    const fleet_options opts = {.tls = tls};
    harness_start(&h, MASTERS, &opts);
}

/* A path in the fleet's certificate directory. */
static const char *cert(const char *name)
{
    static char path[4][512];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof(path[0]), "%s/%s", fleet_tls_dir(h.fleet), name);
    return p;
}

static void set_tls(const redlock_tls_options *tls)
{
    cr_assert_eq(redlock_config_set_tls(h.cfg, tls), REDLOCK_OK);
}

/* Pings every master: each must be ok. */
static void expect_all_ok(void)
{
    redlock_result *r = NULL;
    cr_assert_eq(harness_ping(&h, &r), REDLOCK_OK);
    for (size_t i = 0; i < MASTERS; i++)
        expect_master(r, i, REDLOCK_MASTER_OK, NULL);
    redlock_result_free(r);
}

static bool has(const char *text, const char *needle)
{
    return text != NULL && needle != NULL && strstr(text, needle) != NULL;
}

/* A ping: every master must have failed with needle (or or_needle, if not
 * NULL) in its detail, soon (no hang). */
static void expect_all_fail_either(const char *needle, const char *or_needle)
{
    harness_connect(&h);
    double start_ms = tc_now_ms();
    redlock_result *r = NULL;
    cr_assert_eq(harness_ping(&h, &r), REDLOCK_ENOQUORUM);
    for (size_t i = 0; i < MASTERS; i++) {
        const redlock_master_result *m = &r->masters[i];
        cr_assert_eq(m->outcome, REDLOCK_MASTER_NOT_CONNECTED, "master %zu: %s", i,
                     redlock_master_outcome_name(m->outcome));
        cr_assert(has(m->detail, needle) || has(m->detail, or_needle),
                  "master %zu: detail \"%s\", expected \"%s\" in it", i,
                  m->detail ? m->detail : "(none)", needle);
    }
    redlock_result_free(r);
    /* Far less than the guard: the connect timeout is 200 ms. */
    cr_assert_lt(tc_now_ms() - start_ms, (double)fleet_scaled_ms(5000));
    cr_assert(has(h.log, needle) || has(h.log, or_needle), "the log says why too:\n%s", h.log);
}

static void expect_all_fail(const char *needle)
{
    expect_all_fail_either(needle, NULL);
}

typedef struct value_probe {
    const char *res;
    const char *value;
} value_probe;

static bool value_everywhere(harness *hh, void *arg)
{
    const value_probe *p = arg;
    return fleet_count_value(hh->fleet, p->res, strlen(p->res), p->value, strlen(p->value)) ==
           MASTERS;
}

/* Acquires res (a string): its value must be on every master. */
static redlock_lock *acquire_everywhere(const char *res)
{
    redlock_lock *lock = NULL;
    redlock_acquire_options opts = fleet_acquire_options(5000, 0);
    cr_assert_eq(harness_acquire(&h, res, strlen(res), &opts, &lock, NULL), REDLOCK_OK);
    /* Decided at a quorum: the last master's reply may still be on its way. */
    value_probe p = {res, redlock_lock_value(lock, NULL)};
    cr_assert(harness_wait_until(&h, value_everywhere, &p, 2000), "%s", h.log);
    return lock;
}

static void release_and_free(redlock_lock *lock)
{
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
}

Test(tls, every_operation_over_tls)
{
    start(FLEET_TLS_ON);
    harness_connect(&h);
    expect_all_ok();
    redlock_lock *lock = acquire_everywhere("tls-res");
    cr_assert_eq(harness_extend(&h, lock, 8000, NULL), REDLOCK_OK);
    cr_assert_gt(fleet_pttl(h.fleet, 0, "tls-res", 7), 5000);
    redlock_result *r = NULL;
    cr_assert_eq(harness_inspect(&h, "tls-res", 7, &r), REDLOCK_OK);
    cr_assert_eq(fleet_result_count(r, REDLOCK_MASTER_OK), MASTERS);
    cr_assert_str_eq(r->masters[0].value, redlock_lock_value(lock, NULL));
    redlock_result_free(r);
    release_and_free(lock);
    cr_assert(harness_wait_key_gone(&h, "tls-res", 7, 2000));
}

Test(tls, a_client_certificate_required_and_given)
{
    start(FLEET_TLS_CLIENT_CERT);
    harness_connect(&h);
    expect_all_ok();
    release_and_free(acquire_everywhere("cert"));
}

Test(tls, a_client_certificate_required_and_missing)
{
    start(FLEET_TLS_CLIENT_CERT);
    set_tls(&(redlock_tls_options){.enabled = 1, .ca_file = cert("ca.crt")});
    /* TLS 1.3: the client's handshake is done before the server checks its
     * certificate; the server's alert and close come with the first read,
     * and a reset can beat the alert. */
    expect_all_fail_either("TLS handshake failed: tlsv13 alert certificate required",
                           "Connection reset by peer");
}

Test(tls, a_server_certificate_from_another_ca)
{
    start(FLEET_TLS_ON);
    set_tls(&(redlock_tls_options){.enabled = 1, .ca_file = cert("other-ca.crt")});
    /* redis-server sends its CA along: a self-signed one the client does not
     * trust. */
    expect_all_fail("TLS: certificate verify failed: self-signed certificate in certificate chain");
}

Test(tls, an_expired_server_certificate)
{
    start(FLEET_TLS_EXPIRED);
    set_tls(&(redlock_tls_options){.enabled = 1, .ca_file = cert("ca.crt")});
    expect_all_fail("TLS: certificate verify failed: certificate has expired");
}

Test(tls, a_server_name_that_does_not_match)
{
    start(FLEET_TLS_ON);
    set_tls(&(redlock_tls_options){
        .enabled = 1, .ca_file = cert("ca.crt"), .server_name = "redis.example.org"});
    expect_all_fail("TLS: certificate verify failed: hostname mismatch");
}

Test(tls, the_right_server_name_verifies)
{
    start(FLEET_TLS_ON);
    set_tls(&(redlock_tls_options){
        .enabled = 1, .ca_file = cert("ca.crt"), .server_name = "localhost"});
    harness_connect(&h);
    expect_all_ok();
}

Test(tls, plain_to_a_tls_port)
{
    start(FLEET_TLS_ON);
    set_tls(NULL);
    /* The server drops what is not TLS: a reset, or a close. */
    expect_all_fail("connection lost: ");
}

Test(tls, tls_to_a_plain_port)
{
    harness_start(&h, MASTERS, NULL);
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/tls", fleet_dir(h.fleet));
    cr_assert_eq(mkdir(dir, 0700), 0);
    cr_assert_eq(fleet_tls_make_certs(dir), 0);
    char ca[600];
    snprintf(ca, sizeof(ca), "%s/ca.crt", dir);
    set_tls(&(redlock_tls_options){.enabled = 1, .ca_file = ca});
    /* A plain server waits for the rest of what it takes for a command. */
    expect_all_fail("TLS handshake timed out after ");
}

Test(tls, a_file_that_cannot_be_used_is_a_config_error)
{
    start(FLEET_TLS_ON);
    set_tls(&(redlock_tls_options){
        .enabled = 1, .ca_file = cert("ca.crt"), .cert_file = cert("client.crt"),
        .key_file = cert("server.key")});
    cr_assert_eq(redlock_client_new(&h.client, h.cfg, h.loop), REDLOCK_ECONFIG);
    cr_assert_not_null(strstr(h.log, "tls_key_file"), "%s", h.log);
    cr_assert_null(strstr(h.log, "PRIVATE KEY"), "no key material in:\n%s", h.log);
    set_tls(&(redlock_tls_options){.enabled = 1, .ca_file = "/nonexistent/ca.crt"});
    cr_assert_eq(redlock_client_new(&h.client, h.cfg, h.loop), REDLOCK_ECONFIG);
    cr_assert_not_null(strstr(h.log, "cannot load tls_ca_file /nonexistent/ca.crt"), "%s", h.log);
}

static bool all_answer(harness *hh, void *arg)
{
    (void)arg;
    redlock_result *r = NULL;
    int rc = harness_ping(hh, &r);
    bool all = rc == REDLOCK_OK && fleet_result_count(r, REDLOCK_MASTER_OK) == MASTERS;
    redlock_result_free(r);
    return all;
}

Test(tls, a_master_killed_and_restarted_is_reconnected)
{
    start(FLEET_TLS_ON);
    harness_connect(&h);
    expect_all_ok();
    cr_assert_eq(fleet_kill(h.fleet, 0), 0);
    redlock_result *r = NULL;
    cr_assert_eq(harness_ping(&h, &r), REDLOCK_OK, "two of three still answer");
    cr_assert_eq(r->masters[0].outcome, REDLOCK_MASTER_NOT_CONNECTED);
    redlock_result_free(r);
    cr_assert_eq(fleet_restart(h.fleet, 0), 0);
    cr_assert(harness_wait_until(&h, all_answer, NULL, 5000), "%s", h.log);
    release_and_free(acquire_everywhere("again"));
}

/* Waiting by notification: the subscriber connections are TLS too. */
typedef struct waiter {
    bool done;
    int status;
    redlock_lock *lock;
    double done_ms;
} waiter;

static waiter w; /* not on the stack: the acquire may outlive a failed test */

static void waiter_on_acquired(int status, redlock_lock *lock, const redlock_result *r, void *arg)
{
    (void)r;
    waiter *one = arg;
    one->done = true;
    one->status = status;
    one->lock = lock;
    one->done_ms = tc_now_ms();
}

static bool waiter_done(harness *hh, void *arg)
{
    (void)hh;
    return ((waiter *)arg)->done;
}

static const char channel[] = "redlock:released:0:waited";

static bool subscribed_everywhere(harness *hh, void *arg)
{
    (void)arg;
    for (size_t i = 0; i < MASTERS; i++) {
        redisReply *r = fleet_command(hh->fleet, i, "PUBSUB NUMSUB %s", channel);
        bool one = r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
                   r->element[1]->integer == 1;
        freeReplyObject(r);
        if (!one)
            return false;
    }
    return true;
}

Test(tls, a_waiter_hears_the_release_over_tls)
{
    enum { SLOW_RETRY_MS = 4000 };
    start(FLEET_TLS_ON);
    harness_connect(&h);
    expect_all_ok();
    redlock_lock *held = acquire_everywhere("waited");
    redlock_acquire_options slow = fleet_acquire_options(10000, 5);
    slow.retry_delay_ms = fleet_scaled_ms(SLOW_RETRY_MS);
    slow.retry_jitter_ms = 0;
    cr_assert_eq(redlock_acquire_async(h.client, "waited", 6, &slow, waiter_on_acquired, &w),
                 REDLOCK_OK);
    cr_assert(harness_wait_until(&h, subscribed_everywhere, NULL, 5000),
              "the waiter never subscribed on every master:\n%s", h.log);
    cr_assert_not(w.done, "the waiter got the lock while it was held");
    double released_ms = tc_now_ms();
    release_and_free(held);
    cr_assert(harness_wait_until(&h, waiter_done, &w, 3 * SLOW_RETRY_MS), "never acquired");
    cr_assert_eq(w.status, REDLOCK_OK, "%s", redlock_strerror(w.status));
    double gap = w.done_ms - released_ms;
    cr_assert_lt(gap, (double)fleet_scaled_ms(SLOW_RETRY_MS / 4),
                 "the waiter took the lock %.0f ms after the release: the timer, not the "
                 "announcement",
                 gap);
    release_and_free(w.lock);
}
