/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The channel on which a master announces that the release script deleted
 * a lock's key, so that waiters retry at once instead of on their timer:
 *
 *   redlock:released:<db>:<resource>
 *
 * <db> is the decimal number of the master's database (pub/sub channels
 * are global to a server, keys are per database) and <resource> the
 * resource's bytes as they are, any bytes at all: channels are binary-safe
 * and waiters use SUBSCRIBE, never a pattern. The message is the deleted
 * value.
 */
#ifndef REDLOCK_CHANNEL_H
#define REDLOCK_CHANNEL_H

#include <stddef.h>

/* Room for the prefix "redlock:released:<db>:" of any db. */
#define RL_CHANNEL_PREFIX_MAX 32

/* Write the channel prefix of db into out (not NUL-terminated); returns its
 * length. */
size_t rl_channel_prefix(int db, char out[RL_CHANNEL_PREFIX_MAX]);

/* The resource a channel name of db stands for, or NULL when the name is
 * not one of db's channels. */
const char *rl_channel_resource(const char *channel, size_t len, int db, size_t *resource_len);

#endif
