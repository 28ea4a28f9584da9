/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The blocking client: an asynchronous client on a private loop, run by one
 * I/O thread. A calling thread queues its request (under a mutex held only
 * to link it), wakes the loop with ev_async, and sleeps on the request's own
 * semaphore until the I/O thread completes it. Many threads can so have
 * operations in flight at once; nothing is locked across a round trip.
 *
 * A request lives on its caller's stack:
 *
 *   QUEUED --the I/O thread takes it--> STARTED --it completes--> DONE
 *   QUEUED --the caller is canceled--> DONE (never started)
 *   STARTED --the caller is canceled--> WITHDRAWN
 *   WITHDRAWN --the I/O thread cancels its operation--> DONE
 *
 * The I/O thread posts a request it took once, on DONE, and never touches
 * it again. A caller canceled in its wait (pthread_cancel: sem_wait is a
 * cancellation point) withdraws its request in a cleanup handler and waits
 * for DONE before its stack goes; nowhere else is the call a cancellation
 * point. Callers count themselves in the client, which is not freed before
 * the last one has left.
 */
#include "internal.h"

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>

typedef enum rl_sync_kind {
    RL_SYNC_ACQUIRE,
    RL_SYNC_EXTEND,
    RL_SYNC_RELEASE,
    RL_SYNC_AUTO_EXTEND,
    RL_SYNC_INSPECT,
    RL_SYNC_PING,
    RL_SYNC_DESTROY_LOCK
} rl_sync_kind;

typedef enum rl_sync_state {
    RL_SYNC_QUEUED,    /* in sync->queue */
    RL_SYNC_STARTED,   /* its operation is in flight */
    RL_SYNC_WITHDRAWN, /* in flight, its caller canceled: in sync->withdrawn */
    RL_SYNC_DONE       /* outcome written: the caller's alone */
} rl_sync_state;

/*
 * One blocking call, living on the caller's stack. Its state changes under
 * sync->mu, but for the I/O thread's STARTED -> DONE, under req->mu alone
 * (WITHDRAWN -> DONE takes both, to leave the list); the caller changes and
 * reads it only when canceled, with both held.
 */
typedef struct rl_sync_request {
    rl_link link;          /* in sync->queue or sync->withdrawn, per state */
    redlock_sync *sync;
    rl_sync_state state;
    struct rl_sync_request *next; /* the I/O thread's: requests taken in at once */
    rl_op *op;             /* STARTED, WITHDRAWN: the operation, if asynchronous */
    rl_sync_kind kind;
    const void *resource;
    size_t resource_len;
    const redlock_acquire_options *opts;
    redlock_lock *lock;    /* extend, release, auto-extend, destroy */
    int64_t ttl_ms;        /* extend */
    redlock_lost_cb on_lost; /* auto-extend */
    void *lost_arg;
    bool want_result;
    pthread_mutex_t mu;    /* see above */
    sem_t done;            /* posted once if the I/O thread took it, on DONE */
    int status;
    redlock_lock *lock_out;
    redlock_result *result;
} rl_sync_request;

/* After handing a result to a caller, or taking requests in, the I/O thread
 * keeps polling without sleeping for this long: the caller's next request
 * (the release after an acquire) then needs no wake-up. */
#define RL_SYNC_SPIN_US 200

struct redlock_sync {
    struct ev_loop *loop;
    ev_idle spin;           /* active while polling without sleeping */
    int64_t spin_until_us;
    redlock_client *client; /* touched only by the I/O thread once it runs */
    pthread_t thread;
    ev_async wakeup;
    pthread_mutex_t mu;     /* guards the lists, callers, stopping (and states) */
    pthread_cond_t idle;    /* signaled when callers drops to 0 */
    rl_link queue;          /* QUEUED requests, oldest first */
    rl_link withdrawn;      /* WITHDRAWN requests */
    unsigned callers;       /* threads inside a call */
    bool stopping;
};

