/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * run: hold a lock while a command runs.
 *
 * This side holds the lock. CMD, and every process it starts, are the
 * guardian's (guardian.c): a process forked first thing, which runs CMD
 * when told and sees to it that no process CMD started outlives the run.
 * Orders go to it over a pipe -- RUN, SIGNAL (the signals we pass on),
 * STOP (SIGTERM to every process, SIGKILL after the grace) -- and our end
 * closing, however we exit, makes it SIGKILL them all. It reports LEFT when
 * CMD exited leaving processes running, and DONE with CMD's status once
 * every process is gone; only then is the lock released.
 *
 *   ACQUIRING --acquired: RUN--> RUNNING ------------DONE-----------> release --> exit
 *       |                          |    |                                         (CMD's status)
 *       | not acquired,            |    | LEFT: STOP (grace)
 *       | or a signal              |    v
 *       v                          |  STOPPING --DONE--> release --> exit
 *    exit 75 or 128+N              |    ^                            (80 if lost,
 *                                  +----+ lock lost: STOP (grace)     else CMD's status)
 *
 * The grace is --kill-after, or half the validity left. We are a child
 * subreaper too: should the guardian itself die (SIGKILL), the processes it
 * leaves come to us, and we kill them before releasing the lock and
 * exiting with 70 (80 if the lock was lost).
 */
#include "cli_command.h"
#include "guardian.h"
#include "local_queue.h"
#include "metrics_file.h"
#include "proctree.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

typedef enum run_phase {
    RUN_ACQUIRING,
    RUN_RUNNING,  /* CMD runs (RUN sent) */
    RUN_STOPPING, /* STOP sent: the lock was lost, or CMD left processes */
    RUN_DONE,     /* every process is gone (DONE), or the guardian is */
} run_phase;

typedef struct run_state {
    cli *c;
    cli_resources set;
    const char *cmd_name;           /* CMD's first word, for messages */
    char label[REDLOCK_MAX_LABEL_LEN + 1]; /* CMD's name, the lock's holder label */
    char shown[CLI_SHOWN_SET_SIZE]; /* the resources, as messages show them */
    guardian guard;
    run_phase phase;
    int64_t kill_after_ms;
    bool lost;
    bool guardian_died;
    int interrupted; /* a signal that came before CMD ran, or 0 */
    int exec_errno;  /* why CMD could not be run, or 0 */
    int wait_status; /* CMD's, from DONE */
    ev_io report_watcher;
    ev_signal signal_watchers[GUARDIAN_FORWARDED_COUNT];
    const char *metrics_file; /* --metrics-file, or NULL */
    int metrics_errno;        /* the last write's failure reported, or 0 */
    ev_timer metrics_timer;
    local_queue queue; /* this host's waiters for the lock (local_queue.h) */
} run_state;

static void stop_watchers(run_state *st)
{
    struct ev_loop *loop = st->c->loop;
    ev_io_stop(loop, &st->report_watcher);
    for (size_t i = 0; i < GUARDIAN_FORWARDED_COUNT; i++)
        ev_signal_stop(loop, &st->signal_watchers[i]);
}

static void finish(run_state *st)
{
    st->phase = RUN_DONE;
    stop_watchers(st);
    ev_break(st->c->loop, EVBREAK_ONE);
}

/* SIGKILL after SIGTERM: --kill-after, or half the validity left. */
static int64_t grace_ms(const run_state *st)
{
    if (st->kill_after_ms >= 0)
        return st->kill_after_ms;
    int64_t half_left = redlock_lock_validity_ms(st->c->lock) / 2;
    return half_left > 0 ? half_left : 0;
}

static void on_report(struct ev_loop *loop, ev_io *w, int revents)
{
    run_state *st = w->data;
    guardian_report r;
    if (guardian_read(&st->guard, &r) != 1) {
        cli_error("run: the process watching over the command on %s died; killing what is "
                  "left of the command",
                  st->shown);
        st->guardian_died = true;
        finish(st);
        return;
    }
    if (r.kind == GUARDIAN_EXEC_FAILED) {
        st->exec_errno = r.value;
        cli_error("run: cannot run %s: %s", st->cmd_name, strerror(r.value));
    } else if (r.kind == GUARDIAN_LEFT && st->phase == RUN_RUNNING) {
        int64_t grace = grace_ms(st);
        if (r.value > 0)
            cli_error("run: the command exited, leaving %d process(es) running; stopping them "
                      "(SIGTERM, then SIGKILL after %lld ms) before releasing %s",
                      (int)r.value, (long long)grace, st->shown);
        guardian_stop(&st->guard, grace);
        st->phase = RUN_STOPPING;
    } else if (r.kind == GUARDIAN_DONE) {
        st->wait_status = r.value;
        finish(st);
    }
}

static void on_forwarded_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
    run_state *st = w->data;
    if (st->phase == RUN_RUNNING || st->phase == RUN_STOPPING) {
        guardian_signal(&st->guard, w->signum);
    } else if (st->phase == RUN_ACQUIRING && st->interrupted == 0) {
        /* Still acquiring: give up at once. Freeing the client cancels the
         * acquire, or releases the lock if it was just taken. */
        st->interrupted = w->signum;
        redlock_client_free(st->c->client);
        st->c->client = NULL;
    }
}

/* From before the acquire on, so a signal never finds us unprepared. */
static void watch_signals(run_state *st)
{
    for (size_t i = 0; i < GUARDIAN_FORWARDED_COUNT; i++) {
        ev_signal_init(&st->signal_watchers[i], on_forwarded_signal, guardian_forwarded[i]);
        st->signal_watchers[i].data = st;
        ev_signal_start(st->c->loop, &st->signal_watchers[i]);
    }
}

static void on_lost(int status, redlock_lock *lock, void *arg)
{
    run_state *st = arg;
    if (st->phase != RUN_RUNNING && st->phase != RUN_STOPPING)
        return; /* every process is gone already */
    int64_t left = redlock_lock_validity_ms(lock);
    int64_t grace = grace_ms(st);
    st->lost = true;
    char why[128];
    if (status == REDLOCK_EMAXHOLD)
        snprintf(why, sizeof(why), "held for the maximum (--max-hold, max_hold_ms)");
    else
        snprintf(why, sizeof(why), "lost (%s)", redlock_strerror(status));
    cli_error("run: lock on %s %s with %lld ms of validity left; stopping the command and every "
              "process it started (SIGTERM, then SIGKILL after %lld ms)",
              st->shown, why, (long long)(left > 0 ? left : 0), (long long)grace);
    guardian_stop(&st->guard, grace);
    st->phase = RUN_STOPPING;
}

/* A semaphore's slot the lock holds: the number after the resource's
 * name and ":slot:" in its key (redlock_acquire_options.slots); -1 for a
 * lock. */
static int slot_held(const run_state *st)
{
    size_t len = 0;
    const char *key = redlock_lock_resource(st->c->lock, &len);
    size_t base = st->set.lens[0] + sizeof(":slot:") - 1;
    if (key == NULL || st->set.count != 1 || len <= base || len > base + 2 ||
        memcmp(key, st->set.names[0], st->set.lens[0]) != 0)
        return -1;
    int slot = 0;
    for (size_t i = base; i < len; i++)
        slot = slot * 10 + (key[i] - '0');
    return slot;
}

/* Have the guardian run CMD; run the loop until every process is gone.
 * The guardian, exiting after DONE, is reaped after the release: the
 * next holder need not wait for it. */
static void supervise(run_state *st)
{
    struct ev_loop *loop = st->c->loop;
    ev_io_set(&st->report_watcher, st->guard.reports, EV_READ);
    ev_io_start(loop, &st->report_watcher);
    st->phase = RUN_RUNNING;
    /* If this fails, the guardian is gone: its pipe tells us next. */
    guardian_run(&st->guard, redlock_lock_value(st->c->lock, NULL),
                 redlock_lock_validity_ms(st->c->lock),
                 redlock_lock_fencing_token(st->c->lock), slot_held(st));
    ev_run(loop, 0);
    if (st->guardian_died) {
        proctree_kill_all(NULL, NULL); /* its orphans are ours */
        guardian_close(&st->guard);
    }
}

static int exit_status_of(int wait_status)
{
    if (WIFEXITED(wait_status))
        return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status))
        return 128 + WTERMSIG(wait_status);
    return EX_SOFTWARE;
}

