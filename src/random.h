/* Randomness from the kernel CSPRNG: lock values and retry jitter. */
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

/* Uniform in [0, max]; max <= 0 gives 0. Falls back to 0 if getrandom fails:
 * jitter only desynchronises clients, it guards nothing. */
int64_t rl_random_jitter(int64_t max);

#endif
