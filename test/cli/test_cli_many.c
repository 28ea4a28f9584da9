/* SPDX-License-Identifier: BSD-3-Clause */
/* One lock on several resources through the tool (acquire, release,
 * extend, status and run with RESOURCE...), what it refuses (a resource
 * named twice, more than 64), and the reentrant form (--owner). */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T CLI_RUN_TIMEOUT_MS

TestSuite(cli_many, .init = cli_setup_five, .fini = cli_teardown, .timeout = 150);

/* `redlock --config cli.config ARGS...`. */
#define RUN(...) cli_run(CLI_ARGS("--config", cli.config, __VA_ARGS__), NULL, T)

/* The value acquire printed; fails the test unless it exited 0 with one. */
static const char *value_of(const cli_result *r)
{
    cli_expect_exit(r, 0);
    const char *value = cli_first_line(r->out);
    cr_assert(cli_is_value(value), "%s: line 1 is \"%s\", not a value", r->cmdline, value);
    return value;
}

typedef struct pair_on_masters {
    const char *a, *b, *value;
} pair_on_masters;

static bool both_on_every_master(void *arg)
{
    const pair_on_masters *p = arg;
    return cli_masters_holding(p->a, p->value) == CLI_MASTERS &&
           cli_masters_holding(p->b, p->value) == CLI_MASTERS;
}

static void expect_both_gone(const char *a, const char *b, const char *context)
{
    cli_expect_key_gone(a, context);
    cli_expect_key_gone(b, context);
}

static void expect_usage_error(const cli_result *r, const char *message)
{
    cli_expect_exit(r, 64);
    cr_assert_str_eq(r->err, message, "%s: stderr", r->cmdline);
    cr_assert_str_empty(r->out, "%s: stdout:\n%s", r->cmdline, r->out);
    cr_assert_eq(cli_keys_total(), 0, "%s: left keys on the masters", r->cmdline);
}

/* ---- acquire, release, extend ---------------------------------------------- */

Test(cli_many, acquire_prints_one_value_that_every_resource_holds)
{
    const cli_result *r = RUN("acquire", "a", "b");
    const char *value = value_of(r);
    cr_assert_str_empty(r->err, "%s: stderr:\n%s", r->cmdline, r->err);
    cr_assert_str_eq(r->out, cli_format("%s\n", value), "%s: more than the value", r->cmdline);
    /* A quorum decides; the other masters' answers come right after, but
     * for a master whose handshake a loaded machine timed out. */
    pair_on_masters p = {"a", "b", value};
    (void)cli_wait_until(both_on_every_master, &p, 5000);
    size_t a = cli_masters_holding("a", value);
    size_t b = cli_masters_holding("b", value);
    cr_assert(a > CLI_MASTERS / 2 && b > CLI_MASTERS / 2,
              "not both on a quorum: a: %s; b: %s", cli_describe_key("a"), cli_describe_key("b"));
    cr_assert_eq(cli_keys_total(), (long long)(a + b), "%s", cli_keys_listing());
}

Test(cli_many, release_of_every_resource_deletes_them_all)
{
    const char *value = value_of(RUN("acquire", "a", "b"));
    const cli_result *r = RUN("release", "a", "b", value);
    cli_expect_exit(r, 0);
    cr_assert_str_empty(r->err, "%s: stderr:\n%s", r->cmdline, r->err);
    expect_both_gone("a", "b", r->cmdline);
    r = RUN("release", "a", "b", value);
    cli_expect_exit(r, 1);
    cr_assert_str_eq(r->err, "redlock: release a, b: the lock's value is no longer held on a "
                             "quorum of masters\n");
}

