/* SPDX-License-Identifier: BSD-3-Clause */
/* Release: delete our value on every master, never another holder's. One
 * bounded attempt: per-master timeouts, no retries. */
#include "round_op.h"

#include <stdlib.h>

static void release_on_decided(rl_round *round, void *owner)
{
    rl_round_op *op = owner;
    int status;
    if (rl_tally_verdict(&round->tally) == RL_QUORUM)
        /* Our value is gone from a quorum; if we deleted it nowhere, it had
         * already expired (or been replaced) before we came. */
        status = round->deleted > 0 ? REDLOCK_OK : REDLOCK_ENOTOWNER;
    else
        status = rl_tally_failure_status(&round->tally, REDLOCK_ENOTOWNER);
    rl_round_op_complete(op, status, 0, round->deleted);
}

/* The handle is given up: no validity left, in state RELEASED. */
static void lock_mark_released(redlock_lock *lock)
{
    rl_lock_set_deadline(lock, rl_now_us());
    atomic_store(&lock->phase, RL_LOCK_RELEASED);
}

int redlock_release_async(redlock_client *client, redlock_lock *lock, redlock_done_cb cb,
                          void *arg)
{
    if (client == NULL || lock == NULL)
        return REDLOCK_EINVAL;
    if (client->closing)
        return REDLOCK_ECANCELED;
    /* Releasing ends auto-extension, even an extension in flight; any other
     * operation in flight on the handle refuses it. */
    if (lock->busy != NULL && !rl_watchdog_is_extending(lock))
        return REDLOCK_EBUSY;
    /* Everything that can fail comes before anything is stopped. */
    rl_round_op *op = calloc(1, sizeof(*op));
    if (op == NULL)
        return REDLOCK_ENOMEM;
    rl_command cmd;
    rl_command_release(&cmd, lock->resource, lock->resource_len, lock->value, lock->value_len);
    int rc = rl_round_op_start(op, client, NULL, RL_ROUND_RELEASE, &cmd, release_on_decided, cb,
                               arg);
    if (rc != REDLOCK_OK)
        return rc;
    rl_watchdog_stop(lock); /* gives the handle back if its extension had it */
    rl_lock_claim(lock, &op->use);
    lock_mark_released(lock);
    return REDLOCK_OK;
}

/* Send the release without waiting for it; false when out of memory. */
static bool release_send(redlock_client *client, const void *resource, size_t resource_len,
                         const char *value, size_t value_len, const bool *target)
{
    rl_command cmd;
    rl_command_release(&cmd, resource, resource_len, value, value_len);
    rl_round *round = rl_round_start(client, RL_ROUND_RELEASE, &cmd, target, NULL, NULL);
    if (round == NULL)
        return false;
    rl_round_detach(round, false);
    return true;
}

static void log_unsent(redlock_client *client, unsigned unsent)
{
    rl_log(&client->log, REDLOCK_LOG_ERROR,
           "out of memory releasing %u lock%s; %s keys expire after their TTL", unsent,
           unsent == 1 ? "" : "s", unsent == 1 ? "its" : "their");
}

void rl_release_unattended(redlock_client *client, const void *resource, size_t resource_len,
                           const char *value, size_t value_len, const bool *target)
{
    if (!release_send(client, resource, resource_len, value, value_len, target))
        log_unsent(client, 1);
}

typedef struct release_all {
    redlock_client *client;
    unsigned unsent;
} release_all;

/* One of the client's locks, with the ownership mutex held: nothing here
 * may call back into the program, so failures are logged afterwards. */
static void release_owned(redlock_lock *lock, void *arg)
{
    release_all *all = arg;
    rl_watchdog_stop(lock);
    if (atomic_load(&lock->phase) == RL_LOCK_RELEASED)
        return;
    if (!release_send(all->client, lock->resource, lock->resource_len, lock->value,
                      lock->value_len, NULL))
        all->unsent++;
    lock_mark_released(lock);
}

void rl_release_owned_locks(redlock_client *client)
{
    release_all all = {client, 0};
    rl_lock_disown_all(client, release_owned, &all);
    if (all.unsent > 0)
        log_unsent(client, all.unsent);
}
