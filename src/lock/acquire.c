/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Acquire: attempts of SET resource value NX PX ttl on every master; for
 * several resources, or the reentrant form (an owner token), of the acquire
 * script, which sets every key or none on each master (scripts.h).
 *
 *   ATTEMPT --quorum, validity left--> DONE (the lock)
 *      |   \--fenced: a quorum with counters, validity left--> FENCE
 *      +-- no quorum, or expired --> clean up --> WAIT --timed retry, or
 *      |                                 |              announced--> ATTEMPT
 *      |                                 \--> DONE (failure): no retry or time left
 *      +-- out of memory, or canceled --> clean up --> DONE (failure)
 *   FENCE --a quorum confirmed the token, validity left--> DONE (the lock)
 *      \-- no quorum, expired, out of memory or canceled --> clean up, as above
 *   WAIT --canceled, or the next attempt cannot start--> DONE (failure)
 *   ATTEMPT, FENCE or WAIT --redlock_acquire_cancel()--> clean up --> CANCELED
 *   CANCELED --the loop's next iteration--> DONE (REDLOCK_ECANCELED)
 *
 * Canceled is the client being freed, or the acquire's cancel fd becoming
 * readable (in any state but DONE): the same exit, with REDLOCK_ECANCELED.
 * redlock_acquire_cancel() cleans up at once but calls back only from the
 * loop (CANCELED), never inside the call. A cancel during an attempt is a
 * failed attempt as far as the masters can tell (its cleanup releases what
 * it may have set), so the protocol, and its models, do not change.
 *
 * A fenced attempt refused for too few counters in use (ENOFENCE in round
 * 1) has started their seeding (fence_seed.h): its WAIT lasts until that
 * is over (at most RL_SEED_WAIT_TIMEOUTS command timeouts), and the next
 * attempt uses up no retry, once per acquire. So the first fenced acquire
 * of a new deployment, or after the masters restarted, is granted.
 *
 * Fencing (docs/fencing.md; model/fencing.pml is the specification): round
 * 1 is the attempt, each master's OK carrying its counter when that is in
 * use; the token is 1 + the greatest of a quorum of them. FENCE is round 2:
 * every master raises its counter to the token where the keys still hold
 * our value, and the lock is granted when a quorum confirmed it within the
 * validity, which counts from before round 1. A master whose counter is not
 * in use (restarted) still votes for the lock and is seeded in the
 * background (fence_seed.h).
 *
 * Cleaning up leaves nothing of the attempt behind: the SETs still queued
 * behind a handshake are withdrawn, and every master that may hold the
 * value (it said OK or an error, in time or late; its SET is in flight; or
 * its connection was lost with the SET unanswered) gets a release, at once or
 * when it reconnects (owed_release.h).
 *
 * Each attempt has its own random value and its own clock: elapsed time and
 * validity count from before that attempt's first send, never from the
 * first attempt, so a lock returned after retries is never already expired.
 *
 * Waiting by notification (docs/design.md; model/notify_wait.pml is the
 * specification): after its first failed attempt the acquire joins the
 * watch of its resource (subscriber.h) and hears each master announce
 * deletes. A WAIT always has its timed retry ahead (retry_at_us: the retry
 * delay plus jitter after the attempt that scheduled it, one of
 * retry_count); announcements only bring the next attempt forward, and
 * such an early attempt uses up no retry. It is brought forward when the
 * masters that said OK in the last attempt, with those that refused it and
 * have announced a delete since it began, could make a quorum. A new
 * subscription counts as an announcement (a delete just before it went
 * unheard), and so does an announcement during the attempt; our own
 * cleanup's announcements do not. A set of resources waits on the watch of
 * each: a delete of any of them may free the set.
 */
#include "context/context.h"
#include "util/counters.h"
#include "config/config_internal.h"
#include "lock/courtesy.h"
#include "lock/fence_seed.h"
#include "lock/holder.h"
#include "lock/lock.h"
#include "lock/result.h"
#include "master/masters.h"
#include "master/subscriber.h"
#include "redlock/redlock.h"
#include "round/owed_release.h"
#include "round/quorum.h"
#include "util/list.h"
#include "util/log.h"
#include "util/random.h"
#include "util/timer.h"
#include "util/util.h"
#include "wire/command.h"
#include "wire/resources.h"

#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Waiting for seeding: at most this many command timeouts (a read round
 * and a seed round, and a margin). */
#define RL_SEED_WAIT_TIMEOUTS 3

typedef enum rl_acquire_state {
    RL_ACQUIRE_ATTEMPT, /* a->round is in flight, undecided */
    RL_ACQUIRE_FENCE,   /* a->round won; a->fence_round (round 2) is undecided */
    RL_ACQUIRE_WAIT,    /* between attempts: the retry timer runs */
    RL_ACQUIRE_CANCELED, /* canceled by a call: cleaned up, the retry timer
                            at 0 calls back from the loop */
    RL_ACQUIRE_DONE     /* the callback was called; a is freed */
} rl_acquire_state;

