/* SPDX-License-Identifier: BSD-3-Clause */
/* The client's context, which every layer is handed: its masters, its
 * operations in flight, its lifetime and entry guard, and the hooks through
 * which the layers below tell those above (context.c). client/client.c
 * makes it and frees it. */
#ifndef REDLOCK_CONTEXT_H
#define REDLOCK_CONTEXT_H

#include "util/counters.h"
#include "config/config_internal.h"
#include "redlock/redlock.h"
#include "util/list.h"
#include "util/log.h"
#include "util/random.h"
#include "wire/resources.h"

#include <assert.h>
#include <ev.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct rl_master rl_master;
typedef struct rl_subscriber rl_subscriber;

/* Resources this client released while others waited, remembered by a
 * hash in a small ring (lock/courtesy.h reads and writes it). */
#define RL_COURTESY_SLOTS 16

typedef struct rl_courtesy {
    uint64_t hash;
    int64_t until_us;
} rl_courtesy;

typedef struct rl_courtesy_ring {
    rl_courtesy entries[RL_COURTESY_SLOTS];
    unsigned next;
} rl_courtesy_ring;

/*
 * What the layers above do for those below, which name none of them
 * (docs/design.md, Layers): one table, filled by client/client.c and given
 * to the client when it is made. Each says who calls it and what answers.
 */
typedef struct rl_client_hooks {
    /* context.c, the last rl_client_unref(): free what the layers above
     * keep in the client (owed releases, seedings, subscribers, masters,
     * TLS contexts). The context frees its own after. */
    void (*destroy)(redlock_client *client);
    /* context.c, the outermost rl_client_leave() after a
     * redlock_client_free() made from a callback: the free itself. */
    void (*close)(redlock_client *client);
    /* master/clock_probe.c, a master proven fast: the held locks weighed
     * against it (lock/clock_loss.h: rl_clock_loss_check). May call back
     * into the program. */
    void (*clock_loss_check)(redlock_client *client, const rl_master *proven);
    /* master/master.c, each time a master is READY: send it the releases
     * owed to it (round/owed_release.h: rl_owed_release_on_ready). */
    void (*master_ready)(rl_master *m);
    /* round/owed_release.c, out of memory for an owed release: send it
     * where it can go now, with no one waiting for the outcome
     * (lock/release.h: rl_release_unattended). */
    void (*release_unattended)(redlock_client *client, const rl_keys *keys, const char *value,
                               size_t value_len, const bool *target);
    /* round/quorum.c, a fenced acquire's OK from a master whose counter is
     * not in use in run run_id: have it seeded (lock/fence_seed.h:
     * rl_fence_seed_notice). */
    void (*fence_seed_notice)(redlock_client *client, size_t master, const char *run_id);
    /* lock/lock.c, a handle of a blocking client freed on a caller's
     * thread (client/sync.h: rl_sync_on_io_thread, rl_sync_destroy_lock). */
    bool (*sync_on_io_thread)(const redlock_sync *sync);
    int (*sync_destroy_lock)(redlock_sync *sync, redlock_lock *lock, pthread_mutex_t *held);
} rl_client_hooks;

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
    const rl_client_hooks *hooks; /* client/client.c's */
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
/* Where a frame of the library's must be on the stack: what the program's
 * callbacks do there (free the client, say) waits for its leave. Checked
 * only in builds made with REDLOCK_CHECK_ENTRIES (CMake's Debug builds:
 * the sanitizer and valgrind passes); any other build, whatever its
 * NDEBUG, never aborts. */
#ifdef REDLOCK_CHECK_ENTRIES
#define RL_EXPECT_ENTERED(client) assert(rl_client_entered(client))
#else
#define RL_EXPECT_ENTERED(client) ((void)(client))
#endif
void rl_client_add_op(redlock_client *client, rl_op *op);
void rl_client_remove_op(rl_op *op);
/* The TLS context of node (in the client's config), or NULL: plain. */
const struct rl_tls_ctx *rl_client_tls(const redlock_client *client, const rl_node *node);
/* The config's default for key. */
int64_t rl_client_setting(const redlock_client *client, redlock_setting key);

#endif
