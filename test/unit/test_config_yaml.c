/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading a config from YAML (src/config/config_yaml.c): what loads, and the exact
 * one-line message and status for every kind of bad input. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, setenv, strdup, truncate */

#include <criterion/criterion.h>

#include "config_internal.h"
#include "log.h"
#include "redlock/redlock.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A complete, valid node list, for tests about other keys. */
#define ONE_NODE "nodes:\n  - host: 127.0.0.1\n    port: 7001\n"

/* Loads text as "c.yaml"; on success returns the config. */
static redlock_config *load_ok(const char *text)
{
    char err[REDLOCK_ERRBUF_SIZE] = "untouched";
    redlock_config *cfg = NULL;
    int rc = redlock_config_load_string(&cfg, text, strlen(text), "c.yaml", err, sizeof(err));
    cr_assert_eq(rc, REDLOCK_OK, "status %d, message: %s", rc, err);
    cr_assert_not_null(cfg);
    cr_assert_str_eq(err, "", "errbuf is cleared on success");
    return cfg;
}

/* Loads text (length len) as "c.yaml" and checks the failure exactly. */
static void expect_error_len(const char *text, size_t len, int status, const char *message)
{
    char err[REDLOCK_ERRBUF_SIZE] = "";
    redlock_config *cfg = (redlock_config *)&err; /* must be reset to NULL */
    int rc = redlock_config_load_string(&cfg, text, len, "c.yaml", err, sizeof(err));
    cr_assert_eq(rc, status, "status %d, message: %s", rc, err);
    cr_assert_null(cfg);
    cr_assert_str_eq(err, message);
}

static void expect_error(const char *text, const char *message)
{
    expect_error_len(text, strlen(text), REDLOCK_ECONFIG, message);
}

static int64_t setting(const redlock_config *cfg, redlock_setting key)
{
    int64_t value = -1;
    cr_assert_eq(redlock_config_get(cfg, key, &value), REDLOCK_OK);
    return value;
}

/* Writes text to a new temporary file; returns its path (free it). */
static char *write_temp_file(const char *text)
{
    char *path = strdup("/tmp/redlock_test_XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    size_t len = strlen(text);
    cr_assert_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    return path;
}

/* ------------------------------------------------------------------------ */
/* What loads                                                                */

Test(config_yaml, minimal_config_has_defaults)
{
    redlock_config *cfg = load_ok(ONE_NODE);
    cr_assert_eq(redlock_config_node_count(cfg), 1);
    cr_assert_str_eq(redlock_config_node_name(cfg, 0), "127.0.0.1:7001");
    for (int i = 0; i < RL_SETTING_COUNT; i++)
        cr_assert_eq(setting(cfg, (redlock_setting)i), rl_setting_table[i].def, "%s",
                     rl_setting_table[i].name);
    cr_assert_eq(redlock_config_drift_factor(cfg), RL_DRIFT_FACTOR_DEFAULT);
    cr_assert_null(cfg->nodes[0].password);
    cr_assert_eq(cfg->nodes[0].db, 0);
    redlock_config_free(cfg);
}

Test(config_yaml, every_key_is_applied)
{
    redlock_config *cfg = load_ok("connect_timeout_ms: 1001\n"
                                  "command_timeout_ms: 1002\n"
                                  "ttl_ms: 1003\n"
                                  "retry_count: 1004\n"
                                  "retry_delay_ms: 1005\n"
                                  "retry_jitter_ms: 1006\n"
                                  "reconnect_min_ms: 1007\n"
                                  "reconnect_max_ms: 1008\n"
                                  "drift_factor: 0.25\n"
                                  "nodes:\n"
                                  "  - host: redis-a.example.org\n"
                                  "    port: 7001\n"
                                  "    username: locker\n"
                                  "    password: s3cret\n"
                                  "    db: 3\n"
                                  "    connect_timeout_ms: 11\n"
                                  "    command_timeout_ms: 12\n"
                                  "  - socket: /tmp/redis.sock\n"
                                  "    password: other\n");
    cr_assert_eq(setting(cfg, REDLOCK_CONNECT_TIMEOUT_MS), 1001);
    cr_assert_eq(setting(cfg, REDLOCK_COMMAND_TIMEOUT_MS), 1002);
    cr_assert_eq(setting(cfg, REDLOCK_TTL_MS), 1003);
    cr_assert_eq(setting(cfg, REDLOCK_RETRY_COUNT), 1004);
    cr_assert_eq(setting(cfg, REDLOCK_RETRY_DELAY_MS), 1005);
    cr_assert_eq(setting(cfg, REDLOCK_RETRY_JITTER_MS), 1006);
    cr_assert_eq(setting(cfg, REDLOCK_RECONNECT_MIN_MS), 1007);
    cr_assert_eq(setting(cfg, REDLOCK_RECONNECT_MAX_MS), 1008);
    cr_assert_eq(redlock_config_drift_factor(cfg), 0.25);

    cr_assert_eq(redlock_config_node_count(cfg), 2);
    const rl_node *a = &cfg->nodes[0];
    cr_assert_str_eq(a->name, "redis-a.example.org:7001");
    cr_assert_str_eq(a->username, "locker");
    cr_assert_str_eq(a->password, "s3cret");
    cr_assert_eq(a->db, 3);
    cr_assert_eq(a->connect_timeout_ms, 11);
    cr_assert_eq(a->command_timeout_ms, 12);
    const rl_node *b = &cfg->nodes[1];
    cr_assert_str_eq(b->name, "unix:/tmp/redis.sock");
    cr_assert_null(b->username);
    cr_assert_str_eq(b->password, "other");
    cr_assert_eq(b->connect_timeout_ms, 0, "0: the config-wide value");
    redlock_config_free(cfg);
}

Test(config_yaml, port_defaults_to_6379)
{
    redlock_config *cfg = load_ok("nodes:\n  - host: localhost\n");
    cr_assert_str_eq(redlock_config_node_name(cfg, 0), "localhost:6379");
    redlock_config_free(cfg);
}

Test(config_yaml, ipv6_host)
{
    redlock_config *cfg = load_ok("nodes:\n  - host: \"::1\"\n    port: 7001\n");
    cr_assert_str_eq(redlock_config_node_name(cfg, 0), "[::1]:7001");
    redlock_config_free(cfg);
}

Test(config_yaml, null_values_keep_defaults)
{
    redlock_config *cfg = load_ok("ttl_ms:\n"
                                  "retry_count: ~\n"
                                  "drift_factor: null\n"
                                  "reconnect_max_ms: NULL\n"
                                  "nodes:\n"
                                  "  - host: 127.0.0.1\n"
                                  "    port: ~\n"
                                  "    password:\n"
                                  "    username: Null\n"
                                  "    db:\n"
                                  "    socket:\n"
                                  "    command_timeout_ms: ~\n");
    cr_assert_eq(setting(cfg, REDLOCK_TTL_MS), rl_setting_table[REDLOCK_TTL_MS].def);
    cr_assert_eq(setting(cfg, REDLOCK_RETRY_COUNT), rl_setting_table[REDLOCK_RETRY_COUNT].def);
    cr_assert_eq(redlock_config_drift_factor(cfg), RL_DRIFT_FACTOR_DEFAULT);
    cr_assert_str_eq(redlock_config_node_name(cfg, 0), "127.0.0.1:6379");
    cr_assert_null(cfg->nodes[0].password);
    cr_assert_null(cfg->nodes[0].username);
    cr_assert_eq(cfg->nodes[0].command_timeout_ms, 0);
    redlock_config_free(cfg);
}

Test(config_yaml, quoted_integers_and_decimal_leading_zeros)
{
    redlock_config *cfg = load_ok("ttl_ms: \"5000\"\n"
                                  "retry_count: '+7'\n"
                                  "retry_delay_ms: 010\n" ONE_NODE);
    cr_assert_eq(setting(cfg, REDLOCK_TTL_MS), 5000);
    cr_assert_eq(setting(cfg, REDLOCK_RETRY_COUNT), 7);
    cr_assert_eq(setting(cfg, REDLOCK_RETRY_DELAY_MS), 10, "always decimal, never octal");
    redlock_config_free(cfg);
}

Test(config_yaml, integer_range_edges_are_accepted)
{
    redlock_config *cfg = load_ok("ttl_ms: 2147483647\n"
                                  "retry_count: 0\n"
                                  "nodes:\n"
                                  "  - host: a\n"
                                  "    port: 1\n"
                                  "    db: 1000000\n"
                                  "  - host: a\n"
                                  "    port: 65535\n"
                                  "    db: 0\n");
    cr_assert_eq(setting(cfg, REDLOCK_TTL_MS), 2147483647);
    cr_assert_eq(setting(cfg, REDLOCK_RETRY_COUNT), 0);
    cr_assert_str_eq(redlock_config_node_name(cfg, 0), "a:1");
    cr_assert_str_eq(redlock_config_node_name(cfg, 1), "a:65535");
    cr_assert_eq(cfg->nodes[0].db, 1000000);
    redlock_config_free(cfg);
}

Test(config_yaml, drift_factor_forms)
{
    static const char *const good[] = {"0", "0.0", "0.5", "'0.25'", "1e-3", ".5", "0.999"};
    static const double values[] = {0.0, 0.0, 0.5, 0.25, 0.001, 0.5, 0.999};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        char text[256];
        snprintf(text, sizeof(text), "drift_factor: %s\n" ONE_NODE, good[i]);
        redlock_config *cfg = load_ok(text);
        cr_assert_eq(redlock_config_drift_factor(cfg), values[i], "%s", good[i]);
        redlock_config_free(cfg);
    }
}

