/* SPDX-License-Identifier: BSD-3-Clause */
/* Inspect and ping: report on every master, for status tools and health
 * checks. Both wait for every master (or its timeout) before completing. */
#include "context/context.h"
#include "lock/round_op.h"
#include "redlock/redlock.h"
#include "round/quorum.h"
#include "wire/command.h"
#include "wire/resources.h"

#include <stdlib.h>

static void report_on_decided(rl_round *round, void *owner)
{
    int status = rl_tally_verdict(&round->tally) == RL_QUORUM
                     ? REDLOCK_OK
                     : rl_tally_failure_status(&round->tally, REDLOCK_ENOQUORUM);
    rl_round_op_complete(owner, status, 0, 0);
}

/* Start a report round sending cmd. */
static int report_start(redlock_client *client, rl_round_kind kind, const rl_command *cmd,
                        redlock_done_cb cb, void *arg)
{
    rl_round_op *op = calloc(1, sizeof(*op));
    if (op == NULL)
        return REDLOCK_ENOMEM;
    return rl_round_op_start(op, client, NULL, kind, cmd, report_on_decided, cb, arg);
}

static int inspect_start(redlock_client *client, const void *const *resources,
                         const size_t *resource_lens, size_t count, redlock_done_cb cb,
                         void *arg)
{
    size_t block_len;
    if (client == NULL || cb == NULL ||
        rl_keys_check(resources, resource_lens, count, &block_len) != REDLOCK_OK)
        return REDLOCK_EINVAL;
    if (client->closing)
        return REDLOCK_ECANCELED;
    char *block = malloc(block_len);
    if (block == NULL)
        return REDLOCK_ENOMEM;
    rl_keys keys;
    rl_keys_store(&keys, block, resources, resource_lens, count);
    rl_command cmd;
    rl_command_inspect(&cmd, &keys);
    int rc = report_start(client, RL_ROUND_INSPECT, &cmd, cb, arg); /* the request is copied */
    free(block);
    return rc;
}

int redlock_inspect_many_async(redlock_client *client, const void *const *resources,
                               const size_t *resource_lens, size_t count, redlock_done_cb cb,
                               void *arg)
{
    if (client == NULL)
        return REDLOCK_EINVAL;
    rl_client_enter(client);
    int rc = inspect_start(client, resources, resource_lens, count, cb, arg);
    rl_client_leave(client);
    return rc;
}

int redlock_inspect_async(redlock_client *client, const void *resource, size_t resource_len,
                          redlock_done_cb cb, void *arg)
{
    return redlock_inspect_many_async(client, &resource, &resource_len, 1, cb, arg);
}

static int ping_start(redlock_client *client, redlock_done_cb cb, void *arg)
{
    if (client == NULL || cb == NULL)
        return REDLOCK_EINVAL;
    if (client->closing)
        return REDLOCK_ECANCELED;
    rl_command cmd;
    rl_command_ping(&cmd);
    return report_start(client, RL_ROUND_PING, &cmd, cb, arg);
}

int redlock_ping_async(redlock_client *client, redlock_done_cb cb, void *arg)
{
    if (client == NULL)
        return REDLOCK_EINVAL;
    rl_client_enter(client);
    int rc = ping_start(client, cb, arg);
    rl_client_leave(client);
    return rc;
}
