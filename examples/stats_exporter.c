/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The client's statistics in the Prometheus text exposition format: takes
 * and gives back a lock ROUNDS times, then prints the snapshot. A real
 * exporter prints it whenever it is scraped (from any thread: the counters
 * are atomic).
 *
 *   stats_exporter [CONFIG] [ROUNDS]
 *
 * CONFIG defaults to $REDLOCK_CONFIG, ROUNDS to 3. Exits 0 when every round
 * took and released the lock.
 */
#include <redlock/redlock.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A label value: backslash, double quote and newline escaped. */
static void print_label(const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '\\' || *s == '"')
            printf("\\%c", *s);
        else if (*s == '\n')
            printf("\\n");
        else
            putchar(*s);
    }
}

static void print_help(const char *name, const char *type, const char *help)
{
    printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One histogram in seconds from buckets in `unit` seconds (1e-6: us, 1e-3:
 * ms): Prometheus buckets are cumulative, "le" their upper bound. Bucket b
 * of the library counts values below 2^b units. */
static void print_histogram(const char *name, const char *master, const uint64_t *buckets,
                            uint64_t sum, double unit)
{
    uint64_t cumulative = 0;
    for (int b = 0; b < REDLOCK_STATS_BUCKETS; b++) {
        cumulative += buckets[b];
        printf("%s_bucket{", name);
        if (master != NULL) {
            printf("master=\"");
            print_label(master);
            printf("\",");
        }
        if (b < REDLOCK_STATS_BUCKETS - 1)
            printf("le=\"%g\"} %llu\n", (double)(1ULL << b) * unit,
                   (unsigned long long)cumulative);
        else
            printf("le=\"+Inf\"} %llu\n", (unsigned long long)cumulative);
    }
    const char *open = master != NULL ? "{master=\"" : "";
    printf("%s_sum%s", name, open);
    if (master != NULL) {
        print_label(master);
        printf("\"}");
    }
    printf(" %g\n%s_count%s", (double)sum * unit, name, open);
    if (master != NULL) {
        print_label(master);
        printf("\"}");
    }
    printf(" %llu\n", (unsigned long long)cumulative);
}

static void print_client(const redlock_stats *s)
{
    print_help("redlock_acquires_total", "counter", "Completed acquires by status.");
    for (int i = 0; i < REDLOCK_STATS_STATUSES; i++)
        if (s->acquires[i] > 0)
            printf("redlock_acquires_total{status=\"%s\"} %llu\n", redlock_status_name(-i),
                   (unsigned long long)s->acquires[i]);
    const struct {
        const char *name, *help;
        uint64_t value;
    } counters[] = {
        {"redlock_extends_total", "Extends completed OK.", s->extends},
        {"redlock_extend_failures_total", "Extends that failed.", s->extend_failures},
        {"redlock_auto_extend_failures_total", "Auto-extension attempts that failed.",
         s->auto_extend_failures},
        {"redlock_locks_lost_total", "Auto-extended locks given up.", s->locks_lost},
        {"redlock_releases_total", "Releases completed OK.", s->releases},
        {"redlock_release_failures_total", "Releases that failed.", s->release_failures},
    };
    for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
        print_help(counters[i].name, "counter", counters[i].help);
        printf("%s %llu\n", counters[i].name, (unsigned long long)counters[i].value);
    }
    print_help("redlock_locks_held", "gauge", "Locks held now.");
    printf("redlock_locks_held %llu\n", (unsigned long long)s->locks_held);
    print_help("redlock_hold_seconds", "histogram", "How long locks were held.");
    print_histogram("redlock_hold_seconds", NULL, s->hold_ms, s->hold_sum_ms, 1e-3);
}

/* One value a master, labelled with its name: the value's field is read
 * by field() from the master's statistics. */
static void print_per_master(const redlock_stats *s, const redlock_config *cfg, const char *name,
                             const char *type, const char *help,
                             uint64_t (*field)(const redlock_master_stats *m))
{
    print_help(name, type, help);
    for (unsigned i = 0; i < s->master_count; i++) {
        printf("%s{master=\"", name);
        print_label(redlock_config_node_name(cfg, i));
        printf("\"} %llu\n", (unsigned long long)field(&s->masters[i]));
    }
}

