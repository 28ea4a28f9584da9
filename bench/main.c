/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * redlock-bench: the cost of a lock next to the raw round trips it needs,
 * measured in the same run against the same masters.
 *
 *   redlock-bench [--local N | --config FILE] [--pairs N] [--seconds S]
 *                 [--scale] [--leak-pairs N] [--smoke] [--json]
 *                 [--contenders K] [--hold-min-ms MS] [--hold-max-ms MS]
 *
 * --local N (default 5) starts N redis-server masters on loopback for the
 * run; --config uses the masters a config file names (TCP nodes).
 */
#include "bench.h"
#include "fleet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct options {
    size_t local;          /* masters to start; 0 with --config */
    const char *config;
    bench_limits lim;
    bool scale, smoke, json;
    unsigned long leak_pairs;
    const char *only;      /* run only scenarios whose name contains this */
    handoff_options handoff;
} options;

/* Which number the "vs" column compares with. */
typedef enum ratio_kind {
    RATIO_NONE,
    RATIO_MEDIAN,     /* pair median / the quorum baseline's (K=1) */
    RATIO_THROUGHPUT, /* pairs/s / the quorum baseline's with the same K */
    RATIO_SCALING,    /* pairs/s / the T=1 run's */
    RATIO_ACQUIRE,    /* acquire median / all masters up */
    RATIO_UP,         /* pairs/s / all masters up, same K */
    RATIO_FENCED,     /* acquire median / the unfenced K=1 run's */
    RATIO_CLOCK_MEDIAN, /* median / the same K's with clock_check off */
    RATIO_CLOCK_THROUGHPUT, /* pairs/s / the same K's with clock_check off */
    RATIO_HOLDER_MEDIAN,    /* median / the same K's without holder metadata */
    RATIO_HOLDER_THROUGHPUT /* pairs/s / the same K's without holder metadata */
} ratio_kind;

typedef struct row {
    measurement m;
    ratio_kind kind;
    double ratio;
    double cpu_ratio; /* CPU per pair / a reference row's; 0: none */
    size_t masters;
    handoff_figures *handoff; /* the hand-off scenario's, else NULL */
} row;

#define MAX_ROWS 64
static row rows[MAX_ROWS];
static size_t row_count;

static void usage(void)
{
    fprintf(stderr, "usage: redlock-bench [--local N | --config FILE] [--pairs|--ops N] [--seconds S]\n"
                    "                     [--scale] [--leak-pairs N] [--smoke] [--json]\n"
                    "                     [--only TEXT]  (scenarios whose name has TEXT, plus "
                    "the baseline)\n"
                    "                     [--contenders K] [--hold-min-ms MS] [--hold-max-ms MS]"
                    "  (hand-off, contended)\n");
}

/* An option that takes a value; false if a is not one. */
static bool set_value_option(options *o, const char *a, const char *v)
{
    if (strcmp(a, "--local") == 0)
        o->local = strtoul(v, NULL, 10);
    else if (strcmp(a, "--config") == 0)
        o->config = v, o->local = 0;
    else if (strcmp(a, "--pairs") == 0 || strcmp(a, "--ops") == 0)
        o->lim.pairs = strtoul(v, NULL, 10);
    else if (strcmp(a, "--seconds") == 0)
        o->lim.seconds = strtod(v, NULL);
    else if (strcmp(a, "--only") == 0)
        o->only = v;
    else if (strcmp(a, "--contenders") == 0)
        o->handoff.contenders = (unsigned)strtoul(v, NULL, 10);
    else if (strcmp(a, "--hold-min-ms") == 0)
        o->handoff.hold_min_ms = (int)strtol(v, NULL, 10);
    else if (strcmp(a, "--hold-max-ms") == 0)
        o->handoff.hold_max_ms = (int)strtol(v, NULL, 10);
    else if (strcmp(a, "--leak-pairs") == 0)
        o->leak_pairs = strtoul(v, NULL, 10);
    else
        return false;
    return true;
}

/* A flag; false if a is not one. */
static bool set_flag(options *o, const char *a)
{
    if (strcmp(a, "--scale") == 0)
        o->scale = true;
    else if (strcmp(a, "--smoke") == 0)
        o->smoke = true;
    else if (strcmp(a, "--json") == 0)
        o->json = true;
    else
        return false;
    return true;
}

