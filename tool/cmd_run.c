/*
 * run: hold a lock while a command runs.
 *
 *   acquire --> spawn CMD --> CMD runs (lock auto-extended; signals forwarded)
 *                               |                    |
 *                               | CMD exits          | lock lost: SIGTERM CMD,
 *                               v                    | SIGKILL after the grace
 *                            release --> exit        v
 *                            (CMD's status)      CMD exits --> release --> exit 80
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* The signals we pass on to CMD. */
static const int forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define FORWARDED_COUNT (sizeof(forwarded_signals) / sizeof(forwarded_signals[0]))

typedef struct run_state {
    cli *c;
    const char *resource;
    char shown[CLI_SHOWN_SIZE]; /* the resource, as messages show it */
    redlock_lock *lock;
    pid_t child;
    int64_t kill_after_ms;
    bool lost;
    int interrupted;       /* a signal that came before CMD ran, or 0 */
    int wait_status;       /* CMD's, once it exited */
    ev_child child_watcher;
    ev_signal signal_watchers[FORWARDED_COUNT];
    ev_timer kill_timer;
} run_state;

static const char run_usage[] =
    "Usage: redlock run [--ttl TIME] [--wait TIME] [--kill-after TIME] RESOURCE [--] CMD [ARG...]\n"
    "\n"
    "Acquire the lock on RESOURCE, run CMD while holding it (extended every ttl/3)\n"
    "and release it when CMD exits. The exit status is CMD's. CMD's environment\n"
    "gets REDLOCK_RESOURCE, REDLOCK_VALUE and REDLOCK_VALIDITY_MS. If the lock is\n"
    "lost while CMD runs, CMD gets SIGTERM, then SIGKILL, and redlock exits 80.\n"
    "SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to CMD.\n"
    "\n"
    "  --ttl TIME         time-to-live (default: the config's ttl_ms)\n"
    "  --wait TIME        retry until TIME has passed (0: one attempt; default:\n"
    "                     the config's retry policy)\n"
    "  --kill-after TIME  after the loss, SIGKILL CMD this long after SIGTERM\n"
    "                     (default: half the validity left when the loss was seen)\n"
    "\n"
    "Exit status: CMD's (128+N if signal N killed it), 75 not acquired, 80 lock\n"
    "lost, 126 CMD not executable, 127 CMD not found, 64 usage, 78 configuration.\n";

/* In the child: the lock's details in the environment, default signal
 * handling, then exec. Reports errno on err_fd (close-on-exec) if exec
 * fails. Never returns. */
static void exec_child(char **cmd, const redlock_lock *lock, const char *resource, pid_t parent,
                       int err_fd)
{
    /* If redlock dies, CMD would run on unprotected once the lock expires. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(EX_SOFTWARE);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (size_t i = 0; i < FORWARDED_COUNT; i++)
        signal(forwarded_signals[i], SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);

    char validity[32];
    snprintf(validity, sizeof(validity), "%lld", (long long)redlock_lock_validity_ms(lock));
    setenv("REDLOCK_RESOURCE", resource, 1);
    setenv("REDLOCK_VALUE", redlock_lock_value(lock, NULL), 1);
    setenv("REDLOCK_VALIDITY_MS", validity, 1);
    execvp(cmd[0], cmd);
    int err = errno;
    ssize_t n = write(err_fd, &err, sizeof(err));
    (void)n;
    _exit(err == ENOENT ? 127 : 126);
}

/* Fork and exec CMD. Returns 0, or the exit status after reporting. */
static int spawn(run_state *st, char **cmd)
{
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
        cli_error("run: pipe: %s", strerror(errno));
        return EX_SOFTWARE;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        cli_error("run: fork: %s", strerror(errno));
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        return EX_SOFTWARE;
    }
    if (pid == 0) {
        close(pipe_fds[0]);
        exec_child(cmd, st->lock, st->resource, parent, pipe_fds[1]);
    }
    close(pipe_fds[1]);
    /* The pipe closes on a successful exec, or carries exec's errno. */
    int err = 0;
    ssize_t n;
    do
        n = read(pipe_fds[0], &err, sizeof(err));
    while (n < 0 && errno == EINTR);
    close(pipe_fds[0]);
    if (n == (ssize_t)sizeof(err)) {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        cli_error("run: cannot run %s: %s", cmd[0], strerror(err));
        return err == ENOENT ? 127 : 126;
    }
    st->child = pid;
    return 0;
}

static void stop_watchers(run_state *st)
{
    struct ev_loop *loop = st->c->loop;
    ev_child_stop(loop, &st->child_watcher);
    ev_timer_stop(loop, &st->kill_timer);
    for (size_t i = 0; i < FORWARDED_COUNT; i++)
        ev_signal_stop(loop, &st->signal_watchers[i]);
}

static void on_child_exit(struct ev_loop *loop, ev_child *w, int revents)
{
    run_state *st = w->data;
    st->wait_status = w->rstatus;
    stop_watchers(st);
    ev_break(loop, EVBREAK_ONE);
}

