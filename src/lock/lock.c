/* SPDX-License-Identifier: BSD-3-Clause */
/* Lock handles: resource, value, validity and state, readable from any
 * thread; their registration with the client that releases them. */
#include "lock/lock.h"
#include "context/context.h"
#include "util/counters.h"
#include "lock/watchdog.h"
#include "master/clock_probe.h"
#include "redlock/redlock.h"
#include "round/holders.h"
#include "util/list.h"
#include "util/util.h"
#include "wire/resources.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

redlock_lock *rl_lock_create(const rl_keys *keys, const char *value, size_t value_len,
                             int64_t ttl_ms)
{
    /* One allocation: the handle, then the resources, then the value. */
    redlock_lock *lock = calloc(1, sizeof(*lock) + keys->len + value_len + 1);
    if (lock == NULL)
        return NULL;
    char *block = (char *)(lock + 1);
    memcpy(block, keys->data, keys->len);
    lock->keys = (rl_keys){.count = keys->count, .len = keys->len, .data = block};
    lock->resource = rl_keys_at(&lock->keys, 0, &lock->resource_len);
    lock->value = block + keys->len;
    memcpy(lock->value, value, value_len);
    lock->value[value_len] = '\0';
    lock->value_len = value_len;
    atomic_init(&lock->ttl_ms, ttl_ms);
    atomic_init(&lock->deadline_us, RL_DEADLINE_UNKNOWN);
    atomic_init(&lock->phase, RL_LOCK_ACTIVE);
    atomic_init(&lock->lost_fd, -1);
    atomic_init(&lock->watched, false);
    atomic_init(&lock->held_by, NULL);
    lock->delay_ms = -1;
    rl_list_init(&lock->link);
    return lock;
}

int redlock_lock_new_many(redlock_lock **out, const void *const *resources,
                          const size_t *resource_lens, size_t count, const void *value,
                          size_t value_len, int64_t ttl_ms)
{
    if (out == NULL)
        return REDLOCK_EINVAL;
    *out = NULL;
    size_t block_len;
    if (rl_keys_check(resources, resource_lens, count, &block_len) != REDLOCK_OK ||
        value == NULL || value_len == 0 || value_len > REDLOCK_MAX_VALUE_LEN || ttl_ms < 0 ||
        ttl_ms > INT32_MAX)
        return REDLOCK_EINVAL;
    char *block = malloc(block_len);
    if (block == NULL)
        return REDLOCK_ENOMEM;
    rl_keys keys;
    rl_keys_store(&keys, block, resources, resource_lens, count);
    *out = rl_lock_create(&keys, value, value_len, ttl_ms);
    free(block);
    return *out ? REDLOCK_OK : REDLOCK_ENOMEM;
}

int redlock_lock_new(redlock_lock **out, const void *resource, size_t resource_len,
                     const void *value, size_t value_len, int64_t ttl_ms)
{
    return redlock_lock_new_many(out, &resource, &resource_len, 1, value, value_len, ttl_ms);
}

/*
 * Which client owns which handle: every handle's owner and every client's
 * list of locks, for all clients, under one mutex. A blocking client's
 * callers free handles on their own threads while its I/O thread registers
 * new ones or, freeing the client, releases them all; the mutex outlives
 * both sides. A handle's owner, read under it, is a client that has not
 * let go of the handle yet, so neither that client nor its blocking client
 * can be gone.
 */
static pthread_mutex_t owners_mu = PTHREAD_MUTEX_INITIALIZER;
/* Broadcast when a client has let go of its handles. */
static pthread_cond_t owners_cv = PTHREAD_COND_INITIALIZER;

void rl_lock_register(redlock_client *client, redlock_lock *lock)
{
    pthread_mutex_lock(&owners_mu);
    lock->owner = client;
    rl_list_push_back(&client->locks, &lock->link);
    pthread_mutex_unlock(&owners_mu);
}

void rl_lock_disown_all(redlock_client *client, void (*let_go)(redlock_lock *lock, void *arg),
                        void *arg)
{
    pthread_mutex_lock(&owners_mu);
    rl_link *link;
    while ((link = rl_list_pop_front(&client->locks)) != NULL) {
        redlock_lock *lock = rl_container_of(link, redlock_lock, link);
        lock->owner = NULL;
        rl_lock_end_hold(lock);
        let_go(lock, arg);
    }
    pthread_cond_broadcast(&owners_cv);
    pthread_mutex_unlock(&owners_mu);
}

/* With owners_mu held. */
static void lock_unregister(redlock_lock *lock)
{
    rl_list_remove(&lock->link);
    lock->owner = NULL;
}

/* Free a handle no client owns any more. */
static void lock_destroy_unowned(redlock_lock *lock)
{
    rl_watchdog_stop(lock);
    rl_holders_unref(atomic_exchange(&lock->holders, NULL));
    if (lock->busy != NULL)
        lock->busy->lock = NULL; /* the operation completes without it */
    int fd = atomic_load(&lock->lost_fd);
    if (fd >= 0)
        close(fd);
    free(lock);
}