/* The exit status once every process is gone. */
static int final_status(const run_state *st)
{
    if (st->guardian_died)
        return st->lost ? CLI_EXIT_LOST : EX_SOFTWARE;
    if (st->exec_errno != 0)
        return st->exec_errno == ENOENT ? 127 : 126;
    return st->lost ? CLI_EXIT_LOST : exit_status_of(st->wait_status);
}

/* The acquire failed, or a signal came with it: CMD is not run. */
static int not_run(const run_state *st, int status, int conflict_exit)
{
    if (st->interrupted == 0) {
        cli_report_not_acquired(&st->set, status, st->c->result, st->c->quiet);
        return cli_exit_for_acquire(status, st->c->result, conflict_exit);
    }
    if (status == REDLOCK_OK) /* the lock came with the signal; freeing the client released it */
        cli_error("run: interrupted by signal %d before running the command", st->interrupted);
    else
        cli_error("run: interrupted by signal %d while acquiring %s", st->interrupted,
                  st->shown);
    return 128 + st->interrupted;
}

/* --metrics-file: the client's metrics now; a failure said once per
 * reason, and the run goes on. */
static void write_metrics(run_state *st)
{
    if (st->metrics_file == NULL || st->c->client == NULL)
        return;
    int err = cli_metrics_file_write(st->metrics_file, st->c->client, st->c->cfg);
    if (err != 0 && err != st->metrics_errno)
        cli_error("run: --metrics-file %s: %s", st->metrics_file, strerror(err));
    st->metrics_errno = err;
}

