/* SPDX-License-Identifier: BSD-3-Clause */
/* The requests as RESP, checked byte for byte against hiredis's own
 * formatter, and the EVAL fallback built from an EVALSHA. */
#include "command.h"
#include "resources.h"
#include "scripts.h"
#include "server_info.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmd written by us, compared with hiredis's formatting of the same: the
 * same bytes, and NUL-terminated like hiredis's (which reads its formatted
 * commands as C strings). */
static void assert_same_as_hiredis(const rl_command *cmd, const char *expected, int expected_len)
{
    size_t size = rl_command_size(cmd);
    char *ours = malloc(size + 1);
    memset(ours, 'x', size + 1);
    rl_command_write(cmd, ours);
    cr_assert_eq(size, (size_t)expected_len, "sizes %zu and %d", size, expected_len);
    cr_assert_eq(memcmp(ours, expected, size), 0, "bytes differ");
    cr_assert_eq(expected[size], '\0');
    cr_assert_eq(ours[size], '\0', "not NUL-terminated");
    free(ours);
}

Test(scripts, acquire_is_set_nx_px)
{
    rl_command cmd;
    char *expected = NULL;
    rl_keys r = rl_keys_one("r", 1);
    rl_command_acquire(&cmd, &r, "v", 1, 30000, NULL, 0);
    int len = redisFormatCommand(&expected, "SET r v NX PX 30000");
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);
}

Test(scripts, binary_keys_and_long_values_are_written_as_is)
{
    static const char key[] = {'k', '\0', '\n', '\r', (char)0xff};
    char value[1000];
    memset(value, 'x', sizeof(value));
    rl_command cmd;
    char *expected = NULL;
    rl_keys k = rl_keys_one(key, sizeof(key));
    rl_command_acquire(&cmd, &k, value, sizeof(value), 1, NULL, 0);
    int len = redisFormatCommand(&expected, "SET %b %b NX PX %d", key, sizeof(key), value,
                                 sizeof(value), 1);
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);
}

Test(scripts, release_extend_inspect_and_ping)
{
    rl_command cmd;
    char *expected = NULL;
    int len;

    rl_keys res = rl_keys_one("res", 3);
    rl_command_release(&cmd, &res, "val", 3, false);
    len = redisFormatCommand(&expected, "EVALSHA %s 1 res val redlock:released:0:",
                             rl_release_script.sha);
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);

    rl_command_extend(&cmd, &res, "val", 3, 2147483647, false);
    len = redisFormatCommand(&expected, "EVALSHA %s 1 res val 2147483647", rl_extend_script.sha);
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);

    /* A fenced lock's token keys follow its keys. */
    rl_command_release(&cmd, &res, "val", 3, true);
    len = redisFormatCommand(&expected, "EVALSHA %s 2 res redlock:fence:res val redlock:released:0: 1",
                             rl_release_script.sha);
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);

    rl_command_extend(&cmd, &res, "val", 3, 5000, true);
    len = redisFormatCommand(&expected, "EVALSHA %s 2 res redlock:fence:res val 5000 1",
                             rl_extend_script.sha);
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);

    rl_command_inspect(&cmd, &res);
    len = redisFormatCommand(&expected, "EVALSHA %s 2 res redlock:fence:res", rl_inspect_script.sha);
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);

    rl_command_ping(&cmd);
    len = redisFormatCommand(&expected, "PING");
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);
}

Test(scripts, lengths_cross_every_digit_boundary)
{
    char big[100001];
    memset(big, 'b', sizeof(big));
    static const size_t lengths[] = {1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 99999, 100000};
    for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
        rl_command cmd;
        char *expected = NULL;
        rl_keys k = rl_keys_one(big, lengths[i]);
        rl_command_release(&cmd, &k, "v", 1, false);
        int len = redisFormatCommand(&expected, "EVALSHA %s 1 %b v redlock:released:0:",
                                     rl_release_script.sha, big, lengths[i]);
        assert_same_as_hiredis(&cmd, expected, len);
        redisFreeCommand(expected);
    }
}

