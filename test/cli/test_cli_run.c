/* SPDX-License-Identifier: BSD-3-Clause */
/* `redlock run`: CMD's exit status, its environment, its output, exec
 * failures, and --wait on a held resource. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T CLI_RUN_TIMEOUT_MS

TestSuite(cli_run, .init = cli_setup_five, .fini = cli_teardown, .timeout = 120);

/* `redlock --config cli.config run ARGS...`. */
#define RUN(...) cli_run(CLI_ARGS("--config", cli.config, "run", __VA_ARGS__), NULL, T)

static void expect_released(const cli_result *r, const char *resource)
{
    cli_expect_key_gone(resource, r->cmdline);
}

Test(cli_run, exit_status_is_cmds_and_the_lock_is_released)
{
    static const struct {
        const char *script;
        int status;
    } cases[] = {
        {"exit 0", 0},
        {"exit 3", 3},
        {"exit 75", 75},
        {"kill -USR1 $$", 128 + SIGUSR1},
        {"kill -KILL $$", 128 + SIGKILL},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        const cli_result *r = RUN("job", "--", "sh", "-c", cases[k].script);
        cli_expect_exit(r, cases[k].status);
        expect_released(r, "job");
    }
    const cli_result *r = RUN("job", "true");
    cli_expect_exit(r, 0);
    expect_released(r, "job");
    r = RUN("job", "false");
    cli_expect_exit(r, 1);
    expect_released(r, "job");
}

Test(cli_run, cmd_inherits_stdout_and_stderr)
{
    const cli_result *r = RUN("job", "--", "sh", "-c", "echo out; echo err >&2");
    cli_expect_exit(r, 0);
    cr_assert_str_eq(r->out, "out\n", "%s: stdout", r->cmdline);
    cr_assert_str_eq(r->err, "err\n", "%s: stderr", r->cmdline);
}

/* CMD writes its REDLOCK_* variables, then waits for the test to look at
 * the masters and create the "go" file. */
Test(cli_run, cmd_environment_describes_the_lock_it_holds)
{
    const char *env_file = cli_path("env");
    const char *go = cli_path("go");
    const char *script = "printf '%s\\n%s\\n%s\\n' \"$REDLOCK_RESOURCE\" \"$REDLOCK_VALUE\" "
                         "\"$REDLOCK_VALIDITY_MS\" > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"; i=0; "
                         "while [ ! -e \"$2\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); "
                         "done";
    cli_proc *p = cli_spawn(CLI_ARGS("--config", cli.config, "run", "--ttl", "10s", "job", "--",
                                     "sh", "-c", script, "sh", env_file, go),
                            NULL);
    cr_assert(cli_wait_until(cli_file_exists, (void *)env_file, 10000), "CMD did not start in 10 s");

    char resource[64] = "";
    char value[64] = "";
    long long validity = -1;
    FILE *f = fopen(env_file, "re");
    cr_assert_not_null(f);
    int fields = fscanf(f, "%63s %63s %lld", resource, value, &validity);
    fclose(f);
    cr_assert_eq(fields, 3, "REDLOCK_* variables missing: %s", cli_read_file(env_file));
    cr_assert_str_eq(resource, "job");
    cr_assert(cli_is_value(value), "REDLOCK_VALUE \"%s\"", value);
    cr_assert(validity > 5000 && validity <= 10000, "REDLOCK_VALIDITY_MS %lld", validity);
    /* While CMD runs, the masters hold that very value. */
    cr_assert_geq(cli_masters_holding("job", value), 3, "REDLOCK_VALUE is not the lock's value");

    cli_write_file("go", "", 0600);
    const cli_result *r = cli_wait(p, T);
    cli_expect_exit(r, 0);
    expect_released(r, "job");
}

