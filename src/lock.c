/* Lock handles: resource, value, and how long the holder may act. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

bool rl_resource_valid(const void *resource, size_t len)
{
    return resource != NULL && len > 0 && len <= REDLOCK_MAX_RESOURCE_LEN;
}

redlock_lock *rl_lock_create(const void *resource, size_t resource_len, const char *value,
                             size_t value_len, int64_t ttl_ms)
{
    redlock_lock *lock = calloc(1, sizeof(*lock));
    if (lock == NULL)
        return NULL;
    lock->resource = malloc(resource_len);
    lock->value = malloc(value_len + 1);
    if (lock->resource == NULL || lock->value == NULL) {
        free(lock->resource);
        free(lock->value);
        free(lock);
        return NULL;
    }
    memcpy(lock->resource, resource, resource_len);
    lock->resource_len = resource_len;
    memcpy(lock->value, value, value_len);
    lock->value[value_len] = '\0';
    lock->value_len = value_len;
    lock->ttl_ms = ttl_ms;
    return lock;
}

int redlock_lock_new(redlock_lock **out, const void *resource, size_t resource_len,
                     const void *value, size_t value_len, int64_t ttl_ms)
{
    if (out == NULL)
        return REDLOCK_EINVAL;
    *out = NULL;
    if (!rl_resource_valid(resource, resource_len) || value == NULL || value_len == 0 ||
        value_len > REDLOCK_MAX_VALUE_LEN || ttl_ms < 0 || ttl_ms > INT32_MAX)
        return REDLOCK_EINVAL;
    *out = rl_lock_create(resource, resource_len, value, value_len, ttl_ms);
    return *out ? REDLOCK_OK : REDLOCK_ENOMEM;
}

void redlock_lock_free(redlock_lock *lock)
{
    if (lock == NULL)
        return;
    if (lock->busy != NULL)
        lock->busy->lock = NULL; /* the operation completes without it */
    free(lock->resource);
    free(lock->value);
    free(lock);
}

const void *redlock_lock_resource(const redlock_lock *lock, size_t *len)
{
    if (len != NULL)
        *len = lock ? lock->resource_len : 0;
    return lock ? lock->resource : NULL;
}

const char *redlock_lock_value(const redlock_lock *lock, size_t *len)
{
    if (len != NULL)
        *len = lock ? lock->value_len : 0;
    return lock ? lock->value : NULL;
}

int64_t redlock_lock_validity_ms(const redlock_lock *lock)
{
    if (lock == NULL || !lock->validity_known)
        return 0;
    return (lock->deadline_us - rl_now_us()) / 1000;
}

int64_t redlock_lock_ttl_ms(const redlock_lock *lock)
{
    return lock ? lock->ttl_ms : 0;
}

bool rl_lock_claim(redlock_lock *lock, rl_lock_use *use)
{
    if (lock->busy != NULL)
        return false;
    use->lock = lock;
    lock->busy = use;
    return true;
}

void rl_lock_unclaim(rl_lock_use *use)
{
    if (use->lock != NULL)
        use->lock->busy = NULL;
    use->lock = NULL;
}

void rl_lock_set_deadline(redlock_lock *lock, int64_t deadline_us)
{
    lock->validity_known = true;
    lock->deadline_us = deadline_us;
}
