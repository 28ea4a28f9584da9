/* SPDX-License-Identifier: BSD-3-Clause */
/* The config object built in code (src/config/config.c): settings, ranges, nodes. */
#include <criterion/criterion.h>

#include "config_internal.h"
#include "redlock/redlock.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static redlock_config *new_config(void)
{
    redlock_config *cfg = NULL;
    cr_assert_eq(redlock_config_new(&cfg), REDLOCK_OK);
    cr_assert_not_null(cfg);
    return cfg;
}

static size_t add_tcp(redlock_config *cfg, const char *host, int port)
{
    size_t index = 99;
    cr_assert_eq(redlock_config_add_tcp_node(cfg, host, port, &index), REDLOCK_OK, "%s:%d",
                 host, port);
    return index;
}

Test(config, new_has_every_setting_at_its_default)
{
    redlock_config *cfg = new_config();
    for (int i = 0; i < RL_SETTING_COUNT; i++) {
        int64_t value = -1;
        cr_assert_eq(redlock_config_get(cfg, (redlock_setting)i, &value), REDLOCK_OK);
        cr_assert_eq(value, rl_setting_table[i].def, "%s", rl_setting_table[i].name);
    }
    cr_assert_eq(redlock_config_drift_factor(cfg), RL_DRIFT_FACTOR_DEFAULT);
    cr_assert_eq(redlock_config_node_count(cfg), 0);
    redlock_config_free(cfg);
}

Test(config, new_rejects_null_out)
{
    cr_assert_eq(redlock_config_new(NULL), REDLOCK_EINVAL);
}

Test(config, setting_names_match_the_table)
{
    cr_assert_str_eq(redlock_setting_name(REDLOCK_CONNECT_TIMEOUT_MS), "connect_timeout_ms");
    cr_assert_str_eq(redlock_setting_name(REDLOCK_COMMAND_TIMEOUT_MS), "command_timeout_ms");
    cr_assert_str_eq(redlock_setting_name(REDLOCK_TTL_MS), "ttl_ms");
    cr_assert_str_eq(redlock_setting_name(REDLOCK_RETRY_COUNT), "retry_count");
    cr_assert_str_eq(redlock_setting_name(REDLOCK_RETRY_DELAY_MS), "retry_delay_ms");
    cr_assert_str_eq(redlock_setting_name(REDLOCK_RETRY_JITTER_MS), "retry_jitter_ms");
    cr_assert_str_eq(redlock_setting_name(REDLOCK_RECONNECT_MIN_MS), "reconnect_min_ms");
    cr_assert_str_eq(redlock_setting_name(REDLOCK_RECONNECT_MAX_MS), "reconnect_max_ms");
    cr_assert_null(redlock_setting_name((redlock_setting)RL_SETTING_COUNT));
    cr_assert_null(redlock_setting_name((redlock_setting)-1));
}

/* The settings table is REDLOCK_SETTING_MAP, row for row. */
Test(config, settings_table_is_generated_from_the_setting_map)
{
    static const struct {
        int key;
        const char *name;
        int64_t min, max, def;
    } rows[] = {
#define RL_TEST_SETTING_(name, key, min, max, def) {REDLOCK_##name, key, min, max, def},
        REDLOCK_SETTING_MAP(RL_TEST_SETTING_)
#undef RL_TEST_SETTING_
    };
    cr_assert_eq(sizeof(rows) / sizeof(rows[0]), RL_SETTING_COUNT);
    cr_assert_eq(RL_SETTING_COUNT, 20);
    for (int i = 0; i < RL_SETTING_COUNT; i++) {
        cr_assert_eq(rows[i].key, i, "settings are numbered from 0 in table order");
        cr_assert_str_eq(redlock_setting_name((redlock_setting)i), rows[i].name);
        cr_assert_eq(rl_setting_table[i].min, rows[i].min, "%s", rows[i].name);
        cr_assert_eq(rl_setting_table[i].max, rows[i].max, "%s", rows[i].name);
        cr_assert_eq(rl_setting_table[i].def, rows[i].def, "%s", rows[i].name);
    }
    cr_assert_eq(REDLOCK_CONNECT_TIMEOUT_MS, 0);
    cr_assert_eq(REDLOCK_RECONNECT_MAX_MS, 7);
}

