/* SPDX-License-Identifier: BSD-3-Clause */
/* What redlock-hold-bench prints: a table of figures, or one JSON object. */
#include "hold.h"

#include <stdarg.h>
#include <string.h>

#define LABEL_WIDTH 46

static double ms_q(samples *s, double q)
{
    return samples_quantile_us(s, q) / 1000.0;
}

static double per_lock(long delta, unsigned long locks)
{
    return locks > 0 ? (double)delta / (double)locks : 0;
}

static double rss_bytes_per_lock(const hold_figures *f)
{
    return per_lock((f->rss_held_kb - f->rss_before_kb) * 1024, f->acquired);
}

static double cpu_us_per_lock_s(const hold_figures *f)
{
    return f->lock_seconds > 0 ? f->hold_cpu_s * 1e6 / f->lock_seconds : 0;
}

/* The masters' CPU per lock extended in the hold, per master, in us; -1
 * when not measured, *why saying why. */
static double masters_cpu_us_per_extend(const hold_figures *f, const char **why)
{
    if (!f->masters_cpu_read)
        *why = f->masters_cpu_why_not;
    else if (!f->hold_extends_read)
        *why = "the client's extends could not be read";
    else if (f->hold_extends == 0 || f->masters == 0)
        *why = "no lock extended in the hold";
    else
        return f->masters_cpu_s * 1e6 / ((double)f->hold_extends * (double)f->masters);
    return -1;
}

/* A side's cost per lock extended, in us: EVALSHA's time, or the
 * server's CPU; -1 when not measured. */
static double script_us_per_lock(const hold_script_cost *c, const script_cost_side *s, bool cpu)
{
    if (!c->measured || s->locks == 0)
        return -1;
    return (cpu ? s->cpu_s * 1e6 : (double)s->usec) / (double)s->locks;
}

/* Batched against single, per lock; -1 when not measured. */
static double script_ratio(const hold_script_cost *c, bool cpu)
{
    double single = script_us_per_lock(c, &c->single, cpu);
    double batch = script_us_per_lock(c, &c->batch, cpu);
    return single > 0 && batch >= 0 ? batch / single : -1;
}

static unsigned long lost_total(const hold_figures *f)
{
    return f->lost_acquiring + f->lost_holding + f->lost_releasing;
}

/* ---- Text --------------------------------------------------------------- */

static void row(FILE *out, const char *label, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(out, "  %-*s ", LABEL_WIDTH, label);
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    va_end(ap);
}

/* "REDLOCK_ENOQUORUM 12, REDLOCK_EEXPIRED 3", or "-". */
static void by_status(char *buf, size_t size, const unsigned long *counts)
{
    buf[0] = '\0';
    size_t used = 0;
    for (int i = 0; i < HOLD_STATUSES && used + 1 < size; i++) {
        if (counts[i] == 0)
            continue;
        int n = snprintf(buf + used, size - used, "%s%s %lu", used ? ", " : "",
                         redlock_status_name(-i), counts[i]);
        if (n > 0)
            used += (size_t)n;
    }
    if (used == 0)
        snprintf(buf, size, "-");
}

static void print_lag(FILE *out, const char *label, samples *s)
{
    if (s->n == 0)
        row(out, label, "-");
    else
        row(out, label, "p99 %.2f ms, max %.2f ms (%zu ticks)", ms_q(s, 0.99), ms_q(s, 1.0),
            s->n);
}

static void print_acquire(FILE *out, const hold_figures *f)
{
    char st[256];
    by_status(st, sizeof(st), f->acquire_status);
    row(out, "locks acquired", "%lu of %lu (%lu failed: %s; %lu not started)", f->acquired,
        f->locks, f->acquire_failed, st, f->not_started);
    row(out, "time to acquire all", "%.2f s", f->acquire_seconds);
    row(out, "acquire rate", "%.0f locks/s",
        f->acquire_seconds > 0 ? (double)f->acquired / f->acquire_seconds : 0);
    row(out, "attempts per acquire", "%.2f",
        (double)f->attempts / (double)(f->acquired + f->acquire_failed > 0
                                           ? f->acquired + f->acquire_failed
                                           : 1));
    row(out, "client CPU per acquire", "%.1f us", f->acquire_cpu_us_per_lock);
    if (f->overload_retries > 0)
        row(out, "acquires refused as overloaded", "%lu, each started again after a 20 ms "
            "pause (REDLOCK_EOVERLOAD: the extensions were behind)", f->overload_retries);
    if (f->auto_extend_refused > 0)
        row(out, "auto-extension refused", "%lu locks", f->auto_extend_refused);
}

