/* SPDX-License-Identifier: BSD-3-Clause */
/* Several resources under one lock, all or nothing on each master, against
 * five real masters: what is set, what is left behind, who votes no, and
 * contenders asking in different orders. */
#include "harness.h"
#include "scripts.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static harness h;

static void five_masters(void)
{
    harness_start(&h, 5, NULL);
}

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(many, .init = five_masters, .fini = teardown, .timeout = 90);

static const void *const abc[] = {"c", "a", "b"};
static const size_t abc_lens[] = {1, 1, 1};

/* On how many masters every one of abc holds value. */
static size_t masters_holding_all(const char *value)
{
    size_t n = strlen(value);
    size_t least = fleet_size(h.fleet);
    for (size_t k = 0; k < 3; k++) {
        size_t c = fleet_count_value(h.fleet, abc[k], abc_lens[k], value, n);
        if (c < least)
            least = c;
    }
    return least;
}

static bool key_absent_everywhere(const char *key)
{
    for (size_t i = 0; i < fleet_size(h.fleet); i++)
        if (fleet_pttl(h.fleet, i, key, strlen(key)) != -2)
            return false;
    return true;
}

Test(many, a_set_is_taken_extended_inspected_and_released_as_one)
{
    harness_connect(&h);
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    cr_assert_eq(harness_acquire_many(&h, abc, abc_lens, 3, &o, &lock, &r), REDLOCK_OK);
    cr_assert_geq(r->masters_locked, 3);
    cr_assert_gt(r->validity_ms, 9000);
    redlock_result_free(r);

    /* Sorted, whatever order they were given in. */
    cr_assert_eq(redlock_lock_resource_count(lock), 3);
    size_t len = 0;
    cr_assert_eq(memcmp(redlock_lock_resource_at(lock, 0, &len), "a", 1), 0);
    cr_assert_eq(memcmp(redlock_lock_resource_at(lock, 2, &len), "c", 1), 0);
    cr_assert_null(redlock_lock_resource_at(lock, 3, &len));
    cr_assert_eq(len, 0);
    cr_assert_eq(memcmp(redlock_lock_resource(lock, &len), "a", 1), 0);

    const char *value = redlock_lock_value(lock, NULL);
    harness_run_for(&h, 50); /* the masters that were not needed for the quorum */
    cr_assert_eq(masters_holding_all(value), 5);

    /* Inspect reads the set at one instant on each master. */
    const void *ab[] = {"b", "a"};
    size_t ab_lens[] = {1, 1};
    cr_assert_eq(harness_inspect_many(&h, abc, abc_lens, 3, &r), REDLOCK_OK);
    for (size_t i = 0; i < 5; i++) {
        cr_assert_str_eq(r->masters[i].value, value);
        cr_assert_gt(r->masters[i].pttl_ms, 9000);
    }
    redlock_result_free(r);
    /* A part of it, and a set only partly held: -3. */
    cr_assert_eq(harness_inspect_many(&h, ab, ab_lens, 2, &r), REDLOCK_OK);
    cr_assert_str_eq(r->masters[0].value, value);
    redlock_result_free(r);
    const void *ax[] = {"a", "x"};
    cr_assert_eq(harness_inspect_many(&h, ax, ab_lens, 2, &r), REDLOCK_OK);
    cr_assert_null(r->masters[0].value);
    cr_assert_eq(r->masters[0].pttl_ms, -3);
    redlock_result_free(r);

    /* Extend resets every key's TTL. */
    cr_assert_eq(harness_extend(&h, lock, 30000, &r), REDLOCK_OK);
    redlock_result_free(r);
    for (size_t k = 0; k < 3; k++)
        cr_assert_gt(fleet_pttl(h.fleet, 0, abc[k], 1), 20000);

    cr_assert_eq(harness_release(&h, lock, &r), REDLOCK_OK);
    cr_assert_geq(r->masters_locked, 3);
    redlock_result_free(r);
    redlock_lock_free(lock);
    cr_assert(harness_wait_key_gone(&h, "a", 1, 3000));
    cr_assert(key_absent_everywhere("b") && key_absent_everywhere("c"));
}

