/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * run's guardian: a process between redlock and CMD that sees to it that no
 * process CMD starts outlives the run.
 *
 * redlock forks it before it connects anywhere, so it holds none of
 * redlock's connections; it takes orders on one pipe and reports on
 * another. It is a child subreaper (PR_SET_CHILD_SUBREAPER): every process
 * below it that loses its parent -- a background job whose shell exited, a
 * daemon that forked twice, a process that called setsid() or setpgid() --
 * becomes its child instead of init's. So CMD's processes are exactly its
 * descendants (proctree.c finds them in /proc), and it has no child left
 * only once they are all gone.
 *
 * CMD's process is forked in advance, while redlock still acquires: it
 * waits for the order to run on a pipe of its own from redlock (go), and
 * execs as soon as it reads it, so a lock just taken is not kept waiting
 * for this process to wake and fork. Should redlock go without the
 * order, the pipe's EOF makes it exit.
 *
 *   IDLE --RUN--> RUNNING --CMD exited, nothing left----------------------> DONE
 *    |              |   \--CMD exited, processes left: report LEFT--> LEFT   ^ ^
 *    | EOF:         |                                                |     | |
 *    v KILLING      | STOP                                     STOP  |  none |
 *   (CMD's process) v                                                v  left |
 *                STOPPING <-------------------------------------------------+ |
 *                SIGTERM to every process, SIGKILL due after the grace  --none left
 *                   | grace over                                             |
 *                   v                                                        |
 *                KILLING: SIGKILL to every process until none is left -------+
 *
 * DONE reports CMD's wait status and exits. EOF on the orders pipe means
 * redlock is gone -- however it died, SIGKILL included, the kernel closes
 * its end -- and leads to KILLING at once (in IDLE, of the process still
 * waiting to run CMD, if any), then to exit without a report. CMD's
 * process reaped in IDLE (it read the order and ran before RUN reached
 * us) is settled when RUN comes.
 *
 * The guardian ignores the signals redlock passes on, and lives in a
 * process group of its own: neither a Ctrl-C at a terminal nor a SIGKILL
 * sent to redlock's whole group (timeout -s KILL, kill -9 -PGID) takes it
 * away before the processes that left that group. CMD runs in redlock's
 * group, as if redlock had started it: in the terminal's foreground when
 * redlock is.
 */
#include "guardian.h"

#include "cli.h"
#include "proctree.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const int guardian_forwarded[GUARDIAN_FORWARDED_COUNT] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

typedef enum guard_state {
    GUARD_IDLE,     /* waiting for RUN */
    GUARD_RUNNING,  /* CMD's process runs */
    GUARD_LEFT,     /* CMD exited, processes of it run on: waiting for STOP */
    GUARD_STOPPING, /* SIGTERM sent; SIGKILL at kill_at_ms */
    GUARD_KILLING,  /* SIGKILL until none is left */
    GUARD_DONE,
} guard_state;

typedef enum order_kind { ORDER_RUN = 1, ORDER_SIGNAL, ORDER_STOP } order_kind;

/* redlock to guardian: one write() each, smaller than PIPE_BUF, so never
 * split nor mixed with another. */
typedef struct order {
    int32_t kind;
    int32_t signo;                     /* ORDER_SIGNAL */
    int64_t ms;                        /* ORDER_RUN: validity; ORDER_STOP: grace */
    uint64_t token;                    /* ORDER_RUN: the fencing token, 0 none */
    int32_t slot;                      /* ORDER_RUN: a semaphore's slot, -1 none */
    char value[REDLOCK_MAX_VALUE_LEN + 1]; /* ORDER_RUN: the lock's value */
} order;

typedef struct guard {
    guard_state state;
    int orders;  /* read end; -1 once redlock is gone */
    int reports; /* write end; -1 once redlock is gone */
    int sigchld; /* signalfd */
    const char *resource;
    char **cmd;
    const char *shown;
    pid_t cmd_pgid;        /* redlock's process group, for CMD */
    struct sigaction ttou; /* SIGTTOU's action as redlock had it, for CMD */
    int go;                /* read end of redlock's order to CMD's process */
    int fork_errno;        /* why CMD's process could not be forked, or 0 */
    pid_t cmd_pid;         /* CMD's process until it is reaped, then 0 */
    int cmd_status;        /* its wait status */
    double kill_at_ms;     /* STOPPING: when SIGKILL is due */
} guard;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static int write_message(int fd, const void *msg, size_t len)
{
    ssize_t n;
    do
        n = write(fd, msg, len);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)len ? 0 : -1;
}

static int read_message(int fd, void *msg, size_t len)
{
    ssize_t n;
    do
        n = read(fd, msg, len);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)len ? 1 : 0;
}

/* ---- The guardian's side ------------------------------------------------ */

