/* SPDX-License-Identifier: BSD-3-Clause */
/* Release announcements' channel names. See channel.h. */
#include "wire/channel.h"

#include <stdio.h>
#include <string.h>

size_t rl_channel_prefix(int db, char out[RL_CHANNEL_PREFIX_MAX])
{
    int len = snprintf(out, RL_CHANNEL_PREFIX_MAX, "redlock:released:%d:", db);
    return len < 0 ? 0 : (size_t)len;
}

const char *rl_channel_resource(const char *channel, size_t len, int db, size_t *resource_len)
{
    char prefix[RL_CHANNEL_PREFIX_MAX];
    size_t prefix_len = rl_channel_prefix(db, prefix);
    if (len < prefix_len || memcmp(channel, prefix, prefix_len) != 0)
        return NULL;
    *resource_len = len - prefix_len;
    return channel + prefix_len;
}
