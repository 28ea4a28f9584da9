/* SPDX-License-Identifier: BSD-3-Clause */
/* Logging through the user's callback: formatted, filtered by level. */
#ifndef REDLOCK_LOG_H
#define REDLOCK_LOG_H

#include "redlock/redlock.h"
#include "util/util.h"

typedef struct rl_logger {
    redlock_log_fn fn; /* NULL: logging off */
    void *arg;
    int level; /* most verbose level passed on */
} rl_logger;

/* True when a message at level would reach the callback: lets callers skip
 * building expensive arguments. */
static inline int rl_log_enabled(const rl_logger *log, int level)
{
    return log->fn != NULL && level <= log->level;
}

/* Format and pass one line to the callback. Never give it a password. */
void rl_log(const rl_logger *log, int level, const char *fmt, ...) RL_PRINTF(3, 4);

#endif
