/* SPDX-License-Identifier: BSD-3-Clause */
/* The redlock tool's commands, their output and exit statuses (docs/cli.md),
 * against five real masters. --json: test_cli_json.c. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T CLI_RUN_TIMEOUT_MS
#define FOREIGN_VALUE "0123456789abcdef0123456789abcdef"

TestSuite(cli, .init = cli_setup_five, .fini = cli_teardown, .timeout = 120);

static const char *const commands[] = {"run", "acquire", "release", "extend", "status", "ping"};
#define COMMAND_COUNT (sizeof(commands) / sizeof(commands[0]))

/* Run `redlock --config cli.config ARGS...`. */
#define RUN(...) cli_run(CLI_ARGS("--config", cli.config, __VA_ARGS__), NULL, T)

static void kill_masters(size_t count)
{
    for (size_t i = 0; i < count; i++)
        cr_assert_eq(fleet_kill(cli.fleet, i), 0);
}

/* The key set directly on every master, so that every master holds it
 * (an acquire may stop at a majority). */
static void hold_on_every_master(const char *key, const char *value)
{
    for (size_t i = 0; i < CLI_MASTERS; i++)
        cr_assert_eq(fleet_set(cli.fleet, i, key, strlen(key), value, strlen(value), 30000), 0);
}

/* ---- --version, --help ---------------------------------------------------- */

Test(cli, version_prints_the_version_on_stdout)
{
    const char *flags[] = {"--version", "-V"};
    for (size_t k = 0; k < 2; k++) {
        const cli_result *r = cli_run(CLI_ARGS(flags[k]), NULL, T);
        cli_expect_exit(r, 0);
        cr_assert_not_null(strstr(r->out, REDLOCK_VERSION_STRING), "%s: no \"%s\" in:\n%s",
                           r->cmdline, REDLOCK_VERSION_STRING, r->out);
        cr_assert_str_empty(r->err, "%s: stderr:\n%s", r->cmdline, r->err);
    }
}

/* Help needs no config: the fixture gives the tool none. */
Test(cli, help_lists_every_command_on_stdout)
{
    const char *flags[] = {"--help", "-h"};
    for (size_t k = 0; k < 2; k++) {
        const cli_result *r = cli_run(CLI_ARGS(flags[k]), NULL, T);
        cli_expect_exit(r, 0);
        for (size_t c = 0; c < COMMAND_COUNT; c++)
            cr_assert_not_null(strstr(r->out, commands[c]), "%s: \"%s\" missing from:\n%s",
                               r->cmdline, commands[c], r->out);
        cr_assert_str_empty(r->err, "%s: stderr:\n%s", r->cmdline, r->err);
    }
}

/* Whether help text lists an exit status: its number, then a space or the
 * end of a line (the text is wrapped). */
static bool lists_status(const char *text, const char *status)
{
    size_t len = strlen(status);
    for (const char *p = strstr(text, status); p != NULL; p = strstr(p + 1, status))
        if ((p == text || p[-1] == ' ' || p[-1] == '\n') && (p[len] == ' ' || p[len] == '\n'))
            return true;
    return false;
}

Test(cli, every_command_has_its_own_help)
{
    for (size_t c = 0; c < COMMAND_COUNT; c++) {
        const cli_result *r = cli_run(CLI_ARGS(commands[c], "--help"), NULL, T);
        cli_expect_exit(r, 0);
        cr_assert_not_null(strstr(r->out, commands[c]), "%s: \"%s\" missing from:\n%s",
                           r->cmdline, commands[c], r->out);
        cr_assert_str_empty(r->err, "%s: stderr:\n%s", r->cmdline, r->err);
        /* Each option on a line of its own, --json too; the statuses. */
        if (strcmp(commands[c], "run") != 0)
            cr_assert_not_null(strstr(r->out, "\n  --json "), "%s: no --json line:\n%s",
                               r->cmdline, r->out);
        cr_assert(lists_status(r->out, "69") && lists_status(r->out, "77"),
                  "%s: exit statuses 69 and 77 missing:\n%s", r->cmdline, r->out);
    }
    cr_assert_eq(cli_keys_total(), 0);
}

/* ---- acquire ---------------------------------------------------------------- */

Test(cli, acquire_prints_the_value_alone_on_the_first_line)
{
    const cli_result *r = RUN("acquire", "job");
    cli_expect_exit(r, 0);
    const char *value = cli_first_line(r->out);
    cr_assert(cli_is_value(value), "%s: line 1 is \"%s\", not a 32-hex-digit value", r->cmdline,
              value);
    cr_assert_geq(cli_masters_holding("job", value), 3, "the value is not on a majority");
    cr_assert_str_empty(r->err, "%s: stderr:\n%s", r->cmdline, r->err);
}