Test(config_yaml, password_env_is_read_at_load_time)
{
    setenv("RL_TEST_PASSWORD", "from-env", 1);
    redlock_config *cfg = load_ok("nodes:\n"
                                  "  - host: a\n"
                                  "    username: u\n"
                                  "    password_env: RL_TEST_PASSWORD\n");
    cr_assert_str_eq(cfg->nodes[0].password, "from-env");
    cr_assert_str_eq(cfg->nodes[0].username, "u");
    redlock_config_free(cfg);
}

/* password_file: the file's content, less a trailing newline; a relative
 * path in $CREDENTIALS_DIRECTORY (systemd's LoadCredential=). */
Test(config_yaml, password_file_is_read_at_load_time)
{
    char *path = write_temp_file("from-file\n");
    char text[512];
    snprintf(text, sizeof(text), "nodes:\n  - host: a\n    username: u\n    password_file: %s\n",
             path);
    unsetenv("CREDENTIALS_DIRECTORY");
    redlock_config *cfg = load_ok(text);
    cr_assert_str_eq(cfg->nodes[0].password, "from-file");
    cr_assert_str_eq(cfg->nodes[0].username, "u");
    redlock_config_free(cfg);

    /* Relative: in $CREDENTIALS_DIRECTORY; no newline at the end is kept
     * as it is, \r\n is stripped too. */
    char *dir = strdup(path);
    char *slash = strrchr(dir, '/');
    *slash = '\0';
    setenv("CREDENTIALS_DIRECTORY", dir, 1);
    static const char *const contents[] = {"p4ss", "p4ss\r\n"};
    for (size_t k = 0; k < 2; k++) {
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs(contents[k], f);
        fclose(f);
        snprintf(text, sizeof(text), "nodes:\n  - host: a\n    password_file: %s\n", slash + 1);
        cfg = load_ok(text);
        cr_assert_str_eq(cfg->nodes[0].password, "p4ss", "content %zu", k);
        redlock_config_free(cfg);
    }
    unsetenv("CREDENTIALS_DIRECTORY");
    unlink(path);
    free(dir);
    free(path);
}

/* The config-wide password_file: the password of every node that gives
 * none of its own, wherever the key is in the file. */
Test(config_yaml, a_config_wide_password_file_is_each_nodes_without_one)
{
    unsetenv("CREDENTIALS_DIRECTORY");
    char *path = write_temp_file("shared\n");
    char text[512];
    snprintf(text, sizeof(text),
             "nodes:\n  - host: a\n  - host: b\n    password: own\n  - host: c\n"
             "    username: u\n  - url: redis://v@d\npassword_file: %s\n",
             path);
    redlock_config *cfg = load_ok(text);
    cr_assert_str_eq(cfg->nodes[0].password, "shared");
    cr_assert_str_eq(cfg->nodes[1].password, "own");
    cr_assert_str_eq(cfg->nodes[2].password, "shared");
    cr_assert_str_eq(cfg->nodes[2].username, "u");
    cr_assert_str_eq(cfg->nodes[3].password, "shared");
    cr_assert_str_eq(cfg->nodes[3].username, "v");
    redlock_config_free(cfg);
    snprintf(text, sizeof(text), "password_file: %s\npassword_file: %s\n" ONE_NODE, path, path);
    expect_error(text, "c.yaml:2:1: password_file: duplicate key (first at line 1)");
    unlink(path);
    free(path);

    expect_error("password_file: /nonexistent/redlock-pass\n" ONE_NODE,
                 "c.yaml:1:16: password_file: /nonexistent/redlock-pass: cannot open: No such "
                 "file or directory");
}

/* Errors name the key, its line and the file, never what it holds. */
Test(config_yaml, password_file_errors_name_the_path_never_the_content)
{
    unsetenv("CREDENTIALS_DIRECTORY");
    expect_error("nodes:\n  - host: a\n    password: p\n    password_file: /x\n",
                 "c.yaml:4:5: nodes[0].password_file: password and password_file are mutually "
                 "exclusive");
    expect_error("nodes:\n  - host: a\n    password_file: /x\n    password: p\n",
                 "c.yaml:4:5: nodes[0].password: password and password_file are mutually "
                 "exclusive");
    expect_error("nodes:\n  - host: a\n    password_env: E\n    password_file: /x\n",
                 "c.yaml:4:5: nodes[0].password_file: password_env and password_file are "
                 "mutually exclusive");
    expect_error("nodes:\n  - url: redis://:urlSecret@a\n    password_file: /x\n",
                 "c.yaml:3:5: nodes[0].password_file: the url gives a password already");
    expect_error("nodes:\n  - host: a\n    password_file: /nonexistent/redlock-pass\n",
                 "c.yaml:3:20: nodes[0].password_file: /nonexistent/redlock-pass: cannot open: "
                 "No such file or directory");

    char *path = write_temp_file("s3cret-in-file\n");
    chmod(path, 0);
    char text[512];
    char message[REDLOCK_ERRBUF_SIZE];
    snprintf(text, sizeof(text), "nodes:\n  - host: a\n    password_file: %s\n", path);
    if (geteuid() != 0) { /* root reads it all the same */
        snprintf(message, sizeof(message),
                 "c.yaml:3:20: nodes[0].password_file: %s: cannot open: Permission denied", path);
        expect_error(text, message);
    }
    chmod(path, 0600);
    static const char *const bad[] = {"\n", "", "a\0b\n"};
    static const size_t bad_len[] = {1, 0, 4};
    static const char *const why[] = {"holds no password (it is empty)",
                                      "holds no password (it is empty)", "holds a NUL byte"};
    for (size_t k = 0; k < 3; k++) {
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(bad[k], 1, bad_len[k], f), bad_len[k]);
        fclose(f);
        snprintf(message, sizeof(message), "c.yaml:3:20: nodes[0].password_file: %s %s", path,
                 why[k]);
        expect_error(text, message);
    }
    unlink(path);
    free(path);
}

Test(config_yaml, comments_and_flow_style)
{
    redlock_config *cfg = load_ok("# locks\n"
                                  "{ttl_ms: 3000, nodes: [{host: a, port: 1}, {socket: /s}]}\n"
                                  "# end\n");
    cr_assert_eq(setting(cfg, REDLOCK_TTL_MS), 3000);
    cr_assert_eq(redlock_config_node_count(cfg), 2);
    redlock_config_free(cfg);
}

Test(config_yaml, sixty_four_nodes_are_allowed)
{
    char text[64 * 32 + 16];
    size_t used = (size_t)snprintf(text, sizeof(text), "nodes:\n");
    for (int i = 0; i < REDLOCK_MAX_NODES; i++)
        used += (size_t)snprintf(text + used, sizeof(text) - used, "  - {host: a, port: %d}\n",
                                 7000 + i);
    redlock_config *cfg = load_ok(text);
    cr_assert_eq(redlock_config_node_count(cfg), REDLOCK_MAX_NODES);
    redlock_config_free(cfg);
}

Test(config_yaml, example_file_loads)
{
#ifndef REDLOCK_SOURCE_DIR
    cr_skip_test("REDLOCK_SOURCE_DIR is not defined by the build");
#else
    char err[REDLOCK_ERRBUF_SIZE] = "";
    redlock_config *cfg = NULL;
    int rc = redlock_config_load_file(&cfg, REDLOCK_SOURCE_DIR "/config/redlock.yaml", err,
                                      sizeof(err));
    cr_assert_eq(rc, REDLOCK_OK, "%s", err);
    cr_assert_eq(redlock_config_node_count(cfg), 5);
    for (size_t i = 0; i < 5; i++) {
        char name[32];
        snprintf(name, sizeof(name), "127.0.0.1:%zu", 7001 + i);
        cr_assert_str_eq(redlock_config_node_name(cfg, i), name);
        cr_assert_null(cfg->nodes[i].password);
    }
    /* The example shows the defaults. */
    for (int i = 0; i < RL_SETTING_COUNT; i++)
        cr_assert_eq(setting(cfg, (redlock_setting)i), rl_setting_table[i].def, "%s",
                     rl_setting_table[i].name);
    cr_assert_eq(redlock_config_drift_factor(cfg), RL_DRIFT_FACTOR_DEFAULT);
    redlock_config_free(cfg);
#endif
}

Test(config_yaml, load_file_reads_a_file)
{
    char *path = write_temp_file("ttl_ms: 1234\n" ONE_NODE);
    char err[REDLOCK_ERRBUF_SIZE];
    redlock_config *cfg = NULL;
    cr_assert_eq(redlock_config_load_file(&cfg, path, err, sizeof(err)), REDLOCK_OK, "%s", err);
    cr_assert_eq(setting(cfg, REDLOCK_TTL_MS), 1234);
    redlock_config_free(cfg);
    unlink(path);
    free(path);
}

