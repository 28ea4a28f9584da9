/* SPDX-License-Identifier: BSD-3-Clause */
/* The blocking client's scoped call: acquire, run the caller's function
 * with the lock held and auto-extended, release on every path. */
#include "redlock/redlock.h"

#include <pthread.h>
#include <stddef.h>

typedef struct scoped_lock {
    redlock_sync *sync;
    redlock_lock *lock;
} scoped_lock;

/* Release and free the handle. Also the cleanup handler of a thread
 * canceled in fn: cancellation is off while it runs, so the release's wait
 * completes. A lost lock is released too: a master still holding our
 * value frees it now rather than at its TTL. */
static void scoped_release(void *arg)
{
    scoped_lock *held = arg;
    (void)redlock_sync_release(held->sync, held->lock, NULL);
    redlock_lock_free(held->lock);
}

/* Held throughout: still held now, with validity left. Auto-extension
 * marks the lock lost before its validity runs out, and a lost lock stays
 * lost, so the state when fn returns covers all of fn's run. */
static bool held_now(const redlock_lock *lock)
{
    return redlock_lock_state(lock) == REDLOCK_LOCK_HELD && redlock_lock_validity_ms(lock) > 0;
}

static int scoped_run(redlock_sync *sync, redlock_lock *lock, redlock_locked_fn fn, void *arg,
                      int *fn_result)
{
    scoped_lock held = {.sync = sync, .lock = lock};
    int status = redlock_sync_auto_extend(sync, lock, NULL, NULL);
    if (status != REDLOCK_OK) {
        scoped_release(&held);
        return status;
    }
    int returned;
    pthread_cleanup_push(scoped_release, &held);
    returned = fn(lock, arg);
    pthread_cleanup_pop(0);
    /* Read before the release, which leaves every handle RELEASED. */
    bool kept = held_now(lock);
    scoped_release(&held);
    if (fn_result != NULL)
        *fn_result = returned;
    return kept ? REDLOCK_OK : REDLOCK_ELOST;
}

int redlock_sync_with_lock_many(redlock_sync *sync, const void *const *resources,
                                const size_t *resource_lens, size_t count,
                                const redlock_acquire_options *opts, redlock_locked_fn fn,
                                void *arg, int *fn_result, redlock_result **result_out)
{
    if (fn_result != NULL)
        *fn_result = 0;
    if (result_out != NULL)
        *result_out = NULL;
    if (fn == NULL)
        return REDLOCK_EINVAL;
    redlock_lock *lock = NULL;
    int status = redlock_sync_acquire_many(sync, resources, resource_lens, count, opts, &lock,
                                           result_out);
    if (status != REDLOCK_OK)
        return status;
    return scoped_run(sync, lock, fn, arg, fn_result);
}

int redlock_sync_with_lock(redlock_sync *sync, const void *resource, size_t resource_len,
                           const redlock_acquire_options *opts, redlock_locked_fn fn, void *arg,
                           int *fn_result, redlock_result **result_out)
{
    return redlock_sync_with_lock_many(sync, &resource, &resource_len, 1, opts, fn, arg,
                                       fn_result, result_out);
}
