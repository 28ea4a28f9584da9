/* SPDX-License-Identifier: BSD-3-Clause */
/* The reentrant form against five real masters: an owner takes its own lock
 * again, holds count, other owners and the plain form stay out, and a hold
 * that expired cannot release a newer one. */
#include "harness.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
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

TestSuite(reentrant, .init = five_masters, .fini = teardown, .timeout = 90);

static redlock_acquire_options owned_by(const char *owner, int64_t ttl_ms)
{
    redlock_acquire_options o = fleet_acquire_options(ttl_ms, 0);
    o.owner = owner;
    o.owner_len = strlen(owner);
    return o;
}

/* How many holds master i's key "job" has (its hash's fields but the
 * owner's); -1 when it is no hash. */
static long long holds_on(size_t i)
{
    redisReply *reply = fleet_command(h.fleet, i, "HLEN job");
    cr_assert_not_null(reply);
    long long n = reply->type == REDIS_REPLY_INTEGER && reply->integer > 0 ? reply->integer - 1
                                                                           : -1;
    freeReplyObject(reply);
    return n;
}

Test(reentrant, an_owner_takes_its_lock_again_and_the_last_release_frees_it)
{
    harness_connect(&h);
    redlock_acquire_options me = owned_by("worker-1", 10000);
    redlock_acquire_options other = owned_by("worker-2", 10000);
    redlock_lock *outer = NULL;
    redlock_lock *inner = NULL;
    redlock_result *r = NULL;
    cr_assert_eq(harness_acquire(&h, "job", 3, &me, &outer, NULL), REDLOCK_OK);
    cr_assert_eq(harness_acquire(&h, "job", 3, &other, NULL, NULL), REDLOCK_ECONFLICT);

    /* Again, at once: one attempt, while it is held. */
    cr_assert_eq(harness_acquire(&h, "job", 3, &me, &inner, &r), REDLOCK_OK);
    cr_assert_eq(r->attempts, 1);
    redlock_result_free(r);
    cr_assert_str_neq(redlock_lock_value(outer, NULL), redlock_lock_value(inner, NULL));
    harness_run_for(&h, 50);
    cr_assert_eq(holds_on(0), 2);

    /* The status shows the owner. */
    cr_assert_eq(harness_inspect(&h, "job", 3, &r), REDLOCK_OK);
    cr_assert_str_eq(r->masters[0].value, "worker-1");
    redlock_result_free(r);

    /* The inner hold goes; the lock stays the owner's. */
    cr_assert_eq(harness_release(&h, inner, NULL), REDLOCK_OK);
    redlock_lock_free(inner);
    cr_assert_eq(holds_on(0), 1);
    cr_assert_eq(harness_acquire(&h, "job", 3, &other, NULL, NULL), REDLOCK_ECONFLICT);

    /* The last one frees it: another owner takes it. */
    cr_assert_eq(harness_release(&h, outer, NULL), REDLOCK_OK);
    redlock_lock_free(outer);
    cr_assert(harness_wait_key_gone(&h, "job", 3, 3000));
    cr_assert_eq(harness_acquire(&h, "job", 3, &other, &outer, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, outer, NULL), REDLOCK_OK);
    redlock_lock_free(outer);
}

