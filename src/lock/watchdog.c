/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Auto-extension ("watchdog"): keep a held lock extended in the background.
 *
 *   WAITING --tick (ttl/3 ± 10 % after the last extension; the first
 *              anywhere in [0.1, 1.1]·ttl/3 after the acquire)--> EXTENDING
 *   WAITING --tick, the holder's own operation in flight--> WAITING (retry
 *                                                 after retry_delay + jitter)
 *   WAITING --tick, the extension cannot start--> WAITING (backoff), or LOST
 *                                                 when no validity is left
 *   EXTENDING --ok--> WAITING
 *   EXTENDING --no quorum--> WAITING (backoff)
 *   EXTENDING --not ours / expired--> LOST
 *   any --guard: less than ttl/6 of validity left, unextended--> LOST
 *   WAITING --tick at the cap: max_hold_ms since the acquire--> LOST
 *                                                 (REDLOCK_EMAXHOLD)
 *
 * The schedule (watchdog_schedule.h): the tick is drawn anew for each
 * extension within ttl/3 ± 10 % after the last one started, so that locks
 * acquired together are not extended together forever, and the first one
 * anywhere within a whole interval, so that a burst of them is spread over
 * a cycle at once. The backoff: after
 * the n-th failed extension in a row, a retry 2^(n-1) times the acquire's
 * retry_delay + 0..retry_jitter later (at least 10 ms, at most ttl/3),
 * never later than a command timeout before the guard; once past that, a
 * retry only when it still comes before the guard (else WAITING with no
 * tick: the guard decides). An extension that succeeds, ours or the
 * holder's, starts the count again.
 *
 * The holder may extend the lock itself between two ticks: the schedule
 * then follows the new deadline and TTL (a failed extend may have cut the
 * validity short: the guard follows, and may fire at once).
 *
 * The guard is armed in every state, ttl/6 before the validity ends (or
 * earlier: once the lock was extended, a guard armed for the old validity
 * is left to fire, sees the new one and is armed again). It
 * fires before the validity ends, so a holder told that its lock is lost
 * still has a little time to stop before anyone else can take it. LOST is
 * final: the lock is marked lost, the holder told, and the watchdog freed.
 * With max_hold_ms set, the tick is never armed past the cap, and the tick
 * at the cap gives the lock up: not extended any more, told as lost, its
 * keys left to expire (the holder may still be finishing).
 * Stopping it (release, freeing the handle or the client) frees it from any
 * state, abandoning an extension in flight.
 */
#include "lock/watchdog.h"
#include "context/context.h"
#include "util/counters.h"
#include "config/config_internal.h"
#include "lock/lock.h"
#include "lock/round_op.h"
#include "lock/watchdog_schedule.h"
#include "redlock/redlock.h"
#include "round/quorum.h"
#include "util/list.h"
#include "util/log.h"
#include "util/random.h"
#include "util/timer.h"
#include "util/util.h"
#include "wire/resources.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

typedef enum rl_watchdog_state {
    RL_WATCHDOG_WAITING,   /* the tick is armed (the next extension, or a
                              retry), unless no retry is worth making */
    RL_WATCHDOG_EXTENDING, /* our extension is in flight */
    RL_WATCHDOG_LOST       /* given up; freed at once */
} rl_watchdog_state;

/* What moves the state machine. */
typedef enum rl_watchdog_event {
    RL_WATCHDOG_TICK,     /* WAITING: time to extend */
    RL_WATCHDOG_EXTENDED, /* EXTENDING: our extension completed */
    RL_WATCHDOG_GUARD,    /* any: the guard fired */
    RL_WATCHDOG_HOLDER    /* WAITING: an extend of the holder's changed the deadline */
} rl_watchdog_event;

struct rl_watchdog {
    redlock_client *client;
    redlock_lock *lock;
    redlock_lost_cb on_lost;
    void *arg;
    rl_watchdog_state state;
    int last_failure;       /* status of the last failed extension */
    unsigned failures;      /* failed extensions since the last success */
    rl_round_op *extending; /* EXTENDING: our extension in flight */
    int64_t cap_us;         /* max_hold_ms after the acquire; 0: no cap */
    ev_timer tick;          /* WAITING: the next extension, never after the cap */
    int64_t guard_armed_us; /* when the guard was last armed to fire */
    ev_timer guard;         /* lost unless extended by then */
};

