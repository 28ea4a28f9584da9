/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the restart rule (restart.h) asks a master on each connection,
 * besides the handshake's INFO:
 * - a master that answers no run_id: the restart marker script
 *   (rl_restart_marker_script: its marker and guard keys), sent as INFO's
 *   reply comes in, EVALSHA then EVAL when its script cache lacks it; its
 *   answer, or its refusal, goes to restart.c;
 * - a master declared durable: CONFIG GET append*, pipelined with the
 *   handshake and not waited for, whose appendonly and appendfsync go to
 *   restart.c; a refusal (ACL, a renamed CONFIG) is logged at DEBUG only.
 * Both go out on the master's context outside the request machinery, as
 * the clock probe's do; a reply to a context no longer current is ignored.
 */
#ifndef REDLOCK_RESTART_PROBE_H
#define REDLOCK_RESTART_PROBE_H

#include <stdbool.h>

struct rl_master;

/* Send the marker script on m's connection; out of memory, it counts as
 * refused. The caller runs inside an entry. */
void rl_restart_probe_marker(struct rl_master *m);
/* Queue CONFIG GET append* on m's connection; false when out of memory. */
bool rl_restart_probe_config(struct rl_master *m);

#endif