Test(cli, acquire_of_a_held_resource_exits_75)
{
    const char *value = cli_acquire("job", "30s");
    const cli_result *r = RUN("acquire", "--wait", "0", "job");
    cli_expect_exit(r, 75);
    cli_expect_one_error_line(r);
    cr_assert_str_empty(r->out, "%s: stdout:\n%s", r->cmdline, r->out);
    cr_assert_geq(cli_masters_holding("job", value), 3, "the holder's key was touched");
}

Test(cli, acquire_with_wait_gets_the_lock_once_the_holder_expires)
{
    double start = tc_now_ms();
    const char *first = cli_acquire("job", "1s");
    const cli_result *r = RUN("acquire", "--wait", "10s", "job");
    cli_expect_exit(r, 0);
    const char *second = cli_first_line(r->out);
    cr_assert(cli_is_value(second) && strcmp(first, second) != 0, "values %s, %s", first, second);
    /* Not before the first lock's key expired, set after `start`. */
    cr_assert_geq(tc_now_ms() - start, 990, "acquired after %.0f ms", tc_now_ms() - start);
    cr_assert_geq(cli_masters_holding("job", second), 3);
}

Test(cli, conflict_exit_code_replaces_75_when_held)
{
    cli_acquire("job", "30s");
    cli_expect_exit(RUN("acquire", "-E", "3", "--wait", "0", "job"), 3);
    cli_expect_exit(RUN("acquire", "--conflict-exit-code", "0", "--wait", "0", "job"), 0);
    const char *marker = cli_path("ran");
    cli_expect_exit(RUN("run", "-E", "9", "--wait", "0", "job", "touch", marker), 9);
    cr_assert_neq(access(marker, F_OK), 0, "CMD ran without the lock");
    /* Only "held" is replaced: no quorum is still 69. */
    kill_masters(3);
    cli_expect_exit(RUN("acquire", "-E", "3", "--wait", "0", "other"), 69);
}

Test(cli, conflict_exit_code_takes_0_to_255)
{
    static const char *const bad[] = {"256", "-1", "x", "", "3x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const cli_result *r = RUN("acquire", "-E", bad[i], "job");
        cli_expect_exit(r, 64);
        cli_expect_one_error_line(r);
    }
    cr_assert_eq(cli_keys_total(), 0);
}

/* Not "held" (75): a script must tell the two apart. */
Test(cli, acquire_without_a_quorum_exits_69)
{
    kill_masters(3);
    const cli_result *r = RUN("acquire", "--wait", "0", "job");
    cli_expect_exit(r, 69);
    cli_expect_one_error_line(r);
    cr_assert_str_empty(r->out, "%s: stdout:\n%s", r->cmdline, r->out);
    cr_assert_eq(cli_keys_total(), 0, "a failed acquire left keys behind");
}

Test(cli, acquire_and_run_with_every_master_down_exit_69)
{
    kill_masters(CLI_MASTERS);
    cli_expect_exit(RUN("acquire", "job"), 69); /* the config's retries too */
    const char *marker = cli_path("ran");
    cli_expect_exit(RUN("run", "job", "touch", marker), 69);
    cr_assert_neq(access(marker, F_OK), 0, "CMD ran without the lock");
    const char *dead = cli_format("127.0.0.1:%d", cli_dead_port());
    cli_expect_exit(cli_run(CLI_ARGS("-n", dead, "acquire", "--wait", "0", "job"), NULL, T), 69);
}

/* ---- release ------------------------------------------------------------------ */

Test(cli, release_deletes_the_key_and_a_second_release_exits_1)
{
    const char *value = cli_acquire("job", "30s");
    cli_expect_exit(RUN("release", "job", value), 0);
    cli_expect_key_gone("job", "after release");
    cli_expect_exit(RUN("release", "job", value), 1);
}

/* Every master holds the value: every one must lose it, not just a
 * majority (repeated: a release that stops at the first quorum of answers
 * leaves slow masters holding it). */
Test(cli, release_deletes_the_value_on_every_master)
{
    for (int k = 0; k < 10; k++) {
        hold_on_every_master("job", FOREIGN_VALUE);
        const cli_result *r = RUN("release", "job", FOREIGN_VALUE);
        cli_expect_exit(r, 0);
        cli_expect_key_gone("job", r->cmdline);
    }
}

Test(cli, release_never_deletes_another_holders_key)
{
    const char *value = cli_acquire("job", "30s");
    cli_expect_exit(RUN("release", "job", FOREIGN_VALUE), 1);
    cr_assert_eq(cli_masters_holding("job", value), cli_masters_with_key("job"));
    cr_assert_geq(cli_masters_holding("job", value), 3);
}

