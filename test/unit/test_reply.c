/* SPDX-License-Identifier: BSD-3-Clause */
/* What replies mean, for each kind of round and each handshake step. The
 * replies are parsed from RESP by hiredis's own reader, as on a connection. */
#include "reply.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <string.h>

/* The one reply in resp (freeReplyObject() it). */
static redisReply *parse(const char *resp)
{
    redisReader *reader = redisReaderCreate();
    cr_assert_not_null(reader);
    cr_assert_eq(redisReaderFeed(reader, resp, strlen(resp)), REDIS_OK);
    void *reply = NULL;
    cr_assert_eq(redisReaderGetReply(reader, &reply), REDIS_OK, "%s", reader->errstr);
    cr_assert_not_null(reply, "incomplete reply: %s", resp);
    redisReaderFree(reader);
    return reply;
}

/* The outcome of resp for kind; the meaning in *out when not NULL. */
static int outcome(rl_round_kind kind, const char *resp, rl_reply_meaning *out)
{
    redisReply *reply = parse(resp);
    rl_reply_meaning meaning;
    rl_reply_read(kind, reply, &meaning);
    if (out != NULL) {
        /* Pointers into the reply are checked before it is freed. */
        *out = meaning;
        out->detail = NULL;
        out->value = NULL;
    }
    freeReplyObject(reply);
    return meaning.outcome;
}

Test(reply, acquire)
{
    cr_assert_eq(outcome(RL_ROUND_ACQUIRE, "+OK\r\n", NULL), REDLOCK_MASTER_OK);
    cr_assert_eq(outcome(RL_ROUND_ACQUIRE, "$-1\r\n", NULL), REDLOCK_MASTER_HELD);
    cr_assert_eq(outcome(RL_ROUND_ACQUIRE, "$2\r\nOK\r\n", NULL), REDLOCK_MASTER_ERROR,
                 "a bulk OK is not SET's status reply");
    cr_assert_eq(outcome(RL_ROUND_ACQUIRE, "+OKAY\r\n", NULL), REDLOCK_MASTER_ERROR);
    /* The acquire script (several resources, or reentrant): 1 set, 0 taken. */
    cr_assert_eq(outcome(RL_ROUND_ACQUIRE, ":1\r\n", NULL), REDLOCK_MASTER_OK);
    cr_assert_eq(outcome(RL_ROUND_ACQUIRE, ":0\r\n", NULL), REDLOCK_MASTER_HELD);
    cr_assert_eq(outcome(RL_ROUND_ACQUIRE, ":2\r\n", NULL), REDLOCK_MASTER_ERROR);
    cr_assert_eq(outcome(RL_ROUND_ACQUIRE, ":-1\r\n", NULL), REDLOCK_MASTER_ERROR);
    cr_assert_eq(outcome(RL_ROUND_ACQUIRE, "-NOSCRIPT x\r\n", NULL), RL_REPLY_NOSCRIPT,
                 "the acquire script may be missing; a SET round takes it as an error");
}

