/* SPDX-License-Identifier: BSD-3-Clause */
/* The least-privilege ACL user of docs/operations.md: every operation
 * works with it, the clock check and fencing included, and nothing is
 * refused along the way but the optional CONFIG GET, without a word in
 * the log. */
#include "harness.h"

#include <criterion/criterion.h>
#include <string.h>

static harness h;

static void stop(void)
{
    harness_stop(&h);
}

/* docs/operations.md, "A least-privilege ACL user", word for word (but the
 * password). */
#define ACL_RULES                                                                            \
    "on >%s resetkeys ~locks:* ~redlock:clock:* ~redlock:fence ~redlock:fence:* "           \
    "resetchannels &redlock:released:* -@all +ping +info +select +script|load +evalsha +eval " \
    "+subscribe +unsubscribe +set +pttl +del +get +type +pexpire +publish +time +hget +hset "   \
    "+hmget +hdel +hexists +hgetall +hlen"

#define PASSWORD "acl-test-password-3d9a"

static void on_lost(int status, redlock_lock *lock, void *arg)
{
    (void)lock;
    *(int *)arg = status;
}

/* An ACL LOG entry for CONFIG GET: the durable check, which the user may
 * be refused (docs/operations.md), silently. */
static bool refused_config_get(const redisReply *entry)
{
    if (entry->type != REDIS_REPLY_ARRAY)
        return false;
    for (size_t k = 0; k + 1 < entry->elements; k += 2) {
        const redisReply *name = entry->element[k];
        const redisReply *value = entry->element[k + 1];
        if (name->type == REDIS_REPLY_STRING && strcmp(name->str, "object") == 0)
            return value->type == REDIS_REPLY_STRING && strcmp(value->str, "config|get") == 0;
    }
    return false;
}

/* Whether master i's server has what a plain lock takes without scripts:
 * SET ... IFEQ and DELIFEQ (or DELEX), asked of the server itself. */
static bool has_script_free_commands(size_t i)
{
    const char *probes[] = {"SET acl:probe v IFEQ v", "DELIFEQ acl:probe v"};
    bool has = true;
    for (size_t p = 0; p < 2; p++) {
        redisReply *r = fleet_command(h.fleet, i, probes[p]);
        cr_assert_not_null(r);
        has = has && r->type != REDIS_REPLY_ERROR;
        freeReplyObject(r);
    }
    return has;
}

Test(acl, the_least_privilege_user_runs_every_operation, .fini = stop, .timeout = 60)
{
    harness_start(&h, 3, NULL);
    for (size_t i = 0; i < 3; i++) {
        redisReply *r = fleet_command(h.fleet, i, "ACL SETUSER locker " ACL_RULES, PASSWORD);
        cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS, "ACL SETUSER: %s",
                  r != NULL && r->str != NULL ? r->str : "no reply");
        freeReplyObject(r);
        /* The script-free commands where the server has them (the docs'
         * last item). */
        if (has_script_free_commands(i)) {
            r = fleet_command(h.fleet, i, "ACL SETUSER locker +delifeq +exists");
            cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
            freeReplyObject(r);
        }
        cr_assert_eq(redlock_config_node_set_auth(h.cfg, i, "locker", PASSWORD), REDLOCK_OK);
    }
    harness_connect(&h);
    cr_assert_eq(harness_fencing_init(&h, 0, NULL), REDLOCK_OK, "log:\n%s", h.log);

    redlock_acquire_options o = fleet_acquire_options(2000, 0);
    o.fencing = 1;
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    cr_assert_eq(harness_acquire(&h, "locks:a", 7, &o, &lock, &r), REDLOCK_OK, "log:\n%s", h.log);
    for (size_t i = 0; i < 3; i++)
        cr_expect_eq(r->masters[i].clock_state, REDLOCK_CLOCK_TRUSTED, "master %zu: %s", i,
                     redlock_clock_state_name(r->masters[i].clock_state));
    redlock_result_free(r);
    int lost = 1;
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, on_lost, &lost), REDLOCK_OK);
    cr_assert_eq(harness_extend(&h, lock, 2000, NULL), REDLOCK_OK);
    cr_assert_eq(harness_inspect(&h, "locks:a", 7, NULL), REDLOCK_OK);
    cr_assert_eq(harness_ping(&h, NULL), REDLOCK_OK);

    /* A waiter by notification, woken by the release. */
    redlock_acquire_options wait = fleet_acquire_options(2000, 0);
    wait.wait_ms = 3000;
    wait.retry_count = 1000;
    redlock_lock *second = NULL;
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    cr_assert_eq(harness_acquire(&h, "locks:a", 7, &wait, &second, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, second, NULL), REDLOCK_OK);
    redlock_lock_free(second);
    redlock_lock_free(lock);
    cr_assert_eq(lost, 1);
    harness_free_client(&h);

    cr_assert(h.log == NULL || (strstr(h.log, "NOPERM") == NULL &&
                                strstr(h.log, "cannot keep a clock probe") == NULL &&
                                strstr(h.log, "denied") == NULL),
              "log:\n%s", h.log);
    for (size_t i = 0; i < 3; i++) {
        redisReply *keys = fleet_command(h.fleet, i, "KEYS redlock:clock:*");
        cr_assert(keys != NULL && keys->type == REDIS_REPLY_ARRAY);
        cr_expect_eq(keys->elements, 0, "master %zu: the probe outlived the client", i);
        freeReplyObject(keys);
        redisReply *log = fleet_command(h.fleet, i, "ACL LOG");
        cr_assert(log != NULL && log->type == REDIS_REPLY_ARRAY);
        for (size_t e = 0; e < log->elements; e++)
            cr_expect(refused_config_get(log->element[e]),
                      "master %zu: the ACL refused something besides CONFIG GET", i);
        freeReplyObject(log);
    }
}

