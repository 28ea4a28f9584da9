/* SPDX-License-Identifier: BSD-3-Clause */
/* `redlock run` and every process CMD starts: children in the foreground,
 * background jobs, processes in a session (setsid) or a process group
 * (setpgid) of their own. None of them outlives the run: not a lost lock,
 * not redlock killed by SIGKILL, not CMD exiting while they still run.
 *
 * CMD is `sh -c SCRIPT sh PIDS GO`. The shell and each process it starts
 * append their pid to PIDS, one line each; the processes then become
 * `sleep 30` with their input and output on /dev/null, so that redlock's
 * output closes once redlock and the shell are done, whatever is left.
 * A process is gone once it has exited (its pidfd, taken while it ran, says
 * so): a zombie that nobody has reaped yet counts as gone. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <ctype.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T CLI_RUN_TIMEOUT_MS
#define MAX_TREE 4 /* processes of a script, the shell included */

TestSuite(cli_tree, .init = cli_setup_five, .fini = cli_teardown, .timeout = 120);

/* The shell's pid, then $s: the script of each process it starts. */
#define PRELUDE                                                                                    \
    "pids=$1; go=$2; echo $$ >> \"$pids\"; "                                                       \
    "s='echo $$ >> \"$0\"; exec sleep 30 </dev/null >/dev/null 2>&1'; "
/* The end of a script that holds on: wait for its children. */
#define HOLD "wait"
/* The end of a script that exits with 3 once the test says so (at most
 * 20 s later), leaving its children running. */
#define EXIT_ON_GO                                                                                 \
    "i=0; while [ ! -e \"$go\" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; exit 3"
#define EXIT_STATUS 3

/* Where the last process a script starts runs, next to the shell. */
typedef enum { SAME_GROUP, OWN_GROUP, OWN_SESSION } placement;

typedef struct shape {
    const char *start; /* shell code starting the processes, ending in ';' or '&' */
    size_t processes;  /* lines in PIDS once they all run */
    placement last;
} shape;

/* `sh -c 'sleep 30; ...'`: a child in the foreground. */
static const shape foreground = {"sh -c \"$s\" \"$pids\";", 2, SAME_GROUP};
/* `sh -c 'sleep 30 & ...'`: a background job. */
static const shape background = {"sh -c \"$s\" \"$pids\" &", 2, SAME_GROUP};
/* A background job in a new session: setsid(1) calls setsid(2). */
static const shape new_session = {"setsid sh -c \"$s\" \"$pids\" &", 2, OWN_SESSION};
/* A background job in a new process group: bash's job control (set -m)
 * calls setpgid(2) for it; bash records its own pid too. */
static const shape new_group = {
    "bash -c 'set -m; echo $$ >> \"$1\"; sh -c \"$0\" \"$1\" & wait' \"$s\" \"$pids\" "
    "</dev/null >/dev/null 2>&1 &",
    3, OWN_GROUP};
/* A background job that ignores SIGTERM. */
static const shape term_ignored = {"sh -c \"trap '' TERM; $s\" \"$pids\" &", 2, SAME_GROUP};

typedef struct tree {
    cli_proc *redlock;
    double spawned_ms;
    const char *go;
    size_t count;
    pid_t pids[MAX_TREE]; /* the shell first */
    int fds[MAX_TREE];    /* their pidfds */
} tree;

typedef struct lines_wait {
    const char *file;
    size_t lines;
} lines_wait;

static size_t count_lines(const char *text)
{
    size_t n = 0;
    for (const char *c = text; c != NULL && *c != '\0'; c++)
        n += *c == '\n';
    return n;
}

static bool has_lines(void *arg)
{
    const lines_wait *w = arg;
    return count_lines(cli_read_file(w->file)) >= w->lines;
}

static const char *placement_name(placement p)
{
    return p == SAME_GROUP ? "the shell's group" : p == OWN_GROUP ? "a group of its own"
                                                                  : "a session of its own";
}

/* Fail unless the last process runs where the shape says. */
static void expect_placement(const tree *t, placement p)
{
    cli_stat shell;
    cli_stat last;
    cr_assert(cli_proc_stat(t->pids[0], &shell) && cli_proc_stat(t->pids[t->count - 1], &last),
              "the processes are gone already");
    placement seen = last.sid != shell.sid     ? OWN_SESSION
                     : last.pgid != shell.pgid ? OWN_GROUP
                                               : SAME_GROUP;
    cr_assert_eq(seen, p, "process %d (%s) runs in %s, not %s", (int)t->pids[t->count - 1],
                 last.comm, placement_name(seen), placement_name(p));
}

