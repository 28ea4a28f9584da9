/* SPDX-License-Identifier: BSD-3-Clause */
/* Batched extensions and releases: one script call for several locks. See
 * batch.h. */
#include "master/batch.h"
#include "master/request.h"
#include "wire/command.h"
#include "wire/reply.h"
#include "wire/scripts.h"

#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

/* What a batch said when its reply was neither its array nor an error. */
static const redisReply unexpected_batch_reply = {
    .type = REDIS_REPLY_ERROR,
    .str = (char *)"ERR unexpected reply to a batched request",
    .len = sizeof("ERR unexpected reply to a batched request") - 1,
};

/* One request's EVALSHA, taken apart: where its keys and its other arguments
 * lie in its RESP, as bulk strings copied as they are. */
typedef struct rl_batch_part {
    size_t nkeys;
    size_t nargs;
    const char *keys; /* the keys' bulk strings */
    size_t keys_len;
    const char *args; /* the arguments' bulk strings */
    size_t args_len;
} rl_batch_part;

/* "<prefix><n>\r\n" at *p, moving past it. */
static bool read_header(const char **p, const char *end, char prefix, size_t *n)
{
    const char *s = *p;
    if (s >= end || *s != prefix)
        return false;
    s++;
    size_t v = 0;
    const char *first = s;
    while (s < end && *s >= '0' && *s <= '9' && s - first < 18)
        v = v * 10 + (size_t)(*s++ - '0');
    if (s == first || end - s < 2 || s[0] != '\r' || s[1] != '\n')
        return false;
    *p = s + 2;
    *n = v;
    return true;
}

/* One bulk string at *p, moving past it; its bytes into *data, *len. */
static bool read_bulk(const char **p, const char *end, const char **data, size_t *len)
{
    size_t n;
    if (!read_header(p, end, '$', &n) || (size_t)(end - *p) < n + 2 || (*p)[n] != '\r' ||
        (*p)[n + 1] != '\n')
        return false;
    *data = *p;
    *len = n;
    *p += n + 2;
    return true;
}

/* A request as an EVALSHA of single. */
static bool read_part(const char *cmd, size_t len, const rl_script *single, rl_batch_part *part)
{
    const char *p = cmd;
    const char *end = cmd + len;
    size_t argc = 0;
    size_t n = 0;
    const char *s = NULL;
    if (!read_header(&p, end, '*', &argc) || argc < 3 || !read_bulk(&p, end, &s, &n) || n != 7 ||
        memcmp(s, "EVALSHA", 7) != 0 || !read_bulk(&p, end, &s, &n) || n != 40 ||
        memcmp(s, single->sha, 40) != 0 || !read_bulk(&p, end, &s, &n) || n == 0 || n > 18)
        return false;
    size_t nkeys = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        nkeys = nkeys * 10 + (size_t)(s[i] - '0');
    }
    if (nkeys > argc - 3)
        return false;
    part->nkeys = nkeys;
    part->nargs = argc - 3 - nkeys;
    part->keys = p;
    for (size_t i = 0; i < nkeys; i++)
        if (!read_bulk(&p, end, &s, &n))
            return false;
    part->keys_len = (size_t)(p - part->keys);
    part->args = p;
    for (size_t i = 0; i < part->nargs; i++)
        if (!read_bulk(&p, end, &s, &n))
            return false;
    part->args_len = (size_t)(p - part->args);
    return p == end;
}

/* Bytes of n as a bulk string: "$<digits>\r\n<n>\r\n". */
static size_t number_size(size_t n)
{
    return 1 + rl_resp_digits(rl_resp_digits(n)) + 2 + rl_resp_digits(n) + 2;
}

static size_t write_number(char *out, size_t n)
{
    size_t at = rl_resp_header(out, '$', rl_resp_digits(n));
    /* "<n>\r\n": a header whose prefix byte is left out. */
    char line[24];
    size_t line_len = rl_resp_header(line, ' ', n);
    memcpy(out + at, line + 1, line_len - 1);
    return at + line_len - 1;
}