static void print_memory(FILE *out, const hold_figures *f)
{
    row(out, "client RSS before / all held / hold's end", "%.1f / %.1f / %.1f MB",
        (double)f->rss_before_kb / 1024, (double)f->rss_held_kb / 1024,
        (double)f->rss_hold_end_kb / 1024);
    row(out, "client RSS peak (VmHWM) / after release", "%.1f / %.1f MB",
        (double)f->rss_peak_kb / 1024, (double)f->rss_after_kb / 1024);
    row(out, "RSS per lock, all acquired", "%.0f B", rss_bytes_per_lock(f));
    row(out, "heap per lock, all acquired",
        "%.0f B (heap before %.1f MB, held %.1f MB, after %.1f MB)",
        per_lock(f->heap_held - f->heap_before, f->acquired), (double)f->heap_before / 1048576,
        (double)f->heap_held / 1048576, (double)f->heap_after / 1048576);
    row(out, "heap at its most in the hold", "%.1f MB, %.0f B per acquired lock (sampled "
        "every 10 ms)", (double)f->heap_hold_max / 1048576,
        per_lock(f->heap_hold_max - f->heap_before, f->acquired));
}

static void print_masters_cpu(FILE *out, const hold_figures *f)
{
    if (f->masters_cpu_read)
        row(out, "masters' CPU in the hold", "%.3f s (summed over %zu masters; INFO cpu at the "
            "hold's start and end)", f->masters_cpu_s, f->masters);
    else
        row(out, "masters' CPU in the hold", "- (%s)", f->masters_cpu_why_not);
    if (f->hold_extends_read)
        row(out, "extends in the hold", "%llu (the client's count)",
            (unsigned long long)f->hold_extends);
    else
        row(out, "extends in the hold", "- (the client's count could not be read)");
    const char *why = NULL;
    double us = masters_cpu_us_per_extend(f, &why);
    if (us < 0)
        row(out, "masters' CPU per extended lock and master", "- (%s)", why);
    else
        row(out, "masters' CPU per extended lock and master", "%.2f us", us);
}

static void print_hold(FILE *out, hold_figures *f)
{
    row(out, "held when the hold began", "%lu locks, for %.1f s", f->held_at_start,
        f->hold_seconds);
    row(out, "client CPU per lock-second held", "%.2f us (%.2f s CPU, %.0f lock-seconds, %.1f%% "
        "of a core)", cpu_us_per_lock_s(f), f->hold_cpu_s, f->lock_seconds,
        f->hold_seconds > 0 ? 100 * f->hold_cpu_s / f->hold_seconds : 0);
    print_lag(out, "loop lag in the hold", &f->lag_hold);
    print_lag(out, "loop lag while acquiring", &f->lag_acquire);
    print_lag(out, "loop lag while releasing", &f->lag_release);
    if (f->ext_mean_per_s < 0) {
        row(out, "extension requests/s", "- (fewer than two readings after the first cycle)");
    } else {
        row(out, "extension requests/s: mean / theory", "%.0f / %.0f = %.2f (K*N/(TTL/3); over "
            "%.1f s; the client's requests, a batch counting each lock)", f->ext_mean_per_s,
            f->ext_theory_per_s,
            f->ext_theory_per_s > 0 ? f->ext_mean_per_s / f->ext_theory_per_s : 0,
            f->ext_window_s);
        row(out, "extension requests/s: busiest reading", "%.0f (busiest/mean %.2f; a reading "
            "every %.2f s)", f->ext_busiest_per_s,
            f->ext_mean_per_s > 0 ? f->ext_busiest_per_s / f->ext_mean_per_s : 0,
            f->probe_period_s);
        fprintf(out, "    per reading, thousands/s:");
        for (size_t i = 0; i < f->ext_seconds; i++)
            fprintf(out, " %.1f", f->ext_series[i] / 1000);
        fputc('\n', out);
    }
    if (f->calls_mean_per_s >= 0)
        row(out, "masters' script calls/s: mean / busiest", "%.0f / %.0f (INFO commandstats; a "
            "batch is one call)", f->calls_mean_per_s, f->calls_busiest_per_s);
    if (f->probe_failures > 0)
        row(out, "master readings without an answer", "%lu", f->probe_failures);
    print_masters_cpu(out, f);
    if (f->pttl_min_ms < 0)
        row(out, "least PTTL of the sample", "- (%zu keys, %lu reads, %lu absent)", f->sample_keys,
            f->pttl_reads, f->pttl_absent);
    else
        row(out, "least PTTL of the sample", "%lld ms of %lld (%zu keys, %lu reads, %lu absent)",
            (long long)f->pttl_min_ms, (long long)f->ttl_ms, f->sample_keys, f->pttl_reads,
            f->pttl_absent);
}

