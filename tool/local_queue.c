/* SPDX-License-Identifier: BSD-3-Clause */
/* The local queue of a host's waiters for one lock (see local_queue.h). */
#include "local_queue.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the waiting thread and the loop share. Whoever of the two finishes
 * second frees it: the loop when the turn came, the thread when the loop
 * gave up. The thread touches nothing of it after its write to wake. */
typedef enum turn_state {
    TURN_WAITING,   /* the thread is in flock() */
    TURN_CAME,      /* flock() returned while the loop still waited */
    TURN_ABANDONED, /* the loop gave up first: the thread cleans up */
} turn_state;

struct local_queue_turn {
    _Atomic int state; /* turn_state */
    int fd;            /* the queue's file */
    int wake;          /* eventfd: the thread tells the loop */
    int err;           /* flock()'s errno, or 0 */
    pthread_t thread;
};

/* FNV-1a, 64 bits: a name for the file, not a secret. */
static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

typedef struct sized {
    const char *bytes;
    size_t len;
} sized;

static int by_bytes(const void *a, const void *b)
{
    const sized *x = a;
    const sized *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->bytes, y->bytes, n);
    if (c != 0)
        return c;
    return (x->len > y->len) - (x->len < y->len);
}

static const char *queue_dir(void)
{
    if (access("/run/lock", W_OK | X_OK) == 0)
        return "/run/lock";
    const char *tmp = getenv("TMPDIR");
    return tmp != NULL && tmp[0] == '/' ? tmp : "/tmp";
}

/* The same masters in any order and the same resources in any order are
 * one lock, so one queue. */
int local_queue_path(const redlock_config *cfg, const cli_resources *set, char *buf,
                     size_t len)
{
    size_t nodes = redlock_config_node_count(cfg);
    const char **names = calloc(nodes > 0 ? nodes : 1, sizeof(*names));
    if (names == NULL)
        return -1;
    for (size_t i = 0; i < nodes; i++)
        names[i] = redlock_config_node_name(cfg, i);
    qsort(names, nodes, sizeof(*names), by_name);
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < nodes; i++)
        h = fnv1a(h, names[i], strlen(names[i]) + 1); /* with its NUL: a separator */
    free(names);
    sized res[REDLOCK_MAX_RESOURCES] = {{NULL, 0}};
    for (size_t i = 0; i < set->count; i++)
        res[i] = (sized){set->names[i], set->lens[i]};
    qsort(res, set->count, sizeof(res[0]), by_bytes);
    for (size_t i = 0; i < set->count; i++) {
        uint64_t n = res[i].len;
        h = fnv1a(h, &n, sizeof(n));
        h = fnv1a(h, res[i].bytes, res[i].len);
    }
    int n = snprintf(buf, len, "%s/redlock-%016llx.lock", queue_dir(), (unsigned long long)h);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* Open the queue's file, made if need be: read-only is enough for
 * flock(2), so any user's waiters share one made by another (0644 in a
 * sticky directory, where O_CREAT on another's file may be refused). */
static int open_queue_file(const char *path)
{
    for (int tries = 0; tries < 2; tries++) {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd >= 0 || errno != ENOENT)
            return fd;
        fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
        if (fd >= 0) {
            (void)fchmod(fd, 0644); /* whatever the umask: others' waiters read it too */
            return fd;
        }
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

static void *wait_turn(void *arg)
{
    struct local_queue_turn *t = arg;
    int rc;
    do
        rc = flock(t->fd, LOCK_EX);
    while (rc != 0 && errno == EINTR);
    t->err = rc == 0 ? 0 : errno;
    int expected = TURN_WAITING;
    if (atomic_compare_exchange_strong(&t->state, &expected, TURN_CAME)) {
        uint64_t one = 1;
        ssize_t w = write(t->wake, &one, sizeof(one));
        (void)w; /* an eventfd takes it: the counter cannot overflow from 0 */
        return NULL;
    }
    /* The loop gave up: the turn goes to the next waiter. */
    close(t->fd);
    close(t->wake);
    free(t);
    return NULL;
}

typedef struct waiting {
    bool woken;
    bool timed_out;
} waiting;

static void on_wake(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)revents;
    ((waiting *)w->data)->woken = true;
    ev_break(loop, EVBREAK_ONE);
}