/* ------------------------------------------------------------------------ */
/* Integer and number values                                                 */

Test(config_yaml, bad_integer_names_key_and_range)
{
    expect_error("retry_count: 1\nretry_delay_ms: 5\nttl_ms: abc\n" ONE_NODE,
                 "c.yaml:3:9: ttl_ms: expected an integer from 1 to 2147483647, got \"abc\"");
}

Test(config_yaml, integer_must_be_the_whole_scalar)
{
    static const char *const bad[] = {"1.5",  "0x10", "12abc", "' 12'", "''",   "1e3",
                                      "+",    "'-'",  "1_000", "'12 '", "0o17", "\"\"",
                                      "true", "{}",   "[1]"};
    static const char *const got[] = {"\"1.5\"",  "\"0x10\"", "\"12abc\"", "\" 12\"",
                                      "\"\"",     "\"1e3\"",  "\"+\"",     "\"-\"",
                                      "\"1_000\"", "\"12 \"", "\"0o17\"",  "\"\"",
                                      "\"true\"", "a mapping", "a sequence"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[256];
        char message[256];
        snprintf(text, sizeof(text), "ttl_ms: %s\n" ONE_NODE, bad[i]);
        snprintf(message, sizeof(message),
                 "c.yaml:1:9: ttl_ms: expected an integer from 1 to 2147483647, got %s", got[i]);
        expect_error(text, message);
    }
}

Test(config_yaml, integer_out_of_range)
{
    expect_error("ttl_ms: 2147483648\n" ONE_NODE,
                 "c.yaml:1:9: ttl_ms: expected an integer from 1 to 2147483647, "
                 "got \"2147483648\"");
    expect_error("ttl_ms: 0\n" ONE_NODE,
                 "c.yaml:1:9: ttl_ms: expected an integer from 1 to 2147483647, got \"0\"");
    expect_error("ttl_ms: -1\n" ONE_NODE,
                 "c.yaml:1:9: ttl_ms: expected an integer from 1 to 2147483647, got \"-1\"");
    expect_error("ttl_ms: -10000\n" ONE_NODE,
                 "c.yaml:1:9: ttl_ms: expected an integer from 1 to 2147483647, "
                 "got \"-10000\"");
    expect_error("retry_count: -1\n" ONE_NODE,
                 "c.yaml:1:14: retry_count: expected an integer from 0 to 2147483647, got \"-1\"");
    expect_error("connect_timeout_ms: 600001\n" ONE_NODE,
                 "c.yaml:1:21: connect_timeout_ms: expected an integer from 1 to 600000, "
                 "got \"600001\"");
    /* Beyond int64 in both directions. */
    expect_error("ttl_ms: 99999999999999999999999\n" ONE_NODE,
                 "c.yaml:1:9: ttl_ms: expected an integer from 1 to 2147483647, "
                 "got \"99999999999999999999999\"");
    expect_error("ttl_ms: -9223372036854775809\n" ONE_NODE,
                 "c.yaml:1:9: ttl_ms: expected an integer from 1 to 2147483647, "
                 "got \"-9223372036854775809\"");
}

Test(config_yaml, port_out_of_range)
{
    expect_error("ttl_ms: 1000\n"
                 "retry_count: 2\n"
                 "nodes:\n"
                 "  - host: a\n"
                 "    port: 1\n"
                 "  - host: b\n"
                 "    port: 0\n",
                 "c.yaml:7:11: nodes[1].port: expected an integer from 1 to 65535, got \"0\"");
    expect_error("nodes:\n  - host: a\n    port: 65536\n",
                 "c.yaml:3:11: nodes[0].port: expected an integer from 1 to 65535, "
                 "got \"65536\"");
    expect_error("nodes:\n  - host: a\n    port: abc\n",
                 "c.yaml:3:11: nodes[0].port: expected an integer from 1 to 65535, got \"abc\"");
    expect_error("nodes:\n  - host: a\n    port: -6379\n",
                 "c.yaml:3:11: nodes[0].port: expected an integer from 1 to 65535, "
                 "got \"-6379\"");
}

Test(config_yaml, node_integer_keys_out_of_range)
{
    expect_error("nodes:\n  - host: a\n    db: 1000001\n",
                 "c.yaml:3:9: nodes[0].db: expected an integer from 0 to 1000000, "
                 "got \"1000001\"");
    expect_error("nodes:\n  - host: a\n    db: -1\n",
                 "c.yaml:3:9: nodes[0].db: expected an integer from 0 to 1000000, got \"-1\"");
    expect_error("nodes:\n  - host: a\n    connect_timeout_ms: 0\n",
                 "c.yaml:3:25: nodes[0].connect_timeout_ms: expected an integer from 1 to "
                 "600000, got \"0\"");
    expect_error("nodes:\n  - host: a\n    command_timeout_ms: [1]\n",
                 "c.yaml:3:25: nodes[0].command_timeout_ms: expected an integer from 1 to "
                 "600000, got a sequence");
}

Test(config_yaml, bad_drift_factor)
{
    static const char *const bad[] = {"1",        "1.0",   "-0.1",  "nan", ".nan", "inf",
                                      ".inf",     "0x1p-3", "' 0.5'", "0.5x", "abc", "''",
                                      "1e400"};
    static const char *const got[] = {"\"1\"",      "\"1.0\"",    "\"-0.1\"",   "\"nan\"",
                                      "\".nan\"",   "\"inf\"",    "\".inf\"",   "\"0x1p-3\"",
                                      "\" 0.5\"",   "\"0.5x\"",   "\"abc\"",    "\"\"",
                                      "\"1e400\""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[256];
        char message[256];
        snprintf(text, sizeof(text), ONE_NODE "drift_factor: %s\n", bad[i]);
        snprintf(message, sizeof(message),
                 "c.yaml:4:15: drift_factor: expected a number from 0 to less than 1, got %s",
                 got[i]);
        expect_error(text, message);
    }
    expect_error(ONE_NODE "drift_factor: {a: 1}\n",
                 "c.yaml:4:15: drift_factor: expected a number from 0 to less than 1, "
                 "got a mapping");
}

/* ------------------------------------------------------------------------ */
/* Keys                                                                      */

Test(config_yaml, unknown_node_key)
{
    expect_error("nodes:\n"
                 "  - host: a\n"
                 "    port: 1\n"
                 "    db: 0\n"
                 "    prot: 2\n",
                 "c.yaml:5:5: nodes[0].prot: unknown key (expected host, port, socket, "
                 "url, password, password_env, password_file, username, db, "
                 "connect_timeout_ms, command_timeout_ms, durable, tls, tls_ca_file, tls_ca_dir, tls_cert_file, tls_key_file, "
                 "tls_server_name)");
}

Test(config_yaml, unknown_top_level_key)
{
    expect_error(ONE_NODE "tll: 5\n",
                 "c.yaml:4:1: tll: unknown key (expected connect_timeout_ms, command_timeout_ms, "
                 "ttl_ms, retry_count, retry_delay_ms, retry_jitter_ms, reconnect_min_ms, "
                 "reconnect_max_ms, wait_by_notification, max_hold_ms, lock_delay_ms, "
                 "fencing, max_in_flight, clock_check, clock_warmup_ms, clock_probe_ms, "
                 "clock_quarantine_ms, max_ttl_ms, durable, script_free, drift_factor, nodes, password_file, "
                 "tls, tls_ca_file, tls_ca_dir, tls_cert_file, tls_key_file, tls_server_name; "
                 "or a `_ms` key without `_ms`, as a duration)");
}

Test(config_yaml, keys_are_case_sensitive)
{
    expect_error("TTL_MS: 5\n" ONE_NODE,
                 "c.yaml:1:1: TTL_MS: unknown key (expected connect_timeout_ms, "
                 "command_timeout_ms, ttl_ms, retry_count, retry_delay_ms, retry_jitter_ms, "
                 "reconnect_min_ms, reconnect_max_ms, wait_by_notification, max_hold_ms, "
                 "lock_delay_ms, fencing, max_in_flight, clock_check, clock_warmup_ms, "
                 "clock_probe_ms, clock_quarantine_ms, max_ttl_ms, durable, script_free, drift_factor, nodes, password_file, "
                 "tls, tls_ca_file, tls_ca_dir, tls_cert_file, tls_key_file, tls_server_name; "
                 "or a `_ms` key without `_ms`, as a duration)");
}

Test(config_yaml, duplicate_top_level_key)
{
    expect_error("ttl_ms: 1\n" ONE_NODE "ttl_ms: 2\n",
                 "c.yaml:5:1: ttl_ms: duplicate key (first at line 1)");
    expect_error(ONE_NODE ONE_NODE, "c.yaml:4:1: nodes: duplicate key (first at line 1)");
}

Test(config_yaml, duplicate_node_key)
{
    expect_error("nodes:\n  - host: a\n    port: 1\n    port: 2\n",
                 "c.yaml:4:5: nodes[0].port: duplicate key (first at line 3)");
}

Test(config_yaml, key_that_is_not_a_scalar)
{
    expect_error("? [a]\n: 1\n", "c.yaml:1:3: expected a key name, got a sequence");
    expect_error("nodes:\n  - ? {a: 1}\n    : 1\n",
                 "c.yaml:2:7: nodes[0]: expected a key name, got a mapping");
}

