/* SPDX-License-Identifier: BSD-3-Clause */
/* Held locks weighed against the masters proven fast (clock_loss.c). */
#ifndef REDLOCK_CLOCK_LOSS_H
#define REDLOCK_CLOCK_LOSS_H

#include "redlock/redlock.h"

typedef struct rl_master rl_master;

/* Held locks weighed against the masters proven fast: those
 * left on too few trusted masters are lost, REDLOCK_ECLOCK. May call back
 * into the program (lost callbacks). */
void rl_clock_loss_check(redlock_client *client, const rl_master *proven);

#endif
