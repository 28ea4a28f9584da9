/* SPDX-License-Identifier: BSD-3-Clause */
/* `redlock run`: CMD's exit status, its environment, its output, exec
 * failures, and --wait on a held resource. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <hiredis/hiredis.h>
#include <jansson.h>
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
    char value[REDLOCK_MAX_VALUE_LEN + 1] = "";
    long long validity = -1;
    FILE *f = fopen(env_file, "re");
    cr_assert_not_null(f);
    int fields = fscanf(f, "%63s %1024s %lld", resource, value, &validity);
    fclose(f);
    cr_assert_eq(fields, 3, "REDLOCK_* variables missing: %s", cli_read_file(env_file));
    cr_assert_str_eq(resource, "job");
    cr_assert(cli_is_run_value(value), "REDLOCK_VALUE \"%s\"", value);
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

/* A TTL the auto-extension cycle can never keep (an extension every ttl/3,
 * lost ttl/6 before the validity ends) is an impossible argument: refused
 * with 64 before anything is acquired or run, saying the smallest that
 * works; it used to run CMD and exit 80 "lost". */
Test(cli_run, ttl_too_short_to_keep_extended_is_refused_before_cmd_runs)
{
    const char *marker = cli_path("ran");
    static const char *const ttls[] = {"5ms", "10ms"};
    for (size_t k = 0; k < sizeof(ttls) / sizeof(ttls[0]); k++) {
        const cli_result *r = RUN("-t", ttls[k], "job", "--", "touch", marker);
        cli_expect_exit(r, 64);
        cli_expect_one_error_line(r);
        cr_assert_not_null(strstr(r->err, "the smallest TTL that works is "), "%s: %s",
                           r->cmdline, r->err);
        cr_assert_neq(access(marker, F_OK), 0, "%s: CMD ran", r->cmdline);
        cr_assert_eq(cli_masters_with_key("job"), 0, "%s: the lock was taken", r->cmdline);
    }
    const cli_result *r = RUN("-t", "100ms", "job", "--", "touch", marker);
    cli_expect_exit(r, 0);
    cr_assert_eq(access(marker, F_OK), 0, "%s: CMD did not run", r->cmdline);
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

/* The holder `status` names for a run: this host, the redlock process's
 * pid, when, and CMD's name (never its arguments: they may hold a
 * secret); in text and in JSON. CMD asks while it holds the lock. */
Test(cli_run, status_names_the_host_pid_and_command_of_a_run_holder)
{
    const char *script = "\"$0\" --config \"$1\" status job && \"$0\" --config \"$1\" status "
                         "--json job";
    cli_proc *p = cli_spawn(CLI_ARGS("--config", cli.config, "run", "job", "--", "/bin/sh", "-c",
                                     script, REDLOCK_TOOL, cli.config),
                            NULL);
    long long pid = (long long)cli_proc_pid(p);
    const cli_result *r = cli_wait(p, T);
    cli_expect_exit(r, 0);
    char host[REDLOCK_MAX_HOST_LEN + 2] = "";
    gethostname(host, sizeof(host) - 1);
    const char *label = "sh"; /* CMD's name only */
    char text[1024];
    snprintf(text, sizeof(text), "  holder %s pid %lld since ", host, pid);
    unsigned named = 0;
    for (const char *at = strstr(r->out, text); at != NULL; at = strstr(at + 1, text)) {
        const char *l = strstr(at, " label ");
        cr_assert_not_null(l, "%s", r->out);
        cr_assert_eq(strncmp(l + 7, label, strlen(label)), 0, "%s\nlabel: %s", r->out, label);
        cr_assert_eq(l[7 + strlen(label)], '\n', "%s", r->out);
        named++;
    }
    cr_assert_geq(named, 3, "%s\nexpected \"%s\"", r->out, text);

    const char *json = strstr(r->out, "{");
    cr_assert_not_null(json, "%s", r->out);
    json_t *doc = json_loads(json, 0, NULL);
    cr_assert_not_null(doc, "%s", json);
    json_t *masters = json_object_get(doc, "masters");
    unsigned in_json = 0;
    for (size_t i = 0; i < json_array_size(masters); i++) {
        json_t *holder = json_object_get(json_array_get(masters, i), "holder");
        if (!json_is_object(holder))
            continue;
        cr_assert_str_eq(json_string_value(json_object_get(holder, "host")), host);
        cr_assert_eq(json_integer_value(json_object_get(holder, "pid")), pid);
        cr_assert_str_eq(json_string_value(json_object_get(holder, "label")), label);
        cr_assert_gt(json_integer_value(json_object_get(holder, "since_ms")), 0);
        cr_assert_not_null(json_string_value(json_object_get(holder, "since")));
        in_json++;
    }
    cr_assert_geq(in_json, 3, "%s", json);
    json_decref(doc);
    expect_released(r, "job");
}

/* --label TEXT: the holder label status shows, for run (instead of CMD's
 * name) and acquire (which records no holder without it). */
Test(cli_run, label_names_the_holder_for_run_and_acquire)
{
    const cli_result *r = RUN("--label", "nightly backup #7", "job", "--", "/bin/sh", "-c",
                              "\"$0\" --config \"$1\" status job", REDLOCK_TOOL, cli.config);
    cli_expect_exit(r, 0);
    cr_assert_not_null(strstr(r->out, " label nightly backup #7\n"), "%s", r->out);
    cr_assert_null(strstr(r->out, " label sh\n"), "%s", r->out);
    expect_released(r, "job");

    r = cli_run(CLI_ARGS("--config", cli.config, "acquire", "--label", "deploy-42", "held"), NULL,
                T);
    cli_expect_exit(r, 0);
    r = cli_run(CLI_ARGS("--config", cli.config, "status", "held"), NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_not_null(strstr(r->out, " label deploy-42\n"), "%s", r->out);
}

/* A label the value cannot carry is a usage error: nothing taken or run. */
Test(cli_run, label_the_value_cannot_carry_exits_64)
{
    char long_label[REDLOCK_MAX_LABEL_LEN + 2];
    memset(long_label, 'x', sizeof(long_label) - 1);
    long_label[sizeof(long_label) - 1] = '\0';
    const char *marker = cli_path("ran");
    const char *const bad[] = {"", long_label, "tab\there", "caf\xc3\xa9", "line\nbreak"};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        const cli_result *r = RUN("--label", bad[k], "job", "--", "touch", marker);
        cli_expect_exit(r, 64);
        cr_assert_not_null(strstr(r->err, "--label: TEXT must be 1 to 128 printable ASCII"),
                           "%s: %s", r->cmdline, r->err);
        r = cli_run(CLI_ARGS("--config", cli.config, "acquire", "--label", bad[k], "job"), NULL,
                    T);
        cli_expect_exit(r, 64);
    }
    long_label[REDLOCK_MAX_LABEL_LEN] = '\0'; /* 128: the most */
    const cli_result *r = RUN("--label", long_label, "job", "--", "touch", marker);
    cli_expect_exit(r, 0);
    cr_assert_eq(cli_keys_total(), 0);
}

/* A value an earlier version wrote (no holder in it) is shown held by an
 * unknown holder (JSON: holder null), and released by value as ever. */
Test(cli_run, status_of_a_value_without_metadata_shows_an_unknown_holder)
{
    const char *old = "0123456789abcdef0123456789abcdef";
    for (size_t i = 0; i < 5; i++)
        freeReplyObject(fleet_command(cli.fleet, i, "SET job %s PX 10000", old));
    const cli_result *r = cli_run(CLI_ARGS("--config", cli.config, "status", "job"), NULL, T);
    cli_expect_exit(r, 0);
    unsigned unknown = 0;
    for (const char *at = strstr(r->out, "  unknown holder\n"); at != NULL;
         at = strstr(at + 1, "  unknown holder\n"))
        unknown++;
    cr_assert_eq(unknown, 5, "%s", r->out);
    r = cli_run(CLI_ARGS("--config", cli.config, "status", "--json", "job"), NULL, T);
    cli_expect_exit(r, 0);
    unsigned nulls = 0;
    for (const char *at = strstr(r->out, "\"holder\":null"); at != NULL;
         at = strstr(at + 1, "\"holder\":null"))
        nulls++;
    cr_assert_eq(nulls, 5, "%s", r->out);
    r = cli_run(CLI_ARGS("--config", cli.config, "release", "job", old), NULL, T);
    cli_expect_exit(r, 0);
    expect_released(r, "job");
}

/* --metrics-file: written before CMD runs (the lock held) and at the end
 * (released), in the Prometheus text format, renamed into place with no
 * temporary file left beside it; a directory that is not there is said
 * once and the run goes on. */
Test(cli_run, metrics_file_is_written_while_cmd_runs_and_at_the_end)
{
    const char *prom = cli_path("redlock.prom");
    const cli_result *r = RUN("--metrics-file", prom, "job", "--", "sh", "-c",
                              "grep -qx 'redlock_locks_held 1' \"$1\"", "sh", prom);
    cli_expect_exit(r, 0);
    const char *text = cli_read_file(prom);
    cr_assert_not_null(text);
    cr_expect_not_null(strstr(text, "\nredlock_releases_total 1\n"), "%s", text);
    cr_expect_not_null(strstr(text, "\nredlock_locks_held 0\n"), "%s", text);
    cr_expect_not_null(strstr(text, "\nredlock_acquires_total{status=\"ok\"} 1\n"), "%s", text);
    cr_expect_not_null(strstr(text, cli_format("\nredlock_master_up{master=\"%s\"} 1\n", cli_node(0))),
                       "%s", text);
    char dir[512];
    snprintf(dir, sizeof(dir), "%s", prom);
    *strrchr(dir, '/') = '\0';
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d))
        cr_expect_neq(strncmp(e->d_name, ".redlock.prom.", 14), 0, "a temporary file left: %s",
                      e->d_name);
    closedir(d);

    r = RUN("--metrics-file", "/nonexistent-redlock-dir/x.prom", "job", "true");
    cli_expect_exit(r, 0);
    const char *said = "--metrics-file /nonexistent-redlock-dir/x.prom: No such file or directory";
    const char *first = strstr(r->err, said);
    cr_expect_not_null(first, "%s", r->err);
    cr_expect(first == NULL || strstr(first + 1, said) == NULL, "said twice: %s", r->err);
}