typedef struct rl_acquire {
    rl_op op; /* first */
    redlock_client *client;
    redlock_acquire_cb cb;
    void *arg;
    rl_acquire_state state;
    int64_t ttl_ms;
    int64_t delay_ms;       /* lock delay: the keys get PX ttl + delay */
    int64_t retries_left;
    int64_t retry_delay_ms;
    int64_t retry_jitter_ms;
    int64_t wait_ms;        /* -1: no time limit */
    int64_t start_us;
    unsigned attempts;
    bool clock_warm;        /* the masters' clocks were checked (the warm-up) */
    rl_round *round;        /* the current or last attempt (a reference) */
    ev_timer retry_timer;   /* WAIT: at retry_at_us, or sooner when announced */
    int64_t retry_at_us;    /* the timed retry scheduled, 0 for none */
    bool woken;             /* WAIT: the timer was brought forward by announcements */
    bool notify;            /* the config's wait_by_notification */
    bool fencing;           /* the lock is granted only with a token */
    bool seed_waited;       /* the one wait for seeding was taken */
    rl_seed_waiter seeded;  /* WAIT: linked while waiting for seeding (the
                               retry timer bounds the wait) */
    uint64_t token;         /* FENCE: the token round 2 confirms */
    rl_round *fence_round;  /* FENCE: round 2 (a reference), else NULL */
    uint64_t announced;     /* masters (bit i) that announced a delete since the attempt began */
    ev_io cancel_watch;     /* the cancel fd, when given: readable cancels */
    /* The attempt's value: the random part, then the holder suffix when
     * the acquire has a label (holder.h). */
    char value[REDLOCK_VALUE_LEN + RL_HOLDER_SUFFIX_MAX + 1];
    size_t value_len;
    char last_value[REDLOCK_VALUE_LEN + RL_HOLDER_SUFFIX_MAX + 1]; /* the attempt before: its
                                                                     cleanup announces it */
    size_t last_value_len;
    const char *label;      /* the holder label (after the owner token), or NULL */
    rl_keys keys;           /* the resources (a semaphore: the slot tried); data after
                               waiters[] */
    unsigned slots;         /* a semaphore's slots, tried in turn; 0: a lock */
    unsigned slot;          /* the slot keys names */
    rl_keys *slot_keys;     /* a semaphore's: each slot's key (after the label) */
    size_t nwaiters;        /* waiters[]: one per resource, or per slot */
    const char *owner;      /* the reentrant form's owner token (after the keys), or NULL */
    size_t owner_len;
    /* One per resource (or slot), joined after the first failed attempt: a
     * set waits for any of its resources, a semaphore for any of its
     * slots. Then the keys' data, the owner token, the label, and a
     * semaphore's slot keys. */
    rl_waiter waiters[];
} rl_acquire;

void redlock_acquire_options_init(redlock_acquire_options *opts)
{
    if (opts == NULL)
        return;
    opts->ttl_ms = REDLOCK_DEFAULT;
    opts->retry_count = REDLOCK_DEFAULT;
    opts->retry_delay_ms = REDLOCK_DEFAULT;
    opts->retry_jitter_ms = REDLOCK_DEFAULT;
    opts->wait_ms = REDLOCK_DEFAULT;
    opts->lock_delay_ms = REDLOCK_DEFAULT;
    opts->owner = NULL;
    opts->owner_len = 0;
    opts->fencing = REDLOCK_DEFAULT;
    opts->label = NULL;
    opts->cancel_fd = -1;
    opts->slots = 0;
}

/* An option's value, the config's for REDLOCK_DEFAULT; -2 when outside the
 * setting's range. */
static int64_t option_or_default(int64_t value, const redlock_client *client,
                                 redlock_setting key)
{
    if (value == REDLOCK_DEFAULT)
        return rl_client_setting(client, key);
    return rl_setting_in_range(key, value) ? value : -2;
}

/* Leave nothing of the attempt behind: withdraw the SETs not sent yet, and
 * release the value on every master that may hold it, now or when it
 * reconnects. */
static void acquire_clean_up(rl_acquire *a)
{
    if (a->fence_round != NULL) {
        rl_round_detach(a->fence_round, false); /* it sets nothing: let it finish */
        a->fence_round = NULL;
    }
    rl_round *round = a->round;
    rl_round_detach(round, true); /* no decision any more; a->round keeps the reference */
    rl_round_withdraw_unsent(round);
    bool target[REDLOCK_MAX_NODES];
    bool any = false;
    for (size_t i = 0; i < round->n; i++) {
        target[i] = rl_slot_may_have_acted(&round->slots[i]);
        any = any || target[i];
    }
    if (any)
        rl_owed_release_send(a->client, &a->keys, a->value, a->value_len, target,
                             a->ttl_ms + a->delay_ms);
}

/* The one place the state changes. Leaving an attempt other than with a
 * lock (failed or canceled) cleans it up. */
static void acquire_set_state(rl_acquire *a, rl_acquire_state next, bool locked)
{
    bool trying = a->state == RL_ACQUIRE_ATTEMPT || a->state == RL_ACQUIRE_FENCE;
    if (trying && next != RL_ACQUIRE_ATTEMPT && next != RL_ACQUIRE_FENCE && !locked)
        acquire_clean_up(a);
    a->state = next;
}