Test(config_yaml, unknown_key_is_escaped_and_truncated)
{
    expect_error("\"bad\\tkey\\u00e9\": 1\n",
                 "c.yaml:1:1: bad\\tkey\\xc3\\xa9: unknown key (expected connect_timeout_ms, "
                 "command_timeout_ms, ttl_ms, retry_count, retry_delay_ms, retry_jitter_ms, "
                 "reconnect_min_ms, reconnect_max_ms, wait_by_notification, max_hold_ms, "
                 "lock_delay_ms, fencing, max_in_flight, clock_check, clock_warmup_ms, "
                 "clock_probe_ms, clock_quarantine_ms, max_ttl_ms, durable, script_free, drift_factor, nodes, password_file, "
                 "tls, tls_ca_file, tls_ca_dir, tls_cert_file, tls_key_file, tls_server_name; "
                 "or a `_ms` key without `_ms`, as a duratio"); /* cut at REDLOCK_ERRBUF_SIZE */
    expect_error("nodes:\n  - kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk: 1\n",
                 "c.yaml:2:5: nodes[0].kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk...: unknown key "
                 "(expected host, port, socket, url, password, password_env, password_file, "
                 "username, db, connect_timeout_ms, command_timeout_ms, durable, tls, tls_ca_file, tls_ca_dir, tls_cert_file, "
                 "tls_key_file, tls_server_name)");
    expect_error("\"\": 1\n",
                 "c.yaml:1:1: \"\": unknown key (expected connect_timeout_ms, "
                 "command_timeout_ms, ttl_ms, retry_count, retry_delay_ms, retry_jitter_ms, "
                 "reconnect_min_ms, reconnect_max_ms, wait_by_notification, max_hold_ms, "
                 "lock_delay_ms, fencing, max_in_flight, clock_check, clock_warmup_ms, "
                 "clock_probe_ms, clock_quarantine_ms, max_ttl_ms, durable, script_free, drift_factor, nodes, password_file, "
                 "tls, tls_ca_file, tls_ca_dir, tls_cert_file, tls_key_file, tls_server_name; "
                 "or a `_ms` key without `_ms`, as a duration)");
}

/* ------------------------------------------------------------------------ */
/* Nodes                                                                     */

Test(config_yaml, missing_nodes)
{
    expect_error("ttl_ms: 5\n", "c.yaml:1:1: nodes: at least one node is required");
}

Test(config_yaml, empty_document_needs_nodes)
{
    expect_error("", "c.yaml:1:1: nodes: at least one node is required");
    expect_error("# only a comment\n\n", "c.yaml:1:1: nodes: at least one node is required");
    expect_error("---\n", "c.yaml:2:1: nodes: at least one node is required");
    expect_error("~\n", "c.yaml:1:1: nodes: at least one node is required");
}

Test(config_yaml, empty_or_null_nodes)
{
    expect_error("nodes: []\n", "c.yaml:1:8: nodes: at least one node is required");
    expect_error("nodes: ~\n", "c.yaml:1:8: nodes: at least one node is required");
    expect_error("nodes:\nttl_ms: 5\n", "c.yaml:1:7: nodes: at least one node is required");
}

Test(config_yaml, nodes_of_the_wrong_type)
{
    expect_error("nodes: 127.0.0.1:7001\n",
                 "c.yaml:1:8: nodes: expected a sequence of nodes, got \"127.0.0.1:7001\"");
    expect_error("nodes:\n  host: a\n",
                 "c.yaml:2:3: nodes: expected a sequence of nodes, got a mapping");
    expect_error("nodes:\n  - 127.0.0.1\n",
                 "c.yaml:2:5: nodes[0]: expected a mapping, got \"127.0.0.1\"");
    expect_error("nodes:\n  - host: a\n  - [b]\n",
                 "c.yaml:3:5: nodes[1]: expected a mapping, got a sequence");
    expect_error("nodes:\n  -\n", "c.yaml:2:4: nodes[0]: expected a mapping, got null");
}

Test(config_yaml, top_level_of_the_wrong_type)
{
    expect_error("- host: a\n", "c.yaml:1:1: expected a mapping at the top level, got a sequence");
    expect_error("hello\n", "c.yaml:1:1: expected a mapping at the top level, got \"hello\"");
}

Test(config_yaml, url_host_or_socket_is_required)
{
    expect_error("nodes:\n  - port: 7001\n",
                 "c.yaml:2:5: nodes[0]: url, host or socket is required");
    expect_error("nodes:\n  - host: ~\n", "c.yaml:2:5: nodes[0]: url, host or socket is required");
    expect_error("nodes:\n  - {}\n", "c.yaml:2:5: nodes[0]: url, host or socket is required");
}

Test(config_yaml, host_and_socket_are_exclusive)
{
    expect_error("nodes:\n  - host: a\n    socket: /s\n",
                 "c.yaml:3:5: nodes[0].socket: host and socket are mutually exclusive");
    expect_error("nodes:\n  - socket: /s\n    host: a\n",
                 "c.yaml:3:5: nodes[0].host: host and socket are mutually exclusive");
}

Test(config_yaml, port_is_not_allowed_with_socket)
{
    expect_error("nodes:\n  - socket: /s\n    port: 1\n",
                 "c.yaml:3:5: nodes[0].port: only allowed with host, not with socket");
}

Test(config_yaml, bad_host_or_socket_text)
{
    expect_error("nodes:\n  - host: ''\n", "c.yaml:2:11: nodes[0].host: expected a non-empty string");
    expect_error("nodes:\n  - host: {a: b}\n",
                 "c.yaml:2:11: nodes[0].host: expected a string, got a mapping");
    expect_error("nodes:\n  - host: 'bad host'\n",
                 "c.yaml:2:11: nodes[0].host: invalid host \"bad host\" (no spaces or control "
                 "characters, and not too long)");
    expect_error("nodes:\n  - socket: \"/tmp/a\\x01\"\n",
                 "c.yaml:2:13: nodes[0].socket: invalid socket path \"/tmp/a\\x01\" (no spaces "
                 "or control characters, and not too long)");
    expect_error("nodes:\n  - host: \"a\\0b\"\n", "c.yaml:2:11: nodes[0].host: contains a NUL byte");
}

Test(config_yaml, duplicate_node)
{
    expect_error("ttl_ms: 1000\n"
                 "nodes:\n"
                 "  - host: 127.0.0.1\n"
                 "    port: 7001\n"
                 "  - host: 127.0.0.1\n"
                 "    port: 7002\n"
                 "    db: 1\n"
                 "    command_timeout_ms: 20\n"
                 "  - host: 127.0.0.1\n"
                 "    port: 7001\n",
                 "c.yaml:9:5: nodes[2]: duplicate node 127.0.0.1:7001 (first at line 3)");
}

Test(config_yaml, duplicate_node_ignores_host_case_and_default_port)
{
    expect_error("nodes:\n  - host: localhost\n  - host: LocalHost\n    port: 6379\n",
                 "c.yaml:3:5: nodes[1]: duplicate node localhost:6379 (first at line 2)");
}

Test(config_yaml, duplicate_socket)
{
    expect_error("nodes:\n  - socket: /s\n  - host: a\n  - socket: /s\n",
                 "c.yaml:4:5: nodes[2]: duplicate node unix:/s (first at line 2)");
}

Test(config_yaml, too_many_nodes)
{
    char text[(REDLOCK_MAX_NODES + 1) * 32 + 16];
    size_t used = (size_t)snprintf(text, sizeof(text), "nodes:\n");
    for (int i = 0; i <= REDLOCK_MAX_NODES; i++)
        used += (size_t)snprintf(text + used, sizeof(text) - used, "  - {host: a, port: %d}\n",
                                 7000 + i);
    expect_error(text, "c.yaml:66:5: nodes[64]: too many nodes (at most 64)");
}

/* Far beyond the limit: the same message, about the first node too many. */
Test(config_yaml, a_thousand_nodes_are_refused_at_the_first_one_too_many)
{
    size_t size = 1000 * 32 + 16;
    char *text = malloc(size);
    cr_assert_not_null(text);
    size_t used = (size_t)snprintf(text, size, "nodes:\n");
    for (int i = 0; i < 1000; i++)
        used += (size_t)snprintf(text + used, size - used, "  - {host: a, port: %d}\n",
                                 10000 + i);
    expect_error(text, "c.yaml:66:5: nodes[64]: too many nodes (at most 64)");
    free(text);
}

/* ------------------------------------------------------------------------ */
/* Credentials                                                               */

Test(config_yaml, username_needs_a_password)
{
    expect_error("nodes:\n  - host: a\n    username: u\n",
                 "c.yaml:3:5: nodes[0].username: needs password, password_env or password_file");
    expect_error("nodes:\n  - host: a\n    username: u\n    password: ~\n",
                 "c.yaml:3:5: nodes[0].username: needs password, password_env or password_file");
}

Test(config_yaml, password_and_password_env_are_exclusive)
{
    setenv("RL_TEST_PASSWORD", "from-env", 1);
    expect_error("nodes:\n  - host: a\n    password: p\n    password_env: RL_TEST_PASSWORD\n",
                 "c.yaml:4:5: nodes[0].password_env: password and password_env are mutually "
                 "exclusive");
}

