/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Releases owed to masters that could not be reached: a value of ours that
 * a master may hold (say, a SET it ran whose reply was lost with the
 * connection) when the release sent to undo it found the master down, or
 * lost its own connection. Each is kept for that master and sent as an
 * ordinary release when it is next connected: rl_owed_release_on_ready()
 * is the client's master_ready hook (context/context.h), given it by the client
 * (client.c), and told on every transition to READY.
 *
 * Bounded: an entry is dropped once the value has expired anyway (the TTL
 * with its drift allowance, counted from when the master was found out of
 * reach), when RL_OWED_RELEASE_MAX entries already wait for that master, or
 * when the client is freed. The first entry dropped for being one too many
 * is warned of; the number dropped is told once, when the master is back.
 * A master that stays stopped longer than the TTL
 * with our SET unread in its socket runs it when it resumes, after the
 * entry was dropped: that key expires after its TTL.
 */
#ifndef REDLOCK_OWED_RELEASE_H
#define REDLOCK_OWED_RELEASE_H

#include "util/list.h"
#include "wire/resources.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Entries waiting for one master, at most. */
#define RL_OWED_RELEASE_MAX 64

typedef struct rl_master rl_master;
typedef struct redlock_client redlock_client;

/* What to release, for how long. A release round keeps one as the pattern
 * of its debts; each debt is a copy, queued for one master. */
typedef struct rl_owed_release {
    rl_link link;        /* in the client's owed list, while queued */
    size_t master;       /* the master's index, while queued */
    int64_t lifetime_us; /* how long the value may live on a master: TTL + drift */
    int64_t until_us;    /* while queued: dropped after this (rl_now_us()) */
    rl_keys keys;        /* data at data[] */
    size_t value_len;
    char data[];         /* the resources, then the value */
} rl_owed_release;

/*
 * Release value on the masters with target[i] true, now where each can be
 * reached, else on its next connection, for as long as a value set with
 * ttl_ms may still live. Never calls back; out of memory, it logs and the
 * keys expire after their TTL.
 */
void rl_owed_release_send(redlock_client *client, const rl_keys *keys, const char *value,
                          size_t value_len, const bool *target, int64_t ttl_ms);
/* Queue a copy of what for master m (the round that could not reach it). */
void rl_owed_release_add(rl_master *m, const rl_owed_release *what);
/* Master m is READY: send what it is owed (and drop what has expired). */
void rl_owed_release_on_ready(rl_master *m);
/* Drop every entry: the client is being freed. */
void rl_owed_release_clear(redlock_client *client);

#endif