Test(reply, a_fenced_acquire_says_ok_with_its_counter_or_its_run)
{
    rl_reply_meaning m;
    cr_assert_eq(outcome(RL_ROUND_ACQUIRE, "*2\r\n:1\r\n$2\r\n41\r\n", &m), REDLOCK_MASTER_OK);
    cr_assert_eq(m.counter, 41);
    cr_assert_eq(outcome(RL_ROUND_ACQUIRE, "*2\r\n:1\r\n:7\r\n", &m), REDLOCK_MASTER_OK);
    cr_assert_eq(m.counter, 7);
    redisReply *reply = parse("*3\r\n:1\r\n$-1\r\n$40\r\n"
                              "0123456789abcdef0123456789abcdef01234567\r\n");
    rl_reply_read(RL_ROUND_ACQUIRE, reply, &m);
    cr_assert_eq(m.outcome, REDLOCK_MASTER_OK);
    cr_assert_eq(m.counter, -1, "no counter in use");
    cr_assert_not_null(m.run_id);
    cr_assert_eq(memcmp(m.run_id, "0123456789abcdef0123456789abcdef01234567", 40), 0);
    freeReplyObject(reply);
    cr_assert_eq(outcome(RL_ROUND_ACQUIRE, ":0\r\n", &m), REDLOCK_MASTER_HELD);
    /* Anything else is not an answer: a counter that is not a decimal
     * below 10^18, a run_id of the wrong length, another shape. */
    static const char *const bad[] = {
        "*2\r\n:1\r\n$2\r\n-1\r\n",
        "*2\r\n:1\r\n$0\r\n\r\n",
        "*2\r\n:1\r\n$19\r\n1000000000000000000\r\n",
        "*2\r\n:1\r\n:-1\r\n",
        "*2\r\n:0\r\n:1\r\n",
        "*1\r\n:1\r\n",
        "*3\r\n:1\r\n$-1\r\n$3\r\nabc\r\n",
        "*3\r\n:1\r\n$-1\r\n$40\r\n0123456789abcdef0123456789abcdef0123456\n\r\n",
        "*3\r\n:1\r\n$-1\r\n$40\r\n0123456789ABCDEF0123456789abcdef01234567\r\n",
        "*3\r\n:1\r\n:5\r\n$40\r\n0123456789abcdef0123456789abcdef01234567\r\n",
        "*4\r\n:1\r\n$-1\r\n$1\r\nx\r\n$1\r\ny\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(outcome(RL_ROUND_ACQUIRE, bad[i], NULL), REDLOCK_MASTER_ERROR, "%zu", i);
}

Test(reply, fencing_rounds)
{
    rl_reply_meaning m;
    /* Round 2: confirmed; a key absent; another value; not in use. */
    cr_assert_eq(outcome(RL_ROUND_FENCE, ":1\r\n", &m), REDLOCK_MASTER_OK);
    cr_assert_eq(outcome(RL_ROUND_FENCE, ":0\r\n", &m), REDLOCK_MASTER_ABSENT);
    cr_assert_eq(m.counter, -1);
    cr_assert_eq(outcome(RL_ROUND_FENCE, ":-1\r\n", &m), REDLOCK_MASTER_HELD);
    cr_assert_eq(outcome(RL_ROUND_FENCE, ":-2\r\n", &m), REDLOCK_MASTER_ABSENT);
    cr_assert_eq(m.counter, -2, "a counter not in use is told apart");
    cr_assert_eq(outcome(RL_ROUND_FENCE, ":2\r\n", NULL), REDLOCK_MASTER_ERROR);
    /* Seeding's reads: in use with its counter; not in use, with what it
     * holds, or none. */
    cr_assert_eq(outcome(RL_ROUND_FENCE_READ, "*2\r\n:1\r\n$2\r\n12\r\n", &m),
                 REDLOCK_MASTER_OK);
    cr_assert_eq(m.counter, 12);
    cr_assert_eq(outcome(RL_ROUND_FENCE_READ, "*2\r\n:0\r\n$2\r\n34\r\n", &m),
                 REDLOCK_MASTER_ABSENT);
    cr_assert_eq(m.counter, 34);
    cr_assert_eq(outcome(RL_ROUND_FENCE_READ, "*2\r\n:0\r\n$-1\r\n", &m),
                 REDLOCK_MASTER_ABSENT);
    cr_assert_eq(m.counter, -1);
    cr_assert_eq(outcome(RL_ROUND_FENCE_READ, "*1\r\n:0\r\n", &m), REDLOCK_MASTER_ABSENT);
    cr_assert_eq(m.counter, -1);
    cr_assert_eq(outcome(RL_ROUND_FENCE_READ, "*2\r\n:0\r\n$1\r\nx\r\n", NULL),
                 REDLOCK_MASTER_ERROR);
    cr_assert_eq(outcome(RL_ROUND_FENCE_READ, "*1\r\n:1\r\n", NULL), REDLOCK_MASTER_ERROR);
    cr_assert_eq(outcome(RL_ROUND_FENCE_READ, ":1\r\n", NULL), REDLOCK_MASTER_ERROR);
    /* Seeding: done, already in use, or the master's run changed. */
    cr_assert_eq(outcome(RL_ROUND_FENCE_SEED, ":1\r\n", NULL), REDLOCK_MASTER_OK);
    cr_assert_eq(outcome(RL_ROUND_FENCE_SEED, ":0\r\n", NULL), REDLOCK_MASTER_OK);
    cr_assert_eq(outcome(RL_ROUND_FENCE_SEED, ":-1\r\n", NULL), REDLOCK_MASTER_ABSENT);
    cr_assert_eq(outcome(RL_ROUND_FENCE_SEED, ":2\r\n", NULL), REDLOCK_MASTER_ERROR);
    cr_assert_eq(outcome(RL_ROUND_FENCE_SEED, "-NOSCRIPT x\r\n", NULL), RL_REPLY_NOSCRIPT);
}

Test(reply, release_and_extend)
{
    static const rl_round_kind kinds[] = {RL_ROUND_RELEASE, RL_ROUND_EXTEND};
    for (size_t i = 0; i < 2; i++) {
        cr_assert_eq(outcome(kinds[i], ":1\r\n", NULL), REDLOCK_MASTER_OK);
        cr_assert_eq(outcome(kinds[i], ":0\r\n", NULL), REDLOCK_MASTER_ABSENT);
        cr_assert_eq(outcome(kinds[i], ":-1\r\n", NULL), REDLOCK_MASTER_HELD);
        cr_assert_eq(outcome(kinds[i], ":-2\r\n", NULL), REDLOCK_MASTER_ERROR);
        cr_assert_eq(outcome(kinds[i], "+OK\r\n", NULL), REDLOCK_MASTER_ERROR);
        cr_assert_eq(outcome(kinds[i], "$-1\r\n", NULL), REDLOCK_MASTER_ERROR);
        cr_assert_eq(outcome(kinds[i], "-NOSCRIPT No matching script\r\n", NULL),
                     RL_REPLY_NOSCRIPT);
    }
}

Test(reply, a_release_counts_the_subscribers_that_heard_it)
{
    /* 1 + the subscribers its announcement reached; an extend says 1. */
    cr_assert_eq(outcome(RL_ROUND_RELEASE, ":4\r\n", NULL), REDLOCK_MASTER_OK);
    cr_assert_eq(outcome(RL_ROUND_EXTEND, ":2\r\n", NULL), REDLOCK_MASTER_ERROR);
    redisReply *reply = parse(":4\r\n");
    rl_reply_meaning m;
    rl_reply_read(RL_ROUND_RELEASE, reply, &m);
    cr_assert_eq(m.listeners, 3);
    freeReplyObject(reply);
    reply = parse(":1\r\n");
    rl_reply_read(RL_ROUND_RELEASE, reply, &m);
    cr_assert_eq(m.listeners, 0);
    freeReplyObject(reply);
}

Test(reply, errors_keep_their_text)
{
    redisReply *reply = parse("-READONLY You can't write against a read only replica.\r\n");
    rl_reply_meaning m;
    rl_reply_read(RL_ROUND_ACQUIRE, reply, &m);
    cr_assert_eq(m.outcome, REDLOCK_MASTER_ERROR);
    cr_assert_eq(m.detail, reply->str);
    cr_assert_eq(m.detail_len, reply->len);
    freeReplyObject(reply);
    cr_assert_eq(outcome(RL_ROUND_RELEASE, "-NOAUTH Authentication required.\r\n", NULL),
                 REDLOCK_MASTER_AUTH_FAILED);
    cr_assert_eq(outcome(RL_ROUND_PING, "-WRONGPASS invalid username-password pair\r\n", NULL),
                 REDLOCK_MASTER_AUTH_FAILED);

    reply = parse(":7\r\n");
    rl_reply_read(RL_ROUND_EXTEND, reply, &m);
    cr_assert_eq(m.detail_len, strlen("unexpected reply"));
    cr_assert_eq(memcmp(m.detail, "unexpected reply", m.detail_len), 0);
    freeReplyObject(reply);
}

Test(reply, ping)
{
    cr_assert_eq(outcome(RL_ROUND_PING, "+PONG\r\n", NULL), REDLOCK_MASTER_OK);
    cr_assert_eq(outcome(RL_ROUND_PING, "$4\r\nPONG\r\n", NULL), REDLOCK_MASTER_ERROR);
    cr_assert_eq(outcome(RL_ROUND_PING, "-LOADING Redis is loading\r\n", NULL),
                 REDLOCK_MASTER_ERROR);
}

Test(reply, inspect)
{
    redisReply *reply = parse("*3\r\n$3\r\nabc\r\n:500\r\n$-1\r\n");
    rl_reply_meaning m;
    rl_reply_read(RL_ROUND_INSPECT, reply, &m);
    cr_assert_eq(m.outcome, REDLOCK_MASTER_OK);
    cr_assert_eq(m.value_len, 3);
    cr_assert_eq(memcmp(m.value, "abc", 3), 0);
    cr_assert_eq(m.pttl_ms, 500);
    cr_assert_eq(m.counter, -1, "no token");
    freeReplyObject(reply);

    cr_assert_eq(outcome(RL_ROUND_INSPECT, "*3\r\n$-1\r\n:-2\r\n$-1\r\n", &m),
                 REDLOCK_MASTER_OK);
    cr_assert_eq(m.pttl_ms, -2);
    cr_assert_eq(m.value_len, 0);
    cr_assert_eq(outcome(RL_ROUND_INSPECT, "*3\r\n$1\r\nv\r\n:-1\r\n$-1\r\n", &m),
                 REDLOCK_MASTER_OK);
    cr_assert_eq(m.pttl_ms, -1, "no expiry");
    /* A fenced lock's token. */
    cr_assert_eq(outcome(RL_ROUND_INSPECT, "*3\r\n$1\r\nv\r\n:9\r\n$2\r\n42\r\n", &m),
                 REDLOCK_MASTER_OK);
    cr_assert_eq(m.counter, 42);
    /* A token key tampered with is no token, and no reason to fail. */
    static const char *const no_token[] = {
        "*3\r\n$1\r\nv\r\n:9\r\n$2\r\n4x\r\n",
        "*3\r\n$1\r\nv\r\n:9\r\n$1\r\n0\r\n",
        "*3\r\n$1\r\nv\r\n:9\r\n$0\r\n\r\n",
        "*3\r\n$1\r\nv\r\n:9\r\n$20\r\n12345678901234567890\r\n",
        "*3\r\n$1\r\nv\r\n:9\r\n*0\r\n",
    };
    for (size_t i = 0; i < sizeof(no_token) / sizeof(no_token[0]); i++) {
        cr_assert_eq(outcome(RL_ROUND_INSPECT, no_token[i], &m), REDLOCK_MASTER_OK, "%s",
                     no_token[i]);
        cr_assert_eq(m.counter, -1, "%s", no_token[i]);
        cr_assert_eq(m.pttl_ms, 9);
    }

    static const char *const bad[] = {
        "*1\r\n$1\r\nv\r\n",                 /* too short */
        "*2\r\n$1\r\nv\r\n:1\r\n",           /* too short: no token */
        "*4\r\n$1\r\nv\r\n:1\r\n:1\r\n:1\r\n", /* too long */
        "*3\r\n:1\r\n:1\r\n$-1\r\n",         /* a number for the value */
        "*3\r\n$1\r\nv\r\n$1\r\n1\r\n$-1\r\n", /* a string for the PTTL */
        "*3\r\n*0\r\n:1\r\n$-1\r\n",         /* a nested array */
        "*-1\r\n",
        "$-1\r\n",
        ":1\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(outcome(RL_ROUND_INSPECT, bad[i], &m), REDLOCK_MASTER_ERROR, "%s", bad[i]);
        cr_assert_eq(m.pttl_ms, -2);
        cr_assert_eq(m.value_len, 0);
    }
}

/* The verdict on resp for step, with its reason in reason. */
/* The verdict on reply for step (reply is freed), its reason in reason. */
static rl_handshake_verdict judge(rl_handshake_step step, redisReply *reply,
                                  const char *password, char *reason, size_t len)
{
    reason[0] = '\0';
    rl_handshake_verdict v = rl_reply_handshake(step, reply, password, reason, len);
    freeReplyObject(reply);
    return v;
}

static rl_handshake_verdict handshake(rl_handshake_step step, const char *resp,
                                      const char *password, char *reason, size_t len)
{
    return judge(step, parse(resp), password, reason, len);
}

Test(reply, handshake_accepts_the_expected_replies)
{
    char reason[192];
    cr_assert_eq(handshake(RL_HS_AUTH, "+OK\r\n", "pw", reason, sizeof(reason)),
                 RL_HANDSHAKE_ACCEPTED);
    cr_assert_eq(handshake(RL_HS_SELECT, "+OK\r\n", NULL, reason, sizeof(reason)),
                 RL_HANDSHAKE_ACCEPTED);
    for (int step = RL_HS_FIRST_LOAD; step <= RL_HS_LAST_LOAD; step++) {
        const rl_script *script = rl_handshake_script((rl_handshake_step)step);
        cr_assert_not_null(script);
        char resp[64];
        snprintf(resp, sizeof(resp), "$40\r\n%s\r\n", script->sha);
        cr_assert_eq(handshake((rl_handshake_step)step, resp, NULL, reason, sizeof(reason)),
                     RL_HANDSHAKE_ACCEPTED);
    }
    cr_assert_eq(handshake(RL_HS_INFO, "$16\r\n# Server\r\nrun_id\r\n", NULL, reason,
                           sizeof(reason)),
                 RL_HANDSHAKE_ACCEPTED);
}

Test(reply, handshake_refusals)
{
    char reason[192];
    cr_assert_eq(handshake(RL_HS_AUTH, "-ERR invalid password\r\n", "pw", reason, sizeof(reason)),
                 RL_HANDSHAKE_AUTH_FAILED, "any error to AUTH is a refusal");
    cr_assert_str_eq(reason, "AUTH: ERR invalid password");
    cr_assert_eq(handshake(RL_HS_SELECT, "-NOAUTH Authentication required.\r\n", NULL, reason,
                           sizeof(reason)),
                 RL_HANDSHAKE_AUTH_FAILED);
    cr_assert_eq(handshake(RL_HS_SELECT, "-ERR DB index is out of range\r\n", NULL, reason,
                           sizeof(reason)),
                 RL_HANDSHAKE_FAILED);
    cr_assert_str_eq(reason, "SELECT: ERR DB index is out of range");
    cr_assert_eq(handshake(RL_HS_INFO, "-NOPERM this user has no permissions\r\n", NULL, reason,
                           sizeof(reason)),
                 RL_HANDSHAKE_INFO_REFUSED);
    cr_assert_eq(handshake(RL_HS_INFO, "-WRONGPASS invalid\r\n", NULL, reason, sizeof(reason)),
                 RL_HANDSHAKE_AUTH_FAILED);
    cr_assert_eq(handshake(RL_HS_LOAD_EXTEND, "$40\r\n0000000000000000000000000000000000000000\r\n",
                           NULL, reason, sizeof(reason)),
                 RL_HANDSHAKE_FAILED, "not the script's SHA1");
    cr_assert_str_eq(reason, "SCRIPT LOAD extend: unexpected reply");
    cr_assert_eq(handshake(RL_HS_LOAD_RELEASE, "+OK\r\n", NULL, reason, sizeof(reason)),
                 RL_HANDSHAKE_FAILED);
}

/* A SCRIPT LOAD refused is no network failure: the ACL user may not run
 * scripts, or the server runs none; it says what the lock needs. */
Test(reply, handshake_scripts_refused)
{
    char reason[192];
    cr_assert_eq(handshake(RL_HS_LOAD_RELEASE,
                           "-NOPERM this user has no permissions to run the 'script|load' "
                           "command\r\n",
                           NULL, reason, sizeof(reason)),
                 RL_HANDSHAKE_SCRIPTS_REFUSED);
    cr_assert_str_eq(reason, "SCRIPT LOAD: NOPERM this user has no permissions to run the "
                             "'script|load' command; the lock needs scripts (EVALSHA, EVAL, "
                             "SCRIPT LOAD: ACL +@scripting)");
    cr_assert_eq(handshake(RL_HS_LOAD_EXTEND, "-ERR unknown command 'SCRIPT'\r\n", NULL, reason,
                           sizeof(reason)),
                 RL_HANDSHAKE_SCRIPTS_REFUSED, "a server with scripting removed");
    cr_assert_eq(handshake(RL_HS_LOAD_EXTEND, "-ERR scripting is disabled\r\n", NULL, reason,
                           sizeof(reason)),
                 RL_HANDSHAKE_SCRIPTS_REFUSED, "a managed service with Lua turned off");
    cr_assert_eq(handshake(RL_HS_LOAD_EXTEND, "-NOAUTH Authentication required.\r\n", NULL,
                           reason, sizeof(reason)),
                 RL_HANDSHAKE_AUTH_FAILED);
    /* Passing troubles are not a refusal: the master is tried again. */
    cr_assert_eq(handshake(RL_HS_LOAD_EXTEND,
                           "-LOADING Redis is loading the dataset in memory\r\n", NULL, reason,
                           sizeof(reason)),
                 RL_HANDSHAKE_FAILED);
    cr_assert_eq(handshake(RL_HS_LOAD_EXTEND, "-ERR no way\r\n", NULL, reason, sizeof(reason)),
                 RL_HANDSHAKE_FAILED);
    char tiny[16];
    cr_assert_eq(handshake(RL_HS_LOAD_EXTEND, "-NOPERM no\r\n", NULL, tiny, sizeof(tiny)),
                 RL_HANDSHAKE_SCRIPTS_REFUSED);
    cr_assert_lt(strlen(tiny), sizeof(tiny), "cut to its buffer");
}

Test(reply, handshake_never_quotes_the_password)
{
    char reason[192];
    cr_assert_eq(handshake(RL_HS_AUTH, "-ERR bad password s3cr3t-pw\r\n", "s3cr3t-pw", reason,
                           sizeof(reason)),
                 RL_HANDSHAKE_AUTH_FAILED);
    cr_assert_null(strstr(reason, "s3cr3t"), "%s", reason);
    cr_assert_not_null(strstr(reason, "withheld"), "%s", reason);
}

Test(reply, run_id)
{
    static const char info[] = "# Server\r\nredis_version:7.0.15\r\n"
                               "run_id:0123456789abcdef0123456789abcdef01234567\r\n"
                               "tcp_port:6379\r\n";
    char resp[256];
    snprintf(resp, sizeof(resp), "$%zu\r\n%s\r\n", strlen(info), info);
    redisReply *reply = parse(resp);
    char run_id[RL_RUN_ID_SIZE] = "x";
    rl_reply_run_id(reply, run_id);
    cr_assert_str_eq(run_id, "0123456789abcdef0123456789abcdef01234567");
    freeReplyObject(reply);

    static const char *const none[] = {"$10\r\nrun_id:abc\r\n", "$5\r\nhello\r\n", ":1\r\n",
                                       "$-1\r\n", "*1\r\n$1\r\nx\r\n", "-ERR\r\n"};
    for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
        reply = parse(none[i]);
        strcpy(run_id, "x");
        rl_reply_run_id(reply, run_id);
        cr_assert_str_eq(run_id, "", "%s", none[i]);
        freeReplyObject(reply);
    }
}

