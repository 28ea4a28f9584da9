/* SPDX-License-Identifier: BSD-3-Clause */
/* Waiting by notification against real masters: a release announced on
 * the resource's channel hands the lock to a waiter at once, far sooner
 * than its retry delay; without the announcement (expiry, a subscriber
 * connection killed) the timed retry still comes; AUTH, SELECT, restarts
 * and a stopped master; and no subscriber connection outlives its use. */
#include "harness.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
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

TestSuite(notify, .init = five_masters, .fini = teardown, .timeout = 120);

/* An acquire in flight on the loop. */
typedef struct waiter {
    bool done;
    int status;
    redlock_lock *lock;
    double done_ms;
    unsigned attempts;
} waiter;

static void waiter_on_acquired(int status, redlock_lock *lock, const redlock_result *r, void *arg)
{
    waiter *one = arg;
    one->done = true;
    one->status = status;
    one->lock = lock;
    one->done_ms = tc_now_ms();
    one->attempts = r ? r->attempts : 0;
}

/* Retry delay far above what a hand-off by announcement takes. */
#define SLOW_RETRY_MS 4000

static redlock_acquire_options slow_retries(void)
{
    redlock_acquire_options o = fleet_acquire_options(10000, 5);
    o.retry_delay_ms = fleet_scaled_ms(SLOW_RETRY_MS);
    o.retry_jitter_ms = 0;
    return o;
}

static void waiter_start(redlock_client *client, waiter *one, const char *res, size_t len,
                         const redlock_acquire_options *o)
{
    memset(one, 0, sizeof(*one));
    cr_assert_eq(redlock_acquire_async(client, res, len, o, waiter_on_acquired, one),
                 REDLOCK_OK);
}

static bool waiter_done(harness *hh, void *arg)
{
    (void)hh;
    return ((waiter *)arg)->done;
}

static void waiter_wait(waiter *one, int timeout_ms)
{
    cr_assert(harness_wait_until(&h, waiter_done, one, timeout_ms),
              "the acquire never completed");
}

/* Subscriptions to channel on master i (PUBSUB NUMSUB). */
static long long numsub(size_t i, const char *channel, size_t len)
{
    redisReply *r = fleet_command(h.fleet, i, "PUBSUB NUMSUB %b", channel, len);
    cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2);
    long long n = r->element[1]->integer;
    freeReplyObject(r);
    return n;
}

/* Pub/sub connections on master i (CLIENT LIST TYPE pubsub). */
static size_t pubsub_clients(size_t i)
{
    redisReply *r = fleet_command(h.fleet, i, "CLIENT LIST TYPE pubsub");
    cr_assert(r != NULL && r->type == REDIS_REPLY_STRING);
    size_t n = 0;
    for (const char *p = r->str; (p = strstr(p, "id=")) != NULL; p += 3)
        n++;
    freeReplyObject(r);
    return n;
}

typedef struct channel_probe {
    const char *channel;
    size_t len;
    long long want;
    size_t from, to; /* masters from..to-1 */
} channel_probe;

static bool numsub_everywhere(harness *hh, void *arg)
{
    (void)hh;
    const channel_probe *p = arg;
    for (size_t i = p->from; i < p->to; i++)
        if (fleet_is_paused(h.fleet, i) == 0 && numsub(i, p->channel, p->len) != p->want)
            return false;
    return true;
}

/* Wait until every running master has want subscriptions to channel. */
static void wait_numsub(const char *channel, size_t len, long long want, int timeout_ms)
{
    channel_probe p = {channel, len, want, 0, fleet_size(h.fleet)};
    cr_assert(harness_wait_until(&h, numsub_everywhere, &p, timeout_ms),
              "subscriptions to the channel never became %lld on every master", want);
}

static bool no_pubsub_clients(harness *hh, void *arg)
{
    (void)hh;
    (void)arg;
    for (size_t i = 0; i < fleet_size(h.fleet); i++)
        if (pubsub_clients(i) != 0)
            return false;
    return true;
}

static waiter w; /* not on the stack: the acquire may outlive a failed test */

/* Hold res through h.client, then start w waiting for it on client with
 * opts (slow retries if NULL); with channel, once it is subscribed to it
 * everywhere. Returns the held lock. */
static redlock_lock *hold_and_wait(redlock_client *client, const char *res, size_t len,
                                   const redlock_acquire_options *opts, const char *channel,
                                   size_t channel_len)
{
    redlock_lock *held = NULL;
    redlock_acquire_options once = fleet_acquire_options(10000, 0);
    cr_assert_eq(harness_acquire(&h, res, len, &once, &held, NULL), REDLOCK_OK);
    redlock_acquire_options slow = slow_retries();
    waiter_start(client, &w, res, len, opts != NULL ? opts : &slow);
    if (channel != NULL)
        wait_numsub(channel, channel_len, 1, 5000);
    return held;
}

