/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * redlock-demo: five local Redis masters, four workers contending for one
 * lock through the blocking API, and masters killed, stopped and brought
 * back while they work. Prints what happens and checks that no two workers
 * ever held the lock at once.
 *
 * The masters are real redis-server processes started on free loopback
 * ports in a temporary directory and stopped at the end, with AOF and
 * appendfsync always, declared durable.
 *
 * Exit status 0 when mutual exclusion held and every shell step did what
 * it shows, 1 otherwise. `redlock-demo --tool-only`: the masters and the
 * shell part alone (ctest demo.tool).
 */
#include "fleet.h"

#include <pthread.h>
#include <redlock/redlock.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#define MASTERS 5
#define WORKERS 4
#define TTL_MS 1000
#define RESOURCE "nightly-report"

static double start_s;
static atomic_bool stop;
static atomic_int holder;     /* worker id inside the critical section, 0: none */
static atomic_int overlaps;
static pthread_mutex_t print_mu = PTHREAD_MUTEX_INITIALIZER;

typedef struct worker_stats {
    int acquired;
    int conflicts;
    int no_quorum;
    int other_failures;
} worker_stats;

static worker_stats stats[WORKERS + 1];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&print_mu);
    printf("[%6.3fs] ", now_s() - start_s);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
    pthread_mutex_unlock(&print_mu);
}

