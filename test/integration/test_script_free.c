/* SPDX-License-Identifier: BSD-3-Clause */
/* The script-free path against real masters (docs/servers.md): a master
 * whose server has SET IFEQ extends a plain lock without the extend
 * script, and every extension answers as the script would. Run against
 * Redis 7.0 (no such command: the scripts), and by the server matrix
 * against Valkey 8.1 and 9.1 (the command) and Redis 8.0 (not yet). */
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

Test(script_free, an_extension_goes_without_a_script_where_the_master_has_set_ifeq)
{
    connect_with(1);
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    redlock_lock *lock = NULL;
    cr_assert_eq(harness_acquire(&h, RES, strlen(RES), &o, &lock, NULL), REDLOCK_OK);
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

/* Acquire, change every master's key, extend: what the extension says. */
static answer extend_after(int script_free, change c)
{
    connect_with(script_free);
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    redlock_lock *lock = NULL;
    cr_assert_eq(harness_acquire(&h, RES, strlen(RES), &o, &lock, NULL), REDLOCK_OK);
    for (size_t i = 0; i < MASTERS; i++)
        make(i, c);
    answer a;
    redlock_result *r = NULL;
    a.status = harness_extend(&h, lock, 30000, &r);
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

Test(script_free, every_extension_answers_as_the_script_would)
{
    for (change c = TAKEN_OVER; c < CHANGES; c++) {
        answer with_script = extend_after(0, c);
        answer without = extend_after(1, c);

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