/* What the keys of lost locks showed afterwards. */
static void print_lost_watch(FILE *out, const hold_lost_figures *w)
{
    if (!w->measured) {
        row(out, "  sent after the report", "- (the watch did not start)");
        return;
    }
    if (w->checked == 0)
        return;
    char latest[64] = "none proven";
    if (w->present > 0)
        snprintf(latest, sizeof(latest), "latest proven %+.2f s from the report",
                 (double)w->latest_after_ns / 1e9);
    row(out, "  extended over 1 s after the report", "%lu keys of %lu locks watched (%s; "
        "PTTL at 1.5 and 3 s on every master: %lu there, %lu gone, %lu unanswered)",
        w->extended_late, w->checked, latest, w->present, w->gone, w->errors);
}

static void print_end(FILE *out, const hold_figures *f)
{
    char st[256];
    by_status(st, sizeof(st), f->lost_status);
    row(out, "locks lost", "%lu: %s", lost_total(f), st);
    row(out, "  lost while acquiring / holding / releasing", "%lu / %lu / %lu", f->lost_acquiring,
        f->lost_holding, f->lost_releasing);
    if (f->first_loss_s >= 0)
        row(out, "  first loss in the hold", "after %.2f s", f->first_loss_s);
    if (lost_total(f) > 0)
        row(out, "  validity left at the report", "least %lld ms (%lu reported with none left)",
            (long long)f->lost_validity_min_ms, f->lost_without_validity);
    print_lost_watch(out, &f->lost_watch);
    by_status(st, sizeof(st), f->release_status);
    row(out, "released", "%lu in %.2f s (%lu failed: %s)", f->released, f->release_seconds,
        f->release_failed, st);
    if (f->keys_left < 0)
        row(out, "keys left on the masters", "- (could not count)");
    else
        row(out, "keys left on the masters", "%ld", f->keys_left);
    row(out, "client: extends ok / failed", "%llu / %llu (auto-extension retries %llu)",
        (unsigned long long)f->extends, (unsigned long long)f->extend_failures,
        (unsigned long long)f->auto_extend_failures);
    row(out, "client: requests to masters", "%llu (ok %llu, held or absent %llu, timeout %llu, "
        "not-connected %llu, other %llu; late replies %llu)", (unsigned long long)f->requests,
        (unsigned long long)f->outcome_ok, (unsigned long long)f->outcome_held_absent,
        (unsigned long long)f->outcome_timeout,
        (unsigned long long)f->outcome_not_connected, (unsigned long long)f->outcome_other,
        (unsigned long long)f->late);
    row(out, "client: connections made", "%llu (to %zu masters)",
        (unsigned long long)f->connects, f->masters);
}

static void print_script_cost_row(FILE *out, const char *label, const hold_script_cost *c,
                                  bool cpu)
{
    double ratio = script_ratio(c, cpu);
    if (ratio < 0)
        row(out, label, "single %.2f us, batch %.2f us, batch/single -",
            script_us_per_lock(c, &c->single, cpu), script_us_per_lock(c, &c->batch, cpu));
    else
        row(out, label, "single %.2f us, batch %.2f us, batch/single %.2f",
            script_us_per_lock(c, &c->single, cpu), script_us_per_lock(c, &c->batch, cpu),
            ratio);
}

/* The script-free extension against the single script call, per lock;
 * -1 when not measured. */
static double plain_ratio(const hold_script_cost *c, bool cpu)
{
    double single = script_us_per_lock(c, &c->single, cpu);
    double plain = c->has_plain ? script_us_per_lock(c, &c->plain, cpu) : -1;
    return single > 0 && plain >= 0 ? plain / single : -1;
}

/* The script-free acquire+release pair against the scripted one; -1
 * when not measured. */
