/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Canceling one acquire by its cancel fd (redlock_acquire_options.cancel_fd):
 * it completes once, from the loop, with REDLOCK_ECANCELED, and leaves no
 * key of ours on any master, whether it was waiting between attempts or
 * had an attempt in flight (stopped masters keep it in flight); another
 * holder's lock is untouched. An fd readable already sends nothing. The
 * blocking client is canceled by an eventfd, a pipe and a signalfd.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#define TTL_MS 30000    /* far longer than any test: a key left is seen */
#define THEIRS "theirs" /* another holder's value */
#define CANCEL_MS 300   /* when the cancel fd becomes readable */

static harness h;

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(cancel, .fini = teardown, .timeout = 120);

/* ---- What the masters hold ---------------------------------------------- */

/* How many running, unpaused masters hold key with a value other than
 * another holder's. */
static size_t ours_left(const fleet *f, const char *key)
{
    size_t n = 0;
    for (size_t i = 0; i < fleet_size(f); i++) {
        char value[64];
        size_t len = 0;
        if (fleet_pid(f, i) == 0 || fleet_is_paused(f, i))
            continue;
        int found = fleet_get(f, i, key, strlen(key), value, sizeof(value) - 1, &len);
        cr_assert_geq(found, 0, "master %zu cannot tell", i);
        n += found == 1 && !(len == strlen(THEIRS) && memcmp(value, THEIRS, len) == 0);
    }
    return n;
}

static bool nothing_of_ours(harness *hh, void *arg)
{
    return ours_left(hh->fleet, arg) == 0;
}

static void give_to_another(const char *key)
{
    for (size_t i = 0; i < fleet_size(h.fleet); i++)
        cr_assert_eq(fleet_set(h.fleet, i, key, strlen(key), THEIRS, strlen(THEIRS), 60000), 0);
}

/* ---- The asynchronous client -------------------------------------------- */

typedef struct outcome {
    int calls;
    int status;
    unsigned attempts;
    double at_ms;
} outcome;

static void record(int status, redlock_lock *lock, const redlock_result *r, void *arg)
{
    outcome *o = arg;
    o->calls++;
    o->status = status;
    o->attempts = r->attempts;
    o->at_ms = tc_now_ms();
    redlock_lock_free(lock);
}

static bool called(harness *hh, void *arg)
{
    return ((const outcome *)arg)->calls > 0;
}

typedef struct fd_timer {
    ev_timer timer;
    int fd;
} fd_timer;

static void on_fd_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    const fd_timer *t = w->data;
    cr_assert_eq(eventfd_write(t->fd, 1), 0);
}

/* Make the eventfd readable ms (scaled) from now, while the loop runs. */
static void signal_in(fd_timer *t, int fd, int64_t ms)
{
    t->fd = fd;
    ev_timer_init(&t->timer, on_fd_timer, (double)fleet_scaled_ms(ms) / 1000.0, 0.);
    t->timer.data = t;
    ev_timer_start(h.loop, &t->timer);
}

/*
 * Another holder has the resource: the acquire waits between retries (and
 * for release announcements) until the fd cancels it, long before its
 * retries would run out. The holder's keys stay as they were.
 */
Test(cancel, waiting_between_attempts)
{
    harness_start(&h, 3, NULL);
    harness_connect(&h);
    give_to_another("waiting");
    int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    cr_assert_geq(efd, 0);
    redlock_acquire_options o = fleet_acquire_options(fleet_scaled_ms(TTL_MS), 1000);
    o.retry_delay_ms = fleet_scaled_ms(50);
    o.cancel_fd = efd;
    outcome out = {0};
    fd_timer t;
    double t0 = tc_now_ms();
    cr_assert_eq(redlock_acquire_async(h.client, "waiting", 7, &o, record, &out), REDLOCK_OK);
    signal_in(&t, efd, CANCEL_MS);
    cr_assert(harness_wait_until(&h, called, &out, 10000));
    cr_assert_eq(out.status, REDLOCK_ECANCELED, "%s", redlock_status_name(out.status));
    cr_assert_geq(out.at_ms - t0, (double)fleet_scaled_ms(CANCEL_MS) - 5);
    cr_assert_lt(out.at_ms - t0, (double)fleet_scaled_ms(CANCEL_MS) + fleet_scaled_ms(3000));
    harness_run_for(&h, (int)fleet_scaled_ms(200));
    cr_assert_eq(out.calls, 1);
    cr_assert(harness_wait_until(&h, nothing_of_ours, "waiting", 3000));
    cr_assert_eq(fleet_count_value(h.fleet, "waiting", 7, THEIRS, strlen(THEIRS)), 3);
    /* Polled, never read: the caller's count is still there. */
    eventfd_t v = 0;
    cr_assert_eq(eventfd_read(efd, &v), 0);
    cr_assert_eq(v, 1);
    close(efd);
}

