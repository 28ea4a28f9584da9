/* SPDX-License-Identifier: BSD-3-Clause */
/* Fencing tokens over the quorum (docs/fencing.md), against five real
 * masters: counters put in use by the first fenced acquire, tokens that
 * grow with every lock, masters restarted without their data seeded again
 * from the others, too many restarted at once put in use from the clock,
 * and every master restarted with AOF in use again at once. */
#include "harness.h"
#include "scripts.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static harness h;

static void five_masters(void)
{
    harness_start(&h, 5, NULL);
}

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(fencing, .init = five_masters, .fini = teardown, .timeout = 90);

static redlock_acquire_options fenced(int64_t ttl_ms, int64_t retries)
{
    redlock_acquire_options o = fleet_acquire_options(ttl_ms, retries);
    o.fencing = 1;
    return o;
}

static long long counter_in_use(size_t i)
{
    return fleet_fencing_counter(h.fleet, i);
}

/* How many masters have a counter in use at no less than token. */
static size_t masters_at_least(long long token)
{
    size_t n = 0;
    for (size_t i = 0; i < 5; i++)
        if (counter_in_use(i) >= token)
            n++;
    return n;
}

static void init_counters(uint64_t floor)
{
    redlock_result *r = NULL;
    cr_assert_eq(harness_fencing_init(&h, floor, &r), REDLOCK_OK);
    cr_assert_eq(r->masters_locked, 5, "init reached %u masters", r->masters_locked);
    redlock_result_free(r);
}

/* A fenced acquire of ttl_ms and release of resource: its token. */
static uint64_t token_of_a_lock_within(const char *resource, int64_t ttl_ms)
{
    redlock_acquire_options o = fenced(ttl_ms, 0);
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    int rc = harness_acquire(&h, resource, strlen(resource), &o, &lock, &r);
    cr_assert_eq(rc, REDLOCK_OK, "fenced acquire of %s: %s", resource, redlock_strerror(rc));
    uint64_t token = redlock_lock_fencing_token(lock);
    cr_assert_eq(r->fencing_token, token);
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    return token;
}

static uint64_t token_of_a_lock(const char *resource)
{
    return token_of_a_lock_within(resource, 10000);
}

/* Microseconds since the epoch: the clock floor's unit. */
static long long wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static long long mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* A new deployment has no counter anywhere: the first fenced acquire, with
 * no retry of its own, puts them in use from the clock and is granted. */
