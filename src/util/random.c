/* SPDX-License-Identifier: BSD-3-Clause */
/* Randomness from the kernel CSPRNG: lock values, retry jitter, the
 * watchdog's schedule. */
#include "util/random.h"
#include "redlock/redlock.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/random.h>

int rl_random_bytes(void *buf, size_t len)
{
    unsigned char *p = buf;
    size_t done = 0;
    /* Small requests are never short once the pool is ready, but a signal
     * can interrupt the first call after boot. Bounded: at most len tries
     * that make progress, and EINTR is retried a few times only. */
    int interrupted = 0;
    while (done < len) {
        ssize_t n = getrandom(p + done, len - done, 0);
        if (n < 0) {
            if (errno == EINTR && ++interrupted < 16)
                continue;
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

static void to_hex(const unsigned char *raw, char out[REDLOCK_VALUE_LEN + 1])
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < REDLOCK_VALUE_LEN / 2; i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 0xf];
    }
    out[REDLOCK_VALUE_LEN] = '\0';
}

int rl_random_value(char out[REDLOCK_VALUE_LEN + 1])
{
    unsigned char raw[REDLOCK_VALUE_LEN / 2];
    if (rl_random_bytes(raw, sizeof(raw)) != 0)
        return -1;
    to_hex(raw, out);
    return 0;
}

/* Bumped in every forked child, so that pools drawn before the fork are
 * refilled rather than shared by parent and child. */
static atomic_uint fork_generation;
static pthread_once_t fork_watch_once = PTHREAD_ONCE_INIT;

static void on_fork_child(void)
{
    atomic_fetch_add(&fork_generation, 1);
}

static void watch_forks(void)
{
    pthread_atfork(NULL, NULL, on_fork_child);
}

void rl_random_pool_init(rl_random_pool *pool)
{
    pthread_once(&fork_watch_once, watch_forks);
    pool->used = sizeof(pool->bytes);
    pool->generation = atomic_load(&fork_generation);
}

/* need bytes of the pool, handed out once (refilled first when too few are
 * left, or after a fork); NULL when the kernel gave no randomness. The
 * caller wipes them once used. */
static unsigned char *pool_take(rl_random_pool *pool, size_t need)
{
    unsigned generation = atomic_load(&fork_generation);
    if (pool->used + need > sizeof(pool->bytes) || pool->generation != generation) {
        if (rl_random_bytes(pool->bytes, sizeof(pool->bytes)) != 0)
            return NULL;
        pool->used = 0;
        pool->generation = generation;
    }
    unsigned char *raw = pool->bytes + pool->used;
    pool->used += need;
    return raw;
}

int rl_random_pool_value(rl_random_pool *pool, char out[REDLOCK_VALUE_LEN + 1])
{
    const size_t need = REDLOCK_VALUE_LEN / 2;
    unsigned char *raw = pool_take(pool, need);
    if (raw == NULL)
        return -1;
    to_hex(raw, out);
    explicit_bzero(raw, need); /* a value is handed out once */
    return 0;
}

uint64_t rl_random_pool_word(rl_random_pool *pool)
{
    uint64_t word = 0;
    unsigned char *raw = pool_take(pool, sizeof(word));
    if (raw != NULL) {
        memcpy(&word, raw, sizeof(word));
        explicit_bzero(raw, sizeof(word));
    }
    return word;
}

void rl_random_pool_clear(rl_random_pool *pool)
{
    explicit_bzero(pool->bytes, sizeof(pool->bytes));
    pool->used = sizeof(pool->bytes);
}

int64_t rl_random_jitter(int64_t max)
{
    uint64_t r;
    if (max <= 0 || rl_random_bytes(&r, sizeof(r)) != 0)
        return 0;
    return (int64_t)(r % ((uint64_t)max + 1));
}
