/* What the engine's files share: the client, operations, lock handles and
 * results. Everything here is internal (rl_ prefix, hidden symbols). */
#ifndef REDLOCK_INTERNAL_H
#define REDLOCK_INTERNAL_H

#include "config_internal.h"
#include "list.h"
#include "log.h"
#include "master.h"
#include "quorum.h"
#include "redlock/redlock.h"

#include <ev.h>
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
    unsigned refs;       /* the user's + one per live round */
    bool closing;        /* redlock_client_free() has begun */
    rl_link ops;         /* rl_op in flight */
};

void rl_client_ref(redlock_client *client);
/* Frees the client's memory with the last reference. */
void rl_client_unref(redlock_client *client);
void rl_client_add_op(redlock_client *client, rl_op *op);
void rl_client_remove_op(rl_op *op);
/* The config's default for key. */
int64_t rl_client_setting(const redlock_client *client, redlock_setting key);

/* Marks the lock a single operation is working on, so that freeing the
 * handle mid-operation detaches it instead of leaving a dangling pointer. */
typedef struct rl_lock_use {
    redlock_lock *lock; /* NULL once the handle was freed */
} rl_lock_use;

struct redlock_lock {
    char *resource;
    size_t resource_len;
    char *value; /* NUL-terminated */
    size_t value_len;
    int64_t ttl_ms;        /* the extend default; 0: the client's */
    bool validity_known;   /* false for handles made from a value */
    int64_t deadline_us;   /* monotonic end of validity, when known */
    rl_lock_use *busy;     /* the operation in flight on it, or NULL */
};

/* A handle for a lock just acquired or extended; NULL when out of memory. */
redlock_lock *rl_lock_create(const void *resource, size_t resource_len, const char *value,
                             size_t value_len, int64_t ttl_ms);
/* Claim the handle for one operation; false if another one holds it. */
bool rl_lock_claim(redlock_lock *lock, rl_lock_use *use);
/* Give the handle back (no-op if it was freed meanwhile). */
void rl_lock_unclaim(rl_lock_use *use);
/* Record validity: the holder may act until deadline_us. */
void rl_lock_set_deadline(redlock_lock *lock, int64_t deadline_us);

/* What an operation knows when it completes, turned into a result. */
typedef struct rl_result_info {
    int status;
    const rl_round *round; /* the last attempt; NULL if none was made */
    int64_t validity_ms;
    int64_t total_us;
    unsigned attempts;
    unsigned masters_locked;
} rl_result_info;

/* The result to hand a callback: self-contained (its strings are copied
 * in), or, when out of memory, *fallback filled without per-master detail.
 * Free it with rl_result_discard() after the callback. */
redlock_result *rl_result_build(const redlock_client *client, const rl_result_info *info,
                                redlock_result *fallback);
void rl_result_discard(redlock_result *result, const redlock_result *fallback);

/* Argument checks shared by the asynchronous and blocking entry points. */
bool rl_resource_valid(const void *resource, size_t len);

#endif