static int64_t lock_ttl_ms(const rl_watchdog *wd)
{
    int64_t ttl = atomic_load(&wd->lock->ttl_ms);
    return ttl > 0 ? ttl : rl_client_setting(wd->client, REDLOCK_TTL_MS);
}

static int64_t interval_us(const rl_watchdog *wd)
{
    return rl_wd_interval_us(lock_ttl_ms(wd));
}

static int64_t margin_us(const rl_watchdog *wd)
{
    return rl_wd_margin_us(lock_ttl_ms(wd));
}

static int64_t guard_at(const rl_watchdog *wd)
{
    return rl_wd_guard_at(rl_lock_deadline(wd->lock), lock_ttl_ms(wd));
}

static void arm_at(rl_watchdog *wd, ev_timer *timer, int64_t at_us)
{
    rl_timer_arm_at(wd->client->loop, timer, at_us);
}

/* The tick, at at_us or at the cap, whichever comes first; none at
 * RL_WD_NEVER without a cap. */
static void arm_tick(rl_watchdog *wd, int64_t at_us)
{
    if (wd->cap_us != 0 && wd->cap_us < at_us)
        at_us = wd->cap_us;
    if (at_us == RL_WD_NEVER)
        ev_timer_stop(wd->client->loop, &wd->tick);
    else
        arm_at(wd, &wd->tick, at_us);
}

static void arm_guard(rl_watchdog *wd)
{
    int64_t at = guard_at(wd);
    /* Armed for an earlier time (the lock was extended since): left to
     * fire there, see the extension and follow it (guard_follow). Once
     * every other extension, instead of moving the timer among every
     * lock's timers at each one. */
    if (ev_is_active(&wd->guard) && wd->guard_armed_us <= at)
        return;
    wd->guard_armed_us = at;
    arm_at(wd, &wd->guard, at);
}

/* A uniform 64-bit word for the schedule's jitter, from the client's pool
 * (drawn on the loop's thread, like lock values). */
static uint64_t draw(rl_watchdog *wd)
{
    return rl_random_pool_word(&wd->client->random);
}

/* Schedule the regular extension and the guard from the lock's deadline:
 * the last extension (or the acquire) started ttl - drift before it. The
 * first tick of the watchdog is drawn over a whole interval (spreading a
 * burst of acquires at once: watchdog_schedule.h). */
static void schedule_from_deadline(rl_watchdog *wd, bool first)
{
    int64_t ttl_ms = lock_ttl_ms(wd);
    int64_t deadline = rl_lock_deadline(wd->lock);
    int64_t started = deadline - (ttl_ms * 1000 - rl_drift_us(ttl_ms, wd->client->cfg->drift_factor));
    arm_tick(wd, rl_wd_tick_at(started, interval_us(wd), guard_at(wd), first, draw(wd)));
    arm_guard(wd);
}

/* A retry after the attempt-th failure in a row (1: as an acquire's retry);
 * returns when (RL_WD_NEVER: none before the guard). */
static int64_t schedule_retry(rl_watchdog *wd, unsigned attempt)
{
    rl_wd_backoff b = {
        .delay_us = rl_client_setting(wd->client, REDLOCK_RETRY_DELAY_MS) * 1000,
        .jitter_us = rl_client_setting(wd->client, REDLOCK_RETRY_JITTER_MS) * 1000,
    };
    int64_t wait = rl_wd_backoff_us(&b, attempt, interval_us(wd), draw(wd));
    int64_t reserve = rl_client_setting(wd->client, REDLOCK_COMMAND_TIMEOUT_MS) * 1000;
    int64_t at = rl_wd_retry_at(rl_now_us(), wait, guard_at(wd), reserve);
    arm_tick(wd, at);
    return at;
}

/* A failed extension: retried with backoff while validity lasts; the
 * guard decides when it is too late. */
