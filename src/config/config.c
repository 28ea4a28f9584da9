/* SPDX-License-Identifier: BSD-3-Clause */
/* The config object built in code: settings with ranges, and the node list. */
#include "config/config_internal.h"
#include "redlock/redlock.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* REDLOCK_SETTING_MAP, indexed by redlock_setting (docs/config.md). */
const rl_setting_info rl_setting_table[RL_SETTING_COUNT] = {
#define RL_SETTING_INFO_(name, key, min, max, def) [REDLOCK_##name] = {key, min, max, def},
    REDLOCK_SETTING_MAP(RL_SETTING_INFO_)
#undef RL_SETTING_INFO_
};

static bool setting_valid(redlock_setting key)
{
    return (int)key >= 0 && (int)key < RL_SETTING_COUNT;
}

int redlock_config_new(redlock_config **out)
{
    if (out == NULL)
        return REDLOCK_EINVAL;
    *out = NULL;
    redlock_config *cfg = calloc(1, sizeof(*cfg));
    if (cfg == NULL)
        return REDLOCK_ENOMEM;
    for (int i = 0; i < RL_SETTING_COUNT; i++)
        cfg->settings[i] = rl_setting_table[i].def;
    cfg->drift_factor = RL_DRIFT_FACTOR_DEFAULT;
    cfg->log_level = REDLOCK_LOG_WARN;
    *out = cfg;
    return REDLOCK_OK;
}

static void node_clear(rl_node *node)
{
    free(node->host);
    free(node->unix_path);
    free(node->username);
    rl_free_secret(node->password);
    free(node->name);
    rl_tls_clear(&node->tls);
    memset(node, 0, sizeof(*node));
    node->tls.enabled = RL_TLS_INHERIT;
    node->durable = -1;
}

void redlock_config_clear_nodes(redlock_config *cfg)
{
    if (cfg == NULL)
        return;
    for (size_t i = 0; i < cfg->node_count; i++)
        node_clear(&cfg->nodes[i]);
    cfg->node_count = 0;
}

void redlock_config_free(redlock_config *cfg)
{
    if (cfg == NULL)
        return;
    redlock_config_clear_nodes(cfg);
    free(cfg->nodes);
    free(cfg->exposed_path);
    rl_tls_clear(&cfg->tls);
    free(cfg);
}

static int node_copy(rl_node *dst, const rl_node *src)
{
    memset(dst, 0, sizeof(*dst));
    dst->port = src->port;
    dst->db = src->db;
    dst->connect_timeout_ms = src->connect_timeout_ms;
    dst->command_timeout_ms = src->command_timeout_ms;
    dst->durable = src->durable;
    if ((src->host && !(dst->host = strdup(src->host))) ||
        (src->unix_path && !(dst->unix_path = strdup(src->unix_path))) ||
        (src->username && !(dst->username = strdup(src->username))) ||
        (src->password && !(dst->password = strdup(src->password))) ||
        !(dst->name = strdup(src->name)) || rl_tls_copy(&dst->tls, &src->tls) != REDLOCK_OK) {
        node_clear(dst);
        return REDLOCK_ENOMEM;
    }
    return REDLOCK_OK;
}

int redlock_config_copy(const redlock_config *cfg, redlock_config **out)
{
    if (out == NULL)
        return REDLOCK_EINVAL;
    *out = NULL;
    if (cfg == NULL)
        return REDLOCK_EINVAL;
    redlock_config *copy = calloc(1, sizeof(*copy));
    if (copy == NULL)
        return REDLOCK_ENOMEM;
    *copy = *cfg;
    copy->nodes = NULL;
    copy->node_count = 0;
    copy->node_cap = 0;
    copy->exposed_path = NULL;
    if (rl_tls_copy(&copy->tls, &cfg->tls) != REDLOCK_OK) {
        free(copy);
        return REDLOCK_ENOMEM;
    }
    if (cfg->node_count > 0) {
        copy->nodes = calloc(cfg->node_count, sizeof(rl_node));
        if (copy->nodes == NULL) {
            rl_tls_clear(&copy->tls);
            free(copy);
            return REDLOCK_ENOMEM;
        }
        copy->node_cap = cfg->node_count;
        for (size_t i = 0; i < cfg->node_count; i++) {
            if (node_copy(&copy->nodes[i], &cfg->nodes[i]) != REDLOCK_OK) {
                redlock_config_free(copy);
                return REDLOCK_ENOMEM;
            }
            copy->node_count++;
        }
    }
    if (cfg->exposed_path != NULL && (copy->exposed_path = strdup(cfg->exposed_path)) == NULL) {
        redlock_config_free(copy);
        return REDLOCK_ENOMEM;
    }
    *out = copy;
    return REDLOCK_OK;
}

const char *redlock_config_password_exposed(const redlock_config *cfg)
{
    return cfg != NULL ? cfg->exposed_path : NULL;
}