/*
 * Start `redlock --config CONFIG run OPTIONS... tree -- sh -c SCRIPT sh PIDS
 * GO`, SCRIPT being the shape's start followed by HOLD or EXIT_ON_GO; wait
 * until all its processes run and take their pidfds.
 */
static tree start_tree(const char *config, const char *const options[], const shape *s,
                       bool exits)
{
    tree t = {0};
    const char *pids = cli_path("pids");
    t.go = cli_path("go");
    const char *script = cli_format("%s%s %s", PRELUDE, s->start, exits ? EXIT_ON_GO : HOLD);
    const char *args[24];
    size_t n = 0;
    args[n++] = "--config";
    args[n++] = config;
    args[n++] = "run";
    for (size_t i = 0; options[i] != NULL && n < 14; i++)
        args[n++] = options[i];
    const char *tail[] = {"tree", "--", "sh", "-c", script, "sh", pids, t.go, NULL};
    for (size_t i = 0; i < sizeof(tail) / sizeof(tail[0]); i++)
        args[n++] = tail[i];
    t.spawned_ms = tc_now_ms();
    t.redlock = cli_spawn(args, NULL);

    lines_wait w = {pids, s->processes};
    cr_assert(cli_wait_until(has_lines, &w, 10000), "%zu processes expected in 10 s; PIDS: %s",
              s->processes, cli_read_file(pids));
    const char *text = cli_read_file(pids);
    for (const char *line = text; *line != '\0' && t.count < MAX_TREE; t.count++) {
        long pid = 0;
        cr_assert_eq(sscanf(line, "%ld", &pid), 1, "bad PIDS: %s", text);
        t.pids[t.count] = (pid_t)pid;
        t.fds[t.count] = cli_track((pid_t)pid);
        cr_assert_geq(t.fds[t.count], 0, "process %ld exited at once", pid);
        line = strchr(line, '\n') + 1;
    }
    cr_assert_eq(t.count, s->processes, "PIDS: %s", text);
    expect_placement(&t, s->last);
    cr_assert_geq(cli_masters_with_key("tree"), 3, "the lock is not held");
    return t;
}

/* Wait until every process of t has exited, at most timeout_ms (0: look
 * once). Returns when the last one was seen gone; fails the test, listing
 * those still running, if some are left. */
static double expect_tree_gone(const tree *t, int timeout_ms, const char *when)
{
    char *left = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&left, &len);
    cr_assert_not_null(m);
    size_t running = 0;
    double last_ms = 0;
    for (size_t i = 0; i < t->count; i++) {
        double at_ms = 0;
        if (cli_wait_gone(t->fds[i], timeout_ms, &at_ms)) {
            last_ms = at_ms > last_ms ? at_ms : last_ms;
            continue;
        }
        running++;
        cli_stat st;
        if (cli_proc_stat(t->pids[i], &st))
            fprintf(m, "\n  pid %d (%s): state %c, parent %d, group %d, session %d",
                    (int)t->pids[i], st.comm, st.state, (int)st.ppid, (int)st.pgid, (int)st.sid);
        else
            fprintf(m, "\n  pid %d", (int)t->pids[i]);
    }
    fclose(m);
    cli_own(left);
    cr_assert_eq(running, 0, "%zu of the %zu processes of CMD still run %s:%s", running, t->count,
                 when, left);
    return last_ms;
}

/* ---- (a) The lock is lost ------------------------------------------------------ */

/* Every process gets SIGTERM and is gone before the lock's validity ends
 * (sleep dies of SIGTERM); redlock exits with 80. */
static void lose_the_lock_under(const shape *s)
{
    tree t = start_tree(cli_lost_config(), CLI_ARGS("--ttl", cli_format("%dms", CLI_LOST_TTL_MS)),
                        s, false);
    cr_assert(cli_wait_extended("tree", 5000), "no extension seen in 5 s");
    double paused_ms = 0;
    double deadline_ms = cli_pause_majority("tree", &paused_ms);

    double gone_ms = expect_tree_gone(&t, 10000, "10 s after the lock was lost");
    const cli_result *r = cli_wait(t.redlock, T);
    cli_expect_exit(r, 80);
    cr_log_info("paused at 0 ms: processes gone at %.0f ms, redlock exited at %.0f ms, validity "
                "ended by %.0f ms",
                gone_ms - paused_ms, t.spawned_ms + r->elapsed_ms - paused_ms,
                deadline_ms - paused_ms);
    cr_assert_lt(gone_ms, deadline_ms,
                 "processes gone %.0f ms after the pause, but the lock's validity ended at most "
                 "%.0f ms after it; redlock said:\n%s",
                 gone_ms - paused_ms, deadline_ms - paused_ms, r->err);
    cli_resume_majority("tree");
}

