/* Inspect and ping: report on every master, for status tools and health
 * checks. Both wait for every master (or its timeout) before completing. */
#include "round_op.h"
#include "scripts.h"

#include <hiredis/hiredis.h>
#include <stdlib.h>

static void report_on_decided(rl_round *round, void *owner)
{
    int status = rl_tally_verdict(&round->tally) == RL_QUORUM
                     ? REDLOCK_OK
                     : rl_tally_failure_status(&round->tally, REDLOCK_ENOQUORUM);
    rl_round_op_complete(owner, status, 0, 0);
}

/* Start a report round with cmd (formatted, taken over). */
static int report_start(redlock_client *client, rl_round_kind kind, char *cmd, int cmd_len,
                        redlock_done_cb cb, void *arg)
{
    rl_round_op *op = calloc(1, sizeof(*op));
    if (op == NULL) {
        redisFreeCommand(cmd); /* NULL when formatting failed: a no-op */
        return REDLOCK_ENOMEM;
    }
    return rl_round_op_start(op, client, NULL, kind, cmd, cmd_len, report_on_decided, cb, arg);
}

int redlock_inspect_async(redlock_client *client, const void *resource, size_t resource_len,
                          redlock_done_cb cb, void *arg)
{
    if (client == NULL || cb == NULL || !rl_resource_valid(resource, resource_len))
        return REDLOCK_EINVAL;
    if (client->closing)
        return REDLOCK_ECANCELED;
    char *cmd = NULL;
    int len = rl_format_inspect(&cmd, resource, resource_len);
    return report_start(client, RL_ROUND_INSPECT, cmd, len, cb, arg);
}

int redlock_ping_async(redlock_client *client, redlock_done_cb cb, void *arg)
{
    if (client == NULL || cb == NULL)
        return REDLOCK_EINVAL;
    if (client->closing)
        return REDLOCK_ECANCELED;
    char *cmd = NULL;
    int len = rl_format_ping(&cmd);
    return report_start(client, RL_ROUND_PING, cmd, len, cb, arg);
}
