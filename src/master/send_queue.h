/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One master's requests that wait for room in its window (master.h): sent
 * in order of what is lost by waiting. Releases (each frees a lock for
 * others, and may undo a request sent before it), in the order they came,
 * and extensions, the one whose lock runs out first first (a late one
 * loses its lock), take turns, a batch each (master.c sends a class's
 * requests next in line together): a flood of releases, a program letting
 * go of many locks at once, must not starve the extensions of the locks it
 * still holds, nor the reverse. Then the rest (acquires, inspects, pings),
 * in the order they came. A release never overtakes a request of its own lock
 * that would set a key (an acquire, a fence confirm): with one of those
 * queued, it queues behind it among the rest. Overtaking an extension is
 * harmless: an extension changes only a key that still holds its value.
 *
 * Pure data: pushing, popping and removing never send or call back. What
 * it reads of a request is the request's own (request.h): its class, its
 * lock and its urgency.
 */
#ifndef REDLOCK_SEND_QUEUE_H
#define REDLOCK_SEND_QUEUE_H

#include "master/request.h"
#include "util/list.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A queued extension in the heap, its order kept beside it: the heap's
 * comparisons read only the heap's own memory (at many thousands of locks,
 * reading each request for its urgency missed the cache at every step). */
typedef struct rl_queued_extension {
    int64_t urgent_by_us;
    uint64_t seq;
    rl_request *req;
} rl_queued_extension;

typedef struct rl_send_queue {
    rl_link releases;   /* FIFO */
    rl_queued_extension *extends; /* a binary min-heap by (urgent_by_us, seq) */
    size_t extend_count;
    size_t extend_cap;
    rl_link others;     /* FIFO */
    size_t count;       /* in all three */
    uint64_t next_seq;  /* breaks ties among extensions: first come first */
    bool extension_turn; /* with both waiting, an extension goes next */
} rl_send_queue;

void rl_send_queue_init(rl_send_queue *q);
/* Frees the heap's memory; the queue must be empty. */
void rl_send_queue_free(rl_send_queue *q);
/* Queue req. false when out of memory (req is not queued). */
bool rl_send_queue_push(rl_send_queue *q, rl_request *req);
/* The next request to send, taken out (its class's turn taken, as with
 * rl_send_queue_sent); NULL when empty. */
rl_request *rl_send_queue_pop(rl_send_queue *q);
/* The extension that goes out first among those queued, left in; NULL
 * when none waits. */
const rl_request *rl_send_queue_next_extension(const rl_send_queue *q);
/* The next request to send, left in; with extensions false, the next one
 * that is not an extension (extensions held back to gather a batch:
 * master.c). NULL when there is none. */
rl_request *rl_send_queue_peek(const rl_send_queue *q, bool extensions);
/* The request next in line in first's class (first already taken out),
 * left in: what may join first's batch. NULL when that class is empty. */
rl_request *rl_send_queue_peek_after(const rl_send_queue *q, const rl_request *first);
/* The requests led by first went out: the other class's turn (releases and
 * extensions alternate while both wait). */
void rl_send_queue_sent(rl_send_queue *q, const rl_request *first);
/* Take a queued request out, wherever it is. */
void rl_send_queue_remove(rl_send_queue *q, rl_request *req);

#endif
