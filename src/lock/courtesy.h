/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Letting waiters go first. A client that releases a lock while others
 * wait for it (its announcement reached subscribers other than its own)
 * would win the next round against them if it asked again at once: its
 * SETs leave as soon as the release is answered, theirs only once the
 * announcement has reached them. So for a short while after such a
 * release, a new acquire of that resource by this client starts late,
 * giving the waiters that time to take the lock. Best effort, per client:
 * it keeps no waiter from starving behind a holder that asks again and
 * again (docs/design.md, "Waiting by notification").
 *
 * Resources are remembered by a 64-bit hash in a small ring: a collision,
 * or an entry overwritten, only costs or saves one short delay.
 */
#ifndef REDLOCK_COURTESY_H
#define REDLOCK_COURTESY_H

#include "context/context.h"

#include <stddef.h>
#include <stdint.h>

/* Attempts brought forward by announcements start at random within this
 * many round trips (the waiter's last attempt's, bounded below and above)
 * of the announcement, so that the waiters woken by one release do not
 * all ask at once and split the votes; a courtesy lasts that long and two
 * round trips more (the releaser's). */
#define RL_SPREAD_RTTS 4
#define RL_SPREAD_RTT_MIN_US 100
#define RL_SPREAD_RTT_MAX_US 5000

/* The ring (rl_courtesy_ring) is the client's: context/context.h. */
/* Remember that new acquires of resource should wait until until_us. */
void rl_courtesy_note(rl_courtesy_ring *ring, const void *resource, size_t len, int64_t until_us);
/* When a new acquire of resource may start: until_us of a courtesy still
 * running at now_us, else 0. */
int64_t rl_courtesy_until(const rl_courtesy_ring *ring, const void *resource, size_t len,
                          int64_t now_us);

#endif
