/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bounds on what a master's replies may make hiredis allocate. A RESP
 * array header announces its element count, and hiredis allocates the
 * table for that many elements before any arrives: "*2000000000\r\n" from
 * a server that is not Redis would reserve 16 GiB. No reply the library
 * asks for has more than a few elements, so each connection's reader
 * refuses arrays (and maps, sets, pushes) of more than
 * RL_READER_MAX_ELEMENTS, which ends the connection with a protocol error.
 */
#ifndef REDLOCK_READER_BOUNDS_H
#define REDLOCK_READER_BOUNDS_H

#include <hiredis/read.h>

#define RL_READER_MAX_ELEMENTS 1024

/* Apply the bound to reader (a connection's, or one of the tests'). Returns
 * 0, or -1 when it cannot be applied (out of memory, hiredis 0.14 only). */
int rl_reader_bound(redisReader *reader);

#endif
