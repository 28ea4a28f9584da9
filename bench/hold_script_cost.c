/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the extend scripts cost a master, measured in the same run as the
 * hold: COST_KEYS plain keys on master 0, extended in rounds, first each
 * with an EVALSHA of its own of the extend script (pipelined), then in
 * calls of the batch script of RL_BATCH_MAX locks each, as the library
 * batches them, then, on a master with SET IFEQ (Valkey 8.1, Redis 8.4),
 * each with the script-free SET key value IFEQ value PX ttl GET the
 * library sends there (pipelined). Then acquire+release pairs of as many
 * other keys, each SET NX PX then the release, as the library writes them:
 * the release script, then (a master with DELIFEQ) the script-free
 * release's two commands. Around each phase, the master's INFO
 * commandstats (the calls and usec of the commands the phase sends) and
 * INFO cpu: deltas only, so its counters
 * are never reset (the masters may be the user's). Every wait is bounded;
 * a failure leaves the figures unmeasured, with why.
 */
#include "batch.h"
#include "command.h"
#include "hold.h"
#include "resources.h"
#include "scripts.h"
#include "server_info.h"

#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COST_KEYS 6400
#define COST_GROUPS RL_BATCH_MAX /* locks per batch call, as the library */
#define COST_ROUNDS 3
#define COST_PIPELINE 256        /* commands outstanding at most */
#define COST_TIMEOUT_MS 5000     /* each connect and each reply */
#define COST_MAX_NS (60 * (int64_t)1000000000)
#define COST_TTL_MS "60000"      /* a failed clean-up leaves the keys a minute at most */
#define COST_DEL_CHUNK 256
#define COST_KEY_SIZE (HOLD_PREFIX_SIZE + 24)
#define COST_VALUE_SIZE 40
#define COST_BATCH_ARGS (4 + COST_GROUPS * 3) /* EVALSHA sha n keys... p (v ttl)... */

_Static_assert(COST_KEYS % COST_GROUPS == 0, "whole batch calls");

typedef struct cost_run {
    redisContext *c;
    const char *prefix;
    unsigned long tag;       /* makes the values this run's own */
    int64_t deadline_ns;
    hold_script_cost *out;
    char *why_not;           /* HOLD_WHY_SIZE bytes: the first failure's reason */
} cost_run;

/* The first failure's reason is the one kept; false, for the caller. */
static bool fail(cost_run *r, const char *why)
{
    if (r->why_not[0] == '\0')
        snprintf(r->why_not, HOLD_WHY_SIZE, "%s", why);
    return false;
}

/* The connection's error (or an unexpected reply) while doing what. */
static bool fail_on(cost_run *r, const char *what, const redisReply *reply)
{
    char why[HOLD_WHY_SIZE];
    if (reply == NULL && r->c->err == REDIS_ERR_IO) /* a timeout among them */
        snprintf(why, sizeof(why), "%.40s: %.80s (a reply waits %d ms at most)", what,
                 r->c->errstr, COST_TIMEOUT_MS);
    else if (reply == NULL)
        snprintf(why, sizeof(why), "%s: %s", what, r->c->errstr[0] ? r->c->errstr : "no reply");
    else if (reply->type == REDIS_REPLY_ERROR)
        snprintf(why, sizeof(why), "%s: %.100s", what, reply->str);
    else
        snprintf(why, sizeof(why), "%s: an unexpected reply (type %d)", what, reply->type);
    return fail(r, why);
}

static void key_of(const cost_run *r, size_t i, char *key)
{
    snprintf(key, COST_KEY_SIZE, "%scost:%zu", r->prefix, i);
}

static void value_of(const cost_run *r, size_t i, char *value)
{
    snprintf(value, COST_VALUE_SIZE, "%016lx%06zu", r->tag, i);
}

/* ---- A bounded pipeline ------------------------------------------------- */

/* Append command k of a pipeline to r->c: REDIS_OK or REDIS_ERR. */
typedef int (*append_fn)(cost_run *r, size_t k);
/* Whether the reply to command k is the one expected. */
typedef bool (*check_fn)(const redisReply *reply, size_t k);

/* n commands, at most COST_PIPELINE outstanding, each reply read and
 * checked. After a wrong reply the ones still due are read, so the
 * connection stays in step; a broken connection ends it at once. */
static bool pipeline(cost_run *r, size_t n, append_fn append, check_fn check, const char *what)
{
    size_t sent = 0;
    size_t read = 0;
    bool ok = true;
    while (read < sent || (ok && sent < n)) {
        if (ok && sent < n && sent - read < COST_PIPELINE) {
            if (tc_now_ns() >= r->deadline_ns)
                ok = fail(r, "took longer than 60 s");
            else if (append(r, sent) != REDIS_OK)
                ok = fail_on(r, what, NULL);
            else
                sent++;
            continue;
        }
        void *reply = NULL;
        if (redisGetReply(r->c, &reply) != REDIS_OK || reply == NULL)
            return fail_on(r, what, NULL);
        read++;
        if (ok && !check(reply, read - 1))
            ok = fail_on(r, what, reply);
        freeReplyObject(reply);
    }
    return ok;
}

static bool is_ok(const redisReply *reply, size_t k)
{
    (void)k;
    return reply->type == REDIS_REPLY_STATUS && strcmp(reply->str, "OK") == 0;
}

static bool is_one(const redisReply *reply, size_t k)
{
    (void)k;
    return reply->type == REDIS_REPLY_INTEGER && reply->integer == 1;
}

static bool is_integer(const redisReply *reply, size_t k)
{
    (void)k;
    return reply->type == REDIS_REPLY_INTEGER;
}

/* The script-free extension's reply: the old value, a bulk string (nil
 * for a key gone, an error from a server without the command). */
static bool is_value(const redisReply *reply, size_t k)
{
    (void)k;
    return reply->type == REDIS_REPLY_STRING && reply->len > 0;
}

/* A batch's reply: 1 for every lock. */
static bool all_one(const redisReply *reply, size_t k)
{
    (void)k;
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements != COST_GROUPS)
        return false;
    for (size_t i = 0; i < reply->elements; i++)
        if (!is_one(reply->element[i], 0))
            return false;
    return true;
}

