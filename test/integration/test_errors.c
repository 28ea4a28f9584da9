/* Masters that refuse us: wrong or missing passwords, error replies, a
 * read-only replica. Each ends in a clear status and a detail naming the
 * cause, and no password in any message. */
#include "harness.h"

#include <criterion/criterion.h>
#include <string.h>

static harness h;

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(errors, .fini = teardown, .timeout = 90);

#define SECRET "s3cret-Pa55word"

static void set_password_everywhere(const char *user, const char *password)
{
    for (size_t i = 0; i < redlock_config_node_count(h.cfg); i++)
        cr_assert_eq(redlock_config_node_set_auth(h.cfg, i, user, password), REDLOCK_OK);
}

Test(errors, the_right_password_works)
{
    fleet_options opts = {.requirepass = SECRET};
    harness_start(&h, 3, &opts);
    harness_connect(&h);
    redlock_lock *lock = NULL;
    redlock_acquire_options o = harness_options(5000, 0);
    cr_assert_eq(harness_acquire(&h, "auth", 4, &o, &lock, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    cr_assert_null(strstr(h.log, SECRET));
}

Test(errors, a_wrong_password_is_an_auth_error_that_never_shows_the_password)
{
    fleet_options opts = {.requirepass = SECRET};
    harness_start(&h, 3, &opts);
    set_password_everywhere(NULL, "wrong-" SECRET);
    harness_connect(&h);
    redlock_result *r = NULL;
    redlock_acquire_options o = harness_options(5000, 1);
    cr_assert_eq(harness_acquire(&h, "auth", 4, &o, NULL, &r), REDLOCK_EAUTH);
    /* Decided as soon as two of three refused: the third may be pending. */
    cr_assert_geq(result_count(r, REDLOCK_MASTER_AUTH_FAILED), 2);
    cr_assert_eq(result_count(r, REDLOCK_MASTER_OK), 0);
    cr_assert(result_detail_contains(r, "WRONGPASS"), "detail: %s",
              r->masters[0].detail ? r->masters[0].detail : "(none)");
    for (unsigned i = 0; i < r->master_count; i++)
        cr_assert_null(r->masters[i].detail ? strstr(r->masters[i].detail, SECRET) : NULL);
    redlock_result_free(r);
    cr_assert(strstr(h.log, "WRONGPASS") != NULL, "log:\n%s", h.log);
    cr_assert_null(strstr(h.log, SECRET), "the log shows the password:\n%s", h.log);
    cr_assert_str_eq(redlock_strerror(REDLOCK_EAUTH), "the masters refused our credentials");
}

Test(errors, no_password_for_a_master_that_wants_one_is_an_auth_error)
{
    fleet_options opts = {.requirepass = SECRET};
    harness_start(&h, 3, &opts);
    set_password_everywhere(NULL, NULL);
    harness_connect(&h);
    redlock_result *r = NULL;
    redlock_acquire_options o = harness_options(5000, 0);
    cr_assert_eq(harness_acquire(&h, "auth", 4, &o, NULL, &r), REDLOCK_EAUTH);
    cr_assert(result_detail_contains(r, "NOAUTH"));
    redlock_result_free(r);
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
    redlock_acquire_options o = harness_options(5000, 0);
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
        redisReply *reply = fleet_command(h.fleet, i, "HSET typed field value");
        cr_assert_not_null(reply);
        freeReplyObject(reply);
    }
    harness_connect(&h);
    /* SET NX sees an existing key of any type: held by someone else. */
    redlock_acquire_options o = harness_options(5000, 0);
    cr_assert_eq(harness_acquire(&h, "typed", 5, &o, NULL, NULL), REDLOCK_ECONFLICT);
    /* The scripts' GET hits the hash: WRONGTYPE, reported per master. */
    redlock_lock *lock = NULL;
    cr_assert_eq(redlock_lock_new(&lock, "typed", 5, "some-value", 10, 5000), REDLOCK_OK);
    redlock_result *r = NULL;
    cr_assert_eq(harness_extend(&h, lock, 0, &r), REDLOCK_EREPLY);
    cr_assert(result_detail_contains(r, "WRONGTYPE"));
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, lock, &r), REDLOCK_EREPLY);
    cr_assert(result_detail_contains(r, "WRONGTYPE"));
    redlock_result_free(r);
    redlock_lock_free(lock);
    /* The hashes are untouched. */
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_pttl(h.fleet, i, "typed", 5), -1);
}

Test(errors, a_read_only_replica_answers_readonly)
{
    harness_start(&h, 5, NULL);
    cr_assert_eq(fleet_start_replica(h.fleet, 4, 0), 0);
    harness_connect(&h);
    redlock_acquire_options o = harness_options(5000, 0);
    /* One replica among five: the lock still holds; the replica's answer
     * (if it came before the decision) is READONLY. */
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    cr_assert_eq(harness_acquire(&h, "ro", 2, &o, &lock, &r), REDLOCK_OK);
    cr_assert_neq(r->masters[4].outcome, REDLOCK_MASTER_OK);
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);

    /* Three replicas: no quorum can form, and the reason is their errors. */
    cr_assert_eq(fleet_start_replica(h.fleet, 2, 0), 0);
    cr_assert_eq(fleet_start_replica(h.fleet, 3, 1), 0);
    harness_run_for(&h, 600); /* the client reconnects to the restarted ones */
    cr_assert_eq(harness_acquire(&h, "ro2", 3, &o, &lock, &r), REDLOCK_EREPLY);
    cr_assert_eq(result_count(r, REDLOCK_MASTER_ERROR), 3);
    cr_assert(result_detail_contains(r, "READONLY"));
    redlock_result_free(r);
    harness_run_for(&h, 50);
    cr_assert_eq(fleet_pttl(h.fleet, 0, "ro2", 3), -2, "the failed attempt was not released");
}

Test(errors, a_select_of_a_missing_db_is_reported)
{
    harness_start(&h, 3, NULL);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(redlock_config_node_set_db(h.cfg, i, 99), REDLOCK_OK);
    harness_connect(&h);
    redlock_result *r = NULL;
    redlock_acquire_options o = harness_options(5000, 0);
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
    redlock_acquire_options o = harness_options(5000, 0);
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
    redlock_acquire_options o = harness_options(5000, 0);
    cr_assert_eq(harness_acquire(&h, "twice", 5, &o, NULL, &r), REDLOCK_ENOQUORUM);
    cr_assert_leq(r->masters_locked, 1, "one server, one vote");
    cr_assert(result_detail_contains(r, "same Redis server"));
    redlock_result_free(r);
    cr_assert(strstr(h.log, "must not count twice") != NULL, "log:\n%s", h.log);
}
