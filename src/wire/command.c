/* SPDX-License-Identifier: BSD-3-Clause */
/* The requests the engine sends, written straight into RESP. */
#include "wire/command.h"
#include "redlock/redlock.h"
#include "wire/channel.h"
#include "wire/resources.h"
#include "wire/scripts.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static void arg(rl_command *c, const void *p, size_t len)
{
    c->argv[c->argc] = p;
    c->len[c->argc] = len;
    c->token_key[c->argc] = false;
    c->argc++;
}

#define RL_TOKEN_PREFIX_LEN (sizeof(REDLOCK_FENCING_TOKEN_PREFIX) - 1)

/* The lock's value, which also tags the request as that lock's (FNV-1a:
 * the values are random, so this tells locks apart). */
static void arg_value(rl_command *c, const void *value, size_t len)
{
    uint64_t tag = 14695981039346656037ULL;
    for (size_t i = 0; i < len; i++)
        tag = (tag ^ ((const unsigned char *)value)[i]) * 1099511628211ULL;
    c->lock_tag = tag | 1; /* never 0, which means no lock */
    c->value = value;
    c->value_len = len;
    arg(c, value, len);
}

static void arg_text(rl_command *c, const char *s)
{
    arg(c, s, strlen(s));
}

static void arg_number(rl_command *c, int64_t n)
{
    int len = snprintf(c->number, sizeof(c->number), "%lld", (long long)n);
    arg(c, c->number, (size_t)len);
}

static void command_begin(rl_command *c)
{
    c->argc = 0;
    c->channel_arg = 0;
    c->script = NULL;
    c->urgent_by_us = 0;
    c->lock_tag = 0;
    c->value = NULL;
    c->value_len = 0;
    c->plain = NULL;
    c->plain_caps = 0;
}

/* Which keys a script call names after the lock's. */
typedef enum rl_extra_keys {
    RL_LOCK_KEYS = 0,         /* the lock's keys alone */
    RL_COUNTER_KEY = 1,       /* then the fencing counter's key */
    RL_TOKEN_KEYS = 2,        /* then the token key of each */
    RL_COUNTER_AND_TOKENS = 3 /* then both, the counter's first */
} rl_extra_keys;

/* EVALSHA sha numkeys keys... [fencing key] [token keys...] [...] */
static void script_call_keys(rl_command *c, const rl_script *script, const rl_keys *keys,
                             rl_extra_keys extra)
{
    command_begin(c);
    c->script = script;
    arg_text(c, "EVALSHA");
    arg(c, script->sha, 40);
    size_t n = keys != NULL ? keys->count : 0;
    size_t count = n + ((extra & RL_COUNTER_KEY) ? 1 : 0) + ((extra & RL_TOKEN_KEYS) ? n : 0);
    int len = snprintf(c->numkeys, sizeof(c->numkeys), "%zu", count);
    arg(c, c->numkeys, (size_t)len);
    size_t pos = 0;
    const char *key;
    size_t key_len;
    while (keys != NULL && rl_keys_next(keys, &pos, &key, &key_len))
        arg(c, key, key_len);
    if (extra & RL_COUNTER_KEY)
        arg_text(c, REDLOCK_FENCING_KEY);
    pos = 0;
    while ((extra & RL_TOKEN_KEYS) && rl_keys_next(keys, &pos, &key, &key_len)) {
        arg(c, key, key_len);
        c->token_key[c->argc - 1] = true;
    }
}

/* EVALSHA sha n keys... [...] */
static void script_call(rl_command *c, const rl_script *script, const rl_keys *keys)
{
    script_call_keys(c, script, keys, RL_LOCK_KEYS);
}

void rl_command_acquire(rl_command *c, const rl_keys *keys, const void *value, size_t value_len,
                        int64_t ttl_ms, const void *owner, size_t owner_len)
{
    if (keys->count == 1 && owner == NULL) {
        command_begin(c);
        arg_text(c, "SET");
        arg(c, keys->data, keys->len);
        arg_value(c, value, value_len);
        arg_text(c, "NX");
        arg_text(c, "PX");
        arg_number(c, ttl_ms);
        return;
    }
    script_call(c, &rl_acquire_script, keys);
    arg_value(c, value, value_len);
    arg_number(c, ttl_ms);
    if (owner != NULL)
        arg(c, owner, owner_len);
}

void rl_command_fenced_acquire(rl_command *c, const rl_keys *keys, const void *value,
                               size_t value_len, int64_t ttl_ms, const void *owner,
                               size_t owner_len)
{
    script_call_keys(c, &rl_fenced_acquire_script, keys, RL_COUNTER_KEY);
    arg_value(c, value, value_len);
    arg_number(c, ttl_ms);
    if (owner != NULL)
        arg(c, owner, owner_len);
}