Test(many, a_set_overlapping_a_held_resource_leaves_nothing_behind)
{
    harness_connect(&h);
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    redlock_lock *held = NULL;
    cr_assert_eq(harness_acquire(&h, "b", 1, &o, &held, NULL), REDLOCK_OK);
    harness_run_for(&h, 50);

    redlock_result *r = NULL;
    cr_assert_eq(harness_acquire_many(&h, abc, abc_lens, 3, &o, NULL, &r), REDLOCK_ECONFLICT);
    for (size_t i = 0; i < 5; i++)
        expect_master_or_pending(r, i, REDLOCK_MASTER_HELD, NULL);
    redlock_result_free(r);
    /* Not even for a moment: each master refused the whole set. */
    cr_assert(key_absent_everywhere("a"));
    cr_assert(key_absent_everywhere("c"));
    cr_assert_eq(fleet_count_value(h.fleet, "b", 1, redlock_lock_value(held, NULL),
                                   strlen(redlock_lock_value(held, NULL))),
                 5);
    cr_assert_eq(harness_release(&h, held, NULL), REDLOCK_OK);
    redlock_lock_free(held);
}

Test(many, a_master_holding_one_of_the_keys_votes_no_and_sets_none)
{
    /* Another holder has "b" on masters 0 and 1 only. */
    for (size_t i = 0; i < 2; i++)
        cr_assert_eq(fleet_set(h.fleet, i, "b", 1, "theirs", 6, 60000), 0);
    harness_connect(&h);
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    cr_assert_eq(harness_acquire_many(&h, abc, abc_lens, 3, &o, &lock, &r), REDLOCK_OK);
    redlock_result_free(r);
    harness_run_for(&h, 50);
    const char *value = redlock_lock_value(lock, NULL);
    for (size_t i = 0; i < 2; i++) {
        cr_assert_eq(fleet_pttl(h.fleet, i, "a", 1), -2, "master %zu set a part of the set", i);
        cr_assert_eq(fleet_pttl(h.fleet, i, "c", 1), -2, "master %zu set a part of the set", i);
    }
    cr_assert_eq(masters_holding_all(value), 3);

    /* Released: the other holder's "b" stays. */
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    char buf[16];
    for (size_t i = 0; i < 2; i++)
        cr_assert_eq(fleet_get(h.fleet, i, "b", 1, buf, sizeof(buf), NULL), 1);
    cr_assert_eq(memcmp(buf, "theirs", 6), 0);
}

/* The acquire script run on master 0 as EVAL; its integer reply. */
static long long run_acquire_script(const char *keys_and_args)
{
    char *cmd = NULL;
    cr_assert_geq(asprintf(&cmd, "EVAL %%s %s", keys_and_args), 0);
    redisReply *reply = fleet_command(h.fleet, 0, cmd, rl_acquire_script.source);
    free(cmd);
    cr_assert(reply != NULL && reply->type == REDIS_REPLY_INTEGER, "%s",
              reply && reply->type == REDIS_REPLY_ERROR ? reply->str : "not an integer");
    long long n = reply->integer;
    freeReplyObject(reply);
    return n;
}

Test(many, the_acquire_script_counts_its_own_value_as_yes)
{
    /* The same request seen twice by a master (an attempt retried): yes
     * both times. */
    cr_assert_eq(run_acquire_script("2 a b mine 10000"), 1);
    cr_assert_eq(run_acquire_script("2 a b mine 10000"), 1);
    cr_assert_eq(fleet_count_value(h.fleet, "b", 1, "mine", 4), 1);
    /* Another value on one key: no, and nothing set. */
    cr_assert_eq(run_acquire_script("2 b c other 10000"), 0);
    cr_assert_eq(fleet_pttl(h.fleet, 0, "c", 1), -2);
    /* A key of another type is taken. */
    redisReply *reply = fleet_command(h.fleet, 0, "RPUSH l item");
    freeReplyObject(reply);
    cr_assert_eq(run_acquire_script("2 l m v 10000"), 0);
    cr_assert_eq(fleet_pttl(h.fleet, 0, "m", 1), -2);
}

/* Two acquires of the same set, one asked as {x,y}, the other as {y,x},
 * each taking it again and again with retries on one client: both make
 * progress and never hold it at the same time. */
typedef struct contender {
    const void *resources[2];
    size_t lens[2];
    unsigned acquired;
    unsigned failed;
    redlock_lock *lock;
    bool *busy;
    bool *overlap;
    harness *h;
} contender;

#define CONTENDER_ROUNDS 10

static void contender_next(contender *c);

static void contender_released(int status, const redlock_result *r, void *arg)
{
    contender *c = arg;
    redlock_lock_free(c->lock);
    c->lock = NULL;
    contender_next(c);
    (void)status;
    (void)r;
}