/*
 * Two of three masters are stopped: the attempt stays in flight (master 0
 * set our value, the others have the SET unread) until the fd cancels it,
 * well before the command timeout. Once they resume, every master that
 * applied the SET has it released: no key of ours is left anywhere.
 */
Test(cancel, attempt_in_flight)
{
    harness_start(&h, 3, NULL);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, fleet_scaled_ms(3000)),
                 REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_TTL_MS, fleet_scaled_ms(TTL_MS)), REDLOCK_OK);
    harness_connect(&h);
    cr_assert_eq(harness_ping(&h, NULL), REDLOCK_OK); /* every master connected */
    cr_assert(harness_wait_clocks_checked(&h));
    cr_assert_eq(fleet_pause(h.fleet, 1), 0);
    cr_assert_eq(fleet_pause(h.fleet, 2), 0);
    int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    cr_assert_geq(efd, 0);
    redlock_acquire_options o = fleet_acquire_options(fleet_scaled_ms(TTL_MS), 0);
    o.cancel_fd = efd;
    outcome out = {0};
    fd_timer t;
    double t0 = tc_now_ms();
    cr_assert_eq(redlock_acquire_async(h.client, "inflight", 8, &o, record, &out), REDLOCK_OK);
    cr_assert_eq(out.calls, 0);
    signal_in(&t, efd, CANCEL_MS);
    cr_assert(harness_wait_until(&h, called, &out, 10000));
    cr_assert_eq(out.status, REDLOCK_ECANCELED, "%s", redlock_status_name(out.status));
    cr_assert_lt(out.at_ms - t0, (double)fleet_scaled_ms(2000), "not canceled in flight");
    cr_assert_eq(out.attempts, 1);
    cr_assert_eq(fleet_resume(h.fleet, 1), 0);
    cr_assert_eq(fleet_resume(h.fleet, 2), 0);
    bool clean = harness_wait_until(&h, nothing_of_ours, "inflight", 3000);
    cr_assert(clean, "%zu masters kept a key of ours", ours_left(h.fleet, "inflight"));
    cr_assert_eq(out.calls, 1);
    close(efd);
}

/* One eventfd given to two acquires (of different resources) cancels
 * both; a third acquire without it goes on and gets its lock. */
Test(cancel, one_fd_cancels_several)
{
    harness_start(&h, 3, NULL);
    harness_connect(&h);
    give_to_another("first");
    give_to_another("second");
    give_to_another("third");
    int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    cr_assert_geq(efd, 0);
    redlock_acquire_options o = fleet_acquire_options(fleet_scaled_ms(TTL_MS), 1000);
    o.retry_delay_ms = fleet_scaled_ms(50);
    redlock_acquire_options plain = o;
    o.cancel_fd = efd;
    outcome first = {0};
    outcome second = {0};
    outcome third = {0};
    cr_assert_eq(redlock_acquire_async(h.client, "first", 5, &o, record, &first), REDLOCK_OK);
    cr_assert_eq(redlock_acquire_async(h.client, "second", 6, &o, record, &second), REDLOCK_OK);
    cr_assert_eq(redlock_acquire_async(h.client, "third", 5, &plain, record, &third), REDLOCK_OK);
    fd_timer t;
    signal_in(&t, efd, CANCEL_MS);
    cr_assert(harness_wait_until(&h, called, &first, 10000));
    cr_assert(harness_wait_until(&h, called, &second, 1000));
    cr_assert_eq(first.status, REDLOCK_ECANCELED);
    cr_assert_eq(second.status, REDLOCK_ECANCELED);
    cr_assert_eq(third.calls, 0, "the acquire without the fd ended: %s",
                 redlock_status_name(third.status));
    for (size_t i = 0; i < fleet_size(h.fleet); i++)
        cr_assert_eq(fleet_del(h.fleet, i, "third", 5), 1);
    cr_assert(harness_wait_until(&h, called, &third, 5000));
    cr_assert_eq(third.status, REDLOCK_OK, "%s", redlock_status_name(third.status));
    cr_assert_eq(first.calls + second.calls, 2);
    cr_assert_eq(ours_left(h.fleet, "first") + ours_left(h.fleet, "second"), 0);
    close(efd);
}

/* Readable before the call: REDLOCK_ECANCELED at once, no callback,
 * nothing sent (no attempt counted, no key). A closed fd is EINVAL. */
