/* SPDX-License-Identifier: BSD-3-Clause */
/* redlock check: each setting that makes Redlock unsafe on a master is
 * found, worded with what to change, and the exit status says whether a
 * quorum of masters is safe. Three masters on AOF with appendfsync
 * always, as the config's durable declaration says; one suite with a fast
 * clock. Cluster mode: test/integration/test_health.c (the fixture puts
 * fencing counters in use, which a node in cluster mode without slots
 * refuses). */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T CLI_RUN_TIMEOUT_MS
#define CHECK() cli_run(CLI_ARGS("--config", cli.config, "check"), NULL, T)
#define CHECK_JSON() cli_run(CLI_ARGS("--config", cli.config, "check", "--json"), NULL, T)

static void three_durable(void)
{
    fleet_options o = {.appendonly = 1};
    cli_setup(3, &o);
}

TestSuite(cli_check, .init = three_durable, .fini = cli_teardown, .timeout = 60);

/* The text of master i's lines: its own, and its findings after it. */
static const char *lines_of(const char *out, size_t i)
{
    const char *name = cli_format("127.0.0.1:%d  ", fleet_port(cli.fleet, i));
    const char *at = strstr(out, name);
    cr_assert_not_null(at, "no line for master %zu in:\n%s", i, out);
    const char *end = at + strlen(name);
    while ((end = strchr(end, '\n')) != NULL && strncmp(end + 1, "  ", 2) == 0)
        end++;
    size_t len = end != NULL ? (size_t)(end - at) : strlen(at);
    return cli_format("%.*s", (int)len, at);
}

static void expect_in(const char *text, const char *part)
{
    cr_expect(strstr(text, part) != NULL, "\"%s\" not in:\n%s", part, text);
}

static void config_set(size_t i, const char *name, const char *value)
{
    redisReply *r = fleet_command(cli.fleet, i, "CONFIG SET %s %s", name, value);
    cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS, "CONFIG SET %s %s on %zu", name, value,
              i);
    freeReplyObject(r);
}

/* command: ACL SETUSER default RULES..., each rule an argument. */
static void acl(size_t i, const char *command)
{
    redisReply *r = fleet_command(cli.fleet, i, command);
    cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS, "%s on %zu: %s", command, i,
              r != NULL && r->str != NULL ? r->str : "no reply");
    freeReplyObject(r);
}

Test(cli_check, healthy_masters_exit_0_with_clock_and_persistence)
{
    const cli_result *r = CHECK();
    cli_expect_exit(r, 0);
    for (size_t i = 0; i < 3; i++) {
        const char *l = lines_of(r->out, i);
        expect_in(l, "  ok  ");
        expect_in(l, "clock ok");
        expect_in(l, "persistence aof (appendfsync always)");
        cr_expect(strstr(l, "unsafe") == NULL && strstr(l, "warning") == NULL, "%s", l);
    }
    cr_expect_str_eq(r->err, "");
}

Test(cli_check, an_evicting_master_is_unsafe_and_says_to_set_noeviction)
{
    config_set(1, "maxmemory-policy", "allkeys-lru");
    const cli_result *r = CHECK();
    cli_expect_exit(r, 1); /* two of three safe: a quorum */
    const char *l = lines_of(r->out, 1);
    expect_in(l, "  unsafe  ");
    expect_in(l, "unsafe: maxmemory-policy is allkeys-lru: Redis may evict lock keys, so two "
                 "clients can hold the lock; set maxmemory-policy noeviction");
    expect_in(lines_of(r->out, 0), "  ok  ");
    expect_in(r->err, "2 of 3 masters safe");

    r = CHECK_JSON();
    cli_expect_exit(r, 1);
    json_error_t e;
    json_t *doc = json_loads(r->out, 0, &e);
    cr_assert_not_null(doc, "%s: %s", e.text, r->out);
    json_t *m = json_array_get(json_object_get(doc, "masters"), 1);
    cr_expect_str_eq(json_string_value(json_object_get(m, "state")), "unsafe");
    cr_expect_str_eq(json_string_value(json_object_get(m, "maxmemory_policy")), "allkeys-lru");
    json_t *f = json_array_get(json_object_get(m, "findings"), 0);
    cr_expect_str_eq(json_string_value(json_object_get(f, "code")), "maxmemory-policy");
    cr_expect_str_eq(json_string_value(json_object_get(f, "severity")), "unsafe");
    cr_expect_eq(json_integer_value(json_object_get(doc, "safe")), 2);
    json_decref(doc);
}