Test(scripts, a_release_announces_on_its_masters_database_channel)
{
    /* Any bytes, glob characters and NULs included, are the channel's own. */
    static const char resource[] = "a*[b]?\0c";
    size_t resource_len = sizeof(resource) - 1;
    rl_command cmd;
    char *expected = NULL;
    rl_keys k = rl_keys_one(resource, resource_len);
    rl_command_release(&cmd, &k, "val", 3, false);
    cr_assert(rl_command_db_dependent(&cmd));
    rl_command_set_db(&cmd, 15);
    int len = redisFormatCommand(&expected, "EVALSHA %s 1 %b val redlock:released:15:",
                                 rl_release_script.sha, resource, resource_len);
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);

    rl_command other;
    rl_keys r = rl_keys_one("r", 1);
    rl_command_acquire(&other, &r, "v", 1, 10, NULL, 0);
    cr_assert_not(rl_command_db_dependent(&other));
    rl_command_set_db(&other, 3); /* no channel: nothing changes */
    len = redisFormatCommand(&expected, "SET r v NX PX 10");
    assert_same_as_hiredis(&other, expected, len);
    redisFreeCommand(expected);
}

Test(scripts, a_channel_name_gives_back_its_resource_for_its_database_only)
{
    char prefix[RL_CHANNEL_PREFIX_MAX];
    size_t prefix_len = rl_channel_prefix(2147483647, prefix);
    cr_assert_eq(prefix_len, strlen("redlock:released:2147483647:"));
    cr_assert_eq(memcmp(prefix, "redlock:released:2147483647:", prefix_len), 0);

    static const char name[] = "redlock:released:7:x\0y";
    size_t len = 0;
    const char *resource = rl_channel_resource(name, sizeof(name) - 1, 7, &len);
    cr_assert_eq(resource, name + strlen("redlock:released:7:"));
    cr_assert_eq(len, 3);
    cr_assert_null(rl_channel_resource(name, sizeof(name) - 1, 0, &len));
    cr_assert_null(rl_channel_resource(name, 5, 7, &len));
    cr_assert_null(rl_channel_resource("redlock:released:70:x", 21, 7, &len));
}

/* The written RESP of cmd, malloc'ed. */
static char *written(const rl_command *cmd, size_t *len)
{
    *len = rl_command_size(cmd);
    char *out = malloc(*len + 1);
    rl_command_write(cmd, out);
    return out;
}

Test(scripts, eval_fallback_keeps_binary_arguments)
{
    static const char key[] = {'k', '\0', '\n', 'y'};
    rl_command cmd;
    rl_keys k = rl_keys_one(key, sizeof(key));
    rl_command_extend(&cmd, &k, "v a l", 5, 1234, false);
    size_t len;
    char *evalsha = written(&cmd, &len);
    char *eval = NULL;
    char *expected = NULL;
    long eval_len = rl_evalsha_to_eval(evalsha, len, &rl_extend_script, &eval);
    int expected_len = redisFormatCommand(&expected, "EVAL %s 1 %b %b %lld",
                                          rl_extend_script.source, key, sizeof(key), "v a l",
                                          (size_t)5, 1234LL);
    cr_assert_eq(eval_len, expected_len);
    cr_assert_eq(memcmp(eval, expected, (size_t)eval_len), 0);
    cr_assert_eq(eval[eval_len], '\0', "not NUL-terminated");
    free(eval);
    free(evalsha);
    redisFreeCommand(expected);
}

Test(scripts, eval_fallback_refuses_other_commands)
{
    rl_command cmd;
    size_t len;
    char *eval = NULL;
    rl_keys res = rl_keys_one("res", 3);
    rl_command_acquire(&cmd, &res, "val", 3, 1000, NULL, 0);
    char *set = written(&cmd, &len);
    cr_assert_eq(rl_evalsha_to_eval(set, len, &rl_release_script, &eval), -1);
    cr_assert_null(eval);
    free(set);
    /* An EVALSHA of the other script is refused too. */
    rl_command_release(&cmd, &res, "val", 3, false);
    char *release = written(&cmd, &len);
    cr_assert_eq(rl_evalsha_to_eval(release, len, &rl_extend_script, &eval), -1);
    free(release);
}

Test(scripts, several_resources_are_sorted_keys_of_one_script_call)
{
    const void *resources[] = {"b", "a\0z", "ab", "a"};
    size_t lens[] = {1, 3, 2, 1};
    size_t block_len;
    cr_assert_eq(rl_keys_check(resources, lens, 4, &block_len), REDLOCK_OK);
    char *block = malloc(block_len);
    rl_keys keys;
    rl_keys_store(&keys, block, resources, lens, 4);
    cr_assert_eq(keys.count, 4);

    rl_command cmd;
    char *expected = NULL;
    rl_command_acquire(&cmd, &keys, "val", 3, 1500, NULL, 0);
    int len = redisFormatCommand(&expected, "EVALSHA %s 4 a %b ab b val 1500",
                                 rl_acquire_script.sha, "a\0z", (size_t)3);
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);

    /* The reentrant form: the owner token last. */
    rl_command_acquire(&cmd, &keys, "val", 3, 1500, "me", 2);
    len = redisFormatCommand(&expected, "EVALSHA %s 4 a %b ab b val 1500 me",
                             rl_acquire_script.sha, "a\0z", (size_t)3);
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);

    rl_command_release(&cmd, &keys, "val", 3, false);
    rl_command_set_db(&cmd, 2);
    len = redisFormatCommand(&expected, "EVALSHA %s 4 a %b ab b val redlock:released:2:",
                             rl_release_script.sha, "a\0z", (size_t)3);
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);
    free(block);
}