Test(config_yaml, password_value_is_never_shown)
{
    expect_error("nodes:\n  - host: a\n    password: ''\n",
                 "c.yaml:3:15: nodes[0].password: expected a non-empty string");
    expect_error("nodes:\n  - host: a\n    password: [s3cret]\n",
                 "c.yaml:3:15: nodes[0].password: expected a string, got a sequence");
    expect_error("nodes:\n  - host: a\n    password: \"s3c\\0ret\"\n",
                 "c.yaml:3:15: nodes[0].password: contains a NUL byte");
    /* Too long for AUTH: refused by the setter, still not shown. */
    size_t len = 5000;
    char *text = malloc(len + 64);
    size_t used = (size_t)sprintf(text, "nodes:\n  - host: a\n    password: ");
    memset(text + used, 's', len);
    memcpy(text + used + len, "\n", 2);
    expect_error(text, "c.yaml:3:15: nodes[0].password: the password is too long");
    free(text);
}

Test(config_yaml, password_env_unset_or_empty)
{
    unsetenv("RL_TEST_UNSET");
    expect_error("nodes:\n  - host: a\n    password_env: RL_TEST_UNSET\n",
                 "c.yaml:3:19: nodes[0].password_env: environment variable RL_TEST_UNSET is not "
                 "set");
    setenv("RL_TEST_EMPTY", "", 1);
    expect_error("nodes:\n  - host: a\n    password_env: RL_TEST_EMPTY\n",
                 "c.yaml:3:19: nodes[0].password_env: environment variable RL_TEST_EMPTY is "
                 "empty");
}

Test(config_yaml, password_env_must_be_a_variable_name)
{
    /* Likely a password pasted in the wrong key: not echoed. */
    expect_error("nodes:\n  - host: a\n    password_env: 'hunter2 !'\n",
                 "c.yaml:3:19: nodes[0].password_env: expected the name of an environment "
                 "variable (letters, digits, _)");
    expect_error("nodes:\n  - host: a\n    password_env: 9LIVES\n",
                 "c.yaml:3:19: nodes[0].password_env: expected the name of an environment "
                 "variable (letters, digits, _)");
}

Test(config_yaml, password_env_value_is_never_shown)
{
    setenv("RL_TEST_PASSWORD", "from-env-s3cret", 1);
    char err[REDLOCK_ERRBUF_SIZE];
    redlock_config *cfg = NULL;
    static const char text[] = "nodes:\n"
                               "  - host: a\n"
                               "    password_env: RL_TEST_PASSWORD\n"
                               "  - host: a\n";
    cr_assert_eq(redlock_config_load_string(&cfg, text, strlen(text), NULL, err, sizeof(err)),
                 REDLOCK_ECONFIG);
    cr_assert_str_eq(err, "<string>:4:5: nodes[1]: duplicate node a:6379 (first at line 2)");
    cr_assert_null(strstr(err, "s3cret"));
}

/* ------------------------------------------------------------------------ */
/* Whole-document problems                                                   */

Test(config_yaml, inconsistent_settings_point_at_a_key)
{
    expect_error(ONE_NODE "reconnect_min_ms: 6000\n",
                 "c.yaml:4:1: reconnect_min_ms is greater than reconnect_max_ms");
    expect_error(ONE_NODE "ttl_ms: 5\nreconnect_max_ms: 50\n",
                 "c.yaml:5:1: reconnect_min_ms is greater than reconnect_max_ms");
    expect_error("reconnect_max_ms: 50\nreconnect_min_ms: 60\n" ONE_NODE,
                 "c.yaml:2:1: reconnect_min_ms is greater than reconnect_max_ms");
}

/* A config no lock could be valid with is refused at the key to blame:
 * the timeout (or drift_factor) when the file sets it, else ttl_ms. */
Test(config_yaml, timeouts_not_below_the_ttl_are_refused_at_the_key)
{
    expect_error("ttl_ms: 100\ncommand_timeout_ms: 100000\n" ONE_NODE,
                 "c.yaml:2:1: command_timeout_ms (100000) must be less than ttl_ms (100), or a "
                 "lock can expire before its masters answer");
    expect_error("connect_timeout_ms: 20\n" ONE_NODE "ttl_ms: 50\n",
                 "c.yaml:5:1: command_timeout_ms (50) must be less than ttl_ms (50), or a "
                 "lock can expire before its masters answer");
    expect_error(ONE_NODE "ttl_ms: 500\n",
                 "c.yaml:4:1: connect_timeout_ms (500) must be less than ttl_ms (500), or a "
                 "lock can expire before its masters connect");
    expect_error("ttl_ms: 1000\nconnect_timeout_ms: 1000\n" ONE_NODE,
                 "c.yaml:2:1: connect_timeout_ms (1000) must be less than ttl_ms (1000), or a "
                 "lock can expire before its masters connect");
}

Test(config_yaml, a_nodes_own_timeouts_not_below_the_ttl_are_refused_at_the_node)
{
    expect_error("ttl_ms: 1000\n"
                 "nodes:\n"
                 "  - host: a\n"
                 "    command_timeout_ms: 999\n"
                 "  - host: b\n"
                 "    connect_timeout_ms: 300\n"
                 "    command_timeout_ms: 1000\n",
                 "c.yaml:7:5: nodes[1].command_timeout_ms (1000) must be less than ttl_ms "
                 "(1000), or a lock can expire before its masters answer");
    expect_error("nodes:\n"
                 "  - {host: a, connect_timeout_ms: 20000}\n",
                 "c.yaml:2:15: nodes[0].connect_timeout_ms (20000) must be less than ttl_ms "
                 "(10000), or a lock can expire before its masters connect");
}

Test(config_yaml, a_drift_allowance_eating_the_ttl_is_refused)
{
    expect_error("connect_timeout_ms: 1\ncommand_timeout_ms: 1\nttl_ms: 4\n"
                 "drift_factor: 0.5\n" ONE_NODE,
                 "c.yaml:4:1: drift_factor (0.5) leaves no validity with ttl_ms (4): ttl_ms * "
                 "drift_factor + 2 ms (4 ms) must be less than ttl_ms");
    expect_error("connect_timeout_ms: 1\ncommand_timeout_ms: 1\nttl_ms: 2\n" ONE_NODE,
                 "c.yaml:3:1: drift_factor (0.01) leaves no validity with ttl_ms (2): ttl_ms * "
                 "drift_factor + 2 ms (2.02 ms) must be less than ttl_ms");
    redlock_config_free(load_ok("connect_timeout_ms: 1\ncommand_timeout_ms: 1\nttl_ms: 5\n"
                                "drift_factor: 0.5\n" ONE_NODE));
}

Test(config_yaml, anchors_and_aliases_are_rejected)
{
    expect_error("ttl_ms: &t 5\n" ONE_NODE, "c.yaml:1:9: anchors and aliases are not supported");
    expect_error("nodes: *n\n", "c.yaml:1:8: anchors and aliases are not supported");
    expect_error("nodes:\n  - &a {host: a}\n", "c.yaml:2:5: anchors and aliases are not supported");
}

Test(config_yaml, one_document_only)
{
    expect_error(ONE_NODE "---\n" ONE_NODE, "c.yaml:4:1: only one YAML document is allowed");
    expect_error("--- \n" ONE_NODE "...\n--- {}\n",
                 "c.yaml:6:1: only one YAML document is allowed");
}

Test(config_yaml, deep_nesting_is_refused_early)
{
    size_t depth = 100000;
    char *text = malloc(depth * 2 + 16);
    size_t used = (size_t)sprintf(text, "nodes: ");
    memset(text + used, '[', depth);
    memset(text + used + depth, ']', depth);
    used += 2 * depth;
    expect_error_len(text, used, REDLOCK_ECONFIG,
                     "c.yaml:1:39: nested too deeply (more than 32 levels)");
    free(text);
}

Test(config_yaml, invalid_yaml_reports_libyaml_problem)
{
    expect_error("nodes: [\n",
                 "c.yaml:2:1: did not find expected node content (while parsing a flow node at "
                 "line 2, column 1)");
    expect_error("a: b: c\n", "c.yaml:1:5: mapping values are not allowed in this context");
    expect_error("nodes:\n\t- a\n",
                 "c.yaml:2:1: found character that cannot start any token (while scanning for "
                 "the next token at line 2, column 1)");
    expect_error("nodes:\n  - host: 'a\n",
                 "c.yaml:3:1: found unexpected end of stream (while scanning a quoted scalar at "
                 "line 2, column 11)");
}

