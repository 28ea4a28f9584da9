/* SPDX-License-Identifier: BSD-3-Clause */
/* Passwords: masters started with requirepass; the right password works,
 * a wrong one fails, and no output ever shows either, at any verbosity. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
    /* The tails catch the passwords written %-escaped too. */
    const char *secrets[] = {PASSWORD, WRONG_PASSWORD, "7f3a91", "9b2c44"};
    for (size_t k = 0; k < sizeof(secrets) / sizeof(secrets[0]); k++) {
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

/* password_file: the file holds the password (a trailing newline is not
 * part of it); a relative path is in $CREDENTIALS_DIRECTORY, as systemd's
 * LoadCredential= gives it. A file that cannot be read is a config error
 * naming it, and what it holds is never shown. */
Test(cli_secrets, password_file_names_the_file_holding_it)
{
    const char *file = cli_write_file("redis-pass", PASSWORD "\n", 0600);
    cli_config_options o = {.password_file = file};
    const char *config = cli_write_config("file.yaml", &o);
    run_checked(CLI_ARGS("-vvv", "--config", config, "ping"), NULL, 0);
    const cli_result *r =
        run_checked(CLI_ARGS("-vvv", "--config", config, "acquire", "job"), NULL, 0);
    run_checked(CLI_ARGS("-vvv", "--config", config, "status", "job"), NULL, 0);
    run_checked(CLI_ARGS("-vvv", "--config", config, "release", "job", cli_first_line(r->out)),
                NULL, 0);

    o.password_file = "redis-pass";
    config = cli_write_config("credential.yaml", &o);
    const char *dir = cli_format("CREDENTIALS_DIRECTORY=%s", cli_path(""));
    const char *env[] = {dir, NULL};
    run_checked(CLI_ARGS("-vvv", "--config", config, "run", "job", "--", "true"), env, 0);

    /* Not there (no $CREDENTIALS_DIRECTORY: relative to the working
     * directory), and a file of the wrong password. */
    r = run_checked(CLI_ARGS("-vvv", "--config", config, "ping"), CLI_ENV("CREDENTIALS_DIRECTORY"),
                    78);
    cr_assert_not_null(strstr(r->err, "password_file: redis-pass: cannot open: No such file"),
                       "%s: %s", r->cmdline, r->err);
    /* At the top level: every master's. */
    cli_config_options top = {.extra = "password_file: redis-pass"};
    const char *shared = cli_write_config("shared.yaml", &top);
    run_checked(CLI_ARGS("-vvv", "--config", shared, "ping"), env, 0);

    cli_write_file("redis-pass", WRONG_PASSWORD, 0600);
    run_checked(CLI_ARGS("-c", config, "ping"), env, 77);
}

/* A config holding a password that others may read: one warning line
 * naming it and how to fix it, left out with -q; none once fixed. */
Test(cli_secrets, a_config_others_may_read_with_a_password_is_warned_about)
{
    cli_config_options o = {.password = PASSWORD};
    const char *config = cli_write_config("open.yaml", &o);
    cr_assert_eq(chmod(config, 0644), 0);
    const char *line = cli_format("redlock: warning: %s holds a password and is readable by "
                                  "others (chmod o-r %s)\n",
                                  config, config);
    const cli_result *r = run_checked(CLI_ARGS("--config", config, "ping"), NULL, 0);
    cr_assert_str_eq(r->err, line, "%s", r->cmdline);
    r = run_checked(CLI_ARGS("--config", config, "acquire", "-q", "job"), NULL, 0);
    cr_assert_str_eq(r->err, "", "%s", r->cmdline);
    r = run_checked(CLI_ARGS("-q", "--config", config, "status", "job"), NULL, 0);
    cr_assert_str_eq(r->err, "", "%s", r->cmdline);
    cr_assert_eq(chmod(config, 0640), 0);
    r = run_checked(CLI_ARGS("--config", config, "ping"), NULL, 0);
    cr_assert_str_eq(r->err, "", "%s", r->cmdline);
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

/* ---- Masters given as URLs -------------------------------------------------- */

/* The passwords in a URL, '-' written %-escaped: for formats, so "%%". */
#define PASSWORD_IN_URL "cliSecret%%2D7f3a91"
#define WRONG_IN_URL "cliWrong%%2d9b2c44"

/* `redlock [VERBOSITY] -n NODE... ARGS...`: a --node for every master,
 * written as fmt with the master's port; checked. */
static const cli_result *run_nodes(const char *verbosity, const char *fmt, const char *const args[],
                                   const char *const env[], int code)
{
    const char *all[48];
    size_t n = 0;
    if (verbosity != NULL)
        all[n++] = verbosity;
    for (size_t i = 0; i < CLI_MASTERS; i++) {
        all[n++] = "-n";
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        all[n++] = cli_format(fmt, fleet_port(cli.fleet, i));
#pragma GCC diagnostic pop
    }
    for (size_t i = 0; args[i] != NULL && n < 47; i++)
        all[n++] = args[i];
    all[n] = NULL;
    return run_checked(all, cli_env_durable(env), code);
}

/* The lock's value in acquire --json's object. */
static const char *json_value(const cli_result *r)
{
    const char *at = strstr(r->out, "\"value\":\"");
    cr_assert_not_null(at, "%s: %s", r->cmdline, r->out);
    return cli_format("%.32s", at + strlen("\"value\":\""));
}

/* Every command, as text and as JSON, through --node fmt; at -vvv, which
 * shows the most. */
static void every_command_works(const char *fmt, const char *const env[])
{
    const char *w = "-vvv";
    const cli_result *r = run_nodes(w, fmt, CLI_ARGS("acquire", "job"), env, 0);
    const char *value = cli_format("%s", cli_first_line(r->out));
    cr_assert_geq(cli_masters_holding("job", value), 3);
    run_nodes(w, fmt, CLI_ARGS("status", "job"), env, 0);
    run_nodes(w, fmt, CLI_ARGS("status", "--json", "job"), env, 0);
    run_nodes(w, fmt, CLI_ARGS("release", "job", value), env, 0);
    run_nodes(w, fmt, CLI_ARGS("ping", "--json"), env, 0);
    r = run_nodes(w, fmt, CLI_ARGS("acquire", "--json", "job"), env, 0);
    run_nodes(w, fmt, CLI_ARGS("release", "--json", "job", json_value(r)), env, 0);
    run_nodes(NULL, fmt, CLI_ARGS("run", "job", "--", "true"), env, 0);
    cli_expect_key_gone("job", "after run");
}

Test(cli_secrets, a_password_in_a_url_works)
{
    every_command_works("redis://:" PASSWORD_IN_URL "@127.0.0.1:%d", NULL);
    /* The ACL user every server has. */
    every_command_works("redis://default:" PASSWORD "@127.0.0.1:%d", NULL);
}

Test(cli_secrets, a_wrong_password_in_a_url_fails_and_is_never_shown)
{
    const char *fmt = "redis://:" WRONG_IN_URL "@127.0.0.1:%d";
    const char *marker = cli_path("ran");
    for (size_t v = 0; v < VERBOSITIES; v++) {
        const char *w = verbosities[v];
        run_nodes(w, fmt, CLI_ARGS("acquire", "--wait", "0", "job"), NULL, 77);
        run_nodes(w, fmt, CLI_ARGS("acquire", "--json", "--wait", "0", "job"), NULL, 77);
        run_nodes(w, fmt, CLI_ARGS("ping"), NULL, 77);
        run_nodes(w, fmt, CLI_ARGS("ping", "--json"), NULL, 77);
        run_nodes(w, fmt, CLI_ARGS("status", "--json", "job"), NULL, 77);
        run_nodes(w, fmt, CLI_ARGS("run", "--wait", "0", "job", "--", "touch", marker), NULL, 77);
    }
    cr_assert_neq(access(marker, F_OK), 0, "CMD ran without the lock");
    cr_assert_eq(cli_keys_total(), 0);
}

Test(cli_secrets, redlock_password_is_the_password_of_node_masters_without_one)
{
    const char *const right[] = {"REDLOCK_PASSWORD=" PASSWORD, NULL};
    every_command_works("redis://127.0.0.1:%d", right);
    every_command_works("127.0.0.1:%d", right);
    every_command_works("redis://default@127.0.0.1:%d", right);

    /* Wrong, or missing: refused. */
    const char *const wrong[] = {"REDLOCK_PASSWORD=" WRONG_PASSWORD, NULL};
    run_nodes("-vvv", "redis://127.0.0.1:%d", CLI_ARGS("ping"), wrong, 77);
    run_nodes("-vvv", "127.0.0.1:%d", CLI_ARGS("ping"), wrong, 77);
    run_nodes("-vvv", "redis://127.0.0.1:%d", CLI_ARGS("ping"), CLI_ENV("REDLOCK_PASSWORD"), 77);
    run_nodes("-vvv", "redis://127.0.0.1:%d", CLI_ARGS("ping"), CLI_ENV("REDLOCK_PASSWORD="), 77);
    /* A password in the URL wins. */
    run_nodes("-vvv", "redis://:" PASSWORD_IN_URL "@127.0.0.1:%d", CLI_ARGS("ping"), wrong, 0);
    /* Only for --node: a config's masters have their own keys. */
    cli_config_options o = {0};
    const char *config = cli_write_config("nopass.yaml", &o);
    run_checked(CLI_ARGS("-vvv", "--config", config, "ping"), right, 77);
}

/* /proc/PID/cmdline, NULs as spaces: what ps -o args shows. */
static const char *cmdline_of(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    cr_assert_geq(fd, 0, "%s", path);
    char *text = cli_own(calloc(1, 65536));
    ssize_t n = read(fd, text, 65535);
    close(fd);
    cr_assert_gt(n, 0, "%s", path);
    for (ssize_t i = 0; i < n; i++)
        if (text[i] == '\0')
            text[i] = ' ';
    return text;
}

static bool sigwatch_started(void *file)
{
    return cli_sigwatch_pid(file) != 0;
}

/* Other users see a command line: once read, the password is overwritten
 * there, in redlock and in the guardian that runs CMD. */
Test(cli_secrets, a_password_in_a_url_is_overwritten_in_the_command_line)
{
    if (getenv("REDLOCK_TEST_TOOL_WRAPPER") != NULL)
        cr_skip_test("under a wrapper, /proc shows the wrapper's command line");
    const char *file = cli_path("signals");
    const char *args[32];
    size_t n = 0;
    for (size_t i = 0; i < CLI_MASTERS; i++) {
        args[n++] = i % 2 ? "-n" : "--node";
        args[n++] = cli_format("redis://default:" PASSWORD_IN_URL "@127.0.0.1:%d",
                               fleet_port(cli.fleet, i));
    }
    args[n++] = "run";
    args[n++] = "job";
    args[n++] = "--";
    args[n++] = SIGWATCH;
    args[n++] = file;
    args[n] = NULL;
    cli_proc *p = cli_spawn(args, cli_env_durable(NULL));
    cr_assert(cli_wait_until(sigwatch_started, (void *)file, 10000), "CMD did not start");
    pid_t cmd = cli_sigwatch_pid(file);
    cli_stat st;
    cr_assert(cli_proc_stat(cmd, &st));
    pid_t guardian = st.ppid;
    cr_assert_neq(guardian, cli_proc_pid(p), "CMD is not the guardian's");

    const pid_t pids[] = {cli_proc_pid(p), guardian};
    for (size_t k = 0; k < 2; k++) {
        const char *line = cmdline_of(pids[k]);
        cr_assert_null(strstr(line, "7f3a91"), "pid %d shows the password: %s", (int)pids[k],
                       line);
        cr_assert_not_null(strstr(line, cli_format("redis://default:******************@127.0.0."
                                                   "1:%d",
                                                   fleet_port(cli.fleet, 4))),
                           "pid %d: %s", (int)pids[k], line);
    }
    cr_assert_eq(kill(cli_proc_pid(p), SIGTERM), 0);
    const cli_result *r = cli_wait(p, T);
    expect_no_password(r);
    cli_expect_key_gone("job", "after SIGTERM");
}
