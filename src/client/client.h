/* SPDX-License-Identifier: BSD-3-Clause */
/* The asynchronous client, which every layer is handed: its masters, its
 * operations in flight, its lifetime and entry guard (client.c). */
#ifndef REDLOCK_CLIENT_H
#define REDLOCK_CLIENT_H

#include "util/counters.h"
#include "config/config_internal.h"
#include "lock/courtesy.h"
#include "redlock/redlock.h"
#include "util/list.h"
#include "util/log.h"
#include "util/random.h"

#include <ev.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct rl_master rl_master;
typedef struct rl_subscriber rl_subscriber;

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

#endif
