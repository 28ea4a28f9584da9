/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * redlock-failover: proves that the lock stays exclusive and live while
 * masters die, stall and come back.
 *
 * It starts five local masters (or uses the ones a --config names), runs
 * contending clients — library processes with several threads each, and
 * `redlock run` loops — all on one resource, for a bounded time, while a
 * seeded injector kills and stops masters and kills clients holding the
 * lock. Every client logs the start and end of its critical sections; the
 * checker then replays the log and fails the run on any overlap.
 *
 *   redlock-failover [--seconds N] [--seed S] [--unsafe] [--empty-restarts]
 *                    [--fast-clocks] [--aof] [--no-fencing] [--slots K] [--json]
 *                      --unsafe: masters without persistence, restarted at
 *                      once, falsely declared durable (the rule for masters
 *                      restarted empty off): overlaps are expected
 *                      --empty-restarts: masters without persistence, killed
 *                      and restarted at once (no delay), not declared
 *                      durable: the rule must keep the lock exclusive (with
 *                      --unsafe: the same restarts, the rule off)
 *                      --fast-clocks: masters 0 and 1 on wall clocks three
 *                      times fast (their keys lapse early): the clients'
 *                      clock check must keep the lock exclusive
 *                      --aof: all five masters on AOF (appendfsync always),
 *                      restarted at once, faults not waiting for the fencing
 *                      counters, which start not in use: fenced locks must
 *                      heal by themselves
 *                      --no-fencing: the clients lock without tokens (to
 *                      compare with a fenced run)
 *                      --slots K: the clients take one of K slots (a
 *                      counting semaphore); the checker allows K holders
 *                      at once, not one more
 *   redlock-failover --config FILE [--seconds N] [--log-dir DIR]
 *                      external masters, no faults of its own: the compose
 *                      drill (faults from outside) or a drill by hand
 *   redlock-failover --check [--unsafe] [--json] LOG...
 *   redlock-failover --mark LOG EVENT [ARG...]     (see offline.h)
 */
#include "checker.h"
#include "failover_log.h"
#include "injector.h"
#include "offline.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MASTERS 5
#define RESOURCE "failover-resource"
#define LIB_PROCESSES 2
#define LIB_THREADS 3
#define LIB_TTL_MS 1000
#define RUNNERS 3
#define RUN_TTL_MS 1500
#define MAX_CLIENTS (LIB_PROCESSES + RUNNERS)
#define TICK_MS 10
#define STOP_GRACE_MS 10000
/* Every client's max_ttl_ms: the longest TTL they ask. A master the clients
 * do not take for durable is left out that long (and its drift allowance)
 * after it restarts. */
#define MAX_TTL_MS (RUN_TTL_MS > LIB_TTL_MS ? RUN_TTL_MS : LIB_TTL_MS)
#define DRIFT_ALLOWANCE_MS(ttl) ((ttl) / 100 + 2) /* the default drift_factor, 0.01 */
/* A client counts a master from its first connection to it only once the
 * master's uptime (whole seconds, less one: master/restart.c) covers
 * max_ttl_ms: fresh masters are waited out that long before the clients
 * start. */
#define FRESH_WAIT_MS (MAX_TTL_MS + DRIFT_ALLOWANCE_MS(MAX_TTL_MS) + 2500)
/* How long after a restart the clients leave a master out, as the injector
 * reckons it: max_ttl_ms and its drift allowance from their reconnection
 * (reconnect_max_ms below), and a margin for a slow machine. */
#define EXCLUSION_MS (MAX_TTL_MS + DRIFT_ALLOWANCE_MS(MAX_TTL_MS) + 300 + 500)

typedef enum client_kind { CLIENT_LIB, CLIENT_RUN } client_kind;

typedef struct client {
    client_kind kind;
    pid_t pid; /* 0: not running */
} client;

