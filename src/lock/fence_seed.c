/* SPDX-License-Identifier: BSD-3-Clause */
/* Fencing counters put in use: seeding and initializing. See fence_seed.h. */
#include "lock/fence_seed.h"
#include "context/context.h"
#include "lock/round_op.h"
#include "master/master.h"
#include "redlock/redlock.h"
#include "round/quorum.h"
#include "util/list.h"
#include "util/log.h"
#include "util/util.h"
#include "wire/command.h"
#include "wire/reply.h"
#include "wire/scripts.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void seed_set_state(rl_seeding *s, rl_seed_state next)
{
    if (s->state == RL_SEED_IDLE && next != RL_SEED_IDLE)
        rl_client_add_op(s->client, &s->op);
    else if (s->state != RL_SEED_IDLE && next == RL_SEED_IDLE)
        rl_client_remove_op(&s->op);
    s->state = next;
}

/* The last seeding under way ended: wake every acquire waiting for it. */
static void seed_wake_waiters(redlock_client *client)
{
    if (client->closing || rl_fence_seed_busy(client))
        return;
    rl_link *link;
    while ((link = rl_list_pop_front(&client->seed_waiters)) != NULL) {
        rl_seed_waiter *w = rl_container_of(link, rl_seed_waiter, link);
        w->wake(w);
    }
}

/* Back to IDLE, letting the round in flight finish on its own. */
static void seed_stop(rl_seeding *s)
{
    if (s->round != NULL) {
        rl_round_detach(s->round, false);
        s->round = NULL;
    }
    seed_set_state(s, RL_SEED_IDLE);
    seed_wake_waiters(s->client);
}

static void seed_cancel(rl_op *op)
{
    rl_seeding *s = (rl_seeding *)op;
    /* The client popped op from its list already. */
    s->state = RL_SEED_IDLE;
    if (s->round != NULL) {
        rl_round_detach(s->round, false);
        s->round = NULL;
    }
}

static void seed_on_applied(rl_round *round, void *owner)
{
    rl_seeding *s = owner;
    const rl_slot *slot = &round->slots[s->master];
    const char *name = s->client->masters[s->master].node->name;
    if (slot->counted && slot->outcome == REDLOCK_MASTER_OK)
        rl_log(&s->client->log, REDLOCK_LOG_INFO,
               "fencing: the counter of master %s is in use again (run %.8s)", name, s->run_id);
    else
        rl_log(&s->client->log, REDLOCK_LOG_DEBUG,
               "fencing: seeding master %s: %s", name,
               slot->detail ? slot->detail : redlock_master_outcome_name(slot->outcome));
    seed_stop(s);
}

/* The clock floor: microseconds since the epoch, below 2^53 until the
 * year 2255. Wall time, not for timing: a lower bound for tokens when a
 * majority of the others has no counter in use (docs/fencing.md,
 * "Assumptions"). */
static uint64_t seed_clock_floor(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0 || ts.tv_sec < 0)
        return 0;
    uint64_t us = (uint64_t)ts.tv_sec * 1000000U + (uint64_t)ts.tv_nsec / 1000U;
    return us < RL_TOKEN_LIMIT ? us : RL_TOKEN_LIMIT - 1;
}

/* APPLYING: the seed, on the master, in run R only. */
static void seed_apply(rl_seeding *s, uint64_t seed)
{
    rl_command cmd;
    rl_command_fence_seed(&cmd, seed, s->run_id);
    bool target[REDLOCK_MAX_NODES] = {false};
    target[s->master] = true;
    s->round = rl_round_start(s->client, RL_ROUND_FENCE_SEED, &cmd, target, seed_on_applied, s);
    if (s->round == NULL) {
        seed_stop(s);
        return;
    }
    s->state = RL_SEED_APPLYING;
}