static void contender_got(int status, redlock_lock *lock, const redlock_result *r, void *arg)
{
    contender *c = arg;
    (void)r;
    if (status != REDLOCK_OK) {
        c->failed++;
        contender_next(c);
        return;
    }
    if (*c->busy)
        *c->overlap = true;
    *c->busy = true;
    c->acquired++;
    c->lock = lock;
    /* Held for no time at all: the release goes out at once. */
    *c->busy = false;
    cr_assert_eq(redlock_release_async(c->h->client, lock, contender_released, c), REDLOCK_OK);
}

static void contender_next(contender *c)
{
    if (c->acquired >= CONTENDER_ROUNDS || c->failed > 0)
        return;
    redlock_acquire_options o = fleet_acquire_options(5000, 1000);
    o.retry_delay_ms = 5;
    o.retry_jitter_ms = 10;
    cr_assert_eq(redlock_acquire_many_async(c->h->client, c->resources, c->lens, 2, &o,
                                            contender_got, c),
                 REDLOCK_OK);
}

static bool contenders_done(harness *hh, void *arg)
{
    contender *c = arg;
    (void)hh;
    return (c[0].acquired >= CONTENDER_ROUNDS || c[0].failed > 0) &&
           (c[1].acquired >= CONTENDER_ROUNDS || c[1].failed > 0);
}

Test(many, sets_asked_in_either_order_both_make_progress)
{
    harness_connect(&h);
    static bool busy;
    static bool overlap;
    static contender c[2];
    busy = overlap = false;
    c[0] = (contender){{"x", "y"}, {1, 1}, 0, 0, NULL, &busy, &overlap, &h};
    c[1] = (contender){{"y", "x"}, {1, 1}, 0, 0, NULL, &busy, &overlap, &h};
    contender_next(&c[0]);
    contender_next(&c[1]);
    cr_assert(harness_wait_until(&h, contenders_done, c, 20000), "%u and %u acquired",
              c[0].acquired, c[1].acquired);
    cr_assert_eq(c[0].failed + c[1].failed, 0, "an acquire gave up: %u, %u", c[0].failed,
                 c[1].failed);
    cr_assert_eq(c[0].acquired, CONTENDER_ROUNDS);
    cr_assert_eq(c[1].acquired, CONTENDER_ROUNDS);
    cr_assert_not(overlap);
    cr_assert(harness_wait_key_gone(&h, "x", 1, 3000));
    cr_assert(harness_wait_key_gone(&h, "y", 1, 3000));
}

Test(many, a_set_is_auto_extended_as_one)
{
    harness_connect(&h);
    redlock_acquire_options o = fleet_acquire_options(300, 0);
    redlock_lock *lock = NULL;
    cr_assert_eq(harness_acquire_many(&h, abc, abc_lens, 3, &o, &lock, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_auto_extend_async(h.client, lock, NULL, NULL), REDLOCK_OK);
    harness_run_for(&h, (int)fleet_scaled_ms(1000));
    cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_HELD);
    cr_assert_geq(masters_holding_all(redlock_lock_value(lock, NULL)), 3);

    /* A key of the set deleted behind its back on a majority: lost. */
    for (size_t i = 0; i < 3; i++)
        fleet_del(h.fleet, i, "b", 1);
    harness_run_for(&h, (int)fleet_scaled_ms(400));
    cr_assert_eq(redlock_lock_state(lock), REDLOCK_LOCK_LOST);
    /* What is left of it may have expired by now. */
    int rc = harness_release(&h, lock, NULL);
    cr_assert(rc == REDLOCK_OK || rc == REDLOCK_ENOTOWNER, "%s", redlock_strerror(rc));
    redlock_lock_free(lock);
}

Test(many, a_handle_from_the_value_releases_the_set_in_any_order)
{
    harness_connect(&h);
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    redlock_lock *lock = NULL;
    cr_assert_eq(harness_acquire_many(&h, abc, abc_lens, 3, &o, &lock, NULL), REDLOCK_OK);
    const void *cba[] = {"b", "c", "a"};
    redlock_lock *copy = NULL;
    cr_assert_eq(redlock_lock_new_many(&copy, cba, abc_lens, 3, redlock_lock_value(lock, NULL),
                                       strlen(redlock_lock_value(lock, NULL)), 0),
                 REDLOCK_OK);
    cr_assert_eq(harness_release(&h, copy, NULL), REDLOCK_OK);
    redlock_lock_free(copy);
    redlock_lock_free(lock);
    cr_assert(harness_wait_key_gone(&h, "a", 1, 3000));
    cr_assert(key_absent_everywhere("b") && key_absent_everywhere("c"));
}

