/* SPDX-License-Identifier: BSD-3-Clause */
/* redlock-hold-bench: how one asynchronous client copes with K locks held
 * and auto-extended at once (docs/performance.md, "Many locks in one
 * client"). */
#ifndef REDLOCK_HOLD_H
#define REDLOCK_HOLD_H

#include "bench.h"

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HOLD_SAMPLE_KEYS 100    /* held keys whose PTTL the probe reads */
#define HOLD_STATUSES REDLOCK_STATS_STATUSES /* counts by status, index -status */
#define HOLD_PREFIX_SIZE 64
#define HOLD_WHY_SIZE 160       /* why a figure was not measured */

typedef struct hold_options {
    size_t local;              /* masters to start; 0 with --config */
    const char *config;
    unsigned long locks;       /* K */
    int64_t ttl_ms;
    double hold_seconds;
    double acquire_rate;       /* locks/s; 0: as fast as in_flight allows */
    unsigned in_flight;        /* acquires (and releases) in flight at most */
    int64_t command_timeout_ms;
    bool json, smoke;
    const char *tool;          /* the redlock tool, for the round-trip measure */
    bool own_masters;          /* started by the bench (fencing-init allowed) */
} hold_options;

/* ---- The loop's lag (hold_lag.c) ---------------------------------------- */

/* A timer re-armed every period that records how late it fired, and
 * samples the heap in use. */
typedef struct hold_lag {
    ev_timer timer;
    struct ev_loop *loop;
    int64_t period_ns;
    int64_t due_ns;
    samples *into;             /* the current phase's samples */
    long heap_max;             /* the most heap in use seen in the phase */
} hold_lag;

void hold_lag_start(hold_lag *lag, struct ev_loop *loop, int64_t period_ms, samples *into);
/* From now on, record into another phase's samples (and heap_max
 * starts afresh). */
void hold_lag_switch(hold_lag *lag, samples *into);
void hold_lag_stop(hold_lag *lag);

/* ---- The masters seen from outside (hold_masters.c) --------------------- */

/* A blocking connection to master i, timeouts timeout_ms; NULL on failure. */
struct redisContext *hold_master_connect(const bench_masters *ms, size_t i, int timeout_ms);
/* From an INFO commandstats reply: the calls of the commands extensions use
 * (EVALSHA, and EVAL, the fallback after NOSCRIPT); -1 when unreadable. */
int64_t hold_script_calls(const char *info);
/* From an INFO commandstats reply: cmdstat_<name>'s calls and usec (both
 * 0 for a command never called); false when the reply is not that. */
bool hold_command_stats(const char *info, const char *name, int64_t *calls, int64_t *usec);
/* From an INFO cpu reply: the server process's CPU so far, used_cpu_sys +
 * used_cpu_user, in s; -1 when unreadable. */
double hold_server_cpu_s(const char *info);
/* INFO cpu on c: the server's CPU so far, in s; -1 with why when not read. */
double hold_read_cpu_s(struct redisContext *c, char *why, size_t why_size);
/* Every master's CPU so far, summed, in s, on conns[i] (connected on first
 * use, kept for the next reading; the caller frees them); -1 with why when
 * a master cannot be read. */
double hold_masters_cpu_s(const bench_masters *ms, struct redisContext **conns, char *why,
                          size_t why_size);
/* Keys named prefix* on master i (SCAN, bounded): -1 on an error. */
long hold_count_keys(const bench_masters *ms, size_t i, const char *prefix);

/* ---- The probe thread (hold_probe.c) ------------------------------------ */

/* One reading of every master. */
typedef struct probe_tick {
    int64_t t_ns[BENCH_MAX_MASTERS];     /* when master i's INFO reply was in */
    int64_t calls[BENCH_MAX_MASTERS];    /* script calls so far; -1: no answer */
    int64_t done_ns;                     /* when the last reply was in */
    int64_t pttl_min;                    /* least PTTL of the sample, -1: none */
    unsigned long pttl_reads, pttl_absent, pttl_errors;
} probe_tick;

typedef struct hold_probe hold_probe;

/* Start reading the masters every period_ms on connections of its own:
 * INFO commandstats, and PTTL of prefix<keys[i]> for each sample key.
 * NULL when the thread cannot start. */
hold_probe *hold_probe_start(const bench_masters *ms, const char *prefix,
                             const unsigned long *keys, size_t nkeys, int64_t period_ms,
                             size_t max_ticks);
/* Ask it to stop; returns at once. */
void hold_probe_signal_stop(hold_probe *p);
/* Wait for it to stop and free it; *ticks (the caller frees) gets its
 * readings. Returns how many. */
size_t hold_probe_join(hold_probe *p, probe_tick **ticks);

