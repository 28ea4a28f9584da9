/* SPDX-License-Identifier: BSD-3-Clause */
/* redlock-bench: what a lock costs next to the raw round trips it needs. */
#ifndef REDLOCK_BENCH_H
#define REDLOCK_BENCH_H

#include "testclock.h"

#include <redlock/redlock.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_MAX_MASTERS 9
#define BENCH_MAX_CONTENDERS 64

/* Where the masters are: host:port pairs (bench uses TCP only). */
typedef struct bench_masters {
    size_t n;
    char host[BENCH_MAX_MASTERS][64];
    int port[BENCH_MAX_MASTERS];
    bool started_here; /* a local fleet of this run's: started moments ago */
} bench_masters;

typedef struct fleet fleet;

/* The masters a config names (TCP only); -1, said on stderr after
 * `program`, when it does not load or names another kind of master. */
int bench_masters_from_config(const char *program, const char *path, bench_masters *out);
/* The first n masters of a local fleet. */
void bench_masters_from_fleet(const fleet *f, size_t n, bench_masters *out);

/* Bounds of one scenario: whichever comes first. */
typedef struct bench_limits {
    unsigned long pairs;
    double seconds;
    int ttl_ms;
} bench_limits;

typedef struct measurement measurement;

/* Latency samples, in nanoseconds. */
typedef struct samples {
    int64_t *v;
    size_t n, cap;
} samples;

void samples_add(samples *s, int64_t ns);
/* Room for n samples, so that recording allocates nothing. */
void samples_reserve(samples *s, size_t n);
void measurement_reserve(measurement *m, size_t pairs);
/* The q-quantile (0..1) in microseconds; 0 without samples. Sorts. */
double samples_quantile_us(samples *s, double q);
void samples_free(samples *s);

/* What one scenario measured. */
struct measurement {
    char name[64];
    unsigned long pairs;    /* acquire + release pairs completed */
    unsigned long failures; /* operations that did not succeed */
    double seconds;
    samples pair;           /* acquire start to release done */
    samples acquire;
    samples release;
    double cpu_us_per_pair; /* this process, user + system */
    double allocs_per_pair;
    long bytes_in_flight;   /* heap per operation in flight, -1: not measured */
};

/* Wall clock, CPU and allocation counts around a scenario. */
typedef struct stopwatch {
    int64_t wall_ns;
    int64_t cpu_us;
    unsigned long allocs;
} stopwatch;

void stopwatch_start(stopwatch *w);
/* Fill m's seconds, CPU and allocations per pair (m->pairs must be set). */
void stopwatch_stop(const stopwatch *w, measurement *m);
long bench_peak_rss_kb(void); /* VmHWM */
long bench_rss_kb(void);      /* VmRSS, now */

/* From alloc_count.c (alloc_hooks.c under ASan or TSan): every heap
 * allocation in the process. */
unsigned long bench_allocations(void);
long bench_live_bytes(void);

/* A config for the masters with bench-friendly settings. */
redlock_config *bench_config(const bench_masters *masters);
/* The same, with the config's default retry policy (delay and jitter). */
redlock_config *bench_config_default_retry(const bench_masters *masters);

/* The raw baseline: hiredis async on libev, no library. quorum_only: move
 * on after N/2+1 replies (else all N). in_flight: pairs at once. */
int raw_run(const bench_masters *masters, const bench_limits *lim, bool quorum_only,
            unsigned in_flight, measurement *m);

/* The library. */
int lib_async_run(const bench_masters *masters, const bench_limits *lim, unsigned in_flight,
                  measurement *m);
/* The same with clock_check off: the baseline of the clock check's cost. */
int lib_async_clock_off_run(const bench_masters *masters, const bench_limits *lim,
                            unsigned in_flight, measurement *m);
/* The same with holder metadata in every value (an acquire label). */
int lib_async_labelled_run(const bench_masters *masters, const bench_limits *lim,
                           unsigned in_flight, measurement *m);
/* The same with fencing tokens (docs/fencing.md); init_counters: put the
 * masters' counters in use first (only for masters of the bench's own). */
int lib_async_fenced_run(const bench_masters *masters, const bench_limits *lim,
                         unsigned in_flight, bool init_counters, measurement *m);
/* Something done to the masters for the measured part of a run (after the
 * warm-up, the client connected), and undone after it. */
typedef struct bench_fault {
    void (*begin)(void *arg);
    void (*end)(void *arg);
    void *arg;
} bench_fault;
int lib_async_run_fault(const bench_masters *masters, const bench_limits *lim,
                        unsigned in_flight, const bench_fault *fault, measurement *m);
int lib_sync_run(const bench_masters *masters, const bench_limits *lim, unsigned threads,
                 measurement *m);
/* clients separate clients contending for one resource. */
int lib_contended_run(const bench_masters *masters, const bench_limits *lim, unsigned clients,
                      measurement *m);

/* The hand-off scenario (handoff.c): contenders on one resource, each
 * holding it for a random critical section. */
typedef struct handoff_options {
    unsigned contenders;
    int hold_min_ms, hold_max_ms;
    double seconds;
    int notify;          /* wait_by_notification: 1, or 0 for the timer alone */
} handoff_options;

typedef struct contender_figures {
    unsigned long acquisitions, failures;
    double wait_p99_us;  /* first request since its last hold to acquired */
    double wait_max_us;  /* the same, a wait still open at the end up to the end */
} contender_figures;

typedef struct handoff_figures {
    unsigned contenders;
    int hold_min_ms, hold_max_ms;
    unsigned long acquisitions;
    unsigned long failures;        /* acquires that returned without the lock */
    double attempts_per_acquire;   /* attempts made per acquire, done or failed */
    unsigned long gaps;            /* hand-offs measured */
    unsigned long overlaps;        /* acquired before the release was reported */
    double gap_p50_us, gap_p90_us, gap_p99_us; /* release done to next acquired */
    unsigned long gaps_other;      /* hand-offs to another contender */
    double other_p50_us, other_p90_us, other_p99_us;
    double busy_fraction;          /* of the wall time, the lock held */
    unsigned worst;                /* the contender with the longest wait */
    contender_figures per[BENCH_MAX_CONTENDERS];
} handoff_figures;

/* Fills m (pairs: acquisitions; pair: wait + hold + release; acquire: waits;
 * release: the releases) and f. */
int lib_handoff_run(const bench_masters *masters, const handoff_options *opt, measurement *m,
                    handoff_figures *f);

#endif