static void on_forwarded_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
    run_state *st = w->data;
    if (st->child > 0) {
        kill(st->child, w->signum);
    } else if (st->interrupted == 0) {
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
    for (size_t i = 0; i < FORWARDED_COUNT; i++) {
        ev_signal_init(&st->signal_watchers[i], on_forwarded_signal, forwarded_signals[i]);
        st->signal_watchers[i].data = st;
        ev_signal_start(st->c->loop, &st->signal_watchers[i]);
    }
}

static void on_kill_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    run_state *st = w->data;
    cli_error("run: %s did not stop; sending SIGKILL", st->shown);
    kill(st->child, SIGKILL);
}

static void on_lost(redlock_lock *lock, int status, void *arg)
{
    run_state *st = arg;
    int64_t left = redlock_lock_validity_ms(lock);
    int64_t grace = st->kill_after_ms >= 0 ? st->kill_after_ms : (left > 0 ? left / 2 : 0);
    st->lost = true;
    cli_error("run: lock on %s lost (%s) with %lld ms of validity left; stopping the command "
              "(SIGTERM, then SIGKILL after %lld ms)",
              st->shown, redlock_strerror(status), (long long)(left > 0 ? left : 0),
              (long long)grace);
    kill(st->child, SIGTERM);
    ev_timer_set(&st->kill_timer, (double)grace / 1000.0, 0.);
    ev_timer_start(st->c->loop, &st->kill_timer);
}

/* Watch CMD and the signals to forward, run the loop until CMD exits. */
static void supervise(run_state *st)
{
    struct ev_loop *loop = st->c->loop;
    ev_child_init(&st->child_watcher, on_child_exit, st->child, 0);
    st->child_watcher.data = st;
    ev_child_start(loop, &st->child_watcher);
    ev_run(loop, 0);
}

static int exit_status_of(int wait_status)
{
    if (WIFEXITED(wait_status))
        return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status))
        return 128 + WTERMSIG(wait_status);
    return EX_SOFTWARE;
}

int cmd_run(cli *c, int argc, char **argv)
{
    cli_options ro = CLI_OPTIONS_INIT;
    static const cli_option opts[] = {{"ttl", true, cli_opt_ttl},
                                      {"wait", true, cli_opt_wait},
                                      {"kill-after", true, cli_opt_kill_after}};
    int first;
    int rc = cli_parse_options(argc, argv, opts, 3, true, run_usage, &ro, &first);
    if (rc != 0)
        return rc == -2 ? 0 : rc;
    if (first >= argc) {
        cli_error("run: expected RESOURCE and CMD (see redlock run --help)");
        return EX_USAGE;
    }
    const char *resource = argv[first];
    int cmd_at = first + 1;
    if (cmd_at < argc && strcmp(argv[cmd_at], "--") == 0)
        cmd_at++;
    if (cmd_at >= argc) {
        cli_error("run: expected CMD after RESOURCE (see redlock run --help)");
        return EX_USAGE;
    }
    if ((rc = cli_check_resource("run", resource)) != 0 || (rc = cli_open(c)) != 0)
        return rc;

    run_state st = {.c = c, .resource = resource, .kill_after_ms = ro.kill_after_ms};
    cli_shown(st.shown, sizeof(st.shown), resource);
    ev_init(&st.kill_timer, on_kill_timer);
    st.kill_timer.data = &st;
    watch_signals(&st);
    redlock_acquire_options o = cli_acquire_options(ro.ttl_ms, ro.wait_ms);
    redlock_result *r = NULL;
    int status = cli_acquire(c, resource, &o, &st.lock, &r);
    if (status != REDLOCK_OK) {
        stop_watchers(&st);
        if (st.interrupted != 0)
            cli_error("run: interrupted by signal %d while acquiring %s", st.interrupted,
                      st.shown);
        else
            cli_report_not_acquired(resource, status, r);
        redlock_result_free(r);
        cli_disconnect(c);
        return st.interrupted ? 128 + st.interrupted : cli_exit_for_acquire(status);
    }
    redlock_result_free(r);
    if (st.interrupted != 0) {
        /* The lock came with the signal; freeing the client released it. */
        cli_error("run: interrupted by signal %d before running the command", st.interrupted);
        stop_watchers(&st);
        redlock_lock_free(st.lock);
        cli_disconnect(c);
        return 128 + st.interrupted;
    }

    status = redlock_auto_extend_async(c->client, st.lock, on_lost, &st);
    if (status != REDLOCK_OK) {
        /* Only if the lock expired already (a TTL shorter than the acquire). */
        cli_error("run: cannot keep %s extended: %s", st.shown, redlock_strerror(status));
        stop_watchers(&st);
        cli_disconnect(c); /* releases it */
        redlock_lock_free(st.lock);
        return EX_TEMPFAIL;
    }
    int code = spawn(&st, argv + cmd_at);
    if (code == 0) {
        supervise(&st);
        code = st.lost ? CLI_EXIT_LOST : exit_status_of(st.wait_status);
    }
    stop_watchers(&st);
    status = cli_release(c, st.lock, NULL);
    if (status != REDLOCK_OK && !st.lost)
        cli_error("run: releasing %s: %s (it expires after its TTL)", st.shown,
                  redlock_strerror(status));
    redlock_lock_free(st.lock);
    cli_disconnect(c);
    return code;
}
