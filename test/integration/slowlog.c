/* SPDX-License-Identifier: BSD-3-Clause */
/* A master's slow log as a record of what it ran. See slowlog.h. */
#include "slowlog.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <string.h>
#include <strings.h>

#define SLOWLOG_MAX "10000"

void slowlog_every_command(fleet *f, size_t i)
{
    redisReply *r = fleet_command(f, i, "CONFIG SET slowlog-log-slower-than 0");
    cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    r = fleet_command(f, i, "CONFIG SET slowlog-max-len " SLOWLOG_MAX);
    cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    r = fleet_command(f, i, "SLOWLOG RESET");
    cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
}

/* Whether a slow log entry's arguments name key after the command, the
 * SHA and the key count. */
static bool names(const redisReply *args, const char *key)
{
    for (size_t a = 3; a < args->elements; a++)
        if (args->element[a]->type == REDIS_REPLY_STRING &&
            strcmp(args->element[a]->str, key) == 0)
            return true;
    return false;
}

size_t slowlog_script_calls(fleet *f, size_t i, const char *sha, const char *key)
{
    redisReply *r = fleet_command(f, i, "SLOWLOG GET " SLOWLOG_MAX);
    cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY);
    size_t n = 0;
    for (size_t e = 0; e < r->elements; e++) {
        const redisReply *entry = r->element[e];
        if (entry->type != REDIS_REPLY_ARRAY || entry->elements < 4)
            continue;
        const redisReply *args = entry->element[3];
        if (args->type == REDIS_REPLY_ARRAY && args->elements >= 2 &&
            args->element[0]->type == REDIS_REPLY_STRING &&
            strcasecmp(args->element[0]->str, "EVALSHA") == 0 &&
            args->element[1]->type == REDIS_REPLY_STRING &&
            strcmp(args->element[1]->str, sha) == 0 && (key == NULL || names(args, key)))
            n++;
    }
    freeReplyObject(r);
    return n;
}