static void report(const guard *gd, guardian_report_kind kind, int value)
{
    guardian_report r = {(int32_t)kind, (int32_t)value};
    if (gd->reports >= 0)
        write_message(gd->reports, &r, sizeof(r)); /* EPIPE: redlock is gone, EOF follows */
}

/* In CMD's process, once the order came: redlock's process group, the
 * lock's details in the environment, an empty signal mask and the default
 * action for the signals we or redlock handle, then exec. Reports EXEC_FAILED
 * with errno to redlock itself if exec fails, before exiting (so before
 * our DONE). A signal passed on since RUN was blocked while this process
 * waited: unblocked here, it acts as it would have on CMD. */
static __attribute__((noreturn)) void exec_cmd(const guard *gd, const order *o)
{
    setpgid(0, gd->cmd_pgid);
    sigaction(SIGTTOU, &gd->ttou, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (size_t i = 0; i < GUARDIAN_FORWARDED_COUNT; i++)
        signal(guardian_forwarded[i], SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);

    char validity[32];
    snprintf(validity, sizeof(validity), "%lld", (long long)o->ms);
    if (o->slot >= 0) { /* a semaphore's: the slot's key */
        size_t len = strlen(gd->resource) + 32;
        char *slot = malloc(len);
        if (slot != NULL) {
            snprintf(slot, len, "%s:slot:%d", gd->resource, (int)o->slot);
            setenv("REDLOCK_RESOURCE", slot, 1);
            free(slot);
        }
    } else {
        setenv("REDLOCK_RESOURCE", gd->resource, 1);
    }
    setenv("REDLOCK_VALUE", o->value, 1);
    setenv("REDLOCK_VALIDITY_MS", validity, 1);
    /* Never one inherited from an outer run: it would be another lock's. */
    if (o->token != 0) {
        char token[24];
        snprintf(token, sizeof(token), "%llu", (unsigned long long)o->token);
        setenv("REDLOCK_FENCING_TOKEN", token, 1);
    } else {
        unsetenv("REDLOCK_FENCING_TOKEN");
    }
    execvp(gd->cmd[0], gd->cmd);
    int err = errno;
    report(gd, GUARDIAN_EXEC_FAILED, err);
    _exit(err == ENOENT ? 127 : 126);
}

/* CMD's process, forked in advance: it waits for redlock's order on the
 * go pipe, then execs; EOF there (no order: redlock is gone, or did not
 * get the lock) makes it exit. The signals passed on are blocked until
 * then, and terminal signals do not reach it: it is still in our group. */
static void fork_cmd(guard *gd)
{
    pid_t parent = getpid();
    sigset_t forwarded;
    sigemptyset(&forwarded);
    for (size_t i = 0; i < GUARDIAN_FORWARDED_COUNT; i++)
        sigaddset(&forwarded, guardian_forwarded[i]);
    sigset_t saved;
    sigprocmask(SIG_BLOCK, &forwarded, &saved);
    pid_t pid = fork();
    if (pid == 0) {
        /* Belt and braces: we die only after every process of CMD, unless
         * killed; then redlock kills what is left. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(EX_SOFTWARE);
        close(gd->orders);
        close(gd->sigchld);
        for (size_t i = 0; i < GUARDIAN_FORWARDED_COUNT; i++)
            signal(guardian_forwarded[i], SIG_DFL); /* blocked until exec */
        order o;
        if (read_message(gd->go, &o, sizeof(o)) != 1 || o.kind != ORDER_RUN)
            _exit(0);
        o.value[sizeof(o.value) - 1] = '\0';
        exec_cmd(gd, &o);
    }
    gd->fork_errno = pid < 0 ? errno : 0;
    sigprocmask(SIG_SETMASK, &saved, NULL);
    close(gd->go);
    gd->go = -1;
    if (pid > 0)
        gd->cmd_pid = pid;
}

static void note_reaped(pid_t pid, int wait_status, void *arg)
{
    guard *gd = arg;
    if (pid == gd->cmd_pid) {
        gd->cmd_status = wait_status;
        gd->cmd_pid = 0;
    }
}

/* SIGCHLD (or RUN): reap what exited; move on once CMD has, or nothing is
 * left. In IDLE, only reap. */
static void reap(guard *gd)
{
    struct signalfd_siginfo info;
    while (read(gd->sigchld, &info, sizeof(info)) > 0)
        ;
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
        note_reaped(pid, status, gd);
    bool none_left = pid < 0 && errno == ECHILD;
    if (gd->state == GUARD_RUNNING && gd->cmd_pid == 0) {
        if (none_left) {
            gd->state = GUARD_DONE;
        } else {
            gd->state = GUARD_LEFT;
            report(gd, GUARDIAN_LEFT, (int)proctree_signal(0, NULL));
        }
    } else if ((gd->state == GUARD_LEFT || gd->state == GUARD_STOPPING) && none_left) {
        gd->state = GUARD_DONE;
    }
}

/* STOP: SIGTERM to every process now, SIGKILL after the grace. */
static void stop(guard *gd, int64_t grace_ms)
{
    double at_ms = now_ms() + (double)grace_ms;
    if (gd->state == GUARD_STOPPING) {
        if (at_ms < gd->kill_at_ms)
            gd->kill_at_ms = at_ms;
        return;
    }
    if (gd->state != GUARD_RUNNING && gd->state != GUARD_LEFT)
        return;
    proctree_signal(SIGTERM, NULL);
    gd->kill_at_ms = at_ms;
    gd->state = GUARD_STOPPING;
}

/* SIGNAL: to CMD's process while it runs (not reaped: its pid is still
 * its own), to the processes it left after that. */
static void pass_on(const guard *gd, int signo)
{
    if (gd->cmd_pid > 0)
        kill(gd->cmd_pid, signo);
    else if (gd->state == GUARD_LEFT || gd->state == GUARD_STOPPING)
        proctree_signal(signo, NULL);
}

static void redlock_gone(guard *gd)
{
    close(gd->orders);
    close(gd->reports);
    gd->orders = gd->reports = -1;
    gd->state = gd->state == GUARD_IDLE && gd->cmd_pid == 0 ? GUARD_DONE : GUARD_KILLING;
}

/* RUN: CMD's process has the order already (redlock sends it there
 * first), and may even have run and been reaped. */
static void run_cmd(guard *gd)
{
    if (gd->fork_errno != 0) {
        report(gd, GUARDIAN_EXEC_FAILED, gd->fork_errno);
        gd->state = GUARD_DONE;
        return;
    }
    gd->state = GUARD_RUNNING;
    reap(gd);
}

static void take_order(guard *gd)
{
    order o;
    if (read_message(gd->orders, &o, sizeof(o)) != 1) {
        redlock_gone(gd);
        return;
    }
    if (o.kind == ORDER_RUN && gd->state == GUARD_IDLE)
        run_cmd(gd);
    else if (o.kind == ORDER_SIGNAL)
        pass_on(gd, o.signo);
    else if (o.kind == ORDER_STOP)
        stop(gd, o.ms);
}

/* A group of our own; SIGCHLD arrives on a signalfd; SIGPIPE is ignored
 * (the forwarded signals are already), and SIGTTOU: our messages may have
 * to reach a terminal from a background group. 0, or -1 with errno set. */
static int set_up(guard *gd)
{
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        return -1;
    prctl(PR_SET_NAME, "redlock-guard");
    gd->cmd_pgid = getpgrp();
    setpgid(0, 0);
    struct sigaction ignore;
    memset(&ignore, 0, sizeof(ignore));
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGTTOU, &ignore, &gd->ttou);
    signal(SIGPIPE, SIG_IGN);
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    gd->sigchld = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    if (gd->sigchld < 0)
        return -1;
    fork_cmd(gd);
    /* A first sweep's code while nothing hurries, so that the one after a
     * loss finds it loaded and bound (under valgrind, translated: some
     * 100 ms saved). Over a few processes only: a full sweep reads every
     * process on the machine, 1 ms or more of CPU at each run's start,
     * while the lock passes between the holder and its waiters. */
    proctree_warm_up();
    return 0;
}