Test(cli, release_without_a_quorum_exits_69)
{
    hold_on_every_master("job", FOREIGN_VALUE);
    kill_masters(3);
    cli_expect_exit(RUN("release", "job", FOREIGN_VALUE), 69);
}

/* ---- extend --------------------------------------------------------------------- */

Test(cli, extend_resets_the_ttl_and_prints_the_validity)
{
    const char *value = cli_acquire("job", "5s");
    const cli_result *r = RUN("extend", "--ttl", "30s", "job", value);
    cli_expect_exit(r, 0);
    char *end;
    const char *line = cli_first_line(r->out);
    long long validity = strtoll(line, &end, 10);
    cr_assert(end != line && *end == '\0' && validity > 25000 && validity <= 30000,
              "%s: expected the validity in ms on line 1, got \"%s\"", r->cmdline, line);
    cr_assert_geq(cli_masters_with_pttl("job", value, 25000, 30000), 3,
                  "PTTL not reset to about 30000 on a majority");
}

Test(cli, extend_of_a_foreign_or_expired_value_exits_1)
{
    const char *value = cli_acquire("job", "10s");
    cli_expect_exit(RUN("extend", "--ttl", "30s", "job", FOREIGN_VALUE), 1);
    cr_assert_eq(cli_masters_with_pttl("job", value, 10000, 30000), 0, "the holder's key grew");
    cr_assert_geq(cli_masters_holding("job", value), 3);

    const char *expired = cli_acquire("short", "300ms");
    double deadline = tc_now_ms() + 5000;
    while (cli_masters_with_key("short") > 0 && tc_now_ms() < deadline)
        tc_sleep_ms(20);
    cli_expect_key_gone("short", "5 s after a 300 ms acquire");
    cli_expect_exit(RUN("extend", "--ttl", "30s", "short", expired), 1);
    cli_expect_key_gone("short", "after extending an expired lock");
}

Test(cli, extend_without_a_quorum_exits_69)
{
    hold_on_every_master("job", FOREIGN_VALUE);
    kill_masters(3);
    cli_expect_exit(RUN("extend", "--ttl", "30s", "job", FOREIGN_VALUE), 69);
}

/* ---- status and ping -------------------------------------------------------------- */

static void expect_line_with(const cli_result *r, size_t master, const char *word)
{
    const char *line = cli_line_about(r->out, cli_node(master));
    cr_assert_not_null(line, "%s: no line for %s in:\n%s", r->cmdline, cli_node(master), r->out);
    cr_assert_not_null(strstr(line, word), "%s: no \"%s\" in the line for %s: %s", r->cmdline,
                       word, cli_node(master), line);
}

Test(cli, status_shows_every_master_held_or_free)
{
    hold_on_every_master("job", FOREIGN_VALUE);
    const cli_result *r = RUN("status", "job");
    cli_expect_exit(r, 0);
    for (size_t i = 0; i < CLI_MASTERS; i++) {
        expect_line_with(r, i, "held");
        expect_line_with(r, i, "pttl");
    }
    r = RUN("status", "other");
    cli_expect_exit(r, 0);
    for (size_t i = 0; i < CLI_MASTERS; i++)
        expect_line_with(r, i, "free");
}

Test(cli, status_without_a_quorum_exits_69)
{
    hold_on_every_master("job", FOREIGN_VALUE);
    kill_masters(3);
    const cli_result *r = RUN("status", "job");
    cli_expect_exit(r, 69);
    for (size_t i = 0; i < 3; i++)
        expect_line_with(r, i, "unreachable");
    for (size_t i = 3; i < CLI_MASTERS; i++)
        expect_line_with(r, i, "held");
}

Test(cli, ping_exits_0_with_a_quorum_and_69_without)
{
    const cli_result *r = RUN("ping");
    cli_expect_exit(r, 0);
    for (size_t i = 0; i < CLI_MASTERS; i++)
        cr_assert_not_null(cli_line_about(r->out, cli_node(i)), "%s: no line for %s in:\n%s",
                           r->cmdline, cli_node(i), r->out);
    kill_masters(2);
    cli_expect_exit(RUN("ping"), 0);
    cr_assert_eq(fleet_kill(cli.fleet, 2), 0);
    r = RUN("ping");
    cli_expect_exit(r, 69);
    for (size_t i = 0; i < CLI_MASTERS; i++)
        cr_assert_not_null(cli_line_about(r->out, cli_node(i)), "%s: no line for %s in:\n%s",
                           r->cmdline, cli_node(i), r->out);
}