static double pair_ratio(const hold_script_cost *c, bool cpu)
{
    double script = script_us_per_lock(c, &c->pair_script, cpu);
    double plain = c->has_plain_release ? script_us_per_lock(c, &c->pair_plain, cpu) : -1;
    return script > 0 && plain >= 0 ? plain / script : -1;
}

static void print_script_cost(FILE *out, const hold_script_cost *c)
{
    const char *label = "extend scripts on master 0, per lock";
    if (!c->measured)
        row(out, label, "- (%s)", c->why_not);
    else
        row(out, label, "%zu plain keys x %u rounds: a call a lock, then calls of %u locks, "
            "alternating (%.2f s)", c->keys, c->rounds, c->groups, c->seconds);
    if (c->measured) {
        print_script_cost_row(out, "  EVALSHA time (commandstats usec)", c, false);
        print_script_cost_row(out, "  server CPU (INFO cpu)", c, true);
        if (c->has_plain)
            row(out, "  without a script (SET IFEQ)",
                "SET time %.2f us, server CPU %.2f us; CPU/single script %.2f",
                script_us_per_lock(c, &c->plain, false), script_us_per_lock(c, &c->plain, true),
                plain_ratio(c, true));
        else
            row(out, "  without a script (SET IFEQ)", "- (master 0 lacks SET ... IFEQ)");
        row(out, "acquire+release pairs, per pair", "%zu keys x %u rounds: SET NX PX then the "
            "release, as the library sends them", c->keys, c->rounds);
        row(out, "  with the release script", "commands' time %.2f us, server CPU %.2f us",
            script_us_per_lock(c, &c->pair_script, false),
            script_us_per_lock(c, &c->pair_script, true));
        if (c->has_plain_release)
            row(out, "  without a script (DELIFEQ)",
                "commands' time %.2f us, server CPU %.2f us; CPU/script %.2f",
                script_us_per_lock(c, &c->pair_plain, false),
                script_us_per_lock(c, &c->pair_plain, true), pair_ratio(c, true));
        else
            row(out, "  without a script (DELIFEQ)", "- (master 0 lacks DELIFEQ)");
    }
    if (!c->keys_deleted)
        row(out, "  its keys", "not all deleted: they expire within 60 s");
}

/* The length of a command's kind: its first two words. */
static int kind_len(const char *text)
{
    const char *space = strchr(text, ' ');
    space = space ? strchr(space + 1, ' ') : NULL;
    return (int)(space ? (size_t)(space - text) : strlen(text));
}

/* Whether two commands are of the same kind, to fold. */
static bool same_kind(const char *a, const char *b)
{
    size_t la = (size_t)kind_len(a);
    return strncmp(a, b, la) == 0 && (b[la] == ' ' || b[la] == '\0');
}

/* One line per turn of one connection; repeats of a kind folded. */
static void print_connection(FILE *out, const hold_rtt *r, unsigned master, unsigned conn)
{
    long turn = -1;
    size_t k = 0;
    while (k < r->ncommands) {
        const proxy_command *c = &r->commands[k];
        if (c->master != master || c->conn != conn) {
            k++;
            continue;
        }
        if ((long)c->turn != turn) {
            fprintf(out, "%s      turn %u:", turn >= 0 ? "\n" : "", c->turn);
            turn = c->turn;
        }
        size_t same = 1;
        while (k + same < r->ncommands && r->commands[k + same].master == master &&
               r->commands[k + same].conn == conn && r->commands[k + same].turn == c->turn &&
               same_kind(c->text, r->commands[k + same].text))
            same++;
        if (same > 1) /* the kind alone: the first two words */
            fprintf(out, " %.*s x%zu;", kind_len(c->text), c->text, same);
        else
            fprintf(out, " %s;", c->text);
        k += same;
    }
    if (turn >= 0)
        fputc('\n', out);
}

static void print_rtt(FILE *out, const hold_rtt *r, size_t masters)
{
    const char *label = "round trips before the acquire";
    if (!r->measured) {
        row(out, label, "- (%s: %s)", r->name, r->why_not);
        return;
    }
    char turns[32];
    if (r->before_min == r->before_max)
        snprintf(turns, sizeof(turns), "%d", r->before_min);
    else
        snprintf(turns, sizeof(turns), "%d to %d", r->before_min, r->before_max);
    row(out, label, "%s: %s (%u of %zu masters; the tool ran %.3f s)", r->name, turns,
        r->masters_asked, masters, r->seconds);
    row(out, "  the acquire", "%s", r->first_request);
    fprintf(out, "    what it sent, by master, connection and turn (turn t: after t replies):\n");
    for (unsigned m = 0; m < masters; m++) {
        for (size_t k = 0; k < r->ncommands; k++) {
            const proxy_command *c = &r->commands[k];
            bool shown = c->master != m;
            for (size_t j = 0; j < k && !shown; j++)
                shown = r->commands[j].master == m && r->commands[j].conn == c->conn;
            if (shown)
                continue;
            fprintf(out, "    master %u, connection %u:\n", m, c->conn);
            print_connection(out, r, m, c->conn);
        }
    }
}