Test(cancel, readable_already)
{
    harness_start(&h, 3, NULL);
    harness_connect(&h);
    cr_assert_eq(harness_ping(&h, NULL), REDLOCK_OK);
    int efd = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
    cr_assert_geq(efd, 0);
    redlock_acquire_options o = fleet_acquire_options(fleet_scaled_ms(TTL_MS), 0);
    o.cancel_fd = efd;
    outcome out = {0};
    cr_assert_eq(redlock_acquire_async(h.client, "early", 5, &o, record, &out), REDLOCK_ECANCELED);
    harness_run_for(&h, (int)fleet_scaled_ms(200));
    cr_assert_eq(out.calls, 0);
    cr_assert_eq(ours_left(h.fleet, "early"), 0);
    redlock_stats st;
    st.size = sizeof(st);
    cr_assert_eq(redlock_client_stats(h.client, &st), REDLOCK_OK);
    for (size_t i = 0; i < REDLOCK_STATS_STATUSES; i++)
        cr_assert_eq(st.acquires[i], 0);
    close(efd);
    cr_assert_eq(redlock_acquire_async(h.client, "early", 5, &o, record, &out), REDLOCK_EINVAL);
    o.cancel_fd = -2;
    cr_assert_eq(redlock_acquire_async(h.client, "early", 5, &o, record, &out), REDLOCK_EINVAL);
    /* The default is no cancel fd. */
    redlock_acquire_options_init(&o);
    cr_assert_eq(o.cancel_fd, -1);
}

/* ---- redlock_acquire_cancel() -------------------------------------------- */

/*
 * Canceled by the call while it waits between attempts: the callback runs
 * once, from the loop after the call returned, never inside it; a second
 * cancel finds nothing; the holder's keys are untouched.
 */
Test(cancel, call_while_waiting)
{
    harness_start(&h, 3, NULL);
    harness_connect(&h);
    give_to_another("called");
    redlock_acquire_options o = fleet_acquire_options(fleet_scaled_ms(TTL_MS), 1000);
    o.retry_delay_ms = fleet_scaled_ms(50);
    outcome out = {0};
    outcome other = {0};
    cr_assert_eq(redlock_acquire_async(h.client, "called", 6, &o, record, &out), REDLOCK_OK);
    cr_assert_eq(redlock_acquire_async(h.client, "called", 6, &o, record, &other), REDLOCK_OK);
    harness_run_for(&h, (int)fleet_scaled_ms(CANCEL_MS));
    cr_assert_eq(out.calls, 0);
    cr_assert_eq(redlock_acquire_cancel(h.client, record, &out), REDLOCK_OK);
    cr_assert_eq(out.calls, 0, "called back inside the cancel call");
    cr_assert_eq(redlock_acquire_cancel(h.client, record, &out), REDLOCK_ENOENT);
    cr_assert(harness_wait_until(&h, called, &out, 1000));
    cr_assert_eq(out.status, REDLOCK_ECANCELED, "%s", redlock_status_name(out.status));
    cr_assert_geq(out.attempts, 1);
    cr_assert_eq(redlock_acquire_cancel(h.client, record, &out), REDLOCK_ENOENT);
    harness_run_for(&h, (int)fleet_scaled_ms(200));
    cr_assert_eq(out.calls, 1);
    cr_assert_eq(other.calls, 0, "the other acquire ended too");
    cr_assert_eq(redlock_acquire_cancel(h.client, record, &other), REDLOCK_OK);
    cr_assert(harness_wait_until(&h, called, &other, 1000));
    cr_assert_eq(other.status, REDLOCK_ECANCELED);
    cr_assert(harness_wait_until(&h, nothing_of_ours, "called", 3000));
    cr_assert_eq(fleet_count_value(h.fleet, "called", 6, THEIRS, strlen(THEIRS)), 3);
    cr_assert_eq(redlock_acquire_cancel(NULL, record, &out), REDLOCK_EINVAL);
    cr_assert_eq(redlock_acquire_cancel(h.client, NULL, &out), REDLOCK_EINVAL);
}

/* Canceled by the call with its attempt in flight (two masters stopped):
 * once they resume, no key of ours is left anywhere. */
