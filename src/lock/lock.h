/* SPDX-License-Identifier: BSD-3-Clause */
/* Lock handles: resource, value, validity and state, readable from any
 * thread (lock.c). */
#ifndef REDLOCK_LOCK_H
#define REDLOCK_LOCK_H

#include "util/counters.h"
#include "redlock/redlock.h"
#include "round/holders.h"
#include "util/list.h"
#include "wire/resources.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Marks the lock a single operation is working on, so that freeing the
 * handle mid-operation detaches it instead of leaving a dangling pointer. */
typedef struct rl_lock_use {
    redlock_lock *lock; /* NULL once the handle was freed */
} rl_lock_use;

/* What happened to a lock, beyond its deadline. */
typedef enum rl_lock_phase {
    RL_LOCK_ACTIVE,  /* held or expired: the deadline tells */
    RL_LOCK_LOST,    /* auto-extension gave up */
    RL_LOCK_RELEASED
} rl_lock_phase;

#define RL_DEADLINE_UNKNOWN INT64_MIN

typedef struct rl_watchdog rl_watchdog;

/*
 * A lock handle. The fields marked atomic may be read from any thread (the
 * blocking client's callers read them while its I/O thread extends the
 * lock); the others belong to the thread running the owning client's loop,
 * or to the handle's user between operations.
 */
struct redlock_lock {
    rl_keys keys;                /* its resources; data in the handle's block */
    const char *resource;        /* the first of them */
    size_t resource_len;
    char *value;                 /* NUL-terminated */
    size_t value_len;
    _Atomic int64_t ttl_ms;      /* the extend default; 0: the client's */
    _Atomic int64_t deadline_us; /* monotonic end of validity, or RL_DEADLINE_UNKNOWN */
    _Atomic int phase;           /* rl_lock_phase */
    _Atomic int lost_fd;         /* eventfd, -1 until asked for */
    _Atomic bool watched;        /* auto-extension was started on it */
    int64_t acquired_us;         /* when its acquire began; 0: unknown (made from a value) */
    int64_t delay_ms;            /* lock delay its keys carry; -1: unknown (the client's) */
    uint64_t fencing_token;      /* 0: acquired without fencing, or made from a value */
    bool plain_key;              /* acquired on one resource, not reentrant, not fenced:
                                    its key is a string, which a master with SET IFEQ
                                    extends without a script */
    rl_lock_use *busy;           /* the operation in flight on it, or NULL */
    redlock_client *owner;       /* releases it when freed; NULL if none */
    rl_link link;                /* in owner->locks */
    rl_watchdog *watchdog;       /* auto-extension in progress, or NULL */
    /* Counted in its client's locks_held until released, lost or freed
     * (rl_lock_end_hold); NULL when not (made from a value). */
    _Atomic(rl_client_counters *) held_by;
    /* The masters its last acquire or extension found holding its keys
     * (holders.h); NULL: none known (made from a value). */
    _Atomic(rl_holders *) holders;
    bool clock_doomed;           /* to be lost: too few trusted holders (clock_loss.c);
                                    under the ownership mutex */
};

/* A handle for a lock on keys just acquired or extended; NULL when out of
 * memory. */
redlock_lock *rl_lock_create(const rl_keys *keys, const char *value, size_t value_len,
                             int64_t ttl_ms);
/* Claim the handle for one operation; false if another one holds it. */
bool rl_lock_claim(redlock_lock *lock, rl_lock_use *use);
/* Give the handle back (no-op if it was freed meanwhile). */
void rl_lock_unclaim(rl_lock_use *use);
/* Record validity: the holder may act until deadline_us. */
void rl_lock_set_deadline(redlock_lock *lock, int64_t deadline_us);
int64_t rl_lock_deadline(const redlock_lock *lock);
/* Enter the lock in client's list of locks to release when it is freed. */
void rl_lock_register(redlock_client *client, redlock_lock *lock);
/* Take every lock out of client's list, calling let_go(lock, arg) on each,
 * and make them ownerless. let_go runs with the ownership mutex held: it
 * must call nothing that may call back into the program (no logging). */
void rl_lock_disown_all(redlock_client *client, void (*let_go)(redlock_lock *lock, void *arg),
                        void *arg);
/* Mark the lock lost and wake whoever waits on its lost fd. */
void rl_lock_mark_lost(redlock_lock *lock);
/* Count the lock in client's locks_held (just acquired)... */
void rl_lock_start_hold(redlock_client *client, redlock_lock *lock);
/* ...until it is released, lost or freed: once, from any thread. */
void rl_lock_end_hold(redlock_lock *lock);
/* Free the handle now (on the thread that runs its owner's loop). */
void rl_lock_destroy(redlock_lock *lock);
/* The lock now held on the masters of h (a reference is taken; the one it
 * had is dropped). On the thread of its owner's loop. */
void rl_lock_set_holders(redlock_lock *lock, rl_holders *h);
/* With the ownership mutex: every lock client holds whose holders outside
 * the masters in fast are fewer than quorum is doomed. An auto-extended
 * one is marked (rl_lock_take_doomed hands them out); any other is marked
 * lost and given to release(lock, arg) at once, which must not call back
 * into the program. Returns how many locks were doomed; *kept gets how
 * many that the masters in proven hold are kept (still on a quorum). */
size_t rl_lock_doom_by_holders(redlock_client *client, uint64_t fast, uint64_t proven,
                               unsigned quorum, void (*release)(redlock_lock *lock, void *arg),
                               void *arg, size_t *kept);
/* A marked lock of client, unmarked, or NULL when none is left. */
redlock_lock *rl_lock_take_doomed(redlock_client *client);


#endif
