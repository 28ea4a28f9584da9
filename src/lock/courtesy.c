/* SPDX-License-Identifier: BSD-3-Clause */
/* Letting waiters go first after a release. See courtesy.h. */
#include "lock/courtesy.h"

/* FNV-1a. */
static uint64_t resource_hash(const void *resource, size_t len)
{
    const unsigned char *p = resource;
    uint64_t h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= UINT64_C(1099511628211);
    }
    return h;
}

void rl_courtesy_note(rl_courtesy_ring *ring, const void *resource, size_t len, int64_t until_us)
{
    uint64_t hash = resource_hash(resource, len);
    for (unsigned i = 0; i < RL_COURTESY_SLOTS; i++) {
        if (ring->entries[i].hash == hash) {
            ring->entries[i].until_us = until_us;
            return;
        }
    }
    ring->entries[ring->next] = (rl_courtesy){hash, until_us};
    ring->next = (ring->next + 1) % RL_COURTESY_SLOTS;
}

int64_t rl_courtesy_until(const rl_courtesy_ring *ring, const void *resource, size_t len,
                          int64_t now_us)
{
    uint64_t hash = resource_hash(resource, len);
    for (unsigned i = 0; i < RL_COURTESY_SLOTS; i++) {
        const rl_courtesy *c = &ring->entries[i];
        if (c->hash == hash && c->until_us > now_us)
            return c->until_us;
    }
    return 0;
}
