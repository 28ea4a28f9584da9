/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The test fleet: real redis-server processes started, faulted and stopped
 * for tests, plus small helpers to look at their data. See fleet.h for the
 * contract. Every wait here is bounded in time.
 */
#include "fleet.h"
#include "fleet_tls.h"
#include "testclock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef FLEET_REDIS_SERVER
#define FLEET_REDIS_SERVER "redis-server"
#endif

#define START_TRIES 5           /* launches per server within one start */
#define POLL_MS 10              /* between readiness probes */
/* These bounds are stretched by the time scale (fleet_scaled_ms()). */
#define PROBE_TIMEOUT_MS 100    /* one readiness probe's connect and commands */
#define REAP_TIMEOUT_MS 5000    /* a SIGKILLed server is gone long before */
#define SIGNAL_TIMEOUT_MS 2000  /* SIGSTOP/SIGCONT take effect long before */
#define CONNECT_TIMEOUT_MS 1000 /* fleet_connect() and the data helpers */
#define MAX_TIME_SCALE 100
#define LOG_TAIL_BYTES 2048     /* of a log printed when a server fails */
#define MAX_EXTRA_ARGS 64
#define FALLBACK_MAX_FD 65536   /* closed in the child without close_range */

typedef struct fleet_server {
    int port;
    int port_fd;    /* bound, non-listening socket reserving port; -1: none */
    pid_t pid;      /* 0: not running */
    int paused;     /* SIGSTOPped by fleet_pause() */
    int appendonly; /* AOF with appendfsync always, from the next launch on */
    char *dir;      /* the server's --dir */
    char *log_path; /* its --logfile */
    char *err_path; /* its stderr (last launch): config errors come before
                       the log opens */
    char *socket_path; /* its --unixsocket, or NULL */
    char *faketime_path; /* its fake clock's spec file, or NULL: the real one */
    double started_ms;   /* when it was last launched (tc_now_ms) */
} fleet_server;

struct fleet {
    size_t n;
    fleet_server *servers;
    char *dir;         /* the fleet's temporary directory */
    char **redis_bins; /* what to execv: server i runs the (i mod count)th */
    size_t redis_bin_count;
    char *password;    /* NULL: none; wiped when freed */
    char *auth_conf;   /* config file with requirepass/masterauth, or NULL */
    int appendonly;
    int unix_socket;   /* servers also listen on DIR/i/redis.sock */
    int tls;           /* an enum fleet_tls */
    char *tls_dir;     /* DIR/tls: the certificates; NULL without TLS */
    char *tls_args[3]; /* its server.crt, server.key and ca.crt */
    char **extra_args;
    size_t extra_count;
    long max_fd;       /* fds to close in a child when close_range is missing */
    pid_t owner;       /* the process that started the fleet */
    pid_t janitor;     /* removes dir if the owner dies; 0: none */
    int janitor_fd;    /* write end of the janitor's pipe; -1: none */
    struct fleet *next_live;
};

/* ---- Small helpers ------------------------------------------------------ */

static struct timeval timeval_ms(int ms)
{
    struct timeval tv = {ms / 1000, (long)(ms % 1000) * 1000L};
    return tv;
}

__attribute__((format(printf, 1, 2))) static char *str_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int rc = vasprintf(&s, fmt, ap);
    va_end(ap);
    return rc < 0 ? NULL : s;
}

static void free_secret(char *secret)
{
    if (secret != NULL) {
        explicit_bzero(secret, strlen(secret));
        free(secret);
    }
}

static int valid_index(const fleet *f, size_t i)
{
    return f != NULL && i < f->n;
}

/* The server at i for a fault function, or NULL with a message. */
static fleet_server *server_for(fleet *f, size_t i, const char *what)
{
    if (!valid_index(f, i)) {
        fprintf(stderr, "fleet: %s: no server %zu\n", what, i);
        return NULL;
    }
    return &f->servers[i];
}

/* ---- Time scale ----------------------------------------------------------- */

int fleet_time_scale(void)
{
    const char *text = getenv("REDLOCK_TEST_TIME_SCALE");
    if (text == NULL || *text == '\0')
        return 1;
    char *end;
    long scale = strtol(text, &end, 10);
    return *end == '\0' && scale >= 1 && scale <= MAX_TIME_SCALE ? (int)scale : 1;
}

int64_t fleet_scaled_ms(int64_t ms)
{
    return ms * fleet_time_scale();
}

/* ---- Fleets alive in this process, stopped at exit ------------------------ */

static fleet *live_fleets;
static int atexit_registered;

/* The atexit handler: stop what the test did not (e.g. a failed assertion
 * skipped its cleanup). Fleets inherited through fork() are not ours. */
static void stop_live_fleets(void)
{
    fleet *f = live_fleets;
    for (size_t guard = 0; f != NULL && guard < 100000; guard++) {
        fleet *next = f->next_live;
        if (f->owner == getpid())
            fleet_stop(f);
        f = next;
    }
}

static void register_live(fleet *f)
{
    if (!atexit_registered && atexit(stop_live_fleets) == 0)
        atexit_registered = 1;
    f->next_live = live_fleets;
    live_fleets = f;
}

static void unregister_live(fleet *f)
{
    for (fleet **link = &live_fleets; *link != NULL; link = &(*link)->next_live) {
        if (*link == f) {
            *link = f->next_live;
            return;
        }
    }
}

/* ---- Files and directories ---------------------------------------------- */

/* One redis-server to execv: a name without '/' is looked up on PATH. NULL
 * with a message when there is no such executable. */
static char *find_one_server(const char *name)
{
    if (strchr(name, '/') != NULL) {
        if (access(name, X_OK) == 0)
            return strdup(name);
        fprintf(stderr, "fleet: %s is not an executable file\n", name);
        return NULL;
    }
    const char *path = getenv("PATH");
    if (path == NULL || *path == '\0')
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *dir = path;;) {
        const char *end = strchrnul(dir, ':');
        int len = (int)(end - dir);
        /* An empty PATH entry means the current directory. */
        char *candidate = len > 0 ? str_printf("%.*s/%s", len, dir, name)
                                  : str_printf("./%s", name);
        if (candidate != NULL && access(candidate, X_OK) == 0)
            return candidate;
        free(candidate);
        if (*end == '\0')
            break;
        dir = end + 1;
    }
    fprintf(stderr, "fleet: %s not found on PATH; set REDLOCK_REDIS_SERVER\n", name);
    return NULL;
}

static void free_servers(char **bins, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(bins[i]);
    free(bins);
}

/* The redis-servers to execv: $REDLOCK_REDIS_SERVER, else the name CMake
 * was configured with; a ':'-separated list makes a mixed fleet, server i
 * running the (i mod count)th. -1 with a message when one cannot be run. */
