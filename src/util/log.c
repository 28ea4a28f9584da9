/* SPDX-License-Identifier: BSD-3-Clause */
/* Logging through the user's callback: formatted, filtered by level. */
#include "util/log.h"

#include <stdio.h>

/* Long enough for any message we write; longer ones are cut, not dropped. */
#define RL_LOG_LINE_MAX 512

void rl_log(const rl_logger *log, int level, const char *fmt, ...)
{
    if (!rl_log_enabled(log, level))
        return;
    char line[RL_LOG_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    log->fn(level, line, log->arg);
}