Test(scripts, one_resource_reentrant_is_the_acquire_script)
{
    rl_keys r = rl_keys_one("r", 1);
    rl_command cmd;
    char *expected = NULL;
    rl_command_acquire(&cmd, &r, "v", 1, 10, "owner", 5);
    cr_assert_eq(cmd.script, &rl_acquire_script);
    int len = redisFormatCommand(&expected, "EVALSHA %s 1 r v 10 owner", rl_acquire_script.sha);
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);
}

/* Fencing's requests name the counter's key last, after the resources. */
Test(scripts, fencing_requests_name_the_counter_key_last)
{
    static const void *const res[] = {"b", "a"};
    static const size_t lens[] = {1, 1};
    size_t block_len;
    cr_assert_eq(rl_keys_check(res, lens, 2, &block_len), REDLOCK_OK);
    char block[16];
    rl_keys keys;
    rl_keys_store(&keys, block, res, lens, 2);
    rl_command cmd;
    char *expected = NULL;
    rl_command_fenced_acquire(&cmd, &keys, "v", 1, 10, NULL, 0);
    int len = redisFormatCommand(&expected, "EVALSHA %s 3 a b redlock:fence v 10",
                                 rl_fenced_acquire_script.sha);
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);

    rl_keys one = rl_keys_one("r", 1);
    rl_command_fenced_acquire(&cmd, &one, "v", 1, 10, "o", 1);
    len = redisFormatCommand(&expected, "EVALSHA %s 2 r redlock:fence v 10 o",
                             rl_fenced_acquire_script.sha);
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);

    rl_command_fence_confirm(&cmd, &one, "v", 1, UINT64_C(18446744073709551615));
    len = redisFormatCommand(&expected, "EVALSHA %s 3 r redlock:fence redlock:fence:r v 18446744073709551615",
                             rl_fence_confirm_script.sha);
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);

    rl_command_fence_read(&cmd);
    len = redisFormatCommand(&expected, "EVALSHA %s 1 redlock:fence", rl_fence_read_script.sha);
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);

    rl_command_fence_seed(&cmd, 5, "abc");
    len = redisFormatCommand(&expected, "EVALSHA %s 1 redlock:fence 5 abc",
                             rl_fence_seed_script.sha);
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);
    rl_command_fence_seed(&cmd, 0, NULL);
    len = redisFormatCommand(&expected, "EVALSHA %s 1 redlock:fence 0", rl_fence_seed_script.sha);
    assert_same_as_hiredis(&cmd, expected, len);
    redisFreeCommand(expected);
}

Test(scripts, a_set_refuses_duplicates_too_many_and_too_much)
{
    size_t block_len;
    const void *dup[] = {"x", "y", "x"};
    size_t dup_lens[] = {1, 1, 1};
    cr_assert_eq(rl_keys_check(dup, dup_lens, 3, &block_len), REDLOCK_EINVAL);
    /* A prefix is not a duplicate. */
    const void *prefix[] = {"xy", "x"};
    size_t prefix_lens[] = {2, 1};
    cr_assert_eq(rl_keys_check(prefix, prefix_lens, 2, &block_len), REDLOCK_OK);
    cr_assert_eq(block_len, 3 + 2 * 4);
    cr_assert_eq(rl_keys_check(prefix, prefix_lens, 0, &block_len), REDLOCK_EINVAL);

    static char names[REDLOCK_MAX_RESOURCES + 1][4];
    const void *many[REDLOCK_MAX_RESOURCES + 1];
    size_t many_lens[REDLOCK_MAX_RESOURCES + 1];
    for (size_t i = 0; i <= REDLOCK_MAX_RESOURCES; i++) {
        snprintf(names[i], sizeof(names[i]), "%03zu", i);
        many[i] = names[i];
        many_lens[i] = 3;
    }
    cr_assert_eq(rl_keys_check(many, many_lens, REDLOCK_MAX_RESOURCES, &block_len), REDLOCK_OK);
    cr_assert_eq(rl_keys_check(many, many_lens, REDLOCK_MAX_RESOURCES + 1, &block_len),
                 REDLOCK_EINVAL);

    /* More than REDLOCK_MAX_RESOURCE_LEN bytes in all. */
    static char big[REDLOCK_MAX_RESOURCE_LEN / 2 + 1];
    memset(big, 'a', sizeof(big));
    static char big2[REDLOCK_MAX_RESOURCE_LEN / 2 + 1];
    memset(big2, 'b', sizeof(big2));
    const void *huge[] = {big, big2};
    size_t huge_lens[] = {sizeof(big), sizeof(big2)};
    cr_assert_eq(rl_keys_check(huge, huge_lens, 2, &block_len), REDLOCK_EINVAL);
    huge_lens[1] = sizeof(big2) - 2;
    cr_assert_eq(rl_keys_check(huge, huge_lens, 2, &block_len), REDLOCK_OK);
}