static int find_redis_servers(fleet *f)
{
    const char *list = getenv("REDLOCK_REDIS_SERVER");
    if (list == NULL || *list == '\0')
        list = FLEET_REDIS_SERVER;
    size_t count = 1;
    for (const char *p = list; *p; p++)
        count += *p == ':';
    char **bins = calloc(count, sizeof(*bins));
    if (bins == NULL)
        return -1;
    size_t n = 0;
    for (const char *p = list;; p++) {
        const char *end = strchrnul(p, ':');
        char *name = str_printf("%.*s", (int)(end - p), p);
        bins[n] = name != NULL && *name != '\0' ? find_one_server(name) : NULL;
        if (name != NULL && *name == '\0')
            fprintf(stderr, "fleet: an empty entry in REDLOCK_REDIS_SERVER=%s\n", list);
        free(name);
        if (bins[n++] == NULL) {
            free_servers(bins, n);
            return -1;
        }
        if (*end == '\0')
            break;
        p = end;
    }
    f->redis_bins = bins;
    f->redis_bin_count = n;
    return 0;
}

/* In TMPDIR, else /tmp; a fleet on AOF in /dev/shm when it can (tmpfs):
 * with appendfsync always, every write's reply waits for an fsync, which
 * a disk busy with other work (a build beside the tests) made take longer
 * than a handshake's timeout. The file still outlives a server killed and
 * started again, which is what the tests need of it. */
static char *make_fleet_dir(bool appendonly)
{
    const char *base = getenv("TMPDIR");
    if (base == NULL || *base == '\0')
        base = appendonly && access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
    char *dir = str_printf("%s/redlock-fleet-XXXXXX", base);
    if (dir == NULL)
        return NULL;
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "fleet: mkdtemp %s: %s\n", dir, strerror(errno));
        free(dir);
        return NULL;
    }
    return dir;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    if (remove(path) != 0 && errno != ENOENT)
        fprintf(stderr, "fleet: cannot remove %s: %s\n", path, strerror(errno));
    return 0;
}

/* rm -rf, without following symlinks. */
static void remove_tree(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * Write requirepass and masterauth to DIR/auth.conf, readable by us only,
 * so the password never shows on a command line. Every byte is written as
 * \xHH inside double quotes, which redis's config parser reads back as is.
 * Returns the path, or NULL with a message.
 */
static char *write_auth_conf(const char *dir, const char *password)
{
    char *path = str_printf("%s/auth.conf", dir);
    if (path == NULL)
        return NULL;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    FILE *fp = fd < 0 ? NULL : fdopen(fd, "w");
    if (fp == NULL) {
        fprintf(stderr, "fleet: cannot create %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        free(path);
        return NULL;
    }
    static const char *const directives[] = {"requirepass", "masterauth"};
    for (size_t d = 0; d < 2; d++) {
        fprintf(fp, "%s \"", directives[d]);
        for (const char *p = password; *p != '\0'; p++)
            fprintf(fp, "\\x%02x", (unsigned)(unsigned char)*p);
        fputs("\"\n", fp);
    }
    if (fclose(fp) != 0) {
        fprintf(stderr, "fleet: cannot write %s\n", path);
        free(path);
        return NULL;
    }
    return path;
}

/* Print the end of a log file to stderr (whole lines only). */
static void print_log_tail(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        return;
    char buf[LOG_TAIL_BYTES + 1];
    long start = 0;
    if (fseek(fp, 0, SEEK_END) == 0) {
        long size = ftell(fp);
        start = size > LOG_TAIL_BYTES ? size - LOG_TAIL_BYTES : 0;
    }
    size_t got = fseek(fp, start, SEEK_SET) == 0 ? fread(buf, 1, LOG_TAIL_BYTES, fp) : 0;
    fclose(fp);
    buf[got] = '\0';
    const char *text = buf;
    if (start > 0 && strchr(text, '\n') != NULL)
        text = strchr(text, '\n') + 1;
    if (*text == '\0')
        return;
    fprintf(stderr, "fleet: ---- end of %s ----\n%s%s", path, text,
            text[strlen(text) - 1] == '\n' ? "" : "\n");
}

/* Remove the snapshot a server would load at startup (a replica saves the
 * data set it synced as dump.rdb even with --save ""). */
static void forget_snapshot(const fleet_server *s)
{
    char *path = str_printf("%s/dump.rdb", s->dir);
    if (path != NULL && unlink(path) != 0 && errno != ENOENT)
        fprintf(stderr, "fleet: cannot remove %s: %s\n", path, strerror(errno));
    free(path);
}

/* ---- Ports ---------------------------------------------------------------- */

/*
 * Reserve a free loopback port: bind 127.0.0.1:0 without SO_REUSEADDR, so
 * the kernel picks a port nobody holds, then turn SO_REUSEADDR on. A
 * bound socket that does not listen lets redis-server (which also sets
 * SO_REUSEADDR) bind and listen on the port, refuses connections while the
 * server is down, and keeps other programs' bind(0) and outgoing
 * connections off the port. Returns the socket, or -1 with a message.
 */
static int reserve_port(int *port_out)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fprintf(stderr, "fleet: socket: %s\n", strerror(errno));
        return -1;
    }
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    int one = 1;
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &len) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) {
        fprintf(stderr, "fleet: cannot reserve a loopback port: %s\n", strerror(errno));
        close(fd);
        return -1;
    }
    *port_out = ntohs(addr.sin_port);
    return fd;
}

/* Give server s a new port (reserved before the old one is released, so
 * the kernel cannot hand the old one back). */
static int move_to_new_port(fleet_server *s)
{
    int port;
    int fd = reserve_port(&port);
    if (fd < 0)
        return -1;
    close(s->port_fd);
    s->port_fd = fd;
    s->port = port;
    return 0;
}

/* 1 when a plain TCP connect to the port is refused (nothing listens). */
static int port_refuses(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons((uint16_t)port);
    /* Loopback answers a SYN at once: accepted, or refused with a RST. */
    int refused = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 &&
                  errno == ECONNREFUSED;
    close(fd);
    return refused;
}

/* ---- Processes ------------------------------------------------------------ */

/* In a forked child: close every descriptor from 3 up. Inherited sockets
 * (the test's connections, port reservations) would stay open in a server
 * and hide disconnects from their peers; an inherited janitor pipe would
 * keep the janitor waiting. Async-signal-safe. */
static void close_fds_from_3(long max_fd)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0)
        return;
#endif
    for (long fd = 3; fd < max_fd; fd++)
        close((int)fd);
}

/*
 * The forked janitor: wait until every copy of the pipe's write end is
 * closed -- the test process exited, however it died -- then exec
 * `rm -rf -- DIR`. It waits as long as the test runs, by design: read()
 * returns only at end of file (nothing is ever written) or on a signal.
 */