/* ---- The commands ------------------------------------------------------- */

/* SET key value PX ttl. */
static int append_set(cost_run *r, size_t k)
{
    char key[COST_KEY_SIZE];
    char value[COST_VALUE_SIZE];
    key_of(r, k, key);
    value_of(r, k, value);
    const char *argv[] = {"SET", key, value, "PX", COST_TTL_MS};
    return redisAppendCommandArgv(r->c, 5, argv, NULL);
}

/* One lock, one call: as the library sends an extension alone. */
static int append_single(cost_run *r, size_t k)
{
    char key[COST_KEY_SIZE];
    char value[COST_VALUE_SIZE];
    key_of(r, k, key);
    value_of(r, k, value);
    const char *argv[] = {"EVALSHA", rl_extend_script.sha, "1", key, value, COST_TTL_MS};
    return redisAppendCommandArgv(r->c, 6, argv, NULL);
}

/* One lock without a script, as the library extends a plain lock on a
 * master with SET IFEQ (command.h). */
static int append_plain(cost_run *r, size_t k)
{
    char key[COST_KEY_SIZE];
    char value[COST_VALUE_SIZE];
    key_of(r, k, key);
    value_of(r, k, value);
    const char *argv[] = {"SET", key, value, "IFEQ", value, "PX", COST_TTL_MS, "GET"};
    return redisAppendCommandArgv(r->c, 8, argv, NULL);
}

/* Whether the master has SET ... IFEQ: asked of key 0, which holds its
 * value (a master without it answers an error and changes nothing). */
static bool has_set_ifeq(cost_run *r)
{
    void *reply = NULL;
    if (append_plain(r, 0) != REDIS_OK || redisGetReply(r->c, &reply) != REDIS_OK)
        return false;
    bool has = reply != NULL && is_value(reply, 0);
    freeReplyObject(reply);
    return has;
}

/* COST_GROUPS locks, keys k * COST_GROUPS on, in one call, as the client
 * sends plain locks (batch.h, its short form): EVALSHA sha <keys> key...
 * p then for each lock its value and ttl. */
static int append_batch(cost_run *r, size_t k)
{
    char keys[COST_GROUPS][COST_KEY_SIZE];
    char values[COST_GROUPS][COST_VALUE_SIZE];
    char count[16];
    snprintf(count, sizeof(count), "%d", COST_GROUPS);
    const char *argv[COST_BATCH_ARGS];
    int argc = 0;
    argv[argc++] = "EVALSHA";
    argv[argc++] = rl_extend_batch_script.sha;
    argv[argc++] = count;
    for (size_t g = 0; g < COST_GROUPS; g++) {
        key_of(r, k * COST_GROUPS + g, keys[g]);
        value_of(r, k * COST_GROUPS + g, values[g]);
        argv[argc++] = keys[g];
    }
    argv[argc++] = "p";
    for (size_t g = 0; g < COST_GROUPS; g++) {
        argv[argc++] = values[g];
        argv[argc++] = COST_TTL_MS;
    }
    return redisAppendCommandArgv(r->c, argc, argv, NULL);
}

