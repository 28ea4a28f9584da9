/* SPDX-License-Identifier: BSD-3-Clause */
/* Blocking forms of the asynchronous operations (see blocking.h). */
#include "blocking.h"

#include <stdbool.h>
#include <stdlib.h>

/* One operation waited for. On the heap: should a guard expire, the
 * operation calls back later, and the callback frees it then. */
typedef struct pending {
    bool done;
    bool abandoned; /* the guard expired: nobody waits any more */
    redlock_client *client;
    bool twice; /* a second callback */
    bool want_result;
    int status;
    redlock_lock *lock;
    redlock_result *result;
} pending;

static void on_acquired(int status, redlock_lock *lock, const redlock_result *result, void *arg)
{
    pending *p = arg;
    if (p->abandoned) {
        /* A lock nobody waits for: give it back. */
        if (lock != NULL)
            redlock_release_async(p->client, lock, NULL, NULL);
        redlock_lock_free(lock);
        free(p);
        return;
    }
    if (p->done) {
        p->twice = true;
        return;
    }
    p->done = true;
    p->status = status;
    p->lock = lock;
    if (p->want_result)
        redlock_result_copy(result, &p->result); /* NULL when out of memory */
}

static void on_done(int status, const redlock_result *result, void *arg)
{
    on_acquired(status, NULL, result, arg);
}

static void on_guard(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    *(bool *)w->data = true;
    ev_break(loop, EVBREAK_ONE);
}

static pending *pending_new(const blocking_ctx *ctx, const void *result)
{
    pending *p = calloc(1, sizeof(*p));
    if (p != NULL) {
        p->want_result = result != NULL;
        p->client = ctx->client;
    }
    return p;
}

/* Run the loop until the operation started with rc completes, or the guard
 * expires. Frees p unless the operation still runs. */
static int wait_for(const blocking_ctx *ctx, int rc, pending *p, redlock_result **result,
                    redlock_lock **lock)
{
    if (result != NULL)
        *result = NULL;
    if (lock != NULL)
        *lock = NULL;
    if (rc != REDLOCK_OK) {
        free(p);
        return rc;
    }
    bool expired = false;
    ev_timer guard;
    if (ctx->guard_s > 0) {
        ev_timer_init(&guard, on_guard, ctx->guard_s, 0.);
        guard.data = &expired;
        ev_timer_start(ctx->loop, &guard);
    }
    while (!p->done && !expired)
        ev_run(ctx->loop, EVRUN_ONCE);
    if (ctx->guard_s > 0)
        ev_timer_stop(ctx->loop, &guard);
    if (!p->done) {
        p->abandoned = true;
        return BLOCKING_GUARD_EXPIRED;
    }
    int status = p->twice ? BLOCKING_CALLED_TWICE : p->status;
    if (result != NULL && !p->twice)
        *result = p->result;
    else
        redlock_result_free(p->result);
    if (lock != NULL)
        *lock = p->lock;
    free(p);
    return status;
}

int blocking_acquire_many(const blocking_ctx *ctx, const void *const *resources,
                          const size_t *lens, size_t count, const redlock_acquire_options *opts,
                          redlock_lock **lock, redlock_result **result)
{
    pending *p = pending_new(ctx, result);
    int rc = p ? redlock_acquire_many_async(ctx->client, resources, lens, count, opts,
                                            on_acquired, p)
               : REDLOCK_ENOMEM;
    return wait_for(ctx, rc, p, result, lock);
}

int blocking_acquire(const blocking_ctx *ctx, const void *resource, size_t len,
                     const redlock_acquire_options *opts, redlock_lock **lock,
                     redlock_result **result)
{
    return blocking_acquire_many(ctx, &resource, &len, 1, opts, lock, result);
}

int blocking_extend(const blocking_ctx *ctx, redlock_lock *lock, int64_t ttl_ms,
                    redlock_result **result)
{
    pending *p = pending_new(ctx, result);
    int rc = p ? redlock_extend_async(ctx->client, lock, ttl_ms, on_done, p) : REDLOCK_ENOMEM;
    return wait_for(ctx, rc, p, result, NULL);
}

int blocking_release(const blocking_ctx *ctx, redlock_lock *lock, redlock_result **result)
{
    pending *p = pending_new(ctx, result);
    int rc = p ? redlock_release_async(ctx->client, lock, on_done, p) : REDLOCK_ENOMEM;
    return wait_for(ctx, rc, p, result, NULL);
}

int blocking_release_then(const blocking_ctx *ctx, redlock_lock *lock, redlock_result **result,
                          void (*sent)(void *arg), void *arg)
{
    pending *p = pending_new(ctx, result);
    int rc = p ? redlock_release_async(ctx->client, lock, on_done, p) : REDLOCK_ENOMEM;
    if (rc == REDLOCK_OK)
        ev_run(ctx->loop, EVRUN_NOWAIT); /* the writes the release is waiting for go out */
    sent(arg);
    return wait_for(ctx, rc, p, result, NULL);
}

int blocking_inspect_many(const blocking_ctx *ctx, const void *const *resources,
                          const size_t *lens, size_t count, redlock_result **result)
{
    pending *p = pending_new(ctx, result);
    int rc = p ? redlock_inspect_many_async(ctx->client, resources, lens, count, on_done, p)
               : REDLOCK_ENOMEM;
    return wait_for(ctx, rc, p, result, NULL);
}

int blocking_inspect(const blocking_ctx *ctx, const void *resource, size_t len,
                     redlock_result **result)
{
    return blocking_inspect_many(ctx, &resource, &len, 1, result);
}

int blocking_ping(const blocking_ctx *ctx, redlock_result **result)
{
    pending *p = pending_new(ctx, result);
    int rc = p ? redlock_ping_async(ctx->client, on_done, p) : REDLOCK_ENOMEM;
    return wait_for(ctx, rc, p, result, NULL);
}

int blocking_fencing_init(const blocking_ctx *ctx, uint64_t floor, redlock_result **result)
{
    pending *p = pending_new(ctx, result);
    int rc = p ? redlock_fencing_init_async(ctx->client, floor, on_done, p) : REDLOCK_ENOMEM;
    return wait_for(ctx, rc, p, result, NULL);
}