Test(cli_tree, a_lost_lock_stops_a_foreground_child)
{
    lose_the_lock_under(&foreground);
}

Test(cli_tree, a_lost_lock_stops_a_background_job)
{
    lose_the_lock_under(&background);
}

Test(cli_tree, a_lost_lock_stops_a_process_in_a_new_session)
{
    lose_the_lock_under(&new_session);
}

Test(cli_tree, a_lost_lock_stops_a_process_in_a_new_group)
{
    lose_the_lock_under(&new_group);
}

/* ---- (b) redlock is killed ------------------------------------------------------- */

/* Every process is gone soon after redlock (killed alone, or with its
 * whole process group: the harness starts it in a group of its own); the
 * lock expires. */
static void kill_redlock_under(const shape *s, bool whole_group)
{
    tree t = start_tree(cli.config, CLI_ARGS("--ttl", "3s"), s, false);
    pid_t pid = cli_proc_pid(t.redlock);
    cr_assert_eq(kill(whole_group ? -pid : pid, SIGKILL), 0);
    double killed_ms = tc_now_ms();
    double gone_ms = expect_tree_gone(&t, 3000, "3 s after redlock was killed");
    const cli_result *r = cli_wait(t.redlock, T);
    cr_assert_eq(r->signal, SIGKILL, "%s: not killed by SIGKILL", r->cmdline);
    cr_log_info("processes gone %.0f ms after redlock was killed", gone_ms - killed_ms);
    cli_expect_key_expiring("tree", 3000, "after redlock was killed");
}

Test(cli_tree, killing_redlock_kills_a_foreground_child)
{
    kill_redlock_under(&foreground, false);
}

Test(cli_tree, killing_redlock_kills_a_background_job)
{
    kill_redlock_under(&background, false);
}

Test(cli_tree, killing_redlock_kills_a_process_in_a_new_session)
{
    kill_redlock_under(&new_session, false);
}

Test(cli_tree, killing_redlock_kills_a_process_in_a_new_group)
{
    kill_redlock_under(&new_group, false);
}

/* As `timeout -s KILL` or `kill -9 -PGID` do: the process that left the
 * group goes too. */
Test(cli_tree, killing_redlocks_process_group_kills_a_process_in_a_new_session)
{
    kill_redlock_under(&new_session, true);
}

/* The guardian -- the shell's parent, between redlock and CMD -- killed
 * with SIGKILL: redlock kills what it left, releases the lock and exits
 * with 70. */
Test(cli_tree, killing_the_guardian_makes_redlock_kill_what_it_left)
{
    tree t = start_tree(cli.config, CLI_ARGS("--ttl", "10s"), &new_session, false);
    cli_stat shell;
    cr_assert(cli_proc_stat(t.pids[0], &shell), "the shell is gone");
    cr_assert_neq(shell.ppid, cli_proc_pid(t.redlock), "the shell is redlock's own child");
    cr_assert_eq(kill(shell.ppid, SIGKILL), 0);
    const cli_result *r = cli_wait(t.redlock, T);
    cli_expect_exit(r, 70);
    expect_tree_gone(&t, 0, "when redlock exited");
    cli_expect_key_gone("tree", r->cmdline);
}

/* The children of parent, up to max, from /proc. */
static size_t children_of(pid_t parent, pid_t *out, size_t max)
{
    size_t n = 0;
    DIR *d = opendir("/proc");
    cr_assert_not_null(d);
    const struct dirent *e;
    while (n < max && (e = readdir(d)) != NULL) {
        cli_stat st;
        if (isdigit((unsigned char)e->d_name[0]) && cli_proc_stat((pid_t)atol(e->d_name), &st) &&
            st.ppid == parent && st.state != 'Z')
            out[n++] = (pid_t)atol(e->d_name);
    }
    closedir(d);
    return n;
}

typedef struct guardian_wait {
    pid_t redlock;
    pid_t guardian;
} guardian_wait;

static bool has_guardian(void *arg)
{
    guardian_wait *w = arg;
    return children_of(w->redlock, &w->guardian, 1) == 1;
}

/* Killed while it waits for the lock: its guardian, and CMD's process that
 * the guardian forks in advance, are gone at once, and CMD never runs,
 * not even once the lock is free. */
