/* SPDX-License-Identifier: BSD-3-Clause */
/* What the masters' replies mean, for rounds and for the handshake. See
 * reply.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif

#include "wire/reply.h"
#include "wire/command.h"
#include "redlock/redlock.h"
#include "wire/scripts.h"

#include <hiredis/hiredis.h>
#include <stdio.h>
#include <string.h>

/* Bytes of a handshake error reply quoted in a reason. */
#define RL_REASON_QUOTE_MAX 160

static const char unexpected_reply[] = "unexpected reply";

bool rl_reply_starts_with(const redisReply *reply, const char *prefix)
{
    size_t n = strlen(prefix);
    return reply->len >= n && memcmp(reply->str, prefix, n) == 0;
}

/* A counter's decimal text (a bulk string, or an integer), into *out:
 * false when it is not one. */
static bool read_counter(const redisReply *r, int64_t *out)
{
    if (r->type == REDIS_REPLY_INTEGER) {
        *out = r->integer;
        return r->integer >= 0;
    }
    if (r->type != REDIS_REPLY_STRING || r->len == 0 || r->len > 18)
        return false; /* counters stay below 2^53: a token Lua compares exactly */
    int64_t n = 0;
    for (size_t i = 0; i < r->len; i++) {
        if (r->str[i] < '0' || r->str[i] > '9')
            return false;
        n = n * 10 + (r->str[i] - '0');
    }
    *out = n;
    return true;
}

/* An inspection: {value or nil, pttl, token or nil}; the token into
 * out->counter (-1 none). */
static bool read_inspection(const redisReply *reply, rl_reply_meaning *out)
{
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 3 ||
        reply->element[1]->type != REDIS_REPLY_INTEGER)
        return false;
    const redisReply *value = reply->element[0];
    if (value->type == REDIS_REPLY_STRING) {
        out->value = value->str;
        out->value_len = value->len;
    } else if (value->type != REDIS_REPLY_NIL) {
        return false;
    }
    out->pttl_ms = reply->element[1]->integer;
    const redisReply *token = reply->element[2];
    if (token->type != REDIS_REPLY_NIL &&
        (!read_counter(token, &out->counter) || out->counter == 0))
        out->counter = -1; /* not a token: shown as none, it decides nothing */
    return true;
}

/* The fenced acquire script's OK: {1, n} with its counter, or {1, nil,
 * run_id} when the counter is not in use. */
static bool read_fenced_ok(const redisReply *reply, rl_reply_meaning *out)
{
    if (reply->elements < 2 || reply->element[0]->type != REDIS_REPLY_INTEGER ||
        reply->element[0]->integer != 1)
        return false;
    if (reply->elements == 2) {
        if (!read_counter(reply->element[1], &out->counter))
            return false;
        if ((uint64_t)out->counter >= RL_TOKEN_LIMIT) {
            /* Its token would be 2^53 + 1 or more: Lua could not tell it
             * from the one before. An OK still (the keys are set), but
             * without a counter: the attempt gets no token. */
            out->counter = -1;
            out->detail = "fencing counter at 2^53: no greater token can be compared exactly";
            out->detail_len = strlen(out->detail);
        }
        return true;
    }
    const redisReply *run = reply->element[2];
    if (reply->elements != 3 || reply->element[1]->type != REDIS_REPLY_NIL ||
        run->type != REDIS_REPLY_STRING || run->len != RL_RUN_ID_SIZE - 1 ||
        strspn(run->str, "0123456789abcdef") != run->len)
        return false; /* a run_id is 40 hex digits: it is logged and sent back */
    out->run_id = run->str;
    out->detail = "fencing counter not in use";
    out->detail_len = strlen(out->detail);
    return true;
}

/* An acquire's answer: SET NX's OK or nil, the acquire script's 1 (set) or
 * 0 (taken); -1 for anything else. */
static int read_acquire(const redisReply *reply, rl_reply_meaning *out)
{
    if (reply->type == REDIS_REPLY_ARRAY)
        return read_fenced_ok(reply, out) ? REDLOCK_MASTER_OK : -1;
    if (reply->type == REDIS_REPLY_STATUS && reply->len == 2 && memcmp(reply->str, "OK", 2) == 0)
        return REDLOCK_MASTER_OK;
    if (reply->type == REDIS_REPLY_NIL)
        return REDLOCK_MASTER_HELD; /* NX: the key exists */
    if (reply->type == REDIS_REPLY_INTEGER && (reply->integer == 0 || reply->integer == 1))
        return reply->integer == 1 ? REDLOCK_MASTER_OK : REDLOCK_MASTER_HELD;
    return -1;
}

