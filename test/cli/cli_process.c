/* SPDX-License-Identifier: BSD-3-Clause */
/* CLI-test harness: running the tool and watching the processes it starts;
 * see cli_harness.h. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_PROCS 64   /* tool processes alive at once */
#define MAX_TRACKED 64 /* other processes watched by pidfd */
#define REAP_TIMEOUT_MS 5000

struct cli_proc {
    pid_t pid;
    int pidfd;
    int out_fd, err_fd; /* -1 once at end of file */
    char *out, *err;
    size_t out_len, err_len;
    char *cmdline;
    double started_ms;
    bool exited;
    int wstatus;
    double exited_ms;
};

static cli_proc *procs[MAX_PROCS];
static struct {
    pid_t pid;
    int pidfd;
} tracked[MAX_TRACKED];
static size_t tracked_count;

/* ---- Cleanup ---------------------------------------------------------------- */

static void kill_and_reap_proc(cli_proc *p)
{
    if (!p->exited) {
        /* Its group too (CMD, unless moved elsewhere), while its pid, and
         * so the group's id, cannot have been reused. */
        kill(-p->pid, SIGKILL);
        kill(p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
        p->exited = true;
    }
    if (p->out_fd >= 0)
        close(p->out_fd);
    if (p->err_fd >= 0)
        close(p->err_fd);
    close(p->pidfd);
    free(p->out);
    free(p->err);
    free(p);
}

static void unregister_proc(const cli_proc *p)
{
    for (size_t i = 0; i < MAX_PROCS; i++)
        if (procs[i] == p)
            procs[i] = NULL;
}

bool cli_proc_stat(pid_t pid, cli_stat *st)
{
    char path[64];
    char buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return false;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "PID (COMM) STATE PPID PGRP SESSION ...": COMM may hold anything. */
    char *open_paren = strchr(buf, '(');
    char *close_paren = strrchr(buf, ')');
    if (open_paren == NULL || close_paren == NULL)
        return false;
    snprintf(st->comm, sizeof(st->comm), "%.*s", (int)(close_paren - open_paren - 1),
             open_paren + 1);
    int ppid;
    int pgid;
    int sid;
    if (sscanf(close_paren + 1, " %c %d %d %d", &st->state, &ppid, &pgid, &sid) != 4)
        return false;
    st->ppid = ppid;
    st->pgid = pgid;
    st->sid = sid;
    return true;
}

/* The fleet made us a child subreaper: processes orphaned by the tool end
 * up as our children. Kill and reap whatever is left (fleet stopped). */
void cli_processes_reap_adopted(void)
{
    DIR *d = opendir("/proc");
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        pid_t pid = (pid_t)atoi(e->d_name);
        cli_stat st;
        if (!cli_proc_stat(pid, &st))
            continue;
        if (st.state == 'Z') { /* dead already: reap it if it is ours */
            waitpid(pid, NULL, WNOHANG);
            continue;
        }
        if (st.ppid != getpid())
            continue;
        cr_log_warn("cli teardown: killing leftover process %d (%s)", (int)pid, st.comm);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    closedir(d);
}

static int pidfd_send_sigkill(int pidfd)
{
    return (int)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
}

void cli_processes_kill(void)
{
    for (size_t i = 0; i < MAX_PROCS; i++) {
        if (procs[i] != NULL) {
            kill_and_reap_proc(procs[i]);
            procs[i] = NULL;
        }
    }
    for (size_t i = 0; i < tracked_count; i++) {
        pidfd_send_sigkill(tracked[i].pidfd);
        cli_wait_gone(tracked[i].pidfd, REAP_TIMEOUT_MS, NULL);
        waitpid(tracked[i].pid, NULL, WNOHANG); /* if it was left to us */
        close(tracked[i].pidfd);
    }
    tracked_count = 0;
}

/* ---- Running the tool ----------------------------------------------------- */

static size_t name_len(const char *entry)
{
    return strcspn(entry, "=");
}

static bool same_name(const char *a, const char *b)
{
    size_t n = name_len(a);
    return n == name_len(b) && strncmp(a, b, n) == 0;
}

static bool env_changes(const char *const env[], const char *name)
{
    for (size_t i = 0; env != NULL && env[i] != NULL; i++)
        if (same_name(env[i], name))
            return true;
    return false;
}

/* The child's environment: ours without HOME, XDG_CONFIG_HOME and
 * REDLOCK_CONFIG, then the fixture's HOME and XDG_CONFIG_HOME, then env. */
static char **build_env(const char *const env[])
{
    size_t n = 0;
    size_t extra = 0;
    while (environ[n] != NULL)
        n++;
    while (env != NULL && env[extra] != NULL)
        extra++;
    char **out = cli_own(calloc(n + extra + 3, sizeof(char *)));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *e = environ[i];
        if (same_name(e, "HOME") || same_name(e, "XDG_CONFIG_HOME") ||
            same_name(e, "REDLOCK_CONFIG") || env_changes(env, e))
            continue;
        out[k++] = environ[i];
    }
    if (!env_changes(env, "HOME"))
        out[k++] = (char *)cli_format("HOME=%s", cli.home);
    if (!env_changes(env, "XDG_CONFIG_HOME"))
        out[k++] = (char *)cli_format("XDG_CONFIG_HOME=%s", cli.xdg);
    for (size_t i = 0; i < extra; i++)
        if (strchr(env[i], '=') != NULL)
            out[k++] = (char *)env[i];
    out[k] = NULL;
    return out;
}