Test(reply, handshake_withholds_a_password_cut_by_the_quote_limit)
{
    /* The password begins just before the 160th byte of the reply: a quote
     * cut there would show the start of it. */
    char resp[512];
    char text[300];
    memset(text, 'e', sizeof(text));
    memcpy(text, "ERR ", 4);
    memcpy(text + 155, " s3cr3t-pw", 10);
    text[165] = '\0';
    snprintf(resp, sizeof(resp), "-%s\r\n", text);
    char reason[192];
    cr_assert_eq(handshake(RL_HS_AUTH, resp, "s3cr3t-pw", reason, sizeof(reason)),
                 RL_HANDSHAKE_AUTH_FAILED);
    cr_assert_null(strstr(reason, "s3cr"), "%s", reason);
    cr_assert_not_null(strstr(reason, "withheld"), "%s", reason);
}

/* An error reply holding text, whatever its bytes: hiredis 1.x's reader
 * refuses CR and LF in a simple error (RESP3 bulk errors may hold them), so
 * the reply is parsed with stand-in bytes of the same length, then filled. */
static redisReply *error_reply(const char *text)
{
    size_t len = strlen(text);
    char resp[512];
    cr_assert_lt(len + 3, sizeof(resp));
    resp[0] = '-';
    memset(resp + 1, 'x', len);
    memcpy(resp + 1 + len, "\r\n", 3);
    redisReply *reply = parse(resp);
    cr_assert_eq(reply->len, len);
    memcpy(reply->str, text, len);
    return reply;
}

