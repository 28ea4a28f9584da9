/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The failover suite's fault injector: a seeded schedule of real faults on
 * the fleet's masters and on the clients, never more than two masters
 * unavailable at once (so a majority of five is always up).
 *
 * Safe mode follows the persistence rule: a master without persistence
 * that was killed comes back only after the longest TTL has passed
 * (delayed restart); a master with AOF (appendfsync always) comes back at
 * once. Unsafe mode restarts every killed master at once, without
 * persistence, and so does empty-restarts mode, at once (no delay).
 *
 * A master the clients do not take for durable is not counted for
 * max_ttl_ms after a restart (docs/safety.md, "Masters restarted empty"):
 * the injector counts it as unavailable until then, as it does one whose
 * fencing counter is being seeded, so that the U lines (what a quorum can
 * be made of) and the faults still keep a majority that counts.
 */
#ifndef REDLOCK_FAILOVER_INJECTOR_H
#define REDLOCK_FAILOVER_INJECTOR_H

#include "fleet.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define INJECTOR_MAX_UNAVAILABLE 2

typedef struct injector_master {
    bool down;          /* killed, not restarted yet */
    bool paused;        /* SIGSTOPped */
    int64_t back_at_ns; /* when to restart or SIGCONT it */
    bool seeding;       /* restarted, its fencing counter not in use yet */
    int64_t excluded_until_ns; /* restarted, not counted by the clients until then */
} injector_master;

typedef struct injector {
    fleet *fleet;
    int log;
    uint64_t rng;
    bool unsafe;                /* masters without persistence restarted at once */
    bool no_delay;              /* ... with no delay at all */
    int64_t exclusion_ns;       /* how long the clients leave a restarted master out
                                   (0: declared durable, or the rule off) */
    int64_t delayed_restart_ns; /* longest TTL plus a margin */
    int64_t next_fault_ns;
    size_t n;
    const bool *aof;            /* which masters have AOF */
    const bool *fast;           /* which masters' clocks run fast (never counted) */
    bool wait_for_seeding;      /* a restarted master counts as unavailable until its
                                   fencing counter is in use again */
    injector_master masters[FLEET_MAX_SERVERS];
} injector;

void injector_init(injector *inj, fleet *f, int log, uint64_t seed, bool unsafe,
                   const bool *aof, const bool *fast, int64_t longest_ttl_ms);
/* Bring back what is due and perhaps inject a new fault. holder is a
 * client process holding the lock now (0: none known), a candidate for
 * kill -9. Returns the pid of a client it killed, or 0. */
pid_t injector_tick(injector *inj, int64_t now_ns, pid_t holder);
/* Resume and restart every master (at the end of a run). */
void injector_heal(injector *inj);
/* Masters running and not stopped. */
unsigned injector_available(const injector *inj);
/* Of those, the ones whose clocks are true and that the clients count (not
 * restarted lately): what a quorum can be made of (the log's U lines, for
 * the liveness check). */
unsigned injector_counted(const injector *inj);

#endif
