/* SPDX-License-Identifier: BSD-3-Clause */
/* The requests the engine sends, written straight into RESP. */
#include "wire/command.h"
#include "redlock/redlock.h"
#include "wire/channel.h"
#include "wire/resources.h"
#include "wire/scripts.h"
#include "wire/server_info.h"

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
    c->plain = NULL;
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

static void plain_arg(rl_plain_part *p, const char *pre, size_t pre_len, const void *arg,
                      size_t len)
{
    p->argv[p->argc] = arg;
    p->len[p->argc] = len;
    p->pre[p->argc] = pre;
    p->pre_len[p->argc] = pre_len;
    p->argc++;
}

static void plain_text(rl_plain_part *p, const char *s)
{
    plain_arg(p, NULL, 0, s, strlen(s));
}

/* Form f, needing caps, begun empty: its first part. */
static rl_plain_part *plain_begin(rl_plain_form *f, unsigned caps)
{
    f->caps = caps;
    f->parts = 1;
    f->part[0].argc = 0;
    return &f->part[0];
}

/* A new form needing caps, its first part begun. */
static rl_plain_part *plain_form(rl_plain *p, unsigned caps)
{
    return plain_begin(&p->form[p->forms++], caps);
}

/* The next part of the form last begun. */
static rl_plain_part *plain_next_part(rl_plain *p)
{
    rl_plain_form *f = &p->form[p->forms - 1];
    rl_plain_part *part = &f->part[f->parts++];
    part->argc = 0;
    return part;
}

void rl_plain_extend(rl_plain *p, const void *key, size_t key_len, const void *value,
                     size_t value_len, int64_t ttl_ms)
{
    p->forms = 0;
    p->follow_up.caps = 0;
    p->follow_up.parts = 0;
    p->value = value;
    p->value_len = value_len;
    int n = snprintf(p->number, sizeof(p->number), "%lld", (long long)ttl_ms);
    rl_plain_part *set = plain_form(p, RL_CAP_SET_IFEQ);
    plain_text(set, "SET");
    plain_arg(set, NULL, 0, key, key_len);
    plain_arg(set, NULL, 0, value, value_len);
    plain_text(set, "IFEQ");
    plain_arg(set, NULL, 0, value, value_len);
    plain_text(set, "PX");
    plain_arg(set, NULL, 0, p->number, (size_t)n);
    plain_text(set, "GET");
}

void rl_plain_release(rl_plain *p, const void *key, size_t key_len, const void *value,
                      size_t value_len)
{
    p->forms = 0;
    p->value = value;
    p->value_len = value_len;
    size_t prefix_len = rl_channel_prefix(0, p->channel_prefix);
    static const unsigned caps[RL_PLAIN_FORMS] = {RL_CAP_DELIFEQ, RL_CAP_DELEX};
    for (size_t i = 0; i < RL_PLAIN_FORMS; i++) {
        rl_plain_part *del = plain_form(p, caps[i]);
        if (caps[i] == RL_CAP_DELIFEQ) {
            plain_text(del, "DELIFEQ");
            plain_arg(del, NULL, 0, key, key_len);
        } else {
            plain_text(del, "DELEX");
            plain_arg(del, NULL, 0, key, key_len);
            plain_text(del, "IFEQ");
        }
        plain_arg(del, NULL, 0, value, value_len);
        rl_plain_part *publish = plain_next_part(p);
        plain_text(publish, "PUBLISH");
        plain_arg(publish, p->channel_prefix, prefix_len, key, key_len);
        plain_arg(publish, NULL, 0, value, value_len);
    }
    rl_plain_part *exists = plain_begin(&p->follow_up, 0);
    plain_text(exists, "EXISTS");
    plain_arg(exists, NULL, 0, key, key_len);
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

/* Bytes of one bulk argument of len bytes: $<len>\r\n<bytes>\r\n. */
static size_t resp_arg_size(size_t len)
{
    return 3 + rl_resp_digits(len) + len + 2;
}

/* One bulk argument, pre then arg; returns the end. */
static char *resp_arg_write(char *out, const char *pre, size_t pre_len, const void *arg,
                            size_t len)
{
    out += rl_resp_header(out, '$', pre_len + len);
    if (pre_len > 0)
        memcpy(out, pre, pre_len);
    out += pre_len;
    if (len > 0)
        memcpy(out, arg, len);
    out += len;
    out[0] = '\r';
    out[1] = '\n';
    return out + 2;
}

size_t rl_command_size(const rl_command *c)
{
    size_t size = 3 + rl_resp_digits(c->argc); /* *<argc>\r\n */
    for (size_t i = 0; i < c->argc; i++)
        size += resp_arg_size(c->len[i] + (c->token_key[i] ? RL_TOKEN_PREFIX_LEN : 0));
    return size;
}

void rl_command_write(const rl_command *c, char *out)
{
    out += rl_resp_header(out, '*', c->argc);
    for (size_t i = 0; i < c->argc; i++)
        out = resp_arg_write(out, REDLOCK_FENCING_TOKEN_PREFIX,
                             c->token_key[i] ? RL_TOKEN_PREFIX_LEN : 0, c->argv[i], c->len[i]);
    *out = '\0';
}

size_t rl_plain_form_size(const rl_plain_form *f, size_t part_len[RL_PLAIN_PARTS])
{
    size_t size = 0;
    for (size_t i = 0; i < RL_PLAIN_PARTS; i++) {
        part_len[i] = 0;
        if (i >= f->parts)
            continue;
        const rl_plain_part *p = &f->part[i];
        part_len[i] = 3 + rl_resp_digits(p->argc);
        for (size_t a = 0; a < p->argc; a++)
            part_len[i] += resp_arg_size(p->pre_len[a] + p->len[a]);
        size += part_len[i];
    }
    return size;
}

void rl_plain_form_write(const rl_plain_form *f, char *out)
{
    for (size_t i = 0; i < f->parts; i++) {
        const rl_plain_part *p = &f->part[i];
        out += rl_resp_header(out, '*', p->argc);
        for (size_t a = 0; a < p->argc; a++)
            out = resp_arg_write(out, p->pre[a], p->pre_len[a], p->argv[a], p->len[a]);
    }
    *out = '\0';
}
