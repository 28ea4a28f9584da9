/* SPDX-License-Identifier: BSD-3-Clause */
/* The asynchronous client: its masters, its operations in flight, the locks
 * it releases when freed, and its lifetime (freed by the user, kept alive by
 * rounds still settling and connections still draining). */
#include "client/client.h"
#include "config/config_internal.h"
#include "lock/fence_seed.h"
#include "lock/release.h"
#include "master/clock_probe.h"
#include "master/master.h"
#include "master/subscriber.h"
#include "master/tls.h"
#include "redlock/redlock.h"
#include "round/owed_release.h"
#include "round/quorum.h"
#include "util/list.h"
#include "util/log.h"
#include "util/random.h"
#include "util/util.h"

#include <stdlib.h>

void rl_client_ref(redlock_client *client)
{
    client->refs++;
}

void rl_client_unref(redlock_client *client)
{
    if (--client->refs > 0)
        return;
    rl_owed_release_clear(client);
    rl_fence_seed_free(client);
    free(client->subscribers);
    free(client->masters);
    rl_tls_contexts_free(client->tls, client->n);
    redlock_config_free(client->cfg);
    rl_random_pool_clear(&client->random);
    free(client);
}

void rl_client_enter(redlock_client *client)
{
    client->refs++;
    client->entered++;
}

static void client_close(redlock_client *client);

void rl_client_leave(redlock_client *client)
{
    if (--client->entered == 0 && client->free_deferred) {
        client->free_deferred = false;
        client_close(client);
    }
    rl_client_unref(client);
}

bool rl_client_entered(const redlock_client *client)
{
    return client->entered > 0;
}

void rl_client_add_op(redlock_client *client, rl_op *op)
{
    rl_list_push_back(&client->ops, &op->link);
}

void rl_client_remove_op(rl_op *op)
{
    rl_list_remove(&op->link);
}

const struct rl_tls_ctx *rl_client_tls(const redlock_client *client, const rl_node *node)
{
    return client->tls != NULL ? client->tls[node - client->cfg->nodes] : NULL;
}

bool rl_client_behind(const redlock_client *client)
{
    int64_t now = rl_now_us();
    size_t behind = 0;
    for (size_t i = 0; i < client->n; i++)
        if (rl_master_behind(&client->masters[i], now))
            behind++;
    return client->n - behind < client->quorum;
}

int64_t rl_client_clock_wait(const redlock_client *client, int64_t now_us, int64_t started_us)
{
    if (rl_client_setting(client, REDLOCK_CLOCK_WARMUP_MS) == 0)
        return 0; /* no warm-up asked */
    int64_t limit = started_us +
                    (rl_client_setting(client, REDLOCK_CONNECT_TIMEOUT_MS) +
                     rl_client_setting(client, REDLOCK_CLOCK_WARMUP_MS)) * 1000 +
                    4 * RL_PROBE_MIN_GAP_US;
    if (now_us >= limit)
        return 0;
    /* Every connected master checked; one still connecting is waited for
     * only while too few are checked to make a quorum without it. */
    unsigned warm = 0;
    unsigned warming = 0;
    unsigned connecting = 0;
    for (size_t i = 0; i < client->n; i++) {
        switch (rl_clock_probe_warmth(&client->masters[i])) {
        case RL_PROBE_WARM:
            warm++;
            break;
        case RL_PROBE_WARMING:
            warming++;
            break;
        case RL_PROBE_CONNECTING:
            connecting++;
            break;
        default:
            break;
        }
    }
    if (warming == 0 && (connecting == 0 || warm >= client->quorum))
        return 0;
    int64_t at = now_us + RL_PROBE_MIN_GAP_US;
    return at < limit ? at : limit;
}

int redlock_client_clocks_checked(const redlock_client *client, bool *checked)
{
    if (client == NULL || checked == NULL)
        return REDLOCK_EINVAL;
    *checked = rl_client_clock_wait(client, rl_now_us(), client->created_us) == 0;
    return REDLOCK_OK;
}

int64_t rl_client_setting(const redlock_client *client, redlock_setting key)
{
    return client->cfg->settings[key];
}

int redlock_client_new(redlock_client **out, const redlock_config *cfg, struct ev_loop *loop)
{
    if (out == NULL)
        return REDLOCK_EINVAL;
    *out = NULL;
    if (cfg == NULL || loop == NULL || cfg->node_count == 0)
        return REDLOCK_EINVAL;
    rl_logger log = {cfg->log_fn, cfg->log_arg, cfg->log_level};
    rl_config_problem problem;
    if (rl_config_find_problem(cfg, &problem)) {
        rl_log(&log, REDLOCK_LOG_ERROR, "invalid configuration: %s", problem.text);
        return REDLOCK_ECONFIG;
    }

    redlock_client *client = calloc(1, sizeof(*client));
    if (client == NULL)
        return REDLOCK_ENOMEM;
    if (redlock_config_copy(cfg, &client->cfg) != REDLOCK_OK ||
        (client->masters = calloc(cfg->node_count, sizeof(rl_master))) == NULL) {
        redlock_config_free(client->cfg);
        free(client);
        return REDLOCK_ENOMEM;
    }
    client->loop = loop;
    client->log = log;
    client->n = cfg->node_count;
    client->quorum = rl_quorum_of((unsigned)client->n);
    client->created_us = rl_now_us();
    client->refs = 1;
    rl_list_init(&client->ops);
    rl_list_init(&client->owed);
    rl_list_init(&client->locks);
    rl_list_init(&client->seed_waiters);
    rl_random_pool_init(&client->random);
    if (rl_random_pool_value(&client->random, client->id) != 0) {
        rl_client_unref(client);
        return REDLOCK_ESYS;
    }

    int rc = rl_tls_contexts_new(client->cfg, &log, &client->tls);
    if (rc != REDLOCK_OK) {
        rl_client_unref(client);
        return rc;
    }
    rl_config_warn(cfg, &log);
    for (size_t i = 0; i < client->n; i++)
        rl_master_init(&client->masters[i], client, &client->cfg->nodes[i]);
    if (rl_subscribers_init(client) != REDLOCK_OK) {
        rl_client_unref(client);
        return REDLOCK_ENOMEM;
    }
    rl_client_enter(client);
    for (size_t i = 0; i < client->n; i++)
        rl_master_start(&client->masters[i]);
    rl_client_leave(client);
    *out = client;
    return REDLOCK_OK;
}

/* The free itself, on an entry of its own as it calls back (not
 * rl_client_enter(): its leave would come back here). */
static void client_close(redlock_client *client)
{
    client->refs++;
    client->entered++;
    /* First, and without calling back: stop auto-extensions and send the
     * releases of the locks still held. */
    rl_release_owned_locks(client);
    rl_link *link;
    while ((link = rl_list_pop_front(&client->ops)) != NULL) {
        rl_op *op = rl_container_of(link, rl_op, link);
        op->cancel(op);
    }
    rl_subscribers_close(client);
    for (size_t i = 0; i < client->n; i++)
        rl_master_close(&client->masters[i]);
    client->entered--;
    client->refs--;          /* the user's: never the last, the entry's is held */
    rl_client_unref(client); /* the entry's */
}

void redlock_client_free(redlock_client *client)
{
    if (client == NULL || client->closing)
        return;
    client->closing = true; /* from now on, nothing new starts */
    if (client->entered > 0)
        client->free_deferred = true; /* called back: the frames below still use it */
    else
        client_close(client);
}