static rl_handshake_verdict handshake_error(rl_handshake_step step, const char *text,
                                            char *reason, size_t len)
{
    return judge(step, error_reply(text), NULL, reason, len);
}

Test(reply, handshake_reasons_are_one_printable_line)
{
    /* A simple error ends at CRLF, but may hold a lone LF, any byte but CR
     * LF, and (in a bulk-sized RESP3 error) anything. */
    char reason[192];
    cr_assert_eq(handshake_error(RL_HS_SELECT, "ERR first\nsecond\rthird\ttab\x01\\", reason,
                                 sizeof(reason)),
                 RL_HANDSHAKE_FAILED);
    cr_assert_str_eq(reason, "SELECT: ERR first\\nsecond\\x0dthird\\ttab\\x01\\\\");

    /* Bytes after a NUL are shown too: the reply's length counts. */
    redisReply *reply = parse("-ERR a\r\n");
    reply->str[4] = '\0';
    rl_reply_handshake(RL_HS_AUTH, reply, "pw", reason, sizeof(reason));
    cr_assert_str_eq(reason, "AUTH: ERR \\x00");
    freeReplyObject(reply);
}

Test(reply, handshake_reasons_are_cut_whole)
{
    /* The quote is cut to fit, never inside an escape. */
    char text[200];
    memset(text, '\n', sizeof(text));
    text[sizeof(text) - 1] = '\0';
    char reason[32];
    cr_assert_eq(handshake_error(RL_HS_SELECT, text, reason, sizeof(reason)),
                 RL_HANDSHAKE_FAILED);
    cr_assert_str_eq(reason, "SELECT: \\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n");
}

