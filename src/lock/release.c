/* SPDX-License-Identifier: BSD-3-Clause */
/* Release: delete our value on every master, never another holder's. One
 * bounded attempt: per-master timeouts, no retries. */
#include "lock/release.h"
#include "context/context.h"
#include "util/counters.h"
#include "lock/courtesy.h"
#include "lock/lock.h"
#include "lock/round_op.h"
#include "lock/watchdog.h"
#include "master/subscriber.h"
#include "redlock/redlock.h"
#include "round/quorum.h"
#include "util/log.h"
#include "util/util.h"
#include "wire/command.h"
#include "wire/resources.h"

#include <stdlib.h>
#include <string.h>

/* The shortest head start waiters get: their wake-up and SETs cost a few
 * hundred microseconds even on loopback. */
#define RL_COURTESY_MIN_US 1000

/* A release, with its resources: the handle may be freed before the
 * decision. */
typedef struct rl_release_op {
    rl_round_op round_op; /* first: freed with it */
    rl_keys keys;         /* data in block[] */
    char block[];
} rl_release_op;

/* Others heard the release announced: this client's next acquire of the
 * resource lets them go first (courtesy.h): for as many round trips as
 * their spread wake-ups take, and two more for their requests. */
static void release_note_waiters(const rl_release_op *op, const rl_round *round)
{
    redlock_client *client = op->round_op.client;
    /* A release of several resources counts the most listeners of one;
     * its first resource's watch stands for ours. */
    const char *first;
    size_t first_len;
    first = rl_keys_at(&op->keys, 0, &first_len);
    bool others = false;
    for (size_t i = 0; i < round->n && !others; i++) {
        bool ours = rl_watch_may_hear(client, first, first_len, i);
        others = round->slots[i].listeners > (ours ? 1 : 0);
    }
    if (!others)
        return;
    int64_t courtesy_us = (RL_SPREAD_RTTS + 2) * (round->decided_us - round->t0_us);
    int64_t max_us = rl_client_setting(client, REDLOCK_COMMAND_TIMEOUT_MS) * 1000;
    if (courtesy_us < RL_COURTESY_MIN_US)
        courtesy_us = RL_COURTESY_MIN_US;
    if (courtesy_us > max_us)
        courtesy_us = max_us;
    size_t pos = 0;
    const char *resource;
    size_t len;
    while (rl_keys_next(&op->keys, &pos, &resource, &len))
        rl_courtesy_note(&client->courtesy, resource, len, round->decided_us + courtesy_us);
}

static void release_on_decided(rl_round *round, void *owner)
{
    rl_round_op *op = owner;
    int status;
    if (round->deleted > 0)
        release_note_waiters((rl_release_op *)op, round);
    if (rl_tally_verdict(&round->tally) == RL_QUORUM)
        /* Our value is gone from a quorum; if we deleted it nowhere, it had
         * already expired (or been replaced) before we came. */
        status = round->deleted > 0 ? REDLOCK_OK : REDLOCK_ENOTOWNER;
    else
        status = rl_tally_failure_status(&round->tally, REDLOCK_ENOTOWNER);
    rl_count(status == REDLOCK_OK ? &op->client->stats.releases
                                  : &op->client->stats.release_failures);
    if (rl_log_enabled(&op->client->log, REDLOCK_LOG_INFO)) {
        char shown[RL_KEYS_DESCRIBED];
        rl_log(&op->client->log, REDLOCK_LOG_INFO, "release %s: %s",
               rl_keys_describe(&((rl_release_op *)op)->keys, shown), redlock_strerror(status));
    }
    rl_round_op_complete(op, status, 0, round->deleted);
}

/* The handle is given up: no validity left, in state RELEASED. The phase
 * goes first: a reader that finds the validity gone looks at the phase
 * again (redlock_lock_state), and so never sees EXPIRED on the way. */
static void lock_mark_released(redlock_lock *lock)
{
    rl_lock_end_hold(lock);
    atomic_store(&lock->phase, RL_LOCK_RELEASED);
    rl_lock_set_deadline(lock, rl_now_us());
}

static int release_start(redlock_client *client, redlock_lock *lock, redlock_done_cb cb,
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
    rl_release_op *release = calloc(1, sizeof(*release) + lock->keys.len);
    if (release == NULL)
        return REDLOCK_ENOMEM;
    memcpy(release->block, lock->keys.data, lock->keys.len);
    release->keys = lock->keys;
    release->keys.data = release->block;
    rl_round_op *op = &release->round_op;
    rl_command cmd;
    rl_command_release(&cmd, &lock->keys, lock->value, lock->value_len, lock->fencing_token != 0);
    /* Masters that have DELIFEQ or DELEX release a plain key without the
     * script (docs/servers.md): the same outcome, less of their CPU. */
    rl_plain plain;
    if (lock->plain_key && rl_client_setting(client, REDLOCK_SCRIPT_FREE) != 0) {
        rl_plain_release(&plain, lock->keys.data, lock->keys.len, lock->value, lock->value_len);
        cmd.plain = &plain;
    }
    int rc = rl_round_op_start(op, client, NULL, RL_ROUND_RELEASE, &cmd, release_on_decided, cb,
                               arg);
    if (rc != REDLOCK_OK)
        return rc;
    rl_watchdog_stop(lock); /* gives the handle back if its extension had it */
    rl_lock_claim(lock, &op->use);
    lock_mark_released(lock);
    return REDLOCK_OK;
}

int redlock_release_async(redlock_client *client, redlock_lock *lock, redlock_done_cb cb,
                          void *arg)
{
    if (client == NULL)
        return REDLOCK_EINVAL;
    rl_client_enter(client);
    int rc = release_start(client, lock, cb, arg);
    rl_client_leave(client);
    return rc;
}

/* Send the release without waiting for it; false when out of memory. */
static bool release_send(redlock_client *client, const rl_keys *keys, const char *value,
                         size_t value_len, bool fenced, const bool *target)
{
    rl_command cmd;
    rl_command_release(&cmd, keys, value, value_len, fenced);
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

void rl_release_lost(redlock_client *client, const redlock_lock *lock, unsigned *unsent)
{
    if (!release_send(client, &lock->keys, lock->value, lock->value_len,
                      lock->fencing_token != 0, NULL))
        (*unsent)++;
}

void rl_release_unattended(redlock_client *client, const rl_keys *keys, const char *value,
                           size_t value_len, const bool *target)
{
    if (!release_send(client, keys, value, value_len, false, target))
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
    if (!release_send(all->client, &lock->keys, lock->value, lock->value_len,
                      lock->fencing_token != 0, NULL))
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
