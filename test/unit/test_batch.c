/* SPDX-License-Identifier: BSD-3-Clause */
/* Batched requests without a server: the one request written from the
 * requests' own, checked byte for byte against hiredis's formatter, which
 * requests a round lets batch, and what each request is told of the
 * batch's reply. */
#include "batch.h"
#include "command.h"
#include "master/request.h"
#include "round/quorum.h"
#include "reply.h"
#include "resources.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

/* A request whose bytes are cmd's. */
static rl_request *request(const rl_command *cmd)
{
    size_t len = rl_command_size(cmd);
    rl_request *req = calloc(1, sizeof(*req) + len + 1);
    cr_assert_not_null(req);
    char *bytes = (char *)(req + 1);
    rl_command_write(cmd, bytes);
    req->cmd = bytes;
    req->cmd_len = len;
    return req;
}

static void drop(rl_request *req)
{
    free(req);
}

static void assert_same(const char *ours, size_t len, const char *expected, int expected_len)
{
    cr_assert_not_null(ours);
    cr_assert_eq(len, (size_t)expected_len, "sizes %zu and %d", len, expected_len);
    cr_assert_eq(memcmp(ours, expected, len), 0, "bytes differ:\n%.*s\n%s", (int)len, ours,
                 expected);
    cr_assert_eq(ours[len], '\0', "not NUL-terminated");
}

Test(batch, extensions_are_one_evalsha_with_each_locks_keys_and_arguments)
{
    static const char key[] = {'k', '\0', '\r', '\n'};
    rl_keys one = rl_keys_one(key, sizeof(key));
    rl_keys res = rl_keys_one("res", 3);
    rl_command cmd;
    rl_command_extend(&cmd, &one, "v1", 2, 5000, false);
    rl_request *a = request(&cmd);
    cr_assert_eq(rl_round_batch_script(RL_ROUND_EXTEND, cmd.script), &rl_extend_batch_script);
    /* Fenced: its token key, and a third argument. */
    rl_command_extend(&cmd, &res, "value-2", 7, 1234567890, true);
    rl_request *b = request(&cmd);
    cr_assert_eq(rl_round_batch_script(RL_ROUND_EXTEND, cmd.script), &rl_extend_batch_script);

    rl_request *reqs[] = {a, b};
    size_t len = 0;
    char *ours = rl_batch_command(&rl_extend_batch_script, reqs, 2, &len);
    char *expected = NULL;
    int expected_len = redisFormatCommand(
        &expected, "EVALSHA %s 3 %b res redlock:fence:res 2 1 2 v1 5000 2 3 value-2 1234567890 1",
        rl_extend_batch_script.sha, key, sizeof(key));
    assert_same(ours, len, expected, expected_len);
    free(ours);
    redisFreeCommand(expected);
    drop(a);
    drop(b);
}

Test(batch, releases_keep_each_masters_own_request)
{
    rl_keys x = rl_keys_one("x", 1);
    rl_keys y = rl_keys_one("y", 1);
    rl_command cmd;
    rl_command_release(&cmd, &x, "vx", 2, false);
    rl_request *a = request(&cmd);
    cr_assert_eq(rl_round_batch_script(RL_ROUND_RELEASE, cmd.script), &rl_release_batch_script);
    rl_command_release(&cmd, &y, "vy", 2, false);
    /* b's master is in database 3: its own request, its own channel. */
    rl_command_set_db(&cmd, 3);
    rl_request *b = request(&cmd);

    rl_request *reqs[] = {a, b};
    size_t len = 0;
    char *ours = rl_batch_command(&rl_release_batch_script, reqs, 2, &len);
    char *expected = NULL;
    int expected_len = redisFormatCommand(
        &expected, "EVALSHA %s 2 x y p vx redlock:released:0: vy redlock:released:3:",
        rl_release_batch_script.sha);
    assert_same(ours, len, expected, expected_len);
    free(ours);
    redisFreeCommand(expected);
    drop(a);
    drop(b);
}

/* A full batch of extensions, the first one fenced (its token key and
 * flag) or plain like the others, taken apart by hiredis's reader. */
static redisReply *full_batch(bool first_fenced)
{
    rl_request *reqs[RL_BATCH_MAX];
    char names[RL_BATCH_MAX][8];
    rl_command cmd;
    for (size_t i = 0; i < RL_BATCH_MAX; i++) {
        snprintf(names[i], sizeof(names[i]), "k%zu", i);
        rl_keys k = rl_keys_one(names[i], strlen(names[i]));
        rl_command_extend(&cmd, &k, "v", 1, 10, i == 0 && first_fenced);
        reqs[i] = request(&cmd);
    }
    size_t len = 0;
    char *ours = rl_batch_command(&rl_extend_batch_script, reqs, RL_BATCH_MAX, &len);
    cr_assert_not_null(ours);
    redisReader *reader = redisReaderCreate();
    cr_assert_eq(redisReaderFeed(reader, ours, len), REDIS_OK);
    redisReply *parsed = NULL;
    cr_assert_eq(redisReaderGetReply(reader, (void **)&parsed), REDIS_OK);
    cr_assert_not_null(parsed);
    redisReaderFree(reader);
    free(ours);
    for (size_t i = 0; i < RL_BATCH_MAX; i++)
        drop(reqs[i]);
    return parsed;
}