/* The library's own keys are never a lock's. */
Test(scripts, the_librarys_own_keys_are_not_resources)
{
    const char *own[] = {"redlock:fence", "redlock:fence:x", RL_RESTART_MARKER_KEY,
                         RL_RESTART_GUARD_KEY, "redlock:restart:other"};
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        cr_expect_not(rl_resource_valid(own[i], strlen(own[i])), "%s", own[i]);
    const char *users[] = {"redlock:fencex", "redlock:restart", "locks:redlock:restart:marker"};
    for (size_t i = 0; i < sizeof(users) / sizeof(users[0]); i++)
        cr_expect(rl_resource_valid(users[i], strlen(users[i])), "%s", users[i]);
}

Test(scripts, shas_are_40_hex_digits)
{
    cr_assert_eq(strlen(rl_release_script.sha), 40);
    cr_assert_eq(strspn(rl_extend_script.sha, "0123456789abcdef"), 40);
    cr_assert_eq(strspn(rl_inspect_script.sha, "0123456789abcdef"), 40);
    cr_assert_str_neq(rl_release_script.sha, rl_extend_script.sha);
}

/* SHA-1 (FIPS 180-4) of len bytes at data, as 40 hex digits. */
static void sha1_hex(const char *data, size_t len, char hex[41])
{
    uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    size_t total = ((len + 8) / 64 + 1) * 64;
    unsigned char *msg = calloc(total, 1);
    cr_assert_not_null(msg);
    memcpy(msg, data, len);
    msg[len] = 0x80;
    uint64_t bits = (uint64_t)len * 8;
    for (size_t i = 0; i < 8; i++)
        msg[total - 1 - i] = (unsigned char)(bits >> (8 * i));
    for (size_t off = 0; off < total; off += 64) {
        uint32_t w[80];
        for (size_t i = 0; i < 16; i++) {
            const unsigned char *p = msg + off + 4 * i;
            w[i] = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        }
        for (size_t i = 16; i < 80; i++) {
            uint32_t x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16];
            w[i] = x << 1 | x >> 31;
        }
        uint32_t v[5]; /* a, b, c, d, e */
        memcpy(v, h, sizeof(v));
        for (size_t i = 0; i < 80; i++) {
            uint32_t f;
            uint32_t k;
            if (i < 20) {
                f = (v[1] & v[2]) | (~v[1] & v[3]);
                k = 0x5A827999;
            } else if (i < 40) {
                f = v[1] ^ v[2] ^ v[3];
                k = 0x6ED9EBA1;
            } else if (i < 60) {
                f = (v[1] & v[2]) | (v[1] & v[3]) | (v[2] & v[3]);
                k = 0x8F1BBCDC;
            } else {
                f = v[1] ^ v[2] ^ v[3];
                k = 0xCA62C1D6;
            }
            uint32_t t = (v[0] << 5 | v[0] >> 27) + f + v[4] + k + w[i];
            v[4] = v[3];
            v[3] = v[2];
            v[2] = v[1] << 30 | v[1] >> 2;
            v[1] = v[0];
            v[0] = t;
        }
        for (size_t i = 0; i < 5; i++)
            h[i] += v[i];
    }
    free(msg);
    for (size_t i = 0; i < 5; i++)
        snprintf(hex + 8 * i, 9, "%08x", h[i]);
}

Test(scripts, each_sha_is_the_sha1_of_its_source)
{
    char hex[41];
    sha1_hex("abc", 3, hex);
    cr_assert_str_eq(hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
    const rl_script *all[] = {
        &rl_acquire_script,      &rl_fenced_acquire_script, &rl_fence_confirm_script,
        &rl_fence_read_script,   &rl_fence_seed_script,     &rl_release_script,
        &rl_extend_script,       &rl_inspect_script,        &rl_extend_batch_script,
        &rl_release_batch_script, &rl_restart_marker_script};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        sha1_hex(all[i]->source, strlen(all[i]->source), hex);
        cr_assert_str_eq(hex, all[i]->sha, "script %s", all[i]->name);
    }
}