typedef struct hold_figures hold_figures;
/* From the readings: the PTTL figures of the readings done by to_ns, and
 * the script calls per second between the readings in [from_ns, to_ns]. */
void hold_probe_summarize(const probe_tick *ticks, size_t n, size_t masters, int64_t from_ns,
                          int64_t to_ns, hold_figures *f);

/* ---- The keys of lost locks, seen from outside (hold_lost_watch.c) ----- */

#define HOLD_LOST_WATCHED 1000          /* lost locks watched at most */
#define HOLD_LOST_CHECKS 2              /* readings of each: 1.5 s and 3 s after */
#define HOLD_LOST_QUIET_NS 1000000000LL /* nothing sent for a lock this long after its loss */

typedef struct hold_lost_figures {
    bool measured;
    unsigned long watched, not_watched, checked;
    unsigned long readings;             /* checks, each a PTTL on every master */
    unsigned long present, gone, errors; /* PTTL replies: a TTL, no key, none */
    unsigned long extended_late;        /* keys proven extended past the quiet time */
    int64_t latest_after_ns;            /* the latest extension proven, after the loss */
} hold_lost_figures;

typedef struct hold_lost_watch hold_lost_watch;

/* Start the watch of lost locks' keys (prefix<index>, set with PX ttl_ms)
 * on connections of its own; NULL when the thread cannot start. */
hold_lost_watch *hold_lost_watch_start(const bench_masters *ms, const char *prefix, int64_t ttl_ms);
/* Lock index was reported lost at lost_ns (any thread; w may be NULL). */
void hold_lost_watch_add(hold_lost_watch *w, unsigned long index, int64_t lost_ns);
/* Stop it (checks not yet due are not made) and free it; out gets what it
 * saw (out->measured false when w is NULL). */
void hold_lost_watch_stop(hold_lost_watch *w, hold_lost_figures *out);

/* ---- The round trips before the first SET (hold_proxy.c, hold_rtt.c) ---- */

#define HOLD_RTT_MAX_COMMANDS 256
#define HOLD_COMMAND_TEXT 128

/* A command a client sent through the proxy, with the turn it came in:
 * turn t began with the client's first bytes after the master had sent
 * it something, so commands of turn t waited for t replies. */
typedef struct proxy_command {
    unsigned master, conn, turn;
    bool names_resource;        /* an argument is the resource watched */
    char text[HOLD_COMMAND_TEXT];
} proxy_command;

typedef struct hold_proxy hold_proxy;

/* A recording TCP proxy on 127.0.0.1 in front of every master, in a thread
 * of its own, noting which commands name resource. NULL on failure. */
hold_proxy *hold_proxy_start(const bench_masters *ms, const char *resource);
int hold_proxy_port(const hold_proxy *p, size_t i);
/* Stop and free it; *out (the caller frees) gets the commands seen, in
 * order. Returns how many. */
size_t hold_proxy_stop(hold_proxy *p, proxy_command **out);

/* One run of the tool through the proxy. */
typedef struct hold_rtt {
    const char *name;               /* how the tool was run */
    bool measured;
    char why_not[160];              /* when not measured */
    int exit_status;                /* the tool's; -1: killed or not run */
    double seconds;                 /* the tool's run, spawn to exit */
    /* Per master, the turn of the first request naming the resource (the
     * acquire: SET, or the fenced acquire's script); the least and the
     * most over the masters that got one. */
    int before_min, before_max;
    unsigned masters_asked;
    char first_request[HOLD_COMMAND_TEXT]; /* the first such request seen */
    size_t ncommands;
    proxy_command *commands;
} hold_rtt;

#define HOLD_RTT_RUNS 2 /* --no-fencing, then the default (fenced) */

/* Run `redlock run [--no-fencing] RESOURCE -- true` through the proxy and
 * count each master's turns before the acquire. fenced and init_fencing:
 * the default run, after putting the masters' fencing counters in use
 * (only for masters of the bench's own). */
void hold_rtt_measure(const bench_masters *ms, const char *tool, const char *resource,
                      bool fenced, bool init_fencing, hold_rtt *out);
void hold_rtt_free(hold_rtt *r);

/* ---- What the extend scripts cost a master (hold_script_cost.c) --------- */

/* One way of extending, summed over the rounds. */
typedef struct script_cost_side {
    int64_t calls;             /* EVALSHA (script-free: SET) calls, INFO commandstats */
    int64_t usec;              /* their time, INFO commandstats */
    double cpu_s;              /* the server's CPU, INFO cpu */
    uint64_t locks;            /* locks extended */
} script_cost_side;