/* Every change of a request's state (see rl_sync_request for the mutexes
 * held): the lists follow. */
static void request_set_state(redlock_sync *s, rl_sync_request *req, rl_sync_state to)
{
    rl_list_remove(&req->link);
    if (to == RL_SYNC_QUEUED)
        rl_list_push_back(&s->queue, &req->link);
    else if (to == RL_SYNC_WITHDRAWN)
        rl_list_push_back(&s->withdrawn, &req->link);
    req->state = to;
}

/* With s->mu held: take the first request off list, or NULL. */
static rl_sync_request *request_pop(rl_link *list)
{
    rl_link *link = rl_list_pop_front(list);
    return link != NULL ? rl_container_of(link, rl_sync_request, link) : NULL;
}

static void sync_keep_polling(redlock_sync *s)
{
    s->spin_until_us = rl_now_us() + RL_SYNC_SPIN_US;
    if (!ev_is_active(&s->spin))
        ev_idle_start(s->loop, &s->spin);
}

static void sync_on_spin(struct ev_loop *loop, ev_idle *w, int revents)
{
    redlock_sync *s = w->data;
    if (rl_now_us() >= s->spin_until_us)
        ev_idle_stop(loop, w);
}

/* I/O thread: hand the outcome back and wake the caller. The request may be
 * gone as soon as it is posted. */
static void sync_finish(rl_sync_request *req, int status, redlock_lock *lock,
                        const redlock_result *result)
{
    redlock_sync *s = req->sync;
    req->status = status;
    req->lock_out = lock;
    if (req->want_result && result != NULL)
        redlock_result_copy(result, &req->result); /* NULL if out of memory */
    sync_keep_polling(s);
    pthread_mutex_lock(&req->mu);
    if (req->state == RL_SYNC_WITHDRAWN) {
        pthread_mutex_lock(&s->mu);
        request_set_state(s, req, RL_SYNC_DONE);
        pthread_mutex_unlock(&s->mu);
    } else {
        request_set_state(s, req, RL_SYNC_DONE); /* from STARTED: in no list */
    }
    pthread_mutex_unlock(&req->mu);
    sem_post(&req->done);
}

static void sync_acquire_done(int status, redlock_lock *lock, const redlock_result *result,
                              void *arg)
{
    sync_finish(arg, status, lock, result);
}

static void sync_done(int status, const redlock_result *result, void *arg)
{
    sync_finish(arg, status, NULL, result);
}

/* The operation a successful asynchronous start just made: operations are
 * appended to the client's list. */
static rl_op *sync_newest_op(const redlock_sync *s)
{
    return rl_container_of(s->client->ops.prev, rl_op, link);
}

static void sync_start(redlock_sync *s, rl_sync_request *req)
{
    int rc;
    switch (req->kind) {
    case RL_SYNC_ACQUIRE:
        rc = redlock_acquire_async(s->client, req->resource, req->resource_len, req->opts,
                                   sync_acquire_done, req);
        break;
    case RL_SYNC_EXTEND:
        rc = redlock_extend_async(s->client, req->lock, req->ttl_ms, sync_done, req);
        break;
    case RL_SYNC_RELEASE:
        rc = redlock_release_async(s->client, req->lock, sync_done, req);
        break;
    case RL_SYNC_INSPECT:
        rc = redlock_inspect_async(s->client, req->resource, req->resource_len, sync_done, req);
        break;
    case RL_SYNC_PING:
        rc = redlock_ping_async(s->client, sync_done, req);
        break;
    case RL_SYNC_AUTO_EXTEND:
        /* Completes at once: report REDLOCK_OK or the error. */
        rc = redlock_auto_extend_async(s->client, req->lock, req->on_lost, req->lost_arg);
        sync_finish(req, rc, NULL, NULL);
        return;
    default:
        rl_lock_destroy(req->lock);
        sync_finish(req, REDLOCK_OK, NULL, NULL);
        return;
    }
    if (rc == REDLOCK_OK)
        req->op = sync_newest_op(s);
    else
        sync_finish(req, rc, NULL, NULL);
}