Test(cancel, call_with_attempt_in_flight)
{
    harness_start(&h, 3, NULL);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_COMMAND_TIMEOUT_MS, fleet_scaled_ms(3000)),
                 REDLOCK_OK);
    cr_assert_eq(redlock_config_set(h.cfg, REDLOCK_TTL_MS, fleet_scaled_ms(TTL_MS)), REDLOCK_OK);
    harness_connect(&h);
    cr_assert_eq(harness_ping(&h, NULL), REDLOCK_OK);
    cr_assert(harness_wait_clocks_checked(&h));
    cr_assert_eq(fleet_pause(h.fleet, 1), 0);
    cr_assert_eq(fleet_pause(h.fleet, 2), 0);
    redlock_acquire_options o = fleet_acquire_options(fleet_scaled_ms(TTL_MS), 0);
    outcome out = {0};
    double t0 = tc_now_ms();
    cr_assert_eq(redlock_acquire_async(h.client, "flying", 6, &o, record, &out), REDLOCK_OK);
    harness_run_for(&h, (int)fleet_scaled_ms(100)); /* master 0 answers */
    cr_assert_eq(out.calls, 0);
    cr_assert_eq(redlock_acquire_cancel(h.client, record, &out), REDLOCK_OK);
    cr_assert_eq(out.calls, 0, "called back inside the cancel call");
    cr_assert(harness_wait_until(&h, called, &out, 1000));
    cr_assert_eq(out.status, REDLOCK_ECANCELED);
    cr_assert_eq(out.attempts, 1);
    cr_assert_lt(out.at_ms - t0, (double)fleet_scaled_ms(2000), "not canceled in flight");
    cr_assert_eq(fleet_resume(h.fleet, 1), 0);
    cr_assert_eq(fleet_resume(h.fleet, 2), 0);
    bool clean = harness_wait_until(&h, nothing_of_ours, "flying", 3000);
    cr_assert(clean, "%zu masters kept a key of ours", ours_left(h.fleet, "flying"));
    cr_assert_eq(out.calls, 1);
}

static void cancel_in_callback(int status, redlock_lock *lock, const redlock_result *r,
                               void *arg)
{
    outcome *o = arg;
    o->calls++;
    o->status = status;
    /* Its own acquire is complete: nothing to cancel. */
    o->attempts = (unsigned)-redlock_acquire_cancel(h.client, cancel_in_callback, arg);
    redlock_lock_free(lock);
}

/* Completed already, or canceling from inside its own callback:
 * REDLOCK_ENOENT, and a lock handed out stays the callback's. A cancel
 * followed by the client's free before the loop ran calls back once. */
Test(cancel, call_after_completion)
{
    harness_start(&h, 3, NULL);
    harness_connect(&h);
    redlock_acquire_options o = fleet_acquire_options(fleet_scaled_ms(TTL_MS), 0);
    outcome out = {0};
    cr_assert_eq(redlock_acquire_async(h.client, "done", 4, &o, cancel_in_callback, &out),
                 REDLOCK_OK);
    cr_assert(harness_wait_until(&h, called, &out, 3000));
    cr_assert_eq(out.status, REDLOCK_OK, "%s", redlock_status_name(out.status));
    cr_assert_eq(out.attempts, (unsigned)-REDLOCK_ENOENT);
    cr_assert_eq(redlock_acquire_cancel(h.client, cancel_in_callback, &out), REDLOCK_ENOENT);

    give_to_another("freed");
    o.retry_count = 1000;
    outcome freed = {0};
    cr_assert_eq(redlock_acquire_async(h.client, "freed", 5, &o, record, &freed), REDLOCK_OK);
    harness_run_for(&h, (int)fleet_scaled_ms(100));
    cr_assert_eq(redlock_acquire_cancel(h.client, record, &freed), REDLOCK_OK);
    harness_free_client(&h);
    cr_assert_eq(freed.calls, 1);
    cr_assert_eq(freed.status, REDLOCK_ECANCELED);
}

/* ---- The blocking client ------------------------------------------------ */

typedef enum fd_kind { FD_EVENTFD, FD_PIPE, FD_SIGNALFD } fd_kind;

typedef struct canceler {
    fd_kind kind;
    int fd;     /* what the acquire polls */
    int write_fd; /* a pipe's write end */
    int64_t after_ms;
} canceler;

