/* SPDX-License-Identifier: BSD-3-Clause */
/* The failover suite's checker: replays the event log in time order. */
#include "checker.h"
#include "failover_log.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPEN 64 /* sections open at once: 1 when all is well */
/* Pids of the n-th log are counted from n * PID_SPAN: above every pid
 * (pid_max is at most 2^22), so that clients of different logs (different
 * containers, each with its own pid namespace) never share a holder id. */
#define PID_SPAN (1L << 22)

typedef struct open_section {
    long holder;
    int64_t start;
    int64_t deadline; /* 0: unknown */
    char value[80];
    int overran;      /* counted as an overrun already */
} open_section;

typedef struct replay {
    checker_report *r;
    unsigned quorum;
    unsigned slots; /* holders allowed at once */
    open_section open[MAX_OPEN];
    size_t open_count;
    bool majority_up;
    int64_t idle_since; /* lock free with a majority up since, or -1 */
    const flog_event *events; /* the whole log, in time order */
    size_t at;                /* the event being replayed */
    size_t idle_from;         /* the first event of the idle stretch */
    int64_t first_t;          /* the first event's time */
    int64_t measure_end;
    int64_t *latencies;
    size_t latency_count, latency_cap;
    int64_t greatest_token; /* of the sections started so far */
    int64_t greatest_token_t;
} replay;

