/* SPDX-License-Identifier: BSD-3-Clause */
/* An operation that is one round: extend, release, inspect, ping. It may
 * work on a lock handle, and completes through a redlock_done_cb. */
#ifndef REDLOCK_ROUND_OP_H
#define REDLOCK_ROUND_OP_H

#include "context/context.h"
#include "lock/lock.h"
#include "redlock/redlock.h"
#include "round/quorum.h"
#include "wire/command.h"

typedef struct rl_round_op {
    rl_op op;           /* first: the client's list, and free() */
    redlock_client *client;
    redlock_done_cb cb; /* NULL: nobody wants the outcome */
    void *arg;
    rl_lock_use use;    /* the handle, NULL once freed (or without one) */
    rl_round *round;
    int64_t start_us;
} rl_round_op;

/*
 * Claim lock (may be NULL) for the operation and start a round of kind
 * sending cmd. op was allocated by the caller, possibly inside a larger
 * struct, zeroed but for op->op.cancel, which may be set to replace the
 * default (complete with REDLOCK_ECANCELED). On error op is freed and the
 * status returned, and the callback will not be called.
 */
int rl_round_op_start(rl_round_op *op, redlock_client *client, redlock_lock *lock,
                      rl_round_kind kind, const rl_command *cmd, rl_round_decided_fn on_decided,
                      redlock_done_cb cb, void *arg);
/* Report status to the callback (if any) and free the operation. */
void rl_round_op_complete(rl_round_op *op, int status, int64_t validity_ms,
                          unsigned masters_locked);
/* What every operation on a lock checks before allocating anything. */
int rl_round_op_check_lock(redlock_client *client, redlock_lock *lock);

#endif
