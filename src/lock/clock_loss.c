/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Held locks weighed against masters proven fast (docs/safety.md): a lock
 * whose keys are held on fewer trusted masters than a quorum may already
 * be taken by another client (model/clock_check.pml), so it is lost at
 * once with REDLOCK_ECLOCK: marked lost (its state, its lost fd), its
 * lost callback told when it is auto-extended, and its keys released on
 * every master. A lock still held on a quorum of trusted masters is kept.
 */
#include "lock/clock_loss.h"
#include "context/context.h"
#include "lock/lock.h"
#include "lock/release.h"
#include "lock/watchdog.h"
#include "master/clock_probe.h"
#include "master/master.h"
#include "redlock/redlock.h"
#include "util/log.h"

typedef struct loss_context {
    redlock_client *client;
    unsigned unsent;
} loss_context;

/* A lock with no auto-extension, under the ownership mutex. */
static void release_doomed(redlock_lock *lock, void *arg)
{
    loss_context *ctx = arg;
    rl_release_lost(ctx->client, lock, &ctx->unsent);
}

void rl_clock_loss_check(redlock_client *client, const rl_master *proven)
{
    uint64_t fast = 0;
    for (size_t i = 0; i < client->n; i++)
        if (rl_clock_probe_excludes(&client->masters[i]))
            fast |= UINT64_C(1) << i;
    if (fast == 0)
        return;
    loss_context ctx = {client, 0};
    size_t kept = 0;
    uint64_t proven_bit = UINT64_C(1) << (size_t)(proven - client->masters);
    size_t doomed = rl_lock_doom_by_holders(client, fast, proven_bit, client->quorum,
                                            release_doomed, &ctx, &kept);
    RL_EXPECT_ENTERED(client); /* a free from the log or a lost callback waits for its leave */
    if (kept > 0)
        rl_log(&client->log, REDLOCK_LOG_WARN,
               "master %s proven fast: %zu held lock%s it holds still on a quorum of trusted "
               "masters: kept",
               proven->node->name, kept, kept == 1 ? "" : "s");
    if (doomed > 0)
        rl_log(&client->log, REDLOCK_LOG_WARN,
               "master %s proven fast: %zu held lock%s left on fewer trusted masters than a "
               "quorum: lost",
               proven->node->name, doomed, doomed == 1 ? "" : "s");
    if (ctx.unsent > 0)
        rl_log(&client->log, REDLOCK_LOG_ERROR,
               "out of memory releasing %u lost lock%s; their keys expire after their TTL",
               ctx.unsent, ctx.unsent == 1 ? "" : "s");
    redlock_lock *lock;
    while (!client->closing && (lock = rl_lock_take_doomed(client)) != NULL) {
        unsigned unsent = 0;
        rl_release_lost(client, lock, &unsent); /* first: the callback may free the handle */
        rl_watchdog_lose(lock, REDLOCK_ECLOCK);
    }
}