static void sync_on_wakeup(struct ev_loop *loop, ev_async *w, int revents)
{
    redlock_sync *s = w->data;
    bool stopping;
    for (;;) {
        /* Every queued request at once (callers enqueue meanwhile), and one
         * withdrawn: its operation started in an earlier pass. */
        pthread_mutex_lock(&s->mu);
        stopping = s->stopping;
        rl_sync_request *withdrawn = request_pop(&s->withdrawn);
        rl_sync_request *taken = NULL;
        rl_sync_request **tail = &taken;
        rl_sync_request *req;
        while ((req = request_pop(&s->queue)) != NULL) {
            request_set_state(s, req, RL_SYNC_STARTED);
            *tail = req;
            tail = &req->next;
        }
        *tail = NULL;
        pthread_mutex_unlock(&s->mu);
        if (withdrawn == NULL && taken == NULL)
            break;
        if (withdrawn != NULL)
            withdrawn->op->cancel(withdrawn->op); /* completes it: DONE */
        while (taken != NULL) {
            req = taken;
            taken = req->next; /* req may be gone once finished */
            if (stopping)
                sync_finish(req, REDLOCK_ECANCELED, NULL, NULL);
            else
                sync_start(s, req);
        }
    }
    if (stopping) {
        /* Releases held locks and cancels anything still in flight; the loop
         * then runs until the releases are out and the connections closed
         * (at most a command timeout), and ev_run() returns by itself. */
        redlock_client_free(s->client);
        s->client = NULL;
        ev_async_stop(loop, &s->wakeup);
        ev_idle_stop(loop, &s->spin);
    }
}

static void *sync_thread_main(void *arg)
{
    redlock_sync *s = arg;
    ev_run(s->loop, 0);
    return NULL;
}

static void sync_destroy(redlock_sync *s)
{
    ev_loop_destroy(s->loop);
    pthread_cond_destroy(&s->idle);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

int redlock_sync_new(redlock_sync **out, const redlock_config *cfg)
{
    if (out == NULL)
        return REDLOCK_EINVAL;
    *out = NULL;
    if (cfg == NULL)
        return REDLOCK_EINVAL;
    redlock_sync *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return REDLOCK_ENOMEM;
    /* Our loop must not touch the process's signal mask or handlers. */
    s->loop = ev_loop_new(EVFLAG_AUTO | EVFLAG_NOSIGMASK);
    if (s->loop == NULL) {
        free(s);
        return REDLOCK_ESYS;
    }
    int rc = redlock_client_new(&s->client, cfg, s->loop);
    if (rc != REDLOCK_OK) {
        ev_loop_destroy(s->loop);
        free(s);
        return rc;
    }
    s->client->sync = s;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->idle, NULL);
    rl_list_init(&s->queue);
    rl_list_init(&s->withdrawn);
    ev_async_init(&s->wakeup, sync_on_wakeup);
    s->wakeup.data = s;
    ev_async_start(s->loop, &s->wakeup);
    ev_idle_init(&s->spin, sync_on_spin);
    s->spin.data = s;

    /* The I/O thread takes no signals: they belong to the application's
     * threads, and a write to a dead master then fails with EPIPE instead of
     * raising SIGPIPE. */
    sigset_t all;
    sigset_t old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int err = pthread_create(&s->thread, NULL, sync_thread_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err != 0) {
        redlock_client_free(s->client);
        ev_async_stop(s->loop, &s->wakeup);
        ev_run(s->loop, 0); /* whatever the free left to finish */
        sync_destroy(s);
        return REDLOCK_ESYS;
    }
    *out = s;
    return REDLOCK_OK;
}

