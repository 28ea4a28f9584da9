/* SPDX-License-Identifier: BSD-3-Clause */
/* Signals sent to `redlock run` reach CMD; redlock then exits with CMD's
 * status and releases the lock. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define T CLI_RUN_TIMEOUT_MS

TestSuite(cli_signals, .init = cli_setup_five, .fini = cli_teardown, .timeout = 120);

static bool sigwatch_started(void *file)
{
    return cli_sigwatch_pid(file) != 0;
}

/*
 * Run `redlock run RESOURCE -- sigwatch [--exit NAME CODE] FILE`, send
 * signo to redlock once CMD runs, and check that CMD recorded it, that
 * redlock exited with `status` and that the lock is gone.
 */
static void forward(const char *resource, int signo, const char *name, const char *exit_code,
                    int status)
{
    const char *file = cli_path(cli_format("%s.signals", resource));
    cli_proc *p =
        exit_code != NULL
            ? cli_spawn(CLI_ARGS("--config", cli.config, "run", resource, "--", SIGWATCH, "--exit",
                                 name, exit_code, file),
                        NULL)
            : cli_spawn(CLI_ARGS("--config", cli.config, "run", resource, "--", SIGWATCH, file),
                        NULL);
    cr_assert(cli_wait_until(sigwatch_started, (void *)file, 10000), "CMD did not start");
    cli_track(cli_sigwatch_pid(file));
    cr_assert_geq(cli_masters_with_key(resource), 3);

    cr_assert_eq(kill(cli_proc_pid(p), signo), 0);
    const cli_result *r = cli_wait(p, T);
    cli_expect_exit(r, status);
    cr_assert_geq(cli_sigwatch_ns(file, name), 0, "%s: CMD did not get SIG%s: %s", r->cmdline,
                  name, cli_read_file(file));
    cli_expect_key_gone(resource, r->cmdline);
}

Test(cli_signals, sigterm_is_forwarded_and_cmd_dying_of_it_gives_143)
{
    forward("term", SIGTERM, "TERM", NULL, 128 + SIGTERM);
}

Test(cli_signals, sigterm_is_forwarded_and_cmds_own_exit_code_is_returned)
{
    forward("term-exit", SIGTERM, "TERM", "7", 7);
    forward("term-exit-0", SIGTERM, "TERM", "0", 0);
}

Test(cli_signals, sigint_sighup_and_sigquit_are_forwarded)
{
    forward("int", SIGINT, "INT", NULL, 128 + SIGINT);
    forward("hup", SIGHUP, "HUP", NULL, 128 + SIGHUP);
    forward("quit", SIGQUIT, "QUIT", NULL, 128 + SIGQUIT);
}

/*
 * `--wait forever` on a held resource: the config's retry policy (3
 * retries, 20 ms apart) would give up within a fraction of a second; this
 * keeps trying until SIGTERM, which ends it with 128 + 15, CMD never run
 * (run) and no value printed (acquire), and no key of its own left.
 */
static void wait_forever_until_sigterm(const char *const args[])
{
    const char *holder = cli_acquire("job", "60s");
    size_t held = cli_masters_with_key("job");
    cli_proc *p = cli_spawn(args, NULL);
    tc_sleep_ms((int)fleet_scaled_ms(1500));
    cr_assert(!cli_proc_exited(p), "gave up waiting within 1.5 s");
    cr_assert_eq(kill(cli_proc_pid(p), SIGTERM), 0);
    const cli_result *r = cli_wait(p, T);
    cli_expect_exit(r, 128 + SIGTERM);
    cr_assert_str_empty(r->out, "%s: stdout:\n%s", r->cmdline, r->out);
    cr_assert_eq(cli_masters_holding("job", holder), held, "%s", cli_describe_key("job"));
    cr_assert_eq(cli_keys_total(), (long long)held, "a key of the waiter's was left: %s",
                 cli_describe_key("job"));
}

Test(cli_signals, run_waiting_forever_ends_on_sigterm_with_143)
{
    const char *marker = cli_path("ran");
    wait_forever_until_sigterm(
        CLI_ARGS("--config", cli.config, "run", "--wait", "forever", "job", "touch", marker));
    cr_assert_neq(access(marker, F_OK), 0, "CMD ran without the lock");
}

Test(cli_signals, acquire_waiting_forever_ends_on_sigterm_with_143)
{
    wait_forever_until_sigterm(CLI_ARGS("--config", cli.config, "acquire", "-w", "inf", "job"));
}
