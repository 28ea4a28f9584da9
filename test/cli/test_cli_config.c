/* SPDX-License-Identifier: BSD-3-Clause */
/* Where the tool finds its config (--config, $REDLOCK_CONFIG, the XDG and
 * home files, --node) and how it reports bad ones (78, FILE:LINE:COLUMN). */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define T CLI_RUN_TIMEOUT_MS
#define SYSTEM_CONFIG "/etc/redlock/redlock.yaml"

TestSuite(cli_config, .init = cli_setup_five, .fini = cli_teardown, .timeout = 120);

/* A config the tool must refuse if it reads it. */
static const char *bad_config(const char *name)
{
    return cli_write_file(name, "bogus_key: 1\nnodes:\n  - host: 127.0.0.1\n", 0600);
}

static void expect_config_error(const cli_result *r)
{
    cli_expect_exit(r, 78);
    cli_expect_one_error_line(r);
    cr_assert_str_empty(r->out, "%s: stdout:\n%s", r->cmdline, r->out);
    cr_assert_eq(cli_keys_total(), 0, "%s: left keys on the masters", r->cmdline);
}

static void expect_every_node_listed(const cli_result *r)
{
    for (size_t i = 0; i < CLI_MASTERS; i++)
        cr_assert_not_null(cli_line_about(r->out, cli_node(i)), "%s: no line for %s in:\n%s",
                           r->cmdline, cli_node(i), r->out);
}

/* The fallback to /etc must not be what a test sees. */
static void require_no_system_config(void)
{
    cr_assert(access(SYSTEM_CONFIG, F_OK) != 0 && errno == ENOENT,
              "%s exists on this machine: the config-resolution tests need it absent "
              "(remove it, or run them elsewhere)",
              SYSTEM_CONFIG);
}

/* ---- Where the config comes from ---------------------------------------------- */

Test(cli_config, config_option_long_and_short)
{
    const cli_result *r = cli_run(CLI_ARGS("--config", cli.config, "ping"), NULL, T);
    cli_expect_exit(r, 0);
    expect_every_node_listed(r);
    cli_expect_exit(cli_run(CLI_ARGS("-c", cli.config, "ping"), NULL, T), 0);
}

Test(cli_config, redlock_config_variable)
{
    const char *var = cli_format("REDLOCK_CONFIG=%s", cli.config);
    const cli_result *r = cli_run(CLI_ARGS("ping"), CLI_ENV(var), T);
    cli_expect_exit(r, 0);
    expect_every_node_listed(r);
}

Test(cli_config, xdg_config_home_file)
{
    cli_write_config("xdg/redlock/redlock.yaml", NULL); /* cli.xdg is DIR/xdg */
    const cli_result *r = cli_run(CLI_ARGS("ping"), NULL, T);
    cli_expect_exit(r, 0);
    expect_every_node_listed(r);
}

Test(cli_config, home_config_file_when_xdg_config_home_is_unset)
{
    cli_write_config("home/.config/redlock/redlock.yaml", NULL); /* cli.home is DIR/home */
    const cli_result *r = cli_run(CLI_ARGS("ping"), CLI_ENV("XDG_CONFIG_HOME"), T);
    cli_expect_exit(r, 0);
    expect_every_node_listed(r);
}

/* Each source hides the next: a bad config behind a good one is never read. */
Test(cli_config, option_then_variable_then_files)
{
    const char *bad = bad_config("bad.yaml");
    const char *bad_var = cli_format("REDLOCK_CONFIG=%s", bad);
    const char *good_var = cli_format("REDLOCK_CONFIG=%s", cli.config);

    cli_expect_exit(cli_run(CLI_ARGS("--config", cli.config, "ping"), CLI_ENV(bad_var), T), 0);
    expect_config_error(cli_run(CLI_ARGS("--config", bad, "ping"), CLI_ENV(good_var), T));

    bad_config("xdg/redlock/redlock.yaml");
    cli_expect_exit(cli_run(CLI_ARGS("ping"), CLI_ENV(good_var), T), 0);
    expect_config_error(cli_run(CLI_ARGS("ping"), NULL, T)); /* the XDG file is read */

    cli_write_config("home/.config/redlock/redlock.yaml", NULL);
    expect_config_error(cli_run(CLI_ARGS("ping"), NULL, T)); /* XDG before ~/.config */
}

Test(cli_config, nodes_on_the_command_line_need_no_config)
{
    require_no_system_config();
    const char *n[CLI_MASTERS];
    for (size_t i = 0; i < CLI_MASTERS; i++)
        n[i] = cli_node(i);
    const cli_result *r = cli_run(CLI_ARGS("--node", n[0], "--node", n[1], "-n", n[2], "-n",
                                           n[3], "--node", n[4], "ping"),
                                  cli_env_durable(NULL), T);
    cli_expect_exit(r, 0);
    expect_every_node_listed(r);

    /* Masters started moments ago, not declared durable (the defaults):
     * not counted for max_ttl_ms; ping and the acquire say so. */
    r = cli_run(CLI_ARGS("--node", n[0], "--node", n[1], "-n", n[2], "-n", n[3], "--node", n[4],
                         "ping"),
                NULL, T);
    cli_expect_exit(r, 69);
    expect_every_node_listed(r);
    cr_assert_not_null(strstr(r->out, "not counted for"), "stdout:\n%s", r->out);
    r = cli_run(CLI_ARGS("--node", n[0], "--node", n[1], "-n", n[2], "-n", n[3], "--node", n[4],
                         "acquire", "--wait", "0", "job"),
                NULL, T);
    cli_expect_exit(r, 69);
    cr_assert_not_null(strstr(r->err, "not counted for"), "stderr:\n%s", r->err);

    r = cli_run(CLI_ARGS("--node", n[0], "--node", n[1], "-n", n[2], "-n", n[3], "--node", n[4],
                         "acquire", "job"),
                cli_env_durable(NULL), T);
    cli_expect_exit(r, 0);
    const char *value = cli_first_line(r->out);
    cr_assert(cli_is_value(value), "%s: line 1 \"%s\"", r->cmdline, value);
    cr_assert_geq(cli_masters_holding("job", value), 3);
}