static void *cancel_later(void *arg)
{
    const canceler *c = arg;
    struct timespec ts = {.tv_sec = c->after_ms / 1000, .tv_nsec = (c->after_ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    switch (c->kind) {
    case FD_EVENTFD:
        cr_assert_eq(eventfd_write(c->fd, 1), 0);
        break;
    case FD_PIPE:
        cr_assert_eq(write(c->write_fd, "x", 1), 1);
        break;
    case FD_SIGNALFD:
        cr_assert_eq(kill(getpid(), SIGUSR1), 0); /* blocked in every thread */
        break;
    }
    return NULL;
}

/*
 * A blocking acquire of a resource our own first lock holds waits between
 * retries until the fd of the given kind becomes readable; then
 * REDLOCK_ECANCELED, no key of the second acquire anywhere, and the first
 * lock's keys untouched.
 */
static void blocking_cancel(fd_kind kind)
{
    sigset_t usr1;
    sigset_t old;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    /* Before any thread starts, so that each inherits it. */
    cr_assert_eq(pthread_sigmask(SIG_BLOCK, &usr1, &old), 0);
    harness_start(&h, 3, NULL);
    redlock_sync *s = NULL;
    cr_assert_eq(redlock_sync_new(&s, h.cfg), REDLOCK_OK);
    redlock_acquire_options o = fleet_acquire_options(fleet_scaled_ms(TTL_MS), 0);
    redlock_lock *held = NULL;
    cr_assert_eq(redlock_sync_acquire(s, "blocking", 8, &o, &held, NULL), REDLOCK_OK);
    size_t value_len = 0;
    const char *value = redlock_lock_value(held, &value_len);
    cr_assert_not_null(value);

    canceler c = {.kind = kind, .fd = -1, .write_fd = -1, .after_ms = fleet_scaled_ms(CANCEL_MS)};
    int pipe_fds[2] = {-1, -1};
    if (kind == FD_EVENTFD) {
        c.fd = eventfd(0, EFD_CLOEXEC);
    } else if (kind == FD_PIPE) {
        cr_assert_eq(pipe(pipe_fds), 0);
        c.fd = pipe_fds[0];
        c.write_fd = pipe_fds[1];
    } else {
        c.fd = signalfd(-1, &usr1, SFD_CLOEXEC | SFD_NONBLOCK);
    }
    cr_assert_geq(c.fd, 0);
    o.retry_count = 1000;
    o.retry_delay_ms = fleet_scaled_ms(50);
    o.cancel_fd = c.fd;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, cancel_later, &c), 0);
    double t0 = tc_now_ms();
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    int rc = redlock_sync_acquire(s, "blocking", 8, &o, &lock, &r);
    double took = tc_now_ms() - t0;
    cr_assert_eq(pthread_join(th, NULL), 0);
    cr_assert_eq(rc, REDLOCK_ECANCELED, "%s", redlock_status_name(rc));
    cr_assert_null(lock);
    cr_assert_not_null(r);
    cr_assert_eq(r->status, REDLOCK_ECANCELED);
    cr_assert_geq(r->attempts, 1);
    redlock_result_free(r);
    cr_assert_geq(took, (double)c.after_ms - 5);
    cr_assert_lt(took, (double)c.after_ms + fleet_scaled_ms(3000));
    /* The first lock is untouched, and nothing else of ours is there. */
    cr_assert_eq(fleet_count_value(h.fleet, "blocking", 8, value, value_len), 3);
    cr_assert_eq(redlock_lock_state(held), REDLOCK_LOCK_HELD);
    if (kind == FD_SIGNALFD) { /* still pending: polled, not read */
        struct signalfd_siginfo si;
        cr_assert_eq(read(c.fd, &si, sizeof(si)), (ssize_t)sizeof(si));
        cr_assert_eq(si.ssi_signo, (uint32_t)SIGUSR1);
    }
    cr_assert_eq(redlock_sync_release(s, held, NULL), REDLOCK_OK);
    redlock_lock_free(held);
    redlock_sync_free(s);
    cr_assert_eq(ours_left(h.fleet, "blocking"), 0);
    close(c.fd);
    if (c.write_fd >= 0)
        close(c.write_fd);
    cr_assert_eq(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
}

Test(cancel, blocking_eventfd)
{
    blocking_cancel(FD_EVENTFD);
}

Test(cancel, blocking_pipe)
{
    blocking_cancel(FD_PIPE);
}

Test(cancel, blocking_signalfd)
{
    blocking_cancel(FD_SIGNALFD);
}

/* Readable before the blocking call: REDLOCK_ECANCELED, nothing sent. */
Test(cancel, blocking_readable_already)
{
    harness_start(&h, 3, NULL);
    redlock_sync *s = NULL;
    cr_assert_eq(redlock_sync_new(&s, h.cfg), REDLOCK_OK);
    int efd = eventfd(1, EFD_CLOEXEC);
    cr_assert_geq(efd, 0);
    redlock_acquire_options o = fleet_acquire_options(fleet_scaled_ms(TTL_MS), 0);
    o.cancel_fd = efd;
    redlock_lock *lock = NULL;
    cr_assert_eq(redlock_sync_acquire(s, "early", 5, &o, &lock, NULL), REDLOCK_ECANCELED);
    cr_assert_null(lock);
    redlock_sync_free(s);
    cr_assert_eq(ours_left(h.fleet, "early"), 0);
    close(efd);
}
