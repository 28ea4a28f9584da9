/* SPDX-License-Identifier: BSD-3-Clause */
/* Batched extensions and releases against real masters: several locks'
 * requests to one master go out as one call of a batch script, and each
 * lock still gets its own answer. */
#include "harness.h"
#include "slowlog.h"
#include "scripts.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <string.h>

#define MASTERS 3
#define LOCKS 6

static harness h;

/* The batches are the scripts' (a master with SET IFEQ extends a plain
 * lock without one, alone: test_script_free.c), so scripts everywhere. */
static void three_masters(void)
{
    harness_start(&h, MASTERS, NULL);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_SCRIPT_FREE, 0), REDLOCK_OK);
}

static void teardown(void)
{
    for (size_t i = 0; i < MASTERS; i++)
        fleet_resume(h.fleet, i); /* a failed test may leave one stopped */
    harness_stop(&h);
}

TestSuite(batch, .init = three_masters, .fini = teardown, .timeout = 120);

typedef struct done {
    bool called;
    int status;
    redlock_result *result;
} done;

static void on_done(int status, const redlock_result *r, void *arg)
{
    done *d = arg;
    d->called = true;
    d->status = status;
    if (r != NULL)
        cr_assert_eq(redlock_result_copy(r, &d->result), REDLOCK_OK);
}

static bool all_done(harness *hh, void *arg)
{
    (void)hh;
    const done *d = arg;
    for (size_t i = 0; i < LOCKS; i++)
        if (!d[i].called)
            return false;
    return true;
}

static bool one_done(harness *hh, void *arg)
{
    (void)hh;
    return ((const done *)arg)->called;
}

static void forget(done *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        redlock_result_free(d[i].result);
        d[i] = (done){0};
    }
}

/* Connected to every master: a ping answered by each (its handshake done,
 * so that nothing goes out behind it one by one). */
static void connect_all(void)
{
    harness_connect(&h);
    redlock_result *r = NULL;
    cr_assert_eq(harness_ping(&h, &r), REDLOCK_OK);
    cr_assert_eq(fleet_result_count(r, REDLOCK_MASTER_OK), MASTERS);
    redlock_result_free(r);
}

static char names[LOCKS][16];

/* Lock i's resource: "batch:<i>". */
static const char *name(size_t i)
{
    snprintf(names[i], sizeof(names[i]), "batch:%zu", i);
    return names[i];
}

static void acquire_all(redlock_lock **locks, int64_t ttl_ms)
{
    redlock_acquire_options o = fleet_acquire_options(ttl_ms, 0);
    for (size_t i = 0; i < LOCKS; i++)
        cr_assert_eq(harness_acquire(&h, name(i), strlen(name(i)), &o, &locks[i], NULL),
                     REDLOCK_OK);
}

/* Extend every lock to ttl_ms at once (one loop iteration). */
static void extend_all(redlock_lock **locks, int64_t ttl_ms, done *d)
{
    for (size_t i = 0; i < LOCKS; i++)
        cr_assert_eq(redlock_extend_async(h.client, locks[i], ttl_ms, on_done, &d[i]),
                     REDLOCK_OK);
    cr_assert(harness_wait_until(&h, all_done, d, 10000), "the extensions never completed");
}

static void release_and_free(redlock_lock **locks)
{
    for (size_t i = 0; i < LOCKS; i++) {
        redlock_release_async(h.client, locks[i], NULL, NULL);
        redlock_lock_free(locks[i]);
    }
}

static uint64_t requests_to(size_t i)
{
    static redlock_stats s = {.size = sizeof(redlock_stats)};
    cr_assert_eq(redlock_client_stats(h.client, &s), REDLOCK_OK);
    return s.masters[i].requests;
}

typedef struct request_count {
    size_t master;
    uint64_t at_least;
} request_count;

/* Master *arg has nothing in flight or queued. */
static bool idle(harness *hh, void *arg)
{
    (void)hh;
    static redlock_stats s = {.size = sizeof(redlock_stats)};
    cr_assert_eq(redlock_client_stats(h.client, &s), REDLOCK_OK);
    size_t i = *(const size_t *)arg;
    return s.masters[i].in_flight == 0 && s.masters[i].queued == 0;
}