void rl_lock_set_holders(redlock_lock *lock, rl_holders *h)
{
    if (h != NULL)
        rl_holders_ref(h);
    rl_holders_unref(atomic_exchange(&lock->holders, h));
}

static unsigned count_masters(uint64_t masters)
{
    unsigned n = 0;
    for (; masters != 0; masters &= masters - 1)
        n++;
    return n;
}

size_t rl_lock_doom_by_holders(redlock_client *client, uint64_t fast, uint64_t proven,
                               unsigned quorum, void (*release)(redlock_lock *lock, void *arg),
                               void *arg, size_t *kept)
{
    size_t doomed = 0;
    *kept = 0;
    int64_t now = rl_now_us();
    rl_link marked;
    rl_list_init(&marked);
    pthread_mutex_lock(&owners_mu);
    for (rl_link *l = client->locks.next, *next; l != &client->locks; l = next) {
        next = l->next;
        redlock_lock *lock = rl_container_of(l, redlock_lock, link);
        const rl_holders *h = atomic_load(&lock->holders);
        if (atomic_load(&lock->phase) != RL_LOCK_ACTIVE || lock->clock_doomed || h == NULL ||
            rl_lock_deadline(lock) <= now)
            continue; /* not held, or no masters known to hold it */
        if (count_masters(rl_holders_get(h) & ~fast) >= quorum) {
            if (rl_holders_get(h) & proven)
                (*kept)++;
            continue;
        }
        doomed++;
        if (lock->watchdog != NULL) {
            /* Its lost callback runs outside the mutex, one at a time:
             * marked and moved to the front, where it is found at once. */
            lock->clock_doomed = true;
            rl_list_remove(l);
            rl_list_push_back(&marked, l);
        } else {
            rl_lock_mark_lost(lock);
            release(lock, arg);
        }
    }
    if (!rl_list_empty(&marked)) { /* splice marked in front of client->locks */
        rl_link *first = marked.next;
        rl_link *last = marked.prev;
        last->next = client->locks.next;
        client->locks.next->prev = last;
        client->locks.next = first;
        first->prev = &client->locks;
    }
    pthread_mutex_unlock(&owners_mu);
    return doomed;
}

redlock_lock *rl_lock_take_doomed(redlock_client *client)
{
    redlock_lock *lock = NULL;
    pthread_mutex_lock(&owners_mu);
    if (!rl_list_empty(&client->locks)) {
        redlock_lock *first = rl_container_of(client->locks.next, redlock_lock, link);
        if (first->clock_doomed) {
            first->clock_doomed = false;
            rl_list_remove(&first->link);
            rl_list_push_back(&client->locks, &first->link);
            lock = first;
        }
    }
    pthread_mutex_unlock(&owners_mu);
    return lock;
}

void rl_lock_destroy(redlock_lock *lock)
{
    pthread_mutex_lock(&owners_mu);
    lock_unregister(lock);
    rl_lock_end_hold(lock);
    pthread_mutex_unlock(&owners_mu);
    lock_destroy_unowned(lock);
}

static void lock_free(redlock_lock *lock)
{
    pthread_mutex_lock(&owners_mu);
    redlock_client *owner = lock->owner;
    /* An auto-extended handle of a blocking client has timers on the I/O
     * thread's loop: only that thread may take it apart. */
    if (owner != NULL && atomic_load(&lock->watched) && owner->sync != NULL &&
        !owner->hooks->sync_on_io_thread(owner->sync)) {
        if (owner->hooks->sync_destroy_lock(owner->sync, lock, &owners_mu) == REDLOCK_OK)
            return;
        /* The client is being freed: once it has let go of the handle
         * (stopped its extension, released it), the handle is ours. */
        pthread_mutex_lock(&owners_mu);
        while (lock->owner != NULL)
            pthread_cond_wait(&owners_cv, &owners_mu);
    }
    lock_unregister(lock);
    rl_lock_end_hold(lock); /* under owners_mu: its client is still there */
    pthread_mutex_unlock(&owners_mu);
    lock_destroy_unowned(lock);
}

void redlock_lock_free(redlock_lock *lock)
{
    if (lock == NULL)
        return;
    /* Not a cancellation point (its waits would be): a thread canceled
     * halfway would leave the handle neither freed nor usable. */
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    lock_free(lock);
    pthread_setcancelstate(cancel_state, NULL);
}

const void *redlock_lock_resource(const redlock_lock *lock, size_t *len)
{
    if (len != NULL)
        *len = lock ? lock->resource_len : 0;
    return lock ? lock->resource : NULL;
}

size_t redlock_lock_resource_count(const redlock_lock *lock)
{
    return lock ? lock->keys.count : 0;
}

