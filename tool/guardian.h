/* SPDX-License-Identifier: BSD-3-Clause */
/* run's guardian: the process between redlock and CMD that sees to it that
 * no process CMD starts outlives the run (see guardian.c). This is the side
 * redlock uses: start it, give it orders, read its reports. */
#ifndef REDLOCK_CLI_GUARDIAN_H
#define REDLOCK_CLI_GUARDIAN_H

#include <stdint.h>
#include <sys/types.h>

/* The signals redlock passes on to CMD. The guardian ignores them (it lives
 * as long as redlock does); CMD starts with their default action. */
#define GUARDIAN_FORWARDED_COUNT 4
extern const int guardian_forwarded[GUARDIAN_FORWARDED_COUNT];

typedef struct guardian {
    pid_t pid;
    int orders;  /* write end; closing it (or dying) kills every process */
    int reports; /* read end */
    int go;      /* write end: the order to run, to CMD's process forked in advance */
} guardian;

/* What the guardian reports, one fixed-size message each. */
typedef enum guardian_report_kind {
    GUARDIAN_EXEC_FAILED = 1, /* value: exec's errno; CMD exits 126 or 127 */
    GUARDIAN_LEFT,            /* CMD exited, value: processes of it still running;
                                 they run until guardian_stop() */
    GUARDIAN_DONE,            /* every process is gone; value: CMD's wait
                                 status. The guardian exits. */
} guardian_report_kind;

typedef struct guardian_report {
    int32_t kind;
    int32_t value;
} guardian_report;

/* Fork the guardian, which forks CMD's process in advance; both wait for
 * guardian_run(). The guardian reads resource
 * (CMD's REDLOCK_RESOURCE), shown (the resources, as messages show them)
 * and cmd in its copy of our memory. Call while single-threaded, before
 * opening any connection or loop, which it would hold too otherwise.
 * 0, or -1 with errno set. */
int guardian_start(guardian *g, const char *resource, const char *shown, char **cmd);

/* Orders. 0, or -1 with errno set (EPIPE: the guardian is gone). */
/* Run CMD with the lock's value, validity and fencing token (0: none) in
 * its environment, and the resource's slot (a semaphore's, -1: none) in
 * REDLOCK_RESOURCE's name. */
int guardian_run(guardian *g, const char *value, int64_t validity_ms, uint64_t token, int slot);
/* Pass signo on to CMD, or, once it has exited, to the processes it left. */
int guardian_signal(guardian *g, int signo);
/* Stop every process: SIGTERM now, SIGKILL after grace_ms. A second STOP
 * can only bring SIGKILL forward. */
int guardian_stop(guardian *g, int64_t grace_ms);

/* Read one report (g->reports is readable). 1, or 0 when the guardian has
 * gone without a word more (EOF, or a torn message). */
int guardian_read(guardian *g, guardian_report *r);

/* Close our ends of the pipes, then wait for the guardian to exit: at
 * once after DONE; otherwise once it has killed and reaped every process
 * left. Safe to call twice. */
void guardian_close(guardian *g);

#endif
