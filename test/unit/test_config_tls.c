/* SPDX-License-Identifier: BSD-3-Clause */
/* TLS options in the config (src/config/config_tls.c, the YAML keys): what a node
 * ends up using, what is refused, and, on a build without TLS, that every
 * request for TLS is REDLOCK_ECONFIG with a message saying why. */
#include <criterion/criterion.h>

#include "config_internal.h"
#include "redlock/redlock.h"

#include <stdio.h>
#include <string.h>

static redlock_config *two_nodes(void)
{
    redlock_config *cfg = NULL;
    cr_assert_eq(redlock_config_new(&cfg), REDLOCK_OK);
    cr_assert_eq(redlock_config_add_tcp_node(cfg, "db1.example", 6380, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_config_add_unix_node(cfg, "/tmp/r.sock", NULL), REDLOCK_OK);
    return cfg;
}

/* Loads text as "c.yaml": the status, the message in err. */
static int load(const char *text, redlock_config **cfg, char *err, size_t len)
{
    return redlock_config_load_string(cfg, text, strlen(text), "c.yaml", err, len);
}

Test(config_tls, the_build_says_whether_it_has_tls)
{
    const char *why = "untouched";
    bool available = redlock_tls_available(&why);
    const char *text = why != NULL ? why : "";
    cr_assert_eq(why == NULL, available);
    if (!available)
        cr_assert_not_null(strstr(text, "TLS is not available in this build"), "%s", text);
    cr_assert_eq(redlock_tls_available(NULL), available);
}

Test(config_tls, plain_is_always_accepted)
{
    redlock_config *cfg = two_nodes();
    const redlock_tls_options off = {.enabled = 0};
    cr_assert_eq(redlock_config_set_tls(cfg, &off), REDLOCK_OK);
    cr_assert_eq(redlock_config_set_tls(cfg, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_config_node_set_tls(cfg, 0, &off), REDLOCK_OK);
    cr_assert_eq(redlock_config_node_set_tls(cfg, 0, NULL), REDLOCK_OK);
    redlock_tls_options used;
    rl_node_tls(cfg, &cfg->nodes[0], &used);
    cr_assert_eq(used.enabled, 0);
    redlock_config_free(cfg);
}

Test(config_tls, a_build_without_tls_refuses_it)
{
    if (redlock_tls_available(NULL))
        cr_skip_test("this build has TLS");
    redlock_config *cfg = two_nodes();
    const redlock_tls_options on = {.enabled = 1};
    const redlock_tls_options files = {.enabled = 0, .ca_file = "/ca.pem"};
    cr_assert_eq(redlock_config_set_tls(cfg, &on), REDLOCK_ECONFIG);
    cr_assert_eq(redlock_config_set_tls(cfg, &files), REDLOCK_ECONFIG);
    cr_assert_eq(redlock_config_node_set_tls(cfg, 0, &on), REDLOCK_ECONFIG);
    redlock_config_free(cfg);

    static const struct {
        const char *text, *where;
    } cases[] = {
        {"tls: true\nnodes:\n  - host: a\n", "c.yaml:1:1: tls: "},
        {"nodes:\n  - host: a\ntls_ca_file: /ca.pem\n", "c.yaml:3:1: tls_ca_file: "},
        {"nodes:\n  - host: a\n    tls: true\n", "c.yaml:3:5: nodes[0].tls: "},
        {"nodes:\n  - url: rediss://a\n", "c.yaml:2:10: nodes[0].url: "},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[REDLOCK_ERRBUF_SIZE];
        char expected[REDLOCK_ERRBUF_SIZE];
        const char *why = NULL;
        redlock_tls_available(&why);
        snprintf(expected, sizeof(expected), "%s%s", cases[i].where, why);
        cfg = NULL;
        cr_assert_eq(load(cases[i].text, &cfg, err, sizeof(err)), REDLOCK_ECONFIG);
        cr_assert_str_eq(err, expected);
    }
}

Test(config_tls, a_node_takes_what_it_does_not_set_from_the_config)
{
    if (!redlock_tls_available(NULL))
        cr_skip_test("this build has no TLS");
    redlock_config *cfg = two_nodes();
    const redlock_tls_options all = {.enabled = 1, .ca_file = "/ca.pem",
                                     .server_name = "redis.example"};
    cr_assert_eq(redlock_config_set_tls(cfg, &all), REDLOCK_OK);
    redlock_tls_options used;
    rl_node_tls(cfg, &cfg->nodes[0], &used);
    cr_assert_eq(used.enabled, 1);
    cr_assert_str_eq(used.ca_file, "/ca.pem");
    cr_assert_str_eq(used.server_name, "redis.example");
    cr_assert_null(used.cert_file);
    rl_node_tls(cfg, &cfg->nodes[1], &used);
    cr_assert_eq(used.enabled, 0, "a unix socket is never TLS");

    const redlock_tls_options own = {.enabled = -1, .cert_file = "/c.pem", .key_file = "/k.pem"};
    cr_assert_eq(redlock_config_node_set_tls(cfg, 0, &own), REDLOCK_OK);
    redlock_config *copy = NULL;
    cr_assert_eq(redlock_config_copy(cfg, &copy), REDLOCK_OK);
    redlock_config_free(cfg);
    rl_node_tls(copy, &copy->nodes[0], &used);
    cr_assert_eq(used.enabled, 1);
    cr_assert_str_eq(used.ca_file, "/ca.pem");
    cr_assert_str_eq(used.cert_file, "/c.pem");
    cr_assert_str_eq(used.key_file, "/k.pem");
    const redlock_tls_options off = {.enabled = 0};
    cr_assert_eq(redlock_config_node_set_tls(copy, 0, &off), REDLOCK_OK);
    rl_node_tls(copy, &copy->nodes[0], &used);
    cr_assert_eq(used.enabled, 0);
    redlock_config_free(copy);
}

Test(config_tls, bad_options_are_refused)
{
    if (!redlock_tls_available(NULL))
        cr_skip_test("this build has no TLS");
    redlock_config *cfg = two_nodes();
    const redlock_tls_options bad[] = {
        {.enabled = 2},
        {.enabled = 1, .ca_file = ""},
        {.enabled = 1, .server_name = "has space"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(redlock_config_set_tls(cfg, &bad[i]), REDLOCK_EINVAL, "%zu", i);
        cr_assert_eq(redlock_config_node_set_tls(cfg, 0, &bad[i]), REDLOCK_EINVAL, "%zu", i);
    }
    const redlock_tls_options inherit = {.enabled = -1};
    cr_assert_eq(redlock_config_set_tls(cfg, &inherit), REDLOCK_EINVAL);
    const redlock_tls_options on = {.enabled = 1};
    cr_assert_eq(redlock_config_node_set_tls(cfg, 1, &on), REDLOCK_EINVAL, "unix socket");
    cr_assert_eq(redlock_config_node_set_tls(cfg, 2, &on), REDLOCK_EINVAL, "no such node");
    redlock_config_free(cfg);
}

Test(config_tls, yaml_keys)
{
    if (!redlock_tls_available(NULL))
        cr_skip_test("this build has no TLS");
    const char *text = "tls_ca_file: /ca.pem\n"
                       "tls_server_name: redis.example\n"
                       "nodes:\n"
                       "  - url: rediss://10.0.0.1:6380\n"
                       "  - host: 10.0.0.2\n"
                       "    tls: true\n"
                       "    tls_cert_file: /c.pem\n"
                       "    tls_key_file: /k.pem\n"
                       "  - host: 10.0.0.3\n";
    char err[REDLOCK_ERRBUF_SIZE];
    redlock_config *cfg = NULL;
    cr_assert_eq(load(text, &cfg, err, sizeof(err)), REDLOCK_OK, "%s", err);
    redlock_tls_options used;
    rl_node_tls(cfg, &cfg->nodes[0], &used);
    cr_assert_eq(used.enabled, 1);
    cr_assert_str_eq(used.ca_file, "/ca.pem");
    cr_assert_str_eq(used.server_name, "redis.example");
    rl_node_tls(cfg, &cfg->nodes[1], &used);
    cr_assert_eq(used.enabled, 1);
    cr_assert_str_eq(used.cert_file, "/c.pem");
    rl_node_tls(cfg, &cfg->nodes[2], &used);
    cr_assert_eq(used.enabled, 0, "tls is off unless asked for");
    redlock_config_free(cfg);

    cfg = NULL;
    cr_assert_eq(load("nodes:\n  - url: rediss://a\n    tls: false\n", &cfg, err, sizeof(err)),
                 REDLOCK_ECONFIG);
    cr_assert_str_eq(err, "c.yaml:3:5: nodes[0].tls: the url gives TLS (rediss://) already");
    cr_assert_eq(load("nodes:\n  - socket: /s\n    tls: true\n", &cfg, err, sizeof(err)),
                 REDLOCK_ECONFIG);
    cr_assert_str_eq(err,
                     "c.yaml:3:5: nodes[0].tls: TLS is for TCP masters (host or url), not socket");
    cr_assert_eq(load("tls: yes\nnodes:\n  - host: a\n", &cfg, err, sizeof(err)),
                 REDLOCK_ECONFIG);
    cr_assert_str_eq(err, "c.yaml:1:6: tls: expected an integer from 0 to 1, got \"yes\"");
}