/* DONE: call back with the outcome and free a. */
static void acquire_complete(rl_acquire *a, int status, redlock_lock *lock, int64_t validity_ms)
{
    int64_t end_us = a->fence_round != NULL && a->fence_round->decided
                         ? a->fence_round->decided_us : 0;
    acquire_set_state(a, RL_ACQUIRE_DONE, lock != NULL);
    if (a->fence_round != NULL) { /* granted: round 2's late replies change nothing */
        rl_round_detach(a->fence_round, false);
        a->fence_round = NULL;
    }
    redlock_client *client = a->client;
    rl_stats_acquired(&client->stats, status);
    if (rl_log_enabled(&client->log, REDLOCK_LOG_INFO)) {
        char shown[RL_KEYS_DESCRIBED];
        rl_log(&client->log, REDLOCK_LOG_INFO,
               "acquire %s: %s (%u attempt%s, %lld ms of validity, fencing token %llu)",
               rl_keys_describe(&a->keys, shown), redlock_strerror(status), a->attempts,
               a->attempts == 1 ? "" : "s", (long long)validity_ms,
               (unsigned long long)(lock != NULL ? lock->fencing_token : 0));
    }
    rl_result_info info = {
        .status = status,
        .round = a->round,
        .validity_ms = validity_ms,
        .total_us = rl_now_us() - a->start_us,
        .attempts = a->attempts,
        .masters_locked = a->round ? a->round->tally.ok : 0,
        .fencing_token = lock != NULL ? lock->fencing_token : 0,
        .end_us = end_us,
    };
    redlock_master_result masters[REDLOCK_MAX_NODES];
    redlock_result result;
    rl_result_view(&result, masters, client, &info);

    rl_client_remove_op(&a->op);
    rl_fence_seed_unwait(&a->seeded);
    for (size_t i = 0; i < a->nwaiters; i++)
        rl_waiter_leave(&a->waiters[i]);
    ev_timer_stop(client->loop, &a->retry_timer);
    ev_io_stop(client->loop, &a->cancel_watch);
    rl_round *round = a->round; /* the result points into it: kept until after cb */
    if (round != NULL)
        rl_round_detach(round, true);
    redlock_acquire_cb cb = a->cb;
    void *arg = a->arg;
    free(a);
    cb(status, lock, &result, arg);
    if (round != NULL)
        rl_round_unref(round);
}

static void acquire_on_decided(rl_round *round, void *owner);

/* How long the acquire may take: wait_ms, or without one the time its
 * retries may (each its delay and jitter). */
static int64_t acquire_budget_us(const rl_acquire *a)
{
    if (a->wait_ms >= 0)
        return a->wait_ms * 1000;
    int64_t each_us = (a->retry_delay_ms + a->retry_jitter_ms) * 1000;
    if (each_us > 0 && a->retries_left > INT64_MAX / each_us)
        return INT64_MAX;
    return a->retries_left * each_us;
}

/* ATTEMPT: a fresh value, sent to every master. Returns the status when it
 * cannot start (the state is unchanged then). */
static int acquire_attempt(rl_acquire *a)
{
    /* The locks already held come first: while the masters are behind with
     * their extensions, a new lock would only add to what they cannot
     * serve. */
    if (rl_masters_behind(a->client))
        return REDLOCK_EOVERLOAD;
    /* The first attempt waits for the masters' clocks to be checked. */
    if (!a->clock_warm) {
        int64_t at = rl_masters_clock_wait(a->client, rl_now_us(), a->start_us);
        if (at != 0) {
            rl_timer_arm_at(a->client->loop, &a->retry_timer, at);
            return REDLOCK_OK; /* still WAIT */
        }
        a->clock_warm = true;
    }
    /* Masters restarted lately do not count yet: wait for enough of them
     * when the time allowed covers it, else try (and fail, saying why). */
    int64_t counts_at = rl_masters_restart_wait(a->client, rl_now_us());
    if (counts_at != 0 && counts_at - a->start_us <= acquire_budget_us(a)) {
        rl_timer_arm_at(a->client->loop, &a->retry_timer, counts_at);
        return REDLOCK_OK; /* still WAIT */
    }
    memcpy(a->last_value, a->value, a->value_len);
    a->last_value_len = a->value_len;
    if (rl_random_pool_value(&a->client->random, a->value) != 0)
        return REDLOCK_ESYS;
    a->value_len = REDLOCK_VALUE_LEN;
    if (a->label != NULL) /* the time of this attempt: when it may come to hold */
        a->value_len += rl_holder_suffix(a->value + REDLOCK_VALUE_LEN, a->label);
    a->announced = 0;
    rl_command cmd;
    if (a->fencing)
        rl_command_fenced_acquire(&cmd, &a->keys, a->value, a->value_len,
                                  a->ttl_ms + a->delay_ms, a->owner, a->owner_len);
    else
        rl_command_acquire(&cmd, &a->keys, a->value, a->value_len, a->ttl_ms + a->delay_ms,
                           a->owner, a->owner_len);
    rl_round *round = rl_round_start(a->client, RL_ROUND_ACQUIRE, &cmd, NULL,
                                     acquire_on_decided, a);
    if (round == NULL)
        return REDLOCK_ENOMEM;
    if (a->round != NULL)
        rl_round_unref(a->round);
    a->round = round;
    a->attempts++;
    acquire_set_state(a, RL_ACQUIRE_ATTEMPT, false);
    return REDLOCK_OK;
}

