/* SPDX-License-Identifier: BSD-3-Clause */
/* A stats snapshot in the Prometheus text exposition format, version 0.0.4
 * (redlock_stats_format_prometheus). Counters end in _total, times are in
 * seconds, label values are the library's lower-case names, and every
 * state is an enum-style gauge (one series per state, 1 for the current
 * one) so that no series comes and goes as a state changes. */
#include "redlock/redlock.h"
#include "util/util.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define PROM_PREFIX_MAX 64

/* sizeof(redlock_stats) up to a member: whether the caller's size has it. */
#define PROM_HAS(s, member)                                                                        \
    ((s)->size >= offsetof(redlock_stats, member) + sizeof(((redlock_stats *)0)->member))

/* Text written into buf as far as it goes; pos counts all of it, so that
 * one pass gives the size needed when it does not fit. */
typedef struct prom_out {
    char *buf;
    size_t len;
    size_t pos;
    const char *prefix;
    const redlock_config *cfg;
} prom_out;

static void put(prom_out *o, const char *s, size_t n)
{
    if (o->pos < o->len) {
        size_t room = o->len - o->pos;
        memcpy(o->buf + o->pos, s, n < room ? n : room);
    }
    o->pos += n;
}

static void puts_(prom_out *o, const char *s)
{
    put(o, s, strlen(s));
}

static void putf(prom_out *o, const char *fmt, ...) RL_PRINTF(2, 3);
static void putf(prom_out *o, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n > 0)
        put(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* A label value, escaped as the format asks: backslash, double quote and
 * line feed. */
static void put_label_value(prom_out *o, const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '\\')
            puts_(o, "\\\\");
        else if (*s == '"')
            puts_(o, "\\\"");
        else if (*s == '\n')
            puts_(o, "\\n");
        else
            put(o, s, 1);
    }
}

static void put_name(prom_out *o, const char *name)
{
    putf(o, "%s_%s", o->prefix, name);
}

static void put_header(prom_out *o, const char *name, const char *type, const char *help)
{
    puts_(o, "# HELP ");
    put_name(o, name);
    putf(o, " %s\n# TYPE ", help);
    put_name(o, name);
    putf(o, " %s\n", type);
}

/* `name{master="...",` — the master's name from the config, or its index. */
static void put_master_series(prom_out *o, const char *name, unsigned i)
{
    put_name(o, name);
    puts_(o, "{master=\"");
    const char *node = redlock_config_node_name(o->cfg, i);
    if (node != NULL)
        put_label_value(o, node);
    else
        putf(o, "%u", i);
    puts_(o, "\"");
}

/* n / 10^digits as an exact decimal, without trailing zeros. */
static void put_fixed(prom_out *o, uint64_t n, int digits)
{
    uint64_t scale = 1;
    for (int d = 0; d < digits; d++)
        scale *= 10;
    uint64_t frac = n % scale;
    if (frac == 0) {
        putf(o, "%" PRIu64, n / scale);
        return;
    }
    while (frac % 10 == 0) {
        frac /= 10;
        digits--;
    }
    putf(o, "%" PRIu64 ".%0*" PRIu64, n / scale, digits, frac);
}

/* A histogram in seconds of the library's buckets in 10^-digits seconds
 * (6: microseconds, 3: milliseconds). Bucket b counts values below 2^b
 * units; Prometheus's buckets are cumulative, "le" their upper bound. */
static void put_histogram(prom_out *o, const char *name, int master, const uint64_t *buckets,
                          uint64_t sum, int digits)
{
    char bucket[64];
    char tail[64];
    snprintf(bucket, sizeof(bucket), "%s_bucket", name);
    uint64_t cumulative = 0;
    for (int b = 0; b < REDLOCK_STATS_BUCKETS; b++) {
        cumulative += buckets[b];
        if (master >= 0) {
            put_master_series(o, bucket, (unsigned)master);
            puts_(o, ",le=\"");
        } else {
            put_name(o, bucket);
            puts_(o, "{le=\"");
        }
        if (b < REDLOCK_STATS_BUCKETS - 1)
            put_fixed(o, (uint64_t)1 << b, digits);
        else
            puts_(o, "+Inf");
        putf(o, "\"} %" PRIu64 "\n", cumulative);
    }
    for (int part = 0; part < 2; part++) {
        snprintf(tail, sizeof(tail), "%s_%s", name, part == 0 ? "sum" : "count");
        if (master >= 0) {
            put_master_series(o, tail, (unsigned)master);
            puts_(o, "} ");
        } else {
            put_name(o, tail);
            puts_(o, " ");
        }
        if (part == 0)
            put_fixed(o, sum, digits);
        else
            putf(o, "%" PRIu64, cumulative);
        puts_(o, "\n");
    }
}