static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){.local = 5,
                   .lim = {.pairs = 20000, .seconds = 10, .ttl_ms = 10000},
                   .handoff = {.contenders = 8, .hold_min_ms = 2, .hold_max_ms = 20}};
    for (int i = 1; i < argc && argv[i] != NULL; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v != NULL && set_value_option(o, argv[i], v)) {
            i++;
        } else if (!set_flag(o, argv[i])) {
            usage();
            return -1;
        }
    }
    o->handoff.seconds = o->lim.seconds;
    if (o->smoke) {
        o->lim.pairs = 300;
        o->lim.seconds = 5;
        o->handoff.contenders = 3;
        o->handoff.seconds = 0.5;
    }
    if ((o->local == 0 && o->config == NULL) || o->local > BENCH_MAX_MASTERS ||
        o->lim.pairs == 0 || o->handoff.contenders == 0 ||
        o->handoff.contenders > BENCH_MAX_CONTENDERS || o->handoff.hold_min_ms < 0 ||
        o->handoff.hold_max_ms < o->handoff.hold_min_ms) {
        usage();
        return -1;
    }
    return 0;
}

static double pairs_per_s(const measurement *m)
{
    return m->seconds > 0 ? (double)m->pairs / m->seconds : 0;
}

static row *add_row(const char *name, size_t masters)
{
    if (row_count == MAX_ROWS)
        return NULL;
    row *r = &rows[row_count++];
    memset(r, 0, sizeof(*r));
    snprintf(r->m.name, sizeof(r->m.name), "%s", name);
    r->masters = masters;
    return r;
}

static void report_progress(const row *r)
{
    fprintf(stderr, "  %-34s %7lu pairs, p50 %7.1f us\n", r->m.name, r->m.pairs,
            samples_quantile_us((samples *)&r->m.pair, 0.5));
}

static const options *active_options;

/* Whether a scenario runs under --only. */
static bool wanted(const char *name)
{
    return active_options->only == NULL || strstr(name, active_options->only) != NULL;
}

/* Contenders on one resource: the hand-off between holders, waiting on
 * the timer alone, then by notification (the default). */
static void run_handoff(const bench_masters *ms, const options *o)
{
    for (int notify = 0; notify <= 1; notify++) {
        char name[64];
        snprintf(name, sizeof(name), "hand-off, contended, K=%u, %s", o->handoff.contenders,
                 notify ? "notified" : "timer only");
        row *r;
        if (!wanted(name) || (r = add_row(name, ms->n)) == NULL)
            continue;
        handoff_options opt = o->handoff;
        opt.notify = notify;
        r->handoff = calloc(1, sizeof(*r->handoff));
        if (r->handoff == NULL || lib_handoff_run(ms, &opt, &r->m, r->handoff) != 0)
            fprintf(stderr, "redlock-bench: %s: could not run\n", name);
        report_progress(r);
    }
}

static void pause_first(void *arg)
{
    fleet_pause(arg, 0);
}

static void resume_first(void *arg)
{
    fleet_resume(arg, 0);
}

/* K pairs in flight with every master up, then with one stopped (SIGSTOP
 * once the client is connected, SIGCONT after the measured run, so the
 * stop finds requests in flight): throughput against all up. */
static void run_stopped_in_flight(const bench_masters *ms, const options *o, fleet *f,
                                  unsigned k)
{
    char up_name[64];
    char stopped_name[64];
    snprintf(up_name, sizeof(up_name), "library async, K=%u", k);
    snprintf(stopped_name, sizeof(stopped_name), "library async, K=%u, 1 master stopped", k);
    if (f == NULL || !wanted(up_name))
        return;
    row *up = add_row(up_name, ms->n);
    if (up == NULL)
        return;
    lib_async_run(ms, &o->lim, k, &up->m);
    report_progress(up);
    row *r = add_row(stopped_name, ms->n);
    if (r == NULL)
        return;
    bench_fault stop = {pause_first, resume_first, f};
    lib_async_run_fault(ms, &o->lim, k, &stop, &r->m);
    r->kind = RATIO_UP;
    r->ratio = pairs_per_s(&up->m) > 0 ? pairs_per_s(&r->m) / pairs_per_s(&up->m) : 0;
    report_progress(r);
}