static bool sent_to(harness *hh, void *arg)
{
    (void)hh;
    const request_count *c = arg;
    return requests_to(c->master) >= c->at_least;
}

Test(batch, extensions_go_as_one_call_and_each_lock_gets_its_own_answer)
{
    connect_all();
    redlock_lock *locks[LOCKS];
    acquire_all(locks, 10000);
    for (size_t i = 0; i < MASTERS; i++) {
        slowlog_every_command(h.fleet, i);
        /* Locks 1 and 2 taken over by another client; lock 3's key made
         * a list (a key of the wrong type). */
        for (size_t l = 1; l <= 3; l++)
            cr_assert_eq(fleet_del(h.fleet, i, name(l), strlen(name(l))), 1);
        cr_assert_eq(fleet_set(h.fleet, i, name(1), strlen(name(1)), "other", 5, 60000), 0);
        cr_assert_eq(fleet_set(h.fleet, i, name(2), strlen(name(2)), "other", 5, 60000), 0);
        redisReply *r = fleet_command(h.fleet, i, "RPUSH %s x", name(3));
        cr_assert(r != NULL && r->type == REDIS_REPLY_INTEGER);
        freeReplyObject(r);
    }
    done d[LOCKS] = {0};
    extend_all(locks, 30000, d);
    for (size_t i = 0; i < LOCKS; i++) {
        if (i == 1 || i == 2) {
            cr_expect_eq(d[i].status, REDLOCK_ENOTOWNER, "lock %zu: %s", i,
                         redlock_strerror(d[i].status));
        } else if (i == 3) {
            cr_expect_eq(d[i].status, REDLOCK_EREPLY, "lock 3: %s", redlock_strerror(d[i].status));
            cr_expect(result_detail_contains(d[i].result, "WRONGTYPE"));
        } else {
            cr_expect_eq(d[i].status, REDLOCK_OK, "lock %zu: %s", i,
                         redlock_strerror(d[i].status));
            for (size_t m = 0; m < MASTERS; m++)
                cr_expect_gt(fleet_pttl(h.fleet, m, name(i), strlen(name(i))), 20000,
                             "lock %zu not extended on master %zu", i, m);
        }
    }
    /* Another client's keys are untouched. */
    for (size_t m = 0; m < MASTERS; m++)
        cr_expect_leq(fleet_pttl(h.fleet, m, name(1), strlen(name(1))), 60000);
    /* One call of the batch script per master, naming every lock; no
     * extend script call of its own. */
    for (size_t m = 0; m < MASTERS; m++) {
        cr_expect_eq(slowlog_script_calls(h.fleet, m, rl_extend_batch_script.sha, NULL),
                     1, "master %zu", m);
        cr_expect_eq(slowlog_script_calls(h.fleet, m, rl_extend_script.sha, NULL),
                     0, "master %zu", m);
        for (size_t i = 0; i < LOCKS; i++)
            cr_expect_eq(slowlog_script_calls(h.fleet, m, rl_extend_batch_script.sha, name(i)), 1,
                         "master %zu, lock %zu", m, i);
    }
    forget(d, LOCKS);
    release_and_free(locks);
    harness_free_client(&h);
}

/* A blocking subscriber on master i to every lock's release channel. */
static redisContext *subscribe_all(size_t i)
{
    redisContext *c = fleet_connect(h.fleet, i);
    cr_assert_not_null(c);
    for (size_t l = 0; l < LOCKS; l++) {
        redisReply *r = redisCommand(c, "SUBSCRIBE redlock:released:0:%s", name(l));
        cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY);
        freeReplyObject(r);
    }
    return c;
}