void hold_print_text(FILE *out, const hold_options *o, hold_figures *f)
{
    fprintf(out, "redlock-hold-bench: libredlock %s, %zu masters, %lu locks, TTL %lld ms, "
                 "hold %.1f s, acquire rate %s, %u in flight\n",
            redlock_version(), f->masters, f->locks, (long long)f->ttl_ms, f->hold_seconds_asked,
            o->acquire_rate > 0 ? "paced" : "unpaced", o->in_flight);
    print_acquire(out, f);
    print_memory(out, f);
    print_hold(out, f);
    print_end(out, f);
    print_script_cost(out, &f->script_cost);
    for (int i = 0; i < HOLD_RTT_RUNS; i++)
        print_rtt(out, &f->rtt[i], f->masters);
}

/* ---- JSON --------------------------------------------------------------- */

static void json_statuses(FILE *out, const char *name, const unsigned long *counts)
{
    fprintf(out, ",\"%s\":{", name);
    bool first = true;
    for (int i = 0; i < HOLD_STATUSES; i++) {
        if (counts[i] == 0)
            continue;
        fprintf(out, "%s\"%s\":%lu", first ? "" : ",", redlock_status_name(-i), counts[i]);
        first = false;
    }
    fputc('}', out);
}

static void json_lag(FILE *out, const char *name, samples *s)
{
    fprintf(out, ",\"%s\":{\"ticks\":%zu,\"p99_ms\":%.3f,\"max_ms\":%.3f}", name, s->n,
            ms_q(s, 0.99), ms_q(s, 1.0));
}

/* Command texts are printable ASCII (hold_proxy.c): only quotes and
 * backslashes need escaping. */
static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void json_rtt(FILE *out, const hold_rtt *r)
{
    fprintf(out, "{\"run\":");
    json_string(out, r->name);
    fprintf(out, ",\"measured\":%s,\"before_acquire_min\":%d,\"before_acquire_max\":%d,"
                 "\"masters_asked\":%u,\"exit_status\":%d,\"seconds\":%.4f,\"acquire\":",
            r->measured ? "true" : "false", r->before_min, r->before_max, r->masters_asked,
            r->exit_status, r->seconds);
    json_string(out, r->first_request);
    fprintf(out, ",\"why_not\":");
    json_string(out, r->why_not);
    fprintf(out, ",\"commands\":[");
    for (size_t k = 0; k < r->ncommands; k++) {
        const proxy_command *c = &r->commands[k];
        fprintf(out, "%s{\"master\":%u,\"connection\":%u,\"turn\":%u,\"command\":",
                k ? "," : "", c->master, c->conn, c->turn);
        json_string(out, c->text);
        fputc('}', out);
    }
    fprintf(out, "]}");
}

/* A figure with so many decimals, or null when not measured (negative). */
static void json_number(FILE *out, int decimals, double v)
{
    if (v < 0)
        fprintf(out, "null");
    else
        fprintf(out, "%.*f", decimals, v);
}

static void json_figure(FILE *out, const char *name, int decimals, double v)
{
    fprintf(out, ",\"%s\":", name);
    json_number(out, decimals, v);
}

static void json_masters_cpu(FILE *out, const hold_figures *f)
{
    const char *why = "";
    double us = masters_cpu_us_per_extend(f, &why);
    fprintf(out, ",\"masters_cpu\":{\"measured\":%s", us >= 0 ? "true" : "false");
    json_figure(out, "hold_s", 6, f->masters_cpu_read ? f->masters_cpu_s : -1);
    json_figure(out, "extends", 0, f->hold_extends_read ? (double)f->hold_extends : -1);
    json_figure(out, "us_per_extend_and_master", 3, us);
    fprintf(out, ",\"why_not\":");
    json_string(out, us >= 0 ? "" : why);
    fputc('}', out);
}

