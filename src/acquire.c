/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Acquire: attempts of SET resource value NX PX ttl on every master.
 *
 *   ATTEMPT --quorum, validity left--> DONE (the lock)
 *      |
 *      +-- no quorum, or expired --> clean up --> WAIT (delay + jitter) --> ATTEMPT
 *      |                                 \--> DONE (failure): no retry or time left
 *      +-- out of memory, or canceled --> clean up --> DONE (failure)
 *   WAIT --canceled, or the next attempt cannot start--> DONE (failure)
 *
 * Cleaning up leaves nothing of the attempt behind: the SETs still queued
 * behind a handshake are withdrawn, and every master that may hold the
 * value (it said OK, in time or late; its SET is in flight; or its
 * connection was lost with the SET unanswered) gets a release, at once or
 * when it reconnects (owed_release.h).
 *
 * Each attempt has its own random value and its own clock: elapsed time and
 * validity count from before that attempt's first send, never from the
 * first attempt, so a lock returned after retries is never already expired.
 */
#include "internal.h"
#include "random.h"
#include "timer.h"

#include <stdlib.h>
#include <string.h>

typedef enum rl_acquire_state {
    RL_ACQUIRE_ATTEMPT, /* a->round is in flight, undecided */
    RL_ACQUIRE_WAIT,    /* between attempts: the retry timer runs */
    RL_ACQUIRE_DONE     /* the callback was called; a is freed */
} rl_acquire_state;

typedef struct rl_acquire {
    rl_op op; /* first */
    redlock_client *client;
    redlock_acquire_cb cb;
    void *arg;
    rl_acquire_state state;
    int64_t ttl_ms;
    int64_t retries_left;
    int64_t retry_delay_ms;
    int64_t retry_jitter_ms;
    int64_t wait_ms;        /* -1: no time limit */
    int64_t start_us;
    unsigned attempts;
    rl_round *round;        /* the current or last attempt (a reference) */
    ev_timer retry_timer;
    char value[REDLOCK_VALUE_LEN + 1];
    size_t resource_len;
    char resource[];
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
        rl_owed_release_send(a->client, a->resource, a->resource_len, a->value,
                             REDLOCK_VALUE_LEN, target, a->ttl_ms);
}

/* The one place the state changes. Leaving an attempt other than with a
 * lock (failed or canceled) cleans it up. */
static void acquire_set_state(rl_acquire *a, rl_acquire_state next, bool locked)
{
    if (a->state == RL_ACQUIRE_ATTEMPT && next != RL_ACQUIRE_ATTEMPT && !locked)
        acquire_clean_up(a);
    a->state = next;
}