Test(cli_config, node_replaces_the_configs_masters_and_keeps_its_settings)
{
    int dead = cli_dead_port();
    cli_config_options o = {.ttl_ms = 20000, .ports = &dead, .port_count = 1};
    const char *config = cli_write_config("dead.yaml", &o);
    cli_expect_exit(cli_run(CLI_ARGS("--config", config, "ping"), NULL, T), 69);

    const char *n[CLI_MASTERS];
    for (size_t i = 0; i < CLI_MASTERS; i++)
        n[i] = cli_node(i);
    const cli_result *r = cli_run(CLI_ARGS("--config", config, "-n", n[0], "-n", n[1], "-n", n[2],
                                           "-n", n[3], "-n", n[4], "ping"),
                                  NULL, T);
    cli_expect_exit(r, 0);
    expect_every_node_listed(r);
    cr_assert_null(strstr(r->out, cli_format("127.0.0.1:%d", dead)),
                   "%s: the config's node is still used:\n%s", r->cmdline, r->out);

    /* The config's ttl_ms still applies. */
    r = cli_run(CLI_ARGS("--config", config, "-n", n[0], "-n", n[1], "-n", n[2], "-n", n[3], "-n",
                         n[4], "acquire", "job"),
                NULL, T);
    cli_expect_exit(r, 0);
    const char *value = cli_first_line(r->out);
    cr_assert_geq(cli_masters_with_pttl("job", value, 15000, 20000), 3,
                  "PTTL is not the config's ttl_ms (20000) on a majority");
}

Test(cli_config, no_config_at_all_exits_78)
{
    require_no_system_config();
    const char *const *cases[] = {CLI_ARGS("ping"), CLI_ARGS("acquire", "job"),
                                  CLI_ARGS("run", "job", "--", "true")};
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        const cli_result *r = cli_run(cases[k], NULL, T);
        expect_config_error(r);
        cr_assert_not_null(strstr(r->err, "config"), "%s: the message does not say why: %s",
                           r->cmdline, r->err);
    }
    /* Without XDG_CONFIG_HOME, ~/.config is looked at: empty too. */
    expect_config_error(cli_run(CLI_ARGS("ping"), CLI_ENV("XDG_CONFIG_HOME"), T));
}

/* ---- Bad configs ------------------------------------------------------------------ */

Test(cli_config, missing_config_file_exits_78_naming_it)
{
    const char *missing = cli_path("missing.yaml");
    const cli_result *r = cli_run(CLI_ARGS("--config", missing, "acquire", "job"), NULL, T);
    expect_config_error(r);
    cr_assert_not_null(strstr(r->err, missing), "%s: the message does not name the file: %s",
                       r->cmdline, r->err);
    r = cli_run(CLI_ARGS("ping"), CLI_ENV(cli_format("REDLOCK_CONFIG=%s", missing)), T);
    expect_config_error(r);
    cr_assert_not_null(strstr(r->err, missing), "%s: the message does not name the file: %s",
                       r->cmdline, r->err);
}

Test(cli_config, bad_configs_exit_78_naming_file_line_and_column)
{
    int port = fleet_port(cli.fleet, 0);
    static const struct {
        const char *name;
        const char *text; /* %d: a master's port */
        int line, column; /* 0: any position */
    } cases[] = {
        {"unknown-key.yaml",
         "ttl_ms: 1000\nbogus_key: 1\nnodes:\n  - host: 127.0.0.1\n    port: %d\n", 2, 1},
        {"unknown-node-key.yaml", "nodes:\n  - host: 127.0.0.1\n    prot: %d\n", 3, 5},
        {"port-range.yaml", "nodes:\n  - host: 127.0.0.1\n    port: 70000\n", 3, 11},
        {"bad-value.yaml", "ttl_ms: abc\nnodes:\n  - host: 127.0.0.1\n    port: %d\n", 1, 9},
        {"empty.yaml", "", 1, 1},
        {"invalid.yaml", "nodes: [\n  - host: 127.0.0.1\n", 0, 0},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        const char *path = cli_write_file(cases[k].name, cli_format(cases[k].text, port), 0600);
#pragma GCC diagnostic pop
        const cli_result *r = cli_run(CLI_ARGS("--config", path, "acquire", "job"), NULL, T);
        expect_config_error(r);
        const char *at = strstr(r->err, path);
        int line = 0;
        int column = 0;
        cr_assert(at != NULL && sscanf(at + strlen(path), ":%d:%d: ", &line, &column) == 2,
                  "%s: no \"%s:LINE:COLUMN:\" in: %s", r->cmdline, path, r->err);
        if (cases[k].line != 0)
            cr_assert(line == cases[k].line && column == cases[k].column,
                      "%s: expected %s:%d:%d, got: %s", r->cmdline, path, cases[k].line,
                      cases[k].column, r->err);
        else
            cr_assert(line >= 1 && column >= 1, "%s: position in: %s", r->cmdline, r->err);
    }
}