static void json_script_side(FILE *out, const char *name, const char *time_name,
                             const hold_script_cost *c, const script_cost_side *s)
{
    fprintf(out, ",\"%s\":{\"calls\":%lld,\"locks\":%llu", name,
            (long long)s->calls, (unsigned long long)s->locks);
    json_figure(out, time_name, 3, script_us_per_lock(c, s, false));
    json_figure(out, "cpu_us_per_lock", 3, script_us_per_lock(c, s, true));
    fputc('}', out);
}

static void json_script_cost(FILE *out, const hold_script_cost *c)
{
    fprintf(out, ",\"script_cost\":{\"measured\":%s,\"master\":0,\"keys\":%zu,\"rounds\":%u,"
                 "\"locks_per_batch_call\":%u,\"seconds\":%.3f,\"keys_deleted\":%s",
            c->measured ? "true" : "false", c->keys, c->rounds, c->groups, c->seconds,
            c->keys_deleted ? "true" : "false");
    json_script_side(out, "single", "evalsha_us_per_lock", c, &c->single);
    json_script_side(out, "batch", "evalsha_us_per_lock", c, &c->batch);
    fprintf(out, ",\"has_set_ifeq\":%s", c->has_plain ? "true" : "false");
    json_script_side(out, "script_free", "set_us_per_lock", c, &c->plain);
    fprintf(out, ",\"batch_over_single\":{\"evalsha_us\":");
    json_number(out, 3, script_ratio(c, false));
    json_figure(out, "cpu_us", 3, script_ratio(c, true));
    fprintf(out, "},\"script_free_over_single\":{\"cpu_us\":");
    json_number(out, 3, plain_ratio(c, true));
    fprintf(out, "},\"has_delifeq\":%s", c->has_plain_release ? "true" : "false");
    json_script_side(out, "pair_script", "commands_us_per_pair", c, &c->pair_script);
    json_script_side(out, "pair_script_free", "commands_us_per_pair", c, &c->pair_plain);
    fprintf(out, ",\"pair_script_free_over_script\":{\"cpu_us\":");
    json_number(out, 3, pair_ratio(c, true));
    fprintf(out, "},\"why_not\":");
    json_string(out, c->why_not);
    fputc('}', out);
}

static void json_hold(FILE *out, hold_figures *f)
{
    fprintf(out, ",\"held_at_hold_start\":%lu,\"hold_seconds\":%.3f,\"lock_seconds\":%.1f,"
                 "\"hold_cpu_s\":%.3f,\"cpu_us_per_lock_second\":%.3f",
            f->held_at_start, f->hold_seconds, f->lock_seconds, f->hold_cpu_s,
            cpu_us_per_lock_s(f));
    json_lag(out, "lag_hold", &f->lag_hold);
    json_lag(out, "lag_acquire", &f->lag_acquire);
    json_lag(out, "lag_release", &f->lag_release);
    fprintf(out, ",\"extensions\":{\"reading_period_s\":%.3f,\"window_s\":%.3f,"
                 "\"mean_per_s\":%.1f,\"theory_per_s\":%.1f,\"busiest_per_s\":%.1f,"
                 "\"busiest_over_mean\":%.3f,\"per_second\":[",
            f->probe_period_s, f->ext_window_s, f->ext_mean_per_s, f->ext_theory_per_s,
            f->ext_busiest_per_s,
            f->ext_mean_per_s > 0 ? f->ext_busiest_per_s / f->ext_mean_per_s : 0);
    for (size_t i = 0; i < f->ext_seconds; i++)
        fprintf(out, "%s%.1f", i ? "," : "", f->ext_series[i]);
    fprintf(out, "],\"script_calls_mean_per_s\":%.1f,\"script_calls_busiest_per_s\":%.1f,"
                 "\"readings_without_answer\":%lu}",
            f->calls_mean_per_s, f->calls_busiest_per_s, f->probe_failures);
    json_masters_cpu(out, f);
    fprintf(out, ",\"pttl\":{\"sample_keys\":%zu,\"reads\":%lu,\"absent\":%lu,\"min_ms\":%lld}",
            f->sample_keys, f->pttl_reads, f->pttl_absent, (long long)f->pttl_min_ms);
}

