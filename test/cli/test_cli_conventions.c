/* SPDX-License-Identifier: BSD-3-Clause */
/* The conventions users bring from flock(1), timeout(1), systemd and
 * sysexits: a bare TIME is seconds (in the config's duration keys too), -q
 * silences "held" for cron, global options may follow the command, a
 * refused permission exits 77 and a TTL that can never give validity is
 * refused up front with 64. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <string.h>
#include <unistd.h>

#define T CLI_RUN_TIMEOUT_MS

TestSuite(cli_conventions, .init = cli_setup_five, .fini = cli_teardown, .timeout = 120);

Test(cli_conventions, a_bare_time_is_seconds)
{
    const char *value = cli_acquire("bare", "2");
    cr_assert_geq(cli_masters_with_pttl("bare", value, 1500, 2000), 3,
                  "--ttl 2 is not 2 seconds: %s", cli_describe_key("bare"));
    const char *combined = cli_acquire("combined", "1m 30s");
    cr_assert_geq(cli_masters_with_pttl("combined", combined, 89500, 90000), 3, "%s",
                  cli_describe_key("combined"));
}

/* As flock -n: losing the race is the exit status alone. */
Test(cli_conventions, quiet_says_nothing_when_held)
{
    cli_acquire("job", "30s");
    const char *marker = cli_path("ran");
    const cli_result *r = cli_run(
        CLI_ARGS("--config", cli.config, "-q", "run", "-w", "0", "job", "--", "touch", marker),
        NULL, T);
    cli_expect_exit(r, 75);
    cr_assert_str_empty(r->err, "%s: stderr:\n%s", r->cmdline, r->err);
    r = cli_run(CLI_ARGS("--config", cli.config, "acquire", "--quiet", "-w", "10ms", "-E", "0",
                         "job"),
                NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_str_empty(r->err, "%s: stderr:\n%s", r->cmdline, r->err);
    cr_assert_neq(access(marker, F_OK), 0, "CMD ran without the lock");
    /* Real errors are still said. */
    r = cli_run(CLI_ARGS("-q", "--node", cli_format("127.0.0.1:%d", cli_dead_port()), "acquire",
                         "-w", "0", "job"),
                NULL, T);
    cli_expect_exit(r, 69);
    cr_assert_not_null(strstr(r->err, "could not acquire"), "%s: stderr:\n%s", r->cmdline,
                       r->err);
}

Test(cli_conventions, global_options_follow_the_command)
{
    const cli_result *r =
        cli_run(CLI_ARGS("acquire", "--config", cli.config, "-v", "-t", "30s", "job"), NULL, T);
    cli_expect_exit(r, 0);
    cr_assert(cli_is_value(cli_first_line(r->out)), "%s: stdout:\n%s", r->cmdline, r->out);
    r = cli_run(CLI_ARGS("run", "-c", cli.config, "-q", "job2", "--", "true"), NULL, T);
    cli_expect_exit(r, 0);
    /* Not an option of redlock's either: still refused. */
    r = cli_run(CLI_ARGS("--config", cli.config, "run", "--frobnicate", "job3", "--", "true"),
                NULL, T);
    cli_expect_exit(r, 64);
    cr_assert_not_null(strstr(r->err, "run: unknown option or missing value: --frobnicate"),
                       "%s: stderr:\n%s", r->cmdline, r->err);
}

/* A TTL the drift allowance alone uses up: refused before anything is sent. */
Test(cli_conventions, a_ttl_too_short_for_any_validity_exits_64)
{
    const char *marker = cli_path("ran");
    const cli_result *r =
        cli_run(CLI_ARGS("--config", cli.config, "acquire", "-t", "1ms", "tiny"), NULL, T);
    cli_expect_exit(r, 64);
    cli_expect_one_error_line(r);
    cr_assert_not_null(strstr(r->err, "invalid argument"), "%s: stderr:\n%s", r->cmdline,
                       r->err);
    r = cli_run(CLI_ARGS("--config", cli.config, "run", "-t", "3ms", "tiny", "--", "touch",
                         marker),
                NULL, T);
    cli_expect_exit(r, 64);
    cr_assert_neq(access(marker, F_OK), 0, "CMD ran with a TTL that can give no validity");
    cr_assert_eq(cli_keys_total(), 0, "keys were set");
}

/* Masters whose ACL denies scripts: found in the handshake and told as a
 * permission (77, one attempt), never as masters out of reach (69). A
 * fenced lock, which needs the scripts on every server (a plain one works
 * without them on Valkey 9: test_acl.c). */
Test(cli_conventions, masters_refusing_scripts_exit_77_saying_so)
{
    for (size_t i = 0; i < CLI_MASTERS; i++) {
        redisReply *reply = fleet_command(cli.fleet, i, "ACL SETUSER default -@scripting");
        cr_assert_not_null(reply);
        freeReplyObject(reply);
    }
    const cli_result *r = cli_run(CLI_ARGS("--config", cli.config, "acquire", "--fencing", "-w",
                                           "10s", "scripted"),
                                  NULL, T);
    cli_expect_exit(r, 77);
    cr_assert_not_null(strstr(r->err, "1 attempt"), "%s: retried:\n%s", r->cmdline, r->err);
    cr_assert_not_null(strstr(r->err, "the lock needs scripts"), "%s: stderr:\n%s", r->cmdline,
                       r->err);
    r = cli_run(CLI_ARGS("--config", cli.config, "status", "scripted"), NULL, T);
    cli_expect_exit(r, 77);
    cr_assert_not_null(strstr(r->out, "refused: SCRIPT LOAD: NOPERM"), "%s: stdout:\n%s",
                       r->cmdline, r->out);
    cr_assert_null(strstr(r->out, "unreachable"), "%s: stdout:\n%s", r->cmdline, r->out);
}

/* An ACL user without the key: the masters answer, and refuse. */
Test(cli_conventions, a_permission_refused_exits_77_without_retries)
{
    for (size_t i = 0; i < CLI_MASTERS; i++) {
        redisReply *reply = fleet_command(cli.fleet, i,
                                          "ACL SETUSER narrow on >narrowpw ~redlock:* ~mine:* "
                                          "&* +@all");
        cr_assert_not_null(reply);
        freeReplyObject(reply);
    }
    char nodes[CLI_MASTERS][64];
    const char *args[2 * CLI_MASTERS + 8];
    size_t n = 0;
    for (size_t i = 0; i < CLI_MASTERS; i++) {
        snprintf(nodes[i], sizeof(nodes[i]), "redis://narrow:narrowpw@127.0.0.1:%d",
                 fleet_port(cli.fleet, i));
        args[n++] = "--node";
        args[n++] = nodes[i];
    }
    size_t base = n;
    args[n++] = "acquire";
    args[n++] = "-w";
    args[n++] = "10s";
    args[n++] = "theirs";
    args[n] = NULL;
    const cli_result *r = cli_run(args, cli_env_durable(NULL), T);
    cli_expect_exit(r, 77);
    cr_assert_not_null(strstr(r->err, "1 attempt"), "%s: retried:\n%s", r->cmdline, r->err);
    cr_assert_not_null(strstr(r->err, "NOPERM"), "%s: stderr:\n%s", r->cmdline, r->err);
    n = base;
    args[n++] = "status";
    args[n++] = "theirs";
    args[n] = NULL;
    r = cli_run(args, cli_env_durable(NULL), T);
    cli_expect_exit(r, 77);
    cr_assert_not_null(strstr(r->out, "refused: NOPERM"), "%s: stdout:\n%s", r->cmdline,
                       r->out);
    cr_assert_null(strstr(r->out, "unreachable"), "%s: stdout:\n%s", r->cmdline, r->out);
}

/* The config's duration keys: `ttl: 2` is two seconds, beside ttl_ms. */
Test(cli_conventions, the_config_takes_durations)
{
    cli_config_options o = {.extra = "ttl: 2\n"};
    const char *config = cli_write_config("durations.yaml", &o);
    const cli_result *r = cli_run(CLI_ARGS("--config", config, "acquire", "job"), NULL, T);
    cli_expect_exit(r, 0);
    const char *value = cli_format("%s", cli_first_line(r->out));
    cr_assert_geq(cli_masters_with_pttl("job", value, 1500, 2000), 3, "ttl: 2 is not 2 s: %s",
                  cli_describe_key("job"));
    cli_config_options both = {.ttl_ms = 30000, .extra = "ttl: 30s\n"};
    config = cli_write_config("both.yaml", &both);
    r = cli_run(CLI_ARGS("--config", config, "ping"), NULL, T);
    cli_expect_exit(r, 78);
    cr_assert_not_null(strstr(r->err, "ttl (line "), "%s: stderr:\n%s", r->cmdline, r->err);
    cr_assert_not_null(strstr(r->err, "and ttl_ms (line "), "%s: stderr:\n%s", r->cmdline,
                       r->err);
}