/* DEL of COST_DEL_CHUNK keys, k * COST_DEL_CHUNK on. */
static int append_del(cost_run *r, size_t k)
{
    char keys[COST_DEL_CHUNK][COST_KEY_SIZE];
    const char *argv[1 + COST_DEL_CHUNK];
    int argc = 0;
    argv[argc++] = "DEL";
    for (size_t i = k * COST_DEL_CHUNK; i < (k + 1) * COST_DEL_CHUNK && i < COST_KEYS; i++) {
        key_of(r, i, keys[argc - 1]);
        argv[argc] = keys[argc - 1];
        argc++;
    }
    return redisAppendCommandArgv(r->c, argc, argv, NULL);
}

/* ---- Acquire and release pairs ----------------------------------------- */

/* The commands of a pair: SET NX PX, then the release. */
#define PAIR_SCRIPT_COMMANDS 2
#define PAIR_PLAIN_COMMANDS (1 + RL_PLAIN_PARTS)
/* Room for one command as the library writes it for a key and a value. */
#define PAIR_COMMAND_SIZE 512

/* Pair p's key: after the extension phases' keys. */
static void pair_key(const cost_run *r, size_t p, char *key, char *value)
{
    key_of(r, COST_KEYS + p, key);
    value_of(r, COST_KEYS + p, value);
}

/* cmd as the library writes it, appended. */
static int append_command(cost_run *r, const rl_command *cmd)
{
    char out[PAIR_COMMAND_SIZE];
    size_t size = rl_command_size(cmd);
    if (size >= sizeof(out))
        return REDIS_ERR;
    rl_command_write(cmd, out);
    return redisAppendFormattedCommand(r->c, out, size);
}

/* Command k of the pairs with the release script: SET key value NX PX
 * ttl, as the library acquires a plain lock, then the script. */
static int append_pair_script(cost_run *r, size_t k)
{
    char key[COST_KEY_SIZE];
    char value[COST_VALUE_SIZE];
    pair_key(r, k / PAIR_SCRIPT_COMMANDS, key, value);
    rl_keys keys = {.count = 1, .len = strlen(key), .data = key};
    rl_command cmd;
    if (k % PAIR_SCRIPT_COMMANDS == 0)
        rl_command_acquire(&cmd, &keys, value, strlen(value), 60000, NULL, 0);
    else
        rl_command_release(&cmd, &keys, value, strlen(value), false);
    return append_command(r, &cmd);
}

/* Command k of the pairs without a script: the release's parts, in the
 * DELIFEQ form (command.h). */
static int append_pair_plain(cost_run *r, size_t k)
{
    char key[COST_KEY_SIZE];
    char value[COST_VALUE_SIZE];
    pair_key(r, k / PAIR_PLAIN_COMMANDS, key, value);
    size_t step = k % PAIR_PLAIN_COMMANDS;
    if (step == 0) {
        rl_keys keys = {.count = 1, .len = strlen(key), .data = key};
        rl_command cmd;
        rl_command_acquire(&cmd, &keys, value, strlen(value), 60000, NULL, 0);
        return append_command(r, &cmd);
    }
    rl_plain plain;
    rl_plain_release(&plain, key, strlen(key), value, strlen(value));
    const rl_plain_form *form = &plain.form[0];
    size_t part_len[RL_PLAIN_PARTS];
    char out[RL_PLAIN_PARTS * PAIR_COMMAND_SIZE];
    if (form->caps != RL_CAP_DELIFEQ || rl_plain_form_size(form, part_len) >= sizeof(out))
        return REDIS_ERR;
    rl_plain_form_write(form, out);
    size_t at = 0;
    for (size_t i = 0; i + 1 < step; i++)
        at += part_len[i];
    return redisAppendFormattedCommand(r->c, out + at, part_len[step - 1]);
}

/* SET's OK, then the release script's 1 (deleted, no listener). */
static bool check_pair_script(const redisReply *reply, size_t k)
{
    return k % PAIR_SCRIPT_COMMANDS == 0 ? is_ok(reply, k) : is_one(reply, k);
}

/* SET's OK, then DELIFEQ's 1 and PUBLISH's count. */
static bool check_pair_plain(const redisReply *reply, size_t k)
{
    switch (k % PAIR_PLAIN_COMMANDS) {
    case 0:
        return is_ok(reply, k);
    case 1:
        return is_one(reply, k);
    default:
        return is_integer(reply, k);
    }
}

/* Whether the master has DELIFEQ: asked of a key nobody holds (a master
 * without it answers an error). */
