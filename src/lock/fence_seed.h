/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fencing counters put in use (docs/fencing.md, "Restarts"; the model is
 * model/fencing.pml): seeding, in the background, a master whose counter
 * a fenced acquire found not in use (after a restart); and initializing
 * them, the operator's redlock_fencing_init_async().
 *
 * Seeding one master M, seen not in use in its run R:
 *
 *   IDLE --seen--> READING --a majority of the others in use--> APPLYING --> IDLE
 *                     |  \--fewer, but a quorum with M answered--^ (the clock floor)
 *                     \--fewer answers, or the client freed--> IDLE
 *
 * READING asks every other master for the counter it holds, in use or not,
 * after R was seen (a read from before the restart could miss a token
 * confirmed since); APPLYING sets M's counter to the greatest read, in run
 * R only, never lowering it. When too few of the others have a counter in
 * use to seed M from them alone (a new deployment; a majority restarted),
 * the seed is also at least the clock floor, the wall clock in
 * microseconds. A master seeded once is seeded again only when seen not
 * in use after RL_SEED_PAUSE_US, so failing reads do not flood the masters.
 */
#ifndef REDLOCK_FENCE_SEED_H
#define REDLOCK_FENCE_SEED_H

#include "context/context.h"
#include "round/quorum.h"
#include "util/list.h"
#include "wire/reply.h"

/* Between two seedings of the same master. */
#define RL_SEED_PAUSE_US 100000

typedef enum rl_seed_state {
    RL_SEED_IDLE,
    RL_SEED_READING, /* round: the fence read on every other master */
    RL_SEED_APPLYING /* round: the fence seed on the master, in run_id */
} rl_seed_state;

typedef struct rl_seeding {
    rl_op op;           /* in the client's ops while not IDLE */
    redlock_client *client;
    size_t master;
    rl_seed_state state;
    char run_id[RL_RUN_ID_SIZE]; /* R: the run the counter is seeded for */
    int64_t began_us;   /* when the last seeding began; 0 never */
    rl_round *round;    /* READING, APPLYING: the round in flight */
} rl_seeding;

/* A fenced acquire saw master's counter not in use in run run_id: seed it,
 * unless that is under way or was tried a moment ago. Fails silently (it is
 * retried on the next sighting). */
void rl_fence_seed_notice(redlock_client *client, size_t master, const char *run_id);
/* Whether a seeding is under way on any master. */
bool rl_fence_seed_busy(const redlock_client *client);

/* A fenced acquire waiting for the seeding its attempt started: woken
 * (wake called, the waiter unlinked) as soon as no seeding is under way,
 * on the seeding's own callback. */
typedef struct rl_seed_waiter {
    rl_link link; /* in the client's seed_waiters; self-linked when not waiting */
    void (*wake)(struct rl_seed_waiter *w);
} rl_seed_waiter;
/* Wait for the seedings under way; false (w not linked) when there is
 * none to wait for. */
bool rl_fence_seed_wait(redlock_client *client, rl_seed_waiter *w);
/* Stop waiting (a no-op when not waiting). */
void rl_fence_seed_unwait(rl_seed_waiter *w);
/* Free the client's seeding state (no round may be in flight). */
void rl_fence_seed_free(redlock_client *client);

#endif
