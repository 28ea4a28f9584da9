/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which masters hold a lock's keys, as far as its last acquire or
 * extension showed: one bit per master (REDLOCK_MAX_NODES is 64), set for
 * each OK, those that came after the decision too. The round fills it
 * while its replies come in; the lock keeps the cell of the round that
 * last proved it held (the acquire, then each extension), so that a master
 * proven fast (clock_probe.h) can be weighed against every held lock at
 * once. Shared between a round (the loop's thread) and a lock handle
 * (freed on any thread): the count and the bits are atomic.
 */
#ifndef REDLOCK_HOLDERS_H
#define REDLOCK_HOLDERS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rl_holders {
    atomic_uint refs;
    _Atomic uint64_t masters; /* bit i: master i said OK */
} rl_holders;

/* A cell with no master set and one reference; NULL when out of memory. */
rl_holders *rl_holders_new(void);
void rl_holders_ref(rl_holders *h);
/* NULL is a no-op. */
void rl_holders_unref(rl_holders *h);
/* Master i holds the keys. */
void rl_holders_add(rl_holders *h, size_t i);
/* The masters in h (0 for NULL). */
uint64_t rl_holders_get(const rl_holders *h);

#endif