/* What the masters' clock check costs (clock_check enforce, the default,
 * against off), run back to back: the median at K=1, throughput at K=32. */
static void run_clock_cost(const bench_masters *ms, const options *o)
{
    static const unsigned flights[] = {1, 32};
    for (size_t i = 0; i < sizeof(flights) / sizeof(flights[0]); i++) {
        unsigned k = flights[i];
        char off_name[64];
        char on_name[64];
        snprintf(off_name, sizeof(off_name), "library async, K=%u, clock check off", k);
        snprintf(on_name, sizeof(on_name), "library async, K=%u, clock check on", k);
        if (!wanted(off_name) && !wanted(on_name))
            continue;
        row *off = add_row(off_name, ms->n);
        if (off == NULL)
            return;
        lib_async_clock_off_run(ms, &o->lim, k, &off->m);
        report_progress(off);
        row *on = add_row(on_name, ms->n);
        if (on == NULL)
            return;
        lib_async_run(ms, &o->lim, k, &on->m);
        if (k == 1) {
            on->kind = RATIO_CLOCK_MEDIAN;
            double base = samples_quantile_us(&off->m.pair, 0.5);
            on->ratio = base > 0 ? samples_quantile_us(&on->m.pair, 0.5) / base : 0;
        } else {
            on->kind = RATIO_CLOCK_THROUGHPUT;
            on->ratio = pairs_per_s(&off->m) > 0 ? pairs_per_s(&on->m) / pairs_per_s(&off->m) : 0;
        }
        report_progress(on);
    }
}

/* What holder metadata in the value costs (an acquire label, as `redlock
 * run` sets), against the same run without, back to back: the median at
 * K=1, throughput at K=128. The request grows; the round trips do not. */
static void run_holder_cost(const bench_masters *ms, const options *o)
{
    static const unsigned flights[] = {1, 128};
    for (size_t i = 0; i < sizeof(flights) / sizeof(flights[0]); i++) {
        unsigned k = flights[i];
        char plain_name[64];
        char holder_name[64];
        snprintf(plain_name, sizeof(plain_name), "library async, K=%u, no holder", k);
        snprintf(holder_name, sizeof(holder_name), "library async, K=%u, holder label", k);
        if (!wanted(plain_name) && !wanted(holder_name))
            continue;
        row *plain = add_row(plain_name, ms->n);
        if (plain == NULL)
            return;
        lib_async_run(ms, &o->lim, k, &plain->m);
        report_progress(plain);
        row *labelled = add_row(holder_name, ms->n);
        if (labelled == NULL)
            return;
        lib_async_labelled_run(ms, &o->lim, k, &labelled->m);
        if (k == 1) {
            labelled->kind = RATIO_HOLDER_MEDIAN;
            double base = samples_quantile_us(&plain->m.pair, 0.5);
            labelled->ratio = base > 0 ? samples_quantile_us(&labelled->m.pair, 0.5) / base : 0;
        } else {
            labelled->kind = RATIO_HOLDER_THROUGHPUT;
            labelled->ratio =
                pairs_per_s(&plain->m) > 0 ? pairs_per_s(&labelled->m) / pairs_per_s(&plain->m) : 0;
        }
        report_progress(labelled);
    }
}