Test(cli_many, the_order_of_the_resources_does_not_matter)
{
    const char *value = value_of(RUN("acquire", "--ttl", "2s", "b", "a"));
    const cli_result *r = RUN("extend", "--ttl", "30s", "a", "b", value);
    cli_expect_exit(r, 0);
    cr_assert_geq(cli_masters_with_pttl("a", value, 29000, 30000), 3, "%s", cli_describe_key("a"));
    cr_assert_geq(cli_masters_with_pttl("b", value, 29000, 30000), 3, "%s", cli_describe_key("b"));
    r = RUN("status", "a", "b");
    cli_expect_exit(r, 0);
    cr_assert_not_null(strstr(r->out, cli_format("  held  %s  pttl ", value)), "%s:\n%s",
                       r->cmdline, r->out);
    r = RUN("release", "a", "b", value);
    cli_expect_exit(r, 0);
    expect_both_gone("a", "b", r->cmdline);
    /* Taken as {a, b}, so {b, a} is taken too. */
    value = value_of(RUN("acquire", "a", "b"));
    r = RUN("acquire", "--wait", "0", "b", "a");
    cli_expect_exit(r, 75);
    cr_assert_str_eq(r->err, "redlock: could not acquire b, a: the resource is held by another "
                             "holder (0 of 5 masters said OK, 3 needed; 1 attempt)\n");
    cli_expect_exit(RUN("release", "b", "a", value), 0);
    expect_both_gone("a", "b", "release b a");
}

Test(cli_many, extend_resets_the_ttl_of_every_resource)
{
    const char *value = value_of(RUN("acquire", "--ttl", "2s", "a", "b"));
    const cli_result *r = RUN("extend", "--ttl", "30s", "a", "b", value);
    cli_expect_exit(r, 0);
    long long validity = atoll(r->out);
    cr_assert(validity > 20000 && validity <= 30000, "%s: printed %s", r->cmdline, r->out);
    cr_assert_geq(cli_masters_with_pttl("a", value, 29000, 30000), 3, "%s", cli_describe_key("a"));
    cr_assert_geq(cli_masters_with_pttl("b", value, 29000, 30000), 3, "%s", cli_describe_key("b"));
    /* A set the lock is not on is not ours: all of them or none. */
    r = RUN("extend", "--ttl", "60s", "a", "c", value);
    cli_expect_exit(r, 1);
    cr_assert_eq(cli_masters_with_pttl("a", value, 30000, 60000), 0, "%s", cli_describe_key("a"));
    cr_assert_eq(cli_masters_with_key("c"), 0);
    r = RUN("extend", "--json", "a", "b", value);
    cli_expect_exit(r, 0);
    cr_assert_not_null(strstr(r->out, "{\"resource\":\"a\",\"resources\":[\"a\",\"b\"],"),
                       "%s:\n%s", r->cmdline, r->out);
}

/* ---- status ------------------------------------------------------------------ */