static bool has_delifeq(cost_run *r)
{
    char key[COST_KEY_SIZE];
    key_of(r, (size_t)2 * COST_KEYS, key);
    redisReply *reply = redisCommand(r->c, "DELIFEQ %s v", key);
    bool has = reply != NULL && reply->type == REDIS_REPLY_INTEGER;
    if (reply != NULL)
        freeReplyObject(reply);
    return has;
}

/* SCRIPT LOAD of the library's source; the SHA must be the library's. */
static bool load_script(cost_run *r, const rl_script *s)
{
    redisReply *reply = redisCommand(r->c, "SCRIPT LOAD %s", s->source);
    bool ok = reply != NULL && reply->type == REDIS_REPLY_STRING && reply->len == 40;
    if (!ok) {
        fail_on(r, "SCRIPT LOAD", reply);
    } else if (strcmp(reply->str, s->sha) != 0) {
        char why[HOLD_WHY_SIZE];
        snprintf(why, sizeof(why), "SCRIPT LOAD of the %s script: SHA %.40s, not %.40s", s->name,
                 reply->str, s->sha);
        ok = fail(r, why);
    }
    if (reply != NULL)
        freeReplyObject(reply);
    return ok;
}

/* ---- The measure -------------------------------------------------------- */

/* The master's counters at one instant. */
typedef struct cost_stats {
    int64_t calls, usec; /* the commands': EVALSHA's, SET's, or a pair's */
    double cpu_s;
} cost_stats;

/* The counters of the commands named (NULL-terminated), summed. */
static bool read_stats_of(cost_run *r, const char *const *commands, cost_stats *s)
{
    redisReply *reply = redisCommand(r->c, "INFO commandstats");
    bool ok = reply != NULL && reply->type == REDIS_REPLY_STRING;
    s->calls = s->usec = 0;
    for (size_t i = 0; ok && commands[i] != NULL; i++) {
        int64_t calls = 0;
        int64_t usec = 0;
        ok = hold_command_stats(reply->str, commands[i], &calls, &usec);
        s->calls += calls;
        s->usec += usec;
    }
    if (!ok)
        fail_on(r, "INFO commandstats", reply);
    if (reply != NULL)
        freeReplyObject(reply);
    if (!ok)
        return false;
    char why[HOLD_WHY_SIZE] = "";
    s->cpu_s = hold_read_cpu_s(r->c, why, sizeof(why));
    return s->cpu_s >= 0 || fail(r, why);
}

/* The counters now, less a: added to side, for COST_KEYS locks. */
static bool add_deltas(cost_run *r, const char *const *commands, const cost_stats *a,
                       script_cost_side *side)
{
    cost_stats b;
    if (!read_stats_of(r, commands, &b))
        return false;
    side->calls += b.calls - a->calls;
    side->usec += b.usec - a->usec;
    side->cpu_s += b.cpu_s - a->cpu_s;
    side->locks += COST_KEYS;
    return true;
}

/* How a phase extends every key once. */
typedef enum cost_way { COST_SINGLE, COST_BATCH, COST_PLAIN } cost_way;

/* Every key extended once, singly, in batches or without a script; the
 * master's counters' deltas added to side. */
static bool extend_phase(cost_run *r, cost_way way, script_cost_side *side)
{
    cost_stats a;
    const char *command = way == COST_PLAIN ? "set" : "evalsha";
    const char *const commands[] = {command, NULL};
    if (!read_stats_of(r, commands, &a))
        return false;
    bool ok = false;
    if (way == COST_BATCH)
        ok = pipeline(r, COST_KEYS / COST_GROUPS, append_batch, all_one,
                      "EVALSHA of the batch script");
    else if (way == COST_SINGLE)
        ok = pipeline(r, COST_KEYS, append_single, is_one, "EVALSHA of the extend script");
    else
        ok = pipeline(r, COST_KEYS, append_plain, is_value, "SET ... IFEQ ... GET");
    return ok && add_deltas(r, commands, &a, side);
}

/* Every pair key acquired and released once, with the release script or
 * without; the master's counters' deltas added to side. */
static bool pair_phase(cost_run *r, bool plain, script_cost_side *side)
{
    static const char *const script_commands[] = {"set", "evalsha", NULL};
    static const char *const plain_commands[] = {"set", "delifeq", "publish", NULL};
    const char *const *commands = plain ? plain_commands : script_commands;
    cost_stats a;
    if (!read_stats_of(r, commands, &a))
        return false;
    bool ok = plain ? pipeline(r, (size_t)COST_KEYS * PAIR_PLAIN_COMMANDS, append_pair_plain,
                               check_pair_plain, "SET NX, DELIFEQ, PUBLISH")
                    : pipeline(r, (size_t)COST_KEYS * PAIR_SCRIPT_COMMANDS, append_pair_script,
                               check_pair_script, "SET NX, EVALSHA of the release script");
    return ok && add_deltas(r, commands, &a, side);
}

