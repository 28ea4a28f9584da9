/* SPDX-License-Identifier: BSD-3-Clause */
/* Extend: reset the TTL on every master that still holds our value; held
 * again when a quorum did so before the current validity ran out. A failed
 * extend may still have reset the TTL on masters that had not answered, so
 * it leaves the lock no more validity than the new TTL gives. */
#include "context/context.h"
#include "util/counters.h"
#include "config/config_internal.h"
#include "lock/lock.h"
#include "lock/round_op.h"
#include "lock/watchdog.h"
#include "redlock/redlock.h"
#include "round/quorum.h"
#include "util/log.h"
#include "util/util.h"
#include "wire/command.h"
#include "wire/resources.h"
#include "wire/server_info.h"

#include <stdlib.h>

typedef struct rl_extend {
    rl_round_op base; /* first */
    int64_t ttl_ms;
    bool had_deadline;        /* the lock's validity was known at the start */
    int64_t old_deadline_us;
} rl_extend;

/* When the keys set to this extend's TTL from start_us on may expire, less
 * the drift. */
static int64_t extend_deadline_from(const rl_extend *e, int64_t start_us)
{
    double drift = e->base.client->cfg->drift_factor;
    return start_us + e->ttl_ms * 1000 - rl_drift_us(e->ttl_ms, drift);
}

/* At the earliest, any master may have applied it from before the first
 * send on. */
static int64_t extend_new_deadline(const rl_extend *e, const rl_round *round)
{
    return extend_deadline_from(e, round->t0_us);
}

/* After a failure: masters that timed out (or were never heard) may apply
 * the new TTL later, so the lock is counted on no longer than that gives
 * (an unknown validity stays unknown). */
static void extend_limit_deadline(const rl_extend *e, redlock_lock *lock, const rl_round *round)
{
    int64_t deadline = rl_lock_deadline(lock);
    int64_t limit = extend_new_deadline(e, round);
    if (deadline != RL_DEADLINE_UNKNOWN && limit < deadline)
        rl_lock_set_deadline(lock, limit);
}

static void extend_on_decided(rl_round *round, void *owner)
{
    rl_extend *e = owner;
    redlock_lock *lock = e->base.use.lock;
    double drift = e->base.client->cfg->drift_factor;
    int64_t validity_ms = 0;
    int status;

    /* The quorum's keys live from their requests' sends on, however long
     * those waited to go out (a busy master's send queue). */
    int64_t start_us = rl_round_quorum_sent_us(round);
    if (rl_tally_verdict(&round->tally) == RL_QUORUM) {
        int64_t elapsed_us = round->decided_us - start_us;
        validity_ms = rl_validity_us(e->ttl_ms, elapsed_us, drift) / 1000;
        if (e->had_deadline && round->decided_us >= e->old_deadline_us)
            status = REDLOCK_EEXPIRED; /* the quorum came too late to count */
        else
            status = validity_ms > 0 ? REDLOCK_OK : REDLOCK_EEXPIRED;
    } else {
        status = rl_tally_failure_status(&round->tally, REDLOCK_ENOTOWNER);
    }
    /* Lost while the extension was in flight (a clock verdict, the
     * auto-extension giving up): its keys are being released, and a lost
     * lock stays lost, whatever the masters said before the release. */
    bool lost = lock != NULL && atomic_load(&lock->phase) != RL_LOCK_ACTIVE;
    if (lost)
        status = REDLOCK_EEXPIRED;
    if (status != REDLOCK_OK)
        validity_ms = 0;
    if (lock != NULL && !lost) {
        if (status == REDLOCK_OK) {
            rl_lock_set_deadline(lock, extend_deadline_from(e, start_us));
            atomic_store(&lock->ttl_ms, e->ttl_ms);
            rl_lock_set_holders(lock, round->holders);
        } else if (status == REDLOCK_ENOTOWNER) {
            rl_lock_set_deadline(lock, round->decided_us); /* lost */
        } else {
            extend_limit_deadline(e, lock, round);
        }
        rl_watchdog_extended(lock, e->base.client, status);
    }
    redlock_client *client = e->base.client;
    rl_count(status == REDLOCK_OK ? &client->stats.extends : &client->stats.extend_failures);
    if (lock != NULL && rl_log_enabled(&client->log, REDLOCK_LOG_DEBUG)) {
        char shown[RL_KEYS_DESCRIBED];
        rl_log(&client->log, REDLOCK_LOG_DEBUG, "extend %s: %s (%lld ms of validity)",
               rl_keys_describe(&lock->keys, shown), redlock_strerror(status),
               (long long)validity_ms);
    }
    rl_round_op_complete(&e->base, status, validity_ms, round->tally.ok);
}