__attribute__((noreturn)) static void janitor_main(int read_fd, char *const argv[], long max_fd)
{
    /* Out of the terminal's process group and deaf to the signals that end
     * a test run, so that it outlives the test process. */
    setpgid(0, 0);
    struct sigaction ignore;
    memset(&ignore, 0, sizeof(ignore));
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    static const int deaf_to[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t k = 0; k < sizeof(deaf_to) / sizeof(deaf_to[0]); k++)
        sigaction(deaf_to[k], &ignore, NULL);
    int null_fd = open("/dev/null", O_RDWR);
    if (null_fd < 0 || dup2(read_fd, STDIN_FILENO) < 0 || dup2(null_fd, STDOUT_FILENO) < 0 ||
        dup2(null_fd, STDERR_FILENO) < 0)
        _exit(127);
    close_fds_from_3(max_fd);
    char byte;
    for (;;) {
        ssize_t r = read(STDIN_FILENO, &byte, 1);
        if (r == 0 || (r < 0 && errno != EINTR))
            break;
    }
    execv("/bin/rm", argv);
    execv("/usr/bin/rm", argv);
    _exit(127);
}

/*
 * Fork the janitor of f->dir, so the directory goes even when the test
 * process dies without exit() (a crash, a Criterion timeout). fleet_stop()
 * removes the directory itself and kills the janitor. 0 with f->janitor and
 * f->janitor_fd set, or -1 with a message.
 */
static int start_janitor(fleet *f)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        fprintf(stderr, "fleet: pipe: %s\n", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        const char *argv[] = {"rm", "-rf", "--", f->dir, NULL};
        janitor_main(fds[0], (char *const *)argv, f->max_fd);
    }
    int fork_errno = errno;
    close(fds[0]);
    if (pid < 0) {
        fprintf(stderr, "fleet: fork: %s\n", strerror(fork_errno));
        close(fds[1]);
        return -1;
    }
    f->janitor = pid;
    f->janitor_fd = fds[1];
    return 0;
}

/*
 * The forked child: set up and exec the server. Only async-signal-safe
 * calls here (the test process may have threads).
 */
__attribute__((noreturn)) static void exec_server(const char *bin, char *const argv[],
                                                  char *const envp[], const char *err_path,
                                                  pid_t parent, long max_fd)
{
    /* Die with the thread that started us, even if the test crashes. If it
     * died between fork() and prctl(), the signal was missed: leave now. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(127);
    /* Its own process group, which its forks (replication, AOF rewrite)
     * join: faults hit the whole server, as they would a machine. */
    setpgid(0, 0);
    int null_fd = open("/dev/null", O_RDWR);
    int err_fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (null_fd < 0 || err_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0 ||
        dup2(null_fd, STDOUT_FILENO) < 0 || dup2(err_fd, STDERR_FILENO) < 0)
        _exit(127);
    close_fds_from_3(max_fd);
    /* Ignored signals and the signal mask survive exec; SIGPIPE is ignored
     * in the test process, for one. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int sig = 1; sig < NSIG; sig++)
        sigaction(sig, &dfl, NULL); /* fails harmlessly for KILL, STOP, ... */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (envp != NULL)
        execve(bin, argv, envp);
    else
        execv(bin, argv);
    _exit(127);
}

/* The environment of a server with a fake clock: ours, with libfaketime
 * and its shim preloaded and told where the spec is. NULL (with a
 * message) on failure; free_env() frees it. */
static char **faketime_env(const fleet_server *s)
{
    size_t n = 0;
    while (environ[n] != NULL)
        n++;
    char **env = calloc(n + 5, sizeof(*env));
    if (env == NULL)
        return NULL;
    size_t k = 0;
    for (size_t j = 0; j < n; j++)
        if (strncmp(environ[j], "LD_PRELOAD=", 11) != 0 && strncmp(environ[j], "FAKETIME", 8) != 0)
            env[k++] = environ[j];
    /* The first four entries past k are ours to free. */
    char *own[4] = {
        str_printf("LD_PRELOAD=%s:%s", FLEET_FAKETIME_SHIM, FLEET_LIBFAKETIME),
        str_printf("FAKETIME_TIMESTAMP_FILE=%s", s->faketime_path),
        str_printf("FAKETIME_NO_CACHE=1"),
        str_printf("FAKETIME_DONT_FAKE_MONOTONIC=1"),
    };
    bool ok = true;
    for (size_t j = 0; j < 4; j++) {
        env[k + j] = own[j];
        ok = ok && own[j] != NULL;
    }
    env[k + 4] = NULL;
    if (!ok) {
        for (size_t j = 0; j < 4; j++)
            free(own[j]);
        free(env);
        fprintf(stderr, "fleet: out of memory\n");
        return NULL;
    }
    return env;
}

static void free_env(char **env)
{
    if (env == NULL)
        return;
    size_t k = 0;
    while (env[k] != NULL && strncmp(env[k], "LD_PRELOAD=", 11) != 0)
        k++;
    for (; env[k] != NULL; k++)
        free(env[k]);
    free(env);
}

/*
 * Fork and exec server s, as a replica of 127.0.0.1:replica_of_port when
 * that is not 0. Does not wait. 0 with s->pid set, or -1 with a message.
 */
static int spawn_server(fleet *f, fleet_server *s, int replica_of_port)
{
    char port_arg[16];
    char master_port_arg[16];
    snprintf(port_arg, sizeof(port_arg), "%d", s->port);
    snprintf(master_port_arg, sizeof(master_port_arg), "%d", replica_of_port);
    const char **argv = calloc(40 + f->extra_count, sizeof(*argv));
    if (argv == NULL) {
        fprintf(stderr, "fleet: out of memory\n");
        return -1;
    }
    size_t k = 0;
    const char *bin = f->redis_bins[(size_t)(s - f->servers) % f->redis_bin_count];
    argv[k++] = bin;
    if (f->auth_conf != NULL)
        argv[k++] = f->auth_conf; /* redis reads a config file only as argv[1] */
    static const char *const fixed[] = {
        "--bind", "127.0.0.1", "--save", "", "--daemonize", "no", "--protected-mode", "no",
        /* Replicas sync at once instead of after 5 s. */
        "--repl-diskless-sync-delay", "0"};
    for (size_t j = 0; j < sizeof(fixed) / sizeof(fixed[0]); j++)
        argv[k++] = fixed[j];
    if (f->tls != FLEET_TLS_OFF) {
        static const char *const tls_fixed[] = {"--port", "0", "--tls-port"};
        for (size_t j = 0; j < 3; j++)
            argv[k++] = tls_fixed[j];
        argv[k++] = port_arg;
        argv[k++] = "--tls-cert-file";
        argv[k++] = f->tls_args[0];
        argv[k++] = "--tls-key-file";
        argv[k++] = f->tls_args[1];
        argv[k++] = "--tls-ca-cert-file";
        argv[k++] = f->tls_args[2];
        argv[k++] = "--tls-auth-clients";
        argv[k++] = f->tls == FLEET_TLS_CLIENT_CERT ? "yes" : "optional";
    } else {
        argv[k++] = "--port";
        argv[k++] = port_arg;
    }
    argv[k++] = "--dir";
    argv[k++] = s->dir;
    argv[k++] = "--logfile";
    argv[k++] = s->log_path;
    argv[k++] = "--appendonly";
    argv[k++] = s->appendonly ? "yes" : "no";
    if (s->appendonly) {
        argv[k++] = "--appendfsync";
        argv[k++] = "always";
    }
    if (replica_of_port != 0) {
        argv[k++] = "--replicaof";
        argv[k++] = "127.0.0.1";
        argv[k++] = master_port_arg;
    }
    if (s->socket_path != NULL) {
        argv[k++] = "--unixsocket";
        argv[k++] = s->socket_path;
        argv[k++] = "--unixsocketperm";
        argv[k++] = "700";
    }
    for (size_t j = 0; j < f->extra_count; j++)
        argv[k++] = f->extra_args[j];
    argv[k] = NULL;

    char **env = NULL;
    if (s->faketime_path != NULL && (env = faketime_env(s)) == NULL) {
        free(argv);
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0)
        exec_server(bin, (char *const *)argv, env, s->err_path, parent, f->max_fd);
    int fork_errno = errno;
    free(argv);
    free_env(env);
    if (pid < 0) {
        fprintf(stderr, "fleet: fork: %s\n", strerror(fork_errno));
        return -1;
    }
    setpgid(pid, pid); /* as the child does: whichever runs first wins */
    s->pid = pid;
    s->started_ms = tc_now_ms();
    s->paused = 0;
    return 0;
}