Test(config, set_accepts_min_and_max_and_rejects_beyond)
{
    redlock_config *cfg = new_config();
    for (int i = 0; i < RL_SETTING_COUNT; i++) {
        const rl_setting_info *info = &rl_setting_table[i];
        redlock_setting key = (redlock_setting)i;
        int64_t value = 0;

        cr_assert_eq(redlock_config_set(cfg, key, info->min - 1), REDLOCK_EINVAL, "%s",
                     info->name);
        cr_assert_eq(redlock_config_set(cfg, key, info->max + 1), REDLOCK_EINVAL, "%s",
                     info->name);
        redlock_config_get(cfg, key, &value);
        cr_assert_eq(value, info->def, "%s: a refused value must not stick", info->name);

        cr_assert_eq(redlock_config_set(cfg, key, info->min), REDLOCK_OK, "%s", info->name);
        redlock_config_get(cfg, key, &value);
        cr_assert_eq(value, info->min, "%s", info->name);

        cr_assert_eq(redlock_config_set(cfg, key, info->max), REDLOCK_OK, "%s", info->name);
        redlock_config_get(cfg, key, &value);
        cr_assert_eq(value, info->max, "%s", info->name);
    }
    redlock_config_free(cfg);
}

Test(config, set_and_get_reject_bad_arguments)
{
    redlock_config *cfg = new_config();
    int64_t value = 0;
    cr_assert_eq(redlock_config_set(NULL, REDLOCK_TTL_MS, 1000), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_set(cfg, (redlock_setting)RL_SETTING_COUNT, 1), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_set(cfg, (redlock_setting)-1, 1), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_get(NULL, REDLOCK_TTL_MS, &value), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_get(cfg, REDLOCK_TTL_MS, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_get(cfg, (redlock_setting)RL_SETTING_COUNT, &value),
                 REDLOCK_EINVAL);
    redlock_config_free(cfg);
}

Test(config, drift_factor_accepts_zero_up_to_below_one)
{
    redlock_config *cfg = new_config();
    cr_assert_eq(redlock_config_set_drift_factor(cfg, 0.0), REDLOCK_OK);
    cr_assert_eq(redlock_config_drift_factor(cfg), 0.0);
    cr_assert_eq(redlock_config_set_drift_factor(cfg, 0.99), REDLOCK_OK);
    cr_assert_eq(redlock_config_drift_factor(cfg), 0.99);

    cr_assert_eq(redlock_config_set_drift_factor(cfg, -0.1), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_set_drift_factor(cfg, 1.0), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_set_drift_factor(cfg, NAN), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_set_drift_factor(cfg, INFINITY), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_drift_factor(cfg), 0.99, "refused values must not stick");

    cr_assert_eq(redlock_config_set_drift_factor(NULL, 0.5), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_drift_factor(NULL), RL_DRIFT_FACTOR_DEFAULT);
    redlock_config_free(cfg);
}

Test(config, add_tcp_node_returns_index_and_name)
{
    redlock_config *cfg = new_config();
    cr_assert_eq(add_tcp(cfg, "127.0.0.1", 7001), 0);
    cr_assert_eq(add_tcp(cfg, "127.0.0.1", 7002), 1);
    cr_assert_eq(redlock_config_add_tcp_node(cfg, "example.org", 6379, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_config_node_count(cfg), 3);
    cr_assert_str_eq(redlock_config_node_name(cfg, 0), "127.0.0.1:7001");
    cr_assert_str_eq(redlock_config_node_name(cfg, 1), "127.0.0.1:7002");
    cr_assert_str_eq(redlock_config_node_name(cfg, 2), "example.org:6379");
    cr_assert_null(redlock_config_node_name(cfg, 3));
    cr_assert_null(redlock_config_node_name(NULL, 0));
    cr_assert_eq(redlock_config_node_count(NULL), 0);
    redlock_config_free(cfg);
}

Test(config, ipv6_node_name_has_brackets)
{
    redlock_config *cfg = new_config();
    add_tcp(cfg, "::1", 7001);
    cr_assert_str_eq(redlock_config_node_name(cfg, 0), "[::1]:7001");
    redlock_config_free(cfg);
}

Test(config, add_tcp_node_rejects_bad_host_and_port)
{
    redlock_config *cfg = new_config();
    cr_assert_eq(redlock_config_add_tcp_node(cfg, "", 7001, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_tcp_node(cfg, NULL, 7001, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_tcp_node(cfg, "bad host", 7001, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_tcp_node(cfg, "bad\nhost", 7001, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_tcp_node(cfg, "127.0.0.1", 0, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_tcp_node(cfg, "127.0.0.1", 65536, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_tcp_node(cfg, "127.0.0.1", -1, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_tcp_node(NULL, "127.0.0.1", 7001, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_node_count(cfg), 0);
    cr_assert_eq(redlock_config_add_tcp_node(cfg, "127.0.0.1", 1, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_config_add_tcp_node(cfg, "127.0.0.1", 65535, NULL), REDLOCK_OK);
    redlock_config_free(cfg);
}

Test(config, add_tcp_node_rejects_duplicates_ignoring_host_case)
{
    redlock_config *cfg = new_config();
    add_tcp(cfg, "redis.example.org", 7001);
    cr_assert_eq(redlock_config_add_tcp_node(cfg, "redis.example.org", 7001, NULL),
                 REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_tcp_node(cfg, "REDIS.Example.ORG", 7001, NULL),
                 REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_tcp_node(cfg, "redis.example.org", 7002, NULL), REDLOCK_OK);
    cr_assert_eq(redlock_config_node_count(cfg), 2);
    cr_assert_eq(rl_config_find_node(cfg, "REDIS.EXAMPLE.ORG", 7002, NULL), 1);
    cr_assert_eq(rl_config_find_node(cfg, "redis.example.org", 7003, NULL), -1);
    redlock_config_free(cfg);
}

Test(config, add_node_stops_at_max_nodes)
{
    redlock_config *cfg = new_config();
    for (int i = 0; i < REDLOCK_MAX_NODES; i++)
        add_tcp(cfg, "127.0.0.1", 10000 + i);
    cr_assert_eq(redlock_config_add_tcp_node(cfg, "127.0.0.1", 20000, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_unix_node(cfg, "/tmp/x.sock", NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_node_count(cfg), REDLOCK_MAX_NODES);
    redlock_config_free(cfg);
}

Test(config, unix_nodes)
{
    redlock_config *cfg = new_config();
    size_t index = 99;
    cr_assert_eq(redlock_config_add_unix_node(cfg, "/tmp/x.sock", &index), REDLOCK_OK);
    cr_assert_eq(index, 0);
    cr_assert_str_eq(redlock_config_node_name(cfg, 0), "unix:/tmp/x.sock");
    cr_assert_eq(redlock_config_add_unix_node(cfg, "/tmp/x.sock", NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_unix_node(cfg, "", NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_unix_node(cfg, NULL, NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_add_unix_node(cfg, "/tmp/with space.sock", NULL),
                 REDLOCK_EINVAL);
    char too_long[200];
    memset(too_long, 'a', sizeof(too_long) - 1);
    too_long[0] = '/';
    too_long[sizeof(too_long) - 1] = '\0';
    cr_assert_eq(redlock_config_add_unix_node(cfg, too_long, NULL), REDLOCK_EINVAL);
    cr_assert_eq(rl_config_find_node(cfg, NULL, 0, "/tmp/x.sock"), 0);
    /* A socket and a TCP node never match each other. */
    cr_assert_eq(rl_config_find_node(cfg, "/tmp/x.sock", 0, NULL), -1);
    cr_assert_eq(redlock_config_node_count(cfg), 1);
    redlock_config_free(cfg);
}

Test(config, set_auth_needs_a_nonempty_password)
{
    redlock_config *cfg = new_config();
    size_t i = add_tcp(cfg, "127.0.0.1", 7001);
    cr_assert_eq(redlock_config_node_set_auth(cfg, i, "user", NULL), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_node_set_auth(cfg, i, NULL, ""), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_node_set_auth(cfg, i, "", "secret"), REDLOCK_EINVAL);
    cr_assert_null(cfg->nodes[i].password);

    cr_assert_eq(redlock_config_node_set_auth(cfg, i, NULL, "secret"), REDLOCK_OK);
    cr_assert_str_eq(cfg->nodes[i].password, "secret");
    cr_assert_null(cfg->nodes[i].username);
    cr_assert_eq(redlock_config_node_set_auth(cfg, i, "user", "other"), REDLOCK_OK);
    cr_assert_str_eq(cfg->nodes[i].username, "user");
    cr_assert_str_eq(cfg->nodes[i].password, "other");

    cr_assert_eq(redlock_config_node_set_auth(cfg, i, NULL, NULL), REDLOCK_OK);
    cr_assert_null(cfg->nodes[i].username);
    cr_assert_null(cfg->nodes[i].password);
    cr_assert_eq(redlock_config_node_set_auth(cfg, 1, NULL, "secret"), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_node_set_auth(NULL, 0, NULL, "secret"), REDLOCK_EINVAL);
    redlock_config_free(cfg);
}

Test(config, set_db_range)
{
    redlock_config *cfg = new_config();
    size_t i = add_tcp(cfg, "127.0.0.1", 7001);
    cr_assert_eq(cfg->nodes[i].db, 0);
    cr_assert_eq(redlock_config_node_set_db(cfg, i, -1), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_node_set_db(cfg, i, RL_DB_MAX + 1), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_node_set_db(cfg, i, RL_DB_MAX), REDLOCK_OK);
    cr_assert_eq(cfg->nodes[i].db, RL_DB_MAX);
    cr_assert_eq(redlock_config_node_set_db(cfg, i, 0), REDLOCK_OK);
    cr_assert_eq(cfg->nodes[i].db, 0);
    cr_assert_eq(redlock_config_node_set_db(cfg, 1, 3), REDLOCK_EINVAL);
    redlock_config_free(cfg);
}

Test(config, set_timeouts_overrides_and_zero_keeps_config_value)
{
    redlock_config *cfg = new_config();
    size_t i = add_tcp(cfg, "127.0.0.1", 7001);
    const rl_node *node = &cfg->nodes[i];
    const rl_setting_info *conn = &rl_setting_table[REDLOCK_CONNECT_TIMEOUT_MS];
    const rl_setting_info *cmd = &rl_setting_table[REDLOCK_COMMAND_TIMEOUT_MS];

    cr_assert_eq(rl_node_connect_timeout_ms(cfg, node), conn->def);
    cr_assert_eq(rl_node_command_timeout_ms(cfg, node), cmd->def);
    cr_assert_eq(redlock_config_node_set_timeouts(cfg, i, 1234, 0), REDLOCK_OK);
    cr_assert_eq(rl_node_connect_timeout_ms(cfg, node), 1234);
    cr_assert_eq(rl_node_command_timeout_ms(cfg, node), cmd->def);
    cr_assert_eq(redlock_config_node_set_timeouts(cfg, i, 0, cmd->max), REDLOCK_OK);
    cr_assert_eq(rl_node_connect_timeout_ms(cfg, node), conn->def);
    cr_assert_eq(rl_node_command_timeout_ms(cfg, node), cmd->max);

    cr_assert_eq(redlock_config_node_set_timeouts(cfg, i, conn->max + 1, 0), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_node_set_timeouts(cfg, i, 0, cmd->max + 1), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_node_set_timeouts(cfg, i, -1, 0), REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_node_set_timeouts(cfg, 1, 10, 10), REDLOCK_EINVAL);
    cr_assert_eq(rl_node_command_timeout_ms(cfg, node), cmd->max, "refused: unchanged");
    redlock_config_free(cfg);
}

Test(config, clear_nodes_keeps_settings)
{
    redlock_config *cfg = new_config();
    add_tcp(cfg, "127.0.0.1", 7001);
    redlock_config_node_set_auth(cfg, 0, "user", "secret");
    cr_assert_eq(redlock_config_set(cfg, REDLOCK_TTL_MS, 1234), REDLOCK_OK);
    redlock_config_clear_nodes(cfg);
    cr_assert_eq(redlock_config_node_count(cfg), 0);
    int64_t ttl = 0;
    redlock_config_get(cfg, REDLOCK_TTL_MS, &ttl);
    cr_assert_eq(ttl, 1234);
    /* The same address can be added again. */
    cr_assert_eq(add_tcp(cfg, "127.0.0.1", 7001), 0);
    redlock_config_clear_nodes(NULL);
    redlock_config_free(cfg);
}

Test(config, copy_is_deep)
{
    redlock_config *cfg = new_config();
    add_tcp(cfg, "127.0.0.1", 7001);
    cr_assert_eq(redlock_config_add_unix_node(cfg, "/tmp/x.sock", NULL), REDLOCK_OK);
    cr_assert_eq(redlock_config_node_set_auth(cfg, 0, "user", "secret"), REDLOCK_OK);
    cr_assert_eq(redlock_config_node_set_db(cfg, 0, 5), REDLOCK_OK);
    cr_assert_eq(redlock_config_node_set_timeouts(cfg, 1, 700, 70), REDLOCK_OK);
    cr_assert_eq(redlock_config_set(cfg, REDLOCK_RETRY_COUNT, 9), REDLOCK_OK);
    cr_assert_eq(redlock_config_set_drift_factor(cfg, 0.25), REDLOCK_OK);

    redlock_config *copy = NULL;
    cr_assert_eq(redlock_config_copy(cfg, &copy), REDLOCK_OK);
    cr_assert_neq(copy->nodes, cfg->nodes);
    cr_assert_neq(copy->nodes[0].password, cfg->nodes[0].password);
    redlock_config_free(cfg); /* the copy must not share anything with it */

    cr_assert_eq(redlock_config_node_count(copy), 2);
    cr_assert_str_eq(redlock_config_node_name(copy, 0), "127.0.0.1:7001");
    cr_assert_str_eq(redlock_config_node_name(copy, 1), "unix:/tmp/x.sock");
    cr_assert_str_eq(copy->nodes[0].host, "127.0.0.1");
    cr_assert_eq(copy->nodes[0].port, 7001);
    cr_assert_str_eq(copy->nodes[0].username, "user");
    cr_assert_str_eq(copy->nodes[0].password, "secret");
    cr_assert_eq(copy->nodes[0].db, 5);
    cr_assert_str_eq(copy->nodes[1].unix_path, "/tmp/x.sock");
    cr_assert_eq(copy->nodes[1].connect_timeout_ms, 700);
    cr_assert_eq(copy->nodes[1].command_timeout_ms, 70);
    int64_t retries = 0;
    redlock_config_get(copy, REDLOCK_RETRY_COUNT, &retries);
    cr_assert_eq(retries, 9);
    cr_assert_eq(redlock_config_drift_factor(copy), 0.25);
    /* The copy can still grow. */
    cr_assert_eq(redlock_config_add_tcp_node(copy, "127.0.0.1", 7002, NULL), REDLOCK_OK);
    redlock_config_free(copy);
}

Test(config, copy_of_empty_config_and_bad_arguments)
{
    redlock_config *cfg = new_config();
    redlock_config *copy = NULL;
    cr_assert_eq(redlock_config_copy(cfg, &copy), REDLOCK_OK);
    cr_assert_eq(redlock_config_node_count(copy), 0);
    cr_assert_eq(redlock_config_add_tcp_node(copy, "127.0.0.1", 7001, NULL), REDLOCK_OK);
    redlock_config_free(copy);

    copy = cfg; /* must be reset to NULL on failure */
    cr_assert_eq(redlock_config_copy(NULL, &copy), REDLOCK_EINVAL);
    cr_assert_null(copy);
    cr_assert_eq(redlock_config_copy(cfg, NULL), REDLOCK_EINVAL);
    redlock_config_free(cfg);
}

Test(config, set_log_level_range)
{
    redlock_config *cfg = new_config();
    cr_assert_eq(redlock_config_set_log(cfg, NULL, NULL, REDLOCK_LOG_DEBUG), REDLOCK_OK);
    cr_assert_eq(redlock_config_set_log(cfg, NULL, NULL, REDLOCK_LOG_ERROR), REDLOCK_OK);
    cr_assert_eq(redlock_config_set_log(cfg, NULL, NULL, REDLOCK_LOG_ERROR - 1),
                 REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_set_log(cfg, NULL, NULL, REDLOCK_LOG_DEBUG + 1),
                 REDLOCK_EINVAL);
    cr_assert_eq(redlock_config_set_log(NULL, NULL, NULL, REDLOCK_LOG_WARN), REDLOCK_EINVAL);
    redlock_config_free(cfg);
}

Test(config, free_null_is_fine)
{
    redlock_config_free(NULL);
}
