/* SPDX-License-Identifier: BSD-3-Clause */
/* Masters that refuse us: wrong or missing passwords, error replies (a
 * read-only replica, a full one, a key of another type). Each ends in a
 * clear status, each master's outcome with the server's own words, within
 * the timeouts, with no key of ours left behind and no password in any
 * message. */
#include "harness.h"
#include "scripts.h" /* to ask a server what it says to our scripts' requests */

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static harness h;

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(errors, .fini = teardown, .timeout = 90);

#define SECRET "s3cret-Pa55word"
/* fleet_config()'s timeouts, and room for a loaded machine. */
#define ATTEMPT_MS (200 + 100)
#define SLACK_MS 3000

static void set_password_everywhere(const char *user, const char *password)
{
    for (size_t i = 0; i < redlock_config_node_count(h.cfg); i++)
        cr_assert_eq(redlock_config_node_set_auth(h.cfg, i, user, password), REDLOCK_OK);
}

/* The error text of reply (which is freed), prefixed: what a server says,
 * to compare with what the library reports. Free it. */
static char *error_text(const char *prefix, redisReply *reply)
{
    cr_assert(reply != NULL && reply->type == REDIS_REPLY_ERROR, "expected an error reply");
    char *text = NULL;
    cr_assert_geq(asprintf(&text, "%s%s", prefix, reply->str), 0);
    freeReplyObject(reply);
    return text;
}

/* What server i says to an unauthenticated SCRIPT LOAD. */
static char *unauthenticated_error(size_t i)
{
    redisContext *c = redisConnect("127.0.0.1", fleet_port(h.fleet, i));
    cr_assert(c != NULL && c->err == 0);
    char *text = error_text("SCRIPT LOAD: ", redisCommand(c, "SCRIPT LOAD %s", "return 1"));
    redisFree(c);
    return text;
}

/* A master that fails stays failed for the rest of the test (no reconnect
 * for a minute), and a ping has seen every master's state: each request
 * then meets the same, settled reason. */
static void connect_and_settle(void)
{
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RECONNECT_MAX_MS, 60000), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RECONNECT_MIN_MS, 60000), REDLOCK_OK);
    harness_connect(&h);
    redlock_result *r = NULL;
    harness_ping(&h, &r);
    redlock_result_free(r);
}

static void expect_elapsed_within(const redlock_result *r, int64_t ms)
{
    cr_assert_leq(r->total_ms, ms, "took %lld ms", (long long)r->total_ms);
}

static void expect_key_gone(const char *key)
{
    cr_assert(harness_wait_key_gone(&h, key, strlen(key), 3000), "a master still holds %s", key);
}

Test(errors, the_right_password_works)
{
    fleet_options opts = {.requirepass = SECRET};
    harness_start(&h, 3, &opts);
    harness_connect(&h);
    redlock_lock *lock = NULL;
    redlock_acquire_options o = fleet_acquire_options(5000, 0);
    cr_assert_eq(harness_acquire(&h, "auth", 4, &o, &lock, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    cr_assert_null(strstr(h.log, SECRET));
}

Test(errors, a_wrong_password_is_an_auth_error_that_never_shows_the_password)
{
    fleet_options opts = {.requirepass = SECRET};
    harness_start(&h, 3, &opts);
    char *refused = error_text("AUTH: ", fleet_command(h.fleet, 0, "AUTH %s", "wrong-" SECRET));
    cr_assert_null(strstr(refused, SECRET));
    set_password_everywhere(NULL, "wrong-" SECRET);
    harness_connect(&h);
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(5000, 1);
    cr_assert_eq(harness_acquire(&h, "auth", 4, &o, NULL, &r), REDLOCK_EAUTH);
    /* Decided as soon as two of three refused: the third may be pending. */
    cr_assert_geq(fleet_result_count(r, REDLOCK_MASTER_AUTH_FAILED), 2);
    for (size_t i = 0; i < 3; i++)
        expect_master_or_pending(r, i, REDLOCK_MASTER_AUTH_FAILED, refused);
    expect_elapsed_within(r, 2 * ATTEMPT_MS + SLACK_MS);
    redlock_result_free(r);
    cr_assert(strstr(h.log, refused) != NULL, "log:\n%s", h.log);
    cr_assert_null(strstr(h.log, SECRET), "the log shows the password:\n%s", h.log);
    cr_assert_str_eq(redlock_strerror(REDLOCK_EAUTH), "the masters refused our credentials");
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_pttl(h.fleet, i, "auth", 4), -2);
    free(refused);
}

Test(errors, a_wrong_password_on_one_master_of_three_still_locks)
{
    fleet_options opts = {.requirepass = SECRET};
    harness_start(&h, 3, &opts);
    char *refused = error_text("AUTH: ", fleet_command(h.fleet, 2, "AUTH %s", "wrong-" SECRET));
    cr_assert_eq(redlock_config_node_set_auth(h.cfg, 2, NULL, "wrong-" SECRET), REDLOCK_OK);
    connect_and_settle();
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(5000, 0);
    cr_assert_eq(harness_acquire(&h, "auth1", 5, &o, &lock, &r), REDLOCK_OK);
    expect_master(r, 0, REDLOCK_MASTER_OK, NULL);
    expect_master(r, 1, REDLOCK_MASTER_OK, NULL);
    expect_master(r, 2, REDLOCK_MASTER_AUTH_FAILED, refused);
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, lock, &r), REDLOCK_OK);
    expect_master(r, 2, REDLOCK_MASTER_AUTH_FAILED, refused);
    redlock_result_free(r);
    redlock_lock_free(lock);
    expect_key_gone("auth1");
    cr_assert_null(strstr(h.log, SECRET), "the log shows the password:\n%s", h.log);
    free(refused);
}