Test(scripts, a_batch_script_runs_the_single_scripts_body)
{
    /* The single script's text after its helpers is the batch's function. */
    const char *body = strstr(rl_extend_script.source, "local n = ARGV[3]");
    cr_assert_not_null(body);
    cr_assert_not_null(strstr(rl_extend_batch_script.source, body));
    body = strstr(rl_release_script.source, "local n = ARGV[3]");
    cr_assert_not_null(body);
    cr_assert_not_null(strstr(rl_release_batch_script.source, body));
}

/* form written by us, part by part, against hiredis's formatting of each
 * of expected[] (NULL-terminated printf formats of %b arguments). */
static void assert_form(const rl_plain_form *form, const char *const *fmts,
                        const char *const (*args)[4], const size_t (*lens)[4])
{
    size_t part_len[RL_PLAIN_PARTS];
    size_t size = rl_plain_form_size(form, part_len);
    char *ours = malloc(size + 1);
    rl_plain_form_write(form, ours);
    cr_assert_eq(ours[size], '\0', "not NUL-terminated");
    size_t at = 0;
    size_t i = 0;
    for (; fmts[i] != NULL; i++) {
        char *theirs = NULL;
        int n = redisFormatCommand(&theirs, fmts[i], args[i][0], lens[i][0], args[i][1],
                                   lens[i][1], args[i][2], lens[i][2], args[i][3], lens[i][3]);
        cr_assert_gt(n, 0);
        cr_assert_eq(part_len[i], (size_t)n, "part %zu: %zu bytes, not %d", i, part_len[i], n);
        cr_assert_eq(memcmp(ours + at, theirs, (size_t)n), 0, "part %zu differs", i);
        at += (size_t)n;
        free(theirs);
    }
    cr_assert_eq(form->parts, i);
    cr_assert_eq(at, size);
    for (; i < RL_PLAIN_PARTS; i++)
        cr_assert_eq(part_len[i], 0);
    free(ours);
}

Test(scripts, the_script_free_extension_is_set_ifeq_get)
{
    rl_plain p;
    rl_plain_extend(&p, "k\0ey", 4, "v al", 4, 30000);
    cr_assert_eq(p.forms, 1);
    cr_assert_eq(p.form[0].caps, RL_CAP_SET_IFEQ);
    cr_assert_eq(p.follow_up.parts, 0);
    const char *const fmts[] = {"SET %b %b IFEQ %b PX 30000 GET%b", NULL};
    const char *const args[][4] = {{"k\0ey", "v al", "v al", ""}};
    const size_t lens[][4] = {{4, 4, 4, 0}};
    assert_form(&p.form[0], fmts, args, lens);
}

Test(scripts, the_script_free_release_deletes_then_asks_and_announces)
{
    rl_plain p;
    rl_plain_release(&p, "r\0s", 3, "val", 3);
    cr_assert_eq(p.forms, 2);
    cr_assert_eq(p.value_len, 3);
    /* Valkey 9.0's DELIFEQ first; Redis 8.4's (and Valkey 9.2's) DELEX. */
    cr_assert_eq(p.form[0].caps, RL_CAP_DELIFEQ);
    cr_assert_eq(p.form[1].caps, RL_CAP_DELEX);
    const char *const fmts0[] = {"DELIFEQ %b %b%b%b", "PUBLISH redlock:released:0:%b %b%b%b",
                                 NULL};
    const char *const fmts1[] = {"DELEX %b IFEQ %b%b%b", "PUBLISH redlock:released:0:%b %b%b%b",
                                 NULL};
    const char *const args[][4] = {{"r\0s", "val", "", ""}, {"r\0s", "val", "", ""}};
    const size_t lens[][4] = {{3, 3, 0, 0}, {3, 3, 0, 0}};
    assert_form(&p.form[0], fmts0, args, lens);
    assert_form(&p.form[1], fmts1, args, lens);
    /* Nothing deleted: EXISTS tells another's from nothing, on any server. */
    cr_assert_eq(p.follow_up.caps, 0);
    const char *const fmts2[] = {"EXISTS %b%b%b%b", NULL};
    const char *const args2[][4] = {{"r\0s", "", "", ""}};
    const size_t lens2[][4] = {{3, 0, 0, 0}};
    assert_form(&p.follow_up, fmts2, args2, lens2);
}