static void seed_on_read(rl_round *round, void *owner)
{
    rl_seeding *s = owner;
    redlock_client *client = s->client;
    unsigned in_use = 0;
    unsigned answered = 0;
    int64_t best = 0;
    for (size_t i = 0; i < round->n; i++) {
        const rl_slot *slot = &round->slots[i];
        if (i == s->master || !slot->counted ||
            (slot->outcome != REDLOCK_MASTER_OK && slot->outcome != REDLOCK_MASTER_ABSENT))
            continue;
        answered++;
        in_use += slot->outcome == REDLOCK_MASTER_OK && slot->counter >= 0;
        if (slot->counter > best) /* held, in use or not: a seed only raises */
            best = slot->counter;
    }
    /* A majority of the others shares a master with every quorum that
     * confirmed a token: the greatest of them is at least every token.
     * With fewer in use, the answers and this master itself still make a
     * quorum, which holds every token whose counters survived (AOF); the
     * clock floor covers those that did not. */
    unsigned needed = (unsigned)(client->n - 1) / 2 + 1;
    const char *name = client->masters[s->master].node->name;
    uint64_t seed = (uint64_t)best;
    rl_round_detach(round, false);
    s->round = NULL;
    if (in_use < needed) {
        if (answered + 1 < client->quorum) {
            rl_log(&client->log, REDLOCK_LOG_DEBUG,
                   "fencing: cannot seed master %s: %u of the other masters answered, %u needed",
                   name, answered, client->quorum - 1);
            seed_stop(s);
            return;
        }
        uint64_t floor = seed_clock_floor();
        if (floor > seed)
            seed = floor;
        rl_log(&client->log, REDLOCK_LOG_INFO,
               "fencing: %u of the other masters have a counter in use, %u needed to seed "
               "master %s from them: seeding it with the clock floor %llu",
               in_use, needed, name, (unsigned long long)seed);
    }
    seed_apply(s, seed);
}

void rl_fence_seed_notice(redlock_client *client, size_t master, const char *run_id)
{
    if (client->closing)
        return;
    if (client->seeding == NULL) {
        client->seeding = calloc(client->n, sizeof(rl_seeding));
        if (client->seeding == NULL)
            return;
    }
    rl_seeding *s = &client->seeding[master];
    int64_t now = rl_now_us();
    if (s->state != RL_SEED_IDLE || (s->began_us != 0 && now - s->began_us < RL_SEED_PAUSE_US))
        return;
    s->op.cancel = seed_cancel;
    s->client = client;
    s->master = master;
    s->began_us = now;
    memcpy(s->run_id, run_id, RL_RUN_ID_SIZE - 1);
    s->run_id[RL_RUN_ID_SIZE - 1] = '\0';
    if (client->n == 1) { /* no others to read: a quorum of one, the clock floor */
        seed_set_state(s, RL_SEED_READING);
        seed_apply(s, seed_clock_floor());
        return;
    }
    rl_command cmd;
    rl_command_fence_read(&cmd);
    bool target[REDLOCK_MAX_NODES];
    for (size_t i = 0; i < client->n; i++)
        target[i] = i != master;
    s->round = rl_round_start(client, RL_ROUND_FENCE_READ, &cmd, target, seed_on_read, s);
    if (s->round == NULL)
        return;
    seed_set_state(s, RL_SEED_READING);
    rl_log(&client->log, REDLOCK_LOG_DEBUG,
           "fencing: master %s restarted (run %.8s): seeding its counter from the others",
           client->masters[master].node->name, run_id);
}

bool rl_fence_seed_busy(const redlock_client *client)
{
    for (size_t i = 0; client->seeding != NULL && i < client->n; i++)
        if (client->seeding[i].state != RL_SEED_IDLE)
            return true;
    return false;
}

bool rl_fence_seed_wait(redlock_client *client, rl_seed_waiter *w)
{
    if (!rl_fence_seed_busy(client))
        return false;
    rl_list_push_back(&client->seed_waiters, &w->link);
    return true;
}

void rl_fence_seed_unwait(rl_seed_waiter *w)
{
    rl_list_remove(&w->link);
}

void rl_fence_seed_free(redlock_client *client)
{
    free(client->seeding);
    client->seeding = NULL;
}

/* Initializing: done when a quorum has its counter in use. */
static void init_on_decided(rl_round *round, void *owner)
{
    int status = rl_tally_verdict(&round->tally) == RL_QUORUM
                     ? REDLOCK_OK
                     : rl_tally_failure_status(&round->tally, REDLOCK_ENOQUORUM);
    rl_round_op_complete(owner, status, 0, round->tally.ok);
}

static int fencing_init_start(redlock_client *client, uint64_t floor, redlock_done_cb cb,
                              void *arg)
{
    if (client == NULL || cb == NULL || floor >= RL_TOKEN_LIMIT)
        return REDLOCK_EINVAL;
    if (client->closing)
        return REDLOCK_ECANCELED;
    rl_round_op *op = calloc(1, sizeof(*op));
    if (op == NULL)
        return REDLOCK_ENOMEM;
    rl_command cmd;
    rl_command_fence_seed(&cmd, floor, NULL);
    return rl_round_op_start(op, client, NULL, RL_ROUND_FENCE_SEED, &cmd, init_on_decided, cb,
                             arg);
}

int redlock_fencing_init_async(redlock_client *client, uint64_t floor, redlock_done_cb cb,
                               void *arg)
{
    if (client == NULL)
        return REDLOCK_EINVAL;
    rl_client_enter(client);
    int rc = fencing_init_start(client, floor, cb, arg);
    rl_client_leave(client);
    return rc;
}