static void extension_failed(rl_watchdog *wd, int status)
{
    wd->last_failure = status;
    if (wd->failures < UINT_MAX)
        wd->failures++;
    int64_t at = schedule_retry(wd, wd->failures);
    if (rl_log_enabled(&wd->client->log, REDLOCK_LOG_DEBUG)) {
        char shown[RL_KEYS_DESCRIBED];
        char retry[48] = "no retry before the guard";
        if (at != RL_WD_NEVER)
            snprintf(retry, sizeof(retry), "retry in %lld ms",
                     (long long)((at - rl_now_us()) / 1000));
        rl_log(&wd->client->log, REDLOCK_LOG_DEBUG, "auto-extend %s: %s (failure %u in a row), %s",
               rl_keys_describe(&wd->lock->keys, shown), redlock_strerror(status), wd->failures,
               retry);
    }
}

void rl_watchdog_stop(redlock_lock *lock)
{
    rl_watchdog *wd = lock->watchdog;
    if (wd == NULL)
        return;
    ev_timer_stop(wd->client->loop, &wd->tick);
    ev_timer_stop(wd->client->loop, &wd->guard);
    if (wd->extending != NULL) {
        /* EXTENDING, or LOST from there: the extension is no longer wanted.
         * What of it has gone out finishes unheard; what still waits to go
         * out never does (quorum.h). */
        rl_round_op *op = wd->extending;
        wd->extending = NULL;
        op->cb = NULL;
        rl_round_op_complete(op, REDLOCK_ECANCELED, 0, 0);
    }
    lock->watchdog = NULL;
    wd->client->watchdogs--;
    free(wd);
}

bool rl_watchdog_is_extending(const redlock_lock *lock)
{
    const rl_watchdog *wd = lock->watchdog;
    return wd != NULL && wd->extending != NULL && lock->busy == &wd->extending->use;
}

/* Entering LOST: tell everyone, and free the watchdog. */
static void watchdog_lost(rl_watchdog *wd, int status)
{
    redlock_lock *lock = wd->lock;
    redlock_lost_cb on_lost = wd->on_lost;
    void *arg = wd->arg;
    char shown[RL_KEYS_DESCRIBED];
    rl_log(&wd->client->log, REDLOCK_LOG_WARN,
           "lost %s: lock lost (%lld ms of validity left, %lld ms TTL): %s",
           rl_keys_describe(&lock->keys, shown), (long long)redlock_lock_validity_ms(lock),
           (long long)lock_ttl_ms(wd), redlock_strerror(status));
    rl_count(&wd->client->stats.locks_lost);
    rl_watchdog_stop(lock); /* frees wd */
    rl_lock_mark_lost(lock);
    if (on_lost != NULL)
        on_lost(status, lock, arg);
}

void rl_watchdog_lose(redlock_lock *lock, int status)
{
    if (lock->watchdog != NULL)
        watchdog_lost(lock->watchdog, status);
}

/* The guard fired, but the lock was extended meanwhile (on another
 * client's loop: not heard otherwise): the guard follows the new deadline,
 * and a watchdog left with no tick (no retry before the old guard) gets its
 * regular one. */
static void guard_follow(rl_watchdog *wd)
{
    if (wd->state == RL_WATCHDOG_WAITING && !ev_is_active(&wd->tick))
        schedule_from_deadline(wd, false);
    else
        arm_guard(wd);
}

static void watchdog_on_extended(int status, const redlock_result *result, void *arg);

/* Start our extension: REDLOCK_OK, or why it cannot start. */
static int watchdog_start_extension(rl_watchdog *wd)
{
    redlock_lock *lock = wd->lock;
    int rc = redlock_extend_async(wd->client, lock, 0, watchdog_on_extended, wd);
    if (rc == REDLOCK_OK)
        wd->extending = rl_container_of(lock->busy, rl_round_op, use);
    return rc;
}