Test(cli_check, fewer_safe_masters_than_a_quorum_exit_69)
{
    config_set(0, "maxmemory-policy", "volatile-lru");
    config_set(2, "maxmemory-policy", "allkeys-random");
    const cli_result *r = CHECK();
    cli_expect_exit(r, 69);
    expect_in(lines_of(r->out, 0), "maxmemory-policy is volatile-lru");
    expect_in(lines_of(r->out, 2), "maxmemory-policy is allkeys-random");
    expect_in(r->err, "1 of 3 masters safe, 2 needed");
}

/* One master changed by a command to one fleet master (CONFIG SET, ACL
 * SETUSER, or a replica of master 0), and what check says of it: exit 1
 * (the other two safe, a quorum), its state, and lines in its text. */
typedef struct finding_case {
    size_t master;
    const char *config_name; /* CONFIG SET config_name config_value */
    const char *config_value;
    const char *acl;      /* ACL SETUSER ... */
    bool replica;         /* a replica of master 0 */
    const char *state;    /* "  unsafe  ", "  warning  " or NULL */
    const char *expected[6];
} finding_case;

enum {
    FINDING_APPENDFSYNC,
    FINDING_REPLICA,
    FINDING_SCRIPTS_REFUSED,
    FINDING_PROBE_KEYS_REFUSED,
    FINDING_CONFIG_REFUSED,
};

static const finding_case finding_cases[] = {
    [FINDING_APPENDFSYNC] = {.master = 2,
                             .config_name = "appendfsync",
                             .config_value = "everysec",
                             .expected = {"persistence aof (appendfsync everysec)",
                                          "unsafe: declared durable, but appendfsync is everysec",
                                          "set appendfsync always, or drop durable"}},
    [FINDING_REPLICA] = {.master = 2,
                         .replica = true,
                         .expected = {"unsafe: it is a replica, not a master",
                                      "point the config at independent masters"}},
    [FINDING_SCRIPTS_REFUSED] = {.master = 0,
                                 .acl = "ACL SETUSER default -eval -evalsha",
                                 .expected = {"unsafe: scripts are refused (NOPERM",
                                              "allow the user +eval +evalsha"}},
    [FINDING_PROBE_KEYS_REFUSED] =
        {.master = 0,
         .acl = "ACL SETUSER default resetkeys ~locks:* ~redlock:fence ~redlock:fence:*",
         .state = "  warning  ",
         .expected = {"clock not-checked (the ACL refuses the clock probe keys)",
                      "warning: the ACL refuses the clock probe keys",
                      "add ~redlock:clock:* to the user",
                      "warning: the ACL refuses the restart marker keys",
                      "add ~redlock:restart:* to the user"}},
    [FINDING_CONFIG_REFUSED] = {.master = 0,
                                .acl = "ACL SETUSER default -config",
                                .state = "  warning  ",
                                .expected = {"persistence aof (appendfsync unknown)",
                                             "warning: declared durable, but its persistence "
                                             "cannot be read (CONFIG GET refused)"}},
};

