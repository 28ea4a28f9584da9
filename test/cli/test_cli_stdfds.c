/* SPDX-License-Identifier: BSD-3-Clause */
/* The tool started with some of its standard descriptors closed (as some
 * supervisors and cron set-ups start programs): each of the eight sets of
 * fds 0 to 2, on an acquire that fails and on one that succeeds. Nothing
 * it writes may land on a descriptor it opened itself -- a connection to
 * a master above all -- and its exit status must be the usual one. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T CLI_RUN_TIMEOUT_MS
#define STDIN_BIT 1U
#define STDOUT_BIT 2U
#define STDERR_BIT 4U

TestSuite(cli_stdfds, .init = cli_setup_five, .fini = cli_teardown, .timeout = 120);

static const char *describe_closed(unsigned closed)
{
    if (closed == 0)
        return "none closed";
    return cli_format("closed:%s%s%s", closed & STDIN_BIT ? " stdin" : "",
                      closed & STDOUT_BIT ? " stdout" : "", closed & STDERR_BIT ? " stderr" : "");
}

/* Error replies the masters have sent since they started: a line written
 * into a connection to a master is an unknown command to it. */
static long long error_replies(void)
{
    long long total = 0;
    for (size_t i = 0; i < CLI_MASTERS; i++) {
        redisReply *r = fleet_command(cli.fleet, i, "INFO stats");
        cr_assert(r != NULL && r->type == REDIS_REPLY_STRING, "INFO stats on master %zu", i);
        const char *at = strstr(r->str, "total_error_replies:");
        cr_assert_not_null(at, "no total_error_replies in INFO stats of master %zu", i);
        total += atoll(at + strlen("total_error_replies:"));
        freeReplyObject(r);
    }
    return total;
}

/* What every run must show, whatever the outcome: no signal (hiredis
 * aborts on a reply it did not ask for), no error reply from a master. */
static void expect_nothing_sent_to_masters(const cli_result *r, unsigned closed, long long before)
{
    cr_assert_eq(r->signal, 0, "%s (%s): killed by signal %d\n--- stderr ---\n%s", r->cmdline,
                 describe_closed(closed), r->signal, r->err);
    long long after = error_replies();
    cr_assert_eq(after, before,
                 "%s (%s): the masters sent %lld error replies: it wrote into a connection "
                 "to a master",
                 r->cmdline, describe_closed(closed), after - before);
}

/* A held resource, acquire --wait 0: exit 75 and, with stderr open, the
 * one line saying why; the holder keeps its lock. */
Test(cli_stdfds, failed_acquire_with_any_standard_fd_closed)
{
    const char *holder = cli_acquire("held", "60s");
    for (unsigned closed = 0; closed < 8; closed++) {
        long long before = error_replies();
        const cli_result *r = cli_run_closed(
            CLI_ARGS("--config", cli.config, "acquire", "--wait", "0", "held"), closed, T);
        expect_nothing_sent_to_masters(r, closed, before);
        cr_assert_eq(r->exit_code, 75, "%s (%s): exit status %d\n--- stderr ---\n%s",
                     r->cmdline, describe_closed(closed), r->exit_code, r->err);
        cr_assert_str_empty(r->out, "%s (%s): stdout: %s", r->cmdline, describe_closed(closed),
                            r->out);
        if (!(closed & STDERR_BIT)) {
            cli_expect_one_error_line(r);
            cr_assert_not_null(strstr(r->err, "could not acquire held"), "%s (%s): %s",
                               r->cmdline, describe_closed(closed), r->err);
        }
        cr_assert_eq(cli_masters_holding("held", holder), CLI_MASTERS, "%s (%s): %s",
                     r->cmdline, describe_closed(closed), cli_describe_key("held"));
    }
}

/* A free resource, with -vv (lines on stderr while connected): exit 0,
 * the lock taken on every master and, with stdout open, its value printed
 * there; with stderr open, the acquire logged there. */
Test(cli_stdfds, acquire_with_any_standard_fd_closed)
{
    for (unsigned closed = 0; closed < 8; closed++) {
        const char *resource = cli_format("free%u", closed);
        long long before = error_replies();
        const cli_result *r = cli_run_closed(
            CLI_ARGS("-vv", "--config", cli.config, "acquire", "--ttl", "60s", resource), closed,
            T);
        expect_nothing_sent_to_masters(r, closed, before);
        cr_assert_eq(r->exit_code, 0, "%s (%s): exit status %d\n--- stderr ---\n%s", r->cmdline,
                     describe_closed(closed), r->exit_code, r->err);
        if (closed & STDERR_BIT)
            cr_assert_str_empty(r->err);
        else
            cr_assert_not_null(strstr(r->err, cli_format("info: acquire %s: success", resource)),
                               "%s (%s): stderr: %s", r->cmdline, describe_closed(closed),
                               r->err);
        if (closed & STDOUT_BIT) {
            cr_assert_str_empty(r->out);
            /* A quorum: a master whose handshake a busy machine slowed past
             * the connect timeout missed the SET, as a lock allows. */
            cr_assert_geq(cli_masters_with_key(resource), CLI_MASTERS / 2 + 1, "%s (%s): %s",
                          r->cmdline, describe_closed(closed), cli_describe_key(resource));
            continue;
        }
        const char *value = cli_first_line(r->out);
        cr_assert(cli_is_value(value) && strcmp(r->out, cli_format("%s\n", value)) == 0,
                  "%s (%s): expected the value alone on stdout, got \"%s\"", r->cmdline,
                  describe_closed(closed), r->out);
        cr_assert_geq(cli_masters_holding(resource, value), CLI_MASTERS / 2 + 1, "%s (%s): %s",
                      r->cmdline, describe_closed(closed), cli_describe_key(resource));
    }
}