/* --slots K: K runs hold RESOURCE at once, each on a slot of its own
 * (REDLOCK_RESOURCE names it), and one more is refused (75). */
Test(cli_run, slots_let_k_runs_hold_at_once_and_refuse_one_more)
{
    const char *files[2] = {cli_path("slot-a"), cli_path("slot-b")};
    cli_proc *runs[2];
    for (size_t i = 0; i < 2; i++) {
        char script[512];
        snprintf(script, sizeof(script), "printf %%s \"$REDLOCK_RESOURCE\" >'%s'; sleep 3",
                 files[i]);
        runs[i] = cli_spawn(CLI_ARGS("--config", cli.config, "run", "--slots", "2", "builds",
                                     "--", "sh", "-c", script),
                            NULL);
    }
    for (size_t i = 0; i < 2; i++)
        cr_assert(cli_wait_until(cli_file_exists, (void *)files[i], T), "run %zu never ran", i);
    const cli_result *r = cli_run(CLI_ARGS("--config", cli.config, "run", "--slots", "2",
                                           "--wait", "0", "builds", "--", "true"),
                                  NULL, T);
    cli_expect_exit(r, 75);
    for (size_t i = 0; i < 2; i++)
        cli_expect_exit(cli_wait(runs[i], T), 0);
    char got[2][64];
    for (size_t i = 0; i < 2; i++)
        snprintf(got[i], sizeof(got[i]), "%s", cli_read_file(files[i]));
    cr_assert(strcmp(got[0], got[1]) != 0 &&
                  (strcmp(got[0], "builds:slot:0") == 0 || strcmp(got[0], "builds:slot:1") == 0) &&
                  (strcmp(got[1], "builds:slot:0") == 0 || strcmp(got[1], "builds:slot:1") == 0),
              "slots %s and %s", got[0], got[1]);
    cli_expect_key_gone("builds:slot:0", "after the runs");
    cli_expect_key_gone("builds:slot:1", "after the runs");
    r = cli_run(CLI_ARGS("--config", cli.config, "run", "--slots", "65", "builds", "--", "true"),
                NULL, T);
    cli_expect_exit(r, 64);
    /* acquire names the slot after the value: release takes it. */
    r = cli_run(CLI_ARGS("--config", cli.config, "acquire", "--slots", "2", "builds"), NULL, T);
    cli_expect_exit(r, 0);
    char value[128];
    char key[64];
    cr_assert_eq(sscanf(r->out, "%127s %63s", value, key), 2, "acquire printed: %s", r->out);
    cr_assert_str_eq(key, "builds:slot:0");
    cli_expect_exit(cli_run(CLI_ARGS("--config", cli.config, "release", key, value), NULL, T), 0);
    cli_expect_key_gone("builds:slot:0", "released by its slot");
}
