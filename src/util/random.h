/* SPDX-License-Identifier: BSD-3-Clause */
/* Randomness from the kernel CSPRNG: lock values, retry jitter, the
 * watchdog's schedule. */
#ifndef REDLOCK_RANDOM_H
#define REDLOCK_RANDOM_H

#include <stddef.h>
#include <stdint.h>

#include "redlock/redlock.h"

/* Fill buf with len random bytes from getrandom(2). 0, or -1 with errno. */
int rl_random_bytes(void *buf, size_t len);

/* A fresh lock value: REDLOCK_VALUE_LEN lowercase hex digits (128 bits) and
 * a NUL. 0, or -1 with errno when the kernel gave no randomness. */
int rl_random_value(char out[REDLOCK_VALUE_LEN + 1]);

/* Random bytes drawn from getrandom(2) in batches, for one thread (a
 * client's loop): one system call per many lock values. A forked child
 * never hands out its parent's bytes: the pool refills after a fork. */
typedef struct rl_random_pool {
    unsigned char bytes[512];
    size_t used;         /* bytes handed out; sizeof(bytes) when empty */
    unsigned generation; /* the fork generation the bytes belong to */
} rl_random_pool;

void rl_random_pool_init(rl_random_pool *pool);
/* rl_random_value(), from the pool. */
int rl_random_pool_value(rl_random_pool *pool, char out[REDLOCK_VALUE_LEN + 1]);
/* A uniform 64-bit word from the pool, for jitter drawn often (the
 * watchdog's schedule of many locks); 0 if getrandom fails: jitter only
 * spreads load, it guards nothing. */
uint64_t rl_random_pool_word(rl_random_pool *pool);
/* Wipe the bytes not handed out yet. */
void rl_random_pool_clear(rl_random_pool *pool);

/* Uniform in [0, max]; max <= 0 gives 0. Falls back to 0 if getrandom fails:
 * jitter only desynchronises clients, it guards nothing. */
int64_t rl_random_jitter(int64_t max);

#endif