/* The outcome of a reply that is not an error. */
/* A script's 1 / 0 / -1 (extend, release, fence confirm); a release's
 * 1 + the subscribers that heard its announcement; -1 for anything else. */
static int read_script_verdict(rl_round_kind kind, const redisReply *reply,
                               rl_reply_meaning *out)
{
    if (reply->type != REDIS_REPLY_INTEGER)
        return -1;
    if (reply->integer == 1 || (kind == RL_ROUND_RELEASE && reply->integer > 1)) {
        out->listeners = reply->integer - 1;
        return REDLOCK_MASTER_OK;
    }
    if (reply->integer == 0)
        return REDLOCK_MASTER_ABSENT;
    if (reply->integer == -1)
        return REDLOCK_MASTER_HELD;
    if (kind == RL_ROUND_FENCE && reply->integer == -2) {
        out->counter = -2;
        out->detail = "fencing counter not in use";
        out->detail_len = strlen(out->detail);
        return REDLOCK_MASTER_ABSENT;
    }
    return -1;
}

/* The fence read's {1, n}: OK, in use, counter n. {0, n}, {0, nil} or
 * {0}: ABSENT, not in use, holding n (counter n) or none (-1). */
static int read_fence_read(const redisReply *reply, rl_reply_meaning *out)
{
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 || reply->elements > 2 ||
        reply->element[0]->type != REDIS_REPLY_INTEGER)
        return -1;
    const redisReply *n = reply->elements == 2 ? reply->element[1] : NULL;
    if (reply->element[0]->integer == 1)
        return n != NULL && read_counter(n, &out->counter) ? REDLOCK_MASTER_OK : -1;
    if (reply->element[0]->integer != 0)
        return -1;
    if (n != NULL && n->type != REDIS_REPLY_NIL && !read_counter(n, &out->counter))
        return -1;
    out->detail = "fencing counter not in use";
    out->detail_len = strlen(out->detail);
    return REDLOCK_MASTER_ABSENT;
}

/* The fence seed's 1 (seeded) or 0 (already in use): both leave it in
 * use; -1: the master restarted since (another run), not done. */
static int read_fence_seed(const redisReply *reply, rl_reply_meaning *out)
{
    if (reply->type != REDIS_REPLY_INTEGER)
        return -1;
    if (reply->integer == 0 || reply->integer == 1) {
        /* Which, for fencing-init to say (redlock.h, detail). */
        out->detail = reply->integer == 1 ? REDLOCK_FENCING_INITIALIZED : "in use already";
        out->detail_len = strlen(out->detail);
        return REDLOCK_MASTER_OK;
    }
    if (reply->integer == -1) {
        out->detail = "the master restarted since";
        out->detail_len = strlen(out->detail);
        return REDLOCK_MASTER_ABSENT;
    }
    return -1;
}

/* The outcome of a reply that is not an error, -1 when unexpected. */
static int read_answer(rl_round_kind kind, const redisReply *reply, rl_reply_meaning *out)
{
    switch (kind) {
    case RL_ROUND_ACQUIRE:
        return read_acquire(reply, out);
    case RL_ROUND_PING:
        return reply->type == REDIS_REPLY_STATUS && reply->len == 4 &&
                       memcmp(reply->str, "PONG", 4) == 0
                   ? REDLOCK_MASTER_OK
                   : -1;
    case RL_ROUND_INSPECT:
        return read_inspection(reply, out) ? REDLOCK_MASTER_OK : -1;
    case RL_ROUND_FENCE_READ:
        return read_fence_read(reply, out);
    case RL_ROUND_FENCE_SEED:
        return read_fence_seed(reply, out);
    case RL_ROUND_FENCE:
    case RL_ROUND_EXTEND:
    case RL_ROUND_RELEASE:
        return read_script_verdict(kind, reply, out);
    }
    return -1;
}