void redlock_sync_free(redlock_sync *s)
{
    if (s == NULL)
        return;
    int cancel_state; /* not a cancellation point: the thread must be joined */
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    pthread_mutex_unlock(&s->mu);
    ev_async_send(s->loop, &s->wakeup);
    pthread_join(s->thread, NULL);
    /* Every request is DONE; their callers still leave through s->mu. */
    pthread_mutex_lock(&s->mu);
    while (s->callers > 0)
        pthread_cond_wait(&s->idle, &s->mu);
    pthread_mutex_unlock(&s->mu);
    sync_destroy(s);
    pthread_setcancelstate(cancel_state, NULL);
}

/* Caller thread: count in and queue req, waking the I/O thread; false
 * (nothing queued) once the free has begun. */
static bool sync_enter(redlock_sync *s, rl_sync_request *req)
{
    pthread_mutex_lock(&s->mu);
    bool open = !s->stopping;
    if (open) {
        s->callers++;
        request_set_state(s, req, RL_SYNC_QUEUED);
        ev_async_send(s->loop, &s->wakeup);
    }
    pthread_mutex_unlock(&s->mu);
    return open;
}

static void sync_leave(redlock_sync *s)
{
    pthread_mutex_lock(&s->mu);
    if (--s->callers == 0)
        pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->mu);
}

static int sync_call(redlock_sync *s, rl_sync_request *req, redlock_result **result_out,
                     pthread_mutex_t *held);

/* The outcome of a call whose caller is gone: nobody will see it. */
static void sync_discard(redlock_sync *s, rl_sync_request *req)
{
    redlock_result_free(req->result);
    if (req->lock_out != NULL) {
        /* Acquired just as the caller was canceled: give it back. */
        rl_sync_request release = {.kind = RL_SYNC_RELEASE, .lock = req->lock_out};
        sync_call(s, &release, NULL, NULL);
        redlock_lock_free(req->lock_out);
    }
}

static void request_init_sync(rl_sync_request *req)
{
    pthread_mutex_init(&req->mu, NULL);
    sem_init(&req->done, 0, 0);
}

static void request_destroy_sync(rl_sync_request *req)
{
    sem_destroy(&req->done);
    pthread_mutex_destroy(&req->mu);
}

static void sync_await(rl_sync_request *req)
{
    while (sem_wait(&req->done) != 0)
        ; /* EINTR: a signal handler ran; keep waiting */
}

/* Cleanup handler: the caller is canceled in its wait. Its request must be
 * DONE, never to be touched again, before the stack it lives on goes. */
static void sync_withdraw(void *arg)
{
    rl_sync_request *req = arg;
    redlock_sync *s = req->sync;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    pthread_mutex_lock(&req->mu);
    pthread_mutex_lock(&s->mu);
    bool taken = req->state != RL_SYNC_QUEUED; /* then the I/O thread posts it */
    if (req->state == RL_SYNC_QUEUED) {
        req->status = REDLOCK_ECANCELED;
        request_set_state(s, req, RL_SYNC_DONE); /* never started */
    } else if (req->state == RL_SYNC_STARTED) {
        request_set_state(s, req, RL_SYNC_WITHDRAWN);
        ev_async_send(s->loop, &s->wakeup);
    }
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_unlock(&req->mu);
    if (taken)
        sync_await(req); /* DONE, at the latest once the I/O thread cancels it */
    request_destroy_sync(req);
    sync_discard(s, req); /* still counted in: s stays */
    sync_leave(s);
}

/* Wait for DONE: the call's only cancellation point (when the caller's
 * state allows it). */
static void sync_wait(rl_sync_request *req, int cancel_state)
{
    pthread_cleanup_push(sync_withdraw, req);
    pthread_setcancelstate(cancel_state, NULL);
    sync_await(req);
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    pthread_cleanup_pop(0);
}

/* Caller thread: queue req, wake the I/O thread, unlock held (if not NULL),
 * wait for completion. */
