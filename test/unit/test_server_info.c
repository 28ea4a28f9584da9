/* SPDX-License-Identifier: BSD-3-Clause */
/* What a master is, from its INFO server reply: the server's name and
 * version, and the commands that spare a script. */
#include "wire/server_info.h"

#include <criterion/criterion.h>
#include <string.h>

static void read_info(const char *text, int type, rl_server_info *out)
{
    redisReply reply;
    memset(&reply, 0, sizeof(reply));
    reply.type = type;
    reply.str = (char *)text;
    reply.len = strlen(text);
    rl_server_info_read(&reply, out);
}

/* The INFO server sections of the servers people run (abridged, as they
 * answer: CRLF line ends). */
static const char redis7[] = "# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\n"
                             "redis_mode:standalone\r\nrun_id:ab\r\n";
static const char redis8[] = "# Server\r\nredis_version:8.0.2\r\nredis_mode:standalone\r\n";
static const char redis84[] = "# Server\r\nredis_version:8.4.0\r\nredis_mode:standalone\r\n";
static const char valkey8[] = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\n"
                              "valkey_version:8.1.1\r\nvalkey_release_stage:ga\r\n"
                              "server_mode:standalone\r\n";
static const char valkey80[] = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\n"
                               "valkey_version:8.0.2\r\n";
static const char valkey9[] = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\n"
                              "valkey_version:9.1.2\r\nvalkey_release_stage:ga\r\n";

Test(server_info, each_server_is_named_with_its_own_version)
{
    static const struct {
        const char *info;
        const char *text;
        unsigned caps;
    } cases[] = {
        {redis7, "redis 7.0.15", 0},
        {redis8, "redis 8.0.2", 0},
        {redis84, "redis 8.4.0", RL_CAP_SET_IFEQ | RL_CAP_DELEX},
        /* Valkey's redis_version (7.2.4) is not its version. */
        {valkey80, "valkey 8.0.2", 0},
        {valkey8, "valkey 8.1.1", RL_CAP_SET_IFEQ},
        {valkey9, "valkey 9.1.2", RL_CAP_SET_IFEQ | RL_CAP_DELIFEQ},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        rl_server_info s;
        read_info(cases[i].info, REDIS_REPLY_STRING, &s);
        cr_expect_str_eq(s.text, cases[i].text);
        cr_expect_eq(s.caps, cases[i].caps, "%s: caps %u, expected %u", cases[i].text, s.caps,
                     cases[i].caps);
    }
}

Test(server_info, versions_decide_the_commands)
{
    cr_expect_eq(rl_server_caps("valkey", 9, 2),
                 RL_CAP_SET_IFEQ | RL_CAP_DELIFEQ | RL_CAP_DELEX);
    cr_expect_eq(rl_server_caps("valkey", 10, 0),
                 RL_CAP_SET_IFEQ | RL_CAP_DELIFEQ | RL_CAP_DELEX);
    cr_expect_eq(rl_server_caps("redis", 8, 3), 0);
    cr_expect_eq(rl_server_caps("redis", 9, 0), RL_CAP_SET_IFEQ | RL_CAP_DELEX);
    cr_expect_eq(rl_server_caps("keydb", 9, 0), 0, "a server we do not know: scripts only");
}

/* Anything else is unknown: scripts only, nothing shown. */
Test(server_info, a_reply_that_names_no_version_is_unknown)
{
    static const char *const infos[] = {
        "",
        "# Server\r\nrun_id:ab\r\n",
        "# Server\r\nredis_version:\r\n",
        "# Server\r\nredis_version:x.y\r\n",
        "# Server\r\nserver_name:valkey\r\nredis_version:7.2.4\r\n", /* no valkey_version */
        "# Server\r\nserver_name:Val key\r\nvalkey_version:9.0.0\r\n",
        "# Server\r\nredis_version:8.4.0 \x01\r\n",
        "# Server\r\nxredis_version:8.4.0\r\n",
    };
    for (size_t i = 0; i < sizeof(infos) / sizeof(infos[0]); i++) {
        rl_server_info s;
        read_info(infos[i], REDIS_REPLY_STRING, &s);
        cr_expect_str_eq(s.text, "", "case %zu: %s", i, s.text);
        cr_expect_eq(s.caps, 0U, "case %zu", i);
    }
    rl_server_info s;
    read_info(redis84, REDIS_REPLY_ERROR, &s);
    cr_expect_str_eq(s.text, "");
    rl_server_info_read(NULL, &s);
    cr_expect_str_eq(s.text, "");
    cr_expect_eq(s.caps, 0U);
}

/* The first line, without a newline before it, and a last line without
 * CRLF read as any other. */
Test(server_info, the_first_and_last_lines_count)
{
    rl_server_info s;
    read_info("redis_version:8.4.1", REDIS_REPLY_STRING, &s);
    cr_expect_str_eq(s.text, "redis 8.4.1");
    read_info("# Server\nserver_name:valkey\nvalkey_version:9.0.0", REDIS_REPLY_STRING, &s);
    cr_expect_str_eq(s.text, "valkey 9.0.0");
}

Test(server_info, each_command_has_its_name_for_the_log)
{
    cr_assert_str_eq(rl_server_cap_name(RL_CAP_SET_IFEQ), "SET IFEQ");
    cr_assert_str_eq(rl_server_cap_name(RL_CAP_DELIFEQ), "DELIFEQ");
    cr_assert_str_eq(rl_server_cap_name(RL_CAP_DELEX), "DELEX");
    cr_assert_str_eq(rl_server_cap_name(RL_CAP_DELIFEQ | RL_CAP_DELEX), "DELIFEQ");
    cr_assert_str_eq(rl_server_cap_name(0), "a script-free command");
}