/* Release held and wait for w to take the lock: within bound_ms of the
 * release, unless bound_ms is 0. Releases w's lock and returns the gap. */
static double release_and_hand_over(redlock_lock *held, double bound_ms)
{
    cr_assert_not(w.done, "the waiter got the lock while it was held");
    double released_ms = tc_now_ms();
    cr_assert_eq(harness_release(&h, held, NULL), REDLOCK_OK);
    redlock_lock_free(held);
    waiter_wait(&w, 3 * SLOW_RETRY_MS);
    cr_assert_eq(w.status, REDLOCK_OK, "the waiter failed: %s", redlock_strerror(w.status));
    double gap = w.done_ms - released_ms;
    if (bound_ms > 0)
        cr_assert_lt(gap, fleet_scaled_ms((int64_t)bound_ms),
                     "the waiter took the lock %.0f ms after the release (retry delay %d ms)",
                     gap, SLOW_RETRY_MS);
    cr_assert_eq(harness_release(&h, w.lock, NULL), REDLOCK_OK);
    redlock_lock_free(w.lock);
    return gap;
}

/* Hold, wait, release: the waiter of waiter_client must take the lock
 * within bound_ms of the release, far sooner than its retry delay. */
static double hand_off(redlock_client *waiter_client, const char *res, size_t len,
                       const char *channel, size_t channel_len, double bound_ms)
{
    redlock_lock *held = hold_and_wait(waiter_client, res, len, NULL, channel, channel_len);
    harness_run_for(&h, 100);
    return release_and_hand_over(held, bound_ms);
}

Test(notify, a_release_hands_the_lock_to_a_waiter_on_the_announcement_not_the_timer)
{
    harness_connect(&h);
    static const char channel[] = "redlock:released:0:res";
    hand_off(h.client, "res", 3, channel, sizeof(channel) - 1, 500);
}

Test(notify, a_waiter_of_another_client_is_handed_the_lock_too)
{
    harness_connect(&h);
    redlock_client *other = NULL;
    cr_assert_eq(redlock_client_new(&other, h.cfg, h.loop), REDLOCK_OK);
    static const char channel[] = "redlock:released:0:res";
    hand_off(other, "res", 3, channel, sizeof(channel) - 1, 500);
    redlock_client_free(other);
    harness_run_for(&h, 200);
}

Test(notify, resources_of_any_bytes_use_their_own_channel_never_a_pattern)
{
    harness_connect(&h);
    /* Glob characters and a NUL: a pattern subscription would match
     * others, and a C string would cut it. */
    static const char res[] = "a*[?]\0z";
    static const char channel[] = "redlock:released:0:a*[?]\0z";
    hand_off(h.client, res, sizeof(res) - 1, channel, sizeof(channel) - 1, 500);
    redisReply *r = fleet_command(h.fleet, 0, "PUBSUB NUMPAT");
    cr_assert(r != NULL && r->type == REDIS_REPLY_INTEGER);
    cr_assert_eq(r->integer, 0, "a pattern subscription was made");
    freeReplyObject(r);
}

Test(notify, turned_off_the_waiter_retries_on_its_timer_alone)
{
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_WAIT_BY_NOTIFICATION, 0), REDLOCK_OK);
    harness_connect(&h);
    redlock_acquire_options o = slow_retries();
    o.retry_delay_ms = fleet_scaled_ms(1000);
    redlock_lock *held = hold_and_wait(h.client, "res", 3, &o, NULL, 0);
    harness_run_for(&h, 200);
    cr_assert_eq(pubsub_clients(0), 0, "a subscriber connection was opened");
    double gap = release_and_hand_over(held, 0);
    cr_assert_gt(gap, 500, "the waiter was woken without notifications");
    cr_assert_eq(w.attempts, 2);
}

Test(notify, an_expiry_announces_nothing_and_the_timed_retry_takes_the_lock)
{
    harness_connect(&h);
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(fleet_set(h.fleet, i, "exp", 3, "theirs", 6, fleet_scaled_ms(600)), 0);
    redlock_acquire_options o = slow_retries();
    o.retry_delay_ms = fleet_scaled_ms(1000);
    waiter_start(h.client, &w, "exp", 3, &o);
    waiter_wait(&w, 10000);
    cr_assert_eq(w.status, REDLOCK_OK, "%s", redlock_strerror(w.status));
    cr_assert_eq(harness_release(&h, w.lock, NULL), REDLOCK_OK);
    redlock_lock_free(w.lock);
}

