/* SPDX-License-Identifier: BSD-3-Clause */
/* The client's context: its references, its entry guard, its operations in
 * flight and its settings. Its making and freeing are client/client.c's,
 * handed down as hooks (context.h). */
#include "context/context.h"
#include "config/config_internal.h"
#include "util/list.h"
#include "util/random.h"

#include <stdlib.h>

void rl_client_ref(redlock_client *client)
{
    client->refs++;
}

void rl_client_unref(redlock_client *client)
{
    if (--client->refs > 0)
        return;
    client->hooks->destroy(client);
    redlock_config_free(client->cfg);
    rl_random_pool_clear(&client->random);
    free(client);
}

void rl_client_enter(redlock_client *client)
{
    client->refs++;
    client->entered++;
}

void rl_client_leave(redlock_client *client)
{
    if (--client->entered == 0 && client->free_deferred) {
        client->free_deferred = false;
        client->hooks->close(client);
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

int64_t rl_client_setting(const redlock_client *client, redlock_setting key)
{
    return client->cfg->settings[key];
}