/* A semaphore's slot i becomes the key its attempts ask for. */
static void acquire_use_slot(rl_acquire *a, unsigned i)
{
    if (a->slots == 0)
        return;
    a->slot = i;
    a->keys = a->slot_keys[i];
}

/* A semaphore's slot refused: what its attempt set goes (as a failed
 * attempt's), and the next slot is tried at once, without a retry used. */
static void acquire_next_slot(rl_acquire *a)
{
    acquire_set_state(a, RL_ACQUIRE_WAIT, false); /* cleans up the slot tried */
    acquire_use_slot(a, a->slot + 1);
    int rc = acquire_attempt(a);
    if (rc != REDLOCK_OK)
        acquire_complete(a, rc, NULL, 0);
}

/* WAIT is over (its timer, or the seeding it waited for): the next attempt. */
static void acquire_retry(rl_acquire *a)
{
    rl_fence_seed_unwait(&a->seeded);
    if (a->retry_at_us != 0 && rl_now_us() >= a->retry_at_us)
        a->retry_at_us = 0; /* the timed retry: taken */
    acquire_use_slot(a, 0); /* a semaphore's attempt tries its slots from the first */
    int rc = acquire_attempt(a);
    if (rc != REDLOCK_OK)
        acquire_complete(a, rc, NULL, 0);
}

static void acquire_handle_retry_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    rl_acquire *a = w->data;
    if (a->state == RL_ACQUIRE_CANCELED)
        acquire_complete(a, REDLOCK_ECANCELED, NULL, 0);
    else
        acquire_retry(a);
}

/* The seeding waited for is over, on its round's callback. */
static void acquire_on_seeded(rl_seed_waiter *w)
{
    rl_acquire *a = rl_container_of(w, rl_acquire, seeded);
    ev_timer_stop(a->client->loop, &a->retry_timer);
    acquire_retry(a);
}

static void acquire_on_retry_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    redlock_client *client = ((rl_acquire *)w->data)->client;
    rl_client_enter(client);
    acquire_handle_retry_timer(loop, w, revents);
    rl_client_leave(client);
}

static unsigned count_bits(uint64_t bits)
{
    unsigned n = 0;
    for (; bits != 0; bits &= bits - 1)
        n++;
    return n;
}

/* Whether announcements make an attempt worth it before the timed retry:
 * with the masters that said OK to the last attempt, those that refused
 * it and announced a delete since could make a quorum. Read from the
 * round each time: answers that came after the decision count too. */
static bool acquire_announced_enough(const rl_acquire *a)
{
    const rl_round *round = a->round;
    uint64_t said_ok = 0;
    uint64_t freed = 0;
    for (size_t i = 0; i < round->n; i++) {
        const rl_slot *slot = &round->slots[i];
        uint64_t bit = UINT64_C(1) << i;
        if (slot->state != RL_SLOT_DONE && slot->state != RL_SLOT_LATE)
            continue; /* no answer (yet) */
        if (slot->outcome == REDLOCK_MASTER_OK)
            said_ok |= bit;
        else if (slot->outcome == REDLOCK_MASTER_HELD && (a->announced & bit))
            freed |= bit;
    }
    return freed != 0 && count_bits(said_ok | freed) >= a->client->quorum;
}

/* Schedule the next timed retry, using one up: false when none is left or
 * it would start after the time allowed. */
static bool acquire_schedule_retry(rl_acquire *a)
{
    if (a->retries_left <= 0)
        return false;
    int64_t delay_ms = a->retry_delay_ms + rl_random_jitter(a->retry_jitter_ms);
    int64_t next_start_us = rl_now_us() + delay_ms * 1000;
    if (a->wait_ms >= 0 && next_start_us - a->start_us > a->wait_ms * 1000)
        return false;
    a->retries_left--;
    a->retry_at_us = next_start_us;
    return true;
}

/* When an attempt brought forward by announcements starts: soon, spread
 * at random over a few round trips, so that the waiters woken by one
 * release do not all send at once and split the masters' votes. */
static int64_t acquire_woken_at(const rl_acquire *a)
{
    const rl_round *round = a->round;
    int64_t rtt_us = round->decided ? round->decided_us - round->t0_us : 0;
    if (rtt_us < RL_SPREAD_RTT_MIN_US)
        rtt_us = RL_SPREAD_RTT_MIN_US;
    if (rtt_us > RL_SPREAD_RTT_MAX_US)
        rtt_us = RL_SPREAD_RTT_MAX_US;
    return rl_now_us() + rl_random_jitter(RL_SPREAD_RTTS * rtt_us);
}

/* WAIT until the timed retry, or sooner when announcements say so. */
static void acquire_wait(rl_acquire *a)
{
    acquire_set_state(a, RL_ACQUIRE_WAIT, false);
    a->woken = acquire_announced_enough(a);
    rl_timer_arm_at(a->client->loop, &a->retry_timer,
                    a->woken ? acquire_woken_at(a) : a->retry_at_us);
}