/* The single script a batch script batches. */
static const rl_script *batched_single(const rl_script *script)
{
    if (script == &rl_extend_batch_script)
        return &rl_extend_script;
    if (script == &rl_release_batch_script)
        return &rl_release_script;
    return NULL;
}

/* A lock with one key and two arguments (no token keys): the batch's
 * short form carries no headers for it. */
static bool part_plain(const rl_batch_part *part)
{
    return part->nkeys == 1 && part->nargs == 2;
}

/* "$1\r\np\r\n": ARGV[1] of the short form, for batches of plain locks. */
static const char plain_mark[] = "$1\r\np\r\n";

char *rl_batch_command(const rl_script *script, rl_request *const *reqs, size_t count,
                       size_t *len)
{
    const rl_script *single = batched_single(script);
    rl_batch_part parts[RL_BATCH_MAX];
    if (single == NULL || count == 0 || count > RL_BATCH_MAX)
        return NULL;
    size_t nkeys = 0;
    size_t argc = 4; /* EVALSHA, the sha, the key count, the lock count (or the mark) */
    size_t body = 0;
    bool plain = true;
    for (size_t i = 0; i < count; i++) {
        if (!read_part(reqs[i]->cmd, reqs[i]->cmd_len, single, &parts[i]))
            return NULL;
        plain = plain && part_plain(&parts[i]);
        nkeys += parts[i].nkeys;
        argc += parts[i].nkeys + parts[i].nargs;
        body += parts[i].keys_len + parts[i].args_len;
    }
    if (!plain) {
        for (size_t i = 0; i < count; i++)
            body += number_size(parts[i].nkeys) + number_size(parts[i].nargs);
        argc += 2 * count;
    }
    static const char evalsha[] = "$7\r\nEVALSHA\r\n$40\r\n";
    size_t total = 1 + rl_resp_digits(argc) + 2 + (sizeof(evalsha) - 1) + 40 + 2 + number_size(nkeys) +
                   (plain ? sizeof(plain_mark) - 1 : number_size(count)) + body;
    char *out = malloc(total + 1);
    if (out == NULL)
        return NULL;
    char *w = out;
    w += rl_resp_header(w, '*', argc);
    memcpy(w, evalsha, sizeof(evalsha) - 1), w += sizeof(evalsha) - 1;
    memcpy(w, script->sha, 40), w += 40;
    memcpy(w, "\r\n", 2), w += 2;
    w += write_number(w, nkeys);
    for (size_t i = 0; i < count; i++)
        memcpy(w, parts[i].keys, parts[i].keys_len), w += parts[i].keys_len;
    if (plain) {
        memcpy(w, plain_mark, sizeof(plain_mark) - 1), w += sizeof(plain_mark) - 1;
    } else {
        w += write_number(w, count);
    }
    for (size_t i = 0; i < count; i++) {
        if (!plain) {
            w += write_number(w, parts[i].nkeys);
            w += write_number(w, parts[i].nargs);
        }
        memcpy(w, parts[i].args, parts[i].args_len), w += parts[i].args_len;
    }
    *w = '\0';
    *len = total;
    return out;
}

const redisReply *rl_batch_reply_for(const redisReply *reply, size_t count, size_t i)
{
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR)
        return reply;
    if (reply->type == REDIS_REPLY_ARRAY && reply->elements == count && i < count)
        return reply->element[i];
    return &unexpected_batch_reply;
}

bool rl_batch_noscript(const redisReply *reply)
{
    return reply != NULL && reply->type == REDIS_REPLY_ERROR &&
           rl_reply_starts_with(reply, "NOSCRIPT");
}

void rl_batch_dispatch(const rl_batch *b, const redisReply *reply, const char *lost_reason)
{
    for (size_t i = 0; i < b->count; i++)
        b->reqs[i]->ops->on_reply(b->reqs[i], rl_batch_reply_for(reply, b->count, i),
                                  lost_reason);
}