Test(config_yaml, invalid_bytes_report_their_position)
{
    expect_error("ttl_ms: 5\nnodes: \xff\n", "c.yaml:2:8: invalid leading UTF-8 octet (#FF)");
    /* Cut short, overlong, a lone continuation byte, a surrogate. */
    expect_error("nodes:\n  - host: \"caf\xc3\"\n",
                 "c.yaml:2:16: invalid trailing UTF-8 octet (#22)");
    expect_error("nodes:\n  - host: \xc0\xaf\n", "c.yaml:2:11: invalid length of a UTF-8 sequence");
    expect_error("nodes:\n  - host: a\x80" "b\n", "c.yaml:2:12: invalid leading UTF-8 octet (#80)");
    expect_error("nodes:\n  - host: \"\xed\xa0\x80\"\n",
                 "c.yaml:2:12: invalid Unicode character (#D800)");
    expect_error_len("ttl_ms: 5\n\x01", 11, REDLOCK_ECONFIG,
                     "c.yaml:2:1: control characters are not allowed (#1)");
    expect_error_len("ttl_ms: 5\0\n", 11, REDLOCK_ECONFIG,
                     "c.yaml:1:10: control characters are not allowed (#0)");
}

Test(config_yaml, echoed_values_are_escaped_and_truncated)
{
    expect_error("ttl_ms: \"a\\tb\\x01\\u00e9\\\"\\\\\"\n",
                 "c.yaml:1:9: ttl_ms: expected an integer from 1 to 2147483647, "
                 "got \"a\\tb\\x01\\xc3\\xa9\\\"\\\\\"");
    /* A huge value: one short line. */
    size_t len = 10U << 20;
    char *text = malloc(len + 16);
    size_t used = (size_t)sprintf(text, "ttl_ms: ");
    memset(text + used, '7', len);
    used += len;
    expect_error_len(text, used, REDLOCK_ECONFIG,
                     "c.yaml:1:9: ttl_ms: expected an integer from 1 to 2147483647, "
                     "got \"7777777777777777777777777777777777777777...\"");
    free(text);
}

/* ------------------------------------------------------------------------ */
/* Arguments, buffers and files                                              */

Test(config_yaml, null_arguments)
{
    char err[REDLOCK_ERRBUF_SIZE];
    redlock_config *cfg = (redlock_config *)err;
    cr_assert_eq(redlock_config_load_string(NULL, "", 0, NULL, err, sizeof(err)),
                 REDLOCK_EINVAL);
    cr_assert_str_eq(err, "<string>: invalid argument: out is NULL");
    cr_assert_eq(redlock_config_load_string(&cfg, NULL, 0, "x.yaml", err, sizeof(err)),
                 REDLOCK_EINVAL);
    cr_assert_null(cfg);
    cr_assert_str_eq(err, "x.yaml: invalid argument: text is NULL");

    cfg = (redlock_config *)err;
    cr_assert_eq(redlock_config_load_file(&cfg, NULL, err, sizeof(err)), REDLOCK_EINVAL);
    cr_assert_null(cfg);
    cr_assert_eq(redlock_config_load_file(NULL, "c.yaml", NULL, 0), REDLOCK_EINVAL);
}

Test(config_yaml, errbuf_may_be_null_or_small)
{
    redlock_config *cfg = NULL;
    static const char text[] = "ttl_ms: abc\n";
    cr_assert_eq(redlock_config_load_string(&cfg, text, strlen(text), "c.yaml", NULL, 100),
                 REDLOCK_ECONFIG);
    char err[10] = "xxxxxxxxx";
    cr_assert_eq(redlock_config_load_string(&cfg, text, strlen(text), "c.yaml", err, 0),
                 REDLOCK_ECONFIG);
    cr_assert_str_eq(err, "xxxxxxxxx", "errlen 0: not written");
    cr_assert_eq(redlock_config_load_string(&cfg, text, strlen(text), "c.yaml", err, sizeof(err)),
                 REDLOCK_ECONFIG);
    cr_assert_str_eq(err, "c.yaml:1:");
    cr_assert_null(cfg);
}

Test(config_yaml, only_len_bytes_are_read)
{
    static const char text[] = ONE_NODE "ttl_ms: garbage\n";
    redlock_config *cfg = NULL;
    char err[REDLOCK_ERRBUF_SIZE];
    cr_assert_eq(redlock_config_load_string(&cfg, text, strlen(ONE_NODE), "c.yaml", err,
                                            sizeof(err)),
                 REDLOCK_OK, "%s", err);
    redlock_config_free(cfg);
}

Test(config_yaml, string_larger_than_16_mib_is_refused)
{
    size_t len = (16U << 20) + 1;
    char *text = calloc(1, len);
    expect_error_len(text, len, REDLOCK_ECONFIG,
                     "c.yaml: too large: 16777217 bytes (the limit is 16 MiB)");
    free(text);
}

Test(config_yaml, file_larger_than_16_mib_is_refused)
{
    char *path = write_temp_file(ONE_NODE);
    cr_assert_eq(truncate(path, (16 << 20) + 1), 0);
    char err[REDLOCK_ERRBUF_SIZE];
    char expected[REDLOCK_ERRBUF_SIZE];
    redlock_config *cfg = NULL;
    cr_assert_eq(redlock_config_load_file(&cfg, path, err, sizeof(err)), REDLOCK_ECONFIG);
    snprintf(expected, sizeof(expected), "%s: too large: 16777217 bytes (the limit is 16 MiB)",
             path);
    cr_assert_str_eq(err, expected);
    cr_assert_null(cfg);
    unlink(path);
    free(path);
}

Test(config_yaml, missing_file)
{
    char err[REDLOCK_ERRBUF_SIZE];
    redlock_config *cfg = NULL;
    cr_assert_eq(redlock_config_load_file(&cfg, "/nonexistent/c.yaml", err, sizeof(err)),
                 REDLOCK_ECONFIG);
    cr_assert_str_eq(err, "/nonexistent/c.yaml: cannot open: No such file or directory");
    cr_assert_null(cfg);
}

Test(config_yaml, directory_is_not_a_config)
{
    char err[REDLOCK_ERRBUF_SIZE];
    redlock_config *cfg = NULL;
    cr_assert_eq(redlock_config_load_file(&cfg, "/", err, sizeof(err)), REDLOCK_ECONFIG);
    cr_assert_str_eq(err, "/: cannot read: Is a directory");
}

Test(config_yaml, file_errors_name_the_path)
{
    char *path = write_temp_file(ONE_NODE "  - host: 127.0.0.1\n    port: 7001\n");
    char err[REDLOCK_ERRBUF_SIZE];
    char expected[REDLOCK_ERRBUF_SIZE];
    redlock_config *cfg = NULL;
    cr_assert_eq(redlock_config_load_file(&cfg, path, err, sizeof(err)), REDLOCK_ECONFIG);
    snprintf(expected, sizeof(expected),
             "%s:4:5: nodes[1]: duplicate node 127.0.0.1:7001 (first at line 2)", path);
    cr_assert_str_eq(err, expected);
    unlink(path);
    free(path);
}

Test(config_yaml, empty_file)
{
    char *path = write_temp_file("");
    char err[REDLOCK_ERRBUF_SIZE];
    char expected[REDLOCK_ERRBUF_SIZE];
    redlock_config *cfg = NULL;
    cr_assert_eq(redlock_config_load_file(&cfg, path, err, sizeof(err)), REDLOCK_ECONFIG);
    snprintf(expected, sizeof(expected), "%s:1:1: nodes: at least one node is required", path);
    cr_assert_str_eq(err, expected);
    unlink(path);
    free(path);
}

/* A file indented with tabs, as some editors leave it: YAML allows no tab
 * in indentation, and the message names the first one. */
Test(config_yaml, tab_indented_file)
{
    char *path = write_temp_file("ttl_ms: 5000\n"
                                 "nodes:\n"
                                 "\t- host: 127.0.0.1\n"
                                 "\t  port: 7001\n");
    char err[REDLOCK_ERRBUF_SIZE];
    char expected[REDLOCK_ERRBUF_SIZE];
    redlock_config *cfg = NULL;
    cr_assert_eq(redlock_config_load_file(&cfg, path, err, sizeof(err)), REDLOCK_ECONFIG);
    snprintf(expected, sizeof(expected),
             "%s:3:1: found character that cannot start any token (while scanning for the "
             "next token at line 3, column 1)",
             path);
    cr_assert_str_eq(err, expected);
    cr_assert_null(cfg);
    unlink(path);
    free(path);
    /* A tab after the indentation's spaces. */
    expect_error("nodes:\n  - host: a\n  \tport: 1\n",
                 "c.yaml:3:3: found a tab character that violates indentation (while scanning "
                 "a plain scalar at line 2, column 11)");
}

/* Writes a config of ten MiB: comment lines, then tail. Returns its path
 * (free it) and the number of lines before tail in *lines. */
static char *write_ten_mib_file(const char *tail, size_t *lines)
{
    static const char comment[] = "# padding, as a generated file might carry ............"
                                  "........................\n"; /* 80 bytes */
    size_t count = (10U << 20) / (sizeof(comment) - 1);
    size_t tail_len = strlen(tail);
    char *text = malloc(count * (sizeof(comment) - 1) + tail_len + 1);
    cr_assert_not_null(text);
    for (size_t i = 0; i < count; i++)
        memcpy(text + i * (sizeof(comment) - 1), comment, sizeof(comment) - 1);
    memcpy(text + count * (sizeof(comment) - 1), tail, tail_len + 1);
    char *path = write_temp_file(text);
    free(text);
    *lines = count;
    return path;
}

/* Under the 16 MiB limit a file is read whole, however padded, and
 * positions stay right to the end. */
