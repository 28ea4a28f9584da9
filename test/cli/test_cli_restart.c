/* SPDX-License-Identifier: BSD-3-Clause */
/* Masters restarted empty through the tool (docs/safety.md, "Masters
 * restarted empty"): five masters started moments ago, which a client not
 * declaring them durable does not count for max_ttl_ms. `ping` and
 * `status` say so per master; `ping` does not call a quorum that answers
 * healthy when too few of it count. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T CLI_RUN_TIMEOUT_MS

TestSuite(cli_restart, .init = cli_setup_five, .fini = cli_teardown, .timeout = 120);

/* A config for the five masters sharing max_ttl_ms 30 s, the first
 * `durable` of them declared durable. */
static const char *config_with_durable(const char *name, size_t durable)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    cr_assert_not_null(m);
    fprintf(m, "connect_timeout_ms: %ld\ncommand_timeout_ms: %ld\n", (long)fleet_scaled_ms(500),
            (long)fleet_scaled_ms(500));
    fprintf(m, "ttl_ms: 10000\nmax_ttl_ms: 30000\ndurable: false\nnodes:\n");
    for (size_t i = 0; i < CLI_MASTERS; i++)
        fprintf(m, "  - host: 127.0.0.1\n    port: %d\n    durable: %s\n", fleet_port(cli.fleet, i),
                i < durable ? "true" : "false");
    cr_assert_eq(fclose(m), 0);
    const char *path = cli_write_file(name, text, 0600);
    free(text);
    return path;
}

/* The line about master i says it is excluded, with the time left within
 * the 30 s and the drift allowance. */
static void expect_excluded(const char *out, size_t i)
{
    const char *line = cli_line_about(out, cli_node(i));
    cr_assert_not_null(line, "no line for master %zu in:\n%s", i, out);
    const char *at = strstr(line, "  restarted ");
    cr_assert_not_null(at, "master %zu not shown excluded: %s", i, line);
    long ago = -1;
    long more = -1;
    cr_assert_eq(sscanf(at, "  restarted %ld s ago: not counted for %ld s more", &ago, &more), 2,
                 "%s", line);
    cr_assert(ago >= 0 && ago < 10 && more > 20 && more <= 31, "%s", line);
}

static json_t *parse(const cli_result *r)
{
    json_error_t e;
    json_t *o = json_loads(r->out, 0, &e);
    cr_assert_not_null(o, "%s: not JSON (%s):\n%s", r->cmdline, e.text, r->out);
    return o;
}

/* No master counts: `ping` answers on every line and exits 69, saying how
 * many count; `status` reads the key on a quorum (exit 0) and shows each
 * master's exclusion too. */
Test(cli_restart, ping_is_not_healthy_while_too_few_masters_count)
{
    const char *config = config_with_durable("none.yaml", 0);
    const cli_result *r = cli_run(CLI_ARGS("-c", config, "ping"), NULL, T);
    cli_expect_exit(r, 69);
    for (size_t i = 0; i < CLI_MASTERS; i++)
        expect_excluded(r->out, i);
    cr_assert_str_eq(r->err,
                     cli_format("redlock: ping: %s (0 of 5 masters count, 3 needed)\n",
                                redlock_strerror(REDLOCK_ERESTARTED)));

    r = cli_run(CLI_ARGS("-c", config, "ping", "--json"), NULL, T);
    cli_expect_exit(r, 69);
    json_t *o = parse(r);
    cr_assert_str_eq(json_string_value(json_object_get(o, "status")), "REDLOCK_ERESTARTED");
    json_t *m = json_array_get(json_object_get(o, "masters"), 2);
    cr_assert_str_eq(json_string_value(json_object_get(m, "restart")), "excluded");
    json_int_t left = json_integer_value(json_object_get(m, "restart_excluded_ms"));
    cr_assert(left > 20000 && left <= 31000, "restart_excluded_ms %lld", (long long)left);
    json_decref(o);

    r = cli_run(CLI_ARGS("-c", config, "status", "job"), NULL, T);
    cli_expect_exit(r, 0);
    for (size_t i = 0; i < CLI_MASTERS; i++)
        expect_excluded(r->out, i);
}

/* Three of five declared durable: a quorum counts, `ping` exits 0; the
 * masters that count show nothing new, the two others their exclusion. */
Test(cli_restart, masters_that_count_show_nothing_new)
{
    const char *config = config_with_durable("three.yaml", 3);
    const cli_result *r = cli_run(CLI_ARGS("-c", config, "ping"), NULL, T);
    cli_expect_exit(r, 0);
    cr_assert_str_empty(r->err);
    for (size_t i = 0; i < 3; i++) {
        const char *line = cli_line_about(r->out, cli_node(i));
        cr_assert_not_null(line);
        double ms = -1;
        char name[32] = "";
        char version[32] = "";
        char tail[8] = "";
        cr_assert_eq(sscanf(line + strlen(cli_node(i)), "  ok  %lf ms  server %31s %31s%7s", &ms,
                            name, version, tail),
                     3, "more than the latency and the server: %s", line);
    }
    expect_excluded(r->out, 3);
    expect_excluded(r->out, 4);

    r = cli_run(CLI_ARGS("-c", config, "status", "--json", "job"), NULL, T);
    cli_expect_exit(r, 0);
    json_t *o = parse(r);
    json_t *masters = json_object_get(o, "masters");
    json_t *m = json_array_get(masters, 0);
    cr_assert_str_eq(json_string_value(json_object_get(m, "restart")), "counts");
    cr_assert(json_is_null(json_object_get(m, "restart_excluded_ms")));
    m = json_array_get(masters, 4);
    cr_assert_str_eq(json_string_value(json_object_get(m, "restart")), "excluded");
    cr_assert_gt(json_integer_value(json_object_get(m, "restart_excluded_ms")), 20000);
    json_decref(o);
}