/* Whether the master counted only our calls: another client's would be
 * in the figures. */
static bool only_ours(cost_run *r, const script_cost_side *side, int64_t sent,
                      const char *command)
{
    if (side->calls == sent && side->cpu_s >= 0 && side->usec >= 0)
        return true;
    char why[HOLD_WHY_SIZE];
    snprintf(why, sizeof(why), "master 0 counted %lld %s calls for the %lld sent (others "
             "ran meanwhile) or its counters went back", (long long)side->calls, command,
             (long long)sent);
    return fail(r, why);
}

static bool measure(cost_run *r)
{
    hold_script_cost *out = r->out;
    if (!pipeline(r, COST_KEYS, append_set, is_ok, "SET") ||
        !load_script(r, &rl_extend_script) || !load_script(r, &rl_extend_batch_script))
        return false;
    out->has_plain = has_set_ifeq(r);
    for (unsigned round = 0; round < COST_ROUNDS; round++)
        if (!extend_phase(r, COST_SINGLE, &out->single) ||
            !extend_phase(r, COST_BATCH, &out->batch) ||
            (out->has_plain && !extend_phase(r, COST_PLAIN, &out->plain)))
            return false;
    if (!only_ours(r, &out->single, (int64_t)COST_ROUNDS * COST_KEYS, "EVALSHA") ||
        !only_ours(r, &out->batch, (int64_t)COST_ROUNDS * COST_KEYS / COST_GROUPS, "EVALSHA") ||
        (out->has_plain && !only_ours(r, &out->plain, (int64_t)COST_ROUNDS * COST_KEYS, "SET")))
        return false;
    if (!load_script(r, &rl_release_script))
        return false;
    out->has_plain_release = has_delifeq(r);
    for (unsigned round = 0; round < COST_ROUNDS; round++)
        if (!pair_phase(r, false, &out->pair_script) ||
            (out->has_plain_release && !pair_phase(r, true, &out->pair_plain)))
            return false;
    const int64_t pairs = (int64_t)COST_ROUNDS * COST_KEYS;
    return only_ours(r, &out->pair_script, pairs * PAIR_SCRIPT_COMMANDS, "SET and EVALSHA") &&
           (!out->has_plain_release ||
            only_ours(r, &out->pair_plain, pairs * PAIR_PLAIN_COMMANDS,
                      "SET, DELIFEQ and PUBLISH"));
}

/* The keys deleted, on a fresh connection when the measure broke its; a
 * failure here leaves the measure's figures and reason as they are. */
static bool delete_keys(cost_run *r, const bench_masters *ms)
{
    if (r->c->err) {
        redisFree(r->c);
        r->c = hold_master_connect(ms, 0, COST_TIMEOUT_MS);
        if (r->c == NULL)
            return false;
    }
    char why[HOLD_WHY_SIZE] = "";
    char *measure_why = r->why_not;
    r->why_not = why;
    r->deadline_ns = tc_now_ns() + COST_MAX_NS;
    bool ok = pipeline(r, (COST_KEYS + COST_DEL_CHUNK - 1) / COST_DEL_CHUNK, append_del,
                       is_integer, "DEL");
    r->why_not = measure_why;
    return ok;
}

void hold_script_cost_measure(const bench_masters *ms, const char *prefix, hold_script_cost *out)
{
    memset(out, 0, sizeof(*out));
    out->keys = COST_KEYS;
    out->rounds = COST_ROUNDS;
    out->groups = COST_GROUPS;
    cost_run r = {.prefix = prefix, .out = out, .why_not = out->why_not};
    if (ms->n == 0) {
        fail(&r, "no master");
        out->keys_deleted = true;
        return;
    }
    int64_t start = tc_now_ns();
    r.tag = (unsigned long)start ^ ((unsigned long)getpid() << 16);
    r.deadline_ns = start + COST_MAX_NS;
    r.c = hold_master_connect(ms, 0, COST_TIMEOUT_MS);
    if (r.c == NULL) {
        fail(&r, "master 0: cannot connect");
        out->keys_deleted = true; /* none set */
        return;
    }
    out->measured = measure(&r);
    out->keys_deleted = delete_keys(&r, ms);
    out->seconds = (double)(tc_now_ns() - start) / 1e9;
    if (r.c != NULL)
        redisFree(r.c);
}