Test(notify, a_subscriber_connection_killed_while_waiting_falls_back_to_the_timer_then_recovers)
{
    harness_connect(&h);
    static const char channel[] = "redlock:released:0:res";
    redlock_acquire_options o = slow_retries();
    o.retry_delay_ms = fleet_scaled_ms(1500);
    redlock_lock *held = hold_and_wait(h.client, "res", 3, &o, channel, sizeof(channel) - 1);
    /* The subscriber connections die: the release's announcements are lost. */
    for (size_t i = 0; i < 5; i++)
        freeReplyObject(fleet_command(h.fleet, i, "CLIENT KILL TYPE pubsub"));
    release_and_hand_over(held, 0);
    /* The connections come back, and serve the next wait. */
    hand_off(h.client, "res", 3, channel, sizeof(channel) - 1, 500);
}

Test(notify, a_restarted_master_gets_the_subscription_again)
{
    harness_connect(&h);
    static const char channel[] = "redlock:released:0:res";
    redlock_lock *held = hold_and_wait(h.client, "res", 3, NULL, channel, sizeof(channel) - 1);
    cr_assert_eq(fleet_kill(h.fleet, 0), 0);
    cr_assert_eq(fleet_restart(h.fleet, 0), 0);
    wait_numsub(channel, sizeof(channel) - 1, 1, 5000); /* master 0 included */
    release_and_hand_over(held, 500);
}

Test(notify, a_stopped_master_does_not_hold_up_the_hand_off)
{
    harness_connect(&h);
    static const char channel[] = "redlock:released:0:res";
    redlock_lock *held = hold_and_wait(h.client, "res", 3, NULL, channel, sizeof(channel) - 1);
    cr_assert_eq(fleet_pause(h.fleet, 4), 0);
    release_and_hand_over(held, 500);
    cr_assert_eq(fleet_resume(h.fleet, 4), 0);
}

Test(notify, a_waiter_canceled_by_freeing_the_client_leaves_no_subscriber_behind)
{
    harness_connect(&h);
    static const char channel[] = "redlock:released:0:res";
    redlock_lock *held = hold_and_wait(h.client, "res", 3, NULL, channel, sizeof(channel) - 1);
    redlock_lock_free(held); /* the client releases it when freed */
    harness_free_client(&h);
    cr_assert(w.done);
    cr_assert_eq(w.status, REDLOCK_ECANCELED);
    cr_assert(harness_wait_until(&h, no_pubsub_clients, NULL, 2000),
              "a subscriber connection outlived the client");
}

Test(notify, subscriptions_linger_briefly_after_the_last_waiter_then_close)
{
    harness_connect(&h);
    static const char channel[] = "redlock:released:0:res";
    hand_off(h.client, "res", 3, channel, sizeof(channel) - 1, 500);
    /* Kept a while for the next waiter, then given up with the connection. */
    cr_assert_eq(numsub(0, channel, sizeof(channel) - 1), 1);
    wait_numsub(channel, sizeof(channel) - 1, 0, 5000);
    cr_assert(harness_wait_until(&h, no_pubsub_clients, NULL, 5000),
              "the subscriber connection stayed open with nothing to hear");
}

Test(notify, a_master_in_another_database_announces_on_that_databases_channel)
{
    /* Masters 0-2 use database 3, masters 3-4 database 0: one release,
     * written per database. */
    redlock_config_free(h.cfg);
    cr_assert_eq(redlock_config_new(&h.cfg), REDLOCK_OK);
    /* Started moments ago: declared durable, they count at once. */
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_DURABLE, 1), REDLOCK_OK);
    for (size_t i = 0; i < 5; i++) {
        char url[64];
        snprintf(url, sizeof(url), "redis://127.0.0.1:%d/%d", fleet_port(h.fleet, i),
                 i < 3 ? 3 : 0);
        cr_assert_eq(redlock_config_add_node_url(h.cfg, url, NULL), REDLOCK_OK);
    }
    harness_connect(&h);
    static const char db3[] = "redlock:released:3:res";
    static const char db0[] = "redlock:released:0:res";
    redlock_lock *held = hold_and_wait(h.client, "res", 3, NULL, NULL, 0);
    channel_probe p3 = {db3, sizeof(db3) - 1, 1, 0, 3};
    channel_probe p0 = {db0, sizeof(db0) - 1, 1, 3, 5};
    cr_assert(harness_wait_until(&h, numsub_everywhere, &p3, 5000));
    cr_assert(harness_wait_until(&h, numsub_everywhere, &p0, 5000));
    cr_assert_eq(numsub(0, db0, sizeof(db0) - 1), 0);
    cr_assert_eq(numsub(4, db3, sizeof(db3) - 1), 0);
    release_and_hand_over(held, 500);
}

