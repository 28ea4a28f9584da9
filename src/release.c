/* Release: delete our value on every master, never another holder's. One
 * bounded attempt: per-master timeouts, no retries. */
#include "lock_op.h"
#include "scripts.h"

#include <stdlib.h>

static void release_on_decided(rl_round *round, void *owner)
{
    rl_lock_op *lop = owner;
    int status;
    if (rl_tally_verdict(&round->tally) == RL_QUORUM)
        /* Our value is gone from a quorum; if we deleted it nowhere, it had
         * already expired (or been replaced) before we came. */
        status = round->deleted > 0 ? REDLOCK_OK : REDLOCK_ENOTOWNER;
    else
        status = rl_tally_failure_status(&round->tally, REDLOCK_ENOTOWNER);
    rl_lock_op_complete(lop, status, 0, round->deleted);
}

int redlock_release_async(redlock_client *client, redlock_lock *lock, redlock_done_cb cb,
                          void *arg)
{
    int rc = rl_lock_op_check(client, lock);
    if (rc != REDLOCK_OK)
        return rc;
    rl_lock_op *lop = calloc(1, sizeof(*lop));
    if (lop == NULL)
        return REDLOCK_ENOMEM;
    char *cmd = NULL;
    int len = rl_format_release(&cmd, lock->resource, lock->resource_len, lock->value,
                                lock->value_len);
    rc = rl_lock_op_start(lop, client, lock, RL_ROUND_RELEASE, cmd, len, release_on_decided, cb,
                          arg);
    if (rc == REDLOCK_OK)
        rl_lock_set_deadline(lock, rl_now_us()); /* from now on, do not rely on it */
    return rc;
}