static int compare_time(const void *a, const void *b)
{
    const flog_event *x = a;
    const flog_event *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

static int compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a;
    int64_t y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* What happened from the idle stretch's first event to the current one,
 * for the report of the longest: each fault and master count with its
 * time into the stretch, then the failed attempts by reason. */
static void tell_gap(replay *rp)
{
    char *out = rp->r->longest_gap_story;
    size_t cap = sizeof(rp->r->longest_gap_story);
    size_t used = 0;
    struct {
        const char *reason;
        unsigned long count;
    } failed[CHECKER_MAX_REASONS] = {{0}};
    out[0] = '\0';
    for (size_t i = rp->idle_from; i < rp->at && used < cap; i++) {
        const flog_event *ev = &rp->events[i];
        double into = (double)(ev->t - rp->idle_since) / 1e9;
        int n = 0;
        if (ev->type == 'F')
            n = snprintf(out + used, cap - used, "%s+%.2f s %s m%ld", used ? ", " : "", into,
                         ev->text, ev->pid);
        else if (ev->type == 'U')
            n = snprintf(out + used, cap - used, "%s+%.2f s %lld up", used ? ", " : "", into,
                         (long long)ev->a);
        else if (ev->type == 'C' || ev->type == 'K')
            n = snprintf(out + used, cap - used, "%s+%.2f s %s", used ? ", " : "", into,
                         ev->type == 'C' ? "container-kill" : "client-kill");
        else if (ev->type == 'N')
            for (size_t k = 0; k < CHECKER_MAX_REASONS; k++)
                if (failed[k].reason == NULL || strcmp(failed[k].reason, ev->text) == 0) {
                    failed[k].reason = ev->text;
                    failed[k].count++;
                    break;
                }
        if (n > 0)
            used += (size_t)n < cap - used ? (size_t)n : cap - used - 1;
    }
    for (size_t k = 0; k < CHECKER_MAX_REASONS && failed[k].reason != NULL && used < cap; k++) {
        int n = snprintf(out + used, cap - used, "%s%s %lu",
                         k ? ", " : used ? "; attempts failed: " : "attempts failed: ",
                         failed[k].reason, failed[k].count);
        if (n > 0)
            used += (size_t)n < cap - used ? (size_t)n : cap - used - 1;
    }
}

/* Liveness: the lock stood free while a majority was up (clients always
 * want it here) from idle_since until `until`. */
static void end_idle(replay *rp, int64_t until)
{
    if (rp->idle_since < 0)
        return;
    if (until > rp->measure_end)
        until = rp->measure_end;
    if (until - rp->idle_since > rp->r->longest_gap_ns) {
        rp->r->longest_gap_ns = until - rp->idle_since;
        rp->r->longest_gap_from_s = (double)(rp->idle_since - rp->first_t) / 1e9;
        tell_gap(rp);
    }
    rp->idle_since = -1;
}

static void maybe_start_idle(replay *rp, int64_t t)
{
    if (rp->majority_up && rp->open_count == 0 && rp->idle_since < 0) {
        rp->idle_since = t;
        rp->idle_from = rp->at;
    }
}

static void close_section(replay *rp, size_t i, int64_t end)
{
    open_section *s = &rp->open[i];
    if (s->deadline != 0 && end > s->deadline && !s->overran)
        rp->r->overruns++;
    rp->open[i] = rp->open[--rp->open_count];
    maybe_start_idle(rp, end);
}

static void on_start(replay *rp, const flog_event *ev)
{
    checker_report *r = rp->r;
    r->sections++;
    if (ev->a != 0)
        r->library_sections++;
    size_t live = 0;
    for (size_t i = 0; i < rp->open_count; i++) {
        open_section *s = &rp->open[i];
        if (s->deadline != 0 && ev->t > s->deadline) {
            /* The other holder was past its own validity: its fault (a
             * pause), not the lock's. */
            if (!s->overran)
                r->overruns++;
            s->overran = 1;
            continue;
        }
        /* A semaphore's: as many others as it has slots are one too many. */
        if (++live < rp->slots)
            continue;
        if (r->violations++ == 0) {
            r->first_violation_ns = ev->t;
            r->first_violation_since_ns = s->start;
            snprintf(r->first_violation, sizeof(r->first_violation),
                     "holder %ld (value %.32s) started at %.3f s while holder %ld (value %.32s, "
                     "started at %.3f s) still held the lock",
                     ev->pid, ev->text, (double)ev->t / 1e9, s->holder, s->value,
                     (double)s->start / 1e9);
        }
    }
    if (rp->open_count < MAX_OPEN) {
        open_section *s = &rp->open[rp->open_count++];
        memset(s, 0, sizeof(*s));
        s->holder = ev->pid;
        s->start = ev->t;
        s->deadline = ev->a;
        snprintf(s->value, sizeof(s->value), "%s", ev->text);
    }
    end_idle(rp, ev->t);
}

/* Fencing: each lock is granted after the one before it, and its section
 * starts after its grant; so tokens grow in the order sections start. */
static void check_token(replay *rp, const flog_event *ev)
{
    checker_report *r = rp->r;
    if (ev->b <= 0)
        return;
    r->fenced_sections++;
    if (rp->slots > 1)
        return; /* each slot's lock has tokens of its own order */
    if (ev->b <= rp->greatest_token && r->token_violations++ == 0)
        snprintf(r->first_token_violation, sizeof(r->first_token_violation),
                 "holder %ld (value %.32s) started at %.3f s with token %lld, after a section "
                 "started at %.3f s with token %lld",
                 ev->pid, ev->text, (double)ev->t / 1e9, (long long)ev->b,
                 (double)rp->greatest_token_t / 1e9, (long long)rp->greatest_token);
    if (ev->b > rp->greatest_token) {
        rp->greatest_token = ev->b;
        rp->greatest_token_t = ev->t;
    }
}

/* One more fault of this kind, by name. */
static void count_fault(checker_report *r, const char *kind)
{
    for (size_t i = 0; i < CHECKER_MAX_FAULT_KINDS; i++) {
        if (r->faults[i].name[0] == '\0')
            snprintf(r->faults[i].name, sizeof(r->faults[i].name), "%.31s", kind);
        if (strcmp(r->faults[i].name, kind) == 0) {
            r->faults[i].count++;
            return;
        }
    }
}

static void on_end(replay *rp, const flog_event *ev)
{
    for (size_t i = 0; i < rp->open_count; i++) {
        if (rp->open[i].holder == ev->pid && strcmp(rp->open[i].value, ev->text) == 0) {
            close_section(rp, i, ev->t);
            return;
        }
    }
}

/* A client was killed (K) or ended (X): its sections end with it (a
 * killed run's command dies with it). Its lock, never released, frees
 * itself when its keys expire. */
static void on_client_gone(replay *rp, const flog_event *ev)
{
    /* A K after the measured period is the stop path's own SIGKILL of a
     * client that did not stop in time, not an injected fault. */
    if (ev->type == 'K' && ev->t <= rp->measure_end) {
        rp->r->client_kills++;
        count_fault(rp->r, "client-kill");
    }
    for (size_t i = rp->open_count; i-- > 0;)
        if (rp->open[i].holder == ev->pid)
            close_section(rp, i, ev->t);
}

/* Every client of one log is gone (C; its pid is the log's first pid). */
static void on_clients_gone(replay *rp, const flog_event *ev)
{
    rp->r->container_kills++;
    count_fault(rp->r, "container-kill");
    for (size_t i = rp->open_count; i-- > 0;)
        if (rp->open[i].holder >= ev->pid && rp->open[i].holder < ev->pid + PID_SPAN)
            close_section(rp, i, ev->t);
}

static void on_available(replay *rp, const flog_event *ev)
{
    rp->majority_up = ev->a >= (int64_t)rp->quorum;
    if (rp->majority_up)
        maybe_start_idle(rp, ev->t);
    else
        end_idle(rp, ev->t);
}

static void on_fault(replay *rp, const flog_event *ev)
{
    checker_report *r = rp->r;
    count_fault(r, ev->text);
    if (strcmp(ev->text, "kill-delayed") == 0)
        r->kills_delayed++;
    else if (strcmp(ev->text, "kill-aof") == 0)
        r->kills_aof++;
    else if (strcmp(ev->text, "kill-unsafe") == 0 || strcmp(ev->text, "kill-empty") == 0)
        r->kills_unsafe++;
    else if (strcmp(ev->text, "restart") == 0)
        r->restarts++;
    else if (strcmp(ev->text, "stop") == 0)
        r->stops++;
    else if (strcmp(ev->text, "cont") == 0)
        r->conts++;
}

static void on_not_acquired(replay *rp, const flog_event *ev)
{
    checker_report *r = rp->r;
    r->not_acquired++;
    for (size_t i = 0; i < CHECKER_MAX_REASONS; i++) {
        if (r->reasons[i].name[0] == '\0')
            snprintf(r->reasons[i].name, sizeof(r->reasons[i].name), "%.31s", ev->text);
        if (strcmp(r->reasons[i].name, ev->text) == 0) {
            r->reasons[i].count++;
            return;
        }
    }
}

static void on_acquired(replay *rp, const flog_event *ev)
{
    if (ev->a < 0)
        return;
    if (rp->latency_count == rp->latency_cap) {
        size_t cap = rp->latency_cap ? rp->latency_cap * 2 : 1024;
        int64_t *grown = realloc(rp->latencies, cap * sizeof(int64_t));
        if (grown == NULL)
            return;
        rp->latencies = grown;
        rp->latency_cap = cap;
    }
    rp->latencies[rp->latency_count++] = ev->a;
}

/* The pids of a client event of the log with this index, counted from
 * the log's first pid. Faults name a master, not a pid. */
static void place_pid(flog_event *ev, size_t log_index)
{
    long first = (long)log_index * PID_SPAN;
    if (ev->type == 'C')
        ev->pid = first;
    else if (strchr("SEANKX", ev->type) != NULL)
        ev->pid += first;
}

/* Append every event of one log to *events (n used of *cap); -1 on error. */
static int read_log(const char *path, size_t log_index, flog_event **events, size_t *n,
                    size_t *cap)
{
    FILE *in = fopen(path, "re");
    if (in == NULL) {
        fprintf(stderr, "checker: cannot open %s\n", path);
        return -1;
    }
    char line[512];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), in) != NULL) {
        if (*n == *cap) {
            size_t grown_cap = *cap ? *cap * 2 : 4096;
            flog_event *grown = realloc(*events, grown_cap * sizeof(**events));
            if (grown == NULL) {
                rc = -1;
                break;
            }
            *events = grown;
            *cap = grown_cap;
        }
        if (flog_parse(line, &(*events)[*n]) != 0) {
            fprintf(stderr, "checker: malformed line in %s: %s", path, line);
            rc = -1;
            break;
        }
        place_pid(&(*events)[(*n)++], log_index);
    }
    fclose(in);
    return rc;
}