/* Told by the watch: master may have deleted the key. */
static void acquire_on_announce(rl_waiter *w, size_t master, const char *value, size_t value_len)
{
    rl_acquire *a = w->owner;
    /* Our own cleanup's delete frees nothing another holds. */
    if (value != NULL &&
        ((value_len == a->value_len && memcmp(value, a->value, value_len) == 0) ||
         (value_len == a->last_value_len && memcmp(value, a->last_value, value_len) == 0)))
        return;
    a->announced |= UINT64_C(1) << master;
    if (a->state == RL_ACQUIRE_WAIT && !a->woken && acquire_announced_enough(a)) {
        a->woken = true;
        rl_timer_arm_at(a->client->loop, &a->retry_timer, acquire_woken_at(a));
    }
}

/* Hear the masters announce deletes of any of the resources. */
static void acquire_join_watches(rl_acquire *a, int64_t since_us)
{
    size_t pos = 0;
    const char *resource;
    size_t len;
    for (size_t i = 0; i < a->nwaiters; i++) {
        if (a->slots > 0)
            resource = rl_keys_at(&a->slot_keys[i], 0, &len);
        else if (!rl_keys_next(&a->keys, &pos, &resource, &len))
            break;
        if (rl_waiter_join(a->client, &a->waiters[i], resource, len, since_us) != REDLOCK_OK) {
            rl_log(&a->client->log, REDLOCK_LOG_DEBUG,
                   "acquire: out of memory for release announcements; retrying on the timer");
            return;
        }
    }
}

/* Round 1 refused for too few counters in use, the first time: WAIT for
 * the seeding it started, then try again without using up a retry. With
 * no seeding under way (none could start, or one just ended), the refusal
 * is an ordinary failure. */
static bool acquire_wait_for_seeding(rl_acquire *a, int status)
{
    if (status != REDLOCK_ENOFENCE || a->seed_waited || !rl_fence_seed_wait(a->client, &a->seeded))
        return false;
    a->seed_waited = true;
    acquire_set_state(a, RL_ACQUIRE_WAIT, false);
    a->woken = true; /* announcements do not bring it forward */
    /* Woken when the seeding ends; the timer bounds the wait. */
    rl_timer_arm_in(a->client->loop, &a->retry_timer,
                    (int64_t)RL_SEED_WAIT_TIMEOUTS * 1000 *
                        rl_client_setting(a->client, REDLOCK_COMMAND_TIMEOUT_MS));
    return true;
}

/* After a failed attempt: WAIT for the next one, or DONE with status. */
static void acquire_retry_or_fail(rl_acquire *a, int status)
{
    rl_round *round = a->round;
    /* A permission refused stays refused: retrying cannot help. */
    if (status == REDLOCK_EPERM || (a->retry_at_us == 0 && !acquire_schedule_retry(a))) {
        acquire_complete(a, status, NULL, 0);
        return;
    }
    acquire_wait(a);
    if (a->notify && a->waiters[0].watch == NULL)
        acquire_join_watches(a, round->t0_us);
}

/* The lock, when validity is left at end_us (the end of the attempt's
 * last round): true when the acquire completed (with the lock, or out of
 * memory), false when the validity ran out. */
static bool acquire_grant(rl_acquire *a, int64_t end_us)
{
    redlock_client *client = a->client;
    const rl_round *round = a->round;
    double drift = client->cfg->drift_factor;
    int64_t validity_ms = rl_validity_us(a->ttl_ms, end_us - round->t0_us, drift) / 1000;
    if (validity_ms <= 0)
        return false;
    redlock_lock *lock = rl_lock_create(&a->keys, a->value, a->value_len, a->ttl_ms);
    if (lock == NULL) {
        acquire_complete(a, REDLOCK_ENOMEM, NULL, 0);
        return true;
    }
    rl_lock_set_deadline(lock, round->t0_us + a->ttl_ms * 1000 - rl_drift_us(a->ttl_ms, drift));
    lock->acquired_us = round->t0_us;
    lock->delay_ms = a->delay_ms;
    lock->fencing_token = a->fencing ? a->token : 0;
    lock->plain_key = a->keys.count == 1 && a->owner == NULL && !a->fencing;
    rl_lock_set_holders(lock, round->holders);
    rl_lock_register(client, lock);
    rl_lock_start_hold(client, lock);
    acquire_complete(a, REDLOCK_OK, lock, validity_ms);
    return true;
}

static void acquire_log_failure(const rl_acquire *a, int status, const char *what,
                                const rl_round *round)
{
    rl_log(&a->client->log, REDLOCK_LOG_DEBUG, "acquire attempt %u: %s%s (%u of %u masters %s)",
           a->attempts, what, redlock_strerror(status), round->tally.ok, (unsigned)round->n,
           round == a->round ? "said OK" : "confirmed the token");
}

static void acquire_on_fenced(rl_round *fence, void *owner)
{
    rl_acquire *a = owner;
    int status;
    if (rl_tally_verdict(&fence->tally) == RL_QUORUM) {
        if (acquire_grant(a, fence->decided_us))
            return;
        status = REDLOCK_EEXPIRED;
    } else {
        /* Refused: our keys are gone (expired), or a counter went out of
         * use (a master restarted between the rounds). */
        status = rl_tally_failure_status(&fence->tally, fence->tally.unfenced > 0
                                                            ? REDLOCK_ENOFENCE
                                                            : REDLOCK_EEXPIRED);
    }
    acquire_log_failure(a, status, "fencing: ", fence);
    acquire_retry_or_fail(a, status);
}