static void on_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    ((waiting *)w->data)->timed_out = true;
    ev_break(loop, EVBREAK_ONE);
}

/* The thread, with every signal blocked: they are the loop's. */
static struct local_queue_turn *start_turn(int fd)
{
    struct local_queue_turn *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return NULL;
    atomic_init(&t->state, TURN_WAITING);
    t->fd = fd;
    t->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (t->wake < 0) {
        free(t);
        return NULL;
    }
    sigset_t all;
    sigset_t saved;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved);
    int rc = pthread_create(&t->thread, NULL, wait_turn, t);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (rc != 0) {
        close(t->wake);
        free(t);
        return NULL;
    }
    return t;
}

/* The turn came: held, or unused if flock() failed. Once its wake was
 * read, the thread is done with t and is left to end on its own: its exit
 * (its stack given back) takes as long as a round trip to the masters,
 * which can go out meanwhile. Otherwise (the wait ended for another
 * reason as the turn came) it may still be about to write to wake: it is
 * joined before wake is closed. */
static void turn_came(local_queue *q, struct local_queue_turn *t, bool woken)
{
    if (woken) {
        /* Read what the thread wrote: its write is then over as far as
         * anyone can tell (ThreadSanitizer included, which sees no order
         * in the loop's readiness alone), before wake is closed. */
        uint64_t count;
        ssize_t r = read(t->wake, &count, sizeof(count));
        (void)r; /* readable: the loop said so */
        pthread_detach(t->thread);
    } else {
        pthread_join(t->thread, NULL);
    }
    close(t->wake);
    if (t->err == 0) {
        q->fd = t->fd;
        q->state = LOCAL_QUEUE_HELD;
    } else {
        close(t->fd);
        q->state = LOCAL_QUEUE_UNUSED;
    }
    free(t);
}

void local_queue_enter(local_queue *q, struct ev_loop *loop, const redlock_config *cfg,
                       const cli_resources *set, int64_t max_ms, const int *interrupted)
{
    *q = (local_queue){.state = LOCAL_QUEUE_UNUSED, .fd = -1};
    if (max_ms <= 0 || local_queue_path(cfg, set, q->path, sizeof(q->path)) != 0)
        return;
    int fd = open_queue_file(q->path);
    if (fd < 0)
        return;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
        q->fd = fd;
        q->state = LOCAL_QUEUE_HELD;
        return;
    }
    struct local_queue_turn *t = errno == EWOULDBLOCK ? start_turn(fd) : NULL;
    if (t == NULL) {
        close(fd);
        return;
    }
    q->state = LOCAL_QUEUE_WAITING;
    waiting w = {0};
    ev_io wake;
    ev_io_init(&wake, on_wake, t->wake, EV_READ);
    wake.data = &w;
    ev_io_start(loop, &wake);
    ev_timer timeout;
    ev_now_update(loop);
    ev_timer_init(&timeout, on_timeout, (double)max_ms / 1000., 0.);
    timeout.data = &w;
    ev_timer_start(loop, &timeout);
    while (!w.woken && !w.timed_out && *interrupted == 0)
        ev_run(loop, EVRUN_ONCE);
    ev_io_stop(loop, &wake);
    ev_timer_stop(loop, &timeout);
    /* Once abandoned, t is the thread's to free at any moment: nothing of
     * it is read after the exchange. */
    pthread_t thread = t->thread;
    int expected = TURN_WAITING;
    if (atomic_compare_exchange_strong(&t->state, &expected, TURN_ABANDONED)) {
        pthread_detach(thread);
        q->state = LOCAL_QUEUE_GAVE_UP; /* the thread frees t when flock() returns */
        return;
    }
    turn_came(q, t, w.woken); /* it came, perhaps just as we gave up: ours all the same */
}

void local_queue_leave(local_queue *q)
{
    if (q->state != LOCAL_QUEUE_HELD)
        return;
    flock(q->fd, LOCK_UN); /* before close: the next waiter need not wait for it */
    close(q->fd);
    q->fd = -1;
    q->state = LOCAL_QUEUE_LEFT;
}