Test(batch, releases_waiting_for_room_go_as_one_call_and_each_is_announced)
{
    /* One request in flight per master; master 0 stopped with an
     * extension in flight: the releases wait for room behind it, and go
     * as one batch when it answers. */
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_MAX_IN_FLIGHT, 1), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_TTL_MS, fleet_scaled_ms(60000)), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, fleet_scaled_ms(1000)),
                 REDLOCK_OK);
    connect_all();
    redlock_lock *locks[LOCKS];
    acquire_all(locks, fleet_scaled_ms(20000));
    size_t first = 0;
    cr_assert(harness_wait_until(&h, idle, &first, 3000)); /* the acquires answered */
    redisContext *sub = subscribe_all(0);
    slowlog_every_command(h.fleet, 0);
    cr_assert_eq(fleet_pause(h.fleet, 0), 0);
    request_count c = {0, requests_to(0) + 1};
    done extended = {0};
    cr_assert_eq(redlock_extend_async(h.client, locks[0], fleet_scaled_ms(20000), on_done,
                                      &extended),
                 REDLOCK_OK);
    cr_assert(harness_wait_until(&h, sent_to, &c, 3000), "the extension never went out");
    done released[LOCKS] = {0};
    for (size_t i = 1; i < LOCKS; i++)
        cr_assert_eq(redlock_release_async(h.client, locks[i], on_done, &released[i]),
                     REDLOCK_OK);
    released[0].called = true;
    harness_run_for(&h, 50);
    cr_assert_eq(fleet_resume(h.fleet, 0), 0);
    cr_assert(harness_wait_until(&h, all_done, released, 5000));
    harness_run_for(&h, 100);
    for (size_t i = 1; i < LOCKS; i++) {
        cr_expect_eq(released[i].status, REDLOCK_OK, "lock %zu", i);
        cr_expect(harness_wait_key_gone(&h, name(i), strlen(name(i)), 2000), "lock %zu", i);
        for (size_t m = 0; m < MASTERS; m++)
            cr_expect_eq(fleet_pttl(h.fleet, m, name(i), strlen(name(i))), -2,
                         "lock %zu still held on master %zu", i, m);
    }
    /* Master 0 ran one release batch naming all five. */
    cr_expect_eq(slowlog_script_calls(h.fleet, 0, rl_release_batch_script.sha, NULL), 1);
    cr_expect_eq(slowlog_script_calls(h.fleet, 0, rl_release_script.sha, NULL), 0);
    for (size_t i = 1; i < LOCKS; i++)
        cr_expect_eq(slowlog_script_calls(h.fleet, 0, rl_release_batch_script.sha, name(i)),
                     1, "lock %zu", i);
    /* Each release was announced on its channel. */
    bool heard[LOCKS] = {false};
    for (size_t n = 1; n < LOCKS; n++) {
        redisReply *msg = NULL;
        cr_assert_eq(redisGetReply(sub, (void **)&msg), REDIS_OK, "only %zu announcements", n - 1);
        cr_assert(msg->type == REDIS_REPLY_ARRAY && msg->elements == 3);
        for (size_t i = 1; i < LOCKS; i++) {
            char channel[64];
            snprintf(channel, sizeof(channel), "redlock:released:0:%s", name(i));
            if (strcmp(msg->element[1]->str, channel) == 0)
                heard[i] = true;
        }
        freeReplyObject(msg);
    }
    for (size_t i = 1; i < LOCKS; i++)
        cr_expect(heard[i], "the release of lock %zu was not announced", i);
    redisFree(sub);
    cr_assert(harness_wait_until(&h, one_done, &extended, 5000));
    forget(released, LOCKS);
    forget(&extended, 1);
    redlock_release_async(h.client, locks[0], NULL, NULL);
    for (size_t i = 0; i < LOCKS; i++)
        redlock_lock_free(locks[i]);
    harness_free_client(&h);
}

static bool script_cached(size_t i, const char *sha)
{
    redisReply *r = fleet_command(h.fleet, i, "SCRIPT EXISTS %s", sha);
    cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 1);
    bool cached = r->element[0]->integer == 1;
    freeReplyObject(r);
    return cached;
}

typedef struct extended_to {
    size_t lock;
    long long at_least;
} extended_to;