/* Wait until pid has exited and reap it, for at most timeout_ms. 0 when
 * reaped (or not our child any more), -1 when it is still there. */
static int reap(pid_t pid, int timeout_ms)
{
    double deadline = tc_now_ms() + (double)timeout_ms;
    for (;;) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno == ECHILD))
            return 0;
        if (r < 0 && errno != EINTR)
            return -1;
        if (tc_now_ms() >= deadline)
            return -1;
        tc_sleep_ms(1);
    }
}

/* Send sig to server s's process group (its forks included). */
static int signal_server(const fleet_server *s, int sig)
{
    if (kill(-s->pid, sig) == 0)
        return 0;
    return kill(s->pid, sig); /* in case the group could not be set up */
}

/* Reap the forks of a dead server: as a subreaper we inherit them. */
static void reap_orphans(pid_t group)
{
    double deadline = tc_now_ms() + (double)fleet_scaled_ms(REAP_TIMEOUT_MS);
    for (;;) {
        int status;
        pid_t r = waitpid(-group, &status, WNOHANG);
        if (r < 0 && errno != EINTR)
            return; /* ECHILD: none left that is ours */
        if (r == 0) {
            if (tc_now_ms() >= deadline)
                return;
            tc_sleep_ms(1);
        }
    }
}

/* SIGKILL and reap server s if it runs (a stopped process dies too). */
/* libfaketime keeps a shared memory segment and a semaphore named after
 * each process it runs in, removed at exit but not after a SIGKILL. */
static void remove_faketime_shm(const fleet_server *s)
{
    if (s->faketime_path == NULL || s->pid == 0)
        return;
    char path[64];
    snprintf(path, sizeof(path), "/dev/shm/faketime_shm_%ld", (long)s->pid);
    unlink(path);
    snprintf(path, sizeof(path), "/dev/shm/sem.faketime_sem_%ld", (long)s->pid);
    unlink(path);
}

static int kill_server(fleet_server *s, size_t i)
{
    if (s->pid == 0)
        return 0;
    int rc = 0;
    if (signal_server(s, SIGKILL) != 0 && errno != ESRCH)
        rc = -1;
    if (rc == 0 && reap(s->pid, (int)fleet_scaled_ms(REAP_TIMEOUT_MS)) != 0)
        rc = -1;
    if (rc == 0)
        reap_orphans(s->pid);
    if (rc != 0)
        fprintf(stderr, "fleet: server %zu (pid %ld) did not die on SIGKILL\n", i,
                (long)s->pid);
    else
        remove_faketime_shm(s);
    s->pid = 0;
    s->paused = 0;
    return rc;
}

/*
 * After SIGSTOP (event WUNTRACED) or SIGCONT (WCONTINUED): wait until
 * waitpid reports that change, for at most SIGNAL_TIMEOUT_MS. 0 when it
 * did; -1 when the server exited meanwhile (it is reaped, pid becomes 0)
 * or nothing was reported in time.
 */
static int await_stop_or_continue(fleet_server *s, int event)
{
    double deadline = tc_now_ms() + (double)fleet_scaled_ms(SIGNAL_TIMEOUT_MS);
    for (;;) {
        int status;
        pid_t r = waitpid(s->pid, &status, event | WNOHANG);
        if (r == s->pid) {
            if ((event == WUNTRACED && WIFSTOPPED(status)) ||
                (event == WCONTINUED && WIFCONTINUED(status)))
                return 0;
            if (WIFEXITED(status) || WIFSIGNALED(status)) {
                s->pid = 0;
                s->paused = 0;
                return -1;
            }
        } else if (r < 0 && errno != EINTR) {
            if (errno == ECHILD) {
                s->pid = 0;
                s->paused = 0;
            }
            return -1;
        }
        if (tc_now_ms() >= deadline)
            return -1;
        tc_sleep_ms(1);
    }
}

/* ---- Readiness ------------------------------------------------------------ */

/* A blocking, plain connection to server s: 127.0.0.1:port, or for a TLS
 * fleet its unix socket. NULL when out of memory. */
static redisContext *open_server(const fleet *f, const fleet_server *s, struct timeval tv)
{
    return f->tls != FLEET_TLS_OFF ? redisConnectUnixWithTimeout(s->socket_path, tv)
                                   : redisConnectWithTimeout("127.0.0.1", s->port, tv);
}

/* A blocking context to server s with connect and command timeouts of
 * timeout_ms, authenticated when the fleet has a password. NULL on
 * failure. */
static redisContext *connect_port(const fleet *f, const fleet_server *s, int timeout_ms)
{
    const char *password = f->password;
    struct timeval tv = timeval_ms(timeout_ms);
    redisContext *c = open_server(f, s, tv);
    if (c == NULL)
        return NULL;
    if (c->err != 0 || redisSetTimeout(c, tv) != REDIS_OK) {
        redisFree(c);
        return NULL;
    }
    if (password != NULL) {
        redisReply *r = redisCommand(c, "AUTH %s", password);
        int ok = r != NULL && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0;
        if (r != NULL)
            freeReplyObject(r);
        if (!ok) {
            redisFree(c);
            return NULL;
        }
    }
    return c;
}

