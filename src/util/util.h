/* SPDX-License-Identifier: BSD-3-Clause */
/* Small helpers every file may use: strings, secrets, the monotonic clock. */
#ifndef REDLOCK_UTIL_H
#define REDLOCK_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define RL_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define RL_PRINTF(fmt, args)
#endif

/* malloc'ed printf, or NULL when out of memory. */
char *rl_strprintf(const char *fmt, ...) RL_PRINTF(1, 2);

/* Wipe a NUL-terminated secret, then free it. NULL is allowed. */
void rl_free_secret(char *secret);

/* CLOCK_MONOTONIC in microseconds. */
int64_t rl_now_us(void);

#endif