static char *describe_command(const char *const args[])
{
    char *s = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&s, &len);
    cr_assert_not_null(m);
    fputs("redlock", m);
    for (size_t i = 0; args[i] != NULL; i++) {
        if (args[i][0] != '\0' && strpbrk(args[i], " \t\n'\"$\\") == NULL)
            fprintf(m, " %s", args[i]);
        else
            fprintf(m, " '%s'", args[i]);
    }
    fclose(m);
    return cli_own(s);
}

/* In the forked child: async-signal-safe calls only, then exec the tool
 * with the standard descriptors in `closed` (bit N: fd N) closed. */
static __attribute__((noreturn)) void exec_tool(pid_t parent, int in_fd, int out_fd, int err_fd,
                                                unsigned closed, char *const argv[],
                                                char *const envp[])
{
    /* Its own group, so a timeout kills what it started too; and killed
     * with us, so a test killed by Criterion leaves nothing running. */
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    if (dup2(in_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
        dup2(err_fd, STDERR_FILENO) < 0)
        _exit(127);
    /* Ignored signals (the fleet ignores SIGPIPE) survive exec: undo. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int s = 1; s < NSIG; s++)
        sigaction(s, &dfl, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    syscall(SYS_close_range, 3U, ~0U, 0U);
    for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
        if (closed & (1U << fd))
            close(fd);
    execve(argv[0], argv, envp);
    _exit(127);
}

static void set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    cr_assert(flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0);
}

static cli_proc *spawn(const char *program, const char *const args[], const char *const env[],
                       unsigned closed)
{
    size_t slot = 0;
    while (slot < MAX_PROCS && procs[slot] != NULL)
        slot++;
    cr_assert_lt(slot, MAX_PROCS, "more than %d tool processes at once", MAX_PROCS);

    size_t argc = 0;
    while (args[argc] != NULL)
        argc++;
    /* WRAPPER TOOL ARGS..., or TOOL ARGS... */
    const char *wrapper = getenv("REDLOCK_TEST_TOOL_WRAPPER");
    size_t first = wrapper != NULL && wrapper[0] != '\0' ? 1 : 0;
    char **argv = cli_own(calloc(first + argc + 2, sizeof(char *)));
    if (first > 0)
        argv[0] = cli_own(strdup(wrapper));
    argv[first] = (char *)program;
    for (size_t i = 0; i < argc; i++)
        argv[first + 1 + i] = (char *)args[i];
    char **envp = build_env(env);

    cli_proc *p = calloc(1, sizeof(*p));
    cr_assert_not_null(p);
    p->cmdline = describe_command(args);
    int out[2];
    int err[2];
    cr_assert_eq(pipe2(out, O_CLOEXEC), 0, "pipe: %s", strerror(errno));
    cr_assert_eq(pipe2(err, O_CLOEXEC), 0, "pipe: %s", strerror(errno));
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    cr_assert_geq(null_fd, 0);

    pid_t parent = getpid();
    p->started_ms = tc_now_ms();
    pid_t pid = fork();
    if (pid == 0)
        exec_tool(parent, null_fd, out[1], err[1], closed, argv, envp);
    int fork_errno = errno;
    close(null_fd);
    close(out[1]);
    close(err[1]);
    p->pid = pid;
    p->out_fd = out[0];
    p->err_fd = err[0];
    if (pid < 0) {
        close(out[0]);
        close(err[0]);
        free(p);
        cr_assert_fail("fork: %s", strerror(fork_errno));
    }
    /* Our child cannot be reaped by anyone else: its pid is still its own. */
    p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    procs[slot] = p;
    cr_assert_geq(p->pidfd, 0, "pidfd_open: %s", strerror(errno));
    set_nonblocking(p->out_fd);
    set_nonblocking(p->err_fd);
    return p;
}

cli_proc *cli_spawn(const char *const args[], const char *const env[])
{
    return spawn(REDLOCK_TOOL, args, env, 0);
}

cli_proc *cli_spawn_program(const char *program, const char *const args[],
                            const char *const env[])
{
    return spawn(program, args, env, 0);
}

pid_t cli_proc_pid(const cli_proc *p)
{
    return p->pid;
}

static void reap_nohang(cli_proc *p)
{
    if (!p->exited && waitpid(p->pid, &p->wstatus, WNOHANG) == p->pid) {
        p->exited = true;
        p->exited_ms = tc_now_ms();
    }
}

bool cli_proc_exited(cli_proc *p)
{
    struct pollfd pfd = {p->pidfd, POLLIN, 0};
    if (!p->exited && poll(&pfd, 1, 0) > 0)
        reap_nohang(p);
    return p->exited;
}

/* Read what is there; close at end of file. */
static void drain(int *fd, char **buf, size_t *len)
{
    char chunk[4096];
    for (;;) {
        ssize_t n = read(*fd, chunk, sizeof(chunk));
        if (n > 0) {
            char *grown = realloc(*buf, *len + (size_t)n + 1);
            cr_assert_not_null(grown);
            *buf = grown;
            memcpy(*buf + *len, chunk, (size_t)n);
            *len += (size_t)n;
            (*buf)[*len] = '\0';
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        close(*fd);
        *fd = -1;
        return;
    }
}

static const char *describe_status(bool exited, int wstatus)
{
    if (!exited)
        return "still running";
    if (WIFEXITED(wstatus))
        return cli_format("exit status %d", WEXITSTATUS(wstatus));
    return cli_format("killed by signal %d (%s)", WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
}

const cli_result *cli_wait(cli_proc *p, int timeout_ms)
{
    timeout_ms = (int)fleet_scaled_ms(timeout_ms);
    double deadline = tc_now_ms() + timeout_ms;
    while (!p->exited || p->out_fd >= 0 || p->err_fd >= 0) {
        double left = deadline - tc_now_ms();
        if (left <= 0)
            break;
        struct pollfd fds[3];
        int n = 0;
        int out_i = -1;
        int err_i = -1;
        int pid_i = -1;
        if (p->out_fd >= 0)
            fds[out_i = n++] = (struct pollfd){p->out_fd, POLLIN, 0};
        if (p->err_fd >= 0)
            fds[err_i = n++] = (struct pollfd){p->err_fd, POLLIN, 0};
        if (!p->exited)
            fds[pid_i = n++] = (struct pollfd){p->pidfd, POLLIN, 0};
        int rc = poll(fds, (nfds_t)n, (int)left + 1);
        if (rc < 0 && errno != EINTR)
            cr_assert_fail("poll: %s", strerror(errno));
        if (rc <= 0)
            continue;
        if (out_i >= 0 && fds[out_i].revents != 0)
            drain(&p->out_fd, &p->out, &p->out_len);
        if (err_i >= 0 && fds[err_i].revents != 0)
            drain(&p->err_fd, &p->err, &p->err_len);
        if (pid_i >= 0 && fds[pid_i].revents != 0)
            reap_nohang(p);
    }

    cli_result *r = cli_own(calloc(1, sizeof(*r)));
    r->cmdline = p->cmdline;
    r->out = cli_own(p->out != NULL ? p->out : strdup(""));
    r->err = cli_own(p->err != NULL ? p->err : strdup(""));
    p->out = p->err = NULL;
    bool exited = p->exited, open = p->out_fd >= 0 || p->err_fd >= 0;
    int wstatus = p->wstatus;
    r->elapsed_ms = (exited ? p->exited_ms : tc_now_ms()) - p->started_ms;
    unregister_proc(p);
    kill_and_reap_proc(p); /* a no-op unless it timed out */
    if (!exited)
        cr_assert_fail("%s: still running after %d ms (killed)\n--- stdout ---\n%s--- stderr "
                       "---\n%s",
                       r->cmdline, timeout_ms, r->out, r->err);
    if (open)
        cr_assert_fail("%s: %s, but its output stayed open %d ms: a process it started "
                       "is still running\n--- stdout ---\n%s--- stderr ---\n%s",
                       r->cmdline, describe_status(exited, wstatus), timeout_ms, r->out, r->err);
    if (WIFEXITED(wstatus)) {
        r->exit_code = WEXITSTATUS(wstatus);
    } else {
        r->exit_code = -1;
        r->signal = WTERMSIG(wstatus);
    }
    return r;
}

const cli_result *cli_run(const char *const args[], const char *const env[], int timeout_ms)
{
    return cli_wait(cli_spawn(args, env), timeout_ms);
}

const cli_result *cli_run_closed(const char *const args[], unsigned closed, int timeout_ms)
{
    cr_assert_eq(closed & ~7U, 0, "only fds 0 to 2 can be closed");
    /* valgrind would open its log on the lowest fd free and leave it to
     * the tool: the wrapper closes them once its log is elsewhere. */
    const char *wrapper = getenv("REDLOCK_TEST_TOOL_WRAPPER");
    if (wrapper != NULL && wrapper[0] != '\0')
        return cli_wait(
            spawn(REDLOCK_TOOL, args, CLI_ENV(cli_format("REDLOCK_TEST_CLOSE_FDS=%u", closed)), 0),
            timeout_ms);
    return cli_wait(spawn(REDLOCK_TOOL, args, NULL, closed), timeout_ms);
}

/* ---- Other processes --------------------------------------------------------- */

int cli_track(pid_t pid)
{
    cr_assert_gt(pid, 0);
    cr_assert_lt(tracked_count, MAX_TRACKED);
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0)
        return -1; /* already gone */
    tracked[tracked_count].pid = pid;
    tracked[tracked_count].pidfd = fd;
    tracked_count++;
    return fd;
}

bool cli_wait_gone(int pidfd, int timeout_ms, double *at_ms)
{
    if (pidfd >= 0) {
        double deadline = tc_now_ms() + (double)fleet_scaled_ms(timeout_ms);
        struct pollfd pfd = {pidfd, POLLIN, 0};
        int rc;
        while ((rc = poll(&pfd, 1, (int)(deadline - tc_now_ms()) + 1)) < 0 && errno == EINTR)
            ;
        if (rc <= 0)
            return false;
    }
    if (at_ms != NULL)
        *at_ms = tc_now_ms();
    return true;
}