bool rl_setting_in_range(redlock_setting key, int64_t value)
{
    return value >= rl_setting_table[key].min && value <= rl_setting_table[key].max;
}

int redlock_config_set(redlock_config *cfg, redlock_setting key, int64_t value)
{
    if (cfg == NULL || !setting_valid(key) || !rl_setting_in_range(key, value))
        return REDLOCK_EINVAL;
    cfg->settings[key] = value;
    return REDLOCK_OK;
}

int redlock_config_get(const redlock_config *cfg, redlock_setting key, int64_t *value)
{
    if (cfg == NULL || value == NULL || !setting_valid(key))
        return REDLOCK_EINVAL;
    *value = cfg->settings[key];
    return REDLOCK_OK;
}

const char *redlock_setting_name(redlock_setting key)
{
    return setting_valid(key) ? rl_setting_table[key].name : NULL;
}

int64_t rl_drift_us(int64_t ttl_ms, double drift_factor)
{
    return (int64_t)((double)ttl_ms * drift_factor * 1000.0) + 2000;
}

int redlock_config_set_drift_factor(redlock_config *cfg, double factor)
{
    /* Written so that NaN fails too. */
    if (cfg == NULL || !(factor >= 0.0 && factor < 1.0))
        return REDLOCK_EINVAL;
    cfg->drift_factor = factor;
    return REDLOCK_OK;
}

double redlock_config_drift_factor(const redlock_config *cfg)
{
    return cfg ? cfg->drift_factor : RL_DRIFT_FACTOR_DEFAULT;
}

int redlock_config_set_log(redlock_config *cfg, redlock_log_fn fn, void *arg, int min_level)
{
    if (cfg == NULL || min_level < REDLOCK_LOG_ERROR || min_level > REDLOCK_LOG_DEBUG)
        return REDLOCK_EINVAL;
    cfg->log_fn = fn;
    cfg->log_arg = arg;
    cfg->log_level = min_level;
    return REDLOCK_OK;
}

long rl_config_find_node(const redlock_config *cfg, const char *host, int port,
                         const char *unix_path)
{
    for (size_t i = 0; i < cfg->node_count; i++) {
        const rl_node *n = &cfg->nodes[i];
        if (unix_path != NULL) {
            if (n->unix_path != NULL && strcmp(n->unix_path, unix_path) == 0)
                return (long)i;
        } else if (n->host != NULL && n->port == port && strcasecmp(n->host, host) == 0) {
            return (long)i;
        }
    }
    return -1;
}

/* Printable, no spaces: what can appear in a node name and a log line. */
static bool text_is_clean(const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c <= ' ' || c == 0x7f)
            return false;
    }
    return true;
}

static int node_append(redlock_config *cfg, const rl_node *node, size_t *index)
{
    if (cfg->node_count == cfg->node_cap) {
        size_t cap = cfg->node_cap ? cfg->node_cap * 2 : 8;
        rl_node *nodes = realloc(cfg->nodes, cap * sizeof(rl_node));
        if (nodes == NULL)
            return REDLOCK_ENOMEM;
        cfg->nodes = nodes;
        cfg->node_cap = cap;
    }
    cfg->nodes[cfg->node_count] = *node;
    if (index != NULL)
        *index = cfg->node_count;
    cfg->node_count++;
    return REDLOCK_OK;
}

int redlock_config_add_tcp_node(redlock_config *cfg, const char *host, int port, size_t *index)
{
    if (cfg == NULL || host == NULL || host[0] == '\0' || strlen(host) > RL_HOST_MAX ||
        !text_is_clean(host) || port < 1 || port > RL_PORT_MAX ||
        cfg->node_count >= REDLOCK_MAX_NODES || rl_config_find_node(cfg, host, port, NULL) >= 0)
        return REDLOCK_EINVAL;
    rl_node node = {.port = port, .tls.enabled = RL_TLS_INHERIT, .durable = -1};
    node.host = strdup(host);
    /* IPv6 literals get brackets so the port stays readable. */
    node.name = strchr(host, ':') ? rl_strprintf("[%s]:%d", host, port)
                                  : rl_strprintf("%s:%d", host, port);
    if (node.host == NULL || node.name == NULL || node_append(cfg, &node, index) != REDLOCK_OK) {
        node_clear(&node);
        return REDLOCK_ENOMEM;
    }
    return REDLOCK_OK;
}

int redlock_config_add_unix_node(redlock_config *cfg, const char *path, size_t *index)
{
    if (cfg == NULL || path == NULL || path[0] == '\0' || strlen(path) > RL_UNIX_PATH_MAX ||
        !text_is_clean(path) || cfg->node_count >= REDLOCK_MAX_NODES ||
        rl_config_find_node(cfg, NULL, 0, path) >= 0)
        return REDLOCK_EINVAL;
    rl_node node = {.tls.enabled = RL_TLS_INHERIT, .durable = -1};
    node.unix_path = strdup(path);
    node.name = rl_strprintf("unix:%s", path);
    if (node.unix_path == NULL || node.name == NULL ||
        node_append(cfg, &node, index) != REDLOCK_OK) {
        node_clear(&node);
        return REDLOCK_ENOMEM;
    }
    return REDLOCK_OK;
}