/* The blocking API from T threads; T=32 next to the raw baseline at K=32. */
static void run_blocking(const bench_masters *ms, const options *o, double base_p50,
                         double async1_cpu)
{
    char name[64];
    row *r;
    size_t n = ms->n;
    double t1 = 0;
    static const unsigned thread_counts[] = {1, 2, 4, 8, 16, 32};
    for (size_t i = 0; i < sizeof(thread_counts) / sizeof(thread_counts[0]); i++) {
        snprintf(name, sizeof(name), "library blocking, T=%u", thread_counts[i]);
        if (!wanted(name))
            continue;
        row *raw = NULL;
        if (thread_counts[i] == 32) {
            /* Many threads against as many pairs in flight without threads. */
            raw = add_row("raw, quorum, K=32", n);
            raw_run(ms, &o->lim, true, 32, &raw->m);
            report_progress(raw);
        }
        r = add_row(name, n);
        lib_sync_run(ms, &o->lim, thread_counts[i], &r->m);
        if (thread_counts[i] == 1) {
            t1 = pairs_per_s(&r->m);
            r->kind = RATIO_MEDIAN;
            r->ratio = samples_quantile_us(&r->m.pair, 0.5) / base_p50;
            if (async1_cpu > 0)
                r->cpu_ratio = r->m.cpu_us_per_pair / async1_cpu;
        } else if (raw != NULL) {
            r->kind = RATIO_THROUGHPUT;
            r->ratio = pairs_per_s(&raw->m) > 0 ? pairs_per_s(&r->m) / pairs_per_s(&raw->m) : 0;
            if (raw->m.cpu_us_per_pair > 0)
                r->cpu_ratio = r->m.cpu_us_per_pair / raw->m.cpu_us_per_pair;
        } else {
            r->kind = RATIO_SCALING;
            r->ratio = t1 > 0 ? pairs_per_s(&r->m) / t1 : 0;
        }
        report_progress(r);
    }
}

/* The scenarios against one set of masters. */
static void run_suite(const bench_masters *ms, const options *o, fleet *f)
{
    active_options = o;
    char name[64];
    row *r;
    size_t n = ms->n;

    if (wanted("raw, wait for all, K=1")) {
        r = add_row("raw, wait for all, K=1", n);
        raw_run(ms, &o->lim, false, 1, &r->m);
        report_progress(r);
    }
    row *base = add_row("raw, quorum, K=1", n);
    raw_run(ms, &o->lim, true, 1, &base->m);
    report_progress(base);
    double base_p50 = samples_quantile_us(&base->m.pair, 0.5);

    row *async1 = add_row("library async, K=1", n);
    lib_async_run(ms, &o->lim, 1, &async1->m);
    async1->kind = RATIO_MEDIAN;
    async1->ratio = samples_quantile_us(&async1->m.pair, 0.5) / base_p50;
    report_progress(async1);
    double async1_cpu = async1->m.cpu_us_per_pair;
    if (!wanted("library async, K=1") && !wanted("library blocking"))
        row_count--; /* kept only as the stopped-master run's reference */

    if (wanted("library async fenced, K=1")) {
        /* Fencing tokens: a second round trip per acquire. */
        r = add_row("library async fenced, K=1", n);
        lib_async_fenced_run(ms, &o->lim, 1, f != NULL, &r->m);
        r->kind = RATIO_FENCED;
        double unfenced = samples_quantile_us(&async1->m.acquire, 0.5);
        r->ratio = unfenced > 0 ? samples_quantile_us(&r->m.acquire, 0.5) / unfenced : 0;
        report_progress(r);
    }

    run_blocking(ms, o, base_p50, async1_cpu);

    static const unsigned flights[] = {16, 128};
    for (size_t i = 0; i < sizeof(flights) / sizeof(flights[0]); i++) {
        snprintf(name, sizeof(name), "library async, K=%u", flights[i]);
        if (!wanted(name))
            continue;
        snprintf(name, sizeof(name), "raw, quorum, K=%u", flights[i]);
        row *raw = add_row(name, n);
        raw_run(ms, &o->lim, true, flights[i], &raw->m);
        report_progress(raw);
        snprintf(name, sizeof(name), "library async, K=%u", flights[i]);
        r = add_row(name, n);
        lib_async_run(ms, &o->lim, flights[i], &r->m);
        r->kind = RATIO_THROUGHPUT;
        r->ratio = pairs_per_s(&raw->m) > 0 ? pairs_per_s(&r->m) / pairs_per_s(&raw->m) : 0;
        report_progress(r);
    }

    if (wanted("library contended, C=4")) {
        r = add_row("library contended, C=4", n);
        lib_contended_run(ms, &o->lim, 4, &r->m);
        report_progress(r);
    }

    run_handoff(ms, o);

    if (f != NULL && wanted("library async, K=1, 1 master stopped")) {
        /* One master stopped: the quorum is decided without it. */
        fleet_pause(f, 0);
        r = add_row("library async, K=1, 1 master stopped", n);
        lib_async_run(ms, &o->lim, 1, &r->m);
        r->kind = RATIO_ACQUIRE;
        double up = samples_quantile_us(&async1->m.acquire, 0.5);
        r->ratio = up > 0 ? samples_quantile_us(&r->m.acquire, 0.5) / up : 0;
        report_progress(r);
        fleet_resume(f, 0);
    }
    run_stopped_in_flight(ms, o, f, 32);
    run_clock_cost(ms, o);
    run_holder_cost(ms, o);
}