/* An error reply's outcome. */
static void read_error(rl_round_kind kind, const redisReply *reply, rl_reply_meaning *out)
{
    out->detail = reply->str;
    out->detail_len = reply->len;
    if (kind != RL_ROUND_PING && rl_reply_starts_with(reply, "NOSCRIPT"))
        out->outcome = RL_REPLY_NOSCRIPT;
    else if (rl_reply_starts_with(reply, "NOAUTH") || rl_reply_starts_with(reply, "WRONGPASS"))
        out->outcome = REDLOCK_MASTER_AUTH_FAILED;
    else if (rl_reply_starts_with(reply, "NOPERM"))
        out->outcome = REDLOCK_MASTER_REFUSED; /* answered: a permission, not the network */
    else
        out->outcome = REDLOCK_MASTER_ERROR;
}

void rl_reply_read(rl_round_kind kind, const redisReply *reply, rl_reply_meaning *out)
{
    *out = (rl_reply_meaning){.pttl_ms = -2, .counter = -1};
    if (reply->type != REDIS_REPLY_ERROR) {
        out->outcome = read_answer(kind, reply, out);
        if (out->outcome < 0) { /* nothing read from it is kept */
            *out = (rl_reply_meaning){.pttl_ms = -2, .counter = -1};
            out->outcome = REDLOCK_MASTER_ERROR;
            out->detail = unexpected_reply;
            out->detail_len = sizeof(unexpected_reply) - 1;
        }
        return;
    }
    read_error(kind, reply, out);
}

void rl_part_reply_keep(rl_part_reply *out, const redisReply *reply)
{
    *out = (rl_part_reply){.type = reply->type};
    if (reply->type == REDIS_REPLY_INTEGER) {
        out->integer = reply->integer;
    } else if (reply->type == REDIS_REPLY_ERROR) {
        size_t len = reply->len < sizeof(out->text) - 1 ? reply->len : sizeof(out->text) - 1;
        memcpy(out->text, reply->str, len);
        out->text[len] = '\0';
    }
}

/* An error reply's outcome, from its text. */
static void read_error_text(rl_round_kind kind, const char *text, size_t len,
                            rl_reply_meaning *out)
{
    redisReply r = {.type = REDIS_REPLY_ERROR, .str = (char *)text, .len = len};
    read_error(kind, &r, out);
    if (rl_reply_starts_with(&r, "WRONGTYPE"))
        out->outcome = RL_REPLY_ASK_SCRIPT;
    else if (rl_reply_starts_with(&r, "NOPERM") || rl_reply_starts_with(&r, "ERR unknown command") ||
             rl_reply_starts_with(&r, "ERR syntax error"))
        out->outcome = RL_REPLY_PLAIN_REFUSED;
    else if (out->outcome == RL_REPLY_NOSCRIPT)
        out->outcome = REDLOCK_MASTER_ERROR; /* no script was asked for */
}

static void read_unexpected(rl_reply_meaning *out)
{
    out->outcome = REDLOCK_MASTER_ERROR;
    out->detail = unexpected_reply;
    out->detail_len = sizeof(unexpected_reply) - 1;
}

/* SET key value IFEQ value PX ttl GET: the old value. */
static void read_plain_extend(const redisReply *reply, const char *value, size_t value_len,
                              rl_reply_meaning *out)
{
    if (reply->type == REDIS_REPLY_ERROR)
        read_error_text(RL_ROUND_EXTEND, reply->str, reply->len, out);
    else if (reply->type == REDIS_REPLY_NIL)
        out->outcome = REDLOCK_MASTER_ABSENT;
    else if (reply->type == REDIS_REPLY_STRING)
        out->outcome = reply->len == value_len && memcmp(reply->str, value, value_len) == 0
                           ? REDLOCK_MASTER_OK
                           : REDLOCK_MASTER_HELD;
    else
        read_unexpected(out);
}

/* The compare-and-delete's and PUBLISH's replies. */
static void read_plain_release(const rl_part_reply *del, const redisReply *publish,
                               rl_reply_meaning *out)
{
    if (del->type == REDIS_REPLY_ERROR) {
        read_error_text(RL_ROUND_RELEASE, del->text, strlen(del->text), out);
    } else if (del->type != REDIS_REPLY_INTEGER || del->integer < 0 || del->integer > 1) {
        read_unexpected(out);
    } else if (del->integer == 1) {
        out->outcome = REDLOCK_MASTER_OK;
        if (publish->type == REDIS_REPLY_INTEGER && publish->integer > 0)
            out->listeners = publish->integer;
    } else {
        out->outcome = RL_REPLY_FOLLOW_UP; /* not deleted: another's, or nothing */
    }
}