Test(errors, no_password_for_a_master_that_wants_one_is_an_auth_error)
{
    fleet_options opts = {.requirepass = SECRET};
    harness_start(&h, 3, &opts);
    char *refused = unauthenticated_error(0); /* NOAUTH ... */
    cr_assert_eq(strncmp(refused, "SCRIPT LOAD: NOAUTH ", 20), 0, "%s", refused);
    set_password_everywhere(NULL, NULL);
    harness_connect(&h);
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(5000, 0);
    cr_assert_eq(harness_acquire(&h, "auth", 4, &o, NULL, &r), REDLOCK_EAUTH);
    cr_assert_geq(fleet_result_count(r, REDLOCK_MASTER_AUTH_FAILED), 2);
    for (size_t i = 0; i < 3; i++)
        expect_master_or_pending(r, i, REDLOCK_MASTER_AUTH_FAILED, refused);
    expect_elapsed_within(r, ATTEMPT_MS + SLACK_MS);
    redlock_result_free(r);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_pttl(h.fleet, i, "auth", 4), -2);
    free(refused);
}

Test(errors, acl_username_and_password)
{
    harness_start(&h, 3, NULL);
    for (size_t i = 0; i < 3; i++) {
        redisReply *reply = fleet_command(h.fleet, i, "ACL SETUSER locker on >%s ~* +@all", SECRET);
        cr_assert(reply && reply->type == REDIS_REPLY_STATUS);
        freeReplyObject(reply);
    }
    set_password_everywhere("locker", SECRET);
    harness_connect(&h);
    redlock_lock *lock = NULL;
    redlock_acquire_options o = fleet_acquire_options(5000, 0);
    cr_assert_eq(harness_acquire(&h, "acl", 3, &o, &lock, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);

    /* The same user with a wrong password. */
    redlock_client_free(h.client);
    set_password_everywhere("locker", "nope");
    harness_connect(&h);
    cr_assert_eq(harness_acquire(&h, "acl", 3, &o, NULL, NULL), REDLOCK_EAUTH);
    cr_assert_null(strstr(h.log, SECRET));
}

Test(errors, wrongtype_on_the_key_is_an_error_reply_not_a_crash)
{
    harness_start(&h, 3, NULL);
    for (size_t i = 0; i < 3; i++) {
        redisReply *reply = fleet_command(h.fleet, i, "RPUSH typed item");
        cr_assert_not_null(reply);
        freeReplyObject(reply);
    }
    /* What Redis says when each script meets the list. */
    char *on_extend = error_text("", fleet_command(h.fleet, 0, "EVAL %s 1 typed some-value 5000",
                                                   rl_extend_script.source));
    char *on_release = error_text("", fleet_command(h.fleet, 0, "EVAL %s 1 typed some-value",
                                                    rl_release_script.source));
    char *on_inspect =
        error_text("", fleet_command(h.fleet, 0, "EVAL %s 2 typed redlock:fence:typed",
                                       rl_inspect_script.source));
    cr_assert_eq(strncmp(on_extend, "WRONGTYPE ", 10), 0, "%s", on_extend);
    harness_connect(&h);
    /* SET NX sees an existing key of any type: held by someone else. */
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(5000, 0);
    cr_assert_eq(harness_acquire(&h, "typed", 5, &o, NULL, &r), REDLOCK_ECONFLICT);
    for (size_t i = 0; i < 3; i++)
        expect_master_or_pending(r, i, REDLOCK_MASTER_HELD, NULL);
    redlock_result_free(r);
    /* The scripts' GET hits the list: WRONGTYPE, reported per master. */
    redlock_lock *lock = NULL;
    cr_assert_eq(redlock_lock_new(&lock, "typed", 5, "some-value", 10, 5000), REDLOCK_OK);
    cr_assert_eq(harness_extend(&h, lock, 0, &r), REDLOCK_EREPLY);
    cr_assert_geq(fleet_result_count(r, REDLOCK_MASTER_ERROR), 2);
    for (size_t i = 0; i < 3; i++)
        expect_master_or_pending(r, i, REDLOCK_MASTER_ERROR, on_extend);
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, lock, &r), REDLOCK_EREPLY);
    for (size_t i = 0; i < 3; i++)
        expect_master_or_pending(r, i, REDLOCK_MASTER_ERROR, on_release);
    redlock_result_free(r);
    cr_assert_eq(harness_inspect(&h, "typed", 5, &r), REDLOCK_EREPLY);
    for (size_t i = 0; i < 3; i++)
        expect_master(r, i, REDLOCK_MASTER_ERROR, on_inspect);
    redlock_result_free(r);
    redlock_lock_free(lock);
    /* The lists are untouched. */
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_pttl(h.fleet, i, "typed", 5), -1);
    free(on_extend);
    free(on_release);
    free(on_inspect);
}

