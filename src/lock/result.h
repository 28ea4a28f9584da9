/* SPDX-License-Identifier: BSD-3-Clause */
/* Results handed to callbacks and kept by the program (result.c). */
#ifndef REDLOCK_RESULT_H
#define REDLOCK_RESULT_H

#include "redlock/redlock.h"

#include <stdint.h>

typedef struct rl_round rl_round;

/* What an operation knows when it completes, turned into a result. */
typedef struct rl_result_info {
    int status;
    const rl_round *round; /* the last attempt; NULL if none was made */
    int64_t validity_ms;
    int64_t total_us;
    unsigned attempts;
    unsigned masters_locked;
    uint64_t fencing_token; /* the lock's, or 0 */
    int64_t end_us;         /* the last attempt's end when it outlasts its round
                               (a fenced acquire's round 2), else 0 */
} rl_result_info;

/* The result to hand a callback, in out and masters (room for client->n),
 * pointing into the round and the config: valid while both live, which the
 * caller ensures for the callback's duration. Allocates nothing. */
void rl_result_view(redlock_result *out, redlock_master_result *masters,
                    const redlock_client *client, const rl_result_info *info);

#endif