/* Every master has lock e->lock's key with a PTTL above e->at_least. */
static bool extended_everywhere(harness *hh, void *arg)
{
    (void)hh;
    const extended_to *e = arg;
    for (size_t m = 0; m < MASTERS; m++)
        if (fleet_pttl(h.fleet, m, name(e->lock), strlen(name(e->lock))) <= e->at_least)
            return false;
    return true;
}

/* Every master's script cache emptied. */
static void flush_scripts(void)
{
    for (size_t m = 0; m < MASTERS; m++) {
        redisReply *r = fleet_command(h.fleet, m, "SCRIPT FLUSH");
        cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
        freeReplyObject(r);
    }
}

/* Each lock's extension succeeded, and its key lives longer than
 * at_least_ms on every master. */
static void expect_extended_everywhere(const done *d, long long at_least_ms)
{
    for (size_t i = 0; i < LOCKS; i++) {
        cr_expect_eq(d[i].status, REDLOCK_OK, "lock %zu: %s", i, redlock_strerror(d[i].status));
        extended_to e = {i, at_least_ms};
        cr_expect(harness_wait_until(&h, extended_everywhere, &e, 2000),
                  "lock %zu not extended on every master", i);
    }
}

Test(batch, masters_whose_scripts_were_flushed_still_extend_each_lock)
{
    connect_all();
    redlock_lock *locks[LOCKS];
    acquire_all(locks, 10000);
    flush_scripts();
    for (size_t m = 0; m < MASTERS; m++)
        slowlog_every_command(h.fleet, m);
    done d[LOCKS] = {0};
    extend_all(locks, 30000, d);
    expect_extended_everywhere(d, 20000);
    /* Each batch was refused NOSCRIPT and its locks went one by one with
     * EVAL; the batch script is back for the next batch. */
    for (size_t m = 0; m < MASTERS; m++) {
        cr_expect_eq(slowlog_script_calls(h.fleet, m, rl_extend_batch_script.sha, NULL),
                     1, "master %zu", m);
        cr_expect(script_cached(m, rl_extend_batch_script.sha), "master %zu", m);
    }
    forget(d, LOCKS);
    extend_all(locks, 40000, d);
    expect_extended_everywhere(d, 30000);
    for (size_t m = 0; m < MASTERS; m++)
        cr_expect_eq(slowlog_script_calls(h.fleet, m, rl_extend_batch_script.sha, NULL),
                     2, "master %zu", m);
    forget(d, LOCKS);
    release_and_free(locks);
    harness_free_client(&h);
}

/* A master whose NOSCRIPT comes after the others decided: its locks still
 * go out one by one, so each key keeps the lock's margin there too. */
Test(batch, a_master_refusing_the_batch_after_the_decision_still_extends_each_lock)
{
    connect_all();
    redlock_lock *locks[LOCKS];
    acquire_all(locks, 10000);
    flush_scripts();
    cr_assert_eq(fleet_pause(h.fleet, MASTERS - 1), 0);
    done d[LOCKS] = {0};
    extend_all(locks, 30000, d);
    cr_assert_eq(fleet_resume(h.fleet, MASTERS - 1), 0);
    expect_extended_everywhere(d, 20000);
    forget(d, LOCKS);
    release_and_free(locks);
    harness_free_client(&h);
}

