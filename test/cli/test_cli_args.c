/* SPDX-License-Identifier: BSD-3-Clause */
/* The tool's arguments: times, bad arguments and bad --node forms, each
 * refused with 64, one line on stderr and nothing locked; resources of any
 * bytes an argument can carry, shown escaped and cut in messages. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T CLI_RUN_TIMEOUT_MS

TestSuite(cli_args, .init = cli_setup_five, .fini = cli_teardown, .timeout = 120);

static void expect_usage_error(const cli_result *r)
{
    cli_expect_exit(r, 64);
    cli_expect_one_error_line(r);
    cr_assert_str_empty(r->out, "%s: stdout:\n%s", r->cmdline, r->out);
    cr_assert_eq(cli_keys_total(), 0, "%s: left keys on the masters", r->cmdline);
}

/* ---- Times --------------------------------------------------------------- */

Test(cli_args, ttl_takes_units_and_decimals)
{
    static const struct {
        const char *arg;
        long long ms;
    } cases[] = {{"2", 2000},    {"1500ms", 1500}, {"2s", 2000},      {"1m", 60000},
                 {"1.5s", 1500}, {"0.5m", 30000},  {"1m30s", 90000}, {"1h", 3600000}};
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        const char *value = cli_acquire(cases[k].arg, cases[k].arg); /* resource = the TIME */
        /* Read right after the acquire: within 500 ms of the TTL. */
        size_t n = cli_masters_with_pttl(cases[k].arg, value, cases[k].ms - 500, cases[k].ms);
        cr_assert_geq(n, 3, "--ttl %s: PTTL not in (%lld, %lld] on a majority", cases[k].arg,
                      cases[k].ms - 500, cases[k].ms);
    }
    /* -t is --ttl. */
    const cli_result *r =
        cli_run(CLI_ARGS("--config", cli.config, "acquire", "-t", "2.5s", "short"), NULL, T);
    cli_expect_exit(r, 0);
    const char *value = cli_first_line(r->out);
    cr_assert_geq(cli_masters_with_pttl("short", value, 2000, 2500), 3, "%s",
                  cli_describe_key("short"));
}

/* The message names the option, the value and the problem. */
static void expect_time_error(const char *option, const char *value, const char *why)
{
    const cli_result *r =
        cli_run(CLI_ARGS("--config", cli.config, "acquire", option, value, "job"), NULL, T);
    expect_usage_error(r);
    cr_assert_not_null(strstr(r->err, why), "%s: \"%s\" not in:\n%s", r->cmdline, why, r->err);
}

Test(cli_args, bad_times_exit_64)
{
    const char *bad[] = {"0",  "-5", "5x", "abc", "", "1.5.s", "1m30", "99999999999999999999999",
                         "ms", "forever", "500us"};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        expect_usage_error(
            cli_run(CLI_ARGS("--config", cli.config, "acquire", "--ttl", bad[k], "job"), NULL, T));
        expect_usage_error(cli_run(
            CLI_ARGS("--config", cli.config, "extend", "--ttl", bad[k], "job",
                     "0123456789abcdef0123456789abcdef"),
            NULL, T));
    }
    const char *bad_wait[] = {"-1", "abc", "5x", "", "never", "500us"};
    for (size_t k = 0; k < sizeof(bad_wait) / sizeof(bad_wait[0]); k++)
        expect_usage_error(cli_run(
            CLI_ARGS("--config", cli.config, "acquire", "--wait", bad_wait[k], "job"), NULL, T));

    /* Out of range is not "not a TIME". */
    expect_time_error("--ttl", "0", "--ttl 0: out of range");
    expect_time_error("-t", "0.4ms", "--ttl 0.4ms: below 1 ms");
    expect_time_error("-w", "500us", "--wait 500us: below 1 ms");
    expect_time_error("--ttl", "25x", "--ttl 25x: expected");
    expect_time_error("--ttl", "25d", "--ttl 25d: out of range");
    expect_time_error("--ttl", "600h", "--ttl 600h: out of range");
    expect_time_error("-w", "99999999999999999999999", "--wait 99999999999999999999999: out of range");
    expect_time_error("--wait", "abc", "--wait abc: expected");
}

Test(cli_args, run_with_a_bad_time_never_starts_cmd)
{
    const char *marker = cli_path("ran");
    expect_usage_error(cli_run(
        CLI_ARGS("--config", cli.config, "run", "--ttl", "abc", "job", "--", "touch", marker),
        NULL, T));
    expect_usage_error(cli_run(CLI_ARGS("--config", cli.config, "run", "--kill-after", "abc",
                                        "job", "--", "touch", marker),
                               NULL, T));
    cr_assert_neq(access(marker, F_OK), 0, "CMD ran");
}

