/* SPDX-License-Identifier: BSD-3-Clause */
/* Masters given to --node as URLs, against a real master listening on a
 * port and a unix socket: redis://HOST:PORT[/DB] and unix:///PATH[?db=N]
 * work for every command, and what is refused is shown without its
 * password. With passwords: test_cli_secrets.c. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <string.h>

#define T CLI_RUN_TIMEOUT_MS
#define SECRET "urlSecret-5e1d07"

static void one_master_with_a_socket(void)
{
    fleet_options o = {.unix_socket = 1};
    cli_setup(1, &o);
}

TestSuite(cli_urls, .init = one_master_with_a_socket, .fini = cli_teardown, .timeout = 120);

static const cli_result *run_ok(const char *const args[])
{
    const cli_result *r = cli_run(args, cli_env_durable(NULL), T);
    cli_expect_exit(r, 0);
    return r;
}

/* Whether key exists in db on the master. */
static bool key_in_db(const char *key, int db)
{
    redisContext *c = fleet_connect(cli.fleet, 0);
    cr_assert_not_null(c);
    redisReply *r = redisCommand(c, "SELECT %d", db);
    cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS, "SELECT %d failed", db);
    freeReplyObject(r);
    r = redisCommand(c, "EXISTS %s", key);
    cr_assert(r != NULL && r->type == REDIS_REPLY_INTEGER);
    bool exists = r->integer == 1;
    freeReplyObject(r);
    redisFree(c);
    return exists;
}

/* acquire, status, release, ping and run through --node node: each works,
 * and the lock lives in db. */
static void every_command_works(const char *node, int db)
{
    const cli_result *r = run_ok(CLI_ARGS("-n", node, "acquire", "job"));
    const char *value = cli_own(strdup(cli_first_line(r->out)));
    cr_assert(cli_is_value(value), "%s: %s", r->cmdline, r->out);
    cr_assert(key_in_db("job", db), "%s: the lock is not in db %d", node, db);
    if (db != 0)
        cr_assert_not(key_in_db("job", 0), "%s: the lock is in db 0", node);
    r = run_ok(CLI_ARGS("-n", node, "status", "job"));
    cr_assert_not_null(strstr(r->out, value), "%s: %s", r->cmdline, r->out);
    run_ok(CLI_ARGS("-n", node, "release", "job", value));
    cr_assert_not(key_in_db("job", db), "%s: not released", node);
    run_ok(CLI_ARGS("-n", node, "ping"));
    /* Each database has its own fencing counter: put it in use first. */
    run_ok(CLI_ARGS("-n", node, "fencing-init"));
    cr_assert(key_in_db(REDLOCK_FENCING_KEY, db), "%s: no counter in db %d", node, db);
    run_ok(CLI_ARGS("-n", node, "run", "job", "--", "true"));
    cr_assert_not(key_in_db("job", db));
}

Test(cli_urls, a_redis_url_is_a_master)
{
    int port = fleet_port(cli.fleet, 0);
    const char *node = cli_format("redis://127.0.0.1:%d", port);
    const cli_result *r = run_ok(CLI_ARGS("-n", node, "ping"));
    cr_assert_eq(strncmp(r->out, cli_format("127.0.0.1:%d  ok  ", port), 18), 0, "%s", r->out);
    every_command_works(node, 0);
    every_command_works(cli_format("REDIS://127.0.0.1:%d/", port), 0);
}

Test(cli_urls, the_db_of_a_redis_url_is_selected)
{
    every_command_works(cli_format("redis://127.0.0.1:%d/3", fleet_port(cli.fleet, 0)), 3);
}

Test(cli_urls, a_unix_url_is_a_master)
{
    const char *path = fleet_unix_socket(cli.fleet, 0);
    cr_assert_not_null(path);
    const cli_result *r = run_ok(CLI_ARGS("-n", cli_format("unix://%s", path), "ping"));
    cr_assert_eq(strncmp(r->out, cli_format("unix:%s  ok  ", path), strlen(path) + 9), 0, "%s",
                 r->out);
    every_command_works(cli_format("unix://%s", path), 0);
    every_command_works(cli_format("unix://%s?db=2", path), 2);
    /* The tool's own form still works. */
    every_command_works(cli_format("unix:%s", path), 0);
}