/* The outcome of resp to the script-free form of kind, for value. */
static int plain_outcome(rl_round_kind kind, const char *resp, const char *value)
{
    redisReply *reply = parse(resp);
    rl_reply_meaning meaning;
    rl_reply_read_plain(kind, NULL, 0, reply, value, strlen(value), &meaning);
    freeReplyObject(reply);
    return meaning.outcome;
}

/* The meaning of a script-free release's replies: the compare-and-delete's
 * (del) and PUBLISH's, each in RESP. */
static rl_reply_meaning plain_release(const char *del, const char *publish)
{
    static rl_part_reply part; /* the detail points into it */
    redisReply *r = parse(del);
    rl_part_reply_keep(&part, r);
    freeReplyObject(r);
    redisReply *reply = parse(publish);
    rl_reply_meaning meaning;
    rl_reply_read_plain(RL_ROUND_RELEASE, &part, 1, reply, "mine", 4, &meaning);
    freeReplyObject(reply);
    return meaning;
}

static int follow_up(rl_round_kind kind, const char *resp)
{
    redisReply *reply = parse(resp);
    rl_reply_meaning meaning;
    rl_reply_read_follow_up(kind, reply, &meaning);
    freeReplyObject(reply);
    return meaning.outcome;
}

Test(reply, a_script_free_release_answers_as_the_script)
{
    /* Deleted: OK, and the PUBLISH counted the listeners (the script's
     * 1 + heard). */
    rl_reply_meaning m = plain_release(":1\r\n", ":3\r\n");
    cr_assert_eq(m.outcome, REDLOCK_MASTER_OK);
    cr_assert_eq(m.listeners, 3);
    /* A PUBLISH the ACL refuses hears nobody, as the script's pcall. */
    m = plain_release(":1\r\n", "-NOPERM no channel\r\n");
    cr_assert_eq(m.outcome, REDLOCK_MASTER_OK);
    cr_assert_eq(m.listeners, 0);
    /* Not deleted: the follow-up EXISTS tells another's hold from nothing. */
    cr_assert_eq(plain_release(":0\r\n", ":2\r\n").outcome, RL_REPLY_FOLLOW_UP);
    cr_assert_eq(follow_up(RL_ROUND_RELEASE, ":1\r\n"), REDLOCK_MASTER_HELD);
    cr_assert_eq(follow_up(RL_ROUND_RELEASE, ":0\r\n"), REDLOCK_MASTER_ABSENT);
    cr_assert_eq(follow_up(RL_ROUND_RELEASE, ":2\r\n"), REDLOCK_MASTER_ERROR);
    cr_assert_eq(follow_up(RL_ROUND_RELEASE, "-NOPERM no\r\n"), RL_REPLY_PLAIN_REFUSED);
    cr_assert_eq(follow_up(RL_ROUND_EXTEND, ":1\r\n"), REDLOCK_MASTER_ERROR);
    /* A reentrant holder's hash: the script tells it apart. */
    cr_assert_eq(plain_release("-WRONGTYPE Operation\r\n", ":0\r\n").outcome,
                 RL_REPLY_ASK_SCRIPT);
    /* The delete refused (an ACL without DELIFEQ): the script, and the
     * error's text is the detail. */
    m = plain_release("-NOPERM User u has no permissions to run the 'delifeq' command\r\n",
                      ":0\r\n");
    cr_assert_eq(m.outcome, RL_REPLY_PLAIN_REFUSED);
    cr_assert_eq(strncmp(m.detail, "NOPERM User u", 13), 0);
    cr_assert_eq(plain_release("-ERR busy\r\n", ":0\r\n").outcome, REDLOCK_MASTER_ERROR);
    cr_assert_eq(plain_release("-NOSCRIPT odd\r\n", ":0\r\n").outcome, REDLOCK_MASTER_ERROR,
                 "no script was asked for");
    cr_assert_eq(plain_release(":2\r\n", ":0\r\n").outcome, REDLOCK_MASTER_ERROR);
    cr_assert_eq(plain_release("+OK\r\n", ":0\r\n").outcome, REDLOCK_MASTER_ERROR);
}