/* N = 1, 3, 5, 7, 9 masters: the sequential baseline and library. */
static void run_scale(const options *o)
{
    static const size_t sizes[] = {1, 3, 5, 7, 9};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        fleet *f = fleet_start(sizes[i], NULL);
        if (f == NULL)
            continue;
        bench_masters ms;
        bench_masters_from_fleet(f, sizes[i], &ms);
        char name[64];
        snprintf(name, sizeof(name), "scale N=%zu: raw, quorum, K=1", sizes[i]);
        row *base = add_row(name, sizes[i]);
        raw_run(&ms, &o->lim, true, 1, &base->m);
        snprintf(name, sizeof(name), "scale N=%zu: library async, K=1", sizes[i]);
        row *r = add_row(name, sizes[i]);
        lib_async_run(&ms, &o->lim, 1, &r->m);
        r->kind = RATIO_MEDIAN;
        r->ratio = samples_quantile_us(&r->m.pair, 0.5) / samples_quantile_us(&base->m.pair, 0.5);
        report_progress(r);
        fleet_stop(f);
    }
}

static const char *ratio_label(ratio_kind k)
{
    switch (k) {
    case RATIO_MEDIAN:
        return "median vs raw quorum K=1";
    case RATIO_THROUGHPUT:
        return "pairs/s vs raw quorum, same K";
    case RATIO_SCALING:
        return "pairs/s vs T=1";
    case RATIO_ACQUIRE:
        return "acquire median vs all up";
    case RATIO_UP:
        return "pairs/s vs all up, same K";
    case RATIO_FENCED:
        return "acquire median vs unfenced K=1";
    case RATIO_CLOCK_MEDIAN:
        return "median vs clock check off";
    case RATIO_CLOCK_THROUGHPUT:
        return "pairs/s vs clock check off";
    case RATIO_HOLDER_MEDIAN:
        return "median vs no holder";
    case RATIO_HOLDER_THROUGHPUT:
        return "pairs/s vs no holder";
    default:
        return "";
    }
}

static void print_table(FILE *out)
{
    fprintf(out, "%-40s %2s %8s %9s %8s %8s %8s %8s %8s %8s %7s %6s %8s %7s %7s  %s\n",
            "scenario", "N", "pairs", "pairs/s", "p50 us", "p90 us", "p99 us", "p99.9 us",
            "acq p50", "rel p50", "CPU us", "CPU x", "allocs", "B/op", "ratio", "(ratio of)");
    for (size_t i = 0; i < row_count; i++) {
        row *r = &rows[i];
        measurement *m = &r->m;
        char ratio[32] = "";
        char bytes[32] = "";
        char cpu_ratio[32] = "";
        if (r->cpu_ratio > 0)
            snprintf(cpu_ratio, sizeof(cpu_ratio), "%.2f", r->cpu_ratio);
        if (r->kind != RATIO_NONE)
            snprintf(ratio, sizeof(ratio), "%.2f", r->ratio);
        if (m->bytes_in_flight >= 0)
            snprintf(bytes, sizeof(bytes), "%ld", m->bytes_in_flight);
        fprintf(out,
                "%-40s %2zu %8lu %9.0f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %7.1f %6s %8.1f %7s %7s  "
                "%s\n",
                m->name, r->masters, m->pairs, pairs_per_s(m), samples_quantile_us(&m->pair, 0.5),
                samples_quantile_us(&m->pair, 0.9), samples_quantile_us(&m->pair, 0.99),
                samples_quantile_us(&m->pair, 0.999), samples_quantile_us(&m->acquire, 0.5),
                samples_quantile_us(&m->release, 0.5), m->cpu_us_per_pair, cpu_ratio,
                m->allocs_per_pair, bytes, ratio, ratio_label(r->kind));
        if (m->failures)
            fprintf(out, "%-40s    %lu operations failed\n", "", m->failures);
    }
}