Test(config_yaml, a_ten_mib_file_loads_and_reports_positions_at_its_end)
{
    size_t lines = 0;
    char *path = write_ten_mib_file("ttl_ms: 4321\n" ONE_NODE, &lines);
    char err[REDLOCK_ERRBUF_SIZE];
    redlock_config *cfg = NULL;
    cr_assert_eq(redlock_config_load_file(&cfg, path, err, sizeof(err)), REDLOCK_OK, "%s", err);
    cr_assert_eq(setting(cfg, REDLOCK_TTL_MS), 4321);
    cr_assert_str_eq(redlock_config_node_name(cfg, 0), "127.0.0.1:7001");
    redlock_config_free(cfg);
    unlink(path);
    free(path);

    path = write_ten_mib_file(ONE_NODE "ttl_ms: abc\n", &lines);
    char expected[REDLOCK_ERRBUF_SIZE];
    cr_assert_eq(redlock_config_load_file(&cfg, path, err, sizeof(err)), REDLOCK_ECONFIG);
    snprintf(expected, sizeof(expected),
             "%s:%zu:9: ttl_ms: expected an integer from 1 to 2147483647, got \"abc\"", path,
             lines + 4);
    cr_assert_str_eq(err, expected);
    cr_assert_null(cfg);
    unlink(path);
    free(path);
}

/* ------------------------------------------------------------------------ */
/* Masters as URLs                                                           */

Test(config_yaml, url_forms)
{
    setenv("RL_TEST_PASSWORD", "from-env", 1);
    redlock_config *cfg = load_ok("nodes:\n"
                                  "  - url: redis://127.0.0.1:7001\n"
                                  "  - url: 'redis://locker:s%40cret@10.0.0.2:7002/3'\n"
                                  "    connect_timeout_ms: 11\n"
                                  "    command_timeout_ms: 12\n"
                                  "  - url: unix:///tmp/r.sock?db=2\n"
                                  "  - url: redis://[::1]\n"
                                  "    username: bob\n"
                                  "    password_env: RL_TEST_PASSWORD\n"
                                  "    db: 4\n"
                                  "  - url: redis://alice@h:7004\n"
                                  "    password: pw\n"
                                  "  - url: redis://:own@h:7005\n"
                                  "    username: carol\n"
                                  "  - {url: 'unix://:pw@/tmp/s2', db: 5}\n");
    cr_assert_eq(redlock_config_node_count(cfg), 7);
    static const struct {
        const char *name, *user, *password;
        int db;
    } want[] = {
        {"127.0.0.1:7001", NULL, NULL, 0}, {"10.0.0.2:7002", "locker", "s@cret", 3},
        {"unix:/tmp/r.sock", NULL, NULL, 2}, {"[::1]:6379", "bob", "from-env", 4},
        {"h:7004", "alice", "pw", 0},      {"h:7005", "carol", "own", 0},
        {"unix:/tmp/s2", NULL, "pw", 5},
    };
    for (size_t i = 0; i < 7; i++) {
        const rl_node *n = &cfg->nodes[i];
        cr_assert_str_eq(n->name, want[i].name);
        if (want[i].user)
            cr_assert_str_eq(n->username, want[i].user, "%s", n->name);
        else
            cr_assert_null(n->username, "%s", n->name);
        if (want[i].password)
            cr_assert_str_eq(n->password, want[i].password, "%s", n->name);
        else
            cr_assert_null(n->password, "%s", n->name);
        cr_assert_eq(n->db, want[i].db, "%s", n->name);
    }
    cr_assert_eq(cfg->nodes[1].connect_timeout_ms, 11);
    cr_assert_eq(cfg->nodes[1].command_timeout_ms, 12);
    redlock_config_free(cfg);
}

Test(config_yaml, url_takes_the_place_of_host_port_and_socket)
{
    expect_error("nodes:\n  - url: redis://a\n    host: a\n",
                 "c.yaml:3:5: nodes[0].host: url and host are mutually exclusive");
    expect_error("nodes:\n  - host: a\n    url: redis://a\n",
                 "c.yaml:3:5: nodes[0].url: url and host are mutually exclusive");
    expect_error("nodes:\n  - url: redis://a\n    port: 1\n",
                 "c.yaml:3:5: nodes[0].port: url and port are mutually exclusive");
    expect_error("nodes:\n  - port: 1\n    url: redis://a\n",
                 "c.yaml:3:5: nodes[0].url: url and port are mutually exclusive");
    expect_error("nodes:\n  - url: unix:///s\n    socket: /s\n",
                 "c.yaml:3:5: nodes[0].socket: url and socket are mutually exclusive");
    expect_error("nodes:\n  - port: 7001\n", "c.yaml:2:5: nodes[0]: url, host or socket is required");
    expect_error("nodes:\n  - url: ~\n", "c.yaml:2:5: nodes[0]: url, host or socket is required");
    expect_error("nodes:\n  - url: ''\n", "c.yaml:2:10: nodes[0].url: expected a non-empty string");
}

/* Each conflict between what the url gives and a key: at the key, never
 * showing the url's password. */
