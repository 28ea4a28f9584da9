/* SPDX-License-Identifier: BSD-3-Clause */
/* The config object's layout and its settings table, shared by config.c
 * (building in code), config_yaml.c (loading), config_check.c (checking)
 * and client.c (reading). */
#ifndef REDLOCK_CONFIG_INTERNAL_H
#define REDLOCK_CONFIG_INTERNAL_H

#include "redlock/redlock.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Entries of redlock_setting: one per row of REDLOCK_SETTING_MAP. */
enum rl_setting_rows {
#define RL_SETTING_ROW_(name, key, min, max, def) RL_SETTING_ROW_##name,
    REDLOCK_SETTING_MAP(RL_SETTING_ROW_)
#undef RL_SETTING_ROW_
    RL_SETTING_COUNT
};

/* Name, range and default of one integer setting: a row of
 * REDLOCK_SETTING_MAP, indexed by redlock_setting. */
typedef struct rl_setting_info {
    const char *name; /* the YAML key */
    int64_t min;
    int64_t max;
    int64_t def;
} rl_setting_info;

extern const rl_setting_info rl_setting_table[RL_SETTING_COUNT];

/* Whether value is within the setting's range (key must be valid). */
bool rl_setting_in_range(redlock_setting key, int64_t value);

#define RL_DRIFT_FACTOR_DEFAULT 0.01
#define RL_PORT_MAX 65535
#define RL_DB_MAX 1000000
#define RL_HOST_MAX 255      /* bytes in a host name */
#define RL_UNIX_PATH_MAX 107 /* bytes in a socket path: sizeof(sun_path) - 1 */
#define RL_AUTH_MAX 4096     /* bytes in a username or password */

#define RL_TLS_PATH_MAX 4096 /* bytes in a TLS file or directory name */
#define RL_TLS_INHERIT (-1)  /* a node's rl_tls.enabled: as the config's */

/* TLS options as set (config_tls.c); strings owned, NULL when not set. */
typedef struct rl_tls {
    int enabled; /* 1, 0, or RL_TLS_INHERIT (nodes only) */
    char *ca_file;
    char *ca_dir;
    char *cert_file;
    char *key_file;
    char *server_name;
} rl_tls;

typedef struct rl_node {
    char *host;                 /* TCP host, or NULL for a unix socket */
    int port;                   /* TCP port */
    char *unix_path;            /* unix socket path, or NULL */
    char *username;             /* ACL user, or NULL */
    char *password;             /* AUTH password, or NULL; wiped on free */
    int db;                     /* SELECT db, 0 by default */
    int64_t connect_timeout_ms; /* 0: the config-wide value */
    int64_t command_timeout_ms; /* 0: the config-wide value */
    char *name;                 /* "host:port" or "unix:/path" */
    rl_tls tls;                 /* the node's own; enabled RL_TLS_INHERIT by default */
    int durable;                /* 1, 0, or -1: the config's `durable` setting */
} rl_node;

struct redlock_config {
    rl_node *nodes;
    size_t node_count;
    size_t node_cap;
    int64_t settings[RL_SETTING_COUNT];
    double drift_factor;
    redlock_log_fn log_fn;
    void *log_arg;
    int log_level;
    rl_tls tls; /* config-wide: enabled 0 by default */
    /* The clock probe's life (PX), 0: RL_PROBE_PX_MS. Not a setting: the
     * tests shorten it to see a probe outlive it (clock_probe.h). */
    int64_t probe_px_ms;
    /* The file the config was loaded from when it holds a password inline
     * (`password`, or a url with one) and others may read it; else NULL.
     * Warned about when a client starts (rl_config_warn()). */
    char *exposed_path;
};

/* Whether the node keeps its keys across a restart: its own `durable`,
 * else the config's. */
bool rl_node_durable(const redlock_config *cfg, const rl_node *node);
/* The longest TTL an acquire or extension may ask: max_ttl_ms, or ttl_ms
 * when it is 0. A master restarted empty counts this long after. */
int64_t rl_config_max_ttl_ms(const redlock_config *cfg);
/* REDLOCK_EMAXTTL when an acquire or extension asking ttl_ms would outlive
 * the exclusion of a master restarted empty: over rl_config_max_ttl_ms()
 * with a master not durable. Else REDLOCK_OK. */
int rl_config_check_ttl(const redlock_config *cfg, int64_t ttl_ms);

/* Effective per-node timeouts (the node's own, else the config's). */
int64_t rl_node_connect_timeout_ms(const redlock_config *cfg, const rl_node *node);
int64_t rl_node_command_timeout_ms(const redlock_config *cfg, const rl_node *node);

/* The TLS a node uses: its own options, each NULL one (and enabled -1)
 * from the config-wide ones; enabled is 0 or 1, and always 0 for a unix
 * socket. Strings point into cfg. */
void rl_node_tls(const redlock_config *cfg, const rl_node *node, redlock_tls_options *out);
/* Deep copy (ENOMEM leaves dst cleared), and free. */
int rl_tls_copy(rl_tls *dst, const rl_tls *src);
void rl_tls_clear(rl_tls *tls);
/* NULL when this build has TLS, else why not (one sentence). */
const char *rl_tls_missing(void);

/* Index of the node with the same address as host:port or path, or -1. */
long rl_config_find_node(const redlock_config *cfg, const char *host, int port,
                         const char *unix_path);

/* Removes the node added last, wiping its password: for callers that add
 * a node, then fail to set it up. */
void rl_config_drop_last_node(redlock_config *cfg);

/* The keys the YAML loader takes (config_yaml.c), for the tool's manual:
 * how many slots each table has (top-level keys, or a node's), and the
 * name in slot i, copied into buf; NULL for a slot without a key (a
 * setting without a duration form) or past the end. */
size_t rl_yaml_key_count(bool node);
const char *rl_yaml_key_name(bool node, size_t i, char *buf, size_t size);

/* The top-level keys a problem is blamed on: redlock_setting values, and: */
#define RL_KEY_DRIFT_FACTOR RL_SETTING_COUNT

/* Why a config can never work, and what to blame (config_check.c). */
typedef struct rl_config_problem {
    char text[200];           /* one line, without a position */
    int keys[2];              /* top-level keys at fault, the most to blame first */
    size_t key_count;
    long node;                /* a node whose own timeout is at fault, else -1 */
    redlock_setting node_key; /* that timeout */
} rl_config_problem;

/* The clock drift allowance drift_factor gives a lock of ttl_ms: ttl *
 * drift_factor + 2 ms, in microseconds (docs/design.md, Acquire). */
int64_t rl_drift_us(int64_t ttl_ms, double drift_factor);

/* Cross-setting checks, in this order: reconnect_min_ms <= reconnect_max_ms;
 * the command, then the connect timeout (config-wide, then each node's own)
 * below ttl_ms; the drift allowance (ttl_ms * drift_factor + 2 ms) below
 * ttl_ms; ttl_ms at most a non-zero max_ttl_ms unless every master is
 * durable (rl_config_check_ttl()). Returns false when the config can work, else true with the first
 * problem in *problem. */
bool rl_config_find_problem(const redlock_config *cfg, rl_config_problem *problem);

struct rl_logger;
/* Logs, at REDLOCK_LOG_WARN, what can work but is risky: an even number of
 * masters, a command timeout (config-wide or a node's own) above ttl_ms / 10. */
void rl_config_warn(const redlock_config *cfg, const struct rl_logger *log);

#endif
