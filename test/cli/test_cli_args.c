/* The tool's arguments: times, bad arguments and bad --node forms, each
 * refused with 64, one line on stderr and nothing locked. */
#include "cli_harness.h"

#include <criterion/criterion.h>
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

Test(cli_args, ttl_takes_milliseconds_seconds_and_minutes)
{
    static const struct {
        const char *arg;
        long long ms;
    } cases[] = {{"1500", 1500}, {"1500ms", 1500}, {"2s", 2000}, {"1m", 60000}};
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        const char *value = cli_acquire(cases[k].arg, cases[k].arg); /* resource = the TIME */
        /* Read right after the acquire: within 500 ms of the TTL. */
        size_t n = cli_masters_with_pttl(cases[k].arg, value, cases[k].ms - 500, cases[k].ms);
        cr_assert_geq(n, 3, "--ttl %s: PTTL not in (%lld, %lld] on a majority", cases[k].arg,
                      cases[k].ms - 500, cases[k].ms);
    }
}

Test(cli_args, bad_times_exit_64)
{
    const char *bad[] = {"0",   "-5", "5h", "abc", "", "1.5s", "10 s", "99999999999999999999999",
                         "ms"};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        expect_usage_error(
            cli_run(CLI_ARGS("--config", cli.config, "acquire", "--ttl", bad[k], "job"), NULL, T));
        expect_usage_error(cli_run(
            CLI_ARGS("--config", cli.config, "extend", "--ttl", bad[k], "job",
                     "0123456789abcdef0123456789abcdef"),
            NULL, T));
    }
    const char *bad_wait[] = {"-1", "abc", "5h", ""};
    for (size_t k = 0; k < sizeof(bad_wait) / sizeof(bad_wait[0]); k++)
        expect_usage_error(cli_run(
            CLI_ARGS("--config", cli.config, "acquire", "--wait", bad_wait[k], "job"), NULL, T));
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
        CLI_ARGS("--config", cli.config, "acquire", "job", "extra"),
        CLI_ARGS("--config", cli.config, "status"),
        CLI_ARGS("--config", cli.config, "release"),
        CLI_ARGS("--config", cli.config, "release", "job"),
        CLI_ARGS("--config", cli.config, "release", "job", "0123456789abcdef0123456789abcdef",
                 "extra"),
        CLI_ARGS("--config", cli.config, "extend"),
        CLI_ARGS("--config", cli.config, "extend", "job"),
        CLI_ARGS("--config", cli.config, "ping", "extra"),
        CLI_ARGS("--config", cli.config, "run"),
        CLI_ARGS("--config", cli.config, "run", "job"),
        CLI_ARGS("--config", cli.config, "run", "job", "--"),
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
