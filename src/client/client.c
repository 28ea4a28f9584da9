/* SPDX-License-Identifier: BSD-3-Clause */
/* The asynchronous client: its masters, its operations in flight, the locks
 * it releases when freed, and its lifetime (freed by the user, kept alive by
 * rounds still settling and connections still draining). */
#include "client/sync.h"
#include "config/config_internal.h"
#include "context/context.h"
#include "lock/clock_loss.h"
#include "lock/fence_seed.h"
#include "lock/release.h"
#include "master/master.h"
#include "master/masters.h"
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

/* What the last reference frees above the context (which frees the config
 * copy, the random pool and the client after). */
static void client_destroy(redlock_client *client)
{
    rl_owed_release_clear(client);
    rl_fence_seed_free(client);
    free(client->subscribers);
    free(client->masters);
    rl_tls_contexts_free(client->tls, client->n);
}

static void client_close(redlock_client *client);

static const rl_client_hooks client_hooks = {
    .destroy = client_destroy,
    .close = client_close,
    .clock_loss_check = rl_clock_loss_check,
    .master_ready = rl_owed_release_on_ready,
    .release_unattended = rl_release_unattended,
    .fence_seed_notice = rl_fence_seed_notice,
    .sync_on_io_thread = rl_sync_on_io_thread,
    .sync_destroy_lock = rl_sync_destroy_lock,
};

int redlock_client_clocks_checked(const redlock_client *client, bool *checked)
{
    if (client == NULL || checked == NULL)
        return REDLOCK_EINVAL;
    *checked = rl_masters_clock_wait(client, rl_now_us(), client->created_us) == 0;
    return REDLOCK_OK;
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
    client->hooks = &client_hooks;
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