const void *redlock_lock_resource_at(const redlock_lock *lock, size_t i, size_t *len)
{
    size_t n = 0;
    const char *resource = lock && i < lock->keys.count ? rl_keys_at(&lock->keys, i, &n) : NULL;
    if (len != NULL)
        *len = n;
    return resource;
}

const char *redlock_lock_value(const redlock_lock *lock, size_t *len)
{
    if (len != NULL)
        *len = lock ? lock->value_len : 0;
    return lock ? lock->value : NULL;
}

int64_t rl_lock_deadline(const redlock_lock *lock)
{
    return atomic_load(&lock->deadline_us);
}

int64_t redlock_lock_validity_ms(const redlock_lock *lock)
{
    if (lock == NULL)
        return 0;
    /* A release stores its phase just before it ends the validity. */
    if (atomic_load(&lock->phase) == RL_LOCK_RELEASED)
        return 0;
    int64_t deadline = rl_lock_deadline(lock);
    if (deadline == RL_DEADLINE_UNKNOWN)
        return 0;
    return (deadline - rl_now_us()) / 1000;
}

int64_t redlock_lock_ttl_ms(const redlock_lock *lock)
{
    return lock ? atomic_load(&lock->ttl_ms) : 0;
}

uint64_t redlock_lock_fencing_token(const redlock_lock *lock)
{
    return lock ? lock->fencing_token : 0; /* set before the handle is handed out */
}

static int lock_state_of_phase(int phase)
{
    switch (phase) {
    case RL_LOCK_RELEASED:
        return REDLOCK_LOCK_RELEASED;
    case RL_LOCK_LOST:
        return REDLOCK_LOCK_LOST;
    default:
        return REDLOCK_LOCK_UNKNOWN;
    }
}

int redlock_lock_state(const redlock_lock *lock)
{
    if (lock == NULL)
        return REDLOCK_LOCK_UNKNOWN;
    int phase = atomic_load(&lock->phase);
    if (phase != RL_LOCK_ACTIVE)
        return lock_state_of_phase(phase);
    int64_t deadline = rl_lock_deadline(lock);
    if (deadline == RL_DEADLINE_UNKNOWN)
        return REDLOCK_LOCK_UNKNOWN;
    if (deadline > rl_now_us())
        return REDLOCK_LOCK_HELD;
    /* A release (on another thread) stores its phase before it ends the
     * validity: a deadline cut short shows the phase it came with. */
    phase = atomic_load(&lock->phase);
    return phase != RL_LOCK_ACTIVE ? lock_state_of_phase(phase) : REDLOCK_LOCK_EXPIRED;
}

static void signal_lost_fd(int fd)
{
    uint64_t one = 1;
    /* Non-blocking; a full counter (never, in practice) is still readable. */
    ssize_t n = write(fd, &one, sizeof(one));
    (void)n;
}

int redlock_lock_lost_fd(redlock_lock *lock, int *fd_out)
{
    if (fd_out != NULL)
        *fd_out = -1;
    if (lock == NULL || fd_out == NULL)
        return REDLOCK_EINVAL;
    int fd = atomic_load(&lock->lost_fd);
    if (fd >= 0) {
        *fd_out = fd;
        return REDLOCK_OK;
    }
    int created = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (created < 0)
        return REDLOCK_ESYS;
    int expected = -1;
    if (!atomic_compare_exchange_strong(&lock->lost_fd, &expected, created)) {
        close(created); /* another thread won */
        *fd_out = expected;
        return REDLOCK_OK;
    }
    /* The loss may have happened before the fd existed: both sides look at
     * the other's flag after setting their own, so one of them signals. */
    if (atomic_load(&lock->phase) == RL_LOCK_LOST)
        signal_lost_fd(created);
    *fd_out = created;
    return REDLOCK_OK;
}

void rl_lock_start_hold(redlock_client *client, redlock_lock *lock)
{
    bool first = atomic_load(&client->stats.locks_held) == 0;
    rl_count(&client->stats.locks_held);
    atomic_store(&lock->held_by, &client->stats);
    if (first) /* the masters' clocks are sampled faster from now on */
        rl_clock_probes_on_hold(client);
}

/* The client's counters outlive the hold: a client being freed ends the
 * holds of its locks (rl_lock_disown_all) before it goes. */
void rl_lock_end_hold(redlock_lock *lock)
{
    rl_client_counters *c = atomic_exchange(&lock->held_by, NULL);
    if (c != NULL)
        rl_stats_hold_ended(c, rl_now_us() - lock->acquired_us);
}

void rl_lock_mark_lost(redlock_lock *lock)
{
    rl_lock_end_hold(lock);
    atomic_store(&lock->phase, RL_LOCK_LOST);
    int fd = atomic_load(&lock->lost_fd);
    if (fd >= 0)
        signal_lost_fd(fd);
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
    atomic_store(&lock->deadline_us, deadline_us);
}
