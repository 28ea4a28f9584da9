/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The failover suite's event log: one text line per event, appended by
 * every process with a single write(2) on an O_APPEND descriptor, so lines
 * never interleave. Times are CLOCK_MONOTONIC nanoseconds, tc_now_ns() (one
 * clock for every process on the machine, containers included: they share
 * the kernel's clock).
 *
 *   S t holder deadline value token
 *                               a critical section starts (deadline: when
 *                               the holder's validity ends, 0 if unknown;
 *                               token: the lock's fencing token, 0 none)
 *   E t holder value            it ends
 *   A t pid elapsed_us total_us an acquire succeeded (its last attempt's
 *                               time, and the whole call's)
 *   N t pid reason [outcomes]   an acquire gave up (status name; a library
 *                               client adds its last attempt's outcome on
 *                               each master, comma-separated, unread here)
 *   K t pid                     the injector killed a client (kill -9)
 *   X t pid                     a client process ended (reaped)
 *   C t                         every client logging to this file is gone
 *                               at once (its container was killed)
 *   F t kind master             a fault: kill-delayed (no persistence, back
 *                               after the longest TTL), kill-aof (back at
 *                               once), kill-unsafe (no persistence, back at
 *                               once), restart, stop, cont; from the
 *                               compose drill also term (SIGTERM, back at
 *                               once), pause, unpause, partition (cut off
 *                               the network), heal
 *   U t count                   masters available (running, not stopped;
 *                               clocks true: --fast-clocks)
 *   Z t                         the measured period ends (clients are
 *                               being stopped; the first Z of all logs)
 */
#ifndef REDLOCK_FAILOVER_LOG_H
#define REDLOCK_FAILOVER_LOG_H

#include "testclock.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Open (create) the log for appending; -1 on error. */
int flog_open(const char *path);

/* printf one line (a newline is added) with a single write. */
void flog_write(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

typedef struct flog_event {
    char type;           /* S E A N K X C F U Z */
    int64_t t;           /* ns */
    long pid;            /* holder / client pid; master index for F */
    int64_t a;           /* S: deadline; A: elapsed_us; U: count */
    int64_t b;           /* A: total_us; S: fencing token (0: none) */
    char text[80];       /* S/E: value; N: reason; F: kind */
} flog_event;

/* Parse one line; 0 on success, -1 if malformed. */
int flog_parse(const char *line, flog_event *ev);

#endif
