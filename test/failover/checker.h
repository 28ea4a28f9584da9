/* SPDX-License-Identifier: BSD-3-Clause */
/* The failover suite's checker: reads the event log and says whether two
 * holders ever acted at once, and how live and fast the lock stayed. */
#ifndef REDLOCK_FAILOVER_CHECKER_H
#define REDLOCK_FAILOVER_CHECKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CHECKER_MAX_REASONS 8
#define CHECKER_MAX_FAULT_KINDS 16

typedef struct checker_report {
    unsigned long sections;         /* critical sections started */
    unsigned long library_sections; /* ... by library clients (validity known) */
    unsigned long not_acquired;
    struct {
        char name[32];
        unsigned long count;
    } reasons[CHECKER_MAX_REASONS]; /* why, by status */
    unsigned long kills_delayed, kills_aof, kills_unsafe, restarts, stops, conts, client_kills;
    unsigned long container_kills;  /* clients gone with their container (C) */
    struct {
        char name[32];
        unsigned long count;
    } faults[CHECKER_MAX_FAULT_KINDS]; /* every fault event, by kind */
    unsigned slots;                 /* holders allowed at once: 1, or a semaphore's */
    unsigned long violations;       /* a section started while another holder's
                                       was open within its validity (a
                                       semaphore's: slots others') */
    unsigned long overruns;         /* a holder acting past its own validity */
    unsigned long unterminated;     /* sections that never ended */
    unsigned long fenced_sections;  /* sections whose lock had a fencing token */
    unsigned long token_violations; /* a token not greater than every token of
                                       the sections started before it */
    char first_violation[256];
    int64_t first_violation_ns;       /* when its second holder started */
    int64_t first_violation_since_ns; /* when its first holder started */
    char first_token_violation[256];
    int64_t longest_gap_ns;         /* the lock free (no section running) while
                                       a majority was up and clients wanted it */
    double longest_gap_from_s;      /* when it began, from the first event */
    char longest_gap_story[512];    /* what happened during it: faults, and
                                       attempts that failed, by reason */
    int64_t latency_p50_us, latency_p99_us, latency_max_us; /* one attempt */
    unsigned long latency_samples;
    double measured_s;
} checker_report;

/* Read the log at path. quorum: masters needed for a majority. 0, or -1
 * if the log cannot be read or has a malformed line. */
int checker_run(const char *path, unsigned quorum, checker_report *out);
/* The same for a semaphore of slots (>= 1) holders: a violation is a
 * section started while slots others were open within their validity.
 * Tokens are not compared (each slot's lock has its own order). */
int checker_run_slots(const char *path, unsigned quorum, unsigned slots, checker_report *out);
/* The same over several logs, replayed as one: each from its own clients
 * (their pids are told apart by log, as each may come from its own pid
 * namespace), all stamped with the one clock. */
int checker_run_files(const char *const *paths, size_t count, unsigned quorum,
                      checker_report *out);
void checker_print(FILE *out, const checker_report *r);
/* After a violation: the log's events from a little before its first
 * holder started to a little after its second did (at most max_lines), so
 * that a failed run shows what led to it once its log is gone. */
void checker_print_violation_events(FILE *out, const char *path, const checker_report *r,
                                    size_t max_lines);
void checker_print_json(FILE *out, const checker_report *r);
/* Print the verdict and return the exit status: 0 when no two holders
 * overlapped, every section ended, tokens grew in lock order, and the lock
 * never stood free longer than the liveness bound (three of the longest
 * TTL plus 2 s) with a majority up; 1 otherwise. unsafe: a run expected to
 * break the lock; it says what it saw and returns 0. */
int checker_verdict(FILE *out, const checker_report *r, int64_t longest_ttl_ms, bool unsafe);

#endif
