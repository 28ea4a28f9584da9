/* SPDX-License-Identifier: BSD-3-Clause */
/* An operation that is one round: extend, release, inspect, ping. */
#include "lock/round_op.h"
#include "context/context.h"
#include "lock/lock.h"
#include "lock/result.h"
#include "redlock/redlock.h"
#include "round/quorum.h"
#include "util/util.h"
#include "wire/command.h"

#include <stdlib.h>

static void round_op_cancel(rl_op *op)
{
    rl_round_op_complete((rl_round_op *)op, REDLOCK_ECANCELED, 0, 0);
}

int rl_round_op_check_lock(redlock_client *client, redlock_lock *lock)
{
    if (client == NULL || lock == NULL)
        return REDLOCK_EINVAL;
    if (client->closing)
        return REDLOCK_ECANCELED;
    if (lock->busy != NULL)
        return REDLOCK_EBUSY;
    return REDLOCK_OK;
}

int rl_round_op_start(rl_round_op *op, redlock_client *client, redlock_lock *lock,
                      rl_round_kind kind, const rl_command *cmd, rl_round_decided_fn on_decided,
                      redlock_done_cb cb, void *arg)
{
    op->client = client;
    op->cb = cb;
    op->arg = arg;
    op->start_us = rl_now_us();
    if (op->op.cancel == NULL) /* the operation may bring its own */
        op->op.cancel = round_op_cancel;
    op->round = rl_round_start(client, kind, cmd, NULL, on_decided, op);
    if (op->round == NULL) {
        free(op);
        return REDLOCK_ENOMEM;
    }
    if (lock != NULL)
        rl_lock_claim(lock, &op->use);
    rl_client_add_op(client, &op->op);
    return REDLOCK_OK;
}

void rl_round_op_complete(rl_round_op *op, int status, int64_t validity_ms,
                          unsigned masters_locked)
{
    redlock_client *client = op->client;
    rl_result_info info = {
        .status = status,
        .round = op->round,
        .validity_ms = validity_ms,
        .total_us = rl_now_us() - op->start_us,
        .attempts = 1,
        .masters_locked = masters_locked,
    };
    /* Here, not in the branch: result points into masters until cb returns. */
    /* cppcheck-suppress variableScope */
    redlock_master_result masters[REDLOCK_MAX_NODES];
    redlock_result result;
    if (op->cb != NULL)
        rl_result_view(&result, masters, client, &info);

    rl_client_remove_op(&op->op);
    rl_lock_unclaim(&op->use);
    rl_round *round = op->round; /* the result points into it: kept until after cb */
    rl_round_detach(round, true);
    redlock_done_cb cb = op->cb;
    void *arg = op->arg;
    free(op);
    if (cb != NULL)
        cb(status, &result, arg);
    rl_round_unref(round);
}