/* DONE: call back with the outcome and free a. */
static void acquire_complete(rl_acquire *a, int status, redlock_lock *lock, int64_t validity_ms)
{
    acquire_set_state(a, RL_ACQUIRE_DONE, lock != NULL);
    redlock_client *client = a->client;
    rl_result_info info = {
        .status = status,
        .round = a->round,
        .validity_ms = validity_ms,
        .total_us = rl_now_us() - a->start_us,
        .attempts = a->attempts,
        .masters_locked = a->round ? a->round->tally.ok : 0,
    };
    redlock_master_result masters[REDLOCK_MAX_NODES];
    redlock_result result;
    rl_result_view(&result, masters, client, &info);

    rl_client_remove_op(&a->op);
    ev_timer_stop(client->loop, &a->retry_timer);
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

/* ATTEMPT: a fresh value, sent to every master. Returns the status when it
 * cannot start (the state is unchanged then). */
static int acquire_attempt(rl_acquire *a)
{
    if (rl_random_pool_value(&a->client->random, a->value) != 0)
        return REDLOCK_ESYS;
    rl_command cmd;
    rl_command_acquire(&cmd, a->resource, a->resource_len, a->value, REDLOCK_VALUE_LEN,
                       a->ttl_ms);
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

static void acquire_on_retry_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    rl_acquire *a = w->data;
    int rc = acquire_attempt(a);
    if (rc != REDLOCK_OK)
        acquire_complete(a, rc, NULL, 0);
}

/* After a failed attempt: WAIT and try again, or DONE with status. */
static void acquire_retry_or_fail(rl_acquire *a, int status)
{
    if (a->retries_left > 0) {
        int64_t delay_ms = a->retry_delay_ms + rl_random_jitter(a->retry_jitter_ms);
        int64_t next_start_us = rl_now_us() + delay_ms * 1000;
        if (a->wait_ms < 0 || next_start_us - a->start_us <= a->wait_ms * 1000) {
            a->retries_left--;
            acquire_set_state(a, RL_ACQUIRE_WAIT, false);
            rl_timer_arm_at(a->client->loop, &a->retry_timer, next_start_us);
            return;
        }
    }
    acquire_complete(a, status, NULL, 0);
}

static void acquire_on_decided(rl_round *round, void *owner)
{
    rl_acquire *a = owner;
    redlock_client *client = a->client;
    double drift = client->cfg->drift_factor;
    int status;

    rl_round_detach(round, true); /* a->round keeps the reference */
    if (rl_tally_verdict(&round->tally) == RL_QUORUM) {
        int64_t elapsed_us = round->decided_us - round->t0_us;
        int64_t validity_ms = rl_validity_us(a->ttl_ms, elapsed_us, drift) / 1000;
        if (validity_ms > 0) {
            redlock_lock *lock = rl_lock_create(a->resource, a->resource_len, a->value,
                                                REDLOCK_VALUE_LEN, a->ttl_ms);
            if (lock != NULL) {
                rl_lock_set_deadline(lock, round->t0_us + a->ttl_ms * 1000 -
                                               rl_drift_us(a->ttl_ms, drift));
                rl_lock_register(client, lock);
                acquire_complete(a, REDLOCK_OK, lock, validity_ms);
                return;
            }
            acquire_complete(a, REDLOCK_ENOMEM, NULL, 0);
            return;
        }
        status = REDLOCK_EEXPIRED;
    } else {
        status = rl_tally_failure_status(&round->tally, REDLOCK_ECONFLICT);
    }
    rl_log(&client->log, REDLOCK_LOG_DEBUG, "acquire attempt %u: %s (%u of %u masters said OK)",
           a->attempts, redlock_strerror(status), round->tally.ok, (unsigned)round->n);
    acquire_retry_or_fail(a, status);
}

static void acquire_cancel(rl_op *op)
{
    acquire_complete((rl_acquire *)op, REDLOCK_ECANCELED, NULL, 0);
}

int redlock_acquire_async(redlock_client *client, const void *resource, size_t resource_len,
                          const redlock_acquire_options *opts, redlock_acquire_cb cb, void *arg)
{
    if (client == NULL || cb == NULL || !rl_resource_valid(resource, resource_len))
        return REDLOCK_EINVAL;
    if (client->closing)
        return REDLOCK_ECANCELED;
    redlock_acquire_options defaults;
    if (opts == NULL) {
        redlock_acquire_options_init(&defaults);
        opts = &defaults;
    }
    int64_t ttl_ms = option_or_default(opts->ttl_ms, client, REDLOCK_TTL_MS);
    int64_t retries = option_or_default(opts->retry_count, client, REDLOCK_RETRY_COUNT);
    int64_t delay_ms = option_or_default(opts->retry_delay_ms, client, REDLOCK_RETRY_DELAY_MS);
    int64_t jitter_ms = option_or_default(opts->retry_jitter_ms, client, REDLOCK_RETRY_JITTER_MS);
    int64_t wait_ms = opts->wait_ms;
    if (ttl_ms < 0 || retries < 0 || delay_ms < 0 || jitter_ms < 0 ||
        (wait_ms != REDLOCK_DEFAULT && (wait_ms < 0 || wait_ms > INT64_MAX / 1000)))
        return REDLOCK_EINVAL;

    rl_acquire *a = calloc(1, sizeof(*a) + resource_len);
    if (a == NULL)
        return REDLOCK_ENOMEM;
    a->op.cancel = acquire_cancel;
    a->client = client;
    a->cb = cb;
    a->arg = arg;
    a->ttl_ms = ttl_ms;
    a->retries_left = retries;
    a->retry_delay_ms = delay_ms;
    a->retry_jitter_ms = jitter_ms;
    a->wait_ms = wait_ms == REDLOCK_DEFAULT ? -1 : wait_ms;
    a->start_us = rl_now_us();
    a->resource_len = resource_len;
    memcpy(a->resource, resource, resource_len);
    ev_timer_init(&a->retry_timer, acquire_on_retry_timer, 0., 0.);
    a->retry_timer.data = a;
    a->state = RL_ACQUIRE_WAIT; /* before the first attempt, as between two */

    int rc = acquire_attempt(a);
    if (rc != REDLOCK_OK) {
        free(a);
        return rc;
    }
    rl_client_add_op(client, &a->op);
    return REDLOCK_OK;
}
