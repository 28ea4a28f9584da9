/* SPDX-License-Identifier: BSD-3-Clause */
/* What the lock guarantees through `redlock run`: mutual exclusion between
 * concurrent runs, CMD stopped before the validity ends when the lock is
 * lost, CMD killed with redlock, and the lock expiring after a crash. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T CLI_RUN_TIMEOUT_MS

TestSuite(cli_lock, .init = cli_setup_five, .fini = cli_teardown, .timeout = 150);

/* ---- Mutual exclusion --------------------------------------------------------- */

#define RUNNERS 8

typedef struct section {
    long pid;
    long long start_ns, end_ns;
} section;

static int by_start(const void *a, const void *b)
{
    const section *x = a;
    const section *y = b;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* Parse "start|end <ns> <pid>" lines into one section per pid. */
static size_t parse_sections(const char *text, section *out, size_t max)
{
    size_t n = 0;
    size_t lines = 0;
    for (const char *line = text; *line != '\0';) {
        char kind[8];
        long long ns;
        long pid;
        cr_assert_eq(sscanf(line, "%7s %lld %ld", kind, &ns, &pid), 3, "bad line in:\n%s", text);
        lines++;
        size_t k = 0;
        while (k < n && out[k].pid != pid)
            k++;
        if (k == n) {
            cr_assert_lt(n, max, "more sections than runners:\n%s", text);
            out[n++] = (section){pid, -1, -1};
        }
        long long *slot = strcmp(kind, "start") == 0 ? &out[k].start_ns
                          : strcmp(kind, "end") == 0 ? &out[k].end_ns
                                                     : NULL;
        cr_assert(slot != NULL && *slot == -1, "unexpected line for pid %ld in:\n%s", pid, text);
        *slot = ns;
        const char *nl = strchr(line, '\n');
        line = nl != NULL ? nl + 1 : line + strlen(line);
    }
    cr_assert_eq(lines, 2 * n, "unpaired lines in:\n%s", text);
    return n;
}

Test(cli_lock, concurrent_runs_never_overlap)
{
    const char *log = cli_path("sections");
    const char *script = "echo \"start $(\"$1\") $$\" >> \"$2\"; sleep 0.05; "
                         "echo \"end $(\"$1\") $$\" >> \"$2\"";
    cli_proc *runners[RUNNERS];
    for (size_t k = 0; k < RUNNERS; k++)
        runners[k] = cli_spawn(CLI_ARGS("--config", cli.config, "run", "--wait", "30s", "--ttl",
                                        "10s", "mutex", "--", "sh", "-c", script, "sh", MONOTIME,
                                        log),
                               NULL);
    for (size_t k = 0; k < RUNNERS; k++)
        cli_expect_exit(cli_wait(runners[k], 60000), 0);

    const char *text = cli_read_file(log);
    cr_assert_not_null(text, "no critical section ran");
    section s[RUNNERS];
    size_t n = parse_sections(text, s, RUNNERS);
    cr_assert_eq(n, RUNNERS, "%zu critical sections, expected %d:\n%s", n, RUNNERS, text);
    qsort(s, n, sizeof(s[0]), by_start);
    for (size_t k = 0; k < n; k++) {
        cr_assert(s[k].start_ns > 0 && s[k].end_ns > s[k].start_ns, "pid %ld: bad section",
                  s[k].pid);
        if (k > 0)
            cr_assert_gt(s[k].start_ns, s[k - 1].end_ns,
                         "pid %ld started %.1f ms before pid %ld ended:\n%s", s[k].pid,
                         (double)(s[k - 1].end_ns - s[k].start_ns) / 1e6, s[k - 1].pid, text);
    }
    cli_expect_key_gone("mutex", "after every run");
}

/* ---- Lock lost while CMD runs -------------------------------------------------- */

typedef struct lost_run {
    cli_proc *redlock;
    const char *file;  /* sigwatch's record */
    int cmd_fd;        /* pidfd of CMD */
    double paused_ms;  /* when the first master was paused */
    double deadline_ms; /* no later than this, the lock's validity ended */
} lost_run;

static bool sigwatch_started(void *file)
{
    return cli_sigwatch_pid(file) != 0;
}

/*
 * Start `redlock run --ttl 1500 [--kill-after K] lost -- sigwatch [--ignore
 * TERM] FILE`, wait until CMD runs and the lock was extended, then lose the
 * lock (cli_pause_majority).
 */
static lost_run lose_the_lock(bool cmd_ignores_term, const char *kill_after)
{
    lost_run l = {0};
    l.file = cli_path("signals");
    const char *args[20];
    size_t n = 0;
    args[n++] = "--config";
    args[n++] = cli_lost_config();
    args[n++] = "run";
    args[n++] = "--ttl";
    args[n++] = cli_format("%dms", CLI_LOST_TTL_MS);
    if (kill_after != NULL) {
        args[n++] = "--kill-after";
        args[n++] = kill_after;
    }
    args[n++] = "lost";
    args[n++] = "--";
    args[n++] = SIGWATCH;
    if (cmd_ignores_term) {
        args[n++] = "--ignore";
        args[n++] = "TERM";
    }
    args[n++] = l.file;
    args[n] = NULL;
    l.redlock = cli_spawn(args, NULL);
    cr_assert(cli_wait_until(sigwatch_started, (void *)l.file, 10000), "CMD did not start");
    l.cmd_fd = cli_track(cli_sigwatch_pid(l.file));
    cr_assert_geq(l.cmd_fd, 0, "CMD exited at once: %s", cli_read_file(l.file));
    cr_assert_geq(cli_masters_with_key("lost"), 3);
    cr_assert(cli_wait_extended("lost", 5000), "no extension seen in 5 s");
    l.deadline_ms = cli_pause_majority("lost", &l.paused_ms);
    return l;
}

Test(cli_lock, a_lost_lock_stops_cmd_with_sigterm_before_the_validity_ends)
{
    lost_run l = lose_the_lock(false, NULL);
    const cli_result *r = cli_wait(l.redlock, T);
    cli_expect_exit(r, 80);
    long long term_ns = cli_sigwatch_ns(l.file, "TERM");
    cr_assert_geq(term_ns, 0, "CMD got no SIGTERM: %s", cli_read_file(l.file));
    double term_ms = (double)term_ns / 1e6;
    cr_log_info("paused at 0 ms, SIGTERM at %.0f ms, validity ended by %.0f ms",
                term_ms - l.paused_ms, l.deadline_ms - l.paused_ms);
    cr_assert_gt(term_ms, l.paused_ms, "SIGTERM before the lock was lost");
    cr_assert_lt(term_ms, l.deadline_ms,
                 "SIGTERM %.0f ms after the pause, but the lock's validity ended at most %.0f ms "
                 "after it",
                 term_ms - l.paused_ms, l.deadline_ms - l.paused_ms);
    cr_assert(cli_wait_gone(l.cmd_fd, 5000, NULL), "CMD outlived redlock");
    cli_resume_majority("lost");
}

Test(cli_lock, a_lost_lock_kills_a_cmd_ignoring_sigterm_before_the_validity_ends)
{
    lost_run l = lose_the_lock(true, NULL);
    double gone_ms = 0;
    cr_assert(cli_wait_gone(l.cmd_fd, 10000, &gone_ms), "CMD still runs 10 s after the loss");
    cr_assert_lt(gone_ms, l.deadline_ms,
                 "CMD gone %.0f ms after the pause, but the lock's validity ended at most %.0f "
                 "ms after it",
                 gone_ms - l.paused_ms, l.deadline_ms - l.paused_ms);
    long long term_ns = cli_sigwatch_ns(l.file, "TERM");
    cr_assert_geq(term_ns, 0, "CMD got no SIGTERM before SIGKILL: %s", cli_read_file(l.file));
    cr_log_info("paused at 0 ms, SIGTERM at %.0f ms, CMD gone at %.0f ms, validity ended by "
                "%.0f ms",
                (double)term_ns / 1e6 - l.paused_ms, gone_ms - l.paused_ms,
                l.deadline_ms - l.paused_ms);
    cli_expect_exit(cli_wait(l.redlock, T), 80);
    cli_resume_majority("lost");
}

/* --kill-after sets the delay between SIGTERM and SIGKILL: 200 ms, longer
 * than the default here (half of the ~250 ms of validity left). */
Test(cli_lock, kill_after_sets_the_delay_before_sigkill)
{
    lost_run l = lose_the_lock(true, "200ms");
    double gone_ms = 0;
    cr_assert(cli_wait_gone(l.cmd_fd, 10000, &gone_ms), "CMD still runs 10 s after the loss");
    long long term_ns = cli_sigwatch_ns(l.file, "TERM");
    cr_assert_geq(term_ns, 0, "CMD got no SIGTERM before SIGKILL: %s", cli_read_file(l.file));
    double term_ms = (double)term_ns / 1e6;
    cr_log_info("SIGTERM at %.0f ms, CMD gone at %.0f ms after the pause", term_ms - l.paused_ms,
                gone_ms - l.paused_ms);
    /* sigwatch stamps SIGTERM when it wakes, maybe late: some slack. */
    cr_assert(gone_ms - term_ms >= 170 && gone_ms - term_ms < 1000,
              "SIGKILL %.0f ms after SIGTERM, not 200", gone_ms - term_ms);
    cli_expect_exit(cli_wait(l.redlock, T), 80);
    cli_resume_majority("lost");
}

/* ---- redlock killed -------------------------------------------------------------- */

static bool has_exited(void *p)
{
    return cli_proc_exited(p);
}

Test(cli_lock, killing_redlock_kills_cmd_and_the_lock_expires_after_its_ttl)
{
    const char *file = cli_path("signals");
    cli_proc *p = cli_spawn(
        CLI_ARGS("--config", cli.config, "run", "--ttl", "3s", "crash", "--", SIGWATCH, file),
        NULL);
    cr_assert(cli_wait_until(sigwatch_started, (void *)file, 10000), "CMD did not start");
    int cmd_fd = cli_track(cli_sigwatch_pid(file));
    cr_assert_geq(cmd_fd, 0, "CMD exited at once: %s", cli_read_file(file));

    cr_assert_eq(kill(cli_proc_pid(p), SIGKILL), 0);
    double killed_ms = tc_now_ms();
    cr_assert(cli_wait_until(has_exited, p, 3000), "redlock still runs 3 s after SIGKILL");
    /* The key stays until its TTL, so nobody else gets the lock meanwhile
     * (at least 2 s of the 3 s TTL were left, extensions being every 1 s).
     * Read on the masters: a tool started to try would take long to start
     * under valgrind. */
    size_t holding = cli_masters_with_key("crash");
    if (tc_now_ms() - killed_ms < 1500)
        cr_assert_geq(holding, 3, "the lock did not outlive redlock: %s",
                      cli_describe_key("crash"));
    else
        cr_log_warn("the machine is too slow to check that the lock outlives redlock");
    cr_assert(cli_wait_gone(cmd_fd, 3000, NULL), "CMD still runs 3 s after redlock died");
    const cli_result *r = cli_wait(p, T);
    cr_assert_eq(r->signal, SIGKILL, "%s: not killed by SIGKILL", r->cmdline);

    double deadline = killed_ms + 3000 + 5000;
    while (cli_masters_with_key("crash") > 0 && tc_now_ms() < deadline)
        tc_sleep_ms(20);
    cli_expect_key_gone("crash", "5 s after the TTL");
    cli_expect_exit(
        cli_run(CLI_ARGS("--config", cli.config, "acquire", "--wait", "0", "crash"), NULL, T), 0);
}

/* --lock-delay with the holder killed: the keys outlive its last extension
 * by TTL + delay (ttl 3 s, extended every 1 s; delay 2 s): a quorum of them
 * stays past the TTL alone, and they go by TTL + delay. */
Test(cli_lock, killing_redlock_with_a_lock_delay_keeps_the_lock_for_ttl_plus_delay)
{
    const char *file = cli_path("signals");
    cli_proc *p = cli_spawn(CLI_ARGS("--config", cli.config, "run", "--ttl", "3s",
                                     "--lock-delay", "2s", "delayed", "--", SIGWATCH, file),
                            NULL);
    cr_assert(cli_wait_until(sigwatch_started, (void *)file, 10000), "CMD did not start");
    cr_assert_eq(kill(cli_proc_pid(p), SIGKILL), 0);
    double killed_ms = tc_now_ms();
    cr_assert(cli_wait_until(has_exited, p, 3000), "redlock still runs 3 s after SIGKILL");
    cli_wait(p, T);

    /* Free for a quorum: fewer than 3 of the 5 masters keep the key. */
    double deadline = killed_ms + 3000 + 2000 + 3000;
    while (cli_masters_with_key("delayed") >= 3 && tc_now_ms() < deadline)
        tc_sleep_ms(10);
    double free_ms = tc_now_ms() - killed_ms;
    cr_assert_geq(free_ms, 3000 + 500, "taken only %.0f ms after the holder died", free_ms);
    cr_assert_lt(free_ms, 3000 + 2000 + 1000, "still taken %.0f ms after the holder died: %s",
                 free_ms, cli_describe_key("delayed"));
    cli_expect_exit(
        cli_run(CLI_ARGS("--config", cli.config, "acquire", "--wait", "0", "delayed"), NULL, T),
        0);
}

/* A --ttl over max_ttl_ms, with masters not durable, is refused at once
 * (a usage error), saying why; within it, the lock is taken. */
Test(cli_lock, a_ttl_over_max_ttl_is_refused)
{
    cli_config_options o = {.ttl_ms = 1000, .extra = "durable: false\nmax_ttl_ms: 1000"};
    const char *config = cli_write_config("maxttl.yaml", &o);
    const cli_result *r = cli_run(CLI_ARGS("-c", config, "acquire", "--ttl", "5s", "job"), NULL,
                                  CLI_RUN_TIMEOUT_MS);
    cli_expect_exit(r, 64);
    cr_assert_not_null(strstr(r->err, redlock_strerror(REDLOCK_EMAXTTL)), "stderr:\n%s", r->err);
}