Test(cli_run, cmd_not_found_exits_127)
{
    const char *missing[] = {"redlock-test-no-such-command", "/nonexistent/dir/cmd"};
    for (size_t k = 0; k < 2; k++) {
        const cli_result *r = RUN("job", "--", missing[k]);
        cli_expect_exit(r, 127);
        cr_assert_not_null(strstr(r->err, "redlock: "), "%s: no message: %s", r->cmdline, r->err);
        expect_released(r, "job");
    }
}

Test(cli_run, cmd_not_executable_exits_126)
{
    const char *file = cli_write_file("not-executable", "#!/bin/sh\nexit 0\n", 0644);
    const char *paths[] = {file, cli.dir};
    for (size_t k = 0; k < 2; k++) {
        const cli_result *r = RUN("job", "--", paths[k]);
        cli_expect_exit(r, 126);
        cr_assert_not_null(strstr(r->err, "redlock: "), "%s: no message: %s", r->cmdline, r->err);
        expect_released(r, "job");
    }
}

Test(cli_run, wait_on_a_held_resource_exits_75_without_running_cmd)
{
    const char *holder = cli_acquire("job", "30s");
    const char *marker = cli_path("ran");

    const cli_result *r = RUN("--wait", "300ms", "job", "--", "touch", marker);
    cli_expect_exit(r, 75);
    cli_expect_one_error_line(r);
    cr_assert(r->elapsed_ms >= 250 && r->elapsed_ms < 5000, "%s: gave up after %.0f ms",
              r->cmdline, r->elapsed_ms);

    r = RUN("--wait", "0", "job", "--", "touch", marker);
    cli_expect_exit(r, 75);
    cli_expect_one_error_line(r);

    cr_assert_neq(access(marker, F_OK), 0, "CMD ran without the lock");
    cr_assert_geq(cli_masters_holding("job", holder), 3, "the holder's lock was touched");
}

Test(cli_run, run_gets_the_lock_once_the_holder_releases_it)
{
    const char *holder = cli_acquire("job", "30s");
    const char *marker = cli_path("ran");
    cli_proc *p = cli_spawn(CLI_ARGS("--config", cli.config, "run", "--wait", "20s", "job", "--",
                                     "touch", marker),
                            NULL);
    tc_sleep_ms(300);
    cr_assert(!cli_proc_exited(p), "run gave up while waiting 20 s");
    cr_assert_neq(access(marker, F_OK), 0, "CMD ran while another holder had the lock");
    cli_expect_exit(cli_run(CLI_ARGS("--config", cli.config, "release", "job", holder), NULL, T),
                    0);
    const cli_result *r = cli_wait(p, T);
    cli_expect_exit(r, 0);
    cr_assert_eq(access(marker, F_OK), 0, "CMD did not run");
    cli_expect_key_gone("job", cli_format("%s (the first holder's value: %s)", r->cmdline, holder));
}

/* --max-hold: CMD is stopped once the lock has been held that long, as on a
 * loss, and run exits 80 saying so; shorter commands are not touched. */
Test(cli_run, max_hold_stops_cmd_and_exits_80)
{
    const cli_result *r = RUN("--ttl", "400ms", "--max-hold", "1s", "capped", "--", "sleep", "20");
    cli_expect_exit(r, 80);
    cr_assert_not_null(strstr(r->err, "held for the maximum (--max-hold"), "stderr: %s", r->err);
    cr_assert(r->elapsed_ms >= 1000 && r->elapsed_ms < fleet_scaled_ms(5000),
              "exited after %.0f ms", r->elapsed_ms);
    r = RUN("--ttl", "400ms", "--max-hold", "5s", "capped", "--", "sleep", "0.7");
    cli_expect_exit(r, 0);
    r = RUN("--max-hold", "0", "capped", "true");
    cli_expect_exit(r, 64);
}

static bool term_recorded(void *file)
{
    return cli_sigwatch_ns(file, "TERM") >= 0;
}

