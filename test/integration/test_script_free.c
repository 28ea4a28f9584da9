/* SPDX-License-Identifier: BSD-3-Clause */
/* The script-free path against real masters (docs/servers.md): a master
 * whose server has SET IFEQ extends a plain lock without the extend
 * script, one with DELIFEQ (or DELEX) releases it without the release
 * script, and every extension and release answers as the script would.
 * Run against Redis 7.0 (no such command: the scripts), and by the server
 * matrix against Valkey 8.1 (SET IFEQ), Valkey 9.1 (both) and Redis 8.0
 * (neither yet). */
#include "harness.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MASTERS 3
#define RES "script-free"

static harness h;

static void three_masters(void)
{
    harness_start(&h, MASTERS, NULL);
}

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(script_free, .init = three_masters, .fini = teardown, .timeout = 90);

/* Whether master i's server has SET ... IFEQ: what the client learns from
 * its INFO, asked here of the server itself. */
static bool has_set_ifeq(size_t i)
{
    redisReply *r = fleet_command(h.fleet, i, "SET script-free:probe v IFEQ v");
    cr_assert_not_null(r);
    bool has = r->type != REDIS_REPLY_ERROR;
    freeReplyObject(r);
    return has;
}

/* Whether master i's server has DELIFEQ or DELEX ... IFEQ. */
static bool has_compare_and_delete(size_t i)
{
    bool has = false;
    const char *probes[] = {"DELIFEQ script-free:probe v", "DELEX script-free:probe IFEQ v"};
    for (size_t p = 0; p < 2 && !has; p++) {
        redisReply *r = fleet_command(h.fleet, i, probes[p]);
        cr_assert_not_null(r);
        has = r->type != REDIS_REPLY_ERROR;
        freeReplyObject(r);
    }
    return has;
}

/* Calls of command (lower case) master i has run, from INFO commandstats. */
static long long calls_of(size_t i, const char *command)
{
    redisReply *r = fleet_command(h.fleet, i, "INFO commandstats");
    cr_assert(r != NULL && r->type == REDIS_REPLY_STRING); /* RESP2: a bulk string */
    char field[64];
    snprintf(field, sizeof(field), "cmdstat_%s:calls=", command);
    const char *at = strstr(r->str, field);
    long long calls = at != NULL ? strtoll(at + strlen(field), NULL, 10) : 0;
    freeReplyObject(r);
    return calls;
}

static void connect_with(int script_free)
{
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_SCRIPT_FREE, script_free), REDLOCK_OK);
    harness_connect(&h);
    redlock_result *r = NULL;
    cr_assert_eq(harness_ping(&h, &r), REDLOCK_OK); /* every handshake done: INFO read */
    cr_assert_eq(fleet_result_count(r, REDLOCK_MASTER_OK), MASTERS);
    redlock_result_free(r);
}

/* A client with the script-free path on, holding RES. */
static redlock_lock *connect_and_acquire(void)
{
    connect_with(1);
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    redlock_lock *lock = NULL;
    cr_assert_eq(harness_acquire(&h, RES, strlen(RES), &o, &lock, NULL), REDLOCK_OK);
    return lock;
}

Test(script_free, an_extension_goes_without_a_script_where_the_master_has_set_ifeq)
{
    redlock_lock *lock = connect_and_acquire();
    long long before[MASTERS];
    for (size_t i = 0; i < MASTERS; i++)
        before[i] = calls_of(i, "evalsha") + calls_of(i, "eval");
    redlock_result *r = NULL;
    cr_assert_eq(harness_extend(&h, lock, 60000, &r), REDLOCK_OK);
    cr_assert_geq(fleet_result_count(r, REDLOCK_MASTER_OK), r->quorum);
    redlock_result_free(r);
    harness_run_for(&h, 100); /* the answers after the decision */
    for (size_t i = 0; i < MASTERS; i++) {
        long long scripts = calls_of(i, "evalsha") + calls_of(i, "eval") - before[i];
        long long pttl = fleet_pttl(h.fleet, i, RES, strlen(RES));
        cr_expect_gt(pttl, 30000, "master %zu: PTTL %lld after the extension to 60 s", i, pttl);
        if (has_set_ifeq(i))
            cr_expect_eq(scripts, 0, "master %zu has SET IFEQ, but ran %lld script(s)", i,
                         scripts);
        else
            cr_expect_geq(scripts, 1, "master %zu lacks SET IFEQ, and ran no script", i);
    }
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
}

/* What master i's key is made to hold before the extension. */
typedef enum change { TAKEN_OVER, DELETED, A_LIST, AN_OWNERS_HASH, CHANGES } change;

static const char *const change_name[CHANGES] = {"taken over", "deleted", "a list",
                                                  "another owner's hash"};

static void make(size_t i, change c)
{
    redisReply *r = NULL;
    cr_assert_eq(fleet_del(h.fleet, i, RES, strlen(RES)), 1);
    switch (c) {
    case TAKEN_OVER:
        cr_assert_eq(fleet_set(h.fleet, i, RES, strlen(RES), "other", 5, 60000), 0);
        return;
    case DELETED:
        return;
    case A_LIST:
        r = fleet_command(h.fleet, i, "RPUSH %s x", RES);
        break;
    case AN_OWNERS_HASH:
        r = fleet_command(h.fleet, i, "HSET %s owner:other 1 hold:other 99999999999999", RES);
        break;
    case CHANGES:
        break;
    }
    cr_assert(r != NULL && r->type == REDIS_REPLY_INTEGER);
    freeReplyObject(r);
}