typedef struct options {
    long seconds;      /* 0: until interrupted (external mode only) */
    uint64_t seed;
    bool seed_given;
    bool unsafe;
    bool empty_restarts; /* restarted at once, no delay, without persistence */
    bool fast_clocks;
    bool aof;          /* every master on AOF, restarted at once */
    bool no_fencing;
    bool json;
    int slots;          /* --slots K: the clients hold one of K slots; 0: the lock */
    const char *config; /* external masters */
    const char *log;    /* where to keep the event log; NULL: temporary */
    const char *log_dir; /* external mode: a new log of its own in DIR */
} options;

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: redlock-failover [--seconds N] [--seed S] [--unsafe] [--empty-restarts]\n"
            "                        [--fast-clocks] [--aof] [--no-fencing] [--slots K] [--json]\n"
            "                        [--log FILE]\n"
            "       redlock-failover --config FILE [--seconds N] [--log FILE | --log-dir DIR]\n"
            "       redlock-failover --check [--unsafe] [--json] LOG...\n"
            "       redlock-failover --mark LOG EVENT [ARG...]\n");
}

static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){.seconds = 60};
    for (int i = 1; i < argc && argv[i] != NULL; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--seconds") == 0 && v) {
            o->seconds = strtol(v, NULL, 10), i++;
        } else if (strcmp(a, "--seed") == 0 && v) {
            o->seed = strtoull(v, NULL, 10), o->seed_given = true, i++;
        } else if (strcmp(a, "--config") == 0 && v) {
            o->config = v, i++;
        } else if (strcmp(a, "--log") == 0 && v) {
            o->log = v, i++;
        } else if (strcmp(a, "--log-dir") == 0 && v) {
            o->log_dir = v, i++;
        } else if (strcmp(a, "--unsafe") == 0) {
            o->unsafe = true;
        } else if (strcmp(a, "--empty-restarts") == 0) {
            o->empty_restarts = true;
        } else if (strcmp(a, "--fast-clocks") == 0) {
            o->fast_clocks = true;
        } else if (strcmp(a, "--aof") == 0) {
            o->aof = true;
        } else if (strcmp(a, "--no-fencing") == 0) {
            o->no_fencing = true;
        } else if (strcmp(a, "--slots") == 0 && v) {
            o->slots = (int)strtol(v, NULL, 10), i++;
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else {
            usage();
            return -1;
        }
    }
    if (o->seconds < 0 || (o->seconds == 0 && o->config == NULL) || o->slots < 0 ||
        o->slots > REDLOCK_MAX_SLOTS ||
        (o->aof && (o->unsafe || o->empty_restarts)) ||
        (o->log_dir != NULL && (o->config == NULL || o->log != NULL))) {
        usage();
        return -1;
    }
    return 0;
}

/* ---- Clients ---------------------------------------------------------------- */

typedef struct world {
    const char *config;
    const char *log_path;
    bool fencing;
    const char *slots; /* --slots K's K, or NULL: the lock */
    int log;
    client clients[MAX_CLIENTS];
} world;

static pid_t spawn(char *const *argv, bool quiet)
{
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);
        /* A run that finds the lock held says so on stderr, many times a
         * second: its exit status is what the log keeps. */
        int devnull = quiet ? open("/dev/null", O_WRONLY) : -1;
        if (devnull >= 0)
            dup2(devnull, STDERR_FILENO);
        execv(argv[0], argv);
        fprintf(stderr, "failover: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    return pid;
}