/* process_id from an INFO reply, or -1. */
static long info_process_id(const char *info)
{
    const char *p = strstr(info, "process_id:");
    return p == NULL ? -1 : strtol(p + strlen("process_id:"), NULL, 10);
}

/* 1 when server s answers as itself: INFO gives our child's pid and PING
 * gives PONG (not LOADING). A server of another process that got the port
 * first does not count: our child will exit on its bind error instead. */
static int server_ready(const fleet *f, const fleet_server *s)
{
    redisContext *c = connect_port(f, s, (int)fleet_scaled_ms(PROBE_TIMEOUT_MS));
    if (c == NULL)
        return 0;
    int ready = 0;
    redisReply *r = redisCommand(c, "INFO server");
    if (r != NULL && r->type == REDIS_REPLY_STRING && info_process_id(r->str) == (long)s->pid) {
        freeReplyObject(r);
        r = redisCommand(c, "PING");
        ready = r != NULL && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0;
    }
    if (r != NULL)
        freeReplyObject(r);
    redisFree(c);
    return ready;
}

static void report_failure(const fleet_server *s, size_t i, const char *why, int status)
{
    if (status < 0)
        fprintf(stderr, "fleet: server %zu (port %d) %s\n", i, s->port, why);
    else if (WIFEXITED(status))
        fprintf(stderr, "fleet: server %zu (port %d) %s: exited with status %d\n", i, s->port,
                why, WEXITSTATUS(status));
    else
        fprintf(stderr, "fleet: server %zu (port %d) %s: killed by signal %d\n", i, s->port,
                why, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    print_log_tail(s->err_path);
    print_log_tail(s->log_path);
}

/* One server of a launch batch. */
typedef struct launch {
    size_t index;
    int tries; /* launches so far */
    int ready;
} launch;

/*
 * Launch the servers of batch (none of them running) at once, then wait
 * until each answers PING, within FLEET_START_TIMEOUT_MS in all. A server
 * that exits early is launched again, up to START_TRIES times, on a new
 * port when move_port is set. 0 when all answer; -1 with a message and the
 * failed server's logs on stderr, the other servers of the batch possibly
 * still running (the caller kills them).
 */
static int launch_and_wait(fleet *f, launch *batch, size_t count, int replica_of_port,
                           int move_port)
{
    for (size_t b = 0; b < count; b++) {
        if (spawn_server(f, &f->servers[batch[b].index], replica_of_port) != 0)
            return -1;
        batch[b].tries = 1;
        batch[b].ready = 0;
    }
    double deadline = tc_now_ms() + (double)fleet_scaled_ms(FLEET_START_TIMEOUT_MS);
    size_t pending = count;
    while (pending > 0) {
        for (size_t b = 0; b < count; b++) {
            if (batch[b].ready)
                continue;
            size_t i = batch[b].index;
            fleet_server *s = &f->servers[i];
            int status = -1;
            pid_t r = waitpid(s->pid, &status, WNOHANG);
            if (r == s->pid || (r < 0 && errno == ECHILD)) {
                s->pid = 0; /* exited early, e.g. on a taken port */
                if (batch[b].tries >= START_TRIES) {
                    report_failure(s, i, "keeps exiting at startup", status);
                    return -1;
                }
                if ((move_port && move_to_new_port(s) != 0) ||
                    spawn_server(f, s, replica_of_port) != 0)
                    return -1;
                batch[b].tries++;
                continue;
            }
            if (server_ready(f, s)) {
                batch[b].ready = 1;
                pending--;
            }
        }
        if (pending == 0)
            break;
        if (tc_now_ms() >= deadline) {
            for (size_t b = 0; b < count; b++) {
                if (!batch[b].ready)
                    report_failure(&f->servers[batch[b].index], batch[b].index,
                                   "did not answer PING in time", -1);
            }
            return -1;
        }
        tc_sleep_ms(POLL_MS);
    }
    return 0;
}

/* Kill server i if it runs, then start it again as a master
 * (replica_of_port 0) or a replica, and wait until it answers. */
static int relaunch(fleet *f, size_t i, int replica_of_port)
{
    fleet_server *s = &f->servers[i];
    if (kill_server(s, i) != 0)
        return -1;
    if (!s->appendonly)
        forget_snapshot(s);
    launch one = {.index = i};
    if (launch_and_wait(f, &one, 1, replica_of_port, 0) != 0) {
        kill_server(s, i);
        return -1;
    }
    return 0;
}

/* ---- Lifecycle ------------------------------------------------------------ */

static int copy_options(fleet *f, const fleet_options *opts)
{
    f->appendonly = opts->appendonly != 0;
    f->tls = opts->tls;
    /* A TLS fleet's own connections go through its unix sockets. */
    f->unix_socket = opts->unix_socket != 0 || f->tls != FLEET_TLS_OFF;
    if (opts->requirepass != NULL && *opts->requirepass != '\0' &&
        (f->password = strdup(opts->requirepass)) == NULL)
        return -1;
    size_t count = 0;
    while (opts->extra_args != NULL && opts->extra_args[count] != NULL) {
        if (++count > MAX_EXTRA_ARGS) {
            fprintf(stderr, "fleet: more than %d extra_args\n", MAX_EXTRA_ARGS);
            return -1;
        }
    }
    if (count == 0)
        return 0;
    if ((f->extra_args = calloc(count, sizeof(char *))) == NULL)
        return -1;
    for (; f->extra_count < count; f->extra_count++) {
        if ((f->extra_args[f->extra_count] = strdup(opts->extra_args[f->extra_count])) == NULL)
            return -1;
    }
    return 0;
}

/* Make DIR/tls and the certificates in it (fleet_tls.h). */
static int prepare_tls(fleet *f)
{
    const char *server = f->tls == FLEET_TLS_EXPIRED ? "expired" : "server";
    if ((f->tls_dir = str_printf("%s/tls", f->dir)) == NULL ||
        (f->tls_args[0] = str_printf("%s/%s.crt", f->tls_dir, server)) == NULL ||
        (f->tls_args[1] = str_printf("%s/%s.key", f->tls_dir, server)) == NULL ||
        (f->tls_args[2] = str_printf("%s/ca.crt", f->tls_dir)) == NULL)
        return -1;
    if (mkdir(f->tls_dir, 0700) != 0) {
        fprintf(stderr, "fleet: mkdir %s: %s\n", f->tls_dir, strerror(errno));
        return -1;
    }
    return fleet_tls_make_certs(f->tls_dir);
}

/* Replace s's fake clock spec, whole: libfaketime may read it any time. */
static int write_faketime(const fleet_server *s, const char *spec)
{
    char *tmp = str_printf("%s.new", s->faketime_path);
    FILE *out = tmp != NULL ? fopen(tmp, "w") : NULL;
    bool ok = out != NULL && fprintf(out, "%s\n", spec) >= 0;
    if (out != NULL && fclose(out) != 0)
        ok = false;
    if (ok && rename(tmp, s->faketime_path) != 0)
        ok = false;
    if (!ok)
        fprintf(stderr, "fleet: cannot write %s: %s\n", s->faketime_path, strerror(errno));
    free(tmp);
    return ok ? 0 : -1;
}

int fleet_set_faketime(fleet *f, size_t i, const char *spec)
{
    fleet_server *s = server_for(f, i, "set the fake clock of");
    if (s == NULL || spec == NULL)
        return -1;
    if (s->faketime_path == NULL) {
        fprintf(stderr, "fleet: server %zu runs on the real clock (fleet_options.faketime)\n", i);
        return -1;
    }
    return write_faketime(s, spec);
}

int fleet_set_clock_rate(fleet *f, size_t i, double rate)
{
    fleet_server *s = server_for(f, i, "set the clock rate of");
    if (s == NULL || s->pid == 0)
        return -1;
    /* The offset takes back what the rate adds for the time already run. */
    double run_s = (tc_now_ms() - s->started_ms) / 1000.0;
    char spec[64];
    snprintf(spec, sizeof(spec), "%+.3f x%g", -(rate - 1.0) * run_s, rate);
    return fleet_set_faketime(f, i, spec);
}

/* Create DIR/i with its log paths and reserve a port for server i. */
static int prepare_server(fleet *f, size_t i)
{
    fleet_server *s = &f->servers[i];
    if ((s->dir = str_printf("%s/%zu", f->dir, i)) == NULL ||
        (s->log_path = str_printf("%s/redis.log", s->dir)) == NULL ||
        (s->err_path = str_printf("%s/stderr.log", s->dir)) == NULL ||
        (f->unix_socket && (s->socket_path = str_printf("%s/redis.sock", s->dir)) == NULL))
        return -1;
    if (mkdir(s->dir, 0700) != 0) {
        fprintf(stderr, "fleet: mkdir %s: %s\n", s->dir, strerror(errno));
        return -1;
    }
    s->port_fd = reserve_port(&s->port);
    return s->port_fd < 0 ? -1 : 0;
}

fleet *fleet_start(size_t n, const fleet_options *opts)
{
    static const fleet_options defaults = {0};
    if (opts == NULL)
        opts = &defaults;
    if (n == 0 || n > FLEET_MAX_SERVERS) {
        fprintf(stderr, "fleet: cannot start %zu servers (1..%d)\n", n, FLEET_MAX_SERVERS);
        return NULL;
    }
    signal(SIGPIPE, SIG_IGN); /* see fleet.h */
    /* Forks of a killed server are then reparented to us, not init, and
     * kill_server() reaps them. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);

    fleet *f = calloc(1, sizeof(*f));
    if (f == NULL || (f->servers = calloc(n, sizeof(fleet_server))) == NULL) {
        fprintf(stderr, "fleet: out of memory\n");
        free(f);
        return NULL;
    }
    f->owner = getpid();
    f->n = n;
    f->janitor_fd = -1;
    for (size_t i = 0; i < n; i++)
        f->servers[i].port_fd = -1;
    long max_fd = sysconf(_SC_OPEN_MAX);
    f->max_fd = max_fd > 0 && max_fd < FALLBACK_MAX_FD ? max_fd : FALLBACK_MAX_FD;
    register_live(f);

    launch batch[FLEET_MAX_SERVERS];
    if (find_redis_servers(f) != 0)
        goto fail;
    if (copy_options(f, opts) != 0 || (f->dir = make_fleet_dir(f->appendonly)) == NULL ||
        start_janitor(f) != 0)
        goto fail;
    if (f->password != NULL && (f->auth_conf = write_auth_conf(f->dir, f->password)) == NULL)
        goto fail;
    if (f->tls != FLEET_TLS_OFF && prepare_tls(f) != 0)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        if (prepare_server(f, i) != 0)
            goto fail;
        if (opts->faketime != NULL && opts->faketime[i] != NULL) {
            fleet_server *s = &f->servers[i];
            if ((s->faketime_path = str_printf("%s/faketime", s->dir)) == NULL ||
                write_faketime(s, opts->faketime[i]) != 0)
                goto fail;
        }
        f->servers[i].appendonly = f->appendonly;
        batch[i].index = i;
    }
    if (launch_and_wait(f, batch, n, 0, 1) != 0)
        goto fail;
    return f;

fail:
    fprintf(stderr, "fleet: could not start %zu redis servers\n", n);
    fleet_stop(f);
    return NULL;
}

void fleet_stop(fleet *f)
{
    if (f == NULL)
        return;
    unregister_live(f);
    int ours = f->owner == getpid();
    for (size_t i = 0; i < f->n; i++) {
        fleet_server *s = &f->servers[i];
        if (ours)
            kill_server(s, i);
        if (s->port_fd >= 0)
            close(s->port_fd);
        free(s->dir);
        free(s->log_path);
        free(s->err_path);
        free(s->socket_path);
        free(s->faketime_path);
    }
    if (ours && f->dir != NULL)
        remove_tree(f->dir);
    if (ours && f->janitor != 0) {
        kill(f->janitor, SIGKILL); /* before it sees end of file: nothing to do */
        if (reap(f->janitor, (int)fleet_scaled_ms(REAP_TIMEOUT_MS)) != 0)
            fprintf(stderr, "fleet: the janitor (pid %ld) did not die\n", (long)f->janitor);
    }
    if (f->janitor_fd >= 0)
        close(f->janitor_fd);
    for (size_t j = 0; j < f->extra_count; j++)
        free(f->extra_args[j]);
    free(f->extra_args);
    free(f->servers);
    free(f->dir);
    free_servers(f->redis_bins, f->redis_bin_count);
    free(f->auth_conf);
    free(f->tls_dir);
    for (size_t j = 0; j < 3; j++)
        free(f->tls_args[j]);
    free_secret(f->password);
    free(f);
}