/* The hand-off rows' own figures, after the table. */
static void print_handoff(FILE *out, const row *r)
{
    const handoff_figures *h = r->handoff;
    const contender_figures *w = &h->per[h->worst];
    fprintf(out, "\n%s (critical section %d-%d ms, %.1f s):\n", r->m.name, h->hold_min_ms,
            h->hold_max_ms, r->m.seconds);
    fprintf(out, "  hand-off gap (release done to next acquired): p50 %.1f us, p90 %.1f us, "
                 "p99 %.1f us over %lu hand-offs (%lu acquired before the release reported)\n",
            h->gap_p50_us, h->gap_p90_us, h->gap_p99_us, h->gaps, h->overlaps);
    fprintf(out, "  of which to another contender: p50 %.1f us, p90 %.1f us, p99 %.1f us over "
                 "%lu hand-offs\n",
            h->other_p50_us, h->other_p90_us, h->other_p99_us, h->gaps_other);
    fprintf(out, "  busy fraction %.3f, acquisitions %lu, failed acquisitions %lu, "
                 "attempts per acquire %.2f\n",
            h->busy_fraction, h->acquisitions, h->failures, h->attempts_per_acquire);
    fprintf(out, "  worst contender #%u: %lu acquisitions, wait p99 %.1f us, max %.1f us\n",
            h->worst, w->acquisitions, w->wait_p99_us, w->wait_max_us);
    fprintf(out, "  %10s %12s %8s %14s %14s\n", "contender", "acquisitions", "failed",
            "wait p99 us", "wait max us");
    for (unsigned i = 0; i < h->contenders; i++)
        fprintf(out, "  %10u %12lu %8lu %14.1f %14.1f\n", i, h->per[i].acquisitions,
                h->per[i].failures, h->per[i].wait_p99_us, h->per[i].wait_max_us);
}

static void print_handoff_json(FILE *out, const handoff_figures *h)
{
    const contender_figures *w = &h->per[h->worst];
    fprintf(out,
            ",\"handoff\":{\"contenders\":%u,\"hold_min_ms\":%d,\"hold_max_ms\":%d,"
            "\"acquisitions\":%lu,\"failed_acquisitions\":%lu,\"attempts_per_acquire\":%.2f,"
            "\"handoffs\":%lu,"
            "\"acquired_before_release_reported\":%lu,\"gap_p50_us\":%.1f,"
            "\"gap_p90_us\":%.1f,\"gap_p99_us\":%.1f,\"handoffs_to_other\":%lu,"
            "\"other_gap_p50_us\":%.1f,\"other_gap_p90_us\":%.1f,\"other_gap_p99_us\":%.1f,"
            "\"busy_fraction\":%.4f,"
            "\"worst\":{\"contender\":%u,\"acquisitions\":%lu,\"wait_p99_us\":%.1f,"
            "\"wait_max_us\":%.1f},\"per_contender\":[",
            h->contenders, h->hold_min_ms, h->hold_max_ms, h->acquisitions, h->failures,
            h->attempts_per_acquire, h->gaps,
            h->overlaps, h->gap_p50_us, h->gap_p90_us, h->gap_p99_us, h->gaps_other,
            h->other_p50_us, h->other_p90_us, h->other_p99_us, h->busy_fraction, h->worst,
            w->acquisitions, w->wait_p99_us, w->wait_max_us);
    for (unsigned i = 0; i < h->contenders; i++)
        fprintf(out,
                "%s{\"acquisitions\":%lu,\"failed_acquisitions\":%lu,\"wait_p99_us\":%.1f,"
                "\"wait_max_us\":%.1f}",
                i ? "," : "", h->per[i].acquisitions, h->per[i].failures, h->per[i].wait_p99_us,
                h->per[i].wait_max_us);
    fprintf(out, "]}");
}