Test(many, bad_sets_are_refused)
{
    harness_connect(&h);
    redlock_acquire_options o = fleet_acquire_options(1000, 0);
    const void *dup[] = {"a", "b", "a"};
    size_t lens[] = {1, 1, 1};
    cr_assert_eq(harness_acquire_many(&h, dup, lens, 3, &o, NULL, NULL), REDLOCK_EINVAL);
    cr_assert_eq(harness_acquire_many(&h, dup, lens, 0, &o, NULL, NULL), REDLOCK_EINVAL);
    cr_assert_eq(harness_acquire_many(&h, NULL, lens, 1, &o, NULL, NULL), REDLOCK_EINVAL);
    size_t empty[] = {1, 0};
    cr_assert_eq(harness_acquire_many(&h, dup, empty, 2, &o, NULL, NULL), REDLOCK_EINVAL);
    redlock_lock *lock = NULL;
    cr_assert_eq(redlock_lock_new_many(&lock, dup, lens, 3, "v", 1, 0), REDLOCK_EINVAL);
    cr_assert_null(lock);
    cr_assert_eq(harness_inspect_many(&h, dup, lens, 3, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_lock_resource_count(NULL), 0);
}

/* An attempt given up while a master's answer is NOSCRIPT still on its way
 * (its script cache flushed): the cleanup's release goes out behind the
 * request, so the request must not be sent again with EVAL after it, or
 * it would set the keys after their release, for a whole TTL. Whether the
 * decision comes before that answer is a race: tried 20 times. */
Test(many, a_request_answered_noscript_after_the_attempt_failed_is_not_sent_again)
{
    harness_connect(&h);
    for (size_t i = 0; i < 3; i++)
        for (size_t k = 0; k < 3; k++)
            cr_assert_eq(fleet_set(h.fleet, i, abc[k], abc_lens[k], "other", 5, 60000), 0);
    for (int attempt = 0; attempt < 20; attempt++) {
        for (size_t i = 3; i < 5; i++) {
            redisReply *r = fleet_command(h.fleet, i, "SCRIPT FLUSH");
            cr_assert_not_null(r);
            freeReplyObject(r);
            r = fleet_command(h.fleet, i, "SCRIPT LOAD %s", rl_release_script.source);
            cr_assert(r != NULL && r->type == REDIS_REPLY_STRING); /* only the acquire's is gone */
            freeReplyObject(r);
        }
        redlock_acquire_options o = fleet_acquire_options(10000, 0);
        redlock_lock *lock = NULL;
        cr_assert_eq(harness_acquire_many(&h, abc, abc_lens, 3, &o, &lock, NULL),
                     REDLOCK_ECONFLICT);
        harness_run_for(&h, 30);
        for (size_t i = 3; i < 5; i++)
            for (size_t k = 0; k < 3; k++)
                cr_assert_eq(fleet_pttl(h.fleet, i, abc[k], abc_lens[k]), -2,
                             "attempt %d: master %zu holds %s after the failed attempt", attempt,
                             i, (const char *)abc[k]);
    }
}

/* The same after a granted acquire and its release: a master paused while
 * both went out answers the acquire NOSCRIPT only after the release was
 * queued behind it. The acquire was decided without it: sent again with
 * EVAL, it would set the keys after their release, for a whole TTL. */
Test(many, a_request_answered_noscript_after_its_lock_was_released_is_not_sent_again)
{
    harness_connect(&h);
    cr_assert_eq(harness_ping(&h, NULL), REDLOCK_OK); /* handshakes done: scripts loaded */
    redisReply *r = fleet_command(h.fleet, 4, "SCRIPT FLUSH");
    cr_assert_not_null(r);
    freeReplyObject(r);
    r = fleet_command(h.fleet, 4, "SCRIPT LOAD %s", rl_release_script.source);
    cr_assert(r != NULL && r->type == REDIS_REPLY_STRING); /* only the acquire's is gone */
    freeReplyObject(r);
    cr_assert_eq(fleet_pause(h.fleet, 4), 0);
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    redlock_lock *lock = NULL;
    cr_assert_eq(harness_acquire_many(&h, abc, abc_lens, 3, &o, &lock, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    cr_assert_eq(fleet_resume(h.fleet, 4), 0);
    harness_run_for(&h, 300);
    for (size_t k = 0; k < 3; k++)
        cr_assert_eq(fleet_pttl(h.fleet, 4, abc[k], abc_lens[k]), -2,
                     "master 4 holds %s after the release", (const char *)abc[k]);
}
