/* What extend and release share: one round on a lock handle. */
#include "lock_op.h"

#include <hiredis/hiredis.h>
#include <stdlib.h>

static void lock_op_cancel(rl_op *op)
{
    rl_lock_op_complete((rl_lock_op *)op, REDLOCK_ECANCELED, 0, 0);
}

int rl_lock_op_check(redlock_client *client, redlock_lock *lock)
{
    if (client == NULL || lock == NULL)
        return REDLOCK_EINVAL;
    if (client->closing)
        return REDLOCK_ECANCELED;
    if (lock->busy != NULL)
        return REDLOCK_EBUSY;
    return REDLOCK_OK;
}

int rl_lock_op_start(rl_lock_op *lop, redlock_client *client, redlock_lock *lock,
                     rl_round_kind kind, char *cmd, int cmd_len, rl_round_decided_fn on_decided,
                     redlock_done_cb cb, void *arg)
{
    if (cmd_len < 0) {
        free(lop);
        return REDLOCK_ENOMEM;
    }
    lop->client = client;
    lop->cb = cb;
    lop->arg = arg;
    lop->start_us = rl_now_us();
    lop->op.cancel = lock_op_cancel;
    lop->round = rl_round_start(client, kind, cmd, (size_t)cmd_len, NULL, on_decided, lop);
    if (lop->round == NULL) {
        free(lop);
        return REDLOCK_ENOMEM;
    }
    rl_lock_claim(lock, &lop->use);
    rl_client_add_op(client, &lop->op);
    return REDLOCK_OK;
}

void rl_lock_op_complete(rl_lock_op *lop, int status, int64_t validity_ms,
                         unsigned masters_locked)
{
    redlock_client *client = lop->client;
    rl_result_info info = {
        .status = status,
        .round = lop->round,
        .validity_ms = validity_ms,
        .total_us = rl_now_us() - lop->start_us,
        .attempts = 1,
        .masters_locked = masters_locked,
    };
    redlock_result fallback;
    redlock_result *result = lop->cb ? rl_result_build(client, &info, &fallback) : NULL;

    rl_client_remove_op(&lop->op);
    rl_lock_unclaim(&lop->use);
    rl_round_detach(lop->round, false);
    redlock_done_cb cb = lop->cb;
    void *arg = lop->arg;
    free(lop);
    if (cb != NULL)
        cb(status, result, arg);
    rl_result_discard(result, &fallback);
}