/* Round 1 won: FENCE, sending round 2 with the token, 1 + the greatest
 * counter of the masters that said OK (a quorum of them carries one). */
static void acquire_fence(rl_acquire *a)
{
    const rl_round *round = a->round;
    int64_t greatest = 0;
    for (size_t i = 0; i < round->n; i++) {
        const rl_slot *slot = &round->slots[i];
        if (slot->outcome == REDLOCK_MASTER_OK && slot->counter > greatest)
            greatest = slot->counter;
    }
    a->token = (uint64_t)greatest + 1;
    rl_command cmd;
    rl_command_fence_confirm(&cmd, &a->keys, a->value, a->value_len, a->token);
    a->fence_round = rl_round_start(a->client, RL_ROUND_FENCE, &cmd, NULL, acquire_on_fenced, a);
    if (a->fence_round == NULL) {
        acquire_complete(a, REDLOCK_ENOMEM, NULL, 0);
        return;
    }
    acquire_set_state(a, RL_ACQUIRE_FENCE, false);
}

static void acquire_on_decided(rl_round *round, void *owner)
{
    rl_acquire *a = owner;
    int status;

    rl_round_detach(round, true); /* a->round keeps the reference */
    if (rl_tally_verdict(&round->tally) == RL_QUORUM) {
        if (a->fencing) {
            int64_t elapsed_us = round->decided_us - round->t0_us;
            if (rl_validity_us(a->ttl_ms, elapsed_us, a->client->cfg->drift_factor) > 0) {
                acquire_fence(a);
                return;
            }
        } else if (acquire_grant(a, round->decided_us)) {
            return;
        }
        status = REDLOCK_EEXPIRED;
    } else {
        status = rl_tally_failure_status(&round->tally, REDLOCK_ECONFLICT);
    }
    acquire_log_failure(a, status, "", round);
    if (a->fencing && acquire_wait_for_seeding(a, status))
        return;
    /* A semaphore's slot held by others: the next one, if any is left. */
    if (status == REDLOCK_ECONFLICT && a->slot + 1 < a->slots) {
        acquire_next_slot(a);
        return;
    }
    acquire_retry_or_fail(a, status);
}

static void acquire_cancel(rl_op *op)
{
    acquire_complete((rl_acquire *)op, REDLOCK_ECANCELED, NULL, 0);
}

/* The cancel fd became readable: canceled, whatever the state (an attempt
 * in flight is cleaned up like a failed one). The fd is not read. */
static void acquire_on_cancel_fd(struct ev_loop *loop, ev_io *w, int revents)
{
    rl_acquire *a = w->data;
    redlock_client *client = a->client;
    rl_client_enter(client);
    rl_log(&client->log, REDLOCK_LOG_DEBUG, "acquire: canceled by its cancel fd");
    acquire_complete(a, REDLOCK_ECANCELED, NULL, 0);
    rl_client_leave(client);
}

/* Whether the cancel fd is readable already (REDLOCK_ECANCELED), not
 * (REDLOCK_OK), or no open fd (REDLOCK_EINVAL). Polled, never read: a hang
 * up or an error counts as readable, as libev would report it. */
static int acquire_cancel_fd_check(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n = poll(&p, 1, 0);
    if (n < 0 || (n > 0 && (p.revents & POLLNVAL)))
        return REDLOCK_EINVAL;
    return n > 0 ? REDLOCK_ECANCELED : REDLOCK_OK;
}

/* When this client's own release of one of the resources asks new acquires
 * to let the waiters go first (courtesy.h): the latest such time, or 0. */
static int64_t acquire_courtesy_until(const rl_acquire *a)
{
    int64_t until = 0;
    size_t pos = 0;
    const char *resource;
    size_t len;
    while (rl_keys_next(&a->keys, &pos, &resource, &len)) {
        int64_t t = rl_courtesy_until(&a->client->courtesy, resource, len, a->start_us);
        if (t > until)
            until = t;
    }
    return until;
}

/* The options with the config's defaults filled in, checked. */
typedef struct acquire_settings {
    int64_t ttl_ms, retries, retry_delay_ms, retry_jitter_ms, wait_ms, lock_delay_ms;
    size_t owner_len;
    size_t label_len; /* with its NUL; 0: none */
    bool fencing;
    unsigned slots;   /* a semaphore's; 0: a lock */
} acquire_settings;