Test(errors, a_read_only_replica_answers_readonly)
{
    harness_start(&h, 5, NULL);
    cr_assert_eq(fleet_start_replica(h.fleet, 4, 0), 0);
    char *readonly = error_text("", fleet_command(h.fleet, 4, "SET probe x"));
    harness_connect(&h);
    redlock_acquire_options o = fleet_acquire_options(5000, 0);
    /* One replica among five: the lock still holds; the replica's answer
     * (if it came before the decision) is READONLY. */
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    cr_assert_eq(harness_acquire(&h, "ro", 2, &o, &lock, &r), REDLOCK_OK);
    expect_master_or_pending(r, 4, REDLOCK_MASTER_ERROR, readonly);
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    expect_key_gone("ro");

    /* Three replicas: no quorum can form, and the reason is their errors. */
    cr_assert_eq(fleet_start_replica(h.fleet, 2, 0), 0);
    cr_assert_eq(fleet_start_replica(h.fleet, 3, 1), 0);
    harness_run_for(&h, 600); /* the client reconnects to the restarted ones */
    cr_assert_eq(harness_acquire(&h, "ro2", 3, &o, &lock, &r), REDLOCK_EREPLY);
    cr_assert_eq(fleet_result_count(r, REDLOCK_MASTER_ERROR), 3);
    for (size_t i = 2; i < 5; i++)
        expect_master(r, i, REDLOCK_MASTER_ERROR, readonly);
    expect_elapsed_within(r, ATTEMPT_MS + SLACK_MS);
    redlock_result_free(r);
    /* The failed attempt was released on the masters that took it. */
    cr_assert(harness_wait_key_gone(&h, "ro2", 3, 3000), "the failed attempt was not released");
    free(readonly);
}

/* With maxmemory reached and noeviction, Redis refuses SET (OOM) but still
 * runs PEXPIRE and DEL, which do not grow memory. */
static void fill_memory(size_t i, const char *maxmemory)
{
    redisReply *reply = fleet_command(h.fleet, i, "CONFIG SET maxmemory-policy noeviction");
    cr_assert(reply != NULL && reply->type == REDIS_REPLY_STATUS);
    freeReplyObject(reply);
    reply = fleet_command(h.fleet, i, "CONFIG SET maxmemory %s", maxmemory);
    cr_assert(reply != NULL && reply->type == REDIS_REPLY_STATUS);
    freeReplyObject(reply);
}