static void start_client(world *w, client *c)
{
    char threads[16];
    char ttl[16];
    char run_ttl[16];
    snprintf(threads, sizeof(threads), "%d", LIB_THREADS);
    snprintf(ttl, sizeof(ttl), "%d", LIB_TTL_MS);
    snprintf(run_ttl, sizeof(run_ttl), "%dms", RUN_TTL_MS); /* a bare TIME is seconds */
    if (c->kind == CLIENT_LIB) {
        char *argv[] = {FAILOVER_WORKER, "lib",        "--config",   (char *)w->config,
                        "--log",         (char *)w->log_path,        "--threads",
                        threads,         "--ttl",      ttl,          "--resource",
                        RESOURCE,        "--work-max", "150",        "--fencing",
                        w->fencing ? "1" : "0",      "--slots",
                        (char *)(w->slots ? w->slots : "0"),         NULL};
        c->pid = spawn(argv, false);
    } else {
        /* A command that outlives the TTL: the run must keep extending. */
        char *argv[] = {REDLOCK_TOOL,    "-c",         (char *)w->config, "run",
                        "--ttl",         run_ttl,      "--wait",          "3s",
                        "--slots",       (char *)(w->slots ? w->slots : "1"),
                        "--no-fencing",  RESOURCE,     "--",              FAILOVER_WORKER,
                        "record",        "--log",      (char *)w->log_path,
                        "--work-min",    "50",         "--work-max",      "1500",
                        NULL};
        if (w->fencing) /* fenced is the default: drop --no-fencing */
            memmove(&argv[10], &argv[11], sizeof(argv) - 11 * sizeof(argv[0]));
        c->pid = spawn(argv, true);
    }
}

static void client_ended(world *w, client *c, int status, bool restart)
{
    /* Whatever it held, it holds no more (a run's command may have been
     * SIGKILLed before it could log its end). */
    flog_write(w->log, "X %lld %ld", (long long)tc_now_ns(), (long)c->pid);
    /* While running (not when stopping them), a run that did not get the
     * lock, or lost it, says so with its status. */
    if (restart && c->kind == CLIENT_RUN && WIFEXITED(status) && WEXITSTATUS(status) != 0)
        flog_write(w->log, "N %lld %ld run-exit-%d", (long long)tc_now_ns(), (long)c->pid,
                   WEXITSTATUS(status));
    c->pid = 0;
    if (restart)
        start_client(w, c);
}

/* Reap clients that ended and start new ones in their place (unless
 * stopping). Then reap other children that ended (a killed run's command,
 * adopted by us as the fleet makes us a subreaper) — but never the
 * fleet's servers, which the fleet reaps itself. */
static void reap(world *w, fleet *f, bool restart)
{
    for (size_t i = 0; i < MAX_CLIENTS; i++) {
        client *c = &w->clients[i];
        int status;
        if (c->pid != 0 && waitpid(c->pid, &status, WNOHANG) == c->pid)
            client_ended(w, c, status, restart);
    }
    for (;;) {
        siginfo_t info;
        memset(&info, 0, sizeof(info));
        if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0)
            return;
        for (size_t i = 0; f != NULL && i < fleet_size(f); i++)
            if (fleet_pid(f, i) == info.si_pid)
                return; /* the fleet's own: leave it (and the rest) for later */
        int status;
        waitpid(info.si_pid, &status, 0);
    }
}

static size_t running_clients(const world *w)
{
    size_t n = 0;
    for (size_t i = 0; i < MAX_CLIENTS; i++)
        n += w->clients[i].pid != 0;
    return n;
}

/* SIGTERM every client (a run forwards it to its command), wait, then
 * SIGKILL what is left. */
static void stop_clients(world *w, fleet *f)
{
    for (size_t i = 0; i < MAX_CLIENTS; i++)
        if (w->clients[i].pid != 0)
            kill(w->clients[i].pid, SIGTERM);
    int64_t deadline = tc_now_ns() + STOP_GRACE_MS * 1000000LL;
    while (running_clients(w) > 0 && tc_now_ns() < deadline) {
        reap(w, f, false);
        tc_sleep_ms(TICK_MS);
    }
    for (size_t i = 0; i < MAX_CLIENTS; i++) {
        if (w->clients[i].pid != 0) {
            fprintf(stderr, "failover: client %d did not stop; killing it\n",
                    (int)w->clients[i].pid);
            flog_write(w->log, "K %lld %ld", (long long)tc_now_ns(), (long)w->clients[i].pid);
            kill(w->clients[i].pid, SIGKILL);
        }
    }
    deadline = tc_now_ns() + STOP_GRACE_MS * 1000000LL;
    while (running_clients(w) > 0 && tc_now_ns() < deadline)
        reap(w, f, false);
}