/* Cut short by the client's free: the commands may be out already. */
static void extend_cancel(rl_op *op)
{
    rl_extend *e = (rl_extend *)op;
    if (e->base.use.lock != NULL)
        extend_limit_deadline(e, e->base.use.lock, e->base.round);
    rl_round_op_complete(&e->base, REDLOCK_ECANCELED, 0, 0);
}

static int extend_start(redlock_client *client, redlock_lock *lock, int64_t ttl_ms,
                        redlock_done_cb cb, void *arg)
{
    int rc = rl_round_op_check_lock(client, lock);
    if (rc != REDLOCK_OK)
        return rc;
    if (cb == NULL || ttl_ms < 0 || ttl_ms > INT32_MAX)
        return REDLOCK_EINVAL;
    int64_t deadline = rl_lock_deadline(lock);
    bool known = deadline != RL_DEADLINE_UNKNOWN;
    if ((known && rl_now_us() >= deadline) || atomic_load(&lock->phase) != RL_LOCK_ACTIVE)
        return REDLOCK_EEXPIRED;

    rl_extend *e = calloc(1, sizeof(*e));
    if (e == NULL)
        return REDLOCK_ENOMEM;
    int64_t lock_ttl = atomic_load(&lock->ttl_ms);
    e->ttl_ms = ttl_ms       ? ttl_ms
                : lock_ttl ? lock_ttl
                           : rl_client_setting(client, REDLOCK_TTL_MS);
    if (rl_config_check_ttl(client->cfg, e->ttl_ms) != REDLOCK_OK) {
        free(e);
        return REDLOCK_EMAXTTL;
    }
    e->base.op.cancel = extend_cancel;
    e->had_deadline = known;
    e->old_deadline_us = deadline;
    /* The keys keep the lock delay they were acquired with; validity counts
     * from the TTL alone. */
    int64_t delay_ms =
        lock->delay_ms >= 0 ? lock->delay_ms : rl_client_setting(client, REDLOCK_LOCK_DELAY_MS);
    rl_command cmd;
    rl_command_extend(&cmd, &lock->keys, lock->value, lock->value_len, e->ttl_ms + delay_ms,
                      lock->fencing_token != 0);
    /* Masters that have SET IFEQ extend a plain key without the script
     * (docs/servers.md): the same outcome, less of their CPU. */
    rl_plain plain;
    if (lock->plain_key && rl_client_setting(client, REDLOCK_SCRIPT_FREE) != 0) {
        rl_plain_extend(&plain, lock->keys.data, lock->keys.len, lock->value, lock->value_len,
                        e->ttl_ms + delay_ms);
        cmd.plain = &plain;
    }
    /* Waiting for room to be sent is of use until the lock runs out. */
    if (known)
        cmd.urgent_by_us = deadline;
    return rl_round_op_start(&e->base, client, lock, RL_ROUND_EXTEND, &cmd, extend_on_decided, cb,
                             arg);
}

int redlock_extend_async(redlock_client *client, redlock_lock *lock, int64_t ttl_ms,
                         redlock_done_cb cb, void *arg)
{
    if (client == NULL)
        return REDLOCK_EINVAL;
    rl_client_enter(client);
    int rc = extend_start(client, lock, ttl_ms, cb, arg);
    rl_client_leave(client);
    return rc;
}