/* An ACL user without scripting (-@scripting), as some managed services
 * give: where the server has the script-free commands, a plain lock
 * works and the rest is refused, saying scripts are missing; elsewhere
 * the handshake finds it, and every operation is refused the same way. */
Test(acl, a_user_without_scripting_keeps_a_plain_lock_where_the_server_can, .fini = stop,
     .timeout = 60)
{
    harness_start(&h, 3, NULL);
    bool plain = true;
    for (size_t i = 0; i < 3; i++) {
        redisReply *r = fleet_command(h.fleet, i,
                                      "ACL SETUSER noscript on >%s ~* &* +@all -@scripting",
                                      PASSWORD);
        cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
        freeReplyObject(r);
        cr_assert_eq(redlock_config_node_set_auth(h.cfg, i, "noscript", PASSWORD), REDLOCK_OK);
        plain = plain && has_script_free_commands(i);
    }
    harness_connect(&h);
    redlock_acquire_options o = fleet_acquire_options(5000, 0);
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    int status = harness_acquire(&h, "locks:p", 7, &o, &lock, &r);
    if (plain) {
        cr_assert_eq(status, REDLOCK_OK, "acquire: %s; log:\n%s", redlock_strerror(status),
                     h.log);
        redlock_result_free(r);
        cr_assert_eq(harness_extend(&h, lock, 5000, NULL), REDLOCK_OK, "log:\n%s", h.log);
        cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK, "log:\n%s", h.log);
        redlock_lock_free(lock);
        for (size_t i = 0; i < 3; i++)
            cr_expect_eq(fleet_pttl(h.fleet, i, "locks:p", 7), -2, "master %zu: key left", i);
        cr_assert_not_null(strstr(h.log, "scripts refused; a plain lock"), "log:\n%s", h.log);
        /* A fenced lock needs the scripts: refused at once, saying so. */
        o.fencing = 1;
        lock = NULL;
        r = NULL;
        status = harness_acquire(&h, "locks:f", 7, &o, &lock, &r);
    }
    cr_assert_eq(status, REDLOCK_EPERM, "%s", redlock_strerror(status));
    cr_assert_null(lock);
    for (size_t i = 0; i < 3; i++) {
        cr_expect_eq(r->masters[i].outcome, REDLOCK_MASTER_REFUSED, "master %zu: %s", i,
                     redlock_master_outcome_name(r->masters[i].outcome));
        cr_expect(r->masters[i].detail != NULL &&
                      strstr(r->masters[i].detail, "the lock needs scripts") != NULL,
                  "master %zu: %s", i, r->masters[i].detail ? r->masters[i].detail : "(none)");
    }
    redlock_result_free(r);
}