void hold_print_json(FILE *out, const hold_options *o, hold_figures *f)
{
    fprintf(out, "{\"version\":\"%s\",\"masters\":%zu,\"locks\":%lu,\"ttl_ms\":%lld,"
                 "\"hold_seconds_asked\":%.3f,\"acquire_rate\":%.1f,\"in_flight\":%u",
            redlock_version(), f->masters, f->locks, (long long)f->ttl_ms, f->hold_seconds_asked,
            o->acquire_rate, o->in_flight);
    fprintf(out, ",\"acquired\":%lu,\"acquire_failed\":%lu,\"not_started\":%lu,\"attempts\":%lu,"
                 "\"auto_extend_refused\":%lu,\"overload_retries\":%lu,"
                 "\"acquire_seconds\":%.3f,"
                 "\"acquire_cpu_us_per_lock\":%.2f",
            f->acquired, f->acquire_failed, f->not_started, f->attempts, f->auto_extend_refused,
            f->overload_retries, f->acquire_seconds, f->acquire_cpu_us_per_lock);
    json_statuses(out, "acquire_failures", f->acquire_status);
    fprintf(out, ",\"rss_kb\":{\"before\":%ld,\"held\":%ld,\"hold_end\":%ld,\"peak\":%ld,"
                 "\"after_release\":%ld},\"rss_bytes_per_lock\":%.1f,"
                 "\"heap_bytes\":{\"before\":%ld,\"held\":%ld,\"hold_max\":%ld,"
                 "\"after_release\":%ld},\"heap_bytes_per_lock\":%.1f,"
                 "\"heap_hold_max_bytes_per_lock\":%.1f",
            f->rss_before_kb, f->rss_held_kb, f->rss_hold_end_kb, f->rss_peak_kb, f->rss_after_kb,
            rss_bytes_per_lock(f), f->heap_before, f->heap_held, f->heap_hold_max,
            f->heap_after,
            per_lock(f->heap_held - f->heap_before, f->acquired),
            per_lock(f->heap_hold_max - f->heap_before, f->acquired));
    json_hold(out, f);
    fprintf(out, ",\"lost\":{\"total\":%lu,\"acquiring\":%lu,\"holding\":%lu,\"releasing\":%lu,"
                 "\"first_in_hold_s\":%.3f",
            lost_total(f), f->lost_acquiring, f->lost_holding, f->lost_releasing,
            f->first_loss_s);
    fprintf(out, ",\"validity_min_ms\":%lld,\"without_validity\":%lu",
            (long long)f->lost_validity_min_ms, f->lost_without_validity);
    const hold_lost_figures *w = &f->lost_watch;
    if (w->measured)
        fprintf(out, ",\"watch\":{\"checked\":%lu,\"present\":%lu,\"gone\":%lu,\"errors\":%lu,"
                     "\"extended_late\":%lu,\"latest_after_s\":%.3f}",
                w->checked, w->present, w->gone, w->errors, w->extended_late,
                w->present > 0 ? (double)w->latest_after_ns / 1e9 : 0.0);
    json_statuses(out, "by_status", f->lost_status);
    fprintf(out, "},\"released\":%lu,\"release_failed\":%lu,\"release_seconds\":%.3f",
            f->released, f->release_failed, f->release_seconds);
    json_statuses(out, "release_failures", f->release_status);
    fprintf(out, ",\"keys_left\":%ld,\"client\":{\"extends\":%llu,\"extend_failures\":%llu,"
                 "\"auto_extend_failures\":%llu,\"locks_lost\":%llu,\"requests\":%llu,"
                 "\"ok\":%llu,\"held_or_absent\":%llu,\"timeout\":%llu,"
                 "\"not_connected\":%llu,\"other\":%llu,"
                 "\"late\":%llu,\"connects\":%llu}",
            f->keys_left, (unsigned long long)f->extends, (unsigned long long)f->extend_failures,
            (unsigned long long)f->auto_extend_failures, (unsigned long long)f->lib_locks_lost,
            (unsigned long long)f->requests, (unsigned long long)f->outcome_ok,
            (unsigned long long)f->outcome_held_absent, (unsigned long long)f->outcome_timeout,
            (unsigned long long)f->outcome_not_connected, (unsigned long long)f->outcome_other,
            (unsigned long long)f->late, (unsigned long long)f->connects);
    json_script_cost(out, &f->script_cost);
    fprintf(out, ",\"round_trips\":[");
    for (int i = 0; i < HOLD_RTT_RUNS; i++) {
        if (i > 0)
            fputc(',', out);
        json_rtt(out, &f->rtt[i]);
    }
    fprintf(out, "]}\n");
}