static void on_metrics_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop, (void)revents;
    write_metrics(w->data);
}

static int run_held(run_state *st, const cli_options *ro);

/* Acquire, have CMD run, release, with the metrics written meanwhile. The
 * guardian runs already. */
static int run_locked(run_state *st, const cli_options *ro)
{
    int rc = cli_open(st->c);
    if (rc != 0)
        return rc;
    if (st->metrics_file != NULL) {
        ev_timer_init(&st->metrics_timer, on_metrics_timer, CLI_METRICS_INTERVAL_S,
                      CLI_METRICS_INTERVAL_S);
        st->metrics_timer.data = st;
        ev_timer_start(st->c->loop, &st->metrics_timer);
    }
    rc = run_held(st, ro);
    local_queue_leave(&st->queue); /* if a path above kept it */
    if (st->metrics_file != NULL) {
        ev_timer_stop(st->c->loop, &st->metrics_timer);
        write_metrics(st); /* the last: the release counted */
    }
    return rc;
}

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* With --wait, this host's waiters take turns before asking the masters
 * (local_queue.h): at most a TTL, and the wait is what is left after. Not
 * for a reentrant acquire, which its holder's turn would block, nor for a
 * semaphore's, whose holders on one host hold together. */
static void queue_up(run_state *st, const cli_options *ro, redlock_acquire_options *o)
{
    if (ro->owner != NULL || ro->slots > 1 || ro->wait_ms <= 0) /* FOREVER is above 0 */
        return;
    int64_t ttl = o->ttl_ms;
    if (ttl < 0)
        redlock_config_get(st->c->cfg, REDLOCK_TTL_MS, &ttl);
    int64_t max_ms = ro->wait_ms == CLI_WAIT_FOREVER || ro->wait_ms > ttl ? ttl : ro->wait_ms;
    int64_t start = monotonic_ms();
    local_queue_enter(&st->queue, st->c->loop, st->c->cfg, &st->set, max_ms, &st->interrupted);
    if (ro->wait_ms == CLI_WAIT_FOREVER)
        return;
    int64_t left = ro->wait_ms - (monotonic_ms() - start);
    o->wait_ms = left > 0 ? left : 0;
    if (left <= 0)
        o->retry_count = 0; /* one attempt, as --wait 0 */
}

static void leave_queue(void *queue)
{
    local_queue_leave(queue);
}

static int run_held(run_state *st, const cli_options *ro)
{
    cli *c = st->c;
    watch_signals(st);
    redlock_acquire_options o = cli_acquire_options(ro);
    if (ro->fencing < 0)
        o.fencing = 1; /* run hands CMD a fencing token unless --no-fencing */
    if (ro->label == NULL && st->label[0] != '\0')
        o.label = st->label; /* status shows who holds it: this host, pid and CMD */
    queue_up(st, ro, &o);
    int status = st->interrupted != 0 ? REDLOCK_ECANCELED
                                      : cli_acquire(c, &st->set, &o, &c->lock, &c->result);
    write_metrics(st); /* the masters connected, the acquire counted */
    if (status != REDLOCK_OK || st->interrupted != 0) {
        stop_watchers(st);
        local_queue_leave(&st->queue);
        return not_run(st, status, ro->conflict_exit);
    }

    status = redlock_auto_extend_async(c->client, c->lock, on_lost, st);
    if (status != REDLOCK_OK) {
        /* Only if the lock expired already (a TTL shorter than the acquire). */
        cli_error("run: cannot keep %s extended: %s", st->shown, redlock_strerror(status));
        stop_watchers(st);
        cli_release(c, c->lock, NULL); /* what may be left of it */
        return cli_exit_for_acquire(status, NULL, ro->conflict_exit);
    }
    supervise(st);
    stop_watchers(st);
    /* The host's next waiter asks as soon as our deletes are on their way:
     * each master reads them before its SETs, sent after. */
    status = cli_release_then(c, c->lock, leave_queue, &st->queue);
    if (status != REDLOCK_OK && !st->lost)
        cli_error("run: releasing %s: %s (it expires after its TTL)", st->shown,
                  redlock_strerror(status));
    return final_status(st);
}

