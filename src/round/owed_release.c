/* SPDX-License-Identifier: BSD-3-Clause */
/* Releases owed to masters out of reach, sent when they reconnect. See
 * owed_release.h. */
#include "round/owed_release.h"
#include "context/context.h"
#include "config/config_internal.h"
#include "master/master.h"
#include "redlock/redlock.h"
#include "round/quorum.h"
#include "util/list.h"
#include "util/log.h"
#include "util/util.h"
#include "wire/command.h"
#include "wire/resources.h"

#include <stdlib.h>
#include <string.h>

static rl_owed_release *owed_new(const rl_keys *keys, const char *value, size_t value_len,
                                 int64_t lifetime_us)
{
    rl_owed_release *owed = malloc(sizeof(*owed) + keys->len + value_len);
    if (owed == NULL)
        return NULL;
    rl_list_init(&owed->link);
    owed->master = 0;
    owed->lifetime_us = lifetime_us;
    owed->until_us = 0;
    owed->keys = (rl_keys){.count = keys->count, .len = keys->len, .data = owed->data};
    owed->value_len = value_len;
    memcpy(owed->data, keys->data, keys->len);
    memcpy(owed->data + keys->len, value, value_len);
    return owed;
}

/* Start the release round of owed (which it takes) on target. */
static void owed_start(redlock_client *client, rl_owed_release *owed, const bool *target)
{
    rl_command cmd;
    /* A failed attempt's token keys (round 2 confirmed on too few masters)
     * are left to expire with what would have been its keys: they show
     * nothing once the keys no longer hold the value (docs/fencing.md). */
    rl_command_release(&cmd, &owed->keys, owed->data + owed->keys.len, owed->value_len, false);
    rl_round *round = rl_round_start_owing(client, &cmd, target, owed);
    if (round == NULL) {
        rl_log(&client->log, REDLOCK_LOG_ERROR,
               "out of memory releasing a lock; its keys expire after their TTL");
        return;
    }
    rl_round_detach(round, false);
}

void rl_owed_release_send(redlock_client *client, const rl_keys *keys, const char *value,
                          size_t value_len, const bool *target, int64_t ttl_ms)
{
    int64_t lifetime_us = ttl_ms * 1000 + rl_drift_us(ttl_ms, client->cfg->drift_factor);
    rl_owed_release *owed = owed_new(keys, value, value_len, lifetime_us);
    if (owed == NULL) {
        /* At least where it can go now. */
        client->hooks->release_unattended(client, keys, value, value_len, target);
        return;
    }
    owed_start(client, owed, target);
}

static size_t master_index(const rl_master *m)
{
    return (size_t)(m - m->client->masters);
}

void rl_owed_release_add(rl_master *m, const rl_owed_release *what)
{
    redlock_client *client = m->client;
    size_t index = master_index(m);
    int64_t now = rl_now_us();
    size_t queued = 0;
    rl_link *next;
    for (rl_link *link = client->owed.next; link != &client->owed; link = next) {
        next = link->next;
        rl_owed_release *owed = rl_container_of(link, rl_owed_release, link);
        if (owed->until_us <= now) {
            rl_list_remove(link);
            free(owed);
        } else if (owed->master == index) {
            queued++;
        }
    }
    if (queued >= RL_OWED_RELEASE_MAX) {
        /* Warned of once; the count is told when the master is back. */
        if (m->owed_dropped++ == 0)
            rl_log(&client->log, REDLOCK_LOG_WARN,
                   "master %s: %d releases already wait for it to reconnect; keys of ours "
                   "there expire after their TTL, and more releases are dropped until it is "
                   "back",
                   m->node->name, RL_OWED_RELEASE_MAX);
        return;
    }
    rl_owed_release *copy = owed_new(&what->keys, what->data + what->keys.len, what->value_len,
                                     what->lifetime_us);
    if (copy == NULL) {
        rl_log(&client->log, REDLOCK_LOG_ERROR,
               "master %s: out of memory keeping a release for it; a key of ours there expires "
               "after its TTL",
               m->node->name);
        return;
    }
    copy->master = index;
    /* Sent again, it keeps its first deadline: the value's life does not
     * start over because a release was lost once more. */
    copy->until_us = what->until_us != 0 ? what->until_us : now + what->lifetime_us;
    rl_list_push_back(&client->owed, &copy->link);
    rl_log(&client->log, REDLOCK_LOG_DEBUG,
           "master %s: out of reach; a release waits for its next connection", m->node->name);
}

void rl_owed_release_on_ready(rl_master *m)
{
    redlock_client *client = m->client;
    size_t index = master_index(m);
    int64_t now = rl_now_us();
    /* Taken out first: a release that cannot go out is queued again. */
    rl_link mine;
    rl_list_init(&mine);
    rl_link *next;
    for (rl_link *link = client->owed.next; link != &client->owed; link = next) {
        next = link->next;
        rl_owed_release *owed = rl_container_of(link, rl_owed_release, link);
        if (owed->master == index) {
            rl_list_remove(link);
            rl_list_push_back(&mine, link);
        }
    }
    if (m->owed_dropped > 0) {
        rl_log(&client->log, REDLOCK_LOG_WARN,
               "master %s: %u releases owed to it were dropped while it was out of reach; "
               "those keys expire after their TTL",
               m->node->name, m->owed_dropped);
        m->owed_dropped = 0;
    }
    bool target[REDLOCK_MAX_NODES] = {false};
    target[index] = true;
    rl_link *link;
    while ((link = rl_list_pop_front(&mine)) != NULL) {
        rl_owed_release *owed = rl_container_of(link, rl_owed_release, link);
        if (owed->until_us <= now) {
            free(owed); /* the value has expired there anyway */
            continue;
        }
        rl_log(&client->log, REDLOCK_LOG_DEBUG, "master %s: sending a release owed to it",
               m->node->name);
        owed_start(client, owed, target);
    }
}

void rl_owed_release_clear(redlock_client *client)
{
    rl_link *next;
    for (rl_link *link = client->owed.next; link != &client->owed; link = next) {
        next = link->next;
        free(rl_container_of(link, rl_owed_release, link));
    }
    rl_list_init(&client->owed);
}
