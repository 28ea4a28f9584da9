/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The processes below this one, from /proc/PID/stat: every process's
 * parent, then the descendants of ours, pass after pass (see proctree.h).
 *
 * A pid read in a sweep is signalled an instant later. A child of ours
 * keeps its pid until we reap it; a deeper descendant could in between be
 * reaped by its parent and its pid reused, but only if every other pid
 * were taken in that instant first (pids are handed out in turn).
 */
#include "proctree.h"

#include "cli.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct proc {
    pid_t pid;
    pid_t ppid;
    bool stopped; /* by a signal: it gets SIGCONT after signo */
    bool below;   /* a descendant of ours */
} proc;

#define KILL_WAIT_MIN_MS 1   /* between sweeps while processes keep dying */
#define KILL_WAIT_MAX_MS 500 /* between sweeps once none does */
#define WARM_UP_PROCESSES 8  /* read by the warm-up: its code runs, no more */
#define ALL_PROCESSES SIZE_MAX

/* A living process's parent and whether it is stopped, from
 * /proc/PID/stat in one read(); false when it is gone, a zombie, or
 * unreadable. */
static bool read_stat(const char *pid_text, proc *p)
{
    char path[64];
    char buf[512];
    snprintf(path, sizeof(path), "/proc/%s/stat", pid_text);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    /* "PID (COMM) STATE PPID ...", where COMM may hold anything. */
    const char *close_paren = strrchr(buf, ')');
    if (close_paren == NULL || close_paren[1] != ' ' || close_paren[2] == '\0' ||
        close_paren[3] != ' ')
        return false;
    char state = close_paren[2];
    char *end = NULL;
    long ppid = strtol(close_paren + 4, &end, 10);
    if (end == close_paren + 4 || *end != ' ' || ppid <= 0 || state == 'Z' || state == 'X')
        return false;
    p->ppid = (pid_t)ppid;
    p->stopped = state == 'T';
    return true;
}

static int by_pid(const void *a, const void *b)
{
    const proc *x = a;
    const proc *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Every living process, or the first limit of them; NULL (and *count 0)
 * when /proc cannot be read. */
static proc *read_processes(size_t *count, size_t limit)
{
    *count = 0;
    DIR *d = opendir("/proc");
    if (d == NULL)
        return NULL;
    proc *procs = NULL;
    size_t cap = 0;
    const struct dirent *e;
    while (*count < limit && (e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        proc p = {(pid_t)strtol(e->d_name, NULL, 10), 0, false, false};
        if (!read_stat(e->d_name, &p))
            continue;
        if (*count == cap) {
            cap = cap ? cap * 2 : 256;
            proc *grown = realloc(procs, cap * sizeof(*grown));
            if (grown == NULL)
                break; /* the processes read so far: the next sweep gets the rest */
            procs = grown;
        }
        procs[(*count)++] = p;
    }
    closedir(d);
    if (procs == NULL)
        procs = calloc(1, sizeof(*procs)); /* no process at all: still a list */
    return procs;
}

/* Mark our descendants in procs (sorted by pid): our children first, then
 * theirs, until a pass finds no one new. */
static void mark_descendants(proc *procs, size_t n)
{
    pid_t self = getpid();
    bool grew = true;
    while (grew) {
        grew = false;
        for (size_t i = 0; i < n; i++) {
            if (procs[i].below)
                continue;
            proc key = {procs[i].ppid, 0, false, false};
            const proc *parent = procs[i].ppid == self
                                     ? NULL
                                     : bsearch(&key, procs, n, sizeof(*procs), by_pid);
            if (procs[i].ppid == self || (parent != NULL && parent->below)) {
                procs[i].below = true;
                grew = true;
            }
        }
    }
}

/* proctree_signal over the first limit processes of /proc. */
static long sweep(int signo, long *refused, size_t limit)
{
    if (refused != NULL)
        *refused = 0;
    size_t n = 0;
    proc *procs = read_processes(&n, limit);
    if (procs == NULL)
        return -1;
    qsort(procs, n, sizeof(*procs), by_pid);
    mark_descendants(procs, n);
    long found = 0;
    for (size_t i = 0; i < n; i++) {
        if (!procs[i].below)
            continue;
        if (kill(procs[i].pid, signo) == 0) {
            found++;
            if (procs[i].stopped && signo != 0)
                kill(procs[i].pid, SIGCONT);
        } else if (errno == EPERM) {
            found++;
            if (refused != NULL)
                (*refused)++;
        }
    }
    free(procs);
    return found;
}

long proctree_signal(int signo, long *refused)
{
    return sweep(signo, refused, ALL_PROCESSES);
}

void proctree_warm_up(void)
{
    sweep(0, NULL, WARM_UP_PROCESSES);
}

void proctree_kill_all(proctree_reaped *on_reaped, void *arg)
{
    /* SIGCHLD is waited for below, not handled. */
    sigset_t chld;
    sigset_t saved;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &saved);
    long wait_ms = KILL_WAIT_MIN_MS;
    bool told = false;
    for (;;) {
        long refused = 0;
        proctree_signal(SIGKILL, &refused);
        if (refused > 0 && !told) {
            cli_error("run: %ld process(es) started by the command may not be killed by this "
                      "user; waiting for them to exit",
                      refused);
            told = true;
        }
        bool reaped = false;
        int status = 0;
        pid_t pid;
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
            reaped = true;
            if (on_reaped != NULL)
                on_reaped(pid, status, arg);
        }
        if (pid < 0 && errno == ECHILD)
            break;
        /* Some are still dying, or were forked during the sweep: they get
         * theirs next time. */
        wait_ms = reaped ? KILL_WAIT_MIN_MS
                         : (wait_ms * 2 < KILL_WAIT_MAX_MS ? wait_ms * 2 : KILL_WAIT_MAX_MS);
        struct timespec ts = {wait_ms / 1000, (wait_ms % 1000) * 1000000L};
        sigtimedwait(&chld, NULL, &ts);
    }
    sigprocmask(SIG_SETMASK, &saved, NULL);
}