/* --max-hold: once every process is gone, run releases the lock rather
 * than leave its keys for the TTL of the last extension (30 s here); not
 * before: while CMD ignores SIGTERM, during --kill-after, the keys stay. */
Test(cli_run, max_hold_releases_the_lock_once_every_process_is_gone)
{
    const char *file = cli_path("capped.sigwatch");
    cli_proc *p = cli_spawn(CLI_ARGS("--config", cli.config, "run", "--ttl", "30s", "--max-hold",
                                     "1s", "--kill-after", "1s", "capped", "--", SIGWATCH,
                                     "--ignore", "TERM", file),
                            NULL);
    cr_assert(cli_wait_until(term_recorded, (void *)file, 5000), "no SIGTERM after --max-hold");
    int cmd = cli_track(cli_sigwatch_pid(file));
    size_t holding = cli_masters_with_key("capped");
    /* Only a check made while CMD still ran counts (not after a stall). */
    bool cmd_ran = cmd >= 0 && !cli_wait_gone(cmd, 0, NULL);
    cr_assert(holding == CLI_MASTERS || !cmd_ran, "released while CMD still ran: %s",
              cli_describe_key("capped"));
    const cli_result *r = cli_wait(p, T);
    cli_expect_exit(r, 80);
    expect_released(r, "capped");
}

/* --lock-delay: a lock acquired and never released (the holder died)
 * stays taken for the TTL plus the delay. */
Test(cli_run, lock_delay_keeps_a_dead_holders_lock_taken)
{
    /* The delay is scaled like the tests' timeouts: under valgrind the next
     * command alone takes a second to start. */
    char delay[32];
    snprintf(delay, sizeof(delay), "%lldms", (long long)fleet_scaled_ms(1200));
    const cli_result *r = cli_run(CLI_ARGS("--config", cli.config, "acquire", "--ttl", "300ms",
                                           "--lock-delay", delay, "delayed"),
                                  NULL, T);
    cli_expect_exit(r, 0);
    double t0 = tc_now_ms();
    r = cli_run(CLI_ARGS("--config", cli.config, "acquire", "--wait", "0", "delayed"), NULL, T);
    cli_expect_exit(r, 75);
    char wait[32];
    snprintf(wait, sizeof(wait), "%lldms", (long long)fleet_scaled_ms(10000));
    r = RUN("--wait", wait, "delayed", "true");
    cli_expect_exit(r, 0);
    double taken_ms = tc_now_ms() - t0;
    cr_assert_geq(taken_ms, 1300, "taken again after %.0f ms: before ttl + delay", taken_ms);
}

/* -vv: every line has the time (UTC, to the millisecond) and its level,
 * and the acquire and the release say which resource. */
Test(cli_run, verbose_lines_say_when_what_and_on_which_resource)
{
    const cli_result *r = cli_run(
        CLI_ARGS("-vv", "--config", cli.config, "run", "--no-fencing", "nightly", "--", "true"),
        NULL, CLI_RUN_TIMEOUT_MS);
    cli_expect_exit(r, 0);
    cr_assert_not_null(strstr(r->err, "Z info: acquire nightly: success (1 attempt, "), "%s",
                       r->err);
    cr_assert_not_null(strstr(r->err, "Z info: release nightly: success"), "%s", r->err);
    /* "redlock: YYYY-MM-DDTHH:MM:SS.mmmZ info: " on every line. */
    for (const char *line = r->err; *line != '\0'; line = strchr(line, '\n') + 1) {
        const char *end = strchr(line, '\n');
        cr_assert_not_null(end, "%s", r->err);
        cr_assert_eq(strncmp(line, "redlock: ", 9), 0, "%.*s", (int)(end - line), line);
        const char *t = line + 9;
        cr_assert(end - t > 25 && t[4] == '-' && t[10] == 'T' && t[19] == '.' && t[23] == 'Z' &&
                      t[24] == ' ',
                  "no timestamp: %.*s", (int)(end - line), line);
    }
}