Test(reentrant, the_plain_form_neither_takes_nor_releases_a_reentrant_lock)
{
    harness_connect(&h);
    redlock_acquire_options me = owned_by("worker-1", 10000);
    redlock_acquire_options plain = fleet_acquire_options(10000, 0);
    redlock_lock *owned = NULL;
    cr_assert_eq(harness_acquire(&h, "job", 3, &me, &owned, NULL), REDLOCK_OK);
    harness_run_for(&h, 50);

    /* Plain acquires, ours (SET NX) and any other client's, see it taken. */
    cr_assert_eq(harness_acquire(&h, "job", 3, &plain, NULL, NULL), REDLOCK_ECONFLICT);
    redisReply *reply = fleet_command(h.fleet, 0, "SET job theirs NX PX 10000");
    cr_assert(reply != NULL && reply->type == REDIS_REPLY_NIL);
    freeReplyObject(reply);

    /* A plain release with a value of its own leaves it. */
    redlock_lock *stranger = NULL;
    cr_assert_eq(redlock_lock_new(&stranger, "job", 3, "not-a-hold", 10, 0), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, stranger, NULL), REDLOCK_ENOTOWNER);
    redlock_lock_free(stranger);
    /* So does another client's compare-and-delete: it cannot read the key. */
    reply = fleet_command(h.fleet, 0,
                          "EVAL %s 1 job worker-1",
                          "if redis.call('get', KEYS[1]) == ARGV[1] then "
                          "return redis.call('del', KEYS[1]) else return 0 end");
    cr_assert(reply != NULL && reply->type == REDIS_REPLY_ERROR);
    freeReplyObject(reply);
    cr_assert_eq(holds_on(0), 1);

    /* And a plain lock is not re-entered by an owner. */
    redlock_lock *plain_lock = NULL;
    cr_assert_eq(harness_acquire(&h, "plain", 5, &plain, &plain_lock, NULL), REDLOCK_OK);
    cr_assert_eq(harness_acquire(&h, "plain", 5, &me, NULL, NULL), REDLOCK_ECONFLICT);
    cr_assert_eq(harness_release(&h, plain_lock, NULL), REDLOCK_OK);
    redlock_lock_free(plain_lock);
    cr_assert_eq(harness_release(&h, owned, NULL), REDLOCK_OK);
    redlock_lock_free(owned);
}

Test(reentrant, a_hold_never_shortens_the_owners_keys)
{
    harness_connect(&h);
    redlock_acquire_options long_hold = owned_by("w", 10000);
    redlock_acquire_options short_hold = owned_by("w", 500);
    redlock_lock *outer = NULL;
    redlock_lock *inner = NULL;
    cr_assert_eq(harness_acquire(&h, "job", 3, &long_hold, &outer, NULL), REDLOCK_OK);
    cr_assert_eq(harness_acquire(&h, "job", 3, &short_hold, &inner, NULL), REDLOCK_OK);
    cr_assert_eq(harness_extend(&h, inner, 500, NULL), REDLOCK_OK);
    cr_assert_gt(fleet_pttl(h.fleet, 0, "job", 3), 9000);
    cr_assert_eq(harness_release(&h, inner, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, outer, NULL), REDLOCK_OK);
    redlock_lock_free(inner);
    redlock_lock_free(outer);
}

