/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a master ran, read from its slow log: with every command logged,
 * the slow log is a record of the requests that reached it, arguments and
 * all (the first 32 of each), on a connection of the fleet's own.
 */
#ifndef REDLOCK_TEST_SLOWLOG_H
#define REDLOCK_TEST_SLOWLOG_H

#include "fleet.h"

#include <stddef.h>

/* Master i logs every command from now on (its slow log emptied). */
void slowlog_every_command(fleet *f, size_t i);

/* The EVALSHA calls of sha in master i's slow log; with key, only those
 * naming it among their keys and arguments. */
size_t slowlog_script_calls(fleet *f, size_t i, const char *sha, const char *key);

#endif