/* One error line, exit 64, naming the master without its password. */
static void expect_refused_with(const char *node, int status, const char *message)
{
    const cli_result *r = cli_run(CLI_ARGS("-vvv", "-n", node, "ping"), NULL, T);
    cli_expect_exit(r, status);
    cli_expect_one_error_line(r);
    cr_assert_str_eq(r->err, message);
    cr_assert_null(strstr(r->err, SECRET), "%s", r->err);
    cr_assert_str_empty(r->out);
}

static void expect_refused(const char *node, const char *message)
{
    expect_refused_with(node, 64, message);
}

/* A build without TLS refuses rediss:// as a config it cannot use. */
Test(cli_urls, rediss_without_tls_is_a_config_error)
{
    const char *why = NULL;
    if (redlock_tls_available(&why))
        cr_skip_test("this build has TLS");
    char message[REDLOCK_ERRBUF_SIZE + 100];
    snprintf(message, sizeof(message),
             "redlock: --node rediss://u:***@127.0.0.1:6380: rediss://: %s\n", why);
    expect_refused_with("rediss://u:" SECRET "@127.0.0.1:6380", 78, message);
}

/* So does a config asking for TLS: the loader's message, exit 78. */
Test(cli_urls, a_tls_config_without_tls_is_a_config_error)
{
    const char *why = NULL;
    if (redlock_tls_available(&why))
        cr_skip_test("this build has TLS");
    const cli_config_options o = {.extra = "tls: true"};
    const char *config = cli_write_config("tls.yaml", &o);
    const cli_result *r = cli_run(CLI_ARGS("-c", config, "ping"), NULL, T);
    cli_expect_exit(r, 78);
    cli_expect_one_error_line(r);
    cr_assert_not_null(strstr(r->err, ": tls: TLS is not available in this build"), "%s", r->err);
    cr_assert_not_null(strstr(r->err, why + strlen("TLS is not available in this build")),
                       "%s", r->err);
}

Test(cli_urls, a_bad_url_is_refused_and_shown_without_its_password)
{
    expect_refused("redis://u:" SECRET "@127.0.0.1:99999",
                   "redlock: --node redis://u:***@127.0.0.1:99999: expected a port from 1 to "
                   "65535\n");
    expect_refused("redis://:" SECRET "@127.0.0.1:6379?db=1",
                   "redlock: --node redis://:***@127.0.0.1:6379?db=1: a query or fragment (only "
                   "unix:// takes one: ?db=N)\n");
    expect_refused("http://u:" SECRET "@127.0.0.1",
                   "redlock: --node http://u:***@127.0.0.1: expected redis://, rediss:// or "
                   "unix://\n");
    /* A user without a password (and none in REDLOCK_PASSWORD). */
    expect_refused("redis://" SECRET "@127.0.0.1:6379",
                   "redlock: --node redis://***@127.0.0.1:6379: a user needs a password\n");
    /* No scheme: then it is no host name either. */
    const char *usage = "expected HOST[:PORT], [IPV6][:PORT], unix:/PATH, "
                        "redis://[USER[:PASSWORD]@]HOST[:PORT][/DB], rediss://... or "
                        "unix:///PATH[?db=N]";
    expect_refused("u:" SECRET "@127.0.0.1:6379",
                   cli_format("redlock: --node u:***@127.0.0.1:6379: %s\n", usage));
    expect_refused(SECRET "@127.0.0.1:6379",
                   cli_format("redlock: --node ***@127.0.0.1:6379: %s\n", usage));

    int port = fleet_port(cli.fleet, 0);
    const cli_result *r = cli_run(CLI_ARGS("-n", cli_format("127.0.0.1:%d", port), "-n",
                                           cli_format("redis://:" SECRET "@127.0.0.1:%d/2", port),
                                           "ping"),
                                  NULL, T);
    cli_expect_exit(r, 64);
    cr_assert_str_eq(r->err, cli_format("redlock: --node redis://:***@127.0.0.1:%d/2: a second "
                                        "entry for the master 127.0.0.1:%d\n",
                                        port, port));
}
