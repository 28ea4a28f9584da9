/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * redlock-failover-worker: the failover suite's clients.
 *
 *   lib     threads sharing one blocking client, each looping: acquire
 *           with a fencing token, log the start of its critical section
 *           (with the validity deadline and the token), work a random while
 *           well inside the validity, log the end, release. SIGTERM: finish
 *           the current round and exit. --fencing 0: without tokens;
 *           --slots K: one of a semaphore's K slots instead of the lock.
 *   record  the command `redlock run` holds the lock for: log the start
 *           (with REDLOCK_FENCING_TOKEN, when given; the holder is the
 *           redlock process, not run's guardian between us), work a random
 *           while, log the end. SIGTERM (the lock was lost, or the run is
 *           being stopped): log the end at once and exit.
 */
#include "failover_log.h"

#include <pthread.h>
#include <redlock/redlock.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A critical section never starts with less validity than its work plus
 * this: the holder must be done well before its lock can expire. */
#define MARGIN_MS 200

static atomic_bool stop;

static void on_stop(int sig)
{
    (void)sig;
    atomic_store(&stop, true);
}

/* record mode: the end record, written from the SIGTERM handler itself so
 * that it lands even if a SIGKILL follows at once. Built with
 * async-signal-safe calls only. */
static int record_log = -1;
static long record_holder;
static const char *record_value;
static atomic_bool record_ended;

static size_t put_number(char *p, long long v)
{
    char digits[24];
    size_t n = 0;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    for (size_t i = 0; i < n; i++)
        p[i] = digits[n - 1 - i];
    return n;
}

static void record_end(void)
{
    if (atomic_exchange(&record_ended, true))
        return;
    char line[256];
    size_t n = 0;
    line[n++] = 'E';
    line[n++] = ' ';
    n += put_number(line + n, (long long)tc_now_ns());
    line[n++] = ' ';
    n += put_number(line + n, record_holder);
    line[n++] = ' ';
    for (const char *v = record_value; *v && n < sizeof(line) - 2; v++)
        line[n++] = *v;
    line[n++] = '\n';
    ssize_t w = write(record_log, line, n);
    (void)w;
}

static void on_record_stop(int sig)
{
    (void)sig;
    record_end();
    _exit(0);
}

static const char *arg_value(int argc, char **argv, const char *name, const char *fallback)
{
    for (int i = 2; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return fallback;
}

static long arg_long(int argc, char **argv, const char *name, long fallback)
{
    const char *v = arg_value(argc, argv, name, NULL);
    return v ? strtol(v, NULL, 10) : fallback;
}

typedef struct lib_worker {
    redlock_sync *client;
    const char *resource;
    long ttl_ms;
    long work_max_ms;
    int log;
    unsigned seed;
    bool fencing;
    int slots; /* --slots: a semaphore's; 0: the lock */
} lib_worker;

static void *lib_thread(void *arg)
{
    lib_worker *w = arg;
    unsigned seed = w->seed;
    redlock_acquire_options o;
    redlock_acquire_options_init(&o);
    o.ttl_ms = w->ttl_ms;
    o.retry_count = 1000000;
    o.wait_ms = 2000;
    o.retry_delay_ms = 10;
    o.retry_jitter_ms = 30;
    o.fencing = w->fencing;
    o.slots = w->slots;
    long pid = (long)getpid();
    size_t len = strlen(w->resource);
    while (!atomic_load(&stop)) {
        redlock_lock *lock = NULL;
        redlock_result *r = NULL;
        int rc = redlock_sync_acquire(w->client, w->resource, len, &o, &lock, &r);
        if (rc != REDLOCK_OK) {
            /* The last attempt's outcome on each master, after the reason
             * (the checker reads the reason only): why a free lock was not
             * taken, read from the drill's kept logs. */
            char outcomes[160] = "";
            size_t used = 0;
            for (unsigned i = 0; r != NULL && i < r->master_count && used < sizeof(outcomes); i++) {
                int n = snprintf(outcomes + used, sizeof(outcomes) - used, "%s%s", i ? "," : "",
                                 redlock_master_outcome_name(r->masters[i].outcome));
                used += n > 0 ? (size_t)n : 0;
            }
            flog_write(w->log, "N %lld %ld %s %s", (long long)tc_now_ns(), pid,
                       redlock_status_name(rc), outcomes[0] ? outcomes : "-");
            redlock_result_free(r);
            continue;
        }
        flog_write(w->log, "A %lld %ld %lld %lld", (long long)tc_now_ns(), pid,
                   (long long)(r ? r->elapsed_us : -1), (long long)(r ? r->total_ms * 1000 : -1));
        redlock_result_free(r);
        long work = 5 + (long)(rand_r(&seed) % (unsigned)w->work_max_ms);
        int64_t now = tc_now_ns();
        int64_t validity = redlock_lock_validity_ms(lock);
        if (validity >= work + MARGIN_MS) {
            const char *value = redlock_lock_value(lock, NULL);
            flog_write(w->log, "S %lld %ld %lld %s %llu", (long long)now, pid,
                       (long long)now + (long long)validity * 1000000, value,
                       (unsigned long long)redlock_lock_fencing_token(lock));
            tc_sleep_ms(work);
            flog_write(w->log, "E %lld %ld %s", (long long)tc_now_ns(), pid, value);
        }
        redlock_sync_release(w->client, lock, NULL);
        redlock_lock_free(lock);
        tc_sleep_ms((long)(rand_r(&seed) % 20)); /* let the others in */
    }
    return NULL;
}

static int run_lib(int argc, char **argv)
{
    const char *config = arg_value(argc, argv, "--config", NULL);
    const char *log_path = arg_value(argc, argv, "--log", NULL);
    long threads = arg_long(argc, argv, "--threads", 3);
    if (config == NULL || log_path == NULL || threads < 1 || threads > 64) {
        fprintf(stderr, "worker lib: need --config FILE --log FILE [--threads 1..64]\n");
        return 64;
    }
    int log = flog_open(log_path);
    char err[REDLOCK_ERRBUF_SIZE];
    redlock_config *cfg = NULL;
    if (log < 0 || redlock_config_load_file(&cfg, config, err, sizeof(err)) != REDLOCK_OK) {
        fprintf(stderr, "worker lib: %s\n", log < 0 ? "cannot open the log" : err);
        return 78;
    }
    redlock_sync *client = NULL;
    int rc = redlock_sync_new(&client, cfg);
    redlock_config_free(cfg);
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "worker lib: %s\n", redlock_strerror(rc));
        return 70;
    }
    pthread_t tids[64];
    lib_worker workers[64];
    for (long i = 0; i < threads; i++) {
        workers[i] = (lib_worker){
            .client = client,
            .resource = arg_value(argc, argv, "--resource", "failover"),
            .ttl_ms = arg_long(argc, argv, "--ttl", 1000),
            .work_max_ms = arg_long(argc, argv, "--work-max", 150),
            .fencing = arg_long(argc, argv, "--fencing", 1) != 0,
            .slots = (int)arg_long(argc, argv, "--slots", 0),
            .log = log,
            .seed = (unsigned)getpid() * 7919U + (unsigned)i * 104729U + (unsigned)time(NULL),
        };
        pthread_create(&tids[i], NULL, lib_thread, &workers[i]);
    }
    for (long i = 0; i < threads; i++)
        pthread_join(tids[i], NULL);
    redlock_sync_free(client);
    close(log);
    return 0;
}