void rl_command_fence_confirm(rl_command *c, const rl_keys *keys, const void *value,
                              size_t value_len, uint64_t token)
{
    script_call_keys(c, &rl_fence_confirm_script, keys, RL_COUNTER_AND_TOKENS);
    arg_value(c, value, value_len);
    int len = snprintf(c->number, sizeof(c->number), "%llu", (unsigned long long)token);
    arg(c, c->number, (size_t)len);
}

void rl_command_fence_read(rl_command *c)
{
    script_call_keys(c, &rl_fence_read_script, NULL, RL_COUNTER_KEY);
}

void rl_command_fence_seed(rl_command *c, uint64_t seed, const char *run_id)
{
    script_call_keys(c, &rl_fence_seed_script, NULL, RL_COUNTER_KEY);
    int len = snprintf(c->number, sizeof(c->number), "%llu", (unsigned long long)seed);
    arg(c, c->number, (size_t)len);
    if (run_id != NULL)
        arg_text(c, run_id);
}

void rl_command_release(rl_command *c, const rl_keys *keys, const void *value, size_t value_len,
                        bool fenced)
{
    script_call_keys(c, &rl_release_script, keys, fenced ? RL_TOKEN_KEYS : RL_LOCK_KEYS);
    arg_value(c, value, value_len);
    c->channel_arg = c->argc;
    arg(c, c->channel_prefix, 0);
    if (fenced)
        arg_text(c, "1");
    rl_command_set_db(c, 0);
}

void rl_command_set_db(rl_command *c, int db)
{
    if (c->channel_arg == 0)
        return;
    c->channel_db = db;
    c->argv[c->channel_arg] = c->channel_prefix;
    c->len[c->channel_arg] = rl_channel_prefix(db, c->channel_prefix);
}

bool rl_command_db_dependent(const rl_command *c)
{
    return c->channel_arg != 0;
}

void rl_command_extend(rl_command *c, const rl_keys *keys, const void *value, size_t value_len,
                       int64_t ttl_ms, bool fenced)
{
    script_call_keys(c, &rl_extend_script, keys, fenced ? RL_TOKEN_KEYS : RL_LOCK_KEYS);
    arg_value(c, value, value_len);
    arg_number(c, ttl_ms);
    if (fenced)
        arg_text(c, "1");
}

void rl_command_plain_extend(rl_command *c, const void *key, size_t key_len, const void *value,
                             size_t value_len, int64_t ttl_ms)
{
    command_begin(c);
    arg_text(c, "SET");
    arg(c, key, key_len);
    arg_value(c, value, value_len);
    arg_text(c, "IFEQ");
    arg(c, value, value_len);
    arg_text(c, "PX");
    arg_number(c, ttl_ms);
    arg_text(c, "GET");
}

void rl_command_inspect(rl_command *c, const rl_keys *keys)
{
    script_call_keys(c, &rl_inspect_script, keys, RL_TOKEN_KEYS);
}

void rl_command_ping(rl_command *c)
{
    command_begin(c);
    arg_text(c, "PING");
}

size_t rl_resp_digits(size_t n)
{
    size_t d = 1;
    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

size_t rl_resp_header(char *out, char prefix, size_t n)
{
    size_t d = rl_resp_digits(n);
    out[0] = prefix;
    for (size_t i = d; i > 0; i--) {
        out[i] = (char)('0' + n % 10);
        n /= 10;
    }
    out[d + 1] = '\r';
    out[d + 2] = '\n';
    return d + 3;
}

size_t rl_command_size(const rl_command *c)
{
    size_t size = 3 + rl_resp_digits(c->argc); /* *<argc>\r\n */
    for (size_t i = 0; i < c->argc; i++) {
        size_t len = c->len[i] + (c->token_key[i] ? RL_TOKEN_PREFIX_LEN : 0);
        size += 3 + rl_resp_digits(len) + len + 2; /* $<len>\r\n<bytes>\r\n */
    }
    return size;
}

void rl_command_write(const rl_command *c, char *out)
{
    out += rl_resp_header(out, '*', c->argc);
    for (size_t i = 0; i < c->argc; i++) {
        size_t prefix_len = c->token_key[i] ? RL_TOKEN_PREFIX_LEN : 0;
        out += rl_resp_header(out, '$', prefix_len + c->len[i]);
        memcpy(out, REDLOCK_FENCING_TOKEN_PREFIX, prefix_len);
        out += prefix_len;
        memcpy(out, c->argv[i], c->len[i]);
        out += c->len[i];
        out[0] = '\r';
        out[1] = '\n';
        out += 2;
    }
    *out = '\0';
}