/* What needs no event: the grace running out, KILLING, DONE. */
static void advance(guard *gd)
{
    if (gd->state == GUARD_STOPPING && now_ms() >= gd->kill_at_ms) {
        long left = proctree_signal(0, NULL);
        if (left > 0)
            cli_error("run: %s: %ld process(es) of the command did not stop; sending SIGKILL",
                      gd->shown, left);
        gd->state = GUARD_KILLING;
    }
    if (gd->state == GUARD_KILLING) {
        if (gd->cmd_pid > 0)
            kill(gd->cmd_pid, SIGKILL); /* at once: the sweep takes a while */
        proctree_kill_all(note_reaped, gd);
        gd->state = GUARD_DONE;
    }
    if (gd->state == GUARD_DONE) {
        report(gd, GUARDIAN_DONE, gd->cmd_status);
        _exit(0);
    }
}

/* Wait for SIGCHLD, an order, or the end of the grace, and take them. */
static void wait_and_take(guard *gd)
{
    int timeout = -1; /* no timer but in STOPPING */
    if (gd->state == GUARD_STOPPING) {
        double left_ms = gd->kill_at_ms - now_ms();
        timeout = left_ms > 0 ? (int)left_ms + 1 : 0;
    }
    struct pollfd fds[2] = {{gd->sigchld, POLLIN, 0}, {gd->orders, POLLIN, 0}};
    if (poll(fds, 2, timeout) < 0) {
        if (errno != EINTR)
            redlock_gone(gd); /* cannot wait for orders: do as if there were none */
        return;
    }
    if (fds[0].revents != 0)
        reap(gd);
    if (fds[1].revents != 0)
        take_order(gd);
}

