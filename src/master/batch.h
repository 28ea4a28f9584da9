/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Batched requests: several extensions (or releases) waiting for the same
 * master go out as one call of a batch script (scripts.h), which runs the
 * single script's logic for each lock and answers with one element per
 * lock. This file builds that call from the requests' own bytes and hands
 * each request its element of the reply; master.c decides what to batch
 * and accounts for the batch in its window, a place for each lock. Which
 * batch script a request may join is its owner's to say
 * (rl_request.batch_script): nothing here knows what a request is for.
 */
#ifndef REDLOCK_BATCH_H
#define REDLOCK_BATCH_H

#include "master/request.h"
#include "wire/scripts.h"

#include <stdbool.h>
#include <stddef.h>

/* At most this many locks' requests in one batch: a script call runs
 * atomically on the master, which serves nobody else meanwhile. */
#define RL_BATCH_MAX 64

struct redisReply;
typedef struct rl_master rl_master;

/* A batch in flight: hiredis's privdata for its reply, malloc'ed, freed by
 * whoever takes the reply (or when hiredis refuses it). */
typedef struct rl_batch {
    rl_master *master;
    const rl_script *script; /* the batch script it calls */
    size_t count;
    rl_request *reqs[RL_BATCH_MAX];
} rl_batch;

/*
 * The one request for count (2..RL_BATCH_MAX) requests, each an EVALSHA
 * of the single script script->name batches: EVALSHA <batch sha> <keys in
 * all> <every request's keys...> <count> then, for each request, <its key
 * count> <its argument count> <its arguments...>; when every request has
 * one key and two arguments (plain locks), the short form: "p" instead of
 * <count>, then each request's two arguments alone. Written straight from
 * the requests' RESP, malloc'ed and NUL-terminated (*len bytes without
 * the NUL); NULL when out of memory or a request is not such an EVALSHA.
 */
char *rl_batch_command(const rl_script *script, rl_request *const *reqs, size_t count,
                       size_t *len);

/* What request i of a batch of count is told when the batch's reply is
 * reply: its element of an array of count; the reply itself when it is an
 * error for the whole call (NOSCRIPT included: its owner then falls back
 * to EVAL alone) or NULL (the connection is gone); an error saying so for
 * anything else. */
const struct redisReply *rl_batch_reply_for(const struct redisReply *reply, size_t count,
                                            size_t i);

/* Whether reply says the master lacks the batch script (its cache was
 * flushed). */
bool rl_batch_noscript(const struct redisReply *reply);

/* Hand each request its part of reply (NULL: lost, with lost_reason),
 * through its on_reply. The requests' owners may run user code: the caller
 * holds a client reference. */
void rl_batch_dispatch(const rl_batch *b, const struct redisReply *reply, const char *lost_reason);

#endif