Test(cli_tree, killing_redlock_while_it_waits_leaves_no_process_and_runs_nothing)
{
    const char *holder = cli_acquire("waited", "30s");
    const char *marker = cli_path("ran");
    cli_proc *p = cli_spawn(
        CLI_ARGS("--config", cli.config, "run", "--wait", "20s", "waited", "--", "touch", marker),
        NULL);
    guardian_wait w = {cli_proc_pid(p), 0};
    cr_assert(cli_wait_until(has_guardian, &w, 5000), "no guardian in 5 s");
    usleep(300 * 1000); /* its own child forked, and the acquire waiting */
    pid_t pids[MAX_TREE] = {w.guardian};
    size_t count = 1 + children_of(w.guardian, pids + 1, MAX_TREE - 1);
    int fds[MAX_TREE];
    for (size_t i = 0; i < count; i++) {
        fds[i] = cli_track(pids[i]);
        cr_assert_geq(fds[i], 0, "process %d exited before redlock was killed", (int)pids[i]);
    }
    cr_log_info("%zu processes under redlock while it waits", count);
    cr_assert_eq(kill(w.redlock, SIGKILL), 0);
    for (size_t i = 0; i < count; i++)
        cr_assert(cli_wait_gone(fds[i], 3000, NULL),
                  "process %d (of %zu under redlock) still runs 3 s after redlock was killed",
                  (int)pids[i], count);
    const cli_result *r = cli_wait(p, T);
    cr_assert_eq(r->signal, SIGKILL, "%s: not killed by SIGKILL", r->cmdline);
    cli_expect_exit(cli_run(CLI_ARGS("--config", cli.config, "release", "waited", holder), NULL, T),
                    0);
    usleep(300 * 1000);
    cr_assert_neq(access(marker, F_OK), 0, "CMD ran though redlock was killed before the lock");
}

/* ---- (c) CMD exits, leaving processes behind -------------------------------------- */

/* The shell exits with 3 while its job runs: redlock stops the job before
 * it exits with 3 and releases the lock. */
static void exit_leaving(const shape *s)
{
    tree t = start_tree(cli.config, CLI_ARGS("--ttl", "10s"), s, true);
    cli_write_file("go", "", 0600);
    const cli_result *r = cli_wait(t.redlock, T);
    cli_expect_exit(r, EXIT_STATUS);
    expect_tree_gone(&t, 0, "when redlock exited");
    cli_expect_key_gone("tree", r->cmdline);
}

Test(cli_tree, cmd_exiting_leaves_no_background_job)
{
    exit_leaving(&background);
}

Test(cli_tree, cmd_exiting_leaves_no_process_in_a_new_session)
{
    exit_leaving(&new_session);
}

Test(cli_tree, cmd_exiting_leaves_no_process_in_a_new_group)
{
    exit_leaving(&new_group);
}

/* A job ignoring SIGTERM is killed --kill-after (1 s) after CMD exited;
 * until then redlock waits and holds the lock. */
Test(cli_tree, a_job_ignoring_sigterm_is_killed_after_the_grace_and_the_lock_held_until_then)
{
    tree t = start_tree(cli.config, CLI_ARGS("--ttl", "10s", "--kill-after", "1s"), &term_ignored,
                        true);
    cli_write_file("go", "", 0600);
    double exited_ms = 0;
    cr_assert(cli_wait_gone(t.fds[0], 10000, &exited_ms), "the shell did not exit");

    tc_sleep_ms(300);
    cr_assert(!cli_proc_exited(t.redlock),
              "redlock exited 300 ms after CMD, its job still running");
    cr_assert_geq(cli_masters_with_key("tree"), 3, "the lock was released while CMD's job ran");

    double gone_ms = 0;
    cr_assert(cli_wait_gone(t.fds[1], 10000, &gone_ms), "the job still runs 10 s after CMD exited");
    const cli_result *r = cli_wait(t.redlock, T);
    cli_expect_exit(r, EXIT_STATUS);
    cli_expect_key_gone("tree", r->cmdline);
    cr_log_info("CMD exited at 0 ms, its job was killed at %.0f ms, redlock exited at %.0f ms",
                gone_ms - exited_ms, t.spawned_ms + r->elapsed_ms - exited_ms);
    cr_assert(gone_ms - exited_ms >= 950 && gone_ms - exited_ms < (double)fleet_scaled_ms(5000),
              "the job was killed %.0f ms after CMD exited, not 1000", gone_ms - exited_ms);
}
