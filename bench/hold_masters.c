/* SPDX-License-Identifier: BSD-3-Clause */
/* The masters seen from outside the client: blocking connections of the
 * bench's own, what INFO commandstats says about the extension scripts,
 * what INFO cpu says the masters spent, and the bench's keys left behind. */
#include "hold.h"

#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

/* SCAN is bounded: this many calls, or this long, per master. */
#define SCAN_MAX_CALLS 100000
#define SCAN_MAX_NS (60 * (int64_t)1000000000)
/* A master busy with extension bursts answers INFO late, not never. */
#define MASTERS_CPU_TIMEOUT_MS 2000

redisContext *hold_master_connect(const bench_masters *ms, size_t i, int timeout_ms)
{
    struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (long)(timeout_ms % 1000) * 1000};
    redisContext *c = redisConnectWithTimeout(ms->host[i], ms->port[i], tv);
    if (c == NULL)
        return NULL;
    if (c->err || redisSetTimeout(c, tv) != REDIS_OK) {
        redisFree(c);
        return NULL;
    }
    return c;
}

/* The calls= figure of one command's line; 0 when the command has none
 * (a command never called has no line). */
static int64_t command_calls(const char *info, const char *line_start)
{
    const char *at = strstr(info, line_start);
    if (at == NULL)
        return 0;
    return strtoll(at + strlen(line_start), NULL, 10);
}

int64_t hold_script_calls(const char *info)
{
    if (info == NULL || strstr(info, "# Commandstats") == NULL)
        return -1;
    /* Extensions are EVALSHA; a master that lost the script gets one EVAL
     * (the fallback after NOSCRIPT) and the script loaded again. */
    return command_calls(info, "cmdstat_evalsha:calls=") +
           command_calls(info, "cmdstat_eval:calls=");
}

bool hold_command_stats(const char *info, const char *name, int64_t *calls, int64_t *usec)
{
    *calls = *usec = 0;
    if (info == NULL || strstr(info, "# Commandstats") == NULL)
        return false;
    /* The colon ends the name: cmdstat_evalsha is not cmdstat_evalsha_ro. */
    char line_start[64];
    snprintf(line_start, sizeof(line_start), "cmdstat_%s:calls=", name);
    const char *at = strstr(info, line_start);
    if (at == NULL)
        return true; /* never called */
    char *end = NULL;
    *calls = strtoll(at + strlen(line_start), &end, 10);
    if (strncmp(end, ",usec=", 6) != 0)
        return false;
    *usec = strtoll(end + 6, NULL, 10);
    return true;
}

/* One field of an INFO cpu reply, in s; -1 when absent. */
static double cpu_field(const char *info, const char *field)
{
    const char *at = strstr(info, field);
    if (at == NULL)
        return -1;
    char *end = NULL;
    double v = strtod(at + strlen(field), &end);
    return end != at + strlen(field) && v >= 0 ? v : -1;
}

double hold_server_cpu_s(const char *info)
{
    if (info == NULL)
        return -1;
    /* Fields start a line; the colon tells used_cpu_sys from
     * used_cpu_sys_children. */
    double sys = cpu_field(info, "\nused_cpu_sys:");
    double user = cpu_field(info, "\nused_cpu_user:");
    return sys < 0 || user < 0 ? -1 : sys + user;
}

double hold_read_cpu_s(redisContext *c, char *why, size_t why_size)
{
    redisReply *r = redisCommand(c, "INFO cpu");
    if (r == NULL) {
        snprintf(why, why_size, "INFO cpu: %s", c->errstr[0] ? c->errstr : "no reply");
        return -1;
    }
    double cpu = r->type == REDIS_REPLY_STRING ? hold_server_cpu_s(r->str) : -1;
    if (cpu < 0)
        snprintf(why, why_size, "INFO cpu: %.100s",
                 r->type == REDIS_REPLY_ERROR ? r->str : "no used_cpu_sys and used_cpu_user");
    freeReplyObject(r);
    return cpu;
}

double hold_masters_cpu_s(const bench_masters *ms, redisContext **conns, char *why,
                          size_t why_size)
{
    double sum = 0;
    for (size_t i = 0; i < ms->n; i++) {
        char reason[128] = "";
        if (conns[i] == NULL)
            conns[i] = hold_master_connect(ms, i, MASTERS_CPU_TIMEOUT_MS);
        double cpu = conns[i] == NULL ? -1 : hold_read_cpu_s(conns[i], reason, sizeof(reason));
        if (cpu < 0) {
            snprintf(why, why_size, "master %zu (%s:%d): %s", i, ms->host[i], ms->port[i],
                     conns[i] == NULL ? "cannot connect" : reason);
            return -1;
        }
        sum += cpu;
    }
    return sum;
}

long hold_count_keys(const bench_masters *ms, size_t i, const char *prefix)
{
    redisContext *c = hold_master_connect(ms, i, 5000);
    if (c == NULL)
        return -1;
    char pattern[HOLD_PREFIX_SIZE + 2];
    snprintf(pattern, sizeof(pattern), "%s*", prefix);
    long found = 0;
    bool complete = false;
    char cursor[32] = "0";
    int64_t deadline = tc_now_ns() + SCAN_MAX_NS;
    for (long calls = 0; calls < SCAN_MAX_CALLS; calls++) {
        redisReply *r = redisCommand(c, "SCAN %s MATCH %s COUNT 1000", cursor, pattern);
        if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            r->element[0]->type != REDIS_REPLY_STRING ||
            r->element[1]->type != REDIS_REPLY_ARRAY) {
            if (r != NULL)
                freeReplyObject(r);
            break;
        }
        snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
        found += (long)r->element[1]->elements;
        freeReplyObject(r);
        if (strcmp(cursor, "0") == 0) {
            complete = true;
            break;
        }
        if (tc_now_ns() >= deadline)
            break;
    }
    redisFree(c);
    return complete ? found : -1;
}
