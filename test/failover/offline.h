/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The failover program's modes that run no client: what the compose drill
 * (scripts/compose-drill.sh) needs from outside the containers.
 *
 *   --check [--unsafe] [--json] LOG...   replay the logs as one run (each
 *                                        from its own client container) and
 *                                        give the verdict, as a run does
 *   --mark LOG EVENT [ARG...]            append one event, stamped now with
 *                                        the logs' clock: "F kill-aof 2" is
 *                                        written as "F <now> kill-aof 2"
 */
#ifndef REDLOCK_FAILOVER_OFFLINE_H
#define REDLOCK_FAILOVER_OFFLINE_H

#include <stdint.h>

/* argv: the arguments after --check. Exit status: the verdict's (0 or 1),
 * 64 usage, 70 when a log cannot be read. */
int offline_check(int argc, char **argv, unsigned quorum, int64_t longest_ttl_ms);

/* argv: the arguments after --mark. 0, 64 usage (an event the log format
 * does not have), 70 when the log cannot be opened. */
int offline_mark(int argc, char **argv);

#endif