Test(batch, a_connection_lost_with_a_batch_in_flight_tells_each_lock)
{
    /* Masters 0 and 1 stopped with a batch of extensions in flight; 0 is
     * killed: each lock hears master 0 is lost, and the quorum comes from 1
     * and 2 once 1 resumes. */
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_TTL_MS, fleet_scaled_ms(60000)), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, fleet_scaled_ms(3000)),
                 REDLOCK_OK);
    connect_all();
    redlock_lock *locks[LOCKS];
    acquire_all(locks, fleet_scaled_ms(20000));
    slowlog_every_command(h.fleet, 1);
    cr_assert_eq(fleet_pause(h.fleet, 0), 0);
    cr_assert_eq(fleet_pause(h.fleet, 1), 0);
    request_count c = {0, requests_to(0) + LOCKS};
    done d[LOCKS] = {0};
    for (size_t i = 0; i < LOCKS; i++)
        cr_assert_eq(redlock_extend_async(h.client, locks[i], fleet_scaled_ms(20000), on_done,
                                          &d[i]),
                     REDLOCK_OK);
    cr_assert(harness_wait_until(&h, sent_to, &c, 3000), "the extensions never went out");
    harness_run_for(&h, 20);
    cr_assert_eq(fleet_kill(h.fleet, 0), 0);
    harness_run_for(&h, 100);
    for (size_t i = 0; i < LOCKS; i++)
        cr_expect_not(d[i].called, "lock %zu decided without a quorum", i);
    cr_assert_eq(fleet_resume(h.fleet, 1), 0);
    cr_assert(harness_wait_until(&h, all_done, d, 10000));
    for (size_t i = 0; i < LOCKS; i++) {
        cr_expect_eq(d[i].status, REDLOCK_OK, "lock %zu: %s", i, redlock_strerror(d[i].status));
        cr_expect_eq(d[i].result->masters[0].outcome, REDLOCK_MASTER_NOT_CONNECTED, "lock %zu",
                     i);
        cr_expect_not_null(d[i].result->masters[0].detail);
        cr_expect_eq(d[i].result->masters[1].outcome, REDLOCK_MASTER_OK, "lock %zu", i);
    }
    cr_expect_eq(slowlog_script_calls(h.fleet, 1, rl_extend_batch_script.sha, NULL),
                 1, "not one batch");
    forget(d, LOCKS);
    release_and_free(locks);
    harness_free_client(&h);
}

/* ---- The batch scripts answer as the single scripts do ------------------ */

/* What a lock's key can be found as on a master. */
enum key_case {
    CASE_ABSENT,
    CASE_OURS,         /* a plain key holding our value */
    CASE_OTHERS,       /* a plain key holding another value */
    CASE_LIST,         /* a key of another type */
    CASE_HOLD_OURS,    /* a reentrant hash with a hold named by our value */
    CASE_HOLD_OTHERS,  /* a reentrant hash without it */
    CASE_FENCED_OURS,  /* our plain key and its token key */
    CASE_FENCED_GONE,  /* a fenced lock's key expired, its token key left */
    CASES
};

#define VALUE "value-ours"
#define TOKEN_AND_VALUE "7:value-ours" /* a token key's: "<token>:<value>" */
#define CHANNELS "redlock:released:0:"

static void eq_key(char *out, size_t size, const char *side, int c, bool token)
{
    snprintf(out, size, "%s%s:%d", token ? REDLOCK_FENCING_TOKEN_PREFIX : "", side, c);
}

static void eq_command(redisContext *ctx, int argc, const char **argv)
{
    redisReply *r = redisCommandArgv(ctx, argc, argv, NULL);
    cr_assert(r != NULL && r->type != REDIS_REPLY_ERROR, "%s: %s", argv[0],
              r != NULL ? r->str : ctx->errstr);
    freeReplyObject(r);
}

/* Key case c written under the name side:c (and its token key). */
static void eq_setup(redisContext *ctx, const char *side, int c)
{
    char k[64];
    char t[64];
    eq_key(k, sizeof(k), side, c, false);
    eq_key(t, sizeof(t), side, c, true);
    switch (c) {
    case CASE_OURS:
    case CASE_FENCED_OURS:
        eq_command(ctx, 5, (const char *[]){"SET", k, VALUE, "PX", "10000"});
        if (c == CASE_FENCED_OURS)
            eq_command(ctx, 5, (const char *[]){"SET", t, TOKEN_AND_VALUE, "PX", "10000"});
        break;
    case CASE_OTHERS:
        eq_command(ctx, 5, (const char *[]){"SET", k, "value-other", "PX", "10000"});
        break;
    case CASE_LIST:
        eq_command(ctx, 3, (const char *[]){"RPUSH", k, "x"});
        break;
    case CASE_HOLD_OURS:
    case CASE_HOLD_OTHERS:
        eq_command(ctx, 6, (const char *[]){"HSET", k, "", "owner",
                                            c == CASE_HOLD_OURS ? VALUE : "value-other",
                                            "99999999999999"});
        eq_command(ctx, 3, (const char *[]){"PEXPIRE", k, "10000"});
        break;
    case CASE_FENCED_GONE:
        eq_command(ctx, 5, (const char *[]){"SET", t, TOKEN_AND_VALUE, "PX", "10000"});
        break;
    default:
        break;
    }
}