/* ---- Commands, options, operands ----------------------------------------------- */

Test(cli_args, unknown_commands_and_options_exit_64)
{
    const char *const *cases[] = {
        CLI_ARGS("--config", cli.config, "frobnicate"),
        CLI_ARGS("--config", cli.config, "frobnicate", "job"),
        CLI_ARGS("--config", cli.config, "--frobnicate", "ping"),
        CLI_ARGS("--config", cli.config, "-x", "ping"),
        CLI_ARGS("--config", cli.config, "ping", "--frobnicate"),
        CLI_ARGS("--config", cli.config, "acquire", "--frobnicate", "job"),
        CLI_ARGS("--config", cli.config, "acquire", "-x", "job"),
        CLI_ARGS("--config", cli.config, "run", "--frobnicate", "job", "--", "true"),
        CLI_ARGS("--config", cli.config, "release", "--ttl", "1s", "job",
                 "0123456789abcdef0123456789abcdef"),
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
        expect_usage_error(cli_run(cases[k], NULL, T));
}

Test(cli_args, missing_or_extra_operands_exit_64)
{
    const char *const *cases[] = {
        CLI_ARGS("--config", cli.config),
        CLI_ARGS("--config", cli.config, "acquire"),
        CLI_ARGS("--config", cli.config, "acquire", "--ttl"),
        CLI_ARGS("--config", cli.config, "status"),
        CLI_ARGS("--config", cli.config, "release"),
        CLI_ARGS("--config", cli.config, "release", "job"),
        CLI_ARGS("--config", cli.config, "extend"),
        CLI_ARGS("--config", cli.config, "extend", "job"),
        CLI_ARGS("--config", cli.config, "ping", "extra"),
        CLI_ARGS("--config", cli.config, "run"),
        CLI_ARGS("--config", cli.config, "run", "job"),
        CLI_ARGS("--config", cli.config, "run", "job", "--"),
        CLI_ARGS("--config", cli.config, "run", "a", "b", "--"),
        CLI_ARGS("--config", cli.config, "run", "--", "--", "true"),
        CLI_ARGS("--config"),
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
        expect_usage_error(cli_run(cases[k], NULL, T));
}

Test(cli_args, bad_node_forms_exit_64)
{
    const char *bad[] = {"127.0.0.1:0", "127.0.0.1:99999", ":7001", "host:abc", "127.0.0.1:",
                         ""};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        expect_usage_error(cli_run(CLI_ARGS("--node", bad[k], "acquire", "job"), NULL, T));
        expect_usage_error(
            cli_run(CLI_ARGS("--node", cli_node(0), "-n", bad[k], "acquire", "job"), NULL, T));
        expect_usage_error(cli_run(
            CLI_ARGS("--config", cli.config, "--node", bad[k], "acquire", "job"), NULL, T));
    }
}

/* RESOURCE ends the options of run: what follows belongs to CMD, "--" or
 * not. */
Test(cli_args, arguments_after_the_resource_belong_to_cmd)
{
    const cli_result *r = cli_run(
        CLI_ARGS("--config", cli.config, "run", "job", "--", "printf", "%s|", "-v", "--ttl"),
        NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_str_eq(r->out, "-v|--ttl|", "%s: stdout", r->cmdline);
    r = cli_run(CLI_ARGS("--config", cli.config, "run", "job", "printf", "%s|", "--json", "-n"),
                NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_str_eq(r->out, "--json|-n|", "%s: stdout", r->cmdline);
    cr_assert_eq(cli_keys_total(), 0);
}

Test(cli_args, options_may_follow_the_operands_except_in_run)
{
    const char *value = cli_acquire("late", NULL);
    const cli_result *r = cli_run(
        CLI_ARGS("--config", cli.config, "extend", "late", value, "--ttl", "30s"), NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_geq(cli_masters_with_pttl("late", value, 29000, 30000), 3,
                  "the --ttl after the operands was not applied");
    r = cli_run(CLI_ARGS("--config", cli.config, "status", "late", "--json"), NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_eq(r->out[0], '{', "%s: not JSON:\n%s", r->cmdline, r->out);
    /* In run, what follows RESOURCE is CMD's, options included. */
    r = cli_run(CLI_ARGS("--config", cli.config, "run", "free", "echo", "--ttl", "5s"), NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_str_eq(r->out, "--ttl 5s\n", "%s: CMD did not get its arguments", r->cmdline);
}

/* ---- Resources ------------------------------------------------------------------ */

#define V32 "0123456789abcdef0123456789abcdef"

Test(cli_args, an_empty_resource_exits_64_naming_the_limit)
{
    const struct {
        const char *const *args;
        const char *message;
    } cases[] = {
        {CLI_ARGS("--config", cli.config, "acquire", ""), "acquire"},
        {CLI_ARGS("--config", cli.config, "status", ""), "status"},
        {CLI_ARGS("--config", cli.config, "release", "", V32), "release"},
        {CLI_ARGS("--config", cli.config, "extend", "", V32), "extend"},
        {CLI_ARGS("--config", cli.config, "run", "", "--", "true"), "run"},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        const cli_result *r = cli_run(cases[k].args, NULL, T);
        expect_usage_error(r);
        cr_assert_str_eq(r->err,
                         cli_format("redlock: %s: RESOURCE must be 1 to 1048576 bytes\n",
                                    cases[k].message),
                         "%s", r->cmdline);
    }
}

/* Any byte an argument can carry (all but NUL) is part of the resource:
 * locked as given, passed on to CMD as given, and shown escaped in
 * messages, so stderr stays one line. */
Test(cli_args, a_resource_with_a_newline_is_locked_as_given)
{
    const char *res = "a\nb";
    const char *value = cli_acquire(res, "30s");
    cr_assert_geq(cli_masters_holding(res, value), 3, "%s", cli_describe_key(res));
    cr_assert_eq(cli_masters_with_key("a"), 0);

    const cli_result *r = cli_run(CLI_ARGS("--config", cli.config, "status", "--json", res), NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_not_null(strstr(r->out, "{\"resource\":\"a\\nb\","), "%s: %s", r->cmdline, r->out);

    r = cli_run(CLI_ARGS("--config", cli.config, "acquire", "--wait", "0", res), NULL, T);
    cli_expect_exit(r, 75);
    cr_assert_str_eq(r->err,
                     "redlock: could not acquire a\\x0ab: the resource is held by another holder "
                     "(0 of 5 masters said OK, 3 needed; 1 attempt)\n");

    r = cli_run(CLI_ARGS("--config", cli.config, "release", res, value), NULL, T);
    cli_expect_exit(r, 0);
    cli_expect_key_gone(res, r->cmdline);
    r = cli_run(CLI_ARGS("--config", cli.config, "release", res, value), NULL, T);
    cli_expect_exit(r, 1);
    cr_assert_str_eq(r->err, "redlock: release a\\x0ab: the lock's value is no longer held on a "
                             "quorum of masters\n");

    r = cli_run(CLI_ARGS("--config", cli.config, "run", res, "--", "sh", "-c",
                         "printf %s \"$REDLOCK_RESOURCE\""),
                NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_str_eq(r->out, res, "%s: CMD got another resource", r->cmdline);
    cli_expect_key_gone(res, r->cmdline);
}

/* An argument is at most 32 pages with its NUL (the kernel's
 * MAX_ARG_STRLEN; a longer one fails execve with E2BIG before the tool
 * runs), so the tool never sees the library's 1 MiB limit. The longest
 * works; messages show its start. */
Test(cli_args, the_longest_resource_an_argument_can_carry)
{
    size_t len = (size_t)sysconf(_SC_PAGESIZE) * 32 - 1;
    char *res = cli_own(malloc(len + 1));
    memset(res, 'r', len);
    res[len] = '\0';
    const char *value = cli_acquire(res, "30s");
    cr_assert_geq(cli_masters_holding(res, value), 3);

    const cli_result *r = cli_run(CLI_ARGS("--config", cli.config, "acquire", "--wait", "0", res),
                                  NULL, T);
    cli_expect_exit(r, 75);
    char shown[97];
    memset(shown, 'r', 96);
    shown[96] = '\0';
    cr_assert_str_eq(r->err, cli_format("redlock: could not acquire %s...: the resource is held "
                                        "by another holder (0 of 5 masters said OK, 3 needed; 1 "
                                        "attempt)\n",
                                        shown));
    r = cli_run(CLI_ARGS("--config", cli.config, "release", res, value), NULL, T);
    cli_expect_exit(r, 0);
    cli_expect_key_gone(res, "release");
}