static __attribute__((noreturn)) void guardian_main(int orders, int reports, int go,
                                                    const char *resource, const char *shown,
                                                    char **cmd)
{
    guard gd = {.state = GUARD_IDLE, .orders = orders, .reports = reports, .go = go,
                .resource = resource, .shown = shown, .cmd = cmd};
    if (set_up(&gd) != 0) {
        cli_error("run: cannot watch over the command: %s", strerror(errno));
        _exit(EX_SOFTWARE); /* redlock sees us gone */
    }
    for (;;) {
        advance(&gd);
        wait_and_take(&gd);
    }
}

/* ---- redlock's side ----------------------------------------------------------- */

static void close_pair(int fds[2])
{
    int saved = errno;
    close(fds[0]);
    close(fds[1]);
    errno = saved;
}

int guardian_start(guardian *g, const char *resource, const char *shown, char **cmd)
{
    int orders[2];
    int reports[2];
    int go[2];
    if (pipe2(orders, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(reports, O_CLOEXEC) != 0) {
        close_pair(orders);
        return -1;
    }
    if (pipe2(go, O_CLOEXEC) != 0) {
        close_pair(orders);
        close_pair(reports);
        return -1;
    }
    /* No forwarded signal may end it before it ignores them. */
    sigset_t forwarded;
    sigset_t saved_mask;
    sigemptyset(&forwarded);
    for (size_t i = 0; i < GUARDIAN_FORWARDED_COUNT; i++)
        sigaddset(&forwarded, guardian_forwarded[i]);
    sigprocmask(SIG_BLOCK, &forwarded, &saved_mask);
    pid_t pid = fork();
    if (pid == 0) {
        close(orders[1]);
        close(reports[0]);
        close(go[1]);
        for (size_t i = 0; i < GUARDIAN_FORWARDED_COUNT; i++)
            signal(guardian_forwarded[i], SIG_IGN);
        sigprocmask(SIG_SETMASK, &saved_mask, NULL);
        guardian_main(orders[0], reports[1], go[0], resource, shown, cmd);
    }
    int fork_errno = errno;
    sigprocmask(SIG_SETMASK, &saved_mask, NULL);
    close(orders[0]);
    close(reports[1]);
    close(go[0]);
    if (pid < 0) {
        close(orders[1]);
        close(reports[0]);
        close(go[1]);
        errno = fork_errno;
        return -1;
    }
    *g = (guardian){pid, orders[1], reports[0], go[1]};
    return 0;
}

/* Every byte set, padding included: it all goes down the pipe. */
static order new_order(order_kind kind)
{
    order o;
    memset(&o, 0, sizeof(o));
    o.kind = (int32_t)kind;
    return o;
}

static int send_order(const guardian *g, const order *o)
{
    if (g->orders < 0) {
        errno = EPIPE;
        return -1;
    }
    return write_message(g->orders, o, sizeof(*o));
}

int guardian_run(guardian *g, const char *value, int64_t validity_ms, uint64_t token, int slot)
{
    order o = new_order(ORDER_RUN);
    o.slot = slot;
    size_t len = strlen(value);
    if (len >= sizeof(o.value)) {
        errno = E2BIG;
        return -1;
    }
    memcpy(o.value, value, len + 1);
    o.ms = validity_ms;
    o.token = token;
    /* To CMD's process first, which runs it at once; then to the guardian,
     * which needs no more than to know. Should CMD's process be gone (it
     * could not be forked, or was killed), the guardian reports it. */
    if (g->go >= 0)
        write_message(g->go, &o, sizeof(o));
    return send_order(g, &o);
}

int guardian_signal(guardian *g, int signo)
{
    order o = new_order(ORDER_SIGNAL);
    o.signo = signo;
    return send_order(g, &o);
}

int guardian_stop(guardian *g, int64_t grace_ms)
{
    order o = new_order(ORDER_STOP);
    o.ms = grace_ms;
    return send_order(g, &o);
}

int guardian_read(guardian *g, guardian_report *r)
{
    return read_message(g->reports, r, sizeof(*r));
}

void guardian_close(guardian *g)
{
    if (g->go >= 0)
        close(g->go);
    if (g->orders >= 0)
        close(g->orders);
    if (g->reports >= 0)
        close(g->reports);
    g->go = g->orders = g->reports = -1;
    if (g->pid > 0)
        while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    g->pid = 0;
}
