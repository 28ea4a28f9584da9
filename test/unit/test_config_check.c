/* SPDX-License-Identifier: BSD-3-Clause */
/* Configs that can never work (src/config/config_check.c): each refusal with its
 * exact text and what it blames, at its boundary; and the warnings about
 * what is merely risky, with their exact lines. */
#include <criterion/criterion.h>

#include "config_internal.h"
#include "log.h"
#include "redlock/redlock.h"

#include <stdio.h>
#include <string.h>

static redlock_config *config_with_nodes(size_t n)
{
    redlock_config *cfg = NULL;
    cr_assert_eq(redlock_config_new(&cfg), REDLOCK_OK);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(redlock_config_add_tcp_node(cfg, "127.0.0.1", 7001 + (int)i, NULL),
                     REDLOCK_OK);
    return cfg;
}

static void set(redlock_config *cfg, redlock_setting key, int64_t value)
{
    cr_assert_eq(redlock_config_set(cfg, key, value), REDLOCK_OK, "%s = %lld",
                 redlock_setting_name(key), (long long)value);
}

static void expect_fine(const redlock_config *cfg)
{
    rl_config_problem p;
    cr_assert_not(rl_config_find_problem(cfg, &p), "refused: %s", p.text);
}

/* The config is refused with text, blamed on key0 then key1 (-1: none). */
static void expect_problem(const redlock_config *cfg, const char *text, int key0, int key1)
{
    rl_config_problem p;
    cr_assert(rl_config_find_problem(cfg, &p), "accepted, expected: %s", text);
    cr_assert_str_eq(p.text, text);
    cr_assert_eq(p.node, -1);
    cr_assert_eq(p.key_count, key1 < 0 ? 1 : 2);
    cr_assert_eq(p.keys[0], key0);
    if (key1 >= 0)
        cr_assert_eq(p.keys[1], key1);
}

Test(config_check, defaults_and_the_shipped_settings_are_fine)
{
    redlock_config *cfg = config_with_nodes(3);
    expect_fine(cfg);
    /* The test fixtures' settings, also at the valgrind time scale. */
    for (int64_t scale = 1; scale <= 10; scale *= 10) {
        set(cfg, REDLOCK_CONNECT_TIMEOUT_MS, 500 * scale);
        set(cfg, REDLOCK_COMMAND_TIMEOUT_MS, 500 * scale);
        expect_fine(cfg);
    }
    redlock_config_free(cfg);
}

Test(config_check, reconnect_min_above_max)
{
    redlock_config *cfg = config_with_nodes(3);
    set(cfg, REDLOCK_RECONNECT_MIN_MS, 5000);
    expect_fine(cfg);
    set(cfg, REDLOCK_RECONNECT_MIN_MS, 5001);
    expect_problem(cfg, "reconnect_min_ms is greater than reconnect_max_ms",
                   REDLOCK_RECONNECT_MIN_MS, REDLOCK_RECONNECT_MAX_MS);
    redlock_config_free(cfg);
}

Test(config_check, command_timeout_not_below_the_ttl)
{
    redlock_config *cfg = config_with_nodes(3);
    set(cfg, REDLOCK_TTL_MS, 100);
    set(cfg, REDLOCK_CONNECT_TIMEOUT_MS, 50);
    set(cfg, REDLOCK_COMMAND_TIMEOUT_MS, 99);
    expect_fine(cfg);
    set(cfg, REDLOCK_COMMAND_TIMEOUT_MS, 100);
    expect_problem(cfg,
                   "command_timeout_ms (100) must be less than ttl_ms (100), or a lock can "
                   "expire before its masters answer",
                   REDLOCK_COMMAND_TIMEOUT_MS, REDLOCK_TTL_MS);
    set(cfg, REDLOCK_COMMAND_TIMEOUT_MS, 100000);
    expect_problem(cfg,
                   "command_timeout_ms (100000) must be less than ttl_ms (100), or a lock can "
                   "expire before its masters answer",
                   REDLOCK_COMMAND_TIMEOUT_MS, REDLOCK_TTL_MS);
    redlock_config_free(cfg);
}

