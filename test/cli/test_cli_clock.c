/* SPDX-License-Identifier: BSD-3-Clause */
/* Masters' clocks through the tool: five masters, two of them on wall
 * clocks running three times fast (fleet.h). A new process checks them
 * before it reports or counts them. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T CLI_RUN_TIMEOUT_MS
#define RUN(...) cli_run(CLI_ARGS("--config", cli.config, __VA_ARGS__), NULL, T)

static void two_of_five_fast(void)
{
    static const char *const clocks[] = {"+0", "+0", "+0", "+0 x3", "+0 x3"};
    fleet_options o = {.faketime = clocks};
    cli_setup(CLI_MASTERS, &o);
}

TestSuite(cli_clock, .init = two_of_five_fast, .fini = cli_teardown, .timeout = 120);

/* The line of out about master i. */
static const char *line_of(const char *out, size_t i, char *line, size_t size)
{
    char name[32];
    snprintf(name, sizeof(name), "127.0.0.1:%d  ", fleet_port(cli.fleet, i));
    const char *at = strstr(out, name);
    cr_assert_not_null(at, "no line for master %zu in:\n%s", i, out);
    size_t len = strcspn(at, "\n");
    cr_assert_lt(len, size);
    memcpy(line, at, len);
    line[len] = '\0';
    return line;
}

Test(cli_clock, status_shows_the_fast_masters_as_not_counted)
{
    const cli_result *r = RUN("status", "job");
    cli_expect_exit(r, 0);
    char line[256];
    for (size_t i = 0; i < CLI_MASTERS; i++) {
        line_of(r->out, i, line, sizeof(line));
        const char *fast = strstr(line, "clock fast (rate >= ");
        double rate = 0;
        if (i >= 3)
            cr_expect(fast != NULL && sscanf(fast, "clock fast (rate >= %lf", &rate) == 1 &&
                          rate > 1.0101 && strstr(line, "): not counted") != NULL,
                      "master %zu (x3): %s", i, line);
        else
            cr_expect_null(strstr(line, "clock"), "master %zu (honest): %s", i, line);
    }
}

Test(cli_clock, status_json_has_each_masters_clock)
{
    const cli_result *r = RUN("status", "--json", "job");
    cli_expect_exit(r, 0);
    json_error_t err;
    json_t *o = json_loads(r->out, 0, &err);
    cr_assert_not_null(o, "%s: %s", err.text, r->out);
    json_t *masters = json_object_get(o, "masters");
    cr_assert_eq(json_array_size(masters), CLI_MASTERS);
    for (size_t i = 0; i < CLI_MASTERS; i++) {
        json_t *clock = json_object_get(json_array_get(masters, i), "clock");
        const char *state = json_string_value(json_object_get(clock, "state"));
        cr_assert_not_null(state, "master %zu: no clock state in %s", i, r->out);
        char *shown = json_dumps(clock, JSON_COMPACT);
        cr_expect_str_eq(state, i >= 3 ? "fast" : "trusted", "master %zu: %s", i, shown);
        if (i >= 3)
            cr_expect_gt(json_real_value(json_object_get(clock, "rate_min")), 1.0101,
                          "master %zu: %s", i, shown);
        free(shown);
    }
    json_decref(o);
}

Test(cli_clock, run_takes_the_lock_on_the_three_honest_masters_alone)
{
    const cli_result *r = RUN("run", "job", "--", "true");
    cli_expect_exit(r, 0);
    /* With one honest master stopped, two honest and two fast would have
     * been a quorum: the lock is refused, for want of trusted clocks. */
    cr_assert_eq(fleet_pause(cli.fleet, 0), 0);
    r = RUN("run", "--wait", "0", "job", "--", "true");
    cr_assert_eq(fleet_resume(cli.fleet, 0), 0);
    cr_assert_neq(r->exit_code, 0, "run succeeded on two trusted masters:\n%s", r->err);
    cr_assert_not_null(strstr(r->err, redlock_strerror(REDLOCK_ECLOCK)), "stderr:\n%s", r->err);
    cli_expect_key_gone("job", "after the refused run");
}

static bool held_on_three(void)
{
    for (int i = 0; i < 200; i++) {
        if (cli_masters_with_key("job") >= 3)
            return true;
        tc_sleep_ms(10);
    }
    return false;
}

Test(cli_clock, run_stops_the_command_when_a_step_leaves_too_few_trusted_holders)
{
    /* Held on the three honest masters alone; master 0 then steps 5 s
     * forward: two trusted holders are fewer than a quorum. */
    cli_proc *p = cli_spawn(CLI_ARGS("--config", cli.config, "run", "--ttl", "3s", "job", "--",
                                     "sleep", "30"),
                            NULL);
    cr_assert(held_on_three(), "run never held the lock");
    tc_sleep_ms(100);
    cr_assert_eq(fleet_set_faketime(cli.fleet, 0, "+5"), 0);
    const cli_result *r = cli_wait(p, T);
    cli_expect_exit(r, 80);
    cr_assert_not_null(strstr(r->err, redlock_strerror(REDLOCK_ECLOCK)), "stderr:\n%s", r->err);
    cr_assert_lt(r->elapsed_ms, fleet_scaled_ms(10000), "the command ran on: %.0f ms",
                 r->elapsed_ms);
}
