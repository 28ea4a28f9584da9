/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The local queue: `run` calls on one host that wait for the same lock on
 * the same masters take turns on a local file lock (flock(2)) first, so
 * that one of them at a time asks the masters. Without it, every waiter
 * on the host is woken by each release and tries on every master, and
 * all but one fail: CPU on the host and the masters, taken from the
 * section that starts next. The masters still decide who holds the lock;
 * the queue only keeps a host's waiters from crowding them.
 *
 * A turn is waited for at most one TTL: a process that has the turn but
 * is stopped (SIGSTOP, ^Z) keeps it, and the lock it may hold expires
 * after that; the waiter then asks the masters as if there were no queue.
 *
 *   (new) --no file, a zero wait, an owner--> UNUSED
 *     |
 *     +--turn free--> HELD --local_queue_leave--> LEFT
 *     |                ^
 *     +--turn taken--> WAITING --the turn came---+
 *                         |
 *                         +--a TTL, the wait, or a signal--> GAVE_UP
 *                            (the waiting thread closes what it opened)
 */
#ifndef REDLOCK_TOOL_LOCAL_QUEUE_H
#define REDLOCK_TOOL_LOCAL_QUEUE_H

#include "cli.h"

#include <stdint.h>

typedef enum local_queue_state {
    LOCAL_QUEUE_UNUSED,
    LOCAL_QUEUE_WAITING,
    LOCAL_QUEUE_HELD,
    LOCAL_QUEUE_GAVE_UP,
    LOCAL_QUEUE_LEFT,
} local_queue_state;

struct local_queue_turn;

typedef struct local_queue {
    local_queue_state state;
    int fd;                        /* the queue's file while HELD, else -1 */
    struct local_queue_turn *turn; /* shared with the waiting thread */
    char path[128];                /* the queue's file, for messages */
} local_queue;

/* The queue's file for these resources on the config's masters:
 * DIR/redlock-HASH.lock, DIR being /run/lock where it can be written
 * (as flock(1) users have it), else $TMPDIR or /tmp. 0, or -1 when the
 * path does not fit. */
int local_queue_path(const redlock_config *cfg, const cli_resources *set, char *buf,
                     size_t len);

/*
 * Wait for this process's turn among the host's waiters for set, at most
 * max_ms (the smaller of the wait left and a TTL), running loop meanwhile
 * (the client connects as we wait). Returns early, state GAVE_UP, once
 * *interrupted is non-zero. Any failure to use the file leaves the queue
 * UNUSED: the run asks the masters directly, as without it.
 */
void local_queue_enter(local_queue *q, struct ev_loop *loop, const redlock_config *cfg,
                       const cli_resources *set, int64_t max_ms, const int *interrupted);

/* Give the turn to the next waiter (the lock was released, or not taken). */
void local_queue_leave(local_queue *q);

#endif