size_t fleet_size(const fleet *f)
{
    return f == NULL ? 0 : f->n;
}

int fleet_port(const fleet *f, size_t i)
{
    return valid_index(f, i) ? f->servers[i].port : -1;
}

pid_t fleet_pid(const fleet *f, size_t i)
{
    return valid_index(f, i) ? f->servers[i].pid : 0;
}

int fleet_set_appendonly(fleet *f, size_t i, int on)
{
    if (!valid_index(f, i))
        return -1;
    f->servers[i].appendonly = on != 0;
    return 0;
}

int fleet_is_paused(const fleet *f, size_t i)
{
    return valid_index(f, i) ? f->servers[i].paused : 0;
}

const char *fleet_dir(const fleet *f)
{
    return f == NULL ? NULL : f->dir;
}

const char *fleet_tls_dir(const fleet *f)
{
    return f == NULL ? NULL : f->tls_dir;
}

const char *fleet_unix_socket(const fleet *f, size_t i)
{
    return valid_index(f, i) ? f->servers[i].socket_path : NULL;
}

/* ---- Faults --------------------------------------------------------------- */

int fleet_kill(fleet *f, size_t i)
{
    fleet_server *s = server_for(f, i, "kill");
    if (s == NULL)
        return -1;
    if (s->pid == 0) {
        fprintf(stderr, "fleet: kill: server %zu is not running\n", i);
        return -1;
    }
    return kill_server(s, i);
}