Test(fencing, a_new_deployment_needs_no_initialization)
{
    harness_connect(&h);
    long long before_us = wall_us();
    uint64_t first = token_of_a_lock("job");
    cr_assert_geq((long long)first, before_us, "token %llu is below the clock floor %lld",
                  (unsigned long long)first, before_us);
    cr_assert_leq((long long)first, wall_us() + 1);
    cr_assert_geq(masters_at_least(before_us), 3, "too few counters were put in use");
    cr_assert_gt(token_of_a_lock("other"), first);

    /* Unfenced locks still need no counters, and initializing by hand
     * leaves counters in use alone. */
    redlock_acquire_options plain = fleet_acquire_options(10000, 0);
    redlock_lock *lock = NULL;
    cr_assert_eq(harness_acquire(&h, "job", 3, &plain, &lock, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_lock_fencing_token(lock), 0);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    long long kept = counter_in_use(0);
    redlock_result *r = NULL;
    cr_assert_eq(harness_fencing_init(&h, 0, &r), REDLOCK_OK);
    redlock_result_free(r);
    cr_assert_eq(counter_in_use(0), kept);
}

Test(fencing, tokens_grow_with_every_lock_on_any_resource_and_extend_keeps_them)
{
    harness_connect(&h);
    init_counters(0);
    uint64_t a = token_of_a_lock("a");
    uint64_t b = token_of_a_lock("b");
    uint64_t again = token_of_a_lock("a");
    cr_assert(a >= 1 && b > a && again > b, "tokens %llu, %llu, %llu", (unsigned long long)a,
              (unsigned long long)b, (unsigned long long)again);
    cr_assert_geq(masters_at_least((long long)again), 3, "no quorum confirmed %llu",
                  (unsigned long long)again);

    /* A set of resources, and a reentrant owner's two holds. */
    static const void *const cd[] = {"c", "d"};
    static const size_t cd_lens[] = {1, 1};
    redlock_acquire_options o = fenced(10000, 0);
    redlock_lock *set = NULL;
    cr_assert_eq(harness_acquire_many(&h, cd, cd_lens, 2, &o, &set, NULL), REDLOCK_OK);
    uint64_t set_token = redlock_lock_fencing_token(set);
    cr_assert_gt(set_token, again);
    cr_assert_eq(harness_extend(&h, set, 10000, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_lock_fencing_token(set), set_token, "extend changed the token");

    o.owner = "worker-1";
    o.owner_len = 8;
    redlock_lock *first = NULL;
    redlock_lock *second = NULL;
    cr_assert_eq(harness_acquire(&h, "r", 1, &o, &first, NULL), REDLOCK_OK);
    cr_assert_eq(harness_acquire(&h, "r", 1, &o, &second, NULL), REDLOCK_OK);
    cr_assert_gt(redlock_lock_fencing_token(first), set_token);
    cr_assert_gt(redlock_lock_fencing_token(second), redlock_lock_fencing_token(first));
    cr_assert_eq(harness_release(&h, second, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, first, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, set, NULL), REDLOCK_OK);
    redlock_lock_free(first);
    redlock_lock_free(second);
    redlock_lock_free(set);
}

Test(fencing, the_counter_key_is_never_a_resource)
{
    harness_connect(&h);
    const char *key = REDLOCK_FENCING_KEY;
    redlock_acquire_options o = fleet_acquire_options(1000, 0);
    redlock_lock *lock = NULL;
    cr_assert_eq(harness_acquire(&h, key, strlen(key), &o, &lock, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_lock_new(&lock, key, strlen(key), "v", 1, 0), REDLOCK_EINVAL);
    /* Nor is a token key (the prefix, then a resource). */
    cr_assert_eq(harness_acquire(&h, "redlock:fence:x", 15, &o, &lock, NULL), REDLOCK_EINVAL);
    cr_assert_eq(harness_inspect(&h, "redlock:fence:", 14, NULL), REDLOCK_EINVAL);
    /* A resource that merely begins or ends like them is any other. */
    cr_assert_eq(harness_acquire(&h, "redlock:fencex", 14, &o, &lock, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    cr_assert_eq(harness_acquire(&h, "x:redlock:fence", 15, &o, &lock, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    o.fencing = 2;
    cr_assert_eq(harness_acquire(&h, "x", 1, &o, &lock, NULL), REDLOCK_EINVAL);
}

/* How many masters inspect finds holding resource with token. */
static unsigned masters_showing(const void *const *res, const size_t *lens, size_t count,
                                uint64_t token)
{
    redlock_result *r = NULL;
    cr_assert_eq(harness_inspect_many(&h, res, lens, count, &r), REDLOCK_OK);
    unsigned n = 0;
    for (unsigned i = 0; i < r->master_count; i++)
        if (r->masters[i].fencing_token == token && r->masters[i].value != NULL)
            n++;
    redlock_result_free(r);
    return n;
}

static unsigned token_keys_left(const char *resource)
{
    char key[64];
    snprintf(key, sizeof(key), "%s%s", REDLOCK_FENCING_TOKEN_PREFIX, resource);
    unsigned n = 0;
    for (size_t i = 0; i < 5; i++)
        if (fleet_pttl(h.fleet, i, key, strlen(key)) != -2)
            n++;
    return n;
}

/* Inspection (redlock status) shows a fenced lock's token, kept beside its
 * keys for as long as they live: extended with them, deleted with them,
 * and never shown for a later holder of the resource. */
Test(fencing, inspect_shows_the_token_of_the_lock_held_there)
{
    harness_connect(&h);
    init_counters(0);
    static const void *const one[] = {"shown"};
    static const size_t one_len[] = {5};
    redlock_acquire_options o = fenced(600, 0);
    redlock_lock *lock = NULL;
    cr_assert_eq(harness_acquire(&h, "shown", 5, &o, &lock, NULL), REDLOCK_OK);
    uint64_t token = redlock_lock_fencing_token(lock);
    cr_assert_geq(masters_showing(one, one_len, 1, token), 3);
    /* Extended beyond its first TTL, the token stays with the lock. */
    cr_assert_eq(harness_extend(&h, lock, 10000, NULL), REDLOCK_OK);
    harness_run_for(&h, 900);
    cr_assert_geq(masters_showing(one, one_len, 1, token), 3, "the token left before the lock");
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    cr_assert_eq(token_keys_left("shown"), 0, "the release left token keys");

    /* An unfenced holder next: no token shown. */
    redlock_acquire_options plain = fleet_acquire_options(10000, 0);
    cr_assert_eq(harness_acquire(&h, "shown", 5, &plain, &lock, NULL), REDLOCK_OK);
    cr_assert_eq(masters_showing(one, one_len, 1, 0), 5);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);

    /* A stale token key (its lock's keys gone some other way) shows
     * nothing for the next holder. */
    o = fenced(10000, 0);
    cr_assert_eq(harness_acquire(&h, "shown", 5, &o, &lock, NULL), REDLOCK_OK);
    for (size_t i = 0; i < 5; i++)
        fleet_del(h.fleet, i, "shown", 5);
    redlock_lock *next = NULL;
    cr_assert_eq(harness_acquire(&h, "shown", 5, &plain, &next, NULL), REDLOCK_OK);
    cr_assert_eq(masters_showing(one, one_len, 1, 0), 5, "a stale token was shown");
    cr_assert_eq(harness_release(&h, next, NULL), REDLOCK_OK);
    redlock_lock_free(next);
    redlock_lock_free(lock);

    /* A set shows its token where all its keys agree; a reentrant hold
     * its own while it is held. */
    static const void *const set[] = {"s1", "s2"};
    static const size_t set_lens[] = {2, 2};
    cr_assert_eq(harness_acquire_many(&h, set, set_lens, 2, &o, &lock, NULL), REDLOCK_OK);
    token = redlock_lock_fencing_token(lock);
    cr_assert_geq(masters_showing(set, set_lens, 2, token), 3);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    cr_assert_eq(token_keys_left("s1") + token_keys_left("s2"), 0);
    o.owner = "worker";
    o.owner_len = 6;
    cr_assert_eq(harness_acquire(&h, "shown", 5, &o, &lock, NULL), REDLOCK_OK);
    token = redlock_lock_fencing_token(lock);
    cr_assert_geq(masters_showing(one, one_len, 1, token), 3);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    cr_assert_eq(token_keys_left("shown"), 0);
}

/* Counters in use, three locks of resource, then master 0 killed and
 * restarted without its data: the last token handed out. */
static uint64_t tokens_then_master_0_restarted_empty(const char *resource)
{
    harness_connect(&h);
    init_counters(0);
    uint64_t last = 0;
    for (int i = 0; i < 3; i++)
        last = token_of_a_lock(resource);
    cr_assert_eq(fleet_kill(h.fleet, 0), 0);
    cr_assert_eq(fleet_restart(h.fleet, 0), 0);
    cr_assert_eq(counter_in_use(0), -1, "the restarted master kept a counter in use");
    return last;
}

/* kill -9 and a restart without persistence: the counter is lost. The
 * master still votes; a fenced acquire that meets it has it seeded again
 * from a majority of the others, never lower than a token they confirmed. */
Test(fencing, a_master_restarted_empty_is_seeded_again_from_the_others)
{
    uint64_t before = tokens_then_master_0_restarted_empty("seeded");

    uint64_t after = 0;
    for (int i = 0; i < 5 && after == 0; i++) {
        redlock_acquire_options o = fenced(10000, 0);
        redlock_lock *lock = NULL;
        redlock_result *r = NULL;
        int rc = harness_acquire(&h, "seeded", 6, &o, &lock, &r);
        if (rc == REDLOCK_OK) {
            after = redlock_lock_fencing_token(lock);
            cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
            redlock_lock_free(lock);
        } else {
            cr_assert_eq(rc, REDLOCK_ENOQUORUM, "%s", redlock_strerror(rc)); /* reconnecting */
            harness_run_for(&h, 100);
        }
        redlock_result_free(r);
    }
    cr_assert_gt(after, before);
    /* Seeding runs beside the acquires, and starts once one met master 0. */
    uint64_t last = after;
    for (int i = 0; i < 50 && counter_in_use(0) < (long long)before; i++) {
        uint64_t token = token_of_a_lock("seeded");
        cr_assert_gt(token, last);
        last = token;
        harness_run_for(&h, 20);
    }
    cr_assert_geq(counter_in_use(0), (long long)before,
                  "master 0 was not seeded again at %llu or more (now %lld)",
                  (unsigned long long)before, counter_in_use(0));
    cr_assert_gt(token_of_a_lock("seeded"), last);
}

/* Three of five restarted empty: no master can be seeded from a majority
 * of its others, so the counters are put in use again from the clock,
 * above every token handed out (small ones, from a floor of 0 here). */
Test(fencing, a_majority_restarted_empty_is_put_in_use_again_from_the_clock)
{
    harness_connect(&h);
    init_counters(0);
    uint64_t before = 0;
    for (int i = 0; i < 4; i++)
        before = token_of_a_lock("many");
    long long restarted_us = wall_us();
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(fleet_kill(h.fleet, i), 0);
        cr_assert_eq(fleet_restart(h.fleet, i), 0);
    }
    harness_run_for(&h, 300); /* reconnected */
    redlock_acquire_options o = fenced(10000, 2);
    o.retry_delay_ms = 100;
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    int rc = harness_acquire(&h, "many", 4, &o, &lock, &r);
    cr_assert_eq(rc, REDLOCK_OK, "%s", redlock_strerror(rc));
    uint64_t after = redlock_lock_fencing_token(lock);
    cr_assert_gt(after, before);
    cr_assert_geq((long long)after, restarted_us, "token %llu, below the clock floor",
                  (unsigned long long)after);
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    cr_assert_gt(token_of_a_lock("many"), after);
}

/* Every master on AOF (appendfsync always) killed with -9 and restarted at
 * once: the counters survived, and fenced locks resume, with greater
 * tokens, within about a second of the masters answering again. */
Test(fencing, every_master_restarted_with_aof_resumes_at_once)
{
    for (size_t i = 0; i < 5; i++) {
        cr_assert_eq(fleet_set_appendonly(h.fleet, i, 1), 0);
        cr_assert_eq(fleet_restart(h.fleet, i), 0);
    }
    harness_connect(&h);
    init_counters(0);
    uint64_t before = 0;
    for (int i = 0; i < 3; i++)
        before = token_of_a_lock("aof");
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(fleet_kill(h.fleet, i), 0);
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(fleet_restart(h.fleet, i), 0);
    for (size_t i = 0; i < 5; i++) {
        redisReply *kept = fleet_command(h.fleet, i, "HGET %s n", REDLOCK_FENCING_KEY);
        cr_assert(kept != NULL && kept->type == REDIS_REPLY_STRING, "master %zu lost its counter",
                  i);
        freeReplyObject(kept);
    }
    long long back_us = mono_us();
    uint64_t after = 0;
    int rc = REDLOCK_ENOQUORUM;
    for (int i = 0; i < 40 && rc != REDLOCK_OK; i++) {
        redlock_acquire_options o = fenced(10000, 0);
        redlock_lock *lock = NULL;
        rc = harness_acquire(&h, "aof", 3, &o, &lock, NULL);
        if (rc == REDLOCK_OK) {
            after = redlock_lock_fencing_token(lock);
            cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
            redlock_lock_free(lock);
        } else {
            cr_assert_neq(rc, REDLOCK_ENOFENCE, "the counters kept on disk are not in use");
            harness_run_for(&h, 25); /* reconnecting */
        }
    }
    long long took_ms = (mono_us() - back_us) / 1000;
    cr_assert_eq(rc, REDLOCK_OK, "%s", redlock_strerror(rc));
    cr_assert_gt(after, before);
    cr_assert_leq(took_ms, fleet_scaled_ms(1500), "the first fenced lock took %lld ms", took_ms);
}

Test(fencing, init_refuses_a_floor_lua_cannot_compare_exactly)
{
    harness_connect(&h);
    cr_assert_eq(harness_fencing_init(&h, UINT64_C(1) << 53, NULL), REDLOCK_EINVAL);
    cr_assert_eq(harness_fencing_init(&h, (UINT64_C(1) << 53) - 1, NULL), REDLOCK_OK);
    cr_assert_eq(token_of_a_lock("big"), UINT64_C(1) << 53);
    /* Past 2^53 Lua's numbers no longer tell one token from the next: a
     * counter there gives no token, never the same one twice. */
    for (int i = 0; i < 3; i++) {
        redlock_acquire_options o = fenced(10000, 0);
        redlock_lock *lock = NULL;
        redlock_result *r = NULL;
        int rc = harness_acquire(&h, "big", 3, &o, &lock, &r);
        cr_assert_eq(rc, REDLOCK_ENOFENCE, "acquire %d past 2^53: %s, token %llu", i,
                     redlock_strerror(rc), (unsigned long long)r->fencing_token);
        cr_assert(result_detail_contains(r, "2^53"), "the masters' details do not say why");
        redlock_result_free(r);
    }
    /* Master 0 may have been left out of the decisions (a slow one): read
     * it once it has answered all. */
    cr_assert(harness_wait_all_answered(&h, (int)fleet_scaled_ms(5000)));
    cr_assert_eq(counter_in_use(0), (long long)(UINT64_C(1) << 53));
}

/* A user the ACL denies INFO cannot run the fenced scripts (they read the
 * master's run_id): the fenced acquire fails on every master, and must do
 * so before it writes, else its keys stay for a whole TTL, never released
 * (an error reply is not an OK to clean up after). */
Test(fencing, a_user_denied_info_fails_before_the_fenced_acquire_sets_a_key)
{
    for (size_t i = 0; i < 5; i++) {
        redisReply *reply =
            fleet_command(h.fleet, i, "ACL SETUSER locker on >not-info ~* &* +@all -info");
        cr_assert(reply && reply->type == REDIS_REPLY_STATUS);
        freeReplyObject(reply);
        cr_assert_eq(redlock_config_node_set_auth(h.cfg, i, "locker", "not-info"), REDLOCK_OK);
    }
    harness_connect(&h);
    redlock_acquire_options o = fenced(10000, 0);
    redlock_result *r = NULL;
    int rc = harness_acquire(&h, "denied", 6, &o, NULL, &r);
    cr_assert_eq(rc, REDLOCK_EREPLY, "%s", redlock_strerror(rc));
    /* Redis 7.0: "... can't run this command"; Redis 8 and Valkey: "... has
     * no permissions to run the 'info' command". */
    cr_assert(result_detail_contains(r, "can't run this command") ||
                  result_detail_contains(r, "no permissions to run"),
              "the details do not say why");
    redlock_result_free(r);
    cr_assert(harness_wait_key_gone(&h, "denied", 6, 1000), "the failed acquire left its key");
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(fleet_pttl(h.fleet, i, "denied", 6), -2, "master %zu", i);
}

/* A restarted master paused whenever a fenced acquire is decided answers
 * only after it: that late answer starts its seeding too. */
Test(fencing, a_restarted_master_that_answers_late_is_seeded_too)
{
    uint64_t before = tokens_then_master_0_restarted_empty("late");
    harness_run_for(&h, 300); /* reconnected */
    for (int i = 0; i < 10 && counter_in_use(0) < (long long)before; i++) {
        cr_assert_eq(fleet_pause(h.fleet, 0), 0);
        uint64_t token = token_of_a_lock("late");
        cr_assert_gt(token, before);
        cr_assert_eq(fleet_resume(h.fleet, 0), 0);
        harness_run_for(&h, 150);
    }
    cr_assert_geq(counter_in_use(0), (long long)before,
                  "master 0 was not seeded again at %llu or more (now %lld)",
                  (unsigned long long)before, counter_in_use(0));
}

/* The SHAs the requests name are those the masters compute: else every
 * request would cost a NOSCRIPT and an EVAL. */
Test(fencing, every_script_is_named_by_the_sha_its_master_computes)
{
    const rl_script *const scripts[] = {
        &rl_acquire_script,       &rl_fenced_acquire_script, &rl_fence_confirm_script,
        &rl_fence_read_script,    &rl_fence_seed_script,     &rl_release_script,
        &rl_extend_script,        &rl_inspect_script,
    };
    for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
        redisReply *r = fleet_command(h.fleet, 0, "SCRIPT LOAD %s", scripts[i]->source);
        cr_assert(r != NULL && r->type == REDIS_REPLY_STRING, "%s: %s", scripts[i]->name,
                  r != NULL && r->type == REDIS_REPLY_ERROR ? r->str : "no reply");
        cr_assert_str_eq(r->str, scripts[i]->sha, "%s", scripts[i]->name);
        freeReplyObject(r);
    }
}

/* Whether h's client has the restart state want (a redlock_restart_state)
 * for masters 0 to 2. */
static bool first_three_are(harness *hh, void *arg)
{
    static redlock_stats s;
    s.size = sizeof(s);
    if (redlock_client_stats(hh->client, &s) != REDLOCK_OK)
        return false;
    for (size_t i = 0; i < 3; i++)
        if (s.restarts[i].state != *(const int *)arg)
            return false;
    return true;
}

/* The rule for masters restarted empty on (docs/safety.md): clients that
 * do not declare the masters durable, max_ttl_ms 500. Tokens above the
 * clock, then three of five masters killed -9 and restarted without their
 * data. An acquire that cannot wait is refused with REDLOCK_ERESTARTED;
 * one that can waits the exclusion out and is granted a token above every
 * token handed out before: the counters are seeded again from what the
 * two survivors hold, not from the clock alone, which is below them. */
Test(fencing, a_majority_restarted_empty_under_the_restart_rule_is_waited_out_and_seeded)
{
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_DURABLE, 0), REDLOCK_OK);
    /* 500 ms, stretched with the fleet's timeouts (valgrind). */
    const int64_t max_ttl = fleet_scaled_ms(500);
    const int wait_ms = (int)fleet_scaled_ms(3000);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_MAX_TTL_MS, max_ttl), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_TTL_MS, max_ttl), REDLOCK_OK);
    harness_connect(&h);
    int counts = REDLOCK_RESTART_COUNTS;
    int excluded = REDLOCK_RESTART_EXCLUDED;
    /* Masters started moments ago: waited out first. */
    cr_assert(harness_wait_until(&h, first_three_are, &counts, 2 * wait_ms), "fresh masters never count");
    harness_run_for(&h, 100); /* the last two too */
    init_counters((uint64_t)wall_us() + UINT64_C(1000000000000)); /* some 11 days ahead */
    uint64_t before = 0;
    for (int i = 0; i < 3; i++) {
        redlock_acquire_options o = fenced(max_ttl, 0);
        o.wait_ms = wait_ms;
        redlock_lock *lock = NULL;
        cr_assert_eq(harness_acquire(&h, "reseed", 6, &o, &lock, NULL), REDLOCK_OK);
        uint64_t token = redlock_lock_fencing_token(lock);
        cr_assert_gt(token, before);
        before = token;
        cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
        redlock_lock_free(lock);
    }
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(fleet_kill(h.fleet, i), 0);
        cr_assert_eq(fleet_restart(h.fleet, i), 0);
        cr_assert_eq(counter_in_use(i), -1, "master %zu kept its counter", i);
    }
    cr_assert(harness_wait_until(&h, first_three_are, &excluded, 2 * wait_ms),
              "the restarted masters were never excluded");

    redlock_acquire_options now = fenced(max_ttl, 0);
    now.wait_ms = 0;
    redlock_result *r = NULL;
    int rc = harness_acquire(&h, "reseed", 6, &now, NULL, &r);
    cr_assert_eq(rc, REDLOCK_ERESTARTED, "%s", redlock_status_name(rc));
    cr_assert(result_detail_contains(r, "not counted for"), "no detail says why");
    redlock_result_free(r);

    redlock_acquire_options o = fenced(max_ttl, 0);
    o.wait_ms = wait_ms;
    redlock_lock *lock = NULL;
    long long t0 = mono_us();
    rc = harness_acquire(&h, "reseed", 6, &o, &lock, &r);
    long long waited_ms = (mono_us() - t0) / 1000;
    cr_assert_eq(rc, REDLOCK_OK, "%s after %lld ms", redlock_status_name(rc), waited_ms);
    redlock_result_free(r);
    uint64_t after = redlock_lock_fencing_token(lock);
    cr_assert_gt(after, before, "token %llu after the restart, %llu before",
                 (unsigned long long)after, (unsigned long long)before);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
    /* Seeding runs beside the acquires: each restarted master's counter
     * is put in use again at no less than the survivors' tokens. */
    uint64_t last = after;
    for (int i = 0; i < 50 && masters_at_least((long long)before) < 5; i++) {
        uint64_t token = token_of_a_lock_within("reseed", max_ttl);
        cr_assert_gt(token, last);
        last = token;
        harness_run_for(&h, 20);
    }
    for (size_t i = 0; i < 3; i++)
        cr_assert_geq(counter_in_use(i), (long long)before,
                      "master %zu not seeded again at %llu or more (now %lld)", i,
                      (unsigned long long)before, counter_in_use(i));
}