/* ---- Who holds the lock now ------------------------------------------------ */

/* Follows the log as it grows, to know which client holds the lock. */
typedef struct log_tail {
    FILE *in;
    long holder; /* holder pid of the open section, 0: none */
    char value[80];
} log_tail;

static void tail_follow(log_tail *t)
{
    char line[512];
    while (t->in != NULL && fgets(line, sizeof(line), t->in) != NULL) {
        flog_event ev;
        if (line[strlen(line) - 1] != '\n' || flog_parse(line, &ev) != 0)
            continue; /* a line still being written is read again later */
        if (ev.type == 'S') {
            t->holder = ev.pid;
            snprintf(t->value, sizeof(t->value), "%s", ev.text);
        } else if ((ev.type == 'E' && strcmp(ev.text, t->value) == 0) ||
                   (ev.type == 'K' && ev.pid == t->holder)) {
            t->holder = 0;
        }
    }
    if (t->in != NULL)
        clearerr(t->in);
}

/* The holder, if it is one of our clients (a kill -9 candidate). */
static pid_t holding_client(const world *w, const log_tail *t)
{
    for (size_t i = 0; i < MAX_CLIENTS; i++)
        if (t->holder != 0 && w->clients[i].pid == (pid_t)t->holder)
            return w->clients[i].pid;
    return 0;
}

/* ---- Setup ------------------------------------------------------------------ */

/* durable: which masters the clients are told keep their keys across a
 * restart (those on AOF always; in unsafe mode, falsely, all of them). */
static const char *write_config(fleet *f, const bool *durable)
{
    static char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/failover.yaml", fleet_dir(f));
    FILE *out = fopen(path, "w");
    if (out == NULL)
        return NULL;
    fprintf(out, "connect_timeout_ms: 300\ncommand_timeout_ms: 100\n"
                 "reconnect_min_ms: 20\nreconnect_max_ms: 300\n"
                 "retry_delay_ms: 20\nretry_jitter_ms: 30\nmax_ttl_ms: %d\nttl_ms: %d\nnodes:\n",
                 MAX_TTL_MS, MAX_TTL_MS); /* every client gives its TTL; the default within */
    for (size_t i = 0; i < fleet_size(f); i++)
        fprintf(out, "  - host: 127.0.0.1\n    port: %d\n    durable: %s\n", fleet_port(f, i),
                durable[i] ? "true" : "false");
    fclose(out);
    return path;
}

static uint64_t fresh_seed(void)
{
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof(seed), 0) != (ssize_t)sizeof(seed))
        seed = (uint64_t)time(NULL);
    return seed % 1000000000000ULL; /* short enough to type */
}

/* Five masters. In safe mode masters 3 and 4 get AOF (appendfsync always)
 * and may restart at once; 0..2 have none and restart only after the
 * longest TTL (all_aof: all five have AOF). In unsafe mode none has
 * persistence. fast: masters 0 and 1 run on wall clocks three times fast,
 * restarts included. */
static fleet *start_masters(bool unsafe, bool all_aof, const bool *fast, bool *aof)
{
    const char *clocks[MASTERS];
    for (size_t i = 0; i < MASTERS; i++)
        clocks[i] = fast[i] ? "+0 x3" : "+0";
    fleet_options opts = {.faketime = clocks};
    fleet *f = fleet_start(MASTERS, fast[0] ? &opts : NULL);
    if (f == NULL)
        return NULL;
    for (size_t i = 0; i < MASTERS; i++) {
        aof[i] = !unsafe && (all_aof || i >= 3);
        if (aof[i] && (fleet_set_appendonly(f, i, 1) != 0 || fleet_restart(f, i) != 0)) {
            fleet_stop(f);
            return NULL;
        }
    }
    return f;
}

