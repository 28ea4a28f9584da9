/*
 * The blocking client: an asynchronous client on a private loop, run by one
 * I/O thread. A calling thread queues its request (under a mutex held only
 * to link it), wakes the loop with ev_async, and sleeps on the request's own
 * condition variable until the I/O thread completes it. Many threads can so
 * have operations in flight at once; nothing is locked across a round trip.
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

/* One blocking call, living on the caller's stack. */
typedef struct rl_sync_request {
    struct rl_sync_request *next;
    redlock_sync *sync;
    rl_sync_kind kind;
    const void *resource;
    size_t resource_len;
    const redlock_acquire_options *opts;
    redlock_lock *lock;    /* extend, release, auto-extend, destroy */
    int64_t ttl_ms;        /* extend */
    redlock_lost_cb on_lost; /* auto-extend */
    void *lost_arg;
    bool want_result;
    sem_t done;            /* posted once, by the I/O thread */
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
    pthread_mutex_t mu;     /* guards the queue and stopping */
    rl_sync_request *head;
    rl_sync_request *tail;
    bool stopping;
};

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
    req->status = status;
    req->lock_out = lock;
    if (req->want_result && result != NULL)
        redlock_result_copy(result, &req->result); /* NULL if out of memory */
    sync_keep_polling(req->sync);
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
    if (rc != REDLOCK_OK)
        sync_finish(req, rc, NULL, NULL);
}

static void sync_on_wakeup(struct ev_loop *loop, ev_async *w, int revents)
{
    redlock_sync *s = w->data;
    pthread_mutex_lock(&s->mu);
    rl_sync_request *req = s->head;
    s->head = s->tail = NULL;
    bool stopping = s->stopping;
    pthread_mutex_unlock(&s->mu);

    while (req != NULL) {
        rl_sync_request *next = req->next; /* req may vanish once finished */
        if (stopping)
            sync_finish(req, REDLOCK_ECANCELED, NULL, NULL);
        else
            sync_start(s, req);
        req = next;
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
        ev_loop_destroy(s->loop);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return REDLOCK_ESYS;
    }
    *out = s;
    return REDLOCK_OK;
}

void redlock_sync_free(redlock_sync *s)
{
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    pthread_mutex_unlock(&s->mu);
    ev_async_send(s->loop, &s->wakeup);
    pthread_join(s->thread, NULL);
    ev_loop_destroy(s->loop);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* Caller thread: queue req, wake the I/O thread, unlock held (if not NULL),
 * wait for completion. */
static int sync_call(redlock_sync *s, rl_sync_request *req, redlock_result **result_out,
                     pthread_mutex_t *held)
{
    req->want_result = result_out != NULL;
    req->sync = s;
    sem_init(&req->done, 0, 0);

    /* The wake-up is sent under the mutex: once it is unlocked, the I/O
     * thread may complete req and, if redlock_sync_free() has begun, free s
     * (the free cancels queued requests). From then on this thread touches
     * only req. */
    pthread_mutex_lock(&s->mu);
    bool stopping = s->stopping;
    if (!stopping) {
        if (s->tail != NULL)
            s->tail->next = req;
        else
            s->head = req;
        s->tail = req;
        ev_async_send(s->loop, &s->wakeup);
    }
    pthread_mutex_unlock(&s->mu);
    if (held != NULL)
        pthread_mutex_unlock(held);

    if (stopping) {
        req->status = REDLOCK_ECANCELED;
    } else {
        while (sem_wait(&req->done) != 0)
            ; /* EINTR: a signal handler ran; keep waiting */
    }
    sem_destroy(&req->done);
    if (result_out != NULL)
        *result_out = req->result;
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
