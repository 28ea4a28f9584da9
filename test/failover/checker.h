/* SPDX-License-Identifier: BSD-3-Clause */
/* The failover suite's checker: reads the event log and says whether two
 * holders ever acted at once, and how live and fast the lock stayed. */
#ifndef REDLOCK_FAILOVER_CHECKER_H
#define REDLOCK_FAILOVER_CHECKER_H

#include <stdint.h>
#include <stdio.h>

#define CHECKER_MAX_REASONS 8

typedef struct checker_report {
    unsigned long sections;         /* critical sections started */
    unsigned long library_sections; /* ... by library clients (validity known) */
    unsigned long not_acquired;
    struct {
        char name[32];
        unsigned long count;
    } reasons[CHECKER_MAX_REASONS]; /* why, by status */
    unsigned long kills_delayed, kills_aof, kills_unsafe, restarts, stops, conts, client_kills;
    unsigned long violations;       /* a section started while another holder's
                                       was open within its validity */
    unsigned long overruns;         /* a holder acting past its own validity */
    unsigned long unterminated;     /* sections that never ended */
    unsigned long fenced_sections;  /* sections whose lock had a fencing token */
    unsigned long token_violations; /* a token not greater than every token of
                                       the sections started before it */
    char first_violation[256];
    char first_token_violation[256];
    int64_t longest_gap_ns;         /* the lock free (no section running) while
                                       a majority was up and clients wanted it */
    int64_t latency_p50_us, latency_p99_us, latency_max_us; /* one attempt */
    unsigned long latency_samples;
    double measured_s;
} checker_report;

/* Read the log at path. quorum: masters needed for a majority. 0, or -1
 * if the log cannot be read or has a malformed line. */
int checker_run(const char *path, unsigned quorum, checker_report *out);
void checker_print(FILE *out, const checker_report *r);
void checker_print_json(FILE *out, const checker_report *r);

#endif