/* Every event of the logs, in time order. */
static flog_event *read_events(const char *const *paths, size_t count, size_t *n)
{
    flog_event *events = NULL;
    size_t cap = 0;
    *n = 0;
    for (size_t i = 0; i < count; i++) {
        if (read_log(paths[i], i, &events, n, &cap) != 0) {
            free(events);
            return NULL;
        }
    }
    if (events == NULL)
        events = malloc(sizeof(*events)); /* no event at all: an empty run */
    if (events != NULL)
        qsort(events, *n, sizeof(*events), compare_time);
    return events;
}

static int run_files(const char *const *paths, size_t count, unsigned quorum, unsigned slots,
                     checker_report *out);

int checker_run(const char *path, unsigned quorum, checker_report *out)
{
    return run_files(&path, 1, quorum, 1, out);
}

int checker_run_slots(const char *path, unsigned quorum, unsigned slots, checker_report *out)
{
    return run_files(&path, 1, quorum, slots < 1 ? 1 : slots, out);
}

int checker_run_files(const char *const *paths, size_t count, unsigned quorum,
                      checker_report *out)
{
    return run_files(paths, count, quorum, 1, out);
}

static int run_files(const char *const *paths, size_t count, unsigned quorum, unsigned slots,
                     checker_report *out)
{
    memset(out, 0, sizeof(*out));
    out->slots = slots;
    size_t n = 0;
    flog_event *events = read_events(paths, count, &n);
    if (events == NULL)
        return -1;
    replay rp = {.r = out, .quorum = quorum, .slots = slots, .idle_since = -1,
                 .measure_end = INT64_MAX};
    /* The first Z: with several logs, the clients of each stop in turn. */
    for (size_t i = 0; i < n && rp.measure_end == INT64_MAX; i++)
        if (events[i].type == 'Z')
            rp.measure_end = events[i].t;
    int64_t first = n ? events[0].t : 0;
    rp.events = events;
    rp.first_t = first;
    for (size_t i = 0; i < n; i++) {
        const flog_event *ev = &events[i];
        rp.at = i;
        switch (ev->type) {
        case 'S':
            on_start(&rp, ev);
            check_token(&rp, ev);
            break;
        case 'E':
            on_end(&rp, ev);
            break;
        case 'K':
        case 'X':
            on_client_gone(&rp, ev);
            break;
        case 'C':
            on_clients_gone(&rp, ev);
            break;
        case 'U':
            on_available(&rp, ev);
            break;
        case 'F':
            on_fault(&rp, ev);
            break;
        case 'N':
            on_not_acquired(&rp, ev);
            break;
        case 'A':
            on_acquired(&rp, ev);
            break;
        default:
            break;
        }
    }
    rp.at = n;
    if (rp.measure_end != INT64_MAX)
        end_idle(&rp, rp.measure_end);
    out->unterminated = rp.open_count;
    out->measured_s = rp.measure_end != INT64_MAX ? (double)(rp.measure_end - first) / 1e9 : 0;
    if (rp.latency_count > 0) {
        qsort(rp.latencies, rp.latency_count, sizeof(int64_t), compare_i64);
        out->latency_samples = rp.latency_count;
        out->latency_p50_us = rp.latencies[rp.latency_count / 2];
        out->latency_p99_us = rp.latencies[rp.latency_count * 99 / 100];
        out->latency_max_us = rp.latencies[rp.latency_count - 1];
    }
    free(rp.latencies);
    free(events);
    return 0;
}

