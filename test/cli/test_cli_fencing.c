/* SPDX-License-Identifier: BSD-3-Clause */
/* Fencing tokens in the tool (docs/fencing.md): `run` hands CMD a token by
 * default, `acquire --fencing` shows it, the first fenced command puts the
 * counters in use, `fencing-init` takes a floor, and a fenced failure says
 * how many counters answered. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define T CLI_RUN_TIMEOUT_MS

TestSuite(cli_fencing, .init = cli_setup_five, .fini = cli_teardown, .timeout = 120);

/* The token a `run` gave CMD; 0 when it gave none. */
static unsigned long long run_token(const char *const args[], const char *const env[])
{
    const cli_result *r = cli_run(args, env, T);
    cli_expect_exit(r, 0);
    cr_assert_neq(r->out[0], '\0', "%s: no output", r->cmdline);
    if (strcmp(r->out, "none\n") == 0)
        return 0;
    char *end = NULL;
    unsigned long long token = strtoull(r->out, &end, 10);
    cr_assert(end != r->out && strcmp(end, "\n") == 0, "%s: %s", r->cmdline, r->out);
    return token;
}

#define PRINT_TOKEN "sh", "-c", "echo \"${REDLOCK_FENCING_TOKEN:-none}\""

Test(cli_fencing, run_gives_cmd_a_token_that_grows_with_every_lock)
{
    unsigned long long last = 0;
    for (int i = 0; i < 3; i++) {
        const char *resource = i == 1 ? "other" : "job";
        unsigned long long token =
            run_token(CLI_ARGS("--config", cli.config, "run", resource, "--", PRINT_TOKEN), NULL);
        cr_assert_gt(token, last, "token %llu after %llu", token, last);
        last = token;
    }
    cli_expect_key_gone("job", "after the runs");
}

Test(cli_fencing, no_fencing_gives_no_token_not_even_an_inherited_one)
{
    static const char *const env[] = {"REDLOCK_FENCING_TOKEN=12345", NULL};
    cr_assert_eq(run_token(CLI_ARGS("--config", cli.config, "run", "--no-fencing", "job", "--",
                                    PRINT_TOKEN),
                           env),
                 0, "an unfenced run passed a token on");
    cr_assert_gt(
        run_token(CLI_ARGS("--config", cli.config, "run", "job", "--", PRINT_TOKEN), env), 0);
    cr_assert_neq(
        run_token(CLI_ARGS("--config", cli.config, "run", "job", "--", PRINT_TOKEN), env), 12345);
}