/* CMD's name (its first word's last path component) as a holder label:
 * not its arguments, which may hold a secret and would show to anyone who
 * can read the masters' keys. Cut to its bound, characters that are not
 * printable ASCII shown as '?'. */
static void label_of(char **words, int count, char *out)
{
    size_t n = 0;
    const char *name = count > 0 ? words[0] : "";
    const char *slash = strrchr(name, '/');
    if (slash != NULL && slash[1] != '\0')
        name = slash + 1;
    for (const char *p = name; *p != '\0' && n < REDLOCK_MAX_LABEL_LEN; p++) {
        out[n] = '?';
        if (*p >= 0x20 && *p <= 0x7e)
            out[n] = *p;
        n++;
    }
    out[n] = '\0';
}

/* A TTL auto-extension can never keep would run CMD and lose the lock at
 * the first guard: an impossible argument, refused before anything is
 * acquired or run. */
static int check_ttl_kept(cli *c, const cli_options *o)
{
    int64_t ttl = o->ttl_ms;
    if (ttl < 0)
        redlock_config_get(c->cfg, REDLOCK_TTL_MS, &ttl);
    int64_t min = 0;
    int rc = redlock_auto_extend_min_ttl(c->cfg, &min);
    if (rc == REDLOCK_OK && ttl >= min)
        return 0;
    if (rc == REDLOCK_OK)
        cli_error("run: a TTL of %lld ms is too short to keep the lock extended while CMD runs; "
                  "the smallest TTL that works is %lld ms",
                  (long long)ttl, (long long)min);
    else
        cli_error("run: no TTL can be kept extended with the config's drift_factor");
    redlock_config_free(c->cfg);
    c->cfg = NULL;
    return rc == REDLOCK_OK ? EX_USAGE : EX_CONFIG;
}

/* Where CMD starts: RESOURCE... -- CMD, or without "--", RESOURCE CMD. */
static int cmd_start(char **operands, int count, int *resource_count)
{
    for (int i = 0; i < count; i++) {
        if (strcmp(operands[i], "--") == 0) {
            *resource_count = i;
            return i + 1;
        }
    }
    *resource_count = count > 0 ? 1 : 0;
    return *resource_count;
}

int cmd_run(cli *c, const cli_options *o, char **operands, int count)
{
    int resource_count;
    int cmd_at = cmd_start(operands, count, &resource_count);
    run_state st = {.c = c,
                    .phase = RUN_ACQUIRING,
                    .kill_after_ms = o->kill_after_ms,
                    .metrics_file = o->metrics_file};
    int rc = cli_resources_take("run", operands, resource_count, 0, &st.set);
    if (rc != 0)
        return rc;
    if (cmd_at >= count) {
        cli_error("run: expected CMD after RESOURCE (see redlock run --help)");
        return EX_USAGE;
    }
    st.cmd_name = operands[cmd_at];
    label_of(operands + cmd_at, count - cmd_at, st.label);
    cli_resources_shown(&st.set, st.shown, sizeof(st.shown));
    /* Before the guardian forks: reading the masters overwrites their
     * passwords in argv, which its copy would show otherwise. */
    if ((rc = cli_load_settings(c, o)) != 0 || (rc = check_ttl_kept(c, o)) != 0)
        return rc;
    ev_init(&st.report_watcher, on_report);
    st.report_watcher.data = &st;
    /* The guardian first: single-threaded, no connection or loop yet for it
     * to inherit. Should it die, its orphans come to us. CMD's
     * REDLOCK_RESOURCE is the first resource given. */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 ||
        guardian_start(&st.guard, st.set.names[0], st.shown, operands + cmd_at) != 0) {
        cli_error("run: cannot start the process to watch over the command: %s",
                  strerror(errno));
        redlock_config_free(c->cfg);
        c->cfg = NULL;
        return EX_SOFTWARE;
    }
    rc = run_locked(&st, o);
    guardian_close(&st.guard); /* once the lock is released, or if CMD never ran */
    return rc;
}