void checker_print(FILE *out, const checker_report *r)
{
    fprintf(out, "critical sections: %lu (%lu by library clients, %lu by redlock run)\n",
            r->sections, r->library_sections, r->sections - r->library_sections);
    fprintf(out, "not acquired:      %lu", r->not_acquired);
    for (size_t i = 0; i < CHECKER_MAX_REASONS && r->reasons[i].count; i++)
        fprintf(out, "%s%s %lu", i ? ", " : " (", r->reasons[i].name, r->reasons[i].count);
    fprintf(out, "%s\n", r->not_acquired ? ")" : "");
    fprintf(out, "faults:            kill -9 %lu (%lu without persistence, restarted after "
                 "the longest TTL; %lu with AOF, restarted at once; %lu without persistence, "
                 "restarted at once), SIGSTOP %lu, client kill -9 %lu\n",
            r->kills_delayed + r->kills_aof + r->kills_unsafe, r->kills_delayed, r->kills_aof,
            r->kills_unsafe, r->stops, r->client_kills);
    fprintf(out, "faults by kind:   ");
    for (size_t i = 0; i < CHECKER_MAX_FAULT_KINDS && r->faults[i].count; i++)
        fprintf(out, "%s %s %lu", i ? "," : "", r->faults[i].name, r->faults[i].count);
    fprintf(out, "%s\n", r->faults[0].count ? "" : " none");
    if (r->slots > 1)
        fprintf(out, "violations:        %lu (more than %u holders at once)\n", r->violations,
                r->slots);
    else
        fprintf(out, "violations:        %lu (two holders at once)\n", r->violations);
    if (r->violations)
        fprintf(out, "  first:           %s\n", r->first_violation);
    fprintf(out, "fencing tokens:    %lu of %lu sections had one; %lu out of order\n",
            r->fenced_sections, r->sections, r->token_violations);
    if (r->token_violations)
        fprintf(out, "  first:           %s\n", r->first_token_violation);
    fprintf(out, "overruns:          %lu (a holder acting past its own validity)\n",
            r->overruns);
    if (r->unterminated)
        fprintf(out, "unterminated:      %lu (sections that never ended)\n", r->unterminated);
    fprintf(out, "liveness:          longest stretch with a majority up and the lock free: "
                 "%.2f s",
            (double)r->longest_gap_ns / 1e9);
    if (r->longest_gap_ns > 0)
        fprintf(out, ", from %.2f s into the log", r->longest_gap_from_s);
    fprintf(out, "\n");
    if (r->longest_gap_story[0] != '\0')
        fprintf(out, "  during it:       %s\n", r->longest_gap_story);
    fprintf(out, "acquire latency:   p50 %.2f ms, p99 %.2f ms, worst %.2f ms (%lu acquires, "
                 "last attempt)\n",
            (double)r->latency_p50_us / 1000, (double)r->latency_p99_us / 1000,
            (double)r->latency_max_us / 1000, r->latency_samples);
}

