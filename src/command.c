/* SPDX-License-Identifier: BSD-3-Clause */
/* The requests the engine sends, written straight into RESP. */
#include "command.h"
#include "scripts.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static void arg(rl_command *c, const void *p, size_t len)
{
    c->argv[c->argc] = p;
    c->len[c->argc] = len;
    c->head[c->argc] = NULL;
    c->head_len[c->argc] = 0;
    c->argc++;
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

void rl_command_acquire(rl_command *c, const void *key, size_t key_len, const void *value,
                        size_t value_len, int64_t ttl_ms)
{
    c->argc = 0;
    c->channel_arg = 0;
    arg_text(c, "SET");
    arg(c, key, key_len);
    arg(c, value, value_len);
    arg_text(c, "NX");
    arg_text(c, "PX");
    arg_number(c, ttl_ms);
}

/* EVALSHA sha 1 key [...] */
static void script_call(rl_command *c, const rl_script *script, const void *key, size_t key_len)
{
    c->argc = 0;
    c->channel_arg = 0;
    arg_text(c, "EVALSHA");
    arg(c, script->sha, 40);
    arg_text(c, "1");
    arg(c, key, key_len);
}

void rl_command_release(rl_command *c, const void *key, size_t key_len, const void *value,
                        size_t value_len)
{
    script_call(c, &rl_release_script, key, key_len);
    arg(c, value, value_len);
    c->channel_arg = c->argc;
    arg(c, key, key_len);
    rl_command_set_db(c, 0);
}

void rl_command_set_db(rl_command *c, int db)
{
    if (c->channel_arg == 0)
        return;
    c->channel_db = db;
    c->head[c->channel_arg] = c->channel_prefix;
    c->head_len[c->channel_arg] = rl_channel_prefix(db, c->channel_prefix);
}

bool rl_command_db_dependent(const rl_command *c)
{
    return c->channel_arg != 0;
}

void rl_command_extend(rl_command *c, const void *key, size_t key_len, const void *value,
                       size_t value_len, int64_t ttl_ms)
{
    script_call(c, &rl_extend_script, key, key_len);
    arg(c, value, value_len);
    arg_number(c, ttl_ms);
}

void rl_command_inspect(rl_command *c, const void *key, size_t key_len)
{
    script_call(c, &rl_inspect_script, key, key_len);
}

void rl_command_ping(rl_command *c)
{
    c->argc = 0;
    c->channel_arg = 0;
    arg_text(c, "PING");
}

/* Decimal digits of n. */
static size_t digits(size_t n)
{
    size_t d = 1;
    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

/* "<prefix><n>\r\n" at out; returns the bytes written. */
static size_t write_header(char *out, char prefix, size_t n)
{
    size_t d = digits(n);
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
    size_t size = 3 + digits(c->argc); /* *<argc>\r\n */
    for (size_t i = 0; i < c->argc; i++) {
        size_t len = c->head_len[i] + c->len[i];
        size += 3 + digits(len) + len + 2; /* $<len>\r\n<bytes>\r\n */
    }
    return size;
}

void rl_command_write(const rl_command *c, char *out)
{
    out += write_header(out, '*', c->argc);
    for (size_t i = 0; i < c->argc; i++) {
        out += write_header(out, '$', c->head_len[i] + c->len[i]);
        if (c->head_len[i] > 0)
            memcpy(out, c->head[i], c->head_len[i]);
        out += c->head_len[i];
        memcpy(out, c->argv[i], c->len[i]);
        out += c->len[i];
        out[0] = '\r';
        out[1] = '\n';
        out += 2;
    }
    *out = '\0';
}
