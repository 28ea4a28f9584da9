/* What extend and release share: one round on a lock handle, completed
 * through a redlock_done_cb. */
#ifndef REDLOCK_LOCK_OP_H
#define REDLOCK_LOCK_OP_H

#include "internal.h"

typedef struct rl_lock_op {
    rl_op op;               /* first: the client's list, and free() */
    redlock_client *client;
    redlock_done_cb cb;     /* may be NULL for release */
    void *arg;
    rl_lock_use use;        /* the handle, NULL once the user freed it */
    rl_round *round;
    int64_t start_us;
} rl_lock_op;

/*
 * Check the common arguments, claim lock for the operation and start a round
 * of kind with cmd (formatted; taken over in every case). lop was allocated
 * by the caller with its own struct around it; on error it is freed and the
 * status returned (the callback will not be called).
 */
int rl_lock_op_start(rl_lock_op *lop, redlock_client *client, redlock_lock *lock,
                     rl_round_kind kind, char *cmd, int cmd_len, rl_round_decided_fn on_decided,
                     redlock_done_cb cb, void *arg);
/* Report status to the user's callback and free the operation. */
void rl_lock_op_complete(rl_lock_op *lop, int status, int64_t validity_ms,
                         unsigned masters_locked);
/* Validate what every lock operation needs before allocating anything. */
int rl_lock_op_check(redlock_client *client, redlock_lock *lock);

#endif