static void run_loop(world *w, fleet *f, injector *inj, int64_t end_ns)
{
    log_tail tail = {.in = fopen(w->log_path, "re")};
    while (!interrupted && (end_ns == 0 || tc_now_ns() < end_ns)) {
        reap(w, f, true);
        tail_follow(&tail);
        if (inj != NULL) {
            pid_t killed = injector_tick(inj, tc_now_ns(), holding_client(w, &tail));
            if (killed != 0)
                tail.holder = 0;
        }
        tc_sleep_ms(TICK_MS);
    }
    if (tail.in != NULL)
        fclose(tail.in);
}

/* A client of our own, to ping the masters for the status line. */
static redlock_sync *start_pinger(const char *config)
{
    redlock_config *cfg = NULL;
    redlock_sync *pinger = NULL;
    char err[REDLOCK_ERRBUF_SIZE];
    if (redlock_config_load_file(&cfg, config, err, sizeof(err)) == REDLOCK_OK)
        redlock_sync_new(&pinger, cfg);
    redlock_config_free(cfg);
    return pinger;
}

/* Masters of our own are a new deployment: put their fencing counters in
 * use, from 0. The masters were started moments ago on a machine that may
 * be busy (a sanitizer's pass beside other work): a call that found too
 * few of them ready is tried again, a few times. */
static bool init_fencing(const char *config)
{
    enum { ATTEMPTS = 5 };
    redlock_sync *initializer = start_pinger(config);
    int rc = initializer != NULL ? redlock_sync_fencing_init(initializer, 0, NULL)
                                 : REDLOCK_ENOMEM;
    for (int attempt = 1; attempt < ATTEMPTS && rc != REDLOCK_OK && rc != REDLOCK_ENOMEM;
         attempt++) {
        struct timespec pause = {.tv_nsec = 200000000};
        nanosleep(&pause, NULL);
        rc = redlock_sync_fencing_init(initializer, 0, NULL);
    }
    redlock_sync_free(initializer);
    if (rc != REDLOCK_OK)
        fprintf(stderr, "failover: cannot put the fencing counters in use: %s\n",
                redlock_strerror(rc));
    return rc == REDLOCK_OK;
}

/* External masters: no faults; one status line a second for a drill. */
static void report_progress(world *w, int64_t end_ns)
{
    redlock_sync *pinger = start_pinger(w->config);
    log_tail tail = {.in = fopen(w->log_path, "re")};
    unsigned long sections = 0;
    unsigned long failures = 0;
    char last_failure[80] = "";
    int64_t next = tc_now_ns() + 1000000000;
    while (!interrupted && (end_ns == 0 || tc_now_ns() < end_ns)) {
        reap(w, NULL, true);
        char line[512];
        while (tail.in != NULL && fgets(line, sizeof(line), tail.in) != NULL) {
            flog_event ev;
            if (flog_parse(line, &ev) != 0)
                continue;
            if (ev.type == 'S')
                sections++;
            if (ev.type == 'N') {
                failures++;
                snprintf(last_failure, sizeof(last_failure), "%s", ev.text);
            }
        }
        if (tail.in != NULL)
            clearerr(tail.in);
        if (tc_now_ns() >= next) {
            redlock_result *r = NULL;
            unsigned answering = 0;
            unsigned total = 0;
            if (pinger != NULL && redlock_sync_ping(pinger, &r) != REDLOCK_EINVAL && r != NULL) {
                total = r->master_count;
                for (unsigned i = 0; i < r->master_count; i++)
                    answering += r->masters[i].outcome == REDLOCK_MASTER_OK;
            }
            redlock_result_free(r);
            printf("failover: %lu acquisitions, %lu not acquired%s%s%s in the last second; "
                   "%u of %u masters answer\n",
                   sections, failures, failures ? " (last: " : "", failures ? last_failure : "",
                   failures ? ")" : "", answering, total);
            fflush(stdout);
            sections = failures = 0;
            next += 1000000000;
        }
        tc_sleep_ms(TICK_MS);
    }
    if (tail.in != NULL)
        fclose(tail.in);
    redlock_sync_free(pinger);
}