void rl_config_drop_last_node(redlock_config *cfg)
{
    if (cfg->node_count > 0)
        node_clear(&cfg->nodes[--cfg->node_count]);
}

static rl_node *node_at(redlock_config *cfg, size_t index)
{
    return (cfg != NULL && index < cfg->node_count) ? &cfg->nodes[index] : NULL;
}

int redlock_config_node_set_auth(redlock_config *cfg, size_t index, const char *username,
                                 const char *password)
{
    rl_node *node = node_at(cfg, index);
    if (node == NULL)
        return REDLOCK_EINVAL;
    if (password == NULL) {
        if (username != NULL)
            return REDLOCK_EINVAL; /* a username needs a password */
        free(node->username);
        rl_free_secret(node->password);
        node->username = node->password = NULL;
        return REDLOCK_OK;
    }
    if (password[0] == '\0' || strlen(password) > RL_AUTH_MAX ||
        (username != NULL && (username[0] == '\0' || strlen(username) > RL_AUTH_MAX)))
        return REDLOCK_EINVAL;
    char *user_copy = username ? strdup(username) : NULL;
    char *password_copy = strdup(password);
    if (password_copy == NULL || (username != NULL && user_copy == NULL)) {
        free(user_copy);
        rl_free_secret(password_copy);
        return REDLOCK_ENOMEM;
    }
    free(node->username);
    rl_free_secret(node->password);
    node->username = user_copy;
    node->password = password_copy;
    return REDLOCK_OK;
}

int redlock_config_node_set_db(redlock_config *cfg, size_t index, int db)
{
    rl_node *node = node_at(cfg, index);
    if (node == NULL || db < 0 || db > RL_DB_MAX)
        return REDLOCK_EINVAL;
    node->db = db;
    return REDLOCK_OK;
}

int redlock_config_node_set_durable(redlock_config *cfg, size_t index, int durable)
{
    rl_node *node = node_at(cfg, index);
    if (node == NULL || durable < -1 || durable > 1)
        return REDLOCK_EINVAL;
    node->durable = durable;
    return REDLOCK_OK;
}

int redlock_config_node_set_timeouts(redlock_config *cfg, size_t index,
                                     int64_t connect_timeout_ms, int64_t command_timeout_ms)
{
    rl_node *node = node_at(cfg, index);
    if (node == NULL ||
        (connect_timeout_ms != 0 &&
         !rl_setting_in_range(REDLOCK_CONNECT_TIMEOUT_MS, connect_timeout_ms)) ||
        (command_timeout_ms != 0 &&
         !rl_setting_in_range(REDLOCK_COMMAND_TIMEOUT_MS, command_timeout_ms)))
        return REDLOCK_EINVAL;
    node->connect_timeout_ms = connect_timeout_ms;
    node->command_timeout_ms = command_timeout_ms;
    return REDLOCK_OK;
}

size_t redlock_config_node_count(const redlock_config *cfg)
{
    return cfg ? cfg->node_count : 0;
}

const char *redlock_config_node_name(const redlock_config *cfg, size_t index)
{
    return (cfg != NULL && index < cfg->node_count) ? cfg->nodes[index].name : NULL;
}

bool rl_node_durable(const redlock_config *cfg, const rl_node *node)
{
    return node->durable >= 0 ? node->durable == 1 : cfg->settings[REDLOCK_DURABLE] != 0;
}

int64_t rl_config_max_ttl_ms(const redlock_config *cfg)
{
    int64_t max = cfg->settings[REDLOCK_MAX_TTL_MS];
    return max > 0 ? max : cfg->settings[REDLOCK_TTL_MS];
}

int rl_config_check_ttl(const redlock_config *cfg, int64_t ttl_ms)
{
    if (ttl_ms <= rl_config_max_ttl_ms(cfg))
        return REDLOCK_OK;
    /* Masters that all keep their keys are never excluded: no bound. */
    for (size_t i = 0; i < cfg->node_count; i++)
        if (!rl_node_durable(cfg, &cfg->nodes[i]))
            return REDLOCK_EMAXTTL;
    return REDLOCK_OK;
}

int64_t rl_node_connect_timeout_ms(const redlock_config *cfg, const rl_node *node)
{
    return node->connect_timeout_ms ? node->connect_timeout_ms
                                    : cfg->settings[REDLOCK_CONNECT_TIMEOUT_MS];
}

int64_t rl_node_command_timeout_ms(const redlock_config *cfg, const rl_node *node)
{
    return node->command_timeout_ms ? node->command_timeout_ms
                                    : cfg->settings[REDLOCK_COMMAND_TIMEOUT_MS];
}
