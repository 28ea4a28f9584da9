/* SPDX-License-Identifier: BSD-3-Clause */
/* Passwords: masters started with requirepass; the right password works,
 * a wrong one fails, and no output ever shows either, at any verbosity. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#define T CLI_RUN_TIMEOUT_MS
#define PASSWORD "cliSecret-7f3a91"
#define WRONG_PASSWORD "cliWrong-9b2c44"

static void five_masters_with_password(void)
{
    fleet_options o = {.requirepass = PASSWORD};
    cli_setup(CLI_MASTERS, &o);
}

TestSuite(cli_secrets, .init = five_masters_with_password, .fini = cli_teardown, .timeout = 120);

/* NULL: the default verbosity. */
static const char *const verbosities[] = {NULL, "-v", "-vv", "-vvv"};
#define VERBOSITIES (sizeof(verbosities) / sizeof(verbosities[0]))

static void expect_no_password(const cli_result *r)
{
    const char *secrets[] = {PASSWORD, WRONG_PASSWORD};
    for (size_t k = 0; k < 2; k++) {
        cr_assert_null(strstr(r->out, secrets[k]), "%s: stdout shows a password:\n%s",
                       r->cmdline, r->out);
        cr_assert_null(strstr(r->err, secrets[k]), "%s: stderr shows a password:\n%s",
                       r->cmdline, r->err);
    }
}

static const cli_result *run_checked(const char *const args[], const char *const env[], int code)
{
    const cli_result *r = cli_run(args, env, T);
    expect_no_password(r);
    cli_expect_exit(r, code);
    return r;
}

/* `redlock [VERBOSITY] ARGS...`, checked. */
static const cli_result *run_verbose(const char *verbosity, const char *const args[], int code)
{
    const char *all[32];
    size_t n = 0;
    if (verbosity != NULL)
        all[n++] = verbosity;
    for (size_t i = 0; args[i] != NULL && n < 31; i++)
        all[n++] = args[i];
    all[n] = NULL;
    return run_checked(all, NULL, code);
}

Test(cli_secrets, the_right_password_works)
{
    const cli_result *r = run_checked(CLI_ARGS("--config", cli.config, "acquire", "job"), NULL, 0);
    const char *value = cli_first_line(r->out);
    cr_assert_geq(cli_masters_holding("job", value), 3);
    run_checked(CLI_ARGS("-vvv", "--config", cli.config, "status", "job"), NULL, 0);
    run_checked(CLI_ARGS("-vvv", "--config", cli.config, "release", "job", value), NULL, 0);
    run_checked(CLI_ARGS("-vvv", "--config", cli.config, "ping"), NULL, 0);
    run_checked(CLI_ARGS("-vvv", "--config", cli.config, "run", "job", "--", "true"), NULL, 0);
    cli_expect_key_gone("job", "after run");
}

Test(cli_secrets, password_env_names_the_variable_holding_it)
{
    cli_config_options o = {.password_env = "CLI_TEST_REDIS_PASSWORD"};
    const char *config = cli_write_config("env.yaml", &o);
    const char *env[] = {"CLI_TEST_REDIS_PASSWORD=" PASSWORD, NULL};
    run_checked(CLI_ARGS("-vvv", "--config", config, "ping"), env, 0);
    run_checked(CLI_ARGS("-vvv", "--config", config, "acquire", "job"), env, 0);

    /* Unset: a config error naming the variable. */
    const cli_result *r = run_checked(CLI_ARGS("-vvv", "--config", config, "ping"),
                                      CLI_ENV("CLI_TEST_REDIS_PASSWORD"), 78);
    cr_assert_not_null(strstr(r->err, "CLI_TEST_REDIS_PASSWORD"), "%s: %s", r->cmdline, r->err);
}

Test(cli_secrets, a_wrong_password_fails_and_is_never_shown)
{
    cli_config_options o = {.password = WRONG_PASSWORD};
    const char *config = cli_write_config("wrong.yaml", &o);
    const char *marker = cli_path("ran");
    for (size_t v = 0; v < VERBOSITIES; v++) {
        const char *w = verbosities[v];
        run_verbose(w, CLI_ARGS("-c", config, "acquire", "--wait", "0", "job"), 77);
        run_verbose(w, CLI_ARGS("-c", config, "ping"), 77);
        run_verbose(w, CLI_ARGS("-c", config, "status", "job"), 77);
        run_verbose(w, CLI_ARGS("-c", config, "run", "--wait", "0", "job", "--", "touch", marker),
                    77);
    }
    cr_assert_neq(access(marker, F_OK), 0, "CMD ran without the lock");
    cr_assert_eq(cli_keys_total(), 0);
}

/* Some masters refuse the password, the others are down: the library says
 * "no quorum" (fewer refusals than masters out of reach), yet what needs
 * fixing is the credentials, and that is what the exit status says. */
Test(cli_secrets, refused_credentials_win_over_masters_down)
{
    const char *nodes = "";
    for (size_t i = 0; i < CLI_MASTERS; i++)
        nodes = cli_format("%s  - host: 127.0.0.1\n    port: %d\n    password: %s\n", nodes,
                           fleet_port(cli.fleet, i), i < 2 ? WRONG_PASSWORD : PASSWORD);
    const char *config = cli_write_file(
        "mixed.yaml", cli_format("retry_count: 1\nretry_delay_ms: 10\nnodes:\n%s", nodes), 0600);
    for (size_t i = 2; i < CLI_MASTERS; i++)
        cr_assert_eq(fleet_kill(cli.fleet, i), 0);
    const char *marker = cli_path("ran");
    run_checked(CLI_ARGS("-c", config, "acquire", "job"), NULL, 77);
    run_checked(CLI_ARGS("-c", config, "run", "job", "--", "touch", marker), NULL, 77);
    run_checked(CLI_ARGS("-c", config, "ping"), NULL, 77);
    run_checked(CLI_ARGS("-c", config, "status", "job"), NULL, 77);
    cr_assert_neq(access(marker, F_OK), 0, "CMD ran without the lock");
}

Test(cli_secrets, config_errors_never_show_the_password)
{
    int port = fleet_port(cli.fleet, 0);
    const char *texts[] = {
        "nodes:\n  - host: 127.0.0.1\n    port: %d\n    password: " WRONG_PASSWORD
        "\n    bogus_key: 1\n",
        "nodes:\n  - host: 127.0.0.1\n    port: 99999\n    password: " WRONG_PASSWORD "\n",
        "nodes:\n  - host: 127.0.0.1\n    port: %d\n    password: " WRONG_PASSWORD
        "\n    password_env: X\n",
        "nodes:\n  - host: 127.0.0.1\n    port: %d\n    password: [" WRONG_PASSWORD "]\n",
    };
    for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        const char *path = cli_write_file(cli_format("bad%zu.yaml", k), cli_format(texts[k], port),
                                          0600);
#pragma GCC diagnostic pop
        for (size_t v = 0; v < VERBOSITIES; v++)
            run_verbose(verbosities[v], CLI_ARGS("--config", path, "acquire", "job"), 78);
    }
}
