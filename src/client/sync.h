/* SPDX-License-Identifier: BSD-3-Clause */
/* The blocking client's hooks for the layers below (sync.c). */
#ifndef REDLOCK_SYNC_H
#define REDLOCK_SYNC_H

#include "redlock/redlock.h"

#include <pthread.h>
#include <stdbool.h>

/* Blocking-client hooks for handles freed on a caller's thread. */
bool rl_sync_on_io_thread(const redlock_sync *sync);
/* Have the thread running the loop destroy the lock, and wait for it. Called with held
 * (the ownership mutex) locked, which keeps sync allocated: its client
 * cannot let go of the lock meanwhile. held is unlocked once the request is
 * queued. REDLOCK_ECANCELED: the client is being freed and lets go of the
 * lock itself; the lock is left alone. */
int rl_sync_destroy_lock(redlock_sync *sync, redlock_lock *lock, pthread_mutex_t *held);

/* Who runs a blocking client's loop at the moment; for tests. */
typedef enum rl_sync_runner {
    RL_SYNC_RUNNER_IO_THREAD,
    RL_SYNC_RUNNER_CALLER,  /* a calling thread, for its own call */
    RL_SYNC_RUNNER_NOBODY,  /* parked, replies or timers outstanding */
    RL_SYNC_RUNNER_IDLE     /* parked, nothing outstanding */
} rl_sync_runner;
rl_sync_runner rl_sync_loop_runner(redlock_sync *sync);

#endif