/* The state machine of the diagram above: every transition is made here. */
static void watchdog_handle(rl_watchdog *wd, rl_watchdog_event event, int status)
{
    switch (event) {
    case RL_WATCHDOG_TICK:
        if (wd->cap_us != 0 && rl_now_us() >= wd->cap_us) {
            status = REDLOCK_EMAXHOLD;
            break;
        }
        if (wd->lock->busy != NULL) {
            schedule_retry(wd, 1); /* the holder's own operation is in flight */
            return;
        }
        status = watchdog_start_extension(wd);
        if (status == REDLOCK_OK) {
            wd->state = RL_WATCHDOG_EXTENDING;
            return;
        }
        if (status == REDLOCK_EEXPIRED)
            break;
        extension_failed(wd, status);
        return;
    case RL_WATCHDOG_EXTENDED:
        wd->extending = NULL;
        if (status == REDLOCK_ENOTOWNER || status == REDLOCK_EEXPIRED)
            break;
        wd->state = RL_WATCHDOG_WAITING;
        if (status == REDLOCK_OK) {
            wd->failures = 0;
            schedule_from_deadline(wd, false);
        } else {
            /* Masters unreachable for now. */
            rl_count(&wd->client->stats.auto_extend_failures);
            extension_failed(wd, status);
        }
        return;
    case RL_WATCHDOG_GUARD:
        if (rl_lock_deadline(wd->lock) - rl_now_us() > margin_us(wd)) {
            guard_follow(wd); /* extended meanwhile */
            return;
        }
        status = wd->last_failure;
        break;
    case RL_WATCHDOG_HOLDER:
        if (wd->state == RL_WATCHDOG_EXTENDING)
            return; /* our own extension: RL_WATCHDOG_EXTENDED follows */
        if (status == REDLOCK_OK) {
            wd->failures = 0;
            schedule_from_deadline(wd, false); /* maybe with a new TTL */
        } else {
            wd->last_failure = status;
            arm_guard(wd); /* the validity may have been cut */
        }
        return;
    }
    wd->state = RL_WATCHDOG_LOST;
    watchdog_lost(wd, status);
}

static void watchdog_on_extended(int status, const redlock_result *result, void *arg)
{
    rl_watchdog *wd = arg;
    if (status == REDLOCK_OK && rl_log_enabled(&wd->client->log, REDLOCK_LOG_DEBUG)) {
        char shown[RL_KEYS_DESCRIBED];
        rl_log(&wd->client->log, REDLOCK_LOG_DEBUG, "lock %s auto-extended: %lld ms of validity",
               rl_keys_describe(&wd->lock->keys, shown), (long long)result->validity_ms);
    }
    watchdog_handle(wd, RL_WATCHDOG_EXTENDED, status);
}

static void watchdog_handle_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
    watchdog_handle(w->data, RL_WATCHDOG_TICK, REDLOCK_OK);
}

static void watchdog_on_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
    redlock_client *client = ((rl_watchdog *)w->data)->client;
    rl_client_enter(client);
    watchdog_handle_tick(loop, w, revents);
    rl_client_leave(client);
}

static void watchdog_handle_guard(struct ev_loop *loop, ev_timer *w, int revents)
{
    watchdog_handle(w->data, RL_WATCHDOG_GUARD, REDLOCK_OK);
}

static void watchdog_on_guard(struct ev_loop *loop, ev_timer *w, int revents)
{
    redlock_client *client = ((rl_watchdog *)w->data)->client;
    rl_client_enter(client);
    watchdog_handle_guard(loop, w, revents);
    rl_client_leave(client);
}

void rl_watchdog_extended(redlock_lock *lock, const redlock_client *client, int status)
{
    rl_watchdog *wd = lock->watchdog;
    if (wd != NULL && wd->client->loop == client->loop) /* another loop is not ours to touch */
        watchdog_handle(wd, RL_WATCHDOG_HOLDER, status);
}

/* The smallest TTL the cycle keeps with drift_factor (watchdog_schedule.h);
 * -1 for none. */
static int64_t rl_auto_extend_min_ttl_ms(double drift_factor)
{
    return rl_wd_min_ttl_ms(rl_drift_us, drift_factor, rl_setting_table[REDLOCK_TTL_MS].max);
}