Test(config_check, connect_timeout_not_below_the_ttl)
{
    redlock_config *cfg = config_with_nodes(3);
    set(cfg, REDLOCK_TTL_MS, 500);
    expect_problem(cfg,
                   "connect_timeout_ms (500) must be less than ttl_ms (500), or a lock can "
                   "expire before its masters connect",
                   REDLOCK_CONNECT_TIMEOUT_MS, REDLOCK_TTL_MS);
    set(cfg, REDLOCK_TTL_MS, 501);
    expect_fine(cfg);
    redlock_config_free(cfg);
}

/* A node's own timeout is checked too, and blamed on that node. */
Test(config_check, a_nodes_own_timeouts_not_below_the_ttl)
{
    redlock_config *cfg = config_with_nodes(3);
    set(cfg, REDLOCK_TTL_MS, 1000);
    cr_assert_eq(redlock_config_node_set_timeouts(cfg, 2, 999, 999), REDLOCK_OK);
    expect_fine(cfg);
    cr_assert_eq(redlock_config_node_set_timeouts(cfg, 2, 0, 1000), REDLOCK_OK);
    rl_config_problem p;
    cr_assert(rl_config_find_problem(cfg, &p));
    cr_assert_str_eq(p.text, "nodes[2].command_timeout_ms (1000) must be less than ttl_ms "
                             "(1000), or a lock can expire before its masters answer");
    cr_assert_eq(p.node, 2);
    cr_assert_eq(p.node_key, REDLOCK_COMMAND_TIMEOUT_MS);
    cr_assert_eq(redlock_config_node_set_timeouts(cfg, 2, 0, 0), REDLOCK_OK);
    cr_assert_eq(redlock_config_node_set_timeouts(cfg, 1, 5000, 0), REDLOCK_OK);
    cr_assert(rl_config_find_problem(cfg, &p));
    cr_assert_str_eq(p.text, "nodes[1].connect_timeout_ms (5000) must be less than ttl_ms "
                             "(1000), or a lock can expire before its masters connect");
    cr_assert_eq(p.node, 1);
    cr_assert_eq(p.node_key, REDLOCK_CONNECT_TIMEOUT_MS);
    cr_assert_eq(p.keys[0], REDLOCK_CONNECT_TIMEOUT_MS);
    redlock_config_free(cfg);
}

/* ttl_ms * drift_factor + 2 ms >= ttl_ms leaves no validity. */
Test(config_check, drift_allowance_not_below_the_ttl)
{
    redlock_config *cfg = config_with_nodes(3);
    set(cfg, REDLOCK_CONNECT_TIMEOUT_MS, 1);
    set(cfg, REDLOCK_COMMAND_TIMEOUT_MS, 1);
    set(cfg, REDLOCK_TTL_MS, 5);
    cr_assert_eq(redlock_config_set_drift_factor(cfg, 0.5), REDLOCK_OK);
    expect_fine(cfg); /* 4.5 ms < 5 ms */
    set(cfg, REDLOCK_TTL_MS, 4);
    expect_problem(cfg,
                   "drift_factor (0.5) leaves no validity with ttl_ms (4): ttl_ms * "
                   "drift_factor + 2 ms (4 ms) must be less than ttl_ms",
                   RL_KEY_DRIFT_FACTOR, REDLOCK_TTL_MS);
    set(cfg, REDLOCK_TTL_MS, 200);
    cr_assert_eq(redlock_config_set_drift_factor(cfg, 0.99), REDLOCK_OK);
    expect_problem(cfg,
                   "drift_factor (0.99) leaves no validity with ttl_ms (200): ttl_ms * "
                   "drift_factor + 2 ms (200 ms) must be less than ttl_ms",
                   RL_KEY_DRIFT_FACTOR, REDLOCK_TTL_MS);
    set(cfg, REDLOCK_TTL_MS, 2);
    cr_assert_eq(redlock_config_set_drift_factor(cfg, 0), REDLOCK_OK);
    expect_problem(cfg,
                   "drift_factor (0) leaves no validity with ttl_ms (2): ttl_ms * "
                   "drift_factor + 2 ms (2 ms) must be less than ttl_ms",
                   RL_KEY_DRIFT_FACTOR, REDLOCK_TTL_MS);
    set(cfg, REDLOCK_TTL_MS, 3);
    expect_fine(cfg);
    redlock_config_free(cfg);
}