static bool eq_fenced(int c)
{
    return c == CASE_FENCED_OURS || c == CASE_FENCED_GONE;
}

/* The state a case's keys were left in: type and PTTL band of each. */
static void eq_state(redisContext *ctx, const char *side, int c, char *out, size_t size)
{
    size_t used = 0;
    for (int tk = 0; tk < 2; tk++) {
        char k[64];
        eq_key(k, sizeof(k), side, c, tk == 1);
        redisReply *type = redisCommand(ctx, "TYPE %s", k);
        redisReply *pttl = redisCommand(ctx, "PTTL %s", k);
        cr_assert(type != NULL && pttl != NULL && pttl->type == REDIS_REPLY_INTEGER);
        long long p = pttl->integer;
        int n = snprintf(out + used, size - used, "%s%s ttl %s", tk ? ", " : "", type->str,
                         p < 0 ? (p == -1 ? "none" : "gone")
                               : p > 20000 ? "extended" : "kept");
        used += n > 0 ? (size_t)n : 0;
        freeReplyObject(type);
        freeReplyObject(pttl);
    }
}

/* A reply as text: integers, errors (by their Redis error code, the
 * first WRONGTYPE or ERR word found), or anything else. */
static void eq_answer(const redisReply *r, char *out, size_t size)
{
    if (r->type == REDIS_REPLY_INTEGER)
        snprintf(out, size, "%lld", r->integer);
    else if (r->type == REDIS_REPLY_ERROR)
        snprintf(out, size, "error%s", strstr(r->str, "WRONGTYPE") ? " WRONGTYPE" : "");
    else
        snprintf(out, size, "type %d", r->type);
}

/* The cases of one key and two arguments (not fenced) through the batch
 * script's short form, "p" then each lock's two arguments: the same
 * answers as the single script's, and the same keys left. */
static void same_in_short_form(redisContext *ctx, const char *source, bool release,
                               char answers[CASES][64])
{
    const char *argv[4 + 3 * CASES + 1];
    char keys[CASES][64];
    int cases[CASES];
    int n = 0;
    for (int c = 0; c < CASES; c++)
        if (!eq_fenced(c))
            cases[n++] = c;
    char nkeys[16];
    snprintf(nkeys, sizeof(nkeys), "%d", n);
    int argc = 0;
    argv[argc++] = "EVAL";
    argv[argc++] = source;
    argv[argc++] = nkeys;
    for (int i = 0; i < n; i++) {
        eq_key(keys[i], sizeof(keys[i]), "plain", cases[i], false);
        argv[argc++] = keys[i];
    }
    argv[argc++] = "p";
    for (int i = 0; i < n; i++) {
        argv[argc++] = VALUE;
        argv[argc++] = release ? CHANNELS : "30000";
    }
    redisReply *r = redisCommandArgv(ctx, argc, argv, NULL);
    cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == (size_t)n, "%s",
              r != NULL && r->type == REDIS_REPLY_ERROR ? r->str : "not an array");
    for (int i = 0; i < n; i++) {
        int c = cases[i];
        char got[64];
        char single_state[128];
        char plain_state[128];
        eq_answer(r->element[i], got, sizeof(got));
        cr_expect_str_eq(got, answers[c], "case %d: the short form answered %s, the single "
                         "script %s", c, got, answers[c]);
        eq_state(ctx, "single", c, single_state, sizeof(single_state));
        eq_state(ctx, "plain", c, plain_state, sizeof(plain_state));
        cr_expect_str_eq(plain_state, single_state, "case %d: the short form left %s, the "
                         "single script %s", c, plain_state, single_state);
    }
    freeReplyObject(r);
}

/* Every key case through the single script (one call each) and the batch
 * script (one call for all): the same answer for each lock, and the same
 * keys left. release: the release scripts, else the extend scripts. */
