/* SPDX-License-Identifier: BSD-3-Clause */
/* Latency samples, clocks, CPU time, peak RSS. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

void samples_add(samples *s, int64_t ns)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4096;
        int64_t *v = realloc(s->v, cap * sizeof(*v));
        if (v == NULL)
            return;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = ns;
}

void samples_reserve(samples *s, size_t n)
{
    if (n <= s->cap)
        return;
    int64_t *v = realloc(s->v, n * sizeof(*v));
    if (v != NULL) {
        s->v = v;
        s->cap = n;
    }
}

void measurement_reserve(measurement *m, size_t pairs)
{
    samples_reserve(&m->pair, pairs);
    samples_reserve(&m->acquire, pairs);
    samples_reserve(&m->release, pairs);
}

static int compare(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a;
    int64_t y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

double samples_quantile_us(samples *s, double q)
{
    if (s->n == 0)
        return 0;
    qsort(s->v, s->n, sizeof(*s->v), compare);
    size_t i = (size_t)(q * (double)(s->n - 1) + 0.5);
    return (double)s->v[i] / 1000.0;
}

void samples_free(samples *s)
{
    free(s->v);
    memset(s, 0, sizeof(*s));
}

static int64_t cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec +
           ru.ru_stime.tv_usec;
}

void stopwatch_start(stopwatch *w)
{
    w->allocs = bench_allocations();
    w->cpu_us = cpu_us();
    w->wall_ns = tc_now_ns();
}

void stopwatch_stop(const stopwatch *w, measurement *m)
{
    m->seconds = (double)(tc_now_ns() - w->wall_ns) / 1e9;
    double pairs = m->pairs ? (double)m->pairs : 1;
    m->cpu_us_per_pair = (double)(cpu_us() - w->cpu_us) / pairs;
    m->allocs_per_pair = (double)(bench_allocations() - w->allocs) / pairs;
}

/* A "Vm...:" figure of /proc/self/status, in kB; -1 when unreadable. */
static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t len = strlen(field);
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, field, len) == 0) {
            kb = strtol(line + len, NULL, 10);
            break;
        }
    if (f != NULL)
        fclose(f);
    return kb;
}

long bench_peak_rss_kb(void)
{
    return status_kb("VmHWM:");
}

long bench_rss_kb(void)
{
    return status_kb("VmRSS:");
}

redlock_config *bench_config_default_retry(const bench_masters *masters)
{
    redlock_config *cfg = NULL;
    if (redlock_config_new(&cfg) != REDLOCK_OK)
        return NULL;
    for (size_t i = 0; i < masters->n; i++)
        redlock_config_add_tcp_node(cfg, masters->host[i], masters->port[i], NULL);
    /* Generous timeouts: a loaded machine must not turn into failures. */
    redlock_config_set(cfg, REDLOCK_COMMAND_TIMEOUT_MS, 1000);
    redlock_config_set(cfg, REDLOCK_CONNECT_TIMEOUT_MS, 1000);
    return cfg;
}

redlock_config *bench_config(const bench_masters *masters)
{
    redlock_config *cfg = bench_config_default_retry(masters);
    if (cfg == NULL)
        return NULL;
    redlock_config_set(cfg, REDLOCK_RETRY_DELAY_MS, 1);
    redlock_config_set(cfg, REDLOCK_RETRY_JITTER_MS, 2);
    return cfg;
}