static int sync_call(redlock_sync *s, rl_sync_request *req, redlock_result **result_out,
                     pthread_mutex_t *held)
{
    /* Not a cancellation point but in the wait: ev_async_send() writes to
     * a pipe (a cancellation point) with s->mu held. */
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    req->want_result = result_out != NULL;
    req->sync = s;
    rl_list_init(&req->link);
    request_init_sync(req);
    bool queued = sync_enter(s, req);
    if (held != NULL)
        pthread_mutex_unlock(held);
    if (queued) {
        sync_wait(req, cancel_state);
        sync_leave(s);
    } else {
        req->status = REDLOCK_ECANCELED;
    }
    request_destroy_sync(req);
    if (result_out != NULL)
        *result_out = req->result;
    pthread_setcancelstate(cancel_state, NULL);
    return req->status;
}

int redlock_sync_acquire(redlock_sync *s, const void *resource, size_t resource_len,
                         const redlock_acquire_options *opts, redlock_lock **lock_out,
                         redlock_result **result_out)
{
    if (result_out != NULL)
        *result_out = NULL;
    if (lock_out != NULL)
        *lock_out = NULL;
    if (s == NULL || lock_out == NULL || !rl_resource_valid(resource, resource_len))
        return REDLOCK_EINVAL;
    rl_sync_request req = {
        .kind = RL_SYNC_ACQUIRE,
        .resource = resource,
        .resource_len = resource_len,
        .opts = opts,
    };
    int status = sync_call(s, &req, result_out, NULL);
    *lock_out = req.lock_out;
    return status;
}

int redlock_sync_extend(redlock_sync *s, redlock_lock *lock, int64_t ttl_ms,
                        redlock_result **result_out)
{
    if (result_out != NULL)
        *result_out = NULL;
    if (s == NULL || lock == NULL)
        return REDLOCK_EINVAL;
    rl_sync_request req = {.kind = RL_SYNC_EXTEND, .lock = lock, .ttl_ms = ttl_ms};
    return sync_call(s, &req, result_out, NULL);
}

int redlock_sync_release(redlock_sync *s, redlock_lock *lock, redlock_result **result_out)
{
    if (result_out != NULL)
        *result_out = NULL;
    if (s == NULL || lock == NULL)
        return REDLOCK_EINVAL;
    rl_sync_request req = {.kind = RL_SYNC_RELEASE, .lock = lock};
    return sync_call(s, &req, result_out, NULL);
}

int redlock_sync_auto_extend(redlock_sync *s, redlock_lock *lock, redlock_lost_cb on_lost,
                             void *arg)
{
    if (s == NULL || lock == NULL)
        return REDLOCK_EINVAL;
    rl_sync_request req = {
        .kind = RL_SYNC_AUTO_EXTEND, .lock = lock, .on_lost = on_lost, .lost_arg = arg};
    return sync_call(s, &req, NULL, NULL);
}

int redlock_sync_inspect(redlock_sync *s, const void *resource, size_t resource_len,
                         redlock_result **result_out)
{
    if (result_out != NULL)
        *result_out = NULL;
    if (s == NULL || !rl_resource_valid(resource, resource_len))
        return REDLOCK_EINVAL;
    rl_sync_request req = {
        .kind = RL_SYNC_INSPECT, .resource = resource, .resource_len = resource_len};
    return sync_call(s, &req, result_out, NULL);
}

int redlock_sync_ping(redlock_sync *s, redlock_result **result_out)
{
    if (result_out != NULL)
        *result_out = NULL;
    if (s == NULL)
        return REDLOCK_EINVAL;
    rl_sync_request req = {.kind = RL_SYNC_PING};
    return sync_call(s, &req, result_out, NULL);
}

bool rl_sync_on_io_thread(const redlock_sync *s)
{
    return pthread_equal(pthread_self(), s->thread);
}

int rl_sync_destroy_lock(redlock_sync *s, redlock_lock *lock, pthread_mutex_t *held)
{
    rl_sync_request req = {.kind = RL_SYNC_DESTROY_LOCK, .lock = lock};
    return sync_call(s, &req, NULL, held);
}