Test(errors, a_master_out_of_memory_refuses_new_locks_and_lets_holders_finish)
{
    harness_start(&h, 3, NULL);
    harness_connect(&h);
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    cr_assert_eq(harness_acquire(&h, "before", 6, &o, &lock, NULL), REDLOCK_OK);
    for (size_t i = 0; i < 3; i++)
        fill_memory(i, "1");
    char *oom = error_text("", fleet_command(h.fleet, 0, "SET probe x"));
    cr_assert_eq(strncmp(oom, "OOM ", 4), 0, "%s", oom);
    /* A holder can still extend and release. */
    cr_assert_eq(harness_extend(&h, lock, 10000, &r), REDLOCK_OK);
    cr_assert_eq(fleet_result_count(r, REDLOCK_MASTER_ERROR), 0);
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    expect_key_gone("before");

    /* One full master among three: the lock holds without it. */
    fill_memory(0, "0");
    fill_memory(1, "0");
    cr_assert_eq(harness_acquire(&h, "full", 4, &o, &lock, &r), REDLOCK_OK);
    expect_master(r, 0, REDLOCK_MASTER_OK, NULL);
    expect_master(r, 1, REDLOCK_MASTER_OK, NULL);
    expect_master_or_pending(r, 2, REDLOCK_MASTER_ERROR, oom);
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    expect_key_gone("full");

    /* Two: their refusals are the reason, and the third gives its key up. */
    fill_memory(1, "1");
    cr_assert_eq(harness_acquire(&h, "full2", 5, &o, NULL, &r), REDLOCK_EREPLY);
    expect_master(r, 1, REDLOCK_MASTER_ERROR, oom);
    expect_master(r, 2, REDLOCK_MASTER_ERROR, oom);
    expect_elapsed_within(r, ATTEMPT_MS + SLACK_MS);
    redlock_result_free(r);
    expect_key_gone("full2");
    free(oom);
}

Test(errors, a_select_of_a_missing_db_is_reported)
{
    harness_start(&h, 3, NULL);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(redlock_config_node_set_db(h.cfg, i, 99), REDLOCK_OK);
    harness_connect(&h);
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(5000, 0);
    cr_assert_eq(harness_acquire(&h, "db", 2, &o, NULL, &r), REDLOCK_ENOQUORUM);
    cr_assert(result_detail_contains(r, "SELECT"), "detail: %s", r->masters[0].detail);
    redlock_result_free(r);
}

Test(errors, a_selected_db_holds_the_keys)
{
    harness_start(&h, 3, NULL);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(redlock_config_node_set_db(h.cfg, i, 3), REDLOCK_OK);
    harness_connect(&h);
    redlock_lock *lock = NULL;
    redlock_acquire_options o = fleet_acquire_options(5000, 0);
    cr_assert_eq(harness_acquire(&h, "indb", 4, &o, &lock, NULL), REDLOCK_OK);
    harness_run_for(&h, 50);
    cr_assert_eq(fleet_pttl(h.fleet, 0, "indb", 4), -2, "the key must not be in db 0");
    redisContext *c = fleet_connect(h.fleet, 0);
    cr_assert_not_null(c);
    redisReply *reply = redisCommand(c, "SELECT 3");
    freeReplyObject(reply);
    reply = redisCommand(c, "EXISTS indb");
    cr_assert(reply && reply->type == REDIS_REPLY_INTEGER && reply->integer == 1);
    freeReplyObject(reply);
    redisFree(c);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
}

Test(errors, two_names_for_one_server_count_once)
{
    /* Entries 0 and 2 reach the same server (127.1 is 127.0.0.1). Were they
     * both counted, that one server would be a quorum of three entries. */
    harness_start(&h, 2, NULL);
    cr_assert_eq(redlock_config_add_tcp_node(h.cfg, "127.1", fleet_port(h.fleet, 0), NULL),
                 REDLOCK_OK);
    cr_assert_eq(fleet_kill(h.fleet, 1), 0);
    harness_connect(&h);
    redlock_result *r = NULL;
    redlock_acquire_options o = fleet_acquire_options(5000, 0);
    cr_assert_eq(harness_acquire(&h, "twice", 5, &o, NULL, &r), REDLOCK_ENOQUORUM);
    cr_assert_leq(r->masters_locked, 1, "one server, one vote");
    cr_assert(result_detail_contains(r, "same Redis server"));
    redlock_result_free(r);
    cr_assert(strstr(h.log, "must not count twice") != NULL, "log:\n%s", h.log);
}