int fleet_restart(fleet *f, size_t i)
{
    return server_for(f, i, "restart") == NULL ? -1 : relaunch(f, i, 0);
}

int fleet_start_replica(fleet *f, size_t i, size_t of)
{
    if (server_for(f, i, "start_replica") == NULL || server_for(f, of, "start_replica") == NULL)
        return -1;
    if (i == of) {
        fprintf(stderr, "fleet: start_replica: server %zu cannot replicate itself\n", i);
        return -1;
    }
    return relaunch(f, i, f->servers[of].port);
}

int fleet_pause(fleet *f, size_t i)
{
    fleet_server *s = server_for(f, i, "pause");
    if (s == NULL)
        return -1;
    if (s->paused)
        return 0;
    if (s->pid == 0 || signal_server(s, SIGSTOP) != 0 ||
        await_stop_or_continue(s, WUNTRACED) != 0) {
        fprintf(stderr, "fleet: pause: server %zu is not running\n", i);
        return -1;
    }
    s->paused = 1;
    return 0;
}

int fleet_resume(fleet *f, size_t i)
{
    fleet_server *s = server_for(f, i, "resume");
    if (s == NULL)
        return -1;
    if (!s->paused)
        return 0;
    if (signal_server(s, SIGCONT) != 0 || await_stop_or_continue(s, WCONTINUED) != 0) {
        fprintf(stderr, "fleet: resume: server %zu did not resume\n", i);
        return -1;
    }
    s->paused = 0;
    return 0;
}

/* ---- Connections ---------------------------------------------------------- */

redisContext *fleet_connect_timeout(const fleet *f, size_t i, int timeout_ms)
{
    if (!valid_index(f, i) || timeout_ms <= 0)
        return NULL;
    return connect_port(f, &f->servers[i], timeout_ms);
}

redisContext *fleet_connect(const fleet *f, size_t i)
{
    return fleet_connect_timeout(f, i, (int)fleet_scaled_ms(CONNECT_TIMEOUT_MS));
}

/* Whether a failed call on c ran out of time. hiredis 0.14 reports a read
 * timeout as an I/O error with errno EAGAIN and a connect timeout with
 * ETIMEDOUT; 1.x may report REDIS_ERR_TIMEOUT. */
static int timed_out(const redisContext *c, int saved_errno)
{
#ifdef REDIS_ERR_TIMEOUT
    if (c->err == REDIS_ERR_TIMEOUT)
        return 1;
#endif
    return c->err == REDIS_ERR_IO &&
           (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK || saved_errno == ETIMEDOUT);
}

/* Send one command on c and classify its outcome; expected: the status
 * reply that means success. */
static int ping_step(redisContext *c, const char *expected, const char *format,
                     const char *arg)
{
    errno = 0;
    redisReply *r = arg == NULL ? redisCommand(c, format) : redisCommand(c, format, arg);
    int saved_errno = errno;
    if (r == NULL)
        return timed_out(c, saved_errno) ? FLEET_PING_TIMEOUT : FLEET_PING_ERROR;
    int ok = r->type == REDIS_REPLY_STATUS && strcmp(r->str, expected) == 0;
    freeReplyObject(r);
    return ok ? FLEET_PING_OK : FLEET_PING_ERROR;
}

int fleet_ping(const fleet *f, size_t i, int timeout_ms)
{
    if (!valid_index(f, i) || timeout_ms <= 0)
        return FLEET_PING_ERROR;
    int port = f->servers[i].port;
    struct timeval tv = timeval_ms(timeout_ms);
    errno = 0;
    redisContext *c = open_server(f, &f->servers[i], tv);
    int saved_errno = errno;
    if (c == NULL)
        return FLEET_PING_ERROR;
    int result = FLEET_PING_ERROR;
    /* A TLS fleet's server that is down has no socket to connect to. */
    int refused = f->tls != FLEET_TLS_OFF ? f->servers[i].pid == 0 : port_refuses(port);
    if (c->err != 0) {
        result = timed_out(c, saved_errno) ? FLEET_PING_TIMEOUT
                 : refused                 ? FLEET_PING_REFUSED
                                           : FLEET_PING_ERROR;
    } else if (redisSetTimeout(c, tv) == REDIS_OK) {
        result = f->password == NULL ? FLEET_PING_OK
                                     : ping_step(c, "OK", "AUTH %s", f->password);
        if (result == FLEET_PING_OK)
            result = ping_step(c, "PONG", "PING", NULL);
    }
    redisFree(c);
    return result;
}

/* ---- Data helpers ----------------------------------------------------------- */

redisReply *fleet_command(const fleet *f, size_t i, const char *format, ...)
{
    if (format == NULL)
        return NULL;
    redisContext *c = fleet_connect(f, i);
    if (c == NULL)
        return NULL;
    va_list ap;
    va_start(ap, format);
    redisReply *r = redisvCommand(c, format, ap);
    va_end(ap);
    redisFree(c);
    return r;
}

int fleet_get(const fleet *f, size_t i, const void *key, size_t keylen, char *buf,
              size_t buflen, size_t *len_out)
{
    redisReply *r = fleet_command(f, i, "GET %b", key, keylen);
    if (r == NULL)
        return -1;
    int rc = -1;
    if (r->type == REDIS_REPLY_NIL) {
        rc = 0;
    } else if (r->type == REDIS_REPLY_STRING) {
        size_t len = (size_t)r->len;
        if (buf != NULL && buflen > 0)
            memcpy(buf, r->str, len < buflen ? len : buflen);
        if (len_out != NULL)
            *len_out = len;
        rc = 1;
    }
    freeReplyObject(r);
    return rc;
}

long long fleet_pttl(const fleet *f, size_t i, const void *key, size_t keylen)
{
    redisReply *r = fleet_command(f, i, "PTTL %b", key, keylen);
    long long ttl = r != NULL && r->type == REDIS_REPLY_INTEGER ? r->integer : -3;
    if (r != NULL)
        freeReplyObject(r);
    return ttl;
}

int fleet_set(const fleet *f, size_t i, const void *key, size_t keylen, const void *val,
              size_t vallen, long long px_ms)
{
    redisReply *r = px_ms > 0
                        ? fleet_command(f, i, "SET %b %b PX %lld", key, keylen, val, vallen, px_ms)
                        : fleet_command(f, i, "SET %b %b", key, keylen, val, vallen);
    int ok = r != NULL && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0;
    if (r != NULL)
        freeReplyObject(r);
    return ok ? 0 : -1;
}

