/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocking forms of the asynchronous operations: start one on a client and
 * run its loop until the callback fires. The redlock tool and the
 * integration tests use them; they use the public API only.
 *
 * The library bounds every operation, so without a guard these return
 * whatever happens. A guard (guard_s > 0) stops waiting after that many
 * seconds and returns BLOCKING_GUARD_EXPIRED: a test's way to turn a bug
 * into a failure rather than a hang. The operation still runs; when it
 * completes, a lock it took is released and its handle freed.
 */
#ifndef REDLOCK_BLOCKING_H
#define REDLOCK_BLOCKING_H

#include <ev.h>
#include <redlock/redlock.h>

/* Not redlock statuses (those are 0 or negative). */
#define BLOCKING_GUARD_EXPIRED 1
#define BLOCKING_CALLED_TWICE 2 /* the library broke its contract */

/* Where an operation runs: the client, its loop, the guard (0: none). */
typedef struct blocking_ctx {
    struct ev_loop *loop;
    redlock_client *client;
    double guard_s;
} blocking_ctx;

/* Each returns the operation's status, the status with which it could not
 * start, BLOCKING_GUARD_EXPIRED, or BLOCKING_CALLED_TWICE when the callback
 * fired twice before the wait returned. *result (when result is not NULL) gets
 * the operation's result as a copy to free with redlock_result_free(), or
 * NULL (not started, guard expired, or out of memory for the copy).
 * *lock (acquire) gets the new handle, or NULL. */
int blocking_acquire(const blocking_ctx *ctx, const void *resource, size_t len,
                     const redlock_acquire_options *opts, redlock_lock **lock,
                     redlock_result **result);
/* The same for a lock on several resources (redlock_acquire_many_async()). */
int blocking_acquire_many(const blocking_ctx *ctx, const void *const *resources,
                          const size_t *lens, size_t count, const redlock_acquire_options *opts,
                          redlock_lock **lock, redlock_result **result);
int blocking_extend(const blocking_ctx *ctx, redlock_lock *lock, int64_t ttl_ms,
                    redlock_result **result);
int blocking_release(const blocking_ctx *ctx, redlock_lock *lock, redlock_result **result);
/* blocking_release(), calling sent(arg) once the release's requests have
 * been written to the masters that could take them, before its replies. */
int blocking_release_then(const blocking_ctx *ctx, redlock_lock *lock, redlock_result **result,
                          void (*sent)(void *arg), void *arg);
int blocking_inspect(const blocking_ctx *ctx, const void *resource, size_t len,
                     redlock_result **result);
int blocking_inspect_many(const blocking_ctx *ctx, const void *const *resources,
                          const size_t *lens, size_t count, redlock_result **result);
int blocking_ping(const blocking_ctx *ctx, redlock_result **result);
int blocking_fencing_init(const blocking_ctx *ctx, uint64_t floor, redlock_result **result);

#endif