static void on_log(int level, const char *message, void *arg)
{
    (void)arg;
    if (level <= REDLOCK_LOG_INFO)
        say("  library: %s", message);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

typedef struct worker {
    int id;
    redlock_sync *client;
} worker;

/* Holds the lock for the "work", checking nobody else holds it meanwhile,
 * then releases it. */
static void hold(const worker *w, redlock_lock *lock, const redlock_result *r)
{
    if (atomic_exchange(&holder, w->id) != 0)
        atomic_fetch_add(&overlaps, 1);
    stats[w->id].acquired++;
    say("worker %d acquired %s in %.2f ms (%u of %u masters said OK, quorum %u), "
        "may act for %lld ms",
        w->id, RESOURCE, (double)r->elapsed_us / 1000.0, r->masters_locked, r->master_count,
        r->quorum, (long long)r->validity_ms);
    sleep_ms(120); /* the work */
    if (atomic_exchange(&holder, 0) != w->id)
        atomic_fetch_add(&overlaps, 1);
    int rc = redlock_sync_release(w->client, lock, NULL);
    say("worker %d released it (%s)", w->id, redlock_strerror(rc));
}

/* Counts a failed attempt; says why once per run of failures. */
static void count_failure(const worker *w, int rc, const redlock_result *r, bool *reported)
{
    if (rc == REDLOCK_ECONFLICT) {
        stats[w->id].conflicts++;
        return;
    }
    if (rc == REDLOCK_ENOQUORUM)
        stats[w->id].no_quorum++;
    else
        stats[w->id].other_failures++;
    if (!*reported)
        say("worker %d could not acquire: %s (%u masters said OK, %u needed)", w->id,
            redlock_strerror(rc), r ? r->masters_locked : 0, r ? r->quorum : 0);
    *reported = true;
}

static void *work(void *arg)
{
    const worker *w = arg;
    redlock_acquire_options opts;
    redlock_acquire_options_init(&opts);
    opts.ttl_ms = TTL_MS;
    opts.retry_count = 0; /* the demo reports every attempt itself */
    bool reported_failure = false;

    while (!atomic_load(&stop)) {
        redlock_lock *lock = NULL;
        redlock_result *r = NULL;
        int rc = redlock_sync_acquire(w->client, RESOURCE, strlen(RESOURCE), &opts, &lock, &r);
        if (rc == REDLOCK_OK) {
            reported_failure = false;
            hold(w, lock, r);
            redlock_lock_free(lock);
        } else {
            count_failure(w, rc, r, &reported_failure);
        }
        redlock_result_free(r);
        /* Pacing jitter, not a secret: rand() is what it needs. */
        sleep_ms(20 + rand() % 40); // NOLINT(cert-msc30-c,cert-msc50-cpp)
    }
    return NULL;
}

static void step(fleet *f, double at_s, const char *what, int (*fault)(fleet *, size_t),
                 size_t master)
{
    double wait_s = at_s - (now_s() - start_s);
    if (wait_s > 0)
        sleep_ms((long)(wait_s * 1000));
    say(">>> %s master %zu (127.0.0.1:%d)", what, master, fleet_port(f, master));
    if (fault(f, master) != 0)
        say(">>> (that failed)");
}

/* Write a config for the fleet's masters; returns its path (static). They
 * run on AOF with appendfsync always and are declared durable, as part 1's
 * client declares them: else `redlock` would not count them until they had
 * run for max_ttl_ms, nor take a TTL longer than that (`acquire --ttl 30s`). */
static const char *write_config(fleet *f)
{
    static char path[512];
    snprintf(path, sizeof(path), "%s/redlock.yaml", fleet_dir(f));
    FILE *out = fopen(path, "w");
    if (out == NULL)
        return NULL;
    fprintf(out, "ttl_ms: 5000\nretry_delay_ms: 50\nretry_jitter_ms: 50\ndurable: true\nnodes:\n");
    for (size_t i = 0; i < fleet_size(f); i++)
        fprintf(out, "  - host: 127.0.0.1\n    port: %d\n", fleet_port(f, i));
    fclose(out);
    return path;
}

/* Show a shell command, then run it; false when it did not exit 0. */
static bool shell(const char *cmd)
{
    say("$ %s", cmd);
    fflush(stdout);
    int rc = system(cmd); // NOLINT(cert-env33-c): showing the shell is the point
    if (rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0)
        return true;
    say(">>> that did not go as shown (status %d)",
        rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
    return false;
}

/* The same masters from the shell: cron-like jobs racing for one lock
 * through `redlock run`, and a lock taken and given back by hand. Each
 * step exits 0 only when it went as the README tells; returns how many
 * did not. */
static int cli_part(fleet *f)
{
    const char *config = write_config(f);
    if (config == NULL)
        return 1;
    printf("\nPart 2: the redlock tool (export REDLOCK_CONFIG=%s)\n\n", config);
    setenv("REDLOCK_CONFIG", config, 1);
    int failed = 0;
    char cmd[1024];
    /* `run` hands its command a fencing token: new masters need their
     * counters put in use once. */
    snprintf(cmd, sizeof(cmd), "%s fencing-init", REDLOCK_TOOL);
    failed += !shell(cmd);
    snprintf(cmd, sizeof(cmd),
             "for host in alpha beta gamma; do "
             "%s run --wait 5s nightly-report -- sh -c "
             "'echo \"    $(date +%%T.%%3N) [$1] has the lock (fencing token "
             "$REDLOCK_FENCING_TOKEN), making the report\"; sleep 0.3; "
             "echo \"    $(date +%%T.%%3N) [$1] done\"' sh $host & pids=\"$pids $!\"; done; "
             "for pid in $pids; do wait $pid || exit 1; done",
             REDLOCK_TOOL);
    failed += !shell(cmd);
    snprintf(cmd, sizeof(cmd),
             "%s run --wait 0 nightly-report -- sleep 1 & sleep 0.3; "
             "%s run --wait 0 nightly-report -- true; s=$?; echo \"    exit status $s\"; "
             "wait $! && [ $s -eq 75 ]",
             REDLOCK_TOOL, REDLOCK_TOOL);
    failed += !shell(cmd);
    snprintf(cmd, sizeof(cmd),
             "V=$(%s acquire --ttl 30s nightly-report) && %s status nightly-report && "
             "%s release nightly-report \"$V\" && %s status nightly-report",
             REDLOCK_TOOL, REDLOCK_TOOL, REDLOCK_TOOL, REDLOCK_TOOL);
    failed += !shell(cmd);
    return failed;
}

/* Part 1: the workers through the blocking API while masters are killed,
 * stopped and brought back. True when mutual exclusion held and some
 * worker got the lock. */
static bool workers_part(fleet *f)
{
    redlock_config *cfg = fleet_config(f);
    redlock_config_set(cfg, REDLOCK_RECONNECT_MAX_MS, 500);
    redlock_config_set(cfg, REDLOCK_DURABLE, 1);
    redlock_config_set_log(cfg, on_log, NULL, REDLOCK_LOG_INFO);
    redlock_sync *client = NULL;
    int rc = cfg ? redlock_sync_new(&client, cfg) : REDLOCK_ENOMEM;
    redlock_config_free(cfg);
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "demo: %s\n", redlock_strerror(rc));
        return false;
    }

    pthread_t threads[WORKERS];
    worker workers[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        workers[i] = (worker){i + 1, client};
        pthread_create(&threads[i], NULL, work, &workers[i]);
    }

    /* The failure script. A killed master comes back only after the longest
     * TTL has passed (the "delayed restart" rule): without persistence it
     * has forgotten its keys, and coming back sooner could hand a live lock
     * to a second holder. */
    step(f, 1.5, "kill -9", fleet_kill, 1);
    step(f, 3.0, "kill -9", fleet_kill, 3);
    say(">>> two of five masters are down: the lock still works on the other three");
    step(f, 4.5, "SIGSTOP", fleet_pause, 0);
    say(">>> three of five unavailable: no quorum, nobody gets the lock");
    step(f, 6.0, "SIGCONT", fleet_resume, 0);
    step(f, 7.0, "restart (down for longer than the TTL)", fleet_restart, 1);
    step(f, 7.0, "restart (down for longer than the TTL)", fleet_restart, 3);
    sleep_ms(2000);

    atomic_store(&stop, true);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(threads[i], NULL);
    redlock_sync_free(client);

    printf("\nSummary of part 1\n");
    int total = 0;
    for (int i = 1; i <= WORKERS; i++) {
        printf("  worker %d: acquired %d times, lost to another holder %d times, "
               "no quorum %d times\n",
               i, stats[i].acquired, stats[i].conflicts, stats[i].no_quorum);
        total += stats[i].acquired;
    }
    int bad = atomic_load(&overlaps);
    printf("  %d acquisitions, %d overlapping critical sections\n", total, bad);
    printf("  %s\n", bad == 0 ? "mutual exclusion held throughout."
                               : "MUTUAL EXCLUSION WAS VIOLATED.");
    return bad == 0 && total > 0;
}