/* Lines of text (one per master) containing needle. */
static size_t lines_with(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

Test(cli_many, status_shows_the_value_they_all_hold)
{
    const char *value = value_of(RUN("acquire", "--ttl", "30s", "a", "b"));
    const cli_result *r = RUN("status", "a", "b");
    cli_expect_exit(r, 0);
    cr_assert_geq(lines_with(r->out, cli_format("  held  %s  pttl ", value)), 3, "%s:\n%s",
                  r->cmdline, r->out);
    cr_assert_eq(lines_with(r->out, "mixed"), 0, "%s:\n%s", r->cmdline, r->out);
    r = RUN("status", "--json", "b", "a");
    cli_expect_exit(r, 0);
    cr_assert_not_null(strstr(r->out, "{\"resource\":\"b\",\"resources\":[\"b\",\"a\"],"),
                       "%s:\n%s", r->cmdline, r->out);
    cr_assert_geq(lines_with(r->out, cli_format("\"held\":true,\"mixed\":false,\"value\":\"%s\"",
                                                value)),
                  3, "%s:\n%s", r->cmdline, r->out);
}

Test(cli_many, status_shows_mixed_when_they_do_not_all_hold_one_value)
{
    const char *value = value_of(RUN("acquire", "--ttl", "30s", "a"));
    /* b free: held in part. */
    const cli_result *r = RUN("status", "a", "b");
    cli_expect_exit(r, 0);
    cr_assert_geq(lines_with(r->out, "  mixed  (not all held by one value)  server "), 3,
                  "%s:\n%s", r->cmdline, r->out);
    cr_assert_eq(lines_with(r->out, "  held  "), 0, "%s:\n%s", r->cmdline, r->out);
    /* b held by another value. */
    value_of(RUN("acquire", "--ttl", "30s", "b"));
    r = RUN("status", "--json", "a", "b");
    cli_expect_exit(r, 0);
    cr_assert_geq(lines_with(r->out, "\"held\":false,\"mixed\":true,\"value\":null,"
                                     "\"pttl_ms\":null"),
                  3, "%s:\n%s", r->cmdline, r->out);
    /* Each alone is held. */
    r = RUN("status", "a");
    cli_expect_exit(r, 0);
    cr_assert_geq(lines_with(r->out, cli_format("  held  %s  pttl ", value)), 3, "%s:\n%s",
                  r->cmdline, r->out);
}

/* ---- run ----------------------------------------------------------------------- */

/* CMD writes its REDLOCK_* variables, then waits for the test to look at
 * the masters and create the "go" file. */
Test(cli_many, run_holds_every_resource_while_cmd_runs)
{
    const char *env_file = cli_path("env");
    const char *go = cli_path("go");
    const char *script = "printf '%s\\n%s\\n' \"$REDLOCK_RESOURCE\" \"$REDLOCK_VALUE\" > "
                         "\"$1.tmp\" && mv \"$1.tmp\" \"$1\"; i=0; "
                         "while [ ! -e \"$2\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); "
                         "done";
    cli_proc *p = cli_spawn(CLI_ARGS("--config", cli.config, "run", "--ttl", "10s", "b", "a",
                                     "--", "sh", "-c", script, "sh", env_file, go),
                            NULL);
    cr_assert(cli_wait_until(cli_file_exists, (void *)env_file, 10000), "CMD did not start in 10 s");
    char resource[64] = "";
    char value[REDLOCK_MAX_VALUE_LEN + 1] = "";
    FILE *f = fopen(env_file, "re");
    cr_assert_not_null(f);
    int fields = fscanf(f, "%63s %1024s", resource, value);
    fclose(f);
    cr_assert_eq(fields, 2, "REDLOCK_* variables missing: %s", cli_read_file(env_file));
    cr_assert_str_eq(resource, "b", "REDLOCK_RESOURCE is not the first resource given");
    cr_assert(cli_is_run_value(value), "REDLOCK_VALUE \"%s\"", value);
    cr_assert_geq(cli_masters_holding("a", value), 3, "%s", cli_describe_key("a"));
    cr_assert_geq(cli_masters_holding("b", value), 3, "%s", cli_describe_key("b"));

    cli_write_file("go", "", 0600);
    const cli_result *r = cli_wait(p, T);
    cli_expect_exit(r, 0);
    expect_both_gone("a", "b", r->cmdline);
}

/* Without "--", the first operand is the only resource, as with one; with
 * it, the operands before the first "--", and CMD gets any later one. */
Test(cli_many, run_takes_the_resources_before_the_first_separator)
{
    const cli_result *r = RUN("run", "job", "printf", "%s|", "b");
    cli_expect_exit(r, 0);
    cr_assert_str_eq(r->out, "b|", "%s: stdout", r->cmdline);
    r = RUN("run", "job", "--", "printf", "%s|", "--", "x");
    cli_expect_exit(r, 0);
    cr_assert_str_eq(r->out, "--|x|", "%s: stdout", r->cmdline);
    r = RUN("run", "a", "b", "--", "sh", "-c", "printf %s \"$REDLOCK_RESOURCE\"", "--", "x");
    cli_expect_exit(r, 0);
    cr_assert_str_eq(r->out, "a", "%s: stdout", r->cmdline);
    cr_assert_eq(cli_keys_total(), 0);
}

/* ---- Sets refused ----------------------------------------------------------------- */

#define V32 "0123456789abcdef0123456789abcdef"

Test(cli_many, a_resource_named_twice_is_a_usage_error_and_nothing_is_acquired)
{
    const char *marker = cli_path("ran");
    expect_usage_error(RUN("acquire", "a", "b", "a"),
                       "redlock: acquire: resource a named twice\n");
    expect_usage_error(RUN("run", "a", "a", "--", "touch", marker),
                       "redlock: run: resource a named twice\n");
    cr_assert_neq(access(marker, F_OK), 0, "CMD ran");
    expect_usage_error(RUN("release", "a", "a", V32), "redlock: release: resource a named twice\n");
    expect_usage_error(RUN("extend", "b", "b", V32), "redlock: extend: resource b named twice\n");
    expect_usage_error(RUN("status", "a", "a"), "redlock: status: resource a named twice\n");
    /* An empty one among others, as alone. */
    expect_usage_error(RUN("acquire", "a", ""),
                       "redlock: acquire: RESOURCE must be 1 to 1048576 bytes\n");
    expect_usage_error(RUN("run", "a", "", "--", "touch", marker),
                       "redlock: run: RESOURCE must be 1 to 1048576 bytes\n");
    /* Resources without CMD, or without any. */
    expect_usage_error(RUN("run", "a", "b", "--"),
                       "redlock: run: expected CMD after RESOURCE (see redlock run --help)\n");
    expect_usage_error(RUN("run", "--", "--", "true"),
                       "redlock: run: expected RESOURCE... [--] CMD [ARG...] (see redlock run "
                       "--help)\n");
}

/* argv for `redlock --config cli.config COMMAND r0 ... r(n-1) [tail...]`. */
static const char *const *many_args_with(const char *config, const char *command, size_t n,
                                        const char *const *tail)
{
    static const char *args[128];
    size_t k = 0;
    args[k++] = "--config";
    args[k++] = config;
    args[k++] = command;
    for (size_t i = 0; i < n; i++)
        args[k++] = cli_format("r%zu", i);
    for (; tail != NULL && *tail != NULL; tail++)
        args[k++] = *tail;
    args[k] = NULL;
    return args;
}

static const char *const *many_args(const char *command, size_t n, const char *const *tail)
{
    return many_args_with(cli.config, command, n, tail);
}

Test(cli_many, sixty_four_resources_at_most)
{
    const char *marker = cli_path("ran");
    expect_usage_error(cli_run(many_args("acquire", 65, NULL), NULL, T),
                       "redlock: acquire: at most 64 resources in one lock (65 given)\n");
    expect_usage_error(cli_run(many_args("run", 65, CLI_ARGS("--", "touch", marker)), NULL, T),
                       "redlock: run: at most 64 resources in one lock (65 given)\n");
    cr_assert_neq(access(marker, F_OK), 0, "CMD ran");
    expect_usage_error(cli_run(many_args("status", 65, NULL), NULL, T),
                       "redlock: status: at most 64 resources in one lock (65 given)\n");

    /* Every key must go: the release has to reach all five masters, so it
     * may not give up on a handshake that a loaded machine (a sanitizer
     * beside other work) made slower than the usual 500 ms. */
    const cli_config_options patient = {.connect_timeout_ms = fleet_scaled_ms(5000),
                                        .command_timeout_ms = fleet_scaled_ms(5000)};
    const char *config = cli_write_config("patient.yaml", &patient);
    const char *value = value_of(cli_run(many_args_with(config, "acquire", 64, NULL), NULL, T));
    cr_assert_geq(cli_masters_holding("r63", value), 3, "%s", cli_describe_key("r63"));
    const cli_result *r = cli_run(many_args_with(config, "release", 64, CLI_ARGS(value)), NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_eq(cli_keys_total(), 0, "%s: left keys: %s", r->cmdline, cli_keys_listing());
}

/* Each argument is at most 32 pages (with its NUL), but nine of them pass
 * the library's 1 MiB for a lock's names together. */
Test(cli_many, more_than_1_mib_of_names_in_all_is_refused)
{
    size_t len = (size_t)sysconf(_SC_PAGESIZE) * 32 - 1;
    enum { COUNT = 9 };
    if ((size_t)sysconf(_SC_ARG_MAX) < (COUNT + 1) * (len + 1))
        cr_skip_test("the system takes too few bytes of arguments");
    const char *args[COUNT + 4] = {"--config", cli.config, "acquire"};
    for (size_t i = 0; i < COUNT; i++) {
        char *name = cli_own(malloc(len + 1));
        memset(name, 'a' + (int)i, len);
        name[len] = '\0';
        args[3 + i] = name;
    }
    /* Not expect_usage_error(): its messages quote the command line, more
     * than an assertion's report carries. */
    const cli_result *r = cli_run(args, NULL, T);
    cr_assert_eq(r->exit_code, 64, "exit status %d, stderr: %s", r->exit_code, r->err);
    cr_assert_str_eq(r->err, cli_format("redlock: acquire: the resources must be at most "
                                        "1048576 bytes in all (%zu given)\n",
                                        COUNT * len));
    cr_assert_str_empty(r->out);
    cr_assert_eq(cli_keys_total(), 0);
}

/* ---- --owner ------------------------------------------------------------------------ */

/* The nested run gets the lock at once; another owner, and a plain
 * acquire, find it held, also once the nested run has let go of its hold. */
Test(cli_many, a_nested_run_with_the_same_owner_enters_while_another_owner_is_refused)
{
    const char *script =
        "\"$1\" --config \"$2\" run --owner T --wait 0 job -- true; echo \"same=$?\"; "
        "\"$1\" --config \"$2\" run --owner U --wait 0 job -- true; echo \"other=$?\"; "
        "\"$1\" --config \"$2\" acquire --wait 0 job; echo \"plain=$?\"";
    const cli_result *r = RUN("run", "--owner", "T", "--wait", "0", "job", "--", "sh", "-c",
                              script, "sh", REDLOCK_TOOL, cli.config);
    cli_expect_exit(r, 0);
    cr_assert_str_eq(r->out, "same=0\nother=75\nplain=75\n", "%s: stdout (stderr:\n%s)",
                     r->cmdline, r->err);
    cli_expect_key_gone("job", r->cmdline);

    /* The form itself: redlock run --owner T job -- redlock run --owner T job -- true. */
    r = RUN("run", "--owner", "T", "--wait", "0", "job", "--", REDLOCK_TOOL, "--config",
            cli.config, "run", "--owner", "T", "--wait", "0", "job", "--", "true");
    cli_expect_exit(r, 0);
    cli_expect_key_gone("job", r->cmdline);
}

Test(cli_many, each_hold_of_an_owner_is_released_on_its_own)
{
    const char *first = value_of(RUN("acquire", "--owner", "T", "--ttl", "30s", "job"));
    const char *second = value_of(RUN("acquire", "--owner", "T", "--wait", "0", "job"));
    cr_assert_str_neq(first, second, "two holds, one value");
    cli_expect_exit(RUN("acquire", "--owner", "U", "--wait", "0", "job"), 75);
    cli_expect_exit(RUN("acquire", "--wait", "0", "job"), 75);
    /* status shows the owner's token as the value. */
    const cli_result *r = RUN("status", "job");
    cli_expect_exit(r, 0);
    cr_assert_geq(lines_with(r->out, "  held  T  pttl "), 3, "%s:\n%s", r->cmdline, r->out);

    cli_expect_exit(RUN("release", "job", first), 0);
    cr_assert_geq(cli_masters_with_key("job"), 3, "the first release freed the lock: %s",
                  cli_describe_key("job"));
    cli_expect_exit(RUN("acquire", "--owner", "U", "--wait", "0", "job"), 75);
    cli_expect_exit(RUN("extend", "--ttl", "20s", "job", second), 0);
    cli_expect_exit(RUN("release", "job", second), 0);
    cli_expect_key_gone("job", "after the last hold's release");

    /* On several resources too. */
    const char *held = value_of(RUN("acquire", "--owner", "T", "a", "b"));
    const char *again = value_of(RUN("acquire", "--owner", "T", "--wait", "0", "b", "a"));
    cli_expect_exit(RUN("acquire", "--owner", "U", "--wait", "0", "a"), 75);
    cli_expect_exit(RUN("release", "a", "b", held), 0);
    cli_expect_exit(RUN("release", "b", "a", again), 0);
    expect_both_gone("a", "b", "after the last hold's release");
}

Test(cli_many, an_owner_token_is_1_to_1024_bytes)
{
    char token[1026];
    memset(token, 't', sizeof(token) - 1);
    token[sizeof(token) - 1] = '\0';
    expect_usage_error(RUN("acquire", "--owner", token, "job"),
                       "redlock: --owner: TOKEN must be 1 to 1024 bytes\n");
    expect_usage_error(RUN("run", "--owner", "", "job", "true"),
                       "redlock: --owner: TOKEN must be 1 to 1024 bytes\n");
    token[1024] = '\0';
    const char *value = value_of(RUN("acquire", "--owner", token, "job"));
    cli_expect_exit(RUN("release", "job", value), 0);
    /* release and extend take the hold's value, not an owner. */
    cli_expect_exit(RUN("release", "--owner", "T", "job", value), 64);
}