int fleet_del(const fleet *f, size_t i, const void *key, size_t keylen)
{
    redisReply *r = fleet_command(f, i, "DEL %b", key, keylen);
    int rc = r != NULL && r->type == REDIS_REPLY_INTEGER ? (int)r->integer : -1;
    if (r != NULL)
        freeReplyObject(r);
    return rc;
}

int fleet_run_id(const fleet *f, size_t i, char run_id[41])
{
    run_id[0] = '\0';
    redisReply *r = fleet_command(f, i, "INFO server");
    const char *p = r != NULL && r->type == REDIS_REPLY_STRING ? strstr(r->str, "run_id:") : NULL;
    if (p != NULL && strspn(p + 7, "0123456789abcdef") >= 40) {
        memcpy(run_id, p + 7, 40);
        run_id[40] = '\0';
    }
    if (r != NULL)
        freeReplyObject(r);
    return run_id[0] != '\0' ? 0 : -1;
}

long long fleet_info_number(const fleet *f, size_t i, const char *section, const char *field)
{
    redisReply *r = fleet_command(f, i, "INFO %s", section);
    const char *at = r != NULL && r->type == REDIS_REPLY_STRING ? strstr(r->str, field) : NULL;
    long long n = at != NULL ? strtoll(at + strlen(field), NULL, 10) : -1;
    if (r != NULL)
        freeReplyObject(r);
    return n;
}

long long fleet_fencing_counter(const fleet *f, size_t i)
{
    char run[41];
    if (fleet_run_id(f, i, run) != 0)
        return -1;
    redisReply *r = fleet_command(f, i, "HMGET %s n run", REDLOCK_FENCING_KEY);
    long long n = -1;
    if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[0]->type == REDIS_REPLY_STRING && r->element[1]->type == REDIS_REPLY_STRING &&
        strcmp(r->element[1]->str, run) == 0)
        n = atoll(r->element[0]->str);
    if (r != NULL)
        freeReplyObject(r);
    return n;
}

int fleet_init_fencing(const fleet *f)
{
    for (size_t i = 0; i < fleet_size(f); i++) {
        char run[41];
        if (fleet_pid(f, i) == 0)
            continue;
        if (fleet_run_id(f, i, run) != 0)
            return -1;
        redisReply *r = fleet_command(f, i, "HSET %s n 0 run %s", REDLOCK_FENCING_KEY, run);
        bool ok = r != NULL && r->type == REDIS_REPLY_INTEGER;
        if (r != NULL)
            freeReplyObject(r);
        if (!ok)
            return -1;
    }
    return 0;
}

size_t fleet_count_value(const fleet *f, const void *key, size_t keylen, const void *val,
                         size_t vallen)
{
    if (f == NULL)
        return 0;
    char *buf = malloc(vallen + 1); /* + 1: a longer value must not match */
    if (buf == NULL)
        return 0;
    size_t count = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (f->servers[i].pid == 0 || f->servers[i].paused)
            continue;
        size_t len = 0;
        if (fleet_get(f, i, key, keylen, buf, vallen + 1, &len) == 1 && len == vallen &&
            memcmp(buf, val, vallen) == 0)
            count++;
    }
    free(buf);
    return count;
}

/* ---- Library configuration ---------------------------------------------- */

/* TLS for every node of cfg, trusting the fleet's CA, with its client
 * certificate. */
static int config_tls(const fleet *f, redlock_config *cfg)
{
    char *ca = str_printf("%s/ca.crt", f->tls_dir);
    char *cert = str_printf("%s/client.crt", f->tls_dir);
    char *key = str_printf("%s/client.key", f->tls_dir);
    int rc = -1;
    if (ca != NULL && cert != NULL && key != NULL) {
        const redlock_tls_options tls = {
            .enabled = 1, .ca_file = ca, .cert_file = cert, .key_file = key};
        rc = redlock_config_set_tls(cfg, &tls) == REDLOCK_OK ? 0 : -1;
    }
    free(ca);
    free(cert);
    free(key);
    return rc;
}

redlock_config *fleet_config(const fleet *f)
{
    if (f == NULL)
        return NULL;
    /* The timeouts bound how long the client waits for its own progress
     * too, so they stretch with the time scale; the pacing does not. */
    static const struct {
        int64_t value;
        redlock_setting key;
        bool scaled;
    } settings[] = {
        {200, REDLOCK_CONNECT_TIMEOUT_MS, true}, {100, REDLOCK_COMMAND_TIMEOUT_MS, true},
        {20, REDLOCK_RECONNECT_MIN_MS, false},   {200, REDLOCK_RECONNECT_MAX_MS, false},
        {20, REDLOCK_RETRY_DELAY_MS, false},     {20, REDLOCK_RETRY_JITTER_MS, false},
    };
    redlock_config *cfg = NULL;
    if (redlock_config_new(&cfg) != REDLOCK_OK)
        goto fail;
    for (size_t k = 0; k < sizeof(settings) / sizeof(settings[0]); k++) {
        int64_t value = settings[k].scaled ? fleet_scaled_ms(settings[k].value) : settings[k].value;
        if (redlock_config_set(cfg, settings[k].key, value) != REDLOCK_OK)
            goto fail;
    }
    /* The fleet's masters were started moments ago, which a client cannot
     * tell from a restart that lost its keys: declared durable, they count
     * at once, as every test but the restart tests (test_restart.c, which
     * set it back to 0) expects. */
    if (redlock_config_set(cfg, REDLOCK_DURABLE, 1) != REDLOCK_OK)
        goto fail;
    for (size_t i = 0; i < f->n; i++) {
        size_t index;
        if (redlock_config_add_tcp_node(cfg, "127.0.0.1", f->servers[i].port, &index) !=
                REDLOCK_OK ||
            (f->password != NULL &&
             redlock_config_node_set_auth(cfg, index, NULL, f->password) != REDLOCK_OK))
            goto fail;
    }
    if (f->tls != FLEET_TLS_OFF && config_tls(f, cfg) != 0)
        goto fail;
    return cfg;

fail:
    fprintf(stderr, "fleet: could not build a redlock_config\n");
    redlock_config_free(cfg);
    return NULL;
}

redlock_acquire_options fleet_acquire_options(int64_t ttl_ms, int64_t retry_count)
{
    redlock_acquire_options o;
    redlock_acquire_options_init(&o);
    o.ttl_ms = ttl_ms;
    o.retry_count = retry_count;
    return o;
}

unsigned fleet_result_count(const redlock_result *r, int outcome)
{
    unsigned n = 0;
    for (unsigned i = 0; i < r->master_count; i++)
        n += r->masters[i].outcome == outcome;
    return n;
}
