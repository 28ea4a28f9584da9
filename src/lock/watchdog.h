/* SPDX-License-Identifier: BSD-3-Clause */
/* Auto-extension of held locks (watchdog.c). */
#ifndef REDLOCK_WATCHDOG_H
#define REDLOCK_WATCHDOG_H

#include "redlock/redlock.h"

#include <stdbool.h>

/* Stop the lock's auto-extension, if any, abandoning an extension in flight
 * (it completes without touching the lock). */
void rl_watchdog_stop(redlock_lock *lock);
/* Whether the operation in flight on the lock is its auto-extension's. */
bool rl_watchdog_is_extending(const redlock_lock *lock);
/* The lock is lost for status, now: its auto-extension stops, it is
 * marked lost and its lost callback runs (which may free the client). */
void rl_watchdog_lose(redlock_lock *lock, int status);
/* An extend on client completed with status and set the lock's deadline:
 * its auto-extension, if any, follows the new deadline. */
void rl_watchdog_extended(redlock_lock *lock, const redlock_client *client, int status);

#endif