/* Whether an ACL LOG entry is a refusal of command. */
static bool entry_is(const redisReply *entry, const char *command)
{
    for (size_t k = 0; entry->type == REDIS_REPLY_ARRAY && k + 1 < entry->elements; k += 2) {
        const redisReply *name = entry->element[k];
        const redisReply *value = entry->element[k + 1];
        if (name->type == REDIS_REPLY_STRING && strcmp(name->str, "object") == 0)
            return value->type == REDIS_REPLY_STRING && strcmp(value->str, command) == 0;
    }
    return false;
}

/* How many refusals an ACL LOG entry stands for: repeats are one entry. */
static long long entry_count(const redisReply *entry)
{
    for (size_t k = 0; entry->type == REDIS_REPLY_ARRAY && k + 1 < entry->elements; k += 2) {
        const redisReply *name = entry->element[k];
        const redisReply *value = entry->element[k + 1];
        if (name->type == REDIS_REPLY_STRING && strcmp(name->str, "count") == 0 &&
            value->type == REDIS_REPLY_INTEGER)
            return value->integer;
    }
    return 1;
}

/* The least-privilege user without DELIFEQ, on a server that has it: the
 * first release on a connection is refused there, and the scripts serve
 * from then on: one refusal per master, every release done. */
Test(acl, a_user_without_delifeq_releases_through_the_script_after_one_refusal, .fini = stop,
     .timeout = 60)
{
    harness_start(&h, 3, NULL);
    for (size_t i = 0; i < 3; i++) {
        if (!has_script_free_commands(i))
            cr_skip_test("master %zu has no DELIFEQ: nothing to refuse", i);
        redisReply *r = fleet_command(h.fleet, i, "ACL SETUSER locker " ACL_RULES, PASSWORD);
        cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
        freeReplyObject(r);
        cr_assert_eq(redlock_config_node_set_auth(h.cfg, i, "locker", PASSWORD), REDLOCK_OK);
    }
    harness_connect(&h);
    for (int n = 0; n < 3; n++) {
        redlock_acquire_options o = fleet_acquire_options(5000, 0);
        redlock_lock *lock = NULL;
        cr_assert_eq(harness_acquire(&h, "locks:d", 7, &o, &lock, NULL), REDLOCK_OK);
        redlock_result *r = NULL;
        cr_assert_eq(harness_release(&h, lock, &r), REDLOCK_OK, "release %d; log:\n%s", n,
                     h.log);
        redlock_result_free(r);
        redlock_lock_free(lock);
        cr_assert(harness_wait_key_gone(&h, "locks:d", 7, 2000));
    }
    harness_free_client(&h);
    for (size_t i = 0; i < 3; i++) {
        cr_expect_eq(fleet_pttl(h.fleet, i, "locks:d", 7), -2, "master %zu: key left", i);
        redisReply *log = fleet_command(h.fleet, i, "ACL LOG");
        cr_assert(log != NULL && log->type == REDIS_REPLY_ARRAY);
        /* The first release's DELIFEQ and EXISTS (sent with it), once. */
        long long refused[2] = {0, 0};
        for (size_t e = 0; e < log->elements; e++)
            if (!refused_config_get(log->element[e])) {
                bool exists = entry_is(log->element[e], "exists");
                cr_expect(exists || entry_is(log->element[e], "delifeq"),
                          "master %zu: the ACL refused something else", i);
                refused[exists] += entry_count(log->element[e]);
            }
        freeReplyObject(log);
        cr_expect_eq(refused[0], 1, "master %zu: DELIFEQ refused %lld times", i, refused[0]);
        cr_expect_leq(refused[1], 1, "master %zu: EXISTS refused %lld times", i, refused[1]);
    }
    cr_assert_not_null(strstr(h.log, "DELIFEQ refused"), "log:\n%s", h.log);
}