int main(int argc, char **argv)
{
    bool tool_only = argc == 2 && strcmp(argv[1], "--tool-only") == 0;
    if (argc > 1 && !tool_only) {
        fprintf(stderr, "usage: %s [--tool-only]\n", argv[0]);
        return 64;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    start_s = now_s();
    srand((unsigned)time(NULL)); // NOLINT(cert-msc32-c,cert-msc51-cpp): pacing only
    if (!tool_only)
        printf("libredlock %s demo, part 1: %d masters, %d workers contending for \"%s\" "
               "(TTL %d ms)\n\n",
               redlock_version(), MASTERS, WORKERS, RESOURCE, TTL_MS);

    /* Durable for real (appendonly yes, appendfsync always), and declared
     * so: a master killed and brought back keeps its keys and counts at
     * once (docs/safety.md, "Masters restarted empty"). */
    fleet_options durable = {.appendonly = 1};
    fleet *f = fleet_start(MASTERS, &durable);
    if (f == NULL) {
        fprintf(stderr, "demo: could not start redis-server (is redis-server installed?)\n");
        return 1;
    }
    for (size_t i = 0; i < MASTERS; i++)
        say("master %zu: redis-server on 127.0.0.1:%d (pid %d)", i, fleet_port(f, i),
            (int)fleet_pid(f, i));

    bool ok = tool_only || workers_part(f);
    int failed = cli_part(f);
    fleet_stop(f);
    printf("\nMasters stopped.\n");
    if (failed > 0)
        printf("%d step%s of part 2 did not go as shown.\n", failed, failed == 1 ? "" : "s");
    return ok && failed == 0 ? 0 : 1;
}
