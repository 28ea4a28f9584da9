/* SPDX-License-Identifier: BSD-3-Clause */
/* A stopped master (SIGSTOP: its kernel still accepts connections, it
 * answers nothing) adds nothing to a short call of the tool, and a short
 * call leaves no clock probe key that outlives it by much. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <string.h>

#define T CLI_RUN_TIMEOUT_MS

/* The master stopped in these tests: one of five, a minority. */
#define STOPPED 4
/* The probe's life (RL_PROBE_PX_MS): no probe key may live longer. */
#define PROBE_LIFE_MS 10000

TestSuite(cli_stopped, .init = cli_setup_five, .fini = cli_teardown, .timeout = 120);

/* A config whose connect timeout (5 s) would show in any wait for the
 * stopped master's handshake (the TTL must stay above it, at any time
 * scale). */
static const char *slow_connect_config(void)
{
    cli_config_options o = {.connect_timeout_ms = (long)fleet_scaled_ms(5000),
                            .ttl_ms = (long)fleet_scaled_ms(30000)};
    return cli_write_config("slow-connect.yaml", &o);
}

/* Well within the connect timeout, with room for a loaded machine. */
static void expect_quick(const cli_result *r)
{
    cli_expect_exit(r, 0);
    cr_expect_lt(r->elapsed_ms, fleet_scaled_ms(1500),
                 "%s took %.0f ms with master %d stopped (connect timeout 5 s):\n%s", r->cmdline,
                 r->elapsed_ms, STOPPED, r->err);
}

Test(cli_stopped, run_does_not_wait_for_a_stopped_master)
{
    const char *config = slow_connect_config();
    cr_assert_eq(fleet_pause(cli.fleet, STOPPED), 0);
    expect_quick(cli_run(CLI_ARGS("--config", config, "run", "job", "--", "true"), NULL, T));
    expect_quick(cli_run(CLI_ARGS("--config", config, "run", "--no-fencing", "job", "--", "true"),
                         NULL, T));
    cli_expect_key_gone("job", "after the runs");
    cr_assert_eq(fleet_resume(cli.fleet, STOPPED), 0);
    /* It never had our SET: nothing of ours is there once it runs again. */
    cr_assert_eq(fleet_ping(cli.fleet, STOPPED, (int)fleet_scaled_ms(2000)), 0);
    tc_sleep_ms(100); /* what waited in its sockets has run */
    cli_expect_key_gone("job", "after the stopped master resumed");
}

Test(cli_stopped, acquire_and_release_do_not_wait_for_a_stopped_master)
{
    const char *config = slow_connect_config();
    cr_assert_eq(fleet_pause(cli.fleet, STOPPED), 0);
    const cli_result *r =
        cli_run(CLI_ARGS("--config", config, "acquire", "job"), NULL, T);
    expect_quick(r);
    const char *value = cli_first_line(r->out);
    cr_assert(cli_is_value(value), "not a value: %s", r->out);
    cr_assert_eq(cli_masters_holding("job", value), CLI_MASTERS - 1, "%s",
                 cli_describe_key("job"));
    expect_quick(cli_run(CLI_ARGS("--config", config, "release", "job", value), NULL, T));
    cli_expect_key_gone("job", "after the release");
    cr_assert_eq(fleet_resume(cli.fleet, STOPPED), 0);
    cr_assert_eq(fleet_ping(cli.fleet, STOPPED, (int)fleet_scaled_ms(2000)), 0);
    tc_sleep_ms(100); /* what waited in its sockets has run */
    cli_expect_key_gone("job", "after the stopped master resumed");
}

/* The longest PTTL of a clock probe key on master i (-1: none there);
 * *count gets how many there are. */
static long long longest_probe_ms(size_t i, size_t *count)
{
    redisReply *keys = fleet_command(cli.fleet, i, "KEYS redlock:clock:*");
    cr_assert(keys != NULL && keys->type == REDIS_REPLY_ARRAY, "master %zu: KEYS failed", i);
    long long longest = -1;
    *count = keys->elements;
    for (size_t k = 0; k < keys->elements; k++) {
        long long pttl = fleet_pttl(cli.fleet, i, keys->element[k]->str, keys->element[k]->len);
        if (pttl > longest)
            longest = pttl;
    }
    freeReplyObject(keys);
    return longest;
}

static void expect_no_long_lived_probe(const char *context)
{
    for (size_t i = 0; i < CLI_MASTERS; i++) {
        size_t count = 0;
        long long longest = longest_probe_ms(i, &count);
        cr_expect_leq(longest, PROBE_LIFE_MS,
                      "%s: master %zu keeps %zu probe key(s), one for %lld ms more", context, i,
                      count, longest);
    }
}

Test(cli_stopped, a_short_call_leaves_no_long_lived_probe_key)
{
    const cli_result *r = cli_run(CLI_ARGS("--config", cli.config, "run", "job", "--", "true"),
                                  NULL, T);
    cli_expect_exit(r, 0);
    expect_no_long_lived_probe("after a run");

    /* Stopped during the whole call: the probe's SET, sent with the
     * handshake, waits in its socket and runs when it resumes, and so does
     * its DEL, written behind it when the tool is done. */
    freeReplyObject(fleet_command(cli.fleet, STOPPED, "CONFIG RESETSTAT"));
    cr_assert_eq(fleet_pause(cli.fleet, STOPPED), 0);
    r = cli_run(CLI_ARGS("--config", cli.config, "run", "job", "--", "true"), NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_eq(fleet_resume(cli.fleet, STOPPED), 0);
    cr_assert_eq(fleet_ping(cli.fleet, STOPPED, (int)fleet_scaled_ms(2000)), 0);
    tc_sleep_ms(100); /* what waited in its sockets has run */
    cr_expect_geq(fleet_info_number(cli.fleet, STOPPED, "commandstats", "cmdstat_set:calls="), 1,
                  "the handshake's probe SET never ran on the resumed master");
    size_t count = 0;
    longest_probe_ms(STOPPED, &count);
    cr_expect_eq(count, 0, "the probe outlived the run on the resumed master");
    expect_no_long_lived_probe("after a run with a master stopped at its exit");
}

/* A lock taken while every master answered, released by another process
 * while one of them is stopped: that master holds the lock, so the
 * release must reach it, and still without waiting for it (written behind
 * its handshake, it runs when the master resumes). */
Test(cli_stopped, a_release_reaches_a_master_stopped_while_it_held_the_lock)
{
    const char *config = slow_connect_config();
    const cli_result *r = cli_run(CLI_ARGS("--config", config, "acquire", "job"), NULL, T);
    cli_expect_exit(r, 0);
    const char *value = cli_first_line(r->out);
    cr_assert(cli_is_value(value), "not a value: %s", r->out);
    cr_assert_eq(cli_masters_holding("job", value), CLI_MASTERS, "%s", cli_describe_key("job"));
    cr_assert_eq(fleet_pause(cli.fleet, STOPPED), 0);
    expect_quick(cli_run(CLI_ARGS("--config", config, "release", "job", value), NULL, T));
    cr_assert_eq(fleet_resume(cli.fleet, STOPPED), 0);
    cr_assert_eq(fleet_ping(cli.fleet, STOPPED, (int)fleet_scaled_ms(2000)), 0);
    tc_sleep_ms(100); /* what waited in its sockets has run */
    cli_expect_key_gone("job", "after the stopped master resumed");
}