static uint64_t requests_of(const redlock_master_stats *m)
{
    return m->requests;
}

static uint64_t in_flight_of(const redlock_master_stats *m)
{
    return m->in_flight;
}

static uint64_t queued_of(const redlock_master_stats *m)
{
    return m->queued;
}

static void print_masters(const redlock_stats *s, const redlock_config *cfg)
{
    print_per_master(s, cfg, "redlock_master_requests_total", "counter",
                     "Requests sent to the master.", requests_of);
    print_help("redlock_master_outcomes_total", "counter", "Requests by outcome.");
    for (unsigned i = 0; i < s->master_count; i++)
        for (int o = 0; o < REDLOCK_STATS_OUTCOMES; o++)
            if (s->masters[i].outcomes[o] > 0) {
                printf("redlock_master_outcomes_total{master=\"");
                print_label(redlock_config_node_name(cfg, i));
                printf("\",outcome=\"%s\"} %llu\n", redlock_master_outcome_name(o),
                       (unsigned long long)s->masters[i].outcomes[o]);
            }
    print_help("redlock_master_up", "gauge", "1 when the connection is ready.");
    for (unsigned i = 0; i < s->master_count; i++) {
        printf("redlock_master_up{master=\"");
        print_label(redlock_config_node_name(cfg, i));
        printf("\",state=\"%s\"} %d\n", redlock_connection_state_name(s->masters[i].state),
               s->masters[i].state == REDLOCK_CONNECTION_READY);
    }
    print_per_master(s, cfg, "redlock_master_in_flight", "gauge",
                     "Requests sent and not answered.", in_flight_of);
    print_per_master(s, cfg, "redlock_master_queued", "gauge",
                     "Requests waiting in the client to be sent.", queued_of);
    print_help("redlock_master_latency_seconds", "histogram", "Reply latency.");
    for (unsigned i = 0; i < s->master_count; i++)
        print_histogram("redlock_master_latency_seconds", redlock_config_node_name(cfg, i),
                        s->masters[i].latency_us, s->masters[i].latency_sum_us, 1e-6);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : getenv("REDLOCK_CONFIG");
    char *end = NULL;
    long rounds = argc > 2 ? strtol(argv[2], &end, 10) : 3;
    if (path == NULL || rounds < 0 || rounds > 1000000 || (end != NULL && *end != '\0')) {
        fprintf(stderr, "usage: %s CONFIG [ROUNDS] (or set REDLOCK_CONFIG)\n", argv[0]);
        return 1;
    }
    char err[256];
    redlock_config *cfg = NULL;
    if (redlock_config_load_file(&cfg, path, err, sizeof(err)) != REDLOCK_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    redlock_sync *client = NULL;
    int rc = redlock_sync_new(&client, cfg);
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "client: %s\n", redlock_strerror(rc));
        redlock_config_free(cfg);
        return 1;
    }
    int failed = 0;
    for (long i = 0; i < rounds; i++) {
        redlock_lock *lock = NULL;
        rc = redlock_sync_acquire(client, "stats-example", 13, NULL, &lock, NULL);
        if (rc == REDLOCK_OK)
            rc = redlock_sync_release(client, lock, NULL);
        redlock_lock_free(lock);
        failed += rc != REDLOCK_OK;
    }
    static redlock_stats s; /* some 30 KiB */
    s.size = sizeof(s);
    rc = redlock_sync_stats(client, &s);
    if (rc == REDLOCK_OK) {
        print_client(&s);
        print_masters(&s, cfg); /* the client's masters are the config's, in order */
    } else {
        fprintf(stderr, "stats: %s\n", redlock_strerror(rc));
    }
    redlock_sync_free(client);
    redlock_config_free(cfg);
    return failed == 0 && rc == REDLOCK_OK ? 0 : 1;
}