Test(reentrant, a_reentered_lock_is_auto_extended_by_each_hold)
{
    harness_connect(&h);
    redlock_acquire_options me = owned_by("w", 300);
    redlock_lock *outer = NULL;
    redlock_lock *inner = NULL;
    cr_assert_eq(harness_acquire(&h, "job", 3, &me, &outer, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_auto_extend_async(h.client, outer, NULL, NULL), REDLOCK_OK);
    cr_assert_eq(harness_acquire(&h, "job", 3, &me, &inner, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_auto_extend_async(h.client, inner, NULL, NULL), REDLOCK_OK);
    harness_run_for(&h, (int)fleet_scaled_ms(1000));
    cr_assert_eq(redlock_lock_state(outer), REDLOCK_LOCK_HELD);
    cr_assert_eq(redlock_lock_state(inner), REDLOCK_LOCK_HELD);

    /* The outer hold released, the inner one keeps the lock alive. */
    cr_assert_eq(harness_release(&h, outer, NULL), REDLOCK_OK);
    harness_run_for(&h, (int)fleet_scaled_ms(700));
    cr_assert_eq(redlock_lock_state(inner), REDLOCK_LOCK_HELD);
    cr_assert_eq(holds_on(0), 1);
    cr_assert_eq(harness_release(&h, inner, NULL), REDLOCK_OK);
    redlock_lock_free(inner);
    redlock_lock_free(outer);
    cr_assert(harness_wait_key_gone(&h, "job", 3, 3000));
}

Test(reentrant, a_hold_that_expired_cannot_release_a_newer_one)
{
    harness_connect(&h);
    redlock_acquire_options brief = owned_by("w", 200);
    redlock_acquire_options me = owned_by("w", 10000);
    redlock_lock *stale = NULL;
    redlock_lock *fresh = NULL;
    cr_assert_eq(harness_acquire(&h, "job", 3, &brief, &stale, NULL), REDLOCK_OK);
    cr_assert(harness_wait_key_gone(&h, "job", 3, 3000)); /* lost: it expired */
    cr_assert_eq(harness_acquire(&h, "job", 3, &me, &fresh, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, stale, NULL), REDLOCK_ENOTOWNER);
    cr_assert_eq(harness_extend(&h, stale, 10000, NULL), REDLOCK_EEXPIRED);
    harness_run_for(&h, 50);
    cr_assert_eq(holds_on(0), 1);
    cr_assert_eq(harness_release(&h, fresh, NULL), REDLOCK_OK);
    redlock_lock_free(stale);
    redlock_lock_free(fresh);
}

Test(reentrant, several_resources_reentered_together)
{
    harness_connect(&h);
    redlock_acquire_options me = owned_by("w", 10000);
    redlock_acquire_options other = owned_by("v", 10000);
    const void *set[] = {"p", "q"};
    size_t lens[] = {1, 1};
    redlock_lock *outer = NULL;
    redlock_lock *inner = NULL;
    cr_assert_eq(harness_acquire_many(&h, set, lens, 2, &me, &outer, NULL), REDLOCK_OK);
    /* One of them alone, by the same owner: a hold inside the set's. */
    cr_assert_eq(harness_acquire(&h, "q", 1, &me, &inner, NULL), REDLOCK_OK);
    cr_assert_eq(harness_acquire_many(&h, set, lens, 2, &other, NULL, NULL), REDLOCK_ECONFLICT);
    cr_assert_eq(harness_release(&h, outer, NULL), REDLOCK_OK);
    cr_assert(harness_wait_key_gone(&h, "p", 1, 3000));
    cr_assert_eq(harness_acquire(&h, "q", 1, &other, NULL, NULL), REDLOCK_ECONFLICT);
    cr_assert_eq(harness_release(&h, inner, NULL), REDLOCK_OK);
    cr_assert(harness_wait_key_gone(&h, "q", 1, 3000));
    redlock_lock_free(outer);
    redlock_lock_free(inner);
}

Test(reentrant, a_bad_owner_token_is_refused)
{
    harness_connect(&h);
    redlock_acquire_options o = owned_by("w", 1000);
    o.owner_len = 0;
    cr_assert_eq(harness_acquire(&h, "job", 3, &o, NULL, NULL), REDLOCK_EINVAL);
    o.owner_len = REDLOCK_MAX_VALUE_LEN + 1;
    cr_assert_eq(harness_acquire(&h, "job", 3, &o, NULL, NULL), REDLOCK_EINVAL);
}

Test(reentrant, a_hold_left_behind_past_its_deadline_does_not_keep_the_key)
{
    /* A hold whose release was lost (its field is still there, its deadline
     * long past) must not keep the owner's key once its live hold goes. */
    harness_connect(&h);
    redlock_acquire_options me = owned_by("w", 10000);
    redlock_acquire_options other = owned_by("v", 10000);
    redlock_lock *live = NULL;
    cr_assert_eq(harness_acquire(&h, "job", 3, &me, &live, NULL), REDLOCK_OK);
    harness_run_for(&h, 50);
    for (size_t i = 0; i < 5; i++) {
        redisReply *reply = fleet_command(h.fleet, i, "HSET job left-behind 1");
        cr_assert(reply != NULL && reply->type == REDIS_REPLY_INTEGER);
        freeReplyObject(reply);
    }
    cr_assert_eq(harness_release(&h, live, NULL), REDLOCK_OK);
    redlock_lock_free(live);
    cr_assert(harness_wait_key_gone(&h, "job", 3, 3000), "the key outlived the owner's last hold");
    cr_assert_eq(harness_acquire(&h, "job", 3, &other, &live, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, live, NULL), REDLOCK_OK);
    redlock_lock_free(live);
}