/* Every master as user locker with password. */
static void config_as_user(const char *password)
{
    for (size_t i = 0; i < redlock_config_node_count(h.cfg); i++)
        cr_assert_eq(redlock_config_node_set_auth(h.cfg, i, "locker", password), REDLOCK_OK);
}

/* User locker, all keys and commands; channels as the rule says. */
static void acl_user(const char *channel_rule)
{
    for (size_t i = 0; i < fleet_size(h.fleet); i++) {
        redisReply *r = fleet_command(h.fleet, i,
                                      "ACL SETUSER locker on >acl-Secret-9 ~* +@all resetchannels %s",
                                      channel_rule);
        cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS, "ACL SETUSER failed");
        freeReplyObject(r);
    }
}

Test(notify, an_acl_user_allowed_the_channels_waits_by_notification)
{
    acl_user("&redlock:released:*");
    config_as_user("acl-Secret-9");
    harness_connect(&h);
    static const char channel[] = "redlock:released:0:res";
    hand_off(h.client, "res", 3, channel, sizeof(channel) - 1, 500);
    cr_assert_null(strstr(h.log, "acl-Secret-9"));
}

Test(notify, an_acl_user_denied_the_channels_still_releases_and_retries_on_its_timer)
{
    acl_user("resetchannels");
    config_as_user("acl-Secret-9");
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_RECONNECT_MAX_MS, 200), REDLOCK_OK);
    harness_connect(&h);
    redlock_acquire_options o = slow_retries();
    o.retry_delay_ms = fleet_scaled_ms(1000);
    redlock_lock *held = hold_and_wait(h.client, "res", 3, &o, NULL, 0);
    harness_run_for(&h, 300);
    release_and_hand_over(held, 0); /* the release deleted the key: the waiter got it */
    cr_assert_not_null(strstr(h.log, "release announcements: connection lost: NOPERM"),
                       "the refusal was not logged: %s", h.log);
    cr_assert_null(strstr(h.log, "acl-Secret-9"));
}

/* A blocking acquire on its own thread. */
typedef struct sync_waiter {
    redlock_sync *sync;
    int status;
    redlock_lock *lock;
    double done_ms;
} sync_waiter;

static void *sync_waiter_main(void *arg)
{
    sync_waiter *sw = arg;
    redlock_acquire_options o = slow_retries();
    sw->status = redlock_sync_acquire(sw->sync, "res", 3, &o, &sw->lock, NULL);
    sw->done_ms = tc_now_ms();
    return NULL;
}

Test(notify, the_blocking_api_waits_by_notification_and_closes_its_subscribers_when_idle)
{
    static const char channel[] = "redlock:released:0:res";
    /* The harness's log capture is for one thread: these clients log on
     * their own threads. */
    redlock_config *cfg = NULL;
    cr_assert_eq(redlock_config_copy(h.cfg, &cfg), REDLOCK_OK);
    redlock_config_set_log(cfg, NULL, NULL, REDLOCK_LOG_ERROR);
    redlock_sync *holder = NULL;
    redlock_sync *waiting = NULL;
    cr_assert_eq(redlock_sync_new(&holder, cfg), REDLOCK_OK);
    cr_assert_eq(redlock_sync_new(&waiting, cfg), REDLOCK_OK);
    redlock_config_free(cfg);
    redlock_lock *held = NULL;
    redlock_acquire_options once = fleet_acquire_options(10000, 0);
    cr_assert_eq(redlock_sync_acquire(holder, "res", 3, &once, &held, NULL), REDLOCK_OK);
    static sync_waiter sw; /* not on the stack: the thread may outlive a failed test */
    sw.sync = waiting;
    pthread_t thread;
    cr_assert_eq(pthread_create(&thread, NULL, sync_waiter_main, &sw), 0);
    wait_numsub(channel, sizeof(channel) - 1, 1, 5000);
    double released_ms = tc_now_ms();
    cr_assert_eq(redlock_sync_release(holder, held, NULL), REDLOCK_OK);
    redlock_lock_free(held);
    cr_assert_eq(pthread_join(thread, NULL), 0);
    cr_assert_eq(sw.status, REDLOCK_OK, "%s", redlock_strerror(sw.status));
    cr_assert_lt(sw.done_ms - released_ms, fleet_scaled_ms(500),
                 "the blocking waiter took the lock %.0f ms after the release",
                 sw.done_ms - released_ms);
    /* Nothing more asked of either client: the subscriptions still end. */
    cr_assert(harness_wait_until(&h, no_pubsub_clients, NULL, 5000),
              "an idle blocking client kept its subscriber connections");
    cr_assert_eq(redlock_sync_release(waiting, sw.lock, NULL), REDLOCK_OK);
    redlock_lock_free(sw.lock);
    redlock_sync_free(waiting);
    redlock_sync_free(holder);
}