static void print_json(FILE *out, long leak_growth, unsigned long leak_pairs)
{
    fprintf(out, "{\"rows\":[");
    for (size_t i = 0; i < row_count; i++) {
        row *r = &rows[i];
        measurement *m = &r->m;
        fprintf(out,
                "%s{\"scenario\":\"%s\",\"masters\":%zu,\"pairs\":%lu,\"failures\":%lu,"
                "\"pairs_per_s\":%.1f,\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,"
                "\"p999_us\":%.1f,\"acquire_p50_us\":%.1f,\"release_p50_us\":%.1f,"
                "\"cpu_us_per_pair\":%.2f,\"cpu_ratio\":%.3f,\"allocs_per_pair\":%.2f,"
                "\"bytes_in_flight\":%ld,\"ratio\":%.3f,\"ratio_of\":\"%s\"",
                i ? "," : "", m->name, r->masters, m->pairs, m->failures, pairs_per_s(m),
                samples_quantile_us(&m->pair, 0.5), samples_quantile_us(&m->pair, 0.9),
                samples_quantile_us(&m->pair, 0.99), samples_quantile_us(&m->pair, 0.999),
                samples_quantile_us(&m->acquire, 0.5), samples_quantile_us(&m->release, 0.5),
                m->cpu_us_per_pair, r->cpu_ratio, m->allocs_per_pair, m->bytes_in_flight, r->ratio,
                ratio_label(r->kind));
        if (r->handoff != NULL)
            print_handoff_json(out, r->handoff);
        fprintf(out, "}");
    }
    fprintf(out, "],\"peak_rss_kb\":%ld,\"leak_pairs\":%lu,\"heap_growth_bytes\":%ld}\n",
            bench_peak_rss_kb(), leak_pairs, leak_growth);
}

/* Heap before and after many pairs, once warm: any growth is a leak. */
static long leak_check(const bench_masters *ms, const options *o)
{
    bench_limits lim = {.pairs = o->leak_pairs, .seconds = 3600, .ttl_ms = o->lim.ttl_ms};
    measurement warm = {0};
    bench_limits warm_lim = {.pairs = 20000, .seconds = 60, .ttl_ms = o->lim.ttl_ms};
    lib_async_run(ms, &warm_lim, 128, &warm);
    long before = bench_live_bytes();
    row *r = add_row("leak check: library async, K=128", ms->n);
    lib_async_run(ms, &lim, 128, &r->m);
    long after = bench_live_bytes();
    report_progress(r);
    /* The samples of this row are kept; do not count them as growth. */
    long samples_bytes = (long)((r->m.pair.cap + r->m.acquire.cap + r->m.release.cap) *
                                sizeof(int64_t));
    return after - before - samples_bytes;
}

int main(int argc, char **argv)
{
    options o;
    if (parse_options(argc, argv, &o) != 0)
        return 64;
    bench_masters ms;
    fleet *f = NULL;
    if (o.local > 0) {
        if ((f = fleet_start(o.local, NULL)) == NULL)
            return 70;
        bench_masters_from_fleet(f, o.local, &ms);
    } else if (bench_masters_from_config("redlock-bench", o.config, &ms) != 0) {
        return 78;
    }
    fprintf(stderr, "redlock-bench: libredlock %s, %zu masters, up to %lu pairs or %.0f s per "
                    "scenario\n",
            redlock_version(), ms.n, o.lim.pairs, o.lim.seconds);
    run_suite(&ms, &o, f);
    long growth = 0;
    if (o.leak_pairs > 0)
        growth = leak_check(&ms, &o);
    fleet_stop(f);
    if (o.scale)
        run_scale(&o);

    print_table(stdout);
    for (size_t i = 0; i < row_count; i++)
        if (rows[i].handoff != NULL)
            print_handoff(stdout, &rows[i]);
    printf("peak RSS: %ld kB\n", bench_peak_rss_kb());
    if (o.leak_pairs > 0)
        printf("heap growth over %lu pairs (K=128, after warm-up): %ld bytes\n", o.leak_pairs,
               growth);
    if (o.json)
        print_json(stdout, growth, o.leak_pairs);
    for (size_t i = 0; i < row_count; i++) {
        samples_free(&rows[i].m.pair);
        samples_free(&rows[i].m.acquire);
        samples_free(&rows[i].m.release);
        free(rows[i].handoff);
    }
    return 0;
}