/* A default TTL over a non-zero max_ttl_ms, with a master not durable:
 * every acquire with the default TTL would be refused (REDLOCK_EMAXTTL),
 * so the config is, at load and at redlock_client_new(). With every
 * master durable there is no bound; max_ttl_ms 0 is ttl_ms itself. */
Test(config_check, default_ttl_over_max_ttl)
{
    static const char text[] =
        "ttl_ms: 5000\nmax_ttl_ms: 1000\nnodes:\n  - host: 127.0.0.1\n    port: 7001\n";
    static const char refused[] =
        "ttl_ms (5000) is more than max_ttl_ms (1000) with a master not durable: an acquire "
        "with the default TTL would be refused (REDLOCK_EMAXTTL)";
    redlock_config *cfg = config_with_nodes(3);
    set(cfg, REDLOCK_TTL_MS, 5000);
    expect_fine(cfg); /* max_ttl_ms 0: ttl_ms */
    set(cfg, REDLOCK_MAX_TTL_MS, 5000);
    expect_fine(cfg);
    set(cfg, REDLOCK_MAX_TTL_MS, 1000);
    expect_problem(cfg, refused, REDLOCK_MAX_TTL_MS, REDLOCK_TTL_MS);
    set(cfg, REDLOCK_DURABLE, 1);
    expect_fine(cfg);
    cr_assert_eq(redlock_config_node_set_durable(cfg, 2, 0), REDLOCK_OK);
    expect_problem(cfg, refused, REDLOCK_MAX_TTL_MS, REDLOCK_TTL_MS);
    redlock_config_free(cfg);

    /* Loaded from a file: at the max_ttl_ms line. */
    char err[512] = "";
    redlock_config *loaded = NULL;
    cr_assert_eq(redlock_config_load_string(&loaded, text, strlen(text), "c.yaml", err,
                                            sizeof(err)),
                 REDLOCK_ECONFIG);
    cr_assert_null(loaded);
    char expected[512];
    snprintf(expected, sizeof(expected), "c.yaml:2:1: %s", refused);
    cr_assert_str_eq(err, expected);
}

/* ---- Warnings ----------------------------------------------------------- */

static char logged[2048];

static void capture(int level, const char *message, void *arg)
{
    size_t used = strlen(logged);
    snprintf(logged + used, sizeof(logged) - used, "%d %s\n", level, message);
}

static const char *warnings_of(const redlock_config *cfg)
{
    logged[0] = '\0';
    rl_logger log = {capture, NULL, REDLOCK_LOG_DEBUG};
    rl_config_warn(cfg, &log);
    return logged;
}

Test(config_check, no_warning_for_an_odd_count_and_short_timeouts)
{
    redlock_config *cfg = config_with_nodes(5);
    set(cfg, REDLOCK_COMMAND_TIMEOUT_MS, 1000); /* exactly a tenth of ttl_ms */
    cr_assert_str_eq(warnings_of(cfg), "");
    redlock_config_free(cfg);
}

Test(config_check, warns_of_an_even_number_of_masters)
{
    redlock_config *cfg = config_with_nodes(4);
    cr_assert_str_eq(warnings_of(cfg), "1 4 masters: an even number tolerates no more failures "
                                       "than 3 would; an odd number is recommended\n");
    redlock_config_free(cfg);
}

Test(config_check, warns_of_a_command_timeout_above_a_tenth_of_the_ttl)
{
    redlock_config *cfg = config_with_nodes(3);
    set(cfg, REDLOCK_COMMAND_TIMEOUT_MS, 1001);
    cr_assert_str_eq(warnings_of(cfg),
                     "1 command_timeout_ms (1001) is more than a tenth of ttl_ms (10000): a "
                     "slow master leaves a lock little validity\n");
    set(cfg, REDLOCK_COMMAND_TIMEOUT_MS, 50);
    cr_assert_eq(redlock_config_node_set_timeouts(cfg, 1, 0, 2000), REDLOCK_OK);
    cr_assert_str_eq(warnings_of(cfg),
                     "1 nodes[1].command_timeout_ms (2000) is more than a tenth of ttl_ms "
                     "(10000): a slow master leaves a lock little validity\n");
    redlock_config_free(cfg);
}