Test(batch, a_full_batch_crosses_the_digit_boundaries)
{
    /* Every lock plain: the short form, "p" then two arguments a lock. */
    redisReply *parsed = full_batch(false);
    cr_assert_eq(parsed->elements, 3 + RL_BATCH_MAX + 1 + RL_BATCH_MAX * 2);
    cr_assert_str_eq(parsed->element[2]->str, "64");
    cr_assert_str_eq(parsed->element[3 + 63]->str, "k63");
    cr_assert_str_eq(parsed->element[3 + 64]->str, "p");
    cr_assert_str_eq(parsed->element[parsed->elements - 2]->str, "v");
    freeReplyObject(parsed);
    /* One fenced among them: every lock with its key and argument counts. */
    parsed = full_batch(true);
    cr_assert_eq(parsed->elements, 3 + RL_BATCH_MAX + 1 + 1 + RL_BATCH_MAX * 4 + 1);
    cr_assert_str_eq(parsed->element[2]->str, "65");
    cr_assert_str_eq(parsed->element[3 + 64]->str, "k63");
    cr_assert_str_eq(parsed->element[3 + 65]->str, "64");
    cr_assert_str_eq(parsed->element[3 + 66]->str, "2");
    cr_assert_str_eq(parsed->element[3 + 67]->str, "3");
    cr_assert_str_eq(parsed->element[parsed->elements - 2]->str, "v");
    freeReplyObject(parsed);
}

Test(batch, only_extensions_and_releases_by_evalsha_batch)
{
    rl_keys r = rl_keys_one("r", 1);
    rl_command cmd;
    rl_command_acquire(&cmd, &r, "v", 1, 10, NULL, 0);
    rl_request *set = request(&cmd);
    cr_assert_null(rl_round_batch_script(RL_ROUND_ACQUIRE, cmd.script));
    rl_command_inspect(&cmd, &r);
    rl_request *inspect = request(&cmd);
    cr_assert_null(rl_round_batch_script(RL_ROUND_INSPECT, cmd.script));
    /* The extend script in a round of another kind does not batch. */
    rl_command_extend(&cmd, &r, "v", 1, 10, false);
    cr_assert_null(rl_round_batch_script(RL_ROUND_FENCE, cmd.script));
    /* A request that is not the batched script's EVALSHA is refused. */
    rl_request *reqs[] = {set, inspect};
    size_t len = 0;
    cr_assert_null(rl_batch_command(&rl_extend_batch_script, reqs, 2, &len));
    cr_assert_null(rl_batch_command(&rl_inspect_script, reqs, 2, &len));
    drop(set);
    drop(inspect);
}

/* reply as hiredis reads resp. */
static redisReply *read_reply(const char *resp)
{
    redisReader *reader = redisReaderCreate();
    cr_assert_eq(redisReaderFeed(reader, resp, strlen(resp)), REDIS_OK);
    redisReply *reply = NULL;
    cr_assert_eq(redisReaderGetReply(reader, (void **)&reply), REDIS_OK);
    cr_assert_not_null(reply);
    redisReaderFree(reader);
    return reply;
}

Test(batch, each_slot_hears_its_element_or_the_whole_calls_error)
{
    redisReply *array = read_reply("*3\r\n:1\r\n:-1\r\n-WRONGTYPE Operation\r\n");
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(rl_batch_reply_for(array, 3, i), array->element[i]);
    cr_assert_not(rl_batch_noscript(array));
    /* Each element means for its lock what the single script's reply would. */
    rl_reply_meaning meaning;
    rl_reply_read(RL_ROUND_EXTEND, rl_batch_reply_for(array, 3, 0), &meaning);
    cr_assert_eq(meaning.outcome, REDLOCK_MASTER_OK);
    rl_reply_read(RL_ROUND_EXTEND, rl_batch_reply_for(array, 3, 1), &meaning);
    cr_assert_eq(meaning.outcome, REDLOCK_MASTER_HELD);
    rl_reply_read(RL_ROUND_EXTEND, rl_batch_reply_for(array, 3, 2), &meaning);
    cr_assert_eq(meaning.outcome, REDLOCK_MASTER_ERROR);
    cr_assert_eq(strncmp(meaning.detail, "WRONGTYPE", 9), 0);
    /* Not one element per request: an error for each, never a shifted answer. */
    const redisReply *short_one = rl_batch_reply_for(array, 4, 0);
    cr_assert_eq(short_one->type, REDIS_REPLY_ERROR);
    cr_assert(strstr(short_one->str, "batch") != NULL);
    freeReplyObject(array);

    redisReply *noscript = read_reply("-NOSCRIPT No matching script.\r\n");
    cr_assert_eq(rl_batch_reply_for(noscript, 2, 1), noscript);
    cr_assert(rl_batch_noscript(noscript));
    freeReplyObject(noscript);

    redisReply *busy = read_reply("-BUSY Redis is busy\r\n");
    cr_assert_eq(rl_batch_reply_for(busy, 2, 0), busy);
    cr_assert_not(rl_batch_noscript(busy));
    freeReplyObject(busy);

    redisReply *integer = read_reply(":1\r\n");
    cr_assert_eq(rl_batch_reply_for(integer, 2, 0)->type, REDIS_REPLY_ERROR);
    freeReplyObject(integer);

    cr_assert_null(rl_batch_reply_for(NULL, 2, 0));
    cr_assert_not(rl_batch_noscript(NULL));
}
