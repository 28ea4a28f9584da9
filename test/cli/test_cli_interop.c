/* SPDX-License-Identifier: BSD-3-Clause */
/* The 0.2 tool and this one share a lock (docs/servers.md): whichever
 * takes it, the other finds it held, extends and releases it by its value,
 * and neither's automatic extension (this one's without a script where the
 * master has SET IFEQ, 0.2's with the extend script) lets the other in.
 * Run by the server matrix against every kind of master
 * (test/servers/CMakeLists.txt), with 0.2's redlock built from this
 * repository's history (scripts/old-tool.sh). */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef REDLOCK_OLD_TOOL
#error "REDLOCK_OLD_TOOL (path of the 0.2 redlock tool) must be defined"
#endif

#define T CLI_RUN_TIMEOUT_MS
#define MASTERS 3
#define RES "interop"

static void three_masters(void)
{
    cli_setup(MASTERS, NULL);
    cr_assert_eq(access(REDLOCK_OLD_TOOL, X_OK), 0,
                 "%s: not built (the fixture servers.old_tool builds it)", REDLOCK_OLD_TOOL);
}

TestSuite(cli_interop, .init = three_masters, .fini = cli_teardown, .timeout = 120);

/* 0.2 knows none of the newer settings: its config names the nodes alone. */
static const char *old_config(void)
{
    char text[512];
    int n = snprintf(text, sizeof(text), "nodes:\n");
    for (size_t i = 0; i < MASTERS; i++)
        n += snprintf(text + n, sizeof(text) - (size_t)n, "  - host: 127.0.0.1\n    port: %d\n",
                      fleet_port(cli.fleet, i));
    return cli_write_file("old.yaml", text, 0600);
}

static const cli_result *old_run(const char *const args[])
{
    return cli_wait(cli_spawn_program(REDLOCK_OLD_TOOL, args, NULL), T);
}

static const cli_result *new_run(const char *const args[])
{
    return cli_run(args, NULL, T);
}

/* The value a successful acquire printed (its first line). */
static const char *value_of(const cli_result *r)
{
    cli_expect_exit(r, 0);
    return cli_first_line(r->out);
}

Test(cli_interop, each_finds_the_others_lock_held_and_frees_it_by_its_value)
{
    const char *old_cfg = old_config();
    const char *v = value_of(new_run(CLI_ARGS("--config", cli.config, "acquire", "--ttl", "30s",
                                              RES)));
    cli_expect_exit(old_run(CLI_ARGS("--config", old_cfg, "acquire", "--ttl", "30s", "--wait",
                                     "0", RES)),
                    75);
    cli_expect_exit(old_run(CLI_ARGS("--config", old_cfg, "extend", "--ttl", "60s", RES, v)), 0);
    cr_expect_eq(cli_masters_holding(RES, v), MASTERS, "0.2 extended it: %s",
                 cli_describe_key(RES));
    cli_expect_exit(old_run(CLI_ARGS("--config", old_cfg, "release", RES, v)), 0);
    cli_expect_key_gone(RES, "0.2 released this version's lock");

    const char *w = value_of(old_run(CLI_ARGS("--config", old_cfg, "acquire", "--ttl", "30s",
                                              RES)));
    cli_expect_exit(new_run(CLI_ARGS("--config", cli.config, "acquire", "--ttl", "30s",
                                     "--wait", "0", RES)),
                    75);
    cli_expect_exit(new_run(CLI_ARGS("--config", cli.config, "extend", "--ttl", "60s", RES, w)),
                    0);
    cr_expect_eq(cli_masters_holding(RES, w), MASTERS, "this version extended it: %s",
                 cli_describe_key(RES));
    cli_expect_exit(new_run(CLI_ARGS("--config", cli.config, "release", RES, w)), 0);
    cli_expect_key_gone(RES, "this version released 0.2's lock");
}

static bool held_by_a_quorum(void *arg)
{
    (void)arg;
    return cli_masters_with_key(RES) >= MASTERS / 2 + 1;
}

/* A run holding the lock past three of its TTLs, extended on the way: the
 * other version's acquire finds it held throughout, and takes it after. */
static void a_run_keeps_the_other_out(bool new_holds, const char *old_cfg)
{
    const char *const new_args[] = {"--config", cli.config, "run", "--no-fencing", "--ttl",
                                    "1s", RES, "--", "sleep", "3.5", NULL};
    const char *const old_args[] = {"--config", old_cfg, "run", "--ttl", "1s", RES,
                                    "--", "sleep", "3.5", NULL};
    cli_proc *holder = new_holds ? cli_spawn(new_args, NULL)
                                 : cli_spawn_program(REDLOCK_OLD_TOOL, old_args, NULL);
    cr_assert(cli_wait_until(held_by_a_quorum, NULL, T), "the run did not take the lock");
    for (int i = 0; i < 3; i++) {
        usleep(800 * 1000); /* 2.4 s in all: past two TTLs, extended or lost */
        const char *const try_new[] = {"--config", cli.config, "acquire", "--ttl", "10s",
                                       "--wait", "0", RES, NULL};
        const char *const try_old[] = {"--config", old_cfg, "acquire", "--ttl", "10s",
                                       "--wait", "0", RES, NULL};
        const cli_result *r = new_holds ? old_run(try_old) : new_run(try_new);
        cr_expect_eq(r->exit_code, 75, "%s, %.1f s into the run: exit %d (%s)", r->cmdline,
                     0.8 * (i + 1), r->exit_code, cli_describe_key(RES));
    }
    cli_expect_exit(cli_wait(holder, T), 0);
    cli_expect_key_gone(RES, "after the run");
}

Test(cli_interop, a_run_of_this_version_keeps_0_2_out_while_it_extends)
{
    a_run_keeps_the_other_out(true, old_config());
}

Test(cli_interop, a_run_of_0_2_keeps_this_version_out_while_it_extends)
{
    a_run_keeps_the_other_out(false, old_config());
}