static int acquire_read_options(const redlock_client *client, const redlock_acquire_options *opts,
                                acquire_settings *out)
{
    out->ttl_ms = option_or_default(opts->ttl_ms, client, REDLOCK_TTL_MS);
    out->retries = option_or_default(opts->retry_count, client, REDLOCK_RETRY_COUNT);
    out->retry_delay_ms = option_or_default(opts->retry_delay_ms, client, REDLOCK_RETRY_DELAY_MS);
    out->retry_jitter_ms =
        option_or_default(opts->retry_jitter_ms, client, REDLOCK_RETRY_JITTER_MS);
    out->lock_delay_ms = option_or_default(opts->lock_delay_ms, client, REDLOCK_LOCK_DELAY_MS);
    int64_t fencing = option_or_default(opts->fencing, client, REDLOCK_FENCING);
    int64_t wait_ms = opts->wait_ms;
    if (out->ttl_ms < 0 || out->retries < 0 || out->retry_delay_ms < 0 ||
        out->retry_jitter_ms < 0 || out->lock_delay_ms < 0 || fencing < 0 ||
        (wait_ms != REDLOCK_DEFAULT && (wait_ms < 0 || wait_ms > INT64_MAX / 1000)))
        return REDLOCK_EINVAL;
    if (rl_config_check_ttl(client->cfg, out->ttl_ms) != REDLOCK_OK)
        return REDLOCK_EMAXTTL;
    /* A TTL that no attempt could get validity from (rl_validity_us): the
     * drift allowance and a round trip of RL_MIN_ROUND_TRIP_US leave less
     * than a millisecond. Nothing is sent for it. */
    if (out->ttl_ms * 1000 - rl_drift_us(out->ttl_ms, client->cfg->drift_factor) <
        RL_MIN_ROUND_TRIP_US + 1000)
        return REDLOCK_EINVAL;
    out->wait_ms = wait_ms == REDLOCK_DEFAULT ? -1 : wait_ms;
    out->fencing = fencing != 0;
    out->owner_len = opts->owner != NULL ? opts->owner_len : 0;
    if (opts->owner != NULL && (out->owner_len == 0 || out->owner_len > REDLOCK_MAX_VALUE_LEN))
        return REDLOCK_EINVAL;
    if (opts->label != NULL && !rl_holder_label_valid(opts->label))
        return REDLOCK_EINVAL;
    out->label_len = opts->label != NULL ? strlen(opts->label) + 1 : 0;
    if (opts->cancel_fd < -1 || opts->slots < 0 || opts->slots > REDLOCK_MAX_SLOTS)
        return REDLOCK_EINVAL;
    out->slots = opts->slots >= 2 ? (unsigned)opts->slots : 0;
    /* A semaphore is of one resource, and not reentrant. */
    if (out->slots > 0 && opts->owner != NULL)
        return REDLOCK_EINVAL;
    /* Canceled before it began: nothing is sent. */
    return opts->cancel_fd >= 0 ? acquire_cancel_fd_check(opts->cancel_fd) : REDLOCK_OK;
}

/* A semaphore's slot keys, "<resource>:slot:<i>", are stored after an
 * array of rl_keys views of them. */
#define RL_SLOT_SUFFIX ":slot:"
#define RL_SLOT_SUFFIX_MAX (sizeof(RL_SLOT_SUFFIX) - 1 + 2) /* two digits: REDLOCK_MAX_SLOTS */

/* Whether every slot key of a resource of len bytes (checked already) is
 * short enough to be a resource, and the room they take in *room. */
static bool acquire_slot_keys_fit(size_t len, unsigned slots, size_t *room)
{
    if (len + RL_SLOT_SUFFIX_MAX > REDLOCK_MAX_RESOURCE_LEN)
        return false;
    /* + its NUL (snprintf's, overwritten by the next key) and alignment */
    *room = slots * (sizeof(rl_keys) + len + RL_SLOT_SUFFIX_MAX) + 1 + _Alignof(rl_keys);
    return true;
}

static void acquire_store_slot_keys(rl_acquire *a, char *at, unsigned slots)
{
    /* The views first: at is not aligned for them otherwise. */
    size_t views = slots * sizeof(rl_keys);
    size_t align = _Alignof(rl_keys);
    size_t pad = (align - (uintptr_t)at % align) % align;
    a->slot_keys = (rl_keys *)(void *)(at + pad);
    char *data = at + pad + views;
    a->slots = slots;
    for (unsigned i = 0; i < slots; i++) {
        size_t n = a->keys.len;
        memcpy(data, a->keys.data, n);
        n += (size_t)snprintf(data + n, RL_SLOT_SUFFIX_MAX + 1, RL_SLOT_SUFFIX "%u", i);
        a->slot_keys[i] = rl_keys_one(data, n);
        data += n;
    }
}

/* The first attempt, or, released here a moment ago while others waited,
 * the courtesy of letting them go first. */
static int acquire_begin(rl_acquire *a)
{
    int64_t courtesy_until = acquire_courtesy_until(a);
    if (courtesy_until > 0) {
        rl_timer_arm_at(a->client->loop, &a->retry_timer, courtesy_until);
        return REDLOCK_OK;
    }
    return acquire_attempt(a);
}

/* After the keys' data at at: the owner token, the label and a
 * semaphore's slot keys, as the options give them. */
static void acquire_store_extras(rl_acquire *a, const redlock_acquire_options *opts,
                                 const acquire_settings *set, char *at)
{
    if (opts->owner != NULL) {
        memcpy(at, opts->owner, set->owner_len);
        a->owner = at;
        a->owner_len = set->owner_len;
        at += set->owner_len;
    }
    if (opts->label != NULL) {
        memcpy(at, opts->label, set->label_len);
        a->label = at;
        at += set->label_len;
    }
    if (set->slots > 0) {
        acquire_store_slot_keys(a, at, set->slots);
        acquire_use_slot(a, 0);
    }
}