typedef struct answer {
    int status;
    int outcome[MASTERS];
} answer;

/* Acquire, change every master's key, then extend or release: what that
 * says. */
static answer answer_after(int script_free, change c, bool release)
{
    connect_with(script_free);
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    redlock_lock *lock = NULL;
    cr_assert_eq(harness_acquire(&h, RES, strlen(RES), &o, &lock, NULL), REDLOCK_OK);
    for (size_t i = 0; i < MASTERS; i++)
        make(i, c);
    answer a;
    redlock_result *r = NULL;
    a.status = release ? harness_release(&h, lock, &r) : harness_extend(&h, lock, 30000, &r);
    cr_assert_not_null(r);
    for (size_t i = 0; i < MASTERS; i++)
        a.outcome[i] = r->masters[i].outcome;
    redlock_result_free(r);
    redlock_lock_free(lock);
    harness_free_client(&h);
    for (size_t i = 0; i < MASTERS; i++) {
        redisReply *d = fleet_command(h.fleet, i, "DEL %s", RES);
        freeReplyObject(d);
    }
    return a;
}

/* Each change made before an extension or a release answers the same
 * with and without the script. */
static void answers_as_the_script(bool release)
{
    for (change c = TAKEN_OVER; c < CHANGES; c++) {
        answer with_script = answer_after(0, c, release);
        answer without = answer_after(1, c, release);

        cr_expect_eq(without.status, with_script.status, "%s: %s without the script, %s with it",
                     change_name[c], redlock_strerror(without.status),
                     redlock_strerror(with_script.status));
        /* A master still to answer when the round was decided is pending
         * in one and not the other: that is timing, not an answer. */
        for (size_t i = 0; i < MASTERS; i++)
            if (without.outcome[i] != REDLOCK_MASTER_PENDING &&
                with_script.outcome[i] != REDLOCK_MASTER_PENDING)
                cr_expect_eq(without.outcome[i], with_script.outcome[i],
                         "%s, master %zu: %s without the script, %s with it", change_name[c], i,
                         redlock_master_outcome_name(without.outcome[i]),
                             redlock_master_outcome_name(with_script.outcome[i]));
        if (c == TAKEN_OVER)
            cr_expect_eq(without.status, REDLOCK_ENOTOWNER, "taken over: %s",
                         redlock_strerror(without.status));
    }
}

Test(script_free, every_extension_answers_as_the_script_would)
{
    answers_as_the_script(false);
}

Test(script_free, every_release_answers_as_the_script_would)
{
    answers_as_the_script(true);
}

/* A subscriber on master i's channel for RES (channel.h), as a waiter. */
static redisContext *subscribe_on(size_t i)
{
    redisContext *c = redisConnectWithTimeout("127.0.0.1", fleet_port(h.fleet, i),
                                              (struct timeval){.tv_sec = 5});
    cr_assert(c != NULL && c->err == 0);
    cr_assert_eq(redisSetTimeout(c, (struct timeval){.tv_sec = 5}), REDIS_OK);
    redisReply *r = redisCommand(c, "SUBSCRIBE redlock:released:0:%s", RES);
    cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY);
    freeReplyObject(r);
    return c;
}

Test(script_free, a_release_goes_without_a_script_where_the_master_has_delifeq_and_announces)
{
    redlock_lock *lock = connect_and_acquire();
    long long before[MASTERS];
    redisContext *waiter[MASTERS];
    for (size_t i = 0; i < MASTERS; i++) {
        before[i] = calls_of(i, "evalsha") + calls_of(i, "eval");
        waiter[i] = subscribe_on(i);
    }
    redlock_result *r = NULL;
    cr_assert_eq(harness_release(&h, lock, &r), REDLOCK_OK);
    redlock_result_free(r);
    redlock_lock_free(lock);
    harness_run_for(&h, 100); /* the answers after the decision */
    for (size_t i = 0; i < MASTERS; i++) {
        long long scripts = calls_of(i, "evalsha") + calls_of(i, "eval") - before[i];
        cr_expect_eq(fleet_pttl(h.fleet, i, RES, strlen(RES)), -2, "master %zu: key left", i);
        if (has_compare_and_delete(i))
            cr_expect_eq(scripts, 0, "master %zu has DELIFEQ, but ran %lld script(s)", i,
                         scripts);
        else
            cr_expect_geq(scripts, 1, "master %zu lacks DELIFEQ, and ran no script", i);
        /* Either way the waiter hears the release, with the value. */
        redisReply *msg = NULL;
        cr_assert_eq(redisGetReply(waiter[i], (void **)&msg), REDIS_OK,
                     "master %zu: no announcement in 5 s", i);
        cr_assert(msg->type == REDIS_REPLY_ARRAY && msg->elements == 3);
        cr_expect_str_eq(msg->element[0]->str, "message");
        cr_expect_eq(msg->element[2]->len, REDLOCK_VALUE_LEN, "the lock's value");
        freeReplyObject(msg);
        redisFree(waiter[i]);
    }
}
