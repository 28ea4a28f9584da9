/* SPDX-License-Identifier: BSD-3-Clause */
/* Whether a config can work: the cross-setting checks that refuse a config
 * no lock could ever be valid with, and the warnings about what is merely
 * risky. The YAML loader reports the refusals at the keys to blame; the
 * clients refuse and warn through the log when they are created. */
#include "config/config_internal.h"
#include "redlock/redlock.h"
#include "util/log.h"
#include "util/message_buffer.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

RL_PRINTF(2, 3)
static void describe(rl_config_problem *p, const char *fmt, ...)
{
    rl_msg_buf msg;
    rl_msg_init(&msg, p->text, sizeof(p->text));
    va_list ap;
    va_start(ap, fmt);
    rl_msg_vprintf(&msg, fmt, ap);
    va_end(ap);
}

/* Starts a problem blamed on the top-level keys first, then second (-1:
 * none). */
static void blame(rl_config_problem *p, int first, int second)
{
    memset(p, 0, sizeof(*p));
    p->node = -1;
    p->keys[p->key_count++] = first;
    if (second >= 0)
        p->keys[p->key_count++] = second;
}

/* A timeout no shorter than the TTL: a lock could expire before a master
 * has connected or answered. own: the node's own value (0: none), at
 * nodes[node]. */
static bool timeout_too_long(const redlock_config *cfg, redlock_setting key, long node,
                             int64_t own, rl_config_problem *p)
{
    int64_t ttl = cfg->settings[REDLOCK_TTL_MS];
    int64_t timeout = node < 0 ? cfg->settings[key] : own;
    if (timeout < ttl)
        return false;
    const char *why = key == REDLOCK_CONNECT_TIMEOUT_MS ? "connect" : "answer";
    blame(p, key, REDLOCK_TTL_MS);
    if (node < 0) {
        describe(p,
                 "%s (%" PRId64 ") must be less than ttl_ms (%" PRId64
                 "), or a lock can expire before its masters %s",
                 rl_setting_table[key].name, timeout, ttl, why);
    } else {
        p->node = node;
        p->node_key = key;
        describe(p,
                 "nodes[%ld].%s (%" PRId64 ") must be less than ttl_ms (%" PRId64
                 "), or a lock can expire before its masters %s",
                 node, rl_setting_table[key].name, timeout, ttl, why);
    }
    return true;
}

bool rl_config_find_problem(const redlock_config *cfg, rl_config_problem *p)
{
    if (cfg->settings[REDLOCK_RECONNECT_MIN_MS] > cfg->settings[REDLOCK_RECONNECT_MAX_MS]) {
        blame(p, REDLOCK_RECONNECT_MIN_MS, REDLOCK_RECONNECT_MAX_MS);
        describe(p, "reconnect_min_ms is greater than reconnect_max_ms");
        return true;
    }
    static const redlock_setting timeouts[] = {REDLOCK_COMMAND_TIMEOUT_MS,
                                               REDLOCK_CONNECT_TIMEOUT_MS};
    for (size_t k = 0; k < 2; k++) {
        if (timeout_too_long(cfg, timeouts[k], -1, 0, p))
            return true;
        for (size_t i = 0; i < cfg->node_count; i++) {
            const rl_node *n = &cfg->nodes[i];
            int64_t own = timeouts[k] == REDLOCK_CONNECT_TIMEOUT_MS ? n->connect_timeout_ms
                                                                    : n->command_timeout_ms;
            if (own != 0 && timeout_too_long(cfg, timeouts[k], (long)i, own, p))
                return true;
        }
    }
    int64_t ttl = cfg->settings[REDLOCK_TTL_MS];
    int64_t drift_us = rl_drift_us(ttl, cfg->drift_factor);
    if (drift_us >= ttl * 1000) {
        blame(p, RL_KEY_DRIFT_FACTOR, REDLOCK_TTL_MS);
        describe(p,
                 "drift_factor (%g) leaves no validity with ttl_ms (%" PRId64
                 "): ttl_ms * drift_factor + 2 ms (%g ms) must be less than ttl_ms",
                 cfg->drift_factor, ttl, (double)drift_us / 1000.0);
        return true;
    }
    /* Every acquire with the default TTL would be refused (a program that
     * never read about max_ttl_ms would meet REDLOCK_EMAXTTL only then). */
    if (rl_config_check_ttl(cfg, ttl) != REDLOCK_OK) {
        blame(p, REDLOCK_MAX_TTL_MS, REDLOCK_TTL_MS);
        describe(p,
                 "ttl_ms (%" PRId64 ") is more than max_ttl_ms (%" PRId64
                 ") with a master not durable: an acquire with the default TTL would be "
                 "refused (REDLOCK_EMAXTTL)",
                 ttl, cfg->settings[REDLOCK_MAX_TTL_MS]);
        return true;
    }
    return false;
}

/* A command timeout above a tenth of the TTL: a slow master may leave the
 * holder little of the lock's validity. */
#define RL_RISK_OF_SLOW_MASTERS "is more than a tenth of ttl_ms (%" PRId64 "): " \
                                "a slow master leaves a lock little validity"

void rl_config_warn(const redlock_config *cfg, const rl_logger *log)
{
    if (cfg->exposed_path != NULL)
        rl_log(log, REDLOCK_LOG_WARN,
               "%s holds a password and is readable by others (chmod o-r %s)", cfg->exposed_path,
               cfg->exposed_path);
    size_t n = cfg->node_count;
    if (n % 2 == 0)
        rl_log(log, REDLOCK_LOG_WARN,
               "%zu masters: an even number tolerates no more failures than %zu would; "
               "an odd number is recommended",
               n, n - 1);
    int64_t ttl = cfg->settings[REDLOCK_TTL_MS];
    int64_t command = cfg->settings[REDLOCK_COMMAND_TIMEOUT_MS];
    if (command * 10 > ttl)
        rl_log(log, REDLOCK_LOG_WARN, "command_timeout_ms (%" PRId64 ") " RL_RISK_OF_SLOW_MASTERS,
               command, ttl);
    for (size_t i = 0; i < n; i++) {
        int64_t own = cfg->nodes[i].command_timeout_ms;
        if (own != 0 && own * 10 > ttl)
            rl_log(log, REDLOCK_LOG_WARN,
                   "nodes[%zu].command_timeout_ms (%" PRId64 ") " RL_RISK_OF_SLOW_MASTERS, i, own,
                   ttl);
    }
}