static int acquire_start(redlock_client *client, const void *const *resources,
                         const size_t *resource_lens, size_t count,
                         const redlock_acquire_options *opts, redlock_acquire_cb cb,
                         void *arg)
{
    size_t block_len;
    if (client == NULL || cb == NULL ||
        rl_keys_check(resources, resource_lens, count, &block_len) != REDLOCK_OK)
        return REDLOCK_EINVAL;
    if (client->closing)
        return REDLOCK_ECANCELED;
    redlock_acquire_options defaults;
    if (opts == NULL) {
        redlock_acquire_options_init(&defaults);
        opts = &defaults;
    }
    acquire_settings set;
    int rc = acquire_read_options(client, opts, &set);
    if (rc != REDLOCK_OK)
        return rc;
    size_t owner_len = set.owner_len;
    /* A semaphore is of one resource, whose slot keys must fit. */
    size_t slots_len = 0;
    if (set.slots > 0 &&
        (count != 1 || !acquire_slot_keys_fit(resource_lens[0], set.slots, &slots_len)))
        return REDLOCK_EINVAL;
    size_t nwaiters = set.slots > 0 ? set.slots : count;

    rl_acquire *a = calloc(1, sizeof(*a) + nwaiters * sizeof(rl_waiter) + block_len + owner_len +
                                  set.label_len + slots_len);
    if (a == NULL)
        return REDLOCK_ENOMEM;
    a->nwaiters = nwaiters;
    a->op.cancel = acquire_cancel;
    a->client = client;
    rl_list_init(&a->seeded.link);
    a->seeded.wake = acquire_on_seeded;
    a->cb = cb;
    a->arg = arg;
    a->ttl_ms = set.ttl_ms;
    a->delay_ms = set.lock_delay_ms;
    a->retries_left = set.retries;
    a->retry_delay_ms = set.retry_delay_ms;
    a->retry_jitter_ms = set.retry_jitter_ms;
    a->wait_ms = set.wait_ms;
    a->start_us = rl_now_us();
    char *block = (char *)&a->waiters[nwaiters];
    rl_keys_store(&a->keys, block, resources, resource_lens, count);
    acquire_store_extras(a, opts, &set, block + block_len);
    ev_timer_init(&a->retry_timer, acquire_on_retry_timer, 0., 0.);
    a->retry_timer.data = a;
    ev_io_init(&a->cancel_watch, acquire_on_cancel_fd, opts->cancel_fd, EV_READ);
    a->cancel_watch.data = a;
    for (size_t i = 0; i < nwaiters; i++) {
        rl_list_init(&a->waiters[i].link);
        a->waiters[i].on_announce = acquire_on_announce;
        a->waiters[i].owner = a;
    }
    a->notify = rl_client_setting(client, REDLOCK_WAIT_BY_NOTIFICATION) != 0;
    a->fencing = set.fencing;
    a->state = RL_ACQUIRE_WAIT; /* before the first attempt, as between two */

    rc = acquire_begin(a);
    if (rc != REDLOCK_OK) {
        free(a);
        return rc;
    }
    rl_client_add_op(client, &a->op);
    if (opts->cancel_fd >= 0)
        ev_io_start(client->loop, &a->cancel_watch);
    return REDLOCK_OK;
}

int redlock_acquire_many_async(redlock_client *client, const void *const *resources,
                               const size_t *resource_lens, size_t count,
                               const redlock_acquire_options *opts, redlock_acquire_cb cb,
                               void *arg)
{
    if (client == NULL)
        return REDLOCK_EINVAL;
    rl_client_enter(client);
    int rc = acquire_start(client, resources, resource_lens, count, opts, cb, arg);
    rl_client_leave(client);
    return rc;
}

/* CANCELED: cleaned up now (an attempt in flight released like a failed
 * one), nothing more to wait for, the callback on the loop's next
 * iteration. */
static void acquire_cancel_soon(rl_acquire *a)
{
    rl_fence_seed_unwait(&a->seeded);
    ev_io_stop(a->client->loop, &a->cancel_watch);
    acquire_set_state(a, RL_ACQUIRE_CANCELED, false);
    rl_timer_arm_in(a->client->loop, &a->retry_timer, 0);
}

int redlock_acquire_cancel(redlock_client *client, redlock_acquire_cb cb, const void *arg)
{
    if (client == NULL || cb == NULL)
        return REDLOCK_EINVAL;
    rl_client_enter(client);
    int rc = REDLOCK_ENOENT;
    for (rl_link *l = client->ops.next; l != &client->ops; l = l->next) {
        rl_op *op = rl_container_of(l, rl_op, link);
        rl_acquire *a = (rl_acquire *)op;
        if (op->cancel != acquire_cancel || a->cb != cb || a->arg != arg ||
            a->state == RL_ACQUIRE_CANCELED)
            continue;
        acquire_cancel_soon(a);
        rc = REDLOCK_OK;
    }
    rl_client_leave(client);
    return rc;
}

int redlock_acquire_async(redlock_client *client, const void *resource, size_t resource_len,
                          const redlock_acquire_options *opts, redlock_acquire_cb cb, void *arg)
{
    return redlock_acquire_many_async(client, &resource, &resource_len, 1, opts, cb, arg);
}