Test(reply, a_long_error_is_kept_cut)
{
    char resp[300] = "-ERR ";
    memset(resp + 5, 'x', 250);
    memcpy(resp + 255, "\r\n", 3);
    redisReply *r = parse(resp);
    rl_part_reply part;
    rl_part_reply_keep(&part, r);
    freeReplyObject(r);
    cr_assert_eq(part.type, REDIS_REPLY_ERROR);
    cr_assert_eq(strlen(part.text), RL_PART_TEXT - 1);
    cr_assert_eq(strncmp(part.text, "ERR xxx", 7), 0);
}

Test(reply, a_script_free_extension_answers_as_the_script)
{
    /* SET key value IFEQ value PX ttl GET: the old value, set or not. */
    cr_assert_eq(plain_outcome(RL_ROUND_EXTEND, "$4\r\nmine\r\n", "mine"), REDLOCK_MASTER_OK);
    cr_assert_eq(plain_outcome(RL_ROUND_EXTEND, "$-1\r\n", "mine"), REDLOCK_MASTER_ABSENT);
    cr_assert_eq(plain_outcome(RL_ROUND_EXTEND, "$5\r\nother\r\n", "mine"), REDLOCK_MASTER_HELD);
    cr_assert_eq(plain_outcome(RL_ROUND_EXTEND, "$5\r\nmine2\r\n", "mine"), REDLOCK_MASTER_HELD,
                 "a value that begins with ours is another's");
    cr_assert_eq(plain_outcome(RL_ROUND_EXTEND, "$3\r\nmin\r\n", "mine"), REDLOCK_MASTER_HELD);
    /* A key of another type: the script tells a reentrant hash from the rest. */
    cr_assert_eq(plain_outcome(RL_ROUND_EXTEND, "-WRONGTYPE Operation against a key\r\n", "mine"),
                 RL_REPLY_ASK_SCRIPT);
    /* The command refused, by the ACL or a server without it: the script,
     * and no more of it on the connection. */
    cr_assert_eq(plain_outcome(RL_ROUND_EXTEND, "-NOPERM no\r\n", "mine"),
                 RL_REPLY_PLAIN_REFUSED);
    cr_assert_eq(plain_outcome(RL_ROUND_EXTEND, "-ERR syntax error\r\n", "mine"),
                 RL_REPLY_PLAIN_REFUSED);
    cr_assert_eq(plain_outcome(RL_ROUND_EXTEND, "-ERR unknown command 'x'\r\n", "mine"),
                 RL_REPLY_PLAIN_REFUSED);
    cr_assert_eq(plain_outcome(RL_ROUND_EXTEND, "-ERR out of memory\r\n", "mine"),
                 REDLOCK_MASTER_ERROR);
    cr_assert_eq(plain_outcome(RL_ROUND_EXTEND, "-NOAUTH\r\n", "mine"),
                 REDLOCK_MASTER_AUTH_FAILED);
    cr_assert_eq(plain_outcome(RL_ROUND_EXTEND, "+OK\r\n", "mine"), REDLOCK_MASTER_ERROR,
                 "without GET the reply would not tell absent from another's");
    cr_assert_eq(plain_outcome(RL_ROUND_EXTEND, ":1\r\n", "mine"), REDLOCK_MASTER_ERROR);
}