int redlock_auto_extend_min_ttl(const redlock_config *cfg, int64_t *ttl_ms)
{
    if (cfg == NULL || ttl_ms == NULL)
        return REDLOCK_EINVAL;
    *ttl_ms = rl_auto_extend_min_ttl_ms(cfg->drift_factor);
    return *ttl_ms > 0 ? REDLOCK_OK : REDLOCK_ECONFIG;
}

/* A TTL the cycle can never keep (it would run the holder's work and lose
 * the lock at the first guard) is refused, the reason logged. */
static int check_ttl_kept(redlock_client *client, const redlock_lock *lock)
{
    int64_t ttl = atomic_load(&lock->ttl_ms);
    if (ttl <= 0)
        ttl = rl_client_setting(client, REDLOCK_TTL_MS);
    int64_t min = rl_auto_extend_min_ttl_ms(client->cfg->drift_factor);
    if (min > 0 && ttl >= min)
        return REDLOCK_OK;
    char shown[RL_KEYS_DESCRIBED];
    if (min > 0)
        rl_log(&client->log, REDLOCK_LOG_WARN,
               "auto-extend %s: a TTL of %lld ms is too short to keep extended; the smallest "
               "that works is %lld ms (an extension every third of it, the lock lost a sixth "
               "of it before its validity ends)",
               rl_keys_describe(&lock->keys, shown), (long long)ttl, (long long)min);
    else
        rl_log(&client->log, REDLOCK_LOG_WARN,
               "auto-extend %s: no TTL can be kept extended with this drift_factor",
               rl_keys_describe(&lock->keys, shown));
    return REDLOCK_EINVAL;
}

static int auto_extend_start(redlock_client *client, redlock_lock *lock, redlock_lost_cb on_lost,
                             void *arg)
{
    if (client == NULL || lock == NULL || (lock->owner != NULL && lock->owner != client))
        return REDLOCK_EINVAL;
    if (client->closing)
        return REDLOCK_ECANCELED;
    if (lock->watchdog != NULL || lock->busy != NULL)
        return REDLOCK_EBUSY;
    int64_t deadline = rl_lock_deadline(lock);
    if (deadline == RL_DEADLINE_UNKNOWN)
        return REDLOCK_EINVAL; /* nothing known to extend: extend it once first */
    if (atomic_load(&lock->phase) != RL_LOCK_ACTIVE || deadline <= rl_now_us())
        return REDLOCK_EEXPIRED;

    rl_watchdog *wd = calloc(1, sizeof(*wd));
    if (wd == NULL)
        return REDLOCK_ENOMEM;
    wd->client = client;
    wd->lock = lock;
    wd->on_lost = on_lost;
    wd->arg = arg;
    wd->state = RL_WATCHDOG_WAITING;
    wd->last_failure = REDLOCK_ENOQUORUM;
    int64_t max_hold_ms = rl_client_setting(client, REDLOCK_MAX_HOLD_MS);
    if (max_hold_ms > 0)
        wd->cap_us = (lock->acquired_us != 0 ? lock->acquired_us : rl_now_us()) +
                     max_hold_ms * 1000;
    ev_timer_init(&wd->tick, watchdog_on_tick, 0., 0.);
    ev_timer_init(&wd->guard, watchdog_on_guard, 0., 0.);
    ev_set_priority(&wd->guard, RL_DEADLINE_PRIORITY); /* an extension's reply first */
    wd->tick.data = wd->guard.data = wd;
    if (lock->owner == NULL)
        rl_lock_register(client, lock);
    lock->watchdog = wd;
    client->watchdogs++;
    atomic_store(&lock->watched, true);
    schedule_from_deadline(wd, true);
    return REDLOCK_OK;
}

int redlock_auto_extend_async(redlock_client *client, redlock_lock *lock, redlock_lost_cb on_lost,
                              void *arg)
{
    if (client == NULL)
        return REDLOCK_EINVAL;
    rl_client_enter(client);
    int rc = lock == NULL ? REDLOCK_EINVAL : check_ttl_kept(client, lock);
    if (rc == REDLOCK_OK)
        rc = auto_extend_start(client, lock, on_lost, arg);
    rl_client_leave(client);
    return rc;
}
