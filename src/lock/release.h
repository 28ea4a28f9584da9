/* SPDX-License-Identifier: BSD-3-Clause */
/* Releases without a callback: lost locks, cleanups, a client's locks
 * when it is freed (release.c). */
#ifndef REDLOCK_RELEASE_H
#define REDLOCK_RELEASE_H

#include "redlock/redlock.h"
#include "wire/resources.h"

#include <stdbool.h>
#include <stddef.h>

/* Release a lost lock's keys on every master, no callback (with the
 * ownership mutex held too: failures are only counted, in *unsent). */
void rl_release_lost(redlock_client *client, const redlock_lock *lock, unsigned *unsent);
/* Release value on every master (or those with target[i]) without waiting
 * for the outcome: what cannot be released expires after its TTL. */
void rl_release_unattended(redlock_client *client, const rl_keys *keys, const char *value,
                           size_t value_len, const bool *target);
/* Release every lock the client acquired and still holds, and forget them
 * (their handles stay valid, RELEASED). For a client being freed. */
void rl_release_owned_locks(redlock_client *client);

#endif