Test(cli_fencing, acquire_shows_the_token_in_json_with_fencing_only)
{
    const cli_result *r =
        cli_run(CLI_ARGS("--config", cli.config, "acquire", "--json", "plain"), NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_not_null(strstr(r->out, "\"fencing_token\":null"), "%s", r->out);
    r = cli_run(CLI_ARGS("--config", cli.config, "acquire", "--fencing", "--json", "fenced"), NULL,
                T);
    cli_expect_exit(r, 0);
    const char *at = strstr(r->out, "\"fencing_token\":");
    cr_assert_not_null(at, "%s", r->out);
    cr_assert_gt(strtoull(at + strlen("\"fencing_token\":"), NULL, 10), 0, "%s", r->out);
    /* Without --json the output stays the value alone. */
    r = cli_run(CLI_ARGS("--config", cli.config, "acquire", "--fencing", "fenced2"), NULL, T);
    cli_expect_exit(r, 0);
    cr_assert(cli_is_value(cli_first_line(r->out)), "%s", r->out);
    cr_assert_eq(strchr(r->out, '\n'), r->out + strlen(r->out) - 1, "%s", r->out);
}

Test(cli_fencing, the_config_fencing_switch_makes_acquire_fenced)
{
    cli_config_options o = {.extra = "fencing: true"};
    const char *config = cli_write_config("fenced.yaml", &o);
    const cli_result *r = cli_run(CLI_ARGS("--config", config, "acquire", "--json", "r"), NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_null(strstr(r->out, "\"fencing_token\":null"), "%s", r->out);
    cr_assert_not_null(strstr(r->out, "\"fencing_token\":"), "%s", r->out);
}

/* A new deployment (no counter on any master): the first fenced run, with
 * --wait 0, puts the counters in use from the clock and runs CMD with a
 * token; fencing-init is not needed, and leaves counters in use alone. */
Test(cli_fencing, a_new_deployment_needs_no_setup_step)
{
    for (size_t i = 0; i < CLI_MASTERS; i++)
        cr_assert_eq(fleet_del(cli.fleet, i, REDLOCK_FENCING_KEY, strlen(REDLOCK_FENCING_KEY)), 1);
    unsigned long long before_us = (unsigned long long)time(NULL) * 1000000ULL;
    unsigned long long first = run_token(
        CLI_ARGS("--config", cli.config, "run", "--wait", "0", "job", "--", PRINT_TOKEN), NULL);
    cr_assert_geq(first, before_us, "token %llu, below the clock floor", first);
    cli_expect_key_gone("job", "after the first run");
    cr_assert_gt(run_token(CLI_ARGS("--config", cli.config, "run", "--wait", "0", "job", "--",
                                    PRINT_TOKEN),
                           NULL),
                 first);
    const cli_result *r = cli_run(CLI_ARGS("--config", cli.config, "fencing-init"), NULL, T);
    cli_expect_exit(r, 0);
    for (size_t i = 0; i < CLI_MASTERS; i++)
        cr_assert_geq(fleet_fencing_counter(cli.fleet, i), (long long)first, "master %zu", i);
}

/* Counters that can give no token (at 2^53): the fenced run fails, and
 * its message does not count the masters that took the lock as if that
 * were the shortfall. */
Test(cli_fencing, a_fencing_failure_says_how_many_counters_answered)
{
    for (size_t i = 0; i < CLI_MASTERS; i++)
        cr_assert_eq(fleet_del(cli.fleet, i, REDLOCK_FENCING_KEY, strlen(REDLOCK_FENCING_KEY)), 1);
    const cli_result *r =
        cli_run(CLI_ARGS("--config", cli.config, "fencing-init", "9007199254740991"), NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_eq(run_token(CLI_ARGS("--config", cli.config, "run", "job", "--", PRINT_TOKEN), NULL),
                 9007199254740992ULL);
    r = cli_run(CLI_ARGS("--config", cli.config, "run", "--wait", "0", "job", "true"), NULL, T);
    cli_expect_exit(r, 69);
    cr_assert_not_null(strstr(r->err, "too few masters have a fencing counter in use"), "%s",
                       r->err);
    cr_assert_null(strstr(r->err, "masters said OK"), "%s", r->err);
    cr_assert_not_null(strstr(r->err, "masters took the lock, 0 with a fencing counter that can "
                                      "give a token, 3 needed"),
                       "%s", r->err);
    cli_expect_key_gone("job", r->cmdline);
}

/* A floor below 2^53, and counters in use left alone; --json; a master
 * down is shown, and a quorum is enough. */
Test(cli_fencing, fencing_init_takes_a_floor_and_leaves_counters_in_use_alone)
{
    const cli_result *r = cli_run(CLI_ARGS("--config", cli.config, "fencing-init", "x"), NULL, T);
    cli_expect_exit(r, 64);
    r = cli_run(CLI_ARGS("--config", cli.config, "fencing-init", "9007199254740992"), NULL, T);
    cli_expect_exit(r, 64);
    r = cli_run(CLI_ARGS("--config", cli.config, "fencing-init", "1", "2"), NULL, T);
    cli_expect_exit(r, 64);

    cr_assert_eq(fleet_del(cli.fleet, 0, REDLOCK_FENCING_KEY, strlen(REDLOCK_FENCING_KEY)), 1);
    cr_assert_eq(fleet_kill(cli.fleet, 4), 0);
    r = cli_run(CLI_ARGS("--config", cli.config, "fencing-init", "--json", "500"), NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_not_null(strstr(r->out, "\"status\":\"REDLOCK_OK\""), "%s", r->out);
    cr_assert_not_null(strstr(r->out, "\"floor\":500"), "%s", r->out);
    cr_assert_not_null(strstr(r->out, "\"in_use\":false"), "%s", r->out);
    cr_assert_eq(fleet_fencing_counter(cli.fleet, 0), 500, "not set to the floor");
    for (size_t i = 1; i < 4; i++)
        cr_assert_eq(fleet_fencing_counter(cli.fleet, i), 0, "a counter in use was changed");
}

/* Each master's line says whether fencing-init put its counter in use or
 * found it in use already (both read "in use" before). */
Test(cli_fencing, fencing_init_says_which_counters_it_initialized)
{
    cr_assert_eq(fleet_del(cli.fleet, 1, REDLOCK_FENCING_KEY, strlen(REDLOCK_FENCING_KEY)), 1);
    const cli_result *r = cli_run(CLI_ARGS("--config", cli.config, "fencing-init"), NULL, T);
    cli_expect_exit(r, 0);
    for (size_t i = 0; i < CLI_MASTERS; i++) {
        const char *line = cli_format("%s  %s\n", cli_node(i),
                                      i == 1 ? "initialized" : "in use already");
        cr_assert_not_null(strstr(r->out, line), "master %zu: \"%s\" not in:\n%s", i, line,
                           r->out);
    }
    r = cli_run(CLI_ARGS("--config", cli.config, "fencing-init", "--json"), NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_null(strstr(r->out, "\"initialized\":true"), "%s", r->out);
    cr_assert_not_null(strstr(r->out, "\"initialized\":false"), "%s", r->out);
}

/* status shows a fenced lock's token, the one its holder was given, on
 * every master that holds it; an unfenced lock shows none. */
Test(cli_fencing, status_shows_the_token_the_holder_was_given)
{
    const cli_result *r = cli_run(
        CLI_ARGS("--config", cli.config, "run", "job", "--", "sh", "-c",
                 "echo \"$REDLOCK_FENCING_TOKEN\" && \"$0\" --config \"$1\" status --json job",
                 REDLOCK_TOOL, cli.config),
        NULL, T);
    cli_expect_exit(r, 0);
    char *end = NULL;
    unsigned long long token = strtoull(r->out, &end, 10);
    cr_assert(token > 0 && *end == '\n', "%s", r->out);
    char top[64];
    snprintf(top, sizeof(top), "\"quorum\":3,\"fencing_token\":%llu,", token);
    cr_assert_not_null(strstr(end, top), "%s", r->out);
    char each[64];
    unsigned shown = 0;
    snprintf(each, sizeof(each), ",\"fencing_token\":%llu,\"error\"", token);
    for (const char *at = strstr(end, each); at != NULL; at = strstr(at + 1, each))
        shown++;
    cr_assert_geq(shown, 3, "%s", r->out);

    r = cli_run(CLI_ARGS("--config", cli.config, "run", "--no-fencing", "job", "--", REDLOCK_TOOL,
                         "--config", cli.config, "status", "job"),
                NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_null(strstr(r->out, "token"), "%s", r->out);
    r = cli_run(CLI_ARGS("--config", cli.config, "run", "job", "--", REDLOCK_TOOL, "--config",
                         cli.config, "status", "job"),
                NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_not_null(strstr(r->out, "  token "), "%s", r->out);
}
