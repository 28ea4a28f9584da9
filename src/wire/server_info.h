/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a master is, from the INFO server reply the handshake reads anyway
 * (no round trip of its own): the server's name and version, and the
 * commands that follow from them.
 *
 * Valkey says `server_name:valkey` and `valkey_version:X.Y.Z`, and keeps
 * `redis_version:7.2.4` for clients that compare it; Redis has neither
 * field and its `redis_version` is its own. HELLO is not asked: Valkey's
 * extended-redis-compatibility makes it answer "redis".
 */
#ifndef REDLOCK_WIRE_SERVER_INFO_H
#define REDLOCK_WIRE_SERVER_INFO_H

#include <hiredis/hiredis.h>
#include <stdbool.h>

/* Commands some servers have, which spare a script (docs/servers.md). */
#define RL_CAP_SET_IFEQ 1U /* SET key value IFEQ old ...: Valkey >= 8.1, Redis >= 8.4 */
#define RL_CAP_DELIFEQ 2U  /* DELIFEQ key value: Valkey >= 9.0 */
#define RL_CAP_DELEX 4U    /* DELEX key IFEQ value: Redis >= 8.4, Valkey >= 9.2 */

#define RL_SERVER_TEXT_SIZE 40

typedef struct rl_server_info {
    /* "valkey 9.1.2", "redis 8.0.2"; "" when unknown (no INFO, or a reply
     * without a version) */
    char text[RL_SERVER_TEXT_SIZE];
    unsigned caps; /* RL_CAP_*; 0 when unknown */
} rl_server_info;

/* Read reply (INFO server, a bulk or verbatim string) into *out; unknown
 * (text "", caps 0) for anything else. */
void rl_server_info_read(const redisReply *reply, rl_server_info *out);

/* The commands a server of this name ("redis", "valkey") and version
 * (major, minor) has. */
unsigned rl_server_caps(const char *name, int major, int minor);

/* The command a cap names ("SET IFEQ", "DELIFEQ", "DELEX"); for several,
 * the first. */
const char *rl_server_cap_name(unsigned caps);

#endif