void rl_reply_read_follow_up(rl_round_kind kind, const redisReply *reply, rl_reply_meaning *out)
{
    *out = (rl_reply_meaning){.pttl_ms = -2, .counter = -1};
    bool release = kind == RL_ROUND_RELEASE; /* no other form has one */
    if (release && reply->type == REDIS_REPLY_ERROR)
        read_error_text(kind, reply->str, reply->len, out);
    else if (release && reply->type == REDIS_REPLY_INTEGER &&
             (reply->integer == 0 || reply->integer == 1))
        out->outcome = reply->integer == 1 ? REDLOCK_MASTER_HELD : REDLOCK_MASTER_ABSENT;
    else
        read_unexpected(out);
}

void rl_reply_read_plain(rl_round_kind kind, const rl_part_reply *parts, size_t nparts,
                         const redisReply *reply, const char *value, size_t value_len,
                         rl_reply_meaning *out)
{
    *out = (rl_reply_meaning){.pttl_ms = -2, .counter = -1};
    if (kind == RL_ROUND_EXTEND && nparts == 0)
        read_plain_extend(reply, value, value_len, out);
    else if (kind == RL_ROUND_RELEASE && nparts == 1)
        read_plain_release(&parts[0], reply, out);
    else
        read_unexpected(out); /* no other plain form is sent */
}

const char *rl_handshake_step_name(rl_handshake_step step)
{
    switch (step) {
    case RL_HS_AUTH:
        return "AUTH";
    case RL_HS_SELECT:
        return "SELECT";
    case RL_HS_INFO:
        return "INFO";
    default:
        return "SCRIPT LOAD";
    }
}

const rl_script *rl_handshake_script(rl_handshake_step step)
{
    switch (step) {
    case RL_HS_LOAD_RELEASE:
        return &rl_release_script;
    case RL_HS_LOAD_EXTEND:
        return &rl_extend_script;
    case RL_HS_LOAD_INSPECT:
        return &rl_inspect_script;
    case RL_HS_LOAD_ACQUIRE:
        return &rl_acquire_script;
    case RL_HS_LOAD_FENCED_ACQUIRE:
        return &rl_fenced_acquire_script;
    case RL_HS_LOAD_FENCE_CONFIRM:
        return &rl_fence_confirm_script;
    case RL_HS_LOAD_EXTEND_BATCH:
        return &rl_extend_batch_script;
    case RL_HS_LOAD_RELEASE_BATCH:
        return &rl_release_batch_script;
    default:
        return NULL;
    }
}

/* Appends text[0..len) to reason (which holds used bytes of reason_len)
 * as one printable ASCII line: controls, non-ASCII bytes and NULs as \xHH
 * (\n, \t: short forms), backslashes doubled; stops before an escape that
 * would not fit. */
static void append_escaped(char *reason, size_t reason_len, size_t used, const char *text,
                           size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        char esc[5];
        if (c == '\\')
            snprintf(esc, sizeof(esc), "\\\\");
        else if (c == '\n')
            snprintf(esc, sizeof(esc), "\\n");
        else if (c == '\t')
            snprintf(esc, sizeof(esc), "\\t");
        else if (c < 0x20 || c > 0x7e)
            snprintf(esc, sizeof(esc), "\\x%02x", c);
        else
            snprintf(esc, sizeof(esc), "%c", c);
        size_t n = strlen(esc);
        if (used + n >= reason_len)
            break;
        memcpy(reason + used, esc, n + 1);
        used += n;
    }
}

/* "STEP: error text" into reason. The text goes to the log, so it is made
 * one printable line; and it is withheld whole should a server ever quote
 * the password, anywhere in the reply (not just in the part shown). */