/* "ok", "conflict", "noquorum": the status's name, lower case, without
 * REDLOCK_ and an error's E. */
static void put_status_label(prom_out *o, int status)
{
    const char *name = redlock_status_name(status) + strlen("REDLOCK_");
    if (status != REDLOCK_OK)
        name++;
    for (; *name != '\0'; name++) {
        char c = (char)tolower((unsigned char)*name);
        put(o, &c, 1);
    }
}

static void put_client(prom_out *o, const redlock_stats *s)
{
    put_header(o, "acquires_total", "counter", "Acquires completed, by status.");
    for (int i = 0; i < REDLOCK_STATS_STATUSES; i++) {
        if (strcmp(redlock_status_name(-i), "REDLOCK_UNKNOWN") == 0)
            continue;
        put_name(o, "acquires_total");
        puts_(o, "{status=\"");
        put_status_label(o, -i);
        putf(o, "\"} %" PRIu64 "\n", s->acquires[i]);
    }
    const struct {
        const char *name, *type, *help;
        uint64_t value;
    } plain[] = {
        {"extends_total", "counter", "Extends completed OK, auto-extension's included.",
         s->extends},
        {"extend_failures_total", "counter", "Extends that failed, auto-extension's included.",
         s->extend_failures},
        {"auto_extend_failures_total", "counter", "Auto-extension attempts that failed.",
         s->auto_extend_failures},
        {"locks_lost_total", "counter", "Auto-extended locks given up.", s->locks_lost},
        {"releases_total", "counter", "Releases completed OK.", s->releases},
        {"release_failures_total", "counter", "Releases that failed.", s->release_failures},
        {"locks_held", "gauge", "Locks held now.", s->locks_held},
        {"masters", "gauge", "Masters configured.", s->master_count},
    };
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
        put_header(o, plain[i].name, plain[i].type, plain[i].help);
        put_name(o, plain[i].name);
        putf(o, " %" PRIu64 "\n", plain[i].value);
    }
    put_header(o, "hold_seconds", "histogram",
               "How long locks were held, from their acquire to their release, loss or free.");
    put_histogram(o, "hold_seconds", -1, s->hold_ms, s->hold_sum_ms, 3);
}

/* One value per master; field reads it. */
static void put_per_master(prom_out *o, const redlock_stats *s, const char *name,
                           const char *type, const char *help,
                           uint64_t (*field)(const redlock_stats *s, unsigned i))
{
    put_header(o, name, type, help);
    for (unsigned i = 0; i < s->master_count; i++) {
        put_master_series(o, name, i);
        putf(o, "} %" PRIu64 "\n", field(s, i));
    }
}

/* An enum-style gauge: for each master, one series per state name,
 * 1 for its state and 0 for the others. */
static void put_enum(prom_out *o, const redlock_stats *s, const char *name, const char *help,
                     const char *(*name_of)(int state), int count,
                     int (*state)(const redlock_stats *s, unsigned i))
{
    put_header(o, name, "gauge", help);
    for (unsigned i = 0; i < s->master_count; i++) {
        int now = state(s, i);
        for (int v = 0; v < count; v++) {
            put_master_series(o, name, i);
            puts_(o, ",state=\"");
            put_label_value(o, name_of(v));
            putf(o, "\"} %d\n", now == v);
        }
    }
}

static uint64_t requests_of(const redlock_stats *s, unsigned i)
{
    return s->masters[i].requests;
}
static uint64_t late_of(const redlock_stats *s, unsigned i)
{
    return s->masters[i].late;
}
static uint64_t connects_of(const redlock_stats *s, unsigned i)
{
    return s->masters[i].connects;
}
static uint64_t up_of(const redlock_stats *s, unsigned i)
{
    return s->masters[i].state == REDLOCK_CONNECTION_READY;
}
static uint64_t in_flight_of(const redlock_stats *s, unsigned i)
{
    return s->masters[i].in_flight;
}
static uint64_t queued_of(const redlock_stats *s, unsigned i)
{
    return s->masters[i].queued;
}
static uint64_t clock_slow_of(const redlock_stats *s, unsigned i)
{
    return s->clocks[i].slow;
}
static uint64_t excluded_seconds_of(const redlock_stats *s, unsigned i)
{
    /* Whole seconds, rounded up: 0 only when it counts. */
    return s->restarts[i].excluded_ms > 0 ? (uint64_t)(s->restarts[i].excluded_ms + 999) / 1000
                                          : 0;
}
static int connection_of(const redlock_stats *s, unsigned i)
{
    return s->masters[i].state;
}
static int clock_of(const redlock_stats *s, unsigned i)
{
    return s->clocks[i].state;
}
static int restart_of(const redlock_stats *s, unsigned i)
{
    return s->restarts[i].state;
}