typedef struct hold_script_cost {
    bool measured;
    char why_not[HOLD_WHY_SIZE];
    size_t keys;               /* plain keys, each extended once a phase */
    unsigned rounds;
    unsigned groups;           /* locks per batch call */
    double seconds;            /* the whole measure, keys set to keys deleted */
    bool keys_deleted;
    bool has_plain;            /* master 0 has SET ... IFEQ: the script-free side measured */
    script_cost_side single, batch, plain;
    /* An acquire and its release a lock (locks: pairs; calls: every
     * command's; usec: theirs), as the library sends them: SET NX PX,
     * then the release script, or (a master with DELIFEQ) the script-free
     * release's two commands. */
    bool has_plain_release;
    script_cost_side pair_script, pair_plain;
} hold_script_cost;

/* On master 0, with keys prefix + "cost:<i>": rounds of extending every
 * key with a call of the extend script each, then with batch calls of
 * groups locks each, then (a master with SET IFEQ) with the script-free
 * SET ... IFEQ ... GET each; then rounds of acquiring and releasing as
 * many other keys, with the release script, then (a master with DELIFEQ)
 * without it; the master's counters read around each phase. */
void hold_script_cost_measure(const bench_masters *ms, const char *prefix, hold_script_cost *out);

/* ---- The run (hold_locks.c) --------------------------------------------- */

struct hold_figures {
    size_t masters;
    unsigned long locks;
    int64_t ttl_ms;
    double hold_seconds_asked;

    /* Acquire */
    unsigned long acquired, acquire_failed, not_started;
    unsigned long acquire_status[HOLD_STATUSES]; /* failures, by status */
    unsigned long attempts;
    unsigned long auto_extend_refused;
    unsigned long overload_retries; /* acquires refused EOVERLOAD, started again */
    double acquire_seconds;
    double acquire_cpu_us_per_lock;

    /* Memory: kB of RSS, bytes of heap */
    long rss_before_kb, rss_held_kb, rss_hold_end_kb, rss_peak_kb, rss_after_kb;
    long heap_before, heap_held, heap_after;
    long heap_hold_max;           /* sampled every lag tick in the hold */

    /* Hold */
    unsigned long held_at_start;
    double hold_seconds;
    double lock_seconds;          /* held time summed over locks, in the hold */
    double hold_cpu_s;            /* the client's thread */

    /* The masters' CPU in the hold: INFO cpu at its start and its end, and
     * the client's extends at the same instants */
    bool masters_cpu_read;
    char masters_cpu_why_not[HOLD_WHY_SIZE];
    double masters_cpu_s;         /* summed over the masters */
    bool hold_extends_read;
    uint64_t hold_extends;        /* extends completed in the hold */

    /* The loop's lag, ns, by phase */
    samples lag_acquire, lag_hold, lag_release;

    /* Lost locks */
    unsigned long lost_acquiring, lost_holding, lost_releasing; /* by phase */
    unsigned long lost_status[HOLD_STATUSES];
    double first_loss_s;          /* after the hold began; -1: none in the hold */
    /* The lock's validity (redlock_lock_validity_ms) when its loss was reported */
    int64_t lost_validity_min_ms;
    unsigned long lost_without_validity; /* reported with none left */
    hold_lost_figures lost_watch;

    /* The extension requests written to the masters in the hold, after the
     * first cycle: the client's count of requests (each lock's once, in a
     * batch too), read every probe period on the loop */
    double probe_period_s;
    double ext_window_s;
    double ext_mean_per_s, ext_busiest_per_s, ext_theory_per_s;
    size_t ext_seconds;           /* readings in the window */
    double *ext_series;           /* per reading, requests/s (ext_seconds of them) */
    /* The masters' script calls in the same window (the probe's INFO
     * commandstats): a batch is one call */
    double calls_mean_per_s, calls_busiest_per_s;
    unsigned long probe_failures; /* master readings that got no answer */

    /* PTTL of the sample keys in the hold */
    size_t sample_keys;
    int64_t pttl_min_ms;
    unsigned long pttl_reads, pttl_absent;

    /* Release */
    unsigned long released, release_failed;
    unsigned long release_status[HOLD_STATUSES];
    double release_seconds;
    long keys_left;               /* -1: could not count */

    /* The client's own counters (redlock_client_stats) */
    uint64_t extends, extend_failures, auto_extend_failures, lib_locks_lost;
    uint64_t requests, outcome_ok, outcome_held_absent, outcome_timeout, outcome_not_connected,
        outcome_other, late, connects;

    hold_script_cost script_cost; /* after the release, before the round trips */
    hold_rtt rtt[HOLD_RTT_RUNS];
};

/* The whole measured run against ms; 0, or -1 when it could not run. */
int hold_run(const bench_masters *ms, const hold_options *o, hold_figures *f);
void hold_figures_free(hold_figures *f);

/* ---- Output (hold_report.c) --------------------------------------------- */

void hold_print_text(FILE *out, const hold_options *o, hold_figures *f);
void hold_print_json(FILE *out, const hold_options *o, hold_figures *f);

#endif
