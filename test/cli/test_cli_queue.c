/* SPDX-License-Identifier: BSD-3-Clause */
/* `redlock run --wait`: a host's waiters for one lock take turns on a local
 * file lock before asking the masters (tool/local_queue.h), so a release
 * wakes one of them, not all; a turn kept by a stopped process holds the
 * others back at most a TTL; a signal ends the wait for a turn. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T CLI_RUN_TIMEOUT_MS
#define WAITERS 4

TestSuite(cli_queue, .init = cli_setup_five, .fini = cli_teardown, .timeout = 120);

static bool holds_job(void *arg)
{
    (void)arg;
    return cli_masters_with_key("job") >= 3;
}

/* The outcomes "held" (another holder's value found) in a metrics file:
 * one per master per attempt that found the lock taken. */
static long long held_outcomes(const char *path)
{
    const char *text = cli_read_file(path);
    cr_assert_not_null(text, "%s was not written", path);
    long long sum = 0;
    for (const char *p = strstr(text, "outcome=\"held\"} "); p != NULL;
         p = strstr(p + 1, "outcome=\"held\"} "))
        sum += atoll(p + strlen("outcome=\"held\"} "));
    return sum;
}

/* One holder, then WAITERS waiting: each takes the lock in turn, and none
 * ever finds it taken on a master. Without the queue every release woke
 * every waiter, and all but one found it held. */
Test(cli_queue, waiters_on_one_host_ask_the_masters_one_at_a_time)
{
    cli_proc *holder = cli_spawn(CLI_ARGS("--config", cli.config, "run", "--wait", "20s",
                                          "--no-fencing", "job", "--", "sleep", "0.6"),
                                 NULL);
    cr_assert(cli_wait_until(holds_job, NULL, T), "the first run did not take the lock");
    cli_proc *waiters[WAITERS];
    const char *metrics[WAITERS];
    for (int i = 0; i < WAITERS; i++) {
        metrics[i] = cli_path(cli_format("waiter%d.prom", i));
        waiters[i] = cli_spawn(CLI_ARGS("--config", cli.config, "run", "--wait", "20s",
                                        "--no-fencing", "--metrics-file", metrics[i], "job",
                                        "--", "sleep", "0.1"),
                               NULL);
    }
    cli_expect_exit(cli_wait(holder, T), 0);
    long long held = 0;
    for (int i = 0; i < WAITERS; i++) {
        cli_expect_exit(cli_wait(waiters[i], T), 0);
        held += held_outcomes(metrics[i]);
    }
    cr_expect_eq(held, 0,
                 "the waiters found the lock taken %lld times on a master: they did not take "
                 "turns",
                 held);
    cli_expect_key_gone("job", "after every run");
}

/* A process that has the turn and is stopped keeps it; its lock expires
 * after its TTL, and a waiter behind it asks the masters after at most a
 * TTL of waiting: not after the whole --wait. */
Test(cli_queue, a_stopped_turn_holds_the_others_back_at_most_a_ttl)
{
    cli_proc *holder = cli_spawn(CLI_ARGS("--config", cli.config, "run", "--ttl", "1s",
                                          "--wait", "20s", "--no-fencing", "job", "--",
                                          "sleep", "30"),
                                 NULL);
    cr_assert(cli_wait_until(holds_job, NULL, T), "the first run did not take the lock");
    cr_assert_eq(kill(cli_proc_pid(holder), SIGSTOP), 0);
    const char *marker = cli_path("ran");
    const cli_result *r =
        cli_run(CLI_ARGS("--config", cli.config, "run", "--ttl", "1s", "--wait", "15s",
                         "--no-fencing", "job", "--", "touch", marker),
                NULL, T);
    kill(cli_proc_pid(holder), SIGCONT);
    cli_expect_exit(r, 0);
    cr_assert_eq(access(marker, F_OK), 0, "CMD did not run");
    cr_expect(r->elapsed_ms < 6000,
              "%s: took %.0f ms behind a stopped turn with a TTL of 1 s (the whole wait is "
              "15 s)",
              r->cmdline, r->elapsed_ms);
}

/* A signal while waiting for a turn ends the run at once, as while
 * waiting for the masters: 128 + N, CMD not run. */
Test(cli_queue, a_signal_ends_the_wait_for_a_turn)
{
    cli_proc *holder = cli_spawn(CLI_ARGS("--config", cli.config, "run", "--wait", "20s",
                                          "--no-fencing", "job", "--", "sleep", "30"),
                                 NULL);
    cr_assert(cli_wait_until(holds_job, NULL, T), "the first run did not take the lock");
    const char *marker = cli_path("ran");
    cli_proc *waiter = cli_spawn(CLI_ARGS("--config", cli.config, "run", "--wait", "20s",
                                          "--no-fencing", "job", "--", "touch", marker),
                                 NULL);
    tc_sleep_ms(300);
    cr_assert(!cli_proc_exited(waiter), "the waiter gave up waiting 20 s");
    cr_assert_eq(kill(cli_proc_pid(waiter), SIGTERM), 0);
    const cli_result *r = cli_wait(waiter, 5000);
    cli_expect_exit(r, 128 + SIGTERM);
    cr_expect_not_null(strstr(r->err, "interrupted by signal 15 while acquiring"), "%s", r->err);
    cr_assert_neq(access(marker, F_OK), 0, "CMD ran");
    cr_assert_eq(kill(cli_proc_pid(holder), SIGTERM), 0);
    cli_wait(holder, T);
}