static const char *restart_state_name(int state)
{
    switch (state) {
    case REDLOCK_RESTART_COUNTS:
        return "counts";
    case REDLOCK_RESTART_EXCLUDED:
        return "excluded";
    default:
        return "unknown";
    }
}

static void put_masters(prom_out *o, const redlock_stats *s)
{
    put_per_master(o, s, "master_up", "gauge", "1 when the connection to the master is ready.",
                   up_of);
    put_enum(o, s, "master_state", "The connection to the master: 1 for its state now.",
             redlock_connection_state_name, REDLOCK_CONNECTION_CLOSING + 1, connection_of);
    put_per_master(o, s, "master_connects_total", "counter",
                   "Connections made ready: the first, then reconnects.", connects_of);
    put_per_master(o, s, "master_requests_total", "counter", "Requests written to the master.",
                   requests_of);
    put_header(o, "master_outcomes_total", "counter",
               "Requests by outcome, each once as its operation counted it.");
    for (unsigned i = 0; i < s->master_count; i++)
        for (int v = 0; v < REDLOCK_STATS_OUTCOMES; v++) {
            const char *outcome = redlock_master_outcome_name(v);
            if (strcmp(outcome, "unknown") == 0)
                continue;
            put_master_series(o, "master_outcomes_total", i);
            puts_(o, ",outcome=\"");
            put_label_value(o, outcome);
            putf(o, "\"} %" PRIu64 "\n", s->masters[i].outcomes[v]);
        }
    put_per_master(o, s, "master_late_replies_total", "counter",
                   "Replies after their deadline (counted as timeouts).", late_of);
    put_per_master(o, s, "master_in_flight", "gauge", "Requests sent and not answered.",
                   in_flight_of);
    put_per_master(o, s, "master_queued", "gauge", "Requests waiting in the client to be sent.",
                   queued_of);
    put_header(o, "master_latency_seconds", "histogram", "Reply latency, from send to reply.");
    for (unsigned i = 0; i < s->master_count; i++)
        put_histogram(o, "master_latency_seconds", (int)i, s->masters[i].latency_us,
                      s->masters[i].latency_sum_us, 6);
    if (PROM_HAS(s, restarts)) {
        put_enum(o, s, "master_restart_state",
                 "Whether the master's OKs count for its restart: 1 for its state now.",
                 restart_state_name, REDLOCK_RESTART_EXCLUDED + 1, restart_of);
        put_per_master(o, s, "master_restart_excluded_seconds", "gauge",
                       "Seconds until a restarted master's OKs count; 0 when they do.",
                       excluded_seconds_of);
    }
    if (PROM_HAS(s, clocks)) {
        put_enum(o, s, "master_clock_state",
                 "The clock check's verdict on the master's expiry clock: 1 for it now.",
                 redlock_clock_state_name, REDLOCK_CLOCK_FAST + 1, clock_of);
        put_per_master(o, s, "master_clock_slow", "gauge",
                       "1 when the master's clock was proven slow (its keys live longer).",
                       clock_slow_of);
    }
}

static bool prefix_valid(const char *p)
{
    size_t n = strlen(p);
    if (n == 0 || n > PROM_PREFIX_MAX || isdigit((unsigned char)p[0]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(isalnum((unsigned char)p[i]) || p[i] == '_') || (unsigned char)p[i] > 127)
            return false;
    return true;
}

int redlock_stats_format_prometheus(const redlock_stats *stats, const redlock_config *cfg,
                                    const char *prefix, char *buf, size_t len, size_t *needed)
{
    if (prefix == NULL)
        prefix = "redlock";
    if (stats == NULL || (buf == NULL && len > 0) || !prefix_valid(prefix) ||
        !PROM_HAS(stats, masters) || stats->master_count > REDLOCK_MAX_NODES)
        return REDLOCK_EINVAL;
    prom_out o = {.buf = buf, .len = len, .prefix = prefix, .cfg = cfg};
    put_client(&o, stats);
    put_masters(&o, stats);
    if (needed != NULL)
        *needed = o.pos + 1;
    if (o.pos + 1 > len) {
        if (len > 0)
            buf[0] = '\0'; /* never a truncated exposition */
        return REDLOCK_ENOSPC;
    }
    buf[o.pos] = '\0';
    return REDLOCK_OK;
}
