/* SPDX-License-Identifier: BSD-3-Clause */
/* What the engine's files share: the client, operations, lock handles and
 * results. Everything here is internal (rl_ prefix, hidden symbols). */
#ifndef REDLOCK_INTERNAL_H
#define REDLOCK_INTERNAL_H

#include "config/config_internal.h"
#include "lock/courtesy.h"
#include "round/holders.h"
#include "util/list.h"
#include "util/log.h"
#include "master/master.h"
#include "round/owed_release.h"
#include "round/quorum.h"
#include "util/random.h"
#include "redlock/redlock.h"
#include "wire/resources.h"
#include "master/subscriber.h"

#include <ev.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* An operation in flight, linked into its client so freeing the client can
 * cancel it. */
typedef struct rl_op {
    rl_link link;
    /* Complete the operation with REDLOCK_ECANCELED and free it. */
    void (*cancel)(struct rl_op *op);
} rl_op;

struct redlock_client {
    struct ev_loop *loop;
    redlock_config *cfg; /* a private copy */
    rl_logger log;
    size_t n;            /* masters */
    unsigned quorum;     /* n/2 + 1 */
    rl_master *masters;  /* n of them, in config order */
    unsigned refs;       /* the user's + one per live round or closing master,
                            + one per entry on the stack (rl_client_enter) */
    unsigned entered;    /* entries on the stack: the loop's or the program's
                            calls into the library, nested */
    bool closing;        /* redlock_client_free() has been called */
    bool free_deferred;  /* ...from inside an entry: done at the last leave */
    int64_t created_us;  /* bounds the clock warm-up of reports */
    rl_link ops;         /* rl_op in flight */
    rl_link owed;        /* rl_owed_release waiting for masters to reconnect */
    rl_subscriber *subscribers; /* n: release announcements (subscriber.h) */
    rl_link watches;     /* rl_watch: the resources waited for */
    unsigned watchdogs;  /* locks auto-extended on this client's loop */
    /* Locks this client acquired and will release when freed. Guarded by
     * the handles' ownership mutex (lock.c): a blocking client's callers
     * free handles on their own threads while the I/O thread adds new ones
     * or, freeing the client, releases them. */
    rl_link locks;
    redlock_sync *sync;  /* the blocking client running this one, or NULL */
    rl_random_pool random; /* lock values, drawn on the loop's thread */
    char id[REDLOCK_VALUE_LEN + 1]; /* names its clock probes (clock_probe.h) */
    rl_courtesy_ring courtesy; /* resources released while others waited */
    struct rl_seeding *seeding; /* n, once a fencing counter needed seeding (fence_seed.h) */
    rl_link seed_waiters; /* rl_seed_waiter: fenced acquires waiting for the seeding */
    struct rl_tls_ctx **tls; /* n, NULL for plain nodes; NULL when none uses TLS (tls.h) */
    rl_client_counters stats;   /* for redlock_client_stats() */
};

void rl_client_ref(redlock_client *client);
/* Frees the client's memory with the last reference. */
void rl_client_unref(redlock_client *client);
/*
 * Every way into the library that may reach the program's callbacks (a
 * watcher or hiredis callback of the client's, a public call) is bracketed
 * by these two. While entered, the client stays allocated, and a
 * redlock_client_free() asked for from a callback only marks it closing:
 * the free itself runs at the outermost leave, once no frame of the
 * library's is left on the stack to use what it frees (as hiredis defers
 * redisAsyncFree() called from a callback). Nothing of client may be
 * touched after rl_client_leave().
 */
void rl_client_enter(redlock_client *client);
void rl_client_leave(redlock_client *client);
/* Whether a frame of the library's is on the stack; for tests: every
 * callback of the program's must find it so. */
bool rl_client_entered(const redlock_client *client);
void rl_client_add_op(redlock_client *client, rl_op *op);
void rl_client_remove_op(rl_op *op);
/* The TLS context of node (in the client's config), or NULL: plain. */
const struct rl_tls_ctx *rl_client_tls(const redlock_client *client, const rl_node *node);
/* The config's default for key. */
int64_t rl_client_setting(const redlock_client *client, redlock_setting key);
/* Whether so many masters are behind with extensions (rl_master_behind)
 * that too few are left for a quorum. */