/* A log of its own in dir, named after the host (a container's id) and
 * the start time: a client container started again (or scaled to several)
 * never overwrites another's log. */
static void log_in_dir(char *path, size_t size, const char *dir)
{
    char host[64] = "host";
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "host");
    host[sizeof(host) - 1] = '\0';
    snprintf(path, size, "%s/events-%s-%lld.log", dir, host, (long long)tc_now_ns());
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--check") == 0)
        return offline_check(argc - 2, argv + 2, MASTERS / 2 + 1,
                             RUN_TTL_MS > LIB_TTL_MS ? RUN_TTL_MS : LIB_TTL_MS);
    if (argc >= 2 && strcmp(argv[1], "--mark") == 0)
        return offline_mark(argc - 2, argv + 2);
    options o;
    if (parse_options(argc, argv, &o) != 0)
        return 64;
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    setvbuf(stdout, NULL, _IOLBF, 0);

    bool aof[MASTERS] = {false};
    bool fast[MASTERS] = {o.fast_clocks, o.fast_clocks};
    fleet *f = NULL;
    char slots[16];
    snprintf(slots, sizeof(slots), "%d", o.slots);
    world w = {.config = o.config, .fencing = !o.no_fencing, .slots = o.slots > 1 ? slots : NULL};
    char log_path[PATH_MAX];
    bool at_once = o.unsafe || o.empty_restarts; /* without persistence, restarted at once */
    bool any_excluded = false; /* a master the clients do not take for durable */
    if (o.config == NULL) {
        bool durable[MASTERS] = {false};
        if (!o.seed_given)
            o.seed = fresh_seed();
        printf("failover: %s mode, seed %llu (replay the fault schedule with --seed %llu), "
               "%ld s\n",
               o.unsafe ? "UNSAFE" : o.empty_restarts ? "empty-restarts" : "safe",
               (unsigned long long)o.seed,
               (unsigned long long)o.seed, o.seconds);
        /* --aof starts as a new deployment: the first fenced acquire puts
         * the counters in use. */
        if ((f = start_masters(at_once, o.aof, fast, aof)) != NULL) {
            /* Unsafe: falsely, as an operator who took them for durable. */
            for (size_t i = 0; i < MASTERS; i++) {
                durable[i] = o.unsafe || aof[i];
                any_excluded |= !durable[i];
            }
        }
        if (f == NULL || (w.config = write_config(f, durable)) == NULL ||
            (!o.aof && !init_fencing(w.config))) {
            fprintf(stderr, "failover: cannot start the masters\n");
            fleet_stop(f);
            return 70;
        }
        if (o.aof)
            printf("failover: masters 0-4 with AOF always, restarted at once; no fencing "
                   "counter in use at the start, faults not waiting for them\n");
        else if (o.empty_restarts)
            printf("failover: masters 0-4 without persistence, killed and restarted at once "
                   "(no delay), %s\n",
                   o.unsafe ? "declared durable: the rule off, UNSAFE"
                            : "not declared durable: the clients leave them out for "
                              "max_ttl_ms after a restart");
        else
            printf("failover: masters 0-2 without persistence (%s), 3-4 %s\n",
                   o.unsafe ? "restarted at once, declared durable: UNSAFE"
                            : "restarted after the longest TTL",
                   o.unsafe ? "without persistence too" : "with AOF always (restarted at once)");
        if (o.no_fencing)
            printf("failover: clients lock without fencing tokens\n");
        if (o.slots > 1)
            printf("failover: a semaphore of %d slots: at most %d holders at once\n", o.slots,
                   o.slots);
        if (o.fast_clocks)
            printf("failover: masters 0 and 1 on wall clocks three times fast: only 2-4 count, "
                   "liveness is checked while all three are up\n");
    }
    if (o.log != NULL)
        snprintf(log_path, sizeof(log_path), "%s", o.log);
    else if (o.log_dir != NULL)
        log_in_dir(log_path, sizeof(log_path), o.log_dir);
    else if (f != NULL)
        snprintf(log_path, sizeof(log_path), "%s/events.log", fleet_dir(f));
    else
        snprintf(log_path, sizeof(log_path), "/tmp/redlock-failover-%d.log", (int)getpid());
    w.log_path = log_path;
    unlink(log_path);
    if ((w.log = flog_open(log_path)) < 0) {
        fprintf(stderr, "failover: cannot open %s: %s\n", log_path, strerror(errno));
        fleet_stop(f);
        return 70;
    }
    if (f == NULL)
        printf("failover: event log %s\n", log_path);
    if (any_excluded) {
        /* The clients leave masters that started less than max_ttl_ms ago
         * out: a new deployment waits that out once, before its clients. */
        int wait_ms = FRESH_WAIT_MS;
        printf("failover: waiting %.1f s for the new masters to count (max_ttl_ms %d)\n",
               (double)wait_ms / 1000.0, MAX_TTL_MS);
        tc_sleep_ms(wait_ms);
    }
    for (size_t i = 0; i < MAX_CLIENTS; i++) {
        w.clients[i].kind = i < LIB_PROCESSES ? CLIENT_LIB : CLIENT_RUN;
        start_client(&w, &w.clients[i]);
    }
    printf("failover: %d library processes x %d threads (TTL %d ms) and %d redlock run loops "
           "(TTL %d ms) contend for \"%s\"\n",
           LIB_PROCESSES, LIB_THREADS, LIB_TTL_MS, RUNNERS, RUN_TTL_MS, RESOURCE);

    int64_t end_ns = o.seconds ? tc_now_ns() + (int64_t)o.seconds * 1000000000 : 0;
    if (f != NULL) {
        injector inj;
        injector_init(&inj, f, w.log, o.seed, at_once, aof, fast,
                      RUN_TTL_MS > LIB_TTL_MS ? RUN_TTL_MS : LIB_TTL_MS);
        inj.wait_for_seeding = !o.aof && !o.no_fencing;
        inj.no_delay = o.empty_restarts;
        inj.exclusion_ns = any_excluded ? EXCLUSION_MS * 1000000LL : 0;
        run_loop(&w, f, &inj, end_ns);
        flog_write(w.log, "Z %lld", (long long)tc_now_ns());
        stop_clients(&w, f);
        injector_heal(&inj);
    } else {
        report_progress(&w, end_ns);
        flog_write(w.log, "Z %lld", (long long)tc_now_ns());
        stop_clients(&w, NULL);
    }

    checker_report r;
    int rc = checker_run_slots(log_path, MASTERS / 2 + 1, o.slots > 1 ? (unsigned)o.slots : 1,
                               &r);
    if (rc != 0) {
        fprintf(stderr, "failover: cannot read the event log %s\n", log_path);
        fleet_stop(f);
        return 70;
    }
    checker_print(stdout, &r);
    if (!o.unsafe) /* where violations are expected, they are no news */
        checker_print_violation_events(stdout, log_path, &r, 400);
    fleet_stop(f); /* the log goes with the fleet's folder */
    if (o.json)
        checker_print_json(stdout, &r);
    return checker_verdict(stdout, &r, RUN_TTL_MS > LIB_TTL_MS ? RUN_TTL_MS : LIB_TTL_MS,
                           o.unsafe);
}