Test(config_yaml, url_conflicts_name_the_key)
{
    setenv("RL_TEST_PASSWORD", "from-env", 1);
    static const struct {
        const char *text, *message;
    } cases[] = {
        {"nodes:\n  - url: redis://:urlSecret@a\n    password: other\n",
         "c.yaml:3:5: nodes[0].password: the url gives a password already"},
        {"nodes:\n  - password: other\n    url: redis://u:urlSecret@a\n",
         "c.yaml:2:5: nodes[0].password: the url gives a password already"},
        {"nodes:\n  - url: redis://:urlSecret@a\n    password_env: RL_TEST_PASSWORD\n",
         "c.yaml:3:5: nodes[0].password_env: the url gives a password already"},
        {"nodes:\n  - url: unix://:urlSecret@/s\n    password_env: RL_TEST_PASSWORD\n",
         "c.yaml:3:5: nodes[0].password_env: the url gives a password already"},
        {"nodes:\n  - url: redis://:urlSecret@a/2\n    db: 2\n",
         "c.yaml:3:5: nodes[0].db: the url gives a db already"},
        {"nodes:\n  - url: redis://:urlSecret@a/0\n    db: 0\n",
         "c.yaml:3:5: nodes[0].db: the url gives a db already"},
        {"nodes:\n  - url: unix://:urlSecret@/s?db=1\n    db: 1\n",
         "c.yaml:3:5: nodes[0].db: the url gives a db already"},
        {"nodes:\n  - url: redis://u:urlSecret@a\n    username: v\n",
         "c.yaml:3:5: nodes[0].username: the url gives a user already"},
        {"nodes:\n  - url: redis://urlSecret@a\n",
         "c.yaml:2:10: nodes[0].url: its user needs a password (in the url, password, "
         "password_env or password_file)"},
        {"nodes:\n  - url: redis://a\n    username: u\n",
         "c.yaml:3:5: nodes[0].username: needs password, password_env or password_file"},
        {"nodes:\n  - url: redis://:urlSecret@a:7001\n  - host: a\n    port: 7001\n",
         "c.yaml:3:5: nodes[1]: duplicate node a:7001 (first at line 2)"},
        {"nodes:\n  - host: a\n  - url: redis://:urlSecret@A:6379/1\n",
         "c.yaml:3:5: nodes[1]: duplicate node a:6379 (first at line 2)"},
        {"nodes:\n  - socket: /s\n  - url: unix://:urlSecret@/s\n",
         "c.yaml:3:5: nodes[1]: duplicate node unix:/s (first at line 2)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        expect_error(cases[i].text, cases[i].message);
}

Test(config_yaml, a_bad_url_is_explained_without_being_shown)
{
    static const struct {
        const char *url, *problem;
    } cases[] = {
        {"http://u:urlSecret@a", "expected redis://, rediss:// or unix://"},
        {"127.0.0.1:6379", "expected redis://, rediss:// or unix://"},
        {"redis://u:urlSecret@", "expected a host: a name, an IPv4 address or [IPV6]"},
        {"redis://u:urlSecret@a:0", "expected a port from 1 to 65535"},
        {"redis://u:urlSecret@a:x", "expected a port from 1 to 65535"},
        {"redis://u:urlSecret@a/1000001", "expected a db from 0 to 1000000"},
        {"unix://u:urlSecret@/s?db=x", "expected a db from 0 to 1000000"},
        {"redis://u:urlSecret%zz@a", "a bad %-escape (expected % and two hex digits, not %00)"},
        {"redis://u:urlSecret%00@a",
         "a bad %-escape (expected % and two hex digits, not %00)"},
        {"redis://u:url Secret@a",
         "a space or control character in the user or password (write it %-escaped)"},
        {"redis://u:urlSecret@a?db=1", "a query or fragment (only unix:// takes one: ?db=N)"},
        {"unix://u:urlSecret@/s?x=1", "a query or fragment (only unix:// takes one: ?db=N)"},
        {"unix://u:urlSecret@s", "expected an absolute socket path: unix:///PATH"},
        {"unix://u:urlSecret@/with%20space",
         "invalid socket path (no spaces or control characters, and not too long)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[256];
        snprintf(text, sizeof(text), "nodes:\n  - url: '%s'\n", cases[i].url);
        char message[256];
        snprintf(message, sizeof(message), "c.yaml:2:10: nodes[0].url: %s", cases[i].problem);
        expect_error(text, message);
    }
}

/* Every failure above, and credentials too long: the url's secret is in no
 * message, whatever the problem. */
Test(config_yaml, url_passwords_are_never_in_messages)
{
    size_t len = 5000;
    char *text = malloc(len + 64);
    cr_assert_not_null(text);
    size_t used = (size_t)sprintf(text, "nodes:\n  - url: redis://:urlSecret");
    memset(text + used, 's', len);
    memcpy(text + used + len, "@a\n", 4);
    expect_error(text, "c.yaml:2:10: nodes[0].url: the password is too long");
    used = (size_t)sprintf(text, "nodes:\n  - url: redis://urlSecret");
    memset(text + used, 'u', len);
    memcpy(text + used + len, ":pw@a\n", 7);
    expect_error(text, "c.yaml:2:10: nodes[0].url: the username is too long");
    free(text);

    char err[REDLOCK_ERRBUF_SIZE];
    static const char *const texts[] = {
        "nodes:\n  - url: redis://:urlSecret@a\n    bogus: 1\n",
        "nodes:\n  - url: [redis://:urlSecret@a]\n",
        "nodes:\n  - url: redis://:urlSecret@a\n    host: a\n",
        "nodes:\n  - url: redis://:urlSecret@a\n    url: redis://:urlSecret@b\n",
        "nodes:\n  - url: redis://:urlSecret@a\n  - url: redis://:urlSecret@a\n",
        "ttl_ms: 10\nnodes:\n  - url: redis://:urlSecret@a\n    command_timeout_ms: 10\n",
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        redlock_config *cfg = NULL;
        cr_assert_eq(redlock_config_load_string(&cfg, texts[i], strlen(texts[i]), "c.yaml", err,
                                                sizeof(err)),
                     REDLOCK_ECONFIG, "%s", texts[i]);
        cr_assert_null(strstr(err, "urlSecret"), "%s", err);
    }
}

/* Every `_ms` setting also as a duration, as the tool's TIME: a bare number
 * is seconds; the `_ms` keys still read milliseconds. */
Test(config_yaml, durations_beside_the_ms_keys)
{
    redlock_config *cfg = load_ok("ttl: 30s\n"
                                  "retry_delay: 250ms\n"
                                  "max_hold: 1h 30min\n"
                                  "connect_timeout: 1.5\n"
                                  "command_timeout: 2\n"
                                  "lock_delay: 0\n"
                                  "retry_jitter_ms: 7\n" ONE_NODE);
    cr_assert_eq(setting(cfg, REDLOCK_TTL_MS), 30000);
    cr_assert_eq(setting(cfg, REDLOCK_RETRY_DELAY_MS), 250);
    cr_assert_eq(setting(cfg, REDLOCK_MAX_HOLD_MS), 5400000);
    cr_assert_eq(setting(cfg, REDLOCK_CONNECT_TIMEOUT_MS), 1500);
    cr_assert_eq(setting(cfg, REDLOCK_COMMAND_TIMEOUT_MS), 2000);
    cr_assert_eq(setting(cfg, REDLOCK_LOCK_DELAY_MS), 0);
    cr_assert_eq(setting(cfg, REDLOCK_RETRY_JITTER_MS), 7, "an _ms key is milliseconds");
    redlock_config_free(cfg);
}

Test(config_yaml, bad_durations)
{
    expect_error("ttl: 30 seconds\n" ONE_NODE,
                 "c.yaml:1:6: ttl: expected a duration (30s, 1m30s, 250ms; a bare number is "
                 "seconds) from 1 ms to 2147483647 ms, got \"30 seconds\"");
    expect_error("retry_delay: 500us\n" ONE_NODE,
                 "c.yaml:1:14: retry_delay: below 1 ms, the finest duration it takes, got "
                 "\"500us\"");
    expect_error("ttl: [1]\n" ONE_NODE,
                 "c.yaml:1:6: ttl: expected a duration (30s, 1m30s, 250ms; a bare number is "
                 "seconds) from 1 ms to 2147483647 ms, got a sequence");
    /* No duration form for a key without _ms. */
    expect_error("retry: 3\n" ONE_NODE,
                 "c.yaml:1:1: retry: unknown key (expected connect_timeout_ms, command_timeout_ms, "
                 "ttl_ms, retry_count, retry_delay_ms, retry_jitter_ms, reconnect_min_ms, "
                 "reconnect_max_ms, wait_by_notification, max_hold_ms, lock_delay_ms, "
                 "fencing, max_in_flight, clock_check, clock_warmup_ms, clock_probe_ms, "
                 "clock_quarantine_ms, max_ttl_ms, durable, script_free, drift_factor, nodes, password_file, "
                 "tls, tls_ca_file, tls_ca_dir, tls_cert_file, tls_key_file, tls_server_name; "
                 "or a `_ms` key without `_ms`, as a duration)");
}

/* Both forms of one setting: refused at the second, naming both lines. */
Test(config_yaml, a_setting_given_both_ways)
{
    expect_error("ttl_ms: 30000\n" ONE_NODE "ttl: 30s\n",
                 "c.yaml:5:1: ttl (line 5) and ttl_ms (line 1) set the same setting: give one");
    expect_error("max_hold: 1m\nmax_hold_ms: 60000\n" ONE_NODE,
                 "c.yaml:2:1: max_hold (line 1) and max_hold_ms (line 2) set the same setting: "
                 "give one");
}

/* ------------------------------------------------------------------------ */
/* A password others may read                                                */

static char warned[1024];

static void capture_warning(int level, const char *message, void *arg)
{
    (void)arg;
    size_t used = strlen(warned);
    snprintf(warned + used, sizeof(warned) - used, "%d %s\n", level, message);
}

/* Loads text from a file of that mode; returns what
 * redlock_config_password_exposed() says (a copy, or NULL) and what a
 * client started with it would warn, in warned. */
static char *exposed_with_mode(const char *text, mode_t mode, char **path_out)
{
    char *path = write_temp_file(text);
    cr_assert_eq(chmod(path, mode), 0);
    char err[REDLOCK_ERRBUF_SIZE];
    redlock_config *cfg = NULL;
    cr_assert_eq(redlock_config_load_file(&cfg, path, err, sizeof(err)), REDLOCK_OK, "%s", err);
    const char *exposed = redlock_config_password_exposed(cfg);
    char *copy = exposed != NULL ? strdup(exposed) : NULL;
    warned[0] = '\0';
    rl_logger log = {capture_warning, NULL, REDLOCK_LOG_DEBUG};
    rl_config_warn(cfg, &log);
    redlock_config *dup = NULL;
    cr_assert_eq(redlock_config_copy(cfg, &dup), REDLOCK_OK);
    if (copy != NULL)
        cr_assert_str_eq(redlock_config_password_exposed(dup), copy, "the copy keeps it");
    redlock_config_free(dup);
    redlock_config_free(cfg);
    *path_out = path;
    return copy;
}

Test(config_yaml, a_password_readable_by_others_is_warned_about)
{
    char *path = NULL;
    char *exposed = exposed_with_mode(ONE_NODE "    password: hunter2\n", 0644, &path);
    cr_assert_not_null(exposed);
    cr_assert_str_eq(exposed, path);
    char line[512];
    snprintf(line, sizeof(line),
             "%d %s holds a password and is readable by others (chmod o-r %s)\n",
             REDLOCK_LOG_WARN, path, path);
    cr_assert_str_eq(warned, line);
    cr_assert_null(strstr(warned, "hunter2"));
    unlink(path);
    free(path);
    free(exposed);

    /* A url with a password is inline too. */
    exposed = exposed_with_mode("nodes:\n  - url: redis://:hunter2@a\n", 0604, &path);
    cr_assert_str_eq(exposed, path);
    unlink(path);
    free(path);
    free(exposed);
}

Test(config_yaml, no_warning_without_a_password_others_may_read)
{
    static const struct {
        const char *text;
        mode_t mode;
    } cases[] = {
        {ONE_NODE "    password: hunter2\n", 0600},
        {ONE_NODE "    password: hunter2\n", 0640}, /* a service's group */
        {ONE_NODE, 0644},
        {ONE_NODE "    password_env: RL_TEST_PASSWORD\n", 0644},
    };
    setenv("RL_TEST_PASSWORD", "from-env", 1);
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        char *path = NULL;
        char *exposed = exposed_with_mode(cases[k].text, cases[k].mode, &path);
        cr_assert_null(exposed, "case %zu", k);
        cr_assert_str_eq(warned, "", "case %zu", k);
        unlink(path);
        free(path);
    }
    /* password_file: the config holds no password, whoever may read it. */
    char *secret = write_temp_file("hunter2\n");
    char text[512];
    snprintf(text, sizeof(text), ONE_NODE "    password_file: %s\n", secret);
    char *path = NULL;
    char *exposed = exposed_with_mode(text, 0644, &path);
    cr_assert_null(exposed);
    cr_assert_str_eq(warned, "");
    unlink(path);
    unlink(secret);
    free(path);
    free(secret);
}