bool rl_client_behind(const redlock_client *client);
/* 0 when an acquire that began at started_us may make its first attempt:
 * every master's clock warmed up (rl_clock_probe_warm), or waited for as
 * long as a connect and the warm-up take; else when to look again. */
int64_t rl_client_clock_wait(const redlock_client *client, int64_t now_us, int64_t started_us);

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

/* Stop the lock's auto-extension, if any, abandoning an extension in flight
 * (it completes without touching the lock). */
void rl_watchdog_stop(redlock_lock *lock);
/* Whether the operation in flight on the lock is its auto-extension's. */
bool rl_watchdog_is_extending(const redlock_lock *lock);
/* The lock is lost for status, now: its auto-extension stops, it is
 * marked lost and its lost callback runs (which may free the client). */
void rl_watchdog_lose(redlock_lock *lock, int status);
/* An extend on client completed with status and set the lock's deadline:
 * its auto-extension, if any, follows the new deadline. */
void rl_watchdog_extended(redlock_lock *lock, const redlock_client *client, int status);

/* Blocking-client hooks for handles freed on a caller's thread. */
bool rl_sync_on_io_thread(const redlock_sync *sync);
/* Have the thread running the loop destroy the lock, and wait for it. Called with held
 * (the ownership mutex) locked, which keeps sync allocated: its client
 * cannot let go of the lock meanwhile. held is unlocked once the request is
 * queued. REDLOCK_ECANCELED: the client is being freed and lets go of the
 * lock itself; the lock is left alone. */
int rl_sync_destroy_lock(redlock_sync *sync, redlock_lock *lock, pthread_mutex_t *held);

/* Who runs a blocking client's loop at the moment; for tests. */
typedef enum rl_sync_runner {
    RL_SYNC_RUNNER_IO_THREAD,
    RL_SYNC_RUNNER_CALLER,  /* a calling thread, for its own call */
    RL_SYNC_RUNNER_NOBODY,  /* parked, replies or timers outstanding */
    RL_SYNC_RUNNER_IDLE     /* parked, nothing outstanding */
} rl_sync_runner;
rl_sync_runner rl_sync_loop_runner(redlock_sync *sync);

/* What an operation knows when it completes, turned into a result. */
typedef struct rl_result_info {
    int status;
    const rl_round *round; /* the last attempt; NULL if none was made */
    int64_t validity_ms;
    int64_t total_us;
    unsigned attempts;
    unsigned masters_locked;
    uint64_t fencing_token; /* the lock's, or 0 */
    int64_t end_us;         /* the last attempt's end when it outlasts its round
                               (a fenced acquire's round 2), else 0 */
} rl_result_info;

/* The result to hand a callback, in out and masters (room for client->n),
 * pointing into the round and the config: valid while both live, which the
 * caller ensures for the callback's duration. Allocates nothing. */
void rl_result_view(redlock_result *out, redlock_master_result *masters,
                    const redlock_client *client, const rl_result_info *info);

/* Release value on every master (or those with target[i]) without waiting
 * for the outcome: what cannot be released expires after its TTL. */
/* Release a lost lock's keys on every master, no callback (with the
 * ownership mutex held too: failures are only counted, in *unsent). */
void rl_release_lost(redlock_client *client, const redlock_lock *lock, unsigned *unsent);
/* Held locks weighed against the masters proven fast (clock_loss.c): those
 * left on too few trusted masters are lost, REDLOCK_ECLOCK. May call back
 * into the program (lost callbacks). */
void rl_clock_loss_check(redlock_client *client, const rl_master *proven);
void rl_release_unattended(redlock_client *client, const rl_keys *keys, const char *value,
                           size_t value_len, const bool *target);
/* Release every lock the client acquired and still holds, and forget them
 * (their handles stay valid, RELEASED). For a client being freed. */
void rl_release_owned_locks(redlock_client *client);

/* Argument checks shared by the asynchronous and blocking entry points. */
bool rl_resource_valid(const void *resource, size_t len);

#endif
