/* SPDX-License-Identifier: BSD-3-Clause */
/* The client's masters taken together (masters.c): enough of them keeping
 * up with extensions, their clocks warm enough to start acquiring, enough
 * of them counting after a restart. */
#ifndef REDLOCK_MASTERS_H
#define REDLOCK_MASTERS_H

#include "context/context.h"

#include <stdbool.h>
#include <stdint.h>

/* Whether so many masters are behind with extensions (rl_master_behind)
 * that too few are left for a quorum. */
bool rl_masters_behind(const redlock_client *client);
/* 0 when an acquire that began at started_us may make its first attempt:
 * every master's clock warmed up (rl_clock_probe_warm), or waited for as
 * long as a connect and the warm-up take; else when to look again. */
int64_t rl_masters_clock_wait(const redlock_client *client, int64_t now_us, int64_t started_us);

/* 0 when enough masters count now (master/restart.h) for a quorum, or
 * waiting would not bring them; else when enough of them will. Masters
 * not connected are left out, connecting ones taken as counting. */
int64_t rl_masters_restart_wait(const redlock_client *client, int64_t now_us);

#endif