static void error_reason(rl_handshake_step step, const redisReply *reply, const char *password,
                         char *reason, size_t reason_len)
{
    const char *what = rl_handshake_step_name(step);
    if (reason_len == 0)
        return;
    size_t pw_len = password != NULL ? strlen(password) : 0;
    if (pw_len == 0 || memmem(reply->str, reply->len, password, pw_len) == NULL) {
        int n = snprintf(reason, reason_len, "%s: ", what);
        if (n > 0 && (size_t)n < reason_len) {
            size_t shown = reply->len > RL_REASON_QUOTE_MAX ? RL_REASON_QUOTE_MAX : reply->len;
            append_escaped(reason, reason_len, (size_t)n, reply->str, shown);
        }
        /* An escape could spell it out; never mind how unlikely. */
        if (pw_len == 0 || strstr(reason, password) == NULL)
            return;
    }
    snprintf(reason, reason_len,
             "%s: the server refused it (reply withheld: it quoted the password)", what);
}

/* Whether an error reply to a SCRIPT LOAD step says the server will not
 * run our scripts, whatever we do: the ACL user lacks the command
 * (NOPERM), or the server has no SCRIPT command or has scripting turned
 * off. Any other error (LOADING, BUSY, a server's own trouble) may pass. */
static bool scripts_refused(rl_handshake_step step, const redisReply *reply)
{
    if (rl_handshake_script(step) == NULL)
        return false;
    if (rl_reply_starts_with(reply, "NOPERM") || rl_reply_starts_with(reply, "ERR unknown command"))
        return true;
    static const char disabled[] = "disabled";
    return memmem(reply->str, reply->len, disabled, sizeof(disabled) - 1) != NULL;
}

rl_handshake_verdict rl_reply_handshake(rl_handshake_step step, const redisReply *reply,
                                        const char *password, char *reason, size_t reason_len)
{
    if (reply->type == REDIS_REPLY_ERROR) {
        bool auth = step == RL_HS_AUTH || rl_reply_starts_with(reply, "NOAUTH") ||
                    rl_reply_starts_with(reply, "WRONGPASS");
        if (step == RL_HS_INFO && !auth)
            return RL_HANDSHAKE_INFO_REFUSED;
        error_reason(step, reply, password, reason, reason_len);
        if (auth)
            return RL_HANDSHAKE_AUTH_FAILED;
        if (!scripts_refused(step, reply))
            return RL_HANDSHAKE_FAILED;
        /* Not the network: what the lock needs is refused, every time. */
        size_t n = strlen(reason);
        if (n < reason_len)
            snprintf(reason + n, reason_len - n,
                     "; the lock needs scripts (EVALSHA, EVAL, SCRIPT LOAD: ACL +@scripting)");
        return RL_HANDSHAKE_SCRIPTS_REFUSED;
    }
    /* SCRIPT LOAD answers with the script's SHA1, which EVALSHA will use. */
    const rl_script *script = rl_handshake_script(step);
    if (script != NULL && (reply->type != REDIS_REPLY_STRING || reply->len != 40 ||
                           memcmp(reply->str, script->sha, 40) != 0)) {
        snprintf(reason, reason_len, "SCRIPT LOAD %s: unexpected reply", script->name);
        return RL_HANDSHAKE_FAILED;
    }
    return RL_HANDSHAKE_ACCEPTED;
}

void rl_reply_run_id(const redisReply *reply, char run_id[RL_RUN_ID_SIZE])
{
    static const char field[] = "run_id:";
    const size_t field_len = sizeof(field) - 1;
    const size_t id_len = RL_RUN_ID_SIZE - 1;
    run_id[0] = '\0';
    if (reply->type != REDIS_REPLY_STRING && reply->type != REDIS_REPLY_STATUS)
        return;
    const char *at = memmem(reply->str, reply->len, field, field_len);
    if (at == NULL || (size_t)(reply->str + reply->len - at) < field_len + id_len)
        return;
    memcpy(run_id, at + field_len, id_len);
    run_id[id_len] = '\0';
}

int64_t rl_reply_uptime_s(const redisReply *reply)
{
    static const char field[] = "\nuptime_in_seconds:";
    const size_t field_len = sizeof(field) - 1;
    if (reply->type != REDIS_REPLY_STRING && reply->type != REDIS_REPLY_STATUS)
        return -1;
    const char *at = memmem(reply->str, reply->len, field, field_len);
    if (at == NULL)
        return -1;
    const char *p = at + field_len;
    const char *end = reply->str + reply->len;
    int64_t seconds = 0;
    int digits = 0;
    for (; p < end && *p >= '0' && *p <= '9' && digits < 12; p++, digits++)
        seconds = seconds * 10 + (*p - '0');
    return digits > 0 ? seconds : -1;
}