void checker_print_json(FILE *out, const checker_report *r)
{
    fprintf(out,
            "{\"measured_s\":%.1f,\"sections\":%lu,\"library_sections\":%lu,"
            "\"not_acquired\":%lu,\"kills_delayed\":%lu,\"kills_aof\":%lu,"
            "\"kills_unsafe\":%lu,\"restarts\":%lu,\"stops\":%lu,"
            "\"conts\":%lu,\"client_kills\":%lu,\"container_kills\":%lu,\"violations\":%lu,"
            "\"fenced_sections\":%lu,\"token_violations\":%lu,\"overruns\":%lu,"
            "\"unterminated\":%lu,\"longest_gap_s\":%.3f,\"latency_p50_ms\":%.3f,"
            "\"latency_p99_ms\":%.3f,\"latency_max_ms\":%.3f,\"faults\":{",
            r->measured_s, r->sections, r->library_sections, r->not_acquired, r->kills_delayed,
            r->kills_aof, r->kills_unsafe, r->restarts, r->stops, r->conts, r->client_kills,
            r->container_kills, r->violations, r->fenced_sections, r->token_violations, r->overruns,
            r->unterminated, (double)r->longest_gap_ns / 1e9, (double)r->latency_p50_us / 1000,
            (double)r->latency_p99_us / 1000, (double)r->latency_max_us / 1000);
    for (size_t i = 0; i < CHECKER_MAX_FAULT_KINDS && r->faults[i].count; i++)
        fprintf(out, "%s\"%s\":%lu", i ? "," : "", r->faults[i].name, r->faults[i].count);
    fprintf(out, "}}\n");
}

int checker_verdict(FILE *out, const checker_report *r, int64_t longest_ttl_ms, bool unsafe)
{
    bool safe = r->violations == 0 && r->unterminated == 0 && r->token_violations == 0;
    /* Live: with a majority up the lock never stands free for long. A
     * holder killed with it costs one TTL (its keys expire); allow three
     * and two seconds of retries and reconnects on a slow machine. */
    int64_t bound_ms = 3 * longest_ttl_ms + 2000;
    bool live = r->sections > 0 && r->longest_gap_ns <= bound_ms * 1000000LL;
    if (unsafe) {
        fprintf(out, "failover: UNSAFE mode: %s%s\n",
                r->violations ? "the lock was held twice, as this mode is expected to allow"
                              : "no violation this time (they need unlucky timing)",
                r->token_violations ? "; fencing tokens out of order" : "");
        return 0;
    }
    if (!live)
        fprintf(out,
                "failover: FAIL: the lock stood free for %.2f s with a majority up (at most "
                "%.1f s expected)\n",
                (double)r->longest_gap_ns / 1e9, (double)bound_ms / 1000.0);
    if (r->violations != 0 || r->unterminated != 0)
        fprintf(out, "failover: FAIL: mutual exclusion was violated\n");
    if (r->token_violations != 0)
        fprintf(out, "failover: FAIL: fencing tokens did not grow in lock order\n");
    if (safe && live)
        fprintf(out, "failover: PASS: mutual exclusion held, fencing tokens grew in lock order, "
                     "and the lock stayed live\n");
    return safe && live ? 0 : 1;
}

void checker_print_violation_events(FILE *out, const char *path, const checker_report *r,
                                    size_t max_lines)
{
    if (r->violations == 0)
        return;
    FILE *in = fopen(path, "re");
    if (in == NULL)
        return;
    /* From longer than the suite's longest TTL (1.5 s) before the first
     * holder started: the faults and attempts that let the second one in. */
    int64_t from = r->first_violation_since_ns - 2000000000LL;
    int64_t to = r->first_violation_ns + 500000000LL;
    fprintf(out, "events from %.3f s to %.3f s:\n", (double)from / 1e9, (double)to / 1e9);
    char line[512];
    size_t shown = 0;
    while (shown < max_lines && fgets(line, sizeof(line), in) != NULL) {
        flog_event ev;
        if (flog_parse(line, &ev) != 0 || ev.t < from || ev.t > to)
            continue;
        fprintf(out, "  %s", line);
        shown++;
    }
    if (shown == max_lines)
        fprintf(out, "  (the rest left out)\n");
    fclose(in);
}
