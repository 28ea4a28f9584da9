/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The blocking client: an asynchronous client on a private loop, shared by
 * any number of calling threads. Whoever runs the loop does the I/O, and
 * the loop has one runner at a time (s->loop_state, under s->mu):
 *
 *   IO --nothing in flight or queued, no timer armed--> PARKED (clean)
 *   PARKED --a call comes in--> LEADER
 *   LEADER --its call done, nothing outstanding--> PARKED (clean)
 *   LEADER --its call done, the library's own replies or timers
 *            outstanding--> PARKED (dirty)
 *   LEADER --another call queued, an auto-extended lock, a line logged,
 *            the free--> IO
 *   PARKED (dirty) --left so for RL_SYNC_WATCH_US--> IO
 *   PARKED --the free--> IO
 *
 * IO: the I/O thread runs the loop. A calling thread queues its request
 * (under a mutex held only to link it), wakes the loop with ev_async, and
 * sleeps on the request's own semaphore until the I/O thread completes it;
 * many threads so have operations in flight at once.
 *
 * LEADER: a calling thread that found the loop PARKED runs it itself, on
 * its own thread, for its own request alone: no thread hand-off, no
 * wake-up. A request of another thread makes it hand the loop to the I/O
 * thread at once and wait like the others. What must run on the I/O thread
 * stays there: a client with an auto-extended lock is never left to a
 * leader (its on_lost runs on the I/O thread), and lines logged while a
 * leader runs the loop are passed to the I/O thread, which calls the log
 * callback with them. A leader blocks SIGPIPE while it writes to masters.
 *
 * PARKED: nobody runs the loop; the I/O thread sleeps. Clean: nothing is
 * outstanding, and only a call or the free wakes it. Dirty: a leader left
 * replies (those after the quorum) or timers of the library's own
 * outstanding; the next call, coming at once in a busy program, takes them
 * in; else the I/O thread, looking again every RL_SYNC_WATCH_US, takes the
 * loop over. Nothing polls.
 *
 * A request lives on its caller's stack:
 *
 *   QUEUED --the I/O thread takes it--> STARTED --it completes--> DONE
 *   (a leader's request is STARTED at once, by the leader)
 *   QUEUED --the caller is canceled--> DONE (never started)
 *   STARTED --the caller is canceled waiting--> WITHDRAWN
 *   WITHDRAWN --the I/O thread cancels its operation--> DONE
 *   STARTED --the leader is canceled in the loop--> DONE (it cancels its
 *                                                    operation itself)
 *
 * The runner of the loop posts a request it started once, on DONE, and
 * never touches it again. A caller canceled in its wait (pthread_cancel:
 * sem_wait is a cancellation point) withdraws its request in a cleanup
 * handler and waits for DONE before its stack goes. A leader can be
 * canceled only where the loop sleeps for events (epoll_wait, between two
 * iterations, through libev's release/acquire hooks); its cleanup handler
 * cancels its operation and hands the loop on. Nowhere else is the call a
 * cancellation point. Callers count themselves in the client, which is not
 * freed before the last one has left.
 */
#include "client/sync.h"
#include "context/context.h"
#include "config/config_internal.h"
#include "lock/lock.h"
#include "master/master.h"
#include "redlock/redlock.h"
#include "util/list.h"
#include "util/log.h"
#include "util/util.h"
#include "wire/resources.h"

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum rl_sync_kind {
    RL_SYNC_ACQUIRE,
    RL_SYNC_EXTEND,
    RL_SYNC_RELEASE,
    RL_SYNC_AUTO_EXTEND,
    RL_SYNC_INSPECT,
    RL_SYNC_PING,
    RL_SYNC_FENCING_INIT,
    RL_SYNC_DESTROY_LOCK
} rl_sync_kind;

typedef enum rl_sync_state {
    RL_SYNC_QUEUED,    /* in sync->queue */
    RL_SYNC_STARTED,   /* its operation is in flight */
    RL_SYNC_WITHDRAWN, /* in flight, its caller canceled: in sync->withdrawn */
    RL_SYNC_DONE       /* outcome written: the caller's alone */
} rl_sync_state;

/* Who runs the loop; see the diagram above. */
typedef enum rl_sync_loop_state {
    RL_LOOP_IO,     /* the I/O thread */
    RL_LOOP_LEADER, /* a calling thread, for its own request */
    RL_LOOP_PARKED  /* nobody: the I/O thread sleeps */
} rl_sync_loop_state;

/*
 * One blocking call, living on the caller's stack. Its state changes under
 * sync->mu, but for the runner's STARTED -> DONE, under req->mu alone
 * (WITHDRAWN -> DONE takes both, to leave the list); the caller changes and
 * reads it only when canceled, with both held, or as the leader.
 */
typedef struct rl_sync_request {
    rl_link link;          /* in sync->queue or sync->withdrawn, per state */
    redlock_sync *sync;
    rl_sync_state state;
    struct rl_sync_request *next; /* the I/O thread's: requests taken in at once */
    rl_op *op;             /* STARTED, WITHDRAWN: the operation, if asynchronous */
    rl_sync_kind kind;
    const void *const *resources; /* acquire, inspect: the caller's arrays */
    const size_t *resource_lens;
    size_t count;
    const redlock_acquire_options *opts;
    redlock_lock *lock;    /* extend, release, auto-extend, destroy */
    int64_t ttl_ms;        /* extend */
    uint64_t floor;        /* fencing init */
    redlock_lost_cb on_lost; /* auto-extend */
    void *lost_arg;
    bool want_result;
    pthread_mutex_t mu;    /* see above */
    sem_t done;            /* posted once if the runner took it, on DONE */
    int status;
    redlock_lock *lock_out;
    redlock_result *result;
} rl_sync_request;

/* A line logged by a leader, for the I/O thread to pass on. */
typedef struct rl_sync_log_line {
    rl_link link;
    int level;
    char text[];
} rl_sync_log_line;

/* How long a dirty PARKED loop waits for a call before the I/O thread takes
 * it over: the delay, when the program makes no call, before late replies
 * are read and the library's timers fire. The I/O thread wakes this often
 * while callers run the loop (each wake costs a few microseconds of CPU). */
#define RL_SYNC_WATCH_US 5000

struct redlock_sync {
    struct ev_loop *loop;
    ev_prepare watch;       /* the I/O thread's: parks the loop once quiet */
    redlock_client *client; /* touched only by the loop's runner */
    rl_logger user_log;     /* the config's log callback */
    pthread_t thread;
    ev_async wakeup;
    pthread_mutex_t mu;     /* guards all below but the runner's fields */
    pthread_cond_t idle;    /* signaled when callers drops to 0 */
    pthread_cond_t io_wake; /* the I/O thread sleeps on it when not running the loop */
    rl_sync_loop_state loop_state;
    bool dirty;             /* PARKED: replies or timers outstanding */
    int64_t parked_at_us;   /* PARKED: since when */
    bool io_sleeps_long;    /* the I/O thread sleeps without a timeout */
    rl_link queue;          /* QUEUED requests, oldest first */
    rl_link withdrawn;      /* WITHDRAWN requests */
    rl_link logs;           /* rl_sync_log_line to pass on, oldest first */
    unsigned callers;       /* threads inside a call */
    bool stopping;
    /* The runner's, while a leader runs the loop: */
    bool yield;             /* hand the loop to the I/O thread */
    bool logged;            /* lines were logged */
    int leader_cancel_state; /* the leader's own, restored while it sleeps in the loop */
    sigset_t leader_sigmask; /* the leader's own, SIGPIPE blocked meanwhile */
};

/* The client a thread leads, if any. */
static _Thread_local redlock_sync *leading;

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

/* Every change of the loop's runner, with s->mu held. dirty: PARKED with
 * replies or timers outstanding. The I/O thread is woken for IO, and for
 * a dirty PARKED when it sleeps without a timeout. */
static void loop_set_state(redlock_sync *s, rl_sync_loop_state to, bool dirty)
{
    s->loop_state = to;
    s->dirty = to == RL_LOOP_PARKED && dirty;
    if (to == RL_LOOP_PARKED)
        s->parked_at_us = rl_now_us();
    if (to == RL_LOOP_IO || (s->dirty && s->io_sleeps_long))
        pthread_cond_signal(&s->io_wake);
}

/* With s->mu held: take the first request off list, or NULL. */
static rl_sync_request *request_pop(rl_link *list)
{
    rl_link *link = rl_list_pop_front(list);
    return link != NULL ? rl_container_of(link, rl_sync_request, link) : NULL;
}

/* The runner: nothing in flight, nothing due, no auto-extension; a
 * connection closed meanwhile is noticed by the next runner. */
static bool loop_quiet(const redlock_sync *s)
{
    const redlock_client *c = s->client;
    /* Watches: waiters' subscriptions linger, and their connections close
     * with the last of them (subscriber.h). */
    if (c == NULL || !rl_list_empty(&c->ops) || !rl_list_empty(&c->owed) || c->watchdogs > 0 ||
        !rl_list_empty(&c->watches))
        return false;
    for (size_t i = 0; i < c->n; i++)
        if (c->masters[i].state != RL_MASTER_READY || c->masters[i].in_flight > 0)
            return false;
    return true;
}

/* The runner: hand the outcome back and wake the caller. The request may
 * be gone as soon as it is posted. */
static void sync_finish(rl_sync_request *req, int status, redlock_lock *lock,
                        const redlock_result *result)
{
    redlock_sync *s = req->sync;
    req->status = status;
    req->lock_out = lock;
    if (req->want_result && result != NULL)
        redlock_result_copy(result, &req->result); /* NULL if out of memory */
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
        rc = redlock_acquire_many_async(s->client, req->resources, req->resource_lens,
                                        req->count, req->opts, sync_acquire_done, req);
        break;
    case RL_SYNC_EXTEND:
        rc = redlock_extend_async(s->client, req->lock, req->ttl_ms, sync_done, req);
        break;
    case RL_SYNC_RELEASE:
        rc = redlock_release_async(s->client, req->lock, sync_done, req);
        break;
    case RL_SYNC_INSPECT:
        rc = redlock_inspect_many_async(s->client, req->resources, req->resource_lens,
                                        req->count, sync_done, req);
        break;
    case RL_SYNC_PING:
        rc = redlock_ping_async(s->client, sync_done, req);
        break;
    case RL_SYNC_FENCING_INIT:
        rc = redlock_fencing_init_async(s->client, req->floor, sync_done, req);
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

/* The runner: take in the queued requests and the withdrawn ones, or begin
 * the free. A leader serves other threads' requests too, but leaves the
 * free, and a client with an auto-extended lock, to the I/O thread. */
static void sync_on_wakeup(struct ev_loop *loop, ev_async *w, int revents)
{
    redlock_sync *s = w->data;
    bool leader = leading == s;
    bool stopping;
    for (;;) {
        /* Every queued request at once (callers enqueue meanwhile), and one
         * withdrawn: its operation started in an earlier pass. */
        pthread_mutex_lock(&s->mu);
        stopping = s->stopping;
        if (leader && (stopping || s->client->watchdogs > 0)) {
            pthread_mutex_unlock(&s->mu);
            s->yield = true; /* once out of the loop */
            ev_break(loop, EVBREAK_ONE);
            return;
        }
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
    if (stopping && s->client != NULL) {
        /* Releases held locks and cancels anything still in flight; the loop
         * then runs until the releases are out and the connections closed
         * (at most a command timeout), and ev_run() returns by itself. */
        redlock_client_free(s->client);
        s->client = NULL;
        ev_async_stop(loop, &s->wakeup);
        ev_prepare_stop(loop, &s->watch);
    }
}

/* Before the I/O thread's loop sleeps: once quiet, it leaves the loop to
 * park it. */
static void sync_on_watch(struct ev_loop *loop, ev_prepare *w, int revents)
{
    redlock_sync *s = w->data;
    if (leading != s && loop_quiet(s))
        ev_break(loop, EVBREAK_ONE);
}

/* libev's hooks around its sleep for events: a leader may be canceled
 * there, and only there. */
static void sync_loop_release(struct ev_loop *loop)
{
    redlock_sync *s = ev_userdata(loop);
    if (leading == s && s->leader_cancel_state == PTHREAD_CANCEL_ENABLE)
        pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
}

static void sync_loop_acquire(struct ev_loop *loop)
{
    if (leading == ev_userdata(loop))
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
}

/* The log callback of the client: a leader's lines go to the I/O thread. */
static void sync_log(int level, const char *message, void *arg)
{
    redlock_sync *s = arg;
    if (leading != s) {
        s->user_log.fn(level, message, s->user_log.arg);
        return;
    }
    size_t len = strlen(message);
    rl_sync_log_line *line = malloc(sizeof(*line) + len + 1);
    if (line == NULL)
        return; /* out of memory: the line is lost */
    line->level = level;
    memcpy(line->text, message, len + 1);
    s->logged = true;
    pthread_mutex_lock(&s->mu);
    rl_list_push_back(&s->logs, &line->link);
    pthread_cond_signal(&s->io_wake);
    pthread_mutex_unlock(&s->mu);
}

/* I/O thread, s->mu held: pass the leaders' lines on, in order. */
static void sync_pass_logs(redlock_sync *s)
{
    rl_link *link;
    while ((link = rl_list_pop_front(&s->logs)) != NULL) {
        rl_sync_log_line *line = rl_container_of(link, rl_sync_log_line, link);
        pthread_mutex_unlock(&s->mu);
        s->user_log.fn(line->level, line->text, s->user_log.arg);
        free(line);
        pthread_mutex_lock(&s->mu);
    }
}

/* I/O thread, s->mu held, the loop IO: run it until it can be parked (then
 * park it) or, after the free, until it ends (then false). */
static bool sync_run_loop(redlock_sync *s)
{
    pthread_mutex_unlock(&s->mu);
    sync_on_wakeup(s->loop, &s->wakeup, 0); /* what came meanwhile */
    ev_run(s->loop, 0); /* until sync_on_watch finds it quiet, or it ends */
    bool quiet = loop_quiet(s);
    pthread_mutex_lock(&s->mu);
    if (s->client == NULL)
        return false;
    if (quiet && !s->stopping && rl_list_empty(&s->queue) && rl_list_empty(&s->withdrawn))
        loop_set_state(s, RL_LOOP_PARKED, false);
    return true;
}

/* I/O thread, s->mu held: sleep until there is something to do; with a
 * timeout while a leader may leave the loop dirty. */
static void sync_io_sleep(redlock_sync *s)
{
    if (s->loop_state == RL_LOOP_PARKED && !s->dirty) {
        s->io_sleeps_long = true;
        pthread_cond_wait(&s->io_wake, &s->mu);
        s->io_sleeps_long = false;
        return;
    }
    int64_t from = s->loop_state == RL_LOOP_PARKED ? s->parked_at_us : rl_now_us();
    int64_t until = from + RL_SYNC_WATCH_US;
    struct timespec ts = {.tv_sec = (time_t)(until / 1000000),
                          .tv_nsec = (long)(until % 1000000) * 1000};
    pthread_cond_timedwait(&s->io_wake, &s->mu, &ts);
}

static void *sync_thread_main(void *arg)
{
    redlock_sync *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        sync_pass_logs(s);
        if (s->loop_state == RL_LOOP_PARKED && s->dirty &&
            rl_now_us() - s->parked_at_us >= RL_SYNC_WATCH_US)
            loop_set_state(s, RL_LOOP_IO, false);
        if (s->loop_state == RL_LOOP_IO) {
            if (!sync_run_loop(s))
                break;
        } else if (rl_list_empty(&s->logs)) {
            sync_io_sleep(s);
        }
    }
    sync_pass_logs(s);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void sync_destroy(redlock_sync *s)
{
    ev_loop_destroy(s->loop);
    pthread_cond_destroy(&s->io_wake);
    pthread_cond_destroy(&s->idle);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* The I/O thread's condition variable sleeps on CLOCK_MONOTONIC. */
static void sync_init_io_wake(redlock_sync *s)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&s->io_wake, &attr);
    pthread_condattr_destroy(&attr);
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
    s->user_log = s->client->log;
    if (s->user_log.fn != NULL) {
        s->client->log.fn = sync_log;
        s->client->log.arg = s;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->idle, NULL);
    sync_init_io_wake(s);
    s->loop_state = RL_LOOP_IO; /* connecting */
    rl_list_init(&s->queue);
    rl_list_init(&s->withdrawn);
    rl_list_init(&s->logs);
    ev_set_userdata(s->loop, s);
    ev_set_loop_release_cb(s->loop, sync_loop_release, sync_loop_acquire);
    ev_async_init(&s->wakeup, sync_on_wakeup);
    s->wakeup.data = s;
    ev_async_start(s->loop, &s->wakeup);
    ev_prepare_init(&s->watch, sync_on_watch);
    s->watch.data = s;
    ev_prepare_start(s->loop, &s->watch);

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
        ev_prepare_stop(s->loop, &s->watch);
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
    if (s->loop_state == RL_LOOP_PARKED)
        loop_set_state(s, RL_LOOP_IO, false);
    pthread_mutex_unlock(&s->mu);
    ev_async_send(s->loop, &s->wakeup); /* the runner, I/O thread or leader */
    pthread_join(s->thread, NULL);
    /* Every request is DONE; their callers still leave through s->mu. */
    pthread_mutex_lock(&s->mu);
    while (s->callers > 0)
        pthread_cond_wait(&s->idle, &s->mu);
    pthread_mutex_unlock(&s->mu);
    sync_destroy(s);
    pthread_setcancelstate(cancel_state, NULL);
}

/* How a call got in. */
typedef enum rl_sync_entry {
    RL_ENTRY_CLOSED, /* the free has begun: nothing queued */
    RL_ENTRY_QUEUED, /* for the runner of the loop */
    RL_ENTRY_LEADER  /* the loop was PARKED: the caller runs it */
} rl_sync_entry;

/* Caller thread: count in, then lead or queue req (waking the runner). */
static rl_sync_entry sync_enter(redlock_sync *s, rl_sync_request *req)
{
    rl_sync_entry entry = RL_ENTRY_CLOSED;
    pthread_mutex_lock(&s->mu);
    if (!s->stopping) {
        s->callers++;
        if (s->loop_state == RL_LOOP_PARKED) {
            loop_set_state(s, RL_LOOP_LEADER, false);
            request_set_state(s, req, RL_SYNC_STARTED);
            entry = RL_ENTRY_LEADER;
        } else {
            request_set_state(s, req, RL_SYNC_QUEUED);
            ev_async_send(s->loop, &s->wakeup);
            entry = RL_ENTRY_QUEUED;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return entry;
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
    bool taken = req->state != RL_SYNC_QUEUED; /* then the runner posts it */
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
 * state allows it) but for a leader's sleep in the loop. */
static void sync_wait(rl_sync_request *req, int cancel_state)
{
    pthread_cleanup_push(sync_withdraw, req);
    pthread_setcancelstate(cancel_state, NULL);
    sync_await(req);
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    pthread_cleanup_pop(0);
}

/* The leader leaves the loop (its request done or not): to the I/O thread
 * if anything needs it, else parked, dirty if anything is outstanding. */
static void sync_unlead(redlock_sync *s)
{
    bool quiet = loop_quiet(s);
    /* Other threads' operations in flight, or anything only the I/O thread
     * may run, go to the I/O thread; the library's own replies and timers
     * may wait a little for the next call. */
    bool for_io = s->yield || s->logged || s->client->watchdogs > 0 ||
                  !rl_list_empty(&s->client->ops);
    leading = NULL;
    pthread_mutex_lock(&s->mu);
    if (for_io || s->stopping || !rl_list_empty(&s->queue) || !rl_list_empty(&s->withdrawn))
        loop_set_state(s, RL_LOOP_IO, false);
    else
        loop_set_state(s, RL_LOOP_PARKED, !quiet);
    pthread_mutex_unlock(&s->mu);
    /* A SIGPIPE our writes raised is ours to take; the mask is restored. */
    if (!sigismember(&s->leader_sigmask, SIGPIPE)) {
        sigset_t pending;
        sigpending(&pending);
        if (sigismember(&pending, SIGPIPE)) {
            sigset_t pipe;
            sigemptyset(&pipe);
            sigaddset(&pipe, SIGPIPE);
            struct timespec now = {0, 0};
            sigtimedwait(&pipe, NULL, &now);
        }
    }
    pthread_sigmask(SIG_SETMASK, &s->leader_sigmask, NULL);
}

/* Cleanup handler: the leader is canceled where the loop sleeps, between
 * two of its iterations. It still runs the loop: it cancels its operation
 * itself, hands the loop on, and leaves. */
static void sync_leader_canceled(void *arg)
{
    rl_sync_request *req = arg;
    redlock_sync *s = req->sync;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    ev_break(s->loop, EVBREAK_CANCEL); /* ev_run() was left, not returned from */
    if (req->state == RL_SYNC_STARTED && req->op != NULL)
        req->op->cancel(req->op); /* completes it: DONE */
    sync_unlead(s);
    request_destroy_sync(req);
    sync_discard(s, req); /* still counted in: s stays */
    sync_leave(s);
}

/* Caller thread, the loop LEADER: start req and run the loop until it is
 * done, or another thread's request makes it hand the loop over. True
 * when req is DONE. */
static bool sync_lead(redlock_sync *s, rl_sync_request *req, int cancel_state)
{
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &s->leader_sigmask);
    leading = s;
    s->yield = false;
    s->logged = false;
    s->leader_cancel_state = cancel_state;
    bool done;
    pthread_cleanup_push(sync_leader_canceled, req);
    sync_start(s, req);
    while (req->state != RL_SYNC_DONE && !s->yield)
        ev_run(s->loop, EVRUN_ONCE);
    done = req->state == RL_SYNC_DONE; /* read before the I/O thread may run */
    pthread_cleanup_pop(0);
    sync_unlead(s);
    return done;
}

/* Caller thread: lead or queue req, unlock held (if not NULL), wait for
 * completion. */
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
    rl_sync_entry entry = sync_enter(s, req);
    if (held != NULL)
        pthread_mutex_unlock(held);
    if (entry == RL_ENTRY_CLOSED) {
        req->status = REDLOCK_ECANCELED;
    } else {
        if (entry == RL_ENTRY_QUEUED || !sync_lead(s, req, cancel_state))
            sync_wait(req, cancel_state);
        sync_leave(s);
    }
    request_destroy_sync(req);
    if (result_out != NULL)
        *result_out = req->result;
    pthread_setcancelstate(cancel_state, NULL);
    return req->status;
}

int redlock_sync_acquire_many(redlock_sync *s, const void *const *resources,
                              const size_t *resource_lens, size_t count,
                              const redlock_acquire_options *opts, redlock_lock **lock_out,
                              redlock_result **result_out)
{
    if (result_out != NULL)
        *result_out = NULL;
    if (lock_out != NULL)
        *lock_out = NULL;
    size_t block_len;
    if (s == NULL || lock_out == NULL ||
        rl_keys_check(resources, resource_lens, count, &block_len) != REDLOCK_OK)
        return REDLOCK_EINVAL;
    rl_sync_request req = {
        .kind = RL_SYNC_ACQUIRE,
        .resources = resources,
        .resource_lens = resource_lens,
        .count = count,
        .opts = opts,
    };
    int status = sync_call(s, &req, result_out, NULL);
    *lock_out = req.lock_out;
    return status;
}

int redlock_sync_acquire(redlock_sync *s, const void *resource, size_t resource_len,
                         const redlock_acquire_options *opts, redlock_lock **lock_out,
                         redlock_result **result_out)
{
    return redlock_sync_acquire_many(s, &resource, &resource_len, 1, opts, lock_out, result_out);
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

int redlock_sync_inspect_many(redlock_sync *s, const void *const *resources,
                              const size_t *resource_lens, size_t count,
                              redlock_result **result_out)
{
    if (result_out != NULL)
        *result_out = NULL;
    size_t block_len;
    if (s == NULL || rl_keys_check(resources, resource_lens, count, &block_len) != REDLOCK_OK)
        return REDLOCK_EINVAL;
    rl_sync_request req = {.kind = RL_SYNC_INSPECT,
                           .resources = resources,
                           .resource_lens = resource_lens,
                           .count = count};
    return sync_call(s, &req, result_out, NULL);
}

int redlock_sync_inspect(redlock_sync *s, const void *resource, size_t resource_len,
                         redlock_result **result_out)
{
    return redlock_sync_inspect_many(s, &resource, &resource_len, 1, result_out);
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

int redlock_sync_fencing_init(redlock_sync *s, uint64_t floor, redlock_result **result_out)
{
    if (result_out != NULL)
        *result_out = NULL;
    if (s == NULL)
        return REDLOCK_EINVAL;
    rl_sync_request req = {.kind = RL_SYNC_FENCING_INIT, .floor = floor};
    return sync_call(s, &req, result_out, NULL);
}

bool rl_sync_on_io_thread(const redlock_sync *s)
{
    return pthread_equal(pthread_self(), s->thread);
}

rl_sync_runner rl_sync_loop_runner(redlock_sync *s)
{
    pthread_mutex_lock(&s->mu);
    rl_sync_runner runner = s->loop_state == RL_LOOP_IO       ? RL_SYNC_RUNNER_IO_THREAD
                            : s->loop_state == RL_LOOP_LEADER ? RL_SYNC_RUNNER_CALLER
                            : s->dirty                        ? RL_SYNC_RUNNER_NOBODY
                                                              : RL_SYNC_RUNNER_IDLE;
    pthread_mutex_unlock(&s->mu);
    return runner;
}

int rl_sync_destroy_lock(redlock_sync *s, redlock_lock *lock, pthread_mutex_t *held)
{
    rl_sync_request req = {.kind = RL_SYNC_DESTROY_LOCK, .lock = lock};
    return sync_call(s, &req, NULL, held);
}

/* Any thread: the counters are atomic, and the client, its masters and
 * their number stay as they are from redlock_sync_new() to
 * redlock_sync_free(). */
int redlock_sync_stats(const redlock_sync *s, redlock_stats *stats)
{
    if (s == NULL)
        return REDLOCK_EINVAL;
    return redlock_client_stats(s->client, stats);
}