/* Makes the case's change, runs check and expects what the case says. */
static void expect_finding(const finding_case *f)
{
    if (f->config_name != NULL)
        config_set(f->master, f->config_name, f->config_value);
    if (f->acl != NULL)
        acl(f->master, f->acl);
    if (f->replica)
        cr_assert_eq(fleet_start_replica(cli.fleet, f->master, 0), 0);
    const cli_result *r = CHECK();
    cli_expect_exit(r, 1);
    const char *l = lines_of(r->out, f->master);
    if (f->state != NULL)
        expect_in(l, f->state);
    for (size_t k = 0; k < sizeof(f->expected) / sizeof(f->expected[0]) && f->expected[k]; k++)
        expect_in(l, f->expected[k]);
}

Test(cli_check, a_durable_master_without_appendfsync_always_is_unsafe)
{
    expect_finding(&finding_cases[FINDING_APPENDFSYNC]);
}

Test(cli_check, a_replica_is_unsafe)
{
    expect_finding(&finding_cases[FINDING_REPLICA]);
}

Test(cli_check, scripts_refused_by_the_acl_are_unsafe)
{
    expect_finding(&finding_cases[FINDING_SCRIPTS_REFUSED]);
}

Test(cli_check, probe_and_marker_keys_refused_by_the_acl_are_warnings)
{
    expect_finding(&finding_cases[FINDING_PROBE_KEYS_REFUSED]);
}

Test(cli_check, a_durable_declaration_config_get_cannot_check_is_a_warning)
{
    expect_finding(&finding_cases[FINDING_CONFIG_REFUSED]);
}

Test(cli_check, masters_restarted_and_not_durable_are_not_safe_yet)
{
    /* Not declared durable: masters started moments ago look restarted,
     * and count only max_ttl_ms after their start. */
    cli_config_options o = {.extra = "durable: false\nmax_ttl_ms: 60000"};
    const char *config = cli_write_config("young.yaml", &o);
    const cli_result *r = cli_run(CLI_ARGS("--config", config, "check"), NULL, T);
    cli_expect_exit(r, 69);
    for (size_t i = 0; i < 3; i++)
        expect_in(lines_of(r->out, i), "unsafe: it restarted without being declared durable");
}

Test(cli_check, one_server_named_twice_is_found)
{
    /* 127.1 is 127.0.0.1: entries 0 and 3 are one server. */
    const char *config = cli_write_file(
        "twice.yaml",
        cli_format("connect_timeout_ms: %ld\ncommand_timeout_ms: %ld\ndurable: true\nnodes:\n"
                   "  - {host: 127.0.0.1, port: %d}\n  - {host: 127.0.0.1, port: %d}\n"
                   "  - {host: 127.0.0.1, port: %d}\n  - {host: 127.1, port: %d}\n",
                   (long)fleet_scaled_ms(500), (long)fleet_scaled_ms(500),
                   fleet_port(cli.fleet, 0), fleet_port(cli.fleet, 1), fleet_port(cli.fleet, 2),
                   fleet_port(cli.fleet, 0)),
        0600);
    const cli_result *r = cli_run(CLI_ARGS("--config", config, "check"), NULL, T);
    cli_expect_exit(r, 1); /* three of four safe: a quorum */
    expect_in(r->out, "unsafe: the same Redis server as");
    expect_in(r->out, "remove one of the two entries from the config");
}

/* ---- a fast clock ------------------------------------------------------- */

static void one_of_three_fast(void)
{
    static const char *const clocks[] = {"+0", "+0", "+0 x3"};
    fleet_options o = {.appendonly = 1, .faketime = clocks};
    cli_setup(3, &o);
}

TestSuite(cli_check_clock, .init = one_of_three_fast, .fini = cli_teardown, .timeout = 60);

Test(cli_check_clock, a_fast_clock_is_unsafe)
{
    const cli_result *r = CHECK();
    cli_expect_exit(r, 1);
    const char *l = lines_of(r->out, 2);
    expect_in(l, "  unsafe  ");
    expect_in(l, "clock fast");
    expect_in(l, "unsafe: its expiry clock runs at least");
    expect_in(lines_of(r->out, 0), "clock ok");
}