/* The redlock process that holds the lock for this command: the parent
 * of our parent, run's guardian (tool/guardian.c). Its pid is what the
 * harness logs when that run ends or is killed (X, K), which ends our
 * section too; -1 when /proc cannot say. */
static long run_pid(void)
{
    char path[64];
    char stat[512];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)getppid());
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(stat, 1, sizeof(stat) - 1, f);
    fclose(f);
    stat[n] = '\0';
    /* "pid (comm) state ppid ...": comm may hold anything but the last ')' */
    const char *end = strrchr(stat, ')');
    char state;
    long ppid;
    if (end == NULL || sscanf(end + 1, " %c %ld", &state, &ppid) != 2)
        return -1;
    return ppid;
}

static int run_record(int argc, char **argv)
{
    const char *log_path = arg_value(argc, argv, "--log", NULL);
    const char *value = getenv("REDLOCK_VALUE");
    long work_min = arg_long(argc, argv, "--work-min", 50);
    long work_max = arg_long(argc, argv, "--work-max", 2000);
    int log = log_path ? flog_open(log_path) : -1;
    if (log < 0 || value == NULL || work_max < work_min) {
        fprintf(stderr, "worker record: need --log FILE and REDLOCK_VALUE (run me under "
                        "redlock run)\n");
        return 64;
    }
    record_log = log;
    record_holder = run_pid();
    record_value = value;
    if (record_holder <= 0) {
        fprintf(stderr, "worker record: cannot tell which redlock process runs me\n");
        return 70;
    }
    unsigned seed = (unsigned)getpid() * 7919U + (unsigned)time(NULL);
    long work = work_min + (long)(rand_r(&seed) % (unsigned)(work_max - work_min + 1));
    const char *token = getenv("REDLOCK_FENCING_TOKEN");
    /* A SIGTERM from here on (the lock lost at once) logs the end, but
     * not before the start: it waits while the start is written. One
     * that came earlier (main's handler noted it) means no section. */
    sigset_t term;
    sigset_t before;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, &before);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_record_stop;
    sigaction(SIGTERM, &sa, NULL);
    if (atomic_load(&stop)) {
        close(log);
        return 0;
    }
    flog_write(log, "S %lld %ld 0 %s %llu", (long long)tc_now_ns(), record_holder, value,
               token != NULL ? strtoull(token, NULL, 10) : 0ULL);
    sigprocmask(SIG_SETMASK, &before, NULL);
    tc_sleep_ms(work);
    record_end();
    close(log);
    return 0;
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 2 && strcmp(argv[1], "lib") == 0)
        return run_lib(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "record") == 0)
        return run_record(argc, argv);
    fprintf(stderr, "usage: redlock-failover-worker lib|record [OPTIONS]\n");
    return 64;
}
