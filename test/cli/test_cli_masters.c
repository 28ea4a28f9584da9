/* SPDX-License-Identifier: BSD-3-Clause */
/* Masters that misbehave, as the tool reports them: an error reply with
 * control bytes, a server that is not Redis, one that never answers. The
 * exit status, one escaped line per problem, and no wait beyond the
 * configured timeouts. The masters are scripted fakes, given with --node
 * (built-in timeouts: connect 500 ms, command 50 ms). */
#include "cli_harness.h"
#include "fake_master.h"

#include <criterion/criterion.h>
#include <string.h>

#define T CLI_RUN_TIMEOUT_MS
#define SLACK_MS 3000 /* a loaded machine; a hang would take far longer */

static fake_master *fake;

static void one_master(void)
{
    cli_setup(1, NULL);
}

static void teardown(void)
{
    cli_teardown(); /* the tool first: it may be connected to the fake */
    fake_master_stop(fake);
    fake = NULL;
}

TestSuite(cli_masters, .init = one_master, .fini = teardown, .timeout = 120);

/* "127.0.0.1:PORT" of a new fake. */
static const char *start_fake(fake_master_mode mode, const char *error_reply)
{
    fake = fake_master_start(mode, error_reply);
    cr_assert_not_null(fake);
    return cli_format("127.0.0.1:%d", fake_master_port(fake));
}

/* The line `acquire --wait 0 job` prints when its only master failed. */
static const char *not_acquired(const char *node, const char *why)
{
    return cli_format("redlock: could not acquire job: too few masters reachable to form a "
                      "quorum (0 of 1 masters said OK, 1 needed; 1 attempt; 1 of 1 masters "
                      "failed, e.g. %s: %s)\n",
                      node, why);
}

Test(cli_masters, an_error_reply_is_shown_escaped_on_one_line)
{
    const char *node = start_fake(FAKE_MASTER_ERROR, "ERR no\x1b[2Jway");
    const char *why = "SCRIPT LOAD: ERR no\\x1b[2Jway";
    const cli_result *r = cli_run(CLI_ARGS("-n", node, "ping"), NULL, T);
    cli_expect_exit(r, 69);
    cr_assert_str_eq(r->out, cli_format("%s  unreachable  (%s)\n", node, why));
    cr_assert_str_eq(r->err, "redlock: ping: too few masters reachable to form a quorum\n");

    r = cli_run(CLI_ARGS("-n", node, "acquire", "--wait", "0", "job"), NULL, T);
    cli_expect_exit(r, 69);
    cr_assert_str_empty(r->out);
    cr_assert_str_eq(r->err, not_acquired(node, why));

    /* The library's own lines quote the reply too: escaped as well. */
    r = cli_run(CLI_ARGS("-vvv", "-n", node, "acquire", "--wait", "0", "job"), NULL, T);
    cli_expect_exit(r, 69);
    cr_assert_not_null(strstr(r->err, why), "%s", r->err);
    cr_assert_null(strchr(r->err, '\x1b'), "a raw control byte on stderr:\n%s", r->err);
}

Test(cli_masters, a_server_that_is_not_redis)
{
    const char *node = start_fake(FAKE_MASTER_GARBAGE, NULL);
    const char *why = "connection lost: Protocol error, got \"\\xff\" as reply type byte";
    const cli_result *r = cli_run(CLI_ARGS("-n", node, "status", "job"), NULL, T);
    cli_expect_exit(r, 69);
    cr_assert_str_eq(r->out, cli_format("%s  unreachable  (%s)\n", node, why));
    cr_assert_str_eq(r->err, "redlock: status job: too few masters reachable to form a quorum\n");
    r = cli_run(CLI_ARGS("-n", node, "acquire", "--wait", "0", "job"), NULL, T);
    cli_expect_exit(r, 69);
    cr_assert_str_eq(r->err, not_acquired(node, why));
}

Test(cli_masters, a_server_that_never_answers_costs_the_connect_timeout)
{
    const char *node = start_fake(FAKE_MASTER_SILENT, NULL);
    const char *why = "handshake timed out after 500 ms";
    const cli_result *r = cli_run(CLI_ARGS("-n", node, "acquire", "--wait", "0", "job"), NULL, T);
    cli_expect_exit(r, 69);
    cr_assert_str_eq(r->err, not_acquired(node, why));
    cr_assert(r->elapsed_ms >= 450 && r->elapsed_ms <= 500 + 50 + SLACK_MS, "took %.0f ms",
              r->elapsed_ms);
    r = cli_run(CLI_ARGS("-n", node, "ping"), NULL, T);
    cli_expect_exit(r, 69);
    cr_assert_str_eq(r->out, cli_format("%s  unreachable  (%s)\n", node, why));
    cr_assert_leq(r->elapsed_ms, 500 + 50 + SLACK_MS);
}