static void same_as_single(bool release)
{
    redisContext *ctx = fleet_connect(h.fleet, 0);
    cr_assert_not_null(ctx);
    const rl_script *single = release ? &rl_release_script : &rl_extend_script;
    const rl_script *batch = release ? &rl_release_batch_script : &rl_extend_batch_script;
    for (int c = 0; c < CASES; c++) {
        eq_setup(ctx, "single", c);
        eq_setup(ctx, "batch", c);
        eq_setup(ctx, "plain", c);
    }
    /* The batch call's arguments: EVAL, source, key count, keys, count,
     * then per lock its key count, argument count and arguments. */
    const char *bargv[4 + 2 * CASES + 1 + 5 * CASES];
    char bkeys[2 * CASES][64];
    char nkeys[16];
    char ngroups[16];
    char nk[CASES][16];
    char na[CASES][16];
    int bargc = 0;
    int nbkeys = 0;
    bargv[bargc++] = "EVAL";
    bargv[bargc++] = batch->source;
    bargv[bargc++] = nkeys;
    for (int c = 0; c < CASES; c++) {
        eq_key(bkeys[nbkeys], sizeof(bkeys[0]), "batch", c, false);
        bargv[bargc++] = bkeys[nbkeys++];
        if (eq_fenced(c)) {
            eq_key(bkeys[nbkeys], sizeof(bkeys[0]), "batch", c, true);
            bargv[bargc++] = bkeys[nbkeys++];
        }
    }
    snprintf(nkeys, sizeof(nkeys), "%d", nbkeys);
    snprintf(ngroups, sizeof(ngroups), "%d", CASES);
    bargv[bargc++] = ngroups;
    char answers[CASES][64];
    for (int c = 0; c < CASES; c++) {
        char k[64];
        char t[64];
        eq_key(k, sizeof(k), "single", c, false);
        eq_key(t, sizeof(t), "single", c, true);
        const char *args[3] = {VALUE, release ? CHANNELS : "30000", "1"};
        int nargs = eq_fenced(c) ? 3 : 2;
        const char *argv[8] = {"EVAL", single->source, eq_fenced(c) ? "2" : "1", k};
        int argc = 4;
        if (eq_fenced(c))
            argv[argc++] = t;
        for (int a = 0; a < nargs; a++)
            argv[argc++] = args[a];
        redisReply *r = redisCommandArgv(ctx, argc, argv, NULL);
        cr_assert_not_null(r);
        eq_answer(r, answers[c], sizeof(answers[c]));
        freeReplyObject(r);
        snprintf(nk[c], sizeof(nk[c]), "%d", eq_fenced(c) ? 2 : 1);
        snprintf(na[c], sizeof(na[c]), "%d", nargs);
        bargv[bargc++] = nk[c];
        bargv[bargc++] = na[c];
        for (int a = 0; a < nargs; a++)
            bargv[bargc++] = args[a];
    }
    redisReply *r = redisCommandArgv(ctx, bargc, bargv, NULL);
    cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == CASES, "%s",
              r != NULL && r->type == REDIS_REPLY_ERROR ? r->str : "not an array");
    for (int c = 0; c < CASES; c++) {
        char got[64];
        char single_state[128];
        char batch_state[128];
        eq_answer(r->element[c], got, sizeof(got));
        cr_expect_str_eq(got, answers[c], "case %d: the batch answered %s, the single script %s",
                         c, got, answers[c]);
        eq_state(ctx, "single", c, single_state, sizeof(single_state));
        eq_state(ctx, "batch", c, batch_state, sizeof(batch_state));
        cr_expect_str_eq(batch_state, single_state, "case %d: the batch left %s, the single "
                         "script %s", c, batch_state, single_state);
    }
    freeReplyObject(r);
    same_in_short_form(ctx, batch->source, release, answers);
    redisFree(ctx);
}

Test(batch, the_batch_extend_script_answers_each_lock_as_the_extend_script_does)
{
    same_as_single(false);
}

Test(batch, the_batch_release_script_answers_each_lock_as_the_release_script_does)
{
    same_as_single(true);
}
